//! Code generation: each region becomes glue code in place of the original (sequential
//! control loops and statements) that calls one C function per loop nest. The result is
//! spliced into the user's preprocessed translation unit, so everything outside the
//! regions compiles exactly as before.
//!
//! With instrumentation on, the glue calls the project's C runtime around every region
//! and nest invocation: timers, and Save of inputs at entry and outputs at exit.

use crate::frontend::Parsed;
use crate::print::{self, PrintOptions};
use crate::program::find_loop;
use crate::program::{walk_nodes, Array, DType, Expr, Loop, LoopKind, Node, Program, Region};
use crate::source::Preprocessed;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt::Write;

/// A loop nest: a maximal loop that is parallel (or a reduction, by the analysis or by
/// the user's OpenMP directive), or that contains no parallel loop at all. Sequential loops around parallel ones stay in the glue, and
/// each run of the nest under them is one *version*.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Nest {
    /// Index over the whole program.
    pub id: usize,
    /// `nest<id>`: the name used in file names and reports.
    pub name: String,
    pub region: usize,
    /// Id of the nest's outermost loop within its region.
    pub root: usize,
    /// Control loops around the nest (ids), outermost first.
    pub control: Vec<usize>,
    /// Variables passed in: (name, type, by pointer because the nest writes them).
    pub scalars: Vec<NestScalar>,
    /// Arrays the nest reads or writes.
    pub arrays: Vec<String>,
    /// Arrays and scalars the nest writes.
    pub outputs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestScalar {
    pub name: String,
    pub dtype: DType,
    pub written: bool,
}

impl Nest {
    pub fn function_name(&self) -> String {
        format!("tune_{}", self.name)
    }

    /// Whether this nest lies inside `whole` (a whole nest: [`whole_nests`]).
    pub fn is_inside(&self, whole: &Nest) -> bool {
        self.region == whole.region && self.control.contains(&whole.root)
    }
}

/// Finds the nests of every region, numbered in source order.
pub fn nests(program: &Program) -> Vec<Nest> {
    let mut out = Vec::new();
    for region in &program.regions {
        let mut control = Vec::new();
        find_nests(program, region, &region.body, &mut control, &mut out);
    }
    out
}

/// The whole loop nests of a program: each outermost loop that is not a nest itself
/// but holds nests under its control loops (a time loop, the `k` of a factorization, a
/// row loop of a solver), with no statement the IR does not model and no directive of
/// the user's. It may stand inside glue loops (a benchmark's repetition loop that calls
/// a timer): their variables are its parameters, as for a nest.
/// They are the unit of the whole-nest stage of tuning: measured as the program runs
/// them, on the data saved at their entry, transformed by recipes whose steps may name
/// any of their loops. Named `wholeK`; their `id` is the runtime slot after those of
/// the nests and regions.
pub fn whole_nests(program: &Program, nests: &[Nest]) -> Vec<Nest> {
    let mut out = Vec::new();
    for region in &program.regions {
        let mut control = Vec::new();
        find_wholes(program, region, &region.body, nests, &mut control, &mut out);
    }
    out
}

fn find_wholes<'a>(
    program: &Program,
    region: &'a Region,
    body: &'a [Node],
    nests: &[Nest],
    control: &mut Vec<&'a Loop>,
    out: &mut Vec<Nest>,
) {
    for n in body {
        match n {
            Node::Loop(l) => {
                let holds_nests = nests
                    .iter()
                    .any(|x| x.region == region.index && x.control.contains(&l.id));
                let is_nest = nests
                    .iter()
                    .any(|x| x.region == region.index && x.root == l.id);
                if !holds_nests || is_nest {
                    continue;
                }
                if crate::program::has_opaque(&l.body) {
                    // Glue: the whole nests may be further in.
                    control.push(l);
                    find_wholes(program, region, &l.body, nests, control, out);
                    control.pop();
                    continue;
                }
                // The user's own directives inside (a parallel region of worksharing
                // loops) stay as they stand: their nests are tuned one by one.
                let users = crate::program::loops(&l.body)
                    .iter()
                    .any(|x| x.directives.iter().any(crate::program::Directive::is_users));
                if users {
                    continue;
                }
                let k = out.len();
                let mut w = describe_nest(
                    program,
                    region,
                    l,
                    control,
                    nests.len() + program.regions.len() + k,
                );
                w.name = format!("whole{k}");
                out.push(w);
            }
            Node::If(i) => {
                find_wholes(program, region, &i.then_body, nests, control, out);
                find_wholes(program, region, &i.else_body, nests, control, out);
            }
            Node::Block(b) => find_wholes(program, region, b, nests, control, out),
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
        }
    }
}

/// Whether the loop is parallel, by the analysis or by the user's OpenMP claim.
fn parallel(l: &Loop) -> bool {
    l.kind != LoopKind::Loop || l.is_parallel_for()
}

fn has_parallel(l: &Loop) -> bool {
    crate::program::loops(&l.body).into_iter().any(parallel)
}

fn find_nests<'a>(
    program: &Program,
    region: &'a Region,
    body: &'a [Node],
    control: &mut Vec<&'a Loop>,
    out: &mut Vec<Nest>,
) {
    for n in body {
        match n {
            Node::Loop(l) => {
                // A loop holding a statement the IR does not model is glue.
                if !crate::program::has_opaque(&l.body) && (parallel(l) || !has_parallel(l)) {
                    let id = out.len();
                    out.push(describe_nest(program, region, l, control, id));
                } else {
                    control.push(l);
                    find_nests(program, region, &l.body, control, out);
                    control.pop();
                }
            }
            Node::If(i) => {
                find_nests(program, region, &i.then_body, control, out);
                find_nests(program, region, &i.else_body, control, out);
            }
            Node::Block(b) => find_nests(program, region, b, control, out),
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
        }
    }
}

/// Names a body reads or writes that it does not declare itself.
pub(crate) struct Uses {
    pub(crate) vars: Vec<String>,
    pub(crate) arrays: Vec<String>,
    pub(crate) written: BTreeSet<String>,
    /// What the body declares: loop variables, declarations, glue's declarations.
    pub(crate) bound: BTreeSet<String>,
}

pub(crate) fn uses(body: &[Node], program: &Program) -> Uses {
    let mut bound: BTreeSet<String> = BTreeSet::new();
    let mut vars = Vec::new();
    let mut arrays = Vec::new();
    let mut written = BTreeSet::new();
    walk_nodes(body, &mut |n, _| match n {
        Node::Loop(l) => {
            bound.insert(l.var.clone());
        }
        Node::Decl(d) => {
            bound.insert(d.name.clone());
        }
        Node::Opaque(o) => bound.extend(o.declares.iter().cloned()),
        _ => {}
    });
    let note = |e: &Expr, vars: &mut Vec<String>, arrays: &mut Vec<String>| {
        e.walk(&mut |x| match x {
            Expr::Var(v) if !bound.contains(v) && !vars.contains(v) => vars.push(v.clone()),
            Expr::Access { array, .. } if !bound.contains(array) && !arrays.contains(array) => {
                arrays.push(array.clone())
            }
            _ => {}
        })
    };
    walk_nodes(body, &mut |n, _| match n {
        Node::Assign(a) => {
            note(&a.target, &mut vars, &mut arrays);
            note(&a.value, &mut vars, &mut arrays);
            match &a.target {
                Expr::Var(v) => {
                    written.insert(v.clone());
                }
                Expr::Access { array, .. } => {
                    written.insert(array.clone());
                }
                _ => {}
            }
        }
        Node::Loop(l) => {
            note(&l.init, &mut vars, &mut arrays);
            note(&l.bound, &mut vars, &mut arrays);
        }
        Node::If(i) => note(&i.cond, &mut vars, &mut arrays),
        Node::Decl(d) => {
            if let Some(e) = &d.init {
                note(e, &mut vars, &mut arrays);
            }
            for e in &d.dims {
                note(e, &mut vars, &mut arrays);
            }
        }
        Node::Opaque(o) => {
            // It may read whatever it names and write what `writes` says.
            for name in o.names.iter().filter(|n| !bound.contains(*n)) {
                if let Some(a) = program.array(name) {
                    // A pointer read as an array has extents only where the IR indexes
                    // it: glue alone (its accesses in another function were read) does
                    // not make it one here.
                    if !a.pointer() && !arrays.contains(name) {
                        arrays.push(name.clone());
                    }
                } else if program.scalar(name).is_some() {
                    if !vars.contains(name) {
                        vars.push(name.clone());
                    }
                } else {
                    continue;
                }
                if o.writes.contains(name) {
                    written.insert(name.clone());
                }
            }
        }
        Node::Block(_) => {}
    });
    // Extents of the arrays used are needed to declare them.
    for a in &arrays {
        if let Some(arr) = program.array(a) {
            for d in &arr.dims {
                d.walk(&mut |x| {
                    if let Expr::Var(v) = x {
                        if !vars.contains(v) {
                            vars.push(v.clone());
                        }
                    }
                });
            }
        }
    }
    Uses {
        vars,
        arrays,
        written,
        bound,
    }
}

fn describe_nest(
    program: &Program,
    region: &Region,
    root: &Loop,
    control: &[&Loop],
    id: usize,
) -> Nest {
    let u = uses(std::slice::from_ref(&Node::Loop(root.clone())), program);
    let mut scalars = Vec::new();
    for v in &u.vars {
        let dtype = control
            .iter()
            .rev()
            .find(|l| &l.var == v)
            .map(|l| l.var_dtype)
            .or_else(|| program.scalar(v).map(|s| s.dtype))
            .unwrap_or(DType::I32);
        scalars.push(NestScalar {
            name: v.clone(),
            dtype,
            written: u.written.contains(v),
        });
    }
    // By-value scalars first (array extents may refer to them), then written ones.
    scalars.sort_by_key(|s| s.written);
    Nest {
        id,
        name: format!("nest{id}"),
        region: region.index,
        root: root.id,
        control: control.iter().map(|l| l.id).collect(),
        scalars,
        arrays: u.arrays.clone(),
        // A scalar whose value at the nest's end nobody reads is no output: a
        // recipe may leave it otherwise (a folded accumulator).
        outputs: u
            .written
            .iter()
            .filter(|w| {
                u.arrays.contains(w) || (u.vars.contains(w) && !region.dead_after_loop(root.id, w))
            })
            .cloned()
            .collect(),
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodegenOptions {
    /// `#pragma omp parallel for` on the outermost parallel loops of each nest.
    pub openmp: bool,
    /// Timers and Save calls into the runtime.
    pub instrument: bool,
    /// With `instrument`: time and Save the whole loop nests ([`whole_nests`]) too.
    pub whole_nests: bool,
}

/// The generated translation unit.
#[derive(Debug, Clone)]
pub struct Generated {
    pub source: String,
    pub nests: Vec<Nest>,
}

/// Prototypes of the runtime (`profiling/runtime/tune_rt.c`).
pub const RUNTIME_PROTOTYPES: &str = "\
extern long tune_rt_enter(int slot, const char *name);
extern int tune_rt_saving(int slot, long version);
extern void tune_rt_start(int slot);
extern void tune_rt_stop(int slot, long version);
extern void tune_rt_save(const char *array, const char *tag, long version, int output, const void *data, const char *descr, unsigned long elem_size, int ndim, const long *shape);
extern void tune_rt_save_rows(const char *array, const char *tag, long version, int output, const void *rows, const char *descr, unsigned long elem_size, const long *shape);
";

/// Generates the whole translation unit with every region replaced.
pub fn generate(parsed: &Parsed, opts: CodegenOptions) -> Generated {
    let program = &parsed.program;
    let nests = nests(program);
    let pp = &parsed.source;
    let text = &pp.text;

    // Edits sorted by offset: (offset, end, replacement).
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut function_starts: Vec<usize> = parsed.regions.iter().map(|r| r.function_start).collect();
    function_starts.sort_unstable();
    function_starts.dedup();
    for fs in &function_starts {
        let mut s = String::new();
        for (ri, rt) in parsed.regions.iter().enumerate() {
            if rt.function_start == *fs {
                s.push_str(&region_code(program, &nests, ri, opts).0);
            }
        }
        let loc = &parsed
            .regions
            .iter()
            .find(|r| r.function_start == *fs)
            .expect("region")
            .function_loc;
        s.push_str(&Preprocessed::marker(loc));
        edits.push((*fs, *fs, s));
    }
    for (ri, rt) in parsed.regions.iter().enumerate() {
        let mut s = String::from("\n");
        s.push_str(&region_code(program, &nests, ri, opts).1);
        s.push_str(&Preprocessed::marker(&rt.resume));
        edits.push((rt.replace.start, rt.replace.end, s));
    }
    edits.sort_by_key(|e| (e.0, e.1));

    let mut out = String::with_capacity(text.len() + 4096);
    if opts.instrument {
        out.push_str(RUNTIME_PROTOTYPES);
    }
    let mut at = 0;
    for (start, end, repl) in edits {
        out.push_str(&text[at..start]);
        out.push_str(&repl);
        at = end;
    }
    out.push_str(&text[at..]);
    Generated { source: out, nests }
}

/// The code of region `ri`: its nest functions, and the glue that replaces it.
pub fn region_code(
    program: &Program,
    nests: &[Nest],
    ri: usize,
    opts: CodegenOptions,
) -> (String, String) {
    let region = &program.regions[ri];
    let mut functions = String::new();
    for n in nests.iter().filter(|n| n.region == ri) {
        functions.push_str(&nest_function(program, region, n, opts));
        functions.push('\n');
    }
    let mut glue = String::new();
    region_glue(program, region, nests, opts, &mut glue);
    (functions, glue)
}

fn array_param(program: &Program, name: &str) -> String {
    match program.array(name) {
        // Rows allocated one by one: the nest indexes the row pointers, as the program.
        Some(a) if a.rows => format!("{} **{}", a.dtype.c_name(), program.c_name(name)),
        Some(a) => {
            let mut s = format!("{} {}", a.dtype.c_name(), program.c_name(name));
            for d in &a.dims {
                let _ = write!(s, "[{}]", print::expr(d));
            }
            s
        }
        None => format!("double {name}[]"),
    }
}

/// `static void tune_nestK(...) { ... }`
pub fn nest_function(
    program: &Program,
    region: &Region,
    nest: &Nest,
    opts: CodegenOptions,
) -> String {
    let root = find_loop(&region.body, nest.root).expect("nest root exists");
    nest_function_with(program, nest, root, opts)
}

/// The function of `nest` with `root` (e.g. a transformed loop tree) as its body; the
/// name and signature are those of the original nest.
pub fn nest_function_with(
    program: &Program,
    nest: &Nest,
    root: &Loop,
    opts: CodegenOptions,
) -> String {
    let mut params: Vec<String> = Vec::new();
    for s in &nest.scalars {
        if s.written {
            params.push(format!("{} *tune_p_{}", s.dtype.c_name(), s.name));
        } else {
            params.push(format!("{} {}", s.dtype.c_name(), s.name));
        }
    }
    for a in &nest.arrays {
        params.push(array_param(program, a));
    }
    let mut out = format!(
        "static void {}({})\n{{\n",
        nest.function_name(),
        if params.is_empty() {
            "void".to_string()
        } else {
            params.join(", ")
        }
    );
    for s in nest.scalars.iter().filter(|s| s.written) {
        let _ = writeln!(
            out,
            "  {} {} = *tune_p_{};",
            s.dtype.c_name(),
            s.name,
            s.name
        );
    }
    let omp = |l: &Loop| -> Option<String> {
        // A loop whose arrays need a copy per iteration is parallel only with them (the
        // parallelization step makes them).
        if !opts.openmp
            || l.kind != LoopKind::Map
            || !l.private_arrays.is_empty()
            || !is_outermost_map(root, l.id)
        {
            return None;
        }
        Some(
            crate::program::Directive::OmpParallelFor {
                collapse: None,
                schedule: None,
                chunk: None,
                lastprivate: written_outside_decls(l),
                reduction: Vec::new(),
            }
            .to_string(),
        )
    };
    // A user's directive may name loop variables in its clauses (`private(j, k)`):
    // those declared outside their loops in the source are declared here, once, and
    // the loops print as the source wrote them.
    let user_directives = std::iter::once(root)
        .chain(crate::program::loops(&root.body))
        .any(|l| l.directives.iter().any(crate::program::Directive::is_users));
    if user_directives {
        let mut declared: Vec<&str> = Vec::new();
        for l in std::iter::once(root).chain(crate::program::loops(&root.body)) {
            if !l.declares_var && !declared.contains(&l.var.as_str()) {
                declared.push(&l.var);
                let _ = writeln!(out, "  {} {};", l.var_dtype.c_name(), l.var);
            }
        }
    }
    let access = crate::flat::user_access(program, false);
    let popts = PrintOptions {
        declare_loop_vars: !user_directives,
        loop_prefix: &omp,
        annotate: false,
        c89: program.c89,
        access: &access,
    };
    // Arrays as the program spells them: the user's directives name them so.
    let mut body = vec![Node::Loop(root.clone())];
    crate::flat::source_names(program, &mut body);
    print::node(&body[0], &popts, 1, &mut out);
    for s in nest.scalars.iter().filter(|s| s.written) {
        let _ = writeln!(out, "  *tune_p_{} = {};", s.name, s.name);
    }
    out.push_str("}\n");
    out
}

/// Whether loop `id` is a map with no map around it inside `root`.
fn is_outermost_map(root: &Loop, id: usize) -> bool {
    fn chain<'a>(body: &'a [Node], id: usize, stack: &mut Vec<&'a Loop>) -> bool {
        for n in body {
            let found = match n {
                Node::Loop(l) => {
                    stack.push(l);
                    if l.id == id || chain(&l.body, id, stack) {
                        return true;
                    }
                    stack.pop();
                    false
                }
                Node::If(i) => chain(&i.then_body, id, stack) || chain(&i.else_body, id, stack),
                Node::Block(b) => chain(b, id, stack),
                Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => false,
            };
            if found {
                return true;
            }
        }
        false
    }
    let mut stack = Vec::new();
    let node = Node::Loop(root.clone());
    if !chain(std::slice::from_ref(&node), id, &mut stack) {
        return false;
    }
    stack[..stack.len() - 1]
        .iter()
        .all(|l| l.kind != LoopKind::Map)
}

/// Scalars assigned inside `l` that are declared outside it.
pub(crate) fn written_outside_decls(l: &Loop) -> Vec<String> {
    let mut declared = BTreeSet::new();
    let mut written = Vec::new();
    walk_nodes(&l.body, &mut |n, _| match n {
        Node::Decl(d) => {
            declared.insert(d.name.clone());
        }
        Node::Assign(a) => {
            if let Expr::Var(v) = &a.target {
                if !written.contains(v) {
                    written.push(v.clone());
                }
            }
        }
        _ => {}
    });
    written.retain(|w| !declared.contains(w));
    written
}

/// The extents of array `name` as C expressions, its element descriptor and size.
fn shape_of(program: &Program, name: &str) -> (Vec<String>, String, usize) {
    match program.array(name) {
        Some(a) => (
            a.dims
                .iter()
                .zip(&a.extents)
                .map(|(d, e)| match e {
                    Some(v) => v.to_string(),
                    None => format!("(long)({})", print::expr(d)),
                })
                .collect(),
            a.dtype.npy_descr().to_string(),
            a.dtype.size(),
        ),
        None => (Vec::new(), "<f8".into(), 8),
    }
}

fn save_call(
    program: &Program,
    name: &str,
    dtype: Option<DType>,
    tag: &str,
    version: &str,
    output: bool,
) -> String {
    if let Some(t) = dtype {
        format!(
            "tune_rt_save(\"{name}\", \"{tag}\", {version}, {}, (const void *)&{name}, \"{}\", {}, 0, (const long *)0);",
            output as i32,
            t.npy_descr(),
            t.size()
        )
    } else {
        // The shape in a block of its own: valid C89 anywhere (no compound literal,
        // no declaration after a statement).
        let (dims, descr, size) = shape_of(program, name);
        let ndim = dims.len();
        let rows = program.array(name).is_some_and(|a| a.rows);
        let c = program.c_name(name);
        let call = |shape: &str| {
            if rows {
                // Row by row, into one array of the same shape.
                return format!(
                    "tune_rt_save_rows(\"{name}\", \"{tag}\", {version}, {}, (const void *){c}, \"{descr}\", {size}, {shape});",
                    output as i32
                );
            }
            format!(
                "tune_rt_save(\"{name}\", \"{tag}\", {version}, {}, (const void *){c}, \"{descr}\", {size}, {ndim}, {shape});",
                output as i32
            )
        };
        if dims.is_empty() {
            return call("(const long *)0");
        }
        let mut s = format!("{{ long tune_shape[{ndim}];");
        for (k, d) in dims.iter().enumerate() {
            let _ = write!(s, " tune_shape[{k}] = {d};");
        }
        let _ = write!(s, " {} }}", call("tune_shape"));
        s
    }
}

/// What one Save block writes: scalars (with their types) and arrays.
struct SaveSet<'a> {
    scalars: Vec<(&'a str, DType)>,
    arrays: Vec<&'a str>,
}

/// `if (tune_rt_saving(slot, v)) { tune_rt_save(...); ... }` at indentation `depth`.
#[allow(clippy::too_many_arguments)]
fn save_block(
    out: &mut String,
    depth: usize,
    slot: usize,
    program: &Program,
    set: &SaveSet,
    tag: &str,
    version: &str,
    output: bool,
) {
    pad(out, depth);
    let _ = writeln!(out, "if (tune_rt_saving({slot}, {version})) {{");
    let calls = set
        .scalars
        .iter()
        .map(|(name, t)| save_call(program, name, Some(*t), tag, version, output))
        .chain(
            set.arrays
                .iter()
                .map(|a| save_call(program, a, None, tag, version, output)),
        );
    for call in calls {
        pad(out, depth + 1);
        out.push_str(&call);
        out.push('\n');
    }
    pad(out, depth);
    out.push_str("}\n");
}

fn pad(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// The pointers that glue in `body` points at new memory (`a = malloc(...)`, assigned
/// in a statement that calls a function) or hands to `free` or `realloc`. A pointer
/// assigned another pointer (`t = in; in = out; out = t;`) still points at data.
fn pointers_moved(body: &[Node]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_nodes(body, &mut |n, _| {
        let Node::Opaque(o) = n else { return };
        let text = &o.text;
        let mut calls = false;
        for piece in crate::source::code(text) {
            if let crate::source::Code::Ident(r) = piece {
                let name = &text[r.clone()];
                calls |= crate::source::called_at(text, r.clone());
                let before = text[..r.start].trim_end();
                let callee = before.strip_suffix('(').map(str::trim_end);
                if callee.is_some_and(|c| c.ends_with("free") || c.ends_with("realloc")) {
                    out.insert(name.to_string());
                }
            }
        }
        if calls {
            out.extend(crate::source::assigned_names(text).0);
        }
    });
    out
}

fn region_glue(
    program: &Program,
    region: &Region,
    nests: &[Nest],
    opts: CodegenOptions,
    out: &mut String,
) {
    let slot = nests.len() + region.index;
    let tag = format!("region{}", region.index);
    let _ = writeln!(
        out,
        "{{ /* tune: {tag}, generated from {} */",
        region.function
    );
    // Region inputs: every outside array it touches and every outside scalar it reads.
    let u = uses(&region.body, program);
    // A pointer read as an array may have extents in names the region declares
    // (`int n = 100;` before its loops): it has no shape at the region's entry, and its
    // nests save it.
    let shaped_here = |x: &Array| {
        !x.dims
            .iter()
            .any(|d| u.bound.iter().any(|name| d.mentions(name)))
    };
    let moved = pointers_moved(&region.body);
    let ext_arrays: Vec<&String> = u
        .arrays
        .iter()
        // A pointer the region itself declares (`float **w = alloc_rows(...)`) has
        // nothing to save at its entry.
        .filter(|a| !u.bound.contains(program.c_name(a)))
        .filter(|a| program.array(a).is_some_and(|x| !x.local && shaped_here(x)))
        // Nor one its glue points elsewhere or frees (`A = calloc(...)`, `free(A)` in
        // main): at the region's entry or exit it points to no data; its nests save it.
        .filter(|a| {
            !program.array(a).is_some_and(Array::pointer) || !moved.contains(program.c_name(a))
        })
        .collect();
    // A name this region declares is its own, whatever another function's scalar of
    // that name is.
    let ext_scalars: Vec<&crate::program::Scalar> = u
        .vars
        .iter()
        .filter(|v| !u.bound.contains(*v))
        .filter_map(|v| program.scalar(v))
        .filter(|s| s.origin == crate::program::ScalarOrigin::External)
        .collect();
    let inputs = SaveSet {
        scalars: ext_scalars
            .iter()
            .filter(|s| s.read)
            .map(|s| (s.name.as_str(), s.dtype))
            .collect(),
        arrays: ext_arrays.iter().map(|a| a.as_str()).collect(),
    };
    let outputs = SaveSet {
        scalars: ext_scalars
            .iter()
            .filter(|s| s.written)
            .map(|s| (s.name.as_str(), s.dtype))
            .collect(),
        arrays: ext_arrays
            .iter()
            .filter(|a| u.written.contains(**a))
            .map(|a| a.as_str())
            .collect(),
    };
    if opts.instrument {
        let _ = writeln!(out, "  long tune_rv = tune_rt_enter({slot}, \"{tag}\");");
        save_block(out, 1, slot, program, &inputs, &tag, "tune_rv", false);
        let _ = writeln!(out, "  tune_rt_start({slot});");
    }
    // The region ends where the program leaves it: after its last statement and at
    // every `return` in it.
    let mut exit = String::new();
    if opts.instrument {
        let _ = writeln!(exit, "  tune_rt_stop({slot}, tune_rv);");
        save_block(&mut exit, 1, slot, program, &outputs, &tag, "tune_rv", true);
    }
    // The glue stands in the user's function: pointers read as arrays are indexed
    // there as the user wrote them, with one subscript.
    let mut body = region.body.clone();
    crate::flat::linearize(program, &mut body);
    crate::flat::source_names(program, &mut body);
    let wholes = if opts.instrument && opts.whole_nests {
        whole_nests(program, nests)
    } else {
        Vec::new()
    };
    let g = Glue {
        program,
        region,
        nests,
        wholes: &wholes,
        opts,
        exit: &exit,
    };
    g.body(&body, 1, out);
    out.push_str(&exit);
    out.push_str("}\n");
}

/// What the glue of one region is printed with.
struct Glue<'a> {
    program: &'a Program,
    region: &'a Region,
    nests: &'a [Nest],
    /// Whole nests timed and saved around their loop.
    wholes: &'a [Nest],
    opts: CodegenOptions,
    /// Code that ends the region (its timer, the Save of its outputs), at depth 1.
    exit: &'a str,
}

impl Glue<'_> {
    fn body(&self, body: &[Node], depth: usize, out: &mut String) {
        for n in body {
            match n {
                Node::Loop(l) => {
                    if let Some(nest) = self
                        .nests
                        .iter()
                        .find(|x| x.region == self.region.index && x.root == l.id)
                    {
                        nest_call(self.program, nest, self.opts, depth, out);
                    } else {
                        let whole = self
                            .wholes
                            .iter()
                            .find(|x| x.region == self.region.index && x.root == l.id);
                        let d = if let Some(w) = whole {
                            pad(out, depth);
                            out.push_str("{\n");
                            enter(self.program, w, depth + 1, out);
                            depth + 1
                        } else {
                            depth
                        };
                        pad(out, d);
                        out.push_str(&print::loop_header(l, l.declares_var));
                        out.push_str(" {\n");
                        self.body(&l.body, d + 1, out);
                        pad(out, d);
                        out.push_str("}\n");
                        if let Some(w) = whole {
                            leave(self.program, w, d, out);
                            pad(out, depth);
                            out.push_str("}\n");
                        }
                    }
                }
                Node::If(i) => {
                    pad(out, depth);
                    let _ = writeln!(out, "if ({}) {{", print::expr(&i.cond));
                    self.body(&i.then_body, depth + 1, out);
                    pad(out, depth);
                    if i.else_body.is_empty() {
                        out.push_str("}\n");
                    } else {
                        out.push_str("} else {\n");
                        self.body(&i.else_body, depth + 1, out);
                        pad(out, depth);
                        out.push_str("}\n");
                    }
                }
                Node::Block(b) => {
                    pad(out, depth);
                    out.push_str("{\n");
                    self.body(b, depth + 1, out);
                    pad(out, depth);
                    out.push_str("}\n");
                }
                Node::Opaque(o) if o.returns && !self.exit.is_empty() => {
                    // The region's end first, then the user's return, in a block of
                    // their own (the return may be an if's whole body).
                    pad(out, depth);
                    out.push_str("{\n");
                    for line in self.exit.lines() {
                        pad(out, depth);
                        out.push_str(line);
                        out.push('\n');
                    }
                    print::node(n, &PrintOptions::default(), depth + 1, out);
                    pad(out, depth);
                    out.push_str("}\n");
                }
                Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {
                    print::node(n, &PrintOptions::default(), depth, out)
                }
            }
        }
    }
}

fn nest_call(program: &Program, nest: &Nest, opts: CodegenOptions, depth: usize, out: &mut String) {
    let mut args: Vec<String> = Vec::new();
    for s in &nest.scalars {
        args.push(if s.written {
            format!("&{}", s.name)
        } else {
            s.name.clone()
        });
    }
    // A pointer read as an array goes to the nest function's array parameter.
    args.extend(nest.arrays.iter().map(|a| {
        let c = program.c_name(a);
        if program.array(a).is_some_and(|x| x.flat) {
            format!("(void *){c}")
        } else {
            c.to_string()
        }
    }));
    let call = format!("{}({});", nest.function_name(), args.join(", "));
    if !opts.instrument {
        pad(out, depth);
        out.push_str(&call);
        out.push('\n');
        return;
    }
    pad(out, depth);
    out.push_str("{\n");
    let d = depth + 1;
    enter(program, nest, d, out);
    pad(out, d);
    out.push_str(&call);
    out.push('\n');
    leave(program, nest, d, out);
    pad(out, depth);
    out.push_str("}\n");
}

/// A nest's entry: its invocation counted, its inputs saved, its timer started (its
/// slot is its `id`, the version `tune_v`).
fn enter(program: &Program, nest: &Nest, d: usize, out: &mut String) {
    let slot = nest.id;
    let tag = &nest.name;
    pad(out, d);
    let _ = writeln!(out, "long tune_v = tune_rt_enter({slot}, \"{tag}\");");
    let inputs = SaveSet {
        scalars: nest
            .scalars
            .iter()
            .map(|s| (s.name.as_str(), s.dtype))
            .collect(),
        arrays: nest.arrays.iter().map(|a| a.as_str()).collect(),
    };
    save_block(out, d, slot, program, &inputs, tag, "tune_v", false);
    pad(out, d);
    let _ = writeln!(out, "tune_rt_start({slot});");
}

/// A nest's exit: its timer stopped, its outputs saved.
fn leave(program: &Program, nest: &Nest, d: usize, out: &mut String) {
    let slot = nest.id;
    let tag = &nest.name;
    pad(out, d);
    let _ = writeln!(out, "tune_rt_stop({slot}, tune_v);");
    let outputs = SaveSet {
        scalars: nest
            .scalars
            .iter()
            .filter(|s| s.written)
            .map(|s| (s.name.as_str(), s.dtype))
            .collect(),
        arrays: nest
            .arrays
            .iter()
            .filter(|a| nest.outputs.contains(a))
            .map(|a| a.as_str())
            .collect(),
    };
    save_block(out, d, slot, program, &outputs, tag, "tune_v", true);
}

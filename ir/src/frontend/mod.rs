//! The C frontend: preprocess with the system compiler, parse with `lang-c`, find the
//! `#pragma scop` regions (or one whole function), and lower them to the IR.
//!
//! Anything outside the supported subset is refused with `file:line:col: unsupported
//! <what>`; the frontend never panics on user input.

use crate::error::{Error, Location, Result};
use crate::program::const_value;
use crate::program::{
    walk_nodes, Array, Assign, AssignOp, BinOp, DType, Decl, Directive, Expr, If, Loop, LoopCmp,
    LoopKind, MacroName, Node, Pos, Program, PureFunction, Region, Scalar, ScalarOrigin, UnOp,
    UnreadFunction,
};
use crate::source::{pragma_lines, preprocess, Preprocessed};
use lang_c::ast::{
    ArraySize, BinaryOperator, BlockItem, Constant, Declaration, DeclarationSpecifier, Declarator,
    DeclaratorKind, DerivedDeclarator, Expression, ExternalDeclaration, ForInitializer,
    FunctionDefinition, Initializer, SpecifierQualifier, Statement, StorageClassSpecifier,
    TypeSpecifier, UnaryOperator,
};
use lang_c::driver::{Config, Flavor};
use lang_c::span::{Node as CNode, Span};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

mod expr;
pub(crate) mod gnu;
mod lower;
mod opaque;
mod symbols;

use lower::*;
use symbols::*;

/// How to run the preprocessor and which region to take.
#[derive(Debug, Clone)]
pub struct FrontendOptions {
    /// The C compiler driver (`$CC`, default `cc`).
    pub cc: String,
    /// Preprocessor-relevant flags: `-I`, `-D`, `-U`, `-std`, ...
    pub flags: Vec<String>,
    /// Tune the whole body of this function instead of `#pragma scop` regions.
    pub function: Option<String>,
    /// Functions of the user's assumed pure (`--assume-pure NAME`): a call to one may
    /// stand inside a nest (the C library's math functions always may).
    pub assume_pure: Vec<String>,
    /// Other `.c` files make up the program with this one: a name of `assume_pure` that
    /// this file does not declare is theirs, not an error.
    pub other_sources: bool,
}

impl Default for FrontendOptions {
    fn default() -> Self {
        FrontendOptions {
            cc: std::env::var("CC").unwrap_or_else(|_| "cc".to_string()),
            flags: Vec::new(),
            function: None,
            assume_pure: Vec::new(),
            other_sources: false,
        }
    }
}

/// Where a region sits in the preprocessed text, for splicing generated code back in.
#[derive(Debug, Clone)]
pub struct RegionText {
    /// Byte range replaced by the generated region.
    pub replace: Range<usize>,
    /// Location of the text right after `replace` (for a line marker).
    pub resume: Location,
    /// Start of the line where the enclosing function's definition begins.
    pub function_start: usize,
    pub function_loc: Location,
}

/// A parsed program: the IR plus the preprocessed text it came from.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub program: Program,
    pub source: Preprocessed,
    pub regions: Vec<RegionText>,
}

/// Preprocesses and parses `file`, then lowers its regions.
pub fn parse_file(file: &str, opts: &FrontendOptions) -> Result<Parsed> {
    let pp = preprocess(&opts.cc, file, &opts.flags)?;
    let mut parsed = parse_preprocessed_with(pp, opts)?;
    parsed.program.c89 = selects_c89(&opts.flags);
    Ok(parsed)
}

/// Whether cc flags select C89/C90 (the last `-std=` or `-ansi` decides).
pub fn selects_c89(flags: &[String]) -> bool {
    flags
        .iter()
        .filter_map(|f| match f.as_str() {
            "-ansi" => Some(true),
            f => f.strip_prefix("-std=").map(|s| {
                matches!(
                    s,
                    "c89" | "c90" | "gnu89" | "gnu90" | "iso9899:1990" | "iso9899:199409"
                )
            }),
        })
        .next_back()
        .unwrap_or(false)
}

/// Parses an already preprocessed translation unit.
pub fn parse_preprocessed(pp: Preprocessed, function: Option<&str>) -> Result<Parsed> {
    parse_preprocessed_with(
        pp,
        &FrontendOptions {
            function: function.map(String::from),
            ..Default::default()
        },
    )
}

/// [`parse_preprocessed`] under `opts` (the region's function, the functions assumed
/// pure).
pub fn parse_preprocessed_with(pp: Preprocessed, opts: &FrontendOptions) -> Result<Parsed> {
    let function = opts.function.as_deref();
    let config = Config {
        cpp_command: String::new(),
        cpp_options: Vec::new(),
        flavor: Flavor::GnuC11,
    };
    let parse = match lang_c::driver::parse_preprocessed(&config, gnu::parser_text(&pp.text)) {
        Ok(p) => p,
        Err(e) => {
            let rest = &pp.text[e.offset.min(pp.text.len())..];
            let ident = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .count();
            let token: String = match rest.chars().next() {
                None => String::new(),
                Some(_) if ident > 0 => rest.chars().take(ident).collect(),
                Some(c) => c.to_string(),
            };
            let message = if token.is_empty() {
                "unexpected end of input".to_string()
            } else {
                format!("unexpected '{token}'")
            };
            return Err(Error::Syntax {
                at: pp.location(e.offset),
                message,
            });
        }
    };
    let unit = parse.unit;
    let mut globals = Symbols::default();
    for ext in &unit.0 {
        if let ExternalDeclaration::Declaration(d) = &ext.node {
            globals.declare(&d.node, &pp);
        }
    }
    let functions: Vec<&CNode<FunctionDefinition>> = unit
        .0
        .iter()
        .filter_map(|e| match &e.node {
            ExternalDeclaration::FunctionDefinition(f) => Some(f),
            _ => None,
        })
        .collect();
    // The nest functions placed before a region's function may call them: C has the
    // user declare them before that function.
    let mut pure_functions = Vec::new();
    for name in &opts.assume_pure {
        match pure_function(name, &unit, &globals, &pp)? {
            Some(f) => pure_functions.push(f),
            None if opts.other_sources => {}
            None => {
                return Err(Error::Option {
                    file: pp.file.clone(),
                    message: format!("--assume-pure {name}: no function of that name is declared"),
                })
            }
        }
    }

    let mut found: Vec<FoundRegion> = Vec::new();
    // Regions found without markers: a function that cannot be lowered is left out.
    let mut auto = false;
    if let Some(name) = function {
        let f = functions
            .iter()
            .find(|f| declarator_name(&f.node.declarator.node).as_deref() == Some(name))
            .ok_or_else(|| Error::NoRegion {
                file: pp.file.clone(),
                message: format!("no function named '{name}' is defined"),
            })?;
        found.push(function_region(f));
    } else {
        let scops = pragma_lines(&pp.text, "scop");
        let ends = pragma_lines(&pp.text, "endscop");
        if scops.is_empty() {
            // No markers: every function of the file itself that holds a for loop.
            auto = true;
            for f in &functions {
                let at = pp.location(f.span.start);
                if at.file == pp.file && holds_for(&f.node.statement.node) {
                    found.push(function_region(f));
                }
            }
            if found.is_empty() {
                return Err(Error::NoRegion {
                    file: pp.file.clone(),
                    message: "no function of this file holds a for loop (mark the loops to \
                              tune with #pragma scop / #pragma endscop, or name a function \
                              with --function)"
                        .to_string(),
                });
            }
        }
        for (k, &lo) in scops.iter().enumerate() {
            let next_scop = scops.get(k + 1).copied().unwrap_or(usize::MAX);
            let hi = ends
                .iter()
                .copied()
                .find(|&e| e > lo && e < next_scop)
                .ok_or_else(|| Error::Invalid {
                    at: pp.location(lo),
                    message: "'#pragma scop' without a matching '#pragma endscop'".to_string(),
                })?;
            let f = functions
                .iter()
                .find(|f| f.span.start <= lo && hi < f.span.end)
                .ok_or_else(|| Error::Invalid {
                    at: pp.location(lo),
                    message: "'#pragma scop' region is not inside one function body".to_string(),
                })?;
            let mut decls = Vec::new();
            let items =
                locate_region(&f.node.statement, lo, hi, &mut decls, &pp)?.ok_or_else(|| {
                    Error::Invalid {
                        at: pp.location(lo),
                        message: "'#pragma scop' region is not inside one block".to_string(),
                    }
                })?;
            found.push(FoundRegion {
                function: f,
                items,
                decls,
                replace: pp.line_start(lo)..pp.line_end(hi),
                start: lo,
                end: hi,
            });
        }
    }

    let name = std::path::Path::new(&pp.file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    let mut lower = Lowerer {
        pp: &pp,
        external: HashMap::new(),
        typedefs: HashMap::new(),
        scopes: Vec::new(),
        loop_vars: Vec::new(),
        done_loop_vars: Vec::new(),
        arrays: BTreeMap::new(),
        scalars: BTreeMap::new(),
        next_loop: 0,
        next_stmt: 0,
        used_pragmas: Default::default(),
        flat_used: Default::default(),
        flat_refused: Default::default(),
        flat_refused_at: Default::default(),
        current_assign: None,
        named_apart: Default::default(),
        pure: pure_functions.iter().map(|f| f.name.clone()).collect(),
        defined: functions
            .iter()
            .filter_map(|f| declarator_name(&f.node.declarator.node))
            .collect(),
    };
    let mut regions = Vec::new();
    let mut texts = Vec::new();
    let mut skipped = Vec::new();
    for r in &found {
        let fdef = &r.function.node;
        let mut external = globals.clone();
        if let Some(params) = function_params(&fdef.declarator.node) {
            for p in params {
                if let Some(d) = &p.node.declarator {
                    let base = base_type(&p.node.specifiers, &external);
                    let (name, sym) = declarator_sym(&d.node, base, true, &pp);
                    if let Some(name) = name {
                        external.vars.insert(name, sym);
                    }
                }
            }
        }
        // K&R parameter lists (`void f(n, a) int n; double a[N]; {`): the types come
        // in declarations before the body; a name none declares is an `int`.
        for id in kr_parameters(&fdef.declarator.node) {
            external.vars.insert(id, Sym::Scalar(DType::I32));
        }
        for d in &fdef.declarations {
            let base = base_type(&d.node.specifiers, &external);
            for init in &d.node.declarators {
                let (name, sym) =
                    declarator_sym(&init.node.declarator.node, base.clone(), true, &pp);
                if let Some(name) = name {
                    external.vars.insert(name, sym);
                }
            }
        }
        for d in &r.decls {
            external.declare(d, &pp);
        }
        lower.typedefs = external.typedefs;
        lower.external = external.vars;
        lower.scopes.clear();
        lower.loop_vars.clear();
        lower.done_loop_vars.clear();
        lower.next_loop = 0;
        lower.next_stmt = 0;
        lower.flat_refused.clear();
        lower.flat_refused_at.clear();
        let saved = lower.save();
        let body = match lower_flat(&mut lower, r, &saved) {
            Ok(body) => body,
            Err(e) if auto => {
                // Found without markers: a function that cannot be lowered is left
                // as it is.
                lower.restore(saved);
                skipped.push(UnreadFunction {
                    name: declarator_name(&fdef.declarator.node).unwrap_or_default(),
                    line: pp.location(r.function.span.start).line,
                    reason: e.to_string(),
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let index = regions.len();
        let start = pp.location(r.start);
        let end = pp.location(r.end);
        let dead_after = dead_after(r, &body, &pp.text);
        regions.push(Region {
            index,
            function: declarator_name(&fdef.declarator.node).unwrap_or_default(),
            start: Pos {
                line: start.line,
                col: start.col,
            },
            end: Pos {
                line: end.line,
                col: end.col,
            },
            body,
            dead_after,
        });
        let fstart = pp.line_start(r.function.span.start);
        texts.push(RegionText {
            replace: r.replace.clone(),
            resume: pp.location(r.replace.end),
            function_start: fstart,
            function_loc: pp.location(fstart),
        });
    }

    if regions.is_empty() {
        return Err(Error::NoRegion {
            file: pp.file.clone(),
            message: format!(
                "no function of this file could be read ({})",
                skipped
                    .iter()
                    .map(|s| s.reason.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        });
    }
    let mut scalars: Vec<Scalar> = lower.scalars.into_values().collect();
    for s in &mut scalars {
        for region in &regions {
            let (r, w) = scalar_use(&region.body, &s.name);
            s.read |= r;
            s.written |= w;
        }
    }
    for region in &mut regions {
        region
            .dead_after
            .retain(|n| scalars.iter().any(|s| &s.name == n));
    }
    let program = Program {
        name,
        file: pp.file.clone(),
        arrays: lower.arrays.into_values().collect(),
        scalars,
        regions,
        c89: false,
        auto_regions: auto,
        pure_functions,
        unread_functions: skipped,
    };
    Ok(Parsed {
        program,
        source: pp,
        regions: texts,
    })
}

/// The scalars of region `r` (lowered as `body`) whose values at its end nobody
/// reads: declared in its function (a parameter, or a local before the region that is
/// not `static`) and not named in the function's text after the region. A global, or a
/// name the rest of the function mentions, may be read.
fn dead_after(r: &FoundRegion, region: &[Node], text: &str) -> Vec<String> {
    let fdef = &r.function.node;
    // Run again by a loop of its function (or reached again by a jump), the region may
    // read what it left: nothing is dead after it.
    let body = &fdef.statement;
    if loops_around(&body.node, r.start, r.end)
        || text
            .get(body.span.start..r.start)
            .is_some_and(|t| t.contains("goto"))
    {
        return Vec::new();
    }
    let mut declared: BTreeSet<String> = BTreeSet::new();
    if let Some(params) = function_params(&fdef.declarator.node) {
        for p in params {
            if let Some(name) = p
                .node
                .declarator
                .as_ref()
                .and_then(|d| declarator_name(&d.node))
            {
                declared.insert(name);
            }
        }
    }
    declared.extend(kr_parameters(&fdef.declarator.node));
    for d in &r.decls {
        // Automatic storage only: a `static` or `extern` one outlives the call.
        let automatic = d.specifiers.iter().all(|s| {
            !matches!(&s.node, DeclarationSpecifier::StorageClass(c)
                if !matches!(c.node, StorageClassSpecifier::Auto | StorageClassSpecifier::Register))
        });
        if automatic {
            declared.extend(
                d.declarators
                    .iter()
                    .filter_map(|i| declarator_name(&i.node.declarator.node)),
            );
        }
    }
    // The region's own declarations are locals of the function too.
    walk_nodes(region, &mut |n, _| {
        if let Node::Decl(d) = n {
            declared.insert(d.name.clone());
        }
    });
    let after = text.get(r.end..r.function.span.end).unwrap_or("");
    let whole = text
        .get(r.function.span.start..r.function.span.end)
        .unwrap_or("");
    let mut out: Vec<String> = declared
        .into_iter()
        .filter(|n| {
            let (read, written) = scalar_use(region, n);
            (read || written)
                && !crate::source::mentions_word(after, n)
                && !crate::source::address_taken(whole, n)
        })
        .collect();
    out.sort();
    out
}

/// Whether a scalar is read / written in a body.
fn scalar_use(body: &[Node], name: &str) -> (bool, bool) {
    let (mut read, mut written) = (false, false);
    walk_nodes(body, &mut |n, _| match n {
        Node::Assign(a) => {
            if matches!(&a.target, Expr::Var(v) if v == name) {
                written = true;
                read |= a.op != AssignOp::Set;
            } else {
                read |= a.target.mentions(name);
            }
            read |= a.value.mentions(name);
        }
        Node::Loop(l) => read |= l.init.mentions(name) || l.bound.mentions(name),
        Node::If(i) => read |= i.cond.mentions(name),
        Node::Decl(d) => {
            written |= d.name == name && d.init.is_some();
            read |= d.init.as_ref().is_some_and(|e| e.mentions(name))
                || d.dims.iter().any(|e| e.mentions(name));
        }
        Node::Opaque(o) => {
            read |= o.names.iter().any(|n| n == name);
            written |= o.writes.iter().any(|n| n == name);
        }
        Node::Block(_) => {}
    });
    (read, written)
}

/// The region lowered, its pointers indexed with one subscript read as arrays where
/// they can be (`crate::flat`); the accesses of those that cannot are lowered again, as
/// glue.
fn lower_flat(lower: &mut Lowerer, r: &FoundRegion, saved: &opaque::Saved) -> Result<Vec<Node>> {
    lower.named_apart.clear();
    loop {
        lower.flat_used.clear();
        let mut body = lower_region(lower, r)?;
        let flat: BTreeSet<String> = lower
            .flat_used
            .iter()
            .filter(|n| !lower.flat_refused.contains_key(*n))
            .cloned()
            .collect();
        // A pointer assigned in the glue between nests (two buffers swapped after
        // each time step) is read as an array all the same: every nest sees it as it
        // is at the nest's entry, where it is saved and, in a tuned file, checked.
        // A scalar that no statement that may run more than once writes (`Nr =
        // atoi(argv[3]);` at the top of main, `int n = N;`) stays put inside every loop
        // nest: each nest sees it as it is at the nest's entry, where its extents are
        // evaluated and its data saved, like a pointer swapped between the nests.
        let refused = {
            let written = written_where_repeated(&body);
            crate::flat::delinearize(&mut body, &mut lower.arrays, &flat, &|v| {
                !written.contains(v)
            })
        };
        let (mut refused, refused_at) = refused;
        if refused.is_empty() && refused_at.is_empty() {
            return Ok(body);
        }
        for r in refused_at {
            // Refused at a statement once already and still there: the whole pointer.
            match lower.flat_refused_at.entry((r.pointer.clone(), r.pos)) {
                std::collections::btree_map::Entry::Occupied(_) => refused.push((r.pointer, r.why)),
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(r.why);
                }
            }
        }
        lower.restore(saved.clone());
        lower.flat_refused.extend(refused);
    }
}

/// The scalars written by a statement that may run more than once: inside a loop, in
/// the body of a `while` or `do` loop (kept as written around its body), or anywhere
/// where the region has a `goto` (a loop of its own); and every loop's variable.
fn written_where_repeated(body: &[Node]) -> BTreeSet<String> {
    fn writes(n: &Node, out: &mut BTreeSet<String>) {
        match n {
            Node::Assign(a) => {
                if let Expr::Var(v) = &a.target {
                    out.insert(v.clone());
                }
            }
            Node::Decl(d) => {
                out.insert(d.name.clone());
            }
            Node::Opaque(o) => out.extend(o.writes.iter().cloned()),
            Node::Loop(l) => {
                out.insert(l.var.clone());
            }
            Node::If(_) | Node::Block(_) => {}
        }
    }
    fn go(body: &[Node], repeated: bool, out: &mut BTreeSet<String>) {
        let mut after_loop_head = false;
        for n in body {
            if repeated || matches!(n, Node::Loop(_)) {
                writes(n, out);
            }
            match n {
                Node::Loop(l) => go(&l.body, true, out),
                Node::If(i) => {
                    go(&i.then_body, repeated, out);
                    go(&i.else_body, repeated, out);
                }
                Node::Block(b) => go(b, repeated || after_loop_head, out),
                Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
            }
            after_loop_head = matches!(n, Node::Opaque(o) if {
                let t = o.text.trim_start();
                ["while", "do"].iter().any(|k| {
                    t.strip_prefix(k)
                        .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
                })
            });
        }
    }
    let goto = {
        let mut any = false;
        walk_nodes(body, &mut |n, _| {
            if let Node::Opaque(o) = n {
                any |= o
                    .text
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == "goto");
            }
        });
        any
    };
    let mut out = BTreeSet::new();
    go(body, goto, &mut out);
    out
}

/// The statements of a region as IR; a directive that no statement carries is refused.
fn lower_region(lower: &mut Lowerer, r: &FoundRegion) -> Result<Vec<Node>> {
    let pp = lower.pp;
    let mut body = Vec::new();
    lower.scopes.push(HashMap::new());
    for item in &r.items {
        body.extend(lower.block_item(item)?);
    }
    lower.scopes.pop();
    // A directive is the user's: one that no loop carries would be lost.
    if let Some((o, p)) = crate::source::other_pragmas(&pp.text, r.start + 1..r.end)
        .into_iter()
        .find(|(o, _)| !lower.used_pragmas.contains(o))
    {
        return Err(Error::Unsupported {
            at: pp.location(o + (pp.text[o..].len() - pp.text[o..].trim_start().len())),
            what: format!("'{p}' that does not stand right before a for loop"),
        });
    }
    Ok(body)
}

/// A whole function body as a region.
fn function_region<'a>(f: &'a CNode<FunctionDefinition>) -> FoundRegion<'a> {
    let items = match &f.node.statement.node {
        Statement::Compound(items) => items,
        _ => unreachable!("a function body is a compound statement"),
    };
    let body = f.node.statement.span;
    FoundRegion {
        function: f,
        items: items.iter().collect(),
        decls: Vec::new(),
        replace: body.start + 1..body.end - 1,
        start: body.start,
        end: body.end,
    }
}

/// Whether a loop statement under `s` encloses the text `start..end`.
fn loops_around(s: &Statement, start: usize, end: usize) -> bool {
    let inside = |n: &CNode<Statement>| loops_around(&n.node, start, end);
    let encloses = |span: Span| span.start <= start && end <= span.end;
    match s {
        Statement::For(f) => encloses(f.span) || inside(&f.node.statement),
        Statement::While(w) => encloses(w.span) || inside(&w.node.statement),
        Statement::DoWhile(w) => encloses(w.span) || inside(&w.node.statement),
        Statement::Compound(items) => items.iter().any(|i| match &i.node {
            BlockItem::Statement(s) => inside(s),
            _ => false,
        }),
        Statement::If(i) => {
            inside(&i.node.then_statement)
                || i.node.else_statement.as_ref().is_some_and(|e| inside(e))
        }
        Statement::Labeled(l) => inside(&l.node.statement),
        Statement::Switch(w) => inside(&w.node.statement),
        _ => false,
    }
}

/// Whether a statement holds a `for` loop.
fn holds_for(s: &Statement) -> bool {
    match s {
        Statement::For(_) => true,
        Statement::Compound(items) => items.iter().any(|i| match &i.node {
            BlockItem::Statement(s) => holds_for(&s.node),
            _ => false,
        }),
        Statement::If(i) => {
            holds_for(&i.node.then_statement.node)
                || i.node
                    .else_statement
                    .as_ref()
                    .is_some_and(|e| holds_for(&e.node))
        }
        Statement::While(w) => holds_for(&w.node.statement.node),
        Statement::DoWhile(w) => holds_for(&w.node.statement.node),
        Statement::Labeled(l) => holds_for(&l.node.statement.node),
        Statement::Switch(w) => holds_for(&w.node.statement.node),
        _ => false,
    }
}

struct FoundRegion<'a> {
    function: &'a CNode<FunctionDefinition>,
    items: Vec<&'a CNode<BlockItem>>,
    decls: Vec<&'a Declaration>,
    replace: Range<usize>,
    start: usize,
    end: usize,
}

/// Finds the block items between offsets `lo` and `hi` (the pragma lines), collecting the
/// declarations visible at that point.
fn locate_region<'a>(
    stmt: &'a CNode<Statement>,
    lo: usize,
    hi: usize,
    decls: &mut Vec<&'a Declaration>,
    pp: &Preprocessed,
) -> Result<Option<Vec<&'a CNode<BlockItem>>>> {
    let contains = |s: Span| s.start <= lo && hi < s.end;
    if !contains(stmt.span) {
        return Ok(None);
    }
    // Spans may run over trailing blank and directive lines (a brace-less `if` looks
    // for an `else` past them), so compare the markers with the last real token.
    let end = |s: Span| token_end(&pp.text, s);
    match &stmt.node {
        Statement::Compound(items) => {
            for item in items {
                if item.span.start <= lo && hi < end(item.span) {
                    return match &item.node {
                        BlockItem::Statement(s) => locate_region(s, lo, hi, decls, pp),
                        _ => Ok(None),
                    };
                }
                let straddles = (item.span.start < lo && lo < end(item.span))
                    || (item.span.start < hi && hi < end(item.span));
                if straddles {
                    return Err(Error::Invalid {
                        at: pp.location(item.span.start),
                        message: "a statement crosses the '#pragma scop' region boundary"
                            .to_string(),
                    });
                }
            }
            for item in items {
                if end(item.span) <= lo {
                    if let BlockItem::Declaration(d) = &item.node {
                        decls.push(&d.node);
                    }
                }
            }
            Ok(Some(
                items
                    .iter()
                    .filter(|i| i.span.start > lo && end(i.span) <= hi)
                    .collect(),
            ))
        }
        Statement::For(f) => {
            if let ForInitializer::Declaration(d) = &f.node.initializer.node {
                decls.push(&d.node);
            }
            locate_region(&f.node.statement, lo, hi, decls, pp)
        }
        Statement::If(i) => {
            if let Some(r) = locate_region(&i.node.then_statement, lo, hi, decls, pp)? {
                return Ok(Some(r));
            }
            match &i.node.else_statement {
                Some(e) => locate_region(e, lo, hi, decls, pp),
                None => Ok(None),
            }
        }
        Statement::While(w) => locate_region(&w.node.statement, lo, hi, decls, pp),
        Statement::DoWhile(w) => locate_region(&w.node.statement, lo, hi, decls, pp),
        Statement::Labeled(l) => locate_region(&l.node.statement, lo, hi, decls, pp),
        _ => Ok(None),
    }
}

/// End of the last token of `span`: trailing whitespace and preprocessor lines dropped.
fn token_end(text: &str, span: Span) -> usize {
    let mut end = span.end.min(text.len());
    loop {
        let trimmed = text[span.start..end].trim_end();
        end = span.start + trimmed.len();
        let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1).max(span.start);
        if line_start > span.start && text[line_start..end].trim_start().starts_with('#') {
            end = line_start;
        } else {
            return end;
        }
    }
}

/// The function `name` that the user assumed pure: its result type, and the C text a
/// cutout needs to call it (its definition where this file defines it, else its
/// declaration); `None` where this file does not declare it.
fn pure_function(
    name: &str,
    unit: &lang_c::ast::TranslationUnit,
    globals: &Symbols,
    pp: &Preprocessed,
) -> Result<Option<PureFunction>> {
    let option_error = |message: String| Error::Option {
        file: pp.file.clone(),
        message: format!("--assume-pure {name}: {message}"),
    };
    let returns = |specs: &[CNode<DeclarationSpecifier>], d: &Declarator| -> Result<DType> {
        if d.derived
            .iter()
            .any(|x| matches!(x.node, DerivedDeclarator::Pointer(_)))
        {
            return Err(option_error("it returns a pointer".into()));
        }
        match base_type(specs, globals) {
            Base::D(t) => Ok(t),
            Base::Other(what) => Err(option_error(format!("it returns {what}"))),
        }
    };
    let text = |span: Span| pp.text[span.start..span.end.min(pp.text.len())].to_string();
    for ext in &unit.0 {
        if let ExternalDeclaration::FunctionDefinition(f) = &ext.node {
            let d = &f.node.declarator.node;
            if declarator_name(d).as_deref() != Some(name) {
                continue;
            }
            let dtype = returns(&f.node.specifiers, d)?;
            let has_storage = f
                .node
                .specifiers
                .iter()
                .any(|s| matches!(s.node, DeclarationSpecifier::StorageClass(_)));
            // `static`, so that a C99 `inline` definition is emitted where it is not
            // inlined.
            let prefix = if has_storage { "" } else { "static " };
            return Ok(Some(PureFunction {
                name: name.to_string(),
                dtype,
                text: format!("{prefix}{}\n", text(f.span)),
            }));
        }
    }
    for ext in &unit.0 {
        if let ExternalDeclaration::Declaration(decl) = &ext.node {
            for init in &decl.node.declarators {
                let d = &init.node.declarator.node;
                let is_function = d
                    .derived
                    .iter()
                    .any(|x| matches!(x.node, DerivedDeclarator::Function(_)));
                if is_function && declarator_name(d).as_deref() == Some(name) {
                    let dtype = returns(&decl.node.specifiers, d)?;
                    let mut text = text(decl.span);
                    if !text.trim_end().ends_with(';') {
                        text.push(';');
                    }
                    text.push('\n');
                    return Ok(Some(PureFunction {
                        name: name.to_string(),
                        dtype,
                        text,
                    }));
                }
            }
        }
    }
    Ok(None)
}

//! Time tiling: a time loop whose body is a sequence of sweeps over the rows of its
//! arrays (jacobi-1d/2d, heat-3d, fdtd-2d, seidel-2d) is printed as blocks of `depth`
//! steps; within a block each sweep's rows are cut into tiles of `width` rows, skewed
//! against the sweeps, and a tile runs every sweep of every step of its block before
//! the next tile starts. The rows a tile touches then stay in cache across the block's
//! steps instead of streaming every array through memory once per step.
//!
//! The sweeps of one step are numbered `s = 0..S`; sweep `s` of step `t` is sub-step
//! `tau = t * S + s`, and `tau'` counts sub-steps from the block's first. Tile `b` of a
//! block holds, in sub-step `tau'`, the rows `[b * width - r * tau', (b + 1) * width -
//! r * tau')` of every sweep (clipped to the sweep's own rows): a parallelogram, leaning
//! back by the skew `r` rows per sub-step.
//!
//! Forms read: the time loop (step 1) holds only sweeps. A sweep is a loop whose
//! variable (its row) is the first subscript, plus a constant, of every access to an
//! array the time loop writes (`B[i][j] = A[i - 1][j] + ...`), its bounds fixed over
//! the steps; or a statement or loop whose accesses to those arrays all have constant
//! first subscripts (fdtd-2d's `ey[0][j] = src[t]`), run once, by the tile that holds
//! that row. Arrays the time loop only reads may be indexed freely (`src[t]`). A sweep
//! writes no scalar but its own locals, and declares nothing directly in the time loop.
//! Its loops may carry `omp simd` or an unrolling, printed as they are.
//!
//! Legality: instance `(tau1, x1)` (sub-step, row) must still run before `(tau2, x2)`
//! where they touch one element, one of them writing, and `tau1 < tau2`. Within a block
//! the new order is by tile, then sub-step, then row, and the tile of `(tau, x)` is
//! `floor((x + r * tau') / width)`, which grows with `x + r * tau'`. So the order holds
//! where `x1 + r * tau1' <= x2 + r * tau2'`. Two accesses with first subscripts `x1 +
//! o1` and `x2 + o2` meet where `x1 - x2 = o2 - o1`, and the sub-steps of the two
//! sweeps are at least `d` apart (`s2 - s1`, or `s2 - s1 + S` into a later step, `S`
//! for one sweep against itself), so `r >= (o2 - o1) / d` over every such pair suffices.
//! The skew is the least such `r`. Within one sub-step rows still run in their order
//! (tiles in order, rows in order within each), and blocks run in order. Nothing else
//! about the other subscripts is assumed: two accesses are taken to meet whenever their
//! rows do.
//!
//! With `parallel`, one OpenMP team runs the whole loop, so it starts once, not once per
//! sweep of every step:
//! - where some sweep's row loop carries no dependence, every thread walks the blocks,
//!   tiles and sub-steps (the bounds are the same for all), such a sweep shares its
//!   rows in the tile (`omp for`, whose barrier ends the sub-step), and any other sweep
//!   runs on one thread (`omp single`);
//! - where none does (seidel-2d's sweep, carried along both its loops), the threads
//!   take the blocks in turn, a pipeline: each runs its block's tiles in order, and
//!   before tile `b` of block `k` waits until block `k - 1` has finished its tiles up to
//!   `b + ahead`, then counts its own tile done (release and acquire atomics, one cache
//!   line per thread). A tile of a block touches the rows `[b w - r (depth S - 1) -
//!   reach, b w + w + reach)` (`reach` the largest offset of a written array's first
//!   subscript), so with `ahead = ceil((r (depth S - 1) + 2 reach) / w)` the tiles that
//!   run together in consecutive blocks touch no common row, and every tile of block
//!   `k - 1` that shares one with tile `b` of block `k` ran before it, as in the
//!   sequential order. Blocks further apart are further apart in their tiles.
//!
//! The step writes a [`Directive::TimeTile`] on the time loop and leaves the loops as
//! they are (semantics, analysis and counts unchanged); [`print`] writes the tiles in
//! their place. No later step may change a loop of the time loop.

use super::*;
use crate::print::{self, PrintOptions};
use crate::program::TimeTileSpec;
use register_tile::Text;

/// One sweep of the time loop's body.
#[derive(Debug, Clone)]
pub(crate) struct Sweep<'a> {
    /// The row loop, or None for a sweep run once at row `point`.
    pub row: Option<&'a Loop>,
    pub point: i64,
    /// `(array, first-subscript offset from the row, write)` of every access to an
    /// array the time loop writes.
    pub accesses: Vec<(String, i64, bool)>,
}

/// A time loop a time tile applies to.
#[derive(Debug, Clone)]
pub(crate) struct Shape<'a> {
    pub sweeps: Vec<Sweep<'a>>,
    /// Rows a tile leans back per sub-step.
    pub skew: i64,
    /// The largest distance between a sweep's row and a row of a written array it
    /// touches.
    pub reach: i64,
}

impl Shape<'_> {
    /// Whether some sweep's rows may be shared by a team.
    pub fn any_parallel(&self) -> bool {
        self.sweeps
            .iter()
            .any(|s| s.row.is_some_and(|l| l.kind == LoopKind::Map))
    }
}

/// Every array access in `body`, with whether it is written, subscripts included.
fn accesses(body: &[Node], out: &mut Vec<(Expr, bool)>) {
    fn reads(e: &Expr, out: &mut Vec<(Expr, bool)>) {
        e.walk(&mut |x| {
            if let Expr::Access { .. } = x {
                out.push((x.clone(), false));
            }
        });
    }
    for n in body {
        match n {
            Node::Assign(a) => {
                match &a.target {
                    Expr::Access { indices, .. } => {
                        out.push((a.target.clone(), true));
                        if a.op != AssignOp::Set {
                            out.push((a.target.clone(), false));
                        }
                        indices.iter().for_each(|i| reads(i, out));
                    }
                    other => reads(other, out),
                }
                reads(&a.value, out);
            }
            Node::Decl(d) => {
                d.dims.iter().for_each(|e| reads(e, out));
                if let Some(e) = &d.init {
                    reads(e, out);
                }
            }
            Node::If(i) => {
                reads(&i.cond, out);
                accesses(&i.then_body, out);
                accesses(&i.else_body, out);
            }
            Node::Block(b) => accesses(b, out),
            Node::Loop(l) => {
                reads(&l.init, out);
                reads(&l.bound, out);
                accesses(&l.body, out);
            }
            Node::Opaque(_) => {}
        }
    }
}

/// Scalars assigned in `body`, and names declared there.
fn scalars_written(body: &[Node], written: &mut BTreeSet<String>, declared: &mut BTreeSet<String>) {
    for n in body {
        match n {
            Node::Assign(a) => {
                if let Expr::Var(v) = &a.target {
                    written.insert(v.clone());
                }
            }
            Node::Decl(d) => {
                declared.insert(d.name.clone());
            }
            Node::If(i) => {
                scalars_written(&i.then_body, written, declared);
                scalars_written(&i.else_body, written, declared);
            }
            Node::Block(b) => scalars_written(b, written, declared),
            Node::Loop(l) => {
                declared.insert(l.var.clone());
                scalars_written(&l.body, written, declared);
            }
            Node::Opaque(_) => {}
        }
    }
}

/// The time loop `l` read as sweeps, or why it cannot be.
pub(crate) fn shape(l: &Loop) -> Result<Shape<'_>, String> {
    if l.step != 1 || !matches!(l.cmp, LoopCmp::Lt | LoopCmp::Le) {
        return Err(format!("loop '{}' does not count up by one", l.var));
    }
    if crate::program::has_opaque(&l.body) {
        return Err("the time loop holds a statement the IR does not model".into());
    }
    let inner = crate::program::loops(&l.body);
    let own = l
        .directives
        .iter()
        .any(|d| !matches!(d, Directive::TimeTile(_)));
    // Inside, `omp simd` and unrolling stay as they are (each sweep's loops print as
    // they were); a directive that shares iterations or the user's would nest teams.
    let inside =
        |d: &Directive| matches!(d, Directive::OmpSimd { .. } | Directive::GccUnroll { .. });
    if let Some(x) = std::iter::once(l)
        .filter(|_| own)
        .chain(
            inner
                .iter()
                .copied()
                .filter(|x| !x.directives.iter().all(inside)),
        )
        .next()
    {
        return Err(format!("loop '{}' carries a directive", x.var));
    }
    if inner.is_empty() {
        return Err("the time loop holds no loop".into());
    }
    // The arrays the time loop writes.
    let mut all = Vec::new();
    accesses(&l.body, &mut all);
    let written: BTreeSet<String> = all
        .iter()
        .filter(|(_, w)| *w)
        .filter_map(|(e, _)| match e {
            Expr::Access { array, .. } => Some(array.clone()),
            _ => None,
        })
        .collect();
    if written.is_empty() {
        return Err("the time loop writes no array".into());
    }
    let loop_vars: BTreeSet<&str> = std::iter::once(l)
        .chain(inner.iter().copied())
        .map(|x| x.var.as_str())
        .collect();
    let fixed = |e: &Expr| loop_vars.iter().all(|v| !e.mentions(v));
    if !fixed(&l.init) || !fixed(&l.bound) {
        return Err("the time loop's bounds move with its own loops".into());
    }
    let mut sweeps = Vec::new();
    for (k, n) in l.body.iter().enumerate() {
        if let Node::Decl(d) = n {
            return Err(format!(
                "'{}' is declared in the time loop, outside its sweeps",
                d.name
            ));
        }
        let (mut w, mut declared) = (BTreeSet::new(), BTreeSet::new());
        scalars_written(std::slice::from_ref(n), &mut w, &mut declared);
        if let Some(v) = w.iter().find(|v| !declared.contains(*v)) {
            return Err(format!(
                "sweep {k} writes the scalar '{v}' of the time loop"
            ));
        }
        let mut acc = Vec::new();
        accesses(std::slice::from_ref(n), &mut acc);
        let firsts: Vec<(String, Option<crate::affine::Affine>, bool)> = acc
            .iter()
            .filter_map(|(e, wr)| match e {
                Expr::Access { array, indices } if written.contains(array) => Some((
                    array.clone(),
                    indices.first().and_then(|i| affine_of(i, &|_| true)),
                    *wr,
                )),
                _ => None,
            })
            .collect();
        let row = match n {
            Node::Loop(x)
                if firsts
                    .iter()
                    .any(|(_, f, _)| f.as_ref().is_some_and(|f| f.coeff(&x.var) != 0)) =>
            {
                Some(x)
            }
            _ => None,
        };
        let mut sweep = Sweep {
            row,
            point: 0,
            accesses: Vec::new(),
        };
        match row {
            Some(x) => {
                if x.step != 1 || !matches!(x.cmp, LoopCmp::Lt | LoopCmp::Le) {
                    return Err(format!("row loop '{}' does not count up by one", x.var));
                }
                if !fixed(&x.init) || !fixed(&x.bound) {
                    return Err(format!(
                        "the rows of loop '{}' move with the steps or another loop",
                        x.var
                    ));
                }
            }
            None => {
                sweep.point = firsts
                    .iter()
                    .find_map(|(_, f, _)| f.as_ref().filter(|f| f.is_constant()))
                    .map_or(0, |f| f.constant);
            }
        }
        for (array, first, wr) in firsts {
            let ok = first.filter(|f| match row {
                Some(x) => f.coeffs.len() == 1 && f.coeff(&x.var) == 1,
                None => f.is_constant(),
            });
            let Some(f) = ok else {
                return Err(format!(
                    "sweep {k}: the first subscript of '{array}' is not {} plus a constant",
                    row.map_or("a constant".to_string(), |x| format!("'{}'", x.var))
                ));
            };
            let o = f.constant - if row.is_some() { 0 } else { sweep.point };
            sweep.accesses.push((array, o, wr));
        }
        sweeps.push(sweep);
    }
    if sweeps.iter().all(|s| s.row.is_none()) {
        return Err("no sweep of the time loop walks rows".into());
    }
    // The least skew that keeps every pair of meeting accesses in order.
    let n = sweeps.len() as i64;
    let mut skew = 0i64;
    for (s1, a) in sweeps.iter().enumerate() {
        for (s2, b) in sweeps.iter().enumerate() {
            let d = if s2 > s1 {
                (s2 - s1) as i64
            } else {
                s2 as i64 - s1 as i64 + n
            };
            for (x, o1, w1) in &a.accesses {
                for (y, o2, w2) in &b.accesses {
                    if x == y && (*w1 || *w2) && o2 > o1 {
                        skew = skew.max((o2 - o1 + d - 1) / d);
                    }
                }
            }
        }
    }
    let reach = sweeps
        .iter()
        .flat_map(|s| s.accesses.iter().map(|(_, o, _)| o.abs()))
        .max()
        .unwrap_or(0);
    Ok(Shape {
        sweeps,
        skew,
        reach,
    })
}

pub(super) fn time_tile(
    nest: &mut Loop,
    at: usize,
    spec: TimeTileSpec,
    inside_parallel: bool,
    cx: &mut Ctx,
) -> Result<(), Refusal> {
    if !(1..=4096).contains(&spec.width) || !(1..=1024).contains(&spec.depth) {
        return Err(cx.na(format!(
            "time tile of {} steps by {} rows (1..=1024 steps, 1..=4096 rows)",
            spec.depth, spec.width
        )));
    }
    if inside_parallel {
        return Err(cx.na("the time loop is inside a parallel loop"));
    }
    let l = loop_at(nest, at).expect("loop");
    let s = shape(l).map_err(|why| cx.na(why))?;
    // A loop variable declared outside ends as the loops leave it; that is printed for
    // loops whose bounds do not move with the time loop's loops.
    if !spec.parallel {
        let vars: BTreeSet<&str> = std::iter::once(l)
            .chain(crate::program::loops(&l.body))
            .map(|x| x.var.as_str())
            .collect();
        if let Some(x) = crate::program::loops(&l.body).into_iter().find(|x| {
            !x.declares_var
                && vars
                    .iter()
                    .any(|v| x.init.mentions(v) || x.bound.mentions(v))
        }) {
            return Err(cx.na(format!(
                "loop '{}' is declared outside and its bounds move with another loop",
                x.var
            )));
        }
    }
    // What the printer needs, fixed now: the printer may see the accesses linearized.
    let spec = TimeTileSpec {
        skew: s.skew,
        reach: s.reach,
        sweeps: s
            .sweeps
            .iter()
            .map(|sw| sw.row.is_none().then_some(sw.point))
            .collect(),
        ..spec
    };
    let l = loop_at_mut(nest, at).expect("loop");
    l.directives = vec![Directive::TimeTile(spec)];
    Ok(())
}

/// A time loop a time tile may apply to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Preorder positions of the innermost loops that carry no dependence.
    pub maps: Vec<usize>,
    /// Sweeps per step.
    pub sweeps: usize,
    /// Rows a tile leans back per sweep.
    pub skew: i64,
    /// Some sweep's rows may run in parallel.
    pub parallel: bool,
    /// Bytes of one row of the widest array the loop writes or reads (where its
    /// extents are known), and how many arrays it touches.
    pub row_bytes: Option<i64>,
    pub arrays: usize,
}

/// Whether the nest `root` is a time loop a time tile applies to, and its sizes.
pub fn site(root: &Loop, arrays: &[Array]) -> Option<Site> {
    let s = shape(root).ok()?;
    let mut acc = Vec::new();
    accesses(&root.body, &mut acc);
    let names: BTreeSet<&str> = acc
        .iter()
        .filter_map(|(e, _)| match e {
            Expr::Access { array, .. } => Some(array.as_str()),
            _ => None,
        })
        .collect();
    let row_bytes = names
        .iter()
        .filter_map(|n| arrays.iter().find(|a| a.name == *n))
        .map(|a| {
            a.extents
                .iter()
                .skip(1)
                .try_fold(a.dtype.size() as i64, |b, e| {
                    e.filter(|n| *n > 0).map(|n| b.saturating_mul(n))
                })
        })
        .try_fold(0i64, |m, b| b.map(|b| m.max(b)));
    let maps = (1..)
        .map_while(|at| loop_at(root, at).map(|l| (at, l)))
        .filter(|(_, l)| l.kind == LoopKind::Map && crate::program::loops(&l.body).is_empty())
        .map(|(at, _)| at)
        .collect();
    Some(Site {
        maps,
        sweeps: s.sweeps.len(),
        skew: s.skew,
        parallel: s.any_parallel(),
        row_bytes,
        arrays: names.len(),
    })
}

fn lo(x: &Loop) -> String {
    format!("({})", print::expr(&x.init))
}

fn hi(x: &Loop) -> String {
    match x.cmp {
        LoopCmp::Le => format!("({} + 1)", print::expr(&x.bound)),
        _ => format!("({})", print::expr(&x.bound)),
    }
}

/// The time loop `l` (which carries `spec`) as C: the tiles, then the final values of
/// loop variables declared outside.
pub(crate) fn print(
    l: &Loop,
    spec: &TimeTileSpec,
    opts: &PrintOptions,
    depth: usize,
    out: &mut String,
) {
    // The sweeps as the step found them (the accesses may be linearized since).
    let sweeps: Vec<(&Node, Option<&Loop>, i64)> = l
        .body
        .iter()
        .zip(&spec.sweeps)
        .map(|(node, point)| match (node, point) {
            (Node::Loop(x), None) => (node, Some(x), 0),
            (_, p) => (node, None, p.unwrap_or(0)),
        })
        .collect();
    let (w, d, r, n) = (
        spec.width as i64,
        spec.depth as i64,
        spec.skew,
        sweeps.len() as i64,
    );
    let par = spec.parallel;
    // A team shares the rows of sweeps that carry no dependence; where none does, its
    // threads take blocks in turn, each tile waiting for the block before to be far
    // enough ahead (a pipeline over the blocks).
    let pipe = par
        && !sweeps
            .iter()
            .any(|(_, row, _)| row.is_some_and(|x| x.kind == LoopKind::Map));
    let shared = par && !pipe;
    // Tiles of consecutive blocks `ahead` apart touch no common row: a tile of block k
    // touches rows [b w - r (d n - 1) - reach, b w + w + reach).
    let ahead = (r * (d * sweeps.len() as i64 - 1) + 2 * spec.reach + spec.width as i64 - 1)
        / spec.width as i64;
    const BIG: &str = "1099511627776L";
    let mut c = Text {
        out: String::new(),
        depth,
    };
    c.line(&format!(
        "/* time tile of '{}': blocks of {d} steps, tiles of {w} rows leaning {r} per sweep{} */",
        l.var,
        if pipe {
            ", blocks pipelined over one team"
        } else if par {
            ", one team"
        } else {
            ""
        }
    ));
    c.open("");
    // The rows of every sweep together.
    let rows: Vec<(String, String)> = sweeps
        .iter()
        .map(|(_, row, point)| match row {
            Some(x) => (lo(x), hi(x)),
            None => (format!("{point}"), format!("{}", point + 1)),
        })
        .collect();
    c.line("long tune_tt_lo, tune_tt_hi, tune_tt_t0, tune_tt_t1, tune_tt_b0;");
    if pipe {
        c.line("long *tune_tt_done, tune_tt_e, tune_tt_slots;");
        c.line("extern int omp_get_max_threads(void);");
    }
    c.line(&format!("tune_tt_lo = {};", rows[0].0));
    c.line(&format!("tune_tt_hi = {};", rows[0].1));
    for (a, b) in &rows[1..] {
        c.line(&format!("if ({a} < tune_tt_lo) tune_tt_lo = {a};"));
        c.line(&format!("if ({b} > tune_tt_hi) tune_tt_hi = {b};"));
    }
    c.line(&format!("tune_tt_t0 = {};", lo(l)));
    c.line(&format!("tune_tt_t1 = {};", hi(l)));
    c.line(&format!(
        "tune_tt_b0 = tune_tt_lo >= 0 ? tune_tt_lo / {w} : -((-tune_tt_lo + {}) / {w});",
        w - 1
    ));
    if pipe {
        // Each thread's count of tiles done, `block * BIG + tiles`, a cache line apart.
        c.line("tune_tt_slots = 16 * (long)omp_get_max_threads();");
        c.line("tune_tt_done = (long *)__builtin_malloc(sizeof(long) * tune_tt_slots);");
        c.line("for (tune_tt_e = 0; tune_tt_e < tune_tt_slots; tune_tt_e++) tune_tt_done[tune_tt_e] = -1;");
    }
    if par {
        c.pragma("#pragma omp parallel");
    }
    c.open("");
    c.line("long tune_tt_tb, tune_tt_n, tune_tt_b, tune_tt_q, tune_tt_x, tune_tt_r0, tune_tt_r1;");
    if pipe {
        c.line("long tune_tt_k, tune_tt_me, tune_tt_team, tune_tt_need;");
        c.line("extern int omp_get_thread_num(void);");
        c.line("extern int omp_get_num_threads(void);");
    }
    c.line(&format!("{} {};", l.var_dtype.c_name(), l.var));
    if pipe {
        c.line("tune_tt_me = omp_get_thread_num();");
        c.line("tune_tt_team = omp_get_num_threads();");
        c.open(&format!(
            "for (tune_tt_k = tune_tt_me; tune_tt_t0 + tune_tt_k * {d} < tune_tt_t1; tune_tt_k += tune_tt_team)"
        ));
        c.line(&format!("tune_tt_tb = tune_tt_t0 + tune_tt_k * {d};"));
    } else {
        c.open(&format!(
            "for (tune_tt_tb = tune_tt_t0; tune_tt_tb < tune_tt_t1; tune_tt_tb += {d})"
        ));
    }
    c.line(&format!(
        "tune_tt_n = tune_tt_t1 - tune_tt_tb < {d} ? tune_tt_t1 - tune_tt_tb : {d};"
    ));
    c.open(&format!(
        "for (tune_tt_b = tune_tt_b0; tune_tt_b * {w} - {r} * (tune_tt_n * {n} - 1) < tune_tt_hi; tune_tt_b++)"
    ));
    if pipe {
        c.open("if (tune_tt_k > 0)");
        c.line(&format!(
            "tune_tt_need = (tune_tt_k - 1) * {BIG} + (tune_tt_b - tune_tt_b0) + {ahead} + 1;"
        ));
        c.line(
            "while (__atomic_load_n(&tune_tt_done[16 * ((tune_tt_k - 1) % tune_tt_team)], \
             __ATOMIC_ACQUIRE) < tune_tt_need) ;",
        );
        c.close();
    }
    c.open("for (tune_tt_q = 0; tune_tt_q < tune_tt_n; tune_tt_q++)");
    c.line(&format!("{} = tune_tt_tb + tune_tt_q;", l.var));
    // Every loop inside declares its variable: the team's threads each have their own,
    // and the variables outside keep their values until the final ones below.
    let declared = |node: &Node| {
        let mut node = node.clone();
        crate::program::for_each_loop_mut(std::slice::from_mut(&mut node), &mut |x| {
            x.declares_var = true
        });
        node
    };
    // Inside the tiles, loops print as the sweeps wrote them (no prefix of the caller's).
    let inner = PrintOptions {
        declare_loop_vars: false,
        loop_prefix: &|_| None,
        annotate: opts.annotate,
        c89: opts.c89,
        access: opts.access,
    };
    for (k, (node, row, point)) in sweeps.iter().enumerate() {
        c.line(&format!("/* sweep {k} */"));
        c.line(&format!(
            "tune_tt_x = tune_tt_b * {w} - {r} * (tune_tt_q * {n} + {k});"
        ));
        match row {
            Some(x) => {
                c.line(&format!(
                    "tune_tt_r0 = {a} > tune_tt_x ? {a} : tune_tt_x;",
                    a = lo(x)
                ));
                c.line(&format!(
                    "tune_tt_r1 = {b} < tune_tt_x + {w} ? {b} : tune_tt_x + {w};",
                    b = hi(x)
                ));
                c.open("if (tune_tt_r0 < tune_tt_r1)");
                c.line(&format!("{} {};", x.var_dtype.c_name(), x.var));
                let mut body = (*x).clone();
                body.declares_var = false;
                body.init = Expr::Var("tune_tt_r0".into());
                body.cmp = LoopCmp::Lt;
                body.bound = Expr::Var("tune_tt_r1".into());
                let mut node = declared(&Node::Loop(body));
                let mut single = false;
                if let Node::Loop(b) = &mut node {
                    b.declares_var = false;
                    if shared && x.kind == LoopKind::Map {
                        // The rows shared by the team, vectorized too where the loop
                        // was (`omp for simd`); an unrolling gives way.
                        let simd = b.directives.iter().find_map(|d| match d {
                            Directive::OmpSimd { simdlen, .. } => Some(*simdlen),
                            _ => None,
                        });
                        b.directives.clear();
                        c.pragma(&match simd {
                            None => "#pragma omp for schedule(static)".to_string(),
                            Some(None) => "#pragma omp for simd schedule(static)".to_string(),
                            Some(Some(w)) => {
                                format!("#pragma omp for simd simdlen({w}) schedule(static)")
                            }
                        });
                    } else if shared {
                        c.pragma("#pragma omp single");
                        c.open("");
                        single = true;
                    }
                }
                print::node(&node, &inner, c.depth, &mut c.out);
                if single {
                    c.close();
                }
                c.close();
            }
            None => {
                c.open(&format!(
                    "if (tune_tt_x <= {p} && {p} < tune_tt_x + {w})",
                    p = point
                ));
                if shared {
                    c.pragma("#pragma omp single");
                }
                c.open("");
                print::node(&declared(node), &inner, c.depth, &mut c.out);
                c.close();
                c.close();
            }
        }
    }
    c.close(); // q
    if pipe {
        c.line(&format!(
            "__atomic_store_n(&tune_tt_done[16 * tune_tt_me], tune_tt_k * {BIG} + (tune_tt_b - tune_tt_b0) + 1, __ATOMIC_RELEASE);"
        ));
    }
    c.close(); // b
    if pipe {
        c.line(&format!(
            "__atomic_store_n(&tune_tt_done[16 * tune_tt_me], tune_tt_k * {BIG} + {BIG} - 1, __ATOMIC_RELEASE);"
        ));
    }
    c.close(); // tb
    c.close(); // the team
    if pipe {
        c.line("__builtin_free(tune_tt_done);");
    }
    // Loop variables declared outside end as the loops would leave them: the time
    // loop's, then each inner loop's as the last step leaves it.
    if !(l.declares_var || opts.declare_loop_vars) {
        c.line(&format!(
            "{} = tune_tt_t0 < tune_tt_t1 ? tune_tt_t1 : tune_tt_t0;",
            l.var
        ));
    }
    final_values(
        &l.body,
        &mut vec!["tune_tt_t0 < tune_tt_t1".to_string()],
        opts,
        &mut c,
    );
    c.close();
    out.push_str(&c.out);
}

/// `x = lo < hi ? hi : lo` for every loop in `body` that declares no variable, guarded
/// by its enclosing loops having run.
fn final_values(body: &[Node], guard: &mut Vec<String>, opts: &PrintOptions, c: &mut Text) {
    for n in body {
        match n {
            Node::Loop(x) => {
                if !(x.declares_var || opts.declare_loop_vars) {
                    c.line(&format!(
                        "if ({}) {} = {} < {} ? {} : {};",
                        guard.join(" && "),
                        x.var,
                        lo(x),
                        hi(x),
                        hi(x),
                        lo(x)
                    ));
                }
                guard.push(format!("{} < {}", lo(x), hi(x)));
                final_values(&x.body, guard, opts, c);
                guard.pop();
            }
            Node::Block(b) => final_values(b, guard, opts, c),
            _ => {}
        }
    }
}

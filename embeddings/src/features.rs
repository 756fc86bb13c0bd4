//! Features of a loop nest, in three groups (see `FEATURES.md` beside this crate for the
//! table of every column):
//!
//! - **static**: one row per loop (tree edges kept), one row per array access (with
//!   the coefficients of its subscripts over the enclosing loop variables), and a
//!   nest-level row (operation histogram, dtypes, reductions, sizes);
//! - **performance**: from the profiling pass (time per iteration, GFLOP/s, GB/s,
//!   roofline position, modelled cache miss ratios, hardware counter ratios), each with
//!   an availability flag (a mask: 1 = measured or modelled, 0 = unavailable);
//! - **machine**: from `tune machine` (peaks, bandwidths, cache sizes, threads).
//!
//! Raw values are put on comparable scales here (logarithms, ratios, small counts
//! divided by a typical maximum); [`Normalizer`] then standardizes every column with the
//! statistics of a training set. Bump [`FEATURE_VERSION`] whenever a column changes.

use ir::canonical::roles;
use ir::codegen::Nest;
use ir::counts::NestCounts;
use ir::interp::Env;
use ir::program::{AssignOp, BinOp, DType, Expr, Loop, LoopKind, Node, Program};
use profiling::cachemodel::CacheModel;
use profiling::cutout::CounterReading;
use profiling::machine::MachineInfo;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Version of the feature layout; checkpoints and databases record it.
pub const FEATURE_VERSION: u32 = 4;
pub const LOOP_DIM: usize = 16;
pub const ACCESS_DIM: usize = 20;
pub const GLOBAL_DIM: usize = 16;
pub const PERF_DIM: usize = 12;
/// The performance columns read from hardware counters (instructions per cycle, cache
/// and branch miss ratios): set only where a PMU answered.
pub const COUNTER_COLUMNS: std::ops::Range<usize> = 9..12;
pub const MACHINE_DIM: usize = 8;

/// Every feature of one nest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestFeatures {
    pub version: u32,
    pub loops: Vec<Vec<f32>>,
    /// Index (into `loops`) of each loop's enclosing loop.
    pub loop_parent: Vec<Option<usize>>,
    pub accesses: Vec<Vec<f32>>,
    /// Index (into `loops`) of each access's innermost enclosing loop.
    pub access_loop: Vec<usize>,
    pub global: Vec<f32>,
    pub perf: Vec<f32>,
    pub perf_mask: Vec<f32>,
    pub machine: Vec<f32>,
}

/// Features of a one-loop, one-access nest with no performance or machine group (for
/// tests).
#[cfg(test)]
pub(crate) fn one_loop_nest() -> NestFeatures {
    NestFeatures {
        version: FEATURE_VERSION,
        loops: vec![vec![0.5; LOOP_DIM]],
        loop_parent: vec![None],
        accesses: vec![vec![0.25; ACCESS_DIM]],
        access_loop: vec![0],
        global: vec![0.0; GLOBAL_DIM],
        perf: vec![0.0; PERF_DIM],
        perf_mask: vec![0.0; PERF_DIM],
        machine: vec![0.0; MACHINE_DIM],
    }
}

impl NestFeatures {
    /// Whether any hardware-counter column ([`COUNTER_COLUMNS`]) was measured.
    pub fn has_counters(&self) -> bool {
        self.perf_mask
            .get(COUNTER_COLUMNS)
            .is_some_and(|m| m.iter().any(|&x| x > 0.0))
    }

    /// The same features as a machine without a PMU would give: the hardware-counter
    /// columns unavailable (value and mask 0), everything else unchanged.
    pub fn without_counters(&self) -> NestFeatures {
        let mut f = self.clone();
        for column in [&mut f.perf, &mut f.perf_mask] {
            if let Some(c) = column.get_mut(COUNTER_COLUMNS) {
                c.fill(0.0);
            }
        }
        f
    }

    /// These features with the hardware-counter columns of `from` (value and mask), for
    /// features extracted again where the counters cannot be read again.
    pub fn with_counters_of(mut self, from: &NestFeatures) -> NestFeatures {
        for (to, from) in [
            (&mut self.perf, &from.perf),
            (&mut self.perf_mask, &from.perf_mask),
        ] {
            if let (Some(to), Some(from)) = (to.get_mut(COUNTER_COLUMNS), from.get(COUNTER_COLUMNS))
            {
                to.copy_from_slice(from);
            }
        }
        self
    }

    /// A flat vector of every feature (fixed length: loop and access rows pooled by
    /// mean and max): the "raw feature distance" baseline of retrieval.
    pub fn flat(&self) -> Vec<f32> {
        let mut v = Vec::new();
        for (rows, dim) in [(&self.loops, LOOP_DIM), (&self.accesses, ACCESS_DIM)] {
            let n = rows.len().max(1) as f32;
            let mut mean = vec![0.0; dim];
            let mut max = vec![f32::MIN; dim];
            for r in rows.iter() {
                for (k, x) in r.iter().enumerate() {
                    mean[k] += x / n;
                    max[k] = max[k].max(*x);
                }
            }
            max.iter_mut().for_each(|m| {
                if *m == f32::MIN {
                    *m = 0.0
                }
            });
            v.extend(mean);
            v.extend(max);
        }
        v.extend(&self.global);
        v.extend(self.perf.iter().zip(&self.perf_mask).map(|(x, m)| x * m));
        v.extend(&self.machine);
        v
    }
}

/// Values of integer parameters and control variables (from the nest's saved data).
fn eval(e: &Expr, env: &HashMap<String, i64>) -> Option<i64> {
    match e {
        Expr::Int { value, .. } => Some(*value),
        Expr::Var(v) => env.get(v).copied(),
        Expr::Unary {
            op: ir::program::UnOp::Neg,
            arg,
        } => eval(arg, env)?.checked_neg(),
        Expr::Cast { arg, .. } => eval(arg, env),
        Expr::Binary { op, lhs, rhs } => {
            let (a, b) = (eval(lhs, env)?, eval(rhs, env)?);
            // Checked: bounds come from the user's source and data; an overflow is
            // "not known", never a panic.
            Some(match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                BinOp::Div => a.checked_div(b)?,
                BinOp::Mod => a.checked_rem(b)?,
                BinOp::Lt => (a < b) as i64,
                BinOp::Le => (a <= b) as i64,
                BinOp::Gt => (a > b) as i64,
                BinOp::Ge => (a >= b) as i64,
                BinOp::Eq => (a == b) as i64,
                BinOp::Ne => (a != b) as i64,
                _ => return None,
            })
        }
        Expr::Ternary { cond, then, other } => {
            if eval(cond, env)? != 0 {
                eval(then, env)
            } else {
                eval(other, env)
            }
        }
        _ => None,
    }
}

fn log2p(x: f64) -> f32 {
    (1.0 + x.max(0.0)).log2() as f32
}

/// Coefficient of `var` in an affine subscript (0 when absent or not affine).
fn coef(e: &Expr, var: &str) -> Option<i64> {
    ir::affine::affine_of(e, &|_| true).map(|a| a.coeff(var))
}

struct Walk<'a> {
    loops: Vec<&'a Loop>,
    parent: Vec<Option<usize>>,
    depth: Vec<usize>,
    /// (access, is write, is read, statement is a reduction into it, enclosing loops)
    accesses: Vec<(&'a Expr, bool, bool, bool, Vec<usize>)>,
    ops: [u32; 6],
    statements: usize,
    dtypes: [u32; 3],
}

fn walk<'a>(root: &'a Loop, program: &Program, region: usize) -> Walk<'a> {
    let types = ir::counts::Types::new(program, region);
    let mut w = Walk {
        loops: Vec::new(),
        parent: Vec::new(),
        depth: Vec::new(),
        accesses: Vec::new(),
        ops: [0; 6],
        statements: 0,
        dtypes: [0; 3],
    };
    fn go<'a>(
        nodes: &'a [Node],
        stack: &mut Vec<usize>,
        w: &mut Walk<'a>,
        types: &ir::counts::Types,
    ) {
        for n in nodes {
            match n {
                Node::Loop(l) => {
                    let k = w.loops.len();
                    w.loops.push(l);
                    w.parent.push(stack.last().copied());
                    w.depth.push(stack.len());
                    stack.push(k);
                    go(&l.body, stack, w, types);
                    stack.pop();
                }
                Node::If(i) => {
                    w.ops[4] += 1;
                    go(&i.then_body, stack, w, types);
                    go(&i.else_body, stack, w, types);
                }
                Node::Block(b) => go(b, stack, w, types),
                Node::Decl(_) | Node::Opaque(_) => {}
                Node::Assign(a) => {
                    w.statements += 1;
                    let dt = types.of(&a.target);
                    w.dtypes[match dt {
                        DType::F64 => 0,
                        DType::F32 => 1,
                        _ => 2,
                    }] += 1;
                    match a.op {
                        AssignOp::Add | AssignOp::Sub => w.ops[0] += 1,
                        AssignOp::Mul => w.ops[1] += 1,
                        AssignOp::Div => w.ops[2] += 1,
                        AssignOp::Set => {}
                    }
                    a.value.walk(&mut |e| match e {
                        Expr::Binary { op, .. } => match op {
                            BinOp::Add | BinOp::Sub => w.ops[0] += 1,
                            BinOp::Mul => w.ops[1] += 1,
                            BinOp::Div | BinOp::Mod => w.ops[2] += 1,
                            _ => w.ops[4] += 1,
                        },
                        Expr::Call { .. } => w.ops[3] += 1,
                        Expr::Ternary { .. } => w.ops[4] += 1,
                        Expr::Cast { .. } => w.ops[5] += 1,
                        _ => {}
                    });
                    let reduction = a.op != AssignOp::Set
                        || matches!(&a.value, Expr::Binary { lhs, .. } if **lhs == a.target);
                    if matches!(a.target, Expr::Access { .. }) {
                        w.accesses.push((
                            &a.target,
                            true,
                            a.op != AssignOp::Set,
                            reduction,
                            stack.clone(),
                        ));
                    }
                    a.value.walk(&mut |e| {
                        if matches!(e, Expr::Access { .. }) {
                            w.accesses.push((e, false, true, false, stack.clone()));
                        }
                    });
                }
            }
        }
    }
    w.loops.push(root);
    w.parent.push(None);
    w.depth.push(0);
    go(&root.body, &mut vec![0], &mut w, &types);
    w
}

/// Static features of the nest rooted at `root`; `params` are the integer inputs of
/// one nest version (sizes, control variables), used for trip counts and strides.
pub fn static_features(
    program: &Program,
    nest: &Nest,
    root: &Loop,
    params: &Env,
    counts: Option<&NestCounts>,
) -> NestFeatures {
    let w = walk(root, program, nest.region);
    let r = roles(root);
    // Trip counts with enclosing variables at mid-range.
    let mut env: HashMap<String, i64> = params.ints.clone();
    let mut trips = Vec::new();
    for (k, l) in w.loops.iter().enumerate() {
        let mut e = env.clone();
        let mut p = w.parent[k];
        while let Some(q) = p {
            let lq = w.loops[q];
            if let (Some(a), Some(b)) = (eval(&lq.init, &e), eval(&lq.bound, &e)) {
                e.insert(lq.var.clone(), (a + b) / 2);
            }
            p = w.parent[q];
        }
        trips.push(ir::program::trip_count(l, &|x| eval(x, &e)));
        if let (Some(a), Some(b)) = (eval(&l.init, &e), eval(&l.bound, &e)) {
            env.entry(l.var.clone()).or_insert((a + b) / 2);
        }
    }
    let vars: Vec<&str> = w.loops.iter().map(|l| l.var.as_str()).collect();
    let loops: Vec<Vec<f32>> = w
        .loops
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let role = &r[k];
            let triangular = vars
                .iter()
                .any(|v| *v != l.var && (l.init.mentions(v) || l.bound.mentions(v)));
            let direct_stmts = l
                .body
                .iter()
                .filter(|n| matches!(n, Node::Assign(_)))
                .count();
            let child_loops = l.body.iter().filter(|n| matches!(n, Node::Loop(_))).count();
            vec![
                w.depth[k] as f32 / 4.0,
                (l.kind == LoopKind::Map) as u8 as f32,
                (l.kind == LoopKind::Reduction) as u8 as f32,
                (l.kind == LoopKind::Loop) as u8 as f32,
                trips[k].map_or(0.0, |t| log2p(t as f64) / 12.0),
                trips[k].is_some() as u8 as f32,
                role.innermost as u8 as f32,
                triangular as u8 as f32,
                (role.out_dim == Some(0)) as u8 as f32,
                (role.out_dim == Some(1)) as u8 as f32,
                role.out_dim.is_some_and(|d| d >= 2) as u8 as f32,
                role.out_dim.is_none() as u8 as f32,
                role.unit_stride as u8 as f32,
                role.tile as u8 as f32,
                direct_stmts as f32 / 4.0,
                child_loops as f32 / 4.0,
            ]
        })
        .collect();
    // The primary output: the array written by the most statements.
    let mut writes: HashMap<&str, usize> = HashMap::new();
    for (e, write, ..) in &w.accesses {
        if let (true, Expr::Access { array, .. }) = (write, e) {
            *writes.entry(array.as_str()).or_default() += 1;
        }
    }
    let primary = writes
        .iter()
        .max_by_key(|(name, n)| (**n, std::cmp::Reverse(*name)))
        .map(|(name, _)| *name);
    let mut accesses = Vec::new();
    let mut access_loop = Vec::new();
    for (e, write, read, reduction, stack) in &w.accesses {
        let Expr::Access { array, indices } = e else {
            continue;
        };
        let arr = program.array(array);
        let dtype = arr.map_or(DType::F64, |a| a.dtype);
        let extents: Vec<i64> = arr
            .map(|a| {
                a.dims
                    .iter()
                    .zip(&a.extents)
                    .map(|(d, x)| x.or_else(|| eval(d, &params.ints)).unwrap_or(1024))
                    .collect()
            })
            .unwrap_or_default();
        let affine = indices.iter().all(|i| coef(i, "").is_some());
        let mut row = vec![
            *write as u8 as f32,
            *read as u8 as f32,
            dtype.is_float() as u8 as f32,
            dtype.size() as f32 / 8.0,
            indices.len() as f32 / 4.0,
        ];
        // Coefficients of the three innermost enclosing loops: in the last subscript,
        // the one before, and all others (absolute sum).
        for level in 0..3 {
            let var = stack
                .len()
                .checked_sub(1 + level)
                .map(|p| w.loops[stack[p]].var.as_str());
            let c = |i: Option<&Expr>| -> f32 {
                match (var, i) {
                    (Some(v), Some(e)) => coef(e, v).unwrap_or(0).clamp(-4, 4) as f32 / 4.0,
                    _ => 0.0,
                }
            };
            let n = indices.len();
            row.push(c(n.checked_sub(1).and_then(|k| indices.get(k))));
            row.push(c(n.checked_sub(2).and_then(|k| indices.get(k))));
            let others: i64 = match var {
                Some(v) if n > 2 => indices[..n - 2]
                    .iter()
                    .map(|e| coef(e, v).unwrap_or(0).abs())
                    .sum(),
                _ => 0,
            };
            row.push(others.min(4) as f32 / 4.0);
        }
        // Stride in elements along the innermost enclosing loop.
        let inner = stack.last().map(|&p| w.loops[p].var.as_str());
        let mut stride: i64 = 0;
        if let Some(v) = inner {
            let mut scale: i64 = 1;
            for (d, e) in indices.iter().enumerate().rev() {
                stride = stride.saturating_add(coef(e, v).unwrap_or(0).saturating_mul(scale));
                scale = scale.saturating_mul(extents.get(d).copied().unwrap_or(1024).max(1));
            }
        }
        row.push((stride == 0) as u8 as f32);
        row.push(log2p(stride.unsigned_abs() as f64) / 16.0);
        row.push((!affine) as u8 as f32);
        row.push(*reduction as u8 as f32);
        row.push((Some(array.as_str()) == primary) as u8 as f32);
        row.push(stack.len() as f32 / 4.0);
        debug_assert_eq!(row.len(), ACCESS_DIM);
        accesses.push(row);
        access_loop.push(*stack.last().unwrap_or(&0));
    }
    let nstmt = w.statements.max(1) as f32;
    let ntypes = w.dtypes.iter().sum::<u32>().max(1) as f32;
    let max_depth = w.depth.iter().max().copied().unwrap_or(0) + 1;
    let arrays: std::collections::BTreeSet<&str> = w
        .accesses
        .iter()
        .filter_map(|(e, ..)| match e {
            Expr::Access { array, .. } => Some(array.as_str()),
            _ => None,
        })
        .collect();
    let reductions = w
        .loops
        .iter()
        .filter(|l| l.kind == LoopKind::Reduction)
        .count();
    let (flops, footprint, iterations) = counts.map_or((0.0, 0.0, 0.0), |c| {
        (
            c.flops as f64,
            c.bytes_compulsory as f64,
            c.iterations as f64,
        )
    });
    let global = vec![
        w.loops.len() as f32 / 8.0,
        max_depth as f32 / 4.0,
        w.statements as f32 / 8.0,
        arrays.len() as f32 / 8.0,
        w.dtypes[0] as f32 / ntypes,
        w.dtypes[1] as f32 / ntypes,
        w.dtypes[2] as f32 / ntypes,
        w.ops[0] as f32 / nstmt,
        w.ops[1] as f32 / nstmt,
        w.ops[2] as f32 / nstmt,
        w.ops[3] as f32 / nstmt,
        w.ops[4] as f32 / nstmt,
        reductions as f32 / 4.0,
        if iterations > 0.0 {
            log2p(flops / iterations)
        } else {
            0.0
        },
        ((1.0 + flops).log10() / 10.0) as f32,
        ((1.0 + footprint).log10() / 10.0) as f32,
    ];
    debug_assert_eq!(global.len(), GLOBAL_DIM);
    NestFeatures {
        version: FEATURE_VERSION,
        loops,
        loop_parent: w.parent,
        accesses,
        access_loop,
        global,
        perf: vec![0.0; PERF_DIM],
        perf_mask: vec![0.0; PERF_DIM],
        machine: vec![0.0; MACHINE_DIM],
    }
}

/// What the profiling pass measured of one nest version.
#[derive(Debug, Clone, Default)]
pub struct Measured<'a> {
    /// Median seconds per run of the nest.
    pub time_s: f64,
    pub counts: Option<&'a NestCounts>,
    pub cache: Option<&'a CacheModel>,
    pub counters: &'a [CounterReading],
}

/// Fills the performance and machine groups.
pub fn add_performance(f: &mut NestFeatures, m: &Measured, machine: Option<&MachineInfo>) {
    let mut perf = vec![0.0f32; PERF_DIM];
    let mut mask = vec![0.0f32; PERF_DIM];
    let mut set = |k: usize, v: f64| {
        if v.is_finite() {
            perf[k] = v as f32;
            mask[k] = 1.0;
        }
    };
    let t = m.time_s;
    let peak = machine.map(|x| x.best_peak_1());
    let bw = machine.map(|x| x.bandwidth_1.triad);
    if let (Some(c), true) = (m.counts, t > 0.0) {
        let it = c.iterations.max(1) as f64;
        set(0, (t / it * 1e9).log10());
        let gflops = c.flops as f64 / t / 1e9;
        let gbs = c.bytes_compulsory as f64 / t / 1e9;
        set(1, (gflops + 1e-6).log10());
        set(2, (gbs + 1e-6).log10());
        if let Some(p) = peak.filter(|p| *p > 0.0) {
            set(3, gflops / p);
        }
        if let Some(b) = bw.filter(|b| *b > 0.0) {
            set(4, gbs / b);
        }
        if let (Some(p), Some(b)) = (peak, bw) {
            let ridge = p / b.max(1e-9);
            set(5, ((c.operational_intensity + 1e-6) / ridge).log2());
        }
    } else if t > 0.0 {
        set(0, (t * 1e9).log10());
    }
    if let Some(cm) = m.cache {
        for (k, level) in cm.levels.iter().take(3).enumerate() {
            set(6 + k, level.miss_ratio);
        }
    }
    let counter = |name: &str| -> Option<f64> {
        m.counters
            .iter()
            .find(|c| c.name == name && c.available)
            .and_then(|c| c.total)
            .map(|x| x as f64)
    };
    if let (Some(i), Some(c)) = (counter("instructions"), counter("cycles")) {
        set(9, i / c.max(1.0));
    }
    if let (Some(m), Some(r)) = (counter("cache-misses"), counter("cache-references")) {
        set(10, m / r.max(1.0));
    }
    if let (Some(m), Some(b)) = (counter("branch-misses"), counter("branches")) {
        set(11, m / b.max(1.0));
    }
    f.perf = perf;
    f.perf_mask = mask;
    if let Some(x) = machine {
        f.machine = machine_features(x);
    }
}

/// The machine group.
pub fn machine_features(m: &MachineInfo) -> Vec<f32> {
    let sizes = m.data_cache_sizes();
    let kib = |k: usize| sizes.get(k).map_or(0.0, |s| log2p(*s as f64 / 1024.0));
    vec![
        (m.best_peak_1().max(1e-3)).log10() as f32,
        (m.best_peak_all().max(1e-3)).log10() as f32,
        (m.bandwidth_1.triad.max(1e-3)).log10() as f32,
        (m.bandwidth_all.triad.max(1e-3)).log10() as f32,
        kib(0) / 8.0,
        kib(1) / 12.0,
        kib(2) / 16.0,
        m.threads as f32 / 16.0,
    ]
}

/// Per-column standardization, fitted on a training set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Normalizer {
    pub version: u32,
    pub loops: Column,
    pub accesses: Column,
    pub global: Column,
    pub perf: Column,
    pub machine: Column,
}

/// Mean and standard deviation per column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub mean: Vec<f32>,
    pub std: Vec<f32>,
}

impl Column {
    fn fit<'a>(rows: impl Iterator<Item = (&'a [f32], Option<&'a [f32]>)>, dim: usize) -> Column {
        let mut n = vec![0f64; dim];
        let mut s = vec![0f64; dim];
        let mut ss = vec![0f64; dim];
        for (r, mask) in rows {
            for k in 0..dim {
                if mask.is_some_and(|m| m[k] == 0.0) {
                    continue;
                }
                let x = r[k] as f64;
                n[k] += 1.0;
                s[k] += x;
                ss[k] += x * x;
            }
        }
        let mean: Vec<f32> = (0..dim)
            .map(|k| {
                if n[k] > 0.0 {
                    (s[k] / n[k]) as f32
                } else {
                    0.0
                }
            })
            .collect();
        let std = (0..dim)
            .map(|k| {
                if n[k] < 2.0 {
                    return 1.0;
                }
                let m = s[k] / n[k];
                let v = (ss[k] / n[k] - m * m).max(0.0).sqrt() as f32;
                if v < 1e-6 {
                    1.0
                } else {
                    v
                }
            })
            .collect();
        Column { mean, std }
    }

    /// Fits on plain rows (no mask).
    pub fn fit_rows(rows: &[Vec<f32>], dim: usize) -> Column {
        Column::fit(rows.iter().map(|r| (r.as_slice(), None)), dim)
    }

    /// Standardizes one row.
    pub fn apply_row(&self, r: &[f32]) -> Vec<f32> {
        self.apply(r)
    }

    fn apply(&self, r: &[f32]) -> Vec<f32> {
        r.iter()
            .zip(self.mean.iter().zip(&self.std))
            .map(|(x, (m, s))| (x - m) / s)
            .collect()
    }
}

impl Normalizer {
    pub fn fit(all: &[&NestFeatures]) -> Normalizer {
        Normalizer {
            version: FEATURE_VERSION,
            loops: Column::fit(
                all.iter()
                    .flat_map(|f| f.loops.iter().map(|r| (r.as_slice(), None))),
                LOOP_DIM,
            ),
            accesses: Column::fit(
                all.iter()
                    .flat_map(|f| f.accesses.iter().map(|r| (r.as_slice(), None))),
                ACCESS_DIM,
            ),
            global: Column::fit(all.iter().map(|f| (f.global.as_slice(), None)), GLOBAL_DIM),
            perf: Column::fit(
                all.iter()
                    .map(|f| (f.perf.as_slice(), Some(f.perf_mask.as_slice()))),
                PERF_DIM,
            ),
            machine: Column::fit(
                all.iter().map(|f| (f.machine.as_slice(), None)),
                MACHINE_DIM,
            ),
        }
    }

    /// The features standardized (missing performance values stay 0, masked).
    pub fn apply(&self, f: &NestFeatures) -> NestFeatures {
        let mut perf = self.perf.apply(&f.perf);
        for (p, m) in perf.iter_mut().zip(&f.perf_mask) {
            if *m == 0.0 {
                *p = 0.0;
            }
        }
        NestFeatures {
            version: f.version,
            loops: f.loops.iter().map(|r| self.loops.apply(r)).collect(),
            loop_parent: f.loop_parent.clone(),
            accesses: f.accesses.iter().map(|r| self.accesses.apply(r)).collect(),
            access_loop: f.access_loop.clone(),
            global: self.global.apply(&f.global),
            perf,
            perf_mask: f.perf_mask.clone(),
            machine: self.machine.apply(&f.machine),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiling::cutout::CounterKind;

    fn reading(name: &str, total: u64) -> CounterReading {
        CounterReading {
            name: name.into(),
            kind: CounterKind::Hardware,
            available: true,
            total: Some(total),
            per_rep: Some(total as f64),
            reason: None,
        }
    }

    #[test]
    fn hardware_counters_fill_their_columns_and_can_be_masked_out() {
        let counters = [
            reading("cycles", 1000),
            reading("instructions", 2500),
            reading("cache-references", 400),
            reading("cache-misses", 100),
            reading("branches", 50),
            reading("branch-misses", 5),
        ];
        let mut f = one_loop_nest();
        let measured = |counters| Measured {
            time_s: 1e-3,
            counts: None,
            cache: None,
            counters,
        };
        add_performance(&mut f, &measured(&counters), None);
        assert!(f.has_counters());
        assert_eq!(&f.perf[COUNTER_COLUMNS], &[2.5, 0.25, 0.1]);
        assert_eq!(&f.perf_mask[COUNTER_COLUMNS], &[1.0; 3]);
        // Time per run (no counts): log10 of 1e6 ns.
        assert_eq!((f.perf[0], f.perf_mask[0]), (6.0, 1.0));
        // As a machine without a PMU gives them: the same but those three columns.
        let plain = f.without_counters();
        assert!(!plain.has_counters());
        assert_eq!(&plain.perf_mask[COUNTER_COLUMNS], &[0.0; 3]);
        assert_eq!(&plain.perf[COUNTER_COLUMNS], &[0.0; 3]);
        assert_eq!(plain.perf[0], 6.0);
        let mut g = one_loop_nest();
        add_performance(&mut g, &measured(&[]), None);
        assert_eq!(g, plain);
        // An unavailable reading is no reading (never a zero).
        let mut h = one_loop_nest();
        let mut refused = counters.clone();
        refused[0].available = false;
        add_performance(&mut h, &measured(&refused), None);
        assert_eq!(&h.perf_mask[COUNTER_COLUMNS], &[0.0, 1.0, 1.0]);
        // Features extracted again keep the counters they were built with.
        assert_eq!(plain.with_counters_of(&f), f);
    }
}

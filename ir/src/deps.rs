//! Dependence analysis.
//!
//! For every ordered pair of accesses to the same array (one of them a write) the
//! analysis enumerates the direction vectors over their common loops for which the
//! dependence system — iteration domains, subscript equalities, `if` conditions and the
//! direction constraints — has a solution. Feasibility is decided by Fourier–Motzkin
//! elimination with integer tightening and GCD tests on equalities: exact on uniform
//! dependences, conservative (may report a dependence that does not exist) otherwise,
//! never the other way round. Anything it cannot model (non-affine subscripts or
//! bounds) loses its constraint, which can only add dependences.

use crate::affine::{affine_of, condition_constraints, loop_constraints, Affine, Constraint};
use crate::program::{
    for_each_loop_mut, AssignOp, BinOp, Expr, Loop, LoopKind, Node, Program, Region,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Direction of a dependence at one loop level, in execution order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dir {
    /// The source runs in an earlier iteration of this loop than the sink.
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "=")]
    Eq,
    /// The source runs in a later iteration (possible only below an outer `<`).
    #[serde(rename = ">")]
    Gt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DepKind {
    Flow,
    Anti,
    Output,
}

/// Accumulation operator of a reduction statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedOp {
    Sum,
    Product,
    /// `x = fmax(x, e)`, `x = x > e ? x : e` and their mirror images.
    Max,
    Min,
}

/// One memory access of the region.
#[derive(Debug, Clone)]
pub struct AccessRef {
    /// Statement id (`Assign::id`), or `usize::MAX` for reads in bounds and conditions.
    pub stmt: usize,
    pub array: String,
    pub write: bool,
    /// Affine form of each subscript; `None` where it is not affine.
    pub indices: Vec<Option<Affine>>,
    /// Enclosing loops, outermost first.
    pub loops: Vec<usize>,
    /// Position in execution order within one iteration of the innermost loop.
    pub order: usize,
    /// Part of a reduction statement (its target or the target's self-read).
    pub reduction: Option<RedOp>,
    /// Loops whose iterations each get a fresh copy of this (region-local) variable.
    pub private_in: Vec<usize>,
    /// Constraints from enclosing `if`s.
    conds: Vec<Constraint>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dependence {
    pub source: usize,
    pub sink: usize,
    pub array: String,
    pub kind: DepKind,
    /// Common loops of source and sink, outermost first.
    pub loops: Vec<usize>,
    pub directions: Vec<Dir>,
    /// Constant distance (in iterations, execution order) per level, where uniform.
    pub distance: Vec<Option<i64>>,
}

impl Dependence {
    /// The loop that carries this dependence (first non-`=` level), if any.
    pub fn carrier(&self) -> Option<usize> {
        self.directions
            .iter()
            .position(|d| *d != Dir::Eq)
            .map(|k| self.loops[k])
    }
}

/// The result of analysing one region.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub accesses: Vec<AccessRef>,
    pub deps: Vec<Dependence>,
    pub kinds: BTreeMap<usize, LoopKind>,
    /// Scalars each loop may privatize (written before read in every iteration).
    pub private_scalars: BTreeMap<usize, Vec<String>>,
    /// Arrays each loop may privatize (see [`crate::private_arrays`]).
    pub private_arrays: BTreeMap<usize, Vec<crate::private_arrays::PrivateArray>>,
}

/// Analyses every region and stores the loop verdicts in the program.
pub fn annotate(program: &mut Program) -> Vec<Analysis> {
    let analyses: Vec<Analysis> = program
        .regions
        .iter()
        .map(|r| analyze(program, r))
        .collect();
    for (region, a) in program.regions.iter_mut().zip(&analyses) {
        for_each_loop_mut(&mut region.body, &mut |l| {
            if let Some(k) = a.kinds.get(&l.id) {
                l.kind = *k;
            }
            l.private_arrays = a
                .private_arrays
                .get(&l.id)
                .map(|v| v.iter().map(|p| p.name.clone()).collect())
                .unwrap_or_default();
        });
    }
    analyses
}

struct Collector<'p> {
    program: &'p Program,
    written: BTreeSet<String>,
    loops: Vec<&'p Loop>,
    conds: Vec<Constraint>,
    /// Scopes of region-local declarations: name -> loops enclosing the declaration.
    scopes: Vec<HashMap<String, Vec<usize>>>,
    out: Vec<AccessRef>,
    order: usize,
}

impl<'p> Collector<'p> {
    fn is_symbol(&self, name: &str) -> bool {
        self.loops.iter().any(|l| l.var == name) || self.program.is_param(name)
    }

    fn private_in(&self, name: &str) -> Vec<usize> {
        for s in self.scopes.iter().rev() {
            if let Some(l) = s.get(name) {
                return l.clone();
            }
        }
        Vec::new()
    }

    fn push(
        &mut self,
        stmt: usize,
        array: &str,
        indices: &[Expr],
        write: bool,
        red: Option<RedOp>,
    ) {
        let is_sym = |n: &str| self.is_symbol(n);
        let idx = indices.iter().map(|e| affine_of(e, &is_sym)).collect();
        self.out.push(AccessRef {
            stmt,
            array: array.to_string(),
            write,
            indices: idx,
            loops: self.loops.iter().map(|l| l.id).collect(),
            order: self.order,
            reduction: red,
            private_in: self.private_in(array),
            conds: self.conds.clone(),
        });
        self.order += 1;
    }

    /// Records the reads in `e`, skipping the nodes at the addresses `skip` (a
    /// reduction's self-reads, recorded separately).
    fn reads(&mut self, stmt: usize, e: &Expr, skip: &[*const Expr]) {
        if skip.contains(&(e as *const Expr)) {
            return;
        }
        match e {
            Expr::Var(v) => {
                if self.written.contains(v) && !self.loops.iter().any(|l| &l.var == v) {
                    self.push(stmt, v, &[], false, None);
                }
            }
            Expr::Access { array, indices } => {
                for i in indices {
                    self.reads(stmt, i, skip);
                }
                if self.written.contains(array) {
                    self.push(stmt, array, indices, false, None);
                }
            }
            Expr::Int { .. } | Expr::Float { .. } => {}
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => self.reads(stmt, arg, skip),
            Expr::Binary { lhs, rhs, .. } => {
                self.reads(stmt, lhs, skip);
                self.reads(stmt, rhs, skip);
            }
            Expr::Ternary { cond, then, other } => {
                self.reads(stmt, cond, skip);
                self.reads(stmt, then, skip);
                self.reads(stmt, other, skip);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| self.reads(stmt, a, skip)),
        }
    }

    fn target_parts(target: &Expr) -> (&str, &[Expr]) {
        match target {
            Expr::Var(v) => (v, &[]),
            Expr::Access { array, indices } => (array, indices),
            _ => ("", &[]),
        }
    }

    fn body(&mut self, nodes: &'p [Node]) {
        for n in nodes {
            match n {
                Node::Assign(a) => {
                    let (name, idx) = Self::target_parts(&a.target);
                    let red = reduction_of(a.op, &a.target, &a.value);
                    for i in idx {
                        self.reads(a.id, i, &[]);
                    }
                    match red {
                        Some((op, self_reads)) => {
                            self.reads(a.id, &a.value, &self_reads);
                            self.push(a.id, name, idx, false, Some(op));
                            self.push(a.id, name, idx, true, Some(op));
                        }
                        None => {
                            self.reads(a.id, &a.value, &[]);
                            if a.op != AssignOp::Set {
                                self.push(a.id, name, idx, false, None);
                            }
                            self.push(a.id, name, idx, true, None);
                        }
                    }
                }
                Node::Decl(d) => {
                    let enclosing: Vec<usize> = self.loops.iter().map(|l| l.id).collect();
                    self.scopes
                        .last_mut()
                        .expect("scope")
                        .insert(d.name.clone(), enclosing);
                    if let Some(init) = &d.init {
                        self.reads(usize::MAX, init, &[]);
                        self.push(usize::MAX, &d.name, &[], true, None);
                    }
                }
                Node::Block(b) => {
                    self.scopes.push(HashMap::new());
                    self.body(b);
                    self.scopes.pop();
                }
                // Its loops are sequential and never a nest (`analyze`): nothing here
                // is analysed across it.
                Node::Opaque(_) => {}
                Node::If(i) if let Some((a, op, self_read)) = guarded_extreme(i) => {
                    let (name, idx) = Self::target_parts(&a.target);
                    for ix in idx {
                        self.reads(a.id, ix, &[]);
                    }
                    self.reads(a.id, &i.cond, &[self_read]);
                    self.reads(a.id, &a.value, &[]);
                    self.push(a.id, name, idx, false, Some(op));
                    self.push(a.id, name, idx, true, Some(op));
                }
                Node::If(i) => {
                    self.reads(usize::MAX, &i.cond, &[]);
                    let saved = self.conds.len();
                    let is_sym = |n: &str| self.is_symbol(n);
                    let mut then_c = Vec::new();
                    condition_constraints(&i.cond, true, &is_sym, &mut then_c);
                    let mut else_c = Vec::new();
                    condition_constraints(&i.cond, false, &is_sym, &mut else_c);
                    self.conds.extend(then_c);
                    self.scopes.push(HashMap::new());
                    self.body(&i.then_body);
                    self.scopes.pop();
                    self.conds.truncate(saved);
                    self.conds.extend(else_c);
                    self.scopes.push(HashMap::new());
                    self.body(&i.else_body);
                    self.scopes.pop();
                    self.conds.truncate(saved);
                }
                Node::Loop(l) => {
                    self.reads(usize::MAX, &l.init, &[]);
                    self.reads(usize::MAX, &l.bound, &[]);
                    self.loops.push(l);
                    self.scopes.push(HashMap::new());
                    self.body(&l.body);
                    self.scopes.pop();
                    self.loops.pop();
                }
            }
        }
    }
}

/// Recognizes the reduction statement forms `x += e`, `x -= e`, `x *= e`, `x = x + e`,
/// `x = e + x`, `x = x - e`, `x = x * e`, `x = e * x`, and the maxima and minima
/// `x = fmax(x, e)` (`fmin`, `fmaxf`, `fminf`, either argument order) and
/// `x = (x > e) ? x : e` (any comparison, either side, either branch order: `MAX(x, e)`
/// of a macro). Returns the operator and the self-reads of `x` inside `value`. Other
/// reads of `x`'s array in `e` stay ordinary accesses, so the dependence test decides
/// whether they conflict.
fn reduction_of(op: AssignOp, target: &Expr, value: &Expr) -> Option<(RedOp, Vec<*const Expr>)> {
    if !matches!(target, Expr::Var(_) | Expr::Access { .. }) {
        return None;
    }
    match op {
        AssignOp::Add | AssignOp::Sub => Some((RedOp::Sum, Vec::new())),
        AssignOp::Mul => Some((RedOp::Product, Vec::new())),
        AssignOp::Div => None,
        AssignOp::Set => match value {
            Expr::Binary { op, lhs, rhs } => {
                let red = match op {
                    BinOp::Add | BinOp::Sub => RedOp::Sum,
                    BinOp::Mul => RedOp::Product,
                    _ => return None,
                };
                if **lhs == *target {
                    Some((red, vec![&**lhs as *const Expr]))
                } else if **rhs == *target && *op != BinOp::Sub {
                    Some((red, vec![&**rhs as *const Expr]))
                } else {
                    None
                }
            }
            Expr::Call { func, args } => {
                let red = match func.as_str() {
                    "fmax" | "fmaxf" => RedOp::Max,
                    "fmin" | "fminf" => RedOp::Min,
                    _ => return None,
                };
                let [a, b] = args.as_slice() else { return None };
                match (*a == *target, *b == *target) {
                    (true, false) => Some((red, vec![a as *const Expr])),
                    (false, true) => Some((red, vec![b as *const Expr])),
                    _ => None,
                }
            }
            Expr::Ternary { cond, then, other } => {
                let Expr::Binary { op, lhs, rhs } = &**cond else {
                    return None;
                };
                let greater = greater_than(*op)?;
                // `p > q ? p : q` is the larger, `p > q ? q : p` the smaller.
                let larger = if (&**then, &**other) == (&**lhs, &**rhs) {
                    greater
                } else if (&**then, &**other) == (&**rhs, &**lhs) {
                    !greater
                } else {
                    return None;
                };
                let red = if larger { RedOp::Max } else { RedOp::Min };
                let (x_cond, x_branch) = if **lhs == *target && **rhs != *target {
                    (&**lhs, if **then == *target { &**then } else { &**other })
                } else if **rhs == *target && **lhs != *target {
                    (&**rhs, if **then == *target { &**then } else { &**other })
                } else {
                    return None;
                };
                Some((red, vec![x_cond as *const Expr, x_branch as *const Expr]))
            }
            _ => None,
        },
    }
}

/// For an ordering comparison, whether it holds where its left side is the larger
/// (`>`, `>=`) or the smaller (`<`, `<=`).
fn greater_than(op: BinOp) -> Option<bool> {
    match op {
        BinOp::Gt | BinOp::Ge => Some(true),
        BinOp::Lt | BinOp::Le => Some(false),
        _ => None,
    }
}

/// `if (e > x) x = e;` (a maximum; `x < e` the same, `e < x` or `x > e` a minimum, `>=`
/// and `<=` alike) with no `else`: the assignment, its operator and the read of `x` in
/// the condition. Reads of `x` in `e` stay ordinary accesses.
fn guarded_extreme(
    i: &crate::program::If,
) -> Option<(&crate::program::Assign, RedOp, *const Expr)> {
    if !i.else_body.is_empty() {
        return None;
    }
    let [Node::Assign(a)] = i.then_body.as_slice() else {
        return None;
    };
    if a.op != AssignOp::Set || !matches!(a.target, Expr::Var(_) | Expr::Access { .. }) {
        return None;
    }
    let Expr::Binary { op, lhs, rhs } = &i.cond else {
        return None;
    };
    let greater = greater_than(*op)?;
    // `e > x`: x takes e where e is the larger; `x > e`: where e is the smaller.
    let (x, e, larger) = if **rhs == a.target && **lhs != a.target {
        (&**rhs, &**lhs, greater)
    } else if **lhs == a.target && **rhs != a.target {
        (&**lhs, &**rhs, !greater)
    } else {
        return None;
    };
    if *e != a.value {
        return None;
    }
    let op = if larger { RedOp::Max } else { RedOp::Min };
    Some((a, op, x as *const Expr))
}

/// Names a body assigns (scalars and arrays) or declares.
pub(crate) fn written_names(body: &[Node]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    crate::program::walk_nodes(body, &mut |n, _| match n {
        Node::Assign(a) => match &a.target {
            Expr::Var(v) => {
                out.insert(v.clone());
            }
            Expr::Access { array, .. } => {
                out.insert(array.clone());
            }
            _ => {}
        },
        Node::Decl(d) => {
            out.insert(d.name.clone());
        }
        _ => {}
    });
    out
}

/// Analyses one region.
pub fn analyze(program: &Program, region: &Region) -> Analysis {
    let mut c = Collector {
        program,
        written: written_names(&region.body),
        loops: Vec::new(),
        conds: Vec::new(),
        scopes: vec![HashMap::new()],
        out: Vec::new(),
        order: 0,
    };
    c.body(&region.body);
    let accesses = c.out;

    let (all_loops, domains) = loops_and_domains(program, region);

    let mut deps = Vec::new();
    for (si, s) in accesses.iter().enumerate() {
        for (ti, t) in accesses.iter().enumerate() {
            if s.array != t.array || !(s.write || t.write) {
                continue;
            }
            let common: Vec<usize> = s
                .loops
                .iter()
                .zip(&t.loops)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect();
            let problem = PairProblem::new(s, t, &common, &all_loops, &domains, program);
            let mut found = Vec::new();
            problem.directions(&mut Vec::new(), &mut found);
            for dirs in found {
                let carried = dirs.iter().any(|d| *d != Dir::Eq);
                if !carried && s.order >= t.order {
                    continue;
                }
                let kind = match (s.write, t.write) {
                    (true, false) => DepKind::Flow,
                    (false, true) => DepKind::Anti,
                    _ => DepKind::Output,
                };
                deps.push(Dependence {
                    source: si,
                    sink: ti,
                    array: s.array.clone(),
                    kind,
                    loops: common.clone(),
                    distance: uniform_distance(s, t, &common, &all_loops),
                    directions: dirs,
                });
            }
        }
    }

    let mut kinds = BTreeMap::new();
    let mut private_scalars = BTreeMap::new();
    let mut private_arrays = BTreeMap::new();
    for l in all_loops.values() {
        if crate::program::has_opaque(&l.body) {
            // A statement the IR does not model may touch anything, in any order.
            kinds.insert(l.id, LoopKind::Loop);
            private_scalars.insert(l.id, Vec::new());
            continue;
        }
        let privs = privatizable(l, program);
        let arrays = crate::private_arrays::private_arrays(l, &program.arrays);
        let carried: Vec<&Dependence> = deps
            .iter()
            .filter(|d| d.carrier() == Some(l.id))
            .filter(|d| {
                let a = &accesses[d.source];
                !a.private_in.contains(&l.id)
                    && !privs.contains(&a.array)
                    && !arrays.iter().any(|p| p.name == a.array)
            })
            .collect();
        let kind = if carried.is_empty() {
            LoopKind::Map
        } else if is_reduction(&carried, &accesses, l) {
            LoopKind::Reduction
        } else {
            LoopKind::Loop
        };
        kinds.insert(l.id, kind);
        private_scalars.insert(l.id, privs);
        if !arrays.is_empty() {
            private_arrays.insert(l.id, arrays);
        }
    }
    Analysis {
        accesses,
        deps,
        kinds,
        private_scalars,
        private_arrays,
    }
}

/// Every loop of the region by id, and its iteration domain as constraints.
fn loops_and_domains<'r>(
    program: &Program,
    region: &'r Region,
) -> (HashMap<usize, &'r Loop>, HashMap<usize, Vec<Constraint>>) {
    let all_loops: HashMap<usize, &Loop> = crate::program::loops(&region.body)
        .into_iter()
        .map(|l| (l.id, l))
        .collect();
    let is_param = |n: &str| program.is_param(n);
    let domains: HashMap<usize, Vec<Constraint>> = all_loops
        .values()
        .map(|l| {
            // Symbols of a loop's bounds: its own and enclosing loop variables, parameters.
            (
                l.id,
                loop_constraints(l, &|n: &str| {
                    is_param(n) || all_loops.values().any(|x| x.var == n)
                }),
            )
        })
        .collect();
    (all_loops, domains)
}

/// A linear condition on the iterations of two accesses: `sum of coeff * var +
/// constant >= 0`, each variable the loop `id` of the first access (`first: true`) or
/// of the second.
#[derive(Debug, Clone)]
pub struct Between {
    pub terms: Vec<(bool, usize, i64)>,
    pub constant: i64,
}

/// Whether accesses `s` and `t` of `an` (the analysis of `region`) may touch the same
/// element in iterations that also satisfy every condition of `extra` (a `false`
/// answer is a proof; a subscript that is not affine may always conflict). What a
/// transformation that reorders instances asks: can a pair in this order conflict?
pub fn may_conflict_where(
    program: &Program,
    region: &Region,
    an: &Analysis,
    s: usize,
    t: usize,
    extra: &[Between],
) -> bool {
    let (all_loops, domains) = loops_and_domains(program, region);
    let (sa, ta) = (&an.accesses[s], &an.accesses[t]);
    if sa.array != ta.array {
        return false;
    }
    let p = PairProblem::new(sa, ta, &[], &all_loops, &domains, program);
    let mut ineqs = p.base.clone();
    for b in extra {
        let mut r = vec![0i128; p.nvars + 1];
        for &(first, id, c) in &b.terms {
            let side = if first { &p.svars } else { &p.tvars };
            let Some(&v) = side.get(&id) else {
                // A loop the access is not under: nothing is known.
                return true;
            };
            r[v] += c as i128;
        }
        r[p.nvars] = b.constant as i128;
        ineqs.push(r);
    }
    feasible(p.nvars, ineqs, p.eqs.clone())
}

/// All carried dependences run between parts of reduction statements with one
/// operator, on locations that do not move with the loop.
fn is_reduction(carried: &[&Dependence], accesses: &[AccessRef], l: &Loop) -> bool {
    let mut op = None;
    for d in carried {
        for a in [&accesses[d.source], &accesses[d.sink]] {
            let Some(r) = a.reduction else { return false };
            if *op.get_or_insert(r) != r {
                return false;
            }
            let invariant = a
                .indices
                .iter()
                .all(|i| i.as_ref().is_some_and(|i| i.coeff(&l.var) == 0));
            if !invariant {
                return false;
            }
        }
    }
    true
}

/// Scalars of the program that `l` writes and never reads before writing them in the
/// same iteration: each iteration can have its own copy.
fn privatizable(l: &Loop, program: &Program) -> Vec<String> {
    let mut candidates: Vec<String> = Vec::new();
    crate::program::walk_nodes(&l.body, &mut |n, _| {
        if let Node::Assign(a) = n {
            if let Expr::Var(v) = &a.target {
                if program.scalar(v).is_some() && !candidates.contains(v) {
                    candidates.push(v.clone());
                }
            }
        }
    });
    candidates.retain(|v| {
        let mut written = false;
        no_exposed_read(&l.body, v, &mut written)
    });
    candidates
}

/// Walks `body` in execution order; `written` says whether `v` is certainly assigned
/// on entry. Returns false when some read of `v` may see a value from before `body`.
fn no_exposed_read(body: &[Node], v: &str, written: &mut bool) -> bool {
    for n in body {
        match n {
            Node::Assign(a) => {
                let reads_target =
                    a.op != AssignOp::Set || !matches!(&a.target, Expr::Var(t) if t == v);
                let reads = a.value.mentions(v) || (reads_target && a.target.mentions(v));
                if reads && !*written {
                    return false;
                }
                if matches!(&a.target, Expr::Var(t) if t == v) {
                    *written = true;
                }
            }
            Node::Decl(d) => {
                if d.name == v || d.init.as_ref().is_some_and(|e| e.mentions(v)) && !*written {
                    return false;
                }
            }
            Node::If(i) => {
                if i.cond.mentions(v) && !*written {
                    return false;
                }
                let (mut a, mut b) = (*written, *written);
                if !no_exposed_read(&i.then_body, v, &mut a)
                    || !no_exposed_read(&i.else_body, v, &mut b)
                {
                    return false;
                }
                *written = a && b;
            }
            Node::Block(b) => {
                if !no_exposed_read(b, v, written) {
                    return false;
                }
            }
            Node::Loop(x) => {
                if (x.init.mentions(v) || x.bound.mentions(v)) && !*written {
                    return false;
                }
                // The body may run zero times: what it writes does not count afterwards.
                let mut inner = *written;
                if !no_exposed_read(&x.body, v, &mut inner) {
                    return false;
                }
            }
            Node::Opaque(o) => {
                if o.names.iter().any(|n| n == v) {
                    return false;
                }
            }
        }
    }
    true
}

/// Distance per common level for uniform pairs: subscripts with equal coefficients
/// in which exactly one common loop variable appears.
fn uniform_distance(
    s: &AccessRef,
    t: &AccessRef,
    common: &[usize],
    loops: &HashMap<usize, &Loop>,
) -> Vec<Option<i64>> {
    let mut out = vec![None; common.len()];
    for (a, b) in s.indices.iter().zip(&t.indices) {
        let (Some(a), Some(b)) = (a, b) else { continue };
        if a.coeffs != b.coeffs {
            continue;
        }
        let present: Vec<usize> = common
            .iter()
            .enumerate()
            .filter(|(_, id)| a.coeff(&loops[id].var) != 0)
            .map(|(k, _)| k)
            .collect();
        if let [k] = present.as_slice() {
            let l = loops[&common[*k]];
            let c = a.coeff(&l.var);
            // a(x) = b(x') with x' = x + d  =>  c * d = a.const - b.const
            let diff = a.constant - b.constant;
            if diff % c == 0 {
                let d = diff / c;
                out[*k] = Some(if l.step > 0 { d } else { -d });
            }
        }
    }
    out
}

/// The dependence system of one ordered access pair.
struct PairProblem {
    /// Number of variables.
    nvars: usize,
    base: Vec<Vec<i128>>,
    eqs: Vec<Vec<i128>>,
    /// Per common level: (source var index, sink var index, step).
    levels: Vec<(usize, usize, i64)>,
    /// Variable index of each loop of the source, and of the sink.
    svars: HashMap<usize, usize>,
    tvars: HashMap<usize, usize>,
}

impl PairProblem {
    fn new(
        s: &AccessRef,
        t: &AccessRef,
        common: &[usize],
        loops: &HashMap<usize, &Loop>,
        domains: &HashMap<usize, Vec<Constraint>>,
        program: &Program,
    ) -> PairProblem {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut var = |key: String| -> usize {
            let n = index.len();
            *index.entry(key).or_insert(n)
        };
        // Variable keys: "s:<loop id>", "t:<loop id>", "p:<param>".
        let mut name_map = |side: &str, stack: &[usize]| -> HashMap<String, usize> {
            let mut m = HashMap::new();
            for id in stack {
                m.insert(loops[id].var.clone(), var(format!("{side}:{id}")));
            }
            m
        };
        let smap = name_map("s", &s.loops);
        let tmap = name_map("t", &t.loops);
        let mut params: Vec<String> = Vec::new();
        let mut collect = |a: &Affine| {
            for k in a.coeffs.keys() {
                if program.is_param(k) && !params.contains(k) {
                    params.push(k.clone());
                }
            }
        };
        for id in s.loops.iter().chain(&t.loops) {
            domains[id].iter().for_each(&mut collect);
        }
        s.conds.iter().chain(&t.conds).for_each(&mut collect);
        for i in s.indices.iter().chain(&t.indices).flatten() {
            collect(i);
        }
        let nloop = smap.len() + tmap.len();
        let pidx: HashMap<String, usize> = params
            .iter()
            .enumerate()
            .map(|(k, p)| (p.clone(), nloop + k))
            .collect();
        let nvars = nloop + params.len();

        // Converts an affine form over one side's names into a row (coeffs + constant).
        let row = |a: &Affine, map: &HashMap<String, usize>| -> Option<Vec<i128>> {
            let mut r = vec![0i128; nvars + 1];
            for (k, v) in &a.coeffs {
                let i = map.get(k).or_else(|| pidx.get(k))?;
                r[*i] += *v as i128;
            }
            r[nvars] = a.constant as i128;
            Some(r)
        };
        let mut base = Vec::new();
        for (acc, map) in [(s, &smap), (t, &tmap)] {
            for id in &acc.loops {
                for c in &domains[id] {
                    if let Some(r) = row(c, map) {
                        base.push(r);
                    }
                }
            }
            for c in &acc.conds {
                if let Some(r) = row(c, map) {
                    base.push(r);
                }
            }
        }
        let mut eqs = Vec::new();
        for (a, b) in s.indices.iter().zip(&t.indices) {
            if let (Some(a), Some(b)) = (a, b) {
                if let (Some(ra), Some(rb)) = (row(a, &smap), row(b, &tmap)) {
                    eqs.push(ra.iter().zip(&rb).map(|(x, y)| x - y).collect());
                }
            }
        }
        let levels = common
            .iter()
            .map(|id| {
                let v = &loops[id].var;
                (smap[v], tmap[v], loops[id].step)
            })
            .collect();
        let by_id = |side: &str, stack: &[usize]| -> HashMap<usize, usize> {
            stack
                .iter()
                .filter_map(|id| Some((*id, *index.get(&format!("{side}:{id}"))?)))
                .collect()
        };
        let svars = by_id("s", &s.loops);
        let tvars = by_id("t", &t.loops);
        PairProblem {
            nvars,
            base,
            eqs,
            levels,
            svars,
            tvars,
        }
    }

    /// Adds the constraints of a direction prefix and tests feasibility.
    fn feasible(&self, dirs: &[Dir]) -> bool {
        let mut ineqs = self.base.clone();
        let mut eqs = self.eqs.clone();
        for (k, d) in dirs.iter().enumerate() {
            let (sv, tv, step) = self.levels[k];
            let up = step > 0;
            let mut r = vec![0i128; self.nvars + 1];
            match d {
                Dir::Eq => {
                    r[sv] = 1;
                    r[tv] = -1;
                    eqs.push(r);
                }
                Dir::Lt | Dir::Gt => {
                    // Lt in execution order: (up) t - s - gap >= 0, (down) s - t - gap >= 0.
                    // Two iterations of one loop instance (every outer level Eq: the
                    // same start) lie a multiple of the step apart, so at least |step|
                    // (what makes a tile loop or an unroll-and-jammed loop parallel);
                    // across instances only 1 is certain (the start may move).
                    let same_instance = dirs[..k].iter().all(|d| *d == Dir::Eq);
                    let gap = if same_instance {
                        i128::from(step).abs().max(1)
                    } else {
                        1
                    };
                    let later_is_t = (*d == Dir::Lt) == up;
                    if later_is_t {
                        r[tv] = 1;
                        r[sv] = -1;
                    } else {
                        r[sv] = 1;
                        r[tv] = -1;
                    }
                    r[self.nvars] = -gap;
                    ineqs.push(r);
                }
            }
        }
        feasible(self.nvars, ineqs, eqs)
    }

    /// Enumerates feasible direction vectors that are lexicographically non-negative.
    fn directions(&self, prefix: &mut Vec<Dir>, out: &mut Vec<Vec<Dir>>) {
        if !self.feasible(prefix) {
            return;
        }
        if prefix.len() == self.levels.len() {
            out.push(prefix.clone());
            return;
        }
        let carried = prefix.iter().any(|d| *d != Dir::Eq);
        let choices: &[Dir] = if carried {
            &[Dir::Lt, Dir::Eq, Dir::Gt]
        } else {
            &[Dir::Lt, Dir::Eq]
        };
        for d in choices {
            prefix.push(*d);
            self.directions(prefix, out);
            prefix.pop();
        }
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

const MAX_CONSTRAINTS: usize = 4000;
const MAX_COEFF: i128 = 1 << 60;

/// Whether `ineqs` (rows `a·x + c >= 0`) and `eqs` (`a·x + c == 0`) have an integer
/// solution, conservatively: `false` only when there is certainly none.
pub fn feasible(nvars: usize, mut ineqs: Vec<Vec<i128>>, mut eqs: Vec<Vec<i128>>) -> bool {
    let c = nvars;
    let mut alive = vec![true; nvars];
    // Equalities: GCD test, then substitute a variable with a unit coefficient.
    while let Some(mut e) = eqs.pop() {
        let g = e[..c].iter().fold(0, |g, x| gcd(g, *x));
        if g == 0 {
            if e[c] != 0 {
                return false;
            }
            continue;
        }
        if e[c] % g != 0 {
            return false;
        }
        e.iter_mut().for_each(|x| *x /= g);
        match (0..c).find(|&i| e[i].abs() == 1) {
            Some(v) => {
                // x_v = -(rest)/e[v]
                let sign = e[v];
                let subst = |row: &mut Vec<i128>| {
                    let k = row[v];
                    if k != 0 {
                        for i in 0..=c {
                            row[i] -= k * sign * e[i];
                        }
                        row[v] = 0;
                    }
                };
                eqs.iter_mut().for_each(subst);
                ineqs.iter_mut().for_each(subst);
                alive[v] = false;
            }
            None => {
                ineqs.push(e.clone());
                ineqs.push(e.iter().map(|x| -x).collect());
            }
        }
    }
    // Fourier–Motzkin on the inequalities.
    loop {
        let mut next = Vec::with_capacity(ineqs.len());
        for mut r in ineqs.drain(..) {
            let g = r[..c].iter().fold(0, |g, x| gcd(g, *x));
            if g == 0 {
                if r[c] < 0 {
                    return false;
                }
                continue;
            }
            if g > 1 {
                r[..c].iter_mut().for_each(|x| *x /= g);
                r[c] = r[c].div_euclid(g);
            }
            if r.iter().any(|x| x.abs() > MAX_COEFF) {
                return true;
            }
            next.push(r);
        }
        next.sort();
        next.dedup();
        ineqs = next;
        // Pick the variable whose elimination creates the fewest rows.
        let mut best: Option<(usize, usize)> = None;
        for v in 0..c {
            if !alive[v] {
                continue;
            }
            let pos = ineqs.iter().filter(|r| r[v] > 0).count();
            let neg = ineqs.iter().filter(|r| r[v] < 0).count();
            if pos + neg == 0 {
                alive[v] = false;
                continue;
            }
            let cost = pos * neg;
            if best.is_none_or(|(_, b)| cost < b) {
                best = Some((v, cost));
            }
        }
        let Some((v, _)) = best else { return true };
        alive[v] = false;
        let (pos, rest): (Vec<_>, Vec<_>) = ineqs.into_iter().partition(|r| r[v] > 0);
        let (neg, zero): (Vec<_>, Vec<_>) = rest.into_iter().partition(|r| r[v] < 0);
        let mut out = zero;
        for p in &pos {
            for n in &neg {
                let (a, b) = (p[v], -n[v]);
                let row: Vec<i128> = (0..=c).map(|i| b * p[i] + a * n[i]).collect();
                out.push(row);
            }
        }
        if out.len() > MAX_CONSTRAINTS {
            return true;
        }
        ineqs = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solver_decides_simple_systems() {
        // x >= 0, x <= 5, x == 7  -> infeasible
        let ineqs = vec![vec![1, 0], vec![-1, 5]];
        assert!(!feasible(1, ineqs.clone(), vec![vec![1, -7]]));
        assert!(feasible(1, ineqs, vec![vec![1, -3]]));
        // 2x == 2y + 1 has no integer solution
        assert!(!feasible(2, vec![], vec![vec![2, -2, -1]]));
        // x < y and y < x
        assert!(!feasible(2, vec![vec![-1, 1, -1], vec![1, -1, -1]], vec![]));
        // 0 <= k < j, k == j
        assert!(!feasible(
            2,
            vec![vec![1, 0, 0], vec![-1, 1, -1]],
            vec![vec![1, -1, 0]]
        ));
    }
}

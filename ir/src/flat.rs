//! Pointers indexed with one linearized subscript, as arrays.
//!
//! C outside PolyBench passes its data as `float *a` over `malloc`ed memory and indexes
//! it as `a[i*n + j]` (or `a[z*nx*ny + y*nx + x]`). The frontend lowers such an access
//! with its one subscript; [`delinearize`] then finds the strides (`n`; `nx`, then `ny`)
//! and turns every access of the pointer into one subscript per dimension, so that the
//! dependence analysis, the transformations, Save and the cutouts see an array
//! `a[D0][n]` like any other. It proves, from the loop bounds around each access, that
//! every subscript but the first lies in `[0, stride)` (so that distinct subscript
//! tuples are distinct elements) and that the first is not negative; the first extent
//! `D0` is the largest first subscript plus one. Sizes (the variables in strides and
//! bounds) are taken as non-negative, as a loop that runs implies.
//!
//! Code that stands in the user's program ([`linearize`]: the glue around the nests,
//! the nests a tuned file replaces) indexes the pointer with one subscript again; the
//! nest functions and cutouts take it as the array (`double a[D0][n]`).
//!
//! Two pointers are taken to point to memory that does not overlap (as `restrict`
//! would say); the tuned file checks it before it runs a changed nest (see
//! [`crate::emit`]), unless one of them is declared `restrict`.

use crate::program::{BinOp, Expr, LoopCmp, Node, Program, UnOp};
use std::collections::{BTreeMap, BTreeSet};

/// A polynomial with integer coefficients over variables: monomial (sorted names,
/// repeated for powers) to coefficient.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Poly(BTreeMap<Vec<String>, i64>);

impl Poly {
    fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        p.add_term(Vec::new(), c);
        p
    }

    fn var(v: &str) -> Poly {
        let mut p = Poly::default();
        p.add_term(vec![v.to_string()], 1);
        p
    }

    fn add_term(&mut self, mono: Vec<String>, c: i64) {
        let e = self.0.entry(mono.clone()).or_insert(0);
        *e += c;
        if *e == 0 {
            self.0.remove(&mono);
        }
    }

    fn plus(&self, o: &Poly, sign: i64) -> Poly {
        let mut p = self.clone();
        for (m, c) in &o.0 {
            p.add_term(m.clone(), sign * c);
        }
        p
    }

    fn times(&self, o: &Poly) -> Poly {
        let mut p = Poly::default();
        for (m1, c1) in &self.0 {
            for (m2, c2) in &o.0 {
                let mut m: Vec<String> = m1.iter().chain(m2).cloned().collect();
                m.sort();
                p.add_term(m, c1 * c2);
            }
        }
        p
    }

    fn of(e: &Expr) -> Option<Poly> {
        Some(match e {
            Expr::Int { value, .. } => Poly::constant(*value),
            Expr::Var(v) => Poly::var(v),
            Expr::Unary { op: UnOp::Neg, arg } => Poly::default().plus(&Poly::of(arg)?, -1),
            Expr::Unary {
                op: UnOp::Plus,
                arg,
            } => Poly::of(arg)?,
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (Poly::of(lhs)?, Poly::of(rhs)?);
                match op {
                    BinOp::Add => a.plus(&b, 1),
                    BinOp::Sub => a.plus(&b, -1),
                    BinOp::Mul => a.times(&b),
                    _ => return None,
                }
            }
            _ => return None,
        })
    }

    /// `self` with every variable that `defs` defines replaced by its definition.
    fn substitute(&self, defs: &BTreeMap<String, Poly>) -> Poly {
        let mut out = Poly::default();
        for (m, c) in &self.0 {
            let mut term = Poly::constant(*c);
            for v in m {
                term = term.times(&defs.get(v).cloned().unwrap_or_else(|| Poly::var(v)));
            }
            out = out.plus(&term, 1);
        }
        out
    }

    fn is_affine(&self) -> bool {
        self.0.keys().all(|m| m.len() <= 1)
    }

    fn constant_term(&self) -> i64 {
        self.0.get(&Vec::new()).copied().unwrap_or(0)
    }

    fn mentions(&self, v: &str) -> bool {
        self.0.keys().any(|m| m.iter().any(|x| x == v))
    }

    /// Split by `s`: (the terms with `s`, one `s` taken out; the terms without).
    fn split(&self, s: &str) -> (Poly, Poly) {
        let (mut high, mut low) = (Poly::default(), Poly::default());
        for (m, c) in &self.0 {
            if let Some(k) = m.iter().position(|x| x == s) {
                let mut m = m.clone();
                m.remove(k);
                high.add_term(m, *c);
            } else {
                low.add_term(m.clone(), *c);
            }
        }
        (high, low)
    }

    /// Non-negative whenever every variable is: no negative coefficient.
    fn non_negative(&self) -> bool {
        self.0.values().all(|c| *c >= 0)
    }

    /// Non-negative whenever every variable is at least 1, as a size is that an
    /// array's element is reached with (`iS[Nr - 1]`: a row of an image of `Nr >= 1`
    /// rows).
    fn non_negative_for_sizes(&self) -> bool {
        let defs: BTreeMap<String, Poly> = self
            .0
            .keys()
            .flatten()
            .map(|v| (v.clone(), Poly::var(v).plus(&Poly::constant(1), 1)))
            .collect();
        self.substitute(&defs).non_negative()
    }

    /// The polynomial as an expression, terms in a stable order (variables first, the
    /// constant last).
    fn expr(&self) -> Expr {
        let mut terms: Vec<(&Vec<String>, i64)> = self.0.iter().map(|(m, c)| (m, *c)).collect();
        terms.sort_by_key(|(m, _)| m.is_empty());
        let mut out: Option<Expr> = None;
        for (m, c) in terms {
            let mono = m
                .iter()
                .map(|v| Expr::Var(v.clone()))
                .reduce(|a, b| bin(BinOp::Mul, a, b));
            let (neg, mag) = (c < 0, c.abs());
            let term = match mono {
                None => Expr::int(mag),
                Some(x) if mag == 1 => x,
                Some(x) => bin(BinOp::Mul, Expr::int(mag), x),
            };
            out = Some(match out {
                None if neg => Expr::Unary {
                    op: UnOp::Neg,
                    arg: Box::new(term),
                },
                None => term,
                Some(acc) => bin(if neg { BinOp::Sub } else { BinOp::Add }, acc, term),
            });
        }
        out.unwrap_or_else(|| Expr::int(0))
    }
}

fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

/// The mark that starts the name of an atom: a part of a subscript that is no sum of
/// products (`iN[i]` in `image[iN[i] + Nr*j]`, an index read from memory), standing in
/// the polynomial as a variable of its own.
const ATOM: char = '\u{1}';

/// `e` with every part that is no sum of products of variables and integers (an
/// access, a call, a division) replaced by an atom (see [`ATOM`]), each recorded in
/// `atoms` by its name.
fn atomize(e: &Expr, atoms: &mut BTreeMap<String, Expr>) -> Expr {
    match e {
        Expr::Int { .. } | Expr::Var(_) => e.clone(),
        Expr::Unary {
            op: op @ (UnOp::Neg | UnOp::Plus),
            arg,
        } => Expr::Unary {
            op: *op,
            arg: Box::new(atomize(arg, atoms)),
        },
        Expr::Binary {
            op: op @ (BinOp::Add | BinOp::Sub | BinOp::Mul),
            lhs,
            rhs,
        } => bin(*op, atomize(lhs, atoms), atomize(rhs, atoms)),
        other => {
            let name = format!("{ATOM}{}", crate::print::expr(other));
            atoms.insert(name.clone(), other.clone());
            Expr::Var(name)
        }
    }
}

fn is_atom(v: &str) -> bool {
    v.starts_with(ATOM)
}

/// `e` with its atoms put back.
fn unatomize(mut e: Expr, atoms: &BTreeMap<String, Expr>) -> Expr {
    crate::transform::rewrite::rewrite(&mut e, &mut |x| match x {
        Expr::Var(v) if is_atom(v) => atoms.get(v).cloned(),
        _ => None,
    });
    e
}

/// A subscript read through the index temporaries: one polynomial, or a choice
/// between two (`(x == 0) ? c : c - 1`, a boundary clamped).
#[derive(Debug, Clone)]
enum Sub {
    One(Poly),
    Two { cond: Expr, then: Poly, other: Poly },
}

/// Index temporaries by their values: polynomials, and choices between two.
#[derive(Debug, Clone, Default)]
struct Defs {
    polys: BTreeMap<String, Poly>,
    choices: BTreeMap<String, (Expr, Poly, Poly)>,
}

impl Defs {
    /// `e` through the definitions; `None` where it is not a polynomial or one choice
    /// between two.
    fn read(&self, e: &Expr) -> Option<Sub> {
        if let Expr::Ternary { cond, then, other } = e {
            let t = Poly::of(then)?.substitute(&self.polys);
            let o = Poly::of(other)?.substitute(&self.polys);
            if self.choices.keys().any(|c| t.mentions(c) || o.mentions(c)) {
                return None;
            }
            return Some(Sub::Two {
                cond: (**cond).clone(),
                then: t,
                other: o,
            });
        }
        let p = Poly::of(e)?.substitute(&self.polys);
        let used: Vec<&String> = self.choices.keys().filter(|c| p.mentions(c)).collect();
        match used.as_slice() {
            [] => Some(Sub::One(p)),
            [c] => {
                let (cond, a, b) = &self.choices[*c];
                let with = |x: &Poly| p.substitute(&BTreeMap::from([((*c).clone(), x.clone())]));
                Some(Sub::Two {
                    cond: cond.clone(),
                    then: with(a),
                    other: with(b),
                })
            }
            _ => None,
        }
    }
}

/// The variables of a subscript's value and, for a choice, of its condition.
fn sub_vars(s: &Sub) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: &Poly| out.extend(p.0.keys().flatten().cloned());
    match s {
        Sub::One(p) => add(p),
        Sub::Two { cond, then, other } => {
            add(then);
            add(other);
            cond.walk(&mut |x| {
                if let Expr::Var(v) = x {
                    out.push(v.clone());
                }
            });
        }
    }
    out
}

/// A branch of a choice, with what its condition says of the loop variable it tests:
/// `x == lo` failing starts `x` one later (`x == hi` failing ends it one earlier), as do
/// `x > lo` and `x < hi` holding; a branch where `x == e` holds is taken over `x`'s whole
/// range (a superset of where it is used). Returns the changes to the loops' ranges,
/// (first, last) by variable.
fn narrowing(
    loops: &[&crate::program::Loop],
    cond: &Expr,
    holds: bool,
) -> BTreeMap<String, (i64, i64)> {
    let mut adjust = BTreeMap::new();
    let unchanged = BTreeMap::new();
    let Expr::Binary { op, lhs, rhs } = cond else {
        return unchanged;
    };
    let flip = |op: BinOp| match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    };
    let is_loop = |v: &str| loops.iter().any(|l| l.var == v);
    let (v, e, op) = match (&**lhs, &**rhs) {
        (Expr::Var(v), r) if is_loop(v) => (v, r, *op),
        (l, Expr::Var(v)) if is_loop(v) => (v, l, flip(*op)),
        _ => return unchanged,
    };
    let (Some(e), Some(l)) = (Poly::of(e), loops.iter().find(|l| &l.var == v)) else {
        return unchanged;
    };
    let Some((lo, hi)) = range(l) else {
        return unchanged;
    };
    match (op, holds) {
        (BinOp::Eq, false) | (BinOp::Ne, true) | (BinOp::Gt, true) | (BinOp::Le, false)
            if e == lo =>
        {
            adjust.insert(v.clone(), (1, 0));
        }
        (BinOp::Eq, false) | (BinOp::Ne, true) | (BinOp::Lt, true) | (BinOp::Ge, false)
            if e == hi =>
        {
            adjust.insert(v.clone(), (0, -1));
        }
        _ => {}
    }
    adjust
}

/// The range of one loop's variable: (lowest, highest) value, inclusive.
fn range(l: &crate::program::Loop) -> Option<(Poly, Poly)> {
    let (init, bound) = (Poly::of(&l.init)?, Poly::of(&l.bound)?);
    let one = Poly::constant(1);
    Some(match (l.step > 0, l.cmp) {
        (true, LoopCmp::Lt) => (init, bound.plus(&one, -1)),
        (true, LoopCmp::Le) => (init, bound),
        (false, LoopCmp::Gt) => (bound.plus(&one, 1), init),
        (false, LoopCmp::Ge) => (bound, init),
        _ => return None,
    })
}

/// The largest (`upper`) or smallest value of affine `p` over the loops around it
/// (outermost first), as a polynomial of the variables that are not loop variables
/// (a bound may be one: `i < n*n`). A loop variable in a product with another
/// variable, left after the substitutions, gives None.
fn extreme(
    p: &Poly,
    loops: &[&crate::program::Loop],
    upper: bool,
    adjust: &BTreeMap<String, (i64, i64)>,
) -> Option<Poly> {
    let mut p = p.clone();
    for l in loops.iter().rev() {
        let Some(c) = p.0.get(&vec![l.var.clone()]).copied() else {
            continue;
        };
        let (mut lo, mut hi) = range(l)?;
        if let Some((a, b)) = adjust.get(&l.var) {
            lo = lo.plus(&Poly::constant(*a), 1);
            hi = hi.plus(&Poly::constant(*b), 1);
        }
        p.add_term(vec![l.var.clone()], -c);
        p = p.plus(
            &(if (c > 0) == upper { hi } else { lo }).times(&Poly::constant(c)),
            1,
        );
    }
    (!loops.iter().any(|l| p.mentions(&l.var))).then_some(p)
}

/// Index temporaries (`int idx = i*n + j;` then `a[idx]`): scalars declared once in
/// the region with a polynomial of loop variables (at least one) and fixed sizes as
/// their value and never assigned after, by their definitions (earlier ones
/// substituted). C's scopes
/// put every use after the declaration, inside the loops around it, so the loop
/// variables in it are those of the use's iteration.
fn index_defs(
    body: &[Node],
    loop_vars: &BTreeSet<String>,
    invariant: &dyn Fn(&str) -> bool,
) -> Defs {
    let mut declared: BTreeMap<&str, usize> = BTreeMap::new();
    let mut assigned: BTreeSet<&str> = BTreeSet::new();
    let mut opaque_writes: BTreeSet<String> = BTreeSet::new();
    let mut inits: Vec<(&str, &Expr)> = Vec::new();
    crate::program::walk_nodes(body, &mut |n, _| match n {
        Node::Decl(d) => {
            *declared.entry(&d.name).or_insert(0) += 1;
            if let (true, Some(init)) = (d.dims.is_empty() && !d.dtype.is_float(), &d.init) {
                inits.push((&d.name, init));
            }
        }
        Node::Assign(a) => {
            if let Expr::Var(v) = &a.target {
                assigned.insert(v);
            }
        }
        Node::Opaque(o) => opaque_writes.extend(written_by(o)),
        Node::Loop(_) | Node::If(_) | Node::Block(_) => {}
    });
    let mut defs = Defs::default();
    let fixed = |s: &Sub| {
        let vars = sub_vars(s);
        vars.iter().all(|v| loop_vars.contains(v) || invariant(v))
            && vars.iter().any(|v| loop_vars.contains(v))
    };
    let admit = |defs: &mut Defs, name: &str, s: Sub| match s {
        Sub::One(p) => {
            defs.polys.insert(name.to_string(), p);
        }
        Sub::Two { cond, then, other } => {
            defs.choices.insert(name.to_string(), (cond, then, other));
        }
    };
    // Declared without a value and assigned once, before every subscript that uses it,
    // in the same iteration: `int c; ... for (x ...) { c = x + y*nx; out[c] = ...; }`.
    let once = assigned_once(body);
    let mut placed: BTreeMap<String, (Vec<usize>, usize)> = BTreeMap::new();
    for (name, value, at, order) in &once {
        if declared.get(name.as_str()).copied().unwrap_or(0) > 1
            || inits.iter().any(|(n, _)| n == name)
        {
            continue;
        }
        // An earlier one may stand in it (`c = x + y*nx; n = c + 1;`) where it was
        // assigned before it in the same iteration.
        let mut earlier = defs.clone();
        for (n, (a, o)) in &placed {
            if !(at.starts_with(a) && o < order) {
                earlier.polys.remove(n);
                earlier.choices.remove(n);
            }
        }
        match earlier.read(value) {
            Some(s) if fixed(&s) => {
                placed.insert(name.clone(), (at.clone(), *order));
                admit(&mut defs, name, s);
            }
            _ => {}
        }
    }
    for (name, init) in inits {
        if declared[name] != 1 || assigned.contains(name) || opaque_writes.contains(name) {
            continue;
        }
        // A size (`int n = N;`) stays a name: it may be a stride.
        match defs.read(init) {
            Some(s) if fixed(&s) => admit(&mut defs, name, s),
            _ => {}
        }
    }
    defs
}

/// The scalars glue `o` may change that were declared before it: those it assigns by
/// name, increments or takes the address of (a scalar changes no other way; what it
/// writes through pointers or lets a callee write is memory, not these), less those it
/// declares itself, which are other variables than any of that name declared elsewhere
/// (C allows one declaration of a name per scope).
fn written_by(o: &crate::program::Opaque) -> Vec<String> {
    crate::source::assigned_names(&o.text)
        .0
        .into_iter()
        .filter(|w| !o.declares.contains(w))
        .collect()
}

/// Integer scalars assigned exactly once (`v = e;`, not under an `if`), where every
/// subscript that mentions them comes after that assignment in the same iteration of
/// the loops around it: each with its value, the loops around it and its place in
/// the order of the statements, in that order. The value may not mention a variable
/// written between the assignment and a use; `index_defs` admits only loop variables
/// and variables the region does not write.
fn assigned_once(body: &[Node]) -> Vec<(String, Expr, Vec<usize>, usize)> {
    /// An unconditional `v = e`: its value, the loops around it, its place in order.
    type Set<'a> = (&'a Expr, Vec<usize>, usize);
    struct Seen<'a> {
        /// Per variable, each of its unconditional assignments.
        sets: BTreeMap<&'a str, Vec<Set<'a>>>,
        /// Variables assigned any other way (compound, under an if, by glue).
        other: BTreeSet<&'a str>,
        /// Scalars glue may change (see [`written_by`]).
        glue_writes: BTreeSet<String>,
        /// Variables in subscripts: (loops around, order).
        uses: BTreeMap<String, Vec<(Vec<usize>, usize)>>,
        order: usize,
    }
    fn subscripts(e: &Expr, around: &[usize], order: usize, seen: &mut Seen) {
        e.walk(&mut |x| {
            if let Expr::Access { indices, .. } = x {
                for i in indices {
                    i.walk(&mut |v| {
                        if let Expr::Var(v) = v {
                            seen.uses
                                .entry(v.clone())
                                .or_default()
                                .push((around.to_vec(), order));
                        }
                    });
                }
            }
        });
    }
    fn visit<'a>(body: &'a [Node], around: &mut Vec<usize>, cond: bool, seen: &mut Seen<'a>) {
        for n in body {
            seen.order += 1;
            let order = seen.order;
            match n {
                Node::Assign(a) => {
                    subscripts(&a.target, around, order, seen);
                    subscripts(&a.value, around, order, seen);
                    if let Expr::Var(v) = &a.target {
                        if a.op == crate::program::AssignOp::Set && !cond {
                            seen.sets
                                .entry(v)
                                .or_default()
                                .push((&a.value, around.clone(), order));
                        } else {
                            seen.other.insert(v);
                        }
                    }
                }
                Node::Decl(d) => {
                    if let Some(e) = &d.init {
                        subscripts(e, around, order, seen);
                    }
                }
                Node::Loop(l) => {
                    subscripts(&l.init, around, order, seen);
                    subscripts(&l.bound, around, order, seen);
                    around.push(l.id);
                    visit(&l.body, around, false, seen);
                    around.pop();
                }
                Node::If(i) => {
                    subscripts(&i.cond, around, order, seen);
                    visit(&i.then_body, around, true, seen);
                    visit(&i.else_body, around, true, seen);
                }
                Node::Block(b) => visit(b, around, cond, seen),
                Node::Opaque(o) => seen.glue_writes.extend(written_by(o)),
            }
        }
    }
    let mut seen = Seen {
        sets: BTreeMap::new(),
        other: BTreeSet::new(),
        glue_writes: BTreeSet::new(),
        uses: BTreeMap::new(),
        order: 0,
    };
    visit(body, &mut Vec::new(), false, &mut seen);
    // In the order of the assignments: a value may use an earlier one.
    let mut out = Vec::new();
    let mut sets: Vec<_> = seen.sets.iter().collect();
    sets.sort_by_key(|(_, s)| s.first().map_or(0, |x| x.2));
    for (v, sets) in sets {
        // Assigned more than once, the same value each time (`k = i + Nr*j;` at the top
        // of two sweeps): each use reads the one before it.
        let Some((value, at, order)) = sets.first() else {
            continue;
        };
        if sets.iter().any(|(x, _, _)| x != value)
            || seen.other.contains(v)
            || seen.glue_writes.contains(*v)
            || value.mentions(v)
        {
            continue;
        }
        let uses = seen.uses.get(*v).map_or(&[][..], Vec::as_slice);
        // Only where the loops around an assignment are around the use too, later in
        // their body: the use reads this iteration's value.
        if uses.iter().all(|(around, o)| {
            sets.iter()
                .any(|(_, at, order)| around.starts_with(at) && o > order)
        }) {
            out.push((v.to_string(), (*value).clone(), at.clone(), *order));
        }
    }
    out
}

/// A pointer's accesses (each one subscript, as polynomials) with the loops around them.
struct Uses<'a> {
    /// Each subscript (a branch of a choice counts as one, with its condition and
    /// whether it holds there).
    accesses: Vec<Use<'a>>,
    /// The assignment each stands in, where it stands in one.
    at: Vec<Option<crate::program::Pos>>,
}

/// An assignment whose access of `pointer` does not fit the pointer's shape: the
/// statement is glue, the pointer's other accesses an array still.
#[derive(Debug, Clone)]
pub(crate) struct RefusedAt {
    pub pointer: String,
    pub pos: crate::program::Pos,
    pub why: String,
}

/// An assignment whose access does not fit a pointer's shape, and why.
type Misfit = (crate::program::Pos, String);

/// The pointer's shape from its accesses (see [`shape`]), less those of the
/// assignments whose access does not fit it: the shape and those assignments with why,
/// or why no shape fits (an access outside any assignment does not fit, or none is
/// left).
fn fitting_shape(
    u: &Uses,
    loop_vars: &BTreeSet<String>,
    invariant: &dyn Fn(&str) -> bool,
) -> Result<(Vec<Poly>, Vec<Misfit>), String> {
    let mut left = Uses {
        accesses: u.accesses.clone(),
        at: u.at.clone(),
    };
    let mut misfits = Vec::new();
    loop {
        match shape(&left, loop_vars, invariant) {
            Ok(dims) => return Ok((dims, misfits)),
            Err((why, Some(k))) => {
                let Some(pos) = left.at[k] else {
                    return Err(why);
                };
                let keep: Vec<bool> = left.at.iter().map(|p| *p != Some(pos)).collect();
                if !keep.iter().any(|k| *k) {
                    return Err(why);
                }
                let mut flags = keep.iter();
                left.accesses
                    .retain(|_| *flags.next().expect("one flag an access"));
                left.at.retain(|p| *p != Some(pos));
                misfits.push((pos, why));
            }
            Err((why, None)) => return Err(why),
        }
    }
}

/// One subscript, the loops around it, and for a branch of a choice its condition and
/// whether it holds there.
type Use<'a> = (Poly, Vec<&'a crate::program::Loop>, Option<(Expr, bool)>);

/// Turns each access of the `flat` pointers in `body` into one subscript per dimension
/// and gives the arrays their extents (`arrays[name].dims`). `invariant(v)`: whether
/// `v` is a variable the region does not write (a stride must be). Returns, for each
/// pointer that cannot be read as an array, why; those are left as they are (the
/// caller lowers their accesses as glue). An assignment whose access of a pointer does
/// not fit the shape that the pointer's other accesses give it (`image[i]` over all
/// `Nr * Nc` elements beside `image[i + Nr * j]`), or is no sum of products, is
/// returned instead, with its position and why: the caller lowers that statement alone
/// as glue.
pub(crate) fn delinearize(
    body: &mut [Node],
    arrays: &mut BTreeMap<String, crate::program::Array>,
    flat: &BTreeSet<String>,
    invariant: &dyn Fn(&str) -> bool,
) -> (Vec<(String, String)>, Vec<RefusedAt>) {
    let mut uses: BTreeMap<String, Uses> = BTreeMap::new();
    let mut bad: BTreeMap<String, String> = BTreeMap::new();
    let mut refused_at: Vec<RefusedAt> = Vec::new();
    let loop_vars: BTreeSet<String> = crate::program::loops(body)
        .iter()
        .map(|l| l.var.clone())
        .collect();
    let defs = index_defs(body, &loop_vars, invariant);
    // Subscripts of the row pointers (`w[k][j]`), by dimension.
    let mut row_uses: BTreeMap<String, [Vec<Use>; 2]> = BTreeMap::new();
    // A variable of a choice's condition that is neither a loop's nor fixed.
    let moving = |cond: &Expr| -> Option<String> {
        let mut found = None;
        cond.walk(&mut |x| {
            if let Expr::Var(v) = x {
                if !loop_vars.contains(v) && !invariant(v) {
                    found = Some(v.clone());
                }
            }
        });
        found
    };
    crate::program::walk_nodes(body, &mut |n, stack| {
        let pos = match n {
            Node::Assign(a) => Some(a.pos),
            _ => None,
        };
        let mut note = |e: &Expr| {
            e.walk(&mut |x| {
                if let Expr::Access { array, indices } = x {
                    if !flat.contains(array) {
                        return;
                    }
                    // A pointer to rows has two subscripts, each read alone; a flat
                    // pointer one.
                    let rows = arrays.get(array).is_some_and(|a| a.rows);
                    if indices.len() != if rows { 2 } else { 1 } {
                        return;
                    }
                    for (d, index) in indices.iter().enumerate() {
                        if rows {
                            let out = &mut row_uses.entry(array.clone()).or_default()[d];
                            if let Err(why) = read_use(&defs, &moving, index, stack, out) {
                                bad.entry(array.clone()).or_insert(why);
                                return;
                            }
                            continue;
                        }
                        let u = uses.entry(array.clone()).or_insert(Uses {
                            accesses: Vec::new(),
                            at: Vec::new(),
                        });
                        match read_use(&defs, &moving, index, stack, &mut u.accesses) {
                            Ok(()) => u.at.resize(u.accesses.len(), pos),
                            Err(why) => match pos {
                                Some(p) => refused_at.push(RefusedAt {
                                    pointer: array.clone(),
                                    pos: p,
                                    why,
                                }),
                                None => {
                                    bad.entry(array.clone()).or_insert(why);
                                    return;
                                }
                            },
                        }
                    }
                }
            })
        };
        match n {
            Node::Assign(a) => {
                note(&a.target);
                note(&a.value);
            }
            Node::Loop(l) => {
                note(&l.init);
                note(&l.bound);
            }
            Node::If(i) => note(&i.cond),
            Node::Decl(d) => {
                d.init.iter().for_each(&mut note);
                d.dims.iter().for_each(&mut note);
            }
            Node::Block(_) | Node::Opaque(_) => {}
        }
    });
    let mut shapes: BTreeMap<String, Vec<Poly>> = BTreeMap::new();
    for (name, u) in &uses {
        if bad.contains_key(name) {
            continue;
        }
        match fitting_shape(u, &loop_vars, invariant) {
            Ok((dims, misfits)) => {
                if misfits.is_empty() {
                    shapes.insert(name.clone(), dims);
                }
                refused_at.extend(misfits.into_iter().map(|(pos, why)| RefusedAt {
                    pointer: name.clone(),
                    pos,
                    why,
                }));
            }
            Err(why) => {
                bad.insert(name.clone(), why);
            }
        }
    }
    // Variables of loops that hold glue: a nest inside one runs at each of its
    // iterations, while the glue may still be filling the rows (`rows[i] = malloc(...)`
    // before a nest over `rows[i][j]`). Rows indexed by such a variable are not read as
    // an array: saved at the nest's entry, the rows not allocated yet would be read.
    let mut glue_loops: BTreeSet<String> = BTreeSet::new();
    for l in crate::program::loops(body) {
        let mut glue = false;
        crate::program::walk_nodes(&l.body, &mut |n, _| glue |= matches!(n, Node::Opaque(_)));
        if glue {
            glue_loops.insert(l.var.clone());
        }
    }
    for (name, u) in &row_uses {
        if bad.contains_key(name) {
            continue;
        }
        if let Some(v) = u[0]
            .iter()
            .flat_map(|(p, _, _)| p.0.keys().flatten())
            .find(|v| glue_loops.contains(*v))
        {
            bad.insert(
                name.clone(),
                format!(
                    "its rows are chosen by loop '{v}', which holds statements kept as written \
                     (they may allocate the rows)"
                ),
            );
            continue;
        }
        match u
            .iter()
            .map(|d| row_extent(d, &loop_vars, invariant))
            .collect::<Result<Vec<Poly>, String>>()
        {
            Ok(dims) => {
                shapes.insert(name.clone(), dims);
            }
            Err(why) => {
                bad.insert(name.clone(), why);
            }
        }
    }
    let mut row_names: BTreeSet<String> = row_uses.into_keys().collect();
    // An array read by an earlier region keeps its extents: where this region needs
    // others (another function's pointer of the same name), its pointer is another
    // array, named apart, spelled as the program spells it.
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    for (name, dims) in &shapes {
        let Some(a) = arrays.get(name) else { continue };
        let exprs: Vec<Expr> = dims.iter().map(Poly::expr).collect();
        if !a.dims.is_empty() && a.dims != exprs && !bad.contains_key(name) {
            let alias = alias_name(name, &|n| arrays.contains_key(n));
            let mut second = a.clone();
            second.source = Some(a.source.clone().unwrap_or_else(|| name.clone()));
            second.name = alias.clone();
            second.dims = Vec::new();
            second.extents = Vec::new();
            arrays.insert(alias.clone(), second);
            renames.insert(name.clone(), alias);
        }
    }
    if !renames.is_empty() {
        rename_arrays(body, &|a| renames.get(a).cloned());
        shapes = shapes
            .into_iter()
            .map(|(k, v)| (renames.get(&k).cloned().unwrap_or(k), v))
            .collect();
        row_names = row_names
            .into_iter()
            .map(|k| renames.get(&k).cloned().unwrap_or(k))
            .collect();
    }
    for (name, dims) in &shapes {
        if bad.contains_key(name) {
            continue;
        }
        if row_names.contains(name) {
            // Each subscript through the index temporaries, as the dependences read it.
            crate::transform::rewrite::rewrite_nodes(body, &mut |e| match e {
                Expr::Access { array, indices } if array == name && indices.len() == 2 => {
                    let indices = indices
                        .iter()
                        .map(|x| {
                            Some(match defs.read(x)? {
                                Sub::One(p) => p.expr(),
                                Sub::Two { cond, then, other } => chosen(&cond, &then, &other),
                            })
                        })
                        .collect::<Option<Vec<Expr>>>()?;
                    Some(Expr::Access {
                        array: array.clone(),
                        indices,
                    })
                }
                _ => None,
            });
        } else {
            flat_indices(body, name, dims, &defs);
        }
        if let Some(a) = arrays.get_mut(name) {
            a.dims = dims.iter().map(Poly::expr).collect();
            a.extents = a.dims.iter().map(crate::program::const_value).collect();
        }
    }
    (bad.into_iter().collect(), refused_at)
}

/// Every access of flat array `name` in `body` as one subscript per dimension of
/// `dims` (the first extent, then the strides), read through the index temporaries.
fn flat_indices(body: &mut [Node], name: &str, dims: &[Poly], defs: &Defs) {
    let strides: Vec<String> = dims[1..]
        .iter()
        .map(|d| {
            d.0.keys()
                .next()
                .and_then(|m| m.first())
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    crate::transform::rewrite::rewrite_nodes(body, &mut |e| match e {
        Expr::Access { array, indices } if array == name && indices.len() == 1 => {
            let mut atoms = BTreeMap::new();
            let read = defs
                .read(&indices[0])
                .or_else(|| defs.read(&atomize(&indices[0], &mut atoms)))?;
            let indices: Vec<Expr> = match read {
                Sub::One(p) => split_all(&p, &strides).iter().map(Poly::expr).collect(),
                // Per dimension, the two branches' subscripts, chosen where they differ.
                Sub::Two { cond, then, other } => split_all(&then, &strides)
                    .iter()
                    .zip(split_all(&other, &strides))
                    .map(|(a, b)| chosen(&cond, a, &b))
                    .collect(),
            };
            Some(Expr::Access {
                array: array.clone(),
                indices: indices.into_iter().map(|x| unatomize(x, &atoms)).collect(),
            })
        }
        _ => None,
    });
}

/// One subscript read through the index temporaries into `out` (a choice as its two
/// branches, with where each holds), or why it cannot be: not a polynomial, or a
/// choice whose condition uses a variable that moves (`moving`).
fn read_use<'a>(
    defs: &Defs,
    moving: &dyn Fn(&Expr) -> Option<String>,
    index: &Expr,
    stack: &[&'a crate::program::Loop],
    out: &mut Vec<Use<'a>>,
) -> Result<(), String> {
    let read = defs
        .read(index)
        .or_else(|| defs.read(&atomize(index, &mut BTreeMap::new())));
    match read {
        Some(Sub::One(p)) => out.push((p, stack.to_vec(), None)),
        Some(Sub::Two { cond, then, other }) => {
            if let Some(v) = moving(&cond) {
                return Err(format!(
                    "the condition '{}' of a subscript uses '{v}', which the function writes",
                    crate::print::expr(&cond)
                ));
            }
            out.push((then, stack.to_vec(), Some((cond.clone(), true))));
            out.push((other, stack.to_vec(), Some((cond, false))));
        }
        None => {
            return Err(format!(
                "subscript '{}' is not a sum of products",
                crate::print::expr(index)
            ))
        }
    }
    Ok(())
}

/// A subscript that is `then` where `cond` holds and `other` elsewhere: one of them
/// where they are the same.
fn chosen(cond: &Expr, then: &Poly, other: &Poly) -> Expr {
    if then == other {
        return then.expr();
    }
    Expr::Ternary {
        cond: Box::new(cond.clone()),
        then: Box::new(then.expr()),
        other: Box::new(other.expr()),
    }
}

/// The larger of two extents, where one is provably at least the other, the sizes in
/// them taken as at least 1 (`Nr` against `1`, from `iN[0] = 0` beside a loop over
/// `iN[i]`: an extent of 0 is an array no loop runs over).
fn larger(a: Poly, b: Poly) -> Result<Poly, String> {
    let d = b.plus(&a, -1);
    if d.non_negative() {
        Ok(b)
    } else if Poly::default().plus(&d, -1).non_negative() {
        Ok(a)
    } else if d.non_negative_for_sizes() {
        Ok(b)
    } else if Poly::default().plus(&d, -1).non_negative_for_sizes() {
        Ok(a)
    } else {
        Err(format!(
            "its extent is '{}' at one access and '{}' at another",
            crate::print::expr(&a.expr()),
            crate::print::expr(&b.expr())
        ))
    }
}

/// The extent of one dimension of a pointer to rows: its largest subscript plus one,
/// every subscript affine in the loops and sizes and provably not negative.
fn row_extent(
    uses: &[Use],
    loop_vars: &BTreeSet<String>,
    invariant: &dyn Fn(&str) -> bool,
) -> Result<Poly, String> {
    let mut out: Option<Poly> = None;
    for (p, loops, choice) in uses {
        if let Some(v) =
            p.0.keys()
                .flatten()
                .find(|v| !loop_vars.contains(*v) && !invariant(v))
        {
            return Err(format!(
                "its subscript uses '{v}', which the function writes"
            ));
        }
        if !p.is_affine() {
            return Err(format!(
                "subscript '{}' is not affine",
                crate::print::expr(&p.expr())
            ));
        }
        let adjust = &match choice {
            Some((cond, holds)) => narrowing(loops, cond, *holds),
            None => BTreeMap::new(),
        };
        let lo = extreme(p, loops, false, adjust).ok_or("its loop bounds are not affine")?;
        if !lo.non_negative_for_sizes() {
            return Err(format!(
                "its subscript '{}' may be negative",
                crate::print::expr(&p.expr())
            ));
        }
        let hi = extreme(p, loops, true, adjust)
            .ok_or("its loop bounds are not affine")?
            .plus(&Poly::constant(1), 1);
        out = Some(match out {
            None => hi,
            Some(h) => larger(h, hi)?,
        });
    }
    let e = out.ok_or("no access")?;
    if e.0.keys().all(|m| m.is_empty()) && e.constant_term() <= 0 {
        return Err("it is never indexed".into());
    }
    Ok(e)
}

/// The subscripts of `p` for strides `strides` (innermost last): `p` split by the
/// outermost stride first.
fn split_all(p: &Poly, strides: &[String]) -> Vec<Poly> {
    // p = ((i0 * s1 + i1) * s2 + i2) ...: take the innermost stride off first.
    let mut rest = p.clone();
    let mut out = Vec::new();
    for s in strides.iter().rev() {
        let (high, low) = rest.split(s);
        out.push(low);
        rest = high;
    }
    out.push(rest);
    out.reverse();
    out
}

/// The extents of one pointer read as an array (the first, then the strides), or why
/// it cannot be.
fn shape(
    u: &Uses,
    loop_vars: &BTreeSet<String>,
    invariant: &dyn Fn(&str) -> bool,
) -> Result<Vec<Poly>, (String, Option<usize>)> {
    // Every variable in a subscript is a loop's or one that stays put (an atom, read
    // where it stands, is neither).
    for (k, (p, _, _)) in u.accesses.iter().enumerate() {
        for m in p.0.keys() {
            if let Some(v) = m
                .iter()
                .find(|v| !loop_vars.contains(*v) && !invariant(v) && !is_atom(v))
            {
                return Err((
                    format!("its subscript uses '{v}', which the function writes"),
                    Some(k),
                ));
            }
        }
    }
    // Strides, innermost first: a variable in every product term that is left.
    let mut strides: Vec<String> = Vec::new();
    let mut highs: Vec<Poly> = u.accesses.iter().map(|(p, _, _)| p.clone()).collect();
    loop {
        let products: Vec<&Vec<String>> = highs
            .iter()
            .flat_map(|p| p.0.keys())
            .filter(|m| m.len() >= 2)
            .collect();
        if products.is_empty() {
            break;
        }
        let common: Vec<&String> = products[0]
            .iter()
            .filter(|v| !loop_vars.contains(*v) && invariant(v))
            .filter(|v| products.iter().all(|m| m.contains(v)))
            .collect();
        let Some(s) = common.first().map(|s| s.to_string()) else {
            return Err((
                format!(
                    "no size multiplies every product in its subscripts ({})",
                    products[0].join("*")
                ),
                None,
            ));
        };
        highs = highs.iter().map(|p| p.split(&s).0).collect();
        strides.push(s);
        if strides.len() > 8 {
            return Err(("too many dimensions".into(), None));
        }
    }
    strides.reverse();
    let mut first_hi: Option<Poly> = None;
    for (at, (p, loops, choice)) in u.accesses.iter().enumerate() {
        let fail = |why: String| (why, Some(at));
        // A branch of a choice holds only where its condition says.
        let adjust = &match choice {
            Some((cond, holds)) => narrowing(loops, cond, *holds),
            None => BTreeMap::new(),
        };
        let idx = split_all(p, &strides);
        if !idx.iter().all(Poly::is_affine) {
            return Err(fail(
                "a subscript is not affine once split by its strides".into(),
            ));
        }
        // A subscript with an atom (an index read from memory) is taken to stay within
        // its dimension, as the accesses without one bound it: the dependence analysis
        // reads it as not affine, so it may meet any element of that dimension.
        let atomic = |q: &Poly| q.0.keys().flatten().any(|v| is_atom(v));
        if idx
            .iter()
            .skip(1)
            .any(|q| atomic(q) && q.0.keys().any(|m| m.len() > 1))
        {
            return Err(fail(
                "an index read from memory is multiplied in a subscript".into(),
            ));
        }
        let bounded = !atomic(&idx[0]);
        let lo0 = match bounded {
            true => extreme(&idx[0], loops, false, adjust)
                .ok_or_else(|| fail("its loop bounds are not affine".into()))?,
            false => Poly::default(),
        };
        if !lo0.non_negative_for_sizes() {
            return Err(fail(format!(
                "its first subscript '{}' may be negative",
                crate::print::expr(&idx[0].expr())
            )));
        }
        for (k, s) in strides.iter().enumerate() {
            let e = &idx[k + 1];
            if atomic(e) {
                continue;
            }
            let lo = extreme(e, loops, false, adjust)
                .ok_or_else(|| fail("its loop bounds are not affine".into()))?;
            let hi = extreme(e, loops, true, adjust)
                .ok_or_else(|| fail("its loop bounds are not affine".into()))?;
            // A stride is a row's length: at least 1 (`a[y * nx]`, column 0, is inside
            // a row of `nx >= 1` elements).
            let room = Poly::var(s).plus(&Poly::constant(1), -1).plus(&hi, -1);
            let at_least_one =
                BTreeMap::from([(s.to_string(), Poly::var(s).plus(&Poly::constant(1), 1))]);
            if !lo.non_negative_for_sizes() || !room.substitute(&at_least_one).non_negative() {
                return Err(fail(format!(
                    "subscript '{}' is not provably within [0, {s})",
                    crate::print::expr(&e.expr())
                )));
            }
        }
        if !bounded {
            continue;
        }
        let hi0 = extreme(&idx[0], loops, true, adjust)
            .ok_or_else(|| fail("its loop bounds are not affine".into()))?
            .plus(&Poly::constant(1), 1);
        first_hi = Some(match first_hi {
            None => hi0,
            Some(h) => larger(h, hi0).map_err(fail)?,
        });
    }
    let first = first_hi.ok_or(("no access bounds its first subscript".to_string(), None))?;
    if first.constant_term() < 0 && first.0.len() == 1 {
        return Err(("it is never indexed".into(), None));
    }
    Ok(std::iter::once(first)
        .chain(strides.iter().map(|s| Poly::var(s)))
        .collect())
}

/// `body` with every access of a flat array of `program` back to one subscript
/// (`a[i][j]` of `double *a` read as `a[D0][n]` prints `a[i * n + j]`). A band that a
/// register tile prints is left as it is (see [`user_access`]).
pub fn linearize(program: &Program, body: &mut [Node]) {
    let flat = flat_dims(program);
    if flat.is_empty() {
        return;
    }
    rewrite_outside_register_tiles(body, &mut |e| linear(e, &flat));
}

fn flat_dims(program: &Program) -> BTreeMap<&str, &[Expr]> {
    program
        .arrays
        .iter()
        .filter(|a| a.flat)
        .map(|a| (a.name.as_str(), &a.dims[..]))
        .collect()
}

/// Whether a register tile prints the band at `l`.
fn register_tiled(l: &crate::program::Loop) -> bool {
    l.directives
        .iter()
        .any(|d| matches!(d, crate::program::Directive::RegisterTile(_)))
}

/// The name the user's code gives the program's array `a`, where that is another.
fn source_name(program: &Program, a: &str) -> Option<String> {
    Some(program.c_name(a).to_string()).filter(|c| c != a)
}

/// Every expression of `body` rewritten by `f` (see
/// [`crate::transform::rewrite::rewrite`]), except in the bands that register tiles
/// print: a register tile reads its band's shape from the rows and the program's
/// names when it is printed, then prints each access through
/// [`crate::print::PrintOptions::access`].
fn rewrite_outside_register_tiles(body: &mut [Node], f: &mut dyn FnMut(&Expr) -> Option<Expr>) {
    use crate::transform::rewrite::rewrite;
    for n in body {
        match n {
            Node::Loop(l) if register_tiled(l) => {}
            Node::Loop(l) => {
                rewrite(&mut l.init, f);
                rewrite(&mut l.bound, f);
                rewrite_outside_register_tiles(&mut l.body, f);
            }
            Node::If(i) => {
                rewrite(&mut i.cond, f);
                rewrite_outside_register_tiles(&mut i.then_body, f);
                rewrite_outside_register_tiles(&mut i.else_body, f);
            }
            Node::Block(b) => rewrite_outside_register_tiles(b, f),
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {
                crate::transform::rewrite::rewrite_nodes(std::slice::from_mut(n), f)
            }
        }
    }
}

/// An access of `program` as code that stands in the user's function spells it (with
/// `linear`, a flat array's with one subscript, as [`linearize`] does; an array with
/// another name in the program by that name, as [`source_names`] does); None for any
/// other expression. For [`crate::print::PrintOptions::access`], where both leave a
/// register tile's band as the analysis reads it.
pub fn user_access(program: &Program, linear: bool) -> impl Fn(&Expr) -> Option<Expr> + '_ {
    let flat = if linear {
        flat_dims(program)
    } else {
        BTreeMap::new()
    };
    move |e| {
        let Expr::Access { .. } = e else {
            return None;
        };
        let e = self::linear(e, &flat).unwrap_or_else(|| e.clone());
        renamed(&e, &|a| source_name(program, a))
    }
}

/// `body` with every array that has another name in the program spelled as the
/// program spells it ([`crate::program::Array::source`]): for code that stands in the
/// user's function.
pub fn source_names(program: &Program, body: &mut [Node]) {
    if program.arrays.iter().all(|a| a.source.is_none()) {
        return;
    }
    rewrite_outside_register_tiles(body, &mut |e| renamed(e, &|a| source_name(program, a)));
    fn decls(body: &mut [Node], program: &Program) {
        for n in body {
            match n {
                Node::Decl(d) => d.name = program.c_name(&d.name).to_string(),
                Node::Loop(l) if register_tiled(l) => {}
                Node::Loop(l) => decls(&mut l.body, program),
                Node::Block(b) => decls(b, program),
                Node::If(i) => {
                    decls(&mut i.then_body, program);
                    decls(&mut i.else_body, program);
                }
                Node::Assign(_) | Node::Opaque(_) => {}
            }
        }
    }
    decls(body, program);
    crate::program::for_each_loop_mut(body, &mut |l| {
        for d in &mut l.directives {
            if let crate::program::Directive::OmpParallelFor { reduction, .. }
            | crate::program::Directive::OmpSimd { reduction, .. } = d
            {
                for item in reduction.iter_mut() {
                    item.name = program.c_name(&item.name).to_string();
                }
            }
        }
    });
}

/// Every access in `body` to an array that `to` renames, renamed (subscripts included).
fn rename_arrays(body: &mut [Node], to: &dyn Fn(&str) -> Option<String>) {
    crate::transform::rewrite::rewrite_nodes(body, &mut |e| renamed(e, to));
}

fn renamed(e: &Expr, to: &dyn Fn(&str) -> Option<String>) -> Option<Expr> {
    let Expr::Access { array, indices } = e else {
        return None;
    };
    let indices: Vec<Expr> = indices
        .iter()
        .map(|x| {
            let mut x = x.clone();
            crate::transform::rewrite::rewrite(&mut x, &mut |y| renamed(y, to));
            x
        })
        .collect();
    Some(Expr::Access {
        array: to(array).unwrap_or_else(|| array.clone()),
        indices,
    })
}

/// A name for a second array of the program's pointer `name` (another function's,
/// indexed with another shape): `name__tuneK`, the first not taken.
pub(crate) fn alias_name(name: &str, taken: &dyn Fn(&str) -> bool) -> String {
    (1..)
        .map(|k| format!("{name}__tune{k}"))
        .find(|n| !taken(n))
        .expect("a free name")
}

fn linear(e: &Expr, flat: &BTreeMap<&str, &[Expr]>) -> Option<Expr> {
    let Expr::Access { array, indices } = e else {
        return None;
    };
    let dims = flat.get(array.as_str())?;
    if indices.len() != dims.len() || indices.len() < 2 {
        return None;
    }
    // Inner accesses (an index that reads a flat array) first.
    let idx: Vec<Expr> = indices
        .iter()
        .map(|x| {
            let mut x = x.clone();
            crate::transform::rewrite::rewrite(&mut x, &mut |y| linear(y, flat));
            x
        })
        .collect();
    let mut acc = idx[0].clone();
    for (k, x) in idx.iter().enumerate().skip(1) {
        acc = bin(BinOp::Add, bin(BinOp::Mul, acc, dims[k].clone()), x.clone());
    }
    Some(Expr::Access {
        array: array.clone(),
        indices: vec![acc],
    })
}

/// The check a tuned file runs before a changed nest that uses pointers read as
/// arrays: C statements that measure the rows of each pointer to rows (`before`, in a
/// block of their own with the `if`), and the condition under which no two of the
/// arrays overlap where one of them is written (`cond`). Read as arrays, two pointers
/// are distinct arrays to the dependence analysis, and the rows of one are distinct
/// rows: a nest a recipe changed runs only where that holds, the user's nest elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisjointCheck {
    pub before: String,
    pub cond: String,
}

impl DisjointCheck {
    /// `changed` (a nest's new code) under the check, `original` (the user's nest)
    /// otherwise, each line of the statements before it indented with `indent`: the
    /// rows of pointers to rows are measured first, in a block of their own.
    pub fn around(&self, changed: &str, original: &str, indent: &str) -> String {
        let cond = &self.cond;
        let out =
            format!("{indent}if ({cond}) {{\n{changed}{indent}}} else {{\n{original}{indent}}}\n");
        if self.before.is_empty() {
            return out;
        }
        let mut block = format!("{indent}{{\n");
        for line in self.before.lines() {
            block.push_str(&format!("{indent}  {line}\n"));
        }
        format!("{block}{out}{indent}}}\n")
    }
}

/// The check for the nest `root`, or None when no pair needs one (see [`DisjointCheck`]).
///
/// A flat array spans `[a, a + D0 * ... * Dn)`. A pointer to rows spans from its lowest
/// row's start to its highest row's end (`tune_lo_w`, `tune_hi_w`, measured over its
/// `D0` rows); where it is written its rows must also stand in increasing order, each
/// after the end of the one before (`tune_apart_w`), which is how rows allocated one
/// after another or cut from one block lie. Rows in any other order run the user's
/// nest.
pub fn disjoint_check(program: &Program, root: &crate::program::Loop) -> Option<DisjointCheck> {
    let u = crate::codegen::uses(std::slice::from_ref(&Node::Loop(root.clone())), program);
    let used: Vec<&String> = u
        .arrays
        .iter()
        .filter(|n| program.array(n).is_some_and(|a| a.pointer()))
        .collect();
    let extent = |d: &Expr| format!("({})", crate::print::expr(d));
    let rows = |name: &str| program.array(name).is_some_and(|a| a.rows);
    let range = |name: &str| -> (String, String) {
        let a = program.array(name).expect("pointer array");
        if a.rows {
            return (format!("tune_lo_{name}"), format!("tune_hi_{name}"));
        }
        let count: Vec<String> = a.dims.iter().map(extent).collect();
        let c = program.c_name(name);
        (
            format!("(const char *){c}"),
            format!("(const char *)({c} + {})", count.join(" * ")),
        )
    };
    // A restrict flat pointer's elements are reached through it alone.
    let restrict = |n: &str| program.array(n).is_some_and(|a| a.restrict && a.flat);
    let mut conds = Vec::new();
    let mut measured: BTreeSet<&str> = BTreeSet::new();
    for p in &used {
        if rows(p) && u.written.contains(*p) {
            conds.push(format!("tune_apart_{p}"));
            measured.insert(p);
        }
    }
    for (k, p) in used.iter().enumerate() {
        for q in &used[k + 1..] {
            if (u.written.contains(*p) || u.written.contains(*q)) && !restrict(p) && !restrict(q) {
                let ((p_lo, p_hi), (q_lo, q_hi)) = (range(p), range(q));
                conds.push(format!("({p_hi} <= {q_lo} || {q_hi} <= {p_lo})"));
                measured.extend([p.as_str(), q.as_str()].into_iter().filter(|n| rows(n)));
            }
        }
    }
    if conds.is_empty() {
        return None;
    }
    // Declarations first (the block builds under C89), then the loops.
    let (mut decls, mut loops) = (String::new(), String::new());
    for name in &measured {
        let a = program.array(name).expect("pointer array");
        let (n, len) = (extent(&a.dims[0]), extent(&a.dims[1]));
        let written = u.written.contains(*name);
        decls.push_str(&format!(
            "const char *tune_lo_{name} = 0, *tune_hi_{name} = 0; long tune_r_{name};\n"
        ));
        if written {
            decls.push_str(&format!("int tune_apart_{name} = 1;\n"));
        }
        let c = program.c_name(name);
        loops.push_str(&format!(
            "for (tune_r_{name} = 0; tune_r_{name} < {n}; tune_r_{name}++) {{\n  \
             const char *tune_s = (const char *){c}[tune_r_{name}], \
             *tune_e = tune_s + {len} * sizeof **{c};\n"
        ));
        if written {
            loops.push_str(&format!(
                "  if (tune_r_{name} > 0 && tune_s < tune_hi_{name}) tune_apart_{name} = 0;\n"
            ));
        }
        loops.push_str(&format!(
            "  if (tune_r_{name} == 0 || tune_s < tune_lo_{name}) tune_lo_{name} = tune_s;\n  \
             if (tune_e > tune_hi_{name}) tune_hi_{name} = tune_e;\n}}\n"
        ));
    }
    let before = decls + &loops;
    Some(DisjointCheck {
        before,
        cond: conds.join(" && "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[(&[&str], i64)]) -> Poly {
        let mut out = Poly::default();
        for (m, c) in s {
            let mut m: Vec<String> = m.iter().map(|x| x.to_string()).collect();
            m.sort();
            out.add_term(m, *c);
        }
        out
    }

    #[test]
    fn splits_by_innermost_stride_first() {
        // z*nx*ny + y*nx + x with strides [ny, nx] (outermost first).
        let e = p(&[(&["z", "nx", "ny"], 1), (&["y", "nx"], 1), (&["x"], 1)]);
        let idx = split_all(&e, &["ny".into(), "nx".into()]);
        assert_eq!(
            idx,
            vec![p(&[(&["z"], 1)]), p(&[(&["y"], 1)]), p(&[(&["x"], 1)])]
        );
    }

    #[test]
    fn polynomial_round_trip_prints_terms() {
        let e = p(&[(&["i"], 1), (&[], -1)]);
        assert_eq!(crate::print::expr(&e.expr()), "i - 1");
        assert_eq!(Poly::of(&e.expr()), Some(e));
    }
}

//! The IR verifier: run after parsing and after every transformation in tests.
//!
//! It checks that every name is bound, every access has as many subscripts as its
//! array has dimensions, constant subscripts stay inside constant extents where the
//! loop ranges are constant, and that no loop is marked more parallel than the
//! dependence analysis proves.

use crate::affine::{affine_of, Affine};
use crate::deps::analyze;
use crate::program::const_value;
use crate::program::{Expr, Loop, LoopCmp, LoopKind, Node, Program};
use std::collections::HashMap;

/// Checks a program; returns every problem found (empty when the program is sound).
pub fn verify(program: &Program) -> Vec<String> {
    let mut errors = Vec::new();
    for region in &program.regions {
        let mut v = Verifier {
            program,
            scopes: vec![Vec::new()],
            ranges: HashMap::new(),
            guarded: 0,
            errors: &mut errors,
            region: region.index,
        };
        v.body(&region.body);
        let analysis = analyze(program, region);
        for l in crate::program::loops(&region.body) {
            let proven = analysis.kinds[&l.id];
            let ok = match l.kind {
                LoopKind::Map => proven == LoopKind::Map,
                LoopKind::Reduction => proven != LoopKind::Loop,
                LoopKind::Loop => true,
            };
            if !ok {
                errors.push(format!(
                    "region{}: loop '{}' at line {} is marked {} but analysis proves only {}",
                    region.index,
                    l.var,
                    l.pos.line,
                    l.kind.verdict(),
                    proven.verdict()
                ));
            }
        }
    }
    errors
}

struct Verifier<'a> {
    program: &'a Program,
    scopes: Vec<Vec<String>>,
    /// Constant ranges of enclosing loop variables.
    ranges: HashMap<String, (i64, i64)>,
    /// Inside an `if`: its condition may guard the accesses, so ranges are not checked.
    guarded: usize,
    errors: &'a mut Vec<String>,
    region: usize,
}

impl Verifier<'_> {
    fn bound(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.iter().any(|n| n == name))
            || self.program.scalar(name).is_some()
            || self.program.array(name).is_some()
    }

    fn expr(&mut self, e: &Expr, line: u32) {
        let mut problems = Vec::new();
        e.walk(&mut |x| match x {
            Expr::Var(v) if !self.bound(v) => problems.push(format!("unbound variable '{v}'")),
            Expr::Access { array, indices } => match self.program.array(array) {
                None => problems.push(format!("unknown array '{array}'")),
                Some(a) if a.dims.len() != indices.len() => problems.push(format!(
                    "'{array}' has {} dimensions but is accessed with {} subscripts",
                    a.dims.len(),
                    indices.len()
                )),
                Some(a) => {
                    for (k, (idx, ext)) in indices.iter().zip(&a.extents).enumerate() {
                        if self.guarded > 0 {
                            continue;
                        }
                        let (Some(ext), Some(range)) = (ext, self.range_of(idx)) else {
                            continue;
                        };
                        if range.0 < 0 || range.1 >= *ext {
                            problems.push(format!(
                                "subscript {k} of '{array}' ranges over [{}, {}] outside [0, {}]",
                                range.0,
                                range.1,
                                ext - 1
                            ));
                        }
                    }
                }
            },
            _ => {}
        });
        for p in problems {
            self.errors
                .push(format!("region{}: line {line}: {p}", self.region));
        }
    }

    /// The range of an affine subscript over constant loop ranges.
    fn range_of(&self, e: &Expr) -> Option<(i64, i64)> {
        let a = affine_of(e, &|n| self.ranges.contains_key(n))?;
        let (mut lo, mut hi) = (a.constant, a.constant);
        for (v, c) in &a.coeffs {
            let (l, h) = self.ranges[v];
            let (x, y) = (c.checked_mul(l)?, c.checked_mul(h)?);
            lo = lo.checked_add(x.min(y))?;
            hi = hi.checked_add(x.max(y))?;
        }
        Some((lo, hi))
    }

    /// The range of loop `l`'s variable, after tightening the enclosing loops' ranges
    /// to where `l` runs at all: in `for (j = i + 1; j < N; j++)` under `i` in
    /// `[0, N - 1]`, `j` runs only while `i <= N - 2`, so `A[i + 1][j]` stays inside
    /// `A[N]`. Returns the variable's range (`None`: unknown) and whether the loop runs
    /// for some value of the enclosing variables. Tightened ranges are written into
    /// `self.ranges`; the caller restores them.
    fn enter_loop(&mut self, l: &Loop) -> (Option<(i64, i64)>, bool) {
        let known =
            |r: &HashMap<String, (i64, i64)>, e: &Expr| affine_of(e, &|n| r.contains_key(n));
        let (Some(init), Some(bound)) =
            (known(&self.ranges, &l.init), known(&self.ranges, &l.bound))
        else {
            return (None, true);
        };
        // The loop runs where `d <= 0` (unknown where the arithmetic overflows).
        let plus_one = |d: Affine| {
            Some(Affine {
                constant: d.constant.checked_add(1)?,
                ..d
            })
        };
        let d = match l.cmp {
            LoopCmp::Lt => init.sub(&bound).and_then(plus_one),
            LoopCmp::Le => init.sub(&bound),
            LoopCmp::Gt => bound.sub(&init).and_then(plus_one),
            LoopCmp::Ge => bound.sub(&init),
        };
        if let Some(d) = d {
            if d.coeffs.len() == 1 {
                let (v, &c) = d.coeffs.iter().next().expect("one variable");
                let (lo, hi) = self.ranges[v];
                // c * v + k <= 0: v <= floor(-k / c) for c > 0, v >= ceil(k / -c) for c < 0
                let tightened = d.constant.checked_neg().and_then(|nk| {
                    if c > 0 {
                        Some((lo, hi.min(nk.div_euclid(c))))
                    } else {
                        Some((lo.max(nk.div_euclid(c.checked_neg()?).checked_neg()?), hi))
                    }
                });
                if let Some((lo, hi)) = tightened {
                    if lo > hi {
                        return (None, false);
                    }
                    self.ranges.insert(v.clone(), (lo, hi));
                }
            } else if d.coeffs.is_empty() && d.constant > 0 {
                return (None, false);
            }
        }
        // The variable's own range is known where both bounds are constants (an
        // interval over enclosing ranges would forget how the variables are tied).
        let (Some(init), Some(bound)) = (const_value(&l.init), const_value(&l.bound)) else {
            return (None, true);
        };
        let (lo, hi) = match l.cmp {
            LoopCmp::Lt => (init, bound - 1),
            LoopCmp::Le => (init, bound),
            LoopCmp::Gt => (bound + 1, init),
            LoopCmp::Ge => (bound, init),
        };
        // The variable takes every `step`-th value from `init`: the last it reaches.
        let step = l.step.unsigned_abs().max(1) as i64;
        let (lo, hi) = if l.step > 0 {
            (lo, lo + (hi - lo).max(0) / step * step)
        } else {
            (hi - (hi - lo).max(0) / step * step, hi)
        };
        ((lo <= hi).then_some((lo, hi)), true)
    }

    fn body(&mut self, nodes: &[Node]) {
        for n in nodes {
            match n {
                Node::Assign(a) => {
                    self.expr(&a.target, a.pos.line);
                    self.expr(&a.value, a.pos.line);
                }
                Node::Decl(d) => {
                    if let Some(e) = &d.init {
                        self.expr(e, d.pos.line);
                    }
                    self.scopes.last_mut().expect("scope").push(d.name.clone());
                }
                Node::If(i) => {
                    self.expr(&i.cond, i.pos.line);
                    self.guarded += 1;
                    self.scopes.push(Vec::new());
                    self.body(&i.then_body);
                    self.scopes.pop();
                    self.scopes.push(Vec::new());
                    self.body(&i.else_body);
                    self.scopes.pop();
                    self.guarded -= 1;
                }
                Node::Block(b) => {
                    self.scopes.push(Vec::new());
                    self.body(b);
                    self.scopes.pop();
                }
                Node::Opaque(o) => {
                    let scope = self.scopes.last_mut().expect("scope");
                    scope.extend(o.declares.iter().cloned());
                }
                Node::Loop(l) => {
                    self.expr(&l.init, l.pos.line);
                    self.expr(&l.bound, l.pos.line);
                    self.scopes.push(vec![l.var.clone()]);
                    let saved = self.ranges.clone();
                    self.ranges.remove(&l.var);
                    let (range, runs) = self.enter_loop(l);
                    if let Some(r) = range {
                        self.ranges.insert(l.var.clone(), r);
                    }
                    // A loop that never runs reads nothing: its subscripts are not
                    // checked.
                    self.guarded += usize::from(!runs);
                    self.body(&l.body);
                    self.guarded -= usize::from(!runs);
                    self.ranges = saved;
                    self.scopes.pop();
                }
            }
        }
    }
}

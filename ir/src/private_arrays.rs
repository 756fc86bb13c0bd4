//! Arrays that every iteration of a loop writes before it reads them (doitgen's `sum[]`,
//! a work row shared by the iterations of a factorization step): each iteration can
//! have a copy of its own, so the dependences they carry do not keep the loop sequential.
//!
//! The proof is by *boxes*: an assignment that runs in every iteration (no `if` on its
//! way) and writes `X[i][j]...` where each subscript is the variable of a loop on its
//! way (each walking a fixed range with step 1, every loop on the way used) or an
//! expression the iteration cannot change. Every element of a box is written in every
//! iteration. An array is private to the loop when
//! - every read of it in the iteration falls in a box written before it: after the
//!   box's whole loop nest, over loops with the same ranges; or inside the box's own
//!   loops, at the element of the current iteration, after the write;
//! - every write of it falls in a box (so the last iteration's copy holds everything the
//!   loop leaves in the array, and copying its boxes back gives the original's state);
//! - it has known extents and a copy fits comfortably on a thread's stack.
//!
//! The loop must step forwards (`<` or `<=`, positive step), so that its last iteration
//! is a condition on its variable.

use crate::program::{Array, AssignOp, DType, Expr, Loop, LoopCmp, Node};
use std::collections::{BTreeSet, HashMap};

/// One dimension of a box: a range walked by a loop, or one fixed element.
#[derive(Debug, Clone, PartialEq)]
pub enum BoxDim {
    Range {
        init: Expr,
        cmp: LoopCmp,
        bound: Expr,
        var_dtype: DType,
    },
    Point(Expr),
}

/// Elements an iteration writes in full, once loops around them (that walk no
/// dimension) run at all.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenBox {
    pub dims: Vec<BoxDim>,
    /// Conditions under which the write runs: each loop around it that walks no
    /// dimension has at least one iteration.
    pub runs_if: Vec<Expr>,
}

/// An array that each iteration of a loop can have a private copy of.
#[derive(Debug, Clone, PartialEq)]
pub struct PrivateArray {
    pub name: String,
    /// What every iteration writes: what the last iteration's copy gives back.
    pub boxes: Vec<WrittenBox>,
}

/// The largest copy of an array made per iteration or per thread (private arrays,
/// array reductions), in bytes: copies live on the threads' stacks.
pub const MAX_PRIVATE_BYTES: i64 = 256 * 1024;

struct Access<'a> {
    array: &'a str,
    write: bool,
    /// The access is an assignment's target (a box candidate).
    target: bool,
    indices: &'a [Expr],
    /// Loops from the body of the analysed loop down to the access.
    path: Vec<&'a Loop>,
    under_if: bool,
    /// Statement number in execution order within one iteration.
    seq: usize,
}

#[derive(Default)]
struct Walk<'a> {
    accesses: Vec<Access<'a>>,
    /// Last statement number inside each loop (by id).
    loop_end: HashMap<usize, usize>,
    /// Names the iteration assigns: scalars, loop variables, declarations.
    assigned: BTreeSet<&'a str>,
    declared: BTreeSet<&'a str>,
    seq: usize,
}

impl<'a> Walk<'a> {
    fn reads(&mut self, e: &'a Expr, path: &[&'a Loop], under_if: bool) {
        e.walk(&mut |x| {
            if let Expr::Access { array, indices } = x {
                self.accesses.push(Access {
                    array,
                    write: false,
                    target: false,
                    indices,
                    path: path.to_vec(),
                    under_if,
                    seq: self.seq,
                });
            }
        });
    }

    fn body(&mut self, nodes: &'a [Node], path: &mut Vec<&'a Loop>, under_if: bool) {
        for n in nodes {
            self.seq += 1;
            match n {
                Node::Assign(a) => {
                    self.reads(&a.value, path, under_if);
                    match &a.target {
                        Expr::Access { array, indices } => {
                            for i in indices {
                                self.reads(i, path, under_if);
                            }
                            if a.op != AssignOp::Set {
                                self.reads(&a.target, path, under_if);
                            }
                            self.accesses.push(Access {
                                array,
                                write: true,
                                target: true,
                                indices,
                                path: path.clone(),
                                under_if,
                                seq: self.seq,
                            });
                        }
                        Expr::Var(v) => {
                            self.assigned.insert(v);
                        }
                        _ => {}
                    }
                }
                Node::Decl(d) => {
                    if let Some(e) = &d.init {
                        self.reads(e, path, under_if);
                    }
                    self.assigned.insert(&d.name);
                    self.declared.insert(&d.name);
                }
                Node::If(i) => {
                    self.reads(&i.cond, path, under_if);
                    self.body(&i.then_body, path, true);
                    self.body(&i.else_body, path, true);
                }
                Node::Block(b) => self.body(b, path, under_if),
                // Loops holding one are never analysed for privatization.
                Node::Opaque(_) => {}
                Node::Loop(l) => {
                    self.reads(&l.init, path, under_if);
                    self.reads(&l.bound, path, under_if);
                    self.assigned.insert(&l.var);
                    path.push(l);
                    self.body(&l.body, path, under_if);
                    path.pop();
                    self.loop_end.insert(l.id, self.seq);
                }
            }
        }
    }

    /// Whether `e` is the same in every execution within one iteration.
    fn invariant(&self, e: &Expr) -> bool {
        let mut ok = true;
        e.walk(&mut |x| match x {
            Expr::Var(v) if self.assigned.contains(v.as_str()) => ok = false,
            Expr::Access { .. } | Expr::Call { .. } => ok = false,
            _ => {}
        });
        ok
    }
}

/// The arrays each iteration of `l` can have its own copy of (`arrays`: the program's).
pub fn private_arrays(l: &Loop, arrays: &[Array]) -> Vec<PrivateArray> {
    if l.step <= 0 || !matches!(l.cmp, LoopCmp::Lt | LoopCmp::Le) {
        return Vec::new();
    }
    let mut w = Walk::default();
    w.assigned.insert(&l.var);
    w.body(&l.body, &mut Vec::new(), false);
    let names: BTreeSet<&str> = w
        .accesses
        .iter()
        .filter(|a| a.write)
        .map(|a| a.array)
        .collect();
    let mut out = Vec::new();
    for name in names {
        let Some(array) = arrays.iter().find(|a| a.name == name) else {
            continue;
        };
        if w.declared.contains(name) || !fits(array) {
            continue;
        }
        let of_x: Vec<&Access> = w.accesses.iter().filter(|a| a.array == name).collect();
        if of_x
            .iter()
            .any(|a| a.indices.iter().any(|i| i.mentions(&l.var)))
        {
            continue;
        }
        let boxes: Vec<(Vec<BoxDim>, usize, &Access)> = of_x
            .iter()
            .filter_map(|a| box_of(a, &w).map(|(b, prefix)| (b, prefix, *a)))
            .collect();
        if boxes.is_empty() {
            continue;
        }
        let covered = of_x.iter().all(|a| {
            boxes.iter().any(|(b, prefix, by)| {
                same_prefix(a, by, *prefix)
                    && in_box(a, b)
                    && (a.write || written_before(a, b, *prefix, by, &w))
            })
        });
        if covered {
            let mut unique: Vec<WrittenBox> = Vec::new();
            for (dims, prefix, by) in boxes {
                let b = WrittenBox {
                    dims,
                    runs_if: by.path[..prefix].iter().map(|l| runs(l)).collect(),
                };
                if !unique.contains(&b) {
                    unique.push(b);
                }
            }
            out.push(PrivateArray {
                name: name.to_string(),
                boxes: unique,
            });
        }
    }
    out
}

fn fits(a: &Array) -> bool {
    a.bytes().is_some_and(|b| b <= MAX_PRIVATE_BYTES)
}

/// `l` has at least one iteration.
fn runs(l: &Loop) -> Expr {
    Expr::Binary {
        op: match l.cmp {
            LoopCmp::Lt => crate::program::BinOp::Lt,
            LoopCmp::Le => crate::program::BinOp::Le,
            LoopCmp::Gt => crate::program::BinOp::Gt,
            LoopCmp::Ge => crate::program::BinOp::Ge,
        },
        lhs: Box::new(l.init.clone()),
        rhs: Box::new(l.bound.clone()),
    }
}

/// Whether `a` runs inside the first `prefix` loops of `by`'s way (the same loops).
fn same_prefix(a: &Access, by: &Access, prefix: usize) -> bool {
    a.path.len() >= prefix
        && a.path[..prefix]
            .iter()
            .zip(&by.path[..prefix])
            .all(|(x, y)| x.id == y.id)
}

/// The box an unconditional write covers, if it is one, with the number of loops on
/// its way that walk no dimension (they come first, and must run).
fn box_of(a: &Access, w: &Walk) -> Option<(Vec<BoxDim>, usize)> {
    if !a.target || a.under_if {
        return None;
    }
    let mut used = Vec::new();
    let mut dims = Vec::new();
    for i in a.indices {
        match a
            .path
            .iter()
            .find(|l| matches!(i, Expr::Var(v) if *v == l.var))
        {
            Some(l) => {
                if l.step != 1
                    || used.contains(&l.id)
                    || !w.invariant(&l.init)
                    || !w.invariant(&l.bound)
                {
                    return None;
                }
                used.push(l.id);
                dims.push(BoxDim::Range {
                    init: l.init.clone(),
                    cmp: l.cmp,
                    bound: l.bound.clone(),
                    var_dtype: l.var_dtype,
                });
            }
            None if w.invariant(i) => dims.push(BoxDim::Point(i.clone())),
            None => return None,
        }
    }
    // Below the loops that walk no dimension, every loop walks one: the write runs for
    // every element of the box in every iteration of those outer loops.
    let prefix = a.path.iter().take_while(|l| !used.contains(&l.id)).count();
    let rest_used = a.path[prefix..].iter().all(|l| used.contains(&l.id));
    let outer_fixed = a.path[..prefix]
        .iter()
        .all(|l| w.invariant(&l.init) && w.invariant(&l.bound));
    (rest_used && outer_fixed).then_some((dims, prefix))
}

/// The loop of `a`'s path whose variable is subscript `i`.
fn loop_of<'a>(a: &Access<'a>, i: &Expr) -> Option<&'a Loop> {
    a.path
        .iter()
        .rev()
        .find(|l| matches!(i, Expr::Var(v) if *v == l.var))
        .copied()
}

/// Whether every element `a` touches lies in box `b`.
fn in_box(a: &Access, b: &[BoxDim]) -> bool {
    a.indices.len() == b.len()
        && a.indices.iter().zip(b).all(|(i, d)| match d {
            BoxDim::Point(p) => i == p,
            BoxDim::Range {
                init, cmp, bound, ..
            } => loop_of(a, i).is_some_and(|l| {
                l.step == 1 && l.init == *init && l.cmp == *cmp && l.bound == *bound
            }),
        })
}

/// Whether the elements read by `a` were written by `by` (box `b`) earlier in the same
/// iteration.
fn written_before(a: &Access, b: &[BoxDim], prefix: usize, by: &Access, w: &Walk) -> bool {
    // After the box's whole loop nest (within the same iteration of the loops around it).
    let end = by
        .path
        .get(prefix)
        .and_then(|l| w.loop_end.get(&l.id).copied())
        .unwrap_or(by.seq);
    if a.seq > end {
        return true;
    }
    // Inside the box's loops, at the current element, after the write.
    a.seq > by.seq
        && a.indices
            .iter()
            .zip(b)
            .zip(by.indices)
            .all(|((i, d), j)| match d {
                BoxDim::Point(_) => true,
                BoxDim::Range { .. } => {
                    i == j && loop_of(a, i).map(|l| l.id) == loop_of(by, j).map(|l| l.id)
                }
            })
}

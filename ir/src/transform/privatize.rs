//! Private copies of the arrays each iteration of a loop writes before it reads
//! (see [`crate::private_arrays`]), made when the loop is parallelized: a local copy
//! declared at the top of the body takes every access, and the last iteration copies
//! what it wrote back, so the array ends as the sequential loop leaves it.

use super::*;
use crate::private_arrays::{BoxDim, WrittenBox};
use crate::program::Pos;

pub(crate) fn privatize_arrays(l: &mut Loop, cx: &mut Ctx) -> Result<(), Refusal> {
    // What the analysis of the nest as it stands found for this loop.
    let private = cx.an.private_arrays.get(&l.id).cloned().unwrap_or_default();
    for p in private {
        let Some(array) = cx.arrays.iter().find(|a| a.name == p.name).cloned() else {
            return Err(cx.na(format!("array '{}' is not declared", p.name)));
        };
        let copy = cx.fresh(&format!("{}_p", p.name));
        rewrite_nodes(&mut l.body, &mut |e| match e {
            Expr::Access { array, indices } if *array == p.name => Some(Expr::Access {
                array: copy.clone(),
                indices: indices.clone(),
            }),
            _ => None,
        });
        l.body.insert(
            0,
            Node::Decl(Decl {
                name: copy.clone(),
                dtype: array.dtype,
                dims: array.dims.clone(),
                init: None,
                pos: l.pos,
            }),
        );
        let copy_back: Vec<Node> = p
            .boxes
            .iter()
            .map(|b| copy_box(b, &p.name, &copy, l.pos, cx))
            .collect();
        l.body.push(Node::If(If {
            cond: last_iteration(l),
            then_body: copy_back,
            else_body: Vec::new(),
            pos: l.pos,
        }));
        cx.new_arrays.push(Array {
            name: copy,
            local: true,
            flat: false,
            rows: false,
            restrict: false,
            source: None,
            ..array
        });
    }
    Ok(())
}

/// `l`'s variable is at its last iteration (`l` steps forwards).
fn last_iteration(l: &Loop) -> Expr {
    let next = Expr::Binary {
        op: BinOp::Add,
        lhs: Box::new(Expr::Var(l.var.clone())),
        rhs: Box::new(Expr::int(l.step)),
    };
    Expr::Binary {
        op: if l.cmp == LoopCmp::Le {
            BinOp::Gt
        } else {
            BinOp::Ge
        },
        lhs: Box::new(next),
        rhs: Box::new(l.bound.clone()),
    }
}

/// `array[...] = copy[...]` over the box, under the conditions that it was written.
fn copy_box(b: &WrittenBox, array: &str, copy: &str, pos: Pos, cx: &mut Ctx) -> Node {
    let mut indices = Vec::new();
    let mut loops = Vec::new();
    for d in &b.dims {
        match d {
            BoxDim::Point(e) => indices.push(e.clone()),
            BoxDim::Range {
                init,
                cmp,
                bound,
                var_dtype,
            } => {
                let var = cx.fresh(&format!("{array}_i"));
                indices.push(Expr::Var(var.clone()));
                loops.push(Loop {
                    id: 0,
                    var,
                    var_dtype: *var_dtype,
                    declares_var: true,
                    init: init.clone(),
                    cmp: *cmp,
                    bound: bound.clone(),
                    step: 1,
                    kind: LoopKind::Map,
                    body: Vec::new(),
                    pos,
                    end: pos,
                    directives: Vec::new(),
                    private_arrays: Vec::new(),
                });
            }
        }
    }
    let assign = Node::Assign(Assign {
        id: 0,
        target: Expr::Access {
            array: array.to_string(),
            indices: indices.clone(),
        },
        op: AssignOp::Set,
        value: Expr::Access {
            array: copy.to_string(),
            indices,
        },
        pos,
    });
    let mut node = assign;
    for mut l in loops.into_iter().rev() {
        l.body = vec![node];
        node = Node::Loop(l);
    }
    match b.runs_if.iter().cloned().reduce(|a, c| Expr::Binary {
        op: BinOp::And,
        lhs: Box::new(a),
        rhs: Box::new(c),
    }) {
        Some(cond) => Node::If(If {
            cond,
            then_body: vec![node],
            else_body: Vec::new(),
            pos,
        }),
        None => node,
    }
}

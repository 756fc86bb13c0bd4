//! Rule-made candidates of [`Pipeline::apply`] for loop orders that walk memory across
//! rows: a perfect band whose innermost loop moves a subscript other than the last of
//! its accesses (`for j { for k { w[k][j] += ... } }`, a column at a time) is also
//! tried with the loop that moves only last subscripts innermost (`for k { for j }`:
//! unit stride), whatever the database holds: with the outermost parallel loop of the
//! new order parallelized and its innermost loop vectorized, as the interchange alone,
//! and with the parallel loop only, in this order (the likeliest first: where the
//! nest's budget leaves one slot to the rule, it is the fullest recipe, whose form on
//! one thread `pipeline/serial.rs` measures where a team's start costs too much). Code written outside PolyBench's form walks matrices of rows
//! this way often (a weight update over `float **w`); the database holds few such
//! nests, so transfer alone rarely proposes the interchange.
//!
//! An interchange that the dependences forbid is not proposed.

use super::*;
use ir::program::{Expr, Loop, LoopKind, Node};
use ir::transform::Step;

/// The chain of perfectly nested loops from `root` down (each body one loop), while the
/// last one's body holds no loop.
fn band(root: &Loop) -> Option<Vec<&Loop>> {
    let mut out = vec![root];
    let mut cur = root;
    while let [Node::Loop(inner)] = cur.body.as_slice() {
        out.push(inner);
        cur = inner;
    }
    (out.len() >= 2 && ir::program::loops(&cur.body).is_empty()).then_some(out)
}

/// For each loop of `band`, how many array accesses of the band's body it moves in a
/// subscript other than the last (a stride of a row or more).
fn strided(band: &[&Loop]) -> Vec<usize> {
    let inner = band.last().expect("a band has loops");
    let mut accesses: Vec<Vec<Expr>> = Vec::new();
    let mut note = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::Access { indices, .. } = x {
                accesses.push(indices.clone());
            }
        })
    };
    ir::program::walk_nodes(&inner.body, &mut |n, _| match n {
        Node::Assign(a) => {
            note(&a.target);
            note(&a.value);
        }
        Node::If(i) => note(&i.cond),
        Node::Decl(d) => d.init.iter().for_each(&mut note),
        Node::Loop(_) | Node::Block(_) | Node::Opaque(_) => {}
    });
    band.iter()
        .map(|l| {
            accesses
                .iter()
                .filter(|idx| {
                    idx.len() >= 2 && idx[..idx.len() - 1].iter().any(|x| x.mentions(&l.var))
                })
                .count()
        })
        .collect()
}

/// The loop-order recipes to try on the nest at `root` (what the candidate is called in
/// reports, then the recipe).
pub(super) fn loop_order_recipes(
    program: &ir::Program,
    region: usize,
    root: &Loop,
) -> Vec<(String, Recipe)> {
    let Some(band) = band(root) else {
        return Vec::new();
    };
    let cost = strided(&band);
    let last = band.len() - 1;
    // The loop that strides least, innermost; the current innermost wins ties.
    let best = (0..band.len())
        .min_by_key(|&d| (cost[d], d != last))
        .expect("a band has loops");
    if best == last || cost[best] >= cost[last] {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..band.len()).filter(|&d| d != best).collect();
    order.push(best);
    let interchange = Step::Interchange { at: 0, order };
    let Ok(t) = ir::transform::apply(
        program,
        region,
        root.id,
        &Recipe {
            steps: vec![interchange.clone()],
        },
    ) else {
        return Vec::new();
    };
    let Some(new_band) = self::band(&t.root) else {
        return Vec::new();
    };
    let name = |l: &Loop| l.var.clone();
    let order_text = new_band
        .iter()
        .map(|l| name(l))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = vec![(
        format!("loop order {order_text}: rows walked with unit stride"),
        Recipe {
            steps: vec![interchange.clone()],
        },
    )];
    if let Some(p) = new_band.iter().position(|l| l.kind == LoopKind::Map) {
        let parallel = Step::Parallelize {
            at: p,
            schedule: ir::transform::Schedule::Static,
            chunk: None,
            collapse: None,
        };
        out.push((
            format!(
                "loop order {order_text}, loop {} parallel",
                name(new_band[p])
            ),
            Recipe {
                steps: vec![interchange.clone(), parallel.clone()],
            },
        ));
        let inner = new_band.len() - 1;
        if p != inner && new_band[inner].kind == LoopKind::Map {
            out.push((
                format!(
                    "loop order {order_text}, loop {} parallel, loop {} vectorized",
                    name(new_band[p]),
                    name(new_band[inner])
                ),
                Recipe {
                    steps: vec![
                        interchange,
                        parallel,
                        Step::Vectorize {
                            at: inner,
                            width: None,
                        },
                    ],
                },
            ));
        }
    }
    // The fullest (built last) first, then the interchange alone, then the rest.
    out.rotate_right(1);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(name: &str, text: &str) -> ir::Program {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(format!("{name}.c"));
        std::fs::write(&file, text).unwrap();
        ir::load(file.to_str().unwrap(), &ir::FrontendOptions::default())
            .unwrap()
            .program
    }

    fn roots(p: &ir::Program) -> Vec<&Loop> {
        p.regions[0]
            .body
            .iter()
            .filter_map(|n| match n {
                Node::Loop(l) => Some(l),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_column_walk_over_rows_is_tried_with_unit_stride() {
        let p = program(
            "columns",
            "void adjust(float *delta, int nd, float *ly, int nl, float **w, float **oldw)\n\
             {\n  int j, k;\n  float d;\n  for (j = 1; j <= nd; j++)\n    for (k = 0; k <= nl; k++) {\n\
                   d = 0.3f * delta[j] * ly[k] + 0.3f * oldw[k][j];\n      w[k][j] += d;\n\
                   oldw[k][j] = d;\n    }\n  for (k = 0; k <= nl; k++)\n    for (j = 1; j <= nd; j++)\n\
                   w[k][j] *= 0.5f;\n}\n",
        );
        let r = roots(&p);
        let got = loop_order_recipes(&p, 0, r[0]);
        let names: Vec<&str> = got.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(
            names,
            [
                "loop order k, j, loop k parallel, loop j vectorized",
                "loop order k, j: rows walked with unit stride",
                "loop order k, j, loop k parallel",
            ]
        );
        assert_eq!(
            got[0].1.steps,
            vec![
                Step::Interchange {
                    at: 0,
                    order: vec![1, 0]
                },
                Step::Parallelize {
                    at: 0,
                    schedule: ir::transform::Schedule::Static,
                    chunk: None,
                    collapse: None
                },
                Step::Vectorize { at: 1, width: None },
            ]
        );
        // Rows already walked with unit stride: nothing to propose.
        assert!(loop_order_recipes(&p, 0, r[1]).is_empty());
    }
}

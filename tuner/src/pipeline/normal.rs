//! A whole nest in its normal form, run in parallel. Under a sequential loop, a loop
//! whose body holds several loops over the columns of a matrix walks each column from
//! top to bottom, a row apart per step (gramschmidt's `for j { R[k][j] = Q^T A[:][j];
//! A[:][j] -= Q[:][k] R[k][j] }`). The nest's normal form (`ir::normalize`: maximal
//! legal fission, then every perfect band in stride order) splits such a loop over its
//! parts and puts the row loop outside each (`for i { for j { R[k][j] += ... } }`: unit
//! stride, each element's sum still added in the order of `i`). Where the normal form
//! splits a loop, three recipes are tried on the whole nest: its steps alone; then, of
//! the loops it leaves, each outermost parallel loop below the root with a loop inside
//! parallelized (a team per such loop, none for a single statement's loop); then each
//! innermost parallel loop not run by the team vectorized as well.

use ir::program::{Loop, LoopKind, Node, Schedule};
use ir::transform::{Recipe, Step};

/// The rule's name, where reports say where a candidate comes from.
pub(super) const NORMAL_FORM: &str = "normal-form rule";

/// The rule's recipes for the whole nest rooted at loop `root` of region `region`,
/// each `(what, recipe)`; none where its normal form splits no loop.
pub(super) fn normal_form_recipes(
    program: &ir::Program,
    region: usize,
    root: usize,
) -> Vec<(String, Recipe)> {
    let Some(normal) = ir::normalize::normalize(program, region, root) else {
        return Vec::new();
    };
    if !normal
        .recipe
        .steps
        .iter()
        .any(|s| matches!(s, Step::Fission { .. }))
    {
        return Vec::new();
    }
    let mut parallel = Vec::new();
    let mut vector = Vec::new();
    let mut at = 0;
    walk(
        &normal.root,
        true,
        false,
        &mut at,
        &mut parallel,
        &mut vector,
    );
    let mut out = vec![("the normal form".to_string(), normal.recipe.clone())];
    if parallel.is_empty() {
        return out;
    }
    let mut steps = normal.recipe.steps.clone();
    steps.extend(parallel.iter().map(|&at| Step::Parallelize {
        at,
        schedule: Schedule::Static,
        chunk: None,
        collapse: None,
    }));
    out.push((
        "the normal form, its outer parallel loops parallelized".to_string(),
        Recipe {
            steps: steps.clone(),
        },
    ));
    if !vector.is_empty() {
        steps.extend(vector.iter().map(|&at| Step::Vectorize { at, width: None }));
        out.push((
            "the normal form, parallel and vectorized".to_string(),
            Recipe { steps },
        ));
    }
    out
}

/// Visits `l` (preorder position `*at`) and the loops inside it: the outermost
/// parallel loops with a loop inside go to `parallel`, innermost parallel loops outside
/// those to `vector`. `root`: `l` is the whole nest's root (never parallelized, its
/// sequential loop is why the nest is whole); `team`: a loop around `l` is parallel.
fn walk(
    l: &Loop,
    root: bool,
    team: bool,
    at: &mut usize,
    parallel: &mut Vec<usize>,
    vector: &mut Vec<usize>,
) {
    let here = *at;
    *at += 1;
    let inner: Vec<&Loop> = l
        .body
        .iter()
        .filter_map(|n| match n {
            Node::Loop(x) => Some(x),
            _ => None,
        })
        .collect();
    let nested = ir::program::loops(&l.body).len();
    let map = l.kind == LoopKind::Map && !root;
    let mut team_here = team;
    if map && !team && nested > 0 {
        parallel.push(here);
        team_here = true;
    } else if map && !team && nested == 0 {
        vector.push(here);
    }
    // Loops under an `if` or in a block of the body.
    let hidden = l.body.iter().any(|n| {
        !matches!(n, Node::Loop(_)) && !ir::program::loops(std::slice::from_ref(n)).is_empty()
    });
    if !hidden {
        for x in inner {
            walk(x, false, team_here, at, parallel, vector);
        }
    } else {
        // Loops under `if` or blocks: positions still advance over every loop inside,
        // none is proposed.
        *at += nested;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> ir::Program {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("gs.c");
        std::fs::write(&file, text).unwrap();
        ir::load(file.to_str().unwrap(), &ir::FrontendOptions::default())
            .unwrap()
            .program
    }

    #[test]
    fn a_column_loop_under_a_sequential_loop_is_split_and_walks_rows() {
        let p = program(
            "#define M 40\n#define N 30\n\
             void gs(double A[M][N], double R[N][N], double Q[M][N]) {\n\
             #pragma scop\n\
             for (int k = 0; k < N; k++) {\n\
               for (int i = 0; i < M; i++) Q[i][k] = A[i][k] * 0.5;\n\
               for (int j = k + 1; j < N; j++) {\n\
                 R[k][j] = 0.0;\n\
                 for (int i = 0; i < M; i++) R[k][j] += Q[i][k] * A[i][j];\n\
                 for (int i = 0; i < M; i++) A[i][j] -= Q[i][k] * R[k][j];\n\
               }\n\
             }\n\
             #pragma endscop\n\
             }\n",
        );
        let root = p.regions[0].body.iter().find_map(|n| match n {
            Node::Loop(l) => Some(l.id),
            _ => None,
        });
        let got = normal_form_recipes(&p, 0, root.unwrap());
        assert_eq!(got.len(), 3, "{got:?}");
        for (what, r) in &got {
            let t = ir::transform::apply(&p, 0, root.unwrap(), r)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            // After the split, every loop over `j` is innermost: rows at unit stride.
            for l in ir::program::loops(&t.root.body) {
                if l.var == "j" {
                    assert!(ir::program::loops(&l.body).is_empty(), "{what}");
                }
            }
        }
        let par = got[1]
            .1
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Parallelize { .. }))
            .count();
        assert!(par >= 1, "{:?}", got[1]);
    }
}

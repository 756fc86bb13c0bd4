//! [`Target`]: the nest a tuning loop works on, and the loop positions that spaces and
//! strategies name (a recipe step refers to a loop by its position in preorder).

use ir::program::{Loop, Node, Program};
use ir::transform::{apply, Recipe};

/// A nest of a program: its region and the id of its root loop.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The program.
    pub program: &'a Program,
    /// The region of the nest.
    pub region: usize,
    /// The id of the nest's root loop.
    pub root: usize,
}

impl<'a> Target<'a> {
    /// The nest `nest` of `program`.
    pub fn of(program: &'a Program, nest: &ir::codegen::Nest) -> Target<'a> {
        Target {
            program,
            region: nest.region,
            root: nest.root,
        }
    }

    /// The nest's root loop after `recipe`, or None when the recipe does not apply.
    pub fn current(&self, recipe: &Recipe) -> Option<Loop> {
        apply(self.program, self.region, self.root, recipe)
            .ok()
            .map(|t| t.root)
    }

    /// Whether every step of `recipe` applies legally.
    pub fn legal(&self, recipe: &Recipe) -> bool {
        apply(self.program, self.region, self.root, recipe).is_ok()
    }
}

pub use ir::program::preorder;

/// Depth of the perfectly nested band starting at `l`.
pub fn band_depth(l: &Loop) -> usize {
    let mut d = 1;
    let mut cur = l;
    while let [Node::Loop(inner)] = cur.body.as_slice() {
        d += 1;
        cur = inner;
    }
    d
}

/// (position, length) of every perfectly nested band of 1..=3 loops.
pub fn bands(root: &Loop) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (p, l) in preorder(root).iter().enumerate() {
        for m in 1..=band_depth(l).min(3) {
            out.push((p, m));
        }
    }
    out
}

/// Innermost loops of a nest with their positions.
pub fn innermost(root: &Loop) -> Vec<(usize, &Loop)> {
    preorder(root)
        .into_iter()
        .enumerate()
        .filter(|(_, l)| ir::program::loops(&l.body).is_empty())
        .collect()
}

/// gemm of the shipped datasets at MINI, parsed, and its one nest: the test nest.
#[cfg(test)]
pub(crate) fn gemm_mini() -> (Program, ir::codegen::Nest) {
    let p = dataset_mini("gemm");
    let n = ir::codegen::nests(&p).remove(0);
    (p, n)
}

/// The shipped dataset program `name` at MINI, parsed.
#[cfg(test)]
pub(crate) fn dataset_mini(name: &str) -> Program {
    let path = format!(
        "{}/../datasets/programs/{name}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let opts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    ir::load(&path, &opts).unwrap().program
}

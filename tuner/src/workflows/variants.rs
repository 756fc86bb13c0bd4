//! Loop-order variants of a suite: `tune db variants`. The same computations written
//! with their loops in other orders, as users write them, so that the database holds
//! nests whose spelling differs from the suite's and retrieval can be judged on them.
//!
//! For every nest of every program and every perfectly nested band of two or three
//! loops in it, each other order of the band that the dependences allow
//! (`Step::Interchange` through `transform::apply`) gives one program: the suite's source
//! with that one nest rewritten (`ir::emit`, everything else byte for byte). A variant
//! is named `ORIGIN@nestK-bP-ORDER` (`db::origin` reads the origin back, so that
//! leave-one-program-out holds a program out with its variants). A nest whose printed
//! text differs between two presets (a size baked into the region) gives none.

use super::SuiteSelection;
use crate::{Error, Result};
use datasets::{Preset, Suite};
use ir::transform::{apply, Recipe, Step};
use std::path::{Path, PathBuf};

/// Loops of a band whose orders are written (longer bands: their innermost three).
const MAX_BAND: usize = 3;

/// One variant program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// `ORIGIN@nestK-bP-ORDER`.
    pub name: String,
    /// The program it is a variant of.
    pub origin: String,
    /// The nest it changed.
    pub nest: String,
    /// Its source.
    pub source: String,
}

/// Every order of `0..n` but the identity.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = crate::space::tree::permutations(n);
    out.retain(|p| p.iter().enumerate().any(|(i, x)| i != *x));
    out
}

fn parse(suite: &Suite, p: &datasets::Program, preset: Preset) -> Result<ir::Program> {
    let args = profiling::cc::CcArgs::parse(&suite.args(p, preset))?;
    let opts = ir::FrontendOptions {
        flags: args.cflags.clone(),
        ..Default::default()
    };
    Ok(ir::load(&suite.path_of(p).display().to_string(), &opts)?.program)
}

/// The loop-order variants of one program of `suite` (parsed at two presets, which
/// must print alike).
pub fn variants_of(suite: &Suite, p: &datasets::Program) -> Result<Vec<Variant>> {
    let a = parse(suite, p, Preset::Mini)?;
    let b = parse(suite, p, Preset::Small)?;
    let path = suite.path_of(p);
    let text = std::fs::read_to_string(&path).map_err(Error::read(&path))?;
    let mut out = Vec::new();
    for nest in ir::codegen::nests(&a) {
        let Some(root) = a.find_loop(nest.region, nest.root) else {
            continue;
        };
        for (start, len) in ir::normalize::band_starts(root) {
            if len < 2 {
                continue;
            }
            let m = len.min(MAX_BAND);
            let at = start + len - m;
            for order in permutations(m) {
                let recipe = Recipe {
                    steps: vec![Step::Interchange {
                        at,
                        order: order.clone(),
                    }],
                };
                let write = |prog: &ir::Program| -> Option<String> {
                    let t = apply(prog, nest.region, nest.root, &recipe).ok()?;
                    ir::emit::tuned_source(&text, &t.program, prog, &[(nest.region, nest.root)])
                        .ok()
                };
                let (Some(x), Some(y)) = (write(&a), write(&b)) else {
                    continue;
                };
                if x != y {
                    continue;
                }
                let tag: String = order.iter().map(|d| d.to_string()).collect();
                out.push(Variant {
                    name: format!("{}@{}-b{at}-{tag}", p.name, nest.name),
                    origin: p.name.clone(),
                    nest: nest.name.clone(),
                    source: x,
                });
            }
        }
    }
    Ok(out)
}

/// Writes the variants of the selected programs as a suite in `dir` (`suite.json`,
/// `programs/`, with the files beside the original programs that they include); returns
/// the manifest's path and how many variants.
pub fn write_variants(sel: &SuiteSelection, dir: &Path) -> Result<(PathBuf, usize)> {
    let suite = sel.load()?;
    let progdir = dir.join("programs");
    std::fs::create_dir_all(&progdir).map_err(Error::write(&progdir))?;
    let mut programs = Vec::new();
    let mut copied: Vec<PathBuf> = Vec::new();
    for p in sel.programs(&suite) {
        let src = suite.path_of(p);
        // Headers beside the program (`#include "common.h"`) go along.
        if let Some(folder) = src.parent() {
            if !copied.iter().any(|c| c == folder) {
                for f in std::fs::read_dir(folder)
                    .map_err(Error::read(folder))?
                    .flatten()
                {
                    let path = f.path();
                    if path.extension().is_some_and(|e| e == "h") {
                        let to = progdir.join(f.file_name());
                        std::fs::copy(&path, &to).map_err(Error::write(&to))?;
                    }
                }
                copied.push(folder.to_path_buf());
            }
        }
        for v in variants_of(&suite, p)? {
            let file = format!("programs/{}.c", v.name.replace('@', "_at_"));
            let path = dir.join(&file);
            std::fs::write(&path, &v.source).map_err(Error::write(&path))?;
            programs.push(datasets::Program {
                name: v.name,
                file,
                family: p.family.clone(),
                flags: p.flags.clone(),
                verdicts: String::new(),
                nests: vec![v.nest],
            });
        }
    }
    let n = programs.len();
    let out = Suite {
        name: format!("{}-variants", suite.name),
        description: format!(
            "{n} loop-order variants of {} (tune db variants): each program is one of the \
             suite's with one nest's perfect band in another legal order",
            suite.name
        ),
        presets: suite.presets.clone(),
        preset_flag: suite.preset_flag.clone(),
        programs,
        dir: dir.to_path_buf(),
    };
    let path = dir.join("suite.json");
    let mut text = serde_json::to_string_pretty(&out).expect("a suite serializes");
    text.push('\n');
    std::fs::write(&path, text).map_err(Error::write(&path))?;
    Ok((path, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_leave_out_the_identity() {
        assert_eq!(permutations(2), vec![vec![1, 0]]);
        let three = permutations(3);
        assert_eq!(three.len(), 5);
        assert!(!three.contains(&vec![0, 1, 2]));
        assert!(three.contains(&vec![2, 0, 1]));
    }
}

//! `datasets`: the benchmark programs of the project and their suite manifests.
//!
//! A suite (`datasets/suite.json`) lists programs with their family, flags and the file
//! of expected loop verdicts; a preset (MINI .. EXTRALARGE) picks the problem size with
//! `-D<PRESET>_DATASET`. The programs are plain C files under `datasets/programs/`,
//! written by this project from the algorithms' mathematics. [`synth`] generates more,
//! seeded and in the same conventions, as training data for the embedding model.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub mod synth;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {message}")]
    Manifest { path: String, message: String },
    #[error("unknown preset '{0}' (expected MINI, SMALL, MEDIUM, LARGE or EXTRALARGE)")]
    Preset(String),
}

/// Problem sizes, smallest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Preset {
    Mini,
    Small,
    Medium,
    Large,
    Extralarge,
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::Mini,
        Preset::Small,
        Preset::Medium,
        Preset::Large,
        Preset::Extralarge,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Mini => "MINI",
            Preset::Small => "SMALL",
            Preset::Medium => "MEDIUM",
            Preset::Large => "LARGE",
            Preset::Extralarge => "EXTRALARGE",
        }
    }

    /// The `-D` flag that selects this preset.
    pub fn flag(self) -> String {
        format!("-D{}_DATASET", self.name())
    }

    pub fn parse(s: &str) -> Result<Preset, Error> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::Preset(s.to_string()))
    }
}

/// One program of a suite.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Program {
    pub name: String,
    /// Path relative to the manifest's folder.
    pub file: String,
    pub family: String,
    /// Extra cc flags (e.g. `-lm`).
    pub flags: Vec<String>,
    /// Expected loop verdicts, relative to the manifest's folder; empty when the suite
    /// has no verdict tables (generated suites, see [`synth`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub verdicts: String,
    /// The nests that database builds search (all when empty): a loop-order variant
    /// names the one nest it changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nests: Vec<String>,
}

/// A suite manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Suite {
    pub name: String,
    pub description: String,
    pub presets: Vec<Preset>,
    pub preset_flag: String,
    pub programs: Vec<Program>,
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Suite {
    /// The suite shipped in this repository.
    pub fn core() -> Result<Suite, Error> {
        Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("suite.json"))
    }

    pub fn load(path: &Path) -> Result<Suite, Error> {
        let err = |message: String| Error::Manifest {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let mut suite: Suite = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
        suite.dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for p in &suite.programs {
            if !suite.dir.join(&p.file).is_file() {
                return Err(err(format!(
                    "program '{}': {} does not exist",
                    p.name, p.file
                )));
            }
        }
        Ok(suite)
    }

    pub fn program(&self, name: &str) -> Option<&Program> {
        self.programs.iter().find(|p| p.name == name)
    }

    pub fn path_of(&self, p: &Program) -> PathBuf {
        self.dir.join(&p.file)
    }

    /// cc-style arguments for one program at one preset: `FILE.c -D<PRESET>_DATASET -lm`.
    pub fn args(&self, p: &Program, preset: Preset) -> Vec<String> {
        let mut v = vec![self.path_of(p).display().to_string(), preset.flag()];
        v.extend(p.flags.iter().cloned());
        v
    }

    /// The expected verdict table of a program (see [`verdict_table`]).
    pub fn expected_verdicts(&self, p: &Program) -> Result<String, Error> {
        if p.verdicts.is_empty() {
            return Err(Error::Manifest {
                path: self.dir.join("suite.json").display().to_string(),
                message: format!("program '{}' has no verdict table", p.name),
            });
        }
        let path = self.dir.join(&p.verdicts);
        std::fs::read_to_string(&path).map_err(|e| Error::Manifest {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }
}

/// The loops of every region, one per line in source order, indented two spaces per
/// depth: `<var> parallel|reduction|sequential`. The format of `datasets/verdicts/*.txt`.
pub fn verdict_table(program: &ir::Program) -> String {
    let mut out = String::new();
    for r in &program.regions {
        ir::program::walk_nodes(&r.body, &mut |n, enclosing| {
            if let ir::Node::Loop(l) = n {
                out.push_str(&"  ".repeat(enclosing.len()));
                out.push_str(&format!("{} {}\n", l.var, l.kind.verdict()));
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_suite_covers_every_family() {
        let s = Suite::core().unwrap();
        assert_eq!(s.programs.len(), 29);
        for fam in [
            "blas",
            "kernels",
            "solvers",
            "datamining",
            "stencils",
            "medley",
        ] {
            assert!(s.programs.iter().any(|p| p.family == fam), "{fam}");
        }
        for p in &s.programs {
            let v = s.expected_verdicts(p).unwrap();
            assert!(v.lines().count() >= 1, "{}", p.name);
        }
        let gemm = s.program("gemm").unwrap();
        assert_eq!(s.args(gemm, Preset::Small)[1], "-DSMALL_DATASET");
        assert_eq!(Preset::parse("large").unwrap(), Preset::Large);
        assert!(Preset::parse("huge").is_err());
    }
}

//! [`ProgramSpec`]: a program to tune, as the compiler would be given it. One type for
//! `tune apply`, every program of a batch, and the programs a benchmark times.

use crate::{Error, Result};
use profiling::cc::CcArgs;
use serde::{Deserialize, Serialize};

/// A program: its name, cc-style arguments (the source holding the region(s) first,
/// then flags and further `.c` files), and how to run it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramSpec {
    /// Unique within a batch (the folder of its results); the source's stem by default.
    pub name: String,
    /// cc-style arguments as given, the source with the region(s) first.
    pub args: Vec<String>,
    /// Tune this function's body instead of `#pragma scop` regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Functions of the user's assumed pure: calls to them may stand inside nests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assume_pure: Vec<String>,
    /// Arguments for the program itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program_args: Vec<String>,
}

impl ProgramSpec {
    /// From cc-style arguments, e.g. `["gemm.c", "-DSMALL_DATASET", "-lm"]`; named
    /// after the source's stem.
    pub fn from_args(args: &[&str]) -> Result<ProgramSpec> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let spec = ProgramSpec::named(stem(args.first().map_or("", String::as_str)), args);
        spec.cc()?;
        Ok(spec)
    }

    /// A program called `name` built with `args`.
    pub fn named(name: impl Into<String>, args: Vec<String>) -> ProgramSpec {
        ProgramSpec {
            name: name.into(),
            args,
            function: None,
            assume_pure: Vec::new(),
            program_args: Vec::new(),
        }
    }

    /// The arguments split as cc would read them.
    pub fn cc(&self) -> Result<CcArgs> {
        if self.args.is_empty() {
            return Err(Error::Usage(format!("{}: no source file given", self.name)));
        }
        Ok(CcArgs::parse(&self.args)?)
    }

    /// The source that holds the region(s).
    pub fn main_source(&self) -> &str {
        self.args.first().map_or("", String::as_str)
    }
}

impl ProgramSpec {
    /// Its `.c` files, the one holding the region(s) first.
    pub fn sources(&self) -> Result<Vec<String>> {
        let cc = self.cc()?;
        Ok(std::iter::once(cc.main).chain(cc.extra_sources).collect())
    }

    /// The same program with `source`, one of its `.c` files, as the file that holds
    /// the region(s), named after it.
    pub fn with_main(&self, source: &str) -> ProgramSpec {
        let mut args: Vec<String> = self.args.iter().filter(|a| *a != source).cloned().collect();
        args.insert(0, source.to_string());
        ProgramSpec {
            name: stem(source),
            args,
            ..self.clone()
        }
    }
}

/// The file stem of a path, or `program`.
pub fn stem(path: &str) -> String {
    std::path::Path::new(path)
        .file_stem()
        .map_or("program".into(), |s| s.to_string_lossy().into_owned())
}

//! `ir`: the program as `tune` sees it.
//!
//! C source goes in through [`frontend`] (system preprocessor + `lang-c`), becomes a
//! loop tree ([`program`]), gets loop verdicts from [`deps`] (parallel, reduction,
//! sequential, with direction vectors), is checked by [`verify`], and comes back out as
//! C through [`print`] and [`codegen`]. This crate never runs a compiler other than the
//! preprocessor, and never runs generated code.

pub mod affine;
pub mod canonical;
pub mod codegen;
pub mod counts;
pub mod deps;
pub mod emit;
pub mod error;
pub mod flat;
pub mod frontend;
pub mod interp;
pub mod macros;
pub mod normalize;
pub mod print;
pub mod private_arrays;
pub mod program;
pub mod source;
pub mod transform;
pub mod verify;

pub use error::{Error, Location, Result};
pub use frontend::{parse_file, FrontendOptions, Parsed};
pub use program::{DType, Loop, LoopKind, Node, Program, Region};

/// Parses `file` and runs dependence analysis: the usual entry point.
pub fn load(file: &str, opts: &FrontendOptions) -> Result<Parsed> {
    let mut parsed = parse_file(file, opts)?;
    deps::annotate(&mut parsed.program);
    Ok(parsed)
}

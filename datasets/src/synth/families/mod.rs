//! The families. Each writes its region into the context and declares its sizes,
//! scalars and arrays; `render` turns that into a program.

use super::context::*;
use super::Family;

mod contraction;
mod linalg;
mod path;
mod pointwise;
mod reduction;
mod stencil;
mod symmetric;

use contraction::contraction;
use linalg::{matmul, matvec, outer, triangular};
use path::path;
use pointwise::{copy, elementwise};
use reduction::reduction;
use stencil::stencil;
use symmetric::symmetric;

/// Writes one program of `family` into `cx`.
pub(super) fn write(family: Family, cx: &mut Ctx) -> Sketch {
    match family {
        Family::MatMul => matmul(cx),
        Family::MatVec => matvec(cx),
        Family::Reduction => reduction(cx),
        Family::Stencil => stencil(cx),
        Family::Copy => copy(cx),
        Family::Triangular => triangular(cx),
        Family::Elementwise => elementwise(cx),
        Family::Outer => outer(cx),
        Family::Contraction => contraction(cx),
        Family::Path => path(cx),
        Family::Symmetric => symmetric(cx),
    }
}

//! The builder seam: from a recipe to an executable of the nest's cutout. Legality is
//! decided here (the recipe is applied to the nest), and a compile error is an
//! outcome of the candidate, never an error of the tuning.

use crate::target::Target;
use crate::Result;
use ir::transform::{apply, Recipe};
use profiling::build::Toolchain;
use profiling::cutout::Cutout;
use std::path::PathBuf;

/// What became of building one recipe.
#[derive(Debug, Clone, PartialEq)]
pub enum Built {
    /// An executable of the transformed nest.
    Exe(PathBuf),
    /// The recipe does not apply legally to the nest (why).
    Refused(String),
    /// The generated code did not compile (the compiler's first error).
    Failed(String),
}

/// Builds variants of one nest.
pub trait Builder: Sync {
    /// The nest's executable with `recipe` applied (the untransformed nest for the
    /// empty recipe).
    fn build(&self, recipe: &Recipe) -> Result<Built>;
}

/// Builds a nest's cutout (the nest alone on its saved data) with a toolchain, cached
/// by content under `dir`.
pub struct CutoutBuilder<'a> {
    /// The nest.
    pub target: Target<'a>,
    /// The nest alone on its saved data.
    pub cutout: &'a Cutout,
    /// The compiler and flags.
    pub toolchain: &'a Toolchain,
    /// The build cache folder.
    pub dir: PathBuf,
}

impl Builder for CutoutBuilder<'_> {
    fn build(&self, recipe: &Recipe) -> Result<Built> {
        let variant = if recipe.steps.is_empty() {
            self.cutout.original()
        } else {
            let t = self.target;
            match apply(t.program, t.region, t.root, recipe) {
                Ok(t) => self.cutout.variant("candidate", &t),
                Err(e) => return Ok(Built::Refused(e.to_string())),
            }
        };
        match self.cutout.build(self.toolchain, &variant, &self.dir) {
            Ok((b, _)) => Ok(Built::Exe(b.exe)),
            Err(profiling::Error::Compile { first_error, .. }) => Ok(Built::Failed(first_error)),
            Err(e) => Err(e.into()),
        }
    }
}

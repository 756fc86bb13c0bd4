//! The recipe space of a nest: which recipes exist. A [`Space`] draws random members
//! (every step legal on the nest as transformed so far) and, where it is small enough
//! to list, enumerates them. Strategies choose among its members.

mod staged;
pub(crate) mod tree;

pub use staged::{StagedSpace, TILE_SIZES};
pub use tree::{next_steps, TreeSpace, FACTORS};

use crate::rng::Rng;
use crate::target::Target;
use ir::transform::Recipe;

/// A recipe space.
pub trait Space: Send + Sync {
    /// One random member for the nest; every step it keeps is legal.
    fn sample(&self, t: Target, rng: &mut Rng) -> Recipe;
    /// Members in a fixed order, at most `limit`; None where the space is not listed.
    fn enumerate(&self, t: Target, limit: usize) -> Option<Vec<Recipe>>;
}

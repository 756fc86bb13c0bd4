//! The embedding model as a seam: the tuner asks an [`Embed`] for embeddings, so a
//! different model (or a fixed one in tests) can stand in for the trained [`Embedder`].

use crate::embed::{EmbedError, Embedder};
use crate::features::NestFeatures;

/// Turns nest features into embeddings.
pub trait Embed {
    /// Identifies the model, so embeddings made by different models are not compared.
    fn id(&self) -> String;

    /// One embedding per nest; `static_only` leaves out the performance features (for
    /// nests that have not been measured).
    fn embed(
        &self,
        features: &[&NestFeatures],
        static_only: bool,
    ) -> Result<Vec<Vec<f32>>, EmbedError>;
}

impl Embed for Embedder {
    fn id(&self) -> String {
        Embedder::id(self)
    }

    fn embed(
        &self,
        features: &[&NestFeatures],
        static_only: bool,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        Embedder::embed(self, features, static_only)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::one_loop_nest;
    use std::path::Path;

    #[test]
    fn the_shipped_model_embeds_through_the_trait_as_it_does_itself() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default/model");
        let model = Embedder::load(&dir).unwrap();
        let as_trait: &dyn Embed = &model;
        let nests = [one_loop_nest(), one_loop_nest()];
        let features: Vec<&NestFeatures> = nests.iter().collect();
        assert_eq!(as_trait.id(), model.id());
        for static_only in [false, true] {
            let via_trait = as_trait.embed(&features, static_only).unwrap();
            assert_eq!(via_trait, model.embed(&features, static_only).unwrap());
            assert_eq!(via_trait.len(), 2);
        }
    }
}

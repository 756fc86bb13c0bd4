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
    use crate::db::Entry;
    use crate::embed::train;
    use models::TrainOptions;

    fn entry(program: &str, tuned_s: f64) -> Entry {
        Entry {
            program: program.into(),
            nest: "nest0".into(),
            fingerprint: "f".into(),
            features: crate::features::one_loop_nest(),
            embedding: Vec::new(),
            recipes: vec![("{}".into(), 1.0 / tuned_s)],
            baseline_s: 1.0,
            tuned_s,
            machine: "m".into(),
            transfers: Vec::new(),
        }
    }

    #[test]
    fn the_trained_model_embeds_through_the_trait_as_it_does_itself() {
        let entries = [entry("a", 0.5), entry("b", 0.8)];
        let refs: Vec<&Entry> = entries.iter().collect();
        let options = TrainOptions {
            epochs: 1,
            ..TrainOptions::default()
        };
        let model = Embedder::new(train(&refs, &options).unwrap()).unwrap();
        let as_trait: &dyn Embed = &model;
        let features: Vec<&NestFeatures> = entries.iter().map(|e| &e.features).collect();
        assert_eq!(as_trait.id(), model.id());
        for static_only in [false, true] {
            let via_trait = as_trait.embed(&features, static_only).unwrap();
            assert_eq!(via_trait, model.embed(&features, static_only).unwrap());
            assert_eq!(via_trait.len(), 2);
        }
    }
}

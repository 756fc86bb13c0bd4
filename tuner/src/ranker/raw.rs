//! Nearest by raw features, each column standardized over the training entries: the
//! baseline an embedding must beat.

use super::{nearest, Query, Ranker, RankerKind};
use crate::Result;
use embeddings::db::{Database, Entry};
use embeddings::Normalizer;

/// Ranks by the distance of standardized raw feature vectors.
#[derive(Clone)]
pub struct RawFeatureRanker {
    norm: Normalizer,
    vectors: Vec<Vec<f32>>,
}

impl RawFeatureRanker {
    /// Columns standardized over `train`; every entry of `db` as a vector.
    pub fn new(train: &[&Entry], db: &Database) -> RawFeatureRanker {
        let norm = Normalizer::fit(&train.iter().map(|e| &e.features).collect::<Vec<_>>());
        let vectors = db
            .entries
            .iter()
            .map(|e| norm.apply(&e.features).flat())
            .collect();
        RawFeatureRanker { norm, vectors }
    }
}

impl Ranker for RawFeatureRanker {
    fn kind(&self) -> RankerKind {
        RankerKind::RawFeatures
    }

    fn rank(
        &mut self,
        db: &Database,
        query: Query,
        usable: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Result<Vec<(usize, f32)>> {
        let q = match query {
            Query::Nest(f) => self.norm.apply(f).flat(),
            Query::Entry(i) => self.vectors[i].clone(),
        };
        Ok(nearest(db, &q, &self.vectors, usable))
    }
}

//! Nearest by the model's embedding: the performance embedding of the nest (static,
//! performance and machine features), or its static features only.

use super::{nearest, Query, Ranker, RankerKind};
use crate::Result;
use embeddings::db::{Database, Entry};
use embeddings::Embed;

/// Ranks by embedding distance; the entries' embeddings are computed once.
#[derive(Clone)]
pub struct EmbeddingRanker<'m> {
    model: &'m dyn Embed,
    static_only: bool,
    vectors: Vec<Vec<f32>>,
}

impl<'m> EmbeddingRanker<'m> {
    /// The entries of `db` embedded by `model` with all features (the stored
    /// embeddings when this model made them), or with static features only.
    pub fn new(model: &'m dyn Embed, db: &Database, static_only: bool) -> Result<Self> {
        let vectors = if db.model == model.id() && !static_only {
            db.entries.iter().map(|e| e.embedding.clone()).collect()
        } else {
            let f: Vec<_> = db.entries.iter().map(|e| &e.features).collect();
            model.embed(&f, static_only)?
        };
        Ok(EmbeddingRanker {
            model,
            static_only,
            vectors,
        })
    }

    /// The embedding of every entry, in database order.
    pub fn vectors(&self) -> &[Vec<f32>] {
        &self.vectors
    }
}

impl Ranker for EmbeddingRanker<'_> {
    fn kind(&self) -> RankerKind {
        RankerKind::Embedding
    }

    fn rank(
        &mut self,
        db: &Database,
        query: Query,
        usable: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Result<Vec<(usize, f32)>> {
        let q = match query {
            Query::Nest(f) => self.model.embed(&[f], self.static_only)?.remove(0),
            Query::Entry(i) => self.vectors[i].clone(),
        };
        Ok(nearest(db, &q, &self.vectors, usable))
    }
}

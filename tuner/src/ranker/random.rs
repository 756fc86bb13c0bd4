//! A random order of the usable entries (seeded): the floor a ranker must clear.

use super::{Query, Ranker, RankerKind};
use crate::rng::Rng;
use crate::Result;
use embeddings::db::{distance, Database, Entry};

/// Ranks at random; distances are reported in `space` (e.g. embeddings) for queries
/// that are entries, 0 otherwise.
pub struct RandomRanker {
    rng: Rng,
    space: Vec<Vec<f32>>,
}

impl RandomRanker {
    /// A random ranker seeded with `seed`, reporting distances in `space`.
    pub fn new(seed: u64, space: Vec<Vec<f32>>) -> RandomRanker {
        RandomRanker {
            rng: Rng::new(seed),
            space,
        }
    }
}

impl RandomRanker {
    /// Distances are reported in `space` from now on (the generator goes on).
    pub fn set_space(&mut self, space: Vec<Vec<f32>>) {
        self.space = space;
    }
}

impl Ranker for RandomRanker {
    fn kind(&self) -> RankerKind {
        RankerKind::Random
    }

    fn rank(
        &mut self,
        db: &Database,
        query: Query,
        usable: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Result<Vec<(usize, f32)>> {
        let mut order: Vec<usize> = (0..db.entries.len())
            .filter(|&i| usable(&db.entries[i]))
            .collect();
        self.rng.shuffle(&mut order);
        Ok(order
            .into_iter()
            .map(|i| match query {
                Query::Entry(q) if q < self.space.len() && i < self.space.len() => {
                    (i, distance(&self.space[q], &self.space[i]))
                }
                _ => (i, 0.0),
            })
            .collect())
    }
}

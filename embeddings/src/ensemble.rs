//! Several trained models as one [`Embed`]: the members are the same network trained
//! under different seeds, and a nest's embedding is their embeddings side by side, each
//! scaled by `1/sqrt(n)`. With unit-length member embeddings the squared distance of two
//! nests is then the mean of the members' squared distances, so one member's seed-made
//! quirks (which neighbours land nearest) are averaged out. Member 0 is trained with the
//! given seed, so an ensemble of one is the plain model.

use crate::db::Entry;
use crate::embed::{train, EmbedError, Embedder};
use crate::embedder::Embed;
use crate::features::NestFeatures;
use models::{ModelConfig, TrainOptions};

/// Trained members whose embeddings are concatenated.
pub struct Ensemble {
    pub members: Vec<Embedder>,
}

/// The seed of member `i` of an ensemble trained with `seed` (member 0: `seed` itself).
pub fn member_seed(seed: u64, i: usize) -> u64 {
    seed.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

impl Ensemble {
    /// Trains `n` members (at least one) on `entries`, member `i` with
    /// [`member_seed`]`(options.seed, i)`. Members are trained on up to as many threads
    /// as the machine has cores; each member's training is single-threaded and seeded,
    /// so the result does not depend on how many threads ran.
    pub fn train(
        entries: &[&Entry],
        config: &ModelConfig,
        options: &TrainOptions,
        n: usize,
    ) -> Result<Ensemble, EmbedError> {
        let n = n.max(1);
        let threads = std::thread::available_parallelism().map_or(1, |c| c.get());
        let one = |i: usize| -> Result<Embedder, EmbedError> {
            let opts = TrainOptions {
                seed: member_seed(options.seed, i),
                ..options.clone()
            };
            Embedder::new(train(entries, config, &opts)?)
        };
        let mut members = Vec::with_capacity(n);
        let ids: Vec<usize> = (0..n).collect();
        for wave in ids.chunks(threads) {
            let trained: Vec<Result<Embedder, EmbedError>> = std::thread::scope(|s| {
                let handles: Vec<_> = wave.iter().map(|&i| s.spawn(move || one(i))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a member's training thread panicked"))
                    .collect()
            });
            for m in trained {
                members.push(m?);
            }
        }
        Ok(Ensemble { members })
    }
}

impl Embed for Ensemble {
    fn id(&self) -> String {
        let ids: Vec<String> = self.members.iter().map(Embedder::id).collect();
        ids.join("+")
    }

    fn embed(
        &self,
        features: &[&NestFeatures],
        static_only: bool,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let scale = 1.0 / (self.members.len() as f32).sqrt();
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); features.len()];
        for m in &self.members {
            for (row, v) in out.iter_mut().zip(m.embed(features, static_only)?) {
                row.extend(v.iter().map(|x| x * scale));
            }
        }
        Ok(out)
    }
}

#[cfg(all(test, feature = "train"))]
mod tests {
    use super::*;
    use crate::db::Database;
    use crate::embed::model_config;
    use std::path::Path;

    fn sq(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
    }

    #[test]
    fn members_sit_side_by_side_and_distances_are_their_mean() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default/tune.db");
        let db = Database::load(&dir).unwrap();
        let entries: Vec<&Entry> = db.entries.iter().take(40).collect();
        let config = model_config();
        let options = TrainOptions {
            seed: 7,
            epochs: 2,
            ..Default::default()
        };
        let ens = Ensemble::train(&entries, &config, &options, 2).unwrap();
        assert_eq!(ens.members.len(), 2);
        // Member 0 is the plain model of the same seed; member 1 another seed's.
        let plain = Embedder::new(train(&entries, &config, &options).unwrap()).unwrap();
        assert_eq!(ens.members[0].id(), plain.id());
        assert_ne!(ens.members[1].id(), plain.id());
        assert_eq!(ens.id(), format!("{}+{}", plain.id(), ens.members[1].id()));
        let f: Vec<_> = entries.iter().take(5).map(|e| &e.features).collect();
        let both = ens.embed(&f, false).unwrap();
        let one: Vec<_> = ens
            .members
            .iter()
            .map(|m| m.embed(&f, false).unwrap())
            .collect();
        let d = one[0][0].len();
        assert_eq!(both[0].len(), 2 * d);
        let scale = 1.0 / 2f32.sqrt();
        for (j, v) in both.iter().enumerate() {
            for (x, y) in v[..d].iter().zip(&one[0][j]) {
                assert!((x - y * scale).abs() < 1e-6);
            }
        }
        let mean = (sq(&one[0][1], &one[0][3]) + sq(&one[1][1], &one[1][3])) / 2.0;
        assert!((sq(&both[1], &both[3]) - mean).abs() < 1e-5, "{mean}");
        // Seeded: training again gives the same members.
        let again = Ensemble::train(&entries, &config, &options, 2).unwrap();
        assert_eq!(again.id(), ens.id());
    }
}

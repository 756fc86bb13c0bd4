//! The tuning database: per tuned nest, its features, its embedding, the best recipe
//! found (by loop roles, so it can be re-fitted elsewhere), other good recipes, and the
//! baseline and tuned times on the machine that measured them. Stored with
//! [`crate::codec`]; searched exactly (every entry's distance, in parallel).

use crate::codec::{self, CodecError};
use crate::features::NestFeatures;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One tuned nest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub program: String,
    pub nest: String,
    /// Hash of the nest's generated code (what the search records key on).
    pub fingerprint: String,
    /// Raw (unnormalized) features.
    pub features: NestFeatures,
    /// The model's embedding of the normalized features (empty until embedded).
    pub embedding: Vec<f32>,
    /// Recipes that beat the baseline, best first: `ir::canonical::RoleRecipe` as JSON
    /// (kept as text: recipes are tagged enums, which bincode cannot decode), with the
    /// speedup each reached here.
    pub recipes: Vec<(String, f64)>,
    pub baseline_s: f64,
    pub tuned_s: f64,
    /// Host the times were measured on.
    pub machine: String,
}

impl Entry {
    pub fn speedup(&self) -> f64 {
        if self.tuned_s > 0.0 {
            self.baseline_s / self.tuned_s
        } else {
            1.0
        }
    }

    /// The best recipe (JSON of a role recipe), if any beat the baseline.
    pub fn best(&self) -> Option<&str> {
        self.recipes.first().map(|(r, _)| r.as_str())
    }
}

/// A set of tuned nests and what embedded them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Database {
    pub feature_version: u32,
    /// Data hash of the model checkpoint the embeddings come from ("" = none yet).
    pub model: String,
    pub entries: Vec<Entry>,
}

/// A neighbour found by [`Database::top_k`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    pub index: usize,
    pub program: String,
    pub nest: String,
    pub distance: f32,
}

/// Euclidean distance.
pub fn distance(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f32>()
        .sqrt()
}

impl Database {
    pub fn load(path: &Path) -> Result<Database, CodecError> {
        codec::read(path)
    }

    pub fn save(&self, path: &Path) -> Result<(), CodecError> {
        codec::write(path, self)
    }

    /// The `k` entries nearest to `query` among those `keep` accepts, nearest first
    /// (ties by index). `vectors[i]` is what entry `i` is compared by (its embedding,
    /// or a raw feature vector for baselines).
    pub fn top_k(
        &self,
        query: &[f32],
        k: usize,
        vectors: &[Vec<f32>],
        keep: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Vec<Neighbour> {
        let mut all = self.ranked(query, vectors, keep);
        all.truncate(k);
        all
    }

    /// Every entry `keep` accepts, nearest to `query` first (ties by index).
    pub fn ranked(
        &self,
        query: &[f32],
        vectors: &[Vec<f32>],
        keep: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Vec<Neighbour> {
        let mut all: Vec<(f32, usize)> = self
            .entries
            .par_iter()
            .zip(vectors)
            .enumerate()
            .filter(|(_, (e, _))| keep(e))
            .map(|(i, (_, v))| (distance(query, v), i))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        all.into_iter()
            .map(|(d, i)| Neighbour {
                index: i,
                program: self.entries[i].program.clone(),
                nest: self.entries[i].nest.clone(),
                distance: d,
            })
            .collect()
    }

    /// Adds `other`'s entries. An entry for the same (program, nest, fingerprint,
    /// machine) as one already present replaces it only if it is faster.
    pub fn merge(&mut self, other: Database) -> Result<MergeStats, String> {
        if !self.entries.is_empty() && other.feature_version != self.feature_version {
            return Err(format!(
                "feature versions differ ({} and {})",
                self.feature_version, other.feature_version
            ));
        }
        if self.entries.is_empty() {
            self.feature_version = other.feature_version;
            self.model = other.model.clone();
        } else if self.model != other.model {
            // Embeddings from different models are not comparable: re-embed later.
            self.model.clear();
        }
        let mut stats = MergeStats::default();
        for e in other.entries {
            match self.entries.iter_mut().find(|x| {
                x.program == e.program
                    && x.nest == e.nest
                    && x.fingerprint == e.fingerprint
                    && x.machine == e.machine
            }) {
                Some(x) if e.tuned_s > 0.0 && (e.tuned_s < x.tuned_s || x.tuned_s <= 0.0) => {
                    *x = e;
                    stats.replaced += 1;
                }
                Some(_) => stats.kept += 1,
                None => {
                    self.entries.push(e);
                    stats.added += 1;
                }
            }
        }
        Ok(stats)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeStats {
    pub added: usize,
    pub replaced: usize,
    pub kept: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::*;

    fn entry(program: &str, emb: Vec<f32>, tuned: f64) -> Entry {
        Entry {
            program: program.into(),
            nest: "nest0".into(),
            fingerprint: "f".into(),
            features: NestFeatures {
                version: FEATURE_VERSION,
                loops: vec![vec![0.5; LOOP_DIM]],
                loop_parent: vec![None],
                accesses: vec![vec![0.25; ACCESS_DIM]],
                access_loop: vec![0],
                global: vec![0.0; GLOBAL_DIM],
                perf: vec![0.0; PERF_DIM],
                perf_mask: vec![0.0; PERF_DIM],
                machine: vec![0.0; MACHINE_DIM],
            },
            embedding: emb,
            recipes: vec![(r#"{"steps":[]}"#.into(), 2.0)],
            baseline_s: 1.0,
            tuned_s: tuned,
            machine: "m".into(),
        }
    }

    #[test]
    fn top_k_is_exact_and_ordered() {
        let db = Database {
            feature_version: FEATURE_VERSION,
            model: "x".into(),
            entries: (0..50)
                .map(|i| entry(&format!("p{i}"), vec![i as f32, 0.0], 0.5))
                .collect(),
        };
        let emb: Vec<Vec<f32>> = db.entries.iter().map(|e| e.embedding.clone()).collect();
        let n = db.top_k(&[10.2, 0.0], 3, &emb, &|_| true);
        let names: Vec<&str> = n.iter().map(|x| x.program.as_str()).collect();
        assert_eq!(names, ["p10", "p11", "p9"]);
        assert!((n[0].distance - 0.2).abs() < 1e-5);
        let n = db.top_k(&[10.2, 0.0], 2, &emb, &|e| e.program != "p10");
        let names: Vec<&str> = n.iter().map(|x| x.program.as_str()).collect();
        assert_eq!(names, ["p11", "p9"]);
    }

    #[test]
    fn save_load_and_merge() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.bin");
        let mut a = Database {
            feature_version: FEATURE_VERSION,
            model: "m1".into(),
            entries: vec![entry("gemm", vec![1.0], 0.5), entry("atax", vec![2.0], 0.9)],
        };
        a.save(&path).unwrap();
        assert_eq!(Database::load(&path).unwrap(), a);
        let b = Database {
            feature_version: FEATURE_VERSION,
            model: "m1".into(),
            entries: vec![entry("gemm", vec![1.0], 0.25), entry("lu", vec![3.0], 0.8)],
        };
        let s = a.merge(b).unwrap();
        assert_eq!(
            s,
            MergeStats {
                added: 1,
                replaced: 1,
                kept: 0
            }
        );
        assert_eq!(a.entries.len(), 3);
        assert_eq!(a.entries[0].tuned_s, 0.25);
        // Truncated on disk: refused, and the file is what it was.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let e = Database::load(&path).unwrap_err().to_string();
        assert!(e.contains("truncated or damaged"), "{e}");
    }
}

//! The tuning database: per tuned nest, its features, its embedding, the best recipe
//! found (by loop roles, so it can be re-fitted elsewhere), other good recipes, and the
//! baseline and tuned times on the machine that measured them, and how the other
//! entries' best recipes did when transferred to it. Stored with [`crate::codec`];
//! searched exactly (every entry's distance, in parallel).

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
    /// The vector instruction set of that host ([`vector_isa`]: `avx512`, `avx2`,
    /// `sse`); empty where the entry predates format 3 (unknown: matches any).
    pub isa: String,
    /// Other entries' best recipes re-fitted to this nest and measured on its saved
    /// data against one baseline (`tune db transfer`): what the model's contrastive
    /// term learns which nests are alike from. Empty until measured.
    pub transfers: Vec<Transfer>,
}

/// One entry's best recipe measured on another entry's nest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    /// The entry whose best recipe was transferred (may be the nest itself).
    pub program: String,
    pub nest: String,
    /// That entry's best recipe when measured (JSON): a transfer counts only while the
    /// source's best recipe is still this one.
    pub recipe: String,
    /// Baseline time over the variant's time; 0 when the re-fitted recipe was refused,
    /// failed or computed something else; 1 when nothing of it applies.
    pub speedup: f64,
}

/// The program a program name is a variant of: the name up to `@` (`tune db variants`
/// names a loop-order variant `ORIGIN@...`), the whole name otherwise.
pub fn origin(program: &str) -> &str {
    program.split('@').next().unwrap_or(program)
}

/// Whether `program` is named as `tune db synth` names the programs it generates,
/// `<family>-s<seed>-<index, 4 digits>-<tag>` (`datasets::synth`), rather than a
/// program someone wrote (a suite's program or a loop-order variant of one).
pub fn is_generated(program: &str) -> bool {
    let parts: Vec<&str> = program.split('-').collect();
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
    (1..parts.len().saturating_sub(2)).any(|i| {
        parts[i].strip_prefix('s').is_some_and(digits)
            && parts[i + 1].len() == 4
            && digits(parts[i + 1])
    })
}

impl Entry {
    /// The program this entry's program is a variant of ([`origin`]).
    pub fn origin(&self) -> &str {
        origin(&self.program)
    }

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

    /// The best speedup of this nest's transfer row, at least 1 (keeping the code).
    pub fn row_best(&self) -> f64 {
        self.transfers.iter().map(|t| t.speedup).fold(1.0, f64::max)
    }

    /// Whether this entry was measured with the vector ISA `isa`; an ISA that is not
    /// known (an entry of format 2, or an empty `isa`) matches any.
    pub fn isa_matches(&self, isa: &str) -> bool {
        self.isa.is_empty() || isa.is_empty() || self.isa == isa
    }

    /// Whether `source`'s current best recipe was measured on this nest.
    pub fn transfer_from(&self, source: &Entry) -> Option<&Transfer> {
        let best = source.best()?;
        self.transfers
            .iter()
            .find(|t| t.program == source.program && t.nest == source.nest && t.recipe == best)
    }
}

/// The vector instruction set a machine's CPU flags name: `avx512` (AVX-512F), `avx2`,
/// or `sse` (neither).
pub fn vector_isa(flags: &[String]) -> &'static str {
    if flags.iter().any(|f| f == "avx512f") {
        "avx512"
    } else if flags.iter().any(|f| f == "avx2") {
        "avx2"
    } else {
        "sse"
    }
}

/// Format 2 of the database (before entries named their vector ISA), read and upgraded.
mod v2 {
    use super::*;

    #[derive(Deserialize)]
    pub struct Entry {
        pub program: String,
        pub nest: String,
        pub fingerprint: String,
        pub features: NestFeatures,
        pub embedding: Vec<f32>,
        pub recipes: Vec<(String, f64)>,
        pub baseline_s: f64,
        pub tuned_s: f64,
        pub machine: String,
        pub transfers: Vec<Transfer>,
    }

    #[derive(Deserialize)]
    pub struct Database {
        pub feature_version: u32,
        pub model: String,
        pub entries: Vec<Entry>,
    }

    impl From<Database> for super::Database {
        fn from(d: Database) -> Self {
            super::Database {
                feature_version: d.feature_version,
                model: d.model,
                entries: d
                    .entries
                    .into_iter()
                    .map(|e| super::Entry {
                        program: e.program,
                        nest: e.nest,
                        fingerprint: e.fingerprint,
                        features: e.features,
                        embedding: e.embedding,
                        recipes: e.recipes,
                        baseline_s: e.baseline_s,
                        tuned_s: e.tuned_s,
                        machine: e.machine,
                        isa: String::new(),
                        transfers: e.transfers,
                    })
                    .collect(),
            }
        }
    }
}

/// Format 1 of the database (before transfer measurements), read and upgraded through
/// format 2.
mod v1 {
    use super::*;

    #[derive(Deserialize)]
    pub struct Entry {
        program: String,
        nest: String,
        fingerprint: String,
        features: NestFeatures,
        embedding: Vec<f32>,
        recipes: Vec<(String, f64)>,
        baseline_s: f64,
        tuned_s: f64,
        machine: String,
    }

    #[derive(Deserialize)]
    pub struct Database {
        feature_version: u32,
        model: String,
        entries: Vec<Entry>,
    }

    impl From<Database> for super::v2::Database {
        fn from(d: Database) -> Self {
            super::v2::Database {
                feature_version: d.feature_version,
                model: d.model,
                entries: d
                    .entries
                    .into_iter()
                    .map(|e| super::v2::Entry {
                        program: e.program,
                        nest: e.nest,
                        fingerprint: e.fingerprint,
                        features: e.features,
                        embedding: e.embedding,
                        recipes: e.recipes,
                        baseline_s: e.baseline_s,
                        tuned_s: e.tuned_s,
                        machine: e.machine,
                        transfers: Vec::new(),
                    })
                    .collect(),
            }
        }
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
    /// Reads a database file of the current format, or of an older one, upgraded:
    /// format 1 without transfers, formats 1 and 2 without the entries' vector ISA.
    pub fn load(path: &Path) -> Result<Database, CodecError> {
        let bytes = codec::read_bytes(path)?;
        let name = path.display().to_string();
        match codec::open(&bytes, &name)? {
            (1, payload) => {
                let v2: v2::Database =
                    codec::decode_payload::<v1::Database>(payload, &name)?.into();
                Ok(v2.into())
            }
            (2, payload) => Ok(codec::decode_payload::<v2::Database>(payload, &name)?.into()),
            (_, payload) => codec::decode_payload(payload, &name),
        }
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
    /// machine) as one already present replaces it only if it is faster. Hosts are told
    /// apart by name and vector ISA (two VMs may share a host name); an entry whose ISA
    /// is unknown (format 2) matches any.
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
                    && x.isa_matches(&e.isa)
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

    #[test]
    fn generated_programs_are_told_from_written_ones_by_name() {
        for g in [
            "matmul-s1-0072-ikj-ab",
            "stencil-s12-0035-3d13-star2-copyback-weighted-swapped",
            "copy-s2-0004-ji",
        ] {
            assert!(is_generated(g), "{g}");
        }
        for w in [
            "gemm",
            "floyd-warshall",
            "heat-3d@nest1-b0-201",
            "jacobi-2d",
            "colnorm-s1-0001",
            "s1-0001-x",
            "a-s-0001-x",
        ] {
            assert!(!is_generated(w), "{w}");
        }
    }

    #[test]
    fn a_variant_names_its_origin() {
        assert_eq!(origin("gemm@nest0-b2-10"), "gemm");
        assert_eq!(origin("floyd-warshall"), "floyd-warshall");
        assert_eq!(entry("mvt@nest1-b0-10", vec![], 1.0).origin(), "mvt");
    }

    fn entry(program: &str, emb: Vec<f32>, tuned: f64) -> Entry {
        Entry {
            program: program.into(),
            nest: "nest0".into(),
            fingerprint: "f".into(),
            features: crate::features::one_loop_nest(),
            embedding: emb,
            recipes: vec![(r#"{"steps":[]}"#.into(), 2.0)],
            baseline_s: 1.0,
            tuned_s: tuned,
            machine: "m".into(),
            isa: String::new(),
            transfers: Vec::new(),
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
    fn hosts_of_one_name_with_different_vector_isas_are_kept_apart() {
        let on = |isa: &str, tuned: f64| Entry {
            isa: isa.into(),
            ..entry("gemm", vec![1.0], tuned)
        };
        let db = |entries| Database {
            feature_version: FEATURE_VERSION,
            model: "m1".into(),
            entries,
        };
        let mut a = db(vec![on("avx512", 0.5)]);
        let s = a.merge(db(vec![on("avx2", 0.25)])).unwrap();
        assert_eq!((s.added, s.replaced, s.kept), (1, 0, 0));
        assert_eq!(a.entries[0].tuned_s, 0.5);
        // Same host and ISA: the faster one wins; an unknown ISA matches either.
        let s = a.merge(db(vec![on("avx2", 0.2), on("", 0.1)])).unwrap();
        assert_eq!((s.added, s.replaced, s.kept), (0, 2, 0));
        assert_eq!(a.entries.len(), 2);
        assert_eq!(a.entries[0].tuned_s, 0.1);
        assert_eq!(a.entries[1].tuned_s, 0.2);
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
        // Transfers count only while the source's best recipe is the one measured.
        let (gemm, lu) = (a.entries[0].clone(), a.entries[2].clone());
        a.entries[2].transfers.push(Transfer {
            program: "gemm".into(),
            nest: "nest0".into(),
            recipe: gemm.best().unwrap().into(),
            speedup: 1.5,
        });
        assert_eq!(a.entries[2].transfer_from(&gemm).unwrap().speedup, 1.5);
        assert!(a.entries[2].transfer_from(&lu).is_none());
        let mut changed = gemm.clone();
        changed.recipes[0].0 = r#"{"steps":[{"step":"parallelize"}]}"#.into();
        assert!(a.entries[2].transfer_from(&changed).is_none());
        a.save(&path).unwrap();
        assert_eq!(Database::load(&path).unwrap(), a);
        // Truncated on disk: refused, and the file is what it was.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let e = Database::load(&path).unwrap_err().to_string();
        assert!(e.contains("truncated or damaged"), "{e}");
    }

    /// A database written in format 1 (entries without transfers) is read and upgraded.
    #[test]
    fn reads_format_1() {
        let e = entry("gemm", vec![0.5, 0.25], 0.5);
        type V1Entry = (
            String,
            String,
            String,
            NestFeatures,
            Vec<f32>,
            Vec<(String, f64)>,
            f64,
            f64,
            String,
        );
        let old: (u32, String, Vec<V1Entry>) = (
            FEATURE_VERSION,
            "m1".into(),
            vec![(
                e.program.clone(),
                e.nest.clone(),
                e.fingerprint.clone(),
                e.features.clone(),
                e.embedding.clone(),
                e.recipes.clone(),
                e.baseline_s,
                e.tuned_s,
                e.machine.clone(),
            )],
        );
        let mut bytes = codec::encode(&old).unwrap();
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        std::fs::write(&path, &bytes).unwrap();
        let db = Database::load(&path).unwrap();
        assert_eq!(db.model, "m1");
        assert_eq!(db.entries, vec![e]);
        // A version from the future is refused by name.
        bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let err = Database::load(&path).unwrap_err().to_string();
        assert!(
            err.ends_with("old.db: database format version 7, this tune reads versions 1 to 3"),
            "{err}"
        );
    }

    /// A database written in format 2 (entries without their vector ISA) is read with
    /// the ISA unknown, its transfer rows kept.
    #[test]
    fn reads_format_2() {
        let mut e = entry("gemm", vec![0.5], 0.5);
        e.transfers = vec![Transfer {
            program: "gemm".into(),
            nest: "nest0".into(),
            recipe: "r".into(),
            speedup: 2.5,
        }];
        type V2Entry = (
            String,
            String,
            String,
            NestFeatures,
            Vec<f32>,
            Vec<(String, f64)>,
            f64,
            f64,
            String,
            Vec<Transfer>,
        );
        let old: (u32, String, Vec<V2Entry>) = (
            FEATURE_VERSION,
            "m2".into(),
            vec![(
                e.program.clone(),
                e.nest.clone(),
                e.fingerprint.clone(),
                e.features.clone(),
                e.embedding.clone(),
                e.recipes.clone(),
                e.baseline_s,
                e.tuned_s,
                e.machine.clone(),
                e.transfers.clone(),
            )],
        );
        let mut bytes = codec::encode(&old).unwrap();
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        std::fs::write(&path, &bytes).unwrap();
        let db = Database::load(&path).unwrap();
        assert_eq!(db.model, "m2");
        assert_eq!(db.entries, vec![e.clone()]);
        assert_eq!(db.entries[0].isa, "");
        // Saved again, it is format 3 and keeps an ISA once set.
        let mut db = db;
        db.entries[0].isa = "avx2".into();
        db.save(&path).unwrap();
        assert_eq!(&std::fs::read(&path).unwrap()[8..12], &3u32.to_le_bytes());
        assert_eq!(Database::load(&path).unwrap().entries[0].isa, "avx2");
    }
}

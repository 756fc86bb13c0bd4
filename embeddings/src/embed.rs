//! From features to embeddings: model inputs, training targets, training on a database,
//! and embedding nests with a trained checkpoint.
//!
//! Targets (each standardized over the training set; see `FEATURES.md`):
//! 0 log10 ns per innermost iteration, 1 log10 GFLOP/s, 2 log2 of the best speedup
//! found, 3..7 the shape of the best recipe (parallelizes, tiles, interchanges,
//! vectorizes, unrolls). The last six make nests whose best recipes look alike land near
//! each other, which is what retrieval needs.

use crate::db::Entry;
use crate::features::{
    Column, NestFeatures, Normalizer, ACCESS_DIM, FEATURE_VERSION, GLOBAL_DIM, LOOP_DIM,
    MACHINE_DIM, PERF_DIM,
};
use models::{Checkpoint, Example, FeatureInfo, ModelConfig, NestInput, TrainOptions};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const TARGET_DIM: usize = 8;

/// What a checkpoint carries besides weights: how to normalize features and targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Normalization {
    pub features: Normalizer,
    pub targets: Column,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(transparent)]
    Model(#[from] models::Error),
    #[error("{0}")]
    Invalid(String),
}

/// Raw targets of a database entry.
pub fn targets(e: &Entry) -> Vec<f32> {
    let f = &e.features;
    let perf = |k: usize| if f.perf_mask[k] > 0.0 { f.perf[k] } else { 0.0 };
    let best = e.best().unwrap_or("");
    let has = |s: &str| best.contains(&format!("\"step\":\"{s}\"")) as u8 as f32;
    vec![
        perf(0),
        perf(1),
        e.speedup().max(1e-3).log2() as f32,
        has("parallelize"),
        has("tile"),
        has("interchange"),
        has("vectorize"),
        (has("unroll") + has("unroll_jam")).min(1.0),
    ]
}

/// The model input of normalized features; with `static_only` the performance group
/// is masked out (as when no profiling pass ran).
pub fn input(f: &NestFeatures, static_only: bool) -> NestInput {
    NestInput {
        loops: f.loops.clone(),
        loop_parent: f.loop_parent.clone(),
        accesses: f.accesses.clone(),
        access_loop: f.access_loop.clone(),
        global: f.global.clone(),
        machine: f.machine.clone(),
        counters: if static_only {
            vec![0.0; PERF_DIM]
        } else {
            f.perf.clone()
        },
        counter_mask: if static_only {
            vec![0.0; PERF_DIM]
        } else {
            f.perf_mask.clone()
        },
    }
}

/// The network every `tune` training builds: the graph encoder with the wide part
/// (`ModelConfig::wide`: the raw features pooled as [`NestFeatures::flat`] pools them,
/// each column weighted by training) after the learned embedding.
pub fn model_config() -> ModelConfig {
    let mut c = ModelConfig::new(
        LOOP_DIM,
        ACCESS_DIM,
        GLOBAL_DIM,
        MACHINE_DIM,
        PERF_DIM,
        TARGET_DIM,
    );
    c.wide = true;
    c
}

/// Default weight of the contrastive term (`tune model train`, `tune db eval`); how it
/// was chosen: `FEATURES.md`.
pub const CONTRASTIVE_WEIGHT: f64 = 4.0;

/// A transferred recipe that reaches this share of the best speedup measured on a nest
/// is a hit there (the retrieval evaluation's criterion)...
pub const NEAR_SHARE: f64 = 0.9;
/// ...and one below this share is a miss; in between, measurement noise could tip it.
pub const FAR_SHARE: f64 = 0.75;

/// Contrastive pairs from the transfer measurements, per entry: (near, far) indices
/// into `entries`. For an entry whose measured transfers (from entries of `entries`,
/// itself included) reach a best speedup of at least 1/[`NEAR_SHARE`] (below that,
/// keeping the original is already a hit), every other entry whose best recipe reached
/// ≥ [`NEAR_SHARE`] of that best on it should be nearer than every entry whose recipe
/// reached < [`FAR_SHARE`] of it.
pub fn contrastive_pairs(entries: &[&Entry]) -> Vec<Vec<(usize, usize)>> {
    entries
        .iter()
        .enumerate()
        .map(|(j, e)| {
            let measured: Vec<(usize, f64)> = entries
                .iter()
                .enumerate()
                .filter_map(|(i, src)| e.transfer_from(src).map(|t| (i, t.speedup)))
                .collect();
            let best = measured.iter().map(|m| m.1).fold(1.0, f64::max);
            if best < 1.0 / NEAR_SHARE {
                return Vec::new();
            }
            let others = || measured.iter().filter(|m| m.0 != j);
            let near: Vec<usize> = others()
                .filter(|m| m.1 >= NEAR_SHARE * best)
                .map(|m| m.0)
                .collect();
            let far: Vec<usize> = others()
                .filter(|m| m.1 < FAR_SHARE * best)
                .map(|m| m.0)
                .collect();
            near.iter()
                .flat_map(|&n| far.iter().map(move |&f| (n, f)))
                .collect()
        })
        .collect()
}

/// Keeps only the contrastive pairs anchored at nests of written programs (not
/// [`is_generated`](crate::db::is_generated)), where any written nest has pairs. The
/// queries retrieval serves are written programs; a database grown with `tune db synth`
/// holds several times more generated nests, many of them near copies of each other,
/// and pairs anchored there teach the model to tell generated nests apart rather than
/// to place a written nest among them. Generated nests stay in the pairs as the near and
/// far entries of written ones, and every entry stays an example of the prediction
/// term. Measured in `FEATURES.md` ("Anchored on written programs").
pub fn anchor_on_written(entries: &[&Entry], pairs: &mut [Vec<(usize, usize)>]) {
    let written: Vec<bool> = entries
        .iter()
        .map(|e| !crate::db::is_generated(&e.program))
        .collect();
    if !written
        .iter()
        .zip(pairs.iter())
        .any(|(&w, p)| w && !p.is_empty())
    {
        return;
    }
    for (&w, p) in written.iter().zip(pairs.iter_mut()) {
        if !w {
            p.clear();
        }
    }
}

/// Credit of a speedup `s` on a nest whose best is `best`: 1 at ≥ [`NEAR_SHARE`] of it,
/// 0 under [`FAR_SHARE`], linear between.
pub fn credit(s: f64, best: f64) -> f64 {
    ((s / best.max(1.0) - FAR_SHARE) / (NEAR_SHARE - FAR_SHARE)).clamp(0.0, 1.0)
}

/// The ways one entry is shown to training ([`train`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Every feature measured.
    Full,
    /// The performance group masked out, as when no profiling pass ran.
    StaticOnly,
    /// The hardware-counter columns masked out, as on a machine without a PMU; only
    /// for entries that have them (on the others it is [`View::Full`]).
    NoCounters,
}

/// The views of `f` that training shows: full and static-only always, and without
/// counters where it has counters, so that one model embeds a nest measured with a PMU
/// near the same nest measured without one.
pub fn views(f: &NestFeatures) -> &'static [View] {
    if f.has_counters() {
        &[View::Full, View::StaticOnly, View::NoCounters]
    } else {
        &[View::Full, View::StaticOnly]
    }
}

/// Trains a model of `config` (mostly [`model_config`]) on `entries`. Every entry
/// contributes one example per [`views`]: with and without its performance features,
/// so the same model serves static-only retrieval, and without its hardware counters
/// where it has them (masks both ways). Entries with transfer measurements also give
/// the contrastive term its pairs ([`contrastive_pairs`], anchored on written programs:
/// [`anchor_on_written`]; each view is paired with the same view of the other entry, or
/// with its full view where it has no such view).
pub fn train(
    entries: &[&Entry],
    config: &ModelConfig,
    options: &TrainOptions,
) -> Result<Checkpoint, EmbedError> {
    if entries.is_empty() {
        return Err(EmbedError::Invalid(
            "no database entries to train on".into(),
        ));
    }
    let feats: Vec<&NestFeatures> = entries.iter().map(|e| &e.features).collect();
    let normalizer = Normalizer::fit(&feats);
    let raw: Vec<Vec<f32>> = entries.iter().map(|e| targets(e)).collect();
    let tnorm = Column::fit_rows(&raw, TARGET_DIM);
    let mut pairs = contrastive_pairs(entries);
    anchor_on_written(entries, &mut pairs);
    let normal: Vec<NestFeatures> = entries
        .iter()
        .map(|e| normalizer.apply(&e.features))
        .collect();
    // index[n]: entry n's views and the index of each one's example.
    let mut index: Vec<Vec<(View, usize)>> = Vec::with_capacity(entries.len());
    let mut next = 0;
    for e in entries {
        let mine = views(&e.features);
        index.push(
            mine.iter()
                .enumerate()
                .map(|(k, &v)| (v, next + k))
                .collect(),
        );
        next += mine.len();
    }
    let example_of = |n: usize, v: View| -> usize {
        let mine = &index[n];
        mine.iter().find(|x| x.0 == v).unwrap_or(&mine[0]).1
    };
    let mut examples = Vec::with_capacity(next);
    for (n, (t, pairs)) in raw.iter().zip(&pairs).enumerate() {
        let t = tnorm.apply_row(t);
        for &(v, _) in &index[n] {
            let input = match v {
                View::Full => input(&normal[n], false),
                View::StaticOnly => input(&normal[n], true),
                View::NoCounters => input(&normal[n].without_counters(), false),
            };
            examples.push(Example {
                input,
                targets: t.clone(),
                rank: None,
                nearer: pairs
                    .iter()
                    .map(|&(a, b)| (example_of(a, v), example_of(b, v)))
                    .collect(),
            });
        }
    }
    let norm = Normalization {
        features: normalizer,
        targets: tnorm,
    };
    let info = FeatureInfo {
        feature_version: FEATURE_VERSION,
        normalization: serde_json::to_value(&norm).expect("normalization serializes"),
    };
    Ok(models::train(&examples, config, options, info)?)
}

/// A trained model with its normalization.
pub struct Embedder {
    pub checkpoint: Checkpoint,
    pub norm: Normalization,
}

impl Embedder {
    pub fn new(checkpoint: Checkpoint) -> Result<Embedder, EmbedError> {
        if checkpoint.meta.feature_version != FEATURE_VERSION {
            return Err(EmbedError::Invalid(format!(
                "the model was trained on feature version {}, this tune extracts version {FEATURE_VERSION}",
                checkpoint.meta.feature_version
            )));
        }
        let norm: Normalization = serde_json::from_value(checkpoint.meta.normalization.clone())
            .map_err(|e| EmbedError::Invalid(format!("checkpoint normalization: {e}")))?;
        Ok(Embedder { checkpoint, norm })
    }

    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        Embedder::new(Checkpoint::load(dir)?)
    }

    /// Identifies the model (hash of its training data and weights).
    pub fn id(&self) -> String {
        let m = &self.checkpoint.meta;
        format!(
            "{}-{}",
            &m.data_hash[..12.min(m.data_hash.len())],
            &m.weights_hash[..12.min(m.weights_hash.len())]
        )
    }

    pub fn embed(
        &self,
        f: &[&NestFeatures],
        static_only: bool,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inputs: Vec<NestInput> = f
            .iter()
            .map(|x| input(&self.norm.features.apply(x), static_only))
            .collect();
        Ok(self.checkpoint.network().embed(&inputs)?)
    }

    /// Mean absolute error per target (in standardized units) on `entries`.
    pub fn evaluate(&self, entries: &[&Entry]) -> Result<Vec<f32>, EmbedError> {
        let examples: Vec<Example> = entries
            .iter()
            .map(|e| Example {
                input: input(&self.norm.features.apply(&e.features), false),
                targets: self.norm.targets.apply_row(&targets(e)),
                rank: None,
                nearer: Vec::new(),
            })
            .collect();
        Ok(self.checkpoint.network().evaluate(&examples)?)
    }
}

/// Names of the targets, for reports.
pub const TARGET_NAMES: [&str; TARGET_DIM] = [
    "log10 ns/iteration",
    "log10 GFLOP/s",
    "log2 best speedup",
    "best parallelizes",
    "best tiles",
    "best interchanges",
    "best vectorizes",
    "best unrolls",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Transfer;

    fn entry(program: &str, recipe: &str) -> Entry {
        Entry {
            program: program.into(),
            nest: "nest0".into(),
            fingerprint: "f".into(),
            features: crate::features::one_loop_nest(),
            embedding: Vec::new(),
            recipes: vec![(recipe.into(), 2.0)],
            baseline_s: 1.0,
            tuned_s: 0.5,
            machine: "m".into(),
            isa: String::new(),
            transfers: Vec::new(),
        }
    }

    fn measured(on: &mut Entry, from: &Entry, speedup: f64) {
        on.transfers.push(Transfer {
            program: from.program.clone(),
            nest: from.nest.clone(),
            recipe: from.best().unwrap().into(),
            speedup,
        });
    }

    #[test]
    fn entries_with_counters_are_also_shown_without_them() {
        let mut with = entry("a", "{\"r\":\"a\"}");
        with.features.perf[9] = 1.5;
        with.features.perf_mask[9] = 1.0;
        let without = entry("b", "{\"r\":\"b\"}");
        assert_eq!(
            views(&with.features),
            [View::Full, View::StaticOnly, View::NoCounters]
        );
        assert_eq!(views(&without.features), [View::Full, View::StaticOnly]);
        if !cfg!(feature = "train") {
            return;
        }
        // One model trains on both kinds (5 examples) and embeds either.
        let options = TrainOptions {
            epochs: 2,
            ..Default::default()
        };
        let model =
            Embedder::new(train(&[&with, &without], &model_config(), &options).unwrap()).unwrap();
        let e = model
            .embed(&[&with.features, &with.features.without_counters()], false)
            .unwrap();
        assert_eq!(e.len(), 2);
        assert!(e[0].iter().chain(&e[1]).all(|x| x.is_finite()));
        assert_ne!(e[0], e[1], "the counters reach the embedding");
    }

    #[test]
    fn pairs_put_working_recipes_nearer_than_failing_ones() {
        let mut e: Vec<Entry> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|p| entry(p, &format!("{{\"r\":\"{p}\"}}")))
            .collect();
        let (a, b, c, d, x) = (
            e[0].clone(),
            e[1].clone(),
            e[2].clone(),
            e[3].clone(),
            e[4].clone(),
        );
        // On a: its own recipe 2.0x, b's 1.9x (a hit), c's 1.6x (neither), d's 1.0x
        // (a miss); e's was measured, but e is not among the training entries.
        measured(&mut e[0], &a, 2.0);
        measured(&mut e[0], &b, 1.9);
        measured(&mut e[0], &c, 1.6);
        measured(&mut e[0], &d, 1.0);
        measured(&mut e[0], &x, 4.0);
        // On b: nothing beats 1.08x, so keeping the original is already a hit.
        measured(&mut e[1], &a, 1.08);
        measured(&mut e[1], &c, 0.0);
        // On c: b's recipe 3.0x, and d's measured when d's best was another recipe.
        measured(&mut e[2], &b, 3.0);
        let stale = Transfer {
            recipe: "{\"r\":\"old\"}".into(),
            ..e[0].transfers[3].clone()
        };
        e[2].transfers.push(stale);
        let train: Vec<&Entry> = e[..4].iter().collect();
        let pairs = contrastive_pairs(&train);
        assert_eq!(pairs[0], vec![(1, 3)]);
        assert!(pairs[1].is_empty());
        // b's is the best on c, but with d's row stale there is nothing to contrast.
        assert!(pairs[2].is_empty());
        assert!(pairs[3].is_empty());
        // With e among the training entries, its 4.0x is the best on a, and every other
        // recipe falls below 75% of it.
        let all: Vec<&Entry> = e.iter().collect();
        assert_eq!(contrastive_pairs(&all)[0], vec![(4, 1), (4, 2), (4, 3)]);
    }

    #[test]
    fn contrastive_pairs_are_anchored_on_written_programs_where_there_are_any() {
        let names = [
            "gemm",
            "matmul-s1-0072-ikj-ab",
            "gemm@nest0-b0-10",
            "copy-s2-0004-ji",
        ];
        let e: Vec<Entry> = names.iter().map(|p| entry(p, "{}")).collect();
        let all: Vec<&Entry> = e.iter().collect();
        let full = vec![vec![(1, 3)], vec![(0, 3)], vec![(1, 3)], vec![(0, 1)]];
        let mut pairs = full.clone();
        anchor_on_written(&all, &mut pairs);
        assert_eq!(pairs, vec![vec![(1, 3)], vec![], vec![(1, 3)], vec![]]);
        // Generated nests alone keep their pairs: there is nothing else to anchor on.
        let mut only_generated = vec![vec![], full[1].clone(), vec![], full[3].clone()];
        anchor_on_written(&all, &mut only_generated);
        assert_eq!(only_generated[1], vec![(0, 3)]);
        assert_eq!(only_generated[3], vec![(0, 1)]);
    }
}

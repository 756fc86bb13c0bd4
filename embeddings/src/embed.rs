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

pub fn model_config() -> ModelConfig {
    ModelConfig::new(
        LOOP_DIM,
        ACCESS_DIM,
        GLOBAL_DIM,
        MACHINE_DIM,
        PERF_DIM,
        TARGET_DIM,
    )
}

/// Trains a model on `entries`. Every entry contributes twice: with and without its
/// performance features, so the same model serves static-only retrieval.
pub fn train(entries: &[&Entry], options: &TrainOptions) -> Result<Checkpoint, EmbedError> {
    if entries.is_empty() {
        return Err(EmbedError::Invalid(
            "no database entries to train on".into(),
        ));
    }
    let feats: Vec<&NestFeatures> = entries.iter().map(|e| &e.features).collect();
    let normalizer = Normalizer::fit(&feats);
    let raw: Vec<Vec<f32>> = entries.iter().map(|e| targets(e)).collect();
    let tnorm = Column::fit_rows(&raw, TARGET_DIM);
    let mut examples = Vec::new();
    for (e, t) in entries.iter().zip(&raw) {
        let f = normalizer.apply(&e.features);
        let t = tnorm.apply_row(t);
        for static_only in [false, true] {
            examples.push(Example {
                input: input(&f, static_only),
                targets: t.clone(),
                rank: None,
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
    Ok(models::train(&examples, &model_config(), options, info)?)
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
        Ok(self.checkpoint.model().embed(&inputs)?)
    }

    /// Mean absolute error per target (in standardized units) on `entries`.
    pub fn evaluate(&self, entries: &[&Entry]) -> Result<Vec<f32>, EmbedError> {
        let examples: Vec<Example> = entries
            .iter()
            .map(|e| Example {
                input: input(&self.norm.features.apply(&e.features), false),
                targets: self.norm.targets.apply_row(&targets(e)),
                rank: None,
            })
            .collect();
        Ok(self.checkpoint.model().evaluate(&examples)?)
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

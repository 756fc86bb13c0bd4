//! Model and training configuration.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Default width of every hidden layer.
pub const DEFAULT_HIDDEN: usize = 64;
/// Default width of the embedding.
pub const DEFAULT_EMBED_DIM: usize = 32;
/// Default number of message-passing rounds over the loop tree.
pub const DEFAULT_MESSAGE_ROUNDS: usize = 2;
/// Largest accepted number of message-passing rounds.
pub const MAX_MESSAGE_ROUNDS: usize = 8;

/// Shape of the network: input widths (fixed by the caller's feature layout) and the
/// sizes of the hidden layers and the embedding.
///
/// `global_dim`, `machine_dim` and `counter_dim` may be 0, in which case the
/// corresponding encoder is left out. `loop_dim`, `target_dim`, `hidden` and `embed_dim`
/// must be at least 1; `access_dim` may be 0 (an access is then described only by the
/// hidden state of its loop).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    /// Width of one loop row ([`NestInput::loops`](crate::NestInput::loops)).
    pub loop_dim: usize,
    /// Width of one access row ([`NestInput::accesses`](crate::NestInput::accesses)).
    pub access_dim: usize,
    /// Width of [`NestInput::global`](crate::NestInput::global).
    pub global_dim: usize,
    /// Width of [`NestInput::machine`](crate::NestInput::machine).
    pub machine_dim: usize,
    /// Width of [`NestInput::counters`](crate::NestInput::counters) (and of the mask).
    pub counter_dim: usize,
    /// Number of performance targets predicted by the head.
    pub target_dim: usize,
    /// Width of every hidden layer (default [`DEFAULT_HIDDEN`]).
    pub hidden: usize,
    /// Width of the embedding (default [`DEFAULT_EMBED_DIM`]).
    pub embed_dim: usize,
    /// Rounds of message passing along the loop tree (default [`DEFAULT_MESSAGE_ROUNDS`]).
    pub message_rounds: usize,
    /// L2-normalize the embedding inside the network (the head then sees unit vectors,
    /// and [`Network::embed`](crate::Network::embed) returns unit vectors). Default `true`.
    pub normalize_embedding: bool,
    /// Append a wide part to the embedding: the nest's input features pooled as the
    /// raw-feature distance pools them (mean and max of the loop rows and of the access
    /// rows, the global row, the counters where available, the machine row), each column
    /// scaled by a learned weight (initially `1/sqrt(width)`). The embedding then starts
    /// out as the standardized raw features beside the learned part, and training moves
    /// both; the head sees the learned part only. Default `false` (checkpoints made
    /// before it read as `false`).
    #[serde(default)]
    pub wide: bool,
    /// With [`ModelConfig::wide`]: anchor the embedding at the raw-feature distance. The
    /// wide part's column weights stay at their initial `1/sqrt(width)` (not trained), so
    /// its distances are the standardized raw features' distances scaled by one constant,
    /// and the learned part is weighted by this factor in the returned embedding. With
    /// [`ModelConfig::normalize_embedding`] the learned part is a unit vector, so it moves
    /// a distance by at most twice the factor: the raw features decide which entries are
    /// near, the learned part re-orders those within its reach (at 0 the embedding ranks
    /// exactly as raw features do). The head sees the learned part unweighted. `None`:
    /// both parts trained, the learned part unweighted (checkpoints made before it read
    /// as `None`).
    #[serde(default)]
    pub anchored: Option<f32>,
}

impl ModelConfig {
    /// A configuration for the given input and target widths, with default hidden sizes.
    pub fn new(
        loop_dim: usize,
        access_dim: usize,
        global_dim: usize,
        machine_dim: usize,
        counter_dim: usize,
        target_dim: usize,
    ) -> Self {
        ModelConfig {
            loop_dim,
            access_dim,
            global_dim,
            machine_dim,
            counter_dim,
            target_dim,
            hidden: DEFAULT_HIDDEN,
            embed_dim: DEFAULT_EMBED_DIM,
            message_rounds: DEFAULT_MESSAGE_ROUNDS,
            normalize_embedding: true,
            wide: false,
            anchored: None,
        }
    }

    /// Width of the wide part of the embedding (0 without [`ModelConfig::wide`]).
    pub fn wide_dim(&self) -> usize {
        if self.wide {
            2 * self.loop_dim
                + 2 * self.access_dim
                + self.global_dim
                + self.counter_dim
                + self.machine_dim
        } else {
            0
        }
    }

    /// Width of the embedding the network returns: the learned part, then the wide one.
    pub fn output_dim(&self) -> usize {
        self.embed_dim + self.wide_dim()
    }

    /// Refuses zero widths where they are not allowed, absurd sizes, and too many rounds.
    pub fn validate(&self) -> Result<()> {
        let positive = [
            ("loop_dim", self.loop_dim),
            ("target_dim", self.target_dim),
            ("hidden", self.hidden),
            ("embed_dim", self.embed_dim),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(Error::Config(format!("{name} must be at least 1")));
            }
        }
        let all = [
            ("loop_dim", self.loop_dim),
            ("access_dim", self.access_dim),
            ("global_dim", self.global_dim),
            ("machine_dim", self.machine_dim),
            ("counter_dim", self.counter_dim),
            ("target_dim", self.target_dim),
            ("hidden", self.hidden),
            ("embed_dim", self.embed_dim),
        ];
        for (name, v) in all {
            if v > 1 << 16 {
                return Err(Error::Config(format!("{name} = {v} is too large")));
            }
        }
        if let Some(w) = self.anchored {
            if !self.wide {
                return Err(Error::Config("anchored needs the wide part".into()));
            }
            if !(w.is_finite() && w >= 0.0) {
                return Err(Error::Config(format!(
                    "anchored = {w}: the learned part's weight must be a number >= 0"
                )));
            }
        }
        if self.message_rounds > MAX_MESSAGE_ROUNDS {
            return Err(Error::Config(format!(
                "message_rounds = {} (at most {MAX_MESSAGE_ROUNDS})",
                self.message_rounds
            )));
        }
        Ok(())
    }
}

/// How to train. `Default` gives seed 0, 100 epochs, learning rate 1e-3, batches of 32,
/// no ranking term, no contrastive term (margin 0.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainOptions {
    /// Seed of the weight initialization and of the data order.
    pub seed: u64,
    /// Passes over the training set.
    pub epochs: usize,
    /// Adam learning rate.
    pub lr: f64,
    /// Examples per optimizer step (the last batch of an epoch may be smaller).
    pub batch_size: usize,
    /// Weight of the pairwise ranking term (0 = off).
    pub ranking_weight: f64,
    /// Margin of the ranking hinge: a better example's prediction should be at least this
    /// much below a worse one's.
    pub ranking_margin: f64,
    /// Which target column the ranking term compares (lower prediction = better).
    pub ranking_target: usize,
    /// Weight of the contrastive term over [`Example::nearer`](crate::Example) pairs
    /// (0 = off).
    #[serde(default)]
    pub contrastive_weight: f64,
    /// Margin of the contrastive hinge, in embedding distance: an example should be
    /// nearer its "near" example than its "far" one by at least this much.
    #[serde(default = "default_contrastive_margin")]
    pub contrastive_margin: f64,
}

fn default_contrastive_margin() -> f64 {
    0.2
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            seed: 0,
            epochs: 100,
            lr: 1e-3,
            batch_size: 32,
            ranking_weight: 0.0,
            ranking_margin: 0.1,
            ranking_target: 0,
            contrastive_weight: 0.0,
            contrastive_margin: default_contrastive_margin(),
        }
    }
}

impl TrainOptions {
    /// Refuses zero epochs / batch size, non-positive or non-finite learning rate,
    /// negative ranking weight, a ranking target outside `config`.
    pub fn validate(&self, config: &ModelConfig) -> Result<()> {
        if self.epochs == 0 {
            return Err(Error::Config("epochs must be at least 1".into()));
        }
        if self.batch_size == 0 {
            return Err(Error::Config("batch_size must be at least 1".into()));
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err(Error::Config(format!("lr = {} must be positive", self.lr)));
        }
        if !(self.ranking_weight.is_finite() && self.ranking_weight >= 0.0) {
            return Err(Error::Config(format!(
                "ranking_weight = {} must be >= 0",
                self.ranking_weight
            )));
        }
        if !(self.contrastive_weight.is_finite() && self.contrastive_weight >= 0.0) {
            return Err(Error::Config(format!(
                "contrastive_weight = {} must be >= 0",
                self.contrastive_weight
            )));
        }
        if !self.contrastive_margin.is_finite() {
            return Err(Error::Config("contrastive_margin must be finite".into()));
        }
        if !self.ranking_margin.is_finite() {
            return Err(Error::Config("ranking_margin must be finite".into()));
        }
        if self.ranking_target >= config.target_dim {
            return Err(Error::Config(format!(
                "ranking_target = {} but target_dim = {}",
                self.ranking_target, config.target_dim
            )));
        }
        Ok(())
    }
}

/// What the caller's feature layer says about the inputs; stored verbatim in the
/// checkpoint so that inference can reproduce the same features.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureInfo {
    /// Version of the feature layout the examples were built with.
    pub feature_version: u32,
    /// Opaque normalization parameters (owned by the feature crate).
    pub normalization: serde_json::Value,
}

//! The performance-embedding model of `tune`: inference in plain Rust ([`Network`]),
//! training with libtorch ([`train`], `Model`; the `train` feature, the only place in
//! the project that links libtorch).
//!
//! A loop nest ([`NestInput`]: its loop tree, its array accesses, nest-level features,
//! machine features and performance counters with an availability mask) is encoded into
//! an embedding of [`ModelConfig::output_dim`] values, from which a head predicts
//! normalized performance targets. The embedding is what transfer tuning compares:
//! nests with nearby embeddings are expected to profit from the same schedule.
//!
//! Architecture (all widths [`ModelConfig::hidden`] unless noted):
//! - loops: per-loop MLP, then [`ModelConfig::message_rounds`] rounds of message passing
//!   on the loop tree, `h += relu(W [h ‖ Σ children h ‖ parent h])`;
//! - accesses: MLP over `[access row ‖ hidden state of its innermost loop]`;
//! - mean and max pooling over the loops and over the accesses, plus `ln(1 + count)` of
//!   each;
//! - MLPs over the nest-level features, the machine features and
//!   `[counters · mask ‖ mask]` (each left out when its width is 0);
//! - merge MLP over the concatenation → embedding (L2-normalized when
//!   [`ModelConfig::normalize_embedding`]) → head MLP → targets;
//! - with [`ModelConfig::wide`], the embedding goes on with a wide part: the inputs
//!   pooled as the raw-feature distance pools them (mean and max of loop rows and of
//!   access rows, global, counters where available, machine), each column times a
//!   learned weight, so retrieval starts from raw-feature distance and training (the
//!   contrastive term) reweights it beside the learned part.
//!
//! Batches concatenate the nests' rows and aggregate with index tensors (scatter sum and
//! scatter max), so batching does not change a nest's result beyond float rounding.
//!
//! Training ([`train`]) is Adam on an L1 loss with an optional pairwise ranking term; it
//! is seeded and single-threaded, and writes byte-identical checkpoints for equal inputs.
//!
//! Inference needs no libtorch: a [`Checkpoint`] is read into a [`Network`], whose
//! forward pass (`ndarray`, nest by nest) gives the embeddings and predictions of the
//! libtorch forward pass up to float rounding. Only training does: with the `train`
//! feature, build and run with libtorch from a PyTorch installation
//! (`LIBTORCH_USE_PYTORCH=1` with that Python first on `PATH` at build time, and torch's
//! `lib/` directory on `LD_LIBRARY_PATH` at run time); without it, [`train`] returns
//! [`Error::NoTraining`].

#![warn(missing_docs)]

mod checkpoint;
mod config;
mod error;
mod infer;
mod input;
mod layout;
#[cfg(feature = "train")]
mod model;
#[cfg(feature = "train")]
mod net;
#[cfg(not(feature = "train"))]
mod no_train;
#[cfg(feature = "train")]
mod rng;
#[cfg(feature = "train")]
mod train;
mod weights;

pub use checkpoint::{
    Checkpoint, CheckpointMeta, FORMAT_VERSION, META_FILE, TRAIN_FILE, WEIGHTS_FILE, WEIGHTS_MAGIC,
    WEIGHTS_VERSION,
};
pub use config::{
    FeatureInfo, ModelConfig, TrainOptions, DEFAULT_EMBED_DIM, DEFAULT_HIDDEN,
    DEFAULT_MESSAGE_ROUNDS, MAX_MESSAGE_ROUNDS,
};
pub use error::{Error, Result};
pub use infer::{Network, Outputs};
pub use input::{data_hash, Example, NestInput, Rank};
#[cfg(feature = "train")]
pub use model::Model;
#[cfg(not(feature = "train"))]
pub use no_train::train;
#[cfg(feature = "train")]
pub use train::train;

//! `embeddings`: what `tune` knows about a loop nest as numbers, and the database of
//! nests already tuned.
//!
//! [`features`] extracts the static, performance and machine features of a nest;
//! [`embed`] turns them into model inputs and embeddings through `models`, and
//! [`Embed`] is the seam through which the tuner asks a model for embeddings; [`db`] holds
//! tuned nests with their best recipes and finds the K nearest (exactly); [`codec`] is
//! the checksummed binary container the database is stored in.

pub mod codec;
pub mod db;
pub mod embed;
pub mod embedder;
pub mod ensemble;
pub mod features;

pub use db::{Database, Entry, Neighbour};
pub use embedder::Embed;
pub use features::{NestFeatures, Normalizer, FEATURE_VERSION};

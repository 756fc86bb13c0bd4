//! The ranker seam (the cost model of transfer tuning): in which order the database's
//! entries are tried for a nest. Each ranker is one file here and one [`RankerKind`]
//! variant; `tune apply` ranks by embedding unless `--ranker` says otherwise, `tune db
//! eval` compares all of them.

mod embedding;
mod fused;
mod random;
mod raw;
mod vote;

pub use embedding::EmbeddingRanker;
pub use fused::{fuse, FusedRanker};
pub use random::RandomRanker;
pub use raw::RawFeatureRanker;
pub use vote::{vote, VoteRanker};

use crate::Result;
use embeddings::db::{Database, Entry};
use embeddings::NestFeatures;
use serde::{Deserialize, Serialize};

/// What to rank the entries for.
#[derive(Debug, Clone, Copy)]
pub enum Query<'a> {
    /// A nest being tuned, by its features.
    Nest(&'a NestFeatures),
    /// An entry of the database itself (held out in an evaluation).
    Entry(usize),
}

/// Orders database entries for a query.
pub trait Ranker {
    /// Which ranker this is.
    fn kind(&self) -> RankerKind;
    /// The entries `usable` accepts, nearest first: (index, distance in the ranker's
    /// space; an order without a space reports embedding distances or 0).
    fn rank(
        &mut self,
        db: &Database,
        query: Query,
        usable: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Result<Vec<(usize, f32)>>;
}

/// The rankers there are.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum RankerKind {
    /// Nearest by the model's embedding.
    #[default]
    #[serde(rename = "embedding")]
    Embedding,
    /// Nearest by standardized raw features.
    #[serde(rename = "raw features")]
    RawFeatures,
    /// A random order.
    #[serde(rename = "random")]
    Random,
    /// The embedding's nearest entries vote with their transfer rows ([`vote`]).
    #[serde(rename = "embedding votes")]
    EmbeddingVotes,
    /// The raw features' nearest entries vote with their transfer rows ([`vote`]).
    #[serde(rename = "raw votes")]
    RawVotes,
    /// The embedding's and the raw features' orders fused by their ranks ([`fuse`]).
    #[serde(rename = "fused")]
    Fused,
    /// The fused order's nearest entries vote with their transfer rows ([`vote`]).
    #[serde(rename = "fused votes")]
    FusedVotes,
}

impl RankerKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [RankerKind; 7] = [
        RankerKind::Embedding,
        RankerKind::RawFeatures,
        RankerKind::Random,
        RankerKind::EmbeddingVotes,
        RankerKind::RawVotes,
        RankerKind::Fused,
        RankerKind::FusedVotes,
    ];

    /// For a voting kind, the ranker whose nearest entries vote ([`vote`]).
    pub fn voters(self) -> Option<RankerKind> {
        match self {
            RankerKind::EmbeddingVotes => Some(RankerKind::Embedding),
            RankerKind::RawVotes => Some(RankerKind::RawFeatures),
            RankerKind::FusedVotes => Some(RankerKind::Fused),
            _ => None,
        }
    }

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            RankerKind::Embedding => "embedding",
            RankerKind::RawFeatures => "raw features",
            RankerKind::Random => "random",
            RankerKind::EmbeddingVotes => "embedding votes",
            RankerKind::RawVotes => "raw votes",
            RankerKind::Fused => "fused",
            RankerKind::FusedVotes => "fused votes",
        }
    }
}

impl std::fmt::Display for RankerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// Entries nearest to `query` among `vectors` (one per entry).
fn nearest(
    db: &Database,
    query: &[f32],
    vectors: &[Vec<f32>],
    usable: &(dyn Fn(&Entry) -> bool + Sync),
) -> Vec<(usize, f32)> {
    db.ranked(query, vectors, usable)
        .into_iter()
        .map(|n| (n.index, n.distance))
        .collect()
}

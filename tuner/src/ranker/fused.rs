//! Two orders fused by their ranks: the embedding's and the raw features' nearest
//! entries, each entry scored 1/(1 + its rank in the first order) + 1/(1 + its rank in
//! the second) and the entries sorted by that score (reciprocal-rank fusion). An entry
//! near in both orders comes first; one that only one order puts first still comes
//! before those both orders put further away. On a tie, the first order decides.
//!
//! The two spaces fail on different nests: the embedding, trained on the other programs'
//! transfer rows, places a nest by what worked on nests like it, and strays where the
//! training programs hold nothing like it; the raw features place it by its loops,
//! accesses and measured rates, and stray where nests alike in form want different
//! recipes. Under [`super::vote`], the fused order's first entries are the voters, so
//! both neighbourhoods vote.

use super::{Query, Ranker, RankerKind};
use crate::Result;
use embeddings::db::{Database, Entry};

/// The reciprocal-rank fusion of two rankers' orders.
pub struct FusedRanker<'a> {
    first: Box<dyn Ranker + 'a>,
    second: Box<dyn Ranker + 'a>,
}

impl<'a> FusedRanker<'a> {
    /// Fuses `first` (whose distances the fused order reports, and which breaks ties)
    /// with `second`.
    pub fn new(first: Box<dyn Ranker + 'a>, second: Box<dyn Ranker + 'a>) -> FusedRanker<'a> {
        FusedRanker { first, second }
    }

    /// The embedding's order (first) fused with the raw features'.
    pub fn embedding_and_raw(
        embedding: &super::EmbeddingRanker<'a>,
        raw: &super::RawFeatureRanker,
    ) -> FusedRanker<'a> {
        FusedRanker::new(Box::new(embedding.clone()), Box::new(raw.clone()))
    }
}

/// `first` and `second` (orders of the same entries, nearest first) fused by reciprocal
/// ranks; each entry keeps its distance from `first`. Entries of only one order count
/// as ranked last in the other.
pub fn fuse(first: &[(usize, f32)], second: &[(usize, f32)]) -> Vec<(usize, f32)> {
    let last = first.len().max(second.len());
    let rank_in_second: std::collections::HashMap<usize, usize> = second
        .iter()
        .enumerate()
        .map(|(r, &(i, _))| (i, r))
        .collect();
    let score = |r1: usize, i: usize| -> f64 {
        let r2 = rank_in_second.get(&i).copied().unwrap_or(last);
        1.0 / (1.0 + r1 as f64) + 1.0 / (1.0 + r2 as f64)
    };
    let mut scored: Vec<(f64, usize, (usize, f32))> = first
        .iter()
        .enumerate()
        .map(|(r1, &x)| (score(r1, x.0), r1, x))
        .collect();
    let in_first: std::collections::HashSet<usize> = first.iter().map(|x| x.0).collect();
    scored.extend(
        second
            .iter()
            .filter(|x| !in_first.contains(&x.0))
            .enumerate()
            .map(|(n, &x)| (score(last, x.0), last + n, x)),
    );
    // Higher score first; on a tie, the first order's order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, x)| x).collect()
}

impl Ranker for FusedRanker<'_> {
    fn kind(&self) -> RankerKind {
        RankerKind::Fused
    }

    fn rank(
        &mut self,
        db: &Database,
        query: Query,
        usable: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Result<Vec<(usize, f32)>> {
        let a = self.first.rank(db, query, usable)?;
        let b = self.second.rank(db, query, usable)?;
        Ok(fuse(&a, &b))
    }
}

#[cfg(test)]
mod tests {
    use super::fuse;

    #[test]
    fn entries_near_in_both_orders_come_first_and_the_first_order_breaks_ties() {
        // first: 0 1 2 3; second: 2 0 3 1.
        let first = [(0, 0.1), (1, 0.2), (2, 0.3), (3, 0.4)];
        let second = [(2, 9.0), (0, 9.0), (3, 9.0), (1, 9.0)];
        let got = fuse(&first, &second);
        // Scores: 0: 1 + 1/2 = 1.5; 1: 1/2 + 1/4 = 0.75; 2: 1/3 + 1 = 1.33;
        // 3: 1/4 + 1/3 = 0.58.
        assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), [0, 2, 1, 3]);
        // Distances are the first order's.
        assert_eq!(got[1], (2, 0.3));
        // Identical orders fuse to the same order.
        assert_eq!(fuse(&first, &first), first.to_vec());
        // A tie (each first in one order) goes to the first order's entry.
        let got = fuse(&[(5, 0.0), (6, 1.0)], &[(6, 0.0), (5, 1.0)]);
        assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), [5, 6]);
        // An entry only the second order holds is kept, after those both put first.
        let got = fuse(&[(1, 0.0), (2, 1.0)], &[(1, 0.0), (7, 1.0), (2, 2.0)]);
        assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), [1, 2, 7]);
    }
}

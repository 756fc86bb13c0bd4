//! Recipes chosen by what they did on the query's neighbours: the nearest entries in a
//! base ranker's space vote, through their transfer rows (`tune db transfer`: other
//! entries' best recipes measured on their data), for the recipes that came near their
//! own best. A nearest-entry order tries the neighbours' own best recipes one by one; a
//! neighbour's transfer row also says which recipes of further entries worked there,
//! and which of the near entries' recipes failed, so the vote reads [`VOTERS`] nests'
//! measurements of many recipes where the nearest-entry order reads one recipe per nest.
//!
//! A recipe's credit on a neighbour is 1 where it reached 90% of the neighbour's best
//! known speedup (what the evaluation counts as a hit), 0 under 75%, linear between
//! (`embeddings::embed::credit`).
//!
//! The first K positions are chosen greedily for coverage: each next entry is the one
//! whose recipe adds the most weighted credit on the neighbours the recipes already
//! chosen leave short of their best (a recipe repeated, or one that succeeds only where
//! another already did, adds nothing). The remaining entries follow in the base order.
//! Where no neighbour has a row, the base order is returned unchanged.

use super::{Query, Ranker, RankerKind};
use crate::Result;
use embeddings::db::{Database, Entry};
use embeddings::embed::credit;

/// Neighbours that vote.
pub const VOTERS: usize = 8;

/// Re-orders a base ranker's order by its neighbours' votes.
pub struct VoteRanker<'a> {
    base: Box<dyn Ranker + 'a>,
    /// Positions chosen by coverage (after them, the base order).
    picks: usize,
}

impl<'a> VoteRanker<'a> {
    /// Votes over `base`'s neighbourhoods; the first `picks` positions are chosen by
    /// coverage.
    pub fn new(base: Box<dyn Ranker + 'a>, picks: usize) -> VoteRanker<'a> {
        VoteRanker { base, picks }
    }
}

/// `order` re-ordered by the votes of its first [`VOTERS`] entries that have transfer
/// rows (nearest first, weight 1/(1 + rank)); the first `picks` positions by greedy
/// coverage, the rest in `order`'s order.
pub fn vote(db: &Database, order: Vec<(usize, f32)>, picks: usize) -> Vec<(usize, f32)> {
    let voters: Vec<(usize, f64)> = order
        .iter()
        .filter(|&&(i, _)| !db.entries[i].transfers.is_empty())
        .take(VOTERS)
        .enumerate()
        .map(|(rank, &(i, _))| (i, 1.0 / (1.0 + rank as f64)))
        .collect();
    if voters.is_empty() {
        return order;
    }
    let best: Vec<f64> = voters
        .iter()
        .map(|&(n, _)| db.entries[n].row_best())
        .collect();
    // credits[c][v]: candidate c's recipe on voter v (0 when not measured there).
    let credits: Vec<Vec<f64>> = order
        .iter()
        .map(|&(c, _)| {
            voters
                .iter()
                .zip(&best)
                .map(|(&(n, _), &b)| {
                    db.entries[n]
                        .transfer_from(&db.entries[c])
                        .map_or(0.0, |t| credit(t.speedup, b))
                })
                .collect()
        })
        .collect();
    let mut covered = vec![0.0f64; voters.len()];
    let mut taken = vec![false; order.len()];
    let mut out = Vec::with_capacity(order.len());
    while out.len() < picks.min(order.len()) {
        let gain = |c: usize| -> f64 {
            credits[c]
                .iter()
                .zip(&covered)
                .zip(&voters)
                .map(|((&x, &have), &(_, w))| w * (x - have).max(0.0))
                .sum()
        };
        // The largest gain; on a tie, the earlier entry of the base order.
        let Some((c, g)) = (0..order.len())
            .filter(|&c| !taken[c])
            .map(|c| (c, gain(c)))
            .fold(None, |acc: Option<(usize, f64)>, (c, g)| match acc {
                Some((_, ag)) if ag >= g => acc,
                _ => Some((c, g)),
            })
        else {
            break;
        };
        if g <= 1e-12 {
            break;
        }
        taken[c] = true;
        for (have, &x) in covered.iter_mut().zip(&credits[c]) {
            *have = have.max(x);
        }
        out.push(order[c]);
    }
    out.extend(
        order
            .iter()
            .zip(&taken)
            .filter(|(_, &t)| !t)
            .map(|(&x, _)| x),
    );
    out
}

impl Ranker for VoteRanker<'_> {
    fn kind(&self) -> RankerKind {
        let base = self.base.kind();
        RankerKind::ALL
            .into_iter()
            .find(|k| k.voters() == Some(base))
            .unwrap_or(base)
    }

    fn rank(
        &mut self,
        db: &Database,
        query: Query,
        usable: &(dyn Fn(&Entry) -> bool + Sync),
    ) -> Result<Vec<(usize, f32)>> {
        let order = self.base.rank(db, query, usable)?;
        Ok(vote(db, order, self.picks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflows::test_entry::entry;
    use embeddings::db::Transfer;

    fn measured(db: &mut Database, on: usize, rows: &[(usize, f64)]) {
        let row = rows
            .iter()
            .map(|&(source, speedup)| {
                let s = &db.entries[source];
                Transfer {
                    program: s.program.clone(),
                    nest: s.nest.clone(),
                    recipe: s.best().unwrap().into(),
                    speedup,
                }
            })
            .collect();
        db.entries[on].transfers = row;
    }

    #[test]
    fn neighbours_vote_for_what_worked_on_them_and_cover_each_other() {
        // Base order: n1, n2, a, b, c. The two nearest (n1, n2) have transfer rows:
        // their own recipes reach only half their best there, a's recipe is best on
        // n1, b's on n2, and c's repeats a's effect on n1 (it covers nothing new).
        let mut db = Database {
            feature_version: embeddings::FEATURE_VERSION,
            model: String::new(),
            entries: ["n1", "n2", "a", "b", "c"]
                .iter()
                .map(|p| entry(p, 0.0, &format!("r{p}")))
                .collect(),
        };
        measured(
            &mut db,
            0,
            &[(0, 1.5), (1, 1.0), (2, 3.0), (3, 1.2), (4, 2.9)],
        );
        measured(
            &mut db,
            1,
            &[(0, 1.0), (1, 1.4), (2, 1.1), (3, 2.8), (4, 1.0)],
        );
        let order: Vec<(usize, f32)> = (0..5).map(|i| (i, i as f32)).collect();
        let got: Vec<usize> = vote(&db, order.clone(), 2).iter().map(|x| x.0).collect();
        // a first (full credit on n1, the nearer voter, weight 1), then b (n2, weight
        // 1/2); c would add nothing after a; the rest in the base order.
        assert_eq!(got, [2, 3, 0, 1, 4]);
        // Distances travel with their entries.
        assert_eq!(vote(&db, order.clone(), 2)[0], (2, 2.0));
        // With one position by coverage, only a moves.
        let got: Vec<usize> = vote(&db, order.clone(), 1).iter().map(|x| x.0).collect();
        assert_eq!(got, [2, 0, 1, 3, 4]);
        // Credit is linear between 75% and 90% of the best: c's 2.9 on n1 (best 3.0)
        // counts fully, 2.5 two thirds, 2.25 not at all.
        assert_eq!(credit(2.9, 3.0), 1.0);
        assert!((credit(2.5, 3.0) - (2.5 / 3.0 - 0.75) / 0.15).abs() < 1e-12);
        assert_eq!(credit(2.25, 3.0), 0.0);
        // Without transfer rows, the base order stands.
        for e in &mut db.entries {
            e.transfers.clear();
        }
        assert_eq!(vote(&db, order.clone(), 3), order);
    }
}

//! Refinement (`tune apply --refine N`): where the transferred recipes fall short of
//! what their neighbours reached where they were found (the best verified speedup
//! under [`MARGIN`] of the best such speedup, or no verified candidate at all), a short
//! hill climb seeded from the best of them: rounds of the recipes one edit away from
//! the best so far (`strategy::local::neighbours`), measured as the transferred ones
//! are, until N measurements are spent or a round finds nothing faster. Its candidates
//! are reported as `refine` (from the candidate they were one edit from), so a kept one
//! says that it was found here, not transferred.

use super::{Measured, NestContext, Pipeline};
use crate::nest_bench::NestBench;
use crate::report::{Candidate, CandidateVerdict, Neighbour};
use crate::strategy::local::neighbours;
use crate::strategy::Proposer;
use crate::Result;
use ir::transform::{Recipe, Step};
use std::time::Duration;

/// A transferred recipe "reaches" its neighbour's speedup when it gets this share of it.
pub const MARGIN: f64 = 0.9;

/// Candidates measured per round of the climb.
const ROUND: usize = 4;

/// The program name a refinement's candidates carry.
pub const REFINE: &str = "refine";

/// Whether the nest's candidates call for a refinement, and from which recipe: the
/// fastest verified one (the untransformed nest where none beat the baseline). None when
/// one of them reached [`MARGIN`] of the best speedup that the neighbours of the
/// candidates that ran (verified, or failed in the build or the run) recorded.
pub(super) fn seed(candidates: &[Candidate]) -> Option<(Recipe, f64)> {
    use CandidateVerdict::*;
    // What the recipes that ran promised; one refused, passed over or cut promised
    // nothing here.
    let ran = |c: &&Candidate| {
        matches!(
            c.verdict,
            Verified | WrongResult | Crashed | TimedOut | BuildFailed | Unverified
        )
    };
    let expected = candidates
        .iter()
        .filter(ran)
        .map(|c| c.from.speedup_there)
        .fold(0.0f64, f64::max);
    let best = candidates
        .iter()
        .filter(|c| c.verdict == CandidateVerdict::Verified && c.speedup > 0.0)
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
    let reached = best.map_or(0.0, |c| c.speedup);
    if reached >= 1.0 && reached >= MARGIN * expected {
        return None;
    }
    Some(match best {
        Some(c) if c.speedup > 1.0 => (c.recipe.clone(), c.speedup),
        _ => (Recipe::default(), 1.0),
    })
}

impl Pipeline {
    /// Climbs from [`seed`] for at most `self.refine` measurements; its candidates and
    /// picks are appended to the nest's, its cost added to `measured`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn refine(
        &self,
        ctx: &NestContext,
        bench: &NestBench,
        base: &super::Baseline,
        candidates: &mut Vec<Candidate>,
        picks: &mut Vec<Option<Recipe>>,
        measured: &mut Measured,
        time_left: &dyn Fn() -> Option<Duration>,
    ) -> Result<()> {
        let Some((mut from, mut best)) = seed(candidates) else {
            return Ok(());
        };
        let mut left = self.refine;
        let t = bench.target();
        while left > 0 && time_left().is_none_or(|d| !d.is_zero()) {
            let round: Vec<Recipe> = neighbours(t, &from, usize::MAX)
                .into_iter()
                .filter(|r| !picks.iter().any(|p| p.as_ref() == Some(r)))
                .take(ROUND.min(left))
                .collect();
            if round.is_empty() {
                break;
            }
            left -= round.len();
            let origin = format!("one edit from {}", describe(&from));
            let mut cands: Vec<Candidate> = round
                .iter()
                .map(|r| {
                    Candidate::unmeasured(
                        Neighbour {
                            program: REFINE.into(),
                            nest: origin.clone(),
                            distance: 0.0,
                            speedup_there: 0.0,
                        },
                        r.clone(),
                        Vec::new(),
                    )
                })
                .collect();
            let round_picks: Vec<Option<Recipe>> = round.into_iter().map(Some).collect();
            let m = self.measure_picks(
                ctx,
                bench,
                base,
                &round_picks,
                Proposer::Refine,
                &mut cands,
                time_left(),
            )?;
            measured.variants += m.variants - 1;
            measured.building_s += m.building_s;
            measured.measuring_s += m.measuring_s;
            let better = cands
                .iter()
                .filter(|c| c.verdict == CandidateVerdict::Verified && c.speedup > best)
                .max_by(|a, b| a.speedup.total_cmp(&b.speedup))
                .map(|c| (c.recipe.clone(), c.speedup));
            candidates.extend(cands);
            picks.extend(round_picks);
            match better {
                Some((r, s)) => {
                    from = r;
                    best = s;
                }
                None => break,
            }
        }
        Ok(())
    }
}

/// A recipe in a few words: its steps' kinds.
fn describe(r: &Recipe) -> String {
    if r.steps.is_empty() {
        return "the untransformed nest".into();
    }
    let kinds: Vec<String> = r.steps.iter().map(Step::kind).collect();
    kinds.join("+")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(there: f64, verdict: CandidateVerdict, speedup: f64, steps: usize) -> Candidate {
        let mut c = Candidate::unmeasured(
            Neighbour {
                program: "p".into(),
                nest: "nest0".into(),
                distance: 0.1,
                speedup_there: there,
            },
            Recipe {
                steps: vec![ir::transform::Step::Unroll { at: 0, factor: 2 }; steps],
            },
            Vec::new(),
        );
        c.verdict = verdict;
        c.speedup = speedup;
        c
    }

    #[test]
    fn refines_from_the_best_where_the_neighbours_promised_more() {
        use CandidateVerdict::*;
        // Neighbours reached 4x where they were found; here the best reaches 2x.
        let c = vec![cand(4.0, Verified, 2.0, 1), cand(3.0, Verified, 1.5, 2)];
        let (r, s) = seed(&c).unwrap();
        assert_eq!((r.steps.len(), s), (1, 2.0));
        // 3.7x of 4x is within the margin: nothing to refine.
        let c = vec![cand(4.0, Verified, 3.7, 1)];
        assert!(seed(&c).is_none());
        // Nothing verified: from the untransformed nest.
        let c = vec![cand(2.0, Refused, 0.0, 1), cand(0.0, NotMeasured, 0.0, 1)];
        assert_eq!(seed(&c).unwrap(), (Recipe::default(), 1.0));
        // A candidate slower than the baseline is no seed.
        let c = vec![cand(1.5, Verified, 0.8, 1)];
        assert_eq!(seed(&c).unwrap(), (Recipe::default(), 1.0));
        // Candidates passed over or refused promise nothing.
        let c = vec![
            cand(1.2, Verified, 1.15, 1),
            cand(9.0, NotMeasured, 0.0, 1),
            cand(9.0, Refused, 0.0, 1),
            cand(9.0, SameRecipe, 0.0, 1),
        ];
        assert!(seed(&c).is_none());
        // One that ran and failed did promise.
        let c = vec![cand(1.2, Verified, 1.15, 1), cand(9.0, Crashed, 0.0, 1)];
        assert_eq!(seed(&c).unwrap().1, 1.15);
    }

    #[test]
    fn a_recipe_is_described_by_its_steps() {
        assert_eq!(describe(&Recipe::default()), "the untransformed nest");
        let r = Recipe {
            steps: vec![
                ir::transform::Step::Vectorize { at: 2, width: None },
                ir::transform::Step::Unroll { at: 1, factor: 4 },
            ],
        };
        assert_eq!(describe(&r), "vectorize+unroll");
    }
}

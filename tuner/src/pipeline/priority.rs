//! The order in which a nest's candidates are measured: the likeliest fastest first.
//!
//! Every candidate is measured against the best median so far, and stops early once it
//! is clearly slower (a run over 1.5x that best, or its mean's interval above it) or
//! clearly faster (three runs below the best's interval): `tune_loop::Bounds`. The
//! sooner the fastest candidate runs, the sooner the others stop. The order:
//! 1. the rules' recipes (register tiles of products, time tiles of stencils, a loop
//!    order of unit stride), which are built for the nest's own shape, and on the
//!    dataset were the fastest candidate of most nests they applied to;
//! 2. the neighbours' recipes, by the speedup they gave where they were found, highest
//!    first.
//!
//! The order of equals is the list's (the ranker's order). The order changes what is
//! measured when, not what is chosen: a candidate that stops early as slower could not
//! have been the fastest. A candidate that stops early as faster has settled that it
//! beats the baseline, not which of two close winners is the faster: where the two
//! fastest lie within [`CLOSE`] of each other, the one stopped early is measured again in
//! full ([`close_winners`]).

use crate::report::Candidate;
use crate::tune_loop::Trial;
use ir::transform::Recipe;
use profiling::cutout::{CutoutRun, Verdict};
use profiling::measure::Stats;

/// The recipes of `picks` (one per candidate; `None`: passed over) in the order they
/// are measured.
pub(super) fn measurement_order(candidates: &[Candidate], picks: &[Option<Recipe>]) -> Vec<Recipe> {
    let mut listed: Vec<(usize, &Candidate, &Recipe)> = candidates
        .iter()
        .zip(picks)
        .enumerate()
        .filter_map(|(i, (c, p))| Some((i, c, p.as_ref()?)))
        .collect();
    listed.sort_by(|a, b| {
        // `false` (a rule) sorts first.
        let neighbour = |c: &Candidate| !is_rule(c);
        neighbour(a.1)
            .cmp(&neighbour(b.1))
            .then(b.1.from.speedup_there.total_cmp(&a.1.from.speedup_there))
            .then(a.0.cmp(&b.0))
    });
    listed.into_iter().map(|(_, _, r)| r.clone()).collect()
}

/// Two winners closer than this (ratio of medians) are told apart on like samples.
pub(super) const CLOSE: f64 = 1.1;

/// The trials to measure again in full before the choice: where the two fastest verified
/// candidates that beat the baseline lie within [`CLOSE`] of each other and one of them
/// stopped early as clearly faster, that one. Its three runs settled that it beats the
/// baseline, not which of two close winners is the faster.
pub(super) fn close_winners(trials: &[Trial], base: &Stats) -> Vec<usize> {
    let mut winners: Vec<(usize, &CutoutRun)> = trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Trial::Ran { run, .. }
                if run.verdict == Verdict::Verified && crate::select::beats(base, &run.stats) =>
            {
                Some((i, &**run))
            }
            _ => None,
        })
        .collect();
    winners.sort_by(|a, b| a.1.stats.median.total_cmp(&b.1.stats.median));
    match winners.as_slice() {
        [(i, a), (j, b), ..] if b.stats.median < CLOSE * a.stats.median => [(*i, a), (*j, b)]
            .into_iter()
            .filter(|(_, r)| r.faster)
            .map(|(k, _)| k)
            .collect(),
        _ => Vec::new(),
    }
}

/// A rule's candidate: its source is a rule (`register-tile rule`, `time-tile rule`,
/// `loop-order rule`), not a database entry.
pub(super) fn is_rule(c: &Candidate) -> bool {
    c.from.program.ends_with(" rule")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Neighbour;
    use ir::transform::Step;

    fn candidate(program: &str, speedup_there: f64, factor: u32) -> (Candidate, Option<Recipe>) {
        let recipe = Recipe {
            steps: vec![Step::Unroll { at: 0, factor }],
        };
        let from = Neighbour {
            program: program.into(),
            nest: "nest0".into(),
            distance: 0.1,
            speedup_there,
        };
        (
            Candidate::unmeasured(from, recipe.clone(), Vec::new()),
            Some(recipe),
        )
    }

    #[test]
    fn rules_first_then_neighbours_by_their_speedup_there() {
        let (mut cs, mut picks): (Vec<_>, Vec<_>) = [
            candidate("gemm", 1.2, 2),
            candidate("2mm", 4.0, 3),
            candidate("syrk", 1.2, 4),
            candidate("time-tile rule", 0.0, 5),
            candidate("register-tile rule", 0.0, 6),
        ]
        .into_iter()
        .unzip();
        // A neighbour passed over (the same recipe as another) is not measured.
        let (c, _) = candidate("atax", 9.0, 7);
        cs.push(c);
        picks.push(None);
        let factors: Vec<u32> = measurement_order(&cs, &picks)
            .iter()
            .map(|r| match r.steps[0] {
                Step::Unroll { factor, .. } => factor,
                _ => unreachable!(),
            })
            .collect();
        // Rules in their order, then 4.0x, then the two 1.2x in the list's order.
        assert_eq!(factors, vec![5, 6, 3, 2, 4]);
        assert!(is_rule(&cs[3]) && !is_rule(&cs[0]));
    }

    fn ran(samples: &[f64], faster: bool) -> Trial {
        Trial::Ran {
            recipe: Recipe::default(),
            exe: "x".into(),
            run: Box::new(CutoutRun {
                nest: "nest0".into(),
                variant: "v".into(),
                version: 0,
                verdict: Verdict::Verified,
                warmup: 0,
                samples: samples.to_vec(),
                stats: Stats::from_samples(samples),
                counters: Vec::new(),
                wall_s: 0.0,
                first_s: 0.0,
                killed: false,
                faster,
                futile: false,
            }),
        }
    }

    #[test]
    fn close_winners_stopped_early_are_measured_again() {
        let base = Stats::from_samples(&[1.0, 1.0, 1.1, 1.2, 1.2]);
        // 0.60 (three runs, stopped faster) and 0.58 (ten runs): within 10%, the first
        // is measured again. A candidate not beating the baseline does not count.
        let t = [
            ran(&[0.58, 0.6, 0.62], true),
            ran(&[0.57, 0.58, 0.59, 0.58, 0.58], false),
            ran(&[0.9, 1.3, 1.0], false),
        ];
        assert_eq!(close_winners(&t, &base), vec![0]);
        // Far apart (0.3 against 0.58): the choice is clear.
        let t = [
            ran(&[0.29, 0.3, 0.31], true),
            ran(&[0.57, 0.58, 0.59, 0.58, 0.58], false),
        ];
        assert!(close_winners(&t, &base).is_empty());
        // Close, neither stopped early: nothing to do; one winner alone: nothing either.
        let t = [
            ran(&[0.58, 0.6, 0.62, 0.6, 0.6], false),
            ran(&[0.57, 0.58, 0.59, 0.58, 0.58], false),
        ];
        assert!(close_winners(&t, &base).is_empty());
        assert!(close_winners(&t[..1], &base).is_empty());
    }
}

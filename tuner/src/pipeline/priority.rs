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
//!
//! On a long nest (a baseline of [`crate::pipeline::LONG_RUN_S`] and more, where every
//! run costs seconds) a neighbour's recipe is not measured at all once a candidate here
//! is more than [`HOPELESS`] times faster than the speedup the recipe gave where it was
//! found ([`Prior::hopeless`]); the report says so. That changes what is chosen only
//! where such a recipe would have won by more than its own record: transfer tuning
//! rests on the opposite.

use crate::report::Candidate;
use crate::tune_loop::{Bounds, Trial};
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

/// A neighbour's recipe is not measured on a nest of [`crate::pipeline::LONG_RUN_S`] and
/// more once a candidate here is more than this many times faster than the speedup the
/// recipe gave where it was found.
pub(super) const HOPELESS: f64 = 1.5;

/// What a candidate is worth before it is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Prior {
    /// A rule's recipe (no measured speedup to go by).
    pub rule: bool,
    /// The speedup the recipe gave where it was found (0: unknown).
    pub speedup_there: f64,
}

impl Prior {
    /// The prior of candidate `c`.
    pub fn of(c: &Candidate) -> Prior {
        Prior {
            rule: is_rule(c),
            speedup_there: c.from.speedup_there,
        }
    }

    /// Why a neighbour's recipe is not worth a run on a nest whose baseline median is
    /// `base_median` seconds, given the early-stop bounds so far (their best median): on
    /// a long nest, every run costs seconds, and a recipe that gave 1.1x where it was
    /// found is not measured against a 2x candidate here. Rules' recipes, and those of
    /// unknown speedup, are always measured.
    pub fn hopeless(&self, base_median: f64, bounds: Option<&Bounds>) -> Option<String> {
        let b = bounds?;
        if self.rule
            || self.speedup_there <= 0.0
            || base_median < crate::pipeline::LONG_RUN_S
            || b.best <= 0.0
        {
            return None;
        }
        let best = base_median / b.best;
        (self.speedup_there * HOPELESS < best).then(|| {
            format!(
                "not measured: its recipe gave {:.2}x where it was found, and a candidate \
                 here gives {best:.2}x already (more than {HOPELESS}x that); on a nest of \
                 {:.0} ms per run only candidates that can still win are measured",
                self.speedup_there,
                base_median * 1e3
            )
        })
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
                batch: 1,
                exact: false,
            }),
        }
    }

    #[test]
    fn a_neighbours_recipe_far_behind_the_best_is_not_measured_on_a_long_nest() {
        let bounds = |best: f64| Bounds {
            kill_after: 1.5 * best,
            best,
            faster_than: 0.9 * best,
            beat: Some(16.0),
        };
        let neighbour = Prior {
            rule: false,
            speedup_there: 1.14,
        };
        // A 17 s nest with a 9 s candidate (1.89x): 1.14 x 1.5 = 1.71 is behind it.
        let why = neighbour.hopeless(17.0, Some(&bounds(9.0))).unwrap();
        assert!(why.contains("1.14x") && why.contains("1.89x"), "{why}");
        // A 12 s candidate (1.42x): within reach, measured.
        assert_eq!(neighbour.hopeless(17.0, Some(&bounds(12.0))), None);
        // Rules, unknown speedups, short nests and no bounds yet: always measured.
        let rule = Prior {
            rule: true,
            ..neighbour
        };
        assert_eq!(rule.hopeless(17.0, Some(&bounds(1.0))), None);
        let unknown = Prior {
            speedup_there: 0.0,
            ..neighbour
        };
        assert_eq!(unknown.hopeless(17.0, Some(&bounds(1.0))), None);
        assert_eq!(neighbour.hopeless(0.1, Some(&bounds(0.01))), None);
        assert_eq!(neighbour.hopeless(17.0, None), None);
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

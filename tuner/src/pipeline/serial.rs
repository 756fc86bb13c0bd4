//! One thread where starting a team is the cost. A transferred recipe can run a nest
//! several times faster warm and still lose in the program: its first run starts an
//! OpenMP team, and a nest that the program runs once or a few times, for a few
//! milliseconds, does not win that start back (`select::Judgement::SlowerCold`). The
//! rest of such a recipe (its tiles, unroll-and-jam, scalar replacement, vector loops)
//! may still pay on one thread. Where a candidate lost only to its cold run and was
//! faster warm than the kept one (if any), the fastest of those is measured once more
//! with its parallel steps made serial (`ir::transform::Step::serial`); so is a kept
//! recipe that starts a team in a nest shorter than [`SHORT_S`] per program run, whose
//! team the whole-program check may find too costly. One more measured variant at
//! most, reported as from [`SERIAL`], where the nest's K candidates left a slot free
//! (`pipeline/budget.rs`) or the nest is short: a variant beyond K + 1 there costs a
//! few milliseconds, and without it a short program keeps no recipe whose team's
//! start the whole-program check finds too costly.

use super::{Baseline, Measured, NestContext, Pipeline};
use crate::nest_bench::NestBench;
use crate::report::{Candidate, CandidateVerdict, Neighbour};
use crate::select::{program_time, select, Judgement, Timing};
use crate::strategy::Proposer;
use crate::Result;
use ir::transform::Recipe;
use std::time::Duration;

/// The program name the one-thread candidate carries.
pub const SERIAL: &str = "one thread";

/// A nest whose time in one program run (cold run included) is below this is short:
/// a few OpenMP team starts (milliseconds each on a 2-core virtual machine, the
/// first parallel region of a process slowest).
pub const SHORT_S: f64 = 0.02;

/// Whether the nest timed `base`, run `calls` times a program run, is short
/// ([`SHORT_S`]).
fn is_short(base: &Timing, calls: u64) -> bool {
    program_time(base.first, calls, base.stats.median) < SHORT_S
}

/// The recipe to measure on one thread, and the candidate it comes from: the fastest
/// candidate that lost to its cold run alone, faster warm than the kept one (if any),
/// and, made serial, a recipe not empty and not measured yet.
pub(super) fn seed(
    candidates: &[Candidate],
    picks: &[Option<Recipe>],
    base: &Timing,
    calls: u64,
) -> Option<(usize, Recipe)> {
    let s = select(base, calls, &super::candidate_timings(candidates));
    // What the kept candidate (if any) reached warm: a recipe made serial would have
    // to beat it, so only those that lost to their start from above it are worth it.
    let kept = s.best.map_or(1.0, |i| candidates[i].speedup);
    // A kept recipe that starts a team in a nest of a short program: its cutout's cold
    // run may not show what the team's start costs in the program, where the
    // whole-program check can then give it up for the nest's fastest recipe that
    // starts none (`ApplyReport::without_teams`): its serial form is one.
    let short = is_short(base, calls);
    candidates
        .iter()
        .enumerate()
        .zip(&s.judgements)
        .filter(|((i, c), j)| {
            let lost = **j == Some(Judgement::SlowerCold) && c.speedup > kept;
            let kept_short = short && s.best == Some(*i);
            c.recipe.starts_team() && (lost || kept_short)
        })
        .filter_map(|((i, c), _)| {
            let serial = Recipe {
                steps: c.recipe.steps.iter().filter_map(|s| s.serial()).collect(),
            };
            let new =
                !serial.steps.is_empty() && !picks.iter().any(|p| p.as_ref() == Some(&serial));
            new.then_some((i, c.speedup, serial))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _, serial)| (i, serial))
}

impl Pipeline {
    /// Measures [`seed`]'s recipe, if any; its candidate and pick are appended to the
    /// nest's, its cost added to `measured`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn one_thread(
        &self,
        ctx: &NestContext,
        bench: &NestBench,
        base: &Baseline,
        candidates: &mut Vec<Candidate>,
        picks: &mut Vec<Option<Recipe>>,
        measured: &mut Measured,
        time_left: Option<Duration>,
    ) -> Result<()> {
        if time_left.is_some_and(|d| d.is_zero()) {
            return Ok(());
        }
        let timing = Timing {
            stats: base.run.stats,
            first: base.first,
        };
        // In a slot the nest's K candidates left free (`pipeline/budget.rs`; `measured`
        // counts the baseline too), or beyond them in a short nest, where a team's
        // start is what decides and a measurement costs milliseconds.
        if measured.variants > self.k && !is_short(&timing, base.calls) {
            return Ok(());
        }
        let Some((from, recipe)) = seed(candidates, picks, &timing, base.calls) else {
            return Ok(());
        };
        let origin = &candidates[from].from;
        let mut cands = vec![Candidate::unmeasured(
            Neighbour {
                program: SERIAL.into(),
                nest: format!("{} {}", origin.program, origin.nest),
                distance: 0.0,
                speedup_there: 0.0,
            },
            recipe.clone(),
            Vec::new(),
        )];
        let one = vec![Some(recipe)];
        let m = self.measure_picks(
            ctx,
            bench,
            base,
            &one,
            Proposer::Transfer,
            &mut cands,
            time_left,
        )?;
        measured.variants += m.variants - 1;
        measured.building_s += m.building_s;
        measured.measuring_s += m.measuring_s;
        if cands[0].verdict == CandidateVerdict::NotMeasured {
            return Ok(());
        }
        candidates.extend(cands);
        picks.extend(one);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::transform::Step;
    use profiling::measure::Stats;

    fn stats(median_ms: f64) -> Stats {
        Stats {
            median: median_ms * 1e-3,
            median_ci: (median_ms * 0.98e-3, median_ms * 1.02e-3),
            ..Stats::default()
        }
    }

    fn candidate(recipe: Recipe, median_ms: f64, first_ms: f64, base_ms: f64) -> Candidate {
        let mut c = Candidate::unmeasured(
            Neighbour {
                program: "p".into(),
                nest: "nest0".into(),
                distance: 0.0,
                speedup_there: 2.0,
            },
            recipe,
            Vec::new(),
        );
        c.verdict = CandidateVerdict::Verified;
        c.stats = Some(stats(median_ms));
        c.first = Some(first_ms * 1e-3);
        c.speedup = base_ms / median_ms;
        c
    }

    fn tile() -> Step {
        Step::Tile {
            at: 0,
            sizes: vec![64],
            inner: Vec::new(),
        }
    }

    fn parallel() -> Step {
        Step::Parallelize {
            at: 0,
            schedule: ir::program::Schedule::Static,
            chunk: None,
            collapse: None,
        }
    }

    fn unroll_of(factor: u32) -> Recipe {
        Recipe {
            steps: vec![Step::Unroll { at: 1, factor }],
        }
    }

    fn parallel_tiled() -> Recipe {
        Recipe {
            steps: vec![tile(), parallel(), Step::ScalarReplace { at: 2 }],
        }
    }

    #[test]
    fn a_recipe_lost_to_its_team_start_is_tried_on_one_thread() {
        // Baseline 2.3 ms, run once. The parallel recipe: 0.6 ms warm, 5.3 ms cold
        // (the team's start); a plain unroll within the noise.
        let base = Timing {
            stats: stats(2.3),
            first: Some(2.3e-3),
        };
        let unroll = unroll_of(2);
        let cands = vec![
            candidate(parallel_tiled(), 0.6, 5.3, 2.3),
            candidate(unroll.clone(), 2.28, 2.3, 2.3),
        ];
        let picks = vec![Some(parallel_tiled()), Some(unroll)];
        let (from, r) = seed(&cands, &picks, &base, 1).unwrap();
        assert_eq!(from, 0);
        assert_eq!(r.steps, vec![tile(), Step::ScalarReplace { at: 2 }]);
        // A kept candidate faster warm than the one lost to its start: nothing more.
        let fast = candidate(unroll_of(4), 0.55, 0.6, 2.3);
        let both = vec![cands[0].clone(), fast];
        assert!(seed(&both, &picks, &base, 1).is_none());
        // A kept one slower warm: the lost one is tried on one thread all the same.
        let slow = candidate(unroll_of(4), 2.0, 2.0, 2.3);
        let both = vec![cands[0].clone(), slow];
        assert_eq!(seed(&both, &picks, &base, 1).unwrap().0, 0);
        // Run 20 times per program (46 ms), the team's start pays: the recipe is kept,
        // nothing more is tried. Run 5 times (11.5 ms), it is kept and tried on one
        // thread as well.
        assert!(seed(&cands, &picks, &base, 20).is_none());
        assert_eq!(seed(&cands, &picks, &base, 5).unwrap().0, 0);
        // Measured already on one thread: not again.
        let mut with = picks.clone();
        with.push(Some(r));
        assert!(seed(&cands, &with, &base, 1).is_none());
        // A recipe that is only its parallel loop has nothing left on one thread.
        let only = Recipe {
            steps: vec![parallel()],
        };
        let cands = vec![candidate(only.clone(), 0.6, 5.3, 2.3)];
        assert!(seed(&cands, &[Some(only.clone())], &base, 1).is_none());
        // Then the next fastest that lost to its start is the one.
        let cands = vec![
            candidate(only.clone(), 0.5, 5.3, 2.3),
            candidate(parallel_tiled(), 0.6, 5.3, 2.3),
        ];
        let (from, _) = seed(&cands, &[Some(only), Some(parallel_tiled())], &base, 1).unwrap();
        assert_eq!(from, 1);
    }
}

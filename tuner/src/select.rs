//! The keep/refuse decision of transfer tuning, as a pure function of measured times.
//!
//! A candidate is kept only if it is verified, faster than the untransformed nest
//! beyond the measured noise (its median's 95% interval lies below the baseline's),
//! and not slower in the program's terms: a nest invoked `n` times costs its cold
//! first run plus `n - 1` warm runs ([`program_time`]), and for a nest that runs
//! briefly the cold run (an OpenMP team to start, idle cores to wake) can outweigh a
//! faster warm run. Of the candidates that pass, the one fastest in the program wins.

use profiling::measure::Stats;

/// A variant's measured times: warm runs and, where measured, the median cold run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Statistics of the warm runs.
    pub stats: Stats,
    /// Median of its cold runs (seconds).
    pub first: Option<f64>,
}

/// Why a verified candidate was kept or not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Judgement {
    /// Faster beyond the noise, warm and in the program.
    Faster,
    /// Faster warm, but its cold first run makes it slower in the program.
    SlowerCold,
    /// Within the noise of the baseline, or slower.
    NotFaster,
}

/// The decision over one nest's candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Per candidate: its judgement, or None for one that was not verified.
    pub judgements: Vec<Option<Judgement>>,
    /// The kept candidate.
    pub best: Option<usize>,
}

/// A variant's time in the program for a nest run `calls` times: its cold run plus
/// `calls - 1` warm runs (the median), or `calls` warm runs when its cold run was not
/// measured.
pub fn program_time(first: Option<f64>, calls: u64, median: f64) -> f64 {
    let calls = calls.max(1);
    match first {
        Some(f) => f + (calls - 1) as f64 * median,
        None => calls as f64 * median,
    }
}

/// Whether `s` is faster than the baseline beyond the noise: its median's 95%
/// interval lies below the baseline's.
pub fn beats(base: &Stats, s: &Stats) -> bool {
    s.median_ci.1 < base.median_ci.0
}

/// Judges every candidate (None: not verified) against the baseline of a nest the
/// program runs `calls` times, and picks the one to keep.
pub fn select(base: &Timing, calls: u64, candidates: &[Option<Timing>]) -> Selection {
    let base_program = program_time(base.first, calls, base.stats.median);
    // Candidates have cold runs only where the baseline has them.
    let loses_cold = |c: &Timing| {
        c.first
            .is_some_and(|f| program_time(Some(f), calls, c.stats.median) >= base_program)
    };
    let judgements: Vec<Option<Judgement>> = candidates
        .iter()
        .map(|c| {
            c.as_ref()
                .map(|c| match (beats(&base.stats, &c.stats), loses_cold(c)) {
                    (true, true) => Judgement::SlowerCold,
                    (true, false) => Judgement::Faster,
                    (false, _) => Judgement::NotFaster,
                })
        })
        .collect();
    let best = candidates
        .iter()
        .zip(&judgements)
        .enumerate()
        .filter_map(|(i, (c, j))| match (c, j) {
            (Some(c), Some(Judgement::Faster)) => {
                Some((i, program_time(c.first, calls, c.stats.median)))
            }
            _ => None,
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    Selection { judgements, best }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(median_ms: f64, spread_ms: f64, first_ms: Option<f64>) -> Timing {
        Timing {
            stats: Stats {
                median: median_ms * 1e-3,
                median_ci: (
                    (median_ms - spread_ms) * 1e-3,
                    (median_ms + spread_ms) * 1e-3,
                ),
                ..Stats::default()
            },
            first: first_ms.map(|f| f * 1e-3),
        }
    }

    #[test]
    fn a_slow_cold_run_outweighs_a_fast_warm_one_only_in_nests_run_rarely() {
        // Baseline 2 ms warm and cold; candidate 1 ms warm, 7 ms cold (a team to start).
        let (base, cand) = ((Some(2e-3), 2e-3), (Some(7e-3), 1e-3));
        let t = |v: (Option<f64>, f64), n| program_time(v.0, n, v.1);
        assert!(t(cand, 1) > t(base, 1));
        assert!((t(cand, 1) - 7e-3).abs() < 1e-12);
        // Run 10 times: 7 + 9 x 1 = 16 ms against 20 ms.
        assert!((t(cand, 10) - 16e-3).abs() < 1e-12);
        assert!(t(cand, 10) < t(base, 10));
        // Unmeasured cold runs: warm runs only; a nest never seen counts once.
        assert_eq!(program_time(None, 3, 1e-3), 3e-3);
        assert_eq!(program_time(None, 0, 1e-3), 1e-3);
    }

    #[test]
    fn the_fastest_candidate_beyond_the_noise_wins() {
        let base = timing(10.0, 0.5, None);
        let c = [
            Some(timing(9.8, 0.5, None)), // within the noise
            Some(timing(6.0, 0.2, None)),
            None, // not verified
            Some(timing(5.0, 0.2, None)),
            Some(timing(12.0, 0.2, None)), // slower
        ];
        let s = select(&base, 1, &c);
        assert_eq!(s.best, Some(3));
        assert_eq!(
            s.judgements,
            [
                Some(Judgement::NotFaster),
                Some(Judgement::Faster),
                None,
                Some(Judgement::Faster),
                Some(Judgement::NotFaster)
            ]
        );
        // Nothing beats the baseline: nothing is kept.
        assert_eq!(select(&base, 1, &c[..1]).best, None);
        assert_eq!(select(&base, 1, &[]).best, None);
    }

    #[test]
    fn a_candidate_slower_once_its_cold_run_counts_is_refused() {
        // Baseline 2 ms warm, 2 ms cold; run once per program run.
        let base = timing(2.0, 0.1, Some(2.0));
        let fast_warm_slow_cold = Some(timing(1.0, 0.1, Some(7.0)));
        let fast_both = Some(timing(1.5, 0.1, Some(1.6)));
        let s = select(&base, 1, &[fast_warm_slow_cold, fast_both]);
        assert_eq!(
            s.judgements,
            [Some(Judgement::SlowerCold), Some(Judgement::Faster)]
        );
        assert_eq!(s.best, Some(1));
        // Run 100 times, the cold run no longer matters: the faster warm one wins.
        let s = select(&base, 100, &[fast_warm_slow_cold, fast_both]);
        assert_eq!(s.best, Some(0));
    }
}

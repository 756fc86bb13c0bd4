//! Measurement configuration and statistics.
//!
//! [`Measure`] is the builder handed to every runner (warmup, repetitions, adaptive
//! stopping on the confidence interval of the median, time budget, cache flush,
//! counters). [`Stats`] is computed from raw samples, which are always kept, so every
//! number reported can be traced back to them.

use serde::{Deserialize, Serialize};

/// How to measure one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Runs before timing starts (not counted).
    pub warmup: u32,
    /// Timed runs (the minimum when adaptive).
    pub repetitions: u32,
    /// Stop once the 95% interval of the median is within ±`target_ci` of it
    /// (relative); `None` runs exactly `repetitions`.
    pub target_ci: Option<f64>,
    /// Upper bound on timed runs when adaptive.
    pub max_repetitions: u32,
    /// Stop adding runs after this many seconds (adaptive only).
    pub max_time_s: f64,
    /// Evict the caches before every run (by touching a buffer of `flush_bytes`).
    pub flush: bool,
    pub flush_bytes: u64,
    /// perf events to count (`cycles`, `instructions`, `cache-misses`, `task-clock`, ...).
    pub counters: Vec<String>,
    /// Stop repeating once a timed run took longer than this (seconds): the variant is
    /// clearly slower than the best so far. `None` never stops early.
    #[serde(default)]
    pub kill_after_s: Option<f64>,
    /// Adaptive only: runs so short that `max_repetitions` of them time less than this
    /// many seconds are repeated until they do (up to 100,000 runs, each on restored
    /// inputs, and no more than fit in 50 times this many seconds of wall time, the
    /// restores included), unless the interval is tight first. 0: off.
    #[serde(default)]
    pub short_total_s: f64,
    /// Adaptive only: runs of this many seconds and more are long (0: off). A long
    /// warmup run becomes the first timed run (without counters) and the rest of the
    /// warmup is skipped; long runs may stop from the third timed run once the Student t
    /// 95% interval of their mean is within `target_ci`.
    #[serde(default)]
    pub long_run_s: f64,
    /// Stop repeating once the Student t 95% interval of the mean of two or more timed
    /// runs lies wholly above this many seconds (the best median so far): the variant is
    /// clearly slower and is reported killed. `None` never stops on it.
    #[serde(default)]
    pub slower_than_s: Option<f64>,
    /// Stop repeating once three or more timed runs were all shorter than this many
    /// seconds (the lower end of the 95% interval of the best median so far): the
    /// variant is clearly faster, and more runs would not change that. `None` never
    /// stops on it.
    #[serde(default)]
    pub faster_than_s: Option<f64>,
    /// Long runs stop after this many timed runs (a baseline: its interval of the
    /// median is its min..max until the eighth run, so runs four to seven settle
    /// nothing). `None`: the long-run rule alone.
    #[serde(default)]
    pub long_reps: Option<u32>,
    /// Long runs stop after three timed runs not all shorter than this many seconds
    /// (the lower end of the baseline's interval): their median's interval cannot then
    /// fall below it before the eighth run, and the run is reported futile.
    #[serde(default)]
    pub beat_s: Option<f64>,
    /// Adaptive only: a run shorter than half this many seconds is timed in batches of
    /// consecutive calls, each sample lasting about this long, where the nest leaves its
    /// outputs unchanged when run on them again (checked in the run, bit for bit; a nest
    /// that updates in place keeps single runs on restored inputs). 0: off.
    #[serde(default)]
    pub batch_s: f64,
}

/// Hardware and software events read by default where the kernel allows them.
pub const DEFAULT_COUNTERS: &[&str] = &[
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "task-clock",
    "page-faults",
    "context-switches",
];

/// The hardware events of [`DEFAULT_COUNTERS`] (the first six): what a PMU counts.
pub const HARDWARE_COUNTERS: &[&str] = DEFAULT_COUNTERS.split_at(6).0;

impl Default for Measure {
    fn default() -> Self {
        Measure {
            warmup: 1,
            repetitions: 5,
            target_ci: None,
            max_repetitions: 100,
            max_time_s: 10.0,
            flush: false,
            flush_bytes: 64 << 20,
            counters: DEFAULT_COUNTERS.iter().map(|s| s.to_string()).collect(),
            kill_after_s: None,
            short_total_s: 0.0,
            long_run_s: 0.0,
            slower_than_s: None,
            faster_than_s: None,
            long_reps: None,
            beat_s: None,
            batch_s: 0.0,
        }
    }
}

impl Measure {
    pub fn warmup(mut self, n: u32) -> Self {
        self.warmup = n;
        self
    }

    pub fn repetitions(mut self, n: u32) -> Self {
        self.repetitions = n.max(1);
        self
    }

    /// Adaptive stopping: at least `repetitions`, at most `max`, until the 95% interval
    /// of the median is within ±`target` (relative).
    pub fn adaptive(mut self, target: f64, max: u32) -> Self {
        self.target_ci = Some(target);
        self.max_repetitions = max;
        self
    }

    /// Stop repeating once a timed run exceeds `seconds`.
    pub fn kill_after(mut self, seconds: f64) -> Self {
        self.kill_after_s = Some(seconds);
        self
    }

    /// Stop repeating once the mean of the timed runs is clearly above `seconds`.
    pub fn slower_than(mut self, seconds: f64) -> Self {
        self.slower_than_s = Some(seconds);
        self
    }

    /// Stop repeating once three timed runs were all shorter than `seconds`.
    pub fn faster_than(mut self, seconds: f64) -> Self {
        self.faster_than_s = Some(seconds);
        self
    }

    /// Long runs stop after `n` timed runs (see [`Measure::long_reps`]).
    pub fn long_reps(mut self, n: u32) -> Self {
        self.long_reps = Some(n.max(1));
        self
    }

    /// Long runs stop after three timed runs not all shorter than `seconds` (see
    /// [`Measure::beat_s`]).
    pub fn beat(mut self, seconds: f64) -> Self {
        self.beat_s = Some(seconds);
        self
    }

    /// Runs of `seconds` and more warm themselves and may stop from the third run
    /// (see [`Measure::long_run_s`]).
    pub fn long_runs(mut self, seconds: f64) -> Self {
        self.long_run_s = seconds;
        self
    }

    /// Short runs get more repetitions: until `seconds` of them were timed.
    pub fn short_runs(mut self, seconds: f64) -> Self {
        self.short_total_s = seconds;
        self
    }

    /// Batches runs shorter than `seconds / 2` into samples of about `seconds`
    /// ([`Measure::batch_s`]).
    pub fn batch(mut self, seconds: f64) -> Self {
        self.batch_s = seconds;
        self
    }

    pub fn max_time(mut self, seconds: f64) -> Self {
        self.max_time_s = seconds;
        self
    }

    pub fn flush(mut self, on: bool) -> Self {
        self.flush = on;
        self
    }

    pub fn flush_bytes(mut self, bytes: u64) -> Self {
        self.flush_bytes = bytes;
        self
    }

    pub fn counters(mut self, names: &[&str]) -> Self {
        self.counters = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The runtime's `key=value` arguments for a cutout.
    pub fn runtime_args(&self) -> Vec<String> {
        let mut v = vec![
            format!("warmup={}", self.warmup),
            format!("reps={}", self.repetitions),
        ];
        if let Some(t) = self.target_ci {
            v.push(format!("target_ci={t}"));
            v.push(format!(
                "max_reps={}",
                self.max_repetitions.max(self.repetitions)
            ));
            v.push(format!("max_time={}", self.max_time_s));
            if self.batch_s > 0.0 {
                v.push(format!("batch={}", self.batch_s));
            }
            if self.short_total_s > 0.0 {
                v.push(format!("short_total={}", self.short_total_s));
            }
            if self.long_run_s > 0.0 {
                v.push(format!("long_run={}", self.long_run_s));
                if let Some(n) = self.long_reps {
                    v.push(format!("long_reps={n}"));
                }
                if let Some(b) = self.beat_s {
                    v.push(format!("beat={b}"));
                }
            }
        }
        if self.flush {
            v.push(format!("flush={}", self.flush_bytes));
        }
        if let Some(k) = self.kill_after_s {
            v.push(format!("kill_after={k}"));
        }
        if let Some(b) = self.slower_than_s {
            v.push(format!("slower_than={b}"));
        }
        if let Some(b) = self.faster_than_s {
            v.push(format!("faster_than={b}"));
        }
        if !self.counters.is_empty() {
            v.push(format!("counters={}", self.counters.join(",")));
        }
        v
    }
}

/// Summary statistics of a set of samples (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub mean: f64,
    pub median: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1).
    pub stddev: f64,
    /// Distribution-free 95% confidence interval of the median (order statistics).
    pub median_ci: (f64, f64),
}

impl Stats {
    pub fn from_samples(samples: &[f64]) -> Stats {
        let n = samples.len();
        if n == 0 {
            return Stats::default();
        }
        let mut s: Vec<f64> = samples.to_vec();
        s.sort_by(|a, b| a.total_cmp(b));
        let mean = s.iter().sum::<f64>() / n as f64;
        let median = crate::stats::median(&s);
        let var = if n > 1 {
            s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        // Ranks n/2 ∓ 1.96·√n/2 bound the median with ≈95% confidence for any distribution.
        let half = 0.98 * (n as f64).sqrt();
        let lo = ((n as f64 / 2.0 - half).floor().max(0.0)) as usize;
        let hi = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
        Stats {
            n,
            min: s[0],
            mean,
            median,
            max: s[n - 1],
            stddev: var.sqrt(),
            median_ci: (s[lo], s[hi]),
        }
    }

    /// Half-width of the median's interval relative to the median.
    pub fn relative_ci(&self) -> f64 {
        if self.median > 0.0 {
            (self.median_ci.1 - self.median_ci.0) / 2.0 / self.median
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_known_samples() {
        let s = Stats::from_samples(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(
            (s.n, s.min, s.max, s.median, s.mean),
            (5, 1.0, 5.0, 3.0, 3.0)
        );
        assert!((s.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.median_ci, (1.0, 5.0));
        let even = Stats::from_samples(&[4.0, 1.0, 2.0, 3.0]);
        assert_eq!(even.median, 2.5);
        let many: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let m = Stats::from_samples(&many);
        assert_eq!(m.median, 50.5);
        // ranks 50 -+ 9.8 -> [40, 60] (0-based) -> values 41 and 61
        assert_eq!(m.median_ci, (41.0, 61.0));
        assert_eq!(Stats::from_samples(&[]).n, 0);
    }

    #[test]
    fn builder_produces_runtime_arguments() {
        let m = Measure::default()
            .warmup(3)
            .repetitions(10)
            .adaptive(0.01, 50)
            .flush(true)
            .counters(&["cycles"]);
        assert_eq!(
            m.runtime_args(),
            [
                "warmup=3",
                "reps=10",
                "target_ci=0.01",
                "max_reps=50",
                "max_time=10",
                "flush=67108864",
                "counters=cycles"
            ]
        );
    }
}

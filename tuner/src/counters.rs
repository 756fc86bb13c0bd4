//! Hardware counters of a nest's untransformed cutout, for its features (instructions
//! per cycle, cache and branch miss ratios: `embeddings::features::COUNTER_COLUMNS`).
//!
//! Tuning measures without counters (reading them around every repetition would weigh
//! on the baseline and not on the candidates it is compared with), so the counters
//! come from one more run of the baseline's build: one warmup run and one timed run
//! with the hardware events open. Where the kernel gives no PMU (most virtual
//! machines: `perf_event_open` refuses hardware events), the first such run of the
//! process says so and no later nest pays for another; the features then mark the
//! counter columns unavailable.

use crate::nest_bench::NestBench;
use profiling::cutout::{CounterKind, CounterReading};
use profiling::measure::Measure;
use std::sync::atomic::{AtomicU8, Ordering};

const UNKNOWN: u8 = 0;
const PRESENT: u8 = 1;
const ABSENT: u8 = 2;

/// Whether this process has found a PMU (unknown until the first [`read`]).
static PMU: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether hardware counters were found absent in this process: `Some(false)` after a
/// run that could open none, `Some(true)` after one that read some, `None` before.
pub fn pmu() -> Option<bool> {
    match PMU.load(Ordering::Relaxed) {
        PRESENT => Some(true),
        ABSENT => Some(false),
        _ => None,
    }
}

/// The hardware counters that `readings` holds (available, with a total).
pub fn available(readings: &[CounterReading]) -> Vec<CounterReading> {
    readings
        .iter()
        .filter(|c| c.kind == CounterKind::Hardware && c.available && c.total.is_some())
        .cloned()
        .collect()
}

/// The hardware counters of the nest's untransformed cutout over one timed run; empty
/// where there is no PMU (found once per process), or the run failed.
pub fn read(bench: &NestBench) -> Vec<CounterReading> {
    if pmu() == Some(false) {
        return Vec::new();
    }
    let measure = Measure::default()
        .warmup(1)
        .repetitions(1)
        .flush(bench.measuring.measure.flush)
        .counters(profiling::measure::HARDWARE_COUNTERS);
    let Ok(run) = bench.measure_with(&measure) else {
        return Vec::new();
    };
    let got = available(&run.counters);
    // A run that asked for the events answers for each one; none open is no PMU.
    if !run.counters.is_empty() {
        let state = if got.is_empty() { ABSENT } else { PRESENT };
        PMU.store(state, Ordering::Relaxed);
    }
    got
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(name: &str, kind: CounterKind, total: Option<u64>) -> CounterReading {
        CounterReading {
            name: name.into(),
            kind,
            available: total.is_some(),
            total,
            per_rep: total.map(|t| t as f64),
            reason: total.is_none().then(|| "not supported".into()),
        }
    }

    #[test]
    fn only_hardware_readings_with_a_total_are_kept() {
        let r = [
            reading("cycles", CounterKind::Hardware, Some(1000)),
            reading("instructions", CounterKind::Hardware, None),
            reading("task-clock", CounterKind::Software, Some(5)),
            reading("branches", CounterKind::Hardware, Some(40)),
        ];
        let kept: Vec<String> = available(&r).into_iter().map(|c| c.name).collect();
        assert_eq!(kept, ["cycles", "branches"]);
    }
}

//! Where the tuning time goes: a [`Clock`] for phases and a [`Timed`] builder or runner
//! that adds up the seconds spent in it, so that compile time and run time are reported
//! apart.

use crate::builder::{Builder, Built};
use crate::runner::Runner;
use crate::Result;
use ir::transform::Recipe;
use profiling::cutout::CutoutRun;
use profiling::measure::Measure;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// Wall time since a start, and phases added to counters.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    /// A clock started now.
    pub fn start() -> Clock {
        Clock(Instant::now())
    }

    /// Seconds since the start.
    pub fn elapsed(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }

    /// Runs `f` and adds its wall time to `counter`.
    pub fn add_to<T>(&self, counter: &mut f64, f: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        let out = f();
        *counter += t0.elapsed().as_secs_f64();
        out
    }
}

/// A builder or runner that adds up the seconds spent in it.
pub struct Timed<T> {
    inner: T,
    seconds: Mutex<f64>,
}

impl<T> Timed<T> {
    /// `inner`, timed.
    pub fn new(inner: T) -> Timed<T> {
        Timed {
            inner,
            seconds: Mutex::new(0.0),
        }
    }

    /// Seconds spent so far.
    pub fn seconds(&self) -> f64 {
        *self.seconds.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn time<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        let t0 = Instant::now();
        let out = f(&self.inner);
        *self.seconds.lock().unwrap_or_else(|e| e.into_inner()) += t0.elapsed().as_secs_f64();
        out
    }
}

impl<B: Builder> Builder for Timed<B> {
    fn build(&self, recipe: &Recipe) -> Result<Built> {
        self.time(|b| b.build(recipe))
    }
}

impl<R: Runner> Runner for Timed<R> {
    fn run(&self, exe: &Path, label: &str, measure: &Measure) -> Result<CutoutRun> {
        self.time(|r| r.run(exe, label, measure))
    }
}

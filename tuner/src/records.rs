//! The records seam: what was measured. Every measured variant of a search is one line
//! of `.tunecache/<program>/records.jsonl` (a [`profiling::files::Journal`]: synced per
//! line, a torn last line cut off on open), so an interrupted search resumes without
//! repeating a finished measurement; transfer tuning and evaluations keep theirs in
//! memory ([`MemoryRecords`]), where they serve as a measurement cache.

use crate::strategy::Proposer;
use crate::Result;
use ir::transform::Recipe;
use profiling::cutout::{CounterReading, CutoutRun, Verdict};
use profiling::files::Journal;
use profiling::measure::Stats;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One measured variant of one nest, as the record log stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The program's name.
    pub program: String,
    /// The nest (`nest0`, ...).
    pub nest: String,
    /// Hash of the original nest function: records of a changed nest do not match.
    pub fingerprint: String,
    /// The recipe measured (empty: the baseline).
    pub recipe: Recipe,
    /// Verified, wrong, crashed, timed out or failed to build.
    pub verdict: Verdict,
    /// Median seconds (0 when the variant did not run).
    pub median_s: f64,
    /// Raw samples (seconds).
    pub samples: Vec<f64>,
    /// Host name of the machine.
    pub machine: String,
    /// `$CC --version` of the build.
    pub compiler: String,
    /// Who proposed the recipe.
    pub strategy: Proposer,
    /// When it was measured (Unix time, ms).
    pub unix_ms: u128,
    /// Hardware counters read on the variant (only the baseline's, where the machine
    /// has a PMU: `crate::counters`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterReading>,
}

impl Record {
    /// The identity of a measurement: nest, its fingerprint and the recipe.
    pub fn key(&self) -> String {
        key(&self.nest, &self.fingerprint, &self.recipe)
    }
}

/// The identity of a measurement of `recipe` on a nest.
pub fn key(nest: &str, fingerprint: &str, recipe: &Recipe) -> String {
    format!(
        "{nest}|{fingerprint}|{}",
        serde_json::to_string(recipe).expect("recipe serializes")
    )
}

/// The append-only record log of a program.
pub type RecordLog = Journal<Record>;

/// Opens (or creates) a program's record log.
pub fn open_log(path: &Path) -> Result<RecordLog> {
    Ok(Journal::open(path)?)
}

/// A measurement as the tuning loop sees it: the recipe, its verdict and timings.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The recipe measured.
    pub recipe: Recipe,
    /// Verified, wrong, crashed, timed out or failed to build.
    pub verdict: Verdict,
    /// Raw samples (seconds).
    pub samples: Vec<f64>,
    /// Statistics of the samples.
    pub stats: Stats,
    /// Hardware counters read on it (empty unless asked for and a PMU answered).
    pub counters: Vec<CounterReading>,
}

impl Measured {
    /// A run of `recipe`.
    pub fn of_run(recipe: &Recipe, run: &CutoutRun) -> Measured {
        Measured {
            recipe: recipe.clone(),
            verdict: run.verdict.clone(),
            samples: run.samples.clone(),
            stats: run.stats,
            counters: crate::counters::available(&run.counters),
        }
    }

    /// A recipe whose code did not compile.
    pub fn build_failed(recipe: &Recipe, message: String) -> Measured {
        Measured {
            recipe: recipe.clone(),
            verdict: Verdict::BuildFailed { message },
            samples: Vec::new(),
            stats: Stats::default(),
            counters: Vec::new(),
        }
    }

    /// The median in seconds when the variant was verified.
    pub fn verified_median(&self) -> Option<f64> {
        (self.verdict == Verdict::Verified && self.stats.median > 0.0).then_some(self.stats.median)
    }
}

/// What was measured on one nest.
pub trait Records {
    /// The measurement of `recipe`, if one was made.
    fn find(&self, recipe: &Recipe) -> Option<Measured>;
    /// Adds a measurement proposed by `by`.
    fn add(&mut self, m: Measured, by: Proposer) -> Result<()>;
    /// Every measurement of a non-empty recipe, in the order made.
    fn candidates(&self) -> Vec<Measured>;
}

/// Measurements kept in memory (a cache shared by the walks of one evaluation).
#[derive(Debug, Clone, Default)]
pub struct MemoryRecords(Vec<Measured>);

impl Records for MemoryRecords {
    fn find(&self, recipe: &Recipe) -> Option<Measured> {
        self.0.iter().find(|m| &m.recipe == recipe).cloned()
    }

    fn add(&mut self, m: Measured, _: Proposer) -> Result<()> {
        self.0.push(m);
        Ok(())
    }

    fn candidates(&self) -> Vec<Measured> {
        self.0
            .iter()
            .filter(|m| !m.recipe.steps.is_empty())
            .cloned()
            .collect()
    }
}

/// One nest's view of a program's record log.
pub struct NestRecords<'a> {
    /// The program's record log.
    pub log: &'a mut RecordLog,
    /// The program's name.
    pub program: String,
    /// The nest.
    pub nest: String,
    /// Hash of the untransformed nest's cutout.
    pub fingerprint: String,
    /// Host name of the machine.
    pub machine: String,
    /// `$CC --version` of the builds.
    pub compiler: String,
}

impl NestRecords<'_> {
    fn mine(&self) -> impl Iterator<Item = &Record> {
        self.log
            .records()
            .iter()
            .filter(|r| r.nest == self.nest && r.fingerprint == self.fingerprint)
    }
}

fn measured(r: &Record) -> Measured {
    Measured {
        recipe: r.recipe.clone(),
        verdict: r.verdict.clone(),
        stats: Stats {
            median: r.median_s,
            ..Stats::from_samples(&r.samples)
        },
        samples: r.samples.clone(),
        counters: r.counters.clone(),
    }
}

impl Records for NestRecords<'_> {
    fn find(&self, recipe: &Recipe) -> Option<Measured> {
        let k = key(&self.nest, &self.fingerprint, recipe);
        self.mine().find(|r| r.key() == k).map(measured)
    }

    fn add(&mut self, m: Measured, by: Proposer) -> Result<()> {
        let r = Record {
            program: self.program.clone(),
            nest: self.nest.clone(),
            fingerprint: self.fingerprint.clone(),
            recipe: m.recipe,
            verdict: m.verdict,
            median_s: m.stats.median,
            samples: m.samples,
            machine: self.machine.clone(),
            compiler: self.compiler.clone(),
            strategy: by,
            unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0),
            counters: m.counters,
        };
        Ok(self.log.append(&r)?)
    }

    fn candidates(&self) -> Vec<Measured> {
        self.mine()
            .filter(|r| !r.recipe.steps.is_empty())
            .map(measured)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::StrategyKind;
    use std::fs::OpenOptions;
    use std::io::Write;

    fn rec(nest: &str, median: f64) -> Record {
        Record {
            program: "p".into(),
            nest: nest.into(),
            fingerprint: "f".into(),
            recipe: Recipe::default(),
            verdict: Verdict::Verified,
            median_s: median,
            samples: vec![median],
            machine: "m".into(),
            compiler: "cc".into(),
            strategy: Proposer::Search(StrategyKind::Random),
            unix_ms: 0,
            counters: Vec::new(),
        }
    }

    /// The records of `nest0` of program `p` in `log`.
    fn nest0_of(log: &mut RecordLog) -> NestRecords<'_> {
        NestRecords {
            log,
            program: "p".into(),
            nest: "nest0".into(),
            fingerprint: "f".into(),
            machine: "m".into(),
            compiler: "cc".into(),
        }
    }

    #[test]
    fn a_baseline_keeps_its_counters_and_older_lines_read_without_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        let mut log = open_log(&path).unwrap();
        let mut nest0 = nest0_of(&mut log);
        let cycles = CounterReading {
            name: "cycles".into(),
            kind: profiling::cutout::CounterKind::Hardware,
            available: true,
            total: Some(1234),
            per_rep: Some(1234.0),
            reason: None,
        };
        let m = Measured {
            recipe: Recipe::default(),
            verdict: Verdict::Verified,
            samples: vec![1.0],
            stats: Stats::from_samples(&[1.0]),
            counters: vec![cycles.clone()],
        };
        nest0.add(m, Proposer::Baseline).unwrap();
        drop(log);
        let log = open_log(&path).unwrap();
        assert_eq!(log.records()[0].counters, [cycles]);
        // A line written before records held counters reads with none, and a record
        // without counters writes none.
        let mut old = serde_json::to_value(&log.records()[0]).unwrap();
        old.as_object_mut().unwrap().remove("counters");
        let r: Record = serde_json::from_value(old).unwrap();
        assert!(r.counters.is_empty());
        assert!(!serde_json::to_string(&r).unwrap().contains("counters"));
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_appending_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        let mut log = open_log(&path).unwrap();
        log.append(&rec("nest0", 1.0)).unwrap();
        log.append(&rec("nest1", 2.0)).unwrap();
        // A crash in the middle of the third line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"program\":\"p\",\"ne").unwrap();
        drop(f);
        let mut log = open_log(&path).unwrap();
        assert_eq!(log.records().len(), 2);
        assert!(log
            .records()
            .iter()
            .any(|r| r.key() == rec("nest1", 0.0).key()));
        log.append(&rec("nest2", 3.0)).unwrap();
        let log = open_log(&path).unwrap();
        assert_eq!(
            log.records()
                .iter()
                .map(|r| r.nest.as_str())
                .collect::<Vec<_>>(),
            ["nest0", "nest1", "nest2"]
        );
    }

    #[test]
    fn a_damaged_record_in_the_middle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        std::fs::write(&path, "{bad}\n{}\n").unwrap();
        let e = open_log(&path).unwrap_err();
        assert!(e.to_string().contains("records.jsonl:1: damaged"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn a_nest_sees_its_own_records_and_finds_them_by_recipe() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = open_log(&dir.path().join("records.jsonl")).unwrap();
        let tiled = Recipe {
            steps: vec![ir::transform::Step::Unroll { at: 0, factor: 2 }],
        };
        let mut nest0 = nest0_of(&mut log);
        let run = |median: f64| Measured {
            recipe: tiled.clone(),
            verdict: Verdict::Verified,
            samples: vec![median; 3],
            stats: Stats::from_samples(&[median; 3]),
            counters: Vec::new(),
        };
        nest0.add(run(2.0), Proposer::Baseline).unwrap();
        assert_eq!(nest0.find(&tiled).unwrap().verified_median(), Some(2.0));
        assert!(nest0.find(&Recipe::default()).is_none());
        assert_eq!(nest0.candidates().len(), 1);
        let nest1 = NestRecords {
            log: &mut log,
            program: "p".into(),
            nest: "nest1".into(),
            fingerprint: "f".into(),
            machine: "m".into(),
            compiler: "cc".into(),
        };
        assert!(nest1.find(&tiled).is_none() && nest1.candidates().is_empty());
    }
}

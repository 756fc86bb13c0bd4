//! Batch tuning: `tune apply` over every program of one or more datasets.
//!
//! Programs are tuned in parallel on a rayon pool of `jobs` threads: preprocessing,
//! parsing, feature extraction and compilation overlap, while every child program run
//! (dry runs, measurements) holds the machine alone ([`profiling::exclusive`]), so no
//! measurement is disturbed by another program's work.
//!
//! Every finished program (tuned or failed) is one line of `OUT/journal.jsonl`, written
//! after its files (`OUT/programs/<name>/`) and flushed to disk. A run killed at any
//! moment loses at most the programs in flight; `resume` reads the journal (dropping a
//! torn last line), skips what it lists and tunes the rest. Shards (`I/N`) split the
//! sorted program list round-robin, so that N machines can each tune one shard into
//! their own folder; [`merge`] joins the folders.

use crate::environment::Environment;
use crate::events::{Event, Events};
use crate::pipeline::Pipeline;
use crate::report::ApplyReport;
pub use crate::report::{Outcome, Status};
use crate::spec::{stem, ProgramSpec};
use crate::{Error, Result};
use profiling::files::Journal;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Every program named by `inputs`: a suite manifest (`*.json`), a folder holding
/// `suite.json`, a folder of `.c` files with `#pragma scop` regions, or one `.c` file.
/// Manifest programs get the preset's flag and their own flags; loose `.c` files get
/// the preset's flag and `flags`. Sorted by name; a name given twice is an error.
pub fn collect_jobs(
    inputs: &[PathBuf],
    preset: datasets::Preset,
    flags: &[String],
) -> Result<Vec<ProgramSpec>> {
    let mut jobs: Vec<ProgramSpec> = Vec::new();
    let suite = |path: &Path, jobs: &mut Vec<ProgramSpec>| -> Result<()> {
        let s = datasets::Suite::load(path)?;
        for p in &s.programs {
            jobs.push(ProgramSpec::named(&p.name, s.args(p, preset)));
        }
        Ok(())
    };
    let loose = |path: &Path, jobs: &mut Vec<ProgramSpec>| {
        let mut args = vec![path.display().to_string(), preset.flag()];
        args.extend(flags.iter().cloned());
        jobs.push(ProgramSpec::named(stem(&path.display().to_string()), args));
    };
    for input in inputs {
        if input.is_dir() {
            let manifest = input.join("suite.json");
            if manifest.is_file() {
                suite(&manifest, &mut jobs)?;
                continue;
            }
            let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(Error::read(input))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "c"))
                .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("#pragma scop")))
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(Error::Usage(format!(
                    "{}: no suite.json and no .c file with a #pragma scop region",
                    input.display()
                )));
            }
            for f in &files {
                loose(f, &mut jobs);
            }
        } else if input.extension().is_some_and(|x| x == "json") {
            suite(input, &mut jobs)?;
        } else if input.is_file() {
            loose(input, &mut jobs);
        } else {
            return Err(Error::Usage(format!(
                "{}: no such file or folder",
                input.display()
            )));
        }
    }
    jobs.sort_by(|a, b| a.name.cmp(&b.name));
    for w in jobs.windows(2) {
        if w[0].name == w[1].name {
            return Err(Error::Usage(format!(
                "program name '{}' is given twice ({} and {}); names must be unique in a batch",
                w[0].name, w[0].args[0], w[1].args[0]
            )));
        }
    }
    Ok(jobs)
}

/// Shard `i` of `n` (0-based): every n-th program of the sorted list, starting at i.
pub fn shard(jobs: Vec<ProgramSpec>, i: usize, n: usize) -> Vec<ProgramSpec> {
    jobs.into_iter()
        .enumerate()
        .filter(|(k, _)| k % n == i)
        .map(|(_, j)| j)
        .collect()
}

/// `I/N` with `I < N` (e.g. `$SLURM_ARRAY_TASK_ID/4`).
pub fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let bad = || {
        Error::Usage(format!(
            "--shard {s}: expected I/N with 0 <= I < N, e.g. 0/4"
        ))
    };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

const JOURNAL: &str = "journal.jsonl";

/// The append-only record of finished programs: a [`Journal`] of outcomes (a torn last
/// line is cut off on resume, any other damage is refused), shared by the pool's
/// threads, in which each program is listed once.
pub struct BatchJournal(Mutex<Journal<Outcome>>);

impl BatchJournal {
    /// The outcomes in `dir`'s journal (none without one).
    pub fn read(dir: &Path) -> Result<Vec<Outcome>> {
        let path = dir.join(JOURNAL);
        let all = Journal::read(&path)?;
        once_each(&path, &all)?;
        Ok(all)
    }

    /// Opens `dir`'s journal for appending, cutting off a torn last line.
    fn open(dir: &Path) -> Result<(BatchJournal, Vec<Outcome>)> {
        let path = dir.join(JOURNAL);
        let j = Journal::open(&path)?;
        let done = j.records().to_vec();
        once_each(&path, &done)?;
        Ok((BatchJournal(Mutex::new(j)), done))
    }

    /// Appends one outcome as one line and flushes it to disk.
    fn append(&self, o: &Outcome) -> Result<()> {
        let mut j = self.0.lock().unwrap_or_else(|e| e.into_inner());
        Ok(j.append(o)?)
    }
}

/// Refuses a journal that lists a program twice.
fn once_each(path: &Path, all: &[Outcome]) -> Result<()> {
    for (i, o) in all.iter().enumerate() {
        if all[..i].iter().any(|x| x.program == o.program) {
            return Err(Error::Usage(format!(
                "{}:{}: program '{}' is listed twice",
                path.display(),
                i + 1,
                o.program
            )));
        }
    }
    Ok(())
}

/// How to run a batch.
#[derive(Debug, Clone)]
pub struct BatchConfig {
    /// How each program is tuned.
    pub pipeline: Pipeline,
    /// Programs tuned at once.
    pub jobs: usize,
    /// The batch folder.
    pub out: PathBuf,
    /// Continue the batch whose journal is in `out`.
    pub resume: bool,
}

/// What a batch (or a merge) produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// What the batch ran on.
    pub environment: Environment,
    /// Every finished program, sorted by name.
    pub programs: Vec<Outcome>,
    /// Programs tuned.
    pub tuned: usize,
    /// Programs that failed.
    pub failed: usize,
    /// Geometric mean over tuned programs of their nest-speedup geomeans.
    pub speedup: f64,
    /// Wall time (seconds).
    pub seconds: f64,
}

/// Geometric mean of speedups; 1 for none.
fn geomean_or_one(v: &[f64]) -> f64 {
    let g = profiling::stats::geomean(v);
    if g.is_finite() {
        g
    } else {
        1.0
    }
}

/// Tunes every job not already in the journal (see the module documentation).
pub fn run(cfg: &BatchConfig, jobs: &[ProgramSpec], events: &Events) -> Result<Summary> {
    let t0 = Instant::now();
    let journal_exists = cfg.out.join(JOURNAL).is_file();
    if journal_exists && !cfg.resume {
        return Err(Error::Usage(format!(
            "{}: holds the journal of an earlier batch; pass --resume to finish it, or choose another --out",
            cfg.out.display()
        )));
    }
    let (journal, done) = BatchJournal::open(&cfg.out)?;
    let todo: Vec<&ProgramSpec> = jobs
        .iter()
        .filter(|j| !done.iter().any(|o| o.program == j.name))
        .collect();
    events(Event::BatchStart {
        total: jobs.len(),
        done: jobs.len() - todo.len(),
    });
    // Measured once, before the programs share the machine.
    let _ = crate::features::machine_info(&cfg.pipeline.cache_root, &cfg.pipeline.toolchain, &[]);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.jobs.max(1))
        .build()
        .map_err(|e| Error::Failed(format!("thread pool: {e}")))?;
    let new: Vec<Outcome> = pool.install(|| {
        todo.par_iter()
            .map(|job| {
                events(Event::Begin { program: &job.name });
                let o = tune_one(cfg, job, events);
                journal.append(&o)?;
                events(Event::End { outcome: &o });
                Ok(o)
            })
            .collect::<Result<_>>()
    })?;
    let mut all = done;
    all.extend(new);
    let summary = summarize(
        Environment::capture(&cfg.pipeline.toolchain),
        all,
        t0.elapsed().as_secs_f64(),
    );
    write_summary(&cfg.out, &summary)?;
    Ok(summary)
}

fn tune_one(cfg: &BatchConfig, job: &ProgramSpec, events: &Events) -> Outcome {
    let t0 = Instant::now();
    let failed = |error: String| Outcome {
        program: job.name.clone(),
        args: job.args.clone(),
        status: Status::Failed,
        error: Some(error),
        nests: 0,
        tuned_nests: 0,
        speedup: 1.0,
        measured_variants: 0,
        seconds: t0.elapsed().as_secs_f64(),
        tuned_file: None,
        report_file: None,
    };
    if let Err(e) = job.cc() {
        return failed(e.to_string());
    }
    let report = cfg.pipeline.clone().events(events.clone()).apply(job);
    match report.and_then(|r| save_program(&cfg.out, &job.name, &r).map(|f| (r, f))) {
        Ok((r, (tuned_file, report_file))) => {
            let speedups: Vec<f64> = r.nests.iter().map(|n| n.speedup).collect();
            Outcome {
                program: job.name.clone(),
                args: job.args.clone(),
                status: Status::Tuned,
                error: None,
                nests: r.nests.len(),
                tuned_nests: r.nests.iter().filter(|n| n.tuned.is_some()).count(),
                speedup: geomean_or_one(&speedups),
                measured_variants: r.nests.iter().map(|n| n.measured_variants).sum(),
                seconds: t0.elapsed().as_secs_f64(),
                tuned_file: Some(tuned_file),
                report_file: Some(report_file),
            }
        }
        Err(e) => failed(e.to_string()),
    }
}

/// Writes `programs/<name>/<name>.tuned.c` and `report.json` (each atomically);
/// returns their paths relative to `out`.
fn save_program(out: &Path, name: &str, r: &ApplyReport) -> Result<(String, String)> {
    let rel_dir = Path::new("programs").join(name);
    let tuned = rel_dir.join(format!("{name}.tuned.c"));
    let report = rel_dir.join("report.json");
    crate::files::write(&out.join(&tuned), &r.source)?;
    crate::files::write(
        &out.join(&report),
        &serde_json::to_string_pretty(r).expect("report serializes"),
    )?;
    Ok((tuned.display().to_string(), report.display().to_string()))
}

fn summarize(environment: Environment, mut programs: Vec<Outcome>, seconds: f64) -> Summary {
    programs.sort_by(|a, b| a.program.cmp(&b.program));
    let tuned: Vec<f64> = programs
        .iter()
        .filter(|o| o.status == Status::Tuned)
        .map(|o| o.speedup)
        .collect();
    Summary {
        environment,
        speedup: geomean_or_one(&tuned),
        tuned: tuned.len(),
        failed: programs.len() - tuned.len(),
        seconds,
        programs,
    }
}

fn write_summary(out: &Path, s: &Summary) -> Result<()> {
    crate::files::write(
        &out.join("summary.json"),
        &serde_json::to_string_pretty(s).expect("summary serializes"),
    )
}

/// Joins the folders of shards into `out`: their program folders are copied and their
/// journals appended to `out`'s. A program already in `out` with the same outcome is
/// skipped; the same program with a different outcome in two folders is an error
/// (nothing is written then).
pub fn merge(out: &Path, shards: &[PathBuf], env: Environment) -> Result<Summary> {
    let t0 = Instant::now();
    let (journal, existing) = BatchJournal::open(out)?;
    let mut taken: BTreeMap<String, (Outcome, PathBuf)> = existing
        .into_iter()
        .map(|o| (o.program.clone(), (o, out.to_path_buf())))
        .collect();
    let mut new: Vec<(Outcome, PathBuf)> = Vec::new();
    for dir in shards {
        if !dir.join(JOURNAL).is_file() {
            return Err(Error::Usage(format!(
                "{}: no {JOURNAL} (not the folder of a batch)",
                dir.display()
            )));
        }
        for o in BatchJournal::read(dir)? {
            match taken.get(&o.program) {
                Some((same, _)) if *same == o => continue,
                Some((_, other)) => {
                    return Err(Error::Usage(format!(
                        "program '{}' has different results in {} and {}",
                        o.program,
                        other.display(),
                        dir.display()
                    )))
                }
                None => {
                    taken.insert(o.program.clone(), (o.clone(), dir.clone()));
                    new.push((o, dir.clone()));
                }
            }
        }
    }
    for (o, dir) in &new {
        for rel in [&o.tuned_file, &o.report_file].into_iter().flatten() {
            let from = dir.join(rel);
            let text = std::fs::read_to_string(&from).map_err(Error::read(&from))?;
            crate::files::write(&out.join(rel), &text)?;
        }
        journal.append(o)?;
    }
    let all = taken.into_values().map(|(o, _)| o).collect();
    let summary = summarize(env, all, t0.elapsed().as_secs_f64());
    write_summary(out, &summary)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn outcome(p: &str) -> Outcome {
        Outcome {
            program: p.into(),
            args: vec![format!("{p}.c")],
            status: Status::Tuned,
            error: None,
            nests: 1,
            tuned_nests: 1,
            speedup: 2.0,
            measured_variants: 3,
            seconds: 1.0,
            tuned_file: None,
            report_file: None,
        }
    }

    #[test]
    fn shards_cover_every_job_once() {
        let jobs: Vec<ProgramSpec> = (0..10)
            .map(|i| ProgramSpec::named(format!("p{i}"), vec![]))
            .collect();
        let mut seen: Vec<String> = (0..3)
            .flat_map(|i| shard(jobs.clone(), i, 3))
            .map(|j| j.name)
            .collect();
        seen.sort();
        let mut want: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
        want.sort();
        assert_eq!(seen, want);
        assert_eq!(shard(jobs.clone(), 1, 3).len(), 3);
        assert_eq!(shard(jobs, 0, 3).len(), 4);
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["4/4", "x/2", "1", "0/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let (j, done) = BatchJournal::open(dir.path()).unwrap();
        assert!(done.is_empty());
        j.append(&outcome("a")).unwrap();
        j.append(&outcome("b")).unwrap();
        drop(j);
        // A kill in the middle of the third line.
        let path = dir.path().join(JOURNAL);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(br#"{"program":"c","ar"#).unwrap();
        drop(f);
        let (j, done) = BatchJournal::open(dir.path()).unwrap();
        assert_eq!(
            done.iter().map(|o| o.program.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        j.append(&outcome("c")).unwrap();
        let all = BatchJournal::read(dir.path()).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[2], outcome("c"));
    }

    #[test]
    fn a_damaged_middle_line_or_a_repeated_program_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let line = serde_json::to_string(&outcome("a")).unwrap();
        std::fs::write(
            dir.path().join(JOURNAL),
            format!("{line}\nnot json\n{line}\n"),
        )
        .unwrap();
        let e = BatchJournal::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("journal.jsonl:2: damaged line"), "{e}");
        std::fs::write(dir.path().join(JOURNAL), format!("{line}\n{line}\n")).unwrap();
        let e = BatchJournal::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains(":2: program 'a' is listed twice"), "{e}");
    }

    #[test]
    fn merging_shards_joins_them_and_refuses_conflicts() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let mut with_file = outcome("x");
        with_file.tuned_file = Some("programs/x/x.tuned.c".into());
        std::fs::create_dir_all(a.path().join("programs/x")).unwrap();
        std::fs::write(a.path().join("programs/x/x.tuned.c"), "int main(){}\n").unwrap();
        BatchJournal::open(a.path())
            .unwrap()
            .0
            .append(&with_file)
            .unwrap();
        BatchJournal::open(b.path())
            .unwrap()
            .0
            .append(&outcome("y"))
            .unwrap();
        let env = Environment::capture(&profiling::build::Toolchain::default());
        let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
        let s = merge(out.path(), &dirs, env.clone()).unwrap();
        assert_eq!(s.programs.len(), 2);
        assert_eq!(
            std::fs::read_to_string(out.path().join("programs/x/x.tuned.c")).unwrap(),
            "int main(){}\n"
        );
        // Merging again changes nothing.
        let s = merge(out.path(), &dirs, env.clone()).unwrap();
        assert_eq!(s.programs.len(), 2);
        // The same program with another result is a conflict.
        let c = tempfile::tempdir().unwrap();
        let mut other = outcome("y");
        other.speedup = 3.0;
        BatchJournal::open(c.path())
            .unwrap()
            .0
            .append(&other)
            .unwrap();
        let e = merge(out.path(), &[c.path().to_path_buf()], env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("program 'y' has different results"), "{e}");
        assert_eq!(BatchJournal::read(out.path()).unwrap().len(), 2);
    }
}

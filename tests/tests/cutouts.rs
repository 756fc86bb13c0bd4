//! Cutouts: a nest runs alone on its saved data and its outputs are verified; a
//! crashing, hanging or wrong variant is reported as such and the harness goes on.

use datasets::{Preset, Suite};
use profiling::build::Toolchain;
use profiling::cutout::{Cutout, Variant, Verdict};
use profiling::measure::Measure;
use std::time::Duration;
use tune_e2e::{strings, tune};

fn gemm_cutout(dir: &std::path::Path) -> Cutout {
    cutout_of("gemm", dir)
}

/// The first nest of the core suite's `name` at MINI, its data saved by a dry run.
fn cutout_of(name: &str, dir: &std::path::Path) -> Cutout {
    std::fs::create_dir_all(dir).unwrap();
    let suite = Suite::core().unwrap();
    let program = suite.program(name).unwrap();
    let mut args = strings(&["run", "--quiet"]);
    args.extend(suite.args(program, Preset::Mini));
    assert_eq!(tune(&args, dir).code, 0);
    let opts = ir::FrontendOptions {
        flags: vec![Preset::Mini.flag()],
        ..Default::default()
    };
    let parsed = ir::load(&suite.path_of(program).display().to_string(), &opts).unwrap();
    let nest = ir::codegen::nests(&parsed.program).remove(0);
    Cutout::new(
        parsed.program,
        nest,
        dir.join(format!(".tunecache/{name}/data")),
        Vec::new(),
    )
}

/// The original nest of `c` measured as `m` says (building under `dir`).
fn measure_original(
    c: &Cutout,
    dir: &std::path::Path,
    m: &Measure,
) -> profiling::cutout::CutoutRun {
    c.measure(
        &Toolchain::default(),
        &c.original(),
        0,
        m,
        Duration::from_secs(10),
        &dir.join("b"),
        &dir.join("s"),
    )
    .unwrap()
    .0
}

fn with_body_prefix(v: &Variant, name: &str, stmt: &str) -> Variant {
    let at = v.source.find("{\n").unwrap() + 2;
    let mut source = v.source.clone();
    source.insert_str(at, stmt);
    Variant {
        name: name.into(),
        source,
        openmp: false,
    }
}

#[test]
fn the_original_verifies_and_planted_failures_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let c = gemm_cutout(dir.path());
    let tc = Toolchain::default();
    let builds = dir.path().join("builds");
    let scratch = dir.path().join("scratch");
    let m = Measure::default().warmup(1).repetitions(3);
    let t = Duration::from_secs(5);

    let original = c.original();
    let (run, record) = c
        .measure(&tc, &original, 0, &m, t, &builds, &scratch)
        .unwrap();
    assert_eq!(run.verdict, Verdict::Verified);
    assert_eq!(run.samples.len(), 3);
    assert_eq!(run.warmup, 1);
    assert!(run.stats.min > 0.0 && run.stats.min <= run.stats.median);
    // The cold run is the process's first (here the warmup run, not a sample).
    assert!(run.first_s > 0.0);
    assert!(!record.unwrap().cache_hit);
    // With no warmup, the cold run is the first sample.
    let once = Measure::default().warmup(0).repetitions(2).counters(&[]);
    let (cold, _) = c
        .measure(&tc, &original, 0, &once, t, &builds, &scratch)
        .unwrap();
    assert_eq!(cold.first_s, cold.samples[0]);
    // The same variant again comes from the build cache.
    let (_, record) = c
        .measure(&tc, &original, 0, &m, t, &builds, &scratch)
        .unwrap();
    assert!(record.unwrap().cache_hit);
    // Counters: present, and never zero when unavailable.
    assert!(!run.counters.is_empty());
    for k in &run.counters {
        assert!(k.available == k.total.is_some(), "{k:?}");
        assert!(k.available || k.reason.is_some(), "{k:?}");
    }

    let crash = with_body_prefix(&original, "crash", "  *(volatile int *)0 = 1;\n");
    let (run, _) = c.measure(&tc, &crash, 0, &m, t, &builds, &scratch).unwrap();
    assert!(
        matches!(run.verdict, Verdict::Crashed { .. }),
        "{:?}",
        run.verdict
    );

    let hang = with_body_prefix(&original, "hang", "  for (;;) {}\n");
    let (run, _) = c
        .measure(
            &tc,
            &hang,
            0,
            &m,
            Duration::from_millis(800),
            &builds,
            &scratch,
        )
        .unwrap();
    assert!(
        matches!(run.verdict, Verdict::TimedOut { .. }),
        "{:?}",
        run.verdict
    );

    let wrong = with_body_prefix(&original, "wrong", "  C[3][4] += 1.0;\n");
    let (run, _) = c.measure(&tc, &wrong, 0, &m, t, &builds, &scratch).unwrap();
    match &run.verdict {
        Verdict::WrongResult {
            array,
            index,
            mismatches,
            ..
        } => {
            assert_eq!((array.as_str(), *index, *mismatches), ("C", 3 * 25 + 4, 1));
        }
        other => panic!("{other:?}"),
    }

    let broken = Variant {
        name: "broken".into(),
        source: "static void tune_nest0(void) { syntax error }\n".into(),
        openmp: false,
    };
    let (run, _) = c
        .measure(&tc, &broken, 0, &m, t, &builds, &scratch)
        .unwrap();
    assert!(
        matches!(run.verdict, Verdict::BuildFailed { .. }),
        "{:?}",
        run.verdict
    );

    // And the harness goes on: the original still verifies afterwards.
    let (run, _) = c
        .measure(&tc, &original, 0, &m, t, &builds, &scratch)
        .unwrap();
    assert_eq!(run.verdict, Verdict::Verified);
}

#[test]
fn a_run_over_the_kill_bound_stops_the_repetitions_and_the_outputs_are_still_verified() {
    let dir = tempfile::tempdir().unwrap();
    let c = gemm_cutout(dir.path());
    let run = |m: &Measure| measure_original(&c, dir.path(), m);
    // Any run exceeds a nanosecond: one timed run, then it stops.
    let m = Measure::default()
        .warmup(1)
        .repetitions(10)
        .counters(&[])
        .kill_after(1e-9);
    let killed = run(&m);
    assert_eq!(killed.verdict, Verdict::Verified);
    assert!(killed.killed);
    assert_eq!(killed.samples.len(), 1);
    // No run exceeds an hour: all ten.
    let m = Measure::default()
        .warmup(1)
        .repetitions(10)
        .counters(&[])
        .kill_after(3600.0);
    let full = run(&m);
    assert!(!full.killed);
    assert_eq!(full.samples.len(), 10);
}

#[test]
fn a_run_past_the_kill_bound_is_cut_in_the_middle() {
    let dir = tempfile::tempdir().unwrap();
    let c = gemm_cutout(dir.path());
    let tc = Toolchain::default();
    // Three billion volatile increments: seconds on any machine.
    let slow = with_body_prefix(
        &c.original(),
        "slow",
        "  for (volatile long s = 0; s < 3000000000L; s++) {}\n",
    );
    let cut = |m: &Measure| {
        let (run, _) = c
            .measure(
                &tc,
                &slow,
                0,
                m,
                Duration::from_secs(60),
                &dir.path().join("b"),
                &dir.path().join("s"),
            )
            .unwrap();
        match run.verdict {
            Verdict::Cut { seconds, bound } => {
                assert_eq!(bound, 0.05);
                assert!((0.05..1.0).contains(&seconds), "{seconds}");
            }
            ref other => panic!("{other:?}"),
        }
        assert!(run.killed);
        assert_eq!(run.samples.len(), 1);
        // Cut at 50 ms, not run to its end.
        assert!(run.wall_s < 1.5, "{}", run.wall_s);
        run
    };
    // A timed run.
    let ten = Measure::default().warmup(0).repetitions(10).counters(&[]);
    cut(&ten.clone().kill_after(0.05));
    // A warmup run, where a warmup run that long would be the first timed run.
    let warm = Measure::default()
        .warmup(2)
        .repetitions(10)
        .adaptive(0.1, 12)
        .long_runs(0.01)
        .counters(&[])
        .kill_after(0.05);
    let run = cut(&warm);
    assert_eq!(run.warmup, 0);
    // Bounds under 10 ms are not cut (the run ends, the repetitions stop, the outputs
    // are checked): the original, stopped after its first timed run.
    let run = measure_original(&c, dir.path(), &ten.kill_after(1e-9));
    assert_eq!(run.verdict, Verdict::Verified);
    assert!(run.killed);
}

#[test]
fn long_runs_warm_themselves_and_clearly_slower_or_faster_runs_stop_early() {
    let dir = tempfile::tempdir().unwrap();
    let c = gemm_cutout(dir.path());
    let run = |m: &Measure| measure_original(&c, dir.path(), m);
    // Every run is long (a nanosecond or more): the first of three warmup runs is timed,
    // the other two are skipped, and an interval any spread meets stops it at three runs
    // (before the minimum of ten).
    let m = Measure::default()
        .warmup(3)
        .repetitions(10)
        .adaptive(10.0, 12)
        .long_runs(1e-9)
        .counters(&[]);
    let long = run(&m);
    assert_eq!(long.verdict, Verdict::Verified);
    assert_eq!(long.warmup, 1);
    assert_eq!(long.samples.len(), 3);
    assert!(!long.killed);
    // Not long (an hour): the warmup is run and the minimum holds (an interval of
    // ±1000% is met at ten runs unless one run of microseconds stalls for more than
    // twenty times the median on a loaded host: then the eleventh or twelfth).
    let short = run(&m.clone().long_runs(3600.0));
    assert_eq!(short.warmup, 3);
    assert!(
        (10..=12).contains(&short.samples.len()),
        "{:?}",
        short.samples
    );
    // Ten timed runs after one warmup run, unless an early stop ends them.
    let ten = || Measure::default().warmup(1).repetitions(10).counters(&[]);
    // Clearly slower than a best of a picosecond: from two timed runs on, the interval
    // of their mean lies above it once the spread allows (at two runs the t quantile is
    // 12.7), and the runs stop before the ten; the outputs are still verified.
    let slower = run(&ten().slower_than(1e-12));
    assert_eq!(slower.verdict, Verdict::Verified);
    assert!(slower.killed);
    assert!(
        (2..10).contains(&slower.samples.len()),
        "{:?}",
        slower.samples
    );
    // Never above an hour: all ten.
    let not = run(&ten().slower_than(3600.0));
    assert!(!not.killed);
    assert_eq!(not.samples.len(), 10);
    // Clearly faster than a best whose interval starts at an hour: three runs, all
    // below it, stop it before the ten, not killed, still verified.
    let faster = run(&ten().faster_than(3600.0));
    assert_eq!(faster.verdict, Verdict::Verified);
    assert!(faster.faster && !faster.killed);
    assert_eq!(faster.samples.len(), 3);
    // Never below a picosecond: all ten.
    let not = run(&ten().faster_than(1e-12));
    assert!(!not.faster);
    assert_eq!(not.samples.len(), 10);
}

#[test]
fn a_baselines_long_runs_stop_at_three_and_a_candidate_that_cannot_beat_it_stops_futile() {
    let dir = tempfile::tempdir().unwrap();
    let c = gemm_cutout(dir.path());
    let run = |m: &Measure| measure_original(&c, dir.path(), m);
    // Every run is long (a nanosecond or more), and the target of the interval is out of
    // reach: without a stop of its own a long run goes on to the ten.
    let long = || {
        Measure::default()
            .warmup(1)
            .repetitions(10)
            .adaptive(1e-12, 10)
            .long_runs(1e-9)
            .counters(&[])
    };
    assert_eq!(run(&long()).samples.len(), 10);
    // A baseline's long runs stop after three.
    let base = run(&long().long_reps(3));
    assert_eq!(base.verdict, Verdict::Verified);
    assert_eq!(base.samples.len(), 3);
    assert!(!base.killed && !base.faster && !base.futile);
    // A candidate whose three runs are not all below a baseline interval starting at a
    // picosecond cannot beat it: futile after three, verified, not killed.
    let futile = run(&long().beat(1e-12));
    assert_eq!(futile.verdict, Verdict::Verified);
    assert!(futile.futile && !futile.killed);
    assert_eq!(futile.samples.len(), 3);
    // All below an hour: it goes on.
    let on = run(&long().beat(3600.0));
    assert!(!on.futile);
    assert_eq!(on.samples.len(), 10);
    // Runs not long (an hour): neither stop applies.
    let short = run(&long().long_runs(3600.0).long_reps(3).beat(1e-12));
    assert!(!short.futile);
    assert_eq!(short.samples.len(), 10);
}

#[test]
fn adaptive_measurement_stops_between_its_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let c = gemm_cutout(dir.path());
    let tc = Toolchain::default();
    let m = Measure::default()
        .warmup(0)
        .repetitions(5)
        .adaptive(1e-9, 12)
        .counters(&[]);
    let (run, _) = c
        .measure(
            &tc,
            &c.original(),
            0,
            &m,
            Duration::from_secs(10),
            &dir.path().join("b"),
            &dir.path().join("s"),
        )
        .unwrap();
    assert_eq!(run.verdict, Verdict::Verified);
    // An unreachable target: it runs to the maximum.
    assert_eq!(run.samples.len(), 12);
    let m = Measure::default()
        .warmup(0)
        .repetitions(5)
        .adaptive(1e6, 12)
        .counters(&[])
        .flush(true)
        .flush_bytes(1 << 20);
    let (run, _) = c
        .measure(
            &tc,
            &c.original(),
            0,
            &m,
            Duration::from_secs(10),
            &dir.path().join("b"),
            &dir.path().join("s"),
        )
        .unwrap();
    // A target any spread meets: it stops at the minimum. With five samples the
    // median's interval is their whole range, so a target of 10 (±1000%) would be
    // missed whenever one run of these microseconds stalls for twenty times the median.
    assert_eq!(run.samples.len(), 5);
}

#[test]
fn short_runs_are_repeated_until_enough_of_them_were_timed_within_a_wall_time() {
    // gemm at MINI runs in microseconds: with an unreachable interval, twelve runs at
    // most would time a few dozen microseconds; asked for 5 ms of runs, it takes as
    // many as that needs, each on restored inputs, and still verifies.
    let dir = tempfile::tempdir().unwrap();
    let c = gemm_cutout(dir.path());
    let tc = Toolchain::default();
    let m = Measure::default()
        .warmup(1)
        .repetitions(5)
        .adaptive(1e-9, 12)
        .short_runs(0.005)
        .counters(&[]);
    let (run, _) = c
        .measure(
            &tc,
            &c.original(),
            0,
            &m,
            Duration::from_secs(30),
            &dir.path().join("b"),
            &dir.path().join("s"),
        )
        .unwrap();
    assert_eq!(run.verdict, Verdict::Verified);
    let timed: f64 = run.samples.iter().sum();
    assert!(run.samples.len() > 12, "{} runs", run.samples.len());
    // It stops at about 5 ms of runs, or earlier where the timer's resolution makes the
    // interval of the median zero wide: the answer is then known.
    let mut sorted = run.samples.clone();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let half = 0.98 * n.sqrt();
    let (lo, hi) = (
        (n / 2.0 - half) as usize,
        ((n / 2.0 + half).ceil() as usize).min(sorted.len() - 1),
    );
    assert!(
        timed >= 0.004 || sorted[lo] == sorted[hi],
        "{timed} s in {} runs",
        run.samples.len()
    );
    assert!(timed < 0.05, "{timed} s");
    // Where every run first flushes 64 MiB (milliseconds outside the timed region, as a
    // restore of a large array is), the runs stop once their wall time would pass
    // 50 x 5 ms: a few dozen, not the thousands that 5 ms of timed runs would take,
    // and never fewer than the twelve.
    let (flushed, _) = c
        .measure(
            &tc,
            &c.original(),
            0,
            &m.clone().flush(true).flush_bytes(64 << 20),
            Duration::from_secs(30),
            &dir.path().join("b"),
            &dir.path().join("s"),
        )
        .unwrap();
    assert_eq!(flushed.verdict, Verdict::Verified);
    let n = flushed.samples.len();
    assert!((12..200).contains(&n), "{n} runs in {} s", flushed.wall_s);
}

#[test]
fn a_short_nest_that_can_run_again_on_its_outputs_is_timed_in_batches_and_one_that_updates_in_place_is_not(
) {
    // gesummv's nest sets tmp[i] and y[i] before it adds to them: run again on its own
    // outputs it writes the same values. At MINI it takes microseconds, so with
    // batches of 1 ms asked for, each sample is the mean of hundreds of calls.
    let dir = tempfile::tempdir().unwrap();
    let m = Measure::default()
        .warmup(1)
        .repetitions(5)
        .adaptive(0.02, 20)
        .batch(1e-3)
        .counters(&[]);
    let g = cutout_of("gesummv", &dir.path().join("g"));
    let run = measure_original(&g, dir.path(), &m);
    assert_eq!(run.verdict, Verdict::Verified);
    assert!(run.batch >= 10, "{} calls a sample", run.batch);
    let sample = run.stats.median * run.batch as f64;
    assert!(
        (0.2e-3..10e-3).contains(&sample),
        "a sample of {} calls lasted {sample} s",
        run.batch
    );
    assert!(run.samples.len() >= 5);
    // Unasked, the same nest is timed run by run.
    let single = measure_original(&g, dir.path(), &m.clone().batch(0.0));
    assert_eq!(single.verdict, Verdict::Verified);
    assert_eq!(single.batch, 1);
    // gemm's nest scales C and adds to it: run again, C changes, so its runs stay
    // single, each on restored inputs, and still verify.
    let c = gemm_cutout(&dir.path().join("c"));
    let run = measure_original(&c, dir.path(), &m);
    assert_eq!(run.verdict, Verdict::Verified);
    assert_eq!(run.batch, 1);
}

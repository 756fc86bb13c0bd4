//! The whole-program check of `tune apply`: the original and the tuned program, each
//! scop region under a timer, run in rotation; a tuned program not faster beyond the noise
//! is given up. The check looks five times, and a clear answer either way ends it:
//! - after 1 round, a gain of [`ONE_ROUND_GAIN`] or more in the timed part, the whole
//!   run faster too, and the outputs the original's (see below);
//! - after 2 and after 3 rounds ([`QUICK_LOOKS`]), Welch's t test on the logarithms of
//!   the times, one-sided at 0.02 and 0.005 (a gap of several times, or a tight spread,
//!   needs no more runs);
//! - after [`FIRST_LOOK`] rounds, Mann-Whitney, where only runs wholly apart pass (p =
//!   0.029 two-sided, 0.014 one-sided);
//! - after the last round, Mann-Whitney at [`LAST_P`] two-sided (at 5 rounds: at most
//!   one pair out of order, 0.008 one-sided).
//!
//! At the quick looks the check also stops where the tuned program is no faster at all:
//! its median time not below the original's ([`no_faster`]). That keeps the user's
//! file, as the last round would; a real gain of 10% under a spread of 5% reads so
//! after two rounds with a chance of 3%, and then only that gain is lost. A program of
//! 12 s whose cutout gains do not carry over (adi) costs two rounds instead of five.
//!
//! The look after one round is not a test: one run each gives no spread. It confirms
//! what the cutouts measured (every changed nest was kept only faster beyond the noise
//! of its own runs) where the confirmation cannot be mistaken: a gap of 1.8x is beyond
//! the run-to-run noise of whole programs on a shared host (the widest spread seen in
//! the benchmarks' rotations is ±18%, a max/min ratio of 1.44 among runs of one
//! binary), and it must show in the whole run as well. What the original prints is
//! compared with one run of it only (a column of timings then reads as another result
//! and the rounds go on). Most kept gains of this tuner are of several times, and a
//! program of seconds spent half its check on its second round.
//!
//! The chance that a file no faster is kept by the tests is at most 0.02 + 0.005 +
//! 0.014 + 0.011 = 5% over the four looks after round 1 (Bonferroni). Most of it goes
//! to the look after 2 rounds: a program of seconds spends a third of its check on a
//! third round. A program of seconds has no warmup round: each run is a
//! process of its own, and what a warmup would warm is a small part of a long run. Like
//! for like: both are built by the same compiler with the same flags and OpenMP on (a
//! user's `#pragma omp` means their build has `-fopenmp`, and the tuned file is built
//! with it), and run with the same threads.
//!
//! A short program (its loop nests run under [`SHORT_PROGRAM_S`]) where a kept recipe
//! starts an OpenMP team is run [`SHORT_ROUNDS`] rounds with no early look, and
//! Mann-Whitney at [`LAST_P`] decides. There the team's start (1 to 5 ms on a
//! shared 2-core VM, the first parallel region of a process the slowest) is of the
//! order of the whole gain and varies from run to run: colnorm's tuned region took 1.4
//! to 7.6 ms in eight runs where the user's took 2.9 to 3.8 ms, and four rounds once
//! saw only its fast runs. Fifteen rounds of a program of milliseconds cost well under
//! a second.

use crate::bench::{run_suite_until, BenchConfig, Benchmark, Rounds};
use crate::printed::Order;
use crate::report::ProgramCheck;
use crate::spec::ProgramSpec;
use crate::Result;
use profiling::build::Toolchain;
use std::path::Path;
use std::time::Duration;

/// Rounds after which the check looks with Welch's t on log times, each with the
/// quantile of Student's t for the fewest degrees of freedom Welch's test can have there
/// (the smaller sample's runs less one): one-sided 0.02 at 1 (tan(0.48 pi)), 0.005 at 2.
/// Each is `(rounds, one-sided level, quantile)`.
pub const QUICK_LOOKS: [(usize, f64, f64); 2] = [(2, 0.02, 15.895), (3, 0.005, 9.925)];

/// The one-sided level of the quick look after `rounds` rounds, where there is one.
pub fn quick_look_level(rounds: usize) -> Option<f64> {
    QUICK_LOOKS
        .iter()
        .find(|l| l.0 == rounds)
        .map(|&(_, level, _)| level)
}

/// The two-sided Mann-Whitney p below which the last round keeps the tuned program.
pub const LAST_P: f64 = 0.022;

/// Rounds after which the check looks with Mann-Whitney before the last round: its
/// smallest two-sided p of 4 runs against 4 is 0.029.
pub const FIRST_LOOK: usize = 4;

/// The two-sided Mann-Whitney p below which the look after [`FIRST_LOOK`] rounds ends
/// the check: only runs wholly apart (0.029).
pub const FIRST_LOOK_P: f64 = 0.05;

/// Kept recipes that together save less than this share of the program's loop time on
/// their cutouts are not written: a whole-program check cannot tell such a gain from
/// the noise of whole runs (it needs 5 rounds to give it up), and a file changed for
/// it is not the user's for nothing.
pub const MIN_PROMISED_GAIN: f64 = 0.02;

/// A program whose loop nests run less than this (seconds), tuned to start an OpenMP
/// team, is checked over [`SHORT_ROUNDS`] rounds without an early look.
pub const SHORT_PROGRAM_S: f64 = 0.05;

/// The rounds of a short program's check where the tuned file starts a team.
pub const SHORT_ROUNDS: usize = 15;

/// A program whose loop nests run this long (seconds) gets no warmup round.
pub const LONG_PROGRAM_S: f64 = 1.0;

/// After the first round, a tuned program at least this many times faster than the
/// original (in its timed part, with its whole run faster too and its outputs the
/// original's) ends the check; see the module documentation.
pub const ONE_ROUND_GAIN: f64 = 1.8;

/// Whether the rounds so far (the original's, then the tuned program's) answer the
/// check before its last round (see the module documentation).
fn settled_early(r: &Rounds, order: Order) -> bool {
    match r.samples {
        [o, t] if o.len() == 1 && t.len() == 1 => one_round_gain(r, order),
        [o, t] if o.len() == t.len() && o.len() == FIRST_LOOK => {
            profiling::stats::mann_whitney_u(o, t).1 < FIRST_LOOK_P
        }
        [o, t] if no_faster(o, t) => true,
        _ => quick_verdict(r.samples).is_some(),
    }
}

/// The look after one round: the tuned program's timed part at least
/// [`ONE_ROUND_GAIN`] times faster, its whole run faster, and what it printed and wrote
/// the original's results (as [`crate::printed::same_results`] reads them).
fn one_round_gain(r: &Rounds, order: Order) -> bool {
    let gain = quick_verdict(r.samples) == Some(true);
    let whole = matches!(r.walls, [o, t] if o.len() == 1 && t.len() == 1 && t[0] < o[0]);
    let same = matches!(r.outputs, [o, t] if !o.is_empty() && !t.is_empty()
        && t.iter().all(|x| crate::printed::same_results(o, x, order)));
    gain && whole && same
}

/// At a quick look ([`QUICK_LOOKS`]), the tuned program's times (`t`) are no faster
/// at all than the original's (`o`): the median not below. The check stops there and
/// keeps the user's file.
fn no_faster(o: &[f64], t: &[f64]) -> bool {
    let median = profiling::stats::median;
    o.len() == t.len() && quick_look_level(o.len()).is_some() && median(t) >= median(o)
}

/// The answer of a quick look ([`QUICK_LOOKS`], or after one round a gain of
/// [`ONE_ROUND_GAIN`]) at the rounds so far, where it gives one: whether the tuned
/// program (the second list) is the faster.
fn quick_verdict(samples: &[Vec<f64>]) -> Option<bool> {
    let [o, t] = samples else {
        return None;
    };
    if let ([o], [t]) = (o.as_slice(), t.as_slice()) {
        return (*t > 0.0 && o / t >= ONE_ROUND_GAIN).then_some(true);
    }
    let &(_, _, quantile) = QUICK_LOOKS
        .iter()
        .find(|&&(rounds, _, _)| o.len() == rounds && t.len() == rounds)?;
    let (mo, mt, statistic) = welch_on_logs(o, t)?;
    (statistic > quantile).then_some(mt < mo)
}

/// The check's answer from the rounds run (`max` at most; the original's times, then
/// the tuned program's): the quick look that ended them, if one did, and whether the
/// tuned program is faster, with Mann-Whitney's two-sided p. The last guard: a tuned file
/// is written only when the whole program is faster beyond the noise; an inconclusive
/// comparison keeps the user's file (a program whose parallel region costs more to
/// start than it saves can look faster in some runs and slower in others). Without a
/// quick look, Mann-Whitney decides at the level of the look that ended the rounds.
fn verdict(o: &[f64], t: &[f64], max: usize) -> (Option<bool>, bool, f64) {
    let (_, p) = profiling::stats::mann_whitney_u(o, t);
    let quick = quick_verdict(&[o.to_vec(), t.to_vec()]);
    let rounds = o.len().min(t.len());
    let level = if rounds == FIRST_LOOK && rounds < max {
        FIRST_LOOK_P
    } else {
        LAST_P
    };
    let median = profiling::stats::median;
    let faster = quick.unwrap_or(median(t) < median(o) && p < level);
    (quick, faster, p)
}

/// Welch's t test on the logarithms of two sets of times: their mean logarithms and
/// the statistic's absolute value (None for fewer than two runs, a time not above 0,
/// or no spread at all).
fn welch_on_logs(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2
        || b.len() < 2
        || a.iter()
            .chain(b)
            .any(|x| x.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater))
    {
        return None;
    }
    // The mean logarithm and its squared standard error.
    let moments = |x: &[f64]| {
        let logs: Vec<f64> = x.iter().map(|v| v.ln()).collect();
        let s = profiling::measure::Stats::from_samples(&logs);
        (s.mean, s.stddev * s.stddev / s.n as f64)
    };
    let ((ma, va), (mb, vb)) = (moments(a), moments(b));
    let se2 = va + vb;
    (se2 > 0.0).then(|| (ma, mb, (ma - mb).abs() / se2.sqrt()))
}

/// Where the check times the changed nests, the tuned program's whole run may take at
/// most this much longer than the original's (medians) before its file is given up:
/// above the run-to-run spread of a whole run here (a few percent), far below what a
/// nest that got slower in place would add.
pub const WALL_SLACK: f64 = 0.05;

/// What the check builds: the tuned file, and where the changed nests can be timed
/// alone, the user's file and the tuned one with a timer around each.
pub struct CheckFiles<'a> {
    /// The tuned source as `tune apply` writes it.
    pub tuned: &'a str,
    /// Whether its changed nests compute in the original's order (see
    /// [`crate::printed`]).
    pub order: Order,
    /// The user's file and the tuned one, timed at the changed nests.
    pub timed: Option<&'a (String, String)>,
    /// Whether a kept recipe starts an OpenMP team (see [`SHORT_ROUNDS`]).
    pub starts_team: bool,
}

/// Times `p` against its tuned source (`files`, written under `work`) for up to `runs`
/// rounds, after one warmup round unless the program is long (its loop nests run
/// `program_s` seconds or more). With `timed` (the user's file and the tuned one with a
/// timer around each changed nest), the check times those nests where the program runs
/// them, and holds the whole run to [`WALL_SLACK`]; otherwise the `#pragma scop` regions,
/// or the whole run. A short program whose tuned file starts a team runs
/// [`SHORT_ROUNDS`] rounds at least, with no early look.
pub fn program_check(
    toolchain: &Toolchain,
    runs: usize,
    program_s: f64,
    timeout: Duration,
    p: &ProgramSpec,
    files: CheckFiles,
    work: &Path,
) -> Result<ProgramCheck> {
    let CheckFiles {
        tuned: source,
        order,
        timed,
        starts_team,
    } = files;
    let team_noise = starts_team && program_s < SHORT_PROGRAM_S;
    let args = p.cc()?;
    let main = Path::new(&args.main);
    let tuned_file = work.join(
        main.file_name()
            .map(|f| f.to_string_lossy().replace(".c", ".tuned.c"))
            .unwrap_or_else(|| "tuned.c".into()),
    );
    let original: Vec<String> = std::iter::once(&args.main)
        .chain(&args.extra_sources)
        .chain(&args.cflags)
        .chain(&args.link)
        .cloned()
        .collect();
    // With a timer around each changed nest, the user's file is timed from a copy
    // beside the tuned one (built the same way: the user's folder on the include path).
    let user = match timed {
        Some((was, now)) => {
            let copy = work.join(tuned_file.file_name().map_or_else(
                || "original.c".into(),
                |f| f.to_string_lossy().replace(".tuned.c", ".original.c"),
            ));
            crate::files::write(&copy, was)?;
            crate::files::write(&tuned_file, now)?;
            Benchmark {
                name: args.main.clone(),
                variant: crate::bench::Variant::Original,
                ..Benchmark::tuned(&args.main, &copy, &original)
            }
        }
        None => {
            crate::files::write(&tuned_file, source)?;
            Benchmark::original(&args.main, original.clone())
        }
    };
    let benches = [
        Benchmark {
            openmp: true,
            program_args: p.program_args.clone(),
            ..user
        },
        Benchmark {
            program_args: p.program_args.clone(),
            ..Benchmark::tuned(&args.main, &tuned_file, &original)
        },
    ];
    let command = |b: &Benchmark| {
        let mut words = vec![toolchain.cc.clone()];
        let cflags = profiling::cc::CcArgs::parse(&b.args).map_or(Vec::new(), |a| a.cflags);
        words.extend(toolchain.base_for(&cflags).iter().cloned());
        words.push("-fopenmp".into());
        words.extend(b.args.iter().cloned());
        words.join(" ")
    };
    let cfg = BenchConfig {
        toolchain: toolchain.clone(),
        warmup: usize::from(program_s < LONG_PROGRAM_S),
        runs: if team_noise {
            runs.max(SHORT_ROUNDS)
        } else {
            runs.max(2)
        },
        timeout,
        work: work.to_path_buf(),
    };
    let r = run_suite_until(
        &cfg,
        &args.main,
        &benches,
        &crate::events::silent(),
        &|r: &Rounds| !team_noise && settled_early(r, order),
    )?;
    let (o, t) = (&r.benchmarks[0], &r.benchmarks[1]);
    let (quick, faster, p_value) = verdict(&o.samples, &t.samples, cfg.runs);
    let median = profiling::stats::median;
    // Timed at the changed nests, the whole run must not be slower either: the rest of
    // the program runs the same code, but after the tuned nests (caches, a team's
    // threads still spinning).
    let wall_ms = (o.unit == crate::report::TimeUnit::Nests)
        .then(|| (median(&o.wall) * 1e3, median(&t.wall) * 1e3));
    let wall_slower = wall_ms.is_some_and(|(o, t)| t > o * (1.0 + WALL_SLACK));
    let reverted = !faster || wall_slower;
    let stopped = r.runs < cfg.runs && quick.is_none() && no_faster(&o.samples, &t.samples);
    let same_output = prints_the_same(o, t, order);
    let contracted = !same_output
        && order == Order::Kept
        && contraction::contracted_only(toolchain, timeout, &args.main, &benches, work)?;
    Ok(ProgramCheck {
        unit: o.unit,
        original_ms: o.median * 1e3,
        tuned_ms: t.median * 1e3,
        speedup: o.median / t.median.max(1e-12),
        p_value,
        quick_look: quick.map(|_| r.runs),
        no_faster: stopped.then_some(r.runs),
        runs: r.runs,
        same_output: same_output || contracted,
        contracted,
        reverted,
        other_results: false,
        wall_ms,
        wall_slower,
        original_command: command(&benches[0]),
        tuned_command: command(&benches[1]),
        seconds: 0.0,
    })
}

/// Whether the tuned program `t` printed what the original `o` printed in every run
/// ([`crate::printed::same_results`] with `order`; where an output was too long to
/// keep, their hashes).
fn prints_the_same(o: &crate::bench::Sampled, t: &crate::bench::Sampled, order: Order) -> bool {
    if o.outputs.is_empty() || t.outputs.is_empty() {
        o.output_hash == t.output_hash
    } else {
        t.outputs
            .iter()
            .all(|x| crate::printed::same_results(&o.outputs, x, order))
    }
}

mod contraction;

#[cfg(test)]
mod tests {
    use super::*;

    /// A program whose nest, at `nest_reps` repetitions, stands between glue of `glue`
    /// iterations; the copies are timed at the nest, as [`crate::emit::emitted`]
    /// writes them.
    fn timed_program(nest_reps: u32, glue: u64) -> String {
        crate::bench::timed_copy(&format!(
            "#include <stdio.h>\n\
             static double a[200000], b[200000];\n\
             int main(void) {{\n\
               volatile double s = 0;\n\
               for (long r = 0; r < {glue}L; r++) s += r;\n\
               for (int i = 0; i < 200000; i++) {{ a[i] = 1.0; b[i] = i % 7; }}\n\
               {{ {}\n\
               for (int k = 0; k < {nest_reps}; k++)\n\
                 for (int i = 0; i < 200000; i++) a[i] = 0.5 * a[i] + b[i];\n\
               {} }}\n\
               printf(\"%f\\n\", a[7] + a[199999]);\n\
               return 0;\n\
             }}\n",
            crate::bench::TIMER_START,
            crate::bench::TIMER_STOP
        ))
    }

    /// The check of `was` against `now` (each with its timers), in a folder of its own,
    /// of a program whose nests take no time; `starts_team`: as [`CheckFiles`] says.
    fn check_of(was: &str, now: &str, starts_team: bool) -> ProgramCheck {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("prog.c");
        std::fs::write(&main, "int main(void) { return 0; }\n").unwrap();
        let spec = ProgramSpec::from_args(&[main.to_str().unwrap()]).unwrap();
        program_check(
            &Toolchain::default(),
            5,
            0.0,
            Duration::from_secs(60),
            &spec,
            CheckFiles {
                tuned: now,
                order: Order::Kept,
                timed: Some(&(was.to_string(), now.to_string())),
                starts_team,
            },
            &dir.path().join("check"),
        )
        .unwrap()
    }

    #[test]
    fn timed_at_the_changed_nests_the_check_reads_them_and_holds_the_whole_run() {
        // The nest runs 10 times where it ran 400 times (what it prints differs; only
        // the times are read here), after a short run of glue: the nests' time shows the
        // gain, the whole run a smaller one.
        let c = check_of(
            &timed_program(400, 2_000_000),
            &timed_program(10, 2_000_000),
            false,
        );
        assert_eq!(c.unit, crate::report::TimeUnit::Nests);
        assert!(c.speedup > 5.0, "{c:?}");
        assert!(!c.reverted && !c.wall_slower, "{c:?}");
        let (o, t) = c.wall_ms.unwrap();
        assert!(o > t && t > 0.0, "{c:?}");
        // The same nests, and glue 40 times as long after tuning: the whole run is
        // slower, and the user's file is kept.
        let c = check_of(
            &timed_program(400, 2_000_000),
            &timed_program(10, 80_000_000),
            false,
        );
        assert!(c.speedup > 5.0, "{c:?}");
        assert!(c.wall_slower && c.reverted, "{c:?}");
    }

    #[test]
    fn a_short_program_tuned_to_start_a_team_runs_every_round_of_its_check() {
        // A gain of 40 times: a quick look settles it, after two rounds or, where a
        // shared host's noise widens the first two, after three (the outputs differ, so
        // one round does not), unless the tuned file starts a team in a short program;
        // then all fifteen rounds run and Mann-Whitney decides.
        let (was, now) = (timed_program(400, 0), timed_program(10, 0));
        let quick = check_of(&was, &now, false);
        assert!(
            matches!((quick.runs, quick.quick_look), (2, Some(2)) | (3, Some(3))),
            "{quick:?}"
        );
        let full = check_of(&was, &now, true);
        assert_eq!(full.runs, SHORT_ROUNDS, "{full:?}");
        assert_eq!(full.quick_look, None);
        assert!(!full.reverted && full.speedup > 5.0, "{full:?}");
        assert!(full.p_value < LAST_P, "{full:?}");
    }

    /// [`settled_early`] on these samples, the whole runs timed as they are, and every
    /// run printing the same.
    fn settled(samples: &[Vec<f64>]) -> bool {
        let outputs: Vec<Vec<Vec<u8>>> = samples
            .iter()
            .map(|s| s.iter().map(|_| b"sum 1.5\n".to_vec()).collect())
            .collect();
        settled_early(
            &Rounds {
                samples,
                walls: samples,
                outputs: &outputs,
            },
            Order::Kept,
        )
    }

    #[test]
    fn one_round_settles_a_gain_of_several_times_that_the_whole_run_and_the_outputs_confirm() {
        let (o, t) = (vec![vec![10.0]], vec![vec![5.0]]);
        let samples = [o[0].clone(), t[0].clone()];
        let printed = |a: &str, b: &str| [vec![a.as_bytes().to_vec()], vec![b.as_bytes().to_vec()]];
        let same = printed("sum 1.5\n", "sum 1.5\n");
        let look = |walls: &[Vec<f64>], outputs: &[Vec<Vec<u8>>]| {
            settled_early(
                &Rounds {
                    samples: &samples,
                    walls,
                    outputs,
                },
                Order::Kept,
            )
        };
        // 2x in the timed part and in the whole run, the same printed: settled, faster.
        assert!(look(&samples, &same));
        assert!(verdict(&o[0], &t[0], 5).1);
        // The whole run not faster (the rest of the program slower): the rounds go on.
        assert!(!look(&[vec![12.0], vec![12.5]], &same));
        // Another number printed (or a time the one run of the original cannot tell
        // from a result): the rounds go on.
        assert!(!look(&samples, &printed("sum 1.5\n", "sum 1.7\n")));
        assert!(!look(&samples, &[vec![], vec![]]));
        // 1.5x is within what noise and a lost gain can show in one round.
        assert!(!settled(&[vec![10.0], vec![6.67]]));
        // Slower by 2x in one round is not settled: rejecting takes the tests.
        assert!(!settled(&[vec![5.0], vec![10.0]]));
        assert_eq!(quick_verdict(&[vec![5.0], vec![10.0]]), None);
    }

    #[test]
    fn the_early_looks_end_the_check_only_on_a_clear_answer() {
        let slow = vec![10.0, 10.2, 10.1, 10.3];
        let fast = vec![5.0, 5.1, 5.2, 5.05];
        // Two rounds, twice as fast with a spread of 0.5%: apart on the log scale (t = 197).
        let (slow2, fast2) = (vec![10.0, 10.05], vec![5.0, 5.025]);
        assert!(settled(&[slow2.clone(), fast2.clone()]));
        assert!(settled(&[fast2.clone(), slow2.clone()]));
        // ... and the look's answer says which is faster.
        assert_eq!(quick_verdict(&[slow2.clone(), fast2.clone()]), Some(true));
        assert_eq!(quick_verdict(&[fast2, slow2]), Some(false));
        // Twice as fast with a spread of 2% at two rounds: t = 50, apart.
        assert!(settled(&[slow[..2].to_vec(), fast[..2].to_vec()]));
        // 10% faster with a spread of 2%: t = 7.5, not yet.
        assert!(!settled(&[vec![10.0, 10.2], vec![9.0, 9.18]]));
        // Apart either way at four rounds: settled (p = 0.029).
        assert!(settled(&[slow.clone(), fast.clone()]));
        assert!(settled(&[fast.clone(), slow.clone()]));
        // Interleaved: not settled, the rounds go on.
        let mixed = vec![10.05, 5.0, 10.4, 5.3];
        assert!(!settled(&[slow.clone(), mixed]));
        // Three rounds: 2x with a spread of 2% is apart (t = 54 > 9.9); 3% faster with a
        // spread of 2% is not.
        assert!(settled(&[slow[..3].to_vec(), fast[..3].to_vec()]));
        assert!(!settled(&[vec![10.0, 10.2, 10.1], vec![9.8, 9.6, 9.9]]));
        // Five rounds are not looked at here.
        let mut slow5 = slow.clone();
        slow5.push(10.0);
        let mut fast5 = fast.clone();
        fast5.push(5.0);
        assert!(!settled(&[slow5, fast5]));
        // The answer at the look that ended the rounds: four runs wholly apart (p =
        // 0.029) keep the tuned program when a fifth round was to come ...
        let slow4 = vec![10.0, 10.2, 10.1, 10.3];
        let fast4 = vec![9.0, 9.6, 9.1, 9.4];
        assert_eq!(quick_verdict(&[slow4.clone(), fast4.clone()]), None);
        assert!(verdict(&slow4, &fast4, 5).1);
        // ... and not as the last of four (the last round's level is 0.022).
        assert!(!verdict(&slow4, &fast4, 4).1);
        // Five rounds: one pair out of order passes (p = 0.016), two do not (0.032).
        let slow5 = vec![10.0, 10.2, 10.1, 10.3, 10.4];
        let one = vec![9.0, 9.6, 9.1, 10.05, 9.4];
        let two = vec![9.0, 9.6, 10.08, 10.05, 9.4];
        assert!(verdict(&slow5, &one, 5).1);
        assert!(!verdict(&slow5, &two, 5).1);
        // No faster at all at a quick look: stopped, the user's file kept (adi's
        // 11.75 s against 12.04 s) ...
        let (o2, t2) = (vec![11.7, 11.8], vec![12.0, 12.1]);
        assert!(no_faster(&o2, &t2) && settled(&[o2.clone(), t2.clone()]));
        assert!(!verdict(&o2, &t2, 5).1);
        // ... the same median too; a little faster goes on to the next round; at four
        // rounds (no quick look) it is Mann-Whitney's to say.
        assert!(no_faster(&[10.0, 10.0], &[10.0, 10.0]));
        assert!(!no_faster(&[10.0, 10.2], &[9.9, 10.1]));
        assert!(!settled(&[vec![10.0, 10.2], vec![9.9, 10.1]]));
        assert!(!no_faster(&slow4, &[10.5, 10.6, 10.7, 10.8]));
        // No spread at all, or a time of zero, decides nothing.
        assert!(!settled(&[vec![1.0, 1.0], vec![0.5, 0.5]]));
        assert!(!settled(&[vec![1.0, 1.1], vec![0.0, 0.5]]));
    }
}

//! Instrumentation overhead: the same nest, in one process, called bare (two clock
//! reads around the call) and with the full instrumentation the harness wraps around
//! it (runtime enter, Save check, region timers, perf counters enabled and disabled),
//! timed by the same outer clock. Rounds alternate the two orders to cancel drift.
//! Prints medians, their ratio and the spread per nest.
//!
//! Run: `cargo bench -p tuner --bench overhead`

use datasets::{Preset, Suite};
use profiling::build::{build, BuildRequest, Toolchain};
use profiling::cc::CcArgs;
use profiling::cutout::Cutout;
use profiling::measure::{Stats, DEFAULT_COUNTERS};
use profiling::run::{run, RunOptions};
use tuner::run::{dry_run, RunConfig};

const ROUNDS: usize = 201;

fn main() {
    let suite = Suite::core().expect("suite");
    let tc = Toolchain::default();
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("gemm", Preset::Medium, 0usize),
        ("jacobi-2d", Preset::Large, 0),
        ("heat-3d", Preset::Large, 0),
        ("atax", Preset::Large, 1),
    ];
    println!(
        "{:<12}{:<8}{:>12}{:>12}{:>14}{:>20}{:>14}{:>10}",
        "program",
        "nest",
        "bare ms",
        "instr. ms",
        "median ratio",
        "ratio IQR",
        "cost/call µs",
        "cost %"
    );
    for (name, preset, nest_index) in cases {
        let p = suite.program(name).expect("program");
        let cfg = RunConfig {
            args: CcArgs::parse(&suite.args(p, preset)).expect("args"),
            function: None,
            assume_pure: Vec::new(),
            cache_root: dir.path().to_path_buf(),
            save_versions: 1,
            openmp: false,
            timeout: None,
            program_args: Vec::new(),
            toolchain: tc.clone(),
            capture: true,
            save_budget: None,
            representative: false,
            whole_nests: false,
        };
        let dry = dry_run(&cfg, &profiling::phases::Phases::new()).expect("dry run");
        let nest = dry.nests[nest_index].clone();
        let c = Cutout::new(
            dry.parsed.program.clone(),
            nest.clone(),
            dry.cache.data(),
            Vec::new(),
        );
        let (head, reset, call, _) = c.program_parts(&c.original());
        let source = format!(
            "#include <stdio.h>
#include <time.h>
static double tune_bench_now(void) {{ struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }}
{head}
  extern long tune_rt_enter(int, const char *);
  extern int tune_rt_saving(long);
  extern void tune_rt_start(int);
  extern void tune_rt_stop(int, long);
  static double bare[{ROUNDS}], instr[{ROUNDS}];
  /* The instrumentation alone, without the nest: its cost per call. */
  double c0 = tune_bench_now();
  for (int i = 0; i < 20000; i++) {{
    long v = tune_rt_enter(1, \"calibration\");
    if (tune_rt_saving(v)) {{ }}
    tune_rt_start(1);
    tune_co_start();
    tune_co_stop();
    tune_rt_stop(1, v);
  }}
  double cost = (tune_bench_now() - c0) / 20000;
  tune_co_next();
  {reset} {call} /* warm up */
  for (int r = 0; r < {ROUNDS}; r++) {{
    for (int k = 0; k < 2; k++) {{
      int instrumented = (k + r) % 2;
      tune_co_next();
      {reset}
      double t0 = tune_bench_now();
      if (instrumented) {{
        long v = tune_rt_enter(0, \"nest\");
        if (tune_rt_saving(v)) {{ }}
        tune_rt_start(0);
        tune_co_start();
        {call}
        tune_co_stop();
        tune_rt_stop(0, v);
      }} else {{
        {call}
      }}
      double t = tune_bench_now() - t0;
      if (instrumented) instr[r] = t; else bare[r] = t;
    }}
  }}
  printf(\"cost %.9e\\n\", cost);
  for (int r = 0; r < {ROUNDS}; r++) printf(\"%.9e %.9e\\n\", bare[r], instr[r]);
  return 0;
}}
"
        );
        // Both paths must call the same machine code: no inlining into either branch.
        let args = CcArgs {
            main: format!("overhead-{name}"),
            extra_sources: vec![],
            cflags: vec!["-fno-inline".into()],
            link: vec!["-lm".into()],
        };
        let b = build(
            &tc,
            &BuildRequest {
                source: &source,
                args: &args,
                runtime: true,
                openmp: false,
                preprocessed: false,
            },
            &dir.path().join("b"),
        )
        .expect("bench builds");
        let counters = format!("counters={}", DEFAULT_COUNTERS.join(","));
        let out = run(
            &b.exe,
            &RunOptions {
                data_dir: None,
                save_versions: 0,
                timeout: None,
                args: vec![
                    format!("data={}", dry.cache.data().display()),
                    format!("tag={}", nest.name),
                    "version=0".into(),
                    counters,
                ],
                capture: true,
                ..Default::default()
            },
            &dir.path().join("s"),
        )
        .expect("bench runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let cost: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("cost ")?.trim().parse().ok())
            .expect("calibration line");
        let pairs: Vec<(f64, f64)> = text
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace().map(|x| x.parse::<f64>().ok());
                Some((it.next()??, it.next()??))
            })
            .collect();
        assert_eq!(
            pairs.len(),
            ROUNDS,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bare = Stats::from_samples(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        let instr = Stats::from_samples(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
        let mut ratios: Vec<f64> = pairs.iter().map(|(b, i)| i / b).collect();
        ratios.sort_by(f64::total_cmp);
        let q = |f: f64| ratios[((ratios.len() - 1) as f64 * f).round() as usize];
        // Paired ratios of adjacent runs cancel slow drift; their median is the estimate.
        println!(
            "{:<12}{:<8}{:>12.4}{:>12.4}{:>14.4}{:>20}{:>14.3}{:>9.4}%",
            name,
            nest.name,
            bare.median * 1e3,
            instr.median * 1e3,
            q(0.5),
            format!("[{:.4}, {:.4}]", q(0.25), q(0.75)),
            cost * 1e6,
            100.0 * cost / bare.median
        );
    }
}

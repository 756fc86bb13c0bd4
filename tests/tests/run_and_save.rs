//! `tune run`: exit codes pass through, the summary names nests and verdicts, and the
//! data layout `.tunecache/<program>/data/<array>/<nest>_<version>.npy` holds the
//! right values.

use datasets::{Preset, Suite};
use std::path::Path;
use tune_e2e::{strings, tune};

fn run_json(args: &[String], dir: &Path) -> serde_json::Value {
    let mut a = strings(&["run", "--json"]);
    a.extend(args.iter().cloned());
    let out = tune(&a, dir);
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let last = out.stderr_text().lines().last().unwrap().to_string();
    serde_json::from_str(&last).unwrap()
}

#[test]
fn exit_code_and_output_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <stdio.h>\nint main(void) {\n  double a[10]; int i;\n#pragma scop\n  for (i = 0; i < 10; i++) a[i] = 2.0 * i;\n#pragma endscop\n  printf(\"%g\\n\", a[9]);\n  fprintf(stderr, \"to stderr\\n\");\n  return 3;\n}\n";
    std::fs::write(dir.path().join("e.c"), src).unwrap();
    let out = tune(&strings(&["run", "--quiet", "e.c"]), dir.path());
    assert_eq!(out.code, 3);
    assert_eq!(out.stdout, b"18\n");
    assert_eq!(out.stderr, b"to stderr\n");
}

#[test]
fn gemm_saves_inputs_and_outputs_with_shapes_and_values() {
    let suite = Suite::core().unwrap();
    let gemm = suite.program("gemm").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = run_json(&suite.args(gemm, Preset::Mini), dir.path());
    assert_eq!(s["nests"].as_array().unwrap().len(), 1);
    assert_eq!(s["nests"][0]["invocations"], 1);
    let verdicts: Vec<&str> = s["regions"][0]["loops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["parallel", "parallel", "reduction", "parallel"]);

    let data = dir.path().join(".tunecache/gemm/data");
    // MINI gemm: C is NI x NJ = 20 x 25, A is NI x NK = 20 x 30.
    let a = profiling::npy::read_f64(&data.join("A/nest0_0.npy")).unwrap();
    assert_eq!(a.shape(), &[20, 30]);
    let c_in = profiling::npy::read_f64(&data.join("C/region0_0.npy")).unwrap();
    let c_out = profiling::npy::read_f64(&data.join("C/region0_0.out.npy")).unwrap();
    let c_nest_out = profiling::npy::read_f64(&data.join("C/nest0_0.out.npy")).unwrap();
    assert_eq!(c_out, c_nest_out);
    assert_ne!(c_in, c_out);
    // Recompute C = alpha*A*B + beta*C from the saved inputs, in the program's order.
    let b = profiling::npy::read_f64(&data.join("B/nest0_0.npy")).unwrap();
    let alpha = profiling::npy::read_f64(&data.join("alpha/nest0_0.npy")).unwrap();
    let beta = profiling::npy::read_f64(&data.join("beta/nest0_0.npy")).unwrap();
    assert_eq!(alpha.ndim(), 0);
    let (alpha, beta) = (alpha[[]], beta[[]]);
    let mut c = c_in.clone();
    for i in 0..20 {
        for j in 0..25 {
            c[[i, j]] *= beta;
        }
        for k in 0..30 {
            for j in 0..25 {
                c[[i, j]] += alpha * a[[i, k]] * b[[k, j]];
            }
        }
    }
    let worst = c
        .iter()
        .zip(c_out.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-9, "recomputed C differs by {worst}");
    // Read-only arrays have no .out file; sizes are saved as 0-d int arrays.
    assert!(!data.join("A/nest0_0.out.npy").exists());
    let ni = profiling::npy::read_i32(&data.join("ni/nest0_0.npy")).unwrap();
    assert_eq!(ni[[]], 20);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["program"], "gemm");
    assert_eq!(manifest["nests"][0]["name"], "nest0");
}

#[test]
fn nests_under_time_loops_save_the_requested_versions() {
    let suite = Suite::core().unwrap();
    let p = suite.program("jacobi-2d").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args = strings(&["--save-versions", "3"]);
    args.extend(suite.args(p, Preset::Mini));
    let s = run_json(&args, dir.path());
    let nests = s["nests"].as_array().unwrap();
    assert_eq!(nests.len(), 2);
    // MINI: TSTEPS = 20 invocations of each nest.
    assert_eq!(nests[0]["invocations"], 20);
    assert_eq!(s["regions"][0]["loops"][0]["verdict"], "sequential");
    let data = dir.path().join(".tunecache/jacobi-2d/data/A");
    for v in 0..3 {
        assert!(data.join(format!("nest0_{v}.npy")).exists(), "version {v}");
    }
    assert!(!data.join("nest0_3.npy").exists());
    // Version 1 of nest0 sees what nest1 wrote in version 0.
    let nest1_out0 = profiling::npy::read_f64(&data.join("nest1_0.out.npy")).unwrap();
    let nest0_in1 = profiling::npy::read_f64(&data.join("nest0_1.npy")).unwrap();
    assert_eq!(nest1_out0, nest0_in1);
}

#[test]
fn a_factorization_saves_the_row_where_half_its_time_is_spent() {
    // lu's second nest (row i of U: j from i, k below i) is empty at i = 0 and largest
    // near i = n/2: the tuning commands measure the invocation where half of the
    // nest's time was spent, not the first.
    let suite = Suite::core().unwrap();
    let p = suite.program("lu").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args = strings(&["--save-versions", "1", "--representative"]);
    args.extend(suite.args(p, Preset::Small));
    let s = run_json(&args, dir.path());
    assert_eq!(s["nests"][1]["invocations"], 120);
    let data = dir.path().join(".tunecache/lu/data");
    let cutout_version = |nest: &str| -> u64 {
        let names: Vec<String> = std::fs::read_dir(data.join("A"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("{nest}_")) && !n.ends_with(".out.npy"))
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        names[0][nest.len() + 1..names[0].len() - 4]
            .parse()
            .unwrap()
    };
    let v = cutout_version("nest1");
    // Time of row i grows as i * (n - i): the time-weighted median lies near the
    // middle (analytically at i = 60; a noisy run moves it a little).
    assert!((30..=90).contains(&v), "nest1 saved at version {v}");
    // Version v is the run with i = v, and its inputs are what the program had then.
    let i = profiling::npy::read_i32(&data.join(format!("i/nest1_{v}.npy"))).unwrap();
    assert_eq!(i[[]] as u64, v);
    // The plan is remembered for this build and arguments: a second run saves the same
    // row, where the noise would move a new median (and the nest's features with it).
    run_json(&args, dir.path());
    assert_eq!(cutout_version("nest1"), v);
    let plan = std::fs::read_to_string(dir.path().join(".tunecache/lu/plan.json")).unwrap();
    assert!(plan.contains(&format!("[1,{v}]")), "{plan}");
    // Without --representative the first invocation is saved.
    let dir2 = tempfile::tempdir().unwrap();
    let mut args = strings(&["--save-versions", "1"]);
    args.extend(suite.args(p, Preset::Small));
    run_json(&args, dir2.path());
    assert!(dir2
        .path()
        .join(".tunecache/lu/data/A/nest1_0.npy")
        .exists());
}

#[test]
fn a_crashing_program_keeps_the_data_saved_before() {
    let dir = tempfile::tempdir().unwrap();
    let ok = "#include <stdlib.h>\ndouble a[16];\nint main(int argc, char **argv) {\n  int i;\n#pragma scop\n  for (i = 0; i < 16; i++) a[i] = a[i] + 1.0;\n#pragma endscop\n  if (argc > 1) abort();\n  return 0;\n}\n";
    std::fs::write(dir.path().join("c.c"), ok).unwrap();
    let out = tune(&strings(&["run", "--quiet", "c.c"]), dir.path());
    assert_eq!(out.code, 0);
    let saved = dir.path().join(".tunecache/c/data/a/nest0_0.npy");
    let before = std::fs::read(&saved).unwrap();
    let out = tune(
        &strings(&["run", "--quiet", "c.c", "--", "crash"]),
        dir.path(),
    );
    assert_eq!(out.code, 134, "SIGABRT is reported as 128 + 6");
    assert_eq!(std::fs::read(&saved).unwrap(), before);
}

#[test]
fn function_mode_takes_a_whole_function() {
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <stdio.h>\nstatic void scale(int n, double x[100], double s) {\n  int i;\n  for (i = 0; i < n; i++)\n    x[i] = x[i] * s;\n}\nint main(void) {\n  double x[100];\n  for (int i = 0; i < 100; i++) x[i] = i;\n  scale(100, x, 0.5);\n  printf(\"%.17g\\n\", x[99]);\n  return 0;\n}\n";
    std::fs::write(dir.path().join("f.c"), src).unwrap();
    let s = run_json(&strings(&["--function", "scale", "f.c"]), dir.path());
    assert_eq!(s["regions"][0]["function"], "scale");
    assert_eq!(s["regions"][0]["loops"][0]["verdict"], "parallel");
    let out = tune(
        &strings(&["run", "--quiet", "--function", "scale", "f.c"]),
        dir.path(),
    );
    assert_eq!(out.stdout, b"49.5\n");
}

#[test]
fn a_hanging_program_is_killed_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let src = "double a[16];\nint main(int argc, char **argv) {\n  int i;\n#pragma scop\n  for (i = 0; i < 16; i++) a[i] = 1.0;\n#pragma endscop\n  if (argc > 1) for (;;) {}\n  return 0;\n}\n";
    std::fs::write(dir.path().join("h.c"), src).unwrap();
    assert_eq!(
        tune(&strings(&["run", "--quiet", "h.c"]), dir.path()).code,
        0
    );
    let start = std::time::Instant::now();
    let out = tune(
        &strings(&["run", "--timeout", "0.5", "h.c", "--", "hang"]),
        dir.path(),
    );
    assert_eq!(out.code, 124);
    assert!(start.elapsed().as_secs_f64() < 20.0);
    assert!(
        out.stderr_text().contains("data: not saved"),
        "{}",
        out.stderr_text()
    );
    assert!(dir.path().join(".tunecache/h/data/a/nest0_0.npy").exists());
}

#[test]
fn a_pointer_that_points_nowhere_at_the_regions_entry_is_not_saved_there() {
    // TSVC's form: a global pointer set inside the function (`xx = pool;`) is null when
    // the region starts. Its nest's data, taken where the nest starts, is saved; the
    // region's entry has nothing to save for it, and the run ends as the program does.
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <stdio.h>\nstatic float pool[1000];\nfloat *xx;\nstatic void step(void) {\n  int i;\n  xx = pool;\n  for (i = 0; i < 999; i++)\n    xx[i] = xx[i + 1] + 1.0f;\n}\nint main(void) {\n  int i;\n  for (i = 0; i < 1000; i++)\n    pool[i] = (float)i;\n  step();\n  printf(\"%.1f\\n\", pool[3]);\n  return 0;\n}\n";
    std::fs::write(dir.path().join("g.c"), src).unwrap();
    let out = tune(&strings(&["run", "--function", "step", "g.c"]), dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    assert_eq!(out.stdout, b"5.0\n");
    let data = dir.path().join(".tunecache/g/data/xx");
    let mut saved: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    saved.sort();
    assert_eq!(
        saved,
        ["nest0_0.npy", "nest0_0.out.npy", "region0_0.out.npy"]
    );
}

#[test]
fn a_program_that_writes_past_its_last_block_runs_under_the_runtime_as_it_runs_alone() {
    // Two elements past the end of the last block: the second lands on the size of the
    // heap's top chunk. The program allocates nothing afterwards, so its own run ends
    // normally; glibc aborts the next allocation from the top ("corrupted top size").
    // The runtime saves the nest's outputs after that point, so it must not allocate
    // from the program's heap to write them (stdio's buffer of a new FILE would).
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <stdio.h>\n#include <stdlib.h>\n#define N 100\nint main(void) {\n  int i;\n  double *b, *a;\n  printf(\"start\\n\");\n  b = malloc(N * sizeof(double));\n  a = malloc(N * sizeof(double));\n  for (i = 0; i < N; i++)\n    b[i] = i;\n  for (i = 0; i < N; i++)\n    a[i] = 1.0;\n  a[N] = 2.0;\n  a[N + 1] = 2.0;\n  for (i = 0; i < N; i++)\n    b[i] = b[i] * 0.5 + a[i];\n  printf(\"%.1f\\n\", b[N - 1]);\n  return 0;\n}\n";
    std::fs::write(dir.path().join("o.c"), src).unwrap();
    let out = tune(&strings(&["run", "o.c"]), dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    assert_eq!(out.stdout, b"start\n50.5\n");
    let data = dir.path().join(".tunecache/o/data/b");
    let saved: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        saved.iter().any(|f| f.ends_with(".out.npy")),
        "outputs of the last nest saved: {saved:?}"
    );
}

//! The reuse-distance cache model on loop orders with known behaviour: gemm i-j-k
//! (B walked down columns) against i-k-j (rows only), a streaming copy, sampling, and
//! dataset gemm.

use ir::frontend::parse_preprocessed;
use ir::interp::Env;
use ir::source::Preprocessed;
use profiling::cachemodel::{model, CacheModel, CacheSpec};
use std::time::Instant;

fn caches() -> Vec<CacheSpec> {
    vec![
        CacheSpec::new("L1", 32 << 10, 64),
        CacheSpec::new("L2", 512 << 10, 64),
        CacheSpec::new("L3", 16 << 20, 64),
    ]
}

fn program(params: &str, body: &str) -> ir::Program {
    let text = format!(
        "# 1 \"t.c\"\nvoid f({params}) {{\n  int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
    );
    let mut parsed = parse_preprocessed(Preprocessed::new("t.c", text), None).unwrap();
    ir::deps::annotate(&mut parsed.program);
    parsed.program
}

fn run(p: &ir::Program, env: &Env, limit: u64) -> CacheModel {
    model(p, 0, 0, env, &caches(), limit).unwrap()
}

/// A gemm shaped so that a column of B (NK lines) does not fit in L1 but the whole
/// problem fits in L3: NI x NK times NK x NJ.
const GEMM_PARAMS: &str =
    "int ni, int nj, int nk, double C[4][32], double A[4][640], double B[640][32]";

#[test]
fn gemm_loop_order_changes_l1_misses_not_compulsory_ones() {
    let ijk = program(
        GEMM_PARAMS,
        "for (i = 0; i < ni; i++) for (j = 0; j < nj; j++) for (k = 0; k < nk; k++) C[i][j] += A[i][k] * B[k][j];",
    );
    let ikj = program(
        GEMM_PARAMS,
        "for (i = 0; i < ni; i++) for (k = 0; k < nk; k++) for (j = 0; j < nj; j++) C[i][j] += A[i][k] * B[k][j];",
    );
    let env = Env::from_pairs(&[("ni", 4), ("nj", 32), ("nk", 640)]);
    let a = run(&ijk, &env, u64::MAX);
    let b = run(&ikj, &env, u64::MAX);
    let iters = 4 * 32 * 640;
    assert_eq!(a.accesses, 4 * iters);
    assert_eq!(b.accesses, 4 * iters);
    assert!(!a.sampled && !b.sampled);
    assert_eq!(a.levels[0].accesses, a.accesses);
    eprintln!(
        "L1 misses: i-j-k {} i-k-j {}; L3 misses {} {}",
        a.levels[0].misses, b.levels[0].misses, a.levels[2].misses, b.levels[2].misses
    );
    // i-j-k: every B access misses L1 (a column is 640 lines > 512).
    assert!(a.levels[0].misses >= iters, "{a:?}");
    // i-k-j: B rows are reused within lines; misses are per line, per i.
    assert!(
        a.levels[0].misses > 4 * b.levels[0].misses,
        "ijk {a:?}\nikj {b:?}"
    );
    // Everything fits in L3: only cold misses, the same for both orders.
    let footprint_lines = (4 * 32 + 4 * 640 + 640 * 32) * 8 / 64;
    assert_eq!(a.levels[2].misses, footprint_lines);
    assert_eq!(b.levels[2].misses, footprint_lines);
    // Level k sees level k-1's misses.
    for m in [&a, &b] {
        for k in 1..3 {
            assert_eq!(m.levels[k].accesses, m.levels[k - 1].misses);
        }
    }
    // DRAM: cold lines plus the written lines of C written back once.
    let c_lines = 4 * 32 * 8 / 64;
    assert_eq!(a.writebacks, c_lines);
    assert_eq!(a.dram_bytes, (footprint_lines + c_lines) * 64);
}

#[test]
fn streaming_copy_misses_once_per_line() {
    let n = 50_000u64;
    let p = program(
        "int n, double A[50000], double B[50000]",
        "for (i = 0; i < n; i++) B[i] = A[i];",
    );
    let m = run(&p, &Env::from_pairs(&[("n", n as i64)]), u64::MAX);
    assert_eq!(m.accesses, 2 * n);
    for l in &m.levels {
        assert_eq!(l.misses, 2 * n / 8, "{m:?}");
    }
    assert!((m.levels[0].miss_ratio - 0.125).abs() < 1e-9);
    assert_eq!(m.writebacks, n / 8);
    assert_eq!(m.dram_bytes, 3 * n / 8 * 64);
}

#[test]
fn sampling_scales_to_the_whole_nest() {
    let n = 50_000u64;
    let p = program(
        "int n, double A[50000], double B[50000]",
        "for (i = 0; i < n; i++) B[i] = A[i];",
    );
    let m = run(&p, &Env::from_pairs(&[("n", n as i64)]), 10_000);
    assert!(m.sampled);
    assert_eq!(m.accesses, 2 * n);
    assert_eq!(m.modelled_accesses, 10_000);
    let l1 = m.levels[0].misses as f64;
    assert!((l1 - (2 * n / 8) as f64).abs() / l1 < 0.01, "{m:?}");
    assert!(m.note.contains("sampled"));
}

#[test]
fn dataset_gemm_mini_and_timing() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../datasets/programs/gemm.c");
    let opts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    let parsed = ir::load(path, &opts).unwrap();
    let nests = ir::codegen::nests(&parsed.program);
    let env = Env::from_pairs(&[("ni", 20), ("nj", 25), ("nk", 30)]);
    let t = Instant::now();
    let m = model(
        &parsed.program,
        nests[0].region,
        nests[0].root,
        &env,
        &caches(),
        u64::MAX,
    )
    .unwrap();
    let elapsed = t.elapsed();
    assert_eq!(m.accesses, 2 * 20 * 25 + 4 * 20 * 25 * 30);
    // 20x25 + 20x30 + 30x25 doubles: all fits in L1; only cold misses.
    let lines = (20 * 25 * 8u64).div_ceil(64)
        + (20 * 30 * 8u64).div_ceil(64)
        + (30 * 25 * 8u64).div_ceil(64);
    assert_eq!(m.levels[0].misses, lines, "{m:?}");
    eprintln!("gemm MINI: {} accesses modelled in {elapsed:?}", m.accesses);
}

/// Timings in release: `cargo test --release -p profiling --test cachemodel -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing_gemm_small_and_medium() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../datasets/programs/gemm.c");
    for (flag, ni, nj, nk) in [
        ("-DSMALL_DATASET", 60, 70, 80),
        ("-DMEDIUM_DATASET", 200, 220, 240),
    ] {
        let opts = ir::FrontendOptions {
            flags: vec![flag.into()],
            ..Default::default()
        };
        let parsed = ir::load(path, &opts).unwrap();
        let nests = ir::codegen::nests(&parsed.program);
        let env = Env::from_pairs(&[("ni", ni), ("nj", nj), ("nk", nk)]);
        for limit in [u64::MAX, 5_000_000] {
            let t = Instant::now();
            let m = model(&parsed.program, 0, nests[0].root, &env, &caches(), limit).unwrap();
            eprintln!(
                "gemm {flag} limit {limit}: {} modelled of {} accesses in {:?}: {:?}",
                m.modelled_accesses,
                m.accesses,
                t.elapsed(),
                m.levels
                    .iter()
                    .map(|l| (l.name.as_str(), l.misses))
                    .collect::<Vec<_>>()
            );
        }
    }
}

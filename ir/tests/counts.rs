//! Interpreter and static counts on dataset nests (MINI sizes) and on small inline
//! nests: exact flop, load, store and compulsory-byte counts, triangles, decreasing
//! loops, conditions, limits and errors.

mod common;

use ir::codegen::{nests, Nest};
use ir::counts::nest_counts;
use ir::frontend::parse_preprocessed;
use ir::interp::{walk, Env, InterpError, NestInterp, Stop};
use ir::source::Preprocessed;
use ir::Program;

fn dataset(name: &str) -> (Program, Vec<Nest>) {
    let path = format!(
        "{}/../datasets/programs/{name}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let opts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    let parsed = ir::load(&path, &opts).unwrap();
    let n = nests(&parsed.program);
    (parsed.program, n)
}

/// A region in a function with fixed-size arrays; returns the program and the id of the
/// region's first top-level loop.
fn inline(body: &str) -> Program {
    let text = format!(
        "# 1 \"t.c\"\nvoid f(int n, int m, double A[100][100], double B[100][100], double x[100], float y[100], double s) {{\n  int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
    );
    let mut parsed = parse_preprocessed(Preprocessed::new("t.c", text), None).unwrap();
    ir::deps::annotate(&mut parsed.program);
    parsed.program
}

fn env(pairs: &[(&str, i64)]) -> Env {
    Env::from_pairs(pairs)
}

const NO_LIMIT: u64 = u64::MAX;

#[test]
fn gemm_counts_are_exact() {
    let (p, n) = dataset("gemm");
    assert_eq!(n.len(), 1);
    let (ni, nj, nk) = (20u64, 25u64, 30u64);
    let e = env(&[("ni", 20), ("nj", 25), ("nk", 30)]);
    let c = nest_counts(&p, n[0].region, n[0].root, &e, NO_LIMIT).unwrap();
    assert!(c.exact);
    assert_eq!(c.iterations, ni * nj + ni * nk * nj);
    // C *= beta: 1 mul; C += alpha * A * B: 2 muls + 1 add.
    assert_eq!(c.flops, ni * nj + ni * nk * nj * 3);
    // C*=beta reads and writes C; the update reads C, A, B and writes C.
    assert_eq!(c.loads, ni * nj + 3 * ni * nk * nj);
    assert_eq!(c.stores, ni * nj + ni * nk * nj);
    assert_eq!(c.bytes_read, 8 * (ni * nj + ni * nk + nk * nj));
    assert_eq!(c.bytes_written, 8 * ni * nj);
    assert_eq!(
        c.bytes_compulsory,
        8 * (ni * nj + ni * nk + nk * nj) + 8 * ni * nj
    );
    let oi = c.flops as f64 / c.bytes_compulsory as f64;
    assert!((c.operational_intensity - oi).abs() < 1e-12);
}

#[test]
fn gemm_limit_keeps_exact_totals_and_truncates_bytes() {
    let (p, n) = dataset("gemm");
    let e = env(&[("ni", 20), ("nj", 25), ("nk", 30)]);
    let full = nest_counts(&p, n[0].region, n[0].root, &e, NO_LIMIT).unwrap();
    let part = nest_counts(&p, n[0].region, n[0].root, &e, 1000).unwrap();
    assert!(!part.exact);
    assert_eq!(
        (part.iterations, part.flops, part.loads, part.stores),
        (full.iterations, full.flops, full.loads, full.stores)
    );
    assert!(part.bytes_compulsory > 0 && part.bytes_compulsory < full.bytes_compulsory);
}

#[test]
fn walk_reports_statements_and_accesses_in_order() {
    let (p, n) = dataset("gemm");
    let e = env(&[("ni", 2), ("nj", 3), ("nk", 4)]);
    let mut stmts = Vec::new();
    let mut acc = Vec::new();
    let stop = walk(
        &p,
        n[0].region,
        n[0].root,
        &e,
        NO_LIMIT,
        &mut |a| stmts.push(a.id),
        &mut |a| acc.push((a.array.to_string(), a.offset, a.write, a.elem_bytes)),
    )
    .unwrap();
    assert_eq!(stop, Stop::Done);
    assert_eq!(stmts.len(), 2 * 3 + 2 * 4 * 3);
    // i=0: C[0][0] *= beta reads then writes C[0][0].
    assert_eq!(acc[0], ("C".into(), 0, false, 8));
    assert_eq!(acc[1], ("C".into(), 0, true, 8));
    // First update (i=0, k=0, j=0): C read first (compound), then A, B, then C written.
    let first_update: Vec<_> = acc[6..10]
        .iter()
        .map(|a| (a.0.as_str(), a.1, a.2))
        .collect();
    assert_eq!(
        first_update,
        [
            ("C", 0, false),
            ("A", 0, false),
            ("B", 0, false),
            ("C", 0, true)
        ]
    );
    // Row-major offsets over the declared extents (MINI: C[20][25], B[30][25]).
    let e = env(&[("ni", 20), ("nj", 25), ("nk", 30)]);
    let mut last = Vec::new();
    walk(&p, 0, n[0].root, &e, NO_LIMIT, &mut |_| {}, &mut |a| {
        last.push((a.array.to_string(), a.offset))
    })
    .unwrap();
    let tail: Vec<_> = last[last.len() - 4..].to_vec();
    assert_eq!(
        tail,
        [
            ("C".into(), 19 * 25 + 24),
            ("A".into(), 19 * 30 + 29),
            ("B".into(), 29 * 25 + 24),
            ("C".into(), 19 * 25 + 24)
        ]
    );
}

#[test]
fn walk_stops_at_the_limit_on_statement_boundaries() {
    let (p, n) = dataset("gemm");
    let e = env(&[("ni", 20), ("nj", 25), ("nk", 30)]);
    let mut count = 0u64;
    let stop = walk(&p, 0, n[0].root, &e, 11, &mut |_| {}, &mut |_| count += 1).unwrap();
    assert_eq!(stop, Stop::Limit);
    // Statements of 2 accesses (C *= beta) fit 5 times in 11.
    assert_eq!(count, 10);
}

#[test]
fn jacobi_2d_one_time_step() {
    let (p, n) = dataset("jacobi-2d");
    assert_eq!(n.len(), 2);
    let nn = 30u64;
    let e = env(&[("n", 30), ("tsteps", 20), ("t", 0)]);
    for nest in &n {
        let c = nest_counts(&p, nest.region, nest.root, &e, NO_LIMIT).unwrap();
        let inner = (nn - 2) * (nn - 2);
        assert!(c.exact);
        assert_eq!(c.iterations, inner);
        // 0.2 * (4 adds): 5 flops per point.
        assert_eq!(c.flops, 5 * inner);
        assert_eq!(c.loads, 5 * inner);
        assert_eq!(c.stores, inner);
        // Reads: the whole array but its four corners; writes: the interior.
        assert_eq!(c.bytes_read, 8 * (nn * nn - 4));
        assert_eq!(c.bytes_written, 8 * inner);
    }
}

#[test]
fn syrk_counts_the_triangle_exactly() {
    let (p, n) = dataset("syrk");
    assert_eq!(n.len(), 1);
    let (nn, m) = (30u64, 20u64);
    let e = env(&[("n", 30), ("m", 20)]);
    let c = nest_counts(&p, n[0].region, n[0].root, &e, NO_LIMIT).unwrap();
    let tri = nn * (nn + 1) / 2;
    assert!(c.exact);
    assert_eq!(c.iterations, tri * (1 + m));
    assert_eq!(c.flops, tri * (1 + 3 * m));
    assert_eq!(c.stores, tri * (1 + m));
    // C: lower triangle read and written; A: read whole.
    assert_eq!(c.bytes_read, 8 * (tri + nn * m));
    assert_eq!(c.bytes_written, 8 * tri);
    // The fast execution counter agrees with the walk.
    let interp = NestInterp::new(&p, n[0].region, n[0].root, &e).unwrap();
    let ex = interp.executions(u64::MAX).unwrap().unwrap();
    let mut seen = vec![0u64; ex.len()];
    interp
        .walk(NO_LIMIT, &mut |i, _| seen[i] += 1, &mut |_| {})
        .unwrap();
    assert_eq!(ex, seen);
}

#[test]
fn lu_nest_under_control_loop_and_trisolv_row() {
    let (p, n) = dataset("lu");
    // Nests: the k reduction under (i, j), then the `j = i..n` loop under i.
    let upper = n.iter().find(|x| x.control.len() == 1).unwrap();
    let (nn, i) = (40u64, 10u64);
    let e = env(&[("n", 40), ("i", 10)]);
    let c = nest_counts(&p, upper.region, upper.root, &e, NO_LIMIT).unwrap();
    assert_eq!(c.iterations, (nn - i) * i);
    assert_eq!(c.flops, 2 * (nn - i) * i);

    let (p, n) = dataset("trisolv");
    assert_eq!(n.len(), 1);
    let e = env(&[("n", 40), ("i", 7)]);
    let c = nest_counts(&p, n[0].region, n[0].root, &e, NO_LIMIT).unwrap();
    assert_eq!((c.iterations, c.flops, c.loads, c.stores), (7, 14, 21, 7));
    // Reads x[i], L[i][0..7], x[0..7]; writes x[i].
    assert_eq!(c.bytes_read, 8 * (1 + 7 + 7));
    assert_eq!(c.bytes_written, 8);
}

#[test]
fn two_level_triangle_with_declared_temporaries() {
    let (p, n) = dataset("symm");
    let e = env(&[("m", 20), ("n", 30)]);
    let c = nest_counts(&p, n[0].region, n[0].root, &e, NO_LIMIT).unwrap();
    let (m, nn) = (20u64, 30u64);
    // Per (i, j): acc = A*B (1 flop), (m - 1) updates of 2 flops, C = b*C + a*acc (3).
    assert_eq!(c.iterations, m * nn * (1 + (m - 1) + 1));
    assert_eq!(c.flops, m * nn * (1 + 2 * (m - 1) + 3));
}

#[test]
fn decreasing_and_strided_loops() {
    let p = inline("for (i = n - 1; i >= 0; i -= 3) x[i] = x[i] * 2.0;");
    let e = env(&[("n", 10)]);
    let mut offs = Vec::new();
    walk(&p, 0, 0, &e, NO_LIMIT, &mut |_| {}, &mut |a| {
        if a.write {
            offs.push(a.offset)
        }
    })
    .unwrap();
    assert_eq!(offs, [9, 6, 3, 0]);

    let p = inline("for (i = 0; i <= n; i += 4) for (j = i; j > 0; j--) A[i][j] += 1.0f;");
    let c = nest_counts(&p, 0, 0, &env(&[("n", 9)]), NO_LIMIT).unwrap();
    // i = 0, 4, 8: inner trips 0, 4, 8.
    assert_eq!(c.iterations, 12);
    assert_eq!(c.flops, 12);
}

#[test]
fn min_bounds_casts_and_integer_conditions() {
    let p = inline(
        "for (i = 0; i < n; i++) for (j = 0; j < (i + 2 < n ? i + 2 : n); j++) if (j % 2 == 0 && (int)(j / 2) >= 0) x[j] = x[j] + 1.0;",
    );
    let n = 5i64;
    let c = nest_counts(&p, 0, 0, &env(&[("n", n)]), NO_LIMIT).unwrap();
    let mut expect = 0;
    for i in 0..n {
        for j in 0..(i + 2).min(n) {
            if j % 2 == 0 {
                expect += 1;
            }
        }
    }
    assert_eq!(c.iterations, expect);
    assert_eq!(c.loads, expect);
}

#[test]
fn conditions_on_data_execute_both_branches() {
    let p = inline(
        "for (i = 0; i < n; i++) if (x[i] > 0.0) A[i][0] = x[i] + 1.0; else A[i][1] = sqrt(x[i]);",
    );
    let c = nest_counts(&p, 0, 0, &env(&[("n", 10)]), NO_LIMIT).unwrap();
    assert_eq!(c.iterations, 20);
    // `+` in one branch, `sqrt` in the other.
    assert_eq!(c.flops, 20);
    assert_eq!(c.stores, 20);
}

#[test]
fn float_types_and_flop_conventions() {
    // float * float (1), float + double (1), unary minus (0), comparison (0),
    // compound on a float target (1); integer arithmetic counts 0.
    let p = inline(
        "for (i = 0; i < n; i++) { y[i] += -y[i] * 2.0f + (x[i] < 1.0 ? 1.0 : 0.0); A[i][i] = (double)(i * 2 + 1); }",
    );
    let c = nest_counts(&p, 0, 0, &env(&[("n", 4)]), NO_LIMIT).unwrap();
    assert_eq!(c.flops, 4 * 3);
    // y[i] once (compound target and value read merged), x[i].
    assert_eq!(c.loads, 4 * 2);
}

#[test]
fn errors_are_reported_not_panicked() {
    let (p, n) = dataset("gemm");
    let err = nest_counts(&p, 0, n[0].root, &env(&[("ni", 20), ("nj", 25)]), 100).unwrap_err();
    assert_eq!(err, InterpError::UnknownVariable("nk".into()));
    let err = nest_counts(
        &p,
        0,
        n[0].root,
        &env(&[("ni", 21), ("nj", 25), ("nk", 30)]),
        NO_LIMIT,
    )
    .unwrap_err();
    assert!(
        matches!(err, InterpError::OutOfBounds { ref array, .. } if array == "C"),
        "{err}"
    );
    assert!(matches!(
        nest_counts(&p, 3, 0, &Env::new(), 1),
        Err(InterpError::NoRegion(3))
    ));
    assert!(matches!(
        nest_counts(&p, 0, 99, &Env::new(), 1),
        Err(InterpError::NoLoop { .. })
    ));

    let p = inline("for (i = 0; i < n; i++) x[(int)(x[i])] = 1.0;");
    let err = nest_counts(&p, 0, 0, &env(&[("n", 4)]), NO_LIMIT).unwrap_err();
    assert!(matches!(err, InterpError::Unsupported(_)), "{err}");
    let p = inline("for (i = 0; i < n; i++) { k = i + 1; x[k] = 1.0; }");
    let err = nest_counts(&p, 0, 0, &env(&[("n", 4)]), NO_LIMIT).unwrap_err();
    assert!(matches!(err, InterpError::Unsupported(_)), "{err}");
    let p = inline("for (i = 0; i < s; i++) x[i] = 1.0;");
    let err = nest_counts(&p, 0, 0, &env(&[("n", 4)]), NO_LIMIT).unwrap_err();
    assert!(matches!(err, InterpError::NotInteger { .. }), "{err}");
    let p = inline("for (i = 0; i < n; i++) x[i / (n - 4)] = 1.0;");
    let err = nest_counts(&p, 0, 0, &env(&[("n", 4)]), NO_LIMIT).unwrap_err();
    assert!(matches!(err, InterpError::DivisionByZero(_)), "{err}");
}

/// The MINI sizes of a dataset program, from its `#if defined(MINI_DATASET)` block:
/// `#define NI 20` gives `ni = 20` (the kernels' parameters are the lowercase names).
fn mini_env(name: &str) -> Env {
    let path = format!(
        "{}/../datasets/programs/{name}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut e = Env::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("#if defined(MINI_DATASET)") {
            inside = true;
        } else if line.starts_with("#elif") || line.starts_with("#endif") {
            inside = false;
        } else if inside {
            let w: Vec<&str> = line.split_whitespace().collect();
            if let ["#define", k, v] = w.as_slice() {
                e = e.with(&k.to_lowercase(), v.parse().unwrap());
            }
        }
    }
    e
}

#[test]
fn every_dataset_nest_is_interpretable_at_mini_sizes() {
    let names = common::dataset_names();
    assert!(names.len() >= 25);
    let mut total = 0;
    for name in &names {
        let (p, n) = dataset(name);
        for nest in &n {
            // Control-loop variables at small values inside every range: all 2 (so that
            // `j < i` triangles are not empty), else rising or falling outward (an
            // interval `i < k < j` of two control loops, nussinov's).
            let region_loops = ir::program::loops(&p.regions[nest.region].body);
            let at = |values: &dyn Fn(usize) -> i64| {
                let mut e = mini_env(name);
                for (k, id) in nest.control.iter().enumerate() {
                    let l = region_loops.iter().find(|l| l.id == *id).unwrap();
                    e = e.with(&l.var, values(k));
                }
                nest_counts(&p, nest.region, nest.root, &e, 1 << 15)
                    .unwrap_or_else(|err| panic!("{name} {}: {err}", nest.name))
            };
            let spread = nest.control.len() as i64 * 3;
            let c = [
                at(&|_| 2),
                at(&|k| 2 + 3 * k as i64),
                at(&|k| 2 + spread - 3 * k as i64),
            ]
            .into_iter()
            .max_by_key(|c| c.iterations)
            .unwrap();
            assert!(c.iterations > 0, "{name} {}", nest.name);
            assert!(c.loads + c.stores > 0, "{name} {}", nest.name);
            total += 1;
        }
    }
    assert!(total >= 40, "{total} nests");
}

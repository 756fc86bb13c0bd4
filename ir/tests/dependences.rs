//! Dependence analysis on small hand-written nests: exact distances and directions
//! on uniform dependences, verdicts on the classic patterns.

use ir::deps::{analyze, DepKind, Dir};
use ir::frontend::parse_preprocessed;
use ir::source::Preprocessed;

fn load(body: &str) -> (ir::Program, ir::deps::Analysis) {
    let text = format!(
        "# 1 \"t.c\"\nvoid f(int n, double A[100][100], double B[100][100], double x[100], double s) {{\n  int i, j, k, t;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
    );
    let mut parsed = parse_preprocessed(Preprocessed::new("t.c", text), None).unwrap();
    ir::deps::annotate(&mut parsed.program);
    let a = analyze(&parsed.program, &parsed.program.regions[0]);
    (parsed.program, a)
}

fn verdicts(p: &ir::Program) -> Vec<&'static str> {
    ir::program::loops(&p.regions[0].body)
        .iter()
        .map(|l| l.kind.verdict())
        .collect()
}

#[test]
fn in_place_three_point_update_has_distance_one_both_ways() {
    let (p, a) = load("for (i = 1; i < n - 1; i++) x[i] = x[i - 1] + x[i + 1];");
    assert_eq!(verdicts(&p), ["sequential"]);
    let carried: Vec<_> = a.deps.iter().filter(|d| d.carrier().is_some()).collect();
    let flow = carried.iter().find(|d| d.kind == DepKind::Flow).unwrap();
    assert_eq!(flow.directions, [Dir::Lt]);
    assert_eq!(flow.distance, [Some(1)]);
    let anti = carried.iter().find(|d| d.kind == DepKind::Anti).unwrap();
    assert_eq!(anti.distance, [Some(1)]);
    assert_eq!(carried.len(), 2, "{carried:?}");
}

#[test]
fn decreasing_loops_count_distance_in_execution_order() {
    let (p, a) = load("for (i = n - 2; i >= 0; i--) x[i] = x[i + 1] * 0.5;");
    assert_eq!(verdicts(&p), ["sequential"]);
    let flow = a.deps.iter().find(|d| d.kind == DepKind::Flow).unwrap();
    assert_eq!(flow.directions, [Dir::Lt]);
    assert_eq!(flow.distance, [Some(1)]);
}

#[test]
fn a_wavefront_dependence_has_direction_lt_gt() {
    let (p, a) =
        load("for (i = 1; i < n; i++) for (j = 0; j < n - 1; j++) A[i][j] = A[i - 1][j + 1];");
    assert_eq!(verdicts(&p), ["sequential", "parallel"]);
    let flow = a.deps.iter().find(|d| d.kind == DepKind::Flow).unwrap();
    assert_eq!(flow.directions, [Dir::Lt, Dir::Gt]);
    assert_eq!(flow.distance, [Some(1), Some(-1)]);
}

#[test]
fn independent_halves_are_parallel() {
    // Writes to the even rows, reads from the odd ones: the GCD test separates them.
    let (p, _) =
        load("for (i = 0; i < 50; i++) for (j = 0; j < n; j++) A[2 * i][j] = A[2 * i + 1][j];");
    assert_eq!(verdicts(&p), ["parallel", "parallel"]);
    // Triangular bounds keep k below j: the k loop only accumulates.
    let (p, _) = load("for (i = 0; i < n; i++) for (j = 0; j < i; j++) for (k = 0; k < j; k++) A[i][j] -= A[i][k] * A[j][k];");
    assert_eq!(verdicts(&p), ["sequential", "sequential", "reduction"]);
}

#[test]
fn scalar_temporaries_are_privatized_and_scalar_sums_are_reductions() {
    let (p, _) = load(
        "for (i = 0; i < n; i++) { s = 0.0; for (j = 0; j < n; j++) s += A[i][j]; x[i] = s; }",
    );
    assert_eq!(verdicts(&p), ["parallel", "reduction"]);
    // A prefix sum reads the accumulator inside the loop: not a reduction.
    let (p, _) = load("for (i = 0; i < n; i++) { s += B[0][i]; x[i] = s; }");
    assert_eq!(verdicts(&p), ["sequential"]);
}

#[test]
fn conditions_bound_the_iteration_space() {
    let (p, _) =
        load("for (i = 0; i < n; i++) if (i > 0) { x[i] = 1.0; } else { x[n - 1] = 2.0; }");
    // The else branch writes x[n-1], which i = n-1 also writes: a real output dependence.
    assert_eq!(verdicts(&p), ["sequential"]);
    let (p, _) = load("for (i = 0; i < 50; i++) if (i < 10) x[i + 50] = x[i];");
    assert_eq!(verdicts(&p), ["parallel"]);
}

#[test]
fn non_affine_subscripts_are_conservative() {
    let (p, _) = load("for (i = 0; i < n; i++) x[i * i % 100] = x[i] + 1.0;");
    assert_eq!(verdicts(&p), ["sequential"]);
}

#[test]
fn strided_loops_are_parallel_when_their_steps_separate_the_accesses() {
    // A tile loop: iterations of `t` are 64 apart and each owns [t, t + 64).
    let (p, _) = load(
        "for (t = 0; t < n; t += 64) for (i = t; i < (t + 64 < n ? t + 64 : n); i++) x[i] = x[i] * s;",
    );
    assert_eq!(verdicts(&p), ["parallel", "parallel"]);
    // Unroll-and-jam by 2 with its remainder: rows i and i + 1 belong to iteration i.
    let (p, _) = load(
        "for (i = 0; i < n; i += 2) { if (i + 1 < n) { for (j = 0; j < n; j++) { A[i][j] = B[i][j]; A[i + 1][j] = B[i + 1][j]; } } else { for (k = i; k < n; k++) for (j = 0; j < n; j++) A[k][j] = B[k][j]; } }",
    );
    assert_eq!(verdicts(&p)[0], "parallel");
    // Even iterations write the odd element after them: never one another's.
    let (p, _) = load("for (i = 0; i < 98; i += 2) x[i + 1] = x[i] + 1.0;");
    assert_eq!(verdicts(&p), ["parallel"]);
    // ... but the element two ahead is the next iteration's.
    let (p, a) = load("for (i = 0; i < 96; i += 2) x[i + 2] = x[i] + 1.0;");
    assert_eq!(verdicts(&p), ["sequential"]);
    let flow = a.deps.iter().find(|d| d.kind == DepKind::Flow).unwrap();
    assert_eq!(flow.directions, [Dir::Lt]);
    // A step that overlaps its blocks stays sequential.
    let (p, _) =
        load("for (t = 0; t < 90; t += 4) for (i = t; i < t + 8; i++) x[i] = x[i] * x[i];");
    assert_eq!(verdicts(&p), ["sequential", "parallel"]);
}

fn private_arrays(p: &ir::Program) -> Vec<Vec<String>> {
    ir::program::loops(&p.regions[0].body)
        .iter()
        .map(|l| l.private_arrays.clone())
        .collect()
}

#[test]
fn a_work_row_written_before_it_is_read_in_every_iteration_is_private() {
    // doitgen's shape: x[] is a work row of each (i, j) iteration.
    let (p, _) = load(
        "for (i = 0; i < n; i++)
           for (j = 0; j < n; j++) {
             for (k = 0; k < n; k++) {
               x[k] = 0.0;
               for (t = 0; t < n; t++)
                 x[k] += A[i][t] * B[t][k];
             }
             for (k = 0; k < n; k++)
               A[i][k] = x[k] + A[i][k];
           }",
    );
    // j stays sequential: every j iteration updates the same row A[i][*].
    assert_eq!(
        verdicts(&p),
        [
            "parallel",
            "sequential",
            "parallel",
            "reduction",
            "parallel"
        ]
    );
    let x = vec!["x".to_string()];
    assert_eq!(private_arrays(&p), [x.clone(), x, vec![], vec![], vec![]]);
}

#[test]
fn a_row_read_before_it_is_written_or_written_in_part_is_not_private() {
    // Read before written: the values flow from the previous iteration.
    let (p, _) = load(
        "for (i = 0; i < n; i++) {
           for (k = 0; k < n; k++)
             A[i][k] = x[k];
           for (k = 0; k < n; k++)
             x[k] = A[i][k] * 2.0;
         }",
    );
    assert_eq!(verdicts(&p)[0], "sequential");
    // Written only where a condition holds: other elements keep older values.
    let (p, _) = load(
        "for (i = 0; i < n; i++) {
           for (k = 0; k < n; k++)
             if (k > i) x[k] = A[i][k];
           for (k = 0; k < n; k++)
             A[i][k] = x[k];
         }",
    );
    assert_eq!(verdicts(&p)[0], "sequential");
    // Read at other elements inside the loop that writes it: not yet written.
    let (p, _) = load(
        "for (i = 0; i < n; i++)
           for (k = 0; k < n; k++) {
             x[k] = A[i][k];
             for (t = 0; t < n; t++)
               B[i][t] += x[t];
           }",
    );
    assert_eq!(verdicts(&p)[0], "sequential");
}

#[test]
fn maxima_and_minima_by_fmax_or_a_comparison_are_reductions() {
    // A sweep's largest change, the smallest element: any order of the elements gives
    // the same result, so both loops may run in any order.
    for stmt in [
        "s = fmax(s, A[i][j] - B[i][j]);",
        "s = fmin(B[i][j], s);",
        "s = s > A[i][j] ? s : A[i][j];",
        "s = (A[i][j] < s) ? A[i][j] : s;",
        "s = (A[i][j] >= s) ? s : A[i][j];",
        "if (A[i][j] > s) s = A[i][j];",
        "if (s > A[i][j] - B[i][j]) s = A[i][j] - B[i][j];",
    ] {
        let (p, _) = load(&format!(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) {stmt}"
        ));
        assert_eq!(verdicts(&p), ["reduction", "reduction"], "{stmt}");
    }
    // A row's maximum: the rows apart, each row's elements reduced.
    let (p, _) =
        load("for (i = 0; i < n; i++) for (j = 0; j < n; j++) if (x[i] < A[i][j]) x[i] = A[i][j];");
    assert_eq!(verdicts(&p), ["parallel", "reduction"]);
    // Not a maximum: the value kept is not one of those compared, the accumulator is
    // read again inside the other argument, or two operators meet.
    for body in [
        "s = s > A[i][j] ? A[i][j] + 1.0 : s;",
        "s = fmax(s, s * A[i][j]);",
        "{ s = fmax(s, A[i][j]); s = s + B[i][j]; }",
        "if (A[i][j] > s) s = B[i][j];",
        "if (A[i][j] > s) s = A[i][j]; else s = 0.0;",
        "if (A[i][j] > s) { s = A[i][j]; x[0] = i; }",
    ] {
        let (p, _) = load(&format!(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) {body}"
        ));
        assert_eq!(verdicts(&p), ["sequential", "sequential"], "{body}");
    }
}

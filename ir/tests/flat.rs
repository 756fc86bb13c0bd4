//! Pointers read as arrays (`ir::flat`): which are, with what extents, and why the
//! others stay glue.

fn parse(name: &str, body: &str) -> ir::Parsed {
    let dir = std::env::temp_dir().join(format!("tune-flat-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.c"));
    std::fs::write(&file, body).unwrap();
    let parsed = ir::load(file.to_str().unwrap(), &ir::FrontendOptions::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    parsed
}

/// The reasons of the glue statements of the program.
fn glue(p: &ir::Parsed) -> Vec<String> {
    let mut out = Vec::new();
    for r in &p.program.regions {
        ir::program::walk_nodes(&r.body, &mut |n, _| {
            if let ir::program::Node::Opaque(o) = n {
                out.push(o.reason.clone());
            }
        });
    }
    out
}

fn dims(p: &ir::Parsed, name: &str) -> Vec<String> {
    let a = p
        .program
        .array(name)
        .unwrap_or_else(|| panic!("{name} is no array"));
    assert!(a.flat);
    a.dims.iter().map(ir::print::expr).collect()
}

#[test]
fn triangular_and_offset_subscripts_give_the_extents_the_loops_reach() {
    let p = parse(
        "tri",
        "void f(int n, int m, double *l, float x[])\n{\n  int i, j;\n\
         \x20 for (i = 0; i < n; i++)\n    for (j = 0; j <= i; j++)\n      l[i * n + j] = 1.0;\n\
         \x20 for (i = 2; i < m + 2; i++)\n    x[3 * i - 1] = 0.0f;\n}\n",
    );
    assert_eq!(dims(&p, "l"), ["n", "n"]);
    // 3i - 1 for i up to m + 1: 3m + 2, plus one.
    assert_eq!(dims(&p, "x"), ["3 * m + 3"]);
    assert!(glue(&p).is_empty(), "{:?}", glue(&p));
}

#[test]
fn pointers_that_cannot_be_read_as_arrays_stay_glue_and_say_why() {
    let p = parse(
        "refused",
        "void f(int n, int m, int k, double *a, double *b, double *c, double *d)\n{\n  int i, j;\n\
         \x20 for (i = 0; i < n; i++)\n    for (j = 0; j < m; j++)\n      a[i * n + j] = 0.0;\n\
         \x20 for (i = 0; i < n; i++) {\n    b[k] = 1.0;\n    k = k + 1;\n  }\n\
         \x20 c = d;\n  for (i = 0; i < n; i++)\n    c[i] = 2.0;\n\
         \x20 for (i = 1; i < n; i++)\n    d[i - 2] = 3.0;\n}\n",
    );
    let reasons = glue(&p);
    for want in [
        // j < m does not keep j within the row of n.
        "subscript of pointer 'a' (subscript 'j' is not provably within [0, n))",
        "subscript of pointer 'b' (its subscript uses 'k', which the function writes)",
        "subscript of pointer 'd' (its first subscript 'i - 2' may be negative)",
    ] {
        assert!(
            reasons.iter().any(|r| r == want),
            "{want} not in {reasons:#?}"
        );
    }
    // A pointer assigned between the loops is read as it stands at each nest.
    assert_eq!(dims(&p, "c"), ["n"]);
    assert!(["a", "b", "d"].iter().all(|n| p.program.array(n).is_none()));
}

#[test]
fn index_temporaries_are_read_through_their_definitions() {
    let p = parse(
        "temps",
        "void f(int n, double *a, const double *b)\n{\n  int i, j;\n\
         \x20 for (i = 1; i < n - 1; i++) {\n    int row = i * n;\n\
         \x20   for (j = 1; j < n - 1; j++) {\n      int c = row + j;\n\
         \x20     a[c] = b[c - n] + b[c + n] + b[c - 1] + b[c + 1];\n    }\n  }\n}\n",
    );
    assert!(glue(&p).is_empty(), "{:?}", glue(&p));
    assert_eq!(dims(&p, "a"), ["n - 1", "n"]);
    assert_eq!(dims(&p, "b"), ["n", "n"]);
    // Rows are independent: both loops are parallel.
    let nests = ir::codegen::nests(&p.program);
    assert_eq!(nests.len(), 1);
    let root = p.program.find_loop(nests[0].region, nests[0].root).unwrap();
    assert_eq!(root.kind, ir::program::LoopKind::Map);
}

#[test]
fn a_pointer_shaped_by_a_size_the_function_declares_is_saved_by_its_nests_only() {
    let p = parse(
        "local_size",
        "void f(double *a)\n{\n  int n = 100;\n  int i, j;\n\
         \x20 for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      a[i * n + j] = i + j;\n}\n",
    );
    assert_eq!(dims(&p, "a"), ["n", "n"]);
    // `n` does not exist at the region's entry: only the nest, after it, saves `a`.
    assert_saved_by_nest0_only(&p, "a");
}

/// Region 0's instrumented code saves `array` only at nest0's entry and exit.
fn assert_saved_by_nest0_only(p: &ir::Parsed, array: &str) {
    let nests = ir::codegen::nests(&p.program);
    let opts = ir::codegen::CodegenOptions {
        openmp: false,
        instrument: true,
        whole_nests: false,
    };
    let (_, glue) = ir::codegen::region_code(&p.program, &nests, 0, opts);
    let quoted = format!("\"{array}\"");
    let saves: Vec<&str> = glue.lines().filter(|l| l.contains(&quoted)).collect();
    assert!(
        saves.len() == 2 && saves.iter().all(|l| l.contains("\"nest0\"")),
        "{glue}"
    );
}

#[test]
fn restrict_pointers_need_no_overlap_check() {
    let p = parse(
        "restrict",
        "void f(int n, double *restrict a, const double *restrict b, double *c, const double *d)\n{\n  int i;\n\
         \x20 for (i = 0; i < n; i++)\n    a[i] = b[i];\n\
         \x20 for (i = 0; i < n; i++)\n    c[i] = d[i];\n}\n",
    );
    assert!(p.program.array("a").unwrap().restrict);
    assert!(!p.program.array("c").unwrap().restrict);
    let nests = ir::codegen::nests(&p.program);
    let root = |k: usize| p.program.find_loop(nests[k].region, nests[k].root).unwrap();
    let cond = |k: usize| ir::flat::disjoint_check(&p.program, root(k)).map(|c| c.cond);
    assert_eq!(cond(0), None);
    assert_eq!(
        cond(1).as_deref(),
        Some("((const char *)(c + (n)) <= (const char *)d || (const char *)(d + (n)) <= (const char *)c)")
    );
}

#[test]
fn an_index_assigned_once_before_its_uses_is_read_through_its_value() {
    // `int c;` then `c = x + y*nx;` first in the body of `x`: every subscript that uses
    // it comes later in the same iteration, so `in[c]` is `in[y][x]`.
    let p = parse(
        "assigned",
        "void f(int nx, int ny, float *in, float *out)\n{\n  int c, x, y;\n\
         \x20 for (y = 0; y < ny; y++)\n    for (x = 0; x < nx; x++) {\n      c = x + y * nx;\n\
         \x20     out[c] = 0.5f * in[c];\n    }\n}\n",
    );
    assert_eq!(dims(&p, "in"), ["ny", "nx"]);
    assert_eq!(dims(&p, "out"), ["ny", "nx"]);
    assert!(glue(&p).is_empty(), "{:?}", glue(&p));
    // One defined from another assigned before it in the same iteration.
    let p = parse(
        "chained",
        "void f(int nx, int ny, float *in, float *out)\n{\n  int c, e, x, y;\n\
         \x20 for (y = 0; y < ny; y++)\n    for (x = 0; x < nx - 1; x++) {\n      c = x + y * nx;\n\
         \x20     e = c + 1;\n      out[c] = in[c] + in[e];\n    }\n}\n",
    );
    assert_eq!(dims(&p, "in"), ["ny", "nx"]);
    assert!(glue(&p).is_empty(), "{:?}", glue(&p));
    // ... but not from one assigned in another loop.
    let p = parse(
        "elsewhere",
        "void f(int nx, int ny, float *in, float *out)\n{\n  int c, e, x, y;\n\
         \x20 for (x = 0; x < nx; x++)\n    c = x;\n\
         \x20 for (y = 0; y < ny; y++) {\n    e = c + y * nx;\n    out[e] = in[e];\n  }\n}\n",
    );
    assert!(
        glue(&p).iter().any(|r| r.contains("'in'")),
        "{:?}",
        glue(&p)
    );
    // A use before the assignment reads the previous iteration's value: refused.
    let p = parse(
        "before",
        "void f(int nx, int ny, float *in, float *out)\n{\n  int c = 0, x, y;\n\
         \x20 for (y = 0; y < ny; y++)\n    for (x = 0; x < nx; x++) {\n      out[x] = in[c];\n\
         \x20     c = x + y * nx;\n    }\n}\n",
    );
    assert!(
        glue(&p)
            .iter()
            .any(|r| r.contains("'in'") && r.contains("'c'")),
        "{:?}",
        glue(&p)
    );
    // Assigned under an if: refused too.
    let p = parse(
        "cond",
        "void f(int nx, int ny, float *in, float *out)\n{\n  int c, x, y;\n\
         \x20 for (y = 0; y < ny; y++)\n    for (x = 0; x < nx; x++) {\n      if (x > 0)\n        c = x + y * nx;\n\
         \x20     out[x] = in[c];\n    }\n}\n",
    );
    assert!(
        glue(&p).iter().any(|r| r.contains("'in'")),
        "{:?}",
        glue(&p)
    );
}

#[test]
fn a_boundary_clamped_by_a_choice_is_a_subscript_of_two_branches() {
    // hotspot-style: `w = (x == 0) ? c : c - 1` reads the left neighbour but at the
    // left edge. Each branch is proved within its dimension where its condition says
    // it is taken: `x - 1` only where `x != 0`, so `x >= 1`; `x + 1` only where
    // `x != nx - 1`.
    let p = parse(
        "clamp",
        "void f(int nx, int ny, float *in, float *out)\n{\n  int c, w, e, x, y;\n\
         \x20 for (y = 0; y < ny; y++)\n    for (x = 0; x < nx; x++) {\n      c = x + y * nx;\n\
         \x20     w = (x == 0) ? c : c - 1;\n      e = (x == nx - 1) ? c : c + 1;\n\
         \x20     out[c] = in[w] + in[c] + in[e];\n    }\n}\n",
    );
    assert_eq!(dims(&p, "in"), ["ny", "nx"]);
    assert!(glue(&p).is_empty(), "{:?}", glue(&p));
    let mut reads = Vec::new();
    ir::program::walk_nodes(&p.program.regions[0].body, &mut |n, _| {
        if let ir::program::Node::Assign(a) = n {
            if matches!(a.target, ir::program::Expr::Access { .. }) {
                reads.push(ir::print::expr(&a.value));
            }
        }
    });
    assert_eq!(
        reads,
        ["in[y][x == 0 ? x : x - 1] + in[y][x] + in[y][x == nx - 1 ? x : x + 1]"]
    );
    // A choice whose other branch may step outside: `x - 1` where only `x != 5` is known.
    let p = parse(
        "unclamped",
        "void f(int nx, int ny, float *in, float *out)\n{\n  int c, w, x, y;\n\
         \x20 for (y = 0; y < ny; y++)\n    for (x = 0; x < nx; x++) {\n      c = x + y * nx;\n\
         \x20     w = (x == 5) ? c : c - 1;\n      out[c] = in[w];\n    }\n}\n",
    );
    assert!(
        glue(&p)
            .iter()
            .any(|r| r.contains("'in'") && r.contains("x - 1")),
        "{:?}",
        glue(&p)
    );
}

#[test]
fn a_column_at_the_start_of_each_row_is_inside_rows_of_at_least_one_element() {
    // `u[y * nx]` is column 0 of row y: inside a row of `nx` elements, a row's length
    // being at least 1, beside the interior `u[y * nx + x]`.
    let p = parse(
        "edge",
        "void f(int nx, int ny, double *u)\n{\n  int x, y;\n\
         \x20 for (y = 0; y < ny; y++)\n    u[y * nx] = 1.0;\n\
         \x20 for (y = 1; y < ny - 1; y++)\n    for (x = 1; x < nx - 1; x++)\n      u[y * nx + x] = 2.0;\n}\n",
    );
    assert_eq!(dims(&p, "u"), ["ny", "nx"]);
    assert!(glue(&p).is_empty(), "{:?}", glue(&p));
}

const ROWS: &str = "void adjust(float *delta, int nd, float *ly, int nl, float **w, float **oldw)\n{\n  int j, k;\n  float d;\n\
  for (j = 1; j <= nd; j++)\n    for (k = 0; k <= nl; k++) {\n      d = 0.3f * delta[j] * ly[k] + 0.3f * oldw[k][j];\n\
      w[k][j] += d;\n      oldw[k][j] = d;\n    }\n}\n";

#[test]
fn pointers_to_rows_are_arrays_of_the_rows_the_loops_reach() {
    let p = parse("rows", ROWS);
    assert!(glue(&p).is_empty(), "{:?}", glue(&p));
    for name in ["w", "oldw"] {
        let a = p.program.array(name).unwrap();
        assert!(a.rows && !a.flat);
        let d: Vec<String> = a.dims.iter().map(ir::print::expr).collect();
        assert_eq!(d, ["nl + 1", "nd + 1"]);
    }
    assert_eq!(dims(&p, "delta"), ["nd + 1"]);
    // The loops walk columns; with `d` private to an iteration they may be
    // interchanged (rows then walked with unit stride).
    let root = p.program.regions[0]
        .body
        .iter()
        .find_map(|n| match n {
            ir::program::Node::Loop(l) => Some(l.id),
            _ => None,
        })
        .unwrap();
    let t = ir::transform::apply(
        &p.program,
        0,
        root,
        &ir::transform::Recipe {
            steps: vec![ir::transform::Step::Interchange {
                at: 0,
                order: vec![1, 0],
            }],
        },
    );
    let t = t.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.root.var, "k");
}

#[test]
fn indices_read_from_memory_sizes_set_once_and_a_misfit_statement_alone_as_glue() {
    // Rodinia's srad, reduced: sizes assigned once at the top, index arrays with their
    // boundary rows, one index temporary assigned alike in two sweeps, a neighbour
    // read through an index array, and one loop over all Nr*Nc elements at once.
    let p = parse(
        "srad",
        "void f(int rows, int cols, float *image, float *d, int *iN)\n{\n  int i, j, k, Nr, Nc, Ne;\n\
         \x20 Nr = rows;\n  Nc = cols;\n  Ne = Nr * Nc;\n\
         \x20 for (i = 0; i < Nr; i++)\n    iN[i] = i - 1;\n  iN[0] = 0;\n\
         \x20 for (i = 0; i < Ne; i++)\n    image[i] = image[i] * 2.0f;\n\
         \x20 for (j = 0; j < Nc; j++)\n    for (i = 0; i < Nr; i++) {\n      k = i + Nr * j;\n      d[k] = image[iN[i] + Nr * j] - image[k];\n    }\n\
         \x20 for (j = 0; j < Nc; j++)\n    for (i = 0; i < Nr; i++) {\n      k = i + Nr * j;\n      image[k] = image[k] + d[k];\n    }\n}\n",
    );
    assert_eq!(dims(&p, "image"), ["Nc", "Nr"]);
    assert_eq!(dims(&p, "d"), ["Nc", "Nr"]);
    // iN[0] beside iN[i] for i < Nr: an extent of Nr (sizes are at least 1).
    assert_eq!(dims(&p, "iN"), ["Nr"]);
    // The loop over every element does not fit the rows of Nr: that statement alone is
    // glue.
    assert_eq!(
        glue(&p),
        ["subscript of pointer 'image' (subscript 'i' is not provably within [0, Nr))"]
    );
    // The neighbour through the index array is an access of the array like any other.
    let printed: String = p
        .program
        .regions
        .iter()
        .map(ir::print::region_to_c)
        .collect();
    assert!(printed.contains("image[j][iN[i]]"), "{printed}");
}

#[test]
fn a_pointer_the_region_allocates_or_frees_is_saved_by_its_nests_only() {
    // Global pointers allocated and freed in main around the loops, and a loop counter
    // of a type named by a header (`size_t`).
    let p = parse(
        "moved",
        "#include <stdlib.h>\nint n;\ndouble *a;\n\
         int main(int argc, char **argv)\n{\n  n = atoi(argv[1]);\n  a = malloc(sizeof(double) * n * n);\n\
         \x20 for (size_t i = 0; i < n; i++)\n    for (size_t j = 0; j < n; j++)\n      a[i * n + j] = i + j;\n\
         \x20 free(a);\n  return 0;\n}\n",
    );
    assert_eq!(dims(&p, "a"), ["n", "n"]);
    let nests = ir::codegen::nests(&p.program);
    assert_eq!(nests.len(), 1, "{:?}", glue(&p));
    let l = ir::program::loops(&p.program.regions[0].body)[0].clone();
    assert_eq!(l.var_dtype, ir::program::DType::U64);
    // At main's entry `a` points nowhere yet, at its exit to freed memory.
    assert_saved_by_nest0_only(&p, "a");
}

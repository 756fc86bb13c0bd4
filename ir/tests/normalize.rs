//! The normal form of a nest: every spelling of one computation's loop order lands on
//! one order, the order that minimizes strides, as far as the dependences allow.

use ir::codegen::nests;
use ir::normalize::normalize;
use ir::transform::Step;

fn load_text(text: &str) -> ir::Program {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.c");
    std::fs::write(&path, text).unwrap();
    ir::load(&path.display().to_string(), &Default::default())
        .unwrap()
        .program
}

/// Loop variables of the normal form of the program's first nest, in preorder.
fn normal_vars(text: &str) -> (Vec<String>, Vec<Step>) {
    let p = load_text(text);
    let n = &nests(&p)[0];
    let out = normalize(&p, n.region, n.root).expect("the nest is there");
    let mut vars = vec![out.root.var.clone()];
    vars.extend(
        ir::program::loops(&out.root.body)
            .iter()
            .map(|l| l.var.clone()),
    );
    (vars, out.recipe.steps)
}

/// Every order of three loops i, j, k.
const ORDERS: [[&str; 3]; 6] = [
    ["i", "j", "k"],
    ["i", "k", "j"],
    ["j", "i", "k"],
    ["j", "k", "i"],
    ["k", "i", "j"],
    ["k", "j", "i"],
];

fn product(order: [&str; 3]) -> String {
    let bound = |v: &str| match v {
        "i" => 30,
        "j" => 20,
        _ => 10,
    };
    let mut s =
        String::from("double C[30][20], A[30][10], B[10][20];\nvoid mm(void) {\n#pragma scop\n");
    for v in order {
        s += &format!("for (int {v} = 0; {v} < {}; {v}++)\n", bound(v));
    }
    s += "C[i][j] += A[i][k] * B[k][j];\n#pragma endscop\n}\n";
    s
}

#[test]
fn every_order_of_a_matrix_product_becomes_i_k_j() {
    for order in ORDERS {
        let (vars, steps) = normal_vars(&product(order));
        assert_eq!(vars, ["i", "k", "j"], "from {order:?}");
        // Already in normal form: nothing to do.
        assert_eq!(steps.is_empty(), order == ["i", "k", "j"], "from {order:?}");
    }
}

#[test]
fn a_column_walk_turns_to_rows_where_legal_and_stays_where_not() {
    // Independent points: j innermost (unit stride) after the interchange.
    let free = "double A[40][50];\nvoid f(void) {\n#pragma scop\n\
        for (int j = 0; j < 50; j++)\n for (int i = 0; i < 40; i++)\n A[i][j] = A[i][j] * 2.0;\n\
        #pragma endscop\n}\n";
    assert_eq!(normal_vars(free).0, ["i", "j"]);
    // A[i][j] reads A[i-1][j+1], which the j-outer order writes later: direction
    // (<, >) in (j, i) would become (>, <). The band keeps its order (A[i-1][j] makes
    // the i loop sequential too, so the nest holds both).
    let tied = "double A[40][50];\nvoid f(void) {\n#pragma scop\n\
        for (int j = 0; j < 49; j++)\n for (int i = 1; i < 40; i++)\n A[i][j] = A[i-1][j+1] + A[i-1][j];\n\
        #pragma endscop\n}\n";
    let (vars, steps) = normal_vars(tied);
    assert_eq!(vars, ["j", "i"]);
    assert!(steps.is_empty());
}

#[test]
fn a_loop_bounded_by_another_stays_inside_it() {
    // Stride order wants j outside (it moves the rows), but j runs to i.
    let tri = "double A[40][40], B[40][40];\nvoid f(void) {\n#pragma scop\n\
        for (int i = 0; i < 40; i++)\n for (int j = 0; j <= i; j++)\n B[j][i] = A[j][i];\n\
        #pragma endscop\n}\n";
    assert_eq!(normal_vars(tri).0, ["i", "j"]);
}

#[test]
fn statements_that_do_not_depend_on_each_other_get_loops_of_their_own() {
    // The j loop holds two independent statements: fission gives each its own loop,
    // and the transposed write's band would turn if the root allowed it (it is the
    // nest's one root, which is never split).
    let two = "double A[40][40], B[40][40], C[40][40];\nvoid f(void) {\n#pragma scop\n\
        for (int i = 0; i < 40; i++)\n for (int j = 0; j < 40; j++) {\n A[i][j] = C[i][j] + 1.0;\n B[i][j] = C[i][j] * 2.0;\n }\n\
        #pragma endscop\n}\n";
    let (vars, steps) = normal_vars(two);
    assert_eq!(vars, ["i", "j", "j"]);
    assert_eq!(steps, [Step::Fission { at: 1 }]);
    // A scalar carried from one statement to the next ties them: no fission.
    let tied = "double A[40][40], C[40][40];\nvoid f(void) {\n#pragma scop\n\
        for (int i = 0; i < 40; i++) {\n double s = 0.0;\n for (int j = 0; j < 40; j++)\n s += C[i][j];\n A[i][0] = s;\n }\n\
        #pragma endscop\n}\n";
    let (vars, steps) = normal_vars(tied);
    assert_eq!(vars, ["i", "j"]);
    assert!(steps.is_empty());
}

#[test]
fn every_order_of_a_3d_stencil_becomes_i_j_k() {
    // i and j both move every access through a subscript that is not the last (cost 4
    // each, all accesses): the larger stride (i, the first subscript) goes outside.
    for order in ORDERS {
        let mut s =
            String::from("double A[20][20][20], B[20][20][20];\nvoid f(void) {\n#pragma scop\n");
        for v in order {
            s += &format!("for (int {v} = 1; {v} < 19; {v}++)\n");
        }
        s += "B[i][j][k] = 0.125 * (A[i+1][j][k] - 2.0 * A[i][j][k] + A[i-1][j][k]) \
              + 0.125 * (A[i][j+1][k] - 2.0 * A[i][j][k] + A[i][j-1][k]) \
              + 0.125 * (A[i][j][k+1] - 2.0 * A[i][j][k] + A[i][j][k-1]) + A[i][j][k];\n\
              #pragma endscop\n}\n";
        let (vars, steps) = normal_vars(&s);
        assert_eq!(vars, ["i", "j", "k"], "from {order:?}");
        assert_eq!(steps.is_empty(), order == ["i", "j", "k"], "from {order:?}");
    }
}

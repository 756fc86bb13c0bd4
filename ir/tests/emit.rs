//! The tuned file: what no recipe changed stays the user's text, and a changed nest
//! keeps the user's macro names.

use ir::transform::{Recipe, Step};

fn fixture(name: &str) -> String {
    format!("{}/tests/emit/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_tiled_nest_keeps_the_users_macro_names_and_the_other_nest_its_text() {
    let file = fixture("macros.c");
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed = ir::load(&file, &ir::FrontendOptions::default()).unwrap();
    let program = &parsed.program;
    let nests = ir::codegen::nests(program);
    let second = &nests[1];
    let recipe = Recipe {
        steps: vec![Step::Tile {
            at: 0,
            sizes: vec![8, 8],
            inner: vec![],
        }],
    };
    let (tuned, _) =
        ir::emit::apply_recipes(program, &[(second.region, second.root, recipe)]).unwrap();
    let out =
        ir::emit::tuned_source(&text, &tuned, program, &[(second.region, second.root)]).unwrap();
    // Everything up to the changed nest is the user's, byte for byte.
    let head = text.split("  // The nest the test tiles.\n").next().unwrap();
    assert!(out.starts_with(head), "{out}");
    assert!(out.ends_with("#pragma endscop\n}\n"), "{out}");
    let nest = &out[head.len()..];
    // Bounds and subscripts by name; the literal 40 the user wrote as a number stays one.
    for want in ["N - 1", "M", "STEP", "j - STEP", "+ 40"] {
        assert!(nest.contains(want), "{want} missing in:\n{nest}");
    }
    assert!(!nest.contains("< 40") && !nest.contains(" 3;"), "{nest}");
}

//! Laws of the IR, checked on every dataset program: JSON round trip, print ∘ parse is
//! the identity, the verifier accepts what the frontend produces, and no mutation of
//! the input makes the frontend panic.

use ir::frontend::parse_preprocessed;
use ir::program::{for_each_loop_mut, Node, Pos, Program};
use ir::source::{preprocess, Preprocessed};
use std::path::PathBuf;

fn programs() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../datasets/programs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    v.sort();
    assert!(v.len() >= 24);
    v
}

fn pp(path: &std::path::Path) -> Preprocessed {
    preprocess(
        "cc",
        &path.display().to_string(),
        &["-DMINI_DATASET".to_string()],
    )
    .unwrap()
}

/// Positions and numbering differ between a source and its reprint; the rest must not.
fn normalized(body: &[Node]) -> Vec<Node> {
    fn strip(nodes: &mut [Node]) {
        for n in nodes {
            match n {
                Node::Loop(l) => {
                    l.pos = Pos::default();
                    l.end = Pos::default();
                    strip(&mut l.body);
                }
                Node::If(i) => {
                    i.pos = Pos::default();
                    strip(&mut i.then_body);
                    strip(&mut i.else_body);
                }
                Node::Assign(a) => a.pos = Pos::default(),
                Node::Decl(d) => d.pos = Pos::default(),
                Node::Block(b) => strip(b),
                Node::Opaque(o) => o.pos = Pos::default(),
            }
        }
    }
    let mut b = body.to_vec();
    strip(&mut b);
    for_each_loop_mut(&mut b, &mut |l| l.kind = ir::LoopKind::Loop);
    b
}

#[test]
fn json_round_trip() {
    for p in programs() {
        let mut parsed = parse_preprocessed(pp(&p), None).unwrap();
        ir::deps::annotate(&mut parsed.program);
        let back = Program::from_json(&parsed.program.to_json()).unwrap();
        assert_eq!(back, parsed.program, "{}", p.display());
    }
}

#[test]
fn printing_and_parsing_again_gives_the_same_ir() {
    for p in programs() {
        let source = pp(&p);
        let parsed = parse_preprocessed(source.clone(), None).unwrap();
        // Put the printed regions back in place of the originals and parse again.
        let mut text = String::new();
        let mut at = 0;
        for (r, rt) in parsed.program.regions.iter().zip(&parsed.regions) {
            text.push_str(&source.text[at..rt.replace.start]);
            text.push_str("#pragma scop\n");
            ir::print::body(&r.body, &ir::print::PrintOptions::default(), 1, &mut text);
            text.push_str("#pragma endscop\n");
            at = rt.replace.end;
        }
        text.push_str(&source.text[at..]);
        let again = parse_preprocessed(Preprocessed::new(&source.file, text), None).unwrap();
        for (a, b) in parsed.program.regions.iter().zip(&again.program.regions) {
            assert_eq!(normalized(&a.body), normalized(&b.body), "{}", p.display());
        }
    }
}

#[test]
fn the_verifier_accepts_every_dataset_program() {
    for p in programs() {
        let mut parsed = parse_preprocessed(pp(&p), None).unwrap();
        ir::deps::annotate(&mut parsed.program);
        let problems = ir::verify::verify(&parsed.program);
        assert!(problems.is_empty(), "{}: {problems:?}", p.display());
    }
}

#[test]
fn the_verifier_catches_a_wrong_parallel_mark() {
    let path = programs()
        .into_iter()
        .find(|p| p.ends_with("seidel-2d.c"))
        .unwrap();
    let mut parsed = parse_preprocessed(pp(&path), None).unwrap();
    ir::deps::annotate(&mut parsed.program);
    // Planting an illegal verdict: seidel's sweeps carry dependences in every loop.
    for_each_loop_mut(&mut parsed.program.regions[0].body, &mut |l| {
        l.kind = ir::LoopKind::Map
    });
    let problems = ir::verify::verify(&parsed.program);
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("marked parallel but analysis proves only sequential"));
}

/// The problems the verifier finds in `region` over `double T[20][20]`.
fn verify_region(region: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.c");
    let text = format!(
        "#define N 20\ndouble T[N][N];\nint main(void) {{\n#pragma scop\n{region}\n#pragma endscop\n  return 0;\n}}\n"
    );
    std::fs::write(&path, text).unwrap();
    let pre = preprocess("cc", &path.display().to_string(), &[]).unwrap();
    let mut parsed = parse_preprocessed(pre, None).unwrap();
    ir::deps::annotate(&mut parsed.program);
    ir::verify::verify(&parsed.program)
}

#[test]
fn the_verifier_checks_subscripts_only_where_the_inner_loops_run() {
    // Interval programs read row i + 1 under `j > i`: with i = N - 1 the j loop is
    // empty, so T[i + 1] never reaches T[N].
    let interval = "for (int i = N - 1; i >= 0; i--)\n  for (int j = i + 1; j < N; j++)\n    T[i][j] = T[i + 1][j] + T[i][j - 1];";
    assert!(
        verify_region(interval).is_empty(),
        "{:?}",
        verify_region(interval)
    );
    let up = "for (int i = 0; i < N; i++)\n  for (int j = 0; j < N - 1 - i; j++)\n    T[i + 1][j] = T[i][j];";
    assert!(verify_region(up).is_empty(), "{:?}", verify_region(up));
    // A loop that never runs reads nothing.
    let never = "for (int i = 0; i < N; i++)\n  for (int j = N; j < N; j++)\n    T[i][j] = 0.0;";
    assert!(
        verify_region(never).is_empty(),
        "{:?}",
        verify_region(never)
    );
    // Where the inner loop runs at i = N - 1, row N is still caught.
    let over = "for (int i = 0; i < N; i++)\n  for (int j = i; j < N; j++)\n    T[i + 1][j] = 0.0;";
    let problems = verify_region(over);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("subscript 0 of 'T' ranges over [1, 20] outside [0, 19]"));
}

/// A small deterministic generator (xorshift) so the test needs no extra crates.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn mutated_sources_never_panic_the_frontend() {
    const PIECES: &[&str] = &[
        "for",
        "(",
        ")",
        "{",
        "}",
        ";",
        "[",
        "]",
        "*",
        "&",
        "goto x;",
        "while (1)",
        "i++",
        "=",
        "+=",
        "?",
        ":",
        "1.5f",
        "0x1p3",
        "'a'",
        "\"s\"",
        "sizeof(int)",
        "->",
        ".",
        ",",
        "#pragma scop\n",
        "#pragma endscop\n",
        "int",
        "double",
        "(double)",
        "-",
        "!",
        "%",
    ];
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut checked = 0;
    for p in programs() {
        let source = pp(&p);
        let start = source.text.find("#pragma scop").unwrap();
        let end = source.text.find("#pragma endscop").unwrap() + 16;
        for _ in 0..40 {
            let mut text = source.text.clone();
            for _ in 0..(1 + rng.next() % 3) {
                let at = start + (rng.next() as usize) % (end - start);
                let at = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap();
                match rng.next() % 3 {
                    0 => text.insert_str(at, PIECES[(rng.next() as usize) % PIECES.len()]),
                    1 => {
                        let len = 1 + (rng.next() as usize) % 6;
                        let stop = (at + len..text.len())
                            .find(|i| text.is_char_boundary(*i))
                            .unwrap_or(text.len());
                        text.replace_range(at..stop, "");
                    }
                    _ => text.truncate(at),
                }
            }
            let result = std::panic::catch_unwind(|| {
                let pp = Preprocessed::new(&source.file, text.clone());
                if let Ok(mut parsed) = parse_preprocessed(pp, None) {
                    ir::deps::annotate(&mut parsed.program);
                    let _ = ir::codegen::generate(
                        &parsed,
                        ir::codegen::CodegenOptions {
                            openmp: true,
                            instrument: true,
                            whole_nests: false,
                        },
                    );
                }
            });
            assert!(result.is_ok(), "{} panicked on a mutation", p.display());
            checked += 1;
        }
    }
    assert!(checked >= 24 * 40);
}

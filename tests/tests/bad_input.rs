//! Bad input: one clear line on stderr, naming the file and position, and exit code 2.

use tune_e2e::{strings, tune};

fn run_source(name: &str, source: &str, extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), source).unwrap();
    let mut args = strings(&["run", name]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = tune(&args, dir.path());
    (out.code, out.stderr_text())
}

fn assert_one_line(stderr: &str, expected: &str) {
    assert_eq!(
        stderr.lines().count(),
        1,
        "expected one line, got:\n{stderr}"
    );
    assert_eq!(stderr.trim_end(), expected);
}

const GOTO: &str = "int main(void) {
  double a[10];
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    a[i] = i;
    if (i > 5) goto out;
  }
#pragma endscop
out:
  return 0;
}
";

#[test]
fn goto_is_refused_with_its_position() {
    let (code, err) = run_source("g.c", GOTO, &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "tune: g.c:7:16: unsupported goto");
}

#[test]
fn pointer_arithmetic_is_refused() {
    let src = "void k(int n, double *x) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    *(x + i) = 1.0;\n#pragma endscop\n}\nint main(void) { double x[4]; k(4, x); return 0; }\n";
    let (code, err) = run_source("p.c", src, &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "tune: p.c:5:5: unsupported pointer dereference");
    let src = "double a[8], b[8];\nint main(void) {\n  int i;\n#pragma scop\n  for (i = 0; i < 4; i++)\n    b[i] = *(a + i);\n#pragma endscop\n  return 0;\n}\n";
    let (code, err) = run_source("q.c", src, &[]);
    assert_eq!(code, 2);
    assert!(err.starts_with("tune: q.c:6:12: unsupported "), "{err}");
}

#[test]
fn while_is_refused() {
    let src = "int main(void) {\n  double a[10]; int i = 0;\n#pragma scop\n  while (i < 10) { a[i] = 0; i++; }\n#pragma endscop\n  return 0;\n}\n";
    let (code, err) = run_source("w.c", src, &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "tune: w.c:4:3: unsupported while loop");
}

#[test]
fn syntax_error_names_the_token() {
    let src = "int main(void) {\n  double a[10]; int i;\n#pragma scop\n  for (i = 0; i < 10; i++) a[i] = ;\n#pragma endscop\n  return 0;\n}\n";
    let (code, err) = run_source("s.c", src, &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "tune: s.c:4:35: syntax error: unexpected ';'");
}

#[test]
fn missing_file_missing_header_and_missing_region() {
    let dir = tempfile::tempdir().unwrap();
    let out = tune(&strings(&["run", "nosuch.c"]), dir.path());
    assert_eq!(out.code, 2);
    assert_one_line(&out.stderr_text(), "tune: nosuch.c: no such file");

    let (code, err) = run_source(
        "h.c",
        "#include \"nope.h\"\nint main(void) { return 0; }\n",
        &[],
    );
    assert_eq!(code, 2);
    assert_one_line(
        &err,
        "tune: h.c:1:10: fatal error: nope.h: No such file or directory",
    );

    let (code, err) = run_source("n.c", "int main(void) { return 0; }\n", &[]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("tune: n.c: no '#pragma scop' region found"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);

    let (code, err) = run_source(
        "f.c",
        "int main(void) { return 0; }\n",
        &["--function", "kernel"],
    );
    assert_eq!(code, 2);
    assert_one_line(&err, "tune: f.c: no function named 'kernel' is defined");
}

#[test]
fn calls_and_unknown_arguments_are_refused() {
    let src = "#include <stdio.h>\nint main(void) {\n  double a[10]; int i;\n#pragma scop\n  for (i = 0; i < 10; i++) a[i] = printf(\"x\");\n#pragma endscop\n  return 0;\n}\n";
    let (code, err) = run_source("c.c", src, &[]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("tune: c.c:5:35: unsupported call to 'printf'"),
        "{err}"
    );
    let (code, err) = run_source("c.c", src, &["notes.txt"]);
    assert_eq!(code, 2);
    assert_one_line(
        &err,
        "tune: unexpected argument 'notes.txt' (expected a .c file or a cc flag)",
    );
}

#[test]
fn counts_of_zero_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    // No program file at all: the options are refused before it is even looked for.
    for (flag, value) in [("--top-k", "0"), ("--repetitions", "0")] {
        let out = tune(&strings(&["apply", "absent.c", flag, value]), dir.path());
        assert_eq!(out.code, 2, "{flag}");
        let err = out.stderr_text();
        assert!(
            err.contains(&format!("invalid value '0' for '{flag}")),
            "{flag}: {err}"
        );
        assert!(!dir.path().join(".tunecache").exists());
    }
}

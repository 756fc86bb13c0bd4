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

/// Runs `source` through `tune run --json`: exit code, the summary's nest lines and
/// the program's standard output.
fn run_glue(name: &str, source: &str) -> (i32, Vec<u64>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), source).unwrap();
    let out = tune(&strings(&["run", "--json", name]), dir.path());
    let summary: serde_json::Value = out
        .stderr_text()
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("{}", out.stderr_text()));
    let lines = summary["nests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["line"].as_u64().unwrap())
        .collect();
    (out.code, lines, out.stdout)
}

#[test]
fn goto_pointers_while_and_calls_are_kept_as_written_around_the_nests() {
    // A construct the IR does not model is glue: the statement (and any loop holding
    // it) runs as written, the loop nests around it are still nests.
    let (code, nests, stdout) = run_glue("g.c", GOTO);
    assert_eq!((code, nests), (0, vec![]));
    assert!(stdout.is_empty());
    let src = "#include <stdio.h>\nvoid k(int n, double *x, double y[4]) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    *(x + i) = 1.0;\n  for (i = 0; i < 4; i++)\n    y[i] = 2.0 * i;\n#pragma endscop\n}\nint main(void) { double x[4], y[4]; k(4, x, y); printf(\"%g %g\\n\", x[3], y[3]); return 0; }\n";
    let (code, nests, stdout) = run_glue("p.c", src);
    assert_eq!((code, nests), (0, vec![7]));
    assert_eq!(stdout, b"1 6\n");
    let src = "#include <stdio.h>\nint main(void) {\n  double a[10]; int i = 0;\n#pragma scop\n  while (i < 10) { a[i] = 0; i++; }\n  printf(\"start\\n\");\n  for (i = 0; i < 10; i++)\n    a[i] = a[i] + i;\n#pragma endscop\n  printf(\"%g\\n\", a[9]);\n  return 0;\n}\n";
    let (code, nests, stdout) = run_glue("w.c", src);
    assert_eq!((code, nests), (0, vec![7]));
    assert_eq!(stdout, b"start\n9\n");
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
        err.starts_with("tune: n.c: no function of this file holds a for loop"),
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
fn a_call_in_a_loop_makes_it_glue_and_unknown_arguments_are_refused() {
    let src = "#include <stdio.h>\nint main(void) {\n  double a[10]; int i;\n#pragma scop\n  for (i = 0; i < 10; i++) a[i] = printf(\"x\");\n#pragma endscop\n  return 0;\n}\n";
    let (code, nests, stdout) = run_glue("c.c", src);
    assert_eq!((code, nests), (0, vec![]));
    assert_eq!(stdout, b"xxxxxxxxxx");
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

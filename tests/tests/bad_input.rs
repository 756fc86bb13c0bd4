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

/// Runs `tune ARGS` in an empty folder holding only `db.db` (an empty file) and `model/`
/// (an empty folder), and asserts that it is refused with exit code 2 and an error line
/// naming `flag` and `value`, before any work: nothing else appears in the folder.
fn refused_before_work(args: &[&str], flag: &str, value: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("db.db"), "").unwrap();
    std::fs::create_dir(dir.path().join("model")).unwrap();
    let out = tune(&strings(args), dir.path());
    let err = out.stderr_text();
    assert_eq!(out.code, 2, "{args:?}: {err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.contains(&format!("'{value}'")) && first.contains(flag),
        "{args:?}: {err}"
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["db.db", "model"], "{args:?}");
}

#[test]
fn counts_of_zero_are_refused_before_any_work() {
    // No program file at all: the options are refused before it is even looked for.
    for (flag, value) in [("--top-k", "0"), ("--repetitions", "0")] {
        refused_before_work(&["apply", "absent.c", flag, value], flag, value);
    }
    // Every count, number of seconds and rate of every command, alike.
    let cases: &[(&[&str], &str, &str)] = &[
        (&["apply", "absent.c"], "--timeout", "0"),
        (&["apply", "absent.c"], "--budget-s", "-1"),
        (&["run", "absent.c"], "--timeout", "0"),
        (&["profile", "absent.c"], "--repetitions", "0"),
        (&["profile", "absent.c"], "--max-repetitions", "0"),
        (&["profile", "absent.c"], "--versions", "0"),
        (&["profile", "absent.c"], "--adaptive", "0"),
        (&["search", "absent.c"], "--budget", "0"),
        (&["search", "absent.c"], "--jobs", "0"),
        (&["search", "absent.c"], "--time-limit", "-1"),
        (&["batch", "absent.c"], "--jobs", "0"),
        (&["batch", "absent.c"], "--top-k", "0"),
        (&["batch", "absent.c"], "--repetitions", "0"),
        (&["bench", "absent.c"], "--runs", "0"),
        (&["bench", "absent.c"], "--timeout", "0"),
        (&["db", "build", "-o", "new.db"], "--budget", "0"),
        (&["db", "build", "-o", "new.db"], "--jobs", "0"),
        (&["db", "synth", "-o", "synth"], "--count", "0"),
        (&["db", "eval", "--db", "db.db"], "--top-k", "0"),
        (&["db", "eval", "--db", "db.db"], "--epochs", "0"),
        (
            &["db", "eval", "--db", "db.db"],
            "--contrastive-weight",
            "-1",
        ),
        (&["db", "eval", "--db", "db.db"], "--anchor", "-0.5"),
        (
            &["model", "train", "--db", "db.db", "-o", "m"],
            "--anchor",
            "nan",
        ),
        (&["db", "transfer", "--db", "db.db"], "--repetitions", "0"),
        (
            &["model", "train", "--db", "db.db", "-o", "m"],
            "--epochs",
            "0",
        ),
        (&["model", "train", "--db", "db.db", "-o", "m"], "--lr", "0"),
    ];
    for (args, flag, value) in cases {
        let mut all = args.to_vec();
        all.extend([*flag, *value]);
        refused_before_work(&all, flag, value);
    }
}

#[test]
fn missing_files_are_refused_before_any_work() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["apply", "absent.c", "--db", "no.db"], "--db", "no.db"),
        (
            &["apply", "absent.c", "--model", "no-model"],
            "--model",
            "no-model",
        ),
        (&["batch", "absent.c", "--db", "no.db"], "--db", "no.db"),
        (
            &["batch", "absent.c", "--model", "no-model"],
            "--model",
            "no-model",
        ),
        (
            &["bench", "absent.c", "--tuned", "no-batch"],
            "--tuned",
            "no-batch",
        ),
        (&["db", "list", "--db", "no.db"], "--db", "no.db"),
        (&["db", "list", "no.db"], "DB", "no.db"),
        (
            &["db", "embed", "--db", "no.db", "--model", "model"],
            "--db",
            "no.db",
        ),
        (
            &["db", "embed", "--db", "db.db", "--model", "no-model"],
            "--model",
            "no-model",
        ),
        (&["db", "eval", "--db", "no.db"], "--db", "no.db"),
        (&["db", "transfer", "--db", "no.db"], "--db", "no.db"),
        (
            &["db", "build", "--suite", "no.json", "-o", "new.db"],
            "--suite",
            "no.json",
        ),
        (
            &["model", "eval", "--db", "no.db", "--model", "model"],
            "--db",
            "no.db",
        ),
        (
            &["model", "train", "--db", "no.db", "-o", "m"],
            "--db",
            "no.db",
        ),
    ];
    for (args, flag, value) in cases {
        refused_before_work(args, flag, value);
    }
    // `db merge` creates the database merged into, but the ones merged must exist.
    let dir = tempfile::tempdir().unwrap();
    let out = tune(
        &strings(&["db", "merge", "--db", "new.db", "no.db"]),
        dir.path(),
    );
    assert_eq!(out.code, 2);
    assert_one_line(&out.stderr_text(), "tune: no.db: no such file");
    assert!(!dir.path().join("new.db").exists());
}

/// `--db DB` names the database on every command that reads one; `db list` and `db
/// merge` still take it as their first argument, with the same result.
#[test]
fn the_database_is_db_on_every_command() {
    let commands: &[&[&str]] = &[
        &["apply"],
        &["batch"],
        &["db", "list"],
        &["db", "embed"],
        &["db", "eval"],
        &["db", "transfer"],
        &["db", "merge"],
        &["model", "train"],
        &["model", "eval"],
    ];
    let here = std::path::Path::new(".");
    for c in commands {
        let mut args = c.to_vec();
        args.push("--help");
        let help = String::from_utf8(tune(&strings(&args), here).stdout).unwrap();
        assert!(help.contains("--db <DB>"), "{c:?}: {help}");
    }
    for c in [
        &["apply"][..],
        &["batch"],
        &["db", "embed"],
        &["model", "eval"],
    ] {
        let mut args = c.to_vec();
        args.push("--help");
        let help = String::from_utf8(tune(&strings(&args), here).stdout).unwrap();
        assert!(help.contains("--model <DIR>"), "{c:?}: {help}");
    }

    let shipped = tune_e2e::workspace().join("models/default/tune.db");
    let shipped = shipped.to_str().unwrap();
    let list = |args: &[&str]| {
        let out = tune(&strings(args), here);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr_text());
        out.stdout
    };
    let by_flag = list(&["db", "list", "--db", shipped, "--json"]);
    for c in [&["batch"][..], &["bench"], &["db", "build"], &["apply"]] {
        let mut args = c.to_vec();
        args.push("--help");
        let help = String::from_utf8(tune(&strings(&args), here).stdout).unwrap();
        assert!(help.contains("-o, --output <"), "{c:?}: {help}");
    }
    assert_eq!(list(&["db", "list", shipped, "--json"]), by_flag);
    // Each row names its entry's best recipe (null where the nest kept its code): steps
    // with their loop roles, as the database stores them.
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&by_flag).unwrap();
    let symm = rows.iter().find(|r| r["program"] == "symm").unwrap();
    let steps = symm["best"]["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.iter().all(|s| s["role"].is_object()));
    assert!(steps.iter().any(|s| s["step"]["step"] == "parallelize"));
    assert!(rows
        .iter()
        .any(|r| r["best"].is_null() && r["recipes"] == 0));
    assert_eq!(
        list(&["db", "list", "--db", shipped, "--format", "json"]),
        by_flag
    );

    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    list(&["db", "merge", "--db", a, shipped]);
    list(&["db", "merge", b, shipped]);
    assert_eq!(list(&["db", "list", "--db", a, "--json"]), by_flag);
    assert_eq!(list(&["db", "list", "--db", b, "--json"]), by_flag);
}

/// A reader that stops early (`tune db list | head -1`) ends `tune` quietly: no panic
/// message about a failed print.
#[test]
fn closed_stdout_ends_quietly() {
    use std::process::{Command, Stdio};
    let db = tune_e2e::workspace().join("models/default/tune.db");
    let mut child = Command::new(tune_e2e::tune_bin())
        .args(["db", "list", "--db", db.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before `tune` has printed its table.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Either it finished writing into the pipe's buffer first (0) or the signal ended it.
    use std::os::unix::process::ExitStatusExt;
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{:?}",
        out.status
    );
}

//! The `tune` command line.

use clap::{CommandFactory, Parser, Subcommand};
use profiling::build::Toolchain;
use profiling::cc::CcArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tuner::run::{render, run_program, RunConfig};
use tuner::Error;

/// Autotuning harness for loop-nest C programs.
#[derive(Parser)]
#[command(name = "tune", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the program through the harness: find its loop nests and their verdicts,
    /// run it with the generated regions, Save the regions' and nests' data.
    ///
    /// Example: tune run gemm.c utilities/polybench.c -Iutilities -DSMALL_DATASET -lm
    Run(RunArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Tune the whole body of this function instead of the #pragma scop regions.
    #[arg(long, value_name = "F")]
    function: Option<String>,
    /// Print the summary as JSON (on stderr; stdout belongs to the program).
    #[arg(long)]
    json: bool,
    /// Output format: text or json.
    #[arg(long, value_name = "FMT", value_parser = ["text", "json"])]
    format: Option<String>,
    /// Print no summary (it is still written to .tunecache/<program>/run.json).
    #[arg(long)]
    quiet: bool,
    /// Add OpenMP pragmas on parallel loops and build with -fopenmp.
    #[arg(long)]
    openmp: bool,
    /// Invocation versions saved per nest (0: no Save, -1: all).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2,
        allow_negative_numbers = true
    )]
    save_versions: i64,
    /// Cache folder (default: $TUNE_CACHE or ./.tunecache).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Kill the program after this many seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// The program and cc flags: FILE.c [more.c] [-I..] [-D..] [-U..] [-std=..] [-l..];
    /// arguments for the program itself go after `--`.
    #[arg(
        required = true,
        allow_hyphen_values = true,
        trailing_var_arg = true,
        value_name = "FILE.c [cc flags]"
    )]
    cc: Vec<String>,
}

/// Moves `tune`'s own `--options` in front of the cc arguments (which may be mixed with
/// them, as in `tune run gemm.c -DX --function f`) and splits off program arguments
/// after `--`.
fn split_argv(argv: Vec<String>) -> (Vec<String>, Vec<String>) {
    if argv.len() < 3 {
        return (argv, Vec::new());
    }
    let cmd = Cli::command();
    let sub = cmd.find_subcommand(&argv[1]);
    let mut rest: Vec<String> = argv[2..].to_vec();
    let program_args = match rest.iter().position(|a| a == "--") {
        Some(i) => {
            let tail = rest.split_off(i);
            tail[1..].to_vec()
        }
        None => Vec::new(),
    };
    let mut opts = Vec::new();
    let mut cc = Vec::new();
    let mut it = rest.into_iter();
    while let Some(a) = it.next() {
        if a.starts_with("--") || a == "-h" || a == "-V" {
            let name = a
                .trim_start_matches('-')
                .split('=')
                .next()
                .unwrap_or("")
                .to_string();
            let takes_value = sub
                .and_then(|s| {
                    s.get_arguments()
                        .find(|x| x.get_long() == Some(name.as_str()))
                })
                .is_some_and(|x| x.get_action().takes_values());
            let inline = a.contains('=');
            opts.push(a);
            if takes_value && !inline {
                if let Some(v) = it.next() {
                    opts.push(v);
                }
            }
        } else {
            cc.push(a);
        }
    }
    let mut out = vec![argv[0].clone(), argv[1].clone()];
    out.extend(opts);
    if !cc.is_empty() {
        out.push("--".into());
        out.extend(cc);
    }
    (out, program_args)
}

fn main() -> ExitCode {
    let (argv, program_args) = split_argv(std::env::args().collect());
    let cli = Cli::parse_from(argv);
    let result = match cli.command {
        Command::Run(a) => cmd_run(a, program_args),
    };
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            let msg = e.to_string();
            // Errors about the input start with file:line:col already.
            eprintln!("tune: {msg}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn cmd_run(a: RunArgs, program_args: Vec<String>) -> Result<i32, Error> {
    let args = CcArgs::parse(&a.cc)?;
    let json = a.json || a.format.as_deref() == Some("json");
    let cfg = RunConfig {
        args,
        function: a.function,
        cache_root: a.cache_dir.unwrap_or_else(profiling::cache::default_root),
        save_versions: a.save_versions,
        openmp: a.openmp,
        timeout: a.timeout.map(Duration::from_secs_f64),
        program_args,
        toolchain: Toolchain::default(),
    };
    let summary = run_program(&cfg)?;
    if !a.quiet {
        if json {
            eprintln!(
                "{}",
                serde_json::to_string(&summary).expect("summary serializes")
            );
        } else {
            eprint!("{}", render(&summary));
        }
    }
    Ok(summary.exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn tune_options_may_sit_anywhere_among_cc_flags() {
        let (argv, prog) = split_argv(s(&[
            "tune",
            "run",
            "gemm.c",
            "-DX",
            "--function",
            "k",
            "-Iinc",
            "--json",
            "--save-versions=3",
            "--",
            "a",
            "-b",
        ]));
        assert_eq!(
            argv,
            s(&[
                "tune",
                "run",
                "--function",
                "k",
                "--json",
                "--save-versions=3",
                "--",
                "gemm.c",
                "-DX",
                "-Iinc"
            ])
        );
        assert_eq!(prog, s(&["a", "-b"]));
        let cli = Cli::try_parse_from(argv).unwrap();
        let Command::Run(a) = cli.command;
        assert_eq!(a.function.as_deref(), Some("k"));
        assert_eq!(a.save_versions, 3);
        assert_eq!(a.cc, s(&["gemm.c", "-DX", "-Iinc"]));
    }

    #[test]
    fn negative_save_versions_parse() {
        let (argv, _) = split_argv(s(&["tune", "run", "--save-versions", "-1", "a.c"]));
        let Command::Run(a) = Cli::try_parse_from(argv).unwrap().command;
        assert_eq!(a.save_versions, -1);
    }
}

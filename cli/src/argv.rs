//! The command line as `tune` reads it: its own `--options` may sit anywhere among
//! the cc arguments of the program, and the program's own arguments follow `--`.

/// Moves `tune`'s own `--options` in front of the cc arguments (which may be mixed with
/// them, as in `tune run gemm.c -DX --function f`) and splits off program arguments
/// after `--`.
pub fn split_argv(cmd: &clap::Command, argv: Vec<String>) -> (Vec<String>, Vec<String>) {
    if argv.len() < 3 {
        return (argv, Vec::new());
    }
    // Only commands that take a program split off cc flags.
    if !["run", "profile", "search", "apply"].contains(&argv[1].as_str()) {
        return (argv, Vec::new());
    }
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
        let own_short_o =
            a == "-o" && sub.is_some_and(|s| s.get_arguments().any(|x| x.get_short() == Some('o')));
        if own_short_o {
            opts.push(a);
            if let Some(v) = it.next() {
                opts.push(v);
            }
        } else if a.starts_with("--") || a == "-h" || a == "-V" {
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

//! cc-style command lines: `gemm.c utilities/polybench.c -Iutilities -DSMALL_DATASET -lm`.

use crate::{Error, Result};

/// A cc-like argument list, split by role.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CcArgs {
    /// The first `.c` file: the one holding the region to tune.
    pub main: String,
    /// Further `.c` files compiled and linked with it.
    pub extra_sources: Vec<String>,
    /// Flags for preprocessing and compiling (`-I`, `-D`, `-U`, `-std`, `-O`, `-f`, ...).
    pub cflags: Vec<String>,
    /// Flags and inputs for linking (`-l`, `-L`, `-Wl,`, `.o`, `.a`, `.so`).
    pub link: Vec<String>,
}

/// Flags whose value may come as the next argument.
const WITH_VALUE: &[&str] = &[
    "-I", "-D", "-U", "-include", "-isystem", "-iquote", "-L", "-l", "-x",
];

impl CcArgs {
    /// Splits `args` (everything after the subcommand's own options).
    pub fn parse(args: &[String]) -> Result<CcArgs> {
        let mut out = CcArgs::default();
        let mut sources = Vec::new();
        let mut it = args.iter().peekable();
        while let Some(a) = it.next() {
            if let Some(flag) = WITH_VALUE.iter().find(|f| a == *f) {
                let v = it
                    .next()
                    .ok_or_else(|| Error::Usage(format!("{flag} needs a value")))?;
                let target = if *flag == "-L" || *flag == "-l" {
                    &mut out.link
                } else {
                    &mut out.cflags
                };
                target.push(a.clone());
                target.push(v.clone());
            } else if a == "-o" || a == "-c" || a == "-E" || a == "-S" {
                return Err(Error::Usage(format!(
                    "'{a}' is not accepted here: tune decides what to build (use -o with 'tune apply')"
                )));
            } else if a.starts_with("-l") || a.starts_with("-L") || a.starts_with("-Wl,") {
                out.link.push(a.clone());
            } else if a.starts_with('-') {
                out.cflags.push(a.clone());
            } else if a.ends_with(".c") {
                sources.push(a.clone());
            } else if a.ends_with(".o") || a.ends_with(".a") || a.ends_with(".so") {
                out.link.push(a.clone());
            } else {
                return Err(Error::Usage(format!(
                    "unexpected argument '{a}' (expected a .c file or a cc flag)"
                )));
            }
        }
        let mut sources = sources.into_iter();
        out.main = sources
            .next()
            .ok_or_else(|| Error::Usage("no .c file given".to_string()))?;
        out.extra_sources = sources.collect();
        Ok(out)
    }

    /// The flags that matter to the preprocessor.
    pub fn preprocessor_flags(&self) -> Vec<String> {
        self.cflags.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn splits_a_polybench_command_line() {
        let a = CcArgs::parse(&s(&[
            "gemm.c",
            "utilities/polybench.c",
            "-Iutilities",
            "-D",
            "SMALL_DATASET",
            "-lm",
            "-std=c99",
        ]))
        .unwrap();
        assert_eq!(a.main, "gemm.c");
        assert_eq!(a.extra_sources, s(&["utilities/polybench.c"]));
        assert_eq!(
            a.cflags,
            s(&["-Iutilities", "-D", "SMALL_DATASET", "-std=c99"])
        );
        assert_eq!(a.link, s(&["-lm"]));
    }

    #[test]
    fn refuses_what_it_cannot_use() {
        assert!(CcArgs::parse(&s(&["-O2"])).is_err());
        assert!(CcArgs::parse(&s(&["a.c", "-o", "x"])).is_err());
        assert!(CcArgs::parse(&s(&["a.c", "notes.txt"])).is_err());
        assert!(CcArgs::parse(&s(&["a.c", "-I"])).is_err());
    }
}

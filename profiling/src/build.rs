//! Compiling generated translation units, with a cache keyed by the source, the flags,
//! every extra source as preprocessed, the runtime and the compiler's version.

use crate::cc::CcArgs;
use crate::{io_err, Error, Result, RUNTIME_SOURCE};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

/// The flag that stops the compiler from contracting products and additions into FMAs
/// (last on a command line, it wins over the user's `-ffp-contract=fast`): two builds
/// with it that compute the same sums in the same order write the same bits.
pub const NO_CONTRACTION: &str = "-ffp-contract=off";

/// How to compile.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// `$CC`, default `cc` (may contain arguments, e.g. `ccache gcc`).
    pub cc: String,
    /// Optimization flags in front of the user's: `$CFLAGS`, default `-O3 -march=native`.
    pub base_flags: Vec<String>,
    /// `base_flags` came from `$CFLAGS`: they stand in front of every user's flags.
    pub base_from_env: bool,
}

impl Default for Toolchain {
    fn default() -> Self {
        let env = std::env::var("CFLAGS").ok();
        Toolchain {
            cc: std::env::var("CC")
                .ok()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| "cc".into()),
            base_from_env: env.is_some(),
            base_flags: env
                .map(|s| s.split_whitespace().map(String::from).collect())
                .unwrap_or_else(|| vec!["-O3".into(), "-march=native".into()]),
        }
    }
}

impl Toolchain {
    /// The flags in front of a program's own `cflags`: none where the user chose an
    /// optimization level (`-O2`, `-Os`, ...) and `$CFLAGS` is not set, so that every
    /// variant is built, measured and checked with the flags the user builds with;
    /// `base_flags` otherwise.
    pub fn base_for(&self, cflags: &[String]) -> &[String] {
        let own_level = cflags.iter().any(|f| f.starts_with("-O"));
        if own_level && !self.base_from_env {
            &[]
        } else {
            &self.base_flags
        }
    }

    fn command(&self) -> Command {
        let mut parts = self.cc.split_whitespace();
        let mut cmd = Command::new(parts.next().unwrap_or("cc"));
        cmd.args(parts);
        cmd
    }

    /// First line of `$CC --version` (cached per process and compiler).
    pub fn version(&self) -> Result<String> {
        static CACHE: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, v)) = cache.iter().find(|(c, _)| *c == self.cc) {
            return Ok(v.clone());
        }
        let out = self
            .command()
            .arg("--version")
            .output()
            .map_err(io_err(&self.cc))?;
        let v = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        cache.push((self.cc.clone(), v.clone()));
        Ok(v)
    }

    /// The vector ISA that code built with `cflags` targets, as the CPU flags
    /// `/proc/cpuinfo` names (`avx2`, `fma`, `avx512f`): those whose macro
    /// (`__AVX2__`, `__FMA__`, `__AVX512F__`) the compiler defines with the base flags
    /// and `cflags`. A build for `-march=x86-64-v3` on a CPU with AVX-512 targets
    /// `avx2` and `fma` only. None where the compiler does not run or refuses the flags.
    /// Cached per process, compiler and flags.
    pub fn target_flags(&self, cflags: &[String]) -> Option<Vec<String>> {
        type Key = (String, Vec<String>);
        static CACHE: Mutex<Vec<(Key, Option<Vec<String>>)>> = Mutex::new(Vec::new());
        let mut flags = self.base_for(cflags).to_vec();
        flags.extend(cflags.iter().cloned());
        let key = (self.cc.clone(), flags);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, v)) = cache.iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let out = self
            .command()
            .args(&key.1)
            .args(["-dM", "-E", "-x", "c", "/dev/null"])
            .output()
            .ok()
            .filter(|o| o.status.success());
        let v = out.map(|o| {
            let text = String::from_utf8_lossy(&o.stdout);
            let defined = |m: &str| text.lines().any(|l| l.split_whitespace().nth(1) == Some(m));
            [
                ("avx2", "__AVX2__"),
                ("fma", "__FMA__"),
                ("avx512f", "__AVX512F__"),
            ]
            .iter()
            .filter(|(_, m)| defined(m))
            .map(|(f, _)| f.to_string())
            .collect()
        });
        cache.push((key, v.clone()));
        v
    }

    fn preprocess(&self, file: &str, flags: &[String]) -> Result<Vec<u8>> {
        let out = self
            .command()
            .arg("-E")
            .args(flags)
            .arg(file)
            .output()
            .map_err(io_err(file))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(Error::Usage(
                err.lines()
                    .find(|l| l.contains("error"))
                    .unwrap_or("preprocessing failed")
                    .to_string(),
            ));
        }
        Ok(out.stdout)
    }
}

/// One build request.
#[derive(Debug, Clone)]
pub struct BuildRequest<'a> {
    /// The generated translation unit (already preprocessed C).
    pub source: &'a str,
    pub args: &'a CcArgs,
    /// Link the instrumentation runtime.
    pub runtime: bool,
    pub openmp: bool,
    /// `source` is preprocessed C (`gen.i`) rather than C to preprocess (`gen.c`).
    pub preprocessed: bool,
}

/// A finished build.
#[derive(Debug, Clone)]
pub struct Build {
    pub exe: PathBuf,
    pub key: String,
    pub cache_hit: bool,
    /// Seconds spent compiling (0 on a cache hit).
    pub compile_seconds: f64,
    pub command: Vec<String>,
}

/// Adds a labelled, length-prefixed field to a build key.
fn key_field(h: &mut blake3::Hasher, label: &str, bytes: &[u8]) {
    h.update(label.as_bytes());
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// A build key's first fields: the compiler, its version and the flags of `req`.
fn compiler_key(tc: &Toolchain, req: &BuildRequest) -> Result<blake3::Hasher> {
    let mut h = blake3::Hasher::new();
    key_field(&mut h, "cc", tc.cc.as_bytes());
    key_field(&mut h, "version", tc.version()?.as_bytes());
    for f in tc.base_for(&req.args.cflags) {
        key_field(&mut h, "base", f.as_bytes());
    }
    for f in &req.args.cflags {
        key_field(&mut h, "cflag", f.as_bytes());
    }
    Ok(h)
}

/// The compiler with the base flags, `req`'s flags and OpenMP when asked: what every
/// compile of `req` starts with.
fn compiler_command(tc: &Toolchain, req: &BuildRequest) -> Vec<String> {
    let mut command: Vec<String> = tc.cc.split_whitespace().map(String::from).collect();
    command.extend(tc.base_for(&req.args.cflags).iter().cloned());
    command.extend(req.args.cflags.iter().cloned());
    if req.openmp {
        command.push("-fopenmp".into());
    }
    command
}

/// Builds `req` under `dir` (one sub-folder per key); reuses an earlier identical build.
pub fn build(tc: &Toolchain, req: &BuildRequest, dir: &Path) -> Result<Build> {
    let mut hasher = compiler_key(tc, req)?;
    let mut feed = |label: &str, bytes: &[u8]| key_field(&mut hasher, label, bytes);
    for f in &req.args.link {
        feed("link", f.as_bytes());
    }
    feed("source", req.source.as_bytes());
    for extra in &req.args.extra_sources {
        let pre = tc.preprocess(extra, &req.args.cflags)?;
        feed("extra", &pre);
    }
    if req.runtime {
        feed("runtime", RUNTIME_SOURCE.as_bytes());
    }
    feed("openmp", &[req.openmp as u8]);
    feed("preprocessed", &[req.preprocessed as u8]);
    let key = hasher.finalize().to_hex()[..16].to_string();

    let bdir = dir.join(&key);
    let exe = bdir.join("prog");
    let gen = bdir.join(if req.preprocessed { "gen.i" } else { "gen.c" });
    let rt = if req.runtime {
        Some(runtime_object_path(tc, req, dir)?)
    } else {
        None
    };
    let mut command = compiler_command(tc, req);
    command.push("-o".into());
    command.push(exe.with_extension("tmp").display().to_string());
    command.push(gen.display().to_string());
    command.extend(req.args.extra_sources.iter().cloned());
    command.extend(rt.iter().map(|o| o.display().to_string()));
    command.extend(req.args.link.iter().cloned());

    if exe.is_file() {
        return Ok(Build {
            exe,
            key,
            cache_hit: true,
            compile_seconds: 0.0,
            command,
        });
    }
    if let Some(rt) = &rt {
        compile_runtime(tc, req, rt)?;
    }
    std::fs::create_dir_all(&bdir).map_err(io_err(&bdir))?;
    std::fs::write(&gen, req.source).map_err(io_err(&gen))?;
    let compile_seconds = compile(&command, &bdir.join("build.log"), &req.args.main)?;
    std::fs::rename(exe.with_extension("tmp"), &exe).map_err(io_err(&exe))?;
    Ok(Build {
        exe,
        key,
        cache_hit: false,
        compile_seconds,
        command,
    })
}

/// Where the instrumentation runtime's object for `req` lives: compiled once per
/// compiler, flags and runtime source, under `dir/rt-KEY/tune_rt.o`, and linked into
/// every build that asks for it. The runtime is ten times the size of a cutout's own
/// code; compiling it again for every variant took most of a variant's build time.
fn runtime_object_path(tc: &Toolchain, req: &BuildRequest, dir: &Path) -> Result<PathBuf> {
    let mut hasher = compiler_key(tc, req)?;
    let mut feed = |label: &str, bytes: &[u8]| key_field(&mut hasher, label, bytes);
    feed("runtime", RUNTIME_SOURCE.as_bytes());
    feed("openmp", &[req.openmp as u8]);
    let rdir = dir.join(format!("rt-{}", &hasher.finalize().to_hex()[..16]));
    Ok(rdir.join("tune_rt.o"))
}

/// Compiles the runtime object at `obj` unless it is there. Concurrent builds may both
/// compile it; each writes files of its own and renames them into place.
fn compile_runtime(tc: &Toolchain, req: &BuildRequest, obj: &Path) -> Result<()> {
    if obj.is_file() {
        return Ok(());
    }
    let rdir = obj.parent().expect("the object is in a folder");
    std::fs::create_dir_all(rdir).map_err(io_err(rdir))?;
    let src = rdir.join("tune_rt.c");
    crate::files::write_atomic(&src, RUNTIME_SOURCE.as_bytes()).map_err(io_err(&src))?;
    let tmp = rdir.join(format!("tune_rt.{}.o", crate::unique_id()));
    // The runtime is tune's own C: the user's choice of standard and strictness
    // (`-std=c89 -pedantic -Werror`) is for their code, not for it.
    let mut command: Vec<String> = compiler_command(tc, req)
        .into_iter()
        .filter(|f| {
            !(f.starts_with("-std=")
                || f == "-ansi"
                || f.starts_with("-pedantic")
                || f.starts_with("-Werror"))
        })
        .collect();
    command.push("-std=gnu11".into());
    command.extend([
        "-c".into(),
        "-o".into(),
        tmp.display().to_string(),
        src.display().to_string(),
    ]);
    let log = tmp.with_extension("log");
    compile(&command, &log, "the tune runtime")?;
    std::fs::rename(&tmp, obj).map_err(io_err(obj))?;
    let _ = std::fs::rename(&log, rdir.join("build.log"));
    Ok(())
}

/// Runs a compiler command line, writes its log (command and diagnostics) to `log`, and
/// turns a failure into `Error::Compile` naming the first error line. Returns seconds.
pub(crate) fn compile(command: &[String], log: &Path, what: &str) -> Result<f64> {
    let _machine = crate::exclusive::shared();
    let start = Instant::now();
    let out = Command::new(&command[0])
        .args(&command[1..])
        .output()
        .map_err(io_err(&command[0]))?;
    let seconds = start.elapsed().as_secs_f64();
    let mut text = format!("$ {}\n", command.join(" "));
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    std::fs::write(log, &text).map_err(io_err(log))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or_else(|| stderr.lines().next().unwrap_or("compiler failed"))
            .to_string();
        return Err(Error::Compile {
            what: what.to_string(),
            log: log.display().to_string(),
            first_error: first,
        });
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::Toolchain;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_users_optimization_level_replaces_the_default_flags_but_not_cflags() {
        let default = Toolchain {
            cc: "cc".into(),
            base_flags: s(&["-O3", "-march=native"]),
            base_from_env: false,
        };
        assert_eq!(
            default.base_for(&s(&["-DN=10", "-std=c99"])),
            s(&["-O3", "-march=native"])
        );
        assert!(default.base_for(&s(&["-std=c99", "-O2"])).is_empty());
        let set = Toolchain {
            base_from_env: true,
            ..default
        };
        assert_eq!(set.base_for(&s(&["-O2"])), s(&["-O3", "-march=native"]));
    }

    #[test]
    fn the_vector_isa_a_build_targets_comes_from_its_flags() {
        let tc = Toolchain {
            cc: "cc".into(),
            base_flags: s(&["-O3"]),
            base_from_env: false,
        };
        assert_eq!(tc.target_flags(&s(&["-march=x86-64"])), Some(Vec::new()));
        assert_eq!(
            tc.target_flags(&s(&["-march=x86-64-v3"])),
            Some(s(&["avx2", "fma"]))
        );
        assert_eq!(
            tc.target_flags(&s(&["-march=x86-64-v4"])),
            Some(s(&["avx2", "fma", "avx512f"]))
        );
        // The user's last word wins, as on their command line.
        assert_eq!(
            tc.target_flags(&s(&["-march=x86-64-v4", "-mno-avx512f"])),
            Some(s(&["avx2", "fma"]))
        );
        assert_eq!(tc.target_flags(&s(&["-mno-such-flag"])), None);
    }
}

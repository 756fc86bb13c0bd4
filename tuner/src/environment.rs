//! What a report was measured on, so that two reports can be compared honestly.

use profiling::build::Toolchain;
use serde::{Deserialize, Serialize};

/// The machine, compiler, flags, `tune` version and OpenMP settings of a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The machine's host name.
    pub host: String,
    /// The CPU model (from /proc/cpuinfo).
    pub cpu_model: String,
    /// Logical CPUs this process may use.
    pub cores: usize,
    /// Operating system and kernel release.
    pub os: String,
    /// `$CC` as used.
    pub compiler: String,
    /// First line of `$CC --version`.
    pub compiler_version: String,
    /// Optimization flags in front of every program's own (`$CFLAGS`).
    pub flags: Vec<String>,
    /// The version of tune that measured.
    pub tune_version: String,
    /// Every `OMP_*` variable of the environment (sorted), with `OMP_NUM_THREADS`
    /// always present (`unset` when it is not set).
    pub omp: Vec<(String, String)>,
    /// Seconds since the Unix epoch when it was captured.
    pub captured_at: u64,
}

impl Environment {
    /// The current process's environment with the toolchain `tc`.
    pub fn capture(tc: &Toolchain) -> Environment {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let mut omp: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| k.starts_with("OMP_"))
            .collect();
        if !omp.iter().any(|(k, _)| k == "OMP_NUM_THREADS") {
            omp.push(("OMP_NUM_THREADS".into(), "unset".into()));
        }
        omp.sort();
        let os = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|r| format!("{} {}", std::env::consts::OS, r.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_string());
        Environment {
            host: profiling::host::hostname(),
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os,
            compiler: tc.cc.clone(),
            compiler_version: tc.version().unwrap_or_else(|e| format!("unknown ({e})")),
            flags: tc.base_flags.clone(),
            tune_version: env!("CARGO_PKG_VERSION").to_string(),
            omp,
            captured_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// What differs between `self` and `other` that can change timings (host, CPU,
    /// cores, compiler, flags, OpenMP settings, `tune` version), one line each.
    pub fn differences(&self, other: &Environment) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |what: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{what}: {a} → {b}"));
            }
        };
        check("host", self.host.clone(), other.host.clone());
        check("CPU", self.cpu_model.clone(), other.cpu_model.clone());
        check("cores", self.cores.to_string(), other.cores.to_string());
        check("compiler", self.compiler.clone(), other.compiler.clone());
        check(
            "compiler version",
            self.compiler_version.clone(),
            other.compiler_version.clone(),
        );
        check("flags", self.flags.join(" "), other.flags.join(" "));
        check("OpenMP", self.omp_line(), other.omp_line());
        check(
            "tune version",
            self.tune_version.clone(),
            other.tune_version.clone(),
        );
        out
    }

    /// The OpenMP variables as `K=V K=V`.
    fn omp_line(&self) -> String {
        self.omp
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// One line per field, for the terminal and Markdown.
    pub fn lines(&self) -> Vec<String> {
        vec![
            format!("host {} ({})", self.host, self.os),
            format!("CPU {}, {} logical cores", self.cpu_model, self.cores),
            format!(
                "compiler {} ({}), flags {}",
                self.compiler,
                self.compiler_version,
                self.flags.join(" ")
            ),
            format!("OpenMP {}", self.omp_line()),
            format!("tune {}", self.tune_version),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_names_this_machine_and_compiler() {
        let e = Environment::capture(&Toolchain::default());
        assert!(e.cores >= 1);
        assert!(!e.cpu_model.is_empty());
        assert!(e.omp.iter().any(|(k, _)| k == "OMP_NUM_THREADS"));
        assert_eq!(e.tune_version, env!("CARGO_PKG_VERSION"));
        assert!(e.differences(&e).is_empty());
        let mut other = e.clone();
        other.flags = vec!["-O2".into()];
        other.cores += 1;
        let d = e.differences(&other);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].starts_with("cores: "), "{d:?}");
        assert!(d[1].starts_with("flags: "), "{d:?}");
    }
}

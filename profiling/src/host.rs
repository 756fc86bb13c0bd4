//! The name of this machine: the one source for records, database entries, reports and
//! the per-host machine cache, so that they all agree on which host measured what.

use std::path::Path;

/// Where the name is read, first readable non-empty one wins: the configured name, then
/// the kernel's (what `uname -n` prints), for systems without `/etc/hostname`.
pub(crate) const SOURCES: [&str; 2] = ["/etc/hostname", "/proc/sys/kernel/hostname"];

/// The name of this machine, trimmed; `host` when no source can be read.
pub fn hostname() -> String {
    hostname_from(&SOURCES)
}

pub(crate) fn hostname_from<P: AsRef<Path>>(sources: &[P]) -> String {
    sources
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "host".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_readable_name_wins_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let (etc, kernel, missing) = (
            dir.path().join("etc"),
            dir.path().join("kernel"),
            dir.path().join("missing"),
        );
        std::fs::write(&etc, "  box-1 \n").unwrap();
        std::fs::write(&kernel, "kernel-name\n").unwrap();
        assert_eq!(hostname_from(&[&etc, &kernel]), "box-1");
        assert_eq!(hostname_from(&[&missing, &kernel]), "kernel-name");
        std::fs::write(&etc, "\n").unwrap();
        assert_eq!(hostname_from(&[&etc, &kernel]), "kernel-name");
        assert_eq!(hostname_from(&[&missing]), "host");
        assert!(!hostname().is_empty());
    }
}

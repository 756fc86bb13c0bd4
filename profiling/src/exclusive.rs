//! The machine as a resource shared by every `tune` process on it.
//!
//! Work that runs several programs at once (`tune batch --jobs N`, two array tasks on
//! one node, two commands a user starts) must not let one program's measurement be
//! disturbed by another's work. Every child program run holds the machine alone
//! ([`alone`]): measurements, dry runs with Save, the machine benchmark, anything timed.
//! Compilations share it ([`shared`]): they run in parallel with each other, never while
//! a program runs.
//!
//! Two locks make it so: an in-process `RwLock` between the threads of one process, and
//! under it a machine-wide `flock` on a per-host file (`tune-machine-<host>.lock` in
//! `$TUNE_LOCK_DIR`, else the system temporary folder), exclusive for a run and shared
//! for a compilation, between processes. A guard holds both until dropped, so the
//! machine-wide lock is free between two runs. Every request goes through a second file
//! (`.gate`), held only while waiting for the lock: a process that releases the lock and
//! asks again queues behind the one already waiting, so two processes take turns rather
//! than one starving the other, and compilations do not slip past a waiting run. A process that cannot open the lock files still runs,
//! without the machine-wide lock, and says so once through the hook set by
//! [`on_warning`].
//!
//! With `$TUNE_MEASURE_LOG` set to a path, every time the machine was held alone appends
//! one line `PID START END` to it (nanoseconds of `CLOCK_MONOTONIC`, shared by the
//! processes of one machine): how tests check that runs of different processes never
//! overlap.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

/// Holds the machine alone, in this process and on this host, until dropped.
pub struct Alone {
    _flock: Option<Flock>,
    _guard: RwLockWriteGuard<'static, ()>,
    start_ns: u64,
}

/// Shares the machine with other compilations, of any process, until dropped.
pub struct Shared {
    _flock: Option<Flock>,
    _guard: RwLockReadGuard<'static, ()>,
}

/// Holds the machine alone until dropped (a child program run).
pub fn alone() -> Alone {
    // The lock guards no data: a thread that panicked while holding it left nothing
    // half-written, so a poisoned lock is taken as it is.
    let guard = MACHINE.write().unwrap_or_else(|e| e.into_inner());
    let flock = Flock::take(true);
    Alone {
        _flock: flock,
        _guard: guard,
        start_ns: monotonic_ns(),
    }
}

/// Shares the machine with other compilations until dropped.
pub fn shared() -> Shared {
    let guard = MACHINE.read().unwrap_or_else(|e| e.into_inner());
    Shared {
        _flock: Flock::take(false),
        _guard: guard,
    }
}

impl Drop for Alone {
    fn drop(&mut self) {
        if let Some(path) = std::env::var_os("TUNE_MEASURE_LOG") {
            let line = format!(
                "{} {} {}\n",
                std::process::id(),
                self.start_ns,
                monotonic_ns()
            );
            // One write of a short line to a file opened for appending: lines of
            // several processes never interleave. A log that cannot be written is
            // not the measurement's concern.
            if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
                let _ = f.write_all(line.as_bytes());
            }
        }
        // Fields drop after this: the machine-wide lock first, then the in-process one.
    }
}

/// Sets what is called, once per process, when the machine-wide lock cannot be used
/// (the command line prints it). Later calls are ignored.
pub fn on_warning(hook: fn(&str)) {
    let _ = WARN_HOOK.set(hook);
}

static WARN_HOOK: OnceLock<fn(&str)> = OnceLock::new();
static WARNED: std::sync::Once = std::sync::Once::new();

fn warn(message: String) {
    WARNED.call_once(|| {
        if let Some(hook) = WARN_HOOK.get() {
            hook(&message);
        }
    });
}

/// The folder of the lock files: `$TUNE_LOCK_DIR`, else the system temporary folder.
pub fn lock_dir() -> PathBuf {
    std::env::var_os("TUNE_LOCK_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

/// The machine-wide lock file of this host.
pub fn lock_path() -> PathBuf {
    let host: String = crate::host::hostname()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    lock_dir().join(format!("tune-machine-{host}.lock"))
}

/// A held `flock`, released when its file is closed (on drop).
struct Flock {
    _file: File,
}

impl Flock {
    /// The machine-wide lock, exclusive or shared; `None` (after one warning per
    /// process) when its file cannot be opened or locked.
    fn take(exclusive: bool) -> Option<Flock> {
        Flock::take_at(&lock_path(), exclusive)
    }

    fn take_at(path: &std::path::Path, exclusive: bool) -> Option<Flock> {
        let file = match open_lock_file(path) {
            Ok(f) => f,
            Err(e) => {
                warn(format!(
                    "cannot open the machine-wide lock {} ({e}): measurements of other \
                     tune processes on this machine may overlap this one's",
                    path.display()
                ));
                return None;
            }
        };
        let mode = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        // Queue at the gate: a process that just released the lock and asks again waits
        // behind one already waiting, and compilations do not slip past a waiting run.
        let gate = open_lock_file(&path.with_extension("gate")).ok();
        if let Some(g) = &gate {
            let _ = flock(g, libc::LOCK_EX);
        }
        let held = flock(&file, mode);
        drop(gate);
        match held {
            Ok(()) => Some(Flock { _file: file }),
            Err(e) => {
                warn(format!(
                    "cannot lock {} ({e}): measurements of other tune processes on this \
                     machine may overlap this one's",
                    path.display()
                ));
                None
            }
        }
    }
}

/// Opens (creating it, readable and writable by everyone) a lock file; read-only when
/// another user created it. `flock` needs no write access.
fn open_lock_file(path: &std::path::Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o666)
        .open(path)
    {
        Ok(f) => Ok(f),
        Err(e) => File::open(path).map_err(|_| e),
    }
}

/// `flock(2)`, retried when a signal interrupts it.
fn flock(file: &File, operation: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: the descriptor is open for the duration of the call.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Nanoseconds of `CLOCK_MONOTONIC`, the clock every process of the machine shares.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_run_excludes_compilations_and_compilations_overlap() {
        let inside = Arc::new(AtomicUsize::new(0));
        let max_shared = Arc::new(AtomicUsize::new(0));
        let violations = Arc::new(AtomicUsize::new(0));
        let mut threads = Vec::new();
        for t in 0..6 {
            let (inside, max_shared, violations) =
                (inside.clone(), max_shared.clone(), violations.clone());
            threads.push(std::thread::spawn(move || {
                for _ in 0..5 {
                    if t % 3 == 0 {
                        let _g = alone();
                        if inside.swap(1000, Ordering::SeqCst) != 0 {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        std::thread::sleep(Duration::from_millis(2));
                        inside.store(0, Ordering::SeqCst);
                    } else {
                        let _g = shared();
                        let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        if n >= 1000 {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        max_shared.fetch_max(n, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(5));
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            }));
        }
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(violations.load(Ordering::SeqCst), 0);
        assert!(max_shared.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn the_machine_wide_lock_is_exclusive_for_runs_and_shared_for_compilations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tune-machine-test.lock");
        // Another open file stands for another process: flock locks belong to open files.
        let other = || open_lock_file(&path).unwrap();
        let busy = |f: &File, mode| flock(f, mode | libc::LOCK_NB).is_err();

        let run = Flock::take_at(&path, true).expect("lock taken");
        assert!(busy(&other(), libc::LOCK_SH));
        drop(run);
        assert!(!busy(&other(), libc::LOCK_EX));

        let compile = Flock::take_at(&path, false).expect("lock taken");
        let compile2 = Flock::take_at(&path, false).expect("shared locks coexist");
        assert!(busy(&other(), libc::LOCK_EX));
        drop((compile, compile2));
        assert!(!busy(&other(), libc::LOCK_EX));
        assert!(path.with_extension("gate").exists());
    }

    #[test]
    fn a_lock_file_that_cannot_be_opened_leaves_the_run_unlocked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("tune-machine-test.lock");
        assert!(Flock::take_at(&path, true).is_none());
        assert!(Flock::take_at(&path, false).is_none());
    }

    #[test]
    fn the_log_clock_moves_forward() {
        let a = monotonic_ns();
        std::thread::sleep(Duration::from_millis(1));
        assert!(monotonic_ns() >= a + 1_000_000);
    }
}

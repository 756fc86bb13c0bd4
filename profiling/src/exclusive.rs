//! The machine as a resource shared by the threads of one `tune` process.
//!
//! Work that runs several programs at once (`tune batch --jobs N`) must not let one
//! program's measurement be disturbed by another's work. Every child program run holds
//! the machine alone ([`alone`]): measurements, dry runs with Save, anything timed.
//! Compilations share it ([`shared`]): they run in parallel with each other, never while
//! a program runs. In a process that does one thing at a time both locks are free.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

/// Holds the machine alone until dropped (a child program run).
pub fn alone() -> RwLockWriteGuard<'static, ()> {
    // The lock guards no data: a thread that panicked while holding it left nothing
    // half-written, so a poisoned lock is taken as it is.
    MACHINE.write().unwrap_or_else(|e| e.into_inner())
}

/// Shares the machine with other compilations until dropped.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(|e| e.into_inner())
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
}

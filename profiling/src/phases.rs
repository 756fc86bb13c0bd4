//! A scoped timer for the harness's own phases (parse, codegen, compile, run, ...),
//! with nesting: `let _g = phases.scope("compile");` records the phase when the guard
//! drops, under the path of the scopes open around it.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// `profile/dry-run/compile`
    pub path: String,
    pub name: String,
    pub depth: usize,
    /// Seconds since the recorder started.
    pub start_s: f64,
    pub dur_s: f64,
}

#[derive(Debug)]
pub struct Phases {
    origin: Instant,
    open: RefCell<Vec<(String, Instant)>>,
    done: RefCell<Vec<PhaseRecord>>,
}

impl Default for Phases {
    fn default() -> Self {
        Phases::new()
    }
}

/// Closes its phase when dropped.
pub struct Scope<'a> {
    phases: &'a Phases,
}

impl Phases {
    pub fn new() -> Phases {
        Phases {
            origin: Instant::now(),
            open: RefCell::new(Vec::new()),
            done: RefCell::new(Vec::new()),
        }
    }

    pub fn scope(&self, name: &str) -> Scope<'_> {
        self.open
            .borrow_mut()
            .push((name.to_string(), Instant::now()));
        Scope { phases: self }
    }

    /// Finished phases, in the order they started.
    pub fn records(&self) -> Vec<PhaseRecord> {
        let mut v = self.done.borrow().clone();
        v.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        v
    }

    /// Total seconds of finished phases with this name (at any depth).
    pub fn total(&self, name: &str) -> f64 {
        self.done
            .borrow()
            .iter()
            .filter(|r| r.name == name)
            .map(|r| r.dur_s)
            .sum()
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        let mut open = self.phases.open.borrow_mut();
        if let Some((name, start)) = open.pop() {
            let mut path: Vec<&str> = open.iter().map(|(n, _)| n.as_str()).collect();
            path.push(&name);
            self.phases.done.borrow_mut().push(PhaseRecord {
                path: path.join("/"),
                name: name.clone(),
                depth: open.len(),
                start_s: start.duration_since(self.phases.origin).as_secs_f64(),
                dur_s: start.elapsed().as_secs_f64(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_nest_and_record_paths() {
        let p = Phases::new();
        {
            let _a = p.scope("profile");
            {
                let _b = p.scope("compile");
            }
            let _c = p.scope("run");
        }
        let r = p.records();
        let paths: Vec<&str> = r.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["profile", "profile/compile", "profile/run"]);
        assert_eq!(r[1].depth, 1);
        assert!(r[0].dur_s >= r[1].dur_s);
    }
}

//! Representative versions: which invocation of a nest under control loops the tuning
//! measures.
//!
//! A nest under a control loop runs once per iteration of it, and the invocations can
//! differ by orders of magnitude: row `i = 0` of a factorization is empty, row `n/2`
//! holds the bulk of the work. Measuring the first invocation measures nothing. The
//! runtime records, per slot, the cumulative time at evenly spaced invocations; the
//! representative version is the invocation where half of the nest's time has been
//! spent (the time-weighted median), and a second dry run saves that one.
//!
//! The plan is remembered in the program's cache folder for its build and arguments
//! ([`remembered_plan`]): timing noise moves the time-weighted median by a few
//! invocations from run to run, and with it the saved version's integer inputs (the
//! control loop variables), hence the nest's trip counts, features and cutout data. A
//! later dry run of the same build with the same arguments saves the same versions, in
//! one run instead of two.

use ir::codegen::Nest;
use profiling::run::{RuntimeReport, SlotReport};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file in a program's cache folder that remembers its plan.
const PLAN_FILE: &str = "plan.json";

/// A save plan and what it was made for.
#[derive(Debug, Serialize, Deserialize)]
struct Remembered {
    /// The build's key (`profiling::build::Build::key`: source, flags, compiler).
    build: String,
    /// The program's arguments.
    args: Vec<String>,
    /// `(slot, version)` as [`save_plan`] made it (empty: the first versions stand).
    plan: Vec<(usize, u64)>,
}

/// The plan remembered in `root` for this build and these arguments, if any.
pub fn remembered_plan(root: &Path, build: &str, args: &[String]) -> Option<Vec<(usize, u64)>> {
    let text = std::fs::read_to_string(root.join(PLAN_FILE)).ok()?;
    let r: Remembered = serde_json::from_str(&text).ok()?;
    (r.build == build && r.args == args).then_some(r.plan)
}

/// Remembers `plan` in `root` for this build and these arguments (replacing what was
/// there). A plan that cannot be written is only not remembered.
pub fn remember_plan(root: &Path, build: &str, args: &[String], plan: &[(usize, u64)]) {
    let r = Remembered {
        build: build.to_string(),
        args: args.to_vec(),
        plan: plan.to_vec(),
    };
    let text = serde_json::to_string(&r).expect("a plan serializes");
    let _ = crate::files::write(&root.join(PLAN_FILE), &text);
}

/// The first version stands for the nest unless it took less than this share of the
/// mean time per invocation.
const FIRST_VERSION_SHARE: f64 = 0.5;

/// The invocation (0-based) during which the slot's cumulative time reached half of
/// its total, from the runtime's marks; `None` without marks or time.
pub fn time_median_version(slot: &SlotReport) -> Option<u64> {
    let half = slot.total_s / 2.0;
    if slot.invocations == 0 || half <= 0.0 {
        return None;
    }
    let (mut v0, mut t0) = (0u64, 0.0f64);
    for &(v, t) in &slot.marks {
        if t >= half {
            // Linear between the marks around the crossing.
            let frac = if t > t0 { (half - t0) / (t - t0) } else { 0.0 };
            let done = v0 as f64 + frac * (v - v0) as f64;
            let version = (done.ceil() as u64).saturating_sub(1);
            return Some(version.min(slot.invocations - 1));
        }
        (v0, t0) = (v, t);
    }
    None
}

/// Whether the first invocation is too small to stand for the nest.
fn first_is_unrepresentative(slot: &SlotReport) -> bool {
    let Some(&first) = slot.times_s.first() else {
        return false;
    };
    let mean = slot.total_s / slot.invocations.max(1) as f64;
    slot.invocations > 1 && first < FIRST_VERSION_SHARE * mean
}

/// `(slot, version)` for every nest whose first invocation does not stand for it: the
/// versions a second dry run saves instead. Empty when the first ones do.
pub fn save_plan(report: &RuntimeReport, nests: &[Nest]) -> Vec<(usize, u64)> {
    let mut plan = Vec::new();
    for nest in nests {
        let Some(slot) = report.slots.iter().find(|s| s.slot == nest.id) else {
            continue;
        };
        if !first_is_unrepresentative(slot) {
            continue;
        }
        if let Some(v) = time_median_version(slot).filter(|&v| v > 0) {
            plan.push((nest.id, v));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_remembered_for_its_build_and_arguments_only() {
        let dir = tempfile::tempdir().unwrap();
        let args = vec!["-n".to_string(), "64".to_string()];
        assert_eq!(remembered_plan(dir.path(), "k1", &args), None);
        remember_plan(dir.path(), "k1", &args, &[(1, 60), (3, 7)]);
        assert_eq!(
            remembered_plan(dir.path(), "k1", &args),
            Some(vec![(1, 60), (3, 7)])
        );
        // Another build, other arguments: nothing remembered.
        assert_eq!(remembered_plan(dir.path(), "k2", &args), None);
        assert_eq!(remembered_plan(dir.path(), "k1", &[]), None);
        // An empty plan is remembered too: the first versions stand.
        remember_plan(dir.path(), "k2", &[], &[]);
        assert_eq!(remembered_plan(dir.path(), "k2", &[]), Some(vec![]));
        // A damaged file reads as nothing remembered.
        std::fs::write(dir.path().join(PLAN_FILE), "{").unwrap();
        assert_eq!(remembered_plan(dir.path(), "k2", &[]), None);
    }

    fn slot(times: &[f64]) -> SlotReport {
        // Marks at every invocation, as the runtime writes them before its first
        // compaction.
        let mut total = 0.0;
        let mut marks = Vec::new();
        for (k, t) in times.iter().enumerate() {
            total += t;
            marks.push((k as u64 + 1, total));
        }
        SlotReport {
            slot: 0,
            name: "nest0".into(),
            invocations: times.len() as u64,
            total_s: total,
            min_s: times.iter().cloned().fold(f64::INFINITY, f64::min),
            max_s: times.iter().cloned().fold(0.0, f64::max),
            times_s: times.to_vec(),
            marks,
            concurrent: 0,
        }
    }

    #[test]
    fn a_growing_nest_is_measured_where_half_its_time_is_spent() {
        // Invocation k takes k units (a row of a factorization): the cumulative time
        // k(k+1)/2 reaches half of 100*101/2 = 2525 during invocation 71 (k = 71:
        // 71*72/2 = 2556).
        let times: Vec<f64> = (0..=100).map(|k| k as f64).collect();
        let s = slot(&times);
        assert_eq!(time_median_version(&s), Some(71));
        assert!(first_is_unrepresentative(&s));
    }

    #[test]
    fn equal_invocations_keep_the_first() {
        let s = slot(&[1.0; 10]);
        assert!(!first_is_unrepresentative(&s));
        assert_eq!(time_median_version(&s), Some(4));
    }

    #[test]
    fn sparse_marks_interpolate_between_them() {
        // Marks every 4 invocations of equal time, 16 invocations: half the time is
        // spent at 8 done, during invocation 7.
        let s = SlotReport {
            slot: 3,
            name: "nest3".into(),
            invocations: 16,
            total_s: 16.0,
            min_s: 1.0,
            max_s: 1.0,
            times_s: vec![1.0; 16],
            marks: vec![(4, 4.0), (8, 8.0), (12, 12.0), (16, 16.0)],
            concurrent: 0,
        };
        assert_eq!(time_median_version(&s), Some(7));
    }
}

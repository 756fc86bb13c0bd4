//! Results that differ only where products were contracted into FMAs otherwise. gcc
//! contracts `s += a * b` into one FMA (one rounding) where it keeps a loop scalar,
//! and not where it vectorizes the products and adds them one by one (two roundings);
//! which it does depends on the code around the loop: whether the function is inlined,
//! whether the sizes are known. A tuned file changes that code, so a nest left as the
//! user wrote it can round otherwise in the tuned program, and a printed sum that
//! cancels (correlation's centred `data`, whose sum is rounding noise around 0) then
//! reads as another number, though both programs add the same products in the same
//! order.
//!
//! Where the check finds other printed results and every kept recipe computes in the
//! user's order (`printed::Order::Kept`: its cutout's outputs bit for bit, or so with
//! contraction off, `Candidate::same_order`), [`contracted_only`] builds both
//! programs once more with `-ffp-contract=off` after the user's flags (no product is
//! contracted in either) and runs each twice. Where they then print the same results,
//! the tuned program computes what the user's does in the user's order, and its other
//! digits are the compiler's choice of contraction, which the user's own build could
//! make otherwise with another compiler or another level: it is not given up for them.

use crate::bench::{run_suite_until, BenchConfig, Benchmark, Rounds};
use crate::printed::Order;
use crate::Result;
use profiling::build::{Toolchain, NO_CONTRACTION};
use std::path::Path;
use std::time::Duration;

/// Whether `benches` (the user's program, then the tuned one) print the same results
/// when both are built with [`NO_CONTRACTION`], as `printed::same_results` reads them for sums
/// in another order: no number may differ beyond the rounding of its last printed digit
/// (with no product contracted, the same sums in the same order are the same bits).
/// False where a build or a run fails.
pub fn contracted_only(
    toolchain: &Toolchain,
    timeout: Duration,
    suite: &str,
    benches: &[Benchmark; 2],
    work: &Path,
) -> Result<bool> {
    let benches: Vec<Benchmark> = benches
        .iter()
        .map(|b| {
            let mut b = b.clone();
            b.args.push(NO_CONTRACTION.into());
            b
        })
        .collect();
    let cfg = BenchConfig {
        toolchain: toolchain.clone(),
        warmup: 0,
        // Two runs of the user's program: what differs between them (a printed
        // timing) is not a result.
        runs: 2,
        timeout,
        work: work.join("no-contraction"),
    };
    let r = match run_suite_until(
        &cfg,
        suite,
        &benches,
        &crate::events::silent(),
        &|_: &Rounds| false,
    ) {
        Ok(r) => r,
        Err(crate::Error::Profiling(_)) => return Ok(false),
        Err(e) => return Err(e),
    };
    Ok(super::prints_the_same(
        &r.benchmarks[0],
        &r.benchmarks[1],
        Order::Changed,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dot product of 1000 terms printed with all its digits, its loop kept scalar;
    /// `attrs` adds to the function's `optimize` attribute, `order` is its loop header.
    fn dot(attrs: &str, order: &str) -> String {
        format!(
            "#include <stdio.h>\n\
             static double x[1000], y[1000];\n\
             __attribute__((noinline, optimize(\"no-tree-vectorize\"{attrs})))\n\
             static double dot(int n) {{ double s = 0.0; {order} s += x[k] * y[k]; return s; }}\n\
             int main(void) {{\n\
               for (int k = 0; k < 1000; k++) {{ x[k] = (k % 17) / 7.0 - 1.1; y[k] = (k % 11) / 3.0 - 1.6; }}\n\
               printf(\"%.17g\\n\", dot(1000));\n\
               return 0;\n\
             }}\n"
        )
    }

    /// Whether the user's `was` and the tuned `now` print the same with contraction off.
    fn contracted(was: &str, now: &str) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let (user, tuned) = (dir.path().join("dot.c"), dir.path().join("dot.tuned.c"));
        std::fs::write(&user, was).unwrap();
        std::fs::write(&tuned, now).unwrap();
        let args = vec![user.display().to_string()];
        let benches = [
            Benchmark::original(&args[0], args.clone()),
            Benchmark::tuned(&args[0], &tuned, &args),
        ];
        contracted_only(
            &Toolchain::default(),
            Duration::from_secs(60),
            &args[0],
            &benches,
            dir.path(),
        )
        .unwrap()
    }

    #[test]
    fn products_rounded_otherwise_are_told_from_sums_in_another_order() {
        let forward = "for (int k = 0; k < n; k++)";
        let user = dot("", forward);
        // The same sum, each product rounded before it is added: under the user's flags
        // (where gcc contracts `s += x * y` into an FMA) it prints another last digit...
        let unfused = dot(", \"fp-contract=off\"", forward);
        let tc = Toolchain::default();
        let printed = |src: &str| {
            let dir = tempfile::tempdir().unwrap();
            let c = dir.path().join("p.c");
            std::fs::write(&c, src).unwrap();
            let exe = dir.path().join("p");
            let mut cmd = std::process::Command::new(&tc.cc);
            // Generic tuning: tuned for Zen (`-march=native` there), gcc keeps a sum's
            // chain out of FMAs (its `avoid_fma_chains`), and both would print alike.
            cmd.args(tc.base_for(&[]))
                .arg("-mtune=generic")
                .arg(&c)
                .arg("-o")
                .arg(&exe);
            assert!(cmd.status().unwrap().success());
            String::from_utf8(std::process::Command::new(&exe).output().unwrap().stdout).unwrap()
        };
        assert_ne!(printed(&user), printed(&unfused));
        // ...and the same with contraction off in both.
        assert!(contracted(&user, &unfused));
        // The same products added last to first: another sum, with or without.
        let backward = dot("", "for (int k = n - 1; k >= 0; k--)");
        assert_ne!(printed(&user), printed(&backward));
        assert!(!contracted(&user, &backward));
    }
}

//! The features of a nest that retrieval and the database use: static features from
//! the IR, performance features from its baseline time, the cache model and the
//! machine description.

use embeddings::features::{add_performance, static_features, Measured};
use ir::codegen::Nest;
use ir::program::Loop;
use profiling::build::Toolchain;
use profiling::cutout::{env_of, first_saved_version, CounterReading};
use profiling::machine::{MachineInfo, MachineOptions};
use std::path::Path;

/// Accesses the cache model walks per nest before it samples.
const MODEL_LIMIT: u64 = 4_000_000;

/// The machine description (measured once per host, then cached), as code built with
/// the toolchain and `cflags` sees it (`MachineInfo::targeted`: a build for AVX2 on a
/// CPU with AVX-512 gets AVX2's vector registers and peak).
pub fn machine_info(cache_root: &Path, tc: &Toolchain, cflags: &[String]) -> Option<MachineInfo> {
    let m = profiling::machine::machine(cache_root, tc, &MachineOptions::default()).ok()?;
    Some(match tc.target_flags(cflags) {
        Some(target) => m.targeted(&target),
        None => m,
    })
}

/// The root loop of `nest`.
pub fn nest_root<'p>(program: &'p ir::Program, nest: &Nest) -> Option<&'p Loop> {
    program.find_loop(nest.region, nest.root)
}

/// Static features of the nest's normal form (`ir::normalize`: fission, then stride
/// order), so that two loop orders of one computation read alike; the counts (and the
/// cache model and time that [`nest_features`] adds) are the nest's own.
pub fn normal_static_features(
    program: &ir::Program,
    nest: &Nest,
    root: &Loop,
    env: &ir::interp::Env,
    counts: Option<&ir::counts::NestCounts>,
) -> embeddings::NestFeatures {
    let normal = ir::normalize::normalize(program, nest.region, nest.root);
    let (sprog, sroot) = normal
        .as_ref()
        .map_or((program, root), |n| (&n.program, &n.root));
    static_features(sprog, nest, sroot, env, counts)
}

/// Static and performance features of a nest whose data was saved in `data_dir`
/// (the version tuning measures), measured at `time_s` per run with the hardware
/// `counters` read on it (`crate::counters`; empty without a PMU), with the static
/// counts they used.
pub fn nest_features(
    program: &ir::Program,
    nest: &Nest,
    data_dir: &Path,
    time_s: f64,
    counters: &[CounterReading],
    machine: Option<&MachineInfo>,
) -> Option<(embeddings::NestFeatures, Option<ir::counts::NestCounts>)> {
    let root = nest_root(program, nest)?;
    let env = env_of(data_dir, nest, first_saved_version(data_dir, nest));
    let counts = ir::counts::nest_counts(program, nest.region, nest.root, &env, 50_000_000).ok();
    let cache = profiling::cachemodel::model_warm(
        program,
        nest.region,
        nest.root,
        &env,
        &crate::profile::cache_specs(machine),
        MODEL_LIMIT,
    )
    .ok();
    let mut f = normal_static_features(program, nest, root, &env, counts.as_ref());
    add_performance(
        &mut f,
        &Measured {
            time_s,
            counts: counts.as_ref(),
            cache: cache.as_ref(),
            counters,
        },
        machine,
    );
    Some((f, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features_of(text: &str) -> embeddings::NestFeatures {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.c");
        std::fs::write(&path, text).unwrap();
        let p = ir::load(&path.display().to_string(), &Default::default())
            .unwrap()
            .program;
        let nest = &ir::codegen::nests(&p)[0];
        let root = nest_root(&p, nest).unwrap();
        normal_static_features(&p, nest, root, &Default::default(), None)
    }

    fn product(order: [&str; 3]) -> String {
        let mut s = String::from(
            "double C[64][48], A[64][32], B[32][48];\nvoid mm(void) {\n#pragma scop\n",
        );
        for v in order {
            let n = match v {
                "i" => 64,
                "j" => 48,
                _ => 32,
            };
            s += &format!("for (int {v} = 0; {v} < {n}; {v}++)\n");
        }
        s + "C[i][j] += A[i][k] * B[k][j];\n#pragma endscop\n}\n"
    }

    #[test]
    fn every_loop_order_of_a_product_has_the_features_of_one() {
        let ikj = features_of(&product(["i", "k", "j"]));
        // Rows of the loops: three, the innermost walking the unit stride.
        assert_eq!(ikj.loops.len(), 3);
        assert_eq!(ikj.loops[2][6], 1.0, "innermost flag of the third loop");
        for order in [["i", "j", "k"], ["k", "j", "i"], ["j", "k", "i"]] {
            assert_eq!(features_of(&product(order)), ikj, "{order:?}");
        }
        // A different computation (the transposed product) reads otherwise.
        let other = product(["i", "j", "k"])
            .replace("B[k][j]", "B[j][k]")
            .replace("B[32][48]", "B[48][32]");
        assert_ne!(features_of(&other), ikj);
    }
}

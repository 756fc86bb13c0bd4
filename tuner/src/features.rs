//! The features of a nest that retrieval and the database use, all read off the nest's
//! normal form (`ir::normalize`: maximal fission, then every perfect band in stride
//! order), so that two loop orders of one computation read alike: static features from
//! the IR, performance features from the normal form's measured time and cache model,
//! and the machine description.

use crate::nest_bench::NestBench;
use crate::Result;
use embeddings::features::{add_performance, static_features, Measured};
use ir::codegen::Nest;
use ir::normalize::Normalized;
use ir::program::Loop;
use ir::transform::Recipe;
use profiling::build::Toolchain;
use profiling::cutout::{env_of, first_saved_version, CounterReading, Verdict};
use profiling::machine::{MachineInfo, MachineOptions};
use profiling::measure::Measure;
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

/// The nest's normal form (`ir::normalize`); None where it has none.
pub fn normal_form(program: &ir::Program, nest: &Nest) -> Option<Normalized> {
    ir::normalize::normalize(program, nest.region, nest.root)
}

/// The steps from the nest as written to its normal form `normal`; None where there
/// are none (the nest is written in normal form, or has none).
pub fn steps_to(normal: Option<&Normalized>) -> Option<&Recipe> {
    normal.map(|n| &n.recipe).filter(|r| !r.steps.is_empty())
}

/// The recipe that writes `nest` in its normal form; None where the nest is written in
/// it already (or has no normal form).
pub fn normal_recipe(program: &ir::Program, nest: &Nest) -> Option<Recipe> {
    steps_to(normal_form(program, nest).as_ref()).cloned()
}

/// The median time of the nest's normal form `normal` ([`normal_form`]), measured on
/// its saved data with `measure`: None where the nest is written in normal form, or its
/// normal form does not verify (then the time as written stands for it).
pub fn normal_form_time(
    bench: &NestBench,
    normal: Option<&Normalized>,
    measure: &Measure,
) -> Result<Option<f64>> {
    let Some(recipe) = steps_to(normal) else {
        return Ok(None);
    };
    Ok(bench
        .measure_recipe("normal-form", recipe, measure)?
        .filter(|r| r.verdict == Verdict::Verified && r.stats.median > 0.0)
        .map(|r| r.stats.median))
}

/// The time the features read: the normal form's, measured here where the nest is not
/// written in it, else `written_s` (the nest's own median).
pub fn feature_time(
    bench: &NestBench,
    normal: Option<&Normalized>,
    written_s: f64,
    measure: &Measure,
) -> Result<f64> {
    Ok(normal_form_time(bench, normal, measure)?.unwrap_or(written_s))
}

/// Static features of the nest's normal form `normal` (the nest as written where None).
fn static_features_of(
    program: &ir::Program,
    nest: &Nest,
    root: &Loop,
    normal: Option<&Normalized>,
    env: &ir::interp::Env,
    counts: Option<&ir::counts::NestCounts>,
) -> embeddings::NestFeatures {
    let (sprog, sroot) = normal.map_or((program, root), |n| (&n.program, &n.root));
    static_features(sprog, nest, sroot, env, counts)
}

/// Static features of the nest's normal form, so that two loop orders of one
/// computation read alike; the counts are the nest's own.
pub fn normal_static_features(
    program: &ir::Program,
    nest: &Nest,
    root: &Loop,
    env: &ir::interp::Env,
    counts: Option<&ir::counts::NestCounts>,
) -> embeddings::NestFeatures {
    let normal = normal_form(program, nest);
    static_features_of(program, nest, root, normal.as_ref(), env, counts)
}

/// Static and performance features of a nest whose data was saved in `data_dir`
/// (the version tuning measures), read off its normal form `normal` ([`normal_form`]):
/// the time `time_s` per run is the normal form's ([`feature_time`]), the static
/// features and the cache model are the normal form's, the hardware `counters` are the
/// nest's own (`crate::counters`; empty without a PMU). Returns them with the static
/// counts they used.
pub fn nest_features(
    program: &ir::Program,
    nest: &Nest,
    normal: Option<&Normalized>,
    data_dir: &Path,
    time_s: f64,
    counters: &[CounterReading],
    machine: Option<&MachineInfo>,
) -> Option<(embeddings::NestFeatures, Option<ir::counts::NestCounts>)> {
    let root = nest_root(program, nest)?;
    let env = env_of(data_dir, nest, first_saved_version(data_dir, nest));
    let counts = ir::counts::nest_counts(program, nest.region, nest.root, &env, 50_000_000).ok();
    let (modelled, modelled_root) =
        normal.map_or((program, nest.root), |n| (&n.program, n.root.id));
    let cache = profiling::cachemodel::model_warm(
        modelled,
        nest.region,
        modelled_root,
        &env,
        &crate::profile::cache_specs(machine),
        MODEL_LIMIT,
    )
    .ok();
    let mut f = static_features_of(program, nest, root, normal, &env, counts.as_ref());
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
        let p = program_of(text);
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

    fn program_of(text: &str) -> ir::Program {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.c");
        std::fs::write(&path, text).unwrap();
        ir::load(&path.display().to_string(), &Default::default())
            .unwrap()
            .program
    }

    #[test]
    fn only_a_nest_written_out_of_its_normal_form_has_steps_to_it() {
        let ikj = program_of(&product(["i", "k", "j"]));
        assert_eq!(normal_recipe(&ikj, &ir::codegen::nests(&ikj)[0]), None);
        for order in [["i", "j", "k"], ["k", "j", "i"]] {
            let p = program_of(&product(order));
            let r = normal_recipe(&p, &ir::codegen::nests(&p)[0]).expect("steps to ikj");
            assert_eq!(r.steps.len(), 1, "{order:?}: {r:?}");
            assert!(
                matches!(r.steps[0], ir::transform::Step::Interchange { .. }),
                "{order:?}: {r:?}"
            );
        }
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

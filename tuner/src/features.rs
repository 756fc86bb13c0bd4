//! The features of a nest that retrieval and the database use: static features from
//! the IR, performance features from its baseline time, the cache model and the
//! machine description.

use embeddings::features::{add_performance, static_features, Measured};
use ir::codegen::Nest;
use ir::program::Loop;
use profiling::build::Toolchain;
use profiling::cutout::{env_of, first_saved_version};
use profiling::machine::{MachineInfo, MachineOptions};
use std::path::Path;

/// Accesses the cache model walks per nest before it samples.
const MODEL_LIMIT: u64 = 4_000_000;

/// The machine description (measured once per host, then cached).
pub fn machine_info(cache_root: &Path, tc: &Toolchain) -> Option<MachineInfo> {
    profiling::machine::machine(cache_root, tc, &MachineOptions::default()).ok()
}

/// The root loop of `nest`.
pub fn nest_root<'p>(program: &'p ir::Program, nest: &Nest) -> Option<&'p Loop> {
    program.find_loop(nest.region, nest.root)
}

/// Static and performance features of a nest whose data was saved in `data_dir`
/// (the version tuning measures), measured at `time_s` per run, with the static counts they used.
pub fn nest_features(
    program: &ir::Program,
    nest: &Nest,
    data_dir: &Path,
    time_s: f64,
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
    let mut f = static_features(program, nest, root, &env, counts.as_ref());
    add_performance(
        &mut f,
        &Measured {
            time_s,
            counts: counts.as_ref(),
            cache: cache.as_ref(),
            counters: &[],
        },
        machine,
    );
    Some((f, counts))
}

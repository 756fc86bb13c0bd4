//! [`NestBench`]: one nest's cutout set up for measuring — the nest alone on the data
//! its dry run saved, with a builder and a runner over it. Every workflow that measures
//! a nest (apply, search, db transfer, db eval, `Pipeline::measure`) sets it up here.

use crate::builder::CutoutBuilder;
use crate::run::DryRun;
use crate::runner::CutoutRunner;
use crate::target::Target;
use crate::Result;
use ir::codegen::Nest;
use ir::transform::Recipe;
use profiling::build::Toolchain;
use profiling::cutout::{Cutout, CutoutRun};
use profiling::measure::Measure;
use std::path::PathBuf;
use std::time::Duration;

/// How variants are measured: toolchain, timer settings, time limit per run, cache.
#[derive(Debug, Clone)]
pub struct Measuring {
    /// The compiler and flags.
    pub toolchain: Toolchain,
    /// Warmup, repetitions and stopping rule of a measurement.
    pub measure: Measure,
    /// A run (warmup and every repetition) is killed after this long.
    pub timeout: Duration,
    /// The cache folder (`.tunecache`).
    pub cache_root: PathBuf,
}

/// A nest's cutout on its saved data, ready to build and run variants.
pub struct NestBench<'a> {
    /// The program the nest belongs to.
    pub program: &'a ir::Program,
    /// The nest.
    pub nest: &'a Nest,
    /// The nest alone on its saved data.
    pub cutout: Cutout,
    /// How its variants are measured.
    pub measuring: &'a Measuring,
    builds: PathBuf,
    scratch: PathBuf,
}

impl<'a> NestBench<'a> {
    /// The cutout of `nest` from a finished dry run, built with the user's `cflags`.
    pub fn new(
        dry: &'a DryRun,
        nest: &'a Nest,
        cflags: &[String],
        measuring: &'a Measuring,
    ) -> NestBench<'a> {
        let program = &dry.parsed.program;
        NestBench {
            program,
            nest,
            cutout: Cutout::new(
                program.clone(),
                nest.clone(),
                dry.cache.data(),
                cflags.to_vec(),
            ),
            measuring,
            builds: dry.cache.root.join("cutouts"),
            scratch: dry.cache.root.join("scratch"),
        }
    }

    /// The nest as the tuning loop names it.
    pub fn target(&self) -> Target<'a> {
        Target::of(self.program, self.nest)
    }

    /// Builds variants of this nest.
    pub fn builder(&self) -> CutoutBuilder<'_> {
        CutoutBuilder {
            target: self.target(),
            cutout: &self.cutout,
            toolchain: &self.measuring.toolchain,
            dir: self.builds.clone(),
        }
    }

    /// Runs variants of this nest.
    pub fn runner(&self) -> CutoutRunner<'_> {
        CutoutRunner {
            cutout: &self.cutout,
            timeout: self.measuring.timeout,
            scratch: self.scratch.clone(),
        }
    }

    /// The hash of the untransformed nest's cutout source: records of a changed nest
    /// do not match.
    pub fn fingerprint(&self) -> String {
        blake3::hash(self.cutout.original().source.as_bytes()).to_hex()[..16].to_string()
    }

    /// The untransformed nest, built and measured as the measuring settings say; a
    /// build failure is the run's verdict.
    pub fn measure_original(&self) -> Result<CutoutRun> {
        self.measure_with(&crate::tune_loop::baseline_measure(&self.measuring.measure))
    }

    /// Whether each of `recipes` computes the nest's outputs in the user's order,
    /// products contracted into FMAs aside: the nest and the transformed nest, both
    /// built with `-ffp-contract=off` after the user's flags and run once on the saved
    /// data (the nest once for all), write the same bits. False where the recipe does
    /// not apply, a build or a run fails.
    ///
    /// gcc contracts `s += a * b` into one FMA where it keeps the loop scalar, and not
    /// where it vectorizes the products and adds them in order (correlation's
    /// `s += data[k][i] * data[k][j]`): a register tile, which adds every product in
    /// the original order with FMAs, then differs in the last bits from a program
    /// that computes the same sums in the same order.
    pub fn same_order(&self, recipes: &[&Recipe]) -> Result<Vec<bool>> {
        if recipes.is_empty() {
            return Ok(Vec::new());
        }
        let mut cutout = self.cutout.clone();
        cutout.cflags.push(profiling::build::NO_CONTRACTION.into());
        let m = self.measuring;
        // The bytes of each output of variant `v` so built; None where it fails.
        let outputs = |v: &profiling::cutout::Variant| -> Result<Option<Vec<Vec<u8>>>> {
            match cutout.build(&m.toolchain, v, &self.builds) {
                Ok((b, _)) => {
                    Ok(cutout.outputs(&b.exe, cutout.version, m.timeout, &self.scratch)?)
                }
                Err(profiling::Error::Compile { .. }) => Ok(None),
                Err(e) => Err(e.into()),
            }
        };
        let Some(nest) = outputs(&cutout.original())?.filter(|o| !o.is_empty()) else {
            return Ok(vec![false; recipes.len()]);
        };
        let t = self.target();
        recipes
            .iter()
            .map(
                |r| match ir::transform::apply(t.program, t.region, t.root, r) {
                    Ok(transformed) => Ok(outputs(&cutout.variant("candidate", &transformed))?
                        .as_ref()
                        == Some(&nest)),
                    Err(_) => Ok(false),
                },
            )
            .collect()
    }

    /// The untransformed nest's executable, built as the measuring settings say.
    pub fn original_exe(&self) -> Result<PathBuf> {
        let m = self.measuring;
        let (b, _) = self
            .cutout
            .build(&m.toolchain, &self.cutout.original(), &self.builds)?;
        Ok(b.exe)
    }

    /// The untransformed nest, built as the measuring settings say and measured with
    /// `measure`.
    pub fn measure_with(&self, measure: &Measure) -> Result<CutoutRun> {
        self.measure_variant(&self.cutout.original(), measure)
    }

    /// The nest transformed by `recipe`, built as the measuring settings say and
    /// measured with `measure` under the variant name `name`; None where the recipe does
    /// not apply. A build failure is the run's verdict.
    pub fn measure_recipe(
        &self,
        name: &str,
        recipe: &Recipe,
        measure: &Measure,
    ) -> Result<Option<CutoutRun>> {
        let t = self.target();
        let Ok(transformed) = ir::transform::apply(t.program, t.region, t.root, recipe) else {
            return Ok(None);
        };
        self.measure_variant(&self.cutout.variant(name, &transformed), measure)
            .map(Some)
    }

    fn measure_variant(
        &self,
        v: &profiling::cutout::Variant,
        measure: &Measure,
    ) -> Result<CutoutRun> {
        let m = self.measuring;
        let (run, _) = self.cutout.measure(
            &m.toolchain,
            v,
            self.cutout.version,
            measure,
            m.timeout,
            &self.builds,
            &self.scratch,
        )?;
        Ok(run)
    }
}

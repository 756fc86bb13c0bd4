//! Schedule search: per nest, propose recipes (a [`Strategy`] over the recipe space),
//! compile a batch of them in parallel, measure them one at a time on the nest's saved
//! data, verify them, and append every measurement to the record log. The search
//! resumes from the log: what was measured is never measured again.

use crate::records::{key, Record, RecordLog};
use crate::run::{dry_run, RunConfig};
use crate::{Error, Result};
use ir::program::{Loop, LoopKind, Node, Program};
use ir::transform::{apply, Recipe, Schedule, Step};
use profiling::build::Toolchain;
use profiling::cutout::{Cutout, Verdict};
use profiling::measure::Measure;
use profiling::phases::Phases;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A small seeded generator (xorshift64*): searches repeat exactly for a seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// The nest a search works on.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub program: &'a Program,
    pub region: usize,
    pub root: usize,
}

impl Target<'_> {
    fn current(&self, recipe: &Recipe) -> Option<Loop> {
        apply(self.program, self.region, self.root, recipe)
            .ok()
            .map(|t| t.root)
    }

    fn legal(&self, recipe: &Recipe) -> bool {
        apply(self.program, self.region, self.root, recipe).is_ok()
    }
}

/// Loops of a nest in preorder (root first) with their positions.
fn preorder(root: &Loop) -> Vec<&Loop> {
    let mut v = vec![root];
    v.extend(ir::program::loops(&root.body));
    v
}

/// (position, length) of every perfectly nested band of 1..=3 loops.
fn bands(root: &Loop) -> Vec<(usize, usize)> {
    let all = preorder(root);
    let mut out = Vec::new();
    for (p, l) in all.iter().enumerate() {
        let mut len = 1;
        let mut cur = *l;
        while let [Node::Loop(inner)] = cur.body.as_slice() {
            len += 1;
            cur = inner;
        }
        for m in 1..=len.min(3) {
            out.push((p, m));
        }
    }
    out
}

const TILE_SIZES: [i64; 5] = [8, 16, 32, 64, 128];

/// One random recipe, built stage by stage on the nest as transformed so far; every
/// step kept is legal.
pub fn sample(t: Target, rng: &mut Rng) -> Recipe {
    let mut recipe = Recipe::default();
    if t.current(&recipe).is_none() {
        return recipe;
    }
    // The nest as transformed so far: each candidate step is applied to it alone
    // (the same as applying the recipe with that step from the start, at the cost of
    // one step).
    let mut state = Sampled {
        program: t.program.clone(),
        root: t.root,
    };
    let try_push = |recipe: &mut Recipe, state: &mut Sampled, step: Step| -> bool {
        let one = Recipe {
            steps: vec![step.clone()],
        };
        match apply(&state.program, t.region, state.root, &one) {
            Ok(next) => {
                recipe.steps.push(step);
                state.root = next.root.id;
                state.program = next.program;
                true
            }
            Err(_) => false,
        }
    };
    // Fission of a loop whose body holds several statements or loops: it can turn an
    // imperfect nest (covariance's init / k-reduction / finalize) into perfect bands
    // that interchange and tiling then reorder.
    if rng.chance(0.3) {
        if let Some(root) = state.root_loop(t.region) {
            let split: Vec<usize> = preorder(&root)
                .iter()
                .enumerate()
                .filter(|(p, l)| {
                    *p > 0 && l.body.len() >= 2 && l.body.iter().any(|n| matches!(n, Node::Loop(_)))
                })
                .map(|(p, _)| p)
                .collect();
            if !split.is_empty() {
                let at = split[rng.below(split.len())];
                try_push(&mut recipe, &mut state, Step::Fission { at });
            }
        }
    }
    // Interchange.
    if rng.chance(0.4) {
        if let Some(root) = state.root_loop(t.region) {
            let multi: Vec<(usize, usize)> =
                bands(&root).into_iter().filter(|b| b.1 >= 2).collect();
            if !multi.is_empty() {
                let (at, m) = multi[rng.below(multi.len())];
                let mut order: Vec<usize> = (0..m).collect();
                while order.iter().enumerate().all(|(i, o)| i == *o) {
                    for i in (1..m).rev() {
                        order.swap(i, rng.below(i + 1));
                    }
                }
                try_push(&mut recipe, &mut state, Step::Interchange { at, order });
            }
        }
    }
    // Tiling, sometimes with a second level (tiles of tiles).
    if rng.chance(0.6) {
        if let Some(root) = state.root_loop(t.region) {
            let b = bands(&root);
            if !b.is_empty() {
                let (at, m) = b[rng.below(b.len())];
                let sizes: Vec<i64> = (0..m)
                    .map(|_| TILE_SIZES[rng.below(TILE_SIZES.len())])
                    .collect();
                let inner = if rng.chance(0.25) {
                    sizes.iter().map(|s| s / [2, 4][rng.below(2)]).collect()
                } else {
                    Vec::new()
                };
                try_push(&mut recipe, &mut state, Step::Tile { at, sizes, inner });
            }
        }
    }
    // Parallelization of an outermost parallel loop, sometimes collapsed with the
    // parallel loop right inside it.
    if rng.chance(0.8) {
        if let Some(root) = state.root_loop(t.region) {
            let all = preorder(&root);
            let maps: Vec<usize> = all
                .iter()
                .enumerate()
                .filter(|(_, l)| l.kind == LoopKind::Map)
                .map(|(p, _)| p)
                .collect();
            if let Some(&at) = maps.first() {
                let schedule = if rng.chance(0.8) {
                    Schedule::Static
                } else {
                    Schedule::Dynamic
                };
                let map_inside = matches!(all[at].body.as_slice(),
                    [Node::Loop(inner)] if inner.kind == LoopKind::Map);
                let collapse = (map_inside && rng.chance(0.3)).then_some(2);
                let par = |collapse| Step::Parallelize {
                    at,
                    schedule,
                    chunk: None,
                    collapse,
                };
                if !try_push(&mut recipe, &mut state, par(collapse)) && collapse.is_some() {
                    try_push(&mut recipe, &mut state, par(None));
                }
            }
        }
    }
    // Register tiling: unroll-and-jam of a loop that has loops inside (its copies land
    // in the innermost bodies), then the innermost reductions accumulate in scalars.
    if rng.chance(0.4) {
        if let Some(root) = state.root_loop(t.region) {
            let outer: Vec<usize> = preorder(&root)
                .iter()
                .enumerate()
                .filter(|(_, l)| {
                    !ir::program::loops(&l.body).is_empty() && l.pragmas.is_empty() && l.step == 1
                })
                .map(|(p, _)| p)
                .collect();
            if !outer.is_empty() {
                let at = outer[rng.below(outer.len())];
                let factor = [2, 4][rng.below(2)];
                try_push(&mut recipe, &mut state, Step::UnrollJam { at, factor });
            }
        }
    }
    if rng.chance(0.5) {
        if let Some(root) = state.root_loop(t.region) {
            let reductions: Vec<usize> = innermost(&root)
                .into_iter()
                .filter(|(p, l)| *p > 0 && l.kind == LoopKind::Reduction)
                .map(|(p, _)| p)
                .collect();
            // Every one (the jammed body and its remainder); replacing wraps a loop and
            // leaves the positions of the others as they are.
            for at in reductions.into_iter().rev() {
                try_push(&mut recipe, &mut state, Step::ScalarReplace { at });
            }
        }
    }
    // Vectorization and unrolling of innermost loops.
    for (p_stage, vectorize) in [(0.5, true), (0.3, false)] {
        if !rng.chance(p_stage) {
            continue;
        }
        if let Some(root) = state.root_loop(t.region) {
            let inner: Vec<usize> = innermost(&root)
                .into_iter()
                .filter(|(_, l)| l.pragmas.is_empty())
                .map(|(p, _)| p)
                .collect();
            if !inner.is_empty() {
                let at = inner[rng.below(inner.len())];
                let step = if vectorize {
                    Step::Vectorize {
                        at,
                        width: [None, None, Some(4), Some(8)][rng.below(4)],
                    }
                } else {
                    Step::Unroll {
                        at,
                        factor: [2, 4, 8][rng.below(3)],
                    }
                };
                try_push(&mut recipe, &mut state, step);
            }
        }
    }
    recipe
}

/// A nest while a recipe for it is sampled.
struct Sampled {
    program: Program,
    /// The id of the nest's root loop in `program`.
    root: usize,
}

impl Sampled {
    fn root_loop(&self, region: usize) -> Option<Loop> {
        ir::program::loops(&self.program.regions.get(region)?.body)
            .into_iter()
            .find(|l| l.id == self.root)
            .cloned()
    }
}

/// Innermost loops of a nest with their positions.
fn innermost(root: &Loop) -> Vec<(usize, &Loop)> {
    preorder(root)
        .into_iter()
        .enumerate()
        .filter(|(_, l)| ir::program::loops(&l.body).is_empty())
        .collect()
}

/// Which recipe to try next.
pub trait Strategy {
    fn name(&self) -> &'static str;
    /// A recipe to measure, given the verified measurements so far (recipe, median s).
    fn propose(&mut self, t: Target, measured: &[(Recipe, f64)]) -> Recipe;
}

/// Uniform samples of the recipe space.
pub struct RandomStrategy {
    pub rng: Rng,
}

impl Strategy for RandomStrategy {
    fn name(&self) -> &'static str {
        "random"
    }

    fn propose(&mut self, t: Target, _: &[(Recipe, f64)]) -> Recipe {
        sample(t, &mut self.rng)
    }
}

/// Mutations of the fastest recipes so far (tournament selection), with random
/// samples while the population is small.
pub struct EvolutionaryStrategy {
    pub rng: Rng,
    pub population: usize,
}

impl EvolutionaryStrategy {
    fn mutate(&mut self, parent: &Recipe) -> Recipe {
        let mut r = parent.clone();
        if r.steps.is_empty() {
            return r;
        }
        let i = self.rng.below(r.steps.len());
        match (&mut r.steps[i], self.rng.below(3)) {
            (Step::Tile { sizes, .. }, 0 | 1) => {
                let k = self.rng.below(sizes.len());
                sizes[k] = TILE_SIZES[self.rng.below(TILE_SIZES.len())];
            }
            (Step::Unroll { factor, .. }, 0 | 1) => *factor = [2, 4, 8][self.rng.below(3)],
            (Step::Parallelize { schedule, .. }, 0) => {
                *schedule = if *schedule == Schedule::Static {
                    Schedule::Dynamic
                } else {
                    Schedule::Static
                }
            }
            _ => {
                r.steps.truncate(i);
            }
        }
        r
    }
}

impl Strategy for EvolutionaryStrategy {
    fn name(&self) -> &'static str {
        "evolutionary"
    }

    fn propose(&mut self, t: Target, measured: &[(Recipe, f64)]) -> Recipe {
        if measured.len() < self.population || self.rng.chance(0.15) {
            return sample(t, &mut self.rng);
        }
        let mut ranked: Vec<&(Recipe, f64)> = measured.iter().collect();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        ranked.truncate(self.population);
        for _ in 0..20 {
            let a = ranked[self.rng.below(ranked.len())];
            let b = ranked[self.rng.below(ranked.len())];
            let parent = if a.1 <= b.1 { &a.0 } else { &b.0 };
            let child = self.mutate(parent);
            if t.legal(&child) {
                return child;
            }
        }
        sample(t, &mut self.rng)
    }
}

pub fn strategy(name: &str, seed: u64) -> Result<Box<dyn Strategy>> {
    match name {
        "random" => Ok(Box::new(RandomStrategy {
            rng: Rng::new(seed),
        })),
        "evolutionary" => Ok(Box::new(EvolutionaryStrategy {
            rng: Rng::new(seed),
            population: 8,
        })),
        other => Err(Error::Input(format!(
            "unknown strategy '{other}' (random or evolutionary)"
        ))),
    }
}

#[derive(Debug, Clone)]
pub struct SearchConfig {
    pub run: RunConfig,
    /// Candidate measurements per nest (the baseline not counted), over all runs.
    pub budget: usize,
    pub strategy: String,
    pub seed: u64,
    pub measure: Measure,
    pub timeout: Duration,
    /// Candidates compiled in parallel per batch.
    pub jobs: usize,
    /// Wall time per nest for this run (compiling and measuring candidates); the search
    /// of a nest stops at whichever of `budget` and this comes first.
    pub time_limit: Option<Duration>,
}

/// The outcome for one nest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NestResult {
    pub nest: String,
    /// Region index and root loop id of the nest in the untransformed program.
    pub region: usize,
    pub root: usize,
    pub baseline_s: f64,
    pub best_s: f64,
    pub speedup: f64,
    pub best: Recipe,
    /// Candidates measured (all runs of the search), and how many of them verified.
    pub measured: usize,
    pub verified: usize,
    /// Candidates measured by this run.
    pub new: usize,
    /// Seconds this run spent on the nest.
    pub seconds: f64,
}

/// What a search found, with the program it searched.
#[derive(Debug, Clone)]
pub struct Searched {
    pub program: Program,
    pub results: Vec<NestResult>,
    /// The dry run's saved data (inputs and reference outputs of every nest).
    pub data_dir: std::path::PathBuf,
    /// The record log of the program.
    pub records: std::path::PathBuf,
}

impl Searched {
    /// The program's source with each nest's best recipe applied (see
    /// [`ir::emit::tuned_source`]), and whether it needs OpenMP.
    pub fn tuned_source(&self) -> Result<(String, bool)> {
        let nests: Vec<(usize, usize, Recipe)> = self
            .results
            .iter()
            .map(|r| (r.region, r.root, r.best.clone()))
            .collect();
        let (program, openmp) = ir::emit::apply_recipes(&self.program, &nests)
            .map_err(|e| Error::Failed(format!("re-applying the best recipes: {e}")))?;
        let text = std::fs::read_to_string(&self.program.file)
            .map_err(|e| Error::Input(format!("{}: {e}", self.program.file)))?;
        let out =
            ir::emit::tuned_source(&text, &program).map_err(|e| Error::Failed(e.to_string()))?;
        Ok((out, openmp))
    }
}

fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// Runs the search over every nest of the program.
pub fn search(cfg: &SearchConfig) -> Result<Searched> {
    let mut run = cfg.run.clone();
    run.save_versions = 1;
    let dry = dry_run(&run, &Phases::new())?;
    if dry.summary.exit_code != 0 || dry.summary.saved.as_ref().is_none_or(|s| s.failed) {
        return Err(Error::Failed(format!(
            "{}: the dry run did not finish normally",
            dry.summary.file
        )));
    }
    let program = &dry.parsed.program;
    let tc: &Toolchain = &cfg.run.toolchain;
    let machine = crate::database::host();
    let compiler = tc.version()?;
    let mut log = RecordLog::open(&dry.cache.root.join("records.jsonl"))?;
    let builds = dry.cache.root.join("cutouts");
    let scratch = dry.cache.root.join("scratch");
    let mut results = Vec::new();
    for nest in &dry.nests {
        let started = std::time::Instant::now();
        let out_of_time = || cfg.time_limit.is_some_and(|t| started.elapsed() >= t);
        let cutout = Cutout::new(
            program.clone(),
            nest.clone(),
            dry.cache.data(),
            cfg.run.args.cflags.clone(),
        );
        let original = cutout.original();
        let fingerprint = blake3::hash(original.source.as_bytes()).to_hex()[..16].to_string();
        let target = Target {
            program,
            region: nest.region,
            root: nest.root,
        };
        let mut strat = strategy(
            &cfg.strategy,
            cfg.seed ^ blake3::hash(nest.name.as_bytes()).as_bytes()[0] as u64,
        )?;
        let record =
            |recipe: &Recipe, verdict: Verdict, samples: Vec<f64>, median: f64, strat: &str| {
                Record {
                    program: program.name.clone(),
                    nest: nest.name.clone(),
                    fingerprint: fingerprint.clone(),
                    recipe: recipe.clone(),
                    verdict,
                    median_s: median,
                    samples,
                    machine: machine.clone(),
                    compiler: compiler.clone(),
                    strategy: strat.to_string(),
                    unix_ms: unix_ms(),
                }
            };
        let base_key = key(&nest.name, &fingerprint, &Recipe::default());
        if !log.contains(&base_key) {
            let (r, _) = cutout.measure(
                tc,
                &original,
                0,
                &cfg.measure,
                cfg.timeout,
                &builds,
                &scratch,
            )?;
            log.append(record(
                &Recipe::default(),
                r.verdict,
                r.samples.clone(),
                r.stats.median,
                "baseline",
            ))?;
        }
        let mine = |log: &RecordLog| -> Vec<Record> {
            log.records()
                .iter()
                .filter(|r| r.nest == nest.name && r.fingerprint == fingerprint)
                .cloned()
                .collect()
        };
        let mut new = 0;
        let mut stale = 0;
        loop {
            let done = mine(&log);
            let measured = done.iter().filter(|r| !r.recipe.steps.is_empty()).count();
            if measured >= cfg.budget || stale > 200 || out_of_time() {
                break;
            }
            let verified: Vec<(Recipe, f64)> = done
                .iter()
                .filter(|r| r.verdict == Verdict::Verified && !r.recipe.steps.is_empty())
                .map(|r| (r.recipe.clone(), r.median_s))
                .collect();
            // A batch of distinct, unmeasured, legal, non-empty recipes.
            let want = cfg.jobs.max(1).min(cfg.budget - measured);
            let mut batch: Vec<Recipe> = Vec::new();
            let mut tries = 0;
            while batch.len() < want && tries < 50 {
                tries += 1;
                let r = strat.propose(target, &verified);
                let k = key(&nest.name, &fingerprint, &r);
                if r.steps.is_empty() || log.contains(&k) || batch.contains(&r) {
                    continue;
                }
                batch.push(r);
            }
            if batch.is_empty() {
                stale += tries;
                continue;
            }
            stale = 0;
            // Compile in parallel, measure one at a time.
            let variants: Vec<_> = batch
                .iter()
                .map(|r| {
                    apply(program, nest.region, nest.root, r)
                        .map(|t| cutout.variant("candidate", &t))
                })
                .collect();
            let built: Vec<_> = variants
                .par_iter()
                .map(|v| v.as_ref().ok().map(|v| cutout.build(tc, v, &builds)))
                .collect();
            for (recipe, b) in batch.iter().zip(built) {
                if out_of_time() {
                    break;
                }
                let (verdict, samples, median) = match b {
                    Some(Ok((b, _))) => {
                        let r = cutout.run(
                            &b.exe,
                            "candidate",
                            0,
                            &cfg.measure,
                            cfg.timeout,
                            &scratch,
                        )?;
                        (r.verdict, r.samples, r.stats.median)
                    }
                    Some(Err(profiling::Error::Compile { first_error, .. })) => (
                        Verdict::BuildFailed {
                            message: first_error,
                        },
                        Vec::new(),
                        0.0,
                    ),
                    Some(Err(e)) => return Err(e.into()),
                    None => continue,
                };
                log.append(record(recipe, verdict, samples, median, strat.name()))?;
                new += 1;
            }
        }
        let done = mine(&log);
        let baseline = done
            .iter()
            .find(|r| r.recipe.steps.is_empty())
            .map_or(0.0, |r| r.median_s);
        let cands: Vec<&Record> = done.iter().filter(|r| !r.recipe.steps.is_empty()).collect();
        let best = cands
            .iter()
            .filter(|r| r.verdict == Verdict::Verified && r.median_s > 0.0)
            .min_by(|a, b| a.median_s.total_cmp(&b.median_s));
        let (best_s, best_recipe) = match best {
            Some(b) if b.median_s < baseline => (b.median_s, b.recipe.clone()),
            _ => (baseline, Recipe::default()),
        };
        results.push(NestResult {
            nest: nest.name.clone(),
            region: nest.region,
            root: nest.root,
            baseline_s: baseline,
            best_s,
            speedup: if best_s > 0.0 { baseline / best_s } else { 1.0 },
            best: best_recipe,
            measured: cands.len(),
            verified: cands
                .iter()
                .filter(|r| r.verdict == Verdict::Verified)
                .count(),
            new,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    Ok(Searched {
        program: program.clone(),
        results,
        data_dir: dry.cache.data(),
        records: dry.cache.root.join("records.jsonl"),
    })
}

/// The result table.
pub fn render(results: &[NestResult]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<8}{:>14}{:>12}{:>9}{:>10}  best recipe",
        "nest", "baseline ms", "best ms", "speedup", "verified"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<8}{:>14.4}{:>12.4}{:>8.2}x{:>6}/{:<3}  {}",
            r.nest,
            r.baseline_s * 1e3,
            r.best_s * 1e3,
            r.speedup,
            r.verified,
            r.measured,
            serde_json::to_string(&r.best.steps).expect("steps serialize")
        );
    }
    out
}

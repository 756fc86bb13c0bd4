//! Judging retrieval: `tune db eval`, leave-one-program-out. For each program of the
//! suite that the database holds, a model is trained without it, and each of its nests
//! gets the first K distinct re-fitted best recipes along each ranker's order of the
//! other programs' entries (nearest by embedding; nearest by standardized raw features;
//! a random order), measured on the nest's saved data against its baseline. The best
//! known speedup is the nest's own search result measured the same way, or any
//! ranker's if faster.
//!
//! One measurement per recipe moves by tens of percent from run to run, and the best
//! known is the largest of about ten of them, so a pick as good as the best misses
//! whenever the best's one measurement ran high. The contenders that decide a nest's
//! hits (every recipe whose one measurement came within [`SETTLE_SHARE`] of the
//! nest's best) are therefore measured again, `rounds` times in rotation with the
//! baseline ([`Contest`]), and hits are judged on their medians. So is each ranker's
//! own fastest pick by its one measurement, wherever that fell: a disturbance of the
//! machine during one measurement can halve it, and a pick left out of the contest
//! would be judged on that one run while the best known is a median. The rounds run over
//! every held-out nest in turn, after all of them were measured once, so that a nest's
//! rounds lie minutes apart and a disturbance of the machine falls on one. Several
//! seeds are evaluated in one run: each trains its own fold models and draws its own
//! random order, and a recipe picked under several seeds is measured once for all.

use super::speedups::{Contest, Speedups};
use super::{prepare, SuiteSelection};
use crate::events::{Event, Events};
use crate::nest_bench::{Measuring, NestBench};
use crate::ranker::{
    EmbeddingRanker, FusedRanker, Query, RandomRanker, Ranker, RankerKind, RawFeatureRanker,
    VoteRanker,
};
use crate::retrieve::{rank_by_isa, walk};
use crate::{Error, Result};
use embeddings::db::{Database, Entry};
use embeddings::ensemble::Ensemble;
use ir::transform::Recipe;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One retrieval method's outcome on one held-out nest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MethodOutcome {
    /// The entries picked: (program, nest, distance).
    pub neighbours: Vec<(String, String, f32)>,
    /// Speedups of the transferred recipes (0 = refused, failed or wrong): the median of
    /// the rotation where the recipe was a contender, else its one measurement.
    pub speedups: Vec<f64>,
    /// Each recipe's first measurement.
    #[serde(default)]
    pub once: Vec<f64>,
    /// max(1, best transferred speedup): what `tune apply` would keep.
    pub kept: f64,
    /// kept ≥ 90% of the best speedup known for the nest.
    pub hit: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
/// One held-out nest.
pub struct EvalRow {
    /// Its program.
    pub program: String,
    /// The nest.
    pub nest: String,
    /// The best speedup known for it.
    pub best_known: f64,
    /// The nest's own best recipe (from its search) measured in this evaluation.
    #[serde(default)]
    pub search_best: f64,
    /// The speedup the database records for that recipe (another session's measurement).
    #[serde(default)]
    pub recorded: f64,
    /// What each ranker reached.
    pub methods: BTreeMap<RankerKind, MethodOutcome>,
    /// Recipes measured again in rotation to judge the hits.
    #[serde(default)]
    pub contenders: usize,
    /// Each contender's speedup in each round, fastest once first.
    #[serde(default)]
    pub rounds: Vec<Vec<f64>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
/// What `tune db eval` found.
pub struct EvalReport {
    /// Candidates per nest and ranker.
    pub k: usize,
    /// Seed of the fold models' training and of the random order.
    #[serde(default)]
    pub seed: u64,
    /// Rounds of the rotation that judged the hits (0: one measurement per recipe).
    #[serde(default)]
    pub rounds: usize,
    /// One row per held-out nest.
    pub rows: Vec<EvalRow>,
    /// Ranker → share of held-out nests with a hit.
    pub hit_rate: BTreeMap<RankerKind, f64>,
    /// Ranker → share of hits among the held-out nests whose best known speedup is at
    /// least [`GAIN`].
    #[serde(default)]
    pub hit_rate_gaining: BTreeMap<RankerKind, f64>,
    /// How many held-out nests' best known speedup is at least [`GAIN`].
    #[serde(default)]
    pub gaining: usize,
    /// Held-out nests of loop-order variants whose original's nest was held out too.
    #[serde(default)]
    pub variants: usize,
    /// Ranker → share of those variants whose first pick's recipe is of the family (the
    /// set of step kinds) of the original's first pick ([`variant_agreement`]).
    #[serde(default)]
    pub variant_agreement: BTreeMap<RankerKind, f64>,
    /// Variants measured (in a run of several seeds, by all of them together).
    pub measured: usize,
    /// Wall time (seconds).
    pub seconds: f64,
}

#[derive(Debug, Clone)]
/// How to evaluate.
pub struct EvalConfig {
    /// The database.
    pub db: PathBuf,
    /// Which programs of which suite.
    pub suite: SuiteSelection,
    /// Candidates per nest and ranker.
    pub k: usize,
    /// Seeds of training and of the random order: one report each.
    pub seeds: Vec<u64>,
    /// Rounds of the rotation of each nest's contenders (0: judge on one measurement).
    pub rounds: usize,
    /// Each fold's model ([`embeddings::embed::model_config`], or a variant of it).
    pub model: models::ModelConfig,
    /// Models per fold and seed ([`Ensemble`]; 1: one model).
    pub ensemble: usize,
    /// How each fold's model is trained (its seed aside).
    pub train: models::TrainOptions,
    /// How candidates are measured.
    pub measuring: Measuring,
}

/// A recipe whose one measurement reached this share of the nest's best one is a
/// contender, measured again in rotation.
pub const SETTLE_SHARE: f64 = 0.7;

/// At most this many contenders per nest, the fastest once first.
pub const SETTLE_MOST: usize = 6;

/// Leave-one-program-out (see the module documentation): one report per seed, in the
/// order of `cfg.seeds`; one [`Event::Done`] line per held-out nest and seed.
pub fn evaluate(cfg: &EvalConfig, events: &Events) -> Result<Vec<EvalReport>> {
    let started = std::time::Instant::now();
    let db = Database::load(&cfg.db).map_err(Error::ReadDatabase)?;
    let suite = cfg.suite.load()?;
    let seeds = if cfg.seeds.is_empty() {
        vec![cfg.train.seed]
    } else {
        cfg.seeds.clone()
    };
    let mut rows: Vec<Vec<EvalRow>> = vec![Vec::new(); seeds.len()];
    let mut pending = Vec::new();
    let mut measured = 0;
    // One random order generator per seed for the whole evaluation.
    let mut random: Vec<RandomRanker> = seeds
        .iter()
        .map(|&s| RandomRanker::new(s, Vec::new()))
        .collect();
    // As `tune apply` ranks: entries measured with this machine's vector ISA first.
    let isa = embeddings::db::vector_isa(crate::sizing::Cpu::host().flags);
    for p in cfg.suite.programs(&suite) {
        let held = held_entries(&db, &p.name, isa);
        if held.is_empty() {
            continue;
        }
        // The program is held out with its loop-order variants.
        let out = embeddings::db::origin(&p.name);
        let train: Vec<&Entry> = db.entries.iter().filter(|e| e.origin() != out).collect();
        let mut models = Vec::new();
        for &seed in &seeds {
            let opts = models::TrainOptions {
                seed,
                ..cfg.train.clone()
            };
            models.push(Ensemble::train(&train, &cfg.model, &opts, cfg.ensemble)?);
        }
        let mut embedding = Vec::new();
        for m in &models {
            embedding.push(EmbeddingRanker::new(m, &db, false)?);
        }
        let mut embedding_votes: Vec<VoteRanker> = embedding
            .iter()
            .map(|e| VoteRanker::new(Box::new(e.clone()), cfg.k))
            .collect();
        for (r, e) in random.iter_mut().zip(&embedding) {
            r.set_space(e.vectors().to_vec());
        }
        let mut raw = RawFeatureRanker::new(&train, &db);
        let mut raw_votes = VoteRanker::new(Box::new(raw.clone()), cfg.k);
        let mut fused_plain: Vec<FusedRanker> = embedding
            .iter()
            .map(|e| FusedRanker::embedding_and_raw(e, &raw))
            .collect();
        let mut fused_votes: Vec<VoteRanker> = embedding
            .iter()
            .map(|e| VoteRanker::new(Box::new(FusedRanker::embedding_and_raw(e, &raw)), cfg.k))
            .collect();
        // The held-out program's nests and saved data, as the search left them.
        let (args, dry) = prepare(&suite, p, cfg.suite.preset, &cfg.measuring)?;
        for me in held {
            let e = &db.entries[me];
            let Some(nest) = dry.nests.iter().find(|n| n.name == e.nest) else {
                continue;
            };
            let bench = NestBench::new(&dry, nest, &args.cflags, &cfg.measuring);
            let mut picked = Vec::new();
            for s in 0..seeds.len() {
                let rankers: [&mut dyn Ranker; RankerKind::ALL.len()] = [
                    &mut embedding[s],
                    &mut raw,
                    &mut random[s],
                    &mut embedding_votes[s],
                    &mut raw_votes,
                    &mut fused_plain[s],
                    &mut fused_votes[s],
                ];
                picked.push(picks(&db, &bench, me, rankers, cfg.k, isa)?);
            }
            let (measured_once, runs) = measure_once(&db, &bench, me, picked, cfg.rounds)?;
            measured += runs;
            let line = format!(
                "{} {}: {} recipes measured once, {} contenders",
                e.program,
                e.nest,
                measured_once.all.len(),
                measured_once.contenders.len()
            );
            events(Event::Done { line: &line });
            pending.push(measured_once);
        }
    }
    // The contests' rounds, each over every nest in turn, so that a nest's rounds lie
    // minutes apart.
    for round in 0..cfg.rounds {
        let mut runs = 0;
        for p in pending.iter_mut() {
            if let Some(c) = &mut p.contest {
                runs += c.round()?;
            }
        }
        measured += runs;
        let line = format!(
            "round {} of {}: {runs} runs over {} nests",
            round + 1,
            cfg.rounds,
            pending.len()
        );
        events(Event::Done { line: &line });
    }
    for p in pending {
        for (s, row) in finish(&db, p).into_iter().enumerate() {
            let line = if seeds.len() > 1 {
                format!("seed {}: {}", seeds[s], row.line())
            } else {
                row.line()
            };
            events(Event::Done { line: &line });
            rows[s].push(row);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(seeds
        .iter()
        .zip(rows)
        .map(|(&seed, rows)| {
            let mut report = EvalReport::new(cfg.k, rows, measured, seconds);
            report.seed = seed;
            report.rounds = cfg.rounds;
            report.add_variant_agreement(&db);
            report
        })
        .collect())
}

impl EvalRow {
    /// The progress line of a held-out nest: its best known speedup, each ranker's.
    pub fn line(&self) -> String {
        format!(
            "{} {}: best known {:.2}x; {}",
            self.program,
            self.nest,
            self.best_known,
            self.methods
                .iter()
                .map(|(k, m)| format!("{k} {:.2}x", m.kept))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Where a best known speedup counts as a gain worth transferring.
pub const GAIN: f64 = 1.1;

impl EvalReport {
    /// The report of `rows`, with every ranker's hit rates.
    pub fn new(k: usize, rows: Vec<EvalRow>, measured: usize, seconds: f64) -> EvalReport {
        let rate = |rows: &[&EvalRow], kind: RankerKind| {
            if rows.is_empty() {
                0.0
            } else {
                rows.iter()
                    .filter(|r| r.methods.get(&kind).is_some_and(|m| m.hit))
                    .count() as f64
                    / rows.len() as f64
            }
        };
        let all: Vec<&EvalRow> = rows.iter().collect();
        let gaining: Vec<&EvalRow> = rows.iter().filter(|r| r.best_known >= GAIN).collect();
        EvalReport {
            k,
            seed: 0,
            rounds: 0,
            hit_rate: RankerKind::ALL
                .iter()
                .map(|&x| (x, rate(&all, x)))
                .collect(),
            hit_rate_gaining: RankerKind::ALL
                .iter()
                .map(|&x| (x, rate(&gaining, x)))
                .collect(),
            gaining: gaining.len(),
            variants: 0,
            variant_agreement: BTreeMap::new(),
            rows,
            measured,
            seconds,
        }
    }
}

/// The step kinds of a recipe (JSON of a role recipe), sorted and distinct: its family.
pub fn recipe_family(json: &str) -> Vec<String> {
    let mut out: Vec<String> = serde_json::from_str::<ir::canonical::RoleRecipe>(json)
        .map(|r| r.steps.iter().map(|s| s.step.kind()).collect())
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

impl EvalReport {
    /// Sets [`EvalReport::variants`] and [`EvalReport::variant_agreement`]: per ranker,
    /// the share of rows of loop-order variants (`db::origin` differs from the program)
    /// whose first pick's recipe family equals that of the row of the original's same
    /// nest (both held out in one fold, so both rank the same entries).
    pub fn add_variant_agreement(&mut self, db: &Database) {
        let family = |row: &EvalRow, k: RankerKind| -> Option<Vec<String>> {
            let (p, n, _) = row.methods.get(&k)?.neighbours.first()?;
            let e = db
                .entries
                .iter()
                .find(|e| &e.program == p && &e.nest == n)?;
            Some(recipe_family(e.best()?))
        };
        let pairs: Vec<(&EvalRow, &EvalRow)> = self
            .rows
            .iter()
            .filter(|r| embeddings::db::origin(&r.program) != r.program)
            .filter_map(|r| {
                let o = embeddings::db::origin(&r.program);
                let orig = self
                    .rows
                    .iter()
                    .find(|x| x.program == o && x.nest == r.nest)?;
                Some((r, orig))
            })
            .collect();
        self.variants = pairs.len();
        self.variant_agreement = RankerKind::ALL
            .iter()
            .map(|&k| {
                let same = pairs
                    .iter()
                    .filter(|(v, o)| {
                        let a = family(v, k);
                        a.is_some() && a == family(o, k)
                    })
                    .count();
                (
                    k,
                    if pairs.is_empty() {
                        0.0
                    } else {
                        same as f64 / pairs.len() as f64
                    },
                )
            })
            .collect();
    }
}

/// The entries of `program` to hold out, one per nest: where machines of several kinds
/// searched a nest, the entry of the vector ISA `isa` (the features a query on this
/// machine would have), else the first.
fn held_entries(db: &Database, program: &str, isa: &str) -> Vec<usize> {
    let mut held: Vec<usize> = Vec::new();
    for (i, e) in db.entries.iter().enumerate() {
        if e.program != program {
            continue;
        }
        match held.iter_mut().find(|h| db.entries[**h].nest == e.nest) {
            Some(h) if !db.entries[*h].isa_matches(isa) && e.isa_matches(isa) => *h = i,
            Some(_) => {}
            None => held.push(i),
        }
    }
    held
}

/// What one ranker picked for a held-out nest.
#[derive(Clone)]
struct Picks {
    /// The entries: (program, nest, distance).
    neighbours: Vec<(String, String, f32)>,
    /// Their recipes, re-fitted to the nest.
    recipes: Vec<Recipe>,
}

/// Each ranker's first K distinct re-fitted recipes for the held-out entry `me`, from
/// the other programs' entries ranked as [`rank_by_isa`] does for `isa`.
fn picks(
    db: &Database,
    bench: &NestBench,
    me: usize,
    rankers: [&mut dyn Ranker; RankerKind::ALL.len()],
    k: usize,
    isa: &str,
) -> Result<BTreeMap<RankerKind, Picks>> {
    let e = &db.entries[me];
    let usable = |x: &Entry| x.origin() != e.origin() && x.best().is_some();
    let mut out = BTreeMap::new();
    for ranker in rankers {
        let order = rank_by_isa(ranker, db, Query::Entry(me), &usable, isa)?;
        let picks: Vec<_> = walk(
            db,
            order,
            k,
            bench.program,
            bench.nest.region,
            bench.nest.root,
        )
        .into_iter()
        .filter(|v| v.is_pick())
        .collect();
        out.insert(
            ranker.kind(),
            Picks {
                neighbours: picks
                    .iter()
                    .map(|v| {
                        let n = &db.entries[v.index];
                        (n.program.clone(), n.nest.clone(), v.distance)
                    })
                    .collect(),
                recipes: picks.into_iter().map(|v| v.recipe).collect(),
            },
        );
    }
    Ok(out)
}

/// The contenders among recipes measured once with speedups `once`: those faster than
/// the baseline and within [`SETTLE_SHARE`] of the fastest, at most [`SETTLE_MOST`],
/// fastest first; then the recipes of `deciding` (each ranker's fastest pick) not among
/// them, in their order.
fn contenders(once: &[f64], deciding: &[usize]) -> Vec<usize> {
    let best = once.iter().copied().fold(1.0, f64::max);
    let mut out: Vec<usize> = (0..once.len())
        .filter(|&i| once[i] > 1.0 && once[i] >= SETTLE_SHARE * best)
        .collect();
    out.sort_by(|&a, &b| once[b].total_cmp(&once[a]));
    out.truncate(SETTLE_MOST);
    for &i in deciding {
        if i < once.len() && !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// For every seed's every ranker, the index into `all` of its picks' fastest by one
/// measurement (`once`), each index once, in the order met; none for a ranker whose
/// picks all failed (speedup 0: refused, crashed or computed something else, which
/// rounds would not change).
fn fastest_picks(
    picked: &[BTreeMap<RankerKind, Picks>],
    all: &[Recipe],
    once: &[f64],
) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for p in picked.iter().flat_map(|m| m.values()) {
        let best = p
            .recipes
            .iter()
            .filter_map(|r| all.iter().position(|x| x == r))
            .filter(|&i| once[i] > 0.0)
            // The last maximum of the reversed picks: on a tie, the earlier pick.
            .rev()
            .max_by(|&a, &b| once[a].total_cmp(&once[b]));
        if let Some(i) = best {
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    out
}

/// A held-out nest measured once, its contest still to run.
struct Pending {
    /// The held-out entry.
    me: usize,
    /// Each seed's picks.
    picked: Vec<BTreeMap<RankerKind, Picks>>,
    /// The nest's own best recipes from its searches.
    own: Vec<Recipe>,
    /// Every distinct recipe picked or own.
    all: Vec<Recipe>,
    /// Each one's speedup measured once.
    once: Vec<f64>,
    /// The contenders (indices into `all`) and their contest.
    contenders: Vec<usize>,
    contest: Option<Contest>,
}

/// The held-out entry `me`, with each seed's `picked`: every picked recipe and the
/// nest's own best recipes from its searches (one per machine that searched it)
/// measured once against one baseline (the speedup the database records was measured
/// in another session, against a baseline of its own), and the contest of its
/// contenders set up where there are `rounds` to run; with the number of runs that
/// measuring took.
fn measure_once(
    db: &Database,
    bench: &NestBench,
    me: usize,
    picked: Vec<BTreeMap<RankerKind, Picks>>,
    rounds: usize,
) -> Result<(Pending, usize)> {
    let mut speedups = Speedups::new(bench)?;
    let e = &db.entries[me];
    let searched: Vec<(usize, f32)> = (0..db.entries.len())
        .filter(|&i| db.entries[i].program == e.program && db.entries[i].nest == e.nest)
        .map(|i| (i, 0.0))
        .collect();
    let n = searched.len();
    let own: Vec<Recipe> = walk(
        db,
        searched,
        n,
        bench.program,
        bench.nest.region,
        bench.nest.root,
    )
    .into_iter()
    .filter(|v| v.is_pick())
    .map(|v| v.recipe)
    .collect();
    let mut all: Vec<Recipe> = Vec::new();
    let every = picked
        .iter()
        .flat_map(|m| m.values())
        .flat_map(|p| p.recipes.iter());
    for r in every.chain(own.iter()) {
        if !all.contains(r) {
            all.push(r.clone());
        }
    }
    let once = speedups.of(&all)?;
    let (contenders, contest) = if rounds > 0 {
        let c = contenders(&once, &fastest_picks(&picked, &all, &once));
        let recipes: Vec<Recipe> = c.iter().map(|&i| all[i].clone()).collect();
        let contest = if recipes.is_empty() {
            None
        } else {
            Some(speedups.contest(&recipes)?)
        };
        (c, contest)
    } else {
        (Vec::new(), None)
    };
    let pending = Pending {
        me,
        picked,
        own,
        all,
        once,
        contenders,
        contest,
    };
    Ok((pending, speedups.measured))
}

/// The rows of a held-out nest whose contest ran, one per seed. A recipe's speedup is
/// its contest's median where it was a contender, else its one measurement. The best
/// known is the largest speedup of all of them, the same for every seed.
fn finish(db: &Database, p: Pending) -> Vec<EvalRow> {
    let e = &db.entries[p.me];
    let mut value = p.once.clone();
    if let Some(c) = &p.contest {
        for (&i, m) in p.contenders.iter().zip(c.medians()) {
            value[i] = m;
        }
    }
    let at = |r: &Recipe| p.all.iter().position(|x| x == r).map_or(0.0, |i| value[i]);
    let first = |r: &Recipe| p.all.iter().position(|x| x == r).map_or(0.0, |i| p.once[i]);
    let search_best = p.own.iter().map(at).fold(1.0f64, f64::max);
    let methods: Vec<BTreeMap<RankerKind, MethodOutcome>> = p
        .picked
        .into_iter()
        .map(|m| {
            m.into_iter()
                .map(|(kind, picks)| {
                    let speedups: Vec<f64> = picks.recipes.iter().map(at).collect();
                    let kept = speedups.iter().copied().fold(1.0, f64::max);
                    let outcome = MethodOutcome {
                        neighbours: picks.neighbours,
                        once: picks.recipes.iter().map(first).collect(),
                        speedups,
                        kept,
                        hit: false,
                    };
                    (kind, outcome)
                })
                .collect()
        })
        .collect();
    let best_known = methods
        .iter()
        .flat_map(|m| m.values())
        .map(|m| m.kept)
        .fold(search_best, f64::max);
    methods
        .into_iter()
        .map(|mut methods| {
            for m in methods.values_mut() {
                m.hit = m.kept >= 0.9 * best_known;
            }
            EvalRow {
                program: e.program.clone(),
                nest: e.nest.clone(),
                best_known,
                search_best,
                recorded: e.speedup(),
                methods,
                contenders: p.contenders.len(),
                rounds: p
                    .contest
                    .as_ref()
                    .map_or(Vec::new(), |c| c.rounds().to_vec()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflows::test_entry::entry;
    use ir::canonical::{Role, RoleRecipe, RoleStep};
    use ir::program::LoopKind;
    use ir::transform::{Schedule, Step};

    fn recipe(steps: Vec<Step>) -> String {
        let role = Role {
            depth: 0,
            kind: LoopKind::Map,
            innermost: false,
            out_dim: Some(1),
            unit_stride: false,
            tile: false,
            trip: None,
        };
        serde_json::to_string(&RoleRecipe {
            steps: steps
                .into_iter()
                .map(|step| RoleStep {
                    step,
                    role: role.clone(),
                    band: Vec::new(),
                })
                .collect(),
        })
        .unwrap()
    }

    fn parallel(at: usize) -> Step {
        Step::Parallelize {
            at,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None,
        }
    }

    fn row(program: &str, first_pick: &str) -> EvalRow {
        let pick = MethodOutcome {
            neighbours: vec![(first_pick.into(), "nest0".into(), 0.5)],
            speedups: vec![2.0],
            once: vec![2.0],
            kept: 2.0,
            hit: true,
        };
        EvalRow {
            program: program.into(),
            nest: "nest0".into(),
            best_known: 2.0,
            search_best: 2.0,
            recorded: 2.0,
            methods: [(RankerKind::RawFeatures, pick)].into_iter().collect(),
            contenders: 0,
            rounds: Vec::new(),
        }
    }

    #[test]
    fn a_nest_searched_on_machines_of_two_kinds_is_held_out_once_as_this_machines() {
        let mut db = Database::default();
        // p nest0 searched on an AVX-512 machine, then on an AVX2 one; p nest1 on the
        // AVX-512 one only; q elsewhere.
        for (program, nest, isa) in [
            ("p", "nest0", "avx512"),
            ("q", "nest0", "avx2"),
            ("p", "nest1", "avx512"),
            ("p", "nest0", "avx2"),
        ] {
            let mut e = entry(program, 0.0, "r");
            e.nest = nest.into();
            e.isa = isa.into();
            db.entries.push(e);
        }
        assert_eq!(held_entries(&db, "p", "avx2"), [3, 2]);
        assert_eq!(held_entries(&db, "p", "avx512"), [0, 2]);
        // No entry of this machine's kind: the first.
        assert_eq!(held_entries(&db, "p", "sse"), [0, 2]);
        assert_eq!(held_entries(&db, "q", "avx512"), [1]);
        assert!(held_entries(&db, "r", "avx2").is_empty());
    }

    #[test]
    fn contenders_are_the_fastest_within_the_share_of_the_best() {
        let once = [0.5, 2.0, 1.5, 1.3, 1.0, 0.0, 1.45, 1.9, 1.8, 1.7, 1.6];
        // Within 70% of 2.0 (1.4 and up): seven; the six fastest, fastest first.
        assert_eq!(contenders(&once, &[]), [1, 7, 8, 9, 10, 2]);
        // None faster than the baseline: nothing to settle.
        assert!(contenders(&[1.0, 0.9, 0.0], &[]).is_empty());
        // A best of 1.2: everything above 1.0 is within 70% of it.
        assert_eq!(contenders(&[1.05, 1.2, 0.8], &[]), [1, 0]);
        // A ranker's fastest pick joins wherever its one measurement fell, after the
        // six (even slower than the baseline), once.
        assert_eq!(
            contenders(&once, &[0, 1, 5, 0, 11]),
            [1, 7, 8, 9, 10, 2, 0, 5]
        );
    }

    #[test]
    fn each_rankers_fastest_pick_by_one_measurement_decides() {
        let r = |steps: Vec<Step>| Recipe { steps };
        let (a, b, c) = (
            r(vec![Step::Vectorize { at: 0, width: None }]),
            r(vec![Step::Vectorize { at: 1, width: None }]),
            r(vec![Step::Vectorize { at: 2, width: None }]),
        );
        let all = vec![a.clone(), b.clone(), c.clone()];
        let once = [1.53, 3.5, 0.9];
        let picks = |rs: &[&Recipe]| Picks {
            neighbours: Vec::new(),
            recipes: rs.iter().map(|&r| r.clone()).collect(),
        };
        let seed1: BTreeMap<RankerKind, Picks> = [
            (RankerKind::Embedding, picks(&[&c, &a])),
            (RankerKind::RawFeatures, picks(&[&b, &a])),
            (RankerKind::Random, picks(&[&c])),
        ]
        .into_iter()
        .collect();
        let seed2: BTreeMap<RankerKind, Picks> = [(RankerKind::Embedding, picks(&[&a, &c]))]
            .into_iter()
            .collect();
        // Embedding: a (1.53 over c's 0.9); raw: b; random: c; seed 2 repeats a.
        assert_eq!(
            fastest_picks(&[seed1.clone(), seed2], &all, &once),
            [0, 1, 2]
        );
        // Where c failed, random (c alone) has no fastest pick.
        assert_eq!(fastest_picks(&[seed1], &all, &[1.53, 3.5, 0.0]), [0, 1]);
    }

    #[test]
    fn a_family_is_the_set_of_step_kinds() {
        let r = recipe(vec![
            parallel(0),
            Step::Vectorize { at: 2, width: None },
            parallel(1),
        ]);
        assert_eq!(recipe_family(&r), ["parallelize", "vectorize"]);
        assert!(recipe_family("not json").is_empty());
    }

    #[test]
    fn variants_agree_when_their_first_picks_share_a_family() {
        let pv = recipe(vec![parallel(0), Step::Vectorize { at: 1, width: None }]);
        // The same family with other positions.
        let pv2 = recipe(vec![Step::Vectorize { at: 2, width: None }, parallel(1)]);
        let t = recipe(vec![Step::Tile {
            at: 0,
            sizes: vec![32],
            inner: Vec::new(),
        }]);
        let db = Database {
            feature_version: embeddings::FEATURE_VERSION,
            model: String::new(),
            entries: vec![
                entry("x", 0.0, &pv),
                entry("y", 0.0, &pv2),
                entry("z", 0.0, &t),
            ],
        };
        let mut r = EvalReport::new(
            1,
            vec![
                row("a", "x"),
                row("a@nest0-b0-10", "y"),
                row("a@nest0-b0-21", "z"),
                // A variant whose original was not evaluated does not count.
                row("b@nest0-b0-10", "x"),
            ],
            0,
            0.0,
        );
        r.add_variant_agreement(&db);
        assert_eq!(r.variants, 2);
        assert_eq!(r.variant_agreement[&RankerKind::RawFeatures], 0.5);
        assert_eq!(r.variant_agreement[&RankerKind::Embedding], 0.0);
    }
}

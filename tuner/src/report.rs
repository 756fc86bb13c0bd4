//! What `tune apply` reports: per nest, the baseline, every candidate with its verdict
//! and why it was kept or not, the kept recipe; the whole-program check; the time
//! spent by phase. Serialized as the JSON report; the command line renders it.

use crate::select::{select, Timing};
use ir::transform::Recipe;
use profiling::cutout::Verdict;
use profiling::measure::Stats;
use serde::{Deserialize, Serialize};

/// Where a candidate recipe came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Neighbour {
    /// The database entry's program.
    pub program: String,
    /// The database entry's nest.
    pub nest: String,
    /// Its distance from the nest in the ranker's space.
    pub distance: f32,
    /// The speedup the recipe reached on that nest.
    pub speedup_there: f64,
}

/// What became of a candidate: measured (the cutout run's verdict), or passed over
/// before any measurement (and why in [`Candidate::why`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CandidateVerdict {
    #[serde(rename = "verified")]
    /// Ran, and every output matches its reference.
    Verified,
    #[serde(rename = "wrong result")]
    /// Ran, but an output differs from its reference.
    WrongResult,
    #[serde(rename = "crashed")]
    /// Exited abnormally.
    Crashed,
    #[serde(rename = "timed out")]
    /// Killed after the timeout.
    TimedOut,
    #[serde(rename = "cut")]
    /// Cut in a run past the kill bound (1.5x the best median so far): clearly slower.
    Cut,
    #[serde(rename = "build failed")]
    /// Its code did not compile.
    BuildFailed,
    /// Ran, but there was no reference output to verify against.
    #[serde(rename = "unverified")]
    Unverified,
    /// The re-fitted recipe does not apply legally.
    #[serde(rename = "refused")]
    Refused,
    /// No step of the recipe applies to this nest.
    #[serde(rename = "not applicable")]
    NotApplicable,
    /// Re-fitted, it is a recipe already picked.
    #[serde(rename = "same recipe")]
    SameRecipe,
    /// The entry's recipe could not be read.
    #[serde(rename = "unreadable")]
    Unreadable,
    /// Not measured (the time budget ran out first).
    #[serde(rename = "not measured")]
    NotMeasured,
}

impl std::fmt::Display for CandidateVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The serialized name.
        let name = serde_json::to_value(self).expect("verdicts serialize");
        f.pad(name.as_str().unwrap_or_default())
    }
}

impl From<&Verdict> for CandidateVerdict {
    fn from(v: &Verdict) -> CandidateVerdict {
        match v {
            Verdict::Verified => CandidateVerdict::Verified,
            Verdict::WrongResult { .. } => CandidateVerdict::WrongResult,
            Verdict::Crashed { .. } => CandidateVerdict::Crashed,
            Verdict::TimedOut { .. } => CandidateVerdict::TimedOut,
            Verdict::Cut { .. } => CandidateVerdict::Cut,
            Verdict::BuildFailed { .. } => CandidateVerdict::BuildFailed,
            Verdict::Unverified => CandidateVerdict::Unverified,
        }
    }
}

/// One transferred recipe on one nest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Candidate {
    /// The database entry the recipe came from.
    pub from: Neighbour,
    /// The recipe as re-fitted to this nest.
    pub recipe: Recipe,
    /// Steps of the source recipe that did not apply here, with why.
    pub dropped: Vec<String>,
    /// What became of it.
    pub verdict: CandidateVerdict,
    /// Warm-run statistics, when it was verified.
    pub stats: Option<Stats>,
    /// Median of its cold runs (seconds), measured when it beat the baseline warm and
    /// the nest's time in the program is short.
    #[serde(default)]
    pub first: Option<f64>,
    /// Baseline median over its median (0 when not verified).
    pub speedup: f64,
    /// Wall time of its measurement (the child process: loading, warmup, runs).
    #[serde(default)]
    pub run_s: f64,
    /// Its repetitions stopped early, clearly slower than the best median so far: a
    /// timed run exceeded 1.5x it, or the 95% interval of the runs' mean lay above it.
    #[serde(default)]
    pub killed: bool,
    /// Its repetitions stopped early the other way: three or more runs, all shorter than
    /// the lower end of the best median's 95% interval so far.
    #[serde(default)]
    pub faster: bool,
    /// Its long runs stopped after three, not all below the baseline's interval: it
    /// could not beat the baseline beyond the noise before its eighth run.
    #[serde(default)]
    pub futile: bool,
    /// Its outputs equal the saved ones bit for bit: it computes what the user's nest
    /// computes in the same order.
    #[serde(default)]
    pub exact: bool,
    /// Not bit for bit, but in the user's order all the same: built with
    /// `-ffp-contract=off`, it wrote what the nest so built writes, bit for bit
    /// (`NestBench::same_order`). Its outputs differ only where a product was
    /// contracted into an FMA otherwise.
    #[serde(default)]
    pub same_order: bool,
    /// It is the nest's chosen recipe.
    pub kept: bool,
    /// Why it was kept or not (what `--explain` prints).
    pub why: String,
}

/// A parallel loop the user declared (`#pragma omp parallel for ...`), and whether the
/// dependence analysis proves it parallel too. The user's directive is kept either
/// way: it is their claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserParallel {
    /// Line of the loop's `for`.
    pub line: u32,
    /// The loop's variable.
    pub var: String,
    /// The directive as the user wrote it.
    pub directive: String,
    /// The analysis finds no dependence carried by the loop.
    pub analysis_agrees: bool,
}

/// `tune apply` over the `.c` files of one program (`Pipeline::apply_files`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FilesApplied {
    /// One per file tuned, in the order of the files.
    pub reports: Vec<ApplyReport>,
    /// Files with nothing to tune, built as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed_over: Vec<PassedOver>,
}

/// A `.c` file of the program that holds nothing to tune.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassedOver {
    /// The file as given.
    pub file: String,
    /// Why nothing in it is tuned.
    pub reason: String,
}

/// What of the tuned code is left out of tuning and kept as the user wrote it: a
/// statement the IR does not model, or a loop that holds one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Its line.
    pub line: u32,
    /// `statement` or `loop 'i'`.
    pub what: String,
    /// Why.
    pub reason: String,
}

/// Statements the IR does not model and the loops holding them, in source order.
pub fn left_out(program: &ir::Program) -> Vec<LeftOut> {
    use ir::program::{has_opaque, walk_nodes, Node};
    let mut out = Vec::new();
    for r in &program.regions {
        walk_nodes(&r.body, &mut |n, _| match n {
            Node::Opaque(o) => out.push(LeftOut {
                line: o.pos.line,
                what: "statement".into(),
                reason: o.reason.clone(),
            }),
            Node::Loop(l) if has_opaque(&l.body) => out.push(LeftOut {
                line: l.pos.line,
                what: format!("loop '{}'", l.var),
                reason: "holds a statement kept as written: sequential glue, the nests \
                         inside it are tuned"
                    .into(),
            }),
            _ => {}
        });
    }
    out.extend(program.unread_functions.iter().map(|f| LeftOut {
        line: f.line,
        what: format!("function '{}'", f.name),
        reason: format!("kept as written: {}", f.reason),
    }));
    out
}

/// One nest's outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NestReport {
    /// The nest (`nest0`, ...).
    pub nest: String,
    /// Line of its root loop in the source.
    pub line: u32,
    /// The untransformed nest, warm.
    pub baseline: Stats,
    /// The kept candidate, warm.
    pub tuned: Option<Stats>,
    /// Baseline median over the tuned median.
    pub speedup: f64,
    /// The kept recipe (empty: untransformed).
    pub chosen: Recipe,
    /// Where the measured candidates came from.
    pub neighbours: Vec<Neighbour>,
    /// Every entry met on the retrieval walk.
    pub candidates: Vec<Candidate>,
    /// Achieved / attainable (roofline, all threads), before and after.
    pub efficiency_before: Option<f64>,
    /// Achieved / attainable after tuning.
    pub efficiency_after: Option<f64>,
    /// What one run of the nest does, flops and bytes (each element once), where known:
    /// what its efficiencies are read from.
    #[serde(skip)]
    pub work: Option<(u64, u64)>,
    /// The baseline plus each distinct candidate measured.
    pub measured_variants: usize,
    /// How often the program ran the nest in the dry run.
    #[serde(default)]
    pub invocations: u64,
    /// Median of the baseline's cold runs (seconds), where they were measured.
    #[serde(default)]
    pub baseline_first: Option<f64>,
    /// Calls per timed sample of the baseline (1: single runs on restored inputs; more:
    /// batches of consecutive calls, `profiling::Measure::batch_s`).
    #[serde(default = "one_call")]
    pub baseline_batch: u64,
    /// The user's parallel loops in the nest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_parallel: Vec<UserParallel>,
    /// Hardware counters of the untransformed nest, read for its features
    /// (`crate::counters`); empty where the kernel opened no hardware event (no PMU, as
    /// on most virtual machines): the features then mark those columns unavailable.
    #[serde(default)]
    pub counters: Vec<profiling::cutout::CounterReading>,
    /// Where the nest's tuning time went.
    #[serde(default)]
    pub time: NestTime,
}

/// Where one nest's tuning time went (seconds).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NestTime {
    /// Measuring the baseline (its child process, warm runs).
    pub baseline_s: f64,
    /// Measuring the candidates (their child processes).
    pub candidates_s: f64,
    /// Building the baseline and the candidates.
    pub building_s: f64,
    /// Running them all, cold runs included.
    pub measuring_s: f64,
    /// The nest from its baseline to its choice.
    pub total_s: f64,
}

/// Wall time of the tuning, by phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TimeSplit {
    /// Dry run, features and machine description (seconds).
    pub profiling_s: f64,
    /// Loading the model and embedding (seconds).
    pub embedding_s: f64,
    /// Compiling variants (seconds).
    pub building_s: f64,
    /// Running variants (seconds).
    pub measuring_s: f64,
    /// Wall time of the whole tuning (seconds).
    pub total_s: f64,
}

/// The final check: the whole program, original against tuned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramCheck {
    /// What was timed: the sum of the scop regions, or the whole run.
    pub unit: TimeUnit,
    /// Medians over the runs.
    pub original_ms: f64,
    /// Median of the tuned program (ms).
    pub tuned_ms: f64,
    /// Original median over tuned median.
    pub speedup: f64,
    /// Two-sided Mann-Whitney U p-value of the two samples.
    pub p_value: f64,
    /// The rounds after which a quick look (a gain of `check::ONE_ROUND_GAIN` after 1
    /// round; Welch's t on log times, one-sided p < 0.02 after 2 rounds, 0.005 after 3)
    /// decided; None where Mann-Whitney's `p_value` did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quick_look: Option<usize>,
    /// The rounds after which the check stopped because the tuned program was no
    /// faster at all (its median not below the original's, at a quick look).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_faster: Option<usize>,
    /// Runs of each program.
    pub runs: usize,
    /// The tuned program printed the results the original printed
    /// ([`crate::printed::same_results`]: what differs between the original's own
    /// runs, a timing, is not a result; a number may round the other way in its last
    /// digit).
    pub same_output: bool,
    /// It printed other digits than the original, but the same results when both were
    /// built with `-ffp-contract=off`: they differ only where a product was contracted
    /// into an FMA otherwise (`check::contraction`), and count as the same output.
    #[serde(default)]
    pub contracted: bool,
    /// The tuned program was not faster beyond the noise, or printed other results:
    /// the original is kept.
    pub reverted: bool,
    /// It printed other results, with no choice left that computes in the user's
    /// order: the original is kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub other_results: bool,
    /// Where the changed nests were timed: the whole runs' median wall times (ms),
    /// original then tuned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<(f64, f64)>,
    /// The tuned program's whole run took longer than the original's by more than
    /// [`crate::check::WALL_SLACK`]: the original is kept.
    #[serde(default)]
    pub wall_slower: bool,
    /// How the original was built for the check.
    #[serde(default)]
    pub original_command: String,
    /// How the tuned program was built for the check.
    #[serde(default)]
    pub tuned_command: String,
    /// Wall time of the check: builds and runs (seconds).
    #[serde(default)]
    pub seconds: f64,
}

/// What `tune apply` did to a program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApplyReport {
    /// The program's name.
    pub program: String,
    /// Its source file.
    pub file: String,
    /// Distinct re-fitted recipes measured per nest.
    pub k: usize,
    /// Retrieval used static features only.
    pub static_only: bool,
    /// The order in which the database's entries were tried.
    #[serde(default)]
    pub ranker: crate::ranker::RankerKind,
    /// Every nest.
    pub nests: Vec<NestReport>,
    /// The whole loop nests tried after the nests (`ir::codegen::whole_nests`); a kept
    /// recipe here replaces the recipes of the nests inside it in the tuned file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wholes: Vec<NestReport>,
    /// The tuned program's source.
    #[serde(skip)]
    pub source: String,
    /// The tuned program needs `-fopenmp`.
    pub openmp: bool,
    /// The whole-program check (absent when nothing was tuned or the check is off).
    #[serde(default)]
    pub check: Option<ProgramCheck>,
    /// The check of the first choice, where it lost and recipes starting an OpenMP team
    /// were then replaced by each nest's fastest candidate starting none
    /// ([`ApplyReport::without_teams`]); `check` is the second one's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_with_teams: Option<ProgramCheck>,
    /// The check of a choice with which the program printed other results than the
    /// user's, before each recipe whose outputs were not bit for bit the original's was
    /// replaced ([`ApplyReport::exact_only`]); `check` is the one after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_inexact: Option<ProgramCheck>,
    /// Where the tuning time went.
    pub time: TimeSplit,
    /// The CPU model tuned on.
    pub machine: Option<String>,
    /// Code of the tuned regions left out of tuning, kept as written.
    #[serde(default)]
    pub left_out: Vec<LeftOut>,
    /// The regions were found without markers (no `#pragma scop`, no `--function`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_regions: bool,
}

impl ApplyReport {
    /// The second choice where the whole tuned program lost: every kept recipe that
    /// starts an OpenMP team is replaced by the nest's fastest candidate that starts
    /// none and still beats its baseline ([`crate::select::select`] over those), or by
    /// nothing. A team's start in a short program (the first parallel region of a
    /// process) is what a nest measured warm on its cutout cannot show. None where no
    /// kept recipe starts a team, or nothing would be kept.
    pub fn without_teams(&self) -> Option<ApplyReport> {
        self.replaced(
            &|n| n.chosen.starts_team(),
            &|c| !c.recipe.starts_team(),
            "in the whole program it lost, and it starts an OpenMP team",
            "kept in place of a recipe starting an OpenMP team, which lost in the whole program",
        )
    }

    /// Every row whose recipe the written file carries: the nests, then the whole nests.
    pub fn rows(&self) -> impl Iterator<Item = &NestReport> {
        self.nests.iter().chain(&self.wholes)
    }

    /// Whether a kept recipe starts an OpenMP team.
    pub fn starts_team(&self) -> bool {
        self.rows().any(|n| n.chosen.starts_team())
    }

    /// Whether every kept recipe computed its cutout's outputs in the user's order (bit
    /// for bit, or so when built with `-ffp-contract=off`): then the tuned program adds
    /// in the original's order, and a printed number that differs in its ninth digit is
    /// an FMA contracted otherwise, not a sum in another order.
    pub fn order(&self) -> crate::printed::Order {
        match self.rows().any(NestReport::reorders) {
            true => crate::printed::Order::Changed,
            false => crate::printed::Order::Kept,
        }
    }

    /// The choice where the tuned program prints other results than the user's: every
    /// kept recipe that computes out of the user's order ([`Candidate::in_order`]:
    /// floating-point sums in another order, a vectorized or parallel reduction) is
    /// replaced by the nest's fastest candidate that computes in it, or by nothing.
    /// None where every kept recipe is in order, or nothing would be kept.
    pub fn exact_only(&self) -> Option<ApplyReport> {
        self.replaced(
            &NestReport::reorders,
            &Candidate::in_order,
            "the tuned program printed other results, and its outputs were not bit for bit \
             the original's (floating-point sums in another order)",
            "kept in place of a recipe whose outputs were not bit for bit the original's, \
             with which the program printed other results",
        )
    }

    /// The recipe of every nest that is `unfit` replaced by the nest's fastest
    /// candidate that `fits` (see [`NestReport::choose`]); None where no nest is unfit,
    /// or nothing would be kept.
    fn replaced(
        &self,
        unfit: &dyn Fn(&NestReport) -> bool,
        fits: &dyn Fn(&Candidate) -> bool,
        given_up: &str,
        kept_instead: &str,
    ) -> Option<ApplyReport> {
        if !self.rows().any(unfit) {
            return None;
        }
        let mut alt = self.clone();
        for n in alt.nests.iter_mut().chain(alt.wholes.iter_mut()) {
            if unfit(n) {
                n.choose(fits, given_up, kept_instead);
            }
        }
        alt.check = None;
        let any = alt.rows().any(|n| !n.chosen.steps.is_empty());
        any.then_some(alt)
    }

    /// What the kept recipes save per program run (seconds) by their cutouts: each kept
    /// row's median gain times its invocations, whole nests first; a kept nest that
    /// `in_kept_whole` says lies inside a kept whole nest counts through that whole nest.
    pub fn promised_saving_s(&self, in_kept_whole: &dyn Fn(&str) -> bool) -> f64 {
        let saved = |r: &NestReport| {
            r.tuned.map_or(0.0, |t| {
                (r.baseline.median - t.median).max(0.0) * r.invocations.max(1) as f64
            })
        };
        let kept = |r: &&NestReport| !r.chosen.steps.is_empty();
        let wholes: f64 = self.wholes.iter().filter(kept).map(saved).sum();
        let nests: f64 = self
            .nests
            .iter()
            .filter(kept)
            .filter(|r| !in_kept_whole(&r.nest))
            .map(saved)
            .sum();
        wholes + nests
    }

    /// Gives up every kept recipe, for `why` (the whole tuned program was not faster
    /// beyond the noise, or printed other results).
    pub fn revert(&mut self, original: String, why: &str) {
        self.source = original;
        self.openmp = false;
        for n in self.nests.iter_mut().chain(self.wholes.iter_mut()) {
            n.give_up(why);
        }
    }
}

impl Candidate {
    /// A candidate not measured yet: `recipe` from `from`, with the steps `dropped`.
    pub fn unmeasured(from: Neighbour, recipe: Recipe, dropped: Vec<String>) -> Candidate {
        Candidate {
            from,
            recipe,
            dropped,
            verdict: CandidateVerdict::NotMeasured,
            stats: None,
            first: None,
            speedup: 0.0,
            run_s: 0.0,
            killed: false,
            faster: false,
            futile: false,
            exact: false,
            same_order: false,
            kept: false,
            why: String::new(),
        }
    }

    /// It computes in the user's order: bit for bit, or so but for contracted products.
    pub fn in_order(&self) -> bool {
        self.exact || self.same_order
    }
}

impl NestReport {
    /// Whether the recipe kept here computed its cutout's outputs otherwise than bit for
    /// bit (a sum in another order).
    pub fn reorders(&self) -> bool {
        !self.chosen.steps.is_empty() && !self.candidates.iter().any(|c| c.kept && c.in_order())
    }

    /// Keeps the fastest verified candidate that `fits` and beats the baseline (the
    /// rule of [`crate::select::select`]), or nothing; the one given up says
    /// `given_up`, the one kept in its place `kept_instead`.
    fn choose(&mut self, fits: &dyn Fn(&Candidate) -> bool, given_up: &str, kept_instead: &str) {
        let base = Timing {
            stats: self.baseline,
            first: self.baseline_first,
        };
        let timings: Vec<Option<Timing>> = self
            .candidates
            .iter()
            .map(|c| {
                let ok = c.verdict == CandidateVerdict::Verified && fits(c);
                c.stats.filter(|_| ok).map(|stats| Timing {
                    stats,
                    first: c.first,
                })
            })
            .collect();
        let best = select(&base, self.invocations, &timings).best;
        self.give_up(given_up);
        let Some(i) = best else {
            return;
        };
        let c = &mut self.candidates[i];
        let Some(stats) = c.stats else {
            return;
        };
        c.kept = true;
        c.why.push_str("; ");
        c.why.push_str(kept_instead);
        self.chosen = c.recipe.clone();
        self.tuned = Some(stats);
        self.speedup = self.baseline.median / stats.median.max(1e-12);
        self.efficiency_after = self.efficiency_before.map(|e| e * self.speedup);
    }

    /// Its efficiencies read again against `roof` (all threads), where its work is
    /// known.
    pub fn read_efficiencies(&mut self, roof: &profiling::roofline::Roof) {
        let Some(work) = self.work else {
            return;
        };
        let before = efficiency(roof, &self.nest, work, self.baseline.median);
        self.efficiency_before = Some(before);
        // Read at its own time: faster, its bytes may come from a nearer level's roof.
        self.efficiency_after = Some(
            self.tuned
                .map_or(before, |t| efficiency(roof, &self.nest, work, t.median)),
        );
    }

    /// Gives up the kept recipe, saying why on the candidate that was kept.
    pub fn give_up(&mut self, why: &str) {
        self.chosen = Recipe::default();
        self.tuned = None;
        self.speedup = 1.0;
        self.efficiency_after = self.efficiency_before;
        for c in self.candidates.iter_mut().filter(|c| c.kept) {
            c.kept = false;
            c.why.push_str("; given up: ");
            c.why.push_str(why);
        }
    }
}

/// Timing of one untransformed nest (`Pipeline::measure`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NestTiming {
    /// The nest (`nest0`, ...).
    pub nest: String,
    /// How its run ended.
    pub verdict: Verdict,
    /// Statistics of the samples.
    pub stats: Stats,
    /// Raw samples (seconds).
    pub samples: Vec<f64>,
}

/// What a sample measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// The sum of the program's timed `#pragma scop` regions.
    Region,
    /// The whole run's wall time (a program without regions).
    Wall,
    /// The sum of the nests that tuning changed, each timed where the program runs it
    /// (the whole-program check of a program without `#pragma scop` regions).
    Nests,
}

impl std::fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            TimeUnit::Region => "region",
            TimeUnit::Wall => "wall",
            TimeUnit::Nests => "changed nests",
        })
    }
}

/// How one program ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The program's name in the batch.
    pub program: String,
    /// Its cc-style arguments.
    pub args: Vec<String>,
    /// Tuned or failed.
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Why it failed.
    pub error: Option<String>,
    /// Nests of the program.
    pub nests: usize,
    /// Nests with a kept recipe.
    pub tuned_nests: usize,
    /// Geometric mean of the nests' speedups (measured on their saved data).
    pub speedup: f64,
    /// Variants measured over all nests (baselines included).
    pub measured_variants: usize,
    /// Wall time of its tuning (seconds).
    pub seconds: f64,
    /// Relative to the batch folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The JSON report, relative to the batch folder.
    pub report_file: Option<String>,
}

/// How a program of a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Tuned (its files are written).
    Tuned,
    /// Failed (the error says why).
    Failed,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Status::Tuned => "tuned",
            Status::Failed => "failed",
        })
    }
}

/// Achieved over attainable for a nest doing `work` (flops, bytes: every element once,
/// the footprint) in `seconds`, against `roof`.
pub fn efficiency(
    roof: &profiling::roofline::Roof,
    nest: &str,
    (flops, bytes): (u64, u64),
    seconds: f64,
) -> f64 {
    let work = profiling::roofline::Work {
        flops,
        bytes,
        bytes_kind: profiling::roofline::BytesKind::Compulsory,
        footprint: bytes,
    };
    profiling::roofline::RooflineRow::new(nest, 1, seconds, work, roof).efficiency
}

fn one_call() -> u64 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::transform::Step;

    fn stats(median_ms: f64) -> Stats {
        let s = median_ms * 1e-3;
        Stats {
            n: 5,
            min: s * 0.99,
            mean: s,
            median: s,
            max: s * 1.01,
            stddev: s * 0.01,
            median_ci: (s * 0.99, s * 1.01),
        }
    }

    fn candidate(steps: Vec<Step>, median_ms: f64, kept: bool) -> Candidate {
        let from = Neighbour {
            program: "p".into(),
            nest: "nest0".into(),
            distance: 0.0,
            speedup_there: 1.0,
        };
        Candidate {
            verdict: CandidateVerdict::Verified,
            stats: Some(stats(median_ms)),
            speedup: 10.0 / median_ms,
            kept,
            why: "verified".into(),
            ..Candidate::unmeasured(from, Recipe { steps }, Vec::new())
        }
    }

    fn nest(candidates: Vec<Candidate>) -> NestReport {
        let chosen = candidates
            .iter()
            .find(|c| c.kept)
            .map(|c| c.recipe.clone())
            .unwrap_or_default();
        NestReport {
            nest: "nest0".into(),
            line: 1,
            baseline: stats(10.0),
            tuned: None,
            speedup: 1.0,
            chosen,
            neighbours: Vec::new(),
            candidates,
            efficiency_before: Some(0.1),
            efficiency_after: None,
            work: None,
            measured_variants: 3,
            invocations: 1,
            baseline_first: None,
            baseline_batch: 1,
            user_parallel: Vec::new(),
            counters: Vec::new(),
            time: NestTime::default(),
        }
    }

    fn report(nests: Vec<NestReport>) -> ApplyReport {
        ApplyReport {
            program: "p".into(),
            file: "p.c".into(),
            k: 3,
            static_only: false,
            ranker: Default::default(),
            nests,
            wholes: Vec::new(),
            source: String::new(),
            openmp: true,
            check: None,
            check_with_teams: None,
            check_inexact: None,
            time: TimeSplit::default(),
            machine: None,
            left_out: Vec::new(),
            auto_regions: false,
        }
    }

    #[test]
    fn the_promised_saving_counts_each_kept_row_by_its_invocations_and_a_kept_whole_for_its_nests()
    {
        // A kept nest of 10 ms tuned to 4 ms, run 50 times: 0.3 s a program run.
        let mut a = nest(vec![candidate(
            vec![Step::Unroll { at: 0, factor: 2 }],
            4.0,
            true,
        )]);
        a.tuned = Some(stats(4.0));
        a.invocations = 50;
        // One kept nothing: it saves nothing.
        let mut b = nest(vec![candidate(
            vec![Step::Unroll { at: 0, factor: 2 }],
            4.0,
            false,
        )]);
        b.nest = "nest1".into();
        let mut r = report(vec![a.clone(), b]);
        assert!((r.promised_saving_s(&|_| false) - 0.3).abs() < 1e-12);
        // Inside a kept whole nest of 10 ms tuned to 9 ms, run once, the nest counts
        // through it: 1 ms.
        let mut w = a.clone();
        w.nest = "whole0".into();
        w.tuned = Some(stats(9.0));
        w.invocations = 1;
        r.wholes.push(w);
        assert!((r.promised_saving_s(&|n| n == "nest0") - 0.001).abs() < 1e-12);
        // A row measured slower saves nothing (not less than nothing).
        r.wholes[0].tuned = Some(stats(12.0));
        assert_eq!(r.promised_saving_s(&|n| n == "nest0"), 0.0);
    }

    #[test]
    fn the_order_is_kept_only_where_every_kept_recipe_was_bit_exact_on_its_cutout() {
        let unroll = vec![Step::Unroll { at: 0, factor: 2 }];
        let mut exact = candidate(unroll.clone(), 4.0, true);
        exact.exact = true;
        let reordered = candidate(unroll.clone(), 4.0, true);
        let mut r = report(vec![nest(vec![exact])]);
        assert_eq!(r.order(), crate::printed::Order::Kept);
        // A second nest kept a recipe whose outputs were not bit for bit the saved ones.
        let mut b = nest(vec![reordered.clone()]);
        b.nest = "nest1".into();
        r.nests.push(b);
        assert_eq!(r.order(), crate::printed::Order::Changed);
        // Not kept, it changes nothing.
        let mut unkept = reordered;
        unkept.kept = false;
        r.nests[1] = nest(vec![unkept]);
        assert_eq!(r.order(), crate::printed::Order::Kept);
    }

    #[test]
    fn a_lost_team_gives_way_to_the_fastest_candidate_without_one() {
        let team = Step::Parallelize {
            at: 0,
            schedule: ir::program::Schedule::Static,
            chunk: None,
            collapse: None,
        };
        let unroll = |factor| Step::Unroll { at: 0, factor };
        let r = report(vec![nest(vec![
            candidate(vec![team.clone()], 2.0, true),
            candidate(vec![unroll(2)], 6.0, false),
            candidate(vec![unroll(4)], 5.0, false),
            candidate(vec![unroll(8)], 10.5, false),
        ])]);
        let alt = r.without_teams().unwrap();
        let n = &alt.nests[0];
        // The fastest of those without a team that beat the baseline: unroll 4, 2x.
        assert_eq!(n.chosen.steps, vec![unroll(4)]);
        assert!((n.speedup - 2.0).abs() < 1e-9, "{}", n.speedup);
        assert!((n.efficiency_after.unwrap() - 0.2).abs() < 1e-9);
        assert!(n.candidates[2].kept && !n.candidates[0].kept);
        assert!(n.candidates[0].why.contains("starts an OpenMP team"));
        // Only team-starting candidates beat the baseline: nothing to try.
        let r = report(vec![nest(vec![
            candidate(vec![team.clone()], 2.0, true),
            candidate(vec![unroll(8)], 10.5, false),
        ])]);
        assert!(r.without_teams().is_none());
        // Nothing kept starts a team: no second try.
        let r = report(vec![nest(vec![candidate(vec![unroll(2)], 6.0, true)])]);
        assert!(r.without_teams().is_none());
    }
}

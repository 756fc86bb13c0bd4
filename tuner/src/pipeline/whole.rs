//! The whole-nest stage of [`Pipeline::apply`]: after every nest is tuned, each whole
//! loop nest (`ir::codegen::whole_nests`: a top-level loop whose sequential loops hold
//! nests — a time loop, the `k` of a factorization, the row loop of a solver) is
//! measured as the program runs it, on the data saved at its entry, and tried with
//! recipes over all its loops (`ir::transform::compose`):
//! - the recipes kept for its nests, composed (what the tuned file would run);
//! - those and its innermost reductions vectorized (`omp simd reduction`, after scalar
//!   replacement of a reduced element), which a reduction measured alone, a few
//!   microseconds per call, cannot show;
//! - the reductions vectorized alone;
//! - its loops reordered so that inner loops walk rows (triangles interchanged,
//!   reductions moved outside the parallel loop they sit in), with and without the
//!   reductions vectorized;
//! - a band that accumulates a product as register tiles (`pipeline/dense.rs`; trmm's,
//!   whose row loop carries a dependence: its reduction reads the rows after it);
//! - a time loop of sweeps over rows as time tiles (`pipeline/stencil.rs`).
//!
//! The fastest verified one that beats the whole nest as written beyond the noise
//! replaces its nests' recipes in the tuned file.
//!
//! A whole nest whose one candidate would be its nests' kept recipes composed, and that
//! holds most of the program's loop time, is not measured: the whole-program check
//! times that very code against the original ([`checked_by_the_program`]).

use super::*;
use ir::codegen::Nest;
use ir::transform::compose::{
    compose, compose_after, fold_parts, fusion_parts, moved, order_parts, position,
    reduction_parts, Part,
};

impl Pipeline {
    /// The whole nests of the dry run, each tuned after its nests (`nests`); their
    /// rows, and those left out with why.
    pub(super) fn tune_wholes(
        &self,
        ctx: &NestContext,
        nests: &mut [NestReport],
        cflags: &[String],
        time: &mut TimeSplit,
        left_out: &mut Vec<crate::report::LeftOut>,
        out_of_time: &dyn Fn() -> bool,
    ) -> Result<Vec<NestReport>> {
        let measuring = self.measuring();
        let mut out = Vec::new();
        for whole in &ctx.dry.wholes {
            let run = ctx.dry.summary.wholes.iter().find(|s| s.name == whole.name);
            let line = run.map_or(0, |s| s.line);
            let leave = |reason: String| crate::report::LeftOut {
                line,
                what: format!("whole nest {}", whole.name),
                reason,
            };
            if run.is_none_or(|s| s.invocations == 0) {
                left_out.push(leave("not run by the program".into()));
                continue;
            }
            if out_of_time() {
                left_out.push(leave(
                    "not tuned: the time budget (--budget-s) ran out before it".into(),
                ));
                continue;
            }
            let Some(tries) = whole_recipes(ctx.dry, whole, nests, ctx.machine) else {
                left_out.push(leave(
                    "no whole-nest recipe applies: its nests kept nothing, and it has no \
                     reduction to vectorize, no loops to reorder or fuse"
                        .into(),
                ));
                continue;
            };
            if let Some(share) = checked_by_the_program(ctx.dry, whole, &tries) {
                left_out.push(leave(format!(
                    "not measured: its one candidate is its nests' kept recipes together, \
                     what the tuned file runs, and it is {:.0}% of the program's loop time, \
                     so the whole-program check measures it",
                    100.0 * share.min(1.0)
                )));
                continue;
            }
            let bench = NestBench::new(ctx.dry, whole, cflags, &measuring);
            // The stage only adds to what the nests gave: a whole nest it cannot
            // measure (its cutout does not reproduce the program) is left as it is.
            match self.tune_whole(ctx, &bench, tries, time) {
                Ok(r) => {
                    give_up_slower_parts(ctx.dry, whole, &r, nests);
                    out.push(r)
                }
                Err(Error::Unmeasurable(reason) | Error::Failed(reason)) => {
                    left_out.push(leave(reason))
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    fn tune_whole(
        &self,
        ctx: &NestContext,
        bench: &NestBench,
        tries: Vec<Try>,
        time: &mut TimeSplit,
    ) -> Result<NestReport> {
        let clock = Clock::start();
        let mut base = self.baseline(ctx, bench)?;
        let picks: Vec<Option<Recipe>> = tries.iter().map(|t| Some(t.recipe.clone())).collect();
        let mut candidates: Vec<Candidate> = tries
            .into_iter()
            .map(|t| {
                let from = Neighbour {
                    program: t.source.into(),
                    nest: t.what,
                    distance: 0.0,
                    speedup_there: 0.0,
                };
                Candidate::unmeasured(from, t.recipe, t.left_out)
            })
            .collect();
        let measured = self.measure_picks(
            ctx,
            bench,
            &base,
            &picks,
            Proposer::Whole,
            &mut candidates,
            None,
        )?;
        self.complete_baseline(bench, &mut base, &mut candidates)?;
        let env =
            profiling::cutout::env_of(&ctx.dry.cache.data(), bench.nest, bench.cutout.version);
        let counts = ir::counts::nest_counts(
            bench.program,
            bench.nest.region,
            bench.nest.root,
            &env,
            COUNT_LIMIT,
        )
        .ok();
        let flops = counts.map(|c| (c.flops, c.bytes_compulsory));
        Ok(nest_report(
            ctx, bench, base, candidates, &picks, measured, flops, time, &clock,
        ))
    }
}

/// Where the whole nest's candidates that no rule made come from, in reports.
const STAGE: &str = "whole-nest stage";

/// What the candidate made of the nests' kept recipes is named in reports.
const KEPT_PARTS: &str = "the nests' kept recipes";

/// Where a whole nest kept nothing and its nests' kept recipes, composed as the tuned
/// file would run them, were measured slower than the whole nest as written beyond the
/// noise (the 95% intervals of the medians apart, or stopped early or cut in a run as
/// clearly slower than the best median), those recipes are given up: each
/// won on its own cutout, together they lose where the program spends its time.
fn give_up_slower_parts(dry: &DryRun, whole: &Nest, r: &NestReport, nests: &mut [NestReport]) {
    if !r.chosen.steps.is_empty() {
        return;
    }
    let slower = r.candidates.iter().any(|c| {
        // `killed`: stopped early or cut in a run, clearly slower.
        c.from.nest == KEPT_PARTS
            && (c.killed
                || c.verdict == CandidateVerdict::Verified
                    && c.stats
                        .is_some_and(|s| s.median_ci.0 > r.baseline.median_ci.1))
    });
    if !slower {
        return;
    }
    for n in dry.nests.iter().filter(|n| n.is_inside(whole)) {
        if let Some(row) = nests.iter_mut().find(|x| x.nest == n.name) {
            if !row.chosen.steps.is_empty() {
                row.give_up(&format!(
                    "with the other kept recipes of {} it was slower than {} as written",
                    whole.name, whole.name
                ));
            }
        }
    }
}

/// A whole nest holding at least this share of the program's loop time
/// ([`super::loop_time_s`]; its own time counts the glue between its nests, so it may
/// read above 1) is the program as the whole-program check times it.
const MOST_OF_THE_PROGRAM: f64 = 0.8;

/// Where the stage would only measure `whole` with its nests' kept recipes composed
/// (no other candidate) and the whole nest is most of the program's loop time
/// ([`MOST_OF_THE_PROGRAM`]), its share: the whole-program check then measures the
/// same code against the same original, and gives the user's file back where it is
/// not faster, as the stage would give up those recipes. A stage run here measured a
/// nest of seconds three times twice before the check ran it again.
fn checked_by_the_program(dry: &DryRun, whole: &Nest, tries: &[Try]) -> Option<f64> {
    let [only] = tries else {
        return None;
    };
    if only.source != STAGE || only.what != KEPT_PARTS {
        return None;
    }
    let this = dry.summary.wholes.iter().find(|x| x.name == whole.name)?;
    let share = super::steady_s(this) / super::loop_time_s(dry).max(1e-300);
    (share >= MOST_OF_THE_PROGRAM).then_some(share)
}

/// Iterations the flop count of a whole nest may walk (its roofline row is left out
/// beyond).
const COUNT_LIMIT: u64 = 50_000_000;

/// One recipe the stage measures on a whole nest.
struct Try {
    /// Where it comes from: the stage, or the rule that made it.
    source: &'static str,
    /// What it is made of.
    what: String,
    recipe: Recipe,
    /// Parts that did not apply, with why.
    left_out: Vec<String>,
}

/// The recipes to try on `whole`: its nests' kept recipes composed, with and without
/// its reductions vectorized, distinct and not empty; None when there is none.
fn whole_recipes(
    dry: &DryRun,
    whole: &Nest,
    nests: &[NestReport],
    machine: Option<&MachineInfo>,
) -> Option<Vec<Try>> {
    let program = &dry.parsed.program;
    let root = program.find_loop(whole.region, whole.root)?;
    let kept: Vec<Part> = dry
        .nests
        .iter()
        .filter(|n| n.is_inside(whole))
        .filter_map(|n| {
            let r = nests.iter().find(|r| r.nest == n.name)?;
            if r.chosen.steps.is_empty() {
                return None;
            }
            let anchor = position(root, n.root)?;
            Some(Part {
                anchor,
                what: format!("{}'s kept recipe", n.name),
                alternatives: vec![moved(&r.chosen, anchor)],
            })
        })
        .collect();
    let reductions = reduction_parts(root);
    // Parts kept first: at one anchor, a nest's kept recipe before the rule-made part.
    let both: Vec<Part> = if kept.is_empty() {
        Vec::new()
    } else {
        kept.iter().chain(&reductions).cloned().collect()
    };
    let mut tries: Vec<Try> = Vec::new();
    let mut add_from =
        |source: &'static str, what: &str, (recipe, left_out): (Recipe, Vec<String>)| {
            if !recipe.steps.is_empty() && !tries.iter().any(|t| t.recipe == recipe) {
                tries.push(Try {
                    source,
                    what: what.to_string(),
                    recipe,
                    left_out,
                });
            }
        };
    let mut add = |what: &str, made: (Recipe, Vec<String>)| add_from(STAGE, what, made);
    for (what, parts) in [
        (KEPT_PARTS, &kept),
        ("the nests' kept recipes, reductions vectorized", &both),
        ("reductions vectorized", &reductions),
    ] {
        if !parts.is_empty() {
            add(what, compose(program, whole.region, whole.root, parts));
        }
    }
    // Loops reordered, then loops with the same header fused, then the innermost
    // reductions of the result vectorized: each stage's parts are found on the nest as
    // the stages before leave it.
    // A factorization written with temporaries (`w = A[i][j]; for k: w -= ..;
    // A[i][j] = w / ..`) has its accumulators folded into their elements first.
    let apply = |r: &Recipe| ir::transform::apply(program, whole.region, whole.root, r).ok();
    let folds = fold_parts(root);
    let (folded, folds_left_out) = compose(program, whole.region, whole.root, &folds);
    let folded_root = apply(&folded).map(|t| t.root);
    let orders = order_parts(folded_root.as_ref().unwrap_or(root));
    if !orders.is_empty() {
        let (mut recipe, mut left_out) =
            compose_after(program, whole.region, whole.root, folded, &orders);
        left_out.extend(folds_left_out);
        add(
            "loops reordered into row updates",
            (recipe.clone(), left_out.clone()),
        );
        type Stage = (&'static str, fn(&ir::Loop) -> Vec<Part>);
        let stages: [Stage; 2] = [
            ("loops reordered and fused", fusion_parts),
            ("loops reordered, reductions vectorized", reduction_parts),
        ];
        for (what, parts_of) in stages {
            let Some(t) = apply(&recipe) else { break };
            let parts = parts_of(&t.root);
            if parts.is_empty() {
                continue;
            }
            let (r, more) =
                compose_after(program, whole.region, whole.root, recipe.clone(), &parts);
            left_out.extend(more);
            recipe = r;
            add(what, (recipe.clone(), left_out.clone()));
        }
    }
    // Its normal form, where that splits a loop (`pipeline/normal.rs`): column walks
    // under the sequential loop turned into row walks, then run in parallel.
    for (what, recipe) in super::normal::normal_form_recipes(program, whole.region, whole.root) {
        add_from(super::normal::NORMAL_FORM, &what, (recipe, Vec::new()));
    }
    // A band of the whole nest that accumulates a product (trmm's, whose row loop
    // carries a dependence and so is no nest of its own): its register tiles.
    // A time loop of sweeps over rows (a stencil's): its time tiles.
    for (rule, what, recipe) in super::rule_recipes(program, whole.region, root, machine) {
        add_from(rule, &what, (recipe, Vec::new()));
    }
    (!tries.is_empty()).then_some(tries)
}

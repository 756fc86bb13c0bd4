//! The nest's measurement budget: at most K candidates besides the baseline, K + 1
//! measured variants, whoever proposes them (`--refine N` adds its N when asked).
//!
//! The rules (register tiles, time tiles, loop orders: [`super::rule_recipes`]) build
//! recipes for the nest's own shape and were the fastest candidate of most nests they
//! applied to; the neighbours' recipes are what transfer tuning is. So the two share
//! the K slots: the rules take up to half of them, rounded up, or more where the walk
//! found fewer distinct recipes than the rest; the neighbours take the rest, nearest
//! first. A rule's recipe that a neighbour's re-fitted recipe equals is measured once,
//! as the neighbour's, and takes no rule slot. The rules' recipes are taken one of each
//! rule in turn (each rule lists its likeliest first). What the budget leaves out stays
//! in the report, not measured, with the reason. The one-thread variant
//! (`pipeline/serial.rs`) is measured in a slot left free, or beyond K in a nest
//! shorter than `serial::SHORT_S` a program run.

use crate::report::{Candidate, CandidateVerdict};
use ir::transform::Recipe;

/// A recipe proposed by a rule: (rule, what the candidate is called, recipe).
pub(super) type RuleRecipe = (&'static str, String, Recipe);

/// How many of `k` slots the rules may take when the neighbours fill the others.
pub(super) fn rule_share(k: usize) -> usize {
    k.div_ceil(2)
}

/// `rules`' recipes one of each rule in turn, each rule's in its own order: by the
/// place of each among its rule's (a stable sort keeps the rules' order at each place).
fn in_turn(rules: Vec<RuleRecipe>) -> Vec<RuleRecipe> {
    let mut places: std::collections::HashMap<&'static str, usize> = Default::default();
    let mut placed: Vec<(usize, RuleRecipe)> = rules
        .into_iter()
        .map(|r| {
            let place = places.entry(r.0).or_default();
            *place += 1;
            (*place, r)
        })
        .collect();
    placed.sort_by_key(|(place, _)| *place);
    placed.into_iter().map(|(_, r)| r).collect()
}

/// Admits the neighbours' picks (`picks`, one per candidate, in the ranker's order;
/// `None`: passed over) and `rules`' recipes into `k` measured slots. Candidates of the
/// rules' recipes are appended (`rule_candidate` makes them); a pick or a rule's recipe
/// left out stays a candidate, not measured, with the reason.
pub(super) fn admit(
    k: usize,
    candidates: &mut Vec<Candidate>,
    picks: &mut Vec<Option<Recipe>>,
    rules: Vec<RuleRecipe>,
    rule_candidate: &dyn Fn(&str, String, Recipe) -> Candidate,
) {
    // A neighbour's recipe, re-fitted, may be a rule's very recipe: measured once, as
    // the neighbour's.
    let rules: Vec<RuleRecipe> = in_turn(rules)
        .into_iter()
        .filter(|(_, _, r)| !picks.iter().any(|p| p.as_ref() == Some(r)))
        .collect();
    let neighbours = picks.iter().flatten().count();
    let ruled = rules
        .len()
        .min(rule_share(k).max(k.saturating_sub(neighbours)));
    let kept = neighbours.min(k - ruled);
    let mut seen = 0;
    for (c, p) in candidates.iter_mut().zip(picks.iter_mut()) {
        if p.is_none() {
            continue;
        }
        seen += 1;
        if seen > kept {
            *p = None;
            c.verdict = CandidateVerdict::NotMeasured;
            c.why = format!(
                "passed over, not measured: the nest measures {k} candidates, {ruled} of \
                 them the rules' and {kept} the nearer neighbours'"
            );
        }
    }
    for (n, (rule, what, recipe)) in rules.into_iter().enumerate() {
        let mut c = rule_candidate(rule, what, recipe.clone());
        if n < ruled {
            picks.push(Some(recipe));
        } else {
            c.verdict = CandidateVerdict::NotMeasured;
            c.why = format!(
                "not measured: the nest measures {k} candidates, {ruled} of them the \
                 rules' (one of each rule in turn) and {kept} the neighbours'"
            );
            picks.push(None);
        }
        candidates.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Neighbour;
    use ir::transform::Step;

    fn recipe(factor: u32) -> Recipe {
        Recipe {
            steps: vec![Step::Unroll { at: 0, factor }],
        }
    }

    fn candidate(program: &str, r: Recipe) -> Candidate {
        Candidate::unmeasured(
            Neighbour {
                program: program.into(),
                nest: "nest0".into(),
                distance: 0.0,
                speedup_there: 0.0,
            },
            r,
            Vec::new(),
        )
    }

    fn rule(name: &'static str, factor: u32) -> RuleRecipe {
        (name, format!("{name} {factor}"), recipe(factor))
    }

    /// (program, measured) of each candidate after admitting `neighbours` (None: passed
    /// over by the walk) and `rules` into `k` slots.
    fn admitted(
        k: usize,
        neighbours: &[Option<u32>],
        rules: Vec<RuleRecipe>,
    ) -> Vec<(String, bool)> {
        let mut candidates: Vec<Candidate> = neighbours
            .iter()
            .map(|f| candidate("entry", recipe(f.unwrap_or(99))))
            .collect();
        let mut picks: Vec<Option<Recipe>> = neighbours.iter().map(|f| f.map(recipe)).collect();
        admit(k, &mut candidates, &mut picks, rules, &|rule, what, r| {
            let mut c = candidate(rule, r);
            c.from.nest = what;
            c
        });
        assert_eq!(candidates.len(), picks.len());
        for (c, p) in candidates.iter().zip(&picks) {
            if p.is_none() && c.from.program != "entry" {
                assert_eq!(c.verdict, CandidateVerdict::NotMeasured);
                assert!(c.why.starts_with("not measured"), "{}", c.why);
            }
        }
        candidates
            .iter()
            .zip(&picks)
            .map(|(c, p)| (format!("{} {}", c.from.program, c.from.nest), p.is_some()))
            .collect()
    }

    /// The measured ones of [`admitted`]'s candidates.
    fn measured(got: &[(String, bool)]) -> Vec<&str> {
        got.iter()
            .filter(|(_, m)| *m)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    #[test]
    fn rules_and_neighbours_share_k_slots_the_rules_half_rounded_up() {
        // K = 3, three neighbours, rules of two kinds with two recipes each: the rules
        // take two slots, one of each rule, and the nearest neighbour the third.
        let got = admitted(
            3,
            &[Some(1), Some(2), Some(3)],
            vec![
                rule("tile", 10),
                rule("tile", 11),
                rule("order", 20),
                rule("order", 21),
            ],
        );
        assert_eq!(
            measured(&got),
            ["entry nest0", "tile tile 10", "order order 20"]
        );
        assert_eq!(got.len(), 7);
    }

    #[test]
    fn slots_the_neighbours_leave_go_to_the_rules() {
        // One distinct neighbour's recipe (the walk passed the others over): the rules
        // take the two other slots, both sizes of one rule.
        let got = admitted(
            3,
            &[Some(1), None, None],
            vec![rule("tile", 10), rule("tile", 11)],
        );
        assert_eq!(
            measured(&got),
            ["entry nest0", "tile tile 10", "tile tile 11"]
        );
        // No rule applies: the neighbours keep every slot.
        let got = admitted(3, &[Some(1), Some(2), Some(3)], Vec::new());
        assert_eq!(measured(&got).len(), 3);
    }

    #[test]
    fn a_rules_recipe_that_a_neighbour_picked_is_measured_once_as_the_neighbours() {
        let got = admitted(
            2,
            &[Some(10), Some(2)],
            vec![rule("tile", 10), rule("tile", 11)],
        );
        // tile 10 is the first neighbour's: the rule's slot goes to tile 11, and the
        // second neighbour is left out.
        assert_eq!(
            got,
            [
                ("entry nest0".to_string(), true),
                ("entry nest0".to_string(), false),
                ("tile tile 11".to_string(), true),
            ]
        );
    }

    #[test]
    fn the_rules_share_rounds_up() {
        assert_eq!((1..=5).map(rule_share).collect::<Vec<_>>(), [1, 1, 2, 2, 3]);
    }
}

//! Rule-made candidates of [`Pipeline::apply`] for dense nests: every band of three loops
//! that accumulates a product (`W[u][v] += P(u, r) * Q(r, v)`: gemm, 2mm, 3mm, the
//! products of covariance and correlation) is also tried as a vector register tile
//! over packed panels (`ir::transform::Step::RegisterTile`), whatever the database
//! holds, in both sizes of [`crate::sizing::candidates`] for the machine that runs the
//! tuning (the nest's budget, `pipeline/budget.rs`, measures as many of them as its
//! slots allow).
//!
//! A register tile transferred from the database is sized the same way here
//! ([`fit_to_machine`]): the entry may come from another vector ISA.

use super::*;
use crate::sizing::{self, Cpu};

/// The register-tile recipes to try on the nest at `root` (position, then what the
/// candidate is called in reports).
pub(super) fn register_tile_recipes(
    program: &ir::Program,
    root: &ir::Loop,
    machine: Option<&MachineInfo>,
) -> Vec<(String, Recipe)> {
    let mut out = Vec::new();
    for (at, elem, products) in sizing::sites(program, root) {
        for z in sizing::candidates(machine.map(Cpu::of_machine), elem, products) {
            let recipe = Recipe {
                steps: vec![z.step(at, true)],
            };
            let what = format!(
                "loop {at}: {}x{} register tile, {}x{}x{} blocks",
                z.mr, z.nr, z.mc, z.kc, z.nc
            );
            out.push((what, recipe));
        }
    }
    out
}

/// `recipe` (transferred from another nest, maybe measured on another machine) with
/// its register tiles sized for this machine, as for the rule's own candidates.
pub(super) fn fit_to_machine(
    recipe: &Recipe,
    program: &ir::Program,
    root: &ir::Loop,
    machine: Option<&MachineInfo>,
) -> Recipe {
    sizing::fit(recipe, program, root, machine.map(Cpu::of_machine))
}

/// The candidate `rule` proposes, as reports name it.
pub(super) fn rule_candidate(rule: &str, what: String, recipe: Recipe) -> Candidate {
    let from = Neighbour {
        program: rule.into(),
        nest: what,
        distance: 0.0,
        speedup_there: 0.0,
    };
    Candidate::unmeasured(from, recipe, Vec::new())
}

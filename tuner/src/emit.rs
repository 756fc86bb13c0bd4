//! The tuned program: the user's own source with recipes applied to its nests.

use crate::{Error, Result};
use ir::transform::Recipe;
use ir::Program;

/// The source of `program`'s file with each (region, root loop, recipe) applied, and
/// whether the result needs OpenMP; `what` names the step in an error. Nests whose
/// recipe is empty stay byte for byte as the user wrote them.
pub fn tuned_source(
    program: &Program,
    recipes: &[(usize, usize, Recipe)],
    what: &'static str,
) -> Result<(String, bool)> {
    let (tuned, openmp) = ir::emit::apply_recipes(program, recipes).map_err(|e| Error::Emit {
        what,
        source: Box::new(e),
    })?;
    let text = std::fs::read_to_string(&program.file).map_err(Error::read(&program.file))?;
    let changed = changed_nests(recipes);
    let out =
        ir::emit::tuned_source(&text, &tuned, program, &changed).map_err(|e| Error::Emit {
            what: "writing the tuned source",
            source: Box::new(e),
        })?;
    Ok((out, openmp))
}

/// The user's file and the tuned one with a timer around each changed nest (see
/// [`ir::emit::timed_sources`]), ready for the bench's build; None where the user's file
/// has `#pragma scop` regions (those are timed), or a changed nest cannot be timed alone.
pub fn timed_sources(
    program: &Program,
    recipes: &[(usize, usize, Recipe)],
) -> Result<Option<(String, String)>> {
    let text = std::fs::read_to_string(&program.file).map_err(Error::read(&program.file))?;
    if crate::bench::timed_source(&text).is_some() {
        return Ok(None);
    }
    let (tuned, _) = ir::emit::apply_recipes(program, recipes).map_err(|e| Error::Emit {
        what: "timing the changed nests",
        source: Box::new(e),
    })?;
    let changed = changed_nests(recipes);
    Ok(ir::emit::timed_sources(
        &text,
        &tuned,
        program,
        &changed,
        crate::bench::TIMER_START,
        crate::bench::TIMER_STOP,
    )
    .map(|(was, now)| {
        (
            crate::bench::timed_copy(&was),
            crate::bench::timed_copy(&now),
        )
    }))
}

/// The (region, root) of each nest whose recipe changes it.
fn changed_nests(recipes: &[(usize, usize, Recipe)]) -> Vec<(usize, usize)> {
    recipes
        .iter()
        .filter(|(_, _, r)| !r.steps.is_empty())
        .map(|(region, root, _)| (*region, *root))
        .collect()
}

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
    let e = emitted(program, recipes, what, false)?;
    Ok((e.source, e.openmp))
}

/// A tuned file as `tune apply` writes it, with what its whole-program check builds.
pub struct Emitted {
    /// The tuned source.
    pub source: String,
    /// It needs OpenMP.
    pub openmp: bool,
    /// The user's file and the tuned one with a timer around each changed nest (see
    /// [`ir::emit::timed_sources`]), ready for the bench's build; None where the user's
    /// file has `#pragma scop` regions (those are timed), or a changed nest cannot be
    /// timed alone.
    pub timed: Option<(String, String)>,
}

/// [`tuned_source`], and with `timed` the copies its check times: the file read and
/// the recipes applied once for both.
pub fn emitted(
    program: &Program,
    recipes: &[(usize, usize, Recipe)],
    what: &'static str,
    timed: bool,
) -> Result<Emitted> {
    let (tuned, openmp) = ir::emit::apply_recipes(program, recipes).map_err(|e| Error::Emit {
        what,
        source: Box::new(e),
    })?;
    let text = std::fs::read_to_string(&program.file).map_err(Error::read(&program.file))?;
    let changed = changed_nests(recipes);
    let source =
        ir::emit::tuned_source(&text, &tuned, program, &changed).map_err(|e| Error::Emit {
            what: "writing the tuned source",
            source: Box::new(e),
        })?;
    let timed = (timed && crate::bench::timed_source(&text).is_none())
        .then(|| {
            ir::emit::timed_sources(
                &text,
                &tuned,
                program,
                &changed,
                crate::bench::TIMER_START,
                crate::bench::TIMER_STOP,
            )
        })
        .flatten()
        .map(|(was, now)| {
            (
                crate::bench::timed_copy(&was),
                crate::bench::timed_copy(&now),
            )
        });
    Ok(Emitted {
        source,
        openmp,
        timed,
    })
}

/// The (region, root) of each nest whose recipe changes it.
fn changed_nests(recipes: &[(usize, usize, Recipe)]) -> Vec<(usize, usize)> {
    recipes
        .iter()
        .filter(|(_, _, r)| !r.steps.is_empty())
        .map(|(region, root, _)| (*region, *root))
        .collect()
}

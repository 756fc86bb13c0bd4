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
    let changed: Vec<(usize, usize)> = recipes
        .iter()
        .filter(|(_, _, r)| !r.steps.is_empty())
        .map(|(region, root, _)| (*region, *root))
        .collect();
    let out =
        ir::emit::tuned_source(&text, &tuned, program, &changed).map_err(|e| Error::Emit {
            what: "writing the tuned source",
            source: Box::new(e),
        })?;
    Ok((out, openmp))
}

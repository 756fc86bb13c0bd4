//! Bands of perfectly nested loops, their directives and their direction vectors.

use super::*;

/// The perfectly nested band of `m` loops at `l`, free of directives (restructuring
/// comes before annotating).
pub(crate) fn transformable_band(l: &Loop, m: usize, k: usize) -> Result<Vec<&Loop>, Refusal> {
    let band = band_of(l, m).ok_or_else(|| Refusal::NotApplicable {
        step: k,
        why: format!("no perfectly nested band of {m} loops at '{}'", l.var),
    })?;
    check_pragma_free(&band, k)?;
    Ok(band)
}

pub(crate) fn check_pragma_free(band: &[&Loop], k: usize) -> Result<(), Refusal> {
    match band.iter().find(|x| x.has_directives()) {
        Some(x) => Err(Refusal::NotApplicable {
            step: k,
            why: format!(
                "loop '{}' already carries directives; restructure before annotating",
                x.var
            ),
        }),
        None => Ok(()),
    }
}

/// The loops from `root` down to the loop at preorder position `at`, both included.
fn chain(root: &Loop, at: usize) -> Option<Vec<&Loop>> {
    let route = locate(root, at)?;
    let mut chain = vec![root];
    let mut body = &root.body;
    for (i, via) in &route {
        match (&body[*i], via) {
            (Node::Loop(l), _) => {
                chain.push(l);
                body = &l.body;
            }
            (Node::Block(b), _) => body = b,
            (Node::If(x), Via::Then) => body = &x.then_body,
            (Node::If(x), _) => body = &x.else_body,
            _ => return None,
        }
    }
    Some(chain)
}

/// The variable of the loop whose `collapse` band strictly contains loop `at`.
pub(crate) fn collapsed_into(root: &Loop, at: usize) -> Option<String> {
    let chain = chain(root, at)?;
    // chain ends with the loop itself; its ancestors before it.
    let depth = chain.len() - 1;
    chain[..depth].iter().enumerate().find_map(|(d, a)| {
        a.collapse()
            .filter(|n| depth - d < *n as usize)
            .map(|_| a.var.clone())
    })
}

/// Whether a loop strictly enclosing preorder position `at` satisfies `what`.
pub(crate) fn ancestors_have(root: &Loop, at: usize, what: fn(&Loop) -> bool) -> bool {
    let Some(route) = locate(root, at) else {
        return false;
    };
    let mut above = what(root) && at != 0;
    let mut body = &root.body;
    for (k, (i, via)) in route.iter().enumerate() {
        let last = k + 1 == route.len();
        match (&body[*i], via) {
            (Node::Loop(l), _) => {
                if !last {
                    above |= what(l);
                }
                body = &l.body;
            }
            (Node::Block(b), _) => body = b,
            (Node::If(x), Via::Then) => body = &x.then_body,
            (Node::If(x), _) => body = &x.else_body,
            _ => return false,
        }
    }
    above
}

/// The perfectly nested band of `m` loops starting at `l`.
pub(crate) fn band_of(l: &Loop, m: usize) -> Option<Vec<&Loop>> {
    let mut band = vec![l];
    while band.len() < m {
        match band.last().expect("band").body.as_slice() {
            [Node::Loop(inner)] => band.push(inner),
            _ => return None,
        }
    }
    Some(band)
}

/// Direction components over `band` (consecutive common loops) of every dependence
/// that is not carried by a loop outside the band.
pub(crate) fn band_vectors(an: &Analysis, band: &[usize]) -> Vec<Vec<Dir>> {
    band_vectors_where(an, band, &|_| true)
}

/// [`band_vectors`] of the dependences that `keep` keeps.
pub(crate) fn band_vectors_where(
    an: &Analysis,
    band: &[usize],
    keep: &dyn Fn(&crate::deps::Dependence) -> bool,
) -> Vec<Vec<Dir>> {
    an.deps
        .iter()
        .filter(|d| keep(d))
        .filter_map(|d| {
            let p = d.loops.iter().position(|id| *id == band[0])?;
            if d.loops.get(p..p + band.len())? != band
                || d.directions[..p].iter().any(|x| *x != Dir::Eq)
            {
                return None;
            }
            Some(d.directions[p..p + band.len()].to_vec())
        })
        .collect()
}

/// A loop's header (everything but its body).
pub(crate) fn header_of(l: &Loop) -> Loop {
    Loop {
        body: Vec::new(),
        ..l.clone()
    }
}

/// Nests `headers` (outermost first) around `body`.
pub(crate) fn nest_headers(headers: Vec<Loop>, body: Vec<Node>) -> Loop {
    let mut inner = body;
    let mut out = None;
    for mut h in headers.into_iter().rev() {
        h.body = inner;
        inner = vec![Node::Loop(h.clone())];
        out = Some(h);
    }
    out.expect("at least one header")
}

/// The kind (`register tile`, `time tile`) and variable of the loop, at `at` or around
/// it, whose kernel holds loop `at` (its loops print as one kernel).
pub(crate) fn register_tiled_into(root: &Loop, at: usize) -> Option<(&'static str, String)> {
    let kernel = |l: &Loop| {
        l.directives.iter().find_map(|d| match d {
            Directive::RegisterTile(_) => Some("register tile"),
            Directive::TimeTile(_) => Some("time tile"),
            _ => None,
        })
    };
    // The root's kernel holds every loop, even one `locate` cannot reach.
    if let Some(k) = kernel(root) {
        return Some((k, root.var.clone()));
    }
    chain(root, at)?
        .into_iter()
        .find_map(|l| kernel(l).map(|k| (k, l.var.clone())))
}

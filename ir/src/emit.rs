//! Writing a tuned program: the user's own source file with each region's text
//! replaced by the (transformed) region printed as C. Everything outside the regions —
//! includes, macros, the harness, comments — stays byte for byte as the user wrote it,
//! so the tuned file drops into the program's own build (`cc -fopenmp ...`).
//!
//! Region code is printed after preprocessing: macros used inside a region appear
//! expanded (`_PB_N` becomes `n`, or its value when the harness bakes sizes in).

use crate::print::{self, PrintOptions};
use crate::program::{for_each_loop_mut, Program, Region};
use crate::transform::{apply, Recipe, Refusal};

/// A replacement of `text[start..end]`: (start, end, new text).
type Edit = (usize, usize, String);

/// Why a tuned file could not be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmitError {
    #[error("{file}:{line}: region {region} was not found there (is it inside a header?)")]
    RegionNotFound {
        file: String,
        line: u32,
        region: usize,
    },
}

/// The source `text` of `original.file` with the nests listed in `changed` (region,
/// root loop id in `original`) replaced by those nests as they are in `program` (the
/// transformed program); everything else stays byte for byte as the user wrote it
/// (comments, macros, spacing, other nests). A nest is replaced from its first
/// directive line to the line its loop ends on; where that text shares a line with
/// other code, its whole region is printed instead (`#pragma scop` regions keep their
/// markers, so the tuned file can be tuned again; `--function` regions get a new
/// function body).
pub fn tuned_source(
    text: &str,
    program: &Program,
    original: &Program,
    changed: &[(usize, usize)],
) -> Result<String, EmitError> {
    let lines = line_starts(text);
    let nest_edits: Vec<(usize, Option<Edit>)> = changed
        .iter()
        .map(|&(region, root)| {
            let e = nest_edit(text, &lines, program, original, region, root);
            (region, e)
        })
        .collect();
    // A region with a nest that cannot be replaced alone is printed whole.
    let whole: std::collections::BTreeSet<usize> = nest_edits
        .iter()
        .filter(|(_, e)| e.is_none())
        .map(|(region, _)| *region)
        .collect();
    let mut edits: Vec<Edit> = nest_edits
        .into_iter()
        .filter(|(region, _)| !whole.contains(region))
        .filter_map(|(_, e)| e)
        .collect();
    // A changed nest of such a region that needs the pointers' check keeps it: the
    // check, the changed nest and the user's nest (printed from the original) stand in
    // its place.
    let mut guarded = program.clone();
    for &(region, root) in changed.iter().filter(|(r, _)| whole.contains(r)) {
        let Some(old) = original
            .regions
            .get(region)
            .and_then(|r| crate::program::find_loop(&r.body, root))
        else {
            continue;
        };
        let Some(check) = crate::flat::disjoint_check(original, old) else {
            continue;
        };
        let Some(slot) = crate::program::find_loop(&guarded.regions[region].body, root) else {
            continue;
        };
        let new = nodes_code(
            program,
            vec![crate::program::Node::Loop(slot.clone())],
            "  ",
        );
        let was = nodes_code(
            original,
            vec![crate::program::Node::Loop(old.clone())],
            "  ",
        );
        let pos = slot.pos;
        let text = check.around(&new, &was, "").trim_end().to_string();
        let opaque = crate::program::Opaque {
            text,
            reason: "a changed nest under the pointers' check".into(),
            names: Vec::new(),
            writes: Vec::new(),
            declares: Vec::new(),
            returns: false,
            pos,
        };
        crate::transform::rewrite::replace_loop_node(
            &mut guarded.regions[region].body,
            root,
            &mut Some(crate::program::Node::Opaque(opaque)),
        );
    }
    edits.extend(region_edits(text, &guarded, &whole)?);
    Ok(apply_edits(text, edits))
}

/// The user's source `text` and the tuned one ([`tuned_source`] of the same nests), each
/// with `enter` before and `leave` after every changed nest, in a block of its own (a
/// nest may be the body of an `if` without braces): the whole-program check then times,
/// in both programs, the code that tuning changed and nothing else. None where a
/// changed nest cannot be replaced alone (its region is printed anew). A worksharing
/// loop in the user's `#pragma omp parallel` block is timed inside the block: each
/// thread of the team times its part, the implicit barrier at its end included (the
/// timer keeps one start per thread and adds atomically).
pub fn timed_sources(
    text: &str,
    program: &Program,
    original: &Program,
    changed: &[(usize, usize)],
    enter: &str,
    leave: &str,
) -> Option<(String, String)> {
    let lines = line_starts(text);
    let mut was = Vec::new();
    let mut now = Vec::new();
    for &(region, root) in changed {
        let (start, after, new) = nest_edit(text, &lines, program, original, region, root)?;
        let timed = |code: &str| format!("{{ {enter}\n{code}{leave} }}\n");
        was.push((start, after, timed(&text[start..after])));
        now.push((start, after, timed(&new)));
    }
    (!changed.is_empty()).then(|| (apply_edits(text, was), apply_edits(text, now)))
}

/// The edit that replaces one nest's text by the nest as `program` has it, or None
/// when its text shares a line with other code.
fn nest_edit(
    text: &str,
    lines: &[usize],
    program: &Program,
    original: &Program,
    region: usize,
    root: usize,
) -> Option<(usize, usize, String)> {
    let body = &original.regions.get(region)?.body;
    let old = crate::program::find_loop(body, root)?;
    let path = crate::transform::rewrite::path_to_loop(body, root)?;
    let mut new_body = program.regions.get(region)?.body.clone();
    let mut new = crate::transform::rewrite::loop_at_path_mut(&mut new_body, &path).clone();
    let line = |n: u32| lines.get(n.checked_sub(1)? as usize).copied();
    let for_line = line(old.pos.line)?;
    let after = line(old.end.line + 1).unwrap_or(text.len());
    let end = (line(old.end.line)? + old.end.col as usize).min(after);
    let before_for =
        &text[for_line..(for_line + old.pos.col.saturating_sub(1) as usize).min(after)];
    // The positions must lead to this loop's text in this file (not a macro's).
    let for_at = for_line + before_for.len();
    if !before_for.trim().is_empty()
        || !text[end..after].trim().is_empty()
        || !text[for_at..].starts_with("for")
        || !text[..end].ends_with(['}', ';'])
    {
        return None;
    }
    // The loop's directives stand on the lines right above it.
    let mut start = for_line;
    // The user's parallel region stays around the loop in their file: only the loop's
    // own directives are replaced with it.
    let in_block =
        |d: &crate::program::Directive| matches!(d, crate::program::Directive::InParallel { .. });
    let line_above = |at: usize| {
        text[..at.saturating_sub(1)]
            .rfind('\n')
            .map_or(0, |k| k + 1)
    };
    for _ in 0..old.directives.iter().filter(|d| !in_block(d)).count() {
        let mut prev = line_above(start);
        // A directive continued with `\` starts on a line above.
        while prev > 0 && text[line_above(prev)..prev].trim_end().ends_with('\\') {
            prev = line_above(prev);
        }
        crate::source::pragma_text(&text[prev..start])?;
        start = prev;
    }
    new.directives.retain(|d| !in_block(d));
    let mut out = nodes_code(program, vec![crate::program::Node::Loop(new)], before_for);
    // Pointers read as arrays: the changed nest runs where they do not overlap, the
    // user's nest, as written, elsewhere.
    if let Some(check) = crate::flat::disjoint_check(original, old) {
        out = check.around(&out, &text[start..after], before_for);
    }
    Some((start, after, out))
}

/// `text` with non-overlapping edits (start, end, replacement) applied.
fn apply_edits(text: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (s, e, with) in edits {
        out.replace_range(s..e, &with);
    }
    out
}

/// The edits that print the regions listed in `changed` anew from `program`.
fn region_edits(
    text: &str,
    program: &Program,
    changed: &std::collections::BTreeSet<usize>,
) -> Result<Vec<(usize, usize, String)>, EmitError> {
    let lines = line_starts(text);
    let offset = |line: u32, col: u32| -> Option<usize> {
        let start = *lines.get(line.checked_sub(1)? as usize)?;
        Some(start + col.saturating_sub(1) as usize).filter(|o| *o <= text.len())
    };
    let line_end = |o: usize| text[o..].find('\n').map_or(text.len(), |k| o + k + 1);
    let not_found = |r: &Region| EmitError::RegionNotFound {
        file: program.file.clone(),
        line: r.start.line,
        region: r.index,
    };
    // (start, end, replacement), applied back to front.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for r in program
        .regions
        .iter()
        .filter(|r| changed.contains(&r.index))
    {
        let s = offset(r.start.line, 1).ok_or_else(|| not_found(r))?;
        let e = offset(r.end.line, 1).ok_or_else(|| not_found(r))?;
        let first = &text[s..line_end(s)];
        let last = &text[e..line_end(e)];
        let indent: String = text[line_end(s).min(text.len())..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        if is_pragma(first, "scop") && is_pragma(last, "endscop") {
            let mut out = first.to_string();
            out.push_str(&region_code(program, r, &indent));
            out.push_str(last);
            edits.push((s, line_end(e), out));
        } else {
            // A function body: between its braces.
            let open = offset(r.start.line, r.start.col).ok_or_else(|| not_found(r))?;
            // Past the text where a macro moved the preprocessed column (below).
            let close = offset(r.end.line, r.end.col).unwrap_or(text.len());
            let brace_at = |o: usize, c: u8| text.as_bytes().get(o) == Some(&c);
            let (open, close) = match (brace_at(open, b'{'), brace_at(close, b'}')) {
                (true, true) => (open, close),
                // End positions may point one past the closing brace.
                (true, false) if close > 0 && brace_at(close - 1, b'}') => (open, close - 1),
                // A macro on the body's last line moves the preprocessed column: the
                // brace that matches the opening one, in the user's text.
                (true, false) => (
                    open,
                    matching_brace(text, open).ok_or_else(|| not_found(r))?,
                ),
                _ => return Err(not_found(r)),
            };
            let mut out = String::from("\n");
            out.push_str(&region_code(program, r, "  "));
            edits.push((open + 1, close, out));
        }
    }
    Ok(edits)
}

/// Applies one recipe per nest (`(region, root loop id, recipe)`) to `program`. Nests
/// are transformed last-first within each region, so the loop ids of the nests still
/// to do do not move. Returns the program and whether it needs OpenMP.
pub fn apply_recipes(
    program: &Program,
    nests: &[(usize, usize, Recipe)],
) -> Result<(Program, bool), Refusal> {
    let mut order: Vec<&(usize, usize, Recipe)> = nests.iter().collect();
    order.sort_by_key(|(region, root, _)| std::cmp::Reverse((*region, *root)));
    let mut prog = program.clone();
    // The user's own OpenMP directives need -fopenmp as much as the recipes' do.
    let mut openmp = program.regions.iter().any(|r| {
        crate::program::loops(&r.body)
            .iter()
            .any(|l| l.has_openmp())
    });
    for (region, root, recipe) in order {
        if recipe.steps.is_empty() {
            continue;
        }
        let t = apply(&prog, *region, *root, recipe)?;
        openmp |= t.openmp;
        prog = t.program;
    }
    Ok((prog, openmp))
}

/// The offset of the `}` that closes the `{` at `open`, past string and character
/// literals, comments and directive lines.
fn matching_brace(text: &str, open: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 1);
            }
            b'#' if text[..i]
                .rsplit('\n')
                .next()
                .is_some_and(|l| l.trim().is_empty()) =>
            {
                while i < b.len() && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_pragma(line: &str, name: &str) -> bool {
    let mut words = line.trim_start().trim_start_matches('#').split_whitespace();
    line.trim_start().starts_with('#')
        && words.next() == Some("pragma")
        && words.next() == Some(name)
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(k, _)| k + 1))
        .collect()
}

/// The region's statements as C, each line indented with `indent`. Loops at or inside
/// an OpenMP parallel loop that tune wrote declare their variables (`for (int j = ...)`), so that every
/// thread has its own; elsewhere loops are printed as the source declared them.
/// Under C89 (`program.c89`), no loop declares its variable in its `for` (see
/// [`PrintOptions::c89`]).
/// Pointers read as arrays are indexed with one subscript, as in the user's code.
pub fn region_code(program: &Program, region: &Region, indent: &str) -> String {
    nodes_code(program, region.body.clone(), indent)
}

/// Statements as C (see [`region_code`]), each line indented with `indent`.
fn nodes_code(program: &Program, mut body: Vec<crate::program::Node>, indent: &str) -> String {
    let c89 = program.c89;
    crate::flat::linearize(program, &mut body);
    crate::flat::source_names(program, &mut body);
    // The user's macro names, where they wrote one, rather than its number (in
    // statements, bounds and the array sections of reduction clauses).
    let mut named = |e: &crate::program::Expr| match e {
        crate::program::Expr::Int {
            value,
            name: crate::program::MacroName(Some(name)),
            ..
        } => Some(crate::program::Expr::Int {
            value: *value,
            text: name.clone(),
            name: crate::program::MacroName::default(),
        }),
        _ => None,
    };
    crate::transform::rewrite::rewrite_nodes(&mut body, &mut named);
    for_each_loop_mut(&mut body, &mut |l| {
        for d in &mut l.directives {
            if let crate::program::Directive::OmpParallelFor { reduction, .. } = d {
                for e in reduction.iter_mut().flat_map(|item| &mut item.section) {
                    crate::transform::rewrite::rewrite(e, &mut named);
                }
            }
        }
        // Loops that tune made parallel declare their variables (private to each
        // thread); under the user's own directives their clauses say what is private.
        if l.is_parallel_for() && !l.directives.iter().any(|d| d.is_users()) {
            l.declares_var = true;
            for_each_loop_mut(&mut l.body, &mut |inner| inner.declares_var = true);
        }
    });
    let mut raw = String::new();
    let access = crate::flat::user_access(program, true);
    let opts = PrintOptions {
        c89,
        access: &access,
        ..PrintOptions::default()
    };
    print::body(&body, &opts, 0, &mut raw);
    let mut out = String::new();
    for line in raw.lines() {
        if !line.starts_with('#') {
            out.push_str(indent);
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragma_lines_are_recognized_with_spacing() {
        assert!(is_pragma("#pragma scop\n", "scop"));
        assert!(is_pragma("  #  pragma   endscop\n", "endscop"));
        assert!(!is_pragma("#pragma scop\n", "endscop"));
        assert!(!is_pragma("// #pragma scop\n", "scop"));
    }
}

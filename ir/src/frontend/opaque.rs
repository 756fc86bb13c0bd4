//! Statements the IR does not model, kept as glue.
//!
//! A call, a `while` loop, a `return`, a pointer access, a declaration initialized by a
//! call: the statement is kept as [`Opaque`] text, printed back as written, and the
//! loop nests around it are still tuned. A loop holding one is sequential and never a
//! nest. What it may touch is read off its text: every identifier it names, and as
//! written the ones it assigns, increments, takes the address of, or that are arrays
//! or pointers (a callee may write through them).

use super::*;
use crate::program::Opaque;

/// What lowering changes, put back when a statement turns out to be opaque.
#[derive(Clone)]
pub(super) struct Saved {
    used_pragmas: std::collections::BTreeSet<usize>,
    scopes: Vec<HashMap<String, Sym>>,
    loop_vars: Vec<(String, DType)>,
    done_loop_vars: Vec<String>,
    arrays: BTreeMap<String, Array>,
    scalars: BTreeMap<String, Scalar>,
    next_loop: usize,
    next_stmt: usize,
}

/// The reason a failed lowering gives for keeping the statement as glue; `None` for
/// errors that are not about the statement's form.
pub(super) fn opaque_reason(e: &Error) -> Option<String> {
    match e {
        Error::Unsupported { what, .. } => Some(what.clone()),
        Error::Invalid { message, .. }
            if message.starts_with("unknown identifier")
                || message.ends_with("is not an array") =>
        {
            Some(message.clone())
        }
        _ => None,
    }
}

impl Lowerer<'_> {
    pub(super) fn save(&self) -> Saved {
        Saved {
            used_pragmas: self.used_pragmas.clone(),
            scopes: self.scopes.clone(),
            loop_vars: self.loop_vars.clone(),
            done_loop_vars: self.done_loop_vars.clone(),
            arrays: self.arrays.clone(),
            scalars: self.scalars.clone(),
            next_loop: self.next_loop,
            next_stmt: self.next_stmt,
        }
    }

    pub(super) fn restore(&mut self, s: Saved) {
        self.used_pragmas = s.used_pragmas;
        self.scopes = s.scopes;
        self.loop_vars = s.loop_vars;
        self.done_loop_vars = s.done_loop_vars;
        self.arrays = s.arrays;
        self.scalars = s.scalars;
        self.next_loop = s.next_loop;
        self.next_stmt = s.next_stmt;
    }

    /// `lower`, or the statement at `span` as glue when the IR does not model it.
    pub(super) fn or_opaque(
        &mut self,
        span: Span,
        lower: impl FnOnce(&mut Self) -> Result<Vec<Node>>,
        declares: impl FnOnce(&mut Self) -> Vec<String>,
    ) -> Result<Vec<Node>> {
        let saved = self.save();
        match lower(self) {
            Ok(nodes) => Ok(nodes),
            Err(e) => match opaque_reason(&e) {
                Some(reason) => {
                    self.restore(saved);
                    let declares = declares(self);
                    Ok(vec![Node::Opaque(self.opaque(span, reason, declares))])
                }
                None => Err(e),
            },
        }
    }

    /// The directive on the line right above `offset`, when the statement there starts
    /// its line.
    pub(super) fn pragma_above(&self, offset: usize) -> Option<String> {
        let start = self.pp.line_start(offset);
        if start == 0 || !self.pp.text[start..offset].trim().is_empty() {
            return None;
        }
        let prev = self.pp.line_start(start - 1);
        crate::source::pragma_text(&self.pp.text[prev..start])
            .filter(|p| !matches!(p.split_whitespace().nth(1), Some("scop" | "endscop")))
    }

    /// The statement at `span`, with the pragma lines right above it, as glue.
    pub(super) fn opaque(&mut self, span: Span, reason: String, declares: Vec<String>) -> Opaque {
        let start = self.statement_start(span);
        let end = token_end(&self.pp.text, span);
        self.opaque_text(start..end, span, reason, declares)
    }

    /// A `while`, `do`-`while` or `for` loop whose header the IR does not model: its
    /// header (and a `do` loop's condition) are glue kept as written, its body is
    /// lowered as a block, so the loop nests inside it are still nests. Printed in
    /// sequence the three read as the loop they came from: `while (c)` `{ body }`, or
    /// `do` `{ body }` `while (c);`.
    pub(super) fn container(
        &mut self,
        span: Span,
        body: &CNode<Statement>,
        what: &str,
        condition_after: bool,
    ) -> Result<Vec<Node>> {
        let start = self.statement_start(span);
        let head = self.pp.text[start..body.span.start].trim_end().len() + start;
        let reason = format!("{what} (its body is tuned)");
        let head = self.opaque_text(start..head, span, reason, Vec::new());
        self.scopes.push(HashMap::new());
        let inner = self.statement(body);
        self.scopes.pop();
        let mut out = vec![Node::Opaque(head), Node::Block(inner?)];
        if condition_after {
            let end = token_end(&self.pp.text, span);
            let from = body.span.end
                + (self.pp.text[body.span.end..end].len()
                    - self.pp.text[body.span.end..end].trim_start().len());
            let tail_span = Span::span(from, end);
            let reason = format!("condition of the {what}");
            out.push(Node::Opaque(self.opaque_text(
                from..end,
                tail_span,
                reason,
                Vec::new(),
            )));
        }
        Ok(out)
    }

    /// Where the statement at `span` starts, the directive lines right above it
    /// included (marked as used: they stay with it).
    fn statement_start(&mut self, span: Span) -> usize {
        let text = &self.pp.text;
        let mut start = self.pp.line_start(span.start);
        if !text[start..span.start].trim().is_empty() {
            start = span.start;
        } else {
            // Its directives belong to it, with the blank lines and line markers
            // between them (a directive continued with `\` leaves a blank line).
            let mut at = start;
            while at > 0 {
                let prev = self.pp.line_start(at - 1);
                let line = &text[prev..at];
                let t = line.trim();
                match crate::source::pragma_text(line) {
                    Some(p) if !matches!(p.split_whitespace().nth(1), Some("scop" | "endscop")) => {
                        self.used_pragmas.insert(prev);
                        start = prev;
                    }
                    Some(_) => break,
                    None if t.is_empty() || t.starts_with("# ") => {}
                    None => break,
                }
                at = prev;
            }
            if start == self.pp.line_start(span.start) {
                start = span.start;
            }
        }
        start
    }

    /// The text `range` as glue, for the statement at `span`.
    fn opaque_text(
        &mut self,
        range: std::ops::Range<usize>,
        span: Span,
        reason: String,
        declares: Vec<String>,
    ) -> Opaque {
        let text = &self.pp.text;
        // Directives inside it are kept with it.
        for (o, _) in crate::source::other_pragmas(text, range.clone()) {
            self.used_pragmas.insert(o);
        }
        let body = text[range].to_string();
        let (names, written) = self.names_in(&body);
        let mut writes = written;
        for d in &declares {
            if !writes.contains(d) {
                writes.push(d.clone());
            }
        }
        Opaque {
            returns: reason == RETURN,
            text: body,
            reason,
            names,
            writes,
            declares,
            pos: self.pos(span),
        }
    }

    /// Variables in scope that a statement's text names, and those it may write.
    fn names_in(&self, text: &str) -> (Vec<String>, Vec<String>) {
        let (mut names, mut writes): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        for piece in crate::source::code(text) {
            let crate::source::Code::Ident(r) = piece else {
                continue;
            };
            let name = &text[r.clone()];
            let before = text[..r.start].trim_end();
            // A member (`v->n`, `s.n`) or anything not in scope here (a type, a
            // function, a name this statement declares) is not a variable it uses.
            if before.ends_with('.') || before.ends_with("->") || self.resolve(name).is_none() {
                continue;
            }
            let through = matches!(
                self.resolve(name),
                Some(
                    Resolved::External(
                        Sym::Array { .. } | Sym::Pointer | Sym::Flat(..) | Sym::Rows(..)
                    ) | Resolved::Local(
                        Sym::Array { .. } | Sym::Pointer | Sym::Flat(..) | Sym::Rows(..)
                    )
                )
            );
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
            if (crate::source::stored_by_name(text, r) || through)
                && !writes.iter().any(|n| n == name)
            {
                writes.push(name.to_string());
            }
        }
        (names, writes)
    }

    /// The variables a declaration declares, put in scope as their types say.
    pub(super) fn declare_names(&mut self, d: &Declaration) -> Vec<String> {
        let mut out = Vec::new();
        for (_, name, sym) in self.declared(d) {
            let Some(name) = name else { continue };
            // A pointer to a scalar type may be read as an array (`crate::flat`);
            // anything else is known only as a pointer: what indexes it is glue as well.
            let sym = match sym {
                Sym::Scalar(t) => Sym::Scalar(t),
                Sym::Flat(t, r) => Sym::Flat(t, r),
                Sym::Rows(t, r) => Sym::Rows(t, r),
                Sym::Array { .. } => Sym::Other("declared by a statement kept as written".into()),
                _ => Sym::Pointer,
            };
            self.declare_local(&name, sym);
            out.push(name);
        }
        out
    }
}

//! Lowering of statements: declarations, blocks, `for` loops and their steps, `if`.

use super::opaque::opaque_reason;
use super::*;

/// The most elements of a local array whose initializer list becomes assignments.
const MAX_INITIALIZED: i64 = 64;

pub(super) struct Lowerer<'a> {
    /// Offsets of the pragma lines attached to a loop.
    pub(super) used_pragmas: std::collections::BTreeSet<usize>,
    pub(super) pp: &'a Preprocessed,
    pub(super) external: HashMap<String, Sym>,
    /// The file's type names (`size_t`, `real_t`), for the declarations in the region.
    pub(super) typedefs: HashMap<String, Base>,
    pub(super) scopes: Vec<HashMap<String, Sym>>,
    pub(super) loop_vars: Vec<(String, DType)>,
    pub(super) done_loop_vars: Vec<String>,
    pub(super) arrays: BTreeMap<String, Array>,
    pub(super) scalars: BTreeMap<String, Scalar>,
    pub(super) next_loop: usize,
    pub(super) next_stmt: usize,
    /// Pointers of the region indexed with one subscript (read as arrays, `crate::flat`).
    pub(super) flat_used: std::collections::BTreeSet<String>,
    /// Pointers that cannot be read as arrays in this region, with why: their
    /// accesses are glue.
    pub(super) flat_refused: BTreeMap<String, String>,
    /// Assignments whose access of a pointer does not fit the shape of its other
    /// accesses, by pointer and position, with why: that statement is glue.
    pub(super) flat_refused_at: BTreeMap<(String, Pos), String>,
    /// The assignment being lowered.
    pub(super) current_assign: Option<Pos>,
    /// Arrays of this region whose name another array of the program holds (another
    /// function's pointer of another kind or type, a local of another block): the name
    /// each goes by here.
    pub(super) named_apart: BTreeMap<String, String>,
    /// Functions of the user's assumed pure (`--assume-pure`).
    pub(super) pure: BTreeSet<String>,
    /// Functions this file defines.
    pub(super) defined: BTreeSet<String>,
}

/// Enumeration constant `name` of value `v`: the value, printed by its name in the
/// user's file.
pub(super) fn constant(name: &str, v: i64) -> Expr {
    Expr::Int {
        value: v,
        text: v.to_string(),
        name: MacroName(Some(name.to_string())),
    }
}

/// Why a `return` is glue (and how the glue knows it: `Opaque::returns`).
pub(super) const RETURN: &str = "return";

pub(super) enum Resolved {
    LoopVar,
    Local(Sym),
    External(Sym),
}

impl<'a> Lowerer<'a> {
    pub(super) fn pos(&self, span: Span) -> Pos {
        let l = self.pp.location(span.start);
        Pos {
            line: l.line,
            col: l.col,
        }
    }

    pub(super) fn unsupported<T>(&self, span: Span, what: impl Into<String>) -> Result<T> {
        Err(Error::Unsupported {
            at: self.pp.location(span.start),
            what: what.into(),
        })
    }

    pub(super) fn invalid<T>(&self, span: Span, message: impl Into<String>) -> Result<T> {
        Err(Error::Invalid {
            at: self.pp.location(span.start),
            message: message.into(),
        })
    }

    pub(super) fn text(&self, span: Span) -> &str {
        &self.pp.text[span.start..span.end]
    }

    pub(super) fn resolve(&self, name: &str) -> Option<Resolved> {
        if self.loop_vars.iter().any(|(v, _)| v == name) {
            return Some(Resolved::LoopVar);
        }
        for scope in self.scopes.iter().rev() {
            if let Some(s) = scope.get(name) {
                return Some(Resolved::Local(s.clone()));
            }
        }
        self.external.get(name).cloned().map(Resolved::External)
    }

    pub(super) fn block_item(&mut self, item: &CNode<BlockItem>) -> Result<Vec<Node>> {
        match &item.node {
            BlockItem::Declaration(d) => self.or_opaque(
                d.span,
                |l| l.declaration(&d.node, d.span),
                |l| l.declare_names(&d.node),
            ),
            BlockItem::StaticAssert(_) => Ok(Vec::new()),
            BlockItem::Statement(s) => self.statement(s),
        }
    }

    /// The declarators of `d` with the name and symbol each declares.
    pub(super) fn declared<'d>(
        &self,
        d: &'d Declaration,
    ) -> Vec<(&'d CNode<lang_c::ast::InitDeclarator>, Option<String>, Sym)> {
        let syms = Symbols {
            vars: HashMap::new(),
            typedefs: self.typedefs.clone(),
        };
        let base = base_type(&d.specifiers, &syms);
        d.declarators
            .iter()
            .map(|init| {
                let (name, sym) =
                    declarator_sym(&init.node.declarator.node, base.clone(), false, self.pp);
                (init, name, sym)
            })
            .collect()
    }

    /// Array extents with their enumeration constants as values (`double a[SIZE]` of
    /// `enum { SIZE = 100 }`), the name kept for the user's file.
    pub(super) fn with_constants(&self, mut dims: Vec<Expr>) -> Vec<Expr> {
        for d in &mut dims {
            crate::transform::rewrite::rewrite(d, &mut |e| match e {
                Expr::Var(n) => match self.resolve(n) {
                    Some(Resolved::External(Sym::Const(v)) | Resolved::Local(Sym::Const(v))) => {
                        Some(constant(n, v))
                    }
                    _ => None,
                },
                _ => None,
            });
        }
        dims
    }

    /// Puts a local in the current scope (a scalar in the program's scalars too).
    pub(super) fn declare_local(&mut self, name: &str, sym: Sym) {
        if let Sym::Scalar(dtype) = sym {
            self.scalars.entry(name.to_string()).or_insert(Scalar {
                name: name.to_string(),
                dtype,
                origin: ScalarOrigin::Local,
                written: false,
                read: false,
            });
        }
        self.scopes
            .last_mut()
            .expect("scope")
            .insert(name.to_string(), sym);
    }

    /// The elements of a local array of constant extents that an initializer list sets
    /// (row-major, every element: those the list leaves out are zero), where the list
    /// holds constants alone and the array at most [`MAX_INITIALIZED`] elements; a
    /// one-dimensional list, or `{0}` for any shape.
    fn array_initializer(
        &mut self,
        i: &CNode<Initializer>,
        dims: &[Expr],
    ) -> Option<Vec<(Vec<i64>, Expr)>> {
        let Initializer::List(items) = &i.node else {
            return None;
        };
        let extents: Vec<i64> = dims
            .iter()
            .map(|d| const_value(d).filter(|n| *n > 0))
            .collect::<Option<_>>()?;
        let count = extents
            .iter()
            .try_fold(1i64, |a, e| a.checked_mul(*e))
            .filter(|n| *n <= MAX_INITIALIZED)?;
        let mut values: Vec<Expr> = Vec::new();
        for item in items {
            if !item.node.designation.is_empty() {
                return None;
            }
            let Initializer::Expression(e) = &item.node.initializer.node else {
                return None;
            };
            let v = self.expr(e).ok()?;
            let constant = match &v {
                Expr::Int { .. } | Expr::Float { .. } => true,
                Expr::Unary { arg, .. } => matches!(**arg, Expr::Int { .. } | Expr::Float { .. }),
                _ => false,
            };
            if !constant {
                return None;
            }
            values.push(v);
        }
        let zero = |v: &Expr| match v {
            Expr::Int { value, .. } => *value == 0,
            Expr::Float { value, .. } => *value == 0.0,
            _ => false,
        };
        let one_dim = extents.len() == 1 && values.len() as i64 <= count;
        let all_zero = values.len() == 1 && zero(&values[0]);
        if !one_dim && !all_zero {
            return None;
        }
        let mut out = Vec::new();
        for flat in 0..count {
            let mut idx = vec![0i64; extents.len()];
            let mut rest = flat;
            for (k, e) in extents.iter().enumerate().rev() {
                idx[k] = rest % e;
                rest /= e;
            }
            let value = values
                .get(flat as usize)
                .filter(|_| one_dim)
                .cloned()
                .unwrap_or_else(|| {
                    values
                        .first()
                        .filter(|v| zero(v))
                        .cloned()
                        .unwrap_or(Expr::int(0))
                });
            out.push((idx, value));
        }
        Some(out)
    }

    pub(super) fn declaration(&mut self, d: &Declaration, span: Span) -> Result<Vec<Node>> {
        for s in &d.specifiers {
            if let DeclarationSpecifier::StorageClass(c) = &s.node {
                if c.node != StorageClassSpecifier::Auto
                    && c.node != StorageClassSpecifier::Register
                {
                    return self
                        .unsupported(s.span, "storage class in a declaration inside the region");
                }
            }
        }
        let mut out = Vec::new();
        for (init, name, sym) in self.declared(d) {
            let name = match name {
                Some(n) => n,
                None => return self.unsupported(init.span, "abstract declarator"),
            };
            let pos = self.pos(init.span);
            match sym {
                Sym::Scalar(dtype) => {
                    let init_expr = match &init.node.initializer {
                        None => None,
                        Some(i) => match &i.node {
                            Initializer::Expression(e) => Some(self.expr(e)?),
                            Initializer::List(_) => {
                                return self.unsupported(i.span, "initializer list")
                            }
                        },
                    };
                    self.declare_local(&name, Sym::Scalar(dtype));
                    out.push(Node::Decl(Decl {
                        name,
                        dtype,
                        dims: Vec::new(),
                        init: init_expr,
                        pos,
                    }));
                }
                Sym::Array { dtype, dims } => {
                    let dims = self.with_constants(dims);
                    // `float sum[BS] = {0.f};`: the elements' values, assigned after the
                    // declaration.
                    let values = match &init.node.initializer {
                        None => Vec::new(),
                        Some(i) => match self.array_initializer(i, &dims) {
                            Some(v) => v,
                            None => return self.unsupported(init.span, "initialized local array"),
                        },
                    };
                    for dim in &dims {
                        self.check_dim(dim, init.span)?;
                    }
                    let extents = dims.iter().map(const_value).collect();
                    // An array of that name elsewhere (another function's pointer, or a
                    // local of another block): this one is named apart.
                    let key = if self.arrays.contains_key(&name) {
                        let k = crate::flat::alias_name(&name, &|n| {
                            self.arrays.contains_key(n) || self.resolve(n).is_some()
                        });
                        self.named_apart.insert(name.clone(), k.clone());
                        k
                    } else {
                        self.named_apart.remove(&name);
                        name.clone()
                    };
                    self.arrays.insert(
                        key.clone(),
                        Array {
                            name: key.clone(),
                            dtype,
                            dims: dims.clone(),
                            extents,
                            local: true,
                            flat: false,
                            rows: false,
                            restrict: false,
                            source: (key != name).then(|| name.clone()),
                        },
                    );
                    self.scopes.last_mut().expect("scope").insert(
                        name.clone(),
                        Sym::Array {
                            dtype,
                            dims: dims.clone(),
                        },
                    );
                    let name = key;
                    out.push(Node::Decl(Decl {
                        name: name.clone(),
                        dtype,
                        dims,
                        init: None,
                        pos,
                    }));
                    for (indices, value) in values {
                        let id = self.next_stmt;
                        self.next_stmt += 1;
                        out.push(Node::Assign(Assign {
                            id,
                            target: Expr::Access {
                                array: name.clone(),
                                indices: indices.into_iter().map(Expr::int).collect(),
                            },
                            op: AssignOp::Set,
                            value,
                            pos,
                        }));
                    }
                }
                Sym::Pointer | Sym::Flat(..) | Sym::Rows(..) => {
                    return self.unsupported(init.span, format!("pointer declaration '{name}'"))
                }
                Sym::Function => {
                    return self.unsupported(init.span, format!("function declaration '{name}'"))
                }
                Sym::Const(_) => {
                    return self.unsupported(init.span, format!("enumeration constant '{name}'"))
                }
                Sym::Other(what) => {
                    return self.unsupported(span, format!("{what} in declaration of '{name}'"))
                }
            }
        }
        Ok(out)
    }

    /// Array extents inside the region may only use names visible outside it.
    pub(super) fn check_dim(&self, dim: &Expr, span: Span) -> Result<()> {
        let mut bad = None;
        dim.walk(&mut |e| {
            if let Expr::Var(v) = e {
                if !matches!(self.resolve(v), Some(Resolved::External(Sym::Scalar(_)))) {
                    bad = Some(v.clone());
                }
            }
        });
        match bad {
            Some(v) => self.unsupported(span, format!("local array extent depending on '{v}'")),
            None => Ok(()),
        }
    }

    /// A statement as IR, or as glue ([`Opaque`](crate::program::Opaque)) when the IR
    /// does not model it.
    pub(super) fn statement(&mut self, s: &CNode<Statement>) -> Result<Vec<Node>> {
        if !matches!(s.node, Statement::For(_) | Statement::Compound(_)) {
            if let Some(p) = self.pragma_above(s.span.start) {
                // A directive that no loop carries: the statement under it is glue.
                let o = self.opaque(
                    s.span,
                    format!("statement under '{}'", p.trim()),
                    Vec::new(),
                );
                return Ok(vec![Node::Opaque(o)]);
            }
        }
        self.or_opaque(s.span, |l| l.statement_ir(s), |_| Vec::new())
    }

    fn statement_ir(&mut self, s: &CNode<Statement>) -> Result<Vec<Node>> {
        match &s.node {
            Statement::Compound(items) => {
                let team = self.parallel_before(s.span)?;
                self.scopes.push(HashMap::new());
                let mut out = Vec::new();
                for item in items {
                    out.extend(self.block_item(item)?);
                }
                self.scopes.pop();
                if let Some(text) = team {
                    return self.parallel_block(text, out, s.span);
                }
                let has_decl = out.iter().any(|n| matches!(n, Node::Decl(_)));
                Ok(if has_decl {
                    vec![Node::Block(out)]
                } else {
                    out
                })
            }
            Statement::Expression(None) => Ok(Vec::new()),
            Statement::Expression(Some(e)) => {
                let mut out = Vec::new();
                self.assignment_chain(e, &mut out)?;
                Ok(out.into_iter().map(Node::Assign).collect())
            }
            Statement::For(f) => {
                let saved = self.save();
                match self.for_loop(&f.node, s.span) {
                    Ok(l) => Ok(vec![Node::Loop(l)]),
                    Err(e) => match opaque_reason(&e) {
                        // A header the IR does not model: the loop is glue, its body
                        // is still lowered.
                        Some(why) => {
                            self.restore(saved);
                            let what = format!("for loop ({why})");
                            self.container(s.span, &f.node.statement, &what, false)
                        }
                        None => Err(e),
                    },
                }
            }
            Statement::If(i) => {
                let cond = self.expr(&i.node.condition)?;
                let then_body = self.scoped(&i.node.then_statement)?;
                let else_body = match &i.node.else_statement {
                    Some(e) => self.scoped(e)?,
                    None => Vec::new(),
                };
                Ok(vec![Node::If(If {
                    cond,
                    then_body,
                    else_body,
                    pos: self.pos(s.span),
                })])
            }
            Statement::While(w) => self.container(s.span, &w.node.statement, "while loop", false),
            Statement::DoWhile(w) => {
                self.container(s.span, &w.node.statement, "do-while loop", true)
            }
            Statement::Switch(_) => self.unsupported(s.span, "switch statement"),
            Statement::Goto(_) => self.unsupported(s.span, "goto"),
            Statement::Labeled(_) => self.unsupported(s.span, "labeled statement"),
            Statement::Continue => self.unsupported(s.span, "continue"),
            Statement::Break => self.unsupported(s.span, "break"),
            Statement::Return(_) => self.unsupported(s.span, RETURN),
            Statement::Asm(_) => self.unsupported(s.span, "inline assembly"),
        }
    }

    /// A sub-statement with its own scope, as a list of nodes.
    pub(super) fn scoped(&mut self, s: &CNode<Statement>) -> Result<Vec<Node>> {
        self.scopes.push(HashMap::new());
        let out = self.statement(s);
        self.scopes.pop();
        let out = out?;
        Ok(match out.as_slice() {
            [Node::Block(_)] => match out.into_iter().next() {
                Some(Node::Block(inner)) => inner,
                _ => unreachable!(),
            },
            _ => out,
        })
    }

    pub(super) fn for_loop(&mut self, f: &lang_c::ast::ForStatement, span: Span) -> Result<Loop> {
        let directives = self.directives_before(span.start);
        let pos = self.pos(span);
        let id = self.next_loop;
        self.next_loop += 1;
        let (var, var_dtype, declares_var, init) = match &f.initializer.node {
            ForInitializer::Declaration(d) => {
                let syms = Symbols {
                    vars: HashMap::new(),
                    typedefs: self.typedefs.clone(),
                };
                let base = base_type(&d.node.specifiers, &syms);
                let [init] = d.node.declarators.as_slice() else {
                    return self.unsupported(d.span, "for loop declaring several variables");
                };
                let (name, sym) = declarator_sym(&init.node.declarator.node, base, false, self.pp);
                let (Some(name), Sym::Scalar(t)) = (name, sym) else {
                    return self
                        .unsupported(d.span, "for loop variable that is not an integer scalar");
                };
                if t.is_float() {
                    return self
                        .unsupported(d.span, format!("floating-point loop variable '{name}'"));
                }
                let Some(Initializer::Expression(e)) =
                    init.node.initializer.as_ref().map(|i| &i.node)
                else {
                    return self.unsupported(d.span, "for loop variable without an initial value");
                };
                let e = self.expr(e)?;
                (name, t, true, e)
            }
            ForInitializer::Expression(e) => match &e.node {
                Expression::BinaryOperator(b) if b.node.operator.node == BinaryOperator::Assign => {
                    let Expression::Identifier(id) = &b.node.lhs.node else {
                        return self
                            .unsupported(e.span, "for loop initializer that is not `var = start`");
                    };
                    let name = id.node.name.clone();
                    let t = match self.resolve(&name) {
                        Some(Resolved::External(Sym::Scalar(t)))
                        | Some(Resolved::Local(Sym::Scalar(t))) => t,
                        Some(Resolved::LoopVar) => {
                            return self.unsupported(
                                e.span,
                                format!("nested loops sharing the variable '{name}'"),
                            )
                        }
                        None => {
                            return self.invalid(e.span, format!("unknown identifier '{name}'"))
                        }
                        _ => {
                            return self.unsupported(
                                e.span,
                                format!("loop variable '{name}' that is not a scalar"),
                            )
                        }
                    };
                    if t.is_float() {
                        return self
                            .unsupported(e.span, format!("floating-point loop variable '{name}'"));
                    }
                    let init = self.expr(&b.node.rhs)?;
                    (name, t, false, init)
                }
                _ => {
                    return self
                        .unsupported(e.span, "for loop initializer that is not `var = start`")
                }
            },
            _ => return self.unsupported(span, "for loop without an initializer"),
        };
        let Some(cond) = &f.condition else {
            return self.unsupported(span, "for loop without a condition");
        };
        let (cmp, bound) = match &cond.node {
            Expression::BinaryOperator(b) => {
                let op = &b.node.operator.node;
                let is_var = |e: &CNode<Expression>| matches!(&e.node, Expression::Identifier(id) if id.node.name == var);
                let cmp = |op: &BinaryOperator| match op {
                    BinaryOperator::Less => Some(LoopCmp::Lt),
                    BinaryOperator::LessOrEqual => Some(LoopCmp::Le),
                    BinaryOperator::Greater => Some(LoopCmp::Gt),
                    BinaryOperator::GreaterOrEqual => Some(LoopCmp::Ge),
                    _ => None,
                };
                match cmp(op) {
                    Some(c) if is_var(&b.node.lhs) => (c, self.expr(&b.node.rhs)?),
                    Some(c) if is_var(&b.node.rhs) => {
                        let flipped = match c {
                            LoopCmp::Lt => LoopCmp::Gt,
                            LoopCmp::Le => LoopCmp::Ge,
                            LoopCmp::Gt => LoopCmp::Lt,
                            LoopCmp::Ge => LoopCmp::Le,
                        };
                        (flipped, self.expr(&b.node.lhs)?)
                    }
                    _ => {
                        return self.unsupported(
                            cond.span,
                            format!("loop condition (expected `{var} < bound`, `<=`, `>` or `>=`)"),
                        )
                    }
                }
            }
            _ => {
                return self.unsupported(
                    cond.span,
                    format!("loop condition (expected `{var} < bound`, `<=`, `>` or `>=`)"),
                )
            }
        };
        if bound.mentions(&var) {
            return self.unsupported(
                cond.span,
                format!("loop bound that depends on '{var}' itself"),
            );
        }
        let Some(step_e) = &f.step else {
            return self.unsupported(span, "for loop without an increment");
        };
        let step = self.loop_step(step_e, &var)?;
        let upward = matches!(cmp, LoopCmp::Lt | LoopCmp::Le);
        if (step > 0) != upward {
            return self.unsupported(
                step_e.span,
                format!("loop whose step moves '{var}' away from its bound"),
            );
        }
        self.loop_vars.push((var.clone(), var_dtype));
        self.scopes.push(HashMap::new());
        let body = self.statement(&f.statement);
        self.scopes.pop();
        self.loop_vars.pop();
        let body = body?;
        let body = match body.as_slice() {
            [Node::Block(_)] => match body.into_iter().next() {
                Some(Node::Block(inner)) => inner,
                _ => unreachable!(),
            },
            _ => body,
        };
        self.done_loop_vars.push(var.clone());
        Ok(Loop {
            id,
            var,
            var_dtype,
            declares_var,
            init,
            cmp,
            bound,
            step,
            kind: LoopKind::Loop,
            body,
            pos,
            end: self.end_pos(span),
            directives,
            private_arrays: Vec::new(),
        })
    }

    /// The `#pragma omp parallel ...` line right above a block that starts its line;
    /// any other pragma there is refused.
    fn parallel_before(&mut self, span: Span) -> Result<Option<String>> {
        let start = self.pp.line_start(span.start);
        if !self.pp.text[start..span.start].trim().is_empty() {
            return Ok(None);
        }
        let directives = self.directives_before(span.start);
        match directives.as_slice() {
            [] => Ok(None),
            [Directive::Other { text }] if is_parallel_region(text) => Ok(Some(text.clone())),
            [d, ..] => self.unsupported(
                span,
                format!(
                    "'{d}' before a block (tune takes '#pragma omp parallel' blocks of '#pragma omp for' loops)"
                ),
            ),
        }
    }

    /// A user's parallel region. A block of worksharing loops: each loop then carries
    /// the region's directive (see [`Directive::InParallel`]). A block with other
    /// statements (declarations, a time loop around its worksharing loops, a pointer
    /// swap, a `master` print) is read as the team runs it: every thread runs the
    /// other statements alike, and each worksharing loop shares its iterations among
    /// them. Where those statements write only what the block declares (each thread's
    /// own copy, all copies equal) and nothing in them depends on the thread, one
    /// thread running them computes the same: the block is kept as a block, its
    /// worksharing loops carrying the region's directive, so each stands alone as a
    /// parallel region of its own in nest functions, cutouts and the dry run, and goes
    /// back into the user's block in the tuned file ([`Lowerer::replicated`] says why
    /// a block is not read so).
    fn parallel_block(&self, text: String, body: Vec<Node>, span: Span) -> Result<Vec<Node>> {
        if !body
            .iter()
            .all(|n| matches!(n, Node::Loop(l) if l.is_parallel_for()))
        {
            let mut declared = Vec::new();
            declared_names(&body, &mut declared);
            let mut body = body;
            return match replicated(&mut body, &declared, &text) {
                Ok(true) => Ok(vec![Node::Block(body)]),
                Ok(false) => self.unsupported(
                    span,
                    format!("'{text}' block without a '#pragma omp for' loop"),
                ),
                Err(why) => self.unsupported(span, format!("'{text}' block: {why}")),
            };
        }
        let mut out = Vec::with_capacity(body.len());
        for n in body {
            match n {
                Node::Loop(mut l) if l.is_parallel_for() => {
                    l.directives
                        .insert(0, Directive::InParallel { text: text.clone() });
                    out.push(Node::Loop(l));
                }
                _ => {
                    return self.unsupported(
                        span,
                        format!(
                            "statement in the '{text}' block that is not a '#pragma omp for' loop"
                        ),
                    )
                }
            }
        }
        Ok(out)
    }

    /// Where the statement spanning `span` ends in the user's file. Macros make
    /// preprocessed columns differ from the user's: a statement that ends its line ends
    /// where the user's line ends.
    fn end_pos(&self, span: Span) -> Pos {
        let last = span.end.saturating_sub(1).max(span.start);
        let l = self.pp.location(last);
        let rest = &self.pp.text[span.end.min(self.pp.text.len())..self.pp.line_end(last)];
        let col = match self.pp.source_line(last) {
            Some(line) if rest.trim().is_empty() => line.trim_end().chars().count() as u32,
            _ => l.col,
        };
        Pos { line: l.line, col }
    }

    /// The pragma lines right above the statement at `offset` (blank lines and line
    /// markers between them allowed), as directives in source order; each is marked
    /// as used.
    pub(super) fn directives_before(&mut self, offset: usize) -> Vec<Directive> {
        let text = &self.pp.text;
        let mut at = self.pp.line_start(offset);
        let mut found = Vec::new();
        while at > 0 {
            let prev = self.pp.line_start(at - 1);
            let line = &text[prev..at];
            let t = line.trim();
            if let Some(p) = crate::source::pragma_text(line) {
                let name = p.split_whitespace().nth(1);
                if name == Some("scop") || name == Some("endscop") {
                    break;
                }
                found.push((prev, p));
            } else if !(t.is_empty() || (t.starts_with("# ") && !t.starts_with("# pragma"))) {
                break;
            }
            at = prev;
        }
        found.reverse();
        found
            .into_iter()
            .map(|(o, p)| {
                self.used_pragmas.insert(o);
                Directive::parse(&p)
            })
            .collect()
    }

    pub(super) fn loop_step(&mut self, e: &CNode<Expression>, var: &str) -> Result<i64> {
        let is_var = |e: &CNode<Expression>| matches!(&e.node, Expression::Identifier(id) if id.node.name == var);
        let bad = || {
            format!("loop increment (expected `{var}++`, `{var}--`, `{var} += c` or `{var} -= c`)")
        };
        match &e.node {
            Expression::UnaryOperator(u) if is_var(&u.node.operand) => match u.node.operator.node {
                UnaryOperator::PostIncrement | UnaryOperator::PreIncrement => Ok(1),
                UnaryOperator::PostDecrement | UnaryOperator::PreDecrement => Ok(-1),
                _ => self.unsupported(e.span, bad()),
            },
            Expression::BinaryOperator(b) if is_var(&b.node.lhs) => {
                let c = |s: &Self, x: &CNode<Expression>| -> Result<i64> {
                    let v = s.expr_const(x);
                    match v {
                        Some(v) if v != 0 => Ok(v),
                        _ => s.unsupported(
                            x.span,
                            "loop step that is not a non-zero integer constant",
                        ),
                    }
                };
                match b.node.operator.node {
                    BinaryOperator::AssignPlus => c(self, &b.node.rhs),
                    BinaryOperator::AssignMinus => Ok(-c(self, &b.node.rhs)?),
                    BinaryOperator::Assign => match &b.node.rhs.node {
                        Expression::BinaryOperator(r) if is_var(&r.node.lhs) => {
                            match r.node.operator.node {
                                BinaryOperator::Plus => c(self, &r.node.rhs),
                                BinaryOperator::Minus => Ok(-c(self, &r.node.rhs)?),
                                _ => self.unsupported(e.span, bad()),
                            }
                        }
                        _ => self.unsupported(e.span, bad()),
                    },
                    _ => self.unsupported(e.span, bad()),
                }
            }
            _ => self.unsupported(e.span, bad()),
        }
    }

    pub(super) fn expr_const(&self, e: &CNode<Expression>) -> Option<i64> {
        dim_expr(e, self.pp).as_ref().and_then(const_value)
    }
}

/// The names that `body` declares (its declarations and glue's), at any depth.
fn declared_names(body: &[Node], out: &mut Vec<String>) {
    for n in body {
        match n {
            Node::Decl(d) => out.push(d.name.clone()),
            Node::Opaque(o) => out.extend(o.declares.iter().cloned()),
            Node::Block(b) => declared_names(b, out),
            Node::If(i) => {
                declared_names(&i.then_body, out);
                declared_names(&i.else_body, out);
            }
            Node::Loop(_) | Node::Assign(_) => {}
        }
    }
}

/// Whether one thread running the statements of the user's parallel block `body`
/// (outside its worksharing loops) computes what each thread of the team computes:
/// they write only names the block declares (`declared`), and call nothing that
/// answers differently per thread; a statement under `master` or `single` runs once
/// either way. Each worksharing loop found (`#pragma omp for`, not a parallel loop of
/// its own) gets the region's directive `text`; Ok(true) when there is one. Err says
/// which statement keeps the block as written.
fn replicated(
    body: &mut [Node],
    declared: &[String],
    text: &str,
) -> std::result::Result<bool, String> {
    let mut found = false;
    for n in body {
        match n {
            Node::Loop(l) if is_worksharing(l) => {
                l.directives.insert(
                    0,
                    Directive::InParallel {
                        text: text.to_string(),
                    },
                );
                found = true;
            }
            Node::Loop(l) => {
                return Err(format!(
                    "loop '{}' that every thread runs (line {})",
                    l.var, l.pos.line
                ))
            }
            Node::Decl(_) => {}
            Node::Assign(a) => match &a.target {
                Expr::Var(v) if declared.contains(v) => {}
                t => {
                    let name = match t {
                        Expr::Var(v) => v.as_str(),
                        Expr::Access { array, .. } => array.as_str(),
                        _ => "?",
                    };
                    return Err(format!(
                        "every thread assigns '{name}' (line {})",
                        a.pos.line
                    ));
                }
            },
            Node::Block(b) => found |= replicated(b, declared, text)?,
            Node::If(i) => {
                found |= replicated(&mut i.then_body, declared, text)?;
                found |= replicated(&mut i.else_body, declared, text)?;
            }
            Node::Opaque(o) => {
                let first = o.text.trim_start();
                let once = ["#pragma omp master", "#pragma omp single"]
                    .iter()
                    .any(|p| first.starts_with(p));
                if once {
                    continue;
                }
                if o.text.contains("#pragma") {
                    return Err(format!("directive in glue (line {})", o.pos.line));
                }
                for f in [
                    "omp_get_thread_num",
                    "omp_get_num_threads",
                    "omp_get_team_num",
                ] {
                    if crate::source::mentions_word(&o.text, f) {
                        return Err(format!("call to '{f}' (line {})", o.pos.line));
                    }
                }
                // A statement without calls stores what it assigns by name; otherwise
                // what it names may be written (through a pointer, by a callee).
                let writes =
                    crate::source::stores_by_name(&o.text).unwrap_or_else(|| o.writes.clone());
                if let Some(w) = writes.iter().find(|w| !declared.contains(w)) {
                    return Err(format!("every thread writes '{w}' (line {})", o.pos.line));
                }
            }
        }
    }
    Ok(found)
}

/// The user's `#pragma omp for` loop (a worksharing loop inside their parallel
/// region), not a combined parallel loop.
fn is_worksharing(l: &Loop) -> bool {
    l.directives.iter().any(|d| match d {
        Directive::Other { text } => {
            let w: Vec<&str> = text.split_whitespace().take(3).collect();
            w.get(1..3) == Some(&["omp", "for"][..])
        }
        _ => false,
    })
}

/// `#pragma omp parallel [clauses]`: a parallel region, not a combined construct.
fn is_parallel_region(text: &str) -> bool {
    let w: Vec<&str> = text.split_whitespace().collect();
    w.get(1..3) == Some(&["omp", "parallel"][..])
        && !matches!(
            w.get(3).map(|x| x.split('(').next().unwrap_or(x)),
            Some("for" | "sections" | "loop" | "master" | "masked" | "workshare")
        )
}

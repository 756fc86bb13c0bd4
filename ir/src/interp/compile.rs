//! Compiling a nest to the interpreter's slot-indexed form: loops, statements, accesses
//! and expressions resolved once, so the walk evaluates no names.

use super::*;

impl<'p> Compiler<'p, '_> {
    pub(super) fn slot(&mut self, name: &'p str) -> usize {
        if let Some(&s) = self.slots.get(name) {
            return s;
        }
        let s = self.init_slots.len();
        self.init_slots
            .push(self.env.ints.get(name).copied().unwrap_or(0));
        self.slots.insert(name, s);
        s
    }

    /// Compiles an integer expression over loop variables and parameters.
    pub(super) fn int_expr(&mut self, e: &'p Expr) -> Result<IExpr, NotStatic> {
        Ok(match e {
            Expr::Int { value, .. } => IExpr::Const(*value),
            Expr::Float { .. } => return Err(NotStatic::Float),
            Expr::Var(v) => {
                if self.loop_vars.contains(v.as_str()) {
                    IExpr::Slot(self.slot(v))
                } else if self.written.contains(v.as_str()) {
                    return Err(NotStatic::Dynamic(format!(
                        "'{v}' is assigned inside the nest"
                    )));
                } else if self.program.scalar(v).is_some_and(|s| s.dtype.is_float()) {
                    return Err(NotStatic::Float);
                } else if self.env.ints.contains_key(v.as_str()) {
                    IExpr::Slot(self.slot(v))
                } else {
                    return Err(NotStatic::Error(InterpError::UnknownVariable(v.clone())));
                }
            }
            Expr::Access { array, .. } => {
                return Err(NotStatic::Dynamic(format!("reads array '{array}'")))
            }
            Expr::Unary { op, arg } => {
                let a = self.int_expr(arg)?;
                match op {
                    UnOp::Neg => IExpr::Neg(Box::new(a)),
                    UnOp::Plus => a,
                    UnOp::Not => IExpr::Not(Box::new(a)),
                }
            }
            Expr::Binary { op, lhs, rhs } => {
                let a = self.int_expr(lhs)?;
                let b = self.int_expr(rhs)?;
                IExpr::Bin(*op, Box::new(a), Box::new(b))
            }
            Expr::Ternary { cond, then, other } => {
                let c = self.int_expr(cond)?;
                let t = self.int_expr(then)?;
                let o = self.int_expr(other)?;
                IExpr::Ternary(Box::new(c), Box::new(t), Box::new(o))
            }
            Expr::Call { func, .. } => return Err(NotStatic::Dynamic(format!("calls '{func}'"))),
            Expr::Cast { dtype, arg } => {
                if dtype.is_float() {
                    return Err(NotStatic::Float);
                }
                IExpr::Cast(*dtype, Box::new(self.int_expr(arg)?))
            }
        })
    }

    /// An integer expression that must be static (bounds, subscripts).
    pub(super) fn static_expr(&mut self, e: &'p Expr, context: &str) -> Result<IExpr, InterpError> {
        self.int_expr(e).map_err(|n| match n {
            NotStatic::Float => InterpError::NotInteger {
                context: context.to_string(),
                expr: crate::print::expr(e),
            },
            NotStatic::Dynamic(why) => InterpError::Unsupported(format!(
                "{context} '{}' depends on run-time data ({why})",
                crate::print::expr(e)
            )),
            NotStatic::Error(err) => err,
        })
    }

    pub(super) fn index(&mut self, e: &'p Expr, context: &str) -> Result<Index, InterpError> {
        let mut has_cast = false;
        e.walk(&mut |x| has_cast |= matches!(x, Expr::Cast { .. }));
        if !has_cast {
            let ok = |v: &str| {
                !self.written.contains(v)
                    && (self.loop_vars.contains(v) || self.env.ints.contains_key(v))
            };
            if let Some(aff) = crate::affine::affine_of(e, &ok) {
                let terms = aff
                    .coeffs
                    .iter()
                    .map(|(name, &c)| {
                        let name: &'p str = self.intern(e, name);
                        (self.slot(name), c)
                    })
                    .collect();
                return Ok(Index::Affine {
                    terms,
                    constant: aff.constant,
                });
            }
        }
        Ok(Index::General(self.static_expr(e, context)?))
    }

    /// The `&'p str` of a variable named in `e` (affine forms own their names).
    pub(super) fn intern(&self, e: &'p Expr, name: &str) -> &'p str {
        let mut found: Option<&'p str> = None;
        e.walk(&mut |x| {
            if let Expr::Var(v) = x {
                if v == name {
                    found = Some(v.as_str());
                }
            }
        });
        found.expect("affine variables come from the expression")
    }

    pub(super) fn array(&mut self, name: &'p str) -> Result<usize, InterpError> {
        if let Some(&id) = self.array_ids.get(name) {
            return Ok(id);
        }
        let arr = self
            .program
            .array(name)
            .ok_or_else(|| InterpError::UnknownArray(name.to_string()))?;
        let mut extents = Vec::with_capacity(arr.dims.len());
        for (d, ext) in arr.extents.iter().enumerate() {
            let v = match ext {
                Some(v) => *v,
                None => {
                    let Some(dim) = arr.dims.get(d) else {
                        return Err(InterpError::UnknownExtent {
                            array: name.to_string(),
                            dim: d,
                            why: "no dimension expression".into(),
                        });
                    };
                    self.eval_env(dim)
                        .map_err(|why| InterpError::UnknownExtent {
                            array: name.to_string(),
                            dim: d,
                            why,
                        })?
                }
            };
            extents.push(v);
        }
        let mut strides = vec![1i64; extents.len()];
        let mut elements: i64 = 1;
        for d in (0..extents.len()).rev() {
            strides[d] = elements;
            elements = elements
                .checked_mul(extents[d].max(0))
                .ok_or_else(|| InterpError::Overflow(format!("size of array '{name}'")))?;
        }
        let id = self.arrays.len();
        self.arrays.push(ArrayShape {
            info: ArrayInfo {
                name: name.to_string(),
                dtype: arr.dtype,
                extents,
                elements: elements as u64,
                elem_bytes: arr.dtype.size() as u32,
            },
            strides,
        });
        self.array_ids.insert(name, id);
        Ok(id)
    }

    /// Evaluates an extent expression over the environment only.
    pub(super) fn eval_env(&self, e: &Expr) -> Result<i64, String> {
        let mut slots = Vec::new();
        let ie = compile_env_expr(self.env, &mut slots, e)?;
        ie.eval(&slots).map_err(|f| match f {
            Fault::DivZero => "division by zero".to_string(),
            Fault::Overflow => "integer overflow".to_string(),
        })
    }

    pub(super) fn access(&mut self, e: &'p Expr, write: bool) -> Result<CAccess<'p>, InterpError> {
        let Expr::Access { array, indices } = e else {
            unreachable!("callers pass accesses")
        };
        let id = self.array(array)?;
        let rank = self.arrays[id].info.extents.len();
        if indices.len() != rank {
            return Err(InterpError::Unsupported(format!(
                "'{}' uses {} subscripts on an array of {} dimensions",
                crate::print::expr(e),
                indices.len(),
                rank
            )));
        }
        let context = format!("subscript of '{}'", crate::print::expr(e));
        let mut ix = Vec::with_capacity(rank);
        for i in indices {
            ix.push(self.index(i, &context)?);
        }
        Ok(CAccess {
            array: id,
            write,
            indices: ix,
            source: e,
        })
    }

    /// Compiles a statement; `target` is the assigned array element, if any.
    pub(super) fn stmt(
        &mut self,
        assign: Assign,
        target: Option<&'p Expr>,
        value: &'p Expr,
    ) -> Result<usize, InterpError> {
        let mut reads: Vec<&'p Expr> = Vec::new();
        let push = |e: &'p Expr, reads: &mut Vec<&'p Expr>| {
            if !reads.contains(&e) {
                reads.push(e);
            }
        };
        if let (true, Some(t)) = (assign.op != AssignOp::Set, target) {
            push(t, &mut reads);
        }
        let mut found: Vec<&'p Expr> = Vec::new();
        value.walk(&mut |x| {
            if matches!(x, Expr::Access { .. }) {
                found.push(x);
            }
        });
        // Accesses nested in subscripts (indirection) are caught by `index`.
        for e in found {
            push(e, &mut reads);
        }
        let mut accesses = Vec::with_capacity(reads.len() + 1);
        for r in &reads {
            accesses.push(self.access(r, false)?);
        }
        let mut writes = 0;
        if let Some(t) = target {
            accesses.push(self.access(t, true)?);
            writes = 1;
        }
        let i = self.stmts.len();
        self.stmts.push(CStmt {
            info: StmtInfo {
                assign,
                reads: reads.len() as u32,
                writes,
            },
            accesses,
        });
        Ok(i)
    }

    pub(super) fn body(&mut self, body: &'p [Node]) -> Result<Vec<CNode<'p>>, InterpError> {
        let mut out = Vec::with_capacity(body.len());
        for n in body {
            self.push_node(n, &mut out)?;
        }
        Ok(out)
    }

    pub(super) fn push_node(
        &mut self,
        n: &'p Node,
        out: &mut Vec<CNode<'p>>,
    ) -> Result<(), InterpError> {
        match n {
            Node::Loop(l) => out.push(self.loop_node(l)?),
            Node::Block(b) => {
                for x in b {
                    self.push_node(x, out)?;
                }
            }
            Node::Opaque(o) => {
                return Err(InterpError::Unsupported(format!(
                    "{} at line {}",
                    o.reason, o.pos.line
                )))
            }
            Node::If(i) => {
                let cond = match self.int_expr(&i.cond) {
                    Ok(c) => Some(c),
                    Err(NotStatic::Float | NotStatic::Dynamic(_)) => None,
                    Err(NotStatic::Error(e)) => return Err(e),
                };
                let then_body = self.body(&i.then_body)?;
                let else_body = self.body(&i.else_body)?;
                out.push(CNode::If {
                    cond,
                    source: &i.cond,
                    then_body,
                    else_body,
                });
            }
            Node::Assign(a) => {
                let target = matches!(a.target, Expr::Access { .. }).then_some(&a.target);
                let s = self.stmt(a.clone(), target, &a.value)?;
                out.push(CNode::Stmt(s));
            }
            Node::Decl(d) => {
                if let (true, Some(init)) = (d.dims.is_empty(), &d.init) {
                    let id = self
                        .decl_ids
                        .iter()
                        .find(|(p, _)| std::ptr::eq(*p, d))
                        .map(|(_, id)| *id)
                        .unwrap_or(usize::MAX);
                    let assign = Assign {
                        id,
                        target: Expr::Var(d.name.clone()),
                        op: AssignOp::Set,
                        value: init.clone(),
                        pos: d.pos,
                    };
                    let s = self.stmt(assign, None, init)?;
                    out.push(CNode::Stmt(s));
                }
            }
        }
        Ok(())
    }

    pub(super) fn loop_node(
        &mut self,
        l: &'p crate::program::Loop,
    ) -> Result<CNode<'p>, InterpError> {
        let slot = self.slot(&l.var);
        let header = crate::print::loop_header(l, false);
        if l.step == 0 {
            return Err(InterpError::Unsupported(format!(
                "loop `{header}` with step 0"
            )));
        }
        let init = self.static_expr(&l.init, &format!("start of loop `{header}`"))?;
        let bound = self.static_expr(&l.bound, &format!("bound of loop `{header}`"))?;
        let body = self.body(&l.body)?;
        let invariant = !body_mentions(&body, slot);
        Ok(CNode::Loop(CLoop {
            slot,
            init,
            bound,
            cmp: l.cmp,
            step: l.step,
            body,
            invariant,
            source: l,
        }))
    }
}

pub(super) fn compile_env_expr(env: &Env, slots: &mut Vec<i64>, e: &Expr) -> Result<IExpr, String> {
    let mut sub = |x: &Expr| compile_env_expr(env, slots, x).map(Box::new);
    Ok(match e {
        Expr::Int { value, .. } => IExpr::Const(*value),
        Expr::Var(v) => {
            let value = *env
                .ints
                .get(v.as_str())
                .ok_or_else(|| format!("'{v}' is not in the environment"))?;
            slots.push(value);
            IExpr::Slot(slots.len() - 1)
        }
        Expr::Unary { op: UnOp::Neg, arg } => IExpr::Neg(sub(arg)?),
        Expr::Unary {
            op: UnOp::Plus,
            arg,
        } => *sub(arg)?,
        Expr::Unary { op: UnOp::Not, arg } => IExpr::Not(sub(arg)?),
        Expr::Binary { op, lhs, rhs } => {
            let a = sub(lhs)?;
            IExpr::Bin(*op, a, sub(rhs)?)
        }
        Expr::Ternary { cond, then, other } => {
            let c = sub(cond)?;
            let t = sub(then)?;
            IExpr::Ternary(c, t, sub(other)?)
        }
        Expr::Cast { dtype, arg } if !dtype.is_float() => IExpr::Cast(*dtype, sub(arg)?),
        other => {
            return Err(format!(
                "'{}' is not an integer expression",
                crate::print::expr(other)
            ))
        }
    })
}

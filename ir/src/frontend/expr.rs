//! Lowering of expressions: assignments, lvalues, array accesses, arithmetic, calls of math functions.

use super::*;

impl Lowerer<'_> {
    /// `a = b = e` becomes `b = e; a = b;` (plain assignments only).
    pub(super) fn assignment_chain(
        &mut self,
        e: &CNode<Expression>,
        out: &mut Vec<Assign>,
    ) -> Result<()> {
        if let Expression::BinaryOperator(b) = &e.node {
            if b.node.operator.node == BinaryOperator::Assign {
                if let Expression::BinaryOperator(inner) = &b.node.rhs.node {
                    if inner.node.operator.node == BinaryOperator::Assign {
                        self.assignment_chain(&b.node.rhs, out)?;
                        let last = out.last().expect("inner assignment").target.clone();
                        let target = self.lvalue(&b.node.lhs)?;
                        let id = self.next_stmt;
                        self.next_stmt += 1;
                        out.push(Assign {
                            id,
                            target,
                            op: AssignOp::Set,
                            value: last,
                            pos: self.pos(e.span),
                        });
                        return Ok(());
                    }
                }
            }
        }
        let a = self.assignment(e)?;
        out.push(a);
        Ok(())
    }

    pub(super) fn assignment(&mut self, e: &CNode<Expression>) -> Result<Assign> {
        let pos = self.pos(e.span);
        let outer = self.current_assign.replace(pos);
        let a = self.assignment_at(e, pos);
        self.current_assign = outer;
        a
    }

    fn assignment_at(&mut self, e: &CNode<Expression>, pos: Pos) -> Result<Assign> {
        let (target_e, op, value) = match &e.node {
            Expression::BinaryOperator(b) => {
                let op = match b.node.operator.node {
                    BinaryOperator::Assign => AssignOp::Set,
                    BinaryOperator::AssignPlus => AssignOp::Add,
                    BinaryOperator::AssignMinus => AssignOp::Sub,
                    BinaryOperator::AssignMultiply => AssignOp::Mul,
                    BinaryOperator::AssignDivide => AssignOp::Div,
                    BinaryOperator::AssignModulo => {
                        return self.unsupported(e.span, "compound assignment `%=`")
                    }
                    BinaryOperator::AssignShiftLeft
                    | BinaryOperator::AssignShiftRight
                    | BinaryOperator::AssignBitwiseAnd
                    | BinaryOperator::AssignBitwiseOr
                    | BinaryOperator::AssignBitwiseXor => {
                        return self.unsupported(e.span, "bitwise compound assignment")
                    }
                    _ => {
                        return self
                            .unsupported(e.span, "expression statement that is not an assignment")
                    }
                };
                (&*b.node.lhs, op, self.expr(&b.node.rhs)?)
            }
            Expression::UnaryOperator(u) => {
                let op = match u.node.operator.node {
                    UnaryOperator::PostIncrement | UnaryOperator::PreIncrement => AssignOp::Add,
                    UnaryOperator::PostDecrement | UnaryOperator::PreDecrement => AssignOp::Sub,
                    _ => {
                        return self
                            .unsupported(e.span, "expression statement that is not an assignment")
                    }
                };
                (&*u.node.operand, op, Expr::int(1))
            }
            Expression::Call(c) => {
                let name = match &c.node.callee.node {
                    Expression::Identifier(id) => id.node.name.clone(),
                    _ => "function pointer".to_string(),
                };
                return self.unsupported(e.span, format!("call to '{name}' as a statement"));
            }
            _ => return self.unsupported(e.span, "expression statement that is not an assignment"),
        };
        let target = self.lvalue(target_e)?;
        let id = self.next_stmt;
        self.next_stmt += 1;
        Ok(Assign {
            id,
            target,
            op,
            value,
            pos,
        })
    }

    pub(super) fn lvalue(&mut self, target_e: &CNode<Expression>) -> Result<Expr> {
        Ok(match &target_e.node {
            Expression::Identifier(id) => {
                let name = &id.node.name;
                match self.resolve(name) {
                    Some(Resolved::LoopVar) => {
                        return self.unsupported(
                            target_e.span,
                            format!("assignment to loop variable '{name}' inside its loop"),
                        )
                    }
                    Some(Resolved::Local(Sym::Scalar(_))) => Expr::Var(name.clone()),
                    Some(Resolved::External(Sym::Scalar(t))) => {
                        self.note_external_scalar(name, t);
                        Expr::Var(name.clone())
                    }
                    Some(
                        Resolved::External(Sym::Array { .. }) | Resolved::Local(Sym::Array { .. }),
                    ) => {
                        return self.unsupported(
                            target_e.span,
                            format!("assignment to whole array '{name}'"),
                        )
                    }
                    Some(_) => {
                        return self.unsupported(target_e.span, format!("assignment to '{name}'"))
                    }
                    None => {
                        return self.invalid(target_e.span, format!("unknown identifier '{name}'"))
                    }
                }
            }
            Expression::BinaryOperator(b) if b.node.operator.node == BinaryOperator::Index => {
                self.access(target_e)?
            }
            Expression::UnaryOperator(u) if u.node.operator.node == UnaryOperator::Indirection => {
                return self.unsupported(target_e.span, "pointer dereference")
            }
            _ => {
                return self.unsupported(
                    target_e.span,
                    "assignment target (expected a scalar or an array element)",
                )
            }
        })
    }

    pub(super) fn note_external_scalar(&mut self, name: &str, dtype: DType) {
        self.scalars.entry(name.to_string()).or_insert(Scalar {
            name: name.to_string(),
            dtype,
            origin: ScalarOrigin::External,
            written: false,
            read: false,
        });
    }

    pub(super) fn access(&mut self, e: &CNode<Expression>) -> Result<Expr> {
        let mut indices = Vec::new();
        let mut cur = e;
        loop {
            match &cur.node {
                Expression::BinaryOperator(b) if b.node.operator.node == BinaryOperator::Index => {
                    indices.push(&*b.node.rhs);
                    cur = &b.node.lhs;
                }
                _ => break,
            }
        }
        indices.reverse();
        let Expression::Identifier(id) = &cur.node else {
            return self.unsupported(
                cur.span,
                "subscript of an expression that is not an array name",
            );
        };
        let name = id.node.name.clone();
        let (dtype, dims, local) = match self.resolve(&name) {
            Some(
                Resolved::External(sym @ (Sym::Flat(t, restrict) | Sym::Rows(t, restrict)))
                | Resolved::Local(sym @ (Sym::Flat(t, restrict) | Sym::Rows(t, restrict))),
            ) if indices.len() == if matches!(sym, Sym::Rows(..)) { 2 } else { 1 } => {
                let rows = matches!(sym, Sym::Rows(..));
                // Another function's pointer of the same name, of another kind or
                // type: this one is another array, named apart.
                let key = match self.named_apart.get(&name) {
                    Some(k) => k.clone(),
                    None => match self.arrays.get(&name) {
                        Some(a) if a.rows != rows || a.flat == rows || a.dtype != t => {
                            let k = crate::flat::alias_name(&name, &|n| {
                                self.arrays.contains_key(n) || self.resolve(n).is_some()
                            });
                            self.named_apart.insert(name.clone(), k.clone());
                            k
                        }
                        _ => name.clone(),
                    },
                };
                if let Some(why) = self.flat_refused.get(&key).or_else(|| {
                    self.current_assign
                        .and_then(|p| self.flat_refused_at.get(&(key.clone(), p)))
                }) {
                    return self.unsupported(
                        cur.span,
                        format!("subscript of pointer '{name}' ({why})"),
                    );
                }
                self.flat_used.insert(key.clone());
                self.arrays.entry(key.clone()).or_insert(Array {
                    name: key.clone(),
                    dtype: t,
                    dims: Vec::new(),
                    extents: Vec::new(),
                    local: false,
                    flat: !rows,
                    rows,
                    restrict,
                    source: (key != name).then(|| name.clone()),
                });
                let indices = indices
                    .into_iter()
                    .map(|i| self.expr(i))
                    .collect::<Result<Vec<_>>>()?;
                return Ok(Expr::Access {
                    array: key,
                    indices,
                });
            }
            Some(Resolved::External(Sym::Array { dtype, dims })) => {
                (dtype, self.with_constants(dims), false)
            }
            Some(Resolved::Local(Sym::Array { dtype, dims })) => {
                (dtype, self.with_constants(dims), true)
            }
            Some(
                Resolved::External(Sym::Pointer | Sym::Flat(..) | Sym::Rows(..))
                | Resolved::Local(Sym::Pointer | Sym::Flat(..) | Sym::Rows(..)),
            ) => {
                return self.unsupported(cur.span, format!("subscript of pointer '{name}' (declare it as an array with its extents, e.g. double {name}[N])"))
            }
            Some(Resolved::External(Sym::Other(what))) => {
                return self.unsupported(cur.span, format!("{what} of array '{name}'"))
            }
            Some(Resolved::Local(Sym::Other(what))) => {
                return self.unsupported(cur.span, format!("access to array '{name}', {what}"))
            }
            None => return self.invalid(cur.span, format!("unknown identifier '{name}'")),
            Some(_) => return self.invalid(cur.span, format!("'{name}' is not an array")),
        };
        if indices.len() != dims.len() {
            return self.unsupported(
                e.span,
                format!(
                    "access to '{name}' with {} of its {} subscripts",
                    indices.len(),
                    dims.len()
                ),
            );
        }
        if !local && !self.arrays.contains_key(&name) {
            let extents = dims.iter().map(const_value).collect();
            self.arrays.insert(
                name.clone(),
                Array {
                    name: name.clone(),
                    dtype,
                    dims: dims.clone(),
                    extents,
                    local: false,
                    flat: false,
                    rows: false,
                    restrict: false,
                    source: None,
                },
            );
            for d in &dims {
                d.walk(&mut |x| {
                    if let Expr::Var(v) = x {
                        if let Some(Sym::Scalar(t)) = self.external.get(v) {
                            let t = *t;
                            self.scalars.entry(v.clone()).or_insert(Scalar {
                                name: v.clone(),
                                dtype: t,
                                origin: ScalarOrigin::External,
                                written: false,
                                read: false,
                            });
                        }
                    }
                });
            }
        }
        let indices = indices
            .into_iter()
            .map(|i| self.expr(i))
            .collect::<Result<Vec<_>>>()?;
        // A local named apart (see `Lowerer::declaration`).
        let array = match self.named_apart.get(&name) {
            Some(k) if local => k.clone(),
            _ => name,
        };
        Ok(Expr::Access { array, indices })
    }

    pub(super) fn expr(&mut self, e: &CNode<Expression>) -> Result<Expr> {
        match &e.node {
            Expression::Identifier(id) => {
                let name = &id.node.name;
                match self.resolve(name) {
                    Some(Resolved::LoopVar) => Ok(Expr::Var(name.clone())),
                    Some(Resolved::Local(Sym::Scalar(_))) => Ok(Expr::Var(name.clone())),
                    // An enumeration constant is its value; the user's file keeps its name.
                    Some(Resolved::External(Sym::Const(v)) | Resolved::Local(Sym::Const(v))) => {
                        Ok(constant(name, v))
                    }
                    Some(Resolved::External(Sym::Scalar(t))) => {
                        if self.done_loop_vars.iter().any(|v| v == name) {
                            return self.unsupported(
                                e.span,
                                format!("use of loop variable '{name}' after its loop"),
                            );
                        }
                        self.note_external_scalar(name, t);
                        Ok(Expr::Var(name.clone()))
                    }
                    Some(
                        Resolved::External(Sym::Array { .. })
                        | Resolved::Local(Sym::Array { .. })
                        | Resolved::External(Sym::Pointer | Sym::Flat(..) | Sym::Rows(..))
                        | Resolved::Local(Sym::Pointer | Sym::Flat(..) | Sym::Rows(..)),
                    ) => self.unsupported(
                        e.span,
                        format!("pointer arithmetic or array '{name}' used as a value"),
                    ),
                    Some(Resolved::External(Sym::Function) | Resolved::Local(Sym::Function)) => {
                        self.unsupported(e.span, format!("function '{name}' used as a value"))
                    }
                    Some(
                        Resolved::External(Sym::Other(what)) | Resolved::Local(Sym::Other(what)),
                    ) => self.unsupported(e.span, format!("{what} of '{name}'")),
                    None => self.invalid(e.span, format!("unknown identifier '{name}'")),
                }
            }
            Expression::Constant(c) => {
                let text = self.text(c.span).to_string();
                match &c.node {
                    Constant::Integer(_) => match parse_int(&text) {
                        Some(value) => Ok(Expr::Int {
                            value,
                            text,
                            name: MacroName(self.pp.macro_at(c.span.start)),
                        }),
                        None => self.unsupported(c.span, format!("integer literal {text}")),
                    },
                    Constant::Float(_) => {
                        let value = text
                            .trim_end_matches(['f', 'F', 'l', 'L'])
                            .parse()
                            .unwrap_or(0.0);
                        Ok(Expr::Float { value, text })
                    }
                    Constant::Character(_) => match parse_char(&text) {
                        Some(value) => Ok(Expr::Int {
                            value,
                            text,
                            name: MacroName::default(),
                        }),
                        None => self.unsupported(c.span, format!("character literal {text}")),
                    },
                }
            }
            Expression::BinaryOperator(b) => {
                let op = match b.node.operator.node {
                    BinaryOperator::Index => return self.access(e),
                    BinaryOperator::Plus => BinOp::Add,
                    BinaryOperator::Minus => BinOp::Sub,
                    BinaryOperator::Multiply => BinOp::Mul,
                    BinaryOperator::Divide => BinOp::Div,
                    BinaryOperator::Modulo => BinOp::Mod,
                    BinaryOperator::Less => BinOp::Lt,
                    BinaryOperator::LessOrEqual => BinOp::Le,
                    BinaryOperator::Greater => BinOp::Gt,
                    BinaryOperator::GreaterOrEqual => BinOp::Ge,
                    BinaryOperator::Equals => BinOp::Eq,
                    BinaryOperator::NotEquals => BinOp::Ne,
                    BinaryOperator::LogicalAnd => BinOp::And,
                    BinaryOperator::LogicalOr => BinOp::Or,
                    BinaryOperator::ShiftLeft | BinaryOperator::ShiftRight => {
                        return self.unsupported(b.node.operator.span, "shift operator")
                    }
                    BinaryOperator::BitwiseAnd
                    | BinaryOperator::BitwiseOr
                    | BinaryOperator::BitwiseXor => {
                        return self.unsupported(b.node.operator.span, "bitwise operator")
                    }
                    _ => return self.unsupported(e.span, "assignment inside an expression"),
                };
                Ok(Expr::Binary {
                    op,
                    lhs: Box::new(self.expr(&b.node.lhs)?),
                    rhs: Box::new(self.expr(&b.node.rhs)?),
                })
            }
            Expression::UnaryOperator(u) => {
                let op = match u.node.operator.node {
                    UnaryOperator::Minus => UnOp::Neg,
                    UnaryOperator::Plus => UnOp::Plus,
                    UnaryOperator::Negate => UnOp::Not,
                    UnaryOperator::Address => {
                        return self.unsupported(e.span, "address-of operator `&`")
                    }
                    UnaryOperator::Indirection => {
                        return self.unsupported(e.span, "pointer dereference")
                    }
                    UnaryOperator::Complement => {
                        return self.unsupported(e.span, "bitwise operator `~`")
                    }
                    _ => {
                        return self
                            .unsupported(e.span, "increment or decrement inside an expression")
                    }
                };
                Ok(Expr::Unary {
                    op,
                    arg: Box::new(self.expr(&u.node.operand)?),
                })
            }
            Expression::Cast(c) => {
                let tn = &c.node.type_name.node;
                if tn.declarator.is_some() {
                    return self.unsupported(c.span, "cast to a pointer or array type");
                }
                let ts: Vec<&TypeSpecifier> = tn
                    .specifiers
                    .iter()
                    .filter_map(|s| match &s.node {
                        SpecifierQualifier::TypeSpecifier(t) => Some(&t.node),
                        _ => None,
                    })
                    .collect();
                let syms = Symbols::default();
                match base_of_specifiers(&ts, &syms) {
                    Base::D(dtype) => Ok(Expr::Cast {
                        dtype,
                        arg: Box::new(self.expr(&c.node.expression)?),
                    }),
                    Base::Other(what) => self.unsupported(c.span, format!("cast to {what}")),
                }
            }
            Expression::Conditional(c) => Ok(Expr::Ternary {
                cond: Box::new(self.expr(&c.node.condition)?),
                then: Box::new(self.expr(&c.node.then_expression)?),
                other: Box::new(self.expr(&c.node.else_expression)?),
            }),
            Expression::Call(c) => {
                let Expression::Identifier(id) = &c.node.callee.node else {
                    return self.unsupported(e.span, "call through a function pointer");
                };
                let name = id.node.name.clone();
                if crate::counts::library_call_type(&name).is_none() && !self.pure.contains(&name) {
                    let what = if self.defined.contains(&name) {
                        format!("call to '{name}' (a nest may call the C library's math functions, or a function of yours that --assume-pure {name} says is pure)")
                    } else {
                        format!("call to '{name}'")
                    };
                    return self.unsupported(e.span, what);
                }
                let args = c
                    .node
                    .arguments
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Expr::Call { func: name, args })
            }
            Expression::Comma(_) => self.unsupported(e.span, "comma operator"),
            Expression::Member(_) => self.unsupported(e.span, "struct member access"),
            Expression::StringLiteral(_) => self.unsupported(e.span, "string literal"),
            Expression::SizeOfTy(_) | Expression::SizeOfVal(_) => {
                self.unsupported(e.span, "sizeof")
            }
            Expression::CompoundLiteral(_) => self.unsupported(e.span, "compound literal"),
            Expression::Statement(_) => self.unsupported(e.span, "statement expression"),
            _ => self.unsupported(e.span, "expression"),
        }
    }
}

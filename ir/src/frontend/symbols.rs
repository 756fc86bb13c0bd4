//! Names outside and inside a region: what each declares (scalar, array with its extents, typedef), from C declarators.

use super::*;

/// What a name declared outside (or inside) the region is.
#[derive(Debug, Clone)]
pub(super) enum Sym {
    Scalar(DType),
    Array {
        dtype: DType,
        dims: Vec<Expr>,
    },
    /// Pointer or array of unknown extent.
    Pointer,
    /// A pointer to (or an array of unknown extent of) a scalar type: indexed with one
    /// subscript, it may be read as an array (see `crate::flat`); whether it is
    /// `restrict`-qualified.
    Flat(DType, bool),
    /// A pointer to pointers to a scalar type (`float **w`): indexed with two
    /// subscripts, it may be read as an array of rows (see `crate::flat`); whether it is
    /// `restrict`-qualified.
    Rows(DType, bool),
    Function,
    /// An enumeration constant, with its value.
    Const(i64),
    Other(String),
}

#[derive(Debug, Clone)]
pub(super) enum Base {
    D(DType),
    Other(String),
}

#[derive(Debug, Clone, Default)]
pub(super) struct Symbols {
    pub(super) vars: HashMap<String, Sym>,
    pub(super) typedefs: HashMap<String, Base>,
}

impl Symbols {
    pub(super) fn declare(&mut self, d: &Declaration, pp: &Preprocessed) {
        let is_typedef = d.specifiers.iter().any(|s| {
            matches!(&s.node, DeclarationSpecifier::StorageClass(c)
                if c.node == StorageClassSpecifier::Typedef)
        });
        // `enum { N = 100, M = 2 * N, K };`: the constants, with their values.
        for s in &d.specifiers {
            if let DeclarationSpecifier::TypeSpecifier(t) = &s.node {
                if let TypeSpecifier::Enum(e) = &t.node {
                    let mut next = 0i64;
                    for en in &e.node.enumerators {
                        let value = match &en.node.expression {
                            Some(x) => const_int(x, self, pp),
                            None => Some(next),
                        };
                        let Some(v) = value else { break };
                        self.vars
                            .insert(en.node.identifier.node.name.clone(), Sym::Const(v));
                        next = v.wrapping_add(1);
                    }
                }
            }
        }
        let base = base_type(&d.specifiers, self);
        for init in &d.declarators {
            let (name, sym) = declarator_sym(&init.node.declarator.node, base.clone(), false, pp);
            let Some(name) = name else { continue };
            if is_typedef {
                let b = match sym {
                    Sym::Scalar(t) => Base::D(t),
                    _ => Base::Other(format!("typedef '{name}'")),
                };
                self.typedefs.insert(name, b);
            } else {
                self.vars.insert(name, sym);
            }
        }
    }
}

/// The value of an integer constant expression of literals and enumeration constants;
/// `None` for anything else.
fn const_int(e: &CNode<Expression>, syms: &Symbols, pp: &Preprocessed) -> Option<i64> {
    use lang_c::ast::{BinaryOperator as B, Constant, UnaryOperator as U};
    match &e.node {
        Expression::Constant(c) => {
            let text = &pp.text[c.span.start..c.span.end.min(pp.text.len())];
            match &c.node {
                Constant::Integer(_) => parse_int(text),
                Constant::Character(_) => parse_char(text),
                Constant::Float(_) => None,
            }
        }
        Expression::Identifier(id) => match syms.vars.get(&id.node.name) {
            Some(Sym::Const(v)) => Some(*v),
            _ => None,
        },
        Expression::UnaryOperator(u) => {
            let v = const_int(&u.node.operand, syms, pp)?;
            match u.node.operator.node {
                U::Minus => v.checked_neg(),
                U::Plus => Some(v),
                U::Complement => Some(!v),
                _ => None,
            }
        }
        Expression::Cast(c) => const_int(&c.node.expression, syms, pp),
        Expression::BinaryOperator(b) => {
            let l = const_int(&b.node.lhs, syms, pp)?;
            let r = const_int(&b.node.rhs, syms, pp)?;
            match b.node.operator.node {
                B::Plus => l.checked_add(r),
                B::Minus => l.checked_sub(r),
                B::Multiply => l.checked_mul(r),
                B::Divide => l.checked_div(r),
                B::Modulo => l.checked_rem(r),
                B::ShiftLeft => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                B::ShiftRight => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
                B::BitwiseAnd => Some(l & r),
                B::BitwiseOr => Some(l | r),
                B::BitwiseXor => Some(l ^ r),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(super) fn base_type(specs: &[CNode<DeclarationSpecifier>], syms: &Symbols) -> Base {
    let ts: Vec<&TypeSpecifier> = specs
        .iter()
        .filter_map(|s| match &s.node {
            DeclarationSpecifier::TypeSpecifier(t) => Some(&t.node),
            _ => None,
        })
        .collect();
    base_of_specifiers(&ts, syms)
}

pub(super) fn base_of_specifiers(ts: &[&TypeSpecifier], syms: &Symbols) -> Base {
    let (mut char_, mut short, mut int, mut long, mut float, mut double) = (0, 0, 0, 0, 0, 0);
    let (mut signed, mut unsigned) = (false, false);
    for t in ts {
        match t {
            TypeSpecifier::Char => char_ += 1,
            TypeSpecifier::Short => short += 1,
            TypeSpecifier::Int => int += 1,
            TypeSpecifier::Long => long += 1,
            TypeSpecifier::Float => float += 1,
            TypeSpecifier::Double => double += 1,
            TypeSpecifier::Signed => signed = true,
            TypeSpecifier::Unsigned => unsigned = true,
            TypeSpecifier::TypedefName(n) => {
                return syms
                    .typedefs
                    .get(&n.node.name)
                    .cloned()
                    .unwrap_or_else(|| Base::Other(format!("type '{}'", n.node.name)));
            }
            TypeSpecifier::Void => return Base::Other("type 'void'".into()),
            TypeSpecifier::Bool => return Base::Other("type '_Bool'".into()),
            TypeSpecifier::Struct(_) => return Base::Other("struct type".into()),
            TypeSpecifier::Enum(_) => return Base::Other("enum type".into()),
            TypeSpecifier::Complex => return Base::Other("complex type".into()),
            _ => return Base::Other("type".into()),
        }
    }
    let _ = int;
    Base::D(if double > 0 {
        if long > 0 {
            return Base::Other("type 'long double'".into());
        }
        DType::F64
    } else if float > 0 {
        DType::F32
    } else if char_ > 0 {
        match (signed, unsigned) {
            (_, true) => DType::U8,
            (true, _) => DType::I8,
            _ => DType::Char,
        }
    } else if short > 0 {
        if unsigned {
            DType::U16
        } else {
            DType::I16
        }
    } else if long > 0 {
        if unsigned {
            DType::U64
        } else {
            DType::I64
        }
    } else if unsigned {
        DType::U32
    } else {
        DType::I32
    })
}

pub(super) fn declarator_name(d: &Declarator) -> Option<String> {
    match &d.kind.node {
        DeclaratorKind::Identifier(id) => Some(id.node.name.clone()),
        DeclaratorKind::Declarator(inner) => declarator_name(&inner.node),
        DeclaratorKind::Abstract => None,
    }
}

/// The names of an old-style parameter list (`f(n, a)`), none for a prototype.
pub(super) fn kr_parameters(d: &Declarator) -> Vec<String> {
    for der in &d.derived {
        if let DerivedDeclarator::KRFunction(ids) = &der.node {
            return ids.iter().map(|i| i.node.name.clone()).collect();
        }
    }
    match &d.kind.node {
        DeclaratorKind::Declarator(inner) => kr_parameters(&inner.node),
        _ => Vec::new(),
    }
}

pub(super) fn function_params(
    d: &Declarator,
) -> Option<&Vec<CNode<lang_c::ast::ParameterDeclaration>>> {
    for der in &d.derived {
        if let DerivedDeclarator::Function(f) = &der.node {
            return Some(&f.node.parameters);
        }
    }
    match &d.kind.node {
        DeclaratorKind::Declarator(inner) => function_params(&inner.node),
        _ => None,
    }
}

/// The symbol a declarator declares. Array dimensions are kept as expressions.
pub(super) fn declarator_sym(
    d: &Declarator,
    base: Base,
    _is_param: bool,
    pp: &Preprocessed,
) -> (Option<String>, Sym) {
    let name = declarator_name(d);
    if let DeclaratorKind::Declarator(inner) = &d.kind.node {
        let is_fn = inner
            .node
            .derived
            .iter()
            .chain(d.derived.iter())
            .any(|x| matches!(x.node, DerivedDeclarator::Function(_)));
        return (name, if is_fn { Sym::Function } else { Sym::Pointer });
    }
    let mut dims = Vec::new();
    // `T *p` and `T p[]`: one level over a scalar type.
    let restrict = d.derived.iter().any(|x| match &x.node {
        DerivedDeclarator::Pointer(q) => q.iter().any(|q| {
            matches!(&q.node, lang_c::ast::PointerQualifier::TypeQualifier(t)
                if t.node == lang_c::ast::TypeQualifier::Restrict)
        }),
        _ => false,
    });
    let pointers = d
        .derived
        .iter()
        .filter(|x| matches!(x.node, DerivedDeclarator::Pointer(_)))
        .count();
    let flat = |base: &Base| match base {
        Base::D(t) if d.derived.len() == 1 => Sym::Flat(*t, restrict),
        Base::D(t) if d.derived.len() == 2 && pointers == 2 => Sym::Rows(*t, restrict),
        _ => Sym::Pointer,
    };
    for der in &d.derived {
        match &der.node {
            DerivedDeclarator::Pointer(_) => return (name, flat(&base)),
            DerivedDeclarator::Function(_) | DerivedDeclarator::KRFunction(_) => {
                return (name, Sym::Function)
            }
            DerivedDeclarator::Block(_) => return (name, Sym::Other("block pointer".into())),
            DerivedDeclarator::Array(a) => match &a.node.size {
                ArraySize::VariableExpression(e) | ArraySize::StaticExpression(e) => {
                    match dim_expr(e, pp) {
                        Some(x) => dims.push(x),
                        None => return (name, Sym::Other("array with a complex extent".into())),
                    }
                }
                ArraySize::Unknown | ArraySize::VariableUnknown => return (name, flat(&base)),
            },
        }
    }
    let sym = match base {
        Base::Other(what) => Sym::Other(what),
        Base::D(t) if dims.is_empty() => Sym::Scalar(t),
        Base::D(t) => Sym::Array { dtype: t, dims },
    };
    (name, sym)
}

/// Lowers an array extent permissively (identifiers become variables, casts are dropped).
pub(super) fn dim_expr(e: &CNode<Expression>, pp: &Preprocessed) -> Option<Expr> {
    Some(match &e.node {
        Expression::Identifier(id) => Expr::Var(id.node.name.clone()),
        Expression::Constant(c) => match &c.node {
            Constant::Integer(_) => {
                let text = &pp.text[c.span.start..c.span.end];
                Expr::Int {
                    value: parse_int(text)?,
                    text: text.to_string(),
                    name: crate::program::MacroName(pp.macro_at(c.span.start)),
                }
            }
            _ => return None,
        },
        Expression::Cast(c) => dim_expr(&c.node.expression, pp)?,
        Expression::BinaryOperator(b) => Expr::Binary {
            op: match b.node.operator.node {
                BinaryOperator::Plus => BinOp::Add,
                BinaryOperator::Minus => BinOp::Sub,
                BinaryOperator::Multiply => BinOp::Mul,
                BinaryOperator::Divide => BinOp::Div,
                BinaryOperator::Modulo => BinOp::Mod,
                _ => return None,
            },
            lhs: Box::new(dim_expr(&b.node.lhs, pp)?),
            rhs: Box::new(dim_expr(&b.node.rhs, pp)?),
        },
        _ => return None,
    })
}

pub(super) fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim_end_matches(['u', 'U', 'l', 'L']);
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    i64::from_str_radix(digits, radix).ok()
}

pub(super) fn parse_char(text: &str) -> Option<i64> {
    let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let v = match (chars.next()?, chars.next()) {
        ('\\', Some(c)) => match c {
            'n' => 10,
            't' => 9,
            'r' => 13,
            '0' => 0,
            '\\' => 92,
            '\'' => 39,
            '"' => 34,
            _ => return None,
        },
        (c, None) if c.is_ascii() => c as i64,
        _ => return None,
    };
    if chars.next().is_some() {
        return None;
    }
    Some(v)
}

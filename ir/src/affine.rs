//! Affine forms of index expressions, loop bounds and conditions.

use crate::program::{BinOp, Expr, Loop, LoopCmp, UnOp};
use std::collections::BTreeMap;

/// `Σ coeff·name + constant` over loop variables and parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Affine {
    pub coeffs: BTreeMap<String, i64>,
    pub constant: i64,
}

impl Affine {
    pub fn constant(c: i64) -> Affine {
        Affine {
            coeffs: BTreeMap::new(),
            constant: c,
        }
    }

    pub fn var(name: &str) -> Affine {
        let mut coeffs = BTreeMap::new();
        coeffs.insert(name.to_string(), 1);
        Affine {
            coeffs,
            constant: 0,
        }
    }

    pub fn coeff(&self, name: &str) -> i64 {
        self.coeffs.get(name).copied().unwrap_or(0)
    }

    fn combine(&self, other: &Affine, sign: i64) -> Option<Affine> {
        let mut out = self.clone();
        for (k, v) in &other.coeffs {
            let e = out.coeffs.entry(k.clone()).or_insert(0);
            *e = e.checked_add(v.checked_mul(sign)?)?;
        }
        out.coeffs.retain(|_, v| *v != 0);
        out.constant = out
            .constant
            .checked_add(other.constant.checked_mul(sign)?)?;
        Some(out)
    }

    pub fn add(&self, other: &Affine) -> Option<Affine> {
        self.combine(other, 1)
    }

    pub fn sub(&self, other: &Affine) -> Option<Affine> {
        self.combine(other, -1)
    }

    pub fn scale(&self, k: i64) -> Option<Affine> {
        let mut out = Affine::constant(self.constant.checked_mul(k)?);
        for (n, v) in &self.coeffs {
            let c = v.checked_mul(k)?;
            if c != 0 {
                out.coeffs.insert(n.clone(), c);
            }
        }
        Some(out)
    }

    pub fn is_constant(&self) -> bool {
        self.coeffs.is_empty()
    }
}

/// The affine form of `e`, where `is_symbol` says which variables may appear
/// (loop variables and parameters). `None` when `e` is not affine.
pub fn affine_of(e: &Expr, is_symbol: &dyn Fn(&str) -> bool) -> Option<Affine> {
    match e {
        Expr::Int { value, .. } => Some(Affine::constant(*value)),
        Expr::Var(v) if is_symbol(v) => Some(Affine::var(v)),
        Expr::Unary { op: UnOp::Neg, arg } => affine_of(arg, is_symbol)?.scale(-1),
        Expr::Unary {
            op: UnOp::Plus,
            arg,
        } => affine_of(arg, is_symbol),
        Expr::Cast { dtype, arg } if !dtype.is_float() => affine_of(arg, is_symbol),
        Expr::Binary { op, lhs, rhs } => {
            let (a, b) = (affine_of(lhs, is_symbol)?, affine_of(rhs, is_symbol)?);
            match op {
                BinOp::Add => a.add(&b),
                BinOp::Sub => a.sub(&b),
                BinOp::Mul if a.is_constant() => b.scale(a.constant),
                BinOp::Mul if b.is_constant() => a.scale(b.constant),
                BinOp::Div if a.is_constant() && b.is_constant() && b.constant != 0 => {
                    Some(Affine::constant(a.constant.checked_div(b.constant)?))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A constraint `form >= 0`.
pub type Constraint = Affine;

/// `a < b ? a : b` is min(a, b); `a < b ? b : a` is max(a, b).
fn min_max(e: &Expr) -> Option<(bool, &Expr, &Expr)> {
    let Expr::Ternary { cond, then, other } = e else {
        return None;
    };
    let Expr::Binary { op, lhs, rhs } = &**cond else {
        return None;
    };
    let less = match op {
        BinOp::Lt | BinOp::Le => true,
        BinOp::Gt | BinOp::Ge => false,
        _ => return None,
    };
    if **then == **lhs && **other == **rhs {
        Some((less, lhs, rhs))
    } else if **then == **rhs && **other == **lhs {
        Some((!less, lhs, rhs))
    } else {
        None
    }
}

/// Constraints `var <= e` (upper) or `var >= e` (lower), splitting min/max where the
/// split is a conjunction. Non-affine parts are dropped, which only enlarges the set.
fn bound_constraints(
    var: &str,
    e: &Expr,
    upper: bool,
    offset: i64,
    is_symbol: &dyn Fn(&str) -> bool,
    out: &mut Vec<Constraint>,
) {
    if let Some((is_min, a, b)) = min_max(e) {
        if is_min == upper {
            bound_constraints(var, a, upper, offset, is_symbol, out);
            bound_constraints(var, b, upper, offset, is_symbol, out);
        }
        return;
    }
    let Some(aff) = affine_of(e, is_symbol) else {
        return;
    };
    let Some(aff) = aff.add(&Affine::constant(offset)) else {
        return;
    };
    let v = Affine::var(var);
    let c = if upper { aff.sub(&v) } else { v.sub(&aff) };
    if let Some(c) = c {
        out.push(c);
    }
}

/// The iteration domain of a loop as constraints over its variable, outer loop
/// variables and parameters.
pub fn loop_constraints(l: &Loop, is_symbol: &dyn Fn(&str) -> bool) -> Vec<Constraint> {
    let mut out = Vec::new();
    let upward = l.step > 0;
    bound_constraints(&l.var, &l.init, !upward, 0, is_symbol, &mut out);
    match l.cmp {
        LoopCmp::Lt => bound_constraints(&l.var, &l.bound, true, -1, is_symbol, &mut out),
        LoopCmp::Le => bound_constraints(&l.var, &l.bound, true, 0, is_symbol, &mut out),
        LoopCmp::Gt => bound_constraints(&l.var, &l.bound, false, 1, is_symbol, &mut out),
        LoopCmp::Ge => bound_constraints(&l.var, &l.bound, false, 0, is_symbol, &mut out),
    }
    out
}

/// Constraints implied by a condition being true (conjunctions of affine comparisons;
/// anything else adds nothing).
pub fn condition_constraints(
    e: &Expr,
    truth: bool,
    is_symbol: &dyn Fn(&str) -> bool,
    out: &mut Vec<Constraint>,
) {
    let Expr::Binary { op, lhs, rhs } = e else {
        if let Expr::Unary { op: UnOp::Not, arg } = e {
            condition_constraints(arg, !truth, is_symbol, out);
        }
        return;
    };
    match (op, truth) {
        (BinOp::And, true) | (BinOp::Or, false) => {
            condition_constraints(lhs, truth, is_symbol, out);
            condition_constraints(rhs, truth, is_symbol, out);
            return;
        }
        (BinOp::And, false) | (BinOp::Or, true) => return,
        _ => {}
    }
    let (Some(a), Some(b)) = (affine_of(lhs, is_symbol), affine_of(rhs, is_symbol)) else {
        return;
    };
    let op = if truth {
        *op
    } else {
        match op {
            BinOp::Lt => BinOp::Ge,
            BinOp::Le => BinOp::Gt,
            BinOp::Gt => BinOp::Le,
            BinOp::Ge => BinOp::Lt,
            BinOp::Eq => BinOp::Ne,
            BinOp::Ne => BinOp::Eq,
            _ => return,
        }
    };
    let one = Affine::constant(1);
    let c = match op {
        BinOp::Lt => b.sub(&a).and_then(|d| d.sub(&one)),
        BinOp::Le => b.sub(&a),
        BinOp::Gt => a.sub(&b).and_then(|d| d.sub(&one)),
        BinOp::Ge => a.sub(&b),
        BinOp::Eq => {
            if let (Some(x), Some(y)) = (a.sub(&b), b.sub(&a)) {
                out.push(x);
                out.push(y);
            }
            return;
        }
        _ => return,
    };
    if let Some(c) = c {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: &str) -> Box<Expr> {
        Box::new(Expr::Var(n.into()))
    }

    #[test]
    fn affine_forms() {
        let e = Expr::Binary {
            op: BinOp::Add,
            lhs: Box::new(Expr::Binary {
                op: BinOp::Mul,
                lhs: Box::new(Expr::int(2)),
                rhs: v("i"),
            }),
            rhs: Box::new(Expr::Binary {
                op: BinOp::Sub,
                lhs: v("n"),
                rhs: Box::new(Expr::int(1)),
            }),
        };
        let a = affine_of(&e, &|_| true).unwrap();
        assert_eq!((a.coeff("i"), a.coeff("n"), a.constant), (2, 1, -1));
        let nonlin = Expr::Binary {
            op: BinOp::Mul,
            lhs: v("i"),
            rhs: v("j"),
        };
        assert!(affine_of(&nonlin, &|_| true).is_none());
        assert!(affine_of(&Expr::Var("x".into()), &|n| n != "x").is_none());
    }
}

//! Static counts of one nest version: executed statements, floating-point operations,
//! loads, stores and compulsory traffic, from the [`interp`](crate::interp) walk.
//!
//! Conventions:
//!
//! - **iterations**: executed assignments (statement instances), including scalar
//!   declarations with an initializer (`double s = 0.0;`).
//! - **flops** per execution of an assignment: every binary `+ - * /` whose result type
//!   (C usual arithmetic conversions) is `float` or `double` counts 1; a compound
//!   assignment `x op= e` counts its operator when `x op e` is floating; every call of a
//!   function returning a floating type (`sqrt`, `exp`, `fabs`, ...) counts 1. Unary
//!   minus, casts, comparisons (also of floats), `&&`/`||` and integer arithmetic count 0.
//!   A ternary counts its condition plus the more expensive of its two arms.
//! - **loads / stores**: array element reads and writes as the interpreter reports them
//!   (identical reads within one statement once; a compound assignment reads its target;
//!   scalars are registers). Both branches of an `if` on data count as executed.
//! - **bytes_compulsory** = distinct elements read × element size + distinct elements
//!   written × element size. An element that is read and written counts twice (once
//!   fetched, once written back); a written-only element counts once (no
//!   read-for-ownership).
//! - **operational_intensity** = flops / bytes_compulsory (0 when no bytes move).
//! - **exact**: the access walk ran to completion. When it stops at `limit` accesses,
//!   iterations, flops, loads and stores still come from per-statement execution counts
//!   (loops whose bodies do not depend on their variable are multiplied out, so this is
//!   cheap and exact for the dataset's nests); only the distinct-element sets are
//!   truncated, so `bytes_compulsory` is then a lower bound (what the first `limit`
//!   accesses touched) and `operational_intensity` an upper bound. If even the execution
//!   counts are out of reach, the counts are those of the walked prefix.

use crate::interp::{Env, InterpError, NestInterp, Stop};
use crate::program::{loops, Assign, AssignOp, BinOp, DType, Expr, Program, UnOp};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Counts of one nest version under one environment (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestCounts {
    /// Executed assignments.
    pub iterations: u64,
    pub flops: u64,
    pub loads: u64,
    pub stores: u64,
    /// `bytes_read + bytes_written`.
    pub bytes_compulsory: u64,
    /// Distinct elements read × element size.
    pub bytes_read: u64,
    /// Distinct elements written × element size.
    pub bytes_written: u64,
    /// `flops / bytes_compulsory`, 0 when no bytes move.
    pub operational_intensity: f64,
    /// False when the walk hit the limit (see the module documentation).
    pub exact: bool,
}

/// Arrays up to this many elements get a bitset of touched elements; larger ones a
/// hash set.
const BITSET_MAX_ELEMENTS: u64 = 64 << 20;

/// Counts the nest rooted at loop `root` of region `region` under `env`, walking at
/// most `limit` accesses.
pub fn nest_counts(
    program: &Program,
    region: usize,
    root: usize,
    env: &Env,
    limit: u64,
) -> Result<NestCounts, InterpError> {
    let nest = NestInterp::new(program, region, root, env)?;
    let stmts = nest.statements();
    let types = Types::new(program, region);
    let flops_per: Vec<u64> = stmts
        .iter()
        .map(|s| types.assign_flops(&s.assign))
        .collect();
    let arrays = nest.arrays();
    let mut reads: Vec<ElemSet> = arrays.iter().map(|a| ElemSet::new(a.elements)).collect();
    let mut writes: Vec<ElemSet> = arrays.iter().map(|a| ElemSet::new(a.elements)).collect();
    let mut seen = vec![0u64; stmts.len()];
    let stop = nest.walk(limit, &mut |i, _| seen[i] += 1, &mut |a| {
        let set = if a.write {
            &mut writes[a.array_id]
        } else {
            &mut reads[a.array_id]
        };
        set.insert(a.offset);
    })?;
    let exact = stop == Stop::Done;
    let executions = if exact {
        seen
    } else {
        nest.executions(limit.max(1 << 24))?.unwrap_or(seen)
    };

    let (mut iterations, mut flops, mut loads, mut stores) = (0u64, 0u64, 0u64, 0u64);
    for ((s, &n), &f) in stmts.iter().zip(&executions).zip(&flops_per) {
        iterations = iterations.saturating_add(n);
        flops = flops.saturating_add(n.saturating_mul(f));
        loads = loads.saturating_add(n.saturating_mul(s.reads as u64));
        stores = stores.saturating_add(n.saturating_mul(s.writes as u64));
    }
    let bytes = |sets: &[ElemSet]| -> u64 {
        sets.iter()
            .zip(&arrays)
            .map(|(s, a)| s.len().saturating_mul(a.elem_bytes as u64))
            .fold(0u64, u64::saturating_add)
    };
    let bytes_read = bytes(&reads);
    let bytes_written = bytes(&writes);
    let bytes_compulsory = bytes_read.saturating_add(bytes_written);
    let operational_intensity = if bytes_compulsory == 0 {
        0.0
    } else {
        flops as f64 / bytes_compulsory as f64
    };
    Ok(NestCounts {
        iterations,
        flops,
        loads,
        stores,
        bytes_compulsory,
        bytes_read,
        bytes_written,
        operational_intensity,
        exact,
    })
}

/// Set of touched element offsets of one array.
enum ElemSet {
    Empty { elements: u64 },
    Bits { words: Vec<u64>, len: u64 },
    Hash(HashSet<i64>),
}

impl ElemSet {
    fn new(elements: u64) -> ElemSet {
        ElemSet::Empty { elements }
    }

    #[inline]
    fn insert(&mut self, offset: i64) {
        match self {
            ElemSet::Bits { words, len } => {
                // The interpreter checks bounds, so offsets are in 0..elements.
                let (w, b) = ((offset as u64 >> 6) as usize, offset as u64 & 63);
                if let Some(word) = words.get_mut(w) {
                    if *word & (1 << b) == 0 {
                        *word |= 1 << b;
                        *len += 1;
                    }
                }
            }
            ElemSet::Hash(h) => {
                h.insert(offset);
            }
            ElemSet::Empty { elements } => {
                *self = if *elements <= BITSET_MAX_ELEMENTS {
                    ElemSet::Bits {
                        words: vec![0; elements.div_ceil(64) as usize],
                        len: 0,
                    }
                } else {
                    ElemSet::Hash(HashSet::new())
                };
                self.insert(offset);
            }
        }
    }

    fn len(&self) -> u64 {
        match self {
            ElemSet::Empty { .. } => 0,
            ElemSet::Bits { len, .. } => *len,
            ElemSet::Hash(h) => h.len() as u64,
        }
    }
}

/// Expression types and flop counts in one region.
pub struct Types<'p> {
    program: &'p Program,
    loop_vars: HashMap<&'p str, DType>,
}

impl<'p> Types<'p> {
    pub fn new(program: &'p Program, region: usize) -> Types<'p> {
        let loop_vars = program
            .regions
            .get(region)
            .map(|r| {
                loops(&r.body)
                    .into_iter()
                    .map(|l| (l.var.as_str(), l.var_dtype))
                    .collect()
            })
            .unwrap_or_default();
        Types { program, loop_vars }
    }

    /// The C type of `e` (variables not found anywhere are taken as `int`).
    pub fn of(&self, e: &Expr) -> DType {
        match e {
            Expr::Int { value, text, .. } => int_literal_type(*value, text),
            Expr::Float { text, .. } => {
                if text.ends_with(['f', 'F']) {
                    DType::F32
                } else {
                    DType::F64
                }
            }
            Expr::Var(v) => self
                .program
                .scalar(v)
                .map(|s| s.dtype)
                .or_else(|| self.loop_vars.get(v.as_str()).copied())
                .unwrap_or(DType::I32),
            Expr::Access { array, .. } => self
                .program
                .array(array)
                .map(|a| a.dtype)
                .unwrap_or(DType::F64),
            Expr::Unary { op, arg } => match op {
                UnOp::Not => DType::I32,
                UnOp::Neg | UnOp::Plus => promote(self.of(arg)),
            },
            Expr::Binary { op, lhs, rhs } => {
                if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    DType::I32
                } else {
                    arith(self.of(lhs), self.of(rhs))
                }
            }
            Expr::Ternary { then, other, .. } => arith(self.of(then), self.of(other)),
            Expr::Call { func, args } => library_call_type(func)
                .or_else(|| self.program.pure_function(func).map(|f| f.dtype))
                .unwrap_or_else(|| {
                    args.iter()
                        .map(|a| self.of(a))
                        .reduce(arith)
                        .unwrap_or(DType::I32)
                }),
            Expr::Cast { dtype, .. } => *dtype,
        }
    }

    /// Floating-point operations of one evaluation of `e`.
    pub fn flops(&self, e: &Expr) -> u64 {
        match e {
            Expr::Int { .. } | Expr::Float { .. } | Expr::Var(_) => 0,
            Expr::Access { indices, .. } => indices.iter().map(|i| self.flops(i)).sum(),
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => self.flops(arg),
            Expr::Binary { op, lhs, rhs } => {
                let own = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div)
                    && self.of(e).is_float();
                own as u64 + self.flops(lhs) + self.flops(rhs)
            }
            Expr::Ternary { cond, then, other } => {
                self.flops(cond) + self.flops(then).max(self.flops(other))
            }
            Expr::Call { args, .. } => {
                self.of(e).is_float() as u64 + args.iter().map(|a| self.flops(a)).sum::<u64>()
            }
        }
    }

    /// Floating-point operations of one execution of `a`.
    pub fn assign_flops(&self, a: &Assign) -> u64 {
        let own = a.op != AssignOp::Set && arith(self.of(&a.target), self.of(&a.value)).is_float();
        own as u64 + self.flops(&a.value) + self.flops(&a.target)
    }
}

fn int_literal_type(value: i64, text: &str) -> DType {
    if text.starts_with('\'') {
        return DType::I32;
    }
    let t = text.to_ascii_lowercase();
    let is_hex = t.starts_with("0x");
    let unsigned = t.contains('u');
    let long = t.contains('l');
    match (unsigned, long) {
        (false, false) if i32::try_from(value).is_ok() => DType::I32,
        // Hexadecimal and octal literals may take the unsigned type of the same rank.
        (false, false) if is_hex && u32::try_from(value).is_ok() => DType::U32,
        (false, _) => DType::I64,
        (true, false) if u32::try_from(value).is_ok() => DType::U32,
        (true, _) => DType::U64,
    }
}

/// Integer promotion.
fn promote(t: DType) -> DType {
    match t {
        DType::Char | DType::I8 | DType::U8 | DType::I16 | DType::U16 => DType::I32,
        other => other,
    }
}

/// The usual arithmetic conversions.
fn arith(a: DType, b: DType) -> DType {
    if a == DType::F64 || b == DType::F64 {
        return DType::F64;
    }
    if a == DType::F32 || b == DType::F32 {
        return DType::F32;
    }
    let (a, b) = (promote(a), promote(b));
    if a == b {
        return a;
    }
    let rank = |t: DType| {
        if matches!(t, DType::I64 | DType::U64) {
            2
        } else {
            1
        }
    };
    let unsigned = |t: DType| matches!(t, DType::U32 | DType::U64);
    let (s, u) = match (unsigned(a), unsigned(b)) {
        (false, false) | (true, true) => return if rank(a) >= rank(b) { a } else { b },
        (false, true) => (a, b),
        (true, false) => (b, a),
    };
    if rank(u) >= rank(s) {
        u
    } else {
        // A signed type of higher rank represents every value of the unsigned one
        // (long vs unsigned int on LP64).
        s
    }
}

/// Result type of the C library's math functions (`sqrt`, `sinf`, `fabs`, `abs`, ...),
/// which a nest may call: they read only their arguments. `None` for any other name.
pub fn library_call_type(func: &str) -> Option<DType> {
    const MATH: &[&str] = &[
        "sqrt",
        "cbrt",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "pow",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "fabs",
        "floor",
        "ceil",
        "round",
        "trunc",
        "rint",
        "nearbyint",
        "fmod",
        "remainder",
        "fmax",
        "fmin",
        "fdim",
        "fma",
        "hypot",
        "erf",
        "erfc",
        "tgamma",
        "lgamma",
        "copysign",
    ];
    if MATH.contains(&func) {
        return Some(DType::F64);
    }
    if let Some(stem) = func.strip_suffix('f') {
        if MATH.contains(&stem) {
            return Some(DType::F32);
        }
    }
    if let Some(stem) = func.strip_suffix('l') {
        if MATH.contains(&stem) {
            return Some(DType::F64);
        }
    }
    match func {
        "abs" => Some(DType::I32),
        "labs" | "llabs" => Some(DType::I64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_arithmetic_conversions() {
        assert_eq!(arith(DType::F32, DType::I32), DType::F32);
        assert_eq!(arith(DType::F32, DType::F64), DType::F64);
        assert_eq!(arith(DType::Char, DType::I16), DType::I32);
        assert_eq!(arith(DType::I32, DType::U32), DType::U32);
        assert_eq!(arith(DType::I64, DType::U32), DType::I64);
        assert_eq!(arith(DType::I32, DType::U64), DType::U64);
        assert_eq!(int_literal_type(3, "3"), DType::I32);
        assert_eq!(int_literal_type(3, "3UL"), DType::U64);
        assert_eq!(int_literal_type(1 << 40, "1099511627776"), DType::I64);
        assert_eq!(library_call_type("sqrtf"), Some(DType::F32));
        assert_eq!(library_call_type("exp"), Some(DType::F64));
    }
}

//! The loop-nest IR: a program is a set of regions, each a tree of loops, conditionals
//! and statements over named arrays and scalars.
//!
//! Expressions keep the shape and the literal spelling of the source, so printing a
//! region back to C reproduces the same computation bit for bit.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A position in the user's source file (1-based line and column).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// Element types the region may compute with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// Plain `char` (signed on the targets we support).
    Char,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl DType {
    /// The C spelling used in generated code.
    pub fn c_name(self) -> &'static str {
        match self {
            DType::Char => "char",
            DType::I8 => "signed char",
            DType::U8 => "unsigned char",
            DType::I16 => "short",
            DType::U16 => "unsigned short",
            DType::I32 => "int",
            DType::U32 => "unsigned int",
            DType::I64 => "long",
            DType::U64 => "unsigned long",
            DType::F32 => "float",
            DType::F64 => "double",
        }
    }

    /// The NumPy `descr` of this type on a little-endian x86-64 machine.
    pub fn npy_descr(self) -> &'static str {
        match self {
            DType::Char | DType::I8 => "|i1",
            DType::U8 => "|u1",
            DType::I16 => "<i2",
            DType::U16 => "<u2",
            DType::I32 => "<i4",
            DType::U32 => "<u4",
            DType::I64 => "<i8",
            DType::U64 => "<u8",
            DType::F32 => "<f4",
            DType::F64 => "<f8",
        }
    }

    pub fn size(self) -> usize {
        match self {
            DType::Char | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}

/// An array the region accesses. `dims` are C expressions of the declared extents;
/// `extents` holds their values where they are compile-time constants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Array {
    pub name: String,
    pub dtype: DType,
    pub dims: Vec<Expr>,
    pub extents: Vec<Option<i64>>,
    /// Declared inside the region (a temporary), as opposed to visible from outside.
    pub local: bool,
    /// A pointer the program indexes with one linearized subscript (`a[i*n + j]`), read
    /// as an array of `dims` (see [`crate::flat`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flat: bool,
    /// A pointer to row pointers (`float **w`, rows allocated one by one) indexed with
    /// two subscripts (`w[k][j]`), read as an array of `dims` whose rows need not be
    /// contiguous (see [`crate::flat`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rows: bool,
    /// A `restrict`-qualified pointer: nothing else reaches its elements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restrict: bool,
    /// The name the program spells, where it differs from `name`: a pointer of one name
    /// in two functions, indexed with other shapes, is two arrays (`w`, and `w__tune1` in
    /// the later function); code that stands in the user's program prints this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Array {
    /// A pointer the program reads as an array (`flat` or `rows`): its extents come
    /// from the loops that index it, and the tuned file checks that it does not overlap
    /// the others.
    pub fn pointer(&self) -> bool {
        self.flat || self.rows
    }

    /// Bytes of the whole array, when every extent is a known positive constant.
    pub fn bytes(&self) -> Option<i64> {
        if self.extents.is_empty() {
            return None;
        }
        self.extents
            .iter()
            .try_fold(self.dtype.size() as i64, |b, e| {
                e.filter(|n| *n > 0).map(|n| b.saturating_mul(n))
            })
    }
}

/// Where a scalar lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarOrigin {
    /// Declared outside the region (function parameter, local variable or global).
    External,
    /// Declared inside the region.
    Local,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scalar {
    pub name: String,
    pub dtype: DType,
    pub origin: ScalarOrigin,
    /// Assigned somewhere in the region.
    pub written: bool,
    /// Read somewhere in the region (loop variables excluded).
    pub read: bool,
}

/// How a loop may execute, as decided by dependence analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopKind {
    /// No dependence is carried: iterations may run in any order (a map).
    Map,
    /// The only carried dependences accumulate into one location (`+=`, `*=`, ...).
    Reduction,
    /// Carries other dependences, or analysis could not prove otherwise.
    Loop,
}

impl LoopKind {
    /// The word used in reports and in the verdict tables.
    pub fn verdict(self) -> &'static str {
        match self {
            LoopKind::Map => "parallel",
            LoopKind::Reduction => "reduction",
            LoopKind::Loop => "sequential",
        }
    }
}

/// Comparison of a loop's variable against its bound: `var OP bound`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopCmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl LoopCmp {
    pub fn c_op(self) -> &'static str {
        match self {
            LoopCmp::Lt => "<",
            LoopCmp::Le => "<=",
            LoopCmp::Gt => ">",
            LoopCmp::Ge => ">=",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    /// Preorder index of the loop within its region.
    pub id: usize,
    pub var: String,
    pub var_dtype: DType,
    /// The variable was declared in the `for` initializer (`for (int i = ...)`).
    pub declares_var: bool,
    pub init: Expr,
    pub cmp: LoopCmp,
    pub bound: Expr,
    /// Non-zero increment per iteration (negative for decreasing loops).
    pub step: i64,
    pub kind: LoopKind,
    pub body: Vec<Node>,
    pub pos: Pos,
    /// Where the loop statement ends in the source (its last character): with `pos`,
    /// the text a tuned file replaces when a recipe changed the loop.
    #[serde(default)]
    pub end: Pos,
    /// Directives printed before the loop (`#pragma omp parallel for`, `#pragma GCC unroll 4`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directives: Vec<Directive>,
    /// Arrays each iteration writes before reading them: the loop's `kind` counts them
    /// private, so a parallel loop with any needs a copy per iteration (the
    /// parallelization step makes them; see [`crate::private_arrays`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_arrays: Vec<String>,
}

impl Loop {
    /// Whether any directive stands before the loop.
    pub fn has_directives(&self) -> bool {
        !self.directives.is_empty()
    }

    /// Whether the loop is an OpenMP parallel loop.
    pub fn is_parallel_for(&self) -> bool {
        self.directives.iter().any(Directive::is_parallel_for)
    }

    /// Whether the loop carries an OpenMP directive.
    pub fn has_openmp(&self) -> bool {
        self.directives.iter().any(Directive::is_openmp)
    }

    /// Whether the loop or a loop inside it carries an OpenMP directive (it is built
    /// with `-fopenmp`).
    pub fn nest_has_openmp(&self) -> bool {
        self.has_openmp() || loops(&self.body).iter().any(|l| l.has_openmp())
    }

    /// The `n` of the loop's `collapse(n)` clause.
    pub fn collapse(&self) -> Option<u32> {
        self.directives.iter().find_map(|d| match d {
            Directive::OmpParallelFor { collapse, .. } => *collapse,
            _ => None,
        })
    }
}

/// An OpenMP loop schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    Static,
    Dynamic,
}

impl Schedule {
    /// The name in a `schedule(...)` clause.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Static => "static",
            Schedule::Dynamic => "dynamic",
        }
    }
}

/// One item of a `reduction` clause: `+:s` for a scalar, `+:y[0:N]` for a whole array
/// (`section` holds the array's extents; empty for a scalar).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReductionItem {
    /// `+`, `*`, `max` or `min`.
    pub op: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub section: Vec<Expr>,
}

impl fmt::Display for ReductionItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.op, self.name)?;
        for d in &self.section {
            write!(f, "[0:{}]", crate::print::expr(d))?;
        }
        Ok(())
    }
}

/// A directive on a loop, printed on the line before its `for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "directive")]
pub enum Directive {
    /// `#pragma omp parallel for [collapse(n)] [schedule(kind[, chunk])] [lastprivate(..)]`
    OmpParallelFor {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        collapse: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schedule: Option<Schedule>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk: Option<u32>,
        /// Scalars written in the loop and read after it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        lastprivate: Vec<String>,
        /// `reduction(...)` clauses: scalars, and whole arrays as sections.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reduction: Vec<ReductionItem>,
    },
    /// `#pragma omp simd [simdlen(w)] [lastprivate(..)] [reduction(..)]`
    OmpSimd {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        simdlen: Option<u32>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        lastprivate: Vec<String>,
        /// Scalars a reduction loop accumulates: one partial result per vector lane.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reduction: Vec<ReductionItem>,
    },
    /// `#pragma GCC unroll n`
    GccUnroll { factor: u32 },
    /// Any other pragma, as written (the whole line, `#pragma` included).
    Other { text: String },
    /// The user's `#pragma omp parallel ...` line (as written) around a block of
    /// `#pragma omp for` loops, this loop one of them. Printed before the loop wherever
    /// the loop stands alone (nest functions, cutouts, a region printed anew: a parallel
    /// region around one worksharing loop), left out where the loop goes back into the
    /// user's block.
    InParallel { text: String },
    /// The band of three loops that starts here is printed as a packed, blocked kernel
    /// over a vector register tile (`transform/register_tile.rs`).
    RegisterTile(RegisterTileSpec),
    /// The time loop that starts here is printed as skewed tiles over its sweeps' rows
    /// (`transform/time_tile.rs`).
    TimeTile(TimeTileSpec),
}

/// A register tile and its cache blocks: `mr` rows by `nr` columns (a GNU C vector of
/// `nr` elements per row) of the written array, blocks of `mc` rows, `kc` reduction
/// steps and `nc` columns, one OpenMP team over the row blocks with `parallel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterTileSpec {
    pub mr: u32,
    pub nr: u32,
    pub mc: u32,
    pub kc: u32,
    pub nc: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parallel: bool,
    /// The element type (the written array's).
    pub dtype: DType,
}

/// A time tile: blocks of `depth` steps of a time loop, each sweep's rows cut into
/// tiles of `width` rows skewed against the steps; with `parallel`, one OpenMP team
/// around the whole loop shares the rows of every parallel sweep of a tile, or, where
/// no sweep's rows may be shared, takes the blocks in turn as a pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeTileSpec {
    pub width: u32,
    pub depth: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parallel: bool,
    /// Rows a tile leans back per sweep.
    pub skew: i64,
    /// The largest distance from a sweep's row to a row of a written array it touches.
    pub reach: i64,
    /// Each sweep of the loop's body: None for a loop over rows, the row of a sweep
    /// run once.
    pub sweeps: Vec<Option<i64>>,
}

impl Directive {
    /// The directive a user's pragma line states (`#pragma ...`, spaces normalized):
    /// the forms tune itself writes are read back as such; every other pragma (the
    /// user's `private`, `reduction`, `default(none)`, `omp for` clauses...) is kept
    /// as written.
    pub fn parse(line: &str) -> Directive {
        let words: Vec<&str> = line.split_whitespace().collect();
        let other = || Directive::Other {
            text: words.join(" "),
        };
        match words.as_slice() {
            ["#pragma", "GCC", "unroll", n] => n
                .parse()
                .map(|factor| Directive::GccUnroll { factor })
                .unwrap_or_else(|_| other()),
            _ => other(),
        }
    }

    /// A loop whose iterations OpenMP shares among threads: `#pragma omp parallel for
    /// ...` (the tune's own, or the user's) or the user's `#pragma omp for ...` inside
    /// their parallel region.
    pub fn is_parallel_for(&self) -> bool {
        match self {
            Directive::OmpParallelFor { .. } => true,
            Directive::RegisterTile(spec) => spec.parallel,
            Directive::TimeTile(spec) => spec.parallel,
            Directive::Other { text } => {
                let w: Vec<&str> = text.split_whitespace().take(4).collect();
                w.get(1..4) == Some(&["omp", "parallel", "for"][..])
                    || w.get(1..3) == Some(&["omp", "for"][..])
            }
            _ => false,
        }
    }

    /// The user's own directive (as opposed to one a recipe wrote).
    pub fn is_users(&self) -> bool {
        matches!(self, Directive::Other { .. } | Directive::InParallel { .. })
    }

    /// Any OpenMP directive.
    pub fn is_openmp(&self) -> bool {
        match self {
            Directive::OmpParallelFor { .. } | Directive::OmpSimd { .. } => true,
            Directive::GccUnroll { .. } => false,
            Directive::RegisterTile(spec) => spec.parallel,
            Directive::TimeTile(spec) => spec.parallel,
            Directive::InParallel { .. } => true,
            Directive::Other { text } => text.split_whitespace().nth(1) == Some("omp"),
        }
    }
}

impl fmt::Display for Directive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lastprivate = |f: &mut fmt::Formatter<'_>, vars: &[String]| {
            if vars.is_empty() {
                Ok(())
            } else {
                write!(f, " lastprivate({})", vars.join(", "))
            }
        };
        match self {
            Directive::OmpParallelFor {
                collapse,
                schedule,
                chunk,
                lastprivate: vars,
                reduction,
            } => {
                f.write_str("#pragma omp parallel for")?;
                if let Some(n) = collapse {
                    write!(f, " collapse({n})")?;
                }
                if let Some(s) = schedule {
                    write!(f, " schedule({}", s.name())?;
                    if let Some(c) = chunk {
                        write!(f, ", {c}")?;
                    }
                    f.write_str(")")?;
                }
                lastprivate(f, vars)?;
                for r in reduction {
                    write!(f, " reduction({r})")?;
                }
                Ok(())
            }
            Directive::OmpSimd {
                simdlen,
                lastprivate: vars,
                reduction,
            } => {
                f.write_str("#pragma omp simd")?;
                if let Some(w) = simdlen {
                    write!(f, " simdlen({w})")?;
                }
                lastprivate(f, vars)?;
                for r in reduction {
                    write!(f, " reduction({r})")?;
                }
                Ok(())
            }
            Directive::GccUnroll { factor } => write!(f, "#pragma GCC unroll {factor}"),
            Directive::RegisterTile(t) => write!(
                f,
                "/* register tile {}x{}, blocks {}x{}x{}{} */",
                t.mr,
                t.nr,
                t.mc,
                t.kc,
                t.nc,
                if t.parallel { ", parallel" } else { "" }
            ),
            Directive::TimeTile(t) => write!(
                f,
                "/* time tile of {} steps, {} rows{} */",
                t.depth,
                t.width,
                if t.parallel { ", parallel" } else { "" }
            ),
            Directive::Other { text } | Directive::InParallel { text } => f.write_str(text),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct If {
    pub cond: Expr,
    pub then_body: Vec<Node>,
    pub else_body: Vec<Node>,
    pub pos: Pos,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AssignOp {
    Set,
    Add,
    Sub,
    Mul,
    Div,
}

impl AssignOp {
    pub fn c_op(self) -> &'static str {
        match self {
            AssignOp::Set => "=",
            AssignOp::Add => "+=",
            AssignOp::Sub => "-=",
            AssignOp::Mul => "*=",
            AssignOp::Div => "/=",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assign {
    /// Index of the statement within its region, in source order.
    pub id: usize,
    /// A scalar (`Expr::Var`) or an array element (`Expr::Access`).
    pub target: Expr,
    pub op: AssignOp,
    pub value: Expr,
    pub pos: Pos,
}

/// A declaration inside the region: a scalar temporary (with optional initializer)
/// or a local array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decl {
    pub name: String,
    pub dtype: DType,
    pub dims: Vec<Expr>,
    pub init: Option<Expr>,
    pub pos: Pos,
}

/// A statement the IR does not model (a call, a `while` loop, `return`, a pointer
/// access, ...): glue kept as the user wrote it. A loop holding one is never a nest,
/// and is sequential; the nests around and inside it are tuned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opaque {
    /// The statement's text (preprocessed), printed back as it is.
    pub text: String,
    /// Why the IR does not model it, e.g. "call to 'printf' as a statement".
    pub reason: String,
    /// Variables in scope it names (members, types and functions aside): what it may
    /// read.
    pub names: Vec<String>,
    /// Those it may write: assigned, incremented, their address taken, arrays and
    /// pointers (a callee may write through them), and what it declares.
    pub writes: Vec<String>,
    /// Variables it declares (a declaration whose initializer is a call), in scope
    /// for the statements after it.
    pub declares: Vec<String>,
    /// It is a `return`: the region ends there too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub returns: bool,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    Loop(Loop),
    If(If),
    Assign(Assign),
    Decl(Decl),
    Block(Vec<Node>),
    Opaque(Opaque),
}

/// Whether `body` holds a statement the IR does not model.
pub fn has_opaque(body: &[Node]) -> bool {
    body.iter().any(|n| match n {
        Node::Opaque(_) => true,
        Node::Loop(l) => has_opaque(&l.body),
        Node::If(i) => has_opaque(&i.then_body) || has_opaque(&i.else_body),
        Node::Block(b) => has_opaque(b),
        Node::Assign(_) | Node::Decl(_) => false,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnOp {
    Neg,
    Plus,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    pub fn c_op(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// C precedence level (higher binds tighter).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div | BinOp::Mod => 13,
            BinOp::Add | BinOp::Sub => 12,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 10,
            BinOp::Eq | BinOp::Ne => 9,
            BinOp::And => 5,
            BinOp::Or => 4,
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }
}

/// The name of the object-like macro a literal was expanded from (`N` for
/// `#define N 256`). It is an annotation for printing the user's names back into their
/// file: it never changes what an expression means, so every two names compare equal.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MacroName(pub Option<String>);

impl MacroName {
    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }
}

impl PartialEq for MacroName {
    fn eq(&self, _: &MacroName) -> bool {
        true
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    /// Integer literal; `text` is the source spelling (suffixes included), `name` the
    /// object-like macro it was expanded from, where the user wrote one.
    Int {
        value: i64,
        text: String,
        #[serde(default, skip_serializing_if = "MacroName::is_none")]
        name: MacroName,
    },
    /// Floating literal; `text` is the source spelling (`1.5`, `2.0f`, `1e-3`).
    Float {
        value: f64,
        text: String,
    },
    /// A scalar, parameter or loop variable.
    Var(String),
    Access {
        array: String,
        indices: Vec<Expr>,
    },
    Unary {
        op: UnOp,
        arg: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        other: Box<Expr>,
    },
    Call {
        func: String,
        args: Vec<Expr>,
    },
    Cast {
        dtype: DType,
        arg: Box<Expr>,
    },
}

impl Expr {
    pub fn int(value: i64) -> Expr {
        Expr::Int {
            value,
            text: value.to_string(),
            name: MacroName::default(),
        }
    }

    /// Calls `f` on this expression and every sub-expression, parents first.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Int { .. } | Expr::Float { .. } | Expr::Var(_) => {}
            Expr::Access { indices, .. } => indices.iter().for_each(|e| e.walk(f)),
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => arg.walk(f),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.walk(f);
                rhs.walk(f);
            }
            Expr::Ternary { cond, then, other } => {
                cond.walk(f);
                then.walk(f);
                other.walk(f);
            }
            Expr::Call { args, .. } => args.iter().for_each(|e| e.walk(f)),
        }
    }

    /// Whether this expression mentions the variable or array `name`.
    pub fn mentions(&self, name: &str) -> bool {
        let mut found = false;
        self.walk(&mut |e| match e {
            Expr::Var(v) if v == name => found = true,
            Expr::Access { array, .. } if array == name => found = true,
            _ => {}
        });
        found
    }
}

/// One `#pragma scop` region (or one whole function body with `--function`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    pub index: usize,
    /// The function that encloses the region.
    pub function: String,
    pub start: Pos,
    pub end: Pos,
    pub body: Vec<Node>,
    /// Scalars whose values at the region's end nobody reads (declared in its function,
    /// not named after the region there): a step may leave them other than the user's
    /// code would.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dead_after: Vec<String>,
}

impl Region {
    /// Whether nobody reads the value scalar `name` holds when loop `id` of the region
    /// ends: it is dead after the region ([`Region::dead_after`]), and every read of it
    /// after the loop comes after an assignment `name = ..` ([`reads_set_first`]).
    pub fn dead_after_loop(&self, id: usize, name: &str) -> bool {
        self.dead_after.iter().any(|d| d == name) && reads_set_first(&self.body, name, &[id])
    }
}

/// Whether every read of scalar `w` in `body` comes after an assignment `w = ..` (that
/// does not read `w`) in its own statement list or one around it: what `w` held before
/// is never read. Each loop of `kill` leaves `w` holding a value that must not be read
/// either: after it, and through the loops around it (their next iterations run after
/// it, and their conditions are read again), reads need an assignment of their own.
pub fn reads_set_first(body: &[Node], w: &str, kill: &[usize]) -> bool {
    fn holds(body: &[Node], kill: &[usize]) -> bool {
        loops(body).iter().any(|x| kill.contains(&x.id))
    }
    fn go(body: &[Node], w: &str, kill: &[usize], mut assigned: bool) -> bool {
        for n in body {
            match n {
                Node::Assign(a) => {
                    let sets = matches!(&a.target, Expr::Var(v) if v == w);
                    let reads = a.value.mentions(w)
                        || (sets && a.op != AssignOp::Set)
                        || (!sets && a.target.mentions(w));
                    if reads && !assigned {
                        return false;
                    }
                    assigned |= sets;
                }
                Node::Loop(l) => {
                    let header = l.init.mentions(w) || l.bound.mentions(w);
                    if header && !assigned {
                        return false;
                    }
                    if kill.contains(&l.id) {
                        // Run again (inside a loop), it reads what it left.
                        if !go(&l.body, w, kill, false) {
                            return false;
                        }
                        assigned = false;
                        continue;
                    }
                    let killing = holds(&l.body, kill);
                    // Its condition is read again after a kill inside.
                    if killing && l.bound.mentions(w) {
                        return false;
                    }
                    if !go(&l.body, w, kill, assigned && !killing) {
                        return false;
                    }
                    assigned &= !killing;
                }
                Node::If(i) => {
                    let killing = holds(&i.then_body, kill) || holds(&i.else_body, kill);
                    if (i.cond.mentions(w) && !assigned)
                        || !go(&i.then_body, w, kill, assigned)
                        || !go(&i.else_body, w, kill, assigned)
                    {
                        return false;
                    }
                    assigned &= !killing;
                }
                Node::Block(b) => {
                    let killing = holds(b, kill);
                    if !go(b, w, kill, assigned) {
                        return false;
                    }
                    assigned &= !killing;
                }
                Node::Decl(d) => {
                    let reads = d.init.as_ref().is_some_and(|e| e.mentions(w))
                        || d.dims.iter().any(|e| e.mentions(w));
                    if reads && !assigned {
                        return false;
                    }
                    // A declaration of that name starts a scalar of its own.
                    assigned |= d.name == w;
                }
                Node::Opaque(o) => {
                    if o.names.iter().any(|n| n == w) && !assigned {
                        return false;
                    }
                }
            }
        }
        true
    }
    go(body, w, kill, false)
}

/// A program as the tuner sees it: the regions to tune and the data they touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Short name, from the file stem (`gemm` for `gemm.c`).
    pub name: String,
    /// The source file as given on the command line.
    pub file: String,
    pub arrays: Vec<Array>,
    pub scalars: Vec<Scalar>,
    pub regions: Vec<Region>,
    /// The user's flags select C89/C90 (`-std=c89`, `-ansi`, ...): code printed for
    /// them declares no variable in a `for` initializer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub c89: bool,
    /// The regions were found without markers (no `#pragma scop`, no `--function`):
    /// every function of the file that holds a loop.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_regions: bool,
    /// Functions of the user's that the user assumed pure (`--assume-pure NAME`): calls
    /// to them may stand inside nests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pure_functions: Vec<PureFunction>,
    /// Functions holding loops that were left as they are, found without markers,
    /// with why (the error that reading them gave).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread_functions: Vec<UnreadFunction>,
}

/// A function of the file, found without markers, that could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnreadFunction {
    pub name: String,
    /// Line of its definition.
    pub line: u32,
    pub reason: String,
}

/// A function assumed pure: its value depends on its arguments alone, and it writes
/// nothing a nest reads or writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PureFunction {
    pub name: String,
    /// Its result type.
    pub dtype: DType,
    /// C text that makes it callable from a cutout: its definition, made `static`, where
    /// the file defines it; its declaration otherwise.
    pub text: String,
}

impl Program {
    /// The loop with id `id` in region `region` (the root of a nest, usually).
    pub fn find_loop(&self, region: usize, id: usize) -> Option<&Loop> {
        find_loop(&self.regions.get(region)?.body, id)
    }

    pub fn array(&self, name: &str) -> Option<&Array> {
        self.arrays.iter().find(|a| a.name == name)
    }

    /// The name the program spells for array `name` ([`Array::source`]).
    pub fn c_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.array(name)
            .and_then(|a| a.source.as_deref())
            .unwrap_or(name)
    }

    pub fn scalar(&self, name: &str) -> Option<&Scalar> {
        self.scalars.iter().find(|s| s.name == name)
    }

    pub fn pure_function(&self, name: &str) -> Option<&PureFunction> {
        self.pure_functions.iter().find(|f| f.name == name)
    }

    /// Integer scalars from outside the region that the region never writes: the
    /// symbolic sizes that loop bounds and subscripts may be affine in.
    pub fn is_param(&self, name: &str) -> bool {
        self.scalar(name).is_some_and(|s| {
            s.origin == ScalarOrigin::External && !s.written && !s.dtype.is_float()
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("IR serializes")
    }

    pub fn from_json(text: &str) -> Result<Program, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// Visits every node of a body, parents first, with the loops enclosing it.
pub fn walk_nodes<'a>(body: &'a [Node], f: &mut dyn FnMut(&'a Node, &[&'a Loop])) {
    fn go<'a>(
        body: &'a [Node],
        stack: &mut Vec<&'a Loop>,
        f: &mut dyn FnMut(&'a Node, &[&'a Loop]),
    ) {
        for node in body {
            f(node, stack);
            match node {
                Node::Loop(l) => {
                    stack.push(l);
                    go(&l.body, stack, f);
                    stack.pop();
                }
                Node::If(i) => {
                    go(&i.then_body, stack, f);
                    go(&i.else_body, stack, f);
                }
                Node::Block(b) => go(b, stack, f),
                Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
            }
        }
    }
    go(body, &mut Vec::new(), f)
}

/// The loops of a nest in preorder, `root` first: position `p` is what recipe steps
/// call `at: p`.
pub fn preorder(root: &Loop) -> Vec<&Loop> {
    let mut v = vec![root];
    v.extend(loops(&root.body));
    v
}

/// All loops of a body in preorder.
pub fn loops(body: &[Node]) -> Vec<&Loop> {
    let mut out = Vec::new();
    walk_nodes(body, &mut |n, _| {
        if let Node::Loop(l) = n {
            out.push(l);
        }
    });
    out
}

/// Mutable preorder visit of all loops.
pub fn for_each_loop_mut(body: &mut [Node], f: &mut dyn FnMut(&mut Loop)) {
    for node in body {
        match node {
            Node::Loop(l) => {
                f(l);
                for_each_loop_mut(&mut l.body, f);
            }
            Node::If(i) => {
                for_each_loop_mut(&mut i.then_body, f);
                for_each_loop_mut(&mut i.else_body, f);
            }
            Node::Block(b) => for_each_loop_mut(b, f),
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
        }
    }
}

// Facts about loops that every pass asks for.

/// Evaluates an integer expression made of literals only.
pub fn const_value(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int { value, .. } => Some(*value),
        Expr::Unary { op: UnOp::Neg, arg } => const_value(arg)?.checked_neg(),
        Expr::Unary {
            op: UnOp::Plus,
            arg,
        } => const_value(arg),
        Expr::Binary { op, lhs, rhs } => {
            let (a, b) = (const_value(lhs)?, const_value(rhs)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div => a.checked_div(b),
                BinOp::Mod => a.checked_rem(b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Iterations of `l` when `value` gives its init and bound (e.g. constants only, or
/// with the nest's parameters).
pub fn trip_count(l: &Loop, value: &dyn Fn(&Expr) -> Option<i64>) -> Option<i64> {
    let (a, b) = (value(&l.init)?, value(&l.bound)?);
    // Saturating: constants from the user's source may lie anywhere in i64.
    let span = match l.cmp {
        LoopCmp::Lt => b.saturating_sub(a),
        LoopCmp::Le => b.saturating_sub(a).saturating_add(1),
        LoopCmp::Gt => a.saturating_sub(b),
        LoopCmp::Ge => a.saturating_sub(b).saturating_add(1),
    };
    let s = l.step.saturating_abs().max(1);
    Some(span.max(0).saturating_add(s - 1) / s)
}

/// The loop with id `id` in `body` (at any depth).
pub fn find_loop(body: &[Node], id: usize) -> Option<&Loop> {
    loops(body).into_iter().find(|l| l.id == id)
}

#[cfg(test)]
mod directive_tests {
    use super::*;

    #[test]
    fn directives_print_as_c_and_read_back_from_json() {
        let par = Directive::OmpParallelFor {
            collapse: Some(2),
            schedule: Some(Schedule::Dynamic),
            chunk: Some(4),
            lastprivate: vec!["t".into(), "u".into()],
            reduction: vec![
                ReductionItem {
                    op: "+".into(),
                    name: "s".into(),
                    section: Vec::new(),
                },
                ReductionItem {
                    op: "+".into(),
                    name: "y".into(),
                    section: vec![Expr::int(40)],
                },
            ],
        };
        assert_eq!(
            par.to_string(),
            "#pragma omp parallel for collapse(2) schedule(dynamic, 4) lastprivate(t, u) reduction(+:s) reduction(+:y[0:40])"
        );
        let simd = Directive::OmpSimd {
            simdlen: Some(8),
            lastprivate: vec![],
            reduction: vec![],
        };
        assert_eq!(simd.to_string(), "#pragma omp simd simdlen(8)");
        let simd_sum = Directive::OmpSimd {
            simdlen: None,
            lastprivate: vec![],
            reduction: vec![ReductionItem {
                op: "+".into(),
                name: "acc".into(),
                section: Vec::new(),
            }],
        };
        assert_eq!(simd_sum.to_string(), "#pragma omp simd reduction(+:acc)");
        let unroll = Directive::GccUnroll { factor: 4 };
        assert_eq!(unroll.to_string(), "#pragma GCC unroll 4");
        let other = Directive::Other {
            text: "#pragma omp ordered".into(),
        };
        assert!(other.is_openmp() && !other.is_parallel_for() && !unroll.is_openmp());
        for d in [par, simd, unroll, other] {
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(
                serde_json::from_str::<Directive>(&json).unwrap(),
                d,
                "{json}"
            );
        }
    }
}

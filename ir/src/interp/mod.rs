//! An interpreter of a nest's iteration space and memory access stream.
//!
//! Given the values of the integer parameters (and of the control-loop variables around
//! the nest), [`walk`] runs the loops of one nest in execution order without computing
//! any data: it reports every executed statement and, for each, the array elements it
//! reads and writes as linear offsets. [`NestInterp`] is the same thing compiled once,
//! for callers that walk several times or need per-statement execution counts without
//! generating the access stream ([`NestInterp::executions`]).
//!
//! Semantics and approximations:
//!
//! - Loop bounds, `if` conditions and subscripts are evaluated as `i64` over the
//!   environment and the loop variables: `+ - * / %` with C truncation, unary minus,
//!   `!`, comparisons, `&&`/`||`, ternaries (`min`/`max`), casts to integer types
//!   (truncating to the type's width). Unsigned wrap-around is not modelled; overflow of
//!   `i64` is an error.
//! - An `if` whose condition depends on data (array elements, floating-point values,
//!   scalars assigned inside the nest, calls) cannot be decided without running the
//!   program: **both branches are counted as executed** (then-branch first).
//! - Scalars are registers: only `Expr::Access` to arrays produces memory accesses.
//! - Per statement, accesses come in this order: for a compound assignment (`x += e`)
//!   the read of the target first, then the reads of the value left to right (preorder),
//!   then the write of the target. Syntactically identical reads within one statement
//!   are reported once (a compiler loads `A[i][j]` once for `A[i][j] * A[i][j]`), and
//!   both arms of a ternary are read.
//! - Scalar declarations with an initializer (`double s = 0.0;`) are executed as
//!   assignments `s = 0.0`; they are presented to `on_stmt` as synthetic [`Assign`]s
//!   whose ids follow the region's last statement id (in region preorder).
//! - Subscripts must be integer expressions of loop variables and parameters: a
//!   subscript that depends on array data or on an integer scalar assigned inside the
//!   nest is [`InterpError::Unsupported`]. Each subscript is checked against its
//!   dimension's extent ([`InterpError::OutOfBounds`]), which also catches parameter
//!   values larger than the arrays were declared for.

use crate::program::{
    walk_nodes, Assign, AssignOp, BinOp, DType, Decl, Expr, LoopCmp, Node, Program, UnOp,
};
use std::collections::{HashMap, HashSet};

mod compile;

/// Values of integer parameters and control-loop variables (`"ni" -> 60`, `"k" -> 3`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    pub ints: HashMap<String, i64>,
}

impl Env {
    pub fn new() -> Env {
        Env::default()
    }

    /// An environment from `(name, value)` pairs.
    pub fn from_pairs(pairs: &[(&str, i64)]) -> Env {
        Env {
            ints: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    /// Builder: this environment with `name = value`.
    pub fn with(mut self, name: &str, value: i64) -> Env {
        self.ints.insert(name.to_string(), value);
        self
    }
}

/// One memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access<'a> {
    pub array: &'a str,
    /// Index of the array in [`NestInterp::arrays`].
    pub array_id: usize,
    /// Linear element offset, row-major over the array's extents.
    pub offset: i64,
    pub write: bool,
    pub elem_bytes: u32,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every statement of the nest was executed.
    Done,
    /// The next statement would have exceeded the access limit.
    Limit,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    #[error("the program has no region {0}")]
    NoRegion(usize),
    #[error("region {region} has no loop {root}")]
    NoLoop { region: usize, root: usize },
    #[error("unknown variable '{0}' (give its value in the environment)")]
    UnknownVariable(String),
    #[error("unknown array '{0}'")]
    UnknownArray(String),
    #[error("{context}: '{expr}' is not an integer expression")]
    NotInteger { context: String, expr: String },
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("array '{array}': extent of dimension {dim} is unknown: {why}")]
    UnknownExtent {
        array: String,
        dim: usize,
        why: String,
    },
    #[error("{array}{indices:?} is out of bounds (extents {extents:?})")]
    OutOfBounds {
        array: String,
        indices: Vec<i64>,
        extents: Vec<i64>,
    },
    #[error("division by zero evaluating '{0}'")]
    DivisionByZero(String),
    #[error("integer overflow evaluating '{0}'")]
    Overflow(String),
}

/// An array a nest touches, with its evaluated shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayInfo {
    pub name: String,
    pub dtype: DType,
    pub extents: Vec<i64>,
    /// Product of the extents.
    pub elements: u64,
    pub elem_bytes: u32,
}

/// A statement of the nest as compiled: the assignment and its access counts per
/// execution.
#[derive(Debug, Clone, PartialEq)]
pub struct StmtInfo {
    /// The assignment (synthetic for a scalar declaration with an initializer).
    pub assign: Assign,
    /// Reads per execution (after merging identical reads).
    pub reads: u32,
    /// Writes per execution (0 or 1).
    pub writes: u32,
}

/// Walks the statements of loop `root` (a loop id of `program.regions[region]`) in
/// execution order, calling `on_stmt(assign)` per executed assignment and `on_access`
/// per memory access (see the module documentation for order and approximations).
/// Stops before the first statement whose accesses would exceed `limit` accesses in
/// total (`Stop::Limit`); statements are never cut in half.
pub fn walk(
    program: &Program,
    region: usize,
    root: usize,
    env: &Env,
    limit: u64,
    on_stmt: &mut dyn FnMut(&Assign),
    on_access: &mut dyn FnMut(Access),
) -> Result<Stop, InterpError> {
    let nest = NestInterp::new(program, region, root, env)?;
    nest.walk(limit, &mut |_, a| on_stmt(a), on_access)
}

// ---------------------------------------------------------------------------------
// Compiled form

/// Integer expression over slots (parameters and loop variables).
#[derive(Debug, Clone)]
enum IExpr {
    Const(i64),
    Slot(usize),
    Neg(Box<IExpr>),
    Not(Box<IExpr>),
    Bin(BinOp, Box<IExpr>, Box<IExpr>),
    Ternary(Box<IExpr>, Box<IExpr>, Box<IExpr>),
    Cast(DType, Box<IExpr>),
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    DivZero,
    Overflow,
}

impl IExpr {
    fn eval(&self, s: &[i64]) -> Result<i64, Fault> {
        Ok(match self {
            IExpr::Const(c) => *c,
            IExpr::Slot(i) => s[*i],
            IExpr::Neg(a) => a.eval(s)?.checked_neg().ok_or(Fault::Overflow)?,
            IExpr::Not(a) => (a.eval(s)? == 0) as i64,
            IExpr::Bin(op, a, b) => {
                let x = a.eval(s)?;
                match op {
                    BinOp::And => return Ok((x != 0 && b.eval(s)? != 0) as i64),
                    BinOp::Or => return Ok((x != 0 || b.eval(s)? != 0) as i64),
                    _ => {}
                }
                let y = b.eval(s)?;
                match op {
                    BinOp::Add => x.checked_add(y).ok_or(Fault::Overflow)?,
                    BinOp::Sub => x.checked_sub(y).ok_or(Fault::Overflow)?,
                    BinOp::Mul => x.checked_mul(y).ok_or(Fault::Overflow)?,
                    BinOp::Div | BinOp::Mod if y == 0 => return Err(Fault::DivZero),
                    // Rust's `/` and `%` truncate toward zero, as C does.
                    BinOp::Div => x.checked_div(y).ok_or(Fault::Overflow)?,
                    BinOp::Mod => x.checked_rem(y).ok_or(Fault::Overflow)?,
                    BinOp::Lt => (x < y) as i64,
                    BinOp::Le => (x <= y) as i64,
                    BinOp::Gt => (x > y) as i64,
                    BinOp::Ge => (x >= y) as i64,
                    BinOp::Eq => (x == y) as i64,
                    BinOp::Ne => (x != y) as i64,
                    BinOp::And | BinOp::Or => unreachable!("handled above"),
                }
            }
            IExpr::Ternary(c, t, o) => {
                if c.eval(s)? != 0 {
                    t.eval(s)?
                } else {
                    o.eval(s)?
                }
            }
            IExpr::Cast(t, a) => {
                let v = a.eval(s)?;
                match t {
                    DType::Char | DType::I8 => v as i8 as i64,
                    DType::U8 => v as u8 as i64,
                    DType::I16 => v as i16 as i64,
                    DType::U16 => v as u16 as i64,
                    DType::I32 => v as i32 as i64,
                    DType::U32 => v as u32 as i64,
                    DType::I64 | DType::U64 | DType::F32 | DType::F64 => v,
                }
            }
        })
    }

    fn mentions(&self, slot: usize) -> bool {
        match self {
            IExpr::Const(_) => false,
            IExpr::Slot(i) => *i == slot,
            IExpr::Neg(a) | IExpr::Not(a) | IExpr::Cast(_, a) => a.mentions(slot),
            IExpr::Bin(_, a, b) => a.mentions(slot) || b.mentions(slot),
            IExpr::Ternary(c, t, o) => c.mentions(slot) || t.mentions(slot) || o.mentions(slot),
        }
    }
}

/// One subscript: an affine fast path or a general integer expression.
#[derive(Debug, Clone)]
enum Index {
    Affine {
        terms: Vec<(usize, i64)>,
        constant: i64,
    },
    General(IExpr),
}

impl Index {
    #[inline]
    fn eval(&self, s: &[i64]) -> Result<i64, Fault> {
        match self {
            Index::Affine { terms, constant } => {
                let mut v = *constant;
                for &(slot, c) in terms {
                    v = s[slot]
                        .checked_mul(c)
                        .and_then(|p| v.checked_add(p))
                        .ok_or(Fault::Overflow)?;
                }
                Ok(v)
            }
            Index::General(e) => e.eval(s),
        }
    }
}

#[derive(Debug, Clone)]
struct CAccess<'p> {
    array: usize,
    write: bool,
    indices: Vec<Index>,
    source: &'p Expr,
}

#[derive(Debug, Clone)]
struct CStmt<'p> {
    info: StmtInfo,
    /// Reads first, then the write (if any).
    accesses: Vec<CAccess<'p>>,
}

#[derive(Debug, Clone)]
struct CLoop<'p> {
    slot: usize,
    init: IExpr,
    bound: IExpr,
    cmp: LoopCmp,
    step: i64,
    body: Vec<CNode<'p>>,
    /// No bound or condition inside the body depends on this loop's variable, so every
    /// iteration executes the same statements the same number of times.
    invariant: bool,
    source: &'p crate::program::Loop,
}

#[derive(Debug, Clone)]
enum CNode<'p> {
    Loop(CLoop<'p>),
    If {
        /// `None`: depends on data, both branches execute.
        cond: Option<IExpr>,
        source: &'p Expr,
        then_body: Vec<CNode<'p>>,
        else_body: Vec<CNode<'p>>,
    },
    Stmt(usize),
}

struct ArrayShape {
    info: ArrayInfo,
    strides: Vec<i64>,
}

/// A nest compiled for repeated interpretation under one environment.
pub struct NestInterp<'p> {
    root: CNode<'p>,
    stmts: Vec<CStmt<'p>>,
    arrays: Vec<ArrayShape>,
    init_slots: Vec<i64>,
}

/// Why an expression is not a static integer expression.
enum NotStatic {
    /// Floating-point values are involved.
    Float,
    /// Depends on data that is only known when the program runs.
    Dynamic(String),
    Error(InterpError),
}

struct Compiler<'p, 'e> {
    program: &'p Program,
    env: &'e Env,
    slots: HashMap<&'p str, usize>,
    init_slots: Vec<i64>,
    /// Loop variables of the nest.
    loop_vars: HashSet<&'p str>,
    /// Scalars assigned (or declared with an initializer) inside the nest.
    written: HashSet<&'p str>,
    arrays: Vec<ArrayShape>,
    array_ids: HashMap<&'p str, usize>,
    stmts: Vec<CStmt<'p>>,
    /// Synthetic statement ids of the region's initialized scalar declarations.
    decl_ids: Vec<(*const Decl, usize)>,
}

impl<'p> NestInterp<'p> {
    /// Compiles the nest rooted at loop `root` of region `region` under `env`.
    pub fn new(
        program: &'p Program,
        region: usize,
        root: usize,
        env: &Env,
    ) -> Result<NestInterp<'p>, InterpError> {
        let reg = program
            .regions
            .get(region)
            .ok_or(InterpError::NoRegion(region))?;
        let root_loop = crate::program::find_loop(&reg.body, root)
            .ok_or(InterpError::NoLoop { region, root })?;

        // Synthetic ids for initialized declarations: after the region's last statement.
        let mut max_id = 0usize;
        let mut decls = Vec::new();
        walk_nodes(&reg.body, &mut |n, _| match n {
            Node::Assign(a) => max_id = max_id.max(a.id),
            Node::Decl(d) if d.dims.is_empty() && d.init.is_some() => decls.push(d as *const _),
            _ => {}
        });
        let decl_ids = decls
            .into_iter()
            .enumerate()
            .map(|(k, d)| (d, max_id + 1 + k))
            .collect();

        let mut loop_vars = HashSet::new();
        let mut written = HashSet::new();
        loop_vars.insert(root_loop.var.as_str());
        walk_nodes(&root_loop.body, &mut |n, _| match n {
            Node::Loop(l) => {
                loop_vars.insert(l.var.as_str());
            }
            Node::Assign(a) => {
                if let Expr::Var(v) = &a.target {
                    written.insert(v.as_str());
                }
            }
            Node::Decl(d) if d.dims.is_empty() => {
                written.insert(d.name.as_str());
            }
            _ => {}
        });

        let mut c = Compiler {
            program,
            env,
            slots: HashMap::new(),
            init_slots: Vec::new(),
            loop_vars,
            written,
            arrays: Vec::new(),
            array_ids: HashMap::new(),
            stmts: Vec::new(),
            decl_ids,
        };
        let root = c.loop_node(root_loop)?;
        Ok(NestInterp {
            root,
            stmts: c.stmts,
            arrays: c.arrays,
            init_slots: c.init_slots,
        })
    }

    /// The arrays the nest touches; [`Access::array_id`] indexes this list.
    pub fn arrays(&self) -> Vec<ArrayInfo> {
        self.arrays.iter().map(|a| a.info.clone()).collect()
    }

    /// The nest's statements in preorder; the first argument of the internal
    /// `on_stmt` callbacks and the entries of [`NestInterp::executions`] index this list.
    pub fn statements(&self) -> Vec<StmtInfo> {
        self.stmts.iter().map(|s| s.info.clone()).collect()
    }

    /// Walks the nest (see [`walk`]); `on_stmt` also receives the statement's index in
    /// [`NestInterp::statements`].
    pub fn walk(
        &self,
        limit: u64,
        on_stmt: &mut dyn FnMut(usize, &Assign),
        on_access: &mut dyn FnMut(Access),
    ) -> Result<Stop, InterpError> {
        let mut st = WalkState {
            slots: self.init_slots.clone(),
            delivered: 0,
            limit,
            idx: Vec::with_capacity(8),
        };
        let done = self.run(
            std::slice::from_ref(&self.root),
            &mut st,
            on_stmt,
            on_access,
        )?;
        Ok(if done { Stop::Done } else { Stop::Limit })
    }

    /// How many times each statement executes, without generating accesses. Loops whose
    /// bodies do not depend on their variable are multiplied out instead of iterated, so
    /// rectangular nests cost nothing and triangular ones one level less than a walk.
    /// `None` when more than `work_limit` loop iterations had to be stepped through.
    pub fn executions(&self, work_limit: u64) -> Result<Option<Vec<u64>>, InterpError> {
        let mut counts = vec![0u64; self.stmts.len()];
        let mut slots = self.init_slots.clone();
        let mut work = 0u64;
        let ok = self.count(
            std::slice::from_ref(&self.root),
            1,
            &mut slots,
            &mut counts,
            &mut work,
            work_limit,
        )?;
        Ok(ok.then_some(counts))
    }

    /// Total accesses of a complete walk (`None` past `work_limit`, see
    /// [`NestInterp::executions`]).
    pub fn total_accesses(&self, work_limit: u64) -> Result<Option<u64>, InterpError> {
        let Some(ex) = self.executions(work_limit)? else {
            return Ok(None);
        };
        let mut total = 0u64;
        for (s, n) in self.stmts.iter().zip(ex) {
            total = total.saturating_add(n.saturating_mul(s.accesses.len() as u64));
        }
        Ok(Some(total))
    }

    fn eval_bound(&self, e: &IExpr, slots: &[i64], src: &Expr) -> Result<i64, InterpError> {
        e.eval(slots).map_err(|f| fault(f, src))
    }

    /// Trip count and the loop's first value.
    fn trips(&self, l: &CLoop<'p>, slots: &[i64]) -> Result<(i64, u64), InterpError> {
        let init = self.eval_bound(&l.init, slots, &l.source.init)?;
        let bound = self.eval_bound(&l.bound, slots, &l.source.bound)?;
        let (init128, bound128, step) = (init as i128, bound as i128, l.step as i128);
        let n: i128 = match l.cmp {
            LoopCmp::Lt if init128 < bound128 => (bound128 - init128 + step - 1) / step,
            LoopCmp::Le if init128 <= bound128 => (bound128 - init128) / step + 1,
            LoopCmp::Gt if init128 > bound128 => (init128 - bound128 - step - 1) / -step,
            LoopCmp::Ge if init128 >= bound128 => (init128 - bound128) / -step + 1,
            _ => 0,
        };
        // Steps that move away from the bound are refused by the frontend; guard anyway.
        let n = n.max(0);
        u64::try_from(n)
            .map(|n| (init, n))
            .map_err(|_| InterpError::Overflow(crate::print::loop_header(l.source, false)))
    }

    fn exit_value(l: &CLoop<'p>, init: i64, trips: u64) -> i64 {
        (init as i128 + trips as i128 * l.step as i128).clamp(i64::MIN as i128, i64::MAX as i128)
            as i64
    }

    fn run(
        &self,
        body: &[CNode<'p>],
        st: &mut WalkState,
        on_stmt: &mut dyn FnMut(usize, &Assign),
        on_access: &mut dyn FnMut(Access),
    ) -> Result<bool, InterpError> {
        for node in body {
            match node {
                CNode::Stmt(i) => {
                    let s = &self.stmts[*i];
                    let n = s.accesses.len() as u64;
                    if st.delivered.saturating_add(n) > st.limit {
                        return Ok(false);
                    }
                    on_stmt(*i, &s.info.assign);
                    for a in &s.accesses {
                        let offset = self.offset(a, &st.slots, &mut st.idx)?;
                        let shape = &self.arrays[a.array];
                        on_access(Access {
                            array: &shape.info.name,
                            array_id: a.array,
                            offset,
                            write: a.write,
                            elem_bytes: shape.info.elem_bytes,
                        });
                    }
                    st.delivered += n;
                }
                CNode::If {
                    cond,
                    source,
                    then_body,
                    else_body,
                } => match cond {
                    Some(c) => {
                        let taken = c.eval(&st.slots).map_err(|f| fault(f, source))? != 0;
                        let b = if taken { then_body } else { else_body };
                        if !self.run(b, st, on_stmt, on_access)? {
                            return Ok(false);
                        }
                    }
                    None => {
                        if !self.run(then_body, st, on_stmt, on_access)?
                            || !self.run(else_body, st, on_stmt, on_access)?
                        {
                            return Ok(false);
                        }
                    }
                },
                CNode::Loop(l) => {
                    let (init, trips) = self.trips(l, &st.slots)?;
                    let mut v = init;
                    for _ in 0..trips {
                        st.slots[l.slot] = v;
                        if !self.run(&l.body, st, on_stmt, on_access)? {
                            return Ok(false);
                        }
                        v = v.wrapping_add(l.step);
                    }
                    st.slots[l.slot] = Self::exit_value(l, init, trips);
                }
            }
        }
        Ok(true)
    }

    #[inline]
    fn offset(
        &self,
        a: &CAccess<'p>,
        slots: &[i64],
        idx: &mut Vec<i64>,
    ) -> Result<i64, InterpError> {
        let shape = &self.arrays[a.array];
        let mut off = 0i64;
        let mut oob = false;
        for (d, ix) in a.indices.iter().enumerate() {
            let v = ix.eval(slots).map_err(|f| fault(f, a.source))?;
            if v < 0 || v >= shape.info.extents[d] {
                oob = true;
            }
            // In bounds, offsets are below `elements`, which fits in i64.
            off = off.wrapping_add(v.wrapping_mul(shape.strides[d]));
        }
        if oob {
            idx.clear();
            for ix in &a.indices {
                idx.push(ix.eval(slots).unwrap_or(i64::MIN));
            }
            return Err(InterpError::OutOfBounds {
                array: shape.info.name.clone(),
                indices: idx.clone(),
                extents: shape.info.extents.clone(),
            });
        }
        Ok(off)
    }

    fn count(
        &self,
        body: &[CNode<'p>],
        mult: u64,
        slots: &mut Vec<i64>,
        counts: &mut [u64],
        work: &mut u64,
        work_limit: u64,
    ) -> Result<bool, InterpError> {
        for node in body {
            match node {
                CNode::Stmt(i) => {
                    counts[*i] = counts[*i].checked_add(mult).ok_or_else(|| {
                        InterpError::Overflow(crate::print::assign(&self.stmts[*i].info.assign))
                    })?;
                }
                CNode::If {
                    cond,
                    source,
                    then_body,
                    else_body,
                } => match cond {
                    Some(c) => {
                        let taken = c.eval(slots).map_err(|f| fault(f, source))? != 0;
                        let b = if taken { then_body } else { else_body };
                        if !self.count(b, mult, slots, counts, work, work_limit)? {
                            return Ok(false);
                        }
                    }
                    None => {
                        if !self.count(then_body, mult, slots, counts, work, work_limit)?
                            || !self.count(else_body, mult, slots, counts, work, work_limit)?
                        {
                            return Ok(false);
                        }
                    }
                },
                CNode::Loop(l) => {
                    let (init, trips) = self.trips(l, slots)?;
                    if trips > 0 && l.invariant {
                        *work += 1;
                        slots[l.slot] = init;
                        let m = mult.checked_mul(trips).ok_or_else(|| {
                            InterpError::Overflow(crate::print::loop_header(l.source, false))
                        })?;
                        if !self.count(&l.body, m, slots, counts, work, work_limit)? {
                            return Ok(false);
                        }
                    } else {
                        let mut v = init;
                        for _ in 0..trips {
                            *work += 1;
                            if *work > work_limit {
                                return Ok(false);
                            }
                            slots[l.slot] = v;
                            if !self.count(&l.body, mult, slots, counts, work, work_limit)? {
                                return Ok(false);
                            }
                            v = v.wrapping_add(l.step);
                        }
                    }
                    slots[l.slot] = Self::exit_value(l, init, trips);
                }
            }
        }
        Ok(true)
    }
}

struct WalkState {
    slots: Vec<i64>,
    delivered: u64,
    limit: u64,
    idx: Vec<i64>,
}

fn fault(f: Fault, src: &Expr) -> InterpError {
    let text = crate::print::expr(src);
    match f {
        Fault::DivZero => InterpError::DivisionByZero(text),
        Fault::Overflow => InterpError::Overflow(text),
    }
}

fn body_mentions(body: &[CNode<'_>], slot: usize) -> bool {
    body.iter().any(|n| match n {
        CNode::Stmt(_) => false,
        CNode::If {
            cond,
            then_body,
            else_body,
            ..
        } => {
            cond.as_ref().is_some_and(|c| c.mentions(slot))
                || body_mentions(then_body, slot)
                || body_mentions(else_body, slot)
        }
        CNode::Loop(l) => {
            l.init.mentions(slot) || l.bound.mentions(slot) || body_mentions(&l.body, slot)
        }
    })
}

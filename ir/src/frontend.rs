//! The C frontend: preprocess with the system compiler, parse with `lang-c`, find the
//! `#pragma scop` regions (or one whole function), and lower them to the IR.
//!
//! Anything outside the supported subset is refused with `file:line:col: unsupported
//! <what>`; the frontend never panics on user input.

use crate::error::{Error, Location, Result};
use crate::program::const_value;
use crate::program::{
    walk_nodes, Array, Assign, AssignOp, BinOp, DType, Decl, Expr, If, Loop, LoopCmp, LoopKind,
    Node, Pos, Program, Region, Scalar, ScalarOrigin, UnOp,
};
use crate::source::{pragma_lines, preprocess, Preprocessed};
use lang_c::ast::{
    ArraySize, BinaryOperator, BlockItem, Constant, Declaration, DeclarationSpecifier, Declarator,
    DeclaratorKind, DerivedDeclarator, Expression, ExternalDeclaration, ForInitializer,
    FunctionDefinition, Initializer, SpecifierQualifier, Statement, StorageClassSpecifier,
    TypeSpecifier, UnaryOperator,
};
use lang_c::driver::{Config, Flavor};
use lang_c::span::{Node as CNode, Span};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// Math functions a region may call (and their `float` variants).
pub const MATH_FUNCTIONS: &[&str] = &[
    "sqrt", "exp", "log", "pow", "fabs", "fmin", "fmax", "floor", "ceil", "sqrtf", "expf", "logf",
    "powf", "fabsf", "fminf", "fmaxf", "floorf", "ceilf",
];

/// How to run the preprocessor and which region to take.
#[derive(Debug, Clone)]
pub struct FrontendOptions {
    /// The C compiler driver (`$CC`, default `cc`).
    pub cc: String,
    /// Preprocessor-relevant flags: `-I`, `-D`, `-U`, `-std`, ...
    pub flags: Vec<String>,
    /// Tune the whole body of this function instead of `#pragma scop` regions.
    pub function: Option<String>,
}

impl Default for FrontendOptions {
    fn default() -> Self {
        FrontendOptions {
            cc: std::env::var("CC").unwrap_or_else(|_| "cc".to_string()),
            flags: Vec::new(),
            function: None,
        }
    }
}

/// Where a region sits in the preprocessed text, for splicing generated code back in.
#[derive(Debug, Clone)]
pub struct RegionText {
    /// Byte range replaced by the generated region.
    pub replace: Range<usize>,
    /// Location of the text right after `replace` (for a line marker).
    pub resume: Location,
    /// Start of the line where the enclosing function's definition begins.
    pub function_start: usize,
    pub function_loc: Location,
}

/// A parsed program: the IR plus the preprocessed text it came from.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub program: Program,
    pub source: Preprocessed,
    pub regions: Vec<RegionText>,
}

/// Preprocesses and parses `file`, then lowers its regions.
pub fn parse_file(file: &str, opts: &FrontendOptions) -> Result<Parsed> {
    let pp = preprocess(&opts.cc, file, &opts.flags)?;
    parse_preprocessed(pp, opts.function.as_deref())
}

/// Parses an already preprocessed translation unit.
pub fn parse_preprocessed(pp: Preprocessed, function: Option<&str>) -> Result<Parsed> {
    let config = Config {
        cpp_command: String::new(),
        cpp_options: Vec::new(),
        flavor: Flavor::GnuC11,
    };
    let parse = match lang_c::driver::parse_preprocessed(&config, pp.text.clone()) {
        Ok(p) => p,
        Err(e) => {
            let rest = &pp.text[e.offset.min(pp.text.len())..];
            let ident = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .count();
            let token: String = match rest.chars().next() {
                None => String::new(),
                Some(_) if ident > 0 => rest.chars().take(ident).collect(),
                Some(c) => c.to_string(),
            };
            let message = if token.is_empty() {
                "unexpected end of input".to_string()
            } else {
                format!("unexpected '{token}'")
            };
            return Err(Error::Syntax {
                at: pp.location(e.offset),
                message,
            });
        }
    };
    let unit = parse.unit;
    let mut globals = Symbols::default();
    for ext in &unit.0 {
        if let ExternalDeclaration::Declaration(d) = &ext.node {
            globals.declare(&d.node, &pp);
        }
    }
    let functions: Vec<&CNode<FunctionDefinition>> = unit
        .0
        .iter()
        .filter_map(|e| match &e.node {
            ExternalDeclaration::FunctionDefinition(f) => Some(f),
            _ => None,
        })
        .collect();

    let mut found: Vec<FoundRegion> = Vec::new();
    if let Some(name) = function {
        let f = functions
            .iter()
            .find(|f| declarator_name(&f.node.declarator.node).as_deref() == Some(name))
            .ok_or_else(|| Error::NoRegion {
                file: pp.file.clone(),
                message: format!("no function named '{name}' is defined"),
            })?;
        let items = match &f.node.statement.node {
            Statement::Compound(items) => items,
            _ => unreachable!("a function body is a compound statement"),
        };
        let body = f.node.statement.span;
        found.push(FoundRegion {
            function: f,
            items: items.iter().collect(),
            decls: Vec::new(),
            replace: body.start + 1..body.end - 1,
            start: body.start,
            end: body.end,
        });
    } else {
        let scops = pragma_lines(&pp.text, "scop");
        let ends = pragma_lines(&pp.text, "endscop");
        if scops.is_empty() {
            return Err(Error::NoRegion {
                file: pp.file.clone(),
                message: "no '#pragma scop' region found (mark the loops to tune with \
                          #pragma scop / #pragma endscop, or name a function with --function)"
                    .to_string(),
            });
        }
        for (k, &lo) in scops.iter().enumerate() {
            let next_scop = scops.get(k + 1).copied().unwrap_or(usize::MAX);
            let hi = ends
                .iter()
                .copied()
                .find(|&e| e > lo && e < next_scop)
                .ok_or_else(|| Error::Invalid {
                    at: pp.location(lo),
                    message: "'#pragma scop' without a matching '#pragma endscop'".to_string(),
                })?;
            let f = functions
                .iter()
                .find(|f| f.span.start <= lo && hi < f.span.end)
                .ok_or_else(|| Error::Invalid {
                    at: pp.location(lo),
                    message: "'#pragma scop' region is not inside one function body".to_string(),
                })?;
            let mut decls = Vec::new();
            let items =
                locate_region(&f.node.statement, lo, hi, &mut decls, &pp)?.ok_or_else(|| {
                    Error::Invalid {
                        at: pp.location(lo),
                        message: "'#pragma scop' region is not inside one block".to_string(),
                    }
                })?;
            found.push(FoundRegion {
                function: f,
                items,
                decls,
                replace: pp.line_start(lo)..pp.line_end(hi),
                start: lo,
                end: hi,
            });
        }
    }

    let name = std::path::Path::new(&pp.file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    let mut lower = Lowerer {
        pp: &pp,
        external: HashMap::new(),
        scopes: Vec::new(),
        loop_vars: Vec::new(),
        done_loop_vars: Vec::new(),
        arrays: BTreeMap::new(),
        scalars: BTreeMap::new(),
        next_loop: 0,
        next_stmt: 0,
    };
    let mut regions = Vec::new();
    let mut texts = Vec::new();
    for (index, r) in found.iter().enumerate() {
        let fdef = &r.function.node;
        let mut external = globals.clone();
        if let Some(params) = function_params(&fdef.declarator.node) {
            for p in params {
                if let Some(d) = &p.node.declarator {
                    let base = base_type(&p.node.specifiers, &external);
                    let (name, sym) = declarator_sym(&d.node, base, true, &pp);
                    if let Some(name) = name {
                        external.vars.insert(name, sym);
                    }
                }
            }
        }
        for d in &r.decls {
            external.declare(d, &pp);
        }
        lower.external = external.vars;
        lower.scopes.clear();
        lower.loop_vars.clear();
        lower.done_loop_vars.clear();
        lower.next_loop = 0;
        lower.next_stmt = 0;
        let mut body = Vec::new();
        lower.scopes.push(HashMap::new());
        for item in &r.items {
            body.extend(lower.block_item(item)?);
        }
        lower.scopes.pop();
        let start = pp.location(r.start);
        let end = pp.location(r.end);
        regions.push(Region {
            index,
            function: declarator_name(&fdef.declarator.node).unwrap_or_default(),
            start: Pos {
                line: start.line,
                col: start.col,
            },
            end: Pos {
                line: end.line,
                col: end.col,
            },
            body,
        });
        let fstart = pp.line_start(r.function.span.start);
        texts.push(RegionText {
            replace: r.replace.clone(),
            resume: pp.location(r.replace.end),
            function_start: fstart,
            function_loc: pp.location(fstart),
        });
    }

    let mut scalars: Vec<Scalar> = lower.scalars.into_values().collect();
    for s in &mut scalars {
        for region in &regions {
            let (r, w) = scalar_use(&region.body, &s.name);
            s.read |= r;
            s.written |= w;
        }
    }
    let program = Program {
        name,
        file: pp.file.clone(),
        arrays: lower.arrays.into_values().collect(),
        scalars,
        regions,
    };
    Ok(Parsed {
        program,
        source: pp,
        regions: texts,
    })
}

/// Whether a scalar is read / written in a body.
fn scalar_use(body: &[Node], name: &str) -> (bool, bool) {
    let (mut read, mut written) = (false, false);
    walk_nodes(body, &mut |n, _| match n {
        Node::Assign(a) => {
            if matches!(&a.target, Expr::Var(v) if v == name) {
                written = true;
                read |= a.op != AssignOp::Set;
            } else {
                read |= a.target.mentions(name);
            }
            read |= a.value.mentions(name);
        }
        Node::Loop(l) => read |= l.init.mentions(name) || l.bound.mentions(name),
        Node::If(i) => read |= i.cond.mentions(name),
        Node::Decl(d) => {
            written |= d.name == name && d.init.is_some();
            read |= d.init.as_ref().is_some_and(|e| e.mentions(name))
                || d.dims.iter().any(|e| e.mentions(name));
        }
        Node::Block(_) => {}
    });
    (read, written)
}

struct FoundRegion<'a> {
    function: &'a CNode<FunctionDefinition>,
    items: Vec<&'a CNode<BlockItem>>,
    decls: Vec<&'a Declaration>,
    replace: Range<usize>,
    start: usize,
    end: usize,
}

/// Finds the block items between offsets `lo` and `hi` (the pragma lines), collecting the
/// declarations visible at that point.
fn locate_region<'a>(
    stmt: &'a CNode<Statement>,
    lo: usize,
    hi: usize,
    decls: &mut Vec<&'a Declaration>,
    pp: &Preprocessed,
) -> Result<Option<Vec<&'a CNode<BlockItem>>>> {
    let contains = |s: Span| s.start <= lo && hi < s.end;
    if !contains(stmt.span) {
        return Ok(None);
    }
    // Spans may run over trailing blank and directive lines (a brace-less `if` looks
    // for an `else` past them), so compare the markers with the last real token.
    let end = |s: Span| token_end(&pp.text, s);
    match &stmt.node {
        Statement::Compound(items) => {
            for item in items {
                if item.span.start <= lo && hi < end(item.span) {
                    return match &item.node {
                        BlockItem::Statement(s) => locate_region(s, lo, hi, decls, pp),
                        _ => Ok(None),
                    };
                }
                let straddles = (item.span.start < lo && lo < end(item.span))
                    || (item.span.start < hi && hi < end(item.span));
                if straddles {
                    return Err(Error::Invalid {
                        at: pp.location(item.span.start),
                        message: "a statement crosses the '#pragma scop' region boundary"
                            .to_string(),
                    });
                }
            }
            for item in items {
                if end(item.span) <= lo {
                    if let BlockItem::Declaration(d) = &item.node {
                        decls.push(&d.node);
                    }
                }
            }
            Ok(Some(
                items
                    .iter()
                    .filter(|i| i.span.start > lo && end(i.span) <= hi)
                    .collect(),
            ))
        }
        Statement::For(f) => {
            if let ForInitializer::Declaration(d) = &f.node.initializer.node {
                decls.push(&d.node);
            }
            locate_region(&f.node.statement, lo, hi, decls, pp)
        }
        Statement::If(i) => {
            if let Some(r) = locate_region(&i.node.then_statement, lo, hi, decls, pp)? {
                return Ok(Some(r));
            }
            match &i.node.else_statement {
                Some(e) => locate_region(e, lo, hi, decls, pp),
                None => Ok(None),
            }
        }
        Statement::While(w) => locate_region(&w.node.statement, lo, hi, decls, pp),
        Statement::DoWhile(w) => locate_region(&w.node.statement, lo, hi, decls, pp),
        Statement::Labeled(l) => locate_region(&l.node.statement, lo, hi, decls, pp),
        _ => Ok(None),
    }
}

/// End of the last token of `span`: trailing whitespace and preprocessor lines dropped.
fn token_end(text: &str, span: Span) -> usize {
    let mut end = span.end.min(text.len());
    loop {
        let trimmed = text[span.start..end].trim_end();
        end = span.start + trimmed.len();
        let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1).max(span.start);
        if line_start > span.start && text[line_start..end].trim_start().starts_with('#') {
            end = line_start;
        } else {
            return end;
        }
    }
}

/// What a name declared outside (or inside) the region is.
#[derive(Debug, Clone)]
enum Sym {
    Scalar(DType),
    Array {
        dtype: DType,
        dims: Vec<Expr>,
    },
    /// Pointer or array of unknown extent.
    Pointer,
    Function,
    Other(String),
}

#[derive(Debug, Clone)]
enum Base {
    D(DType),
    Other(String),
}

#[derive(Debug, Clone, Default)]
struct Symbols {
    vars: HashMap<String, Sym>,
    typedefs: HashMap<String, Base>,
}

impl Symbols {
    fn declare(&mut self, d: &Declaration, pp: &Preprocessed) {
        let is_typedef = d.specifiers.iter().any(|s| {
            matches!(&s.node, DeclarationSpecifier::StorageClass(c)
                if c.node == StorageClassSpecifier::Typedef)
        });
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

fn base_type(specs: &[CNode<DeclarationSpecifier>], syms: &Symbols) -> Base {
    let ts: Vec<&TypeSpecifier> = specs
        .iter()
        .filter_map(|s| match &s.node {
            DeclarationSpecifier::TypeSpecifier(t) => Some(&t.node),
            _ => None,
        })
        .collect();
    base_of_specifiers(&ts, syms)
}

fn base_of_specifiers(ts: &[&TypeSpecifier], syms: &Symbols) -> Base {
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

fn declarator_name(d: &Declarator) -> Option<String> {
    match &d.kind.node {
        DeclaratorKind::Identifier(id) => Some(id.node.name.clone()),
        DeclaratorKind::Declarator(inner) => declarator_name(&inner.node),
        DeclaratorKind::Abstract => None,
    }
}

fn function_params(d: &Declarator) -> Option<&Vec<CNode<lang_c::ast::ParameterDeclaration>>> {
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
fn declarator_sym(
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
    for der in &d.derived {
        match &der.node {
            DerivedDeclarator::Pointer(_) => return (name, Sym::Pointer),
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
                ArraySize::Unknown | ArraySize::VariableUnknown => return (name, Sym::Pointer),
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
fn dim_expr(e: &CNode<Expression>, pp: &Preprocessed) -> Option<Expr> {
    Some(match &e.node {
        Expression::Identifier(id) => Expr::Var(id.node.name.clone()),
        Expression::Constant(c) => match &c.node {
            Constant::Integer(_) => {
                let text = &pp.text[c.span.start..c.span.end];
                Expr::Int {
                    value: parse_int(text)?,
                    text: text.to_string(),
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

fn parse_int(text: &str) -> Option<i64> {
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

fn parse_char(text: &str) -> Option<i64> {
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

struct Lowerer<'a> {
    pp: &'a Preprocessed,
    external: HashMap<String, Sym>,
    scopes: Vec<HashMap<String, Sym>>,
    loop_vars: Vec<(String, DType)>,
    done_loop_vars: Vec<String>,
    arrays: BTreeMap<String, Array>,
    scalars: BTreeMap<String, Scalar>,
    next_loop: usize,
    next_stmt: usize,
}

enum Resolved {
    LoopVar,
    Local(Sym),
    External(Sym),
}

impl<'a> Lowerer<'a> {
    fn pos(&self, span: Span) -> Pos {
        let l = self.pp.location(span.start);
        Pos {
            line: l.line,
            col: l.col,
        }
    }

    fn unsupported<T>(&self, span: Span, what: impl Into<String>) -> Result<T> {
        Err(Error::Unsupported {
            at: self.pp.location(span.start),
            what: what.into(),
        })
    }

    fn invalid<T>(&self, span: Span, message: impl Into<String>) -> Result<T> {
        Err(Error::Invalid {
            at: self.pp.location(span.start),
            message: message.into(),
        })
    }

    fn text(&self, span: Span) -> &str {
        &self.pp.text[span.start..span.end]
    }

    fn resolve(&self, name: &str) -> Option<Resolved> {
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

    fn block_item(&mut self, item: &CNode<BlockItem>) -> Result<Vec<Node>> {
        match &item.node {
            BlockItem::Declaration(d) => self.declaration(&d.node, d.span),
            BlockItem::StaticAssert(_) => Ok(Vec::new()),
            BlockItem::Statement(s) => self.statement(s),
        }
    }

    fn declaration(&mut self, d: &Declaration, span: Span) -> Result<Vec<Node>> {
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
        let syms = Symbols {
            vars: HashMap::new(),
            typedefs: HashMap::new(),
        };
        let base = base_type(&d.specifiers, &syms);
        let mut out = Vec::new();
        for init in &d.declarators {
            let (name, sym) =
                declarator_sym(&init.node.declarator.node, base.clone(), false, self.pp);
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
                    self.scalars.entry(name.clone()).or_insert(Scalar {
                        name: name.clone(),
                        dtype,
                        origin: ScalarOrigin::Local,
                        written: false,
                        read: false,
                    });
                    self.scopes
                        .last_mut()
                        .expect("scope")
                        .insert(name.clone(), Sym::Scalar(dtype));
                    out.push(Node::Decl(Decl {
                        name,
                        dtype,
                        dims: Vec::new(),
                        init: init_expr,
                        pos,
                    }));
                }
                Sym::Array { dtype, dims } => {
                    if init.node.initializer.is_some() {
                        return self.unsupported(init.span, "initialized local array");
                    }
                    for dim in &dims {
                        self.check_dim(dim, init.span)?;
                    }
                    let extents = dims.iter().map(const_value).collect();
                    self.arrays.insert(
                        name.clone(),
                        Array {
                            name: name.clone(),
                            dtype,
                            dims: dims.clone(),
                            extents,
                            local: true,
                        },
                    );
                    self.scopes.last_mut().expect("scope").insert(
                        name.clone(),
                        Sym::Array {
                            dtype,
                            dims: dims.clone(),
                        },
                    );
                    out.push(Node::Decl(Decl {
                        name,
                        dtype,
                        dims,
                        init: None,
                        pos,
                    }));
                }
                Sym::Pointer => {
                    return self.unsupported(init.span, format!("pointer declaration '{name}'"))
                }
                Sym::Function => {
                    return self.unsupported(init.span, format!("function declaration '{name}'"))
                }
                Sym::Other(what) => {
                    return self.unsupported(span, format!("{what} in declaration of '{name}'"))
                }
            }
        }
        Ok(out)
    }

    /// Array extents inside the region may only use names visible outside it.
    fn check_dim(&self, dim: &Expr, span: Span) -> Result<()> {
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

    fn statement(&mut self, s: &CNode<Statement>) -> Result<Vec<Node>> {
        match &s.node {
            Statement::Compound(items) => {
                self.scopes.push(HashMap::new());
                let mut out = Vec::new();
                for item in items {
                    out.extend(self.block_item(item)?);
                }
                self.scopes.pop();
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
            Statement::For(f) => Ok(vec![Node::Loop(self.for_loop(&f.node, s.span)?)]),
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
            Statement::While(_) => self.unsupported(s.span, "while loop"),
            Statement::DoWhile(_) => self.unsupported(s.span, "do-while loop"),
            Statement::Switch(_) => self.unsupported(s.span, "switch statement"),
            Statement::Goto(_) => self.unsupported(s.span, "goto"),
            Statement::Labeled(_) => self.unsupported(s.span, "labeled statement"),
            Statement::Continue => self.unsupported(s.span, "continue"),
            Statement::Break => self.unsupported(s.span, "break"),
            Statement::Return(_) => self.unsupported(s.span, "return"),
            Statement::Asm(_) => self.unsupported(s.span, "inline assembly"),
        }
    }

    /// A sub-statement with its own scope, as a list of nodes.
    fn scoped(&mut self, s: &CNode<Statement>) -> Result<Vec<Node>> {
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

    fn for_loop(&mut self, f: &lang_c::ast::ForStatement, span: Span) -> Result<Loop> {
        let pos = self.pos(span);
        let id = self.next_loop;
        self.next_loop += 1;
        let (var, var_dtype, declares_var, init) = match &f.initializer.node {
            ForInitializer::Declaration(d) => {
                let syms = Symbols::default();
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
            pragmas: Vec::new(),
        })
    }

    fn loop_step(&mut self, e: &CNode<Expression>, var: &str) -> Result<i64> {
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

    fn expr_const(&self, e: &CNode<Expression>) -> Option<i64> {
        dim_expr(e, self.pp).as_ref().and_then(const_value)
    }

    /// `a = b = e` becomes `b = e; a = b;` (plain assignments only).
    fn assignment_chain(&mut self, e: &CNode<Expression>, out: &mut Vec<Assign>) -> Result<()> {
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

    fn assignment(&mut self, e: &CNode<Expression>) -> Result<Assign> {
        let pos = self.pos(e.span);
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

    fn lvalue(&mut self, target_e: &CNode<Expression>) -> Result<Expr> {
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

    fn note_external_scalar(&mut self, name: &str, dtype: DType) {
        self.scalars.entry(name.to_string()).or_insert(Scalar {
            name: name.to_string(),
            dtype,
            origin: ScalarOrigin::External,
            written: false,
            read: false,
        });
    }

    fn access(&mut self, e: &CNode<Expression>) -> Result<Expr> {
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
            Some(Resolved::External(Sym::Array { dtype, dims })) => (dtype, dims, false),
            Some(Resolved::Local(Sym::Array { dtype, dims })) => (dtype, dims, true),
            Some(Resolved::External(Sym::Pointer) | Resolved::Local(Sym::Pointer)) => {
                return self.unsupported(cur.span, format!("subscript of pointer '{name}' (declare it as an array with its extents, e.g. double {name}[N])"))
            }
            Some(Resolved::External(Sym::Other(what))) => {
                return self.unsupported(cur.span, format!("{what} of array '{name}'"))
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
        Ok(Expr::Access {
            array: name,
            indices,
        })
    }

    fn expr(&mut self, e: &CNode<Expression>) -> Result<Expr> {
        match &e.node {
            Expression::Identifier(id) => {
                let name = &id.node.name;
                match self.resolve(name) {
                    Some(Resolved::LoopVar) => Ok(Expr::Var(name.clone())),
                    Some(Resolved::Local(Sym::Scalar(_))) => Ok(Expr::Var(name.clone())),
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
                        | Resolved::External(Sym::Pointer)
                        | Resolved::Local(Sym::Pointer),
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
                        Some(value) => Ok(Expr::Int { value, text }),
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
                        Some(value) => Ok(Expr::Int { value, text }),
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
                if !MATH_FUNCTIONS.contains(&name.as_str()) {
                    return self.unsupported(e.span, format!("call to '{name}' (only sqrt exp log pow fabs fmin fmax floor ceil and their f variants)"));
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

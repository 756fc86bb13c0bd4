//! Printing the IR back to C. The printer keeps every expression tree as it is
//! (parentheses only where precedence needs them) and every literal as it was spelled,
//! so the printed code computes exactly what the source computed.

use crate::program::{Assign, Decl, Expr, Loop, Node, Region, UnOp};
use std::fmt::Write;

/// How loops are printed.
pub struct PrintOptions<'a> {
    /// Print `for (int i = ...)` for every loop, instead of as in the source.
    pub declare_loop_vars: bool,
    /// Extra lines (e.g. `#pragma omp ...`) to put before a loop.
    pub loop_prefix: &'a dyn Fn(&Loop) -> Option<String>,
    /// Append `/* parallel */`-style verdict comments to loop headers.
    pub annotate: bool,
    /// C89: a loop that declares its variable is printed in a block of its own that
    /// declares it first (`{ int j; for (j = 0; ...) ... }`), never `for (int j ...`.
    pub c89: bool,
    /// An access as the printed code spells it, where that differs from the program's
    /// ([`crate::flat::user_access`]: a pointer read as an array, indexed with one
    /// subscript; an array by the name the user's function gives it). For a band that
    /// a step prints itself and that [`crate::flat::linearize`] and
    /// [`crate::flat::source_names`] leave as the analysis reads it: a register tile
    /// reads its band's shape from the rows, then prints each access through this.
    pub access: &'a dyn Fn(&Expr) -> Option<Expr>,
}

impl Default for PrintOptions<'_> {
    fn default() -> Self {
        PrintOptions {
            declare_loop_vars: false,
            loop_prefix: &|_| None,
            annotate: false,
            c89: false,
            access: &|_| None,
        }
    }
}

const INDENT: &str = "  ";

fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Int { .. }
        | Expr::Float { .. }
        | Expr::Var(_)
        | Expr::Access { .. }
        | Expr::Call { .. } => 16,
        Expr::Unary { .. } | Expr::Cast { .. } => 15,
        Expr::Binary { op, .. } => op.precedence(),
        Expr::Ternary { .. } => 3,
    }
}

/// Prints an expression as C.
pub fn expr(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(e, &mut s);
    s
}

fn write_child(e: &Expr, parens: bool, out: &mut String) {
    if parens {
        out.push('(');
        write_expr(e, out);
        out.push(')');
    } else {
        write_expr(e, out);
    }
}

fn write_expr(e: &Expr, out: &mut String) {
    match e {
        Expr::Int { text, .. } | Expr::Float { text, .. } => out.push_str(text),
        Expr::Var(v) => out.push_str(v),
        Expr::Access { array, indices } => {
            out.push_str(array);
            for i in indices {
                out.push('[');
                write_expr(i, out);
                out.push(']');
            }
        }
        Expr::Call { func, args } => {
            out.push_str(func);
            out.push('(');
            for (k, a) in args.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_expr(a, out);
            }
            out.push(')');
        }
        Expr::Unary { op, arg } => {
            out.push_str(match op {
                UnOp::Neg => "-",
                UnOp::Plus => "+",
                UnOp::Not => "!",
            });
            let parens = precedence(arg) < 15 || matches!(**arg, Expr::Unary { .. });
            write_child(arg, parens, out);
        }
        Expr::Cast { dtype, arg } => {
            let _ = write!(out, "({})", dtype.c_name());
            write_child(arg, precedence(arg) < 15, out);
        }
        Expr::Binary { op, lhs, rhs } => {
            let p = op.precedence();
            write_child(lhs, precedence(lhs) < p, out);
            let _ = write!(out, " {} ", op.c_op());
            write_child(rhs, precedence(rhs) <= p, out);
        }
        Expr::Ternary { cond, then, other } => {
            write_child(cond, precedence(cond) <= 3, out);
            out.push_str(" ? ");
            write_expr(then, out);
            out.push_str(" : ");
            write_child(other, precedence(other) < 3, out);
        }
    }
}

/// `for (i = 0; i < n; i++)`, or with `int i = 0` when `declare` is set.
pub fn loop_header(l: &Loop, declare: bool) -> String {
    let step = match l.step {
        1 => format!("{}++", l.var),
        -1 => format!("{}--", l.var),
        s if s > 0 => format!("{} += {}", l.var, s),
        s => format!("{} -= {}", l.var, -s),
    };
    let init = if declare {
        format!("{} {} = {}", l.var_dtype.c_name(), l.var, expr(&l.init))
    } else {
        format!("{} = {}", l.var, expr(&l.init))
    };
    // Comparisons bind tighter than `?:`, `&&`, `||` and other comparisons.
    let bound = if precedence(&l.bound) <= 10 {
        format!("({})", expr(&l.bound))
    } else {
        expr(&l.bound)
    };
    format!("for ({init}; {} {} {bound}; {step})", l.var, l.cmp.c_op())
}

pub fn assign(a: &Assign) -> String {
    format!("{} {} {};", expr(&a.target), a.op.c_op(), expr(&a.value))
}

pub fn decl(d: &Decl) -> String {
    let mut s = format!("{} {}", d.dtype.c_name(), d.name);
    for dim in &d.dims {
        let _ = write!(s, "[{}]", expr(dim));
    }
    if let Some(init) = &d.init {
        let _ = write!(s, " = {}", expr(init));
    }
    s.push(';');
    s
}

fn pad(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str(INDENT);
    }
}

/// Prints a list of nodes at indentation `depth`.
pub fn body(nodes: &[Node], opts: &PrintOptions, depth: usize, out: &mut String) {
    for n in nodes {
        node(n, opts, depth, out);
    }
}

pub fn node(n: &Node, opts: &PrintOptions, depth: usize, out: &mut String) {
    match n {
        Node::Assign(a) => {
            pad(out, depth);
            out.push_str(&assign(a));
            out.push('\n');
        }
        Node::Decl(d) => {
            pad(out, depth);
            out.push_str(&decl(d));
            out.push('\n');
        }
        Node::Opaque(o) => {
            // A directive line stays at the start of its line, as the preprocessor
            // wrote it (in preprocessed input an indented one is not a directive).
            if !o.text.starts_with('#') {
                pad(out, depth);
            }
            out.push_str(&o.text);
            out.push('\n');
        }
        Node::Block(b) => {
            pad(out, depth);
            out.push_str("{\n");
            body(b, opts, depth + 1, out);
            pad(out, depth);
            out.push_str("}\n");
        }
        Node::If(i) => {
            pad(out, depth);
            let _ = writeln!(out, "if ({}) {{", expr(&i.cond));
            body(&i.then_body, opts, depth + 1, out);
            pad(out, depth);
            if i.else_body.is_empty() {
                out.push_str("}\n");
            } else {
                out.push_str("} else {\n");
                body(&i.else_body, opts, depth + 1, out);
                pad(out, depth);
                out.push_str("}\n");
            }
        }
        Node::Loop(l) => {
            if let Some(spec) = l.directives.iter().find_map(|d| match d {
                crate::program::Directive::RegisterTile(spec) => Some(spec),
                _ => None,
            }) {
                crate::transform::register_tile::print(l, spec, opts, depth, out);
                return;
            }
            if let Some(spec) = l.directives.iter().find_map(|d| match d {
                crate::program::Directive::TimeTile(spec) => Some(spec),
                _ => None,
            }) {
                crate::transform::time_tile::print(l, spec, opts, depth, out);
                return;
            }
            let declare = opts.declare_loop_vars || l.declares_var;
            let block = declare && opts.c89;
            let depth = if block {
                pad(out, depth);
                out.push_str("{\n");
                pad(out, depth + 1);
                let _ = writeln!(out, "{} {};", l.var_dtype.c_name(), l.var);
                depth + 1
            } else {
                depth
            };
            for d in &l.directives {
                out.push_str(&d.to_string());
                out.push('\n');
            }
            if let Some(prefix) = (opts.loop_prefix)(l) {
                for line in prefix.lines() {
                    // Directives stay in column 0: preprocessed input only knows them there.
                    if !line.starts_with('#') {
                        pad(out, depth);
                    }
                    out.push_str(line);
                    out.push('\n');
                }
            }
            pad(out, depth);
            out.push_str(&loop_header(l, declare && !block));
            if opts.annotate {
                let _ = write!(out, " /* {} */", l.kind.verdict());
            }
            out.push_str(" {\n");
            body(&l.body, opts, depth + 1, out);
            pad(out, depth);
            out.push_str("}\n");
            if block {
                pad(out, depth - 1);
                out.push_str("}\n");
            }
        }
    }
}

/// A region as readable C, loops annotated with their verdicts.
pub fn region_to_c(region: &Region) -> String {
    let mut out = String::new();
    let opts = PrintOptions {
        annotate: true,
        ..PrintOptions::default()
    };
    body(&region.body, &opts, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{BinOp, DType};

    fn var(v: &str) -> Box<Expr> {
        Box::new(Expr::Var(v.into()))
    }

    #[test]
    fn parenthesizes_only_where_the_tree_needs_it() {
        let sub = |l: Box<Expr>, r: Box<Expr>| {
            Box::new(Expr::Binary {
                op: BinOp::Sub,
                lhs: l,
                rhs: r,
            })
        };
        let left = Expr::Binary {
            op: BinOp::Sub,
            lhs: sub(var("a"), var("b")),
            rhs: var("c"),
        };
        assert_eq!(expr(&left), "a - b - c");
        let right = Expr::Binary {
            op: BinOp::Sub,
            lhs: var("a"),
            rhs: sub(var("b"), var("c")),
        };
        assert_eq!(expr(&right), "a - (b - c)");
        let mul = Expr::Binary {
            op: BinOp::Mul,
            lhs: sub(var("a"), var("b")),
            rhs: var("c"),
        };
        assert_eq!(expr(&mul), "(a - b) * c");
        let neg = Expr::Unary {
            op: UnOp::Neg,
            arg: Box::new(Expr::Unary {
                op: UnOp::Neg,
                arg: var("x"),
            }),
        };
        assert_eq!(expr(&neg), "-(-x)");
        let cast = Expr::Cast {
            dtype: DType::F64,
            arg: sub(var("i"), var("j")),
        };
        assert_eq!(expr(&cast), "(double)(i - j)");
    }
}

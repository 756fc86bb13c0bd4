//! Register tiling with packed panels: a band of three loops whose one statement
//! accumulates a product, `W[u][v] += P(u, r) * Q(r, v)`, or a sum of up to three
//! (syr2k's `a * b + c * d`), is printed as a blocked micro-kernel: gemm, 2mm, 3mm,
//! syrk, syr2k, the products of covariance and correlation.
//!
//! The forms read:
//! - the accumulator is an array element, or a scalar declared with its first value
//!   in the second loop's body (`s = 0; for k: s += ...; W = s`), kept meanwhile in a
//!   buffer over the first two loops;
//! - statements before the band's inner loops (gemm's `C[i][j] *= beta`, an
//!   initialization) run first, for every iteration of their loops, and statements
//!   after the reduction loop (a store, a scaling, a mirror) run last;
//! - a column bound may follow the rows (a triangle: syrk's `j <= i`, covariance's
//!   `j >= i`) when it is affine and the other column bound does not move: the kernel
//!   covers the columns' bounding box, loads and stores only elements inside, and skips
//!   tiles with none;
//! - or a reduction bound may follow the rows (trmm's `k = i + 1`), affine, the other
//!   bound fixed: the kernel runs over the reduction's bounding box, the row factor is
//!   packed with zeros outside each row's reduction, and a tile or row without a step in
//!   a reduction block is neither computed nor stored; row blocks are dealt to the team
//!   in turn (their work differs);
//! - the column factor may read `W` itself in row `r` (trmm's `B[k][j]`) where `r`
//!   starts after `u` (`r = u + c`, `c >= 1`).
//!
//! The band is blocked for the caches (`nc` columns, `kc` reduction steps, `mc` rows);
//! within a block each `Q` is packed into slivers of `nr` columns and each `P` into
//! slivers of `mr` rows, each sliver contiguous in the order the kernel reads it; an
//! `mr x nr` tile of `W` is held in `mr` rows of GNU C vectors of the target's width
//! (vector extensions, which gcc and clang keep in registers and update with FMAs)
//! across the `kc` steps. A whole tile over contiguous columns of `W` is loaded and
//! stored as vectors; partial tiles at the edges are packed with zeros and stored
//! element by element, so one kernel covers every size. With `parallel`, one OpenMP
//! team packs each `Q` block together and shares row blocks balanced to the team; the
//! statements before and after run as parallel loops where the band's first loop
//! carries no dependence.
//!
//! Legality, proved from the statement itself: `W` is the only thing the band writes,
//! no factor reads it (but trmm's, below), `W`'s subscripts take `u` and `v` each in a
//! subscript of its own with a non-zero coefficient (distinct `(u, v)` are distinct
//! elements), and no bound moves with a band variable but the column bound of a
//! triangle or the reduction bound that follows the rows. Each element
//! then sees its updates in the original order of `r`, and elements are independent:
//! any order of the `(u, v)` tiles computes the same values, bit for bit where the
//! compiler contracts `w + p * q` the same way in both. Where the column factor reads
//! `W`'s row `r > u`: in the program each such read sees the row as it was before the
//! band (rows are written in order of `u`); in the kernel a `Q` block of rows
//! `pc..pc + kc` is packed before any tile of that block is stored, and no earlier block
//! stored those rows (a row's reduction starts after it, so it had no step there and
//! rows without a step are not stored). A masked step adds `0 * q`: the same sum for
//! finite `q`, the sign of a zero result aside; an infinite or NaN `q` outside a row's
//! reduction would make it NaN. The statements before and after are distributed: legal
//! when no dependence carried by the first two loops runs from a later part (before,
//! band, after) back to an earlier one.
//!
//! The step writes a [`Directive::RegisterTile`] on the band's first loop and leaves
//! the loops as they are (their semantics, analysis and counts unchanged); the printer
//! writes the kernel in their place ([`print`]). No later step may change a loop of the
//! band.

use super::*;
use crate::print::{self, PrintOptions};
use crate::program::RegisterTileSpec;

/// The parts of a band the kernel is made of.
pub(crate) struct Shape<'a> {
    /// The band, outermost first, as written.
    pub loops: [&'a Loop; 3],
    /// Positions in `loops` of the row, column and reduction loops.
    pub u: usize,
    pub v: usize,
    pub r: usize,
    /// Nodes before the band's second loop in the first loop's body, and before the
    /// third loop in the second's: they run first, for every iteration of their loops.
    pub prefix: [&'a [Node]; 2],
    /// Nodes after the third loop in the second's body: they run last, for every
    /// iteration of the first two loops.
    pub suffix: &'a [Node],
    /// The accumulated element, or a scalar declared (initialized) in `prefix[1]`.
    pub target: &'a Expr,
    /// The scalar's declaration, where the target is one.
    pub scalar: Option<&'a Decl>,
    /// The products summed, left to right: each a row factor (no `v`) and a column
    /// factor (no `u`).
    pub terms: Vec<(&'a Expr, &'a Expr)>,
    /// `W -= P * Q`.
    pub sub: bool,
    /// A bound of the reduction loop follows the rows (trmm's `k = i + 1`): the row
    /// factor is packed with zeros outside, and tiles and rows without a step in a
    /// reduction block are skipped.
    pub reduction_leans: bool,
}

/// The band at `l` as a register tile, or why not.
pub(crate) fn shape(l: &Loop) -> Result<Shape<'_>, String> {
    let Some(Node::Loop(second)) = l.body.last() else {
        return Err(format!(
            "the body of loop '{}' does not end with a loop",
            l.var
        ));
    };
    let prefix0 = &l.body[..l.body.len() - 1];
    let Some(at) = second.body.iter().position(|n| matches!(n, Node::Loop(_))) else {
        return Err(format!(
            "the body of loop '{}' holds no loop (a band of three)",
            second.var
        ));
    };
    let Node::Loop(third) = &second.body[at] else {
        unreachable!("a loop")
    };
    let (prefix1, suffix) = (&second.body[..at], &second.body[at + 1..]);
    let [Node::Assign(stmt)] = third.body.as_slice() else {
        return Err(format!(
            "the body of loop '{}' is not one statement",
            third.var
        ));
    };
    let loops = [l, second, third];
    for x in loops {
        if x.step != 1 || !matches!(x.cmp, LoopCmp::Lt | LoopCmp::Le) {
            return Err(format!(
                "loop '{}' does not count up by one to a bound",
                x.var
            ));
        }
    }
    // Bounds that depend on another loop of the band: only one bound of the column
    // loop, on the row loop (a triangle), checked once the roles are known.
    let mut leaning: Vec<(usize, usize)> = Vec::new();
    for (a, x) in loops.iter().enumerate() {
        for (b, y) in loops.iter().enumerate() {
            if x.init.mentions(&y.var) || x.bound.mentions(&y.var) {
                leaning.push((a, b));
            }
        }
    }
    // The accumulator: an array element, or a scalar declared with its initial value
    // right in the second loop's body (the third loop then being the reduction).
    let (w, w_idx, scalar): (&String, &[Expr], Option<&Decl>) = match &stmt.target {
        Expr::Access { array, indices } => (array, indices, None),
        Expr::Var(x) => {
            let decl = prefix1.iter().find_map(|n| match n {
                Node::Decl(d) if d.name == *x && d.dims.is_empty() && d.init.is_some() => Some(d),
                _ => None,
            });
            match decl {
                Some(d) => (x, &[][..], Some(d)),
                None => {
                    return Err(format!(
                        "'{x}' is not a scalar declared with its first value in loop '{}'",
                        second.var
                    ))
                }
            }
        }
        _ => return Err("the statement does not accumulate into an element".into()),
    };
    if let Some(d) = scalar {
        let init = d.init.as_ref().expect("initialized");
        if prefix1
            .iter()
            .any(|n| !matches!(n, Node::Decl(x) if x.name == d.name) && node_mentions(n, w))
            || init.mentions(w)
        {
            return Err(format!(
                "'{w}' is used before the reduction loop besides its declaration"
            ));
        }
    }
    // The product and whether it is subtracted.
    let (product, sub) = match (&stmt.op, &stmt.value) {
        (AssignOp::Add, e) => (e, false),
        (AssignOp::Sub, e) => (e, true),
        (
            AssignOp::Set,
            Expr::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            },
        ) if **lhs == stmt.target => (&**rhs, false),
        (
            AssignOp::Set,
            Expr::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            },
        ) if **rhs == stmt.target => (&**lhs, false),
        (
            AssignOp::Set,
            Expr::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            },
        ) if **lhs == stmt.target => (&**rhs, true),
        _ => {
            return Err(format!(
                "the statement does not accumulate into '{w}' (`{w}[..] += p * q`)"
            ))
        }
    };
    // A sum of products, as C groups it: ((a * b + c * d) + e * f).
    let mut products: Vec<(&Expr, &Expr)> = Vec::new();
    let mut rest = product;
    loop {
        match rest {
            Expr::Binary {
                op: BinOp::Mul,
                lhs,
                rhs,
            } => {
                products.push((lhs, rhs));
                break;
            }
            Expr::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } if products.len() < 3 => match &**rhs {
                Expr::Binary {
                    op: BinOp::Mul,
                    lhs: a,
                    rhs: b,
                } => {
                    products.push((a, b));
                    rest = lhs;
                }
                _ => return Err("the accumulated value is not a sum of products".into()),
            },
            _ => return Err("the accumulated value is not a sum of products".into()),
        }
    }
    products.reverse();
    // A factor may read W only as trmm does (checked once the roles are known).
    let reads_w = products.iter().any(|(a, b)| a.mentions(w) || b.mentions(w));
    if loops
        .iter()
        .any(|x| x.init.mentions(w) || x.bound.mentions(w))
    {
        return Err(format!("a bound reads '{w}', which the band writes"));
    }
    // Which band variable each subscript of W takes.
    let vars: Vec<&str> = loops.iter().map(|x| x.var.as_str()).collect();
    let mut dim_of = [None; 3];
    for (d, e) in w_idx.iter().enumerate() {
        let mentioned: Vec<usize> = (0..3).filter(|&k| e.mentions(vars[k])).collect();
        match mentioned.as_slice() {
            [] => {}
            [k] => {
                let coeff = affine_of(e, &|_| true).map(|a| a.coeff(vars[*k]));
                if !matches!(coeff, Some(c) if c != 0) || dim_of[*k].is_some() {
                    return Err(format!(
                        "'{w}' is not written at distinct elements for distinct '{}'",
                        vars[*k]
                    ));
                }
                dim_of[*k] = Some(d);
            }
            _ => return Err(format!("a subscript of '{w}' mixes the band's variables")),
        }
    }
    if scalar.is_some() {
        // A scalar per iteration of the first two loops.
        dim_of = [Some(0), Some(1), None];
    }
    let in_w: Vec<usize> = (0..3).filter(|&k| dim_of[k].is_some()).collect();
    let [x, y] = in_w.as_slice() else {
        return Err(format!(
            "'{w}' is not indexed by exactly two of the band's loops"
        ));
    };
    let r = 3 - x - y;
    // (u, v, p, q): the row factor does not move with v, the column factor not with u.
    let roles = |u: usize, v: usize| -> Option<Vec<(&Expr, &Expr)>> {
        products
            .iter()
            .map(|&(f1, f2)| {
                if !f1.mentions(vars[v]) && !f2.mentions(vars[u]) {
                    Some((f1, f2))
                } else if !f2.mentions(vars[v]) && !f1.mentions(vars[u]) {
                    Some((f2, f1))
                } else {
                    None
                }
            })
            .collect()
    };
    // Columns preferably along W's last subscript.
    let (preferred, other) = if dim_of[*x] > dim_of[*y] {
        ((*y, *x), (*x, *y))
    } else {
        ((*x, *y), (*y, *x))
    };
    let ((u, v), terms) = match roles(preferred.0, preferred.1) {
        Some(pq) => (preferred, pq),
        None => match roles(other.0, other.1) {
            Some(pq) => (other, pq),
            None => {
                return Err(
                    "the product is not a factor without one of W's loops times a factor \
                     without the other"
                        .into(),
                )
            }
        },
    };
    if let Some(&(a, b)) = leaning
        .iter()
        .find(|&&(a, b)| (a, b) != (v, u) && (a, b) != (r, u))
    {
        return Err(format!(
            "the bounds of '{}' depend on '{}' (only a column or reduction bound may follow \
             the rows)",
            loops[a].var, loops[b].var
        ));
    }
    let reduction_leans = leaning.contains(&(r, u));
    if reduction_leans && leaning.contains(&(v, u)) {
        return Err(format!(
            "the bounds of both '{}' and '{}' follow the rows",
            loops[v].var, loops[r].var
        ));
    }
    let affine = |e: &Expr| affine_of(e, &|_| true).is_some();
    if let Some(&(x, _)) = leaning.first() {
        let (lx, uv) = (loops[x], &loops[u].var);
        if u > x
            || (lx.init.mentions(uv) && lx.bound.mentions(uv))
            || !affine(&lx.init)
            || !affine(&lx.bound)
        {
            return Err(format!(
                "the bounds of '{}' are not one affine bound in '{uv}' and one without it",
                lx.var
            ));
        }
    }
    // Reading W: only a column factor that is W's element in row `r` (`W[u := r]`,
    // trmm's `B[k][j]`) where `r` starts strictly after `u` (`r = u + c`, `c >= 1`, to a
    // bound without `u`). Every row it reads is then read before the band writes it, as
    // the kernel reads it: a packed `Q` block holds rows that no earlier block wrote
    // (their reductions start after them), and the block is packed before its tiles
    // are stored.
    if reads_w {
        let (lr, uv, rv) = (loops[r], &loops[u].var, &loops[r].var);
        let ahead = reduction_leans
            && !lr.bound.mentions(uv)
            && affine_of(&lr.init, &|_| true).is_some_and(|a| {
                a.coeff(uv) == 1
                    && a.coeffs.iter().all(|(k, c)| k == uv || *c == 0)
                    && a.constant >= 1
            });
        let mut in_row_r = stmt.target.clone();
        rewrite(&mut in_row_r, &mut |e| {
            matches!(e, Expr::Var(x) if x == uv).then(|| Expr::Var(rv.clone()))
        });
        let allowed = scalar.is_none()
            && ahead
            && terms
                .iter()
                .all(|(p, q)| !p.mentions(w) && (!q.mentions(w) || **q == in_row_r));
        if !allowed {
            return Err(format!(
                "the product reads '{w}', which the band writes (only as '{}', with '{rv}' \
                 starting after '{uv}')",
                print::expr(&in_row_r)
            ));
        }
    }
    Ok(Shape {
        loops,
        u,
        v,
        r,
        prefix: [prefix0, prefix1],
        suffix,
        scalar,
        target: &stmt.target,
        terms,
        sub,
        reduction_leans,
    })
}

/// The type of the accumulator (the written array's, or the scalar's), where it is
/// `float` or `double`.
fn element_type(s: &Shape, arrays: &[Array]) -> Option<DType> {
    let t = match (s.scalar, s.target) {
        (Some(d), _) => d.dtype,
        (None, Expr::Access { array, .. }) => arrays.iter().find(|a| a.name == *array)?.dtype,
        _ => return None,
    };
    matches!(t, DType::F32 | DType::F64).then_some(t)
}

/// Whether `e`, a value of the product, computes in `t` throughout (so that packing its
/// value in a buffer of `t` rounds nothing the original would not).
fn computes_in(e: &Expr, t: DType, cx: &Ctx) -> Result<(), String> {
    match e {
        Expr::Int { .. } => Ok(()),
        Expr::Float { text, .. } => {
            let single = text.ends_with(['f', 'F']);
            if (t == DType::F32) == single {
                Ok(())
            } else {
                Err(format!("the constant {text} is not of the element type"))
            }
        }
        Expr::Var(v) => match cx.scalars.iter().find(|s| s.name == *v) {
            Some(s) if s.dtype.is_float() && s.dtype != t => {
                Err(format!("'{v}' is a {}", s.dtype.c_name()))
            }
            _ => Ok(()),
        },
        Expr::Access { array, .. } => match cx.arrays.iter().find(|a| a.name == *array) {
            Some(a) if a.dtype == t => Ok(()),
            Some(a) => Err(format!("'{array}' holds {}", a.dtype.c_name())),
            None => Err(format!("'{array}' is not an array of the program")),
        },
        Expr::Unary {
            op: crate::program::UnOp::Neg | crate::program::UnOp::Plus,
            arg,
        } => computes_in(arg, t, cx),
        Expr::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div,
            lhs,
            rhs,
        } => {
            computes_in(lhs, t, cx)?;
            computes_in(rhs, t, cx)
        }
        _ => Err(format!("'{}' is not plain arithmetic", print::expr(e))),
    }
}

/// The register-tile step on the band at `nest`'s loop `at`.
pub(super) fn register_tile(
    nest: &mut Loop,
    at: usize,
    spec: RegisterTileSpec,
    inside_parallel: bool,
    cx: &mut Ctx,
) -> Result<(), Refusal> {
    if !(1..=16).contains(&spec.mr) {
        return Err(cx.na(format!("register tile rows {} (1..=16)", spec.mr)));
    }
    if !(2..=64).contains(&spec.nr) || !spec.nr.is_power_of_two() {
        return Err(cx.na(format!(
            "register tile columns {} (a power of two in 2..=64)",
            spec.nr
        )));
    }
    if spec.kc == 0 || spec.mc < spec.mr || spec.nc < spec.nr {
        return Err(cx.na(format!(
            "cache blocks {}x{}x{} smaller than the {}x{} register tile",
            spec.mc, spec.kc, spec.nc, spec.mr, spec.nr
        )));
    }
    if spec.parallel && inside_parallel {
        return Err(cx.na("the band is inside a parallel loop"));
    }
    let l = loop_at(nest, at).expect("loop");
    let s = shape(l).map_err(|why| cx.na(why))?;
    check_pragma_free(&s.loops, cx.k)?;
    let t = element_type(&s, cx.arrays)
        .ok_or_else(|| cx.na("the accumulator is not a float or double"))?;
    for f in s.terms.iter().flat_map(|(p, q)| [*p, *q]) {
        computes_in(f, t, cx).map_err(|why| {
            cx.na(format!(
                "the product does not compute in {}: {why}",
                t.c_name()
            ))
        })?;
    }
    // Statements before the band: no declaration the band could see, nothing the
    // bounds read, and no dependence carried by the first two loops from a later part
    // (the band last) back to an earlier one.
    let before: Vec<&Node> = s.prefix.iter().flat_map(|p| p.iter()).collect();
    let accumulator = s.scalar.map(|d| d.name.as_str());
    if let Some(Node::Decl(d)) = before
        .iter()
        .find(|n| matches!(n, Node::Decl(d) if Some(d.name.as_str()) != accumulator))
    {
        return Err(cx.na(format!(
            "'{}' is declared before the band, inside it",
            d.name
        )));
    }
    if let Some(d) = s.scalar {
        if d.dtype != t {
            return Err(cx.na(format!(
                "the accumulator '{}' is a {}, the product a {}",
                d.name,
                d.dtype.c_name(),
                t.c_name()
            )));
        }
    }
    let written: BTreeSet<String> = s
        .prefix
        .iter()
        .chain([&s.suffix])
        .flat_map(|p| crate::deps::written_names(p))
        .collect();
    if let Some(x) = s.loops.iter().find(|x| {
        written
            .iter()
            .any(|w| x.init.mentions(w) || x.bound.mentions(w))
    }) {
        return Err(cx.na(format!(
            "the bounds of '{}' read what the statements before the band write",
            x.var
        )));
    }
    if !before.is_empty() || !s.suffix.is_empty() {
        let part = |nodes: &[Node]| -> (BTreeSet<usize>, BTreeSet<usize>) {
            (
                nodes.iter().flat_map(stmt_ids).collect(),
                nodes.iter().flat_map(loops_of).collect(),
            )
        };
        // Stages in the order they run after distribution.
        let parts = [part(s.prefix[0]), part(s.prefix[1]), part(s.suffix)];
        let band = s.loops[2].id;
        let stage = |a: &AccessRef| -> Option<usize> {
            if a.loops.contains(&band) {
                return Some(2);
            }
            [0, 1, 3].into_iter().zip(&parts).find_map(|(k, p)| {
                (p.0.contains(&a.stmt) || a.loops.iter().any(|x| p.1.contains(x))).then_some(k)
            })
        };
        for d in &cx.an.deps {
            // The scalar accumulator is a fresh variable in every iteration of the
            // second loop: nothing it holds is carried.
            if (!carried_by(d, s.loops[0].id) && !carried_by(d, s.loops[1].id))
                || Some(d.array.as_str()) == accumulator
            {
                continue;
            }
            let (a, b) = (&cx.an.accesses[d.source], &cx.an.accesses[d.sink]);
            match (stage(a), stage(b)) {
                (Some(x), Some(y)) if x > y => {
                    return Err(cx.illegal(format!(
                        "dependence on '{}' with directions {:?} runs from a later part of \
                         the band (its statements before and after the reduction loop) back \
                         to an earlier one",
                        d.array, d.directions
                    )))
                }
                (Some(_), Some(_)) => {}
                _ => {
                    return Err(cx.illegal(format!(
                        "dependence on '{}' through a condition or loop bound",
                        d.array
                    )))
                }
            }
        }
    }
    let l = loop_at_mut(nest, at).expect("loop");
    l.directives.push(Directive::RegisterTile(RegisterTileSpec {
        dtype: t,
        ..spec
    }));
    Ok(())
}

/// C text at an indentation that follows the blocks it opens (the kernels that steps
/// print in their loops' place: register and time tiles).
pub(crate) struct Text {
    pub out: String,
    pub depth: usize,
}

impl Text {
    pub fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// A directive, in column 0.
    pub fn pragma(&mut self, s: &str) {
        self.out.push_str(s);
        self.out.push('\n');
    }

    pub fn open(&mut self, s: &str) {
        if s.is_empty() {
            self.line("{");
        } else {
            self.line(&format!("{s} {{"));
        }
        self.depth += 1;
    }

    pub fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }
}

/// The band `l` (which carries `spec`) as C: the statements before the band, then the
/// blocked, packed kernel, then the final values of loop variables declared outside.
pub(crate) fn print(
    l: &Loop,
    spec: &RegisterTileSpec,
    opts: &PrintOptions,
    depth: usize,
    out: &mut String,
) {
    let Ok(s) = shape(l) else {
        // Refused where the step is applied; a band changed since is printed as loops.
        let mut plain = l.clone();
        plain
            .directives
            .retain(|d| !matches!(d, Directive::RegisterTile(_)));
        print::node(&Node::Loop(plain), opts, depth, out);
        return;
    };
    let t = spec.dtype.c_name();
    // Accesses as the printed code spells them (see `PrintOptions::access`).
    let user = |e: &Expr| {
        let mut e = e.clone();
        super::rewrite::rewrite(&mut e, &mut |x| (opts.access)(x));
        print::expr(&e)
    };
    // Term k's slivers follow term k - 1's: a block apart.
    let terms = s.terms.len();
    // The packed blocks are sized by the extents where those are smaller than the
    // blocks (fewer pages to touch in a program that runs the band once).
    let (bstride, astride) = ("tune_rt_bs".to_string(), "tune_rt_as".to_string());
    let at = |k: usize, stride: &str| {
        if k == 0 {
            String::new()
        } else {
            format!("{k} * {stride} + ")
        }
    };
    let (mr, nr, mc, kc, nc) = (spec.mr, spec.nr, spec.mc, spec.kc, spec.nc);
    let hi = |x: &Loop| match x.cmp {
        LoopCmp::Le => format!("({}) + 1", user(&x.bound)),
        _ => user(&x.bound),
    };
    let lo = |x: &Loop| user(&x.init);
    let [lu, lv, lr] = [s.loops[s.u], s.loops[s.v], s.loops[s.r]];
    let (uv, vv, rv) = (&lu.var, &lv.var, &lr.var);
    let mut c = Text {
        out: String::new(),
        depth,
    };
    c.line(&format!(
        "/* register tile {mr}x{nr} of '{}', blocks {mc}x{kc}x{nc} */",
        user(s.target)
    ));
    c.open("");
    // The widest vectors the compiler targets, up to a row of the tile: a row is
    // `nv` of them (wider GNU vectors than the target's are split, and spilled).
    let row_bytes = nr as usize * spec.dtype.size();
    let widths: Vec<(usize, &str)> = [(64, "__AVX512F__"), (32, "__AVX__")]
        .into_iter()
        .filter(|(w, _)| *w <= row_bytes)
        .collect();
    for (k, (w, macro_name)) in widths.iter().enumerate() {
        let kw = if k == 0 { "#if" } else { "#elif" };
        c.pragma(&format!("{kw} defined({macro_name})"));
        c.line(&format!(
            "typedef {t} tune_rt_vec __attribute__((vector_size({w})));"
        ));
    }
    if !widths.is_empty() {
        c.pragma("#else");
    }
    c.line(&format!(
        "typedef {t} tune_rt_vec __attribute__((vector_size({})));",
        row_bytes.min(16)
    ));
    if !widths.is_empty() {
        c.pragma("#endif");
    }
    // The same, at the alignment of an element (loads from the packed slivers).
    c.line(&format!(
        "typedef {t} tune_rt_vecu __attribute__((vector_size(sizeof(tune_rt_vec)), aligned(sizeof({t}))));"
    ));
    // A column bound that follows the rows: the kernel runs over the columns' bounding
    // box (the bound at the first and the last row; the other bound is fixed, so the
    // box is the union of the rows' columns), and only elements inside are loaded and
    // stored.
    let triangle = lv.init.mentions(uv) || lv.bound.mentions(uv);
    let (rlo, rhi) = if s.reduction_leans {
        ("0".to_string(), "0".to_string())
    } else {
        (lo(lr), hi(lr))
    };
    c.line(&format!(
        "long tune_rt_ulo = {}, tune_rt_uhi = {}, tune_rt_vlo, tune_rt_vhi, \
         tune_rt_rlo = {rlo}, tune_rt_rhi = {rhi};",
        lo(lu),
        hi(lu),
    ));
    // The same box for a reduction bound that follows the rows.
    let bounding_box = |c: &mut Text, x: &Loop, name: &str| {
        c.open("");
        c.line(&format!(
            "{} {uv}; long tune_rt_a0, tune_rt_a1, tune_rt_b0, tune_rt_b1;",
            lu.var_dtype.c_name()
        ));
        c.line(&format!(
            "{uv} = tune_rt_ulo; tune_rt_a0 = {}; tune_rt_b0 = {};",
            lo(x),
            hi(x)
        ));
        c.line(&format!(
            "{uv} = tune_rt_uhi - 1; tune_rt_a1 = {}; tune_rt_b1 = {};",
            lo(x),
            hi(x)
        ));
        c.line(&format!(
            "tune_rt_{name}lo = tune_rt_a0 < tune_rt_a1 ? tune_rt_a0 : tune_rt_a1;"
        ));
        c.line(&format!(
            "tune_rt_{name}hi = tune_rt_b0 > tune_rt_b1 ? tune_rt_b0 : tune_rt_b1;"
        ));
        c.close();
    };
    if triangle {
        bounding_box(&mut c, lv, "v");
    } else {
        c.line(&format!("tune_rt_vlo = {};", lo(lv)));
        c.line(&format!("tune_rt_vhi = {};", hi(lv)));
    }
    if s.reduction_leans {
        c.open("if (tune_rt_uhi > tune_rt_ulo)");
        bounding_box(&mut c, lr, "r");
        c.close();
    }
    // A scalar accumulator lives in a buffer over the first two loops meanwhile.
    let buffer = s.scalar.map(|_| {
        let v = |x: &str| Box::new(Expr::Var(x.to_string()));
        let sub = |a: Box<Expr>, b: Box<Expr>| {
            Box::new(Expr::Binary {
                op: BinOp::Sub,
                lhs: a,
                rhs: b,
            })
        };
        let row = Box::new(Expr::Binary {
            op: BinOp::Mul,
            lhs: sub(v(uv), v("tune_rt_ulo")),
            rhs: sub(v("tune_rt_vhi"), v("tune_rt_vlo")),
        });
        Expr::Access {
            array: "tune_rt_w".into(),
            indices: vec![Expr::Binary {
                op: BinOp::Add,
                lhs: row,
                rhs: sub(v(vv), v("tune_rt_vlo")),
            }],
        }
    });
    if buffer.is_some() {
        c.line(&format!(
            "{t} *tune_rt_w = ({t} *)__builtin_malloc(sizeof({t}) * (tune_rt_uhi > tune_rt_ulo && \
             tune_rt_vhi > tune_rt_vlo ? (tune_rt_uhi - tune_rt_ulo) * (tune_rt_vhi - tune_rt_vlo) : 1));"
        ));
    }
    // Where the band's first loop carries no dependence, the parts before and after the
    // kernel (subsets of its statements) carry none either: with `parallel`, the team
    // shares their rows too (`C *= beta` is a pass over C). Their loops then declare
    // their variables (private to each thread), so no statement of a part may read an
    // inner loop's variable outside that loop.
    let parts_parallel = spec.parallel && s.loops[0].kind == LoopKind::Map;
    let inner_vars_stay_inside = |body: &[Node]| {
        let vars: Vec<&str> = crate::program::loops(body)
            .iter()
            .map(|x| x.var.as_str())
            .collect();
        body.iter().all(|n| {
            matches!(n, Node::Loop(_)) || !vars.iter().any(|v| super::rewrite::node_mentions(n, v))
        })
    };
    let in_loops = |k: usize, body: Vec<Node>| {
        let shared = parts_parallel && inner_vars_stay_inside(&body);
        let mut inner = s.loops[k].clone();
        inner.directives.clear();
        inner.body = body;
        if k == 1 {
            let mut outer = s.loops[0].clone();
            outer.directives.clear();
            outer.body = vec![Node::Loop(inner)];
            inner = outer;
        }
        if shared {
            inner.directives.push(Directive::OmpParallelFor {
                collapse: None,
                schedule: Some(Schedule::Static),
                chunk: None,
                lastprivate: Vec::new(),
                reduction: Vec::new(),
            });
            inner.declares_var = true;
            crate::program::for_each_loop_mut(&mut inner.body, &mut |y| y.declares_var = true);
        }
        let mut part = [Node::Loop(inner)];
        super::rewrite::rewrite_nodes(&mut part, &mut |x| (opts.access)(x));
        let [part] = part;
        part
    };
    // The statements before the band, distributed: each part under its loops (the
    // accumulator's declaration becomes its element of the buffer).
    for (k, part) in s.prefix.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        let body = part
            .iter()
            .map(|n| match (n, s.scalar, &buffer) {
                (Node::Decl(d), Some(acc), Some(b)) if d.name == acc.name => Node::Assign(Assign {
                    id: 0,
                    target: b.clone(),
                    op: AssignOp::Set,
                    value: d.init.clone().expect("initialized"),
                    pos: d.pos,
                }),
                _ => n.clone(),
            })
            .collect();
        print::node(&in_loops(k, body), opts, c.depth, &mut c.out);
    }
    c.open(
        "if (tune_rt_uhi > tune_rt_ulo && tune_rt_vhi > tune_rt_vlo && tune_rt_rhi > tune_rt_rlo)",
    );
    c.line(&format!(
        "long tune_rt_kce = tune_rt_rhi - tune_rt_rlo < {kc} ? tune_rt_rhi - tune_rt_rlo : {kc};"
    ));
    c.line(&format!(
        "long tune_rt_bs = tune_rt_kce * ((tune_rt_vhi - tune_rt_vlo < {nc} ? tune_rt_vhi - tune_rt_vlo : {nc}) + {nr} - 1) / {nr} * {nr};"
    ));
    c.line(&format!(
        "{t} *tune_rt_bp = ({t} *)__builtin_malloc(sizeof({t}) * tune_rt_bs * {terms});"
    ));
    if spec.parallel {
        c.pragma("#pragma omp parallel");
    }
    c.open("");
    c.line(&format!(
        "{} {uv}; {} {vv}; {} {rv};",
        lu.var_dtype.c_name(),
        lv.var_dtype.c_name(),
        lr.var_dtype.c_name()
    ));
    c.line(
        "long tune_rt_jc, tune_rt_pc, tune_rt_ic, tune_rt_jb, tune_rt_ib, tune_rt_kk, tune_rt_e, \
         tune_rt_nv, tune_rt_nk, tune_rt_nu, tune_rt_mv;",
    );
    c.line(&format!("{t} tune_rt_t[{nr}];"));
    // Row blocks of at most mc rows, as many as a multiple of the team's threads, of
    // equal size rounded up to whole register tiles.
    if spec.parallel {
        c.line("extern int omp_get_num_threads(void);");
        c.line("long tune_rt_team = omp_get_num_threads();");
    } else {
        c.line("long tune_rt_team = 1;");
    }
    c.line(&format!(
        "long tune_rt_nb = ((tune_rt_uhi - tune_rt_ulo + {mc} - 1) / {mc} + tune_rt_team - 1) / tune_rt_team * tune_rt_team;"
    ));
    // Rows whose reduction follows them do unequal work: four blocks or more per
    // thread, dealt in turn.
    if s.reduction_leans && spec.parallel {
        c.line("if (tune_rt_nb < 4 * tune_rt_team) tune_rt_nb = 4 * tune_rt_team;");
    }
    c.line(&format!(
        "long tune_rt_mc = ((tune_rt_uhi - tune_rt_ulo + tune_rt_nb - 1) / tune_rt_nb + {mr} - 1) / {mr} * {mr};"
    ));
    c.line("long tune_rt_as = tune_rt_kce * tune_rt_mc;");
    c.line(&format!(
        "{t} *tune_rt_ap = ({t} *)__builtin_malloc(sizeof({t}) * tune_rt_as * {terms});"
    ));
    c.open(&format!(
        "for (tune_rt_jc = tune_rt_vlo; tune_rt_jc < tune_rt_vhi; tune_rt_jc += {nc})"
    ));
    c.line(&format!(
        "tune_rt_nv = tune_rt_vhi - tune_rt_jc < {nc} ? tune_rt_vhi - tune_rt_jc : {nc};"
    ));
    c.open(&format!(
        "for (tune_rt_pc = tune_rt_rlo; tune_rt_pc < tune_rt_rhi; tune_rt_pc += {kc})"
    ));
    c.line(&format!(
        "tune_rt_nk = tune_rt_rhi - tune_rt_pc < {kc} ? tune_rt_rhi - tune_rt_pc : {kc};"
    ));
    // Q packed: the sliver of columns jb.. at offset jb * nk, nr values per step.
    if spec.parallel {
        c.pragma("#pragma omp for schedule(static)");
    }
    // Each term's factor (the row factors with `rows`) packed at the term's offset.
    let stores = |rows: bool, stride: &str| {
        (0..terms)
            .map(|k| {
                let (p, q) = s.terms[k];
                format!(
                    "tune_rt_dst[{}0] = {};",
                    at(k, stride),
                    user(if rows { p } else { q })
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let zeros = |stride: &str| {
        (0..terms)
            .map(|k| format!("tune_rt_dst[{}0] = 0;", at(k, stride)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Whether `rv` is in the reduction of row `uv`, and whether row `uv` has a step in
    // the block `pc..pc + nk` (both bounds are affine in `uv`: the rows that have one
    // are an interval, so a tile has one where its first or last row has).
    let in_reduction = format!("{rv} >= ({}) && {rv} < ({})", lo(lr), hi(lr));
    let row_active = format!(
        "(({}) < tune_rt_pc + tune_rt_nk && ({}) > tune_rt_pc)",
        lo(lr),
        hi(lr)
    );
    // The packing loops: slivers of `width` (block offset `b`, extent `n`) at offset
    // `b * nk`, `width` values per reduction step, zeros past the extent.
    let pack = |c: &mut Text, rows: bool| {
        let (b, n, width, buf, stride) = if rows {
            ("tune_rt_ib", "tune_rt_nu", mr, "tune_rt_ap", &astride)
        } else {
            ("tune_rt_jb", "tune_rt_nv", nr, "tune_rt_bp", &bstride)
        };
        let set = if rows {
            format!("{uv} = tune_rt_ic + {b} + tune_rt_e; {rv} = tune_rt_pc + tune_rt_kk;")
        } else {
            format!("{rv} = tune_rt_pc + tune_rt_kk; {vv} = tune_rt_jc + {b} + tune_rt_e;")
        };
        c.open(&format!("for ({b} = 0; {b} < {n}; {b} += {width})"));
        c.open("for (tune_rt_kk = 0; tune_rt_kk < tune_rt_nk; tune_rt_kk++)");
        c.open(&format!(
            "for (tune_rt_e = 0; tune_rt_e < {width}; tune_rt_e++)"
        ));
        c.line(&format!(
            "{t} *tune_rt_dst = &{buf}[{b} * tune_rt_nk + tune_rt_kk * {width} + tune_rt_e];"
        ));
        // Where the reduction follows the rows, a row factor outside it packs a zero.
        let mask = if rows && s.reduction_leans {
            format!(" if (!({})) {{ {} }} else", in_reduction, zeros(stride))
        } else {
            String::new()
        };
        c.line(&format!(
            "if ({b} + tune_rt_e < {n}) {{ {set}{mask} {{ {} }} }} else {{ {} }}",
            stores(rows, stride),
            zeros(stride)
        ));
        c.close();
        c.close();
        c.close();
    };
    pack(&mut c, false);
    // Row blocks: P packed in slivers of mr rows, then the tiles.
    if spec.parallel && s.reduction_leans {
        c.pragma("#pragma omp for schedule(static, 1)");
    } else if spec.parallel {
        c.pragma("#pragma omp for schedule(static)");
    }
    c.open("for (tune_rt_ic = tune_rt_ulo; tune_rt_ic < tune_rt_uhi; tune_rt_ic += tune_rt_mc)");
    c.line(
        "tune_rt_nu = tune_rt_uhi - tune_rt_ic < tune_rt_mc ? tune_rt_uhi - tune_rt_ic : tune_rt_mc;",
    );
    pack(&mut c, true);
    c.open(&format!(
        "for (tune_rt_jb = 0; tune_rt_jb < tune_rt_nv; tune_rt_jb += {nr})"
    ));
    c.line(&format!(
        "tune_rt_mv = tune_rt_nv - tune_rt_jb < {nr} ? tune_rt_nv - tune_rt_jb : {nr};"
    ));
    c.open(&format!(
        "for (tune_rt_ib = 0; tune_rt_ib < tune_rt_nu; tune_rt_ib += {mr})"
    ));
    if s.reduction_leans {
        c.line(&format!(
            "int tune_rt_on; {uv} = tune_rt_ic + tune_rt_ib; tune_rt_on = {row_active}; \
             {uv} = tune_rt_ic + tune_rt_ib + (tune_rt_nu - tune_rt_ib < {mr} ? tune_rt_nu - \
             tune_rt_ib : {mr}) - 1; if (!tune_rt_on && !{row_active}) continue;"
        ));
    }
    c.line(&format!(
        "const {t} *tune_rt_pa = tune_rt_ap + tune_rt_ib * tune_rt_nk;"
    ));
    c.line(&format!(
        "const {t} *tune_rt_pb = tune_rt_bp + tune_rt_jb * tune_rt_nk;"
    ));
    let accs: Vec<String> = (0..mr).map(|a| format!("tune_rt_c{a}")).collect();
    let nv = format!("{nr} * sizeof({t}) / sizeof(tune_rt_vec)");
    c.line(&format!(
        "tune_rt_vec {};",
        accs.iter()
            .map(|a| format!("{a}[{nv}]"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let w = user(buffer.as_ref().unwrap_or(s.target));
    // Elements of a triangle's tile outside it, like rows and columns past the edges,
    // start at zero and are never stored; a tile with none inside is skipped.
    let inside = if triangle {
        format!(" && {vv} >= ({}) && {vv} < ({})", lo(lv), hi(lv))
    } else {
        String::new()
    };
    if triangle {
        c.line("int tune_rt_any = 0;");
    }
    // A whole tile whose rows are contiguous in `W` (the distance from its first column
    // to its last is nr - 1 elements: `W`'s subscripts are affine in `v`) and, in a
    // triangle, whose four corners are inside (the bounds are affine in `u`, so the
    // elements inside form a convex set) is loaded and stored as vectors; a tile on
    // an edge, across a triangle's diagonal or over strided columns goes element by
    // element.
    c.line(&format!(
        "int tune_rt_full = tune_rt_ib + {mr} <= tune_rt_nu && tune_rt_mv == {nr};"
    ));
    c.open("if (tune_rt_full)");
    c.line(&format!(
        "const {t} *tune_rt_q; {uv} = tune_rt_ic + tune_rt_ib; {vv} = tune_rt_jc + tune_rt_jb; \
         tune_rt_q = &{w}; {vv} += {nr} - 1; tune_rt_full = &{w} - tune_rt_q == {nr} - 1;"
    ));
    if triangle {
        let cond = &inside[" && ".len()..];
        for (du, dv) in [("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")] {
            c.line(&format!(
                "{uv} = tune_rt_ic + tune_rt_ib + {du} * ({mr} - 1); {vv} = tune_rt_jc + \
                 tune_rt_jb + {dv} * ({nr} - 1); if (!({cond})) tune_rt_full = 0;"
            ));
        }
    }
    c.close();
    // A whole tile's row as vectors from `tune_rt_q`, the row's first element of `W`:
    // `copy` moves the vector at an address in `W` to or from the accumulator.
    let row_address = format!("{vv} = tune_rt_jc + tune_rt_jb; {t} *tune_rt_q = &{w};");
    let vector_at = format!("(tune_rt_q + tune_rt_e * (long)(sizeof(tune_rt_vec) / sizeof({t})))");
    let each_vector =
        |copy: String| format!("for (tune_rt_e = 0; tune_rt_e < (long)({nv}); tune_rt_e++) {copy}");
    let mark = if triangle { " tune_rt_any = 1;" } else { "" };
    for (a, acc) in accs.iter().enumerate() {
        c.line(&format!("{uv} = tune_rt_ic + tune_rt_ib + {a};"));
        c.line(&format!(
            "if (tune_rt_full) {{ {row_address} {}{mark} }} else",
            each_vector(format!(
                "{acc}[tune_rt_e] = *(const tune_rt_vecu *){vector_at};"
            ))
        ));
        c.line(&format!(
            "{{ for (tune_rt_e = 0; tune_rt_e < {nr}; tune_rt_e++) {{ {vv} = tune_rt_jc + tune_rt_jb + \
             tune_rt_e; if (tune_rt_ib + {a} < tune_rt_nu && tune_rt_e < tune_rt_mv{inside}) \
             {{ tune_rt_t[tune_rt_e] = {w};{mark} }} else tune_rt_t[tune_rt_e] = 0; }} \
             __builtin_memcpy({acc}, tune_rt_t, sizeof {acc}); }}"
        ));
    }
    if triangle {
        c.open("if (tune_rt_any)");
    }
    c.open("for (tune_rt_kk = 0; tune_rt_kk < tune_rt_nk; tune_rt_kk++)");
    // The column sliver's vectors first, then one broadcast row at a time: the
    // registers hold the accumulators, the sliver and one broadcast.
    let bs: Vec<String> = (0..terms).map(|k| format!("tune_rt_b{k}")).collect();
    c.line(&format!(
        "tune_rt_vec {};",
        bs.iter()
            .map(|b| format!("{b}[{nv}]"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    c.line("int tune_rt_x;");
    for (k, b) in bs.iter().enumerate() {
        c.line(&format!(
            "for (tune_rt_x = 0; tune_rt_x < (int)({nv}); tune_rt_x++) {b}[tune_rt_x] = \
             *(const tune_rt_vecu *)(tune_rt_pb + {}tune_rt_kk * {nr} + \
             tune_rt_x * (sizeof(tune_rt_vec) / sizeof({t})));",
            at(k, &bstride)
        ));
    }
    let sign = if s.sub { '-' } else { '+' };
    for (a, acc) in accs.iter().enumerate() {
        let ps: Vec<String> = (0..terms)
            .map(|k| {
                format!(
                    "tune_rt_p{k} = tune_rt_pa[{}tune_rt_kk * {mr} + {a}]",
                    at(k, &astride)
                )
            })
            .collect();
        let sum: Vec<String> = (0..terms)
            .map(|k| format!("tune_rt_p{k} * tune_rt_b{k}[tune_rt_x]"))
            .collect();
        let value = if terms == 1 {
            sum[0].clone()
        } else {
            format!("({})", sum.join(" + "))
        };
        c.line(&format!(
            "{{ {t} {}; for (tune_rt_x = 0; tune_rt_x < (int)({nv}); tune_rt_x++) \
             {acc}[tune_rt_x] = {acc}[tune_rt_x] {sign} {value}; }}",
            ps.join(", ")
        ));
    }
    c.close();
    for (a, acc) in accs.iter().enumerate() {
        // A row without a step in this block keeps its value (it is not stored).
        if s.reduction_leans {
            c.open(&format!(
                "{uv} = tune_rt_ic + tune_rt_ib + {a}; if ({row_active})"
            ));
        }
        c.line(&format!(
            "if (tune_rt_full) {{ {uv} = tune_rt_ic + tune_rt_ib + {a}; {row_address} {} }} else",
            each_vector(format!("*(tune_rt_vecu *){vector_at} = {acc}[tune_rt_e];"))
        ));
        c.open(&format!("if (tune_rt_ib + {a} < tune_rt_nu)"));
        c.line(&format!(
            "__builtin_memcpy(tune_rt_t, {acc}, sizeof {acc});"
        ));
        c.line(&format!("{uv} = tune_rt_ic + tune_rt_ib + {a};"));
        let guard = if triangle {
            format!("if ({}) ", &inside[" && ".len()..])
        } else {
            String::new()
        };
        c.line(&format!(
            "for (tune_rt_e = 0; tune_rt_e < tune_rt_mv; tune_rt_e++) {{ {vv} = tune_rt_jc + \
             tune_rt_jb + tune_rt_e; {guard}{w} = tune_rt_t[tune_rt_e]; }}"
        ));
        c.close();
        if s.reduction_leans {
            c.close();
        }
    }
    if triangle {
        c.close(); // any
    }
    c.close(); // ib
    c.close(); // jb
    c.close(); // ic
    c.close(); // pc
    c.close(); // jc
    c.line("__builtin_free(tune_rt_ap);");
    c.close(); // the team
    c.line("__builtin_free(tune_rt_bp);");
    c.close(); // if
               // The statements after the reduction loop, distributed, the scalar accumulator
               // declared again with its final value.
    if !s.suffix.is_empty() {
        let mut body: Vec<Node> = Vec::new();
        if let (Some(acc), Some(b)) = (s.scalar, &buffer) {
            body.push(Node::Decl(Decl {
                init: Some(b.clone()),
                ..acc.clone()
            }));
        }
        body.extend(s.suffix.iter().cloned());
        print::node(&in_loops(1, body), opts, c.depth, &mut c.out);
    }
    if buffer.is_some() {
        c.line("__builtin_free(tune_rt_w);");
    }
    // Loop variables declared outside end as the loops would leave them.
    let ran = |x: &Loop| format!("({}) < ({})", lo(x), hi(x));
    let mut guard: Vec<String> = Vec::new();
    for x in s.loops {
        if !(x.declares_var || opts.declare_loop_vars) {
            let set = format!("{} = {} ? {} : {};", x.var, ran(x), hi(x), lo(x));
            if guard.is_empty() {
                c.line(&set);
            } else {
                c.line(&format!("if ({}) {set}", guard.join(" && ")));
            }
        }
        guard.push(ran(x));
    }
    c.close();
    out.push_str(&c.out);
}

/// A band a register tile may apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// Preorder position of its first loop in the nest.
    pub at: usize,
    /// The accumulator's type (`float` or `double`).
    pub dtype: DType,
    /// How many products it sums.
    pub products: usize,
}

/// The bands in the nest `root` a register tile may apply to.
pub fn sites(root: &Loop, arrays: &[Array]) -> Vec<Site> {
    (0..)
        .map_while(|at| loop_at(root, at).map(|l| (at, l)))
        .filter_map(|(at, l)| {
            let s = shape(l).ok()?;
            Some(Site {
                at,
                dtype: element_type(&s, arrays)?,
                products: s.terms.len(),
            })
        })
        .collect()
}

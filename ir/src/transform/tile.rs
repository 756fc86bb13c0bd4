//! One- and two-level tiling, with bounding-box tiles for triangular and skewed bands.

use super::*;

/// The exclusive upper end of an increasing loop (`bound`, or `bound + 1` for `<=`).
pub(crate) fn exclusive_end(l: &Loop) -> Expr {
    match l.cmp {
        LoopCmp::Le => plus(l.bound.clone(), 1),
        _ => l.bound.clone(),
    }
}

pub(crate) fn tile(
    l: &mut Loop,
    sizes: &[i64],
    inner: &[i64],
    cx: &mut Ctx,
) -> Result<(), Refusal> {
    let m = sizes.len();
    if m == 0 || sizes.iter().any(|s| *s < 2) {
        return Err(cx.na(format!(
            "tile sizes {sizes:?} (need at least one, each >= 2)"
        )));
    }
    if !inner.is_empty()
        && (inner.len() != m
            || inner
                .iter()
                .zip(sizes)
                .any(|(i, s)| *i < 2 || i >= s || s % i != 0))
    {
        return Err(cx.na(format!(
            "inner tile sizes {inner:?} must be one per band loop, each >= 2, smaller than \
             and dividing the outer size ({sizes:?})"
        )));
    }
    let band = transformable_band(l, m, cx.k)?;
    let vars: Vec<&str> = band.iter().map(|x| x.var.as_str()).collect();
    for x in &band {
        if x.step != 1 || !matches!(x.cmp, LoopCmp::Lt | LoopCmp::Le) {
            return Err(cx.na(format!(
                "loop '{}' is not an increasing unit-step loop",
                x.var
            )));
        }
    }
    let parallelogram = band.iter().any(|x| {
        vars.iter()
            .any(|v| x.init.mentions(v) || x.bound.mentions(v))
    });
    let ids: Vec<usize> = band.iter().map(|x| x.id).collect();
    if let Some(v) = band_vectors(cx.an, &ids)
        .into_iter()
        .find(|v| v.contains(&Dir::Gt))
    {
        return Err(cx.illegal(format!(
            "the band is not fully permutable: dependence {v:?}"
        )));
    }
    // The range each tile loop walks: the loop's own bounds on a rectangular band, the
    // bounding box of the band's iteration space otherwise.
    let ranges: Vec<(Expr, Expr)> = if parallelogram {
        bounding_box(&band)
            .map_err(|why| cx.na(format!("the band is not rectangular and {why}")))?
    } else {
        band.iter()
            .map(|x| (x.init.clone(), exclusive_end(x)))
            .collect()
    };
    let mut tiles = Vec::new();
    let mut seconds = Vec::new();
    let mut points = Vec::new();
    for (d, (x, size)) in band.iter().zip(sizes).enumerate() {
        let (lo, hi) = &ranges[d];
        let tvar = cx.fresh(&format!("{}_t", x.var));
        let mut t = header_of(x);
        t.var = tvar.clone();
        t.declares_var = true;
        t.step = *size;
        if parallelogram {
            t.init = lo.clone();
            t.cmp = LoopCmp::Lt;
            t.bound = hi.clone();
        }
        tiles.push(t);
        // Bounds that depend on outer band loops stay in force inside the tiles; the
        // others are the ends of the range the tile loop walks.
        let depends = |e: &Expr| vars.iter().any(|v| e.mentions(v));
        let (init_dep, bound_dep) = (depends(&x.init), depends(&x.bound));
        let clip = if bound_dep {
            exclusive_end(x)
        } else {
            hi.clone()
        };
        let tile_end = min_expr(plus(var(&tvar), *size), hi.clone());
        let (start, end) = match inner.get(d) {
            Some(&isize) => {
                let uvar = cx.fresh(&format!("{}_u", x.var));
                let mut u = header_of(x);
                u.var = uvar.clone();
                u.declares_var = true;
                u.init = var(&tvar);
                u.cmp = LoopCmp::Lt;
                u.bound = tile_end;
                u.step = isize;
                seconds.push(u);
                // Inner tiles never cross the outer tile's end (the sizes divide).
                (var(&uvar), min_expr(plus(var(&uvar), isize), clip))
            }
            None if bound_dep => (var(&tvar), min_expr(plus(var(&tvar), *size), clip)),
            None => (var(&tvar), tile_end),
        };
        let mut p = header_of(x);
        p.cmp = LoopCmp::Lt;
        p.init = if init_dep {
            max_expr(start, x.init.clone())
        } else {
            start
        };
        p.bound = end;
        points.push(p);
    }
    let body = band[m - 1].body.clone();
    tiles.extend(seconds);
    tiles.extend(points);
    *l = nest_headers(tiles, body);
    Ok(())
}

/// The bounding box `[lo, hi)` of each loop of a band whose bounds are affine in the
/// outer band variables: each bound with every outer variable replaced by the end of
/// its own box that minimizes (lower bounds) or maximizes (upper bounds) it.
pub(crate) fn bounding_box(band: &[&Loop]) -> Result<Vec<(Expr, Expr)>, String> {
    let vars: Vec<&str> = band.iter().map(|x| x.var.as_str()).collect();
    let mut boxes: Vec<(Affine, Affine)> = Vec::new();
    for (d, x) in band.iter().enumerate() {
        let outer = &vars[..d];
        let aff = |e: &Expr| -> Result<Affine, String> {
            affine_of(e, &|_| true).ok_or_else(|| {
                format!(
                    "the bounds of '{}' are not affine ({})",
                    x.var,
                    crate::print::expr(e)
                )
            })
        };
        let lo = aff(&x.init)?;
        let hi = aff(&exclusive_end(x))?;
        if let Some(v) = vars[d..]
            .iter()
            .find(|v| lo.coeff(v) != 0 || hi.coeff(v) != 0)
        {
            return Err(format!("the bounds of '{}' depend on '{v}'", x.var));
        }
        // Over the box of the outer variables: lo takes its minimum, hi its maximum
        // (hi is exclusive: the maximum of hi - 1, plus 1).
        let extreme = |a: &Affine, minimize: bool| -> Result<Affine, String> {
            let mut out = Affine::constant(a.constant);
            for (name, c) in &a.coeffs {
                let term = match outer.iter().position(|v| v == name) {
                    Some(k) => {
                        let (blo, bhi) = &boxes[k];
                        // Outer values range over [blo, bhi - 1].
                        let pick_low = (*c > 0) == minimize;
                        let end = if pick_low {
                            blo.clone()
                        } else {
                            bhi.sub(&Affine::constant(1)).ok_or("overflow")?
                        };
                        end.scale(*c).ok_or("overflow")?
                    }
                    None => Affine::var(name).scale(*c).ok_or("overflow")?,
                };
                out = out.add(&term).ok_or("overflow")?;
            }
            Ok(out)
        };
        boxes.push((extreme(&lo, true)?, extreme(&hi, false)?));
    }
    Ok(boxes
        .iter()
        .map(|(lo, hi)| (affine_expr(lo), affine_expr(hi)))
        .collect())
}

/// An affine form as a C expression (terms in name order, constant last).
pub(crate) fn affine_expr(a: &Affine) -> Expr {
    let mut out: Option<Expr> = None;
    for (name, c) in &a.coeffs {
        let mag = c.unsigned_abs() as i64;
        let term = if mag == 1 {
            var(name)
        } else {
            binary(BinOp::Mul, Expr::int(mag), var(name))
        };
        out = Some(match out {
            None if *c < 0 => Expr::Unary {
                op: crate::program::UnOp::Neg,
                arg: Box::new(term),
            },
            None => term,
            Some(e) if *c < 0 => binary(BinOp::Sub, e, term),
            Some(e) => binary(BinOp::Add, e, term),
        });
    }
    match out {
        None => Expr::int(a.constant),
        Some(e) => plus(e, a.constant),
    }
}

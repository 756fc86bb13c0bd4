//! 1-3D stencils.

use crate::synth::context::*;

pub(super) fn stencil(cx: &mut Ctx) -> Sketch {
    let dim = cx.rng.pick(&[1usize, 2, 2, 3]);
    // (radius, box): star of radius 1 or 2, or the full 3^d box
    let (radius, boxed) = match dim {
        1 => (cx.rng.pick(&[1i64, 2]), false),
        2 => cx.rng.pick(&[(1i64, false), (1, true), (2, false)]),
        _ => cx
            .rng
            .pick(&[(1i64, false), (1, false), (2, false), (1, true)]),
    };
    let scheme = cx.rng.below(3); // Jacobi ping-pong, copy-back, Gauss-Seidel in place
    let (grid, steps) = match dim {
        1 => (GRID1, STEPS1),
        2 => (GRID2, STEPS2),
        _ => (GRID3, STEPS3),
    };
    cx.size("TSTEPS", steps);
    cx.size("N", grid);
    let rect = dim == 2 && cx.rng.chance(0.3);
    if rect {
        cx.size("M", grid);
    }
    let vars = ["i", "j", "k"];
    let ext = |a: usize| if rect && a == 1 { "M" } else { "N" };
    let dims: Vec<&'static str> = (0..dim).map(ext).collect();
    cx.inout("A", &dims);
    if scheme != 2 {
        cx.inout("B", &dims);
    }
    // offsets, center first; ring = Chebyshev distance (box) or distance along the axis
    let mut points: Vec<(Vec<i64>, i64)> = vec![(vec![0; dim], 0)];
    if boxed {
        let total = 3usize.pow(dim as u32);
        for code in 0..total {
            let off: Vec<i64> = (0..dim)
                .map(|a| (code / 3usize.pow((dim - 1 - a) as u32) % 3) as i64 - 1)
                .collect();
            let nonzero = off.iter().filter(|&&d| d != 0).count() as i64;
            if nonzero > 0 {
                points.push((off, nonzero));
            }
        }
    } else {
        for a in 0..dim {
            for d in 1..=radius {
                for s in [-1, 1] {
                    let mut off = vec![0; dim];
                    off[a] = s * d;
                    points.push((off, d));
                }
            }
        }
    }
    let npts = points.len();
    let access = |arr: &str, off: &[i64]| {
        let idx: Vec<String> = off
            .iter()
            .enumerate()
            .map(|(a, &d)| offset(vars[a], d))
            .collect();
        let idx: Vec<&str> = idx.iter().map(|s| s.as_str()).collect();
        at(arr, &idx)
    };
    let form = if !boxed && radius == 1 {
        cx.rng.below(3)
    } else {
        cx.rng.below(2)
    };
    let rings = points.iter().map(|p| p.1).max().unwrap_or(0);
    let c0 = cx.rng.pick(&[0.5, 0.4, 0.25, 0.6]);
    let expr = |cx: &Ctx, src: &str| -> String {
        match form {
            // mean of the points
            0 => {
                let terms: Vec<String> = points.iter().map(|(o, _)| access(src, o)).collect();
                format!("({}) / {}", terms.join(" + "), cx.lit(&format!("{npts}.0")))
            }
            // weighted: center c0, the rest shared by rings
            1 => {
                let mut s = format!("{} * {}", cx.lit(&decimal(c0)), access(src, &points[0].0));
                let ring_share: Vec<f64> = match rings {
                    1 => vec![1.0],
                    2 => vec![0.75, 0.25],
                    _ => vec![0.6, 0.3, 0.1],
                };
                for r in 1..=rings {
                    let ring: Vec<String> = points
                        .iter()
                        .filter(|p| p.1 == r)
                        .map(|(o, _)| access(src, o))
                        .collect();
                    let w = (1.0 - c0) * ring_share[(r - 1) as usize] / ring.len() as f64;
                    s.push_str(&format!(
                        " + {} * ({})",
                        cx.lit(&decimal(w)),
                        ring.join(" + ")
                    ));
                }
                s
            }
            // explicit heat step: u + r * (sum of neighbours - 2d u)
            _ => {
                let center = access(src, &points[0].0);
                let ring: Vec<String> = points[1..].iter().map(|(o, _)| access(src, o)).collect();
                format!(
                    "{center} + {} * ({} - {} * {center})",
                    cx.lit("0.1"),
                    ring.join(" + "),
                    cx.lit(&format!("{}.0", 2 * dim))
                )
            }
        }
    };
    let swap = dim >= 2 && cx.rng.chance(0.25);
    let mut order: Vec<usize> = (0..dim).collect();
    if swap {
        order.swap(0, 1);
    }
    let r = radius.to_string();
    let interior = |cx: &mut Ctx| -> Vec<String> {
        order
            .iter()
            .map(|&a| {
                let hi = format!("{} - {r}", ext(a));
                cx.lt(vars[a], &r, &hi)
            })
            .collect()
    };
    let center: Vec<&str> = vars[..dim].to_vec();
    let ht = cx.lt("t", "0", "TSTEPS");
    match scheme {
        0 => {
            cx.open(&ht);
            let hs = interior(cx);
            let e = expr(cx, "A");
            cx.nest(&hs, &[format!("{} = {e};", at("B", &center))]);
            let hs = interior(cx);
            let e = expr(cx, "B");
            cx.nest(&hs, &[format!("{} = {e};", at("A", &center))]);
            cx.close();
        }
        1 => {
            cx.open(&ht);
            let hs = interior(cx);
            let e = expr(cx, "A");
            cx.nest(&hs, &[format!("{} = {e};", at("B", &center))]);
            let hs = interior(cx);
            cx.nest(
                &hs,
                &[format!("{} = {};", at("A", &center), at("B", &center))],
            );
            cx.close();
        }
        _ => {
            let hs = interior(cx);
            let e = expr(cx, "A");
            let mut heads = vec![ht];
            heads.extend(hs);
            cx.nest(&heads, &[format!("{} = {e};", at("A", &center))]);
        }
    }
    let shape = if boxed {
        "box".to_string()
    } else {
        format!("star{radius}")
    };
    let scheme_name = ["jacobi", "copyback", "seidel"][scheme];
    let form_name = ["mean", "weighted", "heat"][form];
    Sketch {
        tag: format!(
            "{dim}d{npts}-{shape}-{scheme_name}-{form_name}{}",
            if swap { "-swapped" } else { "" }
        ),
        summary: format!(
            "{dim}-D {npts}-point {} stencil ({form_name}), TSTEPS {}{}",
            if boxed { "box" } else { "star" },
            match scheme {
                0 => "Jacobi sweeps alternating between A and B",
                1 => "Jacobi sweeps into B, copied back into A",
                _ => "in-place Gauss-Seidel sweeps of A",
            },
            if swap {
                ", the first two axes interchanged"
            } else {
                ""
            }
        ),
    }
}

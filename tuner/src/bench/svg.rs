//! Self-contained SVG charts (returned as strings) for an HTML report.
//!
//! All text is XML-escaped; non-finite or out-of-domain numbers are skipped or
//! clamped so that the output never contains `NaN`/`inf`, and nothing panics.

use std::fmt::Write;

/// One bar: a label, a value, an interval (lo, hi) drawn as an error bar, and a colour class.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Row label, drawn left of the bar.
    pub label: String,
    /// Where the bar ends (it starts at the chart's reference).
    pub value: f64,
    /// Lower end of the error bar.
    pub lo: f64,
    /// Upper end of the error bar.
    pub hi: f64,
    /// Colour class.
    pub kind: BarKind,
}

/// Colour class of a [`Bar`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    /// Green.
    Improved,
    /// Red.
    Regressed,
    /// Grey.
    Unchanged,
    /// Blue.
    Neutral,
}

/// One measured kernel on a roofline chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Text next to the point.
    pub label: String,
    /// Colour group (one legend entry each).
    pub group: String,
    /// Operational intensity, flop/byte.
    pub oi: f64,
    /// Achieved GFLOP/s.
    pub gflops: f64,
}

const WIDTH: f64 = 720.0;
const PALETTE: [&str; 8] = [
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d",
];

/// Escapes `&`, `<`, `>`, `"` and `'` for XML text and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escaped `s`, shortened to `max` characters with an ellipsis.
fn esc_short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return esc(s);
    }
    esc(&(s.chars().take(max - 1).collect::<String>() + "…"))
}

/// A coordinate with one decimal (0 if not finite).
fn px(x: f64) -> String {
    format!("{:.1}", if x.is_finite() { x } else { 0.0 })
}

/// A number for people: about four significant digits, "n/a" if not finite.
fn num(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        return "n/a".into();
    }
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e6).contains(&a) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').into()
    } else {
        s
    }
}

/// Opening `<svg>` tag and chart title.
fn header(w: f64, h: f64, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\
         <text x=\"{x}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" \
         font-weight=\"bold\">{}</text>",
        esc(title),
        x = w / 2.0
    )
}

/// A small complete SVG saying "no data".
fn no_data(title: &str) -> String {
    header(WIDTH, 60.0, title)
        + "<text x=\"360\" y=\"45\" text-anchor=\"middle\" fill=\"#666\">no data</text></svg>"
}

/// Nice linear axis covering `lo..=hi`: (min, max, step), step 1, 2 or 5 · 10^k.
fn nice_axis(lo: f64, hi: f64) -> (f64, f64, f64) {
    let (mut lo, mut hi) = (lo, hi);
    if hi - lo <= 0.0 {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo, hi) = (lo - pad, hi + pad);
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

/// Horizontal bar chart (one row per bar, labels on the left), a vertical reference line at
/// `reference` (e.g. 1.0), the x axis with ticks and `x_label`. Returns a complete
/// `<svg ...>...</svg>` element with width/height/viewBox, with a `<title>` per bar (tooltip
/// text: label, value, interval).
///
/// Bars grow from `reference` to their value (from the axis minimum if `reference` is not
/// finite, in which case no reference line is drawn). A non-finite value gives an empty bar
/// at the reference; an interval with a non-finite end is not drawn. Values are clamped to
/// ±1e300. The axis covers the reference and every finite value and interval end.
pub fn bar_chart(title: &str, x_label: &str, bars: &[Bar], reference: f64) -> String {
    if bars.is_empty() {
        return no_data(title);
    }
    let fin = |x: f64| x.is_finite().then(|| x.clamp(-1e300, 1e300));
    let reference = fin(reference);
    let range = bars
        .iter()
        .flat_map(|b| [b.value, b.lo, b.hi])
        .filter_map(fin)
        .chain(reference)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
            (l.min(x), h.max(x))
        });
    let (lo, hi) = if range.0 <= range.1 {
        range
    } else {
        (0.0, 1.0)
    };
    let (min, max, step) = nice_axis(lo, hi);

    let label_chars = bars.iter().map(|b| b.label.chars().count().min(40)).max();
    let left = (label_chars.unwrap_or(0) as f64 * 7.0 + 10.0).clamp(60.0, 300.0) + 10.0;
    let (right, top, row) = (WIDTH - 20.0, 36.0, 24.0);
    let bottom = top + row * bars.len() as f64;
    let height = bottom + 48.0;
    let x = |v: f64| left + (v - min) / (max - min) * (right - left);
    let base = reference.unwrap_or(min);

    let mut s = header(WIDTH, height, title);
    // Axis, ticks and grid.
    let decimals = (-step.log10().floor()).clamp(0.0, 20.0) as usize;
    let ticks = (((max - min) / step).round() as usize).min(100);
    for i in 0..=ticks {
        let v = min + i as f64 * step;
        let (tx, label) = (px(x(v)), format!("{:.decimals$}", v + 0.0));
        let _ = write!(
            s,
            "<line x1=\"{tx}\" y1=\"{top}\" x2=\"{tx}\" y2=\"{b5}\" stroke=\"#ddd\"/>\
             <text x=\"{tx}\" y=\"{ty}\" text-anchor=\"middle\">{label}</text>",
            b5 = bottom + 5.0,
            ty = bottom + 18.0,
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"#333\"/>\
         <text x=\"{cx}\" y=\"{ly}\" text-anchor=\"middle\">{}</text>",
        esc(x_label),
        cx = px((left + right) / 2.0),
        ly = bottom + 38.0,
    );
    // Bars.
    for (i, b) in bars.iter().enumerate() {
        let (class, fill) = match b.kind {
            BarKind::Improved => ("improved", "#2e8b57"),
            BarKind::Regressed => ("regressed", "#d62728"),
            BarKind::Unchanged => ("unchanged", "#9e9e9e"),
            BarKind::Neutral => ("neutral", "#4c78a8"),
        };
        let cy = top + row * (i as f64 + 0.5);
        let (x0, x1) = (x(base), x(fin(b.value).unwrap_or(base)));
        let _ = write!(
            s,
            "<text x=\"{lx}\" y=\"{ty}\" text-anchor=\"end\">{}</text>\
             <rect class=\"bar {class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" \
             fill=\"{fill}\"><title>{}: {} [{}, {}]</title></rect>",
            esc_short(&b.label, 40),
            px(x0.min(x1)),
            px(cy - 7.0),
            px((x1 - x0).abs().max(1.0)),
            esc(&b.label),
            num(b.value),
            num(b.lo),
            num(b.hi),
            lx = left - 10.0,
            ty = px(cy + 4.0),
        );
        if let (Some(l), Some(h)) = (fin(b.lo), fin(b.hi)) {
            let (l, h, cy) = (px(x(l.min(h))), px(x(l.max(h))), px(cy));
            let _ = write!(
                s,
                "<path d=\"M{l} {cy}H{h}M{l} {a}V{b}M{h} {a}V{b}\" stroke=\"#222\" fill=\"none\"/>",
                a = px(top + row * (i as f64 + 0.5) - 5.0),
                b = px(top + row * (i as f64 + 0.5) + 5.0),
            );
        }
    }
    if let Some(r) = reference {
        let rx = px(x(r));
        let _ = write!(
            s,
            "<line x1=\"{rx}\" y1=\"{}\" x2=\"{rx}\" y2=\"{bottom}\" stroke=\"#333\" \
             stroke-dasharray=\"4 3\"/>",
            top - 6.0
        );
    }
    s + "</svg>"
}

/// Decade range `(lo, hi)` (exponents, `lo < hi`) covering the positive finite `values`.
fn decades(values: impl Iterator<Item = f64>) -> (i32, i32) {
    let (l, h) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v.log10()), h.max(v.log10()))
    });
    let (lo, hi) = (l.floor() as i32, h.ceil() as i32);
    (lo, hi.max(lo + 1))
}

/// Text of the tick at 10^k.
fn decade_label(k: i32) -> String {
    if (-3..=5).contains(&k) {
        num(10f64.powi(k))
    } else {
        format!("1e{k}")
    }
}

/// A roofline: log-log axes, operational intensity (flop/byte) on x, GFLOP/s on y; the roof
/// min(peak, bw*oi) drawn as a polyline (with the ridge point), each point a circle with a
/// `<title>` (its label, oi, GFLOP/s) and a small text label; points coloured by `group` (a
/// small fixed palette, with a legend).
///
/// Points whose `oi` or `gflops` is not finite and positive are skipped; with no valid point
/// the chart says "no data". The roof is drawn only if `peak_gflops` and `bandwidth_gbs` are
/// finite and positive. Axes span whole decades covering the points, the peak, a quarter to
/// four times the ridge intensity and two decades below the peak. Groups take palette colours
/// in order of first appearance (cycling after eight).
///
/// `memory_roofs` are further bandwidth roofs (`(label, GB/s)`: the cache levels), each a
/// dashed slope up to the peak.
pub fn roofline_chart(
    title: &str,
    peak_gflops: f64,
    bandwidth_gbs: f64,
    memory_roofs: &[(String, f64)],
    points: &[Point],
) -> String {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    let pts: Vec<&Point> = points.iter().filter(|p| ok(p.oi) && ok(p.gflops)).collect();
    if pts.is_empty() {
        return no_data(title);
    }
    let roof = (ok(peak_gflops) && ok(bandwidth_gbs) && ok(peak_gflops / bandwidth_gbs))
        .then_some((peak_gflops, bandwidth_gbs, peak_gflops / bandwidth_gbs));
    let (xs, ys) = match roof {
        Some((peak, _, ridge)) => (vec![ridge / 4.0, ridge * 4.0], vec![peak, peak / 100.0]),
        None => (vec![], vec![]),
    };
    let (x_lo, x_hi) = decades(pts.iter().map(|p| p.oi).chain(xs).filter(|&v| ok(v)));
    let (y_lo, y_hi) = decades(pts.iter().map(|p| p.gflops).chain(ys).filter(|&v| ok(v)));

    let mut groups: Vec<&str> = Vec::new();
    for p in &pts {
        if !groups.contains(&p.group.as_str()) {
            groups.push(&p.group);
        }
    }
    let (left, right, top) = (70.0, WIDTH - 160.0, 36.0);
    let (bottom, height) = (top + 380.0, top + 380.0 + 50.0);
    let x = |v: f64| left + (v.log10() - x_lo as f64) / f64::from(x_hi - x_lo) * (right - left);
    let y = |v: f64| bottom - (v.log10() - y_lo as f64) / f64::from(y_hi - y_lo) * (bottom - top);

    let mut s = header(WIDTH, height, title);
    // Decade grid and labels (at most ~60 labels per axis, so that extreme ranges stay small).
    let every = |span: i32| (span / 60 + 1) as usize;
    for k in (x_lo..=x_hi).step_by(every(x_hi - x_lo)) {
        let tx = px(x(10f64.powi(k)));
        let _ = write!(
            s,
            "<line x1=\"{tx}\" y1=\"{top}\" x2=\"{tx}\" y2=\"{bottom}\" stroke=\"#ddd\"/>\
             <text x=\"{tx}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            decade_label(k)
        );
    }
    for k in (y_lo..=y_hi).step_by(every(y_hi - y_lo)) {
        let ty = px(y(10f64.powi(k)));
        let _ = write!(
            s,
            "<line x1=\"{left}\" y1=\"{ty}\" x2=\"{right}\" y2=\"{ty}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{ty}\" dy=\"4\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            decade_label(k)
        );
    }
    let _ = write!(
        s,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">Operational intensity (flop/byte)</text>\
         <text x=\"18\" y=\"{my}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {my})\">\
         GFLOP/s</text>",
        right - left,
        bottom - top,
        px((left + right) / 2.0),
        bottom + 38.0,
        my = px((top + bottom) / 2.0),
    );
    if let Some((peak, bw, ridge)) = roof {
        // Enter the plot where the slope reaches the bottom edge or at the left edge.
        let x0 = 10f64.powi(x_lo).max(10f64.powi(y_lo) / bw);
        let x_max = 10f64.powi(x_hi);
        let (rx, ry) = (px(x(ridge)), px(y(peak)));
        let _ = write!(
            s,
            "<polyline points=\"{},{} {rx},{ry} {},{ry}\" fill=\"none\" stroke=\"#111\" \
             stroke-width=\"2\"/>\
             <line x1=\"{rx}\" y1=\"{ry}\" x2=\"{rx}\" y2=\"{bottom}\" stroke=\"#888\" \
             stroke-dasharray=\"4 3\"/>\
             <text x=\"{rx}\" y=\"{}\" dx=\"4\" font-size=\"10\" fill=\"#555\">ridge {} flop/B</text>\
             <text x=\"{}\" y=\"{ry}\" dy=\"-5\" text-anchor=\"end\" font-size=\"10\">\
             peak {} GFLOP/s, {} GB/s</text>",
            px(x(x0)),
            px(y(bw * x0)),
            px(x(x_max)),
            bottom - 6.0,
            num(ridge),
            right - 4.0,
            num(peak),
            num(bw),
        );
    }
    if let Some((peak, _, _)) = roof {
        for (label, bw) in memory_roofs.iter().filter(|(_, bw)| ok(*bw)) {
            let x0 = 10f64.powi(x_lo).max(10f64.powi(y_lo) / bw);
            let ridge = peak / bw;
            if ridge <= x0 {
                continue;
            }
            let (rx, ry) = (px(x(ridge)), px(y(peak)));
            let _ = write!(
                s,
                "<polyline points=\"{},{} {rx},{ry}\" fill=\"none\" stroke=\"#555\" \
                 stroke-width=\"1\" stroke-dasharray=\"6 3\"/>\
                 <text x=\"{rx}\" y=\"{ry}\" dx=\"-4\" dy=\"14\" text-anchor=\"end\" \
                 font-size=\"10\" fill=\"#555\">{} {} GB/s</text>",
                px(x(x0)),
                px(y(bw * x0)),
                esc(label),
                num(*bw),
            );
        }
    }
    for p in &pts {
        let g = groups.iter().position(|g| *g == p.group).unwrap_or(0);
        let (cx, cy) = (px(x(p.oi)), px(y(p.gflops)));
        let _ = write!(
            s,
            "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"4\" fill=\"{}\"><title>{} ({}): {} flop/B, {} \
             GFLOP/s</title></circle>\
             <text x=\"{cx}\" y=\"{cy}\" dx=\"6\" dy=\"-4\" font-size=\"10\">{}</text>",
            PALETTE[g % PALETTE.len()],
            esc(&p.label),
            esc(&p.group),
            num(p.oi),
            num(p.gflops),
            esc_short(&p.label, 24),
        );
    }
    for (i, g) in groups.iter().enumerate() {
        let ly = top + 8.0 + 18.0 * i as f64;
        let _ = write!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{}\">{}</text>",
            right + 16.0,
            px(ly - 9.0),
            PALETTE[i % PALETTE.len()],
            right + 32.0,
            px(ly),
            esc_short(g, 18),
        );
    }
    s + "</svg>"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that tags balance, entities are known and no number is NaN/inf.
    fn assert_valid(svg: &str) {
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        let mut stack = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            let end = rest[i..].find('>').expect("unclosed tag") + i;
            let tag = &rest[i + 1..end];
            assert!(!tag.contains('<'), "{tag}");
            let name = tag.split_whitespace().next().unwrap_or("");
            if let Some(closing) = name.strip_prefix('/') {
                assert_eq!(stack.pop(), Some(closing), "mismatched </{closing}>");
            } else if !tag.ends_with('/') {
                stack.push(name);
            }
            rest = &rest[end + 1..];
        }
        assert!(stack.is_empty(), "unclosed {stack:?}");
        for (i, _) in svg.match_indices('&') {
            let entity = &svg[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "bad entity at {i}"
            );
        }
    }

    fn bar(label: &str, value: f64, lo: f64, hi: f64, kind: BarKind) -> Bar {
        Bar {
            label: label.into(),
            value,
            lo,
            hi,
            kind,
        }
    }

    fn point(label: &str, group: &str, oi: f64, gflops: f64) -> Point {
        Point {
            label: label.into(),
            group: group.into(),
            oi,
            gflops,
        }
    }

    #[test]
    fn escaping_and_numbers() {
        assert_eq!(
            esc(r#"a<b & "c">'"#),
            "a&lt;b &amp; &quot;c&quot;&gt;&apos;"
        );
        assert_eq!(num(1.23456), "1.235");
        assert_eq!(num(1200.0), "1200");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(f64::NAN), "n/a");
        assert_eq!(nice_axis(0.93, 1.27), (0.9, 1.3, 0.1));
        assert_eq!(nice_axis(1.0, 1.0), (0.9, 1.1, 0.05));
        assert_eq!(decades([0.3, 20.0].into_iter()), (-1, 2));
        assert_eq!(decades([10.0].into_iter()), (1, 2));
    }

    #[test]
    fn bar_chart_is_valid() {
        let bars = vec![
            bar("fast <kernel> & \"co\"", 0.8, 0.75, 0.86, BarKind::Improved),
            bar("slow", 1.25, 1.2, 1.3, BarKind::Regressed),
            bar("same", 1.01, 0.97, 1.05, BarKind::Unchanged),
            bar("odd", f64::NAN, f64::NEG_INFINITY, 2.0, BarKind::Neutral),
            bar("huge", 1e308, -f64::MAX, f64::INFINITY, BarKind::Neutral),
        ];
        let svg = bar_chart("Ratios <new/base>", "time ratio", &bars, 1.0);
        assert_valid(&svg);
        assert_eq!(svg.matches("<rect").count(), bars.len());
        assert_eq!(svg.matches("<title>").count(), bars.len());
        assert!(svg.contains("fast &lt;kernel&gt; &amp; &quot;co&quot;"));
        assert!(svg.contains("Ratios &lt;new/base&gt;") && !svg.contains("<kernel>"));
        assert!(svg.contains("viewBox=\"0 0 720 "));
        // Axis ticks include the reference and the intervals.
        let three = bar_chart("t", "x", &bars[..3], 1.0);
        assert!(three.contains(">0.6</text>") && three.contains(">1.4</text>"));
        assert!(three.contains(">1.0</text>"));
        assert_valid(&bar_chart("t", "x", &bars[3..4], f64::NAN));
    }

    #[test]
    fn roofline_is_valid() {
        let pts = vec![
            point("dot", "blas1", 0.125, 9.0),
            point("gemm \"big\"", "blas3", 40.0, 800.0),
            point("bad oi", "blas1", 0.0, 1.0),
            point("bad gflops", "blas1", 1.0, f64::NAN),
            point("neg", "x<y", -1.0, 5.0),
            point("stencil", "x<y", 0.5, 30.0),
        ];
        let svg = roofline_chart("Roofline & co", 1000.0, 100.0, &[], &pts);
        assert_valid(&svg);
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("ridge 10 flop/B") && svg.contains("x&lt;y"));
        assert!(svg.contains("gemm &quot;big&quot; (blas3): 40 flop/B, 800 GFLOP/s"));
        // Three groups in the legend, one frame.
        assert_eq!(svg.matches("<rect").count(), 1 + 3);
        // No roof for a bad peak; extreme values stay finite.
        let odd = roofline_chart("t", f64::NAN, -1.0, &[], &[point("a", "g", 1e-300, 1e300)]);
        assert_valid(&odd);
        assert_eq!(odd.matches("<circle").count(), 1);
        assert!(!odd.contains("<polyline"));
    }

    #[test]
    fn empty_inputs_say_no_data() {
        for svg in [
            bar_chart("t", "x", &[], 1.0),
            roofline_chart("t", 100.0, 10.0, &[], &[]),
            roofline_chart("t", 100.0, 10.0, &[], &[point("z", "g", 0.0, 0.0)]),
        ] {
            assert_valid(&svg);
            assert!(svg.contains("no data"));
        }
    }
}

//! Statistics for comparing two sets of benchmark timing samples.
//!
//! Times are "larger = slower". A benchmark is compared against its baseline
//! with a Mann-Whitney U test (is there a shift at all?) and a bootstrap
//! confidence interval of the ratio of medians (how large is it?).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::f64::consts::{PI, SQRT_2};

/// How one benchmark changed against its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Significantly faster, by more than the noise band.
    Improved,
    /// Significantly slower, by more than the noise band.
    Regressed,
    /// Neither of the above.
    Unchanged,
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Class::Improved => "improved",
            Class::Regressed => "regressed",
            Class::Unchanged => "unchanged",
        })
    }
}

/// The result of comparing new samples against baseline samples.
#[derive(Debug, Clone, Copy)]
pub struct Comparison {
    /// Median of the baseline samples.
    pub base_median: f64,
    /// Median of the new samples.
    pub new_median: f64,
    /// new_median / base_median.
    pub ratio: f64,
    /// Bootstrap `1 - alpha` percentile confidence interval of ratio.
    pub ratio_ci: (f64, f64),
    /// Two-sided Mann-Whitney U test p-value.
    pub p_value: f64,
    /// The verdict, see [`compare`].
    pub class: Class,
}

/// Parameters of [`compare`].
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// Significance level (default 0.05).
    pub alpha: f64,
    /// Relative change treated as noise (default 0.05 = ±5%).
    pub noise: f64,
    /// Bootstrap resamples (default 2000).
    pub resamples: usize,
    /// Seed of the bootstrap (default fixed, so that reports are repeatable).
    pub seed: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            noise: 0.05,
            resamples: 2000,
            seed: 0x5EED_BE4C_4001_0F0F,
        }
    }
}

/// Median of `v` (mean of the two middle values for even lengths); NaN for an empty slice.
pub fn median(v: &[f64]) -> f64 {
    median_in_place(&mut v.to_vec())
}

/// Median that reorders `s` (selection, not a full sort).
fn median_in_place(s: &mut [f64]) -> f64 {
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    let (lower, &mut hi, _) = s.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return hi;
    }
    let lo = lower.iter().copied().max_by(f64::total_cmp).unwrap_or(hi);
    lo / 2.0 + hi / 2.0
}

/// Mann-Whitney U test of `a` against `b`.
///
/// Returns `(U, p)`: U of `a` = #{(i, j): a_i > b_j} + ½ #{ties}, computed from
/// midranks, and the two-sided p-value. Without ties and with
/// `a.len() + b.len() <= 20` the exact distribution of U is used; otherwise the
/// normal approximation with tie-corrected variance and a continuity
/// correction of 0.5. An empty set, or all values equal, gives `p = 1`
/// (U is 0 when a set is empty).
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return (0.0, 1.0);
    }
    let mut all: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).collect();
    all.extend(b.iter().map(|&x| (x, false)));
    all.sort_by(|p, q| p.0.total_cmp(&q.0));
    let n = all.len();
    let (mut rank_sum_a, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && all[j].0 == all[i].0 {
            j += 1;
        }
        // Positions i..j hold ranks i+1..=j; each gets their mean.
        let midrank = (i + j + 1) as f64 / 2.0;
        rank_sum_a += midrank * all[i..j].iter().filter(|p| p.1).count() as f64;
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    let (f1, f2, nf) = (n1 as f64, n2 as f64, n as f64);
    let u = rank_sum_a - f1 * (f1 + 1.0) / 2.0;
    if ties == 0.0 && n <= 20 {
        return (u, exact_p(n1, n2, u.round() as usize));
    }
    let var = f1 * f2 / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    if var.is_nan() || var <= 0.0 {
        return (u, 1.0);
    }
    let z = ((u - f1 * f2 / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    // Two-sided: 2 · (1 − Φ(z)) = erfc(z / √2).
    (u, erfc(z / SQRT_2).min(1.0))
}

/// Exact two-sided p-value of U = `u` for sample sizes `n1`, `n2` (no ties).
///
/// Under H0 the ranks of `a` are a uniformly random `n1`-subset of `1..=n`;
/// `ways[k][s]` counts the `k`-subsets of the ranks seen so far with sum `s`,
/// and U = rank sum − n1(n1+1)/2.
fn exact_p(n1: usize, n2: usize, u: usize) -> f64 {
    let n = n1 + n2;
    let max_sum = n * (n + 1) / 2;
    let mut ways = vec![vec![0.0f64; max_sum + 1]; n1 + 1];
    ways[0][0] = 1.0;
    for r in 1..=n {
        for k in (1..=n1.min(r)).rev() {
            let (fewer, more) = ways.split_at_mut(k);
            for (s, w) in more[0].iter_mut().enumerate().skip(r) {
                *w += fewer[k - 1][s - r];
            }
        }
    }
    let offset = n1 * (n1 + 1) / 2;
    let dist = &ways[n1][offset..=offset + n1 * n2];
    let u = u.min(n1 * n2);
    let total: f64 = dist.iter().sum();
    let below: f64 = dist[..=u].iter().sum();
    let above: f64 = dist[u..].iter().sum();
    (2.0 * below.min(above) / total).min(1.0)
}

/// Complementary error function, for `x >= 0` via the series
/// erf(x) = 2/√π · e^(−x²) · Σ_k 2^k x^(2k+1) / (1·3···(2k+1)) below 2.5 and the
/// continued fraction erfc(x) = e^(−x²)/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + …)))) above.
fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.5 {
        let (mut term, mut sum, mut k) = (x, x, 0.0);
        while term > sum * 1e-17 {
            k += 1.0;
            term *= 2.0 * x * x / (2.0 * k + 1.0);
            sum += term;
        }
        1.0 - 2.0 / PI.sqrt() * (-x * x).exp() * sum
    } else {
        let mut t = x;
        for k in (1..=80).rev() {
            t = x + (k as f64 / 2.0) / t;
        }
        (-x * x).exp() / (PI.sqrt() * t)
    }
}

/// Bootstrap percentile confidence interval of median(new) / median(base).
///
/// Each resample draws `base` and `new` independently with replacement; the
/// interval holds the central `level` (e.g. 0.95) share of the finite resampled
/// ratios, with linear interpolation between order statistics. Deterministic
/// for a given `seed`: ChaCha8 is value-stable across platforms, so a report repeats.
/// Returns `(NaN, NaN)` for empty inputs, `resamples == 0` or when no resampled
/// ratio is finite; a non-finite `level` counts as 0.95.
pub fn bootstrap_ratio_ci(
    base: &[f64],
    new: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64) {
    if base.is_empty() || new.is_empty() || resamples == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (base, new) = (sorted(base), sorted(new));
    let (mut cb, mut cn) = (vec![0; base.len()], vec![0; new.len()]);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mb = resampled_median(&mut rng, &base, &mut cb);
        let r = resampled_median(&mut rng, &new, &mut cn) / mb;
        if r.is_finite() {
            ratios.push(r);
        }
    }
    if ratios.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    ratios.sort_by(f64::total_cmp);
    let level = if level.is_finite() {
        level.clamp(0.0, 1.0)
    } else {
        0.95
    };
    let tail = (1.0 - level) / 2.0;
    (quantile(&ratios, tail), quantile(&ratios, 1.0 - tail))
}

/// A sorted copy of `v`.
fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Median of one resample with replacement of the non-empty sorted `s`.
///
/// As `s` is sorted, the resample's k-th smallest value is `s` at the k-th
/// smallest drawn index, so counting the draws per index replaces sorting.
fn resampled_median(rng: &mut ChaCha8Rng, s: &[f64], counts: &mut [usize]) -> f64 {
    let n = s.len();
    counts.fill(0);
    for _ in 0..n {
        counts[rng.random_range(0..n)] += 1;
    }
    let kth = |k: usize| {
        let mut seen = 0;
        for (i, &c) in counts.iter().enumerate() {
            seen += c;
            if seen > k {
                return s[i];
            }
        }
        s[n - 1]
    };
    if n % 2 == 1 {
        kth(n / 2)
    } else {
        kth(n / 2 - 1) / 2.0 + kth(n / 2) / 2.0
    }
}

/// Quantile `q` in `[0, 1]` of non-empty sorted data, interpolating linearly.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    match sorted.get(i + 1) {
        Some(&next) => sorted[i] + (pos - i as f64) * (next - sorted[i]),
        None => sorted[i],
    }
}

/// Compares `new` timing samples against `base` samples.
///
/// Regressed iff `p < alpha` and the CI's lower end > `1 + noise`; Improved iff
/// `p < alpha` and the CI's upper end < `1 - noise` (not `1/(1 + noise)`);
/// otherwise Unchanged (including when anything is NaN, e.g. an empty set).
/// The CI level is `1 - alpha`.
pub fn compare(base: &[f64], new: &[f64], t: &Thresholds) -> Comparison {
    let (base_median, new_median) = (median(base), median(new));
    let ratio_ci = bootstrap_ratio_ci(base, new, 1.0 - t.alpha, t.resamples, t.seed);
    let (_, p_value) = mann_whitney_u(base, new);
    let significant = p_value < t.alpha;
    let class = if significant && ratio_ci.0 > 1.0 + t.noise {
        Class::Regressed
    } else if significant && ratio_ci.1 < 1.0 - t.noise {
        Class::Improved
    } else {
        Class::Unchanged
    };
    Comparison {
        base_median,
        new_median,
        ratio: new_median / base_median,
        ratio_ci,
        p_value,
        class,
    }
}

/// Geometric mean, exp(mean(ln v)); NaN if `v` is empty or holds a value that
/// is not finite and positive.
pub fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() || v.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol * y.abs().max(1e-300)
    }

    /// `n` samples `scale · exp(0.05 · z)`, z standard normal (Box-Muller).
    fn lognormal(rng: &mut ChaCha8Rng, scale: f64, n: usize) -> Vec<f64> {
        let mut unit = || rng.random::<f64>();
        (0..n)
            .map(|_| {
                let (u1, u2) = (1.0 - unit(), unit());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos();
                scale * (0.05 * z).exp()
            })
            .collect()
    }

    #[test]
    fn classes_serialize_as_reports_spell_them() {
        for (class, name) in [
            (Class::Improved, "\"improved\""),
            (Class::Regressed, "\"regressed\""),
            (Class::Unchanged, "\"unchanged\""),
        ] {
            assert_eq!(serde_json::to_string(&class).unwrap(), name);
            assert_eq!(serde_json::from_str::<Class>(name).unwrap(), class);
        }
    }

    #[test]
    fn medians_and_geomean() {
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(close(geomean(&[1.0, 4.0, 16.0]), 4.0, 1e-12));
        assert!(geomean(&[]).is_nan() && geomean(&[1.0, 0.0]).is_nan());
    }

    #[test]
    fn erfc_matches_reference() {
        // References: Python's math.erfc.
        for (x, r) in [
            (0.3, 0.6713732405408726),
            (1.0, 0.15729920705028513),
            (2.0, 0.004677734981047265),
            (2.4999, 0.0004071699003334514),
            (2.5, 0.0004069520174449589),
            (3.0, 2.2090496998585438e-05),
            (4.0, 1.541725790028002e-08),
            (6.0, 2.1519736712498916e-17),
        ] {
            assert!(close(erfc(x), r, 1e-9), "erfc({x}) = {}", erfc(x));
        }
        assert_eq!(erfc(0.0), 1.0);
        assert!(close(erfc(-1.0), 2.0 - 0.15729920705028513, 1e-12));
    }

    #[test]
    fn mann_whitney_exact_small() {
        // All 20 = C(6,3) rank subsets are equally likely; U = 0 only for {1,2,3},
        // so P(U <= 0) = 1/20 and the two-sided p = 0.1.
        assert_eq!(
            mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]),
            (0.0, 0.1)
        );
        assert_eq!(
            mann_whitney_u(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]),
            (9.0, 0.1)
        );
        // a > b pairs: 3>2, 5>2, 5>4, so U = 3. Counts of U = 0..9 for n1 = n2 = 3 are
        // 1,1,2,3,3,3,3,2,1,1; P(U <= 3) = 7/20, so p = 0.7.
        let (u, p) = mann_whitney_u(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]);
        assert_eq!(u, 3.0);
        assert!(close(p, 0.7, 1e-12));
        // n1 = n2 = 10, complete separation: p = 2 / C(20,10) = 2 / 184756.
        let a: Vec<f64> = (0..10).map(f64::from).collect();
        let b: Vec<f64> = (10..20).map(f64::from).collect();
        let (u, p) = mann_whitney_u(&a, &b);
        assert_eq!(u, 0.0);
        assert!(close(p, 2.0 / 184_756.0, 1e-12));
    }

    #[test]
    fn mann_whitney_normal_approximation() {
        // a = 0..15, b = a + 7.5; a_i = 8+k beats k+1 values of b, U = Σ_{k=0..6} (k+1) = 28.
        // μ = 15·15/2 = 112.5, σ² = 15·15·31/12 = 581.25, z = (84.5 − 0.5)/σ = 3.48416,
        // p = erfc(z/√2) = 4.936885181146148e-4 (Python math.erfc).
        let a: Vec<f64> = (0..15).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 7.5).collect();
        let (u, p) = mann_whitney_u(&a, &b);
        assert_eq!(u, 28.0);
        assert!(close(p, 4.936885181146148e-4, 1e-9), "p = {p}");
    }

    #[test]
    fn mann_whitney_ties_and_degenerate() {
        // Sorted: 1a 2a 2a 2b 3a 3b 3b 4b; midranks 1, 3, 6, 8; R_a = 1+3+3+6 = 13, U = 13−10 = 3.
        // Ties t = 3, 3: Σ(t³−t) = 48; σ² = 16/12 · (9 − 48/56) = 10.857142857,
        // z = (5 − 0.5)/σ = 1.365698, p = erfc(z/√2) = 0.17203370892182296.
        let (u, p) = mann_whitney_u(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 3.0, 4.0]);
        assert_eq!(u, 3.0);
        assert!(close(p, 0.17203370892182296, 1e-9), "p = {p}");
        assert_eq!(mann_whitney_u(&[5.0; 4], &[5.0; 6]), (12.0, 1.0));
        assert_eq!(mann_whitney_u(&[], &[1.0]), (0.0, 1.0));
        assert_eq!(mann_whitney_u(&[1.0], &[]).1, 1.0);
    }

    #[test]
    fn bootstrap_is_deterministic() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (a, b) = (lognormal(&mut rng, 1.0, 15), lognormal(&mut rng, 1.1, 15));
        let ci = bootstrap_ratio_ci(&a, &b, 0.95, 500, 42);
        assert_eq!(ci, bootstrap_ratio_ci(&a, &b, 0.95, 500, 42));
        assert_ne!(ci, bootstrap_ratio_ci(&a, &b, 0.95, 500, 43));
        assert!(ci.0 <= ci.1);
        let ratio = median(&b) / median(&a);
        assert!(ci.0 <= ratio && ratio <= ci.1);
        assert_eq!(
            bootstrap_ratio_ci(&[2.0; 5], &[3.0; 5], 0.95, 10, 1),
            (1.5, 1.5)
        );
        assert!(bootstrap_ratio_ci(&[], &a, 0.95, 10, 1).0.is_nan());
        assert!(bootstrap_ratio_ci(&[0.0; 3], &a, 0.95, 10, 1).1.is_nan());
    }

    #[test]
    fn planted_changes_are_classified() {
        let t = Thresholds::default();
        let mut rng = ChaCha8Rng::seed_from_u64(2024);
        let base = lognormal(&mut rng, 1.0, 15);
        let slow = compare(&base, &lognormal(&mut rng, 1.2, 15), &t);
        assert_eq!(slow.class, Class::Regressed, "{slow:?}");
        assert!(close(slow.ratio, 1.2, 0.1) && slow.p_value < 1e-3);
        let fast = compare(&base, &lognormal(&mut rng, 1.0 / 1.2, 15), &t);
        assert_eq!(fast.class, Class::Improved, "{fast:?}");
        let empty = compare(&[], &base, &t);
        assert_eq!(empty.class, Class::Unchanged);
        assert_eq!(empty.p_value, 1.0);
    }

    #[test]
    fn no_change_is_rarely_flagged() {
        // 500 resamples (not 2000) keep this fast in debug builds; only the CI's precision changes.
        let t = Thresholds {
            resamples: 500,
            ..Thresholds::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let flagged = (0..1000)
            .filter(|_| {
                let (a, b) = (lognormal(&mut rng, 1.0, 15), lognormal(&mut rng, 1.0, 15));
                compare(&a, &b, &t).class != Class::Unchanged
            })
            .count();
        let share = flagged as f64 / 1000.0;
        println!("no-change pairs flagged: {flagged}/1000 = {share}");
        assert!(share <= 0.01);
    }
}

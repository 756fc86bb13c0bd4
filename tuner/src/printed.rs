//! Whether a tuned program prints the results its original prints.
//!
//! A program's output mixes results with what changes from run to run of the same
//! binary (a printed timing, an address, a thread's id). The original is run more than
//! once by the whole-program check, so what differs between its own runs is known, and
//! is not a result. A timing printed with three decimals can read the same in two runs
//! (`0.001`) and another in a third, so the unit is a column: the k-th word of the
//! lines of n words of one section (standard output, or one file the run wrote), which
//! differs between the original's runs in any such line (a table's time column). Every other word of the tuned program's output must be the
//! original's, a number up to the rounding of its last printed digit (a value that
//! differs in its last bits can round the other way). Where every changed nest computed
//! in the user's order ([`Order::Kept`]), a number may also differ by a
//! relative 1e-9 (products contracted into FMAs otherwise in differently shaped code);
//! where one did not ([`Order::Changed`]: a sum added in another order), it may not: a
//! sum of `float`s added in another order differs in its sixth digit, one of 2 million
//! `double`s in its eleventh, and either is another result.

use std::collections::BTreeSet;

/// Whether the changed nests compute in the original's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Every kept recipe computed in the user's order: its cutout outputs were the
    /// saved ones bit for bit, or the nest's bit for bit with contraction off
    /// (`report::Candidate::in_order`).
    Kept,
    /// Some kept recipe's were not (a reduction vectorized, parallel or tiled).
    Changed,
}

/// Whether `tuned` prints what the runs of the original in `originals` print (see the
/// module documentation). With no original output to compare with, it does.
pub fn same_results(originals: &[Vec<u8>], tuned: &[u8], order: Order) -> bool {
    if originals.is_empty() || originals.iter().any(|o| o == tuned) {
        return true;
    }
    let lines = |b: &[u8]| -> Vec<Vec<String>> {
        String::from_utf8_lossy(b)
            .lines()
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect()
    };
    let shape = |t: &[Vec<String>]| t.iter().map(Vec::len).collect::<Vec<_>>();
    let got = lines(tuned);
    // The original's runs printed in the same shape (a run in another is compared
    // with none).
    let refs: Vec<Vec<Vec<String>>> = originals
        .iter()
        .map(|o| lines(o))
        .filter(|t| shape(t) == shape(&got))
        .collect();
    let Some(first) = refs.first() else {
        return false;
    };
    // The section of each line: standard output, then each file the run wrote (under
    // its `== file NAME ==` line; see `crate::bench::written_files`), a table of its
    // own.
    let mut section = 0;
    let sections: Vec<usize> = first
        .iter()
        .map(|l| {
            if l.len() == 4 && l[0] == "==" && l[1] == "file" && l[3] == "==" {
                section += 1;
            }
            section
        })
        .collect();
    // Columns (section, words per line, word) that differ between the original's own
    // runs.
    let mut varying: BTreeSet<(usize, usize, usize)> = BTreeSet::new();
    for (l, line) in first.iter().enumerate() {
        for (k, w) in line.iter().enumerate() {
            if refs.iter().any(|r| &r[l][k] != w) {
                varying.insert((sections[l], line.len(), k));
            }
        }
    }
    got.iter().zip(first).enumerate().all(|(l, (g, want))| {
        g.iter().zip(want).enumerate().all(|(k, (g, w))| {
            varying.contains(&(sections[l], want.len(), k)) || g == w || same_number(w, g, order)
        })
    })
}

/// `a` and `b` are the same number as printed: the same words around it (`sum=`,
/// `(`, `s`), values at most one unit of the last printed digit apart, or, where the
/// order is kept, a relative 1e-9.
fn same_number(a: &str, b: &str, order: Order) -> bool {
    let (Some((pa, xa, sa)), Some((pb, xb, sb))) = (number(a), number(b)) else {
        return false;
    };
    if pa != pb || sa != sb {
        return false;
    }
    let (Ok(x), Ok(y)) = (xa.parse::<f64>(), xb.parse::<f64>()) else {
        return false;
    };
    let d = (x - y).abs();
    d <= last_digit(xa).max(last_digit(xb)) * 1.000001
        || (order == Order::Kept && d <= 1e-9 * x.abs().max(y.abs()))
}

/// A word split into what stands before its number, the number, and what follows;
/// None where no number stands apart from letters and digits around it (`fnv=00ab`,
/// `0x1f` are words).
fn number(w: &str) -> Option<(&str, &str, &str)> {
    let is_num = |c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E');
    let start = w.find(|c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+'))?;
    let len = w[start..]
        .find(|c: char| !is_num(c))
        .unwrap_or(w.len() - start);
    let (before, x, after) = (&w[..start], &w[start..start + len], &w[start + len..]);
    let apart = !before.ends_with(|c: char| c.is_alphanumeric())
        && !after.starts_with(|c: char| c.is_alphanumeric());
    (apart && x.contains(|c: char| c.is_ascii_digit())).then_some((before, x, after))
}

/// One unit of the last digit printed in `x` (`32019.972656`: 1e-6; `1.25e+05`: 1e3;
/// `42`: 1).
fn last_digit(x: &str) -> f64 {
    let (mantissa, exp) = match x.find(['e', 'E']) {
        Some(k) => (&x[..k], x[k + 1..].parse::<i32>().unwrap_or(0)),
        None => (x, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
    10f64.powi(exp - decimals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outs(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn a_timing_that_differs_between_the_originals_runs_is_not_a_result() {
        let originals = outs(&[
            "s000\t0.007\t512066944.000000\ns118\t0.140\t32019.972656\n",
            "s000\t0.008\t512066944.000000\ns118\t0.140\t32019.972656\n",
        ]);
        // Faster, the same checksums (s118's time read the same in the original's
        // runs: its column is a time in s000's line).
        assert!(same_results(
            &originals,
            b"s000\t0.004\t512066944.000000\ns118\t0.090\t32019.972656\n",
            Order::Kept
        ));
        // A float sum added in another order: its sixth digit differs.
        assert!(!same_results(
            &originals,
            b"s000\t0.004\t512066944.000000\ns118\t0.090\t32020.089844\n",
            Order::Kept
        ));
        // Another word count, another word.
        assert!(!same_results(&originals, b"s000\t0.004\n", Order::Kept));
        assert!(!same_results(
            &originals,
            b"s000\t0.004\t512066944.000000\ns119\t0.090\t32019.972656\n",
            Order::Kept
        ));
    }

    #[test]
    fn a_number_may_round_the_other_way_in_its_last_digit() {
        let originals = outs(&["C: n=4 sum=1.2345678901e+05\n0.25 (ok)\n"]);
        assert!(same_results(
            &originals,
            b"C: n=4 sum=1.2345678902e+05\n0.26 (ok)\n",
            Order::Kept
        ));
        // Within a relative 1e-9 (FMAs contracted otherwise), beyond it. Where a
        // changed nest computed its cutout in another order, the relative 1e-9 is a sum
        // added in another order: only the last digit may round the other way.
        for (got, kept, changed) in [
            (
                &b"C: n=4 sum=1.2345678904e+05\n0.25 (ok)\n"[..],
                true,
                false,
            ),
            (&b"C: n=4 sum=1.2345678902e+05\n0.25 (ok)\n"[..], true, true),
        ] {
            assert_eq!(same_results(&originals, got, Order::Kept), kept);
            assert_eq!(same_results(&originals, got, Order::Changed), changed);
        }
        assert!(same_results(
            &originals,
            b"C: n=4 sum=1.2345678904e+05\n0.25 (ok)\n",
            Order::Kept
        ));
        assert!(!same_results(
            &originals,
            b"C: n=4 sum=1.2345679901e+05\n0.25 (ok)\n",
            Order::Kept
        ));
        assert!(!same_results(
            &originals,
            b"C: n=4 sum=1.2345678901e+05\n0.28 (ok)\n",
            Order::Kept
        ));
        assert!(!same_results(
            &originals,
            b"C: n=4 sum=1.2345678901e+05\n0.25 (no)\n",
            Order::Kept
        ));
        // No original output: nothing to tell.
        assert!(same_results(&[], b"anything", Order::Kept));
    }

    #[test]
    fn a_file_written_is_a_table_of_its_own() {
        // The time printed on standard output varies; the file's sum in the same
        // column of a line of two words does not, and is a result.
        let originals = outs(&[
            "dot 0.131\n\n== file out.txt ==\ndot 7983.841797\n",
            "dot 0.129\n\n== file out.txt ==\ndot 7983.841797\n",
        ]);
        assert!(same_results(
            &originals,
            b"dot 0.017\n\n== file out.txt ==\ndot 7983.841797\n",
            Order::Kept
        ));
        assert!(!same_results(
            &originals,
            b"dot 0.017\n\n== file out.txt ==\ndot 7983.857422\n",
            Order::Kept
        ));
    }

    #[test]
    fn last_digits() {
        assert_eq!(last_digit("42"), 1.0);
        assert!((last_digit("32019.972656") - 1e-6).abs() < 1e-18);
        assert!((last_digit("1.25e+05") - 1e3).abs() < 1e-9);
        assert_eq!(number("sum=1.5e+03,"), Some(("sum=", "1.5e+03", ",")));
        assert_eq!(number("fnv=00ab"), None);
        assert_eq!(number("0x1f"), None);
        assert_eq!(number("(0.25)"), Some(("(", "0.25", ")")));
        assert_eq!(number("ok"), None);
    }
}

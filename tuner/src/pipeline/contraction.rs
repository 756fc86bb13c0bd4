//! Products contracted otherwise are not sums in another order. A candidate whose
//! outputs are not the saved ones bit for bit is, by default, taken to add in another
//! order, and is given up where the tuned program prints other results
//! (`ApplyReport::exact_only`). Some compute in the user's order all the same and
//! differ only where gcc contracted a product and an addition into one FMA in one
//! build and not in the other: a register tile adds each product in the original
//! order with FMAs, where gcc may have vectorized the original's products and added
//! them one by one (correlation's `s += data[k][i] * data[k][j]`). Each verified
//! candidate that beat the baseline and was not bit for bit is built once more with
//! `-ffp-contract=off`, as is the nest, and run once: where both write the same bits,
//! it is marked [`Candidate::same_order`], the tuned program is compared with the
//! rounding of a contracted product allowed (`printed::Order::Kept`), and it is not
//! given up for printing numbers that differ in their last digits.

use super::Pipeline;
use crate::nest_bench::NestBench;
use crate::report::Candidate;
use crate::Result;

impl Pipeline {
    /// Marks the candidates of `bench`'s nest that compute in the user's order but for
    /// contracted products (none with `--reassociate`, which accepts any order).
    pub(super) fn same_order(&self, bench: &NestBench, candidates: &mut [Candidate]) -> Result<()> {
        if self.reassociate {
            return Ok(());
        }
        let asked: Vec<usize> = (0..candidates.len())
            .filter(|&i| {
                let c = &candidates[i];
                c.stats.is_some() && c.why.is_empty() && !c.exact && c.speedup > 1.0
            })
            .collect();
        let recipes: Vec<&ir::transform::Recipe> =
            asked.iter().map(|&i| &candidates[i].recipe).collect();
        let answers = bench.same_order(&recipes)?;
        for (i, same) in asked.into_iter().zip(answers) {
            candidates[i].same_order = same;
        }
        Ok(())
    }
}

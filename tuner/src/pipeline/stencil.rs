//! Rule-made candidates of [`Pipeline::apply`] for time loops of stencils: a time loop
//! whose body is a sequence of sweeps over rows (jacobi-1d/2d, heat-3d, fdtd-2d,
//! seidel-2d; `ir::transform::Step::TimeTile`) is tried as time tiles, whatever the
//! database holds, in two sizes for the machine that runs the tuning:
//! - a tile's rows over the block's steps (`width + skew * sweeps * depth` rows of
//!   every array it touches) fill the team's L2 caches, or half of L3;
//! - the block is as deep as a quarter of those rows allows (the leaning rows are
//!   what a tile holds beyond its width), at least 2 and at most 16 steps.
//!
//! With one team (sharing the rows of the sweeps that carry no dependence, or, where
//! none does, seidel-2d's, taking the blocks in turn as a pipeline), and the innermost
//! loops that carry no dependence vectorized. Without a team, seidel-2d's time tiles
//! measured 1.00x and 1.01x at LARGE: its sweep waits on each point's neighbour, not
//! on memory.

use super::*;
use ir::transform::{time_tile_site, Step};
use profiling::machine::MachineInfo;

/// Width and depth of a time tile whose rows fill `budget` bytes.
fn fit(budget: u64, row_bytes: u64, arrays: u64, lean: u64, threads: u64) -> (u32, u32) {
    let rows = (budget / (row_bytes * arrays).max(1)).clamp(2 * threads, 1 << 16);
    let depth = (rows / (4 * lean.max(1))).clamp(2, 16);
    let width = rows.saturating_sub(lean * depth).max(2 * threads).min(4096);
    (width as u32, depth as u32)
}

/// The time-tile recipes to try on the nest at `root` (what the candidate is called in
/// reports, then the recipe).
pub(super) fn time_tile_recipes(
    program: &ir::Program,
    root: &ir::Loop,
    machine: Option<&MachineInfo>,
) -> Vec<(String, Recipe)> {
    let Some(site) = time_tile_site(root, &program.arrays) else {
        return Vec::new();
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let cpu = machine.map(crate::sizing::Cpu::of_machine);
    let cache = |level: u32| {
        cpu.map_or(
            match level {
                2 => 512 << 10,
                _ => 16 << 20,
            },
            |c| c.cache_bytes(level),
        )
    };
    let lean = (site.skew.max(0) as u64) * site.sweeps as u64;
    let sizes: Vec<(u32, u32)> = match site.row_bytes {
        Some(row) => {
            let row = row.max(1) as u64;
            let arrays = site.arrays.max(1) as u64;
            vec![
                fit(cache(2) * threads, row, arrays, lean, threads),
                fit(cache(3) / 2, row, arrays, lean, threads),
            ]
        }
        None => vec![(32, 4), (64, 8)],
    };
    // The innermost loops that carry no dependence, vectorized (`omp simd`): a sweep's
    // rows of pointers to arrays often stay scalar otherwise (heat-3d's).
    let simd: Vec<Step> = site
        .maps
        .iter()
        .map(|&at| Step::Vectorize { at, width: None })
        .collect();
    let mut out: Vec<(String, Recipe)> = Vec::new();
    for (width, depth) in sizes {
        let mut steps = simd.clone();
        steps.push(Step::TimeTile {
            at: 0,
            width,
            depth,
            parallel: true,
        });
        let recipe = Recipe { steps };
        if out.iter().any(|(_, r)| *r == recipe) {
            continue;
        }
        let what = format!(
            "time tile: blocks of {depth} steps, {width} rows, {}{}",
            if site.parallel {
                "one team"
            } else {
                "blocks pipelined"
            },
            if simd.is_empty() {
                ""
            } else {
                ", rows vectorized"
            }
        );
        out.push((what, recipe));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn tiles_fill_the_budget_with_leaning_rows_a_quarter() {
        // jacobi-2d at LARGE: rows of 1300 doubles, two arrays, two sweeps leaning one
        // row each, two threads sharing 2 x 1 MiB of L2: 100 rows, 12 steps deep.
        assert_eq!(fit(2 << 20, 10400, 2, 2, 2), (76, 12));
        // heat-3d's planes of 120 x 120 doubles: few rows, the depth at its least.
        assert_eq!(fit(2 << 20, 115200, 2, 2, 2), (5, 2));
        // A budget smaller than a row still gives every thread two rows.
        assert_eq!(fit(1 << 10, 1 << 20, 3, 4, 2), (4, 2));
    }
}

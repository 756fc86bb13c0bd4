//! Rule-made candidates of [`Pipeline::apply`] for dense nests: every band of three loops
//! that accumulates a product (`W[u][v] += P(u, r) * Q(r, v)`: gemm, 2mm, 3mm, the
//! products of covariance and correlation) is also tried as a vector register tile
//! over packed panels (`ir::transform::Step::RegisterTile`), whatever the database
//! holds, sized for the machine that runs the tuning:
//! - the register tile: two vectors of the widest ISA the CPU has per row (AVX-512:
//!   64 bytes, 32 registers; AVX2: 32 bytes, 16 registers; else 16 bytes), and as
//!   many rows as the registers hold beside each product's column sliver and
//!   broadcast (`(registers - 3 * products) / 2`: 6 x 8 doubles on AVX2, 14 x 16 on
//!   AVX-512, a row fewer for syr2k's two products);
//! - `kc`: the `P` and `Q` slivers of one tile fill L1 (gemm at LARGE on a 32 KiB L1:
//!   288 steps run at 78% of the FMA peak, 144 at 65%);
//! - `mc`: a `P` block fills half of L2;
//! - `nc`: a `Q` block fills a quarter of L3 (shared by the team), at most 4096.
//!
//! A register tile transferred from the database is sized the same way here
//! ([`fit_to_machine`]): the entry may come from another vector ISA.
//!
//! A second candidate halves `kc` (and doubles `mc`, up to the limit): the slivers
//! then leave half of L1 to the tile's other traffic.

use super::*;
use ir::program::DType;
use ir::transform::Step;
use profiling::machine::CacheKind;

/// Register tile and cache blocks, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sizes {
    pub mr: u32,
    pub nr: u32,
    pub mc: u32,
    pub kc: u32,
    pub nc: u32,
}

/// The data cache of `level` (bytes), or a typical size where the machine is unknown.
fn cache_bytes(machine: Option<&MachineInfo>, level: u32) -> u64 {
    let typical = match level {
        1 => 32 << 10,
        2 => 512 << 10,
        _ => 16 << 20,
    };
    machine
        .and_then(|m| {
            m.caches
                .iter()
                .find(|c| c.level == level && c.kind != CacheKind::Instruction)
        })
        .map_or(typical, |c| c.size_bytes)
}

/// Sizes for a sum of `products` products of elements of `elem` bytes on `machine`.
pub(super) fn sizes(machine: Option<&MachineInfo>, elem: u32, products: u32) -> Sizes {
    let has = |f: &str| machine.is_some_and(|m| m.flags.iter().any(|x| x == f));
    let (vector_bytes, registers) = if has("avx512f") {
        (64, 32)
    } else if has("avx2") {
        (32, 16)
    } else {
        (16, 16)
    };
    let caches = [1, 2, 3].map(|level| cache_bytes(machine, level).min(1 << 30) as u32);
    sizes_for(vector_bytes, registers, caches, elem, products)
}

fn sizes_for(
    vector_bytes: u32,
    registers: u32,
    [l1, l2, l3]: [u32; 3],
    elem: u32,
    products: u32,
) -> Sizes {
    let nr = 2 * vector_bytes / elem;
    // Beside the accumulators: two vectors of each product's column sliver and its
    // broadcast.
    let mr = (registers.saturating_sub(3 * products) / 2).clamp(1, 16);
    let kc = (l1 / ((mr + nr) * elem * products)).clamp(32, 512) / 8 * 8;
    let mc = ((l2 / 2 / (kc * elem * products)).clamp(mr, 1024) / mr) * mr;
    let nc = ((l3 / 4 / (kc * elem * products)).clamp(nr, 4096) / nr) * nr;
    Sizes { mr, nr, mc, kc, nc }
}

/// The register-tile recipes to try on the nest at `root` (position, then what the
/// candidate is called in reports).
pub(super) fn register_tile_recipes(
    program: &ir::Program,
    root: &ir::Loop,
    machine: Option<&MachineInfo>,
) -> Vec<(String, Recipe)> {
    let mut out = Vec::new();
    for site in ir::transform::register_tile_sites(root, &program.arrays) {
        let at = site.at;
        let elem = if site.dtype == DType::F32 { 4 } else { 8 };
        let s = sizes(machine, elem, site.products as u32);
        let shorter = Sizes {
            kc: (s.kc / 2 / 8 * 8).max(8),
            mc: (s.mc * 2).min(1024) / s.mr * s.mr,
            ..s
        };
        for z in [s, shorter] {
            let recipe = Recipe {
                steps: vec![Step::RegisterTile {
                    at,
                    mr: z.mr,
                    nr: z.nr,
                    mc: z.mc,
                    kc: z.kc,
                    nc: z.nc,
                    parallel: true,
                }],
            };
            let what = format!(
                "loop {at}: {}x{} register tile, {}x{}x{} blocks",
                z.mr, z.nr, z.mc, z.kc, z.nc
            );
            out.push((what, recipe));
        }
    }
    out
}

/// `recipe` (transferred from another nest, maybe measured on another machine) with
/// its register tiles sized for this machine: the vector width, registers and caches
/// here decide, as for the rule's own candidates.
pub(super) fn fit_to_machine(
    recipe: &Recipe,
    program: &ir::Program,
    root: &ir::Loop,
    machine: Option<&MachineInfo>,
) -> Recipe {
    let sites = ir::transform::register_tile_sites(root, &program.arrays);
    let steps = recipe
        .steps
        .iter()
        .map(|step| match step {
            Step::RegisterTile { at, parallel, .. } => {
                let site = sites.iter().find(|s| s.at == *at);
                let single = site.is_some_and(|s| s.dtype == DType::F32);
                let products = site.map_or(1, |s| s.products as u32);
                let z = sizes(machine, if single { 4 } else { 8 }, products);
                Step::RegisterTile {
                    at: *at,
                    mr: z.mr,
                    nr: z.nr,
                    mc: z.mc,
                    kc: z.kc,
                    nc: z.nc,
                    parallel: *parallel,
                }
            }
            other => other.clone(),
        })
        .collect();
    Recipe { steps }
}

/// The candidate the rule proposes, as reports name it.
pub(super) fn rule_candidate(what: String, recipe: Recipe) -> Candidate {
    let from = Neighbour {
        program: "register-tile rule".into(),
        nest: what,
        distance: 0.0,
        speedup_there: 0.0,
    };
    Candidate::unmeasured(from, recipe, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_vector_registers_and_caches() {
        let caches = [32 << 10, 512 << 10, 32 << 20];
        // AVX2, doubles: 6 x 8 (12 accumulators, 2 slivers, 1 broadcast of 16 ymm);
        // (6 + 8) * 8 bytes * 288 fill 32 KiB; 108 x 288 doubles half of L2.
        let s = sizes_for(32, 16, caches, 8, 1);
        assert_eq!(
            s,
            Sizes {
                mr: 6,
                nr: 8,
                mc: 108,
                kc: 288,
                nc: 3640
            }
        );
        // AVX-512 on a 48 KiB L1: 14 x 16 doubles; floats get twice the columns.
        let z = sizes_for(64, 32, [48 << 10, 1 << 20, 32 << 20], 8, 1);
        assert_eq!((z.mr, z.nr, z.kc), (14, 16, 200));
        assert_eq!(sizes_for(64, 32, caches, 4, 1).nr, 32);
        // Without a machine: 16-byte vectors and typical caches.
        assert_eq!((sizes(None, 8, 1).mr, sizes(None, 8, 1).nr), (6, 4));
        // Two products (syr2k): a row fewer, half the reduction per block.
        let two = sizes_for(32, 16, caches, 8, 2);
        assert_eq!((two.mr, two.nr, two.kc), (5, 8, 152));
    }
}

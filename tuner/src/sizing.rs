//! Register tiles and cache blocks sized for a CPU (`ir::transform::Step::RegisterTile`),
//! for the rule-made candidates of `tune apply` (sized for the measured machine) and for
//! the search spaces (sized for the CPU the search runs and measures on):
//! - the register tile: two vectors of the widest ISA the CPU has per row (AVX-512:
//!   64 bytes, 32 registers; AVX2: 32 bytes, 16 registers; else 16 bytes), and as
//!   many rows as the registers hold beside each product's column sliver and
//!   broadcast (`(registers - 3 * products) / 2`: 6 x 8 doubles on AVX2, 14 x 16 on
//!   AVX-512, a row fewer for syr2k's two products);
//! - `kc`: the `P` and `Q` slivers of one tile fill L1 (gemm at LARGE on a 32 KiB L1,
//!   AVX2: 288 steps run at 78% of the FMA peak, 144 at 65%);
//! - `mc`: a `P` block fills half of L2;
//! - `nc`: a `Q` block fills a quarter of L3 (shared by the team), at most 4096.
//!
//! [`candidates`] adds a second size that doubles `kc` (and halves `mc`, so the `P`
//! block keeps its share of L2): only the `Q` sliver is reused from L1 across the tiles
//! of a block, the `P` sliver streams from L2, and a longer reduction loads and stores
//! the tile's accumulators half as often. Which one wins depends on the core (Zen 4,
//! 32 KiB L1, 14 x 16 doubles, `scripts/gemm-ceiling.sh`: `kc` 128 ran at 80 GFLOP/s,
//! 256 at 90), so both are measured. (Halving `kc` instead was 10% slower on a 48 KiB
//! L1.)

use ir::program::DType;
use ir::transform::{register_tile_sites, Recipe, Step};
use profiling::machine::{CacheKind, CacheLevel, CpuShape, MachineInfo};
use std::sync::OnceLock;

/// Register tile and cache blocks, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Rows of the register tile.
    pub mr: u32,
    /// Columns of the register tile (two vectors).
    pub nr: u32,
    /// Rows of a packed `P` block.
    pub mc: u32,
    /// Reduction steps of a block.
    pub kc: u32,
    /// Columns of a packed `Q` block.
    pub nc: u32,
}

impl Sizes {
    /// The register-tile step at preorder position `at` with these sizes.
    pub fn step(&self, at: usize, parallel: bool) -> Step {
        Step::RegisterTile {
            at,
            mr: self.mr,
            nr: self.nr,
            mc: self.mc,
            kc: self.kc,
            nc: self.nc,
            parallel,
        }
    }
}

/// The CPU the sizes are for: its relevant flags and caches.
#[derive(Debug, Clone, Copy)]
pub struct Cpu<'a> {
    /// The relevant CPU flags (`avx2`, `fma`, `avx512f`).
    pub flags: &'a [String],
    /// Its caches.
    pub caches: &'a [CacheLevel],
}

impl<'a> Cpu<'a> {
    /// A measured machine's CPU.
    pub fn of_machine(m: &'a MachineInfo) -> Cpu<'a> {
        Cpu {
            flags: &m.flags,
            caches: &m.caches,
        }
    }

    /// The CPU this process runs on, as code built by `$CC $CFLAGS` targets it (read
    /// once): a build for AVX2 on a CPU with AVX-512 sizes for AVX2's registers
    /// (`Toolchain::target_flags`).
    pub fn host() -> Cpu<'static> {
        static SHAPE: OnceLock<CpuShape> = OnceLock::new();
        let s = SHAPE.get_or_init(|| {
            let mut s = profiling::machine::cpu_shape();
            if let Some(target) = profiling::build::Toolchain::default().target_flags(&[]) {
                s.flags.retain(|f| target.contains(f));
            }
            s
        });
        Cpu {
            flags: &s.flags,
            caches: &s.caches,
        }
    }

    /// The data cache of `level` (bytes), or a typical size where it is unknown.
    pub fn cache_bytes(&self, level: u32) -> u64 {
        let typical = match level {
            1 => 32 << 10,
            2 => 512 << 10,
            _ => 16 << 20,
        };
        self.caches
            .iter()
            .find(|c| c.level == level && c.kind != CacheKind::Instruction)
            .map_or(typical, |c| c.size_bytes)
    }
}

/// Sizes for a sum of `products` products of elements of `elem` bytes on `cpu`
/// (16-byte vectors and typical caches where there is none).
pub fn sizes(cpu: Option<Cpu>, elem: u32, products: u32) -> Sizes {
    let cpu = cpu.unwrap_or(Cpu {
        flags: &[],
        caches: &[],
    });
    let has = |f: &str| cpu.flags.iter().any(|x| x == f);
    let (vector_bytes, registers) = if has("avx512f") {
        (64, 32)
    } else if has("avx2") {
        (32, 16)
    } else {
        (16, 16)
    };
    let caches = [1, 2, 3].map(|level| cpu.cache_bytes(level).min(1 << 30) as u32);
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

/// `s` with twice the reduction per block (at most 512) and the `P` block as large in
/// bytes as before.
fn longer_reduction(s: Sizes) -> Sizes {
    let kc = (s.kc * 2).min(512);
    Sizes {
        kc,
        mc: ((s.mc as u64 * s.kc as u64 / kc as u64) as u32 / s.mr).max(1) * s.mr,
        ..s
    }
}

/// Both sizes worth measuring for a site: the rule's and the longer reduction.
pub fn candidates(cpu: Option<Cpu>, elem: u32, products: u32) -> [Sizes; 2] {
    let s = sizes(cpu, elem, products);
    [s, longer_reduction(s)]
}

/// Every register-tile site of the nest `root`, with its element size in bytes and
/// the number of products it sums.
pub fn sites(program: &ir::Program, root: &ir::Loop) -> Vec<(usize, u32, u32)> {
    register_tile_sites(root, &program.arrays)
        .into_iter()
        .map(|site| {
            let elem = if site.dtype == DType::F32 { 4 } else { 8 };
            (site.at, elem, site.products as u32)
        })
        .collect()
}

/// `recipe` with its register tiles sized for `cpu` (the rule's sizes): the vector
/// width, registers and caches there decide, wherever the recipe was measured (the
/// longer reduction is a candidate of its own in `tune apply`).
pub fn fit(recipe: &Recipe, program: &ir::Program, root: &ir::Loop, cpu: Option<Cpu>) -> Recipe {
    let sites = sites(program, root);
    let steps = recipe
        .steps
        .iter()
        .map(|step| match step {
            Step::RegisterTile { at, parallel, .. } => {
                let (elem, products) = sites
                    .iter()
                    .find(|s| s.0 == *at)
                    .map_or((8, 1), |s| (s.1, s.2));
                sizes(cpu, elem, products).step(*at, *parallel)
            }
            other => other.clone(),
        })
        .collect();
    Recipe { steps }
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
        // Without a CPU: 16-byte vectors and typical caches.
        assert_eq!((sizes(None, 8, 1).mr, sizes(None, 8, 1).nr), (6, 4));
        // Two products (syr2k): a row fewer, half the reduction per block.
        let two = sizes_for(32, 16, caches, 8, 2);
        assert_eq!((two.mr, two.nr, two.kc), (5, 8, 152));
        // The second candidate: twice the reduction, half the rows per block.
        let l = longer_reduction(s);
        assert_eq!((l.mr, l.nr, l.mc, l.kc, l.nc), (6, 8, 60, 512, 3640));
        let z = longer_reduction(sizes_for(64, 32, caches, 8, 1));
        assert_eq!((z.mc, z.kc), (112, 272));
    }
}

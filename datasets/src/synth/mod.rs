//! `synth`: a seeded generator of synthetic loop-nest programs, to grow the training data
//! of the performance-embedding model beyond the hand-written suite.
//!
//! Every program is drawn from one [`Family`] (matrix products, matrix-vector products,
//! reductions, stencils, copies and transposes, triangular kernels, elementwise maps,
//! outer products; tensor contractions, min-plus recurrences and symmetric matrices when
//! asked for) with its variant, loop order, element type, storage layout and sizes
//! chosen by the seed.
//! Programs follow the conventions of `programs/*.c`: size presets by
//! `#if defined(<PRESET>_DATASET)` blocks, `common.h` for allocation and the FNV dumps of
//! every output, deterministic initialization, and one `#pragma scop` region written in
//! the subset the `ir` frontend accepts.
//!
//! The same options always give byte-identical sources (the generator carries its own
//! SplitMix64, so no crate update changes them), and program `k` depends only on the
//! seed, `k`, its family and the float share: a longer run extends a shorter one.

mod context;
mod families;
mod render;

use crate::{Preset, Program, Suite};
use context::{Ctx, Elem, Rng};
use std::path::{Path, PathBuf};

/// The shapes of loop nest the generator knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `C := alpha * op(A) * op(B) + beta * C`, any loop order, optionally chained.
    MatMul,
    /// `y := A x`, `y := A^T x` and their combinations (bicg, gesummv, atax shapes).
    MatVec,
    /// Row and column sums, dot products, norms, column means and variances.
    Reduction,
    /// 1-D, 2-D and 3-D stencils under a time loop: Jacobi or in-place Gauss-Seidel.
    Stencil,
    /// Transposes, 3-D permutations, strided and reversed copies.
    Copy,
    /// Triangular loops: syrk, triangular matrix-vector and matrix products, solves.
    Triangular,
    /// Elementwise maps: polynomials of degree 1..8, linear combinations, math calls.
    Elementwise,
    /// Outer products and rank-1 / rank-2 updates, optionally followed by a product.
    Outer,
    /// Tensor contractions: doitgen's in-place product through a temporary, mode
    /// products of 3-D tensors, batched matrix products, MTTKRP.
    Contraction,
    /// Min-plus and max-plus recurrences: Floyd-Warshall, distance products, interval
    /// dynamic programs over a triangle, alignment wavefronts.
    Path,
    /// Symmetric matrices stored in one triangle: symm's product through the mirror,
    /// its in-place reference form, the symmetric matrix-vector product, syr2k through an
    /// accumulator, Gram matrices written to both triangles.
    Symmetric,
}

impl Family {
    /// Every family, the default eight first.
    pub const ALL: [Family; 11] = [
        Family::MatMul,
        Family::MatVec,
        Family::Reduction,
        Family::Stencil,
        Family::Copy,
        Family::Triangular,
        Family::Elementwise,
        Family::Outer,
        Family::Contraction,
        Family::Path,
        Family::Symmetric,
    ];

    /// The round robin of a generation that names no families: the families the
    /// generator began with, so that a seed writes the programs it always wrote (the
    /// database's generated entries are found again by name).
    pub const DEFAULT: &'static [Family] = Family::ALL.split_at(8).0;

    pub fn name(self) -> &'static str {
        match self {
            Family::MatMul => "matmul",
            Family::MatVec => "matvec",
            Family::Reduction => "reduction",
            Family::Stencil => "stencil",
            Family::Copy => "copy",
            Family::Triangular => "triangular",
            Family::Elementwise => "elementwise",
            Family::Outer => "outer",
            Family::Contraction => "contraction",
            Family::Path => "path",
            Family::Symmetric => "symmetric",
        }
    }

    pub fn parse(s: &str) -> Option<Family> {
        Family::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
    }
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    pub seed: u64,
    /// Number of programs.
    pub count: usize,
    /// Families in round-robin order (program `k` is of `families[k % len]`); empty
    /// means [`Family::DEFAULT`].
    pub families: Vec<Family>,
    /// Probability that a program uses `float` instead of `double` (copies also use
    /// `int`, in about a quarter of them).
    pub float_share: f64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            seed: 0,
            count: 64,
            families: Family::DEFAULT.to_vec(),
            float_share: 0.2,
        }
    }
}

/// One generated program: a complete C file that includes `common.h`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthProgram {
    /// File stem, unique within one generation: `<family>-<index>-<variant>`.
    pub name: String,
    pub family: String,
    pub source: String,
}

impl SynthProgram {
    pub fn file_name(&self) -> String {
        format!("{}.c", self.name)
    }
}

/// Generates `opts.count` programs.
pub fn generate(opts: &SynthOptions) -> Vec<SynthProgram> {
    let families = if opts.families.is_empty() {
        Family::DEFAULT.to_vec()
    } else {
        opts.families.clone()
    };
    (0..opts.count)
        .map(|k| {
            let family = families[k % families.len()];
            generate_one(opts.seed, k as u64, family, opts.float_share)
        })
        .collect()
}

/// Writes `DIR/programs/<name>.c`, `DIR/programs/common.h` and the manifest
/// `DIR/suite.json` (the format of `datasets/suite.json`, without verdict tables);
/// returns the manifest's path, ready for [`Suite::load`].
pub fn write_suite(dir: &Path, programs: &[SynthProgram]) -> std::io::Result<PathBuf> {
    let progdir = dir.join("programs");
    std::fs::create_dir_all(&progdir)?;
    std::fs::write(
        progdir.join("common.h"),
        include_str!("../../programs/common.h"),
    )?;
    let mut entries = Vec::new();
    let mut families: Vec<&str> = Vec::new();
    for p in programs {
        std::fs::write(progdir.join(p.file_name()), &p.source)?;
        entries.push(Program {
            name: p.name.clone(),
            file: format!("programs/{}", p.file_name()),
            family: p.family.clone(),
            flags: vec!["-lm".to_string()],
            verdicts: String::new(),
            nests: Vec::new(),
        });
        if !families.contains(&p.family.as_str()) {
            families.push(&p.family);
        }
    }
    let suite = Suite {
        name: "synth".to_string(),
        description: format!(
            "{} synthetic loop-nest programs generated by datasets::synth (families: {}). \
             Each prints one line per output array with a bit-exact FNV-1a hash.",
            programs.len(),
            families.join(", ")
        ),
        presets: Preset::ALL.to_vec(),
        preset_flag: "-D{preset}_DATASET".to_string(),
        programs: entries,
        dir: dir.to_path_buf(),
    };
    let path = dir.join("suite.json");
    let mut text = serde_json::to_string_pretty(&suite).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(&path, text)?;
    Ok(path)
}

fn generate_one(seed: u64, index: u64, family: Family, float_share: f64) -> SynthProgram {
    let mut rng = Rng::new(seed, index);
    let elem = if rng.chance(float_share) {
        Elem::F32
    } else {
        Elem::F64
    };
    let mut cx = Ctx {
        elem,
        symbolic: rng.chance(0.5),
        decl_in_for: rng.chance(0.5),
        step: rng.pick(&["++", "++", "+= 1"]),
        rng,
        sizes: Vec::new(),
        scalars: Vec::new(),
        arrays: Vec::new(),
        locals: Vec::new(),
        epilogue: Vec::new(),
        loop_vars: Vec::new(),
        used_sizes: Vec::new(),
        body: String::new(),
        depth: 0,
    };
    let in_main = cx.rng.chance(0.3);
    let sketch = families::write(family, &mut cx);
    // The seed is part of the name: suites of two seeds merge into one database, whose
    // entries are told apart by program name.
    let name = format!("{}-s{seed}-{:04}-{}", family.name(), index, sketch.tag);
    let source = render::render(&cx, &sketch, family, &name, seed, index, in_main);
    SynthProgram {
        name,
        family: family.name().to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(seed: u64, count: usize) -> SynthOptions {
        SynthOptions {
            seed,
            count,
            ..Default::default()
        }
    }

    #[test]
    fn same_seed_same_sources_and_prefixes_agree() {
        let a = generate(&opts(11, 48));
        let b = generate(&opts(11, 48));
        assert_eq!(a, b);
        assert_eq!(generate(&opts(11, 10)), a[..10]);
    }

    #[test]
    fn different_seeds_give_different_programs() {
        // the header's second line names the seed: compare what follows
        let code = |p: &SynthProgram| p.source.lines().skip(2).collect::<Vec<_>>().join("\n");
        let a: Vec<_> = generate(&opts(1, 32)).iter().map(code).collect();
        let b: Vec<_> = generate(&opts(2, 32)).iter().map(code).collect();
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(same < 4, "{same} of 32 programs identical across seeds");
    }

    #[test]
    fn names_are_unique_and_families_round_robin() {
        let ps = generate(&opts(5, 80));
        let mut names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 80);
        // Two seeds never share a name.
        let other = generate(&opts(6, 80));
        assert!(other.iter().all(|q| !ps.iter().any(|p| p.name == q.name)));
        for (k, p) in ps.iter().enumerate() {
            assert_eq!(p.family, Family::DEFAULT[k % 8].name());
            assert!(p.name.starts_with(&p.family));
        }
        let only = generate(&SynthOptions {
            families: vec![Family::Stencil],
            ..opts(5, 6)
        });
        assert!(only.iter().all(|p| p.family == "stencil"));
        assert_eq!(Family::parse("MatMul"), Some(Family::MatMul));
        assert_eq!(Family::parse("path"), Some(Family::Path));
        assert_eq!(Family::parse("bogus"), None);
    }

    #[test]
    fn every_program_has_presets_a_region_and_dumps() {
        for p in generate(&opts(3, 64)) {
            let s = &p.source;
            for preset in Preset::ALL {
                assert!(s.contains(&format!("defined({}_DATASET)", preset.name())));
            }
            assert_eq!(s.matches("#pragma scop").count(), 1, "{}", p.name);
            assert_eq!(s.matches("#pragma endscop").count(), 1, "{}", p.name);
            assert!(s.contains("ds_dump_"), "{}", p.name);
            assert!(s.contains("#include \"common.h\""));
        }
    }

    #[test]
    fn written_suite_loads() {
        let dir = std::env::temp_dir().join(format!("synth-suite-{}", std::process::id()));
        let ps = generate(&opts(9, 8));
        let path = write_suite(&dir, &ps).unwrap();
        let suite = Suite::load(&path).unwrap();
        assert_eq!(suite.programs.len(), 8);
        assert!(suite.dir.join("programs/common.h").is_file());
        let p = &suite.programs[0];
        assert_eq!(suite.args(p, Preset::Mini)[1], "-DMINI_DATASET");
        assert!(suite.expected_verdicts(p).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! The generation context: the seeded random source, size ladders, element types, and
//! `Ctx`, which collects a program's sizes, scalars and arrays and writes its region.

// Randomness: SplitMix64, spelled out so that sources never change with a crate version.

pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed);
        let s = r.next();
        Rng(s ^ index.wrapping_mul(0xD134_2543_DE82_EF95))
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub(super) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    pub(super) fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    pub(super) fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }
}

// ---------------------------------------------------------------------------------------
// Sizes: one range per preset (MINI .. EXTRALARGE), chosen so that MINI runs in
// milliseconds and MEDIUM well under a second at -O2.

pub(super) type Ladder = [(i64, i64); 5];

/// Extents of O(n^3) kernels.
pub(super) const CUBIC: Ladder = [(16, 32), (48, 80), (150, 220), (800, 1200), (1600, 2400)];
/// Extents of O(n^2) kernels.
pub(super) const QUADRATIC: Ladder = [(24, 48), (100, 180), (400, 900), (1800, 2400), (3000, 4000)];
/// Extents of O(n) kernels.
pub(super) const LINEAR: Ladder = [
    (64, 256),
    (2000, 6000),
    (100_000, 300_000),
    (1_000_000, 2_000_000),
    (4_000_000, 8_000_000),
];
/// Extents of O(n) kernels whose arrays are up to 8 times longer.
pub(super) const SPARSE: Ladder = [
    (64, 256),
    (1000, 3000),
    (50_000, 100_000),
    (250_000, 500_000),
    (1_000_000, 2_000_000),
];
pub(super) const CUBE: Ladder = [(8, 16), (30, 50), (100, 150), (200, 260), (260, 300)];
pub(super) const GRID1: Ladder = [
    (32, 64),
    (400, 1000),
    (4000, 10_000),
    (100_000, 200_000),
    (1_000_000, 2_000_000),
];
pub(super) const GRID2: Ladder = [(12, 24), (60, 100), (200, 300), (1000, 1400), (2000, 2800)];
pub(super) const GRID3: Ladder = [(8, 12), (20, 30), (40, 56), (100, 140), (180, 220)];
pub(super) const STEPS1: Ladder = [(4, 8), (20, 40), (50, 100), (500, 1000), (1000, 2000)];
pub(super) const STEPS2: Ladder = [(3, 6), (20, 40), (40, 100), (200, 500), (500, 1000)];
pub(super) const STEPS3: Ladder = [(2, 4), (10, 20), (20, 30), (100, 200), (200, 500)];

pub(super) struct Size {
    pub(super) name: &'static str,
    pub(super) values: [i64; 5],
}

// ---------------------------------------------------------------------------------------
// Element types.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Elem {
    F64,
    F32,
    I32,
}

impl Elem {
    pub(super) fn c_name(self) -> &'static str {
        match self {
            Elem::F64 => "double",
            Elem::F32 => "float",
            Elem::I32 => "int",
        }
    }

    pub(super) fn dump(self) -> &'static str {
        match self {
            Elem::F64 => "ds_dump_double",
            Elem::F32 => "ds_dump_float",
            Elem::I32 => "ds_dump_int",
        }
    }
}

/// How an array starts out.
#[derive(Clone)]
pub(super) enum Init {
    /// Zero (calloc or static storage): written by the region before it is read.
    Zero,
    /// `((affine in the indices) % m) / m + offset`, values in a small range.
    Formula {
        a: i64,
        b: i64,
        c: i64,
        m: i64,
        offset: &'static str,
    },
    /// A formula scaled down plus 2 on the diagonal: a well-conditioned triangle.
    Dominant { a: i64, b: i64, m: i64 },
}

pub(super) struct Arr {
    pub(super) name: &'static str,
    pub(super) dims: Vec<&'static str>,
    pub(super) init: Init,
    pub(super) output: bool,
}

/// What a family generator decided, besides the code it wrote into the context.
pub(super) struct Sketch {
    pub(super) tag: String,
    pub(super) summary: String,
}

// ---------------------------------------------------------------------------------------
// The generation context: choices common to every family, the declarations collected so
// far, and the region's text.

pub(super) struct Ctx {
    pub(super) rng: Rng,
    pub(super) elem: Elem,
    /// Loop bounds use `int` parameters (`n`) instead of the macros (`N`).
    pub(super) symbolic: bool,
    /// Loops declare their variable (`for (int i = 0; ...)`).
    pub(super) decl_in_for: bool,
    pub(super) step: &'static str,
    pub(super) sizes: Vec<Size>,
    pub(super) scalars: Vec<(&'static str, String)>,
    pub(super) arrays: Vec<Arr>,
    /// Declarations just before the region (scalars a region accumulates into).
    pub(super) locals: Vec<String>,
    /// Statements just after the region.
    pub(super) epilogue: Vec<String>,
    pub(super) loop_vars: Vec<String>,
    pub(super) used_sizes: Vec<&'static str>,
    pub(super) body: String,
    pub(super) depth: usize,
}

pub(super) const COEFFS: &[&str] = &[
    "0.5", "0.25", "0.75", "1.5", "-0.5", "0.125", "2.0", "-1.25", "0.3", "0.7", "1.1", "-0.9",
    "0.05", "3.0",
];
pub(super) const SCALARS: &[&str] = &["1.5", "1.2", "0.5", "2.0", "0.75", "-1.0", "1.25", "0.9"];
pub(super) const MODULI: &[i64] = &[7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 53, 61, 97];
pub(super) const OFFSETS: &[&str] = &["", "", " + 0.5", " - 0.5", " + 1.0", " + 0.25"];

impl Ctx {
    pub(super) fn size(&mut self, name: &'static str, ladder: Ladder) -> &'static str {
        let mut values = [0; 5];
        for (v, (lo, hi)) in values.iter_mut().zip(ladder) {
            *v = self.rng.range(lo, hi);
        }
        self.sizes.push(Size { name, values });
        name
    }

    /// A size defined as `factor` times another (for strided arrays).
    pub(super) fn scaled_size(
        &mut self,
        name: &'static str,
        of: &str,
        factor: i64,
    ) -> &'static str {
        let base = self
            .sizes
            .iter()
            .find(|s| s.name == of)
            .expect("base size")
            .values;
        self.sizes.push(Size {
            name,
            values: base.map(|v| v * factor),
        });
        name
    }

    pub(super) fn formula(&mut self) -> Init {
        Init::Formula {
            a: self.rng.range(1, 13),
            b: self.rng.range(1, 9),
            c: self.rng.range(1, 9),
            m: self.rng.pick(MODULI),
            offset: self.rng.pick(OFFSETS),
        }
    }

    pub(super) fn input(&mut self, name: &'static str, dims: &[&'static str]) {
        let init = self.formula();
        self.arrays.push(Arr {
            name,
            dims: dims.to_vec(),
            init,
            output: false,
        });
    }

    /// An array the region updates: initialized, and dumped at the end.
    pub(super) fn inout(&mut self, name: &'static str, dims: &[&'static str]) {
        let init = self.formula();
        self.arrays.push(Arr {
            name,
            dims: dims.to_vec(),
            init,
            output: true,
        });
    }

    /// An array the region writes before reading.
    pub(super) fn output(&mut self, name: &'static str, dims: &[&'static str]) {
        self.arrays.push(Arr {
            name,
            dims: dims.to_vec(),
            init: Init::Zero,
            output: true,
        });
    }

    /// An array initialized to values in `[0, 2)`: edge weights and costs, so that sums
    /// of them never cancel (min-plus recurrences stay bounded); dumped when `updated`.
    pub(super) fn weights(&mut self, name: &'static str, dims: &[&'static str], updated: bool) {
        let init = Init::Formula {
            a: self.rng.range(1, 13),
            b: self.rng.range(1, 9),
            c: self.rng.range(1, 9),
            m: self.rng.pick(MODULI),
            offset: self.rng.pick(&["", " + 0.5", " + 1.0", " + 0.25"]),
        };
        self.arrays.push(Arr {
            name,
            dims: dims.to_vec(),
            init,
            output: updated,
        });
    }

    pub(super) fn dominant(&mut self, name: &'static str, dims: &[&'static str]) {
        let init = Init::Dominant {
            a: self.rng.range(1, 13),
            b: self.rng.range(1, 9),
            m: self.rng.pick(MODULI),
        };
        self.arrays.push(Arr {
            name,
            dims: dims.to_vec(),
            init,
            output: false,
        });
    }

    pub(super) fn scalar(&mut self, name: &'static str) -> &'static str {
        let v = self.rng.pick(SCALARS);
        let v = self.lit(v);
        self.scalars.push((name, v));
        name
    }

    /// A floating-point literal in the program's type.
    pub(super) fn lit(&self, s: &str) -> String {
        match self.elem {
            Elem::F32 => format!("{s}f"),
            _ => s.to_string(),
        }
    }

    pub(super) fn zero(&self) -> String {
        match self.elem {
            Elem::I32 => "0".to_string(),
            _ => self.lit("0.0"),
        }
    }

    pub(super) fn coef(&mut self) -> String {
        let c = self.rng.pick(COEFFS);
        self.lit(c)
    }

    /// A math function in the program's type (`sqrt` or `sqrtf`).
    pub(super) fn math(&self, f: &str) -> String {
        match self.elem {
            Elem::F32 => format!("{f}f"),
            _ => f.to_string(),
        }
    }

    /// Size macros become the lowercase parameters when bounds are symbolic.
    pub(super) fn subst(&mut self, s: &str) -> String {
        if !self.symbolic {
            return s.to_string();
        }
        let chars: Vec<char> = s.chars().collect();
        let mut out = String::with_capacity(s.len());
        let mut k = 0;
        while k < chars.len() {
            if chars[k].is_ascii_alphabetic() || chars[k] == '_' {
                let start = k;
                while k < chars.len() && (chars[k].is_ascii_alphanumeric() || chars[k] == '_') {
                    k += 1;
                }
                let word: String = chars[start..k].iter().collect();
                match self.sizes.iter().find(|z| z.name == word) {
                    Some(z) => {
                        if !self.used_sizes.contains(&z.name) {
                            self.used_sizes.push(z.name);
                        }
                        out.push_str(&word.to_lowercase());
                    }
                    None => out.push_str(&word),
                }
            } else {
                out.push(chars[k]);
                k += 1;
            }
        }
        out
    }

    /// One line of the region; long sums are broken before a `+`, continuation lines
    /// indented two more levels.
    pub(super) fn line(&mut self, s: &str) {
        let s = self.subst(s);
        let indent = "  ".repeat(self.depth);
        let terms = split_sum(&s);
        let mut current = format!("{indent}{}", terms[0]);
        for term in &terms[1..] {
            // the region is indented by 2 more when rendered
            if current.len() + 3 + term.len() + 2 > 90 {
                self.body.push_str(&current);
                self.body.push('\n');
                current = format!("{indent}    + {term}");
            } else {
                current.push_str(" + ");
                current.push_str(term);
            }
        }
        self.body.push_str(&current);
        self.body.push('\n');
    }

    pub(super) fn open(&mut self, head: &str) {
        self.line(&format!("{head} {{"));
        self.depth += 1;
    }

    pub(super) fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    /// Perfectly nested loops around `stmts` (braces only where there are several).
    pub(super) fn nest(&mut self, heads: &[String], stmts: &[String]) {
        let depth = self.depth;
        for (n, h) in heads.iter().enumerate() {
            if n + 1 == heads.len() && stmts.len() > 1 {
                self.open(h);
            } else {
                self.line(h);
                self.depth += 1;
            }
        }
        for s in stmts {
            self.line(s);
        }
        if stmts.len() > 1 {
            self.close();
        }
        self.depth = depth;
    }

    pub(super) fn head(
        &mut self,
        v: &str,
        init: &str,
        cmp: &str,
        bound: &str,
        step: &str,
    ) -> String {
        if !self.loop_vars.iter().any(|x| x == v) {
            self.loop_vars.push(v.to_string());
        }
        let decl = if self.decl_in_for { "int " } else { "" };
        format!("for ({decl}{v} = {init}; {v} {cmp} {bound}; {v}{step})")
    }

    /// `for (v = lo; v < hi; v++)`.
    pub(super) fn lt(&mut self, v: &str, lo: &str, hi: &str) -> String {
        let step = if self.step == "+= 1" { " += 1" } else { "++" };
        self.head(v, lo, "<", hi, step)
    }

    /// `for (v = lo; v <= hi; v++)`.
    pub(super) fn le(&mut self, v: &str, lo: &str, hi: &str) -> String {
        let step = if self.step == "+= 1" { " += 1" } else { "++" };
        self.head(v, lo, "<=", hi, step)
    }

    /// `for (v = hi; v >= lo; v--)`.
    pub(super) fn down(&mut self, v: &str, hi: &str, lo: &str) -> String {
        self.head(v, hi, ">=", lo, "--")
    }

    /// Local accumulator declaration inside the region.
    pub(super) fn acc(&self, name: &str, init: &str) -> String {
        format!("DATA_TYPE {name} = {init};")
    }
}

pub(super) fn at(a: &str, idx: &[&str]) -> String {
    let mut s = a.to_string();
    for i in idx {
        s.push('[');
        s.push_str(i);
        s.push(']');
    }
    s
}

/// Splits at the ` + ` outside subscripts.
pub(super) fn split_sum(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let bytes = s.as_bytes();
    let mut k = 0;
    while k < bytes.len() {
        match bytes[k] {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b' ' if depth == 0 && s[k..].starts_with(" + ") => {
                out.push(&s[start..k]);
                k += 3;
                start = k;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    out.push(&s[start..]);
    out
}

/// The size a loop variable runs up to where sizes are named after their variables:
/// `NI` for `i`.
pub(super) fn extent(v: &str) -> String {
    format!("N{}", v.to_ascii_uppercase())
}

pub(super) fn offset(v: &str, d: i64) -> String {
    match d {
        0 => v.to_string(),
        d if d > 0 => format!("{v} + {d}"),
        d => format!("{v} - {}", -d),
    }
}

/// A decimal literal without trailing zeros (`0.125`, `0.2`).
pub(super) fn decimal(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0');
    if s.ends_with('.') {
        format!("{s}0")
    } else {
        s.to_string()
    }
}

pub(super) const ORDERS3: &[[&str; 3]] = &[
    ["i", "j", "k"],
    ["i", "k", "j"],
    ["j", "i", "k"],
    ["j", "k", "i"],
    ["k", "i", "j"],
    ["k", "j", "i"],
];

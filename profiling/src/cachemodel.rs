//! Modelled cache misses of a nest version, from LRU stack (reuse) distances.
//!
//! The nest's access stream comes from [`ir::interp`]. Arrays are laid out one after
//! another in the order the nest first names them, each base aligned to 4096 bytes, and
//! every access maps to a line address. The reuse distance of an access is the number of
//! distinct lines touched since the previous access to its line (a Fenwick tree over
//! access timestamps, periodically compacted to the live lines, plus a line → last
//! timestamp table: O(log lines) per access). An access misses in a fully associative
//! LRU cache of `C` lines iff its reuse distance is ≥ `C`; first touches (cold misses)
//! miss at every level.
//!
//! Conventions:
//!
//! - Level 1 sees every access; level k sees level k-1's misses. Level k's misses are
//!   the accesses it sees whose reuse distance (computed over the *full* stream, at level
//!   k's line size) is ≥ its capacity in lines — the usual inclusive-hierarchy
//!   approximation (no set conflicts, no prefetching, no filtering of the LRU order by
//!   upper levels).
//! - Writes allocate (write-allocate, write-back). `writebacks` counts dirty last-level
//!   lines written to memory: a dirty line counts when it misses again (it was evicted
//!   in between) and every line still dirty at the end of the nest counts once (it will
//!   be written back eventually).
//! - `dram_bytes` = (last-level misses + writebacks) × last-level line size.
//! - Sampling: at most `limit` accesses are modelled (whole statements, from the start of
//!   the nest). When the nest has more, `sampled` is true and every count (misses,
//!   level accesses, writebacks, DRAM bytes) is scaled by total / modelled accesses;
//!   `accesses` is always the nest's exact total. A prefix over-represents cold misses
//!   for nests much larger than the sample.

use ir::interp::{Env, InterpError, NestInterp, Stop};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One cache level (fully associative LRU in the model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheSpec {
    /// `"L1"`, `"L2"`, `"L3"`.
    pub name: String,
    pub size_bytes: u64,
    pub line_bytes: u64,
}

impl CacheSpec {
    pub fn new(name: &str, size_bytes: u64, line_bytes: u64) -> CacheSpec {
        CacheSpec {
            name: name.to_string(),
            size_bytes,
            line_bytes,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelModel {
    pub name: String,
    /// Accesses that reach this level (all accesses for the first level).
    pub accesses: u64,
    pub misses: u64,
    /// `misses / accesses` (local miss ratio), 0 when nothing reaches the level.
    pub miss_ratio: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheModel {
    /// Accesses of the whole nest.
    pub accesses: u64,
    /// Accesses actually run through the model (`accesses` unless `sampled`).
    pub modelled_accesses: u64,
    pub levels: Vec<LevelModel>,
    /// Dirty last-level lines written back (see the module documentation).
    pub writebacks: u64,
    /// `(last-level misses + writebacks) × last-level line size`.
    pub dram_bytes: u64,
    /// Only a prefix of `modelled_accesses` accesses was modelled; counts are scaled.
    pub sampled: bool,
    pub note: String,
}

/// Alignment of every array's base address.
const ARRAY_ALIGN: u64 = 4096;
/// Largest line table kept as a dense vector (entries); larger footprints use a map.
const DENSE_LINES_MAX: u64 = 1 << 24;
/// Sentinel for "never accessed" in timestamp tables.
const NONE: u32 = u32::MAX;
/// Reuse distance of a first touch.
const COLD: u64 = u64::MAX;

/// Models the nest rooted at loop `root` of region `region` under `env` on the cache
/// hierarchy `caches` (first level first), over at most `limit` accesses, starting
/// from cold caches.
pub fn model(
    program: &ir::Program,
    region: usize,
    root: usize,
    env: &Env,
    caches: &[CacheSpec],
    limit: u64,
) -> Result<CacheModel, InterpError> {
    model_from(program, region, root, env, caches, limit, false)
}

/// As [`model`], but with the caches first holding every array the nest touches, read
/// in order as a cutout restores its inputs before each run (those accesses are not
/// counted): the state a warm (unflushed) cutout measurement starts from.
pub fn model_warm(
    program: &ir::Program,
    region: usize,
    root: usize,
    env: &Env,
    caches: &[CacheSpec],
    limit: u64,
) -> Result<CacheModel, InterpError> {
    model_from(program, region, root, env, caches, limit, true)
}

fn model_from(
    program: &ir::Program,
    region: usize,
    root: usize,
    env: &Env,
    caches: &[CacheSpec],
    limit: u64,
    warm: bool,
) -> Result<CacheModel, InterpError> {
    for c in caches {
        if c.line_bytes == 0 || c.size_bytes < c.line_bytes {
            return Err(InterpError::Unsupported(format!(
                "cache {}: size {} with line {} bytes",
                c.name, c.size_bytes, c.line_bytes
            )));
        }
    }
    let nest = NestInterp::new(program, region, root, env)?;
    let arrays = nest.arrays();
    let mut bases = Vec::with_capacity(arrays.len());
    let mut end = 0u64;
    for a in &arrays {
        let base = end.div_ceil(ARRAY_ALIGN).saturating_mul(ARRAY_ALIGN);
        bases.push(base);
        end = base.saturating_add(a.elements.saturating_mul(a.elem_bytes as u64));
    }
    let footprint = end;

    // One reuse-distance stack per distinct line size.
    let mut line_sizes: Vec<u64> = caches.iter().map(|c| c.line_bytes).collect();
    line_sizes.sort_unstable();
    line_sizes.dedup();
    let mut stacks: Vec<ReuseStack> = line_sizes
        .iter()
        .map(|&l| ReuseStack::new(l, footprint.div_ceil(l)))
        .collect();
    let level_stack: Vec<usize> = caches
        .iter()
        .map(|c| {
            line_sizes
                .iter()
                .position(|&l| l == c.line_bytes)
                .unwrap_or(0)
        })
        .collect();
    let capacity: Vec<u64> = caches.iter().map(|c| c.size_bytes / c.line_bytes).collect();
    let mut level_acc = vec![0u64; caches.len()];
    let mut level_miss = vec![0u64; caches.len()];
    let last_level_stack = level_stack.last().copied();
    let mut dirty = last_level_stack.map(|s| LineFlags::new(stacks[s].lines));
    let mut writebacks = 0u64;
    let mut dist = vec![0u64; stacks.len()];
    let mut seen = 0u64;
    if warm {
        for (a, base) in arrays.iter().zip(&bases) {
            let bytes = a.elements.saturating_mul(a.elem_bytes as u64);
            for s in stacks.iter_mut() {
                let mut off = 0;
                while off < bytes {
                    s.access(base + off);
                    off += s.line_bytes();
                }
            }
        }
    }

    let stop = nest.walk(limit, &mut |_, _| {}, &mut |a| {
        seen += 1;
        let addr =
            bases[a.array_id].wrapping_add((a.offset as u64).wrapping_mul(a.elem_bytes as u64));
        for (d, s) in dist.iter_mut().zip(stacks.iter_mut()) {
            *d = s.access(addr);
        }
        let mut missed = true;
        for k in 0..caches.len() {
            if !missed {
                break;
            }
            level_acc[k] += 1;
            missed = dist[level_stack[k]] >= capacity[k];
            level_miss[k] += missed as u64;
        }
        if let (Some(flags), Some(s)) = (dirty.as_mut(), last_level_stack) {
            let line = stacks[s].line_of(addr);
            if missed && flags.get(line) {
                writebacks += 1;
                flags.set(line, false);
            }
            if a.write {
                flags.set(line, true);
            }
        }
    })?;
    // Cold: the nest's whole traffic, dirty lines eventually written back. Warm: the
    // traffic during the run only, as a warm measurement sees it.
    if let Some(flags) = dirty.as_ref().filter(|_| !warm) {
        writebacks += flags.count();
    }

    let sampled = stop == Stop::Limit;
    let total = if sampled {
        nest.total_accesses(limit.max(1 << 24))?
            .unwrap_or(seen)
            .max(seen)
    } else {
        seen
    };
    let scale = |x: u64| -> u64 {
        if !sampled || seen == 0 {
            x
        } else {
            (x as f64 * total as f64 / seen as f64).round() as u64
        }
    };
    let levels: Vec<LevelModel> = caches
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let (acc, miss) = (scale(level_acc[k]), scale(level_miss[k]));
            LevelModel {
                name: c.name.clone(),
                accesses: acc,
                misses: miss.min(acc),
                miss_ratio: if level_acc[k] == 0 {
                    0.0
                } else {
                    level_miss[k] as f64 / level_acc[k] as f64
                },
            }
        })
        .collect();
    let writebacks = scale(writebacks);
    let dram_bytes = match (levels.last(), caches.last()) {
        (Some(l), Some(c)) => l
            .misses
            .saturating_add(writebacks)
            .saturating_mul(c.line_bytes),
        _ => 0,
    };
    let mut note = String::from(
        "modelled: fully associative LRU per level, reuse distance over the full access \
         stream, write-allocate/write-back",
    );
    if warm {
        note.push_str(", caches warm with the inputs");
    }
    if let Some(l) = line_sizes.first() {
        if line_sizes.len() == 1 {
            note.push_str(&format!(", {l}-byte lines"));
        }
    }
    if sampled {
        note.push_str(&format!(
            "; sampled: first {seen} of {total} accesses, counts scaled by {:.3}",
            total as f64 / seen.max(1) as f64
        ));
    }
    Ok(CacheModel {
        accesses: total,
        modelled_accesses: seen,
        levels,
        writebacks,
        dram_bytes,
        sampled,
        note,
    })
}

/// Line → value table: dense for footprints up to [`DENSE_LINES_MAX`] lines.
enum LineTable {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

impl LineTable {
    fn new(lines: u64) -> LineTable {
        if lines <= DENSE_LINES_MAX {
            LineTable::Dense(vec![NONE; lines as usize])
        } else {
            LineTable::Sparse(HashMap::new())
        }
    }

    #[inline]
    fn get(&self, line: u64) -> u32 {
        match self {
            LineTable::Dense(v) => v.get(line as usize).copied().unwrap_or(NONE),
            LineTable::Sparse(m) => m.get(&line).copied().unwrap_or(NONE),
        }
    }

    #[inline]
    fn set(&mut self, line: u64, value: u32) {
        match self {
            LineTable::Dense(v) => {
                if let Some(x) = v.get_mut(line as usize) {
                    *x = value;
                } else {
                    // Outside the layout (cannot happen for in-bounds accesses): spill.
                    let mut m: HashMap<u64, u32> = v
                        .iter()
                        .enumerate()
                        .filter(|(_, &t)| t != NONE)
                        .map(|(l, &t)| (l as u64, t))
                        .collect();
                    m.insert(line, value);
                    *self = LineTable::Sparse(m);
                }
            }
            LineTable::Sparse(m) => {
                m.insert(line, value);
            }
        }
    }
}

/// LRU stack distances over one line size.
struct ReuseStack {
    line_bytes: u64,
    shift: Option<u32>,
    /// Lines of the layout.
    lines: u64,
    /// Line → timestamp of its last access.
    last: LineTable,
    /// Timestamp → line accessed then (valid where `last[line] == timestamp`).
    owner: Vec<u64>,
    /// Fenwick tree (1-based) over timestamps: 1 where a line's last access is.
    tree: Vec<u32>,
    now: u32,
    live: u32,
    prev_line: u64,
}

impl ReuseStack {
    fn new(line_bytes: u64, lines: u64) -> ReuseStack {
        let cap = 1usize << 12;
        ReuseStack {
            line_bytes,
            shift: line_bytes
                .is_power_of_two()
                .then(|| line_bytes.trailing_zeros()),
            lines,
            last: LineTable::new(lines),
            owner: vec![0; cap],
            tree: vec![0; cap + 1],
            now: 0,
            live: 0,
            prev_line: u64::MAX,
        }
    }

    #[inline]
    fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    fn line_of(&self, addr: u64) -> u64 {
        match self.shift {
            Some(s) => addr >> s,
            None => addr / self.line_bytes,
        }
    }

    /// Records an access; returns its reuse distance in lines ([`COLD`] on first touch).
    #[inline]
    fn access(&mut self, addr: u64) -> u64 {
        let line = self.line_of(addr);
        if line == self.prev_line {
            // Already the most recently used line: the stack does not change.
            return 0;
        }
        self.prev_line = line;
        if self.now as usize == self.owner.len() {
            self.compact();
        }
        let p = self.last.get(line);
        let d = if p == NONE {
            self.live += 1;
            COLD
        } else {
            let d = (self.live - self.prefix(p)) as u64;
            self.add(p, -1);
            d
        };
        let t = self.now;
        self.add(t, 1);
        self.owner[t as usize] = line;
        self.last.set(line, t);
        self.now += 1;
        d
    }

    /// Number of marks at timestamps `0..=t`.
    #[inline]
    fn prefix(&self, t: u32) -> u32 {
        let mut i = t as usize + 1;
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s
    }

    #[inline]
    fn add(&mut self, t: u32, delta: i32) {
        let mut i = t as usize + 1;
        let n = self.tree.len();
        while i < n {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Renumbers the live lines' timestamps `0..live` in order, growing the timestamp
    /// space when more than half of it is live.
    fn compact(&mut self) {
        let mut k = 0usize;
        for t in 0..self.now as usize {
            let line = self.owner[t];
            if self.last.get(line) == t as u32 {
                self.owner[k] = line;
                self.last.set(line, k as u32);
                k += 1;
            }
        }
        debug_assert_eq!(k, self.live as usize);
        let mut cap = self.owner.len();
        while k * 2 > cap {
            cap *= 2;
        }
        // Timestamps stay below `NONE`.
        cap = cap.min(NONE as usize - 1).max(k + 1);
        self.owner.resize(cap, 0);
        self.tree.clear();
        self.tree.resize(cap + 1, 0);
        // A Fenwick tree of k ones followed by zeros.
        for i in 1..=cap {
            let low = i & i.wrapping_neg();
            let lo = i - low; // covers (lo, i]
            self.tree[i] = (i.min(k).saturating_sub(lo)) as u32;
        }
        self.now = k as u32;
    }
}

/// One flag per line.
struct LineFlags {
    words: Vec<u64>,
    extra: HashMap<u64, bool>,
}

impl LineFlags {
    fn new(lines: u64) -> LineFlags {
        let words = if lines <= DENSE_LINES_MAX {
            vec![0; lines.div_ceil(64) as usize]
        } else {
            Vec::new()
        };
        LineFlags {
            words,
            extra: HashMap::new(),
        }
    }

    #[inline]
    fn get(&self, line: u64) -> bool {
        match self.words.get((line >> 6) as usize) {
            Some(w) => w >> (line & 63) & 1 == 1,
            None => self.extra.get(&line).copied().unwrap_or(false),
        }
    }

    #[inline]
    fn set(&mut self, line: u64, v: bool) {
        match self.words.get_mut((line >> 6) as usize) {
            Some(w) => {
                if v {
                    *w |= 1 << (line & 63);
                } else {
                    *w &= !(1 << (line & 63));
                }
            }
            None => {
                self.extra.insert(line, v);
            }
        }
    }

    fn count(&self) -> u64 {
        self.words
            .iter()
            .map(|w| w.count_ones() as u64)
            .sum::<u64>()
            + self.extra.values().filter(|v| **v).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: reuse distances by scanning an explicit LRU stack.
    fn naive(lines: &[u64]) -> Vec<u64> {
        let mut stack: Vec<u64> = Vec::new();
        lines
            .iter()
            .map(|&l| match stack.iter().rposition(|&x| x == l) {
                Some(p) => {
                    let d = (stack.len() - 1 - p) as u64;
                    stack.remove(p);
                    stack.push(l);
                    d
                }
                None => {
                    stack.push(l);
                    COLD
                }
            })
            .collect()
    }

    #[test]
    fn fenwick_distances_match_an_explicit_stack_across_compactions() {
        // A pseudo-random stream over 700 lines, long enough to compact many times.
        let mut x = 12345u64;
        let lines: Vec<u64> = (0..30_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 3 == 0 {
                    (i / 3) % 700
                } else {
                    x % 700
                }
            })
            .collect();
        let mut s = ReuseStack::new(64, 700);
        let got: Vec<u64> = lines.iter().map(|&l| s.access(l * 64)).collect();
        assert_eq!(got, naive(&lines));
    }
}

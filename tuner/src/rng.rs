//! The one seeded random generator of the tuner (ChaCha8 from `rand_chacha`): a seed
//! gives the same search, the same random retrieval order and the same evaluation on
//! every machine and every run.

use rand::{Rng as _, SeedableRng};

/// The generator every random choice of the tuner draws from.
#[derive(Debug, Clone)]
pub struct Rng(rand_chacha::ChaCha8Rng);

impl Rng {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(rand_chacha::ChaCha8Rng::seed_from_u64(seed))
    }

    /// A uniform index below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.0.random_range(0..n)
        }
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.0.random_bool(p.clamp(0.0, 1.0))
    }

    /// One of `items` (None when empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items
            .get(self.below(items.len()))
            .filter(|_| !items.is_empty())
    }

    /// Shuffles `v` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn a_seed_gives_one_sequence() {
        let draw = |seed| {
            let mut r = Rng::new(seed);
            (0..16).map(|_| r.below(1000)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let mut r = Rng::new(1);
        assert_eq!(r.below(0), 0);
        assert!((0..100).all(|_| r.below(3) < 3));
        assert!(!r.chance(0.0) && r.chance(1.0));
        let mut v: Vec<usize> = (0..10).collect();
        r.shuffle(&mut v);
        v.sort();
        assert_eq!(v, (0..10).collect::<Vec<_>>());
    }
}

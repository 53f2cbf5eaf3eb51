//! ChaCha8's keystream as a source of 64-bit words (Bernstein 2008; the block function of
//! RFC 8439 §2.3 with 8 rounds instead of 20): the key, a 64-bit block counter from 0 in words
//! 12–13 and a zero stream in words 14–15, as `rand_chacha::ChaCha8Rng::from_seed` lays them
//! out; each block's sixteen output words are taken in order, two to a `u64`, low word first.
//! The same words as `ChaCha8Rng`'s `next_u64` (a test compares them), in one small loop: the
//! crate's four-blocks-at-a-time version was 5.6 KB of the first view's wasm
//! (docs/PERFORMANCE.md, "Size of each build").

/// A ChaCha8 stream over a 32-byte key.
pub(crate) struct ChaCha8 {
    key: [u32; 8],
    counter: u64,
    block: [u32; 16],
    /// The next word of `block` to hand out (16: a new block is due).
    at: usize,
}

impl ChaCha8 {
    pub(crate) fn new(key: [u8; 32]) -> ChaCha8 {
        let mut words = [0u32; 8];
        for (w, b) in words.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        ChaCha8 {
            key: words,
            counter: 0,
            block: [0; 16],
            at: 16,
        }
    }

    fn next_u32(&mut self) -> u32 {
        if self.at == 16 {
            self.refill();
        }
        let w = self.block[self.at];
        self.at += 1;
        w
    }

    /// The next two words, the first in the low half.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let lo = self.next_u32();
        let hi = self.next_u32();
        u64::from(lo) | (u64::from(hi) << 32)
    }

    fn refill(&mut self) {
        // "expand 32-byte k"
        let mut input = [0u32; 16];
        input[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
        input[4..12].copy_from_slice(&self.key);
        input[12] = self.counter as u32;
        input[13] = (self.counter >> 32) as u32;
        let mut x = input;
        for _ in 0..4 {
            quarter_round(&mut x, 0, 4, 8, 12);
            quarter_round(&mut x, 1, 5, 9, 13);
            quarter_round(&mut x, 2, 6, 10, 14);
            quarter_round(&mut x, 3, 7, 11, 15);
            quarter_round(&mut x, 0, 5, 10, 15);
            quarter_round(&mut x, 1, 6, 11, 12);
            quarter_round(&mut x, 2, 7, 8, 13);
            quarter_round(&mut x, 3, 4, 9, 14);
        }
        for (out, (a, b)) in self.block.iter_mut().zip(x.iter().zip(&input)) {
            *out = a.wrapping_add(*b);
        }
        self.counter = self.counter.wrapping_add(1);
        self.at = 0;
    }
}

fn quarter_round(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::{Rng, SeedableRng};

    /// The same words as rand_chacha's `ChaCha8Rng`, over several blocks and keys.
    #[test]
    fn the_words_are_rand_chachas() {
        for k in 0u8..8 {
            let mut key = [0u8; 32];
            for (i, b) in key.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(37).wrapping_add(k.wrapping_mul(101));
            }
            if k == 0 {
                key = [0; 32];
            }
            let mut ours = ChaCha8::new(key);
            let mut theirs = ChaCha8Rng::from_seed(key);
            for i in 0..200 {
                assert_eq!(ours.next_u64(), theirs.next_u64(), "key {k}, word {i}");
            }
        }
    }
}

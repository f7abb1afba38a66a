//! SipHash-1-3 of one byte string, 64-bit output: the keyed hash that picks
//! a key's line and words in the bloom array ([`crate::bloom`]).
//!
//! It is the reference algorithm (Aumasson and Bernstein's SipHash with one
//! compression round and three finalization rounds), written for the one
//! call the bloom makes: the whole key at once, no streaming state, the
//! key's four initial words kept ready ([`SipKey`], made once per array
//! from its seed), and the bytes after the last whole word read with one
//! load. Its output is bit for bit the `siphasher` crate's
//! `SipHasher13::new_with_keys(k0, k1).hash(bytes)`, which the tests check
//! on every length up to 64; for a 16-byte key it saves 43 of a bloom
//! allow's instructions (283 with that call in its place, 240 with this:
//! BENCHMARKS.md, the instruction counts).

/// The four state words SipHash starts from under a key (k0, k1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SipKey([u64; 4]);

impl SipKey {
    /// The state for the 128-bit key (`k0`, `k1`).
    pub const fn new(k0: u64, k1: u64) -> SipKey {
        SipKey([
            k0 ^ 0x736f_6d65_7073_6575,
            k1 ^ 0x646f_7261_6e64_6f6d,
            k0 ^ 0x6c79_6765_6e65_7261,
            k1 ^ 0x7465_6462_7974_6573,
        ])
    }

    /// The key (`k0`, `k1`) the state was made from.
    pub const fn key(&self) -> (u64, u64) {
        (
            self.0[0] ^ 0x736f_6d65_7073_6575,
            self.0[1] ^ 0x646f_7261_6e64_6f6d,
        )
    }

    /// SipHash-1-3 of `bytes`.
    #[inline(always)]
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        // The last block first (it needs a shift by a variable, and few
        // registers are free once the state is loaded): the 0..=7 bytes
        // after the whole words, and the length's low byte on top. A
        // longer key has them as the top bytes of its last 8 (one load, no
        // branch on how many).
        let whole = bytes.len() & !7;
        let left = bytes.len() - whole;
        let last = if left == 0 {
            // A key of whole words (8, 16 bytes: an id, an IPv6 address).
            0
        } else if bytes.len() >= 8 {
            let word = le_word(&bytes[bytes.len() - 8..]);
            word >> (64 - 8 * left)
        } else {
            tail(bytes)
        };
        let mut v = self.0;
        for block in bytes[..whole].chunks_exact(8) {
            compress(&mut v, le_word(block));
        }
        compress(&mut v, last | (bytes.len() as u64) << 56);
        v[2] ^= 0xff;
        round(&mut v);
        round(&mut v);
        round(&mut v);
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }
}

/// 8 bytes as a little-endian word.
#[inline(always)]
fn le_word(bytes: &[u8]) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// Up to 7 bytes as a little-endian word, read in pieces of 4, 2 and 1
/// (no copy through memory).
#[inline(always)]
fn tail(bytes: &[u8]) -> u64 {
    let mut word = 0;
    let mut at = 0;
    if let Some(&[a, b, c, d]) = bytes.get(..4) {
        word = u64::from(u32::from_le_bytes([a, b, c, d]));
        at = 4;
    }
    if let Some(&[a, b]) = bytes.get(at..at + 2) {
        word |= u64::from(u16::from_le_bytes([a, b])) << (8 * at);
        at += 2;
    }
    if let Some(&a) = bytes.get(at) {
        word |= u64::from(a) << (8 * at);
    }
    word
}

/// One message word, with SipHash-1-3's one compression round.
#[inline(always)]
fn compress(v: &mut [u64; 4], m: u64) {
    v[3] ^= m;
    round(v);
    v[0] ^= m;
}

/// One SipRound.
#[inline(always)]
fn round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

#[cfg(test)]
mod tests {
    use super::*;
    use siphasher::sip::SipHasher13;

    /// The reference implementation's answer, on every length up to 64
    /// bytes and many keys.
    #[test]
    fn hashes_as_siphasher_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let mut bytes = [0u8; 64];
        for _ in 0..crate::rounds(2000) {
            let (k0, k1) = (crate::xorshift(&mut state), crate::xorshift(&mut state));
            for byte in bytes.iter_mut() {
                *byte = crate::xorshift(&mut state) as u8;
            }
            let key = SipKey::new(k0, k1);
            assert_eq!(key.key(), (k0, k1));
            for len in 0..=bytes.len() {
                let want = SipHasher13::new_with_keys(k0, k1).hash(&bytes[..len]);
                assert_eq!(
                    key.hash(&bytes[..len]),
                    want,
                    "k0 {k0:#x}, k1 {k1:#x}, len {len}"
                );
            }
        }
    }
}

//! SipHash with a 128-bit output, keyed by the caller: how the bloom array
//! turns a key into the words that limit it.
//!
//! SipHash (Aumasson and Bernstein, 2012) is a pseudorandom function made
//! for hashing short inputs under a secret key, so that whoever does not
//! know the key cannot choose inputs that collide. The bloom array uses
//! SipHash-1-3 (one compression round, three finalization rounds), the
//! variant Rust's standard `HashMap` and CPython hash with for the same
//! reason: resistance to flooding at a fraction of SipHash-2-4's cost on
//! short keys. Its 128-bit output gives the two independent 64-bit halves
//! that double hashing needs, in one pass over the key.

/// SipHash-1-3 of `data` under the key (`k0`, `k1`), with a 128-bit output
/// returned as its two little-endian 64-bit halves. The key's 16 bytes are
/// `k0` then `k1`, each little-endian, as the reference implementation
/// reads them.
#[inline]
pub fn sip13_128(k0: u64, k1: u64, data: &[u8]) -> (u64, u64) {
    sip128::<1, 3>(k0, k1, data)
}

/// SipHash-2-4 with a 128-bit output; the reference variant, kept to check
/// the shared rounds against the published test vectors.
#[cfg(test)]
fn sip24_128(k0: u64, k1: u64, data: &[u8]) -> (u64, u64) {
    sip128::<2, 4>(k0, k1, data)
}

/// The four lanes of SipHash's state.
struct State([u64; 4]);

impl State {
    #[inline(always)]
    fn round(&mut self) {
        let [v0, v1, v2, v3] = &mut self.0;
        *v0 = v0.wrapping_add(*v1);
        *v1 = v1.rotate_left(13) ^ *v0;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v3);
        *v3 = v3.rotate_left(16) ^ *v2;
        *v0 = v0.wrapping_add(*v3);
        *v3 = v3.rotate_left(21) ^ *v0;
        *v2 = v2.wrapping_add(*v1);
        *v1 = v1.rotate_left(17) ^ *v2;
        *v2 = v2.rotate_left(32);
    }

    #[inline(always)]
    fn rounds(&mut self, n: usize) {
        for _ in 0..n {
            self.round();
        }
    }

    #[inline(always)]
    fn compress<const C: usize>(&mut self, m: u64) {
        self.0[3] ^= m;
        self.rounds(C);
        self.0[0] ^= m;
    }

    #[inline(always)]
    fn fold(&self) -> u64 {
        self.0[0] ^ self.0[1] ^ self.0[2] ^ self.0[3]
    }
}

/// SipHash-C-D with the 128-bit output.
#[inline(always)]
fn sip128<const C: usize, const D: usize>(k0: u64, k1: u64, data: &[u8]) -> (u64, u64) {
    let mut s = State([
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d ^ 0xee,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ]);
    let mut blocks = data.chunks_exact(8);
    for block in &mut blocks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(block);
        s.compress::<C>(u64::from_le_bytes(bytes));
    }
    // The last block: the leftover bytes, and the length's low byte on top
    // (a loop over at most seven bytes, cheaper than a call to memcpy).
    let mut last = (data.len() as u64) << 56;
    for (i, byte) in blocks.remainder().iter().enumerate() {
        last |= u64::from(*byte) << (8 * i);
    }
    s.compress::<C>(last);
    s.0[2] ^= 0xee;
    s.rounds(D);
    let low = s.fold();
    s.0[1] ^= 0xdd;
    s.rounds(D);
    (low, s.fold())
}

#[cfg(test)]
mod tests {
    use super::*;

    const K0: u64 = 0x0706_0504_0302_0100;
    const K1: u64 = 0x0f0e_0d0c_0b0a_0908;

    /// The input of the reference test vectors: bytes 0, 1, 2, ... `len`-1
    /// (the vectors used here are at most 64 bytes long).
    fn input(len: usize) -> &'static [u8] {
        const BYTES: [u8; 64] = {
            let mut bytes = [0u8; 64];
            let mut i = 0;
            while i < 64 {
                bytes[i] = i as u8;
                i += 1;
            }
            bytes
        };
        &BYTES[..len]
    }

    fn bytes((low, high): (u64, u64)) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&low.to_le_bytes());
        out[8..].copy_from_slice(&high.to_le_bytes());
        out
    }

    /// SipHash-2-4, 128-bit output: entries of `vectors_sip128` in the
    /// reference implementation's vectors.h (key 00..0f, input 00..len-1).
    #[test]
    fn sip24_matches_the_reference_vectors() {
        let cases: [(usize, [u8; 16]); 6] = [
            (
                0,
                [
                    0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7,
                    0x55, 0x02, 0x93,
                ],
            ),
            (
                1,
                [
                    0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b,
                    0x22, 0xfc, 0x45,
                ],
            ),
            (
                7,
                [
                    0xa1, 0xf1, 0xeb, 0xbe, 0xd8, 0xdb, 0xc1, 0x53, 0xc0, 0xb8, 0x4a, 0xa6, 0x1f,
                    0xf0, 0x82, 0x39,
                ],
            ),
            (
                8,
                [
                    0x3b, 0x62, 0xa9, 0xba, 0x62, 0x58, 0xf5, 0x61, 0x0f, 0x83, 0xe2, 0x64, 0xf3,
                    0x14, 0x97, 0xb4,
                ],
            ),
            (
                15,
                [
                    0x54, 0x93, 0xe9, 0x99, 0x33, 0xb0, 0xa8, 0x11, 0x7e, 0x08, 0xec, 0x0f, 0x97,
                    0xcf, 0xc3, 0xd9,
                ],
            ),
            (
                63,
                [
                    0x51, 0x50, 0xd1, 0x77, 0x2f, 0x50, 0x83, 0x4a, 0x50, 0x3e, 0x06, 0x9a, 0x97,
                    0x3f, 0xbd, 0x7c,
                ],
            ),
        ];
        for (len, expected) in cases {
            assert_eq!(
                bytes(sip24_128(K0, K1, input(len))),
                expected,
                "length {len}"
            );
        }
    }

    /// SipHash-1-3, 128-bit output. The empty input's value is the one the
    /// `siphasher` crate publishes; the others come from the reference C
    /// code built with cROUNDS=1 and dROUNDS=3 (the same build reproduces
    /// the 2-4 vectors above).
    #[test]
    fn sip13_matches_the_reference_code() {
        let cases: [(usize, (u64, u64)); 6] = [
            (0, (0xbea5_8827_b2bc_7ee7, 0x0130_30dd_6adb_62fd)),
            (1, (0xa8ed_d360_0437_6ffc, 0x63f0_2f2b_cc73_055e)),
            (7, (0xc3e0_aaf2_23b9_8410, 0x77ab_4808_c82e_2fa6)),
            (8, (0xb4da_e3d5_e1fe_12aa, 0x99c7_f935_ab16_4f72)),
            (16, (0xeb8e_5115_57d9_a8d0, 0x9317_9e3d_f8b0_13b5)),
            (63, (0x6f42_fe4e_e300_584c, 0xad60_52a7_0a6b_9f07)),
        ];
        for (len, expected) in cases {
            assert_eq!(sip13_128(K0, K1, input(len)), expected, "length {len}");
        }
        assert_eq!(
            bytes(sip13_128(K0, K1, &[])),
            [231, 126, 188, 178, 39, 136, 165, 190, 253, 98, 219, 106, 221, 48, 48, 1]
        );
    }

    #[test]
    fn the_key_changes_the_hash() {
        let data = b"198.51.100.7";
        assert_ne!(sip13_128(K0, K1, data), sip13_128(K0 ^ 1, K1, data));
        assert_ne!(sip13_128(K0, K1, data), sip13_128(K0, K1 ^ 1, data));
    }
}

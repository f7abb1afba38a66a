//! Draws: the randomness a caller supplies where a decision is a roll.

/// The largest `f64` below one.
const BELOW_ONE: f64 = 1.0 - f64::EPSILON / 2.0;

/// A caller's draw held to [0, 1): values outside are clamped into range
/// and NaN counts as 0, so a bad draw can never widen a documented range.
#[inline]
pub fn clamp(draw: f64) -> f64 {
    if draw.is_nan() {
        0.0
    } else {
        draw.clamp(0.0, BELOW_ONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_into_the_half_open_unit_interval() {
        assert_eq!(clamp(0.25), 0.25);
        assert_eq!(clamp(-3.0), 0.0);
        assert_eq!(clamp(f64::NAN), 0.0);
        assert_eq!(clamp(f64::NEG_INFINITY), 0.0);
        assert!(clamp(1.0) < 1.0);
        assert!(clamp(f64::INFINITY) < 1.0);
        assert!(clamp(0.999_999) < 1.0);
    }
}

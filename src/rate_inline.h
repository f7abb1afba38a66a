/*
 * The rate word's fast path, inline (tests/header.rs appends this file to
 * the generated header, inside its include guard). In the reference its
 * declarations join the rate word's section: the Doxygen group `rate`
 * (tests/header.rs names each section's group).
 */
/** \addtogroup rate
 * @{ */
/**
 * Defined as 1 where this header has the rate word's fast path inline:
 * weir_rate_allow_inline() and weir_rate_next_inline().
 *
 * weir_rate_allow_inline and weir_rate_next_inline answer exactly what
 * weir_rate_allow and weir_rate_next answer, for every word, limit and
 * `now` (the encoding is the one `weir_rate` documents; tests/c/rate_inline.c
 * runs both over random traces and compares every decision), but compile
 * into the caller: no call, no panic guard. They exist only where the word
 * is a lock-free 64-bit C11 atomic: a C11 compiler with `<stdatomic.h>`,
 * WEIR_WORDS_LOCK_FREE, and the hosted library (a program that defines
 * WEIR_NO_INLINE leaves them out too); never where the library
 * takes a lock for a word (an inline compare-and-swap would bypass that
 * lock). C++ does not get them (C++ has no `_Atomic` before C++23, and
 * std::atomic_ref needs C++20): it calls weir_rate_allow. Where they exist,
 * WEIR_RATE_INLINE is defined as 1.
 */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && \
    !defined(__STDC_NO_ATOMICS__) && WEIR_WORDS_LOCK_FREE && defined(WEIR_HOSTED) &&      \
    !defined(WEIR_NO_INLINE)
#include <stdatomic.h>

#define WEIR_RATE_INLINE 1

/* The word is 8 bytes, and the calls below refuse one that is not 8-byte
 * aligned, as the library does; an 8-byte _Atomic needs no more. */
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t),
               "weir: the rate word is a plain 64-bit atomic");

/* ceil(count × I) ns, saturating at UINT64_MAX (count < 1024). */
static inline uint64_t weir_rate_span_inline_(const weir_rate_limit *limit, uint64_t count) {
  uint64_t whole;
  if ((limit->interval_ns >> 54) == 0) {
    whole = count * limit->interval_ns; /* < 2^10 × 2^54: no overflow */
  } else if (count != 0 && limit->interval_ns > UINT64_MAX / count) {
    return UINT64_MAX;
  } else {
    whole = count * limit->interval_ns;
  }
  uint64_t fraction = (count * (uint64_t)limit->interval_frac + 0xffffffffu) >> 32;
  return whole > UINT64_MAX - fraction ? UINT64_MAX : whole + fraction;
}

/* Whether `rate` and `limit` are what weir_rate_allow accepts: non-NULL,
 * 8-byte aligned, and a limit weir_rate_limit_new could have made. */
static inline bool weir_rate_usable_inline_(const weir_rate *rate, const weir_rate_limit *limit) {
  if (rate == NULL || ((uintptr_t)rate & 7) != 0 || limit == NULL ||
      ((uintptr_t)limit % _Alignof(weir_rate_limit)) != 0) {
    return false;
  }
  if (limit->burst < 1 || limit->burst > WEIR_RATE_MAX_BURST) {
    return false;
  }
  uint64_t window = weir_rate_span_inline_(limit, limit->burst);
  return window >= (uint64_t)WEIR_RATE_MIN_WINDOW_NS && window <= (uint64_t)INT64_MAX;
}

/* `weir_rate_allow_inline` for every limit: checked in full, each span
 * saturating. */
static inline bool weir_rate_allow_checked_inline_(weir_rate *rate, const weir_rate_limit *limit,
                                                   int64_t now) {
  if (!weir_rate_usable_inline_(rate, limit) || now < 0) {
    return false;
  }
  uint64_t t = now > WEIR_RATE_MAX_NOW ? (uint64_t)WEIR_RATE_MAX_NOW : (uint64_t)now;
  _Atomic uint64_t *word = (_Atomic uint64_t *)(void *)&rate->state;
  uint64_t current = atomic_load_explicit(word, memory_order_relaxed);
  for (;;) {
    uint64_t count = current & 1023u;
    uint64_t start = (current >> 10) << 9;
    uint64_t next;
    /* An earlier `now` than the start is no time passing. */
    if ((t > start ? t - start : 0) >= weir_rate_span_inline_(limit, count)) {
      next = (((t + 511u) >> 9) << 10) | 1u;
    } else if (count < limit->burst) {
      next = current + 1;
    } else {
      return false;
    }
    if (atomic_compare_exchange_weak_explicit(word, &current, next, memory_order_relaxed,
                                              memory_order_relaxed)) {
      return true;
    }
  }
}

/** weir_rate_allow(), inline: the same answer and the same write. The
 * common limit takes a shorter path: a burst of 1..1023, an interval under
 * 2^53 ns and burst × interval_ns at least WEIR_RATE_MIN_WINDOW_NS are a
 * window weir_rate_allow accepts (from that product to under 2^63 ns), and
 * with such an interval no span ceil(count × interval), count < 1024,
 * needs to saturate. Any other limit (perhaps valid, perhaps not) takes the
 * full check. */
static inline bool weir_rate_allow_inline(weir_rate *rate, const weir_rate_limit *limit, int64_t now) {
  if (rate == NULL || ((uintptr_t)rate & 7) != 0 || limit == NULL ||
      ((uintptr_t)limit % _Alignof(weir_rate_limit)) != 0 || now < 0) {
    return false;
  }
  uint64_t interval = limit->interval_ns, burst = limit->burst;
  if (burst - 1 >= (uint64_t)WEIR_RATE_MAX_BURST || (interval >> 53) != 0 ||
      burst * interval < (uint64_t)WEIR_RATE_MIN_WINDOW_NS) {
    return weir_rate_allow_checked_inline_(rate, limit, now);
  }
  uint64_t frac = limit->interval_frac;
  uint64_t t = now > WEIR_RATE_MAX_NOW ? (uint64_t)WEIR_RATE_MAX_NOW : (uint64_t)now;
  _Atomic uint64_t *word = (_Atomic uint64_t *)(void *)&rate->state;
  uint64_t current = atomic_load_explicit(word, memory_order_relaxed);
  for (;;) {
    uint64_t count = current & 1023u;
    /* The window's start plus the span of its count: start < 2^63,
     * count × interval < 2^63 and the rounded fraction < 2^10, so the sum
     * does not overflow. Expired is a count of 0 (never opened) or `t` at
     * least the span after the start (an earlier `t` than the start is no
     * time passing): with a count of 1 or more, `t` at or past the sum. */
    uint64_t expiry = ((current >> 10) << 9) + count * interval + ((count * frac + 0xffffffffu) >> 32);
    uint64_t next;
    if (count == 0 || t >= expiry) {
      next = (((t + 511u) >> 9) << 10) | 1u; /* opens a window at `t` */
    } else if (count < burst) {
      next = current + 1;
    } else {
      return false;
    }
    if (atomic_compare_exchange_weak_explicit(word, &current, next, memory_order_relaxed,
                                              memory_order_relaxed)) {
      return true;
    }
  }
}

/** weir_rate_next(), inline: the same answer; reads the word only. */
static inline int64_t weir_rate_next_inline(const weir_rate *rate, const weir_rate_limit *limit,
                                            int64_t now) {
  if (!weir_rate_usable_inline_(rate, limit) || now < 0) {
    return INT64_MAX;
  }
  uint64_t t = now > WEIR_RATE_MAX_NOW ? (uint64_t)WEIR_RATE_MAX_NOW : (uint64_t)now;
  uint64_t current =
      atomic_load_explicit((const _Atomic uint64_t *)(const void *)&rate->state,
                           memory_order_relaxed);
  uint64_t count = current & 1023u;
  uint64_t start = (current >> 10) << 9;
  uint64_t span = weir_rate_span_inline_(limit, count);
  uint64_t expiry = start > UINT64_MAX - span ? UINT64_MAX : start + span;
  if (t >= expiry || count < limit->burst) {
    return 0;
  }
  if (expiry > (uint64_t)WEIR_RATE_MAX_NOW) {
    return INT64_MAX;
  }
  return (int64_t)(expiry - t);
}
#endif
/** @} */

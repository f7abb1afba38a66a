/* The bay's draws in C: the splitmix64 generator and the draws built on it
 * exactly as bay/src/lib.rs's Rng makes them, so a C replay of a panel sees
 * the values the page saw. Each program has its own state. */
#ifndef BAY_DRAWS_H
#define BAY_DRAWS_H

#include <stdint.h>

static uint64_t bay_state;

static inline uint64_t bay_next_u64(void) {
    uint64_t z = (bay_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A draw from [0, 1) with 53 random bits. */
static inline double bay_unit(void) { return (double)(bay_next_u64() >> 11) / 9007199254740992.0; }

/* A gap between arrivals averaging mean ns: uniform over [mean/2, 3mean/2). */
static inline int64_t bay_gap(double mean) {
    int64_t g = (int64_t)(mean * (0.5 + bay_unit()));
    return g < 1 ? 1 : g;
}

#endif

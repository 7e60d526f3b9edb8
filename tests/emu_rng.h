/* emu_rng.h - the emulator tests' fixed-seed xorshift64 and float bit casts.  A program that wants other inputs
 * defines TEST_RNG_SEED before including this header. */
#ifndef TILE_EMU_RNG_H
#define TILE_EMU_RNG_H

#include <stdint.h>
#include <string.h>

#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 0x9E3779B97F4A7C15ull
#endif

static uint64_t rng_state = TEST_RNG_SEED;
static inline uint64_t rnd64(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
/* uniform in [lo, hi), 24 bits */
static inline float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(rnd64() >> 40) / (float)(1 << 24); }
static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

#endif

/* test_rng.h - the numeric tests' random inputs: xorshift64 seeded from the clock (fresh
 * inputs every run), or from TILE_TEST_SEED to replay a failure (tests print `seed`). */
#ifndef TILE_TEST_RNG_H
#define TILE_TEST_RNG_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint64_t seed, rs;

static void seed_rng(void) {
    seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    if (getenv("TILE_TEST_SEED")) seed = strtoull(getenv("TILE_TEST_SEED"), NULL, 0);
    rs = seed | 1;
}

static uint64_t rnext(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static inline double urand(void) { return (double)(rnext() >> 11) / 9007199254740992.0 * 2.0 - 1.0; } /* [-1, 1) */
static inline int irand(int n) { return (int)((rnext() >> 33) % (uint64_t)n); }                          /* [0, n) */

#endif

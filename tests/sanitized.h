/* sanitized.h - what a test does differently under AddressSanitizer.
 *
 * The suite runs twice in CI (scripts/test.sh): plain, then under ASan+UBSan, where the emulator runs
 * 2-5x slower.  The sanitizer run is there to check memory and undefined behaviour on every code path,
 * not to repeat the statistics, so a few long tests do less there (docs/testing.md, "Under the
 * sanitizers"): sweeps over three parameters run a Latin square of their cross product (every value of
 * every parameter still appears, a third of the cases), sweeps whose cases differ in a variant (a reduce
 * kind, a dtype) run one variant a case, turning from case to case (turn_case), and sampling tests draw
 * fewer points.  The plain run keeps everything. */
#ifndef TILE_TESTS_SANITIZED_H
#define TILE_TESTS_SANITIZED_H

#include <stdbool.h>

#if defined(__SANITIZE_ADDRESS__)
#define TILE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TILE_TEST_SANITIZED 1
#endif
#endif
#ifndef TILE_TEST_SANITIZED
#define TILE_TEST_SANITIZED 0
#endif

/* Case (a, b, c) of a sweep over three parameters of up to three values each (indices from 0): always in
 * the plain run; under the sanitizers only when a + b + c is a multiple of 3, a Latin square that still
 * pairs every value of each parameter with every value of each other one. */
static inline bool sweep_case(int a, int b, int c) { return !TILE_TEST_SANITIZED || (a + b + c) % 3 == 0; }

/* Value v of a parameter of n values, for the case whose other parameters' indices add up to `turn`: always
 * in the plain run; under the sanitizers only when v == turn % n, so each combination of the other
 * parameters runs one value of this one, and the value turns with them (with at least n combinations
 * along one parameter, every value meets every value of each other parameter). */
static inline bool turn_case(int v, int n, int turn) { return !TILE_TEST_SANITIZED || v == turn % n; }

/* n points, or n / div under the sanitizers (at least 1). */
static inline int sanitized_count(int n, int div) { return TILE_TEST_SANITIZED ? (n / div > 0 ? n / div : 1) : n; }

#endif

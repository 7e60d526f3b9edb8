/* criterion.h - the part of Criterion's API the test programs use, for the ThreadSanitizer build.
 *
 * Criterion cannot start under ThreadSanitizer: its runner maps a shared arena at a random fixed
 * address, which TSan's mmap refuses outside the application's ranges ("Could not initialize
 * inheritable arena", Criterion issue #274).  scripts/sanitize_thread.sh therefore builds the test
 * programs that start threads or processes against this header instead (tests/CMakeLists.txt,
 * TILE_SANITIZE=thread; tests/tsan/runner.c is the runner): the same sources, unchanged, each
 * Test(...) registered by a constructor and run in a forked child as Criterion would, --filter
 * 'suite/name' patterns as fnmatch(3) globs.  A child's exit status is its result, so a ThreadSanitizer
 * report (exit code 66 at exit) fails the test that made it.
 *
 * cr_assert* stops the test, cr_expect* records the failure and goes on, cr_skip ends it as skipped. */
#ifndef TILE_TESTS_TSAN_CRITERION_H
#define TILE_TESTS_TSAN_CRITERION_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct ShimTest {
    void (*init)(void);
    void (*fini)(void);
    double timeout;
    bool disabled;
} ShimTest;

void shim_register(const char *suite, const char *name, void (*fn)(void), ShimTest opts);
/* A failed check at file:line; fatal ones end the test. fmt may be "" (no message). */
/* (no format attribute: "" leads every message, so an empty one is legal) */
void shim_fail(bool fatal, const char *file, int line, const char *expr, const char *fmt, ...);
_Noreturn void shim_skip(const char *fmt, ...);
void shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define SHIM_TEST_(suite, name, ...)                                                                         \
    static void suite##_##name##_impl(void);                                                                 \
    __attribute__((constructor)) static void suite##_##name##_reg(void) {                                   \
        shim_register(#suite, #name, suite##_##name##_impl, (ShimTest){__VA_ARGS__});         \
    }                                                                                                        \
    static void suite##_##name##_impl(void)
#define Test(suite, ...) SHIM_TEST_(suite, __VA_ARGS__, .disabled = false)

#define SHIM_CHECK_(fatal, cond, expr, ...)                                                                  \
    do {                                                                                                     \
        if (!(cond)) shim_fail(fatal, __FILE__, __LINE__, expr, "" __VA_ARGS__);                             \
    } while (0)

#define cr_assert(cond, ...) SHIM_CHECK_(true, (cond), #cond, __VA_ARGS__)
#define cr_expect(cond, ...) SHIM_CHECK_(false, (cond), #cond, __VA_ARGS__)
#define cr_assert_not(cond, ...) SHIM_CHECK_(true, !(cond), "!(" #cond ")", __VA_ARGS__)
#define cr_expect_not(cond, ...) SHIM_CHECK_(false, !(cond), "!(" #cond ")", __VA_ARGS__)
#define SHIM_CMP_(fatal, a, op, b, ...) SHIM_CHECK_(fatal, (a)op(b), #a " " #op " " #b, __VA_ARGS__)
#define cr_assert_eq(a, b, ...) SHIM_CMP_(true, a, ==, b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) SHIM_CMP_(true, a, !=, b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) SHIM_CMP_(true, a, <, b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) SHIM_CMP_(true, a, <=, b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) SHIM_CMP_(true, a, >, b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) SHIM_CMP_(true, a, >=, b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) SHIM_CMP_(false, a, ==, b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) SHIM_CMP_(false, a, !=, b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) SHIM_CMP_(false, a, <, b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) SHIM_CMP_(false, a, <=, b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) SHIM_CMP_(false, a, >, b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) SHIM_CMP_(false, a, >=, b, __VA_ARGS__)
#define cr_assert_null(p, ...) SHIM_CHECK_(true, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) SHIM_CHECK_(true, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_null(p, ...) SHIM_CHECK_(false, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) SHIM_CHECK_(false, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) SHIM_CHECK_(true, !strcmp((a), (b)), #a " == " #b, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) SHIM_CHECK_(false, !strcmp((a), (b)), #a " == " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) SHIM_CHECK_(true, strcmp((a), (b)), #a " != " #b, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) SHIM_CHECK_(false, strcmp((a), (b)), #a " != " #b, __VA_ARGS__)
#define cr_assert_str_empty(s, ...) SHIM_CHECK_(true, !*(s), #s " is empty", __VA_ARGS__)
#define cr_expect_str_empty(s, ...) SHIM_CHECK_(false, !*(s), #s " is empty", __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...) SHIM_CHECK_(true, fabs((double)(a) - (double)(b)) <= (eps), #a " ~= " #b, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...) SHIM_CHECK_(false, fabs((double)(a) - (double)(b)) <= (eps), #a " ~= " #b, __VA_ARGS__)
#define cr_assert_fail(...) shim_fail(true, __FILE__, __LINE__, "cr_assert_fail", "" __VA_ARGS__)
#define cr_skip(...) shim_skip("" __VA_ARGS__)
#define cr_skip_test(...) shim_skip("" __VA_ARGS__)
#define cr_log_info(...) shim_log(__VA_ARGS__)
#define cr_log_warn(...) shim_log(__VA_ARGS__)
#define cr_log_error(...) shim_log(__VA_ARGS__)

#endif

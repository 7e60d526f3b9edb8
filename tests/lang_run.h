/* lang_run.h - what the tests that compile inline .tile sources and run them on the
 * emulator share (test_lang_run.c, test_lang_triton.c, test_lang_asm.c, test_lang_ports3.c, test_lang_ports_more.c,
 * ...): K, a kernel loaded on a racechecking emulated device, its buffers and launches, the PTX of a source, and
 * f16/bf16 bits from and to f32. */
#ifndef TILE_TESTS_LANG_RUN_H
#define TILE_TESTS_LANG_RUN_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "emu_budget.h"

/* The options of the devices K opens: racecheck on, and the test helpers' launch budget (emu_budget.h: a
 * kernel that hangs fails in a minute, not at ctest's timeout). */
static inline DevOptions racecheck_options(void) {
    return (DevOptions){.emu_racecheck = true, .emu_timeout_seconds = test_emu_budget()};
}

typedef struct K {
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    int threads;
    unsigned dyn_smem; /* the kernel's shared memory when it is dynamic (over 48 KiB), else 0 */
} K;

/* src compiled for arch (NULL: the default) and loaded on device (NULL: TILE_TEST_DEVICE, else emu). */
static inline void load_src_on(K *k, const char *src, const char *name, const char *arch, const char *device) {
    tile_compile_options o = {.arch = arch};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    char *err = NULL;
    if (!device) device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu";
    DevOptions opt = racecheck_options();
    cr_assert_eq(dev_open(device, &opt, &k->dev, &err), DEV_OK, "%s", err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(k->dev, c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(k->dev));
    cr_assert_eq(dev_module_get_function(k->mod, name, &k->fn), DEV_OK, "%s", dev_last_error(k->dev));
    k->threads = 32 * c.kernels[0].num_warps;
    k->dyn_smem = c.kernels[0].smem_dynamic ? (unsigned)c.kernels[0].smem_bytes : 0;
    tile_compiled_free(&c);
}

static inline void load_src(K *k, const char *src, const char *name) { load_src_on(k, src, name, NULL, NULL); }

static inline void unload(K *k) {
    dev_module_unload(k->mod);
    dev_close(k->dev);
}

static inline uint64_t upload(K *k, const void *h, size_t bytes) {
    uint64_t d;
    cr_assert_eq(dev_malloc(k->dev, bytes, &d), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(k->dev, d, h, bytes), DEV_OK);
    return d;
}

/* A device buffer of bytes filled with 0xFF (NaN for floats, -1 for integers): an output poisoned first. */
static inline uint64_t poisoned(K *k, size_t bytes) {
    void *p = malloc(bytes);
    cr_assert(p);
    memset(p, 0xff, bytes);
    uint64_t d = upload(k, p, bytes);
    free(p);
    return d;
}

static inline void download(K *k, void *h, uint64_t d, size_t bytes) {
    cr_assert_eq(dev_memcpy_dtoh(k->dev, h, d, bytes), DEV_OK);
}

static inline void launch(K *k, unsigned gx, void **params) {
    DevStatus st = dev_launch(k->fn, gx, 1, 1, (unsigned)k->threads, 1, 1, k->dyn_smem, NULL, params);
    cr_assert_eq(st, DEV_OK, "launch: %s", dev_last_error(k->dev));
    cr_assert_eq(dev_synchronize(k->dev), DEV_OK, "%s", dev_last_error(k->dev));
}

/* src compiled for arch with defines and specializations (NULL-terminated, or NULL) and loaded on device (NULL:
 * TILE_TEST_DEVICE, the emulator when unset); k->fn is the kernel named, whose warps and dynamic shared memory
 * k takes (test_lang_ports3.c, test_lang_ports_more.c).  A kernel that takes tensor maps is refused: launch3
 * passes none. */
static inline void load_with_on(K *k, const char *src, const char *name, const char *arch, const char *const *defines,
                                const char *const *specialize, const char *device) {
    tile_compile_options o = {.arch = arch, .defines = defines, .specialize = specialize};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    char *err = NULL;
    if (!device) device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu";
    DevOptions opt = racecheck_options();
    cr_assert_eq(dev_open(device, &opt, &k->dev, &err), DEV_OK, "%s", err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(k->dev, c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(k->dev));
    cr_assert_eq(dev_module_get_function(k->mod, name, &k->fn), DEV_OK, "%s", dev_last_error(k->dev));
    int i = 0;
    while (i < c.nkernels - 1 && strcmp(c.kernels[i].name, name)) i++;
    cr_assert(!c.kernels[i].tensor_maps || !*c.kernels[i].tensor_maps, "%s takes tensor maps: %s", name, c.kernels[i].tensor_maps);
    k->threads = 32 * c.kernels[i].num_warps;
    k->dyn_smem = c.kernels[i].smem_dynamic ? (unsigned)c.kernels[i].smem_bytes : 0;
    tile_compiled_free(&c);
}

static inline void load_with(K *k, const char *src, const char *name, const char *arch, const char *const *defines,
                             const char *const *specialize) {
    load_with_on(k, src, name, arch, defines, specialize, NULL);
}

/* Another kernel of the module k holds. */
static inline TileDevFunction *fn_of(K *k, const char *name) {
    TileDevFunction *f;
    cr_assert_eq(dev_module_get_function(k->mod, name, &f), DEV_OK, "%s", dev_last_error(k->dev));
    return f;
}

/* f (NULL: k->fn) on a 3-D grid with k's block and dynamic shared memory, then synchronized. */
static inline void launch3(K *k, TileDevFunction *f, unsigned gx, unsigned gy, unsigned gz, void **params) {
    DevStatus st = dev_launch(f ? f : k->fn, gx, gy, gz, (unsigned)k->threads, 1, 1, k->dyn_smem, NULL, params);
    cr_assert_eq(st, DEV_OK, "launch: %s", dev_last_error(k->dev));
    cr_assert_eq(dev_synchronize(k->dev), DEV_OK, "%s", dev_last_error(k->dev));
}

/* A source that must not compile: "t.tile" gives TILE_ERROR_COMPILE with msg (a located "t.tile:L:C: error: ..."
 * or a part of one) among its diagnostics. */
typedef struct BadSource {
    const char *src, *msg;
} BadSource;

static inline void expect_compile_errors(const BadSource *bad, size_t n) {
    for (size_t i = 0; i < n; i++) {
        tile_compile_options opt = {0};
        tile_compiled c;
        cr_expect_eq(tile_compile_source("t.tile", bad[i].src, &opt, &c), TILE_ERROR_COMPILE, "compiled: %s", bad[i].src);
        cr_expect_not_null(strstr(c.diagnostics, bad[i].msg), "want %s\ngot %s", bad[i].msg, c.diagnostics);
        tile_compiled_free(&c);
    }
}

static inline char *compile_ptx(const char *src, const char *arch) {
    tile_compile_options o = {.arch = arch};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    char *ptx = strdup(c.ptx);
    tile_compiled_free(&c);
    return ptx;
}

/* f32 <-> bf16 (to nearest even) and f16 bits: f16 exact for the normal, short-mantissa values these tests use */
static inline uint16_t bf16_from(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static inline float bf16_to(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t f16_from(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if (!(u & 0x7fffffff)) return (uint16_t)(u >> 16);
    return (uint16_t)((u >> 16 & 0x8000) | (((u >> 23 & 0xff) - 112) << 10) | (u >> 13 & 0x3ff));
}
static inline float f16_to(uint16_t h) {
    if (!(h & 0x7fff)) return h ? -0.0f : 0.0f;
    uint32_t u = (uint32_t)(h & 0x8000) << 16 | (uint32_t)((h >> 10 & 0x1f) + 112) << 23 | (uint32_t)(h & 0x3ff) << 13;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#endif

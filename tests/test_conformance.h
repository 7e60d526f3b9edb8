/* test_conformance.h - what the conformance programs share (test_conformance.c and
 * test_conformance_hopper.c): compiling tests/conformance/<topic>.cu with nvcc at test time for a
 * variant (sm_80 / sm_90a, -O3 / -G, and more flags: -lineinfo, -rdc=true) and loading it on the device (TILE_TEST_DEVICE, emu by
 * default), device buffers (inputs copied, outputs poisoned), launches, the CONFORMANCE(topic)
 * macro (four tests per topic), a fixed-seed xorshift and float bit casts.  Without nvcc every test
 * is skipped and says so. */
#ifndef TILE_TEST_CONFORMANCE_H
#define TILE_TEST_CONFORMANCE_H


#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "support/support.h"
#include "tests/tool_cache.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif
#ifndef TILE_BINARY_DIR
#define TILE_BINARY_DIR "."
#endif

/* ---- compiling and loading ---- */
typedef struct Variant {
    const char *arch;
    bool debug;        /* -G instead of -O3 */
    const char *extra; /* more nvcc flags, as users build ("-lineinfo", "-rdc=true"); NULL: none */
} Variant;

typedef struct Conf {
    const char *topic;
    const Variant *v;
    char name[96];      /* "int sm_80 -G", for messages */
    tile_context *ctx;
    tile_module *m;
} Conf;

static inline bool executable(const char *p) { return access(p, X_OK) == 0; }

/* nvcc: $TILE_NVCC if set (a path; not executable: none), else
 * /usr/local/cuda/bin, $CUDA_HOME/bin, PATH; NULL if none. */
static inline const char *find_nvcc(char *buf, size_t cap) {
    const char *forced = getenv("TILE_NVCC");
    if (forced) return executable(forced) ? forced : NULL;
    if (executable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(buf, cap, "%s/bin/nvcc", home);
        if (executable(buf)) return buf;
    }
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(buf, cap, "%.*s/nvcc", (int)n, p);
        if (n && executable(buf)) return buf;
        p = e ? e + 1 : NULL;
    }
    return NULL;
}


/* Compiles tests/conformance/<topic>.cu for the variant and loads its PTX. */
static inline void conf_open(Conf *c, const char *topic, const Variant *v) {
    memset(c, 0, sizeof *c);
    c->topic = topic;
    c->v = v;
    const char *extra = v->extra ? v->extra : "";
    snprintf(c->name, sizeof c->name, "%s %s %s%s%s", topic, v->arch, v->debug ? "-G" : "-O3", *extra ? " " : "", extra);
    char nvbuf[512];
    const char *nvcc = find_nvcc(nvbuf, sizeof nvbuf);
    if (!nvcc) {
        /* said on stderr too: Criterion lists skips only when verbose, and ctest matches this line */
        fprintf(stderr, "[SKIP] %s: nvcc not found (TILE_NVCC, /usr/local/cuda/bin, $CUDA_HOME/bin, PATH)\n", c->name);
        cr_skip_test("nvcc not found (TILE_NVCC, /usr/local/cuda/bin, $CUDA_HOME/bin, PATH): the conformance suite needs it");
    }
    /* nvcc's PTX depends on nvcc, the .cu text, the target and the flag, not on this build: it is kept in the tool
     * cache's nvcc/ (tests/tool_cache.h) under a name that hashes them (nvcc by its path, size and modification
     * time), so the sanitized run and reruns read what was compiled once (50 nvcc runs, about 50 s of CPU) */
    char dir[600], out[760], tmp[800], cmd[4096], src[600], ident[800];
    tool_cache_dir("nvcc", dir, sizeof dir);
    if (!dir[0]) snprintf(dir, sizeof dir, "%s", "/tmp"); /* an unwritable build folder: compiled every time */
    snprintf(src, sizeof src, "%s/tests/conformance/%s.cu", TILE_SOURCE_DIR, topic);
    size_t len;
    char *text = read_file(src, &len);
    cr_assert(text, "[%s] cannot read %s", c->name, src);
    struct stat ns;
    bool known = stat(nvcc, &ns) == 0;
    snprintf(ident, sizeof ident, "%s %lld %lld %s %s%s%s", nvcc, known ? (long long)ns.st_size : 0LL, known ? (long long)ns.st_mtime : 0LL,
             v->arch, v->debug ? "-G" : "-O3", *extra ? " " : "", extra);
    char key[17];
    tool_cache_hash(ident, text, len, key);
    free(text);
    snprintf(out, sizeof out, "%s/%s-%s%s-%zu-%s.ptx", dir, topic, v->arch, v->debug ? "-G" : "-O3", len, key);
    char *ptx = read_file(out, &len);
    if (!ptx) {
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", out, (long)getpid());
        snprintf(cmd, sizeof cmd, "'%s' -ptx -arch=%s %s %s '%s' -o '%s' > '%s.log' 2>&1", nvcc, v->arch, v->debug ? "-G" : "-O3", extra, src,
                 tmp, tmp);
        int rc = system(cmd);
        char log[840];
        snprintf(log, sizeof log, "%s.log", tmp);
        char *msg = rc ? read_file(log, &len) : NULL;
        cr_assert_eq(rc, 0, "[%s] %s failed:\n%s", c->name, cmd, msg ? msg : "");
        unlink(log);
        cr_assert_eq(rename(tmp, out), 0, "[%s] rename %s: %s", c->name, tmp, strerror(errno));
        ptx = read_file(out, &len);
    }
    cr_assert(ptx, "[%s] cannot read %s", c->name, out);
    /* TILE_TEST_DEVICE=cuda runs the same PTX and checks on a GPU (the references are the hardware's contract);
     * on the emulator with racecheck: nvcc's barriers, __syncwarp, mbarrier waits, proxy fences and acquire/release
     * atomics must order every shared-memory exchange */
    const char *device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu";
    tile_context_options o = {.device = device, .no_disk_cache = 1, .emu_host_threads = 2, .emu_timeout_seconds = 300,
                             .emu_racecheck = 1};
    cr_assert_eq(tile_context_create_ex(&o, &c->ctx), TILE_OK);
    tile_status st = tile_module_load_ptx(c->ctx, ptx, &c->m);
    cr_assert_eq(st, TILE_OK, "[%s] load %s: %s", c->name, out, tile_last_error(c->ctx));
    free(ptx);
}

static inline void conf_close(Conf *c) {
    tile_module_unload(c->m);
    tile_context_destroy(c->ctx);
}

static inline tile_devptr dev_in(Conf *c, const void *host, size_t bytes) {
    tile_devptr p;
    cr_assert_eq(tile_malloc(c->ctx, bytes, &p), TILE_OK, "[%s] %s", c->name, tile_last_error(c->ctx));
    if (host) cr_assert_eq(tile_memcpy_htod(c->ctx, p, host, bytes), TILE_OK);
    else cr_assert_eq(tile_memset(c->ctx, p, 0xCD, bytes), TILE_OK); /* poison: every output must be written */
    return p;
}

static inline void dev_out(Conf *c, void *host, tile_devptr p, size_t bytes) {
    cr_assert_eq(tile_memcpy_dtoh(c->ctx, host, p, bytes), TILE_OK, "[%s] %s", c->name, tile_last_error(c->ctx));
}

static inline void run(Conf *c, const char *kernel, unsigned grid, unsigned block, unsigned smem, void **args) {
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(c->m, kernel, &k), TILE_OK, "[%s] %s", c->name, tile_last_error(c->ctx));
    tile_status st = tile_launch_raw(k, (tile_dim3){grid, 1, 1}, (tile_dim3){block, 1, 1}, smem, args, NULL);
    cr_assert_eq(st, TILE_OK, "[%s] launch of %s: %s", c->name, kernel, tile_last_error(c->ctx));
}

/* Four tests per topic: sm_80 and sm_90a, -O3 and -G. */
static const Variant V80 __attribute__((unused)) = {"sm_80", false, NULL}, V80G __attribute__((unused)) = {"sm_80", true, NULL},
                     V90 __attribute__((unused)) = {"sm_90a", false, NULL}, V90G __attribute__((unused)) = {"sm_90a", true, NULL};
/* Separate compilation with line information, as users build libraries: the -rdc=true -lineinfo run of a topic */
static const Variant V90RL __attribute__((unused)) = {"sm_90a", false, "-rdc=true -lineinfo"};
#define CONFORMANCE(topic)                                        \
    static void check_##topic(Conf *c);                           \
    static void topic##_run(const Variant *v) {                   \
        Conf c;                                                   \
        conf_open(&c, #topic, v);                                 \
        check_##topic(&c);                                        \
        conf_close(&c);                                           \
    }                                                             \
    Test(topic, sm_80_O3) { topic##_run(&V80); }                  \
    Test(topic, sm_80_G) { topic##_run(&V80G); }                  \
    Test(topic, sm_90a_O3) { topic##_run(&V90); }                 \
    Test(topic, sm_90a_G) { topic##_run(&V90G); }

/* Inputs: a fixed-seed xorshift (the same inputs every run; the special values are the point). */
typedef struct Rng { uint64_t s; } Rng;
static inline uint64_t rng_next(Rng *r) {
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}
static inline Rng rng_seed(uint64_t s) { return (Rng){s * 0x9E3779B97F4A7C15ull | 1}; }
/* Uniform in [lo, hi). */
static inline double rng_uniform(Rng *r, double lo, double hi) { return lo + (hi - lo) * (double)(rng_next(r) >> 11) / 9007199254740992.0; }

static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline double u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

#endif

/* test_cache.c - the compile cache in a temporary folder: miss then hit,
 * key parts (defines, imports) change the key and their order does not, corrupt and truncated
 * entries are detected and rebuilt, concurrent writers (forked processes)
 * all succeed, stats/list/clear, TILE_DEBUG=cache reasons via the CLI,
 * the size cap's eviction, tune.db compaction. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/tile/tile.h"

static char dir[64];
static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/tile-test-cache-XXXXXX");
    cr_assert(mkdtemp(dir));
}
static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    system(cmd);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

/* path of the only entry in the cache */
static void only_entry(char *out, size_t n) {
    char v1[128];
    snprintf(v1, sizeof v1, "%s/cache/v1", dir);
    DIR *d = opendir(v1);
    cr_assert(d);
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char sub[600];
        snprintf(sub, sizeof sub, "%s/%s", v1, e->d_name);
        DIR *s = opendir(sub);
        for (struct dirent *f; s && (f = readdir(s));)
            if (f->d_name[0] != '.') snprintf(out, n, "%s/%s", sub, f->d_name), count++;
        if (s) closedir(s);
    }
    closedir(d);
    cr_assert_eq(count, 1);
}

Test(cache, hit_miss_keys_corruption, .init = setup, .fini = teardown) {
    char cache[128], src[128], lib[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(src, sizeof src, "%s/k.tile", dir);
    snprintf(lib, sizeof lib, "%s/lib.tile", dir);
    write_file(lib, "fn twice(x) { return x * 2.0; }\n");
    write_file(src, "import \"lib.tile\";\nkernel k(x: *f32, const B: i32 = 32) { store(x + arange(0, B), twice(1.0)); }\n");
    tile_compile_options o = {0};
    tile_compiled c;
    int hit = -1;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_assert_eq(hit, 0);
    char *ptx = strdup(c.ptx);
    tile_compiled_free(&c);
    struct stat sb;
    cr_assert_eq(stat(cache, &sb), 0);
    cr_assert_eq(sb.st_mode & 0777, 0700, "cache folder mode %o", sb.st_mode & 0777);
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 1);
    cr_assert_str_eq(c.ptx, ptx, "a hit returns the same PTX");
    cr_assert_eq(c.nkernels, 1);
    cr_assert_str_eq(c.kernels[0].name, "k");
    tile_compiled_free(&c);

    /* corrupt one byte: detected, removed, rebuilt */
    char entry[1024];
    only_entry(entry, sizeof entry);
    FILE *f = fopen(entry, "r+b");
    fseek(f, 200, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 200, SEEK_SET);
    fputc(ch ^ 0x20, f);
    fclose(f);
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 0, "a corrupt entry is never loaded");
    cr_assert_str_eq(c.ptx, ptx);
    tile_compiled_free(&c);
    /* truncate: same */
    cr_assert_eq(truncate(entry, 100), 0);
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 0, "a truncated entry is never loaded");
    tile_compiled_free(&c);
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 1, "and the rebuilt entry is good");
    tile_compiled_free(&c);

    /* defines and imports are part of the key */
    const char *defs[] = {"B=64", NULL};
    o.defines = defs;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 0);
    tile_compiled_free(&c);
    o.defines = NULL;
    write_file(lib, "fn twice(x) { return x + x; }\n");
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 0, "an imported file changed");
    tile_compiled_free(&c);

    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.hits, 2);
    cr_assert_eq(st.misses, 5);
    cr_assert_eq(st.entries, 3);
    cr_assert_eq(tile_cache_clear(cache, 1), TILE_OK);
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.entries + st.hits + st.misses, 0);
    free(ptx);
}

/* The order of defines and of specializations changes no kernel (each NAME is given once), so it changes no key:
 * "B=2 A=1" hits the entry "A=1 B=2" made, on disk and in a context's memory (it was a miss, a second compile and
 * entry, and a second module); another value still misses. */
/* A cubin is keyed by the ptxas that made it (path, size, mtime): a ptxas upgraded in place (a new CUDA in
 * the same folder) is another key, so the old one's cubin is not served.  A fake ptxas writes its version
 * as the cubin. */
static void fake_ptxas(const char *path, const char *version, time_t mtime) {
    char text[256];
    snprintf(text, sizeof text, "#!/bin/sh\n# -arch=A -v -o CUBIN PTX\nprintf '%s' > \"$4\"\n", version);
    write_file(path, text);
    cr_assert_eq(chmod(path, 0700), 0);
    struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

Test(cache, cubin_key_has_the_ptxas_identity, .init = setup, .fini = teardown) {
    char cache[128], src[128], px[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(src, sizeof src, "%s/k.tile", dir);
    snprintf(px, sizeof px, "%s/ptxas", dir);
    write_file(src, "kernel k(x: *f32) {\n    let o = arange(0, 64);\n    store(x + o, o as f32);\n}\n");
    tile_compile_options o = {.want_cubin = 1, .ptxas = px};
    const struct {
        const char *version;
        time_t mtime;
        int hit;
    } steps[] = {{"ptxas-12.4", 1700000000, 0}, {"ptxas-12.4", 1700000000, 1}, /* the same ptxas: a hit */
                 {"ptxas-12.10", 1700000000, 0},                                /* another size */
                 {"ptxas-12.9", 1800000000, 0}};                                /* the same size, another mtime */
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        fake_ptxas(px, steps[i].version, steps[i].mtime);
        tile_compiled c;
        int hit = -1;
        cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
        cr_expect_eq(hit, steps[i].hit, "step %zu", i);
        cr_assert(c.cubin && c.cubin_size == strlen(steps[i].version) && !memcmp(c.cubin, steps[i].version, c.cubin_size),
                  "step %zu: the cubin of %s, got %.*s", i, steps[i].version, (int)c.cubin_size, c.cubin ? (const char *)c.cubin : "");
        tile_compiled_free(&c);
    }
}

Test(cache, key_ignores_the_order_of_defines, .init = setup, .fini = teardown) {
    char cache[128], src[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(src, sizeof src, "%s/k.tile", dir);
    write_file(src, "kernel k(x: *f32, m: i32, n: i32, const A: i32 = 0, const B: i32 = 0) {\n"
                    "    let o = arange(0, 64);\n    store(x + o, (o * m + n + A * 10 + B) as f32, o < m * n);\n}\n");
    const char *ab[] = {"A=1", "B=2", NULL}, *ba[] = {"B=2", "A=1", NULL}, *ab3[] = {"A=1", "B=3", NULL};
    const char *mn[] = {"m=16", "n=1", NULL}, *nm[] = {"n=1", "m=16", NULL}, *nm16[] = {"n=16", "m=16", NULL};
    tile_compile_options o = {.defines = ab, .specialize = mn};
    tile_compiled c;
    int hit = -1;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_assert_eq(hit, 0);
    char *ptx = strdup(c.ptx);
    tile_compiled_free(&c);
    o.defines = ba, o.specialize = nm;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_expect_eq(hit, 1, "defines and specializations in another order missed the cache");
    cr_expect_str_eq(c.ptx, ptx);
    tile_compiled_free(&c);
    free(ptx);
    o.defines = ab3;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_expect_eq(hit, 0, "B=3 hit B=2's entry");
    tile_compiled_free(&c);
    o.defines = ab, o.specialize = nm16;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_expect_eq(hit, 0, "n=16 hit n=1's entry");
    tile_compiled_free(&c);
    /* a name given twice takes its last value, so "B=3 ... B=2" (B = 2) and "B=2 ... B=3" (B = 3) stay two keys */
    const char *b32[] = {"B=3", "A=1", "B=2", NULL}, *b23[] = {"B=2", "A=1", "B=3", NULL};
    o.defines = b32, o.specialize = mn;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    ptx = strdup(c.ptx);
    tile_compiled_free(&c);
    o.defines = b23;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_expect_eq(hit, 0, "B=2 then B=3 hit the entry of B=3 then B=2");
    cr_expect_str_neq(c.ptx, ptx, "B = 3 and B = 2 compiled alike");
    tile_compiled_free(&c);
    free(ptx);
    /* in a context: the second load, reordered, is the module the first made */
    tile_context_options co = {.size = sizeof co, .device = "emu", .cache_dir = cache};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_module *m1, *m2;
    tile_compile_options lo = {.size = sizeof lo, .defines = ab, .specialize = mn};
    cr_assert_eq(tile_module_load_file_ex(ctx, src, &lo, &m1), TILE_OK, "%s", tile_last_error(ctx));
    lo.defines = ba, lo.specialize = nm;
    cr_assert_eq(tile_module_load_file_ex(ctx, src, &lo, &m2), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(m1, m2, "a reordered load made a second module");
    tile_context_stats cs;
    cr_assert_eq(tile_context_get_stats(ctx, &cs), TILE_OK);
    cr_expect_eq(cs.memory_hits, 1);
    cr_expect_eq(cs.compiles, 0, "both loads were cached (the first from disk)");
    tile_module_unload(m2);
    tile_module_unload(m1);
    tile_context_destroy(ctx);
}

static void read_small(const char *path, char *out, size_t n) {
    memset(out, 0, n);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fread(out, 1, n - 1, f);
    fclose(f);
}

/* The stats file stays small: at 4 KiB it becomes one line of counts that later bytes add to, with every count
 * kept, also while processes count at once (it grew a byte a lookup, without end). */
Test(cache, stats_compaction, .init = setup, .fini = teardown, .timeout = 120) {
    char cache[128], src[128], stats[160], text[8192];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(src, sizeof src, "%s/k.tile", dir);
    snprintf(stats, sizeof stats, "%s/stats", cache);
    write_file(src, "kernel k(x: *f32, const B: i32 = 32) { store(x + arange(0, B), 1.0); }\n");
    tile_compile_options o = {0};
    tile_compiled c;
    int hit = -1;
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK, "%s", c.diagnostics);
    tile_compiled_free(&c);
    /* 4094 events of earlier lookups: 3000 hits, 1093 misses and this one's miss */
    FILE *f = fopen(stats, "ab");
    cr_assert_not_null(f);
    for (int i = 0; i < 4093; i++) fputc(i % 3 == 1 && i < 3279 ? 'm' : 'h', f);
    fclose(f);
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    uint64_t h0 = st.hits, m0 = st.misses;
    cr_assert_eq(h0, 3000);
    cr_assert_eq(m0, 1094);
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 1);
    tile_compiled_free(&c);
    struct stat sb;
    cr_assert_eq(stat(stats, &sb), 0);
    cr_assert_eq(sb.st_size, 4095, "under 4 KiB it is appended to");
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    tile_compiled_free(&c);
    char want[96];
    snprintf(want, sizeof want, "tile-stats found=%llu absent=%llu\n", (unsigned long long)h0 + 2, (unsigned long long)m0);
    read_small(stats, text, sizeof text);
    cr_assert_str_eq(text, want, "compacted at 4 KiB");
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    tile_compiled_free(&c);
    o.defines = (const char *[]){"B=64", NULL}; /* another key: a miss */
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 0);
    tile_compiled_free(&c);
    read_small(stats, text, sizeof text);
    cr_assert(!strncmp(text, want, strlen(want)) && !strcmp(text + strlen(want), "hm"), "%s", text);
    /* a library from before compaction counts the bytes 'h' and 'm' of the whole file: the line has none, so it
     * counts the two lookups after it (with "tile-stats hits=... misses=..." it counted 2 and 2) */
    int old_h = 0, old_m = 0;
    for (const char *q = text; *q; q++) old_h += *q == 'h', old_m += *q == 'm';
    cr_assert(old_h == 1 && old_m == 1, "an old reader counts %d hits, %d misses in %s", old_h, old_m, text);
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.hits, h0 + 3);
    cr_assert_eq(st.misses, m0 + 1);
    /* four processes count 1300 lookups each at once: at least one compaction among them, no count lost */
    enum { PROCS = 4, EACH = 1300 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        cr_assert_geq(pids[p], 0);
        if (pids[p] == 0) {
            int bad = 0;
            for (int i = 0; i < EACH; i++) {
                tile_compiled cc;
                int hh = -1;
                bad |= tile_cache_compile_file(cache, src, &o, &cc, &hh) != TILE_OK || hh != 1;
                tile_compiled_free(&cc);
            }
            _exit(bad);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int status;
        cr_assert_eq(waitpid(pids[p], &status, 0), pids[p]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d", p);
    }
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.hits, h0 + 3 + PROCS * EACH);
    cr_assert_eq(st.misses, m0 + 1);
    cr_assert_eq(stat(stats, &sb), 0);
    cr_assert_lt(sb.st_size, 4096);
    read_small(stats, text, sizeof text);
    cr_assert(!strncmp(text, "tile-stats found=", 17), "%.80s", text);
    /* a long file of the old form (written before compaction existed) is counted in pieces, then compacted */
    f = fopen(stats, "wb");
    cr_assert_not_null(f);
    for (int i = 0; i < 200000; i++) fputc(i % 5 ? 'h' : 'm', f);
    fclose(f);
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.hits, 160000);
    cr_assert_eq(st.misses, 40000);
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    tile_compiled_free(&c);
    read_small(stats, text, sizeof text);
    cr_assert_str_eq(text, "tile-stats found=160001 absent=40000\n");
    /* the line the first compacting releases wrote is read too, and replaced by the new one at the next compaction */
    f = fopen(stats, "wb");
    cr_assert_not_null(f);
    fputs("tile-stats hits=70 misses=30\nhhm", f);
    fclose(f);
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.hits, 72);
    cr_assert_eq(st.misses, 31);
    f = fopen(stats, "ab");
    cr_assert_not_null(f);
    for (int i = 0; i < 4096; i++) fputc('m', f);
    fclose(f);
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK);
    tile_compiled_free(&c);
    read_small(stats, text, sizeof text);
    cr_assert_str_eq(text, "tile-stats found=73 absent=4127\n");
    /* clear knows the compacted file as the cache's own */
    cr_assert_eq(tile_cache_clear(cache, 0), TILE_OK);
    cr_assert_neq(stat(stats, &sb), 0);
    /* a first line of neither form is not the counters: left as it is */
    cr_assert_eq(tile_cache_compile_file(cache, src, &o, &c, &hit), TILE_OK); /* the folder is a cache again */
    tile_compiled_free(&c);
    f = fopen(stats, "wb");
    cr_assert_not_null(f);
    fputs("tile-stats found=70 absent=30 more\nhh", f);
    fclose(f);
    cr_assert_eq(tile_cache_clear(cache, 0), TILE_OK);
    cr_assert_eq(stat(stats, &sb), 0, "a file that is not the counters is not cleared");
}

Test(cache, concurrent_writers, .init = setup, .fini = teardown, .timeout = 120) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    enum { N = 4 };
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        cr_assert_geq(pids[i], 0);
        if (pids[i] == 0) {
            int bad = 0;
            for (int r = 0; r < 3; r++) {
                tile_compile_options o = {.kernel = "softmax"};
                tile_compiled c;
                int hit;
                if (tile_cache_compile_file(cache, TILE_SOURCE_DIR "/kernels/softmax.tile", &o, &c, &hit) != TILE_OK || !c.ptx) bad = 1;
                tile_compiled_free(&c);
            }
            _exit(bad);
        }
    }
    for (int i = 0; i < N; i++) {
        int status;
        cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", i);
    }
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.entries, 1);
    cr_assert_eq(st.hits + st.misses, 3 * N);
    cr_assert_geq(st.hits, 1);
    tile_compile_options o = {.kernel = "softmax"};
    tile_compiled c;
    int hit;
    cr_assert_eq(tile_cache_compile_file(cache, TILE_SOURCE_DIR "/kernels/softmax.tile", &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 1);
    tile_compiled_free(&c);
}

/* Servers starting together: processes compiling the same kernels into one cache folder at once, released
 * together from a pipe.  Four load them through contexts (a fresh context per round, so every round goes to
 * the disk: hit, or miss and write), launch them and check the results against float64; two run
 * `tile compile` with a cap so small that every write evicts the other entries; all under TILE_DEBUG=cache.
 * Afterwards: every process's results were right, no process read a corrupt (torn) entry, every entry
 * reads back whole, no writer's temporary file is left, the counters add up, and the trust rules hold
 * (folders 0700, entries 0600). */
static const char *kAxpb =
    "@num_warps(1) kernel axpb(x: *f32, y: *f32, n: i32, const B: i32 = 64, const S: i32 = 1) {\n"
    "    let o = program_id(0) * B + arange(0, B);\n"
    "    store(y + o, load(x + o, o < n, 0.0) * (S as f32) - 0.25, o < n);\n"
    "}\n";

static int load_and_check(const char *cache, const char *src, int id, int rounds) {
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1) ^ (uint64_t)getpid();
    for (int r = 0; r < rounds; r++) {
        tile_context_options co = {.device = "emu:sm_80", .cache_dir = cache, .emu_host_threads = 1};
        tile_context *ctx;
        if (tile_context_create_ex(&co, &ctx)) return 10;
        char def[16];
        int scale = 2 + (id + r) % 2;
        snprintf(def, sizeof def, "S=%d", scale);
        const char *defs[] = {def, NULL};
        tile_module *m;
        tile_kernel *k;
        if (tile_module_load_file(ctx, src, defs, &m) || tile_module_get_kernel(m, "axpb", &k)) {
            fprintf(stderr, "process %d: %s\n", id, tile_last_error(ctx));
            return 11;
        }
        enum { N = 777 };
        float x[N], y[N];
        for (int i = 0; i < N; i++) s ^= s << 13, s ^= s >> 7, s ^= s << 17, x[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 8 - 4);
        tile_devptr dx, dy;
        int32_t n = N;
        void *args[] = {&dx, &dy, &n};
        if (tile_malloc(ctx, sizeof x, &dx) || tile_malloc(ctx, sizeof y, &dy) || tile_memcpy_htod(ctx, dx, x, sizeof x) ||
            tile_memset(ctx, dy, 0xff, sizeof y) || tile_launch(k, (tile_dim3){(N + 63) / 64, 1, 1}, args, NULL) ||
            tile_memcpy_dtoh(ctx, y, dy, sizeof y))
            return 12;
        for (int i = 0; i < N; i++)
            if (fabs(y[i] - ((double)x[i] * scale - 0.25)) > 1e-6 * (1 + fabs((double)x[i] * scale))) {
                fprintf(stderr, "process %d round %d: y[%d] = %g for x %g, S %d\n", id, r, i, y[i], x[i], scale);
                return 13;
            }
        tile_context_destroy(ctx);
    }
    return 0;
}

typedef struct EntryCheck {
    int entries, corrupt;
} EntryCheck;

static void check_entry(void *user, const tile_cache_entry_info *e) {
    EntryCheck *c = user;
    c->entries++;
    c->corrupt += !strcmp(e->source, "(corrupt)") || !strstr(e->kernels, "axpb");
}

/* Files under path whose name starts with prefix, and those whose mode (permission bits) is not want_file
 * (files) or want_dir (folders). */
static void walk(const char *path, const char *prefix, int *named, int *bad_mode, unsigned want_file, unsigned want_dir) {
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        struct stat sb;
        if (lstat(sub, &sb) != 0) continue;
        *named += !strncmp(e->d_name, prefix, strlen(prefix));
        if (S_ISDIR(sb.st_mode)) {
            *bad_mode += (sb.st_mode & 07777) != want_dir;
            walk(sub, prefix, named, bad_mode, want_file, want_dir);
        } else *bad_mode += (sb.st_mode & 07777) != want_file;
    }
    if (d) closedir(d);
}

Test(cache, processes_share_one_folder_at_once, .init = setup, .fini = teardown, .timeout = 300) {
    char cache[128], src[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(src, sizeof src, "%s/axpb.tile", dir);
    write_file(src, kAxpb);
    enum { LIB = 4, CLI = 2, ROUNDS = 3 };
    int gate[2];
    cr_assert_eq(pipe(gate), 0);
    pid_t pids[LIB + CLI];
    for (int i = 0; i < LIB + CLI; i++) {
        pids[i] = fork();
        cr_assert_geq(pids[i], 0);
        if (pids[i]) continue;
        close(gate[1]);
        char c;
        while (read(gate[0], &c, 1) > 0) {} /* released when the parent closes its end */
        if (i < LIB) { /* its first call into the library is below: TILE_DEBUG is read then */
            char log[160];
            snprintf(log, sizeof log, "%s/lib%d.log", dir, i);
            setenv("TILE_DEBUG", "cache", 1);
            if (!freopen(log, "w", stderr)) _exit(30);
            int rc = load_and_check(cache, src, i, ROUNDS);
            fflush(stderr); /* _exit flushes nothing */
            _exit(rc);
        }
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "for r in 1 2 3; do TILE_CACHE_DIR=%s TILE_DEBUG=cache TILE_CACHE_MAX_BYTES=1 %s compile %s -D S=%d -o %s/cli%d.ptx "
                 "|| exit 1; done 2> %s/cli%d.log",
                 cache, TILE_CLI, src, 2 + i % 2, dir, i, dir, i);
        _exit(system(cmd) == 0 ? 0 : 20);
    }
    close(gate[0]);
    close(gate[1]);
    for (int i = 0; i < LIB + CLI; i++) {
        int status;
        cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d failed (status 0x%x)", i, status);
    }
    /* no torn entry was ever read: TILE_DEBUG=cache names every corrupt entry it meets */
    for (int i = 0; i < LIB + CLI; i++) {
        char path[160], log[8192] = {0};
        snprintf(path, sizeof path, "%s/%s%d.log", dir, i < LIB ? "lib" : "cli", i);
        FILE *f = fopen(path, "r");
        cr_assert(f);
        fread(log, 1, sizeof log - 1, f);
        fclose(f);
        cr_expect(!strstr(log, "corrupt") && !strstr(log, "warning"), "process %d: %s", i, log);
        if (i >= LIB) /* its first compile is a miss (no other process compiles its key), which it reports */
            cr_expect(strstr(log, "miss"), "process %d said nothing under TILE_DEBUG=cache: %s", i, log);
    }
    /* the PTX each wrote is the PTX a compile without the cache gives */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s compile %s -D S=2 --no-cache -o %s/ref2.ptx && %s compile %s -D S=3 --no-cache -o %s/ref3.ptx && "
             "cmp -s %s/ref2.ptx %s/cli4.ptx && cmp -s %s/ref3.ptx %s/cli5.ptx",
             TILE_CLI, src, dir, TILE_CLI, src, dir, dir, dir, dir, dir);
    cr_expect_eq(system(cmd), 0, "the cached PTX differs from a fresh compile's");
    EntryCheck ec = {0};
    cr_assert_eq(tile_cache_list_ex(cache, check_entry, &ec), TILE_OK);
    cr_expect_gt(ec.entries, 0);
    cr_expect_eq(ec.corrupt, 0, "%d of %d entries do not read back whole", ec.corrupt, ec.entries);
    int tmp = 0, bad_mode = 0;
    walk(cache, ".tmp-", &tmp, &bad_mode, 0600, 0700);
    cr_expect_eq(tmp, 0, "a writer's temporary file was left");
    cr_expect_eq(bad_mode, 0, "a folder not 0700 or a file not 0600 in the cache");
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_expect_eq(st.hits + st.misses, (uint64_t)(LIB * ROUNDS + CLI * 3), "%llu hits, %llu misses", (unsigned long long)st.hits,
                 (unsigned long long)st.misses);
}

/* tile_cache_clear while another process writes an entry: the writer's temporary file (fresh) stays, so
 * its rename succeeds (before: clear removed it, and the writer's rename failed with a warning and lost
 * the entry); a temporary file 10 minutes old or more is a crashed writer's and goes. */
Test(cache, clear_leaves_a_write_in_progress, .init = setup, .fini = teardown) {
    char cache[128], entry[700], fresh[800], stale[800];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    tile_compile_options o = {0};
    tile_compiled c;
    int hit;
    cr_assert_eq(tile_cache_compile_source(cache, "k.tile", "kernel k(x: *f32) { store(x, 1.0); }\n", &o, &c, &hit), TILE_OK,
                 "%s", c.diagnostics ? c.diagnostics : "");
    tile_compiled_free(&c);
    only_entry(entry, sizeof entry);
    *strrchr(entry, '/') = 0;
    snprintf(fresh, sizeof fresh, "%s/.tmp-4242-0-1", entry);
    snprintf(stale, sizeof stale, "%s/.tmp-4243-0-2", entry);
    write_file(fresh, "a write in progress");
    write_file(stale, "a crashed writer's");
    struct timespec old[2] = {{time(NULL) - 601, 0}, {time(NULL) - 601, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, stale, old, 0), 0);
    cr_assert_eq(tile_cache_clear(cache, 0), TILE_OK, "%s", tile_last_error(NULL));
    struct stat sb;
    cr_expect_eq(stat(fresh, &sb), 0, "the write in progress was removed");
    cr_expect_neq(stat(stale, &sb), 0, "the crashed writer's file was left");
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_expect_eq(st.entries, 0);
}

/* Two writers taking the same temporary name (processes of two PID namespaces sharing the folder, each a
 * PID 1 writing its first entry in the same second): the second tries another name and its entry is
 * written (before: O_EXCL refused the name, and the write failed with a warning). */
Test(cache, temporary_name_taken_by_another_writer, .init = setup, .fini = teardown) {
    char cache[128], entry[700], path[800];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *src = "kernel k(x: *f32) { store(x, 2.0); }\n";
    tile_compile_options o = {0};
    tile_compiled c;
    int hit;
    cr_assert_eq(tile_cache_compile_source(cache, "k.tile", src, &o, &c, &hit), TILE_OK);
    tile_compiled_free(&c);
    only_entry(entry, sizeof entry);
    cr_assert_eq(unlink(entry), 0);
    *strrchr(entry, '/') = 0;
    /* every name this process's next writes could take: its PID, the next counters, the coming seconds */
    long now = (long)time(NULL);
    for (unsigned n = 0; n < 16; n++)
        for (long t = now - 2; t < now + 30; t++) {
            snprintf(path, sizeof path, "%s/.tmp-%d-%u-%lx", entry, (int)getpid(), n, (unsigned long)t);
            write_file(path, "another writer's");
        }
    cr_assert_eq(tile_cache_compile_source(cache, "k.tile", src, &o, &c, &hit), TILE_OK);
    cr_assert_eq(hit, 0);
    tile_compiled_free(&c);
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_expect_eq(st.entries, 1, "the entry was not written");
    cr_assert_eq(tile_cache_compile_source(cache, "k.tile", src, &o, &c, &hit), TILE_OK);
    cr_expect_eq(hit, 1);
    tile_compiled_free(&c);
}

Test(cache, cli_debug_and_commands, .init = setup, .fini = teardown, .timeout = 60) {
    char cmd[1024], log[128];
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(cmd, sizeof cmd,
             "export TILE_CACHE_DIR=%s/cache TILE_DEBUG=cache; K=%s/kernels/add.tile; "
             "%s compile $K -D BLOCK=512 -o /dev/null && %s compile $K -D BLOCK=256 -o /dev/null && "
             "%s compile $K -D BLOCK=256 -o /dev/null -v && %s cache stats && %s cache list && %s cache clear --tuning && %s cache stats",
             dir, TILE_SOURCE_DIR, TILE_CLI, TILE_CLI, TILE_CLI, TILE_CLI, TILE_CLI, TILE_CLI, TILE_CLI);
    char full[1200];
    snprintf(full, sizeof full, "(%s) > %s 2>&1", cmd, log);
    int rc = system(full);
    FILE *f = fopen(log, "r");
    char buf[8192] = {0};
    fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    cr_assert_eq(rc, 0, "%s", buf);
    cr_assert(strstr(buf, "first compile of this source and kernel"), "%s", buf);
    cr_assert(strstr(buf, "the defines changed"), "%s", buf);
    cr_assert(strstr(buf, "cache: hit"), "%s", buf);
    cr_assert(strstr(buf, "hits 1  misses 2"), "%s", buf);
    cr_assert(strstr(buf, "entries 2"), "%s", buf);
    cr_assert(strstr(buf, "LAST USE"), "cache list has a header: %s", buf);
    cr_assert(strstr(buf, "BLOCK=256") && strstr(buf, "BLOCK=512") && strstr(buf, "kernels/add.tile"), "%s", buf);
    cr_assert(strstr(buf, "entries 0"), "%s", buf);
}

/* The memory cache of a context: loading a file again is answered from
 * memory while the file and its imports are unchanged, and never after
 * they change: in place with the same size at once (the racy case stat
 * stamps cannot see, so fresh files are checked by content), in place after
 * the stamps are trusted, or replaced by rename. */
static uint64_t memory_hits(tile_context *ctx) {
    tile_context_stats s;
    cr_assert_eq(tile_context_get_stats(ctx, &s), TILE_OK);
    return s.memory_hits;
}

/* x[0..B) = twice(1.0) */
static float run_k(tile_context *ctx, tile_module *m) {
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK, "%s", tile_last_error(ctx));
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 32 * 4, &x), TILE_OK);
    void *args[] = {&x};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    float v = 0;
    cr_assert_eq(tile_memcpy_dtoh(ctx, &v, x, 4), TILE_OK);
    tile_free(ctx, x);
    return v;
}

Test(cache, memory_hits_see_file_changes, .init = setup, .fini = teardown, .timeout = 60) {
    char src[128], lib[128], tmp[128];
    snprintf(src, sizeof src, "%s/k.tile", dir);
    snprintf(lib, sizeof lib, "%s/lib.tile", dir);
    snprintf(tmp, sizeof tmp, "%s/k.tile.new", dir);
    const char *ksrc = "import \"lib.tile\";\nkernel k(x: *f32, const B: i32 = 32) { store(x + arange(0, B), twice(1.0)); }\n";
    write_file(lib, "fn twice(x) { return x * 2.0; }\n");
    write_file(src, ksrc);
    tile_context_options o = {.device = "emu", .no_disk_cache = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    tile_module *m1, *m2, *m3, *m4, *m5, *m6;
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m1), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(run_k(ctx, m1), 2.0f);
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m2), TILE_OK);
    cr_assert_eq(m2, m1);
    cr_assert_eq(memory_hits(ctx), 1);

    /* the same size, at once: equal stamps are possible, the content says otherwise */
    write_file(lib, "fn twice(x) { return x * 3.0; }\n");
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m3), TILE_OK);
    cr_assert_neq(m3, m1);
    cr_assert_eq(run_k(ctx, m3), 3.0f);
    cr_assert_eq(memory_hits(ctx), 1);

    /* once the files are older than the racy window, hits go by stamps ... */
    sleep(3);
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m4), TILE_OK);
    cr_assert_eq(m4, m3);
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m5), TILE_OK);
    cr_assert_eq(m5, m3);
    cr_assert_eq(memory_hits(ctx), 3);
    /* ... and an in-place edit of the import of the same size changes its ctime */
    write_file(lib, "fn twice(x) { return x * 4.0; }\n");
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m6), TILE_OK);
    cr_assert_neq(m6, m3);
    cr_assert_eq(run_k(ctx, m6), 4.0f);
    cr_assert_eq(memory_hits(ctx), 3);

    /* the file replaced by rename with the same text: another inode, the content matches: a hit */
    tile_module *m7, *m8;
    write_file(tmp, ksrc);
    cr_assert_eq(rename(tmp, src), 0);
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m7), TILE_OK);
    cr_assert_eq(m7, m6);
    cr_assert_eq(memory_hits(ctx), 4);
    /* replaced by rename with other text of the same size */
    char other[256];
    snprintf(other, sizeof other, "%s", ksrc);
    *strstr(other, "1.0") = '5';
    write_file(tmp, other);
    cr_assert_eq(rename(tmp, src), 0);
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m8), TILE_OK);
    cr_assert_neq(m8, m6);
    cr_assert_eq(run_k(ctx, m8), 20.0f);
    cr_assert_eq(memory_hits(ctx), 4);
    /* a file that is gone is an error, not a hit */
    tile_module *m9 = NULL;
    cr_assert_eq(unlink(src), 0);
    cr_assert_eq(tile_module_load_file(ctx, src, NULL, &m9), TILE_ERROR_IO);
    cr_assert_null(m9);

    tile_module *all[] = {m1, m2, m3, m4, m5, m6, m7, m8};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tile_module_unload(all[i]);
    tile_context_destroy(ctx);
}

static int count_entries(const char *cache) {
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    return (int)st.entries;
}

/* TILE_CACHE_MAX_BYTES: past the cap the least recently used entries go until under 90% of it. */
Test(cache, cap_evicts_least_recently_used, .init = setup, .fini = teardown, .timeout = 120) {
    char cmd[1024], cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    /* three entries without a cap (each about 2.5-4 KB), the first one used again last */
    snprintf(cmd, sizeof cmd,
             "export TILE_CACHE_DIR=%s TILE_CACHE_MAX_BYTES=0; K=%s/kernels/add.tile; for b in 128 256 512; do %s compile $K -D BLOCK=$b -o "
             "/dev/null || exit 1; sleep 0.02; done; %s compile $K -D BLOCK=128 -o /dev/null",
             cache, TILE_SOURCE_DIR, TILE_CLI, TILE_CLI);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(count_entries(cache), 3);
    tile_cache_stats st;
    tile_cache_get_stats(cache, &st);
    /* a cap the three exceed with one more: 90% of it holds two small entries at most */
    uint64_t cap = st.bytes;
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s TILE_CACHE_MAX_BYTES=%llu %s compile %s/kernels/add.tile -D BLOCK=64 -o /dev/null", cache,
             (unsigned long long)cap, TILE_CLI, TILE_SOURCE_DIR);
    cr_assert_eq(system(cmd), 0);
    tile_cache_get_stats(cache, &st);
    cr_assert_lt(st.bytes, cap / 10 * 9, "over 90%% of the cap: %llu of %llu", (unsigned long long)st.bytes, (unsigned long long)cap);
    /* the entry just written and the one used last stay; BLOCK=256 (least recently used) went first */
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s %s cache list --json > %s/list", cache, TILE_CLI, dir);
    cr_assert_eq(system(cmd), 0);
    char path[160], text[8192] = {0};
    snprintf(path, sizeof path, "%s/list", dir);
    FILE *f = fopen(path, "r");
    fread(text, 1, sizeof text - 1, f);
    fclose(f);
    cr_assert(strstr(text, "\"defines\":\"BLOCK=64\""), "%s", text);
    cr_assert(!strstr(text, "\"defines\":\"BLOCK=256\""), "the least recently used entry stayed: %s", text);
}

/* A TILE_CACHE_MAX_BYTES that is not a size keeps the default cap, and says so (a typo was silent). */
Test(cache, malformed_cap_warns, .init = setup, .fini = teardown) {
    char cmd[1024], path[160], text[4096] = {0};
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s/cache TILE_CACHE_MAX_BYTES=1.5M %s cache stats --json > %s/out 2> %s/err", dir, TILE_CLI,
             dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/err", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    fread(text, 1, sizeof text - 1, f);
    fclose(f);
    cr_expect(strstr(text, "warning: TILE_CACHE_MAX_BYTES=1.5M is not a size"), "stderr: %s", text);
    memset(text, 0, sizeof text);
    snprintf(path, sizeof path, "%s/out", dir);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    fread(text, 1, sizeof text - 1, f);
    fclose(f);
    cr_expect(strstr(text, "1073741824"), "the default cap: %s", text);
}

/* Every cap up to 2^64 - 1 bytes is a size (18446744073709551615 was "not a size"), suffixes included; a larger one
 * keeps the default and says why. */
Test(cache, cap_limits, .init = setup, .fini = teardown) {
    static const struct {
        const char *env, *max, *warning; /* warning NULL: none */
    } cases[] = {
        {"18446744073709551615", "\"max_bytes\":18446744073709551615", NULL},
        {"17179869183G", "\"max_bytes\":18446744072635809792", NULL},
        {"16777215T", "\"max_bytes\":1073741824", "is not a size"},
        {"18446744073709551616", "\"max_bytes\":1073741824", "is more than 18446744073709551615 bytes"},
        {"17179869184G", "\"max_bytes\":1073741824", "is more than 18446744073709551615 bytes"},
        {"99999999999999999999999K", "\"max_bytes\":1073741824", "is more than 18446744073709551615 bytes"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char cmd[1024], path[160], out[4096] = {0}, err[4096] = {0};
        snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s/cache TILE_CACHE_MAX_BYTES=%s %s cache stats --json > %s/out 2> %s/err", dir,
                 cases[c].env, TILE_CLI, dir, dir);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        snprintf(path, sizeof path, "%s/out", dir);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        fread(out, 1, sizeof out - 1, f);
        fclose(f);
        snprintf(path, sizeof path, "%s/err", dir);
        f = fopen(path, "r");
        cr_assert_not_null(f);
        fread(err, 1, sizeof err - 1, f);
        fclose(f);
        cr_expect(strstr(out, cases[c].max), "%s: %s", cases[c].env, out);
        if (cases[c].warning) cr_expect(strstr(err, cases[c].warning) && strstr(err, cases[c].env), "%s: stderr: %s", cases[c].env, err);
        else cr_expect(!strstr(err, "warning"), "%s: stderr: %s", cases[c].env, err);
    }
}

/* tune.db keeps per (kernel, device, bucket) its four fastest configurations, the fastest last (what a lookup
 * answers first) */
Test(cache, tune_db_compaction, .init = setup, .fini = teardown) {
    char cache[128], cfg[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *id = "0123456789abcdef0123456789abcdef";
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "BLOCK=128", 2e-3), TILE_OK);
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=2048", "BLOCK=256", 1e-3), TILE_OK);
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "BLOCK=256", 1e-3), TILE_OK); /* faster: the answer */
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "BLOCK=512", 5e-3), TILE_OK); /* slower: kept behind */
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "BLOCK=256", 3e-3), TILE_OK); /* again, slower: its best stays */
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "BLOCK=64", 9e-3), TILE_OK);
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "BLOCK=32", 8e-3), TILE_OK); /* a fifth: the slowest goes */
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_90a", "n=1024", "BLOCK=512", 5e-3), TILE_OK); /* another device */
    /* a configuration every lookup would ignore is refused, not written over the good record even when faster */
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "not a config", 1e-6), TILE_ERROR_INVALID_VALUE);
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1024", "", 1e-6), TILE_ERROR_INVALID_VALUE);
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_assert_eq(st.tuning_records, 6);
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=1024", cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, "BLOCK=256");
    char db[256];
    snprintf(db, sizeof db, "%s/tune.db", cache);
    FILE *f = fopen(db, "r");
    cr_assert(f);
    char text[2048];
    size_t tn = fread(text, 1, sizeof text - 1, f);
    text[tn] = 0;
    fclose(f);
    cr_expect(!strstr(text, "BLOCK=64\t"), "the slowest of five is dropped:\n%s", text);
    const char *p32 = strstr(text, "BLOCK=32\t"), *p512 = strstr(text, "BLOCK=512\t"), *p128 = strstr(text, "n=1024\tBLOCK=128\t"),
               *p256 = strstr(text, "n=1024\tBLOCK=256\t0.001\n");
    cr_expect(p32 && p512 && p128 && p256 && p32 < p512 && p512 < p128 && p128 < p256, "slowest first, 256 at its best time:\n%s", text);
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=2048", cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, "BLOCK=256");
    /* a buffer too small for the record is the caller's error, not a bad record (it read as NOT_FOUND with a warning) */
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=2048", cfg, 4), TILE_ERROR_INVALID_VALUE);
    cr_assert_str_eq(cfg, "");
    /* no temporary file is left behind */
    DIR *d = opendir(cache);
    cr_assert(d);
    for (struct dirent *e; (e = readdir(d));) cr_assert(strncmp(e->d_name, ".tmp-", 5), "left behind: %s", e->d_name);
    closedir(d);
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    static char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}

/* A hand-edited tune.db (docs/runtime.md, "Tuning"): CRLF line ends, a blank line, a line that is no record,
 * a record with a bad time, no newline at the end.  Lookups read every record, warn about a line of their key
 * that is none naming its line, and a recording keeps every line it cannot parse as it was. */
Test(cache, tune_db_hand_edited, .init = setup, .fini = teardown) {
    char cache[128], db[256], cfg[128], log[256];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(db, sizeof db, "%s/tune.db", cache);
    snprintf(log, sizeof log, "%s/stderr", dir);
    const char *id = "0123456789abcdef0123456789abcdef";
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1", "BLOCK=128", 2e-3), TILE_OK); /* makes the folder */
    write_file(db, "0123456789abcdef0123456789abcdef\temu/sm_80\tn=1\tBLOCK=128\t0.002\r\n"
                   "0123456789abcdef0123456789abcdef\temu/sm_80\tn=2\tBLOCK=256\t0.001\r\n"
                   "\n"
                   "0123456789abcdef0123456789abcdef\temu/sm_80\tn=4\tBLOCK=512\t0.001\n"
                   "# my notes: BLOCK=1024 was slower\n"
                   "0123456789abcdef0123456789abcdef\temu/sm_80\tn=8\tBLOCK=64\tfast\n"
                   "0123456789abcdef0123456789abcdef\temu/sm_80\tn=16\tBLOCK=32\t0.003");
    tile_cache_stats cs;
    cr_assert_eq(tile_cache_get_stats(cache, &cs), TILE_OK);
    cr_expect_eq(cs.tuning_records, 4, "records counted: %llu (the notes and the bad time are none, the last line is one)",
                 (unsigned long long)cs.tuning_records);
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=2", cfg, sizeof cfg), TILE_OK, "a CRLF record");
    cr_assert_str_eq(cfg, "BLOCK=256");
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=4", cfg, sizeof cfg), TILE_OK, "a record after a blank line");
    cr_assert_str_eq(cfg, "BLOCK=512");
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=16", cfg, sizeof cfg), TILE_OK, "the last line, no newline");
    cr_assert_str_eq(cfg, "BLOCK=32");
    /* a line of the key that is no record: not an answer, and a warning that names its line */
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    tile_status st = tile_tune_lookup(cache, id, "emu/sm_80", "n=8", cfg, sizeof cfg);
    fflush(stderr);
    dup2(saved, 2);
    close(fd), close(saved);
    cr_assert_eq(st, TILE_ERROR_NOT_FOUND, "a record whose time is no number was the answer: %s", cfg);
    const char *warned = read_text(log);
    cr_expect(strstr(warned, "tune.db:6: ") && strstr(warned, "'fast' is not a time"), "%s", warned);
    /* a recording of a new key joins no line; one of a key already there compacts: nothing lost */
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=32", "BLOCK=16", 1e-3), TILE_OK);
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=16", cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, "BLOCK=32");
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=2", "BLOCK=128", 5e-4), TILE_OK);
    const char *text = read_text(db);
    cr_expect(strstr(text, "# my notes: BLOCK=1024 was slower\n") && strstr(text, "\tn=8\tBLOCK=64\tfast\n"),
              "the lines that are no record were dropped:\n%s", text);
    const char *keys[] = {"n=1", "n=2", "n=4", "n=16", "n=32"}, *want[] = {"BLOCK=128", "BLOCK=128", "BLOCK=512", "BLOCK=32", "BLOCK=16"};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", keys[i], cfg, sizeof cfg), TILE_OK, "%s lost:\n%s", keys[i], text);
        cr_expect_str_eq(cfg, want[i], "%s", keys[i]);
    }
    cr_expect(strstr(text, "\tn=2\tBLOCK=256\t0.001\n"), "the slower record of n=2 stays behind the new one:\n%s", text);
    cr_expect(!strchr(text, '\r'), "CRLF rewritten as LF:\n%s", text);
    cr_assert_eq(tile_cache_get_stats(cache, &cs), TILE_OK);
    cr_expect_eq(cs.tuning_records, 6, "%llu", (unsigned long long)cs.tuning_records);
}

/* A NUL byte inside tune.db (a torn write, a binary pasted in): the line that holds it is no record, and it and
 * every line after it are read as before.  The parser stopped at the NUL: the records after it were not found,
 * and the next compaction wrote the file back cut at the NUL, losing them for good. */
Test(cache, tune_db_nul_byte, .init = setup, .fini = teardown) {
    char cache[128], db[256], cfg[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(db, sizeof db, "%s/tune.db", cache);
    const char *id = "0123456789abcdef0123456789abcdef";
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1", "BLOCK=128", 2e-3), TILE_OK); /* makes the folder */
    static const char body[] = "0123456789abcdef0123456789abcdef\temu/sm_80\tn=1\tBLOCK=128\t0.002\n"
                               "0123456789abcdef0123456789abcdef\temu/sm_80\tn=2\tBLOCK=2\0" "56\t0.001\n"
                               "0123456789abcdef0123456789abcdef\temu/sm_80\tn=4\tBLOCK=512\t0.001\n"
                               "# notes \0 after a NUL\n"
                               "0123456789abcdef0123456789abcdef\temu/sm_80\tn=8\tBLOCK=64\t0.001\n";
    const size_t body_len = sizeof body - 1;
    FILE *f = fopen(db, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(body, 1, body_len, f), body_len);
    fclose(f);
    tile_cache_stats cs;
    cr_assert_eq(tile_cache_get_stats(cache, &cs), TILE_OK);
    cr_expect_eq(cs.tuning_records, 3, "records counted: %llu (n=1, n=4, n=8; the lines with a NUL are none)",
                 (unsigned long long)cs.tuning_records);
    cr_expect_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=2", cfg, sizeof cfg), TILE_ERROR_NOT_FOUND,
                 "the line cut by a NUL was an answer: %s", cfg);
    const char *keys[] = {"n=1", "n=4", "n=8"}, *want[] = {"BLOCK=128", "BLOCK=512", "BLOCK=64"};
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(tile_tune_lookup(cache, id, "emu/sm_80", keys[i], cfg, sizeof cfg), TILE_OK, "%s after the NUL not found", keys[i]);
        cr_expect_str_eq(cfg, want[i], "%s", keys[i]);
    }
    /* a recording that compacts (n=1 again) keeps both lines with their NUL bytes, and every record */
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1", "BLOCK=256", 1e-3), TILE_OK);
    f = fopen(db, "rb");
    cr_assert(f);
    static char text[4096];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    static const char line2[] = "0123456789abcdef0123456789abcdef\temu/sm_80\tn=2\tBLOCK=2\0" "56\t0.001\n",
                      notes[] = "# notes \0 after a NUL\n";
    cr_expect(memmem(text, n, line2, sizeof line2 - 1) && memmem(text, n, notes, sizeof notes - 1),
              "a line with a NUL was not kept byte for byte (%zu bytes left)", n);
    const char *keys2[] = {"n=1", "n=4", "n=8"}, *want2[] = {"BLOCK=256", "BLOCK=512", "BLOCK=64"};
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(tile_tune_lookup(cache, id, "emu/sm_80", keys2[i], cfg, sizeof cfg), TILE_OK, "%s lost by the compaction", keys2[i]);
        cr_expect_str_eq(cfg, want2[i], "%s", keys2[i]);
    }
    cr_assert_eq(tile_cache_get_stats(cache, &cs), TILE_OK);
    cr_expect_eq(cs.tuning_records, 4, "%llu", (unsigned long long)cs.tuning_records);
}

/* A tune.db larger than the most that is read (16 MiB) is not read: lookups see no record, and a recording fails
 * and leaves the file as it is (rewriting it would drop the records it could not read).  It was read whole,
 * however large, and the process aborted when memory ran out. */
Test(cache, tune_db_too_large, .init = setup, .fini = teardown) {
    char cache[128], db[256], cfg[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(db, sizeof db, "%s/tune.db", cache);
    const char *id = "0123456789abcdef0123456789abcdef";
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1", "BLOCK=128", 2e-3), TILE_OK);
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "n=2", "BLOCK=64", 2e-3), TILE_OK);
    struct stat sb;
    cr_assert_eq(stat(db, &sb), 0);
    off_t records = sb.st_size;
    const off_t max = (off_t)16 << 20;
    cr_assert_eq(truncate(db, max), 0); /* exactly the most: read (the NUL bytes after the records are a line that is no record) */
    cr_expect_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=1", cfg, sizeof cfg), TILE_OK, "%s", tile_last_error(NULL));
    cr_expect_str_eq(cfg, "BLOCK=128");
    tile_cache_stats cs;
    cr_assert_eq(tile_cache_get_stats(cache, &cs), TILE_OK);
    cr_expect_eq(cs.tuning_records, 2);
    cr_assert_eq(truncate(db, max + 1), 0); /* one byte more: not read */
    cr_expect_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=1", cfg, sizeof cfg), TILE_ERROR_NOT_FOUND, "read: %s", cfg);
    cr_expect(strstr(tile_last_error(NULL), "tune.db (it is larger than 16777216 bytes (16 MiB), the most that is read): no record for"),
              "%s", tile_last_error(NULL));
    cr_expect_str_eq(cfg, "");
    cr_assert_eq(tile_cache_get_stats(cache, &cs), TILE_OK);
    cr_expect_eq(cs.tuning_records, 0);
    /* recording a new key (an append) and a known one (a compaction): both refused, the file untouched */
    cr_expect_eq(tile_tune_record(cache, id, "emu/sm_80", "n=4", "BLOCK=32", 1e-3), TILE_ERROR_IO);
    cr_expect(strstr(tile_last_error(NULL), "nothing recorded, so that its records are kept"), "%s", tile_last_error(NULL));
    cr_expect_eq(tile_tune_record(cache, id, "emu/sm_80", "n=1", "BLOCK=256", 1e-3), TILE_ERROR_IO);
    cr_assert_eq(stat(db, &sb), 0);
    cr_expect_eq(sb.st_size, max + 1, "the file was rewritten: %lld bytes", (long long)sb.st_size);
    char head[512] = {0};
    FILE *f = fopen(db, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(head, 1, (size_t)records, f), (size_t)records);
    fclose(f);
    cr_expect(strstr(head, "\tn=1\tBLOCK=128\t") && strstr(head, "\tn=2\tBLOCK=64\t"), "records lost: %s", head);
    /* back under the cap: every record is there */
    cr_assert_eq(truncate(db, records), 0);
    cr_expect_eq(tile_tune_lookup(cache, id, "emu/sm_80", "n=2", cfg, sizeof cfg), TILE_OK, "%s", tile_last_error(NULL));
    cr_expect_str_eq(cfg, "BLOCK=64");
}

/* Processes recording into one tune.db at once lose nothing: each record reads, compacts and renames the
 * file under tune.lock.  Without it, one process's rename replaced a file another had just appended to or
 * compacted into, and records went missing (docs/runtime.md, Tuning). */
Test(cache, tune_db_concurrent_recorders, .init = setup, .fini = teardown, .timeout = 120) {
    char cache[128], cfg[64], bucket[32], want[32];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *id = "0123456789abcdef0123456789abcdef";
    enum { PROCS = 6, ROUNDS = 25 };
    int gate[2];
    cr_assert_eq(pipe(gate), 0);
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        cr_assert_geq(pids[p], 0);
        if (pids[p]) continue;
        close(gate[1]);
        char c;
        while (read(gate[0], &c, 1) > 0) {} /* all start together when the parent closes its end */
        int bad = 0;
        for (int i = 1; i <= ROUNDS; i++) {
            char b[32], conf[32];
            snprintf(b, sizeof b, "n=%d", p); /* this process's key: each configuration faster than the last */
            snprintf(conf, sizeof conf, "BLOCK=%d", i);
            bad += tile_tune_record(cache, id, "emu/sm_80", b, conf, (ROUNDS + 1 - i) * 1e-3) != TILE_OK;
            snprintf(b, sizeof b, "r=%d", p * 1000 + i); /* and a key of its own each round */
            bad += tile_tune_record(cache, id, "emu/sm_80", b, "BLOCK=7", 1e-3) != TILE_OK;
        }
        _exit(bad ? 1 : 0);
    }
    close(gate[0]);
    close(gate[1]);
    for (int p = 0; p < PROCS; p++) {
        int status;
        cr_assert_eq(waitpid(pids[p], &status, 0), pids[p]);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d failed (status 0x%x)", p, status);
    }
    int lost = 0;
    for (int p = 0; p < PROCS; p++) {
        snprintf(bucket, sizeof bucket, "n=%d", p);
        snprintf(want, sizeof want, "BLOCK=%d", ROUNDS);
        tile_status st = tile_tune_lookup(cache, id, "emu/sm_80", bucket, cfg, sizeof cfg);
        cr_expect(st == TILE_OK && !strcmp(cfg, want), "%s: %s, '%s' (want %s)", bucket, tile_status_string(st), cfg, want);
        for (int i = 1; i <= ROUNDS; i++) {
            snprintf(bucket, sizeof bucket, "r=%d", p * 1000 + i);
            lost += tile_tune_lookup(cache, id, "emu/sm_80", bucket, cfg, sizeof cfg) != TILE_OK;
        }
    }
    cr_expect_eq(lost, 0, "%d of %d records of new keys were lost", lost, PROCS * ROUNDS);
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_expect_eq(st.tuning_records, PROCS * (4 + ROUNDS), "four per repeated key, one per new key");
    /* clear --tuning removes the records (the lock file stays: removing it could let two writers hold two locks) */
    cr_assert_eq(tile_cache_clear(cache, 1), TILE_OK);
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_expect_eq(st.tuning_records, 0);
}

/* Threads of one process recording at once: each takes the lock through its own descriptor, so they exclude
 * each other as processes do. */
typedef struct TuneThread {
    const char *cache;
    int t, bad;
} TuneThread;
static void *tune_thread(void *arg) {
    TuneThread *tt = arg;
    for (int i = 1; i <= 20; i++) {
        char b[32], conf[32];
        snprintf(b, sizeof b, "t=%d", tt->t);
        snprintf(conf, sizeof conf, "BLOCK=%d", i);
        tt->bad += tile_tune_record(tt->cache, "0123456789abcdef0123456789abcdef", "emu/sm_80", b, conf, (21 - i) * 1e-3) != TILE_OK;
        snprintf(b, sizeof b, "u=%d", tt->t * 1000 + i);
        tt->bad += tile_tune_record(tt->cache, "0123456789abcdef0123456789abcdef", "emu/sm_80", b, "BLOCK=7", 1e-3) != TILE_OK;
    }
    return NULL;
}
Test(cache, tune_db_concurrent_threads, .init = setup, .fini = teardown, .timeout = 120) {
    char cache[128], cfg[64], bucket[32];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    enum { THREADS = 4 };
    pthread_t th[THREADS];
    TuneThread tt[THREADS];
    for (int t = 0; t < THREADS; t++) {
        tt[t] = (TuneThread){cache, t, 0};
        cr_assert_eq(pthread_create(&th[t], NULL, tune_thread, &tt[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        cr_expect_eq(tt[t].bad, 0, "thread %d: %d records failed", t, tt[t].bad);
    }
    int lost = 0;
    for (int t = 0; t < THREADS; t++) {
        snprintf(bucket, sizeof bucket, "t=%d", t);
        tile_status st = tile_tune_lookup(cache, "0123456789abcdef0123456789abcdef", "emu/sm_80", bucket, cfg, sizeof cfg);
        cr_expect(st == TILE_OK && !strcmp(cfg, "BLOCK=20"), "%s: %s, '%s'", bucket, tile_status_string(st), cfg);
        for (int i = 1; i <= 20; i++) {
            snprintf(bucket, sizeof bucket, "u=%d", t * 1000 + i);
            lost += tile_tune_lookup(cache, "0123456789abcdef0123456789abcdef", "emu/sm_80", bucket, cfg, sizeof cfg) != TILE_OK;
        }
    }
    cr_expect_eq(lost, 0, "%d of %d records of new keys were lost", lost, THREADS * 20);
}

/* A NUL byte in a file is an error at its place, through the cache as without it (the cache compiled the
 * text up to the NUL as if it were the whole file). */
Test(cache, nul_byte_in_a_file_is_an_error, .init = setup, .fini = teardown) {
    char path[600], cache[600];
    snprintf(path, sizeof path, "%s/nul.tile", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    static const char text[] = "kernel k(x: *f32) { store(x, 1.0); }\n\0 garbage after the NUL\n";
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fwrite(text, 1, sizeof text - 1, f);
    fclose(f);
    for (int cached = 0; cached < 2; cached++) {
        tile_compiled c;
        tile_compile_options o = {.size = sizeof o};
        tile_status st = cached ? tile_cache_compile_file(cache, path, &o, &c, NULL) : tile_compile_file(path, &o, &c);
        cr_expect_eq(st, TILE_ERROR_COMPILE, "%s: %s", cached ? "cached" : "direct", tile_status_string(st));
        cr_expect(c.diagnostics && strstr(c.diagnostics, "nul.tile:2:1: error: unexpected byte 0x00"), "%s: %s",
                  cached ? "cached" : "direct", c.diagnostics ? c.diagnostics : "(none)");
        tile_compiled_free(&c);
    }
}

/* An empty cache folder name is the default folder, as TILE_CACHE_DIR="" is (it compiled with no disk cache
 * at all, silently, in a context and in tile_cache_*; stats, list and clear looked at nothing). */
Test(cache, empty_folder_name_is_the_default, .init = setup, .fini = teardown) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cr_assert_eq(setenv("TILE_CACHE_DIR", cache, 1), 0); /* read once, at the library's first use: this test's process */
    const char *src = "kernel k(x: *f32) { store(x + arange(0, 32), 1.0); }";
    tile_compiled c;
    int hit = -1;
    cr_assert_eq(tile_cache_compile_source("", "k.tile", src, NULL, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_assert_eq(hit, 0);
    tile_compiled_free(&c);
    cr_assert_eq(tile_cache_compile_source(cache, "k.tile", src, NULL, &c, &hit), TILE_OK, "%s", c.diagnostics);
    cr_assert_eq(hit, 1, "the entry went into TILE_CACHE_DIR");
    tile_compiled_free(&c);
    tile_context *ctx;
    tile_context_options o = {.device = "emu", .cache_dir = ""};
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_module *m;
    cr_assert_eq(tile_module_load_source_ex(ctx, "k.tile", src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s;
    cr_assert_eq(tile_context_get_stats(ctx, &s), TILE_OK);
    cr_expect_eq(s.disk_hits, 1, "the context's load was a hit in the default folder (%llu disk hits)", (unsigned long long)s.disk_hits);
    tile_module_unload(m);
    tile_context_destroy(ctx);
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats("", &st), TILE_OK);
    cr_expect_eq(st.entries, 1);
    cr_expect_eq(st.hits, 2);
    cr_assert_eq(tile_cache_clear("", 1), TILE_OK);
    cr_assert_eq(tile_cache_get_stats(cache, &st), TILE_OK);
    cr_expect_eq(st.entries, 0);
}

/* load_entry.c - a program that ships without the compiler: test_aot builds it with the system cc against
 * libtile_rt alone (ldd: no LLVM, no xxHash, no libtile) and runs it as
 *   prog CACHE DAMAGED PLANTED CUBIN
 *   prog fatbin FATBIN FATBIN_COMPRESSED
 * CACHE holds the entries the compiler stored for axpy.tile, sm_80 and sm_90a (test_aot compiled them); DAMAGED is a copy with one
 * payload byte changed, PLANTED a copy with the entry under another key's name; CUBIN is ptxas's cubin of the
 * same kernel; FATBIN is nvcc's fatbin of a CUDA C axpy with uncompressed PTX, FATBIN_COMPRESSED the
 * same with nvcc's default compression.  It finds the entry by tile_cache_list_ex, loads it by its key on
 * emu:sm_80 and checks the kernel against float64 on random inputs with the output poisoned, n not a multiple
 * of the block; then every refusal: bad keys, a missing, damaged and planted entry, a cubin on the emulator,
 * truncated and damaged images.  The second form runs the fatbin's PTX on the emulator (float64-checked) and
 * checks the refusals of the compressed one and of damaged fatbins.  Exit 0 when everything held; else a message and a nonzero code. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tile/tile.h>

static int failures;
#define CHECK(cond, ...)                                        \
    do {                                                        \
        if (!(cond)) {                                          \
            fprintf(stderr, "load_entry.c:%d: ", __LINE__);    \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* A refusal: status st and a message holding `needle`. */
#define REFUSED(ctx, call, want, needle)                                                                              \
    do {                                                                                                              \
        tile_status st_ = (call);                                                                                     \
        const char *msg_ = tile_last_error(ctx);                                                                      \
        CHECK(st_ == (want) && msg_ && strstr(msg_, needle), "%s: status %d (want %d), message '%s' (want '%s')", #call, \
              (int)st_, (int)(want), msg_ ? msg_ : "(none)", needle);                                                 \
    } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void);
static float frand(void) { /* in [-2, 2) */
    next();
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 4.0 - 2.0);
}

static uint64_t next(void) { return rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; }

/* 4000 copies of image, each with a few bytes changed (most in the headers, where the offsets are) and cut at a
 * random length sometimes: each is refused with a message or loads (a fatbin's PTX may still parse), never
 * crashes or reads outside the copy (the sanitized build runs this too).  *loaded: how many loaded. */
static void mutations(tile_context *ctx, const unsigned char *image, size_t n, int *loaded) {
    unsigned char *c = malloc(n);
    for (int t = 0; t < 4000; t++) {
        memcpy(c, image, n);
        for (int k = 1 + (int)(next() % 4); k > 0; k--) {
            size_t at = next() % 2 ? next() % (n < 256 ? n : 256) : next() % n;
            c[at] = next() % 3 ? (unsigned char)next() : (unsigned char)(c[at] ^ 0x80);
        }
        size_t len = next() % 4 ? n : next() % n;
        unsigned char *cut = malloc(len ? len : 1); /* exactly len bytes: a read past them is the sanitizer's */
        memcpy(cut, c, len);
        tile_module *m = NULL;
        tile_status st = tile_module_load_cubin(ctx, cut, len, &m);
        const char *msg = tile_last_error(ctx);
        if (st == TILE_OK) ++*loaded, tile_module_unload(m);
        else CHECK(msg && strstr(msg, "tile_module_load_cubin: ") && (st == TILE_ERROR_INVALID_VALUE || st == TILE_ERROR_UNSUPPORTED ||
                   st == TILE_ERROR_COMPILE), "mutation %d: status %d, '%s'", t, (int)st, msg ? msg : "");
        free(cut);
    }
    free(c);
}

static char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) free(buf), buf = NULL;
    fclose(f);
    if (buf) buf[len] = 0, *n = (size_t)len;
    return buf;
}

typedef struct Found {
    char key[33], key90[33]; /* the sm_80 and sm_90a entries of axpy.tile */
    int entries;
} Found;

static void on_entry(void *user, const tile_cache_entry_info *e) {
    Found *f = user;
    f->entries++;
    size_t sl = strlen(e->source);
    if (sl >= 9 && !strcmp(e->source + sl - 9, "axpy.tile") && !strcmp(e->kernels, "axpy"))
        snprintf(!strcmp(e->arch, "sm_90a") ? f->key90 : f->key, sizeof f->key, "%s", e->key);
}

/* out[i] = a * x[i] + y[i] for i < n (f32, or f64 when wide), float64-checked; out poisoned (NaN) past n too. */
static void run_axpy(tile_context *ctx, tile_kernel *k, int n, int wide, tile_dim3 block) {
    size_t es = wide ? 8 : 4, pad = 37;
    size_t bytes = es * ((size_t)n + pad);
    unsigned char *hx = malloc(bytes), *hy = malloc(bytes), *ho = malloc(bytes);
    double *ref = malloc(sizeof *ref * (size_t)n);
    memset(hx, 0xff, bytes), memset(hy, 0xff, bytes); /* NaN past n: read by no correct kernel */
    float a = frand();
    double ad = a;
    for (int i = 0; i < n; i++) {
        float x = frand(), y = frand();
        if (wide) {
            double xd = x * 1.000001, yd = y;
            memcpy(hx + 8 * (size_t)i, &xd, 8), memcpy(hy + 8 * (size_t)i, &yd, 8);
            ref[i] = ad * xd + yd;
        } else {
            memcpy(hx + 4 * (size_t)i, &x, 4), memcpy(hy + 4 * (size_t)i, &y, 4);
            ref[i] = ad * (double)x + (double)y;
        }
    }
    memset(ho, 0xff, bytes); /* NaN in either width: every element must be written */
    tile_devptr x, y, o;
    CHECK(!tile_malloc(ctx, bytes, &x) && !tile_malloc(ctx, bytes, &y) && !tile_malloc(ctx, bytes, &o), "malloc");
    tile_memcpy_htod(ctx, x, hx, bytes), tile_memcpy_htod(ctx, y, hy, bytes), tile_memcpy_htod(ctx, o, ho, bytes);
    tile_status st;
    if (wide) { /* the CUDA C kernel: axpy(double *y, const double *x, double a, int n), y updated in place */
        double a64 = ad;
        void *args[] = {&y, &x, &a64, &n};
        o = y;
        st = tile_launch_raw(k, (tile_dim3){(unsigned)(n + block.x - 1) / block.x, 1, 1}, block, 0, args, NULL);
    } else {
        void *args[] = {&x, &y, &o, &a, &n};
        st = tile_launch(k, (tile_dim3){(unsigned)(n + 127) / 128, 1, 1}, args, NULL);
    }
    CHECK(st == TILE_OK, "launch: %s", tile_last_error(ctx));
    CHECK(!tile_synchronize(ctx), "synchronize: %s", tile_last_error(ctx));
    CHECK(!tile_memcpy_dtoh(ctx, ho, o, bytes), "dtoh: %s", tile_last_error(ctx));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double got;
        if (wide) memcpy(&got, ho + 8 * (size_t)i, 8);
        else {
            float g;
            memcpy(&g, ho + 4 * (size_t)i, 4);
            got = g;
        }
        double tol = wide ? 1e-13 * (fabs(ref[i]) + 1) : 2e-6 * (fabs(ref[i]) + 1);
        if (!(fabs(got - ref[i]) <= tol) && bad++ < 3) fprintf(stderr, "out[%d] = %.17g, float64 %.17g\n", i, got, ref[i]);
    }
    for (size_t i = (size_t)n * es; i < bytes; i++)
        if (ho[i] != 0xff && bad++ < 3) fprintf(stderr, "byte %zu past n was written\n", i);
    CHECK(!bad, "%d wrong elements (n = %d)", bad, n);
    tile_free(ctx, x), tile_free(ctx, y);
    if (!wide) tile_free(ctx, o);
    free(hx), free(hy), free(ho), free(ref);
}

/* The fatbin's uncompressed PTX runs on the emulator; compressed PTX is refused, saying so. */
static int fatbin_checks(const char *fat_path, const char *comp_path) {
    tile_context *ctx;
    if (tile_context_create("emu:sm_80", &ctx)) return fprintf(stderr, "%s\n", tile_last_error(NULL)), 4;
    tile_module *m = NULL, *bad = NULL;
    tile_kernel *k = NULL;
    tile_kernel_attributes at;
    /* a fatbin: its uncompressed PTX runs on the emulator; compressed PTX is refused, saying so */
    {
        size_t fn = 0, cn = 0;
        unsigned char *fat = (unsigned char *)read_all(fat_path, &fn), *comp = (unsigned char *)read_all(comp_path, &cn);
        CHECK(fat && comp, "cannot read the fatbins");
        if (fat && comp) {
            m = NULL, k = NULL;
            CHECK(tile_module_load_cubin(ctx, fat, fn, &m) == TILE_OK, "fatbin: %s", tile_last_error(ctx));
            CHECK(m && tile_module_get_kernel(m, "axpy", &k) == TILE_OK, "fatbin kernel: %s", tile_last_error(ctx));
            CHECK(k && !tile_kernel_get_attributes(k, &at) && at.num_params == 4 && strstr(at.signature, ", f64, u32"),
                  "fatbin attributes: %d params '%s'", k ? at.num_params : -1, k ? at.signature : "");
            if (k) run_axpy(ctx, k, 1000, 1, (tile_dim3){96, 1, 1});
            tile_module_unload(m);
            REFUSED(ctx, tile_module_load_cubin(ctx, comp, cn, &bad), TILE_ERROR_UNSUPPORTED, "its PTX is compressed");
            int loaded = 0;
            mutations(ctx, fat, fn, &loaded);
            CHECK(loaded > 0, "no mutated fatbin loaded (its PTX entry untouched in some)");
            REFUSED(ctx, tile_module_load_cubin(ctx, fat, fn - 1, &bad), TILE_ERROR_INVALID_VALUE, "truncated");
            fat[9] ^= 0x40; /* the container's payload size, 16 KiB more than there is */
            REFUSED(ctx, tile_module_load_cubin(ctx, fat, fn, &bad), TILE_ERROR_INVALID_VALUE, "the fatbin is truncated or damaged");
            fat[9] ^= 0x40;
            fat[16 + 8 + 3] ^= 0x7f; /* the first entry's payload size, far past the container's end */
            REFUSED(ctx, tile_module_load_cubin(ctx, fat, fn, &bad), TILE_ERROR_INVALID_VALUE, "entry 1");
        }
        free(fat), free(comp);
    }
    tile_context_destroy(ctx);
    if (failures) return fprintf(stderr, "%d checks failed\n", failures), 1;
    puts("load_entry fatbin ok");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "fatbin")) return fatbin_checks(argv[2], argv[3]);
    if (argc != 5) return fprintf(stderr, "usage: %s CACHE DAMAGED PLANTED CUBIN | fatbin FATBIN FATBIN_COMPRESSED\n", argv[0]), 2;
    const char *cache = argv[1], *damaged = argv[2], *planted = argv[3];
    /* the entry, by what tile_cache_list_ex says of it */
    Found f = {0};
    CHECK(tile_cache_list_ex(cache, on_entry, &f) == TILE_OK, "tile_cache_list_ex: %s", tile_last_error(NULL));
    CHECK(f.entries == 2 && f.key[0] && f.key90[0], "entries %d, sm_80 key '%s', sm_90a key '%s'", f.entries, f.key, f.key90);
    if (!f.key[0] || !f.key90[0]) return 3;
    tile_context *ctx;
    if (tile_context_create("emu:sm_80", &ctx)) return fprintf(stderr, "%s\n", tile_last_error(NULL)), 4;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    CHECK(tile_module_load_cache_entry(ctx, cache, f.key, &m) == TILE_OK, "load: %s", tile_last_error(ctx));
    CHECK(m && tile_module_get_kernel(m, "axpy", &k) == TILE_OK, "get_kernel: %s", tile_last_error(ctx));
    tile_context_stats cs;
    CHECK(!tile_context_get_stats(ctx, &cs) && cs.disk_hits == 1 && cs.compiles == 0 && cs.memory_hits == 0,
          "stats: %llu disk hits, %llu compiles", (unsigned long long)cs.disk_hits, (unsigned long long)cs.compiles);
    if (!k) return 5;
    tile_kernel_attributes at;
    CHECK(!tile_kernel_get_attributes(k, &at) && at.num_params == 5 && at.block_threads == 128 && strstr(at.signature, "*f32"),
          "attributes: %d params, %u threads, '%s'", at.num_params, at.block_threads, at.signature);
    run_axpy(ctx, k, 1000, 0, (tile_dim3){0, 0, 0});
    run_axpy(ctx, k, 1, 0, (tile_dim3){0, 0, 0});
    /* the metadata the compile gave: a pointer outside the context's memory is refused before the launch */
    {
        tile_devptr wild = 0x1000;
        int n = 4;
        float a = 1;
        void *args[] = {&wild, &wild, &wild, &a, &n};
        REFUSED(ctx, tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_ERROR_INVALID_VALUE, "into no allocation");
    }
    /* the key again while the module is held: that module, from memory (no disk hit), one more reference; the
     * same key from another folder is that folder's (the damaged copy is refused there) */
    tile_module *m2 = NULL;
    CHECK(tile_module_load_cache_entry(ctx, cache, f.key, &m2) == TILE_OK && m2 == m, "second load: %p, first %p: %s", (void *)m2,
          (void *)m, tile_last_error(ctx));
    CHECK(!tile_context_get_stats(ctx, &cs) && cs.disk_hits == 1 && cs.memory_hits == 1, "stats after the second load: %llu disk, %llu memory hits",
          (unsigned long long)cs.disk_hits, (unsigned long long)cs.memory_hits);
    tile_module *bad = (tile_module *)1;
    REFUSED(ctx, tile_module_load_cache_entry(ctx, damaged, f.key, &bad), TILE_ERROR_IO, "checksum mismatch");
    /* each load needs one unload: after the first the kernel still runs, after the second the handle is gone */
    tile_module_unload(m);
    run_axpy(ctx, k, 333, 0, (tile_dim3){0, 0, 0});
    tile_module_unload(m2);
    tile_kernel *gone = NULL;
    REFUSED(NULL, tile_module_get_kernel(m, "axpy", &gone), TILE_ERROR_INVALID_VALUE, "not a live tile_module");
    /* refusals of the key and the entry */
    bad = (tile_module *)1;
    REFUSED(ctx, tile_module_load_cache_entry(ctx, cache, "xyz", &bad), TILE_ERROR_INVALID_VALUE, "32 lowercase hex digits");
    CHECK(bad == NULL, "*out not cleared on a refusal");
    REFUSED(ctx, tile_module_load_cache_entry(ctx, cache, NULL, &bad), TILE_ERROR_INVALID_VALUE, "key NULL");
    REFUSED(ctx, tile_module_load_cache_entry(ctx, cache, "../../../../../../etc/passwd000000", &bad), TILE_ERROR_INVALID_VALUE, "hex");
    char other[33];
    memcpy(other, f.key, 33);
    other[31] = other[31] == '0' ? '1' : '0';
    REFUSED(ctx, tile_module_load_cache_entry(ctx, cache, other, &bad), TILE_ERROR_NOT_FOUND, "no entry");
    REFUSED(ctx, tile_module_load_cache_entry(ctx, damaged, f.key, &bad), TILE_ERROR_IO, "checksum mismatch");
    REFUSED(ctx, tile_module_load_cache_entry(ctx, planted, other, &bad), TILE_ERROR_IO, "another key's");
    REFUSED(ctx, tile_module_load_cache_entry(ctx, "/nonexistent/tile-cache", f.key, &bad), TILE_ERROR_NOT_FOUND, "does not exist");
    REFUSED(NULL, tile_module_load_cache_entry(NULL, cache, f.key, &bad), TILE_ERROR_INVALID_VALUE, "tile_module_load_cache_entry");
    /* the entry is still there and good after the refusals (nothing was removed) */
    CHECK(tile_module_load_cache_entry(ctx, cache, f.key, &m) == TILE_OK, "reload: %s", tile_last_error(ctx));
    tile_module_unload(m);
    /* the same kernel's sm_90a entry: not on emu:sm_80 (a newer GPU's code) */
    REFUSED(ctx, tile_module_load_cache_entry(ctx, cache, f.key90, &bad), TILE_ERROR_UNSUPPORTED, "compiled for sm_90a");

    /* a cubin on the emulator, and images cut short or damaged */
    size_t n = 0;
    unsigned char *cubin = (unsigned char *)read_all(argv[4], &n);
    CHECK(cubin && n > 64, "cannot read %s", argv[4]);
    if (cubin) {
        REFUSED(ctx, tile_module_load_cubin(ctx, cubin, n, &bad), TILE_ERROR_UNSUPPORTED, "machine code (SASS) for sm_80");
        size_t cuts[] = {n - 1, n / 2, 64, 63, 3, 0};
        for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++)
            REFUSED(ctx, tile_module_load_cubin(ctx, cubin, cuts[i], &bad), TILE_ERROR_INVALID_VALUE, "truncated");
        unsigned char *c = malloc(n);
        memcpy(c, cubin, n);
        c[0] = 'X';
        REFUSED(ctx, tile_module_load_cubin(ctx, c, n, &bad), TILE_ERROR_INVALID_VALUE, "neither a cubin");
        memcpy(c, cubin, n), c[18] = 62; /* e_machine: x86-64 */
        REFUSED(ctx, tile_module_load_cubin(ctx, c, n, &bad), TILE_ERROR_INVALID_VALUE, "not NVIDIA CUDA");
        memcpy(c, cubin, n), c[40 + 5] = 0x7f; /* e_shoff far past the end */
        REFUSED(ctx, tile_module_load_cubin(ctx, c, n, &bad), TILE_ERROR_INVALID_VALUE, "section headers end");
        memcpy(c, cubin, n), c[62] = 0xff, c[63] = 0x7f; /* e_shstrndx out of range */
        REFUSED(ctx, tile_module_load_cubin(ctx, c, n, &bad), TILE_ERROR_INVALID_VALUE, "section-name table");
        free(c);
        const char *ptx = "//\n.version 8.0\n.target sm_80\n.address_size 64\n";
        REFUSED(ctx, tile_module_load_cubin(ctx, ptx, strlen(ptx), &bad), TILE_ERROR_INVALID_VALUE, "PTX text");
        REFUSED(ctx, tile_module_load_cubin(ctx, NULL, n, &bad), TILE_ERROR_INVALID_VALUE, "image is NULL");
        int loaded = 0;
        mutations(ctx, cubin, n, &loaded);
        CHECK(loaded == 0, "%d mutated cubins loaded on the emulator", loaded);
        free(cubin);
    }
    tile_context_destroy(ctx);
    if (failures) return fprintf(stderr, "%d checks failed\n", failures), 1;
    puts("load_entry ok");
    return 0;
}

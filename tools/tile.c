/* tile.c - the command-line tool.
 *
 *   tile compile FILE.tile [--kernel NAME] [--arch sm_80|sm_90a] [-D NAME=VALUE]...
 *                [--specialize ARG=1|16]... [--emit tir|llvm|ptx|cubin] [-o OUT]
 *                [--dump-after PASS|all] [--time-passes] [-I DIR]...
 *
 *   tile run gemm --m M --n N --k K --dtype f16|bf16|tf32|i8 [--device D] [--trans-a] [--trans-b] ...
 *   tile run attention --batch B --seq S --heads H --head-dim D [--causal] [--dtype f16|bf16] [--device D]
 *   tile run decode --batch B --context C --heads H --head-dim D [--kv-dtype f8e4m3] [--device D] ...
 *   tile run moe --tokens T --experts E --topk K --hidden H --inter I [--dtype f16|bf16|f8e4m3] [--device D] ...
 *   tile tune gemm --m M --n N --k K --dtype ... | tile tune FILE.tile --kernel NAME --grid G --arg A=V ...
 *   tile aot FILE.tile --kernel NAME [--arch A] [-D N=V]... [--variant "ARG=1 ARG=16"]... -o OUT
 *   tile cache stats|list|clear [--tuning] [--dir DIR]
 *
 * Exit status: 0 success, 1 error in the source (diagnostics on stderr),
 * 2 usage error (including an unreadable input file), 3 internal or tool failure. */
#include "support/hostfloat.h"
#include "include/tile/tile.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool known_arch(const char *a) {
    for (int i = 0; tile_target_name(i); i++)
        if (!strcmp(tile_target_name(i), a)) return true;
    return false;
}

static const char *usage_main =
    "usage: tile <command> [options]\n"
    "\n"
    "commands:\n"
    "  compile FILE.tile   compile kernels to Tile IR, LLVM IR, PTX or cubin\n"
    "  run gemm            run tile_gemm on random data and check it against a float64 reference\n"
    "  run attention       run tile_attention_fwd on random data, check it (float64) and time it\n"
    "  run decode          the same for tile_attention_decode_paged (alias: run paged-attention)\n"
    "  run moe             run tile_moe_forward on random data, check it (float64) and time it\n"
    "  tune gemm|FILE      time each @config of a kernel and store the fastest in the tuning database\n"
    "  aot FILE.tile       export kernels as C sources with embedded PTX\n"
    "  cache stats|list|clear   the compile cache\n"
    "\n"
    "Run 'tile compile --help' for the options of a command.\n";

static const char *usage_compile =
    "usage: tile compile FILE.tile [options]\n"
    "\n"
    "  --kernel NAME          compile only this kernel (default: every kernel, one module)\n"
    "  --arch sm_80|sm_90a    target (default sm_80)\n"
    "  -D NAME=VALUE          set a const parameter, file-level const, num_warps or num_stages\n"
    "  --specialize ARG=1|16  assume a run-time integer argument equals 1 or is divisible by 16\n"
    "  --no-align-ptrs        do not assume 16-byte aligned pointer arguments\n"
    "  -I DIR                 search DIR for imports\n"
    "  --emit tir|llvm|ptx|cubin   what to write (default ptx)\n"
    "  -o OUT                 output file (default: standard output; cubin needs -o)\n"
    "  --dump-after PASS|all  print the Tile IR after a pass (or 'frontend') to stderr\n"
    "  --time-passes          print the time of each stage to stderr\n"
    "  -v, --verbose          print kernel metadata (and ptxas -v with --emit cubin) to stderr\n"
    "  --no-cache             compile even when the compile cache has the result\n"
    "\n"
    "passes: specialize canonicalize assign_layout remove_convert smem_alloc barrier\n"
    "exit status: 0 ok, 1 error in the source, 2 usage error, 3 internal or tool error\n";

#define MAX_LIST 256

static int usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "tile: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    fprintf(stderr, "Run 'tile compile --help' for usage.\n");
    return 2;
}

static int cmd_compile(int argc, char **argv) {
    const char *file = NULL, *out = NULL, *emit = "ptx";
    const char *defines[MAX_LIST + 1] = {0}, *specs[MAX_LIST + 1] = {0}, *incs[MAX_LIST + 1] = {0};
    int nd = 0, ns = 0, ni = 0, verbose = 0, no_cache = 0, hit = 0;
    tile_compile_options o = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define NEXT()                                                     \
    do {                                                           \
        if (i + 1 >= argc) return usage_error("missing value for", a); \
        val = argv[++i];                                           \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_compile, stdout);
            return 0;
        } else if (!strcmp(a, "--kernel")) {
            NEXT();
            o.kernel = val;
        } else if (!strcmp(a, "--arch")) {
            NEXT();
            if (!known_arch(val)) return usage_error("unknown --arch (see tile --help for the targets):", val);
            o.arch = val;
        } else if (!strncmp(a, "-D", 2)) {
            if (a[2]) val = a + 2;
            else NEXT();
            if (!strchr(val, '=') || val[0] == '=') return usage_error("-D expects NAME=VALUE, got", val);
            if (nd == MAX_LIST) return usage_error("too many -D options", NULL);
            defines[nd++] = val;
        } else if (!strncmp(a, "-I", 2)) {
            if (a[2]) val = a + 2;
            else NEXT();
            if (ni == MAX_LIST) return usage_error("too many -I options", NULL);
            incs[ni++] = val;
        } else if (!strcmp(a, "--specialize")) {
            NEXT();
            if (ns == MAX_LIST) return usage_error("too many --specialize options", NULL);
            specs[ns++] = val;
        } else if (!strcmp(a, "--no-align-ptrs")) {
            o.no_align_ptrs = 1;
        } else if (!strcmp(a, "--emit")) {
            NEXT();
            if (strcmp(val, "tir") && strcmp(val, "llvm") && strcmp(val, "ptx") && strcmp(val, "cubin"))
                return usage_error("unknown --emit (expected tir, llvm, ptx or cubin):", val);
            emit = val;
        } else if (!strcmp(a, "-o")) {
            NEXT();
            out = val;
        } else if (!strcmp(a, "--dump-after")) {
            NEXT();
            o.dump_after = val;
        } else if (!strcmp(a, "--time-passes")) {
            o.time_passes = 1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "--no-cache")) {
            no_cache = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option", a);
        } else {
            if (file) return usage_error("more than one input file:", a);
            file = a;
        }
#undef NEXT
    }
    if (!file) return usage_error("no input file", NULL);
    if (!strcmp(emit, "cubin") && !out) return usage_error("--emit cubin needs -o FILE", NULL);
    o.defines = defines;
    o.specialize = specs;
    o.include_dirs = incs;
    o.want_llvm_ir = !strcmp(emit, "llvm");
    o.tir_only = !strcmp(emit, "tir");
    o.want_cubin = !strcmp(emit, "cubin");
    tile_compiled c;
    tile_status st = no_cache ? tile_compile_file(file, &o, &c) : tile_cache_compile_file(NULL, file, &o, &c, &hit);
    if (verbose && !no_cache) fprintf(stderr, "cache: %s\n", hit ? "hit" : "miss");
    if (c.diagnostics && *c.diagnostics) fputs(c.diagnostics, stderr);
    if (c.dump) fputs(c.dump, stderr);
    if (c.timing) fputs(c.timing, stderr);
    int rc = 0;
    if (st == TILE_ERROR_COMPILE) rc = 1;
    else if (st == TILE_ERROR_INVALID_VALUE || st == TILE_ERROR_IO) rc = 2;
    else if (st != TILE_OK) rc = 3;
    if (st == TILE_OK && o.want_cubin && c.ptxas_missing) {
        fprintf(stderr, "tile: ptxas not found: cannot emit cubin (install the CUDA toolkit or pass its path)\n");
        rc = 3;
    }
    if (rc == 0) {
        const char *text = !strcmp(emit, "tir") ? c.tir : !strcmp(emit, "llvm") ? c.llvm_ir : c.ptx;
        const void *data = text;
        size_t n = text ? strlen(text) : 0;
        if (o.want_cubin) {
            data = c.cubin;
            n = c.cubin_size;
        }
        FILE *f = out ? fopen(out, "wb") : stdout;
        if (!f || fwrite(data, 1, n, f) != n) {
            fprintf(stderr, "tile: cannot write %s\n", out ? out : "standard output");
            rc = 3;
        }
        if (f && out) fclose(f);
        if (verbose) {
            for (int k = 0; k < c.nkernels; k++) {
                tile_kernel_info *ki = &c.kernels[k];
                fprintf(stderr, "kernel %s(%s) num_warps=%d num_stages=%d smem=%d", ki->name, ki->signature, ki->num_warps,
                        ki->num_stages, ki->smem_bytes);
                if (ki->registers >= 0) fprintf(stderr, " registers=%d spill_bytes=%d", ki->registers, ki->spill_bytes);
                fputc('\n', stderr);
            }
            if (c.ptxas_log) fputs(c.ptxas_log, stderr);
        }
    }
    tile_compiled_free(&c);
    return rc;
}

/* ---- run, tune, aot, cache ---- */
#define CLI_USAGE(msg, arg) (fprintf(stderr, "tile: %s%s%s\n", msg, arg ? " " : "", arg ? arg : ""), 2)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- tile cache ---- */
static void print_entry(void *user, const char *key, const char *source, const char *kernels, uint64_t bytes) {
    (void)user;
    printf("%s %8llu  %s  %s\n", key, (unsigned long long)bytes, source, kernels);
}

static int cmd_cache(int argc, char **argv) {
    const char *sub = argc > 0 ? argv[0] : NULL, *dir = NULL;
    int tuning = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--tuning")) tuning = 1;
        else return CLI_USAGE("unknown cache option", argv[i]);
    }
    if (!sub || !strcmp(sub, "--help")) {
        fputs("usage: tile cache stats|list|clear [--tuning] [--dir DIR]\n"
              "  stats   hits and misses since the last clear, entries and bytes on disk, tuning records\n"
              "  list    every entry: key, size, source, kernels\n"
              "  clear   remove every entry (--tuning: the tuning database too)\n"
              "The folder: --dir, else TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile,\n"
              "else ${TMPDIR:-/tmp}/tile-cache-UID; used only when owned by you and writable by no one else.\n",
              sub ? stdout : stderr);
        return sub ? 0 : 2;
    }
    char *def = tile_cache_default_dir();
    const char *d = dir ? dir : def;
    int rc = 0;
    if (!strcmp(sub, "stats")) {
        tile_cache_stats s;
        if (tile_cache_get_stats(d, &s) != TILE_OK) rc = 3;
        else
            printf("cache %s\n  hits %llu  misses %llu\n  entries %llu  bytes %llu\n  tuning records %llu\n", d,
                   (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.entries,
                   (unsigned long long)s.bytes, (unsigned long long)s.tuning_records);
    } else if (!strcmp(sub, "list")) {
        rc = tile_cache_list(d, print_entry, NULL) == TILE_OK ? 0 : 3;
    } else if (!strcmp(sub, "clear")) {
        rc = tile_cache_clear(d, tuning) == TILE_OK ? 0 : 3;
        if (!rc) printf("cleared %s%s\n", d, tuning ? " (and the tuning database)" : "");
    } else rc = CLI_USAGE("unknown cache command", sub);
    free(def);
    return rc;
}

/* ---- host data for gemm: random inputs in the device format and their exact values ---- */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static int dt_size(tile_dtype t) { return t == TILE_I8 ? 1 : t == TILE_F16 || t == TILE_BF16 ? 2 : 4; }
static double dt_fill(tile_dtype t, void *buf, size_t i, double v) {
    switch (t) {
    case TILE_F16: return f16_to_d(((uint16_t *)buf)[i] = f32_to_f16((float)v));
    case TILE_BF16: return bf16_to_d(((uint16_t *)buf)[i] = f32_to_bf16((float)v));
    case TILE_I8: return ((int8_t *)buf)[i] = (int8_t)floor(v * 100);
    case TILE_I32: return ((int32_t *)buf)[i] = (int32_t)floor(v * 100);
    default: return ((float *)buf)[i] = (float)v;
    }
}
static double dt_get(tile_dtype t, const void *buf, size_t i) {
    switch (t) {
    case TILE_F16: return f16_to_d(((const uint16_t *)buf)[i]);
    case TILE_BF16: return bf16_to_d(((const uint16_t *)buf)[i]);
    case TILE_I32: return ((const int32_t *)buf)[i];
    default: return ((const float *)buf)[i];
    }
}

typedef struct GemmProblem {
    int64_t m, n, k;
    tile_dtype in, out;
    int ta, tb;
    const char *device;
    int reps, warmup;
    double timeout_s;
} GemmProblem;

/* "--dtype f16": input type; tf32 means f32 inputs on tf32 tensor cores */
static int parse_gemm_args(int argc, char **argv, GemmProblem *p, int *extra_start) {
    *p = (GemmProblem){.m = 256, .n = 256, .k = 256, .in = TILE_F16, .out = TILE_F32, .reps = 5, .warmup = 1, .timeout_s = 60};
    int out_set = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--trans-a")) p->ta = 1;
        else if (!strcmp(a, "--trans-b")) p->tb = 1;
        else if (!v && a[0] == '-') return CLI_USAGE("missing value for", a);
        else if (!strcmp(a, "--m")) p->m = atoll(v), i++;
        else if (!strcmp(a, "--n")) p->n = atoll(v), i++;
        else if (!strcmp(a, "--k")) p->k = atoll(v), i++;
        else if (!strcmp(a, "--reps")) p->reps = atoi(v), i++;
        else if (!strcmp(a, "--warmup")) p->warmup = atoi(v), i++;
        else if (!strcmp(a, "--timeout")) p->timeout_s = atof(v), i++;
        else if (!strcmp(a, "--device")) p->device = v, i++;
        else if (!strcmp(a, "--dtype") || !strcmp(a, "--out-dtype")) {
            static const char *names[] = {"f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i8", "i32", "tf32"};
            int t = -1;
            for (int j = 0; j < 8; j++)
                if (!strcmp(v, names[j])) t = j;
            if (t < 0) return CLI_USAGE("unknown type", v);
            if (a[2] == 'd') p->in = t == 7 ? TILE_F32 : (tile_dtype)t;
            else out_set = 1, p->out = t == 7 ? TILE_F32 : (tile_dtype)t;
            i++;
        } else if (extra_start && a[0] == '-') {
            *extra_start = i;
            break;
        } else return CLI_USAGE("unknown option", a);
    }
    if (!out_set) p->out = p->in == TILE_I8 ? TILE_I32 : TILE_F32;
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->reps < 1 || p->warmup < 0) return CLI_USAGE("sizes and --reps must be positive", NULL);
    return 0;
}

typedef struct GemmData {
    tile_gemm_args g;
    double *va, *vb;
    void *hc;
    size_t cn;
} GemmData;

static int gemm_setup(tile_context *ctx, const GemmProblem *p, GemmData *d) {
    memset(d, 0, sizeof *d);
    int64_t m = p->m, n = p->n, k = p->k;
    int64_t lda = p->ta ? m : k, ldb = p->tb ? k : n;
    size_t an = (size_t)(m * k), bn = (size_t)(k * n);
    d->cn = (size_t)(m * n);
    void *ha = malloc(an * dt_size(p->in)), *hb = malloc(bn * dt_size(p->in));
    d->hc = calloc(d->cn, (size_t)dt_size(p->out));
    d->va = malloc(an * sizeof(double));
    d->vb = malloc(bn * sizeof(double));
    if (!ha || !hb || !d->hc || !d->va || !d->vb) return fprintf(stderr, "tile: out of host memory\n"), 3;
    for (size_t i = 0; i < an; i++) d->va[i] = dt_fill(p->in, ha, i, urand());
    for (size_t i = 0; i < bn; i++) d->vb[i] = dt_fill(p->in, hb, i, urand());
    tile_devptr da, db, dc;
    if (tile_malloc(ctx, an * dt_size(p->in), &da) || tile_malloc(ctx, bn * dt_size(p->in), &db) ||
        tile_malloc(ctx, d->cn * dt_size(p->out), &dc) || tile_memcpy_htod(ctx, da, ha, an * dt_size(p->in)) ||
        tile_memcpy_htod(ctx, db, hb, bn * dt_size(p->in))) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        return 3;
    }
    free(ha), free(hb);
    d->g = (tile_gemm_args){.m = m, .n = n, .k = k, .a = da, .lda = lda, .trans_a = p->ta, .b = db, .ldb = ldb, .trans_b = p->tb,
                            .c = dc, .ldc = n, .in_dtype = p->in, .out_dtype = p->out, .alpha = 1, .beta = 0};
    return 0;
}

static void gemm_data_free(GemmData *d) { free(d->va), free(d->vb), free(d->hc); }

/* max |error| / tolerance over C against the float64 reference; > 1 fails */
static double gemm_check(tile_context *ctx, const GemmProblem *p, GemmData *d) {
    if (tile_memcpy_dtoh(ctx, d->hc, d->g.c, d->cn * dt_size(p->out)) != TILE_OK) return INFINITY;
    double worst = 0, tol_rel = p->in == TILE_F32 ? 4e-3 : 1e-5;
    double out_rel = p->out == TILE_F16 ? 1.0 / 1024 : p->out == TILE_BF16 ? 1.0 / 128 : 0;
    int64_t m = p->m, n = p->n, k = p->k;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, mag = 0;
            for (int64_t q = 0; q < k; q++) {
                double x = p->ta ? d->va[q * m + i] : d->va[i * k + q], y = p->tb ? d->vb[j * k + q] : d->vb[q * n + j];
                s += x * y, mag += fabs(x * y);
            }
            double got = dt_get(p->out, d->hc, (size_t)(i * n + j));
            double tol = tol_rel * mag + out_rel * fabs(s) + 1e-5;
            double e = fabs(got - s) / tol;
            if (!(e <= worst)) worst = e; /* NaN counts as worst */
        }
    return worst;
}

static const char *source_name(int s) { return s == 0 ? "already loaded" : s == 1 ? "disk cache hit" : "compiled (cache miss)"; }

static int run_attention_cli(int argc, char **argv);
static int run_decode_cli(int argc, char **argv);
static int run_moe_cli(int argc, char **argv);

static int cmd_run(int argc, char **argv) {
    if (argc >= 1 && !strcmp(argv[0], "attention")) return run_attention_cli(argc - 1, argv + 1);
    if (argc >= 1 && (!strcmp(argv[0], "decode") || !strcmp(argv[0], "paged-attention"))) return run_decode_cli(argc - 1, argv + 1);
    if (argc >= 1 && !strcmp(argv[0], "moe")) return run_moe_cli(argc - 1, argv + 1);
    if (argc < 1 || strcmp(argv[0], "gemm")) {
        fputs("usage: tile run gemm --m M --n N --k K --dtype f16|bf16|tf32|i8 [--out-dtype f32|f16|bf16|i32]\n"
              "                     [--device emu|cuda|cuda:N] [--trans-a] [--trans-b] [--reps R]\n",
              argc && !strcmp(argv[0], "--help") ? stdout : stderr);
        return argc && !strcmp(argv[0], "--help") ? 0 : 2;
    }
    GemmProblem p;
    int rc = parse_gemm_args(argc - 1, argv + 1, &p, NULL);
    if (rc) return rc;
    tile_context *ctx;
    tile_status st = tile_context_create(p.device, &ctx);
    if (st != TILE_OK) return fprintf(stderr, "tile: cannot open device '%s': %s\n", p.device ? p.device : "default", tile_status_string(st)), 3;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    GemmData d;
    if ((rc = gemm_setup(ctx, &p, &d))) return tile_context_destroy(ctx), rc;
    double t0 = now_s();
    st = tile_gemm(ctx, &d.g);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double first = now_s() - t0;
    if (st != TILE_OK) {
        fprintf(stderr, "tile: tile_gemm failed: %s\n", tile_last_error(ctx));
        return gemm_data_free(&d), tile_context_destroy(ctx), 3;
    }
    tile_gemm_info gi;
    tile_gemm_last_info(ctx, &gi);
    int first_source = gi.source;
    double worst = gemm_check(ctx, &p, &d);
    double *ts = calloc((size_t)p.reps, sizeof(double));
    for (int r = 0; r < p.reps && st == TILE_OK; r++) {
        double t1 = now_s();
        st = tile_gemm(ctx, &d.g);
        if (st == TILE_OK) st = tile_synchronize(ctx);
        ts[r] = now_s() - t1;
    }
    for (int i = 1; i < p.reps; i++)
        for (int j = i; j > 0 && ts[j] < ts[j - 1]; j--) {
            double x = ts[j];
            ts[j] = ts[j - 1], ts[j - 1] = x;
        }
    double med = ts[p.reps / 2];
    tile_gemm_last_info(ctx, &gi);
    printf("gemm %lldx%lldx%lld %s%s%s on %s (%s): kernel %s\n", (long long)p.m, (long long)p.n, (long long)p.k, gi.kernel + 5,
           p.ta ? " trans_a" : "", p.tb ? " trans_b" : "", props.name, props.arch, gi.kernel);
    printf("  config      %s%s\n", gi.config, gi.tuned ? " (tuned)" : " (default: not tuned for this shape)");
    printf("  specialize  %s\n", *gi.specialize ? gi.specialize : "(none)");
    printf("  grid        (%u, %u) x %u threads\n", gi.grid.x, gi.grid.y, gi.block.x);
    printf("  first call  %.3f ms: %s\n", first * 1e3, source_name(first_source));
    printf("  next calls  %.3f ms median of %d: %s (%.2f TFLOP/s%s)\n", med * 1e3, p.reps, source_name(gi.source),
           2.0 * p.m * p.n * p.k / med * 1e-12, props.is_emulator ? "; the emulator's timings mean nothing" : "");
    printf("  check       max error %.3g of tolerance against a float64 reference: %s\n", worst, worst <= 1 ? "ok" : "MISMATCH");
    free(ts);
    gemm_data_free(&d);
    tile_context_destroy(ctx);
    return st != TILE_OK ? 3 : worst <= 1 ? 0 : 3;
}

/* ---- tile tune ---- */
typedef struct TuneRow {
    char config[256];
    double seconds; /* < 0: skipped */
    char why[200];
} TuneRow;

static int row_cmp(const void *a, const void *b) {
    const TuneRow *x = a, *y = b;
    if ((x->seconds < 0) != (y->seconds < 0)) return x->seconds < 0 ? 1 : -1;
    return x->seconds < y->seconds ? -1 : x->seconds > y->seconds;
}

static void join_config(char **cfg, char *out, size_t n) {
    out[0] = 0;
    for (int j = 0; cfg[j]; j++) snprintf(out + strlen(out), n - strlen(out), "%s%s", j ? " " : "", cfg[j]);
}

/* Compile one config to learn its shared memory; "" when it can run, else why not. */
static void precheck(const char *file, const char *kernel, char **cfg, const char *const *extra, const tile_device_properties *props,
                     char *why, size_t n) {
    const char *defs[64];
    int nd = 0;
    for (int j = 0; cfg[j] && nd < 40; j++) defs[nd++] = cfg[j];
    for (int j = 0; extra && extra[j] && nd < 63; j++) defs[nd++] = extra[j];
    defs[nd] = NULL;
    tile_compile_options o = {.kernel = kernel, .defines = defs, .arch = props->arch};
    tile_compiled c;
    tile_status st = tile_cache_compile_file(NULL, file, &o, &c, NULL);
    why[0] = 0;
    if (st != TILE_OK) {
        const char *nl = c.diagnostics ? strchr(c.diagnostics, '\n') : NULL;
        snprintf(why, n, "compile failed: %.*s", nl ? (int)(nl - c.diagnostics) : 150, c.diagnostics ? c.diagnostics : tile_status_string(st));
    } else if (c.nkernels && c.kernels[0].smem_bytes > props->max_shared_per_block)
        snprintf(why, n, "shared memory %d bytes > %d", c.kernels[0].smem_bytes, props->max_shared_per_block);
    tile_compiled_free(&c);
}

static void print_table(TuneRow *rows, int n, int emu) {
    qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    printf("%-4s %12s  %s\n", "rank", "median", "config");
    for (int i = 0; i < n; i++) {
        if (rows[i].seconds >= 0) printf("%-4d %9.3f ms  %s\n", i + 1, rows[i].seconds * 1e3, rows[i].config);
        else printf("%-4s %12s  %s  (skipped: %s)\n", "-", "-", rows[i].config, rows[i].why);
    }
    if (emu) printf("note: on the emulator these timings mean nothing (it runs PTX on the CPU); this run checks the flow\n");
}

static double median(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1], v[j - 1] = x;
        }
    return v[n / 2];
}

/* The time of one run for the tuner: device events recorded around it on
 * the default stream (the GPU's own clock, no host overhead in it), or the
 * host clock around tile_synchronize when events cannot be created. */
typedef struct RunTimer {
    tile_context *ctx;
    tile_event start, end; /* NULL: host clock */
    double t0;
} RunTimer;

static void timer_init(RunTimer *t, tile_context *ctx) {
    *t = (RunTimer){.ctx = ctx};
    if (tile_event_create(ctx, &t->start) != TILE_OK) t->start = NULL;
    else if (tile_event_create(ctx, &t->end) != TILE_OK) tile_event_destroy(ctx, t->start), t->start = NULL;
}

static void timer_start(RunTimer *t) {
    if (t->start && tile_event_record(t->ctx, t->start, NULL) == TILE_OK) return;
    tile_synchronize(t->ctx);
    t->t0 = now_s();
}

static double timer_stop(RunTimer *t) {
    float ms;
    if (t->start && tile_event_record(t->ctx, t->end, NULL) == TILE_OK && tile_event_elapsed_ms(t->ctx, t->start, t->end, &ms) == TILE_OK)
        return ms * 1e-3;
    tile_synchronize(t->ctx);
    return now_s() - t->t0;
}

static void timer_free(RunTimer *t) {
    if (!t->start) return;
    tile_event_destroy(t->ctx, t->start);
    tile_event_destroy(t->ctx, t->end);
}

static int tune_gemm(int argc, char **argv) {
    GemmProblem p;
    int rc = parse_gemm_args(argc, argv, &p, NULL);
    if (rc) return rc;
    static const char *kn[7][7];
    kn[TILE_F16][TILE_F32] = "gemm_f16_f32", kn[TILE_F16][TILE_F16] = "gemm_f16_f16", kn[TILE_BF16][TILE_F32] = "gemm_bf16_f32";
    kn[TILE_BF16][TILE_BF16] = "gemm_bf16_bf16", kn[TILE_F32][TILE_F32] = "gemm_tf32_f32", kn[TILE_I8][TILE_I32] = "gemm_i8_i32";
    const char *kernel = kn[p.in][p.out];
    if (!kernel) return CLI_USAGE("no gemm kernel for this --dtype/--out-dtype pair", NULL);
    const char *file = tile_gemm_source_path();
    tile_tune_space sp;
    char *err = NULL;
    if (tile_tune_space_file(file, kernel, &sp, &err) != TILE_OK) return fprintf(stderr, "%s", err ? err : ""), free(err), 1;
    if (!sp.nconfigs) return fprintf(stderr, "tile: %s has no @config\n", kernel), tile_tune_space_free(&sp), 1;
    tile_context *ctx;
    tile_status st = tile_context_create(p.device, &ctx);
    if (st != TILE_OK) return fprintf(stderr, "tile: cannot open device: %s\n", tile_status_string(st)), tile_tune_space_free(&sp), 3;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    GemmData d;
    if ((rc = gemm_setup(ctx, &p, &d))) return tile_context_destroy(ctx), tile_tune_space_free(&sp), rc;
    printf("tuning %s for m=%lld n=%lld k=%lld on %s (%s): %d configs, %d warm-up + %d timed runs each\n", kernel, (long long)p.m,
           (long long)p.n, (long long)p.k, props.name, props.arch, sp.nconfigs, p.warmup, p.reps);
    TuneRow *rows = calloc((size_t)sp.nconfigs, sizeof *rows);
    double *ts = calloc((size_t)p.reps, sizeof(double));
    RunTimer timer;
    timer_init(&timer, ctx);
    for (int i = 0; i < sp.nconfigs; i++) {
        TuneRow *r = &rows[i];
        join_config(sp.configs[i], r->config, sizeof r->config);
        fprintf(stderr, "[%d/%d] %s ... ", i + 1, sp.nconfigs, r->config);
        r->seconds = -1;
        precheck(file, kernel, sp.configs[i], NULL, &props, r->why, sizeof r->why);
        const char *const *cfg = (const char *const *)sp.configs[i];
        double t0 = now_s();
        for (int w = 0; !r->why[0] && w <= p.warmup; w++) { /* the first call compiles */
            if (tile_gemm_with_config(ctx, &d.g, cfg) != TILE_OK || tile_synchronize(ctx) != TILE_OK)
                snprintf(r->why, sizeof r->why, "%.180s", tile_last_error(ctx));
            else if (w == 0 && gemm_check(ctx, &p, &d) > 1) snprintf(r->why, sizeof r->why, "wrong results");
            if (now_s() - t0 > p.timeout_s) snprintf(r->why, sizeof r->why, "time-out (%.0f s)", p.timeout_s);
        }
        for (int k = 0; !r->why[0] && k < p.reps; k++) {
            timer_start(&timer);
            tile_gemm_with_config(ctx, &d.g, cfg);
            ts[k] = timer_stop(&timer);
        }
        if (!r->why[0]) r->seconds = median(ts, p.reps);
        if (r->why[0]) fprintf(stderr, "skipped: %s\n", r->why);
        else fprintf(stderr, "%.3f ms\n", r->seconds * 1e3);
    }
    print_table(rows, sp.nconfigs, props.is_emulator);
    rc = 0;
    if (rows[0].seconds >= 0) {
        char id[33], bucket[96], dev[160];
        tile_kernel_id_file(file, kernel, id);
        snprintf(bucket, sizeof bucket, "m=%lld,n=%lld,k=%lld", (long long)tile_tune_bucket(p.m), (long long)tile_tune_bucket(p.n),
                 (long long)tile_tune_bucket(p.k));
        snprintf(dev, sizeof dev, "%s/%s", props.name, props.arch);
        if (tile_tune_record(NULL, id, dev, bucket, rows[0].config, rows[0].seconds) != TILE_OK) rc = 3;
        else printf("stored: %s %s on %s -> %s\n", kernel, bucket, dev, rows[0].config);
    } else rc = 3, fprintf(stderr, "tile: no configuration ran\n");
    timer_free(&timer);
    free(ts), free(rows);
    gemm_data_free(&d);
    tile_context_destroy(ctx);
    tile_tune_space_free(&sp);
    return rc;
}

/* grid expressions: expr = term {(+|-) term}; term = atom {(*|/) atom}; atom = INT | NAME | cdiv(expr, expr) | (expr) */
typedef struct Env {
    const char **names;
    int64_t *vals;
    int n;
    const char *p;
    bool bad;
} Env;
static int64_t ex_expr(Env *e);
static int64_t ex_atom(Env *e) {
    while (*e->p == ' ') e->p++;
    if (*e->p == '(') {
        e->p++;
        int64_t v = ex_expr(e);
        if (*e->p++ != ')') e->bad = true;
        return v;
    }
    if (isdigit((unsigned char)*e->p)) return strtoll(e->p, (char **)&e->p, 0);
    const char *s = e->p;
    while (isalnum((unsigned char)*e->p) || *e->p == '_') e->p++;
    size_t len = (size_t)(e->p - s);
    if (len == 4 && !strncmp(s, "cdiv", 4) && *e->p == '(') {
        e->p++;
        int64_t a = ex_expr(e);
        if (*e->p++ != ',') e->bad = true;
        int64_t b = ex_expr(e);
        if (*e->p++ != ')' || b <= 0) e->bad = true;
        return b > 0 ? (a + b - 1) / b : 0;
    }
    for (int i = e->n - 1; i >= 0; i--)
        if (strlen(e->names[i]) == len && !strncmp(e->names[i], s, len)) return e->vals[i];
    e->bad = true;
    return 0;
}
static int64_t ex_term(Env *e) {
    int64_t v = ex_atom(e);
    for (;;) {
        while (*e->p == ' ') e->p++;
        char op = *e->p;
        if (op != '*' && op != '/') return v;
        e->p++;
        int64_t r = ex_atom(e);
        if (op == '/' && r == 0) return e->bad = true, 0;
        v = op == '*' ? v * r : v / r;
    }
}
static int64_t ex_expr(Env *e) {
    int64_t v = ex_term(e);
    for (;;) {
        while (*e->p == ' ') e->p++;
        char op = *e->p;
        if (op != '+' && op != '-') return v;
        e->p++;
        int64_t r = ex_term(e);
        v = op == '+' ? v + r : v - r;
    }
}

static int tune_file(const char *file, int argc, char **argv) {
    const char *kernel = NULL, *device = NULL, *grid = "1";
    const char *argvals[64];
    int nargs = 0, reps = 5, warmup = 1;
    int64_t elems = 1 << 16;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return CLI_USAGE("missing value for", a);
        if (!strcmp(a, "--kernel")) kernel = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--grid")) grid = v;
        else if (!strcmp(a, "--arg") && nargs < 64) argvals[nargs++] = v;
        else if (!strcmp(a, "--elems")) elems = atoll(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--warmup")) warmup = atoi(v);
        else return CLI_USAGE("unknown option", a);
        i++;
    }
    if (!kernel) return CLI_USAGE("tile tune FILE needs --kernel NAME", NULL);
    if (reps < 1 || elems < 1) return CLI_USAGE("--reps and --elems must be positive", NULL);
    tile_tune_space sp;
    char *err = NULL;
    tile_status st = tile_tune_space_file(file, kernel, &sp, &err);
    if (st != TILE_OK) return fprintf(stderr, "%s\n", err ? err : tile_status_string(st)), free(err), st == TILE_ERROR_IO ? 2 : 1;
    if (!sp.nconfigs) return fprintf(stderr, "tile: kernel '%s' has no @config\n", kernel), tile_tune_space_free(&sp), 1;
    tile_context *ctx;
    if ((st = tile_context_create(device, &ctx)) != TILE_OK)
        return fprintf(stderr, "tile: cannot open device: %s\n", tile_status_string(st)), tile_tune_space_free(&sp), 3;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    TuneRow *rows = calloc((size_t)sp.nconfigs, sizeof *rows);
    double *ts = calloc((size_t)reps, sizeof(double));
    printf("tuning %s in %s on %s (%s): %d configs\n", kernel, file, props.name, props.arch, sp.nconfigs);
    char bucket[256] = "";
    int rc = 0;
    for (int i = 0; i < sp.nconfigs && !rc; i++) {
        TuneRow *r = &rows[i];
        r->seconds = -1;
        join_config(sp.configs[i], r->config, sizeof r->config);
        fprintf(stderr, "[%d/%d] %s ... ", i + 1, sp.nconfigs, r->config);
        precheck(file, kernel, sp.configs[i], NULL, &props, r->why, sizeof r->why);
        tile_module *mod = NULL;
        tile_kernel *k = NULL;
        tile_kernel_attributes at;
        if (!r->why[0] && (tile_module_load_file(ctx, file, (const char *const *)sp.configs[i], &mod) != TILE_OK ||
                           tile_module_get_kernel(mod, kernel, &k) != TILE_OK))
            snprintf(r->why, sizeof r->why, "%.180s", tile_last_error(ctx));
        /* arguments: from the signature, pointers get zeroed buffers of --elems elements */
        void *params[64];
        union {
            int64_t i;
            double f;
            float f32;
            int32_t i32;
            tile_devptr p;
        } vals[64];
        const char *names[160];
        int64_t nv[160];
        int nn = 0;
        tile_devptr bufs[64];
        int nb = 0;
        if (!r->why[0]) {
            tile_kernel_get_attributes(k, &at);
            const char *s = at.signature;
            for (int a = 0; a < at.num_params && a < 64; a++) {
                while (*s == ' ' || *s == ',') s++;
                /* the parameter's name is not in the signature: --arg values go in order of run-time scalars by name */
                params[a] = &vals[a];
                memset(&vals[a], 0, sizeof vals[a]);
                if (*s == '*') {
                    tile_devptr p;
                    if (tile_malloc(ctx, (size_t)elems * 8, &p) != TILE_OK || tile_memset(ctx, p, 0, (size_t)elems * 8) != TILE_OK) {
                        snprintf(r->why, sizeof r->why, "%.180s", tile_last_error(ctx));
                        break;
                    }
                    bufs[nb++] = vals[a].p = p;
                }
                while (*s && *s != ',') s++;
            }
        }
        /* --arg NAME=VALUE: match names from the kernel's source order via the tune key list and config */
        for (int a = 0; a < nargs && nn < 128; a++) {
            const char *eq = strchr(argvals[a], '=');
            if (!eq) {
                rc = CLI_USAGE("--arg expects NAME=VALUE, got", argvals[a]);
                break;
            }
            names[nn] = strndup(argvals[a], (size_t)(eq - argvals[a]));
            nv[nn++] = atoll(eq + 1);
        }
        for (int j = 0; sp.configs[i][j] && nn < 159; j++) {
            const char *eq = strchr(sp.configs[i][j], '=');
            names[nn] = strndup(sp.configs[i][j], (size_t)(eq - sp.configs[i][j]));
            nv[nn++] = strcmp(eq + 1, "true") ? strcmp(eq + 1, "false") ? atoll(eq + 1) : 0 : 1;
        }
        if (!r->why[0] && !rc) {
            /* scalars: --arg values in the order given fill the scalar parameters in order */
            const char *s = at.signature;
            int scalar = 0;
            for (int a = 0; a < at.num_params && a < 64; a++) {
                while (*s == ' ' || *s == ',') s++;
                if (*s != '*') {
                    int64_t v = scalar < nargs ? nv[scalar] : 0;
                    if (!strncmp(s, "f32", 3)) vals[a].f32 = (float)v;
                    else if (!strncmp(s, "f64", 3)) vals[a].f = (double)v;
                    else if (!strncmp(s, "i64", 3) || !strncmp(s, "u64", 3)) vals[a].i = v;
                    else vals[a].i32 = (int32_t)v;
                    scalar++;
                }
                while (*s && *s != ',') s++;
            }
            unsigned g[3] = {1, 1, 1};
            const char *gp = grid;
            for (int dmn = 0; dmn < 3 && *gp; dmn++) {
                Env e = {names, nv, nn, gp, false};
                int64_t v = ex_expr(&e);
                if (e.bad || v < 1 || v > 2147483647) {
                    rc = CLI_USAGE("bad --grid expression (INT, NAME, + - * /, cdiv(a, b); comma-separated dims):", grid);
                    break;
                }
                g[dmn] = (unsigned)v;
                gp = *e.p == ',' ? e.p + 1 : e.p;
            }
            double t0 = now_s();
            for (int w = 0; !rc && w <= warmup && !r->why[0]; w++)
                if (tile_launch(k, (tile_dim3){g[0], g[1], g[2]}, params, NULL) != TILE_OK || tile_synchronize(ctx) != TILE_OK)
                    snprintf(r->why, sizeof r->why, "%.180s", tile_last_error(ctx));
            (void)t0;
            RunTimer timer;
            timer_init(&timer, ctx);
            for (int q = 0; !rc && !r->why[0] && q < reps; q++) {
                timer_start(&timer);
                tile_launch(k, (tile_dim3){g[0], g[1], g[2]}, params, NULL);
                ts[q] = timer_stop(&timer);
            }
            timer_free(&timer);
            if (!rc && !r->why[0]) r->seconds = median(ts, reps);
        }
        if (!bucket[0] && !rc) {
            for (int kk = 0; kk < sp.nkeys; kk++) {
                int64_t v = 0;
                for (int a = 0; a < nargs; a++)
                    if (!strcmp(names[a], sp.keys[kk])) v = nv[a];
                snprintf(bucket + strlen(bucket), sizeof bucket - strlen(bucket), "%s%s=%lld", kk ? "," : "", sp.keys[kk],
                         (long long)tile_tune_bucket(v));
            }
            if (!bucket[0]) snprintf(bucket, sizeof bucket, "any");
        }
        for (int j = 0; j < nn; j++) free((void *)names[j]);
        for (int j = 0; j < nb; j++) tile_free(ctx, bufs[j]);
        if (mod) tile_module_unload(mod);
        if (r->why[0]) fprintf(stderr, "skipped: %s\n", r->why);
        else if (!rc) fprintf(stderr, "%.3f ms\n", r->seconds * 1e3);
    }
    if (!rc) {
        print_table(rows, sp.nconfigs, props.is_emulator);
        if (rows[0].seconds >= 0) {
            char id[33], dev[160];
            tile_kernel_id_file(file, kernel, id);
            snprintf(dev, sizeof dev, "%s/%s", props.name, props.arch);
            rc = tile_tune_record(NULL, id, dev, bucket, rows[0].config, rows[0].seconds) == TILE_OK ? 0 : 3;
            if (!rc) printf("stored: %s %s on %s -> %s\n", kernel, bucket, dev, rows[0].config);
        } else rc = 3, fprintf(stderr, "tile: no configuration ran\n");
    }
    free(ts), free(rows);
    tile_context_destroy(ctx);
    tile_tune_space_free(&sp);
    return rc;
}

static int cmd_tune(int argc, char **argv) {
    if (argc < 1 || !strcmp(argv[0], "--help")) {
        fputs("usage: tile tune gemm --m M --n N --k K --dtype f16|bf16|tf32|i8 [--out-dtype T] [--device D]\n"
              "                      [--warmup W] [--reps R] [--timeout S] [--trans-a] [--trans-b]\n"
              "       tile tune FILE.tile --kernel NAME [--device D] [--grid EXPR[,EXPR[,EXPR]]]\n"
              "                      [--arg NAME=VALUE]... [--elems N] [--warmup W] [--reps R]\n"
              "Runs every @config of the kernel (warm-up, then the median of runs timed with device events),\n"
              "skips those that fail to compile, exceed the device's shared memory or time out, prints a table\n"
              "sorted by time and stores the fastest in the tuning database (cache folder/tune.db) under the\n"
              "power-of-two bucket of the @tune_key arguments.  FILE mode: --arg values fill the run-time scalar\n"
              "parameters in order (and name them for --grid and the key); pointers get zeroed buffers of\n"
              "--elems 8-byte elements; --grid may use args and config values, e.g. 'cdiv(n, BLOCK)'.\n",
              argc ? stdout : stderr);
        return argc ? 0 : 2;
    }
    if (!strcmp(argv[0], "gemm")) return tune_gemm(argc - 1, argv + 1);
    return tune_file(argv[0], argc - 1, argv + 1);
}

/* ---- tile aot ---- */
static int cmd_aot(int argc, char **argv) {
    const char *file = NULL, *out = NULL;
    const char *kernels[64], *defines[MAX_LIST + 1] = {0}, *variants[32];
    int nk = 0, nd = 0, nv = 0;
    tile_compile_options o = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            fputs("usage: tile aot FILE.tile --kernel NAME [--kernel NAME]... [--arch sm_80|sm_90a] [-D NAME=VALUE]...\n"
                  "                [--variant \"ARG=1 ARG=16 ...\"]... -o OUT\n"
                  "Writes OUT.h and OUT.c: each kernel's PTX (and cubin when ptxas is found) embedded, and a typed\n"
                  "C launch function per kernel taking a tile_context; with --variant, a dispatcher picks the first\n"
                  "specialization the run-time values satisfy (ARG=1: equal to 1, ARG=16: divisible by 16), else\n"
                  "the generic build.  Build the output against libtile only.\n",
                  stdout);
            return 0;
        }
        if (a[0] == '-' && !v && strncmp(a, "-D", 2)) return CLI_USAGE("missing value for", a);
        if (!strcmp(a, "--kernel") && nk < 64) kernels[nk++] = v, i++;
        else if (!strcmp(a, "--arch")) {
            if (!known_arch(v)) return CLI_USAGE("unknown --arch (see tile --help for the targets):", v);
            o.arch = v, i++;
        } else if (!strncmp(a, "-D", 2)) {
            const char *d = a[2] ? a + 2 : v;
            if (!a[2]) i++;
            if (!d || !strchr(d, '=') || d[0] == '=') return CLI_USAGE("-D expects NAME=VALUE, got", d ? d : "nothing");
            if (nd < MAX_LIST) defines[nd++] = d;
        } else if (!strcmp(a, "--variant") && nv < 32) variants[nv++] = v, i++;
        else if (!strcmp(a, "-o")) out = v, i++;
        else if (a[0] == '-') return CLI_USAGE("unknown option", a);
        else if (file) return CLI_USAGE("more than one input file:", a);
        else file = a;
    }
    if (!file || !nk || !out) return CLI_USAGE("tile aot needs FILE.tile, --kernel NAME and -o OUT", NULL);
    o.defines = defines;
    kernels[nk] = NULL;
    variants[nv] = NULL;
    char *msg = NULL;
    tile_status st = tile_aot_export(file, &o, kernels, variants, out, &msg);
    if (msg && *msg) fputs(msg, stderr);
    free(msg);
    if (st == TILE_OK) printf("wrote %s.h and %s.c\n", out, out);
    return st == TILE_OK ? 0 : st == TILE_ERROR_COMPILE ? 1 : st == TILE_ERROR_INVALID_VALUE || st == TILE_ERROR_IO ? 2 : 3;
}


/* ---- tile run attention / decode: the attention API on random data ---- */
typedef struct AttnCli {
    int64_t batch, seq, seq_k, heads, heads_kv, head_dim, tokens, block_size, splits;
    tile_dtype dt, kv_dt;
    int causal, reps;
    const char *device;
} AttnCli;

static int attn_cli_parse(int argc, char **argv, AttnCli *p, bool decode) {
    *p = (AttnCli){.batch = decode ? 8 : 1, .seq = decode ? 1000 : 512, .seq_k = -1, .heads = 8, .heads_kv = -1, .head_dim = 128,
                   .tokens = 1, .block_size = 16, .dt = TILE_BF16, .kv_dt = TILE_F32, .reps = 5};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--causal") && !decode) p->causal = 1;
        else if (!v) return CLI_USAGE("missing value for", a);
        else if (!strcmp(a, "--batch")) p->batch = atoll(v), i++;
        else if (!strcmp(a, "--seq") || (decode && !strcmp(a, "--context"))) p->seq = atoll(v), i++;
        else if (!strcmp(a, "--seq-k") && !decode) p->seq_k = atoll(v), i++;
        else if (!strcmp(a, "--heads")) p->heads = atoll(v), i++;
        else if (!strcmp(a, "--heads-kv")) p->heads_kv = atoll(v), i++;
        else if (!strcmp(a, "--head-dim")) p->head_dim = atoll(v), i++;
        else if (!strcmp(a, "--tokens") && decode) p->tokens = atoll(v), i++;
        else if (!strcmp(a, "--block-size") && decode) p->block_size = atoll(v), i++;
        else if (!strcmp(a, "--splits") && decode) p->splits = atoll(v), i++;
        else if (!strcmp(a, "--reps")) p->reps = atoi(v), i++;
        else if (!strcmp(a, "--device")) p->device = v, i++;
        else if (!strcmp(a, "--dtype") || (decode && !strcmp(a, "--kv-dtype"))) {
            tile_dtype t = !strcmp(v, "f16") ? TILE_F16 : !strcmp(v, "bf16") ? TILE_BF16 : !strcmp(v, "f8e4m3") ? TILE_F8E4M3 : TILE_F32;
            if (t == TILE_F32 || (t == TILE_F8E4M3 && a[2] == 'd')) return CLI_USAGE("unsupported type", v);
            if (a[2] == 'd') p->dt = t;
            else p->kv_dt = t;
            i++;
        } else return CLI_USAGE("unknown option", a);
    }
    if (p->heads_kv < 0) p->heads_kv = p->heads;
    if (p->seq_k < 0) p->seq_k = p->seq;
    if (p->batch < 1 || p->seq < 1 || p->heads < 1 || p->head_dim < 1 || p->reps < 1) return CLI_USAGE("sizes and --reps must be positive", NULL);
    return 0;
}

/* f8e4m3 code -> value (E4M3FN; codes here avoid NaN) */
static double e4m3_value(uint8_t c) {
    int e = (c >> 3) & 15, m = c & 7;
    double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return (c & 0x80) ? -v : v;
}

/* One output row against float64: q [D], keys/values through callbacks of
 * position j; returns max |error|. */
typedef const double *(*RowFn)(void *u, int64_t j, int kv);
static double attn_row_error(const double *q, int64_t D, int64_t nkeys, double scale, RowFn row, void *u, const double *got) {
    double mx = -INFINITY, l = 0, worst = 0;
    double *p = malloc(sizeof(double) * (size_t)(nkeys + 1));
    for (int64_t j = 0; j < nkeys; j++) {
        const double *k = row(u, j, 0);
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += q[d] * k[d];
        p[j] = s * scale, mx = fmax(mx, p[j]);
    }
    for (int64_t j = 0; j < nkeys; j++) l += (p[j] = exp(p[j] - mx));
    for (int64_t d = 0; d < D; d++) {
        double want = 0;
        for (int64_t j = 0; j < nkeys; j++) want += p[j] * row(u, j, 1)[d];
        want = nkeys ? want / l : 0;
        double e = fabs(got[d] - want);
        if (!(e <= worst)) worst = e;
    }
    free(p);
    return worst;
}

typedef struct PrefillRows {
    const double *vk, *vv;
    int64_t b, g, S, Hk, D;
} PrefillRows;
static const double *prefill_row(void *u, int64_t j, int kv) {
    PrefillRows *r = u;
    return (kv ? r->vv : r->vk) + ((r->b * r->S + j) * r->Hk + r->g) * r->D;
}

static double attn_median(double *ts, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && ts[j] < ts[j - 1]; j--) {
            double x = ts[j];
            ts[j] = ts[j - 1], ts[j - 1] = x;
        }
    return ts[n / 2];
}

static int run_attention_cli(int argc, char **argv) {
    AttnCli p;
    int rc = attn_cli_parse(argc, argv, &p, false);
    if (rc) return rc;
    int64_t B = p.batch, Sq = p.seq, Sk = p.seq_k, H = p.heads, Hk = p.heads_kv, D = p.head_dim;
    size_t nq = (size_t)(B * Sq * H * D), nk = (size_t)(B * Sk * Hk * D);
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *ho = malloc(nq * 2);
    double *vq = malloc(nq * 8), *vk = malloc(nk * 8), *vv = malloc(nk * 8), *got = malloc(sizeof(double) * (size_t)D);
    if (!hq || !hk || !hv || !ho || !vq || !vk || !vv || !got) return fprintf(stderr, "tile: out of host memory\n"), 3;
    for (size_t i = 0; i < nq; i++) vq[i] = dt_fill(p.dt, hq, i, urand());
    for (size_t i = 0; i < nk; i++) vk[i] = dt_fill(p.dt, hk, i, urand()), vv[i] = dt_fill(p.dt, hv, i, urand());
    tile_context *ctx;
    tile_status st = tile_context_create(p.device, &ctx);
    if (st != TILE_OK) return fprintf(stderr, "tile: cannot open device '%s': %s\n", p.device ? p.device : "default", tile_status_string(st)), 3;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    tile_devptr dq, dk, dv, dout;
    if (tile_malloc(ctx, nq * 2, &dq) || tile_malloc(ctx, nk * 2, &dk) || tile_malloc(ctx, nk * 2, &dv) || tile_malloc(ctx, nq * 2, &dout) ||
        tile_memcpy_htod(ctx, dq, hq, nq * 2) || tile_memcpy_htod(ctx, dk, hk, nk * 2) || tile_memcpy_htod(ctx, dv, hv, nk * 2))
        return fprintf(stderr, "tile: %s\n", tile_last_error(ctx)), tile_context_destroy(ctx), 3;
    tile_attention_args a = {.dtype = p.dt, .batch = B, .heads_q = H, .heads_kv = Hk, .head_dim = D, .seq_q = Sq, .seq_k = Sk,
                             .q = dq, .k = dk, .v = dv, .o = dout, .causal = p.causal, .window_left = -1, .window_right = -1};
    double t0 = now_s();
    st = tile_attention_fwd(ctx, &a);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double first = now_s() - t0;
    if (st != TILE_OK) return fprintf(stderr, "tile: tile_attention_fwd failed: %s\n", tile_last_error(ctx)), tile_context_destroy(ctx), 3;
    tile_memcpy_dtoh(ctx, ho, dout, nq * 2);
    /* the reference on at most 256 rows spread over the batch, heads and sequence */
    int64_t rows = B * H * Sq, step = rows > 256 ? rows / 256 : 1, checked = 0;
    double worst = 0, scale = 1.0 / sqrt((double)D);
    for (int64_t r = 0; r < rows; r += step, checked++) {
        int64_t b = r / (H * Sq), h = r / Sq % H, i = r % Sq;
        PrefillRows pr = {vk, vv, b, h / (H / Hk), Sk, Hk, D};
        int64_t nkeys = p.causal ? i + Sk - Sq + 1 : Sk;
        if (nkeys < 0) nkeys = 0;
        if (nkeys > Sk) nkeys = Sk;
        size_t off = (size_t)(((b * Sq + i) * H + h) * D);
        for (int64_t d = 0; d < D; d++) got[d] = dt_get(p.dt, ho, off + (size_t)d);
        double e = attn_row_error(vq + off, D, nkeys, scale, prefill_row, &pr, got);
        if (!(e <= worst)) worst = e;
    }
    double *ts = calloc((size_t)p.reps, sizeof(double));
    for (int r = 0; r < p.reps && st == TILE_OK; r++) {
        double t1 = now_s();
        st = tile_attention_fwd(ctx, &a);
        if (st == TILE_OK) st = tile_synchronize(ctx);
        ts[r] = now_s() - t1;
    }
    double med = attn_median(ts, p.reps), tol = p.dt == TILE_F16 ? 2e-3 : 1.6e-2;
    double flops = 4.0 * (double)B * H * Sq * Sk * D * (p.causal ? 0.5 : 1.0);
    printf("attention batch %lld seq %lld/%lld heads %lld/%lld head_dim %lld %s%s on %s (%s)\n", (long long)B, (long long)Sq, (long long)Sk,
           (long long)H, (long long)Hk, (long long)D, p.dt == TILE_F16 ? "f16" : "bf16", p.causal ? " causal" : "", props.name, props.arch);
    printf("  first call  %.3f ms (compile or cache load included)\n", first * 1e3);
    printf("  next calls  %.3f ms median of %d (%.2f TFLOP/s%s)\n", med * 1e3, p.reps, flops / med * 1e-12,
           props.is_emulator ? "; the emulator's timings mean nothing" : "");
    printf("  check       %lld rows against a float64 reference: max |error| %.3g (tolerance %.3g): %s\n", (long long)checked, worst, tol,
           worst <= tol ? "ok" : "MISMATCH");
    free(ts), free(hq), free(hk), free(hv), free(ho), free(vq), free(vk), free(vv), free(got);
    tile_context_destroy(ctx);
    return st != TILE_OK ? 3 : worst <= tol ? 0 : 3;
}

typedef struct DecodeRows {
    const double *vk, *vv;
    const int32_t *table;
    int64_t s, g, sbt, bs, Hk, D;
} DecodeRows;
static const double *decode_row(void *u, int64_t j, int kv) {
    DecodeRows *r = u;
    int64_t blk = r->table[r->s * r->sbt + j / r->bs];
    return (kv ? r->vv : r->vk) + ((blk * r->bs + j % r->bs) * r->Hk + r->g) * r->D;
}

static int run_decode_cli(int argc, char **argv) {
    AttnCli p;
    int rc = attn_cli_parse(argc, argv, &p, true);
    if (rc) return rc;
    int64_t S = p.batch, ctxlen = p.seq, H = p.heads, Hk = p.heads_kv, D = p.head_dim, T = p.tokens, bs = p.block_size;
    tile_dtype kv = p.kv_dt == TILE_F32 ? p.dt : p.kv_dt;
    if (ctxlen < T) return CLI_USAGE("--context must be at least --tokens", NULL);
    /* every sequence has the full context; blocks handed out in a shuffled order */
    int64_t nb = (ctxlen + bs - 1) / bs, num_blocks = S * nb;
    int32_t *table = malloc(sizeof(int32_t) * (size_t)num_blocks), *lens = malloc(sizeof(int32_t) * (size_t)S);
    for (int64_t i = 0; i < num_blocks; i++) table[i] = (int32_t)i;
    for (int64_t i = num_blocks - 1; i > 0; i--) {
        int64_t j = (int64_t)((urand() + 1) / 2 * (double)(i + 1)) % (i + 1);
        int32_t x = table[i];
        table[i] = table[j], table[j] = x;
    }
    for (int64_t s = 0; s < S; s++) lens[s] = (int32_t)ctxlen;
    size_t nq = (size_t)(S * T * H * D), nc = (size_t)(num_blocks * bs * Hk * D), kes = kv == TILE_F8E4M3 ? 1 : 2;
    uint16_t *hq = malloc(nq * 2), *ho = malloc(nq * 2);
    uint8_t *hk = malloc(nc * kes), *hv = malloc(nc * kes);
    double *vq = malloc(nq * 8), *vk = malloc(nc * 8), *vv = malloc(nc * 8), *got = malloc(sizeof(double) * (size_t)D);
    if (!hq || !ho || !hk || !hv || !vq || !vk || !vv || !got) return fprintf(stderr, "tile: out of host memory\n"), 3;
    float k_scale = 0.25f, v_scale = 0.5f;
    for (size_t i = 0; i < nq; i++) vq[i] = dt_fill(p.dt, hq, i, urand());
    for (size_t i = 0; i < nc; i++) {
        if (kv == TILE_F8E4M3) { /* codes of magnitude <= 2 (0x40), times the scales */
            uint8_t c, d;
            do {
                urand();
                c = (uint8_t)(rng >> 24);
            } while ((c & 0x7f) > 0x40);
            do {
                urand();
                d = (uint8_t)(rng >> 24);
            } while ((d & 0x7f) > 0x40);
            hk[i] = c, hv[i] = d, vk[i] = e4m3_value(c) * k_scale, vv[i] = e4m3_value(d) * v_scale;
        } else vk[i] = dt_fill(kv, hk, i, urand()), vv[i] = dt_fill(kv, hv, i, urand());
    }
    tile_context *ctx;
    tile_status st = tile_context_create(p.device, &ctx);
    if (st != TILE_OK) return fprintf(stderr, "tile: cannot open device '%s': %s\n", p.device ? p.device : "default", tile_status_string(st)), 3;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    tile_devptr dq, dout, dk, dv, dt, dl;
    if (tile_malloc(ctx, nq * 2, &dq) || tile_malloc(ctx, nq * 2, &dout) || tile_malloc(ctx, nc * kes, &dk) || tile_malloc(ctx, nc * kes, &dv) ||
        tile_malloc(ctx, 4 * (size_t)num_blocks, &dt) || tile_malloc(ctx, 4 * (size_t)S, &dl) || tile_memcpy_htod(ctx, dq, hq, nq * 2) ||
        tile_memcpy_htod(ctx, dk, hk, nc * kes) || tile_memcpy_htod(ctx, dv, hv, nc * kes) || tile_memcpy_htod(ctx, dt, table, 4 * (size_t)num_blocks) ||
        tile_memcpy_htod(ctx, dl, lens, 4 * (size_t)S))
        return fprintf(stderr, "tile: %s\n", tile_last_error(ctx)), tile_context_destroy(ctx), 3;
    tile_paged_attention_args a = {.dtype = p.dt, .kv_dtype = kv, .k_scale = k_scale, .v_scale = v_scale, .num_seqs = S, .heads_q = H,
                                   .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs, .num_blocks = num_blocks, .q = dq,
                                   .o = dout, .k_cache = dk, .v_cache = dv, .block_tables = dt, .block_table_stride = nb,
                                   .context_lens = dl, .max_context_len = ctxlen, .num_splits = (int)p.splits};
    size_t ws_bytes = 0;
    int splits = 1;
    if ((st = tile_paged_attention_workspace_size(ctx, &a, &ws_bytes, &splits)) == TILE_OK && ws_bytes &&
        (st = tile_malloc(ctx, ws_bytes, &a.workspace)) == TILE_OK)
        a.workspace_bytes = ws_bytes;
    double t0 = now_s();
    if (st == TILE_OK) st = tile_attention_decode_paged(ctx, &a);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double first = now_s() - t0;
    if (st != TILE_OK) return fprintf(stderr, "tile: tile_attention_decode_paged failed: %s\n", tile_last_error(ctx)), tile_context_destroy(ctx), 3;
    tile_memcpy_dtoh(ctx, ho, dout, nq * 2);
    int64_t rows = S * T * H, step = rows > 256 ? rows / 256 : 1, checked = 0;
    double worst = 0, scale = 1.0 / sqrt((double)D);
    for (int64_t r = 0; r < rows; r += step, checked++) {
        int64_t s = r / (T * H), t = r / H % T, h = r % H;
        DecodeRows dr = {vk, vv, table, s, h / (H / Hk), nb, bs, Hk, D};
        size_t off = (size_t)(((s * T + t) * H + h) * D);
        for (int64_t d = 0; d < D; d++) got[d] = dt_get(p.dt, ho, off + (size_t)d);
        double e = attn_row_error(vq + off, D, ctxlen - T + t + 1, scale, decode_row, &dr, got);
        if (!(e <= worst)) worst = e;
    }
    double *ts = calloc((size_t)p.reps, sizeof(double));
    for (int r = 0; r < p.reps && st == TILE_OK; r++) {
        double t1 = now_s();
        st = tile_attention_decode_paged(ctx, &a);
        if (st == TILE_OK) st = tile_synchronize(ctx);
        ts[r] = now_s() - t1;
    }
    double med = attn_median(ts, p.reps), tol = p.dt == TILE_F16 ? 2e-3 : 1.6e-2;
    double bytes = 2.0 * (double)S * ctxlen * Hk * D * (double)kes;
    static const char *const tn[] = {[TILE_F16] = "f16", [TILE_BF16] = "bf16", [TILE_F8E4M3] = "f8e4m3"};
    printf("decode batch %lld context %lld tokens %lld heads %lld/%lld head_dim %lld block %lld %s, KV %s, %d split%s on %s (%s)\n",
           (long long)S, (long long)ctxlen, (long long)T, (long long)H, (long long)Hk, (long long)D, (long long)bs, tn[p.dt], tn[kv], splits,
           splits == 1 ? "" : "s", props.name, props.arch);
    printf("  first call  %.3f ms (compile or cache load included)\n", first * 1e3);
    printf("  next calls  %.3f ms median of %d (KV cache read at %.1f GB/s%s)\n", med * 1e3, p.reps, bytes / med * 1e-9,
           props.is_emulator ? "; the emulator's timings mean nothing" : "");
    printf("  check       %lld rows against a float64 reference: max |error| %.3g (tolerance %.3g): %s\n", (long long)checked, worst, tol,
           worst <= tol ? "ok" : "MISMATCH");
    free(ts), free(table), free(lens), free(hq), free(ho), free(hk), free(hv), free(vq), free(vk), free(vv), free(got);
    tile_context_destroy(ctx);
    return st != TILE_OK ? 3 : worst <= tol ? 0 : 3;
}

/* ---- tile run moe: tile_moe_forward on random data ---- */
typedef struct MoeCli {
    int64_t tokens, experts, topk, hidden, inter;
    tile_dtype act, w;
    tile_moe_scales scales;
    int reps, check_tokens;
    const char *device;
} MoeCli;

static int moe_cli_parse(int argc, char **argv, MoeCli *p) {
    *p = (MoeCli){.tokens = 64, .experts = 8, .topk = 2, .hidden = 256, .inter = 512, .act = TILE_BF16, .w = TILE_BF16, .reps = 5,
                  .check_tokens = 32};
    int scales_set = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return CLI_USAGE("missing value for", a);
        else if (!strcmp(a, "--tokens")) p->tokens = atoll(v), i++;
        else if (!strcmp(a, "--experts")) p->experts = atoll(v), i++;
        else if (!strcmp(a, "--topk")) p->topk = atoll(v), i++;
        else if (!strcmp(a, "--hidden")) p->hidden = atoll(v), i++;
        else if (!strcmp(a, "--inter")) p->inter = atoll(v), i++;
        else if (!strcmp(a, "--reps")) p->reps = atoi(v), i++;
        else if (!strcmp(a, "--check-tokens")) p->check_tokens = atoi(v), i++;
        else if (!strcmp(a, "--device")) p->device = v, i++;
        else if (!strcmp(a, "--scales")) {
            if (!strcmp(v, "channel")) p->scales = TILE_MOE_SCALES_CHANNEL;
            else if (!strcmp(v, "block")) p->scales = TILE_MOE_SCALES_BLOCK128;
            else return CLI_USAGE("unknown --scales (expected channel or block):", v);
            scales_set = 1, i++;
        } else if (!strcmp(a, "--dtype") || !strcmp(a, "--act-dtype")) {
            tile_dtype t = !strcmp(v, "f16") ? TILE_F16 : !strcmp(v, "bf16") ? TILE_BF16 : !strcmp(v, "f8e4m3") ? TILE_F8E4M3 : TILE_F32;
            if (t == TILE_F32 || (t == TILE_F8E4M3 && a[2] == 'a')) return CLI_USAGE("unsupported type", v);
            if (a[2] == 'a') p->act = t;
            else if (t == TILE_F8E4M3) p->w = t;
            else p->w = p->act = t;
            i++;
        } else return CLI_USAGE("unknown option", a);
    }
    if (p->w != TILE_F8E4M3) p->w = p->act;
    if (p->w == TILE_F8E4M3 && !scales_set) p->scales = TILE_MOE_SCALES_BLOCK128;
    if (p->w != TILE_F8E4M3 && scales_set) return CLI_USAGE("--scales goes with --dtype f8e4m3", NULL);
    if (p->tokens < 1 || p->experts < 1 || p->topk < 1 || p->hidden < 1 || p->inter < 1 || p->reps < 1 || p->check_tokens < 1)
        return CLI_USAGE("sizes, --reps and --check-tokens must be positive", NULL);
    if (p->topk > p->experts) return CLI_USAGE("--topk must be at most --experts", NULL);
    return 0;
}

/* Weights of one matrix [E, R, C] (R split into segments of `seg` rows for block scales):
 * 16-bit values, or random f8e4m3 codes times random scales (maximum |w| about `amp`). */
typedef struct MoeWeights {
    void *w;
    float *s;
    size_t n, ns;
    int64_t R, C, seg, rbs, cb;
    tile_dtype t;
    tile_moe_scales sc;
} MoeWeights;

static int moe_weights_make(MoeWeights *m, tile_dtype t, tile_moe_scales sc, int64_t E, int64_t R, int64_t C, int64_t seg, double amp) {
    *m = (MoeWeights){.n = (size_t)(E * R * C), .R = R, .C = C, .seg = seg, .rbs = (seg + 127) / 128, .cb = (C + 127) / 128, .t = t, .sc = sc};
    m->ns = t != TILE_F8E4M3 ? 0 : sc == TILE_MOE_SCALES_CHANNEL ? (size_t)(E * R) : (size_t)(E * (R / seg) * m->rbs * m->cb);
    m->w = malloc(m->n * (t == TILE_F8E4M3 ? 1 : 2));
    m->s = malloc(sizeof(float) * (m->ns ? m->ns : 1));
    if (!m->w || !m->s) return 3;
    if (t != TILE_F8E4M3) {
        for (size_t i = 0; i < m->n; i++) dt_fill(t, m->w, i, urand() * amp);
        return 0;
    }
    for (size_t i = 0; i < m->ns; i++) m->s[i] = (float)(amp / 448 * (1 + 0.5 * urand()));
    uint8_t *q = m->w;
    for (size_t i = 0; i < m->n; i++) {
        uint8_t c;
        do {
            urand();
            c = (uint8_t)(rng >> 24);
        } while ((c & 0x7f) == 0x7f); /* NaN */
        q[i] = c;
    }
    return 0;
}

/* dequantized weight [e, r, c] */
static double moe_weight(const MoeWeights *m, int64_t e, int64_t r, int64_t c) {
    size_t i = (size_t)((e * m->R + r) * m->C + c);
    if (m->t != TILE_F8E4M3) return dt_get(m->t, m->w, i);
    size_t si = m->sc == TILE_MOE_SCALES_CHANNEL
                    ? (size_t)(e * m->R + r)
                    : (size_t)(((e * (m->R / m->seg) + r / m->seg) * m->rbs + r % m->seg / 128) * m->cb + c / 128);
    return e4m3_value(((const uint8_t *)m->w)[i]) * (double)m->s[si];
}

static void moe_weights_free(MoeWeights *m) { free(m->w), free(m->s); }

static int run_moe_cli(int argc, char **argv) {
    MoeCli p;
    int rc = moe_cli_parse(argc, argv, &p);
    if (rc) return rc;
    int64_t T = p.tokens, E = p.experts, K = p.topk, H = p.hidden, I = p.inter;
    size_t nx = (size_t)(T * H), nl = (size_t)(T * E), no = (size_t)(T * H), ns = (size_t)(T * K);
    uint16_t *hx = malloc(nx * 2);
    float *hl = malloc(sizeof(float) * nl), *ho = malloc(sizeof(float) * no);
    int32_t *ids = malloc(sizeof(int32_t) * ns);
    double *vx = malloc(sizeof(double) * nx), *hv = malloc(sizeof(double) * (size_t)I);
    MoeWeights w1, w2;
    if (!hx || !hl || !ho || !ids || !vx || !hv || moe_weights_make(&w1, p.w, p.scales, E, 2 * I, H, I, 2 / sqrt((double)H)) ||
        moe_weights_make(&w2, p.w, p.scales, E, H, I, H, 2 / sqrt((double)I)))
        return fprintf(stderr, "tile: out of host memory\n"), 3;
    for (size_t i = 0; i < nx; i++) vx[i] = dt_fill(p.act, hx, i, urand());
    for (size_t i = 0; i < nl; i++) hl[i] = (float)(urand() * 2);
    tile_context *ctx;
    tile_status st = tile_context_create(p.device, &ctx);
    if (st != TILE_OK) return fprintf(stderr, "tile: cannot open device '%s': %s\n", p.device ? p.device : "default", tile_status_string(st)), 3;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    size_t wb = p.w == TILE_F8E4M3 ? 1 : 2;
    /* Mixtral-style routing: softmax over the logits, top-k, renormalized */
    tile_moe_args a = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = p.act, .weight_dtype = p.w,
                       .scales = p.scales, .logits_dtype = TILE_F32, .scoring = TILE_MOE_SOFTMAX, .renormalize = 1};
    size_t ws = 0;
    if ((st = tile_moe_workspace_size(&a, &ws)) != TILE_OK)
        return fprintf(stderr, "tile: these sizes are not supported (tile_moe_workspace_size)\n"), tile_context_destroy(ctx), 3;
    if (tile_malloc(ctx, nx * 2, &a.x) || tile_malloc(ctx, w1.n * wb, &a.w1) || tile_malloc(ctx, w2.n * wb, &a.w2) ||
        tile_malloc(ctx, no * 4, &a.out) || tile_malloc(ctx, nl * 4, &a.router_logits) || tile_malloc(ctx, ns * 4, &a.topk_ids) ||
        tile_malloc(ctx, ns * 4, &a.topk_weights) || tile_malloc(ctx, ws, &a.workspace) || tile_memcpy_htod(ctx, a.x, hx, nx * 2) ||
        tile_memcpy_htod(ctx, a.w1, w1.w, w1.n * wb) || tile_memcpy_htod(ctx, a.w2, w2.w, w2.n * wb) ||
        tile_memcpy_htod(ctx, a.router_logits, hl, nl * 4) ||
        (w1.ns && (tile_malloc(ctx, w1.ns * 4, &a.w1_scale) || tile_malloc(ctx, w2.ns * 4, &a.w2_scale) ||
                   tile_memcpy_htod(ctx, a.w1_scale, w1.s, w1.ns * 4) || tile_memcpy_htod(ctx, a.w2_scale, w2.s, w2.ns * 4))))
        return fprintf(stderr, "tile: %s\n", tile_last_error(ctx)), tile_context_destroy(ctx), 3;
    a.workspace_bytes = ws;
    double t0 = now_s();
    st = tile_moe_forward(ctx, &a);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double first = now_s() - t0;
    if (st != TILE_OK) return fprintf(stderr, "tile: tile_moe_forward failed: %s\n", tile_last_error(ctx)), tile_context_destroy(ctx), 3;
    tile_memcpy_dtoh(ctx, ho, a.out, no * 4);
    tile_memcpy_dtoh(ctx, ids, a.topk_ids, ns * 4);
    /* the reference on at most --check-tokens tokens spread over the batch: the routing must be a
     * top-k of the logits (ties are improbable with random logits), its weights the renormalized
     * softmax, and the output the float64 forward from the (dequantized) weights */
    int64_t step = (T + p.check_tokens - 1) / p.check_tokens, checked = 0;
    double worst = 0, rnd = p.act == TILE_F16 ? 1.0 / 2048 : 1.0 / 256;
    int routing_ok = 1;
    for (int64_t t = 0; t < T; t += step, checked++) {
        const float *l = hl + t * E;
        double mx = -INFINITY, wsum = 0, wt[8];
        for (int64_t j = 0; j < K; j++) {
            int32_t e = ids[t * K + j];
            if (e < 0 || e >= E) {
                routing_ok = 0;
                continue;
            }
            for (int64_t f = 0; f < E; f++) {
                int chosen = 0;
                for (int64_t q = 0; q < K; q++) chosen |= ids[t * K + q] == f;
                if (!chosen && l[f] > l[e]) routing_ok = 0;
            }
        }
        if (!routing_ok) break;
        for (int64_t j = 0; j < K; j++) mx = fmax(mx, l[ids[t * K + j]]);
        for (int64_t j = 0; j < K; j++) wsum += wt[j] = exp((double)l[ids[t * K + j]] - mx);
        double *want = calloc((size_t)H, sizeof(double)), *mag = calloc((size_t)H, sizeof(double));
        for (int64_t j = 0; j < K; j++) {
            int32_t e = ids[t * K + j];
            for (int64_t i = 0; i < I; i++) {
                double g = 0, u = 0;
                for (int64_t k = 0; k < H; k++) g += vx[t * H + k] * moe_weight(&w1, e, i, k), u += vx[t * H + k] * moe_weight(&w1, e, I + i, k);
                hv[i] = g / (1 + exp(-g)) * u;
            }
            for (int64_t c = 0; c < H; c++) {
                double acc = 0, m = 0;
                for (int64_t i = 0; i < I; i++) {
                    double x = hv[i] * moe_weight(&w2, e, c, i);
                    acc += x, m += fabs(x);
                }
                want[c] += wt[j] / wsum * acc, mag[c] += wt[j] / wsum * m;
            }
        }
        for (int64_t c = 0; c < H; c++) {
            double e = fabs(ho[t * H + c] - want[c]) / ((rnd + 3e-5) * mag[c] + 1e-6);
            if (!(e <= worst)) worst = e;
        }
        free(want), free(mag);
    }
    if (!routing_ok) worst = INFINITY;
    double *ts = calloc((size_t)p.reps, sizeof(double));
    for (int r = 0; r < p.reps && st == TILE_OK; r++) {
        double t1 = now_s();
        st = tile_moe_forward(ctx, &a);
        if (st == TILE_OK) st = tile_synchronize(ctx);
        ts[r] = now_s() - t1;
    }
    double med = attn_median(ts, p.reps), flops = 2.0 * (double)T * K * 3 * H * I;
    static const char *const sn[] = {"", ", per-channel scales", ", 128x128 block scales"};
    printf("moe tokens %lld experts %lld top-%lld hidden %lld inter %lld, x %s, weights %s%s on %s (%s)\n", (long long)T, (long long)E,
           (long long)K, (long long)H, (long long)I, p.act == TILE_F16 ? "f16" : "bf16",
           p.w == TILE_F8E4M3 ? "f8e4m3" : p.w == TILE_F16 ? "f16" : "bf16", sn[p.scales], props.name, props.arch);
    printf("  first call  %.3f ms (compile or cache load included)\n", first * 1e3);
    printf("  next calls  %.3f ms median of %d (%.2f TFLOP/s in the expert GEMMs%s)\n", med * 1e3, p.reps, flops / med * 1e-12,
           props.is_emulator ? "; the emulator's timings mean nothing" : "");
    if (!routing_ok) printf("  check       routing is not a top-%lld of the logits: MISMATCH\n", (long long)K);
    else
        printf("  check       %lld tokens against a float64 reference: max error %.3g of tolerance: %s\n", (long long)checked, worst,
               worst <= 1 ? "ok" : "MISMATCH");
    tile_devptr bufs[] = {a.x, a.w1, a.w2, a.out, a.router_logits, a.topk_ids, a.topk_weights, a.workspace, a.w1_scale, a.w2_scale};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) tile_free(ctx, bufs[i]);
    free(ts), free(hx), free(hl), free(ho), free(ids), free(vx), free(hv);
    moe_weights_free(&w1), moe_weights_free(&w2);
    tile_context_destroy(ctx);
    return st != TILE_OK ? 3 : worst <= 1 ? 0 : 3;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "compile")) return cmd_compile(argc - 2, argv + 2);
    if (!strcmp(argv[1], "cache")) return cmd_cache(argc - 2, argv + 2);
    if (!strcmp(argv[1], "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(argv[1], "tune")) return cmd_tune(argc - 2, argv + 2);
    if (!strcmp(argv[1], "aot")) return cmd_aot(argc - 2, argv + 2);
    fprintf(stderr, "tile: unknown command '%s'\n", argv[1]);
    fputs(usage_main, stderr);
    return 2;
}

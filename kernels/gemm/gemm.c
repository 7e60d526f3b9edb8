/* gemm.c - tile_gemm: the shipped GEMM (kernels/gemm/gemm.tile) behind one call.
 *
 *   1. Check the arguments before anything reaches the device: the type
 *      pair has a kernel; sizes are non-negative and fit the kernel's i32
 *      arithmetic; leading dimensions cover a row; every pointer lies in an
 *      allocation of this context with room for the whole operand.
 *   2. Choose the configuration: the caller's (tile_gemm_with_config), the
 *      tuning database's winner for (kernel, device, power-of-two bucket of
 *      m, n, k), or the kernel's defaults.  The epilogue becomes defines
 *      (HAS_BETA, HAS_BIAS, ACT).  SPLIT_K > 1 adds partial tiles with
 *      atomics, so it is used only where that is exact: f32 output, no beta,
 *      bias or activation, C contiguous (zeroed first).
 *   3. Specialize run-time arguments from their actual values, as Triton
 *      does: a stride of 1 (row-major A: sak=1) or sizes and strides
 *      divisible by 16 (m=16; sizes only when all leading dimensions are);
 *      pointers not 16-byte aligned turn off the alignment assumption.
 *   4. The variant (kernel, defines, specializations) is looked up in the
 *      context's table; a miss compiles it through the caches (memory, disk,
 *      compiler) and keeps the kernel.
 *   5. Launch with grid (cdiv(m, BM) * cdiv(n, BN), SPLIT_K) and the block
 *      the kernel's num_warps gives. */
#include "jit/jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Variant {
    char *key;
    tile_kernel *kernel;
    tile_module *mod;
    int bm, bn;
} Variant;

typedef struct TunedBucket {
    char kernel[32];
    char bucket[96];
    char config[256]; /* "" when the database has none */
} TunedBucket;

typedef struct GemmState {
    Variant *v;
    int nv, capv;
    TunedBucket *tb;
    int ntb, captb;
    char ids[6][33]; /* kernel ids for the tuning database, by type pair; "" until computed */
    tile_gemm_info last;
} GemmState;

static void gemm_state_free(void *p) {
    GemmState *g = p;
    if (!g) return;
    for (int i = 0; i < g->nv; i++) free(g->v[i].key); /* modules go with the context */
    free(g->v);
    free(g->tb);
    free(g);
}

const char *tile_gemm_source_path(void) {
    static const char *src = TILE_SOURCE_DIR "/kernels/gemm/gemm.tile";
    return access(src, R_OK) == 0 ? src : TILE_KERNELS_INSTALL_DIR "/gemm/gemm.tile";
}

typedef struct Pair {
    tile_dtype in, out;
    const char *kernel;
    int in_bytes, out_bytes;
} Pair;

static const Pair pairs[] = {
    {TILE_F16, TILE_F32, "gemm_f16_f32", 2, 4},     {TILE_F16, TILE_F16, "gemm_f16_f16", 2, 2},
    {TILE_BF16, TILE_F32, "gemm_bf16_f32", 2, 4},   {TILE_BF16, TILE_BF16, "gemm_bf16_bf16", 2, 2},
    {TILE_F32, TILE_F32, "gemm_tf32_f32", 4, 4},    {TILE_I8, TILE_I32, "gemm_i8_i32", 1, 4},
};

static const char *dtype_str(tile_dtype t) {
    static const char *const n[] = {"f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i8", "i32"};
    return (unsigned)t < ARRAY_LEN(n) ? n[t] : "unknown";
}

/* rows x cols row-major with leading dimension ld: bytes spanned, or -1 when i32 offsets overflow */
static int64_t span(int64_t rows, int64_t cols, int64_t ld, int esize) {
    if (rows == 0 || cols == 0) return 0;
    int64_t last = (rows - 1) * ld + cols; /* rows, cols, ld < 2^31: no int64 overflow */
    return last > INT32_MAX ? -1 : last * esize;
}

static tile_status check_operand(tile_context *ctx, const char *name, tile_devptr p, int64_t rows, int64_t cols, int64_t ld,
                                 int esize, const char *shape) {
    if (ld < (cols > 0 ? cols : 1))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: ld%s = %lld is less than the %lld columns of %s (%s)", name,
                       (long long)ld, (long long)cols, name, shape);
    if (ld > INT32_MAX) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: ld%s = %lld does not fit in 32 bits", name, (long long)ld);
    int64_t bytes = span(rows, cols, ld, esize);
    if (bytes < 0)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: %s (%lld x %lld, ld %lld) has more than 2^31 elements", name,
                       (long long)rows, (long long)cols, (long long)ld);
    if (bytes == 0) return TILE_OK;
    char what[32];
    snprintf(what, sizeof what, "tile_gemm: %s", name);
    return rt_check_range(ctx, p, (uint64_t)bytes, what);
}

static int config_int(const char *const *cfg, const char *name, int dflt) {
    size_t n = strlen(name);
    for (; cfg && *cfg; cfg++)
        if (!strncmp(*cfg, name, n) && (*cfg)[n] == '=') return atoi(*cfg + n + 1);
    return dflt;
}

/* Split "BM=64 BN=128 ..." into words in buf; returns a NULL-terminated list in out (max n-1). */
static int split_words(char *buf, const char **out, int n) {
    int k = 0;
    for (char *p = strtok(buf, " "); p && k < n - 1; p = strtok(NULL, " ")) out[k++] = p;
    out[k] = NULL;
    return k;
}

/* The tuned configuration for this kernel and shape, from the database (cached per bucket). */
static const char *tuned_config(tile_context *ctx, GemmState *g, int pair, const tile_gemm_args *a) {
    const char *dir = rt_cache_dir(ctx);
    if (!dir) return NULL;
    char bucket[96];
    snprintf(bucket, sizeof bucket, "m=%lld,n=%lld,k=%lld", (long long)tile_tune_bucket(a->m), (long long)tile_tune_bucket(a->n),
             (long long)tile_tune_bucket(a->k));
    const char *kn = pairs[pair].kernel;
    for (int i = 0; i < g->ntb; i++)
        if (!strcmp(g->tb[i].kernel, kn) && !strcmp(g->tb[i].bucket, bucket)) return g->tb[i].config[0] ? g->tb[i].config : NULL;
    if (!g->ids[pair][0] && tile_kernel_id_file(tile_gemm_source_path(), kn, g->ids[pair]) != TILE_OK) return NULL;
    if (g->ntb == g->captb) {
        g->captb = g->captb ? g->captb * 2 : 16;
        g->tb = realloc(g->tb, sizeof *g->tb * (size_t)g->captb);
        if (!g->tb) unreachable("out of memory");
    }
    TunedBucket *t = &g->tb[g->ntb++];
    snprintf(t->kernel, sizeof t->kernel, "%s", kn);
    snprintf(t->bucket, sizeof t->bucket, "%s", bucket);
    if (tile_tune_lookup(dir, g->ids[pair], rt_device_key(ctx), bucket, t->config, sizeof t->config) != TILE_OK) t->config[0] = 0;
    if (rt_options()->debug_tune)
        rt_debug("tune", "%s %s on %s: %s", kn, bucket, rt_device_key(ctx), t->config[0] ? t->config : "not tuned, defaults");
    return t->config[0] ? t->config : NULL;
}

static void add_spec(const char **specs, int *ns, char (*buf)[24], const char *name, int64_t v) {
    if (v == 1) snprintf(buf[*ns], 24, "%s=1", name);
    else if (v % 16 == 0) snprintf(buf[*ns], 24, "%s=16", name);
    else return;
    specs[*ns] = buf[*ns];
    (*ns)++;
}

tile_status tile_gemm_with_config(tile_context *ctx, const tile_gemm_args *a, const char *const *config) {
    if (!ctx) return TILE_ERROR_INVALID_VALUE;
    tile_device_properties props;
    if (tile_context_get_properties(ctx, &props) != TILE_OK) return TILE_ERROR_INVALID_VALUE;
    if (!a) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: args is NULL");

    /* 1. arguments */
    int pair = -1;
    for (int i = 0; i < (int)ARRAY_LEN(pairs); i++)
        if (pairs[i].in == a->in_dtype && pairs[i].out == a->out_dtype) pair = i;
    if (pair < 0)
        return rt_fail(ctx, TILE_ERROR_UNSUPPORTED,
                       "tile_gemm: no kernel for %s inputs with %s output (supported: f16->f32, f16->f16, bf16->f32, bf16->bf16, "
                       "f32->f32 (tf32), i8->i32)",
                       dtype_str(a->in_dtype), dtype_str(a->out_dtype));
    if (a->m < 0 || a->n < 0 || a->k < 0)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: negative size m=%lld n=%lld k=%lld", (long long)a->m,
                       (long long)a->n, (long long)a->k);
    if (a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: m=%lld n=%lld k=%lld: sizes must fit in 32 bits", (long long)a->m,
                       (long long)a->n, (long long)a->k);
    if ((unsigned)a->activation > TILE_ACT_SILU)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: unknown activation %d", (int)a->activation);
    void *dstream;
    tile_status sst = rt_check_stream(ctx, a->stream, "tile_gemm", &dstream);
    if (sst != TILE_OK) return sst;
    if (a->m == 0 || a->n == 0) return TILE_OK;
    const Pair *pr = &pairs[pair];
    int64_t arows = a->trans_a ? a->k : a->m, acols = a->trans_a ? a->m : a->k;
    int64_t brows = a->trans_b ? a->n : a->k, bcols = a->trans_b ? a->k : a->n;
    tile_status st;
    if ((st = check_operand(ctx, "A", a->a, arows, acols, a->lda, pr->in_bytes, a->trans_a ? "k x m, trans_a" : "m x k")) ||
        (st = check_operand(ctx, "B", a->b, brows, bcols, a->ldb, pr->in_bytes, a->trans_b ? "n x k, trans_b" : "k x n")) ||
        (st = check_operand(ctx, "C", a->c, a->m, a->n, a->ldc, pr->out_bytes, "m x n")))
        return st;
    if (a->bias && (st = rt_check_range(ctx, a->bias, (uint64_t)a->n * (uint64_t)pr->out_bytes, "tile_gemm: bias")) != TILE_OK)
        return st;

    rt_lock(ctx);
    GemmState **gp = (GemmState **)rt_attachment_locked(ctx, gemm_state_free, gemm_state_free);
    if (!gp || (!*gp && !(*gp = calloc(1, sizeof **gp)))) {
        rt_unlock(ctx);
        return rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_gemm: out of host memory");
    }
    GemmState *g = *gp;

    /* 2. configuration */
    const char *cfg[24];
    char cfgbuf[256] = "";
    int tuned = 0;
    if (config) {
        int n = 0;
        for (const char *const *p = config; *p && n < 16; p++) cfg[n++] = *p;
        cfg[n] = NULL;
    } else {
        const char *t = tuned_config(ctx, g, pair, a);
        snprintf(cfgbuf, sizeof cfgbuf, "%s", t ? t : "");
        split_words(cfgbuf, cfg, 17);
        tuned = t != NULL;
    }
    int ncfg = 0;
    while (cfg[ncfg]) ncfg++;
    int split_k = config_int(cfg, "SPLIT_K", 1);
    bool split_ok = a->out_dtype == TILE_F32 && a->beta == 0 && !a->bias && a->activation == TILE_ACT_NONE && a->ldc == a->n;
    char extra[4][24];
    int nextra = 0;
    if (split_k > 1 && !split_ok) {
        split_k = 1;
        snprintf(extra[nextra], 24, "SPLIT_K=1");
        cfg[ncfg++] = extra[nextra++]; /* a later define wins */
    }
    if (split_k < 1 || split_k > 64) {
        rt_unlock(ctx);
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: SPLIT_K=%d (1 to 64)", split_k);
    }
    if (a->beta != 0) cfg[ncfg++] = "HAS_BETA=true";
    if (a->bias) cfg[ncfg++] = "HAS_BIAS=true";
    if (a->activation) snprintf(extra[nextra], 24, "ACT=%d", (int)a->activation), cfg[ncfg++] = extra[nextra++];
    cfg[ncfg] = NULL;

    /* 3. specialization */
    int64_t sam = a->trans_a ? 1 : a->lda, sak = a->trans_a ? a->lda : 1;
    int64_t sbk = a->trans_b ? 1 : a->ldb, sbn = a->trans_b ? a->ldb : 1;
    const char *specs[12];
    char specbuf[12][24];
    int ns = 0;
    add_spec(specs, &ns, specbuf, "sam", sam);
    add_spec(specs, &ns, specbuf, "sak", sak);
    add_spec(specs, &ns, specbuf, "sbk", sbk);
    add_spec(specs, &ns, specbuf, "sbn", sbn);
    add_spec(specs, &ns, specbuf, "scm", a->ldc);
    /* sizes too: the compiler's alignment analysis keeps an odd leading dimension's rows scalar */
    if (a->m % 16 == 0) add_spec(specs, &ns, specbuf, "m", a->m);
    if (a->n % 16 == 0) add_spec(specs, &ns, specbuf, "n", a->n);
    if (a->k % 16 == 0 && a->k) add_spec(specs, &ns, specbuf, "k", a->k);
    specs[ns] = NULL;
    int no_align = ((a->a | a->b | a->c | a->bias) & 15) != 0;

    /* 4. the variant */
    Str key = {0};
    str_printf(&key, "%s|", pr->kernel);
    for (int i = 0; cfg[i]; i++) str_printf(&key, "%s ", cfg[i]);
    str_puts(&key, "|");
    for (int i = 0; specs[i]; i++) str_printf(&key, "%s ", specs[i]);
    str_printf(&key, "|%d", no_align);
    Variant *v = NULL;
    for (int i = 0; i < g->nv && !v; i++)
        if (!strcmp(g->v[i].key, key.buf)) v = &g->v[i];
    int source = 0;
    if (!v) {
        tile_compile_options o = {.kernel = pr->kernel, .defines = cfg, .specialize = specs, .no_align_ptrs = no_align};
        tile_module *mod;
        st = jit_load_file_locked(ctx, tile_gemm_source_path(), &o, &mod, &source);
        tile_kernel *k = NULL;
        if (st == TILE_OK) {
            rt_unlock(ctx); /* get_kernel takes the lock */
            st = tile_module_get_kernel(mod, pr->kernel, &k);
            rt_lock(ctx);
        }
        if (st != TILE_OK) {
            rt_unlock(ctx);
            str_free(&key);
            return st;
        }
        if (g->nv == g->capv) {
            g->capv = g->capv ? g->capv * 2 : 8;
            g->v = realloc(g->v, sizeof *g->v * (size_t)g->capv);
            if (!g->v) unreachable("out of memory");
        }
        v = &g->v[g->nv++];
        *v = (Variant){str_take(&key), k, mod, config_int(cfg, "BM", 128), config_int(cfg, "BN", 128)};
        if (rt_options()->debug_launch)
            rt_debug("launch", "tile_gemm variant %s: %s", v->key, source == 1 ? "from the disk cache" : source == 2 ? "compiled" : "loaded");
    }
    str_free(&key);
    tile_kernel *kern = v->kernel;
    int bm = v->bm, bn = v->bn;
    tile_kernel_attributes ka;
    tile_kernel_get_attributes(kern, &ka);
    int64_t gx = ((a->m + bm - 1) / bm) * ((a->n + bn - 1) / bn);
    tile_gemm_info *info = &g->last;
    memset(info, 0, sizeof *info);
    snprintf(info->kernel, sizeof info->kernel, "%s", pr->kernel);
    Str cs = {0};
    for (int i = 0; cfg[i]; i++) str_printf(&cs, "%s%s", i ? " " : "", cfg[i]);
    if (!cs.buf || !strstr(cs.buf, "num_warps=")) str_printf(&cs, "%snum_warps=%d", cs.len ? " " : "", ka.num_warps);
    if (!strstr(cs.buf, "num_stages=")) str_printf(&cs, " num_stages=%d", ka.num_stages);
    snprintf(info->config, sizeof info->config, "%s", cs.buf);
    str_free(&cs);
    Str ss = {0};
    for (int i = 0; specs[i]; i++) str_printf(&ss, "%s%s", i ? " " : "", specs[i]);
    snprintf(info->specialize, sizeof info->specialize, "%s", ss.buf ? ss.buf : "");
    str_free(&ss);
    info->tuned = tuned;
    info->source = source;
    info->grid = (tile_dim3){(unsigned)gx, (unsigned)split_k, 1};
    info->block = (tile_dim3){ka.block_threads, 1, 1};
    rt_unlock(ctx);
    if (gx > INT32_MAX) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm: %lld output tiles: too many programs", (long long)gx);

    /* 5. launch */
    if (split_k > 1 && (st = tile_memset_async(ctx, a->c, 0, (size_t)(a->m * a->n) * (size_t)pr->out_bytes, a->stream)) != TILE_OK)
        return st;
    int32_t m = (int32_t)a->m, n = (int32_t)a->n, k = (int32_t)a->k;
    int32_t s_am = (int32_t)sam, s_ak = (int32_t)sak, s_bk = (int32_t)sbk, s_bn = (int32_t)sbn, s_cm = (int32_t)a->ldc;
    float alpha = a->alpha, beta = a->beta;
    tile_devptr pa = a->a, pb = a->b, pc = a->c, pbias = a->bias ? a->bias : a->c;
    void *params[] = {&pa, &pb, &pc, &pbias, &m, &n, &k, &s_am, &s_ak, &s_bk, &s_bn, &s_cm, &alpha, &beta};
    return tile_launch(kern, info->grid, params, a->stream);
}

tile_status tile_gemm(tile_context *ctx, const tile_gemm_args *args) { return tile_gemm_with_config(ctx, args, NULL); }

tile_status tile_gemm_last_info(tile_context *ctx, tile_gemm_info *out) {
    tile_device_properties props;
    if (!ctx || tile_context_get_properties(ctx, &props) != TILE_OK) return TILE_ERROR_INVALID_VALUE;
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm_last_info: out is NULL");
    rt_lock(ctx);
    GemmState **gp = (GemmState **)rt_attachment_locked(ctx, gemm_state_free, gemm_state_free);
    GemmState *g = gp ? *gp : NULL;
    tile_status st = TILE_OK;
    if (g) *out = g->last;
    else st = rt_fail(ctx, TILE_ERROR_NOT_FOUND, "tile_gemm_last_info: no tile_gemm has run on this context");
    rt_unlock(ctx);
    return st;
}

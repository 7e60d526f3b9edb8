/* gemm.c - tile_gemm: the shipped GEMM (kernels/gemm/gemm.tile) behind one call.
 *
 * What it launches: one kernel per type pair, gemm_f16_f32, gemm_f16_f16,
 * gemm_bf16_f32, gemm_bf16_bf16, gemm_tf32_f32 (f32 in and out) or
 * gemm_i8_i32, with grid (cdiv(m, BM) * cdiv(n, BN), SPLIT_K) and the
 * block its num_warps gives (with PERSISTENT, the grid's first axis is at most
 * the multiprocessor count: each program loops over tiles); before it, with
 * SPLIT_K > 1, a memset of C.  On sm_90a, without a caller's configuration:
 * warp_specialize=1 and, without split-K or block scales, PERSISTENT=1.
 * Its variants: the configuration's defines (BM, BN, BK, GROUP_M, SPLIT_K,
 * num_warps, num_stages: the caller's, the tuning database's or a default),
 * then SPLIT_K=1 when split-K is not exact, HAS_BETA=true, HAS_BIAS=true,
 * ACT=<activation>; specializations sam, sak, sbk, sbn, scm (=1 or =16)
 * and m, n, k (=16); no_align_ptrs when A, B, C or bias is not 16-byte
 * aligned.
 *
 *   1. Check the arguments before anything reaches the device: the type
 *      pair has a kernel; sizes are non-negative and fit the kernel's i32
 *      arithmetic; leading dimensions cover a row; every pointer lies in an
 *      allocation of this context with room for the whole operand.
 *   2. Choose the configuration: the caller's (tile_gemm_with_config, used
 *      as given), else when both operands are read in 16-byte vectors
 *      (gemm_vectorized) the tuning database's winner for (kernel, device,
 *      power-of-two bucket of m, n, k) or the vector default (the first
 *      @config), else the scalar default (the kernel's const defaults: the
 *      @config tiles spill when every element keeps its own address), and
 *      the scalar default too where the chosen tile's accumulator leaves no
 *      registers for beta * C or an activation (epilogue_fits); each reason
 *      is logged under TILE_DEBUG=launch.  Block scales (TILE_SCALE_BLOCK)
 *      take their own defaults (block_*_config) and need BN and BK dividing
 *      128 in the caller's.  The epilogue becomes defines
 *      (HAS_BETA, HAS_BIAS, ACT).  SPLIT_K > 1 adds partial tiles with
 *      atomics, so it is used only where that is exact: f32 output, no beta,
 *      bias or activation, C contiguous (zeroed first).
 *   3. Specialize run-time arguments from their actual values, as Triton
 *      does: a stride of 1 (row-major A: sak=1) or sizes and strides
 *      divisible by 16 (m=16); pointers not 16-byte aligned turn off the
 *      alignment assumption.
 *   4. The variant comes from the context's table (kernels/shipped.h); a
 *      miss compiles it through the caches (memory, disk, compiler).
 *   5. Record what was chosen for tile_gemm_last_info, then launch.
 * tile_gemm_prepare runs steps 1-4 without reading a pointer (only whether
 * each is 16-byte aligned) and stops before step 5, so a later tile_gemm
 * with the same args finds its variant and tuned configuration in the
 * context's tables: no file, compiler or module load (graph capture).
 * The context keeps, in a GemmState attached to it, the tuning database's
 * answers per shape bucket and the last call's tile_gemm_info. */
#include "kernels/shipped.h"
#include "runtime/rt.h"
#include "support/target.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TunedBucket {
    char kernel[32];
    char bucket[96];
    char config[256]; /* "" when the database has none */
} TunedBucket;

typedef struct GemmState {
    TunedBucket *tb;
    int ntb, captb;
    tile_gemm_info last;
} GemmState;

static const char gemm_tag; /* its address tags the attachment */

static void gemm_state_free(void *p) {
    GemmState *g = p;
    if (!g) return;
    free(g->tb);
    free(g);
}

/* The context's GemmState, made the first time (NULL: out of memory); lock held. */
static GemmState *gemm_state_locked(tile_context *ctx, bool make) {
    GemmState **gp = (GemmState **)rt_attachment_locked(ctx, &gemm_tag, gemm_state_free);
    if (gp && !*gp && make) *gp = calloc(1, sizeof **gp);
    return gp ? *gp : NULL;
}

/* shipped_source_path's answer for gemm.tile, for callers that get no
 * buffer.  Global state: the path, written once under pthread_once (the data
 * folders do not change while the process runs), then only read. */
static char gemm_path[4096];
static pthread_once_t gemm_path_once = PTHREAD_ONCE_INIT;

static void gemm_path_find(void) {
    if (!shipped_source_path("gemm/gemm.tile", gemm_path, sizeof gemm_path)) gemm_path[0] = '\0';
}

const char *tile_gemm_source_path(void) {
    pthread_once(&gemm_path_once, gemm_path_find);
    return gemm_path;
}

/* The two default configurations of a kernel (when neither the caller nor the
 * tuning database gives one; gemm_vectorized chooses):
 *   vector: the first @config of the kernel in gemm.tile, for operands read
 *     in 16-byte vectors (and cp.async copies);
 *   scalar: the kernel's const defaults in gemm.tile, for operands read
 *     element by element.  Then every element of the A and B tiles keeps its
 *     own 64-bit address in registers beside the accumulator, and the vector
 *     tiles spill (ptxas -v: 1.5-4 KB for BM=BN=128 on 4 warps); 8 warps
 *     halve both per thread.
 * Both are written out here so tile_gemm_last_info shows the whole tile;
 * tests/test_kernels.c assembles each at the specializations it goes with
 * and checks that ptxas reports no spills. */
typedef struct Pair {
    tile_dtype in, out;
    const char *kernel;
    const char *vector_config, *scalar_config;
} Pair;

#define VEC_16 "BM=128 BN=128 BK=32 num_warps=4 num_stages=3"
#define SCALAR "BM=128 BN=128 BK=32 num_warps=8 num_stages=3"
static const Pair pairs[] = {
    {TILE_F16, TILE_F32, "gemm_f16_f32", VEC_16, SCALAR},
    {TILE_F16, TILE_F16, "gemm_f16_f16", VEC_16, SCALAR},
    {TILE_BF16, TILE_F32, "gemm_bf16_f32", VEC_16, SCALAR},
    {TILE_BF16, TILE_BF16, "gemm_bf16_bf16", VEC_16, SCALAR},
    {TILE_F32, TILE_F32, "gemm_tf32_f32", "BM=128 BN=128 BK=16 num_warps=8 num_stages=3", "BM=128 BN=128 BK=16 num_warps=8 num_stages=3"},
    {TILE_I8, TILE_I32, "gemm_i8_i32", "BM=128 BN=128 BK=64 num_warps=4 num_stages=3", SCALAR},
    {TILE_F8E4M3, TILE_F32, "gemm_e4m3_f32", VEC_16, SCALAR},
    {TILE_F8E5M2, TILE_F32, "gemm_e5m2_f32", VEC_16, SCALAR},
};
#undef VEC_16
#undef SCALAR

/* The pair's index in pairs[], -1 when tile_gemm has no kernel for it. */
static int find_pair(tile_dtype in, tile_dtype out) {
    for (int i = 0; i < (int)ARRAY_LEN(pairs); i++)
        if (pairs[i].in == in && pairs[i].out == out) return i;
    return -1;
}

const char *tile_gemm_kernel_name(tile_dtype in_dtype, tile_dtype out_dtype) {
    int i = find_pair(in_dtype, out_dtype);
    return i < 0 ? NULL : pairs[i].kernel;
}

/* TILE_SCALE_BLOCK's configurations (gemm.tile's block_scaled_k_loop: BN and BK divide 128), in place
 * of the kernel's: two f32 accumulators (the block's partial product, or a step's fresh dot, beside
 * the scaled sum) want 8 warps at 128 x 128.  ptxas -v, e4m3, both B layouts, beta, bias and GELU:
 * sm_90a 128 x 128 x 128 (one wgmma K block a step, tiles through tensor maps) 174-217 registers;
 * sm_80 128 x 128 x 32, 233-237; element by element 128 x 64 x 32, 194-217 (at 128 x 128 it spills
 * 40-560 B); no spills (tests/test_kernels.c). */
static const char *const block_wgmma_config = "BM=128 BN=128 BK=128 num_warps=8 num_stages=3";
static const char *const block_vector_config = "BM=128 BN=128 BK=32 num_warps=8 num_stages=3";
static const char *const block_scalar_config = "BM=128 BN=64 BK=32 num_warps=8 num_stages=3";

/* Are both operands read in 16-byte vectors?  What the compiler needs to
 * prove it (lower/assign_layout.c), asked conservatively: every pointer
 * 16-byte aligned and m, n, k and both leading dimensions multiples of 16 (a
 * size that is not makes the K tail's or an edge's mask change inside a
 * vector, and the whole loop is laid out for scalar accesses).  When false,
 * *why (of n bytes) says which fact is missing. */
static bool gemm_vectorized(const tile_gemm_args *a, bool no_align_ptrs, char *why, size_t n) {
    const struct {
        const char *name;
        int64_t v;
    } facts[] = {{"m", a->m}, {"n", a->n}, {"k", a->k}, {"lda", a->lda}, {"ldb", a->ldb}};
    if (no_align_ptrs) return snprintf(why, n, "a pointer is not 16-byte aligned"), false;
    for (int i = 0; i < (int)ARRAY_LEN(facts); i++)
        if (facts[i].v % 16) return snprintf(why, n, "%s = %lld is not a multiple of 16", facts[i].name, (long long)facts[i].v), false;
    return true;
}

static const char *dtype_str(tile_dtype t) {
    const char *n = tile_dtype_name(t);
    return n ? n : "unknown";
}

/* rows x cols row-major with leading dimension ld: bytes spanned, or -1 when i32 offsets overflow */
static int64_t span(int64_t rows, int64_t cols, int64_t ld, int esize) {
    if (rows == 0 || cols == 0) return 0;
    int64_t last = (rows - 1) * ld + cols; /* rows, cols, ld < 2^31: no int64 overflow */
    return last > INT32_MAX ? -1 : last * esize;
}

/* sizes always; the pointer only with check_ptr (tile_gemm_prepare reads none); api: the public call, for messages */
static tile_status check_operand(tile_context *ctx, const char *api, const char *name, tile_devptr p, int64_t rows, int64_t cols, int64_t ld,
                                 int esize, const char *shape, bool check_ptr) {
    /* BLAS leading dimensions, as cuBLAS takes them: at least max(1, columns as stored), 0 included (the row strides
     * of the other calls read 0 as contiguous; here it is refused: docs/runtime.md, "tile_gemm") */
    if (ld < (cols > 0 ? cols : 1))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                       cols > 0 ? "%s: ld%s = %lld is less than the %lld columns of %s (%s)%s"
                                : "%s: ld%s = %lld: a leading dimension is at least 1 (%lld columns of %s, %s)%s",
                       api, name, (long long)ld, (long long)cols, name, shape,
                       ld == 0 ? "; tile_gemm's leading dimensions are BLAS ones, 0 does not mean contiguous here" : "");
    if (ld > INT32_MAX) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: ld%s = %lld does not fit in 32 bits", api, name, (long long)ld);
    int64_t bytes = span(rows, cols, ld, esize);
    if (bytes < 0)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s (%lld x %lld, ld %lld) has more than 2^31 elements", api, name,
                       (long long)rows, (long long)cols, (long long)ld);
    if (bytes == 0 || !check_ptr) return TILE_OK;
    return shipped_check_range(ctx, api, p, (uint64_t)esize, (uint64_t)bytes, name);
}

/* The value of the first "name=..." of a define list (may be NULL), else dflt. */
static int config_int(const char *const *cfg, const char *name, int dflt) {
    size_t n = strlen(name);
    for (; cfg && *cfg; cfg++)
        if (!strncmp(*cfg, name, n) && (*cfg)[n] == '=') return !strcmp(*cfg + n + 1, "true") ? 1 : atoi(*cfg + n + 1);
    return dflt;
}

/* The value of "name=..." among the space-separated words of text, else dflt. */
static int words_int(const char *text, const char *name, int dflt) {
    size_t n = strlen(name);
    for (const char *p = text; p && *p;) {
        while (*p == ' ') p++;
        if (!strncmp(p, name, n) && p[n] == '=') return atoi(p + n + 1);
        p += strcspn(p, " ");
    }
    return dflt;
}

/* Does configuration text leave room for the epilogue?  A tile whose accumulator takes 128 registers a
 * thread (BM * BN / (32 * num_warps): BM=BN=128 on 4 warps, 128 x 256 on 8) has none left for beta's C
 * tile or an activation's temporaries: ptxas -v reports 48-336 bytes of spills there.  With wgmma a bias
 * too at BN 256: a thread adds 64 columns of it (72 bytes of spills at 128 x 256 x 32 on 8 warps). */
static bool epilogue_fits(const char *text, const tile_gemm_args *a, bool wgmma) {
    bool heavy = a->beta != 0 || a->activation != TILE_ACT_NONE || (wgmma && a->bias && words_int(text, "BN", 128) > 128);
    if (!heavy) return true;
    int64_t acc = (int64_t)words_int(text, "BM", 128) * words_int(text, "BN", 128) / (32 * words_int(text, "num_warps", 4));
    return acc < 128;
}

/* Each space-separated word of text ("BM=64 BN=128 ...") as a define of v. */
static void define_words(ShippedVariant *v, const char *text) {
    for (const char *p = text;;) {
        while (*p == ' ') p++;
        if (!*p) return;
        const char *e = strchr(p, ' ');
        if (!e) e = p + strlen(p);
        shipped_define_text(v, p, (size_t)(e - p));
        p = e;
    }
}

/* The tuned configuration for this kernel and shape, from the database (cached per bucket); lock held. */
static const char *tuned_config(tile_context *ctx, GemmState *g, int pair, const tile_gemm_args *a) {
    const char *dir = rt_cache_dir(ctx);
    if (!dir) return NULL;
    /* the layout is part of the key (a transposed operand is read along the other axis, so its best tile differs);
     * the plain layout keeps the key records had before transposes were in it, so they still apply to it.  The same
     * text as tile tune gemm's (tools/cmd_tune.c). */
    char bucket[96];
    snprintf(bucket, sizeof bucket, "m=%lld,n=%lld,k=%lld%s%s", (long long)tile_tune_bucket(a->m), (long long)tile_tune_bucket(a->n),
             (long long)tile_tune_bucket(a->k), a->trans_a ? ",trans_a=1" : "", a->trans_b ? ",trans_b=1" : "");
    const char *kn = pairs[pair].kernel;
    for (int i = 0; i < g->ntb; i++)
        if (!strcmp(g->tb[i].kernel, kn) && !strcmp(g->tb[i].bucket, bucket)) return g->tb[i].config[0] ? g->tb[i].config : NULL;
    if (g->ntb == g->captb) {
        int cap = g->captb ? g->captb * 2 : 16;
        TunedBucket *tb = realloc(g->tb, sizeof *g->tb * (size_t)cap);
        if (!tb) return NULL; /* out of memory: the defaults, untuned */
        g->tb = tb, g->captb = cap;
    }
    TunedBucket *t = &g->tb[g->ntb++];
    snprintf(t->kernel, sizeof t->kernel, "%s", kn);
    snprintf(t->bucket, sizeof t->bucket, "%s", bucket);
    /* by source and kernel, so a record outside the kernel's @config space is refused */
    if (tile_tune_lookup_file(dir, tile_gemm_source_path(), kn, rt_device_key(ctx), bucket, t->config, sizeof t->config) != TILE_OK)
        t->config[0] = 0;
    if (rt_options()->debug_tune)
        rt_debug("tune", "%s %s on %s: %s", kn, bucket, rt_device_key(ctx), t->config[0] ? t->config : "not tuned, defaults");
    return t->config[0] ? t->config : NULL;
}

/* The call, or with launch false its preparation (tile_gemm_prepare): steps 2-4 without the pointer checks of
 * step 1 or the launch. */
/* tile_gemm_args as the first release with size fields laid it out: keep this value when fields are appended. */
enum { GEMM_ARGS_SIZE_0_1 = offsetof(tile_gemm_args, a_scale) };

/* tile_gemm_with_config's configuration, on its own: known knobs as NAME=VALUE with a value, none twice, FAST_ACCUM
 * for f8 inputs only, SPLIT_K and GROUP_M in range.  Checked before anything else is, so that a call with nothing to
 * compute (m or n 0) refuses a bad configuration as every other call does. */
static tile_status check_config(tile_context *ctx, const char *const *config, tile_dtype in_dtype, bool f8) { /* tile_gemm_with_config's */
    /* the tile and launch knobs only: the epilogue (ACT, HAS_BETA, HAS_BIAS, SCALE) is the arguments' */
    static const char *const knobs[] = {"BM", "BN", "BK", "GROUP_M", "SPLIT_K", "PERSISTENT", "num_warps", "num_stages",
                                        "warp_specialize", "FAST_ACCUM"};
    /* each knob's range, so that a value outside it (BM=-64) is the caller's error naming it, not the kernel's
     * failure to compile: tiles up to 1024 (the compiler refuses what is no power of two, or what does not fit),
     * up to 32 warps (1024 threads), a flag 0 or 1 (true, false) */
    static const int64_t lo[] = {1, 1, 1, 1, 1, 0, 1, 1, 0, 0}, hi[] = {1024, 1024, 1024, 65535, 64, 1, 32, 16, 1, 1};
    _Static_assert(ARRAY_LEN(lo) == ARRAY_LEN(knobs) && ARRAY_LEN(hi) == ARRAY_LEN(knobs), "a range per knob");
    for (const char *const *p = config; p && *p; p++) {
        const char *eq = strchr(*p, '=');
        size_t nl = eq ? (size_t)(eq - *p) : strlen(*p), k = 0;
        while (k < ARRAY_LEN(knobs) && (strlen(knobs[k]) != nl || memcmp(knobs[k], *p, nl))) k++;
        if (!eq || k == ARRAY_LEN(knobs))
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                           "tile_gemm_with_config: \"%.200s\" is not a configuration NAME=VALUE of BM, BN, BK, GROUP_M, SPLIT_K, "
                           "PERSISTENT, num_warps, num_stages, warp_specialize or FAST_ACCUM (the epilogue comes from the "
                           "arguments)", *p);
        if (!eq[1]) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm_with_config: \"%s\" has no value", *p);
        for (const char *const *q = config; q < p; q++) /* a name given twice: refused, as the tuning database does */
            if (!strncmp(*q, *p, nl + 1))
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm_with_config: %s is set twice (\"%s\", \"%s\")", knobs[k],
                               *q, *p);
        if (!strcmp(knobs[k], "FAST_ACCUM") && !f8)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm_with_config: FAST_ACCUM applies to f8 inputs, not %s",
                           dtype_str(in_dtype));
        /* the value: an integer in the knob's range (a SPLIT_K out of range is the caller's error whatever the
         * epilogue, checked before gemm_run's fallback to 1; GROUP_M 0 divided by zero) */
        const char *val = eq + 1;
        bool flag = hi[k] == 1 && (!strcmp(val, "true") || !strcmp(val, "false"));
        char *end;
        errno = 0;
        long long x = flag ? !strcmp(val, "true") : strtoll(val, &end, 10);
        if (!flag && (*end || errno || isspace((unsigned char)*val)))
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm_with_config: %.200s: %s is not an integer (%lld to %lld)", *p,
                           knobs[k], (long long)lo[k], (long long)hi[k]);
        if (x < lo[k] || x > hi[k])
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm_with_config: %.200s (%lld to %lld)", *p, (long long)lo[k],
                           (long long)hi[k]);
    }
    return TILE_OK;
}

/* A call with nothing to compute (m or n 0) launches nothing, but a configuration it is given is the caller's and is
 * checked as a call with work checks it: by the compiler, the kernel built to Tile IR only (no LLVM: milliseconds)
 * with the configuration and the epilogue's defines, so a value the kernel refuses (BM=96, num_warps=3, BM=abc) is
 * the same error whatever the sizes.  Specializations follow from sizes and pointers and are left out. */
static tile_status gemm_config_compiles(tile_context *ctx, const char *api, const char *kernel, const tile_gemm_args *a,
                                        const char *const *config) {
    ShippedVariant v = shipped_variant(kernel);
    for (const char *const *p = config; *p; p++) shipped_define_text(&v, *p, strlen(*p));
    if (a->beta != 0) shipped_flag(&v, "HAS_BETA", true);
    if (a->bias) shipped_flag(&v, "HAS_BIAS", true);
    if (a->activation) shipped_define(&v, "ACT", (long long)a->activation);
    if (a->scale_mode) shipped_define(&v, "SCALE", a->scale_mode);
    tile_status st = TILE_OK;
    int bn = config_int(v.defines, "BN", 128), bk = config_int(v.defines, "BK", 32);
    char path[1024];
    if (a->scale_mode == TILE_SCALE_BLOCK && (bn <= 0 || bk <= 0 || 128 % bn || 128 % bk))
        st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: block scales need BN and BK dividing 128 (BN=%d BK=%d)", api, bn, bk);
    else if (!shipped_source_path("gemm/gemm.tile", path, sizeof path))
        st = rt_fail(ctx, TILE_ERROR_IO, "%s: the path of gemm/gemm.tile is longer than %zu bytes", api, sizeof path);
    else {
        tile_compile_options o = {.size = sizeof o, .kernel = kernel, .arch = rt_arch(ctx), .defines = v.defines, .tir_only = 1};
        tile_compiled c = {0};
        if ((st = tile_compile_file(path, &o, &c)) != TILE_OK)
            rt_fail(ctx, st, "%s: %s: compiling %s: %s\n%s", api, kernel, path, tile_status_string(st), c.diagnostics ? c.diagnostics : "");
        tile_compiled_free(&c);
    }
    shipped_variant_free(&v);
    return st;
}

static tile_status gemm_run(tile_context *ctx, const tile_gemm_args *a, const char *const *config, bool launch) {
    const char *api = !launch ? "tile_gemm_prepare" : config ? "tile_gemm_with_config" : "tile_gemm"; /* for messages */
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    tile_device_properties props;
    if (tile_context_get_properties(ctx, &props) != TILE_OK) return TILE_ERROR_INVALID_VALUE;
    if (!a) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: args is NULL", api);
    tile_gemm_args args;
    char err[160];
    if (!rt_struct_in(&args, a, &rt_layout_tile_gemm_args, GEMM_ARGS_SIZE_0_1, err, sizeof err))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: args->%s", api, err);
    size_t caller_size;
    memcpy(&caller_size, a, sizeof caller_size);
    a = &args; /* read only this copy from here on */
    /* f8 inputs came with the scales (0.2): a size that leaves them out (0: the 0.1 layout) would run without
     * the caller's scales, as attention refuses too */
    if ((a->in_dtype == TILE_F8E4M3 || a->in_dtype == TILE_F8E5M2) &&
        (caller_size ? caller_size : GEMM_ARGS_SIZE_0_1) < offsetof(tile_gemm_args, scale_mode) + sizeof a->scale_mode)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                       "%s: f8 inputs need a size that covers a_scale, b_scale and scale_mode (size %zu does not: "
                       "set .size = sizeof(tile_gemm_args))", api, caller_size);

    /* 1. arguments (a value that is no tile_dtype is a bad argument; a real type pair without a kernel, unsupported) */
    if ((unsigned)a->in_dtype >= TILE_DTYPE_COUNT || (unsigned)a->out_dtype >= TILE_DTYPE_COUNT)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: in_dtype = %d, out_dtype = %d: each a tile_dtype (0 to %d)", api,
                       (int)a->in_dtype, (int)a->out_dtype, TILE_DTYPE_COUNT - 1);
    int pair = find_pair(a->in_dtype, a->out_dtype);
    if (pair < 0)
        return rt_fail(ctx, TILE_ERROR_UNSUPPORTED,
                       "%s: no kernel for %s inputs with %s output (supported: f16->f32, f16->f16, bf16->f32, bf16->bf16, "
                       "f32->f32 (tf32), i8->i32, f8e4m3->f32, f8e5m2->f32)", api,
                       dtype_str(a->in_dtype), dtype_str(a->out_dtype));
    if (a->m < 0 || a->n < 0 || a->k < 0)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: negative size m=%lld n=%lld k=%lld", api, (long long)a->m,
                       (long long)a->n, (long long)a->k);
    if (a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: m=%lld n=%lld k=%lld: sizes must fit in 32 bits", api, (long long)a->m,
                       (long long)a->n, (long long)a->k);
    if ((a->trans_a != 0 && a->trans_a != 1) || (a->trans_b != 0 && a->trans_b != 1))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: trans_a = %d, trans_b = %d: each is 0 or 1", api, a->trans_a, a->trans_b);
    bool f8 = a->in_dtype == TILE_F8E4M3 || a->in_dtype == TILE_F8E5M2;
    if (a->scale_mode < TILE_SCALE_NONE || a->scale_mode > TILE_SCALE_BLOCK)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: unknown scale_mode %d", api, a->scale_mode);
    if (a->scale_mode && !f8)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: scale_mode applies to f8 inputs, not %s", api, dtype_str(a->in_dtype));
    if (a->scale_mode && (!a->a_scale || !a->b_scale))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: scale_mode %d needs a_scale and b_scale", api, a->scale_mode);
    if ((unsigned)a->activation > TILE_ACT_SILU)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: unknown activation %d", api, (int)a->activation);
    void *dstream;
    tile_status sst = rt_check_stream(ctx, a->stream, api, &dstream);
    if (sst != TILE_OK) return sst;
    if (config && (sst = check_config(ctx, config, a->in_dtype, f8)) != TILE_OK) return sst;
    if (a->m == 0 || a->n == 0) /* nothing to compute, but the caller's configuration is checked all the same */
        return config ? gemm_config_compiles(ctx, api, pairs[pair].kernel, a, config) : TILE_OK;
    const Pair *pr = &pairs[pair];
    int in_bytes = (int)tile_dtype_size(pr->in), out_bytes = (int)tile_dtype_size(pr->out);
    int64_t arows = a->trans_a ? a->k : a->m, acols = a->trans_a ? a->m : a->k;
    int64_t brows = a->trans_b ? a->n : a->k, bcols = a->trans_b ? a->k : a->n;
    tile_status st;
    if ((st = check_operand(ctx, api, "A", a->a, arows, acols, a->lda, in_bytes, a->trans_a ? "k x m, trans_a" : "m x k", launch)) ||
        (st = check_operand(ctx, api, "B", a->b, brows, bcols, a->ldb, in_bytes, a->trans_b ? "n x k, trans_b" : "k x n", launch)) ||
        (st = check_operand(ctx, api, "C", a->c, a->m, a->n, a->ldc, out_bytes, "m x n", launch)))
        return st;
    if (launch && a->bias &&
        (st = shipped_check_range(ctx, api, a->bias, (uint64_t)out_bytes, (uint64_t)a->n * (uint64_t)out_bytes, "bias")) != TILE_OK)
        return st;
    if (a->scale_mode == TILE_SCALE_BLOCK && a->m * shipped_cdiv(a->k, 128) > INT32_MAX)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: a_scale (%lld x %lld block scales) has more than 2^31 elements", api,
                       (long long)a->m, (long long)shipped_cdiv(a->k, 128));
    uint64_t na = 0, nb = 0; /* scales read */
    if (a->scale_mode) {
        na = nb = 1;
        if (a->scale_mode == TILE_SCALE_CHANNEL) na = (uint64_t)a->m, nb = (uint64_t)a->n;
        if (a->scale_mode == TILE_SCALE_BLOCK) /* k = 0 reads none */
            na = (uint64_t)(a->m * shipped_cdiv(a->k, 128)), nb = (uint64_t)(shipped_cdiv(a->k, 128) * shipped_cdiv(a->n, 128));
    }
    if (launch && na && ((st = shipped_check_range(ctx, api, a->a_scale, 4, 4 * na, "a_scale")) != TILE_OK ||
                         (st = shipped_check_range(ctx, api, a->b_scale, 4, 4 * nb, "b_scale")) != TILE_OK))
        return st;

    /* 2. configuration: the defines in the order the compiler takes them (a later one wins) */
    ShippedVariant v = shipped_variant(pr->kernel);
    char tuned_cfg[256] = "";
    rt_lock(ctx);
    GemmState *g = gemm_state_locked(ctx, true);
    const char *t = g && !config ? tuned_config(ctx, g, pair, a) : NULL;
    snprintf(tuned_cfg, sizeof tuned_cfg, "%s", t ? t : ""); /* the table may move once unlocked */
    rt_unlock(ctx);
    if (!g) return rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
    /* without vectors only the scalar configuration is known to fit: a tuned one is set aside */
    /* per-tensor scales are one f32 each (4-byte aligned is enough: a scale that is element 1 of an
     * array must not put the operands on the element-by-element path, 10x slower on an H200); per-channel
     * and block scales are read as vectors */
    bool vector_scales = a->scale_mode == TILE_SCALE_CHANNEL || a->scale_mode == TILE_SCALE_BLOCK;
    bool no_align = ((a->a | a->b | a->c | a->bias | (vector_scales ? a->a_scale | a->b_scale : 0)) & 15) != 0;
    char why[96];
    bool vec = gemm_vectorized(a, no_align, why, sizeof why);
    if (t && !vec && rt_options()->debug_tune)
        rt_debug("tune", "%s: tuned %s set aside: %s (operands read element by element)", pr->kernel, tuned_cfg, why);
    int tuned = t != NULL && vec;
    const char *chosen = tuned ? tuned_cfg : vec ? pr->vector_config : pr->scalar_config;
    char reason[512] = ""; /* why not the first choice: logged when the variant is compiled or read from the disk cache */
    const Target *tg = target_find(rt_arch(ctx));
    bool wgmma = tg && tg->mma == WGMMA;
    bool block = a->scale_mode == TILE_SCALE_BLOCK;
    if (block && !config) { /* the tuning database's winners are for the unscaled loop */
        if (t && rt_options()->debug_tune) rt_debug("tune", "%s: tuned %s set aside: block scales", pr->kernel, tuned_cfg);
        tuned = 0;
        chosen = !vec ? block_scalar_config : wgmma ? block_wgmma_config : block_vector_config;
        if (!vec) snprintf(reason, sizeof reason, "%s, so A and B are read element by element: block scales' %s", why, chosen);
    } else if (!config && !epilogue_fits(chosen, a, wgmma)) {
        const char *other = vec && epilogue_fits(pr->vector_config, a, wgmma) ? pr->vector_config : pr->scalar_config;
        snprintf(reason, sizeof reason, "%s leaves no registers for the epilogue's %s: the %s configuration %s", chosen,
                 a->beta != 0 ? "beta * C" : a->activation != TILE_ACT_NONE ? "activation" : "bias",
                 other == pr->vector_config ? "vector" : "scalar", other);
        chosen = other, tuned = 0;
    } else if (!config && !vec)
        snprintf(reason, sizeof reason, "%s, so A and B are read element by element: the scalar configuration %s, not %s", why,
                 pr->scalar_config, pr->vector_config);
    if (config) /* checked by check_config */
        for (const char *const *p = config; *p; p++) shipped_define_text(&v, *p, strlen(*p));
    else define_words(&v, chosen);
    if (block) { /* a K tile within one K block, a program's columns within one column block */
        int bn = config_int(v.defines, "BN", 128), bk = config_int(v.defines, "BK", 32);
        if (bn <= 0 || bk <= 0 || 128 % bn || 128 % bk) {
            shipped_variant_free(&v);
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: block scales need BN and BK dividing 128 (BN=%d BK=%d)", api, bn, bk);
        }
    }
    /* a SPLIT_K out of range is the caller's error whatever the epilogue (checked before the fallback to 1 below) */
    int split_k = config_int(v.defines, "SPLIT_K", 1);
    if (split_k < 1 || split_k > 64) {
        shipped_variant_free(&v);
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: SPLIT_K=%d (1 to 64)", api, split_k);
    }
    bool split_ok = a->out_dtype == TILE_F32 && a->beta == 0 && !a->bias && a->activation == TILE_ACT_NONE && a->ldc == a->n;
    if (split_k > 1 && !split_ok) {
        split_k = 1;
        shipped_define(&v, "SPLIT_K", 1);
    }
    int group_m = config_int(v.defines, "GROUP_M", 8);
    if (group_m < 1 || group_m > 65535) { /* rows of tiles a group of programs walks (0 divided by zero) */
        shipped_variant_free(&v);
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: GROUP_M=%d (1 to 65535)", api, group_m);
    }
    if (launch) {
        /* C, which D overwrites, may share no element with what the kernel reads besides C: a program stores its
         * tile of D while others still read theirs.  Checked after the configuration, before anything compiles;
         * exact per row, so columns of one buffer interleaved between A and D share nothing and pass. */
        const struct {
            const char *name, *shape;
            tile_devptr p;
            int64_t rows, cols, ld, esize;
        } in[] = {
            {"A", a->trans_a ? "k x m" : "m x k", a->a, a->k ? arows : 0, acols, a->lda, in_bytes},
            {"B", a->trans_b ? "n x k" : "k x n", a->b, a->k ? brows : 0, bcols, a->ldb, in_bytes},
            {"bias", "n", a->bias, 1, a->n, a->n, out_bytes},
            {"a_scale", "f32", a->a_scale, na ? 1 : 0, (int64_t)na, (int64_t)na, 4},
            {"b_scale", "f32", a->b_scale, nb ? 1 : 0, (int64_t)nb, (int64_t)nb, 4},
        };
        for (size_t i = 0; i < ARRAY_LEN(in); i++)
            if (shipped_rows_share(a->c, (uint64_t)a->m, (uint64_t)(a->n * out_bytes), (uint64_t)(a->ldc * out_bytes), in[i].p,
                                   (uint64_t)in[i].rows, (uint64_t)(in[i].cols * in[i].esize), (uint64_t)(in[i].ld * in[i].esize))) {
                shipped_variant_free(&v);
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "%s: C (0x%llx, %lld x %lld, ldc %lld) shares elements with %s (0x%llx, %s%s%lld x %lld, ld %lld): "
                               "D is written over C while other programs still read %s, so the result would be undefined; give C "
                               "memory of its own", api,
                               (unsigned long long)a->c, (long long)a->m, (long long)a->n, (long long)a->ldc, in[i].name,
                               (unsigned long long)in[i].p, in[i].shape, ", ", (long long)in[i].rows, (long long)in[i].cols,
                               (long long)in[i].ld, in[i].name);
            }
    }
    if (a->beta != 0) shipped_flag(&v, "HAS_BETA", true);
    if (a->bias) shipped_flag(&v, "HAS_BIAS", true);
    if (a->activation) shipped_define(&v, "ACT", (long long)a->activation);
    if (a->scale_mode) shipped_define(&v, "SCALE", a->scale_mode);
    /* untuned defaults on sm_90a, in place of the vector configuration: f8 with 128-byte K tiles
     * (four wgmma k32 steps per promotion to f32, below); f16/bf16 products of at least 128 x 256 with no beta, bias or activation as
     * 128 x 256 x 64 tiles over two warpgroups (one m64n256 wgmma slab each), 3 stages (4 buffers
     * with the wgmma in flight: 192 KiB), 168 registers as launched (ptxas -v, warp-specialized and
     * persistent), 0 spills; A transposed (M contiguous) too: its stages are read M-major by the wgmma
     * (imm-trans-a, lower/software_pipeline.c step 1), so its wgmma stays in flight as a K-major A's does */
    bool wg = wgmma && !config && !tuned && chosen == pr->vector_config;
    if (wg && f8) {
        shipped_define(&v, "BK", 128);
        shipped_define(&v, "num_warps", 8); /* two warpgroups: 64 accumulator registers a thread, and 64 for a step's product */
    }
    /* f8 on sm_90a: two-level accumulation (a GPU's f8 wgmma keeps about 14 bits of its sums: an H200's
     * 8192^3 e4m3 GEMM accumulating in the wgmma was off by 1.9e-3 relative; cuBLAS and CUTLASS promote
     * to f32 the same way by default) where the accumulator takes at most 64 registers a thread (the
     * step's product takes as many again: 128 x 128 on 4 warps spills 656 B); larger ones accumulate in
     * the tensor cores, unless the caller's configuration says FAST_ACCUM */
    if (wgmma && f8 && !block && config_int(config, "FAST_ACCUM", -1) < 0) {
        int64_t regs = (int64_t)config_int(v.defines, "BM", 128) * config_int(v.defines, "BN", 128) /
                       (32 * config_int(v.defines, "num_warps", 8));
        if (regs <= 64) shipped_define(&v, "FAST_ACCUM", 0);
    }
    if (wg && (a->in_dtype == TILE_F16 || a->in_dtype == TILE_BF16) && a->m >= 128 && a->n >= 256 && a->beta == 0 &&
        a->activation == TILE_ACT_NONE && !a->bias) { /* a bias's loads in the epilogue spill 72 B at this tile */
        static const char *const big[] = {"BM=128", "BN=256", "BK=64", "num_warps=8", "num_stages=3"};
        for (size_t i = 0; i < ARRAY_LEN(big); i++) shipped_define_text(&v, big[i], strlen(big[i]));
    }

    /* on sm_90a a producer warpgroup issues the tensor-map loads (lower/warp_specialize.c; a caller's
     * configuration says for itself) */
    if (wgmma && !config) {
        shipped_define(&v, "warp_specialize", 1);
        /* persistent: one program per multiprocessor walks the tiles, so the producer runs into
         * the next tile while the computing warps store this one (not with split-K's second grid
         * axis, nor block scales' nested K loop) */
        if (split_k == 1 && !block) shipped_define(&v, "PERSISTENT", 1);
    }

    /* 3. specialization */
    int64_t sam = a->trans_a ? 1 : a->lda, sak = a->trans_a ? a->lda : 1;
    int64_t sbk = a->trans_b ? 1 : a->ldb, sbn = a->trans_b ? a->ldb : 1;
    shipped_spec_stride(&v, "sam", sam);
    shipped_spec_stride(&v, "sak", sak);
    shipped_spec_stride(&v, "sbk", sbk);
    shipped_spec_stride(&v, "sbn", sbn);
    shipped_spec_stride(&v, "scm", a->ldc);
    /* sizes too: the compiler's alignment analysis keeps an odd leading dimension's rows scalar */
    shipped_spec16(&v, "m", a->m);
    shipped_spec16(&v, "n", a->n);
    shipped_spec16(&v, "k", a->k);
    v.no_align_ptrs = no_align;
    /* a per-tensor scale's single load assumes nothing of its pointer (the operands keep the vector path) */
    if (a->scale_mode == TILE_SCALE_TENSOR && !no_align) {
        if (a->a_scale & 15) shipped_spec_any(&v, "a_scale");
        if (a->b_scale & 15) shipped_spec_any(&v, "b_scale");
    }

    /* 4. the variant */
    tile_kernel *kern;
    int source;
    if ((st = shipped_kernel(ctx, api, "gemm/gemm.tile", &v, &kern, &source)) != TILE_OK) {
        shipped_variant_free(&v);
        return st;
    }
    if (source && *reason && rt_options()->debug_launch) rt_debug("launch", "tile_gemm: %s: %s", pr->kernel, reason);
    if (!launch) {
        shipped_variant_free(&v);
        return TILE_OK;
    }

    /* 5. what was chosen, then the launch: grid (cdiv(m, BM) * cdiv(n, BN), SPLIT_K) */
    tile_kernel_attributes ka;
    tile_kernel_get_attributes(kern, &ka);
    int64_t gx = shipped_cdiv(a->m, config_int(v.defines, "BM", 128)) * shipped_cdiv(a->n, config_int(v.defines, "BN", 128));
    if (config_int(v.defines, "PERSISTENT", 0) && gx > rt_num_sms(ctx)) gx = rt_num_sms(ctx); /* each program loops over tiles */
    tile_gemm_info info = {.tuned = tuned, .source = source};
    snprintf(info.kernel, sizeof info.kernel, "%s", pr->kernel);
    /* warp_specialize asks for a producer warpgroup; the compiler adds one only where the loads can go
     * through tensor maps (rows it can prove 16-byte aligned): the configuration says what runs.  num_warps
     * counts the computing warps (the launch has 4 more with a producer); a configuration without it
     * (tile_gemm_with_config's {"warp_specialize=1"}) has the kernel's own, its const defaults' */
    int nw = config_int(v.defines, "num_warps", words_int(pr->scalar_config, "num_warps", -1));
    bool no_producer = config_int(v.defines, "warp_specialize", 0) && nw > 0 && ka.num_warps == nw;
    /* the configuration alone, what tile_gemm_with_config takes back: the epilogue's defines (HAS_BETA, HAS_BIAS,
     * ACT, SCALE) follow from the arguments and are left out */
    static const char *const epilogue[] = {"HAS_BETA=", "HAS_BIAS=", "ACT=", "SCALE="};
    Str cs = {0};
    for (int i = 0; i < v.ndefines; i++) {
        bool epi = false;
        for (size_t e = 0; e < ARRAY_LEN(epilogue); e++) epi |= !strncmp(v.defines[i], epilogue[e], strlen(epilogue[e]));
        if (epi) continue;
        str_printf(&cs, "%s%s", cs.len ? " " : "",
                   no_producer && !strncmp(v.defines[i], "warp_specialize=", 16) ? "warp_specialize=0" : v.defines[i]);
    }
    if (!cs.buf || !strstr(cs.buf, "num_warps=")) str_printf(&cs, "%snum_warps=%d", cs.len ? " " : "", nw > 0 ? nw : ka.num_warps);
    if (!strstr(cs.buf, "num_stages=")) str_printf(&cs, " num_stages=%d", ka.num_stages);
    snprintf(info.config, sizeof info.config, "%s", cs.buf);
    str_free(&cs);
    Str ss = {0};
    for (int i = 0; i < v.nspecialize; i++) str_printf(&ss, "%s%s", i ? " " : "", v.specialize[i]);
    snprintf(info.specialize, sizeof info.specialize, "%s", ss.buf ? ss.buf : "");
    str_free(&ss);
    shipped_variant_free(&v);
    info.grid = (tile_dim3){(unsigned)gx, (unsigned)split_k, 1};
    info.block = (tile_dim3){ka.block_threads, 1, 1};
    rt_lock(ctx);
    g->last = info;
    rt_unlock(ctx);
    if (gx > INT32_MAX) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %lld output tiles: too many programs", api, (long long)gx);
    if (split_k > 1 && (st = tile_memset_async(ctx, a->c, 0, (size_t)(a->m * a->n) * out_bytes, a->stream)) != TILE_OK)
        return st;
    int32_t m = (int32_t)a->m, n = (int32_t)a->n, k = (int32_t)a->k;
    int32_t s_am = (int32_t)sam, s_ak = (int32_t)sak, s_bk = (int32_t)sbk, s_bn = (int32_t)sbn, s_cm = (int32_t)a->ldc;
    float alpha = a->alpha, beta = a->beta;
    tile_devptr pa = a->a, pb = a->b, pc = a->c, pbias = a->bias ? a->bias : a->c;
    tile_devptr psa = a->scale_mode ? a->a_scale : a->c, psb = a->scale_mode ? a->b_scale : a->c;
    void *params[] = {&pa, &pb, &pc, &pbias, &m, &n, &k, &s_am, &s_ak, &s_bk, &s_bn, &s_cm, &alpha, &beta, &psa, &psb};
    return shipped_launch(ctx, api, kern, info.grid, params, a->stream);
}

tile_status tile_gemm_with_config(tile_context *ctx, const tile_gemm_args *a, const char *const *config) {
    return gemm_run(ctx, a, config, true);
}
tile_status tile_gemm(tile_context *ctx, const tile_gemm_args *args) { return gemm_run(ctx, args, NULL, true); }
tile_status tile_gemm_prepare(tile_context *ctx, const tile_gemm_args *args) { return gemm_run(ctx, args, NULL, false); }

tile_status tile_gemm_last_info(tile_context *ctx, tile_gemm_info *out) {
    tile_device_properties props;
    if (out) memset(out, 0, sizeof *out); /* cleared before any check, the context's included: no earlier value */
    if (!rt_context_valid(ctx)) return rt_no_context("tile_gemm_last_info", ctx);
    if (tile_context_get_properties(ctx, &props) != TILE_OK) return TILE_ERROR_INVALID_VALUE;
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_gemm_last_info: out is NULL");
    rt_lock(ctx);
    GemmState *g = gemm_state_locked(ctx, false);
    tile_status st = TILE_OK;
    if (g) *out = g->last;
    else st = rt_fail(ctx, TILE_ERROR_NOT_FOUND, "tile_gemm_last_info: no tile_gemm has run on this context");
    rt_unlock(ctx);
    return st;
}

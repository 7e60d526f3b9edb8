/* rope.c - tile_rope_kv_append: rotary position embedding of Q and K fused
 * with the append of K and V to a paged KV cache, the kernels of
 * kernels/rope/rope.tile behind one call.
 *
 * What it launches, and the variants:
 *   rope_{f16,bf16}[_kv8][_cs32] (by dtype, an f8e4m3 cache, an f32 cos_sin
 *   cache), grid (tokens, cdiv(heads_q, BH) + cdiv(heads_kv, BH)).  Defines
 *   HEAD_DIM, ROT (rot_dim), BLOCK_D (head_dim rounded up to a power of two),
 *   BLOCK_R (rot_dim / 2 likewise), BLOCK_T (the unrotated tail likewise, 1
 *   when there is none) and TAIL, BH (heads per program: BH * BLOCK_D at most
 *   1024), GPTJ, POS64 and SLOT64 (i64 indices), Q_OUT and K_OUT (separate
 *   outputs), HEAD_SCALES; specializations =1/=16 of the strides.
 *   Every variant: no_align_ptrs when a pointer is not 16-byte aligned.
 *
 *   1. Check the arguments: struct size, dtypes, sizes, strides, that the
 *      offsets the kernel forms in 32 bits fit (inside a token's row, inside
 *      a cache block, the slots), and that every pointer lies in an
 *      allocation of this context, aligned to its elements, with room for
 *      what the kernel touches.  With check_indices, copy positions and
 *      slot_mapping back and check every entry (ranges, repeated slots).
 *   2. Choose the variant and specialize strides from their values.
 *   3. The kernel comes from the context's table (kernels/shipped.h),
 *      compiled on first use through the caches.
 *   4. Launch on the caller's stream.
 * tile_rope_kv_append_prepare runs steps 1-3 with the size checks only (no
 * pointer read but for which are zero and their alignment, as the variant
 * depends on them) and launches nothing. */
#include "kernels/shipped.h"
#include "runtime/rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int64_t I32_LIMIT = INT32_MAX;
enum { MAX_GRID_X = INT32_MAX, MAX_GRID_Y = 65535, MAX_HEAD_DIM = 256, TILE_ELEMS = 1024 };

#define FAIL(...) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, __VA_ARGS__)
/* ptr holds bytes of esize-byte elements: aligned to them and inside one allocation */
#define RANGE(api, ptr, esize, bytes, what) \
    if ((bytes) != 0 && (st = shipped_check_range(ctx, api, ptr, esize, bytes, what)) != TILE_OK) return st

/* The baseline of rt_struct_in: the struct's size in the first release that had it. */
enum { ROPE_ARGS_SIZE_0_1 = sizeof(tile_rope_args) };


/* The token stride `name`: 0 means n; else at least n and below 2^31 (a message naming it formatted into msg) */
static const char *stride_resolve(const char *name, int64_t in, int64_t n, int64_t *out, char *msg, size_t size) {
    if (in == 0) in = n;
    if (in < n || in >= I32_LIMIT) {
        snprintf(msg, size, in < n ? "%s = %lld is shorter than its row of %lld elements (heads * head_dim; 0: contiguous)"
                                   : "%s = %lld is 2^31 or more (its row: %lld elements)",
                 name, (long long)in, (long long)n);
        return msg;
    }
    *out = in;
    return NULL;
}

/* Cache strides (block, slot, head): all 0 contiguous; else non-negative, below 2^31 */
static const char *cache_strides_resolve(const int64_t in[3], int64_t bs, int64_t hk, int64_t d, int64_t out[3]) {
    if (!in[0] && !in[1] && !in[2]) {
        out[2] = d, out[1] = hk * d, out[0] = bs * hk * d;
    } else {
        for (int i = 0; i < 3; i++) out[i] = in[i];
    }
    for (int i = 0; i < 3; i++)
        if (out[i] < 0 || out[i] >= I32_LIMIT) return "cache strides must be >= 0 and below 2^31";
    if ((uint64_t)(bs - 1) * (uint64_t)out[1] + (uint64_t)(hk - 1) * (uint64_t)out[2] + (uint64_t)d >= (uint64_t)I32_LIMIT)
        return "a cache block spans 2^31 elements or more (the kernel's offsets inside a block are 32-bit)";
    return NULL;
}

/* Elements a cache [num_blocks, block_size, heads_kv, head_dim] with strides s spans */
static uint64_t cache_span(int64_t nb, int64_t bs, int64_t hk, int64_t d, const int64_t s[3]) {
    return (uint64_t)(nb - 1) * (uint64_t)s[0] + (uint64_t)(bs - 1) * (uint64_t)s[1] + (uint64_t)(hk - 1) * (uint64_t)s[2] + (uint64_t)d;
}

/* A cache as rows for the overlap checks, at the finest level whose stride is uniform: one row per head where a
 * slot is heads_kv heads and a block block_size slots, else one per slot where a block is block_size slots, else
 * one per block (so K and V interleaved by head, slot or block pass) */
static ShippedRows cache_rows(const char *name, tile_devptr ptr, const tile_rope_args *a, const int64_t s[3], uint64_t kes) {
    const int64_t nb = a->num_blocks, bs = a->block_size, hk = a->heads_kv, D = a->head_dim;
    if (s[0] == bs * s[1] && s[1] == hk * s[2])
        return (ShippedRows){name, ptr, (uint64_t)(nb * bs * hk), kes * (uint64_t)D, kes * (uint64_t)s[2], kes};
    if (s[0] == bs * s[1]) return (ShippedRows){name, ptr, (uint64_t)(nb * bs), kes * cache_span(1, 1, hk, D, s), kes * (uint64_t)s[1], kes};
    return (ShippedRows){name, ptr, (uint64_t)nb, kes * cache_span(1, bs, hk, D, s), kes * (uint64_t)s[0], kes};
}

/* An index type: 0 or TILE_I64 -> 8 bytes, TILE_I32 -> 4; else NULL message */
static const char *index_resolve(tile_dtype t, int *bytes) {
    if (t == TILE_F32 || t == TILE_I64) *bytes = 8;
    else if (t == TILE_I32) *bytes = 4;
    else return "must be TILE_I64 (or 0) or TILE_I32";
    return NULL;
}

/* The sizes and choices both entry points share (no pointer is read). */
typedef struct RopePlan {
    int64_t rot, sq, sk, sv, sqo, sko, skc[3], svc[3], bh, block_d, block_r, block_t, num_slots, chunks;
    int pos_bytes, slot_bytes;
    bool f8, cs32, head_scales, q_out, k_out;
    tile_devptr q_out_ptr, k_out_ptr;
} RopePlan;

static const char *rope_plan(const tile_rope_args *a, RopePlan *p, char *msg, size_t n) {
    memset(p, 0, sizeof *p);
    if (a->dtype != TILE_F16 && a->dtype != TILE_BF16) return "dtype must be TILE_F16 or TILE_BF16";
    if (a->style != TILE_ROPE_NEOX && a->style != TILE_ROPE_GPTJ) {
        snprintf(msg, n, "style = %d: TILE_ROPE_NEOX (0) or TILE_ROPE_GPTJ (1)", (int)a->style);
        return msg;
    }
    if (a->tokens < 0 || a->tokens > MAX_GRID_X) {
        snprintf(msg, n, "tokens = %lld: 0 .. 2^31 - 1", (long long)a->tokens);
        return msg;
    }
    if (a->heads_q < 1 || a->heads_kv < 1 || a->heads_q > 65536 || a->heads_kv > 65536) return "heads_q and heads_kv must be 1 .. 65536";
    if (a->head_dim < 2 || a->head_dim > MAX_HEAD_DIM) {
        snprintf(msg, n, "head_dim = %lld: 2 .. 256", (long long)a->head_dim);
        return msg;
    }
    p->rot = a->rot_dim ? a->rot_dim : a->head_dim;
    if (a->rot_dim == 0 && a->head_dim % 2) {
        /* 0 means the whole head, which has an odd dimension left without a partner */
        snprintf(msg, n, "rot_dim = 0 rotates all of head_dim = %lld, which is odd: give an even rot_dim below it (partial rotary)",
                 (long long)a->head_dim);
        return msg;
    }
    if (p->rot < 2 || p->rot > a->head_dim || p->rot % 2) {
        snprintf(msg, n, "rot_dim = %lld: 0 (head_dim) or even, 2 .. head_dim (%lld)", (long long)a->rot_dim, (long long)a->head_dim);
        return msg;
    }
    const char *why;
    int64_t D = a->head_dim, nq = a->heads_q * D, nk = a->heads_kv * D;
    if ((why = stride_resolve("ldq", a->ldq, nq, &p->sq, msg, n)) || (why = stride_resolve("ldk", a->ldk, nk, &p->sk, msg, n)) ||
        (why = stride_resolve("ldv", a->ldv, nk, &p->sv, msg, n)) || (why = stride_resolve("ldq_out", a->ldq_out, nq, &p->sqo, msg, n)) ||
        (why = stride_resolve("ldk_out", a->ldk_out, nk, &p->sko, msg, n)))
        return why;
    if ((why = index_resolve(a->positions_dtype, &p->pos_bytes))) {
        snprintf(msg, n, "positions_dtype %s", why);
        return msg;
    }
    if ((why = index_resolve(a->slot_dtype, &p->slot_bytes))) {
        snprintf(msg, n, "slot_dtype %s", why);
        return msg;
    }
    if (a->cos_sin_dtype != TILE_F32 && a->cos_sin_dtype != a->dtype) return "cos_sin_dtype must be TILE_F32 (0) or dtype";
    p->cs32 = a->cos_sin_dtype == TILE_F32;
    if (a->max_position < 1 || a->max_position > I32_LIMIT) return "max_position must be 1 .. 2^31 - 1";
    if (a->num_blocks < 1 || a->block_size < 1 || a->num_blocks > I32_LIMIT || a->block_size > I32_LIMIT ||
        a->num_blocks * a->block_size >= I32_LIMIT)
        return "num_blocks and block_size must be >= 1 with num_blocks * block_size below 2^31 (the slots are 32-bit)";
    p->num_slots = a->num_blocks * a->block_size;
    if ((why = cache_strides_resolve(a->k_stride, a->block_size, a->heads_kv, D, p->skc)) ||
        (why = cache_strides_resolve(a->v_stride, a->block_size, a->heads_kv, D, p->svc))) {
        snprintf(msg, n, "%s (k_stride, v_stride)", why);
        return msg;
    }
    tile_dtype kv = a->kv_dtype == TILE_F32 ? a->dtype : a->kv_dtype;
    if (kv != a->dtype && kv != TILE_F8E4M3) return "kv_dtype must be dtype (or 0) or TILE_F8E4M3";
    p->f8 = kv == TILE_F8E4M3;
    if (shipped_scale_check("k_scale", a->k_scale, msg, n) || shipped_scale_check("v_scale", a->v_scale, msg, n)) return msg;
    if (!a->k_scales != !a->v_scales) return "k_scales and v_scales go together (both per-head scales, or neither)";
    if (a->k_scales && !p->f8) return "k_scales and v_scales are for an f8e4m3 cache (kv_dtype TILE_F8E4M3)";
    /* the scales quantize into f8 codes; a 16-bit cache stores the values, so a scale there would be dropped silently */
    if (!p->f8 && ((a->k_scale != 0 && a->k_scale != 1) || (a->v_scale != 0 && a->v_scale != 1)))
        return "k_scale and v_scale apply to an f8e4m3 cache only (kv_dtype TILE_F8E4M3; 0 or 1 with a 16-bit cache)";
    p->head_scales = a->k_scales != 0;
    if (a->check_indices != 0 && a->check_indices != 1) {
        snprintf(msg, n, "check_indices = %d: 0 or 1", a->check_indices);
        return msg;
    }
    p->block_d = shipped_pow2_at_least(D);
    p->block_r = shipped_pow2_at_least(p->rot / 2);
    p->block_t = p->rot < D ? shipped_pow2_at_least(D - p->rot) : 1;
    p->bh = shipped_max(1, shipped_min(TILE_ELEMS / p->block_d, shipped_pow2_at_least(shipped_max(a->heads_q, a->heads_kv))));
    p->chunks = shipped_cdiv(a->heads_q, p->bh) + shipped_cdiv(a->heads_kv, p->bh);
    if (p->chunks > MAX_GRID_Y) return "too many heads for the grid's y dimension";
    /* an output equal to its input is the in-place rotation */
    p->q_out_ptr = a->q_out ? a->q_out : a->q;
    p->k_out_ptr = a->k_out ? a->k_out : a->k;
    p->q_out = p->q_out_ptr != a->q;
    p->k_out = p->k_out_ptr != a->k;
    if (!p->q_out) p->sqo = p->sq;
    if (!p->k_out) p->sko = p->sk;
    return NULL;
}

/* The i-th index of an i32 or i64 array copied to the host */
static int64_t index_at(const void *buf, int bytes, size_t i) {
    if (bytes == 4) return ((const int32_t *)buf)[i];
    return ((const int64_t *)buf)[i];
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* check_indices: every position in [0, max_position), every slot below num_slots, no slot twice */
static tile_status rope_check_indices(tile_context *ctx, const tile_rope_args *a, const RopePlan *p) {
    const char *api = "tile_rope_kv_append";
    size_t T = (size_t)a->tokens;
    void *pos = malloc(T * (size_t)p->pos_bytes), *slots = malloc(T * (size_t)p->slot_bytes);
    int64_t *sorted = malloc(T * sizeof(int64_t));
    tile_status st = TILE_OK;
    if (!pos || !slots || !sorted) {
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "%s: check_indices: out of host memory", api);
        goto done;
    }
    if ((st = tile_synchronize(ctx)) != TILE_OK || (st = tile_memcpy_dtoh(ctx, pos, a->positions, T * (size_t)p->pos_bytes)) != TILE_OK ||
        (st = tile_memcpy_dtoh(ctx, slots, a->slot_mapping, T * (size_t)p->slot_bytes)) != TILE_OK)
        goto done;
    size_t ns = 0;
    for (size_t t = 0; t < T; t++) {
        int64_t v = index_at(pos, p->pos_bytes, t), s = index_at(slots, p->slot_bytes, t);
        if (v < 0 || v >= a->max_position) {
            st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: positions[%zu] = %lld is outside [0, max_position = %lld)", api, t,
                         (long long)v, (long long)a->max_position);
            goto done;
        }
        if (s >= p->num_slots) {
            st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: slot_mapping[%zu] = %lld is not a slot (num_blocks * block_size = %lld)", api, t,
                         (long long)s, (long long)p->num_slots);
            goto done;
        }
        if (s >= 0) sorted[ns++] = s;
    }
    qsort(sorted, ns, sizeof *sorted, cmp_i64);
    for (size_t i = 1; i < ns; i++)
        if (sorted[i] == sorted[i - 1]) {
            st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: slot %lld appears twice in slot_mapping", api, (long long)sorted[i]);
            goto done;
        }
done:
    free(pos), free(slots), free(sorted);
    return st;
}

static tile_status rope_run(tile_context *ctx, const tile_rope_args *args, bool launch) {
    const char *api = launch ? "tile_rope_kv_append" : "tile_rope_kv_append_prepare";
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!args) FAIL("%s: args is NULL", api);
    /* 1. arguments */
    tile_rope_args a;
    char err[200];
    if (!rt_struct_in(&a, args, &rt_layout_tile_rope_args, ROPE_ARGS_SIZE_0_1, err, sizeof err)) FAIL("%s: args->%s", api, err);
    RopePlan p;
    const char *why = rope_plan(&a, &p, err, sizeof err);
    if (why) FAIL("%s: %s", api, why);
    if (a.tokens == 0) return TILE_OK;
    tile_status st;
    int64_t T = a.tokens, D = a.head_dim, nq = a.heads_q * D, nk = a.heads_kv * D;
    uint64_t es = 2, kes = p.f8 ? 1 : 2, cses = p.cs32 ? 4 : 2;
    if (launch) {
        RANGE(api, a.q, es, es * shipped_rows_span(T, nq, p.sq), "q");
        RANGE(api, a.k, es, es * shipped_rows_span(T, nk, p.sk), "k");
        RANGE(api, a.v, es, es * shipped_rows_span(T, nk, p.sv), "v");
        if (p.q_out) RANGE(api, p.q_out_ptr, es, es * shipped_rows_span(T, nq, p.sqo), "q_out");
        if (p.k_out) RANGE(api, p.k_out_ptr, es, es * shipped_rows_span(T, nk, p.sko), "k_out");
        RANGE(api, a.positions, (uint64_t)p.pos_bytes, (uint64_t)p.pos_bytes * (uint64_t)T, "positions");
        RANGE(api, a.slot_mapping, (uint64_t)p.slot_bytes, (uint64_t)p.slot_bytes * (uint64_t)T, "slot_mapping");
        RANGE(api, a.cos_sin, cses, cses * (uint64_t)a.max_position * (uint64_t)p.rot, "cos_sin");
        RANGE(api, a.k_cache, kes, kes * cache_span(a.num_blocks, a.block_size, a.heads_kv, D, p.skc), "k_cache");
        RANGE(api, a.v_cache, kes, kes * cache_span(a.num_blocks, a.block_size, a.heads_kv, D, p.svc), "v_cache");
        if (p.head_scales) {
            RANGE(api, a.k_scales, 4, 4 * (uint64_t)a.heads_kv, "k_scales");
            RANGE(api, a.v_scales, 4, 4 * (uint64_t)a.heads_kv, "v_scales");
        }
        /* what the programs write (Q and K rotated, the caches) may share no byte with what other programs read or
         * write: q rotated in place (q_out 0 or q) is q itself, likewise k; the caches count by heads, slots or blocks (cache_rows) */
        uint64_t ut = (uint64_t)T, pb = (uint64_t)p.pos_bytes, sb = (uint64_t)p.slot_bytes, hs = p.head_scales ? 4 * (uint64_t)a.heads_kv : 0;
        const ShippedRows rq = {"q", a.q, ut, es * nq, es * p.sq, es}, rk = {"k", a.k, ut, es * nk, es * p.sk, es},
                          rv = {"v", a.v, ut, es * nk, es * p.sv, es}, rpos = {"positions", a.positions, 1, pb * ut, pb * ut, pb},
                          rcs = {"cos_sin", a.cos_sin, 1, cses * (uint64_t)a.max_position * p.rot, 1, cses},
                          rsl = {"slot_mapping", a.slot_mapping, 1, sb * ut, sb * ut, sb},
                          rks = {"k_scales", p.head_scales ? a.k_scales : 0, 1, hs, hs, 4},
                          rvs = {"v_scales", p.head_scales ? a.v_scales : 0, 1, hs, hs, 4},
                          wq = {p.q_out ? "q_out" : "q (rotated in place)", p.q_out_ptr, ut, es * nq, es * p.sqo, es},
                          wk = {p.k_out ? "k_out" : "k (rotated in place)", p.k_out_ptr, ut, es * nk, es * p.sko, es},
                          wkc = cache_rows("k_cache", a.k_cache, &a, p.skc, kes), wvc = cache_rows("v_cache", a.v_cache, &a, p.svc, kes);
        const ShippedRows *written[] = {&wq, &wk, &wkc, &wvc}, *read[] = {&rq, &rk, &rv, &rpos, &rcs, &rsl, &rks, &rvs, &wq, &wk};
        for (size_t w = 0; w < ARRAY_LEN(written); w++)
            for (size_t r = 0; r < ARRAY_LEN(read); r++) {
                if (read[r] == written[w]) continue;
                bool in_place = (written[w] == &wq && read[r] == &rq) || (written[w] == &wk && read[r] == &rk);
                if ((st = shipped_check_rows_apart(ctx, api, written[w], read[r], in_place)) != TILE_OK) return st;
            }
        if ((st = shipped_check_rows_apart(ctx, api, &wvc, &wkc, false)) != TILE_OK) return st;
        if (a.check_indices && (st = rope_check_indices(ctx, &a, &p)) != TILE_OK) return st;
    }

    /* 2. variant */
    char name[32];
    snprintf(name, sizeof name, "rope_%s%s%s", a.dtype == TILE_BF16 ? "bf16" : "f16", p.f8 ? "_kv8" : "", p.cs32 ? "_cs32" : "");
    ShippedVariant v = shipped_variant(name);
    shipped_define(&v, "HEAD_DIM", D);
    shipped_define(&v, "ROT", p.rot);
    shipped_define(&v, "BH", p.bh);
    shipped_define(&v, "BLOCK_R", p.block_r);
    shipped_define(&v, "BLOCK_T", p.block_t);
    shipped_define(&v, "BLOCK_D", p.block_d);
    shipped_flag(&v, "GPTJ", a.style == TILE_ROPE_GPTJ);
    shipped_flag(&v, "POS64", p.pos_bytes == 8);
    shipped_flag(&v, "SLOT64", p.slot_bytes == 8);
    shipped_flag(&v, "Q_OUT", p.q_out);
    shipped_flag(&v, "K_OUT", p.k_out);
    shipped_flag(&v, "TAIL", p.rot < D);
    shipped_flag(&v, "HEAD_SCALES", p.head_scales);
    static const char *const ld_names[] = {"ldq", "ldk", "ldv", "ldqo", "ldko"};
    const int64_t lds[] = {p.sq, p.sk, p.sv, p.sqo, p.sko};
    for (int i = 0; i < 5; i++) shipped_spec16(&v, ld_names[i], lds[i]);
    static const char *const cache_names[2][3] = {{"skb", "sks", "skh"}, {"svb", "svs", "svh"}};
    for (int i = 0; i < 3; i++) shipped_spec_stride(&v, cache_names[0][i], p.skc[i]), shipped_spec_stride(&v, cache_names[1][i], p.svc[i]);
    tile_devptr q = a.q, k = a.k, vv = a.v, qo = p.q_out_ptr, ko = p.k_out_ptr, pos = a.positions, cs = a.cos_sin, kc = a.k_cache,
                vc = a.v_cache, slots = a.slot_mapping, ksp = p.head_scales ? a.k_scales : a.cos_sin, vsp = p.head_scales ? a.v_scales : a.cos_sin;
    v.no_align_ptrs = ((q | k | vv | qo | ko | pos | cs | kc | vc | slots | ksp | vsp) & 15) != 0;

    /* 3. kernel */
    tile_kernel *kern;
    st = shipped_kernel(ctx, api, "rope/rope.tile", &v, &kern, NULL);
    shipped_variant_free(&v);
    if (st != TILE_OK || !launch) return st;

    /* 4. launch: grid (tokens, head chunks) */
    int32_t hq = (int32_t)a.heads_q, hk = (int32_t)a.heads_kv, l32[5], c32[2][3];
    for (int i = 0; i < 5; i++) l32[i] = (int32_t)lds[i];
    for (int i = 0; i < 3; i++) c32[0][i] = (int32_t)p.skc[i], c32[1][i] = (int32_t)p.svc[i];
    int32_t maxp = (int32_t)a.max_position, nslots = (int32_t)p.num_slots, bs = (int32_t)a.block_size;
    float ksc = a.k_scale != 0 ? a.k_scale : 1.0f, vsc = a.v_scale != 0 ? a.v_scale : 1.0f;
    void *params[] = {&q, &k, &vv, &qo, &ko, &pos, &cs, &kc, &vc, &slots, &ksp, &vsp, &hq, &hk, &l32[0], &l32[1], &l32[2], &l32[3], &l32[4],
                      &maxp, &nslots, &bs, &c32[0][0], &c32[0][1], &c32[0][2], &c32[1][0], &c32[1][1], &c32[1][2], &ksc, &vsc};
    return shipped_launch(ctx, api, kern, (tile_dim3){(unsigned)T, (unsigned)p.chunks, 1}, params, a.stream);
}

tile_status tile_rope_kv_append(tile_context *ctx, const tile_rope_args *args) { return rope_run(ctx, args, true); }
tile_status tile_rope_kv_append_prepare(tile_context *ctx, const tile_rope_args *args) { return rope_run(ctx, args, false); }

/* test_attention_api.c - tile_attention_fwd and tile_attention_decode_paged
 * (kernels/attention/attention.c) on the emulator against float64 references, and their
 * argument checks.
 *
 * Fresh random inputs (TILE_TEST_SEED repeats one; printed on failure),
 * outputs poisoned with NaN and the gaps between strided rows checked
 * untouched, lengths that are not multiples of the tiles.  The references
 * are ref/'s (ref_attention, ref_paged_decode), as in tests/test_attention.c,
 * driven through the C API instead of the device layer.
 *
 * Tolerances (as test_attention.c): inputs are exact f16/bf16 values (f8e4m3
 * codes times their scale for the f8 cache, also exact in f16/bf16), so the
 * error is P rounded to the input type before the second product and O
 * rounded on store: |dO| <= 2e-3 (f16), 1.6e-2 (bf16) with |V| <= 1; LSE
 * within 1e-4 + 1e-5 |LSE|. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "tests/test_ctx_buffers.h"


static uint16_t to_dt(tile_dtype t, double v) { return t == TILE_F16 ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static double from_dt(tile_dtype t, uint16_t h) { return t == TILE_F16 ? f16_to_d(h) : bf16_to_d(h); }
static const uint16_t POISON16 = 0x7e00; /* NaN in f16 and in bf16 */

static void fill16(tile_dtype t, size_t n, uint16_t *h, double *v) {
    for (size_t i = 0; i < n; i++) {
        h[i] = to_dt(t, urand());
        v[i] = from_dt(t, h[i]);
    }
}
/* e4m3 codes of x * 448 for x uniform in [-1, 1) (as a per-tensor quantizer with scale amax / 448
 * makes them: every binade down to the subnormals) and their values times `scale` (the dequantized
 * input the reference sees) */
static void fill8_quantized(size_t n, uint8_t *h, double *v, double scale) {
    for (size_t i = 0; i < n; i++) {
        double x = urand() * 448, best = INFINITY;
        uint8_t code = 0;
        for (unsigned c = 0; c < 0x7f; c++) { /* nearest magnitude (0x7f is NaN) */
            double d = fabs(fabs(x) - f8e4m3_to_d((uint8_t)c));
            if (d < best) best = d, code = (uint8_t)c;
        }
        h[i] = (uint8_t)(code | (x < 0 ? 0x80 : 0));
        v[i] = f8e4m3_to_d(h[i]) * scale;
    }
}
/* random f8e4m3 codes of magnitude <= 2 and their values (the scale is the reference's) */
static void fill8(size_t n, uint8_t *h, double *v) {
    for (size_t i = 0; i < n; i++) {
        uint8_t c;
        do c = (uint8_t)rnext();
        while ((c & 0x7f) > 0x40); /* 0x40 is 2.0 */
        h[i] = c;
        v[i] = f8e4m3_to_d(c);
    }
}


/* ======================= tile_attention_fwd ======================= */

typedef struct AttnCase {
    tile_dtype dt;
    int batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
    bool causal;
    int window_left, window_right; /* -1 unbounded */
    const int *lens_q, *lens_k;    /* varlen */
    bool contiguous;               /* strides 0 (contiguous) instead of gapped */
    bool no_lse;
    float scale;                   /* 0: the default */
} AttnCase;

/* dt TILE_F8E4M3: the dequantization scales, o's type (0: the default, bf16), and a factor the
 * call's v_scale is wrong by (0: none; else the check must fail); any dt: o's layout */
typedef struct F8Case {
    float q_scale, k_scale, v_scale;
    tile_dtype odt;
    float wrong_v;
    bool o_head_major; /* o [batch, head, token, d] (PyTorch SDPA's), varlen [head, token, d] */
} F8Case;

/* f8e4m3 inputs (FlashAttention-3's fp8 forward): the kernel rounds 256 p (p in [0, 1]) to e4m3
 * before P V; with the reference's exact p, |dp| <= 2^-4 p (3 mantissa bits, round to nearest)
 * above e4m3's normals (256 p >= 2^-6) and <= 2^-10 / 256 below.  So for O = sum_j p_j V_j / l:
 *   |dO_d| <= 2^-4 sum_j p_j |V_jd| / l + 2^-18 sum_j |V_jd| / l
 * (the first term is attention over |V|: a second reference run), plus half an ulp of O's type
 * for the store and 2^-16 max |V| for the f32 arithmetic (scores, exp2, sums; relative 2^-20 or
 * so on the emulator, wgmma's accumulation on a GPU is coarser).  Q and K reach the products
 * exactly (e4m3 codes, f32 accumulation), so S carries no quantization error of its own. */
static double f8_tolerance(tile_dtype odt, double want, double abs_attn, double abs_sum_over_l, double vmax) {
    double half_ulp = odt == TILE_F16 ? ldexp(1, -11) : ldexp(1, -8);
    return ldexp(abs_attn, -4) + ldexp(abs_sum_over_l, -18) + half_ulp * fabs(want) + ldexp(vmax, -16);
}

static void run_attention_f8(tile_context *ctx, const AttnCase *c, const F8Case *f);
static void run_attention(tile_context *ctx, const AttnCase *c) { run_attention_f8(ctx, c, &(F8Case){.odt = 0}); }

static void run_attention_f8(tile_context *ctx, const AttnCase *c, const F8Case *f) {
    bool varlen = c->lens_q != NULL;
    int B = c->batch, Hq = c->heads_q, Hk = c->heads_kv, D = c->head_dim;
    int *q0 = calloc((size_t)B + 1, sizeof(int)), *k0 = calloc((size_t)B + 1, sizeof(int));
    int max_q = 0, max_k = 0;
    for (int b = 0; b < B; b++) {
        int lq = varlen ? c->lens_q[b] : c->seq_q, lk = varlen ? c->lens_k[b] : c->seq_k;
        q0[b + 1] = q0[b] + lq;
        k0[b + 1] = k0[b] + lk;
        max_q = lq > max_q ? lq : max_q;
        max_k = lk > max_k ? lk : max_k;
    }
    int tq = q0[B], tk = k0[B];
    int seq_q = varlen ? max_q : c->seq_q, seq_k = varlen ? max_k : c->seq_k;
    /* token-major layout [token][head][d]; gapped unless contiguous */
    int gap = c->contiguous ? 0 : 1;
    int sqh = D + 8 * gap, sqs = Hq * sqh + 16 * gap, skh = D + 24 * gap, sks = Hk * skh + 8 * gap, svh = D + 16 * gap,
        svs = Hk * svh + 40 * gap, soh = D + 8 * gap, sos = Hq * soh + 16 * gap;
    int64_t sob = (int64_t)seq_q * sos;
    if (f->o_head_major) sos = D, soh = (varlen ? tq : seq_q) * D, sob = (int64_t)Hq * seq_q * D;
    size_t nq = (size_t)tq * sqs + 16 * gap, nk = (size_t)tk * sks + 16 * gap, nv = (size_t)tk * svs + 16 * gap,
           no = (size_t)tq * (f->o_head_major ? (size_t)Hq * D : (size_t)sos) + 16 * gap, nl = (size_t)Hq * tq + 4 * gap;
    bool f8 = c->dt == TILE_F8E4M3;
    size_t es = f8 ? 1 : 2; /* q, k, v */
    tile_dtype odt = f8 ? (f->odt ? f->odt : TILE_BF16) : c->dt;
    void *hq = malloc(nq * es + 2), *hk = malloc(nk * es + 2), *hv = malloc(nv * es + 2);
    uint16_t *ho = malloc(no * 2 + 2);
    double *vq = malloc(nq * 8 + 8), *vk = malloc(nk * 8 + 8), *vv = malloc(nv * 8 + 8);
    float *hl = malloc(nl * 4 + 4);
    if (f8) {
        fill8_quantized(nq, hq, vq, f->q_scale ? f->q_scale : 1);
        fill8_quantized(nk, hk, vk, f->k_scale ? f->k_scale : 1);
        fill8_quantized(nv, hv, vv, f->v_scale ? f->v_scale : 1);
    } else {
        fill16(c->dt, nq, hq, vq);
        fill16(c->dt, nk, hk, vk);
        fill16(c->dt, nv, hv, vv);
    }
    for (size_t i = 0; i < no; i++) ho[i] = POISON16;
    for (size_t i = 0; i < nl; i++) hl[i] = NAN;
    tile_devptr dq = upload(ctx, hq, nq * es), dk = upload(ctx, hk, nk * es), dv = upload(ctx, hv, nv * es), dout = upload(ctx, ho, no * 2);
    tile_devptr dl = c->no_lse ? 0 : upload(ctx, hl, nl * 4);
    tile_devptr dcq = varlen ? upload(ctx, q0, (size_t)(B + 1) * 4) : 0, dck = varlen ? upload(ctx, k0, (size_t)(B + 1) * 4) : 0;
    tile_attention_args a = {.dtype = c->dt, .batch = B, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .seq_q = seq_q, .seq_k = seq_k,
                             .q = dq, .k = dk, .v = dv, .o = dout, .lse = dl, .cu_seqlens_q = dcq, .cu_seqlens_k = dck,
                             .total_q = varlen ? tq : 0, .total_k = varlen ? tk : 0, .softmax_scale = c->scale, .causal = c->causal,
                             .window_left = c->window_left, .window_right = c->window_right};
    if (f8) { /* the f8 fields are read only when size covers them */
        a.size = sizeof a, a.q_scale = f->q_scale, a.k_scale = f->k_scale, a.o_dtype = f->odt;
        a.v_scale = f->wrong_v ? (f->v_scale ? f->v_scale : 1) * f->wrong_v : f->v_scale;
    }
    if (!c->contiguous) {
        int64_t qs[3] = {(int64_t)seq_q * sqs, sqs, sqh}, ks[3] = {(int64_t)seq_k * sks, sks, skh}, vs[3] = {(int64_t)seq_k * svs, svs, svh},
                os[3] = {sob, sos, soh};
        memcpy(a.q_stride, qs, sizeof qs), memcpy(a.k_stride, ks, sizeof ks), memcpy(a.v_stride, vs, sizeof vs), memcpy(a.o_stride, os, sizeof os);
    } else if (f->o_head_major) {
        a.o_stride[0] = sob, a.o_stride[1] = sos, a.o_stride[2] = soh;
    }
    tile_status st = tile_attention_fwd(ctx, &a);
    cr_assert_eq(st, TILE_OK, "tile_attention_fwd: %s: %s", tile_status_string(st), tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    download(ctx, ho, dout, no * 2);
    if (dl) download(ctx, hl, dl, nl * 4);

    /* the float64 reference in the device's layouts (explicit strides: the gapped or the contiguous ones) */
    double *ro = malloc(no * 8 + 8), *rl = malloc(nl * 8 + 8);
    ref_attention_args ra = {.batch = B, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .seq_q = seq_q, .seq_k = seq_k,
                             .cu_seqlens_q = varlen ? q0 : NULL, .cu_seqlens_k = varlen ? k0 : NULL, .q = vq, .k = vk, .v = vv, .o = ro,
                             .q_stride = {(int64_t)seq_q * sqs, sqs, sqh}, .k_stride = {(int64_t)seq_k * sks, sks, skh},
                             .v_stride = {(int64_t)seq_k * svs, svs, svh}, .o_stride = {sob, sos, soh}, .lse = rl,
                             .scale = c->scale, .causal = c->causal, .window_left = c->window_left, .window_right = c->window_right};
    cr_assert(ref_attention(&ra), "ref_attention rejected the case");
    /* f8: attention over |V| for the tolerance (f8_tolerance), and the largest |V| */
    double *rabs = NULL, *rlabs = NULL, vmax = 0, lse_eps = 0;
    if (f8) {
        double *av = malloc(nv * 8 + 8);
        for (size_t i = 0; i < nv; i++) av[i] = fabs(vv[i]), vmax = av[i] > vmax ? av[i] : vmax;
        rabs = malloc(no * 8 + 8);
        ref_attention_args rb = ra;
        rb.v = av, rb.o = rabs, rb.lse = NULL;
        cr_assert(ref_attention(&rb), "ref_attention rejected the case");
        /* A GPU's f8 wgmma accumulates Q.K^T with about 14 bits (DeepSeek-V3's measurement; an H200 here
         * was off by up to 5e-5 of the sum of |products|), the emulator exactly in f32: on a GPU the LSE
         * may also be off by 5e-4 of the largest scaled sum of |q||k| over its keys, which the LSE of
         * |Q|.|K^T| bounds from above. */
        tile_device_properties props;
        cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
        if (!props.is_emulator && dl) {
            double *aq = malloc(nq * 8 + 8), *ak = malloc(nk * 8 + 8);
            for (size_t i = 0; i < nq; i++) aq[i] = fabs(vq[i]);
            for (size_t i = 0; i < nk; i++) ak[i] = fabs(vk[i]);
            rlabs = malloc(nl * 8 + 8);
            ref_attention_args rq = ra;
            rq.q = aq, rq.k = ak, rq.v = av, rq.o = malloc(no * 8 + 8), rq.lse = rlabs;
            cr_assert(ref_attention(&rq), "ref_attention rejected the case");
            free(rq.o), free(aq), free(ak);
            lse_eps = 5e-4;
        }
        free(av);
    }
    int slh = varlen ? tq : seq_q, slb = varlen ? 0 : Hq * seq_q;
    double tol = c->dt == TILE_F16 ? 2e-3 : 1.6e-2, worst = 0; /* worst: the largest |error| / tolerance */
    size_t over = 0;                                           /* elements past the tolerance (wrong_v) */
    bool *written = calloc(no + 1, 1), *lwritten = calloc(nl + 1, 1);
    for (int b = 0; b < B; b++) {
        int lq = q0[b + 1] - q0[b], lk = k0[b + 1] - k0[b];
        for (int h = 0; h < Hq; h++) {
            for (int i = 0; i < lq; i++) {
                size_t orow = (varlen ? (size_t)q0[b] * sos : (size_t)b * sob) + (size_t)i * sos + (size_t)h * soh;
                for (int d = 0; d < D; d++) {
                    double want = ro[orow + d];
                    double got = from_dt(odt, ho[orow + d]);
                    written[orow + d] = true;
                    if (f8) tol = f8_tolerance(odt, want, rabs[orow + d], lk * vmax, vmax);
                    double r = fabs(got - want) / tol;
                    worst = r > worst || r != r ? r : worst;
                    if (f->wrong_v) {
                        over += !(r <= 1);
                        continue;
                    }
                    cr_assert(fabs(got - want) <= tol, "b=%d h=%d i=%d d=%d (lq %d lk %d D %d): O = %.6g, want %.6g +- %.3g (seed %llu)", b,
                              h, i, d, lq, lk, D, got, want, tol, (unsigned long long)seed);
                }
                if (!dl) continue;
                size_t li = varlen ? (size_t)h * slh + (size_t)(q0[b] + i) : (size_t)b * slb + (size_t)h * slh + (size_t)i;
                double want_lse = rl[li], got_lse = hl[li];
                lwritten[li] = true;
                double lse_tol = 1e-4 + 1e-5 * fabs(want_lse) + (rlabs ? lse_eps * fabs(rlabs[li]) : 0);
                if (want_lse != -INFINITY)
                    cr_assert(fabs(got_lse - want_lse) <= lse_tol, "b=%d h=%d i=%d: LSE = %.8g, want %.8g +- %.3g (seed %llu)", b, h,
                              i, got_lse, want_lse, lse_tol, (unsigned long long)seed);
                else
                    cr_assert(got_lse == -INFINITY, "b=%d h=%d i=%d sees no key: LSE = %.8g, want -inf", b, h, i, got_lse);
            }
        }
    }
    for (size_t i = 0; i < no; i++)
        if (!written[i]) cr_assert(ho[i] == POISON16, "O written outside the tensor at element %zu", i);
    if (f->wrong_v) /* the same check on a call given v_scale x wrong_v must see it */
        cr_assert(over > 0, "v_scale off by %g and every element within the tolerance (seed %llu)", f->wrong_v, (unsigned long long)seed);
    cr_log_info("attention %s D %d seq %d x %d causal %d: largest |error| / tolerance %.3g%s", tile_dtype_name(c->dt), D, seq_q, seq_k,
                c->causal, worst, f->wrong_v ? " (wrong v_scale)" : "");
    if (dl)
        for (size_t i = 0; i < nl; i++)
            if (!lwritten[i]) cr_assert(isnan(hl[i]), "LSE written outside the rows at %zu", i);
    tile_devptr bufs[] = {dq, dk, dv, dout, dl, dcq, dck};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) tile_free(ctx, bufs[i]);
    free(written), free(lwritten), free(ro), free(rl), free(rabs), free(rlabs), free(q0), free(k0);
    free(hq), free(hk), free(hv), free(ho), free(hl), free(vq), free(vk), free(vv);
}

Test(attention_api, fwd_shapes, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_attention(ctx, &(AttnCase){TILE_F16, 2, 2, 2, 17, 17, 64, false, -1, -1, NULL, NULL, false, false, 0.2f});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 1, 1, 1, 1, 64, false, -1, -1, NULL, NULL, true, true, 0});
    /* causal, bottom-right: more keys than queries, and more queries than keys (empty rows) */
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 1, 1, 17, 90, 64, true, -1, -1, NULL, NULL, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 2, 2, 100, 17, 64, true, -1, -1, NULL, NULL, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 2, 1, 200, 200, 64, true, -1, -1, NULL, NULL, true, false, 0});
    /* o [batch, head, token, d] (PyTorch SDPA's output), q, k, v token-major and gapped */
    run_attention_f8(ctx, &(AttnCase){TILE_F16, 2, 4, 2, 21, 30, 48, true, -1, -1, NULL, NULL, false, false, 0}, &(F8Case){.o_head_major = true});
    tile_context_destroy(ctx);
}

Test(attention_api, fwd_gqa_window_head_dims, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 4, 1, 33, 40, 64, false, -1, -1, NULL, NULL, false, false, 0});                   /* MQA */
    run_attention(ctx, &(AttnCase){TILE_BF16, 2, 8, 2, 17, 17, 64, true, -1, -1, NULL, NULL, false, false, 0});                   /* 4 per KV head */
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 8, 1, 64, 64, 32, true, -1, -1, NULL, NULL, true, false, 0}); /* 8 per KV head */
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 1, 1, 100, 100, 64, true, 20, -1, NULL, NULL, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 1, 1, 70, 100, 64, false, 9, 5, NULL, NULL, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 2, 1, 40, 33, 128, true, -1, -1, NULL, NULL, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 1, 1, 17, 50, 80, false, -1, -1, NULL, NULL, false, false, 0}); /* padded to 128 */
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 1, 1, 20, 36, 256, false, -1, -1, NULL, NULL, false, false, 0});
    tile_context_destroy(ctx);
}

/* sm_86 and sm_89 give a block 99 KiB of shared memory: head_dim above 128 (BLOCK_D 256) compiled for 100-104 KiB
 * there and tile_attention_fwd failed with TILE_ERROR_COMPILE (probe X B0); every head_dim the API takes works. */
Test(attention_api, fwd_large_head_dims_on_99k_targets, .timeout = 600) {
    seed_rng();
    static const char *const devices[] = {"emu:sm_86", "emu:sm_89"};
    for (int i = 0; i < 2; i++) {
        tile_context *ctx = open_ctx_on(devices[i]);
        run_attention(ctx, &(AttnCase){TILE_F16, 1, 2, 1, 37, 45, 160, true, -1, -1, NULL, NULL, false, false, 0});
        run_attention(ctx, &(AttnCase){TILE_BF16, 1, 1, 1, 20, 36, 256, false, -1, -1, NULL, NULL, true, false, 0});
        tile_context_destroy(ctx);
    }
}

/* Many key blocks: on sm_90a (BN 64 or 128) the steady-state loop runs several times, so P·V of one
 * block is issued with Q·K^T of the next (lower/overlap.c) through prologue, loop and epilogue;
 * a window starts the keys past 0, causal and odd lengths end them in a masked remainder. */
Test(attention_api, fwd_long_keys, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 2, 1, 130, 700, 64, false, -1, -1, NULL, NULL, true, false, 0});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 1, 1, 200, 777, 128, true, -1, -1, NULL, NULL, true, false, 0});
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 1, 1, 90, 600, 128, false, -1, -1, NULL, NULL, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 1, 1, 64, 530, 256, false, -1, -1, NULL, NULL, true, false, 0});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 1, 1, 260, 1000, 64, false, 300, -1, NULL, NULL, true, false, 0});
    tile_context_destroy(ctx);
}

Test(attention_api, fwd_varlen, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int lq[] = {17, 0, 70, 1}, lk[] = {17, 5, 100, 1};
    run_attention(ctx, &(AttnCase){TILE_F16, 4, 2, 1, 0, 0, 64, false, -1, -1, lq, lq, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_BF16, 4, 2, 2, 0, 0, 64, true, -1, -1, lq, lk, true, false, 0});
    /* o head-major, [head, token, d] over the packed tokens (the others contiguous: strides 0) */
    run_attention_f8(ctx, &(AttnCase){TILE_F16, 4, 4, 2, 0, 0, 32, true, -1, -1, lq, lk, true, false, 0}, &(F8Case){.o_head_major = true});
    tile_context_destroy(ctx);
}

/* f8e4m3 Q, K, V (quantized as x * 448 of x in [-1, 1)) with scales making Q in [-2, 2], K in
 * [-1.5, 1.5], V in [-3, 3]: odd lengths, gapped and contiguous strides, causal with empty rows,
 * GQA / MQA, a negative softmax scale, head dims 32 to 256, f16 and bf16 O */
#define F8(out) (&(F8Case){.q_scale = 2.0f / 448, .k_scale = 1.5f / 448, .v_scale = 3.0f / 448, .odt = out})
Test(attention_api, fwd_f8, .timeout = 600) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 2, 4, 2, 17, 90, 64, false, -1, -1, NULL, NULL, false, false, 0}, F8(TILE_F16));
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 2, 2, 100, 77, 128, true, -1, -1, NULL, NULL, true, false, 0}, F8(0));
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 4, 1, 200, 200, 64, true, -1, -1, NULL, NULL, true, false, 0}, F8(TILE_F16));
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 2, 1, 33, 40, 64, false, -1, -1, NULL, NULL, false, false, -0.2f}, F8(TILE_BF16));
    /* v_scale 0 (means 1), no LSE, a larger softmax scale (peakier rows) */
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 2, 2, 50, 70, 32, false, -1, -1, NULL, NULL, true, true, 0.6f},
                     &(F8Case){.q_scale = 2.0f / 448, .k_scale = 1.5f / 448, .odt = TILE_F16});
    tile_context_destroy(ctx);
}

Test(attention_api, fwd_f8_varlen_window_head_dims, .timeout = 600) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int lq[] = {17, 0, 70, 1}, lk[] = {17, 5, 100, 1};
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 4, 2, 1, 0, 0, 64, true, -1, -1, lq, lk, false, false, 0}, F8(TILE_F16));
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 1, 1, 70, 100, 64, false, 9, 5, NULL, NULL, false, false, 0}, F8(TILE_F16));
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 1, 1, 17, 50, 80, false, -1, -1, NULL, NULL, false, false, 0}, F8(TILE_BF16));
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 1, 1, 20, 36, 256, true, -1, -1, NULL, NULL, true, false, 0}, F8(TILE_F16));
    tile_context_destroy(ctx);
}

/* The tolerance sees a wrong scale: the call's v_scale off by +-25% (an error of |O| / 4 against a bound of
 * 2^-4 sum p |V| / l; a 1/16 error would hide under the bound where one key dominates a row) */
Test(attention_api, fwd_f8_wrong_scale_fails, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    F8Case over = *F8(TILE_F16), under = *F8(TILE_BF16);
    over.wrong_v = 1.25f, under.wrong_v = 0.75f;
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 2, 1, 40, 70, 64, true, -1, -1, NULL, NULL, false, false, 0}, &over);
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 2, 1, 40, 70, 64, false, -1, -1, NULL, NULL, true, false, 0}, &under);
    tile_context_destroy(ctx);
}

/* The f8 kernels as tile_attention_fwd launches them on sm_90a (kernels/attention/attention.c: BM 128 on 8
 * warps; BN 128 at BLOCK_D 64 with aligned 16-byte rows, 64 at 128): both dots native e4m3 wgmma (QK^T
 * m64n<BN>k32, PV m64n<BLOCK_D>k32), no f16 wgmma left; at 256, BM 64 BN 16 (BM 128 spills 500 B, BN 32
 * 56 B): mma.sync on the widened values, K and V pipelined as bytes (tensor maps, local_load); with ptxas,
 * no spills */
Test(attention_api, fwd_f8_sm90a_native_wgmma, .timeout = 600) {
    static const struct {
        int d, bn;
        const char *extra;
        int spill;
    } cfg[] = {{64, 128, "CAUSAL=true", 0}, {128, 64, "VARLEN=true", 0}, {256, 16, "CAUSAL=false", 0}};
    bool ptxas = access("/usr/local/cuda/bin/ptxas", X_OK) == 0 || system("command -v ptxas >/dev/null 2>&1") == 0;
    if (!ptxas) cr_log_warn("ptxas not found: spills of the sm_90a f8 attention NOT checked (the PTX is)");
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        char d[32], bd[32], bn[32], stages[32];
        snprintf(d, sizeof d, "HEAD_DIM=%d", cfg[i].d), snprintf(bd, sizeof bd, "BLOCK_D=%d", cfg[i].d);
        snprintf(bn, sizeof bn, "BN=%d", cfg[i].bn), snprintf(stages, sizeof stages, "num_stages=%d", cfg[i].d <= 64 ? 3 : 2);
        const char *defines[] = {d, bd, cfg[i].d > 128 ? "BM=64" : "BM=128", bn, "num_warps=8", stages, cfg[i].extra, NULL};
        const char *spec[] = {"sqb=16", "sqs=16", "sqh=16", "skb=16", "sks=16", "skh=16",
                              "svb=16", "svs=16", "svh=16", "sob=16", "sos=16", "soh=16", NULL};
        tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .kernel = "attention_fwd_e4m3_bf16", .defines = defines,
                                  .specialize = spec, .want_cubin = ptxas, .no_line_info = 1};
        tile_compiled c;
        tile_status st = tile_compile_file(TILE_SOURCE_DIR "/kernels/attention/attention.tile", &o, &c);
        cr_assert_eq(st, TILE_OK, "head_dim %d: %s\n%s", cfg[i].d, tile_status_string(st), c.diagnostics);
        char qk[96], pv[96];
        snprintf(qk, sizeof qk, "wgmma.mma_async.sync.aligned.m64n%dk32.f32.e4m3.e4m3", cfg[i].bn);
        snprintf(pv, sizeof pv, "wgmma.mma_async.sync.aligned.m64n%dk32.f32.e4m3.e4m3", cfg[i].d);
        if (cfg[i].d <= 128) {
            cr_expect(strstr(c.ptx, qk), "head_dim %d: no %s (Q K^T) in the PTX", cfg[i].d, qk);
            cr_expect(strstr(c.ptx, pv), "head_dim %d: no %s (P V) in the PTX", cfg[i].d, pv);
            cr_expect(!strstr(c.ptx, ".f32.f16.f16") && !strstr(c.ptx, "mma.sync"), "head_dim %d: a 16-bit product is left", cfg[i].d);
        } else {
            cr_expect(strstr(c.ptx, "cp.async.bulk.tensor.4d.shared::cluster.global"), "head_dim %d: K and V are not pipelined", cfg[i].d);
        }
        if (ptxas)
            cr_expect(c.kernels[0].spill_bytes >= 0 && c.kernels[0].spill_bytes <= cfg[i].spill,
                      "head_dim %d: %d bytes of spills, %d known", cfg[i].d, c.kernels[0].spill_bytes, cfg[i].spill);
        tile_compiled_free(&c);
    }
    /* sm_80 at head_dim 256: BM 32, BN 16 on 8 warps (more warps than the tile's 16-row blocks: the
     * extra warps read their wrapped rows, inside the staged tile) */
    if (ptxas) {
        const char *defines[] = {"HEAD_DIM=256", "BLOCK_D=256", "BM=32", "BN=16", "num_warps=8", "num_stages=2", "CAUSAL=true", NULL};
        tile_compile_options o = {.size = sizeof o, .arch = "sm_80", .kernel = "attention_fwd_e4m3_f16", .defines = defines,
                                  .want_cubin = 1, .no_line_info = 1};
        tile_compiled c;
        cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/attention/attention.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
        cr_expect(c.kernels[0].spill_bytes == 0, "sm_80 head_dim 256: %d bytes of spills", c.kernels[0].spill_bytes);
        tile_compiled_free(&c);
    }
}

/* ==================== tile_attention_decode_paged ==================== */

typedef struct PagedCase {
    tile_dtype dt;
    bool f8;
    int num_seqs, heads_q, heads_kv, num_tokens, head_dim, block_size;
    const int *ctx;
    int num_splits;  /* 0: automatic */
    bool caller_ws;  /* the caller allocates the workspace */
    int want_splits; /* > 0: the split count the call must choose */
    bool shared_first; /* every sequence's first logical block is the same physical block (a shared prefix) */
} PagedCase;

/* o_head_major: o [head, sequence, token, d] (else [sequence, token, head, d], gapped) */
static void run_paged_o(tile_context *ctx, const PagedCase *c, bool o_head_major) {
    int S = c->num_seqs, Hq = c->heads_q, Hk = c->heads_kv, T = c->num_tokens, D = c->head_dim, bs = c->block_size;
    int max_blocks = 0, used = 0, max_ctx = 0;
    for (int s = 0; s < S; s++) {
        int nb = (c->ctx[s] + bs - 1) / bs;
        max_blocks = nb > max_blocks ? nb : max_blocks;
        max_ctx = c->ctx[s] > max_ctx ? c->ctx[s] : max_ctx;
        used += nb;
    }
    /* shuffled block tables; unused entries out of range (a read would be a memcheck error) */
    int num_blocks = used + 3, sbt = max_blocks + 2;
    int *perm = malloc(sizeof(int) * (size_t)num_blocks), *table = malloc(sizeof(int) * (size_t)S * sbt);
    for (int i = 0; i < num_blocks; i++) perm[i] = i;
    for (int i = num_blocks - 1; i > 0; i--) {
        int j = (int)(rnext() % (uint64_t)(i + 1)), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int s = 0, next = 0; s < S; s++)
        for (int i = 0; i < sbt; i++) table[s * sbt + i] = i < (c->ctx[s] + bs - 1) / bs ? perm[next++] : 1 << 29;
    if (c->shared_first)
        for (int s = 1; s < S; s++) table[s * sbt] = table[0];
    int skh = D + 16, sks = Hk * skh, skb = bs * sks + 64, svh = D + 32, svs = Hk * svh + 16, svb = bs * svs;
    int sqh = D + 8, sqt = Hq * sqh + 16, sqs = T * sqt + 32, soh = D + 16, sot = Hq * soh, sos = T * sot + 8;
    if (o_head_major) sot = D, sos = T * D, soh = S * T * D;
    size_t nk = (size_t)num_blocks * skb, nv = (size_t)num_blocks * svb, nq = (size_t)S * sqs, no = o_head_major ? (size_t)Hq * soh : (size_t)S * sos;
    size_t kes = c->f8 ? 1 : 2;
    void *hk = malloc(nk * kes), *hv = malloc(nv * kes);
    uint16_t *hq = malloc(nq * 2), *ho = malloc(no * 2);
    double *vk = malloc(nk * 8), *vv = malloc(nv * 8), *vq = malloc(nq * 8);
    float k_scale = c->f8 ? 0.375f : 0, v_scale = c->f8 ? 0.5f : 0;
    if (c->f8) {
        fill8(nk, hk, vk);
        fill8(nv, hv, vv);
    } else {
        fill16(c->dt, nk, hk, vk);
        fill16(c->dt, nv, hv, vv);
    }
    fill16(c->dt, nq, hq, vq);
    for (size_t i = 0; i < no; i++) ho[i] = POISON16;
    tile_devptr dk = upload(ctx, hk, nk * kes), dv = upload(ctx, hv, nv * kes), dq = upload(ctx, hq, nq * 2), dout = upload(ctx, ho, no * 2);
    tile_devptr dtable = upload(ctx, table, sizeof(int) * (size_t)S * sbt), dctx = upload(ctx, c->ctx, sizeof(int) * (size_t)S);
    tile_paged_attention_args a = {.dtype = c->dt, .kv_dtype = c->f8 ? TILE_F8E4M3 : c->dt, .k_scale = k_scale, .v_scale = v_scale,
                                   .num_seqs = S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs,
                                   .num_blocks = num_blocks, .q = dq, .o = dout, .q_stride = {sqs, sqt, sqh}, .o_stride = {sos, sot, soh},
                                   .k_cache = dk, .v_cache = dv, .k_stride = {skb, sks, skh}, .v_stride = {svb, svs, svh},
                                   .block_tables = dtable, .block_table_stride = sbt, .context_lens = dctx, .max_context_len = max_ctx,
                                   .num_splits = c->num_splits, .check_tables = 1};
    size_t ws_bytes;
    int splits;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &ws_bytes, &splits), TILE_OK, "%s", tile_last_error(ctx));
    if (c->want_splits) cr_assert_eq(splits, c->want_splits, "split count %d, want %d", splits, c->want_splits);
    if (splits > 1) { /* o_part f32 [rows * splits * D] 256-byte aligned, then lse_part f32 [rows * splits], for the count used */
        size_t rows = (size_t)S * Hq * T * (size_t)splits, want = ((4 * rows * (size_t)D + 255) & ~(size_t)255) + 4 * rows;
        cr_assert_eq(ws_bytes, want, "workspace of %zu bytes for %d splits, want %zu", ws_bytes, splits, want);
    } else {
        cr_assert_eq(ws_bytes, 0, "workspace of %zu bytes without splits", ws_bytes);
    }
    if (c->caller_ws && ws_bytes) {
        cr_assert_eq(tile_malloc(ctx, ws_bytes, &a.workspace), TILE_OK);
        a.workspace_bytes = ws_bytes;
    }
    tile_status st = tile_attention_decode_paged(ctx, &a);
    cr_assert_eq(st, TILE_OK, "tile_attention_decode_paged: %s: %s", tile_status_string(st), tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    download(ctx, ho, dout, no * 2);

    /* the float64 reference: the same caches, the f8 codes' values times the same scales, the default softmax scale */
    double *ro = malloc(no * 8);
    ref_paged_args ra = {.num_seqs = S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs,
                         .num_blocks = num_blocks, .q = vq, .q_stride = {sqs, sqt, sqh}, .o = ro, .o_stride = {sos, sot, soh},
                         .k_cache = vk, .v_cache = vv, .k_stride = {skb, sks, skh}, .v_stride = {svb, svs, svh}, .k_scale = k_scale,
                         .v_scale = v_scale, .block_tables = table, .block_table_stride = sbt, .context_lens = c->ctx};
    cr_assert(ref_paged_decode(&ra), "ref_paged_decode rejected the case");
    double tol = c->dt == TILE_F16 ? 2e-3 : 1.6e-2;
    bool *written = calloc(no, 1);
    for (int s = 0; s < S; s++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < Hq; h++) {
                size_t orow = (size_t)s * sos + (size_t)t * sot + (size_t)h * soh;
                for (int d = 0; d < D; d++) {
                    double want = ro[orow + d];
                    double got = from_dt(c->dt, ho[orow + d]);
                    written[orow + d] = true;
                    cr_assert(fabs(got - want) <= tol, "s=%d t=%d h=%d d=%d (ctx %d, T %d, splits %d%s): O = %.6g, want %.6g (seed %llu)", s, t,
                              h, d, c->ctx[s], T, splits, c->f8 ? ", f8 cache" : "", got, want, (unsigned long long)seed);
                }
            }
    for (size_t i = 0; i < no; i++)
        if (!written[i]) cr_assert(ho[i] == POISON16, "O written outside the tensor at element %zu", i);
    tile_devptr bufs[] = {dk, dv, dq, dout, dtable, dctx, a.workspace};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) tile_free(ctx, bufs[i]);
    free(written), free(ro), free(perm), free(table);
    free(hk), free(hv), free(hq), free(ho), free(vk), free(vv), free(vq);
}

static void run_paged(tile_context *ctx, const PagedCase *c) { run_paged_o(ctx, c, false); }

Test(attention_api, decode_paged, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int c3[] = {1, 15, 1000}, c2[] = {8, 200};
    /* few programs and a long context: the automatic choice splits (cdiv(1000, 256) = 4) */
    run_paged(ctx, &(PagedCase){TILE_F16, false, 3, 4, 1, 1, 64, 16, c3, 0, false, 4, false});
    run_paged(ctx, &(PagedCase){TILE_BF16, false, 3, 4, 1, 1, 64, 16, c3, 1, false, 1, false});
    /* 8 tokens x 4 heads: a 32-row Q tile; explicit splits into the caller's workspace */
    run_paged(ctx, &(PagedCase){TILE_F16, false, 2, 8, 2, 8, 128, 32, c2, 3, true, 3, false});
    run_paged(ctx, &(PagedCase){TILE_BF16, false, 2, 8, 2, 8, 128, 64, c2, 1, false, 1, false});
    run_paged(ctx, &(PagedCase){TILE_BF16, false, 2, 4, 2, 1, 256, 32, c2, 2, false, 2, false});
    /* more splits than the context has BN-key chunks: 64 asked, cdiv(200, 64) = 4 used (head_dim 64: BN 64) and
     * cdiv(200, 32) = 7 (head_dim 128: BN 32); the workspace of exactly that size is enough */
    run_paged(ctx, &(PagedCase){TILE_F16, false, 2, 4, 2, 1, 64, 16, c2, 64, true, 4, false});
    run_paged(ctx, &(PagedCase){TILE_BF16, false, 2, 4, 2, 2, 128, 32, c2, 64, true, 7, false});
    /* o head-major, [head, sequence, token, d]: the split programs and the merge write through its strides */
    run_paged_o(ctx, &(PagedCase){TILE_F16, false, 2, 4, 1, 3, 64, 16, c2, 3, false, 3, false}, true);
    tile_context_destroy(ctx);
}

/* The two entry points on the same inputs: a context of `len` keys in a paged cache with a shuffled block table
 * (more blocks than the table names, the others random), its last `t` tokens as the queries, through
 * tile_attention_decode_paged, and the same keys contiguous through tile_attention_fwd (seq_q = t, seq_k = len,
 * causal: bottom-right aligned, so the new tokens are causal among themselves as decode's are).  Each against
 * float64 (2e-3, f16) and against each other (4e-3); GQA 2, splits none and 3. */
static void fwd_decode_agree(tile_context *ctx, int64_t len, int64_t t, int64_t bs, int splits) {
    const int64_t hq = 4, hkv = 2, d = 64, g = hq / hkv, nbl = (len + bs - 1) / bs, nblocks = nbl + 3;
    const size_t nq = (size_t)(t * hq * d), nk = (size_t)(len * hkv * d), ncache = (size_t)(nblocks * bs * hkv * d);
    uint16_t *hqv = malloc(nq * 2), *hc[2] = {malloc(ncache * 2), malloc(ncache * 2)}, *hkvv[2] = {malloc(nk * 2), malloc(nk * 2)};
    uint16_t *od = malloc(nq * 2), *of = malloc(nq * 2);
    double *vq = malloc(nq * sizeof(double)), *vc = malloc(ncache * sizeof(double)), *p = malloc((size_t)len * sizeof(double));
    int32_t *perm = malloc((size_t)nblocks * sizeof(int32_t)), clen = (int32_t)len;
    fill16(TILE_F16, nq, hqv, vq);
    for (int x = 0; x < 2; x++) fill16(TILE_F16, ncache, hc[x], vc);
    for (int64_t i = 0; i < nblocks; i++) perm[i] = (int32_t)i;
    for (int64_t i = nblocks - 1; i > 0; i--) {
        int64_t j = (int64_t)((urand() + 1) / 2 * (double)(i + 1));
        if (j > i) j = i;
        int32_t tmp = perm[i];
        perm[i] = perm[j], perm[j] = tmp;
    }
    for (int x = 0; x < 2; x++) /* the contiguous keys and values are what the table points at */
        for (int64_t j = 0; j < len; j++)
            memcpy(hkvv[x] + j * hkv * d, hc[x] + ((int64_t)perm[j / bs] * bs + j % bs) * hkv * d, (size_t)(hkv * d * 2));
    tile_paged_attention_args pa = {.size = sizeof pa, .dtype = TILE_F16, .num_seqs = 1, .heads_q = hq, .heads_kv = hkv,
                                    .head_dim = d, .num_tokens = t, .block_size = bs, .num_blocks = nblocks,
                                    .block_table_stride = nbl, .max_context_len = len, .num_splits = splits};
    pa.q = upload(ctx, hqv, nq * 2);
    for (size_t i = 0; i < nq; i++) od[i] = of[i] = POISON16;
    pa.o = upload(ctx, od, nq * 2);
    pa.k_cache = upload(ctx, hc[0], ncache * 2), pa.v_cache = upload(ctx, hc[1], ncache * 2);
    pa.block_tables = upload(ctx, perm, (size_t)nbl * 4), pa.context_lens = upload(ctx, &clen, 4);
    cr_assert_eq(tile_attention_decode_paged(ctx, &pa), TILE_OK, "%s", tile_last_error(ctx));
    tile_attention_args fa = {.size = sizeof fa, .dtype = TILE_F16, .batch = 1, .heads_q = hq, .heads_kv = hkv, .head_dim = d,
                              .seq_q = t, .seq_k = len, .causal = 1, .window_left = -1, .window_right = -1};
    fa.q = pa.q, fa.k = upload(ctx, hkvv[0], nk * 2), fa.v = upload(ctx, hkvv[1], nk * 2), fa.o = upload(ctx, of, nq * 2);
    cr_assert_eq(tile_attention_fwd(ctx, &fa), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    download(ctx, od, pa.o, nq * 2), download(ctx, of, fa.o, nq * 2);
    double worst_d = 0, worst_f = 0, worst_df = 0;
    for (int64_t i = 0; i < t; i++)
        for (int64_t h = 0; h < hq; h++) {
            const int64_t last = len - t + i; /* keys 0..last are visible */
            double m = -INFINITY, l = 0;
            for (int64_t j = 0; j <= last; j++) {
                double sdot = 0;
                for (int64_t c = 0; c < d; c++) sdot += vq[(i * hq + h) * d + c] * f16_to_d(hkvv[0][(j * hkv + h / g) * d + c]);
                p[j] = sdot / sqrt((double)d), m = fmax(m, p[j]);
            }
            for (int64_t j = 0; j <= last; j++) p[j] = exp(p[j] - m), l += p[j];
            for (int64_t c = 0; c < d; c++) {
                double r = 0;
                for (int64_t j = 0; j <= last; j++) r += p[j] * f16_to_d(hkvv[1][(j * hkv + h / g) * d + c]);
                r /= l;
                const size_t at = (size_t)((i * hq + h) * d + c);
                const double dd = fabs(f16_to_d(od[at]) - r), df = fabs(f16_to_d(of[at]) - r), ddf = fabs(f16_to_d(od[at]) - f16_to_d(of[at]));
                worst_d = isnan(dd) || dd > worst_d ? (isnan(dd) ? INFINITY : dd) : worst_d;
                worst_f = isnan(df) || df > worst_f ? (isnan(df) ? INFINITY : df) : worst_f;
                worst_df = isnan(ddf) || ddf > worst_df ? (isnan(ddf) ? INFINITY : ddf) : worst_df;
            }
        }
    cr_expect(worst_d <= 2e-3, "decode len %lld t %lld splits %d: |error| %g against float64", (long long)len, (long long)t, splits, worst_d);
    cr_expect(worst_f <= 2e-3, "prefill len %lld t %lld: |error| %g against float64", (long long)len, (long long)t, worst_f);
    cr_expect(worst_df <= 4e-3, "decode and prefill differ by %g (len %lld t %lld splits %d)", worst_df, (long long)len,
              (long long)t, splits);
    tile_free(ctx, pa.q), tile_free(ctx, pa.o), tile_free(ctx, pa.k_cache), tile_free(ctx, pa.v_cache);
    tile_free(ctx, pa.block_tables), tile_free(ctx, pa.context_lens), tile_free(ctx, fa.k), tile_free(ctx, fa.v), tile_free(ctx, fa.o);
    free(hqv), free(hc[0]), free(hc[1]), free(hkvv[0]), free(hkvv[1]), free(od), free(of), free(vq), free(vc), free(p), free(perm);
}

Test(attention_api, fwd_and_decode_paged_agree, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    fwd_decode_agree(ctx, 77, 1, 16, 1);
    fwd_decode_agree(ctx, 150, 4, 32, 3);
    tile_context_destroy(ctx);
}

Test(attention_api, decode_paged_f8_cache, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int c3[] = {1, 15, 1000}, c2[] = {8, 77};
    run_paged(ctx, &(PagedCase){TILE_F16, true, 3, 4, 1, 1, 64, 16, c3, 0, false, 4, false});
    run_paged(ctx, &(PagedCase){TILE_BF16, true, 3, 4, 2, 1, 128, 32, c3, 1, false, 1, false});
    run_paged(ctx, &(PagedCase){TILE_BF16, true, 2, 8, 2, 4, 64, 16, c2, 2, false, 2, false});
    run_paged(ctx, &(PagedCase){TILE_F16, true, 2, 2, 1, 3, 256, 16, c2, 0, false, 0, false}); /* head_dim 256: 8 warps */
    tile_context_destroy(ctx);
}

/* The documented parameter space at its corners (hopper_attention_api runs them on sm_90a's wgmma, warp
 * specialization and tensor maps): every BLOCK_D bucket at a head_dim that is no power of two
 * (16, 48 -> 64, 112 -> 128, 144 and 240 -> 256), an odd number of query heads per KV head (3, and MQA
 * with 5), more queries than keys under the bottom-right causal rule (rows without keys), a single query
 * row, a given and a default softmax scale, f8e4m3 inputs at the smallest head_dims (16 and 48: one or
 * two k32 steps of the f8 dots). */
Test(attention_api, fwd_corners, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_attention(ctx, &(AttnCase){TILE_F16, 2, 6, 2, 5, 11, 16, true, -1, -1, NULL, NULL, true, false, 0});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 6, 2, 13, 4, 48, true, -1, -1, NULL, NULL, false, false, 0});
    run_attention(ctx, &(AttnCase){TILE_F16, 2, 5, 1, 1, 9, 112, false, -1, -1, NULL, NULL, false, false, 0.3f});
    run_attention(ctx, &(AttnCase){TILE_BF16, 1, 3, 1, 6, 7, 144, true, -1, -1, NULL, NULL, true, false, 0});
    run_attention(ctx, &(AttnCase){TILE_F16, 1, 3, 3, 5, 6, 240, false, 2, 1, NULL, NULL, false, false, 0});
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 1, 3, 1, 7, 19, 16, true, -1, -1, NULL, NULL, true, false, 0}, F8(0));
    run_attention_f8(ctx, &(AttnCase){TILE_F8E4M3, 2, 6, 2, 9, 5, 48, true, -1, -1, NULL, NULL, false, false, 0}, F8(TILE_F16));
    tile_context_destroy(ctx);
}

/* Decode at the same corners: head_dims 16, 48 and 144 (no power of two above 16), odd query heads per KV
 * head, 1..7 new tokens, every block size, contexts of 1 and of no multiple of the block, sequences sharing
 * their first physical block (a shared prefix), f8 caches, split and not. */
Test(attention_api, decode_corners, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int c3[] = {1, 37, 100}, c2[] = {9, 70};
    run_paged(ctx, &(PagedCase){TILE_F16, false, 3, 6, 2, 1, 16, 16, c3, 1, false, 1, true});
    run_paged(ctx, &(PagedCase){TILE_BF16, true, 2, 3, 1, 7, 48, 64, c2, 3, false, 2, true}); /* 3 asked: cdiv(70, BN 64) = 2 */
    run_paged(ctx, &(PagedCase){TILE_F16, true, 3, 5, 5, 1, 144, 32, c3, 0, false, 0, true});
    tile_context_destroy(ctx);
}

/* ============================ misuse ============================ */

#define EXPECT_FAIL(call, status, text)                                                                                       \
    do {                                                                                                                      \
        tile_status st_ = (call);                                                                                             \
        cr_expect_eq(st_, status, "%s: got %s (%s)", #call, tile_status_string(st_), tile_last_error(ctx));                  \
        cr_expect(strstr(tile_last_error(ctx), text), "%s: message '%s' lacks '%s'", #call, tile_last_error(ctx), text);   \
    } while (0)

Test(attention_api, fwd_bad_arguments) {
    tile_context *ctx = open_ctx();
    tile_devptr buf, small;
    cr_assert_eq(tile_malloc(ctx, 1 << 20, &buf), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 64, &small), TILE_OK);
    tile_attention_args good = {.dtype = TILE_F16, .batch = 2, .heads_q = 4, .heads_kv = 2, .head_dim = 64, .seq_q = 16, .seq_k = 16,
                                .q = buf, .k = buf + (256 << 10), .v = buf + (512 << 10), .o = buf + (768 << 10), .window_left = -1,
                                .window_right = -1};
    tile_attention_args a;
    cr_expect_eq(tile_attention_fwd(NULL, &good), TILE_ERROR_INVALID_VALUE);
    EXPECT_FAIL(tile_attention_fwd(ctx, NULL), TILE_ERROR_INVALID_VALUE, "args is NULL");
    a = good, a.dtype = TILE_F32;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "dtype");
    a = good, a.head_dim = 72;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "head_dim 72 is not supported");
    a = good, a.head_dim = 512;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "head_dim 512");
    a = good, a.heads_kv = 3;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "multiple of heads_kv");
    a = good, a.seq_q = -1;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, ">= 0");
    a = good, a.seq_k = (int64_t)1 << 40;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "2^31");
    a = good, a.q_stride[1] = -5, a.q_stride[2] = 64;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "non-negative");
    /* a stride past 32 bits names its tensor and dimension (it said "every stride"), computed from the sizes or given */
    a = good, a.seq_q = a.seq_k = (int64_t)1 << 23;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE,
                "q's batch stride 2147483648 (contiguous, from the sizes) is not below 2^31");
    a = good, a.seq_q = a.seq_k = ((int64_t)1 << 31) - 1, a.heads_q = a.heads_kv = (int64_t)1 << 30; /* the sizes' product past 2^63 */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "stride (contiguous, from the sizes) is past 2^63, not below 2^31");
    a = good, a.o_stride[0] = (int64_t)1 << 31, a.o_stride[1] = 256, a.o_stride[2] = 64;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's batch stride 2147483648 is not below 2^31");
    a = good, a.window_left = -7;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "window");
    a = good, a.q = 0;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "q is a null device pointer");
    a = good, a.v = 0x1234;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "v (0x1234) was not allocated");
    a = good, a.q = buf + 1;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "is not aligned to its 2-byte elements");
    a = good, a.causal = 3;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "causal = 3: 0 or 1");
    /* a valid call the grid cannot hold: unsupported, not invalid */
    a = good, a.batch = 1100, a.heads_q = 64, a.heads_kv = 64, a.seq_q = a.seq_k = 1;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_UNSUPPORTED, "batch * heads_q must be at most 65535");
    a = good, a.o = small;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o: ");
    a = good, a.lse = small;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "lse");
    a = good, a.cu_seqlens_q = buf;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "go together");
    a = good, a.cu_seqlens_q = a.cu_seqlens_k = buf, a.total_q = 100000, a.total_k = 16;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "run past the end");
    /* nothing to do is fine, and no launch */
    a = good, a.batch = 0;
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    /* f8e4m3 inputs: the appended fields need size = sizeof; scales and o_dtype checked */
    tile_attention_args f8 = good;
    f8.size = sizeof f8, f8.dtype = TILE_F8E4M3, f8.q_scale = 0.5f;
    cr_expect_eq(tile_attention_fwd_prepare(ctx, &f8), TILE_OK, "%s", tile_last_error(ctx));
    a = f8, a.size = 0;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "set args->size = sizeof(tile_attention_args)");
    a = f8, a.size = offsetof(tile_attention_args, q_scale);
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "does not cover them");
    a = f8, a.o_dtype = TILE_F8E4M3;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o_dtype 3: TILE_F16 or TILE_BF16");
    a = good, a.size = sizeof a, a.o_dtype = TILE_BF16;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o_dtype 2: 0 or dtype");
    a = good, a.size = sizeof a, a.v_scale = 2;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "apply to TILE_F8E4M3 inputs only");
    a = good, a.size = sizeof a, a.q_scale = 1, a.k_scale = 1, a.v_scale = 1; /* 1 is no scale, as 0 */
    cr_expect_eq(tile_attention_fwd_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a.k_scale = 0.5f;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "(0 or 1 with f16/bf16)");
    a = f8, a.k_scale = INFINITY;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "tile_attention_fwd: k_scale = inf: a scale is a finite positive number");
    a = f8, a.q_scale = -2.0f / 448; /* it ran with every score's sign flipped */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "tile_attention_fwd: q_scale = -0.00446429: a scale");
    a = f8, a.v_scale = NAN;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "v_scale = nan: a scale");
    a = good, a.size = sizeof a, a.k_scale = -1; /* with f16/bf16 too, before it would be called no scale of theirs */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "k_scale = -1: a scale");
    a = f8, a.softmax_scale = 1e-30f, a.q_scale = 1e-20f;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "softmax_scale * q_scale * k_scale = 0");
    a = f8, a.o = buf + 1; /* o is 2-byte f16/bf16 even with f8 inputs */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "is not aligned to its 2-byte elements");
    a = f8, a.o = small;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o: ");
    /* o is written while other programs still read k and v: it may share no byte with them (it ran, with wrong
     * rows); o over q in place is left alone (each program reads its rows of q before it writes them) */
    a = good, a.o = good.v + 4096;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o [0x");
    cr_expect(strstr(tile_last_error(ctx), "overlaps v [0x"), "%s", tile_last_error(ctx));
    a = good, a.k = good.o - 1024;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps k [0x");
    a = good, a.o = good.k + 2 * 16 * 2 * 64 * 2; /* right after k's last byte */
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    /* over q: exactly in place (q's pointer and strides) runs; shifted by a head, or with other strides, a program
     * would write rows of q another has yet to read: refused (both ran) */
    a = good, a.o = good.q;
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a = good, a.o = good.q + 64 * 2;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o [0x");
    cr_expect(strstr(tile_last_error(ctx), "overlaps q [0x"), "%s", tile_last_error(ctx));
    a = good, a.o = good.q, a.o_stride[0] = 16 * 4 * 96, a.o_stride[1] = 4 * 96, a.o_stride[2] = 96;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps q [0x");
    /* nor may o overlap itself: programs write their rows at once (these ran, each element the last writer's);
     * inputs may (a stride 0 broadcasts), and a layout that interleaves batches between heads is fine */
    a = good, a.o_stride[0] = 16 * 4 * 64, a.o_stride[1] = 4 * 64, a.o_stride[2] = 32; /* heads half a head apart */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's head stride 32 is under the 64 elements of a head_dim");
    a = good, a.o_stride[0] = 16 * 4 * 64, a.o_stride[1] = 0, a.o_stride[2] = 64; /* every token on one row */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's token stride 0");
    a = good, a.o_stride[0] = 0, a.o_stride[1] = 4 * 64, a.o_stride[2] = 64; /* both sequences on one */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's batch stride 0");
    a = good, a.o_stride[0] = 16 * 4 * 64, a.o_stride[1] = 2 * 64, a.o_stride[2] = 64; /* token t's heads 2, 3 are t + 1's 0, 1 */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's token stride 128 is under the 256 elements its heads span");
    a = good, a.o_stride[0] = 16 * 4 * 64, a.o_stride[1] = 4 * 64, a.o_stride[2] = 0, a.heads_q = a.heads_kv = 1;
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "one head: its stride is never used: %s", tile_last_error(ctx));
    a = good, a.q_stride[0] = 0, a.q_stride[1] = 4 * 64, a.q_stride[2] = 64; /* one Q for both sequences: read only */
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a = good, a.o_stride[0] = 64, a.o_stride[1] = 2 * 4 * 64, a.o_stride[2] = 2 * 64; /* batch 1 between batch 0's heads */
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a = good, a.batch = 0, a.o_stride[1] = 0, a.o_stride[2] = 64;
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "nothing to compute: %s", tile_last_error(ctx));
    /* the LSE too is written while other programs read q, k, v (and the offsets); it shares no byte with o either
     * (it ran, with rows of q, k or o overwritten); right after o is fine */
    a = good, a.lse = good.k + 2048;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "lse [0x");
    cr_expect(strstr(tile_last_error(ctx), "overlaps k [0x"), "%s", tile_last_error(ctx));
    a = good, a.lse = good.q;
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps q [0x");
    a = good, a.lse = good.o + 2 * 16 * 4 * 64 * 2 - 4; /* o's last element */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps o [0x");
    a = good, a.lse = good.o + 2 * 16 * 4 * 64 * 2;
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    tile_devptr cu_dev = buf + (1 << 20) - 1024;
    a = good, a.seq_q = a.seq_k = 15, a.cu_seqlens_q = a.cu_seqlens_k = cu_dev, a.total_q = a.total_k = 30; /* varlen */
    int32_t cu[3] = {0, 15, 30};
    cr_assert_eq(tile_memcpy_htod(ctx, cu_dev, cu, sizeof cu), TILE_OK);
    cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a.lse = cu_dev - 8; /* the LSE ([heads_q, total_q] f32) over the offsets */
    EXPECT_FAIL(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps cu_seqlens_q [0x");
    tile_context_destroy(ctx);
}

Test(attention_api, decode_bad_arguments) {
    tile_context *ctx = open_ctx();
    tile_devptr buf, small, tables, lens, ws;
    cr_assert_eq(tile_malloc(ctx, 1 << 20, &buf), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 64, &small), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4 * 2 * 4, &tables), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 2 * 4, &lens), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 16, &ws), TILE_OK);
    int32_t h_tables[8] = {0, 1, 2, 3, 4, 5, 6, 7}, h_lens[2] = {50, 64};
    cr_assert_eq(tile_memcpy_htod(ctx, tables, h_tables, sizeof h_tables), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, lens, h_lens, sizeof h_lens), TILE_OK);
    tile_paged_attention_args good = {.dtype = TILE_BF16, .num_seqs = 2, .heads_q = 8, .heads_kv = 2, .head_dim = 64, .num_tokens = 1,
                                      .block_size = 16, .num_blocks = 8, .q = buf, .o = buf + (256 << 10), .k_cache = buf + (512 << 10),
                                      .v_cache = buf + (768 << 10),
                                      .block_tables = tables, .context_lens = lens, .max_context_len = 64, .num_splits = 1};
    tile_paged_attention_args a;
    cr_expect_eq(tile_attention_decode_paged(NULL, &good), TILE_ERROR_INVALID_VALUE);
    EXPECT_FAIL(tile_attention_decode_paged(ctx, NULL), TILE_ERROR_INVALID_VALUE, "args is NULL");
    a = good, a.kv_dtype = TILE_F8E5M2;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "kv_dtype");
    a = good, a.head_dim = 100;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "head_dim 100 is not supported");
    a = good, a.heads_q = 7;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "heads_q (7) must be a multiple of heads_kv (2)");
    a = good, a.block_size = 8;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "block_size 8: must be 16, 32 or 64");
    a = good, a.num_tokens = 9;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "num_tokens 9: must be 1..8");
    a = good, a.k_stride[0] = (int64_t)1 << 31, a.k_stride[1] = 128, a.k_stride[2] = 64;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "k_cache's block stride 2147483648 is not below 2^31");
    a = good, a.heads_q = 64, a.heads_kv = 1, a.num_tokens = 2;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_UNSUPPORTED, "at most 64");
    a = good, a.max_context_len = 65, a.block_table_stride = 4;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "block_table_stride");
    a = good, a.num_splits = 65;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "num_splits");
    a = good, a.num_seqs = -2;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "num_seqs");
    /* scales dequantize f8 codes: with a bf16 cache one other than 0 or 1 is refused (it was ignored) */
    a = good, a.k_scale = 0.5f;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "apply to an f8e4m3 cache only");
    a = good, a.v_scale = 2;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "apply to an f8e4m3 cache only");
    a = good, a.k_scale = a.v_scale = 1;
    cr_expect_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    /* an f8 cache's scale is a finite positive number, as vLLM's and FlashInfer's (0 means 1): a negative, NaN or
     * infinite one is refused by name (a negative one ran, every score's sign flipped) */
    {
        const float bad[] = {-0.5f, -1e-30f, NAN, INFINITY, -INFINITY};
        const char *const shown[] = {"-0.5", "-1e-30", "nan", "inf", "-inf"};
        for (int i = 0; i < 5; i++) {
            char want[96];
            a = good, a.kv_dtype = TILE_F8E4M3, a.k_scale = 0.25f, a.v_scale = bad[i];
            snprintf(want, sizeof want, "tile_attention_decode_paged: v_scale = %s: a scale is a finite positive", shown[i]);
            EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, want);
            a.k_scale = bad[i], a.v_scale = 0;
            snprintf(want, sizeof want, "tile_attention_decode_paged_prepare: k_scale = %s: a scale", shown[i]);
            EXPECT_FAIL(tile_attention_decode_paged_prepare(ctx, &a), TILE_ERROR_INVALID_VALUE, want);
        }
        /* -0 is 0 (1); a tiny scale is one (the plan, without compiling the f8 variant) */
        a = good, a.kv_dtype = TILE_F8E4M3, a.k_scale = -0.0f, a.v_scale = 1e-30f;
        size_t b;
        cr_expect_eq(tile_paged_attention_workspace_size(ctx, &a, &b, NULL), TILE_OK, "%s", tile_last_error(ctx));
    }
    a = good, a.k_cache = 0;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "k_cache is a null device pointer");
    a = good, a.context_lens = lens + 2;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "context_lens (0x");
    a = good, a.check_tables = 2;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "check_tables = 2: 0 or 1");
    a = good, a.context_lens = 0xdead0000;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "context_lens (0xdead0000) was not allocated");
    a = good, a.v_cache = small;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "v_cache: ");
    a = good, a.block_tables = small + 48;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "block_tables");
    a = good, a.block_size = 64, a.max_context_len = 256, a.num_splits = 4, a.workspace = ws, a.workspace_bytes = 16;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "workspace of 16 bytes");
    a.workspace = ws + 8, a.workspace_bytes = 1 << 16; /* 16-byte aligned (tile.h) */
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "is not aligned to its 16-byte");
    /* a workspace passed to a call that does not split (it needs none) is checked alike: the same bug would otherwise
     * surface only with a shape that splits */
    {
        size_t b;
        int n;
        a = good, a.num_splits = 1;
        cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &b, &n), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert(b == 0 && n == 1, "%zu bytes, %d splits", b, n);
    }
    a = good, a.num_splits = 1, a.workspace = ws + 8, a.workspace_bytes = 8;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "workspace (0x");
    cr_expect(strstr(tile_last_error(ctx), "is not aligned to its 16-byte"), "%s", tile_last_error(ctx));
    a.workspace = 0xdead0000;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "workspace (0xdead0000) was not allocated");
    a.workspace = ws, a.workspace_bytes = 17; /* ws holds 16 */
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "workspace_bytes: ");
    cr_expect(strstr(tile_last_error(ctx), "run past the end of its allocation"), "%s", tile_last_error(ctx));
    a.workspace_bytes = 16;
    cr_expect_eq(tile_attention_decode_paged(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    /* the tables, checked on request: a block past num_blocks, a context past max_context_len */
    h_tables[5] = 8;
    cr_assert_eq(tile_memcpy_htod(ctx, tables, h_tables, sizeof h_tables), TILE_OK);
    a = good, a.check_tables = 1;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "block_tables[1][1] = 8 is not a block");
    h_tables[5] = 5, h_lens[1] = 65;
    cr_assert_eq(tile_memcpy_htod(ctx, tables, h_tables, sizeof h_tables), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, lens, h_lens, sizeof h_lens), TILE_OK);
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "context_lens[1] = 65");
    a = good, a.o = good.k_cache + 100;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps k_cache [0x");
    a = good, a.v_cache = good.o;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps v_cache [0x");
    /* o over q: exactly in place or not at all, as for the prefill */
    a = good, a.o = good.q + 64 * 2;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps q [0x");
    /* nor o itself (it ran, each element the last writer's), here or in the split workspace's size */
    a = good, a.o_stride[0] = 8 * 64, a.o_stride[1] = 8 * 64, a.o_stride[2] = 48;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's head stride 48 is under the 64 elements of a head_dim");
    a = good, a.o_stride[0] = 4 * 64, a.o_stride[1] = 8 * 64, a.o_stride[2] = 64; /* sequence 1 over sequence 0's heads 4..7 */
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's sequence stride 256 is under the 512 elements its heads span");
    {
        size_t b;
        EXPECT_FAIL(tile_paged_attention_workspace_size(ctx, &a, &b, NULL), TILE_ERROR_INVALID_VALUE, "o's sequence stride 256");
    }
    a = good, a.num_tokens = 2, a.o_stride[0] = 2 * 8 * 64, a.o_stride[1] = 0, a.o_stride[2] = 64;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "o's token stride 0");
    /* nor with the tables the programs read, and the split workspace (written by the splits, read by the merge
     * while it writes o) shares no byte with any of them */
    a = good, a.block_tables = good.o + 64;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps block_tables [0x");
    a = good, a.context_lens = good.o + 8;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "overlaps context_lens [0x");
    h_lens[1] = 64;
    cr_assert_eq(tile_memcpy_htod(ctx, lens, h_lens, sizeof h_lens), TILE_OK);
    a = good, a.o = good.q; /* in place */
    cr_expect_eq(tile_attention_decode_paged(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a = good, a.o_stride[0] = 64, a.o_stride[1] = 8 * 2 * 64, a.o_stride[2] = 2 * 64; /* sequences interleaved by head: apart */
    cr_expect_eq(tile_attention_decode_paged(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a = good, a.block_size = 64, a.num_blocks = 2, a.max_context_len = 256, a.num_splits = 4, a.block_table_stride = 4;
    size_t need;
    int splits;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &need, &splits), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_gt(splits, 1);
    a.workspace = good.o - 256, a.workspace_bytes = need; /* its end over o */
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "o [0x");
    cr_expect(strstr(tile_last_error(ctx), "overlaps workspace [0x"), "%s", tile_last_error(ctx));
    a.workspace = good.q + 64;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "workspace [0x");
    cr_expect(strstr(tile_last_error(ctx), "overlaps q [0x"), "%s", tile_last_error(ctx));
    a.workspace = good.o + (64 << 10);
    cr_expect_eq(tile_attention_decode_paged(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    /* workspace_bytes is the caller's word for what it holds: no more than lies between workspace and the end of
     * its allocation (it was accepted as long as the bytes the splits need fit) */
    a.workspace_bytes = (1 << 20) - (320 << 10) + 1;
    EXPECT_FAIL(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE, "tile_attention_decode_paged: workspace_bytes: ");
    {
        char want[160];
        snprintf(want, sizeof want, "%zu bytes at 0x%llx run past the end of its allocation (%d bytes at", a.workspace_bytes,
                 (unsigned long long)a.workspace, 1 << 20);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
    }
    a.workspace_bytes = (1 << 20) - (320 << 10); /* to the end of buf: more than the splits need, all there */
    cr_expect_eq(tile_attention_decode_paged(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
}

/* ============================== CLI ============================== */

Test(attention_api, cli_run, .timeout = 120) {
    const char *cmds[] = {
        TILE_CLI " run attention --device emu --batch 1 --seq 40 --heads 2 --head-dim 64 --causal --dtype f16 --reps 1 > /dev/null",
        TILE_CLI " run decode --device emu --batch 2 --context 100 --heads 4 --heads-kv 1 --head-dim 64 --tokens 2 --reps 1 > /dev/null",
        TILE_CLI " run paged-attention --device emu --batch 1 --context 300 --heads 2 --head-dim 64 --kv-dtype f8e4m3 --reps 1 > /dev/null",
        /* a random token tree per sequence (tree_mask), checked against the reference with the same mask */
        TILE_CLI " run decode --device emu --batch 3 --context 37 --heads 4 --heads-kv 2 --head-dim 32 --tokens 6 --tree --reps 1 > /dev/null",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) cr_expect_eq(system(cmds[i]), 0, "%s", cmds[i]);
    cr_expect_neq(system(TILE_CLI " run attention --device emu --head-dim 72 --seq 4 2> /dev/null"), 0, "head_dim 72 must fail");
    /* sizes 0 as the API takes them: --seq-k 0 (every row sees no key: O = 0, checked against the reference over
     * an output poisoned with NaN), --batch 0 and --seq 0 (nothing to compute); a negative one stays a usage error */
    static const struct {
        const char *opts;
        int rc;
        const char *want;
    } zero[] = {{"--seq 24 --seq-k 0", 0, "\"seq_k\":0,"},     {"--seq 24 --seq-k 0 --causal", 0, "\"seq_k\":0,"},
                {"--seq 24 --batch 0", 0, "\"checked_rows\":0,"}, {"--seq 0 --seq-k 9", 0, "\"checked_rows\":0,"},
                {"--seq 24 --seq-k -1", 2, ""}};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) {
        char cmd[512], out[2048] = "";
        snprintf(cmd, sizeof cmd, TILE_CLI " run attention --device emu --heads 2 --head-dim 32 --dtype f16 --reps 1 --json %s 2>&1",
                 zero[i].opts);
        FILE *f = popen(cmd, "r");
        cr_assert(f);
        out[fread(out, 1, sizeof out - 1, f)] = 0;
        int st = pclose(f);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == zero[i].rc, "%s: exit %d\n%s", zero[i].opts, WEXITSTATUS(st), out);
        if (zero[i].rc == 0)
            cr_expect(strstr(out, zero[i].want) && strstr(out, "\"ok\":true") && (i >= 2 || strstr(out, "\"checked_rows\":48,")),
                      "%s:\n%s", zero[i].opts, out);
    }
}

/* Paged decode reading a physical block whose element offset passes 2^31 (block 2200000 of 1024 elements, in
 * 4.5 GB caches: the kernel offsets blocks in 64 bits, and the caches may hold up to 2^31 - 1 blocks, each of fewer
 * than 2^31 elements), next to a near one, against float64, on emu:sm_80 and emu:sm_90a.  The emulator's device memory
 * is calloc'd: only the blocks written cost memory. */
Test(attention_api, paged_blocks_past_2_31_elements, .timeout = 120) {
    const char *devn[] = {"emu:sm_80", "emu:sm_90a"};
    enum { D = 64, BS = 16, CTX = 20 };
    const int64_t far = 2200000, nblocks = far + 1;
    float q[D], kf[CTX][D], vf[CTX][D];
    uint16_t hq[D], hk[CTX][D], hv[CTX][D];
    seed_rng();
    for (int j = 0; j < D; j++) q[j] = (float)f16_to_d(f32_to_f16((float)urand())), hq[j] = f32_to_f16(q[j]);
    for (int t = 0; t < CTX; t++) for (int j = 0; j < D; j++) {
        hk[t][j] = f32_to_f16((float)urand()); kf[t][j] = (float)f16_to_d(hk[t][j]);
        hv[t][j] = f32_to_f16((float)urand()); vf[t][j] = (float)f16_to_d(hv[t][j]);
    }
    int32_t table[2] = {(int32_t)far, 5}, ctxl[1] = {CTX};
    for (int di = 0; di < 2; di++) {
        tile_context *ctx;
        tile_context_options o = {.size = sizeof o, .device = devn[di]};
        cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
        tile_devptr dk, dv, dq, dout, dt, dc;
        size_t cb = (size_t)nblocks * BS * D * 2;
        cr_assert_eq(tile_malloc(ctx, cb, &dk), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, cb, &dv), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, D * 2, &dq), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, D * 2, &dout), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, 8, &dt), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, 4, &dc), TILE_OK);
        for (int t = 0; t < CTX; t++) {
            size_t blk = (size_t)table[t / BS], off = (blk * BS + t % BS) * D * 2;
            cr_assert_eq(tile_memcpy_htod(ctx, dk + off, hk[t], D * 2), TILE_OK);
            cr_assert_eq(tile_memcpy_htod(ctx, dv + off, hv[t], D * 2), TILE_OK);
        }
        uint16_t pois[D];
        memset(pois, 0xff, sizeof pois);
        cr_assert_eq(tile_memcpy_htod(ctx, dq, hq, sizeof hq), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dout, pois, sizeof pois), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dt, table, 8), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dc, ctxl, 4), TILE_OK);
        tile_paged_attention_args a = {.size = sizeof a, .dtype = TILE_F16, .num_seqs = 1, .heads_q = 1, .heads_kv = 1, .head_dim = D,
                                       .num_tokens = 1, .block_size = BS, .num_blocks = nblocks, .q = dq, .o = dout, .k_cache = dk,
                                       .v_cache = dv, .block_tables = dt, .block_table_stride = 2, .context_lens = dc,
                                       .max_context_len = CTX, .num_splits = 1};
        tile_status st = tile_attention_decode_paged(ctx, &a);
        cr_assert_eq(st, TILE_OK, "%s: %s", devn[di], tile_last_error(ctx));
        cr_assert_eq(tile_synchronize(ctx), TILE_OK);
        uint16_t ho[D];
        cr_assert_eq(tile_memcpy_dtoh(ctx, ho, dout, sizeof ho), TILE_OK);
        double s[CTX], mx = -INFINITY, l = 0;
        for (int t = 0; t < CTX; t++) { s[t] = 0; for (int j = 0; j < D; j++) s[t] += (double)q[j] * kf[t][j]; s[t] /= sqrt(D); mx = fmax(mx, s[t]); }
        for (int t = 0; t < CTX; t++) l += exp(s[t] - mx);
        for (int j = 0; j < D; j++) {
            double r = 0;
            for (int t = 0; t < CTX; t++) r += exp(s[t] - mx) / l * vf[t][j];
            float got = (float)f16_to_d(ho[j]);
            cr_expect(fabs(got - r) < 2e-3, "%s o[%d] %g want %g (seed %llu)", devn[di], j, got, r, (unsigned long long)seed);
        }
        tile_context_destroy(ctx);
    }
}

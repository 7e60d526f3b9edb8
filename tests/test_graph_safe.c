/* test_graph_safe.c - the promise of tile.h's "preparing calls": after
 * tile_gemm_prepare, tile_attention_fwd_prepare,
 * tile_attention_decode_paged_prepare and tile_moe_prepare, repeated calls of
 * the four APIs with caller-provided workspaces make no device allocation,
 * free, synchronization, compile or module load (tile_context_stats read
 * with tile_context_get_stats_ex), so they can be captured in a CUDA graph.
 * Their results are then checked against ref/'s float64 references (as in
 * tests/test_attention_api.c and tests/test_moe.c).  Paged decode runs with
 * two splits, so its merge kernel and workspace are exercised; MoE zeroes
 * its output (an asynchronous memset) on every call.
 *
 * The fused calls' _prepare (norms, gated activation, sampling, verification) likewise, with fewer calls each.
 *
 * Also here: tile_context_get_stats_ex with an older-sized struct, and
 * tile_last_error per thread (two threads failing different calls on one
 * context at once each read only their own message). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static tile_context *open_ctx(void) {
    tile_context_options o = {.device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    return ctx;
}
static tile_devptr upload(tile_context *ctx, const void *h, size_t bytes) {
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, bytes, &d), TILE_OK, "%s", tile_last_error(ctx));
    if (h) cr_assert_eq(tile_memcpy_htod(ctx, d, h, bytes), TILE_OK, "%s", tile_last_error(ctx));
    return d;
}
/* n random f16 values in [-1, 1): the bits into h, their exact values into v */
static void fill16(size_t n, uint16_t *h, double *v) {
    for (size_t i = 0; i < n; i++) {
        h[i] = f32_to_f16((float)urand());
        v[i] = f16_to_d(h[i]);
    }
}
static tile_context_stats stats(tile_context *ctx) {
    tile_context_stats s;
    cr_assert_eq(tile_context_get_stats_ex(ctx, &s, sizeof s), TILE_OK);
    return s;
}

/* ---- the four problems, with their host inputs ---- */
enum { GM = 40, GN = 48, GK = 32 };                                     /* gemm f16 -> f32 */
enum { AB = 1, AH = 2, AHK = 1, AD = 32, ASQ = 20, ASK = 40 };          /* attention fwd, causal, with LSE */
enum { PS = 2, PH = 4, PHK = 2, PD = 32, PBS = 16, PNB = 8, PMAX = 100 }; /* paged decode, 2 splits */
enum { MT = 7, MH = 32, MI = 32, ME = 4, MK = 2 };                      /* MoE with given routing */
static const int32_t plens[PS] = {100, 37};

typedef struct Problems {
    tile_gemm_args g;
    tile_attention_args at;
    tile_paged_attention_args pa;
    tile_moe_args moe;
    double ga[GM * GK], gb[GK * GN];
    double aq[AB * ASQ * AH * AD], ak[AB * ASK * AHK * AD], av[AB * ASK * AHK * AD];
    double pq[PS * PH * PD], pk[PNB * PBS * PHK * PD], pv[PNB * PBS * PHK * PD];
    int32_t ptables[PS * 7];
    double mx[MT * MH], mw1[ME * 2 * MI * MH], mw2[ME * MH * MI], mtw[MT * MK];
    int32_t mids[MT * MK];
} Problems;

static tile_devptr put16(tile_context *ctx, size_t n, double *v) {
    uint16_t *h = malloc(2 * n);
    fill16(n, h, v);
    tile_devptr d = upload(ctx, h, 2 * n);
    free(h);
    return d;
}

static void problems_make(tile_context *ctx, Problems *p) {
    memset(p, 0, sizeof *p);
    p->g = (tile_gemm_args){.m = GM, .n = GN, .k = GK, .lda = GK, .ldb = GN, .ldc = GN, .in_dtype = TILE_F16, .out_dtype = TILE_F32,
                            .alpha = 1};
    p->g.a = put16(ctx, GM * GK, p->ga);
    p->g.b = put16(ctx, GK * GN, p->gb);
    p->g.c = upload(ctx, NULL, 4 * GM * GN);

    p->at = (tile_attention_args){.dtype = TILE_F16, .batch = AB, .heads_q = AH, .heads_kv = AHK, .head_dim = AD, .seq_q = ASQ,
                                  .seq_k = ASK, .causal = 1, .window_left = -1, .window_right = -1};
    p->at.q = put16(ctx, NELEM(p->aq), p->aq);
    p->at.k = put16(ctx, NELEM(p->ak), p->ak);
    p->at.v = put16(ctx, NELEM(p->av), p->av);
    p->at.o = upload(ctx, NULL, 2 * NELEM(p->aq));
    p->at.lse = upload(ctx, NULL, 4 * AB * AH * ASQ);

    p->pa = (tile_paged_attention_args){.dtype = TILE_F16, .num_seqs = PS, .heads_q = PH, .heads_kv = PHK, .head_dim = PD,
                                        .num_tokens = 1, .block_size = PBS, .num_blocks = PNB, .max_context_len = PMAX,
                                        .num_splits = 2};
    p->pa.q = put16(ctx, NELEM(p->pq), p->pq);
    p->pa.o = upload(ctx, NULL, 2 * NELEM(p->pq));
    p->pa.k_cache = put16(ctx, NELEM(p->pk), p->pk);
    p->pa.v_cache = put16(ctx, NELEM(p->pv), p->pv);
    for (int i = 0; i < PS * 7; i++) p->ptables[i] = (int32_t)((i * 5 + 3) % PNB);
    p->pa.block_tables = upload(ctx, p->ptables, sizeof p->ptables);
    p->pa.context_lens = upload(ctx, plens, sizeof plens);
    int splits = 0;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &p->pa, &p->pa.workspace_bytes, &splits), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(splits, 2);
    p->pa.workspace = upload(ctx, NULL, p->pa.workspace_bytes);

    p->moe = (tile_moe_args){.tokens = MT, .hidden = MH, .inter = MI, .experts = ME, .topk = MK, .dtype = TILE_F16};
    p->moe.x = put16(ctx, NELEM(p->mx), p->mx);
    p->moe.w1 = put16(ctx, NELEM(p->mw1), p->mw1);
    p->moe.w2 = put16(ctx, NELEM(p->mw2), p->mw2);
    p->moe.out = upload(ctx, NULL, 4 * MT * MH);
    float ftw[MT * MK];
    for (int t = 0; t < MT; t++)
        for (int j = 0; j < MK; j++) {
            p->mids[t * MK + j] = (t + 3 * j) % ME; /* distinct per token: MK <= ME and 3 * j differs mod 4 */
            ftw[t * MK + j] = (float)(0.25 + 0.5 * (urand() + 1) / 2);
            p->mtw[t * MK + j] = ftw[t * MK + j];
        }
    p->moe.topk_ids = upload(ctx, p->mids, sizeof p->mids);
    p->moe.topk_weights = upload(ctx, ftw, sizeof ftw);
    cr_assert_eq(tile_moe_workspace_size(&p->moe, &p->moe.workspace_bytes), TILE_OK);
    p->moe.workspace = upload(ctx, NULL, p->moe.workspace_bytes);
}

static void problems_run(tile_context *ctx, Problems *p) {
    cr_assert_eq(tile_gemm(ctx, &p->g), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_attention_fwd(ctx, &p->at), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_attention_decode_paged(ctx, &p->pa), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_moe_forward(ctx, &p->moe), TILE_OK, "%s", tile_last_error(ctx));
}

static void check_results(tile_context *ctx, const Problems *p) {
    /* gemm: f16 inputs are exact, accumulation in f32 */
    float gc[GM * GN];
    cr_assert_eq(tile_memcpy_dtoh(ctx, gc, p->g.c, sizeof gc), TILE_OK);
    for (int i = 0; i < GM; i++)
        for (int j = 0; j < GN; j++) {
            ref_gemm_args r = {.m = GM, .n = GN, .k = GK, .a = p->ga, .lda = GK, .b = p->gb, .ldb = GN, .alpha = 1};
            double mag, want = ref_gemm_at(&r, i, j, &mag);
            cr_assert(fabs(gc[i * GN + j] - want) <= 1e-5 * mag + 1e-6, "gemm C[%d][%d] = %.7g, want %.7g (seed %llu)", i, j,
                      gc[i * GN + j], want, (unsigned long long)seed);
        }
    /* attention fwd: O rounded to f16 (|V| <= 1), the LSE in f32 */
    uint16_t ao[NELEM(p->aq)];
    float alse[AB * AH * ASQ];
    cr_assert_eq(tile_memcpy_dtoh(ctx, ao, p->at.o, sizeof ao), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, alse, p->at.lse, sizeof alse), TILE_OK);
    static double want_o[NELEM(p->aq)], want_lse[AB * AH * ASQ];
    ref_attention_args ra = {.batch = AB, .heads_q = AH, .heads_kv = AHK, .head_dim = AD, .seq_q = ASQ, .seq_k = ASK, .q = p->aq,
                             .k = p->ak, .v = p->av, .o = want_o, .lse = want_lse, .causal = true, .window_left = -1, .window_right = -1};
    cr_assert(ref_attention(&ra));
    for (size_t i = 0; i < NELEM(ao); i++)
        cr_assert(fabs(f16_to_d(ao[i]) - want_o[i]) <= 2e-3, "attention o[%zu] = %.5g, want %.5g (seed %llu)", i, f16_to_d(ao[i]),
                  want_o[i], (unsigned long long)seed);
    for (size_t i = 0; i < NELEM(alse); i++)
        cr_assert(fabs(alse[i] - want_lse[i]) <= 1e-4 + 1e-5 * fabs(want_lse[i]), "attention lse[%zu] = %.7g, want %.7g", i, alse[i],
                  want_lse[i]);
    /* paged decode: as attention */
    uint16_t po[NELEM(p->pq)];
    cr_assert_eq(tile_memcpy_dtoh(ctx, po, p->pa.o, sizeof po), TILE_OK);
    static double want_p[NELEM(p->pq)];
    ref_paged_args rp = {.num_seqs = PS, .heads_q = PH, .heads_kv = PHK, .head_dim = PD, .num_tokens = 1, .block_size = PBS,
                         .num_blocks = PNB, .q = p->pq, .q_stride = {PH * PD, PH * PD, PD}, .o = want_p,
                         .o_stride = {PH * PD, PH * PD, PD}, .k_cache = p->pk, .v_cache = p->pv,
                         .k_stride = {PBS * PHK * PD, PHK * PD, PD}, .v_stride = {PBS * PHK * PD, PHK * PD, PD},
                         .block_tables = p->ptables, .block_table_stride = 7, .context_lens = plens};
    cr_assert(ref_paged_decode(&rp));
    for (size_t i = 0; i < NELEM(po); i++)
        cr_assert(fabs(f16_to_d(po[i]) - want_p[i]) <= 2e-3, "paged o[%zu] = %.5g, want %.5g (seed %llu)", i, f16_to_d(po[i]), want_p[i],
                  (unsigned long long)seed);
    /* MoE: h is rounded to f16 between the two GEMMs */
    float mo[MT * MH];
    cr_assert_eq(tile_memcpy_dtoh(ctx, mo, p->moe.out, sizeof mo), TILE_OK);
    static double want_m[MT * MH], mag[MT * MH];
    memset(want_m, 0, sizeof want_m), memset(mag, 0, sizeof mag);
    ref_moe_args rm = {.tokens = MT, .hidden = MH, .inter = MI, .experts = ME, .topk = MK, .x = p->mx, .ldx = MH, .w1 = p->mw1,
                       .w2 = p->mw2, .topk_ids = p->mids, .topk_weights = p->mtw};
    cr_assert(ref_moe_forward(&rm, want_m, MH, mag));
    for (int i = 0; i < MT * MH; i++)
        cr_assert(fabs(mo[i] - want_m[i]) <= (1.0 / 2048 + 3e-5) * mag[i] + 1e-6, "moe out[%d] = %.7g, want %.7g (seed %llu)", i, mo[i],
                  want_m[i], (unsigned long long)seed);
}

Test(graph_safe, prepared_calls_allocate_free_synchronize_and_compile_nothing, .timeout = 600) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static Problems p;
    problems_make(ctx, &p);
    cr_assert_eq(tile_gemm_prepare(ctx, &p.g), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_attention_fwd_prepare(ctx, &p.at), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_attention_decode_paged_prepare(ctx, &p.pa), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_moe_prepare(ctx, &p.moe), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s0 = stats(ctx);
    cr_assert_gt(s0.memory_hits + s0.disk_hits + s0.compiles, 0, "preparing loaded nothing");
    cr_assert_eq(s0.launches, 0, "preparing launched something");
    for (int rep = 0; rep < 3; rep++) problems_run(ctx, &p);
    tile_context_stats s1 = stats(ctx);
    cr_expect_eq(s1.allocations, s0.allocations, "prepared calls allocated %llu times", (unsigned long long)(s1.allocations - s0.allocations));
    cr_expect_eq(s1.frees, s0.frees, "prepared calls freed %llu times", (unsigned long long)(s1.frees - s0.frees));
    cr_expect_eq(s1.synchronizations, s0.synchronizations, "prepared calls synchronized %llu times",
                 (unsigned long long)(s1.synchronizations - s0.synchronizations));
    cr_expect_eq(s1.compiles, s0.compiles, "prepared calls compiled");
    cr_expect_eq(s1.disk_hits, s0.disk_hits, "prepared calls loaded from the disk cache");
    cr_expect_eq(s1.memory_hits, s0.memory_hits, "prepared calls loaded modules");
    /* gemm 1 launch, attention 1, paged 2 (attention and merge), MoE 5 (count, scan, scatter, gate_up, down) */
    cr_expect_eq(s1.launches - s0.launches, 3 * (1 + 1 + 2 + 5), "launches: %llu", (unsigned long long)(s1.launches - s0.launches));
    check_results(ctx, &p);
    tile_context_destroy(ctx);
}

/* What picks tile_gemm's variant (tile.h, "preparing calls"): prepared with every pointer 0 (an engine
 * preparing before it allocates) and beta != 0, the call with real 16-byte-aligned pointers and other alpha and
 * beta values (beta still non-zero) loads nothing and is right; beta 0 is another epilogue (no HAS_BETA),
 * so that call loads another variant. */
enum { EM = 21, EN = 19, EK = 13 };
Test(graph_safe, gemm_scalars_keep_the_prepared_variant, .timeout = 600) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static double ha[EM * EK], hb[EK * EN], hc[EM * EN];
    tile_devptr da = put16(ctx, EM * EK, ha), db = put16(ctx, EK * EN, hb), dc = upload(ctx, NULL, 4 * EM * EN);
    float fc[EM * EN];
    for (int i = 0; i < EM * EN; i++) fc[i] = (float)urand(), hc[i] = fc[i];
    tile_gemm_args g = {.size = sizeof g, .m = EM, .n = EN, .k = EK, .lda = EK, .ldb = EN, .ldc = EN, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1, .beta = 0.5f};
    cr_assert_eq(tile_gemm_prepare(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    g.a = da, g.b = db, g.c = dc, g.alpha = -1.5f, g.beta = 0.25f;
    cr_assert_eq(tile_memcpy_htod(ctx, dc, fc, sizeof fc), TILE_OK);
    tile_context_stats s0 = stats(ctx);
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s1 = stats(ctx);
    cr_expect_eq(s1.compiles + s1.disk_hits + s1.memory_hits, s0.compiles + s0.disk_hits + s0.memory_hits,
                 "other pointers, alpha and beta loaded a variant the prepare did not");
    cr_expect_eq(s1.allocations + s1.frees + s1.synchronizations, s0.allocations + s0.frees + s0.synchronizations);
    float gc[EM * EN];
    cr_assert_eq(tile_memcpy_dtoh(ctx, gc, dc, sizeof gc), TILE_OK);
    ref_gemm_args r = {.m = EM, .n = EN, .k = EK, .a = ha, .lda = EK, .b = hb, .ldb = EN, .alpha = -1.5, .beta = 0.25, .c = hc, .ldc = EN};
    for (int i = 0; i < EM; i++)
        for (int j = 0; j < EN; j++) {
            double mag, want = ref_gemm_at(&r, i, j, &mag);
            cr_assert(fabs(gc[i * EN + j] - want) <= 1e-5 * mag + 1e-6, "C[%d][%d] = %.7g, want %.7g (seed %llu)", i, j,
                      gc[i * EN + j], want, (unsigned long long)seed);
        }
    g.beta = 0;
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s2 = stats(ctx);
    cr_expect_gt(s2.compiles + s2.disk_hits + s2.memory_hits, s1.compiles + s1.disk_hits + s1.memory_hits,
                 "beta 0 ran the prepared HAS_BETA variant (documented as another variant)");
    tile_context_destroy(ctx);
}

/* The fused calls' _prepare: tile_fused_add_rmsnorm_prepare, tile_fused_add_layernorm_prepare,
 * tile_gated_activation_prepare, tile_sample_prepare and tile_spec_verify_prepare load every variant their calls
 * launch (pointers unaligned by 2 bytes pick the no_align_ptrs variants, zero optional pointers theirs), launch
 * nothing, and check no pointer (0 for every one still prepares); the calls then compile and load nothing, and
 * their results are right: the norms and the activation against float64, greedy sampling and greedy verification
 * against the argmax. */
enum { NT = 5, NH = 100, AD2 = 70, SB = 3, SV = 300, SD = 2 };
Test(graph_safe, fused_calls_prepared, .timeout = 600) {
    seed_rng();
    tile_context *ctx = open_ctx();
    /* inputs: x [NT, NH] (+1 element: x and r start 2 bytes in), r, w, b; gated input [NT, 2 AD2]; logits [SB, SV] */
    static uint16_t hx[NT * NH + 1], hr[NT * NH + 1], hw[NH], hb[NH], hg[NT * 2 * AD2];
    static double vx[NT * NH + 1], vr[NT * NH + 1], vw[NH], vb[NH], vg[NT * 2 * AD2];
    fill16(NELEM(hx), hx, vx), fill16(NELEM(hr), hr, vr), fill16(NH, hw, vw), fill16(NH, hb, vb), fill16(NELEM(hg), hg, vg);
    static float logits[SB * SV], tp[SB * (SD + 1) * SV], dp[SB * SD * SV];
    for (int i = 0; i < SB * SV; i++) logits[i] = (float)(4 * urand());
    for (int i = 0; i < SB * (SD + 1) * SV; i++) tp[i] = (float)(1 + urand()) / SV;
    for (int i = 0; i < SB * SD * SV; i++) dp[i] = 1.0f / SV;
    int32_t drafts[SB * SD];
    for (int r = 0; r < SB; r++)
        for (int j = 0; j < SD; j++) { /* row 0 drafts the argmax of both steps, row 1 of the first only, row 2 neither */
            double col[SV];
            for (int i = 0; i < SV; i++) col[i] = tp[(r * (SD + 1) + j) * SV + i];
            int32_t best = (int32_t)ref_argmax(SV, col);
            drafts[r * SD + j] = (r == 0 || (r == 1 && j == 0)) ? best : (best + 1) % SV;
        }
    tile_devptr dx = upload(ctx, hx, sizeof hx), dr = upload(ctx, hr, sizeof hr), dw = upload(ctx, hw, sizeof hw),
                db = upload(ctx, hb, sizeof hb), dno = upload(ctx, NULL, 2 * (NT * NH + 1)), dg = upload(ctx, hg, sizeof hg),
                dao = upload(ctx, NULL, 2 * NT * AD2), dl = upload(ctx, logits, sizeof logits), dso = upload(ctx, NULL, 4 * SB),
                dtp = upload(ctx, tp, sizeof tp), ddp = upload(ctx, dp, sizeof dp), ddr = upload(ctx, drafts, sizeof drafts),
                dacc = upload(ctx, NULL, 4 * SB), dot = upload(ctx, NULL, 4 * SB * (SD + 1));
    tile_norm_args rms = {.size = sizeof rms, .dtype = TILE_F16, .tokens = NT, .hidden = NH, .x = dx + 2, .residual = dr + 2,
                          .weight = dw, .eps = 1e-5f, .out = dno + 2};
    tile_norm_args ln = {.size = sizeof ln, .dtype = TILE_F16, .tokens = NT, .hidden = NH, .x = dx, .weight = dw, .bias = db,
                         .eps = 1e-5f, .out = dno};
    tile_gated_args act = {.size = sizeof act, .dtype = TILE_F16, .act = TILE_GATED_SILU, .tokens = NT, .d = AD2, .x = dg, .out = dao};
    tile_sample_args sam = {.size = sizeof sam, .dtype = TILE_F32, .batch = SB, .vocab = SV, .logits = dl, .temperature_value = 0,
                            .top_p_value = 1, .out = dso};
    tile_spec_verify_args spec = {.size = sizeof spec, .batch = SB, .num_draft = SD, .vocab = SV, .draft_tokens = ddr,
                                  .draft_probs = ddp, .target_probs = dtp, .greedy_value = 1, .accepted = dacc, .out_tokens = dot};
    /* no pointer is checked: all 0 (aligned, so another variant than rms's: not loaded by it) still prepares */
    tile_norm_args zero = rms;
    zero.x = zero.residual = zero.weight = zero.out = 0;
    cr_assert_eq(tile_fused_add_rmsnorm_prepare(ctx, &zero), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &zero), TILE_ERROR_INVALID_VALUE, "the call itself checks them");
    tile_context_stats s0 = stats(ctx);
    cr_assert_eq(tile_fused_add_rmsnorm_prepare(ctx, &rms), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_fused_add_layernorm_prepare(ctx, &ln), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_gated_activation_prepare(ctx, &act), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_sample_prepare(ctx, &sam), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_spec_verify_prepare(ctx, &spec), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s1 = stats(ctx);
    cr_assert_eq(s1.launches, s0.launches, "preparing launched something");
    cr_assert_geq(s1.memory_hits + s1.disk_hits + s1.compiles - (s0.memory_hits + s0.disk_hits + s0.compiles), 5,
                  "preparing loaded fewer than five variants");
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &rms), TILE_OK, "%s", tile_last_error(ctx));
    static uint16_t rms_out[NT * NH + 1], res_out[NT * NH + 1];
    cr_assert_eq(tile_memcpy_dtoh(ctx, rms_out, dno, sizeof rms_out), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, res_out, dr, sizeof res_out), TILE_OK);
    tile_context_stats s2 = stats(ctx);
    cr_assert_eq(tile_fused_add_layernorm(ctx, &ln), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_gated_activation(ctx, &act), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_sample(ctx, &sam), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_spec_verify(ctx, &spec), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s3 = stats(ctx);
    cr_expect_eq(s3.compiles, s1.compiles, "prepared calls compiled");
    cr_expect_eq(s3.disk_hits, s1.disk_hits, "prepared calls loaded from the disk cache");
    cr_expect_eq(s3.memory_hits, s1.memory_hits, "prepared calls loaded modules");
    cr_expect_eq(s3.launches - s1.launches, 5, "launches: %llu", (unsigned long long)(s3.launches - s1.launches));
    cr_expect_eq(s3.allocations + s3.frees, s1.allocations + s1.frees);
    cr_expect_eq(s3.synchronizations - s2.synchronizations, 0);
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    /* rmsnorm with residual (x and r 2 bytes in): r = round16(x + r), out = rmsnorm(r) */
    for (int t = 0; t < NT; t++) {
        double z[NH], y[NH];
        for (int i = 0; i < NH; i++) {
            z[i] = f16_to_d(f32_to_f16((float)(vx[1 + t * NH + i] + vr[1 + t * NH + i])));
            cr_assert_eq(f16_to_d(res_out[1 + t * NH + i]), z[i], "residual[%d, %d]", t, i);
        }
        ref_rmsnorm(NH, z, vw, 1e-5, y);
        for (int i = 0; i < NH; i++)
            cr_assert(fabs(f16_to_d(rms_out[1 + t * NH + i]) - y[i]) <= 2e-3 * fabs(y[i]) + 1e-3, "rmsnorm[%d, %d] = %g, want %g (seed %llu)",
                      t, i, f16_to_d(rms_out[1 + t * NH + i]), y[i], (unsigned long long)seed);
    }
    static uint16_t ln_out[NT * NH + 1], act_out[NT * AD2];
    cr_assert_eq(tile_memcpy_dtoh(ctx, ln_out, dno, sizeof ln_out), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, act_out, dao, sizeof act_out), TILE_OK);
    for (int t = 0; t < NT; t++) {
        double y[NH];
        ref_layernorm(NH, vx + t * NH, vw, vb, 1e-5, y);
        for (int i = 0; i < NH; i++)
            cr_assert(fabs(f16_to_d(ln_out[t * NH + i]) - y[i]) <= 2e-3 * fabs(y[i]) + 1e-3, "layernorm[%d, %d] = %g, want %g (seed %llu)", t,
                      i, f16_to_d(ln_out[t * NH + i]), y[i], (unsigned long long)seed);
        for (int i = 0; i < AD2; i++) {
            double want = ref_gated(TILE_GATED_SILU, vg[t * 2 * AD2 + i], vg[t * 2 * AD2 + AD2 + i]);
            cr_assert(fabs(f16_to_d(act_out[t * AD2 + i]) - want) <= 2e-3 * fabs(want) + 1e-4, "silu_and_mul[%d, %d] = %g, want %g", t, i,
                      f16_to_d(act_out[t * AD2 + i]), want);
        }
    }
    int32_t tok[SB], acc[SB], out[SB * (SD + 1)];
    cr_assert_eq(tile_memcpy_dtoh(ctx, tok, dso, sizeof tok), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, acc, dacc, sizeof acc), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dot, sizeof out), TILE_OK);
    for (int r = 0; r < SB; r++) {
        double row[SV];
        for (int i = 0; i < SV; i++) row[i] = logits[r * SV + i];
        cr_assert_eq(tok[r], ref_argmax(SV, row), "greedy sample row %d", r);
        static double pr[(SD + 1) * SV];
        for (int i = 0; i < (SD + 1) * SV; i++) pr[i] = tp[r * (SD + 1) * SV + i];
        int32_t want_out[SD + 1];
        bool near = false;
        int64_t want_acc = ref_spec_verify(SD, SV, drafts + r * SD, NULL, pr, true, 0, 0, 0, 0, want_out, &near);
        cr_assert_eq(want_acc, r == 0 ? 2 : r == 1 ? 1 : 0, "the drafts are not what row %d should accept", r);
        cr_assert_eq(acc[r], want_acc, "spec row %d: accepted %d, want %lld", r, acc[r], (long long)want_acc);
        for (int j = 0; j <= SD; j++) cr_assert_eq(out[r * (SD + 1) + j], want_out[j], "spec row %d: out_tokens[%d]", r, j);
    }
    tile_context_destroy(ctx);
}

/* Without a workspace the same calls allocate and free one: the counters see it. */
Test(graph_safe, calls_without_workspace_are_counted, .timeout = 600) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static Problems p;
    problems_make(ctx, &p);
    p.pa.workspace = 0, p.moe.workspace = 0;
    cr_assert_eq(tile_attention_decode_paged_prepare(ctx, &p.pa), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_moe_prepare(ctx, &p.moe), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s0 = stats(ctx);
    cr_assert_eq(tile_attention_decode_paged(ctx, &p.pa), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_moe_forward(ctx, &p.moe), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s1 = stats(ctx);
    cr_expect_eq(s1.allocations - s0.allocations, 2);
    cr_expect_eq(s1.frees - s0.frees, 2);
    cr_expect_eq(s1.compiles, s0.compiles);
    /* check_tables copies to the host: synchronizations */
    p.pa.check_tables = 1;
    cr_assert_eq(tile_attention_decode_paged(ctx, &p.pa), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_gt(stats(ctx).synchronizations, s1.synchronizations);
    /* prepare reads no pointer: garbage pointers are fine, and it launches nothing */
    tile_gemm_args g = p.g;
    g.a = 0xdead0000, g.b = 0, g.c = 0xbeef0000;
    cr_expect_eq(tile_gemm_prepare(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tile_gemm_prepare(ctx, NULL), TILE_ERROR_INVALID_VALUE);
    g.m = -1;
    cr_expect_eq(tile_gemm_prepare(ctx, &g), TILE_ERROR_INVALID_VALUE);
    tile_context_destroy(ctx);
}

/* ---- tile_context_get_stats_ex and the struct's first version ---- */
typedef struct StatsV1 { /* tile_context_stats as first published */
    uint64_t memory_hits, disk_hits, compiles, launches;
    double compile_seconds, load_seconds;
} StatsV1;

Test(graph_safe, stats_older_struct) {
    tile_context *ctx = open_ctx();
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, 64, &d), TILE_OK);
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    struct {
        StatsV1 s;
        unsigned char guard[64];
    } old;
    memset(&old, 0xab, sizeof old);
    /* what a program built against the first tile.h calls: the exported function, not the header's macro */
    cr_assert_eq((tile_context_get_stats)(ctx, (tile_context_stats *)&old.s), TILE_OK);
    for (size_t i = 0; i < sizeof old.guard; i++) cr_assert_eq(old.guard[i], 0xab, "tile_context_get_stats wrote past the old struct");
    cr_expect_eq(old.s.launches, 0);
    memset(&old, 0xab, sizeof old);
    cr_assert_eq(tile_context_get_stats_ex(ctx, (tile_context_stats *)&old.s, sizeof old.s), TILE_OK);
    for (size_t i = 0; i < sizeof old.guard; i++) cr_assert_eq(old.guard[i], 0xab, "tile_context_get_stats_ex wrote past size");
    cr_expect_eq(old.s.compiles, 0);
    /* a size no struct has (a length gone negative) is refused before anything is written (it zeroed that many bytes) */
    memset(&old, 0xab, sizeof old);
    cr_expect_eq(tile_context_get_stats_ex(ctx, (tile_context_stats *)&old.s, (size_t)-8), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "over 64 KiB"), "%s", tile_last_error(ctx));
    cr_expect_eq(tile_context_get_properties_ex(ctx, (tile_device_properties *)&old.s, (size_t)-8), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "over 64 KiB"), "%s", tile_last_error(ctx));
    for (size_t i = 0; i < sizeof old; i++) cr_assert_eq(((unsigned char *)&old)[i], 0xab, "a refused call wrote");
    /* a size that ends inside a field (half a counter, half an int) is refused, naming it, before anything is written */
    cr_expect_eq(tile_context_get_stats_ex(ctx, (tile_context_stats *)&old.s, 12), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_context_get_stats_ex: size = 12 ends inside tile_context_stats.disk_hits (bytes 8 to 16)"),
              "%s", tile_last_error(ctx));
    cr_expect_eq(tile_context_get_stats_ex(ctx, (tile_context_stats *)&old.s, offsetof(tile_context_stats, frees) + 4),
                 TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "ends inside tile_context_stats.frees"), "%s", tile_last_error(ctx));
    size_t in_int = offsetof(tile_device_properties, max_threads_per_block) + 2;
    cr_expect_eq(tile_context_get_properties_ex(ctx, (tile_device_properties *)&old.s, in_int), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "ends inside tile_device_properties.max_threads_per_block"), "%s", tile_last_error(ctx));
    for (size_t i = 0; i < sizeof old; i++) cr_assert_eq(((unsigned char *)&old)[i], 0xab, "a refused call wrote");
    tile_context_stats s = stats(ctx);
    cr_expect_eq(s.allocations, 1);
    cr_expect_eq(s.frees, 0);
    cr_expect_eq(s.synchronizations, 1);
    /* source built against this tile.h: its tile_context_get_stats (the header's macro) fills every field */
    memset(&s, 0xab, sizeof s);
    cr_assert_eq(tile_context_get_stats(ctx, &s), TILE_OK);
    cr_expect_eq(s.allocations, 1);
    cr_expect_eq(s.frees, 0);
    cr_expect_eq(s.synchronizations, 1);
    /* a newer caller's bigger struct: the tail this library lacks reads zero */
    struct {
        tile_context_stats s;
        uint64_t later[4];
    } big;
    memset(&big, 0xab, sizeof big);
    cr_assert_eq(tile_context_get_stats_ex(ctx, &big.s, sizeof big), TILE_OK);
    cr_expect_eq(big.s.allocations, 1);
    for (int i = 0; i < 4; i++) cr_expect_eq(big.later[i], 0);
    /* every field's end is a size (an older struct's sizeof): exactly that much is written */
    for (size_t end = 8; end <= sizeof(tile_context_stats); end += 8) {
        memset(&big, 0xab, sizeof big);
        cr_assert_eq(tile_context_get_stats_ex(ctx, &big.s, end), TILE_OK, "size %zu: %s", end, tile_last_error(ctx));
        for (size_t i = end; i < sizeof big; i++) cr_assert_eq(((unsigned char *)&big)[i], 0xab, "size %zu: byte %zu written", end, i);
    }
    cr_expect_eq(tile_context_get_stats_ex(ctx, &big.s, 0), TILE_ERROR_INVALID_VALUE);
    /* each entry point names itself in the message, though they share the checks */
    cr_expect_eq(tile_context_get_stats_ex(ctx, NULL, sizeof big.s), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_context_get_stats_ex: out is NULL"), "%s", tile_last_error(ctx));
    cr_expect_eq((tile_context_get_stats)(ctx, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_context_get_stats: out is NULL"), "%s", tile_last_error(ctx));
    cr_assert_eq(tile_free(ctx, d), TILE_OK);
    cr_expect_eq(stats(ctx).frees, 1);
    tile_context_destroy(ctx);
}

/* ---- tile_last_error per thread ---- */
typedef struct Failer {
    tile_context *ctx;
    int which; /* 0: tile_malloc of 0 bytes, 1: tile_free of no allocation */
    int bad;   /* iterations that read another message */
} Failer;

static void *fail_loop(void *arg) {
    Failer *f = arg;
    const char *want = f->which ? "tile_free: 0x1230 is not the start" : "tile_malloc: size is 0";
    for (int i = 0; i < 20000; i++) {
        tile_devptr d;
        tile_status st = f->which ? tile_free(f->ctx, 0x1230) : tile_malloc(f->ctx, 0, &d);
        if (st != TILE_ERROR_INVALID_VALUE || strncmp(tile_last_error(f->ctx), want, strlen(want))) f->bad++;
    }
    return NULL;
}

static void *destroy_ctx(void *ctx) {
    tile_context_destroy(ctx);
    return NULL;
}

Test(graph_safe, last_error_per_thread) {
    tile_context *ctx = open_ctx();
    Failer f[2] = {{ctx, 0, 0}, {ctx, 1, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&th[i], NULL, fail_loop, &f[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    cr_expect_eq(f[0].bad, 0, "thread 0 read another message %d times", f[0].bad);
    cr_expect_eq(f[1].bad, 0, "thread 1 read another message %d times", f[1].bad);
    cr_expect_str_eq(tile_last_error(ctx), "", "the main thread failed nothing");
    /* this thread's message, kept across another thread's failures */
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, 0, &d), TILE_ERROR_INVALID_VALUE);
    pthread_create(&th[0], NULL, fail_loop, &f[1]);
    pthread_join(th[0], NULL);
    cr_expect(strstr(tile_last_error(ctx), "tile_malloc: size is 0"), "%s", tile_last_error(ctx));
    /* a context destroyed and a new one (perhaps at the same address): no message carries over */
    tile_context_destroy(ctx);
    cr_expect_str_eq(tile_last_error(ctx), "not a valid tile_context");
    tile_context *c2 = open_ctx();
    cr_expect_str_eq(tile_last_error(c2), "");
    /* this thread holds a record for c2 when another thread destroys it; a later context
     * (perhaps at the same address) does not see it, and the record is reused */
    cr_assert_eq(tile_malloc(c2, 0, &d), TILE_ERROR_INVALID_VALUE);
    pthread_create(&th[0], NULL, destroy_ctx, c2);
    pthread_join(th[0], NULL);
    tile_context *c3 = open_ctx();
    cr_expect_str_eq(tile_last_error(c3), "");
    cr_assert_eq(tile_free(c3, 0x1230), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(c3), "tile_free: 0x1230"), "%s", tile_last_error(c3));
    tile_context_destroy(c3);
}

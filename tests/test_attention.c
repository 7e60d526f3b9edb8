/* test_attention.c - kernels/attention/attention.tile (FlashAttention-2 forward) and
 * kernels/attention/paged_attention.tile (paged-KV decode, split-KV and its merge) on
 * the PTX emulator against the float64 references of ref/ (ref_attention,
 * ref_paged_decode).
 *
 * Fresh random inputs every run (TILE_TEST_SEED repeats one; the seed is
 * printed on failure), outputs poisoned with NaN before the launch and the
 * gaps between strided rows checked untouched afterwards, sequence lengths
 * that are not multiples of the blocks.  Sizes stay small: the emulator runs
 * a few hundred million thread-instructions a second.
 *
 * Tolerances: inputs are exact f16/bf16 values and the reference uses them
 * exactly, so the error comes from P rounded to the input type before the
 * second dot (relative 2^-11 for f16, 2^-8 for bf16, times sum |p v| <= max
 * |v| = 1) and from O rounded to the output type: absolute 2e-3 (f16) and
 * 1.6e-2 (bf16) on O; LSE is f32 throughout: 1e-4 absolute plus 1e-5
 * relative. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "runtime/device.h"

/* the emulator also checks shared memory for races between barriers */
static const DevOptions racecheck = {.emu_racecheck = true};



typedef enum { DT_F16_, DT_BF16_ } Dt;
static uint16_t to_dt(Dt t, double v) { return t == DT_F16_ ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static double from_dt(Dt t, uint16_t h) { return t == DT_F16_ ? f16_to_d(h) : bf16_to_d(h); }
static const uint16_t POISON16 = 0x7e00; /* NaN in f16; also NaN in bf16 (exponent all ones, mantissa != 0) */

/* a random 16-bit tensor: device bytes in h, exact values in v */
static void fill16(Dt t, size_t n, uint16_t *h, double *v) {
    for (size_t i = 0; i < n; i++) {
        h[i] = to_dt(t, urand());
        v[i] = from_dt(t, h[i]);
    }
}

/* ---- a compiled kernel on the emulator ---- */
typedef struct Kern {
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    int threads;
    unsigned smem; /* passed as dynamic shared memory when past the 48 KiB static limit */
    char *ptx;
} Kern;

static void kern_open(Kern *k, TileDevice *dev, const char *file, const char *name, const char **defines) {
    /* TILE_TEST_ARCH=sm_90a with TILE_TEST_DEVICE=emu:sm_90a: the same checks on Hopper code (wgmma) */
    tile_compile_options o = {.kernel = name, .defines = defines, .arch = getenv("TILE_TEST_ARCH")};
    tile_compiled c;
    char path[512];
    snprintf(path, sizeof path, TILE_SOURCE_DIR "/kernels/%s", file);
    tile_status st = tile_compile_file(path, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s/%s: %s\n%s", file, name, tile_status_string(st), c.diagnostics);
    k->dev = dev;
    cr_assert_eq(dev_module_load_ptx(dev, c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(k->mod, name, &k->fn), DEV_OK, "%s", dev_last_error(dev));
    k->threads = 32 * c.kernels[0].num_warps;
    k->smem = c.kernels[0].smem_bytes > 48 * 1024 ? (unsigned)c.kernels[0].smem_bytes : 0;
    k->ptx = strdup(c.ptx);
    tile_compiled_free(&c);
}

static void kern_close(Kern *k) {
    dev_module_unload(k->mod);
    free(k->ptx);
}

static void kern_launch(Kern *k, unsigned gx, unsigned gy, unsigned gz, void **params) {
    DevStatus st = dev_launch(k->fn, gx, gy, gz, (unsigned)k->threads, 1, 1, k->smem, NULL, params);
    cr_assert_eq(st, DEV_OK, "launch: %s", dev_last_error(k->dev));
    cr_assert_eq(dev_synchronize(k->dev), DEV_OK, "%s", dev_last_error(k->dev));
}

static TileDevice *open_emu(void) {
    TileDevice *dev;
    char *err = NULL;
    cr_assert_eq(dev_open(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", &racecheck, &dev, &err), DEV_OK, "%s",
                 err ? err : "?");
    return dev;
}

static uint64_t upload(TileDevice *dev, const void *h, size_t bytes) {
    uint64_t d;
    cr_assert_eq(dev_malloc(dev, bytes ? bytes : 16, &d), DEV_OK);
    if (bytes) cr_assert_eq(dev_memcpy_htod(dev, d, h, bytes), DEV_OK);
    return d;
}

static void download(TileDevice *dev, void *h, uint64_t d, size_t bytes) {
    cr_assert_eq(dev_memcpy_dtoh(dev, h, d, bytes), DEV_OK, "%s", dev_last_error(dev));
}

static int pow2_at_least(int x) {
    int p = 1;
    while (p < x) p *= 2;
    return p;
}

/* ======================= prefill: attention.tile ======================= */

typedef struct AttnCase {
    Dt dt;
    int batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
    bool causal;
    int window_left, window_right; /* -1: unbounded; either >= 0 turns on LOCAL */
    const int *lens_q, *lens_k;    /* varlen: batch lengths each (seq_q/seq_k ignored) */
    const char *extra;             /* one more define, e.g. "BN=32" */
    bool neg_scale;                /* a negative softmax scale (the kernel moves its sign onto Q) */
} AttnCase;

static void run_attention(const AttnCase *c) {
    bool varlen = c->lens_q != NULL, local = c->window_left >= 0 || c->window_right >= 0;
    int B = c->batch, Hq = c->heads_q, Hk = c->heads_kv, D = c->head_dim, BD = pow2_at_least(D);
    /* token offsets per sequence (varlen: packed; else seq * b) */
    int *q0 = calloc((size_t)B + 1, sizeof(int)), *k0 = calloc((size_t)B + 1, sizeof(int));
    int max_q = 0, max_k = 0;
    for (int b = 0; b < B; b++) {
        int lq = varlen ? c->lens_q[b] : c->seq_q, lk = varlen ? c->lens_k[b] : c->seq_k;
        q0[b + 1] = q0[b] + lq;
        k0[b + 1] = k0[b] + lk;
        max_q = lq > max_q ? lq : max_q;
        max_k = lk > max_k ? lk : max_k;
    }
    int tq = q0[B], tk = k0[B]; /* total tokens */
    /* strided layouts with gaps: [token][head][d] with the head stride D + 8
     * and the token stride heads * (D + 8) + 16; the batch stride is the
     * sequence's tokens times that (varlen ignores it) */
    int sqh = D + 8, sqs = Hq * sqh + 16, skh = D + 24, sks = Hk * skh + 8, svh = D + 16, svs = Hk * svh + 40;
    int soh = D + 8, sos = Hq * soh + 16;
    int seq_q = varlen ? max_q : c->seq_q, seq_k = varlen ? max_k : c->seq_k;
    int sqb = varlen ? 0 : seq_q * sqs, skb = varlen ? 0 : seq_k * sks, svb = varlen ? 0 : seq_k * svs, sob = varlen ? 0 : seq_q * sos;
    int slh = varlen ? tq : seq_q, slb = varlen ? 0 : Hq * seq_q;
    size_t nq = (size_t)tq * sqs + 16, nk = (size_t)tk * sks + 16, nv = (size_t)tk * svs + 16, no = (size_t)tq * sos + 16;
    size_t nl = (size_t)Hq * tq + 4;
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nv * 2), *ho = malloc(no * 2);
    double *vq = malloc(nq * sizeof(double)), *vk = malloc(nk * sizeof(double)), *vv = malloc(nv * sizeof(double));
    float *hl = malloc(nl * sizeof(float));
    fill16(c->dt, nq, hq, vq);
    fill16(c->dt, nk, hk, vk);
    fill16(c->dt, nv, hv, vv);
    for (size_t i = 0; i < no; i++) ho[i] = POISON16;
    for (size_t i = 0; i < nl; i++) hl[i] = NAN;

    TileDevice *dev = open_emu();
    char defs[8][64];
    const char *defines[9] = {0};
    int nd = 0;
    snprintf(defs[nd], 64, "HEAD_DIM=%d", D), defines[nd] = defs[nd], nd++;
    snprintf(defs[nd], 64, "BLOCK_D=%d", BD), defines[nd] = defs[nd], nd++;
    if (c->causal) snprintf(defs[nd], 64, "CAUSAL=true"), defines[nd] = defs[nd], nd++;
    if (local) snprintf(defs[nd], 64, "LOCAL=true"), defines[nd] = defs[nd], nd++;
    if (varlen) snprintf(defs[nd], 64, "VARLEN=true"), defines[nd] = defs[nd], nd++;
    if (c->extra) snprintf(defs[nd], 64, "%s", c->extra), defines[nd] = defs[nd], nd++;
    int BM = 64;
    for (int i = 0; i < nd; i++)
        if (!strncmp(defines[i], "BM=", 3)) BM = atoi(defines[i] + 3);
    const char *name = c->dt == DT_F16_ ? "attention_fwd_f16" : "attention_fwd_bf16";
    Kern k;
    kern_open(&k, dev, "attention/attention.tile", name, defines);
    cr_expect(strstr(k.ptx, "mma.sync.aligned.m16n8k16") || strstr(k.ptx, "wgmma.mma_async.sync.aligned"),
              "%s: no tensor-core instruction in the PTX", name);

    uint64_t dq = upload(dev, hq, nq * 2), dk = upload(dev, hk, nk * 2), dv = upload(dev, hv, nv * 2), dout = upload(dev, ho, no * 2);
    uint64_t dl = upload(dev, hl, nl * 4), dcq = upload(dev, q0, (size_t)(B + 1) * 4), dck = upload(dev, k0, (size_t)(B + 1) * 4);
    int group = Hq / Hk, wl = c->window_left < 0 ? 1 << 30 : c->window_left, wr = c->window_right < 0 ? 1 << 30 : c->window_right;
    float scale = (float)(1.0 / sqrt((double)D)) * (c->neg_scale ? -1.25f : 1.25f);
    void *params[] = {&dq, &dk, &dv, &dout, &dl, &dcq, &dck, &seq_q, &seq_k, &Hq, &group, &sqb, &sqs, &sqh, &skb, &sks, &skh,
                      &svb, &svs, &svh, &sob, &sos, &soh, &slb, &slh, &scale, &wl, &wr};
    if (seq_q > 0) kern_launch(&k, (unsigned)((seq_q + BM - 1) / BM), (unsigned)(B * Hq), 1, params);
    download(dev, ho, dout, no * 2);
    download(dev, hl, dl, nl * 4);

    /* the float64 reference: O in the device's layout, LSE likewise */
    double *ro = malloc(no * sizeof(double)), *rl = malloc(nl * sizeof(double));
    ref_attention_args ra = {.batch = B, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .seq_q = seq_q, .seq_k = seq_k,
                             .cu_seqlens_q = varlen ? q0 : NULL, .cu_seqlens_k = varlen ? k0 : NULL, .q = vq, .k = vk, .v = vv, .o = ro,
                             .q_stride = {sqb, sqs, sqh}, .k_stride = {skb, sks, skh}, .v_stride = {svb, svs, svh},
                             .o_stride = {sob, sos, soh}, .lse = rl, .scale = scale, .causal = c->causal,
                             .window_left = c->window_left, .window_right = c->window_right};
    cr_assert(ref_attention(&ra), "ref_attention rejected the case");
    double tol = c->dt == DT_F16_ ? 2e-3 : 1.6e-2;
    bool *written = calloc(no, 1), *lwritten = calloc(nl, 1);
    for (int b = 0; b < B; b++) {
        int lq = q0[b + 1] - q0[b], lk = k0[b + 1] - k0[b];
        for (int h = 0; h < Hq; h++) {
            for (int i = 0; i < lq; i++) {
                size_t orow = (size_t)(q0[b] + i) * sos + (size_t)h * soh;
                for (int d = 0; d < D; d++) {
                    double want = ro[orow + d];
                    double got = from_dt(c->dt, ho[orow + d]);
                    written[orow + d] = true;
                    cr_assert(fabs(got - want) <= tol, "%s b=%d h=%d i=%d d=%d (lq %d lk %d): O = %.6g, want %.6g (seed %llu)", name, b, h,
                              i, d, lq, lk, got, want, (unsigned long long)seed);
                }
                size_t li = varlen ? (size_t)h * slh + (size_t)(q0[b] + i) : (size_t)b * slb + (size_t)h * slh + (size_t)i;
                double want_lse = rl[li], got_lse = hl[li];
                lwritten[li] = true;
                if (want_lse != -INFINITY)
                    cr_assert(fabs(got_lse - want_lse) <= 1e-4 + 1e-5 * fabs(want_lse), "%s b=%d h=%d i=%d: LSE = %.8g, want %.8g (seed %llu)",
                              name, b, h, i, got_lse, want_lse, (unsigned long long)seed);
                else
                    cr_assert(got_lse == -INFINITY, "%s b=%d h=%d i=%d sees no key: LSE = %.8g, want -inf", name, b, h, i, got_lse);
            }
        }
    }
    for (size_t i = 0; i < no; i++)
        if (!written[i]) cr_assert(ho[i] == POISON16, "%s wrote O outside the tensor at element %zu", name, i);
    for (size_t i = 0; i < nl; i++)
        if (!lwritten[i]) cr_assert(isnan(hl[i]), "%s wrote LSE outside the rows at %zu", name, i);

    kern_close(&k);
    dev_close(dev);
    free(written), free(lwritten), free(ro), free(rl), free(q0), free(k0);
    free(hq), free(hk), free(hv), free(ho), free(hl), free(vq), free(vk), free(vv);
}


Test(attention, non_causal_odd_lengths, .timeout = 300) {
    seed_rng();
    run_attention(&(AttnCase){DT_F16_, 2, 2, 2, 17, 17, 64, false, -1, -1, NULL, NULL, NULL, false});
    run_attention(&(AttnCase){DT_BF16_, 1, 1, 1, 100, 100, 64, false, -1, -1, NULL, NULL, NULL, false});
    run_attention(&(AttnCase){DT_F16_, 1, 2, 2, 1, 1, 64, false, -1, -1, NULL, NULL, NULL, false});
}

Test(attention, causal, .timeout = 300) {
    seed_rng();
    run_attention(&(AttnCase){DT_F16_, 1, 2, 2, 100, 100, 64, true, -1, -1, NULL, NULL, NULL, false});
    /* bottom-right alignment: one query sees every key; more queries than keys leave the first rows empty */
    run_attention(&(AttnCase){DT_BF16_, 2, 1, 1, 1, 100, 64, true, -1, -1, NULL, NULL, NULL, false});
    run_attention(&(AttnCase){DT_F16_, 1, 1, 1, 100, 17, 64, true, -1, -1, NULL, NULL, NULL, false});
    run_attention(&(AttnCase){DT_F16_, 1, 1, 1, 17, 90, 64, true, -1, -1, NULL, NULL, "BM=16", false});
    run_attention(&(AttnCase){DT_BF16_, 1, 2, 1, 200, 200, 64, true, -1, -1, NULL, NULL, NULL, false});
}

/* The kernel takes the row max of unscaled scores and scales it (one fma per score): a
 * negative scale must flip Q's sign first, or the max would be the minimum. */
Test(attention, negative_scale, .timeout = 300) {
    seed_rng();
    run_attention(&(AttnCase){DT_F16_, 1, 2, 2, 70, 70, 64, true, -1, -1, NULL, NULL, NULL, true});
    run_attention(&(AttnCase){DT_BF16_, 1, 1, 1, 33, 100, 64, false, -1, -1, NULL, NULL, NULL, true});
}

Test(attention, gqa_mqa, .timeout = 300) {
    seed_rng();
    run_attention(&(AttnCase){DT_F16_, 1, 4, 1, 33, 40, 64, false, -1, -1, NULL, NULL, NULL, false});  /* MQA */
    run_attention(&(AttnCase){DT_BF16_, 2, 8, 2, 17, 17, 64, true, -1, -1, NULL, NULL, NULL, false}); /* 4 query heads per KV head */
    run_attention(&(AttnCase){DT_F16_, 1, 8, 1, 128, 128, 64, true, -1, -1, NULL, NULL, NULL, false}); /* 8 per KV head, whole blocks */
}

Test(attention, varlen, .timeout = 300) {
    seed_rng();
    static const int lq[] = {17, 0, 70, 1}, lk[] = {17, 5, 100, 1};
    run_attention(&(AttnCase){DT_F16_, 4, 2, 1, 0, 0, 64, false, -1, -1, lq, lq, NULL, false});
    run_attention(&(AttnCase){DT_BF16_, 4, 2, 2, 0, 0, 64, true, -1, -1, lq, lk, NULL, false});
}

Test(attention, sliding_window, .timeout = 300) {
    seed_rng();
    run_attention(&(AttnCase){DT_F16_, 1, 1, 1, 100, 100, 64, true, 20, -1, NULL, NULL, NULL, false});
    run_attention(&(AttnCase){DT_F16_, 1, 1, 1, 70, 100, 64, false, 9, 5, NULL, NULL, "BN=32", false});
}

Test(attention, head_dims, .timeout = 300) {
    seed_rng();
    run_attention(&(AttnCase){DT_F16_, 1, 2, 1, 40, 33, 128, true, -1, -1, NULL, NULL, "BN=32", false});
    run_attention(&(AttnCase){DT_BF16_, 1, 1, 1, 17, 50, 80, false, -1, -1, NULL, NULL, "BN=32", false}); /* padded to 128 */
    run_attention(&(AttnCase){DT_F16_, 1, 1, 1, 20, 20, 32, false, -1, -1, NULL, NULL, NULL, false});
}

/* ==================== decode: paged_attention.tile ==================== */

typedef struct PagedCase {
    Dt dt;
    int num_seqs, heads_q, heads_kv, num_tokens, head_dim, block_size;
    const int *ctx;  /* context length per sequence (>= num_tokens) */
    int num_splits;  /* 1: the non-split kernel alone */
    bool neg_scale;  /* a negative softmax scale (the kernel moves its sign onto Q) */
} PagedCase;

static void run_paged(const PagedCase *c) {
    int S = c->num_seqs, Hq = c->heads_q, Hk = c->heads_kv, T = c->num_tokens, D = c->head_dim, BD = pow2_at_least(D);
    int bs = c->block_size, G = Hq / Hk, ns = c->num_splits;
    int BM = pow2_at_least(G * T < 16 ? 16 : G * T);
    /* block tables: every sequence's blocks taken from a shuffled pool; unused entries hold an
     * out-of-range block so that reading one is a memcheck error */
    int max_blocks = 0, used = 0;
    for (int s = 0; s < S; s++) {
        int nb = (c->ctx[s] + bs - 1) / bs;
        max_blocks = nb > max_blocks ? nb : max_blocks;
        used += nb;
    }
    int num_blocks = used + 3, sbt = max_blocks + 2;
    int *perm = malloc(sizeof(int) * (size_t)num_blocks), *table = malloc(sizeof(int) * (size_t)S * sbt);
    for (int i = 0; i < num_blocks; i++) perm[i] = i;
    for (int i = num_blocks - 1; i > 0; i--) {
        int j = (int)(rnext() % (uint64_t)(i + 1)), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int s = 0, next = 0; s < S; s++)
        for (int i = 0; i < sbt; i++) table[s * sbt + i] = i < (c->ctx[s] + bs - 1) / bs ? perm[next++] : 1 << 29;
    /* strided layouts with gaps */
    int skh = D + 8, sks = Hk * skh, skb = bs * sks + 64, svh = D + 24, svs = Hk * svh + 8, svb = bs * svs;
    int sqh = D + 8, sqt = Hq * sqh + 16, sqs = T * sqt + 32, soh = D + 16, sot = Hq * soh, sos = T * sot + 8;
    size_t nk = (size_t)num_blocks * skb, nv = (size_t)num_blocks * svb, nq = (size_t)S * sqs, no = (size_t)S * sos;
    size_t npart = (size_t)S * Hq * T * ns;
    uint16_t *hk = malloc(nk * 2), *hv = malloc(nv * 2), *hq = malloc(nq * 2), *ho = malloc(no * 2);
    double *vk = malloc(nk * sizeof(double)), *vv = malloc(nv * sizeof(double)), *vq = malloc(nq * sizeof(double));
    float *hpart = malloc(npart * D * sizeof(float)), *hlse = malloc(npart * sizeof(float));
    fill16(c->dt, nk, hk, vk);
    fill16(c->dt, nv, hv, vv);
    fill16(c->dt, nq, hq, vq);
    for (size_t i = 0; i < no; i++) ho[i] = POISON16;
    for (size_t i = 0; i < npart * D; i++) hpart[i] = NAN;
    for (size_t i = 0; i < npart; i++) hlse[i] = NAN;

    TileDevice *dev = open_emu();
    char defs[8][64];
    const char *defines[9] = {0};
    int nd = 0;
    snprintf(defs[nd], 64, "HEAD_DIM=%d", D), defines[nd] = defs[nd], nd++;
    snprintf(defs[nd], 64, "BLOCK_D=%d", BD), defines[nd] = defs[nd], nd++;
    snprintf(defs[nd], 64, "BLOCK_SIZE=%d", bs), defines[nd] = defs[nd], nd++;
    snprintf(defs[nd], 64, "BM=%d", BM), defines[nd] = defs[nd], nd++;
    /* 48 KiB of static shared memory: both dots stage their operands */
    snprintf(defs[nd], 64, "BN=%d", BD >= 128 && BM >= 32 ? 32 : 64), defines[nd] = defs[nd], nd++;
    if (ns > 1) snprintf(defs[nd], 64, "SPLIT=true"), defines[nd] = defs[nd], nd++;
    const char *name = c->dt == DT_F16_ ? "paged_attention_f16" : "paged_attention_bf16";
    Kern k;
    kern_open(&k, dev, "attention/paged_attention.tile", name, defines);
    cr_expect(strstr(k.ptx, "mma.sync.aligned.m16n8k16") || strstr(k.ptx, "wgmma.mma_async.sync.aligned"),
              "%s: no tensor-core instruction in the PTX", name);

    uint64_t dk = upload(dev, hk, nk * 2), dv = upload(dev, hv, nv * 2), dq = upload(dev, hq, nq * 2), dout = upload(dev, ho, no * 2);
    uint64_t dpart = upload(dev, hpart, npart * D * 4), dlse = upload(dev, hlse, npart * 4);
    uint64_t dtable = upload(dev, table, sizeof(int) * (size_t)S * sbt), dctx = upload(dev, c->ctx, sizeof(int) * (size_t)S);
    float scale = (float)(1.0 / sqrt((double)D)) * (c->neg_scale ? -1.5f : 1.5f);
    void *params[] = {&dq, &dk, &dv, &dout, &dpart, &dlse, &dtable, &dctx, &T, &G, &Hq, &sqs, &sqt, &sqh,
                      &skb, &sks, &skh, &svb, &svs, &svh, &sos, &sot, &soh, &sbt, &scale};
    kern_launch(&k, (unsigned)Hk, (unsigned)S, (unsigned)ns, params);
    if (ns > 1) {
        char sdef[64];
        snprintf(sdef, sizeof sdef, "BLOCK_S=%d", pow2_at_least(ns));
        const char *mdefs[] = {defines[0], defines[1], sdef, NULL};
        const char *mname = c->dt == DT_F16_ ? "paged_attention_merge_f16" : "paged_attention_merge_bf16";
        Kern m;
        kern_open(&m, dev, "attention/paged_attention.tile", mname, mdefs);
        void *mparams[] = {&dout, &dpart, &dlse, &T, &Hq, &ns, &sos, &sot, &soh};
        kern_launch(&m, (unsigned)(Hq * T), (unsigned)S, 1, mparams);
        kern_close(&m);
    }
    download(dev, ho, dout, no * 2);

    double *ro = malloc(no * sizeof(double));
    ref_paged_args ra = {.num_seqs = S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs,
                         .num_blocks = num_blocks, .q = vq, .q_stride = {sqs, sqt, sqh}, .o = ro, .o_stride = {sos, sot, soh},
                         .k_cache = vk, .v_cache = vv, .k_stride = {skb, sks, skh}, .v_stride = {svb, svs, svh},
                         .block_tables = table, .block_table_stride = sbt, .context_lens = c->ctx, .scale = scale};
    cr_assert(ref_paged_decode(&ra), "ref_paged_decode rejected the case");
    double tol = c->dt == DT_F16_ ? 2e-3 : 1.6e-2;
    bool *written = calloc(no, 1);
    for (int s = 0; s < S; s++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < Hq; h++) {
                size_t orow = (size_t)s * sos + (size_t)t * sot + (size_t)h * soh;
                for (int d = 0; d < D; d++) {
                    double want = ro[orow + d];
                    double got = from_dt(c->dt, ho[orow + d]);
                    written[orow + d] = true;
                    cr_assert(fabs(got - want) <= tol, "%s s=%d t=%d h=%d d=%d (ctx %d, T %d, splits %d): O = %.6g, want %.6g (seed %llu)",
                              name, s, t, h, d, c->ctx[s], T, ns, got, want, (unsigned long long)seed);
                }
            }
    for (size_t i = 0; i < no; i++)
        if (!written[i]) cr_assert(ho[i] == POISON16, "%s wrote O outside the tensor at element %zu", name, i);

    kern_close(&k);
    dev_close(dev);
    free(written), free(ro), free(perm), free(table);
    free(hk), free(hv), free(hq), free(ho), free(hpart), free(hlse), free(vk), free(vv), free(vq);
}

Test(paged_attention, one_token, .timeout = 300) {
    seed_rng();
    static const int ctx[] = {1, 15, 100};
    run_paged(&(PagedCase){DT_F16_, 3, 4, 1, 1, 64, 16, ctx, 1, false});
    run_paged(&(PagedCase){DT_BF16_, 3, 4, 1, 1, 64, 16, ctx, 3, false});
}

Test(paged_attention, eight_tokens, .timeout = 300) {
    seed_rng();
    static const int ctx[] = {8, 200};
    run_paged(&(PagedCase){DT_BF16_, 2, 8, 2, 8, 128, 32, ctx, 1, false}); /* 4 heads x 8 tokens: a 32-row Q tile */
    run_paged(&(PagedCase){DT_F16_, 2, 8, 2, 8, 128, 32, ctx, 4, false});
}

Test(paged_attention, negative_scale, .timeout = 300) {
    seed_rng();
    static const int ctx[] = {8, 100};
    run_paged(&(PagedCase){DT_F16_, 2, 8, 2, 4, 64, 16, ctx, 1, true});
    run_paged(&(PagedCase){DT_BF16_, 2, 4, 1, 1, 64, 16, ctx, 3, true});
}

Test(paged_attention, long_context_split, .timeout = 300) {
    seed_rng();
    static const int ctx[] = {1000, 37};
    run_paged(&(PagedCase){DT_F16_, 2, 2, 2, 2, 128, 16, ctx, 5, false});
    run_paged(&(PagedCase){DT_F16_, 2, 4, 4, 1, 80, 64, ctx, 1, false}); /* head_dim padded to 128, block_size 64 */
}

/* test_moe.c - kernels/moe/ on the emulator against float64 references (ref/):
 * the router (softmax and sigmoid scoring, renormalization, grouped top-k
 * with a score bias, ties), the token alignment (compared exactly: it is
 * deterministic), and the expert GEMMs (gate_up with SiLU, down with the
 * routing weight accumulated into the output) for f16 and bf16, at 1, 7 and
 * 300 tokens, 8, 64 and 128 experts, top-k 1, 2 and 8, with experts that
 * receive no token, every token on one expert, and dropped (-1) slots.
 * Fresh random inputs every run (the seed is printed on failure;
 * TILE_TEST_SEED repeats one); outputs poisoned before each launch. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/sanitized.h"
#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "runtime/device.h"


/* store v as a 16-bit float (bf16 or f16) in *dst; return the stored value */
static double put16(bool bf16, uint16_t *dst, double v) {
    *dst = bf16 ? f32_to_bf16((float)v) : f32_to_f16((float)v);
    return bf16 ? bf16_to_d(*dst) : f16_to_d(*dst);
}

static int pow2_at_least(int n) {
    int p = 1;
    while (p < n) p *= 2;
    return p;
}
static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* ---- device helpers ---- */
static TileDevice *open_dev(void) {
    TileDevice *dev;
    char *err = NULL;
    static const DevOptions racecheck = {.emu_racecheck = true}; /* the emulator checks every shared-memory exchange */
    cr_assert_eq(dev_open(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", &racecheck, &dev, &err), DEV_OK, "%s",
                 err ? err : "?");
    return dev;
}

typedef struct Kern {
    TileDevModule *mod;
    TileDevFunction *fn;
    unsigned threads, smem;
} Kern;

/* Compile kernel `name` of kernels/moe/<file> with defines given as "A=1 B=2". */
static void kload(TileDevice *dev, Kern *k, const char *file, const char *name, const char *defs) {
    char buf[512], *defv[16] = {0};
    int nd = 0;
    snprintf(buf, sizeof buf, "%s", defs ? defs : "");
    for (char *t = strtok(buf, " "); t && nd < 15; t = strtok(NULL, " ")) defv[nd++] = t;
    tile_compile_options o = {.kernel = name, .defines = (const char *const *)defv, .arch = getenv("TILE_TEST_ARCH")};
    tile_compiled c;
    char path[512];
    snprintf(path, sizeof path, TILE_SOURCE_DIR "/kernels/moe/%s", file);
    tile_status st = tile_compile_file(path, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s %s [%s]: %s\n%s", file, name, defs, tile_status_string(st), c.diagnostics);
    cr_assert_eq(dev_module_load_ptx(dev, c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(k->mod, name, &k->fn), DEV_OK, "%s", dev_last_error(dev));
    k->threads = 32u * (unsigned)c.kernels[0].num_warps;
    k->smem = c.kernels[0].smem_dynamic || c.kernels[0].smem_bytes > 48 * 1024 ? (unsigned)c.kernels[0].smem_bytes : 0;
    tile_compiled_free(&c);
}

static void klaunch(TileDevice *dev, const Kern *k, const char *what, unsigned gx, unsigned gy, void **params) {
    DevStatus st = dev_launch(k->fn, gx, gy, 1, k->threads, 1, 1, k->smem, NULL, params);
    cr_assert_eq(st, DEV_OK, "%s: %s (seed %llu)", what, dev_last_error(dev), (unsigned long long)seed);
    cr_assert_eq(dev_synchronize(dev), DEV_OK, "%s: %s", what, dev_last_error(dev));
}

static uint64_t dput(TileDevice *dev, const void *h, size_t bytes) {
    uint64_t d;
    cr_assert_eq(dev_malloc(dev, bytes ? bytes : 4, &d), DEV_OK);
    if (bytes) cr_assert_eq(dev_memcpy_htod(dev, d, h, bytes), DEV_OK);
    return d;
}
static uint64_t dfill(TileDevice *dev, size_t bytes, uint8_t poison) {
    uint64_t d;
    cr_assert_eq(dev_malloc(dev, bytes ? bytes : 4, &d), DEV_OK);
    cr_assert_eq(dev_memset_d8(dev, d, poison, bytes ? bytes : 4), DEV_OK);
    return d;
}
static void *dget(TileDevice *dev, uint64_t d, size_t bytes) {
    void *h = malloc(bytes ? bytes : 4);
    cr_assert_eq(dev_memcpy_dtoh(dev, h, d, bytes), DEV_OK);
    return h;
}

/* ======================================================================
 * Router
 * ====================================================================== */
typedef struct RouterCfg {
    int E, K;
    int scoring;            /* 0 softmax, 1 sigmoid */
    bool renorm, grouped, top2, bias;
    int n_group, topk_group;
    float scale;
    int logit_type;         /* 0 f32, 1 bf16, 2 f16 */
    int rows_kind;          /* 0 mixed, 1 every row all equal */
} RouterCfg;

/* float64 reference for one token: ids/weights in rank order (ref_moe_route).  A
 * decision between values closer than 1e-5 is only well defined when the values come
 * from identical inputs (then f32 computes them identically and the tie rule applies);
 * otherwise rounding may resolve it either way, so the function returns false and the
 * row is redrawn. */
static bool router_ref(const RouterCfg *c, const double *l, const double *bias, int *ids, double *w) {
    ref_moe_router r = {.experts = c->E, .topk = c->K, .scoring = c->scoring ? TILE_MOE_SIGMOID : TILE_MOE_SOFTMAX,
                        .renormalize = c->renorm, .n_group = c->grouped ? c->n_group : 0, .topk_group = c->topk_group,
                        .group_top2 = c->top2, .score_bias = c->bias ? bias : NULL, .routed_scale = c->scale, .tie_eps = 1e-5};
    bool near_tie;
    cr_assert(ref_moe_route(&r, l, ids, w, &near_tie), "ref_moe_route rejected E=%d K=%d", c->E, c->K);
    return !near_tie;
}

/* A row of logits: all equal, on a grid of 1/16 (many exact ties), or continuous. */
static void draw_row(const RouterCfg *c, double *l, void *dst) {
    int kind = c->rows_kind == 1 ? 0 : irand(10);
    double all = (irand(64) - 32) / 16.0;
    for (int e = 0; e < c->E; e++) {
        double v = kind == 0 ? all : kind < 6 ? (irand(97) - 48) / 16.0 : urand() * 3;
        if (c->logit_type == 0) {
            ((float *)dst)[e] = (float)v;
            l[e] = (float)v;
        } else {
            l[e] = put16(c->logit_type == 1, (uint16_t *)dst + e, v);
        }
    }
}

static void router_case(TileDevice *dev, const RouterCfg *c, int T) {
    static const char *kn[] = {"moe_router_f32", "moe_router_bf16", "moe_router_f16"};
    /* from 512 experts as tile_moe_forward takes them (kernels/moe/moe.c): one token a program, KP 128 */
    int E = c->E, K = c->K, BE = pow2_at_least(E), BT = BE >= 512 ? 1 : BE >= 128 ? 8 : 16;
    char defs[256];
    snprintf(defs, sizeof defs, "K=%d KP=%d BT=%d BE=%d SCORING=%d RENORM=%s GROUPED=%s GROUP_TOP2=%s HAS_BIAS=%s", K,
             BE >= 512 ? 128 : pow2_at_least(K), BT, BE, c->scoring, c->renorm ? "true" : "false", c->grouped ? "true" : "false",
             c->top2 ? "true" : "false", c->bias ? "true" : "false");
    Kern k;
    kload(dev, &k, "router.tile", kn[c->logit_type], defs);
    int sl = E + 3; /* row stride past the experts */
    size_t eb = c->logit_type == 0 ? 4 : 2;
    char *hl = calloc((size_t)T * sl, eb);
    double *l = calloc((size_t)T * sl, sizeof(double)), bias[1024];
    float fbias[1024];
    for (int e = 0; e < E; e++) fbias[e] = (float)(irand(9) - 4) / 8.0f, bias[e] = fbias[e];
    int *want_ids = malloc(sizeof(int) * (size_t)T * K);
    double *want_w = malloc(sizeof(double) * (size_t)T * K);
    for (int t = 0; t < T; t++) {
        int tries = 0;
        do {
            draw_row(c, l + (size_t)t * sl, hl + (size_t)t * sl * eb);
            cr_assert(++tries < 1000, "cannot draw a row without near ties");
        } while (!router_ref(c, l + (size_t)t * sl, bias, want_ids + (size_t)t * K, want_w + (size_t)t * K));
    }
    uint64_t dl = dput(dev, hl, (size_t)T * sl * eb), db = dput(dev, fbias, sizeof(float) * (size_t)E);
    size_t on = (size_t)T * K + 16; /* 16 past the end: must stay poisoned */
    uint64_t dids = dfill(dev, on * 4, 0xff), dw = dfill(dev, on * 4, 0xff);
    int ng = c->grouped ? c->n_group : 1, tg = c->grouped ? c->topk_group : 1;
    float scale = c->scale;
    void *params[] = {&dl, &db, &dids, &dw, &T, &E, &sl, &ng, &tg, &scale};
    klaunch(dev, &k, defs, (unsigned)cdiv(T, BT), 1, params);
    int *ids = dget(dev, dids, on * 4);
    float *w = dget(dev, dw, on * 4);
    for (int t = 0; t < T; t++)
        for (int j = 0; j < K; j++) {
            size_t i = (size_t)t * K + j;
            cr_assert_eq(ids[i], want_ids[i], "%s [%s] T=%d token %d rank %d: expert %d, want %d (seed %llu)", kn[c->logit_type],
                         defs, T, t, j, ids[i], want_ids[i], (unsigned long long)seed);
            cr_assert(fabs(w[i] - want_w[i]) <= 1e-6 + 2e-5 * fabs(want_w[i]),
                      "%s [%s] T=%d token %d rank %d: weight %.9g, want %.9g (seed %llu)", kn[c->logit_type], defs, T, t, j, w[i],
                      want_w[i], (unsigned long long)seed);
        }
    for (size_t i = (size_t)T * K; i < on; i++) cr_assert(ids[i] == -1 && isnan(w[i]), "router wrote past tokens * K");
    free(hl), free(l), free(want_ids), free(want_w), free(ids), free(w);
    dev_free(dev, dl), dev_free(dev, db), dev_free(dev, dids), dev_free(dev, dw);
    dev_module_unload(k.mod);
}

static const int TOKENS[] = {1, 7, 300};
static const int EXPERTS[] = {8, 64, 128};
static const int TOPK[] = {1, 2, 8};

Test(moe, router_softmax) {
    seed_rng();
    TileDevice *dev = open_dev();
    for (int ei = 0; ei < 3; ei++)
        for (int ki = 0; ki < 3; ki++)
            for (int rn = 0; rn < 2; rn++) {
                RouterCfg c = {.E = EXPERTS[ei], .K = TOPK[ki], .renorm = rn, .scale = 1};
                for (int ti = 0; ti < 3; ti++)
                    if (sweep_case(ei, ki, ti)) router_case(dev, &c, TOKENS[ti]);
            }
    dev_close(dev);
}

Test(moe, router_sigmoid_grouped) {
    seed_rng();
    TileDevice *dev = open_dev();
    /* DeepSeek-V3 style: sigmoid, bias for the choice, groups scored by their best two, renormalized, scaled */
    RouterCfg cs[] = {
        {.E = 64, .K = 8, .scoring = 1, .renorm = true, .grouped = true, .top2 = true, .bias = true, .n_group = 8, .topk_group = 4, .scale = 2.5f},
        {.E = 128, .K = 8, .scoring = 1, .renorm = true, .grouped = true, .top2 = true, .bias = true, .n_group = 8, .topk_group = 3, .scale = 1},
        {.E = 8, .K = 2, .scoring = 1, .renorm = false, .grouped = true, .top2 = true, .bias = true, .n_group = 4, .topk_group = 2, .scale = 1},
        /* DeepSeek-V2 style: softmax, groups scored by their best expert, no renormalization */
        {.E = 64, .K = 8, .scoring = 0, .grouped = true, .n_group = 8, .topk_group = 3, .scale = 1},
        {.E = 128, .K = 1, .scoring = 0, .grouped = true, .n_group = 16, .topk_group = 1, .scale = 1},
        /* sigmoid without groups, bf16 and f16 logits */
        {.E = 128, .K = 2, .scoring = 1, .renorm = true, .scale = 1, .logit_type = 1},
        {.E = 8, .K = 8, .scoring = 1, .scale = 1, .logit_type = 2},
        {.E = 64, .K = 2, .scoring = 0, .renorm = true, .scale = 1, .logit_type = 1},
        /* 513-1024 experts: one token a program, [1, 128] output tiles (grouped top-1 spilled at KP 8 on sm_90a) */
        {.E = 1000, .K = 1, .scoring = 1, .renorm = true, .grouped = true, .top2 = true, .bias = true, .n_group = 8, .topk_group = 3,
         .scale = 1},
        {.E = 600, .K = 8, .scoring = 0, .renorm = true, .grouped = true, .n_group = 4, .topk_group = 2, .scale = 1.5f, .logit_type = 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int ti = 0; ti < 3; ti++)
            if (sweep_case((int)i % 3, ti, 0) || ti == 2) router_case(dev, &cs[i], TOKENS[ti]); /* 300 tokens: always */
    dev_close(dev);
}

Test(moe, router_ties) {
    /* every row's logits equal: experts 0..K-1 (groups 0..topk_group-1 first), equal weights */
    seed_rng();
    TileDevice *dev = open_dev();
    RouterCfg cs[] = {
        {.E = 64, .K = 8, .renorm = true, .scale = 1, .rows_kind = 1},
        {.E = 8, .K = 2, .scoring = 1, .scale = 1, .rows_kind = 1},
        {.E = 128, .K = 8, .scoring = 1, .renorm = true, .grouped = true, .top2 = true, .n_group = 8, .topk_group = 4, .scale = 1, .rows_kind = 1},
        {.E = 64, .K = 8, .scoring = 0, .grouped = true, .n_group = 8, .topk_group = 2, .scale = 1, .rows_kind = 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) router_case(dev, &cs[i], 7);
    dev_close(dev);
}

/* ======================================================================
 * Alignment
 * ====================================================================== */
typedef struct Align {
    Kern count, scan, scatter;
    int E, BM, BE, BN;
} Align;

static void align_load(TileDevice *dev, Align *a, int E, int BM) {
    a->E = E, a->BM = BM, a->BE = pow2_at_least(E), a->BN = 64;
    char defs[128];
    snprintf(defs, sizeof defs, "BN=%d BE=64", a->BN);
    kload(dev, &a->count, "align.tile", "moe_align_count", defs);
    snprintf(defs, sizeof defs, "BM=%d BE=%d", BM, a->BE);
    kload(dev, &a->scan, "align.tile", "moe_align_scan", defs);
    snprintf(defs, sizeof defs, "BN=%d", a->BN);
    kload(dev, &a->scatter, "align.tile", "moe_align_scatter", defs);
}
static void align_unload(Align *a) {
    dev_module_unload(a->count.mod), dev_module_unload(a->scan.mod), dev_module_unload(a->scatter.mod);
}

static int max_blocks(int n_slots, int E, int BM) {
    int ne = n_slots < E ? n_slots : E;
    return cdiv(n_slots + ne * (BM - 1), BM);
}

typedef struct AlignOut {
    uint64_t sorted, experts, total; /* device buffers: max_blocks * BM, max_blocks, 1 */
    int max_blocks;
} AlignOut;

/* Run the three alignment kernels on d_ids (n_slots entries); outputs poisoned first. */
static AlignOut align_run(TileDevice *dev, const Align *a, uint64_t d_ids, int n_slots) {
    AlignOut o;
    int E = a->E, nchunks = cdiv(n_slots, a->BN);
    o.max_blocks = max_blocks(n_slots, E, a->BM);
    o.sorted = dfill(dev, (size_t)o.max_blocks * a->BM * 4, 0x7f);
    o.experts = dfill(dev, (size_t)o.max_blocks * 4, 0x7f);
    o.total = dfill(dev, 4, 0x7f);
    uint64_t counts = dfill(dev, (size_t)nchunks * E * 4, 0x7f), base = dfill(dev, (size_t)nchunks * E * 4, 0x7f);
    void *p1[] = {&d_ids, &counts, &n_slots, &E};
    klaunch(dev, &a->count, "moe_align_count", (unsigned)nchunks, 1, p1);
    void *p2[] = {&counts, &base, &o.sorted, &o.experts, &o.total, &nchunks, &n_slots, &E, &o.max_blocks};
    klaunch(dev, &a->scan, "moe_align_scan", 1, 1, p2);
    void *p3[] = {&d_ids, &base, &o.sorted, &n_slots, &E};
    klaunch(dev, &a->scatter, "moe_align_scatter", (unsigned)nchunks, 1, p3);
    dev_free(dev, counts), dev_free(dev, base);
    return o;
}

static void align_free(TileDevice *dev, AlignOut *o) { dev_free(dev, o->sorted), dev_free(dev, o->experts), dev_free(dev, o->total); }

/* Check the alignment exactly against the host's: segments in expert order, slots ascending, sentinels. */
static void align_check(TileDevice *dev, const Align *a, const AlignOut *o, const int *ids, int n_slots, const char *what) {
    int E = a->E, BM = a->BM;
    int *cnt = calloc((size_t)E, sizeof(int));
    for (int s = 0; s < n_slots; s++)
        if (ids[s] >= 0 && ids[s] < E) cnt[ids[s]]++;
    int total = 0;
    for (int e = 0; e < E; e++) total += cdiv(cnt[e], BM) * BM;
    int *want = malloc(sizeof(int) * (size_t)(total + 1)), *want_e = malloc(sizeof(int) * (size_t)o->max_blocks);
    int pos = 0;
    for (int e = 0; e < E; e++) {
        int start = pos;
        for (int s = 0; s < n_slots; s++)
            if (ids[s] == e) want[pos++] = s;
        while ((pos - start) % BM) want[pos++] = n_slots;
        for (int b = start / BM; b < pos / BM; b++) want_e[b] = e;
    }
    cr_assert_eq(pos, total);
    cr_assert_leq(total, o->max_blocks * BM, "%s: padded total %d exceeds the bound", what, total);
    for (int b = total / BM; b < o->max_blocks; b++) want_e[b] = -1;
    int *got_total = dget(dev, o->total, 4);
    int *got = dget(dev, o->sorted, (size_t)o->max_blocks * BM * 4), *got_e = dget(dev, o->experts, (size_t)o->max_blocks * 4);
    cr_assert_eq(*got_total, total, "%s: padded total %d, want %d (seed %llu)", what, *got_total, total, (unsigned long long)seed);
    for (int i = 0; i < total; i++)
        cr_assert_eq(got[i], want[i], "%s: sorted_ids[%d] = %d, want %d (seed %llu)", what, i, got[i], want[i],
                     (unsigned long long)seed);
    for (int i = total; i < o->max_blocks * BM; i++) cr_assert_eq(got[i], 0x7f7f7f7f, "%s: sorted_ids[%d] written past the total", what, i);
    for (int b = 0; b < o->max_blocks; b++)
        cr_assert_eq(got_e[b], want_e[b], "%s: expert_ids[%d] = %d, want %d (seed %llu)", what, b, got_e[b], want_e[b],
                     (unsigned long long)seed);
    free(cnt), free(want), free(want_e), free(got_total), free(got), free(got_e);
}

/* Routings: 0 random distinct experts per token; 1 every token's first expert is `hot`;
 * 2 only the first max(K, 3) experts used (the rest receive nothing); 3 random with
 * about a tenth of the slots -1 (dropped); 4 K == 1: every token on one expert. */
static void make_routing(int kind, int T, int E, int K, int *ids) {
    int hot = irand(E), pool = kind == 2 ? (K > 3 ? K : 3) : E;
    if (pool > E) pool = E;
    for (int t = 0; t < T; t++) {
        for (int j = 0; j < K; j++) {
            int e, dup;
            do {
                e = (kind == 1 || kind == 4) && j == 0 ? hot : irand(pool);
                dup = 0;
                for (int i = 0; i < j; i++) dup |= ids[t * K + i] == e;
            } while (dup);
            ids[t * K + j] = e;
        }
        if (kind == 3)
            for (int j = 0; j < K; j++)
                if (irand(10) == 0) ids[t * K + j] = -1;
    }
}

/* Under the sanitizers each (experts, BM, top-k, tokens) case of the Latin square runs one of the four
 * routings, turning from case to case: each (experts, BM) still meets three routings and each experts count
 * all four (dropped slots included), with both BMs */
Test(moe, align) {
    seed_rng();
    TileDevice *dev = open_dev();
    for (int ei = 0; ei < 3; ei++)
        for (int bm = 16, bi = 0; bm <= 64; bm *= 4, bi++) {
            Align a;
            align_load(dev, &a, EXPERTS[ei], bm);
            for (int ki = 0; ki < 3; ki++)
                for (int ti = 0; ti < 3; ti++)
                    for (int kind = 0; kind < 4; kind++) {
                        int T = TOKENS[ti], K = TOPK[ki], n = T * K;
                        if (K > EXPERTS[ei] || !sweep_case(ei, ki, ti) || !turn_case(kind, 4, ei + 2 * bi + ki)) continue;
                        int *ids = malloc(sizeof(int) * (size_t)n);
                        make_routing(kind, T, EXPERTS[ei], K, ids);
                        uint64_t d_ids = dput(dev, ids, sizeof(int) * (size_t)n);
                        AlignOut o = align_run(dev, &a, d_ids, n);
                        char what[96];
                        snprintf(what, sizeof what, "align E=%d BM=%d K=%d T=%d routing %d", EXPERTS[ei], bm, K, T, kind);
                        align_check(dev, &a, &o, ids, n, what);
                        align_free(dev, &o);
                        dev_free(dev, d_ids);
                        free(ids);
                    }
            align_unload(&a);
        }
    dev_close(dev);
}

/* ======================================================================
 * Expert GEMMs (alignment + gate_up + down), against the float64 forward
 * ====================================================================== */
typedef struct Experts {
    Align al;
    Kern gate_up, down;
    bool bf16;
    int BN, BK;
} Experts;

static void experts_load(TileDevice *dev, Experts *x, bool bf16, int E, int BM) {
    x->bf16 = bf16, x->BN = 64, x->BK = 32;
    align_load(dev, &x->al, E, BM);
    char defs[128];
    snprintf(defs, sizeof defs, "BM=%d BN=%d BK=%d", BM, x->BN, x->BK);
    kload(dev, &x->gate_up, "experts.tile", bf16 ? "moe_gate_up_bf16" : "moe_gate_up_f16", defs);
    kload(dev, &x->down, "experts.tile", bf16 ? "moe_down_bf16" : "moe_down_f16", defs);
}
static void experts_unload(Experts *x) {
    align_unload(&x->al);
    dev_module_unload(x->gate_up.mod), dev_module_unload(x->down.mod);
}

static void experts_case(TileDevice *dev, const Experts *x, int T, int K, int H, int I, int routing) {
    int E = x->al.E, n = T * K, sx = H + 8, so = H + 5;
    bool bf = x->bf16;
    /* inputs, scaled so every stage stays near 1 */
    uint16_t *hx = malloc(2 * (size_t)T * sx), *hw1 = malloc(2 * (size_t)E * 2 * I * H), *hw2 = malloc(2 * (size_t)E * H * I);
    double *vx = malloc(sizeof(double) * (size_t)T * sx), *vw1 = malloc(sizeof(double) * (size_t)E * 2 * I * H);
    double *vw2 = malloc(sizeof(double) * (size_t)E * H * I);
    for (size_t i = 0; i < (size_t)T * sx; i++) vx[i] = put16(bf, hx + i, urand());
    for (size_t i = 0; i < (size_t)E * 2 * I * H; i++) vw1[i] = put16(bf, hw1 + i, urand() * 2 / sqrt(H));
    for (size_t i = 0; i < (size_t)E * H * I; i++) vw2[i] = put16(bf, hw2 + i, urand() * 2 / sqrt(I));
    int *ids = malloc(sizeof(int) * (size_t)n);
    float *tw = malloc(sizeof(float) * (size_t)n);
    make_routing(routing, T, E, K, ids);
    for (int s = 0; s < n; s++) tw[s] = (float)(0.25 + 0.75 * fabs(urand()));
    float *hout = malloc(sizeof(float) * (size_t)T * so);
    for (size_t i = 0; i < (size_t)T * so; i++) hout[i] = (i % so) < (size_t)H ? (float)urand() : NAN; /* residual; NaN past hidden */

    uint64_t dx = dput(dev, hx, 2 * (size_t)T * sx), dw1 = dput(dev, hw1, 2 * (size_t)E * 2 * I * H);
    uint64_t dw2 = dput(dev, hw2, 2 * (size_t)E * H * I), dids = dput(dev, ids, sizeof(int) * (size_t)n);
    uint64_t dtw = dput(dev, tw, sizeof(float) * (size_t)n), dout = dput(dev, hout, sizeof(float) * (size_t)T * so);
    uint64_t dh = dfill(dev, 2 * (size_t)n * I, 0xff); /* NaN in both types */
    AlignOut o = align_run(dev, &x->al, dids, n);
    char what[128];
    snprintf(what, sizeof what, "%s E=%d BM=%d K=%d T=%d H=%d I=%d routing %d", bf ? "bf16" : "f16", E, x->al.BM, K, T, H, I, routing);
    align_check(dev, &x->al, &o, ids, n, what);
    void *p1[] = {&dx, &dw1, &dh, &o.sorted, &o.experts, &o.total, &n, &K, &H, &I, &sx};
    klaunch(dev, &x->gate_up, what, (unsigned)o.max_blocks, (unsigned)cdiv(I, x->BN), p1);
    void *p2[] = {&dh, &dw2, &dout, &dtw, &o.sorted, &o.experts, &o.total, &n, &K, &H, &I, &so};
    klaunch(dev, &x->down, what, (unsigned)o.max_blocks, (unsigned)cdiv(H, x->BN), p2);
    uint16_t *gh = dget(dev, dh, 2 * (size_t)n * I);
    float *gout = dget(dev, dout, sizeof(float) * (size_t)T * so);

    /* reference: h per slot (checked, then used rounded as the device stores it), out per token */
    double rnd = bf ? 1.0 / 256 : 1.0 / 2048; /* relative rounding of a stored h */
    double *hv = calloc((size_t)n * I, sizeof(double));
    for (int s = 0; s < n; s++) {
        int e = ids[s], t = s / K;
        for (int i = 0; i < I; i++) {
            double got = bf ? bf16_to_d(gh[(size_t)s * I + i]) : f16_to_d(gh[(size_t)s * I + i]);
            if (e < 0) {
                cr_assert_eq(gh[(size_t)s * I + i], 0xffff, "%s: h of dropped slot %d written", what, s);
                continue;
            }
            const double *xt = vx + (size_t)t * sx, *wg = vw1 + ((size_t)e * 2 * I + i) * H, *wu = vw1 + ((size_t)e * 2 * I + I + i) * H;
            double mg, mu, g = ref_dot(H, xt, 1, wg, 1, &mg), u = ref_dot(H, xt, 1, wu, 1, &mu);
            double want = ref_activation(TILE_ACT_SILU, g) * u;
            double tol = rnd * fabs(want) + 1e-5 * (mg * fabs(u) + mu * (fabs(g) + 1)) + 1e-6;
            cr_assert(fabs(got - want) <= tol, "%s: h[slot %d][%d] = %.7g, want %.7g (tol %.3g, seed %llu)", what, s, i, got, want, tol,
                      (unsigned long long)seed);
            hv[(size_t)s * I + i] = got;
        }
    }
    /* out: the residual plus the down projection of the device's h */
    double *want = malloc(sizeof(double) * (size_t)T * so), *mag = malloc(sizeof(double) * (size_t)T * so), *twd = malloc(sizeof(double) * (size_t)n);
    for (size_t i = 0; i < (size_t)T * so; i++) want[i] = hout[i], mag[i] = fabs(hout[i]);
    for (int s = 0; s < n; s++) twd[s] = tw[s];
    ref_moe_args ma = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .x = vx, .ldx = sx, .w1 = vw1, .w2 = vw2,
                       .topk_ids = ids, .topk_weights = twd, .h = hv};
    cr_assert(ref_moe_forward(&ma, want, so, mag), "ref_moe_forward rejected %s", what);
    for (int t = 0; t < T; t++)
        for (int c = 0; c < so; c++) {
            double got = gout[(size_t)t * so + c];
            if (c >= H) {
                cr_assert(isnan(got), "%s: out[%d][%d] written past hidden", what, t, c);
                continue;
            }
            double w = want[(size_t)t * so + c], tol = 2e-5 * mag[(size_t)t * so + c] + 1e-6;
            cr_assert(fabs(got - w) <= tol, "%s: out[%d][%d] = %.7g, want %.7g (tol %.3g, seed %llu)", what, t, c, got, w, tol,
                      (unsigned long long)seed);
        }
    align_free(dev, &o);
    uint64_t bufs[] = {dx, dw1, dw2, dids, dtw, dout, dh};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) dev_free(dev, bufs[i]);
    free(hx), free(hw1), free(hw2), free(vx), free(vw1), free(vw2), free(ids), free(tw), free(hout), free(gh), free(gout), free(hv);
    free(want), free(mag), free(twd);
}

static void experts_sweep(bool bf16) {
    seed_rng();
    TileDevice *dev = open_dev();
    for (int ei = 0; ei < 3; ei++) {
        int E = EXPERTS[ei], BM = E <= 8 ? 64 : 16;
        Experts x;
        experts_load(dev, &x, bf16, E, BM);
        for (int ki = 0; ki < 3; ki++)
            for (int ti = 0; ti < 3; ti++)
                if (sweep_case(ei, ki, ti)) experts_case(dev, &x, TOKENS[ti], TOPK[ki], 64, 128, (ei + ki + ti) % 4);
        experts_unload(&x);
    }
    dev_close(dev);
}

Test(moe, experts_f16) { experts_sweep(false); }
Test(moe, experts_bf16) { experts_sweep(true); }

Test(moe, experts_one_expert_and_odd_sizes) {
    /* every token on one expert (K = 1), hot expert with K = 2, sizes that are not multiples of the tiles */
    seed_rng();
    TileDevice *dev = open_dev();
    Experts x;
    experts_load(dev, &x, true, 8, 32);
    experts_case(dev, &x, 300, 1, 64, 128, 4);
    experts_case(dev, &x, 7, 2, 80, 48, 1);
    experts_case(dev, &x, 33, 8, 48, 72, 2);
    experts_unload(&x);
    experts_load(dev, &x, false, 64, 16);
    experts_case(dev, &x, 300, 1, 64, 64, 4);
    experts_case(dev, &x, 5, 8, 40, 100, 3);
    experts_unload(&x);
    dev_close(dev);
}

/* ======================================================================
 * tile_moe_forward through the C API (router or precomputed routing)
 * ====================================================================== */
typedef struct ApiCase {
    int T, E, K, H, I;
    bool bf16, router, accumulate, caller_ws, give_ids;
    RouterCfg rc; /* when router (E, K copied in) */
    int routing;  /* make_routing kind when !router */
} ApiCase;

static tile_devptr api_put(tile_context *ctx, const void *h, size_t bytes) {
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, bytes, &d), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_htod(ctx, d, h, bytes), TILE_OK, "%s", tile_last_error(ctx));
    return d;
}

static void api_case(tile_context *ctx, ApiCase *c) {
    int T = c->T, E = c->E, K = c->K, H = c->H, I = c->I, n = T * K, ldx = H + 16, ldo = H + 3;
    bool bf = c->bf16;
    c->rc.E = E, c->rc.K = K;
    uint16_t *hx = malloc(2 * (size_t)T * ldx), *hw1 = malloc(2 * (size_t)E * 2 * I * H), *hw2 = malloc(2 * (size_t)E * H * I);
    double *vx = malloc(sizeof(double) * (size_t)T * ldx), *vw1 = malloc(sizeof(double) * (size_t)E * 2 * I * H);
    double *vw2 = malloc(sizeof(double) * (size_t)E * H * I);
    for (size_t i = 0; i < (size_t)T * ldx; i++) vx[i] = put16(bf, hx + i, urand());
    for (size_t i = 0; i < (size_t)E * 2 * I * H; i++) vw1[i] = put16(bf, hw1 + i, urand() * 2 / sqrt(H));
    for (size_t i = 0; i < (size_t)E * H * I; i++) vw2[i] = put16(bf, hw2 + i, urand() * 2 / sqrt(I));
    int *ids = malloc(sizeof(int) * (size_t)n);
    double *tw = malloc(sizeof(double) * (size_t)n);
    float *ftw = malloc(sizeof(float) * (size_t)n), *logits = malloc(sizeof(float) * (size_t)T * E), fbias[256];
    double *l = malloc(sizeof(double) * (size_t)E), bias[256];
    for (int e = 0; e < E; e++) fbias[e] = (float)(irand(9) - 4) / 8.0f, bias[e] = fbias[e];
    if (c->router) {
        for (int t = 0; t < T; t++) {
            int tries = 0;
            do {
                draw_row(&c->rc, l, logits + (size_t)t * E);
                cr_assert(++tries < 1000);
            } while (!router_ref(&c->rc, l, bias, ids + (size_t)t * K, tw + (size_t)t * K));
        }
    } else {
        make_routing(c->routing, T, E, K, ids);
        for (int s = 0; s < n; s++) ftw[s] = (float)(0.25 + 0.75 * fabs(urand())), tw[s] = ftw[s];
    }
    float *hout = malloc(sizeof(float) * (size_t)T * ldo);
    for (size_t i = 0; i < (size_t)T * ldo; i++) hout[i] = (i % ldo) < (size_t)H ? (float)urand() : NAN;

    tile_moe_args a = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = bf ? TILE_BF16 : TILE_F16,
                       .ldx = ldx, .ldo = ldo, .accumulate = c->accumulate, .scoring = c->rc.scoring ? TILE_MOE_SIGMOID : TILE_MOE_SOFTMAX,
                       .renormalize = c->rc.renorm, .n_group = c->rc.grouped ? c->rc.n_group : 0, .topk_group = c->rc.topk_group,
                       .group_top2 = c->rc.top2, .routed_scale = c->rc.scale, .logits_dtype = TILE_F32};
    a.x = api_put(ctx, hx, 2 * (size_t)T * ldx);
    a.w1 = api_put(ctx, hw1, 2 * (size_t)E * 2 * I * H);
    a.w2 = api_put(ctx, hw2, 2 * (size_t)E * H * I);
    a.out = api_put(ctx, hout, sizeof(float) * (size_t)T * ldo);
    if (c->router) {
        a.router_logits = api_put(ctx, logits, sizeof(float) * (size_t)T * E);
        if (c->rc.bias) a.score_bias = api_put(ctx, fbias, sizeof(float) * (size_t)E);
        if (c->give_ids) {
            cr_assert_eq(tile_malloc(ctx, 4 * (size_t)n, &a.topk_ids), TILE_OK);
            cr_assert_eq(tile_malloc(ctx, 4 * (size_t)n, &a.topk_weights), TILE_OK);
        }
    } else {
        a.topk_ids = api_put(ctx, ids, 4 * (size_t)n);
        a.topk_weights = api_put(ctx, ftw, 4 * (size_t)n);
    }
    if (c->caller_ws) {
        size_t bytes;
        cr_assert_eq(tile_moe_workspace_size(&a, &bytes), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, bytes, &a.workspace), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memset(ctx, a.workspace, 0xff, bytes), TILE_OK);
        a.workspace_bytes = bytes;
    }
    char what[128];
    snprintf(what, sizeof what, "tile_moe_forward %s T=%d E=%d K=%d H=%d I=%d router=%d", bf ? "bf16" : "f16", T, E, K, H, I, c->router);
    cr_assert_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s: %s", what, tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    float *gout = malloc(sizeof(float) * (size_t)T * ldo);
    cr_assert_eq(tile_memcpy_dtoh(ctx, gout, a.out, sizeof(float) * (size_t)T * ldo), TILE_OK);
    if (c->router && c->give_ids) {
        int *gids = malloc(4 * (size_t)n);
        cr_assert_eq(tile_memcpy_dtoh(ctx, gids, a.topk_ids, 4 * (size_t)n), TILE_OK);
        for (int s = 0; s < n; s++) cr_assert_eq(gids[s], ids[s], "%s: topk_ids[%d] = %d, want %d (seed %llu)", what, s, gids[s], ids[s], (unsigned long long)seed);
        free(gids);
    }

    /* float64 forward; h is rounded to the weights' type on the device (the tolerance's rnd) */
    double rnd = bf ? 1.0 / 256 : 1.0 / 2048;
    double *want = calloc((size_t)T * H, sizeof(double)), *mag = calloc((size_t)T * H, sizeof(double));
    ref_moe_args ma = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .x = vx, .ldx = ldx, .w1 = vw1, .w2 = vw2,
                       .topk_ids = ids, .topk_weights = tw};
    cr_assert(ref_moe_forward(&ma, want, H, mag), "ref_moe_forward rejected %s", what);
    for (int t = 0; t < T; t++)
        for (int c2 = 0; c2 < ldo; c2++) {
            double got = gout[(size_t)t * ldo + c2];
            if (c2 >= H) {
                cr_assert(isnan(got), "%s: out[%d][%d] written past hidden", what, t, c2);
                continue;
            }
            double res = c->accumulate ? hout[(size_t)t * ldo + c2] : 0;
            double w = want[(size_t)t * H + c2] + res, tol = (rnd + 3e-5) * mag[(size_t)t * H + c2] + 1e-5 * fabs(res) + 1e-6;
            cr_assert(fabs(got - w) <= tol, "%s: out[%d][%d] = %.7g, want %.7g (tol %.3g, seed %llu)", what, t, c2, got, w, tol,
                      (unsigned long long)seed);
        }
    tile_devptr bufs[] = {a.x, a.w1, a.w2, a.out, a.router_logits, a.score_bias, a.topk_ids, a.topk_weights, a.workspace};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) tile_free(ctx, bufs[i]);
    free(hx), free(hw1), free(hw2), free(vx), free(vw1), free(vw2), free(ids), free(tw), free(ftw), free(logits), free(l);
    free(hout), free(gout), free(want), free(mag);
}

Test(moe, api_forward) {
    seed_rng();
    tile_context_options o = {.device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", .no_disk_cache = 1,
                              .emu_racecheck = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    ApiCase cs[] = {
        /* Mixtral-like routing: softmax, top-2, renormalized; internal workspace, out zeroed */
        {.T = 7, .E = 8, .K = 2, .H = 64, .I = 128, .bf16 = true, .router = true, .rc = {.renorm = true, .scale = 1}},
        /* DeepSeek-V3-like: sigmoid + bias, 8 groups keep 4 by their best two, top-8, scaled; caller's workspace and id buffers */
        {.T = 300, .E = 64, .K = 8, .H = 64, .I = 64, .router = true, .caller_ws = true, .give_ids = true,
         .rc = {.scoring = 1, .renorm = true, .grouped = true, .top2 = true, .bias = true, .n_group = 8, .topk_group = 4, .scale = 2.5f}},
        /* precomputed routing with dropped slots, accumulating into a residual */
        {.T = 300, .E = 128, .K = 1, .H = 64, .I = 128, .bf16 = true, .accumulate = true, .routing = 3},
        {.T = 1, .E = 128, .K = 8, .H = 48, .I = 80, .accumulate = true, .routing = 0},
        /* 400 slots an expert, one expert hot: BM 128 on wgmma targets, with tiles wider than hidden and inter */
        {.T = 600, .E = 3, .K = 2, .H = 80, .I = 96, .routing = 1},
        {.T = 520, .E = 2, .K = 1, .H = 272, .I = 160, .bf16 = true, .accumulate = true, .routing = 3},
        /* DeepSeek-V3's routing shape: 256 experts in 8 groups, 4 kept, top-8 */
        {.T = 7, .E = 256, .K = 8, .H = 32, .I = 32, .bf16 = true, .router = true,
         .rc = {.scoring = 1, .renorm = true, .grouped = true, .top2 = true, .bias = true, .n_group = 8, .topk_group = 4, .scale = 2.5f}},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) api_case(ctx, &cs[i]);
    /* the same call again is answered by the loaded modules */
    tile_context_stats s0, s1;
    tile_context_get_stats(ctx, &s0);
    api_case(ctx, &cs[0]);
    tile_context_get_stats(ctx, &s1);
    cr_expect_eq(s1.compiles, s0.compiles, "a repeated tile_moe_forward compiled again");

    /* argument errors are reported, not launched */
    tile_moe_args bad = {.tokens = 4, .hidden = 64, .inter = 64, .experts = 8, .topk = 2, .dtype = TILE_F8E4M3};
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "dtype"), "%s", tile_last_error(ctx));
    bad.dtype = TILE_BF16, bad.topk = 9;
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE);
    bad.topk = 2;
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE); /* no routing given */
    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 1 << 20, &buf), TILE_OK);
    bad.x = buf + 1, bad.w1 = bad.w2 = bad.out = bad.topk_ids = bad.topk_weights = buf;
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_moe_forward: x (0x") && strstr(tile_last_error(ctx), "is not aligned to its 2-byte elements"),
              "%s", tile_last_error(ctx));
    bad.x = buf, bad.accumulate = 5;
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "accumulate = 5, renormalize = 0, group_top2 = 0: each is 0 or 1"), "%s", tile_last_error(ctx));
    bad.accumulate = 0, bad.ldx = 48; /* the message names the stride */
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_moe_forward: ldx = 48 is shorter than its row of 64 elements"), "%s", tile_last_error(ctx));
    bad.ldx = 0, bad.ldo = -1;
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "ldo = -1"), "%s", tile_last_error(ctx));
    bad.ldo = 0, bad.routed_scale = NAN; /* would make every output NaN */
    cr_expect_eq(tile_moe_forward(ctx, &bad), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "routed_scale = nan is not finite"), "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
}

/* tile_moe_forward against the same layer composed from tile_gemm, one expert at a time: the expert's token rows
 * gathered on the host, gate_up = x_e W1[e]^T (f32), h = silu(gate) * up rounded to f16 as the fused kernel stores
 * it, down = h W2[e]^T (f32), out[t] += w * down.  Both accumulate in f32 from the same f16 values, so they agree
 * to f32 rounding (1e-4 of the largest output here; a wrong gathered row, expert or weight is off by O(1)).  Expert 2
 * receives no token; every token's K experts are distinct. */
Test(moe, api_forward_equals_tile_gemm_per_expert) {
    seed_rng();
    tile_context_options o = {.device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", .no_disk_cache = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    enum { T = 23, E = 5, K = 2, H = 48, I = 40 };
    static uint16_t x[T * H], w1[E * 2 * I * H], w2[E * H * I], xe[T * K * H], hh[T * K * I];
    static int32_t ids[T * K], slot[T * K];
    static float wt[T * K], out[T * H], gu[T * K * 2 * I], dn[T * K * H];
    static double comp[T * H];
    for (int i = 0; i < T * H; i++) put16(false, &x[i], urand());
    for (int i = 0; i < E * 2 * I * H; i++) put16(false, &w1[i], 0.3 * urand());
    for (int i = 0; i < E * H * I; i++) put16(false, &w2[i], 0.3 * urand());
    for (int t = 0; t < T; t++) {
        int e0 = (int)((urand() + 1) * 2) % 4, e1 = (e0 + 1 + (int)((urand() + 1) * 1.5) % 3) % 4; /* two of {0, 1, 3, 4} */
        ids[t * K] = e0 >= 2 ? e0 + 1 : e0, ids[t * K + 1] = e1 >= 2 ? e1 + 1 : e1;
        wt[t * K] = (float)(0.5 + 0.5 * urand()), wt[t * K + 1] = (float)(0.5 + 0.5 * urand());
    }
    tile_devptr dx, dw1, dw2, dout, did, dwt, da, dc;
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dx) | tile_malloc(ctx, sizeof w1, &dw1) | tile_malloc(ctx, sizeof w2, &dw2) |
                     tile_malloc(ctx, sizeof out, &dout) | tile_malloc(ctx, sizeof ids, &did) | tile_malloc(ctx, sizeof wt, &dwt) |
                     tile_malloc(ctx, sizeof xe, &da) | tile_malloc(ctx, sizeof gu, &dc),
                 TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, sizeof x) | tile_memcpy_htod(ctx, dw1, w1, sizeof w1) |
                     tile_memcpy_htod(ctx, dw2, w2, sizeof w2) | tile_memcpy_htod(ctx, did, ids, sizeof ids) |
                     tile_memcpy_htod(ctx, dwt, wt, sizeof wt) | tile_memset(ctx, dout, 0xff, sizeof out),
                 TILE_OK);
    tile_moe_args a = {.size = sizeof a, .tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = TILE_F16,
                       .x = dx, .w1 = dw1, .w2 = dw2, .out = dout, .topk_ids = did, .topk_weights = dwt};
    cr_assert_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
    int used = 0;
    for (int e = 0; e < E; e++) {
        int n = 0;
        for (int s = 0; s < T * K; s++)
            if (ids[s] == e) memcpy(xe + n * H, x + (s / K) * H, H * 2), slot[n++] = s;
        if (!n) continue;
        used++;
        tile_gemm_args g = {.size = sizeof g, .m = n, .n = 2 * I, .k = H, .a = da, .lda = H, .b = dw1 + (size_t)e * 2 * I * H * 2,
                            .ldb = H, .trans_b = 1, .c = dc, .ldc = 2 * I, .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
        cr_assert_eq(tile_memcpy_htod(ctx, da, xe, (size_t)n * H * 2), TILE_OK);
        cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, gu, dc, (size_t)n * 2 * I * 4), TILE_OK);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < I; i++) {
                double gg = gu[r * 2 * I + i], uu = gu[r * 2 * I + I + i];
                put16(false, &hh[r * I + i], gg / (1 + exp(-gg)) * uu);
            }
        g = (tile_gemm_args){.size = sizeof g, .m = n, .n = H, .k = I, .a = da, .lda = I, .b = dw2 + (size_t)e * H * I * 2,
                             .ldb = I, .trans_b = 1, .c = dc, .ldc = H, .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
        cr_assert_eq(tile_memcpy_htod(ctx, da, hh, (size_t)n * I * 2), TILE_OK);
        cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, dn, dc, (size_t)n * H * 4), TILE_OK);
        for (int r = 0; r < n; r++)
            for (int c = 0; c < H; c++) comp[(slot[r] / K) * H + c] += wt[slot[r]] * (double)dn[r * H + c];
    }
    cr_expect_eq(used, E - 1, "expert 2 should be the only one without tokens");
    double worst = 0, big = 0;
    for (int i = 0; i < T * H; i++) {
        double d = fabs(out[i] - comp[i]);
        worst = isnan(d) || d > worst ? (isnan(d) ? INFINITY : d) : worst;
        big = fmax(big, fabs(comp[i]));
    }
    cr_expect(big > 0.1, "the composed layer is all but zero (%g)", big);
    cr_expect(worst <= 1e-4 * big, "tile_moe_forward and the tile_gemm composition differ by %g (largest output %g)", worst, big);
    tile_context_destroy(ctx);
}

/* out is zeroed and accumulated into while the kernels read the inputs: an out over any of them is refused (an out
 * over x was zeroed before the gate_up GEMM read x, and the call returned TILE_OK with every row 0); an out right
 * after x in the same allocation runs and leaves x as it was. */
Test(moe, api_out_overlapping_inputs) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    enum { T = 3, H = 32, I = 16, E = 2, K = 1 };
    tile_devptr buf, w1, w2, ids, wts;
    cr_assert_eq(tile_malloc(ctx, 1 << 16, &buf), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 2 * E * 2 * I * H, &w1), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 2 * E * H * I, &w2), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4 * T * K, &ids), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4 * T * K, &wts), TILE_OK);
    uint16_t w[E * 2 * I * H], x[T * H];
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) w[i] = 0x3c00; /* f16 1.0 */
    for (size_t i = 0; i < sizeof x / sizeof *x; i++) x[i] = 0x3800;  /* f16 0.5 */
    int32_t id[T] = {0, 1, 0};
    float wt[T] = {1, 1, 1};
    cr_assert_eq(tile_memcpy_htod(ctx, w1, w, sizeof w), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, w2, w, 2 * E * H * I), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, ids, id, sizeof id), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, wts, wt, sizeof wt), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, buf, x, sizeof x), TILE_OK);
    tile_moe_args a = {.size = sizeof a, .tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = TILE_F16,
                       .x = buf, .w1 = w1, .w2 = w2, .out = buf + 64, .topk_ids = ids, .topk_weights = wts};
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_moe_forward: out [0x") && strstr(tile_last_error(ctx), "overlaps x [0x") &&
                  strstr(tile_last_error(ctx), "out is zeroed and accumulated into while the kernels read x"),
              "%s", tile_last_error(ctx));
    a.out = w2 + 4 * H, a.accumulate = 1;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "overlaps w2"), "%s", tile_last_error(ctx));
    a.out = buf + sizeof x, a.accumulate = 0; /* x's last byte, then out: no overlap */
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    uint16_t x2[T * H];
    float out[T * H];
    cr_assert_eq(tile_memcpy_dtoh(ctx, x2, buf, sizeof x2), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, buf + sizeof x, sizeof out), TILE_OK);
    cr_expect_eq(memcmp(x, x2, sizeof x), 0, "x changed");
    /* gate = up = 0.5 * 32 = 16, h = silu(16) * 16 (f16), out = 16 h: every element the same, from x as it was */
    double g = 16, h = g / (1 + exp(-g)) * g, want = 16 * h;
    for (int i = 0; i < T * H; i++) cr_expect(fabs(out[i] - want) <= 1e-3 * want, "out[%d] = %g, want %g", i, out[i], want);
    /* the workspace is written while the kernels read the rest, and with a router so are topk_ids and topk_weights:
     * they share no byte with another tensor of the call either (they ran, the routing or x overwritten) */
    size_t wsb;
    cr_assert_eq(tile_moe_workspace_size(&a, &wsb), TILE_OK);
    a.out = buf + 8192, a.workspace = buf + 128, a.workspace_bytes = wsb; /* over the end of x (192 bytes) */
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "workspace [0x") && strstr(tile_last_error(ctx), "overlaps x [0x"), "%s", tile_last_error(ctx));
    a.workspace = buf + 16384 + 8; /* an arena offset that is no multiple of 16 (docs/moe.md) */
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "workspace (0x") && strstr(tile_last_error(ctx), "16-byte"), "%s", tile_last_error(ctx));
    /* workspace_bytes is the caller's word for what it holds: no more than lies between workspace and the end of
     * its allocation (it was accepted as long as the bytes the call needs fit) */
    a.workspace = buf + 16384, a.workspace_bytes = (1 << 16) - 16384 + 16;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    char wsmsg[160];
    snprintf(wsmsg, sizeof wsmsg, "tile_moe_forward: workspace_bytes: %d bytes at 0x%llx run past the end of its allocation (%d bytes at",
             (1 << 16) - 16384 + 16, (unsigned long long)a.workspace, 1 << 16);
    cr_expect(strstr(tile_last_error(ctx), wsmsg), "%s", tile_last_error(ctx));
    a.workspace_bytes = (1 << 16) - 16384; /* to the end: more than it needs, all there */
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a.workspace_bytes = wsb;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    float logits[T * E] = {0.5f, -1, 2, 0.25f, -3, 1};
    cr_assert_eq(tile_memcpy_htod(ctx, buf + 12288, logits, sizeof logits), TILE_OK);
    a.router_logits = buf + 12288, a.logits_dtype = TILE_F32, a.topk_ids = buf + 12288 + 8; /* ids written over the logits */
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "topk_ids [0x") && strstr(tile_last_error(ctx), "overlaps router_logits [0x"), "%s",
              tile_last_error(ctx));
    a.topk_ids = ids, a.topk_weights = ids; /* both outputs in one buffer */
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "overlaps topk_weights [0x"), "%s", tile_last_error(ctx));
    a.topk_weights = a.workspace + 64; /* inside the workspace */
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "topk_weights [0x") && strstr(tile_last_error(ctx), "overlaps workspace [0x"), "%s",
              tile_last_error(ctx));
    a.topk_weights = wts;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    int32_t got_ids[T];
    cr_assert_eq(tile_memcpy_dtoh(ctx, got_ids, ids, sizeof got_ids), TILE_OK);
    for (int t = 0; t < T; t++) cr_expect_eq(got_ids[t], logits[t * E] > logits[t * E + 1] ? 0 : 1, "token %d routed to %d", t, got_ids[t]);
    tile_context_destroy(ctx);
}

/* With a router, topk_ids and topk_weights are outputs "written when non-zero", each on its own: a call given
 * only one of them ran, kept both in the workspace and left the caller's buffer as it was. */
Test(moe, api_router_writes_either_output) {
    seed_rng();
    tile_context_options o = {.device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", .no_disk_cache = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    enum { T = 5, E = 6, K = 2, H = 32, I = 16 };
    float logits[T * E];
    int want_ids[T * K];
    double want_w[T * K], l[E];
    ref_moe_router rc = {.experts = E, .topk = K, .scoring = TILE_MOE_SOFTMAX, .renormalize = true};
    for (int t = 0; t < T; t++) {
        for (int e = 0; e < E; e++) logits[t * E + e] = (float)(e == (t * 5) % E ? 3 : e == (t * 5 + 1) % E ? 2 : urand()), l[e] = logits[t * E + e];
        cr_assert(ref_moe_route(&rc, l, want_ids + t * K, want_w + t * K, NULL));
    }
    uint16_t zeros16[E * 2 * I * H] = {0};
    tile_moe_args a = {.size = sizeof a, .tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = TILE_F16,
                       .logits_dtype = TILE_F32, .scoring = TILE_MOE_SOFTMAX, .renormalize = 1};
    a.x = api_put(ctx, zeros16, 2 * T * H);
    a.w1 = api_put(ctx, zeros16, 2 * E * 2 * I * H);
    a.w2 = api_put(ctx, zeros16, 2 * E * H * I);
    a.out = api_put(ctx, zeros16, 4 * T * H);
    a.router_logits = api_put(ctx, logits, sizeof logits);
    tile_devptr ids, wts;
    cr_assert_eq(tile_malloc(ctx, 4 * T * K, &ids), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4 * T * K, &wts), TILE_OK);
    for (int which = 0; which < 2; which++) {
        cr_assert_eq(tile_memset(ctx, ids, 0xff, 4 * T * K), TILE_OK);
        cr_assert_eq(tile_memset(ctx, wts, 0xff, 4 * T * K), TILE_OK);
        a.topk_ids = which == 0 ? ids : 0, a.topk_weights = which == 1 ? wts : 0;
        cr_assert_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_synchronize(ctx), TILE_OK);
        int32_t gi[T * K];
        float gw[T * K];
        cr_assert_eq(tile_memcpy_dtoh(ctx, gi, ids, sizeof gi), TILE_OK);
        cr_assert_eq(tile_memcpy_dtoh(ctx, gw, wts, sizeof gw), TILE_OK);
        for (int s = 0; s < T * K; s++) {
            if (which == 0) {
                cr_expect_eq(gi[s], want_ids[s], "topk_ids alone: topk_ids[%d] = %d, want %d", s, gi[s], want_ids[s]);
                cr_expect(isnan(gw[s]), "topk_ids alone: topk_weights (not given) written at %d", s);
            } else {
                cr_expect(fabs(gw[s] - want_w[s]) <= 1e-6, "topk_weights alone: topk_weights[%d] = %.8g, want %.8g", s, gw[s], want_w[s]);
                cr_expect_eq(gi[s], -1, "topk_weights alone: topk_ids (not given) written at %d", s);
            }
        }
    }
    /* a given output is range-checked like the inputs */
    a.topk_ids = ids + 4, a.topk_weights = 0;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "topk_ids"), "%s", tile_last_error(ctx));
    tile_devptr bufs[] = {a.x, a.w1, a.w2, a.out, a.router_logits, ids, wts};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tile_free(ctx, bufs[i]);
    tile_context_destroy(ctx);
}

/* tile_moe_workspace_size refuses sizes the forward call refuses: huge token counts wrapped the
 * size computation into a few hundred bytes (TILE_OK). */
Test(moe, workspace_size_refuses_huge_sizes) {
    const int64_t tokens[] = {(int64_t)1 << 31, (int64_t)1 << 40, INT64_MAX / 2, INT64_MAX};
    for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
        tile_moe_args a = {.size = sizeof a, .tokens = tokens[i], .hidden = 16, .inter = 16, .experts = 4, .topk = 2, .dtype = TILE_F16};
        size_t bytes = 7;
        cr_expect_eq(tile_moe_workspace_size(&a, &bytes), TILE_ERROR_INVALID_VALUE, "tokens = %lld: %zu bytes", (long long)tokens[i], bytes);
    }
    tile_moe_args a = {.size = sizeof a, .tokens = 1000, .hidden = 16, .inter = INT32_MAX - 1, .experts = 8, .topk = 8, .dtype = TILE_F16};
    size_t bytes;
    cr_expect_eq(tile_moe_workspace_size(&a, &bytes), TILE_ERROR_INVALID_VALUE, "inter near 2^31: %zu bytes", bytes);
    a.inter = 16;
    cr_expect_eq(tile_moe_workspace_size(&a, &bytes), TILE_OK);
    cr_expect_gt(bytes, 2 * 1000 * 8 * 16, "%zu bytes hold no h", bytes);
}

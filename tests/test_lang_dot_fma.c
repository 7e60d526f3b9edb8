/* test_lang_dot_fma.c - the FMA path of `dot` (f32 ieee, f64, i32) where a thread's multiply-adds are many: the
 * k loop is then a loop over chunks of K (lower/llvm_shared.c), each output still one fma per k in ascending k,
 * so its sums are the fully unrolled ones bit for bit; and where K is below the tensor cores' K (1, 4, 8: Triton needs 8
 * for f32 and 4 for f64), tiles below an mma's M and N, the unrolled FMA dot at two warp counts.  Each case runs on the emulator on fresh random inputs,
 * outputs poisoned first, loads masked at sizes that are not multiples of the tile, and is checked:
 *   - against the same dot on the host as one C fma per k in ascending k (f32 fmaf, f64 fma, i32 wrapping
 *     multiply-add): equal bit for bit;
 *   - against a float64 dot (f32), within a few ulps of sum |a b|;
 *   - against the same kernel at a warp count where the k loop stays unrolled (fewer accumulators a thread):
 *     equal bit for bit;
 *   - in the PTX: a chunked dot has fewer fma instructions than multiply-adds a thread does, an unrolled one
 *     at least as many. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lang_run.h"
#include "tests/test_rng.h"

typedef enum { F32, F64, I32 } Ty;

typedef struct Case {
    Ty t;
    int M, N, K, warps; /* the tile; K: the dot's K (the tile of one loop step when kloop) */
    int m, n, k;        /* the data */
    bool kloop;         /* acc = dot(x, y, acc) in a loop over K tiles: the chunk loop inside a user loop */
    const char *arch, *device;
    bool small;         /* K too small to chunk: both warp counts unrolled */
} Case;

static const char *tname(Ty t) { return t == F32 ? "f32" : t == F64 ? "f64" : "i32"; }
static size_t tbytes(Ty t) { return t == F64 ? 8 : 4; }

static int count(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++) n++;
    return n;
}

/* The source of a case at `warps` warps */
static void source(const Case *c, int warps, char *src, size_t cap) {
    const char *T = tname(c->t);
    if (!c->kloop)
        snprintf(src, cap,
                 "@num_warps(%d)\n"
                 "kernel k(a: *%s, b: *%s, o: *%s, m: i32, n: i32, kk: i32) {\n"
                 "    let im = arange(0, %d)[:, None];\n"
                 "    let ik = arange(0, %d);\n"
                 "    let inn = arange(0, %d)[None, :];\n"
                 "    let x = load(a + im * kk + ik[None, :], (im < m) & (ik[None, :] < kk), 0);\n"
                 "    let y = load(b + ik[:, None] * n + inn, (ik[:, None] < kk) & (inn < n), 0);\n"
                 "    store(o + im * n + inn, dot(x, y), (im < m) & (inn < n));\n"
                 "}\n",
                 warps, T, T, T, c->M, c->K, c->N);
    else
        snprintf(src, cap,
                 "@num_warps(%d)\n"
                 "kernel k(a: *%s, b: *%s, o: *%s, m: i32, n: i32, kk: i32) {\n"
                 "    let im = arange(0, %d)[:, None];\n"
                 "    let ik = arange(0, %d);\n"
                 "    let inn = arange(0, %d)[None, :];\n"
                 "    let acc = zeros([%d, %d], %s);\n"
                 "    for k0 in range(0, kk, %d) {\n"
                 "        let ka = k0 + ik[None, :];\n"
                 "        let kb = k0 + ik[:, None];\n"
                 "        let x = load(a + im * kk + ka, (im < m) & (ka < kk), 0);\n"
                 "        let y = load(b + kb * n + inn, (kb < kk) & (inn < n), 0);\n"
                 "        acc = dot(x, y, acc);\n"
                 "    }\n"
                 "    store(o + im * n + inn, acc, (im < m) & (inn < n));\n"
                 "}\n",
                 warps, T, T, T, c->M, c->K, c->N, c->M, c->N, T, c->K);
}

/* Runs the case at `warps` warps: the output (c->m x c->n, then a guard) in out; whether the PTX has the
 * chunk loop (fewer fma instructions than multiply-adds a thread does) in *chunked. */
static void run(const Case *c, int warps, const void *ha, const void *hb, void *out, size_t guard, bool *chunked) {
    char src[2048];
    source(c, warps, src, sizeof src);
    char *ptx = compile_ptx(src, c->arch);
    const char *op = c->t == F32 ? "fma.rn.f32" : c->t == F64 ? "fma.rn.f64" : "mad.lo.s32";
    int per_thread = c->M * c->N * c->K / (32 * warps), got = count(ptx, op);
    cr_assert(got > 0, "%s %dx%dx%d w%d: no %s in the PTX", tname(c->t), c->M, c->N, c->K, warps, op);
    /* unrolled: at least one per multiply-add (a K loop's body may be copied, i32 address arithmetic adds mads) */
    *chunked = got < per_thread;
    free(ptx);
    K k;
    load_src_on(&k, src, "k", c->arch, c->device);
    size_t e = tbytes(c->t), nc = (size_t)c->m * c->n;
    uint64_t da = upload(&k, ha, (size_t)c->m * c->k * e), db = upload(&k, hb, (size_t)c->k * c->n * e);
    uint64_t d_o = poisoned(&k, (nc + guard) * e);
    int32_t m = c->m, n = c->n, kk = c->k;
    void *params[] = {&da, &db, &d_o, &m, &n, &kk};
    launch(&k, 1, params);
    download(&k, out, d_o, (nc + guard) * e);
    unload(&k);
}

/* warps: the case's; unrolled_warps: a warp count at which the same dot stays unrolled */
static void check(const Case *c, int unrolled_warps) {
    size_t e = tbytes(c->t), na = (size_t)c->m * c->k, nb = (size_t)c->k * c->n, nc = (size_t)c->m * c->n, guard = 64;
    void *ha = malloc(na * e), *hb = malloc(nb * e), *o1 = malloc((nc + guard) * e), *o2 = malloc((nc + guard) * e);
    cr_assert(ha && hb && o1 && o2);
    for (size_t i = 0; i < na + nb; i++) {
        void *p = i < na ? ha : hb;
        size_t j = i < na ? i : i - na;
        if (c->t == F32) ((float *)p)[j] = (float)urand();
        else if (c->t == F64) ((double *)p)[j] = urand();
        else ((int32_t *)p)[j] = (int32_t)(rnext() >> 32); /* full-width: the products wrap */
    }
    bool chunked, chunked2;
    run(c, c->warps, ha, hb, o1, guard, &chunked);
    run(c, unrolled_warps, ha, hb, o2, guard, &chunked2);
    char what[160];
    snprintf(what, sizeof what, "%s dot %dx%dx%d%s on %s, data %dx%dx%d (seed %#llx)", tname(c->t), c->M, c->N, c->K,
             c->kloop ? " in a K loop" : "", c->arch ? c->arch : "sm_80", c->m, c->n, c->k, (unsigned long long)seed);
    cr_expect(chunked || c->small, "%s: %d warps: the k loop is unrolled whole, expected chunks", what, c->warps);
    cr_expect(!chunked || !c->small, "%s: %d warps: the k loop is chunked, expected it unrolled", what, c->warps);
    cr_expect(!chunked2, "%s: %d warps: the k loop is chunked, expected it unrolled", what, unrolled_warps);
    int bad = 0;
    for (size_t i = 0; i < nc && bad < 5; i++) {
        size_t r = i / (size_t)c->n, col = i % (size_t)c->n;
        bool ok;
        char got[64] = "", want[64] = "";
        if (c->t == F32) {
            float acc = 0;
            double ref = 0, mag = 0;
            for (int q = 0; q < c->k; q++) {
                float x = ((float *)ha)[r * c->k + q], y = ((float *)hb)[q * c->n + col];
                acc = fmaf(x, y, acc);
                ref += (double)x * y, mag += fabs((double)x * y);
            }
            float g = ((float *)o1)[i];
            /* a chain of k fmas rounds k times: |error| <= gamma_k * sum |x y|, gamma_k = k u / (1 - k u), u = 2^-24 (a
             * smaller multiple of u fails now and then on 150-term rows) */
            double gamma = c->k * 0x1p-24 / (1 - c->k * 0x1p-24);
            ok = g == acc && ((float *)o2)[i] == acc && fabs(g - ref) <= gamma * mag;
            snprintf(got, sizeof got, "%a (unrolled %a)", g, ((float *)o2)[i]);
            snprintf(want, sizeof want, "%a (float64 %.9g)", acc, ref);
        } else if (c->t == F64) {
            double acc = 0;
            for (int q = 0; q < c->k; q++) acc = fma(((double *)ha)[r * c->k + q], ((double *)hb)[q * c->n + col], acc);
            double g = ((double *)o1)[i];
            ok = g == acc && ((double *)o2)[i] == acc;
            snprintf(got, sizeof got, "%a (unrolled %a)", g, ((double *)o2)[i]);
            snprintf(want, sizeof want, "%a", acc);
        } else {
            uint32_t acc = 0;
            for (int q = 0; q < c->k; q++)
                acc += (uint32_t)((int32_t *)ha)[r * c->k + q] * (uint32_t)((int32_t *)hb)[q * c->n + col];
            uint32_t g = ((uint32_t *)o1)[i];
            ok = g == acc && ((uint32_t *)o2)[i] == acc;
            snprintf(got, sizeof got, "%u (unrolled %u)", g, ((uint32_t *)o2)[i]);
            snprintf(want, sizeof want, "%u", acc);
        }
        if (!ok) {
            bad++;
            cr_expect(false, "%s: out[%zu][%zu] = %s, want %s", what, r, col, got, want);
        }
    }
    for (size_t i = 0; i < guard * e; i++)
        if (((unsigned char *)o1)[nc * e + i] != 0xff) {
            cr_expect(false, "%s: written past the output", what);
            break;
        }
    free(ha), free(hb), free(o1), free(o2);
}

/* 64x64x64 over 4 warps: 32 accumulators a thread, 2048 multiply-adds, in chunks; over 8 warps 1024, unrolled */
Test(lang_dot_fma, chunks_bit_identical, .timeout = 600) {
    seed_rng();
    check(&(Case){F32, 64, 64, 64, 4, 61, 59, 57, false, NULL, NULL, false}, 8);
    check(&(Case){F32, 64, 64, 64, 4, 61, 59, 57, false, "sm_90a", "emu:sm_90a", false}, 8);
    check(&(Case){F32, 32, 32, 128, 1, 29, 31, 101, false, NULL, NULL, false}, 4); /* 32 x 128 a thread; 8 x 128 */
    check(&(Case){F64, 32, 64, 64, 2, 27, 63, 45, false, NULL, NULL, false}, 4);
    check(&(Case){I32, 32, 32, 128, 1, 31, 17, 99, false, NULL, NULL, false}, 4);
}

/* acc = dot(x, y, acc) in a loop over K: the chunk loop's accumulators come from the outer loop's */
Test(lang_dot_fma, chunks_in_k_loop, .timeout = 600) {
    seed_rng();
    check(&(Case){F32, 64, 64, 64, 4, 53, 61, 150, true, NULL, NULL, false}, 8);
    check(&(Case){F64, 32, 32, 128, 1, 30, 25, 200, true, NULL, NULL, false}, 4);
}

/* K below 16 (and below Triton's 8 for f32, 4 for f64), M and N below an mma's, the data's sizes odd and below the
 * tile's: the FMA path unrolled, the same at two warp counts, on sm_80 and sm_90a */
Test(lang_dot_fma, small_k, .timeout = 600) {
    seed_rng();
    check(&(Case){F32, 16, 16, 1, 1, 13, 11, 1, false, NULL, NULL, true}, 2);
    check(&(Case){F32, 16, 8, 4, 2, 15, 7, 3, false, "sm_90a", "emu:sm_90a", true}, 1);
    check(&(Case){F32, 32, 16, 8, 4, 29, 13, 7, false, NULL, NULL, true}, 1);
    check(&(Case){F64, 16, 16, 4, 1, 9, 15, 4, false, NULL, NULL, true}, 4);
    check(&(Case){F64, 8, 32, 8, 2, 5, 27, 5, false, "sm_90a", "emu:sm_90a", true}, 1);
    check(&(Case){F32, 16, 16, 8, 4, 11, 15, 21, true, "sm_90a", "emu:sm_90a", true}, 1); /* K 8 a step of a K loop */
}

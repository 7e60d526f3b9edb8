/* foreign_ptx.c - run a matmul or attention kernel that another compiler wrote (its PTX, unmodified) on a
 * device, on random inputs, and check it against float64: the emulator's promise that it runs other
 * compilers' PTX (docs/emulator.md), for Hopper's wgmma, TMA and device-built tensor maps too.
 * bench/triton_ref/emu_check.py feeds it Triton's sm_90 kernels.
 *
 *   foreign_ptx matmul FILE.ptx --kernel NAME [--args tutorial|desc] [--dtype f16|bf16|e4m3] [--m M --n N --k K]
 *                      [--bm BM --bn BN] [--warps W] [--smem BYTES] [--grid N] [--ctas C] [--split S] [--device DEV]
 *   foreign_ptx attention FILE.ptx --kernel NAME [--seq-q S --seq-k S --head-dim D --bm BM] [--causal]
 *                      [--warps W] [--smem BYTES] [--device DEV]
 *   (either: --racecheck runs the emulator's race checks, docs/emulator.md)
 *
 * matmul: C[m, n] = A[m, k] B[k, n], row-major, in the dtype (e4m3: A and B, C in f16).  Arguments as Triton 3.9 passes them:
 *   tutorial  a, b, c, M, N, K, stride_am, stride_bk, stride_cm (the unit strides constant), then the
 *             global and profile scratch pointers;
 *   desc      a, b, c, M, N, K, global scratch (384 bytes a program, for the tensor maps the kernel
 *             builds), profile scratch.
 *   Inputs are small integers: the products are exact, the outputs rounded once.  --split S: split-K, a
 *   grid of S programs along y each adding its share of K into an f32 C (zeroed first; desc arguments):
 *   the sums are exact, so any order of the adds gives the same C.
 * attention: bench/triton_ref/kernels.py's `attention` (q, k, v, o, lse, seq_q, seq_k, heads_q, group, 14
 *   strides, scale, scratch pointers), batch 2, 4 query heads over 2 KV heads, f16, [b, s, h, d] tensors.
 * The grid is the kernel's tiles unless --grid (a persistent kernel's program count), times --ctas along x
 * (Triton's num_ctas: the CTAs of a program's cluster; the PTX's .reqnctapercluster).  Exit status 0 when
 * every element agrees, 1 on a mismatch, 2 usage, 3 when the device refuses the PTX or the launch. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tile/tile.h>

#include "support/hostfloat.h"
#include "support/support.h"
#include "tools/numparse.h"

static int usage(void) {
    fputs("usage: foreign_ptx matmul|attention FILE.ptx --kernel NAME [options] (see the source's header)\n", stderr);
    return 2;
}

typedef struct Opts {
    const char *kind, *path, *kernel, *args, *dtype, *device;
    int m, n, k, bm, bn, warps, smem, grid, ctas, split, seq_q, seq_k, head_dim, causal, racecheck;
} Opts;

static bool bf16_dt, e4m3_dt;
static uint16_t to16(double v) { return bf16_dt ? f32_to_bf16((float)v) : f32_to_f16((float)v); }
/* an integer in [-4, 4] as e4m3 (exact) */
static uint8_t to_e4m3(int v) {
    static const uint8_t code[5] = {0x00, 0x38, 0x40, 0x44, 0x48};
    return (uint8_t)(code[v < 0 ? -v : v] | (v < 0 ? 0x80 : 0));
}
static double from16(uint16_t h) { return bf16_dt ? bf16_to_d(h) : f16_to_d(h); }

static int fail(tile_context *ctx, const char *what) {
    fprintf(stderr, "foreign_ptx: %s: %s\n", what, ctx ? tile_last_error(ctx) : "");
    return 3;
}

static int run_matmul(tile_context *ctx, tile_kernel *k, const Opts *o) {
    int M = o->m, N = o->n, K = o->k;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N, cs = o->split ? 4 : 2; /* C's element size */
    size_t es = e4m3_dt ? 1 : 2; /* the inputs' element size (C is f16 either way, f32 with --split) */
    uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *c = malloc(nc * cs);
    int *va = malloc(na * sizeof *va), *vb = malloc(nb * sizeof *vb);
    if (!a || !b || !c || !va || !vb) return fail(NULL, "out of memory");
    srand(12345);
    for (size_t i = 0; i < na; i++) va[i] = rand() % 9 - 4, a[i] = to16(va[i]);
    for (size_t i = 0; i < nb; i++) vb[i] = rand() % 9 - 4, b[i] = to16(vb[i]);
    if (e4m3_dt) { /* the same values as bytes */
        for (size_t i = 0; i < na; i++) ((uint8_t *)a)[i] = to_e4m3(va[i]);
        for (size_t i = 0; i < nb; i++) ((uint8_t *)b)[i] = to_e4m3(vb[i]);
    }
    tile_devptr da, db, dc, scratch = 0, zero = 0;
    int programs = o->grid ? o->grid : ((M + o->bm - 1) / o->bm) * ((N + o->bn - 1) / o->bn);
    int ys = o->split ? o->split : 1;
    if (tile_malloc(ctx, na * es, &da) || tile_malloc(ctx, nb * es, &db) || tile_malloc(ctx, nc * cs, &dc) ||
        tile_malloc(ctx, (size_t)programs * o->ctas * ys * 384 + 128, &scratch))
        return fail(ctx, "tile_malloc");
    tile_memcpy_htod(ctx, da, a, na * es);
    tile_memcpy_htod(ctx, db, b, nb * es);
    tile_memset(ctx, dc, o->split ? 0 : 0xFF, nc * cs); /* NaN: an element never written shows (split-K adds into zeros) */
    int32_t m32 = M, n32 = N, k32 = K, sam = K, sbk = N, scm = N;
    void *tut[] = {&da, &db, &dc, &m32, &n32, &k32, &sam, &sbk, &scm, &zero, &zero};
    void *desc[] = {&da, &db, &dc, &m32, &n32, &k32, &scratch, &zero};
    void **args = strcmp(o->args, "desc") == 0 ? desc : tut;
    if (tile_launch_raw(k, (tile_dim3){(unsigned)(programs * o->ctas), (unsigned)ys, 1}, (tile_dim3){(unsigned)(32 * o->warps), 1, 1},
                        (unsigned)o->smem, args, NULL))
        return fail(ctx, "launch");
    tile_memcpy_dtoh(ctx, c, dc, nc * cs);
    long bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int q = 0; q < K; q++) want += (double)va[(size_t)i * K + q] * vb[(size_t)q * N + j];
            double got = o->split ? ((const float *)c)[(size_t)i * N + j] : e4m3_dt ? f16_to_d(c[(size_t)i * N + j]) : from16(c[(size_t)i * N + j]);
            double w = o->split ? want : e4m3_dt ? f16_to_d(f32_to_f16((float)want)) : from16(to16(want)); /* rounded once to the output type */
            if (got != w && bad++ < 5) printf("  C[%d, %d] = %g, want %g\n", i, j, got, w);
        }
    printf("%s matmul %s %dx%dx%d (%s arguments, %d programs%s): %s (%ld of %zu elements differ)\n", o->kernel, o->dtype, M, N, K, o->args,
           programs, o->split ? ", split-K along y, f32 C" : "", bad ? "MISMATCH" : "ok", bad, nc);
    free(a), free(b), free(c), free(va), free(vb);
    return bad ? 1 : 0;
}

static int run_attention(tile_context *ctx, tile_kernel *k, const Opts *o) {
    int B = 2, Hq = 4, G = 2, Hk = Hq / G, Sq = o->seq_q, Sk = o->seq_k, D = o->head_dim;
    size_t nq = (size_t)B * Sq * Hq * D, nk = (size_t)B * Sk * Hk * D, nl = (size_t)B * Hq * Sq;
    uint16_t *q = malloc(nq * 2), *kk = malloc(nk * 2), *v = malloc(nk * 2), *out = malloc(nq * 2);
    float *lse = malloc(nl * 4);
    double *s = malloc((size_t)Sk * sizeof *s);
    if (!q || !kk || !v || !out || !lse || !s) return fail(NULL, "out of memory");
    srand(777);
    for (size_t i = 0; i < nq; i++) q[i] = to16((rand() % 17 - 8) / 8.0);
    for (size_t i = 0; i < nk; i++) kk[i] = to16((rand() % 17 - 8) / 8.0), v[i] = to16((rand() % 17 - 8) / 8.0);
    tile_devptr dq, dk, dv, dout, dl, zero = 0;
    if (tile_malloc(ctx, nq * 2, &dq) || tile_malloc(ctx, nk * 2, &dk) || tile_malloc(ctx, nk * 2, &dv) || tile_malloc(ctx, nq * 2, &dout) ||
        tile_malloc(ctx, nl * 4, &dl))
        return fail(ctx, "tile_malloc");
    tile_memcpy_htod(ctx, dq, q, nq * 2);
    tile_memcpy_htod(ctx, dk, kk, nk * 2);
    tile_memcpy_htod(ctx, dv, v, nk * 2);
    tile_memset(ctx, dout, 0xFF, nq * 2);
    tile_memset(ctx, dl, 0xFF, nl * 4);
    int32_t sq = Sq, sk = Sk, hq = Hq, g = G, sqb = Sq * Hq * D, sqs = Hq * D, sqh = D, skb = Sk * Hk * D, sks = Hk * D, skh = D;
    int32_t slb = Hq * Sq, slh = Sq;
    float scale = (float)(1 / sqrt((double)D));
    void *args[] = {&dq, &dk, &dv, &dout, &dl, &sq, &sk, &hq, &g, &sqb, &sqs, &sqh, &skb, &sks, &skh, &skb, &sks, &skh,
                    &sqb, &sqs, &sqh, &slb, &slh, &scale, &zero, &zero};
    tile_dim3 grid = {(unsigned)((Sq + o->bm - 1) / o->bm), (unsigned)(B * Hq), 1};
    if (tile_launch_raw(k, grid, (tile_dim3){(unsigned)(32 * o->warps), 1, 1}, (unsigned)o->smem, args, NULL)) return fail(ctx, "launch");
    tile_memcpy_dtoh(ctx, out, dout, nq * 2);
    tile_memcpy_dtoh(ctx, lse, dl, nl * 4);
    long bad = 0;
    double maxe = 0;
    int diag = Sk - Sq;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < Hq; h++)
            for (int i = 0; i < Sq; i++) {
                int hk = h / G;
                double m = -INFINITY, den = 0;
                for (int j = 0; j < Sk; j++) {
                    double d = 0;
                    for (int x = 0; x < D; x++)
                        d += from16(q[((size_t)(b * Sq + i) * Hq + h) * D + x]) * from16(kk[((size_t)(b * Sk + j) * Hk + hk) * D + x]);
                    s[j] = o->causal && j > i + diag ? -INFINITY : d * scale;
                    if (s[j] > m) m = s[j];
                }
                for (int j = 0; j < Sk; j++) den += s[j] == -INFINITY ? 0 : exp(s[j] - m);
                for (int x = 0; x < D; x++) {
                    double acc = 0;
                    for (int j = 0; j < Sk; j++)
                        if (s[j] != -INFINITY) acc += exp(s[j] - m) * from16(v[((size_t)(b * Sk + j) * Hk + hk) * D + x]);
                    double want = den > 0 ? acc / den : 0, got = from16(out[((size_t)(b * Sq + i) * Hq + h) * D + x]), e = fabs(got - want);
                    if (e > maxe || e != e) maxe = e;
                    if (!(e <= 2e-2 + 1e-2 * fabs(want)) && bad++ < 5) printf("  O[%d, %d, %d, %d] = %g, want %g\n", b, i, h, x, got, want);
                }
                double wl = den > 0 ? m + log(den) : -INFINITY, gl = lse[(size_t)(b * Hq + h) * Sq + i];
                if (!(fabs(gl - wl) <= 1e-3 * (1 + fabs(wl))) && !(isinf(wl) && gl == wl) && bad++ < 5)
                    printf("  LSE[%d, %d, %d] = %g, want %g\n", b, h, i, gl, wl);
            }
    printf("%s attention f16 seq %d/%d head_dim %d%s: %s (%ld differ; max |error| of O %.3g)\n", o->kernel, Sq, Sk, D,
           o->causal ? " causal" : "", bad ? "MISMATCH" : "ok", bad, maxe);
    free(q), free(kk), free(v), free(out), free(lse), free(s);
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    Opts o = {.args = "tutorial", .dtype = "f16", .device = "emu:sm_90a", .m = 208, .n = 144, .k = 112, .bm = 128, .bn = 128,
              .warps = 4, .ctas = 1, .seq_q = 112, .seq_k = 150, .head_dim = 64};
    if (argc < 3) return usage();
    o.kind = argv[1], o.path = argv[2];
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *iv = !strcmp(a, "--m") ? &o.m : !strcmp(a, "--n") ? &o.n : !strcmp(a, "--k") ? &o.k : !strcmp(a, "--bm") ? &o.bm
                : !strcmp(a, "--bn") ? &o.bn : !strcmp(a, "--warps") ? &o.warps : !strcmp(a, "--smem") ? &o.smem
                : !strcmp(a, "--grid") ? &o.grid : !strcmp(a, "--ctas") ? &o.ctas : !strcmp(a, "--split") ? &o.split : !strcmp(a, "--seq-q") ? &o.seq_q : !strcmp(a, "--seq-k") ? &o.seq_k
                : !strcmp(a, "--head-dim") ? &o.head_dim : NULL;
        const char **sv = !strcmp(a, "--kernel") ? &o.kernel : !strcmp(a, "--args") ? &o.args : !strcmp(a, "--dtype") ? &o.dtype
                        : !strcmp(a, "--device") ? &o.device : NULL;
        if (!strcmp(a, "--causal")) o.causal = 1;
        else if (!strcmp(a, "--racecheck")) o.racecheck = 1;
        else if ((iv || sv) && v) {
            /* --split, --smem and --grid may be 0 (none, the default); a CTA has at most 32 warps */
            int lo = iv == &o.split || iv == &o.smem || iv == &o.grid ? 0 : 1, hi = iv == &o.warps ? 32 : INT32_MAX;
            if (iv && !cli_option_int("foreign_ptx", a, v, lo, hi, iv)) return 2;
            if (sv) *sv = v;
            i++;
        } else return usage();
    }
    if (!o.kernel || o.ctas < 1 || o.split < 0 || (o.split && strcmp(o.args, "desc")) || (strcmp(o.kind, "matmul") && strcmp(o.kind, "attention")) || (strcmp(o.dtype, "f16") && strcmp(o.dtype, "bf16") && strcmp(o.dtype, "e4m3")) ||
        (strcmp(o.args, "tutorial") && strcmp(o.args, "desc")) || o.m < 1 || o.n < 1 || o.k < 1 || o.bm < 1 || o.bn < 1 || o.warps < 1 ||
        o.seq_q < 1 || o.seq_k < 1 || o.head_dim < 1 || o.seq_k > 1 << 20)
        return usage();
    bf16_dt = !strcmp(o.dtype, "bf16"), e4m3_dt = !strcmp(o.dtype, "e4m3");
    char *ptx = read_file(o.path, NULL);
    if (!ptx) {
        fprintf(stderr, "foreign_ptx: cannot read %s\n", o.path);
        return 2;
    }
    tile_context *ctx;
    tile_context_options co = {.device = o.device, .emu_racecheck = o.racecheck};
    if (tile_context_create_ex(&co, &ctx) != TILE_OK) return fail(NULL, "tile_context_create");
    tile_module *mod;
    tile_kernel *k;
    if (tile_module_load_ptx(ctx, ptx, &mod) != TILE_OK) return fail(ctx, "load");
    if (tile_module_get_kernel(mod, o.kernel, &k) != TILE_OK) return fail(ctx, "kernel");
    int rc = !strcmp(o.kind, "matmul") ? run_matmul(ctx, k, &o) : run_attention(ctx, k, &o);
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ptx);
    return rc;
}

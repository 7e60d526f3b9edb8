/* test_lang_rank.c - tensors at the rank limit (TIR_MAX_RANK = 6 dimensions): 5-D and 6-D tensors
 * made by reshaping a 1-D arange or load and by pointer arithmetic over expand_dims'd aranges, loaded
 * and stored through 5-D and 6-D pointer tensors (masked at an odd size, outputs poisoned), permuted
 * in several orders, reduced along every axis (sum, max, argmax), scanned along inner and outer axes,
 * broadcast, joined and split, interleaved and concatenated at the limit; Triton tutorial 10's
 * block-scale shuffle (a 5-D descriptor load, reshape to [rep_m, rep_k, 32, 4, 4], permute (0, 3, 2,
 * 1, 4), reshape to [BM, BK / 32]); the located errors past the limit.  Each runs on emu (sm_80) and
 * on emu:sm_90a, compared exactly with host references computed from the index mapping. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "tests/test_rng.h"

#include "tests/lang_run.h"

enum { MAXR = 6 };

typedef struct Src {
    char *s;
    size_t n, cap;
} Src;

__attribute__((format(printf, 2, 3))) static void put(Src *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)need + 1 > b->cap) {
        b->cap = (b->n + (size_t)need + 1) * 2;
        b->s = realloc(b->s, b->cap);
        cr_assert(b->s);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)need + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

/* "[a, b, c]" of n ints */
static const char *list(char *buf, const int *v, int n) {
    int p = sprintf(buf, "[");
    for (int i = 0; i < n; i++) p += sprintf(buf + p, "%s%d", i ? ", " : "", v[i]);
    sprintf(buf + p, "]");
    return buf;
}

/* The flat row-major index of coordinate c in shape s (rank r), and back. */
static int flat(const int *c, const int *s, int r) {
    int f = 0;
    for (int d = 0; d < r; d++) f = f * s[d] + c[d];
    return f;
}
static void coord(int f, const int *s, int r, int *c) {
    for (int d = r - 1; d >= 0; d--) c[d] = f % s[d], f /= s[d];
}

/* One region of the output buffer: what the kernel stores there and the host expects. */
typedef struct Region {
    char what[64];
    int off, n;
} Region;

enum { MAX_REGIONS = 64, NPERM = 4 };

/* The rank-r tensor v of shape s (x[i] at flat index i below n, -7 beyond), through every shape op:
 * the kernel's source and the host's expected output, region by region. */
static void rank_ops(const int *s, int r, const int perms[NPERM][MAXR], int warps, const char *arch, const char *device) {
    int N = 1;
    for (int d = 0; d < r; d++) N *= s[d];
    int n = N - (N > 64 ? 37 : 5); /* an odd size: the load and the first store are masked */
    char b1[128], b2[128];
    Src src = {0};
    Region reg[MAX_REGIONS];
    int nreg = 0, total = 0;
#define REGION(size, ...) (snprintf(reg[nreg].what, sizeof reg[nreg].what, __VA_ARGS__), reg[nreg].off = total, \
                           reg[nreg].n = (size), total += (size), reg[nreg++].off)
    put(&src, "@num_warps(%d)\nkernel k(x: *i32, o: *i32, n: i32) {\n", warps);
    /* the pointer tensor: d_k = arange along dim k, expanded everywhere else (None indexing for odd k,
     * expand_dims for even k), offsets summed with broadcasting */
    for (int d = 0; d < r; d++) {
        if (d % 2) {
            put(&src, "    let d%d = arange(0, %d)[", d, s[d]);
            for (int e = 0; e < r; e++) put(&src, "%s%s", e ? ", " : "", e == d ? ":" : "None");
            put(&src, "];\n");
        } else {
            put(&src, "    let d%d = arange(0, %d);\n", d, s[d]);
            for (int e = 0; e < r; e++)
                if (e != d) put(&src, "    d%d = expand_dims(d%d, %d);\n", d, d, e);
        }
    }
    put(&src, "    let off =");
    for (int d = 0; d < r; d++) {
        int st = 1;
        for (int e = d + 1; e < r; e++) st *= s[e];
        put(&src, "%s d%d * %d", d ? " +" : "", d, st);
    }
    put(&src, ";\n");
    put(&src, "    let v = load(x + off, off < n, -7);\n");
    put(&src, "    let iota = reshape(arange(0, %d), %s);\n", N, list(b1, s, r));
    put(&src, "    store(o + %d + off, v * 2 + iota, off < n);\n", REGION(N, "masked store of v * 2 + iota"));
    put(&src, "    store(o + %d + iota, reshape(load(x + arange(0, %d), arange(0, %d) < n, -7), %s));\n",
        REGION(N, "reshape of a 1-D load"), N, N, list(b1, s, r));
    for (int p = 0; p < NPERM; p++) {
        int ps[MAXR];
        for (int d = 0; d < r; d++) ps[d] = s[perms[p][d]];
        put(&src, "    store(o + %d + reshape(arange(0, %d), %s), permute(v, %s));\n", REGION(N, "permute #%d", p), N,
            list(b1, ps, r), list(b2, perms[p], r));
    }
    { /* the permutation as a tuple, as Triton writes it: trans(v, (1, 0, 2)) */
        list(b2, perms[0], r);
        b2[0] = '(', b2[strlen(b2) - 1] = ')';
        put(&src, "    store(o + %d + permute(off, %s), trans(v, %s));\n", REGION(N, "stored through permuted pointers"),
            list(b1, perms[0], r), b2);
    }
    { /* without a permutation the last two axes swap (Triton's batched transpose) */
        int rs[MAXR];
        for (int d = 0; d < r; d++) rs[d] = s[d < r - 2 ? d : 2 * r - 3 - d];
        put(&src, "    store(o + %d + reshape(arange(0, %d), %s), trans(v));\n", REGION(N, "trans(v)"), N, list(b1, rs, r));
    }
    static const char *const red[3] = {"sum", "max", "argmax"};
    for (int ax = 0; ax < r; ax++) {
        int rs[MAXR], k = 0;
        for (int d = 0; d < r; d++)
            if (d != ax) rs[k++] = s[d];
        for (int q = 0; q < 3; q++) /* odd axes counted from the end */
            put(&src, "    store(o + %d + reshape(arange(0, %d), %s), %s(v, %d));\n", REGION(N / s[ax], "%s along %d", red[q], ax),
                N / s[ax], list(b1, rs, r - 1), red[q], ax % 2 ? ax - r : ax);
    }
    int scans[3] = {0, r - 1, 2};
    for (int q = 0; q < 3; q++)
        put(&src, "    store(o + %d + iota, cumsum(v, %d));\n", REGION(N, "cumsum along %d", scans[q]), scans[q]);
    put(&src, "    store(o + %d + iota, broadcast_to(max(v, 1, keep_dims=true), %s));\n", REGION(N, "broadcast of max keep_dims"),
        list(b1, s, r));
    put(&src, "    store(o + %d + iota, d0 * 1000 + d%d);\n", REGION(N, "broadcast of d0 and d%d", r - 1), r - 1);
    {
        int is[MAXR];
        memcpy(is, s, sizeof(int) * (size_t)r); /* s has r entries */
        is[r - 1] *= 2;
        put(&src, "    store(o + %d + reshape(arange(0, %d), %s), interleave(v, iota));\n", REGION(2 * N, "interleave"), 2 * N,
            list(b1, is, r));
        memcpy(is, s, sizeof(int) * (size_t)r);
        is[0] *= 2;
        put(&src, "    store(o + %d + reshape(arange(0, %d), %s), cat(v, iota));\n", REGION(2 * N, "cat"), 2 * N, list(b1, is, r));
    }
    if (r < MAXR) {
        int js[MAXR];
        memcpy(js, s, sizeof(int) * (size_t)r);
        js[r] = 2;
        put(&src, "    let j = join(v, iota);\n");
        put(&src, "    store(o + %d + reshape(arange(0, %d), %s), j);\n", REGION(2 * N, "join"), 2 * N, list(b1, js, r + 1));
        put(&src, "    let (s0, s1) = split(j);\n");
        put(&src, "    store(o + %d + iota, s0 * 3 - s1);\n", REGION(N, "split"));
    } else { /* split a 6-D tensor whose last dim is 2 */
        int ss[MAXR];
        memcpy(ss, s, sizeof(int) * (size_t)r);
        ss[r - 1] = 2, ss[r - 2] = s[r - 2] * s[r - 1] / 2;
        put(&src, "    let (s0, s1) = split(reshape(v, %s));\n", list(b1, ss, r));
        put(&src, "    store(o + %d + reshape(arange(0, %d), %s), s0 * 3 - s1);\n", REGION(N / 2, "split"), N / 2, list(b2, ss, r - 1));
    }
    put(&src, "}\n");
#undef REGION

    K k;
    load_src_on(&k, src.s, "k", arch, device);
    int32_t *x = malloc(sizeof(int32_t) * (size_t)N), *got = malloc(sizeof(int32_t) * (size_t)total),
            *want = malloc(sizeof(int32_t) * (size_t)total), *V = malloc(sizeof(int32_t) * (size_t)N);
    for (int i = 0; i < N; i++) x[i] = (int32_t)irand(1001) - 500, V[i] = i < n ? x[i] : -7;
    uint64_t dx = upload(&k, x, sizeof(int32_t) * (size_t)n), dout = poisoned(&k, sizeof(int32_t) * (size_t)total);
    void *params[] = {&dx, &dout, &n};
    launch(&k, 1, params);
    download(&k, got, dout, sizeof(int32_t) * (size_t)total);

    int *w = want, c[MAXR], cc[MAXR];
    for (int i = 0; i < N; i++) *w++ = i < n ? V[i] * 2 + i : -1; /* the poison left where the store is masked */
    for (int i = 0; i < N; i++) *w++ = V[i];
    for (int p = 0; p < NPERM; p++) {
        int ps[MAXR];
        for (int d = 0; d < r; d++) ps[d] = s[perms[p][d]];
        for (int i = 0; i < N; i++) { /* result coordinate q: source coordinate c[perm[d]] = q[d] */
            coord(i, ps, r, cc);
            for (int d = 0; d < r; d++) c[perms[p][d]] = cc[d];
            *w++ = V[flat(c, s, r)];
        }
    }
    for (int i = 0; i < N; i++) *w++ = V[i];
    for (int i = 0; i < N; i++) {
        int rs[MAXR], sw[MAXR]; /* sw: the swap of the last two axes, its own inverse */
        for (int d = 0; d < r; d++) sw[d] = d < r - 2 ? d : 2 * r - 3 - d, rs[d] = s[sw[d]];
        coord(i, rs, r, cc);
        for (int d = 0; d < r; d++) c[sw[d]] = cc[d];
        *w++ = V[flat(c, s, r)];
    }
    for (int ax = 0; ax < r; ax++) {
        int rs[MAXR], m = 0;
        for (int d = 0; d < r; d++)
            if (d != ax) rs[m++] = s[d];
        int *ws = w, *wm = w + N / s[ax], *wa = w + 2 * (N / s[ax]);
        for (int i = 0; i < N / s[ax]; i++) {
            coord(i, rs, r - 1, cc);
            int32_t sum = 0, best = 0, at = 0;
            for (int e = 0; e < s[ax]; e++) {
                for (int d = 0, q = 0; d < r; d++) c[d] = d == ax ? e : cc[q++];
                int32_t y = V[flat(c, s, r)];
                sum += y;
                if (e == 0 || y > best) best = y, at = e;
            }
            ws[i] = sum, wm[i] = best, wa[i] = at;
        }
        w += 3 * (N / s[ax]);
    }
    for (int q = 0; q < 3; q++) {
        int ax = scans[q];
        for (int i = 0; i < N; i++) {
            coord(i, s, r, c);
            int32_t acc = 0;
            for (int e = 0; e <= c[ax]; e++) {
                memcpy(cc, c, sizeof cc);
                cc[ax] = e;
                acc += V[flat(cc, s, r)];
            }
            *w++ = acc;
        }
    }
    for (int i = 0; i < N; i++) {
        coord(i, s, r, c);
        int32_t best = 0;
        for (int e = 0; e < s[1]; e++) {
            memcpy(cc, c, sizeof cc);
            cc[1] = e;
            if (e == 0 || V[flat(cc, s, r)] > best) best = V[flat(cc, s, r)];
        }
        *w++ = best;
    }
    for (int i = 0; i < N; i++) coord(i, s, r, c), *w++ = c[0] * 1000 + c[r - 1];
    for (int i = 0; i < N; i++) { /* interleave: along the last dim, v then iota element by element */
        int last = s[r - 1], row = i / last, col = i % last;
        w[2 * (row * last + col)] = V[i];
        w[2 * (row * last + col) + 1] = i;
    }
    w += 2 * N;
    for (int i = 0; i < N; i++) w[i] = V[i], w[N + i] = i; /* cat along dim 0: v's elements, then iota's */
    w += 2 * N;
    if (r < MAXR) {
        for (int i = 0; i < N; i++) *w++ = V[i], *w++ = i;
        for (int i = 0; i < N; i++) *w++ = V[i] * 3 - i;
    } else {
        for (int i = 0; i < N / 2; i++) *w++ = V[2 * i] * 3 - V[2 * i + 1];
    }
    cr_assert_eq(w - want, total);

    for (int g = 0; g < nreg; g++) {
        int bad = 0;
        for (int i = 0; i < reg[g].n && bad < 4; i++)
            if (got[reg[g].off + i] != want[reg[g].off + i]) {
                cr_expect(0, "rank %d on %s, %s [%d]: got %d, want %d (seed %llu)", r, device, reg[g].what, i, got[reg[g].off + i],
                          want[reg[g].off + i], (unsigned long long)seed);
                bad++;
            }
    }
    free(x), free(got), free(want), free(V), free(src.s);
    unload(&k);
}

static const int shape5[5] = {2, 4, 2, 8, 4};
static const int perms5[NPERM][MAXR] = {{3, 0, 4, 2, 1}, {1, 0, 2, 3, 4}, {0, 1, 2, 4, 3}, {2, 4, 0, 1, 3}};
static const int shape6[6] = {2, 2, 4, 2, 4, 4};
static const int perms6[NPERM][MAXR] = {{5, 4, 3, 2, 1, 0}, {1, 3, 5, 0, 2, 4}, {0, 1, 2, 3, 5, 4}, {4, 0, 5, 1, 3, 2}};

Test(lang_rank, rank5_shape_ops) {
    seed_rng();
    rank_ops(shape5, 5, perms5, 4, NULL, "emu");
}
Test(lang_rank, rank5_shape_ops_sm90a) {
    seed_rng();
    rank_ops(shape5, 5, perms5, 4, "sm_90a", "emu:sm_90a");
}
Test(lang_rank, rank6_shape_ops) {
    seed_rng();
    rank_ops(shape6, 6, perms6, 4, NULL, "emu");
}
Test(lang_rank, rank6_shape_ops_sm90a) {
    seed_rng();
    rank_ops(shape6, 6, perms6, 4, "sm_90a", "emu:sm_90a");
}

/* fewer elements than threads (replicated), and more per thread over 8 warps */
Test(lang_rank, small_and_large_shapes) {
    seed_rng();
    static const int tiny[6] = {2, 2, 2, 2, 2, 2}, big[5] = {4, 2, 8, 2, 16};
    rank_ops(tiny, 6, perms6, 4, NULL, "emu");
    rank_ops(big, 5, perms5, 8, "sm_90a", "emu:sm_90a");
}

/* Triton's tutorial 10 (block-scaled matmul) keeps the e8m0 scales of a [M, K / 32] tile in the layout
 * of NVIDIA's block-scaling docs: the scale of row m and scale column c at
 *   ((m / 128 * K4 + c / 4) * 32 + m % 32) * 16 + (m % 128) / 32 * 4 + c % 4,
 * a tensor [1, M / 128, K4, 2, 256] (K4 = K / 128).  A program loads its [1, REP_M, REP_K, 2, 256] block
 * (a 5-D descriptor; here also a 6-D one, and 5-D and 6-D block pointers), reshapes it to [REP_M, REP_K, 32, 4, 4],
 * permutes (0, 3, 2, 1, 4) and reshapes to [BM, BK / 32] (row-major scales).  Blocks partly outside
 * the tensor load zeros; the store is masked at an odd number of rows and columns. */
static void scale_shuffle(const char *arch, const char *device) {
    enum { M128 = 3, K4 = 3, REP_M = 2, REP_K = 2, NS = M128 * K4 * 512 };
    int rows = M128 * 128 - 45, cols = K4 * 4 - 1;
    K k;
    load_src_on(&k,
                "@num_warps(4)\n"
                "kernel k(s: *u8, out: *u8, out2: *u8, out3: *u8, out4: *u8, rows: i32, cols: i32, m128: i32, k4: i32,\n"
                "         const REP_M: i32 = 2, const REP_K: i32 = 2) {\n"
                "    let BM = REP_M * 128;\n"
                "    let SC = REP_K * 4;\n"
                "    let pm = program_id(0);\n"
                "    let desc = make_tensor_descriptor(s, [1, m128, k4, 2, 256], [m128 * k4 * 512, k4 * 512, 512, 256, 1],\n"
                "                                      [1, REP_M, REP_K, 2, 256]);\n"
                "    let r = pm * BM + arange(0, BM)[:, None];\n"
                "    for kb in range(0, cdiv(k4, REP_K)) {\n"
                "        let t = load_tensor_descriptor(desc, [0, pm * REP_M, kb * REP_K, 0, 0]);\n"
                "        let sa = reshape(trans(reshape(t, [REP_M, REP_K, 32, 4, 4]), 0, 3, 2, 1, 4), [BM, SC]);\n"
                "        let c = kb * SC + arange(0, SC)[None, :];\n"
                "        store(out + r * cols + c, sa, r < rows && c < cols);\n"
                "        let bp = make_block_ptr(s, (1, m128, k4, 2, 256), (0, k4 * 512, 512, 256, 1), (0, pm * REP_M, kb * REP_K, 0, 0),\n"
                "                                (1, REP_M, REP_K, 2, 256), (4, 3, 2, 1, 0));\n"
                "        let t2 = load(bp, boundary_check=(1, 2));\n"
                "        store(out2 + r * cols + c, reshape(permute(reshape(t2, [REP_M, REP_K, 32, 4, 4]), [0, 3, 2, 1, 4]), [BM, SC]),\n"
                "              r < rows && c < cols);\n"
                "        let bp6 = make_block_ptr(s, (1, m128, k4, 2, 16, 16), (0, k4 * 512, 512, 256, 16, 1),\n"
                "                                 (0, pm * REP_M, kb * REP_K, 0, 0, 0), (1, REP_M, REP_K, 2, 16, 16), (5, 4, 3, 2, 1, 0));\n"
                "        let t6 = reshape(load(bp6, boundary_check=(1, 2)), [REP_M, REP_K, 32, 4, 4]);\n"
                "        store(out3 + r * cols + c, reshape(trans(t6, [0, 3, 2, 1, 4]), [BM, SC]), r < rows && c < cols);\n"
                "        let d6 = make_tensor_descriptor(s, [1, m128, k4, 2, 16, 16], [0, k4 * 512, 512, 256, 16, 1], [1, REP_M, REP_K, 2, 16, 16]);\n"
                "        let t7 = reshape(load_tensor_descriptor(d6, [0, pm * REP_M, kb * REP_K, 0, 0, 0]), [REP_M, REP_K, 32, 4, 4]);\n"
                "        store(out4 + r * cols + c, reshape(permute(t7, 0, 3, 2, 1, 4), [BM, SC]), r < rows && c < cols);\n"
                "    }\n"
                "}\n",
                "k", arch, device);
    static uint8_t s[NS], got[M128 * 128 * K4 * 4], want[M128 * 128 * K4 * 4];
    for (int i = 0; i < NS; i++) s[i] = (uint8_t)irand(255); /* 0..254: never the poison */
    uint64_t ds = upload(&k, s, sizeof s), dout[4];
    for (int q = 0; q < 4; q++) dout[q] = poisoned(&k, (size_t)rows * (size_t)cols);
    int m128 = M128, k4 = K4;
    void *params[] = {&ds, &dout[0], &dout[1], &dout[2], &dout[3], &rows, &cols, &m128, &k4};
    dev_launch(k.fn, (M128 + REP_M - 1) / REP_M, 1, 1, (unsigned)k.threads, 1, 1, 0, NULL, params);
    cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
    for (int m = 0; m < rows; m++)
        for (int c = 0; c < cols; c++)
            want[m * cols + c] = s[((m / 128 * K4 + c / 4) * 32 + m % 32) * 16 + (m % 128) / 32 * 4 + c % 4];
    static const char *const what[4] = {"descriptor", "block pointer", "6-D block pointer", "6-D descriptor"};
    for (int q = 0; q < 4; q++) {
        download(&k, got, dout[q], (size_t)rows * (size_t)cols);
        int bad = 0;
        for (int i = 0; i < rows * cols && bad < 6; i++)
            if (got[i] != want[i]) {
                cr_expect(0, "%s on %s: scale [%d][%d] = %d, want %d (seed %llu)", what[q], device, i / cols, i % cols, got[i], want[i],
                          (unsigned long long)seed);
                bad++;
            }
    }
    unload(&k);
}

Test(lang_rank, tutorial10_scale_shuffle) {
    seed_rng();
    scale_shuffle(NULL, "emu");
}
Test(lang_rank, tutorial10_scale_shuffle_sm90a) {
    seed_rng();
    scale_shuffle("sm_90a", "emu:sm_90a");
}

/* Past the limit: each a located error naming it. */
Test(lang_rank, errors_past_the_limit) {
#define E(stmt, msg) {"kernel k(p: *i32) {\n    let z = reshape(arange(0, 64), [2, 2, 2, 2, 2, 2]);\n    " stmt "\n}\n", msg}
    static const BadSource bad[] = {
        E("let q = join(z, z);", "t.tile:3:13: error: join adds a dimension to its rank-6 operands: tensors have at most 6 dimensions"),
        E("let q = expand_dims(z, 0);", "t.tile:3:13: error: tensors have at most 6 dimensions"),
        E("let q = unsqueeze(z, 6);", "t.tile:3:13: error: tensors have at most 6 dimensions"),
        E("let q = z[:, :, :, :, :, :, None];", "t.tile:3:33: error: tensors have at most 6 dimensions"),
        E("let q = reshape(z, [2, 2, 2, 2, 2, 1, 2]);", "t.tile:3:24: error: tensors have at most 6 dimensions, got a list of 7"),
        E("let q = zeros([2, 2, 2, 2, 2, 2, 2], f32);", "t.tile:3:19: error: tensors have at most 6 dimensions, got a list of 7"),
        E("let q = permute(z, 0, 1, 2, 3, 4, 5, 6);", "t.tile:3:24: error: tensors have at most 6 dimensions, got a list of 7"),
        E("let q = zeros((2, 2, 2, 2, 2, 2, 2), f32);", "t.tile:3:19: error: tensors have at most 6 dimensions, got a tuple of 7"),
        E("let q = sum(z, 6);", "t.tile:3:20: error: axis 6 is out of range for a tensor of rank 6"),
        E("let q = make_block_ptr(p, [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 1, 2, 3, 3]);",
          "t.tile:3:99: error: 'order' of 'make_block_ptr' must be a permutation of the 5 dims, such as (4, 3, 2, 1, 0)"),
    };
#undef E
    expect_compile_errors(bad, sizeof bad / sizeof bad[0]);
}

/* The rest of the shape and reduction family on a 6-D [2, 2, 2, 4, 2, 8] i32 tensor: flip, gather, sort and
 * topk along the last dim, argmin/min, a user fn reduce along a middle axis and a reverse associative_scan,
 * an atomic_add through 6-D pointers, where, and an f16 round trip through a permute. */
static int add_i(int a, int b) { return a + b; }

static void more_ops_6d(const char *arch, const char *device) {
    enum { N = 512, L = 8 };
    static const int s[6] = {2, 2, 2, 4, 2, 8};
    K k;
    load_src_on(&k,
                "fn add(a, b) { return a + b; }\n"
                "@num_warps(4)\n"
                "kernel k(x: *i32, o: *i32, at: *i32) {\n"
                "    let S = [2, 2, 2, 4, 2, 8];\n"
                "    let iota = reshape(arange(0, 512), S);\n"
                "    let v = load(x + iota);\n"
                "    let last = iota % 8;\n"
                "    store(o + iota, flip(v));\n"
                "    store(o + 512 + iota, flip(v, 3));\n"
                "    store(o + 1024 + iota, gather(v, (last * 3 + 1) % 8, 5));\n"
                "    store(o + 1536 + iota, sort(v));\n"
                "    let (tv, ti) = topk(v, 4, return_indices=true);\n"
                "    let i4 = reshape(arange(0, 256), [2, 2, 2, 4, 2, 4]);\n"
                "    store(o + 2048 + i4, tv);\n"
                "    store(o + 2304 + i4, ti);\n"
                "    store(o + 2560 + reshape(arange(0, 256), [2, 2, 4, 2, 8]), argmin(v, 2));\n"
                "    store(o + 2816 + reshape(arange(0, 128), [2, 2, 2, 2, 8]), min(v, 3));\n"
                "    store(o + 2944 + reshape(arange(0, 256), [2, 2, 4, 2, 8]), reduce(v, 2, add));\n"
                "    store(o + 3200 + iota, associative_scan(v, 4, add, reverse=true));\n"
                "    store(o + 3712 + iota, where(v > 0, v, -v));\n"
                "    let h = permute(v as f16, [5, 4, 3, 2, 1, 0]);\n"
                "    store(o + 4224 + reshape(arange(0, 512), [8, 2, 4, 2, 2, 2]), h as i32);\n"
                "    atomic_add(at + iota, v, sem=\"relaxed\");\n"
                "}\n",
                "k", arch, device);
    static int32_t x[N], got[4736], want[4736], gat[N];
    for (int i = 0; i < N; i++) x[i] = irand(1001) - 500;
    uint64_t dx = upload(&k, x, sizeof x), dout = poisoned(&k, sizeof got), dat = poisoned(&k, sizeof gat);
    void *params[] = {&dx, &dout, &dat};
    launch(&k, 1, params);
    download(&k, got, dout, sizeof got);
    download(&k, gat, dat, sizeof gat);
    int c[6], cc[6], *w = want;
    for (int i = 0; i < N; i++) *w++ = x[i / L * L + (L - 1 - i % L)];
    for (int i = 0; i < N; i++) coord(i, s, 6, c), c[3] = 3 - c[3], *w++ = x[flat(c, s, 6)];
    for (int i = 0; i < N; i++) *w++ = x[i / L * L + (i % L * 3 + 1) % L];
    for (int row = 0; row < N / L; row++) { /* sort: insertion sort of each row */
        int r[L];
        memcpy(r, &x[row * L], sizeof r);
        for (int a = 1; a < L; a++)
            for (int b = a; b > 0 && r[b - 1] > r[b]; b--) {
                int t = r[b];
                r[b] = r[b - 1], r[b - 1] = t;
            }
        memcpy(w, r, sizeof r), w += L;
    }
    for (int row = 0; row < N / L; row++) { /* topk 4: largest first, ties to the lower index */
        bool used[L] = {0};
        for (int q = 0; q < 4; q++) {
            int best = -1;
            for (int e = 0; e < L; e++)
                if (!used[e] && (best < 0 || x[row * L + e] > x[row * L + best])) best = e;
            used[best] = true;
            w[row * 4 + q] = x[row * L + best], w[256 + row * 4 + q] = best;
        }
    }
    w += 512;
    static const int s2[5] = {2, 2, 4, 2, 8}, s3[5] = {2, 2, 2, 2, 8};
    for (int i = 0; i < 256; i++) {
        coord(i, s2, 5, cc);
        int best = 0, at = 0;
        for (int e = 0; e < 2; e++) {
            int y = x[flat((int[]){cc[0], cc[1], e, cc[2], cc[3], cc[4]}, s, 6)];
            if (e == 0 || y < best) best = y, at = e;
        }
        *w++ = at;
    }
    for (int i = 0; i < 128; i++) {
        coord(i, s3, 5, cc);
        int best = 0;
        for (int e = 0; e < 4; e++) {
            int y = x[flat((int[]){cc[0], cc[1], cc[2], e, cc[3], cc[4]}, s, 6)];
            if (e == 0 || y < best) best = y;
        }
        *w++ = best;
    }
    for (int i = 0; i < 256; i++) {
        coord(i, s2, 5, cc);
        int acc = 0;
        for (int e = 0; e < 2; e++) acc = add_i(acc, x[flat((int[]){cc[0], cc[1], e, cc[2], cc[3], cc[4]}, s, 6)]);
        *w++ = acc;
    }
    for (int i = 0; i < N; i++) {
        coord(i, s, 6, c);
        int acc = 0;
        for (int e = c[4]; e < s[4]; e++) memcpy(cc, c, sizeof cc), cc[4] = e, acc += x[flat(cc, s, 6)];
        *w++ = acc;
    }
    for (int i = 0; i < N; i++) *w++ = x[i] > 0 ? x[i] : -x[i];
    static const int ps[6] = {8, 2, 4, 2, 2, 2};
    for (int i = 0; i < N; i++) {
        coord(i, ps, 6, cc);
        for (int d = 0; d < 6; d++) c[5 - d] = cc[d];
        *w++ = x[flat(c, s, 6)];
    }
    cr_assert_eq(w - want, 4736);
    int bad = 0;
    for (int i = 0; i < 4736 && bad < 8; i++)
        if (got[i] != want[i]) {
            cr_expect(0, "on %s: o[%d] = %d, want %d (seed %llu)", device, i, got[i], want[i], (unsigned long long)seed);
            bad++;
        }
    for (int i = 0; i < N && bad < 8; i++)
        if (gat[i] != x[i] - 1) {
            cr_expect(0, "on %s: atomic_add [%d] = %d, want %d", device, i, gat[i], x[i] - 1);
            bad++;
        }
    unload(&k);
}

Test(lang_rank, rank6_sort_gather_scan_atomics) {
    seed_rng();
    more_ops_6d(NULL, "emu");
    more_ops_6d("sm_90a", "emu:sm_90a");
}

/* A 6-D loop-carried accumulator, permuted inside a run-time `if` on every other iteration. */
static void loop_carried_6d(const char *arch, const char *device) {
    enum { N = 64, ITERS = 5 };
    static const int s[6] = {2, 2, 2, 2, 2, 2}, perm[6] = {1, 0, 2, 3, 5, 4};
    K k;
    load_src_on(&k,
                "@num_warps(2)\n"
                "kernel k(x: *i32, o: *i32, n: i32) {\n"
                "    let iota = reshape(arange(0, 64), [2, 2, 2, 2, 2, 2]);\n"
                "    let acc = zeros([2, 2, 2, 2, 2, 2], i32);\n"
                "    for i in range(0, n) {\n"
                "        acc += load(x + i * 64 + iota);\n"
                "        if i % 2 == 0 { acc = trans(acc, 1, 0, 2, 3, 5, 4); }\n"
                "    }\n"
                "    store(o + iota, acc);\n"
                "}\n",
                "k", arch, device);
    static int32_t x[ITERS * N], got[N], want[N], t[N];
    for (int i = 0; i < ITERS * N; i++) x[i] = irand(2001) - 1000;
    uint64_t dx = upload(&k, x, sizeof x), dout = poisoned(&k, sizeof got);
    int n = ITERS;
    void *params[] = {&dx, &dout, &n};
    launch(&k, 1, params);
    download(&k, got, dout, sizeof got);
    memset(want, 0, sizeof want);
    for (int it = 0; it < ITERS; it++) {
        for (int e = 0; e < N; e++) want[e] += x[it * N + e];
        if (it % 2) continue;
        int c[6], q[6];
        for (int e = 0; e < N; e++) { /* result coordinate q takes the source's c[perm[d]] = q[d] */
            coord(e, s, 6, q);
            for (int d = 0; d < 6; d++) c[perm[d]] = q[d];
            t[e] = want[flat(c, s, 6)];
        }
        memcpy(want, t, sizeof t);
    }
    for (int e = 0; e < N; e++) cr_expect_eq(got[e], want[e], "on %s: acc[%d] = %d, want %d (seed %llu)", device, e, got[e], want[e], (unsigned long long)seed);
    unload(&k);
}

Test(lang_rank, rank6_loop_carried) {
    seed_rng();
    loop_carried_6d(NULL, "emu");
    loop_carried_6d("sm_90a", "emu:sm_90a");
}

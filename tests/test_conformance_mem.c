/* test_conformance_mem.c - the emulator runs what nvcc emits: the memory, mma.sync, control, CUB and cooperative
 * topics (the others and how the suite works: test_conformance.c, test_conformance.h).
 *   memory.cu   static and dynamic shared memory, local arrays, grid-stride
 *               loops, 64-bit indexing, float4/int2/double2 vector accesses,
 *               printf through vprintf (the output is compared as text), device
 *               malloc/free and new/delete[] (the emulator's heap), alloca
 *   mma.cu      inline PTX: cp.async, ldmatrix, mma.sync: exact (small
 *               integer values)
 *   control.cu  calls through device function pointers and virtual functions,
 *               recursion, a dense switch, assert (held, and failed: the launch
 *               fails naming the condition, file and function), cuda::atomic_ref
 *               with every memory order and scope (a release/acquire message,
 *               counters, a CAS loop), fences, __nanosleep, clock64, clock and
 *               %globaltimer, every cache-hinted load and store intrinsic,
 *               __syncthreads_count/_and/_or, __isGlobal/Shared/Local/Constant,
 *               L2 policies (annotated_ptr, access_property, discard_memory),
 *               bf16/f16 atomicAdd and 16-/8-bit atomics, memcpy/memset of a
 *               local struct, __trap (the launch fails), independent thread
 *               scheduling (a flag between two lanes of a warp, a spin lock every
 *               thread takes): exact
 *   cub.cu      CUB's BlockLoad, BlockReduce, BlockScan, BlockRadixSort and
 *               WarpReduce (bmsk, bfe, shuffles, shared-memory ranking): exact
 *   coop.cu     cuda::pipeline + cuda::memcpy_async, __pipeline_* primitives,
 *               cooperative groups' memcpy_async and reductions over 32- and
 *               64-thread tiles (reserved shared memory, spinning warps),
 *               coalesced_threads / labeled_partition / binary_partition (reduce,
 *               scans, ranks), exclusive_scan on 8-thread tiles, invoke_one: exact
 * Every topic runs with the emulator's racecheck; without nvcc every test is skipped, and says so. */
#include "test_conformance.h"
#include "support/hostfloat.h"
#include <time.h>

/* ==== memory.cu ==== */
static int32_t ref_local_array(const int32_t *in, int i, int n) {
    int32_t a[24];
    for (int k = 0; k < 24; k++) a[k] = in[(i * 24 + k * 7) % (n * 24) / 24] * (k + 1) - k * in[i];
    a[in[i] & 15] += 1000;
    for (int x = 1; x < 24; x++) {
        int32_t v = a[x];
        int y = x - 1;
        while (y >= 0 && a[y] > v) { a[y + 1] = a[y]; y--; }
        a[y + 1] = v;
    }
    int32_t sum = 0;
    for (int k = 0; k < 24; k++) sum += a[k] * (k + 1);
    return sum + a[in[i] % 24 < 0 ? 0 : in[i] % 24];
}

/* Runs `kernel` with stdout captured into a string (malloc'd). */
static char *run_captured(Conf *c, const char *kernel, unsigned grid, unsigned block, void **args) {
    char path[] = "/tmp/tile-conformance-printf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    tile_kernel *k;
    tile_status st = tile_module_get_kernel(c->m, kernel, &k);
    if (st == TILE_OK) st = tile_launch_raw(k, (tile_dim3){grid, 1, 1}, (tile_dim3){block, 1, 1}, 0, args, NULL);
    if (st == TILE_OK) st = tile_synchronize(c->ctx); /* a GPU prints at synchronization */
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(fd);
    cr_assert_eq(st, TILE_OK, "[%s] %s: %s", c->name, kernel, tile_last_error(c->ctx));
    size_t len;
    char *text = read_file(path, &len);
    unlink(path);
    cr_assert(text);
    return text;
}

CONFORMANCE(memory)
Test(memory, sm_90a_O3_rdc_lineinfo) { memory_run(&V90RL); } /* separate compilation, .loc lines */
static void check_memory(Conf *c) {
    Rng rng = rng_seed(55);
    /* static shared: block sums */
    enum { NS = 1000 };
    float fin[NS], fout[4];
    for (int i = 0; i < NS; i++) fin[i] = (float)((int)(rng_next(&rng) % 2001) - 1000);
    tile_devptr din = dev_in(c, fin, sizeof fin), dout = dev_in(c, NULL, sizeof fout);
    int n = NS;
    run(c, "block_sum", 4, 256, 0, (void *[]){&din, &dout, &n});
    dev_out(c, fout, dout, sizeof fout);
    for (int b = 0; b < 4; b++) {
        float s = 0;
        for (int i = b * 256; i < (b + 1) * 256 && i < NS; i++) s += fin[i];
        cr_assert_eq(fout[b], s, "[%s] block_sum %d: got %g, want %g", c->name, b, fout[b], s);
    }
    /* dynamic shared */
    enum { NR = 300, BR = 128 };
    int32_t rin[NR], rout[NR];
    for (int i = 0; i < NR; i++) rin[i] = (int32_t)rng_next(&rng) % 100000;
    tile_devptr drin = dev_in(c, rin, sizeof rin), drout = dev_in(c, NULL, sizeof rout);
    n = NR;
    run(c, "reverse_dyn", (NR + BR - 1) / BR, BR, BR * 4, (void *[]){&drin, &drout, &n});
    dev_out(c, rout, drout, sizeof rout);
    for (int j = 0; j < NR; j++) {
        int b = j / BR, t = BR - 1 - j % BR, i = b * BR + t;
        int32_t want = (i < NR ? rin[i] : -1) * 2 + BR;
        cr_assert_eq(rout[j], want, "[%s] reverse_dyn %d: got %d, want %d", c->name, j, rout[j], want);
    }
    /* local arrays */
    enum { NA = 200 };
    int32_t ain[NA], aout[NA];
    for (int i = 0; i < NA; i++) ain[i] = (int32_t)(rng_next(&rng) % 2001) - 1000;
    tile_devptr dain = dev_in(c, ain, sizeof ain), daout = dev_in(c, NULL, sizeof aout);
    n = NA;
    run(c, "local_array", (NA + 63) / 64, 64, 0, (void *[]){&dain, &daout, &n});
    dev_out(c, aout, daout, sizeof aout);
    for (int i = 0; i < NA; i++)
        cr_assert_eq(aout[i], ref_local_array(ain, i, NA), "[%s] local_array %d: got %d, want %d", c->name, i, aout[i],
                     ref_local_array(ain, i, NA));
    /* grid-stride loop, 64-bit indices */
    enum { NG = 5000 };
    int64_t *gin = malloc(NG * 8), *gout = malloc(NG * 8), ng = NG, stride = 7919;
    for (int i = 0; i < NG; i++) gin[i] = (int64_t)rng_next(&rng) >> 3;
    tile_devptr dgin = dev_in(c, gin, NG * 8), dgout = dev_in(c, NULL, NG * 8);
    run(c, "grid_stride", 3, 64, 0, (void *[]){&dgin, &dgout, &ng, &stride});
    dev_out(c, gout, dgout, NG * 8);
    for (int64_t i = 0; i < NG; i++)
        cr_assert_eq(gout[i], gin[(i * stride) % NG] + i, "[%s] grid_stride %lld", c->name, (long long)i);
    free(gin);
    free(gout);
    /* vector loads and stores */
    enum { NV = 200 };
    float va[NV][4], oa[NV][4];
    int32_t vb[NV][2], ob[NV][2];
    double vc[NV][2], oc[NV][2];
    for (int i = 0; i < NV; i++) {
        for (int k = 0; k < 4; k++) va[i][k] = (float)((int)(rng_next(&rng) % 1000) - 500) / 4;
        vb[i][0] = (int32_t)rng_next(&rng), vb[i][1] = (int32_t)(rng_next(&rng) % 100000);
        vc[i][0] = rng_uniform(&rng, -100, 100), vc[i][1] = rng_uniform(&rng, -100, 100);
    }
    tile_devptr dva = dev_in(c, va, sizeof va), dvb = dev_in(c, vb, sizeof vb), dvc = dev_in(c, vc, sizeof vc),
                doa = dev_in(c, NULL, sizeof oa), dob = dev_in(c, NULL, sizeof ob), doc = dev_in(c, NULL, sizeof oc);
    n = NV;
    run(c, "vectors", (NV + 63) / 64, 64, 0, (void *[]){&dva, &dvb, &dvc, &doa, &dob, &doc, &n});
    dev_out(c, oa, doa, sizeof oa);
    dev_out(c, ob, dob, sizeof ob);
    dev_out(c, oc, doc, sizeof oc);
    for (int i = 0; i < NV; i++) {
        float wa[4] = {va[i][3], va[i][2] * 2, va[i][1] + 1, va[i][0] - va[i][1]};
        cr_assert(!memcmp(oa[i], wa, sizeof wa), "[%s] float4 %d", c->name, i);
        int j = NV - 1 - i;
        cr_assert(ob[j][0] == (vb[i][1] ^ 0x5555) && ob[j][1] == (int32_t)((uint32_t)vb[i][0] + (uint32_t)vb[i][1]), "[%s] int2 %d",
                  c->name, i);
        cr_assert(oc[i][0] == vc[i][0] * vc[i][1] && oc[i][1] == vc[i][0] - vc[i][1], "[%s] double2 %d", c->name, i);
    }
    /* device malloc/free and new/delete[]: a buffer per thread, blocks on several host threads */
    {
        enum { NH = 333 };
        int32_t hin[NH];
        int64_t hout[NH];
        for (int i = 0; i < NH; i++) hin[i] = (int32_t)(rng_next(&rng) % 5000);
        tile_devptr dhin = dev_in(c, hin, sizeof hin), dhout = dev_in(c, NULL, sizeof hout);
        int nh = NH;
        run(c, "heap", (NH + 63) / 64, 64, 0, (void *[]){&dhin, &dhout, &nh});
        dev_out(c, hout, dhout, sizeof hout);
        for (int i = 0; i < NH; i++) {
            int m = hin[i] % 11 + 1;
            int64_t sum = 0, sq = 0;
            for (int k = 0; k < m; k++) sum += hin[i] + k, sq += (int64_t)(hin[i] + k) * (hin[i] + k);
            cr_assert_eq(hout[i], sq * 1000 + sum, "[%s] heap: thread %d: %lld, want %lld", c->name, i, (long long)hout[i],
                         (long long)(sq * 1000 + sum));
        }
    }
    /* alloca: a run-time-sized stack array, and a call after it */
    {
        enum { NA = 200 };
        int32_t ain[NA], aout[NA];
        for (int i = 0; i < NA; i++) ain[i] = (int32_t)(rng_next(&rng) % 1000);
        tile_devptr dain = dev_in(c, ain, sizeof ain), daout = dev_in(c, NULL, sizeof aout);
        int na = NA;
        run(c, "stack_alloca", (NA + 63) / 64, 64, 0, (void *[]){&dain, &daout, &na});
        dev_out(c, aout, daout, sizeof aout);
        for (int i = 0; i < NA; i++) {
            int m = ain[i] % 13 + 1, seed = ain[i] & 7, want = ain[i] * m;
            for (int k = 0; k < m; k++) want += ain[i] * (k + 1) + seed * (k % 5);
            cr_assert_eq(aout[i], want, "[%s] stack_alloca: thread %d: %d, want %d", c->name, i, aout[i], want);
        }
    }
    /* printf: the output of every block, in block order */
    const char *word = "tile";
    tile_devptr dword = dev_in(c, word, 5);
    int nb = 3;
    char *text = run_captured(c, "print", nb, 32, (void *[]){&nb, &dword});
    Str want = {0};
    for (int b = 0; b < nb; b++)
        str_printf(&want, "block %d of %d: %5.2f|%-6d|%x|%X|%o|%u|%lld|%llu|%c|%s|%e|%g|%+d|%08.3f|%*d|%.3s|%%\n", b, nb, b * 1.5,
                   -b, 255 + b, 0xABCu, 8, 3000000000u, -123456789012345ll, 18446744073709551615ull, 'A' + b, word, 12345.678,
                   0.0001, b, 3.14159, 6, b * 11, word);
    cr_assert_str_eq(text, want.buf, "[%s] printf output:\n%s\nwant:\n%s", c->name, text, want.buf);
    free(text);
    str_free(&want);
}

/* ==== mma.cu ==== */
CONFORMANCE(mma)
static void check_mma(Conf *c) {
    enum { TILES = 3 };
    Rng rng = rng_seed(66);
    uint16_t A[TILES][16][16], B[TILES][16][8];
    float C[TILES][16][8], D[TILES][16][8];
    int ai[TILES][16][16], bi[TILES][16][8];
    for (int s = 0; s < TILES; s++) {
        for (int m = 0; m < 16; m++)
            for (int k = 0; k < 16; k++) ai[s][m][k] = (int)(rng_next(&rng) % 9) - 4, A[s][m][k] = f32_to_f16((float)ai[s][m][k]);
        for (int k = 0; k < 16; k++)
            for (int n = 0; n < 8; n++) bi[s][k][n] = (int)(rng_next(&rng) % 9) - 4, B[s][k][n] = f32_to_f16((float)bi[s][k][n]);
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) C[s][m][n] = (float)((int)(rng_next(&rng) % 201) - 100);
    }
    tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dC = dev_in(c, C, sizeof C), dD = dev_in(c, NULL, sizeof D);
    run(c, "mma_tile", TILES, 32, 0, (void *[]){&dA, &dB, &dC, &dD});
    dev_out(c, D, dD, sizeof D);
    for (int s = 0; s < TILES; s++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                int want = (int)C[s][m][n];
                for (int k = 0; k < 16; k++) want += ai[s][m][k] * bi[s][k][n];
                cr_assert_eq(D[s][m][n], (float)want, "[%s] tile %d D[%d][%d]: got %g, want %d", c->name, s, m, n, D[s][m][n], want);
            }
}

/* ==== control.cu ==== */
static int32_t ref_ack_sum(int depth, int32_t x) {
    if (depth == 0) return x & 0xff;
    int32_t a = ref_ack_sum(depth - 1, x * 3 + 1), b = ref_ack_sum(depth - 1, x ^ (depth * 17));
    return a + b * 2 - depth;
}

static int32_t ref_switch(int k, int32_t x) {
    switch (k) {
    case 0: return x + 11;
    case 1: return x * 13;
    case 2: return x - 17;
    case 3: return x ^ 0x1234;
    case 4: return x << 3;
    case 5: return x >> 2;
    case 6: return ~x;
    case 7: return x * x;
    case 8: return x | 0x40;
    case 9: return x & 0xf0f;
    case 10: return -x;
    case 11: return x + 1000000;
    default: return 99;
    }
}

CONFORMANCE(control)
Test(control, sm_90a_O3_rdc_lineinfo) { control_run(&V90RL); } /* separate compilation, .loc lines */
static void check_control(Conf *c) {
    Rng rng = rng_seed(77);
    enum { N = 300 };
    int32_t in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (int32_t)(rng_next(&rng) % 1000);
    in[5] = 0, in[6] = 999;
    tile_devptr din = dev_in(c, in, sizeof in);
    int n = N;
    /* function pointers: a table of them in global memory, and one picked by a select */
    tile_devptr dout = dev_in(c, NULL, sizeof out);
    run(c, "fnptr", (N + 63) / 64, 64, 0, (void *[]){&din, &dout, &n});
    dev_out(c, out, dout, sizeof out);
    for (int i = 0; i < N; i++) {
        int32_t v = in[i], r = (v & 3) == 0 ? v + i : (v & 3) == 1 ? v - i : (v & 3) == 2 ? v * i : (v ^ i) + 3;
        int32_t want = (v & 4) ? r * 7 : r - 7;
        cr_assert_eq(out[i], want, "[%s] fnptr %d (in %d): got %d, want %d", c->name, i, v, out[i], want);
    }
    /* virtual calls */
    dout = dev_in(c, NULL, sizeof out);
    run(c, "virt", (N + 63) / 64, 64, 0, (void *[]){&din, &dout, &n});
    dev_out(c, out, dout, sizeof out);
    for (int i = 0; i < N; i++) {
        int32_t s = in[i] % 1000, want = (in[i] & 1) ? s * s * 10 + 4 : s * s / 2 * 10 + 3;
        cr_assert_eq(out[i], want, "[%s] virt %d (in %d): got %d, want %d", c->name, i, in[i], out[i], want);
    }
    /* recursion */
    dout = dev_in(c, NULL, sizeof out);
    run(c, "recurse", (N + 63) / 64, 64, 0, (void *[]){&din, &dout, &n});
    dev_out(c, out, dout, sizeof out);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], ref_ack_sum(in[i] % 7 + 1, in[i]), "[%s] recurse %d (in %d): got %d, want %d", c->name, i, in[i],
                     out[i], ref_ack_sum(in[i] % 7 + 1, in[i]));
    /* a dense switch, every case and the default */
    dout = dev_in(c, NULL, sizeof out);
    run(c, "jump_table", (N + 63) / 64, 64, 0, (void *[]){&din, &dout, &n});
    dev_out(c, out, dout, sizeof out);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], ref_switch(in[i] % 14, i), "[%s] switch %d (case %d): got %d, want %d", c->name, i, in[i] % 14,
                     out[i], ref_switch(in[i] % 14, i));
    /* assert that holds */
    dout = dev_in(c, NULL, sizeof out);
    run(c, "asserts", (N + 63) / 64, 64, 0, (void *[]){&din, &dout, &n});
    dev_out(c, out, dout, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], in[i] + 1, "[%s] asserts %d", c->name, i);
    /* atomic_ref: a release/acquire message per block, counters at every scope and order, a CAS maximum */
    {
        enum { B = 3, T = 96 };
        int32_t zeros[B] = {0}, data_out[B * T];
        uint32_t counters[5] = {0};
        int32_t mx = -1;
        tile_devptr ddata = dev_in(c, NULL, B * 4), dflags = dev_in(c, zeros, sizeof zeros),
                    dcnt = dev_in(c, counters, sizeof counters), dmx = dev_in(c, &mx, 4), dao = dev_in(c, NULL, sizeof data_out);
        int nn = B * T;
        run(c, "atomic_refs", B, T, 0, (void *[]){&ddata, &dflags, &dcnt, &dmx, &dao, &nn});
        dev_out(c, data_out, dao, sizeof data_out);
        dev_out(c, counters, dcnt, sizeof counters);
        dev_out(c, &mx, dmx, 4);
        for (int b = 0; b < B; b++)
            for (int t = 32; t < T; t++)
                cr_assert_eq(data_out[b * T + t], b * 1000 + 7 + t, "[%s] atomic_ref message: block %d thread %d got %d", c->name,
                             b, t, data_out[b * T + t]);
        uint32_t x = 0;
        int32_t m = -1;
        for (int i = 0; i < B * T; i++) x ^= (uint32_t)i * 2654435761u, m = (i * 7919) % 10007 > m ? (i * 7919) % 10007 : m;
        cr_assert(counters[0] == B * T && counters[1] == 2 * B * T && counters[2] == 3 * B * T && counters[3] == 0xFFFFFFFFu &&
                      counters[4] == x,
                  "[%s] atomic_ref counters %u %u %u %x %x (want %u %u %u ffffffff %x)", c->name, counters[0], counters[1],
                  counters[2], counters[3], counters[4], B * T, 2 * B * T, 3 * B * T, x);
        cr_assert_eq(mx, m, "[%s] atomic_ref CAS maximum: got %d, want %d", c->name, mx, m);
    }
    /* timers */
    {
        enum { T = 64 };
        int64_t t[T * 4];
        tile_devptr dt = dev_in(c, NULL, sizeof t);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        run(c, "timers", 2, T / 2, 0, (void *[]){&dt});
        dev_out(c, t, dt, sizeof t);
        for (int i = 0; i < T; i++) {
            cr_assert(t[i * 4] >= 0 && t[i * 4 + 1] >= 0 && t[i * 4 + 2] >= 0,
                      "[%s] thread %d: clock64 %lld, globaltimer %lld, clock %lld ns across __nanosleep", c->name, i,
                      (long long)t[i * 4], (long long)t[i * 4 + 1], (long long)t[i * 4 + 2]);
            cr_assert(llabs(t[i * 4 + 3] - now) < 86400ll * 1000000000, "[%s] thread %d: globaltimer %lld, the host's time %lld",
                      c->name, i, (long long)t[i * 4 + 3], (long long)now);
        }
    }
    /* cache-hinted loads and stores */
    {
        enum { NC = 203 };
        float a[NC], oa[NC];
        int32_t b[NC][4], ob[NC][4];
        double d[NC], od[NC];
        for (int i = 0; i < NC; i++) {
            a[i] = (float)((int)(rng_next(&rng) % 201) - 100);
            for (int k = 0; k < 4; k++) b[i][k] = (int32_t)(rng_next(&rng) % 100000) - 50000;
            d[i] = rng_uniform(&rng, -10, 10);
        }
        tile_devptr da = dev_in(c, a, sizeof a), db = dev_in(c, b, sizeof b), dd = dev_in(c, d, sizeof d),
                    doa = dev_in(c, NULL, sizeof oa), dob = dev_in(c, NULL, sizeof ob), dod = dev_in(c, NULL, sizeof od);
        int nc = NC;
        run(c, "cache_hints", (NC + 63) / 64, 64, 0, (void *[]){&da, &db, &dd, &doa, &dob, &dod, &nc});
        dev_out(c, oa, doa, sizeof oa);
        dev_out(c, ob, dob, sizeof ob);
        dev_out(c, od, dod, sizeof od);
        for (int i = 0; i < NC; i++) {
            float w = 0;
            for (int k = 0; k < 6; k++) w += a[(i + k) % NC] * (float)(1 << k);
            cr_assert_eq(oa[i], w, "[%s] cache_hints f32 %d: got %g, want %g", c->name, i, oa[i], w);
            int32_t wb[4] = {b[i][0] + b[NC - 1 - i][3], b[i][1], b[i][2], b[i][3]};
            cr_assert(!memcmp(ob[i], wb, sizeof wb), "[%s] cache_hints int4 %d", c->name, i);
            cr_assert_eq(od[i], d[i] - d[(i + 1) % NC], "[%s] cache_hints f64 %d", c->name, i);
        }
    }
    /* block votes */
    {
        enum { NB = 300, BT = 128 };
        int32_t vin[NB], vout[NB];
        for (int i = 0; i < NB; i++) vin[i] = (int32_t)(rng_next(&rng) % 100);
        vin[130] = -5;           /* block 1: not all >= 0 */
        for (int i = 0; i < NB; i++)
            if (i / BT != 1 && vin[i] == 7) vin[i] = 8; /* only block 1 has a 7 */
        vin[200] = 7;
        tile_devptr dv = dev_in(c, vin, sizeof vin), dvo = dev_in(c, NULL, sizeof vout);
        int nv = NB;
        run(c, "votes", (NB + BT - 1) / BT, BT, 0, (void *[]){&dv, &dvo, &nv});
        dev_out(c, vout, dvo, sizeof vout);
        for (int b = 0; b * BT < NB; b++) {
            int cnt = 0, all = 1, any = 0;
            for (int i = b * BT; i < (b + 1) * BT && i < NB; i++) cnt += vin[i] & 1, all &= vin[i] >= 0, any |= vin[i] == 7;
            for (int i = b * BT; i < (b + 1) * BT && i < NB; i++)
                cr_assert_eq(vout[i], cnt * 4 + all * 2 + any, "[%s] votes block %d thread %d: got %d, want count %d and %d or %d",
                             c->name, b, i, vout[i], cnt, all, any);
        }
    }
    /* address-space predicates */
    for (int g0 = 0; g0 < 5; g0 += 3) {
        int32_t sout[32], gin[4] = {g0, 0, 0, 0};
        tile_devptr dg = dev_in(c, gin, sizeof gin), dso = dev_in(c, NULL, sizeof sout);
        run(c, "spaces", 1, 32, 0, (void *[]){&dso, &dg});
        dev_out(c, sout, dso, sizeof sout);
        /* global, shared, local, __device__, __constant__ (in global memory too, as on the GPU: docs/emulator.md) */
        static const int32_t want_space[5] = {1, 2, 4, 1, 9};
        for (int t = 0; t < 32; t++)
            cr_assert_eq(sout[t], want_space[(t + g0) % 5], "[%s] isspacep thread %d (pointer %d): got %d, want %d", c->name, t,
                         (t + g0) % 5, sout[t], want_space[(t + g0) % 5]);
    }
    /* L2 cache policies */
    {
        enum { NP = 301 };
        float pa[NP], po[2 * NP + 64];
        for (int i = 0; i < NP; i++) pa[i] = (float)((int)(rng_next(&rng) % 2001) - 1000) / 8;
        tile_devptr dpa = dev_in(c, pa, sizeof pa), dpo = dev_in(c, NULL, sizeof po);
        int np = NP;
        run(c, "policies", (NP + 63) / 64, 64, 0, (void *[]){&dpa, &dpo, &np});
        dev_out(c, po, dpo, sizeof po);
        for (int i = 0; i < NP; i++) {
            cr_assert_eq(po[i], pa[i] * 2 + pa[(i + 1) % NP], "[%s] annotated_ptr %d: got %g", c->name, i, po[i]);
            cr_assert_eq(po[NP + i], pa[i] + 1, "[%s] access_property %d: got %g", c->name, i, po[NP + i]);
        }
    }
    /* 16- and 8-bit atomics */
    {
        enum { NN = 200 };
        uint16_t zb[3] = {0}, zh[3] = {0}, us[8] = {0};
        tile_devptr db = dev_in(c, zb, sizeof zb), dh = dev_in(c, zh, sizeof zh), dus = dev_in(c, us, sizeof us);
        int nn = NN;
        run(c, "narrow_atomics", (NN + 63) / 64, 64, 0, (void *[]){&db, &dh, &dus, &nn});
        dev_out(c, zb, db, sizeof zb);
        dev_out(c, zh, dh, sizeof zh);
        dev_out(c, us, dus, sizeof us);
        for (int k = 0; k < 3; k++) {
            int sum = 0; /* integers below 256: exact in bf16 and f16 in any order */
            for (int i = k; i < NN; i += 3) sum += i % 4;
            cr_assert_eq(u2f((uint32_t)zb[k] << 16), (float)sum, "[%s] bf16 atomicAdd %d: got %g, want %d", c->name, k,
                         u2f((uint32_t)zb[k] << 16), sum);
            cr_assert_eq((float)f16_to_d(zh[k]), (float)sum, "[%s] f16 atomicAdd %d: got %g, want %d", c->name, k, (float)f16_to_d(zh[k]), sum);
        }
        for (int k = 0; k < 5; k++)
            cr_assert(us[k] >= 1 && us[k] <= NN && (us[k] - 1) % 5 == k, "[%s] 16-bit atomicCAS slot %d: %u", c->name, k, us[k]);
        cr_assert(us[5] == NN && (us[7] & 0xFF) == 0xFF && us[6] == 0 && us[7] >> 8 == 0, "[%s] atomic_ref<u16> %u, <u8> %#x",
                  c->name, us[5], us[7]);
    }
    /* memcpy, memset, __fdividef */
    {
        enum { NM = 70, W = 37 };
        int32_t (*min)[W] = malloc(sizeof(int32_t[NM][W])), (*mout)[W] = malloc(sizeof(int32_t[NM][W]));
        for (int i = 0; i < NM; i++)
            for (int k = 0; k < W; k++) min[i][k] = (int32_t)(rng_next(&rng) % 30000) * 3 + (k == 1); /* a[1] / 3 is never whole */
        tile_devptr dmi = dev_in(c, min, sizeof(int32_t[NM][W])), dmo = dev_in(c, NULL, sizeof(int32_t[NM][W]));
        int nm = NM;
        run(c, "memops", (NM + 31) / 32, 32, 0, (void *[]){&dmi, &dmo, &nm});
        dev_out(c, mout, dmo, sizeof(int32_t[NM][W]));
        for (int i = 0; i < NM; i++)
            for (int k = 0; k < W; k++) {
                int32_t want = k >= 5 && k < 12 ? (int32_t)((uint32_t)(i & 0xff) * 0x01010101u)
                             : k == 0 ? (int32_t)((float)min[i][0] + (float)min[i][1] / 3.0f) : min[i][k];
                cr_assert_eq(mout[i][k], want, "[%s] memops %d word %d: got %d, want %d", c->name, i, k, mout[i][k], want);
            }
        free(min);
        free(mout);
    }
    /* independent thread scheduling: a flag between two lanes of a warp, a lock taken by every thread */
    {
        enum { B = 3, T = 96, NT = 2 * T };
        int32_t zero[NT] = {0}, got[B], log[NT], cnt;
        tile_devptr dd = dev_in(c, NULL, B * 4), dfl = dev_in(c, zero, B * 4), dgo = dev_in(c, NULL, sizeof got);
        run(c, "intra_warp_flag", B, 64, 0, (void *[]){&dd, &dfl, &dgo});
        dev_out(c, got, dgo, sizeof got);
        for (int b = 0; b < B; b++) cr_assert_eq(got[b], 42 + b, "[%s] intra_warp_flag block %d: got %d", c->name, b, got[b]);
        tile_devptr dlock = dev_in(c, zero, 4), dcnt = dev_in(c, zero, 4), dlog = dev_in(c, NULL, sizeof log);
        run(c, "warp_lock", 2, T, 0, (void *[]){&dlock, &dcnt, &dlog});
        dev_out(c, log, dlog, sizeof log);
        dev_out(c, &cnt, dcnt, 4);
        cr_assert_eq(cnt, NT, "[%s] warp_lock: %d of %d threads went through the lock", c->name, cnt, NT);
        bool seen[NT] = {false};
        for (int i = 0; i < NT; i++) {
            cr_assert(log[i] >= 0 && log[i] < NT && !seen[log[i]], "[%s] warp_lock: entry %d is %d (twice, or no thread)", c->name,
                      i, log[i]);
            seen[log[i]] = true;
        }
    }
    /* assert that fails: the launch fails and says what failed where (last: a GPU's context is unusable after it) */
    {
        in[123] = 4242;
        tile_devptr dbad = dev_in(c, in, sizeof in);
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(c->m, "assert_fails", &k), TILE_OK);
        tile_status st = tile_launch_raw(k, (tile_dim3){(N + 63) / 64, 1, 1}, (tile_dim3){64, 1, 1}, 0, (void *[]){&dbad, &n}, NULL);
        if (st == TILE_OK) st = tile_synchronize(c->ctx);
        cr_assert_neq(st, TILE_OK, "[%s] a failed assert: the launch succeeded", c->name);
        const char *msg = tile_last_error(c->ctx);
        cr_assert(strstr(msg, "in[i] != 4242") && strstr(msg, "control.cu") && strstr(msg, "assert_fails"),
                  "[%s] a failed assert says: %s", c->name, msg);
    }
    /* __trap: the launch fails */
    {
        tile_devptr dbad = dev_in(c, in, sizeof in);
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(c->m, "traps", &k), TILE_OK);
        tile_status st = tile_launch_raw(k, (tile_dim3){(N + 63) / 64, 1, 1}, (tile_dim3){64, 1, 1}, 0, (void *[]){&dbad, &n}, NULL);
        if (st == TILE_OK) st = tile_synchronize(c->ctx);
        cr_assert_neq(st, TILE_OK, "[%s] __trap: the launch succeeded", c->name);
    }
}

/* ==== cub.cu ==== */
CONFORMANCE(cub)
static void check_cub(Conf *c) {
    enum { BLOCKS = 2 };
    Rng rng = rng_seed(77);
    static int in[BLOCKS * 512], out[BLOCKS * 1024];
    static float wmax[BLOCKS * 4];
    for (int i = 0; i < BLOCKS * 512; i++) in[i] = (int)(rng_next(&rng) % 2000001) - 1000000;
    in[5] = INT32_MIN, in[6] = INT32_MAX, in[600] = 0; /* radix sort's sign handling */
    tile_devptr di = dev_in(c, in, sizeof in), dout = dev_in(c, NULL, sizeof out), dw = dev_in(c, NULL, sizeof wmax);
    run(c, "cub_block", BLOCKS, 128, 0, (void *[]){&di, &dout, &dw});
    dev_out(c, out, dout, sizeof out);
    dev_out(c, wmax, dw, sizeof wmax);
    for (int b = 0; b < BLOCKS; b++) {
        const int *x = in + b * 512, *o = out + b * 1024;
        int64_t run_sum = 0;
        for (int t = 0; t < 128; t++) {
            cr_assert_eq(o[t], (int32_t)run_sum, "[%s] block %d: exclusive sum %d: got %d, want %d", c->name, b, t, o[t], (int32_t)run_sum);
            run_sum += x[t];
        }
        cr_assert_eq(o[1000], (int32_t)(uint32_t)run_sum, "[%s] block %d: sum", c->name, b);
        int sorted[512];
        memcpy(sorted, x, sizeof sorted);
        for (int i = 1; i < 512; i++) /* insertion sort: 512 keys */
            for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                int tmp = sorted[j];
                sorted[j] = sorted[j - 1], sorted[j - 1] = tmp;
            }
        for (int i = 0; i < 512; i++)
            cr_assert_eq(o[128 + i], sorted[i], "[%s] block %d: sorted key %d: got %d, want %d", c->name, b, i, o[128 + i], sorted[i]);
        for (int w = 0; w < 4; w++) {
            float m = -INFINITY;
            for (int t = 0; t < 32; t++) m = fmaxf(m, (float)x[32 * w + t]);
            cr_assert_eq(wmax[b * 4 + w], m, "[%s] block %d: warp %d max %g, want %g", c->name, b, w, wmax[b * 4 + w], m);
        }
    }
}

/* ==== coop.cu ==== */
CONFORMANCE(coop)
Test(coop, sm_90a_O3_rdc_lineinfo) { coop_run(&V90RL); } /* separate compilation, .loc lines */
static void check_coop(Conf *c) {
    enum { BLOCKS = 3, PER = 390 };
    Rng rng = rng_seed(88);
    static float in[BLOCKS * 1024], out[BLOCKS * PER];
    for (int i = 0; i < BLOCKS * 1024; i++) in[i] = (float)((int)(rng_next(&rng) % 2001) - 1000); /* exact sums */
    unsigned gsize = 0;
    tile_devptr di = dev_in(c, in, sizeof in), dout = dev_in(c, NULL, sizeof out), dg = dev_in(c, NULL, sizeof gsize);
    run(c, "coop", BLOCKS, 128, 0, (void *[]){&di, &dout, &dg});
    dev_out(c, out, dout, sizeof out);
    dev_out(c, &gsize, dg, sizeof gsize);
    cr_assert_eq(gsize, BLOCKS * 128u, "[%s] this_grid().size(): %u", c->name, gsize);
    for (int b = 0; b < BLOCKS; b++) {
        const float *x = in + b * 1024, *o = out + b * PER;
        for (int t = 0; t < 128; t++) {
            float want = (x[t] + x[255 - t]) + (x[256 + t] * 2 + x[256 + 255 - t]);
            cr_assert_eq(o[t], want, "[%s] block %d: pipeline %d: got %g, want %g", c->name, b, t, o[t], want);
            cr_assert_eq(o[128 + t], x[512 + 127 - t], "[%s] block %d: __pipeline_memcpy_async %d", c->name, b, t);
            cr_assert_eq(o[256 + t], x[768 + t] - x[768 + 255 - t], "[%s] block %d: cg::memcpy_async %d", c->name, b, t);
        }
        for (int w = 0; w < 4; w++) {
            float sum = 0;
            for (int t = 0; t < 32; t++) sum += x[768 + 32 * w + t];
            cr_assert_eq(o[384 + w], sum, "[%s] block %d: warp %d sum %g, want %g", c->name, b, w, o[384 + w], sum);
        }
        for (int p = 0; p < 2; p++) {
            float m = -INFINITY;
            for (int t = 0; t < 64; t++) m = fmaxf(m, x[768 + 128 + 64 * p + t]);
            cr_assert_eq(o[388 + p], m, "[%s] block %d: 64-thread tile %d max %g, want %g", c->name, b, p, o[388 + p], m);
        }
    }
    /* partitions of warps and tiles (blocks of 64, the last partly past n) */
    {
        enum { PN = 150, PT = 64, PG = (PN + PT - 1) / PT };
        int pin[PG * PT] = {0}, pout[PN][6], want[6];
        for (int i = 0; i < PN; i++) pin[i] = (int)(rng_next(&rng) % 100);
        tile_devptr dpi = dev_in(c, pin, PN * sizeof(int)), dpo = dev_in(c, NULL, sizeof pout);
        int pn = PN;
        run(c, "partitions", PG, PT, 0, (void *[]){&dpi, &dpo, &pn});
        dev_out(c, pout, dpo, sizeof pout);
        for (int i = 0; i < PN; i++) {
            int w = i / 32 * 32, v = pin[i], rank = 0, sum = 0, scan = 0, mx = 0, nl = 0, x = 0, nb = 0;
            for (int l = w; l < w + 32; l++) {
                if (pin[l] & 1) sum += pin[l], rank += l < i, scan += l <= i ? pin[l] : 0;
                if (pin[l] % 3 == v % 3) mx = pin[l] > mx ? pin[l] : mx, nl++;
                if ((pin[l] > 50) == (v > 50)) x ^= pin[l], nb++;
            }
            int ex = (i % PT / 8) * 100000;
            for (int l = i - i % 8; l < i; l++) ex += pin[l];
            want[0] = v & 1 ? sum * 1000 + rank : 0, want[1] = v & 1 ? scan : 0, want[2] = ex, want[3] = mx * 64 + nl,
            want[4] = x + nb * 1000000;
            for (int k = 0; k < 5; k++)
                cr_assert_eq(pout[i][k], want[k], "[%s] partitions: thread %d value %d: got %d, want %d", c->name, i, k, pout[i][k],
                             want[k]);
        }
        for (int t = 0; t < PN; t += 16) { /* invoke_one: one thread of each 16-thread tile */
            int ones = 0;
            for (int i = t; i < t + 16 && i < PN; i++) {
                cr_assert(pout[i][5] == 7 || pout[i][5] == 0, "[%s] invoke_one: thread %d wrote %d", c->name, i, pout[i][5]);
                ones += pout[i][5] == 7;
            }
            cr_assert_eq(ones, 1, "[%s] invoke_one: %d threads of the tile at %d ran it", c->name, ones, t);
        }
    }
    /* grid.sync() in a cooperative launch: 5 blocks of 128 add 640 values; outside one, nvcc's code traps */
    enum { GB = 5, GT = 128 };
    static int gin[GB * GT], gout[GB * GT];
    int total = 0;
    for (int i = 0; i < GB * GT; i++) gin[i] = (int)(rng_next(&rng) % 2001) - 1000, total += gin[i];
    tile_devptr dgi = dev_in(c, gin, sizeof gin), dpart = dev_in(c, NULL, (GB + 1) * sizeof(int)), dgo = dev_in(c, NULL, sizeof gout);
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(c->m, "grid_sum", &k), TILE_OK, "[%s] %s", c->name, tile_last_error(c->ctx));
    void *gargs[] = {&dgi, &dpart, &dgo};
    tile_launch_options lo = {.size = sizeof lo, .block = {GT, 1, 1}, .cooperative = 1};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){GB, 1, 1}, gargs, NULL, &lo), TILE_OK, "[%s] cooperative grid_sum: %s", c->name,
                 tile_last_error(c->ctx));
    dev_out(c, gout, dgo, sizeof gout);
    for (int i = 0; i < GB * GT; i++)
        cr_assert_eq(gout[i], total + 1000000 + i / GT, "[%s] grid_sum out[%d] = %d, want %d", c->name, i, gout[i], total + 1000000 + i / GT);
    const char *device = getenv("TILE_TEST_DEVICE");
    if (!device || strncmp(device, "emu", 3) == 0) {
        lo.cooperative = 0;
        cr_assert_neq(tile_launch_ex(k, (tile_dim3){GB, 1, 1}, gargs, NULL, &lo), TILE_OK, "[%s] grid.sync() ran without a cooperative launch",
                      c->name);
        cr_assert(strstr(tile_last_error(c->ctx), "trap"), "[%s] %s", c->name, tile_last_error(c->ctx));
    }
}

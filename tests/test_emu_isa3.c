/* test_emu_isa3.c - the emulator's warp-level, memory and atomic instructions against references
 * written in C from the PTX ISA's instruction pages (not from emu/): shfl.sync in every mode with the
 * c operand's clamp and segment mask and with two member masks at one instruction, vote/match/redux/activemask/elect in divergent code, the
 * special registers %laneid and %lanemask_*, atom/red of every operation and type on global, shared
 * and generic addresses (each return value and the memory after), contended atomics, bar.red with
 * counts, wmma with every layout and stride, ld/st forms (extension, spaces, qualifiers), calls, a
 * divergent exit and the special registers' documented values.  Every kernel is assembled by ptxas
 * too; outputs are poisoned first, inputs fresh random. */
#include "emu_isa_family.h"

#include <inttypes.h>

/* One launch: params (in, out); out poisoned (0xEE bytes) and read back. */
static void launch(const char *target, const char *ptx, unsigned grid, unsigned block, unsigned smem, const void *in, size_t insz, void *out,
                   size_t outsz) {
    check_ptxas_arch(ptx, target);
    char spec[64];
    snprintf(spec, sizeof spec, "emu:%s", target);
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 1};
    cr_assert_eq(dev_open(spec, &o, &d, &err), DEV_OK, "dev_open(%s): %s", spec, err ? err : "");
    TileDevModule *m = NULL;
    cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "load on %s: %s", target, dev_last_error(d));
    TileDevFunction *fn = NULL;
    cr_assert_eq(dev_module_get_function(m, "k", &fn), DEV_OK);
    uint64_t din, dout;
    cr_assert_eq(dev_malloc(d, insz, &din), DEV_OK);
    cr_assert_eq(dev_malloc(d, outsz, &dout), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(d, din, in, insz), DEV_OK);
    cr_assert_eq(dev_memset_d8(d, dout, 0xEE, outsz), DEV_OK);
    static const uint32_t third[4] = {0x11223344, 0x55667788, 0x99AABBCC, 0xDDEEFF00}; /* a kernel's third parameter, 16 bytes, if any */
    void *params[] = {&din, &dout, (void *)third};
    cr_assert_eq(dev_launch(fn, grid, 1, 1, block, 1, 1, smem, NULL, params), DEV_OK, "launch on %s: %s", target, dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK, "on %s: %s", target, dev_last_error(d));
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, outsz), DEV_OK);
    dev_module_unload(m);
    dev_close(d);
}

static void seed_rng(void) { rng = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull | 1; }
#define POISON32 0xEEEEEEEEu

/* ---------------------------------------------------------------------------------------------
 * shfl.sync (the ISA's pseudo-code): segmask = c[12:8], maxLane = (lane & segmask) | (c[4:0] & ~segmask),
 * minLane = lane & segmask; up: j = lane - b[4:0], valid j >= maxLane; down: j = lane + b, valid j <= maxLane;
 * bfly: j = lane ^ b, valid j <= maxLane; idx: j = minLane | (b[4:0] & ~segmask), valid j <= maxLane;
 * an invalid j takes the lane's own value; p says whether j was valid. */

static const char *SHFL_PTX =
    "%s.visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
    " .reg .pred %%p<8>;\n .reg .b32 %%r<40>;\n .reg .b64 %%rd<20>;\n"
    " ld.param.u64 %%rd1, [in];\n ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x;\n mul.wide.u32 %%rd3, %%r1, 12;\n add.s64 %%rd4, %%rd1, %%rd3;\n"
    " ld.global.u32 %%r2, [%%rd4];\n ld.global.u32 %%r3, [%%rd4+4];\n ld.global.u32 %%r4, [%%rd4+8];\n"
    " shfl.sync.up.b32 %%r10|%%p1, %%r2, %%r3, %%r4, -1;\n"
    " shfl.sync.down.b32 %%r11|%%p2, %%r2, %%r3, %%r4, -1;\n"
    " shfl.sync.bfly.b32 %%r12|%%p3, %%r2, %%r3, %%r4, -1;\n"
    " shfl.sync.idx.b32 %%r13|%%p4, %%r2, %%r3, %%r4, -1;\n"
    " selp.u32 %%r14, 1, 0, %%p1;\n selp.u32 %%r15, 1, 0, %%p2;\n selp.u32 %%r16, 1, 0, %%p3;\n selp.u32 %%r17, 1, 0, %%p4;\n"
    /* immediate forms: CUB's and nvcc's (down 1 clamp 31, up 2 clamp 0, bfly 4 with 8-lane segments, idx 5 within 8) */
    " shfl.sync.down.b32 %%r20, %%r2, 1, 31, -1;\n"
    " shfl.sync.up.b32 %%r21, %%r2, 2, 0, -1;\n"
    " shfl.sync.bfly.b32 %%r22, %%r2, 4, 0x181f, -1;\n"
    " shfl.sync.idx.b32 %%r23, %%r2, 5, 0x1807, -1;\n"
    " mul.wide.u32 %%rd5, %%r1, 48;\n add.s64 %%rd6, %%rd2, %%rd5;\n"
    " st.global.v4.u32 [%%rd6], {%%r10, %%r11, %%r12, %%r13};\n"
    " st.global.v4.u32 [%%rd6+16], {%%r14, %%r15, %%r16, %%r17};\n"
    " st.global.v4.u32 [%%rd6+32], {%%r20, %%r21, %%r22, %%r23};\n"
    " ret;\n}\n";

static uint32_t ref_shfl(const uint32_t *v, int lane, int mode, uint32_t b, uint32_t c, bool *pv) {
    int bval = (int)(b & 31), cval = (int)(c & 31), seg = (int)(c >> 8 & 31);
    int maxl = (lane & seg) | (cval & ~seg), minl = lane & seg, j;
    bool p;
    switch (mode) {
    case 0: j = lane - bval, p = j >= maxl; break;
    case 1: j = lane + bval, p = j <= maxl; break;
    case 2: j = lane ^ bval, p = j <= maxl; break;
    default: j = minl | (bval & ~seg), p = j <= maxl; break;
    }
    if (!p) j = lane;
    if (pv) *pv = p;
    return v[j];
}

Test(isa3, shfl_every_mode_clamp_and_segment) {
    seed_rng();
    enum { W = 16, N = 32 * W };
    static const uint32_t SEG[] = {0, 0x10, 0x18, 0x1C, 0x1E, 0x1F, 0x0F, 0x07, 0x03, 0x01};
    uint32_t in[3 * N], out[12 * N];
    for (int w = 0; w < W; w++) {
        uint32_t c = (uint32_t)(rnd() & 31) | (w % 2 ? SEG[rnd() % 10] : (uint32_t)rnd() & 31) << 8;
        if (w == 0) c = 31;
        if (w == 1) c = 0;
        for (int l = 0; l < 32; l++) {
            int i = 32 * w + l;
            in[3 * i] = (uint32_t)rnd();
            in[3 * i + 1] = (uint32_t)(rnd() % 3 ? rnd() % 34 : rnd()); /* b[4:0] counts: b past 31 too */
            in[3 * i + 2] = c;
        }
    }
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "sm_90a" : "sm_80";
        char head[128], ptx[4096];
        snprintf(head, sizeof head, ".version 8.3\n.target %s\n.address_size 64\n", tg);
        snprintf(ptx, sizeof ptx, SHFL_PTX, head);
        launch(tg, ptx, 1, N, 0, in, sizeof in, out, sizeof out);
        int bad = 0;
        for (int w = 0; w < W; w++) {
            uint32_t v[32];
            for (int l = 0; l < 32; l++) v[l] = in[3 * (32 * w + l)];
            for (int l = 0; l < 32; l++) {
                int i = 32 * w + l;
                uint32_t want[12];
                for (int m = 0; m < 4; m++) {
                    bool p;
                    want[m] = ref_shfl(v, l, m, in[3 * i + 1], in[3 * i + 2], &p);
                    want[4 + m] = p;
                }
                want[8] = ref_shfl(v, l, 1, 1, 31, NULL);
                want[9] = ref_shfl(v, l, 0, 2, 0, NULL);
                want[10] = ref_shfl(v, l, 2, 4, 0x181f, NULL);
                want[11] = ref_shfl(v, l, 3, 5, 0x1807, NULL);
                for (int s = 0; s < 12; s++)
                    if (out[12 * i + s] != want[s] && bad++ < 20)
                        cr_log_error("%s lane %d of warp %d slot %d (b=%#x c=%#x): got %#x want %#x", tg, l, w, s, in[3 * i + 1], in[3 * i + 2],
                                     out[12 * i + s], want[s]);
            }
        }
        cr_expect_eq(bad, 0, "shfl on %s: %d slots differ", tg, bad);
    }
}

/* One shfl.sync.idx instruction that the two halves of each warp reach with their own member masks (0x0000ffff and
 * 0xffff0000, a register operand), each lane reading a random lane of its half: two groups of one instruction, each
 * firing alone.  Then every lane with 0x0000ffff: lanes 16-31 execute it outside their own mask, which is refused. */
static const char *SHFL_HALF_PTX = ".version 8.3\n.target sm_80\n.address_size 64\n"
    ".visible .entry k(.param .u64 in, .param .u64 out, .param .align 16 .b8 third[16])\n{\n"
    " .reg .pred %p<2>;\n .reg .b32 %r<9>;\n .reg .b64 %rd<6>;\n"
    " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd3, %r1, 8;\n"
    " add.s64 %rd4, %rd1, %rd3;\n ld.global.v2.u32 {%r2, %r3}, [%rd4];\n and.b32 %r4, %r1, 16;\n setp.ne.u32 %p1, %r4, 0;\n"
    " selp.b32 %r5, 0xffff0000, 0x0000ffff, %p1;\n ld.param.u32 %r8, [third];\n setp.eq.u32 %p1, %r8, 0;\n"
    " @%p1 mov.b32 %r5, 0x0000ffff;\n"
    " shfl.sync.idx.b32 %r6, %r2, %r3, 31, %r5;\n"
    " mul.wide.u32 %rd3, %r1, 4;\n add.s64 %rd5, %rd2, %rd3;\n st.global.u32 [%rd5], %r6;\n ret;\n}\n";

Test(isa3, shfl_half_warp_masks_at_one_instruction) {
    seed_rng();
    enum { N = 96 };
    uint32_t in[2 * N], out[N];
    for (int i = 0; i < N; i++) in[2 * i] = (uint32_t)rnd(), in[2 * i + 1] = (uint32_t)(i & 16) | (uint32_t)(rnd() & 15);
    launch("sm_80", SHFL_HALF_PTX, 1, N, 0, in, sizeof in, out, sizeof out); /* third's first word is nonzero: two masks */
    for (int i = 0; i < N; i++) {
        uint32_t want = in[2 * (i / 32 * 32 + in[2 * i + 1])];
        cr_expect_eq(out[i], want, "lane %d of warp %d read %#x, want lane %u's %#x", i % 32, i / 32, out[i], in[2 * i + 1], want);
    }
    /* every lane with the lower half's mask: the first group fires, lane 16 then executes outside its mask */
    TileDevice *d = NULL;
    DevOptions o = {.emu_host_threads = 1};
    cr_assert_eq(dev_open("emu:sm_80", &o, &d, NULL), DEV_OK);
    TileDevModule *m = NULL;
    TileDevFunction *fn = NULL;
    cr_assert_eq(dev_module_load_ptx(d, SHFL_HALF_PTX, &m), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_module_get_function(m, "k", &fn), DEV_OK);
    uint64_t din, dout;
    cr_assert_eq(dev_malloc(d, sizeof in, &din), DEV_OK);
    cr_assert_eq(dev_malloc(d, sizeof out, &dout), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(d, din, in, sizeof in), DEV_OK);
    static const uint32_t zero[4];
    void *params[] = {&din, &dout, (void *)zero};
    cr_assert_neq(dev_launch(fn, 1, 1, 1, N, 1, 1, 0, NULL, params), DEV_OK);
    cr_expect(strstr(dev_last_error(d), "the executing lane 16 is not in the member mask 0x0000ffff"), "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* ---------------------------------------------------------------------------------------------
 * vote / match / redux / activemask / %lanemask_* / %laneid in divergent code: a lane takes part when
 * bit 0 of its flag is set; the others branch past and write nothing (their slots stay poisoned). */

static const char *WARP_PTX =
    "%s.visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
    " .reg .pred %%p<12>;\n .reg .b32 %%r<60>;\n .reg .b64 %%rd<20>;\n"
    " ld.param.u64 %%rd1, [in];\n ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x;\n mul.wide.u32 %%rd3, %%r1, 16;\n add.s64 %%rd4, %%rd1, %%rd3;\n"
    " ld.global.u32 %%r2, [%%rd4];\n ld.global.u32 %%r3, [%%rd4+4];\n ld.global.u64 %%rd7, [%%rd4+8];\n"
    " mul.wide.u32 %%rd5, %%r1, 128;\n add.s64 %%rd6, %%rd2, %%rd5;\n"
    " and.b32 %%r4, %%r2, 1;\n setp.eq.u32 %%p1, %%r4, 0;\n @%%p1 bra $DONE;\n"
    " activemask.b32 %%r5;\n"
    " and.b32 %%r6, %%r2, 2;\n setp.ne.u32 %%p2, %%r6, 0;\n"
    " vote.sync.ballot.b32 %%r7, %%p2, %%r5;\n"
    " vote.sync.ballot.b32 %%r8, !%%p2, %%r5;\n"
    " vote.sync.all.pred %%p3, %%p2, %%r5;\n vote.sync.any.pred %%p4, %%p2, %%r5;\n vote.sync.uni.pred %%p5, %%p2, %%r5;\n"
    " vote.sync.all.pred %%p6, !%%p2, %%r5;\n"
    " selp.u32 %%r9, 1, 0, %%p3;\n selp.u32 %%r10, 1, 0, %%p4;\n selp.u32 %%r11, 1, 0, %%p5;\n selp.u32 %%r12, 1, 0, %%p6;\n"
    " shr.u32 %%r13, %%r2, 2;\n and.b32 %%r13, %%r13, 3;\n" /* a small key: duplicates */
    " match.any.sync.b32 %%r14, %%r13, %%r5;\n"
    " match.all.sync.b32 %%r15|%%p7, %%r13, %%r5;\n selp.u32 %%r16, 1, 0, %%p7;\n"
    " and.b64 %%rd8, %%rd7, 0x100000001;\n"
    " match.any.sync.b64 %%r17, %%rd8, %%r5;\n"
    " match.all.sync.b64 %%r18|%%p8, %%rd8, %%r5;\n selp.u32 %%r19, 1, 0, %%p8;\n"
    " redux.sync.add.u32 %%r20, %%r3, %%r5;\n redux.sync.min.u32 %%r21, %%r3, %%r5;\n redux.sync.max.u32 %%r22, %%r3, %%r5;\n"
    " redux.sync.add.s32 %%r23, %%r3, %%r5;\n redux.sync.min.s32 %%r24, %%r3, %%r5;\n redux.sync.max.s32 %%r25, %%r3, %%r5;\n"
    " redux.sync.and.b32 %%r26, %%r3, %%r5;\n redux.sync.or.b32 %%r27, %%r3, %%r5;\n redux.sync.xor.b32 %%r28, %%r3, %%r5;\n"
    " mov.u32 %%r29, %%laneid;\n mov.u32 %%r30, %%lanemask_eq;\n mov.u32 %%r31, %%lanemask_le;\n mov.u32 %%r32, %%lanemask_lt;\n"
    " mov.u32 %%r33, %%lanemask_ge;\n mov.u32 %%r34, %%lanemask_gt;\n"
        "%s"
    " st.global.v4.u32 [%%rd6], {%%r5, %%r7, %%r8, %%r9};\n"
    " st.global.v4.u32 [%%rd6+16], {%%r10, %%r11, %%r12, %%r14};\n"
    " st.global.v4.u32 [%%rd6+32], {%%r15, %%r16, %%r17, %%r18};\n"
    " st.global.v4.u32 [%%rd6+48], {%%r19, %%r20, %%r21, %%r22};\n"
    " st.global.v4.u32 [%%rd6+64], {%%r23, %%r24, %%r25, %%r26};\n"
    " st.global.v4.u32 [%%rd6+80], {%%r27, %%r28, %%r29, %%r36};\n"
    " st.global.v4.u32 [%%rd6+96], {%%r30, %%r31, %%r32, %%r33};\n"
    " st.global.u32 [%%rd6+112], %%r34;\n"
    "$DONE:\n ret;\n}\n";

Test(isa3, vote_match_redux_lanemask_divergent) {
    seed_rng();
    enum { W = 12, N = 32 * W, S = 32 };
    uint32_t in[4 * N], out[S * N];
    for (int w = 0; w < W; w++) {
        uint32_t shape = w == 0 ? 0xFFFFFFFF : w == 1 ? 1u << (rnd() % 32) : w == 2 ? 0x0000FFFF : (uint32_t)rnd() | 1u << (rnd() % 32);
        uint32_t bits = w == 3 ? 0xFFFFFFFF : w == 4 ? 0 : (uint32_t)rnd(); /* all true, all false, mixed */
        int keys = w == 5 ? 1 : 4;
        for (int l = 0; l < 32; l++) {
            int i = 32 * w + l;
            in[4 * i] = (shape >> l & 1) | (bits >> l & 1) << 1 | (uint32_t)(rnd() % keys) << 2;
            in[4 * i + 1] = w == 6 ? 0x80000000u : rnd() % 3 ? (uint32_t)rnd() : (uint32_t)(rnd() % 5) - 2;
            uint64_t v = rnd() & 0x100000001ull;
            if (w == 7) v = 0x100000000ull;
            memcpy(&in[4 * i + 2], &v, 8);
        }
    }
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "sm_90a" : "sm_80";
        char head[128], ptx[8192];
        snprintf(head, sizeof head, ".version 8.3\n.target %s\n.address_size 64\n", tg);
        /* sm_90: elect.sync's leader (the lowest lane of the mask) and its predicate, packed */
        const char *el = t ? " elect.sync %r37|%p9, %r5;\n selp.u32 %r38, 0x100, 0, %p9;\n or.b32 %r36, %r37, %r38;\n" : " mov.u32 %r36, 0;\n";
        snprintf(ptx, sizeof ptx, WARP_PTX, head, el);
        launch(tg, ptx, 1, N, 0, in, sizeof in, out, sizeof out);
        int bad = 0;
        for (int w = 0; w < W; w++) {
            uint32_t mask = 0, ballot = 0, k0 = 0, sum = 0, umin = ~0u, umax = 0, aand = ~0u, aor = 0, axor = 0;
            int32_t smin = INT32_MAX, smax = INT32_MIN;
            for (int l = 0; l < 32; l++) {
                int i = 32 * w + l;
                if (!(in[4 * i] & 1)) continue;
                uint32_t a = in[4 * i + 1];
                mask |= 1u << l;
                ballot |= (in[4 * i] >> 1 & 1) << l;
                sum += a, aand &= a, aor |= a, axor ^= a;
                umin = a < umin ? a : umin, umax = a > umax ? a : umax;
                smin = (int32_t)a < smin ? (int32_t)a : smin, smax = (int32_t)a > smax ? (int32_t)a : smax;
            }
            (void)k0;
            for (int l = 0; l < 32; l++) {
                int i = 32 * w + l;
                uint32_t want[S];
                if (!(in[4 * i] & 1)) {
                    for (int s = 0; s < S; s++) want[s] = POISON32;
                } else {
                    uint32_t key = in[4 * i] >> 2 & 3, any = 0, any64 = 0;
                    uint64_t v64;
                    memcpy(&v64, &in[4 * i + 2], 8);
                    bool all = true, all64 = true;
                    for (int m = 0; m < 32; m++) {
                        if (!(mask >> m & 1)) continue;
                        uint64_t o64;
                        memcpy(&o64, &in[4 * (32 * w + m) + 2], 8);
                        if ((in[4 * (32 * w + m)] >> 2 & 3) == key) any |= 1u << m;
                        else all = false;
                        if (o64 == v64) any64 |= 1u << m;
                        else all64 = false;
                    }
                    uint32_t w0[S] = {mask, ballot, mask & ~ballot, ballot == mask, ballot != 0, ballot == mask || ballot == 0, ballot == 0, any,
                                      all ? mask : 0, all, any64, all64 ? mask : 0, all64, sum, umin, umax, sum, (uint32_t)smin, (uint32_t)smax,
                                      aand, aor, axor, (uint32_t)l, 0, 1u << l, (uint32_t)((2ull << l) - 1), (1u << l) - 1,
                                      ~((1u << l) - 1), (uint32_t)~((2ull << l) - 1), POISON32, POISON32, POISON32};
                    memcpy(want, w0, sizeof want);
                    if (t) want[23] = (uint32_t)__builtin_ctz(mask) | (__builtin_ctz(mask) == l ? 0x100 : 0);
                    (void)0;
                }
                for (int s = 0; s < S; s++)
                    if (out[S * i + s] != want[s] && bad++ < 20)
                        cr_log_error("%s lane %d of warp %d slot %d (mask %#x): got %#x want %#x", tg, l, w, s, mask, out[S * i + s], want[s]);
            }
        }
        cr_expect_eq(bad, 0, "warp-level on %s: %d slots differ", tg, bad);
    }
}

/* ---------------------------------------------------------------------------------------------
 * atom / red, one location per lane and operation: each lane writes its location's initial value,
 * runs the operation with its b (and c), and the test compares the value returned (atom) and the
 * memory after with the ISA's definition: inc: old >= b ? 0 : old + 1; dec: old == 0 || old > b ? b :
 * old - 1; cas: old == b ? c : old; the float adds round once to nearest even, f16/bf16 keep subnormals
 * (.noftz), f32 in global memory flushes subnormal inputs and results to a signed zero (the ISA's
 * atom page; shared memory keeps them), a NaN is the canonical one.  Spaces: .global, .shared and a
 * generic address of shared memory and of global memory; memory orders and scopes are sprinkled over
 * the operations (every atomic is sequentially consistent here, so they change no value). */

typedef struct {
    const char *op; /* the words after the space: order/scope are added in front */
    int bits;       /* 16, 32, 64 */
    char kind;      /* register kind: b (bit/integer), f (.f32/.f64) */
    int nsrc;
    bool red;
} AOp;

static const AOp AOPS[] = {
    {"add.u32", 32, 'b', 1, false},         {"add.s32", 32, 'b', 1, false},        {"inc.u32", 32, 'b', 1, false},
    {"dec.u32", 32, 'b', 1, false},         {"min.u32", 32, 'b', 1, false},        {"max.u32", 32, 'b', 1, false},
    {"min.s32", 32, 'b', 1, false},         {"max.s32", 32, 'b', 1, false},        {"and.b32", 32, 'b', 1, false},
    {"or.b32", 32, 'b', 1, false},          {"xor.b32", 32, 'b', 1, false},        {"exch.b32", 32, 'b', 1, false},
    {"cas.b32", 32, 'b', 2, false},         {"add.f32", 32, 'f', 1, false},        {"add.noftz.f16x2", 32, 'b', 1, false},
    {"add.noftz.bf16x2", 32, 'b', 1, false}, {"add.u64", 64, 'b', 1, false},       {"min.u64", 64, 'b', 1, false},
    {"max.u64", 64, 'b', 1, false},         {"min.s64", 64, 'b', 1, false},        {"max.s64", 64, 'b', 1, false},
    {"and.b64", 64, 'b', 1, false},         {"or.b64", 64, 'b', 1, false},         {"xor.b64", 64, 'b', 1, false},
    {"exch.b64", 64, 'b', 1, false},        {"cas.b64", 64, 'b', 2, false},        {"add.f64", 64, 'f', 1, false},
    {"cas.b16", 16, 'b', 2, false},         {"add.noftz.f16", 16, 'b', 1, false},  {"add.noftz.bf16", 16, 'b', 1, false},
    {"inc.u32", 32, 'b', 1, true},          {"dec.u32", 32, 'b', 1, true},         {"add.f32", 32, 'f', 1, true},
    {"min.s64", 64, 'b', 1, true},          {"xor.b64", 64, 'b', 1, true},         {"add.noftz.bf16x2", 32, 'b', 1, true},
    {"add.noftz.f16", 16, 'b', 1, true},    {"add.f64", 64, 'f', 1, true},         {"max.u32", 32, 'b', 1, true},
};
enum { NAOP = sizeof AOPS / sizeof AOPS[0] };
static const char *ORDERS[] = {"", "relaxed.gpu.", "acquire.cta.", "release.sys.", "acq_rel.gpu.", "relaxed.cta.", "", "sys."};

static double h16(uint32_t h) { return h2d((uint16_t)h); }
static uint32_t add_half(uint32_t a, uint32_t b, bool bf) {
    double s = bf ? b2d((uint16_t)a) + b2d((uint16_t)b) : h16(a) + h16(b); /* exact in double */
    if (isnan(s)) return 0x7FFF;
    if (bf) return enc_b(overflow(round_fmt(s, 7, -126, 0), BMAX, 0));
    return enc_h(s);
}
static uint32_t flush32(uint32_t u) { return (u & 0x7F800000) == 0 ? u & 0x80000000u : u; }

static uint64_t ref_atom(const AOp *o, uint64_t old, uint64_t b, uint64_t c, bool global_f32) {
    const char *n = o->op;
    uint64_t m = o->bits == 64 ? ~0ull : (1ull << o->bits) - 1;
    old &= m, b &= m, c &= m;
    if (!strncmp(n, "add.f32", 7)) {
        uint32_t x = (uint32_t)old, y = (uint32_t)b;
        if (global_f32) x = flush32(x), y = flush32(y);
        float r = bitsf(x) + bitsf(y);
        uint32_t u = isnan(r) ? 0x7FFFFFFF : fbits(r);
        return global_f32 ? flush32(u) : u;
    }
    if (!strcmp(n, "add.f64")) {
        double r = bitsd(old) + bitsd(b);
        return isnan(r) ? 0x7FFFFFFFFFFFFFFFull : dbits(r);
    }
    if (!strcmp(n, "add.noftz.f16") || !strcmp(n, "add.noftz.bf16")) return add_half((uint32_t)old, (uint32_t)b, n[10] == 'b');
    if (strstr(n, "16x2")) {
        bool bf = strstr(n, "bf16") != NULL;
        return add_half((uint32_t)old & 0xFFFF, (uint32_t)b & 0xFFFF, bf) | (uint64_t)add_half((uint32_t)old >> 16, (uint32_t)b >> 16, bf) << 16;
    }
    int64_t so = o->bits == 64 ? (int64_t)old : (int64_t)(int32_t)old, sb = o->bits == 64 ? (int64_t)b : (int64_t)(int32_t)b;
    uint64_t r;
    if (!strncmp(n, "add", 3)) r = old + b;
    else if (!strcmp(n, "inc.u32")) r = old >= b ? 0 : old + 1;
    else if (!strcmp(n, "dec.u32")) r = old == 0 || old > b ? b : old - 1;
    else if (!strncmp(n, "min.u", 5)) r = old < b ? old : b;
    else if (!strncmp(n, "max.u", 5)) r = old > b ? old : b;
    else if (!strncmp(n, "min.s", 5)) r = (uint64_t)(so < sb ? so : sb);
    else if (!strncmp(n, "max.s", 5)) r = (uint64_t)(so > sb ? so : sb);
    else if (!strncmp(n, "and", 3)) r = old & b;
    else if (!strncmp(n, "or", 2)) r = old | b;
    else if (!strncmp(n, "xor", 3)) r = old ^ b;
    else if (!strncmp(n, "exch", 4)) r = b;
    else r = old == b ? c : old; /* cas */
    return r & m;
}

static uint64_t rnd_operand(const AOp *o) {
    const char *n = o->op;
    if (!strcmp(n, "add.f32")) return rnd_f32();
    if (!strcmp(n, "add.f64")) return rnd_f64();
    if (!strcmp(n, "add.noftz.f16")) return rnd_half(false);
    if (!strcmp(n, "add.noftz.bf16")) return rnd_half(true);
    if (strstr(n, "bf16x2")) return rnd_half(true) | (uint32_t)rnd_half(true) << 16;
    if (strstr(n, "f16x2")) return rnd_half(false) | (uint32_t)rnd_half(false) << 16;
    uint64_t v = rnd() % 3 ? rnd() : PICK(EI);
    if ((!strncmp(n, "inc", 3) || !strncmp(n, "dec", 3)) && rnd() % 2) v = rnd() % 6; /* near the bound and zero */
    return v;
}

/* bf16 adds: .target sm_90 (ptxas) */
static bool aop_on(const AOp *o, const char *target) { return strcmp(target, "sm_80") || !strstr(o->op, "bf16"); }

static void atom_kernel(char *ptx, size_t cap, const char *target, int space) {
    int len = snprintf(ptx, cap,
                       ".version 8.3\n.target %s\n.address_size 64\n.shared .align 8 .b8 sm[%d];\n"
                       ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
                       " .reg .b16 %%h<8>;\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<16>;\n .reg .f32 %%f<8>;\n .reg .f64 %%fd<8>;\n"
                       " ld.param.u64 %%rd1, [in];\n ld.param.u64 %%rd2, [out];\n mov.u32 %%r1, %%tid.x;\n"
                       " mul.wide.u32 %%rd3, %%r1, %d;\n add.s64 %%rd4, %%rd1, %%rd3;\n" /* the lane's operands */
                       " mul.wide.u32 %%rd3, %%r1, %d;\n add.s64 %%rd5, %%rd2, %%rd3;\n" /* the lane's results */
                       " mul.wide.u32 %%rd3, %%r1, %d;\n mov.u64 %%rd6, sm;\n add.s64 %%rd6, %%rd6, %%rd3;\n",
                       target, 64 * 8 * NAOP, 24 * NAOP, 16 * NAOP, 8 * NAOP);
    /* rd7 + stride * j: op j's location: global: its result slot 16j + 8; shared: sm + 8j */
    if (space == 0 || space == 3) len += snprintf(ptx + len, cap - len, " add.s64 %%rd7, %%rd5, 8;\n");
    else if (space == 1) len += snprintf(ptx + len, cap - len, " mov.u64 %%rd7, %%rd6;\n");
    else len += snprintf(ptx + len, cap - len, " cvta.shared.u64 %%rd7, %%rd6;\n");
    int stride = space == 0 || space == 3 ? 16 : 8;
    const char *ms = space == 1 ? ".shared" : space == 0 ? ".global" : "";
    for (int j = 0; j < NAOP; j++) {
        const AOp *o = &AOPS[j];
        if (!aop_on(o, target)) continue;
        bool f = o->kind == 'f';
        const char *R[3][3] = {{"%h2", "%h3", "%h4"}, {"%r2", "%r3", "%r4"}, {"%rd8", "%rd9", "%rd10"}};
        int w = o->bits == 16 ? 0 : o->bits == 32 ? 1 : 2;
        const char *d = f ? (w == 1 ? "%f5" : "%fd5") : w == 0 ? "%h5" : w == 1 ? "%r5" : "%rd11";
        const char *b = f ? (w == 1 ? "%f3" : "%fd3") : R[w][1];
        const char *ord = ORDERS[(j * 7 + space) % 8];
        if (o->red && strstr(ord, "acq")) ord = "release.gpu.";
        len += snprintf(ptx + len, cap - len,
                        " ld.global.u64 %%rd8, [%%rd4+%d];\n ld.global.u64 %%rd9, [%%rd4+%d];\n ld.global.u64 %%rd10, [%%rd4+%d];\n"
                        " cvt.u32.u64 %%r2, %%rd8;\n cvt.u32.u64 %%r3, %%rd9;\n cvt.u32.u64 %%r4, %%rd10;\n"
                        " cvt.u16.u64 %%h2, %%rd8;\n cvt.u16.u64 %%h3, %%rd9;\n cvt.u16.u64 %%h4, %%rd10;\n"
                        " mov.b32 %%f3, %%r3;\n mov.b64 %%fd3, %%rd9;\n"
                        " st%s.b%d [%%rd7+%d], %s;\n",
                        24 * j, 24 * j + 8, 24 * j + 16, ms, o->bits, stride * j, R[w][0]);
        char ord2[32];
        snprintf(ord2, sizeof ord2, "%s%s", *ord ? "." : "", ord);
        if (*ord) ord2[strlen(ord2) - 1] = 0; /* no trailing dot */
        if (o->red)
            len += snprintf(ptx + len, cap - len, " red%s%s.%s [%%rd7+%d], %s;\n", ord2, ms, o->op, stride * j, b);
        else {
            len += snprintf(ptx + len, cap - len, " atom%s%s.%s %s, [%%rd7+%d], %s", ord2, ms, o->op, d, stride * j, b);
            len += snprintf(ptx + len, cap - len, o->nsrc == 2 ? ", %s;\n" : ";\n", R[w][2]);
            if (f) len += snprintf(ptx + len, cap - len, " mov.b%d %s, %s;\n", o->bits, w == 1 ? "%r5" : "%rd11", d);
            len += snprintf(ptx + len, cap - len, " st.global.b%d [%%rd5+%d], %s;\n", o->bits, 16 * j, w == 0 ? "%h5" : w == 1 ? "%r5" : "%rd11");
        }
    }
    for (int j = 0; j < NAOP; j++) {
        const AOp *o = &AOPS[j];
        if (!aop_on(o, target)) continue;
        const char *x = o->bits == 16 ? "%h6" : o->bits == 32 ? "%r6" : "%rd12";
        len += snprintf(ptx + len, cap - len, " ld%s.b%d %s, [%%rd7+%d];\n st.global.b%d [%%rd5+%d], %s;\n", ms, o->bits, x, stride * j, o->bits,
                        16 * j + 8, x);
    }
    snprintf(ptx + len, cap - len, " ret;\n}\n");
}

Test(isa3, atom_red_every_operation_and_space) {
    seed_rng();
    enum { N = 64 };
    uint64_t *in = malloc(sizeof *in * 3 * NAOP * N), *out = malloc(sizeof *out * 2 * NAOP * N);
    char *ptx = malloc(1 << 17);
    for (int t = 0; t < 2; t++)
        for (int space = 0; space < 4; space++) {
            const char *tg = t ? "sm_90a" : "sm_80";
            if (t && space != 2) continue; /* sm_90a: the generic form only (the code is shared) */
            for (int i = 0; i < N; i++)
                for (int j = 0; j < NAOP; j++) {
                    uint64_t *x = in + 3 * (NAOP * i + j);
                    x[0] = rnd_operand(&AOPS[j]), x[1] = rnd_operand(&AOPS[j]), x[2] = rnd_operand(&AOPS[j]);
                    if (AOPS[j].nsrc == 2 && rnd() % 2) x[1] = x[0]; /* cas: equal half the time */
                }
            atom_kernel(ptx, 1 << 17, tg, space);
            launch(tg, ptx, 1, N, 0, in, sizeof *in * 3 * NAOP * N, out, sizeof *out * 2 * NAOP * N);
            int bad = 0;
            for (int i = 0; i < N; i++)
                for (int j = 0; j < NAOP; j++) {
                    const AOp *o = &AOPS[j];
                    if (!aop_on(o, tg)) continue;
                    const uint64_t *x = in + 3 * (NAOP * i + j);
                    uint64_t m = o->bits == 64 ? ~0ull : (1ull << o->bits) - 1, poison = 0xEEEEEEEEEEEEEEEEull;
                    bool gf = space == 0 || space == 3;
                    uint64_t want_ret = o->red ? poison : x[0] & m, want_mem = ref_atom(o, x[0], x[1], x[2], gf);
                    uint64_t got_ret = out[2 * (NAOP * i + j)], got_mem = out[2 * (NAOP * i + j) + 1];
                    bool ok = (o->red ? got_ret == poison : (got_ret & m) == want_ret) && (got_mem & m) == want_mem;
                    if (!ok && bad++ < 20)
                        cr_log_error("%s space %d: %s %s old=%#llx b=%#llx c=%#llx: returned %#llx (want %#llx), memory %#llx (want %#llx)", tg, space,
                                     o->red ? "red" : "atom", o->op, (unsigned long long)x[0], (unsigned long long)x[1], (unsigned long long)x[2],
                                     (unsigned long long)(got_ret & m), (unsigned long long)want_ret, (unsigned long long)(got_mem & m),
                                     (unsigned long long)want_mem);
                }
            cr_expect_eq(bad, 0, "atom/red on %s, space %d: %d differ", tg, space, bad);
        }
    free(in);
    free(out);
    free(ptx);
}

/* ---------------------------------------------------------------------------------------------
 * Contended atomics (2 CTAs x 256 threads): atom.add 1 returns each of 0..511 once; atom.inc with
 * bound 99 wraps (returns 0..99 five times, 0..11 a sixth, ends at 12); exch hands every value on
 * once; a cas loop on shared memory counts every thread; bar.red popc/and/or with thread counts on
 * named barriers, half the CTA on each; bar.arrive by producers, bar.sync by consumers. */

static const char *CONT_PTX =
    ".version 8.3\n.target %s\n.address_size 64\n.shared .align 4 .b32 cnt;\n.shared .align 4 .b32 buf[128];\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
    " .reg .pred %%p<8>;\n .reg .b32 %%r<40>;\n .reg .b64 %%rd<20>;\n"
    " ld.param.u64 %%rd1, [in];\n ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x;\n mov.u32 %%r2, %%ctaid.x;\n mad.lo.u32 %%r3, %%r2, 256, %%r1;\n"
    " mul.wide.u32 %%rd3, %%r3, 48;\n add.s64 %%rd4, %%rd2, %%rd3;\n" /* 12 words a thread */
    " setp.ne.u32 %%p1, %%r1, 0;\n @%%p1 bra $A;\n st.shared.u32 [cnt], 0;\n$A:\n bar.sync 0;\n"
    " atom.global.add.u32 %%r4, [%%rd1], 1;\n"
    " atom.global.inc.u32 %%r5, [%%rd1+4], 99;\n"
    " atom.global.exch.b32 %%r6, [%%rd1+8], %%r3;\n"
    "$CAS:\n ld.volatile.shared.u32 %%r7, [cnt];\n add.u32 %%r8, %%r7, 1;\n atom.shared.cas.b32 %%r9, [cnt], %%r7, %%r8;\n"
    " setp.ne.u32 %%p2, %%r9, %%r7;\n @%%p2 bra $CAS;\n"
    /* bar.red: warps 0-3 on barrier 2, warps 4-7 on barrier 3, 128 threads each; the predicate: bit r1 of a word */
    " shr.u32 %%r10, %%r1, 5;\n and.b32 %%r11, %%r1, 31;\n ld.global.u32 %%r12, [%%rd1+16];\n shr.b32 %%r13, %%r12, %%r11;\n"
    " and.b32 %%r13, %%r13, 1;\n setp.ne.u32 %%p3, %%r13, 0;\n"
    " setp.lt.u32 %%p4, %%r10, 4;\n @!%%p4 bra $HI;\n"
    " bar.red.popc.u32 %%r14, 2, 128, %%p3;\n bar.red.and.pred %%p5, 2, 128, %%p3;\n barrier.red.or.pred %%p6, 2, 128, !%%p3;\n bra $J;\n"
    "$HI:\n bar.red.popc.u32 %%r14, 3, 128, %%p3;\n bar.red.and.pred %%p5, 3, 128, %%p3;\n barrier.red.or.pred %%p6, 3, 128, !%%p3;\n"
    "$J:\n selp.u32 %%r15, 1, 0, %%p5;\n selp.u32 %%r16, 1, 0, %%p6;\n"
    " bar.red.popc.u32 %%r17, 1, %%p3;\n" /* the whole CTA */
    /* producers (warps 0-3) write buf and arrive on barrier 4; consumers (4-7) sync on it and read */
    " @!%%p4 bra $CONS;\n shl.b32 %%r18, %%r1, 2;\n mov.u32 %%r19, buf;\n add.u32 %%r19, %%r19, %%r18;\n mul.lo.u32 %%r20, %%r3, 7;\n"
    " st.shared.u32 [%%r19], %%r20;\n bar.arrive 4, 256;\n mov.u32 %%r21, 0;\n bra $END;\n"
    "$CONS:\n bar.sync 4, 256;\n sub.u32 %%r18, %%r1, 128;\n shl.b32 %%r18, %%r18, 2;\n mov.u32 %%r19, buf;\n add.u32 %%r19, %%r19, %%r18;\n"
    " ld.shared.u32 %%r21, [%%r19];\n"
    "$END:\n bar.sync 0;\n ld.shared.u32 %%r22, [cnt];\n"
    " st.global.v4.u32 [%%rd4], {%%r4, %%r5, %%r6, %%r22};\n st.global.v4.u32 [%%rd4+16], {%%r14, %%r15, %%r16, %%r17};\n"
    " st.global.u32 [%%rd4+32], %%r21;\n ret;\n}\n";

static int cmp_u32(const void *a, const void *b) { uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b; return x < y ? -1 : x > y; }

Test(isa3, contended_atomics_and_barrier_reductions) {
    seed_rng();
    enum { N = 512 };
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "sm_90a" : "sm_80";
        char ptx[8192];
        snprintf(ptx, sizeof ptx, CONT_PTX, tg);
        uint32_t in[8] = {0, 0, 0xABCDEF, 0, (uint32_t)rnd(), 0, 0, 0}, out[12 * N]; /* in: the atomics' memory and the predicates */
        launch(tg, ptx, 2, 256, 0, in, sizeof in, out, sizeof out);
        uint32_t adds[N], incs[N], ex[N];
        for (int i = 0; i < N; i++) adds[i] = out[12 * i], incs[i] = out[12 * i + 1], ex[i] = out[12 * i + 2];
        qsort(adds, N, 4, cmp_u32);
        for (int i = 0; i < N; i++) cr_expect_eq(adds[i], (uint32_t)i, "%s: atom.add returned %u at rank %d", tg, adds[i], i);
        int hist[100] = {0}, badinc = 0;
        for (int i = 0; i < N; i++) {
            if (incs[i] > 99) badinc++;
            else hist[incs[i]]++;
        }
        for (int v = 0; v < 100; v++) badinc += hist[v] != (v < 12 ? 6 : 5);
        cr_expect_eq(badinc, 0, "%s: atom.inc's returns are not 0..99 five times and 0..11 once more", tg);
        /* exch: the first value once, then ids, each at most once */
        qsort(ex, N, 4, cmp_u32);
        int inits = 0, dup = 0;
        for (int i = 0; i < N; i++) {
            if (ex[i] == 0xABCDEF) inits++;
            else if (ex[i] >= N || (i && ex[i] == ex[i - 1])) dup++;
        }
        cr_expect(inits == 1 && dup == 0, "%s: atom.exch returned the first value %d times, %d ids twice or out of range", tg, inits, dup);
        for (int i = 0; i < N; i++) {
            int tid = i % 256, warp = tid / 32;
            uint32_t word = in[4], half = 0;
            int pc = 0;
            bool all = true, anyn = false;
            for (int u = 0; u < 256; u++) {
                bool p = word >> (u % 32) & 1;
                if (u / 128 == warp / 4) pc += p, all = all && p, anyn = anyn || !p;
                half += p;
            }
            cr_expect_eq(out[12 * i + 3], 256u, "%s: the cas loop counted %u", tg, out[12 * i + 3]);
            cr_expect_eq(out[12 * i + 4], (uint32_t)pc, "%s thread %d: bar.red.popc on 128 threads gave %u, want %d", tg, i, out[12 * i + 4], pc);
            cr_expect_eq(out[12 * i + 5], (uint32_t)all, "%s thread %d: bar.red.and", tg, i);
            cr_expect_eq(out[12 * i + 6], (uint32_t)anyn, "%s thread %d: barrier.red.or of !p", tg, i);
            cr_expect_eq(out[12 * i + 8], warp < 4 ? 0u : (uint32_t)(i - 128) * 7, "%s thread %d: the consumer read %u", tg, i, out[12 * i + 8]);
            cr_expect_eq(out[12 * i + 7], half, "%s thread %d: bar.red.popc on the CTA gave %u, want %u", tg, i, out[12 * i + 7], half);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * ld/st/ldu forms (sm_90a): sign and zero extension of narrow loads into wider registers (.s8/.u8 into
 * 32 and 64 bits, .s16/.u16, .s32/.u32 into 64), vectors of bytes, initialized .global/.const arrays
 * with generic(var) and var+offset address initializers, a kernel's byval parameter read with ld.param
 * and through its generic address (cvta.param, isspacep.param), .local arrays through cvta.local and back
 * (isspacep.local/.global), .volatile/.relaxed/.acquire/.release with scopes on shared memory (.shared::cta,
 * .shared::cluster of the CTA's own memory), createpolicy + .L2::cache_hint, .nc, .L1::/.L2:: hints, the
 * cache operators of ld and st, prefetch/prefetchu: every value against the ISA's rules from random
 * initializers. */
static const char *MEM_PTX =
    ".version 8.3\n.target sm_90a\n.address_size 64\n"
    ".global .align 4 .b32 gtab[5] = {%d, %d, %d, %d, %d};\n"
    ".const .align 16 .b64 ctab[3] = {%llu, %llu, %llu};\n"
    ".global .align 8 .u64 gptr = generic(gtab);\n"
    ".global .align 8 .u64 gptr2[2] = {generic(gtab)+8, gtab};\n"
    ".global .align 1 .b8 bytes[8] = {%u, %u, %u, %u, %u, %u, %u, %u};\n"
    ".global .align 4 .f32 gf[2] = {1.5, 0fC0000000};\n"
    ".global .align 2 .b16 gh[2] = {%u, %u};\n"
    ".visible .entry k(.param .u64 in, .param .u64 out, .param .align 8 .b8 st[16])\n"
    "{\n"
    " .reg .pred %%p<8>; .reg .b16 %%h<20>; .reg .b32 %%r<60>; .reg .b64 %%rd<60>; .reg .f32 %%f<20>; .reg .f64 %%fd<10>;\n"
    " .local .align 16 .b8 loc[64];\n"
    " .shared .align 16 .b8 sh[256];\n"
    " ld.param.u64 %%rd1, [in]; ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x; setp.ne.u32 %%p1, %%r1, 0; @%%p1 bra $END;\n"
    " ld.global.s8 %%r2, [bytes];\n"
    " ld.global.u8 %%r3, [bytes];\n"
    " ld.global.s8 %%rd3, [bytes+2];\n"
    " ld.global.s16 %%rd4, [gh+2];\n"
    " ld.global.u16 %%rd5, [gh+2];\n"
    " ld.global.s32 %%rd6, [gtab+4];\n"
    " ld.global.u32 %%rd7, [gtab+4];\n"
    " ld.global.v4.s8 {%%r4, %%r5, %%r6, %%r7}, [bytes];\n"
    " ld.global.v2.u8 {%%h1, %%h2}, [bytes+6];\n"
    " ld.global.b8 %%h3, [bytes+7];\n"
    " ld.const.u64 %%rd8, [ctab+16];\n"
    " ld.const.v2.u64 {%%rd9, %%rd10}, [ctab];\n"
    " ld.global.u64 %%rd11, [gptr];\n"
    " ld.u32 %%r8, [%%rd11+8];\n"
    " ld.global.u64 %%rd12, [gptr2];\n"
    " ld.u32 %%r9, [%%rd12];\n"
    " ld.global.u64 %%rd13, [gptr2+8];\n"
    " ld.global.u32 %%r10, [%%rd13+16];\n"
    " ld.param.v2.u32 {%%r11, %%r12}, [st+8];\n"
    " ld.param.u8 %%r13, [st+3];\n"
    " mov.u64 %%rd14, st;\n"
    " cvta.param.u64 %%rd15, %%rd14;\n"
    " ld.u32 %%r14, [%%rd15+4];\n"
    " isspacep.param %%p2, %%rd15;\n"
    " selp.u32 %%r15, 1, 0, %%p2;\n"
    " mov.u64 %%rd16, loc;\n"
    " st.local.v4.u32 [%%rd16], {%%r2, %%r3, %%r4, %%r5};\n"
    " st.local.u8 [%%rd16+16], %%r2;\n"
    " st.local.b16 [%%rd16+18], %%h3;\n"
    " cvta.local.u64 %%rd17, %%rd16;\n"
    " ld.v2.u32 {%%r16, %%r17}, [%%rd17+8];\n"
    " ld.s8 %%r18, [%%rd17+16];\n"
    " ld.s16 %%r19, [%%rd17+18];\n"
    " isspacep.local %%p3, %%rd17; selp.u32 %%r20, 1, 0, %%p3;\n"
    " isspacep.global %%p4, %%rd17; selp.u32 %%r21, 1, 0, %%p4;\n"
    " cvta.to.local.u64 %%rd18, %%rd17;\n"
    " setp.eq.u64 %%p5, %%rd18, %%rd16; selp.u32 %%r22, 1, 0, %%p5;\n"
    " mov.u64 %%rd19, sh;\n"
    " st.shared.v2.f32 [%%rd19], {%%f1, %%f2};\n"
    " ld.global.v2.f32 {%%f1, %%f2}, [gf];\n"
    " st.volatile.shared.v2.f32 [%%rd19+8], {%%f1, %%f2};\n"
    " ld.relaxed.cta.shared.f32 %%f3, [%%rd19+12];\n"
    " st.release.cta.shared::cta.u32 [%%rd19+16], %%r2;\n"
    " ld.acquire.cluster.shared::cta.u32 %%r23, [%%rd19+16];\n"
    " cvta.shared.u64 %%rd20, %%rd19;\n"
    " ld.acquire.gpu.u32 %%r24, [%%rd20+16];\n"
    " isspacep.shared %%p6, %%rd20; selp.u32 %%r25, 1, 0, %%p6;\n"
    " isspacep.shared::cluster %%p7, %%rd20; selp.u32 %%r26, 1, 0, %%p7;\n"
    " cvta.shared::cluster.u64 %%rd21, %%rd19;\n"
    " ld.shared::cluster.u32 %%r27, [%%rd19+16];\n"
    " createpolicy.fractional.L2::evict_last.b64 %%rd22, 1.0;\n"
    " ld.global.L2::cache_hint.u32 %%r28, [gtab+8], %%rd22;\n"
    " ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%%r29, %%r30, %%r31, %%r32}, [gtab];\n"
    " ld.global.L1::evict_last.u32 %%r33, [gtab+16];\n"
    " ldu.global.v2.u32 {%%r34, %%r35}, [gtab+8];\n"
    " st.global.L1::no_allocate.u32 [%%rd2+200], %%r2;\n"
    " st.global.L2::cache_hint.u32 [%%rd2+204], %%r3, %%rd22;\n"
    " ld.global.lu.u32 %%r36, [gtab]; ld.global.cv.u32 %%r37, [gtab+4]; ld.global.cs.u32 %%r38, [gtab+8]; ld.global.cg.u32 %%r39, [gtab+12];\n"
    " st.global.wt.u32 [%%rd2+208], %%r36; st.global.cs.u32 [%%rd2+212], %%r37; st.global.wb.u32 [%%rd2+216], %%r38;\n"
    " st.global.cg.u32 [%%rd2+220], %%r39;\n"
    " prefetch.global.L2::evict_last [gtab]; prefetch.local.L1 [%%rd16]; prefetchu.L1 [%%rd17];\n"
    " mov.b32 %%r40, %%f3;\n"
    " st.global.v4.u32 [%%rd2], {%%r2, %%r3, %%r4, %%r5};\n"
    " st.global.v4.u32 [%%rd2+16], {%%r6, %%r7, %%r8, %%r9};\n"
    " st.global.v4.u32 [%%rd2+32], {%%r10, %%r11, %%r12, %%r13};\n"
    " st.global.v4.u32 [%%rd2+48], {%%r14, %%r15, %%r16, %%r17};\n"
    " st.global.v4.u32 [%%rd2+64], {%%r18, %%r19, %%r20, %%r21};\n"
    " st.global.v4.u32 [%%rd2+80], {%%r22, %%r23, %%r24, %%r25};\n"
    " st.global.v4.u32 [%%rd2+96], {%%r26, %%r27, %%r28, %%r29};\n"
    " st.global.v4.u32 [%%rd2+112], {%%r30, %%r31, %%r32, %%r33};\n"
    " st.global.v4.u32 [%%rd2+128], {%%r34, %%r35, %%r40, %%r40};\n"
    " st.global.v2.u64 [%%rd2+144], {%%rd3, %%rd4};\n"
    " st.global.v2.u64 [%%rd2+160], {%%rd5, %%rd6};\n"
    " st.global.v2.u64 [%%rd2+176], {%%rd7, %%rd8};\n"
    " st.global.v2.u64 [%%rd2+224], {%%rd9, %%rd10};\n"
    " st.global.v4.u16 [%%rd2+240], {%%h1, %%h2, %%h3, %%h3};\n"
    "$END:\n"
    " ret;\n"
    "}\n";

Test(isa3, ld_st_forms_extension_spaces_and_qualifiers) {
    seed_rng();
    int32_t g[5];
    uint8_t b[8];
    uint16_t gh[2];
    unsigned long long ct[3];
    for (int i = 0; i < 5; i++) g[i] = (int32_t)rnd();
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)rnd();
    b[0] |= 0x80, b[1] &= 0x7F; /* one negative, one positive byte at least */
    for (int i = 0; i < 2; i++) gh[i] = (uint16_t)rnd();
    gh[1] |= 0x8000;
    for (int i = 0; i < 3; i++) ct[i] = rnd();
    char ptx[8192];
    snprintf(ptx, sizeof ptx, MEM_PTX, g[0], g[1], g[2], g[3], g[4], ct[0], ct[1], ct[2], b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], gh[0], gh[1]);
    static const uint32_t third[4] = {0x11223344, 0x55667788, 0x99AABBCC, 0xDDEEFF00}; /* launch's third parameter */
    uint8_t in[16] = {0}, out[256];
    launch("sm_90a", ptx, 1, 64, 0, in, sizeof in, out, sizeof out);
    int32_t s0 = (int8_t)b[0], s1 = (int8_t)b[1];
    uint32_t w[36] = {(uint32_t)s0, b[0], (uint32_t)s0, (uint32_t)s1, (uint32_t)(int8_t)b[2], (uint32_t)(int8_t)b[3], (uint32_t)g[2], (uint32_t)g[2],
                      (uint32_t)g[4], third[2], third[3], third[0] >> 24, third[1], 1, (uint32_t)s0, (uint32_t)s1,
                      (uint32_t)s0, b[7], 1, 0, 1, (uint32_t)s0, (uint32_t)s0, 1,
                      1, (uint32_t)s0, (uint32_t)g[2], (uint32_t)g[0], (uint32_t)g[1], (uint32_t)g[2], (uint32_t)g[3], (uint32_t)g[4],
                      (uint32_t)g[2], (uint32_t)g[3], 0xC0000000u, 0xC0000000u};
    uint64_t q[6] = {(uint64_t)(int64_t)(int8_t)b[2], (uint64_t)(int64_t)(int16_t)gh[1], gh[1], (uint64_t)(int64_t)g[1], (uint32_t)g[1], ct[2]};
    uint32_t st[6] = {(uint32_t)s0, b[0], (uint32_t)g[0], (uint32_t)g[1], (uint32_t)g[2], (uint32_t)g[3]};
    uint64_t q2[2] = {ct[0], ct[1]};
    uint16_t h[4] = {b[6], b[7], b[7], b[7]};
    uint8_t want[256];
    memset(want, 0xEE, sizeof want);
    memcpy(want, w, sizeof w);
    memcpy(want + 144, q, sizeof q);
    memcpy(want + 200, st, sizeof st);
    memcpy(want + 224, q2, sizeof q2);
    memcpy(want + 240, h, sizeof h);
    for (int i = 0; i < 256; i += 4) {
        uint32_t x, y;
        memcpy(&x, out + i, 4);
        memcpy(&y, want + i, 4);
        cr_expect_eq(x, y, "byte %d of the output: %#x, want %#x", i, x, y);
    }
}


/* ---------------------------------------------------------------------------------------------
 * Calls: a byval struct argument (.param .align 4 .b8 s[12], read with ld.param.v2) and a struct return
 * value (.param .align 8 .b8 rv[16], st.param.v2 and .u64), recursion (fib, call and call.uni), an
 * indirect call through a function pointer chosen per lane (selp) with a .callprototype, brx.idx
 * through .branchtargets, a .local array indexed by data, alloca. */
static const char *CALL_PTX =
    ".version 8.3\n.target %s\n.address_size 64\n"
    ".func (.param .align 8 .b8 rv[16]) mk(.param .align 4 .b8 s[12], .param .b32 x)\n"
    "{\n"
    " .reg .b32 %%r<10>; .reg .b64 %%rd<4>;\n"
    " ld.param.v2.u32 {%%r1, %%r2}, [s];\n"
    " ld.param.u32 %%r3, [s+8];\n"
    " ld.param.u32 %%r4, [x];\n"
    " add.u32 %%r5, %%r1, %%r4; mul.lo.u32 %%r6, %%r2, %%r4; sub.u32 %%r7, %%r3, %%r4;\n"
    " st.param.v2.u32 [rv], {%%r5, %%r6};\n"
    " cvt.u64.u32 %%rd1, %%r7; shl.b64 %%rd1, %%rd1, 32; cvt.u64.u32 %%rd2, %%r3; or.b64 %%rd1, %%rd1, %%rd2;\n"
    " st.param.u64 [rv+8], %%rd1;\n"
    " ret;\n"
    "}\n"
    ".func (.param .b32 r) fib(.param .b32 n)\n"
    "{\n"
    " .reg .pred %%p1; .reg .b32 %%r<8>;\n"
    " ld.param.u32 %%r1, [n];\n"
    " setp.lt.u32 %%p1, %%r1, 2;\n"
    " @%%p1 bra $BASE;\n"
    " sub.u32 %%r2, %%r1, 1; sub.u32 %%r3, %%r1, 2;\n"
    " { .param .b32 a; .param .b32 ra; st.param.b32 [a], %%r2; call.uni (ra), fib, (a); ld.param.b32 %%r4, [ra]; }\n"
    " { .param .b32 a; .param .b32 ra; st.param.b32 [a], %%r3; call (ra), fib, (a); ld.param.b32 %%r5, [ra]; }\n"
    " add.u32 %%r6, %%r4, %%r5;\n"
    " st.param.b32 [r], %%r6;\n"
    " ret;\n"
    "$BASE:\n"
    " st.param.b32 [r], %%r1;\n"
    " ret;\n"
    "}\n"
    ".func (.param .b32 r) sq(.param .b32 x) { .reg .b32 %%r<3>; ld.param.u32 %%r1, [x]; mul.lo.u32 %%r2, %%r1, %%r1; st.param.b32 [r], %%r2; ret; }\n"
    ".func (.param .b32 r) neg(.param .b32 x) { .reg .b32 %%r<3>; ld.param.u32 %%r1, [x]; neg.s32 %%r2, %%r1; st.param.b32 [r], %%r2; ret; }\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n"
    "{\n"
    " .reg .pred %%p<8>; .reg .b32 %%r<60>; .reg .b64 %%rd<60>;\n"
    " .local .align 4 .b32 arr[16];\n"
    " ld.param.u64 %%rd1, [in]; ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x;\n"
    " mul.wide.u32 %%rd3, %%r1, 4; add.s64 %%rd4, %%rd1, %%rd3; ld.global.u32 %%r2, [%%rd4];\n"
    " mul.wide.u32 %%rd5, %%r1, 64; add.s64 %%rd6, %%rd2, %%rd5;\n"
    " { .param .align 4 .b8 s[12]; .param .b32 x; .param .align 8 .b8 rv[16];\n"
    "   st.param.v2.u32 [s], {%%r1, %%r2}; st.param.u32 [s+8], 1000; st.param.b32 [x], 7;\n"
    "   call (rv), mk, (s, x);\n"
    "   ld.param.v2.u32 {%%r3, %%r4}, [rv]; ld.param.u64 %%rd7, [rv+8]; }\n"
    " and.b32 %%r5, %%r1, 15;\n"
    " { .param .b32 a; .param .b32 ra; st.param.b32 [a], %%r5; call (ra), fib, (a); ld.param.b32 %%r6, [ra]; }\n"
    " and.b32 %%r7, %%r1, 1; setp.eq.u32 %%p1, %%r7, 0;\n"
    " mov.u64 %%rd8, sq; mov.u64 %%rd9, neg; selp.b64 %%rd10, %%rd8, %%rd9, %%p1;\n"
    " proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
    " { .param .b32 a; .param .b32 ra; st.param.b32 [a], %%r2; call (ra), %%rd10, (a), proto; ld.param.b32 %%r8, [ra]; }\n"
    " and.b32 %%r9, %%r1, 3;\n"
    " ts: .branchtargets L0, L1, L2, L3;\n"
    " brx.idx %%r9, ts;\n"
    "L0: mov.u32 %%r10, 100; bra J;\n"
    "L1: mov.u32 %%r10, 101; bra J;\n"
    "L2: mov.u32 %%r10, 102; bra J;\n"
    "L3: mov.u32 %%r10, 103;\n"
    "J:\n"
    " mov.u64 %%rd11, arr;\n"
    " mov.u32 %%r11, 0;\n"
    "LOOP: mul.wide.u32 %%rd12, %%r11, 4; add.s64 %%rd13, %%rd11, %%rd12; mad.lo.u32 %%r12, %%r11, %%r2, %%r1; st.local.u32 [%%rd13], %%r12;\n"
    " add.u32 %%r11, %%r11, 1; setp.lt.u32 %%p2, %%r11, 16; @%%p2 bra LOOP;\n"
    " and.b32 %%r13, %%r2, 15; mul.wide.u32 %%rd12, %%r13, 4; add.s64 %%rd13, %%rd11, %%rd12; ld.local.u32 %%r14, [%%rd13];\n"
    " alloca.u64 %%rd14, 40, 8;\n"
    " st.local.u32 [%%rd14+36], %%r2;\n"
    " ld.local.u32 %%r15, [%%rd14+36];\n"
    " st.global.v4.u32 [%%rd6], {%%r3, %%r4, %%r6, %%r8};\n"
    " st.global.v4.u32 [%%rd6+16], {%%r10, %%r14, %%r15, %%r1};\n"
    " st.global.u64 [%%rd6+32], %%rd7;\n"
    " ret;\n"
    "}\n";

static uint32_t fib(uint32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

Test(isa3, calls_struct_params_recursion_indirect_brx_alloca) {
    seed_rng();
    enum { N = 64 };
    uint32_t in[N], out[16 * N];
    for (int i = 0; i < N; i++) in[i] = (uint32_t)rnd();
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "sm_90a" : "sm_80";
        char ptx[8192];
        snprintf(ptx, sizeof ptx, CALL_PTX, tg);
        launch(tg, ptx, 1, N, 0, in, sizeof in, out, sizeof out);
        for (uint32_t i = 0; i < N; i++) {
            uint32_t x = in[i];
            uint64_t rd7 = (uint64_t)(1000 - 7) << 32 | 1000;
            uint32_t want[16] = {i + 7, x * 7, fib(i & 15), i % 2 ? 0u - x : x * x, 100 + i % 4, (x & 15) * x + i, x, i,
                                 (uint32_t)rd7, (uint32_t)(rd7 >> 32), POISON32, POISON32, POISON32, POISON32, POISON32, POISON32};
            for (int s = 0; s < 16; s++) cr_expect_eq(out[16 * i + s], want[s], "%s thread %u slot %d: %#x, want %#x", tg, i, s, out[16 * i + s], want[s]);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * exit in a divergent branch (a quarter of the threads, after their store to shared memory): the
 * rest pass bar.sync and read it; the special registers' values docs/emulator.md gives (%warpid,
 * %nwarpid, %smid, %nsmid, %gridid, %envreg3, %laneid, %dynamic_smem_size, %total_smem_size). */
static const char *EXIT_PTX =
    ".version 8.3\n.target %s\n.address_size 64\n"
    ".extern .shared .align 16 .b8 dyn[];\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n"
    "{\n"
    " .reg .pred %%p<8>; .reg .b16 %%h<20>; .reg .b32 %%r<60>; .reg .b64 %%rd<60>;\n"
    " .shared .align 4 .b32 buf[128];\n"
    " ld.param.u64 %%rd1, [in]; ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x;\n"
    " mov.u32 %%r2, buf; shl.b32 %%r3, %%r1, 2; add.u32 %%r4, %%r2, %%r3;\n"
    " st.shared.u32 [%%r4], %%r1;\n"
    " and.b32 %%r5, %%r1, 3; setp.eq.u32 %%p1, %%r5, 3;\n"
    " @%%p1 exit;\n"
    " bar.sync 0;\n"
    " xor.b32 %%r6, %%r1, 1; shl.b32 %%r7, %%r6, 2; add.u32 %%r8, %%r2, %%r7;\n"
    " ld.shared.u32 %%r9, [%%r8];\n"
    " mov.u32 %%r10, %%dynamic_smem_size; mov.u32 %%r11, %%total_smem_size;\n"
    " mov.u32 %%r12, %%warpid; mov.u32 %%r13, %%nwarpid; mov.u32 %%r14, %%smid; mov.u32 %%r15, %%nsmid;\n"
    " mov.u64 %%rd5, %%gridid; mov.u32 %%r16, %%envreg3; cvt.u32.u64 %%r17, %%rd5; mov.u32 %%r18, %%laneid;\n"
    " mul.wide.u32 %%rd3, %%r1, 48; add.s64 %%rd4, %%rd2, %%rd3;\n"
    " st.global.v4.u32 [%%rd4], {%%r9, %%r10, %%r11, %%r12};\n"
    " st.global.v4.u32 [%%rd4+16], {%%r13, %%r14, %%r15, %%r16};\n"
    " st.global.v2.u32 [%%rd4+32], {%%r17, %%r18};\n"
    " ret;\n"
    "}\n";

Test(isa3, divergent_exit_then_barrier_and_special_registers) {
    enum { N = 96, DYN = 100 };
    uint32_t in[4] = {0}, out[12 * N];
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "sm_90a" : "sm_80";
        char ptx[8192];
        snprintf(ptx, sizeof ptx, EXIT_PTX, tg);
        launch(tg, ptx, 1, N, DYN, in, sizeof in, out, sizeof out);
        for (uint32_t i = 0; i < N; i++) {
            /* %smid 0 (the only CTA), %nsmid the device's default multiprocessor count, 132 */
            uint32_t want[12] = {i ^ 1, DYN, 512 + DYN, i / 32, N / 32, 0, 132, 0, 0, i % 32, POISON32, POISON32};
            if (i % 4 == 3)
                for (int s = 0; s < 12; s++) want[s] = POISON32;
            for (int s = 0; s < 12; s++) cr_expect_eq(out[12 * i + s], want[s], "%s thread %u slot %d: %#x, want %#x", tg, i, s, out[12 * i + s], want[s]);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * State spaces ptxas refuses for atom/red (.local), ld's .nc (only ld.global.nc), ldu (.global or
 * generic), cp.async (.shared[::cta] from .global, in that order) and .L2::cache_hint on atom/red
 * (.global or generic, not cas), and .b128 with .sys before PTX 8.4, are refused at load with the line (they
 * loaded); the forms beside them load. */

Test(isa3, state_spaces_ptxas_refuses) {
    static const struct { const char *ins, *msg; } bad[] = {
        {"atom.local.add.u32 %r1, [%rd1], %r2;", "not .local"},
        {"red.local.add.u32 [%rd1], %r2;", "not .local"},
        {"ld.const.nc.u32 %r1, [%rd1];", ".nc is for ld.global"},
        {"ld.nc.u32 %r1, [%rd1];", "not generic addresses"},
        {"ld.shared.nc.u32 %r1, [%rd1];", ".nc is for ld.global"},
        {"ld.param.nc.u32 %r1, [%rd1];", ".nc is for ld.global"},
        {"ldu.shared.u32 %r1, [%rd1];", "ldu reads .global or generic"},
        {"ldu.local.u32 %r1, [%rd1];", "ldu reads .global or generic"},
        {"ldu.const.u32 %r1, [%rd1];", "ldu reads .global or generic"},
        {"cp.async.ca.global.shared [%rd1], [%rd1], 16;", "cp.async copies from .global into .shared"},
        {"cp.async.ca.shared::cluster.global [%rd1], [%rd1], 16;", "not .shared::cluster"},
        {"cp.async.cg.shared.param [%rd1], [%rd1], 16;", "not .param"},
        {"cp.async.ca.local.global [%rd1], [%rd1], 16;", "not .local"},
        {"atom.shared.L2::cache_hint.add.u32 %r1, [%rd1], 11, %rd2;", ".L2::cache_hint is for .global or generic addresses"},
        {"atom.shared::cluster.L2::cache_hint.add.u32 %r1, [%rd1], 11, %rd2;", ".L2::cache_hint is for .global or generic addresses"},
        {"red.shared::cta.L2::cache_hint.add.u32 [%rd1], 11, %rd2;", ".L2::cache_hint is for .global or generic addresses"},
        {"atom.global.L2::cache_hint.cas.b32 %r1, [%rd1], 112, 9, %rd2;", "atom.cas takes no .L2::cache_hint"},
        {"atom.L2::cache_hint.cas.b64 %rd3, [%rd1], %rd4, %rd5, %rd2;", "atom.cas takes no .L2::cache_hint"},
        {"isspacep.param::func %p1, %rd1;", "not .param::func"},
        {"cp.async.shared.global [%rd1], [%rd1], 16;", "needs its cache operator, .ca or .cg"},
        {"match.any.sync.b32 %r1, %rd2, %r5;", "does not fit .b32"},
        {"st.global.f32 [%rd1], %fd1;", "does not fit .f32"},
        {"ld.global.v2.f32 {%fd1, %fd2}, [%rd1];", "does not fit .f32"},
        {"ldu.global.f32 %fd1, [%rd1];", "does not fit .f32"},
        {"cvt.rn.f16.f32 %f1, %f2;", "does not fit .f16"},
        {"cvt.f64.f32 %fd1, %fd2;", "does not fit .f32"},
        {"match.all.sync.b64 %r1, %r2, -1;", "does not fit .b64"},
        {"match.any.sync.b64 %rd3, %rd2, %r5;", "does not fit .b32"},
        {"match.any.sync.b32 %r1, %r2, %rd5;", "does not fit .b32"},
        {"bar 0;", "needs .sync, .arrive or .red"},
        {"barrier.cta.aligned 1, 64;", "needs .sync, .arrive or .red"},
        {"atom.sc.gpu.global.add.u32 %r1, [%rd1], %r2;", "atom takes no .sc"},
        {"atom.volatile.global.exch.b32 %r1, [%rd1], %r2;", "atom takes no .volatile"},
        {"atom.weak.shared.add.u32 %r1, [%rd1], %r2;", "atom takes no .weak"},
        {"red.sc.sys.global.add.u32 [%rd1], %r2;", "red takes no .sc"},
        {"red.volatile.add.u32 [%rd1], %r2;", "red takes no .volatile"},
        {"red.acquire.gpu.global.add.u32 [%rd1], %r2;", "red takes no .acquire"},
        {"red.acq_rel.gpu.global.add.u32 [%rd1], %r2;", "red takes no .acq_rel"},
        {"ld.mmio.relaxed.sys.global.v2.u32 {%r1, %r2}, [%rd1];", ".mmio accesses one scalar"},
        {"st.mmio.relaxed.sys.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};", ".mmio accesses one scalar"},
        {"ld.mmio.relaxed.sys.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;", ".mmio accesses one scalar"},
        {"ld.mmio.relaxed.sys.L2::256B.u32 %r1, [%rd1];", ".mmio accesses one scalar"},
        {"st.mmio.relaxed.sys.L1::evict_first.u32 [%rd1], %r1;", ".mmio accesses one scalar"},
        {"cvta.param::func.u64 %rd2, %rd1;", "not .param::func"},
        {"cvta.to.param::func.u64 %rd2, %rd1;", "not .param::func"},
        /* .b128 with .sys scope needs PTX 8.4 (ptxas: "Feature '.b128 with .sys'"; the module is 8.3), other scopes 8.3 */
        {"{ .reg .b128 %q<3>; atom.sys.cas.b128 %q0, [%rd1], %q1, %q2; }", "needs PTX ISA .version 8.4"},
        {"{ .reg .b128 %q<3>; atom.global.acquire.sys.exch.b128 %q0, [%rd1], %q1; }", "needs PTX ISA .version 8.4"},
        {"{ .reg .b128 %q<3>; ld.relaxed.sys.b128 %q0, [%rd1]; }", "needs PTX ISA .version 8.4"},
        {"{ .reg .b128 %q<3>; st.release.sys.global.b128 [%rd1], %q0; }", "needs PTX ISA .version 8.4"},
    };
    static const char *good[] = {
        "atom.shared::cta.add.u32 %r1, [%rd1], %r2;", "atom.add.u32 %r1, [%rd1], %r2;", "ld.nc.global.u32 %r1, [%rd1];",
        "ldu.u32 %r1, [%rd1];", "ldu.global.v2.u32 {%r1, %r2}, [%rd1];", "cp.async.ca.shared::cta.global [%rd1], [%rd1], 16;",
        "cp.async.cg.shared.global [%rd1], [%rd1], 16;", "red.shared.add.u32 [%rd1], %r2;",
        "atom.global.L2::cache_hint.exch.b32 %r1, [%rd1], 11, %rd2;", "red.L2::cache_hint.add.u32 [%rd1], 11, %rd2;",
        "atom.global.L2::cache_hint.inc.u32 %r1, [%rd1], 11, %rd2;", "isspacep.param::entry %p1, %rd1;", "cvta.to.param::entry.u64 %rd2, %rd1;",
        "ld.mmio.relaxed.sys.global.u64 %rd3, [%rd1];", "st.mmio.relaxed.sys.u32 [%rd1], %r1;",
        "atom.relaxed.global.add.u32 %r1, [%rd1], %r2;", "atom.acq_rel.sys.global.cas.b32 %r1, [%rd1], %r2, %r3;",
        "atom.acquire.cluster.shared::cluster.add.u32 %r1, [%rd1], %r2;", "red.release.cta.shared.add.u32 [%rd1], %r2;",
        "red.relaxed.gpu.add.u32 [%rd1], %r2;", "atom.sys.global.add.u32 %r1, [%rd1], %r2;", "bar.sync 0;", "barrier.cta.sync.aligned 0;",
        "barrier.cta.arrive 1, 64;", "bar.red.popc.u32 %r1, 0, %p1;", "match.any.sync.b64 %r1, %rd2, %r5;", "match.all.sync.b32 %r1|%p1, 7, -1;",
        "ld.global.f32 %rd2, [%rd1];", "ld.global.b32 %fd1, [%rd1];", "st.global.f64 [%rd1], %rd2;", "cvt.rn.f16.f32 %rd2, %f1;",
        "{ .reg .b128 %q<3>; atom.gpu.cas.b128 %q0, [%rd1], %q1, %q2; }", "{ .reg .b128 %q<3>; atom.cluster.exch.b128 %q0, [%rd1], %q1; }",
        "{ .reg .b128 %q<3>; ld.relaxed.gpu.b128 %q0, [%rd1]; }", "{ .reg .b128 %q<3>; st.volatile.b128 [%rd1], %q0; }",
    };
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 1};
    cr_assert_eq(dev_open("emu:sm_90a", &o, &d, &err), DEV_OK, "%s", err ? err : "");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0] + sizeof good / sizeof good[0]; i++) {
        bool isbad = i < sizeof bad / sizeof bad[0];
        const char *ins = isbad ? bad[i].ins : good[i - sizeof bad / sizeof bad[0]];
        char ptx[1024];
        snprintf(ptx, sizeof ptx,
                 ".version 8.3\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 in)\n{\n"
                 " .reg .pred %%p1; .reg .f32 %%f<4>; .reg .f64 %%fd<4>;\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<8>;\n ld.param.u64 %%rd1, [in];\n %s\n ret;\n}\n", ins);
        if (isbad) cr_expect(ptxas_refuses(ptx, "sm_90a"), "ptxas takes %s", ins);
        else check_ptxas_arch(ptx, "sm_90a");
        TileDevModule *m = NULL;
        DevStatus st = dev_module_load_ptx(d, ptx, &m);
        if (isbad) {
            cr_expect_neq(st, DEV_OK, "%s loaded", ins);
            if (st != DEV_OK)
                cr_expect(strstr(dev_last_error(d), bad[i].msg) && strstr(dev_last_error(d), "ptx:10"), "%s: %s", ins, dev_last_error(d));
        } else {
            cr_expect_eq(st, DEV_OK, "%s: %s", ins, dev_last_error(d));
        }
        if (m) dev_module_unload(m);
    }
    dev_close(d);
}

/* ---------------------------------------------------------------------------------------------
 * Warp-synchronous instructions met at different instructions (sm_70 on: the ISA requires the same
 * instruction in convergence only for sm_6x): lanes below a random split take one branch, the rest the
 * other, and each branch has its own shfl.sync (full mask; the sources in the other branch), vote.sync
 * .ballot, bar.warp.sync and activemask. */

static const char *SPLIT_PTX =
    ".version 8.3\n.target %s\n.address_size 64\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
    " .reg .pred %%p<8>;\n .reg .b32 %%r<40>;\n .reg .b64 %%rd<20>;\n"
    " ld.param.u64 %%rd1, [in];\n ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x;\n mov.u32 %%r2, %%laneid;\n mul.wide.u32 %%rd3, %%r1, 8;\n add.s64 %%rd5, %%rd1, %%rd3;\n"
    " ld.global.v2.u32 {%%r3, %%r9}, [%%rd5];\n" /* the lane's value, the warp's split */
    " mul.wide.u32 %%rd3, %%r1, 16;\n add.s64 %%rd4, %%rd2, %%rd3;\n"
    " setp.lt.u32 %%p1, %%r2, %%r9;\n and.b32 %%r10, %%r3, 1;\n setp.ne.u32 %%p2, %%r10, 0;\n"
    " @%%p1 bra $LO;\n"
    " add.u32 %%r4, %%r3, 5;\n shfl.sync.idx.b32 %%r5, %%r4, 0, 31, -1;\n vote.sync.ballot.b32 %%r6, %%p2, -1;\n"
    " bar.warp.sync -1;\n activemask.b32 %%r7;\n bra $J;\n"
    "$LO:\n add.u32 %%r4, %%r3, 7;\n shfl.sync.idx.b32 %%r5, %%r4, 31, 31, -1;\n vote.sync.ballot.b32 %%r6, %%p2, -1;\n"
    " bar.warp.sync -1;\n activemask.b32 %%r7;\n"
    "$J:\n st.global.v4.u32 [%%rd4], {%%r4, %%r5, %%r6, %%r7};\n ret;\n}\n";

Test(isa3, collectives_at_different_instructions) {
    seed_rng();
    enum { W = 4, N = 32 * W };
    uint32_t in[2 * N], out[4 * N];
    for (int w = 0; w < W; w++) {
        uint32_t split = 1 + (uint32_t)(rnd() % 31); /* both branches taken */
        for (int l = 0; l < 32; l++) in[2 * (32 * w + l)] = (uint32_t)rnd(), in[2 * (32 * w + l) + 1] = split;
    }
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "sm_90a" : "sm_80";
        char ptx[4096];
        snprintf(ptx, sizeof ptx, SPLIT_PTX, tg);
        launch(tg, ptx, 1, N, 0, in, sizeof in, out, sizeof out);
        for (int w = 0; w < W; w++) {
            uint32_t split = in[2 * 32 * w + 1], ballot = 0, lo = (uint32_t)((1ull << split) - 1);
            uint32_t v[32];
            for (int l = 0; l < 32; l++) {
                uint32_t x = in[2 * (32 * w + l)];
                v[l] = x + ((uint32_t)l < split ? 7 : 5);
                ballot |= (x & 1) << l;
            }
            for (int l = 0; l < 32; l++) {
                int i = 32 * w + l;
                bool low = (uint32_t)l < split;
                uint32_t want[4] = {v[l], low ? v[31] : v[0], ballot, low ? lo : ~lo};
                for (int s = 0; s < 4; s++)
                    cr_expect_eq(out[4 * i + s], want[s], "%s warp %d lane %d (split %u) slot %d: %#x, want %#x", tg, w, l, split, s, out[4 * i + s], want[s]);
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Named barriers reused across iterations (a warp-specialized ping-pong): producers (warps 0-3) wait
 * on barrier 2 for an empty buffer, fill it and arrive on barrier 1; consumers (warps 4-7) first arrive
 * on 2, then five times wait on 1, read and arrive on 2.  Each consumer's running sum shows it saw every
 * generation once and in order. */
static const char *PINGPONG_PTX =
    ".version 8.3\n.target %s\n.address_size 64\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n"
    "{\n"
    " .reg .pred %%p<8>; .reg .b32 %%r<40>; .reg .b64 %%rd<20>;\n"
    " .shared .align 4 .b32 buf[128];\n"
    " ld.param.u64 %%rd1, [in]; ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x;\n"
    " shl.b32 %%r2, %%r1, 2; and.b32 %%r2, %%r2, 511; mov.u32 %%r3, buf; add.u32 %%r4, %%r3, %%r2;\n"
    " mov.u32 %%r10, 0; mov.u32 %%r11, 0;\n"
    " setp.lt.u32 %%p1, %%r1, 128;\n"
    " @%%p1 bra $PROD;\n"
    " bar.arrive 2, 256;\n"
    "$CL:\n"
    " bar.sync 1, 256;\n"
    " ld.shared.u32 %%r12, [%%r4];\n"
    " add.u32 %%r11, %%r11, %%r12;\n"
    " mul.lo.u32 %%r11, %%r11, 3;\n"
    " bar.arrive 2, 256;\n"
    " add.u32 %%r10, %%r10, 1;\n"
    " setp.lt.u32 %%p2, %%r10, 5;\n"
    " @%%p2 bra $CL;\n"
    " bra $OUT;\n"
    "$PROD:\n"
    " bar.sync 2, 256;\n"
    " mul.wide.u32 %%rd5, %%r1, 4; add.s64 %%rd6, %%rd1, %%rd5; ld.global.u32 %%r14, [%%rd6];\n"
    " mad.lo.u32 %%r13, %%r10, 1000, %%r14;\n"
    " st.shared.u32 [%%r4], %%r13;\n"
    " bar.arrive 1, 256;\n"
    " add.u32 %%r10, %%r10, 1;\n"
    " setp.lt.u32 %%p2, %%r10, 5;\n"
    " @%%p2 bra $PROD;\n"
    " bar.sync 2, 256;\n"
    "$OUT:\n"
    " mul.wide.u32 %%rd3, %%r1, 4; add.s64 %%rd4, %%rd2, %%rd3;\n"
    " st.global.u32 [%%rd4], %%r11;\n"
    " ret;\n"
    "}\n";

Test(isa3, named_barrier_ping_pong_generations) {
    seed_rng();
    uint32_t in[128], out[256];
    for (int i = 0; i < 128; i++) in[i] = (uint32_t)rnd();
    for (int t = 0; t < 2; t++) {
        const char *tg = t ? "sm_90a" : "sm_80";
        char ptx[4096];
        snprintf(ptx, sizeof ptx, PINGPONG_PTX, tg);
        launch(tg, ptx, 1, 256, 0, in, sizeof in, out, sizeof out);
        for (int i = 0; i < 256; i++) {
            uint32_t acc = 0;
            if (i >= 128)
                for (uint32_t it = 0; it < 5; it++) acc = (acc + it * 1000 + in[i - 128]) * 3;
            cr_expect_eq(out[i], acc, "%s thread %d: %#x, want %#x", tg, i, out[i], acc);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * cvta to and from every space (.const, .global, .shared, .local, .param) and isspacep of each space
 * (and ::cta, ::entry, ::cluster) on each kind of address; a .const variable is in global memory's
 * window too (docs/emulator.md); cvta.to.param of a kernel parameter's generic address gives its .param
 * address back (it stopped the launch: "cvta.to.param is not supported"). */
static const char *SPACEP_PTX =
    ".version 8.3\n.target sm_90a\n.address_size 64\n"
    ".const .align 4 .b32 cv[4] = {%u, %u, %u, %u};\n"
    ".global .align 4 .b32 gv[4] = {%u, %u, %u, %u};\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n"
    "{\n"
    " .reg .pred %%p<16>; .reg .b32 %%r<40>; .reg .b64 %%rd<20>;\n"
    " .shared .align 4 .b32 sv[4];\n"
    " .local .align 4 .b32 lv[4];\n"
    " ld.param.u64 %%rd1, [in]; ld.param.u64 %%rd2, [out];\n"
    " mov.u32 %%r1, %%tid.x; setp.ne.u32 %%p1, %%r1, 0; @%%p1 bra $E;\n"
    " cvta.const.u64 %%rd3, cv;\n"
    " cvta.global.u64 %%rd4, gv;\n"
    " cvta.shared.u64 %%rd5, sv;\n"
    " cvta.local.u64 %%rd6, lv;\n"
    " mov.u64 %%rd7, in;\n"
    " cvta.param.u64 %%rd8, %%rd7;\n"
    " isspacep.const %%p2, %%rd3; isspacep.global %%p3, %%rd3; isspacep.const %%p4, %%rd4; isspacep.global %%p5, %%rd4;\n"
    " isspacep.shared %%p6, %%rd4; isspacep.local %%p7, %%rd5; isspacep.shared::cta %%p8, %%rd5; isspacep.param %%p9, %%rd8;\n"
    " isspacep.param::entry %%p10, %%rd8; isspacep.global %%p11, %%rd8; isspacep.const %%p12, %%rd6; isspacep.shared::cluster %%p13, %%rd6;\n"
    " selp.u32 %%r2, 1, 0, %%p2; selp.u32 %%r3, 1, 0, %%p3; selp.u32 %%r4, 1, 0, %%p4; selp.u32 %%r5, 1, 0, %%p5;\n"
    " selp.u32 %%r6, 1, 0, %%p6; selp.u32 %%r7, 1, 0, %%p7; selp.u32 %%r8, 1, 0, %%p8; selp.u32 %%r9, 1, 0, %%p9;\n"
    " selp.u32 %%r10, 1, 0, %%p10; selp.u32 %%r11, 1, 0, %%p11; selp.u32 %%r12, 1, 0, %%p12; selp.u32 %%r13, 1, 0, %%p13;\n"
    " ld.u32 %%r14, [%%rd3+8];\n"
    " cvta.to.const.u64 %%rd9, %%rd3; ld.const.u32 %%r15, [%%rd9+12];\n"
    " cvta.to.global.u64 %%rd10, %%rd4; ld.global.u32 %%r16, [%%rd10+4];\n"
    " ld.param.u64 %%rd11, [%%rd7];\n"
    " setp.eq.u64 %%p14, %%rd11, %%rd1; selp.u32 %%r17, 1, 0, %%p14;\n"
    " cvta.to.param.u64 %%rd12, %%rd8; ld.param.u64 %%rd13, [%%rd12+8];\n"
    " setp.eq.u64 %%p15, %%rd13, %%rd2; selp.u32 %%r18, 1, 0, %%p15;\n"
    " ld.u64 %%rd14, [%%rd8+8];\n"
    " setp.eq.u64 %%p15, %%rd14, %%rd2; selp.u32 %%r19, 1, 0, %%p15;\n"
    " st.global.v4.u32 [%%rd2], {%%r2, %%r3, %%r4, %%r5};\n"
    " st.global.v4.u32 [%%rd2+16], {%%r6, %%r7, %%r8, %%r9};\n"
    " st.global.v4.u32 [%%rd2+32], {%%r10, %%r11, %%r12, %%r13};\n"
    " st.global.v4.u32 [%%rd2+48], {%%r14, %%r15, %%r16, %%r17};\n"
    " st.global.v2.u32 [%%rd2+64], {%%r18, %%r19};\n"
    "$E:\n"
    " ret;\n"
    "}\n";

Test(isa3, cvta_every_space_and_isspacep) {
    seed_rng();
    uint32_t c[4], g[4];
    for (int i = 0; i < 4; i++) c[i] = (uint32_t)rnd(), g[i] = (uint32_t)rnd();
    char ptx[8192];
    snprintf(ptx, sizeof ptx, SPACEP_PTX, c[0], c[1], c[2], c[3], g[0], g[1], g[2], g[3]);
    uint32_t in[4] = {0}, out[20];
    launch("sm_90a", ptx, 1, 32, 0, in, sizeof in, out, sizeof out);
    /* isspacep: const(cv) global(cv) const(gv) global(gv) shared(gv) local(sv) shared::cta(sv) param(p)
     * param::entry(p) global(p) const(lv) shared::cluster(lv); then cv[2] through its generic address, cv[3]
     * after cvta.to.const, gv[1] after cvta.to.global, the parameters through ld.param, cvta.to.param, generic */
    uint32_t want[20] = {1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, c[2], c[3], g[1], 1, 1, 1, POISON32, POISON32};
    for (int i = 0; i < 20; i++) cr_expect_eq(out[i], want[i], "slot %d: %#x, want %#x", i, out[i], want[i]);
}

/* %nsmid is the device's multiprocessor count (emu:<target>:sms=N) and %smid the SM of the CTA, its linear index in
 * the grid mod %nsmid (docs/emulator.md; before, 0 and 1 whatever sms said).  A persistent kernel launched with one
 * CTA per SM, each taking items %smid, %smid + %nsmid, ..., adds 3i + 1 to each of n items (not a multiple of the
 * SMs) exactly once; every CTA of a larger 2-D grid, on a device with another count, reports its own. */
static const char *SMID_PTX =
    ".version 8.3\n.target sm_80\n.address_size 64\n"
    ".visible .entry k(.param .u64 out, .param .u64 ids, .param .u32 n)\n{\n"
    " .reg .pred %p<2>; .reg .b32 %r<12>; .reg .b64 %rd<8>;\n"
    " ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [ids]; ld.param.u32 %r1, [n];\n"
    " mov.u32 %r2, %smid; mov.u32 %r3, %nsmid;\n"
    " mov.u32 %r4, %ctaid.x; mov.u32 %r5, %ctaid.y; mov.u32 %r6, %nctaid.x; mad.lo.u32 %r7, %r5, %r6, %r4;\n"
    " mul.wide.u32 %rd3, %r7, 8; add.s64 %rd4, %rd2, %rd3; st.global.v2.u32 [%rd4], {%r2, %r3};\n"
    " mov.u32 %r8, %r2; setp.ge.u32 %p1, %r8, %r1; @%p1 bra DONE;\n"
    "LOOP:\n"
    " mul.wide.u32 %rd5, %r8, 4; add.s64 %rd6, %rd1, %rd5; mad.lo.u32 %r9, %r8, 3, 1;\n"
    " red.global.add.u32 [%rd6], %r9;\n"
    " add.u32 %r8, %r8, %r3; setp.lt.u32 %p1, %r8, %r1; @%p1 bra LOOP;\n"
    "DONE:\n ret;\n}\n";

Test(isa3, smid_nsmid_follow_the_sm_count) {
    check_ptxas_arch(SMID_PTX, "sm_80");
    enum { N = 1000 };
    static const struct { const char *dev; unsigned sms, gx, gy; } runs[] = {{"emu:sm_80:sms=7", 7, 7, 1}, {"emu:sm_80:sms=5", 5, 3, 4}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        TileDevice *d = NULL;
        char *err = NULL;
        DevOptions o = {.emu_host_threads = 3};
        cr_assert_eq(dev_open(runs[r].dev, &o, &d, &err), DEV_OK, "%s: %s", runs[r].dev, err ? err : "");
        cr_expect_eq(dev_num_sms(d), (int)runs[r].sms);
        TileDevModule *m = NULL;
        TileDevFunction *fn = NULL;
        cr_assert_eq(dev_module_load_ptx(d, SMID_PTX, &m), DEV_OK, "%s", dev_last_error(d));
        cr_assert_eq(dev_module_get_function(m, "k", &fn), DEV_OK);
        unsigned nb = runs[r].gx * runs[r].gy;
        uint64_t dout, dids;
        cr_assert_eq(dev_malloc(d, 4 * N, &dout), DEV_OK);
        cr_assert_eq(dev_malloc(d, 8 * nb, &dids), DEV_OK);
        cr_assert_eq(dev_memset_d8(d, dout, 0x0E, 4 * N), DEV_OK); /* poisoned: the adds land on 0x0E0E0E0E */
        cr_assert_eq(dev_memset_d8(d, dids, 0xEE, 8 * nb), DEV_OK);
        uint32_t n = N;
        void *params[] = {&dout, &dids, &n};
        cr_assert_eq(dev_launch(fn, runs[r].gx, runs[r].gy, 1, 1, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        uint32_t out[N], ids[2 * 20];
        cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
        cr_assert_eq(dev_memcpy_dtoh(d, ids, dids, 8 * nb), DEV_OK);
        for (unsigned b = 0; b < nb; b++) {
            cr_expect_eq(ids[2 * b], b % runs[r].sms, "%s block %u: %%smid %u", runs[r].dev, b, ids[2 * b]);
            cr_expect_eq(ids[2 * b + 1], runs[r].sms, "%s block %u: %%nsmid %u", runs[r].dev, b, ids[2 * b + 1]);
        }
        if (nb == runs[r].sms) /* one CTA per SM: each item once */
            for (uint32_t i = 0; i < N; i++) cr_expect_eq(out[i], 0x0E0E0E0Eu + 3 * i + 1, "%s item %u: %#x", runs[r].dev, i, out[i]);
        dev_module_unload(m);
        dev_close(d);
    }
}

/* A .func's last argument may be an incomplete array (s[], as ptxas takes it): a call passes an array of any size
 * there and the callee reads what it got (a read of s[4] was a memcheck error: the parameter had 0 bytes).  Here
 * 12 bytes, then 4 from a second call site. */
static const char *OPEN_ARRAY_PTX =
    ".version 8.3\n.target sm_80\n.address_size 64\n"
    ".func f(.param .u64 out, .param .u32 n, .param .align 4 .b8 s[])\n{\n"
    " .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p1;\n"
    " ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [n]; ld.param.u32 %r2, [s]; setp.gt.u32 %p1, %r1, 1;\n"
    " mov.u32 %r3, 0; mov.u32 %r4, 0; @%p1 ld.param.u32 %r3, [s+4]; @%p1 ld.param.u32 %r4, [s+8];\n"
    " add.u32 %r5, %r2, %r3; add.u32 %r5, %r5, %r4; st.global.u32 [%rd1], %r5;\n ret;\n}\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>; .reg .b64 %rd<4>;\n"
    " ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; add.s64 %rd3, %rd2, 4;\n"
    " ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"
    " { .param .u64 o; .param .u32 n; .param .align 4 .b8 a[12]; st.param.u64 [o], %rd2; st.param.u32 [n], 3;\n"
    "   st.param.u32 [a], %r1; st.param.u32 [a+4], %r2; st.param.u32 [a+8], %r3; call f, (o, n, a); }\n"
    " { .param .u64 o; .param .u32 n; .param .align 4 .b8 b[4]; st.param.u64 [o], %rd3; st.param.u32 [n], 1;\n"
    "   st.param.u32 [b], %r4; call f, (o, n, b); }\n ret;\n}\n";

Test(isa3, call_open_array_argument) {
    seed_rng();
    uint32_t in[4], out[2];
    for (int i = 0; i < 4; i++) in[i] = (uint32_t)rnd() >> 4;
    launch("sm_80", OPEN_ARRAY_PTX, 1, 1, 0, in, sizeof in, out, sizeof out);
    cr_expect_eq(out[0], in[0] + in[1] + in[2], "%u", out[0]);
    cr_expect_eq(out[1], in[3], "%u", out[1]);
}

/* A call's float literal arguments (1.5, -2.5e3, 0d..., 0f...: ptxas takes them for a float or .bN parameter; a decimal
 * one was refused at load), passed as the code ptxas makes passes them (read from its SASS, CUDA 13): the literal is
 * held as 64 bits (0f's 32 zero-extended, 0d's and a decimal one's double), a parameter gets its low bytes, but an
 * .f32 parameter gets a 64-bit literal rounded to float and a 16-bit one 0.  Direct and indirect calls (the
 * conversion is made at the call, against the callee its register holds), .reg and .param parameters. */
static const char *FLOAT_LITERAL_CALL_PTX =
    ".version 8.3\n.target sm_80\n.address_size 64\n"
    ".func (.reg .f32 r) fadd(.reg .f32 a, .reg .f32 b)\n{\n add.f32 r, a, b;\n ret;\n}\n"
    ".func put32(.param .u64 o, .param .b32 a)\n{\n .reg .b32 %r1; .reg .b64 %rd1;\n"
    " ld.param.u64 %rd1, [o]; ld.param.b32 %r1, [a]; st.global.b32 [%rd1], %r1;\n ret;\n}\n"
    ".func put64(.param .u64 o, .param .f64 a)\n{\n .reg .b64 %rd<3>;\n"
    " ld.param.u64 %rd1, [o]; ld.param.b64 %rd2, [a]; st.global.b64 [%rd1], %rd2;\n ret;\n}\n"
    ".func put16(.param .u64 o, .param .f16 a)\n{\n .reg .b16 %h1; .reg .b64 %rd1;\n"
    " ld.param.u64 %rd1, [o]; ld.param.b16 %h1, [a]; st.global.b16 [%rd1], %h1;\n ret;\n}\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .f32 %f<8>; .reg .b64 %rd<12>;\n"
    " ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.global.f32 %f1, [%rd1];\n"
    " call (%f2), fadd, (%f1, 1.5); st.global.f32 [%rd2], %f2;\n"
    " call (%f3), fadd, (%f1, 0d3FF4CCCCCCCCCCCD); st.global.f32 [%rd2+4], %f3;\n"
    " call (%f4), fadd, (-2.5e3, %f1); st.global.f32 [%rd2+8], %f4;\n"
    " add.s64 %rd3, %rd2, 12; { .param .u64 o; st.param.u64 [o], %rd3; call put32, (o, 1.3); }\n"
    " add.s64 %rd4, %rd2, 16; { .param .u64 o; st.param.u64 [o], %rd4; call put64, (o, 0f3FA66666); }\n"
    " add.s64 %rd5, %rd2, 24; { .param .u64 o; st.param.u64 [o], %rd5; call put64, (o, 2.5e-3); }\n"
    " add.s64 %rd6, %rd2, 32; { .param .u64 o; st.param.u64 [o], %rd6; call put16, (o, 1.3); }\n"
    " mov.u64 %rd7, fadd;\n proto: .callprototype (.reg .f32 _) _ (.reg .f32 _, .reg .f32 _);\n"
    " call (%f5), %rd7, (%f1, 0.1), proto; st.global.f32 [%rd2+36], %f5;\n"
    " call (%f6), %rd7, (%f1, 0f3FC00000), proto; st.global.f32 [%rd2+40], %f6;\n ret;\n}\n";

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

Test(isa3, call_float_literal_arguments) {
    seed_rng();
    float in = (float)((int32_t)(rnd() % 20001) - 10000) / 64.0f; /* exact: the sums below round once */
    uint32_t out[11];
    launch("sm_80", FLOAT_LITERAL_CALL_PTX, 1, 1, 0, &in, sizeof in, out, sizeof out);
    cr_expect_eq(out[0], f32_bits(in + 1.5f), "fadd(%g, 1.5): %#x", in, out[0]);
    cr_expect_eq(out[1], f32_bits(in + (float)1.3), "fadd(%g, 0d 1.3): %#x", in, out[1]); /* rounded to .f32 first */
    cr_expect_eq(out[2], f32_bits(-2500.0f + in), "fadd(-2.5e3, %g): %#x", in, out[2]);
    cr_expect_eq(out[3], 0xCCCCCCCDu, ".b32 gets 1.3's low 32 bits: %#x", out[3]);
    uint64_t w64[2];
    double lit = 2.5e-3;
    memcpy(w64, &out[4], 16);
    cr_expect_eq(w64[0], 0x3FA66666ull, ".f64 gets 0f3FA66666 zero-extended: %#" PRIx64, w64[0]);
    uint64_t qbits;
    memcpy(&qbits, &lit, 8);
    cr_expect_eq(w64[1], qbits, ".f64 gets 2.5e-3's double: %#" PRIx64, w64[1]);
    cr_expect_eq(out[8], 0xEEEE0000u, ".f16 gets 0 (two bytes; the rest stays poisoned): %#x", out[8]);
    cr_expect_eq(out[9], f32_bits(in + (float)0.1), "indirect fadd(%g, 0.1): %#x", in, out[9]);
    cr_expect_eq(out[10], f32_bits(in + 1.5f), "indirect fadd(%g, 0f3FC00000): %#x", in, out[10]);
}

/* An indirect call may leave out its callee's last argument when that is an incomplete array (s[]), as a direct call
 * may (the emulator stopped it: "indirect call of 'g' with 2 arguments ... it takes 3"); the callee's array then has
 * no bytes from the call.  Beside it, indirect and direct calls that pass the array. */
static const char *INDIRECT_OPEN_ARRAY_PTX =
    ".version 8.3\n.target sm_80\n.address_size 64\n"
    ".func (.param .b32 r) g(.param .b32 n, .param .b32 x, .param .align 4 .b8 s[])\n{\n"
    " .reg .b32 %r<6>; .reg .pred %p1;\n ld.param.b32 %r1, [n]; ld.param.b32 %r2, [x]; mov.u32 %r3, 0;\n"
    " setp.ne.u32 %p1, %r1, 0; @%p1 ld.param.b32 %r3, [s];\n add.u32 %r4, %r2, %r3; st.param.b32 [r], %r4;\n ret;\n}\n"
    ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>; .reg .b64 %rd<4>;\n"
    " ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"
    " mov.u64 %rd3, g;\n proto: .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _, .param .align 4 .b8 _[]);\n"
    " { .param .b32 n; .param .b32 x; .param .b32 rv; st.param.b32 [n], 0; st.param.b32 [x], %r1;\n"
    "   call (rv), %rd3, (n, x), proto; ld.param.b32 %r5, [rv]; }\n st.global.u32 [%rd2], %r5;\n"
    " { .param .b32 n; .param .b32 x; .param .align 4 .b8 s[4]; .param .b32 rv; st.param.b32 [n], 1; st.param.b32 [x], %r2;\n"
    "   st.param.b32 [s], %r3; call (rv), %rd3, (n, x, s), proto; ld.param.b32 %r6, [rv]; }\n st.global.u32 [%rd2+4], %r6;\n"
    " { .param .b32 n; .param .b32 x; .param .align 4 .b8 s[4]; .param .b32 rv; st.param.b32 [n], 1; st.param.b32 [x], %r4;\n"
    "   st.param.b32 [s], %r1; call (rv), g, (n, x, s); ld.param.b32 %r7, [rv]; }\n st.global.u32 [%rd2+8], %r7;\n ret;\n}\n";

Test(isa3, indirect_call_open_array_argument) {
    seed_rng();
    uint32_t in[4], out[3];
    for (int i = 0; i < 4; i++) in[i] = (uint32_t)rnd();
    launch("sm_80", INDIRECT_OPEN_ARRAY_PTX, 1, 1, 0, in, sizeof in, out, sizeof out);
    cr_expect_eq(out[0], in[0], "g(0, x) without s: %#x", out[0]);
    cr_expect_eq(out[1], in[1] + in[2], "g(1, x, s) indirect: %#x", out[1]);
    cr_expect_eq(out[2], in[3] + in[0], "g(1, x, s) direct: %#x", out[2]);
}

/* Module-level forms ptxas refuses, refused at load (they loaded): a module variable defined twice, a call that
 * does not receive its callee's return value; signatures: .noreturn with a return value ("Invalid directive
 * '.noreturn'"), on a kernel or twice, an incomplete array (s[] or s[0]) anywhere but as a .func's last argument,
 * several .param return values; a function declared again differently ("Inconsistent prototypes", "Inconsistent
 * redefinition": types, sizes, alignment, .reg or .param, .noreturn, .extern, a linkage the first declaration
 * did not have), defined after an .extern
 * declaration ("Function definition conflicts with '.extern' declaration") or, without .extern, not defined
 * ("Unresolved extern function"); a .param .pred; a call whose arguments or return values differ from its callee's
 * parameters in size, alignment or array-ness ("Type/Alignment of argument does not match formal parameter") or
 * are .reg .pred ("passing predicate ... parameters to device functions is not supported"); a kernel's
 * performance directives or a .pragma on a .func, cluster ones below sm_90.  The forms beside them load. */
#define CALLS(sig, decl, arg) ".func " sig " { ret; }\n.visible .entry k() { .reg .b32 %r1; .reg .b64 %rd1; .reg .b16 %h1; " \
    ".reg .f32 %f1; .reg .pred %p1; mov.b32 %r1, 1; mov.b64 %rd1, 1; mov.b16 %h1, 1; mov.f32 %f1, 0f3F800000; " \
    "setp.ne.u32 %p1, %r1, 0; { " decl " call f, (" arg "); } ret; }\n"
#define RCALLS(sig, decl, ret) ".func " sig " { ret; }\n.visible .entry k() { .reg .b32 %r1; .reg .b64 %rd1; { " decl \
    " call (" ret "), f, (); } ret; }\n"
Test(isa3, module_forms_ptxas_refuses) {
    static const struct { const char *body, *msg; } cases[] = {
        /* .noreturn */
        {".func (.param .b32 r) f() .noreturn { trap; }\n.visible .entry k() { ret; }\n", "'f' is .noreturn and has a return value"},
        {".func (.reg .b32 r) f() .noreturn;\n.visible .entry k() { ret; }\n", "'f' is .noreturn and has a return value"},
        {".visible .entry k() .noreturn { ret; }\n", ".noreturn on kernel 'k'"},
        {".func f() .noreturn .noreturn { trap; }\n.visible .entry k() { ret; }\n", ".noreturn given twice"},
        /* a kernel's directives on a .func; the cluster ones below sm_90 */
        {".func f() .maxntid 32 { ret; }\n.visible .entry k() { call f, (); ret; }\n", ".maxntid on .func 'f'"},
        {".func f() .maxnreg 32 { ret; }\n.visible .entry k() { call f, (); ret; }\n", ".maxnreg on .func 'f'"},
        {".func f() .minnctapersm 2 { ret; }\n.visible .entry k() { ret; }\n", ".minnctapersm on .func 'f'"},
        {".visible .entry k() .explicitcluster { ret; }\n", ".explicitcluster needs .target sm_90 or later (the module's .target is sm_80)"},
        {".visible .entry k() .reqnctapercluster 2, 1, 1 { ret; }\n", ".reqnctapercluster needs .target sm_90"},
        {".visible .entry k() .maxclusterrank 2 { ret; }\n", ".maxclusterrank needs .target sm_90"},
        {".func f() .noreturn;\n.func f() { trap; }\n.visible .entry k() { ret; }\n", "'f' declared again with no .noreturn"},
        {".func f();\n.func f() .noreturn { trap; }\n.visible .entry k() { ret; }\n", "'f' declared again with .noreturn"},
        /* .extern, prototypes */
        {".extern .func f();\n.func f() { ret; }\n.visible .entry k() { call f, (); ret; }\n", "'f' declared again with no .extern"},
        {".extern .func f();\n.visible .func f() { ret; }\n.visible .entry k() { ret; }\n", "'f' declared again with no .extern"},
        {".func f();\n.extern .func f();\n.visible .entry k() { ret; }\n", "'f' declared again with .extern"},
        {".extern .func f() { ret; }\n.visible .entry k() { ret; }\n", "'f' is declared .extern and defined here"},
        {".func f();\n.visible .func f() { ret; }\n.visible .entry k() { ret; }\n", "'f' declared again with another linkage"},
        {".visible .func f();\n.weak .func f() { ret; }\n.visible .entry k() { ret; }\n", "'f' declared again with another linkage"},
        {".entry k();\n.visible .entry k() { ret; }\n", "'k' declared again with another linkage"},
        {".func f() .pragma \"nounroll\"; { ret; }\n.visible .entry k() { ret; }\n", ".pragma after the signature of .func 'f'"},
        {".func f(.param .b32 a);\n.func f(.param .b64 a) { ret; }\n.visible .entry k() { ret; }\n", "an argument of another type"},
        {".func f(.param .b32 a);\n.func f(.param .u32 a) { ret; }\n.visible .entry k() { ret; }\n", "an argument of another type"},
        {".func f(.param .b8 a[4]);\n.func f(.param .align 4 .b8 a[4]) { ret; }\n.visible .entry k() { ret; }\n", "an argument of another"},
        {".func f(.reg .b32 a);\n.func f(.param .b32 a) { ret; }\n.visible .entry k() { ret; }\n", "an argument of another type"},
        {".func f(.param .b32 a);\n.func f() { ret; }\n.visible .entry k() { ret; }\n", "a different number of parameters"},
        {".func (.param .b32 r) f();\n.func (.param .b64 r) f() { ret; }\n.visible .entry k() { ret; }\n", "a return value of another"},
        {".visible .entry k(.param .b32 a);\n.visible .entry k(.param .b64 a) { ret; }\n", "an argument of another type"},
        /* incomplete arrays, several return values */
        {".visible .entry k(.param .b8 s[0]) { ret; }\n", "kernel parameter 's' is an incomplete array"},
        {".visible .entry k(.param .u32 a, .param .align 4 .b8 s[]) { ret; }\n", "kernel parameter 's' is an incomplete array"},
        {".func (.param .b8 s[0]) f() { ret; }\n.visible .entry k() { ret; }\n", "return value 's' of 'f' is an incomplete array"},
        {".func f(.param .b8 s[0], .param .b32 b) { ret; }\n.visible .entry k() { ret; }\n", "argument 's' of 'f' is an incomplete array"},
        {".func (.param .b32 a, .param .b32 b) f() { ret; }\n.visible .entry k() { ret; }\n", "'f' has 2 return values and 'a' is .param"},
        {".func (.reg .b32 a, .param .b32 b) f() { ret; }\n.visible .entry k() { ret; }\n", "'f' has 2 return values and 'b' is .param"},
        /* calls: each element against the callee's parameter */
        {CALLS("f(.param .b32 a)", ".param .b64 a; st.param.b64 [a], 1;", "a"), "argument 'a' gets a .param variable of another size"},
        {CALLS("f(.param .align 4 .b8 a[8])", ".param .align 4 .b8 a[4];", "a"), "argument 'a' gets a .param variable of another size"},
        {CALLS("f(.param .align 8 .b8 a[8])", ".param .align 4 .b8 a[8];", "a"), "argument 'a' gets a .param variable of another alignment"},
        {CALLS("f(.param .b32 a)", ".param .align 4 .b8 a[4];", "a"), "argument 'a' gets an array for a scalar"},
        {CALLS("f(.param .b32 a)", ".param .b32 a[1];", "a"), "argument 'a' gets an array for a scalar"},
        {CALLS("f(.param .align 4 .b8 a[4])", ".param .b32 a;", "a"), "argument 'a' gets a scalar for an array"},
        {CALLS("f(.param .align 4 .b8 s[])", ".param .b8 a[4];", "a"), "argument 's' gets a .param variable of another alignment"},
        {CALLS("f(.param .b8 s[])", ".param .b32 a;", "a"), "argument 's' gets a scalar for an array"},
        {CALLS("f(.param .b32 a)", "", "%rd1"), "argument 'a' gets a register of another size"},
        {CALLS("f(.param .b16 a)", "", "%r1"), "argument 'a' gets a register of another size"},
        {CALLS("f(.param .b32 a)", "", "%p1"), "argument 'a' gets a predicate for a value"},
        {CALLS("f(.reg .b32 a)", "", "%h1"), "argument 'a' gets a register of another size"},
        {CALLS("f(.reg .b32 a)", ".param .b64 a;", "a"), "argument 'a' gets a .param variable of another size"},
        {CALLS("f(.param .align 4 .b8 a[4])", "", "%r1"), "argument 'a' gets a register for an array"},
        {CALLS("f(.reg .pred a)", "", "%p1"), "call of 'f': argument 'a' is a .reg .pred"},
        /* immediates of the parameter's kind ("Type of argument does not match formal parameter") */
        {CALLS("f(.param .u32 a)", "", "1.5"), "argument 'a' gets a float literal for an integer parameter"},
        {CALLS("f(.reg .s64 a)", "", "0d3FF8000000000000"), "argument 'a' gets a float literal for an integer parameter"},
        {CALLS("f(.reg .f32 a)", "", "1"), "argument 'a' gets an integer literal for a float parameter"},
        {CALLS("f(.param .f64 a)", "", "0x3FF8000000000000"), "argument 'a' gets an integer literal for a float parameter"},
        {".func f(.param .pred a) { ret; }\n.visible .entry k() { ret; }\n", "parameter 'a' is a .param .pred"},
        {".visible .entry k(.param .pred a) { ret; }\n", "parameter 'a' is a .param .pred"},
        {".func f();\n.visible .entry k() { ret; }\n", "'f' is declared without .extern and the module does not define it"},
        {".visible .func f(.param .b32 a);\n.visible .entry k() { ret; }\n", "'f' is declared without .extern and the module"},
        {RCALLS("(.param .b32 r) f()", ".param .b64 r;", "r"), "return value 'r' gets a .param variable of another size"},
        {RCALLS("(.reg .b32 r) f()", "", "%rd1"), "return value 'r' gets a register of another size"},
        {RCALLS("(.param .b32 r) f()", "", "%rd1"), "return value 'r' gets a register of another size"},
        {".global .align 4 .b32 x;\n.global .align 4 .b32 x;\n.visible .entry k() { ret; }\n", "defined twice"},
        {".const .align 4 .b32 x = 1;\n.global .align 4 .b32 x;\n.visible .entry k() { ret; }\n", "defined twice"},
        {".func (.param .b32 r) f(.param .b32 a) { st.param.b32 [r], 1; ret; }\n"
         ".visible .entry k() { { .param .b32 a; st.param.b32 [a], 1; call f, (a); } ret; }\n",
         "call of 'f' with 1 argument and 0 return values; it takes 1 and 1"},
        /* loads: .noreturn, declarations that agree (names aside), an incomplete last argument (any size, or left out),
         * elements of the callee's sizes whatever their types */
        {".func f() .noreturn { trap; }\n.visible .entry k() { call f, (); ret; }\n", NULL},
        {".visible .entry k() .maxnreg 32 .minnctapersm 2 .maxntid 64 { ret; }\n", NULL},
        {".visible .func f();\n.func f() { ret; }\n.weak .func g();\n.func g() { ret; }\n.visible .entry k() .pragma \"nounroll\"; { ret; }\n",
         NULL},
        {".extern .func f() .noreturn;\n.extern .func f() .noreturn;\n.visible .entry k() { ret; }\n", NULL},
        {".func f(.param .b32 a);\n.func f(.param .b32 b) { ret; }\n.visible .entry k() { ret; }\n", NULL},
        {".func (.reg .b32 a, .reg .b32 b) f() { ret; }\n.visible .entry k() { ret; }\n", NULL},
        {".visible .entry k(.param .b32 a);\n.visible .entry k(.param .b32 b) { ret; }\n", NULL},
        {CALLS("f(.param .b8 s[0])", ".param .b8 a[4];", "a"), NULL},
        {".func f(.param .b8 s[]) { ret; }\n.visible .entry k() { call f, (); ret; }\n", NULL},
        {CALLS("f(.param .b32 a)", ".param .f32 a; st.param.f32 [a], %f1;", "a"), NULL},
        {CALLS("f(.param .b32 a)", "", "%f1"), NULL},
        {CALLS("f(.param .b64 a)", "", "1"), NULL},
        {CALLS("f(.param .b32 a)", "", "1.5"), NULL},
        {CALLS("f(.reg .f16 a)", "", "-2.5e3"), NULL},
        {CALLS("f(.param .f32 a)", "", "0d3FF8000000000000"), NULL},
        {CALLS("f(.param .align 4 .b8 a[8])", ".param .align 4 .b32 a[2];", "a"), NULL},
        {CALLS("f(.reg .b32 a)", ".param .b32 a;", "a"), NULL},
        {".extern .func f(.reg .pred a);\n.visible .entry k() { ret; }\n", NULL},
        {RCALLS("(.param .b32 r) f()", "", "%r1"), NULL},
        /* loads: an .extern declaration then the definition, a call receiving its return value */
        {".extern .global .align 4 .b32 x;\n.visible .global .align 4 .b32 x;\n.visible .entry k() { ret; }\n", NULL},
        {".func (.param .b32 r) f(.param .b32 a) { st.param.b32 [r], 1; ret; }\n"
         ".visible .entry k() { .reg .b32 %r1; { .param .b32 a; .param .b32 r; st.param.b32 [a], 1; call (r), f, (a); "
         "ld.param.b32 %r1, [r]; } ret; }\n", NULL},
    };
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 1};
    cr_assert_eq(dev_open("emu:sm_80", &o, &d, &err), DEV_OK, "%s", err ? err : "");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char ptx[2048];
        snprintf(ptx, sizeof ptx, ".version 8.3\n.target sm_80\n.address_size 64\n%s", cases[i].body);
        TileDevModule *m = NULL;
        DevStatus st = dev_module_load_ptx(d, ptx, &m);
        if (cases[i].msg) {
            cr_expect(ptxas_refuses(ptx, "sm_80"), "ptxas takes case %zu", i);
            cr_expect_neq(st, DEV_OK, "case %zu loaded", i);
            if (st != DEV_OK) cr_expect(strstr(dev_last_error(d), cases[i].msg), "case %zu: %s", i, dev_last_error(d));
        } else {
            check_ptxas_arch(ptx, "sm_80");
            cr_expect_eq(st, DEV_OK, "case %zu: %s", i, dev_last_error(d));
        }
        if (m) dev_module_unload(m);
    }
    dev_close(d);
}

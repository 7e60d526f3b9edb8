/* test_emu_isa_vector.c - rules of the PTX ISA for its widest data the emulator once refused, each checked with
 * hand-written PTX whose expected result comes from the ISA's text (quoted in the test's comment), not from the
 * emulator: atom/red with vector types (.v2/.v4/.v8 of f16, bf16 and their pairs, .f32 adds) and their min/max on
 * NaNs, zeros and subnormals, alone and from many threads; the vector forms the ISA's table does not have; .b128
 * registers (mov pack/unpack, ld/st, atom.cas/.exch, a 128-bit counter) and their misuse refused at load.  The
 * other rules: test_emu_isa.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "test_ptxas.h"
#include "emu_isa_rules.h"

/* ISA, atom / red with vector type (sm_90, PTX 8.1): ".op = { .add, .min, .max }; .half_word_type = { .f16, .bf16 };
 * .packed_type = { .f16x2, .bf16x2 }; .vec_16_bit = { .v2, .v4, .v8 }; .vec_32_bit = { .v2, .v4 }", .f32 vectors
 * .add only, "may be used only with .global space and with generic addressing where the address points to
 * .global space"; each element atomic on its own.  The atom and red pages give min/max no NaN rule of their own:
 * min/max's (no .NaN) is taken: a NaN loses to a number, two NaNs give the canonical NaN 0x7fff, -0 is below +0.
 * One thread, special values (memory, operand -> result):
 *   f16 min:   1.0 vs 2.0 -> 1.0; NaN vs 3.0 -> 3.0; -2.0 vs NaN -> -2.0; NaN vs NaN -> 0x7fff; +0 vs -0 -> -0;
 *              -inf vs 5.0 -> -inf; 65504 vs inf -> 65504; 0x0001 (subnormal) vs 0x0002 -> 0x0001.
 *   bf16 max:  the same pairs: 2.0, 3.0, -2.0, 0x7fff, +0, 5.0, inf, 0x0002. */
Test(isa, vector_atomic_min_max_half_types) {
    static const char *ptx = HEAD83
        ".visible .entry k(.param .u64 g, .param .u64 b, .param .u64 old)\n{\n .reg .b16 %h<8>;\n .reg .b16 %o<8>;\n"
        " .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [g];\n ld.param.u64 %rd2, [b];\n ld.param.u64 %rd3, [old];\n"
        " ld.global.v4.b16 {%h0, %h1, %h2, %h3}, [%rd2];\n ld.global.v4.b16 {%h4, %h5, %h6, %h7}, [%rd2+8];\n"
        " atom.global.v8.f16.min.noftz {%o0, %o1, %o2, %o3, %o4, %o5, %o6, %o7}, [%rd1], {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7};\n"
        " st.global.v4.b16 [%rd3], {%o0, %o1, %o2, %o3};\n st.global.v4.b16 [%rd3+8], {%o4, %o5, %o6, %o7};\n"
        " ld.global.v4.b16 {%h0, %h1, %h2, %h3}, [%rd2+16];\n ld.global.v4.b16 {%h4, %h5, %h6, %h7}, [%rd2+24];\n"
        " red.global.v8.bf16.max.noftz [%rd1+16], {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7};\n"
        /* the f16 pairs again as .f16x2 (max) and .bf16x2 (min), red and atom, v4 and v2, the last through a generic address */
        " ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%rd2];\n"
        " red.global.v4.f16x2.max.noftz [%rd1+32], {%r0, %r1, %r2, %r3};\n"
        " ld.global.v2.b32 {%r0, %r1}, [%rd2+16];\n"
        " atom.v2.bf16x2.min.noftz {%r4, %r5}, [%rd1+48], {%r0, %r1};\n"
        " st.global.v2.b32 [%rd3+16], {%r4, %r5};\n ret;\n}\n";
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    /* f16: 1, NaN (0x7e01, not canonical), -2, NaN, +0, -inf, 65504, 2^-24 / operands 2, 3, NaN, NaN (0xfe02), -0, 5, inf, 2^-23 */
    const uint16_t gf[8] = {0x3C00, 0x7E01, 0xC000, 0x7E01, 0x0000, 0xFC00, 0x7BFF, 0x0001};
    const uint16_t bf[8] = {0x4000, 0x4200, 0x7E01, 0xFE02, 0x8000, 0x4500, 0x7C00, 0x0002};
    const uint16_t fmin[8] = {0x3C00, 0x4200, 0xC000, 0x7FFF, 0x8000, 0xFC00, 0x7BFF, 0x0001};
    const uint16_t fmax[8] = {0x4000, 0x4200, 0xC000, 0x7FFF, 0x0000, 0x4500, 0x7C00, 0x0002};
    /* bf16: 1, NaN, -2, NaN, +0, -inf, 3.39e38 (largest finite), 2^-133 / 2, 3, NaN, NaN, -0, 5, inf, 2^-132 */
    const uint16_t gb[8] = {0x3F80, 0x7FC1, 0xC000, 0x7FC1, 0x0000, 0xFF80, 0x7F7F, 0x0001};
    const uint16_t bb[8] = {0x4000, 0x4040, 0x7FC1, 0xFFC2, 0x8000, 0x40A0, 0x7F80, 0x0002};
    const uint16_t bmax[8] = {0x4000, 0x4040, 0xC000, 0x7FFF, 0x0000, 0x40A0, 0x7F80, 0x0002};
    const uint16_t bmin[4] = {0x3F80, 0x4040, 0xC000, 0x7FFF};
    uint16_t g[32], b[16];
    memcpy(g, gf, 16); memcpy(g + 8, gb, 16); memcpy(g + 16, gf, 16); memcpy(g + 24, gb, 8);
    memcpy(b, bf, 16); memcpy(b + 8, bb, 16);
    uint64_t dg = buffer(d, g, sizeof g), db = buffer(d, b, sizeof b), dold = buffer(d, NULL, 24);
    launch_ok(d, f, 1, (void *[]){&dg, &db, &dold});
    uint16_t r[32], old[12];
    cr_assert_eq(dev_memcpy_dtoh(d, r, dg, sizeof r), DEV_OK);
    cr_assert_eq(dev_memcpy_dtoh(d, old, dold, sizeof old), DEV_OK);
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(r[i], fmin[i], "v8.f16 min element %d: %#06x, want %#06x", i, r[i], fmin[i]);
        cr_expect_eq(old[i], gf[i], "v8.f16 min old element %d: %#06x, want %#06x", i, old[i], gf[i]);
        cr_expect_eq(r[8 + i], bmax[i], "v8.bf16 max element %d: %#06x, want %#06x", i, r[8 + i], bmax[i]);
        cr_expect_eq(r[16 + i], fmax[i], "v4.f16x2 max half %d: %#06x, want %#06x", i, r[16 + i], fmax[i]);
    }
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(r[24 + i], bmin[i], "v2.bf16x2 min half %d: %#06x, want %#06x", i, r[24 + i], bmin[i]);
        cr_expect_eq(old[8 + i], gb[i], "v2.bf16x2 min old half %d: %#06x, want %#06x", i, old[8 + i], gb[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* The same, many threads: 64 threads each red.global.v4.f16x2.max the halves tid + j (j = 0..7) and
 * atom.global.v4.bf16.min 100 - tid - j: the maxima 63 + j and minima 37 - j come out whatever the order. */
Test(isa, vector_atomic_min_max_threads) {
    static const char *ptx = HEAD83
        ".visible .entry k(.param .u64 g)\n{\n .reg .b16 %h<12>;\n .reg .b32 %r<16>;\n .reg .f32 %f<4>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [g];\n mov.u32 %r1, %tid.x;\n"
        " cvt.rn.f32.u32 %f1, %r1;\n"
        " add.f32 %f2, %f1, 0f3F800000;\n cvt.rn.f16x2.f32 %r2, %f2, %f1;\n"               /* (tid, tid+1) */
        " mov.b32 %r3, 0x40004000;\n add.rn.f16x2 %r4, %r2, %r3;\n add.rn.f16x2 %r5, %r4, %r3;\n add.rn.f16x2 %r6, %r5, %r3;\n"
        " red.global.v4.f16x2.max.noftz [%rd1], {%r2, %r4, %r5, %r6};\n"
        " mov.f32 %f3, 0f42C80000;\n sub.f32 %f3, %f3, %f1;\n cvt.rn.bf16.f32 %h0, %f3;\n" /* 100 - tid - j */
        " mov.b16 %h9, 0xBF80;\n add.rn.bf16 %h1, %h0, %h9;\n add.rn.bf16 %h2, %h1, %h9;\n add.rn.bf16 %h3, %h2, %h9;\n"
        " atom.global.v4.bf16.min.noftz {%h4, %h5, %h6, %h7}, [%rd1+16], {%h0, %h1, %h2, %h3};\n ret;\n}\n";
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint16_t g[12] = {0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, /* f16 -inf */
                      0x7F80, 0x7F80, 0x7F80, 0x7F80};                                 /* bf16 +inf */
    uint64_t dg = buffer(d, g, sizeof g);
    launch_ok(d, f, 64, (void *[]){&dg});
    cr_assert_eq(dev_memcpy_dtoh(d, g, dg, sizeof g), DEV_OK);
    static const uint16_t f16_63[8] = {0x53E0, 0x5400, 0x5410, 0x5420, 0x5430, 0x5440, 0x5450, 0x5460}; /* 63 .. 70 */
    static const uint16_t bf16_37[4] = {0x4214, 0x4210, 0x420C, 0x4208};                                 /* 37 .. 34 */
    for (int j = 0; j < 8; j++) cr_expect_eq(g[j], f16_63[j], "f16x2 max half %d: %#06x, want %#06x", j, g[j], f16_63[j]);
    for (int j = 0; j < 4; j++) cr_expect_eq(g[8 + j], bf16_37[j], "bf16 min element %d: %#06x, want %#06x", j, g[8 + j], bf16_37[j]);
    dev_module_unload(m);
    dev_close(d);
}

/* What the vector forms do not have (ISA, atom's table): .min/.max on .f32 (and any float min/max without a
 * vector), .v8 of packed pairs, vectors on .shared, vectors before sm_90. */
Test(isa, vector_atomic_forms_refused) {
    const char *no_v[] = {
        " atom.global.v2.f32.min {%f1, %f2}, [%rd1], {%f1, %f2};\n",
        " red.global.min.f32 [%rd1], %f1;\n",
        " red.global.v8.f16x2.max.noftz [%rd1], {%r1, %r1, %r1, %r1, %r1, %r1, %r1, %r1};\n",
        " atom.global.v2.f16.exch {%h1, %h2}, [%rd1], {%h1, %h2};\n",
    };
    for (size_t i = 0; i < sizeof no_v / sizeof *no_v; i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, HEAD83 ".visible .entry k()\n{\n .reg .f32 %%f<3>;\n .reg .b32 %%r<3>;\n .reg .b16 %%h<3>;\n"
                 " .reg .b64 %%rd<2>;\n%s ret;\n}\n", no_v[i]);
        load_fails("emu:sm_90a", ptx, i == 1 ? "take a vector" : "unsupported vector atomic");
    }
    load_fails("emu:sm_90a", HEAD83 ".visible .entry k()\n{\n .reg .b16 %h<3>;\n .shared .align 4 .b8 s[4];\n"
               " red.shared.v2.f16.max.noftz [s], {%h1, %h2};\n ret;\n}\n", "on .global (or generic) addresses only");
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b16 %h<3>;\n .reg .b64 %rd<2>;\n"
               " red.global.v2.f16.max.noftz [%rd1], {%h1, %h2};\n ret;\n}\n", "needs .target sm_90 or later");
    /* and at run time: a generic address of shared memory */
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, HEAD83 ".visible .entry k()\n{\n .reg .b16 %h<3>;\n .reg .b64 %rd<2>;\n .shared .align 4 .b8 s[4];\n"
                              " cvta.shared.u64 %rd1, s;\n red.v2.f16.max.noftz [%rd1], {%h1, %h2};\n ret;\n}\n", &m);
    launch_fails(d, f, 1, NULL, DEV_ERR_LAUNCH, "needs a global address");
    dev_module_unload(m);
    dev_close(d);
}


/* ISA, .b128 (PTX 8.3): "mov.type d, {a, b}" packs with .b128 too (2 or 4 elements, the first the lowest),
 * "ld.global.b128 %r0, [gbl]; // 128-bit load", st the same, "atom.shared.b128.cas d, a, b, c; atom.global.b128.exch
 * d, a, b;" (cas(r,s,t) = (r == s) ? t : r, both halves compared; d the old value).  16-byte words of buf (lo, hi
 * as two u64; the host gives words 4, 7, 9, 11, 13):
 *   0: pack {L, H};  1: unpack, stored swapped;  2: copy, unpacked to 4 x b32, stored reversed;  3: repacked from
 *   those four;  5: ld of word 4;  6: word 4 through shared memory;  7: cas that matches -> {L, H}, 8: its old
 *   value;  9: cas that differs in the high half's bit 0 -> unchanged, 10: its old value;  11: exch through a
 *   generic address -> {L, H}, 12: its old value;  13: cas into `_` that matches zeros -> {L, H}. */
Test(isa, b128_registers) {
    static const char *ptx = HEAD83
        ".visible .entry k(.param .u64 buf)\n{\n .reg .b128 %q<4>;\n .reg .b64 %rd<12>;\n .reg .b32 %r<6>;\n"
        " .shared .align 16 .b8 s[16];\n"
        " ld.param.u64 %rd1, [buf];\n mov.u64 %rd2, 0x0123456789abcdef;\n mov.u64 %rd3, 0xfedcba9876543210;\n"
        " mov.b128 %q0, {%rd2, %rd3};\n st.global.b128 [%rd1], %q0;\n"
        " mov.b128 {%rd4, %rd5}, %q0;\n st.global.v2.b64 [%rd1+16], {%rd5, %rd4};\n"
        " mov.b128 %q1, %q0;\n mov.b128 {%r1, %r2, %r3, %r4}, %q1;\n st.global.v4.b32 [%rd1+32], {%r4, %r3, %r2, %r1};\n"
        " mov.b128 %q2, {%r1, %r2, %r3, %r4};\n st.global.b128 [%rd1+48], %q2;\n"
        " ld.global.b128 %q3, [%rd1+64];\n st.global.b128 [%rd1+80], %q3;\n"
        " st.shared.b128 [s], %q3;\n ld.shared.b128 %q1, [s];\n st.global.b128 [%rd1+96], %q1;\n"
        " ld.global.b128 %q1, [%rd1+112];\n atom.global.cas.b128 %q2, [%rd1+112], %q1, %q0;\n st.global.b128 [%rd1+128], %q2;\n"
        " ld.global.b128 %q1, [%rd1+144];\n mov.b128 {%rd6, %rd7}, %q1;\n xor.b64 %rd7, %rd7, 1;\n mov.b128 %q1, {%rd6, %rd7};\n"
        " atom.global.cas.b128 %q2, [%rd1+144], %q1, %q0;\n st.global.b128 [%rd1+160], %q2;\n"
        " atom.exch.b128 %q2, [%rd1+176], %q0;\n st.global.b128 [%rd1+192], %q2;\n"
        " mov.b64 %rd8, 0;\n mov.b128 %q1, {%rd8, %rd8};\n atom.global.cas.b128 _, [%rd1+208], %q1, %q0;\n ret;\n}\n";
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    const uint64_t L = 0x0123456789abcdefull, H = 0xfedcba9876543210ull;
    uint64_t w[28] = {0};
    for (int i = 0; i < 28; i++) w[i] = 0x5151515151515151ull * (uint64_t)(i + 1); /* poison */
    w[8] = 0x1111111122222222ull, w[9] = 0x3333333344444444ull;   /* word 4 */
    w[14] = 0xaaaaaaaaaaaaaaaaull, w[15] = 0xbbbbbbbbbbbbbbbbull; /* word 7 */
    w[18] = 0xccccccccccccccccull, w[19] = 0xddddddddddddddddull; /* word 9 */
    w[22] = 0x7777777777777777ull, w[23] = 0x8888888888888888ull; /* word 11 */
    w[26] = 0, w[27] = 0;                                         /* word 13 */
    uint64_t dbuf = buffer(d, w, sizeof w);
    launch_ok(d, f, 1, (void *[]){&dbuf});
    uint64_t o[28];
    cr_assert_eq(dev_memcpy_dtoh(d, o, dbuf, sizeof o), DEV_OK);
    const uint64_t want[28] = {L, H, H, L,
                               /* 2: the b32 parts of {L, H} reversed: H's high word first */
                               (H >> 32) | (H << 32), (L >> 32) | (L << 32), L, H,
                               w[8], w[9], w[8], w[9], w[8], w[9],
                               L, H, w[14], w[15],
                               w[18], w[19], w[18], w[19],
                               L, H, w[22], w[23], L, H};
    for (int i = 0; i < 28; i++)
        cr_expect_eq(o[i], want[i], "word %d %s: %#018llx, want %#018llx", i / 2, i % 2 ? "hi" : "lo", (unsigned long long)o[i],
                     (unsigned long long)want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* A 128-bit counter 256 threads (4 blocks, on two host workers) add 2^63 to with an atom.cas.b128 loop (the carry
 * crosses into the high half every other time): 256 * 2^63 = 2^71, {0, 128}, and every thread saw its own old
 * value once. */
Test(isa, b128_cas_counter) {
    static const char *ptx = HEAD83
        ".visible .entry k(.param .u64 c)\n{\n .reg .pred %p<3>;\n .reg .b128 %q<3>;\n .reg .b64 %rd<12>;\n"
        " ld.param.u64 %rd1, [c];\n ld.global.b128 %q0, [%rd1];\n"
        "$RETRY:\n mov.b128 {%rd2, %rd3}, %q0;\n add.cc.u64 %rd4, %rd2, 0x8000000000000000;\n addc.u64 %rd5, %rd3, 0;\n"
        " mov.b128 %q1, {%rd4, %rd5};\n atom.global.cas.b128 %q2, [%rd1], %q0, %q1;\n"
        " mov.b128 {%rd6, %rd7}, %q2;\n setp.ne.u64 %p1, %rd6, %rd2;\n setp.ne.or.u64 %p2, %rd7, %rd3, %p1;\n"
        " mov.b128 %q0, %q2;\n @%p2 bra $RETRY;\n ret;\n}\n";
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions opt = {.emu_host_threads = 2};
    cr_assert_eq(dev_open("emu:sm_90a", &opt, &d, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint64_t c[2] = {0, 0};
    uint64_t dc = buffer(d, c, sizeof c);
    cr_assert_eq(dev_launch(f, 4, 1, 1, 64, 1, 1, 0, NULL, (void *[]){&dc}), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK);
    cr_assert_eq(dev_memcpy_dtoh(d, c, dc, sizeof c), DEV_OK);
    cr_expect(c[0] == 0 && c[1] == 128, "counter {%#llx, %#llx}, want {0, 128}", (unsigned long long)c[0], (unsigned long long)c[1]);
    dev_module_unload(m);
    dev_close(d);
}

/* .b128 registers only where the ISA has them (both slots read and written), never an immediate (64 bits). */
Test(isa, b128_misuse_refused) {
    static const struct { const char *ins, *msg; } bad[] = {
        {" add.u64 %rd1, %q, 1;\n", "a .b128 register is an operand of mov"},
        {" mov.b64 %rd1, %q;\n", "a .b128 register is an operand of mov"},
        {" mov.b128 %q, 5;\n", ".b128 immediates are not supported"},
        {" mov.b128 %q, %rd1;\n", "operand 2 must be a .b128 register"},
        {" st.global.b128 [%rd1], %rd2;\n", "operand 2 must be a .b128 register"},
        {" ld.global.v2.b128 {%q, %q}, [%rd1];\n", "no vectors of .b128"},
        {" atom.global.add.b128 %q, [%rd1], %q;\n", ".b128 is a type of mov, ld, ldu, st and atom.cas/.exch only"},
        {" and.b128 %q, %q, %q;\n", ".b128 is a type of mov, ld, ldu, st and atom.cas/.exch only"},
        {" mov.b128 %q, {%rd1, %rd2, %rd1};\n", "mov.b128 packs or unpacks 2 or 4 registers"},
        {" mov.b128 {%q, %rd1}, %q;\n", "cannot be an element of {..}"},
        {" ld.global.u64 %rd1, [%q];\n", "a .b128 register is an operand of mov"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char ptx[512];
        snprintf(ptx, sizeof ptx, HEAD83 ".visible .entry k()\n{\n .reg .b128 %%q;\n .reg .b64 %%rd<3>;\n%s ret;\n}\n", bad[i].ins);
        load_fails("emu:sm_90a", ptx, bad[i].msg);
    }
    load_fails("emu", ".version 8.3\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b128 %q;\n .reg .b64 %rd<2>;\n"
               " atom.global.exch.b128 %q, [%rd1], %q;\n ret;\n}\n", "needs .target sm_90 or later");
}

/* test_emu_diff.c - the forms on which the emulator's load and ptxas disagreed, found by scripts/ptx_diff.py
 * (docs/testing.md): one-statement mutations of valid PTX that ptxas refuses and the emulator loaded (running them
 * as if a word were absent or with a meaning of its own), or that ptxas takes and the emulator refused.  Each
 * refused case must be refused by ptxas too (when it is installed) and at its line with a message naming the
 * form; each accepted one must load and assemble.
 *
 *   wgmma_vector_width  wgmma.mma_async's .v2/.v4, which ptxas takes where it is D's register count (it was
 *                       refused), and the widths ptxas refuses
 *   twice               a modifier written twice (red.async.relaxed.relaxed, ld.relaxed.relaxed, div.rn.rn) is
 *                       refused; the flags ptxas takes twice (.sat .sync .uni .approx ...) load
 *   plain_op_words      a state space, memory order, scope, cache word, layout or flag on an opcode that takes none
 *                       (div.rn.global.f32, setp.eq.gpu.u32, mul.lo.ca.u32, shr.wide.u32, ld.row.global, atom.and.cc);
 *                       ld's cache and eviction words and memory orders on atom, cp.async, ldmatrix, wmma, bar;
 *                       madc.hi.lo; redux.sync's operation by type
 *   one_of_a_kind       two types, spaces, roundings or comparisons (ld.global.u32.u32, ld.shared.param, div.rn.rp,
 *                       setp.lt.eq); required words (mma/wmma .aligned, shfl/vote/atom's operation, cp.async's two
 *                       spaces); a register list without .vN; fp8, tf32, 8-bit and .pred types where the opcode
 *                       takes none (add.e4m3, prmt.s8, redux.sync.add.pred), shfl/fns/cvta types
 *   operand_registers  setp's and vote's destinations, the carry chain's, atom's and red's operands of the type
 *   immediate_kinds     an integer immediate in a float operand (add.f32 %f, %f, 1; cvt.rzi.s32.f32 %r, 1), a float one in
 *                       an integer operand, a hex float of another size in a .bN one, any in a half or packed one
 *   immediate_values    the immediates ptxas takes, run: their values as the kernel reads them
 *   forms_and_order     setp.and without c, vote's mask a predicate, a guard on a call's .param, nanosleep's and
 *                       isspacep's missing type and space, clz.f16, mul.s32.wide, div.f32.full, mbarrier.parity.try_wait
 *   extern_globals      an .extern .global/.const variable the module does not define: loads zero-filled when sized, as
 *                       ptxas defines it ("ignoring extern qualifier"); refused unsized, with an initializer, or
 *                       defined again by a non-visible variable
 *   target_names        .target names ptxas does not know (sm_99, sm_1000000000000, sm_80a, sm_, in a list too) at
 *                       the line; the odd forms it takes (sm_80x, sm_075, compute_80, sm_4294967376) load
 *   gates               the PTX ISA version and .target each feature needs (emu/parse_gate.c): loaded at the first
 *                       that have it, refused one version and one target lower with what it needs
 *   blackwell_forms_need_sm_100  256-bit ld/st, f32 redux.sync and the swizzle atomicity refused below sm_100
 *   ptxas_answers_kept  ptxas's answers kept in the tool cache the refusal tests here and in test_emu_refuse read
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "test_emu_refusals.h"

/* PTX 8.7 for sm_90a, the instruction at line 14 */
#define P(ins)                                                                                                        \
    ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n"                          \
    " .reg .pred %p<4>;\n .reg .b16 %h<4>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<4>;\n .reg .f32 %f<16>;\n"             \
    " .reg .f64 %fd<4>;\n .shared .align 16 .b8 sm[256];\n mov.u64 %rd1, 0;\n " ins ";\nL1:\n ret;\n}\n"

#define WG(mods, d) "wgmma.mma_async.sync.aligned.m64n" mods " " d ", %rd1, %rd2, %p1, 1, 1, 0, 0"
#define D4 "{%f1, %f2, %f3, %f4}"
#define D8 "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}"

Test(diff, wgmma_vector_width) {
    static const Bad bad[] = {
        {P(WG("8k16.f32.f16.f16.v2", D4)), "ptx:14: 'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.v2': wgmma.mma_async's .v2 is "
                                            "not D's register count (4 registers"},
        {P(WG("16k16.f32.f16.f16.v4", D8)), "wgmma.mma_async's .v4 is not D's register count (8 registers"},
        {P(WG("16k16.f32.f16.f16.v8", D8)), "wgmma.mma_async's .v8 is not D's register count (8 registers, at most 128 bits"},
        {P(WG("8k16.f16.f16.f16.v4", "{%r1, %r2}")), "wgmma.mma_async's .v4 is not D's register count (2 registers"},
        {P(WG("8k16.f32.f16.f16.v4.v4", D4)), "wgmma.mma_async takes one vector width"},
        {P(WG("8k16.f32.f16.f16.v4.v2", D4)), "wgmma.mma_async takes one vector width"},
    };
    static const char *const good[] = { /* ptxas: warning "Vector Type not specified properly", and the same code */
        P(WG("8k16.f32.f16.f16.v4", D4)),
        P("wgmma.mma_async.v4.sync.aligned.m64n8k16.f32.f16.f16 " D4 ", %rd1, %rd2, %p1, 1, 1, 0, 0"),
        P("wgmma.mma_async.sync.aligned.m64n8k16.v4.f32.f16.f16 " D4 ", {%r1, %r2, %r3, %r4}, %rd2, %p1, 1, 1, 0"),
        P(WG("8k16.f16.f16.f16.v2", "{%r1, %r2}")),
        P(WG("16k16.f16.f16.f16.v4", "{%r1, %r2, %r3, %r4}")),
        P("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8.v4 {%r1, %r2, %r3, %r4}, %rd1, %rd2, %p1"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

#define RA "red.async%s.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r2], %r3, [%r1]"
Test(diff, twice) {
    static const Bad bad[] = {
        {P("red.async.relaxed.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r2], %r3, [%r1]"),
         "ptx:14: 'red.async.relaxed.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32': .relaxed written twice"},
        {P("red.async.relaxed.cluster.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r2], %r3, [%r1]"),
         ".cluster written twice"},
        {P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.mbarrier::complete_tx::bytes.add.u32 [%r2], %r3, [%r1]"),
         ".mbarrier::complete_tx::bytes written twice"},
        {P("st.relaxed.relaxed.gpu.global.u32 [%rd1], %r1"), "at most one memory order"}, /* refused before, by ld/st's check */
        {P("ld.global.ca.ca.u32 %r1, [%rd1]"), ".ca written twice"},
        {P("ld.global.nc.nc.u32 %r1, [%rd1]"), ".nc written twice"},
        {P("add.rn.rn.f32 %f1, %f2, %f3"), ".rn written twice"},
        {P("add.ftz.ftz.f32 %f1, %f2, %f3"), ".ftz written twice"},
        {P("setp.eq.eq.u32 %p1, %r1, %r2"), ".eq written twice"},
        {P("atom.global.add.add.u32 %r1, [%rd1], 1"), ".add written twice"},
        {P("mbarrier.arrive.release.release.cta.shared::cta.b64 %rd1, [%r1]"), ".release written twice"},
        {P("barrier.sync.aligned.aligned 0"), ".aligned written twice"},
        {P("ldmatrix.sync.aligned.m8n8.x4.trans.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5]"), ".trans written twice"},
        {P("shf.l.clamp.clamp.b32 %r1, %r2, %r3, %r4"), ".clamp written twice"},
        {P("fma.rn.oob.oob.f16 %h1, %h2, %h3, %h1"), ".oob written twice"},
    };
    static const char *const good[] = { /* ptxas takes these flags twice */
        P("add.sat.sat.s32 %r1, %r2, %r3"),
        P("cvt.rzi.sat.sat.s32.f32 %r1, %f1"),
        P("shfl.sync.sync.idx.b32 %r3, %r3, 0, 31, -1"),
        P("vote.sync.sync.all.pred %p1, %p1, -1"),
        P("bar.warp.sync.sync -1"),
        P("bra.uni.uni L1"),
        P("div.approx.approx.f32 %f1, %f2, %f3"),
        P("bfind.shiftamt.shiftamt.u32 %r1, %r2"),
        P("add.cc.cc.u32 %r1, %r2, %r3"),
        P("min.NaN.NaN.f32 %f1, %f2, %f3"),
        P("createpolicy.fractional.L2::evict_first.L2::evict_first.b64 %rd2, 0.5"),
        P("mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2}, {%r3, %r4}, "
          "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}"),
        P("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r2], %r3, [%r1]"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

Test(diff, plain_op_words) {
    static const Bad bad[] = {
        {P("div.rn.global.f32 %f1, %f2, %f3"), "ptx:14: 'div.rn.global.f32': div takes no state space (.global)"},
        {P("mov.shared.u32 %r1, %r2"), "mov takes no state space (.shared)"},
        {P("shfl.sync.idx.shared::cta.b32 %r3, %r3, 0, 31, -1"), "shfl takes no state space (.shared::cta)"},
        {P("setp.eq.gpu.u32 %p1, %r1, %r2"), "'setp.eq.gpu.u32': setp takes no memory order or scope (.gpu)"},
        {P("xor.b32.acquire %r1, %r2, %r3"), "xor takes no memory order or scope (.acquire)"},
        {P("redux.sync.add.cta.u32 %r1, %r2, -1"), "redux takes no memory order or scope (.cta)"},
        {P("nanosleep.sys.u32 5"), "nanosleep takes no memory order or scope (.sys)"},
        {P("mul.lo.ca.u32 %r1, %r2, %r3"), "'mul.lo.ca.u32': mul takes no cache operator or eviction priority (.ca)"},
        {P("mul.lo.L2::evict_last.u32 %r1, %r2, %r3"), "mul takes no cache operator or eviction priority (.L2::evict_last)"},
        {P("add.u32.L1::evict_last %r1, %r2, %r3"), "add takes no cache operator or eviction priority (.L1::evict_last)"},
        {P("add.s32.row %r1, %r2, %r3"), "'add.s32.row': add takes no layout (.row)"},
        {P("shr.wide.u32 %r1, %r2, 5"), "'shr.wide.u32': shr takes no .wide"},
        {P("add.rn.cc.f32 %f1, %f2, %f3"), "takes no .cc"},
        {P("min.u32.to %r1, %r2, %r3"), "min takes no .to"},
        {P("cvt.u32.to.u64 %r1, %rd1"), "cvt takes no .to"},
        {P("sin.approx.trans.f32 %f1, %f2"), "sin takes no .trans"},
        {P("bfe.u32.shiftamt %r1, %r2, 1, 2"), "bfe takes no .shiftamt"},
        /* the memory and matrix instructions' flags and layouts */
        {P("ld.row.global.u32 %r1, [%rd1]"), "'ld.row.global.u32': ld takes no layout (.row)"},
        {P("st.global.full.u32 [%rd1], %r1"), "'st.global.full.u32': st takes no .full"},
        {P("st.global.sync.u32 [%rd1], %r1"), "st takes no .sync"},
        {P("atom.global.and.b32.cc %r1, [%rd1], %r2"), "atom takes no .cc"},
        {P("cvta.to.global.u64.uni %rd2, %rd1"), "cvta takes no .uni"},
        {P("ldmatrix.sync.aligned.m8n8.x2.shared.hi.b16 {%r1, %r2}, [%r5]"), "ldmatrix takes no .hi"},
        {P("mma.sync.aligned.trans.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, "
           "{%f1, %f2, %f3, %f4}"), "mma takes no .trans"},
        {P("madc.hi.lo.cc.u32 %r1, %r2, %r3, %r4"), "'madc.hi.lo.cc.u32': madc takes one of .lo, .hi and .wide"},
        {P("mul.lo.wide.s32 %rd2, %r2, %r3"), "mul takes one of .lo, .hi and .wide"},
        /* ld's and st's words on the memory instructions that take none of them */
        {P("atom.global.ca.sys.add.f64 %fd1, [%rd1], %fd2"), "'atom.global.ca.sys.add.f64': atom takes no cache operator (.ca)"},
        {P("atom.global.L2::evict_first.exch.b32 %r1, [%rd1], %r2"), "atom takes no eviction priority (.L2::evict_first)"},
        {P("atom.shared.min.s32.L1::evict_last %r1, [%r2], %r3"), "atom takes no eviction priority (.L1::evict_last)"},
        {P("cp.async.ca.lu.shared.global [%r1], [%rd1], 4"), "cp.async takes one cache operator"},
        {P("cp.async.gpu.ca.shared.global [%r1], [%rd1], 4"), "cp.async takes no memory order or scope (.gpu)"},
        {P("cp.async.L2::evict_first.ca.shared.global [%r1], [%rd1], 4"), "cp.async takes no eviction priority (.L2::evict_first)"},
        {P("cp.async.ca.shared.aligned.global [%r1], [%rd1], 4"), "cp.async takes no flag"},
        {P("ldmatrix.sync.aligned.m8n8.weak.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5]"), "ldmatrix takes no memory order or scope (.weak)"},
        {P("ldmatrix.sync.aligned.m8n8.x4.ca.shared.b16 {%r1, %r2, %r3, %r4}, [%r5]"), "ldmatrix takes no cache operator (.ca)"},
        {P("wmma.load.b.release.sync.aligned.row.m32n8k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1]"),
         "wmma.load takes no memory order or scope (.release)"},
        {P("bar.release.sync 0"), "'bar.release.sync': bar takes no memory order or scope (.release)"},
        {P("bar.sync.cta 0"), "bar takes no memory order or scope (.cta)"},
        {P("bar.warp.sync.cs -1"), "bar.warp.sync takes no cache operator (.cs)"},
        {P("bar.warp.sync.s32 -1"), "bar.warp.sync takes no type"},
        {P("redux.sync.xor.u32 %r1, %r2, -1"), "'redux.sync.xor.u32': redux.sync .xor takes .b32, not .u32"},
        {P("redux.sync.add.b32 %r1, %r2, -1"), "redux.sync .add takes .u32 or .s32, not .b32"},
        {P("redux.or.sync.add.s32 %r1, %r2, -1"), "'redux.or.sync.add.s32': redux takes one operation"},
        {P("atom.global.add.max.u32 %r1, [%rd1], %r2"), "atom takes one operation"},
        {P("atom.acq_rel.gpu.global.add.f32.weak %f1, [%rd1], %f2"), "atom takes one memory order and one scope"},
        {P("red.relaxed.gpu.sys.global.add.u32 [%rd1], %r2"), "red takes one memory order and one scope"},
        {P("mma.sync.aligned.m16n8k16.row.rz.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, "
           "{%f1, %f2, %f3, %f4}"), "mma takes a rounding only on .f64"},
    };
    static const char *const good[] = {
        P("div.full.f32 %f1, %f2, %f3"),
        P("mul.wide.u32 %rd2, %r2, %r3"),
        P("madc.hi.cc.u32 %r1, %r2, %r3, %r4"),
        P("shf.r.wrap.b32 %r1, %r2, %r3, %r4"),
        P("bfind.shiftamt.s32 %r1, %r2"),
        P("min.NaN.xorsign.abs.f16 %h1, %h2, %h3"),
        P("movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2"),
        P("setmaxnreg.inc.sync.aligned.u32 240"),
        P("ld.global.nc.L2::cache_hint.u32 %r1, [%rd1], %rd2"),
        P("cvta.to.global.u64 %rd2, %rd1"),
        P("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r1, %r2}, [%r5]"),
        P("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4}"),
        P("atom.global.sys.add.f64 %fd1, [%rd1], %fd2"),
        P("atom.acq_rel.gpu.global.add.f32 %f1, [%rd1], %f2"),
        P("red.relaxed.gpu.global.add.u32 [%rd1], %r2"),
        P("atom.global.L2::cache_hint.exch.b32 %r1, [%rd1], %r2, %rd2"),
        P("cp.async.ca.shared.global.L2::128B [%r1], [%rd1], 4"),
        P("cp.async.cg.shared.global.L2::cache_hint [%r1], [%rd1], 16, %rd2"),
        P("barrier.cta.sync 0"),
        P("bar.warp.sync -1"),
        P("redux.sync.xor.b32 %r1, %r2, -1"),
        P("redux.sync.max.s32 %r1, %r2, -1"),
        P("mma.sync.aligned.m8n8k4.row.col.rn.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd1}, {%fd1, %fd2}"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

Test(diff, one_of_a_kind) {
    static const Bad bad[] = {
        {P("ld.global.u32.u32 %r1, [%rd1]"), "ptx:14: 'ld.global.u32.u32': ld takes one type"},
        {P("mul.lo.s32.u32 %r1, %r2, %r3"), "'mul.lo.s32.u32': mul takes one type"},
        {P("selp.f32.f32 %f1, %f2, %f3, %p1"), "selp takes one type"},
        {P("ld.shared.param.b16 %h1, [%r1]"), "'ld.shared.param.b16': ld takes one state space"},
        {P("div.rn.rp.f32 %f1, %f2, %f3"), "'div.rn.rp.f32': div takes one rounding modifier"},
        {P("setp.lt.eq.s32 %p1, %r1, %r2"), "'setp.lt.eq.s32': setp takes one comparison"},
        {P("mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4}"),
         "mma needs .sync.aligned"},
        {P("wmma.load.a.sync.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1]"), "wmma.load needs .sync.aligned"},
        {P("shfl.sync.b32 %r1, %r2, 1, 31, -1"), "'shfl.sync.b32': shfl needs its operation (.up .down .bfly .idx)"},
        {P("vote.sync.pred %p1, %p2, -1"), "vote needs its operation"},
        {P("atom.global.u32 %r1, [%rd1], %r2"), "atom needs its operation"},
        {P("cp.async.cg.shared [%r1], [%rd1], 16"), "'cp.async.cg.shared': cp.async copies .shared.global"},
        {P("st.global.b32 [%rd1], {%r1, %r2, %r3, %r4}"), "'st.global.b32': a list of 4 registers needs .v4"},
        {P("ld.global.b32 {%r1, %r2}, [%rd1]"), "a list of 2 registers needs .v2"},
        {P("add.e4m3 %h1, %h2, %h3"), "'add.e4m3': add takes no .e4m3 (the fp8 and tf32 types are cvt's"},
        {P("bfe.e5m2 %r1, %r2, 2, 3"), "bfe takes no .e5m2"},
        {P("selp.tf32 %r1, %r2, %r3, %p1"), "selp takes no .tf32"},
        {P("shfl.sync.bfly.u64 %rd1, %rd2, 2, 31, -1"), "'shfl.sync.bfly.u64': shfl takes .b32 here, not .u64"},
        {P("fns.u64 %r1, %r2, %r3, %r4"), "fns takes .b32 here"},
        {P("prmt.s8 %r1, %r2, %r3, 0x5410"), "'prmt.s8': prmt takes no 8-bit type (.s8"},
        {P("shf.l.wrap.u8 %r1, %r2, %r3, %r4"), "shf takes no 8-bit type (.u8"},
        {P("redux.sync.add.pred %r1, %r2, -1"), "'redux.sync.add.pred': redux.sync .add takes .u32 or .s32, not .pred"},
        {P("subc.pred %p1, %p2, %p3"), "subc takes no .pred"},
        {P("cvta.local.b64 %rd2, %rd1"), "'cvta.local.b64': cvta takes .u32 or .u64, not .b64"},
    };
    static const char *const good[] = {
        P("cvt.rn.f32.f64 %f1, %fd1"),
        P("set.lt.u32.f32 %r1, %f1, %f2"),
        P("slct.s32.s32 %r1, %r2, %r3, %r4"),
        P("dp4a.u32.s32 %r1, %r2, %r3, %r4"),
        P("cp.async.cg.shared.global [%r1], [%rd1], 16"),
        P("st.global.v4.b32 [%rd1], {%r1, %r2, %r3, %r4}"),
        P("st.global.b32 [%rd1], {%r1}"),
        P("cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2"),
        P("vote.sync.ballot.b32 %r1, %p1, -1"),
        P("vote.sync.any.pred %p1, %p2, -1"),
        P("and.pred %p1, %p2, %p3"),
        P("ld.global.u8 %r1, [%rd1]"),
        P("cvt.u8.u32 %h1, %r1"),
        P("cvta.local.u64 %rd2, %rd1"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* Operand registers of another size or kind than the instruction's type ("Arguments mismatch"): they loaded and ran
 * on the registers' bits (setp wrote 0 or 1 into a .b32, atom.add.u32 into a .b64). */
Test(diff, operand_registers) {
    static const Bad bad[] = {
        {P("setp.ge.f32 %r3, %f1, %f2"), "ptx:14: 'setp.ge.f32': operand 1, register '%r3' of type .b32, does not fit .pred"},
        {P("setp.ge.f32 %rd3, %f1, %f2"), "operand 1, register '%rd3' of type .b64, does not fit .pred"},
        {P("vote.sync.any.pred %rd3, %p1, -1"), "'vote.sync.any.pred': operand 1, register '%rd3' of type .b64, does not fit .pred"},
        {P("vote.sync.ballot.b32 %p2, %p1, -1"), "operand 1, register '%p2' of type .pred, does not fit .b32"},
        {P("subc.u32 %rd3, %r4, %r4"), "'subc.u32': operand 1, register '%rd3' of type .b64, does not fit .u32"},
        {P("addc.cc.u32 %r3, %rd2, %r4"), "operand 2, register '%rd2' of type .b64, does not fit .u32"},
        {P("madc.lo.u32 %r3, %r4, %r4, %rd2"), "operand 4, register '%rd2' of type .b64, does not fit .u32"},
        {P("atom.global.add.u32 %rd2, [%rd1], %r1"), "'atom.global.add.u32': operand 1, register '%rd2' of type .b64, does not fit .u32"},
        {P("atom.global.add.u32 %r2, [%rd1], %rd3"), "operand 3, register '%rd3' of type .b64, does not fit .u32"},
        {P("atom.global.add.u64 %rd2, [%rd1], %r3"), "operand 3, register '%r3' of type .b32, does not fit .u64"},
        {P("atom.global.add.u32 %f2, [%rd1], %r3"), "operand 1, register '%f2' of type .f32, does not fit .u32"},
        {P("atom.global.cas.b32 %r1, [%rd1], %r2, %rd3"), "operand 4, register '%rd3' of type .b64, does not fit .b32"},
        {P("red.global.add.u32 [%rd1], %rd3"), "'red.global.add.u32': operand 2, register '%rd3' of type .b64, does not fit .u32"},
    };
    static const char *const good[] = {
        P("setp.ge.f32 %p1, %f1, %f2"),
        P("vote.sync.any.pred %p1, %p2, -1"),
        P("vote.sync.ballot.b32 %r1, %p1, -1"),
        P("subc.u32 %r3, %r4, %r4"),
        P("atom.global.add.f32 %r2, [%rd1], %r3"),
        P("atom.global.add.u64 %rd2, [%rd1], %rd3"),
        P("atom.global.cas.b32 %r1, [%rd1], %r2, %r3"),
        P("atom.global.add.noftz.f16 %h1, [%rd1], %h2"),
        P("red.global.add.u32 [%rd1], %r3"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* An immediate of the kind its operand's type takes: a float type a float literal (1.0, 1e3, 0f.., 0d..), an integer type
 * an integer, .bN an integer or the hex float of its size, the half and packed types none (ptxas: "Arguments mismatch";
 * the emulator read 1 as 1.0). */
Test(diff, immediate_kinds) {
    static const Bad bad[] = {
        {P("add.f32 %f1, %f2, 1"), "ptx:14: 'add.f32': operand 3 is .f32, which takes a float immediate, not an integer one"},
        {P("setp.nan.f32 %p1, 1, %f1"), "operand 2 is .f32, which takes a float immediate"},
        {P("st.global.f32 [%rd1], 1"), "operand 2 is .f32, which takes a float immediate"},
        {P("st.global.v2.f32 [%rd1], {1, 2}"), "operand 2 is .f32, which takes a float immediate"},
        {P("cvt.rzi.s32.f32 %r1, 1"), "operand 2 is .f32, which takes a float immediate"},
        {P("mul.f64 %fd1, %fd2, 2"), "operand 3 is .f64, which takes a float immediate"},
        {P("add.f32 %f1, %f2, 1+2"), "operand 3 is .f32, which takes a float immediate"},
        {P("add.s32 %r1, %r2, 1.0"), "operand 3 is .s32, which takes an integer immediate, not a float one"},
        {P("add.s32 %r1, %r2, 0f3F800000"), "operand 3 is .s32, which takes an integer immediate"},
        {P("mov.b32 %r1, 1.0"), "operand 2 is .b32, which takes an integer immediate or the hex float of its size"},
        {P("mov.b32 %r1, 0d3FF0000000000000"), "operand 2 is .b32, which takes an integer immediate or the hex float"},
        {P("mov.b64 %rd1, 0f3F800000"), "operand 2 is .b64, which takes an integer immediate or the hex float"},
        {P("add.f16 %h1, %h2, 1.0"), "operand 3 is .f16, which takes no immediate"},
        {P("max.bf16x2 %r1, %r2, 0f3F800000"), "operand 3 is .bf16x2, which takes no immediate"},
        {P("min.u16x2 %r1, %r2, 1"), "operand 3 is .u16x2, which takes no immediate"},
        {P("cvt.f32.f16 %f1, 1.0"), "operand 2 is .f16, which takes no immediate"},
    };
    static const char *const good[] = {
        P("add.f32 %f1, %f2, 1.0"), P("add.f32 %f1, %f2, 0f3F800000"), P("add.f32 %f1, %f2, 1e3"),
        P("add.f32 %f1, %f2, 0d3FF0000000000000"), P("add.f64 %fd1, %fd2, 0f3F800000"), P("cvt.rn.f32.s32 %f1, 1"),
        P("cvt.rzi.s32.f32 %r1, 1.0"), P("mov.b32 %r1, 0f3F800000"), P("mov.b64 %rd1, 0d3FF0000000000000"),
        P("mov.b32 %r1, -1"), P("mov.b16 %h1, 0x3C00"), P("mov.pred %p1, 1"), P("add.s32 %r1, %r2, 1+2"),
        P("setp.lt.and.f32 %p1, %f1, 1.0, 1"), P("selp.b32 %r1, 0f3F800000, 1, %p1"), P("mov.b64 %rd1, {%r1, 1.0}"),
        P("st.global.v2.f32 [%rd1], {1.0, 0f00000000}"), P("createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0"),
        P("createpolicy.range.L2::evict_last.L2::evict_unchanged.b64 %rd1, [%rd2], 64, 128"),
        P("shfl.sync.bfly.b32 %r1, 0f3F800000, 1, 31, -1"),
        P("wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {1, %r2, %r3, %r4}, "
          "{%r5, %r6, %r7, %r8}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* The immediates' values as the kernel reads them: 1.0 and 0f3F800000 are 1.0f, 1e3 is 1000.0f, 0d.. in an .f32 operand
 * is the double rounded, -1 in .b32 all ones. */
Test(diff, immediate_values) {
    static const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n"
                             " .reg .b32 %r<4>;\n .reg .f32 %f<4>;\n .reg .b64 %rd<4>;\n ld.param.u64 %rd1, [out];\n"
                             " cvta.to.global.u64 %rd1, %rd1;\n mov.f32 %f1, 0f3F800000;\n add.f32 %f2, %f1, 1e3;\n"
                             " add.f32 %f3, %f2, 0d3FE0000000000000;\n st.global.f32 [%rd1], %f3;\n mov.b32 %r1, -1;\n"
                             " st.global.b32 [%rd1+4], %r1;\n st.global.v2.f32 [%rd1+8], {1.0, 0f40000000};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out;
    cr_assert_eq(dev_malloc(d, 16, &out), DEV_OK);
    cr_assert_eq(dev_memset_d8(d, out, 0xAB, 16), DEV_OK);
    void *params[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    float v[4];
    cr_assert_eq(dev_memcpy_dtoh(d, v, out, 16), DEV_OK);
    uint32_t bits;
    memcpy(&bits, &v[1], 4);
    cr_expect_eq(v[0], 1001.5f);
    cr_expect_eq(bits, 0xFFFFFFFFu);
    cr_expect_eq(v[2], 1.0f);
    cr_expect_eq(v[3], 2.0f);
    dev_free(d, out);
    dev_module_unload(m);
    dev_close(d);
}

/* setp's boolean operation with its c, vote's mask a 32-bit register, a guard on a call's .param store or load, the
 * types nanosleep, isspacep and the integer-only opcodes take, and the words that are part of an opcode's name. */
#define CALLER(ins)                                                                                                   \
    ".version 8.7\n.target sm_90a\n.address_size 64\n.func (.param .b32 r) f(.param .b32 x)\n{\n .reg .b32 %r<2>;\n" \
    " ld.param.b32 %r1, [x];\n st.param.b32 [r], %r1;\n ret;\n}\n.visible .entry k()\n{\n .reg .b32 %r<4>;\n"          \
    " .reg .pred %p<2>;\n setp.eq.u32 %p1, %r1, 0;\n .param .b32 a;\n .param .b32 b;\n " ins ";\n ret;\n}\n"
Test(diff, forms_and_order) {
    static const Bad bad[] = {
        {P("setp.ge.and.s32 %p1, %r1, %r2"), "ptx:14: 'setp.ge.and.s32': setp with .and/.or/.xor needs its fourth operand"},
        {P("vote.sync.any.pred %p1, %p2, %p3"), "ptx:14: 'vote.sync.any.pred': operand 3, register '%p3' of type .pred, does not fit .b32"},
        {P("vote.sync.ballot.b32 %r1, %p2, %p3"), "operand 3, register '%p3' of type .pred"},
        {P("vote.sync.all.pred %p1, %rd3, %r4"), "operand 2, register '%rd3' of type .b64, does not fit .pred"},
        {P("fence.proxy.u32.async.shared::cta"), "ptx:14: 'fence.proxy.u32.async.shared::cta': fence takes no type (.u32)"},
        {P("fence.sc.cta.b32"), "fence takes no type (.b32)"},
        {P("redux.add.s32 %r1, %r2, %r3"), "ptx:14: 'redux.add.s32': redux needs .sync"},
        {P("redux.sync.min.s32 %rd3, %r2, %r4"), "operand 1, register '%rd3' of type .b64, does not fit .s32"},
        {P("activemask.s16 %r1"), "activemask takes .b32 here, not .s16"},
        {P("match.any.sync.b16 %r1, %h1, %r2"), "match takes .b32 or .b64, not .b16"},
        {CALLER("@%p1 st.param.b32 [a], 1;\n call.uni (b), f, (a)"), "ptx:18: 'st.param.b32': a guard on a store of the call parameter 'a'"},
        {CALLER("st.param.b32 [a], 1;\n call.uni (b), f, (a);\n @!%p1 ld.param.b32 %r1, [b]"), "a guard on a load of the call parameter 'b'"},
        {P("nanosleep 100"), "ptx:14: 'nanosleep' needs a type: .u32"},
        {P("nanosleep.s32 100"), "nanosleep takes .u32 here, not .s32"},
        {P("isspacep %p1, %rd1"), "ptx:14: 'isspacep' needs the state space it tests"},
        {P("clz.f16 %r1, %h1"), "clz takes .b32 .b64 here, not .f16"},
        {P("and.bf16 %h1, %h2, %h3"), "and takes"},
        {P("max.u16x2 %rd1, %r1, %r2"), "ptx:14: 'max.u16x2': operand 1, register '%rd1' of type .b64, does not fit .u16x2"},
        {P("add.s16x2 %r1, %rd1, %r2"), "operand 2, register '%rd1' of type .b64, does not fit .s16x2"},
        {P("mul.s32.wide %rd1, %r1, %r2"), "ptx:14: 'mul.s32.wide': .lo, .hi or .wide comes right after mul"},
        {P("mad.cc.lo.s32 %r1, %r1, %r2, %r3"), ".lo, .hi or .wide comes right after mad"},
        {P("div.f32.full %f1, %f1, %f2"), ".full comes right after div"},
        {P("mbarrier.parity.try_wait.b64 %p1, [sm], %r1"), "mbarrier's operation comes right after it"},
        {P("mbarrier.shared.arrive.b64 %rd1, [sm]"), "mbarrier's operation comes right after it"},
        {P("mbarrier.try_wait.shared::cta.parity.b64 %p1, [sm], %r1"), ".parity comes right after test_wait or try_wait"},
        {P("mbarrier.arrive.row.b64 %rd1, [sm]"), "ptx:14: 'mbarrier.arrive.row.b64': mbarrier takes no .row"},
        {P("mbarrier.init.aligned.shared.b64 [sm], 1"), "mbarrier takes no .aligned"},
        {P("mbarrier.arrive.clamp.shared.b64 %rd1, [sm]"), "mbarrier takes no .clamp"},
        {P("fence.release.mbarrier_init.gpu"), "the form is fence.mbarrier_init.release.cluster"},
        {P("setmaxnreg.inc.sync.aligned.aligned.u32 64"), "is written setmaxnreg.inc.sync.aligned.u32"},
        {P("setmaxnreg.inc.sync.u32 64"), "is written setmaxnreg.inc.sync.aligned.u32"},
        {P("wmma.store.d.sync.aligned.m16n16k16.const.row.f32 [%rd1], " D8), "ptx:14: 'wmma.store.d.sync.aligned.m16n16k16.const.row.f32': "
                                                                       "wmma.load and wmma.store take a generic, .global or .shared[::cta] address"},
        {P("wmma.store.d.sync.aligned.m16n16k16.shared::cluster.row.f32 [%rd1], " D8), "take a generic, .global or .shared[::cta] address"},
        {P("wmma.load.c.sync.aligned.m16n16k16.local.row.f32 " D8 ", [%rd1]"), "take a generic, .global or .shared[::cta] address"},
        {P("wmma.load.sync.c.aligned.m16n16k16.global.row.f32 " D8 ", [%rd1]"), "the matrix (.a .b .c; .d) comes right after wmma.load"},
        {P("wmma.store.sync.d.aligned.m16n16k16.global.row.f32 [%rd1], " D8), "the matrix (.a .b .c; .d) comes right after wmma.store"},
        {P("cp.async.wait_group.lo 0"), "ptx:14: 'cp.async.wait_group.lo'"},
        {P("cp.async.commit_group.lo"), "'cp.async.commit_group.lo'"},
        {P("alloca.u64.wb %rd1, 16"), "'alloca.u64.wb'"},
        {P("stacksave.u64.wb %rd1"), "'stacksave.u64.wb'"},
        {P("cvt.rzi.relu.s32.f32 %r1, %f1"), "ptx:14: 'cvt.rzi.relu.s32.f32': .relu is for conversions to a float type"},
        {P("cvt.f16.bf16 %r1, %h1"), "operand 1, register '%r1' of type .b32, does not fit .f16"},
        {P("cvt.f32.bf16 %f1, %r1"), "operand 2, register '%r1' of type .b32, does not fit .bf16"},
        {P("cvt.rn.bf16.f32 %r1, %f1"), "operand 1, register '%r1' of type .b32, does not fit .bf16"},
        {P("wmma.load.c.sync.aligned.m16n16k16.global.row.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %rd1, %f8}, [%rd1]"),
         "ptx:14: 'wmma.load.c.sync.aligned.m16n16k16.global.row.f32': the registers of the fragment are 32-bit, not .b64 (element 7)"},
        {P("wmma.load.a.sync.aligned.m16n16k16.global.row.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %h2}, [%rd1]"),
         "the registers of the fragment are 32-bit, not .b16 (element 8)"},
        {P("wmma.load.a.sync.aligned.m8n8k4.global.row.f64 {%r1}, [%rd1]"), "the registers of the fragment are 64-bit, not .b32"},
        {P("wmma.mma.sync.aligned.m16n16k16.row.col.f32.f32 " D8 ", {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %rd1}, "
           "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, " D8), "the registers of A are 32-bit, not .b64 (element 8)"},
    };
    static const char *const good[] = {
        P("setp.ge.and.s32 %p1, %r1, %r2, %p2"), P("vote.sync.any.pred %p1, %p2, %r3"),
        CALLER("st.param.b32 [a], 1;\n call.uni (b), f, (a);\n ld.param.b32 %r1, [b]"),
        P("max.u16x2 %r1, %r2, %r3"), P("add.s16x2 %r1, %r2, %r3"), P("nanosleep.u32 100"), P("isspacep.param %p1, %rd1"), P("clz.b32 %r1, %r2"), P("mul.wide.s32 %rd1, %r1, %r2"),
        P("mad.lo.cc.s32 %r1, %r1, %r2, %r3"), P("div.full.f32 %f1, %f1, %f2"), P("mul.hi.s32 %r1, %r1, %r2"),
        P("mbarrier.try_wait.parity.shared::cta.b64 %p1, [sm], %r1"), P("mbarrier.try_wait.parity.acquire.cta.b64 %p1, [sm], %r1"),
        P("mbarrier.arrive.expect_tx.b64 %rd1, [sm], 16"), P("mbarrier.arrive.noComplete.shared.b64 %rd1, [sm], 1"),
        P("mbarrier.pending_count.b64 %r1, %rd1"), P("fence.release.mbarrier_init.cluster"), P("fence.cluster.release.mbarrier_init"),
        P("setmaxnreg.inc.sync.sync.aligned.u32 64"), P("setmaxnreg.dec.u32.sync.aligned 64"),
        P("wmma.store.d.sync.aligned.m16n16k16.shared::cta.row.f32 [%rd1], " D8), P("wmma.load.c.sync.aligned.m16n16k16.global.row.f32 " D8 ", [%rd1]"),
        P("wmma.load.c.sync.aligned.m16n16k16.global.row.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %r7, %f8}, [%rd1]"),
        P("wmma.load.a.sync.aligned.m8n8k4.global.row.f64 {%fd1}, [%rd1]"),
        P("wmma.load.c.aligned.sync.m16n16k16.global.row.f32 " D8 ", [%rd1]"), P("redux.sync.min.s32 %r3, %r2, %r4"), P("activemask.b32 %r1"),
        P("match.any.sync.b64 %r1, %rd1, %r2"), P("cp.async.wait_group 0"), P("cp.async.commit_group"),
        P("alloca.u64 %rd1, 16"), P("cvt.rn.relu.bf16.f32 %h1, %f1"), P("cvt.rn.f16.f32 %r1, %f1"), P("cvt.rzi.s32.bf16 %r1, %h2"),
        P("cvt.rn.bf16.s32 %h1, %r2"), P("cvt.rn.bf16x2.f32 %r1, %f1, %f2"), P("add.s32.sat %r1, %r1, %r2"), P("setp.f32.lt %p1, %f1, %f2"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* A kernel that stores the module's g (a .u32 declared by `decl`, before the kernel) and `after` (declarations after
 * it) into out[0]. */
static char *extern_ptx(const char *decl, const char *after) {
    Str s = {0};
    str_printf(&s, ".version 8.0\n.target sm_80\n.address_size 64\n%s\n.visible .entry k(.param .u64 out)\n{\n"
                   " .reg .b32 %%r<4>;\n .reg .b64 %%rd<4>;\n ld.param.u64 %%rd1, [out];\n cvta.to.global.u64 %%rd1, %%rd1;\n"
                   " ld.global.u32 %%r1, [g];\n st.global.u32 [%%rd1], %%r1;\n ret;\n}\n%s\n",
               decl, after);
    return str_take(&s);
}

/* out[0] after a one-thread launch of extern_ptx(decl, after), out poisoned first */
static uint32_t run_extern(TileDevice *d, const char *decl, const char *after) {
    char *ptx = extern_ptx(decl, after);
    check_ptxas_arch(ptx, "sm_80");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out;
    cr_assert_eq(dev_malloc(d, 4, &out), DEV_OK);
    cr_assert_eq(dev_memset_d8(d, out, 0xAB, 4), DEV_OK);
    void *params[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    uint32_t v = 0;
    cr_assert_eq(dev_memcpy_dtoh(d, &v, out, 4), DEV_OK);
    dev_free(d, out);
    dev_module_unload(m);
    free(ptx);
    return v;
}

Test(diff, extern_globals) {
    TileDevice *d = open_emu(false);
    /* undefined and sized: ptxas defines it ("ignoring extern qualifier"), zero-filled */
    cr_expect_eq(run_extern(d, ".extern .global .u32 g;", ""), 0u);
    cr_expect_eq(run_extern(d, ".extern .global .align 8 .b8 g[16];", ""), 0u);
    /* a .visible definition after the kernel is the variable the kernel reads (it read a zero-filled copy) */
    cr_expect_eq(run_extern(d, ".extern .global .u32 g;", ".visible .global .u32 g = 7;"), 7u);
    cr_expect_eq(run_extern(d, ".extern .global .b8 g[];", ".visible .global .align 4 .b8 g[4] = {1, 2, 3, 4};"), 0x04030201u);
    dev_close(d);
    char *bad[3] = {extern_ptx(".extern .global .b8 g[];", ""), extern_ptx(".extern .global .u32 g = 5;", ""),
                    extern_ptx(".extern .global .u32 g;", ".global .u32 g;")};
    const Bad b[] = {
        {bad[0], "ptx:4: '.extern' variable 'g' is unsized and the module does not define it"},
        {bad[1], "ptx:4: '.extern' variable 'g' takes no initializer"},
        {bad[2], "ptx:15: '.extern' variable 'g' is defined by a variable that is not .visible"},
    };
    expect_refused(b, ARRAY_LEN(b), NULL, 0, "sm_80");
    for (int i = 0; i < 3; i++) free(bad[i]);
}

/* .target's architecture names as ptxas reads them: sm_ or compute_, the SM's digits (modulo 2^32), then anything,
 * whose last character `a` or `f` names the variant.  An SM no GPU has (sm_1000000000000 loaded before), a variant
 * its SM lacks, no digits: refused at .target's line, as ptxas refuses them ("Unsupported .target 'sm_99'"), each
 * name of the list; the forms ptxas takes load. */
#define TG(t) ".version 9.0\n.target " t "\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n"
Test(refuse, target_names) {
    static const Bad bad[] = {
        {TG("sm_1000000000000"), "ptx:2: unsupported .target 'sm_1000000000000' (ptxas refuses it: no GPU has that SM)"},
        {TG("sm_18446744073709551696"), "ptx:2: unsupported .target 'sm_18446744073709551696' (ptxas refuses it: no GPU has that SM)"},
        {TG("sm_99"), "ptx:2: unsupported .target 'sm_99' (ptxas refuses it: no GPU has that SM)"},
        {TG("sm_85x"), "ptx:2: unsupported .target 'sm_85x'"},
        {TG("sm_8"), "ptx:2: unsupported .target 'sm_8'"},
        {TG("compute_85"), "ptx:2: unsupported .target 'compute_85'"},
        {TG("sm_"), "ptx:2: unsupported .target 'sm_' (ptxas refuses it: no SM number after the prefix)"},
        {TG("sm_x80"), "ptx:2: unsupported .target 'sm_x80' (ptxas refuses it: no SM number after the prefix)"},
        {TG("sm_80a"), "ptx:2: unsupported .target 'sm_80a' (ptxas refuses it: sm_80 has no 'a' variant)"},
        {TG("sm_80xa"), "ptx:2: unsupported .target 'sm_80xa' (ptxas refuses it: sm_80 has no 'a' variant)"},
        {TG("sm_90f"), "ptx:2: unsupported .target 'sm_90f' (ptxas refuses it: sm_90 has no 'f' variant)"},
        {TG("sm_80, sm_99"), "ptx:2: unsupported .target 'sm_99'"},          /* every name of the list */
        {TG("sm_80,\n sm_99"), "ptx:2: unsupported .target 'sm_99'"},        /* at .target's line, as ptxas */
        {TG("sm_80, texmode_independent, compute_1000"), "ptx:2: unsupported .target 'compute_1000'"},
    };
    static const char *const good[] = {
        TG("sm_80x"), TG("sm_80ab"), TG("sm_075"), TG("compute_80"), TG("sm_80a0"), TG("sm_80, sm_75"),
        TG("sm_4294967376"), /* 2^32 + 80: sm_80 to ptxas */
        TG("sm_82"), TG("sm_88"), TG("sm_10"), TG("compute_90a"), TG("sm_90fa"), TG("sm_75, texmode_independent"),
    };
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}
#undef TG

/* The PTX ISA version and .target each feature needs (emu/parse_gate.c), as ptxas checks them ("Feature
 * 'mbarrier.try_wait' requires PTX ISA .version 7.8 or later", "... requires .target sm_90 or higher"): each
 * case loads at the first version and target that have it, and is refused one version lower (with a target that
 * version supports) and one target lower, naming the feature and what it needs.  Before, any .version and
 * .target ran everything the emulator knows. */
typedef struct GateCase {
    const char *body;        /* the instruction(s) */
    const char *ok_v, *ok_t; /* the lowest .version and .target that take it */
    const char *lo_v, *lo_vt; /* a lower .version, with a .target it supports: refused for the version (NULL: none) */
    const char *lo_t;        /* a lower .target: refused for the target (NULL: none) */
    const char *name;        /* the feature, as the messages name it */
} GateCase;

static void gate_ptx(char *buf, size_t cap, const char *v, const char *t, const char *body) {
    snprintf(buf, cap,
             ".version %s\n.target %s\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
             " .reg .b32 %%r<10>;\n .reg .b64 %%rd<10>;\n .reg .pred %%p<4>;\n .reg .f32 %%f<8>;\n .reg .b16 %%h<8>;\n"
             " .reg .f64 %%fd<4>;\n .shared .align 8 .b64 mb;\n .shared .align 16 .b8 sbuf[256];\n"
             " ld.param.u64 %%rd1, [p];\n %s\n ret;\n}\n", /* the body is line 15 */
             v, t, body);
}

Test(refuse, gates) {
    static const GateCase cases[] = {
        {"cp.async.ca.shared.global [sbuf], [%rd1], 16;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "cp.async"},
        {"cp.async.wait_all;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "cp.async"},
        {"mbarrier.init.shared.b64 [mb], 32;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "mbarrier"},
        {"mbarrier.test_wait.parity.shared.b64 %p1, [mb], %r2;", "7.1", "sm_80", "7.0", "sm_80", NULL, "mbarrier .test_wait .parity"},
        {"mbarrier.try_wait.parity.shared.b64 %p1, [mb], %r2;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "mbarrier .try_wait"},
        {"mbarrier.arrive.expect_tx.shared.b64 %rd2, [mb], 16;", "8.0", "sm_90", "7.8", "sm_90", "sm_89", "mbarrier .expect_tx or .complete_tx"},
        {"mbarrier.arrive.release.cta.shared.b64 %rd2, [mb];", "8.0", "sm_80", "7.8", "sm_80", NULL, "mbarrier .relaxed or .acquire or .release"},
        /* .relaxed is newer on the arrivals and waits than on expect_tx and complete_tx */
        {"mbarrier.arrive.relaxed.cta.shared::cta.b64 %rd2, [mb];", "8.6", "sm_90", "8.5", "sm_90", "sm_89",
         "mbarrier .relaxed .arrive or .arrive_drop or .test_wait or .try_wait"},
        {"mbarrier.test_wait.relaxed.cta.shared::cta.b64 %p1, [mb], %rd2;", "8.6", "sm_90", "8.5", "sm_90", "sm_89", "mbarrier .relaxed .arrive"},
        {"mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 %rd2, [mb], 16;", "8.6", "sm_90", "8.5", "sm_90", "sm_89", "mbarrier .relaxed .arrive"},
        {"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [mb], 16;", "8.0", "sm_90", "7.8", "sm_90", "sm_89", "mbarrier .relaxed or"},
        {"mbarrier.arrive.shared.b64 %rd2, [mb], 2;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "mbarrier .arrive or .arrive_drop with count"},
        {"mbarrier.arrive_drop.noComplete.shared.b64 %rd2, [mb], 2;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "mbarrier"},
        {"mbarrier.arrive.shared::cta.b64 %rd2, [mb];", "7.8", "sm_80", "7.7", "sm_80", NULL, ".shared::cta"},
        {"redux.sync.add.u32 %r1, %r2, -1;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "redux.sync"},
        {"match.any.sync.b32 %r1, %r2, -1;", "6.0", "sm_70", "5.0", "sm_61", "sm_62", "match"},
        {"shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;", "6.0", "sm_61", "5.0", "sm_61", NULL, "shfl .sync"},
        {"activemask.b32 %r1;", "6.2", "sm_70", "6.1", "sm_70", NULL, "activemask"},
        {"nanosleep.u32 %r1;", "6.2", "sm_70", "6.1", "sm_70", "sm_62", "nanosleep"},
        {"elect.sync %r1|%p1, -1;", "8.0", "sm_90", "7.8", "sm_90", "sm_89", "elect.sync"},
        {"barrier.cta.sync 0;", "7.8", "sm_80", "7.7", "sm_80", NULL, "barrier .cta"},
        {"fence.acq_rel.cluster;", "7.8", "sm_90", NULL, NULL, "sm_89", ".cluster"},
        {"fence.proxy.async;", "8.0", "sm_90", "7.8", "sm_90", "sm_89", "fence .proxy .async"},
        {"ld.acquire.gpu.global.u32 %r1, [%rd1];", "6.0", "sm_70", "5.0", "sm_61", "sm_62", "ld or st or atom or red .relaxed or .acquire or .release"},
        {"ld.mmio.relaxed.sys.global.u32 %r1, [%rd1];", "8.2", "sm_80", "8.1", "sm_80", NULL, "ld or st .mmio"},
        {"st.mmio.relaxed.sys.global.u32 [%rd1], %r1;", "8.2", "sm_90", "8.1", "sm_90", NULL, "ld or st .mmio"},
        {"ld.global.L2::128B.u32 %r1, [%rd1];", "7.4", "sm_75", "7.3", "sm_75", "sm_72", ".L2::64B or .L2::128B"},
        {"ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;", "7.4", "sm_80", "7.3", "sm_80", "sm_75", ".L2::256B or .L2::cache_hint"},
        {"atom.global.v2.f16.add.noftz {%h1,%h2}, [%rd1], {%h3,%h4};", "8.1", "sm_90", "8.0", "sm_90", "sm_89", "atom or red .v2 or .v4 or .v8"},
        {"atom.global.cas.b16 %h1, [%rd1], %h2, %h3;", "6.3", "sm_70", "6.2", "sm_70", "sm_62", "atom .cas .b16"},
        {"bmsk.clamp.b32 %r1, %r2, %r3;", "7.6", "sm_70", "7.5", "sm_70", "sm_62", "bmsk or szext"},
        {"lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0x80, %p2;", "8.2", "sm_70", "8.1", "sm_70", "sm_62", "lop3 .and or .or"},
        {"dp4a.u32.u32 %r1, %r2, %r3, %r4;", "5.0", "sm_61", "4.3", "sm_53", "sm_60", "dp4a or dp2a"},
        {"tanh.approx.f32 %f1, %f2;", "7.0", "sm_75", "6.5", "sm_75", "sm_72", "tanh"},
        {"fma.rn.bf16 %h1, %h2, %h3, %h4;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "fma or abs or neg .bf16 or .bf16x2"},
        {"add.rn.bf16 %h1, %h2, %h3;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "add or sub or mul .bf16 or .bf16x2"},
        {"setp.lt.bf16x2 %p1|%p2, %r1, %r2;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "setp or set .bf16 or .bf16x2"},
        {"set.lt.bf16.f32 %h1, %f2, %f3;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "setp or set .bf16 or .bf16x2"},
        {"min.xorsign.abs.f32 %f1, %f2, %f3;", "7.2", "sm_86", "7.1", "sm_86", "sm_80", "min or max .xorsign"},
        {"max.relu.s32 %r1, %r2, %r3;", "8.0", "sm_90", "7.8", "sm_90", "sm_89", "min or max .relu"},
        {"cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;", "8.1", "sm_89", "8.0", "sm_89", "sm_87", "cvt .e4m3x2 or .e5m2x2"},
        {"cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;", "7.8", "sm_90", NULL, NULL, NULL, "cvt .e4m3x2 or .e5m2x2"},
        {"cvt.rn.satfinite.f16.f32 %h1, %f1;", "8.1", "sm_75", "8.0", "sm_90", NULL, "cvt .satfinite"},
        {"cvt.rn.tf32.f32 %r1, %f1;", "7.8", "sm_90", NULL, NULL, "sm_89", "cvt .rn or .rz .tf32"},
        {"cvt.rna.tf32.f32 %r1, %f1;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "cvt .bf16 or .bf16x2 or .tf32 or .relu"},
        /* bf16 conversions: the limits depend on the direction */
        {"cvt.f32.bf16 %f1, %h1;", "7.1", "sm_80", "7.0", "sm_80", "sm_75", "cvt to .f32 from .bf16"},
        {"cvt.rm.f32.bf16 %f1, %h1;", "7.1", "sm_80", "7.0", "sm_80", "sm_75", "cvt to .f32 from .bf16"},
        {"cvt.rn.bf16.f32 %h1, %f1;", "7.0", "sm_80", "6.5", "sm_75", "sm_75", "cvt .bf16 or"},
        {"cvt.ftz.f32.bf16 %f1, %h1;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "cvt from .bf16 .ftz"},
        {"cvt.f64.bf16 %fd1, %h1;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "cvt from .bf16"},
        {"cvt.rn.f16.bf16 %h1, %h2;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "cvt from .bf16"},
        {"cvt.rzi.s32.bf16 %r1, %h2;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "cvt from .bf16"},
        {"cvt.rn.bf16.f16 %h1, %h2;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "cvt to .bf16"},
        {"cvt.rn.bf16.f64 %h1, %fd1;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "cvt to .bf16"},
        {"cvt.rn.bf16.u64 %h1, %rd1;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "cvt to .bf16"},
        {"ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [sbuf];", "6.5", "sm_75", "6.4", "sm_75", "sm_72", "ldmatrix"},
        {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};",
         "7.0", "sm_80", "6.5", "sm_75", "sm_75", "mma .m16n8k16 or .m16n8k32"},
        {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};",
         "8.4", "sm_89", "8.3", "sm_89", "sm_87", "mma .e4m3 or .e5m2"},
        {"mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%fd1,%fd2,%fd3,%fd0}, {%fd1,%fd2}, {%fd0}, {%fd1,%fd2,%fd3,%fd0};",
         "7.8", "sm_90", "7.7", "sm_87", "sm_89", "mma .f64 .m16n8k4"},
        {"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r5,%r6}, {%f1,%f2,%f3,%f4}, %r3, 0;",
         "7.1", "sm_80", "7.0", "sm_80", "sm_75", "mma .sp"},
        {"mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r5,%r6}, "
         "{%f1,%f2,%f3,%f4}, %r3, 1;", "8.5", "sm_80", "8.4", "sm_80", "sm_75", "mma .sp::ordered_metadata"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8 {%r1,%r2,%r3,%r4}, %rd1, %rd2, %r5, 0, 1;", "8.2", "sm_90a", "8.1", "sm_90a",
         NULL, "wgmma .sp"},
        {"wgmma.mma_async.sync.aligned.m64n8k32.s32.u8.s8 {%r1,%r2,%r3,%r4}, %rd1, %rd2, 1;", "8.4", "sm_90a", "8.3", "sm_90a", NULL,
         "wgmma .s8 .u8"},
        {"cp.async.bulk.prefetch.L2.global [%rd1], 16;", "8.0", "sm_90", "7.8", "sm_90", "sm_89", "cp.async .bulk"},
        {"mov.u32 %r1, %clusterid.x;", "7.8", "sm_90", "7.7", "sm_87", "sm_89", "%clusterid or"},
        {"{ .reg .b128 %q; mov.b128 %q, {%rd1, %rd2}; }", "8.3", "sm_70", "8.2", "sm_90", NULL, "ld or ldu or st or mov .b128"},
        {"alloca.u64 %rd2, 16;", "7.3", "sm_52", "7.2", "sm_52", "sm_50", "alloca or stacksave or stackrestore"},
        /* they loaded below their versions: .shared::cta on atom, red and cvta; .param on cvta and isspacep; .param::entry;
         * membar.proxy; %current_graph_exec */
        {"atom.shared::cta.add.u32 %r1, [sbuf], 1;", "7.8", "sm_80", "7.7", "sm_80", NULL, ".shared::cta"},
        {"cvta.to.shared::cta.u64 %rd2, %rd1;", "7.8", "sm_80", "7.7", "sm_80", NULL, ".shared::cta"},
        {"cvta.param.u64 %rd2, %rd1;", "7.7", "sm_80", "7.6", "sm_80", NULL, "cvta or isspacep .param"},
        {"isspacep.param::entry %p1, %rd1;", "8.3", "sm_80", "8.2", "sm_80", NULL, ".param::entry"},
        {"membar.proxy.alias;", "7.5", "sm_80", "7.4", "sm_80", NULL, "fence or membar .proxy .alias"},
        {"mov.u64 %rd2, %current_graph_exec;", "8.0", "sm_80", "7.8", "sm_80", NULL, "%current_graph_exec"},
    };
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const GateCase *c = &cases[i];
        char ptx[2048], want[160];
        TileDevModule *m = NULL;
        gate_ptx(ptx, sizeof ptx, c->ok_v, c->ok_t, c->body);
        cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
        check_ptxas_arch(ptx, "sm_90a");
        if (m) dev_module_unload(m), m = NULL;
        for (int k = 0; k < 2; k++) {
            const char *v = k ? c->ok_v : c->lo_v, *t = k ? c->lo_t : c->lo_vt;
            if (!v || !t) continue;
            gate_ptx(ptx, sizeof ptx, v, t, c->body);
            /* the version: the feature named; the target: some rows of older checks (sm_90's) say it their way */
            if (k) snprintf(want, sizeof want, "needs .target %s", c->ok_t);
            else snprintf(want, sizeof want, "needs PTX ISA .version %s or later (the module's .version is %s)", c->ok_v, v);
            cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded:\n%s", ptx);
            const char *e = dev_last_error(d);
            cr_expect(strstr(e, "ptx:15: '") && strstr(e, want) && (k || strstr(e, c->name)), "'ptx:15: ... %s %s' not in: %s\n%s",
                      k ? "" : c->name, want, e, ptx);
            cr_expect(ptxas_refuses(ptx, "sm_90a"), "ptxas takes what the emulator refuses:\n%s", ptx);
            if (m) dev_module_unload(m), m = NULL;
        }
    }
    /* a .target newer than the .version */
    static const Bad bad[] = {
        {".version 6.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n",
         "ptx:2: PTX .version 6.5 does not support .target sm_80: it needs .version 7.0 or later"},
        {".version 7.8\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n", "needs .version 8.0 or later"},
    };
    static const char *const good[] = {".version 7.8\n.target sm_89\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n"};
    dev_close(d);
    expect_refused(bad, ARRAY_LEN(bad), good, ARRAY_LEN(good), "sm_90a");
}

/* Blackwell's forms: 256-bit loads and stores (PTX 8.8, sm_100), redux.sync on f32 and the swizzle
 * atomicity of a tensor map (8.6, sm_100a).  ptxas refuses them for sm_90a ("Feature '256 bit wide
 * load/store' requires .target sm_100 or higher", "Instruction 'redux.f32' not supported on .target
 * 'sm_90a'"); the emulator loaded them for sm_80 and sm_90a. */
Test(refuse, blackwell_forms_need_sm_100) {
    static const GateCase cases[] = {
        {"ld.global.v8.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f1}, [%rd1];", "8.8", "sm_100", "8.7", "sm_100", "sm_90a", "ld or st .v8"},
        {"st.global.v4.b64 [%rd1], {%rd1, %rd2, %rd3, %rd4};", "8.8", "sm_100", "8.7", "sm_100", "sm_90a", "ld or st .v4 .b64"},
        {"ld.global.nc.v4.f64 {%fd1, %fd2, %fd3, %fd1}, [%rd1];", "8.8", "sm_100", "8.7", "sm_100", "sm_90a", "ld or st .v4 .b64"},
        {"redux.sync.max.f32 %f1, %f2, -1;", "8.6", "sm_100a", NULL, NULL, "sm_100", "redux.sync .f32"},
        {"tensormap.replace.tile.swizzle_atomicity.global.b1024.b32 [%rd1], 1;", "8.6", "sm_100a", NULL, NULL, "sm_90a",
         "tensormap.replace .swizzle_atomicity"},
    };
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const GateCase *c = &cases[i];
        char ptx[2048], want[160], log[4096];
        TileDevModule *m = NULL;
        gate_ptx(ptx, sizeof ptx, c->ok_v, c->ok_t, c->body); /* plain emu loads PTX of any target */
        cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
        int rc = ptxas_run(ptx, c->ok_t, log, sizeof log);
        if (rc >= 0) cr_expect_eq(rc, 0, "ptxas -arch=%s refuses:\n%s\n%s", c->ok_t, log, ptx);
        if (m) dev_module_unload(m), m = NULL;
        for (int k = 0; k < 2; k++) {
            const char *v = k ? c->ok_v : c->lo_v, *t = k ? c->lo_t : c->lo_vt;
            if (!v || !t) continue; /* sm_100a needs 8.6 itself */
            gate_ptx(ptx, sizeof ptx, v, t, c->body);
            if (k) snprintf(want, sizeof want, "needs .target %s", c->ok_t);
            else snprintf(want, sizeof want, "needs PTX ISA .version %s or later (the module's .version is %s)", c->ok_v, v);
            cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded:\n%s", ptx);
            const char *e = dev_last_error(d);
            cr_expect(strstr(e, "ptx:15: '") && strstr(e, want) && strstr(e, c->name), "'ptx:15: ... %s %s' not in: %s\n%s", c->name,
                      want, e, ptx);
            cr_expect(ptxas_refuses(ptx, t), "ptxas -arch=%s takes what the emulator refuses:\n%s", t, ptx);
            if (m) dev_module_unload(m), m = NULL;
        }
    }
    dev_close(d);
}

#define ANSWERS_HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

/* ptxas's answers kept in the tool cache (tests/tool_cache.h): an accepted and a refused text are each kept
 * after the first run, read back with the same status and log, and a changed text is asked again. */
Test(diff, ptxas_answers_kept) {
    char dir[] = "/tmp/tile_tool_cacheXXXXXX", log1[8192], log2[8192], sub[600];
    cr_assert(mkdtemp(dir));
    setenv("TILE_TEST_TOOL_CACHE", dir, 1);
    static const char ok[] = ANSWERS_HEAD ".visible .entry k()\n{\n  ret;\n}\n", bad[] = ANSWERS_HEAD ".visible .entry k()\n{\n  frobnicate;\n}\n";
    int rc_ok = ptxas_run(ok, "sm_90", log1, sizeof log1);
    if (rc_ok < 0) cr_skip_test("ptxas not found: nothing is kept");
    cr_assert_eq(rc_ok, 0, "%s", log1);
    int rc_bad = ptxas_run(bad, "sm_90", log1, sizeof log1);
    cr_assert_neq(rc_bad, 0, "ptxas took %s", bad);
    tool_cache_dir("ptxas", sub, sizeof sub);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -eq 2", sub);
    cr_assert_eq(system(cmd), 0, "%s does not hold the two answers", sub);
    cr_assert_eq(ptxas_run(ok, "sm_90", log2, sizeof log2), 0);
    cr_assert_eq(ptxas_run(bad, "sm_90", log2, sizeof log2), rc_bad);
    cr_assert_str_eq(log2, log1, "the refusal's log is not the one kept");
    cr_assert(ptxas_refuses(bad, "sm_90") && !ptxas_refuses(ok, "sm_90"));
    cr_assert_eq(system(cmd), 0, "asking again added entries");
    /* another target is another question */
    cr_assert_eq(ptxas_run(ok, "sm_90a", log2, sizeof log2), 0, "%s", log2);
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -eq 3 && rm -rf '%s'", sub, dir);
    cr_assert_eq(system(cmd), 0, "an sm_90a answer was not kept apart");
}

/* .u2 and .s2 on any instruction but cvt.pack.sat: the emulator ran add.s2 on operands of no bytes (a shift by 64 in
 * its sign extension; found by fuzz_ptx, fuzz/regressions/ptx-launch-add-s2-sizeless-type.ptx) */
#define SUB_BYTE(ins)                                                                                                \
    {".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n " ins \
     "\n ret;\n}\n",                                                                                                 \
     "ptx:8: "}
Test(diff, sub_byte_types_only_in_cvt_pack) {
    static const Bad bad[] = {SUB_BYTE("add.s2 %rd2, %r1, 16;"), SUB_BYTE("sub.u2 %r2, %r1, 1;"), SUB_BYTE("mov.u2 %r2, %r1;"),
                              SUB_BYTE("min.s2 %r2, %r1, %r1;")};
    expect_refused(bad, ARRAY_LEN(bad), NULL, 0, "sm_80");
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) { /* the reason, beside the line */
        TileDevModule *m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, bad[i].ptx, &m), DEV_ERR_PTX);
        cr_expect(strstr(dev_last_error(d), ".u2 and .s2 are cvt.pack.sat's destination types only"), "%s", dev_last_error(d));
        if (m) dev_module_unload(m);
    }
    dev_close(d);
}

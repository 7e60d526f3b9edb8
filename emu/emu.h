/* emu.h - internal interface of the PTX emulator (emu/).
 *
 * The emulator runs the PTX text that the NVPTX backend emits, on the CPU.
 * Pipeline:
 *   1. parse.c   tokenises and parses a module (directives, globals, shared
 *                declarations, entries, .func bodies) and decodes every
 *                instruction into an EmuIns: opcode, types and modifiers as
 *                small enums, operands as *slot indices* into the thread's
 *                register file.  Immediates, symbol addresses and special
 *                registers also live in slots (constants are copied into each
 *                thread's register file from a template), so an operand read
 *                is always `r[slot]` with no kind test.
 *      module.c  then checks the module as a whole and places its
 *                variables (emu_module_finalize).
 *   2. exec.c    schedules a grid: blocks on host worker threads, threads of
 *                a block run one at a time until they block on a barrier,
 *                a warp- or warpgroup-collective instruction or an mbarrier
 *                wait, which fire once every participant has arrived.  Hot instruction forms have a
 *                pre-selected fast path (EmuIns.fast); everything else goes
 *                through the family executors below.
 *   3. exec_int.c / exec_float.c / exec_mem.c / exec_warp.c / exec_mma.c
 *                implement the instruction families (exec_video.c the video
 *                instructions); exec_mem.c also owns
 *                bounds checking (memcheck) and the shared-memory race
 *                detector; exec_call.c calls, frames and the builtins
 *                (vprintf, __assertfail); exec_async.c the sm_90 mbarrier,
 *                bulk and tensor copies (tensormap.c: tensor maps);
 *                exec_wgmma.c warpgroup instructions (wgmma, setmaxnreg)
 *                and stmatrix.
 *   4. fpconv.c  exact IEEE conversions (f64/f32 -> f16/bf16/tf32/f32 with
 *                every rounding mode).
 *
 * Register values are stored as uint64_t; a narrower write stores the value
 * zero- (or, for signed loads, sign-) extended and every read truncates to
 * the instruction's width, so declared register widths never matter at run
 * time.  Predicates are 0 or 1.  A .b128 register is two consecutive slots,
 * the low 64 bits first; only mov, ld, ldu, st and atom.cas/.exch of .b128
 * (the instructions the PTX ISA gives such registers) name it.
 *
 * Everything here is internal to jit/; the device layer (device_emu.c) is the
 * only user. */
#ifndef TILE_JIT_EMU_H
#define TILE_JIT_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "support/support.h"
#include "support/target.h"

/* ---- instructions: EMU_OP(enum, ptx name, semantics) ----
 * The name is matched against the longest dot-separated prefix of the
 * opcode token, so "bar.warp.sync" wins over "bar" and "cp.async.wait_group"
 * over "cp.async". */
#define EMU_OPS(X) \
    X(MOV, "mov", "d = a; {a,b,..} packs/unpacks lanes little-endian; d = address of a symbol") \
    X(LD, "ld", "d = mem[a+off] in a state space; .v2/.v4 load consecutive elements") \
    X(LDU, "ldu", "same as ld.global (uniform load)") \
    X(ST, "st", "mem[a+off] = b; .v2/.v4 store consecutive elements") \
    X(CVTA, "cvta", "convert an address between a state space and generic (.to: generic to space)") \
    X(ISSPACEP, "isspacep", "p = whether the generic address a lies in the state space's window") \
    X(CVT, "cvt", "d = convert(a) from ty2 to ty with rounding (.rn .rz .rm .rp .rni .rzi .rmi .rpi .rna), .sat, .ftz") \
    X(CVT_PACK, "cvt.pack", "d = sat(a) << n | sat(b) in ty (n bits each), above them c's low bits (.u8 .s8 .u4 .s4 .u2 .s2)") \
    X(ADD, "add", "d = a + b (.sat for s32, .rn/.rz/.rm/.rp/.ftz/.sat for floats, f16x2/bf16x2 lanewise)") \
    X(SUB, "sub", "d = a - b") \
    X(MUL, "mul", "d = a * b; integers .lo/.hi/.wide, floats rounded") \
    X(MAD, "mad", "d = a * b + c; integers .lo/.hi/.wide, floats as fma") \
    X(ADDC, "addc", "d = a + b + CF (the carry flag); .cc: CF = carry out (add.cc, sub.cc, mad.cc set CF too)") \
    X(SUBC, "subc", "d = a - (b + CF); .cc: CF = borrow out (sub.cc: CF = a < b)") \
    X(MADC, "madc", "d = lo/hi(a * b) + c + CF; .cc: CF = carry out") \
    X(MUL24, "mul24", "d = low 24 bits of a * low 24 bits of b (.lo/.hi)") \
    X(MAD24, "mad24", "d = mul24(a, b) + c") \
    X(SAD, "sad", "d = |a - b| + c") \
    X(FNS, "fns", "d = the position of the c-th set bit of a from bit b upward (c > 0) or downward (c < 0); c = 0: b if that bit is set; else 0xffffffff") \
    X(BMSK, "bmsk", "d = ones in bits [a, a + b) (.clamp: a and b clamped to 32; .wrap: taken mod 32)") \
    X(SZEXT, "szext", "d = the low b bits of a, sign- (.s32) or zero- (.u32) extended (.clamp: b at most 32; .wrap: b mod 32); b = 0 gives 0") \
    X(LOP3, "lop3", "d = the bitwise function of a, b, c whose truth table is the immediate (bit (a<<2 | b<<1 | c) of it)") \
    /* the scalar video instructions (exec_video.c): a and b the byte, half or word their selectors pick (.b0-.b3 .h0 .h1), \
     * sign- or zero-extended by .atype/.btype to 33 bits; the result exact, .sat clamped to the dtype's range (of d's \
     * byte or half with a d selector); then .add/.min/.max with c (extended by the dtype), or merged into c at d.bN/d.hN */ \
    X(VADD, "vadd", "scalar video: d = a + b, then .sat, the secondary operation with c or the merge into c") \
    X(VSUB, "vsub", "scalar video: d = a - b") \
    X(VABSDIFF, "vabsdiff", "scalar video: d = |a - b|") \
    X(VMIN, "vmin", "scalar video: d = min(a, b)") \
    X(VMAX, "vmax", "scalar video: d = max(a, b)") \
    X(VSHL, "vshl", "scalar video: d = a << b (b unsigned; .clamp: at most 32, .wrap: mod 32), kept to 34 bits signed") \
    X(VSHR, "vshr", "scalar video: d = a >> b (arithmetic for a signed a; .clamp / .wrap as vshl)") \
    X(VMAD, "vmad", "scalar video: d = (a * b) + c in 128 bits; -a xor -b negates the product, -c c; .po adds 1; .shr7/.shr15 shift right; .sat to the s32 or u32 range of the result's sign") \
    X(VSET, "vset", "scalar video: d = (a CMP b) ? 1 : 0 (.atype.btype.cmp), then the secondary operation or merge as vadd") \
    X(VABSDIFF2, "vabsdiff2", "SIMD: |a - b| per 16-bit lane (.atype/.btype signedness); .add: d = c + the sum of the lanes") \
    X(VABSDIFF4, "vabsdiff4", "SIMD: |a - b| per byte lane (.atype/.btype signedness); .add: d = c + the sum of the lanes") \
    X(VADD2, "vadd2", "SIMD: a + b per 16-bit lane (.sat to the dtype's lane range, else wrapped); .add: d = c + the lanes' sum") \
    X(VADD4, "vadd4", "SIMD: a + b per byte lane") \
    X(VSUB2, "vsub2", "SIMD: a - b per 16-bit lane") \
    X(VSUB4, "vsub4", "SIMD: a - b per byte lane") \
    X(VAVRG2, "vavrg2", "SIMD: (a + b + 1) >> 1 per 16-bit lane") \
    X(VAVRG4, "vavrg4", "SIMD: (a + b + 1) >> 1 per byte lane") \
    X(VMIN2, "vmin2", "SIMD: min(a, b) per 16-bit lane") \
    X(VMIN4, "vmin4", "SIMD: min(a, b) per byte lane") \
    X(VMAX2, "vmax2", "SIMD: max(a, b) per 16-bit lane") \
    X(VMAX4, "vmax4", "SIMD: max(a, b) per byte lane") \
    X(VSET2, "vset2", "SIMD: 1 per 16-bit lane where a CMP b holds (.atype.btype.cmp), else 0") \
    X(VSET4, "vset4", "SIMD: 1 per byte lane where a CMP b holds") \
    X(DP4A, "dp4a", "d = c + the dot product of a's and b's four bytes (.atype.btype: .u32/.s32 each, signed bytes for .s32)") \
    X(DP2A, "dp2a", "d = c + a's two 16-bit halves times bytes 0-1 (.lo) or 2-3 (.hi) of b (.atype.btype as dp4a)") \
    X(DIV, "div", "d = a / b; integer division truncates, b == 0 gives all ones; floats .rn/.approx/.full") \
    X(REM, "rem", "d = a % b (C semantics for signed)") \
    X(ABS, "abs", "d = |a|") \
    X(NEG, "neg", "d = -a") \
    X(MIN, "min", "d = min(a, b); floats: NaN loses unless .NaN; -0 < +0") \
    X(MAX, "max", "d = max(a, b); floats: NaN loses unless .NaN; -0 < +0") \
    X(FMA, "fma", "d = a * b + c with one rounding") \
    X(RCP, "rcp", "d = 1 / a (.rn exact, .approx)") \
    X(SQRT, "sqrt", "d = sqrt(a) (.rn exact, .approx)") \
    X(RSQRT, "rsqrt", "d = 1 / sqrt(a) (.approx)") \
    X(EX2, "ex2", "d = 2^a (.approx)") \
    X(LG2, "lg2", "d = log2(a) (.approx)") \
    X(SIN, "sin", "d = sin(a) (.approx)") \
    X(COS, "cos", "d = cos(a) (.approx)") \
    X(TANH, "tanh", "d = tanh(a) (.approx)") \
    X(COPYSIGN, "copysign", "d = |b| with the sign of a") \
    X(TESTP, "testp", "p = class test of a (.finite .infinite .number .notanumber .normal .subnormal)") \
    X(AND, "and", "d = a & b (pred: logical and)") \
    X(OR, "or", "d = a | b") \
    X(XOR, "xor", "d = a ^ b") \
    X(NOT, "not", "d = ~a (pred: logical not)") \
    X(CNOT, "cnot", "d = (a == 0)") \
    X(SHL, "shl", "d = a << b, b clamped to the width (result 0)") \
    X(SHR, "shr", "d = a >> b, arithmetic for .s, clamped to the width") \
    X(SHF, "shf", "funnel shift .l/.r with .wrap/.clamp: d = bits of {b:a} shifted by c") \
    X(SETP, "setp", "p[|q] = cmp(a, b) [bool c]; q = !cmp [bool c]") \
    X(SET, "set", "d = cmp(a, b) ? all ones (1.0f for .f32 dest) : 0") \
    X(SELP, "selp", "d = c ? a : b") \
    X(SLCT, "slct", "d = c >= 0 ? a : b") \
    X(POPC, "popc", "d = number of set bits of a") \
    X(CLZ, "clz", "d = number of leading zeros of a") \
    X(BREV, "brev", "d = a with bits reversed") \
    X(BFIND, "bfind", "d = position of the most significant non-sign bit (.shiftamt: distance from msb), ~0 if none") \
    X(BFE, "bfe", "d = bits [b, b+c) of a, sign-extended for .s") \
    X(BFI, "bfi", "d = b with bits [c, c+d) replaced by the low bits of a") \
    X(PRMT, "prmt", "d = bytes of {b,a} selected by nibbles of c; .f4e .b4e .rc8 .ecl .ecr .rc16 by c[1:0]") \
    X(BRA, "bra", "pc = target") \
    X(BRX, "brx.idx", "pc = the a-th target of a .branchtargets table (a bra over the table, then one bra per target)") \
    X(CALL, "call", "call a .func: copy arguments, run it, copy results back") \
    X(RET, "ret", "return from a .func; in an entry, end the thread") \
    X(EXIT, "exit", "end the thread") \
    X(TRAP, "trap", "abort the launch with an error") \
    X(BAR_WARP, "bar.warp.sync", "wait until every lane of the member mask arrives") \
    X(BAR, "bar", "bar.sync / bar.arrive / bar.red.{popc,and,or}: block barrier a (thread count b); arrive does not wait; red reduces c over the participants into d") \
    X(BARRIER, "barrier", "barrier[.cta].sync / .arrive / .red[.aligned]: as bar") \
    X(SHFL, "shfl", "shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, mask: read a from another lane") \
    X(VOTE, "vote", "vote.sync.{all,any,uni}.pred / .ballot.b32 over the member mask") \
    X(MATCH, "match", "match.any.sync.b32/b64 d, a, mask: d = lanes of the mask whose a equals this lane's; match.all: d = mask if all are equal, else 0 (p: whether)") \
    X(REDUX, "redux", "redux.sync.{add,min,max}.{u32,s32} / {and,or,xor}.b32 d, a, mask: d = the operation over a of every lane of the mask") \
    X(ACTIVEMASK, "activemask", "d = mask of the warp's lanes at this instruction together (when every lane waits or exited)") \
    X(ATOM, "atom", "d = mem[a]; mem[a] = op(mem[a], b [, c]) atomically") \
    X(RED, "red", "mem[a] = op(mem[a], b) atomically") \
    X(MEMBAR, "membar", "memory barrier (no effect: the emulator is sequentially consistent per block)") \
    X(FENCE, "fence", "memory fence (no effect)") \
    X(PREFETCH, "prefetch", "cache hint [a] (no effect)") \
    X(PREFETCHU, "prefetchu", "prefetchu.L1 [a]: uniform L1 prefetch hint (no effect)") \
    X(PMEVENT, "pmevent", "pmevent a (an event 0..15) / pmevent.mask a (a 16-bit mask): trigger performance-monitor events (no effect)") \
    X(BRKPT, "brkpt", "suspend execution for a debugger: there is none, so the launch stops with an error naming the line") \
    X(NANOSLEEP, "nanosleep", "sleep hint (no effect)") \
    X(ALLOCA, "alloca", "d = a's bytes of the frame's stack (local memory), aligned to b (default 8): C's alloca, VLAs") \
    X(STACKSAVE, "stacksave", "d = the frame's stack pointer (local memory), for stackrestore") \
    X(STACKRESTORE, "stackrestore", "give back what alloca took since the stacksave that gave a") \
    X(CREATEPOLICY, "createpolicy", "d = a cache policy (.fractional/.range/.cvt; an opaque 64-bit value that the .L2::cache_hint operands ignore)") \
    X(DISCARD, "discard", "discard.global.L2 [a], 128: the line's data becomes undefined (no effect: it keeps its value)") \
    X(APPLYPRIORITY, "applypriority", "applypriority.global.L2::evict_normal [a], size: an eviction priority (no effect)") \
    X(CP_ASYNC_COMMIT, "cp.async.commit_group", "close the current group of cp.async copies") \
    X(CP_ASYNC_WAIT, "cp.async.wait_group", "wait until at most a groups are pending (copies are eager: no effect)") \
    X(CP_ASYNC_WAIT_ALL, "cp.async.wait_all", "wait for every cp.async (no effect)") \
    X(CP_ASYNC_MBAR, "cp.async.mbarrier.arrive", "[a]: an arrive-on of the mbarrier a when the thread's cp.async copies complete (at once: they are done at issue); .noinc: it counts as one of the phase's arrivals, else the pending count is raised by one first (no net change)") \
    X(CP_ASYNC, "cp.async", "shared[a] = global[b], c bytes, bytes past src-size d are zero") \
    X(LDMATRIX, "ldmatrix", "warp-collective: lane l gets, per 8x8 b16 matrix i, row l/4 cols 2(l%4),+1 (.trans: transposed); lanes 8i..8i+7 give the row addresses") \
    X(MOVMATRIX, "movmatrix", "warp-collective .m8n8.trans.b16 d, a: lane l's a holds row l/4 cols 2(l%4),+1 of an 8x8 b16 matrix (low half first); d gets the same fragment of its transpose") \
    X(MMA, "mma", "warp-collective D = A*B + C on m16n8k{4,8,16,32,64} and m8n8k{4,16,32} fragments (f16, bf16, tf32, s8, u8, s4, u4, e4m3, e5m2, f64; f32/f16/s32/f64 accumulators); .b1 on m8n8k128, m16n8k{128,256}: D = C + popc(row of A and/xor column of B)") \
    X(WMMA_LOAD, "wmma.load", "warp-collective: the fragment of matrix a, b or c (.row/.col in memory at [p], stride elements apart) into the registers d") \
    X(WMMA_STORE, "wmma.store", "warp-collective: the fragment d into memory at [p] (.row/.col, stride elements apart)") \
    X(WMMA_MMA, "wmma.mma", "warp-collective D = A*B + C on wmma fragments (m16n16k16, m32n8k16, m8n32k16: f16, bf16, s8, u8; m16n16k8: tf32; m8n8k4: f64; m8n8k32: s4, u4); m8n8k128 .b1: D = C + popc(row of A and/xor column of B)") \
    X(STMATRIX, "stmatrix", "warp-collective: the inverse of ldmatrix: lane l gives, per 8x8 b16 matrix i, row l/4 cols 2(l%4),+1 (.trans: transposed); lanes 8i..8i+7 give the row addresses") \
    /* ---- Hopper (sm_90): exec_async.c, exec_wgmma.c ---- */ \
    X(MBARRIER, "mbarrier", "64-bit barrier object in shared memory: .init count, .arrive [count] / .arrive_drop, .expect_tx / .complete_tx bytes, .arrive.expect_tx, .test_wait / .try_wait [.parity] (p = the phase completed; try_wait blocks the thread until it has, or answers false when nothing else can move), .inval, .pending_count") \
    X(ST_ASYNC, "st.async", "[a] = b (.v2/.v4) in the shared memory of a CTA of the cluster, then b's bytes complete tx on mbarrier c (of that CTA)") \
    X(RED_ASYNC, "red.async", "[a] op= b (.add .min .max .inc .dec .and .or .xor) in the shared memory of a CTA of the cluster, then completes tx on mbarrier c (of that CTA)") \
    X(ELECT, "elect.sync", "warp-collective: d = the lowest lane of the member mask that is present, p = (this lane is it)") \
    X(SETMAXNREG, "setmaxnreg", "warpgroup-collective register budget hint (.inc/.dec .u32 imm, a multiple of 8 in 24..256, the same in all 4 warps); no other effect") \
    X(CP_BULK, "cp.async.bulk", "async copy of c bytes (a multiple of 16): global->shared completing tx bytes on mbarrier d, or shared->global in the bulk group") \
    X(CP_BULK_TENSOR, "cp.async.bulk.tensor", "async copy of one box of a tensor map (.1d-.5d .tile), or of an im2col map's pixels (.3d-.5d .im2col loads with 16-bit offsets, .im2col_no_offs stores): global->shared completing tx bytes on an mbarrier, or shared->global in the bulk group; OOB: zero / skipped") \
    X(CP_BULK_COMMIT, "cp.async.bulk.commit_group", "close the current bulk group (copies are done at issue: no effect)") \
    X(CP_BULK_WAIT, "cp.async.bulk.wait_group", "wait until at most a bulk groups are pending (.read: their reads); copies are done at issue: no effect") \
    X(TENSORMAP_REPLACE, "tensormap.replace", "write one field of a 128-byte tensor map in shared or global memory (.tile .global_address .rank .box_dim .global_dim .global_stride .element_stride .elemtype .interleave_layout .swizzle_mode .swizzle_atomicity .fill_mode; [a], [ord,] new_val)") \
    X(GRIDDEP, "griddepcontrol", "griddepcontrol.wait / .launch_dependents (programmatic dependent launch): no effect, launches run one after another") \
    X(CP_BULK_PREFETCH, "cp.async.bulk.prefetch", "cp.async.bulk.prefetch[.tensor.Nd].L2.global [a], size | [tmap, {c..}]: an L2 prefetch hint, no effect") \
    X(CLUSTER_BAR, "barrier.cluster", "barrier.cluster.arrive[.release|.relaxed][.aligned] / .wait[.acquire][.aligned]: every live thread of every CTA of the cluster arrives; wait blocks until the phase it arrived in completes") \
    X(MAPA, "mapa", "mapa[.shared::cluster].u32/.u64 d, a, rank: a's address in the shared memory of the cluster's CTA rank (EMU_DSMEM_TAG)") \
    X(GETCTARANK, "getctarank", "getctarank[.shared::cluster].u32/.u64 d, a: the rank of the CTA whose shared memory holds a") \
    X(CP_RED_BULK, "cp.reduce.async.bulk", "[d] op= [s] elementwise over c bytes (.add .min .max .inc .dec .and .or .xor, the type's elements): shared->global in the bulk group, or shared->shared::cluster completing tx bytes on mbarrier") \
    X(CP_RED_BULK_TENSOR, "cp.reduce.async.bulk.tensor", "one box of a tensor map op= a shared tile (.1d-.5d .tile, or .3d-.5d .im2col_no_offs through an im2col map, .bulk_group; the element type from the map; OOB skipped)") \
    X(TENSORMAP_CP, "tensormap.cp_fenceproxy", "warp-collective: copy a 128-byte tensor map from shared to global memory ([d], [s], 128); the proxy fence has no effect") \
    X(WGMMA_FENCE, "wgmma.fence", "warpgroup-collective: order register accesses before the following wgmma.mma_async") \
    X(WGMMA_COMMIT, "wgmma.commit_group", "warpgroup-collective: the uncommitted wgmma.mma_async ops become a group") \
    X(WGMMA_WAIT, "wgmma.wait_group", "warpgroup-collective: retire all but the newest a groups: their results are written to the accumulator registers") \
    X(WGMMA, "wgmma.mma_async", "warpgroup-collective D = A*B (+ D) on m64nNk{8,16,32}: A from a descriptor or registers, B from a descriptor; result at the wait_group that retires it")

/* ---- functions the emulator provides: EMU_BUILTIN(enum, name, semantics) ----
 * A call to an `.extern .func` of one of these names, with no body in the
 * module, runs the builtin (exec_call.c). */
#define EMU_BUILTINS(X) \
    X(VPRINTF, "vprintf", "printf(fmt, args): fmt a generic char*, args a buffer of naturally aligned values; returns the argument count") \
    X(ASSERTFAIL, "__assertfail", "assert() failed: report message, file, line and function, and stop the launch") \
    X(MALLOC, "malloc", "malloc(size): a 16-byte aligned piece of the device heap (8 MiB), NULL when it has none left") \
    X(FREE, "free", "free(ptr): give back a piece malloc gave (NULL: nothing); another address stops the launch")
enum {
    EMU_BUILTIN_NONE,
#define X(e, n, s) EMU_BUILTIN_##e,
    EMU_BUILTINS(X)
#undef X
};

typedef enum EmuOp {
#define X(e, n, s) EMU_OP_##e,
    EMU_OPS(X)
#undef X
    EMU_OP_COUNT
} EmuOp;

/* ---- types: EMU_TYPE(enum, name, bytes, kind) ---- */
enum { EMU_K_NONE, EMU_K_PRED, EMU_K_B, EMU_K_U, EMU_K_S, EMU_K_F };
#define EMU_TYPES(X) \
    X(NONE, "", 0, EMU_K_NONE) \
    X(PRED, "pred", 1, EMU_K_PRED) \
    X(B8, "b8", 1, EMU_K_B) X(B16, "b16", 2, EMU_K_B) X(B32, "b32", 4, EMU_K_B) X(B64, "b64", 8, EMU_K_B) \
    X(B128, "b128", 16, EMU_K_B) \
    X(U8, "u8", 1, EMU_K_U) X(U16, "u16", 2, EMU_K_U) X(U32, "u32", 4, EMU_K_U) X(U64, "u64", 8, EMU_K_U) \
    X(S8, "s8", 1, EMU_K_S) X(S16, "s16", 2, EMU_K_S) X(S32, "s32", 4, EMU_K_S) X(S64, "s64", 8, EMU_K_S) \
    X(F16, "f16", 2, EMU_K_F) X(F16X2, "f16x2", 4, EMU_K_F) X(BF16, "bf16", 2, EMU_K_F) \
    X(BF16X2, "bf16x2", 4, EMU_K_F) X(TF32, "tf32", 4, EMU_K_F) X(F32, "f32", 4, EMU_K_F) X(F64, "f64", 8, EMU_K_F) \
    X(E4M3, "e4m3", 1, EMU_K_F) X(E5M2, "e5m2", 1, EMU_K_F) X(E4M3X2, "e4m3x2", 2, EMU_K_F) X(E5M2X2, "e5m2x2", 2, EMU_K_F) \
    X(U16X2, "u16x2", 4, EMU_K_U) X(S16X2, "s16x2", 4, EMU_K_S) \
    X(U4, "u4", 0, EMU_K_U) X(S4, "s4", 0, EMU_K_S) /* mma and wmma operands only (eight to a .b32 register); cvt.pack */ \
    X(B1, "b1", 0, EMU_K_B) /* mma and wmma operands only (32 to a .b32 register, bit 0 first) */ \
    X(U2, "u2", 0, EMU_K_U) X(S2, "s2", 0, EMU_K_S) /* cvt.pack only */

typedef enum EmuType {
#define X(e, n, b, k) EMU_T_##e,
    EMU_TYPES(X)
#undef X
    EMU_T_COUNT
} EmuType;
static inline bool emu_is_sub_byte(unsigned ty) { return ty == EMU_T_S4 || ty == EMU_T_U4; }
/* The tensor-core operand types narrower than a byte: s4, u4 and b1 (mma and wmma operands only). */
static inline bool emu_is_packed(unsigned ty) { return emu_is_sub_byte(ty) || ty == EMU_T_B1; }
/* The video instructions: scalar (vadd .. vset) and SIMD, vabsdiff, vadd, vsub, vavrg, vmin, vmax, vset on 2 (16-bit)
 * or 4 (8-bit) lanes (vabsdiff2 .. vset4). */
#define EMU_IS_VIDEO(op) ((op) >= EMU_OP_VADD && (op) <= EMU_OP_VSET4)
#define EMU_IS_VIDEO_SIMD(op) ((op) >= EMU_OP_VABSDIFF2 && (op) <= EMU_OP_VSET4)
#define EMU_IS_VSET(op) ((op) == EMU_OP_VSET || (op) == EMU_OP_VSET2 || (op) == EMU_OP_VSET4) /* .atype.btype.cmp */
#define EMU_VIDEO_LANES(op) (((op) - EMU_OP_VABSDIFF2) % 2 ? 4u : 2u)
/* The operand selectors of a video instruction (EmuIns.vsel).  Scalar: asel, bsel and dsel are EMU_VSEL_* (the
 * whole word when none is given; dsel: where d merges into c).  SIMD: asel and bsel hold each lane's source, one
 * of the four halves (2 bits) or eight bytes (3 bits) of {b, a}, lane 0 in the low bits; dsel the mask of the
 * lanes d takes from the operation (bit i: lane i; the others come from c). */
enum { EMU_VSEL_WORD, EMU_VSEL_B0, EMU_VSEL_B1, EMU_VSEL_B2, EMU_VSEL_B3, EMU_VSEL_H0, EMU_VSEL_H1 };
enum { EMU_VNEG_PRODUCT = 1, EMU_VNEG_C = 2 }; /* vmad: -a xor -b negates a * b; -c */
typedef struct EmuVideoSel {
    uint16_t asel, bsel;
    uint8_t dsel;
    uint8_t neg;            /* vmad: EMU_VNEG_* */
    uint8_t scale;          /* vmad: the right shift of .shr7 (7) or .shr15 (15), else 0 */
    bool po;                /* vmad: .po, plus one */
} EmuVideoSel;

/* ---- comparisons for setp/set: EMU_CMP(enum, name) ---- */
#define EMU_CMPS(X) \
    X(EQ, "eq") X(NE, "ne") X(LT, "lt") X(LE, "le") X(GT, "gt") X(GE, "ge") \
    X(LO, "lo") X(LS, "ls") X(HI, "hi") X(HS, "hs") \
    X(EQU, "equ") X(NEU, "neu") X(LTU, "ltu") X(LEU, "leu") X(GTU, "gtu") X(GEU, "geu") \
    X(NUM, "num") X(NAN, "nan")
typedef enum EmuCmp {
    EMU_CMP_NONE,
#define X(e, n) EMU_CMP_##e,
    EMU_CMPS(X)
#undef X
} EmuCmp;

/* ---- rounding modifiers ---- */
#define EMU_RNDS(X) \
    X(RN, "rn") X(RZ, "rz") X(RM, "rm") X(RP, "rp") X(RNA, "rna") \
    X(RNI, "rni") X(RZI, "rzi") X(RMI, "rmi") X(RPI, "rpi")
typedef enum EmuRnd {
    EMU_RND_NONE,
#define X(e, n) EMU_RND_##e,
    EMU_RNDS(X)
#undef X
} EmuRnd;

/* ---- state spaces ---- */
#define EMU_SPACES(X) \
    X(GENERIC, "generic") X(GLOBAL, "global") X(SHARED, "shared") X(LOCAL, "local") \
    X(PARAM, "param") X(CONST, "const")
typedef enum EmuSpace {
#define X(e, n) EMU_SP_##e,
    EMU_SPACES(X)
#undef X
} EmuSpace;

/* ---- flag modifiers: EMU_FLAG(enum, name) ---- */
#define EMU_FLAGS(X) \
    X(FTZ, "ftz") X(SAT, "sat") X(APPROX, "approx") X(FULL, "full") X(NC, "nc") \
    X(UNI, "uni") X(SYNC, "sync") X(ALIGNED, "aligned") X(NANP, "NaN") X(TO, "to") \
    X(WIDE, "wide") X(LO, "lo") X(HI, "hi") X(TRANS, "trans") X(SHIFTAMT, "shiftamt") \
    X(CLAMP, "clamp") X(WRAP, "wrap") X(L, "l") X(R, "r") X(XORSIGN, "xorsign") \
    X(ABSF, "abs") X(RELU, "relu") X(ARRIVE, "arrive") X(REDOP, "red") X(CC, "cc") \
    X(SATFINITE, "satfinite") X(PARITY, "parity") X(NOCOMPLETE, "noComplete") X(READ, "read") X(BULK_GROUP, "bulk_group") \
    X(NOINC, "noinc") X(CACHE_HINT, "L2::cache_hint")
enum {
#define X(e, n) EMU_FB_##e,
    EMU_FLAGS(X)
#undef X
};
#define EMU_F(e) (1u << EMU_FB_##e)
/* EmuIns.xflags: .multicast::cluster (cp.async.bulk[.tensor] into the shared memory of every CTA of a
 * 16-bit mask, its last operand); .shared::cta on isspacep (the thread's own CTA only, not the cluster's) */
/* The NaN a tensor copy writes for an out-of-bounds element in NaN fill mode (f16, bf16); fma.rn.oob reads it as "OOB" */
#define EMU_OOB_NAN16 0x7FFFu
enum { EMU_XF_MULTICAST = 1, EMU_XF_CTA = 2,
       EMU_XF_IM2COL = 2, /* cp.async.bulk.tensor, cp.reduce.async.bulk.tensor, cp.async.bulk.prefetch.tensor: .im2col or .im2col_no_offs */
       EMU_XF_OOB = 1, /* fma.rn.oob (the bit is cp.async.bulk's .multicast::cluster on those ops) */
       EMU_XF_IGNORE_SRC = 1, /* cp.async: operand 3 is the ignore-src predicate, not src-size */
       EMU_XF_UNIFIED = 1, /* ld, ldu: `[a].unified` (the address of a .unified variable: global memory only) */
       EMU_XF_PM_MASK = 1, /* pmevent.mask: the operand is a 16-bit mask, not an event number */
       EMU_XF_NOFTZ = 1, /* atom, red: .noftz (required on the f16 and bf16 adds, min and max; nowhere else) */
       EMU_XF_WM_COL = 4, EMU_XF_WM_COL_B = 8, /* wmma: .col (load, store; mma: A), mma: B .col; mma: A .col, B .col */
       EMU_XF_MMA_AND = 1, EMU_XF_MMA_XOR = 2, /* mma, wmma.mma on .b1: .and.popc, .xor.popc (the parser wants the .popc) */
       EMU_XF_MMA_SP = 16, EMU_XF_MMA_ORDERED = 32, /* mma.sp, wgmma.mma_async.sp (sparse A: metadata, selector operands); mma's ::ordered_metadata */
       EMU_XF_PROXY_ASYNC = 16, /* fence.proxy.async covering shared memory (not .global) */
       EMU_XF_ORDER = 32, /* fence.sc / .acq_rel / .acquire / .release, membar (not the proxy fences): orders memory */
       EMU_XF_ACQUIRE = 32, EMU_XF_RELEASE = 64, /* ld/st/atom/red .acquire, .release (.acq_rel: both) */
       EMU_XF_STRONG = 128 /* ld/st .relaxed, .acquire, .release, .volatile, .mmio: no data race (racecheck) */ };

/* ---- op-specific modes (shfl, vote, atom, testp, ldmatrix, mma) ---- */
#define EMU_MODES(X) \
    X(UP, "up") X(DOWN, "down") X(BFLY, "bfly") X(IDX, "idx") \
    X(ALL, "all") X(ANY, "any") X(VUNI, "uni") X(BALLOT, "ballot") \
    X(AADD, "add") X(AINC, "inc") X(ADEC, "dec") X(AMIN, "min") X(AMAX, "max") \
    X(AEXCH, "exch") X(ACAS, "cas") X(AAND, "and") X(AOR, "or") X(AXOR, "xor") \
    X(FINITE, "finite") X(INFINITE, "infinite") X(NUMBER, "number") X(NOTANUMBER, "notanumber") \
    X(NORMAL, "normal") X(SUBNORMAL, "subnormal") \
    X(X1, "x1") X(X2, "x2") X(X4, "x4") X(WM_A, "a") X(WM_B, "b") X(WM_C, "c") X(WM_D, "d") \
    X(M16N8K16, "m16n8k16") X(M16N8K8, "m16n8k8") X(M16N8K32, "m16n8k32") X(M16N8K4, "m16n8k4") X(M8N8K4, "m8n8k4") \
    X(M8N8K16, "m8n8k16") X(M8N8K32, "m8n8k32") X(M16N8K64, "m16n8k64") \
    X(M8N8K128, "m8n8k128") X(M16N8K128, "m16n8k128") X(M16N8K256, "m16n8k256") \
    X(MB_INIT, "init") X(MB_ARRIVE, "arrive") X(MB_ARRIVE_DROP, "arrive_drop") X(MB_EXPECT_TX, "expect_tx") \
    X(MB_COMPLETE_TX, "complete_tx") X(MB_TEST_WAIT, "test_wait") X(MB_TRY_WAIT, "try_wait") X(MB_INVAL, "inval") \
    X(MB_PENDING, "pending_count") X(MB_ARRIVE_EXPECT_TX, "arrive.expect_tx") \
    X(MB_ARRIVE_DROP_EXPECT_TX, "arrive_drop.expect_tx") \
    X(NREG_INC, "inc") X(NREG_DEC, "dec") \
    X(D1, "1d") X(D2, "2d") X(D3, "3d") X(D4, "4d") X(D5, "5d") X(BPOPC, "popc") \
    X(F4E, "f4e") X(B4E, "b4e") X(RC8, "rc8") X(ECL, "ecl") X(ECR, "ecr") X(RC16, "rc16") \
    X(TM_ADDR, "global_address") X(TM_RANK, "rank") X(TM_BOX, "box_dim") X(TM_GDIM, "global_dim") \
    X(TM_GSTRIDE, "global_stride") X(TM_ESTRIDE, "element_stride") X(TM_ELEMTYPE, "elemtype") \
    X(CL_WAIT, "wait") X(TM_INTERLEAVE, "interleave_layout") X(TM_SWIZZLE, "swizzle_mode") X(TM_ATOMICITY, "swizzle_atomicity") X(TM_FILL, "fill_mode")
typedef enum EmuMode {
    EMU_MODE_NONE,
#define X(e, n) EMU_MODE_##e,
    EMU_MODES(X)
#undef X
} EmuMode;

/* Fixed register-file slots of every function. */
enum {
    EMU_SLOT_ZERO = 0, /* constant 0: base of absolute addresses */
    EMU_SLOT_TRUE = 1, /* constant 1: the guard of unguarded instructions */
    EMU_SLOT_SINK = 2, /* the `_` operand: writes land here */
    EMU_SLOT_SREG = 3, /* first special register, in EMU_SREGS order */
};

/* ---- special registers: EMU_SREG(enum, name) ---- */
#define EMU_SREGS(X) \
    X(TID_X, "%tid.x") X(TID_Y, "%tid.y") X(TID_Z, "%tid.z") \
    X(NTID_X, "%ntid.x") X(NTID_Y, "%ntid.y") X(NTID_Z, "%ntid.z") \
    X(CTAID_X, "%ctaid.x") X(CTAID_Y, "%ctaid.y") X(CTAID_Z, "%ctaid.z") \
    X(NCTAID_X, "%nctaid.x") X(NCTAID_Y, "%nctaid.y") X(NCTAID_Z, "%nctaid.z") \
    X(LANEID, "%laneid") X(WARPID, "%warpid") X(NWARPID, "%nwarpid") X(SMID, "%smid") \
    X(NSMID, "%nsmid") X(GRIDID, "%gridid") X(LANEMASK_EQ, "%lanemask_eq") \
    X(LANEMASK_LT, "%lanemask_lt") X(LANEMASK_LE, "%lanemask_le") X(LANEMASK_GT, "%lanemask_gt") \
    X(LANEMASK_GE, "%lanemask_ge") X(CLOCK, "%clock") X(CLOCK64, "%clock64") X(CLOCK_HI, "%clock_hi") \
    X(GLOBALTIMER, "%globaltimer") X(GLOBALTIMER_LO, "%globaltimer_lo") X(GLOBALTIMER_HI, "%globaltimer_hi") \
    X(CURRENT_GRAPH_EXEC, "%current_graph_exec") /* 0: no launch comes from a CUDA graph */ \
    /* the performance-monitoring counters: 0 (the emulator counts no events; pmevent has no effect) */ \
    X(PM0, "%pm0") X(PM1, "%pm1") X(PM2, "%pm2") X(PM3, "%pm3") X(PM4, "%pm4") X(PM5, "%pm5") X(PM6, "%pm6") X(PM7, "%pm7") \
    X(PM0_64, "%pm0_64") X(PM1_64, "%pm1_64") X(PM2_64, "%pm2_64") X(PM3_64, "%pm3_64") X(PM4_64, "%pm4_64") \
    X(PM5_64, "%pm5_64") X(PM6_64, "%pm6_64") X(PM7_64, "%pm7_64") \
    X(AGGR_SMEM, "%aggr_smem_size") /* sm_90: %total_smem_size + the reserved region (EMU_RESERVED_SMEM) */ \
    X(DYN_SMEM, "%dynamic_smem_size") X(TOTAL_SMEM, "%total_smem_size") \
    X(WARPSZ, "WARP_SZ") \
    /* clusters (.reqnctapercluster, EmuOptions.cluster); without, every CTA is rank 0 of a 1 x 1 x 1 cluster */ \
    X(CLUSTER_CTAID_X, "%cluster_ctaid.x") X(CLUSTER_CTAID_Y, "%cluster_ctaid.y") X(CLUSTER_CTAID_Z, "%cluster_ctaid.z") \
    X(CLUSTER_NCTAID_X, "%cluster_nctaid.x") X(CLUSTER_NCTAID_Y, "%cluster_nctaid.y") X(CLUSTER_NCTAID_Z, "%cluster_nctaid.z") \
    X(CLUSTERID_X, "%clusterid.x") X(CLUSTERID_Y, "%clusterid.y") X(CLUSTERID_Z, "%clusterid.z") \
    X(NCLUSTERID_X, "%nclusterid.x") X(NCLUSTERID_Y, "%nclusterid.y") X(NCLUSTERID_Z, "%nclusterid.z") \
    X(CLUSTER_CTARANK, "%cluster_ctarank") X(CLUSTER_NCTARANK, "%cluster_nctarank") X(IS_EXPLICIT_CLUSTER, "%is_explicit_cluster") \
    /* reserved shared memory (cooperative groups' scratch on sm_80+): EMU_RESERVED_SMEM bytes after the block's own */ \
    X(RSMEM_BEGIN, "%reserved_smem_offset_begin") X(RSMEM_END, "%reserved_smem_offset_end") \
    X(RSMEM_CAP, "%reserved_smem_offset_cap") X(RSMEM_0, "%reserved_smem_offset_0") X(RSMEM_1, "%reserved_smem_offset_1") \
    /* the driver's environment registers: 0 (no cooperative launch: cooperative groups' grid workspace is absent) */ \
    X(ENVREG0, "%envreg0") X(ENVREG1, "%envreg1") X(ENVREG2, "%envreg2") X(ENVREG3, "%envreg3") X(ENVREG4, "%envreg4") X(ENVREG5, "%envreg5") X(ENVREG6, "%envreg6") X(ENVREG7, "%envreg7") \
    X(ENVREG8, "%envreg8") X(ENVREG9, "%envreg9") X(ENVREG10, "%envreg10") X(ENVREG11, "%envreg11") X(ENVREG12, "%envreg12") X(ENVREG13, "%envreg13") X(ENVREG14, "%envreg14") X(ENVREG15, "%envreg15") \
    X(ENVREG16, "%envreg16") X(ENVREG17, "%envreg17") X(ENVREG18, "%envreg18") X(ENVREG19, "%envreg19") X(ENVREG20, "%envreg20") X(ENVREG21, "%envreg21") X(ENVREG22, "%envreg22") X(ENVREG23, "%envreg23") \
    X(ENVREG24, "%envreg24") X(ENVREG25, "%envreg25") X(ENVREG26, "%envreg26") X(ENVREG27, "%envreg27") X(ENVREG28, "%envreg28") X(ENVREG29, "%envreg29") X(ENVREG30, "%envreg30") X(ENVREG31, "%envreg31")
enum {
#define X(e, n) EMU_SREG_##e,
    EMU_SREGS(X)
#undef X
    EMU_SREG_COUNT
};
/* Special registers read from a clock when a mov reads them (the fast mov leaves them to exec_mov). */
static inline bool emu_sreg_is_clock(uint32_t slot) {
    switch (slot - EMU_SLOT_SREG) {
    case EMU_SREG_CLOCK: case EMU_SREG_CLOCK_HI: case EMU_SREG_CLOCK64: case EMU_SREG_GLOBALTIMER: case EMU_SREG_GLOBALTIMER_LO:
    case EMU_SREG_GLOBALTIMER_HI:
        return true;
    default: return false;
    }
}

enum { EMU_MAX_OPS = 10, EMU_MAX_VEC = 128 }; /* operands of an instruction (wgmma.mma_async.sp has 10); elements of a {..} operand (wgmma's D: 128) */
/* Operand kinds, for validation and the few executors that care. */
enum { EMU_OK_NONE, EMU_OK_REG, EMU_OK_VEC, EMU_OK_ADDR, EMU_OK_LABEL, EMU_OK_FUNC };

/* An mma.sync's fragment geometry (emu_mma_form, exec_mma.c; EmuIns.mma). */
typedef struct EmuMmaForm {
    uint8_t rows;   /* M: 16, or 8 for the m8n8 integer shapes */
    uint16_t k;     /* mMn8k (up to 256: m16n8k256 .b1) */
    uint8_t epr;    /* A/B elements per 32-bit register */
    uint8_t na, nb; /* A and B registers per lane */
    uint8_t nc, nd; /* C and D registers per lane (4, or 2 for f16x2) */
    /* mma.sp: A holds K/2 values a row (na registers, laid out as the dense m16n8k(K/2) form's A); each 4-bit
     * metadata nibble covers a chunk of cw elements of a row (tf32 2, s4/u4 8, else 4) holding cw/2 of them;
     * mthreads lanes of each group of 4 give the metadata (1, 2 or 4); selectors up to selmax load (ptxas's
     * limit), up to 4/mthreads - 1 are defined */
    bool sparse;
    uint8_t cw, mthreads, selmax;
} EmuMmaForm;
/* A wgmma.mma_async's form (emu_wgmma_form, exec_wgmma.c; EmuIns.wgmma). */
typedef struct EmuWgmmaForm {
    uint16_t n;          /* N of m64nNkK */
    uint16_t k;          /* K */
    uint8_t esize;       /* bytes per A/B element */
    uint8_t nd;          /* D registers per thread */
    bool integer, f16acc;
    /* wgmma.mma_async.sp: A holds K/2 values a row (the dense m64nN(K/2) form's layout, in shared memory or
     * registers); a metadata nibble covers cw elements (tf32 2, else 4); mthreads lanes of each group of 4 give it */
    bool sparse;
    uint8_t cw, mthreads;
} EmuWgmmaForm;

/* One decoded instruction.  Operand i is o[i]: a slot for registers,
 * immediates and symbols; for a vector operand {a,b,..} the index of its
 * first element in EmuFunc.vec (on[i] elements); for an address [base+off]
 * the base slot, the offset in off[k] for the k-th address operand. */
typedef struct EmuIns {
    uint8_t op, fast;    /* EmuOp; EmuFast specialisation (0: generic executor) */
    uint8_t ty, ty2;     /* EmuType: main type; source type (cvt, set, mul.wide helpers); mma: D and A types */
    uint8_t rnd;         /* EmuRnd */
    union { uint8_t cmp, ty3; };  /* EmuCmp (setp, set); mma: the B type */
    uint8_t space, vec;  /* EmuSpace; vector width 1/2/4/8 */
    uint8_t mode;        /* EmuMode */
    uint8_t space2;      /* the second state space (source of cp.async.bulk copies); wgmma: the N of m64nNkK / 8 */
    union { uint8_t boolop, ty4; }; /* setp/set combining op (EMU_MODE_AAND/AOR/AXOR); mma: the C type */
    uint8_t gneg, nops;  /* guard negated; operand count */
    uint8_t xflags;      /* EMU_XF_* bits: rare modifiers (EMU_F's 32 bits are taken) */
    uint8_t disp;        /* the interpreter loop's handler: 1 + fast, or 0: the guard tested first (emu_fast_dispatch) */
    uint32_t flags;      /* EMU_F() bits */
    uint32_t guard;      /* predicate slot; EMU_SLOT_TRUE when unguarded */
    uint32_t o[EMU_MAX_OPS];
    uint8_t ok[EMU_MAX_OPS];
    uint8_t on[EMU_MAX_OPS];
    uint32_t ghint;      /* a global fast access (emu_fast_global): its entry in EmuBlock.gh, the last allocation it hit */
    union {
        int64_t off[3];      /* offsets of the address operands, in order */
        EmuVideoSel vsel;    /* video instructions (they have no address operand): the operand selectors, vmad's modifiers */
        struct {             /* call (no address operand): its arguments that are float literals (bit k: argument k, k < 64), */
            uint64_t flit, flit64; /* and which of those are 64-bit (0d..., 1.5); emu_call passes them as ptxas does */
        } call;
        /* mma / wgmma.mma_async (no address operand): the form emu_module_finalize decoded once, so each execution
         * does not again; k 0 where it was not decoded (or is not valid), and the executor decodes it itself */
        EmuMmaForm mma;
        EmuWgmmaForm wgmma;
    };
    uint32_t target;     /* branch target (instruction index) or callee function index */
    uint32_t line;       /* 1-based PTX line */
} EmuIns;

/* A constant slot that holds a symbol's address (filled at finalisation). */
typedef struct EmuSymFix {
    uint32_t slot, sym;
    int64_t addend;
} EmuSymFix;

/* Param-space address regions: kernel parameters (launch buffer), the
 * caller's call-sequence .param variables, and a .func's own arguments. */
#define EMU_PARAM_KERNEL 0x00000000u
#define EMU_PARAM_FRAME 0x10000000u
#define EMU_PARAM_ARGS 0x20000000u

typedef struct EmuParam {
    char *name;
    uint32_t offset, size, align;
    bool reg;                /* a .func's .reg parameter: register `slot` of the function, no bytes in its arguments area */
    uint32_t slot;
    uint8_t ty, vec;         /* its declared EmuType and vector width (prototypes agree on them: parse_func.c) */
    bool array;              /* declared name[...] (a[1] is not the scalar a) */
    bool incomplete;         /* name[] or name[0]: a .func's last argument only, of any size at a call */
} EmuParam;

/* An element of a call's argument or return list (EmuIns.o[0], o[2]): a .param variable (a symbol index) or,
 * with this bit, a register or immediate of the caller (a slot), which a .reg parameter takes. */
#define EMU_CALL_REG 0x80000000u

typedef struct EmuFunc {
    char *name;
    bool is_entry;
    bool defined;            /* has a body (not just a prototype) */
    bool is_extern;          /* declared .extern (every declaration of it is: parse_func.c) */
    uint8_t linkage;         /* its first declaration's .visible (1), .weak (2) or .common (3); 0: none */
    bool noreturn;           /* .noreturn */
    uint32_t alias1;         /* `.alias this, f;`: f's index + 1 (calls and addresses of this one reach f); 0: none */
    uint32_t line;           /* line of the .entry/.func directive */
    EmuIns *code;
    uint32_t ncode;
    uint32_t nslots;         /* register-file size in uint64_t slots */
    uint64_t *slot_init;     /* nslots values: constants filled in, registers 0 */
    uint32_t *vec;           /* vector operand pool */
    EmuParam *params;        /* entry: kernel params; .func: arguments */
    uint32_t nparams, param_size;
    EmuParam *rets;          /* .func return parameters */
    uint32_t nrets, ret_size;
    uint32_t frame_param_size; /* .param declarations inside the body (call sequences) */
    uint32_t local_size;     /* .local declarations, bytes */
    uint32_t reqntid[3], maxntid[3], reqnctapercluster[3];
    uint32_t maxclusterrank;  /* .maxclusterrank (0: none) */
    bool explicit_cluster;    /* .explicitcluster: launched as a cluster */
    bool address_taken;      /* a mov takes its address: indirect calls may reach it */
    uint32_t shared_used;    /* entry: static shared bytes it and its callees use (the GPU's view) */
    uint32_t shared_static;  /* entry: where its static shared memory ends (the module's .shared and .func
                              * ones, then its own): the bytes a block of it has without dynamic shared memory */
    EmuSymFix *symfix;       /* constant slots holding symbol addresses */
    uint32_t nsymfix;
    uint32_t *local_slots;   /* the constant slots among them holding .local addresses */
    uint32_t nlocal_slots;
    int builtin;             /* EmuBuiltin of an undefined .extern .func the emulator provides (vprintf, ...) */
    /* .reg declarations, for reports; width: slots per register (2 for .b128: low 64 bits first) */
    struct EmuRegName { const char *prefix; uint32_t plen; int64_t count; uint32_t base, width; } *regnames;
    uint32_t nregnames;
    /* An entry's registers on fewer slots, reused by liveness (slots.c): the form a launch runs unless
     * EmuOptions.one_slot_per_register; NULL when the function keeps one slot per register.  In that form
     * slot_orig gives each slot's slot in this one (names for reports), UINT32_MAX for a slot registers share. */
    struct EmuFunc *packed;
    uint32_t *slot_orig;
} EmuFunc;

/* Builds f->packed (slots.c), after the module is placed; emu_slots_free frees it. */
void emu_slots_pack(EmuFunc *f);
void emu_slots_free(EmuFunc *f);

/* The name of register slot `slot` of f ("%f12") into buf; "?" when it is not a declared register. */
const char *emu_slot_name(const EmuFunc *f, uint32_t slot, char *buf, size_t cap);

/* A module-level or function-level variable with an address. */
typedef struct EmuSym {
    char *name;
    uint8_t space;          /* EmuSpace */
    bool is_extern_shared;  /* `extern .shared` dynamic shared array */
    bool is_extern;         /* a module's `.extern .global`/`.const` not (yet) defined: zero-filled if sized (parse_decl.c) */
    uint32_t align;
    uint32_t line;          /* the PTX line of its declaration */
    bool array;             /* declared name[...]: a call passes it only for an array parameter (parse_func.c) */
    uint64_t size;
    uint64_t addr;          /* global/const: device address; shared: offset */
    uint8_t *init;          /* initial bytes (global/const), NULL: zero */
    bool hidden;            /* function-scope symbol of a finished function */
    int32_t entry_local;    /* .shared inside a kernel's body: 1 + that kernel's index in funcs (only it sees the
                             * variable, so each kernel lays out its own after the module's others); 0: none */
    struct EmuReloc *relocs; /* initializer elements that are addresses (arena), filled in when placed */
    uint32_t nrelocs;
} EmuSym;

/* A .func's own parameters (return values, then arguments: EmuFunc.param_size bytes) live in its frame's
 * local memory, after its static .local variables: their symbols' addresses are local addresses there
 * (relocated by the frame's base at each call, as .local ones), so `mov.b64 %rd, fn_param_0` followed by
 * cvta.local or ld.local (clang passes structs by value so) reaches them, from callees too. */
static inline bool emu_func_arg_sym(const EmuFunc *f, const EmuSym *s) {
    return !f->is_entry && s->space == EMU_SP_PARAM && s->addr >= EMU_PARAM_ARGS;
}
static inline uint32_t emu_args_offset(const EmuFunc *f) { return (f->local_size + 15) & ~15u; }

/* An address in an initializer: `.global .u64 p = generic(arr)+8;`, `ops[2] = {f, g}` (functions),
 * a vtable's entries.  name is a .global/.const variable or a function, resolved when the module is
 * placed in memory (emu_module_finalize). */
typedef struct EmuReloc {
    const char *name;
    uint32_t nlen;
    uint32_t offset;        /* in the symbol's bytes */
    int64_t addend;
    uint32_t line;
    uint8_t byte;           /* 0: the whole 8-byte address; k + 1: its byte k alone (the mask 0xFF << 8k of PTX 7.1,
                               `0xFF00(generic(g)+8)`, which LLVM writes for a pointer in a packed struct), shifted
                               down into an element of `size` bytes */
    uint8_t size;
} EmuReloc;


/* Callbacks the parser uses to place .global/.const variables in device memory. */
typedef struct EmuMem EmuMem;

/* A source location from a `.loc` directive: `.file` number, line, column (0: none). */
typedef struct EmuSrcLoc {
    uint32_t file, line, col;
    uint32_t ptx_line;      /* of the .loc, for errors */
} EmuSrcLoc;

typedef struct EmuModule {
    Arena *arena;
    char *text;             /* the PTX, for report lines */
    uint32_t *line_start;   /* offset of each line in text (1-based index) */
    uint32_t nlines;
    /* line info: `.file N "name"` and `.loc N line col` */
    struct EmuSrcFile { uint32_t num; const char *name; } *srcfiles;
    uint32_t nsrcfiles;
    EmuSrcLoc *srclocs;     /* [0] unused: index 0 is "no location" */
    uint32_t nsrclocs;
    uint32_t *line_srcloc;  /* by PTX line: the srclocs index of the instruction(s) on it; NULL: no .loc at all */
    /* An instruction on the PTX line of the one before it but with another .loc has a line key of its own, past
     * nlines: key nlines + 1 + i is vlines[i], its PTX line and srclocs index (EmuIns.line holds the key; reports map
     * it back with emu_module_ptx_line, so each instruction reports its own .loc; a line with one location has none) */
    struct EmuVLine { uint32_t line, srcloc; } *vlines;
    uint32_t nvlines;
    EmuFunc *funcs;
    uint32_t nfuncs;
    EmuSym *syms;
    uint32_t nsyms;
    uint32_t shared_static; /* static shared memory: the largest kernel's end (EmuFunc.shared_static: the module's variables, then its own) */
    uint32_t shared_dyn_align;
    uint32_t shared_dyn_offset; /* where `extern .shared` arrays start */
    bool reserved_smem;     /* reads %reserved_smem_offset_*: blocks get EMU_RESERVED_SMEM bytes more, after their own */
    bool uses_heap;         /* declares malloc or free (builtins): its launches make the device heap */
    uint32_t nghints;       /* instructions with an EmuIns.ghint (each block keeps that many EmuBlock.gh entries) */
    const Target *target;   /* from `.target`; NULL: not in the table (limits: the largest of any target) */
    uint8_t target_sm;      /* the SM of `.target`'s first sm_NN (or compute_NN) name, in the table or not (sm_100a: 100); 0: none */
    char target_name[24];   /* that name as written ("sm_100a"), for messages */
    EmuMem *mem;            /* where the globals live */
    uint32_t noted_early_acc; /* the note on an accumulator used before its wgmma.wait_group was written (atomic) */
} EmuModule;

/* ---- device memory (exec_mem.c) ---- */
/* Freed ranges memcheck remembers (memory freed earlier is outside any allocation in its reports): every free was
 * kept, 32 bytes each for the device's life (31 MB after 10^6 dev_malloc/dev_free pairs or cooperative launches). */
enum { EMU_FREED_KEEP = 4096 };
typedef struct EmuAlloc {
    uint64_t addr, size;
    uint8_t *host;
    bool module_var;        /* a .global/.const of a loaded module */
    bool readonly;          /* a .const variable: kernels may not write it */
    bool borrowed;          /* host is the caller's memory (emu_mem_map): never freed here */
} EmuAlloc;

struct EmuMem {
    EmuAlloc *a;            /* sorted by addr */
    uint32_t n, cap;
    uint64_t next;          /* bump pointer: addresses are never reused */
    EmuAlloc *freed;        /* recently freed ranges, for reports: the last EMU_FREED_KEEP at most, oldest first */
    uint32_t nfreed, capfreed;
    struct EmuHeap *heap;   /* the device heap kernels' malloc takes from (heap.c), made on first use */
};

/* The device heap (heap.c): malloc/free called by kernels. */
typedef struct EmuHeap EmuHeap;
enum { EMU_HEAP_BYTES = 8 << 20 }; /* CUDA's default cudaLimitMallocHeapSize */
bool emu_heap_ready(EmuMem *m);    /* make the heap if there is none (before a launch's threads start) */
void emu_heap_destroy(EmuMem *m);
uint64_t emu_heap_malloc(EmuMem *m, uint64_t size); /* 0 when out of heap (or size 0) */
bool emu_heap_free(EmuMem *m, uint64_t addr);       /* false: not a live piece of the heap (0 is fine) */

/* Generic-address windows of the state spaces (the rest is global). */
#define EMU_SHARED_WINDOW 0x0000100000000000ull
#define EMU_LOCAL_WINDOW 0x0000200000000000ull
#define EMU_PARAM_WINDOW 0x0000300000000000ull /* cvta.param: the kernel's parameters (read-only) */
#define EMU_WINDOW_SIZE 0x0000000100000000ull
/* Shared memory of a cluster: an address below EMU_DSMEM_TAG is in the accessing thread's own CTA;
 * (rank + 1) * EMU_DSMEM_TAG + offset (what mapa gives) is offset in the shared memory of the CTA of that
 * rank in the cluster.  In the generic window too (EMU_SHARED_WINDOW + such an address). */
#define EMU_DSMEM_TAG 0x01000000u
#define EMU_GLOBAL_BASE 0x0000500000000000ull
/* Each EmuMem (each emulated device) hands out addresses from its own range: EMU_GLOBAL_BASE plus the
 * next of EMU_MEM_RANGES slots of EMU_MEM_RANGE bytes, so a pointer of one context is no allocation of
 * another's (the runtime refuses it) unless 16 devices are open at once. */
#define EMU_MEM_RANGE 0x0000040000000000ull
#define EMU_MEM_RANGES 16u
/* Reserved shared memory of a block (sm_80+: the GPU keeps 1 KiB per block for the system; cooperative
 * groups keeps its multi-warp scratch there), two halves of 512 bytes (%reserved_smem_offset_0 and _1) */
#define EMU_RESERVED_SMEM 1024u
/* `mov.u64 %rd, func` gives EMU_FUNC_WINDOW + index * EMU_FUNC_STRIDE (index in EmuModule.funcs): what an
 * indirect call (`call [(rets),] %rd, (args), prototype;`) reads back */
#define EMU_FUNC_WINDOW 0x0000400000000000ull
#define EMU_FUNC_STRIDE 16u

void emu_mem_init(EmuMem *m);
void emu_mem_destroy(EmuMem *m);
bool emu_mem_alloc(EmuMem *m, uint64_t size, bool module_var, uint64_t *addr);
bool emu_mem_free(EmuMem *m, uint64_t addr);
/* Map the caller's host memory [host, host + size) at a fresh device address, zero-copy:
 * kernels and copies read and write it in place.  The address keeps host's offset modulo
 * 256, so alignment checks see what the host pointer has.  emu_mem_free unmaps it without
 * freeing the memory.  False when size is 0 or too large, or on out of memory. */
bool emu_mem_map(EmuMem *m, void *host, uint64_t size, uint64_t *addr);
/* Host pointer for [addr, addr+size) inside one live allocation, else NULL. */
uint8_t *emu_mem_host(const EmuMem *m, uint64_t addr, uint64_t size);
const EmuAlloc *emu_mem_find(const EmuMem *m, uint64_t addr);

/* ---- options and launch ---- */
typedef struct EmuOptions {
    bool racecheck;             /* detect shared-memory hazards between barriers */
    unsigned host_threads;      /* worker threads for blocks; 0: one per core */
    uint64_t max_instructions;  /* per-thread watchdog; 0: unlimited */
    const char *max_instructions_knob; /* what sets max_instructions, named by the watchdog's report (the device
                                        * layer: "DevOptions.emu_max_instructions"); NULL: "EmuOptions.max_instructions" */
    double timeout_seconds;     /* a launch running longer fails; 0: no limit */
    FILE *printf_out;           /* where device printf output goes; NULL: stdout */
    FILE *notes_out;            /* where notes go (PTX that runs, but as ptxas rewrites it); NULL: stderr */
    unsigned cluster[3];        /* CTAs per cluster (cuLaunchKernelEx's cluster dimension) for a kernel without
                                 * .reqnctapercluster; zeros: one CTA per cluster */
    bool cooperative;           /* a cooperative launch (cuLaunchCooperativeKernel): every CTA of the grid runs
                                 * together, and cooperative groups' grid barrier has its workspace */
    const int *interrupt;       /* another thread's request: bit 0 set (read atomically) stops the launch, "interrupted" */
    const Target *device;       /* the GPU emulated (emu:<target>), whose shared memory a block may use; NULL: the PTX's target */
    bool general_tensor_ops;    /* mma.sync, wmma.mma and wgmma by their general executors, fmaf per product and f16
                                 * results through emu_round_f64 (the reference the specialised ones are tested against:
                                 * the same bits, slower) */
    bool portable_tensor_ops;   /* the specialised executors without their F16C paths (mma.sync m16n8's one-pass host
                                 * body, wgmma's f16 decode): what a host without AVX2, FMA and F16C runs, so a host
                                 * with them still tests it against general_tensor_ops (test_emu_mma_fast) */
    unsigned approx;            /* EMU_APPROX_EXACT (0): .approx results from the host libm in double, rounded once (nearly
                                 * exact); EMU_APPROX_BOUND: each moved by the PTX ISA's documented maximum error (emu/approx.c) */
    bool one_slot_per_register; /* run every kernel with one register-file slot per register (the reference), not
                                 * the form whose registers share slots by liveness (EmuFunc.packed, slots.c) */
    struct EmuBufs *bufs;       /* workers' buffers kept between launches (emu_bufs_new); NULL: each launch allocates its own */
    unsigned num_sms;           /* the device's multiprocessor count (emu:sms=N): %nsmid, and CTA i (linear index in the grid)
                                 * is on SM %smid = i % num_sms; 0: 1 */
} EmuOptions;

/* The buffers a launch's workers keep between launches (exec.c): each worker's block state (CTAs, threads,
 * registers, shared, local and frame-parameter memory) and racecheck shadow, taken by a worker at its start and
 * given back at its end, so a launch neither allocates nor faults in fresh zeroed memory for them.  What a block
 * can observe starts as with fresh buffers (shared and local memory zeroed, the shadow cleared where the last
 * user touched it).  Thread-safe (a lock of its own); up to EMU_BUFS_KEEP_BYTES are kept, larger sets are freed
 * at the end of their launch.  emu_bufs_free frees every kept set; no launch may be using it then. */
typedef struct EmuBufs EmuBufs;
EmuBufs *emu_bufs_new(void);
void emu_bufs_free(EmuBufs *c);
enum { EMU_APPROX_EXACT = 0, EMU_APPROX_BOUND = 1 };

typedef struct EmuLaunchStats {
    uint64_t instructions;      /* executed thread-instructions */
    bool refused;               /* the launch's shape or parameters were refused before anything ran */
    bool out_of_memory;         /* it failed for host memory (the report may be missing: then the error is NULL) */
} EmuLaunchStats;

/* Limits.  Shared memory: the emulated device's target (EmuOptions.device), else the PTX's
 * (support/target.h), or the largest of any target when it is not in the table.  Launch dimensions:
 * CUDA's limits, the same for every target since sm_30. */
uint64_t emu_smem_static_limit(const Target *t);
uint64_t emu_smem_dynamic_limit(const Target *t);
enum {
    EMU_MAX_LOCAL = 1u << 30,         /* bytes of .local per function: keeps sizes far from wrapping */
    EMU_MAX_BAR_ID = 15,              /* bar.sync ids 0..15 */
    EMU_MAX_CONST_BYTES = 65536,      /* .const bytes of a module: the constant bank ptxas allows */
    EMU_MAX_CLUSTER = 16,             /* CTAs per cluster (sm_90's non-portable limit; 8 is portable) */
    EMU_MAX_COOP_THREADS = 1 << 18,   /* threads of a cooperative launch, all resident at once (an H100's 132 SMs
                                         hold 270,336) */
    EMU_MAX_CALL_DEPTH = 1024,        /* nested calls per thread (the GPU's limit is its stack size) */
    EMU_MAX_THREAD_LOCAL = 512u << 10, /* bytes of local memory per thread, all frames and allocas together: CUDA's
                                         per-thread limit (a launch needing more fails on a GPU) */
    EMU_DEFAULT_TIMEOUT_SECONDS = 600, /* a launch's time budget when none is given */
    EMU_PRINTF_LIMIT = 1 << 20,       /* bytes of printf output kept per launch (CUDA's default FIFO); the rest is dropped */
    EMU_MAX_WORKERS = 512,            /* host threads running one launch's blocks (more than cores when blocks wait on others) */
    EMU_STALL_MS = 500,               /* no block ended for this long while blocks wait to start: the workers double */
    EMU_BUFS_KEEP_SETS = 64,          /* EmuBufs: worker buffer sets kept between launches */
};
#define EMU_MAX_GRID_X 2147483647u    /* gridDim.x <= 2^31 - 1 */
#define EMU_MAX_GRID_YZ 65535u        /* gridDim.y, gridDim.z */
#define EMU_MAX_BLOCK_THREADS 1024u   /* threads per block */
#define EMU_MAX_BLOCK_XY 1024u        /* blockDim.x, blockDim.y */
#define EMU_MAX_BLOCK_Z 64u           /* blockDim.z */
#define EMU_BUFS_KEEP_BYTES ((size_t)128 << 20) /* EmuBufs: bytes kept between launches, all sets together */
#define EMU_BUFS_CLEAR_MAX ((size_t)8 << 20)    /* a kept block state needing more cleared than this is allocated afresh */

/* Parse `ptx` into a module; globals are allocated in `mem`.  On failure
 * returns NULL and sets *err (malloc'd, "ptx:LINE: message"); when host memory
 * ran out, *err is EMU_OUT_OF_HOST_MEMORY (or NULL, when even that could not
 * be allocated) and nothing is kept. */
#define EMU_OUT_OF_HOST_MEMORY "ptx: out of host memory"
EmuModule *emu_module_parse(const char *ptx, EmuMem *mem, char **err);
/* The whole-module steps after parsing (module.c): checks, global
 * variables, symbol addresses, fast paths.  On failure sets *err. */
bool emu_module_finalize(EmuModule *m, EmuMem *mem, char **err);
/* Set *err to "ptx:LINE: message" unless it already holds the first error; returns false. */
bool emu_ptx_error(char **err, uint32_t line, const char *fmt, va_list ap);
void emu_module_free(EmuModule *m);
EmuFunc *emu_module_find(EmuModule *m, const char *name);

/* Run a grid.  params as cuLaunchKernel takes them.  On failure returns false
 * and sets *err (malloc'd report). */
bool emu_launch(EmuModule *m, EmuFunc *f, const unsigned grid[3], const unsigned block[3],
                unsigned dyn_smem, void **params, const EmuOptions *opt, EmuLaunchStats *stats,
                char **err);

/* Text of PTX line `line` (trimmed, without comment, blanks collapsed) for reports. */
void emu_module_line(const EmuModule *m, uint32_t line, char *buf, size_t cap);
/* The source location (from .file/.loc) of the instruction on PTX line `line` as "file:line:col"
 * (":col" left out when 0) into buf; "" when it has none.  Returns buf. */
const char *emu_module_srcloc(const EmuModule *m, uint32_t line, char *buf, size_t cap);
/* The PTX line of an instruction's line key (EmuIns.line: the line itself, or one of EmuModule.vlines). */
static inline uint32_t emu_module_ptx_line(const EmuModule *m, uint32_t key) {
    return key > m->nlines && key - m->nlines - 1 < m->nvlines ? m->vlines[key - m->nlines - 1].line : key;
}
/* "file:line:col, PTX line N" (or "PTX line N" without line info) into buf, for reports that name a
 * second place.  Returns buf. */
const char *emu_module_where(const EmuModule *m, uint32_t line, char *buf, size_t cap);

/* ---- tensor maps (tensormap.c): the emulator's 128-byte encoding of what cuTensorMapEncodeTiled
 * takes, read by cp.async.bulk.tensor ---- */
enum { EMU_TMAP_BYTES = 128, EMU_TMAP_MAX_RANK = 5 };
typedef struct EmuTensorMap {
    unsigned esize;                  /* bytes per element: 1, 2, 4 or 8 */
    unsigned elemtype;               /* tensormap.replace's .elemtype code (0 u8 .. 12 tf32.ftz); encode keeps it when it has
                                        esize bytes, else takes the unsigned type of esize */
    unsigned fill;                   /* out-of-bounds elements of loads: 0 zero, 1 NaN (floating-point types) */
    unsigned rank;                   /* 1..5 */
    uint64_t addr;                   /* global address of element 0 (16-byte aligned) */
    uint64_t dims[EMU_TMAP_MAX_RANK];    /* elements per dimension, innermost first (1..2^32) */
    uint64_t strides[EMU_TMAP_MAX_RANK - 1]; /* bytes between consecutive indices of dimensions 1..rank-1 (multiples of 16) */
    uint32_t box[EMU_TMAP_MAX_RANK];     /* box extent per dimension, in elements (1..256) */
    uint32_t elem_strides[EMU_TMAP_MAX_RANK]; /* traversal strides (1..8) */
    unsigned swizzle;                /* 0 none, 1 32B, 2 64B, 3 128B */
    /* im2col maps (cuTensorMapEncodeIm2col; rank 3..5, dimensions C, W[, H[, D]], N innermost first): box is
     * unused; the copy moves `pixels` pixels of `channels` elements each, traversing the bounding box of the
     * spatial dimensions from lower[k] to dims[k + 1] - 1 + upper[k] (k = 0: W, 1: H, 2: D) */
    unsigned im2col;                 /* 0 tiled, 1 im2col */
    int32_t lower[3], upper[3];      /* the bounding box's corners, W first (rank 3: -32768..32767, 4: -128..127, 5: -16..15) */
    uint32_t channels, pixels;       /* channelsPerPixel (1..256), pixelsPerColumn (1..1024) */
} EmuTensorMap;
/* Checks tm as cuTensorMapEncodeTiled (or, im2col, cuTensorMapEncodeIm2col) does and writes its encoding; false with
 * *why set. */
bool emu_tensor_map_encode(const EmuTensorMap *tm, uint8_t out[EMU_TMAP_BYTES], const char **why);
bool emu_tensor_map_decode(const uint8_t in[EMU_TMAP_BYTES], EmuTensorMap *tm, const char **why);
/* tensormap.replace: field `mode` (EMU_MODE_TM_*), dimension ord, value v into the 128 bytes of a map (they
 * become one: the encoding's tag is written too); false with *why set when the value is out of range. */
bool emu_tensor_map_replace(uint8_t map[EMU_TMAP_BYTES], unsigned mode, unsigned ord, uint64_t v, const char **why);

/* Whether cp.reduce.async.bulk[.tensor] has reduction `mode` (EMU_MODE_AADD..AXOR) on elements of type ty:
 * .add on integers, f16, bf16, f32 and f64; .min/.max on integers, f16, bf16, f32 and f64; .inc/.dec on u32;
 * .and/.or/.xor on 32- and 64-bit integer and bit types. */
bool emu_reduce_type_ok(unsigned mode, unsigned ty);

/* Names from the tables. */
const char *emu_op_name(unsigned op);
const char *emu_mode_name(unsigned mode);
const char *emu_type_name(unsigned ty);
/* A type's size in bytes and its EMU_K_* kind, from EMU_TYPES.  Inline: the executors ask at every execution (cvt
 * and the integer family several times an instruction), and a call each was a seventh of an elementwise kernel's
 * run. */
static inline unsigned emu_type_size(unsigned ty) {
    static const uint8_t size[] = {
#define X(e, n, b, k) b,
        EMU_TYPES(X)
#undef X
    };
    return ty < EMU_T_COUNT ? size[ty] : 0;
}
static inline unsigned emu_type_kind(unsigned ty) {
    static const uint8_t kind[] = {
#define X(e, n, b, k) k,
        EMU_TYPES(X)
#undef X
    };
    return ty < EMU_T_COUNT ? kind[ty] : 0;
}

#endif

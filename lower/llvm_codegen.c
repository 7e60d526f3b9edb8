/* llvm_codegen.c - the LLVM module, kernels, control flow and PTX emission.
 *
 * Steps for each module:
 *   1. Create the NVPTX target machine for the arch (data layout from it).
 *   2. Per kernel: a `ptx_kernel` function whose parameters are the run-time
 *      arguments, `"nvvm.maxntid"` = 32 * num_warps; thread, lane and warp
 *      ids; the shared scratch global when smem_bytes > 0.
 *   3. Walk the Tile IR; every op family emits its registers
 *      (llvm_elementwise.c, llvm_memory.c, llvm_shared.c); `for` and `while` become a
 *      loop with one phi per register of each carried value, `if` a diamond.
 *   4. LLVMVerifyModule, O3_PIPELINE (default<O3> less three InstCombine runs, and less the passes init_targets
 *      skips: they change nothing in our IR), then GEPs split and their copies removed (for SLSR), PTX into memory.
 * Every LLVM message and buffer is disposed on the one cleanup path. */
#include "llvm_ctx.h"
#include "budget.h"
#include "../support/target.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool emit_block(LL *l, Block *b);
static bool emit_inst(LL *l, Inst *i);
static void free_block_vals(LL *l, Block *b);

static LLVMValueRef *flatten_yield(LL *l, Inst *y, int *total) {
    int n = 0;
    for (int k = 0; k < y->nops; k++) n += l->nvals[y->ops[k]];
    LLVMValueRef *out = calloc((size_t)(n ? n : 1), sizeof *out);
    int p = 0;
    for (int k = 0; k < y->nops; k++)
        for (int r = 0; r < l->nvals[y->ops[k]]; r++) out[p++] = l->vals[y->ops[k]][r];
    *total = n;
    return out;
}

/* for and while: a header with one phi per carried register, the body, a back edge from
 * the body's end.  `for` tests its induction variable in the header; `while` its carried
 * value 0, the condition. */
/* range(..., loop_unroll_factor=N): the back edge's llvm.loop metadata asks LLVM's unroller for N copies
 * (!{self, !{"llvm.loop.unroll.count", i32 N}}: a loop ID is a node whose first operand is itself). */
static void loop_unroll_count(LL *l, LLVMValueRef back_edge, unsigned n) {
    LLVMMetadataRef count[2] = {LLVMMDStringInContext2(l->ctx, "llvm.loop.unroll.count", 22),
                                LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(l->ctx), n, 0))};
    LLVMMetadataRef self = LLVMTemporaryMDNode(l->ctx, NULL, 0);
    LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(l->ctx, count, 2)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(l->ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(self, id);
    LLVMSetMetadata(back_edge, LLVMGetMDKindIDInContext(l->ctx, "llvm.loop", 9), LLVMMetadataAsValue(l->ctx, id));
}

/* The `for` test: iv < ub, or for a signed induction variable with a step of either sign, iv > ub
 * where the step is negative. */
static LLVMValueRef for_cond(LL *l, LLVMValueRef iv, LLVMValueRef ub, LLVMValueRef step, bool is_signed) {
    LLVMValueRef cond = LLVMBuildICmp(l->b, is_signed ? LLVMIntSLT : LLVMIntULT, iv, ub, "");
    if (!is_signed) return cond;
    LLVMValueRef down = LLVMBuildICmp(l->b, LLVMIntSGT, iv, ub, "");
    LLVMValueRef pos = LLVMBuildICmp(l->b, LLVMIntSGT, step, LLVMConstInt(LLVMTypeOf(step), 0, 0), "");
    return LLVMBuildSelect(l->b, pos, cond, down, "");
}

/* Does the body issue a wgmma whose A registers stay in flight past the iteration (llvm_mma.c)? */
static bool body_a_regs_in_flight(LL *l, const Block *b) {
    for (const Inst *i = b->first; i; i = i->next) {
        if (ll_dot_a_regs_in_flight(l, i)) return true;
        if (i->op == OP_IF)
            for (int r = 0; r < i->nregions; r++)
                if (body_a_regs_in_flight(l, i->regions[r])) return true;
    }
    return false;
}

/* Copies of the register arrays of the body's yielded values (they outlive the body's next emission). */
static LLVMValueRef **yielded(LL *l, const Inst *y, int n) {
    LLVMValueRef **out = calloc((size_t)n + 1, sizeof *out);
    if (!out) out_of_memory();
    for (int k = 0; k < n; k++) {
        int nr;
        LLVMValueRef *v = ll_get(l, y->ops[k], &nr);
        out[k] = malloc(sizeof(LLVMValueRef) * (size_t)(nr ? nr : 1));
        if (!out[k]) out_of_memory();
        memcpy(out[k], v, sizeof(LLVMValueRef) * (size_t)nr);
    }
    return out;
}

static void free_yielded(LLVMValueRef **v, int n) {
    for (int k = 0; v && k < n; k++) free(v[k]);
    free(v);
}

/* A `for` whose body issues a wgmma with A registers in flight past the iteration
 * (body_a_regs_in_flight) runs two bodies a trip: header (iv < ub?), body 1, iv + step < ub?,
 * body 2 (its arguments body 1's yields), back edge; the exit takes the carried values from the
 * header or from body 1. */
static bool emit_loop(LL *l, Inst *i) {
    Block *body = i->regions[0];
    bool is_for = i->op == OP_FOR;
    LLVMValueRef lb = is_for ? ll_get(l, i->ops[0], NULL)[0] : NULL, ub = is_for ? ll_get(l, i->ops[1], NULL)[0] : NULL,
                 step = is_for ? ll_get(l, i->ops[2], NULL)[0] : NULL;
    bool twice = is_for && body_a_regs_in_flight(l, body);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(l->b);
    LLVMBasicBlockRef hdr = LLVMAppendBasicBlockInContext(l->ctx, l->fn, is_for ? "for.hdr" : "while.hdr");
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(l->ctx, l->fn, is_for ? "for.body" : "while.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(l->ctx, l->fn, is_for ? "for.exit" : "while.exit");
    LLVMBuildBr(l->b, hdr);
    LLVMPositionBuilderAtEnd(l->b, hdr);
    LLVMValueRef iv = NULL;
    if (is_for) {
        iv = LLVMBuildPhi(l->b, LLVMTypeOf(lb), "iv");
        LLVMAddIncoming(iv, &lb, &pre, 1);
    }
    int n = i->nres, o0 = tir_loop_init(i), a0 = tir_loop_arg(i);
    LLVMValueRef **phis = calloc((size_t)n + 1, sizeof *phis);
    if (!phis) out_of_memory();
    for (int k = 0; k < n; k++) {
        int nr;
        LLVMValueRef *init = ll_get(l, i->ops[o0 + k], &nr);
        LLVMValueRef *ph = ll_new(l, body->args[a0 + k], nr);
        for (int r = 0; r < nr; r++) {
            ph[r] = LLVMBuildPhi(l->b, LLVMTypeOf(init[r]), "");
            LLVMAddIncoming(ph[r], &init[r], &pre, 1);
        }
        phis[k] = malloc(sizeof(LLVMValueRef) * (size_t)(nr ? nr : 1));
        if (!phis[k]) out_of_memory();
        memcpy(phis[k], ph, sizeof(LLVMValueRef) * (size_t)nr);
        LLVMValueRef *res = ll_new(l, i->res[k], nr);
        memcpy(res, ph, sizeof(LLVMValueRef) * (size_t)nr);
    }
    LLVMValueRef cond = is_for ? NULL : phis[0][0];
    if (is_for) ll_new(l, body->args[0], 1)[0] = iv;
    bool is_signed = is_for && dtype_is_signed(tir_vtype(l->f, i->ops[0])->dt);
    if (is_for) cond = for_cond(l, iv, ub, step, is_signed);
    LLVMBuildCondBr(l->b, cond, bb, exit);
    LLVMPositionBuilderAtEnd(l->b, bb);
    bool ok = emit_block(l, body);
    ll_lineinfo_at(l, i->loc); /* the increment and the back edge belong to the loop statement */
    Inst *y = body->last;
    LLVMValueRef next = ok && is_for ? LLVMBuildAdd(l->b, iv, step, "") : NULL;
    LLVMBasicBlockRef mid = NULL;
    LLVMValueRef **first = NULL; /* body 1's yields (twice) */
    if (ok && twice) {
        first = yielded(l, y, n);
        mid = LLVMGetInsertBlock(l->b);
        LLVMBasicBlockRef bb2 = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "for.body2");
        LLVMBuildCondBr(l->b, for_cond(l, next, ub, step, is_signed), bb2, exit);
        LLVMPositionBuilderAtEnd(l->b, bb2);
        free_block_vals(l, body);
        ll_new(l, body->args[0], 1)[0] = next;
        for (int k = 0; k < n; k++) {
            int nr = l->nvals[i->res[k]];
            memcpy(ll_new(l, body->args[a0 + k], nr), first[k], sizeof(LLVMValueRef) * (size_t)nr);
        }
        ok = emit_block(l, body);
        ll_lineinfo_at(l, i->loc);
        if (ok) next = LLVMBuildAdd(l->b, next, step, "");
    }
    if (ok) {
        LLVMBasicBlockRef latch = LLVMGetInsertBlock(l->b);
        if (is_for) LLVMAddIncoming(iv, &next, &latch, 1);
        for (int k = 0; k < n; k++) {
            int nr;
            LLVMValueRef *yv = ll_get(l, y->ops[k], &nr);
            for (int r = 0; r < nr; r++) LLVMAddIncoming(phis[k][r], &yv[r], &latch, 1);
        }
        LLVMValueRef back = LLVMBuildBr(l->b, hdr);
        if (is_for && i->a.vec > 1) loop_unroll_count(l, back, i->a.vec);
        LLVMPositionBuilderAtEnd(l->b, exit);
        for (int k = 0; twice && k < n; k++) { /* the carried values leave from the header or from body 1 */
            int nr = l->nvals[i->res[k]];
            free(l->vals[i->res[k]]);
            LLVMValueRef *res = ll_new(l, i->res[k], nr);
            LLVMBasicBlockRef from[2] = {hdr, mid};
            for (int r = 0; r < nr; r++) {
                LLVMValueRef in[2] = {phis[k][r], first[k][r]};
                res[r] = LLVMBuildPhi(l->b, LLVMTypeOf(in[0]), "");
                LLVMAddIncoming(res[r], in, from, 2);
            }
        }
    }
    free_yielded(first, n);
    free_yielded(phis, n);
    return ok;
}

static bool emit_if(LL *l, Inst *i) {
    LLVMValueRef cond = ll_get(l, i->ops[0], NULL)[0];
    LLVMBasicBlockRef thn = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "if.then");
    LLVMBasicBlockRef els = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "if.else");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "if.join");
    LLVMBuildCondBr(l->b, cond, thn, els);
    LLVMValueRef *yv[2] = {0};
    LLVMBasicBlockRef ends[2];
    int total = 0;
    LLVMBasicBlockRef bbs[2] = {thn, els};
    for (int r = 0; r < 2; r++) {
        LLVMPositionBuilderAtEnd(l->b, bbs[r]);
        if (r < i->nregions) {
            if (!emit_block(l, i->regions[r])) return false;
            Inst *y = i->regions[r]->last;
            if (y && y->op == OP_YIELD) yv[r] = flatten_yield(l, y, &total);
        }
        ll_lineinfo_at(l, i->loc);
        ends[r] = LLVMGetInsertBlock(l->b);
        LLVMBuildBr(l->b, join);
    }
    LLVMPositionBuilderAtEnd(l->b, join);
    int p = 0;
    for (int k = 0; k < i->nres; k++) {
        const Type *t = tir_vtype(l->f, i->res[k]);
        int cnt = t->rank ? ll_regs_of(l, t)->n : 1;
        LLVMValueRef *res = ll_new(l, i->res[k], cnt);
        for (int r = 0; r < cnt; r++, p++) {
            res[r] = LLVMBuildPhi(l->b, LLVMTypeOf(yv[0][p]), "");
            LLVMValueRef in[2] = {yv[0][p], yv[1][p]};
            LLVMAddIncoming(res[r], in, ends, 2);
        }
    }
    free(yv[0]);
    free(yv[1]);
    return true;
}

/* Registers a warp-specialized kernel's warpgroups run with (setmaxnreg) when it has two or more
 * computing warpgroups: the kernel is compiled for an even share of the register file (.maxnreg),
 * the producer gives most of its share back and the computing warpgroups take it.  With one
 * computing warpgroup, ptxas's own count serves (it is that warpgroup's need). */
static bool ws_registers(const Func *f, int *entry, int *producer, int *consumer) {
    int groups = f->num_warps / 4;
    if (!f->producer_warps || groups < 2) return false;
    *entry = 65536 / (128 * (groups + 1)) / 8 * 8;
    *producer = groups >= 3 ? 24 : 40;
    *consumer = (65536 / 128 - *producer) / groups / 8 * 8;
    if (*consumer > 256) *consumer = 256;
    return true;
}

/* ws_producer: every warp reaches it (after the mbarriers' initialization); the producer
 * warpgroup (warps num_warps..) branches into the region, only its first warp staying, and
 * returns at its end; the computing warps go on, their barriers now counting them only. */
static bool emit_ws_producer(LL *l, Inst *i) {
    Func *f = l->f;
    int entry, prod, cons;
    bool regs = ws_registers(f, &entry, &prod, &cons);
    char text[64];
    LLVMBasicBlockRef pb = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "producer");
    LLVMBasicBlockRef work = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "producer.work");
    LLVMBasicBlockRef idle = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "producer.idle");
    LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "consumer");
    LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntUGE, l->warp, ll_i32(l, f->num_warps), ""), pb, cb);
    LLVMPositionBuilderAtEnd(l->b, pb);
    if (regs) {
        snprintf(text, sizeof text, "setmaxnreg.dec.sync.aligned.u32 %d;", prod);
        ll_asm(l, l->t_void, text, "", NULL, 0, true);
    }
    LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntEQ, l->warp, ll_i32(l, f->num_warps), ""), work, idle);
    LLVMPositionBuilderAtEnd(l->b, idle);
    LLVMBuildRetVoid(l->b);
    LLVMPositionBuilderAtEnd(l->b, work);
    int saved = l->issue_warp;
    l->issue_warp = f->num_warps;
    bool ok = emit_block(l, i->regions[0]);
    l->issue_warp = saved;
    if (!ok) return false;
    LLVMBuildRetVoid(l->b);
    LLVMPositionBuilderAtEnd(l->b, cb);
    if (regs) {
        snprintf(text, sizeof text, "setmaxnreg.inc.sync.aligned.u32 %d;", cons);
        ll_asm(l, l->t_void, text, "", NULL, 0, true);
    }
    l->barrier_count = 32 * f->num_warps;
    return true;
}

/* pingpong's turns (lower/pingpong.c): computing warpgroup g waits at named barrier 2 + g for
 * its own 128 threads and the 128 arrivals of the warpgroup before it, and passes the turn by
 * arriving at 2 + (g + 1) % G; the last warpgroup's first pass (turn_start) lets the first go. */
static bool emit_turn(LL *l, Inst *i) {
    int groups = l->f->num_warps / 4;
    LLVMValueRef g = LLVMBuildUDiv(l->b, l->warp, ll_i32(l, 4), ""), n = ll_i32(l, 256);
    if (i->op == OP_TURN_WAIT) {
        LLVMValueRef args[2] = {LLVMBuildAdd(l->b, g, ll_i32(l, 2), ""), n};
        ll_intr(l, "llvm.nvvm.barrier.cta.sync.aligned.count", NULL, 0, args, 2);
        return true;
    }
    LLVMBasicBlockRef join = NULL;
    if (i->op == OP_TURN_START) {
        LLVMBasicBlockRef last = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "turn.start");
        join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "turn.started");
        LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntEQ, g, ll_i32(l, groups - 1), ""), last, join);
        LLVMPositionBuilderAtEnd(l->b, last);
    }
    LLVMValueRef next = LLVMBuildAdd(l->b, g, ll_i32(l, 1), "");
    next = LLVMBuildSelect(l->b, LLVMBuildICmp(l->b, LLVMIntEQ, next, ll_i32(l, groups), ""), ll_i32(l, 0), next, "");
    LLVMValueRef args[2] = {LLVMBuildAdd(l->b, next, ll_i32(l, 2), ""), n};
    ll_intr(l, "llvm.nvvm.barrier.cta.arrive.aligned.count", NULL, 0, args, 2);
    if (join) {
        LLVMBuildBr(l->b, join);
        LLVMPositionBuilderAtEnd(l->b, join);
    }
    return true;
}

/* The register arrays of the values a block and the regions nested in it define (its arguments and
 * its instructions' results), before the block is emitted again. */
static void free_block_vals(LL *l, Block *b) {
    for (int j = 0; j < b->nargs; j++) free(l->vals[b->args[j]]), l->vals[b->args[j]] = NULL;
    for (Inst *i = b->first; i; i = i->next) {
        for (int r = 0; r < i->nres; r++) free(l->vals[i->res[r]]), l->vals[i->res[r]] = NULL;
        for (int k = 0; k < i->nregions; k++) free_block_vals(l, i->regions[k]);
    }
}

/* A region on scalars, emitted again: bind its arguments to the given registers, emit its
 * instructions, return the first nout values of its yield.  The previous emission's register
 * arrays of these values go first, nested regions' too (an `if` in a map_elementwise function
 * lost its inner arrays on every emission but the last). */
static bool emit_scalar_region(LL *l, Block *body, LLVMValueRef *args, LLVMValueRef *out, int nout) {
    free_block_vals(l, body);
    for (int j = 0; j < body->nargs; j++) ll_new(l, body->args[j], 1)[0] = args[j];
    Inst *y = body->last;
    for (Inst *i = body->first; i && i != y; i = i->next)
        if (!emit_inst(l, i) || l->failed) return false;
    for (int j = 0; j < nout; j++) out[j] = ll_get(l, y->ops[j], NULL)[0];
    return true;
}

/* reduce_fn / scan_fn call this for each combine: the region's scalar arguments (a0.., b0..)
 * are the given registers, out gets its k yielded values. */
bool ll_emit_combine(LL *l, Block *body, int k, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *out) {
    LLVMValueRef args[2 * TIR_MAX_COMBINE];
    for (int j = 0; j < k; j++) args[j] = a[j], args[k + j] = b[j];
    return emit_scalar_region(l, body, args, out, k);
}

/* map_fn: the region once per group of `pack` registers of the thread (operands and results share a
 * layout, so register r is one element of each); a last group short of pack repeats its last element. */
static bool emit_map(LL *l, Inst *i) {
    Block *body = i->regions[0];
    int pack = i->a.ival > 1 ? (int)i->a.ival : 1, n;
    ll_get(l, i->ops[0], &n);
    LLVMValueRef **res = calloc((size_t)i->nres, sizeof *res);
    LLVMValueRef *args = calloc((size_t)body->nargs, sizeof *args), *out = calloc((size_t)i->nres * pack, sizeof *out);
    if (!res || !args || !out) out_of_memory();
    for (int k = 0; k < i->nres; k++) res[k] = ll_new(l, i->res[k], n);
    bool ok = true;
    for (int r0 = 0; r0 < n && ok; r0 += pack) {
        for (int k = 0; k < i->nops; k++) {
            LLVMValueRef *x = ll_get(l, i->ops[k], NULL);
            for (int e = 0; e < pack; e++) args[k * pack + e] = x[r0 + e < n ? r0 + e : n - 1];
        }
        ok = emit_scalar_region(l, body, args, out, i->nres * pack);
        for (int k = 0; ok && k < i->nres; k++)
            for (int e = 0; e < pack && r0 + e < n; e++) res[k][r0 + e] = out[k * pack + e];
    }
    free(res);
    free(args);
    free(out);
    return ok;
}

/* gdc_wait, gdc_launch_dependents: griddepcontrol.wait / .launch_dependents on sm_90 on (PTX 7.8), as inline
 * assembly with side effects and a memory clobber, so LLVM moves no load or store across it (LLVM's
 * llvm.nvvm.griddepcontrol.* intrinsics are IntrNoMem: a load after the wait could be hoisted above it).
 * Older targets have no programmatic dependent launch: a launch there waits for the previous one
 * anyway, so both are nothing (as Triton's "safe to execute when PDL is disabled"). */
static bool emit_grid_dep(LL *l, Inst *i) {
    if (!target_has_griddepcontrol(target_find(l->m->arch))) return true;
    ll_asm(l, l->t_void, i->op == OP_GDC_WAIT ? "griddepcontrol.wait;" : "griddepcontrol.launch_dependents;", "~{memory}", NULL, 0,
           true);
    return true;
}

static bool emit_inst(LL *l, Inst *i) {
    ll_lineinfo_at(l, i->loc);
    switch (i->op) {
    case OP_FOR:
    case OP_WHILE: return emit_loop(l, i);
    case OP_IF: return emit_if(l, i);
    case OP_MAP_FN: return emit_map(l, i);
    case OP_YIELD: return true; /* consumed by the parent */
    case OP_RETURN: LLVMBuildRetVoid(l->b); return true;
    case OP_BARRIER: ll_barrier(l); return true;
    case OP_PRINT:
    case OP_ASSERT:
    case OP_ASSUME: return ll_emit_debug(l, i);
    case OP_LOCAL_ALLOC:
    case OP_LOCAL_VIEW:
    case OP_ASYNC_COPY:
    case OP_LOCAL_STORE:
    case OP_LOCAL_LOAD:
    case OP_WGMMA_WAIT:
    case OP_ASYNC_COMMIT:
    case OP_ASYNC_WAIT: return ll_emit_async(l, i);
    case OP_MBAR_INIT:
    case OP_MBAR_INVAL:
    case OP_MBAR_EXPECT:
    case OP_MBAR_WAIT:
    case OP_MBAR_ARRIVE:
    case OP_TMA_LOAD:
    case OP_TMA_STORE:
    case OP_TMA_STORE_WAIT: return ll_emit_tma(l, i);
    case OP_WS_PRODUCER: return emit_ws_producer(l, i);
    case OP_TURN_START:
    case OP_TURN_WAIT:
    case OP_TURN_PASS: return emit_turn(l, i);
    case OP_GDC_WAIT:
    case OP_GDC_LAUNCH_DEPENDENTS: return emit_grid_dep(l, i);
    case OP_LOAD:
    case OP_STORE:
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS:
    case OP_ATOMIC_POLL: return ll_emit_memory(l, i);
    case OP_DOT:
        if (tir_vtype(l->f, i->res[0])->layout->kind == LAYOUT_MMA)
            return tir_vtype(l->f, i->ops[0])->layout->kind == LAYOUT_DOT_A && tir_vtype(l->f, i->ops[1])->layout->kind == LAYOUT_DOT_B
                       ? ll_emit_dot_mma(l, i)
                       : ll_emit_dot_mma_smem(l, i);
        return ll_emit_shared(l, i);
    case OP_CONVERT_LAYOUT:
    case OP_RESHAPE:
    case OP_REDUCE:
    case OP_SCAN:
    case OP_REDUCE_FN:
    case OP_SCAN_FN:
    case OP_GATHER:
    case OP_UNSTACK:
    case OP_STACK: return ll_emit_shared(l, i);
    default: return ll_emit_elementwise(l, i);
    }
}

static bool emit_block(LL *l, Block *b) {
    for (Inst *i = b->first; i; i = i->next) {
        if (!emit_inst(l, i)) return false;
        if (l->failed) return false;
        if (i->op == OP_RETURN) {
            /* code after an early return is unreachable: continue in a fresh block */
            LLVMBasicBlockRef dead = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "after.ret");
            LLVMPositionBuilderAtEnd(l->b, dead);
        }
    }
    return true;
}

static LLVMValueRef sreg(LL *l, const char *name) { return ll_intr(l, name, NULL, 0, NULL, 0); }

/* A value too big for a thread: more than THREAD_WORDS 32-bit registers' worth of elements in each thread
 * (a GPU thread has at most 255 registers; the rest would spill).  Refused with the place and the sizes:
 * LLVM's code generation grows faster than linearly with such values (a 1024 x 1024 f32 accumulator over 8
 * warps, 4096 registers a thread, was still compiling after 100 s).
 * A kernel too big for LLVM: the registers' worth of every operation's values in a thread, summed over the
 * kernel (a scalar counts its one or two registers; an operation with no result, such as a store, its largest
 * operand), is what LLVM gets as instructions.  Over THREAD_WORDS_TOTAL the kernel is refused at the operation
 * that crosses it: `y = y * x + 1.0` unrolled 4096 times over a 131072-element tile (4.2 M registers' worth)
 * was past 1.3 GB and still in LLVM after 90 s; 262144 scalar operations took 40 s and 780 MB.  An `if`, `for`
 * or `while` counts CONTROL_WORDS more: LLVM's time grows faster than linearly with basic blocks (bench/
 * compile_scaling.py's `ifs`: 10,000 run-time `if`s in a row took 21 s, 20,000 81 s, 40,000 253 s and 1.9 GB,
 * at about 6 registers' worth each; now about 12,000 fit).  The shipped kernels hold at most about 4,100
 * (attention_fwd).  The limits are budget.h's; budget.c counts the same sum on the front end's output, so that a
 * kernel far past it is refused before the passes. */
enum { THREAD_WORDS = TIR_THREAD_WORDS, THREAD_WORDS_TOTAL = TIR_KERNEL_WORDS, CONTROL_WORDS = TIR_CONTROL_WORDS };

typedef struct TooBig {
    LL *l;
    bool found;
    int64_t total; /* registers' worth of the values walked so far */
} TooBig;

static int64_t value_words(LL *l, const Type *t) {
    int bits = t->dt == DT_PTR ? 64 : dtype_bits(t->dt);
    int64_t per = bits > 32 ? bits / 32 : 1;
    if (!t->rank) return per;
    if (!t->layout || t->layout->kind == LAYOUT_SHARED) return 0;
    return ll_regs_of(l, t)->n * per;
}

static bool too_big(Inst *i, void *ud) {
    TooBig *tb = ud;
    LL *l = tb->l;
    int64_t inst_words = 0;
    for (int r = 0; r < i->nres && !tb->found; r++) {
        const Type *t = tir_vtype(l->f, i->res[r]);
        int64_t words = value_words(l, t);
        inst_words += words;
        if (!t->rank || words <= THREAD_WORDS) continue;
        int64_t numel = 1;
        for (int d = 0; d < t->rank; d++) numel *= t->shape[d];
        int threads = 32 * (l->f->num_warps + l->f->producer_warps);
        ll_error(l, i->loc, "a tile of %lld %s elements takes %lld registers in each of the %d threads, more than the %d this compiler "
                 "allows (a GPU thread has at most 255): use a smaller tile or more warps",
                 (long long)numel, dtype_name(t->dt), (long long)words, threads, THREAD_WORDS);
        tb->found = true;
    }
    if (tb->found) return false;
    if (!i->nres)
        for (int k = 0; k < i->nops; k++) {
            int64_t words = value_words(l, tir_vtype(l->f, i->ops[k]));
            if (words > inst_words) inst_words = words;
        }
    if (i->op == OP_IF || i->op == OP_FOR || i->op == OP_WHILE) inst_words += CONTROL_WORDS;
    tb->total += inst_words;
    if (tb->total > THREAD_WORDS_TOTAL) {
        ll_error(l, i->loc, "kernel '%s' too large after inlining and unrolling: its operations hold more than %d registers' worth of "
                 "values in each thread (the sum over the kernel, what LLVM would get as instructions): use smaller tiles or "
                 "fewer unrolled iterations",
                 l->f->name, THREAD_WORDS_TOTAL);
        tb->found = true;
    }
    return !tb->found;
}

static bool emit_func(LL *l, Func *f) {
    l->f = f;
    TooBig tb = {.l = l};
    tir_walk(f->body, too_big, &tb);
    if (tb.found) return false;
    l->vals = calloc(f->nvalues, sizeof *l->vals);
    l->nvals = calloc(f->nvalues, sizeof *l->nvals);
    l->strided = calloc(f->nvalues, sizeof *l->strided);
    if (!l->vals || !l->nvals || !l->strided) out_of_memory();
    LLVMTypeRef *pt = calloc((size_t)(f->nargs + f->ntmaps) + 1, sizeof *pt);
    if (!pt) out_of_memory();
    for (int k = 0; k < f->nargs; k++) pt[k] = ll_type(l, tir_vtype(f, f->args[k].value)->dt);
    ll_tma_params(l, pt, f->nargs, f->ntmaps);
    LLVMTypeRef fty = LLVMFunctionType(l->t_void, pt, (unsigned)(f->nargs + f->ntmaps), 0);
    free(pt);
    l->fn = LLVMAddFunction(l->mod, f->name, fty);
    LLVMSetFunctionCallConv(l->fn, LLVMPTXKernelCallConv);
    ll_tma_param_attrs(l, f->nargs, f->ntmaps);
    char buf[32];
    snprintf(buf, sizeof buf, "%d", 32 * (f->num_warps + f->producer_warps));
    LLVMAddAttributeAtIndex(l->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(l->ctx, "nvvm.reqntid", 12, buf, (unsigned)strlen(buf)));
    int entry_regs, prod_regs, cons_regs;
    if (ws_registers(f, &entry_regs, &prod_regs, &cons_regs)) {
        snprintf(buf, sizeof buf, "%d", entry_regs);
        LLVMAddAttributeAtIndex(l->fn, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(l->ctx, "nvvm.maxnreg", 12, buf, (unsigned)strlen(buf)));
    }
    l->issue_warp = 0;
    l->barrier_count = 0;
    ll_lineinfo_func(l, f);
    for (int k = 0; k < f->nargs; k++) {
        LLVMValueRef p = LLVMGetParam(l->fn, (unsigned)k);
        LLVMSetValueName2(p, f->args[k].name, strlen(f->args[k].name));
        const Type *t = tir_vtype(f, f->args[k].value);
        /* a launch passes every argument's bits: never undef or poison */
        unsigned nu = LLVMGetEnumAttributeKindForName("noundef", 7);
        LLVMAddAttributeAtIndex(l->fn, (unsigned)k + 1, LLVMCreateEnumAttribute(l->ctx, nu, 0));
        if (t->dt == DT_PTR) {
            /* arguments may alias (in-place kernels): no noalias */
            if (f->args[k].spec == SPEC_DIV16) {
                unsigned ak = LLVMGetEnumAttributeKindForName("align", 5);
                LLVMAddAttributeAtIndex(l->fn, (unsigned)k + 1, LLVMCreateEnumAttribute(l->ctx, ak, 16));
            }
        }
        ll_new(l, f->args[k].value, 1)[0] = p;
    }
    /* `entry` holds the thread ids and every thread term (ll_thread_term), then branches to
     * the body: terms are computed once however many registers use them */
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "entry");
    LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "start");
    LLVMPositionBuilderAtEnd(l->b, entry);
    l->tid = sreg(l, "llvm.nvvm.read.ptx.sreg.tid.x");
    l->lane = LLVMBuildAnd(l->b, l->tid, ll_i32(l, 31), "lane");
    l->warp = LLVMBuildLShr(l->b, l->tid, ll_i32(l, 5), "warp");
    LLVMBuildBr(l->b, start);
    l->entry = entry;
    l->nterms = 0;
    LLVMPositionBuilderAtEnd(l->b, start);
    l->smem = NULL;
    if (f->smem_bytes > 0) {
        /* up to 48 KiB a static array; beyond, the launch's dynamic shared memory */
        bool dyn = f->smem_bytes > target_find(l->m->arch)->smem_static;
        LLVMTypeRef at = LLVMArrayType2(l->t_i8, dyn ? 0 : (uint64_t)f->smem_bytes);
        char name[256];
        snprintf(name, sizeof name, "%s_smem", f->name);
        LLVMValueRef g = LLVMAddGlobalInAddressSpace(l->mod, at, name, 3);
        if (dyn) {
            LLVMSetLinkage(g, LLVMExternalLinkage);
        } else {
            LLVMSetInitializer(g, LLVMGetUndef(at));
            LLVMSetLinkage(g, LLVMInternalLinkage);
        }
        /* wgmma reads swizzled tiles whose pattern repeats every 1024 bytes from the window's base */
        LLVMSetAlignment(g, target_find(l->m->arch)->mma == WGMMA ? 1024 : 16);
        l->smem = g;
    }
    bool ok = emit_block(l, f->body);
    /* the fresh block after the final return is empty: terminate it */
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(l->b);
    if (!LLVMGetBasicBlockTerminator(cur)) LLVMBuildUnreachable(l->b);
    for (uint32_t v = 0; v < f->nvalues; v++) free(l->vals[v]);
    free(l->vals);
    free(l->nvals);
    free(l->strided);
    l->vals = NULL;
    l->strided = NULL;
    return ok && !l->failed;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_targets(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    /* 32-bit shared-memory pointers (the data layout then says p3:32): shared addresses,
     * ldmatrix and cp.async operands need no 64-bit arithmetic.
     * No horizontal reductions in the SLP vectorizer of default<O3>: on a chain of run-time `if`s (selects
     * adding into one value) it computed the sign bits of the whole chain for every root, quadratic: 2000
     * `let`s and 2000 `if`s spent 2.8 of 3.1 s of O3 there (bench/compile_scaling.py lets_ifs).  The PTX of
     * every shipped kernel and launched configuration (sm_80 and sm_90a) is byte for byte the same without it;
     * NVPTX has no vector registers for such a reduction to use.  (LLVMPassBuilderOptionsSetSLPVectorization
     * does not take the pass out of default<O3>.)
     * LICM's promotion of memory to registers (a loop's loads and stores of one loop-invariant address kept in
     * a register, stored once after the loop) only in loops of at most 64 memory accesses (LLVM's default: 250):
     * it asks MemorySSA about every pair of a loop's accesses, and our loops hold many (each masked load is an
     * inline-asm call that may touch memory), none promotable: on gemm.tile (sm_80) LICM took 56 of O3's 410 ms
     * CPU, 5 at this cap; on grouped_gemm.tile 44 of 86 ms, 1.  The PTX of every shipped kernel (sm_80 and
     * sm_90a) is the same (docs/benchmarks.md).
     * default<O3>'s passes that change nothing in the IR we emit are skipped (`-opt-disable`, by pipeline name):
     * on every shipped kernel (21 files, sm_80 and sm_90a, 160 functions; `opt -print-changed`) they never changed
     * a function, and they cost about a tenth of O3 on gemm.tile, dead-store elimination most (its MemorySSA
     * walks over our many stores).  Why each finds nothing: no memcpy/memset (memcpyopt), no indirect calls
     * (called-value-propagation), no calls to inline, expect or allocation intrinsics (always-inline, lower-expect,
     * alloc-token, memprof-remove-attributes), no store overwritten before it is read (dse), integer bounds
     * already folded by InstCombine and CVP (constraint-elimination), no float-to-int round trips (float2int),
     * nothing for aggressive-instcombine's patterns, no loop the vectorizer takes (loop-vectorize: NVPTX has no
     * vector registers for it).  Of NVPTX's code generation, NaryReassociate (after SLSR) is skipped too: it never
     * changed the PTX of a shipped kernel or of compile_scaling.py's shapes, and it was half of `llc` on lets_ifs
     * (0.85 -> 0.45 s at 2000 units).  Four more do change the IR of some kernels but never their PTX (every
     * shipped and tests/lang kernel, sm_80 and sm_90a, and eight launched configurations, byte for byte:
     * scripts/ptx_snapshot.sh): the dead-code removers bdce and adce (what they remove, InstCombine, GVN and
     * code generation's own dead-instruction removal remove too) and instsimplify and loop-instsimplify (folds
     * InstCombine makes anyway, a subset of its rules).  Skipping only removes optimizations, never adds one, so
     * no program can become wrong; the other names are not passes of code generation.
     * -unroll-threshold-default=300: O3_PIPELINE's `loop-unroll-full` at O3's size threshold (see there).
     * -slp-recursion-max-depth=3 (LLVM's default: 12): the SLP vectorizer takes every insertelement chain we build
     * to pack registers (8 bf16 of a 16-byte store, f16 pairs) as a seed and follows each lane's operands down to
     * 12 levels before costing the tree; what it vectorizes for NVPTX is the pairs at the top (f32 -> bf16x2/f16x2
     * conversions), a level or two down.  On cross_entropy_chunked.tile (sm_80) it was a third of the compile's
     * host instructions, 0.158 -> 0.123 G at 3.  The PTX of every shipped and tests/lang kernel (sm_80 and
     * sm_90a) is byte for byte the same but attention.tile's on sm_80, whose instructions are the same of each
     * kind in another order; at 2, paged_attention.tile (sm_90a) loses bf16x2 conversions (docs/benchmarks.md).
     * Process-wide, set once. */
    const char *argv[] = {"tile", "-nvptx-short-ptr", "-slp-vectorize-hor=false", "-slp-recursion-max-depth=3",
                          "-licm-mssa-max-acc-promotion=64",
                          "-opt-disable=dse,memcpyopt,called-value-propagation,always-inline,lower-expect,alloc-token,"
                          "memprof-remove-attributes,constraint-elimination,float2int,aggressive-instcombine,loop-vectorize,"
                          "nary-reassociate,bdce,adce,instsimplify,loop-instsimplify",
                          "-unroll-threshold-default=300"};
    LLVMParseCommandLineOptions((int)(sizeof argv / sizeof *argv), argv, NULL);
}

/* The IR passes: LLVM 22's default<O3> written out (`opt -passes='default<O3>' -print-pipeline-passes`), less three
 * of its eight InstCombine runs.  InstCombine was about a third of a compile of sampling.tile (callgrind, all
 * threads), and each run costs about the same whether it changes anything or not: our kernels are long straight
 * runs of integer and i1 arithmetic, and it asks computeKnownBits, computeKnownFPClass and isImpliedCondition about
 * every instruction.  Dropped: #5, which ended each function's simplification (the inliner's walk), and #6 and #7
 * of the module optimization (after loop-load-elim, after the SLP vectorizer and vector-combine, which find no
 * loops to vectorize and no vectors to combine in our IR); #8 after the late loop unrolling stays and cleans up
 * after all three.  The IR of some kernels changes, not their PTX: the PTX of every shipped and tests/lang kernel
 * (sm_80 and sm_90a, scripts/ptx_snapshot.sh) and of the launched configurations docs/benchmarks.md lists is byte
 * for byte what default<O3> gave; without #1, or without #3, #4 or #8 as well, some kernels' PTX changes.  The text
 * form is default<O3> exactly but for `loop-unroll-full`, which the text cannot give O3's level (it got the lower
 * levels' size threshold, 150): init_targets' -unroll-threshold-default=300 puts O3's back (loop-unroll<O3> reads
 * its own, -unroll-threshold-aggressive, also 300), and with it the text with all eight runs gives default<O3>'s
 * PTX on every file. */
static const char O3_PIPELINE[] =
    /* 1. module simplification; InstCombine #1 after mem2reg */
    "memprof-remove-attributes,annotation2metadata,forceattrs,nvvm-reflect,function(nvvm-intr-range),inferattrs,"
    "coro-early,function<eager-inv>(ee-instrument<>,lower-expect,simplifycfg<bonus-inst-threshold=1;"
    "no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;"
    "no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;"
    "simplify-cond-branch;no-speculate-unpredictables>,sroa<modify-cfg>,early-cse<>,callsite-splitting),openmp-opt,"
    "ipsccp,called-value-propagation,globalopt,function<eager-inv>(mem2reg,instcombine<max-iterations=1;"
    "no-verify-fixpoint>,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"
    "no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;"
    "no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>),always-inline,require<globals-aa>,function(invalidate<aa>),"
    "require<profile-summary>,"
    /* 2. the inliner's walk: each function simplified; InstCombine #2, #3 and #4 (#5 ended the walk: dropped) */
    "cgscc(devirt<4>(inline,function-attrs<skip-non-recursive-function-attrs>,argpromotion,openmp-opt-cgscc,"
    "function<eager-inv;no-rerun>(sroa<modify-cfg>,early-cse<memssa>,speculative-execution<only-if-divergent-target>,"
    "jump-threading,correlated-propagation,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;"
    "switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;"
    "no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>,instcombine<max-iterations=1;no-verify-fixpoint>,aggressive-instcombine,"
    "libcalls-shrinkwrap,tailcallelim,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"
    "no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;"
    "no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>,reassociate,constraint-elimination,loop-mssa(loop-instsimplify,loop-simplifycfg,"
    "licm<no-allowspeculation>,loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>,"
    "simple-loop-unswitch<nontrivial;trivial>),simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;"
    "switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;"
    "no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>,instcombine<max-iterations=1;no-verify-fixpoint>,loop(loop-idiom,indvars,"
    "extra-simple-loop-unswitch-passes,loop-deletion,loop-unroll-full),sroa<modify-cfg>,vector-combine,"
    "mldst-motion<no-split-footer-bb>,gvn<>,sccp,bdce,instcombine<max-iterations=1;no-verify-fixpoint>,"
    "jump-threading,correlated-propagation,adce,memcpyopt,dse,move-auto-init,loop-mssa(licm<allowspeculation>),"
    "coro-elide,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;"
    "no-switch-to-lookup;keep-loops;hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;sink-common-insts;"
    "speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>"
    "),function-attrs,function(require<should-not-run-function-passes>),coro-split,coro-annotation-elide)),"
    /* 3. module optimization; InstCombine #6 after loop-load-elim and #7 after vector-combine dropped, #8 kept */
    "deadargelim,coro-cleanup,globalopt,globaldce,elim-avail-extern,rpo-function-attrs,recompute-globalsaa,"
    "function<eager-inv>(drop-unnecessary-assumes,float2int,lower-constant-intrinsics,chr,"
    "loop(loop-rotate<header-duplication;no-prepare-for-lto>,loop-deletion),loop-distribute,inject-tli-mappings,"
    "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>,drop-unnecessary-assumes,infer-alignment,"
    "loop-load-elim,"
    "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;"
    "switch-to-lookup;no-keep-loops;hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;sink-common-insts;"
    "speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,slp-vectorizer,vector-combine,"
    "loop-unroll<O3>,transform-warning,sroa<preserve-cfg>,infer-alignment,instcombine<max-iterations=1;"
    "no-verify-fixpoint>,loop-mssa(licm<allowspeculation>),alignment-from-assumptions,loop-sink,instsimplify,"
    "div-rem-pairs,tailcallelim,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"
    "switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;hoist-loads-stores-with-cond-faulting;"
    "no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-unpredictables>),alloc-token,globaldce,"
    "constmerge,cg-profile,rel-lookup-table-converter,function(annotation-remarks)";

/* After default<O3>: InstCombine writes `base + c` as `or disjoint base, c` where the bits cannot carry.
 * NVPTX's straight-line strength reduction (run at emission) cannot subtract two such ors under a sign
 * extension (sext(x | c1) - sext(x | c2) is no constant to SCEV), so for each address it scans every earlier
 * one of the same pointer: quadratic.  A tile of 256 elements a thread (add.tile at BLOCK=32768) spent 3 s
 * there, one of 2048 over 100 s.  Where one value is or'ed with many constants (a thread's elements of a big
 * tile) those ors become `add nuw nsw` again (exact: disjoint bits neither carry nor overflow), which SCEV
 * subtracts: 16 ms.  Smaller groups stay: gemm.tile's largest is 27, and converting all of its ors made its
 * emission 2.4 times slower. */
enum { DISJOINT_OR_GROUP = 64 };

typedef struct OrUse {
    LLVMValueRef base, inst;
} OrUse;

static int or_use_cmp(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const OrUse *)a)->base, y = (uintptr_t)((const OrUse *)b)->base;
    return x < y ? -1 : x > y;
}

static bool is_disjoint_or(LLVMValueRef v) {
    return LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == LLVMOr && LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMIntegerTypeKind &&
           LLVMGetIsDisjoint(v);
}

/* in, an `or disjoint`, as `add nuw nsw` */
static LLVMValueRef or_to_add(LLVMBuilderRef b, LLVMValueRef in) {
    LLVMPositionBuilderBefore(b, in);
    LLVMValueRef add = LLVMBuildAdd(b, LLVMGetOperand(in, 0), LLVMGetOperand(in, 1), "");
    LLVMSetNUW(add, 1);
    LLVMSetNSW(add, 1);
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(in);
    if (loc) LLVMInstructionSetDebugLoc(add, loc);
    LLVMReplaceAllUsesWith(in, add);
    LLVMInstructionEraseFromParent(in);
    return add;
}

/* The base of a group, read through: x | y as x + y, and so x and y, a few levels down.  Ors with a constant
 * are left to their own groups (they are in disjoint_ors_to_adds's list, which must not lose them). */
static void base_to_add(LLVMBuilderRef b, LLVMValueRef x, int depth) {
    if (depth > 4 || !is_disjoint_or(x) || LLVMIsAConstantInt(LLVMGetOperand(x, 1))) return;
    LLVMValueRef add = or_to_add(b, x);
    for (int k = 0; k < 2; k++) base_to_add(b, LLVMGetOperand(add, k), depth + 1);
}

static void disjoint_ors_to_adds(LLVMModuleRef mod, LLVMBuilderRef b) {
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        OrUse *u = NULL;
        size_t n = 0, cap = 0;
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
                if (!is_disjoint_or(in)) continue;
                LLVMValueRef x = LLVMGetOperand(in, 0), c = LLVMGetOperand(in, 1);
                if (!LLVMIsAConstantInt(c)) continue;
                if (n == cap) {
                    cap = cap ? 2 * cap : 256;
                    u = realloc(u, cap * sizeof *u);
                    if (!u) out_of_memory();
                }
                u[n++] = (OrUse){x, in};
            }
        if (n >= DISJOINT_OR_GROUP) qsort(u, n, sizeof *u, or_use_cmp);
        for (size_t i = 0, j; n >= DISJOINT_OR_GROUP && i < n; i = j) {
            for (j = i; j < n && u[j].base == u[i].base; j++) {}
            if (j - i < DISJOINT_OR_GROUP) continue;
            LLVMValueRef first = NULL;
            for (size_t k = i; k < j; k++) {
                LLVMValueRef add = or_to_add(b, u[k].inst);
                if (!first) first = add;
            }
            /* the base as it is now (u[i].base may have been an or of an earlier group, replaced) */
            base_to_add(b, LLVMGetOperand(first, 0), 0);
        }
        free(u);
    }
}

/* Lower `funcs` into one LLVM module (its own LLVM context) and emit its PTX.  Reads the
 * Tile IR only, so several of these may run at once on different functions. */
static bool uses_l1_eviction(Inst *i, void *ud) {
    (void)ud;
    return !(tir_cache_evict(i->a.cache) && !(i->a.cache & TIR_CACHE_STRONG)); /* false (stop) at the first */
}

/* The PTX ISA version of the module: the target's, raised to what the instructions used need (ld/st with
 * .L1::evict_* need 7.4, above sm_80's and sm_86's 7.0 and 7.1: ptxas refuses them below). */
static int module_ptx_version(const Target *tgt, Func **funcs, int nfuncs) {
    int v = tgt ? tgt->ptx : 0;
    for (int k = 0; k < nfuncs && v < PTX_L1_EVICTION; k++)
        if (!tir_walk(funcs[k]->body, uses_l1_eviction, NULL)) v = PTX_L1_EVICTION;
    return v;
}

static bool lower_funcs(Module *m, Func **funcs, int nfuncs, const LlvmOptions *o, LlvmResult *out, Diag *d) {
    memset(out, 0, sizeof *out);
    LL l = {.m = m, .d = d, .opt = o};
    const Target *tgt = target_find(o ? o->arch : NULL);
    char features[16];
    snprintf(features, sizeof features, "+ptx%d", module_ptx_version(tgt, funcs, nfuncs));
    bool ok = false;
    char *err = NULL;
    LLVMMemoryBufferRef buf = NULL;
    LLVMPassBuilderOptionsRef pbo = NULL;
    double t0 = now_seconds();

    l.ctx = LLVMContextCreate();
    l.mod = LLVMModuleCreateWithNameInContext("tile", l.ctx);
    l.b = LLVMCreateBuilderInContext(l.ctx);
    const char *triple = "nvptx64-nvidia-cuda";
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple(triple, &target, &err)) {
        diag_error(d, (Loc){0}, "LLVM has no NVPTX target: %s", err);
        goto cleanup;
    }
    if (!tgt) {
        diag_error(d, (Loc){0}, "unknown target '%s'", o->arch);
        goto cleanup;
    }
    /* code generation at LLVM's default level: the PTX of every shipped kernel (sm_80 and sm_90a, and the launched
     * sm_89/sm_90a GEMM variants) is byte for byte that of the aggressive level, 5-10 % sooner (gemm.tile's PTX
     * emission 418 ms against 461, 2026-12-03); the IR passes stay default<O3> */
    l.tm = LLVMCreateTargetMachine(target, triple, tgt->name, features, LLVMCodeGenLevelDefault, LLVMRelocDefault,
                                   LLVMCodeModelDefault);
    if (!l.tm) {
        diag_error(d, (Loc){0}, "cannot create an NVPTX target machine for '%s'", tgt->name);
        goto cleanup;
    }
    LLVMSetTarget(l.mod, triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(l.tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(l.mod, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);

    l.t_void = LLVMVoidTypeInContext(l.ctx);
    l.t_i1 = LLVMInt1TypeInContext(l.ctx);
    l.t_i8 = LLVMInt8TypeInContext(l.ctx);
    l.t_i16 = LLVMInt16TypeInContext(l.ctx);
    l.t_i32 = LLVMInt32TypeInContext(l.ctx);
    l.t_i64 = LLVMInt64TypeInContext(l.ctx);
    l.t_f16 = LLVMHalfTypeInContext(l.ctx);
    l.t_bf16 = LLVMBFloatTypeInContext(l.ctx);
    l.t_f32 = LLVMFloatTypeInContext(l.ctx);
    l.t_f64 = LLVMDoubleTypeInContext(l.ctx);
    l.t_gptr = LLVMPointerTypeInContext(l.ctx, 1);
    l.t_sptr = LLVMPointerTypeInContext(l.ctx, 3);

    if (o && o->line_info) ll_lineinfo_begin(&l, funcs[0]->loc.file);
    for (int k = 0; k < nfuncs; k++)
        if (!emit_func(&l, funcs[k])) goto cleanup;
    ll_lineinfo_end(&l);
    if (LLVMVerifyModule(l.mod, LLVMReturnStatusAction, &err)) {
        diag_error(d, (Loc){0}, "internal error: generated LLVM IR is invalid: %s", err);
        goto cleanup;
    }
    LLVMDisposeMessage(err);
    err = NULL;
    double t1 = now_seconds();
    out->seconds_codegen = t1 - t0;
    if (!o || o->run_o3) {
        pbo = LLVMCreatePassBuilderOptions();
        LLVMErrorRef e = LLVMRunPasses(l.mod, O3_PIPELINE, l.tm, pbo);
        if (e) { /* the written-out text is LLVM 22's: an LLVM that cannot parse it (a pass renamed) still gets O3
                  * (a text that fails to parse runs no pass, so the module is as it was) */
            LLVMConsumeError(e);
            e = LLVMRunPasses(l.mod, "default<O3>", l.tm, pbo);
        }
        if (e) {
            char *msg = LLVMGetErrorMessage(e);
            diag_error(d, (Loc){0}, "internal error: LLVM optimization failed: %s", msg);
            LLVMDisposeErrorMessage(msg);
            goto cleanup;
        }
        disjoint_ors_to_adds(l.mod, l.b);
        /* NVPTX's code generation starts with SeparateConstOffsetFromGEP, which splits each `p[x + c]` into
         * `(p[x])[c]` and leaves the many equal `p[x]` it makes (a thread's elements of a tile share x) to the
         * EarlyCSE after straight-line strength reduction.  SLSR in between took each copy as a candidate and
         * compared it with every other one (ScalarEvolution::canReuseInstruction for each pair): on gemm.tile
         * 70% of code generation.  Splitting here and removing the copies at once leaves codegen's split nothing
         * to do and SLSR a third of the pairs: its time 0.57 -> 0.20 s on gemm.tile (sm_80); the PTX of the
         * shipped kernels the same, or the same instructions in another order (docs/benchmarks.md). */
        e = LLVMRunPasses(l.mod, "function(separate-const-offset-from-gep,early-cse)", l.tm, pbo);
        if (e) {
            char *msg = LLVMGetErrorMessage(e);
            diag_error(d, (Loc){0}, "internal error: LLVM optimization failed: %s", msg);
            LLVMDisposeErrorMessage(msg);
            goto cleanup;
        }
    }
    double t2 = now_seconds();
    out->seconds_opt = t2 - t1;
    if (o && o->want_llvm_text) {
        char *s = LLVMPrintModuleToString(l.mod);
        out->llvm_ir = strdup(s);
        LLVMDisposeMessage(s);
    }
    if (LLVMTargetMachineEmitToMemoryBuffer(l.tm, l.mod, LLVMAssemblyFile, &err, &buf)) {
        diag_error(d, (Loc){0}, "internal error: PTX emission failed: %s", err);
        goto cleanup;
    }
    {
        size_t n = LLVMGetBufferSize(buf);
        out->ptx = malloc(n + 1);
        if (!out->ptx) out_of_memory();
        memcpy(out->ptx, LLVMGetBufferStart(buf), n);
        out->ptx[n] = 0;
        char *fixed = o && o->line_info ? ll_lineinfo_ptx_file_names(out->ptx) : NULL;
        if (fixed) free(out->ptx), out->ptx = fixed;
    }
    out->seconds_emit = now_seconds() - t2;
    ok = true;
cleanup:
    if (err) LLVMDisposeMessage(err);
    if (buf) LLVMDisposeMemoryBuffer(buf);
    if (pbo) LLVMDisposePassBuilderOptions(pbo);
    for (int i = 0; i < l.nrc; i++) layout_regs_free(&l.rc[i].regs);
    free(l.rc);
    free(l.terms);
    ll_lineinfo_free(&l);
    if (l.b) LLVMDisposeBuilder(l.b);
    if (l.mod) LLVMDisposeModule(l.mod);
    if (l.tm) LLVMDisposeTargetMachine(l.tm);
    if (l.ctx) LLVMContextDispose(l.ctx);
    if (!ok) {
        free(out->ptx);
        free(out->llvm_ir);
        out->ptx = out->llvm_ir = NULL;
    }
    return ok;
}

void llvm_result_free(LlvmResult *r) {
    free(r->ptx);
    free(r->llvm_ir);
    r->ptx = r->llvm_ir = NULL;
}

/* ---- several kernels: one LLVM module per worker thread ----
 * A file with many kernels (gemm.tile has 16) is lowered by up to `threads` workers, each
 * with its own LLVM context and target machine, kernels dealt round-robin; the PTX texts
 * are joined under the first one's header (.version/.target/.address_size).  Names
 * stay unique across them: every module-level symbol is named after its kernel. */
typedef struct Job {
    Module *m;
    Func **funcs;
    int nfuncs;
    const LlvmOptions *o;
    LlvmResult res;
    Diag d;
    bool ok;
} Job;

static void add_msg(Diag *d, DiagLevel lvl, Loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vadd(d, lvl, loc, fmt, ap);
    va_end(ap);
}

static void *run_job(void *arg) {
    Job *j = arg;
    j->ok = lower_funcs(j->m, j->funcs, j->nfuncs, j->o, &j->res, &j->d);
    return NULL;
}

/* Where the declarations after the PTX header start. */
static const char *after_header(const char *ptx) {
    const char *p = strstr(ptx, ".address_size");
    if (!p) return ptx;
    p = strchr(p, '\n');
    return p ? p + 1 : ptx + strlen(ptx);
}

/* ---- one .file table for the joined text ----
 * With line info each worker's PTX ends with its own `.file N "name"` table (numbered
 * from 1 in the order its kernels first used a file) and NVPTX's empty
 * `.section .debug_macinfo`.  The joined text has one of each: every part's `.loc N`
 * is renumbered into the common table, its `.file` and section lines are dropped, and
 * the table and section follow the last kernel, where a single module has them. */
typedef struct FileTable {
    Str files;  /* the joined `.file` lines */
    char **keys; /* what follows the number in each: the quoted name (and any timestamp, size) */
    int n, cap;
    bool macinfo;
} FileTable;

/* The directive a line holds when its first token is `name` (".file", ".loc"): the text after it, else NULL. */
static const char *directive(const char *line, const char *eol, const char *name) {
    while (line < eol && (*line == ' ' || *line == '\t')) line++;
    size_t n = strlen(name);
    if ((size_t)(eol - line) <= n || strncmp(line, name, n) || (line[n] != ' ' && line[n] != '\t')) return NULL;
    for (line += n; line < eol && (*line == ' ' || *line == '\t');) line++;
    return line;
}

static int table_index(FileTable *ft, const char *key, size_t len) {
    for (int k = 0; k < ft->n; k++)
        if (strlen(ft->keys[k]) == len && !strncmp(ft->keys[k], key, len)) return k + 1;
    if (ft->n == ft->cap) {
        ft->cap = ft->cap ? 2 * ft->cap : 8;
        ft->keys = realloc(ft->keys, sizeof *ft->keys * (size_t)ft->cap);
        if (!ft->keys) out_of_memory();
    }
    ft->keys[ft->n] = strndup(key, len);
    if (!ft->keys[ft->n]) out_of_memory();
    ft->n++;
    str_printf(&ft->files, "\t.file\t%d %.*s\n", ft->n, (int)len, key);
    return ft->n;
}

static void join_part(Str *out, const char *ptx, FileTable *ft) {
    /* 1. this part's numbers -> the table's */
    int *map = NULL, nmap = 0;
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        const char *a = directive(p, eol, ".file");
        char *end;
        long num = a ? strtol(a, &end, 10) : 0;
        if (a && num > 0 && num < 1 << 20 && end < eol) {
            while (end < eol && (*end == ' ' || *end == '\t')) end++;
            if (num >= nmap) {
                int nn = (int)num + 1;
                map = realloc(map, sizeof *map * (size_t)nn);
                if (!map) out_of_memory();
                memset(map + nmap, 0, sizeof *map * (size_t)(nn - nmap));
                nmap = nn;
            }
            map[num] = table_index(ft, end, (size_t)(eol - end));
        }
        p = *eol ? eol + 1 : eol;
    }
    /* 2. the text, renumbered, without the table and the section */
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        const char *next = eol ? eol + 1 : p + strlen(p);
        if (!eol) eol = next;
        const char *a;
        char *end;
        if (directive(p, eol, ".file")) {
            /* dropped: the joined table follows the last kernel */
        } else if ((a = directive(p, eol, ".section")) != NULL && !strncmp(a, ".debug_macinfo", 14)) {
            ft->macinfo = true;
        } else if ((a = directive(p, eol, ".loc")) != NULL) {
            long num = strtol(a, &end, 10);
            str_putn(out, p, (size_t)(a - p));
            str_printf(out, "%d", num > 0 && num < nmap ? map[num] : (int)num);
            str_putn(out, end, (size_t)(next - end));
        } else {
            str_putn(out, p, (size_t)(next - p));
        }
        p = next;
    }
    free(map);
}

bool llvm_lower_module(Module *m, const LlvmOptions *o, LlvmResult *out, Diag *d) {
    pthread_once(&init_once, init_targets);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = o && o->threads > 0 ? o->threads : (int)(cpus < 1 ? 1 : cpus > 8 ? 8 : cpus);
    if (threads > m->nfuncs) threads = m->nfuncs;
    if (threads <= 1 || (o && o->want_llvm_text)) return lower_funcs(m, m->funcs, m->nfuncs, o, out, d);
    Job *jobs = calloc((size_t)threads, sizeof *jobs);
    Func **order = calloc((size_t)m->nfuncs, sizeof *order);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    if (!jobs || !order || !tids) out_of_memory();
    int at = 0;
    for (int t = 0; t < threads; t++) {
        jobs[t].m = m;
        jobs[t].o = o;
        jobs[t].funcs = &order[at];
        for (int k = t; k < m->nfuncs; k += threads) order[at++] = m->funcs[k];
        jobs[t].nfuncs = (int)(&order[at] - jobs[t].funcs);
        diag_init(&jobs[t].d);
    }
    bool started[8] = {0};
    for (int t = 1; t < threads; t++) started[t] = pthread_create(&tids[t], NULL, run_job, &jobs[t]) == 0;
    run_job(&jobs[0]);
    for (int t = 1; t < threads; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else run_job(&jobs[t]); /* no thread: do it here */
    }
    bool ok = true;
    Str ptx = {0};
    FileTable ft = {0};
    memset(out, 0, sizeof *out);
    for (int t = 0; t < threads; t++) {
        Job *j = &jobs[t];
        for (int i = 0; i < j->d.n; i++) add_msg(d, j->d.msgs[i].level, j->d.msgs[i].loc, "%s", j->d.msgs[i].msg);
        ok &= j->ok;
        if (j->ok) {
            join_part(&ptx, t ? after_header(j->res.ptx) : j->res.ptx, &ft);
            /* stages ran side by side: the wall time of each is the slowest worker's */
            if (j->res.seconds_codegen > out->seconds_codegen) out->seconds_codegen = j->res.seconds_codegen;
            if (j->res.seconds_opt > out->seconds_opt) out->seconds_opt = j->res.seconds_opt;
            if (j->res.seconds_emit > out->seconds_emit) out->seconds_emit = j->res.seconds_emit;
        }
        llvm_result_free(&j->res);
        diag_free(&j->d);
    }
    free(jobs);
    free(order);
    free(tids);
    if (ft.macinfo) str_puts(&ptx, "\t.section\t.debug_macinfo\t{\t}\n");
    if (ft.files.len) str_putn(&ptx, ft.files.buf, ft.files.len);
    for (int k = 0; k < ft.n; k++) free(ft.keys[k]);
    free(ft.keys);
    str_free(&ft.files);
    if (!ok) {
        str_free(&ptx);
        return false;
    }
    out->ptx = str_take(&ptx);
    return true;
}

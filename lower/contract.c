/* contract.c - contract f32 multiply-adds into fma, so each becomes one FFMA.
 *
 * Floating-point contraction computes a*b + c with one rounding instead of
 * two.  It is allowed for f32 only, as LLVM's -fp-contract=fast, the default
 * of CUDA and Triton on GPUs, allows it; f64, f16/bf16 (their own FMA units
 * would change what the source's f32-computed math means) and integers are
 * never touched.  The result differs from the source's by at most the
 * rounding the fma skips: it is never less accurate per operation.
 *
 * Algorithm, per kernel, one walk in program order (an op's regions first):
 *   1. Count the uses of every value.  A multiply with exactly one use can
 *      be absorbed: the op that uses it replaces it, so the
 *      rewrite never computes a product twice.
 *   2. exp(x) on f32 (not `exact`) becomes exp2(x * log2 e): the operations
 *      its lowering emits anyway, now visible to step 3.
 *   3. Contract a multiply with one use into the add or subtract using it:
 *        a*b + c, c + a*b -> fma(a, b, c)     a*b - c -> fma(a, b, -c)
 *        c - a*b          -> fma(-a, b, c)
 *      (`x*s - m*s` is the second form with c = m*s.)  A negation is built
 *      at the smallest shape: constants are negated, splat, broadcast and
 *      expand_dims are looked through, so `-m[:, None]` negates m per row.
 *   Never reassociated: `(x - b) * s` keeps its subtraction.  Distributing it
 *   into fma(x, s, -(b*s)) would save an op per element, but the exponent of
 *   softmax's `exp(x - max)` would then carry an absolute error of
 *   ulp(max * log2 e)/2 where the source has none at the maximum (x - max is
 *   exactly 0 there, so exp is exactly 1): 1.0015 at values near 1e5, and 0
 *   (a NaN softmax) near 1e30.  Attention writes the fma form by hand
 *   (`s * scale - m`, m already scaled), as FlashAttention and Triton's
 *   tutorial do, and gets one FFMA per score from step 3.
 * Ops absorbed into an fma are deleted; the negations and constants made
 * here are merged by the canonicalize run after software_pipeline. */
#include "passes.h"

#include <stdlib.h>

typedef struct Contract {
    Func *f;
    int *uses;      /* [nuses]: use counts at the start; values made later have none */
    uint32_t nuses;
} Contract;

static bool is_f32(Func *f, ValueId v) { return tir_vtype(f, v)->dt == DT_F32; }

static Inst *def_of(Func *f, ValueId v) { return f->values[v].def; }

/* The op defining v when v has exactly one use and the op is `op`. */
static Inst *single_use_def(Contract *c, ValueId v, Op op) {
    Inst *d = def_of(c->f, v);
    return d && d->op == op && v < c->nuses && c->uses[v] == 1 ? d : NULL;
}

static ValueId emit_before(Func *f, Inst *at, Op op, const ValueId *ops, int nops, const Type *t, const Attrs *a) {
    Inst *n = tir_inst_new(f, op, ops, nops, &t, 1, at->loc);
    if (a) n->a = *a;
    tir_insert_before(at, n);
    return n->res[0];
}

/* -v, built before `at` at the smallest shape that holds it. */
static ValueId neg_small(Func *f, Inst *at, ValueId v) {
    Inst *d = def_of(f, v);
    const Type *t = tir_vtype(f, v);
    if (d && d->op == OP_CONST) {
        Attrs a = d->a;
        a.fval = -(a.is_float ? a.fval : (double)a.ival);
        a.is_float = 1;
        a.ival = 0;
        return emit_before(f, at, OP_CONST, NULL, 0, t, &a);
    }
    if (d && (d->op == OP_SPLAT || d->op == OP_BROADCAST || d->op == OP_EXPAND_DIMS)) {
        ValueId inner = neg_small(f, at, d->ops[0]);
        return emit_before(f, at, d->op, &inner, 1, t, &d->a);
    }
    return emit_before(f, at, OP_NEG, &v, 1, t, NULL);
}

/* Turn i into fma(a, b, c) in place (its result value and uses stay). */
static void make_fma(Func *f, Inst *i, ValueId a, ValueId b, ValueId c) {
    ValueId *ops = ARENA_ARRAY(f->module->arena, ValueId, 3);
    ops[0] = a, ops[1] = b, ops[2] = c;
    i->op = OP_FMA;
    i->ops = ops;
    i->nops = 3;
    Attrs none = {.smem_offset = -1};
    i->a = none;
}

/* Step 3 on an add or subtract i. */
static bool contract(Contract *c, Inst *i) {
    Func *f = c->f;
    for (int k = 0; k < 2; k++) {
        Inst *mul = single_use_def(c, i->ops[k], OP_MUL);
        if (!mul) continue;
        ValueId a = mul->ops[0], b = mul->ops[1], other = i->ops[1 - k];
        if (i->op == OP_ADD) make_fma(f, i, a, b, other);
        else if (k == 0) make_fma(f, i, a, b, neg_small(f, i, other));
        else make_fma(f, i, neg_small(f, i, a), b, other);
        tir_inst_remove(mul);
        return true;
    }
    return false;
}

/* Step 2: exp(x) -> exp2(x * log2 e), the product open to step 3 where x is one. */
static void exp_to_exp2(Contract *c, Inst *i) {
    Func *f = c->f;
    const Type *t = tir_vtype(f, i->ops[0]);
    Attrs k = {.smem_offset = -1, .is_float = 1, .fval = 1.4426950408889634};
    ValueId ops[2] = {i->ops[0], emit_before(f, i, OP_CONST, NULL, 0, t, &k)};
    ValueId m = emit_before(f, i, OP_MUL, ops, 2, t, NULL);
    i->op = OP_EXP2;
    i->ops[0] = m;
}

static void contract_block(Contract *c, Block *b) {
    for (Inst *i = b->first, *next; i; i = next) {
        next = i->next;
        for (int r = 0; r < i->nregions; r++) contract_block(c, i->regions[r]);
        if (i->nres != 1 || !is_f32(c->f, i->res[0])) continue;
        switch (i->op) {
        case OP_EXP:
            if (!i->a.ival) exp_to_exp2(c, i);
            break;
        case OP_ADD:
        case OP_SUB: contract(c, i); break;
        default: break;
        }
    }
}

bool lower_contract(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        Contract c = {.f = f, .uses = tir_use_counts(f), .nuses = f->nvalues};
        contract_block(&c, f->body);
        free(c.uses);
    }
    return true;
}

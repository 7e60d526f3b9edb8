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
 *   1. Count the uses of every value.  A multiply or subtract with exactly
 *      one use can be absorbed: the op that uses it replaces it, so the
 *      rewrite never computes a product twice.
 *   2. exp(x) on f32 (not `exact`) becomes exp2(x * log2 e): the operations
 *      its lowering emits anyway, now visible to steps 3 and 4.
 *   3. In the argument of an approximate exp2 (softmax's `exp(x - max)` after
 *      step 2, attention's `exp2((s - m) * scale)`), distribute a row-uniform
 *      subtraction into a scale:
 *        (x - b) * s  ->  fma(x, s, b'),  b' = broadcast(-(b0 * s))
 *      when the subtraction has one use, b is a splat or broadcast of a
 *      smaller b0 and s is uniform (a constant or a splat of a scalar).  The
 *      product b0 * s is computed once per b0 element (once per row), so each
 *      element costs one fma instead of a subtract and a multiply.  Besides
 *      contraction this reassociates: the exponent's absolute error becomes
 *      ulp(b*s)/2 where it was ulp(x - b)/2 * s (2^-24 * |max * log2 e|, as
 *      in Triton's attention, which writes this form by hand).  Nowhere
 *      else: a layer norm's `(x - mean) * rstd` would lose the digits the
 *      subtraction keeps (x = 1e4 + noise: 1e-2 instead of 1e-7).
 *   4. Contract a multiply with one use into the add or subtract using it:
 *        a*b + c, c + a*b -> fma(a, b, c)     a*b - c -> fma(a, b, -c)
 *        c - a*b          -> fma(-a, b, c)
 *      (`x*s - m*s` is the second form with c = m*s.)  A negation is built
 *      at the smallest shape: constants are negated, splat, broadcast and
 *      expand_dims are looked through, so `-m[:, None]` negates m per row.
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

/* The uniform value s (a constant or a splat of a scalar) with type t, or 0. */
static ValueId uniform_as(Func *f, Inst *at, ValueId s, const Type *t) {
    Inst *d = def_of(f, s);
    if (!d) return 0;
    if (d->op == OP_CONST) return emit_before(f, at, OP_CONST, NULL, 0, t, &d->a);
    if (d->op == OP_SPLAT) return t->rank ? emit_before(f, at, OP_SPLAT, d->ops, 1, t, NULL) : d->ops[0];
    return 0;
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

/* Step 3 on a multiply i: (x - b) * s with b a splat or broadcast. */
static bool distribute(Contract *c, Inst *i) {
    Func *f = c->f;
    for (int k = 0; k < 2; k++) {
        Inst *sub = single_use_def(c, i->ops[k], OP_SUB);
        ValueId s = i->ops[1 - k];
        if (!sub) continue;
        Inst *bd = def_of(f, sub->ops[1]);
        if (!bd || (bd->op != OP_SPLAT && bd->op != OP_BROADCAST)) continue;
        ValueId b0 = bd->ops[0];
        ValueId s0 = uniform_as(f, i, s, tir_vtype(f, b0));
        if (!s0) continue;
        ValueId prod[2] = {b0, s0};
        ValueId p = emit_before(f, i, OP_MUL, prod, 2, tir_vtype(f, b0), NULL);
        ValueId np = emit_before(f, i, OP_NEG, &p, 1, tir_vtype(f, b0), NULL);
        ValueId nb = emit_before(f, i, bd->op, &np, 1, tir_vtype(f, sub->ops[1]), &bd->a);
        make_fma(f, i, sub->ops[0], s, nb);
        tir_inst_remove(sub);
        return true;
    }
    return false;
}

/* Step 4 on an add or subtract i. */
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

/* Step 2: exp(x) -> exp2(x * log2 e), then step 3 on the new multiply. */
static void exp_to_exp2(Contract *c, Inst *i) {
    Func *f = c->f;
    const Type *t = tir_vtype(f, i->ops[0]);
    Attrs k = {.smem_offset = -1, .is_float = 1, .fval = 1.4426950408889634};
    ValueId ops[2] = {i->ops[0], emit_before(f, i, OP_CONST, NULL, 0, t, &k)};
    ValueId m = emit_before(f, i, OP_MUL, ops, 2, t, NULL);
    i->op = OP_EXP2;
    i->ops[0] = m;
    distribute(c, def_of(f, m));
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
        case OP_EXP2: { /* exp2((x - m) * s), as attention writes it */
            Inst *mul = i->a.ival ? NULL : single_use_def(c, i->ops[0], OP_MUL);
            if (mul) distribute(c, mul);
            break;
        }
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

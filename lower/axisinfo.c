/* axisinfo.c - contiguity, divisibility and constancy of integer and pointer values.
 *
 * The facts that decide how wide a global access may be (Triton's axis info):
 *   1. Seed: arange is contiguous over its length and divisible by the largest
 *      power of two dividing its start; constants know their value; program
 *      ids are divisible by 1; arguments specialized `div16` are divisible by
 *      16 (pointers: 16-byte aligned).
 *      multiple_of, max_contiguous and max_constancy (the user's hints) raise
 *      the facts of their operand.
 *   2. Walk the function in program order, deriving each result from its
 *      operands with the rules below (add of contiguous and constant stays
 *      contiguous, mul multiplies divisibility, broadcast makes the stretched
 *      dim constant, a comparison of a contiguous run with a constant is
 *      constant over runs no longer than both divisibilities, ...).
 *   3. Loop-carried values start from their initial value and are met
 *      (gcd) with what the body yields; the body is re-walked until the facts
 *      stop changing (at most 4 times).
 * Divisibility is capped at 2^20; unknown values have contiguity,
 * divisibility and constancy 1. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

#define DIV_MAX (1 << 20)

static int32_t gcd32(int32_t a, int32_t b) {
    while (b) {
        int32_t t = a % b;
        a = b;
        b = t;
    }
    return a < 1 ? 1 : a;
}

static int32_t pow2_div(int64_t v) {
    if (v == 0) return DIV_MAX;
    uint64_t u = (uint64_t)(v < 0 ? -(uint64_t)v : (uint64_t)v);
    int32_t p = 1;
    while (!(u & 1) && p < DIV_MAX) {
        u >>= 1;
        p <<= 1;
    }
    return p;
}

static int32_t mul_cap(int32_t a, int32_t b) {
    int64_t p = (int64_t)a * b;
    return p > DIV_MAX ? DIV_MAX : (int32_t)p;
}

static AxisInfo unknown(const Type *t) {
    AxisInfo a = {0};
    for (int d = 0; d < TIR_MAX_RANK; d++) a.contig[d] = a.div[d] = a.constancy[d] = 1;
    (void)t;
    return a;
}

static AxisInfo constant(const Type *t, int64_t v, bool known) {
    AxisInfo a = unknown(t);
    for (int d = 0; d < t->rank; d++) a.constancy[d] = t->shape[d];
    for (int d = 0; d < TIR_MAX_RANK; d++) a.div[d] = known ? pow2_div(v) : 1;
    a.is_const = known;
    a.value = v;
    return a;
}

typedef struct Ctx {
    Func *f;
    AxisInfo *info;
    bool changed;
} Ctx;

static bool same(const AxisInfo *a, const AxisInfo *b) { return !memcmp(a, b, sizeof *a); }

static void set(Ctx *c, ValueId v, AxisInfo a) {
    if (!same(&c->info[v], &a)) c->changed = true;
    c->info[v] = a;
}

static AxisInfo meet(AxisInfo a, AxisInfo b) {
    AxisInfo r = a;
    for (int d = 0; d < TIR_MAX_RANK; d++) {
        r.contig[d] = gcd32(a.contig[d], b.contig[d]);
        r.div[d] = gcd32(a.div[d], b.div[d]);
        r.constancy[d] = gcd32(a.constancy[d], b.constancy[d]);
    }
    r.is_const = a.is_const && b.is_const && a.value == b.value;
    return r;
}

static void walk(Ctx *c, Block *b);

static void visit(Ctx *c, Inst *i) {
    Func *f = c->f;
    if (!i->nres && !tir_is_loop(i->op) && i->op != OP_IF) return;
    const Type *t = i->nres ? tir_vtype(f, i->res[0]) : NULL;
    AxisInfo *in = c->info;
    const AxisInfo *x = i->nops > 0 ? &in[i->ops[0]] : NULL;
    const AxisInfo *y = i->nops > 1 ? &in[i->ops[1]] : NULL;
    AxisInfo r = t ? unknown(t) : (AxisInfo){0};
    int rank = t ? t->rank : 0;
    switch (i->op) {
    case OP_CONST:
        r = constant(t, i->a.is_float ? 0 : i->a.ival, !i->a.is_float);
        break;
    case OP_ARANGE:
        r = unknown(t);
        r.contig[0] = t->shape[0];
        r.div[0] = pow2_div(i->a.ival);
        break;
    case OP_SPLAT:
        r = constant(t, x->value, x->is_const);
        for (int d = 0; d < TIR_MAX_RANK; d++) r.div[d] = x->div[0];
        break;
    case OP_BROADCAST: {
        const Type *st = tir_vtype(f, i->ops[0]);
        r = *x;
        for (int d = 0; d < rank; d++)
            if (st->shape[d] == 1 && t->shape[d] != 1) {
                r.contig[d] = 1;
                r.constancy[d] = t->shape[d];
            }
        break;
    }
    case OP_EXPAND_DIMS: {
        int ax = (int)i->a.ival;
        r = *x;
        for (int d = rank - 1; d > ax; d--) {
            r.contig[d] = x->contig[d - 1];
            r.div[d] = x->div[d - 1];
            r.constancy[d] = x->constancy[d - 1];
        }
        r.contig[ax] = 1;
        r.constancy[ax] = 1;
        /* along the new size-1 dim every element is its own run, so its divisibility must hold
         * for every element: a source dim with runs longer than 1 contributes nothing (only a
         * run's first element is known divisible) */
        r.div[ax] = DIV_MAX;
        for (int d = 0; d < rank - 1; d++) r.div[ax] = gcd32(r.div[ax], x->contig[d] > 1 ? 1 : x->div[d]);
        if (rank == 1) r.div[ax] = x->div[0];
        break;
    }
    case OP_TRANS:
        for (int d = 0; d < rank; d++) {
            r.contig[d] = x->contig[i->a.perm[d]];
            r.div[d] = x->div[i->a.perm[d]];
            r.constancy[d] = x->constancy[i->a.perm[d]];
        }
        break;
    case OP_CONVERT_LAYOUT:
        r = *x;
        break;
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS:
    case OP_MAX_CONSTANCY: /* what the analysis found, or the hint where it says more: as powers of
                            * two (a run of 24 from a multiple of 24 is three runs of 8 from multiples
                            * of 8), runs no longer than the dim */
        r = *x;
        for (int d = 0; d < (rank ? rank : 1); d++) {
            int32_t h = pow2_div(i->a.perm[d]), *fact = i->op == OP_MULTIPLE_OF ? r.div : i->op == OP_MAX_CONTIGUOUS ? r.contig : r.constancy;
            if (i->op != OP_MULTIPLE_OF && rank && h > t->shape[d]) h = t->shape[d];
            if (h > fact[d]) fact[d] = h;
        }
        break;
    case OP_CAST:
        if (dtype_is_int(t->dt) && dtype_is_int(tir_vtype(f, i->ops[0])->dt) && dtype_bits(t->dt) >= dtype_bits(tir_vtype(f, i->ops[0])->dt))
            r = *x;
        break;
    case OP_ADD:
    case OP_SUB:
    case OP_PTR_ADD: {
        int scale = 1;
        if (i->op == OP_PTR_ADD) scale = dtype_bytes(t->pointee->dt);
        for (int d = 0; d < TIR_MAX_RANK; d++) {
            int32_t yd = mul_cap(y->div[d], scale);
            if (i->op == OP_SUB) r.contig[d] = gcd32(x->contig[d], y->constancy[d]);
            else r.contig[d] = (int32_t)(gcd32(x->contig[d], y->constancy[d]) > gcd32(y->contig[d], x->constancy[d])
                                              ? gcd32(x->contig[d], y->constancy[d])
                                              : gcd32(y->contig[d], x->constancy[d]));
            r.div[d] = gcd32(x->div[d], yd);
            r.constancy[d] = gcd32(x->constancy[d], y->constancy[d]);
        }
        if (i->op != OP_PTR_ADD && x->is_const && y->is_const) {
            r.is_const = true;
            r.value = i->op == OP_SUB ? x->value - y->value : x->value + y->value;
        }
        break;
    }
    case OP_MUL:
        for (int d = 0; d < TIR_MAX_RANK; d++) {
            r.contig[d] = 1;
            if (y->is_const && y->value == 1) r.contig[d] = x->contig[d];
            if (x->is_const && x->value == 1) r.contig[d] = y->contig[d];
            r.div[d] = mul_cap(x->div[d], y->div[d]);
            r.constancy[d] = gcd32(x->constancy[d], y->constancy[d]);
        }
        if (x->is_const && y->is_const) {
            r.is_const = true;
            r.value = (int64_t)((uint64_t)x->value * (uint64_t)y->value);
        }
        break;
    case OP_DIV:
    case OP_REM:
    case OP_SHR:
        for (int d = 0; d < TIR_MAX_RANK; d++) r.constancy[d] = gcd32(x->constancy[d], y->constancy[d]);
        break;
    case OP_SHL:
        for (int d = 0; d < TIR_MAX_RANK; d++) {
            r.constancy[d] = gcd32(x->constancy[d], y->constancy[d]);
            if (y->is_const && y->value >= 0 && y->value < 20) r.div[d] = mul_cap(x->div[d], 1 << y->value);
        }
        break;
    case OP_CMP:
        for (int d = 0; d < TIR_MAX_RANK; d++) {
            r.constancy[d] = gcd32(x->constancy[d], y->constancy[d]);
            /* contiguous run compared with something constant over the run: the result is constant
             * over chunks that start at multiples of both divisibilities */
            int pred = (int)i->a.ival2;
            if (pred == CMP_LT || pred == CMP_GE || pred == CMP_LE || pred == CMP_GT) {
                if (x->contig[d] > 1 && y->constancy[d] > 1) {
                    int32_t k = gcd32(gcd32(x->contig[d], y->constancy[d]), gcd32(x->div[d], y->div[d]));
                    if (k > r.constancy[d]) r.constancy[d] = k;
                }
            }
        }
        break;
    case OP_MIN:
    case OP_MAX: /* the result is one of the operands: divisible by what divides both */
        for (int d = 0; d < TIR_MAX_RANK; d++) {
            r.constancy[d] = gcd32(x->constancy[d], y->constancy[d]);
            r.div[d] = gcd32(x->div[d], y->div[d]);
        }
        break;
    case OP_AND:
    case OP_OR:
    case OP_XOR:
    case OP_NOT:
    case OP_NEG:
        for (int d = 0; d < TIR_MAX_RANK; d++) {
            r.constancy[d] = x->constancy[d];
            if (y) r.constancy[d] = gcd32(r.constancy[d], y->constancy[d]);
        }
        break;
    case OP_SELECT:
        for (int d = 0; d < TIR_MAX_RANK; d++) {
            const AxisInfo *a = &in[i->ops[1]], *b = &in[i->ops[2]];
            r.constancy[d] = gcd32(gcd32(x->constancy[d], a->constancy[d]), b->constancy[d]);
            r.div[d] = gcd32(a->div[d], b->div[d]);
            r.contig[d] = gcd32(x->constancy[d], gcd32(a->contig[d], b->contig[d]));
        }
        break;
    case OP_FOR:
    case OP_WHILE: {
        Block *body = i->regions[0];
        int a0 = tir_loop_arg(i), n = i->nops - tir_loop_init(i);
        if (i->op == OP_FOR) { /* induction variable: divisible by gcd of lb and step */
            AxisInfo iv = unknown(tir_vtype(f, body->args[0]));
            iv.div[0] = gcd32(in[i->ops[0]].div[0], in[i->ops[2]].div[0]);
            set(c, body->args[0], iv);
        }
        for (int k = 0; k < n; k++) set(c, body->args[a0 + k], in[i->ops[tir_loop_init(i) + k]]);
        for (int it = 0; it < 4; it++) {
            walk(c, body);
            Inst *y_ = body->last;
            bool moved = false;
            for (int k = 0; k < n && y_ && y_->op == OP_YIELD && k < y_->nops; k++) {
                AxisInfo m = meet(in[body->args[a0 + k]], in[y_->ops[k]]);
                if (!same(&m, &in[body->args[a0 + k]])) moved = true;
                set(c, body->args[a0 + k], m);
            }
            if (!moved) break;
        }
        for (int k = 0; k < i->nres; k++) set(c, i->res[k], in[body->args[a0 + k]]);
        return;
    }
    case OP_IF: {
        for (int r2 = 0; r2 < i->nregions; r2++) walk(c, i->regions[r2]);
        for (int k = 0; k < i->nres; k++) {
            AxisInfo m = unknown(tir_vtype(f, i->res[k]));
            Inst *a = i->regions[0]->last, *b = i->nregions > 1 ? i->regions[1]->last : NULL;
            if (a && b && a->op == OP_YIELD && b->op == OP_YIELD && k < a->nops && k < b->nops)
                m = meet(in[a->ops[k]], in[b->ops[k]]);
            set(c, i->res[k], m);
        }
        return;
    }
    default: break;
    }
    if (i->nres) set(c, i->res[0], r);
    for (int k = 1; k < i->nres; k++) set(c, i->res[k], unknown(tir_vtype(f, i->res[k])));
}

static void walk(Ctx *c, Block *b) {
    for (Inst *i = b->first; i; i = i->next) visit(c, i);
}

AxisInfo *axisinfo_compute(Func *f) {
    Ctx c = {.f = f};
    c.info = calloc(f->nvalues, sizeof(AxisInfo));
    if (!c.info) out_of_memory();
    for (uint32_t v = 0; v < f->nvalues; v++) c.info[v] = unknown(f->values[v].type);
    for (int k = 0; k < f->nargs; k++) {
        FuncArg *a = &f->args[k];
        AxisInfo ai = unknown(tir_vtype(f, a->value));
        if (a->spec == SPEC_DIV16) ai.div[0] = 16;
        if (a->spec == SPEC_ONE) {
            ai.is_const = true;
            ai.value = 1;
        }
        c.info[a->value] = ai;
    }
    walk(&c, f->body);
    return c.info;
}

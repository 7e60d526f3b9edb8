/* peel.c - split a loop whose masks are all true but in its last iterations
 * into an unmasked steady state and a masked remainder.
 *
 * The classic cases: a K loop whose last tile runs past K (`k0 + arange(0,
 * BK) < K`), an attention key loop whose last block runs past the sequence
 * (`cols < len_k`) or crosses the causal diagonal (`cols <= rows + diag`).
 * Every iteration before the boundary computes masks that are all true;
 * after peeling it computes none, and canonicalize drops the masks from
 * the loads, stores and selects that used them.
 *
 * Algorithm, for each `for` with no loop inside it, a `dot` in it, a
 * positive constant step, and not already a remainder (a loop without a dot
 * is memory-bound: its mask arithmetic costs nothing there, and the second
 * copy of its body would cost compile time):
 *   1. Ranges.  An integer value is described as  S + [lo, hi]:  every
 *      element lies in [S + lo, S + hi], where S is a sum of scalar terms
 *      with signs (the induction variable, or scalars defined before the
 *      loop) and lo, hi are constants.  arange(a, b) is [a, b-1]; constants
 *      are [c, c]; splat, broadcast, expand_dims, convert_layout and signed
 *      widening casts keep the range; add adds, sub and neg subtract; anything else inside the loop
 *      is unknown.  (Integer arithmetic is taken not to wrap, as the masks'
 *      own arithmetic is.)
 *   2. Compares.  For a signed compare a < b or a <= b (b > a, b >= a) in
 *      the body, d = b - a is  -iv + R + [dlo, dhi]  when the induction
 *      variable appears in a with +1 and not in b, or in b with -1 and not
 *      in a; then every element is true when iv < R + dlo (<: d > 0) or
 *      iv < R + dlo + 1 (<=: d >= 0).  Compares of the induction variable
 *      the other way round (true from some iteration on) are left alone.
 *   3. When one of them is a tensor: before the loop, in i64,
 *        T = min over the compares of their bound,
 *        n = min(cdiv(max(T - lb, 0), step), cdiv(max(ub - lb, 0), step)),
 *        split = min(lb + n * step, max(ub, lb)),
 *      then a copy of the loop over [lb, split) with those compares
 *      replaced by `true`, and the loop itself over [split, ub) from the
 *      copy's results, marked `remainder` (never peeled again).
 * It runs after software_pipeline: the copies a pipelined loop issues for
 * iteration iv + (S-1) step and its "that iteration runs" test are
 * compares of the same form, so the steady state issues unmasked copies and
 * stops S-1 iterations early, and the remainder continues the same
 * pipeline (stages, groups) with every mask, instead of starting its own
 * with the accumulators live.  canonicalize, run next, folds the `true`s
 * away: and with true, select on true, a memory op's true mask.
 * The iterations, their order and every value are the same as before. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TERMS 6
#define RANGE_LIMIT ((int64_t)1 << 40)

typedef struct Range {
    bool ok;
    int nt;
    ValueId t[MAX_TERMS];
    int8_t sign[MAX_TERMS];
    int64_t lo, hi;
} Range;

typedef struct Peel {
    Module *m;
    Func *f;
    bool *inside; /* by ValueId: defined in the loop being looked at */
    uint32_t ninside;
    ValueId iv;
} Peel;

static Range unknown(void) { return (Range){0}; }

static Range term(ValueId v) { return (Range){.ok = true, .nt = 1, .t = {v}, .sign = {1}}; }

static Range add_term(Range r, ValueId v, int sign) {
    for (int k = 0; k < r.nt; k++)
        if (r.t[k] == v && r.sign[k] == -sign) { /* cancels */
            r.t[k] = r.t[r.nt - 1], r.sign[k] = r.sign[r.nt - 1];
            r.nt--;
            return r;
        }
    if (r.nt == MAX_TERMS) return unknown();
    r.t[r.nt] = v, r.sign[r.nt] = (int8_t)sign;
    r.nt++;
    return r;
}

/* a + sign * b */
static Range combine(Range a, Range b, int sign) {
    if (!a.ok || !b.ok) return unknown();
    for (int k = 0; k < b.nt && a.ok; k++) a = add_term(a, b.t[k], sign * b.sign[k]);
    if (!a.ok) return a;
    int64_t lo = sign > 0 ? b.lo : -b.hi, hi = sign > 0 ? b.hi : -b.lo;
    a.lo += lo, a.hi += hi;
    if (a.lo < -RANGE_LIMIT || a.hi > RANGE_LIMIT) return unknown();
    return a;
}

static bool is_signed_int(DType dt) { return dtype_is_int(dt) && dtype_is_signed(dt) && dt != DT_I1; }

static Range range_of(Peel *p, ValueId v, int depth) {
    Func *f = p->f;
    const Type *t = tir_vtype(f, v);
    if (!is_signed_int(t->dt) || depth > 24) return unknown();
    if (v == p->iv) return term(v);
    Inst *d = f->values[v].def;
    bool in = v < p->ninside && p->inside[v];
    if (!d) return in || t->rank ? unknown() : term(v);
    switch (d->op) {
    case OP_CONST:
        if (d->a.is_float || d->a.ival < -RANGE_LIMIT || d->a.ival > RANGE_LIMIT) return unknown();
        return (Range){.ok = true, .lo = d->a.ival, .hi = d->a.ival};
    case OP_ARANGE:
        if (d->a.ival2 <= d->a.ival) return unknown();
        return (Range){.ok = true, .lo = d->a.ival, .hi = d->a.ival2 - 1};
    case OP_SPLAT:
    case OP_BROADCAST:
    case OP_EXPAND_DIMS:
    case OP_CONVERT_LAYOUT: return range_of(p, d->ops[0], depth + 1);
    case OP_ADD: return combine(range_of(p, d->ops[0], depth + 1), range_of(p, d->ops[1], depth + 1), 1);
    case OP_SUB: return combine(range_of(p, d->ops[0], depth + 1), range_of(p, d->ops[1], depth + 1), -1);
    case OP_NEG: return combine((Range){.ok = true}, range_of(p, d->ops[0], depth + 1), -1);
    case OP_CAST: /* a signed widening (software_pipeline's "iteration runs" test compares in i64) */
        if (is_signed_int(tir_vtype(f, d->ops[0])->dt) && dtype_bits(tir_vtype(f, d->ops[0])->dt) <= dtype_bits(t->dt))
            return range_of(p, d->ops[0], depth + 1);
        break;
    default: break;
    }
    /* a scalar computed before the loop is a term; anything else is unknown */
    return in || t->rank ? unknown() : term(v);
}

/* Index of the induction variable's term in r, -1 when absent. */
static int iv_term(const Peel *p, const Range *r) {
    for (int k = 0; k < r->nt; k++)
        if (r->t[k] == p->iv) return k;
    return -1;
}

/* The compare i as "true for every iv < bound": bound = terms + c.  False if it is not one. */
static bool compare_bound(Peel *p, Inst *i, Range *bound) {
    if (i->op != OP_CMP || !is_signed_int(tir_vtype(p->f, i->ops[0])->dt)) return false;
    CmpPred pred = (CmpPred)i->a.ival2;
    ValueId a, b;
    switch (pred) {
    case CMP_LT:
    case CMP_LE: a = i->ops[0], b = i->ops[1]; break;
    case CMP_GT:
    case CMP_GE: a = i->ops[1], b = i->ops[0]; break;
    default: return false;
    }
    Range d = combine(range_of(p, b, 0), range_of(p, a, 0), -1);
    if (!d.ok) return false;
    int k = iv_term(p, &d);
    if (k < 0 || d.sign[k] != -1) return false;
    d = add_term(d, p->iv, 1); /* drop -iv: d = R + [dlo, dhi] */
    if (!d.ok) return false;
    *bound = (Range){.ok = true, .nt = d.nt, .lo = d.lo + (pred == CMP_LE || pred == CMP_GE)};
    memcpy(bound->t, d.t, sizeof d.t);
    memcpy(bound->sign, d.sign, sizeof d.sign);
    return true;
}

static bool mark_inside(Inst *i, void *ud) {
    Peel *p = ud;
    for (int k = 0; k < i->nres; k++) p->inside[i->res[k]] = true;
    for (int r = 0; r < i->nregions; r++)
        for (int a = 0; a < i->regions[r]->nargs; a++) p->inside[i->regions[r]->args[a]] = true;
    return true;
}

static bool has_loop(Inst *i, void *ud) {
    (void)ud;
    return !tir_is_loop(i->op);
}

static bool has_no_dot(Inst *i, void *ud) {
    (void)ud;
    return i->op != OP_DOT;
}

typedef struct Found {
    Peel *p;
    Inst **cmps;
    Range *bounds;
    int n, cap;
    bool tensor;
} Found;

static bool find_compares(Inst *i, void *ud) {
    Found *fo = ud;
    Range b;
    if (!compare_bound(fo->p, i, &b)) return true;
    if (fo->n == fo->cap) {
        fo->cap = fo->cap ? 2 * fo->cap : 8;
        fo->cmps = realloc(fo->cmps, sizeof *fo->cmps * (size_t)fo->cap);
        fo->bounds = realloc(fo->bounds, sizeof *fo->bounds * (size_t)fo->cap);
        if (!fo->cmps || !fo->bounds) out_of_memory();
    }
    fo->cmps[fo->n] = i;
    fo->bounds[fo->n++] = b;
    if (tir_vtype(fo->p->f, i->res[0])->rank) fo->tensor = true;
    return true;
}

/* ---- emitting the split point ---- */

static ValueId emit(Builder *b, Op op, ValueId x, ValueId y, const Type *t) {
    ValueId ops[2] = {x, y};
    return tir_emit_v(b, op, ops, y ? 2 : 1, t);
}

static ValueId to_i64(Builder *b, ValueId v) {
    const Type *t64 = tir_scalar(b->f->module, DT_I64);
    return tir_vtype(b->f, v) == t64 ? v : emit(b, OP_CAST, v, 0, t64);
}

static ValueId bound_value(Builder *b, const Range *r) {
    const Type *t64 = tir_scalar(b->f->module, DT_I64);
    ValueId acc = tir_const_int(b, t64, r->lo);
    for (int k = 0; k < r->nt; k++) acc = emit(b, r->sign[k] > 0 ? OP_ADD : OP_SUB, acc, to_i64(b, r->t[k]), t64);
    return acc;
}

/* cdiv(max(x, 0), step) for a positive constant step */
static ValueId trips(Builder *b, ValueId x, ValueId step64) {
    const Type *t64 = tir_scalar(b->f->module, DT_I64);
    ValueId z = emit(b, OP_MAX, x, tir_const_int(b, t64, 0), t64);
    ValueId s1 = emit(b, OP_SUB, step64, tir_const_int(b, t64, 1), t64);
    return emit(b, OP_DIV, emit(b, OP_ADD, z, s1, t64), step64, t64);
}

/* ---- cloning the loop ---- */

typedef struct Clone {
    Func *f;
    ValueId *map; /* old -> new, 0 unmapped */
    uint32_t nmap;
    Inst **truthy; /* compares replaced by true */
    int ntruthy;
} Clone;

static ValueId mapped(const Clone *c, ValueId v) { return v < c->nmap && c->map[v] ? c->map[v] : v; }

static bool is_truthy(const Clone *c, const Inst *i) {
    for (int k = 0; k < c->ntruthy; k++)
        if (c->truthy[k] == i) return true;
    return false;
}

static void clone_block(Clone *c, const Block *from, Block *to) {
    Func *f = c->f;
    for (int a = 0; a < from->nargs; a++) c->map[from->args[a]] = tir_block_add_arg(f, to, tir_vtype(f, from->args[a]));
    for (const Inst *i = from->first; i; i = i->next) {
        const Type *rt[16];
        const Type **rtp = i->nres <= 16 ? rt : malloc(sizeof *rtp * (size_t)i->nres);
        if (!rtp) out_of_memory();
        for (int k = 0; k < i->nres; k++) rtp[k] = tir_vtype(f, i->res[k]);
        Inst *n;
        if (is_truthy(c, i)) {
            n = tir_inst_new(f, OP_CONST, NULL, 0, rtp, 1, i->loc);
            n->a.ival = 1;
        } else {
            ValueId ops[16];
            ValueId *opp = i->nops <= 16 ? ops : malloc(sizeof *opp * (size_t)i->nops);
            if (!opp) out_of_memory();
            for (int k = 0; k < i->nops; k++) opp[k] = mapped(c, i->ops[k]);
            n = tir_inst_new(f, i->op, opp, i->nops, rtp, i->nres, i->loc);
            n->a = i->a;
            if (opp != ops) free(opp);
        }
        if (rtp != rt) free(rtp);
        for (int k = 0; k < i->nres; k++) c->map[i->res[k]] = n->res[k];
        for (int r = 0; r < i->nregions && n->op != OP_CONST; r++) {
            Block *nb = tir_block_new(f, n);
            tir_inst_add_region(f, n, nb);
            clone_block(c, i->regions[r], nb);
        }
        tir_block_append(to, n);
    }
}

static void peel_loop(Peel *p, Inst *loop, Found *fo) {
    Func *f = p->f;
    const Type *t64 = tir_scalar(p->m, DT_I64);
    const Type *ivt = tir_vtype(f, loop->ops[0]);
    Builder b = {.f = f, .block = loop->parent, .before = loop, .loc = loop->loc};

    /* step 3: the split point */
    ValueId bound = 0;
    for (int k = 0; k < fo->n; k++) {
        ValueId v = bound_value(&b, &fo->bounds[k]);
        bound = bound ? emit(&b, OP_MIN, bound, v, t64) : v;
    }
    ValueId lb = to_i64(&b, loop->ops[0]), ub = to_i64(&b, loop->ops[1]), step = to_i64(&b, loop->ops[2]);
    ValueId n = emit(&b, OP_MIN, trips(&b, emit(&b, OP_SUB, bound, lb, t64), step),
                     trips(&b, emit(&b, OP_SUB, ub, lb, t64), step), t64);
    ValueId split = emit(&b, OP_ADD, lb, emit(&b, OP_MUL, n, step, t64), t64);
    split = emit(&b, OP_MIN, split, emit(&b, OP_MAX, ub, lb, t64), t64);
    if (ivt != t64) split = emit(&b, OP_CAST, split, 0, ivt);

    /* the unmasked copy over [lb, split) */
    Clone c = {.f = f, .truthy = fo->cmps, .ntruthy = fo->n};
    c.nmap = f->nvalues;
    c.map = calloc(c.nmap, sizeof *c.map);
    if (!c.map) out_of_memory();
    ValueId *ops = malloc(sizeof *ops * (size_t)loop->nops);
    const Type **rt = malloc(sizeof *rt * (size_t)(loop->nres ? loop->nres : 1));
    if (!ops || !rt) out_of_memory();
    memcpy(ops, loop->ops, sizeof *ops * (size_t)loop->nops);
    ops[1] = split;
    for (int k = 0; k < loop->nres; k++) rt[k] = tir_vtype(f, loop->res[k]);
    Inst *steady = tir_inst_new(f, OP_FOR, ops, loop->nops, rt, loop->nres, loop->loc);
    steady->a = loop->a;
    Block *body = tir_block_new(f, steady);
    tir_inst_add_region(f, steady, body);
    clone_block(&c, loop->regions[0], body);
    tir_insert_before(loop, steady);
    free(c.map);
    free(ops);
    free(rt);

    /* the loop itself becomes the remainder over [split, ub) */
    loop->ops[0] = split;
    for (int k = 0; k < loop->nres; k++) loop->ops[tir_loop_init(loop) + k] = steady->res[k];
    loop->a.ival = 1;
}

static bool const_positive(Func *f, ValueId v) {
    Inst *d = f->values[v].def;
    return d && d->op == OP_CONST && !d->a.is_float && d->a.ival > 0;
}

typedef struct Loops {
    Inst **v;
    int n, cap;
} Loops;

static bool collect(Inst *i, void *ud) {
    Loops *l = ud;
    if (i->op != OP_FOR) return true;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
        if (!l->v) out_of_memory();
    }
    l->v[l->n++] = i;
    return true;
}

bool lower_peel(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        Loops loops = {0};
        tir_walk(f->body, collect, &loops);
        for (int l = 0; l < loops.n; l++) {
            Inst *loop = loops.v[l];
            if (loop->a.ival || loop->nregions != 1 || !loop->regions[0]->nargs || !const_positive(f, loop->ops[2]) ||
                !tir_walk(loop->regions[0], has_loop, NULL) || tir_walk(loop->regions[0], has_no_dot, NULL))
                continue;
            Peel p = {.m = m, .f = f, .iv = loop->regions[0]->args[0], .ninside = f->nvalues};
            p.inside = calloc(p.ninside, sizeof *p.inside);
            if (!p.inside) out_of_memory();
            for (int a = 0; a < loop->regions[0]->nargs; a++) p.inside[loop->regions[0]->args[a]] = true;
            tir_walk(loop->regions[0], mark_inside, &p);
            Found fo = {.p = &p};
            tir_walk(loop->regions[0], find_compares, &fo);
            if (fo.tensor) peel_loop(&p, loop, &fo);
            free(fo.cmps);
            free(fo.bounds);
            free(p.inside);
        }
        free(loops.v);
    }
    return true;
}

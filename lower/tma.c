/* tma.c - on sm_90a, stream software_pipeline's tiles through tensor maps: one thread issues a
 * cp.async.bulk.tensor per tile (TMA) that completes on an mbarrier, instead of every thread
 * issuing cp.async for its part and waiting on commit groups.
 *
 * Algorithm, for each loop software_pipeline made (async_copy ops in its body and before it):
 *   1. Forms.  An integer or pointer tile of rank <= 2 is described as
 *        base + u + c0 * i0 + c1 * i1
 *      where i_d is the element's index along dim d and base a pointer argument; u, c0, c1 are
 *      sums of terms c * a * b * .. over scalar atoms (kernel arguments, or any scalar the kernel
 *      computes, taken as opaque).  arange, splat, broadcast, expand_dims, convert_layout, add,
 *      sub, neg, mul (one side uniform), integer casts (taken not to wrap, as the masks' own
 *      arithmetic is) and ptr_add build them; anything else fails.
 *   2. A copy into a stage whose memory-contiguous dim is c (the other o) is legal when its
 *      pointer's form has c_c = 1 and c_o = s a sum of terms over arguments only (the row stride),
 *      its base is a 16-byte aligned pointer argument, and its mask is a conjunction of
 *      broadcasts of `idx_d < B_d` (idx_d of form x_d + i_d, B_d a sum over arguments; terms
 *      of B_d over other scalars move to x_d: the tutorial's `rk < K - k` is `k + rk < K`),
 *      `idx_d >= 0` (`idx_d >= c` likewise) and splats of one scalar i1 `run` (the iteration exists).
 *      Where the pointer's index along a bounded dim is x_d plus a constant, both the
 *      coordinate and the bound take it (a prologue copy's `k < K - 32` with its pointer at 32).  A dim with such a
 *      compare is bounded by B_d at coordinate x_d; the rest of u (u - x_c - x_o * s) goes to
 *      the unbounded dims: to o the terms divisible by s, to c those without an argument, and
 *      each remaining term a * h (h its arguments, a the rest, a >= 0) to an extra dim of
 *      stride h at coordinate a (at most 3: a tensor map has rank <= 5).  Every stride must be
 *      a multiple of 16 bytes by the arguments' specializations.
 *   3. Every copy of one buffer must describe the same tensor map (the loop and its prologue
 *      differ in coordinates only), and every copy of the loop must be legal; otherwise the
 *      loop keeps cp.async.  Stages of rows wider than 128 bytes are 128-byte panels (the
 *      layout of llvm_mma.c's tile_make on sm_90a), one box each.
 *   4. Rewrite: an i64 buffer of one mbarrier per stage, initialized before the prologue
 *      (barrier, mbar_init, barrier) and invalidated after the loop's final barrier (mbar_inval);
 *      each copy group ends, in place of its commit, in its coordinates, mbar_expect(bars,
 *      stage, run) with the stage's bytes and a tma_load per copy, side by side (one issue); the wait at the
 *      top of the body becomes mbar_wait(bars, read stage, phase), the phase a new loop-carried
 *      i32 flipping each time the read stage wraps; the wait after the loop goes (every copy
 *      issued is waited for in the loop).  The barrier after the wait stays: one thread issues
 *      the next copies into the stage every warp has just finished reading.
 * The kernel's tensor maps (Func.tmaps) are hidden parameters after its arguments; the
 * launcher encodes them from the arguments (runtime.c) before each launch. */
#include "layout.h"
#include "passes.h"
#include "smem.h"
#include "../support/target.h"

#include <stdlib.h>
#include <string.h>

enum { MAXT = 12, MAXA = 3 };

/* c * a[0] * a[1] * a[2] (0: no atom; sorted descending so zeros trail) */
typedef struct Term {
    int64_t c;
    ValueId a[MAXA];
} Term;
typedef struct Lin {
    int n;
    Term t[MAXT];
} Lin;
typedef struct Form {
    bool ok;
    ValueId base; /* pointer argument, 0 for integers */
    Lin u, c[2];
} Form;

typedef struct Ctx {
    Module *m;
    Func *f;
    int *args; /* by ValueId: the argument index + 1, 0 for other values */
    uint32_t nargs_map;
    bool fail;
    int steps; /* of the forms and masks read for one access (analyze_tile, access_base) */
} Ctx;

/* The forms and masks are read by walking every path of an address's ops: values used twice over (`r = r + r`,
 * forty times) would make that 2^40 steps.  Past a bound, a read gives up (fail: the access keeps its copies);
 * real addresses take a few dozen. */
enum { FORM_STEPS = 20000 };
static bool over_budget(Ctx *c) {
    if (++c->steps <= FORM_STEPS) return false;
    c->fail = true;
    return true;
}

static int argno(const Ctx *c, ValueId v) { return v < c->nargs_map ? c->args[v] : 0; }

static int natoms(const Term *t) {
    int n = 0;
    while (n < MAXA && t->a[n]) n++;
    return n;
}

static bool same_atoms(const Term *a, const Term *b) { return !memcmp(a->a, b->a, sizeof a->a); }

static void lin_add_term(Ctx *c, Lin *l, Term t) {
    if (!t.c) return;
    for (int i = 0; i < l->n; i++)
        if (same_atoms(&l->t[i], &t)) {
            l->t[i].c += t.c;
            if (!l->t[i].c) l->t[i] = l->t[--l->n];
            return;
        }
    if (l->n == MAXT) {
        c->fail = true;
        return;
    }
    l->t[l->n++] = t;
}

static Lin lin_const(int64_t v) {
    Lin l = {0};
    if (v) l.t[l.n++] = (Term){v, {0}};
    return l;
}

static void lin_acc(Ctx *c, Lin *a, const Lin *b, int64_t k) {
    for (int i = 0; i < b->n; i++) {
        Term t = b->t[i];
        t.c *= k;
        lin_add_term(c, a, t);
    }
}

static Term term_mul(Ctx *c, const Term *x, const Term *y) {
    Term r = {x->c * y->c, {0}};
    int n = 0;
    ValueId all[2 * MAXA];
    for (int i = 0; i < MAXA && x->a[i]; i++) all[n++] = x->a[i];
    for (int i = 0; i < MAXA && y->a[i]; i++) all[n++] = y->a[i];
    if (n > MAXA) {
        c->fail = true;
        return r;
    }
    for (int i = 1; i < n; i++) /* descending */
        for (int j = i; j > 0 && all[j] > all[j - 1]; j--) {
            ValueId s = all[j];
            all[j] = all[j - 1];
            all[j - 1] = s;
        }
    for (int i = 0; i < n; i++) r.a[i] = all[i];
    return r;
}

static Lin lin_mul(Ctx *c, const Lin *x, const Lin *y) {
    Lin r = {0};
    for (int i = 0; i < x->n; i++)
        for (int j = 0; j < y->n; j++) lin_add_term(c, &r, term_mul(c, &x->t[i], &y->t[j]));
    return r;
}

static bool lin_is_zero(const Lin *l) { return l->n == 0; }
static bool lin_is_one(const Lin *l) { return l->n == 1 && l->t[0].c == 1 && !l->t[0].a[0]; }

static bool lin_eq(const Lin *a, const Lin *b) {
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        bool found = false;
        for (int j = 0; j < b->n && !found; j++) found = same_atoms(&a->t[i], &b->t[j]) && a->t[i].c == b->t[j].c;
        if (!found) return false;
    }
    return true;
}

/* ---- step 1: forms ---- */
static Lin scalar_lin(Ctx *c, ValueId v, int depth);

static Lin atom(ValueId v) {
    Lin l = {0};
    l.t[l.n++] = (Term){1, {v}};
    return l;
}

static Lin scalar_lin(Ctx *c, ValueId v, int depth) {
    Inst *d = tir_val(c->f, v)->def;
    if (!d || depth > 48 || over_budget(c)) return atom(v);
    switch (d->op) {
    case OP_CONST: return d->a.is_float ? atom(v) : lin_const(d->a.ival);
    case OP_CAST:
        if (!dtype_is_int(tir_vtype(c->f, d->ops[0])->dt)) return atom(v);
        return scalar_lin(c, d->ops[0], depth + 1);
    case OP_ADD:
    case OP_SUB: {
        Lin r = scalar_lin(c, d->ops[0], depth + 1), b = scalar_lin(c, d->ops[1], depth + 1);
        lin_acc(c, &r, &b, d->op == OP_ADD ? 1 : -1);
        return r;
    }
    case OP_NEG: {
        Lin r = {0}, b = scalar_lin(c, d->ops[0], depth + 1);
        lin_acc(c, &r, &b, -1);
        return r;
    }
    case OP_MUL: {
        Lin a = scalar_lin(c, d->ops[0], depth + 1), b = scalar_lin(c, d->ops[1], depth + 1);
        bool save = c->fail;
        Lin r = lin_mul(c, &a, &b);
        if (c->fail && !save) { /* too many atoms: the product itself is the atom */
            c->fail = false;
            return atom(v);
        }
        return r;
    }
    default: return atom(v);
    }
}

static Form form_of(Ctx *c, ValueId v, int depth);

static Form form_bin(Ctx *c, Inst *d, int depth) {
    Form a = form_of(c, d->ops[0], depth + 1), b = form_of(c, d->ops[1], depth + 1), r = {0};
    if (!a.ok || !b.ok) return r;
    r.ok = true;
    int k = d->op == OP_SUB ? -1 : 1;
    if (d->op == OP_MUL) {
        bool au = lin_is_zero(&a.c[0]) && lin_is_zero(&a.c[1]), bu = lin_is_zero(&b.c[0]) && lin_is_zero(&b.c[1]);
        if (!au && !bu) return (Form){0};
        if (au) { /* the uniform one second */
            Form s = a;
            a = b;
            b = s;
        }
        r.u = lin_mul(c, &a.u, &b.u);
        for (int i = 0; i < 2; i++) r.c[i] = lin_mul(c, &a.c[i], &b.u);
        return r;
    }
    if (a.base && b.base) return (Form){0};
    if (d->op == OP_SUB && b.base) return (Form){0};
    r = a;
    r.base = a.base ? a.base : b.base;
    lin_acc(c, &r.u, &b.u, k);
    for (int i = 0; i < 2; i++) lin_acc(c, &r.c[i], &b.c[i], k);
    return r;
}

static Form form_of(Ctx *c, ValueId v, int depth) {
    Form r = {0};
    const Type *t = tir_vtype(c->f, v);
    Inst *d = tir_val(c->f, v)->def;
    if (depth > 64 || t->rank > 2 || over_budget(c)) return r;
    if (t->rank == 0) {
        if (t->dt == DT_PTR) {
            if (argno(c, v)) return (Form){.ok = true, .base = v};
            if (d && d->op == OP_PTR_ADD) return form_bin(c, d, depth);
            return r;
        }
        if (!dtype_is_int(t->dt)) return r;
        r.ok = true;
        r.u = scalar_lin(c, v, depth);
        return r;
    }
    if (!d) return r;
    switch (d->op) {
    case OP_ARANGE:
        r.ok = true;
        r.u = lin_const(d->a.ival);
        r.c[0] = lin_const(1);
        return r;
    case OP_CONST:
        if (d->a.is_float) return r;
        r.ok = true;
        r.u = lin_const(d->a.ival);
        return r;
    case OP_SPLAT: return form_of(c, d->ops[0], depth + 1);
    case OP_BROADCAST:
    case OP_CONVERT_LAYOUT: return form_of(c, d->ops[0], depth + 1);
    case OP_CAST:
        if (!dtype_is_int(tir_vtype(c->f, d->ops[0])->dt) || !dtype_is_int(t->dt)) return r;
        return form_of(c, d->ops[0], depth + 1);
    case OP_EXPAND_DIMS: {
        Form a = form_of(c, d->ops[0], depth + 1);
        if (!a.ok || t->rank != 2) return r;
        if (d->a.ival == 0) {
            a.c[1] = a.c[0];
            a.c[0] = (Lin){0};
        }
        return a;
    }
    case OP_NEG: {
        Form a = form_of(c, d->ops[0], depth + 1);
        if (!a.ok || a.base) return r;
        r.ok = true;
        lin_acc(c, &r.u, &a.u, -1);
        for (int i = 0; i < 2; i++) lin_acc(c, &r.c[i], &a.c[i], -1);
        return r;
    }
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_PTR_ADD: return form_bin(c, d, depth);
    default: return r;
    }
}

/* ---- step 2: one copy ---- */
static bool host_only(Ctx *c, const Term *t) {
    for (int i = 0; i < MAXA && t->a[i]; i++)
        if (!argno(c, t->a[i])) return false;
    return true;
}

/* Divisibility (in elements) a host term guarantees: its constant times 16 per argument
 * specialized divisible by 16. */
static int64_t host_div(Ctx *c, const Term *t) {
    int64_t d = t->c < 0 ? -t->c : t->c;
    for (int i = 0; i < MAXA && t->a[i]; i++)
        if (c->f->args[argno(c, t->a[i]) - 1].spec == SPEC_DIV16) d *= 16;
    return d;
}

static bool to_host(Ctx *c, const Lin *l, HostExpr *e) {
    memset(e, 0, sizeof *e);
    if (l->n > TMA_MAX_TERMS) return false;
    for (int i = 0; i < l->n; i++) {
        const Term *t = &l->t[i];
        if (!host_only(c, t) || natoms(t) > 2) return false;
        HostTerm *h = &e->t[e->n++];
        h->c = t->c;
        h->a[0] = h->a[1] = -1;
        for (int k = 0; k < natoms(t); k++) h->a[k] = (int16_t)(argno(c, t->a[k]) - 1);
    }
    for (int i = 1; i < e->n; i++) /* one order, so equal maps compare equal */
        for (int j = i; j > 0 && memcmp(&e->t[j], &e->t[j - 1], sizeof e->t[j]) < 0; j--) {
            HostTerm s = e->t[j];
            e->t[j] = e->t[j - 1];
            e->t[j - 1] = s;
        }
    return e->n > 0;
}

static bool stride_ok(Ctx *c, const Lin *s, int esize) {
    for (int i = 0; i < s->n; i++)
        if ((host_div(c, &s->t[i]) * esize) % 16) return false;
    return s->n > 0;
}

typedef struct Copy {
    TensorMap tm;
    Lin coord[TMA_MAX_RANK];
    bool bounded[2];         /* map dims 0 and 1: bounded by the mask */
    Lin bound[2];            /* then the bound (the host evaluates it as tm.dim[d]) */
    ValueId run; /* 0: always */
} Copy;

/* Mask leaves: bounds per dim (x_d, B_d) and the run scalar. */
typedef struct Mask {
    bool bounded[2], has_x[2], lower[2]; /* lower: an `idx >= c` compare */
    Lin x[2], bound[2];
    ValueId run;
} Mask;

static bool mask_leaves(Ctx *c, ValueId v, Mask *mk, int depth) {
    Inst *d = tir_val(c->f, v)->def;
    if (!d || depth > 32 || over_budget(c)) return false;
    switch (d->op) {
    case OP_AND: return mask_leaves(c, d->ops[0], mk, depth + 1) && mask_leaves(c, d->ops[1], mk, depth + 1);
    case OP_BROADCAST:
    case OP_CONVERT_LAYOUT: return mask_leaves(c, d->ops[0], mk, depth + 1);
    case OP_SPLAT:
        if (tir_vtype(c->f, d->ops[0])->rank) return false;
        if (mk->run && mk->run != d->ops[0]) return false;
        mk->run = d->ops[0];
        return true;
    case OP_CONST: return !d->a.is_float && d->a.ival != 0;
    case OP_CMP: {
        int pred = (int)d->a.ival2;
        ValueId lhs = d->ops[0], rhs = d->ops[1];
        if (pred == CMP_GT || pred == CMP_LE) { /* b > a is a < b; a <= b stays unsupported below */
            ValueId s = lhs;
            lhs = rhs;
            rhs = s;
            pred = pred == CMP_GT ? CMP_LT : CMP_GE;
        }
        if (!dtype_is_signed(tir_vtype(c->f, lhs)->dt)) return false;
        Form a = form_of(c, lhs, 0), b = form_of(c, rhs, 0);
        if (!a.ok || !b.ok || a.base || b.base || !lin_is_zero(&b.c[0]) || !lin_is_zero(&b.c[1])) return false;
        int dim = lin_is_one(&a.c[0]) && lin_is_zero(&a.c[1]) ? 0 : lin_is_one(&a.c[1]) && lin_is_zero(&a.c[0]) ? 1 : -1;
        if (dim < 0) return false;
        /* idx < B - k is idx + k < B (the tutorial's `rk < K - k`), and idx >= c is idx - c >= 0:
         * the bound keeps only terms the host can evaluate */
        Lin host = {0};
        for (int i = 0; i < b.u.n; i++) {
            Lin t = {.n = 1, .t = {b.u.t[i]}};
            if (pred == CMP_LT && host_only(c, &b.u.t[i])) lin_acc(c, &host, &t, 1);
            else lin_acc(c, &a.u, &t, -1);
        }
        b.u = host;
        if (pred == CMP_GE) mk->lower[dim] = true;
        if (mk->has_x[dim] && !lin_eq(&mk->x[dim], &a.u)) return false; /* two indices for one dim */
        mk->x[dim] = a.u;
        mk->has_x[dim] = true;
        if (pred == CMP_GE) return lin_is_zero(&b.u); /* idx >= 0: what the tensor map does anyway */
        if (pred != CMP_LT || mk->bounded[dim]) return false;
        for (int i = 0; i < b.u.n; i++)
            if (!host_only(c, &b.u.t[i])) return false;
        mk->bounded[dim] = true;
        mk->bound[dim] = b.u;
        return true;
    }
    default: return false;
    }
}

/* A [rows, cols] tile of dt (tile dims; `contig` the one contiguous in memory) at pointers ptr
 * under mask (0: none). */
static bool analyze_tile(Ctx *c, DType dt, int contig, int rows, int cols, ValueId ptr, ValueId mask, Copy *out) {
    Func *f = c->f;
    int eb = dtype_bits(dt) / 8, other = 1 - contig, rb = cols * eb;
    if (eb != 1 && eb != 2 && eb != 4) return false;
    if (rows > 256 || rows % 8 || (rb > 128 && rb % 128) || rb < 16) return false;
    c->steps = 0;
    Form p = form_of(c, ptr, 0);
    if (c->fail || !p.ok || !p.base || !lin_is_one(&p.c[contig])) return false;
    int base = argno(c, p.base) - 1;
    if (f->args[base].spec != SPEC_DIV16) return false;
    const Lin *s = &p.c[other];
    if (!stride_ok(c, s, eb)) return false;
    for (int i = 0; i < s->n; i++)
        if (!host_only(c, &s->t[i])) return false;
    Mask mk = {0};
    if (mask && !mask_leaves(c, mask, &mk, 0)) return false;
    /* the mask's dims are the tile's: contig/other as above */
    Lin x[2] = {mk.x[contig], mk.x[other]}; /* [0] contiguous dim, [1] the other */
    bool known[2] = {mk.has_x[contig], mk.has_x[other]};
    Lin r = p.u;
    lin_acc(c, &r, &x[0], -1);
    Lin xs = lin_mul(c, &x[1], s);
    lin_acc(c, &r, &xs, -1);
    /* A bounded dim whose pointer index is the mask's plus a constant t (a prologue copy's mask
     * `k < K - 32` beside a pointer at k + 32): the coordinate and the bound both move by t,
     * so every copy describes one map.  (Not with an `idx >= c` compare: the map's lower bound is 0.) */
    for (int i = 0; i < r.n;) {
        Term t = r.t[i];
        int d = -1;
        int64_t q = 0;
        if (!t.a[0] && known[0] && mk.bounded[contig] && !mk.lower[contig]) d = 0, q = t.c;
        else if (known[1] && mk.bounded[other] && !mk.lower[other] && s->n == 1 && s->t[0].c && t.c % s->t[0].c == 0 &&
                 same_atoms(&t, &s->t[0]))
            d = 1, q = t.c / s->t[0].c;
        if (d < 0) {
            i++;
            continue;
        }
        Lin k = lin_const(q);
        lin_acc(c, &x[d], &k, 1);
        lin_acc(c, &mk.bound[d == 0 ? contig : other], &k, 1);
        r.t[i] = r.t[--r.n];
    }
    if (!known[1] && s->n == 1) { /* the terms divisible by the stride */
        const Term *st = &s->t[0];
        for (int i = 0; i < r.n;) {
            Term t = r.t[i], q = {0};
            bool div = st->c && t.c % st->c == 0;
            int nq = 0;
            bool used[MAXA] = {0};
            for (int k = 0; k < MAXA && t.a[k] && div; k++) {
                bool in_s = false;
                for (int j = 0; j < MAXA && st->a[j] && !in_s; j++)
                    if (!used[j] && st->a[j] == t.a[k]) used[j] = in_s = true;
                if (!in_s) q.a[nq++] = t.a[k];
            }
            for (int j = 0; j < MAXA && st->a[j]; j++) div &= used[j];
            if (!div) {
                i++;
                continue;
            }
            q.c = t.c / st->c;
            lin_add_term(c, &x[1], q);
            r.t[i] = r.t[--r.n];
        }
    }
    if (!known[0])
        for (int i = 0; i < r.n;) {
            bool any = false;
            for (int k = 0; k < MAXA && r.t[i].a[k]; k++) any |= argno(c, r.t[i].a[k]) != 0;
            if (any) {
                i++;
                continue;
            }
            lin_add_term(c, &x[0], r.t[i]);
            r.t[i] = r.t[--r.n];
        }
    /* the rest: extra dims a * h */
    TensorMap *tm = &out->tm;
    memset(out, 0, sizeof *out);
    tm->base = base;
    tm->esize = eb;
    tm->swizzle = rb >= 128 ? 128 : rb == 64 ? 64 : rb == 32 ? 32 : 0;
    tm->box[0] = (rb > 128 ? 128 : rb) / eb;
    tm->box[1] = rows;
    tm->rank = 2;
    out->coord[0] = x[0];
    out->coord[1] = x[1];
    for (int d = 0; d < 2; d++) {
        int td = d == 0 ? contig : other;
        if (mk.bounded[td] && !to_host(c, &mk.bound[td], &tm->dim[d])) return false;
        out->bounded[d] = mk.bounded[td];
        out->bound[d] = mk.bound[td];
    }
    if (!to_host(c, s, &tm->stride[1])) return false;
    for (int i = 0; i < r.n; i++) {
        Term h = {1, {0}}, a = {r.t[i].c, {0}};
        int nh = 0, na = 0;
        for (int k = 0; k < MAXA && r.t[i].a[k]; k++) {
            if (argno(c, r.t[i].a[k])) h.a[nh++] = r.t[i].a[k];
            else a.a[na++] = r.t[i].a[k];
        }
        if (!nh || a.c < 0) return false;
        Lin hl = {0};
        hl.t[hl.n++] = h;
        int d;
        /* merge with an extra dim of the same stride */
        for (d = 2; d < tm->rank; d++) {
            HostExpr he;
            if (to_host(c, &hl, &he) && !memcmp(&he, &tm->stride[d], sizeof he)) break;
        }
        if (d == tm->rank) {
            if (tm->rank == TMA_MAX_RANK || !stride_ok(c, &hl, eb) || !to_host(c, &hl, &tm->stride[d])) return false;
            tm->box[d] = 1;
            tm->rank++;
        }
        lin_add_term(c, &out->coord[d], a);
    }
    out->run = mk.run;
    return !c->fail;
}

static bool analyze(Ctx *c, Inst *cp, Copy *out) {
    const Type *bt = tir_vtype(c->f, cp->ops[0]);
    int contig = bt->layout->order[0] - 1;
    return analyze_tile(c, bt->dt, contig, bt->shape[2 - contig], bt->shape[1 + contig], cp->ops[2], cp->nops > 3 ? cp->ops[3] : 0,
                        out);
}

static void ctx_init(Ctx *c, Module *m, Func *f) {
    *c = (Ctx){.m = m, .f = f, .nargs_map = f->nvalues};
    c->args = calloc(f->nvalues + 1, sizeof *c->args);
    if (!c->args) out_of_memory();
    for (int a = 0; a < f->nargs; a++) c->args[f->args[a].value] = a + 1;
}

bool tma_can_load(Module *m, Func *f, ValueId ptr, ValueId mask, int contig) {
    const Target *tg = target_find(m->arch);
    if (!tg || tg->mma != WGMMA || m->no_tma) return false;
    const Type *t = tir_vtype(f, ptr);
    if (t->rank != 2) return false;
    Ctx c;
    ctx_init(&c, m, f);
    Copy cp;
    bool ok = analyze_tile(&c, t->pointee->dt, contig, t->shape[1 - contig], t->shape[contig], ptr, mask, &cp) && !c.fail;
    free(c.args);
    return ok;
}

/* ---- step 4: rewriting ---- */
static ValueId emit(Func *f, Inst *pos, Op op, const ValueId *ops, int n, const Type *t) {
    Inst *i = tir_inst_new(f, op, ops, n, t ? &t : NULL, t ? 1 : 0, pos->loc);
    tir_insert_before(pos, i);
    return t ? i->res[0] : 0;
}

static ValueId cint(Func *f, Inst *pos, const Type *t, int64_t v) {
    Inst *i = tir_inst_new(f, OP_CONST, NULL, 0, &t, 1, pos->loc);
    i->a.ival = v;
    tir_insert_before(pos, i);
    return i->res[0];
}

static ValueId as_i32(Func *f, Inst *pos, ValueId v) {
    const Type *i32 = tir_scalar(f->module, DT_I32);
    return tir_vtype(f, v) == i32 ? v : emit(f, pos, OP_CAST, &v, 1, i32);
}

/* l as scalar arithmetic of type dt (i32 for a coordinate) before pos. */
static ValueId materialize_as(Func *f, Inst *pos, const Lin *l, DType dt) {
    const Type *t32 = tir_scalar(f->module, dt);
    ValueId acc = 0;
    for (int i = 0; i < l->n; i++) {
        const Term *t = &l->t[i];
        ValueId v = 0;
        for (int k = 0; k < MAXA && t->a[k]; k++) {
            ValueId a = dt == DT_I32 ? as_i32(f, pos, t->a[k]) : t->a[k];
            if (tir_vtype(f, a) != t32) a = emit(f, pos, OP_CAST, &a, 1, t32);
            v = v ? emit(f, pos, OP_MUL, (ValueId[]){v, a}, 2, t32) : a;
        }
        if (!v) v = cint(f, pos, t32, t->c);
        else if (t->c != 1) v = emit(f, pos, OP_MUL, (ValueId[]){v, cint(f, pos, t32, t->c)}, 2, t32);
        acc = acc ? emit(f, pos, OP_ADD, (ValueId[]){acc, v}, 2, t32) : v;
    }
    return acc ? acc : cint(f, pos, t32, 0);
}

static ValueId materialize(Func *f, Inst *pos, const Lin *l) { return materialize_as(f, pos, l, DT_I32); }

/* The coordinates of a copy or store through cp's map, before pos.  A bound of 0 or less is encoded as
 * 1 (a map's dims are at least 1), which would let the box's first row or column through although the
 * mask excludes every element (a group of 0 rows, K = 0): where the bound is not a positive constant,
 * a bound <= 0 moves the coordinate far outside the map, so the copy reads zeros and a store or a
 * reduction writes nothing, as the masks say. */
static void coords_of(Func *f, Inst *pos, const Copy *cp, ValueId *out) {
    const Type *i1 = tir_scalar(f->module, DT_I1), *i64 = tir_scalar(f->module, DT_I64);
    for (int d = 0; d < cp->tm.rank; d++) {
        out[d] = materialize(f, pos, &cp->coord[d]);
        if (d >= 2 || !cp->bounded[d] || (cp->bound[d].n == 1 && !cp->bound[d].t[0].a[0] && cp->bound[d].t[0].c > 0)) continue;
        ValueId b = materialize_as(f, pos, &cp->bound[d], DT_I64);
        Inst *cmp = tir_inst_new(f, OP_CMP, (ValueId[]){b, cint(f, pos, i64, 0)}, 2, &i1, 1, pos->loc);
        cmp->a.ival2 = CMP_GT;
        tir_insert_before(pos, cmp);
        out[d] = emit(f, pos, OP_SELECT, (ValueId[]){cmp->res[0], out[d], cint(f, pos, tir_scalar(f->module, DT_I32), 1 << 30)}, 3,
                      tir_scalar(f->module, DT_I32));
    }
}

static void append(Arena *a, ValueId **arr, int *n, ValueId v) {
    *arr = arena_grow(a, *arr, sizeof(ValueId) * (size_t)*n, sizeof(ValueId) * (size_t)(*n + 1));
    (*arr)[(*n)++] = v;
}

static int stage_bytes(Func *f, ValueId buf) {
    const Type *bt = tir_vtype(f, buf);
    return bt->shape[1] * bt->shape[2] * (dtype_bits(bt->dt) / 8);
}

static bool is_buf(ValueId *bufs, int nb, ValueId v) {
    for (int k = 0; k < nb; k++)
        if (bufs[k] == v) return true;
    return false;
}

enum { MAXC = 64 };

static int access_base(Ctx *c, const Inst *i);

/* Whether a store, atomic or inline assembly in [from, until) of a block (regions included; until NULL: to the
 * end) may write through pointer argument `base`. */
static bool writes_in(Ctx *c, Inst *from, const Inst *until, int base) {
    for (Inst *i = from; i && i != until; i = i->next) {
        if (i->op == OP_INLINE_ASM) return true;
        if (i->op == OP_STORE || i->op == OP_ATOMIC_RMW || i->op == OP_ATOMIC_CAS || i->op == OP_TMA_STORE) {
            int at = access_base(c, i);
            if (at < 0 || at == base) return true;
        }
        for (int r = 0; r < i->nregions; r++)
            if (writes_in(c, i->regions[r]->first, NULL, base)) return true;
    }
    return false;
}

/* Whether the kernel may have written through argument `base` with generic stores before `loop` reads it:
 * earlier in each enclosing block, anywhere in an enclosing loop's body (an earlier iteration).  A tensor
 * copy after such a store would need a proxy fence (fence.proxy.async) to see it; the loop keeps cp.async. */
static bool written_before(Ctx *c, Inst *loop, int base) {
    for (Inst *at = loop; at; at = at->parent->parent) {
        Block *b = at->parent;
        bool in_loop = b->parent && tir_is_loop(b->parent->op);
        if (writes_in(c, b->first, in_loop ? NULL : at, base)) return true;
        if (!b->parent) break;
    }
    return false;
}

static void convert_loop(Ctx *c, Inst *loop) {
    Func *f = c->f;
    Module *m = c->m;
    Block *body = loop->regions[0], *outer = loop->parent;
    ValueId bufs[8];
    int nb = 0;
    Inst *top_wait = NULL;
    for (Inst *i = body->first; i; i = i->next) {
        if (i->op == OP_ASYNC_WAIT && !top_wait) top_wait = i;
        if (i->op == OP_ASYNC_COPY && !is_buf(bufs, nb, i->ops[0])) {
            if (nb == 8) return;
            bufs[nb++] = i->ops[0];
        }
    }
    if (!nb || !top_wait) return;
    /* a pipelined loop reads its stages in its own body (a loop around one, e.g. a persistent
     * kernel's loop over tiles, holds the inner loop's prologue and final wait but no view) */
    bool reads = false;
    for (Inst *i = body->first; i && !reads; i = i->next) reads = i->op == OP_LOCAL_VIEW && is_buf(bufs, nb, i->ops[0]);
    if (!reads) return;
    /* the copies: the prologue's (before the loop in its block) and the body's */
    Inst *cps[MAXC], *commits[MAXC];
    int ncp = 0, ncm = 0;
    bool ours = false;
    for (Inst *i = outer->first; i && i != loop; i = i->next) {
        if (i->op == OP_ASYNC_COPY) {
            ours = is_buf(bufs, nb, i->ops[0]);
            if (ours && ncp < MAXC) cps[ncp++] = i;
        } else if (i->op == OP_ASYNC_COMMIT && ours && ncm < MAXC) {
            commits[ncm++] = i;
            ours = false;
        }
    }
    for (Inst *i = body->first; i; i = i->next) {
        if (i->op == OP_ASYNC_COPY && ncp < MAXC) cps[ncp++] = i;
        if (i->op == OP_ASYNC_COMMIT && ncm < MAXC) commits[ncm++] = i;
    }
    if (ncp == MAXC || ncm == MAXC) return;
    Copy *info = calloc((size_t)ncp, sizeof *info);
    if (!info) out_of_memory();
    /* per buffer: every copy legal and of one tensor map */
    bool tma[8];
    TensorMap maps[8];
    for (int b = 0; b < nb; b++) tma[b] = true;
    for (int k = 0; k < ncp; k++) {
        int b = 0;
        while (bufs[b] != cps[k]->ops[0]) b++;
        if (!tma[b]) continue;
        c->fail = false;
        bool first = true;
        for (int j = 0; j < k; j++) first &= cps[j]->ops[0] != cps[k]->ops[0];
        tma[b] = analyze(c, cps[k], &info[k]);
        if (tma[b] && first) maps[b] = info[k].tm;
        else if (tma[b]) tma[b] = !memcmp(&maps[b], &info[k].tm, sizeof maps[b]);
    }
    for (int b = 0; b < nb; b++) /* memory the kernel wrote with plain stores is read through the generic proxy only */
        if (tma[b] && written_before(c, loop, maps[b].base)) tma[b] = false;
    int nt = 0, map_of[8];
    for (int b = 0; b < nb; b++) nt += tma[b];
    if (!nt || f->ntmaps + nt > TIR_MAX_TMAPS) {
        free(info);
        return;
    }
    bool all = nt == nb; /* else the other buffers keep cp.async, its groups and waits */
    f->tmaps = arena_grow(m->arena, f->tmaps, sizeof *f->tmaps * (size_t)f->ntmaps, sizeof *f->tmaps * (size_t)(f->ntmaps + nt));
    for (int b = 0; b < nb; b++) {
        if (!tma[b]) continue;
        map_of[b] = 0; /* one parameter per distinct map (MoE's gate and up halves differ in a coordinate) */
        while (map_of[b] < f->ntmaps && memcmp(&f->tmaps[map_of[b]], &maps[b], sizeof maps[b])) map_of[b]++;
        if (map_of[b] == f->ntmaps) f->tmaps[f->ntmaps++] = maps[b];
    }
    /* the mbarriers */
    int R = tir_vtype(f, bufs[0])->shape[0];
    Inst *first_cp = cps[0]->parent == outer ? cps[0] : loop;
    Layout sl = {.kind = LAYOUT_SHARED, .rank = 3};
    sl.order[0] = 2, sl.order[1] = 1, sl.order[2] = 0;
    const Type *bart = tir_type(m, DT_I64, 3, (int32_t[]){R, 1, 1}, NULL, tir_layout_intern(m, &sl));
    ValueId bars = emit(f, first_cp, OP_LOCAL_ALLOC, NULL, 0, bart);
    emit(f, first_cp, OP_BARRIER, NULL, 0, NULL); /* earlier users of this scratch are done with it */
    emit(f, first_cp, OP_MBAR_INIT, &bars, 1, NULL);
    emit(f, first_cp, OP_BARRIER, NULL, 0, NULL);
    int bytes = 0;
    for (int b = 0; b < nb; b++) bytes += tma[b] ? stage_bytes(f, bufs[b]) : 0;
    const Type *i1 = tir_scalar(m, DT_I1), *i32 = tir_scalar(m, DT_I32);
    /* each group (the copies before a commit): at its end, the coordinates, one expect of the
     * stage's bytes and the loads side by side (one elected issue for them all) */
    for (int g0 = 0, g1; g0 < ncp; g0 = g1) {
        Inst *end = NULL;
        g1 = g0;
        for (Inst *n = cps[g0]; n && !end; n = n->next) {
            if (n->op == OP_ASYNC_COMMIT) end = n;
            else if (g1 < ncp && n == cps[g1]) g1++;
        }
        Inst *ins = end ? end : cps[g1 - 1]->next;
        ValueId ops[8][4 + TMA_MAX_RANK];
        int nt_g = 0, rank[8], which[8];
        for (int k = g0; k < g1 && nt_g < 8; k++) {
            int b = 0;
            while (bufs[b] != cps[k]->ops[0]) b++;
            if (!tma[b]) continue;
            ValueId run = info[k].run ? info[k].run : cint(f, ins, i1, 1);
            ops[nt_g][0] = cps[k]->ops[0], ops[nt_g][1] = cps[k]->ops[1], ops[nt_g][2] = bars, ops[nt_g][3] = run;
            rank[nt_g] = info[k].tm.rank;
            coords_of(f, ins, &info[k], ops[nt_g] + 4);
            which[nt_g++] = k;
        }
        if (!nt_g) continue;
        Inst *e = tir_inst_new(f, OP_MBAR_EXPECT, (ValueId[]){bars, ops[0][1], ops[0][3]}, 3, NULL, 0, cps[which[0]]->loc);
        e->a.ival = bytes;
        tir_insert_before(ins, e);
        for (int t = 0; t < nt_g; t++) {
            Inst *cp = cps[which[t]];
            int b = 0;
            while (bufs[b] != cp->ops[0]) b++;
            Inst *tl = tir_inst_new(f, OP_TMA_LOAD, ops[t], 4 + rank[t], NULL, 0, cp->loc);
            tl->a.ival = map_of[b];
            tir_insert_before(ins, tl);
            tir_inst_remove(cp);
        }
    }
    if (all)
        for (int k = 0; k < ncm; k++) tir_inst_remove(commits[k]);
    /* the wait at the top: the read stage is the views' */
    ValueId rstage = 0;
    for (Inst *i = body->first; i && !rstage; i = i->next)
        if (i->op == OP_LOCAL_VIEW && is_buf(bufs, nb, i->ops[0])) rstage = i->ops[1];
    Arena *a = m->arena;
    ValueId zero = cint(f, loop, i32, 0);
    append(a, &loop->ops, &loop->nops, zero);
    ValueId phase = tir_block_add_arg(f, body, i32);
    append(a, &loop->res, &loop->nres, tir_new_value(f, i32, loop, loop->nres));
    /* after the cp.async wait (which leaves its proxy fence) when some buffers keep it; the
     * phase flips when the read stage wraps (the wrap's compare is the stage counter's own) */
    Inst *at = all ? top_wait : top_wait->next;
    Inst *y = body->last;
    emit(f, at, OP_MBAR_WAIT, (ValueId[]){bars, rstage, phase}, 3, NULL);
    const Type *st = tir_vtype(f, rstage);
    ValueId nx = emit(f, y, OP_ADD, (ValueId[]){rstage, cint(f, y, st, 1)}, 2, st);
    Inst *wrap = tir_inst_new(f, OP_CMP, (ValueId[]){nx, cint(f, y, st, R)}, 2, &i1, 1, y->loc);
    wrap->a.ival2 = CMP_EQ;
    tir_insert_before(y, wrap);
    ValueId flip = emit(f, y, OP_XOR, (ValueId[]){phase, cint(f, y, i32, 1)}, 2, i32);
    ValueId np = emit(f, y, OP_SELECT, (ValueId[]){wrap->res[0], flip, phase}, 3, i32);
    if (all) tir_inst_remove(top_wait);
    append(a, &y->ops, &y->nops, np);
    /* after the loop: no wait; the barriers go after the final barrier */
    Inst *after = loop->next;
    if (all && after && after->op == OP_ASYNC_WAIT) {
        Inst *n = after->next;
        tir_inst_remove(after);
        after = n;
    }
    if (after && after->op == OP_ASYNC_WAIT) after = after->next;
    if (after && after->op == OP_BARRIER) after = after->next;
    if (after) emit(f, after, OP_MBAR_INVAL, &bars, 1, NULL);
    free(info);
}

static void walk(Ctx *c, Block *b) {
    for (Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_FOR) convert_loop(c, i);
        for (int r = 0; r < i->nregions; r++) walk(c, i->regions[r]);
    }
}

/* ---- step 5: epilogue stores ---- */

/* A wait before every return that follows the buffer's allocation in program order (before it, no
 * store has been issued). */
static void wait_before_returns(Func *f, Block *b, ValueId buf, Inst *alloc, bool *after) {
    for (Inst *i = b->first; i; i = i->next) {
        if (i == alloc) *after = true;
        if (i->op == OP_RETURN && *after) emit(f, i, OP_TMA_STORE_WAIT, &buf, 1, NULL);
        for (int r = 0; r < i->nregions; r++) wait_before_returns(f, i->regions[r], buf, alloc, after);
    }
}

static void mark_uses(Block *b, bool *used) {
    for (Inst *i = b->first; i; i = i->next) {
        for (int k = 0; k < i->nops; k++) used[i->ops[k]] = true;
        for (int r = 0; r < i->nregions; r++) mark_uses(i->regions[r], used);
    }
}

/* Shared memory still in use from `from` on, at the top level of the body: the buffers allocated before it
 * that an instruction from there on names (smem_alloc gives the others' space to later buffers), those
 * allocated from there on, and the largest scratch. */
static int smem_live_from(Func *f, Inst *from, int *scratch) {
    bool *used = calloc(f->nvalues, sizeof *used);
    if (!used) out_of_memory();
    for (Inst *i = from; i; i = i->next) {
        for (int k = 0; k < i->nops; k++) used[i->ops[k]] = true;
        for (int r = 0; r < i->nregions; r++) mark_uses(i->regions[r], used);
    }
    int n = 0;
    smem_estimate(f, f->body, scratch);
    for (Inst *i = f->body->first; i && i != from; i = i->next)
        if (i->op == OP_LOCAL_ALLOC && used[i->res[0]]) n += (smem_scratch_bytes(f, i, true) + 1023) / 1024 * 1024;
    /* and every buffer allocated from there on (loops after the store live beside its buffer) */
    for (Inst *i = from; i; i = i->next) {
        int ignored = 0;
        if (i->op == OP_LOCAL_ALLOC) n += (smem_scratch_bytes(f, i, true) + 1023) / 1024 * 1024;
        for (int r = 0; r < i->nregions; r++) n += smem_estimate(f, i->regions[r], &ignored);
    }
    free(used);
    return n;
}

/* The element type a tensor reduction reads for atomic_rmw `at` (a relaxed one at cta or gpu scope whose old values
 * nothing reads: the reduction is relaxed and gives none back), DT_VOID when none does this one.  Integer adds and
 * bitwise ops are the same on unsigned elements. */
static DType reduce_elem(Func *f, const Inst *at) {
    if (at->a.sem != SEM_RELAXED || at->a.scope == SCOPE_SYS || tir_result_used(f, at->res[0])) return DT_VOID;
    RedKind k = (RedKind)at->a.ival2;
    DType dt = tir_vtype(f, at->ops[1])->dt, e = dt;
    if (dt == DT_I32 && k != RED_MAX && k != RED_MIN) e = DT_U32;
    return tir_tma_reduce_ok(k, e) ? e : DT_VOID;
}

/* The pointer argument a memory op's addresses derive from (its argument index), -1 when its form does not say. */
static int access_base(Ctx *c, const Inst *i) {
    if (i->op == OP_TMA_LOAD || i->op == OP_TMA_STORE) return c->f->tmaps[i->a.ival].base;
    ValueId ptr = i->op == OP_ASYNC_COPY ? i->ops[2] : i->ops[0];
    bool fail = c->fail;
    c->fail = false;
    c->steps = 0;
    Form p = form_of(c, ptr, 0);
    int base = c->fail || !p.ok || !p.base ? -1 : argno(c, p.base) - 1;
    c->fail = fail;
    return base;
}

/* Whether an instruction of b (from `from` on, regions included) reads or writes global memory through
 * argument `base`, or through pointers whose argument the forms do not tell. */
static bool touches(Ctx *c, Block *b, Inst *from, int base, const Inst *skip) {
    for (Inst *i = from ? from : b->first; i; i = i->next) {
        if (i == skip) continue;
        bool mem = i->op == OP_LOAD || i->op == OP_STORE || i->op == OP_ATOMIC_RMW || i->op == OP_ATOMIC_CAS ||
                   i->op == OP_ASYNC_COPY || i->op == OP_TMA_LOAD || i->op == OP_TMA_STORE;
        /* an ordered atomic publishes what came before it (a flag another program waits on: the store must
         * have landed), and inline assembly may do anything */
        if (((i->op == OP_ATOMIC_RMW || i->op == OP_ATOMIC_CAS) && i->a.sem != SEM_RELAXED) || i->op == OP_INLINE_ASM ||
            i->op == OP_ATOMIC_POLL) /* a wait: what follows it reads what another program published */
            return true;
        if (mem) {
            int at = access_base(c, i);
            if (at < 0 || at == base) return true;
        }
        for (int r = 0; r < i->nregions; r++)
            if (touches(c, i->regions[r], NULL, base, skip)) return true;
    }
    return false;
}

/* A tensor store or reduction completes asynchronously (its thread waits only until it has read its buffer), so
 * nothing after it may touch the memory it writes: no later access through the same pointer argument (or one
 * whose argument is unknown) in its block, after its loop, or in the next iterations of the loop it is in. */
static bool later_access(Ctx *c, Inst *st, int base) {
    if (touches(c, st->parent, st->next, base, st)) return true;
    for (Block *b = st->parent; b->parent; b = b->parent->parent) {
        if (b->parent->op == OP_FOR || b->parent->op == OP_WHILE)
            if (touches(c, b, NULL, base, st)) return true;
        if (touches(c, b->parent->parent, b->parent->next, base, st)) return true;
    }
    return false;
}

/* A store of a register tile that a tensor map describes (the forms and masks of step 2, no run
 * predicate) becomes: wait until this buffer's previous tensor store has read it, barrier, the
 * tile written into a one-stage buffer of the map's layout (local_store), barrier, tma_store
 * (one thread; the masked-off elements are the ones outside the map's bounds, which the copy
 * does not write); every return waits for the stores to have read the buffer.  Only stores at
 * the top of the kernel's body or of a `for` there (a persistent kernel's loop over tiles),
 * of kernels whose loops already stream through tensor maps, and only while the buffer fits in
 * shared memory beside what the kernel uses.  When the whole tile does not fit (a 128 x 256 GEMM
 * tile beside its ring), a buffer of a column slice (a multiple of 128 bytes wide, the widest that
 * fits) takes the tile slice by slice, each through the same sequence (local_store {col}); only
 * where every register of the tile falls in one slice (layout_cols_in_chunks).  An atomic_rmw of such a tile
 * (add, max, min, and, or, xor on a type the tensor reduction has; sem="relaxed" at cta or gpu scope; its old
 * values unread: split-K's partial sums) goes the same way, as a tensor reduction (tma_store kind=..).  Either
 * only where nothing after it touches the tensor it writes (later_access). */
static void convert_store(Ctx *c, Inst *st) {
    Func *f = c->f;
    Module *m = c->m;
    if (st->nops < 2) return;
    DType elem = DT_VOID;
    if (st->op == OP_ATOMIC_RMW && (elem = reduce_elem(f, st)) == DT_VOID) return;
    ValueId val = st->ops[1];
    const Type *vt = tir_vtype(f, val), *pt = tir_vtype(f, st->ops[0]);
    if (vt->rank != 2 || pt->rank != 2 || !vt->layout || vt->layout->kind == LAYOUT_SHARED) return;
    int eb = dtype_bits(vt->dt) / 8;
    if (eb != 1 && eb != 2 && eb != 4) return;
    Copy cp;
    c->fail = false;
    if (!analyze_tile(c, vt->dt, 1, vt->shape[0], vt->shape[1], st->ops[0], st->nops > 2 ? st->ops[2] : 0, &cp) || c->fail || cp.run)
        return;
    if (later_access(c, st, cp.tm.base)) return;
    cp.tm.elem = elem;
    /* a layout conversion only for the store goes: the buffer takes any register layout */
    Inst *cv = tir_val(f, val)->def;
    if (cv && cv->op == OP_CONVERT_LAYOUT && tir_vtype(f, cv->ops[0])->layout &&
        tir_vtype(f, cv->ops[0])->layout->kind != LAYOUT_SHARED)
        val = cv->ops[0];
    /* a store at the top of the body (after the loops) allocates its buffer where it is: the loops' rings are
     * dead by then, and their space serves it; one in a loop over tiles allocates it at the top */
    bool top = st->parent == f->body;
    int scratch = 0, have = (top ? smem_live_from(f, st, &scratch) : smem_estimate(f, f->body, &scratch)) + scratch + 2048;
    int cols = vt->shape[1]; /* the slice the buffer holds */
    while (have + (vt->shape[0] * cols * eb + 1023) / 1024 * 1024 > tir_smem_limit(m->arch)) {
        cols /= 2;
        if (cols * eb < 128 || vt->shape[1] % cols || !layout_cols_in_chunks(tir_vtype(f, val), cols)) return;
    }
    if (f->ntmaps >= TIR_MAX_TMAPS) return;
    int map = 0;
    while (map < f->ntmaps && memcmp(&f->tmaps[map], &cp.tm, sizeof cp.tm)) map++;
    if (map == f->ntmaps) {
        f->tmaps = arena_grow(m->arena, f->tmaps, sizeof *f->tmaps * (size_t)f->ntmaps, sizeof *f->tmaps * (size_t)(f->ntmaps + 1));
        f->tmaps[f->ntmaps++] = cp.tm;
    }
    /* the buffer: one stage, rows of the value's contiguous columns, at the top of the kernel */
    Layout sl = {.kind = LAYOUT_SHARED, .rank = 3};
    sl.order[0] = 2, sl.order[1] = 1, sl.order[2] = 0;
    const Type *bt = tir_type(m, vt->dt, 3, (int32_t[]){1, vt->shape[0], cols}, NULL, tir_layout_intern(m, &sl));
    ValueId buf = emit(f, top ? st : f->body->first, OP_LOCAL_ALLOC, NULL, 0, bt);
    Inst *alloc = tir_val(f, buf)->def;
    const Type *i32 = tir_scalar(m, DT_I32);
    ValueId zero = cint(f, st, i32, 0);
    ValueId ops[2 + TMA_MAX_RANK] = {buf, zero};
    coords_of(f, st, &cp, ops + 2);
    ValueId x0 = ops[2]; /* the innermost coordinate: the tile's first column */
    for (int c0 = 0; c0 < vt->shape[1]; c0 += cols) {
        emit(f, st, OP_TMA_STORE_WAIT, &buf, 1, NULL);
        emit(f, st, OP_BARRIER, NULL, 0, NULL);
        Inst *ls = tir_inst_new(f, OP_LOCAL_STORE, (ValueId[]){buf, zero, val}, 3, NULL, 0, st->loc);
        ls->a.ival = c0;
        tir_insert_before(st, ls);
        emit(f, st, OP_BARRIER, NULL, 0, NULL);
        ops[2] = c0 ? emit(f, st, OP_ADD, (ValueId[]){x0, cint(f, st, i32, c0)}, 2, i32) : x0;
        Inst *ts = tir_inst_new(f, OP_TMA_STORE, ops, 2 + cp.tm.rank, NULL, 0, st->loc);
        ts->a.ival = map;
        if (st->op == OP_ATOMIC_RMW) ts->a.ival2 = 1 + st->a.ival2;
        tir_insert_before(st, ts);
    }
    tir_inst_remove(st);
    bool after = false;
    wait_before_returns(f, f->body, buf, alloc, &after);
}

static void convert_stores(Ctx *c) {
    Func *f = c->f;
    Inst *sts[8];
    int n = 0;
    for (Inst *i = f->body->first; i; i = i->next) {
        if ((i->op == OP_STORE || i->op == OP_ATOMIC_RMW) && n < 8) sts[n++] = i;
        if (i->op == OP_FOR)
            for (Inst *j = i->regions[0]->first; j; j = j->next)
                if ((j->op == OP_STORE || j->op == OP_ATOMIC_RMW) && n < 8) sts[n++] = j;
    }
    for (int k = 0; k < n; k++) convert_store(c, sts[k]);
}

bool lower_tma(Module *m, Diag *d) {
    (void)d;
    const Target *tg = target_find(m->arch);
    if (!tg || tg->mma != WGMMA || m->no_tma) return true;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        Ctx c;
        ctx_init(&c, m, f);
        walk(&c, f->body);
        if (f->ntmaps) convert_stores(&c);
        free(c.args);
    }
    return true;
}

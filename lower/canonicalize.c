/* canonicalize.c - fold constants, simplify algebra, merge common
 * subexpressions and drop dead code, until nothing changes.
 *
 * Algorithm, per kernel, in rounds until a round changes nothing (at most
 * CANON_MAX_ROUNDS):
 *   1. Walk the body in program order, an op's regions right after it.
 *      First rewrite the op's operands through `repl`, the values replaced
 *      earlier in this walk (a definition always comes before its uses in
 *      this order, so one lookup finds the final value).
 *   2. Fold.  An element-wise op whose operands are all CONST (scalars or
 *      splat tensors), or a shape op (splat, broadcast, expand_dims, reshape,
 *      trans, convert_layout) of a CONST, turns into a CONST of its own
 *      result type in place: same value, same type, same loc.
 *   3. Simplify.  Identities (x+0, x-0, x*1, x/1, x&ones, x|0, x^0, x<<0,
 *      min(x,x), select(c,a,a), select on a constant condition, neg(neg x),
 *      not(not x), cast/broadcast/reshape/... to the operand's own type,
 *      trans(trans x) with inverse perms) map the result to an existing
 *      value of the same type in `repl` and delete the op; x*0, x&0, x-x and
 *      x^x on integers turn into a CONST in place.  A load, store or atomic
 *      whose mask is a constant true loses the mask (a load its `other`).
 *      An `if` on a constant condition is replaced by its taken region.
 *   4. CSE.  A pure op without regions is looked up in a scoped hash table
 *      keyed on (op, operands, attrs, result type); a hit maps its result
 *      to the earlier value and deletes it.  Entries made inside a region are
 *      popped when the region ends, so only dominating values are reused.
 *      Loads are not merged here: keeping an earlier load's tile live to the
 *      later one across loops made moe/experts.tile's moe_down spill on sm_86
 *      and sm_89; merge_loads.c merges them within a block only.
 *      A for, while or if whose regions hold only pure ops (and such
 *      loops and ifs) is looked up too: equal when its operands, attributes
 *      and result types are and its regions are op for op the same, the
 *      values they define matched in order (50 `rand(seed, offs)` calls
 *      are one Philox loop, not 50 that LLVM unrolls and then merges).
 *      An argmax or argmin reduce of one result (the index: `argmax(x, 0)`)
 *      and one of two (the index and the value: `max(x, 0,
 *      return_indices=true)`) of the same operand, axis and scratch are one
 *      reduction: the later maps onto the earlier, and an earlier one-result
 *      reduce takes over the later's value result (one combine of (value,
 *      index) pairs gives both, ties to the lowest index either way).
 *   5. DCE.  With use counts, walk each block backwards and delete ops whose
 *      results are unused and that have no effect: pure ops, loads, and
 *      for/while/if whose regions hold no store, atomic, barrier or return.  A
 *      deletion decrements its operands' counts, so chains go in one walk.
 *   6. Drop a `for`'s loop-carried value (`while` loops keep theirs) when its result is unused and its
 *      block argument reaches nothing but (through pure ops of the body)
 *      its own yield slot; step 5 then deletes the computation.
 *   7. Stacks (a batched dot's): a `for` that carries a stack [n, ...] which its body only
 *      unstacks and yields as a stack of n slabs carries the n slabs instead (the init
 *      unstacked before the loop, the result stacked after it; step 6 drops the old one),
 *      so `acc = dot(a, b, acc)` on [B, M, N] keeps B accumulators in registers rather
 *      than a round trip through shared memory each way every iteration.  unstack(stack
 *      of slabs of its own type) is those slabs, unstack(constant) constant slabs, a
 *      store of a stack one store per slab.  Then, in sweeps with step 5 between, an
 *      unstack moves into the op that made its operand: slab k of a load, an element-wise
 *      op, a broadcast, expand_dims, splat or arange is that op on slab k of its operands
 *      (new unstacks, pushed in turn), so a batched dot's [B, M, K] load becomes B 2-D
 *      loads that feed its B dots directly (pipelined like any dot's).  Loads and float
 *      ops only when nothing else reads them whole (no work is done twice).
 *
 * Arithmetic.  Integers are held as uint64 bit patterns normalised to their
 * type (sign- or zero-extended from the type's width), so every operation
 * is done in unsigned arithmetic and wraps without UB.  Floats are computed
 * in double and rounded once to the result type with round-to-nearest-even
 * (round_to_type, by the formats of support/dtype.h); for + - * / sqrt the double result rounded to f32, f16
 * or bf16 is the correctly rounded result, since double has more than twice
 * their precision.  Folds whose result the target may define differently
 * are left alone: integer division or remainder by zero (and float ones, to
 * keep the source's intent visible), shifts by the width or more, float to
 * int casts out of range, transcendental math (the target approximates it),
 * fma and storage (fp8) types.  Casts to i1 are `!= 0`, as in codegen. */
#include "canonicalize.h"
#include "passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CANON_MAX_ROUNDS 16

typedef struct Num {
    uint64_t i; /* integer types: bits normalised to the type */
    double x;   /* float types */
} Num;

typedef struct Canon {
    Func *f;
    ValueId *repl;      /* [nvalues]: replacement value, 0 none */
    /* scoped CSE table: chained buckets over an entry stack */
    Inst **ent;
    uint32_t *ent_hash, *ent_next; /* next: index+1 in chain, 0 ends */
    ValueId *map;       /* [nvalues]: comparing two regions, a value of the later one -> the earlier's; 0 none */
    uint32_t nent, cap_ent;
    uint32_t *buckets;  /* index+1 of the newest entry, 0 empty */
    uint32_t nbuckets;  /* power of two */
    bool changed;
} Canon;

/* ---- numbers ---- */

static uint64_t int_norm(uint64_t v, DType dt) { return (uint64_t)dtype_wrap_int((int64_t)v, dt); }

/* x rounded to the (non-storage) float type dt: f8 constants stay doubles, since codegen encodes them
 * (ll_const_of), rounding once. */
static double round_to_type(double x, DType dt) {
    if (!dtype_is_float(dt)) unreachable("round_to_type: not a float type");
    return dtype_is_storage(dt) ? x : dtype_round_float(x, dt);
}

static bool is_num_float(DType dt) { return dtype_is_float(dt) && !dtype_is_storage(dt); }

/* The value of v when it is a CONST of an integer or (non-storage) float type. */
static bool const_num(Func *f, ValueId v, Num *n) {
    const Inst *d = f->values[v].def;
    if (!d || d->op != OP_CONST) return false;
    DType dt = tir_vtype(f, v)->dt;
    if (dtype_is_int(dt)) {
        if (d->a.is_float) return false;
        n->i = int_norm((uint64_t)d->a.ival, dt);
        return true;
    }
    if (!is_num_float(dt)) return false;
    /* the constant holds (a double near) a value of its type: round it so we
     * compute with what the target will hold */
    n->x = round_to_type(d->a.is_float ? d->a.fval : (double)d->a.ival, dt);
    return true;
}

static bool const_is_int(Func *f, ValueId v, uint64_t want) {
    Num n;
    DType dt = tir_vtype(f, v)->dt;
    return dtype_is_int(dt) && const_num(f, v, &n) && n.i == int_norm(want, dt);
}

/* A float constant equal to want, with the given sign bit (0.0 and -0.0 differ here). */
static bool const_is_float(Func *f, ValueId v, double want, bool neg) {
    Num n;
    return is_num_float(tir_vtype(f, v)->dt) && const_num(f, v, &n) && n.x == want && !!signbit(n.x) == neg;
}

/* Turn i into a CONST of its result type holding n. */
static void make_const(Func *f, Inst *i, Num n) {
    DType dt = tir_vtype(f, i->res[0])->dt;
    i->op = OP_CONST;
    i->nops = 0;
    memset(&i->a, 0, sizeof i->a);
    i->a.smem_offset = -1;
    if (dtype_is_float(dt)) {
        i->a.fval = n.x;
        i->a.is_float = 1;
    } else {
        i->a.ival = (int64_t)int_norm(n.i, dt);
    }
}

static bool eval_int_binary(Op op, int64_t pred, uint64_t a, uint64_t b, DType dt, uint64_t *r) {
    bool sg = dtype_is_signed(dt);
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    int w = dtype_bits(dt);
    switch (op) {
    case OP_ADD: *r = a + b; return true;
    case OP_SUB: *r = a - b; return true;
    case OP_MUL: *r = a * b; return true;
    case OP_DIV:
        if (b == 0) return false;
        if (!sg) *r = a / b;
        else if (sb == -1) *r = 0 - a; /* INT_MIN / -1 wraps */
        else *r = (uint64_t)(sa / sb);
        return true;
    case OP_REM:
        if (b == 0) return false;
        if (!sg) *r = a % b;
        else if (sb == -1) *r = 0;
        else *r = (uint64_t)(sa % sb);
        return true;
    case OP_AND: *r = a & b; return true;
    case OP_OR: *r = a | b; return true;
    case OP_XOR: *r = a ^ b; return true;
    case OP_SHL:
    case OP_SHR:
        if ((sg && sb < 0) || b >= (uint64_t)w) return false;
        if (op == OP_SHL) *r = a << b;
        else if (sg && sa < 0) *r = ~(~a >> b); /* arithmetic shift without implementation-defined >> */
        else *r = a >> b;
        return true;
    case OP_MIN: *r = (sg ? sa < sb : a < b) ? a : b; return true;
    case OP_MAX: *r = (sg ? sa > sb : a > b) ? a : b; return true;
    case OP_CMP: {
        bool lt = sg ? sa < sb : a < b, eq = a == b;
        switch ((CmpPred)pred) {
        case CMP_EQ: *r = eq; break;
        case CMP_NE: *r = !eq; break;
        case CMP_LT: *r = lt; break;
        case CMP_LE: *r = lt || eq; break;
        case CMP_GT: *r = !lt && !eq; break;
        case CMP_GE: *r = !lt; break;
        default: return false;
        }
        return true;
    }
    default: return false;
    }
}

/* Floats; CMP writes an integer 0/1 to *ri instead of *r. */
static bool eval_float_binary(Op op, int64_t pred, double a, double b, double *r, uint64_t *ri) {
    switch (op) {
    case OP_ADD: *r = a + b; return true;
    case OP_SUB: *r = a - b; return true;
    case OP_MUL: *r = a * b; return true;
    case OP_DIV:
        if (b == 0) return false;
        *r = a / b;
        return true;
    case OP_REM:
        if (b == 0) return false;
        *r = fmod(a, b);
        return true;
    case OP_MIN:
    case OP_MAX:
        if (isnan(a) || isnan(b)) *r = NAN;
        else if (a == b) *r = (op == OP_MIN) == !!signbit(a) ? a : b; /* min(-0,+0) = -0 */
        else *r = (op == OP_MIN) == (a < b) ? a : b;
        return true;
    case OP_CMP: /* ordered, except ne (unordered), as C does */
        switch ((CmpPred)pred) {
        case CMP_EQ: *ri = a == b; break;
        case CMP_NE: *ri = a != b; break;
        case CMP_LT: *ri = a < b; break;
        case CMP_LE: *ri = a <= b; break;
        case CMP_GT: *ri = a > b; break;
        case CMP_GE: *ri = a >= b; break;
        default: return false;
        }
        return true;
    default: return false;
    }
}

static bool eval_unary(Op op, Num a, DType dt, Num *r) {
    if (dtype_is_int(dt)) {
        switch (op) {
        case OP_NEG: r->i = 0 - a.i; return true;
        case OP_NOT: r->i = ~a.i; return true;
        case OP_ABS: r->i = dtype_is_signed(dt) && (int64_t)a.i < 0 ? 0 - a.i : a.i; return true;
        case OP_MULTIPLE_OF: case OP_MAX_CONTIGUOUS: case OP_MAX_CONSTANCY: r->i = a.i; return true; /* hints */
        default: return false;
        }
    }
    switch (op) {
    case OP_NEG: r->x = -a.x; return true;
    case OP_ABS: r->x = fabs(a.x); return true;
    case OP_FLOOR: r->x = floor(a.x); return true;
    case OP_CEIL: r->x = ceil(a.x); return true;
    case OP_SQRT: r->x = sqrt(a.x); return true;
    default: return false;
    }
}

/* Numeric conversion from dtype `from` to `to`; false where the target may differ. */
static bool eval_cast(Num a, DType from, DType to, Num *r) {
    bool fi = dtype_is_int(from), ti = dtype_is_int(to);
    if (fi && ti) {
        r->i = to == DT_I1 ? a.i != 0 : int_norm(a.i, to); /* to i1 is != 0, as codegen does */
        return true;
    }
    if (fi) { /* int -> float: exact in double up to 2^53 */
        bool sg = dtype_is_signed(from);
        double x = sg ? (double)(int64_t)a.i : (double)a.i;
        bool exact = sg ? ((int64_t)a.i >= -(1LL << 53) && (int64_t)a.i <= (1LL << 53)) : a.i <= (1ULL << 53);
        if (!exact && to != DT_F64) return false; /* would round twice */
        r->x = round_to_type(x, to);
        return true;
    }
    if (ti) { /* float -> int truncates toward zero, saturates at the type's range, NaN is 0 (as codegen's
               * llvm.fpto[su]i.sat) */
        double t = trunc(a.x);
        if (to == DT_I1) {
            r->i = !(a.x == 0); /* unordered != 0: NaN is true */
            return true;
        }
        r->i = int_norm((uint64_t)dtype_float_to_int(t, to), to);
        return true;
    }
    r->x = round_to_type(a.x, to);
    return true;
}

/* ---- step 2: folding ---- */

static bool is_shape_op(Op op) {
    return op == OP_SPLAT || op == OP_BROADCAST || op == OP_EXPAND_DIMS || op == OP_RESHAPE || op == OP_TRANS ||
           op == OP_CONVERT_LAYOUT;
}

static bool fold(Func *f, Inst *i) {
    if (i->nres != 1 || i->nregions) return false;
    const Type *rt = tir_vtype(f, i->res[0]);
    if (is_shape_op(i->op)) { /* a splat constant stays one: copy its value, keep our type */
        const Inst *d = f->values[i->ops[0]].def;
        if (!d || d->op != OP_CONST || tir_vtype(f, i->ops[0])->dt != rt->dt) return false;
        Attrs a = d->a;
        i->op = OP_CONST;
        i->nops = 0;
        memset(&i->a, 0, sizeof i->a);
        i->a.ival = a.ival;
        i->a.fval = a.fval;
        i->a.is_float = a.is_float;
        i->a.smem_offset = -1;
        return true;
    }
    if (!(tir_op_info[i->op].flags & OPF_ELEMENTWISE) || i->op == OP_SELECT || i->nops < 1 || i->nops > 2)
        return false;
    DType dt = tir_vtype(f, i->ops[0])->dt, rdt = rt->dt;
    if (!(dtype_is_int(dt) || is_num_float(dt)) || !(dtype_is_int(rdt) || is_num_float(rdt))) return false;
    Num a, b = {0}, r = {0};
    if (!const_num(f, i->ops[0], &a) || (i->nops == 2 && !const_num(f, i->ops[1], &b))) return false;
    bool ok;
    if (i->op == OP_CAST) ok = eval_cast(a, dt, rdt, &r);
    else if (i->nops == 1) ok = eval_unary(i->op, a, dt, &r);
    else if (dtype_is_int(dt)) ok = eval_int_binary(i->op, i->a.ival2, a.i, b.i, dt, &r.i);
    else ok = eval_float_binary(i->op, i->a.ival2, a.x, b.x, &r.x, &r.i);
    if (!ok) return false;
    /* a NaN computed here is the host's (x86's is negative: inf - inf, sqrt(-1)); a GPU's arithmetic gives a
     * positive one, and so does the fold (a negation or a cast keeps its operand's sign) */
    if (dtype_is_float(rdt) && isnan(r.x) && i->op != OP_NEG && i->op != OP_CAST) r.x = NAN;
    if (dtype_is_float(rdt)) r.x = round_to_type(r.x, rdt);
    make_const(f, i, r);
    return true;
}

/* ---- step 3: identities ---- */

static bool is_zero(Func *f, ValueId v) { return const_is_int(f, v, 0); }
static bool is_ones(Func *f, ValueId v) { return const_is_int(f, v, ~(uint64_t)0); } /* i1: true */
static bool is_one(Func *f, ValueId v) { return const_is_int(f, v, 1) || const_is_float(f, v, 1.0, false); }

/* The value i can be replaced by, 0 if none; may instead turn i into a CONST (*mutated). */
static ValueId simplify(Func *f, Inst *i, bool *mutated) {
    if (i->nres != 1 || i->nregions || i->nops < 1) return 0;
    const Type *rt = tir_vtype(f, i->res[0]);
    bool is_int = dtype_is_int(rt->dt);
    ValueId x = i->ops[0], y = i->nops > 1 ? i->ops[1] : 0;
    const Inst *dx = f->values[x].def;
    ValueId r = 0;
    Num zero = {0}, ones = {.i = ~(uint64_t)0};
    switch (i->op) {
    case OP_ADD: /* float x + -0.0 is x; x + 0.0 is not (for x = -0.0) */
        if (is_zero(f, y) || const_is_float(f, y, 0, true)) r = x;
        else if (is_zero(f, x) || const_is_float(f, x, 0, true)) r = y;
        break;
    case OP_SUB:
        if (is_zero(f, y) || const_is_float(f, y, 0, false)) r = x;
        else if (is_int && x == y) goto to_zero;
        break;
    case OP_MUL:
        if (is_one(f, y)) r = x;
        else if (is_one(f, x)) r = y;
        else if (is_int && (is_zero(f, x) || is_zero(f, y))) goto to_zero;
        break;
    case OP_DIV:
        if (is_one(f, y)) r = x;
        break;
    case OP_AND:
        if (is_ones(f, y) || x == y) r = x;
        else if (is_ones(f, x)) r = y;
        else if (is_zero(f, x) || is_zero(f, y)) goto to_zero;
        break;
    case OP_OR:
        if (is_zero(f, y) || x == y) r = x;
        else if (is_zero(f, x)) r = y;
        else if (is_ones(f, x) || is_ones(f, y)) {
            make_const(f, i, ones);
            *mutated = true;
        }
        break;
    case OP_XOR:
        if (is_zero(f, y)) r = x;
        else if (is_zero(f, x)) r = y;
        else if (is_int && x == y) goto to_zero;
        break;
    case OP_SHL:
    case OP_SHR:
        if (is_zero(f, y)) r = x;
        break;
    case OP_MIN:
    case OP_MAX:
        if (x == y) r = x;
        break;
    case OP_NEG:
    case OP_NOT:
        if (dx && dx->op == i->op) r = dx->ops[0];
        break;
    case OP_SELECT: {
        Num c;
        if (i->ops[1] == i->ops[2]) r = i->ops[1];
        else if (const_num(f, x, &c)) r = c.i ? i->ops[1] : i->ops[2];
        break;
    }
    case OP_CAST:
    case OP_BITCAST:
    case OP_BROADCAST:
    case OP_EXPAND_DIMS:
    case OP_RESHAPE:
    case OP_CONVERT_LAYOUT: r = x; break; /* only when the type is the same: checked below */
    case OP_TRANS: {
        bool id = true, inverse = dx && dx->op == OP_TRANS;
        for (int d = 0; d < rt->rank; d++) {
            id = id && i->a.perm[d] == d;
            inverse = inverse && i->a.perm[d] >= 0 && i->a.perm[d] < rt->rank && dx->a.perm[i->a.perm[d]] == d;
        }
        r = id ? x : inverse ? dx->ops[0] : 0;
        break;
    }
    default: break;
    }
    return r && tir_vtype(f, r) == rt ? r : 0;
to_zero:
    make_const(f, i, zero);
    *mutated = true;
    return 0;
}

/* A memory op's mask that is a constant true goes, and a load's `other` with it. */
static bool drop_true_mask(Func *f, Inst *i) {
    int at;
    switch (i->op) {
    case OP_LOAD: at = 1; break;
    case OP_STORE:
    case OP_ATOMIC_RMW: at = 2; break;
    case OP_ATOMIC_CAS:
    case OP_ASYNC_COPY: at = 3; break;
    default: return false;
    }
    if (i->nops <= at || !is_ones(f, i->ops[at]) || tir_vtype(f, i->ops[at])->dt != DT_I1) return false;
    i->nops = at;
    return true;
}

/* ---- step 4: scoped CSE ---- */

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t double_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static bool attrs_eq(const Attrs *a, const Attrs *b) {
    return a->ival == b->ival && a->ival2 == b->ival2 && double_bits(a->fval) == double_bits(b->fval) &&
           !memcmp(a->perm, b->perm, sizeof a->perm) && a->smem_offset == b->smem_offset &&
           a->smem_bytes == b->smem_bytes && a->is_float == b->is_float && a->allow_tf32 == b->allow_tf32 &&
           a->cache == b->cache && a->vec == b->vec;
}

static bool commutes(const Inst *i) { return (tir_op_info[i->op].flags & OPF_COMMUTATIVE) && i->nops == 2; }

/* An argmax/argmin reduce: its index result alone, or with the value at that index. */
static bool arg_reduce(const Inst *i) { return i->op == OP_REDUCE && (i->a.ival2 == RED_ARGMAX || i->a.ival2 == RED_ARGMIN); }

/* A loop or if whose regions hold only yields, pure ops and such loops and ifs (no loads). */
static bool pure_region_op(const Inst *i) {
    if (!tir_is_loop(i->op) && i->op != OP_IF) return false;
    for (int r = 0; r < i->nregions; r++)
        for (const Inst *j = i->regions[r]->first; j; j = j->next)
            if (j->op != OP_YIELD && !((tir_op_info[j->op].flags & OPF_PURE) && !j->nregions) && !pure_region_op(j))
                return false;
    return true;
}

static uint32_t inst_hash(Canon *c, const Inst *i) {
    Func *f = c->f;
    uint64_t h = mix((uint64_t)i->op, (uint64_t)(uintptr_t)tir_vtype(f, i->res[0]));
    if (commutes(i)) { /* order-free */
        ValueId a = i->ops[0], b = i->ops[1];
        h = mix(mix(h, a < b ? a : b), a < b ? b : a);
    } else {
        for (int k = 0; k < i->nops; k++) h = mix(h, i->ops[k]);
    }
    const Attrs *a = &i->a;
    h = mix(h, (uint64_t)a->ival);
    h = mix(h, (uint64_t)a->ival2);
    h = mix(h, double_bits(a->fval));
    for (int d = 0; d < TIR_MAX_RANK; d++) h = mix(h, (uint32_t)a->perm[d]);
    h = mix(h, (uint64_t)a->is_float | (uint64_t)a->allow_tf32 << 8 | (uint64_t)a->cache << 16 | (uint64_t)a->vec << 24);
    for (int r = 0; r < i->nregions; r++) /* the shape of a region: its ops in order */
        for (const Inst *j = i->regions[r]->first; j; j = j->next)
            h = mix(mix(h, (uint64_t)j->op << 8 | (uint64_t)r), (uint64_t)j->a.ival ^ double_bits(j->a.fval));
    return (uint32_t)(h ^ (h >> 32));
}

static ValueId resolve(Canon *c, ValueId v);

/* Whether block b (of a later op, not yet walked: its operands resolved here) is block a op for op,
 * b's values mapped to a's in c->map as they are defined. */
static bool block_same(Canon *c, const Block *a, const Block *b) {
    Func *f = c->f;
    if (a->nargs != b->nargs) return false;
    for (int k = 0; k < a->nargs; k++) {
        if (tir_vtype(f, a->args[k]) != tir_vtype(f, b->args[k])) return false;
        c->map[b->args[k]] = a->args[k];
    }
    const Inst *x = a->first, *y = b->first;
    for (; x && y; x = x->next, y = y->next) {
        if (x->op != y->op || x->nops != y->nops || x->nres != y->nres || x->nregions != y->nregions ||
            !attrs_eq(&x->a, &y->a))
            return false;
        for (int k = 0; k < x->nops; k++) {
            ValueId v = c->map[y->ops[k]] ? c->map[y->ops[k]] : resolve(c, y->ops[k]);
            if (v != x->ops[k]) return false;
        }
        for (int k = 0; k < x->nres; k++) {
            if (tir_vtype(f, x->res[k]) != tir_vtype(f, y->res[k])) return false;
            c->map[y->res[k]] = x->res[k];
        }
        for (int r = 0; r < x->nregions; r++)
            if (!block_same(c, x->regions[r], y->regions[r])) return false;
    }
    return !x && !y;
}

static void unmap_block(Canon *c, const Block *b) {
    for (int k = 0; k < b->nargs; k++) c->map[b->args[k]] = 0;
    for (const Inst *j = b->first; j; j = j->next) {
        for (int k = 0; k < j->nres; k++) c->map[j->res[k]] = 0;
        for (int r = 0; r < j->nregions; r++) unmap_block(c, j->regions[r]);
    }
}

static bool inst_same(Canon *c, const Inst *a, const Inst *b) {
    Func *f = c->f;
    if (a->op != b->op || a->nops != b->nops || (a->nres != b->nres && !arg_reduce(a)) || a->nregions != b->nregions ||
        tir_vtype(f, a->res[0]) != tir_vtype(f, b->res[0]) || !attrs_eq(&a->a, &b->a))
        return false;
    for (int k = 1; k < a->nres && k < b->nres; k++) /* an argmax pair's values (the operand's elements) */
        if (tir_vtype(f, a->res[k]) != tir_vtype(f, b->res[k])) return false;
    if (commutes(a) && a->ops[0] == b->ops[1] && a->ops[1] == b->ops[0]) return true;
    if (a->nops && memcmp(a->ops, b->ops, sizeof(ValueId) * (size_t)a->nops)) return false;
    if (!a->nregions) return true;
    bool same = true;
    for (int k = 0; k < a->nres && same; k++) same = tir_vtype(f, a->res[k]) == tir_vtype(f, b->res[k]);
    for (int r = 0; r < a->nregions && same; r++) same = block_same(c, a->regions[r], b->regions[r]);
    for (int r = 0; r < b->nregions; r++) unmap_block(c, b->regions[r]);
    return same;
}

/* The earlier equal inst, or NULL after recording i. */
static Inst *cse_lookup(Canon *c, Inst *i) {
    uint32_t h = inst_hash(c, i), bk = h & (c->nbuckets - 1);
    for (uint32_t e = c->buckets[bk]; e; e = c->ent_next[e - 1])
        if (c->ent_hash[e - 1] == h && inst_same(c, c->ent[e - 1], i))
            return c->ent[e - 1];
    if (c->nent == c->cap_ent) unreachable("CSE table sized below the instruction count");
    c->ent[c->nent] = i;
    c->ent_hash[c->nent] = h;
    c->ent_next[c->nent] = c->buckets[bk];
    c->buckets[bk] = ++c->nent;
    return NULL;
}

/* Pop entries back to `mark`, newest first: each is its bucket's head. */
static void cse_pop(Canon *c, uint32_t mark) {
    while (c->nent > mark) {
        c->nent--;
        c->buckets[c->ent_hash[c->nent] & (c->nbuckets - 1)] = c->ent_next[c->nent];
    }
}

/* ---- steps 1-4: the walk ---- */

static ValueId resolve(Canon *c, ValueId v) {
    while (v && c->repl[v]) v = c->repl[v];
    return v;
}

/* An `if` on a constant condition: move the taken region's ops (all but
 * its yield) before the if, map the results to the yielded values, delete
 * the if.  *first: the first moved op, so the walk visits them next. */
static bool inline_const_if(Canon *c, Inst *i, Inst **first) {
    Func *f = c->f;
    Num cond;
    if (i->op != OP_IF || i->nops != 1 || tir_vtype(f, i->ops[0])->rank || !const_num(f, i->ops[0], &cond))
        return false;
    int r = cond.i ? 0 : 1;
    Block *b = r < i->nregions ? i->regions[r] : NULL;
    Inst *y = b ? b->last : NULL;
    if (!b) {
        if (i->nres) return false;
    } else {
        if (!y || y->op != OP_YIELD || y->nops != i->nres) return false;
        for (Inst *j = b->first; j != y; j = j->next)
            if (j->op == OP_RETURN) return false; /* must stay last in its block */
        for (int k = 0; k < i->nres; k++)
            if (tir_vtype(f, y->ops[k]) != tir_vtype(f, i->res[k])) return false;
    }
    *first = NULL;
    if (b) {
        /* a yielded value defined in the region is visited (and maybe
         * replaced) later: resolve() follows the chain */
        for (int k = 0; k < i->nres; k++) c->repl[i->res[k]] = y->ops[k];
        for (Inst *j = b->first, *n; j != y; j = n) {
            n = j->next;
            tir_inst_remove(j);
            tir_insert_before(i, j);
            if (!*first) *first = j;
        }
    }
    tir_inst_remove(i);
    return true;
}

static void canon_block(Canon *c, Block *b) {
    Func *f = c->f;
    uint32_t mark = c->nent;
    for (Inst *i = b->first, *next; i; i = next) {
        next = i->next;
        for (int k = 0; k < i->nops; k++) i->ops[k] = resolve(c, i->ops[k]);
        Inst *moved;
        if (inline_const_if(c, i, &moved)) {
            if (moved) next = moved;
            c->changed = true;
            continue;
        }
        bool folded = fold(f, i), dropped = drop_true_mask(f, i); /* both run */
        bool mutated = folded || dropped;
        ValueId r = simplify(f, i, &mutated);
        if (mutated) c->changed = true;
        if (!r && (tir_op_info[i->op].flags & OPF_PURE) && !i->nregions && (i->nres == 1 || arg_reduce(i))) {
            Inst *j = cse_lookup(c, i);
            if (j && j->nres < i->nres) { /* argmax then max(..., return_indices): j gives i's value result too */
                ValueId *res = ARENA_ARRAY(f->module->arena, ValueId, i->nres);
                memcpy(res, j->res, sizeof *res * (size_t)j->nres);
                for (int k = j->nres; k < i->nres; k++) {
                    res[k] = i->res[k];
                    f->values[res[k]].def = j, f->values[res[k]].index = (uint16_t)k;
                }
                j->res = res, j->nres = i->nres;
            }
            for (int k = 1; j && k < i->nres; k++)
                if (j->res[k] != i->res[k]) c->repl[i->res[k]] = j->res[k];
            if (j) r = j->res[0];
        }
        if (r) {
            c->repl[i->res[0]] = r;
            tir_inst_remove(i);
            c->changed = true;
            continue;
        }
        if (i->nres && pure_region_op(i)) {
            /* its regions first, so that it is compared in the form the earlier one has: compared before
             * (in a round's first walk), every copy of a loop would differ from every earlier one's walked
             * body and be looked at by each later copy, n^2 / 2 region comparisons */
            for (int k = 0; k < i->nregions; k++) canon_block(c, i->regions[k]);
            Inst *j = cse_lookup(c, i);
            if (j) {
                for (int k = 0; k < i->nres; k++) c->repl[i->res[k]] = j->res[k];
                tir_inst_remove(i);
                c->changed = true;
            }
            continue;
        }
        for (int k = 0; k < i->nregions; k++) canon_block(c, i->regions[k]);
    }
    cse_pop(c, mark);
}

static bool count_inst(Inst *i, void *ud) {
    (*(uint32_t *)ud)++;
    (void)i;
    return true;
}

static bool canon_walk(Func *f) {
    uint32_t ninst = 0;
    tir_walk(f->body, count_inst, &ninst);
    Canon c = {.f = f, .cap_ent = ninst + 1, .nbuckets = 16};
    while (c.nbuckets < 2 * c.cap_ent) c.nbuckets *= 2;
    c.repl = calloc(f->nvalues, sizeof *c.repl);
    c.ent = calloc(c.cap_ent, sizeof *c.ent);
    c.ent_hash = calloc(c.cap_ent, sizeof *c.ent_hash);
    c.ent_next = calloc(c.cap_ent, sizeof *c.ent_next);
    c.map = calloc(f->nvalues, sizeof *c.map);
    c.buckets = calloc(c.nbuckets, sizeof *c.buckets);
    if (!c.repl || !c.ent || !c.ent_hash || !c.ent_next || !c.map || !c.buckets) out_of_memory();
    canon_block(&c, f->body);
    free(c.repl);
    free(c.ent);
    free(c.ent_hash);
    free(c.ent_next);
    free(c.map);
    free(c.buckets);
    return c.changed;
}

/* ---- step 5: dead code ---- */

static bool block_has_effects(const Block *b) {
    for (const Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_YIELD || (i->op == OP_LOAD && !(i->a.cache & TIR_CACHE_ORDERED)) ||
            (tir_op_info[i->op].flags & OPF_PURE))
            continue; /* a volatile or atomic load is an effect: a loop that spins on one stays */
        if (!tir_is_loop(i->op) && i->op != OP_IF) return true; /* store, atomic, barrier, return */
        for (int k = 0; k < i->nregions; k++)
            if (block_has_effects(i->regions[k])) return true;
    }
    return false;
}

static bool inst_removable(const Inst *i) {
    if (i->op == OP_LOAD) return !(i->a.cache & TIR_CACHE_ORDERED);
    if (tir_is_loop(i->op) || i->op == OP_IF) {
        for (int k = 0; k < i->nregions; k++)
            if (block_has_effects(i->regions[k])) return false;
        return true;
    }
    return (tir_op_info[i->op].flags & OPF_PURE) && !i->nregions;
}

static bool drop_uses(Inst *i, void *ud) {
    int *uses = ud;
    for (int k = 0; k < i->nops; k++) uses[i->ops[k]]--;
    return true;
}

static bool dce_block(Block *b, int *uses) {
    bool changed = false;
    for (Inst *i = b->last, *prev; i; i = prev) {
        prev = i->prev;
        bool dead = inst_removable(i);
        for (int k = 0; k < i->nres && dead; k++) dead = uses[i->res[k]] == 0;
        if (dead) {
            drop_uses(i, uses);
            for (int k = 0; k < i->nregions; k++) tir_walk(i->regions[k], drop_uses, uses);
            tir_inst_remove(i);
            changed = true;
            continue;
        }
        for (int k = 0; k < i->nregions; k++) changed |= dce_block(i->regions[k], uses);
    }
    return changed;
}

/* ---- step 6: dead loop-carried values ---- */

static bool block_reads_marked(const Block *b, const uint8_t *mark) {
    for (const Inst *i = b->first; i; i = i->next) {
        for (int k = 0; k < i->nops; k++)
            if (mark[i->ops[k]]) return true;
        for (int k = 0; k < i->nregions; k++)
            if (block_reads_marked(i->regions[k], mark)) return true;
    }
    return false;
}

/* Whether everything computed from carried value k (block arg k+1) flows
 * only through pure ops of the body into yield slot k.  mark: zeroed scratch. */
static bool carried_is_dead(const Block *body, int k, uint8_t *mark) {
    ValueId arg = body->args[k + 1];
    bool dead = true;
    mark[arg] = 1;
    const Inst *i;
    for (i = body->first; i && dead; i = i->next) {
        bool reads = false;
        for (int o = 0; o < i->nops; o++) {
            if (!mark[i->ops[o]]) continue;
            reads = true;
            if (i->op == OP_YIELD && o != k) dead = false;
        }
        for (int r = 0; r < i->nregions && dead; r++)
            if (block_reads_marked(i->regions[r], mark)) dead = false;
        if (!reads || i->op == OP_YIELD) continue;
        if (!(tir_op_info[i->op].flags & OPF_PURE) || i->nregions) dead = false;
        for (int r = 0; r < i->nres; r++) mark[i->res[r]] = 1;
    }
    /* clear what we marked */
    mark[arg] = 0;
    for (const Inst *j = body->first; j; j = j->next)
        for (int r = 0; r < j->nres; r++) mark[j->res[r]] = 0;
    return dead;
}

static void remove_index(ValueId *arr, int *n, int k) {
    memmove(arr + k, arr + k + 1, sizeof(ValueId) * (size_t)(*n - k - 1));
    (*n)--;
}

typedef struct CarryCtx {
    Func *f;
    int *uses;
    uint8_t *mark;
    bool changed;
} CarryCtx;

static bool drop_carried(Inst *loop, void *ud) {
    CarryCtx *cx = ud;
    if (loop->op != OP_FOR || loop->nregions != 1) return true;
    Block *body = loop->regions[0];
    Inst *y = body->last;
    if (!y || y->op != OP_YIELD || loop->nops - 3 != loop->nres || body->nargs != loop->nres + 1 ||
        y->nops != loop->nres)
        return true; /* malformed: the verifier reports it */
    for (int k = loop->nres - 1; k >= 0; k--) {
        if (cx->uses[loop->res[k]] || !carried_is_dead(body, k, cx->mark)) continue;
        cx->uses[loop->ops[3 + k]]--;
        cx->uses[y->ops[k]]--;
        remove_index(loop->ops, &loop->nops, 3 + k);
        remove_index(loop->res, &loop->nres, k);
        remove_index(body->args, &body->nargs, k + 1);
        remove_index(y->ops, &y->nops, k);
        for (int j = k; j < loop->nres; j++) cx->f->values[loop->res[j]].index = (uint16_t)j;
        for (int j = k + 1; j < body->nargs; j++) cx->f->values[body->args[j]].index = (uint16_t)j;
        cx->changed = true;
    }
    return true;
}

bool canon_dce(Func *f) {
    bool any = false, changed;
    uint8_t *mark = calloc(f->nvalues, 1);
    if (!mark) out_of_memory();
    do {
        int *uses = tir_use_counts(f);
        changed = dce_block(f->body, uses);
        CarryCtx cx = {.f = f, .uses = uses, .mark = mark};
        tir_walk(f->body, drop_carried, &cx);
        changed |= cx.changed;
        any |= changed;
        free(uses);
    } while (changed);
    free(mark);
    return any;
}

bool lower_canonicalize(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        for (int round = 0; round < CANON_MAX_ROUNDS; round++) {
            bool changed = canon_stacks(f);
            changed |= canon_walk(f);
            changed |= canon_dce(f);
            if (!changed) break;
        }
    }
    return true;
}

/* compose.c - built-ins made of other Tile IR ops: Triton's shape ops (join,
 * split, interleave, cat, ravel, flip, gather), reductions and scans with a
 * user `fn` as the combine step, cumprod, sort, topk and histogram.
 *
 * The new lowerings are OP_GATHER (one round trip of the source through shared
 * memory, then each element reads the source at the coordinate its index
 * names) and OP_REDUCE_FN / OP_SCAN_FN (the combine is a region).  Everything
 * is exact: elements are only moved, selected (OP_SELECT) or combined by the
 * user's own function.
 *   join(a, b)        select(iota_last == 0, a[..., None], b[..., None]) -> [..., 2]
 *   split(x)          gather(x, 0) and gather(x, 1) along the last dim (of size 2)
 *   interleave(a, b)  reshape(join(a, b), [..., 2n])
 *   cat(a, b)         reshape(trans(join(a, b), [r, 0, ..]), [2 n0, ..]): a then b
 *                     (both at the rank limit, where join's dim does not fit: on operands with two
 *                     dims that the op leaves alone merged into one, and reshaped back)
 *   flip(x, d)        gather(x, n - 1 - iota_d, d)
 *   reduce(x, a, f)   reduce_fn: f inlined (on scalars) into its region, which the lowering
 *                     applies in the reduction's steps (in-thread, lane shuffles, warps
 *                     through shared memory), always to neighbouring runs in order
 *   scan(x, a, f)     scan_fn likewise; reverse scans flip(x) and flips back
 *   sort(x)           bitonic network over the last dim: per stage, the partner
 *                     x[i ^ j] by gather xor=j (registers or a shuffle when the layout
 *                     allows), compare integer keys, select
 *   topk(x, k)        sort (descending unless asked) with the indices as payload (ties: lower index
 *                     first), then gather the first k
 *   histogram(x, B)   sum over x of (x[:, None] == arange(0, B)[None, :]), in slices of the bins whose
 *                     compare tiles hold at most HISTOGRAM_SLICE elements each; past that with 64 bins
 *                     or more, dot(onehot(x >> L)^T, onehot(x & (2^L - 1))) on i8 (histogram_dot)
 *   map_elementwise(f, x, y)  map_fn: f inlined on scalars into its region, which the lowering
 *                     emits once per element of the thread (run-time ifs and loops in f stay
 *                     branches, per element) */
#include "gen.h"

#include <string.h>

/* The most elements of one histogram compare tile [numel(x), bins in the slice] (a register each per thread, over the
 * program's threads: 256 over 4 warps). */
enum { HISTOGRAM_SLICE = 1 << 15 };

/* The most bytes of one histogram_dot chunk's two i8 one-hot operands (which a dot may stage in shared memory). */
enum { HISTOGRAM_DOT_BYTES = 8192 };

static Val rt(Gen *g, ValueId v) { return val_rt(g, v); }

static const Type *vt(Gen *g, ValueId v) { return tir_vtype(g->f, v); }

/* x with shape (r, s): RESHAPE (row-major order kept), SPLAT from a scalar, or x itself. */
static ValueId reshape_to(Gen *g, ValueId x, int r, const int32_t *s, Loc loc) {
    const Type *t = vt(g, x), *nt = tir_with_shape(g->m, t, r, s);
    if (nt == t) return x;
    if (!t->rank) return gen_emit(g, loc, OP_SPLAT, &x, 1, nt);
    return gen_emit(g, loc, OP_RESHAPE, &x, 1, nt);
}

static ValueId permute_dims(Gen *g, ValueId x, const int *perm, Loc loc) {
    const Type *t = vt(g, x);
    int32_t s[TIR_MAX_RANK];
    bool ident = true;
    for (int d = 0; d < t->rank; d++) s[d] = t->shape[perm[d]], ident &= perm[d] == d;
    if (ident) return x;
    Inst *in = gen_emit_inst(g, loc, OP_TRANS, &x, 1, tir_with_shape(g->m, t, t->rank, s));
    for (int d = 0; d < t->rank; d++) in->a.perm[d] = perm[d];
    return in->res[0];
}

/* i32 tensor of shape (r, s) whose elements are their own coordinate along axis. */
static Val iota(Gen *g, int r, const int32_t *s, int axis, Loc loc) {
    int32_t n = s[axis];
    Inst *in = gen_emit_inst(g, loc, OP_ARANGE, NULL, 0, tir_type(g->m, DT_I32, 1, &n, NULL, NULL));
    in->a.ival = 0;
    in->a.ival2 = n;
    Val v = rt(g, in->res[0]);
    for (int d = 0; d < axis; d++) v = gen_expand_dims(g, v, 0, loc);
    for (int d = axis + 1; d < r; d++) v = gen_expand_dims(g, v, val_rank(v), loc);
    return rt(g, gen_coerce(g, v, DT_I32, NULL, r, s, loc));
}

/* r[..i..] = x[..idx[..i..]..] along axis; idx is i32 shaped like x except along axis. */
static ValueId gather(Gen *g, ValueId x, ValueId idx, int axis, Loc loc) {
    const Type *it = vt(g, idx);
    Inst *in = gen_emit_inst(g, loc, OP_GATHER, (ValueId[]){x, idx}, 2, tir_with_shape(g->m, vt(g, x), it->rank, it->shape));
    in->a.ival = axis;
    return in->res[0];
}

/* cond ? a : b, all run-time of one shape (cond i1). */
static ValueId select3(Gen *g, Val cond, ValueId a, ValueId b, Loc loc) {
    const Type *t = vt(g, a);
    ValueId c = gen_coerce(g, cond, DT_I1, NULL, t->rank, t->shape, loc);
    return gen_emit(g, loc, OP_SELECT, (ValueId[]){c, a, b}, 3, t);
}

static bool ok(Val v) { return v.k != V_ERR; }

/* ---- shape ops ---- */

Val compose_join(Gen *g, Val a, Val b, Loc loc) {
    if (!val_is_value(g, a, loc) || !val_is_value(g, b, loc)) return val_err();
    DType da = val_dtype(a), db = val_dtype(b), dt;
    const Type *pointee = NULL;
    if (da == DT_PTR || db == DT_PTR) {
        if (a.k != V_RT || b.k != V_RT || tir_elem(g->m, a.t) != tir_elem(g->m, b.t)) {
            diag_error(g->d, loc, "cannot join '%s' and '%s'", gen_val_type_name(g, a), gen_val_type_name(g, b));
            return val_err();
        }
        dt = DT_PTR;
        pointee = a.t->pointee;
    } else dt = gen_promote_vals(a, b);
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!gen_broadcast_shapes(g, val_rank(a), val_shape(a), val_rank(b), val_shape(b), &r, s, loc)) return val_err();
    if (r + 1 > TIR_MAX_RANK) {
        diag_error(g->d, loc, "join adds a dimension to its rank-%d operands: tensors have at most %d dimensions", r, TIR_MAX_RANK);
        return val_err();
    }
    int32_t s2[TIR_MAX_RANK];
    memcpy(s2, s, sizeof s);
    s2[r] = 2;
    if (!gen_check_shape(g, r + 1, s2, loc)) return val_err();
    Val va = rt(g, gen_coerce(g, a, dt, pointee, r, s, loc)), vb = rt(g, gen_coerce(g, b, dt, pointee, r, s, loc));
    va = gen_expand_dims(g, va, r, loc);
    vb = gen_expand_dims(g, vb, r, loc);
    ValueId A = gen_coerce(g, va, dt, pointee, r + 1, s2, loc), B = gen_coerce(g, vb, dt, pointee, r + 1, s2, loc);
    Val first = gen_binop(g, TK_EQEQ, iota(g, r + 1, s2, r, loc), val_ct_int(0, DT_I32), loc);
    return rt(g, select3(g, first, A, B, loc));
}

Val compose_split(Gen *g, Val x, Loc loc) {
    if (!val_is_value(g, x, loc)) return val_err();
    if (x.k != V_RT || !x.t->rank || x.t->shape[x.t->rank - 1] != 2) {
        diag_error(g->d, loc, "'split' expects a tensor whose last dimension is 2, got %s",
                   x.k == V_RT ? gen_type_desc(g, x.t) : gen_val_type_name(g, x));
        return val_err();
    }
    int r = x.t->rank;
    int32_t s[TIR_MAX_RANK];
    memcpy(s, x.t->shape, sizeof s);
    s[r - 1] = 1;
    Val parts[2];
    for (int k = 0; k < 2; k++) {
        ValueId idx = gen_coerce(g, val_ct_int(k, DT_I32), DT_I32, NULL, r, s, loc);
        parts[k] = rt(g, reshape_to(g, gather(g, x.v, idx, r - 1, loc), r - 1, s, loc));
    }
    Val t = {.k = V_TUPLE, .nelems = 2, .elems = ARENA_ARRAY(g->a, Val, 2)};
    t.elems[0] = parts[0];
    t.elems[1] = parts[1];
    return t;
}

/* A tensor operand x of interleave or cat at the rank limit, broadcast to (r, s) (keeping its type) and
 * reshaped to (r - 1) dims by merging dims `at` and `at + 1`: the row-major order of the elements is kept, so
 * the op runs one rank lower (where join's extra dim fits) and its result is reshaped back.  A
 * compile-time scalar is left for join to broadcast (it keeps its weak type). */
static Val merge_two_dims(Gen *g, Val x, int r, const int32_t *s, int at, Loc loc) {
    if (x.k != V_RT) return x;
    int32_t m[TIR_MAX_RANK];
    for (int d = 0, k = 0; d < r; d++) m[k] = d == at + 1 ? m[k] * s[d] : s[d], k += d != at;
    ValueId v = gen_coerce(g, x, x.t->dt, x.t->pointee, r, s, loc);
    return rt(g, reshape_to(g, v, r - 1, m, loc));
}

Val compose_interleave(Gen *g, Val a, Val b, Loc loc) {
    if (!val_is_value(g, a, loc) || !val_is_value(g, b, loc)) return val_err();
    if (val_rank(a) == TIR_MAX_RANK || val_rank(b) == TIR_MAX_RANK) { /* along the last dim only: the first two merge */
        int r;
        int32_t s[TIR_MAX_RANK];
        if (!gen_broadcast_shapes(g, val_rank(a), val_shape(a), val_rank(b), val_shape(b), &r, s, loc)) return val_err();
        Val j = compose_interleave(g, merge_two_dims(g, a, r, s, 0, loc), merge_two_dims(g, b, r, s, 0, loc), loc);
        if (!ok(j)) return j;
        s[r - 1] *= 2;
        return rt(g, reshape_to(g, j.v, r, s, loc));
    }
    Val j = compose_join(g, a, b, loc);
    if (!ok(j)) return j;
    int r = j.t->rank - 1;
    int32_t s[TIR_MAX_RANK];
    memcpy(s, j.t->shape, sizeof s);
    if (r == 0) s[0] = 2, r = 1;
    else s[r - 1] *= 2;
    return rt(g, reshape_to(g, j.v, r, s, loc));
}

/* a then b along dim, Triton's cat(a, b, dim=): join's new last dim moved just before dim, then merged
 * into it (each element of a is followed by b's, a's block along dim before b's). */
Val compose_cat(Gen *g, Val a, Val b, int dim, Loc loc) {
    if (!val_is_value(g, a, loc) || !val_is_value(g, b, loc)) return val_err();
    int ra = val_rank(a), rb = val_rank(b);
    bool same = ra == rb && ra > 0;
    for (int d = 0; same && d < ra; d++) same = val_shape(a)[d] == val_shape(b)[d];
    if (!same) {
        diag_error(g->d, loc, "'cat' expects two tensors of one shape, got %s and %s", gen_shape_str(g, ra, val_shape(a)),
                   gen_shape_str(g, rb, val_shape(b)));
        return val_err();
    }
    if (ra == TIR_MAX_RANK) { /* two dims other than dim merge, so join's extra dim fits */
        int32_t s[TIR_MAX_RANK];
        memcpy(s, val_shape(a), sizeof s);
        int at = dim < ra - 2 ? ra - 2 : 0;
        Val c = compose_cat(g, merge_two_dims(g, a, ra, s, at, loc), merge_two_dims(g, b, ra, s, at, loc), dim < at ? dim : dim - 1, loc);
        if (!ok(c)) return c;
        s[dim] *= 2;
        return rt(g, reshape_to(g, c.v, ra, s, loc));
    }
    Val j = compose_join(g, a, b, loc);
    if (!ok(j)) return j;
    int perm[TIR_MAX_RANK];
    for (int d = 0, k = 0; d <= ra; d++) perm[d] = d == dim ? ra : k++;
    ValueId t = permute_dims(g, j.v, perm, loc);
    int32_t s[TIR_MAX_RANK];
    memcpy(s, val_shape(a), sizeof s);
    s[dim] *= 2;
    return rt(g, reshape_to(g, t, ra, s, loc));
}

Val compose_ravel(Gen *g, Val x, Loc loc) {
    if (!val_is_value(g, x, loc)) return val_err();
    if (x.k != V_RT) x = rt(g, gen_materialize(g, x, loc));
    int32_t n = (int32_t)tir_type_numel(x.t);
    if (x.t->rank == 1) return x;
    return rt(g, reshape_to(g, x.v, 1, &n, loc));
}

/* OCP e2m1 (fp4) codes packed two to a byte, the first element in the low nibble, unpacked along dim
 * (its size doubles) to bf16, exactly.  A code s e1 e0 m (sign, two exponent bits, one mantissa bit) is
 * 0, 0.5, 1, 1.5, 2, 3, 4 or 6: for c = the code's low three bits, the bf16 bits are c * 0x3F00 below
 * 2 (0 and 0.5) and (c << 6) + 0x3F00 from 2 on (exponent e + 126, the mantissa bit at bf16's top
 * mantissa bit), or'ed with the sign at bit 15. */
Val compose_unpack_e2m1(Gen *g, Val x, int dim, Loc loc) {
    int r = x.t->rank;
    Val xi = gen_binop(g, TK_AMP, gen_cast(g, x, DT_I32, loc), val_ct_int(255, DT_I32), loc);
    Val half[2];
    for (int k = 0; k < 2; k++) {
        Val c = k ? gen_binop(g, TK_SHR, xi, val_ct_int(4, DT_I32), loc) : gen_binop(g, TK_AMP, xi, val_ct_int(15, DT_I32), loc);
        Val c7 = gen_binop(g, TK_AMP, c, val_ct_int(7, DT_I32), loc);
        Val big = gen_binop(g, TK_PLUS, gen_binop(g, TK_SHL, c7, val_ct_int(6, DT_I32), loc), val_ct_int(0x3F00, DT_I32), loc);
        Val small = gen_binop(g, TK_STAR, c7, val_ct_int(0x3F00, DT_I32), loc);
        Val ge2 = gen_binop(g, TK_GE, c7, val_ct_int(2, DT_I32), loc);
        if (!ok(big) || !ok(small) || !ok(ge2)) return val_err();
        Val mag = rt(g, select3(g, ge2, big.v, small.v, loc));
        Val sign = gen_binop(g, TK_SHL, gen_binop(g, TK_AMP, c, val_ct_int(8, DT_I32), loc), val_ct_int(12, DT_I32), loc);
        Val bits = gen_cast(g, gen_binop(g, TK_PIPE, mag, sign, loc), DT_U16, loc);
        if (!ok(bits)) return val_err();
        half[k] = gen_convert(g, bits, tir_scalar(g->m, DT_BF16), true, loc);
        if (!ok(half[k])) return val_err();
    }
    /* [.., n, ..] -> [.., 2n, ..]: join makes [.., 2] last; along the last dim that is interleave, else
     * the pair moves next to dim first */
    Val j = compose_join(g, half[0], half[1], loc);
    if (!ok(j)) return j;
    int perm[TIR_MAX_RANK];
    for (int d = 0, q = 0; d <= r; d++) perm[d] = d == dim + 1 ? r : q++;
    ValueId p = permute_dims(g, j.v, perm, loc);
    int32_t s[TIR_MAX_RANK];
    memcpy(s, x.t->shape, sizeof s);
    s[dim] *= 2;
    return rt(g, reshape_to(g, p, r, s, loc));
}

Val compose_flip(Gen *g, Val x, int dim, Loc loc) {
    int r = x.t->rank;
    int32_t n = x.t->shape[dim];
    if (n == 1) return x;
    Val idx = gen_binop(g, TK_MINUS, val_ct_int(n - 1, DT_I32), iota(g, r, x.t->shape, dim, loc), loc);
    return rt(g, gather(g, x.v, idx.v, dim, loc));
}

Val compose_gather(Gen *g, Val src, Val index, int axis, Loc loc) {
    if (index.k != V_RT || !dtype_is_int(index.t->dt) || index.t->dt == DT_PTR || index.t->dt == DT_I1 ||
        index.t->rank != src.t->rank) {
        diag_error(g->d, loc, "'gather' expects an integer index tensor of the source's rank %d, got '%s'", src.t->rank,
                   index.k == V_RT ? gen_type_desc(g, index.t) : gen_val_type_name(g, index));
        return val_err();
    }
    for (int d = 0; d < src.t->rank; d++)
        if (d != axis && index.t->shape[d] != src.t->shape[d]) {
            diag_error(g->d, loc, "'gather': index shape %s differs from source shape %s outside axis %d",
                       gen_shape_str(g, index.t->rank, index.t->shape), gen_shape_str(g, src.t->rank, src.t->shape), axis);
            return val_err();
        }
    Val i32 = gen_cast(g, index, DT_I32, loc);
    return rt(g, gather(g, src.v, i32.v, axis, loc));
}

/* ---- reductions and scans with a user combine function ---- */

/* The operands of reduce/associative_scan: one tensor or a tuple of tensors of one shape. */
static int operands(Gen *g, Val in, Val *xs, const char *what, Loc loc) {
    int n = in.k == V_TUPLE ? in.nelems : 1;
    if (n > TIR_MAX_COMBINE) {
        diag_error(g->d, loc, "'%s' takes at most %d tensors", what, TIR_MAX_COMBINE);
        return 0;
    }
    for (int k = 0; k < n; k++) {
        Val v = in.k == V_TUPLE ? in.elems[k] : in;
        if (!val_is_value(g, v, loc)) return 0;
        if (v.k != V_RT || !v.t->rank) {
            diag_error(g->d, loc, "'%s' expects tensors, got '%s'", what, gen_val_type_name(g, v));
            return 0;
        }
        if (k && (v.t->rank != xs[0].t->rank || memcmp(v.t->shape, xs[0].t->shape, sizeof(int32_t) * v.t->rank))) {
            diag_error(g->d, loc, "'%s': the tensors differ in shape: %s and %s", what, gen_shape_str(g, xs[0].t->rank, xs[0].t->shape),
                       gen_shape_str(g, v.t->rank, v.t->shape));
            return 0;
        }
        xs[k] = v;
    }
    return n;
}

/* fn(a..., b...) -> n values shaped like `like` (the dtypes of xs): a tuple of n, or one value. */
static bool combine(Gen *g, const Decl *fn, Op op, int n, const Val *a, const Val *b, const Val *xs, const Type *like,
                    Val *out, Loc loc) {
    if (!fn) { /* a built-in element-wise op (cumprod, xor_sum, reduce_or) */
        out[0] = gen_binop(g, op == OP_MUL ? TK_STAR : op == OP_XOR ? TK_CARET : op == OP_OR ? TK_PIPE : TK_PLUS, a[0], b[0], loc);
        if (!ok(out[0])) return false;
        out[0] = rt(g, gen_coerce(g, out[0], xs[0].t->dt, NULL, like->rank, like->shape, loc));
        return true;
    }
    Val args[2 * TIR_MAX_COMBINE];
    for (int k = 0; k < n; k++) args[k] = a[k], args[n + k] = b[k];
    Val r = gen_call_fn_vals(g, fn, args, 2 * n, loc);
    if (!ok(r)) return false;
    int got = r.k == V_TUPLE ? r.nelems : r.k == V_VOID ? 0 : 1;
    if (got != n) {
        diag_error(g->d, loc, "combine function '%s' returns %d value%s, expected %d", fn->name, got, got == 1 ? "" : "s", n);
        return false;
    }
    for (int k = 0; k < n; k++) {
        Val v = r.k == V_TUPLE ? r.elems[k] : r;
        bool fits = v.k == V_CT || (v.k == V_RT && (v.t->rank == 0 || (v.t->rank == like->rank && !memcmp(v.t->shape, like->shape, sizeof(int32_t) * v.t->rank))));
        if (!fits || val_dtype(v) == DT_PTR) {
            diag_error(g->d, loc, "combine function '%s' returns '%s' where its operands are %s", fn->name,
                       v.k == V_RT ? gen_type_desc(g, v.t) : gen_val_type_name(g, v),
                       gen_type_desc(g, tir_with_shape(g->m, xs[k].t, like->rank, like->shape)));
            return false;
        }
        if (v.k == V_RT && v.t->dt != xs[k].t->dt) {
            diag_error(g->d, loc, "combine function '%s' returns %s for an operand of %s", fn->name, dtype_name(v.t->dt),
                       dtype_name(xs[k].t->dt));
            return false;
        }
        out[k] = rt(g, gen_coerce(g, v, xs[k].t->dt, NULL, like->rank, like->shape, loc));
    }
    return true;
}

static Val pack(Gen *g, Val in, const Val *xs, int n) {
    if (in.k != V_TUPLE) return xs[0];
    Val t = {.k = V_TUPLE, .nelems = n, .elems = ARENA_ARRAY(g->a, Val, n)};
    memcpy(t.elems, xs, sizeof(Val) * (size_t)n);
    return t;
}

/* One reduce_fn or scan_fn on the n tensors xs along axis: its region has 2n scalar
 * arguments (a0.., b0..) and yields fn(a.., b..) (or a * b for cumprod). */
static bool combine_op(Gen *g, Op op, int axis, int n, Val *xs, const Decl *fn, Op bop, Val *out, Loc loc) {
    const Type *rts[TIR_MAX_COMBINE];
    ValueId ops[TIR_MAX_COMBINE];
    for (int k = 0; k < n; k++) {
        if (xs[k].t->dt == DT_PTR) {
            diag_error(g->d, loc, "'%s' of pointers: combine their offsets instead", op == OP_SCAN_FN ? "associative_scan" : "reduce");
            return false;
        }
        int32_t s[TIR_MAX_RANK];
        int r = 0;
        for (int d = 0; d < xs[k].t->rank; d++)
            if (d != axis) s[r++] = xs[k].t->shape[d];
        rts[k] = op == OP_SCAN_FN ? xs[k].t : tir_type(g->m, xs[k].t->dt, r, s, NULL, NULL);
        ops[k] = xs[k].v;
    }
    Inst *in = tir_inst_new(g->f, op, ops, n, rts, n, loc);
    in->a.ival = axis;
    if (g->b.before) tir_insert_before(g->b.before, in);
    else tir_block_append(g->b.block, in);
    Block *body = tir_block_new(g->f, in);
    tir_inst_add_region(g->f, in, body);
    Val a[TIR_MAX_COMBINE], b[TIR_MAX_COMBINE], c[TIR_MAX_COMBINE];
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < n; k++) (h ? b : a)[k] = rt(g, tir_block_add_arg(g->f, body, tir_scalar(g->m, xs[k].t->dt)));
    Builder saved = g->b;
    g->b.block = body;
    g->b.before = NULL;
    bool okc = combine(g, fn, bop, n, a, b, xs, tir_scalar(g->m, xs[0].t->dt), c, loc);
    ValueId ys[TIR_MAX_COMBINE];
    for (int k = 0; k < n; k++) ys[k] = okc ? c[k].v : a[k].v;
    gen_emit_inst(g, loc, OP_YIELD, ys, n, NULL);
    g->b = saved;
    for (int k = 0; k < n; k++) out[k] = rt(g, in->res[k]);
    return okc;
}

Val compose_reduce(Gen *g, Val in, int axis, const Decl *fn, Op op, bool keep_dims, Loc loc) {
    Val xs[TIR_MAX_COMBINE];
    int n = operands(g, in, xs, fn ? "reduce" : "xor_sum", loc);
    if (!n) return val_err();
    if (axis < 0) { /* no axis: every element, in row-major order */
        for (int k = 0; k < n; k++) xs[k] = compose_ravel(g, xs[k], loc);
        return compose_reduce(g, pack(g, in, xs, n), 0, fn, op, false, loc);
    }
    if (!combine_op(g, OP_REDUCE_FN, axis, n, xs, fn, op, xs, loc)) return val_err();
    if (keep_dims)
        for (int k = 0; k < n; k++) xs[k] = gen_expand_dims(g, xs[k], axis, loc);
    return pack(g, in, xs, n);
}

Val compose_scan(Gen *g, Val in, int axis, const Decl *fn, Op op, bool reverse, Loc loc) {
    Val xs[TIR_MAX_COMBINE];
    int n = operands(g, in, xs, fn ? "associative_scan" : "cumprod", loc);
    if (!n) return val_err();
    /* reverse: out[i] = x[n-1] (+) .. (+) x[i], the scan of flip(x) flipped back */
    if (reverse)
        for (int k = 0; k < n; k++) xs[k] = compose_flip(g, xs[k], axis, loc);
    if (!combine_op(g, OP_SCAN_FN, axis, n, xs, fn, op, xs, loc)) return val_err();
    if (reverse)
        for (int k = 0; k < n; k++) xs[k] = compose_flip(g, xs[k], axis, loc);
    return pack(g, in, xs, n);
}

/* ---- sorting ---- */

/* What sort compares: integers as they are; floats as the signed integer of their bits
 * with the magnitude bits flipped for negative values, which orders them as IEEE 754's
 * totalOrder (-NaN < -inf < .. < -0 < +0 < .. < +inf < +NaN).  Integer keys also keep
 * LLVM from packing f16 comparisons into setp.f16x2 (which the emulator does not run). */
static Val sort_key(Gen *g, Val x, Loc loc) {
    if (!dtype_is_float(x.t->dt)) return x;
    int w = dtype_bits(x.t->dt);
    DType it = w == 64 ? DT_I64 : w == 32 ? DT_I32 : DT_I16;
    Val b = rt(g, gen_emit(g, loc, OP_BITCAST, &x.v, 1, tir_with_dtype(g->m, x.t, it)));
    Val neg = gen_binop(g, TK_SHR, b, val_ct_int(w - 1, it), loc); /* all ones for negative values */
    Val mag = gen_binop(g, TK_AMP, neg, val_ct_int(w == 64 ? INT64_MAX : (int64_t)((1ull << (w - 1)) - 1), it), loc);
    return gen_binop(g, TK_CARET, b, mag, loc);
}

/* Bitonic sort of x (and an optional payload p, moved with it) along the last dim, in
 * sort_key's order, ascending or descending; with a payload, equal keys put the smaller
 * payload first.  merge_only: the last stage alone (partners at n/2, n/4, .. 1), which sorts
 * a bitonic sequence, Triton's bitonic_merge. */
static void bitonic(Gen *g, Val *x, Val *p, bool descending, bool merge_only, Loc loc) {
    const Type *t = x->t;
    int r = t->rank, last = r - 1;
    int32_t n = t->shape[last];
    Val i = iota(g, r, t->shape, last, loc);
    for (int32_t k = merge_only ? n : 2; k <= n; k *= 2)
        for (int32_t j = k / 2; j >= 1; j /= 2) {
            Val pj = gen_binop(g, TK_CARET, i, val_ct_int(j, DT_I32), loc);
            Val ox = rt(g, gather(g, x->v, pj.v, last, loc)), op = {0};
            tir_val(g->f, ox.v)->def->a.ival2 = j; /* the partner i ^ j: registers or shuffles when it can */
            if (p) {
                op = rt(g, gather(g, p->v, pj.v, last, loc));
                tir_val(g->f, op.v)->def->a.ival2 = j;
            }
            /* this element is the lower of its pair; the pair's block is ascending */
            Val lower = gen_binop(g, TK_EQEQ, gen_binop(g, TK_AMP, i, val_ct_int(j, DT_I32), loc), val_ct_int(0, DT_I32), loc);
            Val asc = k == n ? val_ct_int(!descending, DT_I1)
                             : gen_binop(g, TK_EQEQ, gen_binop(g, TK_EQEQ, gen_binop(g, TK_AMP, i, val_ct_int(k, DT_I32), loc), val_ct_int(0, DT_I32), loc),
                                         val_ct_int(!descending, DT_I1), loc);
            Val kx = sort_key(g, *x, loc), ko = sort_key(g, ox, loc);
            Val lo = rt(g, select3(g, lower, kx.v, ko.v, loc)), hi = rt(g, select3(g, lower, ko.v, kx.v, loc));
            /* swap when the pair is out of order: hi < lo in an ascending block, lo < hi in a descending one */
            Val hl = gen_binop(g, TK_LT, hi, lo, loc), lh = gen_binop(g, TK_LT, lo, hi, loc);
            if (p) { /* ties: the smaller payload comes first in either direction */
                Val plo = rt(g, select3(g, lower, p->v, op.v, loc)), phi = rt(g, select3(g, lower, op.v, p->v, loc));
                /* the order is a strict total one on (value, payload): in a block of the final
                 * direction a tie puts the smaller payload first, in the opposite one last */
                Val eq = gen_binop(g, TK_EQEQ, lo, hi, loc);
                bool final_asc = !descending;
                Val hi_first = gen_binop(g, TK_LT, phi, plo, loc), lo_first = gen_binop(g, TK_LT, plo, phi, loc);
                hl = gen_binop(g, TK_PIPE, hl, gen_binop(g, TK_AMP, eq, final_asc ? hi_first : lo_first, loc), loc);
                lh = gen_binop(g, TK_PIPE, lh, gen_binop(g, TK_AMP, eq, final_asc ? lo_first : hi_first, loc), loc);
            }
            Val swap = asc.k == V_CT ? (asc.i ? hl : lh)
                                     : gen_binop(g, TK_PIPE, gen_binop(g, TK_AMP, asc, hl, loc),
                                                 gen_binop(g, TK_AMP, gen_binop(g, TK_EQEQ, asc, val_ct_int(0, DT_I1), loc), lh, loc), loc);
            *x = rt(g, select3(g, swap, ox.v, x->v, loc));
            if (p) *p = rt(g, select3(g, swap, op.v, p->v, loc));
        }
}

static bool sortable(Gen *g, Val x, const char *what, Loc loc) {
    if (!val_is_value(g, x, loc)) return false;
    if (x.k != V_RT || !x.t->rank || x.t->dt == DT_PTR || dtype_is_storage(x.t->dt)) {
        diag_error(g->d, loc, "'%s' expects a tensor of numbers, got '%s'", what, gen_val_type_name(g, x));
        return false;
    }
    return true;
}

Val compose_sort(Gen *g, Val x, bool descending, Loc loc) {
    if (!sortable(g, x, "sort", loc)) return val_err();
    bitonic(g, &x, NULL, descending, false, loc);
    return x;
}

Val compose_bitonic_merge(Gen *g, Val x, bool descending, Loc loc) {
    if (!sortable(g, x, "bitonic_merge", loc)) return val_err();
    bitonic(g, &x, NULL, descending, true, loc);
    return x;
}

Val compose_topk(Gen *g, Val x, int64_t k, bool descending, bool indices, Loc loc) {
    if (!sortable(g, x, "topk", loc)) return val_err();
    int r = x.t->rank;
    int32_t n = x.t->shape[r - 1];
    if (k < 1 || k > n || (k & (k - 1))) {
        diag_error(g->d, loc, "'topk': k must be a power of two from 1 to %d, got %lld", n, (long long)k);
        return val_err();
    }
    Val idx = iota(g, r, x.t->shape, r - 1, loc);
    bitonic(g, &x, &idx, descending, false, loc);
    int32_t s[TIR_MAX_RANK];
    memcpy(s, x.t->shape, sizeof s);
    s[r - 1] = (int32_t)k;
    Val first = iota(g, r, s, r - 1, loc);
    Val t = {.k = V_TUPLE, .nelems = 2, .elems = ARENA_ARRAY(g->a, Val, 2)};
    t.elems[0] = k == n ? x : rt(g, gather(g, x.v, first.v, r - 1, loc));
    if (!indices) return t.elems[0];
    t.elems[1] = k == n ? idx : rt(g, gather(g, idx.v, first.v, r - 1, loc));
    return t;
}

/* histogram(x, b) of many values over many bins as integer dots: a value v in [0, b) is the pair (v >> L, v & (2^L - 1)),
 * and the count of v is the number of elements whose high part is v >> L and low part v & (2^L - 1), so the counts are
 * onehot_hi^T . onehot_lo, [H, 2^L] = [H, n] . [n, 2^L] on i8 one-hot tiles with an i32 accumulator (exact: sums of
 * 0s and 1s).  2^L is at least 16, H = b / 2^L rounded up to 16 (the least M and N of an i8 tensor-core dot), the
 * counts the first b of the product in row-major order.  Elements outside [0, b) or masked off are -1, whose high part matches no row.  The
 * elements go in chunks of HISTOGRAM_DOT_BYTES of one-hot operands, one dot each into the accumulator (a chunk is a
 * row of the values reshaped [n / C, C], taken by gather), so the dots' operands in shared memory stay small.  The
 * work is n * (H + 2^L) compares instead of n * b. */
static Val histogram_dot(Gen *g, Val x, int32_t b, Val mask, Loc loc) {
    int k = 0;
    while ((1 << k) < b) k++;
    int lb = k - k / 2 < 4 ? 4 : k - k / 2;
    int32_t n = x.t->shape[0], lo_n = 1 << lb, hi_n = b >> lb < 16 ? 16 : b >> lb, s[2] = {hi_n, lo_n}, c = n;
    while (c > 16 && (int64_t)c * (hi_n + lo_n) > HISTOGRAM_DOT_BYTES) c /= 2;
    int32_t nc = n / c, rows[2] = {nc, c}, one[2] = {1, c};
    /* in i64, so that every integer type compares in range (a u64 past i64's range is negative: outside) */
    Val xi = gen_cast(g, x, DT_I64, loc);
    Val valid = gen_binop(g, TK_AMP, gen_binop(g, TK_GE, xi, val_ct_int(0, DT_I64), loc),
                          gen_binop(g, TK_LT, xi, val_ct_int(b, DT_I64), loc), loc);
    if (mask.k != V_NONE) valid = gen_binop(g, TK_AMP, valid, mask, loc);
    Val v = gen_cast(g, gen_binop(g, TK_AMP, xi, val_ct_int(b - 1, DT_I64), loc), DT_I32, loc);
    Val out = gen_cast(g, gen_binop(g, TK_EQEQ, valid, val_ct_int(0, DT_I1), loc), DT_I32, loc);
    v = gen_binop(g, TK_MINUS, v, gen_binop(g, TK_STAR, out, gen_binop(g, TK_PLUS, v, val_ct_int(1, DT_I32), loc), loc), loc);
    if (!ok(v)) return val_err();
    ValueId vr = reshape_to(g, v.v, 2, rows, loc);
    const Type *acc_t = tir_type(g->m, DT_I32, 2, s, NULL, NULL);
    g->b.loc = loc;
    ValueId acc = tir_const_int(&g->b, acc_t, 0);
    Val hi_iota = gen_expand_dims(g, iota(g, 1, &hi_n, 0, loc), 0, loc);
    Val lo_iota = gen_expand_dims(g, iota(g, 1, &lo_n, 0, loc), 0, loc);
    for (int32_t j = 0; j < nc; j++) {
        Val chunk = v;
        if (nc > 1) {
            g->b.loc = loc;
            ValueId at = tir_const_int(&g->b, tir_type(g->m, DT_I32, 2, one, NULL, NULL), j);
            chunk = rt(g, reshape_to(g, gather(g, vr, at, 0, loc), 1, &c, loc));
        }
        Val hi = gen_expand_dims(g, gen_binop(g, TK_SHR, chunk, val_ct_int(lb, DT_I32), loc), 1, loc);
        Val lo = gen_expand_dims(g, gen_binop(g, TK_AMP, chunk, val_ct_int(lo_n - 1, DT_I32), loc), 1, loc);
        Val hit_hi = gen_binop(g, TK_EQEQ, hi, hi_iota, loc), hit_lo = gen_binop(g, TK_EQEQ, lo, lo_iota, loc);
        if (!ok(hit_hi) || !ok(hit_lo)) return val_err();
        ValueId a = permute_dims(g, gen_cast(g, hit_hi, DT_I8, loc).v, (const int[]){1, 0}, loc);
        acc = gen_emit(g, loc, OP_DOT, (ValueId[]){a, gen_cast(g, hit_lo, DT_I8, loc).v, acc}, 3, acc_t);
    }
    int32_t total = hi_n * lo_n;
    ValueId flat = reshape_to(g, acc, 1, &total, loc);
    if (total == b) return rt(g, flat);
    return rt(g, gather(g, flat, iota(g, 1, &b, 0, loc).v, 0, loc));
}

Val compose_histogram(Gen *g, Val x, int64_t bins, Val mask, Loc loc) {
    if (!val_is_value(g, x, loc)) return val_err();
    if (x.k != V_RT || !x.t->rank || !dtype_is_int(x.t->dt) || x.t->dt == DT_PTR || x.t->dt == DT_I1) {
        diag_error(g->d, loc, "'histogram' expects a tensor of integers, got '%s'", gen_val_type_name(g, x));
        return val_err();
    }
    if (bins < 1 || bins > GEN_MAX_NUMEL || (bins & (bins - 1))) {
        diag_error(g->d, loc, "'histogram': num_bins must be a power of two from 1 to %d, got %lld", GEN_MAX_NUMEL, (long long)bins);
        return val_err();
    }
    int32_t b = (int32_t)bins;
    if (mask.k != V_NONE) {
        if (!val_is_value(g, mask, loc)) return val_err();
        if (val_dtype(mask) != DT_I1) {
            diag_error(g->d, loc, "mask of 'histogram' must be i1, got '%s'", gen_val_type_name(g, mask));
            return val_err();
        }
        int r;
        int32_t s[TIR_MAX_RANK];
        if (!gen_broadcast_shapes(g, x.t->rank, x.t->shape, val_rank(mask), val_shape(mask), &r, s, loc)) return val_err();
        if (r != x.t->rank || memcmp(s, x.t->shape, sizeof(int32_t) * (size_t)r)) {
            diag_error(g->d, loc, "mask shape %s does not broadcast to %s", gen_shape_str(g, val_rank(mask), val_shape(mask)),
                       gen_shape_str(g, x.t->rank, x.t->shape));
            return val_err();
        }
        mask = compose_ravel(g, rt(g, gen_coerce(g, mask, DT_I1, NULL, r, s, loc)), loc);
    }
    x = compose_ravel(g, x, loc);
    int32_t n = x.t->shape[0];
    if ((int64_t)n * b > HISTOGRAM_SLICE && b >= 64 && n >= 16) return histogram_dot(g, x, b, mask, loc);
    /* the bins in slices of c, so that each slice's compare tile [n, c] stays within HISTOGRAM_SLICE elements */
    int32_t c = b;
    while (c > 1 && (int64_t)n * c > HISTOGRAM_SLICE) c /= 2;
    int32_t s2[2] = {n, c}, rs[2] = {b / c, c};
    if (!gen_check_shape(g, 2, s2, loc)) return val_err();
    /* values wider than i32 compare in their own type: out-of-range ones match no bin */
    Val col = gen_expand_dims(g, x, 1, loc);
    Val slice_iota = iota(g, 1, &c, 0, loc), row = b == c ? (Val){0} : iota(g, 2, rs, 0, loc), acc = {0};
    for (int32_t j = 0; j < b / c; j++) {
        Val bin = gen_expand_dims(g, j ? gen_binop(g, TK_PLUS, slice_iota, val_ct_int(j * c, DT_I32), loc) : slice_iota, 0, loc);
        Val hit = gen_binop(g, TK_EQEQ, col, bin, loc);
        if (mask.k != V_NONE) hit = gen_binop(g, TK_AMP, hit, gen_expand_dims(g, mask, 1, loc), loc);
        if (!ok(hit)) return val_err();
        Val cnt = gen_cast(g, hit, DT_I32, loc);
        Inst *in = gen_emit_inst(g, loc, OP_REDUCE, &cnt.v, 1, tir_type(g->m, DT_I32, 1, &c, NULL, NULL));
        in->a.ival = 0;
        in->a.ival2 = RED_SUM;
        if (b == c) return rt(g, in->res[0]);
        /* slice j is row j of a [b / c, c] tile: its counts times (row == j), added */
        Val part = gen_binop(g, TK_STAR, gen_cast(g, gen_binop(g, TK_EQEQ, row, val_ct_int(j, DT_I32), loc), DT_I32, loc),
                             gen_expand_dims(g, rt(g, in->res[0]), 0, loc), loc);
        acc = j ? gen_binop(g, TK_PLUS, acc, part, loc) : part;
        if (!ok(acc)) return val_err();
    }
    return rt(g, reshape_to(g, acc.v, 1, &b, loc));
}

/* ---- map_elementwise ---- */

/* The first instruction of b (nested regions too) that makes a tensor, or NULL: the mapped function
 * runs once per element, so it must compute on scalars. */
static const Inst *tensor_inst(Gen *g, const Block *b) {
    for (const Inst *i = b->first; i; i = i->next) {
        for (int r = 0; r < i->nres; r++)
            if (vt(g, i->res[r])->rank) return i;
        for (int k = 0; k < i->nregions; k++) {
            const Inst *t = tensor_inst(g, i->regions[k]);
            if (t) return t;
        }
    }
    return NULL;
}

Val compose_map(Gen *g, const Decl *fn, const Val *xs, int n, int pack, Loc loc) {
    const Type *t0 = vt(g, xs[0].v);
    ValueId ops[MAP_MAX_ARGS];
    for (int k = 0; k < n; k++) ops[k] = xs[k].v;
    Inst *in = tir_inst_new(g->f, OP_MAP_FN, ops, n, NULL, 0, loc); /* results once the fn has said their types */
    in->a.ival = pack;
    if (g->b.before) tir_insert_before(g->b.before, in);
    else tir_block_append(g->b.block, in);
    Block *body = tir_block_new(g->f, in);
    tir_inst_add_region(g->f, in, body);
    Val args[MAP_MAX_ARGS * MAP_MAX_PACK];
    for (int k = 0; k < n; k++)
        for (int e = 0; e < pack; e++) args[k * pack + e] = rt(g, tir_block_add_arg(g->f, body, tir_scalar(g->m, vt(g, xs[k].v)->dt)));
    Builder saved = g->b;
    g->b.block = body;
    g->b.before = NULL;
    Val r = gen_call_fn_vals(g, fn, args, n * pack, loc);
    int got = r.k == V_TUPLE ? r.nelems : r.k == V_VOID || r.k == V_ERR ? 0 : 1;
    bool ok = r.k != V_ERR;
    if (ok && (got == 0 || got % pack || got / pack > MAP_MAX_ARGS)) {
        if (!got) diag_error(g->d, loc, "'map_elementwise': function '%s' returns nothing", fn->name);
        else if (got % pack)
            diag_error(g->d, loc, "'map_elementwise': function '%s' returns %d values, not a multiple of pack=%d (pack values of each result)",
                       fn->name, got, pack);
        else diag_error(g->d, loc, "'map_elementwise': function '%s' returns %d values, at most %d are allowed", fn->name, got / pack, MAP_MAX_ARGS);
        ok = false;
    }
    ValueId ys[MAP_MAX_ARGS * MAP_MAX_PACK];
    const Type *rts[MAP_MAX_ARGS];
    for (int k = 0; ok && k < got; k++) {
        Val v = r.k == V_TUPLE ? r.elems[k] : r;
        if (!val_is_value(g, v, loc)) {
            ok = false;
            break;
        }
        if (val_rank(v) != 0 || val_dtype(v) == DT_PTR) {
            diag_error(g->d, loc, "'map_elementwise': function '%s' must return scalars, its value %d is '%s'", fn->name, k,
                       gen_val_type_name(g, v));
            ok = false;
            break;
        }
        DType dt = val_dtype(v);
        if (k % pack == 0) rts[k / pack] = tir_with_dtype(g->m, t0, dt);
        else if (rts[k / pack]->dt != dt) {
            diag_error(g->d, loc, "'map_elementwise': function '%s' returns %s and %s for the elements of result %d (pack=%d)", fn->name,
                       dtype_name(rts[k / pack]->dt), dtype_name(dt), k / pack, pack);
            ok = false;
            break;
        }
        ys[k] = gen_coerce(g, v, dt, NULL, 0, NULL, loc);
    }
    const Inst *ti = ok ? tensor_inst(g, body) : NULL;
    if (ti) {
        diag_error(g->d, ti->loc, "'map_elementwise': function '%s' makes a tensor here (%s); it runs on one element at a time, so it "
                   "must compute on scalars", fn->name, gen_type_desc(g, vt(g, ti->res[0])));
        diag_note(g->d, loc, "mapped here");
        ok = false;
    }
    if (!ok) got = 0;
    gen_emit_inst(g, loc, OP_YIELD, ys, got, NULL);
    g->b = saved;
    if (!ok) {
        tir_inst_remove(in);
        return val_err();
    }
    int m = got / pack;
    in->nres = m;
    in->res = ARENA_ARRAY(g->f->module->arena, ValueId, m);
    for (int k = 0; k < m; k++) in->res[k] = tir_new_value(g->f, rts[k], in, k);
    if (m == 1) return rt(g, in->res[0]);
    Val t = {.k = V_TUPLE, .nelems = m, .elems = ARENA_ARRAY(g->a, Val, m)};
    for (int k = 0; k < m; k++) t.elems[k] = rt(g, in->res[k]);
    return t;
}

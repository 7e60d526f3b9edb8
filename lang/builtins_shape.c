/* builtins_shape.c - the built-ins that change a tile's shape, not its elements:
 *   reshape(x, shape), view(x, shape)        the same elements in a new shape (view never reorders here)
 *   trans(x, dims), permute(x, dims)         dimensions reordered (2-d: swapped)
 *   expand_dims(x, axis), unsqueeze(x, dim)  a dimension of length 1 inserted (axis: an int or a tuple)
 *   squeeze(x, dim)                          a dimension of length 1 dropped
 *   broadcast_to(x, shape)                   size-1 dimensions stretched
 * builtins.c binds the arguments and dispatches here by the builtin's id. */
#include "builtins.h"

#include <string.h>

#include "builtins_table.h"

Val bi_shape_op(Call *c, int id) {
    Gen *g = c->g;
    if (!val_is_value(g, c->v[0], c->loc[0])) return val_err();
    Val x = c->v[0];
    int r;
    int32_t s[TIR_MAX_RANK];
    switch (id) {
    case BI_RESHAPE:
    case BI_VIEW: { /* view: Triton's reshape that may reorder the elements; here it never does */
        if (!bi_shape_arg(c, 1, &r, s)) return val_err();
        const Type *t = tir_type(g->m, val_dtype(x), r, s, x.k == V_RT ? x.t->pointee : NULL, NULL);
        if (x.k == V_CT) return val_rt(g, gen_coerce(g, x, x.dt, NULL, r, s, c->loc[0]));
        if (tir_type_numel(x.t) != tir_type_numel(t)) {
            diag_error(g->d, c->loc[1], "cannot reshape %s (%lld elements) into %s (%lld elements)", gen_shape_str(g, x.t->rank, x.t->shape),
                       (long long)tir_type_numel(x.t), gen_shape_str(g, r, s), (long long)tir_type_numel(t));
            return val_err();
        }
        if (t == x.t) return x;
        if (x.t->rank == 0) return val_rt(g, gen_emit(g, c->node->loc, OP_SPLAT, &x.v, 1, t));
        return val_rt(g, gen_emit(g, c->node->loc, OP_RESHAPE, &x.v, 1, t));
    }
    case BI_TRANS: {
        if (!bi_tensor_arg(c, 0)) return val_err();
        /* without perm, Triton's default: the last two axes swap (a matrix's transpose, batched) */
        int n = x.t->rank, perm[TIR_MAX_RANK];
        for (int i = 0; i < n; i++) perm[i] = i;
        if (n >= 2) perm[n - 2] = n - 1, perm[n - 1] = n - 2;
        if (has(c, 1)) {
            Val p = c->v[1];
            if (p.k == V_ERR) return val_err();
            /* a list [2, 0, 1] or, as Triton's, a tuple (2, 0, 1) of compile-time integers */
            bool ok = (p.k == V_SHAPE && p.rank == n) || (p.k == V_TUPLE && p.nelems == n);
            int seen = 0;
            for (int i = 0; ok && i < n; i++) {
                int64_t d = p.k == V_SHAPE ? p.shape[i] : p.elems[i].i;
                if (p.k == V_TUPLE) ok = p.elems[i].k == V_CT && dtype_is_int(p.elems[i].dt) && p.elems[i].dt != DT_I1;
                ok = ok && d >= 0 && d < n && !(seen & (1 << d));
                if (ok) seen |= 1 << d, perm[i] = (int)d;
            }
            if (!ok) {
                diag_error(g->d, c->loc[1], "'%s' expects a permutation of the %d dimensions", c->bi->name, n);
                return val_err();
            }
        }
        bool ident = true;
        for (int i = 0; i < n; i++) {
            s[i] = x.t->shape[perm[i]];
            ident &= perm[i] == i;
        }
        if (ident) return x;
        Inst *in = gen_emit_inst(g, c->node->loc, OP_TRANS, &x.v, 1, tir_with_shape(g->m, x.t, n, s));
        for (int i = 0; i < n; i++) in->a.perm[i] = perm[i];
        return val_rt(g, in->res[0]);
    }
    case BI_EXPAND_DIMS:
    case BI_UNSQUEEZE: {
        int axis;
        Val p = c->v[1];
        if (p.k == V_TUPLE || p.k == V_SHAPE) { /* Triton's expand_dims(x, (0, 2)): axes of the result, each new */
            int n = p.k == V_TUPLE ? p.nelems : p.rank, nr = val_rank(x) + n;
            bool at[2 * TIR_MAX_RANK + 1] = {0};
            for (int i = 0; i < n; i++) {
                Val e = p.k == V_TUPLE ? p.elems[i] : val_ct_int(p.shape[i], DT_I32);
                int64_t a = e.i < 0 ? e.i + nr : e.i;
                if (e.k != V_CT || !dtype_is_int(e.dt) || e.dt == DT_I1 || nr > 2 * TIR_MAX_RANK || a < 0 || a >= nr || at[a]) {
                    diag_error(g->d, c->loc[1], "'%s' expects distinct axes of the %d-dimensional result", c->bi->name, nr);
                    return val_err();
                }
                at[a] = true;
            }
            for (int a = 0; a < nr && x.k != V_ERR; a++)
                if (at[a]) x = gen_expand_dims(g, x, a, c->node->loc);
            return x;
        }
        if (!bi_axis_arg(c, 1, val_rank(x), true, &axis)) return val_err();
        return gen_expand_dims(g, x, axis, c->node->loc);
    }
    case BI_SQUEEZE: { /* Triton's: drop dimension dim, of length 1 (a [1] tensor becomes its element) */
        int axis;
        if (!bi_tensor_arg(c, 0) || !bi_axis_arg(c, 1, x.t->rank, false, &axis)) return val_err();
        if (x.t->shape[axis] != 1) {
            diag_error(g->d, c->loc[1], "'squeeze' drops a dimension of length 1, but dimension %d of %s has length %d", axis,
                       gen_shape_str(g, x.t->rank, x.t->shape), x.t->shape[axis]);
            return val_err();
        }
        if (x.t->rank == 1) { /* the one element: an or-reduction of its bits */
            DType dt = x.t->dt, it = dtype_bits(dt) == 64 ? DT_I64 : dtype_bits(dt) == 16 ? DT_I16 : dtype_bits(dt) == 8 ? DT_I8 : DT_I32;
            if (dt == DT_PTR) {
                diag_error(g->d, c->loc[0], "'squeeze' of a [1] tensor of pointers: index it with a scalar offset instead");
                return val_err();
            }
            Val b = dtype_is_float(dt) ? val_rt(g, gen_emit(g, c->node->loc, OP_BITCAST, &x.v, 1, tir_with_dtype(g->m, x.t, it))) : x;
            Val e = compose_reduce(g, b, 0, NULL, OP_OR, false, c->node->loc);
            if (e.k != V_RT || !dtype_is_float(dt)) return e;
            return val_rt(g, gen_emit(g, c->node->loc, OP_BITCAST, &e.v, 1, tir_scalar(g->m, dt)));
        }
        r = 0;
        for (int k = 0; k < x.t->rank; k++)
            if (k != axis) s[r++] = x.t->shape[k];
        return val_rt(g, gen_emit(g, c->node->loc, OP_RESHAPE, &x.v, 1, tir_with_shape(g->m, x.t, r, s)));
    }
    default: { /* broadcast_to */
        if (!bi_shape_arg(c, 1, &r, s)) return val_err();
        int xr = val_rank(x);
        const int32_t *xs = val_shape(x);
        bool fits = xr <= r;
        for (int k = 0; fits && k < xr; k++) fits = xs[xr - 1 - k] == 1 || xs[xr - 1 - k] == s[r - 1 - k];
        if (!fits) {
            diag_error(g->d, c->node->loc, "cannot broadcast %s to %s", gen_shape_str(g, xr, xs), gen_shape_str(g, r, s));
            return val_err();
        }
        return val_rt(g, gen_coerce(g, x, val_dtype(x), x.k == V_RT ? x.t->pointee : NULL, r, s, c->node->loc));
    }
    }
}

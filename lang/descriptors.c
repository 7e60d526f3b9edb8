/* descriptors.c - Triton's tensor descriptors and block pointers: compile-time records
 * of a tensor in global memory, whose accesses are masked loads and stores of a block.
 *
 * Both are tuples whose first element is the block shape, a list, which no user tuple
 * can hold (so neither is ever mistaken for one):
 *   descriptor     (block_shape, base, shape[r], strides[r])              2 + 2r elements
 *   block pointer  (block_shape, base, shape[r], strides[r], offsets[r])  2 + 3r elements
 * A descriptor is addressed at offsets given with each access; a block pointer carries its
 * offsets (`advance` makes a new one).  Their scalars are values like any other: a block
 * pointer reassigned in a loop or an `if` is carried as its leaves (lang/stmt.c), so
 * `bp = advance(bp, [0, BK])` in a loop is one loop-carried i32 per dim.
 *
 * The block at offsets o:
 *   1. index_d = o_d + arange(0, B_d), expanded to rank r along dim d;
 *   2. pointers = base + sum_d index_d * strides[d];
 *   3. mask = AND over the dims checked of 0 <= index_d < shape[d] (a descriptor checks
 *      every dim; a block pointer those of `boundary_check`, as Triton: the others are
 *      the caller's promise and cost nothing).
 * Elements outside load as `other` (zero, or NaN for padding_option="nan") and are not
 * stored.  On sm_90a such loads in a pipelined loop may become tensor-map copies (pass tma). */
#include "builtins.h"

#include <math.h>
#include <stdio.h>
#include <string.h>



/* Steps 1-3 of the header for a record d of rank r (shape at d.elems[2], strides at
 * d.elems[2 + r]) at offsets off[0..r): the block's pointers, and its mask over the dims
 * whose bit is set in `checked` (V_NONE when none is). */
static bool block_at(Gen *g, Loc loc, Val d, const Val *off, unsigned checked, Val *ptrs, Val *mask) {
    int r = d.elems[0].rank;
    Val sum = {0}, m = {.k = V_NONE};
    for (int k = 0; k < r; k++) {
        int32_t n = d.elems[0].shape[k];
        Inst *ar = gen_emit_inst(g, loc, OP_ARANGE, NULL, 0, tir_type(g->m, DT_I32, 1, &n, NULL, NULL));
        ar->a.ival = 0;
        ar->a.ival2 = n;
        Val idx = gen_binop(g, TK_PLUS, off[k], val_rt(g, ar->res[0]), loc);
        for (int j = 0; j < k && idx.k != V_ERR; j++) idx = gen_expand_dims(g, idx, 0, loc);
        for (int j = k + 1; j < r && idx.k != V_ERR; j++) idx = gen_expand_dims(g, idx, j, loc);
        if (idx.k == V_ERR) return false;
        Val term = gen_binop(g, TK_STAR, idx, d.elems[2 + r + k], loc);
        sum = k ? gen_binop(g, TK_PLUS, sum, term, loc) : term;
        if (checked >> k & 1) {
            Val in = gen_binop(g, TK_ANDAND, gen_binop(g, TK_GE, idx, val_ct_int(0, DT_I32), loc),
                               gen_binop(g, TK_LT, idx, d.elems[2 + k], loc), loc);
            m = m.k == V_NONE ? in : gen_binop(g, TK_ANDAND, m, in, loc);
        }
        if (sum.k == V_ERR || m.k == V_ERR) return false;
    }
    *ptrs = gen_binop(g, TK_PLUS, d.elems[1], sum, loc);
    *mask = m;
    return ptrs->k != V_ERR;
}

/* The record's base pointer (argument 0), its shape and strides (lists 1 and 2) and block
 * shape (argument bs): the first 2 + 2r elements of a descriptor or block pointer of n
 * elements in all. */
static bool record_start(Call *c, int bs, int n_per_dim, Val *d) {
    Gen *g = c->g;
    if (!bi_ptr_arg(c, 0)) return false;
    if (val_rank(c->v[0]) != 0) {
        diag_error(g->d, c->loc[0], "'base' of '%s' must be a scalar pointer, got '%s'", c->bi->name, gen_val_type_name(g, c->v[0]));
        return false;
    }
    int r;
    int32_t shape[TIR_MAX_RANK];
    if (!bi_shape_arg(c, bs, &r, shape)) return false;
    for (int k = 1; k < n_per_dim + 1; k++)
        if (c->v[k].nelems != r) {
            diag_error(g->d, c->loc[k], "'%s': %d %s for a block of %d dims (%s): one per dim", c->bi->name, c->v[k].nelems,
                       k == 1 ? "shape elements" : k == 2 ? "strides" : "offsets", r, gen_shape_str(g, r, shape));
            return false;
        }
    *d = (Val){.k = V_TUPLE, .nelems = 2 + n_per_dim * r, .record = n_per_dim == 2 ? REC_DESC : REC_BLOCK_PTR};
    d->elems = ARENA_ARRAY(g->a, Val, d->nelems);
    d->elems[0] = (Val){.k = V_SHAPE, .rank = r};
    memcpy(d->elems[0].shape, shape, sizeof shape);
    d->elems[1] = c->v[0];
    for (int k = 0; k < r; k++) {
        d->elems[2 + k] = c->v[1].elems[k];
        /* strides in i64, as Triton's: index * stride does not wrap past 2^31 elements */
        d->elems[2 + r + k] = gen_cast(g, c->v[2].elems[k], DT_I64, c->loc[2]);
        if (d->elems[2 + r + k].k == V_ERR) return false;
    }
    return true;
}

/* ---- tensor descriptors (Triton's make_tensor_descriptor) ---- */

/* padding_option= ("zero", the default, or "nan": what a load reads outside the tensor) is kept in the
 * block shape's element (its i: 1 for "nan"), which a loop carries as it is. */
Val bi_make_desc(Call *c) {
    Val d;
    if (!record_start(c, 3, 2, &d)) return val_err();
    const char *pad = c->str[4];
    if (pad && strcmp(pad, "zero")) {
        DType et = d.elems[1].t->pointee->dt;
        if (strcmp(pad, "nan")) {
            diag_error(c->g->d, c->loc[4], "unknown padding_option \"%s\" of 'make_tensor_descriptor': expected \"zero\" or \"nan\"", pad);
            return val_err();
        }
        if (!dtype_is_float(et)) {
            diag_error(c->g->d, c->loc[4], "padding_option \"nan\" of 'make_tensor_descriptor' needs floats, the base pointer's are '%s'",
                       dtype_name(et));
            return val_err();
        }
        d.elems[0].i = 1;
    }
    return d;
}

/* The pointers and the in-bounds mask of the block a descriptor (argument 0) has at the
 * offsets (argument 1). */
static bool desc_block(Call *c, Val *ptrs, Val *mask) {
    Gen *g = c->g;
    Val d = c->v[0];
    if (d.k == V_ERR) return false;
    if (!gen_is_desc(d)) {
        diag_error(g->d, c->loc[0], "'%s' expects a tensor descriptor (from make_tensor_descriptor), got '%s'%s", c->bi->name,
                   gen_val_type_name(g, d), gen_is_block_ptr(d) ? " (a block pointer is read with load(ptr, boundary_check=...))" : "");
        return false;
    }
    int r = d.elems[0].rank;
    if (c->v[1].nelems != r) {
        diag_error(g->d, c->loc[1], "'%s': %d offsets for a descriptor of %d dims", c->bi->name, c->v[1].nelems, r);
        return false;
    }
    return block_at(g, c->node->loc, d, c->v[1].elems, (1u << r) - 1, ptrs, mask);
}

/* load_tensor_descriptor(desc, offsets) and store_tensor_descriptor(desc, offsets, value):
 * load and store of the block's pointers under its mask. */
Val bi_desc_access(Call *c, bool store) {
    Val ptrs, mask;
    if (!desc_block(c, &ptrs, &mask)) return val_err();
    Call a = {.g = c->g, .bi = c->bi, .node = c->node};
    for (int i = 0; i < 3; i++) a.arg[i] = c->node, a.loc[i] = c->node->loc;
    a.loc[0] = c->loc[0];
    a.v[0] = ptrs;
    if (store) {
        a.v[1] = c->v[2], a.loc[1] = c->loc[2];
        a.v[2] = mask;
        return bi_store(&a);
    }
    a.v[1] = mask;
    a.v[2] = c->v[0].elems[0].i ? val_ct_float(NAN, DT_F32) : val_ct_int(0, DT_I32);
    return bi_load(&a);
}

/* atomic_OP_tensor_descriptor(desc, offsets, value): the block's elements inside the tensor combined with
 * value's, each atomically, relaxed at gpu scope (Triton's descriptor atomics: a tensor reduction on sm_90a,
 * pass tma); nothing is returned. */
Val bi_desc_atomic(Call *c) {
    Val ptrs, mask;
    if (!desc_block(c, &ptrs, &mask)) return val_err();
    Call a = {.g = c->g, .bi = c->bi, .node = c->node};
    for (int i = 0; i < 5; i++) a.arg[i] = c->node, a.loc[i] = c->node->loc;
    a.loc[0] = c->loc[0];
    a.v[0] = ptrs;
    a.v[1] = c->v[2], a.loc[1] = c->loc[2];
    a.v[2] = mask;
    a.v[3] = a.v[4] = (Val){.k = V_NONE};
    a.arg[3] = a.arg[4] = NULL;
    a.str[3] = "relaxed";
    Val r = bi_atomic(&a);
    return r.k == V_ERR ? r : (Val){.k = V_VOID};
}

/* ---- block pointers (Triton's make_block_ptr, advance, load/store with boundary_check) ---- */

/* Offsets are i32, as Triton's (an i64 one, or a constant past i32, is an error rather than cut): a
 * loop that advances a block pointer carries one i32 per dim. */
static bool offsets_i32(Gen *g, Val *off, int r, Loc loc) {
    for (int k = 0; k < r; k++) {
        DType dt = val_dtype(off[k]);
        if ((off[k].k == V_RT && dtype_bits(dt) == 64) ||
            (off[k].k == V_CT && (dtype_is_signed(dt) || dtype_bits(dt) < 64 ? off[k].i : (int64_t)(uint64_t)off[k].i) != (int32_t)off[k].i)) {
            diag_error(g->d, loc, "a block pointer's offsets are i32, as Triton's; got %s",
                       off[k].k == V_CT ? arena_printf(g->a, "the constant '%lld'", (long long)off[k].i) : gen_a(g, gen_val_type_name(g, off[k]), true));
            return false;
        }
        off[k] = gen_cast(g, off[k], DT_I32, loc);
        if (off[k].k == V_ERR) return false;
    }
    return true;
}

/* A list of compile-time ints from argument i: [1, 0], (1, 0) or a single int; n of them. */
static bool ct_ints(Call *c, int i, const char *pname, int64_t *out, int *n) {
    Gen *g = c->g;
    Val v = c->v[i];
    *n = 0;
    if (v.k == V_SHAPE) {
        for (int k = 0; k < v.rank; k++) out[(*n)++] = v.shape[k];
        return true;
    }
    int cnt = v.k == V_TUPLE ? v.nelems : 1;
    if (cnt > TIR_MAX_RANK) {
        diag_error(g->d, c->loc[i], "'%s' of '%s' has %d elements: tensors have at most %d dims", pname, c->bi->name, cnt, TIR_MAX_RANK);
        return false;
    }
    for (int k = 0; k < cnt; k++) {
        Val e = v.k == V_TUPLE ? v.elems[k] : v;
        if (e.k != V_CT || !dtype_is_int(e.dt) || e.dt == DT_I1) {
            diag_error(g->d, c->loc[i], "'%s' of '%s' must be compile-time ints such as (0, 1), got '%s'", pname, c->bi->name,
                       gen_val_type_name(g, v));
            return false;
        }
        out[(*n)++] = e.i;
    }
    return true;
}

/* make_block_ptr(base, shape, strides, offsets, block_shape, order): shape, strides and
 * offsets one scalar per dim (run-time values allowed), block_shape compile-time; order, a
 * permutation of the dims (Triton's layout hint), is checked and otherwise unused. */
Val bi_make_block_ptr(Call *c) {
    Gen *g = c->g;
    Val d;
    if (!record_start(c, 4, 3, &d)) return val_err();
    int r = d.elems[0].rank;
    Val *off = d.elems + 2 + 2 * r;
    for (int k = 0; k < r; k++) off[k] = c->v[3].elems[k];
    if (!offsets_i32(g, off, r, c->loc[3])) return val_err();
    if (has(c, 5)) {
        int64_t ord[TIR_MAX_RANK];
        int n;
        if (!ct_ints(c, 5, "order", ord, &n)) return val_err();
        unsigned seen = 0;
        for (int k = 0; k < n; k++)
            if (ord[k] >= 0 && ord[k] < r) seen |= 1u << ord[k];
        if (n != r || seen != (1u << r) - 1) {
            char example[4 * TIR_MAX_RANK + 1];
            int len = 0;
            for (int k = r - 1; k >= 0; k--) len += snprintf(example + len, sizeof example - (size_t)len, "%d%s", k, k ? ", " : r == 1 ? "," : "");
            diag_error(g->d, c->loc[5], "'order' of 'make_block_ptr' must be a permutation of the %d dims, such as (%s)", r, example);
            return val_err();
        }
    }
    return d;
}

static bool block_ptr_arg(Call *c, int i) {
    Val d = c->v[i];
    if (d.k == V_ERR) return false;
    if (!gen_is_block_ptr(d)) {
        diag_error(c->g->d, c->loc[i], "'%s' expects a block pointer (from make_block_ptr), got '%s'", c->bi->name,
                   gen_val_type_name(c->g, d));
        return false;
    }
    return true;
}

/* advance(base, offsets): the block pointer moved by offsets (one integer scalar per dim). */
Val bi_advance(Call *c) {
    Gen *g = c->g;
    if (!block_ptr_arg(c, 0)) return val_err();
    Val d = c->v[0];
    int r = d.elems[0].rank;
    if (c->v[1].nelems != r) {
        diag_error(g->d, c->loc[1], "'advance': %d offsets for a block pointer of %d dims", c->v[1].nelems, r);
        return val_err();
    }
    Val n = d;
    n.elems = ARENA_ARRAY(g->a, Val, d.nelems);
    memcpy(n.elems, d.elems, sizeof(Val) * (size_t)d.nelems);
    Val *off = n.elems + 2 + 2 * r;
    Val by[TIR_MAX_RANK];
    memcpy(by, c->v[1].elems, sizeof(Val) * (size_t)r);
    if (!offsets_i32(g, by, r, c->loc[1])) return val_err();
    for (int k = 0; k < r; k++) {
        off[k] = gen_binop(g, TK_PLUS, off[k], by[k], c->loc[1]);
        if (off[k].k == V_ERR) return val_err();
    }
    return offsets_i32(g, off, r, c->loc[1]) ? n : val_err();
}

/* load(bp, boundary_check=, padding_option=) and store(bp, value, boundary_check=): the
 * parameter indices in LANG_BUILTINS. */
enum { LOAD_BOUNDARY = 6, LOAD_PADDING = 7, STORE_BOUNDARY = 5 };

bool bi_block_ptr_access(Call *c, bool store) {
    Gen *g = c->g;
    int bi = store ? STORE_BOUNDARY : LOAD_BOUNDARY;
    Val d = c->v[0];
    if (!gen_is_block_ptr(d)) {
        if (d.k == V_ERR) return false;
        if (has(c, bi) || (!store && c->str[LOAD_PADDING] && *c->str[LOAD_PADDING])) { /* "": Triton's default */
            int at = has(c, bi) ? bi : LOAD_PADDING;
            diag_error(g->d, c->loc[at], "'%s' of '%s' applies to block pointers (make_block_ptr) only", has(c, bi) ? "boundary_check"
                       : "padding_option", c->bi->name);
            return false;
        }
        return true; /* a plain pointer: nothing to rewrite */
    }
    int r = d.elems[0].rank;
    if (has(c, store ? 2 : 1) || (!store && has(c, 2))) {
        int at = has(c, store ? 2 : 1) ? (store ? 2 : 1) : 2;
        diag_error(g->d, c->loc[at], "'%s' of a block pointer takes no %s: boundary_check=(...) names the dims to mask, as Triton's",
                   c->bi->name, at == 2 && !store ? "'other'" : "'mask'");
        return false;
    }
    unsigned checked = 0;
    if (has(c, bi)) {
        int64_t dims[TIR_MAX_RANK];
        int n;
        if (!ct_ints(c, bi, "boundary_check", dims, &n)) return false;
        for (int k = 0; k < n; k++) {
            if (dims[k] < 0 || dims[k] >= r) {
                diag_error(g->d, c->loc[bi], "'boundary_check' of '%s' names dim %lld of a block pointer of %d dims", c->bi->name,
                           (long long)dims[k], r);
                return false;
            }
            checked |= 1u << dims[k];
        }
    }
    Val other = val_ct_int(0, DT_I32);
    if (!store && c->str[LOAD_PADDING] && strcmp(c->str[LOAD_PADDING], "") && strcmp(c->str[LOAD_PADDING], "zero")) {
        DType et = d.elems[1].t->pointee->dt;
        if (strcmp(c->str[LOAD_PADDING], "nan")) {
            diag_error(g->d, c->loc[LOAD_PADDING], "unknown padding_option \"%s\" of 'load': expected \"zero\" or \"nan\"",
                       c->str[LOAD_PADDING]);
            return false;
        }
        if (!dtype_is_float(et)) {
            diag_error(g->d, c->loc[LOAD_PADDING], "padding_option \"nan\" of 'load' needs floats, the block pointer's are '%s'",
                       dtype_name(et));
            return false;
        }
        other = val_ct_float(NAN, DT_F32);
    }
    Val ptrs, mask;
    if (!block_at(g, c->node->loc, d, d.elems + 2 + 2 * r, checked, &ptrs, &mask)) return false;
    int mi = store ? 2 : 1;
    c->v[0] = ptrs;
    c->v[mi] = mask;
    c->arg[mi] = mask.k == V_NONE ? NULL : c->node;
    c->loc[mi] = c->node->loc;
    if (!store) {
        c->v[2] = other;
        c->arg[2] = mask.k == V_NONE ? NULL : c->node;
        c->loc[2] = c->node->loc;
    }
    return true;
}

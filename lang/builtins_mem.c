/* builtins_mem.c - the built-ins that touch memory through pointers: load, store, atomic_load,
 * atomic_store, the atomics and atomic_poll (block pointers and tensor descriptors: descriptors.c).  A mask,
 * `other` and a stored value broadcast to the pointers' shape but never grow it, a stored number converts to
 * the pointee's dtype (as Triton's store casts), and string arguments (cache_modifier=, sem=, scope=) name one
 * of their values or are an error at the argument. */
#include "builtins.h"

#include <string.h>

/* Whether shape (r, s) broadcasts to pt's shape without growing it. */
static bool fits_ptr_shape(int r, const int32_t *s, const Type *pt) {
    bool fits = r <= pt->rank;
    for (int k = 0; fits && k < r; k++) fits = s[r - 1 - k] == 1 || s[r - 1 - k] == pt->shape[pt->rank - 1 - k];
    return fits;
}

/* The mask argument i of a memory op on pointers of type pt: i1, broadcast
 * to the pointers' shape.  0 when absent or constant true. */
static bool mask_arg(Call *c, int i, const Type *pt, ValueId *out) {
    Gen *g = c->g;
    *out = 0;
    if (!has(c, i)) return true;
    Val m = c->v[i];
    if (!val_is_value(g, m, c->loc[i])) return false;
    if (val_dtype(m) != DT_I1) {
        diag_error(g->d, c->loc[i], "mask of '%s' must be i1, got '%s'", c->bi->name, gen_val_type_name(g, m));
        return false;
    }
    if (m.k == V_CT && m.i) return true;
    if (!fits_ptr_shape(val_rank(m), val_shape(m), pt)) {
        diag_error(g->d, c->loc[i], "mask shape %s does not broadcast to pointer shape %s", gen_shape_str(g, m.t->rank, m.t->shape),
                   gen_shape_str(g, pt->rank, pt->shape));
        return false;
    }
    *out = gen_coerce(g, m, DT_I1, NULL, pt->rank, pt->shape, c->loc[i]);
    return true;
}

bool bi_ptr_arg(Call *c, int i) {
    Val p = c->v[i];
    if (!val_is_value(c->g, p, c->loc[i])) return false;
    if (val_dtype(p) != DT_PTR) {
        diag_error(c->g->d, c->loc[i], "'%s' expects a pointer, got '%s'", c->bi->name, gen_val_type_name(c->g, p));
        return false;
    }
    return true;
}

/* A value written through pointers pt, broadcast to the pointers' shape: a number converts to the pointee's
 * type as `as` converts (Triton's store and atomics cast the value to the element type: an f32 accumulator
 * stored through *f16 rounds to nearest even); a pointer only to a pointer of the same type. */
static bool stored_value(Call *c, int i, const Type *pt, ValueId *out) {
    Gen *g = c->g;
    Val v = c->v[i];
    const Type *elem = pt->pointee;
    if (!val_is_value(g, v, c->loc[i])) return false;
    gen_warn_int_quotient(g, v, elem->dt, c->loc[i]); /* store(p_f32, 1 / n): Triton stores the fraction */
    if (v.k == V_CT) {
        if (elem->dt == DT_PTR) {
            diag_error(g->d, c->loc[i], "'%s' through pointers to '%s' takes a pointer of that type as its value, not the number '%s'",
                       c->bi->name, gen_type_name(g, elem), dtype_name(v.dt));
            return false;
        }
        gen_warn_const_conversion(g, v, elem->dt, c->loc[i], arena_printf(g->a, "'%s'", c->bi->name));
        v = gen_ct_cast_into(g, v, elem->dt, c->loc[i], arena_printf(g->a, "'%s'", c->bi->name));
        *out = gen_coerce(g, v, elem->dt, NULL, pt->rank, pt->shape, c->loc[i]);
        return true;
    }
    if (tir_elem(g->m, v.t) != elem) {
        if (v.t->dt == DT_PTR && elem->dt != DT_PTR) { /* store(x, x): the pointer given as the value too */
            diag_error(g->d, c->loc[i],
                       "'%s' through pointers to '%s' takes a number as its value, not the pointer '%s' (only pointers to pointers "
                       "hold pointers)",
                       c->bi->name, gen_type_name(g, elem), gen_type_name(g, tir_elem(g->m, v.t)));
            return false;
        }
        if (elem->dt == DT_PTR) {
            diag_error(g->d, c->loc[i], "'%s' through pointers to '%s' takes a pointer of that type as its value, not %s'%s'",
                       c->bi->name, gen_type_name(g, elem), v.t->dt == DT_PTR ? "" : "the number ", gen_type_name(g, tir_elem(g->m, v.t)));
            return false;
        }
        v = gen_cast(g, v, elem->dt, c->loc[i]);
        if (v.k == V_ERR) return false;
    }
    if (!fits_ptr_shape(v.t->rank, v.t->shape, pt)) {
        diag_error(g->d, c->loc[i], "cannot %s a value of shape %s through pointers of shape %s", c->bi->name,
                   gen_shape_str(g, v.t->rank, v.t->shape), gen_shape_str(g, pt->rank, pt->shape));
        return false;
    }
    *out = gen_coerce(g, v, elem->dt, elem->pointee, pt->rank, pt->shape, c->loc[i]);
    return true;
}

/* cache_modifier="..." (argument i), eviction_policy="..." (i + 1), volatile=true (i + 2, loads):
 * the attr cache of the load or store (tir.h), or false with a located error.  PTX has
 * `ld.global{.cop}`, `ld.global{.L1::evict_*}` and `ld.volatile.global`, not two of them: volatile
 * is kept over a hint and the cache modifier over the eviction policy, the other dropped with a
 * warning at it (Triton takes both hints; neither changes what is read or written). */
static bool cache_args(Call *c, int i, bool store, uint8_t *out) {
    static const char *const cops_ld[] = {".ca", ".cg", ".cs", ".lu", ".cv"}, *const cops_st[] = {".wb", ".cg", ".cs", ".wt"};
    const char *const *ok = store ? cops_st : cops_ld;
    int nok = store ? 4 : 5, cop = 0, ev = 0;
    int64_t vol = 0;
    *out = 0;
    /* "" is Triton's default of both (its load and store take cache_modifier="" and eviction_policy=""): no hint */
    if (c->str[i] && *c->str[i]) {
        for (int k = 0; k < nok && !cop; k++)
            if (!strcmp(c->str[i], ok[k]))
                for (int j = 1; j < COP_COUNT; j++)
                    if (!strcmp(tir_cop_names[j], ok[k])) cop = j;
        if (!cop) {
            Str list = {0};
            for (int k = 0; k < nok; k++) str_printf(&list, "%s\"%s\"", k ? (k == nok - 1 ? " or " : ", ") : "", ok[k]);
            diag_error(c->g->d, c->loc[i], "unknown cache_modifier \"%s\" of '%s': expected %s", c->str[i], c->bi->name, list.buf);
            str_free(&list);
            return false;
        }
    }
    if (c->str[i + 1] && *c->str[i + 1]) {
        for (int k = 1; k < EVICT_COUNT && !ev; k++)
            if (!strcmp(c->str[i + 1], tir_evict_names[k])) ev = k;
        if (!ev) {
            diag_error(c->g->d, c->loc[i + 1], "unknown eviction_policy \"%s\" of '%s': expected \"evict_normal\", \"evict_first\", "
                       "\"evict_last\", \"evict_unchanged\" or \"no_allocate\"", c->str[i + 1], c->bi->name);
            return false;
        }
    }
    if (!store && has(c, i + 2) && !bi_ct_flag(c, i + 2, "volatile", &vol)) return false;
    for (int k = 0; k < 2; k++) { /* the cache modifier under volatile, the eviction policy under either */
        int *drop = k == 0 ? &cop : &ev;
        if (!*drop || !(vol || (k == 1 && cop))) continue;
        diag_warning(c->g->d, c->loc[i + k], "'%s' takes one of cache_modifier, eviction_policy and volatile=true (PTX has no "
                     "instruction with two of them): %s \"%s\" is dropped, %s kept", c->bi->name,
                     k == 0 ? "cache_modifier" : "eviction_policy", c->str[i + k], vol ? "volatile=true" : "the cache_modifier");
        *drop = 0;
    }
    *out = (uint8_t)(cop | ev << 3 | (vol ? TIR_CACHE_VOLATILE : 0));
    return true;
}

Val bi_load(Call *c) {
    Gen *g = c->g;
    if (!bi_block_ptr_access(c, false) || !bi_ptr_arg(c, 0)) return val_err();
    const Type *pt = c->v[0].t;
    const Type *res = tir_type(g->m, pt->pointee->dt, pt->rank, pt->shape, pt->pointee->pointee, NULL);
    ValueId ops[3] = {c->v[0].v};
    int n = 1;
    if (!mask_arg(c, 1, pt, &ops[1])) return val_err();
    if (ops[1]) n = 2;
    if (has(c, 2) && !has(c, 1)) { /* it was dropped: every lane loaded, out of bounds too, where padding was meant */
        diag_error(g->d, c->loc[2], "'other' of 'load' without a mask: it fills the lanes the mask turns off, so with no "
                   "mask it does nothing (give the mask: load(ptr, mask, other), as Triton requires)");
        return val_err();
    }
    if (has(c, 2)) {
        Val o = c->v[2];
        if (!val_is_value(g, o, c->loc[2])) return val_err();
        if (o.k == V_RT && tir_elem(g->m, o.t) != pt->pointee) {
            if (o.t->dt == DT_PTR || pt->pointee->dt == DT_PTR) {
                diag_error(g->d, c->loc[2], "'other' of 'load' has type '%s' but the loaded values are '%s'", gen_type_name(g, o.t),
                           gen_type_name(g, pt->pointee));
                return val_err();
            }
            o = gen_cast(g, o, pt->pointee->dt, c->loc[2]); /* a number converts, as Triton casts `other` */
            if (o.k == V_ERR) return val_err();
        }
        if (o.k == V_CT && pt->pointee->dt == DT_PTR) {
            diag_error(g->d, c->loc[2], "'other' of 'load' must be a pointer");
            return val_err();
        }
        if (o.k == V_CT) gen_warn_const_conversion(g, o, pt->pointee->dt, c->loc[2], "'other' of 'load'");
        if (o.k == V_CT) o = gen_ct_cast_into(g, o, pt->pointee->dt, c->loc[2], "'other' of 'load'");
        int r;
        int32_t s[TIR_MAX_RANK];
        if (!gen_broadcast_shapes(g, val_rank(o), val_shape(o), pt->rank, pt->shape, &r, s, c->loc[2])) return val_err();
        if (r != pt->rank || memcmp(s, pt->shape, sizeof(int32_t) * (size_t)r)) {
            diag_error(g->d, c->loc[2], "'other' of shape %s does not fit pointer shape %s", gen_shape_str(g, val_rank(o), val_shape(o)),
                       gen_shape_str(g, pt->rank, pt->shape));
            return val_err();
        }
        if (n == 2) ops[n++] = gen_coerce(g, o, res->dt, res->pointee, res->rank, res->shape, c->loc[2]);
    }
    uint8_t cache;
    if (!cache_args(c, 3, false, &cache)) return val_err();
    Inst *in = gen_emit_inst(g, c->node->loc, OP_LOAD, ops, n, res);
    in->a.cache = cache;
    return val_rt(g, in->res[0]);
}

Val bi_store(Call *c) {
    Gen *g = c->g;
    if (!bi_block_ptr_access(c, true) || !bi_ptr_arg(c, 0)) return val_err();
    const Type *pt = c->v[0].t;
    ValueId ops[3] = {c->v[0].v};
    uint8_t cache;
    if (!stored_value(c, 1, pt, &ops[1]) || !mask_arg(c, 2, pt, &ops[2]) || !cache_args(c, 3, true, &cache)) return val_err();
    gen_emit_inst(g, c->node->loc, OP_STORE, ops, ops[2] ? 3 : 2, NULL)->a.cache = cache;
    return (Val){.k = V_VOID};
}

/* String argument i naming one of names[0..n) (names[0], the default, when absent). */
static bool enum_arg(Call *c, int i, const char *what, const char *const *names, int n, uint8_t *out) {
    *out = 0;
    if (!c->str[i]) return true;
    for (int k = 0; k < n; k++)
        if (!strcmp(c->str[i], names[k])) {
            *out = (uint8_t)k;
            return true;
        }
    Str list = {0};
    for (int k = 0; k < n; k++) str_printf(&list, "%s\"%s\"", k ? (k == n - 1 ? " or " : ", ") : "", names[k]);
    diag_error(c->g->d, c->loc[i], "unknown %s \"%s\" of '%s': expected %s", what, c->str[i], c->bi->name, list.buf);
    str_free(&list);
    return false;
}

/* sem= (argument i) of an atomic load, store or poll: "relaxed" or `other` (acquire or release), the
 * default; scope= (i + 1): "gpu" (the default), "cta" or "sys". */
static bool sem_scope_args(Call *c, int i, MemSem other, uint8_t *sem, uint8_t *scope) {
    *sem = (uint8_t)other;
    if (c->str[i]) {
        if (strcmp(c->str[i], tir_sem_names[SEM_RELAXED]) && strcmp(c->str[i], tir_sem_names[other])) {
            diag_error(c->g->d, c->loc[i], "unknown memory ordering \"%s\" of '%s': expected \"%s\" or \"relaxed\"", c->str[i],
                       c->bi->name, tir_sem_names[other]);
            return false;
        }
        if (!strcmp(c->str[i], tir_sem_names[SEM_RELAXED])) *sem = SEM_RELAXED;
    }
    return enum_arg(c, i + 1, "memory scope", tir_scope_names, SCOPE_COUNT, scope);
}

/* atomic_load(ptr, mask, sem="acquire", scope="gpu") and atomic_store(ptr, value, mask, sem="release",
 * scope="gpu"), Triton's: each element one `ld.SEM.SCOPE.global` / `st.SEM.SCOPE.global` (sem relaxed,
 * or acquire for a load and release for a store); a masked-off element loads 0. */
Val bi_atomic_access(Call *c, bool store) {
    Gen *g = c->g;
    if (!bi_ptr_arg(c, 0)) return val_err();
    const Type *pt = c->v[0].t;
    int mi = store ? 2 : 1;
    uint8_t sem, scope;
    if (!sem_scope_args(c, mi + 1, store ? SEM_RELEASE : SEM_ACQUIRE, &sem, &scope)) return val_err();
    ValueId ops[3] = {c->v[0].v};
    Inst *in;
    if (store) {
        if (!stored_value(c, 1, pt, &ops[1]) || !mask_arg(c, 2, pt, &ops[2])) return val_err();
        in = gen_emit_inst(g, c->node->loc, OP_STORE, ops, ops[2] ? 3 : 2, NULL);
    } else {
        if (!mask_arg(c, 1, pt, &ops[1])) return val_err();
        in = gen_emit_inst(g, c->node->loc, OP_LOAD, ops, ops[1] ? 2 : 1,
                           tir_type(g->m, pt->pointee->dt, pt->rank, pt->shape, pt->pointee->pointee, NULL));
    }
    in->a.cache = TIR_CACHE_STRONG;
    in->a.sem = sem;
    in->a.scope = scope;
    return store ? (Val){.k = V_VOID} : val_rt(g, in->res[0]);
}

/* atomic_OP(ptr, value, mask, sem, scope) and atomic_cas(ptr, cmp, value, mask, sem, scope):
 * the old values, shaped like ptr (a scalar for a scalar pointer). */
Val bi_atomic(Call *c) {
    Gen *g = c->g;
    if (!bi_ptr_arg(c, 0)) return val_err();
    const Type *pt = c->v[0].t;
    bool cas = c->bi->op == OP_ATOMIC_CAS;
    DType dt = pt->pointee->dt;
    int red = c->bi->red;
    bool bitwise = !cas && (red == RED_AND || red == RED_OR || red == RED_XOR);
    bool half = dt == DT_F16 || dt == DT_BF16;
    if (dt == DT_PTR || dtype_is_storage(dt) || dt == DT_I1 || (bitwise && dtype_is_float(dt)) ||
        (dtype_bits(dt) < 32 && !(half && !cas && red == RED_SUM))) {
        diag_error(g->d, c->loc[0], "'%s' is not supported on '%s'%s", c->bi->name, gen_type_name(g, pt),
                   half ? " (f16 and bf16 take atomic_add only)" : bitwise ? " (it needs integers)" : " (use 32- or 64-bit elements)");
        return val_err();
    }
    const Type *res = tir_type(g->m, dt, pt->rank, pt->shape, NULL, NULL);
    int mi = cas ? 3 : 2;
    uint8_t sem, scope;
    if (!enum_arg(c, mi + 1, "memory ordering", tir_sem_names, SEM_COUNT, &sem) ||
        !enum_arg(c, mi + 2, "memory scope", tir_scope_names, SCOPE_COUNT, &scope))
        return val_err();
    ValueId ops[4] = {c->v[0].v};
    if (!stored_value(c, 1, pt, &ops[1]) || (cas && !stored_value(c, 2, pt, &ops[2])) || !mask_arg(c, mi, pt, &ops[mi]))
        return val_err();
    Inst *in = gen_emit_inst(g, c->node->loc, c->bi->op, ops, ops[mi] ? mi + 1 : mi, res);
    if (!cas) in->a.ival2 = red;
    in->a.sem = sem;
    in->a.scope = scope;
    return val_rt(g, in->res[0]);
}


/* atomic_poll(pointer, expected_value, sem="acquire", scope="gpu", timeout_ns=None), Triton 3.9's: a
 * spin on each element until it equals expected_value (broadcast to the pointers' shape) or
 * timeout_ns (a non-negative compile-time integer or a run-time scalar integer, as u64) of the
 * global timer have passed; i1 shaped like pointer, true where the value was seen.  One op,
 * lowered to a load loop per element (llvm_memory.c): a loop of atomic_load and a program-wide
 * reduction would need every thread to take the same iterations, which per-thread timer reads
 * and loads do not give. */
Val bi_atomic_poll(Call *c) {
    Gen *g = c->g;
    if (!bi_ptr_arg(c, 0)) return val_err();
    const Type *pt = c->v[0].t;
    DType dt = pt->pointee->dt;
    int bits = dtype_bits(dt);
    if (!dtype_is_int(dt) || dt == DT_I1 || (bits != 16 && bits != 32 && bits != 64)) {
        diag_error(g->d, c->loc[0], "'atomic_poll' polls 16-, 32- or 64-bit integers, got '%s'", gen_type_name(g, pt));
        return val_err();
    }
    uint8_t sem, scope;
    ValueId ops[3] = {c->v[0].v};
    if (!sem_scope_args(c, 2, SEM_ACQUIRE, &sem, &scope) || !stored_value(c, 1, pt, &ops[1])) return val_err();
    int n = 2;
    if (has(c, 4)) {
        Val t = c->v[4];
        if (!val_is_value(g, t, c->loc[4])) return val_err();
        DType tt = val_dtype(t);
        if (!dtype_is_int(tt) || tt == DT_I1 || tt == DT_PTR || val_rank(t)) {
            diag_error(g->d, c->loc[4], "timeout_ns of 'atomic_poll' must be a scalar integer (nanoseconds), got '%s'",
                       t.k == V_RT ? gen_type_desc(g, t.t) : gen_val_type_name(g, t));
            return val_err();
        }
        if (t.k == V_CT && dtype_is_signed(tt) && t.i < 0) {
            diag_error(g->d, c->loc[4], "timeout_ns of 'atomic_poll' must be non-negative, got %lld", (long long)t.i);
            return val_err();
        }
        ops[n++] = gen_materialize(g, gen_cast(g, t, DT_U64, c->loc[4]), c->loc[4]);
    }
    Inst *in = gen_emit_inst(g, c->node->loc, OP_ATOMIC_POLL, ops, n, tir_type(g->m, DT_I1, pt->rank, pt->shape, NULL, NULL));
    in->a.sem = sem;
    in->a.scope = scope;
    return val_rt(g, in->res[0]);
}

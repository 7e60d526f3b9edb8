/* convert.c - constants and values into types: whether a constant fits, the warnings when one does not (a
 * store, a declared type), coercion to an operand type (gen_coerce: constants, casts, splats, broadcasts),
 * materializing constants, and the casts of `as`, cast() and bitcast() (gen_cast, gen_convert).  The
 * operators that call these are in gen.c. */
#include "gen.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A compile-time value as an OP_CONST of type t (a float rounded once to t's format). */
static ValueId ct_const(Gen *g, Val c, const Type *t, Loc loc) {
    g->b.loc = loc;
    if (dtype_is_float(t->dt)) return tir_const_float(&g->b, t, dtype_round_float(gen_ct_to_double_for(c, t->dt), t->dt));
    Val w = gen_ct_cast(c, t->dt);
    return tir_const_int(&g->b, t, w.i);
}

/* Whether an integer constant's value has dt's bits as a signed or an unsigned number (so -1 and 0xFFFFFFFF
 * both suit a u32 or an i32, 5000000000 neither). */
static bool ct_fits(Val v, DType dt) {
    int b = dtype_bits(dt);
    if (b >= 64) return true;
    if (!dtype_is_signed(v.dt) && dtype_bits(v.dt) == 64 && v.i < 0) return false; /* a u64 past 2^63 */
    return v.i >= -((int64_t)1 << (b - 1)) && v.i <= ((int64_t)1 << b) - 1;
}

/* An integer constant as a message shows it: a u64 past 2^63 unsigned (9223372036854775808 was shown negative) */
static void ct_int_text(Val v, char out[32]) {
    if (!dtype_is_signed(v.dt) && v.i < 0) snprintf(out, 32, "%llu", (unsigned long long)v.i);
    else snprintf(out, 32, "%lld", (long long)v.i);
}

/* A weak integer constant that takes the integer type dt as an operand of a promotion (an arithmetic operator, a
 * comparison, minimum, where, ...) must be a value of dt, as Triton's _cast_to_computation_type asks: x_i32 +
 * 3000000000, x_i8 < 200 and x_u32 + -1 are errors (the constant would change value, and the comparison or the
 * sum would then not be what is written).  bits (&, |, ^): a bit pattern of the width is enough (x_i32 &
 * 0xFFFFFFFF).  A held constant converts as a typed scalar does, by a cast. */
bool gen_check_weak_operand(Gen *g, Val v, DType dt, bool bits, Loc loc) {
    if (v.k != V_CT || v.held || !dtype_is_int(v.dt) || v.dt == DT_I1 || !dtype_is_int(dt) || dt == DT_I1) return true;
    bool big = !dtype_is_signed(v.dt) && v.i < 0; /* a u64 past 2^63 */
    int b = dtype_bits(dt);
    bool ok;
    if (bits) ok = ct_fits(v, dt);
    else if (dtype_is_signed(dt)) ok = !big && (b >= 64 || (v.i >= -((int64_t)1 << (b - 1)) && v.i < ((int64_t)1 << (b - 1))));
    else ok = big || (v.i >= 0 && (b >= 64 || v.i < ((int64_t)1 << b)));
    if (ok) return true;
    char num[32];
    ct_int_text(v, num);
    diag_error(g->d, loc, "the constant %s is out of range for '%s', the type it takes here, as in Triton (cast the other "
               "operand, or the constant with 'as', to say which is meant)", num, dtype_name(dt));
    return false;
}

/* A weak integer takes the other operand's type: one that does not fit it would wrap silently, so it is an error. */
static bool ct_check_fits(Gen *g, Val v, DType dt, Loc loc) {
    if (!dtype_is_int(v.dt) || v.dt == DT_I1 || !dtype_is_int(dt) || dt == DT_I1 || ct_fits(v, dt)) return true;
    char num[32];
    ct_int_text(v, num);
    diag_error(g->d, loc, "the constant %s does not fit '%s', the type it takes here (cast the other operand, or "
               "the constant with 'as', to say which is meant)", num, dtype_name(dt));
    return false;
}

Val gen_ct_cast_into(Gen *g, Val v, DType to, Loc loc, const char *what) {
    if (v.k != V_CT || !dtype_is_int(v.dt) || v.dt == DT_I1 || !dtype_is_int(to) || to == DT_I1 || v.dt == to) return v;
    Val r = gen_ct_cast(v, to);
    r.held = v.held;
    if (!ct_fits(v, to)) {
        bool big = !dtype_is_signed(v.dt) && v.i < 0;
        char num[32];
        if (big) snprintf(num, sizeof num, "%llu", (unsigned long long)v.i);
        else snprintf(num, sizeof num, "%lld", (long long)v.i);
        diag_warning(g->d, loc, "%s converts the constant %s to '%s' by a cast, as Triton does, which wraps it to %lld "
                     "(write the '%s' value meant, or cast the constant with 'as' to say the wrap is meant)", what, num,
                     dtype_name(to), (long long)r.i, dtype_name(to));
    }
    return r;
}

/* A written constant stored (or a masked load's `other`, or full's value) converts by a cast, as Triton's does: a
 * float that is no integer of an integer type, or a finite number past a float type's range (1e10 as f16), changes
 * value there silently, so it is warned about, as an integer that wraps is (gen_ct_cast_into).  A held one
 * (`let c = 1.5;`) is a run-time scalar to Triton: no warning. */
/* x as written: an integer below 2^53 in full (-70000), else the fewest significant digits that read back as x
 * (1e+39, not 9.9999999999999994e+38); in the arena. */
static const char *float_text(Gen *g, double x) {
    char buf[40];
    if (x == trunc(x) && fabs(x) < 0x1p53) return arena_printf(g->a, "%.0f", x);
    void *loc = c_numeric_push();
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, x);
        if (c_strtod(buf, NULL) == x) break;
    }
    c_numeric_pop(loc);
    return arena_strdup(g->a, buf);
}

/* A written finite constant that the float type `to` rounds to an infinity: its text and to's largest value's
 * (in the arena); false for any other value or type. */
static bool const_overflows(Gen *g, Val v, DType to, const char **xs, const char **maxs) {
    if (v.k != V_CT || v.held || v.dt == DT_I1 || !dtype_is_float(to)) return false;
    double x = gen_ct_to_double_for(v, to), r = dtype_round_float(x, to);
    DTypeFloat ff;
    if (!isfinite(x) || isfinite(r) || !dtype_float_format(to, &ff)) return false;
    *xs = float_text(g, x);
    *maxs = float_text(g, ff.max);
    return true;
}

void gen_warn_const_conversion(Gen *g, Val v, DType to, Loc loc, const char *what) {
    if (v.k != V_CT || v.held || v.dt == DT_I1) return;
    if (dtype_is_float(to)) {
        const char *xs, *maxs;
        if (const_overflows(g, v, to, &xs, &maxs))
            diag_warning(g->d, loc, "%s converts the constant %s to '%s' by a cast, as Triton does, which overflows it to %s "
                         "(its largest value is %s)", what, xs, dtype_name(to), *xs == '-' ? "-inf" : "inf", maxs);
        return;
    }
    if (!dtype_is_float(v.dt) || !dtype_is_int(to) || to == DT_I1) return;
    CtExact e = gen_ct_exact_in(v, to);
    if (e == CT_EXACT) return;
    diag_warning(g->d, loc, "%s converts the constant %s to '%s' by a cast, as Triton does, which %s (write the '%s' value meant, "
                 "or cast the constant with 'as' to say the conversion is meant)", what, float_text(g, v.f), dtype_name(to),
                 e == CT_RANGE ? "cannot hold it" : isfinite(v.f) ? "drops its fraction" : "has no such value", dtype_name(to));
}

ValueId gen_coerce(Gen *g, Val v, DType dt, const Type *pointee, int rank, const int32_t *shape, Loc loc) {
    Module *m = g->m;
    if (v.k == V_CT) {
        ct_check_fits(g, v, dt, loc);
        return ct_const(g, v, tir_type(m, dt, rank, shape, NULL, NULL), loc);
    }
    ValueId x = v.v;
    const Type *t = v.t;
    if (t->dt != dt) {
        t = tir_with_dtype(m, t, dt);
        x = gen_emit(g, loc, OP_CAST, &x, 1, t);
    }
    if (dt == DT_PTR) pointee = t->pointee;
    const Type *full = tir_type(m, dt, rank, shape, pointee, NULL);
    if (t == full) return x;
    if (t->rank == 0) return gen_emit(g, loc, OP_SPLAT, &x, 1, full);
    while (t->rank < rank) {
        int32_t s[TIR_MAX_RANK] = {1};
        for (int i = 0; i < t->rank; i++) s[i + 1] = t->shape[i];
        t = tir_type(m, dt, t->rank + 1, s, pointee, NULL);
        Inst *e = gen_emit_inst(g, loc, OP_EXPAND_DIMS, &x, 1, t);
        e->a.ival = 0;
        x = e->res[0];
    }
    if (t != full) x = gen_emit(g, loc, OP_BROADCAST, &x, 1, full);
    return x;
}

/* `let x: f16 = 1e10;` (a variable's, parameter's or constant's declared float type): a written finite constant
 * that becomes an infinity there is warned about, as a store of it is (gen_warn_const_conversion). */
void gen_warn_declared_overflow(Gen *g, Val v, DType to, Loc loc, const char *what) {
    const char *xs, *maxs;
    if (const_overflows(g, v, to, &xs, &maxs))
        diag_warning(g->d, loc, "'%s' is %s, but its value %s overflows it to %s (its largest value is %s)", what, dtype_name(to), xs,
                     *xs == '-' ? "-inf" : "inf", maxs);
}

ValueId gen_materialize(Gen *g, Val v, Loc loc) {
    if (v.k == V_CT) return ct_const(g, v, tir_scalar(g->m, v.dt), loc);
    return v.v;
}

Val gen_cast(Gen *g, Val v, DType to, Loc loc) {
    if (!val_is_value(g, v, loc)) return val_err();
    if (v.k == V_CT) {
        Val r = gen_ct_cast(v, to);
        r.held = v.held;
        return r;
    }
    if (v.t->dt == to) return v;
    if (v.t->dt == DT_PTR || to == DT_PTR) {
        diag_error(g->d, loc, "cannot cast '%s' to '%s'", gen_type_name(g, v.t), dtype_name(to));
        return val_err();
    }
    return val_rt(g, gen_emit(g, loc, OP_CAST, &v.v, 1, tir_with_dtype(g->m, v.t, to)));
}

/* `x as T`, `cast(x, T, bitcast)`, `bitcast(x, T)`: T an element type (a pointer type too).
 *   - pointers: to another pointer type (same address), to and from 64-bit integers (the
 *     address; narrower integers convert through i64);
 *   - bitcast: the same bits in a type of the same width (i1 only to i1);
 *   - otherwise a numeric conversion (gen_cast). */
Val gen_convert(Gen *g, Val v, const Type *t, bool bitcast, Loc loc) {
    if (!val_is_value(g, v, loc)) return val_err();
    DType from = val_dtype(v), to = t->dt;
    bool ptrs = from == DT_PTR || to == DT_PTR;
    if (!bitcast && !ptrs) return gen_cast(g, v, to, loc);
    if (v.k == V_CT) { /* materialize: a null or computed address, bits of a constant */
        if (to == DT_PTR && !dtype_is_int(from)) goto bad;
        /* the bits of a constant are those of the typed scalar Triton's to_tensor makes of it: 0xFF800000 is a u32
         * (-inf as f32), 1e300 an f64, 7 an i32 (so bitcast(7, *f32) changes the width, as a run-time i32's does;
         * `7 as *f32` widens it) */
        if (to != DT_PTR || bitcast) v = gen_hold(v);
        v = val_rt(g, gen_materialize(g, to == DT_PTR && !bitcast ? gen_cast(g, v, DT_I64, loc) : v, loc));
        from = v.t->dt;
    }
    if (from == DT_PTR && to == DT_PTR) {
        if (v.t->pointee == t->pointee) return v;
        return val_rt(g, gen_emit(g, loc, OP_BITCAST, &v.v, 1, tir_type(g->m, DT_PTR, v.t->rank, v.t->shape, t->pointee, NULL)));
    }
    if (to == DT_PTR) { /* integer -> pointer */
        if (!dtype_is_int(from) || from == DT_I1) goto bad;
        if (dtype_bits(from) != 64) {
            if (bitcast) goto width;
            v = gen_cast(g, v, dtype_is_signed(from) ? DT_I64 : DT_U64, loc);
        }
        return val_rt(g, gen_emit(g, loc, OP_BITCAST, &v.v, 1, tir_type(g->m, DT_PTR, v.t->rank, v.t->shape, t->pointee, NULL)));
    }
    if (from == DT_PTR) { /* pointer -> integer */
        if (!dtype_is_int(to) || to == DT_I1) goto bad;
        if (bitcast && dtype_bits(to) != 64) goto width;
        Val a = val_rt(g, gen_emit(g, loc, OP_BITCAST, &v.v, 1, tir_with_dtype(g->m, v.t, DT_I64)));
        return gen_cast(g, a, to, loc);
    }
    if (from == to) return v;
    if (dtype_bits(from) != dtype_bits(to) || from == DT_I1 || to == DT_I1) goto width;
    return val_rt(g, gen_emit(g, loc, OP_BITCAST, &v.v, 1, tir_with_dtype(g->m, v.t, to)));
width:
    diag_error(g->d, loc, "bitcast from '%s' (%d bits) to '%s' (%d bits) changes the width", gen_val_type_name(g, v),
               from == DT_PTR ? 64 : dtype_bits(from), gen_type_name(g, t), to == DT_PTR ? 64 : dtype_bits(to));
    return val_err();
bad:
    diag_error(g->d, loc, "cannot cast '%s' to '%s'%s", gen_val_type_name(g, v), gen_type_name(g, t),
               to == DT_PTR || from == DT_PTR ? " (pointers convert to and from integers and other pointer types)" : "");
    return val_err();
}

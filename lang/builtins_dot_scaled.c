/* builtins_dot_scaled.c - dot_scaled, Triton's microscaling dot: operands of f8 or packed e2m1
 * codes with e8m0 block scales, widened exactly to bf16, scaled by their blocks' powers of two and
 * handed to dot (builtins.c's bi_dot).  builtins.c dispatches here before binding arguments, since
 * the formats decide how each operand is read. */
#include "builtins.h"

#include <math.h>
#include <string.h>

/* dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, fast_math, lhs_k_pack,
 * rhs_k_pack, out_dtype), as Triton's tl.dot_scaled for the OCP microscaling formats: lhs [M, K] and
 * rhs [K, N] of "e4m3" or "e5m2" codes (the f8 types, or 8-bit integers holding the codes), or of
 * "e2m1" codes packed two to a byte, the first in the low nibble (lhs [M, K/2] and rhs [K/2, N]; a
 * false lhs_k_pack / rhs_k_pack packs along M / N instead: [M/2, K], [K, N/2]), with e8m0 scales
 * (8-bit integers) lhs_scale [M, K/32] and rhs_scale [N, K/32], one per 32 elements along K:
 * value = code * 2^(scale - 127), scale 255 a NaN; a None scale is 1.  "bf16" and "fp16" operands
 * take no scale.  Composed: a coded operand is widened exactly to bf16 (f8 codes have at most 3
 * mantissa bits, e2m1 one) and multiplied by its block's power of two (exact in bf16, which has f32's
 * exponent range), then a plain dot.  fast_math is accepted and changes nothing (this is exact). */
static Val scaled_operand(Gen *g, const Node *xn, const Node *sn, const Node *fn, bool rhs, bool k_pack, Val *out) {
    enum { E4M3, E5M2, BF16, FP16, E2M1, NFMT };
    static const char *const fmts[NFMT] = {"e4m3", "e5m2", "bf16", "fp16", "e2m1"};
    static const DType dts[NFMT] = {DT_F8E4M3, DT_F8E5M2, DT_BF16, DT_F16, DT_U8};
    const char *side = rhs ? "rhs" : "lhs";
    if (fn->kind != N_STR) {
        diag_error(g->d, fn->loc, "%s_format of 'dot_scaled' must be a string literal: \"e2m1\", \"e4m3\", \"e5m2\", \"bf16\" or \"fp16\"",
                   side);
        return val_err();
    }
    int f = -1;
    for (int k = 0; k < NFMT; k++)
        if (!strcmp(fn->name, fmts[k])) f = k;
    if (f < 0) {
        diag_error(g->d, fn->loc, "unknown %s_format \"%s\" of 'dot_scaled': expected \"e2m1\", \"e4m3\", \"e5m2\", \"bf16\" or \"fp16\"",
                   side, fn->name);
        return val_err();
    }
    Val x = gen_expr(g, xn);
    if (!val_is_value(g, x, xn->loc)) return val_err();
    bool bytes = x.k == V_RT && dtype_is_int(x.t->dt) && dtype_bits(x.t->dt) == 8; /* codes in 8-bit integers */
    if (x.k != V_RT || x.t->rank != 2 || (x.t->dt != dts[f] && !((f <= E5M2 || f == E2M1) && bytes))) {
        diag_error(g->d, xn->loc, "%s of 'dot_scaled' must be a 2-D tensor of %s for format \"%s\", got '%s'", side,
                   f == E2M1 ? "8-bit integers (two codes a byte)" : f <= E5M2 ? (f ? "f8e5m2 (or 8-bit integers)" : "f8e4m3 (or 8-bit integers)")
                                                                 : dtype_name(dts[f]),
                   fmts[f], gen_val_type_name(g, x));
        return val_err();
    }
    if (f <= E5M2 && bytes) x = gen_convert(g, x, tir_scalar(g->m, dts[f]), true, xn->loc);
    if (f == E2M1) {
        int dim = rhs == k_pack ? 0 : 1; /* lhs [M, K/2] or [M/2, K]; rhs [K/2, N] or [K, N/2] */
        x = compose_unpack_e2m1(g, x, dim, xn->loc);
    }
    if (x.k == V_ERR) return val_err();
    Val sc = gen_expr(g, sn);
    if (sc.k == V_ERR) return val_err();
    if (sc.k == V_NONE) return *out = x, (Val){.k = V_VOID};
    if (f == BF16 || f == FP16) {
        diag_error(g->d, sn->loc, "%s_scale of 'dot_scaled' must be None for format \"%s\"", side, fmts[f]);
        return val_err();
    }
    int32_t K = x.t->shape[rhs ? 0 : 1], R = x.t->shape[rhs ? 1 : 0];
    if (!val_is_value(g, sc, sn->loc)) return val_err();
    if (sc.k != V_RT || sc.t->rank != 2 || dtype_bits(sc.t->dt) != 8 || !dtype_is_int(sc.t->dt) || K % 32 ||
        sc.t->shape[0] != R || sc.t->shape[1] != K / 32) {
        diag_error(g->d, sn->loc, "%s_scale of 'dot_scaled' must be an [%d, %d] tensor of 8-bit integers (e8m0: one per 32 of K = %d), "
                   "got '%s'", side, R, K / 32, K, gen_val_type_name(g, sc));
        return val_err();
    }
    Loc loc = sn->loc;
    /* 2^(s - 127) as f32 bits s << 23; s = 0 is the subnormal 2^-127, s = 255 a NaN */
    Val si = gen_binop(g, TK_AMP, gen_cast(g, sc, DT_I32, loc), val_ct_int(255, DT_I32), loc);
    Val pw = gen_convert(g, gen_binop(g, TK_SHL, si, val_ct_int(23, DT_I32), loc), tir_scalar(g->m, DT_F32), true, loc);
    if (si.k == V_ERR || pw.k == V_ERR) return val_err();
    const Type *pt = pw.t;
    ValueId sel[3];
    Val z = gen_binop(g, TK_EQEQ, si, val_ct_int(0, DT_I32), loc), nan = gen_binop(g, TK_EQEQ, si, val_ct_int(255, DT_I32), loc);
    sel[0] = z.v, sel[1] = gen_coerce(g, val_ct_float(0x1p-127, DT_F32), DT_F32, NULL, 2, pt->shape, loc), sel[2] = pw.v;
    pw = val_rt(g, gen_emit(g, loc, OP_SELECT, sel, 3, pt));
    sel[0] = nan.v, sel[1] = gen_coerce(g, val_ct_float(NAN, DT_F32), DT_F32, NULL, 2, pt->shape, loc), sel[2] = pw.v;
    pw = val_rt(g, gen_emit(g, loc, OP_SELECT, sel, 3, pt));
    /* blocks of 32 along K: lhs [M, K/32, 32] * pw[:, :, None]; rhs [K/32, 32, N] * trans(pw)[:, None, :] */
    if (rhs) {
        int32_t ts[2] = {K / 32, R};
        Inst *tr = gen_emit_inst(g, loc, OP_TRANS, &pw.v, 1, tir_type(g->m, DT_F32, 2, ts, NULL, NULL));
        tr->a.perm[0] = 1, tr->a.perm[1] = 0;
        pw = gen_expand_dims(g, val_rt(g, tr->res[0]), 1, loc);
    } else {
        pw = gen_expand_dims(g, pw, 2, loc);
    }
    int32_t bs[3] = {R, K / 32, 32}; /* lhs [M, K/32, 32] */
    if (rhs) bs[0] = K / 32, bs[1] = 32, bs[2] = R; /* rhs [K/32, 32, N] */
    Val w = gen_cast(g, x, DT_BF16, loc);
    Val blocks = val_rt(g, gen_emit(g, loc, OP_RESHAPE, &w.v, 1, tir_type(g->m, DT_BF16, 3, bs, NULL, NULL)));
    Val prod = gen_cast(g, gen_binop(g, TK_STAR, blocks, pw, loc), DT_BF16, loc);
    if (pw.k == V_ERR || prod.k == V_ERR) return val_err();
    *out = val_rt(g, gen_emit(g, loc, OP_RESHAPE, &prod.v, 1, tir_type(g->m, DT_BF16, 2, x.t->shape, NULL, NULL)));
    return (Val){.k = V_VOID};
}

/* A compile-time bool argument of dot_scaled (fast_math, lhs_k_pack, rhs_k_pack); def when absent. */
static bool scaled_flag(Gen *g, const Node *n, const char *name, bool def, bool *out) {
    *out = def;
    if (!n) return true;
    Val v = gen_expr(g, n);
    if (v.k == V_ERR) return false;
    if (v.k != V_CT || !dtype_is_int(v.dt)) {
        diag_error(g->d, n->loc, "%s of 'dot_scaled' must be a compile-time bool, got '%s'", name, gen_val_type_name(g, v));
        return false;
    }
    *out = v.i != 0;
    return true;
}

Val bi_dot_scaled(Gen *g, const Node *node) {
    static const char *const pn[] = {"lhs",  "lhs_scale", "lhs_format", "rhs",        "rhs_scale", "rhs_format",
                                     "acc",  "fast_math", "lhs_k_pack", "rhs_k_pack", "out_dtype"};
    enum { NP = sizeof pn / sizeof pn[0] };
    const Node *arg[NP];
    bool kw[NP];
    if (!gen_bind_args(g, node, "dot_scaled", pn, NP, 6, arg, kw)) return val_err();
    /* out_dtype as the eighth positional argument (this language's order before Triton's fast_math and
     * k_pack flags came): a type there is out_dtype */
    if (arg[7] && !kw[7] && !arg[8] && !arg[10]) {
        Val t = gen_expr(g, arg[7]);
        if (t.k == V_ERR) return val_err();
        if (t.k == V_DTYPE) arg[10] = arg[7], arg[7] = NULL;
    }
    bool fast_math, k_pack[2];
    if (!scaled_flag(g, arg[7], "fast_math", false, &fast_math) || !scaled_flag(g, arg[8], "lhs_k_pack", true, &k_pack[0]) ||
        !scaled_flag(g, arg[9], "rhs_k_pack", true, &k_pack[1]))
        return val_err();
    Val ops[2];
    for (int s = 0; s < 2; s++)
        if (scaled_operand(g, arg[3 * s], arg[3 * s + 1], arg[3 * s + 2], s == 1, k_pack[s], &ops[s]).k == V_ERR) return val_err();
    if (ops[0].t->dt != ops[1].t->dt) { /* a scaled f8 side is bf16 now: the other side too */
        for (int s = 0; s < 2; s++)
            if (ops[s].t->dt != DT_BF16) ops[s] = gen_cast(g, ops[s], DT_BF16, arg[3 * s]->loc);
    }
    Call c = {.g = g, .bi = bi_dot_entry(), .node = node};
    c.arg[0] = arg[0], c.arg[1] = arg[3], c.arg[2] = arg[6], c.arg[5] = arg[10];
    c.loc[0] = arg[0]->loc, c.loc[1] = arg[3]->loc;
    c.v[0] = ops[0], c.v[1] = ops[1];
    for (int k = 2; k < MAX_BI_PARAMS; k++) c.v[k] = (Val){.k = V_NONE};
    if (arg[6]) c.loc[2] = arg[6]->loc, c.v[2] = gen_expr(g, arg[6]);
    if (arg[10]) c.loc[5] = arg[10]->loc, c.v[5] = gen_expr(g, arg[10]);
    if (c.v[2].k == V_ERR || c.v[5].k == V_ERR) return val_err();
    return bi_dot(&c);
}

/* tir_verify.c - structural and type invariants of Tile IR (QBE's ssacheck).
 *
 * Runs after every pass in debug and test builds.  Per function:
 *
 *   1. Decide whether layouts are assigned: some tensor value defined in
 *      the function (argument, result, block argument) has a layout (no
 *      walk when no value in the function's table has one).
 *   2. Walk the blocks in program order keeping a scope stack of visible
 *      values: kernel arguments, then each block's arguments and results in
 *      order; a region's values leave scope when it closes, and an
 *      instruction's results enter scope after its regions.  A use of a value
 *      not in scope is an error (use before definition, or a value defined
 *      in a region that does not enclose the use).
 *   3. For every instruction: the opcode is valid; operand/result/region
 *      counts fit tir_op_info (plus the variadic ranges in `arity` below);
 *      every value it defines has a well-formed type (dims powers of two,
 *      pointee scalar, layout rank = tensor rank, a layout on every tensor
 *      once layouts are assigned; a type that passed is not checked again
 *      in the same function, one that failed is reported at every value); then the per-op check from `op_checks`,
 *      falling back to check_elementwise for OPF_ELEMENTWISE ops; element-
 *      wise operands must share the result's layout.
 *   4. Terminators: `return` exactly once, last in the function body;
 *      `yield` exactly once, last in every region, its operands typed like
 *      the loop's iter args (for) or the results (if).
 *
 * Messages name the op first ("add: ..."), operands by index from 0, and
 * types as printed.  They are located at the instruction; an instruction
 * built without a location gets the kernel name as a prefix instead. */
#include "layout.h"
#include "tir.h"
#include "../support/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_UNSEEN, V_VISIBLE, V_GONE };

typedef struct Verifier {
    Module *m;
    Func *f;
    Diag *d;
    uint8_t *state; /* per value: V_* */
    ValueId *stack; /* values in scope, innermost last */
    uint32_t nstack;
    bool layouts; /* layouts are assigned in f */
    int nerrors;
    /* types check_value_type passed in f (it depends on nothing else: the module's layouts and `layouts`
     * are fixed while f is checked), an open-addressed set: a value of such a type is not checked (or its
     * label formatted) again */
    const Type **ok_types;
    uint32_t ok_cap, ok_n;
} Verifier;

/* ---- reporting ---- */

__attribute__((format(printf, 3, 4))) static void verr(Verifier *V, const Inst *i, const char *fmt, ...) {
    Str s = {0};
    Loc loc = i ? i->loc : V->f->loc;
    if (!loc.file) str_printf(&s, "@%s: ", V->f->name);
    if (i) str_printf(&s, "%s: ", (unsigned)i->op < OP_COUNT ? tir_op_info[i->op].name : "?");
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    diag_error(V->d, loc, "%s", s.buf);
    str_free(&s);
    V->nerrors++;
}

/* Printable without crashing the printer: no NULL pointee or layout parent. */
static bool printable(const Type *t) {
    for (int depth = 0; t; t = t->pointee, depth++) {
        if (depth > 16 || (unsigned)t->dt >= DT_COUNT || t->rank > TIR_MAX_RANK) return false;
        for (const Layout *l = t->rank ? t->layout : NULL; l; l = l->parent)
            if ((unsigned)l->kind > LAYOUT_SHARED || l->rank > TIR_MAX_RANK ||
                (l->kind != LAYOUT_BLOCKED && l->kind != LAYOUT_MMA && l->kind != LAYOUT_SHARED && !l->parent))
                return false;
        if (t->dt != DT_PTR) return true;
    }
    return false;
}

/* A type as printed, kept in the arena (only on error paths). */
static const char *tstr(Verifier *V, const Type *t) {
    if (!t) return "<no type>";
    if (!printable(t)) return "<malformed type>";
    Str s = {0};
    tir_print_type(&s, t);
    char *r = arena_strdup(V->m->arena, s.buf);
    str_free(&s);
    return r;
}

/* ---- type helpers ---- */

static const Type *vt(Verifier *V, ValueId v) { return V->f->values[v].type; }
static const Type *opt(Verifier *V, const Inst *i, int k) { return vt(V, i->ops[k]); }
static const Type *rest(Verifier *V, const Inst *i) { return vt(V, i->res[0]); }

static bool same_shape(const Type *a, const Type *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}
static bool same_elem(const Type *a, const Type *b) { return a->dt == b->dt && a->pointee == b->pointee; }
/* same shape and element type; the layout may differ */
static bool same_sd(const Type *a, const Type *b) { return same_shape(a, b) && same_elem(a, b); }
static bool is_pow2(int64_t x) { return x > 0 && !(x & (x - 1)); }
static bool is_ptr(const Type *t) { return t->dt == DT_PTR; }
/* t has the pointee's element type and `shape`'s shape (what a load of `ptr` yields) */
static bool is_pointee_of(const Type *t, const Type *ptr) {
    return ptr->pointee && t->dt == ptr->pointee->dt && t->pointee == ptr->pointee->pointee && same_shape(t, ptr);
}
static bool is_mask_for(const Type *m, const Type *t) { return m->dt == DT_I1 && same_shape(m, t); }

/* Operand k (the `what`, if named) must have the same shape and element type as `want`. */
static void expect_sd(Verifier *V, const Inst *i, int k, const Type *want, const char *what) {
    const Type *t = opt(V, i, k);
    if (same_sd(t, want)) return;
    if (what) verr(V, i, "operand %d (%s) has type %s, expected %s", k, what, tstr(V, t), tstr(V, want));
    else verr(V, i, "operand %d has type %s, expected %s", k, tstr(V, t), tstr(V, want));
}

static void expect_result_sd(Verifier *V, const Inst *i, const Type *want) {
    const Type *r = rest(V, i);
    if (!same_sd(r, want)) verr(V, i, "result has type %s, expected %s", tstr(V, r), tstr(V, want));
}

/* ---- value types ---- */

static bool interned(const Module *m, const Layout *l) {
    for (int k = 0; k < m->nlayouts; k++)
        if (m->layouts[k] == l) return true;
    return false;
}

/* Layouts (and their parents) must be interned: passes compare them by pointer
 * and the printer names them #L<index>. */
static void check_layout(Verifier *V, const Inst *at, const Layout *l, int depth, const char *what) {
    if (depth > 8) {
        verr(V, at, "%s: layout nested too deeply", what);
        return;
    }
    if (!interned(V->m, l)) {
        verr(V, at, "%s: layout is not interned in the module", what);
        return;
    }
    switch (l->kind) {
    case LAYOUT_BLOCKED: {
        if (l->rank > TIR_MAX_RANK) {
            verr(V, at, "%s: layout rank %d exceeds %d", what, l->rank, TIR_MAX_RANK);
            return;
        }
        unsigned seen = 0;
        for (int d = 0; d < l->rank; d++) {
            if (!l->spt[d] || !l->tpw[d] || !l->wpc[d])
                verr(V, at, "%s: blocked layout has a zero size along dim %d", what, d);
            if (l->order[d] < l->rank) seen |= 1u << l->order[d];
        }
        if (seen != (1u << l->rank) - 1) verr(V, at, "%s: blocked layout order is not a permutation", what);
        break;
    }
    case LAYOUT_MMA:
        if (l->rank != 2 || !l->wpc[0] || !l->wpc[1]) verr(V, at, "%s: mma layout must be rank 2 with non-zero warps", what);
        break;
    case LAYOUT_SHARED:
        if (l->rank < 2 || l->rank > 3) verr(V, at, "%s: shared layout must be rank 2 or 3", what);
        break;
    case LAYOUT_SLICE:
    case LAYOUT_DOT_A:
    case LAYOUT_DOT_B:
        if (!l->parent) {
            verr(V, at, "%s: layout has no parent", what);
            return;
        }
        check_layout(V, at, l->parent, depth + 1, what);
        if (l->kind != LAYOUT_SLICE && (l->parent->kind != LAYOUT_MMA || !l->kw || !l->vpr))
            verr(V, at, "%s: dot operand layout needs an mma parent, kw and vpr", what);
        if (l->kind == LAYOUT_SLICE && (l->dim < 0 || l->dim >= l->parent->rank || l->rank + 1 != l->parent->rank))
            verr(V, at, "%s: slice layout dim %d / rank %d do not fit its rank-%d parent", what, l->dim, l->rank,
                 l->parent->rank);
        break;
    default: verr(V, at, "%s: invalid layout kind %d", what, (int)l->kind);
    }
}

/* The type of a value defined by `at` (NULL: a kernel argument) is well-formed. */
static bool check_value_type(Verifier *V, const Inst *at, ValueId v, const char *what) {
    const Type *t = vt(V, v);
    if (!t) {
        verr(V, at, "%s has no type", what);
        return false;
    }
    bool ok = true;
    if ((unsigned)t->dt >= DT_COUNT || t->dt == DT_VOID) {
        verr(V, at, "%s has no element type", what);
        return false;
    }
    if (t->rank > TIR_MAX_RANK) {
        verr(V, at, "%s has rank %d, more than %d", what, t->rank, TIR_MAX_RANK);
        return false;
    }
    for (int d = 0; d < t->rank; d++)
        /* a pipelining buffer's stage count (dim 0 of a rank-3 shared tensor) is any count */
        if (!is_pow2(t->shape[d]) && !(d == 0 && t->rank == 3 && t->layout && t->layout->kind == LAYOUT_SHARED && t->shape[0] > 0)) {
            verr(V, at, "%s: tensor dimension %d is not a power of two", what, t->shape[d]);
            ok = false;
        }
    if (is_ptr(t) && (!t->pointee || t->pointee->rank || t->pointee->dt == DT_VOID)) {
        verr(V, at, "%s: pointer element type must be a scalar", what);
        ok = false;
    }
    if (t->rank && t->layout) {
        check_layout(V, at, t->layout, 0, what);
        if (t->layout->rank != t->rank) {
            verr(V, at, "%s: layout rank %d does not match tensor rank %d", what, t->layout->rank, t->rank);
            ok = false;
        }
    } else if (t->rank && V->layouts) {
        verr(V, at, "%s: tensor has no layout (layouts are assigned)", what);
        ok = false;
    }
    return ok;
}

static uint32_t type_slot(const Verifier *V, const Type *t) {
    uint64_t h = (uint64_t)(uintptr_t)t * 0x9E3779B97F4A7C15ull;
    uint32_t k = (uint32_t)(h >> 32) & (V->ok_cap - 1);
    while (V->ok_types[k] && V->ok_types[k] != t) k = (k + 1) & (V->ok_cap - 1);
    return k;
}

static bool type_known_ok(const Verifier *V, ValueId v) {
    const Type *t = V->f->values[v].type;
    return t && V->ok_cap && V->ok_types[type_slot(V, t)] == t;
}

static void type_ok(Verifier *V, ValueId v) {
    const Type *t = V->f->values[v].type;
    if (!t) return;
    if (2 * (V->ok_n + 1) > V->ok_cap) {
        const Type **old = V->ok_types;
        uint32_t oldcap = V->ok_cap;
        V->ok_cap = oldcap ? 2 * oldcap : 64;
        V->ok_types = calloc(V->ok_cap, sizeof *V->ok_types);
        if (!V->ok_types) out_of_memory();
        for (uint32_t k = 0; k < oldcap; k++)
            if (old[k]) V->ok_types[type_slot(V, old[k])] = old[k];
        free(old);
    }
    uint32_t k = type_slot(V, t);
    if (!V->ok_types[k]) {
        V->ok_types[k] = t;
        V->ok_n++;
    }
}

/* check_value_type for the value `v` defined by `at`, labelled "<kind> <k>" in messages; a type that passed
 * before in this function is not checked again */
static bool check_defined_type(Verifier *V, const Inst *at, ValueId v, const char *kind, int k) {
    if (type_known_ok(V, v)) return true;
    char what[40];
    snprintf(what, sizeof what, "%s %d", kind, k);
    int before = V->nerrors;
    bool ok = check_value_type(V, at, v, what);
    if (ok && V->nerrors == before) type_ok(V, v);
    return ok;
}

/* ---- scope ---- */

static bool valid_id(Verifier *V, ValueId v) { return v > 0 && v < V->f->nvalues; }

static void define(Verifier *V, const Inst *at, ValueId v) {
    if (V->state[v] != V_UNSEEN) {
        verr(V, at, "value defined twice");
        return;
    }
    V->state[v] = V_VISIBLE;
    V->stack[V->nstack++] = v;
}

static void scope_pop_to(Verifier *V, uint32_t mark) {
    while (V->nstack > mark) V->state[V->stack[--V->nstack]] = V_GONE;
}

/* ---- per-op checks (operand/result counts already hold) ---- */

typedef void (*CheckFn)(Verifier *V, const Inst *i);

static void check_elementwise(Verifier *V, const Inst *i) {
    const Type *r = rest(V, i);
    for (int k = 0; k < i->nops; k++) expect_sd(V, i, k, r, NULL);
}

static void check_const(Verifier *V, const Inst *i) {
    if (is_ptr(rest(V, i))) verr(V, i, "constant of pointer type");
}

static void check_arange(Verifier *V, const Inst *i) {
    const Type *r = rest(V, i);
    if (r->rank != 1 || r->dt != DT_I32) {
        verr(V, i, "result must be a 1-d i32 tensor, found %s", tstr(V, r));
        return;
    }
    if (i->a.ival2 - i->a.ival != r->shape[0])
        verr(V, i, "range [%lld, %lld) does not have %d elements", (long long)i->a.ival, (long long)i->a.ival2,
             r->shape[0]);
}

static void check_program_id(Verifier *V, const Inst *i) {
    const Type *r = rest(V, i);
    if (r->rank || r->dt != DT_I32) verr(V, i, "result must be i32, found %s", tstr(V, r));
    if (i->a.ival < 0 || i->a.ival > 2) verr(V, i, "axis %lld out of range [0, 2]", (long long)i->a.ival);
}

static void check_splat(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *r = rest(V, i);
    if (a->rank) verr(V, i, "operand must be a scalar, found %s", tstr(V, a));
    if (!r->rank) verr(V, i, "result must be a tensor, found %s", tstr(V, r));
    if (!same_elem(a, r)) verr(V, i, "element types differ: %s and %s", tstr(V, a), tstr(V, r));
}

static void check_broadcast(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *r = rest(V, i);
    if (!same_elem(a, r)) verr(V, i, "element types differ: %s and %s", tstr(V, a), tstr(V, r));
    if (a->rank != r->rank) {
        verr(V, i, "rank changes from %d to %d", a->rank, r->rank);
        return;
    }
    for (int d = 0; d < r->rank; d++)
        if (a->shape[d] != r->shape[d] && a->shape[d] != 1)
            verr(V, i, "dim %d: cannot broadcast %d to %d", d, a->shape[d], r->shape[d]);
}

static void check_expand_dims(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *r = rest(V, i);
    int64_t ax = i->a.ival;
    if (!same_elem(a, r)) verr(V, i, "element types differ: %s and %s", tstr(V, a), tstr(V, r));
    if (r->rank != a->rank + 1) {
        verr(V, i, "result rank %d is not operand rank %d + 1", r->rank, a->rank);
        return;
    }
    if (ax < 0 || ax >= r->rank) {
        verr(V, i, "axis %lld out of range for rank %d", (long long)ax, r->rank);
        return;
    }
    if (r->shape[ax] != 1) verr(V, i, "result dim %lld must be 1, found %d", (long long)ax, r->shape[ax]);
    for (int d = 0, s = 0; d < r->rank; d++)
        if (d != ax && r->shape[d] != a->shape[s++]) {
            verr(V, i, "result dim %d is %d, expected %d", d, r->shape[d], a->shape[s - 1]);
            return;
        }
}

static void check_reshape(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *r = rest(V, i);
    if (!same_elem(a, r)) verr(V, i, "element types differ: %s and %s", tstr(V, a), tstr(V, r));
    if (tir_type_numel(a) != tir_type_numel(r))
        verr(V, i, "element count changes from %lld to %lld", (long long)tir_type_numel(a),
             (long long)tir_type_numel(r));
}

static void check_trans(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *r = rest(V, i);
    if (!same_elem(a, r)) verr(V, i, "element types differ: %s and %s", tstr(V, a), tstr(V, r));
    if (a->rank != r->rank) {
        verr(V, i, "rank changes from %d to %d", a->rank, r->rank);
        return;
    }
    unsigned seen = 0;
    for (int d = 0; d < r->rank; d++) {
        int p = i->a.perm[d];
        if (p < 0 || p >= r->rank || (seen & (1u << p))) {
            verr(V, i, "perm is not a permutation of 0..%d", r->rank - 1);
            return;
        }
        seen |= 1u << p;
    }
    for (int d = 0; d < r->rank; d++)
        if (r->shape[d] != a->shape[i->a.perm[d]]) {
            verr(V, i, "result dim %d is %d, expected operand dim %d (%d)", d, r->shape[d], i->a.perm[d],
                 a->shape[i->a.perm[d]]);
            return;
        }
}

static void check_convert_layout(Verifier *V, const Inst *i) {
    if (!same_sd(opt(V, i, 0), rest(V, i)))
        verr(V, i, "operand type %s and result type %s differ beyond layout", tstr(V, opt(V, i, 0)),
             tstr(V, rest(V, i)));
}

static void check_cmp(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *r = rest(V, i);
    expect_sd(V, i, 1, a, NULL);
    if (r->dt != DT_I1 || !same_shape(r, a))
        verr(V, i, "result must be i1 shaped like the operands, found %s", tstr(V, r));
    if (i->a.ival2 < CMP_EQ || i->a.ival2 > CMP_GE) verr(V, i, "invalid predicate %lld", (long long)i->a.ival2);
}

static void check_select(Verifier *V, const Inst *i) {
    const Type *r = rest(V, i);
    if (!is_mask_for(opt(V, i, 0), r))
        verr(V, i, "condition must be i1 shaped like the result, found %s", tstr(V, opt(V, i, 0)));
    expect_sd(V, i, 1, r, "true value");
    expect_sd(V, i, 2, r, "false value");
}

static void check_cast(Verifier *V, const Inst *i) {
    if (!same_shape(opt(V, i, 0), rest(V, i)))
        verr(V, i, "shape changes from %s to %s", tstr(V, opt(V, i, 0)), tstr(V, rest(V, i)));
}

static void check_inline_asm(Verifier *V, const Inst *i) {
    for (int k = 0; k < i->nops; k++)
        if (!same_shape(opt(V, i, k), rest(V, i)))
            verr(V, i, "operand %d has shape %s, the result %s", k, tstr(V, opt(V, i, k)), tstr(V, rest(V, i)));
    const char *nl = i->a.msg ? strchr(i->a.msg, '\n') : NULL;
    if (!nl) {
        verr(V, i, "msg must be the constraints, a newline, then the assembly");
        return;
    }
    char cons[512], why[160];
    snprintf(cons, sizeof cons, "%.*s", (int)(nl - i->a.msg), i->a.msg);
    AsmRegs r;
    const char *bad = tir_asm_regs(cons, &r, why, sizeof why);
    if (bad) {
        verr(V, i, "constraints: %s", bad);
        return;
    }
    if ((bad = tir_asm_text_check(nl + 1, r.nout + r.nin, why, sizeof why))) verr(V, i, "assembly: %s", bad);
    int pack = i->a.ival ? (int)i->a.ival : 1, bits, at = 0;
    for (int k = 0; k < i->nops; k++) {
        int n = tir_asm_value_regs(opt(V, i, k)->dt, pack, &bits);
        for (int q = 0; q < n; q++, at++)
            if (at >= r.nin || dtype_bits(r.in[at]) != bits)
                verr(V, i, "operand %d takes %d-bit registers at pack=%d; input register %d is %s", k, bits, pack, at,
                     at < r.nin ? dtype_name(r.in[at]) : "missing");
    }
    if (at != r.nin) verr(V, i, "the operands take %d registers, the constraints name %d inputs", at, r.nin);
    int n = tir_asm_value_regs(rest(V, i)->dt, pack, &bits);
    if (i->a.ival2 < 0 || i->a.ival2 + n > r.nout) verr(V, i, "out=%lld and %d registers pass the %d outputs", (long long)i->a.ival2, n, r.nout);
    else
        for (int q = 0; q < n; q++)
            if (dtype_bits(r.out[i->a.ival2 + q]) != bits)
                verr(V, i, "the result takes %d-bit registers at pack=%d; output register %lld is %s", bits, pack,
                     (long long)i->a.ival2 + q, dtype_name(r.out[i->a.ival2 + q]));
    if (pack % tir_asm_per_reg(rest(V, i)->dt == DT_PTR ? 64 : dtype_bits(rest(V, i)->dt), pack))
        verr(V, i, "pack=%d does not fill whole result registers", pack);
}

static void check_hint(Verifier *V, const Inst *i) {
    const Type *r = rest(V, i);
    check_elementwise(V, i);
    if (!dtype_is_int(r->dt) && r->dt != DT_PTR) verr(V, i, "hints are about integers and pointers, found %s", tstr(V, r));
    for (int d = 0; d < (r->rank ? r->rank : 1); d++)
        if (i->a.perm[d] < 1) verr(V, i, "values[%d] is %d, expected at least 1", d, i->a.perm[d]);
}

static void check_assume(Verifier *V, const Inst *i) {
    if (opt(V, i, 0)->dt != DT_I1) verr(V, i, "condition must be i1, found %s", tstr(V, opt(V, i, 0)));
}

static void check_bitcast(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *r = rest(V, i);
    check_cast(V, i);
    if (dtype_bits(a->dt) != dtype_bits(r->dt))
        verr(V, i, "bit width changes from %d to %d", dtype_bits(a->dt), dtype_bits(r->dt));
}

static void check_ptr_add(Verifier *V, const Inst *i) {
    const Type *p = opt(V, i, 0), *o = opt(V, i, 1), *r = rest(V, i);
    if (!is_ptr(r)) verr(V, i, "result must be a pointer, found %s", tstr(V, r));
    expect_sd(V, i, 0, r, "pointer");
    if (!dtype_is_int(o->dt) || !same_shape(o, p))
        verr(V, i, "offset must be an integer shaped like the pointer, found %s", tstr(V, o));
}

/* One result; argmax/argmin may have a second, the value at the index (the operand's element type). */
static void check_reduce(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0);
    int64_t ax = i->a.ival, kind = i->a.ival2;
    if (kind < RED_SUM || kind > RED_ARGMIN) verr(V, i, "invalid kind %lld", (long long)kind);
    bool arg = kind == RED_ARGMAX || kind == RED_ARGMIN;
    if (i->nres != 1 && !(arg && i->nres == 2)) {
        verr(V, i, "has %d results: expected 1%s", i->nres, arg ? " (the index) or 2 (the index and the value)" : "");
        return;
    }
    if (ax < 0 || ax >= a->rank) {
        verr(V, i, "axis %lld out of range for %s", (long long)ax, tstr(V, a));
        return;
    }
    Type elem = {.dt = a->dt, .pointee = a->pointee};
    for (int k = 0; k < i->nres; k++) {
        const Type *r = vt(V, i->res[k]);
        bool index = arg && k == 0;
        if (index ? r->dt != DT_I32 : !same_elem(a, r))
            verr(V, i, "result %d element type must be %s, found %s", k, index ? "i32" : tstr(V, &elem), tstr(V, r));
        bool shape_ok = r->rank == a->rank - 1;
        for (int d = 0, s = 0; shape_ok && d < a->rank; d++)
            if (d != ax) shape_ok = r->shape[s++] == a->shape[d];
        if (!shape_ok) verr(V, i, "result %d %s is not %s without dim %lld", k, tstr(V, r), tstr(V, a), (long long)ax);
    }
}

static void check_scan(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0);
    int64_t kind = i->a.ival2;
    if (kind != RED_SUM && kind != RED_MAX && kind != RED_MIN) verr(V, i, "invalid kind %lld", (long long)kind);
    if (i->a.ival < 0 || i->a.ival >= a->rank)
        verr(V, i, "axis %lld out of range for %s", (long long)i->a.ival, tstr(V, a));
    expect_result_sd(V, i, a);
}

static void check_gather(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *x = opt(V, i, 1), *r = rest(V, i);
    int64_t ax = i->a.ival;
    if (!same_elem(a, r)) verr(V, i, "element types differ: %s and %s", tstr(V, a), tstr(V, r));
    if (x->dt != DT_I32 || !same_shape(x, r)) verr(V, i, "index must be i32 shaped like the result, found %s", tstr(V, x));
    if (ax < 0 || ax >= a->rank || r->rank != a->rank) {
        verr(V, i, "axis %lld out of range, or ranks differ: %s and %s", (long long)ax, tstr(V, a), tstr(V, r));
        return;
    }
    for (int d = 0; d < a->rank; d++)
        if (d != ax && a->shape[d] != r->shape[d])
            verr(V, i, "dim %d: result has %d, source %d (only the axis may differ)", d, r->shape[d], a->shape[d]);
    int64_t j = i->a.ival2;
    if (j && (j < 0 || (j & (j - 1)) || j >= a->shape[ax] || !same_shape(a, r)))
        verr(V, i, "xor=%lld needs a power of two below the axis size %d and equal source and result shapes", (long long)j, a->shape[ax]);
}

/* unstack: one result per slab along dim 0, each the operand's type without that dim */
static void check_unstack(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0);
    if (a->rank < 1 || i->nres != a->shape[0]) {
        verr(V, i, "has %d results for %s (one per index along dim 0)", i->nres, tstr(V, a));
        return;
    }
    for (int k = 0; k < i->nres; k++) {
        const Type *r = vt(V, i->res[k]);
        bool ok = same_elem(a, r) && r->rank == a->rank - 1;
        for (int d = 0; ok && d < r->rank; d++) ok = r->shape[d] == a->shape[d + 1];
        if (!ok) verr(V, i, "result %d is %s, expected %s without dim 0", k, tstr(V, r), tstr(V, a));
    }
}

/* stack: operands of one shape and element type, the result theirs with a new dim 0 of their count */
static void check_stack(Verifier *V, const Inst *i) {
    const Type *r = rest(V, i);
    if (r->rank < 1 || r->shape[0] != i->nops) {
        verr(V, i, "result %s does not stack %d operands along dim 0", tstr(V, r), i->nops);
        return;
    }
    for (int k = 0; k < i->nops; k++) {
        const Type *a = opt(V, i, k);
        bool ok = same_elem(a, r) && a->rank == r->rank - 1;
        for (int d = 0; ok && d < a->rank; d++) ok = a->shape[d] == r->shape[d + 1];
        if (!ok) verr(V, i, "operand %d is %s, expected %s without dim 0", k, tstr(V, a), tstr(V, r));
    }
}

static void check_dot(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0), *b = opt(V, i, 1), *c = opt(V, i, 2);
    if (a->rank != 2 || b->rank != 2 || c->rank != 2) {
        verr(V, i, "operands must be 2-d, found %s, %s, %s", tstr(V, a), tstr(V, b), tstr(V, c));
        return;
    }
    if (a->shape[1] != b->shape[0] || a->shape[0] != c->shape[0] || b->shape[1] != c->shape[1])
        verr(V, i, "shapes %dx%d * %dx%d + %dx%d do not fit [M,K]x[K,N]+[M,N]", a->shape[0], a->shape[1], b->shape[0],
             b->shape[1], c->shape[0], c->shape[1]);
    if (a->dt != b->dt && !(dtype_is_storage(a->dt) && dtype_is_storage(b->dt))) /* e4m3 and e5m2 mix */
        verr(V, i, "operand element types differ: %s and %s", tstr(V, a), tstr(V, b));
    expect_result_sd(V, i, c);
}

/* The pointer operand (0) of a memory op. */
static bool check_ptr_operand(Verifier *V, const Inst *i) {
    const Type *p = opt(V, i, 0);
    if (is_ptr(p) && p->pointee) return true;
    verr(V, i, "operand 0 must be a pointer, found %s", tstr(V, p));
    return false;
}

static void check_mask(Verifier *V, const Inst *i, int k, const Type *like) {
    if (k < i->nops && !is_mask_for(opt(V, i, k), like))
        verr(V, i, "mask (operand %d) must be i1 shaped like %s, found %s", k, tstr(V, like), tstr(V, opt(V, i, k)));
}

/* Operand k holds values stored through the pointer operand. */
static void check_stored(Verifier *V, const Inst *i, int k) {
    if (!is_pointee_of(opt(V, i, k), opt(V, i, 0)))
        verr(V, i, "operand %d has type %s, expected elements of %s", k, tstr(V, opt(V, i, k)), tstr(V, opt(V, i, 0)));
}

/* An atomic load or store (cache & STRONG): relaxed or acquire (load) / release (store), no cache hint beside it. */
static void check_strong(Verifier *V, const Inst *i, bool load) {
    if (!(i->a.cache & TIR_CACHE_STRONG)) {
        if (i->a.sem || i->a.scope) verr(V, i, "sem and scope are for atomic accesses (cache=%d)", TIR_CACHE_STRONG);
        return;
    }
    if (i->a.cache != TIR_CACHE_STRONG) verr(V, i, "an atomic access takes no cache operator, eviction policy or volatile");
    if (i->a.scope >= SCOPE_COUNT || (i->a.sem != SEM_RELAXED && i->a.sem != (load ? SEM_ACQUIRE : SEM_RELEASE)))
        verr(V, i, "an atomic %s is relaxed or %s", load ? "load" : "store", load ? "acquire" : "release");
}

static void check_load(Verifier *V, const Inst *i) {
    check_strong(V, i, true);
    if (!check_ptr_operand(V, i)) return;
    const Type *p = opt(V, i, 0), *r = rest(V, i);
    if (!is_pointee_of(r, p)) verr(V, i, "result has type %s, expected elements of %s", tstr(V, r), tstr(V, p));
    check_mask(V, i, 1, p);
    if (i->nops > 2) expect_sd(V, i, 2, r, "other");
}

static void check_store(Verifier *V, const Inst *i) {
    check_strong(V, i, false);
    if (!check_ptr_operand(V, i)) return;
    check_stored(V, i, 1);
    check_mask(V, i, 2, opt(V, i, 0));
}

static void check_atomic_rmw(Verifier *V, const Inst *i) {
    int64_t kind = i->a.ival2;
    if (kind < RED_SUM || kind > RED_XOR || kind == RED_ARGMAX || kind == RED_ARGMIN)
        verr(V, i, "invalid kind %lld", (long long)kind);
    if (i->a.sem >= SEM_COUNT || i->a.scope >= SCOPE_COUNT) verr(V, i, "invalid memory ordering or scope");
    if (!check_ptr_operand(V, i)) return;
    const Type *v = opt(V, i, 1);
    if ((kind == RED_AND || kind == RED_OR || kind == RED_XOR) && v && !dtype_is_int(v->dt))
        verr(V, i, "kind %s needs integers, found %s", tir_red_names[kind], tstr(V, v));
    check_stored(V, i, 1);
    check_mask(V, i, 2, opt(V, i, 0));
    expect_result_sd(V, i, opt(V, i, 1));
}

static void check_atomic_cas(Verifier *V, const Inst *i) {
    if (i->a.sem >= SEM_COUNT || i->a.scope >= SCOPE_COUNT) verr(V, i, "invalid memory ordering or scope");
    if (!check_ptr_operand(V, i)) return;
    check_stored(V, i, 1);
    check_stored(V, i, 2);
    check_mask(V, i, 3, opt(V, i, 0));
    expect_result_sd(V, i, opt(V, i, 2));
}

/* atomic_poll: 16-, 32- or 64-bit integers, an expected value of each, a scalar u64 timeout; acquire or relaxed. */
static void check_atomic_poll(Verifier *V, const Inst *i) {
    if ((i->a.sem != SEM_ACQUIRE && i->a.sem != SEM_RELAXED) || i->a.scope >= SCOPE_COUNT)
        verr(V, i, "an atomic poll is relaxed or acquire");
    if (!check_ptr_operand(V, i)) return;
    DType dt = opt(V, i, 0)->pointee->dt;
    if (!dtype_is_int(dt) || dt == DT_PTR || (dtype_bits(dt) != 16 && dtype_bits(dt) != 32 && dtype_bits(dt) != 64))
        verr(V, i, "an atomic poll reads 16-, 32- or 64-bit integers, found %s", tstr(V, opt(V, i, 0)));
    check_stored(V, i, 1);
    if (i->nops > 2 && (opt(V, i, 2)->rank || opt(V, i, 2)->dt != DT_U64))
        verr(V, i, "timeout (operand 2) must be a scalar u64, found %s", tstr(V, opt(V, i, 2)));
    const Type *r = rest(V, i), *p = opt(V, i, 0);
    if (r->dt != DT_I1 || !same_shape(r, p)) verr(V, i, "result has type %s, expected i1 shaped like %s", tstr(V, r), tstr(V, p));
}

/* The region's yield carries `n` values typed exactly like `want[k]`. */
static void check_yield(Verifier *V, const Inst *i, const Block *b, const ValueId *want, int n, const char *what) {
    const Inst *y = b->last;
    if (!y || y->op != OP_YIELD || (y->nops && !y->ops)) return; /* reported elsewhere */
    if (y->nops != n) {
        verr(V, i, "yield has %d values, expected %d (%s)", y->nops, n, what);
        return;
    }
    for (int k = 0; k < n; k++)
        if (valid_id(V, y->ops[k]) && vt(V, y->ops[k]) != vt(V, want[k]))
            verr(V, i, "yield value %d has type %s, %s %d has type %s", k, tstr(V, vt(V, y->ops[k])), what, k,
                 tstr(V, vt(V, want[k])));
}

static void check_for(Verifier *V, const Inst *i) {
    const Type *lb = opt(V, i, 0);
    if (lb->rank || !dtype_is_int(lb->dt)) verr(V, i, "lower bound must be a scalar integer, found %s", tstr(V, lb));
    if (opt(V, i, 1) != lb || opt(V, i, 2) != lb)
        verr(V, i, "bounds and step must have one type, found %s, %s, %s", tstr(V, lb), tstr(V, opt(V, i, 1)),
             tstr(V, opt(V, i, 2)));
    int ninit = i->nops - 3;
    for (int k = 0; k < ninit; k++)
        if (vt(V, i->res[k]) != opt(V, i, 3 + k))
            verr(V, i, "result %d has type %s, init value has type %s", k, tstr(V, vt(V, i->res[k])),
                 tstr(V, opt(V, i, 3 + k)));
    const Block *b = i->regions[0];
    if (b->nargs != 1 + ninit) {
        verr(V, i, "body has %d arguments, expected %d (induction variable + %d iter args)", b->nargs, 1 + ninit,
             ninit);
        return;
    }
    if (vt(V, b->args[0]) != lb)
        verr(V, i, "induction variable has type %s, expected %s", tstr(V, vt(V, b->args[0])), tstr(V, lb));
    for (int k = 0; k < ninit; k++)
        if (vt(V, b->args[1 + k]) != opt(V, i, 3 + k))
            verr(V, i, "iter arg %d has type %s, init value has type %s", k, tstr(V, vt(V, b->args[1 + k])),
                 tstr(V, opt(V, i, 3 + k)));
    check_yield(V, i, b, b->args + 1, ninit, "iter arg");
}

static void check_while(Verifier *V, const Inst *i) {
    const Type *c = opt(V, i, 0);
    if (c->rank || c->dt != DT_I1) verr(V, i, "condition (operand 0) must be a scalar i1, found %s", tstr(V, c));
    for (int k = 0; k < i->nops; k++)
        if (vt(V, i->res[k]) != opt(V, i, k))
            verr(V, i, "result %d has type %s, init value has type %s", k, tstr(V, vt(V, i->res[k])), tstr(V, opt(V, i, k)));
    const Block *b = i->regions[0];
    if (b->nargs != i->nops) {
        verr(V, i, "body has %d arguments, expected %d (condition + %d carried values)", b->nargs, i->nops, i->nops - 1);
        return;
    }
    for (int k = 0; k < i->nops; k++)
        if (vt(V, b->args[k]) != opt(V, i, k))
            verr(V, i, "body argument %d has type %s, init value has type %s", k, tstr(V, vt(V, b->args[k])), tstr(V, opt(V, i, k)));
    check_yield(V, i, b, b->args, i->nops, "carried value");
}

/* reduce_fn / scan_fn: k operands of one shape, k results, a region ^(a0.., b0..) of
 * scalars of the operands' element types yielding k of them */
static void check_combine_fn(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0);
    int64_t ax = i->a.ival;
    if (ax < 0 || ax >= a->rank) {
        verr(V, i, "axis %lld out of range for %s", (long long)ax, tstr(V, a));
        return;
    }
    if (i->nres != i->nops) verr(V, i, "has %d results for %d operands", i->nres, i->nops);
    if (i->nops > TIR_MAX_COMBINE) {
        verr(V, i, "has %d operands, more than %d", i->nops, TIR_MAX_COMBINE);
        return;
    }
    const Block *b = i->regions[0];
    if (b->nargs != 2 * i->nops) {
        verr(V, i, "region has %d arguments, expected %d", b->nargs, 2 * i->nops);
        return;
    }
    for (int k = 0; k < i->nops && k < i->nres; k++) {
        const Type *x = opt(V, i, k), *r = vt(V, i->res[k]);
        if (x->rank != a->rank || memcmp(x->shape, a->shape, sizeof a->shape))
            verr(V, i, "operand %d is %s, operand 0 %s", k, tstr(V, x), tstr(V, a));
        if (x->dt == DT_PTR) verr(V, i, "operand %d is a pointer tensor", k);
        for (int h = 0; h < 2; h++) {
            const Type *ba = vt(V, b->args[h * i->nops + k]);
            if (ba->rank || ba->dt != x->dt) verr(V, i, "region argument %d is %s, expected a scalar %s", h * i->nops + k, tstr(V, ba), dtype_name(x->dt));
        }
        bool shape_ok = i->op == OP_SCAN_FN ? r->rank == x->rank : r->rank == x->rank - 1;
        for (int d = 0, s = 0; shape_ok && d < x->rank; d++)
            if (i->op == OP_SCAN_FN || d != ax) shape_ok = r->shape[s++] == x->shape[d];
        if (!shape_ok || r->dt != x->dt)
            verr(V, i, "result %d is %s for operand %s", k, tstr(V, r), tstr(V, x));
    }
    check_yield(V, i, b, b->args, i->nops, "region argument");
}

/* map_fn: operands of one shape, results of that shape; the region takes pack scalars of each
 * operand and yields pack scalars of each result, and computes on scalars only (it runs once per
 * group of a thread's elements, so a tensor in it would be a whole tile per element). */
static bool scalar_region(Verifier *V, const Inst *map, const Block *b) {
    for (const Inst *in = b->first; in; in = in->next) {
        for (int r = 0; r < in->nres; r++)
            if (valid_id(V, in->res[r]) && vt(V, in->res[r])->rank) {
                verr(V, map, "region computes the tensor %s (%s): it must compute on scalars", tstr(V, vt(V, in->res[r])),
                     tir_op_info[in->op].name);
                return false;
            }
        for (int k = 0; k < in->nregions; k++)
            if (!scalar_region(V, map, in->regions[k])) return false;
    }
    return true;
}

static void check_map_fn(Verifier *V, const Inst *i) {
    const Type *a = opt(V, i, 0);
    int pack = i->a.ival > 1 ? (int)i->a.ival : 1;
    const Block *b = i->regions[0];
    if (!i->nres) verr(V, i, "has no results");
    if (b->nargs != pack * i->nops) {
        verr(V, i, "region has %d arguments, expected %d (%d operands, pack %d)", b->nargs, pack * i->nops, i->nops, pack);
        return;
    }
    for (int k = 0; k < i->nops; k++) {
        const Type *x = opt(V, i, k);
        if (x->rank != a->rank || memcmp(x->shape, a->shape, sizeof a->shape))
            verr(V, i, "operand %d is %s, operand 0 %s", k, tstr(V, x), tstr(V, a));
        if (x->dt == DT_PTR) verr(V, i, "operand %d is a pointer tensor", k);
        for (int e = 0; e < pack; e++) {
            const Type *ba = vt(V, b->args[k * pack + e]);
            if (ba->rank || ba->dt != x->dt)
                verr(V, i, "region argument %d is %s, expected a scalar %s", k * pack + e, tstr(V, ba), dtype_name(x->dt));
        }
    }
    for (int k = 0; k < i->nres; k++) {
        const Type *r = vt(V, i->res[k]);
        if (r->rank != a->rank || memcmp(r->shape, a->shape, sizeof a->shape))
            verr(V, i, "result %d is %s for operands %s", k, tstr(V, r), tstr(V, a));
    }
    const Inst *y = b->last;
    if (!y || y->op != OP_YIELD || (y->nops && !y->ops)) return; /* reported elsewhere */
    if (y->nops != pack * i->nres) {
        verr(V, i, "yield has %d values, expected %d (%d results, pack %d)", y->nops, pack * i->nres, i->nres, pack);
        return;
    }
    for (int k = 0; k < y->nops; k++) {
        const Type *r = vt(V, i->res[k / pack]);
        if (valid_id(V, y->ops[k]) && (vt(V, y->ops[k])->rank || vt(V, y->ops[k])->dt != r->dt))
            verr(V, i, "yield value %d has type %s, expected a scalar %s", k, tstr(V, vt(V, y->ops[k])), dtype_name(r->dt));
    }
    scalar_region(V, i, b);
}

static void check_if(Verifier *V, const Inst *i) {
    const Type *c = opt(V, i, 0);
    if (c->rank || c->dt != DT_I1) verr(V, i, "condition must be a scalar i1, found %s", tstr(V, c));
    for (int r = 0; r < 2; r++) {
        if (i->regions[r]->nargs) verr(V, i, "region %d has arguments", r);
        check_yield(V, i, i->regions[r], i->res, i->nres, "result");
    }
}

/* Pipelining buffers: a [stages, rows, cols] shared buffer, its stage views, and copies into it. */
static bool is_shared(const Type *t) { return t->layout && t->layout->kind == LAYOUT_SHARED; }

static void check_local_alloc(Verifier *V, const Inst *i) {
    const Type *t = rest(V, i);
    if (t->rank != 3 || !is_shared(t)) verr(V, i, "result must be a rank-3 shared tensor, found %s", tstr(V, t));
}

static void check_local_view(Verifier *V, const Inst *i) {
    const Type *b = opt(V, i, 0), *s = opt(V, i, 1), *r = rest(V, i);
    if (b->rank != 3 || !is_shared(b)) verr(V, i, "operand 0 must be a shared buffer, found %s", tstr(V, b));
    else if (r->rank != 2 || !is_shared(r) || r->dt != b->dt ||
             !((r->shape[0] == b->shape[1] && r->shape[1] == b->shape[2]) || (r->shape[0] == b->shape[2] && r->shape[1] == b->shape[1])))
        verr(V, i, "result %s is not one stage (or its transpose) of %s", tstr(V, r), tstr(V, b));
    if (s->rank || !dtype_is_int(s->dt)) verr(V, i, "stage must be an integer scalar, found %s", tstr(V, s));
}

static void check_async_copy(Verifier *V, const Inst *i) {
    const Type *b = opt(V, i, 0), *s = opt(V, i, 1), *p = opt(V, i, 2);
    if (b->rank != 3 || !is_shared(b)) {
        verr(V, i, "operand 0 must be a shared buffer, found %s", tstr(V, b));
        return;
    }
    if (s->rank || !dtype_is_int(s->dt)) verr(V, i, "stage must be an integer scalar, found %s", tstr(V, s));
    /* a rank-1 tile fills a stage of one row */
    bool one_row = p->rank == 1 && b->shape[1] == 1 && p->shape[0] == b->shape[2];
    if (!is_ptr(p) || (!one_row && (p->rank != 2 || p->shape[0] != b->shape[1] || p->shape[1] != b->shape[2])) || !p->pointee ||
        p->pointee->dt != b->dt)
        verr(V, i, "pointer operand %s does not address one stage of %s", tstr(V, p), tstr(V, b));
    if (i->nops > 3 && !is_mask_for(opt(V, i, 3), p))
        verr(V, i, "mask (operand 3) must be i1 shaped like %s, found %s", tstr(V, p), tstr(V, opt(V, i, 3)));
}

static void check_local_store(Verifier *V, const Inst *i) {
    const Type *b = opt(V, i, 0), *s = opt(V, i, 1), *v = opt(V, i, 2);
    if (b->rank != 3 || !is_shared(b)) {
        verr(V, i, "operand 0 must be a shared buffer, found %s", tstr(V, b));
        return;
    }
    if (s->rank || !dtype_is_int(s->dt)) verr(V, i, "stage must be an integer scalar, found %s", tstr(V, s));
    /* the value's columns [col, col + the stage's) (col from 0 by the stage's width; all of them when as wide) */
    int64_t col = i->a.ival;
    if (v->rank != 2 || is_shared(v) || v->dt != b->dt || v->shape[0] != b->shape[1] || v->shape[1] % b->shape[2] ||
        col % b->shape[2] || col < 0 || col + b->shape[2] > v->shape[1])
        verr(V, i, "value %s (from column %lld) is not a register tile of one stage of %s", tstr(V, v), (long long)col, tstr(V, b));
    else if (v->shape[1] != b->shape[2] && (b->layout->order[0] != 2 || !layout_cols_in_chunks(v, b->shape[2])))
        verr(V, i, "value %s: its registers do not fall into column slices as wide as a stage of %s", tstr(V, v), tstr(V, b));
}

static void check_local_load(Verifier *V, const Inst *i) {
    const Type *v = opt(V, i, 0), *r = rest(V, i);
    if (v->rank != 2 || !is_shared(v)) verr(V, i, "operand must be a shared view, found %s", tstr(V, v));
    else if (is_shared(r) || r->dt != v->dt ||
             (r->rank == 1 ? v->shape[0] != 1 || r->shape[0] != v->shape[1] /* a one-row view read as a rank-1 tile */
                           : r->rank != 2 || r->shape[0] != v->shape[0] || r->shape[1] != v->shape[1]))
        verr(V, i, "result %s is not the register tile of %s", tstr(V, r), tstr(V, v));
}

static void check_wgmma_wait(Verifier *V, const Inst *i) {
    if (opt(V, i, 0) != rest(V, i)) verr(V, i, "result type %s differs from the operand's %s", tstr(V, rest(V, i)), tstr(V, opt(V, i, 0)));
}

/* mbar_*: a [stages, 1, 1] i64 shared buffer of mbarriers, then scalars; sm_90a only */
static bool check_bars(Verifier *V, const Inst *i, int k) {
    const Target *tg = target_find(V->m->arch);
    if (!tg || tg->mma < WGMMA) {
        verr(V, i, "needs a target with tensor-map copies and mbarriers (sm_90a), not %s", V->m->arch ? V->m->arch : "the default");
        return false;
    }
    const Type *b = opt(V, i, k);
    if (b->rank != 3 || !is_shared(b) || b->dt != DT_I64 || b->shape[1] != 1 || b->shape[2] != 1) {
        verr(V, i, "operand %d must be a [stages, 1, 1] i64 shared buffer of mbarriers, found %s", k, tstr(V, b));
        return false;
    }
    return true;
}

static void check_scalars(Verifier *V, const Inst *i, int from, int to) {
    for (int k = from; k < to && k < i->nops; k++) {
        const Type *t = opt(V, i, k);
        if (t->rank || !dtype_is_int(t->dt)) verr(V, i, "operand %d must be an integer scalar, found %s", k, tstr(V, t));
    }
}

static void check_mbar(Verifier *V, const Inst *i) {
    if (check_bars(V, i, 0)) check_scalars(V, i, 1, i->nops);
}

static void check_producer_block(Verifier *V, const Block *b) {
    for (const Inst *n = b->first; n; n = n->next) {
        if (n->op == OP_BARRIER) verr(V, n, "'barrier' inside ws_producer: only the producer warps run it");
        if (n->op == OP_TURN_START || n->op == OP_TURN_WAIT || n->op == OP_TURN_PASS)
            verr(V, n, "'%s' inside ws_producer: only the computing warpgroups take turns", tir_op_info[n->op].name);
        for (int r = 0; r < n->nregions; r++)
            if (n->regions[r]) check_producer_block(V, n->regions[r]);
    }
}

/* ws_producer: in the kernel's body, its warps a warpgroup; its region holds no
 * barrier (the other warps never reach it) and yields nothing */
static void check_ws_producer(Verifier *V, const Inst *i) {
    const Target *tg = target_find(V->m->arch);
    if (!tg || tg->mma < WGMMA) verr(V, i, "needs a target with warpgroups and mbarriers (sm_90a), not %s", V->m->arch ? V->m->arch : "the default");
    if (i->parent != V->f->body) verr(V, i, "must be in the kernel's body, not in a region");
    if (i->a.ival != 4 || V->f->producer_warps != i->a.ival)
        verr(V, i, "has %lld warps; the kernel says producer_warps=%d (a warpgroup: 4)", (long long)i->a.ival, V->f->producer_warps);
    if (V->f->num_warps % 4) verr(V, i, "needs whole warpgroups before it: num_warps=%d is not a multiple of 4", V->f->num_warps);
    if (!i->nregions || !i->regions[0]) return;
    for (const Inst *n = i->regions[0]->first; n; n = n->next)
        if (n->op == OP_YIELD && n->nops) verr(V, n, "ws_producer yields nothing");
    check_producer_block(V, i->regions[0]);
}

static void check_tma_store(Verifier *V, const Inst *i) {
    const Type *b = opt(V, i, 0);
    if (b->rank != 3 || !is_shared(b)) verr(V, i, "operand 0 must be a shared buffer, found %s", tstr(V, b));
    check_scalars(V, i, 1, i->nops);
    const TensorMap *tm = i->a.ival >= 0 && i->a.ival < V->f->ntmaps ? &V->f->tmaps[i->a.ival] : NULL;
    if (!tm) verr(V, i, "tensor map %lld is not declared (the kernel has %d)", (long long)i->a.ival, V->f->ntmaps);
    else if (i->nops - 2 != tm->rank) verr(V, i, "%d coordinates for tensor map %lld of rank %d", i->nops - 2, (long long)i->a.ival, tm->rank);
    if (tm && i->a.ival2) {
        RedKind k = (RedKind)(i->a.ival2 - 1);
        if (tm->elem == DT_VOID) verr(V, i, "reduces through tensor map %lld, which declares no element type", (long long)i->a.ival);
        else if (!tir_tma_reduce_ok(k, tm->elem))
            verr(V, i, "a tensor reduction has no %s on %s elements", k == RED_SUM ? "add" : k <= RED_XOR ? tir_red_names[k] : "?",
                 dtype_name(tm->elem));
        if (b->rank == 3 && dtype_bytes(b->dt) != tm->esize)
            verr(V, i, "reduces %s elements through tensor map %lld of %d-byte elements", dtype_name(b->dt), (long long)i->a.ival, tm->esize);
    }
}

static void check_tma_store_wait(Verifier *V, const Inst *i) {
    const Type *b = opt(V, i, 0);
    if (b->rank != 3 || !is_shared(b)) verr(V, i, "operand 0 must be a shared buffer, found %s", tstr(V, b));
}

/* turn_start / turn_wait / turn_pass: the computing warpgroups of a warp-specialized kernel, two or more */
static void check_turn(Verifier *V, const Inst *i) {
    if (!V->f->producer_warps || V->f->num_warps < 8 || V->f->num_warps % 4)
        verr(V, i, "needs two or more computing warpgroups beside a producer (num_warps=%d, producer_warps=%d)", V->f->num_warps,
             V->f->producer_warps);
}

static void check_tma_load(Verifier *V, const Inst *i) {
    const Type *b = opt(V, i, 0);
    if (b->rank != 3 || !is_shared(b)) verr(V, i, "operand 0 must be a shared buffer, found %s", tstr(V, b));
    if (!check_bars(V, i, 2)) return;
    check_scalars(V, i, 1, 2);
    check_scalars(V, i, 3, i->nops);
    const TensorMap *tm = i->a.ival >= 0 && i->a.ival < V->f->ntmaps ? &V->f->tmaps[i->a.ival] : NULL;
    if (!tm) verr(V, i, "tensor map %lld is not declared (the kernel has %d)", (long long)i->a.ival, V->f->ntmaps);
    else if (i->nops - 4 != tm->rank) verr(V, i, "%d coordinates for tensor map %lld of rank %d", i->nops - 4, (long long)i->a.ival, tm->rank);
}

static const CheckFn op_checks[OP_COUNT] = {
    [OP_MBAR_INIT] = check_mbar,
    [OP_MBAR_INVAL] = check_mbar,
    [OP_MBAR_EXPECT] = check_mbar,
    [OP_MBAR_WAIT] = check_mbar,
    [OP_MBAR_ARRIVE] = check_mbar,
    [OP_WS_PRODUCER] = check_ws_producer,
    [OP_TURN_START] = check_turn,
    [OP_TURN_WAIT] = check_turn,
    [OP_TURN_PASS] = check_turn,
    [OP_TMA_LOAD] = check_tma_load,
    [OP_TMA_STORE] = check_tma_store,
    [OP_TMA_STORE_WAIT] = check_tma_store_wait,
    [OP_WGMMA_WAIT] = check_wgmma_wait,
    [OP_LOCAL_STORE] = check_local_store,
    [OP_LOCAL_LOAD] = check_local_load,
    [OP_LOCAL_ALLOC] = check_local_alloc,
    [OP_LOCAL_VIEW] = check_local_view,
    [OP_ASYNC_COPY] = check_async_copy,
    [OP_CONST] = check_const,
    [OP_ARANGE] = check_arange,
    [OP_PROGRAM_ID] = check_program_id,
    [OP_NUM_PROGRAMS] = check_program_id,
    [OP_SPLAT] = check_splat,
    [OP_BROADCAST] = check_broadcast,
    [OP_EXPAND_DIMS] = check_expand_dims,
    [OP_RESHAPE] = check_reshape,
    [OP_TRANS] = check_trans,
    [OP_CONVERT_LAYOUT] = check_convert_layout,
    [OP_CMP] = check_cmp,
    [OP_SELECT] = check_select,
    [OP_CAST] = check_cast,
    [OP_BITCAST] = check_bitcast,
    [OP_POPC] = check_cast, /* i32 of any integer */
    [OP_INLINE_ASM] = check_inline_asm,
    [OP_CLZ] = check_cast,
    [OP_MULTIPLE_OF] = check_hint,
    [OP_MAX_CONTIGUOUS] = check_hint,
    [OP_MAX_CONSTANCY] = check_hint,
    [OP_ASSUME] = check_assume,
    [OP_PTR_ADD] = check_ptr_add,
    [OP_REDUCE] = check_reduce,
    [OP_GATHER] = check_gather,
    [OP_UNSTACK] = check_unstack,
    [OP_STACK] = check_stack,
    [OP_REDUCE_FN] = check_combine_fn,
    [OP_SCAN_FN] = check_combine_fn,
    [OP_MAP_FN] = check_map_fn,
    [OP_SCAN] = check_scan,
    [OP_DOT] = check_dot,
    [OP_LOAD] = check_load,
    [OP_STORE] = check_store,
    [OP_ATOMIC_RMW] = check_atomic_rmw,
    [OP_ATOMIC_CAS] = check_atomic_cas,
    [OP_ATOMIC_POLL] = check_atomic_poll,
    [OP_FOR] = check_for,
    [OP_WHILE] = check_while,
    [OP_IF] = check_if,
};

/* Operand ranges of the variadic ops (tir_op_info nops == -1); max -1: unbounded.
 * Regions: FOR, WHILE, REDUCE_FN, SCAN_FN and MAP_FN one, IF two, every other op none. */
static const struct {
    int8_t min, max, regions;
} arity[OP_COUNT] = {
    [OP_LOAD] = {1, 3, 0},       [OP_STORE] = {2, 3, 0}, [OP_ATOMIC_RMW] = {2, 3, 0}, [OP_ATOMIC_CAS] = {3, 4, 0},
    [OP_ATOMIC_POLL] = {2, 3, 0},
    [OP_FOR] = {3, -1, 1},       [OP_WHILE] = {1, -1, 1}, [OP_IF] = {0, 0, 2},    [OP_YIELD] = {0, -1, 0},
    [OP_ASYNC_COPY] = {3, 4, 0},  [OP_REDUCE_FN] = {1, -1, 1}, [OP_SCAN_FN] = {1, -1, 1}, [OP_MAP_FN] = {1, -1, 1}, [OP_PRINT] = {0, 64, 0},
    [OP_INLINE_ASM] = {0, 16, 0}, [OP_TMA_LOAD] = {5, 4 + TMA_MAX_RANK, 0}, [OP_MBAR_WAIT] = {3, 4, 0},
    [OP_TMA_STORE] = {3, 2 + TMA_MAX_RANK, 0},
    [OP_WS_PRODUCER] = {0, 0, 1},
    [OP_STACK] = {1, -1, 0},
};

static bool check_counts(Verifier *V, const Inst *i) {
    const OpInfo *info = &tir_op_info[i->op];
    bool ok = true;
    if (info->nops >= 0 ? i->nops != info->nops
                        : i->nops < arity[i->op].min || (arity[i->op].max >= 0 && i->nops > arity[i->op].max)) {
        if (info->nops >= 0) verr(V, i, "has %d operands, expected %d", i->nops, info->nops);
        else if (arity[i->op].max < 0) verr(V, i, "has %d operands, expected at least %d", i->nops, arity[i->op].min);
        else verr(V, i, "has %d operands, expected %d to %d", i->nops, arity[i->op].min, arity[i->op].max);
        ok = false;
    }
    if (info->nres >= 0 && i->nres != info->nres) {
        verr(V, i, "has %d results, expected %d", i->nres, info->nres);
        ok = false;
    }
    if (i->op == OP_FOR && ok && i->nres != i->nops - 3) {
        verr(V, i, "has %d results for %d init values", i->nres, i->nops - 3);
        ok = false;
    }
    if (i->op == OP_WHILE && ok && i->nres != i->nops) {
        verr(V, i, "has %d results for %d init values", i->nres, i->nops);
        ok = false;
    }
    if (i->nregions != arity[i->op].regions || (i->nregions && !i->regions)) {
        verr(V, i, "has %d regions, expected %d", i->nregions, arity[i->op].regions);
        ok = false;
    }
    if (i->nops && !i->ops) ok = false;
    if (i->nres && !i->res) ok = false;
    return ok;
}

/* ---- walk ---- */

static void verify_block(Verifier *V, Block *b, const Inst *owner);

static void verify_inst(Verifier *V, Block *b, Inst *i) {
    if ((unsigned)i->op >= OP_COUNT) {
        verr(V, NULL, "instruction with invalid opcode %d", (int)i->op);
        return;
    }
    if (i->parent != b) verr(V, i, "instruction's parent is not its block");
    bool ok = check_counts(V, i);
    /* operands: valid and in scope */
    for (int k = 0; ok && k < i->nops; k++) {
        ValueId v = i->ops[k];
        if (!valid_id(V, v) || !vt(V, v)) {
            verr(V, i, "operand %d is not a valid value", k);
            ok = false;
        } else if (V->state[v] == V_UNSEEN) {
            verr(V, i, "operand %d is used before its definition", k);
        } else if (V->state[v] == V_GONE) {
            verr(V, i, "operand %d is defined in a region that does not enclose this use", k);
        }
    }
    /* regions see the enclosing scope, not the results */
    for (int r = 0; r < i->nregions && i->regions; r++) {
        if (!i->regions[r]) {
            verr(V, i, "region %d is missing", r);
            ok = false;
            continue;
        }
        if (i->regions[r]->parent != i) verr(V, i, "region %d's parent is not this instruction", r);
        verify_block(V, i->regions[r], i);
    }
    for (int k = 0; k < i->nres && i->res; k++) {
        ValueId v = i->res[k];
        if (!valid_id(V, v)) {
            verr(V, i, "result %d is not a valid value", k);
            ok = false;
            continue;
        }
        if (V->f->values[v].def != i || V->f->values[v].index != k)
            verr(V, i, "result %d does not point back to its instruction", k);
        ok &= check_defined_type(V, i, v, "result", k);
        define(V, i, v);
    }
    if (!ok) return;

    const unsigned flags = tir_op_info[i->op].flags;
    CheckFn fn = op_checks[i->op];
    if (fn) fn(V, i);
    else if (flags & OPF_ELEMENTWISE) check_elementwise(V, i);

    if ((flags & OPF_ELEMENTWISE) && V->layouts) {
        const Layout *l = rest(V, i)->layout;
        for (int k = 0; k < i->nops; k++)
            if (opt(V, i, k)->rank && opt(V, i, k)->layout != l)
                verr(V, i, "operand %d has layout different from the result's", k);
    }
    if (i->op == OP_YIELD && !b->parent) verr(V, i, "outside a region");
    if (i->op == OP_RETURN && b->parent) verr(V, i, "inside a region");
}

static void verify_block(Verifier *V, Block *b, const Inst *owner) {
    uint32_t mark = V->nstack;
    for (int k = 0; k < b->nargs && owner; k++) {
        ValueId v = b->args[k];
        if (!valid_id(V, v)) {
            verr(V, owner, "region argument %d is not a valid value", k);
            continue;
        }
        if (V->f->values[v].block != b || V->f->values[v].def || V->f->values[v].index != k)
            verr(V, owner, "region argument %d does not point back to its block", k);
        check_defined_type(V, owner, v, "region argument", k);
        define(V, owner, v);
    }
    Inst *last = NULL;
    for (Inst *i = b->first; i; i = i->next) {
        if (V->nerrors > 100) break;
        if ((unsigned)i->op < OP_COUNT && (tir_op_info[i->op].flags & OPF_TERMINATOR) && i->next)
            verr(V, i, "terminator is not the last instruction of its block");
        verify_inst(V, b, i);
        last = i;
    }
    if (last != b->last) verr(V, owner, "block's last pointer is inconsistent");
    Op want = owner ? OP_YIELD : OP_RETURN;
    if (!last || last->op != want) {
        if (owner) verr(V, owner, "region does not end with 'yield'");
        else verr(V, NULL, "kernel body does not end with 'return'");
    }
    if (owner) scope_pop_to(V, mark);
}

static bool note_layout(Inst *i, void *ud) {
    Verifier *V = ud;
    for (int k = 0; k < i->nres && i->res; k++)
        if (valid_id(V, i->res[k]) && vt(V, i->res[k]) && vt(V, i->res[k])->layout) V->layouts = true;
    for (int r = 0; r < i->nregions && i->regions; r++)
        for (int k = 0; i->regions[r] && k < i->regions[r]->nargs; k++) {
            ValueId v = i->regions[r]->args[k];
            if (valid_id(V, v) && vt(V, v) && vt(V, v)->layout) V->layouts = true;
        }
    return !V->layouts;
}

static bool any_value_has_layout(const Func *f) {
    for (uint32_t v = 1; v < f->nvalues; v++)
        if (f->values[v].type && f->values[v].type->layout) return true;
    return false;
}

static void verify_func(Verifier *V, Func *f) {
    V->f = f;
    V->nstack = 0;
    V->layouts = false;
    V->state = calloc(f->nvalues ? f->nvalues : 1, 1);
    V->stack = malloc(sizeof(ValueId) * (f->nvalues ? f->nvalues : 1));
    V->ok_n = 0;
    if (V->ok_cap) memset(V->ok_types, 0, V->ok_cap * sizeof *V->ok_types);
    if (!V->state || !V->stack) out_of_memory();
    if (!f->body) {
        verr(V, NULL, "kernel has no body");
        goto out;
    }
    if (!is_pow2(f->num_warps)) verr(V, NULL, "num_warps %d is not a power of two", f->num_warps);
    /* 1. are layouts assigned? */
    for (int k = 0; k < f->nargs; k++) {
        ValueId v = f->args[k].value;
        if (valid_id(V, v) && vt(V, v) && vt(V, v)->layout) V->layouts = true;
    }
    /* every value the walk can meet is in f->values: when none of them has a layout, neither has the IR */
    if (!V->layouts && any_value_has_layout(f)) tir_walk(f->body, note_layout, V);
    /* 2. kernel arguments are the body's arguments */
    if (f->body->nargs != f->nargs)
        verr(V, NULL, "body has %d arguments for %d kernel arguments", f->body->nargs, f->nargs);
    for (int k = 0; k < f->nargs; k++) {
        ValueId v = f->args[k].value;
        if (!valid_id(V, v) || k >= f->body->nargs || f->body->args[k] != v) {
            verr(V, NULL, "argument %%%s is not the body's argument %d", f->args[k].name ? f->args[k].name : "?", k);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "argument %%%.40s", f->args[k].name ? f->args[k].name : "?");
        check_value_type(V, NULL, v, what);
        define(V, NULL, v);
    }
    /* 3, 4. */
    verify_block(V, f->body, NULL);
out:
    free(V->state);
    free(V->stack);
    V->state = NULL;
    V->stack = NULL;
}

bool tir_verify(Module *m, Diag *d) {
    Verifier V = {.m = m, .d = d};
    for (int k = 0; k < m->nfuncs; k++) verify_func(&V, m->funcs[k]);
    free(V.ok_types);
    return V.nerrors == 0;
}

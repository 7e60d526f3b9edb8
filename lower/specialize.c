/* specialize.c - replace kernel arguments specialized to 1 by the constant.
 *
 * The JIT compiles a kernel once per specialization key: an integer argument
 * whose run-time value is 1 is marked SPEC_ONE in the signature (`#one` in
 * the text form), so the compiled code may assume it.  This pass makes the
 * assumption explicit so canonicalize can fold it (strides of 1 become
 * contiguity, `x * stride` becomes `x`).  The argument itself stays in the
 * signature: the launch ABI does not change.  SPEC_DIV16 is read by the axis
 * analysis and needs nothing here.
 *
 * Algorithm, per kernel:
 *   1. For each argument with spec == SPEC_ONE, in order: reject pointers
 *      (a diagnostic; the JIT never marks them, but the text form can).
 *   2. Insert `const 1` of the argument's type at the top of the body, after
 *      the constants inserted for earlier arguments, with the kernel's loc.
 *   3. Replace every use of the argument by that constant. */
#include "passes.h"

bool lower_specialize(Module *m, Diag *d) {
    bool ok = true;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        Inst *first = f->body->first; /* constants go before the original first inst */
        for (int a = 0; a < f->nargs; a++) {
            FuncArg *arg = &f->args[a];
            if (arg->spec != SPEC_ONE) continue;
            const Type *t = tir_vtype(f, arg->value);
            if (t->dt == DT_PTR || dtype_is_storage(t->dt) || t->dt == DT_VOID) {
                diag_error(d, f->loc, "kernel '%s': argument '%s' of type %s cannot be specialized to 1", f->name,
                           arg->name, dtype_name(t->dt));
                ok = false;
                continue;
            }
            Builder b = {.f = f, .block = f->body, .before = first, .loc = f->loc};
            ValueId one = dtype_is_float(t->dt) ? tir_const_float(&b, t, 1.0) : tir_const_int(&b, t, 1);
            tir_replace_uses(f, arg->value, one);
        }
    }
    return ok;
}

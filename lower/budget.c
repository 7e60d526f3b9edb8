/* budget.c - a kernel far past the size budget refused before the passes spend time on it.
 *
 * llvm_codegen.c refuses a kernel whose operations hold more than TIR_KERNEL_WORDS registers' worth of values
 * in each thread, summed over the kernel, counted with the layouts the passes chose.  The passes run in time
 * linear in the operations, but a kernel unrolled to a million of them took 4 s of CPU in them (canonicalize
 * and the verifier after each pass most) before that refusal.  This counts the same sum on the front end's
 * output, the kernel inlined and unrolled, in one walk (that kernel's whole refused compile now takes 0.45 s of
 * CPU, the front end's):
 *   1. a value of a tile takes ceil(numel / threads) of its element's registers (a 64-bit element two): no
 *      layout holds fewer in a thread, threads being the program's 32 * num_warps;
 *   2. a scalar takes its one or two registers; an operation with no result its largest operand; an `if`,
 *      `for` or `while` TIR_CONTROL_WORDS more, as llvm_codegen.c counts them;
 *   3. a constant counts nothing (the passes fold and merge them), and the limit is TIR_FRONT_END_FACTOR
 *      times the budget: the passes merge repeated operations and contract a multiply and an add into one
 *      fma, so an unrolled `y = y * x + 1.0` holds half the registers' worth after them;
 *   4. past the limit, the error at the operation that crosses it, with llvm_codegen.c's words.
 * The shipped kernels count at most about 2,200 here (spec_verify), nowhere near. */
#include "budget.h"

typedef struct FrontEndCount {
    Func *f;
    int64_t threads, total;
    Diag *d;
    bool over;
} FrontEndCount;

static int64_t words_of(const FrontEndCount *c, ValueId v) {
    const Type *t = tir_vtype(c->f, v);
    int bits = t->dt == DT_PTR ? 64 : dtype_bits(t->dt);
    int64_t per = bits > 32 ? bits / 32 : 1, numel = 1;
    for (int k = 0; k < t->rank; k++) numel *= t->shape[k];
    return per * ((numel + c->threads - 1) / c->threads);
}

static bool count_inst(Inst *i, void *ud) {
    FrontEndCount *c = ud;
    int64_t w = 0;
    if (i->op != OP_CONST)
        for (int r = 0; r < i->nres; r++) w += words_of(c, i->res[r]);
    if (!i->nres)
        for (int k = 0; k < i->nops; k++) {
            int64_t ow = words_of(c, i->ops[k]);
            if (ow > w) w = ow;
        }
    if (i->op == OP_IF || i->op == OP_FOR || i->op == OP_WHILE) w += TIR_CONTROL_WORDS;
    c->total += w;
    if (c->total <= (int64_t)TIR_FRONT_END_FACTOR * TIR_KERNEL_WORDS) return true;
    diag_error(c->d, i->loc,
               "kernel '%s' too large after inlining and unrolling: its operations hold more than %d registers' worth of "
               "values in each thread (the sum over the kernel, what LLVM would get as instructions; here more than %d before "
               "optimization): use smaller tiles or fewer unrolled iterations",
               c->f->name, TIR_KERNEL_WORDS, TIR_FRONT_END_FACTOR * TIR_KERNEL_WORDS);
    c->over = true;
    return false;
}

bool tir_check_front_end_size(Module *m, Diag *d) {
    bool ok = true;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        FrontEndCount c = {.f = f, .threads = 32 * (int64_t)(f->num_warps > 0 ? f->num_warps : 1), .d = d};
        tir_walk(f->body, count_inst, &c);
        ok = ok && !c.over;
    }
    return ok;
}

/* exec_call.c - calls to .func, their frames, param and local memory, and
 * the builtins the emulator provides (vprintf, __assertfail, malloc and free: heap.c).
 *
 * The PTX calling convention nvcc and LLVM use (the ABI of -G code and of
 * non-inlined device functions) passes everything through the .param
 * space:
 *     { .param .b32 param0;  st.param.b32 [param0+0], %r1;
 *       .param .b32 retval0;
 *       call.uni (retval0), f, (param0);
 *       ld.param.b32 %r2, [retval0+0]; }
 * Algorithm:
 *   1. Every thread has a call stack of EmuFrames.  Frame 0 is the entry
 *      (registers and locals in the EmuBlock); a callee's frame owns its
 *      register file, its .local memory, its arguments area (return values
 *      then parameters, as laid out in its signature: EMU_PARAM_ARGS) and
 *      the area of the call-sequence .param variables its body declares
 *      (EMU_PARAM_FRAME).  Buffers are kept and reused by later calls.
 *   2. call: push a frame, copy the callee's constant template into its
 *      registers and the caller's special registers after it, relocate the
 *      slots holding .local addresses by the frame's local base, copy each
 *      argument's bytes from the caller's .param variable into the callee's
 *      parameter, and continue at the callee's first instruction.
 *      A .func's .reg parameters are registers of its frame: the argument
 *      (a register, an immediate or a .param variable of the caller) is
 *      copied into the register, and a .reg return value from it.
 *   3. ret: copy each return value into the caller's .param variable, pop,
 *      continue after the call.  ret in frame 0 ends the thread.  A call
 *      and a ret first end the thread's wgmma groups in flight, into the
 *      frame they leave (emu_wgmma_frame_end: ptxas serializes wgmma at
 *      function boundaries).
 *   4. .local addresses of all frames form one per-thread address space:
 *      frame d's locals start where frame d-1's end (16-byte aligned), so a
 *      pointer to a caller's local array (a printf argument buffer, an
 *      array passed by pointer) stays valid in its callees.
 *   5. Builtins run at the call, in the caller's frame: vprintf formats on
 *      the host into the block's output, which the launch prints in block
 *      order when it ends; __assertfail stops the launch with the message. */
#include "emu/exec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t align16(uint32_t v) { return (v + 15) & ~15u; }

/* Grows *p to at least `need` bytes (capacity in *cap); false when out of memory. */
static bool reserve(void **p, uint32_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t nc = need < 64 ? 64 : need;
    void *np = realloc(*p, nc);
    if (!np) return false;
    *p = np;
    *cap = (uint32_t)nc;
    return true;
}

/* A frame's local memory, from its local_base: static .local variables, then (a .func's) its parameters
 * (emu_args_offset), then what alloca took. */
/* Exact: an access past a variable into the padding that rounds the entry's per-thread stride (b->local_size) to
 * 16 bytes is out of bounds, as one past a callee's. */
static uint32_t frame_static(const EmuBlock *b, uint32_t d, const EmuFrame *fr) { return d ? fr->fn->local_size : b->L->f->local_size; }
static uint32_t frame_args(uint32_t d, const EmuFrame *fr) { return d ? fr->fn->param_size : 0; }
static uint64_t frame_dyn_base(const EmuBlock *b, uint32_t d, const EmuFrame *fr) {
    return (uint64_t)fr->local_base + align16(frame_static(b, d, fr)) + align16(frame_args(d, fr));
}

EmuFrame emu_frame0(const EmuBlock *b, const EmuThread *t) {
    EmuFrame f;
    memset(&f, 0, sizeof f);
    f.fn = b->L->f;
    f.r = b->regs + (size_t)t->linear * b->L->f->nslots;
    f.local = b->local + (size_t)t->linear * b->local_size;
    f.fparams = b->fparams + (size_t)t->linear * b->fparam_size;
    return f;
}

uint8_t *emu_param(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write) {
    EmuFrame f0, *fr = t->frames ? &t->frames[t->depth] : (f0 = emu_frame0(b, t), &f0);
    const char *what = write ? "memcheck: invalid param write" : "memcheck: invalid param read";
    if (t->depth) { /* a .func's own parameters are at local addresses of its frame (emu_func_arg_sym) */
        uint64_t abase = fr->local_base + emu_args_offset(fr->fn), off = addr - abase, have = fr->fn->param_size;
        if (addr >= abase && off <= have && size <= have - off) return fr->args + off;
    }
    if (addr < EMU_PARAM_FRAME) {
        if (write) {
            emu_fault(b, t, in, "memcheck: write to kernel parameter space",
                      "offset %" PRIu64 ", size %u; kernel parameters are read-only", addr, size);
            return NULL;
        }
        if (addr > b->L->param_size || size > b->L->param_size - addr) {
            emu_fault(b, t, in, what, "offset %" PRIu64 ", size %u; the kernel has %u bytes of parameters", addr, size,
                      b->L->param_size);
            return NULL;
        }
        return b->L->params + addr;
    }
    if (addr < EMU_PARAM_ARGS) {
        uint64_t off = addr - EMU_PARAM_FRAME, have = fr->fn->frame_param_size;
        if (off > have || size > have - off) {
            emu_fault(b, t, in, what, "offset %" PRIu64 ", size %u, outside the %" PRIu64 " bytes of call-sequence .param "
                      "variables of '%s'", off, size, have, fr->fn->name);
            return NULL;
        }
        return fr->fparams + off;
    }
    uint64_t off = addr - EMU_PARAM_ARGS, have = t->depth ? fr->fn->param_size : 0;
    if (!t->depth) { /* a kernel has no arguments window: an entry parameter's address run off its start */
        emu_fault(b, t, in, what, "address 0x%" PRIx64 ", size %u, is outside the kernel's %u bytes of parameters (a negative "
                  "offset?)", addr, size, b->L->param_size);
        return NULL;
    }
    if (off > have || size > have - off) {
        emu_fault(b, t, in, what, "offset %" PRIu64 ", size %u, outside the %" PRIu64 " bytes of parameters of '%s'", off, size,
                  have, fr->fn->name);
        return NULL;
    }
    return fr->args + off;
}

uint8_t *emu_local(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write) {
    EmuFrame f0;
    const EmuFrame *fr = t->frames ? t->frames : (f0 = emu_frame0(b, t), &f0);
    for (uint32_t d = 0; d <= t->depth; d++) {
        uint64_t have = frame_static(b, d, &fr[d]), off = addr - fr[d].local_base;
        if (addr >= fr[d].local_base && off <= have && size <= have - off) return fr[d].local + off;
        uint64_t abase = fr[d].local_base + align16((uint32_t)have), aoff = addr - abase, ahave = frame_args(d, &fr[d]);
        if (ahave && addr >= abase && aoff <= ahave && size <= ahave - aoff) return fr[d].args + aoff; /* its parameters */
        uint64_t dbase = frame_dyn_base(b, d, &fr[d]), doff = addr - dbase; /* its alloca'd bytes */
        if (fr[d].dyn_size && addr >= dbase && doff <= fr[d].dyn_size && size <= fr[d].dyn_size - doff) return fr[d].dyn + doff;
    }
    char what[96];
    snprintf(what, sizeof what, "memcheck: invalid __local__ %s of size %u bytes", write ? "write" : "read", size);
    const EmuFrame *top = &fr[t->depth]; /* the thread's extent: the top frame's alloca'd bytes, else its parameters or variables */
    uint32_t top_static = frame_static(b, t->depth, top), top_args = frame_args(t->depth, top);
    uint64_t total = top->dyn_size ? frame_dyn_base(b, t->depth, top) + top->dyn_size
                     : top_args  ? top->local_base + align16(top_static) + top_args
                                 : top->local_base + top_static;
    emu_fault(b, t, in, what, "address 0x%" PRIx64 " is out of bounds: the thread has %" PRIu64 " bytes of local memory in %u "
              "frame%s", addr, total, t->depth + 1, t->depth ? "s" : "");
    return NULL;
}

/* ---- call and return ---- */
/* t->frames holds frame d (made on the first call or alloca: until then frame 0 lives in the block). */
static bool frames_to(EmuBlock *b, EmuThread *t, const EmuIns *in, uint32_t d) {
    if (d < t->nframes) return true;
    uint32_t nn = t->nframes ? t->nframes * 2 : 4;
    while (nn <= d) nn *= 2;
    EmuFrame *nf = realloc(t->frames, nn * sizeof *nf);
    if (!nf) return emu_fault(b, t, in, "out of host memory", "for a call frame");
    memset(nf + t->nframes, 0, (nn - t->nframes) * sizeof *nf);
    if (!t->frames) nf[0] = emu_frame0(b, t);
    t->frames = nf;
    t->nframes = nn;
    return true;
}

static bool push_frame(EmuBlock *b, EmuThread *t, const EmuIns *in, const EmuFunc *callee) {
    if (t->depth + 1 > EMU_MAX_CALL_DEPTH) /* depth 0 is the kernel: 1024 nested calls run, the 1025th stops */
        return emu_fault(b, t, in, "call stack overflow", "more than %u nested calls (unbounded recursion?)", EMU_MAX_CALL_DEPTH);
    if (!frames_to(b, t, in, t->depth + 1)) return false;
    EmuFrame *cur = &t->frames[t->depth], *nf = &t->frames[t->depth + 1];
    uint64_t base = frame_dyn_base(b, t->depth, cur) + align16(cur->dyn_size); /* after all of the caller's */
    /* and past the kernel's parameter bytes: a .func's own parameters are at local addresses of its frame, which
     * ld.param takes too (emu_param), so a param-space address below them always names a kernel parameter (its
     * address passed to a callee: a __grid_constant__ struct by reference) */
    if (base < align16(b->L->param_size)) base = align16(b->L->param_size);
    if (base + emu_args_offset(callee) + callee->param_size > EMU_MAX_THREAD_LOCAL)
        return emu_fault(b, t, in, "call stack overflow", "the frames' local memory exceeds %u bytes (a thread's limit)",
                         (unsigned)EMU_MAX_THREAD_LOCAL);
    if (!reserve((void **)&nf->r, &nf->cap_r, (size_t)callee->nslots * sizeof(uint64_t)) ||
        !reserve((void **)&nf->local, &nf->cap_local, callee->local_size + 1) ||
        !reserve((void **)&nf->args, &nf->cap_args, callee->param_size + 1) ||
        !reserve((void **)&nf->fparams, &nf->cap_fparams, callee->frame_param_size + 1))
        return emu_fault(b, t, in, "out of host memory", "for the frame of '%s'", callee->name);
    nf->fn = callee;
    nf->ret_pc = t->pc;
    nf->local_base = (uint32_t)base;
    nf->dyn_size = 0;
    memcpy(nf->r, callee->slot_init, (size_t)callee->nslots * sizeof(uint64_t));
    memcpy(nf->r + EMU_SLOT_SREG, cur->r + EMU_SLOT_SREG, EMU_SREG_COUNT * sizeof(uint64_t));
    for (uint32_t i = 0; i < callee->nlocal_slots; i++) nf->r[callee->local_slots[i]] += base;
    memset(nf->local, 0, callee->local_size);
    memset(nf->args, 0, callee->param_size);
    memset(nf->fparams, 0, callee->frame_param_size);
    return true;
}

/* Copies `n` bytes between a call-list element of the current frame and buf: the .param variable `sym`,
 * or (EMU_CALL_REG) a register, whose low n bytes are the value (zero-extended when written). */
static bool param_copy(EmuBlock *b, EmuThread *t, const EmuIns *in, uint32_t sym, uint8_t *buf, uint32_t n, bool to_sym) {
    if (sym & EMU_CALL_REG) {
        uint64_t *r = &t->r[sym & ~EMU_CALL_REG], v = 0;
        if (n > 8) n = 8;
        if (to_sym) {
            memcpy(&v, buf, n);
            *r = v;
        } else {
            memcpy(buf, r, n);
        }
        return true;
    }
    const EmuSym *s = &b->L->m->syms[sym];
    if (n > s->size) n = (uint32_t)s->size;
    if (!n) return true;
    uint8_t *p = emu_param(b, t, in, s->addr, n, to_sym);
    if (!p) return false;
    if (to_sym) memcpy(p, buf, n);
    else memcpy(buf, p, n);
    return true;
}

static bool builtin_vprintf(EmuBlock *b, EmuThread *t, const EmuIns *in);
static bool builtin_assertfail(EmuBlock *b, EmuThread *t, const EmuIns *in);
static bool builtin_heap(EmuBlock *b, EmuThread *t, const EmuIns *in, bool is_free);

/* The function an indirect call's register holds (EMU_FUNC_WINDOW), checked as check_calls (module.c) checks
 * direct calls; NULL after emu_fault. */
static const EmuFunc *indirect_callee(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    const EmuModule *m = b->L->m;
    uint64_t a = EMU_R(t, in, 1), k = (a - EMU_FUNC_WINDOW) / EMU_FUNC_STRIDE;
    if (a < EMU_FUNC_WINDOW || (a - EMU_FUNC_WINDOW) % EMU_FUNC_STRIDE || k >= m->nfuncs) {
        emu_fault(b, t, in, "invalid call", "indirect call to 0x%" PRIx64 ", which is not the address of a function", a);
        return NULL;
    }
    const EmuFunc *c = &m->funcs[k];
    if (c->alias1) c = &m->funcs[c->alias1 - 1]; /* the address of an .alias: its aliasee (resolve_aliases, module.c) */
    if (!c->defined && !c->builtin) {
        emu_fault(b, t, in, "invalid call", "indirect call of '%s', which has no body in this module", c->name);
        return NULL;
    }
    /* a last argument that is an incomplete array (s[]) may be left out, as in a direct call (check_calls, module.c) */
    bool open_end = in->on[2] + 1u == c->nparams && c->params[c->nparams - 1].incomplete;
    if (in->on[0] > c->nrets || (in->on[2] != c->nparams && !open_end)) {
        emu_fault(b, t, in, "invalid call", "indirect call of '%s' with %u argument%s and %u return value%s; it takes %u and %u",
                  c->name, in->on[2], in->on[2] == 1 ? "" : "s", in->on[0], in->on[0] == 1 ? "" : "s", c->nparams, c->nrets);
        return NULL;
    }
    return c;
}

/* A float literal argument as ptxas (CUDA 13) passes it, read from the code it makes: held as 64 bits (0f's 32 bits
 * zero-extended, 0d's, a decimal literal's double), of which a parameter gets its low bytes, with two exceptions: a
 * 64-bit literal for an .f32 parameter is converted (round to nearest: 0d3FF4CCCCCCCCCCCD and 1.3 pass 0f3FA66666),
 * and a 16-bit parameter (.f16, .b16) gets 0.  The other parameters take no float literal (ptxas: "Type of
 * argument does not match formal parameter"). */
static uint64_t float_literal_arg(uint64_t held, bool is64, const EmuParam *p) {
    if (p->size == 2) return 0;
    if (is64 && p->ty == EMU_T_F32) {
        double d;
        memcpy(&d, &held, 8);
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    return p->size >= 8 ? held : held & ((1ull << (8 * p->size)) - 1);
}

bool emu_call(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    const EmuModule *m = b->L->m;
    const EmuFunc *callee = in->target == UINT32_MAX ? indirect_callee(b, t, in) : &m->funcs[in->target];
    if (!callee) return false;
    const uint32_t *vec = t->fn->vec;
    if (callee->builtin) {
        bool ok;
        switch (callee->builtin) {
        case EMU_BUILTIN_VPRINTF: ok = builtin_vprintf(b, t, in); break;
        case EMU_BUILTIN_MALLOC: case EMU_BUILTIN_FREE: ok = builtin_heap(b, t, in, callee->builtin == EMU_BUILTIN_FREE); break;
        default: ok = builtin_assertfail(b, t, in); break;
        }
        if (ok) t->pc++;
        return ok;
    }
    if (!emu_wgmma_frame_end(b, t, in) || !push_frame(b, t, in, callee)) return false;
    EmuFrame *nf = &t->frames[t->depth + 1];
    for (uint32_t k = 0; k < in->on[2]; k++) { /* arguments, read in the caller's frame */
        const EmuParam *p = &callee->params[k];
        if (k < 64 && (in->call.flit >> k & 1)) { /* a float literal (its bits in a constant slot: parse.c) */
            uint64_t v = float_literal_arg(t->r[vec[in->o[2] + k] & ~EMU_CALL_REG], in->call.flit64 >> k & 1, p);
            memcpy(p->reg ? (uint8_t *)&nf->r[p->slot] : nf->args + p->offset, &v, p->reg ? 8 : (p->size < 8 ? p->size : 8));
            continue;
        }
        if (p->reg) { /* a .reg parameter: the callee's register */
            nf->r[p->slot] = 0;
            if (!param_copy(b, t, in, vec[in->o[2] + k], (uint8_t *)&nf->r[p->slot], p->size, false)) return false;
        } else if (!param_copy(b, t, in, vec[in->o[2] + k], nf->args + p->offset, p->size, false)) {
            return false;
        }
    }
    t->depth++;
    t->fn = callee;
    t->r = nf->r;
    t->pc = 0;
    return true;
}

bool emu_ret(EmuBlock *b, EmuThread *t) {
    if (!emu_wgmma_frame_end(b, t, &t->fn->code[t->pc])) return false;
    EmuFrame *fr = &t->frames[t->depth], *caller = &t->frames[t->depth - 1];
    const EmuIns *call = &caller->fn->code[fr->ret_pc];
    const EmuFunc *callee = fr->fn;
    t->depth--;
    t->fn = caller->fn;
    t->r = caller->r;
    t->pc = fr->ret_pc;
    for (uint32_t k = 0; k < call->on[0]; k++) { /* return values, written in the caller's frame */
        const EmuParam *p = &callee->rets[k];
        uint8_t *src = p->reg ? (uint8_t *)&fr->r[p->slot] : fr->args + p->offset; /* a .reg return value: the callee's register */
        if (!param_copy(b, t, call, caller->fn->vec[call->o[0] + k], src, p->size, true)) return false;
    }
    t->pc++;
    return true;
}

void emu_stacks_free(EmuBlock *b) {
    for (uint32_t i = 0; b->t && i < b->nthreads; i++) {
        EmuThread *t = &b->t[i];
        for (uint32_t d = 0; d < t->nframes; d++) {
            free(t->frames[d].dyn);
            if (!d) continue; /* the rest of frame 0 is the block's */
            free(t->frames[d].r);
            free(t->frames[d].local);
            free(t->frames[d].args);
            free(t->frames[d].fparams);
        }
        free(t->frames);
        t->frames = NULL;
        t->nframes = 0;
    }
}

/* ---- alloca, stacksave, stackrestore ----
 * A frame's alloca'd bytes follow its static local memory and (a .func's) parameters in the local address
 * space, and the frames of its later callees follow them; stackrestore gives back what was taken after the
 * stacksave that returned its operand.  The bytes read as zero; reads past what was taken are memcheck's. */
bool emu_exec_stack(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    if (!frames_to(b, t, in, t->depth)) return false;
    EmuFrame *fr = &t->frames[t->depth];
    uint64_t base = frame_dyn_base(b, t->depth, fr);
    uint64_t mask = emu_type_size(in->ty) == 4 ? 0xFFFFFFFFull : ~0ull;
    if (in->op == EMU_OP_STACKSAVE) {
        EMU_R(t, in, 0) = (base + fr->dyn_size) & mask;
        return true;
    }
    if (in->op == EMU_OP_STACKRESTORE) {
        uint64_t a = EMU_R(t, in, 0) & mask;
        if (a < base || a - base > fr->dyn_size)
            return emu_fault(b, t, in, "invalid stackrestore", "0x%" PRIx64 " is not a stack pointer of this frame (its stack is "
                             "0x%" PRIx64 "-0x%" PRIx64 ")", a, base, base + fr->dyn_size);
        fr->dyn_size = (uint32_t)(a - base);
        return true;
    }
    uint64_t size = EMU_R(t, in, 1) & mask, align = in->nops > 2 ? EMU_R(t, in, 2) : 8;
    if (!align || (align & (align - 1)) || align > 4096)
        return emu_fault(b, t, in, "invalid alloca", "alignment %" PRIu64 " (a power of two up to 4096)", align);
    uint64_t at = (base + fr->dyn_size + align - 1) & ~(align - 1), end = at - base + size;
    if (size > EMU_MAX_THREAD_LOCAL || at + size > EMU_MAX_THREAD_LOCAL)
        return emu_fault(b, t, in, "call stack overflow", "alloca of %" PRIu64 " bytes: the frames' local memory exceeds %u bytes (a thread's limit)",
                         size, (unsigned)EMU_MAX_THREAD_LOCAL);
    if (!reserve((void **)&fr->dyn, &fr->cap_dyn, (size_t)end + 1))
        return emu_fault(b, t, in, "out of host memory", "for an alloca of %" PRIu64 " bytes", size);
    memset(fr->dyn + fr->dyn_size, 0, (size_t)end - fr->dyn_size);
    fr->dyn_size = (uint32_t)end;
    EMU_R(t, in, 0) = at & mask;
    return true;
}

/* ---- builtins ---- */
/* The value of argument k of a builtin call (`size` bytes of its .param variable). */
static bool arg_value(EmuBlock *b, EmuThread *t, const EmuIns *in, uint32_t k, unsigned size, uint64_t *v) {
    *v = 0;
    if (k >= in->on[2]) return emu_fault(b, t, in, "invalid call", "argument %u is missing", k);
    return param_copy(b, t, in, t->fn->vec[in->o[2] + k], (uint8_t *)v, size, false);
}

/* Device bytes at a generic address (checked like a load by t). */
static bool dev_read(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, void *dst, unsigned size) {
    const uint8_t *p = emu_access(b, t, in, EMU_SP_GENERIC, addr, size, 1, false);
    if (!p) return false;
    memcpy(dst, p, size);
    return true;
}

/* A NUL-terminated device string into s (at most `max` bytes). */
static bool dev_string(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, Str *s, size_t max) {
    for (size_t i = 0; i < max; i++) {
        char c;
        if (!dev_read(b, t, in, addr + i, &c, 1)) return false;
        if (!c) return true;
        str_putc(s, c);
    }
    return true;
}

/* The digits at *p (a printf width or precision; none: 0), at most `most`; *p moves past them. */
static uint64_t printf_count(const char **p, uint64_t most) {
    uint64_t v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++)
        if (v <= most) v = v * 10 + (uint64_t)(**p - '0');
    return v < most ? v : most;
}

/* Formats a printf format (device string at fmt) with the argument buffer
 * at args: each argument naturally aligned after the previous one, as C
 * passes them to a variadic function (int for char/short, double for
 * float, 8-byte pointers and long).  `*` widths and precisions are int
 * arguments.  Returns the number of arguments read, or -1 after a fault. */
static int format(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t fmt, uint64_t args, Str *out) {
    Str f = {0};
    if (!dev_string(b, t, in, fmt, &f, 1 << 16)) { str_free(&f); return -1; }
    const char *p = f.buf ? f.buf : "";
    uint64_t off = 0;
    int nargs = 0;
    bool ok = true;
    /* A block whose output passes EMU_PRINTF_LIMIT is dropped whole (print_output), so past it the rest is formatted
     * into junk (arguments are still read: a bad one faults as before) with no width or precision, and a width or
     * precision is at most one past the limit: "%2000000000d" padded gigabytes, or failed past INT_MAX. */
    Str junk = {0};
    const uint64_t limit = EMU_PRINTF_LIMIT;
    /* the next argument of `sz` bytes into *v */
#define NEXT_ARG(sz, v)                                                             \
    do {                                                                            \
        off = (off + (sz) - 1) / (sz) * (sz);                                       \
        uint64_t raw_ = 0;                                                          \
        ok = ok && dev_read(b, t, in, args + off, &raw_, (sz));                     \
        *(v) = raw_;                                                                \
        off += (sz);                                                                \
        nargs++;                                                                    \
    } while (0)
    while (*p && ok) {
        if (out != &junk && out->len > limit) {
            out->len = limit + 1;
            out->buf[out->len] = 0;
            out = &junk;
        }
        junk.len = 0;
        const uint64_t most = out == &junk ? 0 : limit + 1; /* a width's or a precision's largest value */
        if (*p != '%') { str_putc(out, *p++); continue; }
        if (p[1] == '%') { str_putc(out, '%'); p += 2; continue; }
        /* spec = "%" flags* (width | "*")? ("." (prec | "*"))? length? conversion;
         * rebuilt with the `*` values written in */
        const char *start = p++;
        Str spec = {0};
        str_putc(&spec, '%');
        while (*p && strchr("-+ #0", *p)) str_putc(&spec, *p++);
        if (*p == '*') {
            uint64_t v;
            NEXT_ARG(4, &v);
            int64_t w = (int32_t)v; /* INT_MIN too: a negative width is the '-' flag */
            uint64_t mag = (uint64_t)(w < 0 ? -w : w);
            str_printf(&spec, "%s%" PRIu64, w < 0 ? "-" : "", mag < most ? mag : most);
            p++;
        } else if (*p >= '0' && *p <= '9') {
            str_printf(&spec, "%" PRIu64, printf_count(&p, most));
        }
        if (*p == '.') {
            p++;
            if (*p == '*') {
                uint64_t v;
                NEXT_ARG(4, &v);
                if ((int32_t)v >= 0) str_printf(&spec, ".%" PRIu64, (uint64_t)(int32_t)v < most ? (uint64_t)(int32_t)v : most);
                p++;
            } else {
                str_printf(&spec, ".%" PRIu64, printf_count(&p, most));
            }
        }
        bool wide = false; /* l, ll, j, z, t, q: an 8-byte integer */
        int half = 0;      /* h: 1, hh: 2 */
        while (*p && strchr("hlLqjzt", *p)) {
            if (*p == 'h') half++;
            else wide = true;
            p++;
        }
        char conv = *p ? *p++ : 0;
        uint64_t v = 0;
        switch (conv) {
        case 'd': case 'i': {
            NEXT_ARG(wide ? 8u : 4u, &v);
            long long x = wide ? (long long)(int64_t)v : half == 1 ? (short)v : half == 2 ? (signed char)v : (int32_t)v;
            str_printf(&spec, "ll%c", conv);
            if (ok) str_printf(out, spec.buf, x);
            break;
        }
        case 'u': case 'o': case 'x': case 'X': {
            NEXT_ARG(wide ? 8u : 4u, &v);
            unsigned long long x = wide ? v : half == 1 ? (unsigned short)v : half == 2 ? (unsigned char)v : (uint32_t)v;
            str_printf(&spec, "ll%c", conv);
            if (ok) str_printf(out, spec.buf, x);
            break;
        }
        case 'c':
            NEXT_ARG(4, &v);
            str_putc(&spec, 'c');
            if (ok) str_printf(out, spec.buf, (int)(unsigned char)v);
            break;
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
            NEXT_ARG(8, &v);
            double d;
            memcpy(&d, &v, 8);
            str_putc(&spec, conv);
            if (ok) str_printf(out, spec.buf, d);
            break;
        }
        case 's': {
            NEXT_ARG(8, &v);
            Str str = {0};
            if (ok && !v) str_puts(&str, "(null)");
            else if (ok) ok = dev_string(b, t, in, v, &str, 1 << 16);
            str_putc(&spec, 's');
            if (ok) str_printf(out, spec.buf, str.buf ? str.buf : "");
            str_free(&str);
            break;
        }
        case 'p':
            NEXT_ARG(8, &v);
            if (ok) str_printf(out, "0x%" PRIx64, v);
            break;
        default: /* not a conversion: printed as written */
            str_printf(out, "%.*s", (int)(p - start), start);
            break;
        }
        str_free(&spec);
    }
#undef NEXT_ARG
    if (out != &junk && out->len > limit) {
        out->len = limit + 1;
        out->buf[out->len] = 0;
    }
    str_free(&junk);
    str_free(&f);
    return ok ? nargs : -1;
}

static bool builtin_vprintf(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    uint64_t fmt, args;
    if (!arg_value(b, t, in, 0, 8, &fmt) || !arg_value(b, t, in, 1, 8, &args)) return false;
    int32_t r;
    if (!fmt) r = -1;
    else if ((r = format(b, t, in, fmt, args, &b->out)) < 0) return false;
    if (in->on[0]) {
        uint8_t v[4];
        memcpy(v, &r, 4);
        if (!param_copy(b, t, in, t->fn->vec[in->o[0]], v, 4, true)) return false;
    }
    return true;
}

/* malloc(size) -> pointer, free(pointer): the device heap (heap.c) */
static bool builtin_heap(EmuBlock *b, EmuThread *t, const EmuIns *in, bool is_free) {
    uint64_t a;
    if (!arg_value(b, t, in, 0, 8, &a)) return false;
    if (is_free) {
        if (!emu_heap_free(b->L->mem, a))
            return emu_fault(b, t, in, "invalid free", "free of 0x%" PRIx64 ", which is no piece malloc gave (or it was freed)", a);
        return true;
    }
    uint64_t p = emu_heap_malloc(b->L->mem, a);
    if (in->on[0]) {
        uint8_t v[8];
        memcpy(v, &p, 8);
        if (!param_copy(b, t, in, t->fn->vec[in->o[0]], v, 8, true)) return false;
    }
    return true;
}

/* __assertfail(const char *message, const char *file, unsigned line, const char *function, size_t charSize) */
static bool builtin_assertfail(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    uint64_t msg, file, line, fn;
    if (!arg_value(b, t, in, 0, 8, &msg) || !arg_value(b, t, in, 1, 8, &file) || !arg_value(b, t, in, 2, 4, &line) ||
        !arg_value(b, t, in, 3, 8, &fn))
        return false;
    Str m = {0}, f = {0}, fu = {0};
    bool ok = dev_string(b, t, in, msg, &m, 4096) && dev_string(b, t, in, file, &f, 4096) && dev_string(b, t, in, fn, &fu, 4096);
    if (ok)
        emu_fault(b, t, in, "assertion failed", "%s:%u: %s: Assertion `%s` failed.", f.buf ? f.buf : "", (unsigned)line,
                  fu.buf ? fu.buf : "", m.buf ? m.buf : "");
    str_free(&m);
    str_free(&f);
    str_free(&fu);
    return false;
}

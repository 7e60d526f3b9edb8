/* module.c - what is done to a parsed module as a whole: the checks that
 * need every function (calls reach a body or a builtin; each kernel's
 * static shared memory within the target's limit), placing .global and
 * .const variables in device memory, filling the constant slots that hold
 * symbol addresses, choosing each instruction's fast path; and the module's
 * lookups (functions, PTX lines for reports) and its release.
 *
 * emu_module_finalize, in order:
 *   1. resolve builtins (undefined .extern functions the emulator provides)
 *      and check every call: a body or a builtin, argument and return counts;
 *      every .loc names a declared .file;
 *   2. lay out dynamic shared memory after the static variables, allocate and
 *      initialise .global/.const variables (.const read-only for kernels);
 *   3. fill symbol-address constants, select fast paths (numbering the global
 *      accesses' hints, EmuIns.ghint);
 *   4. per kernel, sum the static shared variables it and its callees use and
 *      check the sum against the target's limit. */
#include "emu/emu.h"
#include "emu/exec.h"
#include "support/target.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Sets *err to "ptx:LINE: message" (if not set yet); returns false. */
static bool merr(char **err, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool emu_ptx_error(char **err, uint32_t line, const char *fmt, va_list ap) {
    if (*err) return false;
    Str s = {0};
    str_printf(&s, "ptx:%u: ", line);
    str_vprintf(&s, fmt, ap);
    *err = str_take(&s);
    return false;
}

static bool merr(char **err, uint32_t line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emu_ptx_error(err, line, fmt, ap);
    va_end(ap);
    return false;
}

uint64_t emu_smem_static_limit(const Target *t) {
    if (t) return (uint64_t)t->smem_static;
    int m = 0;
    for (int i = 0; i < TARGET_COUNT; i++)
        if (target_get((TargetId)i)->smem_static > m) m = target_get((TargetId)i)->smem_static;
    return (uint64_t)m;
}

uint64_t emu_smem_dynamic_limit(const Target *t) {
    return (uint64_t)(t ? t->smem_dynamic : target_max_smem_dynamic());
}

/* Marks in `seen` the shared symbols function fi uses, and those of the
 * functions it calls (depth-first; `visiting` breaks recursion). */
static void shared_uses(const EmuModule *m, uint32_t fi, uint8_t *seen, uint8_t *visiting) {
    if (visiting[fi]) return;
    visiting[fi] = 1;
    const EmuFunc *f = &m->funcs[fi];
    for (uint32_t i = 0; i < f->nsymfix; i++)
        if (m->syms[f->symfix[i].sym].space == EMU_SP_SHARED) seen[f->symfix[i].sym] = 1;
    for (uint32_t i = 0; i < f->ncode; i++) {
        if (f->code[i].op != EMU_OP_CALL) continue;
        if (f->code[i].target < m->nfuncs) shared_uses(m, f->code[i].target, seen, visiting);
        else /* indirect: any function whose address is taken */
            for (uint32_t k = 0; k < m->nfuncs; k++)
                if (m->funcs[k].address_taken) shared_uses(m, k, seen, visiting);
    }
}

/* Static shared memory each entry uses (what the GPU gives its blocks),
 * checked against the target's limit. */
static bool entry_shared(EmuModule *m, char **err) {
    uint8_t *seen = calloc(m->nsyms + 1, 1), *visiting = calloc(m->nfuncs + 1, 1);
    if (!seen || !visiting) out_of_memory(); /* emu_module_parse's recovery point */
    bool ok = true;
    uint64_t limit = emu_smem_static_limit(m->target);
    for (uint32_t k = 0; k < m->nfuncs && ok; k++) {
        EmuFunc *f = &m->funcs[k];
        if (!f->is_entry || !f->defined) continue;
        memset(seen, 0, m->nsyms);
        memset(visiting, 0, m->nfuncs);
        shared_uses(m, k, seen, visiting);
        uint64_t used = 0;
        for (uint32_t i = 0; i < m->nsyms; i++)
            if (seen[i] && !m->syms[i].is_extern_shared) used = (used + m->syms[i].align - 1) / m->syms[i].align * m->syms[i].align + m->syms[i].size;
        f->shared_used = (uint32_t)used;
        if (used > limit)
            ok = merr(err, f->line, "kernel '%s' uses %" PRIu64 " bytes of static shared memory, more than the %" PRIu64
                      " a block may declare on %s (beyond it, use dynamic shared memory)", f->name, used, limit,
                      m->target ? m->target->name : "any target");
    }
    free(seen);
    free(visiting);
    return ok;
}

static const char *const builtin_names[] = {"",
#define X(e, n, s) n,
    EMU_BUILTINS(X)
#undef X
};

/* `.alias a, f;` (parse_alias): f has a body, and direct calls of a call f (addresses of a: fill_relocs and
 * exec_call.c's indirect_callee). */
static bool resolve_aliases(EmuModule *m, char **err) {
    for (uint32_t k = 0; k < m->nfuncs; k++) {
        const EmuFunc *a = &m->funcs[k];
        if (a->alias1 && !m->funcs[a->alias1 - 1].defined)
            return merr(err, a->line, ".alias: '%s' aliases '%s', which has no body in this module", a->name, m->funcs[a->alias1 - 1].name);
    }
    for (uint32_t k = 0; k < m->nfuncs; k++) {
        EmuFunc *f = &m->funcs[k];
        for (uint32_t i = 0; i < f->ncode; i++) {
            EmuIns *in = &f->code[i];
            if (in->op == EMU_OP_CALL && in->target != UINT32_MAX && m->funcs[in->target].alias1) in->target = m->funcs[in->target].alias1 - 1;
        }
    }
    return true;
}

/* Every call reaches a function with a body or a builtin.  A callee's last argument that is an incomplete array (s[]
 * or s[0], size 0) gets the size of the largest array a direct call passes there: its bytes in the callee's frame (a
 * read of s[4] with 8 bytes passed was a memcheck error; ptxas takes it); an indirect call passes at most that many. */
static bool check_calls(EmuModule *m, char **err) {
    for (uint32_t k = 0; k < m->nfuncs; k++) {
        EmuFunc *f = &m->funcs[k];
        if (!f->defined) {
            f->builtin = EMU_BUILTIN_NONE;
            for (unsigned bi = 1; bi < ARRAY_LEN(builtin_names); bi++)
                if (!strcmp(builtin_names[bi], f->name)) f->builtin = (int)bi;
            if (f->builtin == EMU_BUILTIN_MALLOC || f->builtin == EMU_BUILTIN_FREE) m->uses_heap = true;
        }
    }
    for (uint32_t k = 0; k < m->nfuncs; k++) {
        const EmuFunc *f = &m->funcs[k];
        for (uint32_t i = 0; i < f->ncode; i++) {
            const EmuIns *in = &f->code[i];
            if (in->op != EMU_OP_CALL || in->target == UINT32_MAX) continue; /* indirect calls: checked at the call */
            EmuFunc *c = &m->funcs[in->target];
            if (c->is_entry) return merr(err, emu_module_ptx_line(m, in->line), "call of kernel entry '%s'", c->name);
            if (!c->defined && !c->builtin)
                return merr(err, emu_module_ptx_line(m, in->line), "call of '%s', which has no body in this module (the emulator provides vprintf, "
                            "__assertfail, malloc and free)", c->name);
            /* every return value received (ptxas: "Call has wrong number of parameters" without them; it loaded); a last
             * argument that is an incomplete array (s[]) may be left out */
            bool open_end = in->on[2] + 1u == c->nparams && c->params[c->nparams - 1].incomplete;
            if (in->on[0] != c->nrets || (in->on[2] != c->nparams && !open_end))
                return merr(err, emu_module_ptx_line(m, in->line), "call of '%s' with %u argument%s and %u return value%s; it takes %u and %u", c->name,
                            in->on[2], in->on[2] == 1 ? "" : "s", in->on[0], in->on[0] == 1 ? "" : "s", c->nparams, c->nrets);
            EmuParam *last = c->nparams ? &c->params[c->nparams - 1] : NULL;
            uint32_t e = in->on[2] == c->nparams && last && last->incomplete ? f->vec[in->o[2] + c->nparams - 1] : EMU_CALL_REG;
            if (!(e & EMU_CALL_REG) && m->syms[e].size > last->size) { /* an array (emu_check_call_types), at most EMU_PARAM_FRAME / 2 */
                last->size = (uint32_t)m->syms[e].size;
                if (c->param_size < last->offset + last->size) c->param_size = last->offset + last->size;
            }
        }
    }
    return true;
}

/* Addresses in initializers (EmuReloc): a .global/.const variable's device address (generic and global
 * addresses are the same), or a function's address in the window indirect calls go through. */
static bool fill_relocs(EmuModule *m, EmuMem *mem, char **err) {
    for (uint32_t i = 0; i < m->nsyms; i++) {
        EmuSym *s = &m->syms[i];
        for (uint32_t r = 0; r < s->nrelocs; r++) {
            const EmuReloc *x = &s->relocs[r];
            uint64_t v = 0;
            bool found = false;
            for (uint32_t k = 0; k < m->nsyms && !found; k++) {
                const EmuSym *t = &m->syms[k];
                if (t->hidden || (t->space != EMU_SP_GLOBAL && t->space != EMU_SP_CONST) || strcmp(t->name, x->name)) continue;
                v = t->addr, found = true;
            }
            for (uint32_t k = 0; k < m->nfuncs && !found; k++) {
                EmuFunc *f = &m->funcs[k];
                if (strcmp(f->name, x->name)) continue;
                if (f->is_entry) return merr(err, x->line, "the address of kernel entry '%s' initializes '%s'", f->name, s->name);
                if (f->alias1) f = &m->funcs[f->alias1 - 1]; /* .alias: the aliasee's address */
                v = EMU_FUNC_WINDOW + (uint64_t)(f - m->funcs) * EMU_FUNC_STRIDE;
                f->address_taken = true;
                found = true;
            }
            if (!found)
                return merr(err, x->line, "'%s' in the initializer of '%s' is no .global or .const variable or function of the module",
                            x->name, s->name);
            v += (uint64_t)x->addend;
            if (x->byte) { /* one byte of the address, zero-extended into its element */
                uint64_t b = (v >> (8 * (x->byte - 1))) & 0xFF;
                memcpy(emu_mem_host(mem, s->addr + x->offset, x->size), &b, x->size);
            } else {
                memcpy(emu_mem_host(mem, s->addr + x->offset, 8), &v, 8);
            }
        }
    }
    return true;
}

/* Each kernel's own .shared variables (declared in its body, so no other function sees them) after the
 * module's others: a block of one kernel does not carry every kernel's arrays, and memcheck bounds its
 * accesses by what it has (a read past a kernel's array landed in another kernel's and went unreported,
 * and the report named the module's total).  m->shared_static becomes the largest kernel's end. */
static bool place_entry_shared(EmuModule *m, char **err) {
    uint32_t common = m->shared_static, most = common;
    for (uint32_t k = 0; k < m->nfuncs; k++) {
        EmuFunc *f = &m->funcs[k];
        if (!f->is_entry) continue;
        uint64_t end = common;
        for (uint32_t i = 0; i < m->nsyms; i++) {
            EmuSym *s = &m->syms[i];
            if (s->entry_local != (int32_t)k + 1) continue;
            uint64_t at = (end + s->align - 1) / (s->align ? s->align : 1) * (s->align ? s->align : 1);
            if (at + s->size > UINT32_MAX / 2) return merr(err, f->line, "too much .shared memory in kernel '%s'", f->name);
            s->addr = at;
            end = at + s->size;
        }
        f->shared_static = (uint32_t)end;
        if (end > most) most = (uint32_t)end;
    }
    m->shared_static = most;
    return true;
}

/* A tensor-core instruction's form, decoded once here where each execution decoded it again (the parser has
 * checked it: one that does not decode keeps k 0, and the executor decodes it and reports why). */
static void decode_form(EmuIns *in) {
    const char *why;
    if (in->op == EMU_OP_MMA && !emu_mma_form(in, &in->mma, &why)) in->mma.k = 0;
    if (in->op == EMU_OP_WGMMA && !emu_wgmma_form(in, &in->wgmma, &why)) in->wgmma.k = 0;
}

bool emu_module_finalize(EmuModule *m, EmuMem *mem, char **err) {
    if (!resolve_aliases(m, err) || !check_calls(m, err)) return false;
    if (!place_entry_shared(m, err)) return false;
    /* a .loc whose file no .file declares is kept (ptxas takes it): reports name the file by its number */
    uint32_t dyn_align = m->shared_dyn_align < 16 ? 16 : m->shared_dyn_align;
    uint32_t dyn_off = (m->shared_static + dyn_align - 1) / dyn_align * dyn_align;
    for (uint32_t i = 0; i < m->nsyms; i++) {
        EmuSym *s = &m->syms[i];
        if (s->is_extern_shared) s->addr = dyn_off;
        if (s->space == EMU_SP_GLOBAL || s->space == EMU_SP_CONST) {
            if (!emu_mem_alloc(mem, s->size ? s->size : 1, true, &s->addr))
                return merr(err, s->line, "no memory for %s variable '%s' of %" PRIu64 " bytes",
                            s->space == EMU_SP_CONST ? ".const" : ".global", s->name, s->size);
            uint8_t *h = emu_mem_host(mem, s->addr, s->size ? s->size : 1);
            if (s->init) memcpy(h, s->init, s->size);
            if (s->space == EMU_SP_CONST) ((EmuAlloc *)emu_mem_find(mem, s->addr))->readonly = true;
        }
    }
    m->shared_dyn_offset = dyn_off;
    if (!fill_relocs(m, mem, err)) return false;
    m->nghints = 0;
    for (uint32_t k = 0; k < m->nfuncs; k++) {
        EmuFunc *f = &m->funcs[k];
        for (uint32_t i = 0; i < f->nsymfix; i++) {
            const EmuSym *s = &m->syms[f->symfix[i].sym];
            uint64_t a = s->addr;
            if (emu_func_arg_sym(f, s)) a = emu_args_offset(f) + (a - EMU_PARAM_ARGS); /* in the frame's local memory */
            f->slot_init[f->symfix[i].slot] = a + (uint64_t)f->symfix[i].addend;
        }
        /* the packed copy (emu_slots_pack, below) copies them; the guard's constant slot keeps its number there */
        for (uint32_t i = 0; i < f->ncode; i++) {
            EmuIns *in = &f->code[i];
            in->fast = emu_fast_select(in, f->is_entry);
            in->disp = emu_fast_dispatch(in);
            if (emu_fast_global(in->fast)) in->ghint = m->nghints++;
            decode_form(in);
        }
    }
    if (!entry_shared(m, err)) return false;
    for (uint32_t k = 0; k < m->nfuncs; k++) emu_slots_pack(&m->funcs[k]);
    return true;
}

void emu_module_free(EmuModule *m) {
    if (!m) return;
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        EmuFunc *f = &m->funcs[i];
        emu_slots_free(f);
        free(f->code);
        free(f->vec);
        free(f->slot_init);
        free(f->params);
        free(f->rets);
    }
    if (m->mem)
        for (uint32_t i = 0; i < m->nsyms; i++)
            if ((m->syms[i].space == EMU_SP_GLOBAL || m->syms[i].space == EMU_SP_CONST) && m->syms[i].addr)
                emu_mem_free(m->mem, m->syms[i].addr);
    free(m->funcs);
    free(m->syms);
    free(m->srcfiles);
    free(m->srclocs);
    free(m->vlines);
    arena_free(m->arena);
    free(m);
}

EmuFunc *emu_module_find(EmuModule *m, const char *name) {
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].defined && strcmp(m->funcs[i].name, name) == 0) return &m->funcs[i];
    return NULL;
}

/* Text of a PTX line for reports: trimmed, comment dropped, runs of
 * blanks collapsed to one space. */
void emu_module_line(const EmuModule *m, uint32_t line, char *buf, size_t cap) {
    if (cap == 0) return;
    buf[0] = 0;
    line = emu_module_ptx_line(m, line);
    if (line < 1 || line > m->nlines) return;
    const char *p = m->text + m->line_start[line];
    size_t n = 0;
    bool blank = true; /* drop leading blanks */
    for (; *p && *p != '\n' && n + 1 < cap; p++) {
        if (p[0] == '/' && p[1] == '/') break;
        if (*p == ' ' || *p == '\t' || *p == '\r') {
            if (!blank) buf[n++] = ' ';
            blank = true;
            continue;
        }
        buf[n++] = *p;
        blank = false;
    }
    while (n > 0 && buf[n - 1] == ' ') n--;
    buf[n] = 0;
}

const char *emu_module_srcloc(const EmuModule *m, uint32_t line, char *buf, size_t cap) {
    if (cap == 0) return buf;
    buf[0] = 0;
    uint32_t loc = line > m->nlines && line - m->nlines - 1 < m->nvlines ? m->vlines[line - m->nlines - 1].srcloc
                   : m->line_srcloc && line >= 1 && line <= m->nlines ? m->line_srcloc[line] : 0;
    if (!loc) return buf;
    const EmuSrcLoc *l = &m->srclocs[loc];
    const char *name = NULL;
    for (uint32_t i = 0; i < m->nsrcfiles; i++)
        if (m->srcfiles[i].num == l->file) name = m->srcfiles[i].name;
    char unnamed[32];
    if (!name) snprintf(unnamed, sizeof unnamed, "<file %u>", l->file), name = unnamed; /* no .file declares it */
    if (l->col) snprintf(buf, cap, "%s:%u:%u", name, l->line, l->col);
    else snprintf(buf, cap, "%s:%u", name, l->line);
    return buf;
}

const char *emu_module_where(const EmuModule *m, uint32_t line, char *buf, size_t cap) {
    char src[512];
    emu_module_srcloc(m, line, src, sizeof src);
    snprintf(buf, cap, "%s%sPTX line %u", src, *src ? ", " : "", emu_module_ptx_line(m, line));
    return buf;
}

const char *emu_slot_name(const EmuFunc *f, uint32_t slot, char *buf, size_t cap) {
    if (f->slot_orig) slot = slot < f->nslots ? f->slot_orig[slot] : UINT32_MAX; /* a packed form's (slots.c) */
    for (uint32_t i = f->nregnames; i-- > 0;) {
        const struct EmuRegName *r = &f->regnames[i];
        uint32_t w = r->width ? r->width : 1;
        if (r->count < 0 && slot - r->base < w) {
            snprintf(buf, cap, "%.*s", (int)r->plen, r->prefix);
            return buf;
        }
        if (r->count >= 0 && slot >= r->base && slot < r->base + (uint64_t)r->count * w) {
            snprintf(buf, cap, "%.*s%u", (int)r->plen, r->prefix, (slot - r->base) / w);
            return buf;
        }
    }
    snprintf(buf, cap, "?");
    return buf;
}

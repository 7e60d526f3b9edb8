/* parse_decl.c - PTX declarations of variables, parameters and registers: `.global`/`.const`/`.shared`/`.local`
 * variables (alignment, vectors, arrays sized or by their initializer, initializers of values and of
 * symbol addresses), the `.param` lists of entries and functions (parse.c, step 2 and 3), and `.reg`
 * declarations (types, vectors, ranges). */
#include "emu/emu.h"
#include "emu/exec.h"
#include "emu/parse_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void next(Parser *ps) { emu_lex_next(ps); }

static uint32_t align_up32(uint32_t v, uint32_t a) { return a ? (v + a - 1) / a * a : v; }

/* ---- declarations ---- */
typedef struct Decl {
    uint32_t align;
    unsigned ty;
    unsigned vec;
    const char *name;
    uint32_t nlen, line;   /* line: the name's */
    uint64_t count;        /* array elements (1 for scalars) */
    bool unsized;          /* name[] */
    bool array;            /* name[...]: an array, whatever its count (a[1] is not the scalar a) */
    bool is_ptr;
    uint32_t attr_line;    /* an .attribute(...)'s line (0: none): .global variables only */
} Decl;

/* decl = { ".align" N | ".v2" | ".v4" | ".ptr" | space | type | attribute } name { "[" N? "]" } */
static bool parse_decl(Parser *ps, Decl *d) {
    memset(d, 0, sizeof *d);
    d->vec = 1;
    d->count = 1;
    for (;;) {
        Tok *t = &ps->tok;
        if (t->kind != TK_IDENT || t->s[0] != '.') break;
        if (is(t, ".align")) {
            next(ps);
            int64_t v;
            if (!emu_parse_int(&ps->tok, &v) || v <= 0 || v > (1 << 20) || (v & (v - 1))) return perr(ps, ps->tok.line, "bad .align");
            /* `.ptr [.space] .align N` gives the pointee's alignment, not the parameter's */
            if (!d->is_ptr) d->align = (uint32_t)v;
            next(ps);
            continue;
        }
        if (is(t, ".v2")) { d->vec = 2; next(ps); continue; }
        if (is(t, ".v4")) { d->vec = 4; next(ps); continue; }
        if (is(t, ".v8")) { d->vec = 8; next(ps); continue; }
        if (is(t, ".ptr")) { d->is_ptr = true; next(ps); continue; }
        if (d->is_ptr && (is(t, ".global") || is(t, ".const") || is(t, ".local") || is(t, ".shared"))) {
            next(ps); /* the pointee's state space */
            continue;
        }
        if (is(t, ".attribute")) { /* .attribute(.managed), .attribute(.unified(N, N)), both: no effect here */
            d->attr_line = t->line;
            next(ps);
            if (!expect(ps, '(')) return false;
            do {
                if (is(&ps->tok, ".managed")) {
                    next(ps);
                    continue;
                }
                if (!is(&ps->tok, ".unified"))
                    return perr(ps, ps->tok.line, "unknown variable attribute %s (.managed and .unified(N, N) are)",
                                tok_text(&ps->tok, (char[48]){0}, 48));
                uint32_t line = ps->tok.line;
                if (ps->ptx_version < 80 || ps->target_sm < 90) /* ptxas: "Feature '.unified' requires ..." */
                    return perr(ps, line, ".attribute(.unified) needs .version 8.0 and .target sm_90 or later");
                next(ps);
                int64_t v;
                if (!expect(ps, '(')) return false;
                if (!emu_parse_int(&ps->tok, &v)) return perr(ps, ps->tok.line, ".unified takes two integers (uuid1, uuid2)");
                next(ps);
                if (!expect(ps, ',')) return false;
                if (!emu_parse_int(&ps->tok, &v)) return perr(ps, ps->tok.line, ".unified takes two integers (uuid1, uuid2)");
                next(ps);
                if (!expect(ps, ')')) return false;
            } while (accept(ps, ','));
            if (!expect(ps, ')')) return false;
            continue;
        }
        unsigned ty = emu_type_find(t->s + 1, t->len - 1);
        if (ty) d->ty = ty;
        if (is(t, ".texref") || is(t, ".samplerref") || is(t, ".surfref"))
            return perr(ps, t->line, "'%.*s': " EMU_NO_TEXTURES, (int)t->len, t->s);
        if (!ty && emu_space_find(t->s + 1, t->len - 1) < 0)
            return perr(ps, t->line, "unsupported declaration qualifier '%.*s'", (int)t->len, t->s);
        next(ps);
    }
    char b[48];
    if (ps->tok.kind != TK_IDENT) return perr(ps, ps->tok.line, "expected a name in declaration, found %s", tok_text(&ps->tok, b, sizeof b));
    if (!d->ty) return perr(ps, ps->tok.line, "declaration of '%.*s' has no type", (int)ps->tok.len, ps->tok.s);
    if (!emu_type_size(d->ty)) /* .u4 .s4 .b1 .u2 .s2: operand types of mma and cvt.pack, no variable has them */
        return perr(ps, ps->tok.line, "declaration of '%.*s': .%s is no type of a variable or parameter", (int)ps->tok.len, ps->tok.s,
                    emu_type_name(d->ty));
    d->name = ps->tok.s;
    d->nlen = ps->tok.len;
    d->line = ps->tok.line;
    next(ps);
    while (accept(ps, '[')) {
        d->array = true;
        if (accept(ps, ']')) { d->unsized = true; continue; }
        int64_t v;
        if (!emu_parse_int(&ps->tok, &v) || v < 0) return perr(ps, ps->tok.line, "bad array size");
        next(ps);
        /* the emulator allocates a variable's bytes: past 2^40 (its allocation limit) it cannot, and a product past
         * 2^64 wrapped to a small array (ptxas takes both: a GPU's address space is larger) */
        if (v && d->count > (UINT64_C(1) << 40) / (uint64_t)v)
            return perr(ps, d->line, "array '%.*s' is larger than the emulator can allocate (2^40 elements)", (int)d->nlen, d->name);
        d->count *= (uint64_t)v;
        if (!expect(ps, ']')) return false;
    }
    if (!d->align) d->align = emu_type_size(d->ty) * d->vec;
    if (!d->align) d->align = 1;
    return true;
}

static uint64_t decl_size(const Decl *d) { return (uint64_t)emu_type_size(d->ty) * d->vec * d->count; }

static EmuSym *sym_add(Parser *ps, const Decl *d, unsigned space) {
    EmuModule *m = ps->m;
    GROW(m->syms, m->nsyms, ps->capsyms);
    EmuSym *s = &m->syms[m->nsyms++];
    memset(s, 0, sizeof *s);
    s->name = arena_strndup(ps->a, d->name, d->nlen);
    s->space = (uint8_t)space;
    s->align = d->align;
    s->size = decl_size(d);
    s->line = d->line;
    s->array = d->array;
    emu_sym_index_add(ps, m->nsyms - 1);
    return s;
}

/* An address element of an initializer: NAME, generic(NAME), either followed by +N or -N (a 64-bit
 * element), or one byte of such an address under a mask, `0xFF0000(generic(NAME)+N)` (PTX 7.1: the mask
 * 0xFF << 8k selects byte k, which fills an element of any size), recorded for emu_module_finalize to fill in. */
static bool parse_init_address(Parser *ps, EmuSym *s, unsigned esz, uint64_t at, uint32_t *cap) {
    uint32_t line = ps->tok.line;
    unsigned byte = 0;
    if (ps->tok.kind == TK_NUM) { /* the mask; parse_init saw the '(' after it */
        int64_t mask;
        if (!emu_parse_int(&ps->tok, &mask)) return perr(ps, line, "bad mask in the initializer of '%s'", s->name);
        for (unsigned k = 0; k < 8 && !byte; k++)
            if ((uint64_t)mask == 0xFFull << (8 * k)) byte = k + 1;
        if (!byte)
            return perr(ps, line, "invalid mask %s in the initializer of '%s' (0xFF, 0xFF00, ... 0xFF00000000000000 select a "
                        "byte of an address)", tok_text(&ps->tok, (char[48]){0}, 48), s->name);
        if (ps->ptx_version < 71)
            return perr(ps, line, "a mask in the initializer of '%s' needs .version 7.1 or later (ptxas: \"Feature 'mask "
                        "operator in initializer' requires PTX ISA .version 7.1\")", s->name);
        next(ps);
        if (!expect(ps, '(')) return false;
    }
    bool generic = is(&ps->tok, "generic");
    if (generic) {
        next(ps);
        if (!expect(ps, '(')) return false;
    }
    if (ps->tok.kind != TK_IDENT || ps->tok.s[0] == '.' || ps->tok.s[0] == '%')
        return perr(ps, ps->tok.line, "unsupported initializer %s for '%s'", tok_text(&ps->tok, (char[48]){0}, 48), s->name);
    EmuReloc r = {.name = arena_strndup(ps->a, ps->tok.s, ps->tok.len), .nlen = ps->tok.len, .offset = (uint32_t)at, .line = line};
    next(ps);
    if (generic && !expect(ps, ')')) return false;
    if (is_punct(&ps->tok, '+') || is_punct(&ps->tok, '-')) {
        bool minus = is_punct(&ps->tok, '-');
        next(ps);
        int64_t v;
        if (!emu_parse_int(&ps->tok, &v)) return perr(ps, ps->tok.line, "bad offset in the address initializer of '%s'", s->name);
        next(ps);
        r.addend = minus ? -v : v;
    }
    if (byte) {
        if (!expect(ps, ')')) return false;
        r.byte = (uint8_t)byte, r.size = (uint8_t)esz;
    } else if (esz != 8) {
        return perr(ps, line, "the address of '%s' initializes a %u-byte element of '%s' (addresses are 8 bytes)", r.name, esz, s->name);
    }
    if (s->nrelocs == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        EmuReloc *n = arena_alloc(ps->a, nc * sizeof *n);
        if (s->nrelocs) memcpy(n, s->relocs, s->nrelocs * sizeof *n);
        s->relocs = n, *cap = nc;
    }
    s->relocs[s->nrelocs++] = r;
    return true;
}

/* initializer = "=" ( value | "{" value { "," value } "}" ) with nested braces flattened; a value is a
 * number or an address or a byte of one (parse_init_address).  An array declared without its size (`.b8 str[] = {...}`)
 * takes it from the initializer: `group` bytes (an element times the other dimensions) per step. */
static bool parse_init(Parser *ps, EmuSym *s, unsigned ty, bool unsized, uint64_t group) {
    unsigned esz = emu_type_size(ty);
    if (!esz) return perr(ps, ps->tok.line, "initializer of '%s' of a type without a size", s->name);
    uint64_t n = 0, cap = unsized ? 16 : s->size / esz;
    uint32_t rcap = 0;
    uint64_t bytes = unsized ? cap * esz : s->size;
    s->init = arena_alloc(ps->a, bytes ? bytes : 1);
    memset(s->init, 0, bytes ? bytes : 1);
    int depth = 0;
    do {
        while (accept(ps, '{')) depth++;
        if (n >= cap && unsized && cap < (UINT32_MAX / 2) / esz) { /* grow: the size comes from the initializer */
            uint8_t *more = arena_alloc(ps->a, 2 * cap * esz);
            memcpy(more, s->init, cap * esz);
            memset(more + cap * esz, 0, cap * esz);
            s->init = more, cap *= 2;
        }
        if (n >= cap) return perr(ps, ps->tok.line, "too many initializers for '%s'", s->name);
        if (ps->tok.kind == TK_IDENT || (ps->tok.kind == TK_NUM && is_punct(emu_lex_peek(ps), '('))) {
            if (!parse_init_address(ps, s, esz, n * esz, &rcap)) return false;
        } else {
            Imm im;
            if (!emu_starts_const(ps))
                return perr(ps, ps->tok.line, "unsupported initializer %s for '%s'", tok_text(&ps->tok, (char[48]){0}, 48), s->name);
            if (!emu_parse_const(ps, &im)) return false;
            uint64_t bits = emu_imm_bits(&im, ty);
            memcpy(s->init + n * esz, &bits, esz);
        }
        n++;
        while (depth > 0 && accept(ps, '}')) depth--;
    } while (accept(ps, ','));
    while (depth > 0 && accept(ps, '}')) depth--;
    if (depth) return perr(ps, ps->tok.line, "unbalanced braces in initializer of '%s'", s->name);
    if (unsized) {
        s->size = (n * esz + group - 1) / group * group; /* whole elements of the other dimensions */
        if (s->size > cap * esz) {
            uint8_t *more = arena_alloc(ps->a, s->size);
            memcpy(more, s->init, cap * esz);
            memset(more + cap * esz, 0, s->size - cap * esz);
            s->init = more;
        }
    }
    return true;
}

/* A module's .extern .global or .const variable (ptxas of CUDA 13, each case tried): one no module defines is
 * defined by ptxas ("Unresolved extern variable 'g' in whole program compilation, ignoring extern qualifier"), so
 * it loads zero-filled as a .global without an initializer does; unsized (`g[]`) ptxas refuses it ("Unresolved
 * extern variable": emu_check_externs), with an initializer too ("No initial value is allowed for external
 * symbol"); a later .visible (or .weak, .common) definition is the variable, which instructions before it name
 * too (they named a zero-filled copy of their own); a later one without ("a .static") is refused ("'.extern'
 * variable 'g' cannot be resolved by a '.static'"). */
static int32_t extern_defined(Parser *ps, const Decl *d, unsigned space, bool is_extern) {
    if (ps->fn || (space != EMU_SP_GLOBAL && space != EMU_SP_CONST)) return -1;
    int32_t k = emu_sym_find(ps, d->name, d->nlen, 0);
    if (k < 0 || !ps->m->syms[k].is_extern || ps->m->syms[k].space != space) return -1;
    if (is_extern) return -1; /* declared again: a copy as before (ptxas takes it) */
    if (!ps->decl_visible) {
        perr(ps, d->line, "'.extern' variable '%.*s' is defined by a variable that is not .visible (ptxas: it cannot be "
             "resolved by a '.static')", (int)d->nlen, d->name);
        return -2;
    }
    return k;
}

bool emu_check_externs(Parser *ps) {
    for (uint32_t k = 0; k < ps->m->nsyms; k++) {
        const EmuSym *s = &ps->m->syms[k];
        if (s->is_extern && s->size == 0)
            return perr(ps, s->line, "'.extern' variable '%s' is unsized and the module does not define it (ptxas: \"Unresolved "
                        "extern variable\"; a sized one is defined zero-filled)", s->name);
    }
    return true;
}

/* var = space decl [ "=" init ] ";"   (space already consumed) */
bool emu_parse_var(Parser *ps, unsigned space, bool is_extern) {
    Decl d;
    if (!parse_decl(ps, &d)) return false;
    if (ps->fn && emu_label_find(ps, d.name, d.nlen, ps->cur_blk) >= 0) /* ptxas: "Duplicate definition" */
        return perr(ps, d.line, "variable '%.*s' has the name of a label of its block", (int)d.nlen, d.name);
    if (d.attr_line && space != EMU_SP_GLOBAL) /* ptxas: "Illegal attribute" */
        return perr(ps, d.attr_line, "'%.*s': .attribute is for .global variables", (int)d.nlen, d.name);
    int32_t ext = extern_defined(ps, &d, space, is_extern);
    if (ext == -2) return false;
    if (!ps->fn && ext < 0 && !is_extern) { /* ptxas: "Duplicate definition of variable" (the second one loaded beside it) */
        int32_t k = emu_sym_find(ps, d.name, d.nlen, 0);
        if (k >= 0 && !ps->m->syms[k].is_extern)
            return perr(ps, d.line, "variable '%.*s' is defined twice in the module (first at line %u)", (int)d.nlen, d.name,
                        ps->m->syms[k].line);
    }
    EmuSym *s;
    if (ext >= 0) { /* the extern's symbol becomes the definition */
        s = &ps->m->syms[ext];
        s->align = d.align;
        s->size = decl_size(&d);
        s->line = d.line;
        s->is_extern = false;
    } else {
        s = sym_add(ps, &d, space);
        s->is_extern = is_extern && !ps->fn && (space == EMU_SP_GLOBAL || space == EMU_SP_CONST);
        if (s->is_extern && d.unsized) s->size = 0; /* emu_check_externs: unless a definition follows */
    }
    if (s->is_extern && is_punct(&ps->tok, '='))
        return perr(ps, ps->tok.line, "'.extern' variable '%s' takes no initializer (ptxas: \"No initial value is allowed for "
                    "external symbol\")", s->name);
    if (space == EMU_SP_SHARED) {
        if (d.unsized || (is_extern && s->size == 0)) {
            s->is_extern_shared = true;
            if (d.align > ps->m->shared_dyn_align) ps->m->shared_dyn_align = d.align;
        } else {
            uint64_t limit = emu_smem_static_limit(ps->m->target);
            if (s->size > limit)
                return perr(ps, ps->tok.line, ".shared variable '%s' of %" PRIu64 " bytes exceeds the %" PRIu64
                            " bytes of static shared memory a block may declare on %s", s->name, s->size, limit,
                            ps->m->target ? ps->m->target->name : "any target");
            if (ps->fn && ps->fn->is_entry) { /* placed by emu_module_finalize, after the variables every kernel sees */
                s->entry_local = (int32_t)(ps->fn - ps->m->funcs) + 1;
            } else {
                uint64_t at = align_up32(ps->m->shared_static, d.align);
                if (at + s->size > UINT32_MAX / 2) return perr(ps, ps->tok.line, "too much .shared memory in the module");
                s->addr = at;
                ps->m->shared_static = (uint32_t)(at + s->size);
            }
        }
    } else if (space == EMU_SP_LOCAL) {
        if (!ps->fn) return perr(ps, ps->tok.line, ".local variables are supported only inside functions");
        uint64_t at = align_up32(ps->fn->local_size, d.align);
        if (at + s->size > EMU_MAX_LOCAL)
            return perr(ps, ps->tok.line, ".local variable '%s': %" PRIu64 " bytes of local memory per thread are too many",
                        s->name, at + s->size);
        s->addr = at;
        ps->fn->local_size = (uint32_t)(at + s->size);
    } else if (space == EMU_SP_PARAM) {
        if (!ps->fn) return perr(ps, ps->tok.line, "module-level .param variables are not supported");
        /* call-sequence parameter inside a body: lives in the frame area */
        uint64_t at = align_up32(ps->fn->frame_param_size, d.align);
        if (at + s->size > EMU_PARAM_ARGS - EMU_PARAM_FRAME)
            return perr(ps, ps->tok.line, ".param variable '%s' is too large", s->name);
        s->addr = EMU_PARAM_FRAME + at;
        ps->fn->frame_param_size = (uint32_t)(at + s->size);
    }
    if (accept(ps, '=')) {
        if (space != EMU_SP_GLOBAL && space != EMU_SP_CONST)
            return perr(ps, ps->tok.line, "initializer on a %s variable", emu_space_name(space));
        if (!parse_init(ps, s, d.ty, d.unsized, decl_size(&d) ? decl_size(&d) : 1)) return false;
    }
    if (space == EMU_SP_CONST) { /* one 64 KiB bank for a module's .const data (ptxas: "too much global constant data") */
        uint64_t total = 0;
        for (uint32_t i = 0; i < ps->m->nsyms; i++)
            if (ps->m->syms[i].space == EMU_SP_CONST) total += ps->m->syms[i].size;
        if (total > EMU_MAX_CONST_BYTES)
            return perr(ps, d.line, ".const variable '%s' brings the module's constant data to %" PRIu64 " bytes, more than the "
                        "%u of the constant bank", s->name, total, EMU_MAX_CONST_BYTES);
    }
    return expect(ps, ';');
}

/* param = (".param" | ".reg") decl
 * A .reg parameter (a .func's only) is a register of the function, declared with its body
 * (parse_function); a .param one is also a symbol whose address is its offset. */
bool emu_parse_param(Parser *ps, EmuParam **arr, uint32_t *n, uint32_t *size, uint32_t base) {
    bool reg = is(&ps->tok, ".reg");
    if (!is(&ps->tok, ".param") && !reg)
        return perr(ps, ps->tok.line, "expected .param%s, found %s", base == EMU_PARAM_KERNEL ? "" : " or .reg",
                    tok_text(&ps->tok, (char[48]){0}, 48));
    next(ps);
    Decl d;
    if (!parse_decl(ps, &d)) return false;
    if (d.attr_line) return perr(ps, d.attr_line, "parameter '%.*s': .attribute is for .global variables", (int)d.nlen, d.name);
    if ((*n & (*n - 1)) == 0) { /* full at 0, 1, 2, 4, ...: doubled (one more each time copied 100000s quadratically) */
        EmuParam *np = realloc(*arr, (*n ? 2 * (size_t)*n : 1) * sizeof **arr);
        if (!np) out_of_memory();
        *arr = np;
    }
    EmuParam *p = &(*arr)[(*n)++];
    memset(p, 0, sizeof *p);
    p->name = arena_strndup(ps->a, d.name, d.nlen);
    p->ty = (uint8_t)d.ty, p->vec = (uint8_t)d.vec, p->array = d.array;
    p->incomplete = d.unsized || (d.array && d.count == 0); /* ptxas reads s[0] as s[]: "cannot be an incomplete array" */
    if (p->incomplete && base == EMU_PARAM_KERNEL)
        return perr(ps, d.line, "kernel parameter '%s' is an incomplete array (%s[] or %s[0]): a kernel's parameters have sizes",
                    p->name, p->name, p->name);
    if (reg) {
        if (base == EMU_PARAM_KERNEL)
            return perr(ps, ps->tok.line, "kernel parameter '%s' is .reg: a kernel's parameters are .param", p->name);
        if (d.vec != 1 || d.count != 1 || d.unsized || emu_type_size(d.ty) > 8)
            return perr(ps, ps->tok.line, ".reg parameter '%s': a .reg parameter is one register of at most 64 bits", p->name);
        p->reg = true;
        p->size = emu_type_size(d.ty);
        p->align = p->size;
        p->slot = d.ty == EMU_T_PRED; /* until the body declares it (parse_function): whether it is a predicate */
        return true;
    }
    if (d.ty == EMU_T_PRED) /* ptxas: "Predicate variable 'a' must be in register state space" (it loaded) */
        return perr(ps, d.line, "parameter '%s' is a .param .pred: a predicate is a register (a .func's .reg .pred)", p->name);
    if (decl_size(&d) > EMU_PARAM_FRAME / 2 || *size > EMU_PARAM_FRAME / 2)
        return perr(ps, ps->tok.line, "parameter '%s' is too large", p->name);
    p->size = (uint32_t)decl_size(&d);
    p->align = d.align;
    *size = align_up32(*size, d.align);
    p->offset = *size;
    *size += p->size;
    /* the parameter is also a symbol whose address is its offset */
    EmuSym *s = sym_add(ps, &d, EMU_SP_PARAM);
    s->addr = base + p->offset;
    return true;
}

/* ---- registers ---- */
/* A vector register (ISA, "Vectors": `.reg .v4 .f32 v;`): n slots; its elements are registers named v.x, v.y, v.z,
 * v.w (or v.r, v.g, v.b, v.a), and `v` itself is the vector operand {v.x, ..} (vreg_width). */
static void vreg_declare(Parser *ps, const char *s, uint32_t len, unsigned n, unsigned ty) {
    static const char comp[2][4] = {{'x', 'y', 'z', 'w'}, {'r', 'g', 'b', 'a'}};
    uint32_t base = ps->nslots;
    GROW(ps->regs, ps->nregs, ps->capregs);
    ps->regs[ps->nregs++] = (struct RegRange){s, len, -1, base, false, false, (uint8_t)n, (uint8_t)ty};
    for (unsigned k = 0; k < n; k++)
        for (unsigned set = 0; set < 2; set++) {
            char *name = arena_alloc(ps->a, len + 3);
            memcpy(name, s, len);
            name[len] = '.', name[len + 1] = comp[set][k], name[len + 2] = 0;
            GROW(ps->regs, ps->nregs, ps->capregs);
            ps->regs[ps->nregs++] = (struct RegRange){name, len + 2, -1, base + k, false, false, 0, (uint8_t)ty};
            if (set) continue;
            GROW(ps->allregs, ps->nallregs, ps->capallregs);
            ps->allregs[ps->nallregs++] = (struct EmuRegName){name, len + 2, -1, base + k, 1};
        }
    ps->nslots += n;
}

/* One modifier of a .reg declaration, without its dot: a vector width or a type; false for anything else (a
 * `.b33` made registers of no type that ran). */
static bool reg_mod(const char *p, size_t n, unsigned *ty, unsigned *vec) {
    if (n == 2 && (!memcmp(p, "v2", 2) || !memcmp(p, "v4", 2))) {
        *vec = (unsigned)(p[1] - '0');
        return true;
    }
    unsigned t = emu_type_find(p, n);
    if (!t) return false;
    *ty = t;
    return true;
}

/* Whether name (len bytes) is prefix p (plen bytes) and a number below n: one of the registers `p<n>` declares
 * (ptxas reads the number's value: %r03 is one of %r<4>'s). */
static bool reg_in_range(const char *name, uint32_t len, const char *p, uint32_t plen, int64_t n) {
    if (len <= plen || memcmp(name, p, plen) != 0) return false;
    int64_t v = 0;
    for (uint32_t k = plen; k < len; k++) {
        if (!isdigit((unsigned char)name[k])) return false;
        if (v < n) v = v * 10 + (name[k] - '0');
    }
    return v < n;
}

/* A register name (count >= 0: the range name<count>) is new in the current scope: no register of the scope, nor a
 * variable or parameter of it, has it (ptxas: "Duplicate definition"; the newer declaration hid the older one). */
static bool reg_unique(Parser *ps, const char *s, uint32_t len, int64_t count, uint32_t line) {
    for (uint32_t i = ps->scope_regs; i < ps->nregs; i++) {
        const struct RegRange *r = &ps->regs[i];
        bool dup = count < 0 ? (r->count < 0 ? r->plen == len && !memcmp(r->prefix, s, len) : reg_in_range(s, len, r->prefix, r->plen, r->count))
                             : (r->count < 0 ? reg_in_range(r->prefix, r->plen, s, len, count) : r->plen == len && !memcmp(r->prefix, s, len));
        if (dup) {
            if (count < 0) return perr(ps, line, "register '%.*s' is declared twice in one scope", (int)len, s);
            return perr(ps, line, "registers '%.*s<%" PRId64 ">' are declared twice in one scope (with '%.*s%s')", (int)len, s, count,
                        (int)r->plen, r->prefix, r->count < 0 ? "" : "<..>");
        }
    }
    int32_t same = count < 0 ? emu_sym_find(ps, s, len, ps->scope_syms) : -1;
    if (same >= 0)
        return perr(ps, line, "register '%.*s' has the name of a variable or parameter of its scope ('%s')", (int)len, s, ps->m->syms[same].name);
    for (uint32_t i = ps->scope_syms; i < ps->m->nsyms && count >= 0; i++) { /* a range: each name it covers */
        const EmuSym *y = &ps->m->syms[i];
        if (!y->hidden && reg_in_range(y->name, (uint32_t)strlen(y->name), s, len, count))
            return perr(ps, line, "register '%.*s' has the name of a variable or parameter of its scope ('%s')", (int)len, s, y->name);
    }
    if (count < 0 && emu_label_find(ps, s, len, ps->cur_blk) >= 0) /* a range's names take labels */
        return perr(ps, line, "register '%.*s' has the name of a label of its block ('%.*s')", (int)len, s, (int)len, s);
    return true;
}

/* reg = ".reg" [".v2"|".v4"] type name ["<" N ">"] {"," name ["<" N ">"]} ";" */
bool emu_parse_reg(Parser *ps) {
    unsigned ty = 0, vec = 0;
    uint32_t line = ps->tok.line;
    static const char *const types = "(.b8 .. .b128, .u8 .. .u64, .s8 .. .s64, .f16, .f16x2, .f32, .f64 or .pred)";
    for (const char *p = ps->tok.s + 4, *e = ps->tok.s + ps->tok.len; p < e;) { /* `.reg.b16` glued (cuda_fp16.hpp) */
        const char *q = ++p;
        while (q < e && *q != '.') q++;
        if (!reg_mod(p, (size_t)(q - p), &ty, &vec))
            return perr(ps, line, "unknown register type '.%.*s' %s", (int)(q - p), p, types);
        p = q;
    }
    next(ps);
    while (ps->tok.kind == TK_IDENT && ps->tok.s[0] == '.') { /* type and vector width */
        if (is(&ps->tok, ".align")) { /* ptxas takes an alignment on registers, which have no address: checked, unused */
            if (ty || vec) return perr(ps, line, "a .reg declaration's .align comes before its type");
            next(ps);
            int64_t v;
            if (!emu_parse_int(&ps->tok, &v) || v <= 0 || v > (1 << 20) || (v & (v - 1)))
                return perr(ps, line, "bad .align of a .reg declaration (a power of two)");
            next(ps);
            continue;
        }
        if (!reg_mod(ps->tok.s + 1, ps->tok.len - 1, &ty, &vec))
            return perr(ps, line, "unknown register type '%.*s' %s", (int)ps->tok.len, ps->tok.s, types);
        next(ps);
    }
    if (!ty) return perr(ps, line, "a .reg declaration needs a type %s", types);
    /* .bf16, .bf16x2, .tf32, the fp8, packed and sub-byte types are instruction types only (ptxas: "Parsing error", "Type
     * .e4m3 may only be used as an instruction type"); a vector register holds at most 128 bits ("Vector type too
     * large"): each loaded */
    unsigned k = emu_type_kind(ty);
    if (ty == EMU_T_BF16 || ty == EMU_T_BF16X2 || ty == EMU_T_TF32 || (k == EMU_K_F && emu_type_size(ty) < 2) ||
        ty == EMU_T_E4M3X2 || ty == EMU_T_E5M2X2 || ty == EMU_T_U16X2 || ty == EMU_T_S16X2 || emu_type_size(ty) == 0)
        return perr(ps, line, ".%s is an instruction type, not a register type %s (a .b register holds its bits)", emu_type_name(ty), types);
    if (ty == EMU_T_B128 && vec) return perr(ps, line, "vectors of .b128 registers are not supported");
    if (ty == EMU_T_PRED && vec) return perr(ps, line, "vectors of predicates are not supported");
    if (vec && vec * emu_type_size(ty) > 16)
        return perr(ps, line, "a .v%u .%s register is past 128 bits", vec, emu_type_name(ty));
    do {
        Tok t = ps->tok;
        if (t.kind != TK_IDENT) return perr(ps, t.line, "expected a register name, found %s", tok_text(&t, (char[48]){0}, 48));
        next(ps);
        int64_t count = -1;
        if (accept(ps, '<')) {
            if (!emu_parse_int(&ps->tok, &count) || count < 0 || count > 1000000) return perr(ps, t.line, "bad register count");
            next(ps);
            if (!expect(ps, '>')) return false;
        }
        if (vec && count >= 0) return perr(ps, t.line, "vector registers declared as a range ('%.*s<%d>') are not supported", (int)t.len, t.s, (int)count);
        if (!reg_unique(ps, t.s, t.len, count, t.line)) return false;
        if (vec) vreg_declare(ps, t.s, t.len, vec, ty);
        else emu_reg_declare(ps, t.s, t.len, count, ty);
    } while (accept(ps, ','));
    return expect(ps, ';');
}

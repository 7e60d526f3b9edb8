/* parse.c - PTX text to decoded EmuModule.
 *
 * Algorithm:
 *   1. A small lexer yields identifiers (dots, `%` and `$` included, so
 *      `ld.global.v4.b32`, `%tid.x` and `$L__BB0_2` are one token; `::` is
 *      kept inside, for cache hints), numbers (`0f`/`0d` hex floats, hex,
 *      decimal, decimal floats), strings and single-character punctuation.
 *      Every token carries its line; line-oriented directives (.version,
 *      .target, .address_size, .file, .loc) end at the end of their line.
 *      `.file N "name"` enters the module's file table; `.loc N line col`
 *      (nvcc's trailing `, function_name ..., inlined_at ...` ignored) gives
 *      the instructions after it, up to the next .loc or the function's end,
 *      their source location, recorded by PTX line for reports.
 *   2. Module level: variables (.global/.const/.shared with .align, arrays,
 *      initializers: parse_decl.c), entries and functions with their .param
 *      lists (parse_decl.c) and performance directives (.maxntid, .reqntid, ...).
 *   3. Bodies: .reg declarations (parse_decl.c; `%r<40>` declares %r0..%r39) allocate
 *      register-file slots; .local/.shared/.param declarations allocate
 *      addresses; labels record instruction indices; every instruction is
 *      decoded at once (parse_mods.c, emu_decode_mods): the opcode token is
 *      split on dots, the longest prefix naming an EMU_OPS entry is the
 *      opcode, the remaining parts are types, comparisons, rounding modes,
 *      spaces, vector widths, flags and per-op modes (see the tables in emu.h).  Anything unknown
 *      is an error naming the instruction and its line; then the checks of
 *      parse_check.c (operand counts and kinds, immediate limits, forms,
 *      the .target an instruction needs).
 *   4. Operands become slots: registers have fixed slots, immediates (constant
 *      expressions, evaluated by parse_expr.c) and
 *      symbol addresses become constant slots (deduplicated), vectors go to
 *      the function's vector pool, addresses keep base slot + offset.
 *   5. Per function (parse_func.c): branch labels and callees are resolved; nested { }
 *      blocks scope their .reg and .param declarations.  Then the module as
 *      a whole is finalised (module.c): calls checked, .global/.const
 *      variables allocated, symbol addresses filled, fast paths chosen,
 *      each kernel's shared memory checked against the .target's limit. */
#include "emu/emu.h"
#include "emu/exec.h"
#include "emu/parse_int.h"
#include "support/target.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables (the opcode, type, space and modifier tables: parse_mods.c) ---- */
static const char *const sreg_names[] = {
#define X(e, n) n,
    EMU_SREGS(X)
#undef X
};

/* ---- lexer (token and parser state: parse_int.h) ---- */
static bool is_ident_start(int c) { return isalpha(c) || c == '_' || c == '$' || c == '%' || c == '.'; }
static bool is_ident_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '.'; }

static Tok lex_raw(Parser *ps) {
    const char *p = ps->p;
    for (;;) {
        if (*p == '\n') { ps->line++; p++; }
        else if (isspace((unsigned char)*p)) p++;
        else if (p[0] == '/' && p[1] == '/') { while (*p && *p != '\n') p++; }
        else if (p[0] == '/' && p[1] == '*') {
            uint32_t from = ps->line;
            p += 2;
            while (*p && !(p[0] == '*' && p[1] == '/')) { if (*p == '\n') ps->line++; p++; }
            if (*p) p += 2;
            else perr(ps, from, "unterminated /* comment (it runs to the end of the PTX)"); /* ptxas: unexpected EOF */
        } else break;
    }
    Tok t = {TK_EOF, p, 0, ps->line};
    if (!*p) { ps->p = p; return t; }
    const char *s = p;
    if (is_ident_start((unsigned char)*p)) {
        p++;
        while (is_ident_char((unsigned char)*p) || (p[0] == ':' && p[1] == ':' && (p += 1))) p++;
        t.kind = TK_IDENT;
    } else if (isdigit((unsigned char)*p)) {
        p++;
        while (isalnum((unsigned char)*p) || *p == '.' ||
               ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E') && !(s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'f' || s[1] == 'd'))))
            p++;
        t.kind = TK_NUM;
    } else if (*p == '"') {
        p++;
        while (*p && *p != '"' && *p != '\n') p++;
        if (*p == '"') p++;
        t.kind = TK_STR;
    } else {
        p++;
        t.kind = TK_PUNCT;
    }
    t.s = s;
    t.len = (uint32_t)(p - s);
    ps->p = p;
    return t;
}

static void next(Parser *ps) {
    if (ps->has_peek) { ps->tok = ps->peek; ps->has_peek = false; }
    else ps->tok = lex_raw(ps);
}
static Tok *peek(Parser *ps) {
    if (!ps->has_peek) { ps->peek = lex_raw(ps); ps->has_peek = true; }
    return &ps->peek;
}
void emu_lex_next(Parser *ps) { next(ps); }
Tok *emu_lex_peek(Parser *ps) { return peek(ps); }
/* PTX is free-form: a directive without a ';' (.target, .address_size, .file, .loc) ends where its grammar does, and
 * the next directive or instruction may follow on the same line (`.address_size 64 .global .u32 g;`, `.loc 1 2 3
 * mov.u32 ...`), as ptxas reads it.  What can start nothing (a number, a string, ';' or ',') right after one is
 * ptxas's syntax error: true for such a token. */
static bool dangles(const Tok *t) {
    return t->kind == TK_NUM || t->kind == TK_STR || is_punct(t, ';') || is_punct(t, ',');
}

/* ---- slots ---- */
static uint32_t const_slot(Parser *ps, uint64_t value, int32_t sym, int64_t addend) { return emu_const_slot(ps, value, sym, addend); }

/* Register slot for a name, or UINT32_MAX.  The newest declaration wins:
 * a nested block's `.reg .u32 %r1;` shadows the function's `%r<38>`. */
static uint32_t reg_lookup(Parser *ps, const char *s, uint32_t len) {
    uint32_t d = len;
    while (d > 0 && isdigit((unsigned char)s[d - 1])) d--;
    int64_t num = -1;
    if (d < len && d > 0 && !(len - d > 1 && s[d] == '0')) { /* %r01 is not %r1 */
        num = 0;
        for (uint32_t k = d; k < len && num < (1 << 30); k++) num = num * 10 + (s[k] - '0');
    }
    for (uint32_t i = ps->nregs; i-- > 0;) {
        const struct RegRange *r = &ps->regs[i];
        if (r->count < 0 && r->plen == len && memcmp(r->prefix, s, len) == 0) return r->base;
        if (r->count >= 0 && num >= 0 && num < r->count && r->plen == d && memcmp(r->prefix, s, d) == 0)
            return r->base + (uint32_t)num * (r->wide ? 2 : 1);
    }
    int sr = emu_find_name(sreg_names, ARRAY_LEN(sreg_names), s, len);
    /* the reserved region exists for modules that can see it: %aggr_smem_size counts it too */
    if ((sr >= EMU_SREG_RSMEM_BEGIN && sr <= EMU_SREG_RSMEM_1) || sr == EMU_SREG_AGGR_SMEM) ps->m->reserved_smem = true;
    if (sr >= 0) return EMU_SLOT_SREG + (uint32_t)sr;
    if (len == 1 && s[0] == '_') return EMU_SLOT_SINK;
    return UINT32_MAX;
}

/* Whether slot is (a slot of) a .b128 register. */
static bool slot_is_wide(const Parser *ps, uint32_t slot) {
    for (uint32_t i = 0; i < ps->nregs; i++) {
        const struct RegRange *r = &ps->regs[i];
        if (r->wide && slot >= r->base && slot < r->base + 2 * (r->count < 0 ? 1 : (uint64_t)r->count)) return true;
    }
    return false;
}

/* .b128 registers (two slots each) appear only where the PTX ISA has them, in instructions that read and write
 * both halves: mov.b128 (a register, or a {..} pack/unpack of 2 or 4 narrower ones, the lowest first),
 * ld/ldu/st.b128 (the value) and atom.cas/.exch.b128 (d, b, c; d may be `_`); those operands must be .b128
 * registers (not immediates: a constant slot has 64 bits). */
/* The special registers as operands (ptxas of CUDA 13, tried register by register): only mov and an integer cvt
 * read one, as their source ("Special register argument not allowed for instruction 'add'"; an add, setp or st of
 * %tid.x loaded and ran), WARP_SZ aside, which is a constant.  A mov's type has the register's width: 32 bits, 64 for
 * %clock64, %globaltimer, %current_graph_exec and %pmN_64, also 16 for %tid, %ntid, %ctaid and %nctaid (once .v4.u16),
 * any of the three for %gridid ("Arguments mismatch for instruction 'mov'": mov.u64 of %tid.x took its 32 bits); in a
 * {..} pack each element has it; a cvt reads a 64-bit source type from a 64-bit register only.
 * %is_explicit_cluster is a .pred: mov.pred reads it (and a guard may name it). */
static unsigned sreg_bits(unsigned sr) {
    switch (sr) {
    case EMU_SREG_CLOCK64: case EMU_SREG_GLOBALTIMER: case EMU_SREG_CURRENT_GRAPH_EXEC: return 64;
    case EMU_SREG_GRIDID: return 0; /* 16, 32 or 64 */
    case EMU_SREG_IS_EXPLICIT_CLUSTER: return 1;
    default: return sr >= EMU_SREG_PM0_64 && sr <= EMU_SREG_PM7_64 ? 64 : 32;
    }
}

static bool sreg_fits(unsigned sr, unsigned bits, bool vec) {
    unsigned w = sreg_bits(sr);
    if (!w) return bits == 16 || bits == 32 || bits == 64;
    return bits == w || (!vec && bits == 16 && sr <= EMU_SREG_NCTAID_Z);
}

static bool check_sregs(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    for (unsigned i = 0; i < in->nops; i++) {
        unsigned n = in->ok[i] == EMU_OK_VEC ? in->on[i] : 1;
        for (unsigned k = 0; k < n; k++) {
            uint32_t slot = in->ok[i] == EMU_OK_VEC ? ps->vec[in->o[i] + k] : in->o[i];
            if ((in->ok[i] != EMU_OK_REG && in->ok[i] != EMU_OK_VEC && in->ok[i] != EMU_OK_ADDR) || slot < EMU_SLOT_SREG ||
                slot >= EMU_SLOT_SREG + EMU_SREG_COUNT || slot == EMU_SLOT_SREG + EMU_SREG_WARPSZ)
                continue;
            unsigned sr = slot - EMU_SLOT_SREG, kind = emu_type_kind(in->ty), bits = emu_type_size(in->ty) * 8;
            const char *name = sreg_names[sr];
            if (in->ok[i] == EMU_OK_ADDR) return perr(ps, line, "'%.*s': special register %s as an address", (int)len, s, name);
            if (sr == EMU_SREG_IS_EXPLICIT_CLUSTER) {
                if (in->op == EMU_OP_MOV && in->ty == EMU_T_PRED && i == 1 && in->ok[i] == EMU_OK_REG) continue;
                return perr(ps, line, "'%.*s': %%is_explicit_cluster is a .pred special register: only mov.pred reads it", (int)len, s);
            }
            bool integer = kind == EMU_K_B || kind == EMU_K_U || kind == EMU_K_S;
            if (in->op == EMU_OP_MOV && i == 1 && integer) {
                if (sreg_fits(sr, n > 1 ? bits / n : bits, n > 1)) continue;
                return perr(ps, line, "'%.*s': special register %s is %s, not %u bits", (int)len, s, name,
                            sreg_bits(sr) == 64 ? "64 bits" : sr <= EMU_SREG_NCTAID_Z && n == 1 ? "32 bits (or 16)" : "32 bits",
                            n > 1 ? bits / n : bits);
            }
            unsigned k2 = emu_type_kind(in->ty2);
            if (in->op == EMU_OP_CVT && i == 1 && n == 1 && (kind == EMU_K_U || kind == EMU_K_S) && (k2 == EMU_K_U || k2 == EMU_K_S)) {
                if (emu_type_size(in->ty2) <= 4 || sreg_bits(sr) != 32) continue;
                return perr(ps, line, "'%.*s': special register %s is 32 bits, not a .%s source", (int)len, s, name, emu_type_name(in->ty2));
            }
            return perr(ps, line, "'%.*s': special register %s as an operand: only mov and an integer cvt read one (mov.u32 %%r, %s)",
                        (int)len, s, name, name);
        }
    }
    return true;
}

static bool check_wide(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    bool b128 = in->ty == EMU_T_B128 && in->op < EMU_OP_MBARRIER; /* sm_90 ops' .b128 is no register type */
    if (!b128 && !ps->has_wide) return true;
    if (b128 && in->op != EMU_OP_MOV && in->op != EMU_OP_LD && in->op != EMU_OP_LDU && in->op != EMU_OP_ST &&
        !(in->op == EMU_OP_ATOM && (in->mode == EMU_MODE_ACAS || in->mode == EMU_MODE_AEXCH)))
        return perr(ps, line, "'%.*s': .b128 is a type of mov, ld, ldu, st and atom.cas/.exch only", (int)len, s);
    if (b128 && in->vec > 1) return perr(ps, line, "'%.*s': no vectors of .b128", (int)len, s);
    const Target *tg = ps->m->target;
    if (b128 && in->op == EMU_OP_ATOM && tg && tg->sm < 90) /* ISA, atom: "Support for .b128 type requires sm_90 or higher" */
        return perr(ps, line, "'%.*s' needs .target sm_90 or later (the module is for %s)", (int)len, s, tg->name);
    for (unsigned i = 0; i < in->nops; i++) {
        bool want = false; /* this operand must be a .b128 register */
        if (b128) {
            switch (in->op) {
            case EMU_OP_MOV: want = in->ok[i] != EMU_OK_VEC; break;
            case EMU_OP_LD: case EMU_OP_LDU: want = i == 0; break;
            case EMU_OP_ST: want = i == 1; break;
            case EMU_OP_ATOM: want = i != 1 && !(i == 0 && in->o[0] == EMU_SLOT_SINK); break;
            }
        }
        if (in->ok[i] == EMU_OK_VEC) {
            unsigned n = in->on[i];
            if (b128 && (in->op != EMU_OP_MOV || (n != 2 && n != 4)))
                return perr(ps, line, "'%.*s': mov.b128 packs or unpacks 2 or 4 registers", (int)len, s);
            for (unsigned k = 0; k < n; k++)
                if (slot_is_wide(ps, ps->vec[in->o[i] + k]))
                    return perr(ps, line, "'%.*s': a .b128 register cannot be an element of {..}", (int)len, s);
            continue;
        }
        bool wide = (in->ok[i] == EMU_OK_REG || in->ok[i] == EMU_OK_ADDR) && slot_is_wide(ps, in->o[i]);
        if (in->ok[i] == EMU_OK_ADDR) want = false;
        if (want && in->ok[i] == EMU_OK_REG && !wide) {
            if (emu_const_at(ps, in->o[i]) >= 0) /* ptxas takes `mov.b128 %q, 5`: refused, not cut to 64 bits */
                return perr(ps, line, "'%.*s': .b128 immediates are not supported by the emulator (constants hold 64 bits)", (int)len, s);
        }
        if (want && !(in->ok[i] == EMU_OK_REG && wide))
            return perr(ps, line, "'%.*s': operand %u must be a .b128 register", (int)len, s, i + 1);
        if (!want && wide)
            return perr(ps, line, "'%.*s': a .b128 register is an operand of mov, ld, ldu, st and atom.cas/.exch .b128 only", (int)len, s);
    }
    if (slot_is_wide(ps, in->guard)) return perr(ps, line, "'%.*s': a .b128 register as a guard", (int)len, s);
    return true;
}

void emu_reg_declare(Parser *ps, const char *s, uint32_t len, int64_t count, unsigned ty) {
    bool wide = ty == EMU_T_B128, pred = ty == EMU_T_PRED;
    uint32_t w = wide ? 2 : 1; /* a .b128 register: two slots, the low 64 bits first */
    ps->has_wide |= wide;
    GROW(ps->regs, ps->nregs, ps->capregs);
    ps->regs[ps->nregs++] = (struct RegRange){s, len, count, ps->nslots, pred, wide, 0, (uint8_t)ty};
    GROW(ps->allregs, ps->nallregs, ps->capallregs);
    ps->allregs[ps->nallregs++] = (struct EmuRegName){s, len, count, ps->nslots, w};
    ps->nslots += (count < 0 ? 1 : (uint32_t)count) * w;
}

/* The width of the vector register a name is (the newest declaration of the name), 0 if none. */
static unsigned vreg_width(const Parser *ps, const char *s, uint32_t len) {
    for (uint32_t i = ps->nregs; i-- > 0;) {
        const struct RegRange *r = &ps->regs[i];
        if (r->count < 0 && r->plen == len && memcmp(r->prefix, s, len) == 0) return r->vec;
    }
    return 0;
}

/* newest first: function-scope symbols shadow module ones */
static int32_t sym_lookup(Parser *ps, const char *s, uint32_t len) { return emu_sym_find(ps, s, len, 0); }

/* ---- operands ---- */
enum { OPD_REG, OPD_IMM, OPD_VEC, OPD_ADDR, OPD_SYM, OPD_LABEL, OPD_LIST };
typedef struct Opd {
    int kind;
    bool neg;          /* !%p */
    uint32_t slot;     /* REG; ADDR base (UINT32_MAX: symbol base) */
    Imm imm;
    int32_t sym;
    int64_t off;
    uint32_t vec[EMU_MAX_VEC], nvec;
    Imm vimm[EMU_MAX_VEC];       /* VEC: immediate elements (velem[k] set) */
    bool vimm_set[EMU_MAX_VEC];
    const char *name;
    uint32_t nlen;
    uint32_t coords[5], ncoords; /* ADDR `[tmap, {c0, ..}]`: the tensor coordinates (cp.async.bulk.tensor) */
    bool unified;      /* ADDR `[a].unified` (ld) */
    const char *sel;   /* REG of a video instruction: the selector after the dot (`%r2.b0`, `%r3.h10`), NULL: none */
    uint32_t sellen;
    bool minus;        /* REG `-%r` (vmad's sources) */
} Opd;

/* An empty operand.  Only the scalar fields are cleared (an Opd holds room for 128 vector elements):
 * the element arrays are written before they are read. */
static void opd_init(Opd *o) {
    o->kind = 0;
    o->neg = false;
    o->slot = 0;
    memset(&o->imm, 0, sizeof o->imm);
    o->sym = -1;
    o->off = 0;
    o->nvec = 0;
    o->name = NULL;
    o->nlen = 0;
    o->ncoords = 0;
    o->unified = false;
    o->sel = NULL;
    o->sellen = 0;
    o->minus = false;
}

/* The text of a video operand selector: b or h and digits (the forms each instruction takes: parse_mods.c). */
static bool is_video_sel(const char *s, uint32_t len) {
    if (len < 2 || (s[0] != 'b' && s[0] != 'h')) return false;
    for (uint32_t k = 1; k < len; k++)
        if (!isdigit((unsigned char)s[k])) return false;
    return true;
}

/* reg_sel = reg "." sel: a register with a video selector, one token (`%r2.b0`) or two (`%r2 .b0`, as ptxas takes
 * it).  False, consuming nothing, when the token is not a register with a selector glued on. */
static bool parse_reg_sel(Parser *ps, Opd *o) {
    Tok t = ps->tok;
    uint32_t dot = t.len;
    while (dot > 0 && t.s[dot - 1] != '.') dot--;
    if (t.kind != TK_IDENT || dot < 2 || !is_video_sel(t.s + dot, t.len - dot) || reg_lookup(ps, t.s, t.len) != UINT32_MAX)
        return false;
    uint32_t slot = reg_lookup(ps, t.s, dot - 1);
    if (slot == UINT32_MAX) return false;
    next(ps);
    o->kind = OPD_REG;
    o->slot = slot;
    o->sel = t.s + dot;
    o->sellen = t.len - dot;
    return true;
}

static bool parse_reg_or_name(Parser *ps, Opd *o) {
    Tok t = ps->tok;
    if (t.kind != TK_IDENT) return perr(ps, t.line, "expected an operand, found %s", tok_text(&t, (char[48]){0}, 48));
    next(ps);
    o->name = t.s;
    o->nlen = t.len;
    uint32_t slot = reg_lookup(ps, t.s, t.len);
    const Target *tg = ps->m->target;
    if (slot == EMU_SLOT_SREG + EMU_SREG_AGGR_SMEM && tg && tg->sm < 90) /* ISA: "Requires sm_90 or higher" */
        return perr(ps, t.line, "'%.*s' needs .target sm_90 or later (the module is for %s)", (int)t.len, t.s, tg->name);
    if (slot >= EMU_SLOT_SREG && slot < EMU_SLOT_SREG + EMU_SREG_COUNT && !emu_gate_sreg(ps, t.line, t.s, t.len)) return false;
    unsigned vw = slot != UINT32_MAX ? vreg_width(ps, t.s, t.len) : 0;
    if (vw) { /* a vector register: the operand {v.x, v.y, ..} */
        o->kind = OPD_VEC;
        for (unsigned k = 0; k < vw; k++) o->vimm_set[k] = false, o->vec[k] = slot + k;
        o->nvec = vw;
        return true;
    }
    if (slot != UINT32_MAX) { o->kind = OPD_REG; o->slot = slot; return true; }
    if (t.s[0] == '%') return perr(ps, t.line, "undeclared register '%.*s'", (int)t.len, t.s);
    int32_t sym = sym_lookup(ps, t.s, t.len);
    o->name = t.s;
    o->nlen = t.len;
    if (sym >= 0) { o->kind = OPD_SYM; o->sym = sym; return true; }
    o->kind = OPD_LABEL;
    return true;
}

/* operand = "{" (reg | cexpr) {"," (reg | cexpr)} "}" | "[" base ["+" ["-"] int] "]" | ["!"|"-"] reg | cexpr
 *         | sym ["+" int] | label | "(" names ")" (call only; cexpr: parse_expr.c) */
static bool parse_operand(Parser *ps, Opd *o, bool call) {
    opd_init(o);
    uint32_t line = ps->tok.line;
    if (accept(ps, '{')) {
        o->kind = OPD_VEC;
        do {
            if (o->nvec == EMU_MAX_VEC) return perr(ps, line, "vector operand with more than %d elements", EMU_MAX_VEC);
            if (emu_starts_const(ps)) { /* an immediate element: `{0, %rs9}` */
                if (!emu_parse_const(ps, &o->vimm[o->nvec])) return false;
                o->vimm_set[o->nvec] = true;
                o->vec[o->nvec++] = 0;
                continue;
            }
            Opd e;
            opd_init(&e);
            if (!parse_reg_or_name(ps, &e)) return false;
            if (e.kind != OPD_REG) return perr(ps, line, "vector operand element '%.*s' is not a register", (int)e.nlen, e.name);
            o->vimm_set[o->nvec] = false;
            o->vec[o->nvec++] = e.slot;
        } while (accept(ps, ','));
        return expect(ps, '}');
    }
    if (accept(ps, '[')) {
        o->kind = OPD_ADDR;
        o->slot = EMU_SLOT_ZERO;
        bool neg = is_punct(&ps->tok, '-') && peek(ps)->kind == TK_NUM; /* [-4]: ptxas takes it (of .local) */
        if (neg) next(ps);
        if (ps->tok.kind == TK_NUM) {
            Imm im;
            if (!emu_parse_imm(&ps->tok, false, &im) || im.kind != IMM_INT) return perr(ps, line, "bad address");
            o->off = neg ? -im.i : im.i;
            next(ps);
        } else {
            Opd b;
            opd_init(&b);
            if (!parse_reg_or_name(ps, &b)) return false;
            if (b.kind == OPD_REG) o->slot = b.slot;
            else if (b.kind == OPD_SYM) { o->slot = UINT32_MAX; o->sym = b.sym; }
            else return perr(ps, line, "unknown symbol '%.*s' in address", (int)b.nlen, b.name);
        }
        if (is_punct(&ps->tok, '+') || is_punct(&ps->tok, '-')) {
            bool neg = ps->tok.s[0] == '-';
            next(ps);
            if (accept(ps, '-')) neg = !neg;
            int64_t v;
            if (!emu_parse_int(&ps->tok, &v)) return perr(ps, line, "bad address offset '%.*s'", (int)ps->tok.len, ps->tok.s);
            next(ps);
            o->off += neg ? -v : v;
        }
        if (accept(ps, ',')) { /* [tensorMap, {c0, c1, ..}]: the coordinates of a tensor copy */
            if (!expect(ps, '{')) return false;
            do { /* each a .b32 register or an immediate: `{%r3, 5}` */
                if (o->ncoords == 5) return perr(ps, line, "more than 5 tensor coordinates");
                if (emu_starts_const(ps)) {
                    Tok t = ps->tok;
                    Imm im;
                    if (!emu_parse_const(ps, &im)) return false;
                    if (im.kind != IMM_INT || im.i < INT32_MIN || im.i > (int64_t)UINT32_MAX)
                        return perr(ps, line, "bad tensor coordinate '%.*s' (a 32-bit integer)", (int)t.len, t.s);
                    o->coords[o->ncoords++] = const_slot(ps, (uint32_t)im.i, -1, 0);
                    continue;
                }
                Opd e;
                opd_init(&e);
                if (!parse_reg_or_name(ps, &e)) return false;
                if (e.kind != OPD_REG) return perr(ps, line, "tensor coordinate '%.*s' is not a register", (int)e.nlen, e.name);
                o->coords[o->ncoords++] = e.slot;
            } while (accept(ps, ','));
            if (!expect(ps, '}')) return false;
        }
        if (!expect(ps, ']')) return false;
        if (ps->tok.kind == TK_IDENT && is(&ps->tok, ".unified")) { /* `ld.global.f32 d, [ugbl].unified;` */
            o->unified = true;
            next(ps);
        }
        return true;
    }
    if (call && accept(ps, '(')) {
        o->kind = OPD_LIST;
        if (accept(ps, ')')) return true;
        do { /* a .param variable, or a register or immediate (for a .reg parameter): EMU_CALL_REG */
            if (o->nvec == EMU_MAX_VEC) return perr(ps, line, "more than %d call arguments", EMU_MAX_VEC);
            o->vimm_set[o->nvec] = false;
            if (emu_starts_const(ps)) {
                /* a float literal is held as ptxas holds it: 0f bits zero-extended, 0d bits, a decimal one as a double's
                 * bits; vimm marks it (emit_operand: EmuIns.call) for emu_call's conversion to the parameter */
                Tok t = ps->tok;
                Imm im;
                if (!emu_parse_const(ps, &im)) return false;
                uint64_t bits = (uint64_t)im.i;
                if (im.kind == IMM_F32BITS) bits = (uint32_t)im.i;
                if (im.kind == IMM_FLOAT) memcpy(&bits, &im.f, 8);
                if (im.kind != IMM_INT && o->nvec >= 64)
                    return perr(ps, line, "unsupported call argument '%.*s': a float literal after the 64th argument (the emulator "
                                "takes them among the first 64)", (int)t.len, t.s);
                o->vimm_set[o->nvec] = im.kind != IMM_INT;
                o->vimm[o->nvec] = im;
                o->vec[o->nvec++] = const_slot(ps, bits, -1, 0) | EMU_CALL_REG;
                continue;
            }
            Opd e;
            opd_init(&e);
            if (!parse_reg_or_name(ps, &e)) return false;
            if (e.kind != OPD_SYM && e.kind != OPD_REG) return perr(ps, line, "unknown call argument '%.*s'", (int)e.nlen, e.name);
            o->vec[o->nvec++] = e.kind == OPD_SYM ? (uint32_t)e.sym : e.slot | EMU_CALL_REG;
        } while (accept(ps, ','));
        return expect(ps, ')');
    }
    if (emu_starts_const(ps)) { /* a constant expression: `5`, `-1`, `(1 << 20) - 1`, `!0` */
        o->kind = OPD_IMM;
        return emu_parse_const(ps, &o->imm);
    }
    bool neg = false, bang = false;
    if (accept(ps, '!')) bang = true;
    else if (accept(ps, '-')) neg = true;
    if (!parse_reg_sel(ps, o) && !parse_reg_or_name(ps, o)) return false;
    if (o->kind == OPD_REG && !o->sel && ps->tok.kind == TK_IDENT && ps->tok.s[0] == '.' &&
        is_video_sel(ps->tok.s + 1, ps->tok.len - 1)) { /* `%r2 .b0` */
        o->sel = ps->tok.s + 1;
        o->sellen = ps->tok.len - 1;
        next(ps);
    }
    if (neg && o->kind != OPD_REG) return perr(ps, line, "'-' before '%.*s', which is not a register", (int)o->nlen, o->name);
    o->neg = bang;
    o->minus = neg;
    if (o->kind == OPD_SYM && (is_punct(&ps->tok, '+') || is_punct(&ps->tok, '-'))) {
        bool m = ps->tok.s[0] == '-';
        next(ps);
        int64_t v;
        if (!emu_parse_int(&ps->tok, &v)) return perr(ps, line, "bad symbol offset");
        next(ps);
        o->off = m ? -v : v;
    }
    return true;
}

/* A variable named as the address of an instruction of one state space is a variable of that space (`ld.global [sm]`
 * of a .shared sm, `tensormap.replace...global [tl]` of a .local one, `prefetch.const.tensormap` of a .param one:
 * ptxas's "State space mismatch between instruction and address"; they loaded and read another window's bytes).
 * Generic instructions take any variable (its generic address) but a .param one, which has none by name (`ld.u32
 * [param]`, `prefetch.tensormap [param]`: the same error; mov and cvta.param give one); the copies with an address
 * in each of two spaces check theirs in parse_check.c. */
static bool named_space_fits(Parser *ps, const EmuIns *in, const Opd *o, uint32_t line, const Tok *opt) {
    if (o->kind != OPD_ADDR || o->slot != UINT32_MAX || o->sym < 0 || o->ncoords) return true;
    switch (in->op) {
    case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_ST: case EMU_OP_ATOM: case EMU_OP_RED: case EMU_OP_PREFETCH:
    case EMU_OP_TENSORMAP_REPLACE: break;
    default: return true;
    }
    const EmuSym *v = &ps->m->syms[o->sym];
    if (in->space == EMU_SP_GENERIC && v->space == EMU_SP_PARAM)
        return perr(ps, line, "'%.*s': '%s' is a .param variable, which a generic address does not name (.param instructions "
                    "do; or its address from mov, cvta.param)", (int)opt->len, opt->s, v->name);
    if (v->space == in->space || in->space == EMU_SP_GENERIC) return true;
    return perr(ps, line, "'%.*s': '%s' is a .%s variable, not one of the instruction's .%s space (or give its generic address "
                "to a generic form)", (int)opt->len, opt->s, v->name, emu_space_name(v->space), emu_space_name(in->space));
}

static bool put_operand(Parser *ps, EmuIns *in, unsigned i, Opd *o, unsigned *naddr, uint32_t line) {
    switch (o->kind) {
    case OPD_REG:
        in->o[i] = o->slot;
        in->ok[i] = EMU_OK_REG;
        if (o->neg) {
            if (i == 0 || in->op == EMU_OP_BRA || !slot_is_pred(ps, o->slot))
                return perr(ps, line, "'!' is allowed only on predicate sources (a .pred register)");
            in->on[i] = 1; /* negated predicate source */
        }
        if (o->sel || o->minus) return emu_video_operand(ps, in, i, o->sel, o->sellen, o->minus, line);
        return true;
    case OPD_IMM:
        in->o[i] = const_slot(ps, emu_imm_bits(&o->imm, emu_imm_type(in, i)), -1, 0);
        in->ok[i] = EMU_OK_REG;
        return true;
    case OPD_SYM:
        in->o[i] = const_slot(ps, 0, o->sym, o->off);
        in->ok[i] = EMU_OK_REG;
        return true;
    case OPD_VEC:
        for (uint32_t k = 0; k < o->nvec; k++) {
            if (!o->vimm_set[k]) continue;
            /* mov packs: the element is a lane of the type; elsewhere, of the type */
            unsigned ety = in->ty;
            if (in->op == EMU_OP_MOV) {
                unsigned es = emu_type_size(in->ty) / o->nvec;
                ety = es == 1 ? EMU_T_B8 : es == 2 ? EMU_T_B16 : es == 4 ? EMU_T_B32 : EMU_T_B64;
            }
            o->vec[k] = const_slot(ps, emu_imm_bits(&o->vimm[k], ety), -1, 0);
        }
        if (o->nvec == 1) { /* `{%r2}`: braces around one register are that register */
            in->o[i] = o->vec[0];
            in->ok[i] = EMU_OK_REG;
            return true;
        }
        for (uint32_t k = 0; k < o->nvec; k++) {
            GROW(ps->vec, ps->nvec, ps->capvec);
            ps->vec[ps->nvec++] = o->vec[k];
        }
        in->o[i] = ps->nvec - o->nvec;
        in->on[i] = (uint8_t)o->nvec;
        in->ok[i] = EMU_OK_VEC;
        return true;
    case OPD_ADDR:
        if (*naddr == 3) return perr(ps, line, "more than three address operands");
        in->o[i] = o->slot == UINT32_MAX ? const_slot(ps, 0, o->sym, 0) : o->slot;
        in->off[(*naddr)++] = o->off;
        in->ok[i] = EMU_OK_ADDR;
        return true;
    case OPD_LABEL:
        GROW(ps->fixes, ps->nfixes, ps->capfixes);
        ps->fixes[ps->nfixes++] = (struct Fix){ps->ncode, o->name, o->nlen, line, ps->cur_blk};
        in->ok[i] = EMU_OK_LABEL;
        return true;
    case OPD_LIST:
        for (uint32_t k = 0; k < o->nvec; k++) {
            GROW(ps->vec, ps->nvec, ps->capvec);
            ps->vec[ps->nvec++] = o->vec[k];
            /* float literals: the argument list's (a return list has no immediate: call_lists_ok) */
            if (o->vimm_set[k]) in->call.flit |= 1ull << k, in->call.flit64 |= (uint64_t)(o->vimm[k].kind != IMM_F32BITS) << k;
        }
        in->o[i] = ps->nvec - o->nvec;
        in->on[i] = (uint8_t)o->nvec;
        in->ok[i] = EMU_OK_FUNC;
        return true;
    }
    return false;
}

/* call = "call" [".uni"] [ "(" ret ")" "," ] name [ "," "(" arg { "," arg } ")" ]
 * Normalised to o[0] = return list, o[1] = the callee (resolved by name
 * with the labels), o[2] = argument list; list elements are .param
 * variables (symbol indices). */
/* The return and argument lists of a normalised call name .param variables or registers (for .reg
 * parameters; arguments may be immediates too). */
static bool call_lists_ok(Parser *ps, const EmuIns *in, uint32_t line) {
    for (unsigned k = 0; k < 3; k += 2)
        for (unsigned j = 0; j < in->on[k]; j++) {
            uint32_t e = ps->vec[in->o[k] + j];
            if (e & EMU_CALL_REG) {
                if (!k && emu_const_at(ps, e & ~EMU_CALL_REG) >= 0) return perr(ps, line, "a call's return value is an immediate");
                uint32_t sl = e & ~EMU_CALL_REG;
                if (!k && (sl == EMU_SLOT_ZERO || sl == EMU_SLOT_TRUE || (sl >= EMU_SLOT_SREG && sl < EMU_SLOT_SREG + EMU_SREG_COUNT)))
                    return perr(ps, line, "a call's return value is a special register");
                continue;
            }
            if (ps->m->syms[e].space != EMU_SP_PARAM)
                return perr(ps, line, "call %s must be .param variables or registers", k ? "arguments" : "return values");
        }
    return true;
}

static bool normalize_call(Parser *ps, EmuIns *in, uint32_t line) {
    /* call [(rets),] %reg, [(args),] prototype: an indirect call; the prototype (or .calltargets) label is
     * not needed: the callee's own signature is checked at the call */
    unsigned ri = in->nops > 0 && in->ok[0] == EMU_OK_FUNC ? 1 : 0;
    if (in->nops >= ri + 2 && in->ok[ri] == EMU_OK_REG && in->ok[in->nops - 1] == EMU_OK_LABEL) {
        unsigned ai = ri + 1;
        bool has_args = in->nops == ri + 3 && in->ok[ai] == EMU_OK_FUNC;
        if (in->nops != ri + 2 && !has_args)
            return perr(ps, line, "unsupported call form (expected 'call [(rets),] %%reg, [(args),] prototype')");
        if (ps->nfixes && ps->fixes[ps->nfixes - 1].ins == ps->ncode) ps->nfixes--; /* the prototype's label */
        EmuIns c = *in;
        in->o[0] = ri ? c.o[0] : 0;
        in->on[0] = ri ? c.on[0] : 0;
        in->ok[0] = EMU_OK_FUNC;
        in->o[1] = c.o[ri];
        in->on[1] = 0;
        in->ok[1] = EMU_OK_REG;
        in->o[2] = has_args ? c.o[ai] : 0;
        in->on[2] = has_args ? c.on[ai] : 0;
        in->ok[2] = EMU_OK_FUNC;
        in->nops = 3;
        in->target = UINT32_MAX;
        return call_lists_ok(ps, in, line);
    }
    int fi = -1;
    for (unsigned i = 0; i < in->nops; i++)
        if (in->ok[i] == EMU_OK_LABEL) { fi = (int)i; break; }
    if (fi < 0 || fi > 1 || in->nops > (unsigned)fi + 2 || (fi == 1 && in->ok[0] != EMU_OK_FUNC) ||
        (in->nops == (unsigned)fi + 2 && in->ok[fi + 1] != EMU_OK_FUNC))
        return perr(ps, line, "unsupported call form (expected 'call [(rets),] name[, (args)]' or "
                    "'call [(rets),] %%reg, [(args),] prototype')");
    EmuIns c = *in;
    in->o[0] = fi == 1 ? c.o[0] : 0;
    in->on[0] = fi == 1 ? c.on[0] : 0;
    in->o[1] = EMU_SLOT_SINK;
    in->on[1] = 0;
    in->o[2] = in->nops == (unsigned)fi + 2 ? c.o[fi + 1] : 0;
    in->on[2] = in->nops == (unsigned)fi + 2 ? c.on[fi + 1] : 0;
    in->ok[0] = in->ok[2] = EMU_OK_FUNC;
    in->ok[1] = EMU_OK_LABEL;
    in->nops = 3;
    if (!call_lists_ok(ps, in, line)) return false;
    const struct Fix *x = ps->nfixes ? &ps->fixes[ps->nfixes - 1] : NULL; /* the callee's name (resolved at the body's end) */
    return !x || x->ins != ps->ncode || emu_check_call_types(ps, in, x->s, x->len, line);
}

/* A bra to `name` (resolved with the other labels at the function's end); with no name, the caller sets its target. */
static void emit_bra(Parser *ps, const char *name, uint32_t len, uint32_t line) {
    EmuIns in;
    memset(&in, 0, sizeof in);
    in.guard = EMU_SLOT_TRUE;
    for (unsigned i = 0; i < EMU_MAX_OPS; i++) in.o[i] = EMU_SLOT_SINK;
    in.op = EMU_OP_BRA;
    in.line = line;
    in.nops = 1;
    in.ok[0] = EMU_OK_LABEL;
    if (len) {
        GROW(ps->fixes, ps->nfixes, ps->capfixes);
        ps->fixes[ps->nfixes++] = (struct Fix){ps->ncode, name, len, line, ps->cur_blk};
    }
    GROW(ps->code, ps->ncode, ps->capcode);
    ps->code[ps->ncode++] = in;
}

/* label: .branchtargets L0, L1, ...;  (brx.idx's table): a bra over the table, then a bra to each target, so
 * brx.idx r, label goes to label + 1 + r (exec.c). */
bool emu_parse_branchtargets(Parser *ps) {
    uint32_t line = ps->tok.line, skip = ps->ncode, n = 0;
    next(ps);
    /* its label: the last one, if it stands right before (brx.idx's operand must be one) */
    if (ps->nlabels && ps->labels[ps->nlabels - 1].at == skip && ps->labels[ps->nlabels - 1].blk == ps->cur_blk)
        ps->labels[ps->nlabels - 1].table = true;
    emit_bra(ps, NULL, 0, line); /* its target: set below, after the table */
    do {
        if (ps->tok.kind != TK_IDENT) return perr(ps, ps->tok.line, "expected a label in .branchtargets");
        emit_bra(ps, ps->tok.s, ps->tok.len, ps->tok.line);
        n++;
        next(ps);
    } while (accept(ps, ','));
    ps->code[skip].target = skip + 1 + n;
    return expect(ps, ';');
}

/* ins = [ "@" ["!"] pred ] opcode [ operand { ("," | "|") operand } ] ";" */
static bool statement_directive(const Tok *t) {
    static const char *const names[] = {".loc", ".file", ".pragma", ".reg"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (t->len == strlen(names[i]) && memcmp(t->s, names[i], t->len) == 0) return true;
    return false;
}

bool emu_parse_ins(Parser *ps) {
    EmuIns in;
    memset(&in, 0, sizeof in);
    in.guard = EMU_SLOT_TRUE;
    for (unsigned i = 0; i < EMU_MAX_OPS; i++) in.o[i] = EMU_SLOT_SINK;
    uint32_t line = ps->tok.line;
    in.line = line;
    if (accept(ps, '@')) {
        if (accept(ps, '!')) in.gneg = 1;
        Tok t = ps->tok;
        uint32_t slot = t.kind == TK_IDENT ? reg_lookup(ps, t.s, t.len) : UINT32_MAX;
        if (slot == UINT32_MAX) return perr(ps, line, "bad guard predicate '%.*s'", (int)t.len, t.s);
        if (slot_range(ps, slot) && !slot_is_pred(ps, slot)) /* ptxas refuses it; read as "not zero" it would run */
            return perr(ps, line, "guard '%.*s' is not a .pred register (setp makes one: setp.ne.u32 %%p, %.*s, 0)", (int)t.len, t.s,
                        (int)t.len, t.s);
        in.guard = slot;
        next(ps);
    }
    Tok opt = ps->tok;
    if (opt.kind != TK_IDENT) return perr(ps, line, "expected an instruction, found %s", tok_text(&opt, (char[48]){0}, 48));
    next(ps);
    /* Free-form: ptxas takes whitespace and comments between an opcode and its modifiers (`ld .global\n.u32`,
     * `bra .uni`); no operand begins with '.', so those tokens are joined into one opcode text (kept in the arena:
     * the messages quote it).  A statement's own directive (`.loc`, `.file`, `.pragma`, `.reg`) is never a modifier:
     * an instruction missing its ';' before one is reported by its own opcode. */
    for (; ps->tok.kind == TK_IDENT && ps->tok.s[0] == '.' && !statement_directive(&ps->tok); next(ps)) {
        char *buf = arena_alloc(ps->a, (size_t)opt.len + ps->tok.len + 1);
        memcpy(buf, opt.s, opt.len);
        memcpy(buf + opt.len, ps->tok.s, ps->tok.len);
        opt.s = buf;
        opt.len += ps->tok.len;
    }
    if (!emu_decode_mods(ps, &in, opt.s, opt.len, line)) return false;
    unsigned naddr = 0;
    uint32_t second = 0; /* `d|q`: the slot of q + 1 (0: none) */
    if (!is_punct(&ps->tok, ';')) {
        unsigned i = 0;
        for (;;) {
            Opd o;
            o.name = NULL;
            if (!parse_operand(ps, &o, in.op == EMU_OP_CALL)) return false;
            /* bra's target is a label, even where a register or variable of an outer block has its name (ptxas) */
            if (in.op == EMU_OP_BRA && i == 0 && (o.kind == OPD_REG || o.kind == OPD_SYM) && o.name)
                o.kind = OPD_LABEL;
            if (i == EMU_MAX_OPS) return perr(ps, line, "too many operands for '%.*s'", (int)opt.len, opt.s);
            /* ptxas: "Vector of size 1 is expected" for stmatrix .x1's bare source register (it loaded and ran) */
            if (in.op == EMU_OP_STMATRIX && i == 1 && o.kind == OPD_REG)
                return perr(ps, line, "'%.*s': the source of stmatrix is a register list, {%.*s} for .x1", (int)opt.len, opt.s,
                            (int)o.nlen, o.name);
            /* .im2col's offsets: 16-bit, {%rs1} of a .3d copy stays a vector of one (ptxas: "Vector expected" for a bare
             * register) */
            bool offsets = (in.xflags & EMU_XF_IM2COL) && i == (in.op == EMU_OP_CP_BULK_PREFETCH ? 2u : 4u) && in.op != EMU_OP_CP_RED_BULK_TENSOR;
            if (offsets && o.kind != OPD_VEC)
                return perr(ps, line, "'%.*s': the im2col offsets are a vector {..} of 16-bit values, one per spatial dimension",
                            (int)opt.len, opt.s);
            if (offsets) {
                for (uint32_t k = 0; k < o.nvec; k++) {
                    GROW(ps->vec, ps->nvec, ps->capvec);
                    ps->vec[ps->nvec++] = o.vimm_set[k] ? const_slot(ps, emu_imm_bits(&o.vimm[k], EMU_T_B16), -1, 0) : o.vec[k];
                }
                in.o[i] = ps->nvec - o.nvec;
                in.on[i] = (uint8_t)o.nvec;
                in.ok[i] = EMU_OK_VEC;
            } else if (!put_operand(ps, &in, i, &o, &naddr, line)) return false;
            if (!named_space_fits(ps, &in, &o, line, &opt)) return false;
            /* a call's argument and return .param variables are written and read unconditionally (ptxas: "Illegal to
             * predicate instruction 'st.param' with operand 'a'"; it loaded and ran guarded) */
            if (o.kind == OPD_ADDR && o.slot == UINT32_MAX && o.sym >= 0 && in.guard != EMU_SLOT_TRUE &&
                (in.op == EMU_OP_ST || in.op == EMU_OP_LD) && ps->m->syms[o.sym].space == EMU_SP_PARAM &&
                ps->m->syms[o.sym].addr >= EMU_PARAM_FRAME && ps->m->syms[o.sym].addr < EMU_PARAM_ARGS)
                return perr(ps, line, "'%.*s': a guard on %s of the call parameter '%s' (a call's .param variables are "
                            "written and read unguarded)", (int)opt.len, opt.s, in.op == EMU_OP_ST ? "a store" : "a load",
                            ps->m->syms[o.sym].name);
            if (o.kind == OPD_IMM && in.op != EMU_OP_CALL && !emu_check_imm_kind(ps, &in, i, &o.imm, line, opt.s, opt.len)) return false;
            if (o.kind == OPD_VEC && in.op == EMU_OP_ST) /* st's values; mov packs any element ptxas takes, and wmma.mma's
                                                          * fragments take an integer one (ptxas) */
                for (uint32_t k = 0; k < o.nvec; k++)
                    if (o.vimm_set[k] && !emu_check_imm_kind(ps, &in, i, &o.vimm[k], line, opt.s, opt.len)) return false;
            if (o.unified) {
                if (in.op != EMU_OP_LD && in.op != EMU_OP_LDU)
                    return perr(ps, line, "'%.*s': only ld and ldu take a .unified address", (int)opt.len, opt.s);
                in.xflags |= EMU_XF_UNIFIED;
            }
            i++;
            if (o.kind == OPD_ADDR && o.ncoords) { /* [tmap, {c..}]: the coordinates are the next operand */
                if (in.op != EMU_OP_CP_BULK_TENSOR && in.op != EMU_OP_CP_BULK_PREFETCH && in.op != EMU_OP_CP_RED_BULK_TENSOR)
                    return perr(ps, line, "only cp.async.bulk.tensor takes [tensorMap, {coordinates}]");
                /* a tensor map named by a variable is a .global one; a kernel's .param tensor map is given by its
                 * address (mov.u64 %rd, tmap) (ptxas: "State space mismatch between instruction and address"; .const
                 * and .shared ones too; each loaded and ran) */
                if (o.slot == UINT32_MAX && o.sym >= 0 && ps->m->syms[o.sym].space != EMU_SP_GLOBAL)
                    return perr(ps, line, "'%.*s': the tensor map '%s' is a .%s variable: a tensor map named directly is a "
                                ".global one (give a .param one by its address: mov.u64 %%rd, %s)", (int)opt.len, opt.s,
                                ps->m->syms[o.sym].name, emu_space_name(ps->m->syms[o.sym].space), ps->m->syms[o.sym].name);
                if (i == EMU_MAX_OPS) return perr(ps, line, "too many operands for '%.*s'", (int)opt.len, opt.s);
                Opd c;
                opd_init(&c);
                c.kind = OPD_VEC;
                c.nvec = o.ncoords;
                memcpy(c.vec, o.coords, o.ncoords * sizeof *o.coords);
                memset(c.vimm_set, 0, c.nvec * sizeof *c.vimm_set);
                if (c.nvec == 1) { /* one coordinate stays a vector of one (put_operand would unwrap it) */
                    GROW(ps->vec, ps->nvec, ps->capvec);
                    ps->vec[ps->nvec++] = c.vec[0];
                    in.o[i] = ps->nvec - 1;
                    in.on[i] = 1;
                    in.ok[i] = EMU_OK_VEC;
                } else if (!put_operand(ps, &in, i, &c, &naddr, line)) return false;
                i++;
            }
            if (accept(ps, '|')) {
                /* setp p|q: q goes to operand 4 after the sources; remember it in slot 5 for now */
                Opd q;
                if (!parse_operand(ps, &q, false)) return false;
                if (q.kind != OPD_REG || i != 1 || second) return perr(ps, line, "bad second predicate destination");
                second = q.slot + 1;
            }
            if (!accept(ps, ',')) break;
        }
        in.nops = (uint8_t)i;
    }
    if (!expect(ps, ';')) return false;
    if (in.flags & EMU_F(CACHE_HINT)) { /* .L2::cache_hint: the last operand is the 64-bit cache policy, a hint */
        /* atom and red: of .global or generic addresses, every operation but cas (ptxas: "Modifier '.L2::cache_hint'
         * cannot be applied to '.shared' space", "Illegal modifier '.L2::cache_hint'"; they loaded) */
        if ((in.op == EMU_OP_ATOM || in.op == EMU_OP_RED) && in.space == EMU_SP_SHARED)
            return perr(ps, line, "'%.*s': .L2::cache_hint is for .global or generic addresses, not .shared", (int)opt.len, opt.s);
        if (in.op == EMU_OP_ATOM && in.mode == EMU_MODE_ACAS)
            return perr(ps, line, "'%.*s': atom.cas takes no .L2::cache_hint (the other operations do)", (int)opt.len, opt.s);
        if (in.nops < 2 || in.ok[in.nops - 1] != EMU_OK_REG)
            return perr(ps, line, "'%.*s' needs a cache-policy operand last", (int)opt.len, opt.s);
        const struct RegRange *r = slot_range(ps, in.o[in.nops - 1]); /* ptxas: "Arguments mismatch" (it loaded) */
        if (r && (emu_type_size(r->ty) != 8 || emu_type_kind(r->ty) == EMU_K_F))
            return perr(ps, line, "'%.*s': the cache policy is a 64-bit integer register (.b64, .u64, .s64), not .%s", (int)opt.len,
                        opt.s, emu_type_name(r->ty));
        in.nops--;
        in.o[in.nops] = EMU_SLOT_SINK;
        in.ok[in.nops] = EMU_OK_NONE;
        in.flags &= ~EMU_F(CACHE_HINT);
    }
    if (in.op == EMU_OP_CP_ASYNC && in.nops >= 4 && in.ok[3] == EMU_OK_REG && slot_is_pred(ps, in.o[3]))
        in.xflags |= EMU_XF_IGNORE_SRC; /* cp.async [d], [s], cp-size, ignore-src */
    if (in.op == EMU_OP_SETP) {
        /* normalise: o[0]=p, o[1]=a, o[2]=b, o[3]=c (bool source, TRUE if none), o[4]=q (SINK if none) */
        uint32_t q = second ? second - 1 : EMU_SLOT_SINK;
        if (in.nops == 4 && !in.boolop) return perr(ps, line, "setp with a fourth operand needs .and/.or/.xor");
        if (in.nops == 3 && in.boolop) /* ptxas: "Arguments mismatch" (it ran as c = true) */
            return perr(ps, line, "'%.*s': setp with .and/.or/.xor needs its fourth operand, the predicate c it combines with",
                        (int)opt.len, opt.s);
        if (in.nops == 3) { in.o[3] = EMU_SLOT_TRUE; in.ok[3] = EMU_OK_REG; }
        if (!in.boolop) in.boolop = EMU_MODE_AAND;
        in.o[4] = q;
        in.ok[4] = EMU_OK_REG;
        in.nops = in.nops == 3 ? 3 : 4;
    } else if (in.op == EMU_OP_LOP3 && (second || in.boolop)) {
        /* lop3.BoolOp d|p, a, b, c, immLut, q: p = (d != 0) BoolOp q, p stored as o[6] */
        if (!second || !in.boolop || in.nops != 6)
            return perr(ps, line, "'%.*s': lop3 with a predicate destination is lop3.and or lop3.or d|p, a, b, c, immLut, q",
                        (int)opt.len, opt.s);
        if (!slot_is_pred(ps, second - 1)) return perr(ps, line, "'%.*s': the second destination is not a .pred register", (int)opt.len, opt.s);
        in.o[6] = second - 1;
    } else if (second && in.op != EMU_OP_SHFL && in.op != EMU_OP_ELECT && !(in.op == EMU_OP_MATCH && in.mode == EMU_MODE_ALL)) {
        return perr(ps, line, "'|' is only valid in setp, shfl, elect, match.all and lop3.and/.or destinations");
    } else if (in.op == EMU_OP_SHFL || in.op == EMU_OP_MATCH || in.op == EMU_OP_ELECT) {
        /* shfl d|p, a, b, c, mask, match.all d|p, a, mask and elect.sync d|p, mask: p stored as o[5] */
        in.o[5] = second ? second - 1 : EMU_SLOT_SINK;
    }
    if (in.op == EMU_OP_CALL && !normalize_call(ps, &in, line)) return false;
    if (!emu_check_ins(ps, &in, line, opt.s, opt.len) || !emu_check_limits(ps, &in, line, opt.s, opt.len)) return false;
    if (!check_wide(ps, &in, line, opt.s, opt.len) || !check_sregs(ps, &in, line, opt.s, opt.len)) return false;
    if (!emu_check_operands(ps, &in, line, opt.s, opt.len) || !emu_gate_ins(ps, line, opt.s, opt.len, in.nops) ||
        !emu_check_words(ps, &in, line, opt.s, opt.len))
        return false;
    GROW(ps->code, ps->ncode, ps->capcode);
    ps->code[ps->ncode++] = in;
    return true;
}

/* A `.file` name as reports print it: the escapes LLVM writes (`\\`, octal `\303\251` for the bytes of an é,
 * `\042` for a quote; also `\xHH`) become their bytes, so a report names `/home/josé/k.tile`, not
 * `/home/jos\303\251/k.tile`; an escape of a control byte stays as written (a report keeps one line). */
static const char *file_name_unescape(Arena *a, const char *s, size_t n) {
    char *out = arena_alloc(a, n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) {
            *o++ = s[i];
            continue;
        }
        size_t j = i + 1;
        unsigned v = 0;
        int digits = 0;
        if (s[j] >= '0' && s[j] <= '7') {
            for (; j < n && digits < 3 && s[j] >= '0' && s[j] <= '7'; j++, digits++) v = v * 8 + (unsigned)(s[j] - '0');
        } else if (s[j] == 'x') {
            for (j++; j < n && digits < 2 && isxdigit((unsigned char)s[j]); j++, digits++)
                v = v * 16 + (unsigned)(isdigit((unsigned char)s[j]) ? s[j] - '0' : (tolower((unsigned char)s[j]) - 'a' + 10));
        } else if (s[j] == '\\') {
            *o++ = '\\', i = j;
            continue;
        }
        if (digits && v <= 0xff && v >= 0x20 && v != 0x7f) {
            *o++ = (char)v, i = j - 1;
        } else {
            *o++ = s[i]; /* kept as written */
        }
    }
    *o = 0;
    return out;
}

/* file = ".file" NUMBER STRING [ "," NUMBER [ "," NUMBER ] ]   (timestamp and size are ignored)
 * As ptxas: at module scope only, a number below 2^32 declared once (the same name again is "Duplicate file index"
 * too), no ';', third number or second name after it (syntax errors); its parts on any lines, and the next directive on
 * its line (free-form: `dangles`). */
bool emu_parse_file(Parser *ps) {
    EmuModule *m = ps->m;
    uint32_t line = ps->tok.line;
    if (ps->fn) return perr(ps, line, "bad .file directive: .file is a module-scope directive, not one of a function's body");
    next(ps);
    int64_t num;
    if (!emu_parse_int(&ps->tok, &num) || num < 0 || num > UINT32_MAX)
        return perr(ps, line, "bad .file directive: expected a file number (below 2^32)");
    next(ps);
    const Tok *t = &ps->tok;
    if (t->kind != TK_STR || t->len < 2 || t->s[t->len - 1] != '"')
        return perr(ps, line, "bad .file directive: expected the file name in quotes");
    const char *name = file_name_unescape(ps->a, t->s + 1, t->len - 2);
    for (uint32_t i = 0; i < m->nsrcfiles; i++)
        if (m->srcfiles[i].num == (uint32_t)num) return perr(ps, line, ".file %u declared twice (a file number names one file)", (unsigned)num);
    next(ps);
    for (int k = 0; k < 2 && is_punct(&ps->tok, ','); k++) { /* the timestamp, then the size */
        next(ps);
        int64_t v;
        if (!emu_parse_int(&ps->tok, &v))
            return perr(ps, line, "bad .file directive: expected a number (timestamp, size) after ','");
        next(ps);
    }
    if (dangles(&ps->tok)) {
        char b[48];
        return perr(ps, line, "bad .file directive: %s after .file N \"name\"[, timestamp[, size]]", tok_text(&ps->tok, b, sizeof b));
    }
    GROW(m->srcfiles, m->nsrcfiles, ps->capsrcfiles);
    m->srcfiles[m->nsrcfiles++] = (struct EmuSrcFile){(uint32_t)num, name};
    return true;
}

/* pragma = ".pragma" STRING { "," STRING } ";"   (hints: the emulator runs the code as it is)
 * As ptxas: "nounroll" goes anywhere; "used_bytes_mask" (PTX 8.3), "enable_smem_spilling" (PTX 8.7) and "frequency" (PTX 9.0)
 * only in a function's body; another string is an error at module scope and ignored (ptxas warns) in a function.
 * A module-scope or signature .pragma was refused as an unknown directive. */
bool emu_parse_pragma(Parser *ps, EmuPragmaScope where) {
    uint32_t line = ps->tok.line;
    next(ps);
    do {
        const Tok *t = &ps->tok;
        if (t->kind != TK_STR || t->len < 2 || t->s[t->len - 1] != '"') {
            char b[48];
            return perr(ps, t->line, "bad .pragma: expected a string in quotes, found %s", tok_text(t, b, sizeof b));
        }
        const char *v = t->s + 1;
        uint32_t n = t->len - 2, w = 0;
        while (w < n && v[w] != ' ') w++;
        static const struct { const char *name; uint8_t ptx; } body_only[] = {
            {"used_bytes_mask", 83}, {"enable_smem_spilling", 87}, {"frequency", 90}};
        int k = -1;
        for (int i = 0; i < 3; i++)
            if (strlen(body_only[i].name) == w && !memcmp(v, body_only[i].name, w)) k = i;
        bool nounroll = n == 8 && !memcmp(v, "nounroll", 8);
        if (k >= 0 && where != EMU_PRAGMA_BODY)
            return perr(ps, t->line, ".pragma \"%.*s\" is for a function's body", (int)n, v);
        if (k >= 0 && ps->ptx_version < body_only[k].ptx)
            return perr(ps, t->line, ".pragma \"%.*s\" needs PTX ISA .version %u.%u or later (the module's .version is %u.%u)", (int)n, v,
                        body_only[k].ptx / 10u, body_only[k].ptx % 10u, ps->ptx_version / 10u, ps->ptx_version % 10u);
        if (k < 0 && !nounroll && where == EMU_PRAGMA_MODULE)
            return perr(ps, t->line, ".pragma \"%.*s\" is not one ptxas knows (\"nounroll\" is the module-scope one)", (int)n, v);
        next(ps);
    } while (accept(ps, ','));
    if (!is_punct(&ps->tok, ';')) return perr(ps, line, "bad .pragma: expected ';' after its strings");
    next(ps);
    return true;
}

/* The location (file, line, column) of a .loc, remembered for the inlined_at of later ones (Parser.locs_seen:
 * open addressing, 0 in `used` empty). */
static uint32_t loc_hash(const int64_t v[3]) {
    uint32_t k[3] = {(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]};
    return hash_fnv1a(k, sizeof k, 2166136261u);
}

static bool loc_seen(const Parser *ps, const int64_t v[3]) {
    if (!ps->caplocs_seen) return false;
    for (uint32_t i = loc_hash(v) & (ps->caplocs_seen - 1);; i = (i + 1) & (ps->caplocs_seen - 1)) {
        const struct LocSeen *e = &ps->locs_seen[i];
        if (!e->used) return false;
        if (e->f == v[0] && e->l == v[1] && e->c == v[2]) return true;
    }
}

static void loc_remember(Parser *ps, const int64_t v[3]) {
    if (loc_seen(ps, v)) return;
    if ((ps->nlocs_seen + 1) * 2 > ps->caplocs_seen) { /* grow: at most half full */
        uint32_t cap = ps->caplocs_seen ? ps->caplocs_seen * 2 : 64;
        struct LocSeen *old = ps->locs_seen, *t = calloc(cap, sizeof *t);
        if (!t) out_of_memory();
        uint32_t oldcap = ps->caplocs_seen;
        ps->locs_seen = t;
        ps->caplocs_seen = cap;
        ps->nlocs_seen = 0;
        for (uint32_t i = 0; i < oldcap; i++)
            if (old[i].used) loc_remember(ps, (int64_t[3]){old[i].f, old[i].l, old[i].c});
        free(old);
    }
    uint32_t i = loc_hash(v) & (ps->caplocs_seen - 1);
    while (ps->locs_seen[i].used) i = (i + 1) & (ps->caplocs_seen - 1);
    ps->locs_seen[i] = (struct LocSeen){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], 1};
    ps->nlocs_seen++;
}

/* Three numbers below 2^32 into v (on any lines: PTX is free-form). */
static bool loc_numbers(Parser *ps, uint32_t line, int64_t v[3], const char *what) {
    for (int n = 0; n < 3; n++, next(ps))
        if (!emu_parse_int(&ps->tok, &v[n]) || v[n] < 0 || v[n] > UINT32_MAX) {
            char b[48];
            return perr(ps, line, "bad .loc directive: expected %s (three numbers below 2^32), found %s", what,
                        tok_text(&ps->tok, b, sizeof b));
        }
    return true;
}

/* loc = ".loc" FILE LINE COLUMN [ "," "function_name" LABEL [ "+" NUMBER ] "," "inlined_at" FILE LINE COLUMN ]
 * The instructions that follow, up to the next .loc or the function's end,
 * come from FILE:LINE:COLUMN; line 0 means no location.  As ptxas: in a function's body only, the column not
 * left out, no ';' or number after it (an instruction may follow on its line: `dangles`); inlined_at names a location an earlier .loc of the module has, and the
 * function_name label is one of a .section (checked at the module's end: the sections follow the code).  They
 * loaded: the extras were skipped whatever they were. */
bool emu_parse_loc(Parser *ps) {
    EmuModule *m = ps->m;
    uint32_t line = ps->tok.line;
    if (!ps->fn) return perr(ps, line, "bad .loc directive: .loc is for a function's body, not module scope");
    next(ps);
    int64_t v[3] = {0, 0, 0};
    if (!loc_numbers(ps, line, v, "a file number, a line and a column")) return false;
    if (is_punct(&ps->tok, ',')) {
        next(ps);
        char b[48];
        if (!is(&ps->tok, "function_name"))
            return perr(ps, line, "bad .loc directive: expected 'function_name LABEL, inlined_at FILE LINE COLUMN' after ',', found %s",
                        tok_text(&ps->tok, b, sizeof b));
        next(ps);
        if (ps->tok.kind != TK_IDENT || ps->tok.s[0] == '.')
            return perr(ps, line, "bad .loc directive: expected a label after function_name, found %s", tok_text(&ps->tok, b, sizeof b));
        GROW(ps->fn_names, ps->nfn_names, ps->capfn_names);
        ps->fn_names[ps->nfn_names++] = (struct FnName){ps->tok.s, ps->tok.len, line};
        next(ps);
        if (is_punct(&ps->tok, '+')) {
            next(ps);
            int64_t off;
            if (!emu_parse_int(&ps->tok, &off))
                return perr(ps, line, "bad .loc directive: expected a number after function_name's '+'");
            next(ps);
        }
        if (!is_punct(&ps->tok, ',')) return perr(ps, line, "bad .loc directive: function_name needs ', inlined_at FILE LINE COLUMN' after it");
        next(ps);
        if (!is(&ps->tok, "inlined_at"))
            return perr(ps, line, "bad .loc directive: expected inlined_at after function_name's label, found %s", tok_text(&ps->tok, b, sizeof b));
        next(ps);
        int64_t at[3];
        if (!loc_numbers(ps, line, at, "inlined_at's file number, line and column")) return false;
        if (!loc_seen(ps, at))
            return perr(ps, line, "bad .loc directive: inlined_at %u %u %u is no location an earlier .loc gives (the call's own .loc comes first)",
                        (unsigned)at[0], (unsigned)at[1], (unsigned)at[2]);
    }
    if (dangles(&ps->tok)) {
        char b[48];
        return perr(ps, line, "bad .loc directive: %s after its location", tok_text(&ps->tok, b, sizeof b));
    }
    loc_remember(ps, v);
    if (!v[1]) {
        ps->cur_srcloc = 0;
        return true;
    }
    if (!m->line_srcloc) m->line_srcloc = ARENA_ARRAY(ps->a, uint32_t, m->nlines + 2);
    if (m->nsrclocs == 0) {
        GROW(m->srclocs, m->nsrclocs, ps->capsrclocs);
        m->srclocs[m->nsrclocs++] = (EmuSrcLoc){0};
    }
    EmuSrcLoc *last = &m->srclocs[m->nsrclocs - 1];
    if (m->nsrclocs > 1 && last->file == v[0] && last->line == v[1] && last->col == v[2]) {
        ps->cur_srcloc = m->nsrclocs - 1;
        return true;
    }
    GROW(m->srclocs, m->nsrclocs, ps->capsrclocs);
    m->srclocs[m->nsrclocs] = (EmuSrcLoc){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], line};
    ps->cur_srcloc = m->nsrclocs++;
    return true;
}

/* The PTX ISA versions ptxas of CUDA 13.4 reads, as each major's last minor (1.0-1.5, 2.0-2.3, ... 8.0-8.8, 9.0-9.4;
 * 5.1 too, which the ISA's documents skip); the last is the newest.  Triton 3.9 assembles for sm_90 and newer with
 * the ptxas of CUDA 13.4 it ships, so it writes .version 9.4 there.  A version only says which instructions a module
 * may use; one the emulator lacks is refused at its own line.  Others are refused as ptxas refuses them
 * ("Unsupported .version 8.9; current version is '9.4'"), a minor of 10 or more too (ptxas reads some of them as
 * the next major's: 7.10 as 8.0). */
static const uint8_t PTX_LAST_MINOR[] = {0, 5, 3, 2, 3, 1, 5, 8, 8, 4};

static bool ptx_version_known(unsigned major, unsigned minor) {
    return major >= 1 && major < sizeof PTX_LAST_MINOR && minor <= PTX_LAST_MINOR[major];
}

/* header = ".version" MAJOR "." MINOR | ".target" name { "," name }
 * The first .target name that is in the target table (support/target.h),
 * or one with the same SM number (sm_90 -> sm_90a), sets the limits the
 * module is checked against (sm_90 without sm_90a's own instructions); other names (texmode_*, debug, ...) are
 * modifiers.  No known target: the largest limits of any.  Free-form (`dangles`) but for .version, whose number
 * ptxas wants on its line; the next directive may follow on the line of either. */
static bool parse_header(Parser *ps) {
    uint32_t line = ps->tok.line;
    if (is(&ps->tok, ".version")) {
        next(ps);
        Tok v = ps->tok;
        unsigned major = 0, minor = 0;
        char buf[16];
        int n = 0;
        if (v.kind == TK_NUM && v.line == line && v.len < sizeof buf) {
            memcpy(buf, v.s, v.len);
            buf[v.len] = 0;
            if (sscanf(buf, "%u.%u%n", &major, &minor, &n) != 2 || n != (int)v.len) n = 0;
        }
        if (v.line != line) /* ptxas: "Missing .version directive at start of file" */
            return perr(ps, line, "bad .version: MAJOR.MINOR goes on the line of .version");
        if (!n) return perr(ps, line, "bad .version '%.*s' (expected MAJOR.MINOR)", (int)v.len, v.s);
        if (!ptx_version_known(major, minor)) {
            unsigned last = sizeof PTX_LAST_MINOR - 1;
            if (major > last || (major == last && minor > PTX_LAST_MINOR[last])) /* ptxas: "current version is '9.4'" */
                return perr(ps, line, "unsupported .version %u.%u: the newest PTX ISA version the emulator reads is %u.%u (as "
                            "ptxas of CUDA 13.4)", major, minor, last, PTX_LAST_MINOR[last]);
            char known[96];
            size_t k = 0;
            for (unsigned j = 1; j <= last && k < sizeof known; j++)
                k += (size_t)snprintf(known + k, sizeof known - k, PTX_LAST_MINOR[j] ? "%s%u.0-%u.%u" : "%s%u.0", j > 1 ? ", " : "", j,
                                      j, PTX_LAST_MINOR[j]);
            return perr(ps, line, "unsupported .version %u.%u: no PTX ISA has that version (the emulator reads %s, as ptxas of "
                        "CUDA 13.4)", major, minor, known);
        }
        ps->ptx_version = (uint8_t)(major * 10 + minor);
        next(ps);
        return true;
    }
    next(ps);
    if (ps->tok.kind != TK_IDENT || ps->tok.s[0] == '.') { /* a name, not the next directive */
        char b[48];
        return perr(ps, line, "bad .target: expected an architecture name, found %s", tok_text(&ps->tok, b, sizeof b));
    }
    for (bool first = true;; first = false) {
        char name[32];
        if (!emu_gate_header(ps, line, ps->tok.s, ps->tok.len)) return false;
        /* ptxas wants the architecture first ("Target architecture not defined at start"): .target debug, sm_90a */
        if (first && !(ps->tok.len > 3 && !memcmp(ps->tok.s, "sm_", 3)) && !(ps->tok.len > 8 && !memcmp(ps->tok.s, "compute_", 8)))
            return perr(ps, line, ".target names the architecture first, then '%.*s' (as ptxas reads it)", (int)ps->tok.len,
                        ps->tok.s);
        if (is(&ps->tok, "debug")) ps->target_debug_line = line;
        if (ps->tok.len < sizeof name && !ps->m->target) {
            memcpy(name, ps->tok.s, ps->tok.len);
            name[ps->tok.len] = 0;
            const Target *t = target_find(name);
            unsigned sm = 0;
            if (!t && sscanf(name, "sm_%u", &sm) == 1) {
                for (int i = 0; i < TARGET_COUNT && !t; i++)
                    if (target_get((TargetId)i)->sm == (int)sm) t = target_get((TargetId)i);
                /* sm_90 for sm_90a: its limits, not its architecture-specific instructions (wgmma, setmaxnreg) */
                ps->target_generic = t && name[ps->tok.len - 1] != 'a';
            }
            if (t) ps->m->target = t;
        }
        next(ps);
        if (!is_punct(&ps->tok, ',')) break;
        next(ps);
        if (ps->tok.kind != TK_IDENT || ps->tok.s[0] == '.') {
            char b[48];
            return perr(ps, line, "bad .target: expected a name after ',', found %s", tok_text(&ps->tok, b, sizeof b));
        }
    }
    return true;
}

/* .address_size 64 (PTX has 32 too: its pointers would not reach the emulator's allocations, above 4 GiB, so
 * a 32-bit module is refused rather than run into memcheck reports at every access). */
static bool parse_address_size(Parser *ps) {
    uint32_t line = ps->tok.line;
    if (ps->address_size_line)
        return perr(ps, line, ".address_size given twice (line %u has it; ptxas takes one)", ps->address_size_line);
    ps->address_size_line = line;
    next(ps);
    Tok v = ps->tok;
    int64_t bits = 0;
    if (!emu_parse_int(&v, &bits) || (bits != 32 && bits != 64)) {
        char b[48];
        return perr(ps, line, "bad .address_size %s (expected 64, or 32)", tok_text(&v, b, sizeof b));
    }
    if (bits == 32) return perr(ps, line, "unsupported .address_size 32: the emulator runs 64-bit PTX (.address_size 64)");
    next(ps);
    return true;
}

/* alias = ".alias" fAlias "," fAliasee ";"   (ISA, .alias: fAlias is a .func declared by a prototype before the
 * directive, fAliasee a .func of the module with the same parameters; emu_module_finalize checks the aliasee's body
 * and points calls and addresses of fAlias at it) */
static bool parse_alias(Parser *ps) {
    EmuModule *m = ps->m;
    uint32_t line = ps->tok.line;
    next(ps);
    int32_t idx[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        if (k && !expect(ps, ',')) return false;
        Tok t = ps->tok;
        if (t.kind != TK_IDENT) return perr(ps, line, "bad .alias directive: expected a function name");
        for (uint32_t i = 0; i < m->nfuncs; i++)
            if (strlen(m->funcs[i].name) == t.len && !memcmp(m->funcs[i].name, t.s, t.len)) idx[k] = (int32_t)i;
        if (idx[k] < 0) return perr(ps, line, ".alias: '%.*s' is no function declared before the directive", (int)t.len, t.s);
        next(ps);
    }
    EmuFunc *a = &m->funcs[idx[0]], *f = &m->funcs[idx[1]];
    if (a->is_entry || f->is_entry) return perr(ps, line, ".alias: kernel entries cannot be aliased or aliases");
    if (a->defined) return perr(ps, line, ".alias: '%s' has a body (an alias is declared by a prototype only)", a->name);
    if (a->alias1 || f->alias1 || idx[0] == idx[1]) return perr(ps, line, ".alias: '%s' or '%s' is an alias already", a->name, f->name);
    if (a->nparams != f->nparams || a->nrets != f->nrets)
        return perr(ps, line, ".alias: '%s' and '%s' have different parameters", a->name, f->name);
    a->alias1 = (uint32_t)idx[1] + 1;
    return expect(ps, ';');
}

/* At the module's end, as ptxas: each .loc's function_name is a label some .section defines ("Unresolved label ... used
 * in function_name attribute"), and `.target ..., debug` has a .debug_* section ("Debug information not found in
 * presence of .target debug").  Both loaded. */
static bool check_debug_info(Parser *ps) {
    for (uint32_t i = 0; i < ps->nfn_names; i++) {
        const struct FnName *u = &ps->fn_names[i];
        if (i && u->len == ps->fn_names[i - 1].len && !memcmp(u->s, ps->fn_names[i - 1].s, u->len)) continue; /* as the last */
        bool found = false;
        for (uint32_t k = 0; k < ps->nsec_labels && !found; k++)
            found = ps->sec_labels[k].len == u->len && !memcmp(ps->sec_labels[k].s, u->s, u->len);
        if (!found)
            return perr(ps, u->line, "bad .loc directive: function_name '%.*s' is no label of the module's .section data", (int)u->len, u->s);
    }
    if (ps->target_debug_line && !ps->has_debug_section)
        return perr(ps, ps->target_debug_line, ".target names 'debug' but the module has no .section .debug_* (no debug information)");
    return true;
}

/* The module's text into m, the parser's working arrays in *ps (the caller frees them either way). */
static bool parse_module(Parser *ps, EmuModule *m, const char *ptx, EmuMem *mem) {
    m->arena = arena_new();
    m->mem = mem;
    size_t len = strlen(ptx);
    m->text = arena_strndup(m->arena, ptx, len);
    uint32_t nl = 1;
    for (size_t i = 0; i < len; i++) nl += ptx[i] == '\n';
    m->line_start = ARENA_ARRAY(m->arena, uint32_t, nl + 2);
    m->nlines = nl;
    m->line_start[1] = 0;
    for (size_t i = 0, l = 1; i < len; i++)
        if (ptx[i] == '\n') m->line_start[++l] = (uint32_t)(i + 1);
    ps->src = ps->p = m->text;
    ps->line = 1;
    ps->m = m;
    ps->a = m->arena;
    next(ps);
    bool ok = true;
    /* The ISA: a module begins with .version, then .target (ptxas: "Missing .version/.target directive at start of
     * file"); without them nothing says which instructions and limits the PTX means. */
    for (int k = 0; k < 2 && ok; k++) {
        const char *want = k ? ".target" : ".version";
        if (!is(&ps->tok, want)) {
            char b[48];
            ok = perr(ps, ps->tok.line, "the PTX must begin with .version, then .target: expected %s, found %s", want,
                      tok_text(&ps->tok, b, sizeof b));
        } else ok = parse_header(ps);
    }
    while (ok && ps->tok.kind != TK_EOF) {
        Tok *t = &ps->tok;
        if (is(t, ".version")) { ok = perr(ps, t->line, ".version given twice (only the module's first line has it)"); break; }
        if (is(t, ".target")) { ok = parse_header(ps); continue; }
        if (is(t, ".address_size")) { ok = parse_address_size(ps); continue; }
        if (is(t, ".file")) { ok = emu_parse_file(ps); continue; }
        if (is(t, ".loc")) { ok = emu_parse_loc(ps); continue; } /* refused: module scope */
        if (is(t, ".pragma")) { ok = emu_parse_pragma(ps, EMU_PRAGMA_MODULE); continue; }
        if (is(t, ".section")) { /* debug data: skipped, but for the labels it defines (.loc's function_name names them) */
            next(ps);
            if (ps->tok.kind == TK_IDENT && ps->tok.len > 7 && !memcmp(ps->tok.s, ".debug_", 7)) ps->has_debug_section = true;
            while (ps->tok.kind != TK_EOF && !is_punct(&ps->tok, '{')) next(ps);
            int depth = 0;
            do {
                if (is_punct(&ps->tok, '{')) depth++;
                if (is_punct(&ps->tok, '}')) depth--;
                Tok lt = ps->tok;
                next(ps);
                if (depth > 0 && lt.kind == TK_IDENT && is_punct(&ps->tok, ':')) {
                    GROW(ps->sec_labels, ps->nsec_labels, ps->capsec_labels);
                    ps->sec_labels[ps->nsec_labels++] = (struct FnName){lt.s, lt.len, lt.line};
                }
            } while (depth > 0 && ps->tok.kind != TK_EOF);
            continue;
        }
        bool ext = false;
        ps->decl_visible = ps->decl_extern = false;
        ps->decl_linkage = 0;
        while (is(t, ".visible") || is(t, ".extern") || is(t, ".weak") || is(t, ".common")) {
            if (is(t, ".extern")) ext = ps->decl_extern = true;
            else ps->decl_visible = true, ps->decl_linkage = is(t, ".visible") ? 1 : is(t, ".weak") ? 2 : 3;
            next(ps);
        }
        if (is(t, ".entry")) ok = emu_parse_function(ps, true);
        else if (is(t, ".func")) ok = emu_parse_function(ps, false);
        else if (is(t, ".global")) { next(ps); ok = emu_parse_var(ps, EMU_SP_GLOBAL, ext); }
        else if (is(t, ".const")) { next(ps); ok = emu_parse_var(ps, EMU_SP_CONST, ext); }
        else if (is(t, ".shared")) { next(ps); ok = emu_parse_var(ps, EMU_SP_SHARED, ext); }
        else if (is(t, ".alias")) ok = parse_alias(ps);
        else ok = perr(ps, t->line, "unsupported directive '%.*s'", (int)t->len, t->s);
    }
    if (ps->err) ok = false; /* the lexer's (an unterminated comment) when the parser saw only the end */
    if (ok) ok = check_debug_info(ps) && emu_check_externs(ps) && emu_check_prototypes(ps);
    if (ok && !emu_module_finalize(m, mem, &ps->err)) ok = false;
    return ok;
}

static void parser_free(Parser *ps) {
    free(ps->regs);
    free(ps->allregs);
    free(ps->consts);
    free(ps->const_index);
    free(ps->slot_const);
    free(ps->labels);
    free(ps->label_index);
    free(ps->sym_names);
    free(ps->gate_passed);
    free(ps->sym_prev);
    free(ps->fixes);
    free(ps->blk_parent);
    free(ps->code);
    free(ps->vec);
    free(ps->locs_seen);
    free(ps->fn_names);
    free(ps->sec_labels);
    free(ps->err);
}

/* Memory running out while parsing (a module's size is the caller's to choose) returns NULL with
 * *err = EMU_OUT_OF_HOST_MEMORY instead of aborting: the module and the parser's arrays are freed. */
EmuModule *emu_module_parse(const char *ptx, EmuMem *mem, char **err) {
    *err = NULL;
    EmuModule *volatile m = calloc(1, sizeof(EmuModule)); /* volatile: read after longjmp */
    if (!m) return NULL;                                     /* *err NULL: out of memory */
    Parser ps;
    memset(&ps, 0, sizeof ps);
    OomScope oom;
    if (setjmp(oom.env)) {
        oom_pop(&oom);
        parser_free(&ps);
        emu_module_free(m);
        *err = strdup(EMU_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    oom_push(&oom);
    bool ok = parse_module(&ps, m, ptx, mem);
    oom_pop(&oom);
    if (!ok) {
        *err = ps.err ? ps.err : strdup("ptx: parse error");
        ps.err = NULL;
    }
    parser_free(&ps);
    if (!ok) {
        emu_module_free(m);
        return NULL;
    }
    return m;
}


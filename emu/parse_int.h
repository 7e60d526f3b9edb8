/* parse_int.h - what parse.c and its parse_*.c companions share: the lexer's token, the parser's state, its error
 * report, its constant slots and the registers' declarations by slot.  Private to the emulator's parser. */
#ifndef TILE_EMU_PARSE_INT_H
#define TILE_EMU_PARSE_INT_H

#include "emu/emu.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lexer ---- */
enum { TK_EOF, TK_IDENT, TK_NUM, TK_STR, TK_PUNCT };
typedef struct Tok {
    int kind;
    const char *s;
    uint32_t len, line;
} Tok;

typedef struct Parser {
    const char *src, *p;
    uint32_t line;
    Tok tok;            /* current token */
    Tok peek;           /* one token of lookahead, valid when has_peek */
    bool has_peek;
    EmuModule *m;
    Arena *a;
    char *err;          /* first error (malloc'd) */
    /* current function */
    EmuFunc *fn;
    int32_t fn_index;
    struct RegRange { const char *prefix; uint32_t plen; int64_t count; uint32_t base; bool pred, wide; uint8_t vec, ty; } *regs;
    /* wide: .b128, 2 slots; vec: a .v2/.v4 register, `v` of vec slots (its elements v.x .. v.w, v.r .. v.a are ranges too);
     * ty: the declared EmuType (0: not known, a .reg parameter's) */
    uint32_t nregs, capregs;
    uint32_t scope_regs, scope_syms; /* the current { } scope's first register range and first symbol */
    bool has_wide;      /* a .b128 register was declared (check_wide has work to do) */
    struct EmuRegName *allregs; /* every .reg declaration of the function, scopes ignored (names for reports) */
    uint32_t nallregs, capallregs;
    struct Const { uint64_t value; int32_t sym; int64_t addend; uint32_t slot; } *consts;
    uint32_t nconsts, capconsts;
    uint32_t *const_index, *slot_const; /* consts by value or (symbol, addend); each slot's const (parse_names.c) */
    uint32_t capconst_index, capslot_const;
    uint32_t nslots;
    EmuIns *code;
    uint32_t ncode, capcode;
    uint32_t *vec;
    uint32_t nvec, capvec;
    /* labels are scoped by the { } blocks they are in (CUTLASS's inline PTX repeats `LAB_WAIT:` in each
     * inlined block): blk is the block, blk_parent[b] the block around b (-1: none; 0 is the body) */
    struct Label { const char *s; uint32_t len, at; int32_t blk; bool table; } *labels; /* table: of .branchtargets */
    uint32_t nlabels, caplabels;
    uint32_t *label_index; /* open addressing over (name, blk): label number + 1, 0 empty (a kernel may have 100000s) */
    uint32_t caplabel_index;
    /* m->syms by name (parse_names.c): a bucket per name with its newest symbol + 1 (0: none), sym_prev[k] the
     * symbol before k of k's name + 1 */
    struct SymName { const char *name; uint32_t len, head; } *sym_names;
    uint32_t capsym_names, nsym_names;
    uint32_t *sym_prev;
    uint32_t capsym_prev;
    struct GatePassed { const char *s; uint32_t len; bool three; } *gate_passed; /* parse_gate.c's memo */
    uint32_t capgate_passed, ngate_passed;
    struct Fix { uint32_t ins; const char *s; uint32_t len; uint32_t line; int32_t blk; } *fixes;
    uint32_t nfixes, capfixes;
    int32_t *blk_parent;
    uint32_t nblk, capblk;
    int32_t cur_blk;
    uint32_t sym_scope_start; /* syms from here on belong to the current function */
    uint32_t cur_srcloc;      /* the location the last .loc set (m->srclocs index, 0: none) */
    uint32_t capsrclocs, capsrcfiles, capvlines;
    bool decl_visible;        /* the module-level declaration being parsed is .visible, .weak or .common */
    bool decl_extern;         /* ... is .extern */
    uint8_t decl_linkage;     /* ... is .visible (1), .weak (2) or .common (3); 0: none of them */
    uint32_t last_ins_line, last_ins_key, last_ins_loc; /* the last instruction's PTX line, line key and srcloc */
    /* module */
    uint32_t capsyms, capfuncs;
    bool target_generic; /* .target named the SM without the 'a' of m->target (sm_90): no sm_90a instructions */
    uint8_t ptx_version;  /* .version as major * 10 + minor (0: not read yet) */
    uint8_t target_sm;    /* the SM of .target's first sm_NN name, known or not (0: none) */
    bool target_arch;     /* that name has the architecture-specific `a` (sm_90a) */
    /* line info: every .loc's location so far (inlined_at names one), function_name's labels (each a label of a
     * .section, checked at the module's end), the labels .section blocks define; .target's `debug` needs a .debug_*
     * section */
    struct LocSeen { uint32_t f, l, c, used; } *locs_seen;
    uint32_t nlocs_seen, caplocs_seen;
    struct FnName { const char *s; uint32_t len, line; } *fn_names, *sec_labels;
    uint32_t nfn_names, capfn_names, nsec_labels, capsec_labels;
    uint32_t target_debug_line; /* the .target line naming `debug` (0: none) */
    uint32_t address_size_line; /* the line of the module's .address_size (0: none yet) */
    bool has_debug_section;
} Parser;

/* Why a texture, sampler or surface reference (.texref .samplerref .surfref) or an instruction of theirs is refused
 * (parse_decl.c, parse_mods.c), after the quoted word: ptxas takes them, the emulator has no texture units. */
#define EMU_NO_TEXTURES                                                                                                   \
    "texture, sampler and surface references and their instructions (tex, tld4, txq, suld, sust, sured, suq) are not " \
    "supported by the emulator; instead pass the data as a .global pointer parameter and read it with ld.global.nc "   \
    "(or run the module on a GPU)"

#define GROW(arr, n, cap)                                                    \
    do {                                                                     \
        if ((n) >= (cap)) {                                                  \
            size_t nc_ = (cap) ? (size_t)(cap) * 2 : 16;                     \
            void *np_ = realloc((arr), nc_ * sizeof(*(arr)));                \
            if (!np_) out_of_memory();                          \
            (arr) = np_;                                                     \
            (cap) = (uint32_t)nc_;                                           \
        }                                                                    \
    } while (0)

static inline bool perr(Parser *ps, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline bool perr(Parser *ps, uint32_t line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emu_ptx_error(&ps->err, ps->m ? emu_module_ptx_line(ps->m, line) : line, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- the lexer (parse.c) ---- */
void emu_lex_next(Parser *ps); /* the next token into ps->tok */
Tok *emu_lex_peek(Parser *ps); /* the token after ps->tok */
static inline bool is(const Tok *t, const char *s) { return t->len == strlen(s) && memcmp(t->s, s, t->len) == 0; }
static inline bool is_punct(const Tok *t, char c) { return t->kind == TK_PUNCT && t->s[0] == c; }
/* A token for messages: 'text' (quoted, cut at 40 bytes), or "the end of the PTX". */
static inline const char *tok_text(const Tok *t, char *buf, size_t n) {
    if (t->kind == TK_EOF) return "the end of the PTX";
    snprintf(buf, n, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s);
    return buf;
}
static inline bool accept(Parser *ps, char c) {
    if (is_punct(&ps->tok, c)) { emu_lex_next(ps); return true; }
    return false;
}
static inline bool expect(Parser *ps, char c) {
    if (accept(ps, c)) return true;
    char b[48];
    return perr(ps, ps->tok.line, "expected '%c', found %s", c, tok_text(&ps->tok, b, sizeof b));
}

/* ---- a function's body (parse.c) and the function (parse_func.c) ---- */
bool emu_parse_reg(Parser *ps);            /* a .reg declaration */
bool emu_parse_ins(Parser *ps);            /* one instruction, with its guard, to ps->code */
bool emu_parse_branchtargets(Parser *ps);  /* label: .branchtargets L0, L1, ...; */
bool emu_parse_file(Parser *ps);           /* .file N "name" */
bool emu_parse_loc(Parser *ps);            /* .loc F L C [, function_name ..., inlined_at F L C] */
typedef enum { EMU_PRAGMA_MODULE, EMU_PRAGMA_SIGNATURE, EMU_PRAGMA_BODY } EmuPragmaScope;
bool emu_parse_pragma(Parser *ps, EmuPragmaScope where); /* .pragma "..." {, "..."}; (checked, then ignored) */
/* A register (count < 0) or the range name<count> of type ty (0: unknown), in the current scope. */
void emu_reg_declare(Parser *ps, const char *s, uint32_t len, int64_t count, unsigned ty);
bool emu_parse_function(Parser *ps, bool entry); /* at .entry or .func: the declaration or definition */

/* ---- name indexes (parse_names.c) ---- */
int64_t emu_label_find(const Parser *ps, const char *s, uint32_t len, int32_t blk); /* the label's number, -1: none */
void emu_label_add(Parser *ps, const char *s, uint32_t len); /* a label of the current block, at the next instruction */
void emu_labels_reset(Parser *ps);                           /* no labels: a new function */
void emu_sym_index_add(Parser *ps, uint32_t k);              /* m->syms[k], just added */
void emu_syms_truncate(Parser *ps, uint32_t n);              /* m->nsyms = n, the index following */
/* The newest symbol named s that is not hidden, at index from or above; -1: none. */
int32_t emu_sym_find(const Parser *ps, const char *s, uint32_t len, uint32_t from);
/* The constant slot of an immediate (sym < 0) or of a symbol's address + addend, made on first use. */
uint32_t emu_const_slot(Parser *ps, uint64_t value, int32_t sym, int64_t addend);
bool emu_has_mod(const char *s, uint32_t len, const char *m); /* the opcode text s has the modifier .m */
/* The operand shapes, modifiers and .target of sm_90's instructions (parse_check_sm90.c). */
bool emu_check_hopper(Parser *ps, EmuIns *in, uint32_t line, const char *s, uint32_t len);

/* An opcode's text has at most EMU_MAX_PARTS dot-separated parts (emu_decode_mods refuses more, and any empty part,
 * before the checks run): so at most EMU_MAX_MODS modifiers, all of which a Mod[EMU_MAX_MODS] holds. */
enum { EMU_MAX_PARTS = 24, EMU_MAX_MODS = EMU_MAX_PARTS - 1 };
/* The modifiers of an opcode's text after its first word, in order: n of them in mods (at most cap). */
typedef struct Mod {
    const char *p;
    uint32_t n;
} Mod;
static inline unsigned split_mods(const char *s, uint32_t len, Mod *mods, unsigned cap) {
    unsigned n = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (s[i] != '.') continue;
        uint32_t j = i + 1;
        while (j < len && s[j] != '.') j++;
        if (n < cap) mods[n++] = (Mod){s + i + 1, j - i - 1};
        i = j - 1;
    }
    return n;
}
static inline bool mod_is(const Mod *m, const char *w) { return m->n == strlen(w) && !memcmp(m->p, w, m->n); }
/* The index in words of the first modifier that is one of them (-1: none); count: how many are. */
static inline int mod_find(const Mod *mods, unsigned n, const char *const *words, unsigned nwords, unsigned *count) {
    int at = -1;
    *count = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; k < nwords; k++)
            if (mod_is(&mods[i], words[k])) {
                if (at < 0) at = (int)k;
                ++*count;
            }
    return at;
}
int64_t emu_const_at(const Parser *ps, uint32_t slot); /* the consts entry slot is, -1: not a constant */
void emu_consts_reset(Parser *ps);                     /* no constants: a new function */

/* ---- declarations: variables and parameter lists (parse_decl.c) ---- */
bool emu_parse_var(Parser *ps, unsigned space, bool is_extern); /* after .global/.const/.shared/.local: one declaration with its initializer */
bool emu_check_externs(Parser *ps); /* at the module's end: an unsized .extern .global/.const variable nothing defined */
bool emu_parse_param(Parser *ps, EmuParam **arr, uint32_t *n, uint32_t *size, uint32_t base); /* a ( .param ... ) list */
/* A direct call's return values and arguments (in, normalized) against the declaration of its callee `name` (len bytes),
 * declared before the call (parse_func.c) */
bool emu_check_call_types(Parser *ps, const EmuIns *in, const char *name, uint32_t len, uint32_t line);
bool emu_check_prototypes(Parser *ps); /* at the module's end: every non-.extern function declared has a body */

/* ---- literals and constant expressions (parse_expr.c) ---- */
enum { IMM_INT, IMM_F32BITS, IMM_F64BITS, IMM_FLOAT };
typedef struct Imm {
    int kind;
    int64_t i;  /* INT: the value's bits; F32BITS/F64BITS: a 0f/0d literal's bits */
    double f;   /* FLOAT: a decimal float literal */
    bool u;     /* INT: unsigned (.u64) in the ISA's constant-expression rules */
} Imm;
bool emu_parse_int(const Tok *t, int64_t *out);          /* an integer literal (no sign) */
bool emu_parse_imm(const Tok *t, bool neg, Imm *im);     /* one literal, negated if neg */
uint64_t emu_imm_bits(const Imm *im, unsigned ty);        /* the bits an immediate has as an operand of type ty */
bool emu_starts_const(Parser *ps);                        /* ps->tok starts a constant expression */
bool emu_parse_const(Parser *ps, Imm *im);                /* the constant expression at ps->tok */

/* ---- names and modifiers (parse_mods.c) ---- */
/* The index of s in names (n entries), -1 when it is none of them. */
int emu_find_name(const char *const *names, size_t n, const char *s, size_t len);
unsigned emu_type_find(const char *s, size_t len); /* an EmuType by name ("f16"), 0 when none */
int emu_space_find(const char *s, size_t len);     /* an EmuSpace by name ("shared"), -1 when none */
const char *emu_space_name(unsigned space);
/* The opcode and modifiers of the instruction token s (len bytes, at PTX line `line`) into in. */
bool emu_decode_mods(Parser *ps, EmuIns *in, const char *s, uint32_t len, uint32_t line);
/* Operand i's video selector (sel: sellen bytes after the dot, NULL: none) and negation (`-a`) into in->vsel;
 * false with a message where the instruction takes none (every instruction but the video ones). */
bool emu_video_operand(Parser *ps, EmuIns *in, unsigned i, const char *sel, uint32_t sellen, bool neg, uint32_t line);
/* The operand type an immediate at operand position i of in takes. */
unsigned emu_imm_type(const EmuIns *in, unsigned i);

/* The constant a slot holds (an immediate, not a symbol address). */
static inline bool const_value(const Parser *ps, uint32_t slot, uint64_t *v) {
    int64_t k = emu_const_at(ps, slot);
    if (k < 0 || ps->consts[k].sym >= 0) return false;
    *v = ps->consts[k].value;
    return true;
}

/* Whether slot is a .pred register (cp.async's fourth operand is src-size or, as a predicate, ignore-src). */
/* The declaration of the register in slot, NULL for a special register, an immediate or the sink. */
static inline const struct RegRange *slot_range(const Parser *ps, uint32_t slot) {
    for (uint32_t i = 0; i < ps->nregs; i++) {
        const struct RegRange *r = &ps->regs[i];
        if (slot >= r->base && slot < r->base + (r->count < 0 ? 1 : (uint64_t)r->count)) return r;
    }
    return NULL;
}

static inline bool slot_is_pred(const Parser *ps, uint32_t slot) {
    const struct RegRange *r = slot_range(ps, slot);
    return r && r->pred;
}
/* The symbol whose address a slot holds, or -1. */
static inline int32_t const_sym(const Parser *ps, uint32_t slot) {
    int64_t k = emu_const_at(ps, slot);
    return k < 0 ? -1 : ps->consts[k].sym;
}

/* The operand count and kinds, destinations, immediate limits and target of one decoded instruction (parse_check.c). */
/* After decode_mods: the modifiers the opcode needs, and their combinations. */
bool emu_check_mods(Parser *ps, EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len);
bool emu_check_ins(Parser *ps, EmuIns *in, uint32_t line, const char *s, uint32_t len);
/* parse_words.c (after the other checks): a modifier written twice, one of a kind, and the memory, layout and flag words
 * of opcodes that take none */
bool emu_check_words(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len);
/* Barrier ids and counts given as immediates, writes to read-only state spaces (parse_check.c). */
/* parse_gate.c: the PTX ISA version and .target a feature needs (ptxas's "Feature ... requires ..."). */
bool emu_gate_header(Parser *ps, uint32_t line, const char *name, uint32_t len); /* a .target name, after .version */
bool emu_gate_ins(Parser *ps, uint32_t line, const char *s, uint32_t len, unsigned nops); /* an instruction's opcode text */
bool emu_gate_sreg(Parser *ps, uint32_t line, const char *s, uint32_t len);      /* a special register's name */
bool emu_check_limits(Parser *ps, EmuIns *in, uint32_t line, const char *s, uint32_t len);
/* parse_types.c: the operands' register types and addresses as ptxas takes them (after emu_check_ins) */
bool emu_check_operands(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len);
bool emu_check_imm_kind(Parser *ps, const EmuIns *in, unsigned i, const Imm *im, uint32_t line, const char *s, uint32_t len);

#endif

/* parse_expr.c - PTX literals and constant expressions (PTX ISA 4.5, 4.6.3-4.6.5).
 *
 * An immediate operand is a constant expression: C's operators and
 * precedence over 64-bit integers, each value signed (.s64) or unsigned
 * (.u64) by the ISA's rules:
 *   1. a literal is signed unless it has a U suffix or needs 64 unsigned
 *      bits (0xfabc123400000000); WARP_SZ is the signed 32;
 *   2. unary + and - keep the operand's type, ! gives a signed 0 or 1, ~ an
 *      unsigned complement; (.s64) and (.u64) casts set the type;
 *   3. * / + - & ^ | and the ordered comparisons use the usual arithmetic
 *      conversions (unsigned if either operand is); the comparisons, == !=
 *      && || give a signed 0 or 1; % reads both operands as unsigned and
 *      gives an unsigned result; << >> keep the type of the left operand
 *      (>> of a signed value is arithmetic) and read the count as unsigned,
 *      modulo 64 (1 << 64 is 1);
 *   4. c ? a : b is a or b with its own type.
 * Where the ISA leaves a rule open (%'s result, shift counts past 63) or its
 * text and ptxas differ (?: converts a and b, the text says), the rules are
 * ptxas's: the values ptxas folds into the SASS of such expressions.
 * Division or remainder by zero is an error.  A float literal may stand
 * alone, negated or in parentheses (`-(1.0)`); the emulator does not
 * evaluate float operators, and refuses them with the line, as it refuses
 * anything it does not evaluate (nothing silently becomes another value). */
#include "emu/exec.h"
#include "emu/parse_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Integer literal: decimal, 0x hex, 0 octal, 0b binary, optional U suffix. */
bool emu_parse_int(const Tok *t, int64_t *out) {
    char buf[80];
    if (t->kind != TK_NUM || t->len >= sizeof buf) return false;
    memcpy(buf, t->s, t->len);
    buf[t->len] = 0;
    size_t n = t->len;
    if (n > 1 && (buf[n - 1] == 'U' || buf[n - 1] == 'u')) buf[--n] = 0;
    char *end;
    errno = 0;
    unsigned long long v;
    if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B')) v = strtoull(buf + 2, &end, 2);
    else v = strtoull(buf, &end, 0);
    if (*end || errno) return false;
    *out = (int64_t)v;
    return true;
}

bool emu_parse_imm(const Tok *t, bool neg, Imm *im) {
    if (t->kind != TK_NUM) return false;
    if (t->len > 2 && t->s[0] == '0' && (t->s[1] == 'f' || t->s[1] == 'F' || t->s[1] == 'd' || t->s[1] == 'D')) {
        bool is64 = t->s[1] == 'd' || t->s[1] == 'D';
        char buf[40];
        if (t->len - 2 >= sizeof buf) return false;
        memcpy(buf, t->s + 2, t->len - 2);
        buf[t->len - 2] = 0;
        char *end;
        uint64_t v = strtoull(buf, &end, 16);
        if (*end) return false;
        if (neg) v ^= is64 ? 0x8000000000000000ull : 0x80000000ull;
        im->kind = is64 ? IMM_F64BITS : IMM_F32BITS;
        im->i = (int64_t)v;
        return true;
    }
    bool isfloat = false;
    for (uint32_t k = 0; k < t->len; k++)
        if (t->s[k] == '.' || ((t->s[k] == 'e' || t->s[k] == 'E') && !(t->s[1] == 'x' || t->s[1] == 'X'))) isfloat = true;
    if (isfloat) {
        char buf[80];
        if (t->len >= sizeof buf) return false;
        memcpy(buf, t->s, t->len);
        buf[t->len] = 0;
        char *end;
        double d = c_strtod(buf, &end);
        if (*end) return false;
        im->kind = IMM_FLOAT;
        im->f = neg ? -d : d;
        return true;
    }
    int64_t v;
    if (!emu_parse_int(t, &v)) return false;
    im->kind = IMM_INT;
    im->i = neg ? (int64_t)(0 - (uint64_t)v) : v; /* no overflow for INT64_MIN */
    return true;
}

uint64_t emu_imm_bits(const Imm *im, unsigned ty) {
    unsigned kind = emu_type_kind(ty), size = emu_type_size(ty);
    double d;
    switch (im->kind) {
    case IMM_F32BITS: {
        if (ty == EMU_T_F64) { float f; uint32_t u = (uint32_t)im->i; memcpy(&f, &u, 4); d = f; break; }
        if (kind == EMU_K_F && size == 2) { float f; uint32_t u = (uint32_t)im->i; memcpy(&f, &u, 4); d = f; break; }
        return (uint32_t)im->i;
    }
    case IMM_F64BITS: {
        if (ty == EMU_T_F64 || size == 8 || kind != EMU_K_F) return (uint64_t)im->i;
        uint64_t u = (uint64_t)im->i; memcpy(&d, &u, 8); break;
    }
    case IMM_FLOAT: d = im->f; break;
    default:
        if (kind != EMU_K_F) return (uint64_t)im->i;
        d = im->u ? (double)(uint64_t)im->i : (double)im->i;
        break;
    }
    /* a float value as bits of ty */
    if (ty == EMU_T_F64 || (kind != EMU_K_F && size == 8)) { uint64_t u; memcpy(&u, &d, 8); return u; }
    if (ty == EMU_T_F16 || ty == EMU_T_F16X2) return emu_round_f64(d, EMU_FMT_F16, EMU_RND_RN);
    if (ty == EMU_T_BF16 || ty == EMU_T_BF16X2) return emu_round_f64(d, EMU_FMT_BF16, EMU_RND_RN);
    if (kind == EMU_K_F || size == 4) { float f = (float)d; uint32_t u; memcpy(&u, &f, 4); return u; }
    return (uint64_t)(int64_t)d;
}

/* ---- constant expressions ---- */
enum { OP_NONE, OP_MUL, OP_DIV, OP_REM, OP_ADD, OP_SUB, OP_SHL, OP_SHR, OP_LT, OP_GT, OP_LE, OP_GE, OP_EQ, OP_NE,
       OP_AND, OP_XOR, OP_OR, OP_LAND, OP_LOR };
static const struct { const char *text; int prec; } binops[] = {
    [OP_MUL] = {"*", 10}, [OP_DIV] = {"/", 10}, [OP_REM] = {"%", 10}, [OP_ADD] = {"+", 9}, [OP_SUB] = {"-", 9},
    [OP_SHL] = {"<<", 8}, [OP_SHR] = {">>", 8}, [OP_LT] = {"<", 7}, [OP_GT] = {">", 7}, [OP_LE] = {"<=", 7},
    [OP_GE] = {">=", 7}, [OP_EQ] = {"==", 6}, [OP_NE] = {"!=", 6}, [OP_AND] = {"&", 5}, [OP_XOR] = {"^", 4},
    [OP_OR] = {"|", 3}, [OP_LAND] = {"&&", 2}, [OP_LOR] = {"||", 1},
};

static bool punct(const Tok *t, char c) { return t->kind == TK_PUNCT && t->s[0] == c; }
static bool is_warp_sz(const Tok *t) { return t->kind == TK_IDENT && t->len == 7 && !memcmp(t->s, "WARP_SZ", 7); }
/* The second character of a two-character operator: the next token, written right after this one. */
static bool then(Parser *ps, char c) {
    const Tok *p = emu_lex_peek(ps);
    return punct(p, c) && p->s == ps->tok.s + 1;
}

/* The binary operator at the current token (OP_NONE: none), and how many tokens it takes. */
static int binop_at(Parser *ps, int *ntok) {
    const Tok *t = &ps->tok;
    *ntok = 1;
    if (t->kind == TK_IDENT && t->len == 1 && t->s[0] == '%') return OP_REM; /* `7 % 3` (`7%3` is 7 and %3, as for ptxas) */
    if (t->kind != TK_PUNCT) return OP_NONE;
    switch (t->s[0]) {
    case '*': return OP_MUL;
    case '/': return OP_DIV;
    case '%': return OP_REM;
    case '+': return OP_ADD;
    case '-': return OP_SUB;
    case '^': return OP_XOR;
    case '<': *ntok = 2; return then(ps, '<') ? OP_SHL : then(ps, '=') ? OP_LE : (*ntok = 1, OP_LT);
    case '>': *ntok = 2; return then(ps, '>') ? OP_SHR : then(ps, '=') ? OP_GE : (*ntok = 1, OP_GT);
    case '=': *ntok = 2; return then(ps, '=') ? OP_EQ : OP_NONE;
    case '!': *ntok = 2; return then(ps, '=') ? OP_NE : OP_NONE;
    case '&': *ntok = 2; return then(ps, '&') ? OP_LAND : (*ntok = 1, OP_AND);
    case '|': *ntok = 2; return then(ps, '|') ? OP_LOR : (*ntok = 1, OP_OR);
    }
    return OP_NONE;
}

static bool is_float(const Imm *v) { return v->kind != IMM_INT; }
static bool no_float(Parser *ps, uint32_t line, const Imm *v, const char *op) {
    if (!is_float(v)) return true;
    return perr(ps, line, "'%s' on a float in a constant expression: the emulator evaluates integer constant expressions only "
                "(a float literal may stand alone, negated or in parentheses)", op);
}
static Imm int_val(uint64_t v, bool u) { return (Imm){.kind = IMM_INT, .i = (int64_t)v, .u = u}; }

static bool apply(Parser *ps, uint32_t line, int op, Imm *a, const Imm *b) {
    if (!no_float(ps, line, a, binops[op].text) || !no_float(ps, line, b, binops[op].text)) return false;
    uint64_t x = (uint64_t)a->i, y = (uint64_t)b->i;
    bool u = a->u || b->u; /* the usual arithmetic conversions */
    int64_t sx = a->i, sy = b->i;
    switch (op) {
    case OP_MUL: *a = int_val(x * y, u); return true;
    case OP_ADD: *a = int_val(x + y, u); return true;
    case OP_SUB: *a = int_val(x - y, u); return true;
    case OP_DIV: case OP_REM:
        if (!y) return perr(ps, line, "'%s' by zero in a constant expression", binops[op].text);
        if (op == OP_REM) { *a = int_val(x % y, true); return true; } /* operands (and, as ptxas has it, the result) unsigned */
        if (u) *a = int_val(x / y, true);
        else *a = int_val(sx == INT64_MIN && sy == -1 ? x : (uint64_t)(sx / sy), false);
        return true;
    case OP_SHL: *a = int_val(x << (y & 63), a->u); return true; /* the count modulo 64, as ptxas */
    case OP_SHR: *a = a->u ? int_val(x >> (y & 63), true) : int_val((uint64_t)(sx >> (y & 63)), false); return true;
    case OP_LT: *a = int_val(u ? x < y : sx < sy, false); return true;
    case OP_GT: *a = int_val(u ? x > y : sx > sy, false); return true;
    case OP_LE: *a = int_val(u ? x <= y : sx <= sy, false); return true;
    case OP_GE: *a = int_val(u ? x >= y : sx >= sy, false); return true;
    case OP_EQ: *a = int_val(x == y, false); return true;
    case OP_NE: *a = int_val(x != y, false); return true;
    case OP_AND: *a = int_val(x & y, u); return true;
    case OP_XOR: *a = int_val(x ^ y, u); return true;
    case OP_OR: *a = int_val(x | y, u); return true;
    case OP_LAND: *a = int_val(x && y, false); return true;
    case OP_LOR: *a = int_val(x || y, false); return true;
    }
    return false;
}

static bool cexpr(Parser *ps, Imm *v);

/* A token for messages: 'text' (cut at 40 bytes), or "the end of the PTX". */
static const char *quote(const Tok *t, char *buf, size_t n) {
    if (t->kind == TK_EOF) return "the end of the PTX";
    snprintf(buf, n, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s);
    return buf;
}

/* unary = ("+" | "-" | "!" | "~") unary | "(" (".s64" | ".u64") ")" unary | "(" cexpr ")" | literal | "WARP_SZ" */
static bool unary(Parser *ps, Imm *v) {
    Tok t = ps->tok;
    char b[48];
    if (punct(&t, '+') || punct(&t, '-') || punct(&t, '!') || punct(&t, '~')) {
        emu_lex_next(ps);
        if (!unary(ps, v)) return false;
        char c = t.s[0];
        if (c == '+') return true;
        if (c == '-') {
            if (v->kind == IMM_INT) v->i = (int64_t)(0 - (uint64_t)v->i);
            else if (v->kind == IMM_FLOAT) v->f = -v->f;
            else v->i ^= (int64_t)(v->kind == IMM_F64BITS ? 0x8000000000000000ull : 0x80000000ull); /* the sign bit */
            return true;
        }
        if (!no_float(ps, t.line, v, c == '!' ? "!" : "~")) return false;
        *v = c == '!' ? int_val(v->i == 0, false) : int_val(~(uint64_t)v->i, true);
        return true;
    }
    if (punct(&t, '(')) {
        emu_lex_next(ps);
        Tok c = ps->tok;
        if (c.kind == TK_IDENT && ((c.len == 4 && !memcmp(c.s, ".s64", 4)) || (c.len == 4 && !memcmp(c.s, ".u64", 4)))) {
            emu_lex_next(ps);
            if (!punct(&ps->tok, ')')) return perr(ps, c.line, "expected ')' after the cast (%.*s)", (int)c.len, c.s);
            emu_lex_next(ps);
            if (!unary(ps, v)) return false;
            if (!no_float(ps, c.line, v, c.s[1] == 's' ? "(.s64)" : "(.u64)")) return false;
            v->u = c.s[1] == 'u';
            return true;
        }
        if (!cexpr(ps, v)) return false;
        if (!punct(&ps->tok, ')')) return perr(ps, ps->tok.line, "expected ')' in a constant expression, found %s", quote(&ps->tok, b, sizeof b));
        emu_lex_next(ps);
        return true;
    }
    if (is_warp_sz(&t)) {
        emu_lex_next(ps);
        *v = int_val(32, false);
        return true;
    }
    if (t.kind != TK_NUM)
        return perr(ps, t.line, "%s in a constant expression: the emulator evaluates integer literals, WARP_SZ and C's operators",
                    quote(&t, b, sizeof b));
    memset(v, 0, sizeof *v);
    if (!emu_parse_imm(&t, false, v)) return perr(ps, t.line, "bad immediate '%.*s'", (int)t.len, t.s);
    if (v->kind == IMM_INT) /* 1: signed unless U or past INT64_MAX */
        v->u = (t.s[t.len - 1] == 'U' || t.s[t.len - 1] == 'u') || v->i < 0;
    emu_lex_next(ps);
    return true;
}

/* binary = unary { op unary }, by precedence climbing over binops (all left-associative) */
static bool binary(Parser *ps, Imm *v, int min_prec) {
    if (!unary(ps, v)) return false;
    for (;;) {
        int n, op = binop_at(ps, &n);
        if (op == OP_NONE || binops[op].prec < min_prec) return true;
        uint32_t line = ps->tok.line;
        while (n--) emu_lex_next(ps);
        Imm r;
        if (!binary(ps, &r, binops[op].prec + 1) || !apply(ps, line, op, v, &r)) return false;
    }
}

/* cexpr = binary [ "?" cexpr ":" cexpr ] */
static bool cexpr(Parser *ps, Imm *v) {
    if (!binary(ps, v, 1)) return false;
    if (!punct(&ps->tok, '?')) return true;
    uint32_t line = ps->tok.line;
    emu_lex_next(ps);
    Imm a, b;
    if (!cexpr(ps, &a)) return false;
    if (!punct(&ps->tok, ':')) return perr(ps, ps->tok.line, "expected ':' of '?:' in a constant expression");
    emu_lex_next(ps);
    if (!cexpr(ps, &b)) return false;
    if (!no_float(ps, line, v, "?:") || !no_float(ps, line, &a, "?:") || !no_float(ps, line, &b, "?:")) return false;
    *v = v->i ? a : b; /* its own type, as ptxas (the ISA's text converts a and b as a binary operator does) */
    return true;
}

bool emu_parse_const(Parser *ps, Imm *im) {
    memset(im, 0, sizeof *im);
    return cexpr(ps, im);
}

bool emu_starts_const(Parser *ps) {
    const Tok *t = &ps->tok;
    if (t->kind == TK_NUM || punct(t, '(') || punct(t, '~')) return true;
    if (is_warp_sz(t)) { /* alone it is the special register (32 too); before an operator, a constant */
        const Tok *p = emu_lex_peek(ps);
        return p->kind == TK_PUNCT ? strchr("+-*/<>=!&^|?", p->s[0]) != NULL : p->kind == TK_IDENT && p->len == 1 && p->s[0] == '%';
    }
    if (punct(t, '-') || punct(t, '+') || punct(t, '!')) { /* not `!%p` or `-%r` (refused where operands are parsed) */
        const Tok *p = emu_lex_peek(ps);
        return p->kind != TK_IDENT || is_warp_sz(p);
    }
    return false;
}

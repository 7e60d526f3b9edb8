/* parse_func.c - a PTX function: its signature, performance directives and body.
 *
 * function = (".entry" | ".func" ["(" params ")"]) name ["(" params ")"] perf (";" | "{" body "}")
 * The parameters are parsed by parse_decl.c, the body's .reg declarations and instructions by parse.c; this file
 * keeps the function's state (registers, constants, labels, blocks), checks its names, resolves its branches and
 * calls when the body ends and hands the decoded code to the module.  Signatures are checked as ptxas checks them:
 * each alone (signature_ok), against the function's earlier declarations (same_prototype), against each direct
 * call's arguments and return values when the call is parsed (emu_check_call_types: the callee is declared before
 * it), and at the module's end for a body (emu_check_prototypes). */
#include "emu/emu.h"
#include "emu/exec.h"
#include "emu/parse_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Performance directives between the signature and the body.  As ptxas: the thread counts, .minnctapersm and
 * .maxnreg are positive ("Positive non-zero value expected for reqntid": a .reqntid 0 kernel loaded and every launch
 * was refused for its block), every value fits 32 bits, the dimensions are at most three, and .reqntid and .maxntid
 * exclude each other, as .reqnctapercluster and .maxclusterrank do ("Conflicting directives"). */
static bool parse_perf(Parser *ps, EmuFunc *f) {
    bool have_req = false, have_max = false, have_ncta = false, have_rank = false;
    while (ps->tok.kind == TK_IDENT && ps->tok.s[0] == '.') {
        uint32_t *dst = NULL;
        Tok d = ps->tok;
        if (is(&d, ".maxntid")) dst = f->maxntid, have_max = true;
        else if (is(&d, ".reqntid")) dst = f->reqntid, have_req = true;
        else if (is(&d, ".reqnctapercluster")) dst = f->reqnctapercluster;
        else if (is(&d, ".noreturn")) { /* ptxas: a syntax error on a kernel or given twice */
            if (f->is_entry) return perr(ps, d.line, ".noreturn on kernel '%s': it is for .func functions", f->name);
            if (f->noreturn) return perr(ps, d.line, ".noreturn given twice");
            f->noreturn = true;
            emu_lex_next(ps);
            continue;
        }
        else if (is(&d, ".pragma")) { /* a kernel's only (ptxas: a syntax error after a .func's signature) */
            if (!f->is_entry) return perr(ps, d.line, ".pragma after the signature of .func '%s': only a kernel's takes one", f->name);
            if (!emu_parse_pragma(ps, EMU_PRAGMA_SIGNATURE)) return false;
            continue;
        }
        /* the others are a kernel's (ptxas: a syntax error on a .func), the cluster ones sm_90's ("Feature
         * '.explicitcluster' requires .target sm_90 or higher"); each loaded */
        bool cluster = is(&d, ".explicitcluster") || is(&d, ".maxclusterrank") || is(&d, ".reqnctapercluster");
        if (!f->is_entry && (dst || cluster || is(&d, ".maxnreg") || is(&d, ".minnctapersm")))
            return perr(ps, d.line, "%.*s on .func '%s': it is a kernel's (.entry) directive", (int)d.len, d.s, f->name);
        if (cluster && ps->target_sm && ps->target_sm < 90)
            return perr(ps, d.line, "%.*s needs .target sm_90 or later (the module's .target is sm_%u)", (int)d.len, d.s, ps->target_sm);
        if (is(&d, ".explicitcluster")) { f->explicit_cluster = true; emu_lex_next(ps); continue; }
        bool rank = is(&d, ".maxclusterrank");
        have_rank |= rank;
        have_ncta |= dst == f->reqnctapercluster;
        bool positive = (dst && dst != f->reqnctapercluster) || is(&d, ".minnctapersm") || is(&d, ".maxnreg");
        emu_lex_next(ps);
        unsigned k = 0;
        do {
            int64_t v;
            if (!emu_parse_int(&ps->tok, &v)) return perr(ps, ps->tok.line, "bad performance directive value");
            if (v < 0 || v > (int64_t)UINT32_MAX)
                return perr(ps, ps->tok.line, "%.*s %.*s: the value does not fit 32 bits", (int)d.len, d.s, (int)ps->tok.len, ps->tok.s);
            if (positive && v == 0)
                return perr(ps, ps->tok.line, "%.*s with a 0: its values are positive", (int)d.len, d.s);
            if (dst && k == 3) return perr(ps, ps->tok.line, "%.*s has at most three values (x, y, z)", (int)d.len, d.s);
            if (dst) dst[k] = (uint32_t)v;
            if (rank && k == 0) f->maxclusterrank = (uint32_t)v;
            k++;
            emu_lex_next(ps);
        } while (accept(ps, ','));
        if (dst) for (; k < 3; k++) dst[k] = 1;
        if (have_req && have_max) return perr(ps, d.line, ".reqntid and .maxntid given together: a kernel has one of them");
        if (have_ncta && have_rank)
            return perr(ps, d.line, ".reqnctapercluster and .maxclusterrank given together: a kernel has one of them");
    }
    return true;
}

static void reset_fn_state(Parser *ps) {
    emu_labels_reset(ps);
    emu_consts_reset(ps);
    ps->nregs = ps->ncode = ps->nvec = ps->nfixes = ps->nallregs = ps->scope_regs = 0;
    ps->nblk = 0;
    GROW(ps->blk_parent, ps->nblk, ps->capblk);
    ps->blk_parent[ps->nblk++] = -1; /* block 0: the body */
    ps->cur_blk = 0;
    ps->code = NULL;
    ps->capcode = 0;
    ps->vec = NULL;
    ps->capvec = 0;
    ps->nslots = EMU_SLOT_SREG + EMU_SREG_COUNT;
    ps->cur_srcloc = 0;
}

/* The location of the instructions just parsed (code[first..ncode), all of one PTX line): their line's, or, on the
 * line of an instruction with another .loc (`.loc 1 4 1 add...; .loc 1 5 1 mul...;`), a line key of their own
 * (EmuModule.vlines), so that each reports its own .loc. */
static void ins_locate(Parser *ps, uint32_t first) {
    EmuModule *m = ps->m;
    uint32_t line = ps->code[first].line, key = line, loc = ps->cur_srcloc;
    if (line == ps->last_ins_line && loc == ps->last_ins_loc) key = ps->last_ins_key;
    else if (line == ps->last_ins_line) {
        GROW(m->vlines, m->nvlines, ps->capvlines);
        m->vlines[m->nvlines++] = (struct EmuVLine){line, loc};
        key = m->nlines + m->nvlines;
    } else if (loc) m->line_srcloc[line] = loc;
    for (uint32_t k = first; k < ps->ncode; k++) ps->code[k].line = key;
    ps->last_ins_line = line, ps->last_ins_key = key, ps->last_ins_loc = loc;
}

/* body = { "{" body "}" | directive | label ":" | ins }
 * A nested block is a scope: registers and variables declared in it are
 * not visible after its "}" (their storage stays). */
static bool parse_body(Parser *ps) {
    enum { MAX_DEPTH = 64 };
    uint32_t saved_regs[MAX_DEPTH], saved_syms[MAX_DEPTH];
    int depth = 1;
    while (depth > 0) {
        Tok *t = &ps->tok;
        if (t->kind == TK_EOF) return perr(ps, t->line, "unexpected end of PTX in function body");
        if (is_punct(t, '{')) {
            if (depth == MAX_DEPTH) return perr(ps, t->line, "blocks nested more than %d deep", MAX_DEPTH);
            saved_regs[depth] = ps->scope_regs = ps->nregs;
            saved_syms[depth] = ps->scope_syms = ps->m->nsyms;
            depth++;
            GROW(ps->blk_parent, ps->nblk, ps->capblk);
            ps->blk_parent[ps->nblk] = ps->cur_blk;
            ps->cur_blk = (int32_t)ps->nblk++;
            emu_lex_next(ps);
            continue;
        }
        if (accept(ps, '}')) {
            depth--;
            if (depth > 0) {
                ps->cur_blk = ps->blk_parent[ps->cur_blk];
                ps->nregs = saved_regs[depth];
                for (uint32_t i = saved_syms[depth]; i < ps->m->nsyms; i++) ps->m->syms[i].hidden = true;
                ps->scope_regs = depth > 1 ? saved_regs[depth - 1] : 0;
                ps->scope_syms = depth > 1 ? saved_syms[depth - 1] : ps->sym_scope_start;
            }
            continue;
        }
        if (t->kind == TK_IDENT && t->s[0] == '.') {
            /* `.reg.b16 hl, hu;` (cuda_fp16.hpp's inline PTX): the type glued to the directive */
            if (is(t, ".reg") || (t->len > 5 && memcmp(t->s, ".reg.", 5) == 0)) { if (!emu_parse_reg(ps)) return false; continue; }
            if (is(t, ".loc")) { if (!emu_parse_loc(ps)) return false; continue; }
            if (is(t, ".file")) { if (!emu_parse_file(ps)) return false; continue; }
            if (is(t, ".branchtargets")) { if (!emu_parse_branchtargets(ps)) return false; continue; }
            if (is(t, ".pragma")) { if (!emu_parse_pragma(ps, EMU_PRAGMA_BODY)) return false; continue; }
            if (is(t, ".callprototype") || is(t, ".calltargets")) { /* label: .callprototype (...) ...; */
                while (ps->tok.kind != TK_EOF && !is_punct(&ps->tok, ';')) emu_lex_next(ps);
                accept(ps, ';');
                continue;
            }
            unsigned space = 0;
            bool ext = false;
            if (is(t, ".extern")) { ext = true; emu_lex_next(ps); }
            if (is(t, ".shared")) space = EMU_SP_SHARED;
            else if (is(t, ".local")) space = EMU_SP_LOCAL;
            else if (is(t, ".param")) space = EMU_SP_PARAM;
            else if (is(t, ".global")) space = EMU_SP_GLOBAL;
            else if (is(t, ".const")) space = EMU_SP_CONST;
            if (!space) return perr(ps, t->line, "unsupported directive '%.*s' in function body", (int)t->len, t->s);
            emu_lex_next(ps);
            if (!emu_parse_var(ps, space, ext)) return false;
            continue;
        }
        if (t->kind == TK_IDENT && is_punct(emu_lex_peek(ps), ':')) {
            if (emu_label_find(ps, t->s, t->len, ps->cur_blk) >= 0)
                return perr(ps, t->line, "label '%.*s' defined twice in one block", (int)t->len, t->s);
            /* ptxas: "Duplicate definition" of a label named as a register (one declared by name: a range's
             * %r<4> takes a label %r2), variable or parameter of its block */
            for (uint32_t k = ps->scope_regs; k < ps->nregs; k++) {
                const struct RegRange *r = &ps->regs[k];
                if (r->count < 0 && r->plen == t->len && memcmp(r->prefix, t->s, t->len) == 0)
                    return perr(ps, t->line, "label '%.*s' has the name of a register of its block", (int)t->len, t->s);
            }
            if (emu_sym_find(ps, t->s, t->len, ps->scope_syms) >= 0)
                return perr(ps, t->line, "label '%.*s' has the name of a variable or parameter of its block", (int)t->len, t->s);
            emu_label_add(ps, t->s, t->len);
            emu_lex_next(ps);
            emu_lex_next(ps);
            continue;
        }
        uint32_t first = ps->ncode;
        if (!emu_parse_ins(ps)) return false;
        if (first < ps->ncode) ins_locate(ps, first);
    }
    return true;
}

/* What ptxas asks of a signature (each loaded before): an incomplete array (s[] or s[0]) only as a .func's last
 * argument ("Only the last input parameter can be an incomplete array", "Output parameter cannot be an incomplete
 * array"), several return values only in .reg ("Multiple return parameters require .register state space"), and
 * .noreturn only without return values ("Invalid directive '.noreturn'"). */
static bool signature_ok(Parser *ps, const EmuFunc *f) {
    for (uint32_t k = 0; k < f->nrets; k++) {
        if (f->rets[k].incomplete)
            return perr(ps, f->line, "return value '%s' of '%s' is an incomplete array ([] or [0]): only the last argument may be",
                        f->rets[k].name, f->name);
        if (f->nrets > 1 && !f->rets[k].reg)
            return perr(ps, f->line, "'%s' has %u return values and '%s' is .param: several return values are .reg", f->name,
                        f->nrets, f->rets[k].name);
    }
    for (uint32_t k = 0; k + 1 < f->nparams; k++)
        if (f->params[k].incomplete)
            return perr(ps, f->line, "argument '%s' of '%s' is an incomplete array ([] or [0]) and not the last argument",
                        f->params[k].name, f->name);
    if (f->noreturn && f->nrets)
        return perr(ps, f->line, "'%s' is .noreturn and has a return value: a .noreturn function returns nothing", f->name);
    return true;
}

/* A parameter of two declarations of one function: the same state space, type, vector width, array size and
 * alignment (ptxas: "Inconsistent prototypes of 'f', parameter types differ"; the later one replaced the other). */
static bool same_param(const EmuParam *a, const EmuParam *b) {
    return a->reg == b->reg && a->ty == b->ty && a->vec == b->vec && a->array == b->array && a->incomplete == b->incomplete &&
           a->size == b->size && a->align == b->align;
}

/* A function declared again (a prototype, or its definition after prototypes) as before: its kernel-ness,
 * return values, arguments, .noreturn and .extern (ptxas: "Inconsistent redefinition of variable 'f'"). */
static bool same_prototype(Parser *ps, const EmuFunc *old, const EmuFunc *f, uint32_t line) {
    const char *what = old->is_entry != f->is_entry ? (f->is_entry ? "a kernel" : "a .func")
                       : old->nrets != f->nrets || old->nparams != f->nparams ? "a different number of parameters"
                       : old->noreturn != f->noreturn ? (f->noreturn ? ".noreturn" : "no .noreturn")
                       : old->is_extern != f->is_extern ? (f->is_extern ? ".extern" : "no .extern")
                       : f->linkage && f->linkage != old->linkage ? "another linkage (.visible, .weak or .common; none keeps the first's)"
                       : NULL;
    for (uint32_t k = 0; !what && k < f->nrets + f->nparams; k++) {
        const EmuParam *a = k < f->nrets ? &old->rets[k] : &old->params[k - f->nrets], *b = k < f->nrets ? &f->rets[k] : &f->params[k - f->nrets];
        if (!same_param(a, b)) what = k < f->nrets ? "a return value of another type, size or alignment" : "an argument of another type, size or alignment";
    }
    if (!what) return true;
    return perr(ps, line, "'%s' declared again with %s (its declaration at line %u differs)", f->name, what, old->line);
}

/* function = (".entry" | ".func" ["(" params ")"]) name ["(" params ")"] perf (";" | "{" body "}") */
static int cmp_names(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

bool emu_parse_function(Parser *ps, bool entry) {
    EmuModule *m = ps->m;
    uint32_t line = ps->tok.line;
    emu_lex_next(ps);
    EmuFunc tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.is_entry = entry;
    tmp.line = line;
    uint32_t scope = m->nsyms;
    if (!entry && accept(ps, '(')) {
        do {
            if (!emu_parse_param(ps, &tmp.rets, &tmp.nrets, &tmp.ret_size, EMU_PARAM_ARGS)) goto fail;
        } while (accept(ps, ','));
        if (!expect(ps, ')')) goto fail;
    }
    if (ps->tok.kind != TK_IDENT) { perr(ps, ps->tok.line, "expected a function name"); goto fail; }
    tmp.name = arena_strndup(ps->a, ps->tok.s, ps->tok.len);
    emu_lex_next(ps);
    tmp.param_size = tmp.ret_size;
    if (accept(ps, '(')) {
        if (!is_punct(&ps->tok, ')')) do {
            if (!emu_parse_param(ps, &tmp.params, &tmp.nparams, &tmp.param_size, entry ? EMU_PARAM_KERNEL : EMU_PARAM_ARGS))
                goto fail;
        } while (accept(ps, ','));
        if (!expect(ps, ')')) goto fail;
    }
    if (tmp.nrets + tmp.nparams > 1) { /* ptxas refuses it; a [name] would read one of them.  Sorted: 100000s of
                                         * parameters compared pairwise took minutes */
        uint32_t n = tmp.nrets + tmp.nparams;
        const char **names = malloc(n * sizeof *names);
        if (!names) out_of_memory();
        for (uint32_t i = 0; i < n; i++) names[i] = i < tmp.nrets ? tmp.rets[i].name : tmp.params[i - tmp.nrets].name;
        qsort(names, n, sizeof *names, cmp_names);
        const char *dup = NULL;
        for (uint32_t i = 1; i < n && !dup; i++)
            if (!strcmp(names[i - 1], names[i])) dup = names[i];
        free(names);
        if (dup) {
            perr(ps, line, "parameter '%s' of '%s' is declared twice", dup, tmp.name);
            goto fail;
        }
    }
    /* ptxas: "Entry function 'k' uses too much parameter space (0x1101 bytes, 0x1100 max)": 4352 bytes, and from PTX 8.1
     * on sm_70 and later 32764, to the end of the last parameter */
    uint32_t max_params = ps->ptx_version >= 81 && (!ps->target_sm || ps->target_sm >= 70) ? 32764 : 4352;
    if (entry && tmp.param_size > max_params) {
        perr(ps, line, "kernel '%s' has %u bytes of parameters: PTX %u.%u%s allows %u", tmp.name, tmp.param_size, ps->ptx_version / 10u,
             ps->ptx_version % 10u, max_params == 4352 && ps->ptx_version >= 81 ? " below sm_70" : "", max_params);
        goto fail;
    }
    if (!parse_perf(ps, &tmp) || !signature_ok(ps, &tmp)) goto fail;
    tmp.is_extern = ps->decl_extern;
    tmp.linkage = ps->decl_linkage;
    /* a prototype, or a redefinition of a declared function */
    int32_t idx = -1;
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (strcmp(m->funcs[i].name, tmp.name) == 0) idx = (int32_t)i;
    if (idx >= 0 && m->funcs[idx].defined) { perr(ps, line, "function '%s' defined twice", tmp.name); goto fail; }
    if (idx >= 0 && !same_prototype(ps, &m->funcs[idx], &tmp, line)) goto fail;
    if (idx >= 0) tmp.linkage = m->funcs[idx].linkage; /* the first declaration's */
    /* ptxas: "Function definition conflicts with '.extern' declaration" (the body ran as the extern's) */
    if ((tmp.is_extern || (idx >= 0 && m->funcs[idx].is_extern)) && is_punct(&ps->tok, '{')) {
        perr(ps, line, "'%s' is declared .extern and defined here: an .extern function's body is in another module", tmp.name);
        goto fail;
    }
    if (idx < 0) {
        GROW(m->funcs, m->nfuncs, ps->capfuncs);
        idx = (int32_t)m->nfuncs++;
    } else {
        free(m->funcs[idx].params);
        free(m->funcs[idx].rets);
    }
    m->funcs[idx] = tmp;
    EmuFunc *f = &m->funcs[idx];
    if (accept(ps, ';')) { /* prototype: its params leave scope */
        emu_syms_truncate(ps, scope);
        return true;
    }
    if (!expect(ps, '{')) return false;
    f->defined = true;
    ps->fn = f;
    ps->fn_index = idx;
    ps->sym_scope_start = ps->scope_syms = scope;
    reset_fn_state(ps);
    for (uint32_t k = 0; k < f->nrets + f->nparams; k++) { /* .reg parameters: registers of the body */
        EmuParam *p = k < f->nrets ? &f->rets[k] : &f->params[k - f->nrets];
        if (!p->reg) continue;
        emu_reg_declare(ps, p->name, (uint32_t)strlen(p->name), -1, p->slot ? EMU_T_PRED : 0);
        p->slot = ps->nslots - 1;
    }
    bool ok = parse_body(ps);
    f = &m->funcs[idx]; /* funcs cannot move during a body, but be safe */
    if (ok) {
        for (uint32_t i = 0; i < ps->nfixes; i++) {
            struct Fix *x = &ps->fixes[i];
            EmuIns *in = &ps->code[x->ins];
            bool found = false, table = false;
            /* the label of the innermost block around the reference that has one */
            for (int32_t blk = x->blk; blk >= 0 && !found; blk = ps->blk_parent[blk]) {
                int64_t k = emu_label_find(ps, x->s, x->len, blk);
                if (k >= 0) {
                    in->target = ps->labels[k].at;
                    table = ps->labels[k].table;
                    found = true;
                }
            }
            /* brx.idx jumps into a table (label + 1 + index): to a plain label it ran the code after it as a table of
             * bras; ptxas: "Label with '.branchtargets' directive expected", and the table before the brx.idx */
            if (found && in->op == EMU_OP_BRX && (!table || in->target > x->ins)) {
                ok = perr(ps, x->line, "brx.idx's operand '%.*s' %s", (int)x->len, x->s,
                          table ? "is a .branchtargets table declared after the brx.idx: ptxas wants it before"
                                : "is not a .branchtargets table (label: .branchtargets L0, L1, ...;)");
                break;
            }
            /* a label is a branch target, of bra and of brx.idx's table (ptxas: "Arguments mismatch"); as any
             * other operand it read the sink, a mov or add of it ran with a value of its own */
            if (found && in->op != EMU_OP_BRA && in->op != EMU_OP_BRX) {
                ok = perr(ps, x->line, "label '%.*s' as an operand of %s: labels are the targets of bra and brx.idx only", (int)x->len,
                          x->s, emu_op_name(in->op));
                break;
            }
            if (!found) {
                for (uint32_t k = 0; k < m->nfuncs && !found; k++) {
                    EmuFunc *fk = &m->funcs[k];
                    if (strlen(fk->name) != x->len || memcmp(fk->name, x->s, x->len) != 0) continue;
                    if (in->op == EMU_OP_CALL) {
                        in->target = k;
                        found = true;
                    } else if (in->op == EMU_OP_MOV && in->ok[1] == EMU_OK_LABEL) {
                        /* mov.u64 %rd, func: the function's address, for indirect calls */
                        if (fk->is_entry) { /* what nvcc -rdc writes for a launch from the device */
                            ok = perr(ps, x->line, "the address of kernel entry '%s' is taken (%s): a kernel launched from the device "
                                      "(CUDA dynamic parallelism) is not supported", fk->name, emu_op_name(in->op));
                            break;
                        }
                        in->o[1] = emu_const_slot(ps, EMU_FUNC_WINDOW + (uint64_t)k * EMU_FUNC_STRIDE, -1, 0);
                        in->ok[1] = EMU_OK_REG;
                        fk->address_taken = true;
                        found = true;
                    }
                }
                if (!ok) break;
            }
            if (!found) { ok = perr(ps, x->line, "unknown label or symbol '%.*s'", (int)x->len, x->s); break; }
        }
    }
    if (ok) {
        /* an implicit ret at the end keeps the pc inside the code */
        EmuIns ret;
        memset(&ret, 0, sizeof ret);
        ret.op = EMU_OP_RET;
        ret.guard = EMU_SLOT_TRUE;
        ret.line = ps->tok.line;
        GROW(ps->code, ps->ncode, ps->capcode);
        ps->code[ps->ncode++] = ret;
        f->code = ps->code;
        f->ncode = ps->ncode;
        f->vec = ps->vec;
        ps->code = NULL; /* the function's now: memory running out below frees it once, with the module */
        ps->vec = NULL;
        f->nslots = ps->nslots;
        f->slot_init = calloc(f->nslots, sizeof(uint64_t));
        if (!f->slot_init) out_of_memory();
        f->slot_init[EMU_SLOT_TRUE] = 1;
        /* constant slots: values now, symbol addresses at module finalisation (consts kept in code->... ) */
        for (uint32_t i = 0; i < ps->nconsts; i++) f->slot_init[ps->consts[i].slot] = ps->consts[i].value;
        /* remember symbol constants for finalisation */
        uint32_t nsc = 0;
        for (uint32_t i = 0; i < ps->nconsts; i++) nsc += ps->consts[i].sym >= 0;
        f->symfix = nsc ? arena_alloc(ps->a, nsc * sizeof *f->symfix) : NULL;
        f->nsymfix = 0;
        for (uint32_t i = 0; i < ps->nconsts; i++)
            if (ps->consts[i].sym >= 0)
                f->symfix[f->nsymfix++] = (EmuSymFix){ps->consts[i].slot, (uint32_t)ps->consts[i].sym, ps->consts[i].addend};
        /* slots holding .local addresses: relocated to the frame's locals at each call */
        /* (and a .func's own parameters, which live in its frame's local memory: emu_args_offset) */
        for (uint32_t i = 0; i < f->nsymfix; i++)
            f->nlocal_slots += m->syms[f->symfix[i].sym].space == EMU_SP_LOCAL || emu_func_arg_sym(f, &m->syms[f->symfix[i].sym]);
        f->local_slots = f->nlocal_slots ? arena_alloc(ps->a, f->nlocal_slots * sizeof *f->local_slots) : NULL;
        for (uint32_t i = 0, k = 0; i < f->nsymfix; i++)
            if (m->syms[f->symfix[i].sym].space == EMU_SP_LOCAL || emu_func_arg_sym(f, &m->syms[f->symfix[i].sym]))
                f->local_slots[k++] = f->symfix[i].slot;
        f->nregnames = ps->nallregs;
        f->regnames = ps->nallregs ? arena_alloc(ps->a, ps->nallregs * sizeof *f->regnames) : NULL;
        if (ps->nallregs) memcpy(f->regnames, ps->allregs, ps->nallregs * sizeof *f->regnames);
    } else {
        free(ps->code);
        free(ps->vec);
        ps->code = NULL;
        ps->vec = NULL;
    }
    ps->fn = NULL;
    /* function-scope symbols stay in the table (their addresses are in use)
     * but are hidden from later functions */
    for (uint32_t i = scope; i < m->nsyms; i++) m->syms[i].hidden = true;
    ps->sym_scope_start = m->nsyms;
    return ok;
fail: /* the signature did not parse: nothing of it is in the module yet */
    free(tmp.params);
    free(tmp.rets);
    return false;
}

/* One element of a direct call's list against the callee's parameter p (ptxas: "Type of argument does not match
 * formal parameter", "Alignment of argument does not match"; the bytes copied were the smaller size's):
 *   - a .param variable: an array for an array parameter (a[1] is no scalar), of its size (any size for an
 *     incomplete array, s[] or s[0]) and its alignment; a scalar for a .reg parameter, of its size;
 *   - a register: for a scalar parameter of its size (a predicate for a .pred one); the types may differ
 *     (.f32 for .b32);
 *   - an immediate: for a scalar parameter; a float literal (flit: 1.5, 0f3FC00000) for a float or .bN one, an
 *     integer for an integer or .bN one.
 * NULL when it fits, else what does not. */
static const char *call_elem_mismatch(Parser *ps, const EmuParam *p, uint32_t e, bool flit) {
    if (e & EMU_CALL_REG) {
        uint32_t sl = e & ~EMU_CALL_REG;
        if (emu_const_at(ps, sl) >= 0) {
            unsigned kind = emu_type_kind(p->ty);
            if (p->array) return "an immediate for an array";
            if (flit && (kind == EMU_K_U || kind == EMU_K_S)) return "a float literal for an integer parameter";
            return !flit && kind == EMU_K_F ? "an integer literal for a float parameter" : NULL;
        }
        const struct RegRange *r = slot_range(ps, sl);
        if (!r || (!r->ty && !r->pred) || r->vec > 1) return NULL; /* a special register, or one of unknown type */
        if (p->array) return "a register for an array";
        if (r->pred != (p->ty == EMU_T_PRED)) return r->pred ? "a predicate for a value" : "a value for a predicate";
        unsigned n = r->wide ? 16 : emu_type_size(r->ty);
        return n == p->size ? NULL : "a register of another size";
    }
    const EmuSym *s = &ps->m->syms[e];
    if (p->reg && p->ty == EMU_T_PRED) return "a value for a predicate";
    if (p->reg) return s->array || s->size != p->size ? "a .param variable of another size" : NULL;
    if (s->array != p->array) return s->array ? "an array for a scalar" : "a scalar for an array";
    if (!p->incomplete && s->size != p->size) return "a .param variable of another size";
    return s->align != p->align ? "a .param variable of another alignment" : NULL;
}

bool emu_check_call_types(Parser *ps, const EmuIns *in, const char *name, uint32_t len, uint32_t line) {
    const EmuFunc *c = NULL;
    for (uint32_t k = 0; k < ps->m->nfuncs && !c; k++)
        if (strlen(ps->m->funcs[k].name) == len && !memcmp(ps->m->funcs[k].name, name, len)) c = &ps->m->funcs[k];
    if (!c || c->is_entry || in->on[0] != c->nrets || in->on[2] > c->nparams) return true; /* check_calls (module.c) reports */
    for (unsigned k = 0; k < 3; k += 2)
        for (uint32_t j = 0; j < in->on[k]; j++) {
            const EmuParam *p = k ? &c->params[j] : &c->rets[j];
            /* ptxas: "In ABI compilation, passing predicate, 8-bit and 16-bit parameters to device functions is not
             * supported" (a .reg .b16 it passes) */
            if (p->reg && p->ty == EMU_T_PRED)
                return perr(ps, line, "call of '%s': %s '%s' is a .reg .pred, and ptxas passes no predicate to a function", c->name,
                            k ? "argument" : "return value", p->name);
            const char *why = call_elem_mismatch(ps, p, ps->vec[in->o[k] + j], k && j < 64 && (in->call.flit >> j & 1));
            if (why)
                return perr(ps, line, "call of '%s': %s '%s' gets %s (a call passes what its callee declares: the same size "
                            "and alignment, an array for an array)", c->name, k ? "argument" : "return value", p->name, why);
        }
    return true;
}

/* At the module's end: every function declared without .extern has a body in the module (ptxas: "Unresolved extern
 * function 'f'", whether or not it is called; a call of it was refused, the declaration loaded). */
bool emu_check_prototypes(Parser *ps) {
    for (uint32_t k = 0; k < ps->m->nfuncs; k++) {
        const EmuFunc *f = &ps->m->funcs[k];
        bool aliased = false; /* an alias's target without a body: resolve_aliases (module.c) says so */
        for (uint32_t i = 0; i < ps->m->nfuncs && !aliased; i++) aliased = ps->m->funcs[i].alias1 == k + 1;
        if (!f->defined && !f->is_extern && !f->alias1 && !aliased)
            return perr(ps, f->line, "'%s' is declared without .extern and the module does not define it (a function of another "
                        "module is declared .extern)", f->name);
    }
    return true;
}

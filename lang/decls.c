/* decls.c - the top-level declarations of one file, parsed but not compiled.
 *
 * Tools that only need a file's outline (the tree-sitter grammar's test
 * compares it with the grammar's tree) get it without generating IR or
 * reading imports: parse the file, then copy each Decl's kind, name and
 * location into a LangDecl array in the arena.  The tuner reads a kernel's
 * @config and @tune_key attributes the same way (lang_kernel_tuning). */
#include "ast.h"

#include <string.h>

int lang_list_decls(Arena *a, const SrcFile *src, Diag *d, LangDecl **out) {
    FileAst *f = parse_file(a, src, d);
    LangDecl *v = ARENA_ARRAY(a, LangDecl, f->ndecls ? f->ndecls : 1);
    static const LangDeclKind kinds[] = {
        [D_IMPORT] = LANG_DECL_IMPORT, [D_CONST] = LANG_DECL_CONST, [D_FN] = LANG_DECL_FN, [D_KERNEL] = LANG_DECL_KERNEL};
    for (int i = 0; i < f->ndecls; i++) {
        const Decl *dc = f->decls[i];
        v[i] = (LangDecl){.kind = kinds[dc->kind], .name = dc->name, .loc = dc->loc};
    }
    *out = v;
    return f->ndecls;
}

/* A literal as define text: [-] INT | FLOAT | true | false | type name | "string"; NULL otherwise. */
static const char *literal_text(Arena *a, const Node *n) {
    const char *sign = "";
    if (n->kind == N_UNARY && n->op == TK_MINUS) sign = "-", n = n->lhs;
    switch (n->kind) {
    case N_INT: return n->ty.dt == DT_U64 ? arena_printf(a, "%s%llu", sign, (unsigned long long)n->ival)
                                          : arena_printf(a, "%s%lld", sign, (long long)n->ival);
    case N_FLOAT: return arena_printf(a, "%s%.17g", sign, n->fval);
    case N_BOOL: return *sign ? NULL : n->ival ? "true" : "false";
    case N_DTYPE: return *sign || n->ty.nptr ? NULL : dtype_name(n->ty.dt);
    case N_STR: { /* a quoted string, as a define takes it */
        if (*sign) return NULL;
        Str q = {0};
        str_putc(&q, '"');
        for (const char *c = n->name; *c; c++) {
            if (*c == '"' || *c == '\\') str_putc(&q, '\\');
            str_putc(&q, *c);
        }
        str_putc(&q, '"');
        char *r = arena_strdup(a, q.buf);
        str_free(&q);
        return r;
    }
    default: return NULL;
    }
}

bool lang_kernel_tuning(Arena *a, const SrcFile *src, const char *kernel, Diag *d, LangTuning *out) {
    memset(out, 0, sizeof *out);
    int before = d->nerrors;
    FileAst *f = parse_file(a, src, d);
    if (d->nerrors > before) return false;
    const Decl *k = NULL;
    for (int i = 0; i < f->ndecls; i++)
        if (f->decls[i]->kind == D_KERNEL && !strcmp(f->decls[i]->name, kernel)) k = f->decls[i];
    if (!k) {
        diag_error(d, (Loc){src, 1, 1}, "%s has no kernel named '%s'", src->name, kernel);
        return false;
    }
    out->configs = ARENA_ARRAY(a, const char **, k->nattrs + 1);
    for (int i = 0; i < k->nattrs; i++) {
        const Attr *at = &k->attrs[i];
        bool config = !strcmp(at->name, "config");
        if (!config && strcmp(at->name, "tune_key")) continue;
        const char **list = ARENA_ARRAY(a, const char *, at->nargs + 1);
        for (int j = 0; j < at->nargs; j++) {
            const Node *v = at->args[j];
            if (config) {
                const char *text = literal_text(a, v);
                if (!at->argnames[j] || !text) {
                    diag_error(d, v->loc, "'@config' arguments are NAME=VALUE with a literal value");
                    return false;
                }
                list[j] = arena_printf(a, "%s=%s", at->argnames[j], text);
            } else {
                if (v->kind != N_NAME || at->argnames[j]) {
                    diag_error(d, v->loc, "'@tune_key' arguments are parameter names");
                    return false;
                }
                list[j] = v->name;
            }
        }
        if (config) out->configs[out->nconfigs++] = list;
        else {
            out->keys = list;
            out->nkeys = at->nargs;
        }
    }
    return true;
}

/* decls.c - the top-level declarations of one file, parsed but not compiled.
 *
 * Tools that only need a file's outline (the tree-sitter grammar's test
 * compares it with the grammar's tree) get it without generating IR or
 * reading imports: parse the file, then copy each Decl's kind, name and
 * location into a LangDecl array in the arena. */
#include "ast.h"

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

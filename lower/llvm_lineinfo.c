/* llvm_lineinfo.c - `.file` / `.loc` line info: every PTX instruction says
 * which .tile statement (file, line, column) produced it.
 *
 * NVPTX prints line info from LLVM's debug metadata.  With the compile
 * unit's emission kind DebugDirectivesOnly it prints the `.file` and `.loc`
 * directives and nothing else (no DWARF sections, no `.target ..., debug`),
 * so ptxas needs no -g and optimizes as before.
 *   1. ll_lineinfo_begin, once per LLVM module: a DIBuilder, the module flags
 *      "Debug Info Version" and "Dwarf Version", one compile unit named
 *      after the first kernel's file.
 *   2. ll_lineinfo_func, per kernel: a subprogram at the kernel's line,
 *      attached to the LLVM function; the builder's location starts empty
 *      (the entry block's thread ids have none).
 *   3. ll_lineinfo_at, per Tile IR instruction (the dispatcher calls it):
 *      the builder's current location becomes the instruction's, so every
 *      LLVM instruction the op-family emitters build carries it.  A
 *      statement of another file (an imported `fn` inlined by the front
 *      end) is scoped by a lexical-block file of the kernel's subprogram,
 *      one per (kernel, file).  An instruction without a location (made by
 *      a pass) keeps the one before it.
 *   4. ll_lineinfo_end: DIBuilderFinalize, before the module is verified
 *      (ll_lineinfo_free finalizes a lowering that failed before it).
 * LLVM's passes may move, merge or drop locations (O3 hoists, CSEs and
 * merges code): the PTX then has fewer `.loc` lines, and a merged
 * instruction the location of one of its statements.  Joining the PTX of
 * several modules (llvm_codegen.c) renumbers their `.file` tables into one. */
#include "llvm_ctx.h"

#include <llvm-c/DebugInfo.h>
#include <stdlib.h>
#include <string.h>

struct LineInfo {
    LLVMDIBuilderRef dib;
    LLVMMetadataRef cu, sp; /* sp: the current kernel's subprogram */
    struct {
        const SrcFile *src;
        LLVMMetadataRef file, scope; /* scope: in the current kernel; NULL until used there */
    } *files;
    int nfiles, capfiles;
    bool finalized;
};

/* LLVM's DICompileUnit::DebugDirectivesOnly, which the C enum does not name */
enum { EMISSION_DIRECTIVES_ONLY = 3 };

static int file_index(LL *l, const SrcFile *src) {
    LineInfo *li = l->li;
    for (int k = 0; k < li->nfiles; k++)
        if (li->files[k].src == src) return k;
    if (li->nfiles == li->capfiles) {
        li->capfiles = li->capfiles ? 2 * li->capfiles : 4;
        li->files = realloc(li->files, sizeof *li->files * (size_t)li->capfiles);
        if (!li->files) out_of_memory();
    }
    const char *name = src && src->name && *src->name ? src->name : "<source>"; /* LLVM refuses an empty file name */
    li->files[li->nfiles].src = src;
    li->files[li->nfiles].file = LLVMDIBuilderCreateFile(li->dib, name, strlen(name), "", 0);
    li->files[li->nfiles].scope = NULL;
    return li->nfiles++;
}

void ll_lineinfo_begin(LL *l, const SrcFile *main_file) {
    LineInfo *li = calloc(1, sizeof *li);
    if (!li) out_of_memory();
    l->li = li;
    li->dib = LLVMCreateDIBuilder(l->mod);
    LLVMAddModuleFlag(l->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(l->t_i32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(l->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(l->t_i32, 2, 0)));
    int main_index = file_index(l, main_file); /* before reading li->files: it may grow */
    LLVMMetadataRef file = li->files[main_index].file;
    const char *producer = "tile";
    li->cu = LLVMDIBuilderCreateCompileUnit(li->dib, LLVMDWARFSourceLanguageC, file, producer, strlen(producer), 1, "", 0, 0,
                                            "", 0, (LLVMDWARFEmissionKind)EMISSION_DIRECTIVES_ONLY, 0, 0, 0, "", 0, "", 0);
}

void ll_lineinfo_func(LL *l, Func *f) {
    LineInfo *li = l->li;
    if (!li) return;
    for (int k = 0; k < li->nfiles; k++) li->files[k].scope = NULL;
    int fi = file_index(l, f->loc.file);
    LLVMMetadataRef file = li->files[fi].file;
    LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(li->dib, file, NULL, 0, LLVMDIFlagZero);
    size_t n = strlen(f->name);
    li->sp = LLVMDIBuilderCreateFunction(li->dib, file, f->name, n, f->name, n, file, f->loc.line, ty, 0, 1, f->loc.line,
                                         LLVMDIFlagPrototyped, 1);
    LLVMSetSubprogram(l->fn, li->sp);
    LLVMSetCurrentDebugLocation2(l->b, NULL);
}

void ll_lineinfo_at(LL *l, Loc loc) {
    LineInfo *li = l->li;
    if (!li || !loc.file || !loc.line) return;
    int k = file_index(l, loc.file);
    if (!li->files[k].scope)
        li->files[k].scope = loc.file == l->f->loc.file ? li->sp : LLVMDIBuilderCreateLexicalBlockFile(li->dib, li->sp, li->files[k].file, 0);
    LLVMSetCurrentDebugLocation2(l->b, LLVMDIBuilderCreateDebugLocation(l->ctx, loc.line, loc.col, li->files[k].scope, NULL));
}

void ll_lineinfo_end(LL *l) {
    LineInfo *li = l->li;
    if (!li) return;
    LLVMSetCurrentDebugLocation2(l->b, NULL);
    LLVMDIBuilderFinalize(li->dib);
    li->finalized = true;
}

void ll_lineinfo_free(LL *l) {
    LineInfo *li = l->li;
    if (!li) return;
    if (!li->finalized) LLVMDIBuilderFinalize(li->dib); /* a lowering that failed half-way: DIBuilder wants it before disposal */
    LLVMDisposeDIBuilder(li->dib);
    free(li->files);
    free(li);
    l->li = NULL;
}

/* NVPTX escapes a file name's quote as `\"`, which ends the string for ptxas (and the emulator): a source
 * named `a"b.tile` made PTX that did not assemble.  ptxas reads octal escapes, which NVPTX already uses for
 * bytes that are not printable (`\303\251` for an é), so the quote becomes `\042`.  Only `.file` lines are
 * touched, and only their quoted name: a `\\` before a quote is an escaped backslash, kept. */
char *ll_lineinfo_ptx_file_names(const char *ptx) {
    if (!strstr(ptx, "\\\"")) return NULL;
    Str out = {0};
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        const char *next = eol ? eol + 1 : p + strlen(p);
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        const char *open = !strncmp(q, ".file", 5) && (q[5] == ' ' || q[5] == '\t') ? memchr(q, '"', (size_t)(next - q)) : NULL;
        if (!open) {
            str_putn(&out, p, (size_t)(next - p));
            p = next;
            continue;
        }
        str_putn(&out, p, (size_t)(open + 1 - p));
        const char *c = open + 1;
        for (; c < next && *c != '"'; c++) {
            if (*c == '\\' && c + 1 < next && c[1] == '"') {
                str_puts(&out, "\\042");
                c++;
            } else if (*c == '\\' && c + 1 < next) {
                str_putn(&out, c, 2);
                c++;
            } else {
                str_putn(&out, c, 1);
            }
        }
        str_putn(&out, c, (size_t)(next - c));
        p = next;
    }
    return str_take(&out);
}

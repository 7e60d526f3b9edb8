/* lang.h - the front end: .tile source -> Tile IR (no layouts yet).
 *
 * lang_compile() lexes, parses and checks a file and every file it imports,
 * folds compile-time values, inlines device functions and emits one Func per
 * kernel (or only `kernel_name`).  All memory comes from the arena; every
 * problem becomes a located diagnostic in `d`, and the function returns NULL
 * when there was any error.  Never aborts on user input. */
#ifndef TILE_LANG_H
#define TILE_LANG_H

#include "../lower/tir.h"

typedef struct LangDefine {
    const char *name;  /* const parameter, file-level const, num_warps or num_stages */
    const char *value; /* literal text: "64", "1.5", "true" */
} LangDefine;

typedef struct LangOptions {
    const char *const *include_dirs; /* searched after the importing file's folder; NULL-terminated, may be NULL */
    const LangDefine *defines;
    int ndefines;
    const char *kernel_name; /* NULL: every kernel of the file */
} LangOptions;

/* `src` must outlive the module (the caller keeps it; imports are read into the arena). */
Module *lang_compile(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d);

#endif

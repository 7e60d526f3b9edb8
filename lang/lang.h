/* lang.h - the front end: .tile source -> Tile IR (no layouts yet).
 *
 * lang_compile() lexes, parses and checks a file and every file it imports,
 * folds compile-time values, inlines device functions and emits one Func per
 * kernel (or only `kernel_name`).  All memory comes from the arena; every
 * problem becomes a located diagnostic in `d`, and the function returns NULL
 * when there was any error.  Never aborts on user input.
 *
 * A define must name a const parameter of a kernel being compiled (every
 * kernel of the main file, or only `kernel_name`), a file-level const (of
 * the main file or an import), num_warps, num_stages, warp_specialize, pingpong or overlap; any other name is an
 * error that lists the valid names and sets *opt->bad_define. */
#ifndef TILE_LANG_H
#define TILE_LANG_H

#include "../lower/tir.h"

typedef struct LangDefine {
    const char *name;  /* const parameter, file-level const, num_warps, num_stages, warp_specialize, pingpong or overlap */
    const char *value; /* literal text: "64", "1.5", "true" */
} LangDefine;

typedef struct LangOptions {
    const char *const *include_dirs; /* searched after the importing file's folder; NULL-terminated, may be NULL */
    const char *const *stdlib_dirs;  /* the standard library's folders, searched last; NULL-terminated, may be NULL */
    const LangDefine *defines;
    int ndefines;
    const char *kernel_name; /* NULL: every kernel of the file */
    bool *bad_define;        /* optional out: set when a define names nothing it could set, or its value is wrong
                                for what it sets (the caller's usage error, not an error in the source) */
    bool device_asserts;     /* compile device_assert (else it compiles to nothing, as C's NDEBUG) */
    int num_sms;             /* num_sms(): the device's multiprocessor count */
    const char *arch;        /* the target compiled for ("sm_90a"; NULL: the default): cuda_capability_geq() */
    const char *const *none_args; /* run-time pointer parameters passed as None (Triton's None argument): the
                                     name is None in the body, the parameter stays in the signature, unused */
    int nnone_args;
    const SrcFile *const **files_read; /* optional out: the files lang_compile read (the main file first, in a's
                                          memory): what a compile-cache key must describe, not a read before or after */
    int *nfiles_read;
} LangOptions;

/* `src` must outlive the module (the caller keeps it; imports are read into the arena). */
Module *lang_compile(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d);

/* The file and every file it imports, resolved as lang_compile resolves
 * them (the main file first); for compile-cache keys.  Parse errors go to d. */
int lang_source_files(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d, const SrcFile ***out);

/* One top-level declaration of a file, for outlines. */
typedef enum LangDeclKind { LANG_DECL_IMPORT, LANG_DECL_CONST, LANG_DECL_FN, LANG_DECL_KERNEL } LangDeclKind;
typedef struct LangDecl {
    LangDeclKind kind;
    const char *name; /* LANG_DECL_IMPORT: the decoded path string */
    Loc loc;          /* the name (an import's string) */
} LangDecl;

/* Parse `src` alone (no imports, no IR) and return its well-formed top-level
 * declarations in order in *out (arena); syntax errors go to d. */
int lang_list_decls(Arena *a, const SrcFile *src, Diag *d, LangDecl **out);

/* A kernel's tuning space: each `@config(NAME=VALUE, ...)` as define
 * strings "NAME=VALUE", and the `@tune_key(ARG, ...)` argument names.
 * Parses `src` alone (no imports); false with a located diagnostic when the
 * kernel is missing or an attribute is malformed (values must be literals). */
typedef struct LangTuning {
    int nconfigs;
    const char ***configs; /* each NULL-terminated */
    int nkeys;
    const char **keys;
} LangTuning;
bool lang_kernel_tuning(Arena *a, const SrcFile *src, const char *kernel, Diag *d, LangTuning *out);

#endif

/* lang.c - the front-end driver: imports, search path, then generation.
 *
 *   1. parse the main file;
 *   2. for each `import "x.tile"` (breadth-first, each file once, by
 *      resolved path): look in the importing file's folder, then each of
 *      opt->include_dirs, then each of opt->stdlib_dirs (the caller knows
 *      where the standard library is: jit/compile.c asks the runtime); read
 *      it into the arena and parse it; then (2b) a call of a function that
 *      no loaded file defines and no built-in is imports the standard-library
 *      file that defines it (unless that file shares a name with a loaded
 *      one), and its own imports follow;
 *   3. if there was any error so far, stop: generation only sees complete
 *      syntax trees;
 *   4. check that every define names something it can set: a const
 *      parameter of a kernel being compiled, a file-level const, num_warps
 *      or num_stages (an unknown name is a usage error, reported with the
 *      valid names, so a typo in -D is not silently ignored);
 *   5. gen_module() folds constants, inlines functions and emits one Func
 *      per kernel of the main file (imported files contribute constants and
 *      functions only).  Returns NULL when any diagnostic is an error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ast.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

enum { LANG_MAX_FILES = 256 };

static char *dir_of(Arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return arena_strdup(a, ".");
    return arena_strndup(a, path, (size_t)(slash - path));
}

/* Read `dir/name`; on success fill *path with its canonical path.  A file
 * that exists but cannot be a source (not a regular file, over the size
 * cap, unreadable) sets *err; a missing one leaves it 0. */
static char *try_read(Arena *a, const char *dir, const char *name, size_t *len, char **path, int *err) {
    if (*err) return NULL;
    char *p = name[0] == '/' ? arena_strdup(a, name) : arena_printf(a, "%s/%s", dir, name);
    char *text = read_source(p, len);
    if (!text) {
        if (errno != ENOENT && errno != ENOTDIR) *err = errno;
        return NULL;
    }
    char buf[PATH_MAX];
    *path = realpath(p, buf) ? arena_strdup(a, buf) : p;
    return text;
}

/* ---- implicit imports of the standard library (step 2b) ---- */
typedef struct Names {
    const char **v;
    int n, cap;
    NameMap seen;
} Names;

/* The names called (`name(...)`) anywhere in n. */
static void called_names(Arena *a, const Node *n, Names *out) {
    if (!n) return;
    if (n->kind == N_CALL && n->name) {
        if (!namemap_get(&out->seen, n->name)) {
            namemap_put(a, &out->seen, n->name, (void *)n);
            if (out->n == out->cap) {
                int nc = out->cap ? 2 * out->cap : 32;
                out->v = arena_grow(a, out->v, sizeof(char *) * (size_t)out->cap, sizeof(char *) * (size_t)nc);
                out->cap = nc;
            }
            out->v[out->n++] = n->name;
        }
    }
    called_names(a, n->lhs, out);
    called_names(a, n->rhs, out);
    called_names(a, n->cond, out);
    called_names(a, n->then, out);
    called_names(a, n->els, out);
    for (int i = 0; i < n->nkids; i++) called_names(a, n->kids[i], out);
}

/* The functions and consts the files define. */
static NameMap defined_in(Arena *a, FileAst **files, int nfiles) {
    NameMap m = {0};
    for (int fi = 0; fi < nfiles; fi++)
        for (int i = 0; i < files[fi]->ndecls; i++) {
            const Decl *dc = files[fi]->decls[i];
            if ((dc->kind == D_FN || dc->kind == D_CONST) && dc->name) namemap_put(a, &m, dc->name, (void *)dc);
        }
    return m;
}

const char *lang_stdlib_defining(Arena *a, const LangOptions *opt, const char *name) {
    char want[160];
    int wl = snprintf(want, sizeof want, "fn %s(", name);
    if (wl <= 0 || (size_t)wl >= sizeof want) return NULL;
    for (int k = 0; opt->stdlib_dirs && opt->stdlib_dirs[k]; k++) {
        DIR *dir = opendir(opt->stdlib_dirs[k]);
        if (!dir) continue;
        char *found = NULL;
        for (struct dirent *e; !found && (e = readdir(dir));) {
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".tile")) continue;
            char *path = arena_printf(a, "%s/%s", opt->stdlib_dirs[k], e->d_name);
            char *text = read_source(path, &len);
            for (const char *p = text; p && !found && (p = strstr(p, want)); p++)
                if (p == text || p[-1] == '\n') found = path;
            free(text);
        }
        closedir(dir);
        if (found) return found;
    }
    return NULL;
}

/* A call of a function that no loaded file defines and no built-in is, which a standard-library file defines:
 * that file is imported as if the main file said so (Triton's tl.cdiv, tl.softmax, tl.rand are there without an
 * import).  A name the file shares with the program is the program's own in the program's code and the file's
 * own in the file's (gen_find_global).  True when a file was added. */
static bool implicit_imports(Arena *a, const LangOptions *opt, FileAst **files, const char **paths, int *nfiles) {
    Names called = {0};
    for (int fi = 0; fi < *nfiles; fi++)
        for (int i = 0; i < files[fi]->ndecls; i++) {
            const Decl *dc = files[fi]->decls[i];
            called_names(a, dc->body, &called);
            called_names(a, dc->value, &called);
            for (int p = 0; p < dc->nparams; p++) called_names(a, dc->params[p].def, &called);
        }
    bool added = false;
    NameMap defined = defined_in(a, files, *nfiles);
    for (int i = 0; i < called.n && *nfiles < LANG_MAX_FILES; i++) {
        if (builtin_exists(called.v[i]) || namemap_get(&defined, called.v[i])) continue;
        const char *path = lang_stdlib_defining(a, opt, called.v[i]);
        char buf[PATH_MAX];
        if (!path) continue;
        if (realpath(path, buf)) path = arena_strdup(a, buf);
        bool seen = false;
        for (int k = 0; k < *nfiles && !seen; k++) seen = !strcmp(paths[k], path);
        if (seen) continue;
        size_t len;
        char *text = read_source(path, &len);
        if (!text) continue;
        SrcFile *s = ARENA_NEW(a, SrcFile);
        s->name = path;
        s->text = arena_strndup(a, text, len);
        s->len = len;
        free(text);
        Diag scratch;
        diag_init(&scratch);
        FileAst *f = parse_file(a, s, &scratch);
        bool broken = scratch.nerrors > 0;
        diag_free(&scratch);
        if (broken) continue;
        f->stdlib = true; /* the program's own names shadow the file's in the program (gen_find_global) */
        paths[*nfiles] = path;
        files[(*nfiles)++] = f;
        for (int k = 0; k < f->ndecls; k++)
            if ((f->decls[k]->kind == D_FN || f->decls[k]->kind == D_CONST) && f->decls[k]->name)
                namemap_put(a, &defined, f->decls[k]->name, f->decls[k]);
        added = true;
    }
    return added;
}

/* Step 2: the imports of files[*fi ..], breadth-first (each file once, by resolved path); the files they bring
 * are appended and read in turn. */
static void load_imports(Arena *a, const LangOptions *opt, Diag *d, FileAst **files, const char **paths, int *nfiles, int *fi) {
    for (; *fi < *nfiles; (*fi)++) {
        FileAst *f = files[*fi];
        const char *here = dir_of(a, f->src->name ? f->src->name : ".");
        for (int i = 0; i < f->ndecls; i++) {
            const Decl *dc = f->decls[i];
            if (dc->kind != D_IMPORT || !dc->name) continue;
            size_t len = 0;
            int err = 0;
            char *path = NULL, *text = try_read(a, here, dc->name, &len, &path, &err);
            for (int k = 0; !text && opt->include_dirs && opt->include_dirs[k]; k++)
                text = try_read(a, opt->include_dirs[k], dc->name, &len, &path, &err);
            bool lib = false;
            for (int k = 0; !text && opt->stdlib_dirs && opt->stdlib_dirs[k]; k++)
                lib = (text = try_read(a, opt->stdlib_dirs[k], dc->name, &len, &path, &err)) != NULL;
            if (!text && err) {
                diag_error(d, dc->loc, "cannot import '%s': %s", dc->name, source_error(err));
                continue;
            }
            if (!text) {
                diag_error(d, dc->loc, "cannot find imported file '%s'", dc->name);
                continue;
            }
            bool seen = false;
            for (int k = 0; k < *nfiles && !seen; k++) seen = !strcmp(paths[k], path);
            if (seen) {
                free(text);
                continue;
            }
            if (*nfiles == LANG_MAX_FILES) {
                free(text);
                diag_error(d, dc->loc, "too many imported files (more than %d)", LANG_MAX_FILES);
                continue;
            }
            SrcFile *s = ARENA_NEW(a, SrcFile);
            s->name = path;
            s->text = arena_strndup(a, text, len);
            s->len = len;
            free(text);
            paths[*nfiles] = path;
            files[*nfiles] = parse_file(a, s, d);
            files[(*nfiles)++]->stdlib = lib;
        }
    }
}

/* Parse src and every file it imports (steps 1, 2 and 2b). */
static int load_files(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d, FileAst ***out) {
    FileAst **files = ARENA_ARRAY(a, FileAst *, LANG_MAX_FILES);
    const char **paths = ARENA_ARRAY(a, const char *, LANG_MAX_FILES);
    int nfiles = 0, fi = 0;
    files[nfiles] = parse_file(a, src, d);
    char buf[PATH_MAX];
    paths[nfiles++] = src->name && realpath(src->name, buf) ? arena_strdup(a, buf) : (src->name ? src->name : "<input>");
    do {
        load_imports(a, opt, d, files, paths, &nfiles, &fi);
    } while (d->nerrors == d->nspelled && implicit_imports(a, opt, files, paths, &nfiles)); /* then the new files' own imports */
    *out = files;
    return nfiles;
}

/* The launch metadata a define may set besides const parameters and consts. */
static const char *const launch_defines[] = {"num_warps", "num_stages", "warp_specialize", "pingpong", "overlap"};

static bool define_settable(FileAst **files, int nfiles, const char *name) {
    for (size_t i = 0; i < sizeof launch_defines / sizeof launch_defines[0]; i++)
        if (!strcmp(name, launch_defines[i])) return true;
    for (int fi = 0; fi < nfiles; fi++)
        for (int i = 0; i < files[fi]->ndecls; i++) {
            const Decl *dc = files[fi]->decls[i];
            if (dc->kind == D_CONST && dc->name && !strcmp(dc->name, name)) return true;
            if (fi != 0 || dc->kind != D_KERNEL) continue;
            for (int p = 0; p < dc->nparams; p++)
                if (dc->params[p].is_const && !strcmp(dc->params[p].name, name)) return true;
        }
    return false;
}

/* Add name to the list unless it is there: kernels often share a const parameter (BLOCK). */
static void add_name(const char **names, int *n, const char *name) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], name)) return;
    names[(*n)++] = name;
}

/* Step 4.  A define names a const parameter of some kernel of the main file
 * (the file is the defines' namespace: with a kernel selected, a define
 * meant for another kernel of the file is allowed, so one set of defines
 * serves every kernel compiled from it, as `tile aot` does), a const of the
 * file or an import, or the launch metadata.  Valid names are listed in
 * order: the kernels' const parameters, the main file's consts, then the
 * launch metadata (an import's consts are accepted but not listed: the
 * standard library's would drown the list). */
static void check_defines(Arena *a, FileAst **files, int nfiles, const LangOptions *opt, Diag *d) {
    const FileAst *main = files[0];
    const char *file = main->src->name ? main->src->name : "<input>";
    const char *slash = strrchr(file, '/');
    if (slash) file = slash + 1;
    for (int k = 0; k < opt->ndefines; k++) {
        const char *name = opt->defines[k].name;
        if (!name || define_settable(files, nfiles, name)) continue;
        int cap = 2, n = 0;
        for (int i = 0; i < main->ndecls; i++) cap += 1 + main->decls[i]->nparams;
        const char **names = ARENA_ARRAY(a, const char *, cap);
        for (int i = 0; i < main->ndecls; i++) {
            const Decl *dc = main->decls[i];
            if (dc->kind != D_KERNEL) continue;
            for (int p = 0; p < dc->nparams; p++)
                if (dc->params[p].is_const) add_name(names, &n, dc->params[p].name);
        }
        for (int i = 0; i < main->ndecls; i++)
            if (main->decls[i]->kind == D_CONST && main->decls[i]->name) add_name(names, &n, main->decls[i]->name);
        for (size_t i = 0; i < sizeof launch_defines / sizeof launch_defines[0]; i++) add_name(names, &n, launch_defines[i]);
        Str valid = {0};
        for (int i = 0; i < n; i++) str_printf(&valid, "%s%s", i ? ", " : "", names[i]);
        diag_error(d, (Loc){0}, "-D %s: no kernel of %s has a const parameter %s (valid: %s)", name, file, name, valid.buf);
        str_free(&valid);
        if (opt->bad_define) *opt->bad_define = true;
    }
}

/* The sources of files, in a. */
static const SrcFile **sources_of(Arena *a, FileAst **files, int nfiles) {
    const SrcFile **v = ARENA_ARRAY(a, const SrcFile *, nfiles ? nfiles : 1);
    for (int i = 0; i < nfiles; i++) v[i] = files[i]->src;
    return v;
}

Module *lang_compile(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d) {
    LangOptions none = {0};
    if (!opt) opt = &none;
    FileAst **files;
    int nfiles = load_files(a, src, opt, d, &files);
    if (opt->files_read) *opt->files_read = sources_of(a, files, nfiles), *opt->nfiles_read = nfiles;
    /* past errors of another language's spelling alone, the file reads as meant: its names and types are checked too */
    if (d->nerrors > d->nspelled) return NULL;
    check_defines(a, files, nfiles, opt, d);
    if (d->nerrors > d->nspelled) return NULL;
    Module *m = gen_module(a, files, nfiles, opt, d);
    for (int i = 0; opt->bad_define && i < d->n; i++) /* an error in a define's value (gen_module's "<-D NAME>" source) */
        if (d->msgs[i].level == DIAG_ERROR && d->msgs[i].loc.file && d->msgs[i].loc.file->name &&
            !strncmp(d->msgs[i].loc.file->name, "<-D ", 4))
            *opt->bad_define = true;
    return m;
}

int lang_source_files(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d, const SrcFile ***out) {
    LangOptions none = {0};
    FileAst **files;
    int nfiles = load_files(a, src, opt ? opt : &none, d, &files);
    *out = sources_of(a, files, nfiles);
    return nfiles;
}

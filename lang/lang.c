/* lang.c - the front-end driver: imports, search path, then generation.
 *
 *   1. parse the main file;
 *   2. for each `import "x.tile"` (breadth-first, each file once, by
 *      resolved path): look in the importing file's folder, then each of
 *      opt->include_dirs, then the standard library folder; read it into the
 *      arena and parse it;
 *   3. if there was any error so far, stop: generation only sees complete
 *      syntax trees;
 *   4. gen_module() folds constants, inlines functions and emits one Func
 *      per kernel of the main file (imported files contribute constants and
 *      functions only).  Returns NULL when any diagnostic is an error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ast.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

static const char *stdlib_dir(void) {
#ifdef TILE_SOURCE_DIR
    return TILE_SOURCE_DIR "/stdlib";
#else
    return NULL;
#endif
}

/* Parse src and, breadth-first, every file it imports (steps 1 and 2). */
static int load_files(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d, FileAst ***out) {
    FileAst **files = ARENA_ARRAY(a, FileAst *, LANG_MAX_FILES);
    const char **paths = ARENA_ARRAY(a, const char *, LANG_MAX_FILES);
    int nfiles = 0;
    files[nfiles] = parse_file(a, src, d);
    char buf[PATH_MAX];
    paths[nfiles++] = src->name && realpath(src->name, buf) ? arena_strdup(a, buf) : (src->name ? src->name : "<input>");
    for (int fi = 0; fi < nfiles; fi++) {
        FileAst *f = files[fi];
        const char *here = dir_of(a, f->src->name ? f->src->name : ".");
        for (int i = 0; i < f->ndecls; i++) {
            const Decl *dc = f->decls[i];
            if (dc->kind != D_IMPORT || !dc->name) continue;
            size_t len = 0;
            int err = 0;
            char *path = NULL, *text = try_read(a, here, dc->name, &len, &path, &err);
            for (int k = 0; !text && opt->include_dirs && opt->include_dirs[k]; k++)
                text = try_read(a, opt->include_dirs[k], dc->name, &len, &path, &err);
            const char *sd = stdlib_dir();
            if (!text && sd) text = try_read(a, sd, dc->name, &len, &path, &err);
#ifdef TILE_STDLIB_INSTALL_DIR
            if (!text) text = try_read(a, TILE_STDLIB_INSTALL_DIR, dc->name, &len, &path, &err);
#endif
            if (!text && err) {
                diag_error(d, dc->loc, "cannot import '%s': %s", dc->name, source_error(err));
                continue;
            }
            if (!text) {
                diag_error(d, dc->loc, "cannot find imported file '%s'", dc->name);
                continue;
            }
            bool seen = false;
            for (int k = 0; k < nfiles && !seen; k++) seen = !strcmp(paths[k], path);
            if (seen) {
                free(text);
                continue;
            }
            if (nfiles == LANG_MAX_FILES) {
                free(text);
                diag_error(d, dc->loc, "too many imported files (more than %d)", LANG_MAX_FILES);
                continue;
            }
            SrcFile *s = ARENA_NEW(a, SrcFile);
            s->name = path;
            s->text = arena_strndup(a, text, len);
            s->len = len;
            free(text);
            paths[nfiles] = path;
            files[nfiles++] = parse_file(a, s, d);
        }
    }
    *out = files;
    return nfiles;
}

Module *lang_compile(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d) {
    LangOptions none = {0};
    if (!opt) opt = &none;
    FileAst **files;
    int nfiles = load_files(a, src, opt, d, &files);
    if (d->nerrors) return NULL;
    return gen_module(a, files, nfiles, opt, d);
}

int lang_source_files(Arena *a, const SrcFile *src, const LangOptions *opt, Diag *d, const SrcFile ***out) {
    LangOptions none = {0};
    FileAst **files;
    int nfiles = load_files(a, src, opt ? opt : &none, d, &files);
    const SrcFile **v = ARENA_ARRAY(a, const SrcFile *, nfiles ? nfiles : 1);
    for (int i = 0; i < nfiles; i++) v[i] = files[i]->src;
    *out = v;
    return nfiles;
}

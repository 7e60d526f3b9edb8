/* datadir.c - where the standard library and the shipped kernels are.
 *
 * The one place that decides it; the compiler (jit/compile.c passes the
 * stdlib folders to lang/ as LangOptions.stdlib_dirs) and the shipped
 * kernels (kernels/shipped.c, kernels/gemm/gemm.c) only ask.  A data folder
 * ("root") holds stdlib/ and kernels/, as <prefix>/share/tile does after
 * `cmake --install` and as the source tree does.  The roots, in search order:
 *   1. TILE_DATA_DIR, when set (read by options.c, the reader of the
 *      environment);
 *   2. find this library's own file: dladdr on a function of it, then
 *      realpath (a symlinked library counts where its file is);
 *   3. if <its folder>/TILE_DATADIR_FROM_LIBDIR/tile is a folder, the
 *      library is an installed copy: that folder is the root, wherever the
 *      prefix has been moved, and the source tree is never looked at;
 *   4. otherwise (a build tree, or a program linked with the static
 *      library) the source tree it was built from, TILE_SOURCE_DIR.
 * TILE_DATADIR_FROM_LIBDIR is CMAKE_INSTALL_DATADIR relative to
 * CMAKE_INSTALL_LIBDIR ("../share" by default), computed by CMakeLists.txt.
 *
 * Global state: one RtDataDirs, filled once under pthread_once and then only
 * read; its strings live as long as the process. */
#include "runtime/rt.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TILE_SOURCE_DIR
#error "TILE_SOURCE_DIR must be defined (CMakeLists.txt)"
#endif
#ifndef TILE_DATADIR_FROM_LIBDIR
#error "TILE_DATADIR_FROM_LIBDIR must be defined (CMakeLists.txt)"
#endif

static RtDataDirs dirs;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Steps 2 and 3: <library folder>/TILE_DATADIR_FROM_LIBDIR/tile, canonical,
 * when it is a folder; NULL otherwise. */
static char *installed_root(void) {
    Dl_info info;
    char lib[PATH_MAX], root[PATH_MAX];
    if (!dladdr((void *)rt_data_dirs, &info) || !info.dli_fname || !strchr(info.dli_fname, '/')) return NULL;
    if (!realpath(info.dli_fname, lib)) return NULL;
    char *slash = strrchr(lib, '/');
    *slash = '\0';
    Str s = {0};
    str_printf(&s, "%s/%s/tile", lib[0] ? lib : "/", TILE_DATADIR_FROM_LIBDIR);
    struct stat st;
    char *r = stat(s.buf, &st) == 0 && S_ISDIR(st.st_mode) && realpath(s.buf, root) ? strdup(root) : NULL;
    str_free(&s);
    return r;
}

static void add_root(char *root) {
    if (!root) return;
    Str s = {0};
    str_printf(&s, "%s/stdlib", root);
    dirs.root[dirs.n] = root;
    dirs.stdlib[dirs.n++] = str_take(&s);
}

static void load(void) {
    const char *env = rt_options()->data_dir;
    if (env) add_root(strdup(env));
    char *inst = installed_root();
    add_root(inst ? inst : strdup(TILE_SOURCE_DIR));
    dirs.installed = inst != NULL;
}

const RtDataDirs *rt_data_dirs(void) {
    pthread_once(&once, load);
    return &dirs;
}

const char *rt_data_path(const char *sub, const char *file, char *buf, size_t n) {
    const RtDataDirs *d = rt_data_dirs();
    if (!d->n) return NULL; /* out of memory while filling it */
    for (int i = 0; i < d->n; i++) {
        int k = snprintf(buf, n, "%s/%s/%s", d->root[i], sub, file);
        if (k < 0 || (size_t)k >= n) return NULL;
        if (access(buf, R_OK) == 0) return buf;
    }
    return buf; /* in the last root: the one a missing file is reported in */
}

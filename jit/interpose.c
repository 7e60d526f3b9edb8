/* interpose.c - a warning when another copy of the runtime answers libtile's calls.
 *
 * libtile_rt.so and libtile.so both hold the runtime (contexts, memory, modules, launches: each copy with its
 * own registry of live handles and its own per-thread messages) and export the same tile_* names for it.  A
 * program that links both (`pkg-config --libs tile-rt tile`, or a host whose libtile_rt was loaded before a
 * plugin's libtile) has each shared name bound to the first library loaded: a context that libtile_rt's
 * tile_context_create made reaches libtile's tile_module_load_* or tile_gemm, whose registry never saw it, and
 * the call fails with its message in libtile's store while tile_last_error reads libtile_rt's: an empty
 * message.  So when libtile is loaded (a constructor; every library the program needs is mapped by then):
 *   1. look tile_last_error up in the process's global scope (dlsym on dlopen(NULL)'s handle), where the
 *      program's calls and libtile's own calls of its exported names are bound;
 *   2. when another object than this one defines it (dladdr), say once on stderr which, and what to link.
 * Linked statically (the tests' tile_internal), alone, or loaded with RTLD_LOCAL and no runtime in the global
 * scope, the lookup finds this object or nothing: no warning. */
#include <dlfcn.h> /* dladdr: _GNU_SOURCE, as every file is built */
#include <stdbool.h>
#include <stdio.h>

static const char here; /* an address in this object */

__attribute__((constructor)) static void jit_interpose_check(void) {
    /* the program's handle: its lookups search the global scope as the program's own calls are bound (and, unlike
     * RTLD_DEFAULT, do not depend on the caller's address, which a tail call would make ld.so's) */
    void *program = dlopen(NULL, RTLD_LAZY);
    if (!program) return;
    void *found = dlsym(program, "tile_last_error");
    Dl_info mine, theirs;
    bool other = found && dladdr(&here, &mine) && dladdr(found, &theirs) && theirs.dli_fbase != mine.dli_fbase;
    dlclose(program);
    if (!other) return;
    fprintf(stderr,
            "tile: warning: %s answers the tile_* calls that %s also defines (both are loaded, it first), so handles "
            "made by one are unknown to the other: link libtile alone (it holds the runtime too), or libtile_rt alone\n",
            theirs.dli_fname ? theirs.dli_fname : "another library", mine.dli_fname ? mine.dli_fname : "libtile");
}

/* ptx_check.c - load PTX files into the emulator and say, one line a file, whether it took each (not a test).
 *
 * scripts/ptx_diff.py runs it on a batch of mutated PTX files and compares the answers with ptxas's.  One
 * emulator context (plain `emu`, which loads PTX of any .target, as a GPU of the newest target would) loads
 * each file named on standard input (one path a line) through the public API (so it builds against any
 * libtile_rt, an older one's too, to compare) and prints
 *
 *   ok PATH                   loaded
 *   refused PATH: MESSAGE     refused at load (the message on one line)
 *
 * Run: ls *.ptx | build/bench/ptx_check */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tile/tile.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

int main(void) {
    tile_context *ctx = NULL;
    if (tile_context_create("emu", &ctx) != TILE_OK) {
        fprintf(stderr, "ptx_check: cannot open the emulator: %s\n", tile_last_error(NULL));
        return 1;
    }
    char path[4096];
    while (fgets(path, sizeof path, stdin)) {
        path[strcspn(path, "\r\n")] = 0;
        if (!*path) continue;
        char *text = slurp(path);
        if (!text) {
            printf("refused %s: cannot read the file\n", path);
            continue;
        }
        tile_module *m = NULL;
        if (tile_module_load_ptx(ctx, text, &m) == TILE_OK) {
            printf("ok %s\n", path);
            tile_module_unload(m);
        } else {
            const char *msg = tile_last_error(ctx);
            printf("refused %s: ", path);
            for (const char *p = msg ? msg : ""; *p; p++) putchar(*p == '\n' ? ' ' : *p);
            putchar('\n');
        }
        fflush(stdout);
        free(text);
    }
    tile_context_destroy(ctx);
    return 0;
}

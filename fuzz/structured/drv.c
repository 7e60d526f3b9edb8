/* drv.c - the driver of the structured fuzzer (fuzz/structured/mutate.py; not
 * part of CI).  One input per process, so a crash names its input:
 *
 *   drv tile FILE.tile [PTXDIR]   compile for sm_80, sm_89 and sm_90a; each must
 *                                 succeed or fail with a located error and no
 *                                 internal one; when it compiles, run every
 *                                 kernel on emu:sm_80 and emu:sm_90a (and write
 *                                 the sm_80 PTX to PTXDIR/k.ptx)
 *   drv ptx FILE.ptx ARCH         load PTX on emu:ARCH and launch every entry
 *
 * Arguments: pointers get zeroed 1 MiB buffers ("**T": a buffer of pointers to
 * such buffers), integers 37, floats 1.5, by-value arrays zeros.  Each launch is
 * a 3x2 grid with a 5 s emulator timeout.  A finding prints "FINDING: ..." and
 * exits 70; sanitizer reports and crashes speak for themselves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    size_t n = fread(b, 1, (size_t)len, f);
    b[n] = 0;
    fclose(f);
    return b;
}

static int findings;
static void finding(const char *what, const char *detail) {
    printf("FINDING: %s\n%s\n", what, detail ? detail : "");
    findings++;
}

static const char *const internal_words[] = {"internal", "unreachable", "assert", "Assertion", "LLVM ERROR", "verif", "Broken module",
                                             "please report", "gave no reason", NULL};

/* The message's own lines: not the source lines a diagnostic quotes (indented), where a kernel's 'assert' is. */
static int in_own_line(const char *msg, const char *hit) {
    const char *l = hit;
    while (l > msg && l[-1] != '\n') l--;
    return *l != ' ';
}

static void check_message(const char *where, const char *msg) {
    if (!msg) return;
    for (int i = 0; internal_words[i]; i++)
        for (const char *h = strstr(msg, internal_words[i]); h; h = strstr(h + 1, internal_words[i]))
            if (in_own_line(msg, h) && !strstr(msg, "static_assert") && !strstr(msg, "device_assert") && !strstr(msg, "assume")) {
                char b[256];
                snprintf(b, sizeof b, "%s: message with '%s'", where, internal_words[i]);
                finding(b, msg);
                return;
            }
}

static int located(const char *diag) {
    for (const char *p = strstr(diag, ": error:"); p; p = strstr(p + 1, ": error:")) {
        const char *q = p;
        int colons = 0;
        while (q > diag && q[-1] != '\n') {
            q--;
            if (*q == ':') colons++;
        }
        if (colons >= 2) return 1;
    }
    return 0;
}

typedef struct Args {
    int n;
    void *vals[1024];
    unsigned char store[1024][64];
    tile_devptr bufs[4096];
    int nbufs;
} Args;

static tile_devptr new_buf(tile_context *ctx, Args *a) {
    tile_devptr p = 0;
    if (a->nbufs >= 4096 || tile_malloc(ctx, 1 << 20, &p) != TILE_OK) return 0;
    tile_memset(ctx, p, 0, 1 << 20);
    a->bufs[a->nbufs++] = p;
    return p;
}

/* Arguments from a signature: "*f32:16, **f16, i32=1" or raw PTX's "ptr, u32, f32, b8[24]". */
static void fill_args(tile_context *ctx, const char *sig, int nparams, Args *a) {
    memset(a, 0, sizeof *a);
    const char *s = sig ? sig : "";
    for (int i = 0; i < nparams && i < 1024; i++) {
        while (*s == ' ' || *s == ',') s++;
        const char *e = s;
        while (*e && *e != ',') e++;
        char t[64];
        size_t l = (size_t)(e - s) < sizeof t - 1 ? (size_t)(e - s) : sizeof t - 1;
        memcpy(t, s, l);
        t[l] = 0;
        s = e;
        unsigned char *v = a->store[i];
        a->vals[i] = v;
        if (strstr(t, "=None")) continue; /* zeros */
        if (!strncmp(t, "**", 2)) {
            tile_devptr tab = new_buf(ctx, a), ptrs[64];
            for (int j = 0; j < 64; j++) ptrs[j] = new_buf(ctx, a);
            if (tab) tile_memcpy_htod(ctx, tab, ptrs, sizeof ptrs);
            memcpy(v, &tab, 8);
        } else if (t[0] == '*' || !strncmp(t, "ptr", 3) || !strncmp(t, "u64", 3) || !strncmp(t, "b64", 3) ||
                   !strncmp(t, "s64", 3)) {
            tile_devptr p = new_buf(ctx, a);
            memcpy(v, &p, 8);
        } else if (strstr(t, "f32")) {
            float f = 1.5f;
            memcpy(v, &f, 4);
        } else if (strstr(t, "f64")) {
            double d = 1.5;
            memcpy(v, &d, 8);
        } else if (strstr(t, "f16") || strstr(t, "bf16")) {
            v[1] = 0x3e; /* f16 1.5 (bf16 ~0.19) */
        } else if (strstr(t, "b8[")) {
            /* zeros */
        } else if (strstr(t, "=1") || strstr(t, "i1") || strstr(t, "pred")) {
            v[0] = 1;
        } else {
            v[0] = 37;
        }
    }
    a->n = nparams;
}

static void free_args(tile_context *ctx, Args *a) {
    for (int i = 0; i < a->nbufs; i++) tile_free(ctx, a->bufs[i]);
}

static tile_context *open_ctx(const char *dev) {
    tile_context_options co = {.size = sizeof co, .device = dev, .no_disk_cache = 1, .emu_host_threads = 1, .emu_timeout_seconds = 5};
    tile_context *ctx = NULL;
    tile_status st = tile_context_create_ex(&co, &ctx);
    if (st != TILE_OK) {
        fprintf(stderr, "context %s: %s\n", dev, tile_last_error(NULL));
        exit(3);
    }
    return ctx;
}

static void launch_all(tile_context *ctx, tile_module *m, const char *const *names, int nnames, int raw) {
    for (int k = 0; k < nnames; k++) {
        tile_kernel *kern;
        if (tile_module_get_kernel(m, names[k], &kern) != TILE_OK) {
            check_message("get_kernel", tile_last_error(ctx));
            continue;
        }
        tile_kernel_attributes at;
        tile_kernel_get_attributes(kern, &at);
        Args *a = malloc(sizeof *a);
        fill_args(ctx, at.signature, at.num_params, a);
        tile_status st;
        if (raw && !at.block_threads) {
            tile_launch_options lo = {.size = sizeof lo, .block = {128, 1, 1}};
            st = tile_launch_ex(kern, (tile_dim3){3, 2, 1}, a->vals, NULL, &lo);
        } else
            st = tile_launch(kern, (tile_dim3){3, 2, 1}, a->vals, NULL);
        if (st == TILE_OK) st = tile_synchronize(ctx);
        const char *err = tile_last_error(ctx);
        printf("launch %s (%s): %s%s%.300s\n", names[k], at.signature, tile_status_string(st), st ? ": " : "", st ? err : "");
        if (st != TILE_OK) {
            check_message("launch", err);
            if (!err || !*err) finding("launch failed without a message", names[k]);
        }
        free_args(ctx, a);
        free(a);
    }
}

/* Entry names of a PTX text. */
static int ptx_entries(const char *ptx, char names[][256], int max) {
    int n = 0;
    for (const char *p = strstr(ptx, ".entry"); p && n < max; p = strstr(p + 1, ".entry")) {
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t') q++;
        size_t l = 0;
        while (q[l] && q[l] != '(' && q[l] != ' ' && q[l] != '\n' && l < 255) l++;
        if (!l) continue;
        memcpy(names[n], q, l);
        names[n][l] = 0;
        n++;
    }
    return n;
}

/* "ptx:12:" somewhere in msg */
static int has_ptx_line(const char *msg) {
    for (const char *p = strstr(msg, "ptx:"); p; p = strstr(p + 1, "ptx:")) {
        const char *q = p + 4;
        while (*q >= '0' && *q <= '9') q++;
        if (q > p + 4 && *q == ':') return 1;
    }
    return 0;
}

static int run_ptx(const char *path, const char *arch) {
    char *ptx = slurp(path);
    if (!ptx) return 2;
    char dev[64];
    snprintf(dev, sizeof dev, "emu:%s", arch);
    tile_context *ctx = open_ctx(dev);
    tile_module *m;
    tile_status st = tile_module_load_ptx(ctx, ptx, &m);
    if (st != TILE_OK) {
        const char *err = tile_last_error(ctx);
        printf("load: %s: %.400s\n", tile_status_string(st), err);
        check_message("ptx load", err);
        if (!err || !*err) finding("PTX refused without a message", "");
        else if (!strstr(err, "line") && !has_ptx_line(err)) finding("PTX refused without a line", err);
    } else {
        static char names[64][256];
        const char *np[64];
        int n = ptx_entries(ptx, names, 64);
        for (int i = 0; i < n; i++) np[i] = names[i];
        launch_all(ctx, m, np, n, 1);
        tile_module_unload(m);
    }
    tile_context_destroy(ctx);
    free(ptx);
    return findings ? 70 : 0;
}

static int run_tile(const char *path, const char *ptxdir) {
    char *src = slurp(path);
    if (!src) return 2;
    static const char *const archs[] = {"sm_80", "sm_89", "sm_90a"};
    int ok[3] = {0};
    for (int i = 0; i < 3; i++) {
        tile_compile_options o = {.size = sizeof o, .arch = archs[i]};
        tile_compiled c;
        tile_status st = tile_compile_source("in.tile", src, &o, &c);
        printf("%s: %s\n", archs[i], tile_status_string(st));
        if (st == TILE_OK) {
            ok[i] = 1;
            if (i == 0 && ptxdir && c.ptx) {
                char p[1024];
                snprintf(p, sizeof p, "%s/k.ptx", ptxdir);
                FILE *f = fopen(p, "w");
                if (f) fputs(c.ptx, f), fclose(f);
            }
        } else {
            printf("%.600s", c.diagnostics ? c.diagnostics : "");
            check_message(archs[i], c.diagnostics);
            if (st != TILE_ERROR_COMPILE) finding("status other than a compile error", tile_status_string(st));
            else if (!c.diagnostics || !located(c.diagnostics)) finding("compile error without a location", c.diagnostics);
        }
        if (i == 0 && st == TILE_OK) {
            /* run it: the kernels by name from the metadata */
            const char *names[256];
            int n = c.nkernels < 256 ? c.nkernels : 256;
            for (int k = 0; k < n; k++) names[k] = c.kernels[k].name;
            static const char *const devs[] = {"emu:sm_80", "emu:sm_90a"};
            for (int d = 0; d < 2; d++) {
                tile_context *ctx = open_ctx(devs[d]);
                tile_module *m;
                tile_compile_options lo = {.size = sizeof lo};
                tile_status ls = tile_module_load_source_ex(ctx, "in.tile", src, &lo, &m);
                if (ls != TILE_OK) {
                    const char *err = tile_last_error(ctx);
                    printf("%s load: %s: %.400s\n", devs[d], tile_status_string(ls), err);
                    check_message("load", err);
                } else {
                    launch_all(ctx, m, names, n, 0);
                    tile_module_unload(m);
                }
                tile_context_destroy(ctx);
            }
        }
        tile_compiled_free(&c);
    }
    if (ok[0] != ok[1]) finding("sm_80 and sm_89 disagree", "");
    free(src);
    return findings ? 70 : 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && !strcmp(argv[1], "tile")) return run_tile(argv[2], argc > 3 ? argv[3] : NULL);
    if (argc >= 4 && !strcmp(argv[1], "ptx")) return run_ptx(argv[2], argv[3]);
    fprintf(stderr, "usage: drv tile FILE.tile [PTXDIR] | drv ptx FILE.ptx ARCH\n");
    return 2;
}

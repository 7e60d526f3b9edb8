/* tile.c - the command-line tool.
 *
 *   tile compile FILE.tile [--kernel NAME] [--arch sm_80|sm_90a] [-D NAME=VALUE]...
 *                [--specialize ARG=1|16]... [--emit tir|llvm|ptx|cubin] [-o OUT]
 *                [--dump-after PASS|all] [--time-passes] [-I DIR]...
 *
 * Exit status: 0 success, 1 error in the source (diagnostics on stderr),
 * 2 usage error (including an unreadable input file), 3 internal or tool failure. */
#include "include/tile/tile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage_main =
    "usage: tile <command> [options]\n"
    "\n"
    "commands:\n"
    "  compile FILE.tile   compile kernels to Tile IR, LLVM IR, PTX or cubin\n"
    "\n"
    "Run 'tile compile --help' for the options of a command.\n";

static const char *usage_compile =
    "usage: tile compile FILE.tile [options]\n"
    "\n"
    "  --kernel NAME          compile only this kernel (default: every kernel, one module)\n"
    "  --arch sm_80|sm_90a    target (default sm_80)\n"
    "  -D NAME=VALUE          set a const parameter, file-level const, num_warps or num_stages\n"
    "  --specialize ARG=1|16  assume a run-time integer argument equals 1 or is divisible by 16\n"
    "  --no-align-ptrs        do not assume 16-byte aligned pointer arguments\n"
    "  -I DIR                 search DIR for imports\n"
    "  --emit tir|llvm|ptx|cubin   what to write (default ptx)\n"
    "  -o OUT                 output file (default: standard output; cubin needs -o)\n"
    "  --dump-after PASS|all  print the Tile IR after a pass (or 'frontend') to stderr\n"
    "  --time-passes          print the time of each stage to stderr\n"
    "  -v, --verbose          print kernel metadata (and ptxas -v with --emit cubin) to stderr\n"
    "\n"
    "passes: specialize canonicalize assign_layout remove_convert smem_alloc barrier\n"
    "exit status: 0 ok, 1 error in the source, 2 usage error, 3 internal or tool error\n";

#define MAX_LIST 256

static int usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "tile: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    fprintf(stderr, "Run 'tile compile --help' for usage.\n");
    return 2;
}

static int cmd_compile(int argc, char **argv) {
    const char *file = NULL, *out = NULL, *emit = "ptx";
    const char *defines[MAX_LIST + 1] = {0}, *specs[MAX_LIST + 1] = {0}, *incs[MAX_LIST + 1] = {0};
    int nd = 0, ns = 0, ni = 0, verbose = 0;
    tile_compile_options o = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define NEXT()                                                     \
    do {                                                           \
        if (i + 1 >= argc) return usage_error("missing value for", a); \
        val = argv[++i];                                           \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_compile, stdout);
            return 0;
        } else if (!strcmp(a, "--kernel")) {
            NEXT();
            o.kernel = val;
        } else if (!strcmp(a, "--arch")) {
            NEXT();
            if (strcmp(val, "sm_80") && strcmp(val, "sm_90a")) return usage_error("unknown --arch (expected sm_80 or sm_90a):", val);
            o.arch = val;
        } else if (!strncmp(a, "-D", 2)) {
            if (a[2]) val = a + 2;
            else NEXT();
            if (!strchr(val, '=') || val[0] == '=') return usage_error("-D expects NAME=VALUE, got", val);
            if (nd == MAX_LIST) return usage_error("too many -D options", NULL);
            defines[nd++] = val;
        } else if (!strncmp(a, "-I", 2)) {
            if (a[2]) val = a + 2;
            else NEXT();
            if (ni == MAX_LIST) return usage_error("too many -I options", NULL);
            incs[ni++] = val;
        } else if (!strcmp(a, "--specialize")) {
            NEXT();
            if (ns == MAX_LIST) return usage_error("too many --specialize options", NULL);
            specs[ns++] = val;
        } else if (!strcmp(a, "--no-align-ptrs")) {
            o.no_align_ptrs = 1;
        } else if (!strcmp(a, "--emit")) {
            NEXT();
            if (strcmp(val, "tir") && strcmp(val, "llvm") && strcmp(val, "ptx") && strcmp(val, "cubin"))
                return usage_error("unknown --emit (expected tir, llvm, ptx or cubin):", val);
            emit = val;
        } else if (!strcmp(a, "-o")) {
            NEXT();
            out = val;
        } else if (!strcmp(a, "--dump-after")) {
            NEXT();
            o.dump_after = val;
        } else if (!strcmp(a, "--time-passes")) {
            o.time_passes = 1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option", a);
        } else {
            if (file) return usage_error("more than one input file:", a);
            file = a;
        }
#undef NEXT
    }
    if (!file) return usage_error("no input file", NULL);
    if (!strcmp(emit, "cubin") && !out) return usage_error("--emit cubin needs -o FILE", NULL);
    o.defines = defines;
    o.specialize = specs;
    o.include_dirs = incs;
    o.want_llvm_ir = !strcmp(emit, "llvm");
    o.want_cubin = !strcmp(emit, "cubin");
    tile_compiled c;
    tile_status st = tile_compile_file(file, &o, &c);
    if (c.diagnostics && *c.diagnostics) fputs(c.diagnostics, stderr);
    if (c.dump) fputs(c.dump, stderr);
    if (c.timing) fputs(c.timing, stderr);
    int rc = 0;
    if (st == TILE_ERROR_COMPILE) rc = 1;
    else if (st == TILE_ERROR_INVALID_VALUE || st == TILE_ERROR_IO) rc = 2;
    else if (st != TILE_OK) rc = 3;
    if (st == TILE_OK && o.want_cubin && c.ptxas_missing) {
        fprintf(stderr, "tile: ptxas not found: cannot emit cubin (install the CUDA toolkit or pass its path)\n");
        rc = 3;
    }
    if (rc == 0) {
        const char *text = !strcmp(emit, "tir") ? c.tir : !strcmp(emit, "llvm") ? c.llvm_ir : c.ptx;
        const void *data = text;
        size_t n = text ? strlen(text) : 0;
        if (o.want_cubin) {
            data = c.cubin;
            n = c.cubin_size;
        }
        FILE *f = out ? fopen(out, "wb") : stdout;
        if (!f || fwrite(data, 1, n, f) != n) {
            fprintf(stderr, "tile: cannot write %s\n", out ? out : "standard output");
            rc = 3;
        }
        if (f && out) fclose(f);
        if (verbose) {
            for (int k = 0; k < c.nkernels; k++) {
                tile_kernel_info *ki = &c.kernels[k];
                fprintf(stderr, "kernel %s(%s) num_warps=%d num_stages=%d smem=%d", ki->name, ki->signature, ki->num_warps,
                        ki->num_stages, ki->smem_bytes);
                if (ki->registers >= 0) fprintf(stderr, " registers=%d spill_bytes=%d", ki->registers, ki->spill_bytes);
                fputc('\n', stderr);
            }
            if (c.ptxas_log) fputs(c.ptxas_log, stderr);
        }
    }
    tile_compiled_free(&c);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "compile")) return cmd_compile(argc - 2, argv + 2);
    fprintf(stderr, "tile: unknown command '%s'\n", argv[1]);
    fputs(usage_main, stderr);
    return 2;
}

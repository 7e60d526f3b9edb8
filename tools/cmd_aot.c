/* cmd_aot.c - `tile aot FILE.tile --kernel NAME ... -o OUT`: kernels exported
 * as C sources (OUT.h, OUT.c) with their PTX embedded, through
 * tile_aot_export.  -o is a path stem, so '-' (standard output) is refused; so is FILE '-' (standard
 * input): the library takes the input by its path.
 * --prefix P exports each --kernel NAME given without a C name as "NAME=PNAME". */
#include "tools/cli.h"
#include "tools/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: tile aot FILE.tile --kernel NAME[=CNAME] [--kernel NAME[=CNAME]]... [--prefix P] [--arch TARGET]\n"
    "                [-D NAME=VALUE]... [--variant \"ARG=1 ARG=16 ...\"]... -o OUT\n"
    "Writes OUT.h and OUT.c: each kernel's PTX (and cubin when ptxas is found) embedded, and a typed\n"
    "C launch function per kernel taking a tile_context; with --variant, a dispatcher picks the first\n"
    "specialization the run-time values satisfy (ARG=1: equal to 1, ARG=16: divisible by 16, PTR=None:\n"
    "a pointer passed as 0, the kernel compiled with PTR None), else\n"
    "the generic build; NAME_aot_unload(ctx) releases what NAME loaded into a context.  Build the\n"
    "output against the runtime alone: cc OUT.c ... $(pkg-config --cflags --libs tile-rt).  A C name the\n"
    "C library or the standard headers use (free, clock, errno, ...) is refused: give another.\n"
    "\n"
    "  --kernel NAME[=CNAME]  a kernel to export (repeatable, at least one); its launch function is CNAME\n"
    "                         (CNAME_aot_unload, ...), by default the kernel's name\n"
    "  --prefix P             launch functions of the kernels given without =CNAME are P followed by NAME\n"
    "  --arch TARGET          target (tile --version lists them; default, or '': the default target)\n"
    "  -D NAME=VALUE          set a const parameter, file-level const, num_warps, num_stages, warp_specialize, pingpong or overlap\n"
    "                         (VALUE: a number, inf, -inf, nan, true, false, None, a type such as bf16, or a string: relu or \"leaky relu\")\n"
    "  --variant \"A=1 B=16\"   a specialized build (repeatable)\n"
    "  -o OUT                 the path stem of OUT.h and OUT.c (required)\n"
    "  -h, --help             this text\n"
    CLI_EXIT_HELP;

enum { OPT_KERNEL = 256, OPT_ARCH, OPT_VARIANT, OPT_PREFIX };

static const struct option options[] = {
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"variant", required_argument, NULL, OPT_VARIANT},
    {"prefix", required_argument, NULL, OPT_PREFIX},
    {"help", no_argument, NULL, 'h'},
    {0},
};

typedef struct AotArgs {
    const char *file, *out, *prefix;
    CliList kernels, defines, variants;
    tile_compile_options o;
} AotArgs;

static int aot_parse(int argc, char **argv, AotArgs *a) {
    CliGetopt g = {.cmd = "aot", .argc = argc, .argv = argv, .shortopts = "hD:o:", .longopts = options,
                   .repeatable = (const int[]){OPT_KERNEL, 'D', OPT_VARIANT, 0}};
    int c, rc = 0;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(usage);
        case OPT_KERNEL: rc = cli_list_add(&a->kernels, g.arg); break;
        case OPT_ARCH: rc = cli_arch(&g, &a->o.arch); break;
        case 'D': rc = cli_define(&g, &a->defines); break;
        case OPT_VARIANT: rc = cli_list_add(&a->variants, g.arg); break;
        case OPT_PREFIX: a->prefix = g.arg; break;
        case 'o':
            if (!strcmp(g.arg, "-")) rc = cli_usage_error(g.cmd, "-o is a path stem (OUT.h and OUT.c): '-' cannot be standard output");
            else a->out = g.arg;
            break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (rc) return rc;
    if (g.first_operand + 1 < argc) return cli_usage_error(g.cmd, "more than one input file: %s", argv[g.first_operand + 1]);
    if (g.first_operand < argc) a->file = argv[g.first_operand];
    if (a->file && !strcmp(a->file, "-")) /* the library takes a path (imports beside it, named in the generated files) */
        return cli_usage_error(g.cmd, "tile aot reads FILE.tile by its path: '-' (standard input) is not supported, write it to a file first");
    if (!a->file || !a->kernels.n || !a->out) /* which one is missing (it listed all three) */
        return cli_usage_error(g.cmd, "tile aot needs FILE.tile, --kernel NAME and -o OUT (missing:%s%s%s)", a->file ? "" : " FILE.tile",
                               a->kernels.n ? "" : " --kernel NAME", a->out ? "" : " -o OUT");
    struct stat in, out; /* `tile aot k.h ... -o k` replaced the source with the header, as tile compile's -o k.tile would */
    for (int i = 0; i < 2 && *a->out && stat(a->file, &in) == 0; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s.%s", a->out, i ? "c" : "h") < (int)sizeof path && stat(path, &out) == 0 && S_ISREG(out.st_mode) &&
            in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return cli_usage_error(g.cmd, "-o %s writes %s, the input file: it would be replaced by the output", a->out, path);
    }
    a->o.defines = cli_list_items(&a->defines);
    return CLI_CONTINUE;
}

int cmd_aot(int argc, char **argv) {
    AotArgs a = {0};
    int rc = aot_parse(argc, argv, &a);
    /* --prefix: "NAME" becomes "NAME=PNAME" */
    char **named = rc == CLI_CONTINUE ? calloc((size_t)a.kernels.n + 1, sizeof *named) : NULL;
    if (rc == CLI_CONTINUE && !named) rc = CLI_EXIT_FAIL;
    for (int i = 0; rc == CLI_CONTINUE && i < a.kernels.n; i++) {
        const char *k = a.kernels.v[i];
        size_t len = strlen(k) * 2 + (a.prefix ? strlen(a.prefix) : 0) + 2;
        if (!(named[i] = malloc(len))) rc = CLI_EXIT_FAIL;
        else if (a.prefix && !strchr(k, '=')) snprintf(named[i], len, "%s=%s%s", k, a.prefix, k);
        else snprintf(named[i], len, "%s", k);
    }
    if (rc == CLI_EXIT_FAIL) fprintf(stderr, "tile: out of host memory\n");
    /* the input checked here first: the library's TILE_ERROR_IO is then the output's (exit 3, not 2) */
    if (rc == CLI_CONTINUE && cli_input_unreadable(a.file)) rc = CLI_EXIT_USAGE;
    if (rc == CLI_CONTINUE) {
        char *msg = NULL;
        tile_status st = tile_aot_export(a.file, &a.o, (const char *const *)named, cli_list_items(&a.variants), a.out, &msg);
        if (msg && *msg) fputs(msg, stderr);
        if (st == TILE_OK) printf("wrote %s.h and %s.c\n", a.out, a.out);
        rc = st == TILE_ERROR_IO ? CLI_EXIT_OUTPUT : cli_exit_status(st);
        if (st == TILE_ERROR_COMPILE && cli_no_kernel_named(msg)) rc = CLI_EXIT_USAGE; /* as tile compile --kernel */
        free(msg);
    }
    for (int i = 0; named && i < a.kernels.n; i++) free(named[i]);
    free(named);
    cli_list_free(&a.kernels), cli_list_free(&a.defines), cli_list_free(&a.variants);
    return rc;
}

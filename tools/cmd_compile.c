/* cmd_compile.c - `tile compile FILE.tile`: Tile IR, LLVM IR, PTX or cubin.
 * FILE '-' is standard input, named <stdin> in diagnostics (imports from the working folder).
 * A FILE that is a pipe or a character device (`<(generate)`, /dev/stdin) is read the same way, named
 * by its path, and imports from the working folder after the -I folders (its own folder is /dev/fd).
 *
 *   1. parse the options into tile_compile_options (defines, includes and
 *      specializations as NULL-terminated lists);
 *   2. compile through the compile cache (--no-cache: directly);
 *   3. diagnostics, IR dumps and timings to stderr; the library's status
 *      becomes the exit status (an unknown -D name is a usage error);
 *   4. the chosen form to -o (standard output when absent or '-'), and with
 *      -v each kernel's metadata and ptxas's report to stderr (with --emit
 *      cubin: registers, spill bytes and, for a kernel that spills, what its
 *      C API launches instead, launchers[]). */
#include "tools/cli.h"
#include "tools/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/support.h"

static const char usage[] =
    "usage: tile compile FILE.tile [options]\n"
    "       (FILE '-': read the source from standard input; it imports from the working folder; a pipe\n"
    "        named as FILE, such as <(generate), is read the same way and named by its path)\n"
    "\n"
    "  --kernel NAME          compile only this kernel (default: every kernel, one module)\n"
    "  --arch TARGET          target (tile --version lists them; default, or '': the default target)\n"
    "  -D NAME=VALUE          set a const parameter, file-level const, num_warps, num_stages, warp_specialize, pingpong or overlap\n"
    "                         (VALUE: a number, inf, -inf, nan, true, false, None, a type such as bf16, or a string: relu or \"leaky relu\")\n"
    "  --specialize ARG=1|16|any|None  assume a run-time integer argument equals 1 or is divisible by 16; any: assume\n"
    "                         nothing of ARG (a pointer that need not be 16-byte aligned); None: the pointer ARG is\n"
    "                         None in the kernel (Triton's None argument; launched as 0)\n"
    "  --no-align-ptrs        do not assume 16-byte aligned pointer arguments\n"
    "  -g                     compile device_assert checks (otherwise they compile to nothing)\n"
    "  --num-sms N            num_sms() in kernels (default: 132)\n"
    "  --no-line-info         no .file/.loc directives (the .tile file, line and column) in the PTX\n"
    "  --no-tma               sm_90a: keep pipelined tiles on per-thread cp.async (no tensor maps)\n"
    "  -I DIR                 search DIR for imports\n"
    "  --emit tir|llvm|ptx|cubin   what to write (default ptx)\n"
    "  -o OUT                 output file (default or '-': standard output; cubin needs -o)\n"
    "  --dump-after PASS|all  print the Tile IR after a pass (or 'frontend') to stderr\n"
    "  --time-passes          print the time of each stage to stderr\n"
    "  -v, --verbose          print kernel metadata to stderr; with --emit cubin also ptxas -v's registers and\n"
    "                         spill bytes, and what the C APIs launch instead of a configuration that spills\n"
    "  --no-cache             compile even when the compile cache has the result\n"
    "  -h, --help             this text\n"
    "\n"
    "passes, in order: specialize canonicalize induction merge_loads canonicalize contract assign_layout remove_convert\n"
    "                  software_pipeline tma warp_specialize peel canonicalize smem_alloc barrier pingpong overlap\n"
    CLI_EXIT_HELP;

/* What --emit can write, in the order of its usage line. */
typedef enum Emit { EMIT_TIR, EMIT_LLVM, EMIT_PTX, EMIT_CUBIN } Emit;
static const char *const emit_names[] = {"tir", "llvm", "ptx", "cubin", NULL};

enum { OPT_KERNEL = 256, OPT_ARCH, OPT_SPECIALIZE, OPT_NO_ALIGN_PTRS, OPT_EMIT, OPT_DUMP_AFTER, OPT_TIME_PASSES, OPT_NO_CACHE, OPT_NUM_SMS, OPT_NO_LINE_INFO, OPT_NO_TMA };

static const struct option options[] = {
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"specialize", required_argument, NULL, OPT_SPECIALIZE},
    {"no-align-ptrs", no_argument, NULL, OPT_NO_ALIGN_PTRS},
    {"emit", required_argument, NULL, OPT_EMIT},
    {"dump-after", required_argument, NULL, OPT_DUMP_AFTER},
    {"time-passes", no_argument, NULL, OPT_TIME_PASSES},
    {"verbose", no_argument, NULL, 'v'},
    {"no-cache", no_argument, NULL, OPT_NO_CACHE},
    {"num-sms", required_argument, NULL, OPT_NUM_SMS},
    {"no-line-info", no_argument, NULL, OPT_NO_LINE_INFO},
    {"no-tma", no_argument, NULL, OPT_NO_TMA},
    {"help", no_argument, NULL, 'h'},
    {0},
};

typedef struct CompileArgs {
    const char *file, *out;
    int emit; /* Emit */
    int verbose, no_cache;
    CliList defines, specs, incs;
    int stream; /* FILE is a pipe or character device: read like standard input */
    tile_compile_options o;
} CompileArgs;

static int compile_parse(int argc, char **argv, CompileArgs *a) {
    CliGetopt g = {.cmd = "compile", .argc = argc, .argv = argv, .shortopts = "hvgD:I:o:", .longopts = options,
                   .repeatable = (const int[]){'D', 'I', OPT_SPECIALIZE, 0}};
    int c, rc = 0;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(usage);
        case OPT_KERNEL: a->o.kernel = g.arg; break;
        case OPT_ARCH: rc = cli_arch(&g, &a->o.arch); break;
        case 'D': rc = cli_define(&g, &a->defines); break;
        case 'I': rc = cli_list_add(&a->incs, g.arg); break;
        case OPT_SPECIALIZE: rc = cli_list_add(&a->specs, g.arg); break;
        case OPT_NO_ALIGN_PTRS: a->o.no_align_ptrs = 1; break;
        case OPT_EMIT: rc = cli_choice(&g, emit_names, &a->emit); break;
        case 'o': a->out = g.arg; break;
        case OPT_DUMP_AFTER: a->o.dump_after = g.arg; break;
        case OPT_TIME_PASSES: a->o.time_passes = 1; break;
        case 'v': a->verbose = 1; break;
        case OPT_NO_CACHE: a->no_cache = 1; break;
        case 'g': a->o.debug = 1; break;
        case OPT_NUM_SMS: rc = cli_int(&g, 1, 65536, &a->o.num_sms); break;
        case OPT_NO_LINE_INFO: a->o.no_line_info = 1; break;
        case OPT_NO_TMA: a->o.no_tma = 1; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (rc) return rc;
    if (g.first_operand >= argc) return cli_usage_error(g.cmd, "no input file");
    if (g.first_operand + 1 < argc) return cli_usage_error(g.cmd, "more than one input file: %s", argv[g.first_operand + 1]);
    a->file = argv[g.first_operand];
    if (a->emit == EMIT_CUBIN && !a->out) return cli_usage_error(g.cmd, "--emit cubin needs -o FILE (or -o - for standard output)");
    if (a->out && !*a->out) return cli_usage_error(g.cmd, "-o '' names no file (-o - is standard output)");
    struct stat in, out; /* `-o k.tile` for `-o k.ptx` replaced the source with its PTX */
    if (a->out && strcmp(a->file, "-") != 0 && stat(a->file, &in) == 0 && stat(a->out, &out) == 0 && S_ISREG(out.st_mode) && in.st_dev == out.st_dev &&
        in.st_ino == out.st_ino)
        return cli_usage_error(g.cmd, "-o %s is the input file: it would be replaced by the output", a->out);
    if (strcmp(a->file, "-") != 0 && stat(a->file, &in) == 0 && (S_ISFIFO(in.st_mode) || S_ISCHR(in.st_mode))) {
        a->stream = 1;
        if (cli_list_add(&a->incs, ".")) return CLI_EXIT_FAIL;
    }
    a->o.size = sizeof a->o; /* the fields after ptxas (debug, num_sms, no_line_info) are read only with the size */
    a->o.defines = cli_list_items(&a->defines);
    a->o.specialize = cli_list_items(&a->specs);
    a->o.include_dirs = cli_list_items(&a->incs);
    a->o.want_llvm_ir = a->emit == EMIT_LLVM;
    a->o.tir_only = a->emit == EMIT_TIR;
    a->o.want_cubin = a->emit == EMIT_CUBIN;
    return CLI_CONTINUE;
}

/* The shipped kernel files (under kernels/) and the C API that launches their
 * kernels, with how it chooses a configuration: what -v says of a kernel that
 * spills.  tests/test_kernels.c assembles every configuration a launcher can
 * choose (ptxas_launched_configs) and the const defaults (ptxas_sm*) and
 * finds no spills, so a configuration that spills is one no launcher takes;
 * the rules are the launchers' own (kernels/<family>/<family>.c, docs/kernels.md). */
static const struct {
    const char *file, *api, *rule;
} launchers[] = {
    {"gemm/gemm.tile", "tile_gemm",
     "the kernel's first @config (or a tuned one) where m, n, k, lda, ldb are multiples of 16 and the pointers "
     "16-byte aligned, else the const defaults; beta or an activation only below 128 accumulator registers a "
     "thread, and with wgmma a bias only below BN 256 (tile_gemm_with_config launches the caller's as given)"},
    {"attention/attention.tile", "tile_attention_fwd",
     "BLOCK_D the power of two >= head_dim, BM 64 and BN 64 (32 above BLOCK_D 64) on 4 warps, 8 above 128; on "
     "sm_90a BM 128 on 8 warps"},
    {"attention/paged_attention.tile", "tile_attention_decode_paged",
     "BLOCK_D the power of two >= head_dim, BM the power of two >= max(16, group * tokens), BN 64 below BLOCK_D "
     "128, 32 at 128, 16 above it from BM 64, 8 warps above BLOCK_D 128"},
    {"moe/experts.tile", "tile_moe_forward",
     "BM 16, 32 or 64 by the slots per expert, BN 64 (gate_up: 32 without 16-byte vector loads), BK 32 (16 for "
     "gate_up with block scales at BM 16 without vectors)"},
    {"moe/router.tile", "tile_moe_forward",
     "BE the power of two >= experts, BT 16 tokens a program (fewer from BE 256, 1 from BE 512), KP the power of "
     "two >= topk, at least 2 (128 from BE 512)"},
    {"moe/align.tile", "tile_moe_forward", "BE the power of two >= experts, scan chunks of 1024-2048 elements"},
};

/* The launcher of a compiled file: its path ends in "/<file>" or is <file>; NULL for any other source. */
static int launcher_of(const char *path) {
    size_t n = strlen(path);
    for (int i = 0; i < (int)(sizeof launchers / sizeof launchers[0]); i++) {
        size_t m = strlen(launchers[i].file);
        if (n >= m && !strcmp(path + n - m, launchers[i].file) && (n == m || path[n - m - 1] == '/')) return i;
    }
    return -1;
}

/* For a kernel ptxas reports spilling: a line saying so, and what its launcher takes instead. */
static void print_spill_note(const CompileArgs *a, const tile_kernel_info *ki) {
    bool unspecialized = !a->defines.n && !a->specs.n;
    int l = launcher_of(a->file);
    if (l < 0) {
        const char *at = unspecialized ? "the const defaults, nothing specialized" : "this configuration";
        fprintf(stderr, "  %s: spills %d B (ptxas -v) at %s: more registers than a thread has; a smaller tile, more warps or "
                        "fewer stages may fit\n", ki->name, ki->spill_bytes, at);
        return;
    }
    fprintf(stderr, "  %s: spills %d B (ptxas -v): %s does not launch %s; it takes %s\n", ki->name, ki->spill_bytes,
            launchers[l].api, unspecialized ? "the unspecialized kernel" : "this configuration", launchers[l].rule);
}

static void print_kernels(const CompileArgs *a, const tile_compiled *c) {
    for (int k = 0; k < c->nkernels; k++) {
        const tile_kernel_info *ki = &c->kernels[k];
        fprintf(stderr, "kernel %s(%s) num_warps=%d num_stages=%d smem=%d", ki->name, ki->signature, ki->num_warps, ki->num_stages,
                ki->smem_bytes);
        if (ki->registers >= 0) fprintf(stderr, " registers=%d spill_bytes=%d", ki->registers, ki->spill_bytes);
        fputc('\n', stderr);
        if (ki->registers >= 0 && ki->spill_bytes > 0) print_spill_note(a, ki);
        if (ki->tensor_maps && *ki->tensor_maps) fprintf(stderr, "  tensor maps (built by tile_launch): %s\n", ki->tensor_maps);
    }
    if (c->ptxas_log) fputs(c->ptxas_log, stderr);
}

/* Step 4: the chosen form to the output; the exit status. */
static int write_output(const CompileArgs *a, const tile_compiled *c) {
    const char *text = a->emit == EMIT_TIR ? c->tir : a->emit == EMIT_LLVM ? c->llvm_ir : c->ptx;
    const void *data = text;
    size_t n = text ? strlen(text) : 0;
    if (a->emit == EMIT_CUBIN) data = c->cubin, n = c->cubin_size;
    CliOutput o;
    if (!cli_output_open(&o, a->out)) return CLI_EXIT_OUTPUT;
    cli_output_write(&o, data, n);
    return cli_output_close(&o) ? CLI_EXIT_OK : CLI_EXIT_OUTPUT;
}

/* The stream in (standard input, or a pipe named on the command line) whole, NUL-terminated, at most the size a
 * source file may have; NULL (having said why, naming the source `name`, with *st the status) when it cannot be
 * read or is too long (TILE_ERROR_IO, as an unreadable file) or holds a NUL byte (TILE_ERROR_COMPILE: a source
 * string ends at the first, so the lexer would not see it). */
static char *read_stream(FILE *in, const char *name, tile_status *st) {
    *st = TILE_ERROR_IO;
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - 1 - n, in);
        n += r;
        if (n > SOURCE_MAX_BYTES) { /* the limit of a source file (it took up to 32 MiB here) */
            fprintf(stderr, "%s: error: the source is longer than %d MiB\n", name, SOURCE_MAX_BYTES >> 20);
            free(buf);
            return NULL;
        }
        if (r == 0) break;
        if (n == cap - 1) {
            char *more = realloc(buf, cap * 2);
            if (!more) free(buf);
            buf = more, cap *= 2;
        }
    }
    if (!buf) {
        fprintf(stderr, "%s: error: out of memory reading the source\n", name);
        return NULL;
    }
    if (ferror(in)) {
        fprintf(stderr, "%s: error: cannot read %s\n", name, in == stdin ? "standard input" : "it");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    size_t nul = strlen(buf);
    if (nul < n) {
        unsigned line = 1, col = 1;
        for (size_t i = 0; i < nul; i++) buf[i] == '\n' ? (line++, col = 1) : col++;
        fprintf(stderr, "%s:%u:%u: error: unexpected byte 0x00 (a control character)\n", name, line, col);
        *st = TILE_ERROR_COMPILE;
        free(buf);
        return NULL;
    }
    return buf;
}

/* FILE '-' (standard input, named <stdin>) or a pipe or character device named by its path. */
static tile_status compile_stream(const CompileArgs *a, tile_compiled *c, int *hit) {
    memset(c, 0, sizeof *c);
    const char *name = a->stream ? a->file : "<stdin>";
    FILE *in = a->stream ? fopen(a->file, "rb") : stdin;
    if (!in) {
        fprintf(stderr, "error: cannot read '%s': %s\n", a->file, strerror(errno));
        return TILE_ERROR_IO;
    }
    tile_status st;
    char *text = read_stream(in, name, &st);
    if (in != stdin) fclose(in);
    if (!text) return st;
    st = a->no_cache ? tile_compile_source(name, text, &a->o, c) : tile_cache_compile_source(NULL, name, text, &a->o, c, hit);
    free(text);
    return st;
}

int cmd_compile(int argc, char **argv) {
    CompileArgs a = {.emit = EMIT_PTX};
    int rc = compile_parse(argc, argv, &a);
    if (rc != CLI_CONTINUE) goto out;
    tile_compiled c;
    int hit = 0;
    tile_status st = a.stream || !strcmp(a.file, "-") ? compile_stream(&a, &c, &hit)
                     : a.no_cache         ? tile_compile_file(a.file, &a.o, &c)
                                          : tile_cache_compile_file(NULL, a.file, &a.o, &c, &hit);
    /* the library compiles these requests anew without looking at the cache (tile_cache_compile_file):
     * "miss" would say the result was stored for the next time */
    bool bypassed = a.o.tir_only || a.o.want_llvm_ir || a.o.dump_after || a.o.time_passes;
    if (a.verbose && !a.no_cache)
        fprintf(stderr, "cache: %s\n",
                bypassed ? "not used (--emit tir, --emit llvm, --dump-after and --time-passes compile anew)" : hit ? "hit" : "miss");
    if (c.diagnostics && *c.diagnostics) fputs(c.diagnostics, stderr);
    if (c.dump) fputs(c.dump, stderr);
    if (c.timing) fputs(c.timing, stderr);
    rc = cli_exit_status(st);
    /* --kernel naming no kernel of a file that is otherwise fine: the command line is wrong, not the source */
    if (st == TILE_ERROR_COMPILE && a.o.kernel && cli_no_kernel_named(c.diagnostics)) rc = CLI_EXIT_USAGE;
    if (st == TILE_OK && a.o.want_cubin && c.ptxas_missing) {
        fprintf(stderr, "tile: ptxas not found: cannot emit cubin (install the CUDA toolkit or pass its path)\n");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK) {
        rc = write_output(&a, &c);
        if (a.verbose) print_kernels(&a, &c);
    }
    tile_compiled_free(&c);
out:
    cli_list_free(&a.defines), cli_list_free(&a.specs), cli_list_free(&a.incs);
    return rc;
}

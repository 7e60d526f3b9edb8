/* attention_report.c - what the compiler made of the attention kernels'
 * main loops: the instruction counts issue 13 compares with Triton's.
 *
 *   build/bench/attention_report [--arch TARGET]
 *
 * For each configuration (kernel, head_dim, BM x BN tile):
 *   1. compile kernels/attention/{attention,paged_attention}.tile for the
 *      target (default sm_80) with ptxas (want_cubin) when it is present;
 *   2. take registers and spill bytes from the compile result (ptxas -v);
 *   3. find the main loop in the PTX (bench/ptx_loop.h: the loop with the
 *      most mma instructions) and count its instructions, mma.sync, ex2
 *      (the exponentials), and the f32 fma, mul and add/sub, which are
 *      what contraction (lower/contract.c) and the softmax's form decide.
 * SASS counts need nvdisasm on the cubin, which is not part of the build;
 * see docs/performance.md.  Exit status 1 when a configuration does not
 * compile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ptx_loop.h"
#include "include/tile/tile.h"
#include "tools/json.h"

typedef struct Cfg {
    const char *file, *kernel;
    int head_dim, bm, bn, warps; /* 0: the kernel's default */
} Cfg;

/* what tile_attention_fwd picks (BM 64, BN 64 or 32 above head_dim 64, 4 warps), then
 * Triton's tutorial tile (BM 128, BN 64) at 4 and 8 warps, then decode */
static const Cfg configs[] = {
    {"attention/attention.tile", "attention_fwd_f16", 64, 64, 64, 4},
    {"attention/attention.tile", "attention_fwd_f16", 128, 64, 32, 4},
    {"attention/attention.tile", "attention_fwd_f16", 64, 128, 64, 4},
    {"attention/attention.tile", "attention_fwd_f16", 128, 128, 64, 4},
    {"attention/attention.tile", "attention_fwd_f16", 64, 128, 64, 8},
    {"attention/attention.tile", "attention_fwd_f16", 128, 128, 64, 8},
    {"attention/paged_attention.tile", "paged_attention_f16", 128, 0, 0, 0},
};

typedef struct Counts {
    int total, mma, ex2, fma, mul, add;
} Counts;

static void count(const char *op, Counts *c) {
    if (!*op) return;
    c->total++;
    if (ptx_is_mma(op)) c->mma++;
    else if (!strncmp(op, "ex2.", 4)) c->ex2++;
    else if (!strncmp(op, "fma.", 4) && strstr(op, ".f32")) c->fma++;
    else if (!strncmp(op, "mul.", 4) && strstr(op, ".f32")) c->mul++;
    else if ((!strncmp(op, "add.", 4) || !strncmp(op, "sub.", 4)) && strstr(op, ".f32")) c->add++;
}

int main(int argc, char **argv) {
    const char *arch = "sm_80";
    int json = 0; /* --json: one JSON object per row, the header on stderr */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--arch") && i + 1 < argc) arch = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = 1;
        else {
            fprintf(stderr, "usage: %s [--arch TARGET] [--json]\n", argv[0]);
            return 2;
        }
    }
    FILE *hdr = json ? stderr : stdout;
    fprintf(hdr, "attention report (%s): main-loop PTX instructions; regs/spill from ptxas -v (-1: no ptxas)\n", arch);
    fprintf(hdr, "%-22s %4s %4s %4s %2s %6s %5s %5s %5s %5s %5s %5s %5s\n", "kernel", "hd", "BM", "BN", "w", "instr", "mma", "ex2", "fma",
           "mul", "add", "regs", "spill");
    int failures = 0;
    for (size_t ci = 0; ci < sizeof configs / sizeof configs[0]; ci++) {
        const Cfg *c = &configs[ci];
        char defs[6][32];
        const char *defines[7] = {0};
        int nd = 0;
        int bd = 16;
        while (bd < c->head_dim) bd *= 2;
        snprintf(defs[nd], 32, "HEAD_DIM=%d", c->head_dim), defines[nd] = defs[nd], nd++;
        snprintf(defs[nd], 32, "BLOCK_D=%d", bd), defines[nd] = defs[nd], nd++;
        if (c->bm) snprintf(defs[nd], 32, "BM=%d", c->bm), defines[nd] = defs[nd], nd++;
        if (c->bn) snprintf(defs[nd], 32, "BN=%d", c->bn), defines[nd] = defs[nd], nd++;
        if (c->warps) snprintf(defs[nd], 32, "num_warps=%d", c->warps), defines[nd] = defs[nd], nd++;
        tile_compile_options o = {.arch = arch, .kernel = c->kernel, .defines = defines, .want_cubin = 1};
        tile_compiled comp;
        char path[512];
        snprintf(path, sizeof path, "%s/kernels/%s", TILE_SOURCE_DIR, c->file);
        tile_status st = tile_compile_file(path, &o, &comp);
        if (st != TILE_OK && json) {
            char why[512];
            snprintf(why, sizeof why, "%s: %.*s", tile_status_string(st), (int)strcspn(comp.diagnostics, "\n"), comp.diagnostics);
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "attention_report");
            json_str(&j, "kernel", c->kernel);
            json_int(&j, "head_dim", c->head_dim);
            json_str(&j, "compile_failed", why);
            json_end(&j);
            tile_compiled_free(&comp);
            failures++;
            continue;
        }
        if (st != TILE_OK) {
            printf("%-22s %4d compile failed: %s: %.*s\n", c->kernel, c->head_dim, tile_status_string(st),
                   (int)strcspn(comp.diagnostics, "\n"), comp.diagnostics);
            tile_compiled_free(&comp);
            failures++;
            continue;
        }
        PtxLine *ls;
        int n = ptx_parse_lines(comp.ptx, &ls), first, last;
        Counts k = {0};
        if (ptx_main_loop(ls, n, &first, &last))
            for (int i = first; i <= last; i++) count(ls[i].op, &k);
        free(ls);
        if (json) {
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "attention_report");
            json_str(&j, "kernel", c->kernel);
            json_str(&j, "arch", arch);
            json_int(&j, "head_dim", c->head_dim);
            if (c->bm) json_int(&j, "bm", c->bm);
            else json_str(&j, "bm", "def");
            if (c->bn) json_int(&j, "bn", c->bn);
            else json_str(&j, "bn", "def");
            json_int(&j, "warps", comp.kernels[0].num_warps);
            json_int(&j, "instr", k.total);
            json_int(&j, "mma", k.mma);
            json_int(&j, "ex2", k.ex2);
            json_int(&j, "fma_f32", k.fma);
            json_int(&j, "mul_f32", k.mul);
            json_int(&j, "add_f32", k.add);
            json_int(&j, "regs", comp.kernels[0].registers);
            json_int(&j, "spill_bytes", comp.kernels[0].spill_bytes);
            json_end(&j);
        } else
        printf("%-22s %4d %4s %4s %2d %6d %5d %5d %5d %5d %5d %5d %5d\n", c->kernel, c->head_dim, c->bm ? defs[2] + 3 : "def",
               c->bn ? defs[3] + 3 : "def", comp.kernels[0].num_warps, k.total, k.mma, k.ex2, k.fma, k.mul, k.add, comp.kernels[0].registers,
               comp.kernels[0].spill_bytes);
        tile_compiled_free(&comp);
    }
    return failures ? 1 : 0;
}

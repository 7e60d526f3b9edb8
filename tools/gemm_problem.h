/* gemm_problem.h - the GEMM that `tile run gemm` and `tile tune gemm` run.
 *
 * Both commands take the same options (sizes, types, transposes, device,
 * repetitions), draw the same random A and B and check C against the same
 * float64 reference, so this file holds the parsing and the set-up once. */
#ifndef TILE_TOOLS_GEMM_PROBLEM_H
#define TILE_TOOLS_GEMM_PROBLEM_H

#include "tools/cli.h"
#include "tools/run_check.h"

typedef struct GemmProblem {
    int64_t m, n, k;
    tile_dtype in, out; /* --dtype tf32: f32 inputs on tf32 tensor cores */
    int ta, tb;
    const char *device;
    int reps, warmup;
    double timeout_s;
    bool json; /* --json: JSON Lines on stdout, nothing else there */
    char *config[17]; /* --config (run gemm): the configuration's NAME=VALUE defines, NULL-terminated (tile_gemm_with_config) */
    char config_text[512];
} GemmProblem;

/* The options, one per line, for a command's usage text: GEMM_PROBLEM_OPTIONS, then (tile tune gemm only)
 * GEMM_TUNE_OPTIONS, then GEMM_PROBLEM_OPTIONS_END; tile run gemm refuses the tune-only ones, so its help does
 * not list them. */
#define GEMM_PROBLEM_OPTIONS                                                                      \
    "  --m M --n N --k K          sizes (default 256 each)\n"                                     \
    "  --dtype f16|bf16|tf32|i8|f8e4m3|f8e5m2   input type (default f16; tf32: f32 inputs on tf32 tensor cores)\n" \
    "  --out-dtype f32|f16|bf16|i32   output type (default f32, i32 for i8 inputs)\n"             \
    "  --trans-a, --trans-b       A is [k, m], B is [n, k] (column-major operands)\n"            \
    "  --device D                 emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when\n" \
    "                             present, else emu)\n" \
    "  --reps R                   timed runs (default 5)\n"
#define GEMM_TUNE_OPTIONS                                                                         \
    "  --warmup W                 untimed runs before them (default 1)\n"                        \
    "  --timeout S                seconds for one configuration's warm-up and timed runs together, checked\n" \
    "                             after each run; one past it is skipped as timed out (default 60)\n"
#define GEMM_PROBLEM_OPTIONS_END                                                                  \
    "  --json                     JSON Lines on stdout (one object per result), nothing else there\n" \
    "  -h, --help                 this text\n"

/* Parse argv (argv[0]: the command); CLI_CONTINUE, or the exit status (0 after --help). */
int gemm_problem_parse(const char *cmd, const char *usage, int argc, char **argv, GemmProblem *p);

/* Random A and B on the device (and their exact values on the host), C allocated. */
typedef struct GemmData {
    tile_gemm_args g;
    double *va, *vb;
    void *hc;
    size_t cn;
} GemmData;

int gemm_data_setup(tile_context *ctx, const GemmProblem *p, CheckRng *rng, GemmData *d); /* 0, or 3 after a message */
/* Copy C back and compare it with the float64 reference: max |error| / tolerance (> 1 fails). */
double gemm_data_check(tile_context *ctx, const GemmProblem *p, GemmData *d);
void gemm_data_free(tile_context *ctx, GemmData *d);

#endif

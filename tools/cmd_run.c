/* cmd_run.c - `tile run`: run an entry point of the kernel library on random
 * data, check the result against a float64 reference and time it.
 *
 * The subcommands are a table; each one:
 *   1. parses its options (sizes, types, --device, --reps);
 *   2. draws random inputs in the device's format, keeping their exact values;
 *   3. opens a context, copies the inputs and makes the first call, timed
 *      with the compile or cache load included;
 *   4. checks the output against the float64 reference of ref/ (run_check.c);
 *   5. times --reps further calls and prints one summary: text (the header
 *      first, then, on a terminal, a progress line per phase on stderr) or,
 *      with --json, one JSON object on one line and nothing else.
 * Exit status 3 when a call fails or the check does not match.
 * `tile run gemm` is here; attention and decode in cmd_run_attention.c, moe
 * in cmd_run_moe.c, norm and act in cmd_run_norm.c, rope in cmd_run_rope.c, a
 * whole decoder layer in cmd_run_layer.c, sample and spec in cmd_run_sample.c. */
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/gemm_problem.h"
#include "tools/json.h"
#include "tools/timer.h"

#include <stdlib.h>

static const CliCommand run_commands[] = {
    {"gemm", "tile_gemm on random data, checked against float64 and timed", cmd_run_gemm},
    {"attention", "tile_attention_fwd (prefill) on random data, checked and timed", cmd_run_attention},
    {"decode", "tile_attention_decode_paged on a shuffled paged KV cache, checked and timed", cmd_run_decode},
    {"paged-attention", "the same as decode", cmd_run_decode},
    {"moe", "tile_moe_forward (routing and experts) on random data, checked and timed", cmd_run_moe},
    {"norm", "tile_fused_add_rmsnorm (optionally quantized) on random data, checked and timed", cmd_run_norm},
    {"act", "tile_gated_activation (silu/gelu and mul, optionally quantized) on random data, checked and timed", cmd_run_act},
    {"sample", "tile_sample (temperature, top-k, top-p, min-p) on random logits, checked and timed", cmd_run_sample},
    {"spec", "tile_spec_verify (speculative-decoding acceptance) on random data, checked and timed", cmd_run_spec},
    {"rope", "tile_rope_kv_append (RoPE of Q and K, K and V appended to a paged cache) on random data, checked and timed", cmd_run_rope},
    {"layer", "a Llama-style decoder layer (prefill, then decode steps) from the C API, checked against float64", cmd_run_layer},
};

int cmd_run(int argc, char **argv) {
    return cli_dispatch("run", run_commands, (int)(sizeof run_commands / sizeof run_commands[0]), argc, argv);
}

static const char usage_gemm[] =
    "usage: tile run gemm [--m M] [--n N] [--k K] [--dtype f16|bf16|tf32|i8|f8e4m3|f8e5m2] [--out-dtype f32|f16|bf16|i32]\n"
    "                     [--device emu[:TARGET]|cuda|cuda:N] [--trans-a] [--trans-b] [--reps R] [--config DEFINES]\n"
    "Runs tile_gemm on random A and B, checks C against a float64 reference and\n"
    "prints the kernel, configuration, specialization, grid and times (--json: one JSON object).\n"
    "\n" GEMM_PROBLEM_OPTIONS GEMM_PROBLEM_OPTIONS_END
    "  --config DEFINES           this configuration through tile_gemm_with_config, e.g. \"BM=64 BN=64 BK=32 num_warps=4\n"
    "                             SPLIT_K=4\" (split-K: f32 output; the defines tile_gemm_last_info shows)\n"
    "\n"
    CLI_EXIT_HELP;

static const char *source_name(int s) { return s == 0 ? "already loaded" : s == 1 ? "disk cache hit" : "compiled (cache miss)"; }

typedef struct GemmCall {
    const tile_gemm_args *g;
    const char *const *config; /* --config, or NULL: tile_gemm's own choice */
} GemmCall;

static tile_status gemm_call(tile_context *ctx, void *user) {
    const GemmCall *c = user;
    tile_status st = c->config ? tile_gemm_with_config(ctx, c->g, c->config) : tile_gemm(ctx, c->g);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

int cmd_run_gemm(int argc, char **argv) {
    GemmProblem p;
    int rc = gemm_problem_parse("run gemm", usage_gemm, argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    tile_context *ctx;
    if ((rc = cli_context_open("run gemm", p.device, &ctx))) return rc;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    CheckRng rng;
    check_rng_init(&rng);
    GemmData d;
    if ((rc = gemm_data_setup(ctx, &p, &rng, &d))) return gemm_data_free(ctx, &d), tile_context_destroy(ctx), rc;
    bool prog = cli_progress_wanted(p.json) && props.is_emulator;
    if (!p.json) {
        printf("gemm %lldx%lldx%lld %s->%s%s%s on %s (%s)\n", (long long)p.m, (long long)p.n, (long long)p.k, tile_dtype_name(p.in),
               tile_dtype_name(p.out), p.ta ? " trans_a" : "", p.tb ? " trans_b" : "", props.name, props.arch);
        fflush(stdout);
    }
    cli_progress(prog, "first call (compiles or loads the kernel) ...");
    const char *const *config = p.config[0] ? (const char *const *)p.config : NULL;
    GemmCall call = {&d.g, config};
    double first;
    tile_status st = timer_call(gemm_call, ctx, &call, &first);
    if (st != TILE_OK) {
        int rc = cli_call_failed(ctx, "tile_gemm", st);
        return gemm_data_free(ctx, &d), tile_context_destroy(ctx), rc;
    }
    /* m or n 0: nothing was launched and tile_gemm_last_info has nothing to tell (kernel, config and grid
     * were printed from uninitialized memory): no kernel, config or source (null in --json), grid 0 */
    tile_gemm_info gi = {0};
    bool launched = tile_gemm_last_info(ctx, &gi) == TILE_OK;
    int first_source = gi.source;
    cli_progress(prog, "checking against float64 ...");
    double worst = gemm_data_check(ctx, &p, &d);
    cli_progress(prog, "timing %d calls ...", p.reps);
    double med;
    st = timer_reps(gemm_call, ctx, &call, p.reps, &med);
    if (med < 0) return gemm_data_free(ctx, &d), tile_context_destroy(ctx), CLI_EXIT_FAIL;
    if (launched) tile_gemm_last_info(ctx, &gi);
    double tflops = 2.0 * p.m * p.n * p.k / med * 1e-12;
    if (p.json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", "gemm");
        json_int(&j, "m", p.m), json_int(&j, "n", p.n), json_int(&j, "k", p.k);
        json_str(&j, "dtype", tile_dtype_name(p.in)), json_str(&j, "out_dtype", tile_dtype_name(p.out));
        json_bool(&j, "trans_a", p.ta), json_bool(&j, "trans_b", p.tb);
        timer_json_device(&j, &props);
        json_str(&j, "kernel", launched ? gi.kernel : NULL), json_str(&j, "config", launched ? gi.config : NULL);
        json_bool(&j, "tuned", gi.tuned), json_str(&j, "specialize", gi.specialize);
        json_array(&j, "grid"), json_uint(&j, NULL, gi.grid.x), json_uint(&j, NULL, gi.grid.y), json_uint(&j, NULL, gi.grid.z), json_close(&j);
        json_uint(&j, "block", gi.block.x);
        json_num(&j, "first_seconds", first), json_str(&j, "first_source", launched ? source_name(first_source) : NULL);
        json_num(&j, "median_seconds", med), json_int(&j, "reps", p.reps), json_num(&j, "tflops", tflops);
        json_num(&j, "max_error", worst), json_bool(&j, "ok", st == TILE_OK && worst <= 1);
        json_end(&j);
    } else if (!launched) {
        printf("  kernel      (none: C is empty, nothing was launched)\n");
        printf("  check       nothing to compare: ok\n");
    } else {
        printf("  kernel      %s\n", gi.kernel);
        printf("  config      %s%s\n", gi.config, config ? " (--config)" : gi.tuned ? " (tuned)" : " (default: not tuned for this shape)");
        printf("  specialize  %s\n", *gi.specialize ? gi.specialize : "(none)");
        printf("  grid        (%u, %u) x %u threads\n", gi.grid.x, gi.grid.y, gi.block.x);
        printf("  first call  %.3f ms: %s\n", first * 1e3, source_name(first_source));
        printf("  next calls  %.3f ms median of %d: %s (%.2f TFLOP/s%s)\n", med * 1e3, p.reps, source_name(gi.source),
               tflops, props.is_emulator ? "; the emulator's timings mean nothing" : "");
        printf("  check       max error %.3g of tolerance against a float64 reference: %s\n", worst, worst <= 1 ? "ok" : "MISMATCH");
    }
    gemm_data_free(ctx, &d);
    tile_context_destroy(ctx);
    return st != TILE_OK ? CLI_EXIT_FAIL : worst <= 1 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* cmd_run_moe.c - `tile run moe`: tile_moe_forward on random data.
 *
 *   1. random weights w1 [E, 2 inter, hidden] and w2 [E, hidden, inter]
 *      (f8: random codes times random per-channel or 128x128 block scales),
 *      then random x and router logits;
 *   2. Mixtral-style routing through the library: softmax over the logits,
 *      top-k, renormalized; one caller workspace;
 *   3. the routing written back must be a top-k of the logits, and up to
 *      --check-tokens tokens of the output match a float64 forward from the
 *      dequantized weights (ref/, through run_check.c);
 *   4. --reps further calls timed. */
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/run_check.h"
#include "tools/json.h"
#include "tools/timer.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct MoeCli {
    int64_t tokens, experts, topk, hidden, inter;
    tile_dtype act, w;
    tile_moe_scales scales;
    int reps, check_tokens;
    bool json;
    const char *device;
} MoeCli;

enum { OPT_TOKENS = 256, OPT_EXPERTS, OPT_TOPK, OPT_HIDDEN, OPT_INTER, OPT_CHECK_TOKENS, OPT_SCALES, OPT_DTYPE,
       OPT_ACT_DTYPE };

static const struct option options[] = {
    {"tokens", required_argument, NULL, OPT_TOKENS},
    {"experts", required_argument, NULL, OPT_EXPERTS},
    {"topk", required_argument, NULL, OPT_TOPK},
    {"hidden", required_argument, NULL, OPT_HIDDEN},
    {"inter", required_argument, NULL, OPT_INTER},
    {"reps", required_argument, NULL, CLI_OPT_REPS},
    {"check-tokens", required_argument, NULL, OPT_CHECK_TOKENS},
    {"device", required_argument, NULL, CLI_OPT_DEVICE},
    {"scales", required_argument, NULL, OPT_SCALES},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"act-dtype", required_argument, NULL, OPT_ACT_DTYPE},
    {"json", no_argument, NULL, CLI_OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {0},
};

static const char usage[] =
    "usage: tile run moe [--tokens T] [--experts E] [--topk K] [--hidden H] [--inter I] [--dtype f16|bf16|f8e4m3]\n"
    "                    [--act-dtype f16|bf16] [--scales channel|block] [--device D] [--reps R] [--check-tokens N]\n"
    "Runs tile_moe_forward (softmax routing renormalized over the top-k, SiLU-gated experts) on random\n"
    "data; checks the routing and up to --check-tokens tokens against a float64 forward.\n"
    "\n"
    "  --tokens T             (default 64)\n"
    "  --experts E            (default 8)\n"
    "  --topk K               experts per token, at most E (default 2)\n"
    "  --hidden H             (default 256)\n"
    "  --inter I              the experts' intermediate size (default 512)\n"
    "  --dtype f16|bf16       activations and weights (default bf16)\n"
    "  --dtype f8e4m3         f8 weights with scales (activations: --act-dtype)\n"
    "  --act-dtype f16|bf16   activations with f8 weights (default bf16)\n"
    "  --scales channel|block f8 scales per output channel or per 128x128 block (default block)\n"
    "  --device D             emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n"
    "  --reps R               timed calls (default 5)\n"
    "  --check-tokens N       tokens checked against float64 (default 32)\n"
    "  --json                 one JSON object on one line on stdout, nothing else there\n"
    "  -h, --help             this text\n"
    CLI_EXIT_HELP;

static const tile_dtype weight_types[] = {TILE_F16, TILE_BF16, TILE_F8E4M3};
static const tile_dtype act_types[] = {TILE_F16, TILE_BF16};
static const char *const scale_names[] = {"channel", "block", NULL};
static const tile_moe_scales scale_values[] = {TILE_MOE_SCALES_CHANNEL, TILE_MOE_SCALES_BLOCK128};

static int moe_cli_parse(int argc, char **argv, MoeCli *p) {
    *p = (MoeCli){.tokens = 64, .experts = 8, .topk = 2, .hidden = 256, .inter = 512, .act = TILE_BF16, .w = TILE_BF16, .reps = 5,
                  .check_tokens = 32};
    bool scales_set = false;
    CliGetopt g = {.cmd = "run moe", .argc = argc, .argv = argv, .shortopts = "h", .longopts = options};
    int c, rc = 0, which;
    tile_dtype t;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(usage);
        case OPT_TOKENS: rc = cli_i64(&g, 0, INT32_MAX, &p->tokens); break;
        case OPT_EXPERTS: rc = cli_i64(&g, 1, INT32_MAX, &p->experts); break;
        case OPT_TOPK: rc = cli_i64(&g, 1, INT32_MAX, &p->topk); break;
        case OPT_HIDDEN: rc = cli_i64(&g, 1, INT32_MAX, &p->hidden); break;
        case OPT_INTER: rc = cli_i64(&g, 1, INT32_MAX, &p->inter); break;
        case OPT_CHECK_TOKENS: rc = cli_int(&g, 1, INT_MAX, &p->check_tokens); break;
        case OPT_SCALES:
            if (!(rc = cli_choice(&g, scale_names, &which))) p->scales = scale_values[which], scales_set = true;
            break;
        case OPT_DTYPE: /* f8e4m3 sets the weights only; f16 or bf16 both */
            if (!(rc = cli_dtype(&g, weight_types, 3, NULL, &t))) {
                if (t == TILE_F8E4M3) p->w = t;
                else p->w = p->act = t;
            }
            break;
        case OPT_ACT_DTYPE: rc = cli_dtype(&g, act_types, 2, NULL, &p->act); break;
        default: rc = cli_common_option(&g, c, &p->device, &p->reps, &p->json); break;
        }
    }
    if (rc || (rc = cli_no_operands(&g))) return rc;
    if (p->w != TILE_F8E4M3) p->w = p->act;
    if (p->w == TILE_F8E4M3 && !scales_set) p->scales = TILE_MOE_SCALES_BLOCK128;
    if (p->w != TILE_F8E4M3 && scales_set) return cli_usage_error(g.cmd, "--scales goes with --dtype f8e4m3");
    if (p->topk > p->experts) return cli_usage_error(g.cmd, "--topk must be at most --experts");
    if ((rc = cli_elements(g.cmd, "--tokens * --hidden", 2, p->tokens, p->hidden)) ||
        (rc = cli_elements(g.cmd, "--tokens * --experts", 2, p->tokens, p->experts)) ||
        (rc = cli_elements(g.cmd, "the weights, --experts * 2 --inter * --hidden", 3, p->experts, 2 * p->inter, p->hidden)))
        return rc;
    return CLI_CONTINUE;
}

/* A buffer's size, at least 1: --tokens 0 (nothing to compute, as the API takes it) still allocates, malloc(0) may be
 * NULL and tile_malloc(0) is an error. */
static size_t nz(size_t n) { return n ? n : 1; }

static tile_status moe_call(tile_context *ctx, void *a) {
    tile_status st = tile_moe_forward(ctx, a);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

int cmd_run_moe(int argc, char **argv) {
    MoeCli p;
    int rc = moe_cli_parse(argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    int64_t T = p.tokens, E = p.experts, K = p.topk, H = p.hidden, I = p.inter;
    size_t nx = (size_t)(T * H), nl = (size_t)(T * E), no = (size_t)(T * H), ns = (size_t)(T * K);
    uint16_t *hx = malloc(nz(nx * 2));
    float *hl = malloc(nz(sizeof(float) * nl)), *ho = malloc(nz(sizeof(float) * no));
    int32_t *ids = malloc(nz(sizeof(int32_t) * ns));
    double *vx = malloc(nz(sizeof(double) * nx));
    CheckMoeWeights w1 = {0}, w2 = {0};
    CheckRng rng;
    check_rng_init(&rng);
    tile_context *ctx = NULL;
    tile_moe_args a = {0};
    if (!hx || !hl || !ho || !ids || !vx || check_moe_weights_make(&w1, &rng, p.w, p.scales, E, 2 * I, H, I, 2 / sqrt((double)H)) ||
        check_moe_weights_make(&w2, &rng, p.w, p.scales, E, H, I, H, 2 / sqrt((double)I))) {
        fprintf(stderr, "tile: out of host memory\n");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    for (size_t i = 0; i < nx; i++) vx[i] = check_fill(p.act, hx, i, check_urand(&rng));
    for (size_t i = 0; i < nl; i++) hl[i] = (float)(check_urand(&rng) * 2);
    if ((rc = cli_context_open("run moe", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    size_t wb = p.w == TILE_F8E4M3 ? 1 : 2;
    /* Mixtral-style routing: softmax over the logits, top-k, renormalized */
    a = (tile_moe_args){.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = p.act, .weight_dtype = p.w,
                        .scales = p.scales, .logits_dtype = TILE_F32, .scoring = TILE_MOE_SOFTMAX, .renormalize = 1};
    size_t ws = 0;
    tile_status st = tile_moe_workspace_size(&a, &ws);
    if (st != TILE_OK) {
        fprintf(stderr, "tile: these sizes are not supported (tile_moe_workspace_size)\n");
        goto done;
    }
    if (tile_malloc(ctx, nz(nx * 2), &a.x) || tile_malloc(ctx, w1.n * wb, &a.w1) || tile_malloc(ctx, w2.n * wb, &a.w2) ||
        tile_malloc(ctx, nz(no * 4), &a.out) || tile_malloc(ctx, nz(nl * 4), &a.router_logits) || tile_malloc(ctx, nz(ns * 4), &a.topk_ids) ||
        tile_malloc(ctx, nz(ns * 4), &a.topk_weights) || tile_malloc(ctx, nz(ws), &a.workspace) || tile_memcpy_htod(ctx, a.x, hx, nx * 2) ||
        tile_memcpy_htod(ctx, a.w1, w1.w, w1.n * wb) || tile_memcpy_htod(ctx, a.w2, w2.w, w2.n * wb) ||
        tile_memcpy_htod(ctx, a.router_logits, hl, nl * 4) ||
        (w1.ns && (tile_malloc(ctx, w1.ns * 4, &a.w1_scale) || tile_malloc(ctx, w2.ns * 4, &a.w2_scale) ||
                   tile_memcpy_htod(ctx, a.w1_scale, w1.s, w1.ns * 4) || tile_memcpy_htod(ctx, a.w2_scale, w2.s, w2.ns * 4)))) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    a.workspace_bytes = ws;
    static const char *const scale_text[] = {[TILE_MOE_SCALES_NONE] = "", [TILE_MOE_SCALES_CHANNEL] = ", per-channel scales",
                                             [TILE_MOE_SCALES_BLOCK128] = ", 128x128 block scales"};
    bool prog = cli_progress_wanted(p.json) && props.is_emulator;
    if (!p.json) {
        printf("moe tokens %lld experts %lld top-%lld hidden %lld inter %lld, x %s, weights %s%s on %s (%s)\n", (long long)T, (long long)E,
               (long long)K, (long long)H, (long long)I, tile_dtype_name(p.act), tile_dtype_name(p.w), scale_text[p.scales], props.name,
               props.arch);
        fflush(stdout);
    }
    cli_progress(prog, "first call (compiles or loads the kernels) ...");
    double first;
    st = timer_call(moe_call, ctx, &a, &first);
    if (st != TILE_OK) {
        rc = cli_call_failed(ctx, "tile_moe_forward", st);
        goto done;
    }
    tile_memcpy_dtoh(ctx, ho, a.out, no * 4);
    tile_memcpy_dtoh(ctx, ids, a.topk_ids, ns * 4);
    CheckMoe cm = {.tokens = T, .experts = E, .topk = K, .hidden = H, .inter = I, .act = p.act, .x = vx, .logits = hl, .w1 = &w1,
                   .w2 = &w2, .check_tokens = p.check_tokens};
    int routing_ok;
    int64_t checked;
    cli_progress(prog, "checking against float64 ...");
    double worst = check_moe(&cm, ids, ho, &routing_ok, &checked);
    cli_progress(prog, "timing %d calls ...", p.reps);
    double med;
    st = timer_reps(moe_call, ctx, &a, p.reps, &med);
    if (med < 0) goto done;
    double flops = 2.0 * (double)T * K * 3 * H * I;
    if (p.json) {
        static const char *const scale_names_json[] = {[TILE_MOE_SCALES_NONE] = "none", [TILE_MOE_SCALES_CHANNEL] = "channel",
                                                       [TILE_MOE_SCALES_BLOCK128] = "block"};
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", "moe");
        json_int(&j, "tokens", T), json_int(&j, "experts", E), json_int(&j, "topk", K), json_int(&j, "hidden", H), json_int(&j, "inter", I);
        json_str(&j, "act_dtype", tile_dtype_name(p.act)), json_str(&j, "weight_dtype", tile_dtype_name(p.w));
        json_str(&j, "scales", scale_names_json[p.scales]);
        timer_json_device(&j, &props);
        timer_json_times(&j, first, med, p.reps);
        json_num(&j, "tflops", flops / med * 1e-12), json_bool(&j, "routing_ok", routing_ok), json_int(&j, "checked_tokens", checked);
        json_num(&j, "max_error", worst), json_bool(&j, "ok", st == TILE_OK && routing_ok && worst <= 1);
        json_end(&j);
    } else {
        char rate[64];
        snprintf(rate, sizeof rate, "%.2f TFLOP/s in the expert GEMMs", flops / med * 1e-12);
        timer_print_first(first);
        timer_print_next(med, p.reps, rate, props.is_emulator);
        if (!routing_ok) printf("  check       routing is not a top-%lld of the logits: MISMATCH\n", (long long)K);
        else
            printf("  check       %lld tokens against a float64 reference: max error %.3g of tolerance: %s\n", (long long)checked, worst,
                   worst <= 1 ? "ok" : "MISMATCH");
    }
    rc = st != TILE_OK ? CLI_EXIT_FAIL : worst <= 1 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
done:
    if (ctx) {
        tile_devptr bufs[] = {a.x, a.w1, a.w2, a.out, a.router_logits, a.topk_ids, a.topk_weights, a.workspace, a.w1_scale, a.w2_scale};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i]) tile_free(ctx, bufs[i]);
        tile_context_destroy(ctx);
    }
    free(hx), free(hl), free(ho), free(ids), free(vx);
    check_moe_weights_free(&w1), check_moe_weights_free(&w2);
    return rc;
}

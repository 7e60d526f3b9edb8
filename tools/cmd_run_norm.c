/* cmd_run_norm.c - `tile run norm` (tile_fused_add_rmsnorm, or with --layernorm
 * tile_fused_add_layernorm with a bias) and `tile run act`
 * (tile_gated_activation) on random data (docs/kernels.md).
 *
 *   1. parse the options both share (tokens, row length, dtype, quantization,
 *      device, reps, json) and each one's own (--no-residual, --layernorm; --act);
 *   2. random inputs in [-1, 1) (weights in [0.5, 1.5), a bias in [-0.5, 0.5)), kept exactly;
 *   3. the first call, timed with the compile or cache load; norm checks the
 *      updated residual bit for bit against round(f32(x + residual));
 *   4. every row of the output (and the scales) against ref/ through
 *      run_check.c;
 *   5. --reps further calls timed (norm keeps updating its residual, which
 *      changes the values, not the work), and one summary. */
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/json.h"
#include "tools/run_check.h"
#include "tools/timer.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct RowsCli {
    const char *cmd;         /* "norm" or "act" */
    int64_t tokens, n;
    tile_dtype dtype, quant; /* quant TILE_F32: none */
    int64_t group;           /* quant_group: 0 per token */
    bool residual, layer;    /* norm */
    tile_gated_act act;      /* act */
    int reps;
    bool json;
    const char *device;
} RowsCli;

enum { OPT_TOKENS = 256, OPT_N, OPT_DTYPE, OPT_QUANT, OPT_GROUP, OPT_NO_RESIDUAL, OPT_LAYERNORM, OPT_ACT };

static const struct option norm_options[] = {
    {"tokens", required_argument, NULL, OPT_TOKENS}, {"hidden", required_argument, NULL, OPT_N},
    {"dtype", required_argument, NULL, OPT_DTYPE},   {"quant", required_argument, NULL, OPT_QUANT},
    {"group", required_argument, NULL, OPT_GROUP},
    {"no-residual", no_argument, NULL, OPT_NO_RESIDUAL}, {"layernorm", no_argument, NULL, OPT_LAYERNORM},
    {"device", required_argument, NULL, CLI_OPT_DEVICE},
    {"reps", required_argument, NULL, CLI_OPT_REPS},     {"json", no_argument, NULL, CLI_OPT_JSON},
    {"help", no_argument, NULL, 'h'},                {0},
};
static const struct option act_options[] = {
    {"tokens", required_argument, NULL, OPT_TOKENS}, {"d", required_argument, NULL, OPT_N},
    {"dtype", required_argument, NULL, OPT_DTYPE},   {"quant", required_argument, NULL, OPT_QUANT},
    {"group", required_argument, NULL, OPT_GROUP},
    {"act", required_argument, NULL, OPT_ACT},       {"device", required_argument, NULL, CLI_OPT_DEVICE},
    {"reps", required_argument, NULL, CLI_OPT_REPS},     {"json", no_argument, NULL, CLI_OPT_JSON},
    {"help", no_argument, NULL, 'h'},                {0},
};

#define COMMON_OPTIONS \
    "  --tokens T             rows, one program each (default 64)\n" \
    "  --dtype f16|bf16       inputs, and the output unless quantized (default bf16)\n" \
    "  --quant none|f8e4m3|i8 per-token dynamic quantization of the output, scales f32 [tokens] (default none)\n" \
    "  --group G              with --quant: a scale per group of G columns (16..1024, a power of two; 128 as DeepSeek)\n" \
    "  --device D             emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n" \
    "  --reps R               timed calls (default 5)\n" \
    "  --json                 one JSON object on one line on stdout, nothing else there\n" \
    "  -h, --help             this text\n" \
    CLI_EXIT_HELP

static const char norm_usage[] =
    "usage: tile run norm [--tokens T] [--hidden H] [--dtype f16|bf16] [--quant none|f8e4m3|i8] [--group G]\n"
    "                     [--no-residual] [--layernorm] [--device D] [--reps R] [--json]\n"
    "Runs tile_fused_add_rmsnorm (residual += x, then RMSNorm of the residual) on random data and checks\n"
    "every row, the updated residual bit for bit, against float64.\n"
    "\n"
    "  --hidden H             row length, 1 .. 65536 (default 4096)\n"
    "  --no-residual          normalize x itself\n"
    "  --layernorm            tile_fused_add_layernorm, with a bias, instead\n" COMMON_OPTIONS;

static const char act_usage[] =
    "usage: tile run act [--tokens T] [--d D] [--act silu|gelu|gelu-tanh] [--dtype f16|bf16] [--quant none|f8e4m3|i8]\n"
    "                    [--group G] [--device D] [--reps R] [--json]\n"
    "Runs tile_gated_activation (out = act(gate) * up over rows [gate | up]) on random data and checks every\n"
    "row against float64.\n"
    "\n"
    "  --d D                  output row length (the input's is 2 D), 1 .. 2^20 (default 4096)\n"
    "  --act silu|gelu|gelu-tanh  the activation of the gate (default silu)\n" COMMON_OPTIONS;

static const tile_dtype in_types[] = {TILE_F16, TILE_BF16};
static const char *const quant_names[] = {"none", "f8e4m3", "i8", NULL};
static const tile_dtype quant_values[] = {TILE_F32, TILE_F8E4M3, TILE_I8};
static const char *const act_names[] = {"silu", "gelu", "gelu-tanh", NULL};

static int rows_cli_parse(const char *cmd, int argc, char **argv, RowsCli *p) {
    bool norm = strcmp(cmd, "run norm") == 0;
    *p = (RowsCli){.cmd = norm ? "norm" : "act", .tokens = 64, .n = 4096, .dtype = TILE_BF16, .quant = TILE_F32, .residual = true,
                   .act = TILE_GATED_SILU, .reps = 5};
    CliGetopt g = {.cmd = cmd, .argc = argc, .argv = argv, .shortopts = "h", .longopts = norm ? norm_options : act_options};
    int c, rc = 0, which;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(norm ? norm_usage : act_usage);
        case OPT_TOKENS: rc = cli_i64(&g, 0, INT32_MAX, &p->tokens); break;
        case OPT_N: rc = cli_i64(&g, 1, norm ? 65536 : 1 << 20, &p->n); break;
        case OPT_DTYPE: rc = cli_dtype(&g, in_types, 2, NULL, &p->dtype); break;
        case OPT_QUANT:
            if (!(rc = cli_choice(&g, quant_names, &which))) p->quant = quant_values[which];
            break;
        case OPT_GROUP: rc = cli_i64(&g, 16, 1024, &p->group); break;
        case OPT_NO_RESIDUAL: p->residual = false; break;
        case OPT_LAYERNORM: p->layer = true; break;
        case OPT_ACT:
            if (!(rc = cli_choice(&g, act_names, &which))) p->act = (tile_gated_act)which;
            break;
        default: rc = cli_common_option(&g, c, &p->device, &p->reps, &p->json); break;
        }
    }
    if (rc || (rc = cli_no_operands(&g))) return rc;
    if (p->group && (p->group & (p->group - 1))) return cli_usage_error(g.cmd, "--group %lld is not a power of two", (long long)p->group);
    if (p->group && p->quant == TILE_F32) return cli_usage_error(g.cmd, "--group needs --quant f8e4m3 or i8");
    return CLI_CONTINUE;
}

/* One launch of either command. */
typedef struct RowsCall {
    const RowsCli *p;
    tile_norm_args norm;
    tile_gated_args gated;
} RowsCall;

/* scale floats per launch: one per row, or per group of columns */
static size_t scale_count(const RowsCli *p) {
    return (size_t)p->tokens * (size_t)(p->group ? (p->n + p->group - 1) / p->group : 1);
}

static const char *rows_api(const RowsCli *p) {
    return strcmp(p->cmd, "norm") ? "tile_gated_activation" : p->layer ? "tile_fused_add_layernorm" : "tile_fused_add_rmsnorm";
}

static tile_status rows_call(tile_context *ctx, void *user) {
    const RowsCall *c = user;
    tile_status st = strcmp(c->p->cmd, "norm") ? tile_gated_activation(ctx, &c->gated)
                     : c->p->layer            ? tile_fused_add_layernorm(ctx, &c->norm)
                                              : tile_fused_add_rmsnorm(ctx, &c->norm);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

/* Steps 3-5 after the inputs are on the device: the first call, `check` (the command's, 0 or the worst
 * error over tolerance), the timed calls and the summary.  bytes: what one call reads and writes. */
static int rows_run(tile_context *ctx, const RowsCall *call, double (*check)(tile_context *, const RowsCall *, void *), void *user,
                    double bytes) {
    const RowsCli *p = call->p;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    bool prog = cli_progress_wanted(p->json) && props.is_emulator;
    static const char *const act_text[] = {"silu", "gelu", "gelu-tanh"};
    const char *norm_text[2][2] = {{"rmsnorm", "fused add + rmsnorm"}, {"layernorm", "fused add + layernorm"}};
    const char *what = strcmp(p->cmd, "norm") == 0 ? norm_text[p->layer][p->residual] : act_text[p->act];
    const char *quant = p->quant == TILE_F32 ? "none" : tile_dtype_name(p->quant);
    if (!p->json) {
        printf("%s %s tokens %lld %s %lld, %s, quantized %s on %s (%s)\n", p->cmd, what, (long long)p->tokens,
               strcmp(p->cmd, "norm") == 0 ? "hidden" : "d", (long long)p->n, tile_dtype_name(p->dtype), quant, props.name, props.arch);
        fflush(stdout);
    }
    cli_progress(prog, "first call (compiles or loads the kernel) ...");
    double first;
    tile_status st = timer_call(rows_call, ctx, (void *)call, &first);
    if (st != TILE_OK) {
        return cli_call_failed(ctx, rows_api(p), st);
    }
    cli_progress(prog, "checking against float64 ...");
    double worst = check(ctx, call, user);
    cli_progress(prog, "timing %d calls ...", p->reps);
    double med;
    st = timer_reps(rows_call, ctx, (void *)call, p->reps, &med);
    if (med < 0) return CLI_EXIT_FAIL;
    if (p->json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", p->cmd), json_str(&j, "op", what);
        json_int(&j, "tokens", p->tokens), json_int(&j, strcmp(p->cmd, "norm") == 0 ? "hidden" : "d", p->n);
        json_str(&j, "dtype", tile_dtype_name(p->dtype)), json_str(&j, "quant", quant);
        timer_json_device(&j, &props);
        timer_json_times(&j, first, med, p->reps);
        json_num(&j, "gbytes_per_second", bytes / med * 1e-9), json_int(&j, "checked_rows", p->tokens);
        json_num(&j, "max_error", worst), json_bool(&j, "ok", st == TILE_OK && worst <= 1);
        json_end(&j);
    } else {
        char rate[64];
        snprintf(rate, sizeof rate, "%.1f GB/s", bytes / med * 1e-9);
        timer_print_first(first);
        timer_print_next(med, p->reps, rate, props.is_emulator);
        printf("  check       %lld rows against a float64 reference: max error %.3g of tolerance: %s\n", (long long)p->tokens, worst,
               worst <= 1 ? "ok" : "MISMATCH");
    }
    if (st != TILE_OK) fprintf(stderr, "tile: a timed call failed: %s\n", tile_last_error(ctx));
    return st != TILE_OK || !(worst <= 1) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* Device buffers of both commands; 0 where unused. */
typedef struct RowsBufs {
    tile_devptr x, res, w, b, out, scales;
} RowsBufs;

static void rows_bufs_free(tile_context *ctx, RowsBufs *b) {
    tile_devptr v[] = {b->x, b->res, b->w, b->b, b->out, b->scales};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i]) tile_free(ctx, v[i]);
}

/* A buffer's size, at least 1: --tokens 0 (nothing to compute, as the API takes it) still allocates, malloc(0) may be
 * NULL and tile_malloc(0) is an error. */
static size_t nz(size_t n) { return n ? n : 1; }

/* The output and scales copied back: out_bytes of codes or 16-bit values, then scales. */
static void *rows_download(tile_context *ctx, const RowsCall *c, tile_devptr out, tile_devptr scales, float **hs) {
    const RowsCli *p = c->p;
    size_t es = p->quant == TILE_F32 ? 2 : 1, n = (size_t)(p->tokens * p->n);
    void *ho = malloc(nz(n * es));
    *hs = malloc(nz(sizeof(float) * scale_count(p)));
    if (!ho || !*hs || tile_memcpy_dtoh(ctx, ho, out, n * es) ||
        (scales && tile_memcpy_dtoh(ctx, *hs, scales, sizeof(float) * scale_count(p)))) {
        free(ho), free(*hs);
        *hs = NULL;
        return NULL;
    }
    return ho;
}

/* ---- tile run norm ---- */
typedef struct NormData {
    RowsBufs b;
    const uint16_t *hx, *hr;  /* the inputs as drawn */
    const double *w, *bias;
} NormData;

static double norm_check(tile_context *ctx, const RowsCall *c, void *user) {
    NormData *d = user;
    const RowsCli *p = c->p;
    size_t n = (size_t)(p->tokens * p->n);
    double *z = malloc(nz(sizeof(double) * n)), worst = INFINITY;
    uint16_t *hr = malloc(nz(2 * n));
    float *hs = NULL;
    void *ho = rows_download(ctx, c, d->b.out, d->b.scales, &hs);
    if (!z || !hr || !ho || (p->residual && tile_memcpy_dtoh(ctx, hr, d->b.res, 2 * n))) goto done;
    for (size_t i = 0; i < n; i++) {
        z[i] = check_get(p->dtype, d->hx, i);
        if (!p->residual) continue;
        uint16_t want[1];
        z[i] = check_fill(p->dtype, want, 0, (float)(z[i] + check_get(p->dtype, d->hr, i)));
        if (want[0] != hr[i]) {
            if (!p->json) printf("  residual    element %zu is 0x%04x, want 0x%04x: MISMATCH\n", i, hr[i], want[0]);
            goto done;
        }
    }
    CheckRows cr = {.tokens = p->tokens, .n = p->n, .dtype = p->dtype, .quant = p->quant, .group = p->group};
    worst = check_norm(&cr, p->layer, z, d->w, p->layer ? d->bias : NULL, c->norm.eps, ho, hs);
done:
    free(z), free(hr), free(ho), free(hs);
    return worst;
}

int cmd_run_norm(int argc, char **argv) {
    RowsCli p;
    int rc = rows_cli_parse("run norm", argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    size_t n = (size_t)(p.tokens * p.n), H = (size_t)p.n, oes = p.quant == TILE_F32 ? 2 : 1;
    uint16_t *hx = malloc(nz(2 * n)), *hr = malloc(nz(2 * n)), *hw = malloc(2 * H), *hb = malloc(2 * H);
    double *w = malloc(sizeof(double) * H), *b = malloc(sizeof(double) * H);
    tile_context *ctx = NULL;
    NormData d = {.hx = hx, .hr = hr, .w = w, .bias = b};
    rc = CLI_EXIT_FAIL;
    if (!hx || !hr || !hw || !hb || !w || !b) {
        fprintf(stderr, "tile: out of host memory\n");
        goto done;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (size_t i = 0; i < n; i++) check_fill(p.dtype, hx, i, check_urand(&rng));
    for (size_t i = 0; i < n; i++) check_fill(p.dtype, hr, i, check_urand(&rng));
    for (size_t i = 0; i < H; i++) w[i] = check_fill(p.dtype, hw, i, 1 + 0.5 * check_urand(&rng));
    for (size_t i = 0; i < H; i++) b[i] = check_fill(p.dtype, hb, i, 0.5 * check_urand(&rng));
    if ((rc = cli_context_open("run norm", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    if (tile_malloc(ctx, nz(2 * n), &d.b.x) || tile_malloc(ctx, 2 * H, &d.b.w) || tile_malloc(ctx, nz(oes * n), &d.b.out) ||
        (p.residual && tile_malloc(ctx, nz(2 * n), &d.b.res)) || (p.layer && tile_malloc(ctx, 2 * H, &d.b.b)) ||
        (p.layer && tile_memcpy_htod(ctx, d.b.b, hb, 2 * H)) || (p.quant != TILE_F32 && tile_malloc(ctx, nz(4 * scale_count(&p)), &d.b.scales)) ||
        tile_memcpy_htod(ctx, d.b.x, hx, 2 * n) || tile_memcpy_htod(ctx, d.b.w, hw, 2 * H) ||
        (p.residual && tile_memcpy_htod(ctx, d.b.res, hr, 2 * n))) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    RowsCall call = {.p = &p,
                     .norm = {.size = sizeof(tile_norm_args), .dtype = p.dtype, .tokens = p.tokens, .hidden = p.n, .x = d.b.x,
                              .residual = d.b.res, .weight = d.b.w, .bias = d.b.b, .eps = 1e-6f, .out = d.b.out, .quant_dtype = p.quant,
                              .scales = d.b.scales, .quant_group = p.group}};
    double bytes = (double)n * (2 + (p.residual ? 4 : 0) + oes) + (p.layer ? 4.0 : 2.0) * (double)H + (p.quant != TILE_F32 ? 4.0 * (double)scale_count(&p) : 0);
    rc = rows_run(ctx, &call, norm_check, &d, bytes);
done:
    if (ctx) rows_bufs_free(ctx, &d.b), tile_context_destroy(ctx);
    free(hx), free(hr), free(hw), free(hb), free(w), free(b);
    return rc;
}

/* ---- tile run act ---- */
typedef struct ActData {
    RowsBufs b;
    const double *x;
} ActData;

static double act_check(tile_context *ctx, const RowsCall *c, void *user) {
    ActData *d = user;
    float *hs = NULL;
    void *ho = rows_download(ctx, c, d->b.out, d->b.scales, &hs);
    CheckRows cr = {.tokens = c->p->tokens, .n = c->p->n, .dtype = c->p->dtype, .quant = c->p->quant, .group = c->p->group};
    double worst = ho ? check_gated(&cr, c->p->act, d->x, ho, hs) : INFINITY;
    free(ho), free(hs);
    return worst;
}

int cmd_run_act(int argc, char **argv) {
    RowsCli p;
    int rc = rows_cli_parse("run act", argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    size_t nx = (size_t)(p.tokens * 2 * p.n), no = (size_t)(p.tokens * p.n), oes = p.quant == TILE_F32 ? 2 : 1;
    uint16_t *hx = malloc(nz(2 * nx));
    double *x = malloc(nz(sizeof(double) * nx));
    tile_context *ctx = NULL;
    ActData d = {.x = x};
    rc = CLI_EXIT_FAIL;
    if (!hx || !x) {
        fprintf(stderr, "tile: out of host memory\n");
        goto done;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (size_t i = 0; i < nx; i++) x[i] = check_fill(p.dtype, hx, i, 4 * check_urand(&rng)); /* [-4, 4]: both tails */
    if ((rc = cli_context_open("run act", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    if (tile_malloc(ctx, nz(2 * nx), &d.b.x) || tile_malloc(ctx, nz(oes * no), &d.b.out) ||
        (p.quant != TILE_F32 && tile_malloc(ctx, nz(4 * scale_count(&p)), &d.b.scales)) || tile_memcpy_htod(ctx, d.b.x, hx, 2 * nx)) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    RowsCall call = {.p = &p,
                     .gated = {.size = sizeof(tile_gated_args), .dtype = p.dtype, .act = p.act, .tokens = p.tokens, .d = p.n, .x = d.b.x,
                               .out = d.b.out, .quant_dtype = p.quant, .scales = d.b.scales,
                               .quant_group = p.group}};
    double bytes = 2.0 * (double)nx + (double)(oes * no) + (p.quant != TILE_F32 ? 4.0 * (double)scale_count(&p) : 0);
    rc = rows_run(ctx, &call, act_check, &d, bytes);
done:
    if (ctx) rows_bufs_free(ctx, &d.b), tile_context_destroy(ctx);
    free(hx), free(x);
    return rc;
}

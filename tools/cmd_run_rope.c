/* cmd_run_rope.c - `tile run rope`: tile_rope_kv_append (RoPE of Q and K,
 * then K and V appended to a paged KV cache) on random data (docs/kernels.md).
 *
 *   1. parse the options (tokens, heads, head_dim, rot_dim, style, dtypes,
 *      block size, device, reps, json);
 *   2. random Q, K, V in [-1, 1) kept exactly, a cos_sin table of 4096
 *      positions (base 10000, f32), random positions, distinct slots drawn
 *      from a shuffled cache with a spare block, every 8th token padding
 *      (slot -1);
 *   3. the first call, timed with the compile or cache load;
 *   4. every head of Q and K against ref_rope (half an ulp of the type plus
 *      2^-22 of the terms, plus 1e-4 relative as the other `tile run`
 *      checks); every appended cache entry against the rotated K and V: bit
 *      for bit in f16/bf16, within half an f8e4m3 step (2^-4 relative, or
 *      scale * 2^-10 among the subnormal codes) of value / scale for an f8
 *      cache; the padding tokens' slots and the spare block untouched;
 *   5. --reps further calls timed (they keep rotating Q and K in place: the
 *      values change, not the work), and one summary. */
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/json.h"
#include "tools/run_check.h"
#include "tools/timer.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct RopeCli {
    int64_t tokens, heads_q, heads_kv, head_dim, rot_dim, block_size;
    tile_rope_style style;
    tile_dtype dtype, kv;
    int reps;
    bool json;
    const char *device;
} RopeCli;

enum { OPT_TOKENS = 256, OPT_HQ, OPT_HK, OPT_D, OPT_ROT, OPT_STYLE, OPT_DTYPE, OPT_KV, OPT_BS };
enum { MAX_POSITION = 4096, PAD_EVERY = 8 };

static const struct option rope_options[] = {
    {"tokens", required_argument, NULL, OPT_TOKENS},   {"heads-q", required_argument, NULL, OPT_HQ},
    {"heads", required_argument, NULL, OPT_HQ},        {"heads-kv", required_argument, NULL, OPT_HK},
    {"head-dim", required_argument, NULL, OPT_D},      {"rot-dim", required_argument, NULL, OPT_ROT},
    {"style", required_argument, NULL, OPT_STYLE},     {"dtype", required_argument, NULL, OPT_DTYPE},
    {"kv-dtype", required_argument, NULL, OPT_KV},     {"block-size", required_argument, NULL, OPT_BS},
    {"device", required_argument, NULL, CLI_OPT_DEVICE},   {"reps", required_argument, NULL, CLI_OPT_REPS},
    {"json", no_argument, NULL, CLI_OPT_JSON},             {"help", no_argument, NULL, 'h'},
    {0},
};

static const char rope_usage[] =
    "usage: tile run rope [--tokens T] [--heads-q H] [--heads-kv HK] [--head-dim D] [--rot-dim R] [--style neox|gptj]\n"
    "                     [--dtype f16|bf16] [--kv-dtype auto|f8e4m3] [--block-size B] [--device D] [--reps R] [--json]\n"
    "Runs tile_rope_kv_append (rotary embedding of Q and K in place, K and V appended to a paged KV cache) on\n"
    "random data and checks every head of Q and K and every appended cache entry against float64.\n"
    "\n"
    "  --tokens T             new tokens (default 64; every 8th is padding, slot -1; 0: nothing to compute)\n"
    "  --heads-q H            query heads (default 32; --heads is the same)\n"
    "  --heads-kv HK          KV heads (default 8)\n"
    "  --head-dim D           2 .. 256 (default 128)\n"
    "  --rot-dim R            rotated dims, even, <= D; 0: D (default 0)\n"
    "  --style neox|gptj      pairs (i, i + R/2) or (2i, 2i + 1) (default neox)\n"
    "  --dtype f16|bf16       q, k, v (default bf16)\n"
    "  --kv-dtype auto|f8e4m3 the caches: dtype, or f8e4m3 with per-tensor scales (default auto)\n"
    "  --block-size B         cache block size (default 16)\n"
    "  --device D             emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n"
    "  --reps R               timed calls (default 5)\n"
    "  --json                 one JSON object on one line on stdout, nothing else there\n"
    "  -h, --help             this text\n"
    CLI_EXIT_HELP;

static const tile_dtype in_types[] = {TILE_F16, TILE_BF16};
static const char *const style_names[] = {"neox", "gptj", NULL};
static const char *const kv_names[] = {"auto", "f8e4m3", NULL};

static int rope_cli_parse(int argc, char **argv, RopeCli *p) {
    *p = (RopeCli){.tokens = 64, .heads_q = 32, .heads_kv = 8, .head_dim = 128, .block_size = 16, .dtype = TILE_BF16, .reps = 5};
    CliGetopt g = {.cmd = "run rope", .argc = argc, .argv = argv, .shortopts = "h", .longopts = rope_options};
    int c, rc = 0, which;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(rope_usage);
        case OPT_TOKENS: rc = cli_i64(&g, 0, 1 << 24, &p->tokens); break; /* 0, as the API takes it: nothing to compute */
        case OPT_HQ: rc = cli_i64(&g, 1, 1024, &p->heads_q); break;
        case OPT_HK: rc = cli_i64(&g, 1, 1024, &p->heads_kv); break;
        case OPT_D: rc = cli_i64(&g, 2, 256, &p->head_dim); break;
        case OPT_ROT: rc = cli_i64(&g, 0, 256, &p->rot_dim); break;
        case OPT_STYLE:
            if (!(rc = cli_choice(&g, style_names, &which))) p->style = (tile_rope_style)which;
            break;
        case OPT_DTYPE: rc = cli_dtype(&g, in_types, 2, NULL, &p->dtype); break;
        case OPT_KV:
            if (!(rc = cli_choice(&g, kv_names, &which))) p->kv = which ? TILE_F8E4M3 : TILE_F32;
            break;
        case OPT_BS: rc = cli_i64(&g, 1, 1024, &p->block_size); break;
        default: rc = cli_common_option(&g, c, &p->device, &p->reps, &p->json); break;
        }
    }
    if (rc || (rc = cli_no_operands(&g))) return rc;
    if (p->rot_dim > p->head_dim || p->rot_dim % 2) return cli_usage_error(g.cmd, "--rot-dim must be even and at most --head-dim");
    if (!p->rot_dim && p->head_dim % 2) /* --rot-dim 0 rotates all of D (it ran and the library refused rot_dim = D) */
        return cli_usage_error(g.cmd, "--head-dim %lld is odd: rotating all of it (--rot-dim 0) needs an even --head-dim, or give an even --rot-dim",
                               (long long)p->head_dim);
    return CLI_CONTINUE;
}

/* Host data: the inputs as drawn (16-bit), their layout, and the call's buffers */
typedef struct RopeData {
    int64_t rot, num_blocks, nq, nk, ncache;
    uint16_t *q, *k, *v;
    float *cs;
    int64_t *pos, *slot;
    tile_devptr dq, dk, dv, dcs, dpos, dslot, dkc, dvc;
    float k_scale, v_scale;
} RopeData;

/* One value against its reference y: |error| / tolerance */
static double rope_err(tile_dtype t, double got, double y, double mag) {
    double tol = (t == TILE_F16 ? 0x1p-11 : 0x1p-8) * fabs(y) + 1e-4 * fabs(y) + 0x1p-22 * mag + 0x1p-25;
    return fabs(got - y) / tol;
}

/* Step 4: the worst error over tolerance (> 1 fails, NaN counts as worst); *appended: tokens checked in the caches */
static double rope_check(tile_context *ctx, const RopeCli *p, const RopeData *d, int64_t *appended) {
    int64_t T = p->tokens, Hq = p->heads_q, Hk = p->heads_kv, D = p->head_dim, rot = d->rot;
    bool f8 = p->kv == TILE_F8E4M3;
    size_t kes = f8 ? 1 : 2;
    uint16_t *gq = malloc(cli_alloc_size(2 * (size_t)d->nq)), *gk = malloc(cli_alloc_size(2 * (size_t)d->nk));
    uint8_t *kc = malloc(kes * (size_t)d->ncache), *vc = malloc(kes * (size_t)d->ncache);
    bool *written = calloc((size_t)d->ncache, 1);
    double *x = malloc(sizeof(double) * 4 * (size_t)D), worst = INFINITY;
    double *y = x + D, *mag = x + 2 * D, *cs = x + 3 * D;
    *appended = 0;
    if (!gq || !gk || !kc || !vc || !written || !x || tile_memcpy_dtoh(ctx, gq, d->dq, 2 * (size_t)d->nq) ||
        tile_memcpy_dtoh(ctx, gk, d->dk, 2 * (size_t)d->nk) || tile_memcpy_dtoh(ctx, kc, d->dkc, kes * (size_t)d->ncache) ||
        tile_memcpy_dtoh(ctx, vc, d->dvc, kes * (size_t)d->ncache))
        goto done;
    worst = 0;
    for (int64_t t = 0; t < T; t++) {
        for (int64_t i = 0; i < rot; i++) cs[i] = d->cs[d->pos[t] * rot + i];
        for (int64_t hh = 0; hh < Hq + Hk; hh++) {
            bool is_q = hh < Hq;
            const uint16_t *in = is_q ? d->q + (t * Hq + hh) * D : d->k + (t * Hk + hh - Hq) * D;
            const uint16_t *out = is_q ? gq + (t * Hq + hh) * D : gk + (t * Hk + hh - Hq) * D;
            for (int64_t i = 0; i < D; i++) x[i] = check_get(p->dtype, in, (size_t)i);
            ref_rope(p->style, D, rot, x, cs, cs + rot / 2, y, mag);
            for (int64_t i = 0; i < D; i++) {
                double e = rope_err(p->dtype, check_get(p->dtype, out, (size_t)i), y[i], mag[i]);
                if (!(e <= worst)) worst = e;
            }
        }
        if (d->slot[t] < 0) continue;
        ++*appended;
        /* the cache entry: the rotated K (as stored in k) and V, bit for bit or quantized */
        for (int64_t h = 0; h < Hk; h++)
            for (int64_t i = 0; i < D; i++) {
                size_t c = (size_t)((d->slot[t] * Hk + h) * D + i), src = (size_t)((t * Hk + h) * D + i);
                written[c] = true;
                for (int which = 0; which < 2; which++) {
                    const uint16_t *from = which ? d->v : gk;
                    const uint8_t *cache = which ? vc : kc;
                    double e;
                    if (!f8) {
                        e = ((const uint16_t *)cache)[c] == from[src] ? 0 : INFINITY;
                    } else {
                        double s = which ? d->v_scale : d->k_scale, want = check_get(p->dtype, from, src), got = f8e4m3_to_d(cache[c]) * s;
                        e = fabs(got - want) / (fmax(0x1p-4 * fabs(want), s * 0x1p-10) + 1e-6);
                    }
                    if (!(e <= worst)) worst = e;
                }
            }
    }
    /* nothing else written: the poison (0xff bytes: NaN in every cache type) is intact */
    for (int64_t c = 0; c < d->ncache; c++)
        if (!written[c] && (memcmp(kc + (size_t)c * kes, "\xff\xff", kes) || memcmp(vc + (size_t)c * kes, "\xff\xff", kes))) {
            if (!p->json) printf("  cache       element %lld written, but no token's slot holds it: MISMATCH\n", (long long)c);
            worst = INFINITY;
            break;
        }
done:
    free(gq), free(gk), free(kc), free(vc), free(written), free(x);
    return worst;
}

static tile_status rope_call(tile_context *ctx, void *a) {
    tile_status st = tile_rope_kv_append(ctx, a);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

int cmd_run_rope(int argc, char **argv) {
    RopeCli p;
    int rc = rope_cli_parse(argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    int64_t T = p.tokens, Hq = p.heads_q, Hk = p.heads_kv, D = p.head_dim;
    RopeData d = {.rot = p.rot_dim ? p.rot_dim : D, .nq = T * Hq * D, .nk = T * Hk * D, .k_scale = 1.0f / 256, .v_scale = 1.0f / 256};
    d.num_blocks = (T + p.block_size - 1) / p.block_size + 1; /* a spare block nothing may touch */
    d.ncache = d.num_blocks * p.block_size * Hk * D;
    bool f8 = p.kv == TILE_F8E4M3;
    size_t kes = f8 ? 1 : 2, slots = (size_t)(d.num_blocks * p.block_size);
    d.q = malloc(cli_alloc_size(2 * (size_t)d.nq)), d.k = malloc(cli_alloc_size(2 * (size_t)d.nk)), d.v = malloc(cli_alloc_size(2 * (size_t)d.nk));
    d.cs = malloc(sizeof(float) * MAX_POSITION * (size_t)d.rot);
    d.pos = malloc(cli_alloc_size(sizeof(int64_t) * (size_t)T)), d.slot = malloc(cli_alloc_size(sizeof(int64_t) * (size_t)T));
    int64_t *perm = malloc(sizeof(int64_t) * slots);
    tile_context *ctx = NULL;
    rc = CLI_EXIT_FAIL;
    if (!d.q || !d.k || !d.v || !d.cs || !d.pos || !d.slot || !perm) {
        fprintf(stderr, "tile: out of host memory\n");
        goto done;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (int64_t i = 0; i < d.nq; i++) check_fill(p.dtype, d.q, (size_t)i, check_urand(&rng));
    for (int64_t i = 0; i < d.nk; i++) check_fill(p.dtype, d.k, (size_t)i, check_urand(&rng));
    for (int64_t i = 0; i < d.nk; i++) check_fill(p.dtype, d.v, (size_t)i, check_urand(&rng));
    for (int64_t pp = 0; pp < MAX_POSITION; pp++)
        for (int64_t i = 0; i < d.rot / 2; i++) {
            double th = (double)pp * pow(10000.0, -2.0 * (double)i / (double)d.rot);
            d.cs[pp * d.rot + i] = (float)cos(th), d.cs[pp * d.rot + d.rot / 2 + i] = (float)sin(th);
        }
    /* the slots of all blocks but the last, shuffled: the last block stays empty */
    size_t used = (size_t)((d.num_blocks - 1) * p.block_size);
    for (size_t i = 0; i < used; i++) perm[i] = (int64_t)i;
    for (size_t i = used ? used - 1 : 0; i > 0; i--) { /* --tokens 0: no used block */
        size_t j = (size_t)((check_urand(&rng) + 1) / 2 * (double)(i + 1));
        if (j > i) j = i;
        int64_t s = perm[i];
        perm[i] = perm[j], perm[j] = s;
    }
    for (int64_t t = 0; t < T; t++) {
        d.pos[t] = (int64_t)((check_urand(&rng) + 1) / 2 * MAX_POSITION) % MAX_POSITION;
        d.slot[t] = t % PAD_EVERY == PAD_EVERY - 1 ? -1 : perm[t];
    }
    if ((rc = cli_context_open("run rope", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    size_t cs_bytes = sizeof(float) * MAX_POSITION * (size_t)d.rot;
    if (tile_malloc(ctx, cli_alloc_size(2 * (size_t)d.nq), &d.dq) || tile_malloc(ctx, cli_alloc_size(2 * (size_t)d.nk), &d.dk) ||
        tile_malloc(ctx, cli_alloc_size(2 * (size_t)d.nk), &d.dv) || tile_malloc(ctx, cs_bytes, &d.dcs) ||
        tile_malloc(ctx, cli_alloc_size(8 * (size_t)T), &d.dpos) || tile_malloc(ctx, cli_alloc_size(8 * (size_t)T), &d.dslot) ||
        tile_malloc(ctx, kes * (size_t)d.ncache, &d.dkc) || tile_malloc(ctx, kes * (size_t)d.ncache, &d.dvc) ||
        tile_memcpy_htod(ctx, d.dq, d.q, 2 * (size_t)d.nq) || tile_memcpy_htod(ctx, d.dk, d.k, 2 * (size_t)d.nk) ||
        tile_memcpy_htod(ctx, d.dv, d.v, 2 * (size_t)d.nk) || tile_memcpy_htod(ctx, d.dcs, d.cs, cs_bytes) ||
        tile_memcpy_htod(ctx, d.dpos, d.pos, 8 * (size_t)T) || tile_memcpy_htod(ctx, d.dslot, d.slot, 8 * (size_t)T) ||
        tile_memset(ctx, d.dkc, 0xff, kes * (size_t)d.ncache) || tile_memset(ctx, d.dvc, 0xff, kes * (size_t)d.ncache)) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    tile_rope_args a = {.size = sizeof a, .dtype = p.dtype, .style = p.style, .tokens = T, .heads_q = Hq, .heads_kv = Hk, .head_dim = D,
                        .rot_dim = d.rot, .q = d.dq, .k = d.dk, .v = d.dv, .positions = d.dpos, .positions_dtype = TILE_I64,
                        .cos_sin = d.dcs, .cos_sin_dtype = TILE_F32, .max_position = MAX_POSITION, .k_cache = d.dkc, .v_cache = d.dvc,
                        .num_blocks = d.num_blocks, .block_size = p.block_size, .slot_mapping = d.dslot, .slot_dtype = TILE_I64,
                        .kv_dtype = f8 ? TILE_F8E4M3 : p.dtype, .k_scale = f8 ? d.k_scale : 0, .v_scale = f8 ? d.v_scale : 0};

    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    bool prog = cli_progress_wanted(p.json) && props.is_emulator;
    const char *style = p.style == TILE_ROPE_GPTJ ? "gptj" : "neox", *kvname = tile_dtype_name(f8 ? TILE_F8E4M3 : p.dtype);
    if (!p.json) {
        printf("rope %s tokens %lld heads %lld/%lld head_dim %lld rot_dim %lld, %s, cache %s block %lld on %s (%s)\n", style, (long long)T,
               (long long)Hq, (long long)Hk, (long long)D, (long long)d.rot, tile_dtype_name(p.dtype), kvname, (long long)p.block_size,
               props.name, props.arch);
        fflush(stdout);
    }
    cli_progress(prog, "first call (compiles or loads the kernel) ...");
    double first;
    tile_status st = timer_call(rope_call, ctx, &a, &first);
    if (st != TILE_OK) {
        rc = cli_call_failed(ctx, "tile_rope_kv_append", st);
        goto done;
    }
    cli_progress(prog, "checking against float64 ...");
    int64_t appended;
    double worst = rope_check(ctx, &p, &d, &appended);
    cli_progress(prog, "timing %d calls ...", p.reps);
    double med;
    st = timer_reps(rope_call, ctx, &a, p.reps, &med);
    if (med < 0) goto done;
    /* read q, k, v, positions, slots, one cos_sin row per token; write q, k and the appended cache entries */
    double bytes = 2.0 * (double)(2 * d.nq + 3 * d.nk) + 16.0 * (double)T + 4.0 * (double)(T * d.rot) +
                   2.0 * (double)kes * (double)(appended * Hk * D);
    if (p.json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", "rope"), json_str(&j, "style", style);
        json_int(&j, "tokens", T), json_int(&j, "heads_q", Hq), json_int(&j, "heads_kv", Hk), json_int(&j, "head_dim", D);
        json_int(&j, "rot_dim", d.rot), json_str(&j, "dtype", tile_dtype_name(p.dtype)), json_str(&j, "kv_dtype", kvname);
        json_int(&j, "block_size", p.block_size);
        timer_json_device(&j, &props);
        timer_json_times(&j, first, med, p.reps);
        json_num(&j, "gbytes_per_second", bytes / med * 1e-9), json_int(&j, "checked_tokens", T), json_int(&j, "appended_tokens", appended);
        json_num(&j, "max_error", worst), json_bool(&j, "ok", st == TILE_OK && worst <= 1);
        json_end(&j);
    } else {
        char rate[64];
        snprintf(rate, sizeof rate, "%.1f GB/s", bytes / med * 1e-9);
        timer_print_first(first);
        timer_print_next(med, p.reps, rate, props.is_emulator);
        printf("  check       %lld tokens (%lld appended, %lld padding) against a float64 reference: max error %.3g of tolerance: %s\n",
               (long long)T, (long long)appended, (long long)(T - appended), worst, worst <= 1 ? "ok" : "MISMATCH");
    }
    if (st != TILE_OK) fprintf(stderr, "tile: a timed call failed: %s\n", tile_last_error(ctx));
    rc = st != TILE_OK || !(worst <= 1) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
done:
    if (ctx) {
        tile_devptr bufs[] = {d.dq, d.dk, d.dv, d.dcs, d.dpos, d.dslot, d.dkc, d.dvc};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i]) tile_free(ctx, bufs[i]);
        tile_context_destroy(ctx);
    }
    free(d.q), free(d.k), free(d.v), free(d.cs), free(d.pos), free(d.slot), free(perm);
    return rc;
}

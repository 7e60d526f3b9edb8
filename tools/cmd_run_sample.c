/* cmd_run_sample.c - `tile run sample` (tile_sample) and `tile run spec`
 * (tile_spec_verify) on random data (docs/kernels.md).
 *
 *   1. parse the options (sizes, filters, seed, device, reps, json);
 *   2. random inputs kept exactly: logits in [-S, S) (S = --spread), every row
 *      its own seed and offset; for spec, target and draft probabilities as
 *      softmaxes of nearby random logits, the drafts drawn from q;
 *   3. the first call, timed with the compile or cache load;
 *   4. every row against the float64 references of ref/ (ref_sample_probs and
 *      ref_sample_pick, ref_spec_verify) with the same Philox words: a token
 *      must equal the reference's, except where the reference reports a
 *      decision within rounding of going the other way (then it must lie in
 *      the kept set, between the neighbours the reference allows); such rows
 *      are counted and reported; with --probs, also the token the uniform
 *      picks from the probabilities the kernel wrote (to 2e-6, every row);
 *   5. --reps further calls timed, and one summary. */
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/json.h"
#include "tools/run_check.h"
#include "tools/timer.h"

#include "ref/ref.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* decisions closer than these may go either way in f32 (as tests/test_sample.c); EPS_DEVICE for the draw from
 * the probabilities the kernel wrote (--probs), whose only difference is the kernel's f32 prefix sum */
static const double EPS_DRAW = 2e-5, EPS_SET = 5e-6, EPS_DEVICE = 2e-6;

typedef struct SampleCli {
    bool spec;
    int64_t batch, vocab, drafts;
    tile_dtype dtype;
    double temperature, top_p, min_p, spread;
    int64_t top_k;
    bool greedy, probs;
    int64_t seed;
    int reps;
    bool json;
    const char *device;
} SampleCli;

enum {
    OPT_BATCH = 256, OPT_VOCAB, OPT_DTYPE, OPT_TEMP, OPT_TOPK, OPT_TOPP, OPT_MINP, OPT_SPREAD, OPT_PROBS, OPT_DRAFTS, OPT_GREEDY,
    OPT_SEED
};

static const struct option sample_options[] = {
    {"batch", required_argument, NULL, OPT_BATCH},   {"vocab", required_argument, NULL, OPT_VOCAB},
    {"dtype", required_argument, NULL, OPT_DTYPE},   {"temperature", required_argument, NULL, OPT_TEMP},
    {"top-k", required_argument, NULL, OPT_TOPK},    {"top-p", required_argument, NULL, OPT_TOPP},
    {"min-p", required_argument, NULL, OPT_MINP},    {"spread", required_argument, NULL, OPT_SPREAD},
    {"probs", no_argument, NULL, OPT_PROBS},         {"seed", required_argument, NULL, OPT_SEED},
    {"device", required_argument, NULL, CLI_OPT_DEVICE}, {"reps", required_argument, NULL, CLI_OPT_REPS},
    {"json", no_argument, NULL, CLI_OPT_JSON},           {"help", no_argument, NULL, 'h'},
    {0},
};
static const struct option spec_options[] = {
    {"batch", required_argument, NULL, OPT_BATCH},   {"vocab", required_argument, NULL, OPT_VOCAB},
    {"drafts", required_argument, NULL, OPT_DRAFTS}, {"greedy", no_argument, NULL, OPT_GREEDY},
    {"seed", required_argument, NULL, OPT_SEED},     {"device", required_argument, NULL, CLI_OPT_DEVICE},
    {"reps", required_argument, NULL, CLI_OPT_REPS},     {"json", no_argument, NULL, CLI_OPT_JSON},
    {"help", no_argument, NULL, 'h'},                {0},
};

#define COMMON_OPTIONS \
    "  --seed S               the first request's Philox seed; request r uses S + r (default 1)\n" \
    "  --device D             emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n" \
    "  --reps R               timed calls (default 5)\n" \
    "  --json                 one JSON object on one line on stdout, nothing else there\n" \
    "  -h, --help             this text\n" \
    CLI_EXIT_HELP

static const char sample_usage[] =
    "usage: tile run sample [--batch B] [--vocab V] [--dtype f32|f16|bf16] [--temperature T] [--top-k K]\n"
    "                       [--top-p P] [--min-p M] [--spread S] [--probs] [--seed S] [--device D] [--reps R] [--json]\n"
    "Runs tile_sample (one token per row of random logits) and checks every row's token against a float64\n"
    "reference drawing with the same Philox numbers.\n"
    "\n"
    "  --batch B              rows (requests), one program each (default 64; 0: nothing to compute)\n"
    "  --vocab V              1 .. 2^20 (default 32000)\n"
    "  --dtype f32|f16|bf16   the logits (default f32)\n"
    "  --temperature T        0: greedy (default 1)\n"
    "  --top-k K              0: off (default 50)\n"
    "  --top-p P              in (0, 1], 1: off (default 0.9)\n"
    "  --min-p M              in [0, 1], 0: off (default 0)\n"
    "  --spread S             logits uniform in [-S, S) (default 8)\n"
    "  --probs                also write (and check) the processed probabilities\n" COMMON_OPTIONS;

static const char spec_usage[] =
    "usage: tile run spec [--batch B] [--drafts N] [--vocab V] [--greedy] [--seed S] [--device D] [--reps R] [--json]\n"
    "Runs tile_spec_verify (speculative-decoding acceptance) on random target and draft probabilities, drafts\n"
    "drawn from the draft distribution, and checks every row against a float64 reference.\n"
    "\n"
    "  --batch B              sequences, one program each (default 64; 0: nothing to compute)\n"
    "  --drafts N             draft tokens per sequence, 1 .. 64 (default 4)\n"
    "  --vocab V              1 .. 2^20 (default 32000)\n"
    "  --greedy               greedy verification (argmax) instead of rejection sampling\n" COMMON_OPTIONS;

static const tile_dtype in_types[] = {TILE_F32, TILE_F16, TILE_BF16};

static int sample_cli_parse(bool spec, int argc, char **argv, SampleCli *p) {
    const char *cmd = spec ? "run spec" : "run sample";
    *p = (SampleCli){.spec = spec, .batch = 64, .vocab = 32000, .drafts = 4, .dtype = TILE_F32, .temperature = 1,
                     .top_p = 0.9, .top_k = 50, .spread = 8, .seed = 1, .reps = 5};
    CliGetopt g = {.cmd = cmd, .argc = argc, .argv = argv, .shortopts = "h", .longopts = spec ? spec_options : sample_options};
    int c, rc = 0;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(spec ? spec_usage : sample_usage);
        case OPT_BATCH: rc = cli_i64(&g, 0, INT32_MAX, &p->batch); break; /* 0, as the API takes it: nothing to compute */
        case OPT_VOCAB: rc = cli_i64(&g, 1, 1 << 20, &p->vocab); break;
        case OPT_DRAFTS: rc = cli_i64(&g, 1, 64, &p->drafts); break;
        case OPT_DTYPE: rc = cli_dtype(&g, in_types, 3, NULL, &p->dtype); break;
        case OPT_TEMP: rc = cli_double(&g, 0, 1e6, &p->temperature); break;
        case OPT_TOPK: rc = cli_i64(&g, 0, INT32_MAX, &p->top_k); break;
        case OPT_TOPP: rc = cli_double(&g, 1e-9, 1, &p->top_p); break;
        case OPT_MINP: rc = cli_double(&g, 0, 1, &p->min_p); break;
        case OPT_SPREAD: rc = cli_double(&g, 0, 1e4, &p->spread); break;
        case OPT_PROBS: p->probs = true; break;
        case OPT_GREEDY: p->greedy = true; break;
        case OPT_SEED: rc = cli_i64(&g, 0, INT64_MAX, &p->seed); break;
        default: rc = cli_common_option(&g, c, &p->device, &p->reps, &p->json); break;
        }
    }
    if (rc || (rc = cli_no_operands(&g))) return rc;
    return CLI_CONTINUE;
}

/* The outcome of the check: rows compared, rows where f32 may decide either way, mismatches */
typedef struct SampleCheck {
    int64_t rows, near, bad;
    double accepted; /* spec: mean accepted drafts */
} SampleCheck;

/* Steps 3 and 5 around the command's check; `call` makes one call (synchronized). */

static int sample_run(tile_context *ctx, const SampleCli *p, TimerCall call, void *user, SampleCheck (*check)(tile_context *, void *),
                      double bytes) {
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    bool prog = cli_progress_wanted(p->json) && props.is_emulator;
    const char *cmd = p->spec ? "spec" : "sample";
    if (!p->json) {
        if (p->spec)
            printf("spec verify batch %lld drafts %lld vocab %lld (%s) on %s (%s)\n", (long long)p->batch, (long long)p->drafts,
                   (long long)p->vocab, p->greedy ? "greedy" : "rejection sampling", props.name, props.arch);
        else
            printf("sample batch %lld vocab %lld %s, T %g top_k %lld top_p %g min_p %g on %s (%s)\n", (long long)p->batch,
                   (long long)p->vocab, tile_dtype_name(p->dtype), p->temperature, (long long)p->top_k, p->top_p, p->min_p, props.name,
                   props.arch);
        fflush(stdout);
    }
    cli_progress(prog, "first call (compiles or loads the kernel) ...");
    double first;
    tile_status st = timer_call(call, ctx, user, &first);
    if (st != TILE_OK) {
        return cli_call_failed(ctx, p->spec ? "tile_spec_verify" : "tile_sample", st);
    }
    cli_progress(prog, "checking against float64 ...");
    SampleCheck c = check(ctx, user);
    cli_progress(prog, "timing %d calls ...", p->reps);
    double med;
    st = timer_reps(call, ctx, user, p->reps, &med);
    if (med < 0) return CLI_EXIT_FAIL;
    bool ok = st == TILE_OK && c.bad == 0;
    if (p->json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", cmd);
        json_int(&j, "batch", p->batch), json_int(&j, "vocab", p->vocab);
        if (p->spec) {
            json_int(&j, "drafts", p->drafts), json_bool(&j, "greedy", p->greedy);
            json_num(&j, "mean_accepted", c.accepted);
        } else {
            json_str(&j, "dtype", tile_dtype_name(p->dtype));
            json_num(&j, "temperature", p->temperature), json_int(&j, "top_k", p->top_k);
            json_num(&j, "top_p", p->top_p), json_num(&j, "min_p", p->min_p), json_bool(&j, "probs", p->probs);
        }
        timer_json_device(&j, &props);
        timer_json_times(&j, first, med, p->reps);
        json_num(&j, "rows_per_second", (double)p->batch / med), json_num(&j, "gbytes_per_second_one_pass", bytes / med * 1e-9);
        json_int(&j, "checked_rows", c.rows), json_int(&j, "near_boundary_rows", c.near), json_int(&j, "mismatches", c.bad);
        json_bool(&j, "ok", ok);
        json_end(&j);
    } else {
        char rate[96];
        snprintf(rate, sizeof rate, "%.0f rows/s, one pass over the inputs %.1f GB/s", (double)p->batch / med, bytes / med * 1e-9);
        timer_print_first(first);
        timer_print_next(med, p->reps, rate, props.is_emulator);
        if (p->spec) printf("  accepted    %.3f drafts per sequence on average\n", c.accepted);
        printf("  check       %lld rows against a float64 reference with the same random numbers: %lld mismatches, %lld rows within\n"
               "              rounding of a decision boundary (either answer accepted there): %s\n",
               (long long)c.rows, (long long)c.bad, (long long)c.near, c.bad == 0 ? "ok" : "MISMATCH");
    }
    if (st != TILE_OK) fprintf(stderr, "tile: a timed call failed: %s\n", tile_last_error(ctx));
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- tile run sample ---- */
typedef struct SampleData {
    const SampleCli *p;
    tile_sample_args a;
    double *x;       /* [batch][vocab] exact logits */
    uint64_t *seeds, *offs;
    tile_devptr dx, dout, dprobs, dseed, doff;
} SampleData;

static tile_status sample_call(tile_context *ctx, void *user) {
    SampleData *d = user;
    tile_status st = tile_sample(ctx, &d->a);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

static SampleCheck sample_check(tile_context *ctx, void *user) {
    SampleData *d = user;
    const SampleCli *p = d->p;
    SampleCheck c = {0};
    size_t V = (size_t)p->vocab, B = (size_t)p->batch;
    int32_t *tok = malloc(cli_alloc_size(4 * B));
    float *probs = p->probs ? malloc(cli_alloc_size(4 * B * V)) : NULL;
    double *want = malloc(sizeof(double) * V);
    if (!tok || (p->probs && !probs) || !want || tile_memcpy_dtoh(ctx, tok, d->dout, 4 * B) ||
        (probs && tile_memcpy_dtoh(ctx, probs, d->dprobs, 4 * B * V))) {
        c.bad = (int64_t)B;
        goto done;
    }
    ref_sample_params rp = {.temperature = p->temperature, .top_k = p->top_k, .top_p = p->top_p, .min_p = p->min_p, .eps = EPS_SET};
    for (size_t r = 0; r < B; r++) {
        const double *x = d->x + r * V;
        int64_t t = tok[r];
        c.rows++;
        if (t < 0 || t >= p->vocab) {
            c.bad++;
            continue;
        }
        if (p->temperature <= 0) {
            c.bad += t != ref_argmax(p->vocab, x);
            continue;
        }
        bool near = false;
        int64_t kept;
        if (!ref_sample_probs(p->vocab, x, &rp, want, &kept, &near)) {
            c.bad++;
            continue;
        }
        uint32_t w[2];
        ref_sample_words(d->seeds[r], d->offs[r], 0, 0, w);
        if (probs) { /* the draw from what the kernel wrote: checked in every row, near-boundary ones too */
            double *dv = malloc(sizeof(double) * V);
            int64_t dlo = 0, dhi = -1;
            if (dv) {
                for (size_t i = 0; i < V; i++) dv[i] = probs[r * V + i];
                ref_sample_pick(p->vocab, dv, ref_unit(w[0]), EPS_DEVICE, &dlo, &dhi);
                if (!(dv[t] > 0)) dhi = -1;
            }
            free(dv);
            if (t < dlo || t > dhi) {
                c.bad++;
                continue;
            }
        }
        int64_t lo, hi, wt = ref_sample_pick(p->vocab, want, ref_unit(w[0]), EPS_DRAW, &lo, &hi);
        if (near || lo != hi) {
            c.near++;
            if (!near && (want[t] == 0 || t < lo || t > hi)) c.bad++;
            continue;
        }
        if (t != wt) c.bad++;
        if (probs) {
            bool off = false;
            for (size_t i = 0; i < V; i++) {
                double g = probs[r * V + i];
                if (want[i] == 0 ? g != 0 : !(fabs(g - want[i]) <= 1e-4 * want[i] + 1e-9)) off = true;
            }
            c.bad += off;
        }
    }
done:
    free(tok), free(probs), free(want);
    return c;
}

int cmd_run_sample(int argc, char **argv) {
    SampleCli p;
    int rc = sample_cli_parse(false, argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    size_t V = (size_t)p.vocab, B = (size_t)p.batch, n = B * V, es = tile_dtype_size(p.dtype);
    void *hx = malloc(cli_alloc_size(es * n));
    SampleData d = {.p = &p, .x = malloc(cli_alloc_size(sizeof(double) * n)), .seeds = malloc(cli_alloc_size(8 * B)),
                    .offs = malloc(cli_alloc_size(8 * B))};
    tile_context *ctx = NULL;
    rc = CLI_EXIT_FAIL;
    if (!hx || !d.x || !d.seeds || !d.offs) {
        fprintf(stderr, "tile: out of host memory\n");
        goto done;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (size_t i = 0; i < n; i++) d.x[i] = check_fill(p.dtype, hx, i, p.spread * check_urand(&rng));
    for (size_t r = 0; r < B; r++) d.seeds[r] = (uint64_t)p.seed + r, d.offs[r] = (uint64_t)(check_urand(&rng) * 1e6 + 1e6);
    if ((rc = cli_context_open("run sample", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    if (tile_malloc(ctx, cli_alloc_size(es * n), &d.dx) || tile_malloc(ctx, cli_alloc_size(4 * B), &d.dout) ||
        (p.probs && tile_malloc(ctx, cli_alloc_size(4 * n), &d.dprobs)) || tile_malloc(ctx, cli_alloc_size(8 * B), &d.dseed) ||
        tile_malloc(ctx, cli_alloc_size(8 * B), &d.doff) || tile_memcpy_htod(ctx, d.dx, hx, es * n) ||
        tile_memcpy_htod(ctx, d.dseed, d.seeds, 8 * B) || tile_memcpy_htod(ctx, d.doff, d.offs, 8 * B)) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    d.a = (tile_sample_args){.size = sizeof(tile_sample_args), .dtype = p.dtype, .batch = p.batch, .vocab = p.vocab, .logits = d.dx,
                             .temperature_value = (float)p.temperature, .top_k_value = (int32_t)p.top_k, .top_p_value = (float)p.top_p,
                             .min_p_value = (float)p.min_p, .seed = d.dseed, .offset = d.doff, .out_dtype = TILE_I32, .out = d.dout,
                             .probs = d.dprobs};
    rc = sample_run(ctx, &p, sample_call, &d, sample_check, (double)(es * n) + 4.0 * (double)B + (p.probs ? 4.0 * (double)n : 0));
done:
    if (ctx) {
        tile_devptr v[] = {d.dx, d.dout, d.dprobs, d.dseed, d.doff};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (v[i]) tile_free(ctx, v[i]);
        tile_context_destroy(ctx);
    }
    free(hx), free(d.x), free(d.seeds), free(d.offs);
    return rc;
}

/* ---- tile run spec ---- */
typedef struct SpecData {
    const SampleCli *p;
    tile_spec_verify_args a;
    double *q, *pr;  /* exact f32 values: [batch][drafts][vocab], [batch][drafts + 1][vocab] */
    int32_t *draft;
    uint64_t *seeds, *offs;
    tile_devptr dq, dp, dd, dacc, dout, dseed, doff;
} SpecData;

static tile_status spec_call(tile_context *ctx, void *user) {
    SpecData *d = user;
    tile_status st = tile_spec_verify(ctx, &d->a);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

static SampleCheck spec_check(tile_context *ctx, void *user) {
    SpecData *d = user;
    const SampleCli *p = d->p;
    SampleCheck c = {0};
    size_t B = (size_t)p->batch, N = (size_t)p->drafts, V = (size_t)p->vocab;
    int32_t *acc = malloc(cli_alloc_size(4 * B)), *out = malloc(cli_alloc_size(4 * B * (N + 1))), *want = malloc(4 * (N + 1));
    if (!acc || !out || !want || tile_memcpy_dtoh(ctx, acc, d->dacc, 4 * B) || tile_memcpy_dtoh(ctx, out, d->dout, 4 * B * (N + 1))) {
        c.bad = (int64_t)B;
        goto done;
    }
    for (size_t r = 0; r < B; r++) {
        bool near = false;
        int64_t wa = ref_spec_verify((int64_t)N, (int64_t)V, d->draft + r * N, d->q + r * N * V, d->pr + r * (N + 1) * V, p->greedy,
                                     d->seeds[r], d->offs[r], 0, EPS_DRAW, want, &near);
        c.rows++;
        c.accepted += acc[r];
        const int32_t *o = out + r * (N + 1);
        bool shape = acc[r] >= 0 && acc[r] <= (int32_t)N && o[acc[r]] >= 0 && o[acc[r]] < p->vocab;
        for (int32_t i = 0; shape && i <= (int32_t)N; i++)
            if (i < acc[r] ? o[i] != d->draft[r * N + (size_t)i] : i > acc[r] && o[i] != -1) shape = false;
        if (near) {
            c.near++;
            c.bad += !shape;
            continue;
        }
        bool same = shape && acc[r] == wa;
        for (size_t i = 0; same && i <= N; i++) same = o[i] == want[i];
        c.bad += !same;
    }
    c.accepted /= (double)(B ? B : 1);
done:
    free(acc), free(out), free(want);
    return c;
}

/* softmax(base + noise) rounded to f32, into h (device values) and v (their exact values) */
static void spec_probs(CheckRng *rng, size_t V, const double *base, double noise, float *h, double *v) {
    double m = -INFINITY, s = 0;
    for (size_t i = 0; i < V; i++) m = fmax(m, v[i] = base[i] + noise * check_urand(rng));
    for (size_t i = 0; i < V; i++) s += v[i] = exp(v[i] - m);
    for (size_t i = 0; i < V; i++) v[i] = h[i] = (float)(v[i] / s);
}

int cmd_run_spec(int argc, char **argv) {
    SampleCli p;
    int rc = sample_cli_parse(true, argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    size_t B = (size_t)p.batch, N = (size_t)p.drafts, V = (size_t)p.vocab, nq = B * N * V, np = B * (N + 1) * V;
    float *hq = malloc(cli_alloc_size(4 * nq)), *hp = malloc(cli_alloc_size(4 * np));
    double *base = malloc(sizeof(double) * V);
    SpecData d = {.p = &p, .q = malloc(cli_alloc_size(sizeof(double) * nq)), .pr = malloc(cli_alloc_size(sizeof(double) * np)),
                  .draft = malloc(cli_alloc_size(4 * B * N)), .seeds = malloc(cli_alloc_size(8 * B)), .offs = malloc(cli_alloc_size(8 * B))};
    tile_context *ctx = NULL;
    rc = CLI_EXIT_FAIL;
    if (!hq || !hp || !base || !d.q || !d.pr || !d.draft || !d.seeds || !d.offs) {
        fprintf(stderr, "tile: out of host memory\n");
        goto done;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (size_t r = 0; r < B; r++) {
        for (size_t i = 0; i < V; i++) base[i] = 4 * check_urand(&rng);
        for (size_t j = 0; j <= N; j++) {
            size_t po = (r * (N + 1) + j) * V, qo = (r * N + j) * V;
            spec_probs(&rng, V, base, 1.0, hp + po, d.pr + po);
            if (j == N) break;
            spec_probs(&rng, V, base, 1.0, hq + qo, d.q + qo);
            /* the draft: drawn from q; greedy: the argmax of p three times in four, so some are accepted */
            double u = (check_urand(&rng) + 1) / 2, cum = 0;
            int32_t x = (int32_t)V - 1;
            for (size_t i = 0; i < V; i++)
                if ((cum += d.q[qo + i]) > u) {
                    x = (int32_t)i;
                    break;
                }
            if (p.greedy && check_urand(&rng) > -0.5) x = (int32_t)ref_argmax((int64_t)V, d.pr + po);
            d.draft[r * N + j] = x;
        }
        d.seeds[r] = (uint64_t)p.seed + r, d.offs[r] = r * 1000003u;
    }
    if ((rc = cli_context_open("run spec", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    if (tile_malloc(ctx, cli_alloc_size(4 * nq), &d.dq) || tile_malloc(ctx, cli_alloc_size(4 * np), &d.dp) ||
        tile_malloc(ctx, cli_alloc_size(4 * B * N), &d.dd) || tile_malloc(ctx, cli_alloc_size(4 * B), &d.dacc) ||
        tile_malloc(ctx, cli_alloc_size(4 * B * (N + 1)), &d.dout) || tile_malloc(ctx, cli_alloc_size(8 * B), &d.dseed) ||
        tile_malloc(ctx, cli_alloc_size(8 * B), &d.doff) || tile_memcpy_htod(ctx, d.dq, hq, 4 * nq) || tile_memcpy_htod(ctx, d.dp, hp, 4 * np) ||
        tile_memcpy_htod(ctx, d.dd, d.draft, 4 * B * N) || tile_memcpy_htod(ctx, d.dseed, d.seeds, 8 * B) ||
        tile_memcpy_htod(ctx, d.doff, d.offs, 8 * B)) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    d.a = (tile_spec_verify_args){.size = sizeof(tile_spec_verify_args), .batch = p.batch, .num_draft = p.drafts, .vocab = p.vocab,
                                  .draft_tokens = d.dd, .draft_probs = d.dq, .target_probs = d.dp, .greedy_value = p.greedy,
                                  .seed = d.dseed, .offset = d.doff, .accepted = d.dacc, .out_tokens = d.dout};
    rc = sample_run(ctx, &p, spec_call, &d, spec_check, 4.0 * (double)(nq + np));
done:
    if (ctx) {
        tile_devptr v[] = {d.dq, d.dp, d.dd, d.dacc, d.dout, d.dseed, d.doff};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (v[i]) tile_free(ctx, v[i]);
        tile_context_destroy(ctx);
    }
    free(hq), free(hp), free(base), free(d.q), free(d.pr), free(d.draft), free(d.seeds), free(d.offs);
    return rc;
}

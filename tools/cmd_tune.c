/* cmd_tune.c - `tile tune`: time each @config of a kernel and store the fastest.
 *
 *   tile tune gemm ...                   the shipped GEMM through tile_gemm_with_config
 *   tile tune FILE.tile --grid EXPR ...  any kernel through tile_launch
 *
 * Steps:
 *   1. FILE mode refuses to run without --grid (exit 2, nothing stored): a
 *      default grid of one program times configurations that each do
 *      different work (a BLOCK of 128 covers half what 256 does), so the
 *      "fastest" would be meaningless.  (There is no @grid attribute in the
 *      language yet; the grid comes from the command line only.)
 *   2. Compile every configuration in parallel: worker threads each take the
 *      next configuration and compile it through the public compile API
 *      into the compile cache (tile_cache_compile_file), learning whether it
 *      builds and fits the device's shared memory.  GEMM: one probe call
 *      first learns the specializations tile_gemm adds for this problem, so
 *      the workers compile exactly the variants it will load; where tile_gemm
 *      itself launches warp-specialized and persistent (sm_90a), every
 *      configuration is timed with those defines added, as tile_gemm will
 *      launch the one stored.
 *   3. Time the configurations one after another (the device is shared):
 *      warm up (the first call loads from the cache; GEMM: the result is
 *      checked against float64 and a wrong one is skipped), then the median
 *      of --reps runs timed with device events.  --timeout S bounds the
 *      whole measurement of one configuration, warm-up and timed runs: the
 *      clock is read after each run (a run in flight is not stopped), and a
 *      configuration past S is skipped as timed out, its runs so far dropped.
 *   4. Report: the table sorted by time with % of best (best time / time)
 *      and, for GEMM, TFLOP/s; or with --json, JSON Lines: one object per
 *      configuration, then one for what was stored (or "stored": false with
 *      the reason: no configuration ran, the database refused the record, a
 *      GEMM shape tile_gemm never reads tuned).  Store the fastest in
 *      the tuning database under the device's key (tile_context_device_key:
 *      GPU model and driver) and the power-of-two bucket of the @tune_key
 *      arguments (GEMM: m, n, k).
 * The header goes to stdout first; on a terminal, without --json, a
 * progress line per phase and per configuration goes to stderr.  FILE mode:
 * --arg NAME=VALUE gives the run-time scalar parameter NAME (every one, by
 * name) and names the value for --grid (grid_expr.c) and the key; pointers
 * get zeroed buffers of --elems 8-byte elements. */
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/gemm_problem.h"
#include "tools/grid_expr.h"
#include "tools/json.h"
#include "tools/timer.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_tune[] =
    "usage: tile tune gemm [--m M] [--n N] [--k K] [--dtype f16|bf16|tf32|i8|f8e4m3|f8e5m2] [--out-dtype T] [--device D]\n"
    "                      [--warmup W] [--reps R] [--timeout S] [--trans-a] [--trans-b] [--json]\n"
    "       tile tune FILE.tile --kernel NAME --grid EXPR[,EXPR[,EXPR]] [--device D]\n"
    "                      [--arg NAME=VALUE]... [--elems N] [--warmup W] [--reps R] [--timeout S] [--json]\n"
    "Compiles every @config of the kernel in parallel, then runs each (warm-up, then the median of\n"
    "runs timed with device events), skips those that fail to compile, exceed the device's shared\n"
    "memory or take over --timeout S seconds (warm-up and timed runs together), prints a table sorted\n"
    "by time (% of best; GEMM: TFLOP/s) and stores the fastest in the tuning database (cache\n"
    "folder/tune.db) under the device's model and driver and the power-of-two bucket of the\n"
    "@tune_key arguments.  FILE mode needs --grid (exit 2 without it:\n"
    "configurations timed on an arbitrary grid do different work); --arg NAME=VALUE gives each run-time\n"
    "scalar parameter by name (and names it for --grid and the key); pointers get zeroed buffers\n"
    "of --elems 8-byte elements; --grid may use args and config values, e.g. 'cdiv(n, BLOCK)'.\n"
    "--json: JSON Lines on stdout, one object per configuration, then one for what was stored (\"stored\": false\n"
    "with a reason when nothing was: exit 3 when no configuration ran or the record could not be written).\n"
    "Run 'tile tune gemm --help' or 'tile tune FILE.tile --help' for the options of each.\n"
    "\n" CLI_EXIT_HELP;

static const char usage_tune_gemm[] =
    "usage: tile tune gemm [--m M] [--n N] [--k K] [--dtype f16|bf16|tf32|i8|f8e4m3|f8e5m2] [--out-dtype T] [--device D]\n"
    "                      [--warmup W] [--reps R] [--timeout S] [--trans-a] [--trans-b] [--json]\n"
    "Times every @config of the GEMM kernel for this type pair on random operands (each checked\n"
    "against float64 once) and stores the fastest for the bucket of m, n, k; nothing for a shape\n"
    "tile_gemm reads element by element (m, n, k not all multiples of 16), where it never reads a\n"
    "tuned configuration (exit 0, the reason on stderr; with --json a last object with stored false).\n"
    "With --json: one object per configuration (kernel, config, status, rank, seconds, pct_of_best,\n"
    "tflops, or why it was skipped), then one for what was stored.\n"
    "\n" GEMM_PROBLEM_OPTIONS GEMM_TUNE_OPTIONS GEMM_PROBLEM_OPTIONS_END "\n" CLI_EXIT_HELP;

static const char usage_tune_file[] =
    "usage: tile tune FILE.tile --kernel NAME --grid EXPR[,EXPR[,EXPR]] [--device D]\n"
    "                      [--arg NAME=VALUE]... [--elems N] [--warmup W] [--reps R] [--timeout S] [--json]\n"
    "\n"
    "  --kernel NAME          the kernel to tune (required)\n"
    "  --grid EXPR,...        launch grid (required): INT, NAME, + - * /, cdiv(a, b) over --arg names and\n"
    "                         config values, e.g. 'cdiv(n, BLOCK)'; without it nothing is timed or stored\n"
    "  --device D             emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n"
    "  --arg NAME=VALUE       the run-time scalar parameter NAME, every one (integers; a float one also 1.5); repeatable\n"
    "  --elems N              elements (8 bytes each) of the zeroed buffer of each pointer (default 65536)\n"
    "  --warmup W             untimed runs per config (default 1)\n"
    "  --reps R               timed runs per config (default 5)\n"
    "  --timeout S            seconds for one config's warm-up and timed runs together, checked after each run;\n"
    "                         a config past it is skipped as timed out (default 60)\n"
    "  --json                 JSON Lines: one object per configuration, then one for what was stored\n"
    "  -h, --help             this text\n"
    "\n" CLI_EXIT_HELP;

/* ---- what both modes share ---- */
typedef struct TuneRow {
    char config[256];
    double seconds; /* < 0: skipped */
    char why[1024]; /* whole: an emulator report's thread, block and address follow its location line */
} TuneRow;

/* --timeout: one configuration's warm-up and timed runs together, from t0, read after each run (a run in flight
 * is not stopped).  True, with r skipped, once they are past it. */
static bool timed_out(double t0, double timeout_s, TuneRow *r) {
    if (timer_now() - t0 <= timeout_s) return false;
    snprintf(r->why, sizeof r->why, "time-out: its warm-up and timed runs took over --timeout %g s", timeout_s);
    return true;
}

/* One timed call of a configuration (tile_gemm_with_config, tile_launch): its status, not yet synchronized. */
typedef tile_status (*TunedCall)(tile_context *ctx, void *user);

/* r's reps timed runs, one after another, their times in ts[] and their median in r->seconds; a run that fails,
 * when it is called or on the device (a synchronize after the timer has stopped, outside the time), skips the
 * configuration with the error as its reason, as a failed warm-up does (the timed runs' status was dropped, so a
 * configuration whose warm-up passed and whose timed runs failed was reported, and stored, with their times). */
static void time_runs(Timer *timer, TunedCall call, void *user, int reps, double t0, double timeout_s, double *ts, TuneRow *r) {
    for (int q = 0; !r->why[0] && q < reps; q++) {
        timer_start(timer);
        tile_status st = call(timer->ctx, user);
        ts[q] = timer_stop(timer);
        if (st != TILE_OK || tile_synchronize(timer->ctx) != TILE_OK) snprintf(r->why, sizeof r->why, "%s", tile_last_error(timer->ctx));
        else timed_out(t0, timeout_s, r);
    }
    if (!r->why[0]) r->seconds = timer_median(ts, reps);
}

static int row_cmp(const void *a, const void *b) {
    const TuneRow *x = a, *y = b;
    if ((x->seconds < 0) != (y->seconds < 0)) return x->seconds < 0 ? 1 : -1;
    return x->seconds < y->seconds ? -1 : x->seconds > y->seconds;
}

static void join_config(char **cfg, char *out, size_t n) {
    out[0] = 0;
    for (int j = 0; cfg[j]; j++) snprintf(out + strlen(out), n - strlen(out), "%s%s", j ? " " : "", cfg[j]);
}

/* Compile one config to learn its shared memory; why = "" when it can run, else why not. */
static void precheck(const char *file, const char *kernel, char **cfg, const char *const *spec, const tile_device_properties *props, char *why,
                     size_t n) {
    tile_compile_options o = {.kernel = kernel, .defines = (const char *const *)cfg, .specialize = spec, .arch = props->arch};
    tile_compiled c;
    tile_status st = tile_cache_compile_file(NULL, file, &o, &c, NULL);
    why[0] = 0;
    if (st != TILE_OK) {
        const char *nl = c.diagnostics ? strchr(c.diagnostics, '\n') : NULL;
        snprintf(why, n, "compile failed: %.*s", nl ? (int)(nl - c.diagnostics) : 150, c.diagnostics ? c.diagnostics : tile_status_string(st));
    } else if (c.nkernels && c.kernels[0].smem_bytes > props->max_shared_per_block)
        snprintf(why, n, "shared memory %d bytes > %d", c.kernels[0].smem_bytes, props->max_shared_per_block);
    tile_compiled_free(&c);
}

/* ---- step 2: the configurations compiled in parallel ---- */
typedef struct CompilePool {
    const char *file, *kernel;
    char ***configs;         /* the space's */
    const char *const *spec; /* specializations (GEMM), or NULL */
    const tile_device_properties *props;
    TuneRow *rows;
    int n;
    _Atomic int next, done;
    bool progress;
} CompilePool;

static void *compile_worker(void *arg) {
    CompilePool *p = arg;
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        if (!p->rows[i].why[0]) precheck(p->file, p->kernel, p->configs[i], p->spec, p->props, p->rows[i].why, sizeof p->rows[i].why);
        int d = atomic_fetch_add(&p->done, 1) + 1;
        cli_progress(p->progress, "  compiled %d/%d: %s%s%s", d, p->n, p->rows[i].config, p->rows[i].why[0] ? ": " : "", p->rows[i].why);
    }
    return NULL;
}

/* Each row's config compiled (rows[i].why set when it cannot run); threads: one per core, at most 8. */
static void compile_all(CompilePool *p) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = (int)(cores < 1 ? 1 : cores > 8 ? 8 : cores);
    if (nt > p->n) nt = p->n;
    pthread_t th[8];
    int started = 0;
    cli_progress(p->progress, "compiling %d configurations on %d thread%s ...", p->n, nt, nt == 1 ? "" : "s");
    double t0 = timer_now();
    for (int i = 0; i < nt; i++)
        if (pthread_create(&th[i], NULL, compile_worker, p) == 0) started++;
    if (!started) compile_worker(p); /* no thread could start: compile here */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    cli_progress(p->progress, "compiled in %.1f s", timer_now() - t0);
}

/* ---- step 4: the report and the record ---- */
typedef struct TuneReport {
    bool json, emu;
    const char *kernel;
    double flops; /* per run (GEMM: 2 m n k); 0: not reported */
} TuneReport;

static void print_table(const TuneReport *rep, TuneRow *rows, int n) {
    qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    double best = rows[0].seconds;
    if (rep->json) {
        for (int i = 0; i < n; i++) {
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "kernel", rep->kernel);
            json_str(&j, "config", rows[i].config);
            bool ok = rows[i].seconds >= 0;
            json_str(&j, "status", ok ? "ok" : "skipped");
            if (ok) {
                json_int(&j, "rank", i + 1);
                json_num(&j, "seconds", rows[i].seconds);
                json_num(&j, "pct_of_best", 100 * best / rows[i].seconds);
                if (rep->flops > 0) json_num(&j, "tflops", rep->flops / rows[i].seconds * 1e-12);
            } else json_str(&j, "why", rows[i].why);
            json_end(&j);
        }
        return;
    }
    if (rep->flops > 0) printf("%-4s %12s %8s %9s  %s\n", "rank", "median", "% best", "TFLOP/s", "config");
    else printf("%-4s %12s %8s  %s\n", "rank", "median", "% best", "config");
    for (int i = 0; i < n; i++) {
        if (rows[i].seconds < 0) printf("%-4s %12s %8s %*s%s  (skipped: %s)\n", "-", "-", "-", rep->flops > 0 ? 10 : 0, "", rows[i].config, rows[i].why);
        else if (rep->flops > 0)
            printf("%-4d %9.3f ms %7.1f%% %9.3f  %s\n", i + 1, rows[i].seconds * 1e3, 100 * best / rows[i].seconds,
                   rep->flops / rows[i].seconds * 1e-12, rows[i].config);
        else printf("%-4d %9.3f ms %7.1f%%  %s\n", i + 1, rows[i].seconds * 1e3, 100 * best / rows[i].seconds, rows[i].config);
    }
    if (rep->emu) printf("note: on the emulator these timings mean nothing (it runs PTX on the CPU); this run checks the flow\n");
}

/* With --json, the last object when nothing was stored: {"stored":false, "kernel", "bucket", "reason"}, so a
 * reader of the lines always gets one saying what became of the tuning. */
static void json_not_stored(bool json, const char *kernel, const char *bucket, const char *reason) {
    if (!json) return;
    JsonOut j;
    json_begin(&j, stdout);
    json_bool(&j, "stored", false);
    json_str(&j, "kernel", kernel);
    json_str(&j, "bucket", bucket);
    json_str(&j, "reason", reason);
    json_end(&j);
}

/* Record the fastest row in the tuning database; the exit status. */
static int store_best(const TuneReport *rep, tile_context *ctx, const char *file, const char *bucket, const TuneRow *best) {
    if (best->seconds < 0) {
        json_not_stored(rep->json, rep->kernel, bucket, "no configuration ran (each was skipped: see its why)");
        fprintf(stderr, "tile: no configuration ran; nothing stored\n");
        return CLI_EXIT_FAIL;
    }
    char id[33], dev[320], why[600];
    if (tile_kernel_id_file(file, rep->kernel, id) != TILE_OK || tile_context_device_key(ctx, dev, sizeof dev) != TILE_OK) {
        snprintf(why, sizeof why, "cannot key the record: %s", tile_last_error(ctx));
        json_not_stored(rep->json, rep->kernel, bucket, why);
        fprintf(stderr, "tile: %s\n", why);
        return CLI_EXIT_FAIL;
    }
    tile_status st = tile_tune_record(NULL, id, dev, bucket, best->config, best->seconds);
    if (st != TILE_OK) { /* the call has no context: its reason is tile_last_error(NULL); say where too */
        char *dir = tile_cache_default_dir();
        const char *last = tile_last_error(NULL);
        snprintf(why, sizeof why, "the tuning database %s/tune.db refused it: %s", dir ? dir : "(no cache folder)",
                 last && *last ? last : tile_status_string(st));
        free(dir);
        json_not_stored(rep->json, rep->kernel, bucket, why);
        fprintf(stderr, "tile: %s %s -> %s was not stored: %s\n", rep->kernel, bucket, best->config, why);
        return st == TILE_ERROR_IO ? CLI_EXIT_OUTPUT : CLI_EXIT_FAIL;
    }
    if (rep->json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_bool(&j, "stored", true);
        json_str(&j, "kernel", rep->kernel);
        json_str(&j, "kernel_id", id);
        json_str(&j, "device", dev);
        json_str(&j, "bucket", bucket);
        json_str(&j, "config", best->config);
        json_num(&j, "seconds", best->seconds);
        json_end(&j);
    } else printf("stored: %s %s on %s -> %s\n", rep->kernel, bucket, dev, best->config);
    return CLI_EXIT_OK;
}

/* ---- tile tune gemm ---- */

/* Why tile_gemm would not read a record for g (NULL: it would).  It consults the tuning database only where it
 * reads A and B in 16-byte vectors (kernels/gemm/gemm.c, gemm_vectorized; docs/runtime.md, tile_gemm step 2):
 * m, n, k, lda and ldb multiples of 16, the pointers aligned (tile_malloc's are).  Elsewhere it runs the
 * kernel's const defaults, so a record timed there would never serve this shape and would give the bucket's
 * vector shapes a winner timed on the element-by-element path. */
static const char *gemm_untunable(const tile_gemm_args *g, char *why, size_t n) {
    const struct {
        const char *name;
        int64_t v;
    } facts[] = {{"m", g->m}, {"n", g->n}, {"k", g->k}, {"lda", g->lda}, {"ldb", g->ldb}};
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
        if (facts[i].v % 16) return snprintf(why, n, "%s = %lld is not a multiple of 16", facts[i].name, (long long)facts[i].v), why;
    return NULL;
}

/* Each configuration with warp_specialize=1 and, when persistent and without split-K,
 * PERSISTENT=1 added: what tile_gemm adds to a tuned configuration on a wgmma target
 * (kernels/gemm/gemm.c). */
static void gemm_hopper_configs(tile_tune_space *sp, bool persistent) {
    for (int i = 0; i < sp->nconfigs; i++) {
        int n = 0;
        bool split = false;
        for (char **p = sp->configs[i]; *p; p++, n++) split |= !strncmp(*p, "SPLIT_K=", 8) && atoi(*p + 8) > 1;
        char **c = realloc(sp->configs[i], sizeof *c * (size_t)(n + 3));
        if (!c) continue; /* the configuration as written */
        c[n++] = strdup("warp_specialize=1");
        if (persistent && !split) c[n++] = strdup("PERSISTENT=1");
        c[n] = NULL;
        sp->configs[i] = c;
    }
}

typedef struct GemmCall {
    const tile_gemm_args *g;
    const char *const *cfg;
} GemmCall;
static tile_status gemm_call(tile_context *ctx, void *user) {
    const GemmCall *c = user;
    return tile_gemm_with_config(ctx, c->g, c->cfg);
}

static int tune_gemm(int argc, char **argv) {
    GemmProblem p;
    int rc = gemm_problem_parse("tune gemm", usage_tune_gemm, argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    const char *kernel = tile_gemm_kernel_name(p.in, p.out); /* gemm_problem_parse refused a pair without one */
    const char *file = tile_gemm_source_path();
    tile_tune_space sp;
    char *err = NULL;
    if (tile_tune_space_file(file, kernel, &sp, &err) != TILE_OK) return fprintf(stderr, "%s", err ? err : ""), free(err), CLI_EXIT_SOURCE;
    if (!sp.nconfigs) return fprintf(stderr, "tile: %s has no @config\n", kernel), tile_tune_space_free(&sp), CLI_EXIT_SOURCE;
    tile_context *ctx;
    if ((rc = cli_context_open("tune gemm", p.device, &ctx))) return tile_tune_space_free(&sp), rc;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    bool prog = cli_progress_wanted(p.json);
    CheckRng rng;
    check_rng_init(&rng);
    GemmData d = {0};
    TuneRow *rows = calloc((size_t)sp.nconfigs, sizeof *rows);
    double *ts = calloc((size_t)p.reps, sizeof(double));
    if (!rows || !ts) {
        fprintf(stderr, "tile: out of host memory\n");
        rc = CLI_EXIT_FAIL;
    } else rc = gemm_data_setup(ctx, &p, &rng, &d);
    if (rc) return free(rows), free(ts), gemm_data_free(ctx, &d), tile_context_destroy(ctx), tile_tune_space_free(&sp), rc;
    if (!p.json) {
        printf("tuning %s for m=%lld n=%lld k=%lld on %s (%s): %d configs, %d warm-up + %d timed runs each\n", kernel, (long long)p.m,
               (long long)p.n, (long long)p.k, props.name, props.arch, sp.nconfigs, p.warmup, p.reps);
        fflush(stdout);
    }
    for (int i = 0; i < sp.nconfigs; i++) join_config(sp.configs[i], rows[i].config, sizeof rows[i].config), rows[i].seconds = -1;
    /* where tile_gemm launches its configurations warp-specialized and persistent (sm_90a: gemm.c
     * adds them to a tuned one too), time them that way (the database keeps the @config's own
     * text): its own choice for this problem says */
    tile_gemm_info own;
    if (tile_gemm(ctx, &d.g) == TILE_OK && tile_synchronize(ctx) == TILE_OK && tile_gemm_last_info(ctx, &own) == TILE_OK &&
        strstr(own.config, "warp_specialize=1"))
        gemm_hopper_configs(&sp, strstr(own.config, "PERSISTENT=1") != NULL);
    /* 2. the probe: config 0 through tile_gemm tells the specializations (sizes and strides, the same for every config) */
    cli_progress(prog, "probing the specializations with %s ...", rows[0].config);
    char spec_text[256] = "";
    const char *spec[32] = {0};
    tile_gemm_info gi;
    if (tile_gemm_with_config(ctx, &d.g, (const char *const *)sp.configs[0]) == TILE_OK && tile_synchronize(ctx) == TILE_OK &&
        tile_gemm_last_info(ctx, &gi) == TILE_OK) {
        snprintf(spec_text, sizeof spec_text, "%s", gi.specialize);
        int ns = 0;
        for (char *w = spec_text; *w && ns < 31;) {
            char *e = strchr(w, ' ');
            if (e) *e = 0;
            if (*w) spec[ns++] = w;
            if (!e) break;
            w = e + 1;
        }
    }
    CompilePool pool = {.file = file, .kernel = kernel, .configs = sp.configs, .spec = spec, .props = &props, .rows = rows, .n = sp.nconfigs,
                        .progress = prog};
    compile_all(&pool);
    /* 3. timing, one configuration after another */
    Timer timer;
    timer_init(&timer, ctx);
    for (int i = 0; i < sp.nconfigs; i++) {
        TuneRow *r = &rows[i];
        const char *const *cfg = (const char *const *)sp.configs[i];
        double t0 = timer_now();
        for (int w = 0; !r->why[0] && w <= p.warmup; w++) { /* the first call loads what step 2 compiled */
            if (tile_gemm_with_config(ctx, &d.g, cfg) != TILE_OK || tile_synchronize(ctx) != TILE_OK)
                snprintf(r->why, sizeof r->why, "%s", tile_last_error(ctx));
            else if (w == 0 && gemm_data_check(ctx, &p, &d) > 1) snprintf(r->why, sizeof r->why, "wrong results");
            else timed_out(t0, p.timeout_s, r);
        }
        GemmCall gc = {&d.g, cfg};
        time_runs(&timer, gemm_call, &gc, p.reps, t0, p.timeout_s, ts, r);
        if (r->why[0]) cli_progress(prog, "[%d/%d] %s: skipped: %s", i + 1, sp.nconfigs, r->config, r->why);
        else cli_progress(prog, "[%d/%d] %s: %.3f ms", i + 1, sp.nconfigs, r->config, r->seconds * 1e3);
    }
    TuneReport rep = {.json = p.json, .emu = props.is_emulator, .kernel = kernel, .flops = 2.0 * (double)p.m * (double)p.n * (double)p.k};
    print_table(&rep, rows, sp.nconfigs);
    char bucket[96];
    /* the layout is part of the key, as tile_gemm reads it (kernels/gemm/gemm.c, tuned_config) */
    snprintf(bucket, sizeof bucket, "m=%lld,n=%lld,k=%lld%s%s", (long long)tile_tune_bucket(p.m), (long long)tile_tune_bucket(p.n),
             (long long)tile_tune_bucket(p.k), p.ta ? ",trans_a=1" : "", p.tb ? ",trans_b=1" : "");
    char why[96];
    if (rows[0].seconds >= 0 && gemm_untunable(&d.g, why, sizeof why)) { /* nothing tile_gemm would read: not stored */
        json_not_stored(p.json, kernel, bucket, why);
        fprintf(stderr,
                "tile: nothing stored: %s, so tile_gemm reads this shape element by element and runs its defaults, never a tuned "
                "configuration (it reads the tuning database only for m, n, k, lda, ldb multiples of 16); tune such a shape of "
                "the bucket %s instead\n",
                why, bucket);
        rc = CLI_EXIT_OK;
    } else rc = store_best(&rep, ctx, file, bucket, &rows[0]);
    timer_free(&timer);
    free(ts), free(rows);
    gemm_data_free(ctx, &d);
    tile_context_destroy(ctx);
    tile_tune_space_free(&sp);
    return rc;
}

/* ---- tile tune FILE.tile ---- */
enum { MAX_PARAMS = 64 };

typedef struct TuneFile {
    const char *file, *kernel, *device, *grid;
    int reps, warmup;
    double timeout_s;                  /* --timeout: one configuration's warm-up and timed runs */
    bool json;
    int64_t elems;
    int nargs;
    const char *arg_names[MAX_PARAMS]; /* --arg NAME=VALUE in order: malloc'd names */
    int64_t arg_vals[MAX_PARAMS];
    double arg_fvals[MAX_PARAMS];      /* the value as a float (a float parameter's) */
    const char *arg_texts[MAX_PARAMS]; /* VALUE as written (in argv), for messages */
    bool arg_isf[MAX_PARAMS];          /* VALUE is not an integer (1.5): only a float parameter takes it */
    int scalar_arg[MAX_PARAMS];        /* the --arg of the kernel's run-time scalar j, by name (bind_args) */
    bool bound;                        /* scalar_arg is set (else --arg values go in order) */
} TuneFile;

enum { OPT_KERNEL = 256, OPT_GRID, OPT_ARG, OPT_ELEMS, OPT_WARMUP, OPT_TIMEOUT };

static const struct option file_options[] = {
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"device", required_argument, NULL, CLI_OPT_DEVICE},
    {"grid", required_argument, NULL, OPT_GRID},
    {"arg", required_argument, NULL, OPT_ARG},
    {"elems", required_argument, NULL, OPT_ELEMS},
    {"reps", required_argument, NULL, CLI_OPT_REPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"json", no_argument, NULL, CLI_OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {0},
};

/* --arg NAME=VALUE: a name and a whole integer */
static int parse_arg(const CliGetopt *g, TuneFile *t) {
    const char *eq = strchr(g->arg, '=');
    int64_t v = 0;
    double f = 0;
    if (!eq || eq == g->arg) return cli_usage_error(g->cmd, "%s expects NAME=VALUE, got '%s'", g->name, g->arg);
    bool ident = isalpha((unsigned char)*g->arg) || *g->arg == '_'; /* "--arg 'n =1'": the name "n " was no parameter */
    for (const char *c = g->arg + 1; ident && c < eq; c++) ident = isalnum((unsigned char)*c) || *c == '_';
    if (!ident)
        return cli_usage_error(g->cmd, "%s '%.*s': NAME must be an identifier (no spaces around '=': NAME=VALUE)", g->name, (int)(eq - g->arg), g->arg);
    bool isf = !cli_parse_i64(eq + 1, INT64_MIN, INT64_MAX, &v);
    if (isf) { /* a float parameter's value: 1.5, 2e-3 */
        char *end;
        errno = 0;
        f = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || errno || !isfinite(f))
            return cli_usage_error(g->cmd, "%s %.*s expects a number, got '%s'", g->name, (int)(eq - g->arg), g->arg, eq + 1);
    } else {
        f = (double)v;
    }
    if (t->nargs == MAX_PARAMS) return cli_usage_error(g->cmd, "more than %d %s options", MAX_PARAMS, g->name);
    char *name = strndup(g->arg, (size_t)(eq - g->arg));
    if (!name) return fprintf(stderr, "tile: out of host memory\n"), CLI_EXIT_FAIL;
    t->arg_names[t->nargs] = name;
    t->arg_fvals[t->nargs] = f;
    t->arg_texts[t->nargs] = eq + 1;
    t->arg_isf[t->nargs] = isf;
    t->arg_vals[t->nargs++] = v;
    return 0;
}

static int tune_file_parse(int argc, char **argv, TuneFile *t) {
    *t = (TuneFile){.reps = 5, .warmup = 1, .timeout_s = 60, .elems = 1 << 16};
    CliGetopt g = {.cmd = "tune", .argc = argc, .argv = argv, .shortopts = "h", .longopts = file_options,
                   .repeatable = (const int[]){OPT_ARG, 0}};
    int c, rc = 0;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(usage_tune_file);
        case OPT_KERNEL: t->kernel = g.arg; break;
        case OPT_GRID: t->grid = g.arg; break;
        case OPT_ARG: rc = parse_arg(&g, t); break;
        case OPT_ELEMS: rc = cli_i64(&g, 1, INT64_MAX / 8, &t->elems); break;
        case OPT_WARMUP: rc = cli_int(&g, 0, INT_MAX, &t->warmup); break;
        case OPT_TIMEOUT: rc = cli_double(&g, 1e-3, 1e9, &t->timeout_s); break; /* as tune gemm's */
        default: rc = cli_common_option(&g, c, &t->device, &t->reps, &t->json); break;
        }
    }
    if (rc) return rc;
    if (g.first_operand >= argc) return cli_usage_error(g.cmd, "no input file");
    if (g.first_operand + 1 < argc) return cli_usage_error(g.cmd, "more than one input file: %s", argv[g.first_operand + 1]);
    t->file = argv[g.first_operand];
    if (cli_input_unreadable(t->file)) return CLI_EXIT_USAGE; /* a wrong path first: no --kernel names a kernel of it */
    if (!t->kernel) return cli_usage_error(g.cmd, "tile tune FILE needs --kernel NAME");
    if (t->grid && !t->grid[strspn(t->grid, " \t")])
        return cli_usage_error(g.cmd, "--grid is empty: give the launch grid, e.g. --grid 'cdiv(n, BLOCK)'");
    if (!t->grid)
        return cli_usage_error(g.cmd, "tile tune FILE needs --grid EXPR: configurations timed on an arbitrary grid do different work, "
                                      "so nothing is tuned or stored without one (e.g. --grid 'cdiv(n, BLOCK)')");
    return CLI_CONTINUE;
}

/* Why VALUE (text, as a float f: no decimal integer of 64 bits) does not give an integer scalar of type ty. */
static void not_an_integer(const char *text, double f, const char *ty, char *why, size_t n) {
    if (strpbrk(text, "xXpP")) snprintf(why, n, "is not a decimal integer (no hexadecimal), but the scalar is %.7s", ty);
    else if (f == floor(f) && fabs(f) >= 0x1p63) snprintf(why, n, "is past the 64-bit integers, and the scalar is %.7s", ty);
    else snprintf(why, n, "is not an integer, but the scalar is %.7s", ty);
}

/* Launch arguments from the signature: a zeroed buffer for each pointer, the
 * --arg values for the scalars (by name once bind_args has run). */
typedef struct LaunchArgs {
    void *params[MAX_PARAMS];
    union {
        int64_t i;
        double f;
        float f32;
        int32_t i32;
        tile_devptr p;
    } vals[MAX_PARAMS];
    tile_devptr bufs[MAX_PARAMS];
    int nbufs;
} LaunchArgs;

static bool launch_args_make(tile_context *ctx, const TuneFile *t, const tile_kernel_attributes *at, LaunchArgs *la, char *why, size_t n) {
    const char *s = at->signature;
    int scalar = 0;
    for (int a = 0; a < at->num_params && a < MAX_PARAMS; a++) {
        while (*s == ' ' || *s == ',') s++;
        /* the signature has no names: scalar j is bind_args's scalar_arg[j] */
        la->params[a] = &la->vals[a];
        memset(&la->vals[a], 0, sizeof la->vals[a]);
        if (*s == '*') {
            tile_devptr p;
            if (tile_malloc(ctx, (size_t)t->elems * 8, &p) != TILE_OK || tile_memset(ctx, p, 0, (size_t)t->elems * 8) != TILE_OK) {
                snprintf(why, n, "%s", tile_last_error(ctx));
                return false;
            }
            la->bufs[la->nbufs++] = la->vals[a].p = p;
        } else {
            int ai = t->bound ? t->scalar_arg[scalar] : scalar < t->nargs ? scalar : -1;
            int64_t v = ai >= 0 ? t->arg_vals[ai] : 0;
            double f = ai >= 0 ? t->arg_fvals[ai] : 0;
            bool fl = !strncmp(s, "f32", 3) || !strncmp(s, "f64", 3);
            if (!fl && ai >= 0 && t->arg_isf[ai]) {
                char ty[8], not_int[96];
                snprintf(ty, sizeof ty, "%.*s", (int)strcspn(s, ","), s);
                not_an_integer(t->arg_texts[ai], f, ty, not_int, sizeof not_int);
                snprintf(why, n, "--arg %s=%s %s (the kernel's run-time scalar %d)", t->arg_names[ai], t->arg_texts[ai], not_int, scalar + 1);
                return false;
            }
            if (!strncmp(s, "f32", 3)) la->vals[a].f32 = (float)f;
            else if (!strncmp(s, "f64", 3)) la->vals[a].f = f;
            else if (!strncmp(s, "i64", 3) || !strncmp(s, "u64", 3)) la->vals[a].i = v;
            else la->vals[a].i32 = (int32_t)v;
            scalar++;
        }
        while (*s && *s != ',') s++;
    }
    return true;
}

/* The grid of one configuration: --grid over the --arg values, then the configuration's (true 1, false 0). */
static bool config_grid(const TuneFile *t, char **cfg, unsigned g[3], char *why, size_t n) {
    const char *names[2 * MAX_PARAMS];
    int64_t vals[2 * MAX_PARAMS];
    int nn = 0;
    for (int a = 0; a < t->nargs; a++)
        if (!t->arg_isf[a]) names[nn] = t->arg_names[a], vals[nn++] = t->arg_vals[a]; /* the grid is integers */
    char *cfg_names[MAX_PARAMS];
    int ncfg = 0;
    for (int j = 0; cfg[j] && ncfg < MAX_PARAMS; j++) {
        const char *eq = strchr(cfg[j], '=');
        if (!eq || !(cfg_names[ncfg] = strndup(cfg[j], (size_t)(eq - cfg[j])))) continue;
        names[nn] = cfg_names[ncfg++];
        vals[nn++] = !strcmp(eq + 1, "true") ? 1 : !strcmp(eq + 1, "false") ? 0 : atoll(eq + 1);
    }
    bool ok = grid_expr_dims(t->grid, names, vals, nn, g, why, n);
    for (int j = 0; j < ncfg; j++) free(cfg_names[j]);
    return ok;
}

/* The names of the kernel's run-time scalar parameters, in order, from its Tile IR's header
 * "kernel @NAME(%x: ptr<f32> #div16, %n: i32) ..." (pointers skipped); -1 when there is no such line. */
static int scalar_names(const char *tir, const char *kernel, char names[][64], char types[][8], int cap) {
    char head[200];
    snprintf(head, sizeof head, "kernel @%s(", kernel);
    const char *p = tir ? strstr(tir, head) : NULL;
    if (!p) return -1;
    p += strlen(head);
    int n = 0;
    while (*p && *p != ')' && *p != '\n') {
        while (*p == ' ' || *p == ',') p++;
        if (*p != '%') break;
        const char *name = ++p;
        while (*p && *p != ':') p++;
        size_t len = (size_t)(p - name);
        if (*p == ':') p++;
        while (*p == ' ') p++;
        bool ptr = !strncmp(p, "ptr<", 4);
        if (!ptr && n < cap) snprintf(types[n], 8, "%.*s", (int)strcspn(p, " #,)\n"), p);
        for (int depth = 0; *p && *p != '\n' && (depth || (*p != ',' && *p != ')')); p++)
            depth += *p == '<' ? 1 : *p == '>' ? -1 : 0;
        if (!ptr && n < cap) snprintf(names[n++], 64, "%.*s", (int)(len < 63 ? len : 63), name);
    }
    return n;
}

/* --arg values by name: each must name one of the kernel's run-time scalars, and each of those must be given
 * (they went in order before, so `--arg n=4000 --arg m=1` launched n=1 and recorded the key n=4096).  The
 * names come from the first configuration that compiles (a cache hit later); none compiles: left in order, and
 * every configuration is skipped with its compile error anyway. */
/* Whether v fits a run-time scalar of type ty (the Tile IR's name: i32, u8, i1, f32, ...); else the range in why. */
static bool arg_fits(const char *ty, int64_t v, bool isf, const char *text, double f, char *why, size_t n) {
    static const struct { const char *ty; int64_t lo, hi; } ranges[] = {
        {"i1", 0, 1}, {"i8", INT8_MIN, INT8_MAX}, {"u8", 0, UINT8_MAX}, {"i16", INT16_MIN, INT16_MAX}, {"u16", 0, UINT16_MAX},
        {"i32", INT32_MIN, INT32_MAX}, {"u32", 0, UINT32_MAX}, {"u64", 0, INT64_MAX},
    };
    if (isf) { /* 1.5 for an integer scalar: every configuration was skipped, and the run exited 3 */
        bool fl = ty[0] == 'f' || !strcmp(ty, "bf16");
        if (!fl) not_an_integer(text, f, ty, why, n);
        return fl;
    }
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (!strcmp(ty, ranges[i].ty) && (v < ranges[i].lo || v > ranges[i].hi)) {
            snprintf(why, n, "is out of range for its type %.7s (%" PRId64 " to %" PRId64 ")", ty, ranges[i].lo, ranges[i].hi);
            return false;
        }
    return true;
}

static int bind_args(TuneFile *t, char ***configs, int nconfigs, const char *arch) {
    char names[MAX_PARAMS][64], types[MAX_PARAMS][8];
    int n = -1;
    for (int i = 0; i < nconfigs && n < 0; i++) {
        tile_compile_options o = {.kernel = t->kernel, .defines = (const char *const *)configs[i], .arch = arch};
        tile_compiled c;
        if (tile_cache_compile_file(NULL, t->file, &o, &c, NULL) == TILE_OK) n = scalar_names(c.tir, t->kernel, names, types, MAX_PARAMS);
        tile_compiled_free(&c);
    }
    if (n < 0) return 0;
    char list[512] = "";
    for (int j = 0; j < n; j++) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "", names[j]);
    for (int a = 0; a < t->nargs; a++) {
        int j = 0;
        while (j < n && strcmp(names[j], t->arg_names[a])) j++;
        if (j == n)
            return cli_usage_error("tune", "--arg %s: kernel '%s' has no run-time scalar parameter %s (%s%s)", t->arg_names[a], t->kernel,
                                   t->arg_names[a], n ? "its scalars: " : "it has none", list);
        for (int b = 0; b < a; b++)
            if (!strcmp(t->arg_names[a], t->arg_names[b])) return cli_usage_error("tune", "--arg %s is given twice", t->arg_names[a]);
    }
    for (int j = 0; j < n; j++) {
        t->scalar_arg[j] = -1;
        for (int a = 0; a < t->nargs; a++)
            if (!strcmp(names[j], t->arg_names[a])) t->scalar_arg[j] = a;
        if (t->scalar_arg[j] < 0)
            return cli_usage_error("tune", "kernel '%s' takes the run-time scalar %s: give it with --arg %s=VALUE (its scalars: %s)", t->kernel,
                                   names[j], names[j], list);
        int a = t->scalar_arg[j];
        char why[96];
        if (!arg_fits(types[j], t->arg_vals[a], t->arg_isf[a], t->arg_texts[a], t->arg_fvals[a], why, sizeof why))
            return cli_usage_error("tune", "--arg %s=%s %s", names[j], t->arg_texts[a], why);
    }
    t->bound = true;
    return 0;
}

typedef struct LaunchCall {
    tile_kernel *k;
    tile_dim3 grid;
    void **params;
} LaunchCall;
static tile_status launch_call(tile_context *ctx, void *user) {
    const LaunchCall *c = user;
    return tile_launch(c->k, c->grid, c->params, NULL);
}

/* One configuration: rows[i] timed or skipped; CLI_EXIT_USAGE for a bad --grid. */
static int tune_file_config(tile_context *ctx, const TuneFile *t, char **cfg, double *ts, TuneRow *r) {
    if (r->why[0]) return 0; /* step 2 found it cannot run */
    tile_module *mod = NULL;
    tile_kernel *k = NULL;
    tile_kernel_attributes at;
    LaunchArgs la = {.nbufs = 0};
    int rc = 0;
    tile_compile_options o = {.kernel = t->kernel, .defines = (const char *const *)cfg}; /* what step 2 compiled: a cache hit */
    if (tile_module_load_file_ex(ctx, t->file, &o, &mod) != TILE_OK || tile_module_get_kernel(mod, t->kernel, &k) != TILE_OK ||
        tile_kernel_get_attributes(k, &at) != TILE_OK)
        snprintf(r->why, sizeof r->why, "%s", tile_last_error(ctx));
    else if (launch_args_make(ctx, t, &at, &la, r->why, sizeof r->why)) {
        unsigned g[3];
        char why[160];
        if (!config_grid(t, cfg, g, why, sizeof why))
            rc = cli_usage_error("tune", "--grid '%s': %s (INT, NAME, + - * /, cdiv(a, b); comma-separated dims)", t->grid, why);
        tile_dim3 grid = {g[0], g[1], g[2]};
        double t0 = timer_now();
        for (int w = 0; !rc && w <= t->warmup && !r->why[0]; w++)
            if (tile_launch(k, grid, la.params, NULL) != TILE_OK || tile_synchronize(ctx) != TILE_OK)
                snprintf(r->why, sizeof r->why, "%s", tile_last_error(ctx));
            else timed_out(t0, t->timeout_s, r);
        Timer timer;
        timer_init(&timer, ctx);
        LaunchCall lc = {k, grid, la.params};
        if (!rc) time_runs(&timer, launch_call, &lc, t->reps, t0, t->timeout_s, ts, r);
        timer_free(&timer);
    }
    for (int j = 0; j < la.nbufs; j++) tile_free(ctx, la.bufs[j]);
    if (mod) tile_module_unload(mod);
    return rc;
}

static int tune_file(int argc, char **argv) {
    TuneFile t;
    int rc = tune_file_parse(argc, argv, &t);
    if (rc != CLI_CONTINUE) goto out;
    tile_tune_space sp;
    char *err = NULL;
    tile_status st = tile_tune_space_file(t.file, t.kernel, &sp, &err);
    if (st != TILE_OK) {
        /* an unreadable input is the command's message, "tile: cannot read ...", as tile aot's (it had no prefix) */
        fprintf(stderr, "%s%s\n", st == TILE_ERROR_IO ? "tile: " : "", err ? err : tile_status_string(st));
        /* --kernel naming no kernel of the file: the command line's error, as in tile compile and tile aot */
        char none[300];
        snprintf(none, sizeof none, "has no kernel named '%s'", t.kernel);
        rc = st == TILE_ERROR_IO || (err && strstr(err, none)) ? CLI_EXIT_USAGE : CLI_EXIT_SOURCE;
        free(err);
        goto out;
    }
    if (!sp.nconfigs) {
        /* nothing to time: the command's error (it exited 1 without a location), unless the kernel does not compile,
         * which tile_tune_space_file does not try: then the source's diagnostics, exit 1 */
        tile_compile_options o = {.size = sizeof o, .kernel = t.kernel, .tir_only = 1};
        tile_compiled c;
        tile_status cst = tile_compile_file(t.file, &o, &c);
        if (cst == TILE_ERROR_COMPILE && c.diagnostics && *c.diagnostics) {
            fputs(c.diagnostics, stderr);
            tile_compiled_free(&c);
            rc = CLI_EXIT_SOURCE;
            goto free_space;
        }
        tile_compiled_free(&c);
        rc = cli_usage_error("tune", "kernel '%s' of %s has no @config, so there is nothing to time (give it @config(NAME=VALUE, ...) "
                                     "lines above it; see @config in docs/language.md)",
                             t.kernel, t.file);
        goto free_space;
    }
    tile_context *ctx;
    if ((rc = cli_context_open("tune", t.device, &ctx))) goto free_space;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    TuneRow *rows = calloc((size_t)sp.nconfigs, sizeof *rows);
    double *ts = calloc((size_t)t.reps, sizeof(double));
    if (!rows || !ts) {
        fprintf(stderr, "tile: out of host memory\n");
        rc = CLI_EXIT_FAIL;
        goto free_rows;
    }
    /* the --arg names first (a misspelled one is what a grid's unknown name most often means), then every
     * configuration's grid, before anything is timed */
    if ((rc = bind_args(&t, sp.configs, sp.nconfigs, props.arch))) goto free_rows;
    for (int i = 0; i < sp.nconfigs; i++) { /* every configuration's grid */
        unsigned g[3];
        char why[160], cfg[256];
        if (!config_grid(&t, sp.configs[i], g, why, sizeof why)) {
            join_config(sp.configs[i], cfg, sizeof cfg);
            rc = cli_usage_error("tune", "--grid '%s' with %s: %s (INT, NAME, + - * /, cdiv(a, b); comma-separated dims)", t.grid, cfg, why);
            goto free_rows;
        }
    }
    bool prog = cli_progress_wanted(t.json);
    if (!t.json) {
        printf("tuning %s in %s on %s (%s), grid %s: %d configs, %d warm-up + %d timed runs each\n", t.kernel, t.file, props.name, props.arch,
               t.grid, sp.nconfigs, t.warmup, t.reps);
        fflush(stdout);
    }
    for (int i = 0; i < sp.nconfigs; i++) join_config(sp.configs[i], rows[i].config, sizeof rows[i].config), rows[i].seconds = -1;
    CompilePool pool = {.file = t.file, .kernel = t.kernel, .configs = sp.configs, .props = &props, .rows = rows, .n = sp.nconfigs,
                        .progress = prog};
    compile_all(&pool);
    for (int i = 0; i < sp.nconfigs && !rc; i++) {
        TuneRow *r = &rows[i];
        rc = tune_file_config(ctx, &t, sp.configs[i], ts, r);
        if (r->why[0]) cli_progress(prog, "[%d/%d] %s: skipped: %s", i + 1, sp.nconfigs, r->config, r->why);
        else if (!rc) cli_progress(prog, "[%d/%d] %s: %.3f ms", i + 1, sp.nconfigs, r->config, r->seconds * 1e3);
    }
    if (!rc) {
        /* the key: each @tune_key argument's --arg value (0 when not given), rounded up to a power of two */
        char bucket[256] = "";
        for (int kk = 0; kk < sp.nkeys; kk++) {
            int64_t v = 0;
            for (int a = 0; a < t.nargs; a++)
                if (!strcmp(t.arg_names[a], sp.keys[kk])) v = t.arg_vals[a];
            snprintf(bucket + strlen(bucket), sizeof bucket - strlen(bucket), "%s%s=%lld", kk ? "," : "", sp.keys[kk],
                     (long long)tile_tune_bucket(v));
        }
        if (!bucket[0]) snprintf(bucket, sizeof bucket, "any");
        TuneReport rep = {.json = t.json, .emu = props.is_emulator, .kernel = t.kernel};
        print_table(&rep, rows, sp.nconfigs);
        rc = store_best(&rep, ctx, t.file, bucket, &rows[0]);
    }
free_rows:
    free(ts), free(rows);
    tile_context_destroy(ctx);
free_space:
    tile_tune_space_free(&sp);
out:
    for (int a = 0; a < t.nargs; a++) free((void *)t.arg_names[a]);
    return rc;
}

int cmd_tune(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_tune, stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) return cli_help(usage_tune);
    if (!strcmp(argv[1], "gemm")) return tune_gemm(argc - 1, argv + 1);
    return tune_file(argc, argv);
}

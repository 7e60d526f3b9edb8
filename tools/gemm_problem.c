/* gemm_problem.c - options, random operands and the check of a GEMM (see gemm_problem.h). */
#include "tools/gemm_problem.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_M = 256, OPT_N, OPT_K, OPT_DTYPE, OPT_OUT_DTYPE, OPT_TRANS_A, OPT_TRANS_B, OPT_WARMUP, OPT_TIMEOUT,
       OPT_CONFIG };

static const struct option options[] = {
    {"m", required_argument, NULL, OPT_M},
    {"n", required_argument, NULL, OPT_N},
    {"k", required_argument, NULL, OPT_K},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"out-dtype", required_argument, NULL, OPT_OUT_DTYPE},
    {"trans-a", no_argument, NULL, OPT_TRANS_A},
    {"trans-b", no_argument, NULL, OPT_TRANS_B},
    {"device", required_argument, NULL, CLI_OPT_DEVICE},
    {"reps", required_argument, NULL, CLI_OPT_REPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"json", no_argument, NULL, CLI_OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, 'h'},
    {0},
};

/* The types a GEMM operand may be given as; tile_gemm says which pairs it supports. */
static const tile_dtype gemm_types[] = {TILE_F32, TILE_F16, TILE_BF16, TILE_F8E4M3, TILE_F8E5M2, TILE_I8, TILE_I32};
#define NTYPES ((int)(sizeof gemm_types / sizeof gemm_types[0]))

/* --config "BM=64 BN=64 SPLIT_K=2" (spaces or commas between the defines): each NAME=VALUE, NAME an identifier */
static int parse_config(const CliGetopt *g, GemmProblem *p) {
    if (strcmp(g->cmd, "run gemm")) return cli_usage_error(g->cmd, "--config is for 'tile run gemm' (tune tries the kernel's @config list)");
    if (!g->arg || strlen(g->arg) >= sizeof p->config_text) return cli_usage_error(g->cmd, "--config: too long");
    snprintf(p->config_text, sizeof p->config_text, "%s", g->arg);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(p->config_text, " ,", &save); t; t = strtok_r(NULL, " ,", &save)) {
        const char *eq = strchr(t, '=');
        bool ident = eq && eq > t && (isalpha((unsigned char)t[0]) || t[0] == '_') && eq[1];
        for (const char *c = t; ident && c < eq; c++) ident = isalnum((unsigned char)*c) || *c == '_';
        if (!ident) return cli_usage_error(g->cmd, "--config: '%s' is not NAME=VALUE", t);
        if (n == 16) return cli_usage_error(g->cmd, "--config: more than 16 defines");
        for (int i = 0; i < n; i++) /* BM=64,BM=128 ran BM=128, silently */
            if (!strncmp(p->config[i], t, (size_t)(eq - t) + 1))
                return cli_usage_error(g->cmd, "--config: %.*s is given twice ('%s', then '%s')", (int)(eq - t), t, p->config[i], t);
        p->config[n++] = t;
    }
    if (!n) return cli_usage_error(g->cmd, "--config: no NAME=VALUE given");
    p->config[n] = NULL;
    return 0;
}

int gemm_problem_parse(const char *cmd, const char *usage, int argc, char **argv, GemmProblem *p) {
    *p = (GemmProblem){.m = 256, .n = 256, .k = 256, .in = TILE_F16, .out = TILE_F32, .reps = 5, .warmup = 1, .timeout_s = 60};
    bool out_set = false;
    CliGetopt g = {.cmd = cmd, .argc = argc, .argv = argv, .shortopts = "h", .longopts = options};
    int c, rc = 0;
    /* run gemm takes sizes 0 as tile_gemm does (m or n 0: nothing to compute; k 0: C = 0); tuning one times nothing */
    int64_t lo = strcmp(cmd, "tune gemm") ? 0 : 1;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(usage);
        case OPT_M: rc = cli_i64(&g, lo, INT32_MAX, &p->m); break;
        case OPT_N: rc = cli_i64(&g, lo, INT32_MAX, &p->n); break;
        case OPT_K: rc = cli_i64(&g, lo, INT32_MAX, &p->k); break;
        case OPT_DTYPE: rc = cli_dtype(&g, gemm_types, NTYPES, "tf32", &p->in); break;
        case OPT_OUT_DTYPE:
            rc = cli_dtype(&g, gemm_types, NTYPES, "tf32", &p->out);
            out_set = true;
            break;
        case OPT_TRANS_A: p->ta = 1; break;
        case OPT_TRANS_B: p->tb = 1; break;
        case OPT_WARMUP:
        case OPT_TIMEOUT: /* run gemm accepted them and did nothing with them */
            if (strcmp(cmd, "tune gemm")) rc = cli_usage_error(cmd, "%s is for 'tile tune gemm' (run gemm times --reps calls after one first call)", g.name);
            else if (c == OPT_WARMUP) rc = cli_int(&g, 0, INT_MAX, &p->warmup);
            else rc = cli_double(&g, 1e-3, 1e9, &p->timeout_s);
            break;
        case OPT_CONFIG: rc = parse_config(&g, p); break;
        default: rc = cli_common_option(&g, c, &p->device, &p->reps, &p->json); break;
        }
    }
    if (rc || (rc = cli_no_operands(&g))) return rc;
    if (!out_set) p->out = p->in == TILE_I8 ? TILE_I32 : TILE_F32;
    if (!tile_gemm_kernel_name(p->in, p->out)) { /* a pair the options give that no kernel takes: the command line's error */
        char pairs[256] = "";
        for (int i = 0; i < NTYPES; i++)
            for (int o = 0; o < NTYPES; o++)
                if (tile_gemm_kernel_name(gemm_types[i], gemm_types[o]))
                    snprintf(pairs + strlen(pairs), sizeof pairs - strlen(pairs), "%s%s->%s", *pairs ? ", " : "",
                             gemm_types[i] == TILE_F32 ? "tf32" : tile_dtype_name(gemm_types[i]), tile_dtype_name(gemm_types[o]));
        return cli_usage_error(cmd, "no gemm kernel for --dtype %s with --out-dtype %s (pairs: %s)",
                               p->in == TILE_F32 ? "tf32" : tile_dtype_name(p->in), tile_dtype_name(p->out), pairs);
    }
    if ((rc = cli_elements(cmd, "A, --m * --k", 2, p->m, p->k)) || (rc = cli_elements(cmd, "B, --k * --n", 2, p->k, p->n)) ||
        (rc = cli_elements(cmd, "C, --m * --n", 2, p->m, p->n)))
        return rc;
    return CLI_CONTINUE;
}

int gemm_data_setup(tile_context *ctx, const GemmProblem *p, CheckRng *rng, GemmData *d) {
    memset(d, 0, sizeof *d);
    int64_t m = p->m, n = p->n, k = p->k;
    /* a size 0 (run gemm): leading dimensions stay at least 1, as tile_gemm asks, and every buffer keeps one
     * element (malloc(0) may be NULL, tile_malloc(0) is an error) */
    int64_t lda = p->ta ? m : k, ldb = p->tb ? k : n;
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    size_t an = (size_t)(m * k), bn = (size_t)(k * n), is = tile_dtype_size(p->in), os = tile_dtype_size(p->out);
    size_t an1 = an ? an : 1, bn1 = bn ? bn : 1;
    d->cn = (size_t)(m * n);
    void *ha = malloc(an1 * is), *hb = malloc(bn1 * is);
    d->hc = calloc(d->cn ? d->cn : 1, os);
    d->va = malloc(an1 * sizeof(double));
    d->vb = malloc(bn1 * sizeof(double));
    if (!ha || !hb || !d->hc || !d->va || !d->vb) {
        free(ha), free(hb);
        fprintf(stderr, "tile: out of host memory\n");
        return CLI_EXIT_FAIL;
    }
    for (size_t i = 0; i < an; i++) d->va[i] = check_fill(p->in, ha, i, check_urand(rng));
    for (size_t i = 0; i < bn; i++) d->vb[i] = check_fill(p->in, hb, i, check_urand(rng));
    tile_devptr da = 0, db = 0, dc = 0;
    /* C poisoned (0xff: NaN, or -1 for i32): an element the call leaves unwritten fails the check */
    bool ok = !tile_malloc(ctx, an1 * is, &da) && !tile_malloc(ctx, bn1 * is, &db) && !tile_malloc(ctx, (d->cn ? d->cn : 1) * os, &dc) &&
              !tile_memcpy_htod(ctx, da, ha, an * is) && !tile_memcpy_htod(ctx, db, hb, bn * is) &&
              !tile_memset(ctx, dc, 0xff, (d->cn ? d->cn : 1) * os);
    free(ha), free(hb);
    d->g = (tile_gemm_args){.size = sizeof(tile_gemm_args), .m = m, .n = n, .k = k, .a = da, .lda = lda, .trans_a = p->ta, .b = db, .ldb = ldb, .trans_b = p->tb,
                            .c = dc, .ldc = n > 0 ? n : 1, .in_dtype = p->in, .out_dtype = p->out, .alpha = 1, .beta = 0};
    if (!ok) {
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        return CLI_EXIT_FAIL;
    }
    return 0;
}

double gemm_data_check(tile_context *ctx, const GemmProblem *p, GemmData *d) {
    if (tile_memcpy_dtoh(ctx, d->hc, d->g.c, d->cn * tile_dtype_size(p->out)) != TILE_OK) return INFINITY;
    CheckGemm cg = {.m = p->m, .n = p->n, .k = p->k, .trans_a = p->ta, .trans_b = p->tb, .in = p->in, .out = p->out, .a = d->va, .b = d->vb};
    return check_gemm(&cg, d->hc);
}

void gemm_data_free(tile_context *ctx, GemmData *d) {
    tile_devptr bufs[] = {d->g.a, d->g.b, d->g.c};
    for (int i = 0; i < 3; i++)
        if (bufs[i]) tile_free(ctx, bufs[i]);
    free(d->va), free(d->vb), free(d->hc);
    memset(d, 0, sizeof *d);
}

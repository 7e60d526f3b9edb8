/* cmd_run_attention.c - `tile run attention` and `tile run decode` (alias
 * `paged-attention`): the attention entry points on random data.
 *
 * attention: random Q, K, V [batch, seq, heads, head_dim]; tile_attention_fwd.
 * decode: every sequence holds the full --context; its blocks of the paged
 * KV cache are handed out in a shuffled order (so a wrong block table read
 * shows); f8e4m3 caches hold codes of magnitude <= 2 times k_scale and
 * v_scale; tile_attention_decode_paged with its workspace; with --tree the new
 * tokens of each sequence form a random token tree (each token's parent one
 * of the tokens before it or the context) given as tree_mask.
 * Both then check up to 256 output rows against ref/'s float64 (run_check.c) and
 * time --reps further calls.  The options are one table with a flag saying
 * which of the two commands takes each. */
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/run_check.h"
#include "tools/json.h"
#include "tools/timer.h"
#include "support/hostfloat.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct AttnCli {
    int64_t batch, seq, seq_k, heads, heads_kv, head_dim, tokens, block_size, splits;
    tile_dtype dt, kv_dt;
    bool kv_set;
    int causal, reps;
    bool json, tree;
    const char *device;
} AttnCli;

enum { OPT_BATCH = 256, OPT_SEQ, OPT_SEQ_K, OPT_HEADS, OPT_HEADS_KV, OPT_HEAD_DIM, OPT_TOKENS, OPT_BLOCK_SIZE, OPT_SPLITS,
       OPT_CAUSAL, OPT_TREE, OPT_DTYPE, OPT_KV_DTYPE };

/* name, has value, code, 1: attention, 2: decode, 3: both */
#define ATTN_OPTIONS(X)                                        \
    X("batch", required_argument, OPT_BATCH, 3)                \
    X("seq", required_argument, OPT_SEQ, 3)                    \
    X("context", required_argument, OPT_SEQ, 2)                \
    X("seq-k", required_argument, OPT_SEQ_K, 1)                \
    X("heads", required_argument, OPT_HEADS, 3)                \
    X("heads-kv", required_argument, OPT_HEADS_KV, 3)          \
    X("head-dim", required_argument, OPT_HEAD_DIM, 3)          \
    X("causal", no_argument, OPT_CAUSAL, 1)                    \
    X("tokens", required_argument, OPT_TOKENS, 2)              \
    X("tree", no_argument, OPT_TREE, 2)                        \
    X("block-size", required_argument, OPT_BLOCK_SIZE, 2)      \
    X("splits", required_argument, OPT_SPLITS, 2)              \
    X("dtype", required_argument, OPT_DTYPE, 3)                \
    X("kv-dtype", required_argument, OPT_KV_DTYPE, 2)          \
    X("device", required_argument, CLI_OPT_DEVICE, 3)          \
    X("reps", required_argument, CLI_OPT_REPS, 3)              \
    X("json", no_argument, CLI_OPT_JSON, 3)                    \
    X("help", no_argument, 'h', 3)

#define OPTION(name, has, code, which) {name, has, NULL, code},
#define USERS(name, has, code, which) which,
static const struct option all_options[] = {ATTN_OPTIONS(OPTION){0}};
static const int option_users[] = {ATTN_OPTIONS(USERS)};
#undef OPTION
#undef USERS

static const char usage_attention[] =
    "usage: tile run attention [--batch B] [--seq S] [--seq-k N] [--heads H] [--heads-kv HK] [--head-dim D]\n"
    "                          [--causal] [--dtype f16|bf16] [--device emu[:TARGET]|cuda|cuda:N] [--reps R]\n"
    "Runs tile_attention_fwd on random Q, K, V [batch, seq, heads, head_dim], checks up to 256\n"
    "output rows against a float64 reference and times --reps further calls.\n"
    "\n"
    "  --batch B          sequences (default 1; 0: nothing to compute)\n"
    "  --seq S            query length (default 512; 0: nothing to compute)\n"
    "  --seq-k N          key length (default: --seq; causal aligns the ends; 0: no keys, O = 0)\n"
    "  --heads H          query heads (default 8)\n"
    "  --heads-kv HK      key/value heads, dividing H (default H)\n"
    "  --head-dim D       (default 128)\n"
    "  --causal           causal mask\n"
    "  --dtype f16|bf16   (default bf16)\n"
    "  --device D         emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n"
    "  --reps R           timed calls (default 5)\n"
    "  --json             one JSON object on one line on stdout, nothing else there\n"
    "  -h, --help         this text\n"
    CLI_EXIT_HELP;

static const char usage_decode[] =
    "usage: tile run decode [--batch B] [--context C] [--heads H] [--heads-kv HK] [--head-dim D] [--tokens T] [--tree]\n"
    "                       [--block-size 16|32|64] [--kv-dtype f16|bf16|f8e4m3] [--splits N] [--dtype f16|bf16]\n"
    "                       [--device emu[:TARGET]|cuda|cuda:N] [--reps R]\n"
    "Runs tile_attention_decode_paged: every sequence holds the full context in a paged KV cache\n"
    "whose blocks are shuffled; checks up to 256 output rows against a float64 reference.\n"
    "'tile run paged-attention' is the same command.\n"
    "\n"
    "  --batch B          sequences (default 8; 0: nothing to compute)\n"
    "  --context C        context length, new tokens included (default 1000; --seq is the same)\n"
    "  --heads H          query heads (default 8)\n"
    "  --heads-kv HK      key/value heads, dividing H (default H)\n"
    "  --head-dim D       (default 128)\n"
    "  --tokens T         new tokens per sequence, 1..8 (default 1)\n"
    "  --tree             the new tokens form a random token tree (speculative decoding: tree_mask) instead of\n"
    "                     a causal chain; each token sees the context, its ancestors and itself\n"
    "  --block-size N     tokens per KV block (default 16)\n"
    "  --kv-dtype T       the cache's type (default: --dtype; f8e4m3 with k_scale 0.25, v_scale 0.5)\n"
    "  --splits N         split the context in N parts (default 0: the library chooses)\n"
    "  --dtype f16|bf16   queries and output (default bf16)\n"
    "  --device D         emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n"
    "  --reps R           timed calls (default 5)\n"
    "  --json             one JSON object on one line on stdout, nothing else there\n"
    "  -h, --help         this text\n"
    CLI_EXIT_HELP;

/* The JSON object of a run: what both commands report (the caller adds its sizes first). */
static void json_run_tail(JsonOut *j, const tile_device_properties *props, double first, double med, int reps, const char *rate_name,
                          double rate, int64_t checked, double worst, double tol, bool ok) {
    timer_json_device(j, props);
    timer_json_times(j, first, med, reps), json_num(j, rate_name, rate);
    json_int(j, "checked_rows", checked), json_num(j, "max_error", worst), json_num(j, "tolerance", tol), json_bool(j, "ok", ok);
    json_end(j);
}

/* The text of a run after its header, `rate` saying the speed: what both commands print. */
static void text_run_tail(const tile_device_properties *props, double first, double med, int reps, const char *rate, int64_t checked,
                          double worst, double tol) {
    timer_print_first(first);
    timer_print_next(med, reps, rate, props->is_emulator);
    printf("  check       %lld rows against a float64 reference: max |error| %.3g (tolerance %.3g): %s\n", (long long)checked, worst, tol,
           worst <= tol ? "ok" : "MISMATCH");
}

static const tile_dtype act_types[] = {TILE_F16, TILE_BF16};
static const tile_dtype kv_types[] = {TILE_F16, TILE_BF16, TILE_F8E4M3};

static int attn_cli_parse(const char *cmd, int argc, char **argv, AttnCli *p, bool decode) {
    *p = (AttnCli){.batch = decode ? 8 : 1, .seq = decode ? 1000 : 512, .seq_k = -1, .heads = 8, .heads_kv = -1, .head_dim = 128,
                   .tokens = 1, .block_size = 16, .dt = TILE_BF16, .reps = 5};
    /* this command's rows of the table: getopt reports the other command's options as unknown */
    enum { N = sizeof all_options / sizeof all_options[0] };
    struct option opts[N];
    int n = 0;
    for (int i = 0; i < N - 1; i++)
        if (option_users[i] & (decode ? 2 : 1)) opts[n++] = all_options[i];
    opts[n] = (struct option){0};
    CliGetopt g = {.cmd = cmd, .argc = argc, .argv = argv, .shortopts = "h", .longopts = opts};
    int c, rc = 0;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(decode ? usage_decode : usage_attention);
        /* as the API takes them: batch and lengths 0 are calls with nothing to compute (seq_k 0: every row sees no key,
         * O = 0; decode's --batch 0: num_seqs 0); decode's context holds its new tokens (at least 1, checked in
         * cmd_run_decode) */
        case OPT_BATCH: rc = cli_i64(&g, 0, INT32_MAX, &p->batch); break;
        case OPT_SEQ: rc = cli_i64(&g, decode ? 1 : 0, INT32_MAX, &p->seq); break;
        case OPT_SEQ_K: rc = cli_i64(&g, 0, INT32_MAX, &p->seq_k); break;
        case OPT_HEADS: rc = cli_i64(&g, 1, INT32_MAX, &p->heads); break;
        case OPT_HEADS_KV: rc = cli_i64(&g, 1, INT32_MAX, &p->heads_kv); break;
        case OPT_HEAD_DIM: rc = cli_i64(&g, 1, INT32_MAX, &p->head_dim); break;
        case OPT_TOKENS: rc = cli_i64(&g, 1, 8, &p->tokens); break; /* the kernels take 1..8 (it ran and the library refused 9) */
        case OPT_BLOCK_SIZE: rc = cli_i64(&g, 1, INT32_MAX, &p->block_size); break;
        case OPT_SPLITS: rc = cli_i64(&g, 0, INT32_MAX, &p->splits); break;
        case OPT_CAUSAL: p->causal = 1; break;
        case OPT_TREE: p->tree = true; break;
        case OPT_DTYPE: rc = cli_dtype(&g, act_types, 2, NULL, &p->dt); break;
        case OPT_KV_DTYPE:
            rc = cli_dtype(&g, kv_types, 3, NULL, &p->kv_dt);
            p->kv_set = true;
            break;
        default: rc = cli_common_option(&g, c, &p->device, &p->reps, &p->json); break;
        }
    }
    if (rc || (rc = cli_no_operands(&g))) return rc;
    if (p->heads_kv < 0) p->heads_kv = p->heads;
    if (p->seq_k < 0) p->seq_k = p->seq;
    if (!p->kv_set) p->kv_dt = p->dt;
    if (!decode && ((rc = cli_elements(cmd, "--batch * --seq * --heads * --head-dim", 4, p->batch, p->seq, p->heads, p->head_dim)) ||
                    (rc = cli_elements(cmd, "--batch * --seq-k * --heads-kv * --head-dim", 4, p->batch, p->seq_k, p->heads_kv, p->head_dim))))
        return rc;
    /* Option values the kernels do not take, which the library reports as TILE_ERROR_UNSUPPORTED (the limits of
     * docs/attention.md, "Limits and not yet"), are the command line's error: exit 2, as gemm's type pair.  The
     * library's other TILE_ERROR_UNSUPPORTED (a driver older than the PTX) stays a failure, 3.  Decode's are
     * checked in cmd_run_decode, after the sizes. */
    /* named by their flags, before anything runs (the library's message named its fields, after the header) */
    if (p->heads % p->heads_kv)
        return cli_usage_error(cmd, "--heads (%lld) must be a multiple of --heads-kv (%lld)", (long long)p->heads, (long long)p->heads_kv);
    if (decode && p->block_size != 16 && p->block_size != 32 && p->block_size != 64)
        return cli_usage_error(cmd, "--block-size must be 16, 32 or 64, got %lld", (long long)p->block_size);
    if (!decode && p->batch * p->heads > 65535)
        return cli_usage_error(cmd, "--batch * --heads is %lld: at most 65535 (the launch grid)", (long long)(p->batch * p->heads));
    return CLI_CONTINUE;
}

static tile_status attention_call(tile_context *ctx, void *a) {
    tile_status st = tile_attention_fwd(ctx, a);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

static tile_status decode_call(tile_context *ctx, void *a) {
    tile_status st = tile_attention_decode_paged(ctx, a);
    return st == TILE_OK ? tile_synchronize(ctx) : st;
}

int cmd_run_attention(int argc, char **argv) {
    AttnCli p;
    int rc = attn_cli_parse("run attention", argc, argv, &p, false);
    if (rc != CLI_CONTINUE) return rc;
    int64_t B = p.batch, Sq = p.seq, Sk = p.seq_k, H = p.heads, Hk = p.heads_kv, D = p.head_dim;
    size_t nq = (size_t)(B * Sq * H * D), nk = (size_t)(B * Sk * Hk * D);
    /* a size 0 (--batch, --seq, --seq-k) still allocates one element: malloc(0) may say NULL */
    size_t aq = nq ? nq : 1, ak = nk ? nk : 1;
    uint16_t *hq = malloc(aq * 2), *hk = malloc(ak * 2), *hv = malloc(ak * 2), *ho = malloc(aq * 2);
    double *vq = malloc(aq * 8), *vk = malloc(ak * 8), *vv = malloc(ak * 8);
    tile_context *ctx = NULL;
    tile_status st = TILE_OK;
    if (!hq || !hk || !hv || !ho || !vq || !vk || !vv) {
        fprintf(stderr, "tile: out of host memory\n");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (size_t i = 0; i < nq; i++) vq[i] = check_fill(p.dt, hq, i, check_urand(&rng));
    for (size_t i = 0; i < nk; i++) vk[i] = check_fill(p.dt, hk, i, check_urand(&rng)), vv[i] = check_fill(p.dt, hv, i, check_urand(&rng));
    if ((rc = cli_context_open("run attention", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    tile_devptr dq, dk, dv, dout;
    if (tile_malloc(ctx, aq * 2, &dq) || tile_malloc(ctx, ak * 2, &dk) || tile_malloc(ctx, ak * 2, &dv) || tile_malloc(ctx, aq * 2, &dout) ||
        tile_memcpy_htod(ctx, dq, hq, nq * 2) || tile_memcpy_htod(ctx, dk, hk, nk * 2) || tile_memcpy_htod(ctx, dv, hv, nk * 2) ||
        tile_memset(ctx, dout, 0xff, aq * 2)) { /* the output poisoned (NaN): a row the call leaves unwritten fails the check */
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    bool prog = cli_progress_wanted(p.json) && props.is_emulator;
    if (!p.json) {
        printf("attention batch %lld seq %lld/%lld heads %lld/%lld head_dim %lld %s%s on %s (%s)\n", (long long)B, (long long)Sq, (long long)Sk,
               (long long)H, (long long)Hk, (long long)D, tile_dtype_name(p.dt), p.causal ? " causal" : "", props.name, props.arch);
        fflush(stdout);
    }
    cli_progress(prog, "first call (compiles or loads the kernels) ...");
    tile_attention_args a = {.dtype = p.dt, .batch = B, .heads_q = H, .heads_kv = Hk, .head_dim = D, .seq_q = Sq, .seq_k = Sk,
                             .q = dq, .k = dk, .v = dv, .o = dout, .causal = p.causal, .window_left = -1, .window_right = -1};
    double first;
    st = timer_call(attention_call, ctx, &a, &first);
    if (st != TILE_OK) {
        rc = cli_call_failed(ctx, "tile_attention_fwd", st);
        goto done;
    }
    tile_memcpy_dtoh(ctx, ho, dout, nq * 2);
    CheckAttention ca = {.batch = B, .seq_q = Sq, .seq_k = Sk, .heads = H, .heads_kv = Hk, .head_dim = D, .causal = p.causal,
                         .dtype = p.dt, .q = vq, .k = vk, .v = vv};
    int64_t checked;
    cli_progress(prog, "checking against float64 ...");
    double worst = check_attention(&ca, ho, &checked);
    cli_progress(prog, "timing %d calls ...", p.reps);
    double med;
    st = timer_reps(attention_call, ctx, &a, p.reps, &med);
    if (med < 0) goto done;
    double tol = check_attention_tolerance(p.dt);
    double flops = 4.0 * (double)B * H * Sq * Sk * D * (p.causal ? 0.5 : 1.0);
    if (p.json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", "attention");
        json_int(&j, "batch", B), json_int(&j, "seq_q", Sq), json_int(&j, "seq_k", Sk), json_int(&j, "heads", H), json_int(&j, "heads_kv", Hk);
        json_int(&j, "head_dim", D), json_str(&j, "dtype", tile_dtype_name(p.dt)), json_bool(&j, "causal", p.causal);
        json_run_tail(&j, &props, first, med, p.reps, "tflops", flops / med * 1e-12, checked, worst, tol, st == TILE_OK && worst <= tol);
    } else {
        char rate[64];
        snprintf(rate, sizeof rate, "%.2f TFLOP/s", flops / med * 1e-12);
        text_run_tail(&props, first, med, p.reps, rate, checked, worst, tol);
    }
    rc = st != TILE_OK ? CLI_EXIT_FAIL : worst <= tol ? CLI_EXIT_OK : CLI_EXIT_FAIL;
done:
    free(hq), free(hk), free(hv), free(ho), free(vq), free(vk), free(vv);
    if (ctx) tile_context_destroy(ctx);
    return rc;
}

int cmd_run_decode(int argc, char **argv) {
    AttnCli p;
    int rc = attn_cli_parse("run decode", argc, argv, &p, true);
    if (rc != CLI_CONTINUE) return rc;
    int64_t S = p.batch, ctxlen = p.seq, H = p.heads, Hk = p.heads_kv, D = p.head_dim, T = p.tokens, bs = p.block_size;
    tile_dtype kv = p.kv_dt;
    if (ctxlen < T) return cli_usage_error("run decode", "--context must be at least --tokens");
    /* every sequence has the full context; blocks handed out in a shuffled order */
    int64_t nb = (ctxlen + bs - 1) / bs, num_blocks = S * nb;
    if ((rc = cli_elements("run decode", "--batch * --tokens * --heads * --head-dim", 4, S, T, H, D)) ||
        (rc = cli_elements("run decode", "the KV cache, --batch * --context (in blocks) * --heads-kv * --head-dim", 4, num_blocks, bs, Hk, D)))
        return rc;
    if (num_blocks > INT32_MAX) /* the block tables hold int32 block numbers */
        return cli_usage_error("run decode", "--batch * --context / --block-size is %lld blocks, more than the block tables' int32 holds",
                               (long long)num_blocks);
    if (H % Hk == 0 && H / Hk * T > 64) /* the kernels' limits, as in attn_cli_parse */
        return cli_usage_error("run decode", "--heads / --heads-kv * --tokens is %lld query rows per KV head: decode takes at most 64",
                               (long long)(H / Hk * T));
    if (Hk > 65535 || S > 65535) return cli_usage_error("run decode", "--heads-kv and --batch must be at most 65535 (the launch grid)");
    /* --batch 0 (num_seqs 0, a call with nothing to compute): the API still takes num_blocks from 1, so the cache
     * holds one block; every buffer holds at least one element (malloc(0) may say NULL) */
    if (num_blocks == 0) num_blocks = 1;
    size_t nq = (size_t)(S * T * H * D), nc = (size_t)(num_blocks * bs * Hk * D), kes = kv == TILE_F8E4M3 ? 1 : 2;
    size_t aq = nq ? nq : 1, as = S ? (size_t)S : 1;
    int32_t *table = malloc(sizeof(int32_t) * (size_t)num_blocks), *lens = malloc(sizeof(int32_t) * as);
    int32_t *tree = p.tree ? malloc(sizeof(int32_t) * as * (size_t)T) : NULL;
    uint16_t *hq = malloc(aq * 2), *ho = malloc(aq * 2);
    uint8_t *hk = malloc(nc * kes), *hv = malloc(nc * kes);
    double *vq = malloc(aq * 8), *vk = malloc(nc * 8), *vv = malloc(nc * 8);
    tile_context *ctx = NULL;
    tile_status st = TILE_OK;
    if (!table || !lens || !hq || !ho || !hk || !hv || !vq || !vk || !vv || (p.tree && !tree)) {
        fprintf(stderr, "tile: out of host memory\n");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (int64_t i = 0; i < num_blocks; i++) table[i] = (int32_t)i;
    for (int64_t i = num_blocks - 1; i > 0; i--) {
        int64_t j = (int64_t)((check_urand(&rng) + 1) / 2 * (double)(i + 1)) % (i + 1);
        int32_t x = table[i];
        table[i] = table[j], table[j] = x;
    }
    for (int64_t s = 0; s < S; s++) lens[s] = (int32_t)ctxlen;
    /* a random tree per sequence: token t's parent is one of 0 .. t - 1 or the context (-1); its mask row
     * is its parent's with bit t added, so it sees its ancestors and itself */
    for (int64_t s = 0; tree && s < S; s++)
        for (int64_t t = 0; t < T; t++) {
            int64_t parent = (int64_t)((check_urand(&rng) + 1) / 2 * (double)(t + 1)) % (t + 1) - 1;
            tree[s * T + t] = (parent < 0 ? 0 : tree[s * T + parent]) | (int32_t)(1u << t);
        }
    float k_scale = 0.25f, v_scale = 0.5f;
    for (size_t i = 0; i < nq; i++) vq[i] = check_fill(p.dt, hq, i, check_urand(&rng));
    for (size_t i = 0; i < nc; i++) {
        if (kv == TILE_F8E4M3) { /* codes of magnitude <= 2 (0x40), times the scales */
            uint8_t c, d;
            do c = check_rng_byte(&rng);
            while ((c & 0x7f) > 0x40);
            do d = check_rng_byte(&rng);
            while ((d & 0x7f) > 0x40);
            hk[i] = c, hv[i] = d, vk[i] = f8e4m3_to_d(c), vv[i] = f8e4m3_to_d(d);
        } else vk[i] = check_fill(kv, hk, i, check_urand(&rng)), vv[i] = check_fill(kv, hv, i, check_urand(&rng));
    }
    if ((rc = cli_context_open("run decode", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    tile_devptr dq, dout, dk, dv, dt, dl, dtree = 0;
    if (tile_malloc(ctx, aq * 2, &dq) || tile_malloc(ctx, aq * 2, &dout) || tile_malloc(ctx, nc * kes, &dk) || tile_malloc(ctx, nc * kes, &dv) ||
        tile_malloc(ctx, 4 * (size_t)num_blocks, &dt) || tile_malloc(ctx, 4 * as, &dl) || tile_memcpy_htod(ctx, dq, hq, nq * 2) ||
        tile_memcpy_htod(ctx, dk, hk, nc * kes) || tile_memcpy_htod(ctx, dv, hv, nc * kes) ||
        tile_memcpy_htod(ctx, dt, table, 4 * (size_t)num_blocks) || tile_memcpy_htod(ctx, dl, lens, 4 * (size_t)S) ||
        (tree && (tile_malloc(ctx, 4 * as * (size_t)T, &dtree) || tile_memcpy_htod(ctx, dtree, tree, 4 * (size_t)(S * T)))) ||
        tile_memset(ctx, dout, 0xff, aq * 2)) { /* the output poisoned (NaN), as run attention's: a row left unwritten fails */
        fprintf(stderr, "tile: %s\n", tile_last_error(ctx));
        goto done;
    }
    tile_paged_attention_args a = {.size = sizeof a, .dtype = p.dt, .kv_dtype = kv, .k_scale = kv == TILE_F8E4M3 ? k_scale : 0,
                                   .v_scale = kv == TILE_F8E4M3 ? v_scale : 0, .num_seqs = S, .heads_q = H,
                                   .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs, .num_blocks = num_blocks, .q = dq,
                                   .o = dout, .k_cache = dk, .v_cache = dv, .block_tables = dt, .block_table_stride = nb,
                                   .context_lens = dl, .max_context_len = ctxlen, .num_splits = (int)p.splits, .tree_mask = dtree};
    size_t ws_bytes = 0;
    int splits = 1;
    if ((st = tile_paged_attention_workspace_size(ctx, &a, &ws_bytes, &splits)) == TILE_OK && ws_bytes &&
        (st = tile_malloc(ctx, ws_bytes, &a.workspace)) == TILE_OK)
        a.workspace_bytes = ws_bytes;
    bool prog = cli_progress_wanted(p.json) && props.is_emulator;
    if (!p.json) {
        printf("decode batch %lld context %lld tokens %lld%s heads %lld/%lld head_dim %lld block %lld %s, KV %s, %d split%s on %s (%s)\n",
               (long long)S, (long long)ctxlen, (long long)T, tree ? " (a tree)" : "", (long long)H, (long long)Hk, (long long)D, (long long)bs, tile_dtype_name(p.dt),
               tile_dtype_name(kv), splits, splits == 1 ? "" : "s", props.name, props.arch);
        fflush(stdout);
    }
    cli_progress(prog, "first call (compiles or loads the kernels) ...");
    double first = 0;
    if (st == TILE_OK) st = timer_call(decode_call, ctx, &a, &first);
    if (st != TILE_OK) {
        rc = cli_call_failed(ctx, "tile_attention_decode_paged", st);
        goto done;
    }
    tile_memcpy_dtoh(ctx, ho, dout, nq * 2);
    CheckDecode cd = {.seqs = S, .tokens = T, .heads = H, .heads_kv = Hk, .head_dim = D, .block_size = bs, .num_blocks = num_blocks,
                      .table_stride = nb, .dtype = p.dt, .q = vq, .k = vk, .v = vv, .k_scale = kv == TILE_F8E4M3 ? k_scale : 1,
                      .v_scale = kv == TILE_F8E4M3 ? v_scale : 1, .table = table, .lens = lens, .tree_mask = tree};
    int64_t checked;
    cli_progress(prog, "checking against float64 ...");
    double worst = check_decode(&cd, ho, &checked);
    cli_progress(prog, "timing %d calls ...", p.reps);
    double med;
    st = timer_reps(decode_call, ctx, &a, p.reps, &med);
    if (med < 0) goto done;
    double tol = check_attention_tolerance(p.dt);
    double bytes = 2.0 * (double)S * ctxlen * Hk * D * (double)kes;
    if (p.json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", "decode");
        json_int(&j, "batch", S), json_int(&j, "context", ctxlen), json_int(&j, "tokens", T), json_bool(&j, "tree", p.tree);
        json_int(&j, "heads", H), json_int(&j, "heads_kv", Hk), json_int(&j, "head_dim", D), json_int(&j, "block_size", bs), json_str(&j, "dtype", tile_dtype_name(p.dt));
        json_str(&j, "kv_dtype", tile_dtype_name(kv)), json_int(&j, "splits", splits);
        json_run_tail(&j, &props, first, med, p.reps, "kv_gbps", bytes / med * 1e-9, checked, worst, tol, st == TILE_OK && worst <= tol);
    } else {
        char rate[64];
        snprintf(rate, sizeof rate, "KV cache read at %.1f GB/s", bytes / med * 1e-9);
        text_run_tail(&props, first, med, p.reps, rate, checked, worst, tol);
    }
    rc = st != TILE_OK ? CLI_EXIT_FAIL : worst <= tol ? CLI_EXIT_OK : CLI_EXIT_FAIL;
done:
    free(table), free(lens), free(tree), free(hq), free(ho), free(hk), free(hv), free(vq), free(vk), free(vv);
    if (ctx) tile_context_destroy(ctx);
    return rc;
}

/* cmd_run_layer.c - `tile run layer`: one Llama-style decoder layer built from
 * the C API alone, run as an engine runs it (a prefill of several prompts of
 * different lengths, then decode steps appending to a paged KV cache), every
 * step's output checked against a float64 reference of the same layer
 * (docs/engine.md walks through it as the example to copy).
 *
 * The layer, per step, on the tokens of the step (h: the residual stream):
 *   1. a = RMSNorm(h)                                tile_fused_add_rmsnorm (no residual)
 *   2. qkv = a Wqkv^T                                tile_gemm
 *   3. RoPE on q, k (in place in qkv); k, v to the paged cache at the tokens' slots
 *                                                    tile_rope_kv_append
 *   4. attention: prefill  tile_attention_fwd (varlen, causal, over qkv itself);
 *                 decode   tile_attention_decode_paged (T new tokens per sequence)
 *   5. p = o Wo^T                                    tile_gemm
 *   6. h = h + p, a = RMSNorm(h)                     tile_fused_add_rmsnorm
 *   7. dense: h = h + W_down (silu(a Wg^T) * (a Wu^T))
 *                                                    tile_gemm, tile_gated_activation, tile_gemm (beta = 1)
 *      --moe: logits = a Wr^T (f32); y = tile_moe_forward (softmax top-k,
 *             renormalized); h = h + y               tile_gemm, tile_moe_forward, a glue kernel
 *             compiled from source here (tile_module_load_source)
 * --kv-dtype f8e4m3: the cache holds f8e4m3 codes with per-tensor scales 1/64
 * (tile_rope_kv_append writes them, tile_attention_decode_paged reads them);
 * the prefill's attention reads K and V as computed, as engines do.
 * The reference runs the same steps in float64, rounding to the device type
 * where the kernels store a result in it (a, qkv, rotated q and k, o, p, the
 * residual sums, the activations; f8 for the cache's values; not inside a GEMM or attention), so the
 * two stay within a few roundings of each other; the MoE routing is compared
 * with the device's (an exact near-tie may go either way: then the
 * device's choice is used).  Weights are uniform with variance 1 / fan_in
 * (activations stay O(1); attention scores are O(1), so the softmax and the
 * rotation's positions matter), norms' weights in [0.8, 1.2].
 * Tolerance per element: 4 ulps of the type of |ref| plus 4 ulps of the
 * step's largest |h|: the roundings above, each of half an ulp of a value of
 * that size, are compounded by at most a few O(1) gains; a wrong position,
 * slot, head or scale moves outputs by O(1).
 * Decode steps run as an engine captures them in a CUDA graph: before the
 * first, the workspaces of paged attention and MoE are allocated and every
 * call of the step is prepared (tile_*_prepare); each decode step is then
 * checked to allocate, free, synchronize and load nothing
 * (tile_context_get_stats_ex around its calls).
 * Exit status 3 when a call fails, a step does not match or a decode step is
 * not graph-safe. */
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

typedef struct LayerCli {
    int64_t hidden, heads, heads_kv, head_dim, inter, prompts, steps, experts, topk, spec, block_size;
    tile_dtype dtype;
    bool kv_f8; /* an f8e4m3 KV cache with per-tensor scales */
    bool moe, json;
    const char *device;
} LayerCli;

enum {
    OPT_HIDDEN = 256, OPT_HEADS, OPT_HEADS_KV, OPT_HEAD_DIM, OPT_INTER, OPT_PROMPTS, OPT_STEPS, OPT_EXPERTS, OPT_TOPK, OPT_SPEC,
    OPT_BS, OPT_DTYPE, OPT_KV, OPT_MOE
};

static const struct option layer_options[] = {
    {"hidden", required_argument, NULL, OPT_HIDDEN},   {"heads", required_argument, NULL, OPT_HEADS},
    {"heads-kv", required_argument, NULL, OPT_HEADS_KV}, {"head-dim", required_argument, NULL, OPT_HEAD_DIM},
    {"inter", required_argument, NULL, OPT_INTER},     {"prompts", required_argument, NULL, OPT_PROMPTS},
    {"steps", required_argument, NULL, OPT_STEPS},     {"experts", required_argument, NULL, OPT_EXPERTS},
    {"topk", required_argument, NULL, OPT_TOPK},       {"spec-tokens", required_argument, NULL, OPT_SPEC},
    {"block-size", required_argument, NULL, OPT_BS},   {"dtype", required_argument, NULL, OPT_DTYPE},
    {"kv-dtype", required_argument, NULL, OPT_KV},
    {"moe", no_argument, NULL, OPT_MOE},               {"device", required_argument, NULL, CLI_OPT_DEVICE},
    {"json", no_argument, NULL, CLI_OPT_JSON},         {"help", no_argument, NULL, 'h'},
    {0},
};

static const char layer_usage[] =
    "usage: tile run layer [--hidden H] [--heads HQ] [--heads-kv HK] [--head-dim D] [--inter I] [--prompts P]\n"
    "                      [--steps S] [--spec-tokens T] [--moe] [--experts E] [--topk K] [--block-size B]\n"
    "                      [--dtype f16|bf16] [--kv-dtype auto|f8e4m3] [--device D] [--json]\n"
    "Runs one Llama-style decoder layer from the C API with random weights: RMSNorm, QKV GEMM, RoPE + paged\n"
    "KV append, attention (varlen prefill, then paged decode), O GEMM, residual add + RMSNorm, SiLU-gated MLP\n"
    "(or --moe: routed experts), residual; a prefill of P prompts of different lengths, then S decode steps\n"
    "of T tokens per prompt, each step's final hidden states checked against a float64 reference.\n"
    "\n"
    "  --hidden H             model width (default 256)\n"
    "  --heads HQ             query heads (default 4)\n"
    "  --heads-kv HK          KV heads, dividing HQ (default 2)\n"
    "  --head-dim D           a multiple of 16, at most 256 (default 64)\n"
    "  --inter I              MLP (or each expert's) intermediate width (default 512; --moe: 128)\n"
    "  --prompts P            sequences, prompts of 7, 22, 37, 21, 36, ... tokens (default 3)\n"
    "  --steps S              decode steps after the prefill (default 3)\n"
    "  --spec-tokens T        tokens per sequence in each decode step, 1..8 (speculative decoding; default 1)\n"
    "  --moe                  tile_moe_forward instead of the dense MLP\n"
    "  --experts E            experts (default 8)\n"
    "  --topk K               experts per token, 1..8 (default 2)\n"
    "  --block-size B         KV cache block size: 16, 32 or 64 (default 16)\n"
    "  --dtype f16|bf16       activations and weights (default bf16)\n"
    "  --kv-dtype auto|f8e4m3 the KV cache: dtype, or f8e4m3 with per-tensor scales 1/64 (default auto)\n"
    "  --device D             emu, emu:TARGET (e.g. emu:sm_90a), cuda or cuda:N (default: TILE_DEVICE, else cuda when present, else emu)\n"
    "  --json                 one JSON object on one line on stdout, nothing else there\n"
    "  -h, --help             this text\n"
    CLI_EXIT_HELP;

static const tile_dtype in_types[] = {TILE_F16, TILE_BF16};
static const char *const kv_names[] = {"auto", "f8e4m3", NULL};
/* The f8 cache's scales: a power of two (x / scale is exact), so that |k|, |v| up to 448 / 64 = 7 fit */
static const float KV_SCALE = 1.0f / 64;

static int layer_cli_parse(int argc, char **argv, LayerCli *p) {
    *p = (LayerCli){.hidden = 256, .heads = 4, .heads_kv = 2, .head_dim = 64, .inter = -1, .prompts = 3, .steps = 3, .experts = 8,
                    .topk = 2, .spec = 1, .block_size = 16, .dtype = TILE_BF16};
    CliGetopt g = {.cmd = "run layer", .argc = argc, .argv = argv, .shortopts = "h", .longopts = layer_options};
    int c, rc = 0, which;
    while (!rc && (c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(layer_usage);
        case OPT_HIDDEN: rc = cli_i64(&g, 16, 65536, &p->hidden); break;
        case OPT_HEADS: rc = cli_i64(&g, 1, 256, &p->heads); break;
        case OPT_HEADS_KV: rc = cli_i64(&g, 1, 256, &p->heads_kv); break;
        case OPT_HEAD_DIM: rc = cli_i64(&g, 16, 256, &p->head_dim); break;
        case OPT_INTER: rc = cli_i64(&g, 1, 1 << 20, &p->inter); break;
        case OPT_PROMPTS: rc = cli_i64(&g, 1, 256, &p->prompts); break;
        case OPT_STEPS: rc = cli_i64(&g, 0, 1024, &p->steps); break;
        case OPT_EXPERTS: rc = cli_i64(&g, 1, 1024, &p->experts); break;
        case OPT_TOPK: rc = cli_i64(&g, 1, 8, &p->topk); break;
        case OPT_SPEC: rc = cli_i64(&g, 1, 8, &p->spec); break;
        case OPT_BS: rc = cli_i64(&g, 16, 64, &p->block_size); break;
        case OPT_DTYPE: rc = cli_dtype(&g, in_types, 2, NULL, &p->dtype); break;
        case OPT_KV:
            if (!(rc = cli_choice(&g, kv_names, &which))) p->kv_f8 = which == 1;
            break;
        case OPT_MOE: p->moe = true; break;
        default: rc = cli_common_option(&g, c, &p->device, NULL, &p->json); break;
        }
    }
    if (rc || (rc = cli_no_operands(&g))) return rc;
    if (p->heads % p->heads_kv) return cli_usage_error(g.cmd, "--heads must be a multiple of --heads-kv");
    if (p->head_dim % 16) return cli_usage_error(g.cmd, "--head-dim must be a multiple of 16");
    if (p->block_size != 16 && p->block_size != 32 && p->block_size != 64) return cli_usage_error(g.cmd, "--block-size must be 16, 32 or 64");
    if (p->topk > p->experts) return cli_usage_error(g.cmd, "--topk must be at most --experts");
    if (p->inter < 0) p->inter = p->moe ? 128 : 512;
    return CLI_CONTINUE;
}

/* ---- host tensors: 16-bit values and their exact doubles ---- */
typedef struct HostT {
    uint16_t *h;
    double *d;
    size_t n;
} HostT;

static bool host_alloc(HostT *t, size_t n) {
    t->n = n, t->h = malloc(2 * (n ? n : 1)), t->d = malloc(sizeof(double) * (n ? n : 1));
    return t->h && t->d;
}
static void host_free(HostT *t) { free(t->h), free(t->d); }
/* uniform in [center - amp, center + amp), rounded to dt */
static void host_fill(HostT *t, tile_dtype dt, CheckRng *r, double center, double amp) {
    for (size_t i = 0; i < t->n; i++) t->d[i] = check_fill(dt, t->h, i, center + amp * check_urand(r));
}

/* The value as the device stores it in dt */
static double rd(tile_dtype dt, double v) {
    uint16_t h;
    return check_fill(dt, &h, 0, v);
}

/* ---- the layer's weights and the run's fixed shapes ---- */
typedef struct Layer {
    const LayerCli *p;
    int64_t H, Hq, Hk, D, I, E, K, row; /* row: qkv's row, (Hq + 2 Hk) D */
    HostT wn1, wn2, wqkv, wo, wgu, wd, wr, w1, w2;
    float *cs;                          /* cos_sin [max_pos, D], f32 */
    int64_t max_pos;
    /* sequences and the cache */
    int64_t S, T, sbt, num_blocks, *len; /* len: each prompt's length */
    int32_t *table;                       /* [S, sbt] */
    double *kref, *vref;                  /* the reference's cache: K (rotated) and V [S, max_pos, Hk, D], f8 values with --kv-dtype f8e4m3 */
    double *kx, *vx;                      /* the same before the cache's quantization (what the prefill's attention reads) */
} Layer;

/* Device buffers (sized for the largest step) */
typedef struct LayerDev {
    tile_devptr wn1, wn2, wqkv, wo, wgu, wd, wr, w1, w2, cs;
    tile_devptr h, a, qkv, o, proj, gu, act, moe_out, logits, ids, topw, pos, slots, cu, table, lens, kc, vc;
    tile_devptr pa_ws, moe_ws; /* the decode steps' workspaces (0: none needed) */
    size_t pa_ws_bytes, moe_ws_bytes;
    tile_module *glue;
    tile_kernel *residual_add;
} LayerDev;

/* ---- a glue kernel an engine writes itself: h = round(h + y) with y f32 (MoE's output) ---- */
static const char glue_source[] =
    "// h[i] = round(h[i] + y[i]): the residual add after tile_moe_forward, whose output is f32\n"
    "fn residual_add(h, y, n: i32, const BLOCK, const T) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(h + offs, cast(cast(load(h + offs, m, 0.0), f32) + load(y + offs, m, 0.0), T), m);\n"
    "}\n"
    "kernel residual_add_f16(h: *f16, y: *f32, n: i32, const BLOCK: i32 = 1024) { residual_add(h, y, n, BLOCK, f16); }\n"
    "kernel residual_add_bf16(h: *bf16, y: *f32, n: i32, const BLOCK: i32 = 1024) { residual_add(h, y, n, BLOCK, bf16); }\n";

/* ---- one step on the device ---- */
typedef struct Step {
    bool prefill;
    int64_t n;              /* tokens of the step */
    int64_t max_len;        /* prefill: the longest prompt; decode: the longest context after the step */
    const int64_t *seq, *pos; /* each token's sequence and position */
} Step;

/* The decode steps' attention: max_context_len is each sequence's capacity (its block table's), not the
 * longest context yet, so the split count, the variants and the workspace stay the same every step */
static tile_paged_attention_args paged_args(const Layer *L, const LayerDev *d) {
    int64_t q_row = L->row, D = L->D;
    return (tile_paged_attention_args){.size = sizeof(tile_paged_attention_args), .dtype = L->p->dtype, .num_seqs = L->S,
                                       .heads_q = L->Hq, .heads_kv = L->Hk, .head_dim = D, .num_tokens = L->T,
                                       .block_size = L->p->block_size, .num_blocks = L->num_blocks, .q = d->qkv,
                                       .q_stride = {L->T * q_row, q_row, D}, .o = d->o, .k_cache = d->kc, .v_cache = d->vc,
                                       .block_tables = d->table, .block_table_stride = L->sbt, .context_lens = d->lens,
                                       .max_context_len = L->sbt * L->p->block_size, .workspace = d->pa_ws, .workspace_bytes = d->pa_ws_bytes,
                                       .kv_dtype = L->p->kv_f8 ? TILE_F8E4M3 : L->p->dtype, .k_scale = L->p->kv_f8 ? KV_SCALE : 0,
                                       .v_scale = L->p->kv_f8 ? KV_SCALE : 0};
}

/* The MLP of --moe: routed by tile_moe_forward itself from f32 logits (softmax, top-k, renormalized);
 * decode steps use the caller's workspace */
static tile_moe_args moe_args(const Layer *L, const LayerDev *d, int64_t n, bool with_workspace) {
    return (tile_moe_args){.size = sizeof(tile_moe_args), .tokens = n, .hidden = L->H, .inter = L->I, .experts = L->E, .topk = L->K,
                           .dtype = L->p->dtype, .x = d->a, .w1 = d->w1, .w2 = d->w2, .out = d->moe_out, .router_logits = d->logits,
                           .logits_dtype = TILE_F32, .topk_ids = d->ids, .topk_weights = d->topw, .scoring = TILE_MOE_SOFTMAX,
                           .renormalize = 1, .workspace = with_workspace ? d->moe_ws : 0, .workspace_bytes = with_workspace ? d->moe_ws_bytes : 0};
}

/* prepare: call the _prepare of every call that has one (compile and load, launch nothing) */
#define CALL(run, prep, args)                                                                                       \
    do {                                                                                                            \
        if ((st = prepare ? prep(ctx, args) : run(ctx, args)) != TILE_OK) {                                         \
            fprintf(stderr, "tile: run layer: %s failed: %s\n", prepare ? #prep : #run, tile_last_error(ctx));      \
            return st;                                                                                              \
        }                                                                                                           \
    } while (0)
static tile_gemm_args gemm_args(tile_dtype dt, int64_t m, int64_t n, int64_t k, tile_devptr a, tile_devptr w, tile_devptr c, tile_dtype out) {
    return (tile_gemm_args){.size = sizeof(tile_gemm_args), .m = m, .n = n, .k = k, .a = a, .lda = k, .b = w, .ldb = k, .trans_b = 1, .c = c,
                            .ldc = n, .in_dtype = dt, .out_dtype = out, .alpha = 1};
}

/* The step's calls (launched on the default stream, nothing synchronized), or with prepare their _prepare */
static tile_status layer_step_device(tile_context *ctx, const Layer *L, const LayerDev *d, const Step *s, bool prepare) {
    const LayerCli *p = L->p;
    tile_dtype dt = p->dtype;
    int64_t n = s->n, H = L->H, Hq = L->Hq, Hk = L->Hk, D = L->D, I = L->I;
    tile_status st;
    /* 1. a = RMSNorm(h) */
    tile_norm_args n1 = {.size = sizeof n1, .dtype = dt, .tokens = n, .hidden = H, .x = d->h, .weight = d->wn1, .eps = 1e-5f, .out = d->a};
    CALL(tile_fused_add_rmsnorm, tile_fused_add_rmsnorm_prepare, &n1);
    /* 2. qkv = a Wqkv^T */
    tile_gemm_args g = gemm_args(dt, n, L->row, H, d->a, d->wqkv, d->qkv, dt);
    CALL(tile_gemm, tile_gemm_prepare, &g);
    /* 3. RoPE on q and k in place, k and v appended to the cache */
    tile_devptr q = d->qkv, k = q + 2 * (uint64_t)(Hq * D), v = k + 2 * (uint64_t)(Hk * D);
    tile_rope_args r = {.size = sizeof r, .dtype = dt, .tokens = n, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .q = q, .ldq = L->row,
                        .k = k, .ldk = L->row, .v = v, .ldv = L->row, .positions = d->pos, .cos_sin = d->cs, .max_position = L->max_pos,
                        .k_cache = d->kc, .v_cache = d->vc, .num_blocks = L->num_blocks, .block_size = p->block_size,
                        .slot_mapping = d->slots, .kv_dtype = p->kv_f8 ? TILE_F8E4M3 : dt, .k_scale = p->kv_f8 ? KV_SCALE : 0,
                        .v_scale = p->kv_f8 ? KV_SCALE : 0};
    CALL(tile_rope_kv_append, tile_rope_kv_append_prepare, &r);
    /* 4. attention */
    if (s->prefill) {
        tile_attention_args at = {.size = sizeof at, .dtype = dt, .batch = L->S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D,
                                  .seq_q = s->max_len, .seq_k = s->max_len, .q = q, .k = k, .v = v, .o = d->o,
                                  .q_stride = {0, L->row, D}, .k_stride = {0, L->row, D}, .v_stride = {0, L->row, D},
                                  .o_stride = {0, Hq * D, D}, .cu_seqlens_q = d->cu, .cu_seqlens_k = d->cu, .total_q = n, .total_k = n,
                                  .causal = 1, .window_left = -1, .window_right = -1}; /* -1: no window (0 would be one) */
        CALL(tile_attention_fwd, tile_attention_fwd_prepare, &at);
    } else {
        tile_paged_attention_args pa = paged_args(L, d);
        CALL(tile_attention_decode_paged, tile_attention_decode_paged_prepare, &pa);
    }
    /* 5. proj = o Wo^T */
    g = gemm_args(dt, n, H, Hq * D, d->o, d->wo, d->proj, dt);
    CALL(tile_gemm, tile_gemm_prepare, &g);
    /* 6. h = h + proj, a = RMSNorm(h) */
    tile_norm_args n2 = {.size = sizeof n2, .dtype = dt, .tokens = n, .hidden = H, .x = d->proj, .residual = d->h, .weight = d->wn2,
                         .eps = 1e-5f, .out = d->a};
    CALL(tile_fused_add_rmsnorm, tile_fused_add_rmsnorm_prepare, &n2);
    /* 7. the MLP, added to h */
    if (!p->moe) {
        g = gemm_args(dt, n, 2 * I, H, d->a, d->wgu, d->gu, dt);
        CALL(tile_gemm, tile_gemm_prepare, &g);
        tile_gated_args ga = {.size = sizeof ga, .dtype = dt, .act = TILE_GATED_SILU, .tokens = n, .d = I, .x = d->gu, .out = d->act};
        CALL(tile_gated_activation, tile_gated_activation_prepare, &ga);
        g = gemm_args(dt, n, H, I, d->act, d->wd, d->h, dt);
        g.beta = 1; /* h = down + h */
        CALL(tile_gemm, tile_gemm_prepare, &g);
    } else {
        g = gemm_args(dt, n, L->E, H, d->a, d->wr, d->logits, TILE_F32);
        CALL(tile_gemm, tile_gemm_prepare, &g);
        tile_moe_args m = moe_args(L, d, n, !s->prefill);
        CALL(tile_moe_forward, tile_moe_prepare, &m);
        if (!prepare) { /* the glue kernel was loaded with the layer */
            int32_t n32 = (int32_t)(n * H);
            tile_devptr hp = d->h, yp = d->moe_out;
            void *params[] = {&hp, &yp, &n32};
            if ((st = tile_launch(d->residual_add, (tile_dim3){(unsigned)((n * H + 1023) / 1024), 1, 1}, params, NULL)) != TILE_OK) {
                fprintf(stderr, "tile: run layer: the residual add failed: %s\n", tile_last_error(ctx));
                return st;
            }
        }
    }
    return TILE_OK;
}

/* ---- the float64 reference of one step ---- */

/* y[n][N] = rd(x[n][K] W[N][K]^T) (round: false for f32 outputs) */
static void ref_linear(tile_dtype dt, int64_t n, int64_t N, int64_t K, const double *x, const double *w, double *y, bool round) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < N; j++) {
            double v = ref_dot(K, x + i * K, 1, w + j * K, 1, NULL);
            y[i * N + j] = round ? rd(dt, v) : v;
        }
}

typedef struct KvRows {
    const Layer *L;
    int64_t seq, head;
    bool cache; /* read the cache's values (decode), else K and V as computed (prefill) */
} KvRows;

static const double *kv_row(void *user, int64_t j, int value) {
    const KvRows *u = user;
    const Layer *L = u->L;
    const double *base = u->cache ? (value ? L->vref : L->kref) : (value ? L->vx : L->kx);
    return base + ((u->seq * L->max_pos + j) * L->Hk + u->head) * L->D;
}

/* The device's routing of token t (ids[K]) against the reference's: the weights to use (renormalized
 * softmax of the reference logits over the device's experts); false when the choice differs without a near tie. */
static bool moe_weights(const Layer *L, const double *logits, const int32_t *ids, double *w) {
    ref_moe_router rr = {.experts = L->E, .topk = L->K, .scoring = TILE_MOE_SOFTMAX, .renormalize = true, .tie_eps = 1e-2};
    int32_t rid[8];
    double rw[8];
    bool near = false;
    if (!ref_moe_route(&rr, logits, rid, rw, &near)) return false;
    bool same = true;
    for (int64_t j = 0; j < L->K; j++) {
        bool found = false;
        for (int64_t i = 0; i < L->K; i++) found |= ids[j] == rid[i];
        same &= found && ids[j] >= 0 && ids[j] < L->E;
    }
    if (!same && !near) return false;
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < L->K; j++) mx = fmax(mx, logits[ids[j]]);
    for (int64_t j = 0; j < L->K; j++) sum += w[j] = exp(logits[ids[j]] - mx);
    for (int64_t j = 0; j < L->K; j++) w[j] /= sum;
    return true;
}

/* The reference's h after the step (h: the step's input, [n, H]; out [n, H]); false on a routing mismatch */
static bool layer_step_ref(Layer *L, const Step *s, const double *h, const int32_t *dev_ids, double *out) {
    const LayerCli *p = L->p;
    tile_dtype dt = p->dtype;
    int64_t n = s->n, H = L->H, Hq = L->Hq, Hk = L->Hk, D = L->D, I = L->I, G = Hq / Hk;
    double *a = malloc(sizeof(double) * (size_t)(n * H)), *qkv = malloc(sizeof(double) * (size_t)(n * L->row));
    double *o = malloc(sizeof(double) * (size_t)(n * Hq * D)), *proj = malloc(sizeof(double) * (size_t)(n * H));
    double *mid = malloc(sizeof(double) * (size_t)(n * (p->moe ? L->E : 2 * I))), *act = malloc(sizeof(double) * (size_t)(n * I));
    double *x = malloc(sizeof(double) * 3 * (size_t)D);
    bool ok = a && qkv && o && proj && mid && act && x;
    if (!ok) goto done;
    /* 1-2 */
    for (int64_t t = 0; t < n; t++) {
        ref_rmsnorm(H, h + t * H, L->wn1.d, 1e-5, a + t * H);
        for (int64_t i = 0; i < H; i++) a[t * H + i] = rd(dt, a[t * H + i]);
    }
    ref_linear(dt, n, L->row, H, a, L->wqkv.d, qkv, true);
    /* 3. rotate q and k (rounded), store k and v in the reference cache */
    for (int64_t t = 0; t < n; t++) {
        double cs[256]; /* the position's row of cos_sin, as the device reads it (f32) */
        for (int64_t i = 0; i < D; i++) cs[i] = L->cs[s->pos[t] * D + i];
        for (int64_t hh = 0; hh < Hq + Hk; hh++) {
            double *row = qkv + t * L->row + hh * D;
            ref_rope(TILE_ROPE_NEOX, D, D, row, cs, cs + D / 2, x, NULL);
            for (int64_t i = 0; i < D; i++) row[i] = rd(dt, x[i]);
        }
        for (int64_t hh = 0; hh < Hk; hh++)
            for (int64_t i = 0; i < D; i++) {
                size_t c = (size_t)(((s->seq[t] * L->max_pos + s->pos[t]) * Hk + hh) * D + i);
                L->kx[c] = qkv[t * L->row + (Hq + hh) * D + i];
                L->vx[c] = qkv[t * L->row + (Hq + Hk + hh) * D + i];
                /* an f8 cache holds f8e4m3(x / scale), read back times scale (x / scale is exact: a power of two) */
                L->kref[c] = p->kv_f8 ? ref_round_f8e4m3(L->kx[c] / KV_SCALE) * KV_SCALE : L->kx[c];
                L->vref[c] = p->kv_f8 ? ref_round_f8e4m3(L->vx[c] / KV_SCALE) * KV_SCALE : L->vx[c];
            }
    }
    /* 4. attention: token t sees its sequence's positions 0 .. pos (the step's own keys included, causal):
     * the prefill over K and V as computed, a decode step over the cache */
    for (int64_t t = 0; t < n; t++)
        for (int64_t hh = 0; hh < Hq; hh++) {
            KvRows u = {L, s->seq[t], hh / G, !s->prefill};
            ref_attention_row(D, qkv + t * L->row + hh * D, 1 / sqrt((double)D), 0, s->pos[t] + 1, kv_row, &u, o + (t * Hq + hh) * D);
            for (int64_t i = 0; i < D; i++) o[(t * Hq + hh) * D + i] = rd(dt, o[(t * Hq + hh) * D + i]);
        }
    /* 5-6 */
    ref_linear(dt, n, H, Hq * D, o, L->wo.d, proj, true);
    for (int64_t i = 0; i < n * H; i++) out[i] = rd(dt, (float)(h[i] + proj[i])); /* the fused add: round(f32(x + r)) */
    for (int64_t t = 0; t < n; t++) {
        ref_rmsnorm(H, out + t * H, L->wn2.d, 1e-5, a + t * H);
        for (int64_t i = 0; i < H; i++) a[t * H + i] = rd(dt, a[t * H + i]);
    }
    /* 7 */
    if (!p->moe) {
        ref_linear(dt, n, 2 * I, H, a, L->wgu.d, mid, true);
        for (int64_t t = 0; t < n; t++)
            for (int64_t i = 0; i < I; i++) act[t * I + i] = rd(dt, ref_gated(TILE_GATED_SILU, mid[t * 2 * I + i], mid[t * 2 * I + I + i]));
        double *down = proj; /* reused */
        ref_linear(dt, n, H, I, act, L->wd.d, down, false);
        for (int64_t i = 0; i < n * H; i++) out[i] = rd(dt, down[i] + out[i]); /* beta = 1: one rounding */
    } else {
        ref_linear(dt, n, L->E, H, a, L->wr.d, mid, false);
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)(n * L->K));
        double *w = malloc(sizeof(double) * (size_t)(n * L->K)), *y = calloc((size_t)(n * H), sizeof(double));
        ok = ids && w && y;
        for (int64_t t = 0; ok && t < n; t++) {
            memcpy(ids + t * L->K, dev_ids + t * L->K, sizeof(int32_t) * (size_t)L->K);
            ok = moe_weights(L, mid + t * L->E, ids + t * L->K, w + t * L->K);
        }
        ref_moe_args ma = {.tokens = n, .hidden = H, .inter = I, .experts = L->E, .topk = L->K, .x = a, .w1 = L->w1.d, .w2 = L->w2.d,
                           .topk_ids = ids, .topk_weights = w};
        if (ok) ok = ref_moe_forward(&ma, y, H, NULL);
        for (int64_t i = 0; ok && i < n * H; i++) out[i] = rd(dt, (float)(out[i] + (float)y[i]));
        free(ids), free(w), free(y);
    }
done:
    free(a), free(qkv), free(o), free(proj), free(mid), free(act), free(x);
    return ok;
}

/* ---- the run ---- */
typedef struct StepResult {
    const char *name;
    int64_t tokens;
    double seconds, worst;
    bool graph_safe; /* decode: the step's calls allocated, freed, synchronized and loaded nothing */
} StepResult;

/* Before the first decode step: the decode steps' workspaces, then every call of a decode step prepared
 * (compiled and loaded), as an engine does before capturing the step in a CUDA graph (docs/engine.md) */
static tile_status layer_prepare_decode(tile_context *ctx, const Layer *L, LayerDev *d, const Step *s) {
    tile_paged_attention_args pa = paged_args(L, d);
    int splits;
    tile_status st = tile_paged_attention_workspace_size(ctx, &pa, &d->pa_ws_bytes, &splits);
    if (st == TILE_OK && d->pa_ws_bytes) st = tile_malloc(ctx, d->pa_ws_bytes, &d->pa_ws);
    if (st == TILE_OK && L->p->moe) {
        tile_moe_args m = moe_args(L, d, s->n, false);
        st = tile_moe_workspace_size(&m, &d->moe_ws_bytes);
        if (st == TILE_OK) st = tile_malloc(ctx, d->moe_ws_bytes, &d->moe_ws);
    }
    if (st != TILE_OK) {
        fprintf(stderr, "tile: run layer: the decode workspaces: %s\n", tile_last_error(ctx));
        return st;
    }
    return layer_step_device(ctx, L, d, s, true);
}

/* Nothing that a CUDA graph cannot capture happened between a and b */
static bool stats_graph_safe(const tile_context_stats *a, const tile_context_stats *b) {
    return a->allocations == b->allocations && a->frees == b->frees && a->synchronizations == b->synchronizations &&
           a->compiles == b->compiles && a->disk_hits == b->disk_hits && a->memory_hits == b->memory_hits;
}

/* Prompt i's length: 7, 22, 37, 21, 36, ... */
static int64_t prompt_len(int64_t i) { return 7 + (i * 15) % 31; }

static bool layer_weights(Layer *L, CheckRng *r) {
    const LayerCli *p = L->p;
    tile_dtype dt = p->dtype;
    int64_t H = L->H, I = L->I, E = L->E;
    if (!host_alloc(&L->wn1, (size_t)H) || !host_alloc(&L->wn2, (size_t)H) || !host_alloc(&L->wqkv, (size_t)(L->row * H)) ||
        !host_alloc(&L->wo, (size_t)(H * L->Hq * L->D)))
        return false;
    host_fill(&L->wn1, dt, r, 1, 0.2), host_fill(&L->wn2, dt, r, 1, 0.2);
    host_fill(&L->wqkv, dt, r, 0, sqrt(3.0 / (double)H));
    host_fill(&L->wo, dt, r, 0, sqrt(3.0 / (double)(L->Hq * L->D)));
    if (!p->moe) {
        if (!host_alloc(&L->wgu, (size_t)(2 * I * H)) || !host_alloc(&L->wd, (size_t)(H * I))) return false;
        host_fill(&L->wgu, dt, r, 0, sqrt(3.0 / (double)H));
        host_fill(&L->wd, dt, r, 0, sqrt(3.0 / (double)I));
    } else {
        if (!host_alloc(&L->wr, (size_t)(E * H)) || !host_alloc(&L->w1, (size_t)(E * 2 * I * H)) || !host_alloc(&L->w2, (size_t)(E * H * I)))
            return false;
        host_fill(&L->wr, dt, r, 0, 2 * sqrt(3.0 / (double)H)); /* logits of spread about 2: routing is decided, rarely tied */
        host_fill(&L->w1, dt, r, 0, sqrt(3.0 / (double)H));
        host_fill(&L->w2, dt, r, 0, sqrt(3.0 / (double)I));
    }
    L->cs = malloc(sizeof(float) * (size_t)(L->max_pos * L->D));
    if (!L->cs) return false;
    for (int64_t pp = 0; pp < L->max_pos; pp++)
        for (int64_t i = 0; i < L->D / 2; i++) {
            double th = (double)pp * pow(10000.0, -2.0 * (double)i / (double)L->D);
            L->cs[pp * L->D + i] = (float)cos(th), L->cs[pp * L->D + L->D / 2 + i] = (float)sin(th);
        }
    return true;
}

static tile_status upload_new(tile_context *ctx, const void *h, size_t bytes, tile_devptr *d) {
    tile_status st = tile_malloc(ctx, bytes ? bytes : 16, d);
    if (st == TILE_OK && h && bytes) st = tile_memcpy_htod(ctx, *d, h, bytes);
    return st;
}

static tile_status layer_device_setup(tile_context *ctx, const Layer *L, int64_t max_n, LayerDev *d) {
    const LayerCli *p = L->p;
    int64_t H = L->H, I = L->I, E = L->E, K = L->K;
    size_t cache = (size_t)(L->num_blocks * p->block_size * L->Hk * L->D) * (p->kv_f8 ? 1 : 2);
    tile_status st;
    if ((st = upload_new(ctx, L->wn1.h, 2 * L->wn1.n, &d->wn1)) || (st = upload_new(ctx, L->wn2.h, 2 * L->wn2.n, &d->wn2)) ||
        (st = upload_new(ctx, L->wqkv.h, 2 * L->wqkv.n, &d->wqkv)) || (st = upload_new(ctx, L->wo.h, 2 * L->wo.n, &d->wo)) ||
        (st = upload_new(ctx, L->cs, sizeof(float) * (size_t)(L->max_pos * L->D), &d->cs)) ||
        (st = upload_new(ctx, NULL, 2 * (size_t)(max_n * H), &d->h)) || (st = upload_new(ctx, NULL, 2 * (size_t)(max_n * H), &d->a)) ||
        (st = upload_new(ctx, NULL, 2 * (size_t)(max_n * L->row), &d->qkv)) ||
        (st = upload_new(ctx, NULL, 2 * (size_t)(max_n * L->Hq * L->D), &d->o)) ||
        (st = upload_new(ctx, NULL, 2 * (size_t)(max_n * H), &d->proj)) || (st = upload_new(ctx, NULL, 8 * (size_t)max_n, &d->pos)) ||
        (st = upload_new(ctx, NULL, 8 * (size_t)max_n, &d->slots)) || (st = upload_new(ctx, NULL, 4 * (size_t)(L->S + 1), &d->cu)) ||
        (st = upload_new(ctx, L->table, 4 * (size_t)(L->S * L->sbt), &d->table)) ||
        (st = upload_new(ctx, NULL, 4 * (size_t)L->S, &d->lens)) || (st = upload_new(ctx, NULL, cache, &d->kc)) ||
        (st = upload_new(ctx, NULL, cache, &d->vc)))
        return st;
    if (!p->moe) {
        if ((st = upload_new(ctx, L->wgu.h, 2 * L->wgu.n, &d->wgu)) || (st = upload_new(ctx, L->wd.h, 2 * L->wd.n, &d->wd)) ||
            (st = upload_new(ctx, NULL, 2 * (size_t)(max_n * 2 * I), &d->gu)) || (st = upload_new(ctx, NULL, 2 * (size_t)(max_n * I), &d->act)))
            return st;
        return TILE_OK;
    }
    if ((st = upload_new(ctx, L->wr.h, 2 * L->wr.n, &d->wr)) || (st = upload_new(ctx, L->w1.h, 2 * L->w1.n, &d->w1)) ||
        (st = upload_new(ctx, L->w2.h, 2 * L->w2.n, &d->w2)) || (st = upload_new(ctx, NULL, 4 * (size_t)(max_n * E), &d->logits)) ||
        (st = upload_new(ctx, NULL, 4 * (size_t)(max_n * K), &d->ids)) || (st = upload_new(ctx, NULL, 4 * (size_t)(max_n * K), &d->topw)) ||
        (st = upload_new(ctx, NULL, 4 * (size_t)(max_n * H), &d->moe_out)))
        return st;
    /* the glue kernel: compiled from source through the caches, like any .tile file */
    if ((st = tile_module_load_source(ctx, glue_source, NULL, &d->glue))) return st;
    return tile_module_get_kernel(d->glue, p->dtype == TILE_BF16 ? "residual_add_bf16" : "residual_add_f16", &d->residual_add);
}

static void layer_device_free(tile_context *ctx, LayerDev *d) {
    tile_devptr v[] = {d->wn1, d->wn2, d->wqkv, d->wo, d->wgu, d->wd, d->wr, d->w1, d->w2, d->cs, d->h, d->a, d->qkv, d->o, d->proj,
                       d->gu, d->act, d->moe_out, d->logits, d->ids, d->topw, d->pos, d->slots, d->cu, d->table, d->lens, d->kc, d->vc,
                       d->pa_ws, d->moe_ws};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i]) tile_free(ctx, v[i]);
    if (d->glue) tile_module_unload(d->glue);
}

static void layer_free(Layer *L) {
    HostT *t[] = {&L->wn1, &L->wn2, &L->wqkv, &L->wo, &L->wgu, &L->wd, &L->wr, &L->w1, &L->w2};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) host_free(t[i]);
    free(L->cs), free(L->len), free(L->table), free(L->kref), free(L->vref), free(L->kx), free(L->vx);
}

/* Max over got [n, H] (dt) of |got - want| / (4 ulp |want| + 4 ulp max|want|) */
static double layer_compare(tile_dtype dt, int64_t n, int64_t H, const uint16_t *got, const double *want) {
    double ulp = dt == TILE_F16 ? 0x1p-10 : 0x1p-7, amax = 0, worst = 0;
    for (int64_t i = 0; i < n * H; i++) amax = fmax(amax, fabs(want[i]));
    for (int64_t i = 0; i < n * H; i++) {
        double e = fabs(check_get(dt, got, (size_t)i) - want[i]) / (4 * ulp * fabs(want[i]) + 4 * ulp * amax);
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

int cmd_run_layer(int argc, char **argv) {
    LayerCli p;
    int rc = layer_cli_parse(argc, argv, &p);
    if (rc != CLI_CONTINUE) return rc;
    tile_dtype dt = p.dtype;
    Layer L = {.p = &p, .H = p.hidden, .Hq = p.heads, .Hk = p.heads_kv, .D = p.head_dim, .I = p.inter, .E = p.experts, .K = p.topk,
               .S = p.prompts, .T = p.spec};
    L.row = (L.Hq + 2 * L.Hk) * L.D;
    LayerDev d = {0};
    tile_context *ctx = NULL;
    StepResult *res = calloc((size_t)(p.steps + 1), sizeof(StepResult));
    int64_t total = 0, max_n = L.S * L.T, max_final = 0;
    L.len = malloc(sizeof(int64_t) * (size_t)L.S);
    rc = CLI_EXIT_FAIL;
    if (!res || !L.len) goto oom;
    /* sequences: prompt lengths, final lengths, block tables over a shuffled pool of blocks */
    int64_t blocks = 0;
    for (int64_t s = 0; s < L.S; s++) {
        L.len[s] = prompt_len(s), total += L.len[s];
        int64_t fin = L.len[s] + p.steps * L.T;
        max_final = fin > max_final ? fin : max_final;
        blocks += (fin + p.block_size - 1) / p.block_size;
    }
    max_n = total > max_n ? total : max_n;
    L.sbt = (max_final + p.block_size - 1) / p.block_size, L.num_blocks = blocks + 1, L.max_pos = max_final;
    L.table = calloc((size_t)(L.S * L.sbt), sizeof(int32_t));
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)L.num_blocks);
    L.kref = calloc((size_t)(L.S * L.max_pos * L.Hk * L.D), sizeof(double));
    L.vref = calloc((size_t)(L.S * L.max_pos * L.Hk * L.D), sizeof(double));
    L.kx = calloc((size_t)(L.S * L.max_pos * L.Hk * L.D), sizeof(double));
    L.vx = calloc((size_t)(L.S * L.max_pos * L.Hk * L.D), sizeof(double));
    if (!L.table || !perm || !L.kref || !L.vref || !L.kx || !L.vx) {
        free(perm);
        goto oom;
    }
    CheckRng rng;
    check_rng_init(&rng);
    for (int64_t i = 0; i < L.num_blocks; i++) perm[i] = (int32_t)i;
    for (int64_t i = L.num_blocks - 1; i > 0; i--) {
        int64_t j = (int64_t)((check_urand(&rng) + 1) / 2 * (double)(i + 1));
        j = j > i ? i : j;
        int32_t x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int64_t s = 0, next = 0; s < L.S; s++)
        for (int64_t b = 0; b < (L.len[s] + p.steps * L.T + p.block_size - 1) / p.block_size; b++) L.table[s * L.sbt + b] = perm[next++];
    free(perm);
    if (!layer_weights(&L, &rng)) goto oom;
    if ((rc = cli_context_open("run layer", p.device, &ctx))) goto done;
    rc = CLI_EXIT_FAIL;
    if (layer_device_setup(ctx, &L, max_n, &d) != TILE_OK) {
        fprintf(stderr, "tile: run layer: %s\n", tile_last_error(ctx));
        goto done;
    }
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    bool prog = cli_progress_wanted(p.json) && props.is_emulator;
    if (!p.json) {
        printf("layer %s hidden %lld heads %lld/%lld head_dim %lld inter %lld", p.moe ? "moe" : "dense", (long long)L.H, (long long)L.Hq,
               (long long)L.Hk, (long long)L.D, (long long)L.I);
        if (p.moe) printf(" experts %lld top-%lld", (long long)L.E, (long long)L.K);
        printf(", %s%s, prompts of", tile_dtype_name(dt), p.kv_f8 ? " with an f8e4m3 KV cache" : "");
        for (int64_t s = 0; s < L.S; s++) printf(" %lld", (long long)L.len[s]);
        printf(" tokens, %lld decode steps of %lld token%s, on %s (%s)\n", (long long)p.steps, (long long)L.T, L.T > 1 ? "s" : "",
               props.name, props.arch);
        fflush(stdout);
    }

    /* every step: draw the new tokens' hidden states, upload indices, run, check */
    bool all_ok = true;
    HostT h;
    if (!host_alloc(&h, (size_t)(max_n * L.H))) goto oom;
    int64_t *seq = malloc(sizeof(int64_t) * (size_t)max_n), *pos = malloc(sizeof(int64_t) * (size_t)max_n),
            *slot = malloc(sizeof(int64_t) * (size_t)max_n);
    int32_t *cu = malloc(sizeof(int32_t) * (size_t)(L.S + 1)), *lens = malloc(sizeof(int32_t) * (size_t)L.S), *ids = NULL;
    uint16_t *got = malloc(2 * (size_t)(max_n * L.H));
    double *want = malloc(sizeof(double) * (size_t)(max_n * L.H));
    if (p.moe) ids = malloc(sizeof(int32_t) * (size_t)(max_n * L.K));
    if (!seq || !pos || !slot || !cu || !lens || !got || !want || (p.moe && !ids)) {
        free(seq), free(pos), free(slot), free(cu), free(lens), free(got), free(want), free(ids), host_free(&h);
        goto oom;
    }
    for (int64_t step = 0; step <= p.steps; step++) {
        Step s = {.prefill = step == 0, .seq = seq, .pos = pos};
        cu[0] = 0;
        for (int64_t q = 0; q < L.S; q++) {
            int64_t first = step == 0 ? 0 : L.len[q] + (step - 1) * L.T, count = step == 0 ? L.len[q] : L.T;
            for (int64_t j = 0; j < count; j++, s.n++) {
                seq[s.n] = q, pos[s.n] = first + j;
                slot[s.n] = (int64_t)L.table[q * L.sbt + pos[s.n] / p.block_size] * p.block_size + pos[s.n] % p.block_size;
            }
            cu[q + 1] = (int32_t)s.n;
            lens[q] = (int32_t)(first + count);
            s.max_len = step == 0 ? (count > s.max_len ? count : s.max_len) : (first + count > s.max_len ? first + count : s.max_len);
        }
        h.n = (size_t)(s.n * L.H);
        host_fill(&h, dt, &rng, 0, 1);
        if (tile_memcpy_htod(ctx, d.h, h.h, 2 * h.n) || tile_memcpy_htod(ctx, d.pos, pos, 8 * (size_t)s.n) ||
            tile_memcpy_htod(ctx, d.slots, slot, 8 * (size_t)s.n) || tile_memcpy_htod(ctx, d.cu, cu, 4 * (size_t)(L.S + 1)) ||
            tile_memcpy_htod(ctx, d.lens, lens, 4 * (size_t)L.S)) {
            fprintf(stderr, "tile: run layer: %s\n", tile_last_error(ctx));
            goto steps_done;
        }
        StepResult *r = &res[step];
        r->name = step == 0 ? "prefill" : "decode";
        r->tokens = s.n;
        cli_progress(prog, "%s %lld (%lld tokens) ...", r->name, (long long)step, (long long)s.n);
        if (step == 1 && layer_prepare_decode(ctx, &L, &d, &s) != TILE_OK) goto steps_done;
        tile_context_stats s0, s1;
        double t0 = timer_now();
        if (tile_context_get_stats_ex(ctx, &s0, sizeof s0) || layer_step_device(ctx, &L, &d, &s, false) ||
            tile_context_get_stats_ex(ctx, &s1, sizeof s1) || tile_synchronize(ctx)) {
            fprintf(stderr, "tile: run layer: %s\n", tile_last_error(ctx));
            goto steps_done;
        }
        r->seconds = timer_now() - t0;
        r->graph_safe = stats_graph_safe(&s0, &s1);
        if (tile_memcpy_dtoh(ctx, got, d.h, 2 * h.n) || (p.moe && tile_memcpy_dtoh(ctx, ids, d.ids, 4 * (size_t)(s.n * L.K)))) {
            fprintf(stderr, "tile: run layer: %s\n", tile_last_error(ctx));
            goto steps_done;
        }
        if (!layer_step_ref(&L, &s, h.d, ids, want)) {
            if (!p.json) printf("  %-8s %2lld  the routing differs from the reference's (not at a near tie), or out of host memory: MISMATCH\n",
                                r->name, (long long)step);
            r->worst = INFINITY;
        } else {
            r->worst = layer_compare(dt, s.n, L.H, got, want);
        }
        all_ok &= r->worst <= 1 && (step == 0 || r->graph_safe);
        if (!p.json)
            printf("  %-8s %2lld  %4lld tokens  %9.3f ms  max error %.3g of tolerance: %s%s\n", r->name, (long long)step, (long long)s.n,
                   r->seconds * 1e3, r->worst, r->worst <= 1 ? "ok" : "MISMATCH",
                   step == 0 ? "" : r->graph_safe ? "; graph-safe" : "; NOT graph-safe (allocated, freed, synchronized or loaded)");
    }
    rc = all_ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
steps_done:
    if (p.json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "command", "layer"), json_str(&j, "mlp", p.moe ? "moe" : "dense");
        json_int(&j, "hidden", L.H), json_int(&j, "heads_q", L.Hq), json_int(&j, "heads_kv", L.Hk), json_int(&j, "head_dim", L.D);
        json_int(&j, "inter", L.I);
        if (p.moe) json_int(&j, "experts", L.E), json_int(&j, "topk", L.K);
        json_str(&j, "dtype", tile_dtype_name(dt)), json_str(&j, "kv_dtype", tile_dtype_name(p.kv_f8 ? TILE_F8E4M3 : dt));
        json_int(&j, "block_size", p.block_size), json_int(&j, "spec_tokens", L.T);
        timer_json_device(&j, &props);
        json_array(&j, "steps");
        for (int64_t i = 0; i <= p.steps; i++) {
            json_object(&j, NULL);
            json_str(&j, "phase", res[i].name), json_int(&j, "tokens", res[i].tokens), json_num(&j, "seconds", res[i].seconds);
            json_num(&j, "max_error", res[i].worst);
            if (i > 0) json_bool(&j, "graph_safe", res[i].graph_safe);
            json_close(&j);
        }
        json_close(&j);
        json_bool(&j, "ok", rc == CLI_EXIT_OK);
        json_end(&j);
    } else {
        printf("  check       every step's final hidden states against a float64 reference, every decode step graph-safe: %s\n",
               rc == CLI_EXIT_OK ? "ok" : "FAILED");
    }
    free(seq), free(pos), free(slot), free(cu), free(lens), free(got), free(want), free(ids), host_free(&h);
    goto done;
oom:
    fprintf(stderr, "tile: out of host memory\n");
    rc = CLI_EXIT_FAIL;
done:
    if (ctx) layer_device_free(ctx, &d), tile_context_destroy(ctx);
    layer_free(&L);
    free(res);
    return rc;
}

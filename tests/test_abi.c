/* test_abi.c - the size field that begins every public struct a caller fills
 * (docs/runtime.md, "ABI and versions"), on the emulator.
 *
 * For each of tile_compile_options, tile_context_options, tile_gemm_args,
 * tile_attention_args, tile_paged_attention_args and tile_moe_args:
 *   1. size = sizeof works;
 *   2. size = 0 (this release's layout) works the same;
 *   3. an older, shorter size (offsetof a field, as a caller built before
 *      that field existed would pass) works and reads that field and all
 *      after it as zero: the test sets the field to a value the library
 *      would act on or refuse, and sees that it does neither;
 *   4. a newer, longer size is taken when its tail (the bytes past this
 *      release's sizeof) is all zero, and refused with a message naming the
 *      struct, both sizes and the first non-zero byte otherwise (moe_args,
 *      newer_tail: options and args structs, several entry points);
 *   5. a size smaller than the size field itself, or absurdly large, is
 *      TILE_ERROR_INVALID_VALUE with a message naming the size;
 *   6. a size that ends inside a field (a device pointer, an int64_t) is
 *      TILE_ERROR_INVALID_VALUE naming the struct, the size and the field's
 *      bytes, for every args struct (size_inside_a_field), and the layouts
 *      the library checks sizes against list every field of their structs
 *      (layouts_cover_their_structs). */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/rt.h"

static const char *KSRC = "kernel k(x: *f32) { store(x + arange(0, 32), 1.0); }\n";

static tile_context *emu(void) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK, "%s", tile_last_error(NULL));
    return ctx;
}

/* A stream handle that was live once: any call that reads it fails. */
static tile_stream dead_stream(tile_context *ctx) {
    tile_stream s;
    cr_assert_eq(tile_stream_create(ctx, &s), TILE_OK);
    cr_assert_eq(tile_stream_destroy(ctx, s), TILE_OK);
    return s;
}

/* too short, too long, not a multiple of 4 (no field ends there); and, for the structs holding host
 * pointers (context and compile options), sizes that end inside the pointer at 8 or 16 (half of it
 * was read as an address) */
static const size_t BAD_SIZES[] = {1, sizeof(size_t) - 1, (size_t)1 << 20, 9, 8 * 3 + 1};
static const size_t SPLIT_POINTER_SIZES[] = {12, 20};

/* ---- tile_compile_options: tir_only is observable (no PTX) ---- */
Test(abi, compile_options) {
    tile_compiled c;
    tile_compile_options o = {.size = sizeof o, .tir_only = 1};
    cr_assert_eq(tile_compile_source("k.tile", KSRC, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(c.tir && !c.ptx, "size = sizeof: tir_only was not read");
    tile_compiled_free(&c);
    o.size = 0;
    cr_assert_eq(tile_compile_source("k.tile", KSRC, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(c.tir && !c.ptx, "size = 0: tir_only was not read");
    tile_compiled_free(&c);
    /* a caller from before tir_only: it is zero, so the whole pipeline runs */
    o.size = offsetof(tile_compile_options, tir_only);
    cr_assert_eq(tile_compile_source("k.tile", KSRC, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(c.ptx && strstr(c.ptx, ".entry k"), "older size: tir_only past the caller's size was read");
    tile_compiled_free(&c);
    /* the fields inside the older size still count */
    tile_compile_options bad_arch = {.size = offsetof(tile_compile_options, tir_only), .arch = "sm_1"};
    cr_expect_eq(tile_compile_source("k.tile", KSRC, &bad_arch, &c), TILE_ERROR_INVALID_VALUE);
    tile_compiled_free(&c);

    tile_context *ctx = emu();
    size_t sizes[sizeof BAD_SIZES / sizeof *BAD_SIZES + sizeof SPLIT_POINTER_SIZES / sizeof *SPLIT_POINTER_SIZES], ns = 0;
    for (size_t i = 0; i < sizeof BAD_SIZES / sizeof *BAD_SIZES; i++) sizes[ns++] = BAD_SIZES[i];
    for (size_t i = 0; i < sizeof SPLIT_POINTER_SIZES / sizeof *SPLIT_POINTER_SIZES; i++) sizes[ns++] = SPLIT_POINTER_SIZES[i];
    for (size_t i = 0; i < ns; i++) {
        char want[64], diag[80];
        snprintf(want, sizeof want, "opt->size = %zu ", sizes[i]);
        snprintf(diag, sizeof diag, "error: %s", want); /* one diagnostic line, as the compiler's own */
        o.size = sizes[i];
        cr_expect_eq(tile_compile_source("k.tile", KSRC, &o, &c), TILE_ERROR_INVALID_VALUE);
        cr_expect(c.diagnostics && !strncmp(c.diagnostics, diag, strlen(diag)) && strchr(c.diagnostics, '\n') == c.diagnostics + strlen(c.diagnostics) - 1,
                  "tile_compile_source: %s", c.diagnostics);
        tile_compiled_free(&c);
        cr_expect_eq(tile_cache_compile_source(NULL, "k.tile", KSRC, &o, &c, NULL), TILE_ERROR_INVALID_VALUE);
        cr_expect(c.diagnostics && !strncmp(c.diagnostics, diag, strlen(diag)) && strchr(c.diagnostics, '\n') == c.diagnostics + strlen(c.diagnostics) - 1,
                  "tile_cache_compile_source: %s", c.diagnostics);
        tile_compiled_free(&c);
        tile_module *m;
        cr_expect_eq(tile_module_load_source_ex(ctx, "k.tile", KSRC, &o, &m), TILE_ERROR_INVALID_VALUE);
        char load_want[160];
        snprintf(load_want, sizeof load_want, "tile_module_load_source_ex: k.tile: %s", want);
        cr_expect(!strncmp(tile_last_error(ctx), load_want, strlen(load_want)), "tile_module_load_source_ex: %s", tile_last_error(ctx));
        char *msg = NULL;
        const char *kernels[] = {"k", NULL};
        cr_expect_eq(tile_aot_export("k.tile", &o, kernels, NULL, "/nonexistent/k", &msg), TILE_ERROR_INVALID_VALUE);
        char aot_want[160];
        snprintf(aot_want, sizeof aot_want, "tile_aot_export: %s", want);
        cr_expect(msg && !strncmp(msg, aot_want, strlen(aot_want)), "tile_aot_export: %s", msg ? msg : "(no message)");
        free(msg);
    }
    /* loading a module with an older size works */
    o = (tile_compile_options){.size = offsetof(tile_compile_options, tir_only), .tir_only = 1};
    tile_module *m;
    cr_expect_eq(tile_module_load_source_ex(ctx, "k.tile", KSRC, &o, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
}

/* ---- tile_context_options: a bad arch is refused when read ---- */
Test(abi, context_options) {
    tile_context *ctx;
    tile_context_options o = {.size = sizeof o, .device = "emu"};
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_context_destroy(ctx);
    o.size = 0;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_context_destroy(ctx);
    o.arch = "sm_1";
    o.size = sizeof o;
    cr_expect_eq(tile_context_create_ex(&o, &ctx), TILE_ERROR_INVALID_VALUE);
    /* a caller from before arch (and what follows it): the default arch */
    o.size = offsetof(tile_context_options, arch);
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "older size: %s", tile_last_error(NULL));
    tile_context_destroy(ctx);
    size_t sizes[sizeof BAD_SIZES / sizeof *BAD_SIZES + sizeof SPLIT_POINTER_SIZES / sizeof *SPLIT_POINTER_SIZES], ns = 0;
    for (size_t i = 0; i < sizeof BAD_SIZES / sizeof *BAD_SIZES; i++) sizes[ns++] = BAD_SIZES[i];
    for (size_t i = 0; i < sizeof SPLIT_POINTER_SIZES / sizeof *SPLIT_POINTER_SIZES; i++) sizes[ns++] = SPLIT_POINTER_SIZES[i];
    for (size_t i = 0; i < ns; i++) {
        char want[64];
        snprintf(want, sizeof want, "opt->size = %zu ", sizes[i]);
        o.size = sizes[i];
        cr_expect_eq(tile_context_create_ex(&o, &ctx), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(NULL), want), "%s", tile_last_error(NULL));
        cr_expect_eq(tile_context_create_from_native((void *)1, &o, &ctx), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(NULL), want), "%s", tile_last_error(NULL));
    }
}

/* ---- tile_gemm_args: the last field, stream, is a dead handle ---- */
static float gemm_c00(tile_context *ctx, tile_devptr dc) {
    float c[16 * 16];
    cr_assert_eq(tile_memcpy_dtoh(ctx, c, dc, sizeof c), TILE_OK);
    for (int i = 1; i < 16 * 16; i++) cr_expect_eq(c[i], c[0]);
    return c[0];
}

Test(abi, gemm_args) {
    tile_context *ctx = emu();
    float ab[16 * 16];
    for (int i = 0; i < 16 * 16; i++) ab[i] = 0.5f;
    tile_devptr da, db, dc;
    cr_assert_eq(tile_malloc(ctx, sizeof ab, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof ab, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof ab, &dc), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, da, ab, sizeof ab), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, db, ab, sizeof ab), TILE_OK);
    tile_gemm_args g = {.size = sizeof g, .m = 16, .n = 16, .k = 16, .a = da, .lda = 16, .b = db, .ldb = 16, .c = dc, .ldc = 16,
                        .in_dtype = TILE_F32, .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(tile_memset(ctx, dc, 0, sizeof ab), TILE_OK);
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(gemm_c00(ctx, dc), 4.0f);
    g.size = 0;
    g.alpha = 2;
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(gemm_c00(ctx, dc), 8.0f);
    g.stream = dead_stream(ctx);
    g.size = sizeof g;
    cr_expect_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "the dead stream was not read");
    cr_expect_eq(tile_gemm_prepare(ctx, &g), TILE_ERROR_INVALID_VALUE);
    /* a caller from before stream: the default stream */
    g.size = offsetof(tile_gemm_args, stream);
    g.alpha = 3;
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "older size: %s", tile_last_error(ctx));
    cr_expect_eq(gemm_c00(ctx, dc), 12.0f);
    cr_expect_eq(tile_gemm_prepare(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    const char *cfg[] = {NULL};
    cr_expect_eq(tile_gemm_with_config(ctx, &g, cfg), TILE_OK, "%s", tile_last_error(ctx));
    for (size_t i = 0; i < sizeof BAD_SIZES / sizeof BAD_SIZES[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "args->size = %zu ", BAD_SIZES[i]);
        g.size = BAD_SIZES[i];
        cr_expect_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
        cr_expect_eq(tile_gemm_prepare(ctx, &g), TILE_ERROR_INVALID_VALUE);
        cr_expect_eq(tile_gemm_with_config(ctx, &g, cfg), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
    }
    tile_context_destroy(ctx);
}

/* ---- tile_attention_args: causal = 7 is refused when read ---- */
Test(abi, attention_args) {
    tile_context *ctx = emu();
    tile_attention_args a = {.size = sizeof a, .dtype = TILE_F16, .batch = 1, .heads_q = 1, .heads_kv = 1, .head_dim = 16,
                             .seq_q = 16, .seq_k = 16, .window_left = -1, .window_right = -1};
    cr_assert_eq(tile_attention_fwd_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a.size = 0;
    cr_assert_eq(tile_attention_fwd_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a.size = sizeof a;
    a.causal = 7;
    cr_expect_eq(tile_attention_fwd_prepare(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "causal = 7"), "%s", tile_last_error(ctx));
    /* a caller from before causal: not causal, no window (the windows past it read as 0, a valid band) */
    a.size = offsetof(tile_attention_args, causal);
    cr_assert_eq(tile_attention_fwd_prepare(ctx, &a), TILE_OK, "older size: %s", tile_last_error(ctx));
    for (size_t i = 0; i < sizeof BAD_SIZES / sizeof BAD_SIZES[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "args->size = %zu ", BAD_SIZES[i]);
        a.size = BAD_SIZES[i];
        cr_expect_eq(tile_attention_fwd(ctx, &a), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
        cr_expect_eq(tile_attention_fwd_prepare(ctx, &a), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
    }
    tile_context_destroy(ctx);
}

/* ---- tile_paged_attention_args: check_tables = 5 is refused when read ---- */
Test(abi, paged_attention_args) {
    tile_context *ctx = emu();
    tile_paged_attention_args a = {.size = sizeof a, .dtype = TILE_F16, .num_seqs = 1, .heads_q = 1, .heads_kv = 1, .head_dim = 16,
                                   .num_tokens = 1, .block_size = 16, .num_blocks = 4, .max_context_len = 64, .num_splits = 1};
    size_t bytes;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &bytes, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a.size = 0;
    cr_assert_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a.size = sizeof a;
    a.check_tables = 5;
    cr_expect_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "check_tables = 5"), "%s", tile_last_error(ctx));
    /* a caller from before check_tables: 0, no table check */
    a.size = offsetof(tile_paged_attention_args, check_tables);
    cr_assert_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_OK, "older size: %s", tile_last_error(ctx));
    /* a caller from before num_splits: 0, the split count is chosen (and the workspace sized for it) */
    a.num_splits = 64;
    a.size = offsetof(tile_paged_attention_args, num_splits);
    int splits = -1;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &bytes, &splits), TILE_OK, "%s", tile_last_error(ctx));
    int chosen = -1;
    tile_paged_attention_args z = a;
    z.size = 0;
    z.num_splits = 0;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &z, &bytes, &chosen), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(splits, chosen);
    for (size_t i = 0; i < sizeof BAD_SIZES / sizeof BAD_SIZES[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "args->size = %zu ", BAD_SIZES[i]);
        a.size = BAD_SIZES[i];
        cr_expect_eq(tile_paged_attention_workspace_size(ctx, &a, &bytes, NULL), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
        cr_expect_eq(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
        cr_expect_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
    }
    tile_context_destroy(ctx);
}

/* ---- tile_moe_args: f8 weights without scales are refused when read ---- */
Test(abi, moe_args) {
    /* precomputed routing (prepare never reads pointers, it only sees that they are given) */
    tile_moe_args a = {.size = sizeof a, .tokens = 4, .hidden = 64, .inter = 64, .experts = 8, .topk = 2, .dtype = TILE_BF16,
                       .topk_ids = 256, .topk_weights = 512};
    size_t plain, bytes;
    cr_assert_eq(tile_moe_workspace_size(&a, &plain), TILE_OK);
    a.size = 0;
    cr_assert_eq(tile_moe_workspace_size(&a, &bytes), TILE_OK);
    cr_expect_eq(bytes, plain);
    a.weight_dtype = TILE_F8E4M3; /* with no scales: refused */
    a.size = sizeof a;
    cr_expect_eq(tile_moe_workspace_size(&a, &bytes), TILE_ERROR_INVALID_VALUE);
    /* a caller from before f8 weights: bf16 weights */
    a.size = offsetof(tile_moe_args, weight_dtype);
    cr_assert_eq(tile_moe_workspace_size(&a, &bytes), TILE_OK);
    cr_expect_eq(bytes, plain);
    /* a caller from a newer release: taken when the fields it knows and this release does not are all zero */
    struct {
        tile_moe_args a;
        unsigned char tail[64];
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.a = a;
    newer.a.weight_dtype = 0;
    newer.a.scales = 0;
    newer.a.w1_scale = newer.a.w2_scale = 0;
    newer.a.size = sizeof newer;
    cr_assert_eq(tile_moe_workspace_size(&newer.a, &bytes), TILE_OK);
    cr_expect_eq(bytes, plain);
    memset(newer.tail, 0xab, sizeof newer.tail); /* set, they would be ignored: refused (no context: tile_last_error(NULL)) */
    cr_expect_eq(tile_moe_workspace_size(&newer.a, &bytes), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "tile_moe_workspace_size: args->size = ") &&
                  strstr(tile_last_error(NULL), "a newer field this release cannot honour"), "%s", tile_last_error(NULL));
    tile_context *ctx = emu();
    cr_expect_eq(tile_moe_prepare(ctx, &a), TILE_OK, "older size: %s", tile_last_error(ctx));
    a.size = sizeof a;
    cr_expect_eq(tile_moe_prepare(ctx, &a), TILE_ERROR_INVALID_VALUE);
    for (size_t i = 0; i < sizeof BAD_SIZES / sizeof BAD_SIZES[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "args->size = %zu ", BAD_SIZES[i]);
        a.size = BAD_SIZES[i];
        cr_expect_eq(tile_moe_workspace_size(&a, &bytes), TILE_ERROR_INVALID_VALUE); /* no context: the status alone */
        cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
        cr_expect_eq(tile_moe_prepare(ctx, &a), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
    }
    tile_context_destroy(ctx);
}

/* The automatic split count fills the context's multiprocessors: cdiv(2 * SMs, num_seqs * heads_kv), at most
 * cdiv(max_context_len, 256) (it assumed 132 SMs on every device). */
Test(abi, paged_splits_follow_the_sm_count) {
    const struct {
        const char *dev;
        int want;
    } cases[] = {{"emu", 32}, {"emu:sms=8", 8}, {"emu:sm_90a:sms=2", 2}, {"emu:sms=1", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tile_context *ctx;
        cr_assert_eq(tile_context_create(cases[i].dev, &ctx), TILE_OK, "%s", tile_last_error(NULL));
        tile_paged_attention_args a = {.size = sizeof a, .dtype = TILE_F16, .num_seqs = 1, .heads_q = 2, .heads_kv = 2, .head_dim = 64,
                                       .num_tokens = 1, .block_size = 16, .num_blocks = 512, .max_context_len = 8192};
        size_t bytes;
        int splits = -1;
        cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &bytes, &splits), TILE_OK, "%s", tile_last_error(ctx));
        cr_expect_eq(splits, cases[i].want, "%s: %d splits, want %d", cases[i].dev, splits, cases[i].want);
        tile_context_destroy(ctx);
    }
}

/* A size ending in the middle of a field: half of a device pointer was read (an address the launch then
 * refused as a "null device pointer", or worse took), half of an int64_t count.  Every args struct refuses
 * it before reading anything, naming the struct, the size (as args->size) and where the field lies; the field's own end
 * (an older release's sizeof ends at one) is still taken. */
#define SPLIT(T, field, call)                                                                                             \
    do {                                                                                                                  \
        T a = {0};                                                                                                        \
        a.size = offsetof(T, field) + 4;                                                                                  \
        char want[160];                                                                                                   \
        snprintf(want, sizeof want, "args->size = %zu ends inside %s.%s (bytes %zu to %zu)", a.size, #T, #field, offsetof(T, field), \
                 offsetof(T, field) + sizeof a.field);                                                                    \
        cr_expect_eq(call, TILE_ERROR_INVALID_VALUE, "%s", #call);                                                        \
        cr_expect(strstr(tile_last_error(ctx), want), "%s: %s (want %s)", #call, tile_last_error(ctx), want);             \
    } while (0)

Test(abi, size_inside_a_field) {
    tile_context *ctx = emu();
    SPLIT(tile_gemm_args, a, tile_gemm(ctx, &a));
    SPLIT(tile_gemm_args, c, tile_gemm_prepare(ctx, &a));
    SPLIT(tile_gemm_args, m, tile_gemm(ctx, &a));
    SPLIT(tile_moe_args, x, tile_moe_forward(ctx, &a));
    SPLIT(tile_attention_args, q, tile_attention_fwd(ctx, &a));
    SPLIT(tile_paged_attention_args, q, tile_attention_decode_paged(ctx, &a));
    SPLIT(tile_norm_args, x, tile_fused_add_rmsnorm(ctx, &a));
    SPLIT(tile_gated_args, x, tile_gated_activation(ctx, &a));
    SPLIT(tile_sample_args, logits, tile_sample(ctx, &a));
    SPLIT(tile_spec_verify_args, draft_tokens, tile_spec_verify(ctx, &a));
    SPLIT(tile_rope_args, q, tile_rope_kv_append(ctx, &a));
    /* the field's end is a size: a gemm from a caller whose struct ended after a (the rest zero) is refused
     * for what it lacks, not for its size */
    tile_gemm_args g = {.size = offsetof(tile_gemm_args, lda), .m = 16, .n = 16, .k = 16};
    cr_expect_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_expect(!strstr(tile_last_error(ctx), "size ="), "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
    /* the options, which have no context to hold the message */
    tile_context_options o = {.size = offsetof(tile_context_options, emu_timeout_seconds) + 4, .device = "emu"};
    cr_expect_eq(tile_context_create_ex(&o, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "ends inside tile_context_options.emu_timeout_seconds"), "%s", tile_last_error(NULL));
    tile_compile_options co = {.size = offsetof(tile_compile_options, ptxas) + 4};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("k.tile", KSRC, &co, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(c.diagnostics && strstr(c.diagnostics, "ends inside tile_compile_options.ptxas"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* A struct T of a newer release: T, then 16 bytes this release does not know (zeroed), size covering them. */
#define NEWER(T)            \
    struct {                \
        T a;                \
        unsigned char tail[16]; \
    }
/* "size = N is past T's S bytes in this release and byte B is not 0" for tail byte b */
static const char *past_msg(char *buf, size_t n, const char *name, size_t sz, size_t b) {
    snprintf(buf, n, "size = %zu is past %s's %zu bytes in this release and byte %zu is not 0", sz + 16, name, sz, sz + b);
    return buf;
}

/* A caller built against a newer tile.h passes size = its sizeof, past this release's: taken when every byte past
 * this release's sizeof is zero (the defaults of the fields this release lacks, read as given), refused when one is
 * not (a field set that this release would silently ignore), naming the struct, both sizes and the first non-zero
 * byte: the options (no context: tile_last_error(NULL), the compiler's diagnostics) and args structs through
 * several entry points. */
Test(abi, newer_tail) {
    char want[200];
    /* tile_context_options: created with a zero tail */
    NEWER(tile_context_options) co;
    memset(&co, 0, sizeof co);
    co.a.size = sizeof co, co.a.device = "emu";
    cr_assert_eq(sizeof co, sizeof co.a + 16);
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create_ex(&co.a, &ctx), TILE_OK, "zero tail: %s", tile_last_error(NULL));
    tile_context_destroy(ctx);
    co.tail[5] = 1;
    ctx = NULL;
    cr_expect_eq(tile_context_create_ex(&co.a, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect_null(ctx);
    past_msg(want, sizeof want, "tile_context_options", sizeof co.a, 5);
    cr_expect(strstr(tile_last_error(NULL), "tile_context_create_ex: opt->") && strstr(tile_last_error(NULL), want), "%s (want %s)",
              tile_last_error(NULL), want);

    /* tile_compile_options: tir_only inside is read with a zero tail; a non-zero last byte refused */
    NEWER(tile_compile_options) o;
    memset(&o, 0, sizeof o);
    o.a.size = sizeof o, o.a.tir_only = 1;
    tile_compiled c;
    cr_assert_eq(tile_compile_source("k.tile", KSRC, &o.a, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(c.tir && !c.ptx, "zero tail: tir_only was not read");
    tile_compiled_free(&c);
    o.tail[15] = 0x80;
    cr_expect_eq(tile_compile_source("k.tile", KSRC, &o.a, &c), TILE_ERROR_INVALID_VALUE);
    past_msg(want, sizeof want, "tile_compile_options", sizeof o.a, 15);
    cr_expect(c.diagnostics && strstr(c.diagnostics, want), "%s (want %s)", c.diagnostics, want);
    tile_compiled_free(&c);

    ctx = emu();
    /* tile_paged_attention_args: the same workspace and split count as sizeof with a zero tail */
    NEWER(tile_paged_attention_args) pa;
    memset(&pa, 0, sizeof pa);
    pa.a = (tile_paged_attention_args){.size = sizeof pa.a, .dtype = TILE_F16, .num_seqs = 1, .heads_q = 1, .heads_kv = 1,
                                       .head_dim = 16, .num_tokens = 1, .block_size = 16, .num_blocks = 4, .max_context_len = 4096};
    size_t bytes, want_bytes;
    int splits, want_splits;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &pa.a, &want_bytes, &want_splits), TILE_OK, "%s", tile_last_error(ctx));
    pa.a.size = sizeof pa;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &pa.a, &bytes, &splits), TILE_OK, "zero tail: %s", tile_last_error(ctx));
    cr_expect(bytes == want_bytes && splits == want_splits && splits > 1, "%zu bytes, %d splits (want %zu, %d)", bytes, splits, want_bytes,
              want_splits);
    pa.tail[0] = 7;
    past_msg(want, sizeof want, "tile_paged_attention_args", sizeof pa.a, 0);
    cr_expect_eq(tile_paged_attention_workspace_size(ctx, &pa.a, &bytes, &splits), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "args->") && strstr(tile_last_error(ctx), want), "%s (want %s)", tile_last_error(ctx), want);
    cr_expect_eq(tile_attention_decode_paged_prepare(ctx, &pa.a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), want), "%s (want %s)", tile_last_error(ctx), want);

    /* tile_gemm_args: m = 0 runs (nothing to compute) with a zero tail; a byte set in the middle of the tail is refused */
    NEWER(tile_gemm_args) g;
    memset(&g, 0, sizeof g);
    g.a = (tile_gemm_args){.size = sizeof g, .m = 0, .n = 16, .k = 16, .lda = 16, .ldb = 16, .ldc = 16, .in_dtype = TILE_F16,
                           .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(tile_gemm(ctx, &g.a), TILE_OK, "zero tail: %s", tile_last_error(ctx));
    g.tail[8] = 0xff;
    past_msg(want, sizeof want, "tile_gemm_args", sizeof g.a, 8);
    cr_expect_eq(tile_gemm(ctx, &g.a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_gemm: args->") && strstr(tile_last_error(ctx), want), "%s (want %s)", tile_last_error(ctx),
              want);
    /* the first non-zero byte is the one named */
    g.tail[3] = 1;
    past_msg(want, sizeof want, "tile_gemm_args", sizeof g.a, 3);
    cr_expect_eq(tile_gemm_prepare(ctx, &g.a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), want), "%s (want %s)", tile_last_error(ctx), want);

    /* tile_norm_args: refused before anything else is read */
    NEWER(tile_norm_args) na;
    memset(&na, 0, sizeof na);
    na.a.size = sizeof na;
    na.tail[12] = 2;
    past_msg(want, sizeof want, "tile_norm_args", sizeof na.a, 12);
    cr_expect_eq(tile_fused_add_rmsnorm(ctx, &na.a), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "tile_fused_add_rmsnorm: args->") && strstr(tile_last_error(ctx), want), "%s (want %s)",
              tile_last_error(ctx), want);
    tile_context_destroy(ctx);
}

/* L's fields in order, each after the one before with less than the alignment between, the last within
 * sizeof with less than the alignment after it. */
static void expect_fields_cover(const RtLayout *L) {
    size_t end = 0;
    for (int i = 0; i < L->nfields; i++) {
        const RtField *f = &L->fields[i];
        cr_expect(f->offset >= end && f->offset - end < L->align, "%s.%s at %zu: the field before ends at %zu", L->name, f->name,
                  f->offset, end);
        end = f->offset + f->size;
    }
    cr_expect(end <= L->size && L->size - end < L->align, "%s: the last field ends at %zu, sizeof is %zu", L->name, end, L->size);
}

/* Each layout rt_struct_in checks sizes against lists every field of its struct, in order: the first is size,
 * each next one begins at or after the last one's end with less than the struct's alignment of padding
 * between, and the last ends within the alignment of sizeof: a field of 8 bytes or more (the ones a size can
 * end inside, sizes being multiples of 4) appended to tile.h and not to runtime/abi.c leaves a gap of at least
 * the alignment. */
Test(abi, layouts_cover_their_structs) {
    int n = 0;
    for (const RtLayout *const *l = rt_layouts; *l; l++, n++) {
        const RtLayout *L = *l;
        cr_assert(L->nfields >= 2, "%s", L->name);
        cr_expect(!strcmp(L->fields[0].name, "size") && L->fields[0].offset == 0 && L->fields[0].size == sizeof(size_t), "%s", L->name);
        expect_fields_cover(L);
    }
    cr_expect_eq(n, 12);
}

/* The structs the library fills up to a caller's size (tile_context_get_stats_ex, tile_context_get_properties_ex):
 * their lists, which refuse a size ending inside a field, cover them the same way (no size field in these). */
Test(abi, out_layouts_cover_their_structs) {
    int n = 0;
    for (const RtLayout *const *l = rt_out_layouts; *l; l++, n++) {
        const RtLayout *L = *l;
        expect_fields_cover(L);
    }
    cr_expect_eq(n, 2);
}

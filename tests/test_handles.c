/* test_handles.c - garbage, foreign, stale and wrong-kind handles given to
 * the API are errors, never reads of freed or foreign memory (runs under
 * ASan in CI, where such a read fails the test), and destroying or
 * unloading twice is harmless. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/handles.h"

static const char *src = "kernel k(x: *f32) { store(x + arange(0, 128), zeros([128], f32)); }";

static tile_context *open_emu(void) {
    tile_context_options o = {.device = "emu", .no_disk_cache = 1, .emu_host_threads = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    return ctx;
}

#define EXPECT_ERR(call, needle)                                                                              \
    do {                                                                                                      \
        tile_status st_ = (call);                                                                             \
        cr_expect_eq(st_, TILE_ERROR_INVALID_VALUE, "%s: %s", #call, tile_status_string(st_));               \
        if (needle) cr_expect(strstr(tile_last_error(ctx), needle), "%s: '%s'", #call, tile_last_error(ctx)); \
    } while (0)

Test(handles, garbage_streams_and_events) {
    tile_context *ctx = open_emu();
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 512, &x), TILE_OK);
    void *args[] = {&x};
    static char not_a_handle[256]; /* readable memory that holds no handle */
    tile_stream garbage[] = {(tile_stream)0x10, (tile_stream)0x1234, (tile_stream)not_a_handle, (tile_stream)m, (tile_stream)ctx};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        tile_stream s = garbage[i];
        EXPECT_ERR(tile_stream_synchronize(ctx, s), "not a tile_stream");
        EXPECT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, args, s), "not a tile_stream");
        EXPECT_ERR(tile_memset_async(ctx, x, 0, 4, s), "not a tile_stream");
        EXPECT_ERR(tile_stream_destroy(ctx, s), "not a tile_stream");
        tile_event e = (tile_event)garbage[i];
        EXPECT_ERR(tile_event_record(ctx, e, NULL), "not a tile_event");
        EXPECT_ERR(tile_event_synchronize(ctx, e), "not a tile_event");
        EXPECT_ERR(tile_event_destroy(ctx, e), "not a tile_event");
    }
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* An event destroyed while another thread still records and waits on it (a misuse: tile.h forbids it, but
 * an engine whose request teardown races a straggling record makes it): the calls after the destroy are
 * refused or act on a live device event; none touches freed memory (the destroy freed the device event, and
 * the record wrote into it: heap corruption, probe V).  ASan runs this too. */
typedef struct EventUser {
    tile_context *ctx;
    tile_event e;
    _Atomic int stop;
} EventUser;

static void *record_until_stopped(void *p) {
    EventUser *u = p;
    while (!atomic_load(&u->stop)) {
        tile_event_record(u->ctx, u->e, NULL);
        tile_event_synchronize(u->ctx, u->e);
    }
    return NULL;
}

Test(handles, event_destroyed_while_recorded) {
    tile_context *ctx = open_emu();
    for (int round = 0; round < 50; round++) {
        EventUser u = {.ctx = ctx};
        cr_assert_eq(tile_event_create(ctx, &u.e), TILE_OK, "%s", tile_last_error(ctx));
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, record_until_stopped, &u), 0);
        usleep(200);
        cr_assert_eq(tile_event_destroy(ctx, u.e), TILE_OK, "%s", tile_last_error(ctx));
        tile_event again; /* the destroyed handle is reused, with its device event */
        cr_assert_eq(tile_event_create(ctx, &again), TILE_OK, "%s", tile_last_error(ctx));
        usleep(200);
        atomic_store(&u.stop, 1);
        pthread_join(th, NULL);
        cr_assert_eq(tile_event_record(ctx, again, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_event_synchronize(ctx, again), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_event_destroy(ctx, again), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_event_record(ctx, again, NULL), TILE_ERROR_INVALID_VALUE);
    }
    tile_context_destroy(ctx);
}

Test(handles, wrong_kind_and_garbage_objects) {
    tile_context *ctx = open_emu();
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr x;
    /* a module, a kernel or garbage where a context belongs, and the other way round */
    cr_expect_eq(tile_malloc((tile_context *)m, 16, &x), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_malloc((tile_context *)k, 16, &x), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_malloc((tile_context *)0x1234, 16, &x), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error((tile_context *)0x1234), "not a valid tile_context");
    tile_kernel *k2;
    cr_expect_eq(tile_module_get_kernel((tile_module *)ctx, "k", &k2), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_module_get_kernel((tile_module *)k, "k", &k2), TILE_ERROR_INVALID_VALUE);
    tile_kernel_attributes at;
    cr_expect_eq(tile_kernel_get_attributes((tile_kernel *)m, &at), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_launch((tile_kernel *)ctx, (tile_dim3){1, 1, 1}, NULL, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_launch((tile_kernel *)0x40, (tile_dim3){1, 1, 1}, NULL, NULL), TILE_ERROR_INVALID_VALUE);
    tile_module_unload((tile_module *)k);   /* not a module: ignored */
    tile_module_unload((tile_module *)0x80); /* garbage: ignored */
    tile_context_destroy((tile_context *)m); /* not a context: ignored */
    /* the real ones still work */
    cr_assert_eq(tile_malloc(ctx, 512, &x), TILE_OK);
    void *args[] = {&x};
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

Test(handles, stale_after_unload_and_destroy) {
    tile_context *ctx = open_emu();
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 512, &x), TILE_OK);
    tile_stream s;
    tile_event e;
    cr_assert_eq(tile_stream_create(ctx, &s), TILE_OK);
    cr_assert_eq(tile_event_create(ctx, &e), TILE_OK);
    /* a kernel of an unloaded module; unloading twice */
    tile_module_unload(m);
    void *args[] = {&x};
    cr_expect_str_eq(tile_last_error(NULL), "", "nothing failed without a context yet");
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_ERROR_INVALID_VALUE);
    /* no live context holds these messages: tile_last_error(NULL) does */
    cr_expect(strstr(tile_last_error(NULL), "tile_launch: not a live tile_kernel (its module was unloaded"), "%s", tile_last_error(NULL));
    tile_kernel_attributes at;
    cr_expect_eq(tile_kernel_get_attributes(k, &at), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "tile_kernel_get_attributes: not a live tile_kernel"), "%s", tile_last_error(NULL));
    cr_expect_eq(tile_launch(NULL, (tile_dim3){1, 1, 1}, args, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "the tile_kernel is NULL"), "%s", tile_last_error(NULL));
    cr_expect_eq(tile_module_get_kernel(m, "k", &k), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "tile_module_get_kernel: not a live tile_module"), "%s", tile_last_error(NULL));
    tile_module_unload(m);
    /* a second module works on the same context */
    tile_module *m2;
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m2), TILE_OK, "%s", tile_last_error(ctx));
    /* everything after its context is destroyed; destroying twice */
    tile_context_destroy(ctx);
    cr_expect_eq(tile_stream_synchronize(ctx, s), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_stream_destroy(ctx, s), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_event_record(ctx, e, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_event_destroy(ctx, e), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_malloc(ctx, 16, &x), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_free(ctx, x), TILE_ERROR_INVALID_VALUE);
    cr_expect_eq(tile_synchronize(ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(ctx), "not a valid tile_context");
    cr_expect(strstr(tile_last_error(NULL), "tile_synchronize: not a live tile_context"), "%s", tile_last_error(NULL));
    tile_gemm_args g = {.size = sizeof g};
    cr_expect_eq(tile_gemm(NULL, &g), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(NULL), "tile_gemm: the tile_context is NULL");
    cr_expect_eq(tile_module_get_kernel(m2, "k", &k), TILE_ERROR_INVALID_VALUE);
    tile_module_unload(m2);
    tile_context_destroy(ctx);
    /* a stream of another, destroyed context given to a live one */
    tile_context *a = open_emu(), *b = open_emu();
    tile_stream sb;
    cr_assert_eq(tile_stream_create(b, &sb), TILE_OK);
    tile_context_destroy(b);
    tile_context *ctx2 = a;
    {
        tile_context *ctx = ctx2;
        EXPECT_ERR(tile_stream_synchronize(ctx, sb), "not a tile_stream");
    }
    tile_context_destroy(a);
}

/* tile_launch checks pointer arguments against the context's allocations (docs/runtime.md) */
Test(handles, launch_pointer_arguments) {
    tile_context *ctx = open_emu(), *other = open_emu();
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr x, y;
    cr_assert_eq(tile_malloc(ctx, 1024, &x), TILE_OK);
    cr_assert_eq(tile_malloc(other, 1024, &y), TILE_OK);
    tile_devptr p = 0x1234;
    void *args[] = {&p};
    EXPECT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), "launch of 'k': argument 1 'x' (0x1234) is a pointer into no allocation of this context");
    p = y; /* another context's memory: each emulated device hands out addresses of its own range */
    EXPECT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), "is a pointer into no allocation of this context");
    p = x + 512; /* inside an allocation: fine */
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_free(ctx, x), TILE_OK);
    p = x; /* freed */
    EXPECT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), "is a pointer into no allocation of this context");
    tile_module_unload(m);
    tile_context_destroy(other);
    tile_context_destroy(ctx);
}

/* A pointer one past the last byte of an allocation (an empty slice's data pointer at the end of a buffer, as CUDA
 * and Triton pass it) is accepted at launch; an access through it is still a run-time fault (memcheck). */
Test(handles, launch_pointer_one_past_the_end) {
    tile_context *ctx = open_emu();
    tile_module *m;
    const char *s = "kernel inc(x: *f32, n: i32) { let o = arange(0, 128); store(x + o, load(x + o, o < n, 0.0) + 1.0, o < n); }";
    cr_assert_eq(tile_module_load_source(ctx, s, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "inc", &k), TILE_OK);
    tile_devptr x; /* the context's only allocation: its end is inside nothing else */
    cr_assert_eq(tile_malloc(ctx, 1024, &x), TILE_OK);
    float h[256];
    for (int i = 0; i < 256; i++) h[i] = (float)i;
    cr_assert_eq(tile_memcpy_htod(ctx, x, h, sizeof h), TILE_OK);
    tile_devptr p = x + 1024;
    int n = 0;
    void *args[] = {&p, &n};
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    p = x + 1008, n = 4; /* the last four elements, to check the launch above left the buffer alone */
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    float out[256];
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, x, sizeof out), TILE_OK);
    for (int i = 0; i < 256; i++) cr_expect_eq(out[i], (float)i + (i >= 252), "x[%d] = %g", i, out[i]);
    p = x + 1024, n = 1; /* reading through it: memcheck */
    tile_status st = tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    cr_expect_neq(st, TILE_OK);
    cr_expect(strstr(tile_last_error(ctx), "memcheck: invalid __global__ read") != NULL, "%s", tile_last_error(ctx));
    p = x + 1040, n = 0; /* past the end by more than nothing: still refused */
    EXPECT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), "is a pointer into no allocation of this context");
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* Raw PTX (an AOT export's, this compiler's output loaded as text): a .ptr parameter declared .align 16
 * refuses a pointer that is not, as the compiled module does (it launched and faulted on a misaligned
 * vector access). */
Test(handles, raw_ptx_pointer_alignment) {
    tile_context *ctx = open_emu();
    tile_compiled c;
    tile_compile_options o = {.size = sizeof o};
    cr_assert_eq(tile_compile_source("k.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_assert(strstr(c.ptx, ".ptr .global .align 16"), "%s", c.ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, c.ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_compiled_free(&c);
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 1024, &x), TILE_OK);
    tile_devptr p = x + 4;
    void *args[] = {&p};
    EXPECT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), "argument 1 'k_param_0' (0x"); /* named as its PTX names it */
    cr_expect(strstr(tile_last_error(ctx), "is not 16-byte aligned, as its PTX parameter declares (.ptr .align 16)"), "%s",
              tile_last_error(ctx));
    p = x + 16;
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* tile_launch_ex: options sized by the caller (an older, shorter struct still works), programmatic dependent
 * launches on a stream (in order on the emulator), an explicit block, and bad options refused. */
Test(handles, launch_ex_options) {
    tile_context *ctx = open_emu();
    tile_module *m;
    const char *inc = "kernel inc(x: *f32) { let o = arange(0, 128); store(x + o, load(x + o) + 1.0); }";
    cr_assert_eq(tile_module_load_source(ctx, inc, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "inc", &k), TILE_OK);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 512, &x), TILE_OK);
    cr_assert_eq(tile_memset(ctx, x, 0, 512), TILE_OK);
    tile_stream s;
    cr_assert_eq(tile_stream_create(ctx, &s), TILE_OK);
    void *args[] = {&x};
    tile_launch_options pdl = {.size = sizeof pdl, .programmatic_dependent_launch = 1};
    for (int i = 0; i < 3; i++) cr_assert_eq(tile_launch_ex(k, (tile_dim3){1, 1, 1}, args, s, &pdl), TILE_OK, "%s", tile_last_error(ctx));
    /* a caller compiled against a struct that ended before programmatic_dependent_launch */
    tile_launch_options old = {.size = offsetof(tile_launch_options, programmatic_dependent_launch), .block = {128, 1, 1}};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){1, 1, 1}, args, s, &old), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){1, 1, 1}, args, s, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, s), TILE_OK);
    float h[128];
    cr_assert_eq(tile_memcpy_dtoh(ctx, h, x, sizeof h), TILE_OK);
    for (int i = 0; i < 128; i++) cr_assert_eq(h[i], 5.0f, "x[%d] = %g after 5 launches", i, h[i]);
    tile_launch_options bad = {.size = 0};
    EXPECT_ERR(tile_launch_ex(k, (tile_dim3){1, 1, 1}, args, s, &bad), "tile_launch_ex: launch of 'inc': opt->size = 0");
    bad = (tile_launch_options){.size = sizeof bad, .programmatic_dependent_launch = 2};
    EXPECT_ERR(tile_launch_ex(k, (tile_dim3){1, 1, 1}, args, s, &bad), "tile_launch_ex: launch of 'inc': programmatic_dependent_launch = 2: 0 or 1");
    bad = (tile_launch_options){.size = sizeof bad, .cooperative = 3};
    EXPECT_ERR(tile_launch_ex(k, (tile_dim3){1, 1, 1}, args, s, &bad), "tile_launch_ex: launch of 'inc': cooperative = 3: 0 or 1");
    bad = (tile_launch_options){.size = sizeof bad, .cluster = {3, 1, 1}};
    EXPECT_ERR(tile_launch_ex(k, (tile_dim3){4, 1, 1}, args, s, &bad), "tile_launch_ex: launch of 'inc': cluster (3,1,1): each dimension");
    bad = (tile_launch_options){.size = sizeof bad, .block = {2048, 1, 1}};
    EXPECT_ERR(tile_launch_ex(k, (tile_dim3){1, 1, 1}, args, s, &bad), "block of 2048 threads");
    tile_stream_destroy(ctx, s);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* The shipped kernels' calls look their context up first: a garbage pointer or a destroyed
 * context is INVALID_VALUE naming the call, never a read through it (they crashed: the argument
 * check's error path, or the range check, read the context). */
Test(handles, shipped_calls_check_their_context) {
    tile_context *dead = open_emu();
    tile_context_destroy(dead);
    tile_context *bad[] = {(tile_context *)0x1000, (tile_context *)0x7fff00001000ull, dead};
    tile_gemm_args g = {.size = sizeof g};
    tile_attention_args at = {.size = sizeof at};
    tile_paged_attention_args pa = {.size = sizeof pa};
    tile_moe_args mo = {.size = sizeof mo};
    tile_norm_args no = {.size = sizeof no};
    tile_gated_args ga = {.size = sizeof ga};
    tile_sample_args sa = {.size = sizeof sa};
    tile_spec_verify_args sv = {.size = sizeof sv};
    tile_rope_args ro = {.size = sizeof ro};
    tile_gemm_info gi;
    size_t bytes;
    int splits;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tile_context *c = bad[i];
        struct {
            const char *name;
            tile_status st;
        } calls[] = {
            {"tile_gemm", tile_gemm(c, &g)},
            {"tile_gemm_prepare", tile_gemm_prepare(c, &g)},
            {"tile_gemm_with_config", tile_gemm_with_config(c, &g, NULL)},
            {"tile_gemm_last_info", tile_gemm_last_info(c, &gi)},
            {"tile_attention_fwd", tile_attention_fwd(c, &at)},
            {"tile_attention_fwd", tile_attention_fwd(c, NULL)},
            {"tile_attention_fwd_prepare", tile_attention_fwd_prepare(c, &at)},
            {"tile_attention_decode_paged", tile_attention_decode_paged(c, &pa)},
            {"tile_attention_decode_paged_prepare", tile_attention_decode_paged_prepare(c, &pa)},
            {"tile_paged_attention_workspace_size", tile_paged_attention_workspace_size(c, &pa, &bytes, &splits)},
            {"tile_moe_forward", tile_moe_forward(c, &mo)},
            {"tile_moe_forward", tile_moe_forward(c, NULL)},
            {"tile_moe_prepare", tile_moe_prepare(c, &mo)},
            {"tile_fused_add_rmsnorm", tile_fused_add_rmsnorm(c, &no)},
            {"tile_fused_add_rmsnorm_prepare", tile_fused_add_rmsnorm_prepare(c, &no)},
            {"tile_fused_add_layernorm", tile_fused_add_layernorm(c, &no)},
            {"tile_fused_add_layernorm_prepare", tile_fused_add_layernorm_prepare(c, &no)},
            {"tile_gated_activation", tile_gated_activation(c, &ga)},
            {"tile_gated_activation_prepare", tile_gated_activation_prepare(c, &ga)},
            {"tile_sample", tile_sample(c, &sa)},
            {"tile_sample_prepare", tile_sample_prepare(c, &sa)},
            {"tile_spec_verify", tile_spec_verify(c, &sv)},
            {"tile_spec_verify_prepare", tile_spec_verify_prepare(c, &sv)},
            {"tile_rope_kv_append", tile_rope_kv_append(c, &ro)},
            {"tile_rope_kv_append_prepare", tile_rope_kv_append_prepare(c, &ro)},
        };
        for (size_t k = 0; k < sizeof calls / sizeof *calls; k++) {
            cr_expect_eq(calls[k].st, TILE_ERROR_INVALID_VALUE, "%s(bad[%zu]): %s", calls[k].name, i, tile_status_string(calls[k].st));
        }
        /* the last call's message names it and the handle */
        const char *e = tile_last_error(NULL);
        cr_expect(strstr(e, "tile_rope_kv_append_prepare") && strstr(e, "not a live tile_context"), "message: '%s'", e);
    }
}

/* tile_device_check: the runtime's device grammar without opening anything; NULL and "" are the
 * default, as tile_context_create takes them (TILE_DEVICE checked when set). */
Test(handles, device_check) {
    const char *good[] = {"emu", "emu:sm_90a", "emu:sm_90a:sms=132", "emu:racecheck", "emu:sms=4", "cuda", "cuda:1", NULL, ""};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        cr_expect_eq(tile_device_check(good[i]), TILE_OK, "'%s': %s", good[i] ? good[i] : "(null)", tile_last_error(NULL));
    const char *bad[] = {"emu:sm_1", "emu:sms=0", "gpu", "cuda:x", "emu:", "emu:sm_90a:sm_80"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(tile_device_check(bad[i]), TILE_ERROR_INVALID_VALUE, "'%s' accepted", bad[i]);
        cr_expect(strstr(tile_last_error(NULL), bad[i]), "the message names '%s': %s", bad[i], tile_last_error(NULL));
    }
    /* a second target is named as such, not as an unknown one ("did you mean 'sm_80'?" for sm_80) */
    cr_expect_eq(tile_device_check("emu:sm_90a:sm_80"), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "a second target 'sm_80' after 'sm_90a'") && !strstr(tile_last_error(NULL), "did you mean"),
              "%s", tile_last_error(NULL));
    /* an option given twice is refused as a second target is (the last one won silently) */
    const char *twice[] = {"emu:approx=exact:approx=bound", "emu:sms=4:sm_90a:sms=8", "emu:approx=bound:approx=bound"};
    for (size_t i = 0; i < sizeof twice / sizeof *twice; i++) {
        cr_expect_eq(tile_device_check(twice[i]), TILE_ERROR_INVALID_VALUE, "'%s' accepted", twice[i]);
        cr_expect(strstr(tile_last_error(NULL), "given twice"), "%s", tile_last_error(NULL));
    }
    cr_expect_eq(tile_device_check("emu:racecheck:sm_90a:sms=8:approx=bound:racecheck"), TILE_OK, "%s", tile_last_error(NULL));
    cr_expect_eq(tile_device_check("emu::sm_80"), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "an empty part"), "%s", tile_last_error(NULL));
    setenv("TILE_DEVICE", "emu:bogus", 1);
    cr_expect_eq(tile_device_check(NULL), TILE_ERROR_INVALID_VALUE, "TILE_DEVICE=emu:bogus accepted");
    cr_expect(strstr(tile_last_error(NULL), "TILE_DEVICE"), "%s", tile_last_error(NULL));
    unsetenv("TILE_DEVICE");
}

/* The registry is sized by the live handles: making and destroying handles for ever (a context per
 * request, an event per decode step) does not grow it.  Its rehash kept every tombstone's slot and
 * doubled the table each time, 16 bytes per handle ever made (valgrind: "still reachable" growing
 * with a loop of tile_context_create/destroy).  The registry never reads through an address, so
 * addresses inside one array stand for handles here. */
Test(handles, registry_does_not_grow_with_handles_ever_made) {
    enum { N = 200000, LIVE = 5 };
    static char fake[N];
    for (int i = 0; i < LIVE; i++) cr_assert(handle_add(&fake[i], HANDLE_EVENT));
    for (int i = LIVE; i < N; i++) { /* made and destroyed, the first LIVE kept all along */
        cr_assert(handle_add(&fake[i], HANDLE_EVENT));
        if (i + 1 < N) handle_remove(&fake[i]);
    }
    size_t slots = handle_table_slots();
    cr_expect_leq(slots, 1024, "the registry holds %zu slots after %d handles made, a few live", slots, N);
    cr_expect(handle_live(&fake[N - 1], HANDLE_EVENT));
    cr_expect(handle_live(&fake[0], HANDLE_EVENT), "a handle live from the start survives every rehash");
    cr_expect_not(handle_live(&fake[0], HANDLE_STREAM));
    for (int i = 0; i < N; i++) handle_remove(&fake[i]);
    cr_expect_not(handle_live(&fake[N - 1], HANDLE_EVENT));
}

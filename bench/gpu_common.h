/* gpu_common.h - what the GPU benchmarks of the launcher API share
 * (bench/attention_gpu.c, bench/moe_gpu.c): random data, a device fill that
 * repeats one random host chunk, a device copy kernel written in tile (the
 * project's own copy bandwidth), and the timer.
 *
 * Header-only (static inline, so a program that leaves a helper unused
 * gets no warning); each bench program is built alone, not as a library.
 *
 * Big inputs (an MoE layer's 22 GB of weights, a 4 GB KV cache) cannot be
 * drawn and uploaded element by element from the host in the seconds
 * bench/gpu/run.sh gives a step.  So a tensor is a random host chunk of
 * `chunk` elements repeated: element i holds chunk[i % chunk].  The chunk
 * length is a power of two plus 32, so no expert, head or row lines up with
 * the period and two experts (rows) never hold the same data; the float64
 * references read the same function.  On the device the chunk is uploaded
 * once and doubled with the copy kernel (log2 launches).
 *
 * Timing (bench_time): warm-up calls for warm_s (at least 3), then
 * `samples` samples, each a batch of back-to-back calls between two
 * device events on the default stream (the batch sized to last about
 * sample_s); the median sample over the batch is the time per call.  When
 * events cannot be created, the host clock around tile_synchronize instead
 * (the result says which).  A call's host cost (argument checks, the module
 * lookup) is inside the number when it exceeds the device time. */
#ifndef BENCH_GPU_COMMON_H
#define BENCH_GPU_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/tile/tile.h"
#include "support/hostfloat.h"

static inline double bench_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* xorshift64; bench_urand in [-1, 1) */
static inline uint64_t bench_next_u64(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}
static inline double bench_urand(uint64_t *s) { return (double)(bench_next_u64(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0; }

/* 16-bit value of type t (TILE_F16 or TILE_BF16) <-> double */
static inline uint16_t bench_to_16(tile_dtype t, double v) { return t == TILE_F16 ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static inline double bench_from_16(tile_dtype t, uint16_t h) { return t == TILE_F16 ? f16_to_d(h) : bf16_to_d(h); }

static inline int bench_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- the copy kernel: dst[i] = src[i], 4-byte elements, n divisible by 16 ---- */
static const char bench_copy_source[] = "@num_warps(4)\n"
                                        "kernel bench_copy(src: *i32, dst: *i32, n: i32, const BLOCK: i32 = 2048) {\n"
                                        "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                                        "    let mask = offs < n;\n"
                                        "    store(dst + offs, load(src + offs, mask, 0), mask);\n"
                                        "}\n";

typedef struct BenchCopy {
    tile_module *mod;
    tile_kernel *k;
} BenchCopy;

static inline tile_status bench_copy_load(tile_context *ctx, BenchCopy *c) {
    static const char *const spec[] = {"n=16", NULL};
    tile_compile_options o = {.kernel = "bench_copy", .specialize = spec};
    memset(c, 0, sizeof *c);
    tile_status st = tile_module_load_source_ex(ctx, "bench_copy.tile", bench_copy_source, &o, &c->mod);
    if (st == TILE_OK) st = tile_module_get_kernel(c->mod, "bench_copy", &c->k);
    return st;
}
static inline void bench_copy_unload(BenchCopy *c) {
    if (c->mod) tile_module_unload(c->mod);
    memset(c, 0, sizeof *c);
}
/* bytes: a multiple of 64; src and dst 16-byte aligned */
static inline tile_status bench_copy_launch(BenchCopy *c, tile_devptr dst, tile_devptr src, size_t bytes) {
    while (bytes) {
        size_t part = bytes > ((size_t)1 << 32) ? ((size_t)1 << 32) : bytes; /* 2^30 elements per launch */
        int32_t n = (int32_t)(part / 4);
        void *args[] = {&src, &dst, &n};
        tile_status st = tile_launch(c->k, (tile_dim3){(unsigned)((n + 2047) / 2048), 1, 1}, args, NULL);
        if (st != TILE_OK) return st;
        src += part, dst += part, bytes -= part;
    }
    return TILE_OK;
}

/* ---- periodic tensors ---- */
typedef struct BenchTensor {
    tile_devptr d;
    size_t n;          /* elements the tensor has */
    size_t alloc;      /* bytes allocated (whole chunks) */
    size_t chunk;      /* elements of the period */
    int esize;         /* bytes per element: 2 (f16/bf16), 4 (f32) */
    void *host;        /* the chunk: uint16_t[] or float[] */
} BenchTensor;

/* The chunk length for a tensor of n elements: 2^b + 32, at least 1/4 of n
 * and at most 2^24 + 32 (so the host keeps tens of MB, not GB). */
static inline size_t bench_chunk_len(size_t n) {
    size_t c = 1024;
    while (c < n / 4 && c < ((size_t)1 << 24)) c <<= 1;
    return c + 32;
}

/* A tensor of n elements of type t (TILE_F16, TILE_BF16 or TILE_F32), values
 * uniform in [-amp, amp), chunk uploaded then doubled with the copy kernel. */
static inline tile_status bench_tensor_make(tile_context *ctx, BenchCopy *cp, BenchTensor *t, tile_dtype type, size_t n, double amp,
                                            uint64_t *rng) {
    memset(t, 0, sizeof *t);
    t->n = n, t->esize = type == TILE_F32 ? 4 : 2, t->chunk = bench_chunk_len(n);
    size_t cb = t->chunk * (size_t)t->esize, nchunks = (n + t->chunk - 1) / t->chunk;
    if (nchunks < 1) nchunks = 1;
    t->alloc = nchunks * cb;
    t->host = malloc(cb);
    if (!t->host) return TILE_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < t->chunk; i++) {
        double v = bench_urand(rng) * amp;
        if (type == TILE_F32) ((float *)t->host)[i] = (float)v;
        else ((uint16_t *)t->host)[i] = bench_to_16(type, v);
    }
    tile_status st = tile_malloc(ctx, t->alloc, &t->d);
    if (st == TILE_OK) st = tile_memcpy_htod(ctx, t->d, t->host, cb);
    for (size_t filled = cb; st == TILE_OK && filled < t->alloc; filled *= 2) {
        size_t len = t->alloc - filled < filled ? t->alloc - filled : filled;
        st = bench_copy_launch(cp, t->d + filled, t->d, len);
    }
    return st;
}
static inline void bench_tensor_free(tile_context *ctx, BenchTensor *t) {
    if (t->d) tile_free(ctx, t->d);
    free(t->host);
    memset(t, 0, sizeof *t);
}
/* element i of a 16-bit tensor of type type, as a double */
static inline double bench_tensor_at(const BenchTensor *t, tile_dtype type, size_t i) {
    if (t->esize == 4) return ((const float *)t->host)[i % t->chunk];
    return bench_from_16(type, ((const uint16_t *)t->host)[i % t->chunk]);
}

/* elements [off, off + len) of a tensor into dst as doubles (the modulo once per row) */
static inline void bench_tensor_row(const BenchTensor *t, tile_dtype type, size_t off, size_t len, double *dst) {
    size_t j = off % t->chunk;
    for (size_t i = 0; i < len; i++, j = j + 1 == t->chunk ? 0 : j + 1)
        dst[i] = t->esize == 4 ? ((const float *)t->host)[j] : bench_from_16(type, ((const uint16_t *)t->host)[j]);
}

/* ---- timing ---- */
typedef tile_status (*BenchCall)(void *user);
typedef struct BenchTiming {
    double median_s, min_s, max_s; /* per call */
    int samples, batch;
    int events; /* 1: device events; 0: host clock around tile_synchronize */
} BenchTiming;

static inline tile_status bench_time(tile_context *ctx, BenchCall call, void *user, int samples, double warm_s, double sample_s,
                                     BenchTiming *out) {
    memset(out, 0, sizeof *out);
    tile_event e0 = NULL, e1 = NULL;
    out->events = tile_event_create(ctx, &e0) == TILE_OK && tile_event_create(ctx, &e1) == TILE_OK;
    tile_status st = TILE_OK;
    double t0 = bench_now_s();
    int warm = 0;
    do {
        st = call(user);
        warm++;
        if (st == TILE_OK && warm % 4 == 0) st = tile_synchronize(ctx);
    } while (st == TILE_OK && (bench_now_s() - t0 < warm_s || warm < 3));
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double one = (bench_now_s() - t0) / warm;
    int batch = (int)ceil(sample_s / (one > 1e-7 ? one : 1e-7));
    if (batch < 1) batch = 1;
    if (batch > 500) batch = 500;
    double *t = calloc((size_t)(samples > 0 ? samples : 1), sizeof(double));
    if (!t) st = TILE_ERROR_OUT_OF_MEMORY;
    for (int s = 0; s < samples && st == TILE_OK; s++) {
        double h0 = bench_now_s();
        if (out->events) st = tile_event_record(ctx, e0, NULL);
        for (int b = 0; b < batch && st == TILE_OK; b++) st = call(user);
        if (st == TILE_OK && out->events) st = tile_event_record(ctx, e1, NULL);
        float ms = 0;
        if (st == TILE_OK && out->events) st = tile_event_elapsed_ms(ctx, e0, e1, &ms);
        else if (st == TILE_OK) st = tile_synchronize(ctx);
        t[s] = (out->events ? ms * 1e-3 : bench_now_s() - h0) / batch;
    }
    if (st == TILE_OK) {
        qsort(t, (size_t)samples, sizeof(double), bench_cmp_d);
        *out = (BenchTiming){t[samples / 2], t[0], t[samples - 1], samples, batch, out->events};
    }
    free(t);
    if (e0) tile_event_destroy(ctx, e0);
    if (e1) tile_event_destroy(ctx, e1);
    return st;
}

typedef struct BenchCopyRun {
    BenchCopy *cp;
    tile_devptr dst, src;
    size_t bytes;
} BenchCopyRun;
static inline tile_status bench_copy_call(void *u) {
    BenchCopyRun *r = u;
    return bench_copy_launch(r->cp, r->dst, r->src, r->bytes);
}

/* The copy kernel's bandwidth over `bytes` (read + written counted): a
 * ceiling for memory-bound kernels written in tile.  GB/s, or -1. */
static inline double bench_copy_bandwidth(tile_context *ctx, BenchCopy *cp, size_t bytes, int samples, BenchTiming *tm) {
    tile_devptr a = 0, b = 0;
    double gbs = -1;
    bytes &= ~(size_t)63;
    if (tile_malloc(ctx, bytes, &a) == TILE_OK && tile_malloc(ctx, bytes, &b) == TILE_OK && tile_memset(ctx, a, 0x3c, bytes) == TILE_OK) {
        BenchCopyRun r = {cp, b, a, bytes};
        if (bench_time(ctx, bench_copy_call, &r, samples, 0.05, 0.005, tm) == TILE_OK) gbs = 2.0 * (double)bytes / tm->median_s * 1e-9;
    }
    if (a) tile_free(ctx, a);
    if (b) tile_free(ctx, b);
    return gbs;
}

static inline const char *bench_timing_how(const BenchTiming *t) {
    return t->events ? "device events" : "host clock around tile_synchronize (no events)";
}

#endif

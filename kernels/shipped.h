/* shipped.h - what the shipped kernel families share (internal): the
 * plumbing between an entry point's argument checks and its launches.
 *
 * A family (kernels/gemm/gemm.c, kernels/attention/attention.c,
 * kernels/moe/moe.c) checks its arguments, then for each kernel it launches:
 *   1. builds a ShippedVariant: the kernel's name, its defines and the
 *      run-time arguments to specialize, in the order the compile request
 *      takes them (a later define wins), and whether every pointer is
 *      16-byte aligned; shipped_variant_key names the variant;
 *   2. asks shipped_kernel for it: the context's table of variants (an rt
 *      attachment keyed by file and variant key) answers one it has seen
 *      without going near the compiler; a new one loads kernels/<file>
 *      through the caches (memory, disk, compiler: jit_load_file_locked),
 *      is logged under TILE_DEBUG=launch and joins the table, its module
 *      staying loaded until the context is destroyed;
 *   3. launches it with shipped_launch.
 * Nothing here is global: the table lives in the context, a variant's
 * strings in the variant (freed by shipped_variant_free). */
#ifndef TILE_KERNELS_SHIPPED_H
#define TILE_KERNELS_SHIPPED_H

#include "include/tile/tile.h"
#include "support/support.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* kernels/<file> ("gemm/gemm.tile", "moe/experts.tile") in the data folders
 * (runtime/datadir.c: TILE_DATA_DIR, then the installed copy or the source
 * tree); written to buf.  NULL when the path does not fit in n bytes. */
const char *shipped_source_path(const char *file, char *buf, size_t n);

/* ---- variants ---- */
typedef struct ShippedVariant {
    const char *kernel;       /* not copied: a literal or the caller's */
    const char **defines;     /* "NAME=VALUE", NULL-terminated (NULL: none yet) */
    const char **specialize;  /* "ARG=1" / "ARG=16", NULL-terminated (NULL: none yet) */
    bool no_align_ptrs;       /* some pointer argument is not 16-byte aligned */
    int ndefines, nspecialize, capdefines, capspecialize;
    const char *key;          /* made by shipped_variant_key */
    Arena *arena;             /* the strings and lists above; NULL until the first */
} ShippedVariant;

/* A variant of kernel with no defines or specializations. */
ShippedVariant shipped_variant(const char *kernel);
void shipped_variant_free(ShippedVariant *v);
/* "NAME=value" */
void shipped_define(ShippedVariant *v, const char *name, long long value);
/* "NAME=true" or "NAME=false" */
void shipped_flag(ShippedVariant *v, const char *name, bool on);
/* The first n bytes of text, a define as the caller wrote it ("BM=64") */
void shipped_define_text(ShippedVariant *v, const char *text, size_t n);
/* "ARG=16" when value is a non-zero multiple of 16 (zero is divisible too,
 * but a degenerate size or stride worth keeping generic); else nothing. */
void shipped_spec16(ShippedVariant *v, const char *arg, int64_t value);
/* "ARG=any": nothing assumed of ARG (a pointer that need not be 16-byte aligned). */
void shipped_spec_any(ShippedVariant *v, const char *arg);
/* "ARG=1" when value is 1, else as shipped_spec16: for strides. */
void shipped_spec_stride(ShippedVariant *v, const char *arg, int64_t value);
/* "kernel|D1 D2 |S1 S2 |no_align": the same variant gives the same string.
 * Owned by v; adding to v afterwards makes a new one. */
const char *shipped_variant_key(ShippedVariant *v);

/* ---- arguments ---- */
/* A per-tensor dequantization scale of an f8 tensor (real value = code * scale: attention's q_scale,
 * k_scale, v_scale, the KV caches' k_scale and v_scale), as vLLM and FlashInfer take it: a finite positive
 * number, or 0 for 1 (the zero-initialized default; -0 too).  NULL when value is one; else the reason,
 * naming name and the value ("k_scale = -0.5: a scale is a finite positive number (0 means 1)"), in msg. */
const char *shipped_scale_check(const char *name, float value, char *msg, size_t n);

/* ---- kernels and launches ---- */
/* The kernel of variant v of kernels/<file> on ctx (steps 2 above).
 * *source (may be NULL): 0 already loaded (the context's table or memory
 * cache), 1 the disk cache, 2 compiled.  On failure the context's message
 * starts with api ("tile_gemm: gemm_f16_f32: compiling ..."). */
tile_status shipped_kernel(tile_context *ctx, const char *api, const char *file, ShippedVariant *v, tile_kernel **kernel,
                           int *source);
/* Launch k on stream (tile_launch passes the dynamic shared memory of a
 * kernel past the target's static limit).  On failure the context's message
 * starts with api, as shipped_kernel's: "tile_fused_add_rmsnorm: launch of
 * 'norm_f16': emu: timeout ...", so a caller sees which of its calls failed; and a GPU fault that a later call
 * reports names it too (the context's launch log keeps api: runtime/launch_log.c). */
tile_status shipped_launch(tile_context *ctx, const char *api, tile_kernel *k, tile_dim3 grid, void **params, tile_stream stream);
/* A tensor argument of `api`: p holds `bytes` of esize-byte elements, so it must be aligned to them
 * and lie inside one allocation of ctx (rt_check_range); fails with "API: WHAT ..." on ctx. */
tile_status shipped_check_range(tile_context *ctx, const char *api, tile_devptr p, uint64_t esize, uint64_t bytes, const char *what);
/* An output out (ob bytes) that the kernels write while other programs still read in (ib bytes) may share no byte
 * with it: else TILE_ERROR_INVALID_VALUE naming both ranges on ctx.  A NULL in or 0 bytes is no range. */
tile_status shipped_check_apart(tile_context *ctx, const char *api, tile_devptr out, uint64_t ob, const char *oname, tile_devptr in,
                                uint64_t ib, const char *iname);

/* Do two sets of rows share a byte?  Each is `rows` rows of `width` bytes from `base`, `pitch` bytes apart
 * (a row-major matrix: width = cols * esize, pitch = ld * esize; one contiguous range: rows 1).  Exact, so
 * interleaved columns of one buffer share nothing: O(1) when the pitches are equal, else a walk over the rows
 * of one set that lie within the other's span.  An empty set (rows or width 0, base 0) shares nothing. */
bool shipped_rows_share(tile_devptr xbase, uint64_t xrows, uint64_t xwidth, uint64_t xpitch, tile_devptr ybase, uint64_t yrows,
                        uint64_t ywidth, uint64_t ypitch);

/* A tensor argument as rows (shipped_rows_share's terms, in bytes) of esize-byte elements, named for messages. */
typedef struct ShippedRows {
    const char *name;
    tile_devptr p;
    uint64_t rows, width, pitch, esize;
} ShippedRows;
/* `out`, which the kernels write while other programs still read or write `in`, may share no byte with it
 * (exactly: interleaved columns of one buffer pass), else TILE_ERROR_INVALID_VALUE naming both on ctx.  With
 * in_place, out may also be in itself, row for row: the same base, pitch and element size, each row of out
 * the start of (or all of) the row of in that the same program reads first. */
tile_status shipped_check_rows_apart(tile_context *ctx, const char *api, const ShippedRows *out, const ShippedRows *in, bool in_place);

/* ---- the arithmetic of grids and tile sizes ---- */
/* Elements a [rows, n] tensor with row stride ld spans: (rows - 1) * ld + n; UINT64_MAX where that
 * passes 64 bits (a stride of 2^62 must not wrap around to a small span and pass the size checks) */
static inline uint64_t shipped_rows_span(int64_t rows, int64_t n, int64_t ld) {
    uint64_t r;
    if (rows <= 0 || n <= 0) return 0;
    if (ld < 0 || __builtin_mul_overflow((uint64_t)(rows - 1), (uint64_t)ld, &r) || __builtin_add_overflow(r, (uint64_t)n, &r))
        return UINT64_MAX;
    return r;
}
static inline int64_t shipped_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t shipped_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t shipped_max(int64_t a, int64_t b) { return a > b ? a : b; }
/* The smallest power of two >= n (1 for n <= 1). */
static inline int64_t shipped_pow2_at_least(int64_t n) {
    int64_t p = 1;
    while (p < n) p *= 2;
    return p;
}

#endif

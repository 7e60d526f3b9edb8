/* tensor_maps.c - the tensor maps a kernel takes after its arguments (sm_90a: the compiler's tma
 * pass), made from the arguments before each launch.
 *
 * tile_kernel_info.tensor_maps says how each is made from the arguments: "base $0, esize 2,
 * swizzle 128, box [64, 128], dims [$6, ?], strides [$7]; ..." ($N: argument N; dims innermost
 * first, "?" unbounded: 2^31 - 1; strides in elements; a map that a reduction writes through names
 * its element type after esize: "esize 4, elem f32, ").  rt_tmaps_parse reads it once when the
 * kernel is made; rt_tmaps_encode evaluates the sizes and strides for a launch's arguments and
 * encodes each map on the device (cuTensorMapEncodeTiled, or the emulator's encoder): a few
 * hundred nanoseconds a map.  Each kernel keeps its last encodings with their inputs (a launch
 * loop passes the same tensors again and again: the bytes are copied then).
 * tile_tensor_map_encode's maps (a caller's own) are checked here by the driver's rules
 * (rt_tensor_map_encode), so both devices refuse the same maps with a readable message. */
#include "runtime/rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct RtTmapCache {
    pthread_mutex_t lock; /* launches of one kernel from several threads */
    uint32_t valid;       /* bit i: in[i] and out[i] are map i's last encoding */
    DevTensorMap in[RT_MAX_TMAPS];
    _Alignas(64) uint8_t out[RT_MAX_TMAPS][DEV_TENSOR_MAP_BYTES];
};

RtTmapCache *rt_tmap_cache_new(void) {
    RtTmapCache *c = calloc(1, sizeof *c);
    if (!c) out_of_memory();
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void rt_tmap_cache_free(RtTmapCache *c) {
    if (!c) return;
    pthread_mutex_destroy(&c->lock);
    free(c);
}

enum { RT_TMAP_TERMS = 4 };
typedef struct RtTerm {
    int64_t c;
    int a[2];
} RtTerm;
typedef struct RtExpr {
    int n; /* 0: unbounded */
    RtTerm t[RT_TMAP_TERMS];
} RtExpr;
struct RtTmap {
    int base, rank, esize, swizzle;
    int dtype; /* CUtensorMapDataType; -1: unsigned integers of esize bytes */
    uint32_t box[5];
    RtExpr dim[5], stride[5];
};

static bool tm_eat(const char **p, const char *w) {
    while (**p == ' ') (*p)++;
    size_t n = strlen(w);
    if (strncmp(*p, w, n)) return false;
    *p += n;
    return true;
}

static bool tm_int(const char **p, int64_t *v) {
    while (**p == ' ') (*p)++;
    char *e;
    errno = 0;
    long long x = strtoll(*p, &e, 10);
    if (e == *p || errno) return false;
    *v = x;
    *p = e;
    return true;
}

static bool tm_arg(const char **p, int nparams, int *a) {
    int64_t v;
    if (!tm_eat(p, "$") || !tm_int(p, &v) || v < 0 || v >= nparams) return false;
    *a = (int)v;
    return true;
}

static bool tm_expr(const char **p, int nparams, RtExpr *e) {
    memset(e, 0, sizeof *e);
    if (tm_eat(p, "?")) return true;
    do {
        if (e->n == RT_TMAP_TERMS) return false;
        RtTerm *t = &e->t[e->n++];
        t->c = 1;
        t->a[0] = t->a[1] = -1;
        while (**p == ' ') (*p)++;
        if (**p != '$') {
            if (!tm_int(p, &t->c)) return false;
            if (!tm_eat(p, "*")) continue;
        }
        if (!tm_arg(p, nparams, &t->a[0])) return false;
        if (tm_eat(p, "*") && !tm_arg(p, nparams, &t->a[1])) return false;
    } while (tm_eat(p, "+"));
    return true;
}

/* Parse the metadata's tensor maps; -1 when they do not parse (a damaged cache entry). */
int rt_tmaps_parse(const char *s, int nparams, RtTmap **out) {
    *out = NULL;
    if (!s || !*s) return 0;
    RtTmap *v = calloc(RT_MAX_TMAPS, sizeof *v);
    if (!v) return -1;
    int n = 0;
    const char *p = s;
    for (;;) {
        if (n == RT_MAX_TMAPS) goto bad;
        RtTmap *t = &v[n++];
        int64_t x;
        if (!tm_eat(&p, "base") || !tm_arg(&p, nparams, &t->base) || !tm_eat(&p, ",")) goto bad;
        if (!tm_eat(&p, "esize") || !tm_int(&p, &x) || (x != 1 && x != 2 && x != 4 && x != 8) || !tm_eat(&p, ",")) goto bad;
        t->esize = (int)x;
        t->dtype = -1;
        if (tm_eat(&p, "elem")) { /* a reduction's element type */
            static const struct { const char *name; int size, cu; } elems[] = {
                {"u32", 4, 2}, {"i32", 4, 3}, {"u64", 8, 4}, {"i64", 8, 5}, {"f16", 2, 6}, {"f32", 4, 7}, {"f64", 8, 8}, {"bf16", 2, 9}};
            while (*p == ' ') p++;
            for (size_t e = 0; e < sizeof elems / sizeof *elems && t->dtype < 0; e++) {
                size_t len = strlen(elems[e].name);
                if (!strncmp(p, elems[e].name, len) && (p[len] == ',' || p[len] == ' ') && elems[e].size == t->esize) {
                    t->dtype = elems[e].cu;
                    p += len;
                }
            }
            if (t->dtype < 0 || !tm_eat(&p, ",")) goto bad;
        }
        if (!tm_eat(&p, "swizzle") || !tm_int(&p, &x) || (x && x != 32 && x != 64 && x != 128) || !tm_eat(&p, ",")) goto bad;
        t->swizzle = x == 128 ? 3 : x == 64 ? 2 : x == 32 ? 1 : 0;
        if (!tm_eat(&p, "box") || !tm_eat(&p, "[")) goto bad;
        do {
            if (t->rank == 5 || !tm_int(&p, &x) || x < 1 || x > 256) goto bad;
            t->box[t->rank++] = (uint32_t)x;
        } while (tm_eat(&p, ","));
        if (!tm_eat(&p, "]") || !tm_eat(&p, ",") || !tm_eat(&p, "dims") || !tm_eat(&p, "[")) goto bad;
        for (int d = 0; d < t->rank; d++)
            if ((d && !tm_eat(&p, ",")) || !tm_expr(&p, nparams, &t->dim[d])) goto bad;
        if (!tm_eat(&p, "]") || !tm_eat(&p, ",") || !tm_eat(&p, "strides") || !tm_eat(&p, "[")) goto bad;
        for (int d = 1; d < t->rank; d++)
            if ((d > 1 && !tm_eat(&p, ",")) || !tm_expr(&p, nparams, &t->stride[d]) || !t->stride[d].n) goto bad;
        if (!tm_eat(&p, "]")) goto bad;
        if (!tm_eat(&p, ";")) break;
    }
    while (*p == ' ') p++;
    if (*p) goto bad;
    *out = v;
    return n;
bad:
    free(v);
    return -1;
}

static int64_t arg_value(const uint8_t *param_size, void **args, int a) {
    const void *p = args[a];
    switch (param_size[a]) {
    case 1: return *(const int8_t *)p;
    case 2: return *(const int16_t *)p;
    case 4: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}

static bool tm_eval(const uint8_t *param_size, void **args, const RtExpr *e, int64_t *out) {
    __int128 v = 0;
    for (int i = 0; i < e->n; i++) {
        __int128 t = e->t[i].c;
        for (int j = 0; j < 2 && e->t[i].a[j] >= 0; j++) t *= arg_value(param_size, args, e->t[i].a[j]);
        v += t;
    }
    if (v > INT64_MAX || v < INT64_MIN) return false;
    *out = (int64_t)v;
    return true;
}

tile_status rt_tmaps_encode(tile_context *ctx, TileDevice *dev, const char *kname, const char *pnames, const RtTmap *tmaps, int n,
                            const uint8_t *param_size, void **args, uint8_t (*maps)[DEV_TENSOR_MAP_BYTES], DevStatus *ds, int *which, RtTmapCache *cache) {
    *ds = DEV_OK;
    char lab[96];
    for (int i = 0; i < n; i++) {
        const RtTmap *t = &tmaps[i];
        static const unsigned dtype[9] = {0, 0, 1, 0, 2, 0, 0, 0, 4}; /* CUtensorMapDataType: UINT8, UINT16, UINT32, UINT64 */
        DevTensorMap tm = {.dtype = t->dtype >= 0 ? (unsigned)t->dtype : dtype[t->esize], .esize = (unsigned)t->esize, .rank = (unsigned)t->rank,
                           .swizzle = (unsigned)t->swizzle, .addr = *(const uint64_t *)args[t->base]};
        bool empty = false;
        for (int d = 0; d < t->rank; d++) {
            int64_t v = 0x7FFFFFFF;
            if (t->dim[d].n && !tm_eval(param_size, args, &t->dim[d], &v))
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': tensor map %d: dim %d overflows", kname, i, d);
            /* a bound of 0 or less masks every element: the kernel then moves its coordinates outside the
             * map (lower/tma.c coords_of), so nothing is read or written through it */
            empty |= v < 1;
            tm.dims[d] = (uint64_t)(v < 1 ? 1 : v > 0x7FFFFFFF ? 0x7FFFFFFF : v);
            tm.box[d] = t->box[d];
            tm.elem_strides[d] = 1;
        }
        if (empty) /* nothing goes through the map: any valid one (the arguments of an empty tensor say nothing) */
            for (int d = 0; d < t->rank; d++) {
                tm.dims[d] = 1;
                if (d) tm.strides[d - 1] = (uint64_t)16 << (d - 1);
            }
        for (int d = 1; d < t->rank && !empty; d++) {
            int64_t s = 0;
            if (!tm_eval(param_size, args, &t->stride[d], &s) || s <= 0 || s >= ((int64_t)1 << 40) / t->esize || (s * t->esize) % 16)
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "launch of '%s': the arguments give tensor map %d (the tiles of %s) a stride of %lld elements "
                               "along dim %d; the kernel reads them through tensor maps, which need positive strides of a multiple "
                               "of 16 bytes below 2^40 (compile with no_tma to read them without)",
                               kname, i, rt_arg_label(pnames, t->base, lab, sizeof lab), (long long)s, d);
            tm.strides[d - 1] = (uint64_t)(s * t->esize);
        }
        if (empty && (!tm.addr || tm.addr % 16)) tm.addr = 256; /* an empty tensor's NULL (NumPy's zero-size arrays): never read */
        if (!tm.addr)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': %s is NULL but the kernel reads or writes its tiles "
                           "through a tensor map", kname, rt_arg_label(pnames, t->base, lab, sizeof lab));
        if (tm.addr % 16)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': %s (0x%llx) is not a 16-byte aligned pointer", kname,
                           rt_arg_label(pnames, t->base, lab, sizeof lab), (unsigned long long)tm.addr);
        bool hit = false;
        if (cache && i < RT_MAX_TMAPS) {
            pthread_mutex_lock(&cache->lock);
            hit = (cache->valid >> i & 1) && !memcmp(&cache->in[i], &tm, sizeof tm);
            if (hit) memcpy(maps[i], cache->out[i], DEV_TENSOR_MAP_BYTES);
            pthread_mutex_unlock(&cache->lock);
        }
        if (hit) continue;
        *ds = dev_tensor_map_encode(dev, &tm, maps[i]);
        if (*ds != DEV_OK) {
            *which = i;
            return TILE_ERROR_LAUNCH;
        }
        if (cache && i < RT_MAX_TMAPS) {
            pthread_mutex_lock(&cache->lock);
            cache->in[i] = tm;
            memcpy(cache->out[i], maps[i], DEV_TENSOR_MAP_BYTES);
            cache->valid |= 1u << i;
            pthread_mutex_unlock(&cache->lock);
        }
    }
    return TILE_OK;
}

/* ---- tile_tensor_map_encode[_im2col]: a caller's map, checked by the driver's rules ---- */
/* CUtensorMapDataType of each tile_dtype, plus one (0: a type without a row, refused rather than read as u8's 0;
 * f8 and i8 travel as u8) */
#define CU_TYPE(code) ((code) + 1)
static const int cu_type[TILE_DTYPE_COUNT] = {
    [TILE_F32] = CU_TYPE(7), [TILE_F16] = CU_TYPE(6), [TILE_BF16] = CU_TYPE(9), [TILE_F8E4M3] = CU_TYPE(0), [TILE_F8E5M2] = CU_TYPE(0),
    [TILE_I8] = CU_TYPE(0), [TILE_I32] = CU_TYPE(3), [TILE_I16] = CU_TYPE(1), [TILE_I64] = CU_TYPE(5), [TILE_U8] = CU_TYPE(0),
    [TILE_U16] = CU_TYPE(1), [TILE_U32] = CU_TYPE(2), [TILE_U64] = CU_TYPE(4), [TILE_F64] = CU_TYPE(8)};
#undef CU_TYPE

/* The rules both encoders share (cuTensorMapEncodeTiled's and cuTensorMapEncodeIm2col's): out, dtype, rank in
 * lo..5, swizzle, the global address, dims, strides, element strides; tm filled from them.  Then the whole
 * tensor lies in memory of this context: its last element is (dims - 1) strides from the first. */
static tile_status tmap_layout(tile_context *ctx, const char *api, void *out, tile_dtype dtype, int rank, int lo, tile_devptr global,
                               const uint64_t *dims, const uint64_t *strides, const uint32_t *elem_strides, int swizzle, DevTensorMap *tm) {
    if (!out || !dims || (rank > 1 && !strides))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s is NULL", api, !out ? "out" : !dims ? "dims" : "strides");
    if ((uintptr_t)out % 64) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: out is not 64-byte aligned", api);
    if ((unsigned)dtype >= TILE_DTYPE_COUNT) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: dtype %d is no type", api, (int)dtype);
    if (!cu_type[dtype]) return rt_fail(ctx, TILE_ERROR_UNSUPPORTED, "%s: a tensor map has no %s type", api, tile_dtype_name(dtype));
    if (rank < lo || rank > 5) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: rank %d is not in %d..5", api, rank, lo);
    if (swizzle < 0 || swizzle > 3)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: swizzle %d is not TILE_SWIZZLE_NONE, _32B, _64B or _128B", api, swizzle);
    *tm = (DevTensorMap){.dtype = (unsigned)(cu_type[dtype] - 1), .esize = (unsigned)tile_dtype_size(dtype), .rank = (unsigned)rank,
                         .swizzle = (unsigned)swizzle, .addr = global};
    if (!global || global % 16) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the global address is not 16-byte aligned", api);
    for (int d = 0; d < rank; d++) {
        tm->dims[d] = dims[d];
        tm->elem_strides[d] = elem_strides ? elem_strides[d] : 1;
        if (d) tm->strides[d - 1] = strides[d - 1];
        if (!dims[d] || dims[d] > (1ull << 32))
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: dims[%d] = %llu is not in 1..2^32", api, d, (unsigned long long)dims[d]);
        if (tm->elem_strides[d] < 1 || tm->elem_strides[d] > 8)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: elem_strides[%d] = %u is not in 1..8", api, d, tm->elem_strides[d]);
        if (d && (!strides[d - 1] || strides[d - 1] % 16 || strides[d - 1] >= (1ull << 40)))
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: strides[%d] = %llu is not a positive multiple of 16 below 2^40", api, d - 1,
                           (unsigned long long)strides[d - 1]);
    }
    /* The strides need not grow with the dimension: a permuted view (a [B, S, H, D] tensor mapped as (D, S, H, B),
     * strides H*D, D, S*H*D elements, as attention kernels map Q and K) is a valid map, and the GPU's driver
     * takes it.  Overlapping boxes are the caller's to mean. */
    unsigned __int128 extent = tm->esize;
    for (int d = 0; d < rank; d++) extent += (unsigned __int128)(dims[d] - 1) * (d ? strides[d - 1] : tm->esize);
    if (extent > UINT64_MAX) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the tensor spans more than 2^64 bytes", api);
    return TILE_OK;
}

/* The inner extent (a tiled box's box[0], an im2col map's channels per pixel): a multiple of 16 bytes, within the swizzle. */
static tile_status tmap_inner(tile_context *ctx, const char *api, const char *what, uint64_t bytes, int swizzle) {
    if (bytes % 16)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s * element size = %llu bytes is not a multiple of 16", api, what,
                       (unsigned long long)bytes);
    static const unsigned span[4] = {0, 32, 64, 128};
    if (swizzle && bytes > span[swizzle])
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the inner box (%llu bytes) is wider than the %u-byte swizzle", api,
                       (unsigned long long)bytes, span[swizzle]);
    return TILE_OK;
}

static tile_status tmap_finish(tile_context *ctx, const char *api, const DevTensorMap *tm, void *out) {
    uint64_t extent = tm->esize;
    for (unsigned d = 0; d < tm->rank; d++) extent += (tm->dims[d] - 1) * (d ? tm->strides[d - 1] : tm->esize);
    char what[64];
    snprintf(what, sizeof what, "%s: global", api);
    tile_status st = rt_check_range(ctx, tm->addr, extent, what);
    if (st != TILE_OK) return st;
    return rt_device_tensor_map_encode(ctx, tm, out, api);
}

tile_status rt_tensor_map_encode(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global, const uint64_t *dims,
                                 const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides, int swizzle) {
    static const char api[] = "tile_tensor_map_encode";
    if (!box) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: box is NULL", api);
    DevTensorMap tm;
    tile_status st = tmap_layout(ctx, api, out, dtype, rank, 1, global, dims, strides, elem_strides, swizzle, &tm);
    if (st != TILE_OK) return st;
    for (int d = 0; d < rank; d++) {
        if (!box[d] || box[d] > 256) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: box[%d] = %u is not in 1..256", api, d, box[d]);
        tm.box[d] = box[d];
    }
    if ((st = tmap_inner(ctx, api, "box[0]", (uint64_t)box[0] * tm.esize, swizzle)) != TILE_OK) return st;
    return tmap_finish(ctx, api, &tm, out);
}

/* cuTensorMapEncodeIm2col's rules beyond the layout's: rank 3..5; rank - 2 corners in the range of the rank (3:
 * -32768..32767, 4: -128..127, 5: -16..15) with a bounding box of at least one pixel along each spatial
 * dimension; channels per pixel 1..256 (16-byte rows, within the swizzle); pixels per column 1..1024; NaN fill
 * for floating-point types only. */
tile_status rt_tensor_map_encode_im2col(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global, const uint64_t *dims,
                                        const uint64_t *strides, const int32_t *lower, const int32_t *upper, uint32_t channels,
                                        uint32_t pixels, const uint32_t *elem_strides, int swizzle, int nan_fill) {
    static const char api[] = "tile_tensor_map_encode_im2col";
    if (!lower || !upper) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s is NULL", api, !lower ? "lower" : "upper");
    DevTensorMap tm;
    tile_status st = tmap_layout(ctx, api, out, dtype, rank, 3, global, dims, strides, elem_strides, swizzle, &tm);
    if (st != TILE_OK) return st;
    static const int32_t lim[6] = {0, 0, 0, 32768, 128, 16};
    for (int k = 0; k < rank - 2; k++) {
        if (lower[k] < -lim[rank] || lower[k] >= lim[rank] || upper[k] < -lim[rank] || upper[k] >= lim[rank])
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s[%d] = %d is not in %d..%d (rank %d)", api,
                           lower[k] < -lim[rank] || lower[k] >= lim[rank] ? "lower" : "upper", k,
                           lower[k] < -lim[rank] || lower[k] >= lim[rank] ? lower[k] : upper[k], -lim[rank], lim[rank] - 1, rank);
        if ((int64_t)dims[k + 1] - 1 + upper[k] < lower[k])
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the bounding box along spatial dimension %d (dims[%d] = %llu) is empty: "
                           "lower[%d] = %d is past dims - 1 + upper[%d] = %lld", api, k, k + 1, (unsigned long long)dims[k + 1], k,
                           lower[k], k, (long long)dims[k + 1] - 1 + upper[k]);
        tm.lower[k] = lower[k];
        tm.upper[k] = upper[k];
    }
    if (channels < 1 || channels > 256)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: channels_per_pixel %u is not in 1..256", api, channels);
    if (pixels < 1 || pixels > 1024)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: pixels_per_column %u is not in 1..1024", api, pixels);
    if ((st = tmap_inner(ctx, api, "channels_per_pixel", (uint64_t)channels * tm.esize, swizzle)) != TILE_OK) return st;
    if (nan_fill != 0 && nan_fill != 1) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: nan_fill %d is not 0 or 1", api, nan_fill);
    if (nan_fill && dtype != TILE_F32 && dtype != TILE_F16 && dtype != TILE_BF16 && dtype != TILE_F64)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: NaN fill needs a floating-point dtype (f16, bf16, f32, f64)", api);
    tm.im2col = 1;
    tm.channels = channels;
    tm.pixels = pixels;
    tm.fill = (unsigned)nan_fill;
    return tmap_finish(ctx, api, &tm, out);
}

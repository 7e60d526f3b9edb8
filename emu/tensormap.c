/* tensormap.c - the emulator's tensor maps: the 128 bytes a kernel receives
 * (as a grid-constant `.param .align 64 .b8 tmap[128]`, or in global memory)
 * and cp.async.bulk.tensor reads (exec_async.c).  The encoding is the
 * emulator's own (the GPU's is opaque); the checks are cuTensorMapEncodeTiled's
 * for tiled maps and cuTensorMapEncodeIm2col's for im2col maps, so a map the emulator accepts is one the
 * driver accepts.
 *
 * Layout (little-endian); every field holds what tensormap.replace writes into it, so that the map a
 * kernel builds itself (Triton's device-side descriptors: 128 zero bytes in shared memory, fields
 * replaced, tensormap.cp_fenceproxy to global memory) is decoded the same way:
 *   0  u32 tag "TMAP"      4  u8 elemtype (PTX's code)   5  u8 rank - 1   6  u8 swizzle mode   7  u8 version (2)
 *   8  u64 global address  16 u64 dims[5]        56 u64 strides[4] (bytes, dimensions 1..4)
 *   88 u16 box[5]          98 u8 elem_strides[5] 103 u8 interleave layout   104 u8 fill mode   105 u8 swizzle atomicity
 *   106 u8 mode (0 tiled, 1 im2col)   107 zero
 *   im2col maps: 108 s16 lower[3]   114 s16 upper[3]   120 u16 channelsPerPixel   122 u16 pixelsPerColumn
 *   124..127 zero (tiled maps: 107..127)
 * The tag and version are written by the host encoder and by every tensormap.replace: the GPU's
 * fields of a zeroed map mean rank 1, elemtype u8, no swizzle, zero fill, as here. */
#include "emu/emu.h"

#include <string.h>

enum { TMAP_MAGIC = 0x50414D54u, TMAP_VERSION = 2 };

/* bytes per element of tensormap.replace's .elemtype codes: u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16 tf32
 * tf32.ftz (13..15, packed 4- and 6-bit types, are not supported) */
static const uint8_t elem_bytes[13] = {1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4};
static bool elem_float(unsigned code) { return code >= 6 && code <= 12; }

/* cuTensorMapEncodeIm2col's rules for what the tiled box does not have: rank 3..5, the corners' ranges (one per
 * spatial dimension, narrower as there are more), a bounding box of at least one pixel along each spatial
 * dimension, channelsPerPixel 1..256 (16-byte rows, as a tiled box's inner extent), pixelsPerColumn 1..1024. */
static bool check_im2col(const EmuTensorMap *tm, const char **why) {
    if (tm->rank < 3 || tm->rank > 5) { *why = "an im2col map's rank is not in 3..5"; return false; }
    static const int32_t lim[6] = {0, 0, 0, 32768, 128, 16};
    int32_t l = lim[tm->rank];
    for (unsigned k = 0; k + 2 < tm->rank; k++) {
        if (tm->lower[k] < -l || tm->lower[k] >= l || tm->upper[k] < -l || tm->upper[k] >= l) {
            *why = tm->rank == 3 ? "an im2col corner is not in -32768..32767 (rank 3)"
                 : tm->rank == 4 ? "an im2col corner is not in -128..127 (rank 4)" : "an im2col corner is not in -16..15 (rank 5)";
            return false;
        }
        if ((int64_t)tm->dims[k + 1] - 1 + tm->upper[k] < tm->lower[k]) {
            *why = "the im2col bounding box is empty along a spatial dimension (dims - 1 + upper < lower)";
            return false;
        }
    }
    if (tm->channels < 1 || tm->channels > 256) { *why = "channelsPerPixel is not in 1..256"; return false; }
    if (tm->pixels < 1 || tm->pixels > 1024) { *why = "pixelsPerColumn is not in 1..1024"; return false; }
    if ((uint64_t)tm->channels * tm->esize % 16) { *why = "channelsPerPixel * element size is not a multiple of 16 bytes"; return false; }
    static const unsigned span[4] = {0, 32, 64, 128};
    if (tm->swizzle && (uint64_t)tm->channels * tm->esize > span[tm->swizzle]) {
        *why = "channelsPerPixel * element size is wider than the swizzle span (32, 64 or 128 bytes)";
        return false;
    }
    return true;
}

static bool check(const EmuTensorMap *tm, const char **why) {
    if (tm->esize != 1 && tm->esize != 2 && tm->esize != 4 && tm->esize != 8) { *why = "the element size is not 1, 2, 4 or 8 bytes"; return false; }
    if (tm->rank < 1 || tm->rank > EMU_TMAP_MAX_RANK) { *why = "the rank is not in 1..5"; return false; }
    if (!tm->addr || tm->addr % 16) { *why = "the global address is not 16-byte aligned"; return false; }
    if (tm->swizzle > 3) { *why = "unknown swizzle mode"; return false; }
    if (tm->fill > 1) { *why = "unknown fill mode"; return false; }
    if (tm->fill && !elem_float(tm->elemtype)) { *why = "NaN fill needs a floating-point element type"; return false; }
    if (tm->im2col > 1) { *why = "unknown tensor-map mode"; return false; }
    for (unsigned d = 0; d < tm->rank; d++) {
        if (tm->dims[d] < 1 || tm->dims[d] > (1ull << 32)) { *why = "a dimension is not in 1..2^32"; return false; }
        if (!tm->im2col && (tm->box[d] < 1 || tm->box[d] > 256)) { *why = "a box extent is not in 1..256"; return false; }
        if (tm->elem_strides[d] < 1 || tm->elem_strides[d] > 8) { *why = "an element stride is not in 1..8"; return false; }
        if (d && (tm->strides[d - 1] % 16 || tm->strides[d - 1] >= (1ull << 40) || tm->strides[d - 1] == 0)) {
            *why = "a stride is not a positive multiple of 16 below 2^40";
            return false;
        }
    }
    if (tm->im2col) return check_im2col(tm, why);
    if ((uint64_t)tm->box[0] * tm->esize % 16) { *why = "the inner box extent is not a multiple of 16 bytes"; return false; }
    static const unsigned span[4] = {0, 32, 64, 128};
    if (tm->swizzle && (uint64_t)tm->box[0] * tm->esize > span[tm->swizzle]) {
        *why = "the inner box extent is wider than the swizzle span (32, 64 or 128 bytes)";
        return false;
    }
    return true;
}

static void put(uint8_t *p, uint64_t v, unsigned n) { for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint64_t get(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

bool emu_tensor_map_encode(const EmuTensorMap *tm, uint8_t out[EMU_TMAP_BYTES], const char **why) {
    *why = NULL;
    EmuTensorMap t = *tm;
    /* the caller's element type when it has the element size (a reduction's arithmetic needs it), else the
     * unsigned type of that size */
    if (tm->elemtype >= 13 || elem_bytes[tm->elemtype] != tm->esize)
        t.elemtype = tm->esize == 1 ? 0 : tm->esize == 2 ? 1 : tm->esize == 4 ? 2 : 4; /* u8 u16 u32 u64 */
    tm = &t;
    if (!check(tm, why)) return false;
    memset(out, 0, EMU_TMAP_BYTES);
    put(out, TMAP_MAGIC, 4);
    out[4] = (uint8_t)tm->elemtype;
    out[5] = (uint8_t)(tm->rank - 1);
    out[6] = (uint8_t)tm->swizzle;
    out[7] = TMAP_VERSION;
    put(out + 8, tm->addr, 8);
    for (unsigned d = 0; d < tm->rank; d++) {
        put(out + 16 + 8 * d, tm->dims[d], 8);
        if (d) put(out + 56 + 8 * (d - 1), tm->strides[d - 1], 8);
        put(out + 88 + 2 * d, tm->box[d], 2);
        out[98 + d] = (uint8_t)tm->elem_strides[d];
    }
    out[104] = (uint8_t)tm->fill;
    if (tm->im2col) {
        out[106] = 1;
        for (unsigned k = 0; k + 2 < tm->rank; k++) {
            put(out + 108 + 2 * k, (uint16_t)(int16_t)tm->lower[k], 2);
            put(out + 114 + 2 * k, (uint16_t)(int16_t)tm->upper[k], 2);
        }
        put(out + 120, tm->channels, 2);
        put(out + 122, tm->pixels, 2);
    }
    return true;
}

bool emu_tensor_map_decode(const uint8_t in[EMU_TMAP_BYTES], EmuTensorMap *tm, const char **why) {
    *why = NULL;
    memset(tm, 0, sizeof *tm);
    if (get(in, 4) != TMAP_MAGIC || in[7] != TMAP_VERSION) {
        *why = "no tensor map encoding (made by tile_tensor_map_encode on this device?)";
        return false;
    }
    if (in[4] >= sizeof elem_bytes) {
        *why = in[4] <= 15 ? "packed 4- and 6-bit element types are not supported by the emulator" : "unknown element type";
        return false;
    }
    if (in[103]) {
        *why = "interleaved tensor maps are not supported by the emulator";
        return false;
    }
    tm->elemtype = in[4];
    tm->esize = elem_bytes[in[4]];
    tm->rank = in[5] + 1u;
    tm->swizzle = in[6];
    tm->fill = in[104];
    tm->addr = get(in + 8, 8);
    for (unsigned d = 0; d < tm->rank && d < EMU_TMAP_MAX_RANK; d++) {
        tm->dims[d] = get(in + 16 + 8 * d, 8);
        if (d) tm->strides[d - 1] = get(in + 56 + 8 * (d - 1), 8);
        tm->box[d] = (uint32_t)get(in + 88 + 2 * d, 2);
        tm->elem_strides[d] = in[98 + d];
    }
    tm->im2col = in[106];
    if (tm->im2col == 1)
        for (unsigned k = 0; k < 3; k++) {
            tm->lower[k] = (int16_t)get(in + 108 + 2 * k, 2);
            tm->upper[k] = (int16_t)get(in + 114 + 2 * k, 2);
        }
    tm->channels = (uint32_t)get(in + 120, 2);
    tm->pixels = (uint32_t)get(in + 122, 2);
    return check(tm, why);
}

bool emu_tensor_map_replace(uint8_t map[EMU_TMAP_BYTES], unsigned mode, unsigned ord, uint64_t v, const char **why) {
    *why = NULL;
    switch (mode) {
    case EMU_MODE_TM_ADDR: put(map + 8, v, 8); break;
    case EMU_MODE_TM_RANK:
        if (v >= EMU_TMAP_MAX_RANK) { *why = "the rank's new value (the rank minus one) is not in 0..4"; return false; }
        map[5] = (uint8_t)v;
        break;
    case EMU_MODE_TM_BOX:
        if (v < 1 || v > 256) { *why = "a box extent is not in 1..256"; return false; }
        put(map + 88 + 2 * ord, v, 2);
        break;
    case EMU_MODE_TM_GDIM: put(map + 16 + 8 * ord, (uint32_t)v, 8); break;
    case EMU_MODE_TM_GSTRIDE: put(map + 56 + 8 * ord, v, 8); break;
    case EMU_MODE_TM_ESTRIDE:
        if (v < 1 || v > 8) { *why = "an element stride is not in 1..8"; return false; }
        map[98 + ord] = (uint8_t)v;
        break;
    case EMU_MODE_TM_ELEMTYPE:
        if (v > 15) { *why = "unknown element type (0..15)"; return false; }
        map[4] = (uint8_t)v;
        break;
    case EMU_MODE_TM_INTERLEAVE:
        if (v > 2) { *why = "unknown interleave layout (0..2)"; return false; }
        map[103] = (uint8_t)v;
        break;
    case EMU_MODE_TM_SWIZZLE:
        if (v > 3) { *why = "swizzle mode not supported by the emulator (0 none, 1 32B, 2 64B, 3 128B)"; return false; }
        map[6] = (uint8_t)v;
        break;
    case EMU_MODE_TM_ATOMICITY:
        if (v > 3) { *why = "unknown swizzle atomicity (0..3)"; return false; }
        map[105] = (uint8_t)v;
        break;
    case EMU_MODE_TM_FILL:
        if (v > 1) { *why = "unknown fill mode (0 zero, 1 NaN)"; return false; }
        map[104] = (uint8_t)v;
        break;
    default: *why = "unknown tensor-map field"; return false;
    }
    put(map, TMAP_MAGIC, 4);
    map[7] = TMAP_VERSION;
    return true;
}

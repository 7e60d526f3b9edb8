/* tensormap.c - the emulator's tensor maps: the 128 bytes a kernel receives
 * (as a grid-constant `.param .align 64 .b8 tmap[128]`, or in global memory)
 * and cp.async.bulk.tensor reads (exec_async.c).  The encoding is the
 * emulator's own (the GPU's is opaque); the checks are cuTensorMapEncodeTiled's
 * for tiled maps, so a map the emulator accepts is one the driver accepts.
 *
 * Layout (little-endian):
 *   0  u32 magic "TMAP"    4  u8 element bytes   5  u8 rank   6  u8 swizzle   7  u8 version (1)
 *   8  u64 global address  16 u64 dims[5]        56 u64 strides[4] (bytes, dimensions 1..4)
 *   88 u16 box[5]          98 u8 elem_strides[5] 103..127 zero */
#include "emu/emu.h"

#include <string.h>

enum { TMAP_MAGIC = 0x50414D54u, TMAP_VERSION = 1 };

static bool check(const EmuTensorMap *tm, const char **why) {
    if (tm->esize != 1 && tm->esize != 2 && tm->esize != 4 && tm->esize != 8) { *why = "the element size is not 1, 2, 4 or 8 bytes"; return false; }
    if (tm->rank < 1 || tm->rank > EMU_TMAP_MAX_RANK) { *why = "the rank is not in 1..5"; return false; }
    if (!tm->addr || tm->addr % 16) { *why = "the global address is not 16-byte aligned"; return false; }
    if (tm->swizzle > 3) { *why = "unknown swizzle mode"; return false; }
    for (unsigned d = 0; d < tm->rank; d++) {
        if (tm->dims[d] < 1 || tm->dims[d] > (1ull << 32)) { *why = "a dimension is not in 1..2^32"; return false; }
        if (tm->box[d] < 1 || tm->box[d] > 256) { *why = "a box extent is not in 1..256"; return false; }
        if (tm->elem_strides[d] < 1 || tm->elem_strides[d] > 8) { *why = "an element stride is not in 1..8"; return false; }
        if (d && (tm->strides[d - 1] % 16 || tm->strides[d - 1] >= (1ull << 40) || tm->strides[d - 1] == 0)) {
            *why = "a stride is not a positive multiple of 16 below 2^40";
            return false;
        }
    }
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
    if (!check(tm, why)) return false;
    memset(out, 0, EMU_TMAP_BYTES);
    put(out, TMAP_MAGIC, 4);
    out[4] = (uint8_t)tm->esize;
    out[5] = (uint8_t)tm->rank;
    out[6] = (uint8_t)tm->swizzle;
    out[7] = TMAP_VERSION;
    put(out + 8, tm->addr, 8);
    for (unsigned d = 0; d < tm->rank; d++) {
        put(out + 16 + 8 * d, tm->dims[d], 8);
        if (d) put(out + 56 + 8 * (d - 1), tm->strides[d - 1], 8);
        put(out + 88 + 2 * d, tm->box[d], 2);
        out[98 + d] = (uint8_t)tm->elem_strides[d];
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
    tm->esize = in[4];
    tm->rank = in[5];
    tm->swizzle = in[6];
    tm->addr = get(in + 8, 8);
    for (unsigned d = 0; d < tm->rank && d < EMU_TMAP_MAX_RANK; d++) {
        tm->dims[d] = get(in + 16 + 8 * d, 8);
        if (d) tm->strides[d - 1] = get(in + 56 + 8 * (d - 1), 8);
        tm->box[d] = (uint32_t)get(in + 88 + 2 * d, 2);
        tm->elem_strides[d] = in[98 + d];
    }
    return check(tm, why);
}

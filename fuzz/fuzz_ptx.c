/* fuzz_ptx.c - libFuzzer target for the emulator's PTX parser, through the public API.
 *
 * One emulator context is made in LLVMFuzzerInitialize; each input is PTX
 * text, loaded with tile_module_load_ptx and unloaded at once.  Unless the first
 * byte asks for launches (below), nothing runs: this exercises the lexer,
 * the decoder, module finalization (globals allocated in device memory and
 * initialised), the launcher's reading of each entry's parameters and block
 * (tile_module_get_kernel, for the entries the text names) and unloading, so memory errors, leaks and unbounded
 * allocations surface.  A rejected input must come back as a status with a
 * message, never as an internal error; a breach aborts so libFuzzer keeps it.
 *
 * A first byte 0x01 is dropped and also launches what loaded: each entry the
 * text names (the first 4), one block of its .reqntid/.maxntid or 32 threads,
 * pointer-sized parameters a zeroed 64 KiB buffer, others 37, under a 50 ms
 * time budget (an endless loop ends there), so the interpreter, memcheck and
 * the fault reports are fuzzed too.  A failed launch must have a message and
 * no internal error, and the context must run the next launch.
 *
 * A first byte 0x02 makes the rest the arguments of a tensor copy instead of
 * PTX (tensor_copy, below): tile_tensor_map_encode's arguments (dtype, rank,
 * dims, strides, box, element strides, swizzle, an offset into a 64 KiB
 * buffer), or 128 raw bytes of a map (with the emulator's tag, so the decoder
 * reads on), which one kernel of this file then uses for a rank-R
 * cp.async.bulk.tensor load or store at fuzzed coordinates, with the map as a
 * parameter or in global memory.  The encoder must refuse with a message or
 * give a map; the copy must run or fail with a message.  Flag bit 4 (0x10) makes
 * it an im2col map (tile_tensor_map_encode_im2col: fuzzed corners, channels,
 * pixels, traversal strides, NaN fill) and the copy a rank 3..5 .im2col load
 * (fuzzed 16-bit offsets) or .im2col_no_offs store through it, so the
 * traversal and the out-of-bounds fill run (a raw map with the bit is paired
 * with the im2col kernel, whatever its mode byte says). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"

static tile_context *fuzz_ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    tile_context_options co = {.size = sizeof co, .device = "emu", .no_disk_cache = 1, .emu_host_threads = 1,
                               .emu_timeout_seconds = 0.05};
    if (tile_context_create_ex(&co, &fuzz_ctx) != TILE_OK) {
        fprintf(stderr, "fuzz_ptx: cannot create the emulator context\n");
        abort();
    }
    return 0;
}

static void breach(const char *what, const char *name) {
    fprintf(stderr, "fuzz_ptx: %s of '%s': %s\n", what, name, tile_last_error(fuzz_ctx));
    abort();
}

/* One launch of k: arguments from its raw-PTX signature ("ptr, u32, f32, b8[24]"). */
static void launch_one(tile_kernel *k, const tile_kernel_attributes *at, const char *name) {
    enum { MAXP = 64, BUF = 1 << 16 };
    if (at->num_params > MAXP) return;
    unsigned char store[MAXP][64];
    void *args[MAXP];
    tile_devptr bufs[MAXP];
    int nbufs = 0;
    const char *s = at->signature ? at->signature : "";
    memset(store, 0, sizeof store);
    for (int i = 0; i < at->num_params; i++) {
        while (*s == ' ' || *s == ',') s++;
        args[i] = store[i];
        if (!strncmp(s, "ptr", 3) || !strncmp(s, "u64", 3) || !strncmp(s, "b64", 3) || !strncmp(s, "s64", 3)) {
            tile_devptr p = 0;
            if (tile_malloc(fuzz_ctx, BUF, &p) == TILE_OK) {
                tile_memset(fuzz_ctx, p, 0, BUF);
                bufs[nbufs++] = p;
            }
            memcpy(store[i], &p, 8);
        } else if (strncmp(s, "b8[", 3)) {
            store[i][0] = 37;
        }
        while (*s && *s != ',') s++;
    }
    tile_launch_options lo = {.size = sizeof lo}; /* block zero: the kernel's .reqntid/.maxntid */
    if (!at->block_threads) lo.block = (tile_dim3){32, 1, 1};
    tile_status st = tile_launch_ex(k, (tile_dim3){1, 1, 1}, at->num_params ? args : NULL, NULL, &lo);
    if (st == TILE_ERROR_INTERNAL || (st != TILE_OK && !*tile_last_error(fuzz_ctx))) breach("launch", name);
    if (st != TILE_OK && (strstr(tile_last_error(fuzz_ctx), "internal error") || strstr(tile_last_error(fuzz_ctx), "unreachable")))
        breach("launch", name);
    for (int i = 0; i < nbufs; i++) tile_free(fuzz_ctx, bufs[i]);
}

/* ---- 0x02: tensor maps ---- */
typedef struct Bytes {
    const uint8_t *p;
    size_t n;
} Bytes;
static uint64_t take(Bytes *b, unsigned k) { /* k little-endian bytes, zeros past the end */
    uint64_t v = 0;
    for (unsigned i = 0; i < k; i++, b->n ? (b->p++, b->n--) : 0) v |= (uint64_t)(b->n ? *b->p : 0) << (8 * i);
    return v;
}

static tile_module *tma_mod[2][2][6]; /* [im2col][store][rank] */

/* A kernel that moves one box between tmap (or the map at gmap when not 0) and shared memory at coordinates
 * c0..c4 (store: from shared memory, zeros), the load completing on an mbarrier expecting txbytes; im2col: the
 * .im2col load with offsets o0..o2 (rank 3..5) or the .im2col_no_offs store. */
static tile_kernel *tma_kernel(int rank, int store, int im2col) {
    if (!tma_mod[im2col][store][rank]) {
        static const char *const co[6] = {"", "{%r1}", "{%r1, %r2}", "{%r1, %r2, %r3}", "{%r1, %r2, %r3, %r4}", "{%r1, %r2, %r3, %r4, %r5}"};
        static const char *const of[6] = {"", "", "", ", {%rs1}", ", {%rs1, %rs2}", ", {%rs1, %rs2, %rs3}"};
        char ptx[4096];
        int n = snprintf(ptx, sizeof ptx,
                         ".version 8.4\n.target sm_90a\n.address_size 64\n"
                         ".visible .entry t(.param .align 64 .b8 tmap[128], .param .u32 c0, .param .u32 c1, .param .u32 c2, "
                         ".param .u32 c3, .param .u32 c4, .param .u32 txbytes, .param .u64 gmap, .param .u16 o0, .param .u16 o1, "
                         ".param .u16 o2)\n.reqntid 32\n{\n"
                         "  .reg .pred %%p<4>;\n  .reg .b16 %%rs<4>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<8>;\n"
                         "  ld.param.u16 %%rs1, [o0];\n  ld.param.u16 %%rs2, [o1];\n  ld.param.u16 %%rs3, [o2];\n"
                         "  .shared .align 1024 .b8 smem[16384];\n  .shared .align 8 .b64 bar;\n"
                         "  mov.u32 %%r0, %%tid.x;\n  ld.param.u32 %%r1, [c0];\n  ld.param.u32 %%r2, [c1];\n"
                         "  ld.param.u32 %%r3, [c2];\n  ld.param.u32 %%r4, [c3];\n  ld.param.u32 %%r5, [c4];\n"
                         "  ld.param.u32 %%r12, [txbytes];\n  mov.u32 %%r10, smem;\n  mov.u32 %%r11, bar;\n"
                         "  mov.u64 %%rd1, tmap;\n  ld.param.u64 %%rd6, [gmap];\n  setp.ne.u64 %%p3, %%rd6, 0;\n"
                         "  @%%p3 mov.u64 %%rd1, %%rd6;\n  setp.ne.u32 %%p0, %%r0, 0;\n");
        if (!store)
            n += snprintf(ptx + n, sizeof ptx - (size_t)n,
                          "  @%%p0 bra $S;\n  mbarrier.init.shared::cta.b64 [%%r11], 1;\n  fence.mbarrier_init.release.cluster;\n$S:\n"
                          "  bar.sync 0;\n  @%%p0 bra $W;\n  mbarrier.arrive.expect_tx.shared::cta.b64 %%rd2, [%%r11], %%r12;\n"
                          "  cp.async.bulk.tensor.%dd.shared::cluster.global.%s.mbarrier::complete_tx::bytes [%%r10], [%%rd1, %s], [%%r11]%s;\n"
                          "$W:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p1, [%%r11], 0;\n  @!%%p1 bra $W;\n  ret;\n}\n",
                          rank, im2col ? "im2col" : "tile", co[rank], im2col ? of[rank] : "");
        else
            n += snprintf(ptx + n, sizeof ptx - (size_t)n,
                          "  fence.proxy.async.shared::cta;\n  @%%p0 bra $E;\n"
                          "  cp.async.bulk.tensor.%dd.global.shared::cta.%s.bulk_group [%%rd1, %s], [%%r10];\n"
                          "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\n$E:\n  ret;\n}\n",
                          rank, im2col ? "im2col_no_offs" : "tile", co[rank]);
        if (tile_module_load_ptx(fuzz_ctx, ptx, &tma_mod[im2col][store][rank]) != TILE_OK) breach("load of the tensor copy kernel", "t");
    }
    tile_kernel *k = NULL;
    if (tile_module_get_kernel(tma_mod[im2col][store][rank], "t", &k) != TILE_OK) breach("the tensor copy kernel", "t");
    return k;
}

static void tensor_copy(const uint8_t *data, size_t size) {
    static int verbose = -1; /* FUZZ_VERBOSE=1: what each copy did, to check the seeds */
    if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL;
    Bytes in = {data, size};
    unsigned flags = (unsigned)take(&in, 1); /* bit 0 store, bit 1 raw map, bit 2 map in global memory, 3 fuzzed bytes, 4 im2col */
    int im2col = (flags & 16) != 0;
    uint64_t im2col_bytes = 0; /* an encoded im2col map's tile: channels * pixels * the element's size */
    tile_devptr buf = 0, gmap = 0;
    if (tile_malloc(fuzz_ctx, 1 << 16, &buf) != TILE_OK) breach("tile_malloc", "buf");
    tile_memset(fuzz_ctx, buf, 0, 1 << 16);
    _Alignas(64) uint8_t map[128];
    int rank;
    if (flags & 2) {
        for (int i = 0; i < 128; i++) map[i] = (uint8_t)take(&in, 1);
        memcpy(map, "TMAP", 4); /* the emulator's tag and version: the decoder reads the fields */
        map[7] = 2;
        if (map[8] & 1) { /* an address in the buffer */
            uint64_t a = buf + (take(&in, 2) & 0xfff0);
            memcpy(map + 8, &a, 8);
        }
        rank = im2col ? map[5] % 3 + 3 : map[5] % 5 + 1;
    } else {
        tile_dtype dt = (tile_dtype)(take(&in, 1) % (TILE_DTYPE_COUNT + 1));
        rank = (int)take(&in, 1) % 7;
        uint64_t dims[5], strides[5];
        uint32_t box[5], es[5];
        for (int d = 0; d < 5; d++) {
            dims[d] = take(&in, 1) & 0x80 ? take(&in, 8) : take(&in, 1);
            strides[d] = take(&in, 1) & 0x80 ? take(&in, 8) : 16 * take(&in, 1);
            box[d] = (uint32_t)take(&in, 2) % 300;
            es[d] = (uint32_t)take(&in, 1) % 10;
        }
        tile_tensor_swizzle sw = (tile_tensor_swizzle)(take(&in, 1) % 5);
        tile_devptr g = buf + take(&in, 2);
        tile_status st;
        if (im2col) { /* corners mostly near the valid range (rank 3: 16 bits, 4: 8, 5: 5), sometimes anything */
            int32_t lower[3], upper[3];
            for (int d = 0; d < 3; d++) {
                lower[d] = take(&in, 1) & 0x80 ? (int32_t)(uint32_t)take(&in, 4) : (int8_t)take(&in, 1) / 4;
                upper[d] = take(&in, 1) & 0x80 ? (int32_t)(uint32_t)take(&in, 4) : (int8_t)take(&in, 1) / 4;
            }
            uint32_t cpp = (uint32_t)take(&in, 2) % 300, ppc = (uint32_t)take(&in, 2) % 1100;
            int nan_fill = (int)take(&in, 1) % 3;
            static const uint8_t tsz[TILE_DTYPE_COUNT] = {4, 2, 2, 1, 1, 1, 4, 2, 8, 1, 2, 4, 8, 8}; /* by tile_dtype */
            im2col_bytes = (uint64_t)cpp * ppc * ((unsigned)dt < TILE_DTYPE_COUNT ? tsz[dt] : 1);
            st = tile_tensor_map_encode_im2col(fuzz_ctx, map, dt, rank, g, dims, strides, lower, upper, cpp, ppc,
                                               take(&in, 1) & 1 ? es : NULL, sw, nan_fill);
        } else {
            st = tile_tensor_map_encode(fuzz_ctx, map, dt, rank, g, dims, strides, box, take(&in, 1) & 1 ? es : NULL, sw);
        }
        if (verbose) fprintf(stderr, "fuzz_ptx: encode: %s %s\n", tile_status_string(st), st ? tile_last_error(fuzz_ctx) : "");
        if (st != TILE_OK) {
            if (st == TILE_ERROR_INTERNAL || !*tile_last_error(fuzz_ctx) || strstr(tile_last_error(fuzz_ctx), "internal error"))
                breach(im2col ? "tile_tensor_map_encode_im2col" : "tile_tensor_map_encode", "map");
            tile_free(fuzz_ctx, buf);
            return;
        }
    }
    if (rank < (im2col ? 3 : 1) || rank > 5) breach("the encoder's rank check", "map"); /* a map it should have refused */
    if (flags & 4) {
        if (tile_malloc(fuzz_ctx, 128, &gmap) != TILE_OK) breach("tile_malloc", "gmap");
        tile_memcpy_htod(fuzz_ctx, gmap, map, 128);
    }
    uint32_t c[5], tx = (uint32_t)take(&in, 4);
    for (int d = 0; d < 5; d++) c[d] = (uint32_t)(take(&in, 1) & 0x80 ? take(&in, 4) : take(&in, 1) - 64);
    uint16_t o[3];
    for (int d = 0; d < 3; d++) o[d] = (uint16_t)(take(&in, 1) & 0x80 ? take(&in, 2) : take(&in, 1) % 8);
    if (im2col && !(flags & 10)) { /* an encoded im2col map's tile, as a kernel expects it */
        tx = (uint32_t)im2col_bytes;
    } else if (!im2col && !(flags & 8)) { /* the box's bytes, as a kernel expects them */
        uint64_t n = 1;
        for (int d = 0; d < rank; d++) {
            uint32_t bx = 0, e = map[98 + d] ? map[98 + d] : 1;
            memcpy(&bx, map + 88 + 2 * d, 2);
            n *= (bx + e - 1) / e;
        }
        static const uint8_t esz[13] = {1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4};
        tx = (uint32_t)(n * (map[4] < 13 ? esz[map[4]] : 1));
    }
    void *args[] = {map, &c[0], &c[1], &c[2], &c[3], &c[4], &tx, &gmap, &o[0], &o[1], &o[2]};
    tile_kernel *k = tma_kernel(rank, flags & 1, im2col);
    tile_status st = tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL);
    if (st == TILE_OK) st = tile_synchronize(fuzz_ctx);
    const char *err = tile_last_error(fuzz_ctx);
    if (verbose) fprintf(stderr, "fuzz_ptx: rank %d %s%s: %s %.200s\n", rank, im2col ? "im2col " : "", flags & 1 ? "store" : "load", tile_status_string(st), st ? err : "");
    if (st == TILE_ERROR_INTERNAL || (st != TILE_OK && (!*err || strstr(err, "internal error") || strstr(err, "unreachable"))))
        breach("tensor copy", "t");
    if (gmap) tile_free(fuzz_ctx, gmap);
    tile_free(fuzz_ctx, buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size && data[0] == 2) {
        tensor_copy(data + 1, size - 1);
        return 0;
    }
    int run = size && data[0] == 1;
    if (run) data++, size--;
    /* the API takes a C string: the input up to its first NUL */
    char *ptx = malloc(size + 1);
    if (!ptx) return 0;
    memcpy(ptx, data, size);
    ptx[size] = 0;
    tile_module *m = NULL;
    tile_status st = tile_module_load_ptx(fuzz_ctx, ptx, &m);
    if (st == TILE_OK) {
        /* each entry the text names (the first 8): the launcher reads its parameters and block from the
         * header itself (tile_module_get_kernel), a second reader of the same text */
        int tries = 0;
        for (const char *e = strstr(ptx, ".entry"); e && tries < (run ? 4 : 8); e = strstr(e + 6, ".entry")) {
            const char *s = e + 6;
            while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
            size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$%");
            if (!len || len > 255) continue;
            char name[256];
            memcpy(name, s, len);
            name[len] = 0;
            tries++;
            tile_kernel *k;
            tile_kernel_attributes at;
            if (tile_module_get_kernel(m, name, &k) == TILE_OK && tile_kernel_get_attributes(k, &at) == TILE_OK &&
                (at.num_params < 0 || !at.signature)) {
                fprintf(stderr, "fuzz_ptx: kernel '%s': %d parameters, signature %s\n", name, at.num_params, at.signature ? at.signature : "NULL");
                abort();
            }
            if (run && tile_module_get_kernel(m, name, &k) == TILE_OK && tile_kernel_get_attributes(k, &at) == TILE_OK)
                launch_one(k, &at, name);
        }
        tile_module_unload(m);
    } else if (st == TILE_ERROR_INTERNAL || !*tile_last_error(fuzz_ctx)) {
        fprintf(stderr, "fuzz_ptx: load failed with %s and message '%s'\n", tile_status_string(st), tile_last_error(fuzz_ctx));
        abort();
    }
    free(ptx);
    return 0;
}

/* image.c - checking a cubin or fatbin image before anything reads it (tile_module_load_cubin).
 *
 * cuModuleLoadData takes an image without its size and reads what its headers say, so an image that is cut
 * short or damaged would make the driver read past the caller's buffer.  Every offset and size the image's
 * headers hold is checked against `size` here first, and the image is refused with a message when one points
 * outside it:
 *   1. ELF (a cubin: ptxas, nvcc -cubin): "\x7fELF", 64-bit little-endian, e_machine EM_CUDA (190); the
 *      section header table, the program header table and every section with contents inside the image; the
 *      section-name table one of its sections.  The SM it is for is in e_flags (bits 8-15 from ELF ABI
 *      version 8, CUDA 13; bits 0-7 before).
 *   2. fatbin (nvcc -fatbin; the container of several cubins and PTX): magic 0xBA55ED50, a 16-byte header
 *      whose payload size covers its entries; each entry (kind 1 PTX, 2 ELF) with its header size and payload
 *      inside the container, an ELF entry that is not compressed checked as in 1.  An entry's payload may be
 *      compressed (nvcc compresses by default; --no-compress does not): its bytes are then not examined.
 *   3. Anything else is no image (PTX text has tile_module_load_ptx).
 * A fatbin's uncompressed PTX entry is text the emulator can run (and a driver could JIT): rt_image_ptx copies
 * the one for the highest SM not above the one asked for.
 *
 * The layouts are the ELF specification's and, for fatbins, the container header nvcc writes (fatbinary.h's
 * __fatBinC_Wrapper_t points at it): a header {u32 magic, u16 version, u16 header size, u64 payload size},
 * then entries {u16 kind, u16 version, u32 header size, u64 payload size, u32 compressed size, ..., u32 SM at
 * 28, ..., u64 flags at 40, ..., u64 uncompressed size at 56}.  No mutable state. */
#include "runtime/rt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EM_CUDA = 190, ELF_HDR = 64, ELF_SHDR = 64, ELF_PHDR = 56, SHT_NOBITS = 8 };
enum { FATBIN_MAGIC = 0xBA55ED50u, FATBIN_HDR = 16, FATBIN_ENTRY_MIN = 64, FATBIN_PTX = 1, FATBIN_ELF = 2 };
enum { FATBIN_FLAG_COMPRESSED = 0x2000, FATBIN_FLAG_COMPRESSED_ZSTD = 0x8000 };

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* [off, off + len) inside size bytes, without overflow */
static bool inside(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

__attribute__((format(printf, 3, 4))) static bool fail(char *err, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return false;
}

/* 1. An ELF image of size bytes at p (what: "the cubin", "the fatbin's ELF entry 2"). */
static bool check_elf(const unsigned char *p, size_t size, const char *what, int *sm, char *err, size_t n) {
    if (size < ELF_HDR) return fail(err, n, "%s is truncated: %zu bytes, less than an ELF header (%d)", what, size, ELF_HDR);
    if (p[4] != 2 || p[5] != 1)
        return fail(err, n, "%s is not a 64-bit little-endian ELF file (class %d, data %d)", what, p[4], p[5]);
    if (rd16(p + 18) != EM_CUDA) return fail(err, n, "%s is an ELF file for machine %d, not NVIDIA CUDA (%d)", what, rd16(p + 18), EM_CUDA);
    uint64_t shoff = rd64(p + 40), phoff = rd64(p + 32);
    uint16_t phentsize = rd16(p + 54), phnum = rd16(p + 56), shentsize = rd16(p + 58), shnum = rd16(p + 60), shstrndx = rd16(p + 62);
    if (shnum && shentsize < ELF_SHDR) return fail(err, n, "%s: section header entries of %d bytes (at least %d)", what, shentsize, ELF_SHDR);
    if (phnum && phentsize < ELF_PHDR) return fail(err, n, "%s: program header entries of %d bytes (at least %d)", what, phentsize, ELF_PHDR);
    if (!inside(shoff, (uint64_t)shnum * shentsize, size))
        return fail(err, n, "%s is truncated or damaged: its section headers end at byte %llu of %zu", what,
                    (unsigned long long)(shoff + (uint64_t)shnum * shentsize), size);
    if (!inside(phoff, (uint64_t)phnum * phentsize, size))
        return fail(err, n, "%s is truncated or damaged: its program headers end at byte %llu of %zu", what,
                    (unsigned long long)(phoff + (uint64_t)phnum * phentsize), size);
    if (!shnum) return fail(err, n, "%s has no sections", what);
    if (shstrndx >= shnum) return fail(err, n, "%s: its section-name table is section %d of %d", what, shstrndx, shnum);
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = p + shoff + (uint64_t)i * shentsize;
        uint64_t off = rd64(sh + 24), len = rd64(sh + 32);
        if (rd32(sh + 4) != SHT_NOBITS && !inside(off, len, size))
            return fail(err, n, "%s is truncated or damaged: a section ends at byte %llu of %zu", what, (unsigned long long)(off + len), size);
    }
    for (unsigned i = 0; i < phnum; i++) {
        const unsigned char *ph = p + phoff + (uint64_t)i * phentsize;
        if (!inside(rd64(ph + 8), rd64(ph + 32), size))
            return fail(err, n, "%s is truncated or damaged: a segment ends at byte %llu of %zu", what,
                        (unsigned long long)(rd64(ph + 8) + rd64(ph + 32)), size);
    }
    uint32_t flags = rd32(p + 48);
    *sm = (int)(p[8] >= 8 ? flags >> 8 & 0xff : flags & 0xff);
    return true;
}

/* 2. The fatbin at p; each entry to fn (may be NULL) after it is checked. */
typedef void (*EntryFn)(void *user, int kind, int sm, bool compressed, const unsigned char *payload, uint64_t len);
static bool check_fatbin(const unsigned char *p, size_t size, int *sm, EntryFn fn, void *user, char *err, size_t n) {
    if (size < FATBIN_HDR) return fail(err, n, "the fatbin is truncated: %zu bytes, less than a fatbin header (%d)", size, FATBIN_HDR);
    uint16_t hsize = rd16(p + 6);
    uint64_t fsize = rd64(p + 8);
    if (hsize < FATBIN_HDR || !inside(hsize, fsize, size))
        return fail(err, n, "the fatbin is truncated or damaged: its header says %llu bytes, the image has %zu",
                    (unsigned long long)hsize + fsize, size);
    int count = 0;
    *sm = 0;
    for (uint64_t at = hsize, end = hsize + fsize; at < end; count++) {
        char what[64];
        snprintf(what, sizeof what, "the fatbin's entry %d", count + 1);
        if (!inside(at, FATBIN_ENTRY_MIN, end)) return fail(err, n, "%s is truncated: its header ends at byte %llu of %llu", what, (unsigned long long)(at + FATBIN_ENTRY_MIN), (unsigned long long)end);
        const unsigned char *e = p + at;
        uint32_t ehsize = rd32(e + 4);
        uint64_t len = rd64(e + 8);
        if (ehsize < FATBIN_ENTRY_MIN || !inside(at + ehsize, len, end))
            return fail(err, n, "%s is truncated or damaged: it ends at byte %llu of %llu", what, (unsigned long long)(at + ehsize + len), (unsigned long long)end);
        int kind = rd16(e), esm = (int)rd32(e + 28);
        bool compressed = (rd64(e + 40) & (FATBIN_FLAG_COMPRESSED | FATBIN_FLAG_COMPRESSED_ZSTD)) || rd32(e + 16) || rd64(e + 56);
        if (kind == FATBIN_ELF && !compressed) {
            int elf_sm;
            if (!check_elf(e + ehsize, (size_t)len, what, &elf_sm, err, n)) return false;
        }
        if (kind == FATBIN_ELF && !*sm) *sm = esm;
        if (fn) fn(user, kind, esm, compressed, e + ehsize, len);
        at += ehsize + len;
    }
    if (!count) return fail(err, n, "the fatbin holds no entries");
    return true;
}

bool rt_image_check(const void *image, size_t size, RtImage *out, char *err, size_t n) {
    const unsigned char *p = image;
    memset(out, 0, sizeof *out);
    if (size >= 4 && !memcmp(p, "\x7f" "ELF", 4)) {
        out->kind = RT_IMAGE_ELF;
        return check_elf(p, size, "the cubin", &out->sm, err, n);
    }
    if (size >= 4 && rd32(p) == FATBIN_MAGIC) {
        out->kind = RT_IMAGE_FATBIN;
        return check_fatbin(p, size, &out->sm, NULL, NULL, err, n);
    }
    if (size < 4) return fail(err, n, "the image is truncated: %zu bytes", size);
    const char *ptx = memchr(p, '.', size < 4096 ? size : 4096);
    if (ptx && (size_t)(ptx - (const char *)p) + 8 <= size && !memcmp(ptx, ".version", 8))
        return fail(err, n, "the image is PTX text, not a cubin (load it with tile_module_load_ptx)");
    return fail(err, n, "the image is neither a cubin (an ELF file, \\x7fELF) nor a fatbin (magic 0xBA55ED50): its first bytes "
                "are %02x %02x %02x %02x", p[0], p[1], p[2], p[3]);
}

typedef struct PtxPick {
    int max_sm, sm, compressed_ptx;
    const unsigned char *ptx;
    uint64_t len;
} PtxPick;

static void pick_ptx(void *user, int kind, int sm, bool compressed, const unsigned char *payload, uint64_t len) {
    PtxPick *pk = user;
    if (kind != FATBIN_PTX) return;
    if (compressed) {
        pk->compressed_ptx++;
        return;
    }
    if (sm <= pk->max_sm && (!pk->ptx || sm > pk->sm)) pk->ptx = payload, pk->len = len, pk->sm = sm;
}

char *rt_image_ptx(const void *image, size_t size, int max_sm, int *compressed) {
    RtImage img;
    char err[8];
    PtxPick pk = {.max_sm = max_sm};
    if (compressed) *compressed = 0;
    if (!rt_image_check(image, size, &img, err, sizeof err) || img.kind != RT_IMAGE_FATBIN) return NULL;
    check_fatbin(image, size, &img.sm, pick_ptx, &pk, err, sizeof err);
    if (compressed) *compressed = pk.compressed_ptx;
    if (!pk.ptx) return NULL;
    size_t len = strnlen((const char *)pk.ptx, (size_t)pk.len); /* the payload is padded with NULs */
    char *s = malloc(len + 1);
    if (!s) return NULL;
    memcpy(s, pk.ptx, len);
    s[len] = 0;
    return s;
}

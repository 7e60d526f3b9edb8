/* tool_cache.h - what the test programs keep of the external tools' answers (nvcc's PTX for the
 * conformance programs, ptxas's verdict on hand-written PTX), which depend on the tool and its input
 * only, not on the build: $TILE_TEST_TOOL_CACHE, else build/tool-cache (TILE_BINARY_DIR).  The
 * sanitized run asks the same questions as the plain one, so scripts/test.sh points build-asan's
 * programs at build/tool-cache; a rerun asks the tools nothing new.  Entries are named by a hash of
 * the tool's identity (path, size, modification time: another install replaces the file) and the
 * input, and written under a temporary name and renamed, so programs running at once never read
 * half an entry.  Deleting the folder is always safe. */
#ifndef TILE_TEST_TOOL_CACHE_H
#define TILE_TEST_TOOL_CACHE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TILE_BINARY_DIR
#define TILE_BINARY_DIR "."
#endif

/* The folder of the test programs' kept tool outputs ($TILE_TEST_TOOL_CACHE, else build/tool-cache), with sub
 * (made if missing) appended: "" when it cannot be made (then nothing is kept). */
static inline void tool_cache_dir(const char *sub, char *out, size_t cap) {
    const char *env = getenv("TILE_TEST_TOOL_CACHE");
    char base[512];
    snprintf(base, sizeof base, "%s", env && *env ? env : TILE_BINARY_DIR "/tool-cache");
    mkdir(base, 0755);
    snprintf(out, cap, "%s/%s", base, sub);
    if (mkdir(out, 0755) != 0 && access(out, W_OK) != 0) out[0] = 0;
}

/* 64 bits of FNV-1a over a, then b (two 32-bit lanes from different starts) */
static inline void tool_cache_hash(const char *a, const char *b, size_t blen, char out[17]) {
    uint32_t h[2] = {2166136261u, 2166136261u ^ 0x9e3779b9u};
    for (int k = 0; k < 2; k++) {
        for (const unsigned char *p = (const unsigned char *)a; *p; p++) h[k] = (h[k] ^ *p) * 16777619u;
        for (size_t i = 0; i < blen; i++) h[k] = (h[k] ^ (unsigned char)b[i]) * 16777619u;
    }
    snprintf(out, 17, "%08x%08x", h[0], h[1]);
}

#endif

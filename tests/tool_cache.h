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
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

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

/* 64 bits of XXH3 (the project's hash) over b, seeded by the hash of a */
static inline void tool_cache_hash(const char *a, const char *b, size_t blen, char out[17]) {
    XXH64_hash_t h = XXH3_64bits_withSeed(b, blen, XXH3_64bits(a, strlen(a)));
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

#endif

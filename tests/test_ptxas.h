/* test_ptxas.h - hand-written PTX in the emulator's tests must also be PTX that ptxas accepts: when
 * ptxas is installed (/usr/local/cuda/bin or PATH), check_ptxas_arch assembles it for the given
 * target and fails the test with ptxas's log if it refuses.  Without ptxas it does nothing (the
 * emulator's own checks still run).
 *
 * ptxas's answer depends on ptxas, the PTX text and the target only, and the suite asks the same
 * question thousands of times (test_emu_refuse alone: 800 runs of ptxas, most of its time), again
 * in the sanitized run, whose programs write the same text.  Each answer (the exit status and the
 * log) is kept in the tool cache's ptxas/ (tests/tool_cache.h) under a name hashing ptxas (its
 * path, size and modification time), the target and the text. */
#ifndef TILE_TEST_PTXAS_H
#define TILE_TEST_PTXAS_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/tool_cache.h"

/* ptxas's exit status assembling ptx for arch, its log in log; -1 without ptxas. */
static inline int ptxas_run(const char *ptx, const char *arch, char *log, size_t cap) {
    static int have = -1;
    if (have < 0) have = access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? 1 : system("command -v ptxas >/dev/null 2>&1") == 0 ? 2 : 0;
    if (!have) return -1;
    const char *tool = have == 1 ? "/usr/local/cuda/bin/ptxas" : "ptxas";
    char dir[600], kept[700], ident[600], key[17];
    tool_cache_dir("ptxas", dir, sizeof dir);
    struct stat ts;
    bool known = have == 1 && stat(tool, &ts) == 0;
    snprintf(ident, sizeof ident, "%s %lld %lld %s", tool, known ? (long long)ts.st_size : 0LL, known ? (long long)ts.st_mtime : 0LL, arch);
    tool_cache_hash(ident, ptx, strlen(ptx), key);
    snprintf(kept, sizeof kept, "%s/%s-%zu-%s", dir, arch, strlen(ptx), key);
    FILE *kf = dir[0] && have == 1 ? fopen(kept, "r") : NULL; /* a ptxas on PATH (no identity): asked every time */
    if (kf) { /* "rc\n" then the log */
        int rc;
        if (fscanf(kf, "%d", &rc) == 1 && fgetc(kf) == '\n') {
            size_t n = fread(log, 1, cap - 1, kf);
            log[n] = 0;
            fclose(kf);
            return rc;
        }
        fclose(kf);
    }
    char path[] = "/tmp/tile_test_ptxas_XXXXXX.ptx";
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(ptx, f);
    fclose(f);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o /dev/null 2>&1", tool, arch, path);
    FILE *pp = popen(cmd, "r");
    cr_assert(pp);
    size_t n = fread(log, 1, cap - 1, pp);
    log[n] = 0;
    int rc = pclose(pp);
    unlink(path);
    /* an answer (0, or 255 for PTX it refuses), not a crash: the shell says 128 + N for a ptxas signal N stopped */
    if (dir[0] && have == 1 && rc != -1 && WIFEXITED(rc) && (WEXITSTATUS(rc) <= 128 || WEXITSTATUS(rc) > 128 + 64)) {
        char tmp[760];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", kept, (long)getpid());
        FILE *w = fopen(tmp, "w");
        if (w) {
            bool ok = fprintf(w, "%d\n", rc) > 0 && fwrite(log, 1, n, w) == n;
            if (fclose(w) == 0 && ok && rename(tmp, kept) == 0) return rc;
            unlink(tmp);
        }
    }
    return rc;
}

static inline void check_ptxas_arch(const char *ptx, const char *arch) {
    char log[8192];
    int rc = ptxas_run(ptx, arch, log, sizeof log);
    if (rc >= 0) cr_assert_eq(rc, 0, "ptxas -arch=%s rejects the PTX:\n%s\n%s", arch, log, ptx);
}

/* Whether ptxas refuses the PTX for arch (true without ptxas: nothing to ask; the caller's own checks still run). */
static inline bool ptxas_refuses(const char *ptx, const char *arch) {
    char log[8192];
    return ptxas_run(ptx, arch, log, sizeof log) != 0;
}

#endif

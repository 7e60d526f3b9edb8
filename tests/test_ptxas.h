/* test_ptxas.h - hand-written PTX in the emulator's tests must also be PTX that ptxas accepts: when
 * ptxas is installed (/usr/local/cuda/bin or PATH), check_ptxas_arch assembles it for the given
 * target and fails the test with ptxas's log if it refuses.  Without ptxas it does nothing (the
 * emulator's own checks still run). */
#ifndef TILE_TEST_PTXAS_H
#define TILE_TEST_PTXAS_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ptxas's exit status assembling ptx for arch, its log in log; -1 without ptxas. */
static int ptxas_run(const char *ptx, const char *arch, char *log, size_t cap) {
    static int have = -1;
    if (have < 0) have = access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? 1 : system("command -v ptxas >/dev/null 2>&1") == 0 ? 2 : 0;
    if (!have) return -1;
    char path[] = "/tmp/tile_test_ptxas_XXXXXX.ptx";
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(ptx, f);
    fclose(f);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o /dev/null 2>&1", have == 1 ? "/usr/local/cuda/bin/ptxas" : "ptxas", arch, path);
    FILE *pp = popen(cmd, "r");
    cr_assert(pp);
    size_t n = fread(log, 1, cap - 1, pp);
    log[n] = 0;
    int rc = pclose(pp);
    unlink(path);
    return rc;
}

static void check_ptxas_arch(const char *ptx, const char *arch) {
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

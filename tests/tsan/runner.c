/* runner.c - runs the Test(...)s that tests/tsan/criterion/criterion.h registered (the ThreadSanitizer
 * build's stand-in for Criterion's runner; see that header).
 *
 *   PROGRAM [--filter 'suite/name-glob'] [--list]
 *
 * Each test runs in a forked child (as Criterion runs them): its .init, the test, its .fini; the child's
 * exit status is the result (0 passed, 1 a failed check, 2 skipped; anything else, ThreadSanitizer's 66 at
 * exit included, a failure).  A test gets 20 times its .timeout (ThreadSanitizer runs the emulator 5-15
 * times slower; 600 s without one).  The exit status is 1 when any test failed. */
#include <criterion/criterion.h>

#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct Entry {
    const char *suite, *name;
    void (*fn)(void);
    ShimTest opts;
} Entry;

static Entry *tests;
static int ntests, cap;
static bool failed; /* in the child: a cr_expect failed */

void shim_register(const char *suite, const char *name, void (*fn)(void), ShimTest opts) {
    if (ntests == cap) {
        cap = cap ? 2 * cap : 64;
        if (!(tests = realloc(tests, sizeof *tests * (size_t)cap))) abort();
    }
    tests[ntests++] = (Entry){suite, name, fn, opts};
}

void shim_fail(bool fatal, const char *file, int line, const char *expr, const char *fmt, ...) {
    fprintf(stderr, "%s:%d: %s failed: %s", file, line, fatal ? "assertion" : "expectation", expr);
    if (*fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    failed = true;
    if (fatal) exit(1);
}

void shim_skip(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("skipped: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

void shim_log(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int run_one(const Entry *t) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        alarm((unsigned)(t->opts.timeout > 0 ? 20 * t->opts.timeout : 600));
        if (t->opts.init) t->opts.init();
        t->fn();
        if (t->opts.fini) t->opts.fini();
        exit(failed ? 1 : 0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    const char *filter = "*";
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strncmp(argv[i], "--filter=", 9)) filter = argv[i] + 9;
        else if (!strcmp(argv[i], "--list")) list = true;
        else if (!strncmp(argv[i], "--jobs", 6) || !strncmp(argv[i], "-j", 2)) { /* one at a time */
            if (!strcmp(argv[i], "--jobs") || !strcmp(argv[i], "-j")) i++;
        } else {
            fprintf(stderr, "usage: %s [--filter 'suite/name'] [--list]\n", argv[0]);
            return 2;
        }
    }
    int passed = 0, bad = 0, skipped = 0;
    for (int i = 0; i < ntests; i++) {
        char full[256];
        snprintf(full, sizeof full, "%s/%s", tests[i].suite, tests[i].name);
        if (tests[i].opts.disabled || fnmatch(filter, full, FNM_EXTMATCH) != 0) continue;
        if (list) {
            printf("%s\n", full);
            continue;
        }
        int rc = run_one(&tests[i]);
        if (rc == 0) passed++;
        else if (rc == 2) skipped++;
        else bad++;
        fprintf(stderr, "[%s] %s%s\n", rc == 0 ? "PASS" : rc == 2 ? "SKIP" : "FAIL", full,
                rc == 66 ? " (ThreadSanitizer report)" : rc > 128 ? " (signal)" : "");
    }
    if (!list) fprintf(stderr, "Synthesis: Tested: %d | Passing: %d | Failing: %d | Skipped: %d\n", passed + bad + skipped, passed, bad, skipped);
    return bad ? 1 : 0;
}

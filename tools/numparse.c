/* numparse.c - strict numbers of command-line strings (numparse.h). */
#include "tools/numparse.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno == ERANGE || v < lo || v > hi) return false;
    *out = (int64_t)v;
    return true;
}

bool cli_parse_double(const char *s, double lo, double hi, double *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v) || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_option_int(const char *prog, const char *opt, const char *s, int lo, int hi, int *out) {
    int64_t v;
    if (cli_parse_i64(s, lo, hi, &v)) return *out = (int)v, true;
    fprintf(stderr, "%s: %s expects an integer from %d to %d, got '%s'\n", prog, opt, lo, hi, s ? s : "");
    return false;
}

bool cli_option_double(const char *prog, const char *opt, const char *s, double lo, double hi, double *out) {
    if (cli_parse_double(s, lo, hi, out)) return true;
    fprintf(stderr, "%s: %s expects a number from %g to %g, got '%s'\n", prog, opt, lo, hi, s ? s : "");
    return false;
}

int cli_option_i64_list(const char *prog, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out, int max) {
    int n = 0;
    for (const char *p = s ? s : "";; p++) {
        size_t len = strcspn(p, ",");
        char item[32];
        if (n == max || len == 0 || len >= sizeof item) goto bad;
        memcpy(item, p, len), item[len] = 0;
        if (!cli_parse_i64(item, lo, hi, &out[n++])) goto bad;
        p += len;
        if (!*p) return n;
    }
bad:
    fprintf(stderr, "%s: %s expects up to %d integers from %lld to %lld separated by commas, got '%s'\n", prog, opt, max,
            (long long)lo, (long long)hi, s ? s : "");
    return -1;
}

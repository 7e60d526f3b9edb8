/* options.c - the process's knobs, read from the environment in one place.
 *
 * The library has no global mutable state except this: a RtOptions
 * filled once (pthread_once) from TILE_CACHE_DIR, TILE_CACHE_MAX_BYTES,
 * XDG_CACHE_HOME, HOME, TMPDIR, TILE_DEBUG, TILE_DATA_DIR, TILE_EMU_TIMEOUT and TILE_EMU_APPROX, then only read.  TILE_DEVICE is read by the device
 * layer (dev_parse_device), its one reader.
 *
 * The default cache folder is TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile
 * (an absolute XDG_CACHE_HOME, as the XDG spec asks), else
 * $HOME/.cache/tile (an absolute HOME: a relative one would move the folder
 * with the working directory), else a folder of this user's own in the temporary
 * folder, ${TMPDIR:-/tmp}/tile-cache-UID: never a folder shared by users.
 * Whichever it is, jit/cache.c uses it only if it is owned by this user and
 * writable by no one else.
 *
 * TILE_CACHE_MAX_BYTES caps the compile cache's entries: a decimal number of
 * bytes, optionally followed by K, M or G (powers of 1024), up to 2^64 - 1 bytes in all; 0 means
 * no cap; unset, malformed or larger means the default, 1 GiB (with a warning on stderr naming which).
 *
 * The numbers and words (TILE_CACHE_MAX_BYTES, TILE_EMU_TIMEOUT, TILE_EMU_APPROX) are read by env_word: spaces,
 * tabs and newlines around them do not count (`TILE_EMU_TIMEOUT="5 "` is 5 s, as " 5" was; "5 " was refused). */
#include "runtime/rt.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static RtOptions opts;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Whether the comma-separated list names cat (or, when with_all, "all"). */
static bool names_category(const char *list, const char *cat, bool with_all) {
    size_t n = strlen(cat);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if ((len == n && !strncmp(p, cat, n)) || (with_all && len == 3 && !strncmp(p, "all", 3))) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static bool has_category(const char *list, const char *cat) { return names_category(list, cat, true); }

/* Warn once about each word of TILE_DEBUG that is no category (a typo would silently log nothing). */
static void warn_unknown_categories(const char *list) {
    static const char *const known[] = {"cache", "launch", "tune", "assert", "emu-1to1", "all"};
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p), k = 0;
        while (k < sizeof known / sizeof known[0] && (strlen(known[k]) != len || strncmp(p, known[k], len))) k++;
        if (len && k == sizeof known / sizeof known[0])
            fprintf(stderr, "tile: warning: TILE_DEBUG=%s: '%.*s' is no category (cache, launch, tune, assert, emu-1to1 or all); "
                    "ignored\n", list, (int)len, p);
        p = e ? e + 1 : NULL;
    }
}

enum { CACHE_MAX_DEFAULT = 1 << 30 };

/* size = DIGITS [ "K" | "M" | "G" ], every value up to UINT64_MAX bytes: SIZE_OK, SIZE_MALFORMED, or
 * SIZE_OVERFLOW (more than UINT64_MAX bytes, the suffix's factor included). */
enum { SIZE_OK, SIZE_MALFORMED, SIZE_OVERFLOW };
static int parse_size(const char *s, uint64_t *out) {
    if (!s || *s < '0' || *s > '9') return SIZE_MALFORMED;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift) end++;
    if (*end) return SIZE_MALFORMED;
    if (errno == ERANGE || (uint64_t)v > UINT64_MAX >> shift) return SIZE_OVERFLOW;
    *out = (uint64_t)v << shift;
    return SIZE_OK;
}

/* seconds = DIGITS [ "." DIGITS ] [ ("e" | "E") [ "+" | "-" ] DIGITS ] (digits on at least one side of the point),
 * or "inf"; more than 0.  Decimal only, as the other numbers: strtod alone also took "0x10" (16 s), "1e-999"
 * (0, then refused as "not positive") and "infinity", and read "0,5" or refused "0.5" in a host program that
 * set a decimal-comma LC_NUMERIC.  Too large a number (1e999) is no budget, as inf and 1e9 are. */
static bool parse_seconds(const char *s, double *out) {
    if (!strcmp(s, "inf")) return *out = INFINITY, true;
    const char *p = s;
    size_t ip = strspn(p, "0123456789");
    p += ip;
    size_t fp = 0;
    if (*p == '.') fp = strspn(++p, "0123456789"), p += fp;
    if (!ip && !fp) return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        size_t ep = strspn(p, "0123456789");
        if (!ep) return false;
        p += ep;
    }
    if (*p) return false;
    double v = c_strtod(s, NULL); /* the point is a point, whatever the host's locale */
    if (!(v > 0)) return false; /* 0, or a positive number too small for a double */
    *out = v;
    return true;
}

/* A variable's value v (getenv's) without the white space around it (malloc'd), NULL when unset or only white space. */
static char *env_word(const char *v) {
    if (!v) return NULL;
    while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') v++;
    size_t n = strlen(v);
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\n' || v[n - 1] == '\r')) n--;
    return n ? strndup(v, n) : NULL;
}

static void load(void) {
    const char *dir = getenv("TILE_CACHE_DIR");
    Str s = {0};
    if (dir && *dir) str_puts(&s, dir);
    else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0] == '/') str_printf(&s, "%s/tile", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME") && getenv("HOME")[0] == '/') str_printf(&s, "%s/.cache/tile", getenv("HOME"));
    else {
        const char *tmp = getenv("TMPDIR");
        str_printf(&s, "%s/tile-cache-%u", tmp && tmp[0] == '/' ? tmp : "/tmp", (unsigned)geteuid());
    }
    opts.cache_dir = str_take(&s);
    char *cap = env_word(getenv("TILE_CACHE_MAX_BYTES"));
    int ps = parse_size(cap, &opts.cache_max_bytes);
    if (ps != SIZE_OK) {
        opts.cache_max_bytes = CACHE_MAX_DEFAULT;
        /* a typo would silently keep the default: say so, once (this runs once per process) */
        if (ps == SIZE_OVERFLOW)
            fprintf(stderr, "tile: warning: TILE_CACHE_MAX_BYTES=%s is more than 18446744073709551615 bytes (2^64 - 1, the "
                    "largest cap; 0 means no cap); using the default, 1 GiB\n", cap);
        else if (cap && *cap)
            fprintf(stderr, "tile: warning: TILE_CACHE_MAX_BYTES=%s is not a size (bytes, or with a K, M or G suffix); "
                    "using the default, 1 GiB\n", cap);
    }
    free(cap);
    const char *data = getenv("TILE_DATA_DIR"); /* datadir.c decides what it means */
    opts.data_dir = data && *data ? strdup(data) : NULL;
    const char *dbg = getenv("TILE_DEBUG");
    warn_unknown_categories(dbg);
    opts.debug_cache = has_category(dbg, "cache");
    opts.debug_launch = has_category(dbg, "launch");
    opts.debug_tune = has_category(dbg, "tune");
    opts.debug_assert = has_category(dbg, "assert");
    opts.debug_emu_1to1 = names_category(dbg, "emu-1to1", false); /* a reference, not a log: not in `all` */
    char *to = env_word(getenv("TILE_EMU_TIMEOUT")); /* seconds, e.g. "30" or "0.5" */
    if (to) {
        double v;
        if (!parse_seconds(to, &v)) {
            opts.emu_timeout_bad = true;
            size_t n = strlen(to), keep = sizeof opts.emu_timeout_text - 4; /* room for "..." */
            for (size_t i = 0; i < n && i < keep; i++) opts.emu_timeout_text[i] = to[i] >= 0x20 && to[i] < 0x7f ? to[i] : '?';
            if (n > keep) strcpy(opts.emu_timeout_text + keep, "...");
        }
        else opts.emu_timeout_seconds = v;
    }
    free(to);
    char *ap = env_word(getenv("TILE_EMU_APPROX")); /* "exact" (the default) or "bound" */
    if (ap) {
        if (!strcmp(ap, "bound")) opts.emu_approx_bound = true;
        else if (strcmp(ap, "exact")) opts.emu_approx_bad = true;
    }
    free(ap);
}

const RtOptions *rt_options(void) {
    pthread_once(&once, load);
    return &opts;
}

void rt_debug(const char *cat, const char *fmt, ...) {
    Str s = {0};
    str_printf(&s, "tile[%s]: ", cat);
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    str_putc(&s, '\n');
    fputs(s.buf, stderr);
    str_free(&s);
}

char *tile_cache_default_dir(void) { return strdup(rt_options()->cache_dir); }

uint64_t tile_cache_max_bytes(void) { return rt_options()->cache_max_bytes; }

/* options.c - the process's knobs, read from the environment in one place.
 *
 * The library has no global mutable state except this: a RtOptions
 * filled once (pthread_once) from TILE_CACHE_DIR, XDG_CACHE_HOME, HOME,
 * TILE_DEBUG and TILE_EMU_TIMEOUT, then only read.  TILE_DEVICE is read by the device layer
 * (dev_parse_device), its one reader. */
#include "runtime/rt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static RtOptions opts;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool has_category(const char *list, const char *cat) {
    size_t n = strlen(cat);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if ((len == n && !strncmp(p, cat, n)) || (len == 3 && !strncmp(p, "all", 3))) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static void load(void) {
    const char *dir = getenv("TILE_CACHE_DIR");
    Str s = {0};
    if (dir && *dir) str_puts(&s, dir);
    else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME")) str_printf(&s, "%s/tile", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME") && *getenv("HOME")) str_printf(&s, "%s/.cache/tile", getenv("HOME"));
    else str_puts(&s, "/tmp/tile-cache");
    opts.cache_dir = str_take(&s);
    const char *dbg = getenv("TILE_DEBUG");
    opts.debug_cache = has_category(dbg, "cache");
    opts.debug_launch = has_category(dbg, "launch");
    opts.debug_tune = has_category(dbg, "tune");
    const char *to = getenv("TILE_EMU_TIMEOUT"); /* seconds, e.g. "30" or "0.5" */
    if (to && *to) {
        char *end;
        double v = strtod(to, &end);
        if (*end || !(v > 0)) opts.emu_timeout_bad = true;
        else opts.emu_timeout_seconds = v;
    }
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

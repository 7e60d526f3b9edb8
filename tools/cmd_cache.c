/* cmd_cache.c - `tile cache stats|list|clear`: the compile cache and the tuning database.
 *
 * The folder: --dir, else what the library uses (TILE_CACHE_DIR, else
 * $XDG_CACHE_HOME/tile, else ~/.cache/tile, else ${TMPDIR:-/tmp}/tile-cache-UID;
 * tile_cache_default_dir); the library refuses a folder another user owns or can write.
 *
 * --json: JSON Lines, one object per result (json.h): stats one object, list
 * one object per entry, clear one object (dir, tuning); nothing else on stdout. */
#include "tools/cli.h"
#include "tools/cmd.h"
#include "tools/json.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_stats[] =
    "usage: tile cache stats [--dir DIR] [--json]\n"
    "Hits and misses since the last clear, entries and bytes on disk against the cap\n"
    "(TILE_CACHE_MAX_BYTES, default 1 GiB), tuning records.\n"
    "\n"
    "  --json        one JSON object on one line: dir, hits, misses, entries, bytes, max_bytes, tuning_records\n"
    "  --dir DIR     the cache folder (default: TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile,\n"
    "                else ${TMPDIR:-/tmp}/tile-cache-UID; used only when owned by you and writable by no one else)\n"
    "  -h, --help    this text\n"
    "\n" CLI_EXIT_HELP;

static const char usage_list[] =
    "usage: tile cache list [--dir DIR] [--json]\n"
    "Every entry, least recently used first: key, kernels, arch, defines and specializations,\n"
    "size in bytes, last use (written or last hit; the entries evicted first when over the cap), source.\n"
    "\n"
    "  --json        JSON Lines: one object per entry (key, source, kernels, arch, defines,\n"
    "                specialize, bytes, last_use as seconds since the epoch)\n"
    "  --dir DIR     the cache folder (default: TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile,\n"
    "                else ${TMPDIR:-/tmp}/tile-cache-UID; used only when owned by you and writable by no one else)\n"
    "  -h, --help    this text\n"
    "\n" CLI_EXIT_HELP;

static const char usage_clear[] =
    "usage: tile cache clear [--tuning] [--dir DIR] [--json]\n"
    "Remove every entry of the compile cache.\n"
    "\n"
    "  --tuning      remove the tuning database (tune.db) too\n"
    "  --json        one JSON object on one line: dir, tuning (whether tune.db was removed too)\n"
    "  --dir DIR     the cache folder (default: TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile,\n"
    "                else ${TMPDIR:-/tmp}/tile-cache-UID; used only when owned by you and writable by no one else)\n"
    "  -h, --help    this text\n"
    "\n" CLI_EXIT_HELP;

enum { OPT_DIR = 256, OPT_TUNING, OPT_JSON };

/* --tuning is accepted by every subcommand (as it always was) and used by clear */
static const struct option options[] = {
    {"dir", required_argument, NULL, OPT_DIR},
    {"tuning", no_argument, NULL, OPT_TUNING},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {0},
};

typedef struct CacheArgs {
    char *dir; /* malloc'd */
    int tuning;
    bool json;
} CacheArgs;

static int cache_parse(const char *cmd, const char *usage, int argc, char **argv, CacheArgs *a) {
    *a = (CacheArgs){0};
    const char *dir = NULL;
    CliGetopt g = {.cmd = cmd, .argc = argc, .argv = argv, .shortopts = "h", .longopts = options};
    int c;
    while ((c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(usage);
        case OPT_DIR: dir = g.arg; break; /* given twice with two values: refused by cli_getopt */
        case OPT_TUNING: a->tuning = 1; break;
        case OPT_JSON: a->json = true; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (g.first_operand < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[g.first_operand]);
    a->dir = dir && *dir ? strdup(dir) : tile_cache_default_dir(); /* --dir '' is the default, as the library reads it */
    if (!a->dir) return fprintf(stderr, "tile: no cache folder (set TILE_CACHE_DIR or pass --dir)\n"), CLI_EXIT_FAIL;
    return CLI_CONTINUE;
}

/* A folder the library would not use (another user's, writable by others, a symbolic link, a file) or cannot
 * read: the library's reason and what this command did not do, exit 3. */
static int unusable(const CacheArgs *a, const char *what) {
    const char *why = tile_last_error(NULL), *sep = strstr(why, "this user can use: ");
    fprintf(stderr, "tile: %s is not a cache folder this user can use: %s; nothing was %s\n", a->dir,
            sep ? sep + strlen("this user can use: ") : why, what);
    return CLI_EXIT_FAIL;
}

static int cache_stats(int argc, char **argv) {
    CacheArgs a;
    int rc = cache_parse("cache stats", usage_stats, argc, argv, &a);
    if (rc != CLI_CONTINUE) return rc;
    tile_cache_stats s;
    rc = tile_cache_get_stats(a.dir, &s) == TILE_OK ? CLI_EXIT_OK : unusable(&a, "read");
    uint64_t cap = tile_cache_max_bytes();
    if (!rc && a.json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "dir", a.dir);
        json_uint(&j, "hits", s.hits);
        json_uint(&j, "misses", s.misses);
        json_uint(&j, "entries", s.entries);
        json_uint(&j, "bytes", s.bytes);
        json_uint(&j, "max_bytes", cap);
        json_uint(&j, "tuning_records", s.tuning_records);
        json_end(&j);
    } else if (!rc) {
        printf("cache %s\n  hits %llu  misses %llu\n  entries %llu  bytes %llu", a.dir, (unsigned long long)s.hits, (unsigned long long)s.misses,
               (unsigned long long)s.entries, (unsigned long long)s.bytes);
        if (cap) printf(" of %llu (%.1f%%)", (unsigned long long)cap, 100.0 * (double)s.bytes / (double)cap);
        else printf(" (no cap)");
        printf("\n  tuning records %llu\n", (unsigned long long)s.tuning_records);
    }
    free(a.dir);
    return rc;
}

/* The entries, kept to be sorted by last use (the order eviction follows) */
typedef struct ListRow {
    char key[33], *source, *kernels, *arch, *setup;
    uint64_t bytes;
    int64_t last_use;
} ListRow;

typedef struct ListRows {
    ListRow *v;
    int n, cap;
    bool json, oom;
} ListRows;

static void list_row_json(const tile_cache_entry_info *e) {
    JsonOut j;
    json_begin(&j, stdout);
    json_str(&j, "key", e->key);
    json_str(&j, "source", e->source);
    json_str(&j, "kernels", e->kernels);
    json_str(&j, "arch", e->arch);
    json_str(&j, "defines", e->defines);
    json_str(&j, "specialize", e->specialize);
    json_uint(&j, "bytes", e->bytes);
    json_int(&j, "last_use", e->last_use);
    json_end(&j);
}

/* s for one line of the table: a control character (a newline in a file name) as \n, \t or \xHH, and a
 * backslash doubled, so every entry stays one row (--json gives the name exactly). */
static char *table_text(const char *s) {
    size_t n = 1;
    for (const char *c = s; *c; c++) n += (unsigned char)*c < 0x20 || *c == 0x7f ? 4 : *c == '\\' ? 2 : 1;
    char *out = malloc(n), *o = out;
    if (!out) return NULL;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '\n') *o++ = '\\', *o++ = 'n';
        else if (*c == '\t') *o++ = '\\', *o++ = 't';
        else if (*c == '\\') *o++ = '\\', *o++ = '\\';
        else if (*c < 0x20 || *c == 0x7f) o += snprintf(o, 5, "\\x%02x", *c);
        else *o++ = (char)*c;
    }
    *o = 0;
    return out;
}

static void collect_entry(void *user, const tile_cache_entry_info *e) {
    ListRows *l = user;
    if (l->json) { /* streamed: one line per entry as it is read */
        list_row_json(e);
        return;
    }
    if (l->n == l->cap) {
        ListRow *v = realloc(l->v, sizeof *v * (size_t)(l->cap = l->cap ? 2 * l->cap : 32));
        if (!v) return (void)(l->oom = true);
        l->v = v;
    }
    ListRow *r = &l->v[l->n++];
    snprintf(r->key, sizeof r->key, "%s", e->key);
    r->source = table_text(e->source), r->kernels = strdup(e->kernels), r->arch = strdup(*e->arch ? e->arch : "-");
    size_t n = strlen(e->defines) + strlen(e->specialize) + 4;
    if ((r->setup = malloc(n)))
        snprintf(r->setup, n, "%s%s%s", e->defines, *e->defines && *e->specialize ? " | " : "", *e->specialize || *e->defines ? e->specialize : "-");
    r->bytes = e->bytes, r->last_use = e->last_use;
    if (!r->source || !r->kernels || !r->arch || !r->setup) l->oom = true;
}

static int by_last_use(const void *a, const void *b) {
    const ListRow *x = a, *y = b;
    return (x->last_use > y->last_use) - (x->last_use < y->last_use);
}

static int width(const ListRows *l, size_t off, const char *title) {
    int w = (int)strlen(title);
    for (int i = 0; i < l->n; i++) {
        const char *s = *(char *const *)((const char *)&l->v[i] + off);
        if ((int)strlen(s) > w) w = (int)strlen(s);
    }
    return w > 48 ? 48 : w;
}

static int cache_list(int argc, char **argv) {
    CacheArgs a;
    int rc = cache_parse("cache list", usage_list, argc, argv, &a);
    if (rc != CLI_CONTINUE) return rc;
    ListRows l = {.json = a.json};
    rc = tile_cache_list_ex(a.dir, collect_entry, &l) == TILE_OK ? CLI_EXIT_OK : unusable(&a, "listed");
    if (l.oom) rc = CLI_EXIT_FAIL, fprintf(stderr, "tile: out of host memory\n");
    if (!rc && !a.json) {
        qsort(l.v, (size_t)l.n, sizeof *l.v, by_last_use);
        int wk = width(&l, offsetof(ListRow, kernels), "KERNELS"), wa = width(&l, offsetof(ListRow, arch), "ARCH"),
            ws = width(&l, offsetof(ListRow, setup), "DEFINES | SPECIALIZE");
        printf("%-32s  %-*s  %-*s  %-*s  %10s  %-19s  %s\n", "KEY", wk, "KERNELS", wa, "ARCH", ws, "DEFINES | SPECIALIZE", "BYTES", "LAST USE",
               "SOURCE");
        for (int i = 0; i < l.n; i++) {
            const ListRow *r = &l.v[i];
            char when[32] = "-";
            time_t t = (time_t)r->last_use;
            struct tm tm;
            if (localtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
            printf("%-32s  %-*s  %-*s  %-*s  %10llu  %-19s  %s\n", r->key, wk, r->kernels, wa, r->arch, ws, r->setup,
                   (unsigned long long)r->bytes, when, r->source);
        }
        printf("%d entr%s\n", l.n, l.n == 1 ? "y" : "ies");
    }
    for (int i = 0; i < l.n; i++) free(l.v[i].source), free(l.v[i].kernels), free(l.v[i].arch), free(l.v[i].setup);
    free(l.v);
    free(a.dir);
    return rc;
}

static int cache_clear(int argc, char **argv) {
    CacheArgs a;
    int rc = cache_parse("cache clear", usage_clear, argc, argv, &a);
    if (rc != CLI_CONTINUE) return rc;
    rc = CLI_EXIT_OK;
    if (tile_cache_clear(a.dir, a.tuning) != TILE_OK) {
        const char *why = tile_last_error(NULL), *colon = strrchr(why, ':'); /* "...: Permission denied" */
        char reason[160];
        snprintf(reason, sizeof reason, "%s", colon && colon[1] == ' ' ? colon + 2 : "");
        tile_cache_stats s;
        if (tile_cache_get_stats(a.dir, &s) != TILE_OK) rc = unusable(&a, "cleared");
        else { /* a folder the library uses, whose entries would not all go: not writable by this user, or read-only */
            fprintf(stderr, "tile: could not remove every entry of %s (%llu left%s%s: is the folder, and every folder in it, writable by this user?)\n",
                    a.dir, (unsigned long long)s.entries, *reason ? ", " : "", reason);
            rc = CLI_EXIT_FAIL;
        }
    }
    if (!rc && a.json) { /* it printed the text line, which a reader of --json could not parse */
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "dir", a.dir);
        json_bool(&j, "tuning", a.tuning);
        json_end(&j);
    } else if (!rc) printf("cleared %s%s\n", a.dir, a.tuning ? " (and the tuning database)" : "");
    free(a.dir);
    return rc;
}

static const CliCommand cache_commands[] = {
    {"stats", "hits and misses, entries and bytes on disk, tuning records", cache_stats},
    {"list", "every entry: key, kernels, arch, defines and specializations, size, last use, source", cache_list},
    {"clear", "remove every entry (--tuning: the tuning database too)", cache_clear},
};

int cmd_cache(int argc, char **argv) {
    return cli_dispatch("cache", cache_commands, (int)(sizeof cache_commands / sizeof cache_commands[0]), argc, argv);
}

/* cmd_cache.c - `tile cache stats|list|clear`: the compile cache and the tuning database.
 *
 * The folder: --dir, else what the library uses (TILE_CACHE_DIR, else
 * $XDG_CACHE_HOME/tile, else ~/.cache/tile, else ${TMPDIR:-/tmp}/tile-cache-UID;
 * tile_cache_default_dir); the library refuses a folder another user owns or can write. */
#include "tools/cli.h"
#include "tools/cmd.h"

#include <stdlib.h>
#include <string.h>

static const char usage_stats[] =
    "usage: tile cache stats [--dir DIR]\n"
    "Hits and misses since the last clear, entries and bytes on disk, tuning records.\n"
    "\n"
    "  --dir DIR     the cache folder (default: TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile,\n"
    "                else ${TMPDIR:-/tmp}/tile-cache-UID; used only when owned by you and writable by no one else)\n"
    "  -h, --help    this text\n";

static const char usage_list[] =
    "usage: tile cache list [--dir DIR]\n"
    "Every entry: key, size in bytes, source file, kernels.\n"
    "\n"
    "  --dir DIR     the cache folder (default: TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile,\n"
    "                else ${TMPDIR:-/tmp}/tile-cache-UID; used only when owned by you and writable by no one else)\n"
    "  -h, --help    this text\n";

static const char usage_clear[] =
    "usage: tile cache clear [--tuning] [--dir DIR]\n"
    "Remove every entry of the compile cache.\n"
    "\n"
    "  --tuning      remove the tuning database (tune.db) too\n"
    "  --dir DIR     the cache folder (default: TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile,\n"
    "                else ${TMPDIR:-/tmp}/tile-cache-UID; used only when owned by you and writable by no one else)\n"
    "  -h, --help    this text\n";

enum { OPT_DIR = 256, OPT_TUNING };

/* --tuning is accepted by every subcommand (as it always was) and used by clear */
static const struct option options[] = {
    {"dir", required_argument, NULL, OPT_DIR},
    {"tuning", no_argument, NULL, OPT_TUNING},
    {"help", no_argument, NULL, 'h'},
    {0},
};

typedef struct CacheArgs {
    char *dir; /* malloc'd */
    int tuning;
} CacheArgs;

static int cache_parse(const char *cmd, const char *usage, int argc, char **argv, CacheArgs *a) {
    *a = (CacheArgs){0};
    const char *dir = NULL;
    CliGetopt g = {.cmd = cmd, .argc = argc, .argv = argv, .shortopts = "h", .longopts = options};
    int c;
    while ((c = cli_getopt(&g)) != -1) {
        switch (c) {
        case 'h': return cli_help(usage);
        case OPT_DIR: dir = g.arg; break;
        case OPT_TUNING: a->tuning = 1; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (g.first_operand < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[g.first_operand]);
    a->dir = dir ? strdup(dir) : tile_cache_default_dir();
    if (!a->dir) return fprintf(stderr, "tile: no cache folder (set TILE_CACHE_DIR or pass --dir)\n"), CLI_EXIT_FAIL;
    return CLI_CONTINUE;
}

static int cache_stats(int argc, char **argv) {
    CacheArgs a;
    int rc = cache_parse("cache stats", usage_stats, argc, argv, &a);
    if (rc != CLI_CONTINUE) return rc;
    tile_cache_stats s;
    rc = tile_cache_get_stats(a.dir, &s) == TILE_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (!rc)
        printf("cache %s\n  hits %llu  misses %llu\n  entries %llu  bytes %llu\n  tuning records %llu\n", a.dir, (unsigned long long)s.hits,
               (unsigned long long)s.misses, (unsigned long long)s.entries, (unsigned long long)s.bytes, (unsigned long long)s.tuning_records);
    free(a.dir);
    return rc;
}

static void print_entry(void *user, const char *key, const char *source, const char *kernels, uint64_t bytes) {
    (void)user;
    printf("%s %8llu  %s  %s\n", key, (unsigned long long)bytes, source, kernels);
}

static int cache_list(int argc, char **argv) {
    CacheArgs a;
    int rc = cache_parse("cache list", usage_list, argc, argv, &a);
    if (rc != CLI_CONTINUE) return rc;
    rc = tile_cache_list(a.dir, print_entry, NULL) == TILE_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    free(a.dir);
    return rc;
}

static int cache_clear(int argc, char **argv) {
    CacheArgs a;
    int rc = cache_parse("cache clear", usage_clear, argc, argv, &a);
    if (rc != CLI_CONTINUE) return rc;
    rc = tile_cache_clear(a.dir, a.tuning) == TILE_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (!rc) printf("cleared %s%s\n", a.dir, a.tuning ? " (and the tuning database)" : "");
    free(a.dir);
    return rc;
}

static const CliCommand cache_commands[] = {
    {"stats", "hits and misses, entries and bytes on disk, tuning records", cache_stats},
    {"list", "every entry: key, size, source, kernels", cache_list},
    {"clear", "remove every entry (--tuning: the tuning database too)", cache_clear},
};

int cmd_cache(int argc, char **argv) {
    return cli_dispatch("cache", cache_commands, (int)(sizeof cache_commands / sizeof cache_commands[0]), argc, argv);
}

/* cli.c - the helpers every command shares (see cli.h).
 *
 * getopt_long keeps its scan in process-wide variables (optind, optarg,
 * optopt); cli_getopt is the only reader of them, restarts the scan
 * (optind = 0) on a command's first call and copies what the command needs
 * into its CliGetopt, so no command touches getopt's state. */
#include "tools/cli.h"
#include "support/outfile.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- commands ---- */
const CliCommand *cli_find_command(const CliCommand *cmds, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(cmds[i].name, name)) return &cmds[i];
    return NULL;
}

/* Levenshtein distance of two short words (a typo's distance; longer words count as far apart) */
static size_t edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b), row[64];
    if (n >= 64 || m >= 64) return SIZE_MAX;
    for (size_t j = 0; j <= m; j++) row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up, row[j] = best;
        }
    }
    return row[m];
}

/* The name a typo most likely meant: within a third of its length (at least 1 edit, at most 3), NULL otherwise. */
static const char *near_name(const char *word, const char *const *names, int n) {
    size_t limit = strlen(word) / 3, best = SIZE_MAX;
    if (limit < 1) limit = 1;
    if (limit > 3) limit = 3;
    const char *r = NULL;
    for (int i = 0; i < n; i++) {
        size_t d = edit_distance(word, names[i]);
        if (d <= limit && d < best) best = d, r = names[i];
    }
    return r;
}

const char *cli_near_command(const CliCommand *cmds, int n, const char *name) {
    const char *names[32];
    int k = 0;
    for (int i = 0; i < n && k < 32; i++) names[k++] = cmds[i].name;
    return near_name(name, names, k);
}

void cli_print_commands(FILE *f, const CliCommand *cmds, int n) {
    int w = 0;
    for (int i = 0; i < n; i++)
        if ((int)strlen(cmds[i].name) > w) w = (int)strlen(cmds[i].name);
    for (int i = 0; i < n; i++) fprintf(f, "  %-*s  %s\n", w, cmds[i].name, cmds[i].summary);
}

static void print_group_usage(FILE *f, const char *group, const CliCommand *cmds, int n) {
    fprintf(f, "usage: tile %s <subcommand> [options]\n\nsubcommands:\n", group);
    cli_print_commands(f, cmds, n);
    fprintf(f, "\nRun 'tile %s <subcommand> --help' for its options.\n", group);
}

int cli_dispatch(const char *group, const CliCommand *cmds, int n, int argc, char **argv) {
    if (argc < 2) {
        print_group_usage(stderr, group, cmds, n);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        print_group_usage(stdout, group, cmds, n);
        return CLI_EXIT_OK;
    }
    const CliCommand *c = cli_find_command(cmds, n, argv[1]);
    if (!c) {
        const char *near = cli_near_command(cmds, n, argv[1]);
        fprintf(stderr, "tile: unknown subcommand 'tile %s %s'%s%s%s\n", group, argv[1], near ? "; did you mean '" : "", near ? near : "",
                near ? "'?" : "");
        print_group_usage(stderr, group, cmds, n);
        return CLI_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}

int cli_help(const char *usage) {
    fputs(usage, stdout);
    return CLI_EXIT_OK;
}

/* The message with each word (a run without spaces) over 256 bytes cut to its first 120 and last 40 bytes
 * around "...(N bytes cut)...", as the library's diagnostics are: an argument may be 128 KiB long. */
static void put_shortened(FILE *f, const char *m) {
    enum { WORD_MAX = 256, HEAD = 120, TAIL = 40 };
    while (*m) {
        size_t n = strcspn(m, " \n");
        if (n > WORD_MAX) {
            size_t h = HEAD, t = n - TAIL;
            while (h > 0 && ((unsigned char)m[h] & 0xC0) == 0x80) h--; /* between UTF-8 characters */
            while (t > h && ((unsigned char)m[t] & 0xC0) == 0x80) t--;
            fprintf(f, "%.*s...(%zu bytes cut)...%.*s", (int)h, m, t - h, (int)(n - t), m + t);
        } else fwrite(m, 1, n, f);
        m += n;
        if (*m) fputc(*m++, f);
    }
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    fputs("tile: ", stderr);
    if (n >= 0) put_shortened(stderr, msg);
    else fputs(fmt, stderr);
    free(msg);
    fprintf(stderr, "\nRun 'tile %s --help' for usage.\n", cmd);
    return CLI_EXIT_USAGE;
}

int cli_exit_status(tile_status st) {
    switch (st) {
    case TILE_OK: return CLI_EXIT_OK;
    case TILE_ERROR_COMPILE: return CLI_EXIT_SOURCE;
    case TILE_ERROR_INVALID_VALUE:
    case TILE_ERROR_IO: return CLI_EXIT_USAGE;
    default: return CLI_EXIT_FAIL;
    }
}

bool cli_no_kernel_named(const char *d) {
    static const char head[] = "error: no kernel named '";
    if (!d || strncmp(d, head, sizeof head - 1)) return false;
    const char *nl = strchr(d, '\n');
    return !nl || !nl[1];
}

int cli_call_failed(tile_context *ctx, const char *api, tile_status st) {
    fprintf(stderr, "tile: %s failed: %s\n", api, tile_last_error(ctx));
    return st == TILE_ERROR_INVALID_VALUE ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

/* ---- options ---- */
/* The option as the user wrote it, for messages: "--name" (without "=value") or "-c". */
static void spelled(CliGetopt *g, int optopt_value) {
    const char *w = optind > 0 && optind <= g->argc ? g->argv[optind - 1] : "";
    if (!strncmp(w, "--", 2)) {
        size_t n = strcspn(w, "=");
        snprintf(g->name, sizeof g->name, "%.*s", (int)n, w);
    } else if (optopt_value > 0 && optopt_value < 128 && isprint(optopt_value))
        snprintf(g->name, sizeof g->name, "-%c", optopt_value);
    else snprintf(g->name, sizeof g->name, "%s", w);
}

/* Whether two option values are one number in two spellings ("64" and "064", "1e-3" and "0.001"): integers compared
 * as integers (past 2^53 a double would merge neighbours), anything else as doubles. */
static bool same_number(const char *a, const char *b) {
    int64_t i, j;
    if (cli_parse_i64(a, INT64_MIN, INT64_MAX, &i) && cli_parse_i64(b, INT64_MIN, INT64_MAX, &j)) return i == j;
    double x, y;
    return cli_parse_double(a, -INFINITY, INFINITY, &x) && cli_parse_double(b, -INFINITY, INFINITY, &y) && x == y;
}

static int given_twice(CliGetopt *g, const char *was, const char *v) {
    return cli_usage_error(g->cmd, "%s is given twice ('%s', then '%s')", g->name, was ? was : "", v ? v : "");
}

/* The rule for single-valued options (cli.h, CliGetopt.repeatable): 0, or a usage error when option c was given
 * before with another value.  Keyed by the code, so two spellings of one option (-o, --out) are one option.  The
 * same number spelled otherwise is let through, marked, for the command's numeric reader to confirm. */
static int once(CliGetopt *g, int c) {
    for (const int *r = g->repeatable; r && *r; r++)
        if (*r == c) return 0;
    const char *v = g->arg;
    for (int i = 0; i < g->nseen; i++)
        if (g->seen[i].code == c) {
            const char *was = g->seen[i].value;
            if ((!was && !v) || (was && v && !strcmp(was, v))) return 0;
            if (was && v && same_number(was, v)) return g->numeric_repeat = i + 1, 0;
            return given_twice(g, was, v);
        }
    int cap = (int)(sizeof g->seen / sizeof g->seen[0]);
    if (g->nseen < cap) g->seen[g->nseen].code = c, g->seen[g->nseen++].value = v; /* more options than any table has: untracked */
    return 0;
}

int cli_getopt(CliGetopt *g) {
    if (g->numeric_repeat) { /* the option returned last repeated a number, and the command did not read one */
        const char *was = g->seen[g->numeric_repeat - 1].value;
        g->numeric_repeat = 0;
        return given_twice(g, was, g->arg), '?';
    }
    char shortopts[64];
    snprintf(shortopts, sizeof shortopts, ":%s", g->shortopts ? g->shortopts : "");
    if (!g->started) optind = 0, g->started = true; /* restart: another command may have scanned before */
    opterr = 0;
    int idx = -1;
    int c = getopt_long(g->argc, g->argv, shortopts, g->longopts, &idx);
    g->arg = optarg;
    if (c == -1) {
        g->first_operand = optind;
        return -1;
    }
    if (idx >= 0) snprintf(g->name, sizeof g->name, "--%s", g->longopts[idx].name);
    else if (c != '?' && c != ':') snprintf(g->name, sizeof g->name, "-%c", c);
    if (c == '?') {
        spelled(g, optopt);
        const char *w = optind > 0 && optind <= g->argc ? g->argv[optind - 1] : "";
        if (!strncmp(w, "--", 2) && strchr(w, '=') && optopt) /* --trans-a=1: a known option that takes no value */
            return cli_usage_error(g->cmd, "%s takes no value, got '%s'", g->name, strchr(w, '=') + 1), '?';
        int matches = 0; /* --tr: the start of more than one long option (getopt_long takes a unique start) */
        size_t n = strlen(g->name) - 2;
        for (const struct option *o = g->longopts; !strncmp(g->name, "--", 2) && n && o && o->name; o++) matches += !strncmp(o->name, g->name + 2, n);
        if (matches > 1) return cli_usage_error(g->cmd, "ambiguous option %s: the start of %d options", g->name, matches), '?';
        const char *names[64], *near = NULL;
        int k = 0;
        for (const struct option *o = g->longopts; o && o->name && k < 64; o++) names[k++] = o->name;
        if (!strncmp(g->name, "--", 2)) near = near_name(g->name + 2, names, k);
        cli_usage_error(g->cmd, "unknown option %s%s%s%s", g->name, near ? "; did you mean '--" : "", near ? near : "", near ? "'?" : "");
        return '?';
    }
    if (c == ':') {
        spelled(g, optopt);
        cli_usage_error(g->cmd, "missing value for %s", g->name);
        return '?';
    }
    return once(g, c) ? '?' : c;
}

int cli_elements(const char *cmd, const char *what, int n, ...) {
    va_list ap;
    va_start(ap, n);
    unsigned __int128 prod = 1;
    bool over = false;
    for (int i = 0; i < n; i++) {
        int64_t v = va_arg(ap, int64_t);
        prod *= (unsigned __int128)(v > 0 ? v : 1);
        if (prod > ((unsigned __int128)1 << CLI_MAX_ELEMENTS_LOG2)) over = true, prod = (unsigned __int128)1 << 64; /* no wrap */
    }
    va_end(ap);
    if (!over) return 0;
    return cli_usage_error(cmd, "%s is more than 2^%d elements: too large for this command's buffers", what, CLI_MAX_ELEMENTS_LOG2);
}

int cli_i64(CliGetopt *g, int64_t lo, int64_t hi, int64_t *out) {
    g->numeric_repeat = 0; /* read as a number: a repeat of the same number in another spelling is the same value */
    const char *s = g->arg ? g->arg : "";
    if (cli_parse_i64(s, lo, hi, out)) return 0;
    int64_t v;
    if (!cli_parse_i64(s, INT64_MIN, INT64_MAX, &v)) return cli_usage_error(g->cmd, "%s expects an integer, got '%s'", g->name, s);
    if (hi == INT64_MAX) return cli_usage_error(g->cmd, "%s must be at least %lld, got %s", g->name, (long long)lo, s);
    return cli_usage_error(g->cmd, "%s must be between %lld and %lld, got %s", g->name, (long long)lo, (long long)hi, s);
}

int cli_int(CliGetopt *g, int lo, int hi, int *out) {
    int64_t v;
    int rc = cli_i64(g, lo, hi, &v);
    if (!rc) *out = (int)v;
    return rc;
}

int cli_double(CliGetopt *g, double lo, double hi, double *out) {
    g->numeric_repeat = 0; /* as cli_i64 */
    const char *s = g->arg ? g->arg : "";
    double v;
    if (cli_parse_double(s, lo, hi, out)) return 0;
    if (!cli_parse_double(s, -INFINITY, INFINITY, &v)) return cli_usage_error(g->cmd, "%s expects a number, got '%s'", g->name, s);
    return cli_usage_error(g->cmd, "%s must be between %g and %g, got %s", g->name, lo, hi, s);
}

/* tile_last_error(NULL) after a failed call fn, without the "fn: " it begins with (the command's user typed an
 * option, not the call) */
static const char *cli_error_of(const char *fn) {
    const char *m = tile_last_error(NULL);
    size_t n = strlen(fn);
    return !strncmp(m, fn, n) && m[n] == ':' && m[n + 1] == ' ' ? m + n + 2 : m;
}

/* The runtime's grammar (tile_device_check) decides; its message says what is wrong. */
int cli_device(const CliGetopt *g, const char **out) {
    if (!g->arg || tile_device_check(g->arg) != TILE_OK)
        return cli_usage_error(g->cmd, "%s: %s", g->name, g->arg ? cli_error_of("tile_device_check") : "needs a device string");
    *out = g->arg;
    return 0;
}

/* An arch name reduced to what tells targets apart, for the near match of a typo: lower case, no "sm" or
 * "compute_" prefix, no '_' (SM_80, sm80, compute_80 and 80 are all "80"). */
static void arch_key(const char *s, char *out, size_t n) {
    size_t k = 0;
    if (!strncasecmp(s, "compute_", 8)) s += 8;
    else if (!strncasecmp(s, "sm", 2)) s += 2;
    for (; *s && k + 1 < n; s++)
        if (*s != '_' && *s != ' ') out[k++] = (char)tolower((unsigned char)*s);
    out[k] = 0;
}

/* "" is the default target, as the library reads an empty arch (and tile_device_check an empty device):
 * `--arch "$ARCH"` with ARCH empty compiles as without the option. */
int cli_arch(const CliGetopt *g, const char **out) {
    if (g->arg && !*g->arg) {
        *out = NULL;
        return 0;
    }
    for (int i = 0; tile_target_name(i); i++)
        if (g->arg && !strcmp(tile_target_name(i), g->arg)) {
            *out = tile_target_name(i);
            return 0;
        }
    char names[256] = "", near[64] = "", key[32] = "";
    if (g->arg) arch_key(g->arg, key, sizeof key);
    for (int i = 0; tile_target_name(i); i++) {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", tile_target_name(i));
        /* sm_90 for sm_90a (nvcc's and Triton's name for Hopper), SM_80, sm80, 80 */
        const char *t = tile_target_name(i);
        char tk[32];
        arch_key(t, tk, sizeof tk);
        size_t n = strlen(key);
        if (n && !near[0] && (!strcmp(key, tk) || (n + 1 == strlen(tk) && !strncmp(key, tk, n) && tk[n] == 'a')))
            snprintf(near, sizeof near, "; did you mean '%s'?", t);
    }
    return cli_usage_error(g->cmd, "unknown %s '%s'%s (targets: %s)", g->name, g->arg ? g->arg : "", near, names);
}

int cli_dtype(const CliGetopt *g, const tile_dtype *allowed, int n, const char *f32_alias, tile_dtype *out) {
    const char *s = g->arg ? g->arg : "";
    if (f32_alias && !strcmp(s, f32_alias)) {
        *out = TILE_F32;
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!strcmp(tile_dtype_name(allowed[i]), s)) {
            *out = allowed[i];
            return 0;
        }
    char names[256] = "";
    for (int i = 0; i < n; i++) snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", tile_dtype_name(allowed[i]));
    if (f32_alias) snprintf(names + strlen(names), sizeof names - strlen(names), ", %s", f32_alias);
    return cli_usage_error(g->cmd, "unsupported %s '%s' (expected %s)", g->name, s, names);
}

int cli_choice(const CliGetopt *g, const char *const *names, int *out) {
    const char *s = g->arg ? g->arg : "";
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], s)) {
            *out = i;
            return 0;
        }
    char list[256] = "";
    for (int i = 0; names[i]; i++) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    return cli_usage_error(g->cmd, "unknown %s '%s' (expected %s)", g->name, s, list);
}

int cli_common_option(CliGetopt *g, int c, const char **device, int *reps, bool *json) {
    switch (c) {
    case CLI_OPT_DEVICE: return cli_device(g, device);
    case CLI_OPT_REPS:
        if (reps) return cli_int(g, 1, INT_MAX, reps);
        break;
    case CLI_OPT_JSON: *json = true; return 0;
    }
    return CLI_EXIT_USAGE;
}

bool cli_input_unreadable(const char *file) {
    struct stat st;
    const char *why = NULL;
    if (stat(file, &st)) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (access(file, R_OK)) why = strerror(errno);
    if (why) fprintf(stderr, "tile: cannot read '%s': %s\n", file, why);
    return why != NULL;
}

int cli_no_operands(const CliGetopt *g) {
    return g->first_operand < g->argc ? cli_usage_error(g->cmd, "unexpected argument '%s'", g->argv[g->first_operand]) : 0;
}

/* ---- lists ---- */
int cli_list_add(CliList *l, const char *s) {
    if (l->n + 1 >= l->cap) {
        int nc = l->cap ? l->cap * 2 : 8;
        const char **v = realloc(l->v, sizeof *v * (size_t)nc);
        if (!v) {
            fprintf(stderr, "tile: out of host memory\n");
            return CLI_EXIT_FAIL;
        }
        l->v = v, l->cap = nc;
    }
    l->v[l->n++] = s;
    l->v[l->n] = NULL;
    return 0;
}

const char *const *cli_list_items(const CliList *l) {
    static const char *const empty[] = {NULL};
    return l->n ? l->v : empty;
}

void cli_list_free(CliList *l) {
    for (int i = 0; i < l->nowned; i++) free(l->owned[i]);
    free(l->owned);
    free(l->v);
    *l = (CliList){0};
}

/* Does a -D value read as itself: `[-]` or `*`s, then a name, number or type (relu, 64, -1.5e-3, inf, f16, *i32), or a
 * string already quoted?  Any other value is a string (.cg, leaky relu) and is quoted for the define, as the Python
 * layer quotes a string constexpr (python/src/tile/__init__.py, _define_value), so `-D W=.cg` needs no shell quotes. */
static bool define_reads_bare(const char *v) {
    const char *c = v;
    if (*c == '"') {
        for (c++; *c && *c != '"'; c++)
            if (*c == '\\' && c[1]) c++;
        return *c == '"' && !c[1];
    }
    if (*c == '-') c++;
    else
        while (*c == '*') c++;
    if (!isalnum((unsigned char)*c) && *c != '_') return false;
    for (c++; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("_.+-", *c)) return false;
    return true;
}

int cli_define(const CliGetopt *g, CliList *l) {
    const char *s = g->arg ? g->arg : "";
    const char *eq = strchr(s, '=');
    if (!eq || eq == s) return cli_usage_error(g->cmd, "%s expects NAME=VALUE, got '%s'", g->name, s);
    bool ident = isalpha((unsigned char)*s) || *s == '_'; /* "-D 'B = 64'": the name "B " was no parameter of any kernel */
    for (const char *c = s + 1; ident && c < eq; c++) ident = isalnum((unsigned char)*c) || *c == '_';
    if (!ident) return cli_usage_error(g->cmd, "%s '%.*s': NAME must be an identifier (no spaces around '=': NAME=VALUE)", g->name, (int)(eq - s), s);
    for (int i = 0; i < l->n; i++) /* -D B=64 -D B=32: which was meant? (as --arg n given twice) */
        if (!strncmp(l->v[i], s, (size_t)(eq - s) + 1))
            return cli_usage_error(g->cmd, "%s %.*s is given twice ('%s', then '%s')", g->name, (int)(eq - s), s, l->v[i], s);
    if (!eq[1] || define_reads_bare(eq + 1)) return cli_list_add(l, s); /* an empty value stays an error of the define */
    size_t n = strlen(s) + 3; /* NAME="VALUE": quotes, each '"' and '\\' escaped, the NUL */
    for (const char *c = eq + 1; *c; c++) n += *c == '"' || *c == '\\';
    char *q = malloc(n), *o = q, **own = realloc(l->owned, sizeof *own * (size_t)(l->nowned + 1));
    if (own) l->owned = own;
    if (!q || !own) {
        free(q);
        fprintf(stderr, "tile: out of host memory\n");
        return CLI_EXIT_FAIL;
    }
    memcpy(o, s, (size_t)(eq + 1 - s));
    o += eq + 1 - s;
    *o++ = '"';
    for (const char *c = eq + 1; *c; c++) {
        if (*c == '"' || *c == '\\') *o++ = '\\';
        *o++ = *c;
    }
    *o++ = '"';
    *o = 0;
    l->owned[l->nowned++] = q;
    return cli_list_add(l, q);
}

/* ---- output and devices ---- */
/* The file being written beside -o's: a signal that ends the process (Ctrl-C, a file size limit) removes it
 * first, so that no PATH.tmp-PID-N is left behind.  One output at a time; unlink is async-signal-safe. */
static char *volatile pending_tmp;
static const int ending_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};

static void remove_pending(int sig) {
    char *t = pending_tmp;
    if (t) unlink(t);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void pending_set(char *tmp) {
    pending_tmp = tmp;
    for (size_t i = 0; i < sizeof ending_signals / sizeof ending_signals[0]; i++) {
        struct sigaction old, sa = {.sa_handler = remove_pending};
        sigemptyset(&sa.sa_mask);
        /* a signal the caller ignores (nohup, trap '' XFSZ) stays ignored */
        if (sigaction(ending_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(ending_signals[i], &sa, NULL);
    }
}

static bool output_failed(CliOutput *o, int e) {
    fprintf(stderr, "tile: cannot write %s: %s\n", o->path ? o->path : "standard output", strerror(e));
    return false;
}

bool cli_output_open(CliOutput *o, const char *path) {
    *o = (CliOutput){.path = path && strcmp(path, "-") ? path : NULL};
    if (!o->path) return (o->f = stdout), true;
    if (!*path) return output_failed(o, ENOENT);
    struct stat st, lst, so;
    bool exists = stat(path, &st) == 0;
    /* standard output's own file (/dev/stdout, /proc/self/fd/1): written through it, so that `-o /dev/stdout >> log`
     * appends (a file renamed over it, or reopened "wb", lost what the log held) */
    if (exists && fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st.st_dev && so.st_ino == st.st_ino) return (o->f = stdout), true;
    bool is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (is_link && exists) o->target = outfile_target(path); /* a link to a file: its target replaced, the link kept */
    else if (!is_link && (!exists || S_ISREG(st.st_mode))) o->target = strdup(path); /* a dangling link: fopen makes its target */
    if (o->target && (!exists || S_ISREG(st.st_mode))) {
        int fd = outfile_create_beside(o->target, &o->tmp);
        if (fd >= 0 && (o->f = fdopen(fd, "wb"))) return pending_set(o->tmp), true;
        int e = errno;
        if (fd >= 0) close(fd), unlink(o->tmp);
        free(o->tmp), o->tmp = NULL;
        /* a file this user may write in a folder it may not: written in place, as before */
        if (!(exists && (e == EACCES || e == EPERM) && access(o->target, W_OK) == 0)) {
            free(o->target), o->target = NULL;
            return output_failed(o, e);
        }
    }
    /* no regular file (/dev/null, a FIFO, a folder: fopen says why), a dangling link, or the fallback */
    o->f = fopen(o->target ? o->target : path, "wb");
    if (!o->f) {
        int e = errno;
        free(o->target), o->target = NULL;
        return output_failed(o, e);
    }
    return true;
}

void cli_output_discard(CliOutput *o) {
    if (o->f && o->f != stdout) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    pending_tmp = NULL;
    free(o->tmp), free(o->target);
    *o = (CliOutput){0};
}

void cli_output_write(CliOutput *o, const void *p, size_t n) {
    if (o->f && fwrite(p, 1, n, o->f) != n && !o->err) o->err = errno ? errno : EIO;
}

bool cli_output_close(CliOutput *o) {
    if (!o->f) return false;
    errno = o->err ? o->err : EIO;
    bool ok = !o->err && !ferror(o->f) && fflush(o->f) == 0;
    if (ok && o->tmp && fsync(fileno(o->f))) ok = false;
    int e = errno;
    if (o->f != stdout && fclose(o->f) && ok) ok = false, e = errno;
    o->f = NULL;
    if (ok && o->tmp && rename(o->tmp, o->target)) ok = false, e = errno;
    else if (ok && o->tmp) pending_tmp = NULL, free(o->tmp), o->tmp = NULL; /* in place: nothing to remove */
    if (!ok) output_failed(o, e);
    cli_output_discard(o);
    return ok;
}

int cli_context_open(const char *cmd, const char *device, tile_context **ctx) {
    tile_status st = tile_context_create(device, ctx);
    if (st == TILE_OK) return 0;
    if (st == TILE_ERROR_INVALID_VALUE) return cli_usage_error(cmd, "%s", cli_error_of("tile_context_create")); /* the device string's grammar */
    const char *env = getenv("TILE_DEVICE"); /* the default is TILE_DEVICE's when set: name it, not "default" */
    /* the status, then the library's reason (no driver, which ordinal...): "no such device" alone says nothing of why */
    const char *why = cli_error_of("tile_context_create");
    const char *sep = *why ? " (" : "", *end = *why ? ")" : "";
    if (device && *device) fprintf(stderr, "tile: cannot open device '%s': %s%s%s%s\n", device, tile_status_string(st), sep, why, end);
    else if (env && *env)
        fprintf(stderr, "tile: cannot open device '%s' (TILE_DEVICE): %s%s%s%s\n", env, tile_status_string(st), sep, why, end);
    else fprintf(stderr, "tile: cannot open the default device: %s%s%s%s\n", tile_status_string(st), sep, why, end);
    return CLI_EXIT_FAIL;
}

/* ---- progress ---- */
bool cli_progress_wanted(bool json) { return !json && isatty(STDERR_FILENO); }

void cli_progress(bool on, const char *fmt, ...) {
    if (!on) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

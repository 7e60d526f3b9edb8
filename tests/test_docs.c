/* test_docs.c - the docs name what the code has: facts restated in the docs checked against their one source.
 *
 * 1. docs/testing.md's table of test programs (its rows' first cells) names every tests/test_*.c, and
 *    every program it names exists.
 * 2. docs/architecture.md's "Passes, in order" (numbered items `N. `name``, and `Na. `name``) is
 *    tir_pipeline_order (lower/pipeline.c), pass for pass, and names every pass of TIR_PASSES.
 * 3. Every TILE_* environment variable the code reads (getenv("TILE_...") in C, os.environ in Python,
 *    ${TILE_...} in shell scripts) is named in README.md or a .md file of docs/, and every TILE_* name the docs
 *    write as an assignment (`TILE_X=...`, not a CMake `-DTILE_X=`) is one the code reads.
 * 1b. docs/benchmarks.md's table of programs names every C program of bench/ (built as bench/NAME) and its Python scripts, and
 *    every bench/... program it names exists.
 * 4. Every long option a `tile` command's --help prints is named in README.md or docs/, and every option the
 *    docs write after `tile <command>` on the same line (up to a closing backquote) is one its --help prints.
 * 5. bench/gpu/run.sh's header promises exit status 2 on a usage error: an option missing its value or a bad
 *    --device exits 2 at once (it looped for ever on `--device` as the last argument); so does its
 *    bench/compare_devices on an unknown --arch or a --seed that is no number; each bench program's malformed or
 *    out-of-range number exits 2 with a message naming its option.
 * 6. README.md's "Using it" command lines run as written (from a folder where kernels/ and build/ are the
 *    source's and the build's, `generate_kernel` a shell function printing a kernel, `[--opt]` given): each exits 0.
 *    Lines that need a GPU (`--device cuda`), a file the reader writes (`kernels/mine.tile`) or minutes of
 *    emulation (`tile run`, `tile tune gemm`) are left out; docs/python.md's and the .tile examples are run by
 *    test_tile.py and test_examples.
 * 7. The editor grammar's scalar types (SCALAR_TYPES in lang/tree-sitter-tile/grammar.js, and primitive_type in the
 *    src/grammar.json generated from it) are the types of DTYPES (support/dtype.h) a kernel can name: every row but
 *    void and ptr, no more.
 * Each check reports every mismatch, not only the first.  The files are read from TILE_SOURCE_DIR. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lower/passes.h"
#include "support/dtype.h"
#include "support/support.h"

static char *slurp(const char *rel) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", TILE_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    Str s = {0};
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) str_putn(&s, buf, n);
    fclose(f);
    return str_take(&s);
}

/* A set of names: a growing array, looked up linearly (a few hundred entries at most). */
typedef struct Names {
    char **v;
    int n, cap;
} Names;

static bool names_has(const Names *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) return true;
    return false;
}

static void names_add(Names *s, const char *name, size_t len) {
    char *c = strndup(name, len);
    if (names_has(s, c)) {
        free(c);
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = c;
}

static void names_free(Names *s) {
    for (int i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

static size_t ident_len(const char *p) {
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
    return n;
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* ---- 1. docs/testing.md's table ---- */
Test(docs, testing_md_lists_every_test_program) {
    Names files = {0}, listed = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests", TILE_SOURCE_DIR);
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (!strncmp(e->d_name, "test_", 5) && n > 2 && !strcmp(e->d_name + n - 2, ".c")) names_add(&files, e->d_name, n - 2);
    }
    closedir(d);
    char *doc = slurp("docs/testing.md");
    cr_assert(doc);
    /* the first cell of each table row: "| `test_a`, `test_b` | ..." */
    for (const char *line = doc; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "| `", 3)) continue;
        const char *end = strstr(line + 1, " |");
        const char *eol = strchr(line, '\n');
        if (!end || (eol && end > eol)) continue;
        for (const char *p = line + 2; p < end; p++)
            if (*p == '`' && !strncmp(p + 1, "test_", 5)) {
                size_t n = ident_len(p + 1);
                names_add(&listed, p + 1, n);
                p += n + 1;
            }
    }
    int bad = 0;
    for (int i = 0; i < files.n; i++)
        if (!names_has(&listed, files.v[i])) {
            fprintf(stderr, "docs/testing.md: the table of programs does not list tests/%s.c\n", files.v[i]);
            bad++;
        }
    for (int i = 0; i < listed.n; i++)
        if (!names_has(&files, listed.v[i])) {
            fprintf(stderr, "docs/testing.md: the table of programs lists %s, which has no tests/%s.c\n", listed.v[i], listed.v[i]);
            bad++;
        }
    cr_assert(files.n > 50 && listed.n > 50, "%d programs, %d listed", files.n, listed.n);
    cr_assert_eq(bad, 0, "%d mismatches between tests/test_*.c and docs/testing.md (above)", bad);
    free(doc);
    names_free(&files);
    names_free(&listed);
}

/* ---- 1b. docs/benchmarks.md's table ---- */
Test(docs, benchmarks_md_lists_every_bench_program) {
    Names files = {0}, listed = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/bench", TILE_SOURCE_DIR);
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (has_suffix(e->d_name, ".c")) names_add(&files, e->d_name, n - 2); /* built as build/bench/NAME */
        else if (has_suffix(e->d_name, ".py")) names_add(&files, e->d_name, n);
    }
    closedir(d);
    char *doc = slurp("docs/benchmarks.md");
    cr_assert(doc);
    for (const char *line = doc; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "| `bench/", 9)) continue;
        const char *p = line + 9, *q = p;
        while (*q && *q != '`' && *q != '\n') q++;
        if (*q == '`' && !memchr(p, '/', (size_t)(q - p))) names_add(&listed, p, (size_t)(q - p)); /* bench/gpu/... are scripts of run.sh */
    }
    int bad = 0;
    for (int i = 0; i < files.n; i++)
        if (!names_has(&listed, files.v[i])) {
            fprintf(stderr, "docs/benchmarks.md: the table of programs does not list bench/%s\n", files.v[i]);
            bad++;
        }
    for (int i = 0; i < listed.n; i++)
        if (!names_has(&files, listed.v[i])) {
            fprintf(stderr, "docs/benchmarks.md: the table of programs lists bench/%s, which bench/ does not have\n", listed.v[i]);
            bad++;
        }
    cr_assert(files.n > 10 && listed.n > 10, "%d programs, %d listed", files.n, listed.n);
    cr_assert_eq(bad, 0, "%d mismatches between bench/ and docs/benchmarks.md (above)", bad);
    free(doc);
    names_free(&files);
    names_free(&listed);
}

/* ---- 2. docs/architecture.md's pass order ---- */
Test(docs, architecture_md_pass_order_is_the_pipeline) {
    char *doc = slurp("docs/architecture.md");
    cr_assert(doc);
    const char *sec = strstr(doc, "\n## Passes, in order\n");
    cr_assert(sec, "docs/architecture.md has no '## Passes, in order' section");
    sec++;
    const char *sec_end = strstr(sec + 3, "\n## ");
    if (!sec_end) sec_end = sec + strlen(sec);
    Names order = {0};
    int nitems = 0;
    const char *items[64];
    for (const char *line = sec; line && line < sec_end; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line;
        if (!isdigit((unsigned char)*p)) continue;
        while (isdigit((unsigned char)*p)) p++;
        if (islower((unsigned char)*p)) p++;
        if (strncmp(p, ". `", 3)) continue;
        p += 3;
        size_t n = ident_len(p);
        cr_assert(n > 0 && p[n] == '`' && nitems < 64, "docs/architecture.md: a malformed pass item '%.40s'", line);
        items[nitems++] = strndup(p, n);
        names_add(&order, p, n);
    }
    int bad = 0;
    for (int i = 0; i < nitems || i < tir_pipeline_len; i++) {
        const char *doc_pass = i < nitems ? items[i] : "(nothing)", *code_pass = i < tir_pipeline_len ? tir_pipeline_order[i] : "(nothing)";
        if (strcmp(doc_pass, code_pass)) {
            fprintf(stderr, "docs/architecture.md: pass %d of the pipeline is %s, lower/pipeline.c runs %s\n", i + 1, doc_pass, code_pass);
            bad++;
        }
    }
    for (int i = 0; i < tir_npasses; i++)
        if (!names_has(&order, tir_passes[i].name)) {
            fprintf(stderr, "docs/architecture.md: no item for the pass %s of TIR_PASSES\n", tir_passes[i].name);
            bad++;
        }
    cr_assert_eq(bad, 0, "%d mismatches between docs/architecture.md's pass list and the pipeline (above)", bad);
    for (int i = 0; i < nitems; i++) free((char *)items[i]);
    names_free(&order);
    free(doc);
}

/* ---- 7. the editor grammar's scalar types ---- */

/* The quoted strings of text[from, to) ('...' or "..."), skipping a JSON member's key ("value": takes the value). */
static void quoted_names(const char *from, const char *to, Names *out, bool json) {
    for (const char *p = from; p < to; p++) {
        if (*p != '\'' && *p != '"') continue;
        const char *e = memchr(p + 1, *p, (size_t)(to - p - 1));
        if (!e) break;
        bool key = json && e[1] == ':';
        if (!key) names_add(out, p + 1, (size_t)(e - p - 1));
        p = e;
    }
}

/* Each of `have` (what `where` lists) is a dtype a kernel names, and each such dtype is in `have`. */
static int check_scalar_types(const char *where, const Names *have) {
    int bad = 0;
    Names want = {0};
    for (int t = 0; t < DT_COUNT; t++)
        if (t != DT_VOID && t != DT_PTR) names_add(&want, dtype_name((DType)t), strlen(dtype_name((DType)t)));
    for (int i = 0; i < want.n; i++)
        if (!names_has(have, want.v[i])) fprintf(stderr, "%s: no %s, a dtype of DTYPES (support/dtype.h)\n", where, want.v[i]), bad++;
    for (int i = 0; i < have->n; i++)
        if (!names_has(&want, have->v[i])) fprintf(stderr, "%s: %s is no dtype of DTYPES (support/dtype.h)\n", where, have->v[i]), bad++;
    names_free(&want);
    return bad;
}

Test(docs, editor_grammar_scalar_types_are_the_dtypes) {
    char *js = slurp("lang/tree-sitter-tile/grammar.js"), *json = slurp("lang/tree-sitter-tile/src/grammar.json");
    cr_assert(js && json);
    const char *a = strstr(js, "const SCALAR_TYPES = [");
    cr_assert(a, "grammar.js has no 'const SCALAR_TYPES = ['");
    const char *b = strstr(a, "];");
    cr_assert(b);
    Names js_types = {0}, json_types = {0};
    quoted_names(a, b, &js_types, false);
    a = strstr(json, "\"primitive_type\": {");
    cr_assert(a, "src/grammar.json has no rule primitive_type");
    b = strstr(a, "]");
    cr_assert(b);
    quoted_names(a + strlen("\"primitive_type\": {"), b, &json_types, true);
    /* the JSON's members say "type": "STRING" too: not a type name */
    Names types = {0};
    for (int i = 0; i < json_types.n; i++)
        if (strcmp(json_types.v[i], "CHOICE") && strcmp(json_types.v[i], "STRING")) names_add(&types, json_types.v[i], strlen(json_types.v[i]));
    int bad = check_scalar_types("lang/tree-sitter-tile/grammar.js SCALAR_TYPES", &js_types) +
              check_scalar_types("lang/tree-sitter-tile/src/grammar.json primitive_type (check-generated.sh --write)", &types);
    cr_assert_eq(bad, 0, "%d mismatches between the editor grammar's scalar types and DTYPES (above)", bad);
    names_free(&js_types), names_free(&json_types), names_free(&types);
    free(js), free(json);
}

/* ---- 3. environment variables ---- */
/* The TILE_* variables text reads: C's getenv("X"), Python's environ.get("X") / environ["X"], shell's $X / ${X}. */
static void scan_reads(const char *text, bool shell, Names *reads) {
    static const char *const c_forms[] = {"getenv(\"", "environ.get(\"", "environ[\""};
    for (int f = 0; f < 3; f++)
        for (const char *p = text; (p = strstr(p, c_forms[f])); p++) {
            const char *q = p + strlen(c_forms[f]);
            if (!strncmp(q, "TILE_", 5)) names_add(reads, q, ident_len(q));
        }
    if (shell)
        for (const char *p = text; (p = strchr(p, '$')); p++) {
            const char *q = p + 1 + (p[1] == '{');
            if (!strncmp(q, "TILE_", 5)) names_add(reads, q, ident_len(q));
        }
}

static void scan_tree(const char *rel, Names *reads) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", TILE_SOURCE_DIR, rel);
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "node_modules")) continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        if (!*rel && (!strncmp(e->d_name, "build", 5) || !strcmp(e->d_name, "docs"))) continue; /* build trees */
        bool shell = has_suffix(e->d_name, ".sh");
        if (e->d_type == DT_DIR) scan_tree(sub, reads);
        else if (has_suffix(e->d_name, ".c") || has_suffix(e->d_name, ".h") || has_suffix(e->d_name, ".py") || shell) {
            char *text = slurp(sub);
            if (text) scan_reads(text, shell, reads);
            free(text);
        }
    }
    closedir(d);
}

static char *all_docs(void) {
    Str s = {0};
    char *readme = slurp("README.md");
    cr_assert(readme);
    str_puts(&s, readme);
    free(readme);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/docs", TILE_SOURCE_DIR);
    DIR *d = opendir(dir);
    cr_assert(d);
    for (struct dirent *e; (e = readdir(d));)
        if (has_suffix(e->d_name, ".md")) {
            char rel[4096];
            snprintf(rel, sizeof rel, "docs/%s", e->d_name);
            char *t = slurp(rel);
            cr_assert(t, "cannot read %s", rel);
            str_puts(&s, "\n");
            str_puts(&s, t);
            free(t);
        }
    closedir(d);
    return str_take(&s);
}

Test(docs, environment_variables_read_are_documented_and_documented_ones_read) {
    Names reads = {0}, documented = {0}, assigned = {0};
    scan_tree("", &reads);
    char *docs = all_docs();
    for (const char *p = docs; (p = strstr(p, "TILE_")); p++) {
        if (p > docs && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        size_t n = ident_len(p);
        names_add(&documented, p, n);
        bool cmake = p >= docs + 2 && p[-2] == '-' && p[-1] == 'D';
        if (p[n] == '=' && !cmake) names_add(&assigned, p, n);
        p += n - 1;
    }
    int bad = 0;
    for (int i = 0; i < reads.n; i++)
        if (!names_has(&documented, reads.v[i])) {
            fprintf(stderr, "the code reads the environment variable %s, which no doc (README.md, docs/*.md) names\n", reads.v[i]);
            bad++;
        }
    for (int i = 0; i < assigned.n; i++)
        if (!names_has(&reads, assigned.v[i])) {
            fprintf(stderr, "the docs set %s=..., an environment variable that no code reads\n", assigned.v[i]);
            bad++;
        }
    cr_assert(reads.n >= 10, "only %d TILE_* variables read: the scan is broken", reads.n);
    cr_assert(names_has(&reads, "TILE_DEVICE") && names_has(&reads, "TILE_DEBUG") && names_has(&reads, "TILE_GPU_DEADLINE"),
              "the scan misses C's or shell's reads");
    cr_assert_eq(bad, 0, "%d environment variables documented and read differ (above)", bad);
    free(docs);
    names_free(&reads);
    names_free(&documented);
    names_free(&assigned);
}

/* ---- 4. the CLI's options ---- */
/* "tune" right after "tune gemm": an option the docs give `tile tune` may be either's */
static const char *const cli_commands[] = {"compile", "run gemm", "run attention", "run decode", "run moe", "run norm", "run act",
                                           "run sample", "run spec", "run rope", "run layer", "tune gemm", "tune", "aot",
                                           "cache stats", "cache list", "cache clear"};
enum { NCMD = sizeof cli_commands / sizeof *cli_commands };

static char *cli_help_text(const char *cmd) {
    char line[1024];
    snprintf(line, sizeof line, "'%s' %s --help 2>&1", TILE_CLI, cmd);
    FILE *p = popen(line, "r");
    cr_assert(p, "%s", line);
    Str s = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) str_putn(&s, buf, n);
    cr_assert_eq(pclose(p), 0, "%s", line);
    return str_take(&s);
}

static bool is_opt_char(char c) { return isalnum((unsigned char)c) || c == '-'; }

/* Whether text names option opt ("--name" or "-x") as a whole word. */
static bool names_option(const char *text, const char *opt, size_t n) {
    for (const char *p = text; (p = strstr(p, opt)); p++) {
        bool starts = p == text || !(is_opt_char(p[-1]) || p[-1] == '_');
        if (starts && !is_opt_char(p[n]) && p[n] != '_') return true;
    }
    return false;
}

Test(docs, cli_options_documented_and_documented_ones_exist) {
    char *help[NCMD];
    for (int i = 0; i < NCMD; i++) help[i] = cli_help_text(cli_commands[i]);
    char *docs = all_docs();
    int bad = 0, nopts = 0, nused = 0;
    /* every long option of every --help is in the docs */
    for (int i = 0; i < NCMD; i++) {
        Names seen = {0};
        for (const char *p = help[i]; (p = strstr(p, "--")); p++) {
            if (p > help[i] && (is_opt_char(p[-1]) || p[-1] == '_')) continue;
            size_t n = 2;
            while (is_opt_char(p[n])) n++;
            if (n == 2) continue;
            char *opt = strndup(p, n);
            nopts++;
            if (!names_has(&seen, opt) && !names_option(docs, opt, n)) {
                fprintf(stderr, "tile %s --help prints %s, which neither README.md nor docs/ names\n", cli_commands[i], opt);
                bad++;
            }
            names_add(&seen, opt, n);
            free(opt);
            p += n - 1;
        }
        names_free(&seen);
    }
    /* every option the docs give a command is one its --help prints */
    for (const char *line = docs; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        for (const char *t = line; (t = strstr(t, "tile ")) && t < eol; t++) {
            if (t > line && (isalnum((unsigned char)t[-1]) || t[-1] == '_' || t[-1] == '.' || t[-1] == '-')) continue;
            int c = -1;
            size_t clen = 0;
            for (int i = 0; i < NCMD; i++) { /* the longest command that matches: "tune gemm" before "tune" */
                size_t n = strlen(cli_commands[i]);
                if (!strncmp(t + 5, cli_commands[i], n) && !isalnum((unsigned char)t[5 + n]) && n > clen) c = i, clen = n;
            }
            if (c < 0) continue;
            const char *end = memchr(t, '`', (size_t)(eol - t));
            if (!end) end = eol;
            for (const char *p = t + 5 + clen; p < end; p++) {
                if (*p != '-' || !(p[-1] == ' ' || p[-1] == '[' || p[-1] == '(')) continue;
                size_t n = 1;
                while (p + n < end && is_opt_char(p[n])) n++;
                if (n < 2 || isdigit((unsigned char)p[1]) || (p[1] != '-' && n != 2)) continue; /* "-1", "-x" only */
                char *opt = strndup(p, n);
                nused++;
                bool ok = names_option(help[c], opt, n);
                if (!ok && !strcmp(cli_commands[c], "tune")) ok = names_option(help[c - 1], opt, n); /* "tune" may be "tune gemm" */
                if (!ok) {
                    fprintf(stderr, "the docs give `tile %s` the option %s, which its --help does not print: %.*s\n", cli_commands[c], opt,
                            (int)(eol - line < 160 ? eol - line : 160), line);
                    bad++;
                }
                free(opt);
                p += n - 1;
            }
        }
    }
    cr_assert(nopts > 100 && nused > 100, "%d options in --help, %d in the docs: the scan is broken", nopts, nused);
    cr_assert_eq(bad, 0, "%d options differ between the CLI's --help and the docs (above)", bad);
    for (int i = 0; i < NCMD; i++) free(help[i]);
    free(docs);
}

/* ---- 6. README.md's command lines ---- */
Test(docs, readme_command_lines_run, .timeout = 120) {
    char *readme = slurp("README.md");
    cr_assert(readme);
    const char *sec = strstr(readme, "\n## Using it\n");
    cr_assert(sec, "README.md has no '## Using it' section");
    const char *sec_end = strstr(sec + 1, "\n## ");
    char dir[] = "/tmp/tile_docs_XXXXXX";
    cr_assert(mkdtemp(dir));
    char cli_dir[4096], cmd[8192];
    snprintf(cli_dir, sizeof cli_dir, "%s", TILE_CLI);
    *strrchr(cli_dir, '/') = 0;
    snprintf(cmd, sizeof cmd, "ln -s '%s/kernels' '%s/kernels' && ln -s '%s' '%s/build'", TILE_SOURCE_DIR, dir, cli_dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    int ran = 0, bad = 0;
    for (const char *line = sec; line && (!sec_end || line < sec_end); line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "    build/tile ", 15)) continue;
        const char *eol = strchr(line, '\n');
        char text[2048];
        size_t n = 0;
        for (const char *p = line + 4; p < eol && n + 1 < sizeof text; p++)
            if (*p != '[' && *p != ']') text[n++] = *p; /* "[--json]": the option given */
        text[n] = 0;
        char *comment = strstr(text, " #"); /* the shell would drop it too; it may hold a quote */
        if (comment) *comment = 0;
        if (strstr(text, "--device cuda") || strstr(text, "mine.tile") || !strncmp(text, "build/tile run ", 15) ||
            !strncmp(text, "build/tile tune gemm", 20))
            continue;
        cr_assert(!strchr(text, '\''), "README.md: a command line with a single quote (it goes inside bash -c '...'): %s", text);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && TILE_CACHE_DIR='%s/cache' bash -c 'generate_kernel() { cat kernels/add.tile; }; %s' "
                 ">/dev/null 2>'%s/err'",
                 dir, dir, text, dir);
        int st = system(cmd);
        ran++;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            snprintf(cmd, sizeof cmd, "%s/err", dir);
            FILE *f = fopen(cmd, "r");
            char err[512] = "";
            if (f) err[fread(err, 1, sizeof err - 1, f)] = 0, fclose(f);
            fprintf(stderr, "README.md: '%s' exits %d: %s\n", text, WIFEXITED(st) ? WEXITSTATUS(st) : -1, err);
            bad++;
        }
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(readme);
    cr_log_info("%d command lines of README.md run", ran);
    cr_assert(ran >= 8, "only %d command lines of README.md's 'Using it' run", ran);
    cr_assert_eq(bad, 0, "%d of README.md's command lines fail (above)", bad);
}

/* ---- 5. bench/gpu/run.sh's usage errors ---- */
Test(docs, gpu_run_sh_usage_errors_exit_2) {
    /* each runs nothing (the arguments are parsed before any step); `timeout` turns a hang into 124 */
    static const char *const bad_args[] = {"--device",         "--log-dir",          "--build-dir",       "--device emu --log-dir",
                                           "--device ''",      "--device cuda:",     "--device cuda:x",   "--device cuda:1x",
                                           "--device emu:sm_90a", "--bogus"};
    /* a deadline that is no number of seconds (it stopped the script with bash's arithmetic error, status 1 or 127) */
    static const char *const bad_deadlines[] = {"400s", "abc"};
    int bad = 0;
    for (size_t i = 0; i < sizeof bad_args / sizeof *bad_args; i++) {
        char line[4096];
        snprintf(line, sizeof line, "timeout 20 bash '%s/bench/gpu/run.sh' %s >/dev/null 2>&1", TILE_SOURCE_DIR, bad_args[i]);
        int st = system(line);
        int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (rc != 2) {
            fprintf(stderr, "bench/gpu/run.sh %s: exit status %d, expected 2 (a usage error)\n", bad_args[i], rc);
            bad++;
        }
    }
    for (size_t i = 0; i < sizeof bad_deadlines / sizeof *bad_deadlines; i++) {
        char line[4096];
        snprintf(line, sizeof line, "TILE_GPU_DEADLINE=%s timeout 20 bash '%s/bench/gpu/run.sh' --device emu --log-dir /dev/null/x >/dev/null 2>&1",
                 bad_deadlines[i], TILE_SOURCE_DIR);
        int st = system(line);
        int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (rc != 2) {
            fprintf(stderr, "TILE_GPU_DEADLINE=%s bench/gpu/run.sh: exit status %d, expected 2 (a usage error)\n", bad_deadlines[i], rc);
            bad++;
        }
    }
    /* the step it runs first, bench/compare_devices: an unknown --arch failed every kernel (status 1), --seed x was 0 */
    /* and its step 9, bench/emu_speed: --only with a kernel it does not run measured nothing, status 0 */
    static const char *const bad_compare[] = {"compare_devices --quiet --arch sm_70", "compare_devices --arch --quiet",
                                              "compare_devices --quiet --seed x", "compare_devices --quiet --seed 12abc",
                                              "compare_devices --quiet --seed -3", "compare_devices --quiet --device bogus",
                                              "emu_speed --single --only vad",
                                              /* numbers read with atoi/atof: "5x" was 5, "x" 0 (clamped to 1), 65 reps 64 */
                                              "attention_gpu --samples 5x", "attention_gpu --max-seconds x", "moe_gpu --check-tokens 0",
                                              "gemm_gpu --samples 0", "launch_overhead emu --iters 1e3", "cache --reps -1",
                                              "compile_time --reps 65", "emu_speed --reps 5x"};
    for (size_t i = 0; i < sizeof bad_compare / sizeof *bad_compare; i++) {
        char line[4096];
        int prog = (int)strcspn(bad_compare[i], " "); /* the program, then its arguments */
        snprintf(line, sizeof line, "timeout 20 '%s/bench/%.*s'%s >/dev/null 2>&1", TILE_BINARY_DIR, prog, bad_compare[i], bad_compare[i] + prog);
        int st = system(line);
        int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (rc != 2) {
            fprintf(stderr, "bench/%s: exit status %d, expected 2 (a usage error)\n", bad_compare[i], rc);
            bad++;
        }
    }
    /* numbers read with atoi/strtol: "5x" was 5, "x" 0 (a size skipped, a grid of BM=0 tiles divided by zero), a
     * list's empty item skipped; now each exits 2 with a message that names the option */
    static const char *const bad_numbers[][2] = {
        {"gemm_gpu --sizes 128,5x", "gemm_gpu: --sizes"}, {"gemm_gpu --sizes 128,,256", "gemm_gpu: --sizes"},
        {"gemm_gpu --sizes 0", "gemm_gpu: --sizes"},      {"gemm_gpu -D BM=x", "gemm_gpu: -D BM"},
        {"gemm_gpu -D BN=64k", "gemm_gpu: -D BN"},         {"moe_gpu --tokens 64x", "moe_gpu: --tokens"},
        /* the layouts and dtypes run.sh's step 6a times are tile_gemm's (--api): without it they were ignored */
        {"gemm_gpu --trans-a --sizes 64", "gemm_gpu: --trans-a"}, {"gemm_gpu --api --dtype tf16", "gemm_gpu: --dtype"},
        {"emu_load 5x", "emu_load: N"},                   {"emu_load 3", "emu_load: N"},
        {"foreign_ptx matmul /dev/null --kernel k --m 5x", "foreign_ptx: --m"},
        {"foreign_ptx attention /dev/null --kernel k --seq-k x", "foreign_ptx: --seq-k"},
        {"foreign_ptx matmul /dev/null --kernel k --warps 64", "foreign_ptx: --warps"}};
    for (size_t i = 0; i < sizeof bad_numbers / sizeof *bad_numbers; i++) {
        char line[4096], err[1024];
        int prog = (int)strcspn(bad_numbers[i][0], " ");
        snprintf(line, sizeof line, "timeout 20 '%s/bench/%.*s'%s 2>&1 >/dev/null", TILE_BINARY_DIR, prog, bad_numbers[i][0],
                 bad_numbers[i][0] + prog);
        FILE *p = popen(line, "r");
        size_t n = p ? fread(err, 1, sizeof err - 1, p) : 0;
        err[n] = 0;
        int st = p ? pclose(p) : -1;
        int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (rc != 2 || !strstr(err, bad_numbers[i][1])) {
            fprintf(stderr, "bench/%s: exit status %d and \"%s\", expected 2 and a message naming '%s'\n", bad_numbers[i][0], rc,
                    err, bad_numbers[i][1]);
            bad++;
        }
    }
    cr_assert_eq(bad, 0, "%d usage errors of bench/gpu/run.sh did not exit 2 (above)", bad);
}

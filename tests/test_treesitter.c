/* test_treesitter.c - the tree-sitter grammar (lang/tree-sitter-tile) against
 * the reference and against the compiler's parser.
 *
 *   1. the generated parser has an ABI that libtree-sitter accepts, and every
 *      query file compiles against it;
 *   2. every .tile file of the repository, and every ```tile example of
 *      docs/, parses with no ERROR or MISSING node;
 *   3. the corpus (test/corpus/NAME.txt, tree-sitter's format: a `===` header
 *      with the case's name, the source, `---`, the expected S-expression)
 *      gives the expected trees, and the compiler parses every corpus
 *      source without a syntax error;
 *   4. for every .tile file, the compiler (lang_list_decls) and the grammar
 *      see the same top-level declarations: kind, name and the name's
 *      line:column;
 *   5. broken sources give their first ERROR/MISSING node at a known place,
 *      and the compiler reports its first error on a known line;
 *   6. the highlight queries give the captures docs/editors.md describes,
 *      resolved as Neovim (last pattern wins) and Helix (first wins) do.
 * Built only when pkg-config finds tree-sitter (tests/CMakeLists.txt). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tree_sitter/api.h>

#include "lang/lang.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif
#define GRAMMAR_DIR TILE_SOURCE_DIR "/lang/tree-sitter-tile"

const TSLanguage *tree_sitter_tile(void);

/* ---- helpers ---- */

static char *slurp(const char *path, size_t *len) {
    size_t n = 0;
    char *s = read_file(path, &n);
    if (len) *len = n;
    return s;
}

static TSTree *ts_parse(const char *text, size_t len) {
    TSParser *p = ts_parser_new();
    cr_assert(ts_parser_set_language(p, tree_sitter_tile()), "libtree-sitter refused the tile grammar");
    TSTree *t = ts_parser_parse_string(p, NULL, text, (uint32_t)len);
    ts_parser_delete(p);
    return t;
}

/* The first ERROR or MISSING node in document order, or a null node. */
static TSNode first_error(TSNode n) {
    if (ts_node_is_missing(n) || !strcmp(ts_node_type(n), "ERROR")) return n;
    if (ts_node_has_error(n)) {
        uint32_t k = ts_node_child_count(n);
        for (uint32_t i = 0; i < k; i++) {
            TSNode e = first_error(ts_node_child(n, i));
            if (!ts_node_is_null(e)) return e;
        }
    }
    TSNode none = {0};
    return none;
}

/* "" when `text` parses cleanly, else "line:col: ERROR|MISSING ..." (malloc'd). */
static char *parse_problem(const char *text, size_t len) {
    TSTree *t = ts_parse(text, len);
    TSNode e = first_error(ts_tree_root_node(t));
    char *msg;
    if (ts_node_is_null(e)) {
        msg = strdup("");
    } else {
        TSPoint pt = ts_node_start_point(e);
        Str s = {0};
        str_printf(&s, "%u:%u: %s %s", pt.row + 1, pt.column + 1, ts_node_is_missing(e) ? "MISSING" : "ERROR",
                   ts_node_is_missing(e) ? ts_node_type(e) : "node");
        msg = str_take(&s);
    }
    ts_tree_delete(t);
    return msg;
}

typedef struct PathList {
    char **v;
    int n, cap;
} PathList;

static void paths_push(PathList *l, char *p) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = realloc(l->v, sizeof(char *) * (size_t)l->cap);
    }
    l->v[l->n++] = p;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && !strcmp(s + n - k, suf);
}

/* Every file under `dir` ending in `suffix`, skipping hidden entries and
 * CMake build trees (folders with a CMakeCache.txt). */
static void find_files(const char *dir, const char *suffix, PathList *out) {
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/CMakeCache.txt", dir);
    struct stat st;
    if (!stat(probe, &st)) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) find_files(path, suffix, out);
        else if (S_ISREG(st.st_mode) && has_suffix(e->d_name, suffix))
            paths_push(out, strdup(path));
    }
    closedir(d);
}

static PathList repo_files(const char *suffix) {
    PathList l = {0};
    find_files(TILE_SOURCE_DIR, suffix, &l);
    if (l.n) qsort(l.v, (size_t)l.n, sizeof(char *), cmp_str);
    return l;
}

static void paths_free(PathList *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

static const char *rel(const char *path) {
    size_t n = strlen(TILE_SOURCE_DIR);
    return !strncmp(path, TILE_SOURCE_DIR, n) && path[n] == '/' ? path + n + 1 : path;
}

/* ---- 1. ABI and queries ---- */

Test(treesitter, abi_accepted_by_runtime) {
    uint32_t v = ts_language_version(tree_sitter_tile());
    cr_assert(v >= TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION && v <= TREE_SITTER_LANGUAGE_VERSION,
              "parser ABI %u outside the runtime's %d..%d", v, TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
              TREE_SITTER_LANGUAGE_VERSION);
    cr_assert_eq(v, 14, "the committed parser must be ABI 14 (Debian's libtree-sitter 0.20 takes 13 and 14)");
}

static const char *const query_error_names[] = {"none", "syntax", "node type", "field", "capture", "structure", "language"};

static TSQuery *load_query(const char *path) {
    size_t len = 0;
    char *src = slurp(path, &len);
    cr_assert(src, "cannot read %s", path);
    uint32_t off = 0;
    TSQueryError err = TSQueryErrorNone;
    TSQuery *q = ts_query_new(tree_sitter_tile(), src, (uint32_t)len, &off, &err);
    if (!q) {
        uint32_t line = 1;
        for (uint32_t i = 0; i < off && i < len; i++) line += src[i] == '\n';
        cr_assert_fail("%s:%u: query %s error near '%.20s'", rel(path), line,
                       (unsigned)err < 7 ? query_error_names[err] : "?", src + off);
    }
    free(src);
    return q;
}

Test(treesitter, queries_compile) {
    static const char *const files[] = {
        "highlights.scm", "locals.scm", "folds.scm", "indents.scm", "tags.scm",
        "helix/highlights.scm", "helix/locals.scm", "helix/indents.scm", "helix/textobjects.scm",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[4096];
        snprintf(path, sizeof path, GRAMMAR_DIR "/queries/%s", files[i]);
        ts_query_delete(load_query(path));
    }
}

/* ---- 2. everything in the repository parses ---- */

Test(treesitter, every_tile_file_parses) {
    PathList l = repo_files(".tile");
    cr_assert(l.n >= 10, "found only %d .tile files under %s", l.n, TILE_SOURCE_DIR);
    int bad = 0;
    for (int i = 0; i < l.n; i++) {
        size_t len;
        char *text = slurp(l.v[i], &len);
        cr_assert(text, "cannot read %s", l.v[i]);
        char *p = parse_problem(text, len);
        if (*p) {
            cr_log_error("%s:%s", rel(l.v[i]), p);
            bad++;
        }
        free(p);
        free(text);
    }
    cr_assert_eq(bad, 0, "%d .tile file(s) do not parse with the tree-sitter grammar (see above)", bad);
    paths_free(&l);
}

/* A ```tile block that is not a whole file (a few statements) is parsed as
 * the body of a function.  A fence may be indented (a block inside a list
 * item): its indentation is taken off every line of the block. */
Test(treesitter, doc_examples_parse) {
    PathList l = repo_files(".md");
    int blocks = 0, bad = 0;
    for (int i = 0; i < l.n; i++) {
        char *text = slurp(l.v[i], NULL);
        if (!text) continue;
        int line = 1;
        for (char *p = text; *p;) {
            char *eol = strchr(p, '\n');
            size_t n = eol ? (size_t)(eol - p) : strlen(p);
            size_t ind = strspn(p, " ");
            if (n == ind + 7 && !strncmp(p + ind, "```tile", 7)) {
                char *body = eol ? eol + 1 : p + n;
                char *end = body;
                while (*end) { /* the closing fence: a line of only ``` after spaces */
                    size_t e = strspn(end, " ");
                    if (!strncmp(end + e, "```", 3) && (end[e + 3] == '\n' || !end[e + 3])) break;
                    char *nl = strchr(end, '\n');
                    end = nl ? nl + 1 : end + strlen(end);
                }
                if (!*end) break;
                Str dd = {0}; /* the block without the fence's indentation */
                for (char *q = body; q < end;) {
                    char *nl = strchr(q, '\n');
                    size_t sp = strspn(q, " ");
                    q += sp < ind ? sp : ind;
                    str_putn(&dd, q, (size_t)(nl + 1 - q));
                    q = nl + 1;
                }
                char *dedented = dd.buf ? str_take(&dd) : strdup("");
                body = dedented;
                size_t blen = strlen(dedented);
                char *pr = parse_problem(body, blen);
                if (*pr) {
                    Str w = {0};
                    str_puts(&w, "fn example() {\n");
                    str_putn(&w, body, blen);
                    str_puts(&w, "}\n");
                    char *wrapped = str_take(&w);
                    char *pw = parse_problem(wrapped, strlen(wrapped));
                    if (*pw) {
                        cr_log_error("%s: the ```tile block at line %d: %s", rel(l.v[i]), line, pr);
                        bad++;
                    }
                    free(pw);
                    free(wrapped);
                }
                free(pr);
                free(dedented);
                blocks++;
            }
            line++;
            p = eol ? eol + 1 : p + n;
        }
        free(text);
    }
    paths_free(&l);
    cr_assert(blocks >= 2, "found only %d ```tile blocks in docs", blocks);
    cr_assert_eq(bad, 0, "%d documentation example(s) do not parse", bad);
}

/* ---- 3. the corpus ---- */

/* Whitespace-insensitive form of an S-expression: single spaces between
 * atoms, none inside parentheses.  With strip_fields, `name: ` prefixes go. */
static char *sexp_normalize(const char *s, bool strip_fields) {
    Str o = {0};
    bool space = false;
    while (*s) {
        if (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') {
            space = true;
            s++;
            continue;
        }
        if (strip_fields && (*s == '_' || (*s >= 'a' && *s <= 'z'))) {
            const char *q = s;
            while (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')) q++;
            if (*q == ':') {
                s = q + 1;
                continue;
            }
        }
        if (space && *s != ')' && o.len && o.buf[o.len - 1] != '(') str_putc(&o, ' ');
        space = false;
        str_putc(&o, *s++);
    }
    return o.buf ? str_take(&o) : strdup("");
}

static bool sexp_has_fields(const char *s) {
    for (; *s; s++)
        if (*s == ':' && s[1] == ' ') return true;
    return false;
}

static bool is_rule(const char *line, size_t n, char c, size_t min) {
    if (n < min) return false;
    for (size_t i = 0; i < n; i++)
        if (line[i] != c) return false;
    return true;
}

typedef struct CorpusCase {
    char *name, *input, *expected;
} CorpusCase;

/* Split a corpus file in place into cases: "===\nNAME\n===\nINPUT\n---\nEXPECTED". */
static int corpus_read(char *text, CorpusCase *cases, int max) {
    int n = 0;
    enum { SEEK, NAME, INPUT, EXPECTED } state = SEEK;
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *next = eol ? eol + 1 : p + len;
        bool header = is_rule(p, len, '=', 3);
        if (header && (state == SEEK || state == EXPECTED)) {
            *p = 0; /* ends the previous case's tree */
            state = NAME;
        } else if (state == NAME && header) {
            cases[n - 1].input = next;
            state = INPUT;
        } else if (state == NAME) {
            cr_assert(n < max, "too many corpus cases in one file");
            p[len] = 0;
            cases[n++] = (CorpusCase){.name = p};
        } else if (state == INPUT && is_rule(p, len, '-', 3)) {
            *p = 0; /* ends the input */
            cases[n - 1].expected = next;
            state = EXPECTED;
        }
        p = next;
    }
    return n;
}

Test(treesitter, corpus) {
    PathList l = {0};
    find_files(GRAMMAR_DIR "/test/corpus", ".txt", &l);
    cr_assert(l.n >= 3, "corpus files missing under " GRAMMAR_DIR "/test/corpus");
    qsort(l.v, (size_t)l.n, sizeof(char *), cmp_str);
    int total = 0, bad = 0;
    for (int f = 0; f < l.n; f++) {
        char *text = slurp(l.v[f], NULL);
        cr_assert(text, "cannot read %s", l.v[f]);
        CorpusCase cases[128];
        int n = corpus_read(text, cases, 128);
        for (int i = 0; i < n; i++) {
            CorpusCase *c = &cases[i];
            cr_assert(c->input && c->expected, "%s: case '%s' lacks its '---' or its tree", rel(l.v[f]), c->name);
            TSTree *t = ts_parse(c->input, strlen(c->input));
            char *got = ts_node_string(ts_tree_root_node(t));
            bool fields = sexp_has_fields(c->expected);
            char *g = sexp_normalize(got, !fields), *e = sexp_normalize(c->expected, false);
            if (strcmp(g, e)) {
                cr_log_error("%s: case '%s':\n  expected %s\n  got      %s", rel(l.v[f]), c->name, e, g);
                bad++;
            }
            /* The compiler's parser must accept every corpus source too. */
            Arena *a = arena_new();
            SrcFile src = {.name = c->name, .text = c->input, .len = strlen(c->input)};
            Diag d;
            diag_init(&d);
            LangDecl *decls;
            lang_list_decls(a, &src, &d, &decls);
            if (d.nerrors) {
                Str s = {0};
                diag_render(&d, &s);
                cr_log_error("%s: case '%s': the compiler rejects it:\n%s", rel(l.v[f]), c->name, s.buf);
                str_free(&s);
                bad++;
            }
            diag_free(&d);
            arena_free(a);
            free(g);
            free(e);
            free(got);
            ts_tree_delete(t);
            total++;
        }
        free(text);
    }
    paths_free(&l);
    cr_assert(total >= 30, "only %d corpus cases", total);
    cr_assert_eq(bad, 0, "%d of %d corpus cases failed (see above)", bad, total);
}

/* ---- 4. the two parsers agree on top-level declarations ---- */

static const char *const decl_kind_names[] = {"import", "const", "fn", "kernel"};

/* Decode an import string the way the reference says: \" and \\. */
static char *string_value(const char *text, TSNode n) {
    uint32_t s = ts_node_start_byte(n) + 1, e = ts_node_end_byte(n) - 1;
    Str o = {0};
    for (uint32_t i = s; i < e; i++) {
        if (text[i] == '\\' && i + 1 < e) i++;
        str_putc(&o, text[i]);
    }
    return o.buf ? str_take(&o) : strdup("");
}

/* The grammar's outline of a file, one "kind name line:col" per line. */
static char *ts_outline(const char *text, size_t len) {
    TSTree *t = ts_parse(text, len);
    TSNode root = ts_tree_root_node(t);
    Str o = {0};
    uint32_t k = ts_node_named_child_count(root);
    for (uint32_t i = 0; i < k; i++) {
        TSNode d = ts_node_named_child(root, i);
        const char *type = ts_node_type(d);
        const char *kind = !strcmp(type, "import_declaration")    ? "import"
                           : !strcmp(type, "const_declaration")   ? "const"
                           : !strcmp(type, "function_definition") ? "fn"
                           : !strcmp(type, "kernel_definition")   ? "kernel"
                                                                  : NULL;
        if (!kind) continue; /* comments */
        const char *field = kind[0] == 'i' ? "path" : "name";
        TSNode name = ts_node_child_by_field_name(d, field, (uint32_t)strlen(field));
        cr_assert(!ts_node_is_null(name), "%s without a name", type);
        TSPoint pt = ts_node_start_point(name);
        char *v = kind[0] == 'i' ? string_value(text, name)
                                 : strndup(text + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name));
        str_printf(&o, "%s %s %u:%u\n", kind, v, pt.row + 1, pt.column + 1);
        free(v);
    }
    ts_tree_delete(t);
    return o.buf ? str_take(&o) : strdup("");
}

/* The compiler's outline of a file, in the same form. */
static char *compiler_outline(const char *path, const char *text, size_t len) {
    Arena *a = arena_new();
    SrcFile src = {.name = path, .text = text, .len = len};
    Diag d;
    diag_init(&d);
    LangDecl *decls;
    int n = lang_list_decls(a, &src, &d, &decls);
    cr_assert_eq(d.nerrors, 0, "%s: the compiler reports syntax errors", rel(path));
    Str o = {0};
    for (int i = 0; i < n; i++)
        str_printf(&o, "%s %s %u:%u\n", decl_kind_names[decls[i].kind], decls[i].name, decls[i].loc.line, decls[i].loc.col);
    diag_free(&d);
    arena_free(a);
    return o.buf ? str_take(&o) : strdup("");
}

Test(treesitter, decls_agree_with_compiler) {
    PathList l = repo_files(".tile");
    int kernels = 0;
    for (int i = 0; i < l.n; i++) {
        size_t len;
        char *text = slurp(l.v[i], &len);
        char *a = compiler_outline(l.v[i], text, len), *b = ts_outline(text, len);
        cr_expect_str_eq(b, a, "%s: tree-sitter's declarations\n%s  differ from the compiler's\n%s", rel(l.v[i]), b, a);
        for (char *p = a; (p = strstr(p, "kernel ")); p++) kernels++;
        free(a);
        free(b);
        free(text);
    }
    paths_free(&l);
    cr_assert(kernels >= 7, "only %d kernels compared", kernels);
}

/* ---- 5. broken sources ---- */

typedef struct Broken {
    const char *what, *src;
    const char *ts_at; /* first ERROR/MISSING node, "line:col: KIND ..." */
    unsigned cc_line;  /* the compiler's first error */
} Broken;

static const Broken broken[] = {
    {"missing ';' after let", "fn f() {\n    let a = 1\n    let b = 2;\n}\n", "2:14: MISSING ;", 2}, /* both at the end of line 2 */
    {"unclosed parenthesis", "kernel k() {\n    let a = (1 + 2;\n    store(a);\n}\n", "2:19: MISSING )", 2},
    {"call on a cast", "fn f(x) {\n    return x as f16 (1);\n}\n", "2:12: ERROR node", 2},
    {"let without a name", "fn f() {\n    let = 3;\n}\n", "2:5: ERROR node", 2},
    {"stray '}' between declarations", "kernel k() {}\n}\nfn g() {}\n", "2:1: ERROR node", 2},
    {"for without 'in'", "fn f() {\n    for i range(4) {}\n}\n", "2:5: ERROR node", 2},
    {"import of a name, not a string", "const A = 1;\nimport math;\n", "2:1: ERROR node", 2},
    /* An index and a type may be a name: the runtime inserts the first token
     * (in symbol order, the word token first) after which the parse goes on. */
    {"an empty index", "fn f(x) {\n    let y = x[];\n}\n", "2:15: MISSING identifier", 2},
    {"pointer without a pointee", "fn f(p: *) {}\n", "1:10: MISSING identifier", 1},
    {"'+ =' is not an operator", "fn f() {\n    x + = 1;\n}\n", "2:9: ERROR node", 2},
    {"unclosed block", "fn f() {\n    let a = 1;\n", "2:15: MISSING }", 3},
    {"statement at top level", "const A = 1;\nlet b = 2;\n", "2:1: ERROR node", 2},
    /* only IDENT "[" expr "]" is a target (a tuple's element); the compiler says "cannot assign to an element or slice" at '=' */
    {"assignment to an element of an element", "fn f(t) {\n    t[0][1] = 2;\n}\n", "2:13: ERROR node", 2},
    /* '_' only between digits, as in Python (the compiler: "invalid integer literal '1__0'" at the literal) */
    {"doubled digit separator", "fn f() {\n    let a = 1__0;\n}\n", "2:13: ERROR node", 2},
    {"separator before a decimal point", "fn f() {\n    let a = 1_.5;\n}\n", "2:13: ERROR node", 2},
    {"assignment to a two-index element", "fn f(t) {\n    t[0, 1] += 2;\n}\n", "2:14: ERROR node", 2}, /* "t[0, 1] +" is an expression so far */
};

Test(treesitter, broken_sources_error_in_place) {
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        const Broken *b = &broken[i];
        char *p = parse_problem(b->src, strlen(b->src));
        cr_expect_str_eq(p, b->ts_at, "%s: tree-sitter's first error is at '%s', expected '%s'", b->what, p, b->ts_at);
        free(p);
        Arena *a = arena_new();
        SrcFile src = {.name = "broken.tile", .text = b->src, .len = strlen(b->src)};
        Diag d;
        diag_init(&d);
        LangDecl *decls;
        lang_list_decls(a, &src, &d, &decls);
        cr_expect(d.nerrors > 0, "%s: the compiler accepts it", b->what);
        if (d.nerrors)
            cr_expect_eq(d.msgs[0].loc.line, b->cc_line, "%s: the compiler's first error is on line %u, expected %u", b->what,
                         d.msgs[0].loc.line, b->cc_line);
        diag_free(&d);
        arena_free(a);
    }
}

/* ---- 6. highlighting ---- */

typedef struct Capture {
    uint32_t start, end, pattern;
    const char *name;
} Capture;

/* Do the predicates of the match hold?  #match? (POSIX ERE) and #any-of?
 * are evaluated; others (#set!) are properties and hold. */
static bool predicates_hold(TSQuery *q, const TSQueryMatch *m, const char *text) {
    uint32_t nsteps;
    const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(q, m->pattern_index, &nsteps);
    for (uint32_t i = 0; i < nsteps;) {
        uint32_t j = i;
        while (st[j].type != TSQueryPredicateStepTypeDone) j++;
        uint32_t len;
        const char *op = ts_query_string_value_for_id(q, st[i].value_id, &len);
        if (j - i >= 3 && st[i + 1].type == TSQueryPredicateStepTypeCapture) {
            char *node_text = NULL;
            for (uint16_t c = 0; c < m->capture_count; c++)
                if (m->captures[c].index == st[i + 1].value_id) {
                    TSNode n = m->captures[c].node;
                    node_text = strndup(text + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
                }
            bool ok = true;
            if (node_text && !strcmp(op, "match?")) {
                regex_t re;
                cr_assert_eq(regcomp(&re, ts_query_string_value_for_id(q, st[i + 2].value_id, &len), REG_EXTENDED | REG_NOSUB), 0);
                ok = regexec(&re, node_text, 0, NULL, 0) == 0;
                regfree(&re);
            } else if (node_text && !strcmp(op, "any-of?")) {
                ok = false;
                for (uint32_t k = i + 2; k < j; k++) ok |= !strcmp(node_text, ts_query_string_value_for_id(q, st[k].value_id, &len));
            }
            free(node_text);
            if (!ok) return false;
        }
        i = j + 1;
    }
    return true;
}

static bool is_word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The capture that highlights the token spelled `needle` (its `nth`
 * occurrence as a whole token): the last matching pattern with Neovim's
 * rule, the first with Helix's. */
static char *highlight_of(const char *text, const char *needle, int nth, const char *query_file, bool last_wins) {
    char path[4096];
    snprintf(path, sizeof path, GRAMMAR_DIR "/queries/%s", query_file);
    TSQuery *q = load_query(path);
    TSTree *t = ts_parse(text, strlen(text));
    size_t nl = strlen(needle);
    const char *at = text;
    for (int k = 0;; at++) {
        at = strstr(at, needle);
        cr_assert(at, "'%s' occurs fewer than %d times", needle, nth + 1);
        bool word = (at == text || !is_word_char(at[-1])) && !is_word_char(at[nl]);
        if (!word && is_word_char(needle[0])) continue;
        if (k++ == nth) break;
    }
    uint32_t start = (uint32_t)(at - text), end = start + (uint32_t)nl;
    TSQueryCursor *cur = ts_query_cursor_new();
    ts_query_cursor_exec(cur, q, ts_tree_root_node(t));
    TSQueryMatch m;
    const char *best = NULL;
    uint32_t best_pattern = 0;
    while (ts_query_cursor_next_match(cur, &m)) {
        if (!predicates_hold(q, &m, text)) continue;
        for (uint16_t c = 0; c < m.capture_count; c++) {
            TSNode n = m.captures[c].node;
            if (ts_node_start_byte(n) != start || ts_node_end_byte(n) != end) continue;
            uint32_t len;
            const char *name = ts_query_capture_name_for_id(q, m.captures[c].index, &len);
            if (!strcmp(name, "spell")) continue;
            bool better = !best || (last_wins ? m.pattern_index >= best_pattern : m.pattern_index < best_pattern);
            if (better) best = name, best_pattern = m.pattern_index;
        }
    }
    char *r = best ? strdup(best) : strdup("(none)");
    ts_query_cursor_delete(cur);
    ts_tree_delete(t);
    ts_query_delete(q);
    return r;
}

static const char highlight_src[] =
    "import \"math.tile\";\n"
    "const EPS: f32 = 1e-5;\n"
    "// sums\n"
    "fn twice(x, const K) { if K > 1 { return x * 2.0; } else { return x; } }\n"
    "@num_warps(4)\n"
    "kernel add(x: *f32, out: *f16, n: i32, const BLOCK: i32 = 1024) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let a = load(x + offs, mask=offs < n, other=0.0);\n"
    "    for i in range(0, 4) { a += twice(a, 2)[:, None]; }\n"
    "    store(out + offs, a as f16, true);\n"
    "}\n"
    "fn g(t) { while t is not None { if t { break; } continue; } }\n"
    "fn h(b = None) { let s = \"relu\"; return s; }\n";

typedef struct Expect {
    const char *token;
    int nth;
    const char *neovim, *helix;
} Expect;

static const Expect highlight_expect[] = {
    {"import", 0, "keyword.import", "keyword.control.import"},
    {"\"math.tile\"", 0, "string.special.path", "string"},
    {"const", 0, "keyword", "keyword.storage.modifier"},
    {"EPS", 0, "constant", "constant"},
    {"f32", 0, "type.builtin", "type.builtin"},
    {"1e-5", 0, "number.float", "constant.numeric.float"},
    {"// sums", 0, "comment", "comment"},
    {"fn", 0, "keyword.function", "keyword.function"},
    {"twice", 0, "function", "function"},
    {"x", 0, "variable.parameter", "variable.parameter"},
    {"K", 0, "constant", "constant"},
    {"if", 0, "keyword.conditional", "keyword.control.conditional"},
    {"else", 0, "keyword.conditional", "keyword.control.conditional"},
    {"return", 0, "keyword.return", "keyword.control.return"},
    {"@", 0, "attribute", "attribute"},
    {"num_warps", 0, "attribute", "attribute"},
    {"kernel", 0, "keyword.function", "keyword.function"},
    {"add", 0, "function", "function"},
    {"*", 1, "type.builtin", "type.builtin"},
    {"BLOCK", 0, "constant", "constant"},
    {"BLOCK", 1, "constant", "constant"},
    {"1024", 0, "number", "constant.numeric.integer"},
    {"let", 0, "keyword", "keyword"},
    {"offs", 0, "variable", "variable"},
    {"program_id", 0, "function.builtin", "function.builtin"},
    {"load", 0, "function.builtin", "function.builtin"},
    {"mask", 0, "variable.parameter", "variable.parameter"},
    {"<", 0, "operator", "operator"},
    {"for", 0, "keyword.repeat", "keyword.control.repeat"},
    {"in", 0, "keyword.repeat", "keyword.control.repeat"},
    {"range", 0, "keyword.repeat", "keyword.control.repeat"},
    {"+=", 0, "operator", "operator"},
    {"twice", 1, "function.call", "function"},
    {"None", 0, "constant.builtin", "constant.builtin"},
    {"as", 0, "keyword.operator", "keyword.operator"},
    {"while", 0, "keyword.repeat", "keyword.control.repeat"},
    {"is", 0, "keyword.operator", "keyword.operator"},
    {"not", 0, "keyword.operator", "keyword.operator"},
    {"break", 0, "keyword.repeat", "keyword.control.repeat"},
    {"continue", 0, "keyword.repeat", "keyword.control.repeat"},
    {"true", 0, "boolean", "constant.builtin.boolean"},
    {";", 0, "punctuation.delimiter", "punctuation.delimiter"},
    {"{", 0, "punctuation.bracket", "punctuation.bracket"},
    {"None", 2, "constant.builtin", "constant.builtin"}, /* a parameter's default: a value, not only an index */
    {"\"relu\"", 0, "string", "string"},                  /* a string const */
};

Test(treesitter, highlights_as_documented) {
    char *p = parse_problem(highlight_src, strlen(highlight_src));
    cr_assert_str_eq(p, "", "the highlighting sample does not parse: %s", p);
    free(p);
    for (size_t i = 0; i < sizeof highlight_expect / sizeof *highlight_expect; i++) {
        const Expect *e = &highlight_expect[i];
        char *nv = highlight_of(highlight_src, e->token, e->nth, "highlights.scm", true);
        char *hx = highlight_of(highlight_src, e->token, e->nth, "helix/highlights.scm", false);
        cr_expect_str_eq(nv, e->neovim, "Neovim: '%s' (#%d) is @%s, expected @%s", e->token, e->nth, nv, e->neovim);
        cr_expect_str_eq(hx, e->helix, "Helix: '%s' (#%d) is @%s, expected @%s", e->token, e->nth, hx, e->helix);
        free(nv);
        free(hx);
    }
}

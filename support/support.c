/* support.c - arena, strings, diagnostics.  See support.h. */
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Noreturn void tile_unreachable_at(const char *file, int line, const char *msg) {
    fprintf(stderr, "tile: internal error at %s:%d: %s\n", file, line, msg ? msg : "unreachable");
    abort();
}

/* ---- out of memory: the thread's innermost recovery point, else abort ---- */
static _Thread_local OomScope *oom_top;

void oom_push(OomScope *s) {
    s->prev = oom_top;
    oom_top = s;
}

void oom_pop(OomScope *s) {
    if (oom_top == s) oom_top = s->prev;
}

_Noreturn void out_of_memory(void) {
    OomScope *s = oom_top;
    if (s) longjmp(s->env, 1);
    tile_unreachable_at(__FILE__, __LINE__, "out of memory");
}

/* ---- arena: a list of chunks, bump allocation ---- */
struct ArenaChunk {
    ArenaChunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
};

Arena *arena_new(void) {
    Arena *a = calloc(1, sizeof *a);
    if (!a) out_of_memory();
    return a;
}

void arena_free(Arena *a) {
    if (!a) return;
    for (ArenaChunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *arena_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    ArenaChunk *c = a->head;
    if (!c || c->used + n > c->cap) {
        size_t cap = n > 64 * 1024 ? n : 64 * 1024;
        c = malloc(sizeof(ArenaChunk) + cap);
        if (!c) out_of_memory();
        c->cap = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used_total += n;
    memset(p, 0, n);
    return p;
}

void *arena_grow(Arena *a, void *old, size_t old_n, size_t new_n) {
    void *p = arena_alloc(a, new_n);
    if (old && old_n) memcpy(p, old, old_n < new_n ? old_n : new_n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

const char *str_article(const char *noun) {
    while (*noun == '\'' || *noun == '`' || *noun == '"') noun++;
    char c = (char)(*noun | 0x20);
    if (noun[0] && noun[1] >= '0' && noun[1] <= '9') /* i32, f16, u8, s8: the letter's name */
        return c && strchr("aefhilmnorsx", c) ? "an" : "a";
    return c && strchr("aeio", c) ? "an" : "a"; /* a word: "an index", "a tuple" ("u" words vary: "a u..." is kept) */
}

/* ---- numbers in the C locale ---- */
/* LC_NUMERIC "C", made once and kept (freed by nobody: one per process); NULL when the host cannot make it */
static locale_t c_numeric(void) {
    static _Atomic(locale_t) made;
    locale_t l = atomic_load_explicit(&made, memory_order_acquire);
    if (l) return l;
    locale_t n = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0), expect = (locale_t)0;
    if (!n) return (locale_t)0;
    if (!atomic_compare_exchange_strong_explicit(&made, &expect, n, memory_order_acq_rel, memory_order_acquire)) {
        freelocale(n); /* another thread made it first */
        return expect;
    }
    return n;
}

double c_strtod(const char *s, char **end) {
    locale_t l = c_numeric();
    return l ? strtod_l(s, end, l) : strtod(s, end);
}

void *c_numeric_push(void) {
    locale_t l = c_numeric();
    return l ? (void *)uselocale(l) : NULL;
}

void c_numeric_pop(void *before) {
    if (before) uselocale((locale_t)before);
}

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    void *loc = c_numeric_push();
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    c_numeric_pop(loc);
    va_end(ap2);
    return p;
}

/* A double as Python's repr writes it: the fewest significant digits (up to 17) that read back as v, so a
 * literal 2.7 is "2.7", not "2.7000000000000002"; in %g's form otherwise, and positional up to 10^17 as %.17g
 * was ("3", "10000000000", "2.5e-08", "1e+300", "inf", "nan"). */
char *arena_double(Arena *a, double v) {
    char buf[48];
    int p = 1;
    void *loc = c_numeric_push();
    for (; p < 17; p++) { /* p significant digits */
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        if (v != v || v - v != 0 || c_strtod(buf, NULL) == v) break;
    }
    const char *e = strchr(buf, 'e');
    int exp10 = e && v != 0 && v - v == 0 ? atoi(e + 1) : 0;
    snprintf(buf, sizeof buf, "%.*g", exp10 >= p && exp10 < 17 ? exp10 + 1 : p, v); /* %g: positional while exp10 < precision */
    c_numeric_pop(loc);
    return arena_strdup(a, buf);
}

/* ---- Str ---- */
static void str_reserve(Str *s, size_t extra) {
    if (s->len + extra + 1 <= s->cap) return;
    size_t cap = s->cap ? s->cap * 2 : 256;
    while (cap < s->len + extra + 1) cap *= 2;
    char *b = realloc(s->buf, cap);
    if (!b) out_of_memory();
    s->buf = b;
    s->cap = cap;
}

void str_putn(Str *s, const char *t, size_t n) {
    str_reserve(s, n);
    memcpy(s->buf + s->len, t, n);
    s->len += n;
    s->buf[s->len] = 0;
}
void str_putc(Str *s, char c) { str_putn(s, &c, 1); }
void str_puts(Str *s, const char *t) { str_putn(s, t, strlen(t)); }

void str_vprintf(Str *s, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    void *loc = c_numeric_push();
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) { /* EOVERFLOW: more than INT_MAX bytes; nothing is written (n was added to len) */
        c_numeric_pop(loc);
        va_end(ap2);
        return;
    }
    str_reserve(s, (size_t)n);
    vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap2);
    c_numeric_pop(loc);
    va_end(ap2);
    s->len += (size_t)n;
}

void str_printf(Str *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(s, fmt, ap);
    va_end(ap);
}

void str_free(Str *s) {
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

char *str_take(Str *s) {
    char *b = s->buf;
    if (!b) {
        b = malloc(1);
        if (!b) out_of_memory();
        b[0] = 0;
    }
    s->buf = NULL;
    s->len = s->cap = 0;
    return b;
}

/* ---- diagnostics ---- */
void diag_init(Diag *d) { memset(d, 0, sizeof *d); }

void diag_free(Diag *d) {
    for (int i = 0; i < d->n; i++) free(d->msgs[i].msg);
    free(d->msgs);
    memset(d, 0, sizeof *d);
}

/* A diagnostic names what it is about ('%s' of a name, a -D value, a string, a path), and that may be as long as
 * the input: a word (a run without spaces) over DIAG_WORD_MAX bytes keeps its first DIAG_WORD_HEAD and last
 * DIAG_WORD_TAIL bytes around "...(N bytes cut)...", and a message over DIAG_MSG_MAX bytes (a list of names)
 * ends after that many with "...(N bytes cut)": a 1 MB -D name gives a message of a few hundred bytes.  Cuts
 * fall between UTF-8 characters. */
enum { DIAG_WORD_MAX = 256, DIAG_WORD_HEAD = 120, DIAG_WORD_TAIL = 40, DIAG_MSG_MAX = 16384 };

static size_t utf8_back(const char *s, size_t i) { /* i moved back to the start of its character */
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    return i;
}

static void diag_cut_words(Str *out, const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j] != ' ' && s[j] != '\n') j++;
        if (j == i) {
            str_putc(out, s[i++]);
            continue;
        }
        if (j - i > DIAG_WORD_MAX) {
            size_t h = utf8_back(s, i + DIAG_WORD_HEAD), t = utf8_back(s, j - DIAG_WORD_TAIL);
            if (h < i) h = i; /* a word of continuation bytes alone (diag_shorten makes none) */
            if (t < h) t = h;
            str_putn(out, s + i, h - i);
            str_printf(out, "...(%zu bytes cut)...", t - h);
            str_putn(out, s + t, j - t);
        } else str_putn(out, s + i, j - i);
        i = j;
    }
}

size_t utf8_char_len(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    if (!n) return 0;
    if (u[0] < 0x80) return 1;
    size_t len = u[0] >= 0xC2 && u[0] <= 0xDF ? 2 : u[0] >= 0xE0 && u[0] <= 0xEF ? 3 : u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : 0;
    if (!len || len > n) return 0;
    unsigned v = u[0] & (0xFFu >> (len + 1));
    for (size_t i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (u[i] & 0x3Fu);
    }
    static const unsigned least[] = {0, 0, 0x80, 0x800, 0x10000};
    return v < least[len] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF ? 0 : len;
}

/* msg with each byte that is not part of a UTF-8 character (a name or string of the source, a path, that is not
 * UTF-8 text) made a '?', so every message is valid UTF-8 (Python's str of a diagnostic, a JSON report), and each
 * control character written as a string escape (\n, \t, \r, \xHH), so a message is one line whatever a string
 * of the source held (static_assert's message, a keyword's value): `file:line:col: error: ...` stays one line. */
static void utf8_sanitize(Str *out, const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = utf8_char_len(s + i, n - i);
        if (k == 1 && (c < 0x20 || c == 0x7f)) {
            if (c == '\n') str_puts(out, "\\n");
            else if (c == '\t') str_puts(out, "\\t");
            else if (c == '\r') str_puts(out, "\\r");
            else str_printf(out, "\\x%02x", c);
            i++;
        } else if (k) str_putn(out, s + i, k), i += k;
        else str_putc(out, '?'), i++;
    }
}

char *diag_shorten(const char *msg) {
    Str v = {0}, w = {0};
    utf8_sanitize(&v, msg, strlen(msg));
    diag_cut_words(&w, v.buf ? v.buf : "", v.len);
    str_free(&v);
    if (w.len > DIAG_MSG_MAX) {
        size_t keep = utf8_back(w.buf, DIAG_MSG_MAX), cut = w.len - keep;
        w.len = keep;
        str_printf(&w, "...(%zu bytes cut)", cut);
    }
    return str_take(&w);
}

void diag_vadd(Diag *d, DiagLevel lvl, Loc loc, const char *fmt, va_list ap) {
    int limit = d->max_errors ? d->max_errors : 50;
    if (lvl == DIAG_ERROR) d->nerrors++;
    if (d->n >= limit) return;
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        DiagMsg *m = realloc(d->msgs, sizeof(DiagMsg) * (size_t)d->cap);
        if (!m) out_of_memory();
        d->msgs = m;
    }
    Str s = {0};
    str_vprintf(&s, fmt, ap);
    char *msg = diag_shorten(s.buf ? s.buf : "");
    str_free(&s);
    /* an error said again at the same place (a -D value checked for each kernel of the file, a definition seen
     * from two uses) is kept once, with the notes of its first report; unlocated ones may be of different things */
    if (lvl != DIAG_NOTE) d->dropping = false;
    if (lvl == DIAG_ERROR)
        for (int i = 0; i < d->n && !d->dropping; i++)
            d->dropping = loc.file && d->msgs[i].level == DIAG_ERROR && d->msgs[i].loc.file == loc.file && d->msgs[i].loc.line == loc.line &&
                          d->msgs[i].loc.col == loc.col && !strcmp(d->msgs[i].msg, msg);
    if (d->dropping) {
        free(msg);
        return;
    }
    d->msgs[d->n++] = (DiagMsg){lvl, loc, msg};
}

void diag_truncate(Diag *d, int n, int nerrors) {
    while (d->n > n) free(d->msgs[--d->n].msg);
    d->nerrors = nerrors;
    d->dropping = false;
}

#define DIAG_FN(name, lvl)                                   \
    void name(Diag *d, Loc loc, const char *fmt, ...) {      \
        va_list ap;                                          \
        va_start(ap, fmt);                                   \
        diag_vadd(d, lvl, loc, fmt, ap);                     \
        va_end(ap);                                          \
    }
DIAG_FN(diag_error, DIAG_ERROR)
DIAG_FN(diag_warning, DIAG_WARNING)
DIAG_FN(diag_note, DIAG_NOTE)

void diag_note_reports_since(Diag *d, int from, Loc loc, const char *fmt, ...) {
    int count = 0;
    for (int i = from; i < d->n; i++) count += d->msgs[i].level != DIAG_NOTE;
    if (!count) return;
    va_list ap;
    va_start(ap, fmt);
    Str s = {0};
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    char *msg = diag_shorten(s.buf ? s.buf : "");
    str_free(&s);
    DiagMsg *out = malloc(sizeof(DiagMsg) * (size_t)(d->n - from + count));
    if (!out) out_of_memory();
    int w = 0;
    for (int i = from; i < d->n;) { /* a message, the notes after it, then the new note when it is an error or warning */
        bool err = d->msgs[i].level != DIAG_NOTE;
        out[w++] = d->msgs[i++];
        while (i < d->n && d->msgs[i].level == DIAG_NOTE) out[w++] = d->msgs[i++];
        if (err) {
            char *m = strdup(msg);
            if (!m) out_of_memory();
            out[w++] = (DiagMsg){DIAG_NOTE, loc, m};
        }
    }
    free(msg);
    if (from + w > d->cap) {
        DiagMsg *m = realloc(d->msgs, sizeof(DiagMsg) * (size_t)(from + w));
        if (!m) out_of_memory();
        d->msgs = m, d->cap = from + w;
    }
    memcpy(d->msgs + from, out, sizeof(DiagMsg) * (size_t)w);
    d->n = from + w;
    free(out);
}

static const char *level_name[] = {"error", "warning", "note"};

void diag_render_one(const DiagMsg *m, Str *out) {
    const SrcFile *f = m->loc.file;
    if (!f) {
        str_printf(out, "%s: %s\n", level_name[m->level], m->msg);
        return;
    }
    char *name = diag_shorten(f->name ? f->name : "<input>"); /* "<-D NAME>" of a long -D name */
    str_printf(out, "%s:%u:%u: %s: %s\n", name, m->loc.line, m->loc.col, level_name[m->level], m->msg);
    free(name);
    /* find the line */
    const char *p = f->text, *end = f->text + f->len;
    for (uint32_t l = 1; l < m->loc.line && p < end; p++)
        if (src_line_end(p, end)) l++;
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r') e++; /* a "\r\n" line shows without its "\r" */
    /* a long line shows DIAG_LINE_WIDTH bytes around the column, "..." where it is cut */
    enum { DIAG_LINE_WIDTH = 160 };
    uint32_t col = m->loc.col ? m->loc.col - 1 : 0, len = (uint32_t)(e - p), from = 0, lead = 0;
    if (len > DIAG_LINE_WIDTH) {
        from = col > DIAG_LINE_WIDTH / 2 ? col - DIAG_LINE_WIDTH / 2 : 0;
        if (from > len - DIAG_LINE_WIDTH) from = len - DIAG_LINE_WIDTH;
        e = p + from + DIAG_LINE_WIDTH;
    }
    str_puts(out, "  ");
    if (from) str_puts(out, "..."), lead = 3;
    /* a tab prints as a space, a control byte and a byte that is not part of a UTF-8 character (a cut line's
     * ends, a file that is not UTF-8 text) as '?': one cell each, so the caret stays aligned and the text valid */
    for (const char *q = p + from; q < e;) {
        unsigned char c = (unsigned char)*q;
        size_t k = utf8_char_len(q, (size_t)(e - q));
        if (k > 1) str_putn(out, q, k), q += k;
        else str_putc(out, c == '\t' ? ' ' : (!k || c < 0x20 || c == 0x7f) ? '?' : (char)c), q++;
    }
    if (p + len > e) str_puts(out, "...");
    str_puts(out, "\n  ");
    for (uint32_t i = 0; i < lead; i++) str_putc(out, ' ');
    /* one space a character before the column (columns count bytes: a UTF-8 character takes one cell) */
    const char *caret = p + (m->loc.col ? m->loc.col - 1 : 0);
    if (caret > e) caret = e;
    for (const char *q = p + from; q < caret;) {
        size_t k = utf8_char_len(q, (size_t)(e - q));
        q += k ? k : 1;
        str_putc(out, ' ');
    }
    str_puts(out, "^\n");
}

/* One error or warning with the notes after it, rendered as a unit. */
typedef struct DiagGroup {
    int first, end;  /* msgs[first .. end) */
    int file;        /* order of the file's first group (unlocated messages count as one file) */
    uint32_t line, col;
} DiagGroup;

static int diag_group_cmp(const void *pa, const void *pb) {
    const DiagGroup *a = pa, *b = pb;
    if (a->file != b->file) return a->file < b->file ? -1 : 1;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if (a->col != b->col) return a->col < b->col ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first; /* stable: as reported */
}

/* Messages in source order: the lexer reports the whole file before the parser and the checks after it report
 * anything, so the groups (an error or warning and its notes, which stay right after it, wherever they point)
 * are sorted by line and column within each file, files in the order their first message came (the unlocated
 * groups, in the order reported, count as one file). */
void diag_render(const Diag *d, Str *out) {
    DiagGroup *g = malloc(sizeof *g * (size_t)(d->n + 1));
    const SrcFile **files = malloc(sizeof *files * (size_t)(d->n + 1));
    if (!g || !files) out_of_memory();
    int ng = 0, nfiles = 0;
    for (int i = 0; i < d->n; i++) {
        const DiagMsg *m = &d->msgs[i];
        if (m->level == DIAG_NOTE && ng) {
            g[ng - 1].end = i + 1;
            continue;
        }
        int f = 0;
        while (f < nfiles && files[f] != m->loc.file) f++;
        if (f == nfiles) files[nfiles++] = m->loc.file;
        g[ng++] = (DiagGroup){i, i + 1, f, m->loc.file ? m->loc.line : 0, m->loc.file ? m->loc.col : 0};
    }
    qsort(g, (size_t)ng, sizeof *g, diag_group_cmp);
    for (int k = 0; k < ng; k++)
        for (int i = g[k].first; i < g[k].end; i++) diag_render_one(&d->msgs[i], out);
    free(g);
    free(files);
    int limit = d->max_errors ? d->max_errors : 50;
    if (d->nerrors > limit) str_printf(out, "(%d more errors not shown)\n", d->nerrors - limit);
}

char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    Str s = {0};
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) str_putn(&s, buf, n);
    int err = ferror(f);
    fclose(f);
    if (err) {
        str_free(&s);
        errno = EIO;
        return NULL;
    }
    if (len) *len = s.len;
    return str_take(&s);
}

char *read_source(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : st.st_size > SOURCE_MAX_BYTES ? EFBIG : 0;
    if (e) {
        close(fd);
        errno = e;
        return NULL;
    }
    /* the file may grow while it is read: never more than the cap */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf), close(fd);
            errno = e;
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n == cap) {
            if (cap > SOURCE_MAX_BYTES) {
                free(buf), close(fd);
                errno = EFBIG;
                return NULL;
            }
            size_t ncap = cap * 2 > (size_t)SOURCE_MAX_BYTES + 1 ? (size_t)SOURCE_MAX_BYTES + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf), close(fd);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb, cap = ncap;
        }
    }
    close(fd);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

const char *source_error(int err) {
    switch (err) {
    case EINVAL: return "not a regular file";
    case EFBIG: return "larger than 16 MiB";
    default: return strerror(err);
    }
}

double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

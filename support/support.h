/* support.h - arena allocation, growable strings, source files and diagnostics.
 *
 * Every compilation owns one Arena; everything the front end and the passes
 * allocate lives there and is freed by arena_free() in one call.  Diagnostics
 * are collected in a Diag (never printed from library code directly) and
 * rendered as `file:line:col: error: message`, the source line, and a caret. */
#ifndef TILE_SUPPORT_H
#define TILE_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Internal invariant broken: a bug in tile itself, never caused by user input. */
_Noreturn void tile_unreachable_at(const char *file, int line, const char *msg);
#define unreachable(msg) tile_unreachable_at(__FILE__, __LINE__, (msg))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Out of memory.  A caller that can give up cleanly (the compile driver,
 * around the front end and the Tile IR passes) sets a recovery point for
 * its thread:
 *     OomScope oom;
 *     if (setjmp(oom.env)) { oom_pop(&oom); ...give up: TILE_ERROR_OUT_OF_MEMORY... }
 *     oom_push(&oom);
 *     ...work...
 *     oom_pop(&oom);
 * and out_of_memory() inside the work jumps back there.  Elsewhere it
 * aborts, as an internal error would.  The work allocates from an arena the
 * caller frees, so jumping out leaks at most what was in flight. */
#include <setjmp.h>
typedef struct OomScope {
    jmp_buf env;
    struct OomScope *prev;
} OomScope;
void oom_push(OomScope *s);
void oom_pop(OomScope *s);
_Noreturn void out_of_memory(void);


/* ---- arena ---- */
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;
    size_t used_total;
} Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t n);          /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *arena_double(Arena *a, double v); /* as Python's repr: the shortest digits that read back as v */
void *arena_grow(Arena *a, void *old, size_t old_n, size_t new_n);
#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* ---- hashing: FNV-1a of n bytes, started from 2166136261 ^ seed (the open-addressing tables of the
 * compiler's, the Tile IR reader's and the emulator's names) ---- */
static inline uint32_t hash_fnv1a(const void *p, size_t n, uint32_t seed) {
    const unsigned char *s = (const unsigned char *)p;
    uint32_t h = 2166136261u ^ seed;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

/* ---- numbers as text in the C locale: a '.' decimal point whatever LC_NUMERIC the host program set (a C++ engine
 * that called setlocale(LC_ALL, "") under de_DE would otherwise have "1.5" refused by the lexer and PTX reader and
 * print tuning records and Tile IR with "1,5").  arena_printf and str_printf format in it; c_strtod reads in it;
 * c_numeric_push/pop put it around another printf (the thread's locale only) ---- */
double c_strtod(const char *s, char **end);
void *c_numeric_push(void);       /* the thread's locale before (NULL: unchanged) */
void c_numeric_pop(void *before);

/* ---- growable string (heap) ---- */
typedef struct Str {
    char *buf;
    size_t len, cap;
} Str;
void str_putc(Str *s, char c);
void str_puts(Str *s, const char *t);
void str_putn(Str *s, const char *t, size_t n);
void str_printf(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void str_vprintf(Str *s, const char *fmt, va_list ap);
void str_free(Str *s);
char *str_take(Str *s); /* returns malloc'd NUL-terminated buffer, resets s */
/* The English article for a message's noun, "a" or "an" by how it is read: a type name letter by letter ("an i32",
 * "an f16", "a u8", "a bf16"), a word as written ("a tuple", "an index"); a leading quote is skipped ("an 'f32'") */
const char *str_article(const char *noun);

/* ---- sources and locations ---- */
typedef struct SrcFile {
    const char *name;
    const char *text;
    size_t len;
} SrcFile;

/* A line ends at "\n", "\r\n" or a lone "\r" (old Mac files): true at the
 * byte that ends one, the "\n" of a "\r\n". */
static inline bool src_line_end(const char *p, const char *end) {
    return *p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n'));
}

typedef struct Loc {
    const SrcFile *file; /* NULL: no location */
    uint32_t line, col;  /* 1-based */
} Loc;

/* ---- diagnostics ---- */
typedef enum DiagLevel { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct DiagMsg {
    DiagLevel level;
    Loc loc;
    char *msg; /* malloc'd */
} DiagMsg;

typedef struct Diag {
    DiagMsg *msgs;
    int n, cap;
    int nerrors;
    int nspelled;   /* of them, another language's spelling read as the form here (Triton's `tl.exp` as `exp`): the
                     * front end checks names and types when these are all the errors */
    int max_errors; /* stop collecting after this many (0: 50) */
    bool dropping;  /* the last error repeated an earlier one (its text at its place): its notes are dropped too */
} Diag;

void diag_init(Diag *d);
void diag_free(Diag *d);
void diag_error(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_vadd(Diag *d, DiagLevel lvl, Loc loc, const char *fmt, va_list ap);
/* Take back what was said since d had n messages and nerrors errors (a parse tried and taken back). */
void diag_truncate(Diag *d, int n, int nerrors);
/* A note at loc after each error and warning of msgs[from..n), after its own notes (an inlined function's call site
 * under every error and warning of its body, not only the last error's). */
void diag_note_reports_since(Diag *d, int from, Loc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* msg (malloc'd) with its words over 256 bytes cut to their ends, and cut after 16384 bytes, each cut marked
 * "...(N bytes cut)...": what diag_vadd keeps of a message, so a name as long as the input stays readable. */
char *diag_shorten(const char *msg);
/* The length of the UTF-8 character at s (of the n bytes there), or 0 where the bytes are not one: a stray
 * continuation byte, a cut or overlong sequence, a surrogate (U+D800..U+DFFF), past U+10FFFF.  An ASCII byte is 1. */
size_t utf8_char_len(const char *s, size_t n);
/* Render every message: "file:line:col: error: msg\n  source line\n  ^\n", in source order: each error or
 * warning with its notes after it, by line and column within a file (the lexer's errors come before the
 * parser's in the Diag, so they are sorted here, at the one place diagnostics become text). */
void diag_render(const Diag *d, Str *out);
void diag_render_one(const DiagMsg *m, Str *out);

/* Seconds on the monotonic clock (for stage timings). */
double now_seconds(void);

/* Read a whole file; returns malloc'd buffer or NULL (errno set). */
char *read_file(const char *path, size_t *len);
/* Read a .tile source: a regular file (never waits on a FIFO or device) of at
 * most SOURCE_MAX_BYTES; NULL with errno ENOENT/EACCES/..., EINVAL when it is
 * not a regular file, EFBIG when it is larger.  source_error() says it in words. */
enum { SOURCE_MAX_BYTES = 16 << 20 };
char *read_source(const char *path, size_t *len);
const char *source_error(int err);

#endif

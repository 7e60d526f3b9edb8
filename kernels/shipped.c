/* shipped.c - the plumbing the shipped kernel families share (shipped.h).
 *
 * The variant table: one per context, an rt attachment holding (key,
 * kernel) pairs, the key being "<file>:<variant key>".  shipped_kernel:
 *   1. looks the key up with the context's lock held: a hit is the kernel;
 *   2. on a miss, loads kernels/<file> with the variant's options through
 *      jit_load_file_locked (memory cache, disk cache, compiler) and takes
 *      the kernel from the module (tile_module_get_kernel takes the lock
 *      itself, so it is released in between);
 *   3. takes the lock again and adds the pair, unless another thread added
 *      the same key meanwhile: then that kernel is the answer and this
 *      load's reference is given back.  The table's references are never
 *      given back: the modules go with the context, so a kernel in the
 *      table stays valid as long as the context.
 * The table is a list searched linearly: a process uses a few dozen
 * variants, and a string compare per entry costs less than the stat() of
 * the source files that a load through the memory cache makes. */
#include "kernels/shipped.h"
#include "jit/jit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *shipped_source_path(const char *file, char *buf, size_t n) { return rt_data_path("kernels", file, buf, n); }

/* ---- variants ---- */
ShippedVariant shipped_variant(const char *kernel) { return (ShippedVariant){.kernel = kernel}; }

void shipped_variant_free(ShippedVariant *v) {
    arena_free(v->arena);
    *v = shipped_variant(v->kernel);
}

static Arena *arena_of(ShippedVariant *v) { return v->arena ? v->arena : (v->arena = arena_new()); }

/* Append s (in v's arena) to a NULL-terminated list. */
static void list_add(ShippedVariant *v, const char ***list, int *n, int *cap, const char *s) {
    if (*n + 1 >= *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        *list = arena_grow(arena_of(v), *list, sizeof **list * (size_t)*cap, sizeof **list * (size_t)ncap);
        *cap = ncap;
    }
    (*list)[(*n)++] = s;
    (*list)[*n] = NULL;
    v->key = NULL;
}

/* A define of a name already defined replaces it: the last one given is the variant's (sm_90a's
 * wide GEMM tiles over the vector configuration), and config lookups see one value. */
static void add_define(ShippedVariant *v, const char *s) {
    size_t nl = strcspn(s, "=");
    for (int i = 0; i < v->ndefines; i++)
        if (!strncmp(v->defines[i], s, nl + 1)) {
            v->defines[i] = s;
            v->key = NULL;
            return;
        }
    list_add(v, &v->defines, &v->ndefines, &v->capdefines, s);
}
static void add_spec(ShippedVariant *v, const char *s) { list_add(v, &v->specialize, &v->nspecialize, &v->capspecialize, s); }

void shipped_define(ShippedVariant *v, const char *name, long long value) {
    add_define(v, arena_printf(arena_of(v), "%s=%lld", name, value));
}

void shipped_flag(ShippedVariant *v, const char *name, bool on) {
    add_define(v, arena_printf(arena_of(v), "%s=%s", name, on ? "true" : "false"));
}

void shipped_define_text(ShippedVariant *v, const char *text, size_t n) { add_define(v, arena_strndup(arena_of(v), text, n)); }

void shipped_spec16(ShippedVariant *v, const char *arg, int64_t value) {
    if (value != 0 && value % 16 == 0) add_spec(v, arena_printf(arena_of(v), "%s=16", arg));
}

void shipped_spec_any(ShippedVariant *v, const char *arg) { add_spec(v, arena_printf(arena_of(v), "%s=any", arg)); }

void shipped_spec_stride(ShippedVariant *v, const char *arg, int64_t value) {
    if (value == 1) add_spec(v, arena_printf(arena_of(v), "%s=1", arg));
    else shipped_spec16(v, arg, value);
}

const char *shipped_variant_key(ShippedVariant *v) {
    if (v->key) return v->key;
    Str s = {0};
    str_printf(&s, "%s|", v->kernel);
    for (int i = 0; i < v->ndefines; i++) str_printf(&s, "%s ", v->defines[i]);
    str_puts(&s, "|");
    for (int i = 0; i < v->nspecialize; i++) str_printf(&s, "%s ", v->specialize[i]);
    str_printf(&s, "|%d", v->no_align_ptrs);
    v->key = arena_strdup(arena_of(v), s.buf);
    str_free(&s);
    return v->key;
}

/* ---- the context's variant table ---- */
typedef struct Entry {
    char *key;
    tile_kernel *kernel;
} Entry;

typedef struct Table {
    Entry *e;
    int n, cap;
} Table;

static const char table_tag; /* its address tags the attachment */

static void table_free(void *p) {
    Table *t = p;
    if (!t) return;
    for (int i = 0; i < t->n; i++) free(t->e[i].key); /* the modules go with the context */
    free(t->e);
    free(t);
}

/* The context's table (made the first time), NULL when out of memory.  Lock held. */
static Table *table_locked(tile_context *ctx) {
    void **slot = rt_attachment_locked(ctx, &table_tag, table_free);
    if (slot && !*slot) *slot = calloc(1, sizeof(Table));
    return slot ? *slot : NULL;
}

static tile_kernel *table_find(const Table *t, const char *key) {
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->e[i].key, key)) return t->e[i].kernel;
    return NULL;
}

static bool table_add(Table *t, const char *key, tile_kernel *k) {
    if (t->n == t->cap) {
        int ncap = t->cap ? t->cap * 2 : 16;
        Entry *e = realloc(t->e, sizeof *e * (size_t)ncap);
        if (!e) return false;
        t->e = e, t->cap = ncap;
    }
    char *copy = strdup(key);
    if (!copy) return false;
    t->e[t->n++] = (Entry){copy, k};
    return true;
}

tile_status shipped_kernel(tile_context *ctx, const char *api, const char *file, ShippedVariant *v, tile_kernel **kernel,
                           int *source) {
    *kernel = NULL;
    if (source) *source = 0;
    Str key = {0};
    str_printf(&key, "%s:%s", file, shipped_variant_key(v));
    tile_status st = TILE_OK;
    tile_kernel *k = NULL;

    /* 1. the table */
    rt_lock(ctx);
    Table *t = table_locked(ctx);
    if (t) k = table_find(t, key.buf);
    rt_unlock(ctx);
    if (!t) {
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
        goto done;
    }
    if (k) goto done;

    /* 2. load */
    char path[1024];
    if (!shipped_source_path(file, path, sizeof path)) {
        st = rt_fail(ctx, TILE_ERROR_IO, "%s: the path of %s is longer than %zu bytes", api, file, sizeof path);
        goto done;
    }
    tile_compile_options o = {.kernel = v->kernel, .defines = v->defines, .specialize = v->specialize, .no_align_ptrs = v->no_align_ptrs};
    tile_module *m;
    int src = 0;
    rt_lock(ctx);
    st = jit_load_file_locked(ctx, path, &o, &m, &src);
    rt_unlock(ctx);
    if (st != TILE_OK) {
        rt_fail(ctx, st, "%s: %s: %s", api, v->kernel, tile_last_error(ctx));
        goto done;
    }
    if ((st = tile_module_get_kernel(m, v->kernel, &k)) != TILE_OK) {
        rt_fail(ctx, st, "%s: %s", api, tile_last_error(ctx));
        tile_module_unload(m);
        goto done;
    }

    /* 3. into the table */
    rt_lock(ctx);
    t = table_locked(ctx);
    tile_kernel *earlier = t ? table_find(t, key.buf) : NULL;
    bool added = t && !earlier && table_add(t, key.buf, k);
    rt_unlock(ctx);
    if (!added) {
        tile_module_unload(m); /* the table holds the earlier one's module */
        if (!(k = earlier)) st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
        goto done;
    }
    if (source) *source = src;
    if (rt_options()->debug_launch)
        rt_debug("launch", "%s %s: %s", api, key.buf, src == 1 ? "from the disk cache" : src == 2 ? "compiled" : "loaded");
done:
    str_free(&key);
    *kernel = k;
    return st;
}

const char *shipped_scale_check(const char *name, float value, char *msg, size_t n) {
    if (value == 0 || (isfinite(value) && value > 0)) return NULL;
    snprintf(msg, n, "%s = %g: a scale is a finite positive number (0 means 1)", name, (double)value);
    return msg;
}

tile_status shipped_launch(tile_context *ctx, const char *api, tile_kernel *k, tile_dim3 grid, void **params, tile_stream stream) {
    tile_status st = rt_launch_for(api, k, grid, params, stream);
    if (st == TILE_OK) return st;
    const char *msg = tile_last_error(ctx);
    size_t n = strlen(api);
    if (strncmp(msg, api, n) || msg[n] != ':') rt_fail(ctx, st, "%s: %s", api, msg); /* rt_fail formats before it frees msg */
    return st;
}

tile_status shipped_check_range(tile_context *ctx, const char *api, tile_devptr p, uint64_t esize, uint64_t bytes, const char *what) {
    if (p % esize)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s (0x%llx) is not aligned to its %llu-byte elements", api, what,
                       (unsigned long long)p, (unsigned long long)esize);
    char name[96];
    snprintf(name, sizeof name, "%s: %s", api, what);
    return rt_check_range(ctx, p, bytes, name);
}

tile_status shipped_check_apart(tile_context *ctx, const char *api, tile_devptr out, uint64_t ob, const char *oname, tile_devptr in,
                                uint64_t ib, const char *iname) {
    if (!out || !in || !ob || !ib || in >= out + ob || out >= in + ib) return TILE_OK;
    return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                   "%s: %s [0x%llx, +%llu bytes) overlaps %s [0x%llx, +%llu bytes), which the kernels read or write while they write %s; "
                   "give %s memory of its own", api, oname, (unsigned long long)out, (unsigned long long)ob, iname,
                   (unsigned long long)in, (unsigned long long)ib, oname, oname);
}

tile_status shipped_check_rows_apart(tile_context *ctx, const char *api, const ShippedRows *out, const ShippedRows *in, bool in_place) {
    if (in_place && out->p == in->p && out->esize == in->esize && out->width <= in->width &&
        (out->pitch == in->pitch || (out->rows <= 1 && in->rows <= 1)))
        return TILE_OK;
    if (!shipped_rows_share(out->p, out->rows, out->width, out->pitch, in->p, in->rows, in->width, in->pitch)) return TILE_OK;
    return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                   "%s: %s (0x%llx, %llu rows of %llu bytes, %llu apart) shares bytes with %s (0x%llx, %llu rows of %llu bytes, "
                   "%llu apart), which the kernels read or write while they write %s, so the result would be undefined; give %s "
                   "memory of its own%s",
                   api, out->name, (unsigned long long)out->p, (unsigned long long)out->rows, (unsigned long long)out->width,
                   (unsigned long long)out->pitch, in->name, (unsigned long long)in->p, (unsigned long long)in->rows,
                   (unsigned long long)in->width, (unsigned long long)in->pitch, out->name, out->name,
                   in_place ? " or pass the same pointer and row stride (in place)" : "");
}

/* floor(a / b) for b > 0 */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

typedef struct Rows {
    uint64_t base, rows, width, pitch, end;
} Rows;

bool shipped_rows_share(tile_devptr xbase, uint64_t xrows, uint64_t xwidth, uint64_t xpitch, tile_devptr ybase, uint64_t yrows,
                        uint64_t ywidth, uint64_t ypitch) {
    if (!xbase || !ybase || !xrows || !yrows || !xwidth || !ywidth) return false;
    if (!xpitch) xrows = 1; /* every row the same bytes */
    if (!ypitch) yrows = 1;
    Rows x = {xbase, xrows, xwidth, xrows == 1 ? xwidth : xpitch, 0}, y = {ybase, yrows, ywidth, yrows == 1 ? ywidth : ypitch, 0}, t;
    /* the spans first: [base, base + (rows - 1) * pitch + width) (the callers' spans are below 2^40 bytes) */
    x.end = x.base + (x.rows - 1) * x.pitch + x.width, y.end = y.base + (y.rows - 1) * y.pitch + y.width;
    if (x.end <= y.base || y.end <= x.base) return false;
    if (x.rows == 1 && y.rows == 1) return true;
    if (x.base > y.base) t = x, x = y, y = t; /* so that d = y.base - x.base >= 0 */
    int64_t d = (int64_t)(y.base - x.base); /* within x's span, so well inside 64 bits */
    if (x.pitch == y.pitch && x.width <= x.pitch && y.width <= y.pitch) {
        /* row i of x is [i P, i P + Wx), row j of y [d + j P, ...); with d = q P + r only the rows s = q + j - i
         * of 0 (r < Wx) and -1 (r + Wy > P) can meet, and s takes every value of [q - (x.rows - 1), q + y.rows - 1] */
        const int64_t P = (int64_t)x.pitch, q = d / P, r = d % P;
        const int64_t slo = q - (int64_t)(x.rows - 1), shi = q + (int64_t)(y.rows - 1);
        return (slo <= 0 && 0 <= shi && r < (int64_t)x.width) || (slo <= -1 && -1 <= shi && r + (int64_t)y.width > P);
    }
    /* the rows of x that reach y's span [d, d + yspan) (relative to x.base), each against the rows of y that
     * could meet it; x the set with fewer rows */
    if (x.rows > y.rows) t = x, x = y, y = t, d = -d;
    const int64_t xp = (int64_t)x.pitch, yp = (int64_t)y.pitch, xw = (int64_t)x.width, yw = (int64_t)y.width;
    const int64_t yspan = (int64_t)(y.end - y.base);
    int64_t ilo = floor_div(d - xw, xp) + 1, ihi = floor_div(d + yspan - 1, xp);
    if (ilo < 0) ilo = 0;
    if (ihi > (int64_t)x.rows - 1) ihi = (int64_t)x.rows - 1;
    for (int64_t i = ilo; i <= ihi; i++) {
        const int64_t s = i * xp - d, e = s + xw; /* row i of x relative to y.base */
        int64_t jlo = floor_div(s - yw, yp) + 1, jhi = floor_div(e - 1, yp);
        if (jlo < 0) jlo = 0;
        if (jhi > (int64_t)y.rows - 1) jhi = (int64_t)y.rows - 1;
        if (jlo <= jhi) return true;
    }
    return false;
}

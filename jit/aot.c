/* aot.c - ahead-of-time export: kernels as C sources with their PTX embedded.
 *
 * tile_aot_export(file, opts, kernels, variants, out) writes OUT.h and OUT.c:
 *   1. each kernel is compiled once generically and once per variant (a
 *      list of specializations "ARG=1 ARG=16 PTR=None"), through the compile cache;
 *      with ptxas present the cubin is embedded too (for programs that use
 *      the CUDA driver directly);
 *   2. the parameter names and C types come from the Tile IR's kernel
 *      header and the signature ("*f16:16" -> tile_devptr, "i32" -> int32_t);
 *   3. OUT.c holds the PTX as byte arrays (no string literal past C's 4095
 *      characters, so it builds with -Wpedantic) and one launch function per
 *      kernel, `tile_status NAME(tile_context *, tile_dim3 grid, params...,
 *      tile_stream)`, whose dispatcher picks the first variant whose
 *      signature the values satisfy (its specializations, and the 16-byte
 *      alignment of every pointer not "=any"), loads that PTX into the context
 *      on first use (tile_module_load_ptx; a per-kernel table of contexts
 *      under a mutex, grown as contexts come, each kept with its
 *      tile_context_id so that the slot of a context destroyed without
 *      NAME_aot_unload is taken for dead, not for a new context at the same
 *      address) and calls tile_launch.  NAME_aot_unload(ctx) releases what
 *      the kernel loaded into a context.  The kernels are compiled
 *      without tensor maps (no_tma): the launcher passes the arguments only.
 * The output needs only <tile/tile.h> and libtile. */
#include "jit/jit.h"
#include "support/target.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct AotParam {
    char tile_name[64]; /* as the kernel declares it */
    char name[72];      /* in the generated C: tile_name, with '_' appended until it is free and unique */
    char ctype[16];
} AotParam;

static const char *c_type(const char *sig) {
    if (sig[0] == '*') return "tile_devptr";
    static const char *const map[][2] = {{"i1", "uint8_t"},   {"i8", "int8_t"},     {"i16", "int16_t"}, {"i32", "int32_t"},
                                         {"i64", "int64_t"},  {"u8", "uint8_t"},    {"u16", "uint16_t"}, {"u32", "uint32_t"},
                                         {"u64", "uint64_t"}, {"f16", "uint16_t"},  {"bf16", "uint16_t"}, {"f32", "float"},
                                         {"f64", "double"}};
    for (size_t i = 0; i < ARRAY_LEN(map); i++) {
        size_t n = strlen(map[i][0]);
        if (!strncmp(sig, map[i][0], n) && (sig[n] == 0 || sig[n] == ':' || sig[n] == '=' || sig[n] == ',')) return map[i][1];
    }
    return NULL;
}

/* Keywords of C (C17, C23, GNU's asm and typeof) and C++ (C++20's, the alternative operator spellings
 * included): the header is included from C++ too, inside extern "C". */
static bool c_keyword(const char *s) {
    static const char *const kw[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for",
        "goto", "if", "int", "long", "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
        "union", "unsigned", "void", "volatile", "while", "inline", "restrict", "bool", "true", "false", "alignas", "alignof",
        "constexpr", "nullptr", "static_assert", "thread_local", "typeof", "typeof_unqual", "asm", "and", "and_eq", "bitand",
        "bitor", "catch", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const_cast", "consteval", "constinit",
        "co_await", "co_return", "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export", "friend", "mutable",
        "namespace", "new", "noexcept", "not", "not_eq", "operator", "or", "or_eq", "private", "protected", "public",
        "reinterpret_cast", "requires", "static_cast", "template", "this", "throw", "try", "typeid", "typename", "using",
        "virtual", "wchar_t", "xor", "xor_eq"};
    for (size_t i = 0; i < ARRAY_LEN(kw); i++)
        if (!strcmp(s, kw[i])) return true;
    return false;
}

/* Whether a parameter may keep its .tile name in the prototype and the launch function's body: not a keyword,
 * not a name the body uses (its locals, NULL, the kernel's tables KERNEL_slots and KERNEL_ptx_N), nor a type
 * or macro the prototype's headers may define (tile.h's tile_ and TILE_ names, the <stdint.h> and <stddef.h>
 * ..._t types, reserved names). */
static bool aot_param_name_free(const char *name, const char *kernel) {
    static const char *const mine[] = {"args", "ctx", "grid", "stream", "st", "k", "v", "ptx", "NULL", "offsetof"};
    for (size_t i = 0; i < ARRAY_LEN(mine); i++)
        if (!strcmp(name, mine[i])) return false;
    size_t n = strlen(name), kn = strlen(kernel);
    if (c_keyword(name) || (n >= 2 && !strcmp(name + n - 2, "_t")) || !strncmp(name, "tile_", 5) || !strncmp(name, "TILE_", 5) ||
        !strncmp(name, "__", 2) || (name[0] == '_' && isupper((unsigned char)name[1])))
        return false;
    return !(n > kn && !strncmp(name, kernel, kn) && (!strcmp(name + kn, "_slots") || !strncmp(name + kn, "_ptx_", 5)));
}

/* Names from "kernel @NAME(%x: ptr<f32> #div16, %n: i32)" and types from the signature. */
static int kernel_params(const tile_compiled *c, const char *kernel, AotParam *ps, int max) {
    char head[256];
    snprintf(head, sizeof head, "kernel @%s(", kernel);
    const char *p = c->tir ? strstr(c->tir, head) : NULL;
    const char *sig = c->kernels[0].signature;
    int n = 0;
    if (!p) return -1;
    p += strlen(head);
    while (*p && *p != ')' && n < max) {
        while (*p == ' ' || *p == ',') p++;
        if (*p != '%') break;
        p++;
        size_t len = 0;
        while (isalnum((unsigned char)p[len]) || p[len] == '_') len++;
        if (len >= sizeof ps[n].tile_name) return -1;
        snprintf(ps[n].tile_name, sizeof ps[n].tile_name, "%.*s", (int)len, p);
        memcpy(ps[n].name, ps[n].tile_name, len + 1);
        for (bool taken = true; taken;) {
            taken = !aot_param_name_free(ps[n].name, kernel);
            for (int i = 0; i < n && !taken; i++) taken = !strcmp(ps[i].name, ps[n].name);
            if (taken) {
                size_t l = strlen(ps[n].name);
                if (l + 1 >= sizeof ps[n].name) return -1;
                ps[n].name[l] = '_', ps[n].name[l + 1] = 0;
            }
        }
        while (*sig == ' ' || *sig == ',') sig++;
        const char *t = c_type(sig);
        if (!t) return -1;
        snprintf(ps[n].ctype, sizeof ps[n].ctype, "%s", t);
        while (*sig && *sig != ',') sig++;
        n++;
        while (*p && *p != ',' && *p != ')') p++;
    }
    return n;
}

/* The dispatcher's test for a variant: what its signature ("*f32:16, *f32=None, *f32, i32:16, i32=1") assumes
 * of each value, as C over the parameters: a pointer or integer `:16` divisible by 16 (a pointer 16-byte
 * aligned, as 0 is), `=1` equal to 1, `=None` zero; nothing for the others (`=any` pointers: "*f32").  Taken
 * from the signature rather than the --variant text, so that a variant is picked only when its build can
 * launch with the values (a variant with aligned pointers is passed over for a misaligned one, to a later
 * variant built with "x=any"). */
static void aot_conditions(const char *sig, const AotParam *ps, int np, Str *cond) {
    for (int i = 0; i < np && sig && *sig; i++) {
        while (*sig == ' ' || *sig == ',') sig++;
        size_t len = strcspn(sig, ",");
        const char *what = NULL;
        if (len >= 5 && !strncmp(sig + len - 5, "=None", 5)) what = "== 0";
        else if (len >= 3 && !strncmp(sig + len - 3, ":16", 3)) what = "% 16 == 0";
        else if (len >= 2 && !strncmp(sig + len - 2, "=1", 2)) what = "== 1";
        if (what) str_printf(cond, "%s%s %s", cond->len ? " && " : "", ps[i].name, what);
        sig += len;
    }
}

/* text as the initializer of an unsigned char array, NUL included: a string literal over 4095 characters
 * is past what ISO C requires compilers to take (-Wpedantic's overlength-strings; MSVC stops at 64 KiB), and
 * a kernel's PTX is longer. */
static void put_c_bytes(Str *s, const char *text) {
    size_t n = strlen(text) + 1;
    for (size_t i = 0; i < n; i++) str_printf(s, "%s%u,", i % 24 ? "" : "\n    ", (unsigned char)text[i]);
    str_puts(s, "\n");
}

static bool write_text(const char *path, const Str *s) {
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(s->buf, 1, s->len, f) == s->len;
    if (f && fclose(f)) ok = false;
    return ok;
}

/* A refusal before anything is written: *msg says why. */
static tile_status aot_refuse(char **msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tile_status aot_refuse(char **msg, const char *fmt, ...) {
    if (msg) {
        Str m = {0};
        str_printf(&m, "tile aot: ");
        va_list ap;
        va_start(ap, fmt);
        str_vprintf(&m, fmt, ap);
        va_end(ap);
        str_puts(&m, "\n");
        *msg = str_take(&m);
    }
    return TILE_ERROR_INVALID_VALUE;
}

/* A name the generated C may declare a function by: an identifier, not a C or C++ keyword or one of the
 * generated file's own names, not in tile.h's name spaces (tile_, TILE_), nor a name the headers the
 * generated C includes (pthread.h, stddef.h) or C itself reserve (main, _X..., __...). */
static bool aot_name_ok(const char *n) {
    static const char *const taken[] = {"main", "size_t", "ptrdiff_t", "wchar_t", "max_align_t", "nullptr_t", "offsetof", "NULL"};
    if (!*n || isdigit((unsigned char)*n) || c_keyword(n) || !strncmp(n, "tile_", 5) || !strncmp(n, "TILE_", 5) ||
        !strncmp(n, "TileAot", 7) || !strncmp(n, "pthread_", 8) || !strncmp(n, "PTHREAD_", 8) || !strncmp(n, "__", 2) ||
        (n[0] == '_' && isupper((unsigned char)n[1])))
        return false;
    for (size_t i = 0; i < ARRAY_LEN(taken); i++)
        if (!strcmp(n, taken[i])) return false;
    for (const char *p = n; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') return false;
    return true;
}

/* Whether name is one the generated C declares for kernel k: k_aot_unload, k_slots, k_ptx_N. */
static bool aot_generated_name(const char *name, const char *k) {
    size_t n = strlen(k);
    if (strncmp(name, k, n)) return false;
    const char *rest = name + n;
    if (!strcmp(rest, "_aot_unload") || !strcmp(rest, "_slots")) return true;
    if (strncmp(rest, "_ptx_", 5) || !rest[5]) return false;
    for (const char *p = rest + 5; *p; p++)
        if (!isdigit((unsigned char)*p)) return false;
    return true;
}

tile_status tile_aot_export(const char *path, const tile_compile_options *opt, const char *const *kernels,
                            const char *const *variants, const char *out, char **msg) {
    if (msg) *msg = NULL;
    if (!path || !kernels || !kernels[0] || !out)
        return aot_refuse(msg, "%s", !path ? "path is NULL" : !out ? "out is NULL" : "no kernel named (kernels is NULL or empty)");
    for (int i = 0; kernels[i]; i++) {
        if (!aot_name_ok(kernels[i]))
            return aot_refuse(msg, "kernel '%s': the launch function is named after the kernel, so its name must be a C identifier "
                                   "that is not a C or C++ keyword, main or a name of stddef.h, and does not start with tile_, TILE_, "
                                   "TileAot, pthread_, __ or _ and a capital", kernels[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(kernels[i], kernels[j])) return aot_refuse(msg, "kernel '%s' is named twice", kernels[i]);
    }
    for (int i = 0; kernels[i]; i++)
        for (int j = 0; kernels[j]; j++)
            if (i != j && aot_generated_name(kernels[i], kernels[j]))
                return aot_refuse(msg, "kernel '%s' has the name of a function or table the generated C declares for kernel '%s' (%s_aot_unload, "
                                       "%s_slots, %s_ptx_N): export them separately", kernels[i], kernels[j], kernels[j], kernels[j], kernels[j]);
    tile_compile_options base;
    char oerr[160];
    if (!jit_options_in(opt, &base, oerr, sizeof oerr)) {
        if (msg) {
            Str m = {0};
            str_printf(&m, "error: opt->%s\n", oerr);
            *msg = str_take(&m);
        }
        return TILE_ERROR_INVALID_VALUE;
    }
    const char *stem = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
    if (!*stem) return aot_refuse(msg, "-o '%s' names no file (OUT.h and OUT.c are written)", out);
    for (const char *q = stem; *q; q++)
        if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20)
            return aot_refuse(msg, "-o '%s': the file name goes into an #include, so it may not hold quotes, backslashes or control characters", out);
    char guard[128];
    snprintf(guard, sizeof guard, "TILE_AOT_%s_H", stem);
    for (char *g = guard; *g; g++) *g = isalnum((unsigned char)*g) ? (char)toupper((unsigned char)*g) : '_';
    Str h = {0}, c = {0}, err = {0};
    str_printf(&h, "/* %s.h - generated by `tile aot` from %s: do not edit. */\n#ifndef %s\n#define %s\n\n#include <tile/tile.h>\n\n",
               stem, path, guard, guard);
    str_puts(&h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    str_printf(&c, "/* %s.c - generated by `tile aot` from %s: do not edit. */\n#include \"%s.h\"\n\n#include <pthread.h>\n#include <stddef.h>\n\n",
               stem, path, stem);
    str_puts(&c, "#include <stdlib.h>\n\n"
                 "/* A variant's kernel loaded into a context: ctx with its tile_context_id, which tells a context destroyed\n"
                 " * without NAME_aot_unload (its module went with it) from a new one at the same address. */\n"
                 "typedef struct TileAotSlot {\n    tile_context *ctx;\n    uint64_t id;\n    tile_module *mod;\n    tile_kernel *kernel;\n} TileAotSlot;\n"
                 "typedef struct TileAotSlots {\n    TileAotSlot *s;\n    int n;\n} TileAotSlots;\n"
                 "static const TileAotSlot tile_aot_empty_slot = {NULL, 0, NULL, NULL};\n"
                 "static pthread_mutex_t tile_aot_lock = PTHREAD_MUTEX_INITIALIZER;\n\n");
    str_puts(&c, "/* The kernel of a variant loaded into ctx (loaded on first use; slots of destroyed contexts reused, the table\n"
                 " * grown when none is free). */\n"
                 "static tile_status tile_aot_get(TileAotSlots *slots, const char *ptx, const char *name, tile_context *ctx, tile_kernel **out) {\n"
                 "    uint64_t id = tile_context_id(ctx);\n"
                 "    if (!id) { /* no live context: the library's own message */\n"
                 "        tile_module *m;\n        return tile_module_load_ptx(ctx, ptx, &m);\n    }\n"
                 "    tile_status st = TILE_OK;\n    pthread_mutex_lock(&tile_aot_lock);\n    TileAotSlot *slot = NULL;\n"
                 "    for (int i = 0; i < slots->n; i++) {\n        TileAotSlot *s = &slots->s[i];\n"
                 "        if (s->ctx && tile_context_id(s->ctx) != s->id) *s = tile_aot_empty_slot; /* its context was destroyed */\n"
                 "        if (s->ctx == ctx) {\n            *out = s->kernel;\n"
                 "            pthread_mutex_unlock(&tile_aot_lock);\n            return TILE_OK;\n        }\n"
                 "        if (!s->ctx && !slot) slot = s;\n    }\n"
                 "    if (!slot) {\n        TileAotSlot *grown = (TileAotSlot *)realloc(slots->s, (size_t)(slots->n + 8) * sizeof *grown);\n"
                 "        if (grown) {\n            for (int i = slots->n; i < slots->n + 8; i++) grown[i] = tile_aot_empty_slot;\n"
                 "            slot = &grown[slots->n];\n            slots->s = grown;\n            slots->n += 8;\n        }\n    }\n"
                 "    if (!slot) st = TILE_ERROR_OUT_OF_MEMORY;\n"
                 "    else if ((st = tile_module_load_ptx(ctx, ptx, &slot->mod)) == TILE_OK) {\n"
                 "        if ((st = tile_module_get_kernel(slot->mod, name, &slot->kernel)) == TILE_OK) {\n"
                 "            slot->ctx = ctx;\n            slot->id = id;\n            *out = slot->kernel;\n"
                 "        } else tile_module_unload(slot->mod);\n    }\n"
                 "    pthread_mutex_unlock(&tile_aot_lock);\n    return st;\n}\n\n"
                 "static void tile_aot_release(TileAotSlots *slots, tile_context *ctx) {\n    pthread_mutex_lock(&tile_aot_lock);\n"
                 "    for (int i = 0; i < slots->n; i++)\n        if (slots->s[i].ctx == ctx) {\n"
                 "            tile_module_unload(slots->s[i].mod);\n            slots->s[i] = tile_aot_empty_slot;\n        }\n"
                 "    pthread_mutex_unlock(&tile_aot_lock);\n}\n\n");
    tile_status st = TILE_OK;
    int nvar = 0;
    while (variants && variants[nvar]) nvar++;
    for (int ki = 0; kernels[ki] && st == TILE_OK; ki++) {
        const char *kn = kernels[ki];
        AotParam ps[128];
        int np = -1;
        Str *conds = calloc((size_t)nvar + 1, sizeof *conds); /* per variant, what its signature assumes of the values */
        if (!conds) {
            st = TILE_ERROR_OUT_OF_MEMORY;
            break;
        }
        for (int v = 0; v <= nvar && st == TILE_OK; v++) { /* variants first, the generic build last */
            const char *specs[33] = {0};
            char buf[512] = "";
            if (v < nvar) {
                snprintf(buf, sizeof buf, "%s", variants[v]);
                int ns = 0;
                for (char *sv, *t = strtok_r(buf, " ,", &sv); t && ns < 32; t = strtok_r(NULL, " ,", &sv)) specs[ns++] = t;
            }
            tile_compile_options o = base;
            o.kernel = kn;
            o.specialize = v < nvar ? specs : base.specialize;
            o.want_cubin = 1;
            /* the generated launcher loads raw PTX and passes the arguments only: no tensor maps */
            o.no_tma = 1;
            tile_compiled cc;
            st = tile_cache_compile_file(NULL, path, &o, &cc, NULL);
            if (st != TILE_OK || !cc.nkernels) {
                str_printf(&err, "%s", cc.diagnostics ? cc.diagnostics : "");
                if (st == TILE_OK) st = TILE_ERROR_COMPILE;
                tile_compiled_free(&cc);
                break;
            }
            if (np < 0) {
                np = kernel_params(&cc, kn, ps, 128);
                if (np < 0) {
                    str_printf(&err, "tile aot: cannot read the parameters of '%s'\n", kn);
                    st = TILE_ERROR_INTERNAL;
                    tile_compiled_free(&cc);
                    break;
                }
            }
            if (v < nvar) aot_conditions(cc.kernels[0].signature, ps, np, &conds[v]);
            str_printf(&c, "/* %s, %s: %s (PTX text, NUL-terminated) */\nstatic const unsigned char %s_ptx_%d[] = {", kn,
                       v < nvar ? "variant" : "generic", v < nvar ? variants[v] : "no specialization", kn, v);
            put_c_bytes(&c, cc.ptx);
            str_puts(&c, "};\n");
            if (cc.cubin) {
                str_printf(&c, "const unsigned char %s_cubin_%d[%zu] = {", kn, v, cc.cubin_size);
                for (size_t i = 0; i < cc.cubin_size; i++) str_printf(&c, "%s%u,", i % 24 ? "" : "\n    ", ((unsigned char *)cc.cubin)[i]);
                str_puts(&c, "\n};\n");
                str_printf(&h, "extern const unsigned char %s_cubin_%d[%zu]; /* %s, for the CUDA driver */\n", kn, v, cc.cubin_size,
                           target_find(base.arch) ? target_find(base.arch)->name : base.arch);
            }
            tile_compiled_free(&cc);
        }
        if (st != TILE_OK) {
            for (int v = 0; v < nvar; v++) str_free(&conds[v]);
            free(conds);
            break;
        }
        /* declaration */
        Str proto = {0};
        str_printf(&proto, "tile_status %s(tile_context *ctx, tile_dim3 grid", kn);
        for (int i = 0; i < np; i++) str_printf(&proto, ", %s %s", ps[i].ctype, ps[i].name);
        str_puts(&proto, ", tile_stream stream)");
        str_printf(&h, "/* Launch %s (block and shared memory from its build); loads into ctx on first use. */\n%s;\n\n", kn, proto.buf);
        str_printf(&c, "static TileAotSlots %s_slots[%d];\n\n%s {\n    int v = %d;\n", kn, nvar + 1, proto.buf, nvar);
        for (int v = nvar - 1; v >= 0; v--) str_printf(&c, "    if (%s) v = %d;\n", conds[v].len ? conds[v].buf : "1", v);
        str_printf(&c, "    static const char *const ptx[] = {");
        for (int v = 0; v <= nvar; v++) str_printf(&c, "%s(const char *)%s_ptx_%d", v ? ", " : "", kn, v);
        str_printf(&c, "};\n    tile_kernel *k;\n    tile_status st = tile_aot_get(&%s_slots[v], ptx[v], \"%s\", ctx, &k);\n"
                       "    if (st != TILE_OK) return st;\n    void *args[] = {",
                   kn, kn);
        for (int i = 0; i < np; i++) str_printf(&c, "%s&%s", i ? ", " : "", ps[i].name);
        str_puts(&c, np ? "};\n" : "NULL};\n");
        str_puts(&c, "    return tile_launch(k, grid, args, stream);\n}\n\n");
        str_printf(&h, "/* Release the modules of %s loaded into ctx. */\nvoid %s_aot_unload(tile_context *ctx);\n\n", kn, kn);
        str_printf(&c, "void %s_aot_unload(tile_context *ctx) {\n    for (int v = 0; v < %d; v++) tile_aot_release(&%s_slots[v], ctx);\n}\n\n",
                   kn, nvar + 1, kn);
        str_free(&proto);
        for (int v = 0; v < nvar; v++) str_free(&conds[v]);
        free(conds);
    }
    if (st == TILE_OK) {
        str_puts(&h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
        Str hp = {0}, cp = {0};
        str_printf(&hp, "%s.h", out);
        str_printf(&cp, "%s.c", out);
        if (!write_text(hp.buf, &h) || !write_text(cp.buf, &c)) {
            str_printf(&err, "tile aot: cannot write %s: %s\n", hp.buf, strerror(errno));
            st = TILE_ERROR_IO;
        }
        str_free(&hp), str_free(&cp);
    }
    if (msg) *msg = err.buf ? str_take(&err) : NULL;
    str_free(&err), str_free(&h), str_free(&c);
    return st;
}

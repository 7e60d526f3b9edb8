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
 *      kernel, `tile_status CNAME(tile_context *, tile_dim3 grid, params...,
 *      tile_stream)` (CNAME the kernel's name, or the one "NAME=CNAME" gives),
 *      whose dispatcher picks the first variant whose signature the values
 *      satisfy (its specializations, and the 16-byte alignment of every
 *      pointer not "=any"), gets that variant's kernel loaded into the context
 *      through the variant's tile_aot_table (libtile_rt: loaded on first use,
 *      one entry per context) and calls tile_launch, or, when a variant needs
 *      dynamic shared memory (over the target's static limit), tile_launch_raw
 *      with each variant's block and dynamic shared memory from the tables
 *      CNAME_block and CNAME_smem: raw PTX says its block (.reqntid) but not
 *      how much dynamic shared memory it needs.  CNAME_aot_unload(ctx)
 *      releases what the kernel loaded into a context.  The kernels are
 *      compiled without tensor maps (no_tma): the launcher passes the
 *      arguments only.
 * The output includes <tile/tile.h> and nothing else (no system header: a kernel or a parameter may have the
 * name of a C library function or of a macro of a header other than <stddef.h> and <stdint.h>), and links
 * libtile_rt alone.  What could still collide is refused (aot_cname_refusal) or renamed (parameters). */
#include "jit/jit.h"
#include "support/outfile.h"
#include "support/target.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct AotParam {
    char *tile_name; /* as the kernel declares it */
    char *name;      /* in the generated C: tile_name ("p_" before it when it is in a reserved name space), with '_'
                        appended until it is free and unique */
    const char *ctype;
} AotParam;

static void aot_params_free(AotParam *ps, int n) {
    for (int i = 0; ps && i < n; i++) free(ps[i].tile_name), free(ps[i].name);
    free(ps);
}

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

/* Names of the C and C++ standard headers that a program may include before OUT.h and that are not functions
 * (those the C library exports are looked up in it: aot_libc_function): macros, object-like or function-like
 * (a launch function's name followed by '(' expands a function-like one), typedefs without _t, C++'s std,
 * and the macros GNU C predefines outside strict ISO modes (linux, unix, i386). */
static bool c_std_name(const char *s) {
    static const char *const names[] = {
        "assert", "errno", "stdin", "stdout", "stderr", "complex", "imaginary", "I", "noreturn", "offsetof", "unreachable",
        "setjmp", "va_arg", "va_copy", "va_end", "va_start", "va_list", "jmp_buf", "FILE", "once_flag", "memory_order",
        "atomic_flag", "kill_dependency", "math_errhandling", "isnan", "isinf", "isfinite", "isnormal", "signbit", "fpclassify",
        "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater", "isunordered", "iscanonical", "issignaling",
        "issubnormal", "iszero", "NULL", "BUFSIZ", "FILENAME_MAX", "FOPEN_MAX", "L_tmpnam", "TMP_MAX", "MB_CUR_MAX", "MB_LEN_MAX",
        "RAND_MAX", "CLOCKS_PER_SEC", "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "CHAR_BIT", "CHAR_MAX", "CHAR_MIN",
        "SCHAR_MAX", "SCHAR_MIN", "UCHAR_MAX", "SHRT_MAX", "SHRT_MIN", "USHRT_MAX", "LONG_MAX", "LONG_MIN", "ULONG_MAX",
        "LLONG_MAX", "LLONG_MIN", "ULLONG_MAX", "DECIMAL_DIG", "SIZE_MAX", "SIZE_WIDTH", "PTRDIFF_MAX", "PTRDIFF_MIN",
        "PTRDIFF_WIDTH", "WCHAR_MAX", "WCHAR_MIN", "WCHAR_WIDTH", "WINT_MAX", "WINT_MIN", "WINT_WIDTH", "WEOF", "CMPLX", "CMPLXF",
        "CMPLXL", "ONCE_FLAG_INIT", "EXIT_FAILURE", "EXIT_SUCCESS", "std", "linux", "unix", "i386"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (!strcmp(s, names[i])) return true;
    /* the families C reserves for its headers' macros (C17 7.31): E2BIG, SIGINT, SIG_DFL, LC_ALL, FE_DIVBYZERO,
     * FP_NAN, FLT_MAX, DBL_EPSILON, LDBL_DIG, TIME_UTC, ATOMIC_VAR_INIT, MATH_ERRNO, PRId32, SCNx64, and <stdint.h>'s
     * INT32_MAX, UINT64_C, INTMAX_MIN, INT_LEAST8_WIDTH (INT_MAX of <limits.h> too); none of their macros ends in
     * '_', so a parameter renamed EOF_ is free */
    size_t n = strlen(s);
    if (!n || s[n - 1] == '_') return false;
    unsigned char c1 = (unsigned char)s[1];
    if (s[0] == 'E' && (isdigit(c1) || isupper(c1))) return true;
    if (!strncmp(s, "SIG", 3) && (isupper((unsigned char)s[3]) || s[3] == '_')) return true;
    static const char *const prefixes[] = {"LC_", "FE_", "FP_", "FLT_", "DBL_", "LDBL_", "TIME_", "ATOMIC_", "MATH_"};
    for (size_t i = 0; i < ARRAY_LEN(prefixes); i++) {
        size_t p = strlen(prefixes[i]);
        if (!strncmp(s, prefixes[i], p) && isupper((unsigned char)s[p])) return true;
    }
    if ((!strncmp(s, "PRI", 3) || !strncmp(s, "SCN", 3)) && (islower((unsigned char)s[3]) || s[3] == 'X')) return true;
    if (!strncmp(s, "INT", 3) || !strncmp(s, "UINT", 4)) {
        static const char *const ends[] = {"_MAX", "_MIN", "_C", "_WIDTH"};
        for (size_t i = 0; i < ARRAY_LEN(ends); i++) {
            size_t e = strlen(ends[i]);
            if (n > e && !strcmp(s + n - e, ends[i])) return true;
        }
    }
    return false;
}

/* Whether name is one the generated C declares for kernel k: k_aot_unload, k_slots, k_block, k_smem, k_ptx_N, k_cubin_N. */
static bool aot_generated_name(const char *name, const char *k) {
    size_t n = strlen(k);
    if (strncmp(name, k, n)) return false;
    const char *rest = name + n;
    if (!strcmp(rest, "_aot_unload") || !strcmp(rest, "_slots") || !strcmp(rest, "_block") || !strcmp(rest, "_smem")) return true;
    size_t p = !strncmp(rest, "_ptx_", 5) ? 5 : !strncmp(rest, "_cubin_", 7) ? 7 : 0;
    if (!p || !rest[p]) return false;
    for (const char *d = rest + p; *d; d++)
        if (!isdigit((unsigned char)*d)) return false;
    return true;
}

/* Whether name is one the generated C declares for kernel k before its launch function, where a parameter of that
 * name would shadow it (an error under -Wshadow, and the body reads the tables): k_slots, k_ptx_0 .. k_ptx_NVAR,
 * k_cubin_V of each variant V that has a cubin (cubins[V]), and k_block and k_smem when the export has them
 * (tables: some variant takes dynamic shared memory).  k_aot_unload comes after the launch function. */
static bool aot_body_name(const char *name, const char *k, int nvar, const bool *cubins, bool tables) {
    size_t n = strlen(k);
    if (strncmp(name, k, n)) return false;
    const char *rest = name + n;
    if (!strcmp(rest, "_slots") || (tables && (!strcmp(rest, "_block") || !strcmp(rest, "_smem")))) return true;
    size_t p = !strncmp(rest, "_ptx_", 5) ? 5 : !strncmp(rest, "_cubin_", 7) ? 7 : 0;
    if (!p || !rest[p] || (rest[p] == '0' && rest[p + 1])) return false; /* k_ptx_07 is none */
    long v = 0;
    for (const char *d = rest + p; *d; d++) {
        if (!isdigit((unsigned char)*d) || v > nvar) return false;
        v = v * 10 + (*d - '0');
    }
    return v <= nvar && (p == 5 || cubins[v]);
}

/* Whether a parameter may keep its .tile name in the prototype and the launch function's body: not a keyword,
 * not a name the body uses (its locals, the kernel's tables: aot_body_name), nor a type or macro
 * of tile.h (tile_ and TILE_ names), of the headers it includes (the <stdint.h> and <stddef.h> ..._t types,
 * NULL) or of the C headers a program includes before OUT.h (errno, stdin, I, complex, EOF, linux: c_std_name),
 * nor a reserved name. */
static bool aot_param_name_free(const char *name, const char *kernel, int nvar, const bool *cubins, bool tables) {
    static const char *const mine[] = {"args", "ctx", "grid", "stream", "st", "k", "v", "ptx"};
    for (size_t i = 0; i < ARRAY_LEN(mine); i++)
        if (!strcmp(name, mine[i])) return false;
    size_t n = strlen(name);
    if (c_keyword(name) || c_std_name(name) || (n >= 2 && !strcmp(name + n - 2, "_t")) || !strncmp(name, "tile_", 5) || !strncmp(name, "TILE_", 5) ||
        !strncmp(name, "__", 2) || (name[0] == '_' && isupper((unsigned char)name[1])))
        return false;
    return !aot_body_name(name, kernel, nvar, cubins, tables);
}

/* Each parameter's C name (AotParam.name): its .tile name, "p_" before it when that is in a reserved name space,
 * '_' appended until it is free (aot_param_name_free: cname is the launch function's C name, whose arrays, for
 * nvar variants, cubins[V] when variant V has a cubin, and tables or not, a parameter must not shadow) and unique.
 * false when out of memory. */
static bool aot_name_params(AotParam *ps, int n, const char *cname, int nvar, const bool *cubins, bool tables) {
    for (int k = 0; k < n; k++) {
        const char *p = ps[k].tile_name;
        Str name = {0};
        /* a reserved prefix stays one whatever is appended */
        bool reserved = !strncmp(p, "tile_", 5) || !strncmp(p, "TILE_", 5) || !strncmp(p, "__", 2) || (p[0] == '_' && isupper((unsigned char)p[1]));
        str_printf(&name, "%s%s", reserved ? "p_" : "", p);
        for (bool taken = name.buf != NULL; taken;) {
            taken = !aot_param_name_free(name.buf, cname, nvar, cubins, tables);
            for (int i = 0; i < k && !taken; i++) taken = !strcmp(ps[i].name, name.buf);
            if (taken) str_puts(&name, "_");
        }
        if (!(ps[k].name = str_take(&name))) return false;
    }
    return true;
}

/* Names from the Tile IR's header "kernel @NAME(%x: ptr<f32> #div16, %n: i32)" (rt_tir_param_names, the runtime's
 * reader, which its launch messages use too) and types from the signature, into *out (malloc'd, NULL when there
 * are none); the C names come later (aot_name_params), once the export knows its tables.  The count, or -1 (out of
 * memory, or the header or signature not as expected). */
static int kernel_params(const tile_compiled *c, const char *kernel, AotParam **out) {
    char *names = rt_tir_param_names(c->tir, kernel);
    const char *sig = c->kernels[0].signature;
    int n = 0, cap = 0;
    AotParam *ps = NULL;
    *out = NULL;
    if (!names || !sig) {
        free(names);
        return -1;
    }
    for (const char *p = names; *p;) {
        size_t len = strcspn(p, ",");
        if (n == cap) {
            AotParam *grown = realloc(ps, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *grown);
            if (!grown) goto fail;
            ps = grown;
        }
        AotParam *q = &ps[n++];
        *q = (AotParam){0};
        q->tile_name = strndup(p, len);
        while (*sig == ' ' || *sig == ',') sig++;
        q->ctype = c_type(sig);
        if (!q->tile_name || !q->ctype) goto fail;
        while (*sig && *sig != ',') sig++;
        p += len + (p[len] == ',');
    }
    free(names);
    *out = ps;
    return n;
fail:
    free(names);
    aot_params_free(ps, n);
    return -1;
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

/* A refusal before anything is written: *msg says why, naming tile_aot_export as every function's message
 * names the function (the CLI's `tile aot` prints it as it is). */
static tile_status aot_refuse(char **msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tile_status aot_refuse(char **msg, const char *fmt, ...) {
    if (msg) {
        Str m = {0};
        str_printf(&m, "tile_aot_export: ");
        va_list ap;
        va_start(ap, fmt);
        str_vprintf(&m, fmt, ap);
        va_end(ap);
        str_puts(&m, "\n");
        *msg = str_take(&m);
    }
    return TILE_ERROR_INVALID_VALUE;
}

/* Whether the C library this process runs with (libc, libm) exports name, a function or an object: a program
 * defining a function of that name would take the place of the C library's own (for libtile_rt's calls too).
 * *lib: the library's file name. */
static bool aot_libc_symbol(const char *name, char *lib, size_t lib_size) {
    static const char *const libs[] = {"libc.so.6", "libm.so.6", "libc.so", "libm.so"};
    for (size_t i = 0; i < ARRAY_LEN(libs); i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void *sym = dlsym(h, name);
        dlclose(h);
        if (sym) {
            snprintf(lib, lib_size, "%s", libs[i]);
            return true;
        }
    }
    return false;
}

/* Why the generated C may not declare a function named n (NULL: it may), written into why: it must be an
 * identifier that is not a C or C++ keyword, not main, not reserved (__..., _X...), not in tile.h's name
 * spaces (tile_, TILE_), not a type or macro of the standard headers (..._t, c_std_name), and not a symbol of
 * the C library (aot_libc_symbol): free, clock, time, select, index, write. */
static const char *aot_cname_refusal(const char *n, char *why, size_t why_size) {
    char lib[32];
    bool ident = *n && !isdigit((unsigned char)*n);
    for (const char *p = n; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') ident = false;
    size_t len = strlen(n);
    if (!ident) snprintf(why, why_size, "is not a C identifier");
    else if (c_keyword(n)) snprintf(why, why_size, "is a C or C++ keyword");
    else if (!strcmp(n, "main")) snprintf(why, why_size, "is the program's main");
    else if (!strncmp(n, "__", 2) || (n[0] == '_' && isupper((unsigned char)n[1])))
        snprintf(why, why_size, "is reserved to the C implementation (it starts with __ or _ and a capital)");
    else if (!strncmp(n, "tile_", 5) || !strncmp(n, "TILE_", 5)) snprintf(why, why_size, "is in tile.h's name space (tile_, TILE_)");
    else if ((len >= 2 && !strcmp(n + len - 2, "_t")) || c_std_name(n))
        snprintf(why, why_size, "is a type or macro name of the C or C++ standard headers");
    else if (aot_libc_symbol(n, lib, sizeof lib))
        snprintf(why, why_size, "is a symbol of the C library (%s): a program defining it would have the C library's own calls reach it", lib);
    else return NULL;
    return why;
}

/* text (a path, a variant) inside a C comment: printable ASCII as it is, but for a backslash between "*" and
 * "/", "/" and "*" or two "?" (so that the comment neither ends nor nests, nor holds a trigraph, which C99's
 * strict modes replace), and \xNN for any other byte (a newline among them). */
static void put_comment_text(Str *s, const char *text) {
    char prev = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        char c = (char)*p;
        if (*p < 0x20 || *p > 0x7e) {
            str_printf(s, "\\x%02x", *p);
            c = 0;
        } else {
            if ((prev == '*' && c == '/') || (prev == '/' && c == '*') || (prev == '?' && c == '?')) str_puts(s, "\\");
            str_printf(s, "%c", c);
        }
        prev = c;
    }
}

tile_status tile_aot_export(const char *path, const tile_compile_options *opt, const char *const *kernels,
                            const char *const *variants, const char *out, char **msg) {
    if (msg) *msg = NULL;
    if (!path || !kernels || !kernels[0] || !out)
        return aot_refuse(msg, "%s", !path ? "path is NULL" : !out ? "out is NULL" : "no kernel named (kernels is NULL or empty)");
    int nk = 0;
    while (kernels[nk]) nk++;
    /* "NAME" or "NAME=CNAME": the kernel of the .tile file, and the C name of its launch function */
    char(*tname)[256] = calloc((size_t)nk, sizeof *tname), (*cname)[256] = calloc((size_t)nk, sizeof *cname);
    tile_status st = tname && cname ? TILE_OK : TILE_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < nk && st == TILE_OK; i++) {
        const char *eq = strchr(kernels[i], '=');
        size_t tl = eq ? (size_t)(eq - kernels[i]) : strlen(kernels[i]);
        const char *c = eq ? eq + 1 : kernels[i];
        bool tile_ident = tl && !isdigit((unsigned char)kernels[i][0]);
        for (size_t j = 0; j < tl; j++)
            if (!isalnum((unsigned char)kernels[i][j]) && kernels[i][j] != '_') tile_ident = false;
        char why[160];
        if (!tile_ident) st = aot_refuse(msg, "kernel '%s': not a kernel name (NAME, or NAME=CNAME to name its launch function CNAME)", kernels[i]);
        else if (tl >= sizeof *tname || strlen(c) >= sizeof *cname)
            st = aot_refuse(msg, "kernel '%.60s...': a name over %zu characters", kernels[i], sizeof *tname - 1);
        else if (aot_cname_refusal(c, why, sizeof why))
            st = aot_refuse(msg, "kernel '%.*s': its launch function would be named '%s', which %s; export it under another C name: "
                                 "--kernel %.*s=CNAME or --prefix P (tile_aot_export: \"%.*s=CNAME\")",
                            (int)tl, kernels[i], c, why, (int)tl, kernels[i], (int)tl, kernels[i]);
        else {
            snprintf(tname[i], sizeof *tname, "%.*s", (int)tl, kernels[i]);
            snprintf(cname[i], sizeof *cname, "%s", c);
        }
        for (int j = 0; j < i && st == TILE_OK; j++)
            if (!strcmp(tname[i], tname[j])) st = aot_refuse(msg, "kernel '%s' is named twice", tname[i]);
            else if (!strcmp(cname[i], cname[j]))
                st = aot_refuse(msg, "kernels '%s' and '%s' would both be the C function '%s'", tname[j], tname[i], cname[i]);
    }
    for (int i = 0; i < nk && st == TILE_OK; i++)
        for (int j = 0; j < nk && st == TILE_OK; j++)
            if (i != j && aot_generated_name(cname[i], cname[j]))
                st = aot_refuse(msg, "kernel '%s': its C name '%s' is one the generated C declares for kernel '%s' (%s_aot_unload, %s_slots, "
                                     "%s_block, %s_smem, %s_ptx_N, %s_cubin_N): export them separately or under other C names",
                                tname[i], cname[i], tname[j], cname[j], cname[j], cname[j], cname[j], cname[j], cname[j]);
    tile_compile_options base;
    char oerr[200];
    if (st == TILE_OK && !jit_options_in(opt, &base, oerr, sizeof oerr)) {
        if (msg) {
            Str m = {0};
            str_printf(&m, "tile_aot_export: %s\n", oerr);
            *msg = str_take(&m);
        }
        st = TILE_ERROR_INVALID_VALUE;
    }
    const char *stem = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
    if (st == TILE_OK && !*stem) st = aot_refuse(msg, "-o '%s' names no file (OUT.h and OUT.c are written)", out);
    for (const char *q = stem; *q && st == TILE_OK; q++)
        if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20 || (q[0] == '?' && q[1] == '?'))
            st = aot_refuse(msg, "-o '%s': the file name goes into an #include, so it may not hold quotes, backslashes, control characters "
                                 "or \"??\" (a trigraph in C99)", out);
    if (st != TILE_OK) {
        free(tname), free(cname);
        return st;
    }
    /* the include guard, one per file name: letters and digits as they are, any other byte as _XX (add-aot and
     * add_aot, or Add and add, are two headers a program may include together), never two '_' in a row */
    Str guard = {0};
    str_puts(&guard, "TILE_AOT_F");
    for (const unsigned char *g = (const unsigned char *)stem; *g; g++)
        str_printf(&guard, isalnum(*g) ? "%c" : "_%02X", *g);
    str_puts(&guard, "_H");
    Str h = {0}, c = {0}, err = {0};
    str_printf(&h, "/* %s.h - generated by `tile aot` from ", stem);
    put_comment_text(&h, path);
    str_printf(&h, ": do not edit. */\n#ifndef %s\n#define %s\n\n#include <tile/tile.h>\n\n", guard.buf, guard.buf);
    str_free(&guard);
    str_puts(&h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    str_printf(&c, "/* %s.c - generated by `tile aot` from ", stem);
    put_comment_text(&c, path);
    /* no system header: the kernels and their parameters may be named as the C library's functions and macros */
    str_printf(&c, ": do not edit.  It includes no header but %s.h (tile.h): libtile_rt loads the kernels. */\n#include \"%s.h\"\n\n",
               stem, stem);
    int nvar = 0;
    while (variants && variants[nvar]) nvar++;
    for (int ki = 0; ki < nk && st == TILE_OK; ki++) {
        const char *kn = tname[ki], *cn = cname[ki];
        AotParam *ps = NULL;
        int np = -1;
        Str *conds = calloc((size_t)nvar + 1, sizeof *conds); /* per variant, what its signature assumes of the values */
        /* per variant, its block's threads and its dynamic shared memory (0: none, all static) */
        unsigned *threads = calloc((size_t)nvar + 1, sizeof *threads), *dyn = calloc((size_t)nvar + 1, sizeof *dyn);
        char **sigs = calloc((size_t)nvar + 1, sizeof *sigs); /* per variant, its signature: conds once the names are known */
        bool *cubins = calloc((size_t)nvar + 1, sizeof *cubins); /* per variant, whether it has a cubin (k_cubin_V) */
        int any_dyn = 0;
        if (!conds || !threads || !dyn || !sigs || !cubins) {
            free(conds), free(threads), free(dyn), free(sigs), free(cubins);
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
                np = kernel_params(&cc, kn, &ps);
                if (np < 0) {
                    str_printf(&err, "tile_aot_export: cannot read the parameters of '%s'\n", kn);
                    st = TILE_ERROR_INTERNAL;
                    tile_compiled_free(&cc);
                    break;
                }
            }
            if (v < nvar && !(sigs[v] = strdup(cc.kernels[0].signature ? cc.kernels[0].signature : ""))) {
                st = TILE_ERROR_OUT_OF_MEMORY;
                tile_compiled_free(&cc);
                break;
            }
            threads[v] = 32u * (unsigned)cc.kernels[0].num_warps;
            dyn[v] = cc.kernels[0].smem_dynamic ? (unsigned)cc.kernels[0].smem_bytes : 0;
            any_dyn |= dyn[v] != 0;
            str_printf(&c, "/* %s, %s: ", kn, v < nvar ? "variant" : "generic");
            put_comment_text(&c, v < nvar ? variants[v] : "no specialization");
            str_printf(&c, " (PTX text, NUL-terminated) */\nstatic const unsigned char %s_ptx_%d[] = {", cn, v);
            put_c_bytes(&c, cc.ptx);
            str_puts(&c, "};\n");
            if (cc.cubin) {
                cubins[v] = true;
                str_printf(&c, "const unsigned char %s_cubin_%d[%zu] = {", cn, v, cc.cubin_size);
                for (size_t i = 0; i < cc.cubin_size; i++) str_printf(&c, "%s%u,", i % 24 ? "" : "\n    ", ((unsigned char *)cc.cubin)[i]);
                str_puts(&c, "\n};\n");
                str_printf(&h, "extern const unsigned char %s_cubin_%d[%zu]; /* %s, for the CUDA driver: block %u threads, %u bytes of dynamic shared memory */\n",
                           cn, v, cc.cubin_size, target_find(base.arch) ? target_find(base.arch)->name : base.arch, threads[v], dyn[v]);
            }
            tile_compiled_free(&cc);
        }
        /* the C names, now that the tables are known (a parameter k_smem shadows a table only where there is one) */
        if (st == TILE_OK && !aot_name_params(ps, np, cn, nvar, cubins, any_dyn)) st = TILE_ERROR_OUT_OF_MEMORY;
        for (int v = 0; v < nvar && st == TILE_OK; v++) aot_conditions(sigs[v], ps, np, &conds[v]);
        for (int v = 0; v < nvar; v++) free(sigs[v]);
        free(sigs), free(cubins);
        if (st != TILE_OK) {
            for (int v = 0; v < nvar; v++) str_free(&conds[v]);
            free(conds), free(threads), free(dyn);
            aot_params_free(ps, np);
            break;
        }
        /* declaration */
        Str proto = {0};
        str_printf(&proto, "tile_status %s(tile_context *ctx, tile_dim3 grid", cn);
        for (int i = 0; i < np; i++) str_printf(&proto, ", %s %s", ps[i].ctype, ps[i].name);
        str_puts(&proto, ", tile_stream stream)");
        str_printf(&h, "/* Launch %s (block and shared memory from its build); loads into ctx on first use. */\n%s;\n\n", kn, proto.buf);
        str_printf(&c, "static tile_aot_table %s_slots[%d];\n", cn, nvar + 1);
        if (any_dyn) { /* raw PTX names its block (.reqntid) but not its dynamic shared memory: the launch passes both */
            str_printf(&c, "static const tile_dim3 %s_block[%d] = {", cn, nvar + 1);
            for (int v = 0; v <= nvar; v++) str_printf(&c, "%s{%uu, 1u, 1u}", v ? ", " : "", threads[v]);
            str_printf(&c, "};\nstatic const unsigned %s_smem[%d] = {", cn, nvar + 1);
            for (int v = 0; v <= nvar; v++) str_printf(&c, "%s%uu", v ? ", " : "", dyn[v]);
            str_puts(&c, "}; /* dynamic shared memory */\n");
        }
        str_printf(&c, "\n%s {\n    int v = %d;\n", proto.buf, nvar);
        /* a context that is not live: the table's message names `name`, so a launcher under another C name than
         * its kernel's passes its own there (the message names the function called) */
        if (strcmp(kn, cn))
            str_printf(&c, "    if (!tile_context_id(ctx)) return tile_aot_table_kernel(&%s_slots[0], 0, \"%s\", ctx, 0);\n", cn, cn);
        for (int v = nvar - 1; v >= 0; v--) str_printf(&c, "    if (%s) v = %d;\n", conds[v].len ? conds[v].buf : "1", v);
        str_printf(&c, "    static const char *const ptx[] = {");
        for (int v = 0; v <= nvar; v++) str_printf(&c, "%s(const char *)%s_ptx_%d", v ? ", " : "", cn, v);
        str_printf(&c, "};\n    tile_kernel *k;\n    tile_status st = tile_aot_table_kernel(&%s_slots[v], ptx[v], \"%s\", ctx, &k);\n"
                       "    if (st != TILE_OK) return st;\n    void *args[] = {",
                   cn, kn);
        for (int i = 0; i < np; i++) str_printf(&c, "%s&%s", i ? ", " : "", ps[i].name);
        str_puts(&c, np ? "};\n" : "0};\n");
        if (any_dyn) str_printf(&c, "    return tile_launch_raw(k, grid, %s_block[v], %s_smem[v], args, stream);\n}\n\n", cn, cn);
        else str_puts(&c, "    return tile_launch(k, grid, args, stream);\n}\n\n");
        str_printf(&h, "/* Release the modules of %s loaded into ctx. */\nvoid %s_aot_unload(tile_context *ctx);\n\n", kn, cn);
        str_printf(&c, "void %s_aot_unload(tile_context *ctx) {\n    for (int v = 0; v < %d; v++) tile_aot_table_release(&%s_slots[v], ctx);\n}\n\n",
                   cn, nvar + 1, cn);
        str_free(&proto);
        for (int v = 0; v < nvar; v++) str_free(&conds[v]);
        free(conds), free(threads), free(dyn);
        aot_params_free(ps, np);
    }
    if (st == TILE_OK) {
        str_puts(&h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
        Str hname = {0}, cname_file = {0};
        str_printf(&hname, "%s.h", out);
        str_printf(&cname_file, "%s.c", out);
        /* both written beside their names first, then renamed into place (the .c first: a program keeps building
         * from the old pair until the new header lands), so that a failed write leaves the files as they were; a
         * symbolic link to a file keeps pointing at it, its target replaced */
        char *hdst = outfile_target(hname.buf), *cdst = outfile_target(cname_file.buf);
        char *ht = NULL, *ct = NULL;
        errno = ENOMEM;
        const char *failed = !hdst ? hname.buf : !cdst ? cname_file.buf : NULL;
        if (!failed) failed = !outfile_write_beside(hdst, h.buf, h.len, &ht) ? hname.buf : !outfile_write_beside(cdst, c.buf, c.len, &ct) ? cname_file.buf : NULL;
        if (!failed && rename(ct, cdst)) failed = cname_file.buf;
        else if (!failed && rename(ht, hdst)) failed = hname.buf;
        if (failed) {
            int e = errno;
            if (ht) unlink(ht);
            if (ct) unlink(ct);
            str_printf(&err, "tile_aot_export: cannot write %s: %s\n", failed, strerror(e));
            st = TILE_ERROR_IO;
        }
        free(ht), free(ct), free(hdst), free(cdst);
        str_free(&hname), str_free(&cname_file);
    }
    if (msg) *msg = err.buf ? str_take(&err) : NULL;
    str_free(&err), str_free(&h), str_free(&c);
    free(tname), free(cname);
    return st;
}

/* ptx_header.c - what the launcher reads from a raw PTX module's text without the emulator or the driver:
 * the names after ".entry", and an entry's parameters and block from its header (tile_module_get_kernel).
 *
 * Raw PTX: the parameters and block of ".entry NAME(.param .u64 .ptr .global .align 1 a, .param .align 8 .b8 s[24],
 * ...) .maxntid 128, 1, 1" (or .reqntid), read from the header alone.  Each parameter's size (a byte array's
 * whole size) and the signature tile_kernel_attributes shows for it: the PTX type ("u64", "f32"), "ptr" for a
 * .ptr-qualified one, "b8[24]" for an array (a struct passed by value).
 *
 * Both read the text with its comments blanked (ptx_code): an entry, a parameter or a .maxntid inside a comment
 * (nvcc and hand-written PTX keep old ones there) is none, as the emulator's lexer and ptxas read it.  This file
 * is the one reader of those headers: the Python package lists a module's entries through
 * tile_module_get_kernel_names. */
#include "runtime/rt_state.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ptx_word(const char *p, const char *end, char *w, size_t cap) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    size_t n = 0;
    if (p < end && (*p == '[' || *p == ']' || *p == ',')) w[n++] = *p++;
    else
        while (p < end && !strchr(" \t\r\n[],", *p)) {
            if (n + 1 < cap) w[n++] = *p;
            p++;
        }
    w[n] = 0;
    return p;
}

/* PTX identifiers: [A-Za-z][A-Za-z0-9_$]* or [_$%][A-Za-z0-9_$]+. */
static bool ptx_ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

/* The name after the ".entry" at p (p + 6), past any white space, or NULL where ".entry" is the start of a longer
 * word (".entry_x"): the emulator's lexer also reads ".entry%k" and ".entry\n k" as the directive and a name. */
static const char *ptx_entry_name_at(const char *p) {
    const char *q = p + 6;
    if (ptx_ident_char(*q)) return NULL;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
    return q;
}

/* ptx with each byte of its comments ("//" to the line's end, "/" "*" to "*" "/") a space, newlines kept, so offsets
 * and lines stay; a string ("...", as .file gives a path) is kept whole, so a "/" "*" in a file name opens no comment.
 * NULL when out of memory. */
static char *ptx_code(const char *ptx) {
    char *s = strdup(ptx);
    if (!s) return NULL;
    for (char *p = s; *p;) {
        if (*p == '"') { /* a string, to its closing quote (a \" inside it escaped) or the line's end */
            for (p++; *p && *p != '"' && *p != '\n'; p++)
                if (*p == '\\' && p[1] && p[1] != '\n') p++;
            if (*p == '"') p++;
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++) *p = ' ';
        } else if (p[0] == '/' && p[1] == '*') {
            char *e = strstr(p + 2, "*/");
            for (char *end = e ? e + 2 : p + strlen(p); p < end; p++)
                if (*p != '\n') *p = ' ';
        } else p++;
    }
    return s;
}

/* The names after ".entry" in ptx outside comments, in order: a NULL-terminated array of malloc'd strings (a name cut
 * at 200 bytes) into *out, their count returned; -1 when out of memory. */
int rt_ptx_entries(const char *ptx, char ***out) {
    *out = NULL;
    char *code = ptx_code(ptx), **names = calloc(1, sizeof *names);
    int n = 0;
    if (!code || !names) goto oom;
    for (const char *p = code; (p = strstr(p, ".entry")); p += 6) {
        const char *q = ptx_entry_name_at(p), *e;
        if (!q) continue;
        for (e = q + (*q == '%'); ptx_ident_char(*e); e++) {
        }
        if (e == q + (*q == '%')) continue;
        char **more = realloc(names, sizeof *names * (size_t)(n + 2));
        if (!more) goto oom;
        names = more;
        if (!(names[n] = strndup(q, (size_t)(e - q > 200 ? 200 : e - q)))) goto oom;
        names[++n] = NULL;
    }
    free(code);
    *out = names;
    return n;
oom:
    for (int i = 0; names && i < n; i++) free(names[i]);
    free(names), free(code);
    return -1;
}

/* The names after ".entry" in ptx, ", "-separated, into out (the first 16). */
void rt_ptx_entry_names(const char *ptx, Str *out) {
    char **names;
    int n = rt_ptx_entries(ptx, &names);
    for (int i = 0; i < n; i++) {
        if (i < 16) str_printf(out, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
    if (n > 16) str_printf(out, ", ... (%d in all)", n);
    free(names);
}

static void ptx_entry_layout(const char *ptx, const char *name, tile_kernel *k);

void rt_ptx_entry_layout(const char *ptx, const char *name, tile_kernel *k) {
    char *code = ptx_code(ptx);
    if (code) ptx_entry_layout(code, name, k); /* out of memory: the launch checks nothing, as for PTX we cannot read */
    free(code);
}

static void ptx_entry_layout(const char *ptx, const char *name, tile_kernel *k) {
    size_t nl = strlen(name);
    const char *p = ptx;
    for (; (p = strstr(p, ".entry")); p += 6) { /* ".entry NAME" followed by "(", "{" or ".": not a longer name */
        const char *t = ptx_entry_name_at(p);
        if (!t || strncmp(t, name, nl)) continue;
        t += nl;
        while (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r') t++;
        if (*t == '(' || *t == '{' || *t == '.') break;
    }
    if (!p) return;
    const char *body = strchr(p, '{');
    if (!body) return;
    const char *open = strchr(p, '('), *close = open && open < body ? strchr(open, ')') : NULL;
    if (close && close > body) return;
    int n = 0, cap = 16;
    uint8_t *size = malloc((size_t)cap); /* each parameter's bytes, at most 255 (only tensor maps read them) */
    uint8_t *spec = calloc((size_t)cap, 1); /* a .ptr parameter's .align N (N > 1): the code may assume it */
    bool *isptr = calloc((size_t)cap, sizeof *isptr); /* a .ptr parameter: its value must be null or memory of the context */
    if (!size || !spec || !isptr) { /* out of memory: the launch checks nothing, as for PTX we cannot read */
        free(size), free(spec), free(isptr);
        return;
    }
    Str sig = {0}, names = {0};
    str_printf(&sig, "%s", "");
    str_printf(&names, "%s", "");
    for (const char *q = open && close ? open + 1 : NULL; q && q < close;) {
        char w[64], type[16] = "", tail[32] = "", pname[64] = "";
        q = ptx_word(q, close, w, sizeof w);
        if (!*w) break;
        if (strcmp(w, ".param")) continue; /* a separator or something unexpected: skip it */
        bool ptr = false;
        unsigned count = 0, bits = 0, align = 0;
        for (;;) { /* qualifiers, the type, the name, an optional [count], up to ',' */
            const char *r = ptx_word(q, close, w, sizeof w);
            if (!*w || !strcmp(w, ",")) {
                q = r;
                break;
            }
            q = r;
            if (!strcmp(w, ".align")) {
                q = ptx_word(q, close, w, sizeof w);
                if (ptr) align = (unsigned)strtoul(w, NULL, 10); /* .ptr .global .align N: of the address */
            } else if (!strcmp(w, ".ptr")) ptr = true;
            else if (w[0] == '.' && (w[1] == 'u' || w[1] == 's' || w[1] == 'b' || w[1] == 'f') && w[2] >= '0' && w[2] <= '9') {
                bits = (unsigned)atoi(w + 2);
                snprintf(type, sizeof type, "%.15s", w + 1);
            } else if (!strcmp(w, "[")) {
                q = ptx_word(q, close, w, sizeof w);
                count = (unsigned)strtoul(w, NULL, 10);
                q = ptx_word(q, close, w, sizeof w); /* ] */
                snprintf(tail, sizeof tail, "[%u]", count);
            } else if (w[0] != '.') snprintf(pname, sizeof pname, "%s", w); /* the parameter's name */
        }
        if (n == cap) {
            uint8_t *more = realloc(size, (size_t)cap * 2), *more_spec = more ? realloc(spec, (size_t)cap * 2) : NULL;
            bool *more_ptr = more_spec ? realloc(isptr, sizeof *isptr * (size_t)cap * 2) : NULL;
            if (more) size = more;
            if (more_spec) spec = more_spec;
            if (more_ptr) isptr = more_ptr;
            if (!more || !more_spec || !more_ptr) {
                free(size), free(spec), free(isptr), str_free(&sig), str_free(&names);
                return;
            }
            memset(spec + cap, 0, (size_t)cap);
            memset(isptr + cap, 0, sizeof *isptr * (size_t)cap);
            cap *= 2;
        }
        uint32_t bytes = (bits >= 8 ? bits / 8 : 1) * (count ? count : 1);
        spec[n] = ptr && align > 1 && align <= 128 && !(align & (align - 1)) ? (uint8_t)align : 0;
        k->any_spec |= spec[n] != 0;
        isptr[n] = ptr && bits == 64 && !count;
        k->any_ptr |= isptr[n];
        size[n++] = (uint8_t)(bytes > 255 ? 255 : bytes);
        str_printf(&sig, "%s%s%s", n > 1 ? ", " : "", ptr ? "ptr" : *type ? type : "b64", tail);
        str_printf(&names, "%s%s", n > 1 ? "," : "", *pname ? pname : "?");
    }
    k->nparams = n;
    k->param_size = size;
    k->param_spec = spec;
    k->param_ptr = isptr;
    k->raw_signature = sig.buf;
    k->param_names = names.buf;
    const char *hdr = close ? close : p;
    for (const char *dir = hdr; dir < body; dir++) { /* .maxntid / .reqntid x[, y[, z]] */
        if (*dir != '.' || (strncmp(dir, ".maxntid", 8) && strncmp(dir, ".reqntid", 8))) continue;
        char *e;
        unsigned d[3] = {1, 1, 1};
        const char *v = dir + 8;
        for (int i = 0; i < 3; i++) {
            d[i] = (unsigned)strtoul(v, &e, 10);
            if (e == v) break;
            v = e;
            while (*v == ' ' || *v == '\t') v++;
            if (*v != ',') break;
            v++;
        }
        k->block3 = (tile_dim3){d[0] ? d[0] : 1, d[1] ? d[1] : 1, d[2] ? d[2] : 1};
        /* ptxas takes any 32-bit counts (.reqntid 65536, 65536 wrapped to 0 threads here): the product saturates
         * at INT32_MAX, so the attributes say "too many" and a launch is refused by the block limit */
        unsigned __int128 threads = (unsigned __int128)k->block3.x * k->block3.y * k->block3.z; /* 2^22 * 2^22 * 2^20 wrapped 64 bits to 0 */
        k->block = threads > INT32_MAX ? INT32_MAX : (unsigned)threads;
        break;
    }
}

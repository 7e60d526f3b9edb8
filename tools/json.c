/* json.c - the JSON writer (see json.h). */
#include "tools/json.h"

#include <math.h>

void json_write_string(FILE *f, const char *s) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') fputc('\\', f), fputc((int)c, f), p++;
        else if (c < 0x20) {
            const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
            if (esc) fputs(esc, f);
            else fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
            p++;
        } else if (c < 0x80) fputc((int)c, f), p++;
        else {
            /* a UTF-8 sequence: its length from the lead byte, every continuation 10xxxxxx,
             * no overlong form, no surrogate, nothing past U+10FFFF; else one U+FFFD for the byte */
            int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
            bool ok = n > 0;
            for (int i = 1; ok && i < n; i++) ok = (p[i] & 0xc0) == 0x80;
            if (ok && n == 3) ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
            if (ok && n == 4) ok = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
            if (ok) fwrite(p, 1, (size_t)n, f), p += n;
            else fputs("\\ufffd", f), p++;
        }
    }
    fputc('"', f);
}

/* the comma and the key before a value */
static void member(JsonOut *j, const char *key) {
    if (j->started[j->depth]) fputc(',', j->f);
    j->started[j->depth] = true;
    if (key && !j->array[j->depth]) {
        json_write_string(j->f, key);
        fputc(':', j->f);
    }
}

static void open_level(JsonOut *j, const char *key, bool array) {
    member(j, key);
    fputc(array ? '[' : '{', j->f);
    if (j->depth < 15) j->depth++;
    j->started[j->depth] = false;
    j->array[j->depth] = array;
}

void json_begin(JsonOut *j, FILE *f) {
    *j = (JsonOut){.f = f};
    fputc('{', f);
}

void json_close(JsonOut *j) {
    if (!j->depth) return;
    fputc(j->array[j->depth] ? ']' : '}', j->f);
    j->depth--;
}

void json_end(JsonOut *j) {
    while (j->depth) json_close(j);
    fputs("}\n", j->f);
    fflush(j->f);
}

void json_object(JsonOut *j, const char *key) { open_level(j, key, false); }
void json_array(JsonOut *j, const char *key) { open_level(j, key, true); }

void json_str(JsonOut *j, const char *key, const char *v) {
    member(j, key);
    if (v) json_write_string(j->f, v);
    else fputs("null", j->f);
}

void json_int(JsonOut *j, const char *key, int64_t v) {
    member(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void json_uint(JsonOut *j, const char *key, uint64_t v) {
    member(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_num(JsonOut *j, const char *key, double v) {
    member(j, key);
    if (isfinite(v)) fprintf(j->f, "%.9g", v);
    else fputs("null", j->f);
}

void json_bool(JsonOut *j, const char *key, bool v) {
    member(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_null(JsonOut *j, const char *key) {
    member(j, key);
    fputs("null", j->f);
}

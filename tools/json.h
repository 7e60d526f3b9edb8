/* json.h - the one JSON writer of `tile` (every --json goes through it).
 *
 * Every command's --json prints JSON Lines: one object per result, each on
 * its own line, and nothing else on stdout.  A writer builds one object at
 * a time:
 *
 *     JsonOut j;
 *     json_begin(&j, stdout);
 *     json_str(&j, "kernel", "gemm_f16_f32");
 *     json_num(&j, "seconds", 1.5e-3);
 *     json_end(&j);                        -> {"kernel":"gemm_f16_f32","seconds":0.0015}\n
 *
 * Strings are escaped as RFC 8259 asks (quote, backslash, control
 * characters); a byte that is not part of valid UTF-8 becomes U+FFFD, so the
 * output is valid JSON whatever a source name or a message holds.  A number
 * that is not finite is written as null.  Nesting (json_object/json_array
 * with a key, json_close) goes 15 levels deep. */
#ifndef TILE_TOOLS_JSON_H
#define TILE_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct JsonOut {
    FILE *f;
    int depth;
    bool started[16]; /* a value was written at this depth: the next needs a comma */
    bool array[16];   /* this depth is an array: its values have no keys */
} JsonOut;

void json_begin(JsonOut *j, FILE *f); /* "{" */
void json_end(JsonOut *j);            /* closes everything open, then "}\n" and a flush */

/* Members of the open object (key) or values of the open array (key NULL). */
void json_str(JsonOut *j, const char *key, const char *v); /* NULL: null */
void json_int(JsonOut *j, const char *key, int64_t v);
void json_uint(JsonOut *j, const char *key, uint64_t v);
void json_num(JsonOut *j, const char *key, double v);
void json_bool(JsonOut *j, const char *key, bool v);
void json_null(JsonOut *j, const char *key);
void json_object(JsonOut *j, const char *key); /* opens {, closed by json_close */
void json_array(JsonOut *j, const char *key);  /* opens [, closed by json_close */
void json_close(JsonOut *j);

/* s as a JSON string literal, quotes included. */
void json_write_string(FILE *f, const char *s);

#endif

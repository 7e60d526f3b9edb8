/* numparse.h - strict numbers of command-line strings, one copy for the CLI and the benchmark programs
 * (tile_json links it into both): a whole string, no leading space, no trailing junk, in range, or refused. */
#ifndef TILE_TOOLS_NUMPARSE_H
#define TILE_TOOLS_NUMPARSE_H
#include <stdbool.h>
#include <stdint.h>

/* Strict decimal integer of a string: false when malformed or out of range. */
bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* Strict finite number of a string (strtod's forms): false when malformed, not finite, or out of range. */
bool cli_parse_double(const char *s, double lo, double hi, double *out);
/* A benchmark's option value: true with *out set, else "PROG: OPT expects ..., got 'S'" on stderr and false
 * (the program then exits 2, a usage error). */
bool cli_option_int(const char *prog, const char *opt, const char *s, int lo, int hi, int *out);
bool cli_option_double(const char *prog, const char *opt, const char *s, double lo, double hi, double *out);
/* A benchmark's list option, integers separated by commas ("128,256"): the count (1 to max) with out[] set, else
 * "PROG: OPT expects ..., got 'S'" on stderr and -1 (an empty item, a malformed or out-of-range one, too many). */
int cli_option_i64_list(const char *prog, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out, int max);
#endif

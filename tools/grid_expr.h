/* grid_expr.h - the launch grid of `tile tune FILE.tile --grid`.
 *
 * Up to three comma-separated integer expressions over named values (the
 * kernel's --arg values and the configuration's constants):
 *
 *   expr = term {("+" | "-") term}
 *   term = atom {("*" | "/") atom}
 *   atom = INT | NAME | "cdiv" "(" expr "," expr ")" | "(" expr ")"
 *
 * A later binding of a name hides an earlier one.  cdiv(a, b) is the ceiling of a / b (b > 0); INT is
 * decimal, 0x hexadecimal or 0 octal, at most 2^63-1; parentheses and cdiv nest at most 64 deep. */
#ifndef TILE_TOOLS_GRID_EXPR_H
#define TILE_TOOLS_GRID_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Evaluate `grid` into dims (missing dimensions stay 1); false when an
 * expression is malformed, names an unknown value, divides by zero or
 * overflows, or a dimension is outside the launch limits (x 1..2^31-1, y and z 1..65535), with the reason (and its
 * column in `grid`) in why[whylen]. */
bool grid_expr_dims(const char *grid, const char *const *names, const int64_t *vals, int n, unsigned dims[3], char *why, size_t whylen);

#endif

/* canonicalize.h - what the canonicalize pass's two files share (canonicalize.c: steps 1-6 and the
 * driver; canonicalize_stacks.c: step 7, a batched dot's stacks). */
#ifndef TILE_LOWER_CANONICALIZE_H
#define TILE_LOWER_CANONICALIZE_H
#include <stdbool.h>

#include "tir.h"

/* steps 5 and 6 on f: dead code and dead loop-carried values; true if anything went */
bool canon_dce(Func *f);
/* step 7 on f (canonicalize.c's comment); true if anything changed */
bool canon_stacks(Func *f);

#endif

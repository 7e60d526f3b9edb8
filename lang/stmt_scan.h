/* stmt_scan.h - pre-scans of statements for stmt.c's loops and ifs (stmt_scan.c): the names a statement
 * may assign, whether it holds a jump or a return, and nodes code generation synthesizes. */
#ifndef TILE_LANG_STMT_SCAN_H
#define TILE_LANG_STMT_SCAN_H
#include "gen.h"

#define RUNNING "<running>" /* hidden loop-carried flag of a loop with `break` */
#define NEXT_COND "<cond>"  /* hidden: a `while` loop's next condition */
#define RETURNED "<returned>" /* hidden: an i1, whether the path has returned (run-time after an `if` where some did) */
#define JUMPED "<jumped>"     /* hidden: an i1, whether the path left the loop body's iteration (break or continue) */

typedef struct NameSet {
    const char **v;
    int n, cap;
} NameSet;

void collect_assigned(Gen *g, const Node *s, NameSet *out);
bool while_stays_static(Gen *g, const Node *s); /* a `while` whose compile-time condition stays so: unrolled */
bool contains_jump(const Node *s, NodeKind kind);
bool contains_return(const Node *s);
bool always_returns(const Node *s);
bool always_jumps(const Node *s);
Node *synth_node(Gen *g, NodeKind k, Loc loc);
#endif

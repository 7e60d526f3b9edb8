/* stmt_scan.h - what stmt.c shares with the files beside it: pre-scans of statements for its loops and ifs
 * (stmt_scan.c: the names a statement may assign, whether it holds a jump or a return, and nodes code
 * generation synthesizes), and early `return`, `break` and `continue` (early_exit.c: continuations, the
 * hidden flags, the guard). */
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
const Node *first_assign(const Node *s, const char *name); /* the first assignment of name in s */
bool while_stays_static(Gen *g, const Node *s); /* a `while` whose compile-time condition stays so: unrolled */
const char *while_plain_lets(Gen *g, const Node *s); /* the plain lets that keep it from that, or NULL */
bool contains_jump(const Node *s, NodeKind kind);
bool contains_return(const Node *s);
bool always_returns(const Node *s);
bool always_jumps(const Node *s);
Node *synth_node(Gen *g, NodeKind k, Loc loc);

/* A continuation: the statements that follow a statement in the enclosing blocks, up to the body's or the
 * iteration's end. */
typedef struct Cont {
    Node *const *st;
    int n;
    Scope *scope; /* the scope those statements run in */
    const struct Cont *next;
    bool end;      /* the end of the kernel's or fn's body, after st: an implicit `return;` (exit_at_cont_end) */
    bool iter_end; /* the end of a loop body's iteration, after st: JUMPED set, as a `continue` would */
    Scope *kept;   /* a compile-time `if`'s taken branch that returns or jumps, which these statements follow: the
                    * names it declared live on in them (exit_kept_scope), as after a branch that does not */
    const Node *kept_br;
} Cont;

/* stmt.c: a run-time `if` on cond with the branches then and els, each followed by its continuation kt or ke; the
 * variables either may assign merge after it (a guard: then and els NULL, flag RETURNED or JUMPED the one read) */
void gen_if_rt(Gen *g, Loc at_if, ValueId cond, const Node *then, const Node *els, const Cont *kt, const Cont *ke,
               const Cont *rest, const char *flag);
/* stmt.c: the names a compile-time `if`'s taken branch br declared (its scope sc), declared again after it */
void gen_keep_branch_names(Gen *g, const Scope *sc, const Node *br, const Cont *rest);

/* early_exit.c */
void exit_return(Gen *g, const Node *s);                     /* a `return` statement */
void exit_jump(Gen *g, const Node *s);                       /* a `break` or `continue` */
bool exit_at_cont_end(Gen *g, const Cont *k);                /* k's end reached: RETURNED or JUMPED set; false: no end */
Scope *exit_kept_scope(Gen *g, const Cont *k, Scope *sc);    /* sc, current, with the names of k's kept branch */
bool exit_if_rt(Gen *g, const Node *s, ValueId cond, const Cont *rest); /* a run-time `if`; true: rest generated */
Val exit_fill_unread(Gen *g, Block *b, Val own, Val other, Loc loc);    /* a never-read value merging with other */
#endif

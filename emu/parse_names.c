/* parse_names.c - the parser's name indexes: labels by (name, block) and variables and parameters by name.
 *
 * A kernel may have 100000s of labels and parameters; each label, branch, symbol operand and declaration looked its
 * name up in a linear search, which made loading quadratic (100000 labels against 20000 parameters: about 20 s).
 * Both indexes are open-addressing hash tables (FNV-1a), at most half full, doubled as they fill.
 *
 *   Labels: the table holds label number + 1 (0: empty); a label's key is its name and its { } block.  Labels are
 *   never removed within a function; emu_labels_reset() empties the table for the next one.
 *
 *   Variables and parameters (m->syms, in declaration order): a bucket per distinct name holds the newest symbol of
 *   that name (+ 1, 0: none now), and sym_prev[k] the one before symbol k of the same name, so a name's symbols are
 *   a chain, newest first.  Lookups walk the chain and skip hidden symbols (those of a finished scope); a scope's own
 *   symbols are the chain's entries at or above the scope's first.  Buckets are never emptied: a prototype's
 *   parameters, dropped from m->syms (emu_syms_truncate), leave their name's bucket pointing at the older symbol. */
#include "emu/parse_int.h"

#include <string.h>

static uint32_t name_hash(const char *s, uint32_t len, uint32_t seed) { return hash_fnv1a(s, len, seed); }

/* ---- labels ---- */
int64_t emu_label_find(const Parser *ps, const char *s, uint32_t len, int32_t blk) {
    if (!ps->caplabel_index) return -1;
    uint32_t mask = ps->caplabel_index - 1;
    for (uint32_t h = name_hash(s, len, (uint32_t)blk) & mask;; h = (h + 1) & mask) {
        uint32_t e = ps->label_index[h];
        if (!e) return -1;
        const struct Label *l = &ps->labels[e - 1];
        if (l->blk == blk && l->len == len && memcmp(l->s, s, len) == 0) return e - 1;
    }
}

static void label_index_put(Parser *ps, uint32_t k) {
    uint32_t mask = ps->caplabel_index - 1;
    const struct Label *l = &ps->labels[k];
    uint32_t h = name_hash(l->s, l->len, (uint32_t)l->blk) & mask;
    while (ps->label_index[h]) h = (h + 1) & mask;
    ps->label_index[h] = k + 1;
}

void emu_label_add(Parser *ps, const char *s, uint32_t len) {
    GROW(ps->labels, ps->nlabels, ps->caplabels);
    ps->labels[ps->nlabels++] = (struct Label){s, len, ps->ncode, ps->cur_blk, false};
    if (2 * ps->nlabels > ps->caplabel_index) { /* at most half full */
        uint32_t nc = ps->caplabel_index ? 2 * ps->caplabel_index : 64;
        uint32_t *t = calloc(nc, sizeof *t);
        if (!t) out_of_memory();
        free(ps->label_index);
        ps->label_index = t;
        ps->caplabel_index = nc;
        for (uint32_t k = 0; k < ps->nlabels; k++) label_index_put(ps, k);
    } else {
        label_index_put(ps, ps->nlabels - 1);
    }
}

void emu_labels_reset(Parser *ps) {
    if (ps->nlabels) memset(ps->label_index, 0, ps->caplabel_index * sizeof *ps->label_index);
    ps->nlabels = 0;
}

/* ---- variables and parameters ---- */
/* The bucket of a name: its own, or the empty one where it would go. */
static struct SymName *sym_bucket(const Parser *ps, const char *s, uint32_t len) {
    uint32_t mask = ps->capsym_names - 1;
    for (uint32_t h = name_hash(s, len, 0) & mask;; h = (h + 1) & mask) {
        struct SymName *b = &ps->sym_names[h];
        if (!b->name || (b->len == len && memcmp(b->name, s, len) == 0)) return b;
    }
}

void emu_sym_index_add(Parser *ps, uint32_t k) {
    const char *name = ps->m->syms[k].name;
    uint32_t len = (uint32_t)strlen(name);
    if (2 * (ps->nsym_names + 1) > ps->capsym_names) { /* at most half full */
        uint32_t oc = ps->capsym_names, nc = oc ? 2 * oc : 64;
        struct SymName *old = ps->sym_names;
        ps->sym_names = calloc(nc, sizeof *ps->sym_names);
        if (!ps->sym_names) out_of_memory();
        ps->capsym_names = nc;
        for (uint32_t i = 0; i < oc; i++)
            if (old[i].name) *sym_bucket(ps, old[i].name, old[i].len) = old[i];
        free(old);
    }
    GROW(ps->sym_prev, k, ps->capsym_prev);
    struct SymName *b = sym_bucket(ps, name, len);
    if (!b->name) {
        *b = (struct SymName){name, len, 0};
        ps->nsym_names++;
    }
    ps->sym_prev[k] = b->head;
    b->head = k + 1;
}

void emu_syms_truncate(Parser *ps, uint32_t n) {
    for (uint32_t k = ps->m->nsyms; k-- > n;) { /* newest first: each is its name's newest */
        const char *name = ps->m->syms[k].name;
        sym_bucket(ps, name, (uint32_t)strlen(name))->head = ps->sym_prev[k];
    }
    ps->m->nsyms = n;
}

int32_t emu_sym_find(const Parser *ps, const char *s, uint32_t len, uint32_t from) {
    if (!ps->capsym_names) return -1;
    const struct SymName *b = sym_bucket(ps, s, len);
    if (!b->name) return -1;
    for (uint32_t e = b->head; e && e - 1 >= from; e = ps->sym_prev[e - 1])
        if (!ps->m->syms[e - 1].hidden) return (int32_t)(e - 1);
    return -1;
}

/* ---- constant slots ---- */
/* Immediates and symbol addresses get a constant slot each per function, shared by equal ones: const_index holds
 * const number + 1 (0: empty) by (value) or (symbol, addend), slot_const the const number + 1 of each slot (0: not
 * a constant).  A function with 100000s of operands searched its constants linearly at each. */
static uint32_t const_hash(uint64_t value, int32_t sym, int64_t addend) {
    uint64_t k = sym >= 0 ? ((uint64_t)(uint32_t)sym << 32 ^ (uint64_t)addend ^ 0x9E3779B97F4A7C15ull) : value;
    k ^= k >> 33, k *= 0xFF51AFD7ED558CCDull, k ^= k >> 33;
    return (uint32_t)k;
}

static bool const_is(const struct Const *c, uint64_t value, int32_t sym, int64_t addend) {
    return c->sym == sym && (sym >= 0 ? c->addend == addend : c->value == value);
}

static void const_index_put(Parser *ps, uint32_t k) {
    uint32_t mask = ps->capconst_index - 1;
    const struct Const *c = &ps->consts[k];
    uint32_t h = const_hash(c->value, c->sym, c->addend) & mask;
    while (ps->const_index[h]) h = (h + 1) & mask;
    ps->const_index[h] = k + 1;
}

uint32_t emu_const_slot(Parser *ps, uint64_t value, int32_t sym, int64_t addend) {
    if (ps->capconst_index) {
        uint32_t mask = ps->capconst_index - 1;
        for (uint32_t h = const_hash(value, sym, addend) & mask; ps->const_index[h]; h = (h + 1) & mask)
            if (const_is(&ps->consts[ps->const_index[h] - 1], value, sym, addend)) return ps->consts[ps->const_index[h] - 1].slot;
    }
    uint32_t slot = ps->nslots++;
    GROW(ps->consts, ps->nconsts, ps->capconsts);
    ps->consts[ps->nconsts++] = (struct Const){value, sym, addend, slot};
    if (2 * ps->nconsts > ps->capconst_index) { /* at most half full */
        uint32_t nc = ps->capconst_index ? 2 * ps->capconst_index : 64;
        free(ps->const_index);
        ps->const_index = calloc(nc, sizeof *ps->const_index);
        if (!ps->const_index) out_of_memory();
        ps->capconst_index = nc;
        for (uint32_t k = 0; k < ps->nconsts; k++) const_index_put(ps, k);
    } else {
        const_index_put(ps, ps->nconsts - 1);
    }
    if (slot >= ps->capslot_const) {
        size_t nc = ps->capslot_const ? 2 * (size_t)ps->capslot_const : 64;
        while (nc <= slot) nc *= 2;
        uint32_t *t = realloc(ps->slot_const, nc * sizeof *t);
        if (!t) out_of_memory();
        memset(t + ps->capslot_const, 0, (nc - ps->capslot_const) * sizeof *t);
        ps->slot_const = t;
        ps->capslot_const = (uint32_t)nc;
    }
    ps->slot_const[slot] = ps->nconsts;
    return slot;
}

int64_t emu_const_at(const Parser *ps, uint32_t slot) {
    return slot < ps->capslot_const ? (int64_t)ps->slot_const[slot] - 1 : -1;
}

void emu_consts_reset(Parser *ps) {
    if (ps->nconsts) memset(ps->const_index, 0, ps->capconst_index * sizeof *ps->const_index);
    for (uint32_t k = 0; k < ps->nconsts; k++) ps->slot_const[ps->consts[k].slot] = 0;
    ps->nconsts = 0;
}

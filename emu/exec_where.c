/* exec_where.c - where a block's threads are, for timeout and deadlock reports: threads grouped by
 * function, instruction, state and CTA, with their linear indices as ranges ("32 threads (linear index
 * 0-31) waiting at a barrier at PTX line 13: bar.sync 0;"). */
#include "emu/exec.h"

typedef struct WhereGroup {
    const EmuFunc *fn;
    uint32_t pc, count, nranges, cta;
    uint8_t state;
    int64_t lo, hi;   /* the open range of linear thread indices */
    Str ranges;
} WhereGroup;

static void where_flush(WhereGroup *g) {
    if (g->lo < 0) return;
    if (g->nranges < 6) {
        if (g->nranges) str_putc(&g->ranges, ',');
        if (g->lo == g->hi) str_printf(&g->ranges, "%lld", (long long)g->lo);
        else str_printf(&g->ranges, "%lld-%lld", (long long)g->lo, (long long)g->hi);
    } else if (g->nranges == 6) {
        str_puts(&g->ranges, ",...");
    }
    g->nranges++;
    g->lo = g->hi = -1;
}

void emu_block_where(EmuBlock *b, Str *s) {
    enum { MAXG = 12 };
    WhereGroup g[MAXG];
    unsigned ng = 0, other = 0;
    enum { NOT_STARTED = EMU_TS_DONE + 1 };
    for (uint32_t i = 0; i < b->nthreads; i++) {
        const EmuThread *t = &b->t[i];
        uint8_t state = t->state == EMU_TS_RUN && t->pc == 0 && t->depth == 0 && t->icount == 0 ? NOT_STARTED : t->state;
        uint32_t pc = state >= EMU_TS_DONE ? 0 : t->pc;
        const EmuFunc *fn = state >= EMU_TS_DONE ? NULL : t->fn;
        uint32_t li = i % b->cta_threads; /* linear index in its CTA */
        unsigned k = 0;
        while (k < ng && !(g[k].fn == fn && g[k].pc == pc && g[k].state == state && g[k].cta == t->cta)) k++;
        if (k == ng) {
            if (ng == MAXG) { other++; continue; }
            g[ng++] = (WhereGroup){fn, pc, 0, 0, t->cta, state, -1, -1, {0}};
        }
        WhereGroup *w = &g[k];
        w->count++;
        if (w->hi >= 0 && w->hi == (int64_t)li - 1) { w->hi = li; continue; }
        where_flush(w);
        w->lo = w->hi = li;
    }
    static const char *const state_text[] = {"running", "waiting at a barrier", "waiting at a warp-synchronous instruction",
                                             "waiting for an mbarrier phase", "spinning on an mbarrier", "waiting at the cluster barrier",
                                             "exited", "not started yet"};
    for (unsigned k = 0; k < ng; k++) {
        WhereGroup *w = &g[k];
        where_flush(w);
        if (k) str_putc(s, '\n');
        str_printf(s, "      %u thread%s (linear index %s", w->count, w->count == 1 ? "" : "s", w->ranges.buf);
        if (b->ncta > 1) {
            const uint32_t *c = b->cta[w->cta].ctaid;
            str_printf(s, " in block (%u,%u,%u)", c[0], c[1], c[2]);
        }
        str_printf(s, ") %s", state_text[w->state]);
        if (w->fn) {
            const EmuIns *in = &w->fn->code[w->pc];
            char line[256], where[600];
            emu_module_line(b->L->m, in->line, line, sizeof line);
            str_printf(s, " at %s", emu_module_where(b->L->m, in->line, where, sizeof where));
            if (w->fn != b->L->f) str_printf(s, " (in .func '%s')", w->fn->name);
            str_printf(s, ": %s", line);
        }
        str_free(&w->ranges);
    }
    if (other) str_printf(s, "\n      %u more threads elsewhere", other);
}

/* pipeline.c - the pass table and the one function that runs the passes in order. */
#include "passes.h"

#include <string.h>
#include <time.h>

const PassInfo tir_passes[] = {
#define X(n, s) {#n, s, lower_##n},
    TIR_PASSES(X)
#undef X
};
const int tir_npasses = (int)ARRAY_LEN(tir_passes);

const PassInfo *pass_lookup(const char *name) {
    for (int i = 0; i < tir_npasses; i++)
        if (!strcmp(tir_passes[i].name, name)) return &tir_passes[i];
    return NULL;
}

static bool run_one(Module *m, const PipelineOptions *o, Diag *d, int idx) {
    const PassInfo *p = &tir_passes[idx];
    double t0 = now_seconds();
    bool ok = p->run(m, d) && !d->nerrors;
    if (o && o->time_passes && o->pass_seconds) o->pass_seconds[idx] += now_seconds() - t0;
    if (ok && o && o->verify && !tir_verify(m, d)) {
        diag_error(d, (Loc){0}, "internal error: IR verification failed after pass '%s'", p->name);
        ok = false;
    }
    if (o && o->dump && o->dump_after && (!strcmp(o->dump_after, "all") || !strcmp(o->dump_after, p->name))) {
        str_printf(o->dump, "// -----// IR after %s //----- //\n", p->name);
        tir_print_module(o->dump, m);
    }
    return ok;
}

/* The pipeline, in order.  Specialization first so constants fold; induction on the
 * folded IR, so that carried pointers advanced by folded steps become functions of the
 * induction variable before software pipelining looks at their loads; identical loads
 * merged on the folded addresses, before the canonicalize that merges what they feed; contraction
 * on the folded IR, before layouts are chosen for the ops it makes; layout after
 * the IR is small; tensor maps right after software pipelining, while its copies'
 * masks still say where the tensor's edges are; peeling after both, so the remainder loop
 * continues the steady state's pipeline instead of starting its own; the
 * scratch-memory passes last, once every op that needs shared memory exists. */
const char *const tir_pipeline_order[] = {"specialize",     "canonicalize",      "induction", "merge_loads",     "canonicalize",
                                          "contract",       "assign_layout",     "remove_convert",    "software_pipeline", "tma",
                                          "warp_specialize", "peel",             "canonicalize",      "smem_alloc",        "barrier",
                                          "pingpong",       "overlap"};
const int tir_pipeline_len = (int)ARRAY_LEN(tir_pipeline_order);

bool tir_run_pipeline(Module *m, const PipelineOptions *o, Diag *d) {
    for (int i = 0; i < tir_pipeline_len; i++) {
        const PassInfo *p = pass_lookup(tir_pipeline_order[i]);
        if (!p) unreachable("pass missing from table");
        if (!run_one(m, o, d, (int)(p - tir_passes))) return false;
    }
    return true;
}

/* target.c - lookups over the target table (support/target.h). */
#include "support/target.h"
#include "include/tile/tile.h"

#include <stdio.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

static const Target targets[TARGET_COUNT] = {
#define X(e, n, sm, ptx, mma, ss, sd, r, d) {TARGET_##e, n, sm, ptx, mma, ss, sd, r},
    TARGETS(X)
#undef X
};

/* exactly one default */
_Static_assert(0
#define X(e, n, sm, ptx, mma, ss, sd, r, d) + (d)
               TARGETS(X)
#undef X
                   == 1,
               "one row of TARGETS is the default");

/* griddepcontrol (target_has_griddepcontrol) needs PTX ISA 7.8: a row of sm_90 or later written in an older
 * .version would make ptxas refuse the kernels that call gdc_wait() */
_Static_assert(1
#define X(e, n, sm, ptx, mma, ss, sd, r, d) &&((sm) < 90 || (ptx) >= TARGET_GRIDDEPCONTROL_PTX)
               TARGETS(X)
#undef X
               , "a target with griddepcontrol writes PTX 7.8 or later");

static TargetId default_id(void) {
#define X(e, n, sm, ptx, mma, ss, sd, r, d) \
    if (d) return TARGET_##e;
    TARGETS(X)
#undef X
    return TARGET_COUNT;
}

const Target *target_get(TargetId id) { return (unsigned)id < TARGET_COUNT ? &targets[id] : NULL; }
const Target *target_default(void) { return &targets[default_id()]; }

const Target *target_find(const char *name) {
    if (!name || !*name) return target_default();
    for (int i = 0; i < TARGET_COUNT; i++)
        if (!strcmp(targets[i].name, name)) return &targets[i];
    return NULL;
}

const Target *target_near(const char *name) {
    char buf[32] = "sm_";
    size_t n = 3;
    if (!name) return NULL;
    /* the number is what names a target: nvcc's virtual compute_80, sm80 or SM80 without the '_', a bare 80 */
    if (!strncasecmp(name, "compute_", 8)) name += 8;
    else if (!strncasecmp(name, "sm_", 3)) name += 3;
    else if (!strncasecmp(name, "sm", 2)) name += 2;
    for (; *name && *name != ' ' && n + 2 < sizeof buf; name++) buf[n++] = (char)tolower((unsigned char)*name);
    buf[n] = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < TARGET_COUNT; i++)
            if (!strcmp(targets[i].name, buf)) return &targets[i];
        if (n + 2 > sizeof buf) break;
        buf[n] = 'a', buf[n + 1] = 0; /* sm_90: the Hopper target is sm_90a */
    }
    return NULL;
}

bool target_runs_on(const Target *t, int cc) {
    size_t len = t ? strlen(t->name) : 0;
    bool arch_specific = len > 0 && t->name[len - 1] == 'a';
    return t && t->sm <= cc && (!arch_specific || t->sm == cc);
}

const Target *target_for_cc(int cc) {
    const Target *best = NULL;
    for (int i = 0; i < TARGET_COUNT; i++)
        if (target_runs_on(&targets[i], cc) && (!best || targets[i].sm > best->sm)) best = &targets[i];
    return best;
}

const Target *target_for_context(const Target *named, const Target *emulated, int cc, char *err, size_t n, bool *older) {
    char names[160];
    *older = false;
    if (emulated) {
        if (!named || named == emulated) return emulated;
        snprintf(err, n, "opt->arch %s differs from the device's %s", named->name, emulated->name);
        return NULL;
    }
    if (!cc) return named ? named : target_default();
    const Target *own = target_for_cc(cc);
    if (named) {
        if (target_runs_on(named, cc)) return named;
        snprintf(err, n, "opt->arch %s does not run on this GPU (compute capability %d.%d)%s%s", named->name, cc / 10, cc % 10,
                 own ? "; its target is " : "", own ? own->name : "");
        return NULL;
    }
    if (own) return own;
    *older = true;
    snprintf(err, n, "the GPU's compute capability %d.%d is older than every target (%s)", cc / 10, cc % 10, target_names(names, sizeof names));
    return NULL;
}

const char *target_names(char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < TARGET_COUNT && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i == 0 ? "" : i == TARGET_COUNT - 1 ? " or " : ", ", targets[i].name);
    return buf;
}

int target_max_smem_dynamic(void) {
    int m = 0;
    for (int i = 0; i < TARGET_COUNT; i++)
        if (targets[i].smem_dynamic > m) m = targets[i].smem_dynamic;
    return m;
}

/* ---- the public API ---- */
const char *tile_target_name(int index) { return index >= 0 && index < TARGET_COUNT ? targets[index].name : NULL; }
const char *tile_target_default(void) { return target_default()->name; }

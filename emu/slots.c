/* slots.c - a kernel's registers placed on fewer register-file slots, reused by liveness.
 *
 * LLVM's PTX names a fresh virtual register for nearly every value, and the parser gives each declared
 * register its own uint64_t slot, so a kernel's register file (1,680 slots for the attention kernel: 13 KiB a
 * thread, 1.6 MiB a 128-thread block) is far larger than what is live at any point, and the interpreter's
 * operand loads wait on the host's caches.  After a module is placed (emu_module_finalize), every kernel that
 * can be analysed gets a second form, EmuFunc.packed: the same instructions with registers renumbered onto
 * fewer slots.  A launch runs the packed form unless EmuOptions.one_slot_per_register asks for the 1:1 one,
 * which stays the reference.  Algorithm, per entry:
 *   1. Refuse (no packed form) a function that is not an entry (its .reg parameters and return values are
 *      written and read by its callers' call and ret), or whose code has a brx.idx (its control flow goes
 *      through a jump table), or whose bit sets of steps 4-5 (instructions + registers, times the registers / 64
 *      words) would pass PACK_MAX_WORDS (a large unrolled kernel).  Those keep one slot per register.  A call
 *      is an instruction like the others: its argument registers (EMU_CALL_REG in its lists) are read, its
 *      return registers written (at the callee's ret, before the caller runs on: read as well as written
 *      here); the callee runs in a frame of its own, so what the entry keeps live across the call stays in
 *      the entry's slots.
 *   2. Classify the slots.  A register is a width-1 declared register (EmuFunc.regnames).  Every other slot
 *      stays *fixed*: the constant slots 0-2, the special registers, immediates and symbol addresses, .b128
 *      registers (two slots), and registers kept whole because their value matters outside the plain
 *      dataflow: every register an asynchronous or warpgroup instruction names (wgmma's accumulators are
 *      written at the wait that retires them and its A registers read until then, the in-flight checks and
 *      their reports go by slot; mbarrier, cp.async.mbarrier.arrive and bulk/tensor copies likewise: cp.async
 *      itself reads its registers when it issues, as a plain load does, so they share slots), and every slot a
 *      .b128 or vector (.v2/.v4/.v8) instruction's register operand reaches (it may read the slots after
 *      it).  Fixed slots keep their order and come first, so slots 0 .. EMU_SLOT_SREG + EMU_SREG_COUNT - 1
 *      keep their numbers.
 *   3. Uses and definitions per instruction: every register it names (guard, operands, vector elements, the
 *      setp/shfl/match/elect/lop3 second destinations) is used, except a destination of an instruction of the
 *      `kills` list below without a guard: that one is defined (killed).  A guarded destination, or one of
 *      an instruction outside the list, is read as well as written, so liveness passes through it: a
 *      predicated write keeps the old value where it does not happen.
 *   4. Liveness over the control-flow graph (bra with its target and, when guarded, the next instruction;
 *      ret/exit/trap without a guard end the path; everything else falls through), iterated backwards to
 *      a fixed point, so loops extend what is live around their back edges.
 *   5. Interference: a destination (written or maybe written) interferes with everything live after its
 *      instruction; all registers one instruction names interfere with each other (executors read sources
 *      after writing some destinations, and a slot at an instruction then names one register, as reports
 *      need); registers live at the entry (read before any write: they read 0) interfere with each other.
 *   6. Greedy colouring in the order registers are first named; colour c is slot (fixed slots) + c.
 *   7. The packed form: code, vector pool, initial slots and the slots of .local addresses renumbered; the
 *      rest (names, parameters, shared data) is the 1:1 form's.  slot_orig maps each packed slot back to the
 *      1:1 slot it stands for where that is one slot (fixed slots: reports name them by their PTX names,
 *      emu_slot_name); a reused slot maps to none. */
#include "emu/exec.h"

#include <stdlib.h>
#include <string.h>

/* Instructions whose first operand is a plain destination, written whole whenever the guard holds. */
static bool kills_first(unsigned op) {
    switch (op) {
    case EMU_OP_MOV: case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_CVTA: case EMU_OP_ISSPACEP: case EMU_OP_CVT:
    case EMU_OP_CVT_PACK: case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MUL: case EMU_OP_MAD: case EMU_OP_ADDC:
    case EMU_OP_SUBC: case EMU_OP_MADC: case EMU_OP_MUL24: case EMU_OP_MAD24: case EMU_OP_SAD: case EMU_OP_FNS:
    case EMU_OP_BMSK: case EMU_OP_SZEXT: case EMU_OP_LOP3: case EMU_OP_DP4A: case EMU_OP_DP2A: case EMU_OP_DIV:
    case EMU_OP_REM: case EMU_OP_ABS: case EMU_OP_NEG: case EMU_OP_MIN: case EMU_OP_MAX: case EMU_OP_FMA: case EMU_OP_RCP:
    case EMU_OP_SQRT: case EMU_OP_RSQRT: case EMU_OP_EX2: case EMU_OP_LG2: case EMU_OP_SIN: case EMU_OP_COS:
    case EMU_OP_TANH: case EMU_OP_COPYSIGN: case EMU_OP_TESTP: case EMU_OP_AND: case EMU_OP_OR: case EMU_OP_XOR:
    case EMU_OP_NOT: case EMU_OP_CNOT: case EMU_OP_SHL: case EMU_OP_SHR: case EMU_OP_SHF: case EMU_OP_SETP:
    case EMU_OP_SET: case EMU_OP_SELP: case EMU_OP_SLCT: case EMU_OP_POPC: case EMU_OP_CLZ: case EMU_OP_BREV:
    case EMU_OP_BFIND: case EMU_OP_BFE: case EMU_OP_BFI: case EMU_OP_PRMT: case EMU_OP_SHFL: case EMU_OP_LDMATRIX:
    case EMU_OP_MMA: case EMU_OP_ATOM: case EMU_OP_ACTIVEMASK:
        return true;
    default: return false;
    }
}

/* Instructions whose registers stay on their own slots (step 2). */
static bool keeps_slots(unsigned op) {
    switch (op) {
    case EMU_OP_WGMMA: case EMU_OP_WGMMA_FENCE: case EMU_OP_WGMMA_COMMIT: case EMU_OP_WGMMA_WAIT: case EMU_OP_SETMAXNREG:
    case EMU_OP_MBARRIER: case EMU_OP_CP_ASYNC_MBAR: case EMU_OP_CP_BULK: case EMU_OP_CP_BULK_TENSOR:
    case EMU_OP_CP_BULK_COMMIT: case EMU_OP_CP_BULK_WAIT: case EMU_OP_CP_BULK_PREFETCH: case EMU_OP_CP_RED_BULK:
    case EMU_OP_CP_RED_BULK_TENSOR: case EMU_OP_ST_ASYNC: case EMU_OP_RED_ASYNC: case EMU_OP_TENSORMAP_REPLACE:
    case EMU_OP_TENSORMAP_CP: case EMU_OP_STMATRIX:
        return true;
    default: return false;
    }
}

/* A slot reference of an instruction: where it is (so the packed form can rewrite it) and whether it is a
 * destination. */
typedef struct Ref {
    uint32_t *at;
    bool dest, reg; /* reg: an EMU_OK_REG operand (which a vector or .b128 instruction may read past) */
    bool tagged;    /* a call's argument or return register: the slot with EMU_CALL_REG */
} Ref;

static inline uint32_t ref_slot(const Ref *r) { return r->tagged ? *r->at & ~EMU_CALL_REG : *r->at; }

enum { REFS_MAX = EMU_MAX_OPS * EMU_MAX_VEC + 4 };

/* Every slot in names (step 3), pointing into in and vec. */
static uint32_t ins_refs(EmuIns *in, uint32_t *vec, Ref *refs) {
    uint32_t n = 0;
    bool w0 = emu_writes_first(in);
    refs[n++] = (Ref){&in->guard, false, false, false};
    for (unsigned k = 0; k < EMU_MAX_OPS; k++) {
        if (in->ok[k] == EMU_OK_REG || in->ok[k] == EMU_OK_ADDR)
            refs[n++] = (Ref){&in->o[k], k == 0 && w0 && in->ok[k] == EMU_OK_REG, in->ok[k] == EMU_OK_REG, false};
        else if (in->ok[k] == EMU_OK_VEC)
            for (unsigned e = 0; e < in->on[k]; e++) refs[n++] = (Ref){&vec[in->o[k] + e], k == 0 && w0, false, false};
    }
    if (in->op == EMU_OP_LOP3 && in->boolop && in->ok[6] != EMU_OK_REG) refs[n++] = (Ref){&in->o[6], true, false, false};
    if ((in->op == EMU_OP_SHFL || in->op == EMU_OP_MATCH || in->op == EMU_OP_ELECT) && in->ok[5] != EMU_OK_REG)
        refs[n++] = (Ref){&in->o[5], true, false, false};
    if (in->op == EMU_OP_CALL) /* (rets) and (args): .param variables, or registers and immediates tagged EMU_CALL_REG */
        for (unsigned k = 0; k <= 2; k += 2)
            for (unsigned e = 0; e < in->on[k]; e++)
                if (vec[in->o[k] + e] & EMU_CALL_REG) refs[n++] = (Ref){&vec[in->o[k] + e], k == 0, false, true};
    if (in->op == EMU_OP_SETP) /* p|q: q is o[4] */
        for (uint32_t i = 0; i < n; i++)
            if (refs[i].at == &in->o[4]) refs[i].dest = true;
    return n;
}

/* The registers live after instruction i (out, W words): the live-in sets of its successors, the next
 * instruction unless it ends the thread or jumps unguarded, and a branch's target. */
static void live_after(const EmuIns *in, uint32_t i, uint32_t nc, const uint64_t *live, size_t W, uint64_t *out) {
    bool guarded = in->guard != EMU_SLOT_TRUE || in->gneg;
    memset(out, 0, W * sizeof *out);
    bool ends = (in->op == EMU_OP_RET || in->op == EMU_OP_EXIT || in->op == EMU_OP_TRAP) && !guarded;
    bool jumps = in->op == EMU_OP_BRA;
    if (!ends && (!jumps || guarded) && i + 1 < nc)
        for (size_t w = 0; w < W; w++) out[w] |= live[(size_t)(i + 1) * W + w];
    if (jumps && in->target < nc)
        for (size_t w = 0; w < W; w++) out[w] |= live[(size_t)in->target * W + w];
}

static bool refusable(const EmuFunc *f) {
    if (!f->is_entry || !f->defined || !f->ncode) return true;
    for (uint32_t i = 0; i < f->ncode; i++)
        if (f->code[i].op == EMU_OP_BRX) return true;
    return false;
}

#define BIT(s, i) ((s)[(i) / 64] >> ((i) % 64) & 1)
#define SET(s, i) ((s)[(i) / 64] |= (uint64_t)1 << ((i) % 64))

void emu_slots_free(EmuFunc *f) {
    EmuFunc *p = f->packed;
    if (!p) return;
    free(p->code);
    free(p->vec);
    free(p->slot_init);
    free(p->local_slots);
    free(p->symfix);
    free(p->slot_orig);
    free(p);
    f->packed = NULL;
}

/* The most 64-bit words steps 4-5 may hold (128 MiB): live sets and interference rows, each as wide as the registers. */
enum { PACK_MAX_WORDS = 16u << 20 };

/* Builds f->packed (steps 1-7); leaves it NULL when f keeps its slots, is too large to analyse or there is no memory. */
void emu_slots_pack(EmuFunc *f) {
    emu_slots_free(f);
    if (refusable(f)) return;
    uint32_t ns = f->nslots, nc = f->ncode;
    /* step 2: register ids of the width-1 declared registers; -1 for the rest */
    int32_t *reg = malloc(ns * sizeof *reg);
    uint8_t *fixed = calloc(ns + 4, 1);
    EmuIns *code = malloc(nc * sizeof *code);
    size_t nvec = 0;
    for (uint32_t i = 0; i < nc; i++)
        for (unsigned k = 0; k < EMU_MAX_OPS; k++)
            if ((f->code[i].ok[k] == EMU_OK_VEC || (f->code[i].op == EMU_OP_CALL && (k == 0 || k == 2))) &&
                (size_t)f->code[i].o[k] + f->code[i].on[k] > nvec)
                nvec = (size_t)f->code[i].o[k] + f->code[i].on[k];
    uint32_t *vec = malloc((nvec + 1) * sizeof *vec);
    Ref *refs = malloc(REFS_MAX * sizeof *refs);
    uint32_t *colour = NULL, *map = NULL;
    uint64_t *live = NULL, *adj = NULL, *seen = NULL;
    EmuFunc *p = NULL;
    if (!reg || !fixed || !code || !vec || !refs) goto done;
    memcpy(code, f->code, nc * sizeof *code);
    if (nvec) memcpy(vec, f->vec, nvec * sizeof *vec);
    for (uint32_t s = 0; s < ns; s++) reg[s] = -1;
    for (uint32_t i = 0; i < f->nregnames; i++) {
        const struct EmuRegName *r = &f->regnames[i];
        if (r->width != 1) continue;
        uint32_t cnt = r->count < 0 ? 1 : (uint32_t)r->count;
        for (uint32_t k = 0; k < cnt && r->base + k < ns; k++) reg[r->base + k] = 0;
    }
    for (uint32_t i = 0; i < nc; i++) {
        EmuIns *in = &code[i];
        uint32_t n = ins_refs(in, vec, refs);
        bool b128 = in->ty == EMU_T_B128 || in->ty2 == EMU_T_B128;
        unsigned vw = in->vec > 1 ? in->vec : 1;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t s = ref_slot(&refs[k]);
            if (s >= ns) continue;
            if (keeps_slots(in->op) || b128) fixed[s] = fixed[s + 1] = 1;
            if (vw > 1 && refs[k].reg) /* a whole vector register: the slots after it */
                for (unsigned e = 0; e < vw && s + e < ns; e++) fixed[s + e] = 1;
        }
    }
    /* register ids, in the order first named (the colouring's order) */
    uint32_t nr = 0;
    for (uint32_t s = 0; s < ns; s++)
        if (fixed[s]) reg[s] = -1;
    for (uint32_t s = 0; s < ns; s++) reg[s] = reg[s] < 0 ? -1 : -2; /* -2: a register not yet named */
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t n = ins_refs(&code[i], vec, refs);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t s = ref_slot(&refs[k]);
            if (s < ns && reg[s] == -2) reg[s] = (int32_t)nr++;
        }
    }
    if (!nr) goto done;
    /* steps 3-4: live-in sets per instruction, to a fixed point */
    size_t W = (nr + 63) / 64;
    /* the live sets (a row per instruction) and the interference rows (a row per register) grow as their product:
     * a kernel past PACK_MAX_WORDS of them (an unrolled 131,072-element tile: 205,000 instructions naming 205,800
     * registers asked for 5.3 GB) keeps one slot per register, as step 1's refusals do */
    if (((size_t)nc + 1 + nr) * W > PACK_MAX_WORDS) goto done;
    live = calloc((size_t)(nc + 1) * W, sizeof *live); /* row nc: nothing live after the end */
    uint64_t *out = malloc(W * sizeof *out);
    if (!live || !out) { free(out); goto done; }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = nc; i-- > 0;) {
            EmuIns *in = &code[i];
            bool guarded = in->guard != EMU_SLOT_TRUE || in->gneg;
            live_after(in, i, nc, live, W, out);
            uint32_t n = ins_refs(in, vec, refs);
            for (uint32_t k = 0; k < n; k++) { /* kills first, then uses (a register both read and written stays) */
                uint32_t s = ref_slot(&refs[k]);
                if (s < ns && reg[s] >= 0 && refs[k].dest && !guarded && kills_first(in->op))
                    out[reg[s] / 64] &= ~((uint64_t)1 << (reg[s] % 64));
            }
            for (uint32_t k = 0; k < n; k++) {
                uint32_t s = ref_slot(&refs[k]);
                if (s < ns && reg[s] >= 0 && !(refs[k].dest && !guarded && kills_first(in->op))) SET(out, (uint32_t)reg[s]);
            }
            uint64_t *row = &live[(size_t)i * W];
            if (memcmp(row, out, W * sizeof *out)) memcpy(row, out, W * sizeof *out), changed = true;
        }
    }
    /* step 5: the interference matrix */
    adj = calloc((size_t)nr * W, sizeof *adj);
    if (!adj) { free(out); goto done; }
    uint32_t mention[REFS_MAX];
    for (uint32_t i = 0; i < nc; i++) {
        EmuIns *in = &code[i];
        live_after(in, i, nc, live, W, out);
        uint32_t n = ins_refs(in, vec, refs), nm = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t s = ref_slot(&refs[k]);
            if (s >= ns || reg[s] < 0) continue;
            uint32_t r = (uint32_t)reg[s];
            mention[nm++] = r;
            if (!refs[k].dest) continue;
            for (size_t w = 0; w < W; w++) adj[(size_t)r * W + w] |= out[w];
            for (size_t w = 0; w < W; w++)
                for (uint64_t m = out[w]; m; m &= m - 1) SET(&adj[(w * 64 + (uint32_t)__builtin_ctzll(m)) * W], r);
        }
        for (uint32_t a = 0; a < nm; a++)
            for (uint32_t b = 0; b < nm; b++) SET(&adj[(size_t)mention[a] * W], mention[b]);
    }
    for (size_t w = 0; w < W; w++) /* live at the entry: each other's */
        for (uint64_t m = live[w]; m; m &= m - 1) {
            uint32_t r = (uint32_t)(w * 64 + (uint32_t)__builtin_ctzll(m));
            for (size_t v = 0; v < W; v++) adj[(size_t)r * W + v] |= live[v];
        }
    free(out);
    /* step 6: greedy colouring */
    colour = malloc(nr * sizeof *colour);
    seen = calloc(nr + 1, sizeof *seen); /* seen[c]: the register whose neighbours last took colour c, + 1 */
    if (!colour || !seen) goto done;
    uint32_t ncol = 0;
    for (uint32_t r = 0; r < nr; r++) {
        for (uint32_t q = 0; q < r; q++)
            if (BIT(&adj[(size_t)r * W], q)) seen[colour[q]] = r + 1;
        uint32_t c = 0;
        while (seen[c] == r + 1) c++;
        colour[r] = c;
        if (c + 1 > ncol) ncol = c + 1;
    }
    /* step 7: the packed form */
    uint32_t nfixed = 0;
    map = malloc(ns * sizeof *map);
    if (!map) goto done;
    for (uint32_t s = 0; s < ns; s++)
        if (reg[s] == -1) map[s] = nfixed++;
    for (uint32_t s = 0; s < ns; s++)
        if (reg[s] >= 0) map[s] = nfixed + colour[reg[s]];
        else if (reg[s] == -2) map[s] = UINT32_MAX; /* a register no instruction names */
    p = malloc(sizeof *p);
    if (!p) goto done;
    *p = *f;
    p->packed = NULL;
    p->nslots = nfixed + ncol;
    p->slot_init = calloc(p->nslots, sizeof *p->slot_init);
    p->slot_orig = malloc(p->nslots * sizeof *p->slot_orig);
    p->local_slots = f->nlocal_slots ? malloc(f->nlocal_slots * sizeof *p->local_slots) : NULL;
    p->symfix = f->nsymfix ? malloc(f->nsymfix * sizeof *p->symfix) : NULL;
    if (!p->slot_init || !p->slot_orig || (f->nlocal_slots && !p->local_slots) || (f->nsymfix && !p->symfix)) {
        free(p->slot_init), free(p->slot_orig), free(p->local_slots), free(p->symfix), free(p);
        p = NULL;
        goto done;
    }
    for (uint32_t s = 0; s < p->nslots; s++) p->slot_orig[s] = UINT32_MAX;
    for (uint32_t s = 0; s < ns; s++) {
        if (reg[s] == -1) p->slot_init[map[s]] = f->slot_init[s], p->slot_orig[map[s]] = s;
        else if (reg[s] >= 0 && f->slot_init[s]) goto bad; /* registers start at 0: anything else is not understood */
    }
    for (uint32_t i = 0; i < f->nlocal_slots; i++) p->local_slots[i] = map[f->local_slots[i]];
    for (uint32_t i = 0; i < f->nsymfix; i++) p->symfix[i] = f->symfix[i], p->symfix[i].slot = map[f->symfix[i].slot];
    /* each vector-pool element rewritten once, however many operands share it */
    uint8_t *vdone = calloc(nvec + 1, 1);
    if (!vdone) goto bad;
    for (uint32_t i = 0; i < nc; i++) {
        EmuIns *in = &code[i];
        uint32_t n = ins_refs(in, vec, refs);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t *at = refs[k].at, s = ref_slot(&refs[k]);
            if (at >= vec && at < vec + nvec) {
                if (vdone[at - vec]) continue;
                vdone[at - vec] = 1;
            }
            if (s < ns) {
                if (map[s] == UINT32_MAX) { free(vdone); goto bad; }
                *at = map[s] | (refs[k].tagged ? EMU_CALL_REG : 0);
            }
        }
    }
    free(vdone);
    p->code = code, code = NULL;
    p->vec = vec, vec = NULL;
    f->packed = p;
    p = NULL;
    goto done;
bad:
    free(p->slot_init), free(p->slot_orig), free(p->local_slots), free(p->symfix), free(p);
    p = NULL;
done:
    free(reg), free(fixed), free(code), free(vec), free(refs), free(colour), free(map), free(live), free(adj), free(seen);
}

/* exec_wgmma.c - warpgroup instructions (wgmma.*, setmaxnreg) and stmatrix.
 *
 * A warpgroup is 4 consecutive warps (threads 128w..128w+127 of the block).
 * The scheduler (exec.c) calls emu_exec_warpgroup once all 128 threads of a
 * warpgroup wait at an instruction of the same warpgroup op; they must be at
 * the same instruction (.aligned).
 *
 * wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype d, a, b-desc, scale-d, ...:
 *   1. Operands: A (64 x K) from a matrix descriptor or from 4 registers per
 *      thread, B (K x N) from a descriptor.  A descriptor (64 bits) holds the
 *      start address (bits 0-13, >> 4), the leading dimension byte offset LBO
 *      (bits 16-29, >> 4), the stride dimension byte offset SBO (bits 32-45,
 *      >> 4), the base offset (bits 49-51: the 128-byte row, within the
 *      swizzle's repeat of 1024/512/256 bytes, that the pattern starts on)
 *      and the swizzle mode (bits 62-63: 0 none, 1 128B, 2 64B, 3 32B).
 *   2. Element (mn, k) of an operand lives at start + off, with T = 16 bytes
 *      / element size elements per 16-byte chunk and W the swizzle width:
 *        K-major,  no swizzle: (mn%8)*16 + (mn/8)*SBO + (k/T)*LBO + (k%T)*es
 *        K-major,  swizzle W:  (mn%8)*W  + (mn/8)*SBO + (k/T)*16  + (k%T)*es
 *        MN-major, no swizzle: (mn%T)*es + (mn/T)*SBO + (k%8)*16  + (k/8)*LBO
 *        MN-major, swizzle W:  (mn%T)*es + ((mn/T)%(W/16))*16 + (mn/T/(W/16))*LBO
 *                              + (k%8)*W + (k/8)*SBO
 *      then the swizzle XORs address bits [4,7) with bits [7,10) (128B),
 *      [4,6) with [7,9) (64B), bit 4 with bit 7 (32B) of the shared address
 *      less the base offset (the row counted from the pattern's start; base
 *      offsets where that and an XOR would differ are refused).
 *      imm-trans-a/b = 1 selects MN-major (f16/bf16 only).  A from registers:
 *      warp w of the warpgroup holds rows 16w..16w+15 as mma.m16n8kK's A
 *      fragment: register j, element e of lane l is row 16w + l/4 + 8(j&1),
 *      column (l%4)E + (j>>1)4E + e (E elements per register).
 *   3. D: thread 32w + l holds, in register r (f32/s32; f16: element r of the
 *      packed pairs), row 16w + l/4 + 8((r>>1)&1), column 8(r>>2) + 2(l%4) + (r&1).
 *   4. Numerics as mma.sync (exec_mma.c): a float D element starts from C
 *      (scale-d != 0) or 0 and takes one f32 fmaf per k ascending; an f16 D
 *      is that result rounded once; integers are exact, wrapped (.satfinite:
 *      clamped).  imm-scale-a/b = -1 negate A/B.
 *   4a. .b1 (m64nNk256.s32.b1.b1.and.popc): A and B are read as bytes of 8 elements (the lowest bit first; A in
 *      registers: 32 a register, bit 0 first), each 0 or 1, so the integer product is popc(row AND column).
 *   4b. wgmma.mma_async.sp (sparse A): sp-meta and sp-sel come after b-desc; A holds the K/2 values each row
 *      keeps, laid out as the dense m64nN(K/2) form's A; sparse_columns places each at the column of B its
 *      metadata names (mma.sp's rules, warp w for rows 16w..16w+15).
 *   5. Asynchrony: the result is computed at issue (the shared memory read
 *      then), kept per thread as pending register values of the open
 *      wgmma-group; commit_group closes the group, wait_group N writes the
 *      results of all but the newest N committed groups to the registers.  A
 *      later wgmma that accumulates into registers still in flight reads the
 *      pending values (chained wgmmas).  Any other instruction that reads or
 *      writes an in-flight accumulator register first ends the wgmma's group
 *      and the ones before it, as the wait ptxas injects there does
 *      (emu_wgmma_check_access, called by the interpreter for every
 *      instruction while a thread has results in flight whose registers
 *      reach into the bounds of its slots in flight: emu_wgmma_may_touch): the PTX ISA leaves
 *      the access undefined, ptxas makes it see the result (info C7517/C7520:
 *      the wgmmas are serialized).  Results are register slots of the frame
 *      that issued the wgmma, so none may outlive it: a call and a ret end
 *      every group in flight first, into the registers of the frame they
 *      leave (emu_wgmma_frame_end), as ptxas serializes wgmma at function
 *      boundaries (info C7510) with a wait it injects there.  The shared memory it read stays read (emu_wgmma_smem_write
 *      reports a write to it) and an A given in registers must keep its
 *      values (checked at the wait, which names the last instruction that
 *      wrote the register meanwhile) until the wait that retires the group: on
 *      a GPU the wgmma may read either any time until then.
 *
 * stmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 [a], {r..}: the inverse
 * of ldmatrix: lanes 8i..8i+7 give the row addresses of matrix i; lane l
 * holds in r[i] the elements (row l/4, cols 2(l%4), +1) of matrix i (.trans:
 * of its transpose), low half first.  Each 16-byte row is checked (memcheck,
 * racecheck) as a write by the lane that gave its address. */
#include "emu/exec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

bool emu_is_warpgroup_op(unsigned op) {
    return op == EMU_OP_WGMMA || op == EMU_OP_WGMMA_FENCE || op == EMU_OP_WGMMA_COMMIT || op == EMU_OP_WGMMA_WAIT ||
           op == EMU_OP_SETMAXNREG;
}

static bool is_f8(unsigned t) { return t == EMU_T_E4M3 || t == EMU_T_E5M2; }
static bool is_i8(unsigned t) { return t == EMU_T_S8 || t == EMU_T_U8; }

bool emu_wgmma_form(const EmuIns *in, EmuWgmmaForm *f, const char **why) {
    memset(f, 0, sizeof *f);
    *why = NULL;
    f->sparse = in->xflags & EMU_XF_MMA_SP; /* .sp: K twice the dense form's, A holding half of it */
    unsigned kk = in->vec ? in->vec : 256; /* the parser's 0: .b1's k256 */
    unsigned d = in->ty, a = in->ty2, bt = in->ty3, k = f->sparse ? kk / 2 : kk;
    f->n = (uint16_t)(in->space2 * 8);
    f->k = (uint16_t)kk;
    if (a == EMU_T_F16 || a == EMU_T_BF16) {
        if (bt != a) { *why = "A and B must have the same type"; return false; }
        if (k != 16) { *why = f->sparse ? "sparse f16/bf16 wgmma is m64nNk32" : "f16/bf16 wgmma is m64nNk16"; return false; }
        if (d != EMU_T_F32 && !(d == EMU_T_F16 && a == EMU_T_F16)) { *why = "D is .f32 (or .f16 with f16 inputs)"; return false; }
        f->esize = 2;
    } else if (a == EMU_T_TF32) {
        if (bt != a) { *why = "A and B must have the same type"; return false; }
        if (k != 8) { *why = f->sparse ? "sparse tf32 wgmma is m64nNk16" : "tf32 wgmma is m64nNk8"; return false; }
        if (d != EMU_T_F32) { *why = "tf32 wgmma accumulates in .f32"; return false; }
        f->esize = 4;
    } else if (is_f8(a)) {
        if (!is_f8(bt)) { *why = "an e4m3/e5m2 A needs an e4m3/e5m2 B"; return false; }
        if (k != 32) { *why = f->sparse ? "sparse e4m3/e5m2 wgmma is m64nNk64" : "e4m3/e5m2 wgmma is m64nNk32"; return false; }
        if (d != EMU_T_F32 && d != EMU_T_F16) { *why = "e4m3/e5m2 wgmma accumulates in .f32 or .f16"; return false; }
        f->esize = 1;
    } else if (is_i8(a)) {
        if (!is_i8(bt)) { *why = "an s8/u8 A needs an s8/u8 B"; return false; }
        if (k != 32) { *why = f->sparse ? "sparse s8/u8 wgmma is m64nNk64" : "s8/u8 wgmma is m64nNk32"; return false; }
        if (d != EMU_T_S32) { *why = "s8/u8 wgmma accumulates in .s32"; return false; }
        if (f->n > 32 && f->n % 16) { *why = "s8/u8 wgmma's N is 8, 16, 24 or a multiple of 16 from 32 to 256"; return false; }
        f->esize = 1;
        f->integer = true;
    } else if (a == EMU_T_B1) { /* D = C + popc(row of A and column of B) */
        if (bt != a || d != EMU_T_S32 || k != 256 || f->sparse) { *why = ".b1 wgmma is m64nNk256.s32.b1.b1.and.popc"; return false; }
        if (!(in->xflags & EMU_XF_MMA_AND)) { *why = ".b1 wgmma is .and.popc (no .xor)"; return false; }
        if (in->flags & EMU_F(SATFINITE)) { *why = ".satfinite is not for .b1 wgmma"; return false; }
        if (f->n > 32 && f->n % 16) { *why = ".b1 wgmma's N is 8, 16, 24 or a multiple of 16 from 32 to 256"; return false; }
        f->esize = 1; /* loaded as bytes, 8 elements each */
        f->integer = true;
    } else {
        *why = "A/B types are f16, bf16, tf32, e4m3, e5m2, s8, u8 or b1";
        return false;
    }
    if ((in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR)) && a != EMU_T_B1) { *why = ".and.popc is for .b1 wgmma"; return false; }
    if ((in->flags & EMU_F(SATFINITE)) && !f->integer) { *why = ".satfinite is for s32 accumulators"; return false; }
    f->f16acc = d == EMU_T_F16;
    f->nd = (uint8_t)(f->f16acc ? f->n / 4 : f->n / 2);
    if (f->sparse) {
        f->cw = a == EMU_T_TF32 ? 2 : 4;
        f->mthreads = (uint8_t)(f->k / f->cw / 4); /* f16, bf16, tf32: a lane pair; 8-bit: all four lanes */
    }
    return true;
}

/* ---- pending results ---- */
static EmuWgState *wg_state_grow(EmuThread *t) {
    if (!t->wg) {
        t->wg = calloc(1, sizeof *t->wg);
        if (!t->wg) out_of_memory();
    }
    uint32_t words = (t->fn->nslots + 63) / 64;
    if (t->wg->nbusy_words < words) {
        uint64_t *nb = realloc(t->wg->busy, words * sizeof *nb);
        uint64_t *nv = realloc(t->wg->pv, words * 64 * sizeof *nv);
        uint32_t *ng = realloc(t->wg->pg, words * 64 * sizeof *ng);
        if (!nb || !nv || !ng) out_of_memory();
        t->wg->pv = nv;
        t->wg->pg = ng;
        memset(nb + t->wg->nbusy_words, 0, (words - t->wg->nbusy_words) * sizeof *nb);
        t->wg->busy = nb;
        t->wg->nbusy_words = words;
    }
    return t->wg;
}

/* The thread's state, with room for every slot of its function (called for each of 128 threads per wgmma) */
static inline EmuWgState *wg_state(EmuThread *t) {
    return t->wg && t->wg->nbusy_words >= (t->fn->nslots + 63) / 64 ? t->wg : wg_state_grow(t);
}

/* Bits set in x (no popcnt instruction is assumed: __builtin_popcountll calls libgcc) */
static inline uint32_t bits_set(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

void emu_wg_reset(EmuThread *t) {
    EmuWgState *w = t->wg;
    if (!w) return;
    w->n = 0;
    w->open = 0;
    w->nap = 0;
    w->nrd = 0;
    w->wait_round = 0;
    if (w->busy) memset(w->busy, 0, w->nbusy_words * sizeof *w->busy);
}

void emu_wg_free(EmuThread *t) {
    if (!t->wg) return;
    free(t->wg->pv);
    free(t->wg->pg);
    free(t->wg->busy);
    free(t->wg->ap);
    free(t->wg->rd);
    free(t->wg);
    t->wg = NULL;
}

/* Room for one more element in the array *p of n elements (capacity *cap, first capacity `first`). */
static void *room(void *p, uint32_t n, uint32_t *cap, size_t size, uint32_t first) {
    if (n < *cap) return p;
    uint32_t nc = *cap ? *cap * 2 : first;
    void *np = realloc(p, nc * size);
    if (!np) out_of_memory();
    *cap = nc;
    return np;
}

/* Groups below this retire at a wait_group that keeps `keep` pending. */
static uint32_t retire_limit(const EmuWgState *w, uint32_t keep) { return w->open >= keep ? w->open - keep : 0; }

static inline bool busy(const EmuWgState *w, uint32_t slot) {
    return slot / 64 < w->nbusy_words && (w->busy[slot / 64] >> (slot % 64) & 1);
}

static bool retire(EmuBlock *b, EmuThread *t, const EmuIns *in, uint32_t limit);
static void read_retire(EmuBlock *b, EmuWgState *w, uint32_t limit, uint32_t reader);

#define INS_SLOTS_MAX (EMU_MAX_OPS * EMU_MAX_VEC + 3)

/* The registers in names, as the in-flight check sees them: the guard, every operand register, the
 * setp/shfl/match/elect/lop3 extras.  Returns how many (at most INS_SLOTS_MAX). */
static uint32_t ins_slots(const EmuFunc *f, const EmuIns *in, uint32_t *slots) {
    uint32_t ns = 0;
    slots[ns++] = in->guard;
    for (unsigned i = 0; i < in->nops; i++) {
        if (in->ok[i] == EMU_OK_REG || in->ok[i] == EMU_OK_ADDR) slots[ns++] = in->o[i];
        else if (in->ok[i] == EMU_OK_VEC)
            for (unsigned k = 0; k < in->on[i]; k++) slots[ns++] = f->vec[in->o[i] + k];
    }
    if (in->op == EMU_OP_LOP3 && in->boolop) slots[ns++] = in->o[6]; /* lop3.and/.or d|p */
    if (in->op == EMU_OP_SETP || in->op == EMU_OP_SHFL || in->op == EMU_OP_MATCH || in->op == EMU_OP_ELECT) {
        slots[ns++] = in->o[in->op == EMU_OP_SETP ? 4 : 5];
        if (in->op == EMU_OP_SETP) slots[ns++] = in->o[3];
    }
    return ns;
}

/* Built once per launch (exec.c): the check runs for every instruction while results are in flight (the whole
 * main loop of a wgmma GEMM), and walking the operand kinds each time cost more than the lookups themselves. */
bool emu_wgmma_slot_table(const EmuFunc *f, uint32_t **at, uint32_t **slots, uint32_t **span) {
    *at = NULL, *slots = NULL, *span = NULL;
    size_t total = 0;
    bool any = false;
    uint32_t buf[INS_SLOTS_MAX];
    for (uint32_t i = 0; i < f->ncode; i++) {
        any = any || f->code[i].op == EMU_OP_WGMMA;
        total += ins_slots(f, &f->code[i], buf);
    }
    if (!any) return false;
    uint32_t *a = malloc((f->ncode + 1) * sizeof *a), *s = malloc((total + 1) * sizeof *s);
    uint32_t *sp = malloc((2 * (size_t)f->ncode + 1) * sizeof *sp);
    uint8_t *acc = calloc(f->nslots + 1, 1); /* the slots a wgmma of f writes as D: the only ones that are ever busy */
    if (!a || !s || !sp || !acc) { free(a), free(s), free(sp), free(acc); return false; }
    for (uint32_t i = 0; i < f->ncode; i++) {
        const EmuIns *in = &f->code[i];
        if (in->op != EMU_OP_WGMMA) continue;
        unsigned nd = in->ok[0] == EMU_OK_VEC ? in->on[0] : 1;
        for (unsigned k = 0; k < nd; k++) {
            uint32_t slot = in->ok[0] == EMU_OK_VEC ? f->vec[in->o[0] + k] : in->o[0];
            if (slot < f->nslots) acc[slot] = 1;
        }
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->ncode; i++) {
        a[i] = n, n += ins_slots(f, &f->code[i], s + n);
        sp[2 * i] = UINT32_MAX, sp[2 * i + 1] = 0;
        for (uint32_t k = a[i]; k < n; k++) /* constants, special registers and other registers are never busy */
            if (s[k] < f->nslots && acc[s[k]]) {
                if (s[k] < sp[2 * i]) sp[2 * i] = s[k];
                if (s[k] > sp[2 * i + 1]) sp[2 * i + 1] = s[k];
            }
    }
    free(acc);
    a[f->ncode] = n;
    *at = a, *slots = s, *span = sp;
    return true;
}

bool emu_wgmma_check_access(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    EmuWgState *w = t->wg;
    const EmuFunc *f = t->fn; /* every result in flight is this frame's (emu_wgmma_frame_end) */
    uint32_t buf[INS_SLOTS_MAX], ns;
    const uint32_t *slots;
    const EmuLaunch *L = b->L;
    if (f == L->f && L->wg_slot_at) { /* the kernel's own code: from the launch's table */
        uint32_t pc = (uint32_t)(in - f->code);
        slots = L->wg_slots + L->wg_slot_at[pc], ns = L->wg_slot_at[pc + 1] - L->wg_slot_at[pc];
        if (!w->n || L->wg_span[2 * pc] > w->hi || L->wg_span[2 * pc + 1] < w->lo) ns = 0; /* none of them is busy */
    } else {
        ns = ins_slots(f, in, buf), slots = buf;
    }
    for (uint32_t i = 0; i < ns; i++) {
        if (!busy(w, slots[i])) continue;
        /* An accumulator read or written before the wait that retires it: ptxas injects a wait here ("(C7517)
         * warpgroup.wait is injected ... to allow use of registers defined by GMMA"; nvcc -G code and Triton's
         * f16-accumulator dot rely on it), so on a GPU the instruction sees the wgmma's result.  As there: the
         * wgmma's group and the ones before it end now. */
        uint32_t limit = w->pg[slots[i]] + 1, none = 0;
        atomic_compare_exchange_strong(&b->L->early_acc_line, &none, in->line); /* noted after the launch (exec.c) */
        if (!retire(b, t, in, limit)) return false;
        if (w->nrd) read_retire(b, w, limit, t->linear);
    }
    /* a write to an in-flight wgmma's A register: remembered, so that the wait which finds it changed names it */
    if (w->nap && (uint32_t)t->r[in->guard] ^ in->gneg && emu_writes_first(in)) {
        unsigned nd = in->ok[0] == EMU_OK_VEC ? in->on[0] : in->ok[0] == EMU_OK_REG ? 1 : 0;
        for (unsigned k = 0; k < nd; k++) {
            uint32_t slot = in->ok[0] == EMU_OK_VEC ? f->vec[in->o[0] + k] : in->o[0];
            for (uint32_t i = 0; i < w->nap; i++)
                if (w->ap[i].slot == slot) w->ap[i].wline = in->line;
        }
    }
    return true;
}

/* ---- operands ---- */
double emu_elem_value(unsigned ty, uint64_t bits) {
    switch (ty) {
    case EMU_T_F16: return emu_f16_to_f64((uint16_t)bits);
    case EMU_T_BF16: return emu_bf16_to_f64((uint16_t)bits);
    case EMU_T_TF32: return emu_f32((uint32_t)bits & 0xFFFFE000u);
    case EMU_T_F32: return emu_f32((uint32_t)bits);
    case EMU_T_F64: return emu_f64(bits);
    case EMU_T_E4M3: case EMU_T_E5M2: return emu_f8_to_f64((uint8_t)bits, ty == EMU_T_E5M2);
    case EMU_T_S8: return (int8_t)bits;
    case EMU_T_U8: return (uint8_t)bits;
    case EMU_T_S4: return (double)((int32_t)((uint32_t)bits << 28) >> 28);
    case EMU_T_U4: return (double)(bits & 0xF);
    case EMU_T_B1: return (double)(bits & 1);
    case EMU_T_S32: return (int32_t)(uint32_t)bits;
    }
    return 0;
}

typedef struct Desc {
    uint32_t start, lbo, sbo, base, swz; /* swz: 0 none, 1 128B, 2 64B, 3 32B */
} Desc;

static Desc desc_decode(uint64_t d) {
    return (Desc){(uint32_t)(d & 0x3FFF) << 4, (uint32_t)((d >> 16) & 0x3FFF) << 4, (uint32_t)((d >> 32) & 0x3FFF) << 4,
                  (uint32_t)((d >> 49) & 7), (uint32_t)(d >> 62)};
}

/* The shared address of element (mn, k) of a descriptor's operand (the algorithm's step 2); lt = log2(T), T = 16 / es
 * (es 1, 2 or 4: shifts and masks rather than divisions, this being per 16-byte chunk of every wgmma). */
static inline uint32_t desc_addr(const Desc *d, bool mn_major, uint32_t mn, uint32_t k, unsigned es, unsigned lt) {
    static const uint32_t mask[4] = {0, 7, 3, 1};
    uint32_t T = 1u << lt, off;
    if (!mn_major) {
        if (!d->swz) off = (mn % 8) * 16 + (mn / 8) * d->sbo + (k >> lt) * d->lbo + (k & (T - 1)) * es;
        else off = (mn % 8) * (256u >> d->swz) + (mn / 8) * d->sbo + (k >> lt) * 16 + (k & (T - 1)) * es; /* W = 256 >> swz */
    } else {
        if (!d->swz) off = (mn & (T - 1)) * es + (mn >> lt) * d->sbo + (k % 8) * 16 + (k / 8) * d->lbo;
        else {
            uint32_t lc = 4 - d->swz, chunk = mn >> lt; /* c = W / 16 = 2^lc chunks per swizzle row */
            off = (mn & (T - 1)) * es + (chunk & ((1u << lc) - 1)) * 16 + (chunk >> lc) * d->lbo + (k % 8) * (256u >> d->swz) +
                  (k / 8) * d->sbo;
        }
    }
    uint32_t a = d->start + off;
    return a ^ ((((a >> 7) - d->base) & mask[d->swz]) << 4); /* the row within the pattern that starts base rows on */
}

/* Whether a swizzled descriptor's base offset is one this emulator can place: the ISA gives its value (the 128-byte
 * row its pattern starts on within the pattern's repeat, (pattern start >> 7) & 7), not how it combines with the
 * address's row bits; counted from the pattern's start (the row minus the base offset) and XORed with it agree when
 * the base offset is 0 or half the repeat (a 128B pattern at +512, a 64B one at +256, any 32B one), and differ
 * otherwise. */
static bool desc_base_known(const Desc *d) {
    static const uint32_t mask[4] = {0, 7, 3, 1};
    uint32_t b = d->base & mask[d->swz];
    return !d->swz || b == 0 || b == (mask[d->swz] + 1) / 2;
}

/* ---- shared memory read by in-flight wgmmas ----
 * A wgmma reads its descriptor operands at issue here, but on a GPU any time until the wait that
 * retires its group: the 16-byte chunks it reads are counted in b->wg_reads (and listed with the
 * warpgroup's first thread) until then, and a write to one of them by anyone is reported. */
/* Chunks are counted per CTA of the cluster: each CTA's shared memory starts on a 16-byte boundary of
 * b->shared (smem_stride), so chunk idx / 16 holds bytes of one CTA only. */
static uint32_t chunks_per_cta(const EmuBlock *b) { return b->smem_stride / 16; }
static uint32_t chunk_of(const EmuBlock *b, uint64_t idx) { (void)b; return (uint32_t)(idx / 16); } /* idx: a byte of the cluster's shared memory */

static void read_note(EmuBlock *b, EmuWgState *w, uint32_t chunk, uint32_t line) {
    if (w->nrd && w->rd[w->nrd - 1].chunk == chunk && w->rd[w->nrd - 1].group == w->open) return;
    w->rd = room(w->rd, w->nrd, &w->caprd, sizeof *w->rd, 256);
    w->rd[w->nrd++] = (EmuWgRead){chunk, w->open, line};
    b->wg_reads[chunk]++;
    b->wg_reading++;
}

/* The wait that leaves groups >= limit in flight: their reads stay, the others end (racecheck: as reads by
 * the warpgroup's first thread, `reader`, now, which a generic write, or a bulk or tensor load refilling them,
 * must be ordered after: emu_race_wgmma_read). */
static void read_retire(EmuBlock *b, EmuWgState *w, uint32_t limit, uint32_t reader) {
    uint32_t j = 0;
    bool waited = false;
    for (uint32_t i = 0; i < w->nrd; i++) {
        if (w->rd[i].group < limit) {
            b->wg_reads[w->rd[i].chunk]--;
            b->wg_reading--;
            uint32_t per = chunks_per_cta(b), c = w->rd[i].chunk, off = c % per * 16;
            if (!b->shadow || off >= b->shared_size) continue;
            if (!waited) emu_race_wgmma_wait(b, reader), waited = true;
            uint32_t n = b->shared_size - off < 16 ? b->shared_size - off : 16;
            emu_race_wgmma_read(b, reader, (size_t)(c / per) * b->smem_stride + off, n, w->rd[i].line);
        } else {
            w->rd[j++] = w->rd[i];
        }
    }
    w->nrd = j;
}

bool emu_wgmma_smem_write(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, uint64_t size) {
    if (!b->wg_reading || !size) return true;
    for (uint64_t p = idx, end = idx + size, next; p < end; p = next) {
        uint64_t off = p % b->smem_stride; /* on to the next chunk: 16 bytes on (a CTA's memory starts on a chunk) */
        next = p + 16 - off % 16;
        uint32_t c = chunk_of(b, p);
        if (!b->wg_reads[c]) continue;
        const EmuThread *r = NULL;
        const EmuWgRead *rd = NULL;
        for (uint32_t i = 0; i < b->nthreads && !rd; i++) {
            const EmuWgState *w = b->t[i].wg;
            for (uint32_t k = 0; w && k < w->nrd && !rd; k++)
                if (w->rd[k].chunk == c) rd = &w->rd[k], r = &b->t[i];
        }
        if (!rd) unreachable("a shared chunk counted as read with no reader");
        char line[256], where[600], cta[48] = "";
        uint64_t ss = b->smem_stride, at = p;
        if (b->ncta > 1) snprintf(cta, sizeof cta, " of block rank %u", (unsigned)(at / ss));
        emu_module_line(b->L->m, rd->line, line, sizeof line);
        return emu_fault(b, t, in, "shared memory written while a wgmma reads it",
                         "shared address 0x%" PRIx64 "%s is an operand of the wgmma.mma_async at %s (%s) issued by the warpgroup of "
                         "thread (%u,%u,%u), which no wgmma.wait_group has retired yet",
                         at % ss, cta, emu_module_where(b->L->m, rd->line, where, sizeof where), line, r->tid[0], r->tid[1], r->tid[2]);
    }
    return true;
}

/* One 16-byte chunk's T elements of type ty (T = 16 / es) as values: floats times neg into vf, or (integers)
 * doubles into vd, element j at index j * stride.  f16c: the host's F16C decodes f16 (emu_f16x8_to_f32_host). */
static inline void decode_chunk(unsigned ty, const uint8_t *p, float *vf, double *vd, float neg, size_t stride, bool f16c) {
    switch (ty) {
    case EMU_T_F16: { /* four codes at a time (emu_f16x4_to_f32: emu_f16_to_f32's bits for every code) */
        if (f16c) {
            emu_f16x8_to_f32_host(p, vf, neg, stride);
            return;
        }
        uint16_t h[8];
        memcpy(h, p, 16);
        for (unsigned q = 0; q < 8; q += 4) {
            emu_v4f v = emu_f16x4_to_f32((emu_v4u){h[q], h[q + 1], h[q + 2], h[q + 3]});
            for (unsigned j = 0; j < 4; j++) vf[(q + j) * stride] = neg * v[j];
        }
        return;
    }
    case EMU_T_BF16:
        for (unsigned j = 0; j < 8; j++) {
            uint16_t h;
            memcpy(&h, p + 2 * j, 2);
            vf[j * stride] = neg * emu_f32((uint32_t)h << 16);
        }
        return;
    case EMU_T_TF32:
        for (unsigned j = 0; j < 4; j++) {
            uint32_t x;
            memcpy(&x, p + 4 * j, 4);
            vf[j * stride] = neg * emu_f32(x & 0xFFFFE000u);
        }
        return;
    case EMU_T_E4M3: case EMU_T_E5M2:
        for (unsigned j = 0; j < 16; j++) vf[j * stride] = neg * (float)emu_f8_to_f64(p[j], ty == EMU_T_E5M2);
        return;
    case EMU_T_S8:
        for (unsigned j = 0; j < 16; j++) vd[j * stride] = (int8_t)p[j];
        return;
    default: /* u8 */
        for (unsigned j = 0; j < 16; j++) vd[j * stride] = p[j];
        return;
    }
}

/* Reads rows x K elements of a descriptor operand, element (mn, k) into vf (floats, times neg) or vd (integers) at
 * mn * smn + k * sk, noting the chunks read in rw (the warpgroup's reads); false after emu_fault. */
static bool load_desc(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t desc, bool mn_major, unsigned rows, unsigned K,
                      unsigned ty, unsigned es, float *vf, double *vd, float neg, size_t smn, size_t sk, const char *what,
                      EmuWgState *rw) {
    Desc d = desc_decode(desc);
    if (!desc_base_known(&d)) {
        static const unsigned repeat[4] = {0, 1024, 512, 256};
        return emu_fault(b, t, in, "unsupported wgmma descriptor",
                         "the %s descriptor 0x%016" PRIx64 " has base offset %u with %uB swizzle: its pattern starts %u bytes past a "
                         "%u-byte boundary, where the PTX ISA does not say how the offset combines with the address (0 and %u are "
                         "supported: patterns starting on the boundary or half way)",
                         what, desc, d.base, repeat[d.swz] / 8, (d.base * 128) % repeat[d.swz], repeat[d.swz], repeat[d.swz] / 256);
    }
    if (!d.swz) d.base = 0; /* the no-swizzle mode has no base offset (the ISA: valid for the swizzled modes) */
    uint32_t cta_end = (t->cta + 1) * b->cta_threads, wg_end = t->linear + 128 < cta_end ? t->linear + 128 : cta_end;
    /* by 16-byte chunks: T = 16 / es elements consecutive along K (K-major) or along MN (MN-major) share one
     * (the swizzle moves whole chunks), and rows and K are multiples of T */
    unsigned lt = es == 1 ? 4 : es == 2 ? 3 : 2, T = 1u << lt, nr = mn_major ? rows / T : rows, nk = mn_major ? K : K / T;
    const uint8_t *smem = emu_cta_smem(b, t);
    size_t stride = mn_major ? smn : sk; /* between a chunk's elements */
    bool f16c = ty == EMU_T_F16 && !b->L->opt->general_tensor_ops && !b->L->opt->portable_tensor_ops && emu_host_f16c();
    for (unsigned r = 0; r < nr; r++)
        for (unsigned k = 0; k < nk; k++) {
            unsigned r0 = mn_major ? r * T : r, k0 = mn_major ? k : k * T;
            uint32_t a = desc_addr(&d, mn_major, r0, k0, es, lt);
            for (unsigned j = 0; a + 16 > b->shared_size && j < T; j++)
                if (a + (j + 1) * es > b->shared_size)
                    return emu_fault(b, t, in, "memcheck: invalid __shared__ read by wgmma",
                                     "element (%u, %u) of %s at shared address 0x%x is outside the block's %u bytes (descriptor 0x%016" PRIx64 ")",
                                     mn_major ? r0 + j : r0, mn_major ? k0 : k0 + j, what, a + j * es, b->shared_size, desc);
            uint64_t at = (uint64_t)t->cta * b->smem_stride + a;
            if (b->shadow && !emu_async_read(b, t, in, at, 16, t->linear, wg_end, "wgmma.mma_async")) return false;
            size_t at_v = r0 * smn + k0 * sk;
            decode_chunk(ty, smem + a, vf ? vf + at_v : NULL, vd ? vd + at_v : NULL, neg, stride, f16c);
            read_note(b, rw, t->cta * chunks_per_cta(b) + a / 16, in->line); /* chunk_of(b, at): a < shared_size */
        }
    return true;
}

static inline uint64_t opreg(const EmuThread *t, const EmuIns *in, unsigned op, unsigned k) {
    return t->r[in->ok[op] == EMU_OK_VEC ? t->fn->vec[in->o[op] + k] : in->o[op]];
}
static inline uint32_t opslot(const EmuThread *t, const EmuIns *in, unsigned op, unsigned k) {
    return in->ok[op] == EMU_OK_VEC ? t->fn->vec[in->o[op] + k] : in->o[op];
}

/* An f32 result's bits, NaN the canonical one */
static inline uint64_t f32_canon(float v) { return v != v ? 0x7FFFFFFFu : emu_bits32(v); }

/* A register's value as the wgmma sees it: its in-flight result if it has one. */
static inline uint64_t acc_in(const EmuThread *t, uint32_t slot) {
    return t->wg && busy(t->wg, slot) ? t->wg->pv[slot] : t->r[slot];
}

/* Where t's C values are when the slots of the busy-bit words dw (bits dm) are all in flight (the pending
 * values) or none is (the registers); NULL when some are: acc_in each. */
static inline const uint64_t *c_from(const EmuThread *t, const uint32_t *dw, const uint64_t *dm, unsigned ndw) {
    const EmuWgState *w = t->wg;
    if (!w) return t->r;
    bool all = true, none = true;
    for (unsigned j = 0; j < ndw; j++) {
        uint64_t x = (dw[j] < w->nbusy_words ? w->busy[dw[j]] : 0) & dm[j];
        all = all && x == dm[j];
        none = none && !x;
    }
    return none ? t->r : all ? w->pv : NULL;
}

/* wgmma.mma_async.sp: which column of the dense K each kept value of A's row m (K/2 of them) sits at, from the
 * metadata (sp-meta, operand 3) of the lanes sp-sel (operand 4) names: warp w holds rows 16w..16w+15, as
 * mma.sp.m16n8kK holds its 16 (exec_mma.c, sparse_product): in each group of 4 lanes (g = lane / 4, rows 16w + g
 * and 16w + g + 8) lanes 4g + sel * mthreads + j, the j-th with the nibbles of chunks 4j..4j+3 (cw elements each)
 * of the first row in bits 0-15 and of the second in bits 16-31; a nibble's 2-bit indices (low first) place the
 * chunk's two values (tf32: its one value, at the index's half, 0b0100 the first element, 0b1110 the second). */
static void sparse_columns(EmuThread **wg, const EmuIns *in, const EmuWgmmaForm *fm, uint8_t *colmap) {
    unsigned KA = fm->k / 2, vpc = fm->cw / 2, sel = (uint32_t)wg[0]->r[in->o[4]];
    for (unsigned m = 0; m < 64; m++)
        for (unsigned p = 0; p < KA; p++) {
            unsigned c = p / vpc, s = p % vpc, j = c / 4, w = m / 16, r = m % 16;
            uint32_t meta = (uint32_t)opreg(wg[32 * w + 4 * (r % 8) + sel * fm->mthreads + j], in, 3, 0);
            unsigned nib = meta >> (4 * (c % 4) + 16 * (r / 8)) & 0xF, i0 = nib & 3, i1 = nib >> 2;
            colmap[m * KA + p] = (uint8_t)(vpc == 1 ? 2 * c + i0 / 2 : 4 * c + (s ? i1 : i0));
        }
}

/* D (64 x N, from C or 0) += the sparse A (64 x K/2) times B (BT: K x N): each element one fmaf per kept value, in
 * their order. */
static void sparse_product_f(const EmuWgmmaForm *fm, const float *Af, const float *BT, float *D, const uint8_t *colmap) {
    unsigned KA = fm->k / 2, N = fm->n;
    for (unsigned m = 0; m < 64; m++)
        for (unsigned n = 0; n < N; n++) {
            float acc = D[m * N + n];
            for (unsigned p = 0; p < KA; p++) acc = fmaf(Af[m * KA + p], BT[colmap[m * KA + p] * N + n], acc);
            D[m * N + n] = acc;
        }
}

static bool exec_wgmma(EmuBlock *b, EmuThread **wg) {
    EmuThread *t0 = wg[0];
    const EmuIns *in = &t0->fn->code[t0->pc];
    EmuWgmmaForm fm = in->wgmma; /* decoded at load (emu_module_finalize); k 0: not, or not valid */
    const char *why;
    if (!fm.k && !emu_wgmma_form(in, &fm, &why)) return emu_fault(b, t0, in, "unsupported instruction", "%s", why);
    /* KA: A's columns (.sp: the K/2 values kept a row); sp: the operands after b-desc are 2 further on (.sp's
     * sp-meta, sp-sel come first) */
    const unsigned M = 64, N = fm.n, K = fm.k, es = fm.esize, KA = fm.sparse ? K / 2 : K, sp = fm.sparse ? 2 : 0;
    bool areg = in->ok[1] == EMU_OK_VEC;
    bool notrans = in->ty2 == EMU_T_TF32 || is_f8(in->ty2) || fm.integer;
    bool trans_a = !notrans && !areg && (uint32_t)t0->r[in->o[6 + sp]] == 1;
    bool trans_b = !notrans && (uint32_t)t0->r[in->o[(areg ? 6 : 7) + sp]] == 1;
    float neg_a = !fm.integer && (int32_t)(uint32_t)t0->r[in->o[4 + sp]] == -1 ? -1 : 1;
    float neg_b = !fm.integer && (int32_t)(uint32_t)t0->r[in->o[5 + sp]] == -1 ? -1 : 1;
    /* the operands once for all 128 threads: floats (f16, bf16, tf32, e4m3, e5m2) as f32, negated as imm-scale-a/b
     * say, A in Af[m][k] and B transposed in BT[k][n] (what emu_mma_f32 takes); integers as doubles, A[m][k] and
     * B[n][k].  A product of two f16s or two f8s is exact in f32 and normal (2^-48 to 2^32 in size), so acc + a*b
     * rounds once as fmaf does; bf16 and tf32 products may fall outside f32's normal range and then take fmaf
     * (emu_mma_f32). */
    double *A = NULL, *B = NULL;
    float *Af = NULL, *BT = NULL;
    if (fm.integer) {
        A = malloc((size_t)M * KA * sizeof *A), B = malloc((size_t)N * K * sizeof *B);
        if (!A || !B) out_of_memory();
    } else {
        Af = malloc((size_t)M * KA * sizeof *Af), BT = malloc((size_t)K * N * sizeof *BT);
        if (!Af || !BT) out_of_memory();
    }
    bool ok = true;
    /* every thread must give the same descriptors (they are warpgroup-uniform) */
    for (unsigned i = 1; i < 128 && ok; i++) {
        for (unsigned op = areg ? 2 : 1; op <= 2 && ok; op++)
            if (wg[i]->r[in->o[op]] != t0->r[in->o[op]])
                ok = emu_fault(b, wg[i], in, "invalid wgmma", "the %s descriptor differs between threads of the warpgroup (0x%016" PRIx64
                               " here, 0x%016" PRIx64 " in thread (%u,%u,%u))", op == 1 ? "A" : "B", wg[i]->r[in->o[op]],
                               t0->r[in->o[op]], t0->tid[0], t0->tid[1], t0->tid[2]);
    }
    if (ok && !b->wg_reads) {
        b->wg_reads = calloc((size_t)b->ncta * chunks_per_cta(b) + 1, sizeof *b->wg_reads);
        if (!b->wg_reads) out_of_memory();
    }
    EmuWgState *rw = wg_state(t0);
    bool b1 = in->ty2 == EMU_T_B1; /* .b1: loaded as bytes of 8 elements (the lowest bit first), then spread */
    double *bytes = b1 ? malloc((size_t)(M > N ? M : N) * (K / 8) * sizeof *bytes) : NULL;
    if (b1 && !bytes) out_of_memory();
    if (ok && !areg && b1 && (ok = load_desc(b, t0, in, t0->r[in->o[1]], false, M, K / 8, EMU_T_U8, 1, NULL, bytes, 1, K / 8, 1, "A", rw)))
        for (unsigned i = 0; i < M * K; i++) A[i] = (double)((unsigned)bytes[i / 8] >> (i % 8) & 1);
    if (ok && !areg && !b1) ok = load_desc(b, t0, in, t0->r[in->o[1]], trans_a, M, KA, in->ty2, es, Af, A, neg_a, KA, 1, "A", rw);
    if (ok && areg) {
        unsigned E = b1 ? 32 : 4 / es;
        for (unsigned i = 0; i < 128; i++) {
            unsigned w = i / 32, l = i % 32, g = l / 4, tq = l % 4;
            for (unsigned j = 0; j < 4; j++) {
                uint32_t r = (uint32_t)opreg(wg[i], in, 1, j);
                for (unsigned e = 0; e < E; e++) {
                    unsigned row = 16 * w + g + 8 * (j & 1), col = tq * E + (j >> 1) * 4 * E + e;
                    double v = b1 ? (double)(r >> e & 1) : emu_elem_value(in->ty2, es == 4 ? r : r >> (8 * es * e));
                    if (fm.integer) A[row * KA + col] = v;
                    else Af[row * KA + col] = neg_a * (float)v;
                }
            }
        }
    }
    if (ok && b1 && (ok = load_desc(b, t0, in, t0->r[in->o[2]], false, N, K / 8, EMU_T_U8, 1, NULL, bytes, 1, K / 8, 1, "B", rw)))
        for (unsigned i = 0; i < N * K; i++) B[i] = (double)((unsigned)bytes[i / 8] >> (i % 8) & 1);
    free(bytes);
    if (ok && !b1) ok = load_desc(b, t0, in, t0->r[in->o[2]], trans_b, N, K, in->ty3, es, BT, B, neg_b, fm.integer ? K : 1,
                                  fm.integer ? 1 : N, "B", rw);
    if (!ok) {
        free(A);
        free(B);
        free(Af);
        free(BT);
        return false;
    }
    uint8_t colmap[64 * 32]; /* .sp: the column of B each kept value of A multiplies, row by row */
    if (fm.sparse) sparse_columns(wg, in, &fm, colmap);
    bool exact_products = emu_mma_exact_type(in->ty2) && emu_mma_exact_type(in->ty3);
    bool general = b->L->opt->general_tensor_ops; /* the reference: fmaf per product, C and D element by element */
    /* floats: D (64 x N) from the threads' C (0 where scale-d is false), then D += A B
     * (emu_mma_f32: each element one sum in ascending k) */
    float *D = NULL;
    unsigned nelem = fm.f16acc ? fm.nd * 2 : fm.nd;
    /* D's register slots, the same for every thread (one function, one instruction: emu_exec_warpgroup) */
    uint32_t dslot[128], dw[128];
    uint64_t dm[128]; /* and as words of the busy bits (dw) with the slots' bits in each (dm) */
    unsigned ndw = 0;
    uint32_t dlo = UINT32_MAX, dhi = 0; /* the lowest and highest D slot */
    for (unsigned r = 0; r < fm.nd; r++) {
        dslot[r] = opslot(t0, in, 0, r);
        unsigned j = 0;
        while (j < ndw && dw[j] != dslot[r] / 64) j++;
        if (j == ndw) dw[ndw] = dslot[r] / 64, dm[ndw++] = 0;
        dm[j] |= 1ull << (dslot[r] % 64);
        if (dslot[r] < dlo) dlo = dslot[r];
        if (dslot[r] > dhi) dhi = dslot[r];
    }
    bool dcontig = dhi - dlo + 1 == fm.nd; /* nd distinct slots: then dslot[r] = dlo + r when ascending */
    for (unsigned r = 0; r < fm.nd && dcontig; r++) dcontig = dslot[r] == dlo + r;
    if (!fm.integer) {
        D = malloc((size_t)M * N * sizeof *D);
        if (!D) out_of_memory();
        for (unsigned i = 0; i < 128; i++) {
            EmuThread *t = wg[i];
            bool scale_d = ((uint32_t)t->r[in->o[3 + sp]] != 0) != (in->on[3 + sp] != 0); /* `!%p` negates the predicate */
            unsigned wq = i / 32, l = i % 32, g = l / 4, tq = l % 4;
            const uint64_t *from = c_from(t, dw, dm, ndw);
            if (scale_d && from && !fm.f16acc && !general) { /* f32 C all in one place: the elements by fours, rows g and g + 8 */
                float *r0 = D + (16 * wq + g) * N + 2 * tq, *r1 = r0 + 8 * N;
                if (dcontig) { /* consecutive slots: read in order */
                    const uint64_t *c = from + dlo;
                    for (unsigned e = 0; e < nelem; e += 4) {
                        r0[2 * e] = emu_f32(c[e]), r0[2 * e + 1] = emu_f32(c[e + 1]);
                        r1[2 * e] = emu_f32(c[e + 2]), r1[2 * e + 1] = emu_f32(c[e + 3]);
                    }
                    continue;
                }
                for (unsigned e = 0; e < nelem; e += 4) {
                    const uint32_t *sl = dslot + e;
                    r0[2 * e] = emu_f32(from[sl[0]]), r0[2 * e + 1] = emu_f32(from[sl[1]]);
                    r1[2 * e] = emu_f32(from[sl[2]]), r1[2 * e + 1] = emu_f32(from[sl[3]]);
                }
                continue;
            }
            for (unsigned e = 0; e < nelem; e++) {
                unsigned row = 16 * wq + g + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * tq + (e & 1);
                uint32_t slot = dslot[fm.f16acc ? e / 2 : e];
                uint64_t c = !scale_d ? 0 : from ? from[slot] : acc_in(t, slot);
                D[row * N + col] = !scale_d ? 0.0f : fm.f16acc ? (float)emu_f16_to_f64((uint16_t)(c >> (16 * (e & 1)))) : emu_f32(c);
            }
        }
        if (fm.sparse) sparse_product_f(&fm, Af, BT, D, colmap);
        else if (general) emu_mma_f32_by(Af, K, BT, N, D, N, M, N, K, EMU_MMA_FMAF); /* the reference */
        else emu_mma_f32(Af, K, BT, N, D, N, M, N, K, exact_products);
    }
    for (unsigned i = 0; i < 128; i++) {
        EmuThread *t = wg[i];
        const EmuIns *ti = in;
        EmuWgState *w = wg_state(t);
        bool scale_d = ((uint32_t)t->r[ti->o[3 + sp]] != 0) != (ti->on[3 + sp] != 0); /* `!%p` negates the predicate */
        unsigned wq = i / 32, l = i % 32, g = l / 4, tq = l % 4;
        uint64_t buf[128];
        /* f32 D: every slot's value written once, straight to the pending values (in consecutive slots, as the slot
         * packing gives a vector's registers, their groups filled in one run below; else with its group here) */
        bool f32 = !fm.integer && !fm.f16acc && !general, direct = dcontig && f32;
        uint64_t *out = direct ? w->pv + dlo : buf;
        for (unsigned r = 0; r < fm.nd && !f32; r++) out[r] = 0;
        if (f32) { /* f32 D by fours as C above, NaN the canonical one */
            const float *r0 = D + (16 * wq + g) * N + 2 * tq, *r1 = r0 + 8 * N;
            if (direct)
                for (unsigned e = 0; e < nelem; e += 4) {
                    float v[4] = {r0[2 * e], r0[2 * e + 1], r1[2 * e], r1[2 * e + 1]};
                    for (unsigned i = 0; i < 4; i++) out[e + i] = f32_canon(v[i]);
                }
            else {
                uint64_t *pv = w->pv;
                uint32_t *pg = w->pg, open = w->open;
                for (unsigned e = 0; e < nelem; e += 4) {
                    const uint32_t *sl = dslot + e;
                    pv[sl[0]] = f32_canon(r0[2 * e]), pv[sl[1]] = f32_canon(r0[2 * e + 1]);
                    pv[sl[2]] = f32_canon(r1[2 * e]), pv[sl[3]] = f32_canon(r1[2 * e + 1]);
                    pg[sl[0]] = open, pg[sl[1]] = open, pg[sl[2]] = open, pg[sl[3]] = open;
                }
            }
        }
        for (unsigned e = 0; e < nelem && (fm.integer || fm.f16acc || general); e++) {
            unsigned row = 16 * wq + g + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * tq + (e & 1);
            if (fm.integer) {
                uint64_t c = acc_in(t, dslot[e]);
                int64_t acc = scale_d ? (int32_t)(uint32_t)c : 0;
                if (fm.sparse)
                    for (unsigned p = 0; p < KA; p++) acc += (int64_t)A[row * KA + p] * (int64_t)B[col * K + colmap[row * KA + p]];
                else
                    for (unsigned k = 0; k < K; k++) acc += (int64_t)A[row * K + k] * (int64_t)B[col * K + k];
                if (in->flags & EMU_F(SATFINITE)) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                out[e] = (uint32_t)(int32_t)acc;
                continue;
            }
            float acc = D[row * N + col];
            if (fm.f16acc) {
                uint64_t h = emu_f32_to_f16_rn(acc); /* NaN the canonical 0x7fff */
                out[e / 2] = (e & 1) ? (out[e / 2] | h << 16) : h;
            } else {
                out[e] = acc != acc ? 0x7FFFFFFFu : emu_bits32(acc);
            }
        }
        if (!w->n) w->lo = dlo, w->hi = dhi; /* no slot busy: the bounds start again */
        else w->lo = dlo < w->lo ? dlo : w->lo, w->hi = dhi > w->hi ? dhi : w->hi;
        for (unsigned j = 0; j < ndw; j++) { /* pend_set of every D slot, by words */
            w->n += bits_set(dm[j] & ~w->busy[dw[j]]);
            w->busy[dw[j]] |= dm[j];
        }
        if (direct) {
            uint32_t *pg = w->pg + dlo, open = w->open;
            for (unsigned r = 0; r < fm.nd; r++) pg[r] = open;
        }
        for (unsigned r = 0; r < fm.nd && !f32; r++) {
            w->pv[dslot[r]] = out[r];
            w->pg[dslot[r]] = w->open;
        }
        for (unsigned j = 0; areg && !t->depth && j < 4; j++) { /* A's registers must keep their values until the wait */
            w->ap = room(w->ap, w->nap, &w->capap, sizeof *w->ap, 16);
            w->ap[w->nap++] = (EmuWgPend){.slot = opslot(t, ti, 1, j), .group = w->open, .line = ti->line, .value = opreg(t, ti, 1, j)};
        }
    }
    free(A);
    free(B);
    free(Af);
    free(D);
    free(BT);
    return true;
}

/* The thread's wgmma groups below limit end: their results go to the registers, their A fragments are
 * checked (a register changed meanwhile is reported); false after emu_fault.  The shared memory the
 * warpgroup's groups read is released by the caller (read_retire). */
static bool retire(EmuBlock *b, EmuThread *t, const EmuIns *in, uint32_t limit) {
    EmuWgState *w = t->wg;
    if (!w) return true;
    uint32_t j = 0;
    /* the A fragments of the retiring wgmmas: a register that changed while they were in flight */
    for (uint32_t i = 0; i < w->nap; i++) {
        EmuWgPend a = w->ap[i];
        if (a.group >= limit) {
            w->ap[j++] = a;
            continue;
        }
        if (t->r[a.slot] == a.value) continue;
        char name[64], line[256], where[600], wrote[700] = "", wwhere[600], wtext[256];
        emu_slot_name(t->fn, a.slot, name, sizeof name);
        emu_module_line(b->L->m, a.line, line, sizeof line);
        if (a.wline) {
            emu_module_line(b->L->m, a.wline, wtext, sizeof wtext);
            snprintf(wrote, sizeof wrote, " at %s (%s)", emu_module_where(b->L->m, a.wline, wwhere, sizeof wwhere), wtext);
        }
        return emu_fault(b, t, in, "wgmma A operand modified while in flight",
                         "register %s holds A of the wgmma.mma_async at %s (%s) and was written%s before this wgmma.wait_group "
                         "retired it (the wgmma may read it until then)",
                         name, emu_module_where(b->L->m, a.line, where, sizeof where), line, wrote);
    }
    w->nap = j;
    for (uint32_t wi = 0; wi < w->nbusy_words && w->n; wi++)
        for (uint64_t m = w->busy[wi]; m; m &= m - 1) {
            uint32_t slot = wi * 64 + (uint32_t)__builtin_ctzll(m);
            if (w->pg[slot] >= limit) continue;
            t->r[slot] = w->pv[slot];
            w->busy[wi] &= ~(1ull << (slot % 64));
            w->n--;
        }
    return true;
}

bool emu_wgmma_frame_end(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    EmuWgState *w = t->wg;
    if (!w || (!w->n && !w->nap && !w->nrd)) return true;
    uint32_t limit = w->open + 1; /* every group, the open one too */
    if (!retire(b, t, in, limit)) return false;
    if (w->nrd) read_retire(b, w, limit, t->linear);
    return true;
}

static bool exec_wait(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    return !t->wg || retire(b, t, in, retire_limit(t->wg, (uint32_t)t->r[in->o[0]]));
}

bool emu_exec_warpgroup(EmuBlock *b, EmuThread **wg) {
    EmuThread *t0 = wg[0];
    const EmuIns *in = &t0->fn->code[t0->pc];
    for (unsigned i = 1; i < 128; i++) {
        const EmuIns *o = &wg[i]->fn->code[wg[i]->pc];
        /* the same setmaxnreg (action and count) at another line is the same instruction: Triton's warp
         * specialization gives each partition its own copy, and warps of one warpgroup run different ones */
        bool same_setmaxnreg = in->op == EMU_OP_SETMAXNREG && o->op == EMU_OP_SETMAXNREG && o->mode == in->mode &&
                               wg[i]->r[o->o[0]] == t0->r[in->o[0]];
        if ((wg[i]->fn != t0->fn || wg[i]->pc != t0->pc) && !same_setmaxnreg) {
            char w1[600], w0[600];
            return emu_fault(b, wg[i], o, "divergent warpgroup instructions",
                             "'%s' is .aligned: thread (%u,%u,%u) is at %s, thread (%u,%u,%u) at %s", emu_op_name(in->op),
                             wg[i]->tid[0], wg[i]->tid[1], wg[i]->tid[2], emu_module_where(b->L->m, o->line, w1, sizeof w1),
                             t0->tid[0], t0->tid[1], t0->tid[2], emu_module_where(b->L->m, in->line, w0, sizeof w0));
        }
    }
    bool ok = true;
    switch (in->op) {
    case EMU_OP_WGMMA: ok = exec_wgmma(b, wg); break;
    case EMU_OP_WGMMA_FENCE: case EMU_OP_SETMAXNREG: break; /* setmaxnreg: its value was checked when parsed */
    case EMU_OP_WGMMA_COMMIT:
        for (unsigned i = 0; i < 128; i++) wg_state(wg[i])->open++;
        break;
    case EMU_OP_WGMMA_WAIT: {
        /* while groups read shared memory, held back until every other warp has had a whole round after the
         * one the wait came in (threads the warpgroup released before waiting run before it ends, as they
         * may on a GPU: a write of theirs to what the groups read is seen) */
        EmuWgState *w0 = wg_state(t0);
        if (w0->nrd && (!w0->wait_round || b->round <= w0->wait_round + 1)) {
            if (!w0->wait_round) w0->wait_round = b->round;
            for (unsigned i = 0; i < 128; i++) wg[i]->state = EMU_TS_YIELD;
            b->mbar_waits = true;
            return true;
        }
        w0->wait_round = 0;
        for (unsigned i = 0; i < 128 && ok; i++) ok = exec_wait(b, wg[i], in);
        if (wg[0]->wg) read_retire(b, wg[0]->wg, retire_limit(wg[0]->wg, (uint32_t)wg[0]->r[in->o[0]]), wg[0]->linear);
        break;
    }
    default: return emu_fault(b, t0, in, "unsupported instruction", "'%s' is not a warpgroup instruction", emu_op_name(in->op));
    }
    if (!ok) return false;
    for (unsigned i = 0; i < 128; i++) {
        wg[i]->pc++;
        wg[i]->state = EMU_TS_RUN;
    }
    return true;
}

/* ---- stmatrix ---- */
bool emu_exec_stmatrix(EmuBlock *b, EmuThread **lane, const EmuIns *in) {
    unsigned nmat = in->mode == EMU_MODE_X4 ? 4 : in->mode == EMU_MODE_X2 ? 2 : 1;
    bool trans = in->flags & EMU_F(TRANS);
    uint16_t mat[4][8][8];
    for (unsigned l = 0; l < 32; l++) {
        unsigned row = l >> 2, col = 2 * (l & 3);
        for (unsigned i = 0; i < nmat; i++) {
            uint32_t v = (uint32_t)opreg(lane[l], in, 1, i);
            if (trans) {
                mat[i][col][row] = (uint16_t)v;
                mat[i][col + 1][row] = (uint16_t)(v >> 16);
            } else {
                mat[i][row][col] = (uint16_t)v;
                mat[i][row][col + 1] = (uint16_t)(v >> 16);
            }
        }
    }
    for (unsigned i = 0; i < nmat; i++)
        for (unsigned r = 0; r < 8; r++) {
            EmuThread *t = lane[8 * i + r];
            uint64_t a = EMU_R(t, in, 0) + (uint64_t)in->off[0];
            if (in->space == EMU_SP_GENERIC) {
                if (a - EMU_SHARED_WINDOW >= EMU_WINDOW_SIZE)
                    return emu_fault(b, t, in, "memcheck: invalid stmatrix address",
                                     "generic address 0x%" PRIx64 " (row %u of matrix %u) is not in shared memory", a, r, i);
                a -= EMU_SHARED_WINDOW;
            } else {
                a &= 0xFFFFFFFFu;
            }
            b->wval = (const uint8_t *)mat[i][r]; /* racecheck: writing the bytes already there (replicated layouts) is no hazard */
            uint8_t *p = emu_access(b, t, in, EMU_SP_SHARED, a, 16, 16, true);
            b->wval = NULL;
            if (!p) return false;
            memcpy(p, mat[i][r], 16);
        }
    return true;
}

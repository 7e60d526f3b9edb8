/* exec_mem.c - device memory, checked accesses (memcheck), the shared-memory
 * race detector (racecheck), and ld/st/atom/red/cvta/cp.async.
 *
 * Device memory: every allocation gets a fresh address from a bump pointer
 * (256-byte aligned, with a 256-byte gap after each, never reused), so an
 * access past the end of one allocation never lands in the next, and a use
 * after free is recognised.  Lookups binary-search the sorted table; each
 * block caches the last allocations it hit, and each global fast
 * instruction the one it hit last (emu_global in exec.h).  A mapped
 * range (emu_mem_map: the caller's host memory, registered through
 * tile_register_memory) is an allocation whose bytes the table borrows: it
 * gets an address the same way, keeps the host pointer's offset modulo 256,
 * and is never freed here.
 *
 * Generic addresses: [EMU_SHARED_WINDOW, +4 GiB) is the block's shared
 * memory, [EMU_LOCAL_WINDOW, +4 GiB) the thread's local memory,
 * [EMU_PARAM_WINDOW, +4 GiB) the kernel's parameters (cvta.param: a
 * grid-constant parameter's address, read-only), the rest is global.  State-space addresses of shared and local memory are offsets
 * from 0 (what `mov.u64 %rd, smem_var` yields).
 *
 * Racecheck: emu_access hands every shared access to exec_race.c's check; the
 * acquire and release accesses here (ld/st/atom/red .acquire, .release,
 * .acq_rel) synchronise through it too. */
#include "emu/exec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- allocation table ---- */
void emu_mem_init(EmuMem *m) {
    static _Atomic unsigned ranges;
    memset(m, 0, sizeof *m);
    m->next = EMU_GLOBAL_BASE + (uint64_t)(atomic_fetch_add(&ranges, 1) % EMU_MEM_RANGES) * EMU_MEM_RANGE;
}

void emu_mem_destroy(EmuMem *m) {
    emu_heap_destroy(m);
    for (uint32_t i = 0; i < m->n; i++)
        if (!m->a[i].borrowed) free(m->a[i].host);
    free(m->a);
    free(m->freed);
    memset(m, 0, sizeof *m);
}

/* Index of the last allocation starting at or below addr, or -1. */
static int64_t mem_floor(const EmuMem *m, uint64_t addr) {
    int64_t lo = 0, hi = (int64_t)m->n - 1, r = -1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (m->a[mid].addr <= addr) { r = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    return r;
}

bool emu_mem_alloc(EmuMem *m, uint64_t size, bool module_var, uint64_t *addr) {
    if (size == 0) size = 1;
    if (size > (1ull << 40)) return false;
    uint8_t *h = calloc(1, size);
    if (!h) return false;
    if (m->n == m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 64;
        EmuAlloc *na = realloc(m->a, nc * sizeof *na);
        if (!na) { free(h); return false; }
        m->a = na;
        m->cap = nc;
    }
    uint64_t a = m->next;
    m->next = a + ((size + 255) & ~255ull) + 256;
    m->a[m->n++] = (EmuAlloc){a, size, h, module_var, false, false}; /* addresses only grow: stays sorted */
    *addr = a;
    return true;
}

bool emu_mem_map(EmuMem *m, void *host, uint64_t size, uint64_t *addr) {
    if (!host || size == 0 || size > (1ull << 40)) return false;
    if (m->n == m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 64;
        EmuAlloc *na = realloc(m->a, nc * sizeof *na);
        if (!na) return false;
        m->a = na;
        m->cap = nc;
    }
    uint64_t a = m->next + ((uintptr_t)host & 255);
    m->next = ((a + size + 255) & ~255ull) + 256;
    m->a[m->n++] = (EmuAlloc){a, size, host, false, false, true}; /* addresses only grow: stays sorted */
    *addr = a;
    return true;
}

bool emu_mem_free(EmuMem *m, uint64_t addr) {
    int64_t i = mem_floor(m, addr);
    if (i < 0 || m->a[i].addr != addr) return false;
    EmuAlloc dead = m->a[i];
    if (!dead.borrowed) free(dead.host);
    memmove(&m->a[i], &m->a[i + 1], (m->n - (uint32_t)i - 1) * sizeof *m->a);
    m->n--;
    if (m->nfreed == EMU_FREED_KEEP) { /* the older half goes: each free costs O(1) on average */
        memmove(m->freed, m->freed + EMU_FREED_KEEP / 2, (EMU_FREED_KEEP - EMU_FREED_KEEP / 2) * sizeof *m->freed);
        m->nfreed -= EMU_FREED_KEEP / 2;
    }
    if (m->nfreed == m->capfreed) {
        uint32_t nc = m->capfreed ? m->capfreed * 2 : 16;
        EmuAlloc *nf = realloc(m->freed, nc * sizeof *nf);
        if (!nf) return true;
        m->freed = nf;
        m->capfreed = nc;
    }
    dead.host = NULL;
    m->freed[m->nfreed++] = dead;
    return true;
}

const EmuAlloc *emu_mem_find(const EmuMem *m, uint64_t addr) {
    int64_t i = mem_floor(m, addr);
    if (i < 0 || addr >= m->a[i].addr + m->a[i].size) return NULL;
    return &m->a[i];
}

uint8_t *emu_mem_host(const EmuMem *m, uint64_t addr, uint64_t size) {
    const EmuAlloc *a = emu_mem_find(m, addr);
    if (!a || size > a->size - (addr - a->addr)) return NULL;
    return a->host + (addr - a->addr);
}

/* ---- checked access ---- */
static const char *space_label(unsigned space) {
    switch (space) {
    case EMU_SP_SHARED: return "__shared__";
    case EMU_SP_LOCAL: return "__local__";
    case EMU_SP_PARAM: return "param";
    case EMU_SP_CONST: return "__constant__";
    default: return "__global__";
    }
}

static bool global_oob(EmuBlock *b, EmuThread *t, const EmuIns *in, unsigned space, uint64_t addr, unsigned size, bool write) {
    const EmuMem *m = b->L->mem;
    char what[96];
    snprintf(what, sizeof what, "memcheck: invalid %s %s of size %u bytes", space_label(space), write ? "write" : "read", size);
    for (uint32_t i = m->nfreed; i-- > 0;) {
        const EmuAlloc *f = &m->freed[i];
        if (addr >= f->addr && addr < f->addr + f->size)
            return emu_fault(b, t, in, what, "address 0x%" PRIx64 " is inside a freed allocation of %" PRIu64 " bytes at 0x%" PRIx64,
                             addr, f->size, f->addr);
    }
    if (addr < 65536)
        return emu_fault(b, t, in, what, "address 0x%" PRIx64 " is a null pointer%s: it is in no device allocation", addr,
                         addr ? " plus an offset" : "");
    int64_t i = mem_floor(m, addr);
    const EmuAlloc *below = i >= 0 ? &m->a[i] : NULL, *above = i + 1 < (int64_t)m->n ? &m->a[i + 1] : NULL;
    /* a neighbour further than 1 GiB away says nothing about where the pointer came from */
    if (below && addr - (below->addr + below->size) > (1ull << 30) && addr >= below->addr + below->size) below = NULL;
    if (above && above->addr - addr > (1ull << 30)) above = NULL;
    if (below && addr < below->addr + below->size) /* straddles the end */
        return emu_fault(b, t, in, what,
                         "address 0x%" PRIx64 " is %" PRIu64 " bytes into a %" PRIu64 "-byte allocation at 0x%" PRIx64
                         ": the access runs %" PRIu64 " bytes past its end",
                         addr, addr - below->addr, below->size, below->addr, addr + size - (below->addr + below->size));
    if (below && (!above || addr - (below->addr + below->size) <= above->addr - addr))
        return emu_fault(b, t, in, what,
                         "address 0x%" PRIx64 " is out of bounds: %" PRIu64 " bytes after the end of the %" PRIu64
                         "-byte allocation at 0x%" PRIx64,
                         addr, addr - (below->addr + below->size), below->size, below->addr);
    if (above)
        return emu_fault(b, t, in, what,
                         "address 0x%" PRIx64 " is out of bounds: %" PRIu64 " bytes before the %" PRIu64
                         "-byte allocation at 0x%" PRIx64,
                         addr, above->addr - addr, above->size, above->addr);
    return emu_fault(b, t, in, what, "address 0x%" PRIx64 " is not in any device allocation", addr);
}

bool emu_smem_index(const EmuBlock *b, const EmuThread *t, uint64_t addr, uint64_t size, uint64_t *idx) {
    uint64_t cta = t->cta;
    if (addr >= EMU_DSMEM_TAG) {
        uint64_t rank = addr / EMU_DSMEM_TAG - 1;
        addr %= EMU_DSMEM_TAG;
        if (rank >= b->ncl) return false;
        cta = emu_cl_base(b, t) + rank;
    }
    if (addr > b->shared_size || size > b->shared_size - addr) return false;
    *idx = cta * b->smem_stride + addr;
    return true;
}

const char *emu_smem_name(const EmuBlock *b, uint64_t idx, char *buf, size_t cap) {
    uint64_t sz = b->smem_stride ? b->smem_stride : 1;
    if (b->ncl > 1) snprintf(buf, cap, "address 0x%" PRIx64 " of the cluster's CTA rank %" PRIu64, idx % sz, idx / sz % b->ncl);
    else snprintf(buf, cap, "address 0x%" PRIx64, idx % sz);
    return buf;
}

bool emu_smem_live(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, uint64_t idx, const char *what) {
    if (addr < EMU_DSMEM_TAG || !b->smem_stride || b->cta[idx / b->smem_stride].live) return true;
    /* another CTA of the cluster that has exited: its shared memory is gone (on a GPU the access faults or reaches
     * a CTA that took its place); a cluster barrier before exiting is what keeps it */
    return emu_fault(b, t, in, what, "address 0x%" PRIx64 " is in the shared memory of cluster CTA rank %" PRIu64 ", which has "
                     "exited (every thread of it ended): its shared memory is released; barrier.cluster.arrive/wait "
                     "before a CTA exits keeps it for the others", addr, addr / EMU_DSMEM_TAG - 1);
}

/* Where an out-of-bounds shared address points, for memcheck reports. */
static void smem_oob(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write) {
    char what[96];
    snprintf(what, sizeof what, "memcheck: invalid __shared__ %s of size %u bytes", write ? "write" : "read", size);
    unsigned st = b->L->dyn_smem ? b->L->m->shared_dyn_offset : b->shared_size;
    if (addr >= EMU_DSMEM_TAG && b->ncl <= 1 && !b->L->explicit_cluster)
        emu_fault(b, t, in, what, "address 0x%" PRIx64 " is out of bounds%s: the block has %u bytes of shared memory (%u static, %u dynamic)",
                  addr, addr >= 0x80000000u ? " (a negative offset, wrapped to 32 bits?)" : "", b->shared_size, st, b->L->dyn_smem);
    else if (addr >= EMU_DSMEM_TAG && addr / EMU_DSMEM_TAG - 1 >= b->ncl)
        emu_fault(b, t, in, what, "address 0x%" PRIx64 " is in the shared memory of cluster CTA rank %" PRIu64
                  "; the cluster has %u CTA%s", addr, addr / EMU_DSMEM_TAG - 1, b->ncl, b->ncl == 1 ? "" : "s");
    else if (addr >= EMU_DSMEM_TAG)
        emu_fault(b, t, in, what, "address 0x%" PRIx64 " is out of bounds: offset 0x%" PRIx64 " in the shared memory of cluster CTA rank %"
                  PRIu64 ", which has %u bytes (%u static, %u dynamic)", addr, addr % EMU_DSMEM_TAG, addr / EMU_DSMEM_TAG - 1,
                  b->shared_size, st, b->L->dyn_smem);
    else
        emu_fault(b, t, in, what, "address 0x%" PRIx64 " is out of bounds: the block has %u bytes of shared memory (%u static, %u dynamic)",
                  addr, b->shared_size, st, b->L->dyn_smem);
}

uint8_t *emu_access(EmuBlock *b, EmuThread *t, const EmuIns *in, unsigned space, uint64_t addr, unsigned size,
                    unsigned align, bool write) {
    if (space == EMU_SP_GENERIC) {
        if (addr - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE) { space = EMU_SP_SHARED; addr -= EMU_SHARED_WINDOW; }
        else if (addr - EMU_LOCAL_WINDOW < EMU_WINDOW_SIZE) { space = EMU_SP_LOCAL; addr -= EMU_LOCAL_WINDOW; }
        else if (addr - EMU_PARAM_WINDOW < EMU_WINDOW_SIZE) { space = EMU_SP_PARAM; addr -= EMU_PARAM_WINDOW; }
        else space = EMU_SP_GLOBAL;
    }
    if (align > 1 && (addr & (align - 1))) {
        /* a global address in no allocation is reported as that (a wild pointer), not as misaligned */
        if (space == EMU_SP_GLOBAL && !emu_mem_find(b->L->mem, addr)) {
            global_oob(b, t, in, space, addr, size, write);
            return NULL;
        }
        char what[96];
        snprintf(what, sizeof what, "memcheck: misaligned %s %s of size %u bytes", space_label(space), write ? "write" : "read", size);
        emu_fault(b, t, in, what, "address 0x%" PRIx64 " is not aligned to %u bytes", addr, align);
        return NULL;
    }
    switch (space) {
    case EMU_SP_GLOBAL: case EMU_SP_CONST: {
        /* the allocations cached below (emu_global's cache: nothing pending, writable) answer without a search */
        for (unsigned k = 0; space == EMU_SP_GLOBAL && k < EMU_GCACHE; k++)
            if (addr >= b->gc[k].lo && addr < b->gc[k].hi && size <= b->gc[k].hi - addr) return b->gc[k].host + (addr - b->gc[k].lo);
        const EmuAlloc *a = emu_mem_find(b->L->mem, addr);
        if (!a || size > a->size - (addr - a->addr)) {
            /* the aligned word around an allocation's last bytes: on a GPU they lie in an allocation granule
             * (LLVM's 16-bit atomics on sm_80 CAS the 32-bit word around the element, also the last one of an
             * odd-length buffer, after a plain load of it); here the bytes past the end read 0 and an atomic's
             * writes to them are dropped.  Scalar loads and scalar atomics only: a vector access or a plain store
             * past the end is an unmasked tail, the bug memcheck is for */
            if (a && size <= 8 && !(size & (size - 1)) && !(addr & (size - 1)) && (!in || in->vec <= 1) &&
                (!write || (b->tail_write && !a->readonly))) {
                unsigned valid = (unsigned)(a->addr + a->size - addr);
                b->tail.host = a->host + (addr - a->addr);
                b->tail.valid = valid;
                memset(b->tail.buf, 0, sizeof b->tail.buf);
                memcpy(b->tail.buf, b->tail.host, valid);
                return b->tail.buf;
            }
            global_oob(b, t, in, space, addr, size, write);
            return NULL;
        }
        if (a->readonly) {
            if (write) {
                emu_fault(b, t, in, "memcheck: write to __constant__ memory",
                          "address 0x%" PRIx64 " is in a .const variable of %" PRIu64 " bytes at 0x%" PRIx64 ", which is read-only",
                          addr, a->size, a->addr);
                return NULL;
            }
            return a->host + (addr - a->addr); /* not cached: the fast stores must not reach it */
        }
        if (b->nbulk && a->addr < b->bulk_hi && b->bulk_lo < a->addr + a->size) {
            /* an allocation pending bulk writes meet is not cached either: each access is checked against them (a
             * bulk copy's reads too; its writes are its own) */
            if ((!b->in_bulk || !write) && addr < b->bulk_hi && b->bulk_lo < addr + size && !emu_bulk_check(b, t, in, addr, size, write))
                return NULL;
            return a->host + (addr - a->addr);
        }
        b->gc[b->gc_next++ % EMU_GCACHE] = (EmuGlobalCache){a->addr, a->addr + a->size, a->host};
        return a->host + (addr - a->addr);
    }
    case EMU_SP_SHARED: {
        uint64_t idx;
        if (!emu_smem_index(b, t, addr, size, &idx)) {
            smem_oob(b, t, in, addr, size, write);
            return NULL;
        }
        if (addr >= EMU_DSMEM_TAG) {
            char what[96];
            snprintf(what, sizeof what, "memcheck: invalid __shared__ %s of size %u bytes", write ? "write" : "read", size);
            if (!emu_smem_live(b, t, in, addr, idx, what)) return NULL;
        }
        if (b->shadow && !emu_race_check(b, t, in, idx, size, write)) return NULL;
        if (write && b->nbulkrd && !emu_bulk_src_check(b, t, in, idx, size)) return NULL;
        if (write && b->wg_reading && !emu_wgmma_smem_write(b, t, in, idx, size)) return NULL;
        return b->shared + idx;
    }
    case EMU_SP_LOCAL:
        /* the entry's variables, exactly (not the stride's padding); the rest, and the faults, in emu_local */
        if (addr < b->L->f->local_size && size <= b->L->f->local_size - addr)
            return b->local + (size_t)t->linear * b->local_size + addr;
        return emu_local(b, t, in, addr, size, write);
    case EMU_SP_PARAM: /* below param_size: the kernel's at any depth (a .func's own are in its frame, above: emu_param) */
        if (!write && addr < b->L->param_size && size <= b->L->param_size - addr) return b->L->params + addr;
        return emu_param(b, t, in, addr, size, write);
    }
    emu_fault(b, t, in, "unsupported state space", "'.%s' accesses are not supported", "?");
    return NULL;
}

/* The hint of a global fast instruction accessing size bytes: a copy of cache entry e. */
static void ghint_fill(EmuBlock *b, const EmuIns *in, const EmuGlobalCache *e, unsigned size) {
    uint64_t span = e->hi - e->lo;
    b->gh[in->ghint] = (EmuGlobalHint){e->lo, span >= size ? span - size + 1 : 0, e->host, e->hi};
}

uint8_t *emu_global_cached(EmuBlock *b, const EmuIns *in, uint64_t addr, unsigned size) {
    /* size is a power of two, so the last byte of an aligned access, addr + size - 1, cannot wrap (addr + size
     * could, to 0 at the top of the address space, which matched every entry) */
    uint64_t last = addr + (size - 1);
    if (!(addr & (size - 1)))
        for (unsigned k = 0; k < EMU_GCACHE; k++)
            if (addr >= b->gc[k].lo && last < b->gc[k].hi) {
                ghint_fill(b, in, &b->gc[k], size);
                return b->gc[k].host + (addr - b->gc[k].lo);
            }
    return NULL;
}

uint8_t *emu_global_miss(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write) {
    uint8_t *c = emu_global_cached(b, in, addr, size);
    if (c) return c;
    uint32_t filled = b->gc_next;
    uint8_t *p = emu_access(b, t, in, EMU_SP_GLOBAL, addr, size, size, write);
    if (p && b->gc_next != filled) ghint_fill(b, in, &b->gc[(b->gc_next - 1) % EMU_GCACHE], size); /* just cached */
    return p;
}

/* Whether a generic address is outside the shared, local and param windows: global memory (or nothing). */
static bool generic_is_global(uint64_t a) {
    return !(a - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE || a - EMU_LOCAL_WINDOW < EMU_WINDOW_SIZE || a - EMU_PARAM_WINDOW < EMU_WINDOW_SIZE);
}

/* ---- atomics ---- */
/* One f16/bf16 lane of an atomic add, rounded to nearest (no flush: .noftz). */
static uint64_t half_add(unsigned ety, uint64_t a, uint64_t b) {
    bool bf = ety == EMU_T_BF16;
    double x = bf ? emu_bf16_to_f64((uint16_t)a) : emu_f16_to_f64((uint16_t)a);
    double y = bf ? emu_bf16_to_f64((uint16_t)b) : emu_f16_to_f64((uint16_t)b);
    return emu_round_f64(x + y, bf ? EMU_FMT_BF16 : EMU_FMT_F16, EMU_RND_RN) & 0xFFFF;
}

/* atom/red .add.f32 on global memory and cp.reduce.async.bulk .add.f32: the ISA's "current implementation
 * flushes subnormal inputs and results to sign-preserving zero" (shared-memory atomics do not). */
static float ftz32(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }
uint64_t emu_add_f32_ftz(uint64_t old, uint64_t v) {
    float r = ftz32(ftz32(emu_f32(old)) + ftz32(emu_f32(v)));
    return isnan(r) ? 0x7FFFFFFFu : emu_bits32(r); /* a NaN sum is the canonical NaN, as add.f32's */
}

/* Float min/max of one element as `min`/`max` without .NaN do it (the atom and red pages say nothing more): a NaN
 * loses to a number, two NaNs give the canonical NaN, -0 is below +0; the result is one of the inputs, unrounded. */
static uint64_t float_minmax(bool mn, unsigned ty, uint64_t old, uint64_t v) {
    unsigned es = emu_type_size(ty);
    double x = ty == EMU_T_F16 ? emu_f16_to_f64((uint16_t)old) : ty == EMU_T_BF16 ? emu_bf16_to_f64((uint16_t)old)
               : ty == EMU_T_F32 ? emu_f32(old) : emu_f64(old);
    double y = ty == EMU_T_F16 ? emu_f16_to_f64((uint16_t)v) : ty == EMU_T_BF16 ? emu_bf16_to_f64((uint16_t)v)
               : ty == EMU_T_F32 ? emu_f32(v) : emu_f64(v);
    if (isnan(x) && isnan(y)) return es == 2 ? 0x7FFFu : es == 4 ? 0x7FFFFFFFu : 0x7FFFFFFFFFFFFFFFull;
    bool take_v = isnan(x) || (!isnan(y) && (mn ? y < x || (y == x && signbit(y)) : y > x || (y == x && !signbit(y))));
    return emu_zext(take_v ? v : old, es);
}

uint64_t emu_atom_apply(unsigned mode, unsigned ty, uint64_t old, uint64_t v, uint64_t c, bool *bad) {
    unsigned sz = emu_type_size(ty), k = emu_type_kind(ty);
    switch (mode) {
    case EMU_MODE_AADD:
        if (ty == EMU_T_F32) { /* a NaN sum is the canonical NaN, as add's (and half_add's) */
            float r = emu_f32(old) + emu_f32(v);
            return isnan(r) ? 0x7FFFFFFFu : emu_bits32(r);
        }
        if (ty == EMU_T_F64) {
            double r = emu_f64(old) + emu_f64(v);
            return isnan(r) ? 0x7FFFFFFFFFFFFFFFull : emu_bits64(r);
        }
        if (ty == EMU_T_F16 || ty == EMU_T_BF16) return half_add(ty, old, v);
        if (ty == EMU_T_F16X2 || ty == EMU_T_BF16X2) {
            unsigned e = ty == EMU_T_F16X2 ? EMU_T_F16 : EMU_T_BF16;
            return half_add(e, old, v) | half_add(e, old >> 16, v >> 16) << 16;
        }
        return emu_zext(old + v, sz);
    case EMU_MODE_AINC: return emu_zext(old, sz) >= emu_zext(v, sz) ? 0 : emu_zext(old + 1, sz);
    case EMU_MODE_ADEC: return (emu_zext(old, sz) == 0 || emu_zext(old, sz) > emu_zext(v, sz)) ? emu_zext(v, sz) : emu_zext(old - 1, sz);
    case EMU_MODE_AMIN: case EMU_MODE_AMAX: {
        bool mn = mode == EMU_MODE_AMIN;
        if (ty == EMU_T_F16X2 || ty == EMU_T_BF16X2) { /* lane by lane */
            unsigned e = ty == EMU_T_F16X2 ? EMU_T_F16 : EMU_T_BF16;
            return float_minmax(mn, e, old & 0xFFFF, v & 0xFFFF) | float_minmax(mn, e, old >> 16 & 0xFFFF, v >> 16 & 0xFFFF) << 16;
        }
        if (k == EMU_K_F) {
            if (ty == EMU_T_F16 || ty == EMU_T_BF16 || ty == EMU_T_F32 || ty == EMU_T_F64) return float_minmax(mn, ty, old, v);
            *bad = true;
            return old;
        }
        if (k == EMU_K_S) {
            int64_t x = emu_sext(old, sz), y = emu_sext(v, sz);
            return emu_zext((uint64_t)(mn ? (x < y ? x : y) : (x > y ? x : y)), sz);
        }
        uint64_t x = emu_zext(old, sz), y = emu_zext(v, sz);
        return mn ? (x < y ? x : y) : (x > y ? x : y);
    }
    case EMU_MODE_AEXCH: return emu_zext(v, sz);
    case EMU_MODE_ACAS: return emu_zext(old, sz) == emu_zext(v, sz) ? emu_zext(c, sz) : old;
    case EMU_MODE_AAND: return old & v;
    case EMU_MODE_AOR: return old | v;
    case EMU_MODE_AXOR: return old ^ v;
    }
    *bad = true;
    return old;
}

/* One atomic read-modify-write of a sz-byte element at p; its old value. */
static uint64_t atom_one(uint8_t *p, unsigned sz, const EmuIns *in, uint64_t v, uint64_t c, bool ftz, bool *bad);

/* atom.cas.b128 d, [a], b, c / atom.exch.b128 d, [a], b: 16 bytes aligned to 16, the registers' two slots (low
 * 64 bits first; parse.c checked them, d may be `_`).  The host has no portable 16-byte compare-and-swap, so
 * the launch's b128 atomics take one lock; they are atomic with respect to each other, which is what the ISA
 * promises of atomics of one size. */
static bool exec_atom128(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    uint64_t addr = EMU_R(t, in, 1) + (uint64_t)in->off[0];
    unsigned space = in->space == EMU_SP_SHARED ? EMU_SP_SHARED : in->space == EMU_SP_GLOBAL ? EMU_SP_GLOBAL : EMU_SP_GENERIC;
    uint8_t *p = emu_access(b, t, in, space, space == EMU_SP_SHARED ? addr & 0xFFFFFFFFu : addr, 16, 16, true);
    if (!p) return false;
    if (b->shadow && (in->xflags & EMU_XF_ACQUIRE)) emu_race_acquire_at(b, t, p);
    if (b->shadow && (in->xflags & EMU_XF_RELEASE)) emu_race_release_at(b, t, p, true);
    uint64_t *r = t->r, old[2], v[2] = {r[in->o[2]], r[in->o[2] + 1]};
    pthread_mutex_lock(&b->L->atom128);
    memcpy(old, p, 16);
    if (in->mode == EMU_MODE_AEXCH) memcpy(p, v, 16);
    else if (old[0] == v[0] && old[1] == v[1]) memcpy(p, (uint64_t[2]){r[in->o[3]], r[in->o[3] + 1]}, 16);
    pthread_mutex_unlock(&b->L->atom128);
    if (in->o[0] != EMU_SLOT_SINK) r[in->o[0]] = old[0], r[in->o[0] + 1] = old[1];
    return true;
}

/* Host compare-and-swap of the n (1, 2 or 4) bytes at h: *cur the expected value, updated on failure. */
static bool cas_n(void *h, unsigned n, uint32_t *cur, uint32_t want) {
    bool ok;
    if (n == 1) {
        uint8_t e = (uint8_t)*cur;
        ok = __atomic_compare_exchange_n((uint8_t *)h, &e, (uint8_t)want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        *cur = e;
    } else if (n == 2) {
        uint16_t e = (uint16_t)*cur;
        ok = __atomic_compare_exchange_n((uint16_t *)h, &e, (uint16_t)want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        *cur = e;
    } else {
        ok = __atomic_compare_exchange_n((uint32_t *)h, cur, want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    return ok;
}

/* A scalar atom/red on a tail access (b->tail): one read-modify-write of the word whose bytes past the
 * allocation's end read 0 and take no write.  The valid bytes are the word's low ones (little-endian);
 * 1, 2 or 4 of them change with one host compare-and-swap (atomic with respect to every other atomic on
 * them), 3, 5, 6 or 7 under the launch's b128 lock (atomic with respect to the other tail atomics). */
static uint64_t atom_tail(EmuBlock *b, const EmuIns *in, uint64_t v, uint64_t c, bool ftz, bool *bad) {
    unsigned valid = b->tail.valid;
    uint64_t o = 0, n;
    void *h = b->tail.host;
    if (valid == 1 || valid == 2 || valid == 4) {
        uint32_t cur = valid == 1 ? __atomic_load_n((uint8_t *)h, __ATOMIC_RELAXED)
                       : valid == 2 ? __atomic_load_n((uint16_t *)h, __ATOMIC_RELAXED) : __atomic_load_n((uint32_t *)h, __ATOMIC_RELAXED);
        do {
            o = cur;
            n = ftz ? emu_add_f32_ftz(o, v) : emu_atom_apply(in->mode, in->ty, o, v, c, bad);
            if (*bad) break;
        } while (!cas_n(h, valid, &cur, (uint32_t)n)); /* the bytes of n past the end are dropped */
        return o;
    }
    pthread_mutex_lock(&b->L->atom128);
    memcpy(&o, h, valid);
    n = ftz ? emu_add_f32_ftz(o, v) : emu_atom_apply(in->mode, in->ty, o, v, c, bad);
    if (!*bad) memcpy(h, &n, valid);
    pthread_mutex_unlock(&b->L->atom128);
    return o;
}

/* atom / red; a vector form (.v2/.v4/.v8 of f32, f16, bf16, f16x2, bf16x2: sm_90) updates each element
 * atomically, in order, the whole vector aligned to its size. */
static bool exec_atom(EmuBlock *b, EmuThread *t, const EmuIns *in, bool has_dest) {
    unsigned sz = emu_type_size(in->ty), n = in->vec ? in->vec : 1;
    unsigned ai = has_dest ? 1 : 0;
    if (sz == 16 && has_dest) return exec_atom128(b, t, in);
    if (sz != 2 && sz != 4 && sz != 8)
        return emu_fault(b, t, in, "unsupported instruction", "atomics on .%s are not supported by the emulator", emu_type_name(in->ty));
    uint64_t addr = EMU_R(t, in, ai) + (uint64_t)in->off[0];
    unsigned space = in->space == EMU_SP_SHARED ? EMU_SP_SHARED : in->space == EMU_SP_GLOBAL ? EMU_SP_GLOBAL : EMU_SP_GENERIC;
    if (n > 1 && space == EMU_SP_GENERIC && !generic_is_global(addr)) /* ISA: vector atomics on global memory only */
        return emu_fault(b, t, in, "invalid address", "a vector %s needs a global address; generic address 0x%" PRIx64 " is not one",
                         emu_op_name(in->op), addr);
    b->tail_write = n == 1;
    uint8_t *p = emu_access(b, t, in, space, space == EMU_SP_SHARED ? addr & 0xFFFFFFFFu : addr, sz * n, sz * n, true);
    b->tail_write = false;
    if (!p) return false;
    bool tail = p == b->tail.buf;
    if (b->shadow && (in->xflags & EMU_XF_ACQUIRE)) emu_race_acquire_at(b, t, tail ? b->tail.host : p);
    if (b->shadow && (in->xflags & EMU_XF_RELEASE)) emu_race_release_at(b, t, tail ? b->tail.host : p, true);
    if (b->shadow && (in->xflags & (EMU_XF_ACQUIRE | EMU_XF_RELEASE)) != (EMU_XF_ACQUIRE | EMU_XF_RELEASE))
        emu_race_strong(b, t, tail ? b->tail.host : p, in->op == EMU_OP_ATOM && !(in->xflags & EMU_XF_ACQUIRE),
                        !(in->xflags & EMU_XF_RELEASE), true);
    const EmuFunc *f = t->fn;
    bool bad = false;
    /* .add.f32 on global memory (a generic address outside the shared, local and param windows) flushes */
    bool ftz = in->mode == EMU_MODE_AADD && in->ty == EMU_T_F32 &&
               (space == EMU_SP_GLOBAL || (space == EMU_SP_GENERIC && generic_is_global(addr)));
    for (unsigned k = 0; k < n && !bad; k++) {
        uint32_t vs = in->ok[ai + 1] == EMU_OK_VEC ? f->vec[in->o[ai + 1] + k] : in->o[ai + 1];
        uint64_t c = in->mode == EMU_MODE_ACAS ? EMU_R(t, in, ai + 2) : 0;
        uint64_t old = tail ? atom_tail(b, in, t->r[vs], c, ftz, &bad) : atom_one(p + (size_t)k * sz, sz, in, t->r[vs], c, ftz, &bad);
        if (has_dest && !bad) t->r[in->ok[0] == EMU_OK_VEC ? f->vec[in->o[0] + k] : in->o[0]] = old;
    }
    if (bad)
        return emu_fault(b, t, in, "unsupported instruction", "atom/red with this operation on .%s is not supported",
                         emu_type_name(in->ty));
    return true;
}

static uint64_t atom_one(uint8_t *p, unsigned sz, const EmuIns *in, uint64_t v, uint64_t c, bool ftz, bool *bad_out) {
    bool bad = false;
    uint64_t old;
    if (sz == 2) {
        uint16_t *q = (uint16_t *)(void *)p, o = __atomic_load_n(q, __ATOMIC_RELAXED), n;
        do {
            n = (uint16_t)emu_atom_apply(in->mode, in->ty, o, v, c, &bad);
            if (bad) break;
        } while (!__atomic_compare_exchange_n(q, &o, n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        old = o;
    } else if (sz == 4) {
        uint32_t *q = (uint32_t *)(void *)p, o = __atomic_load_n(q, __ATOMIC_RELAXED), n;
        do {
            n = (uint32_t)(ftz ? emu_add_f32_ftz(o, v) : emu_atom_apply(in->mode, in->ty, o, v, c, &bad));
            if (bad) break;
        } while (!__atomic_compare_exchange_n(q, &o, n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        old = o;
    } else {
        uint64_t *q = (uint64_t *)(void *)p, o = __atomic_load_n(q, __ATOMIC_RELAXED), n;
        do {
            n = emu_atom_apply(in->mode, in->ty, o, v, c, &bad);
            if (bad) break;
        } while (!__atomic_compare_exchange_n(q, &o, n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        old = o;
    }
    *bad_out = bad;
    return old;
}

/* Relaxed host atomics of an aligned 1, 2, 4 or 8-byte element (little-endian host). */
static uint64_t strong_load(const uint8_t *p, unsigned sz) {
    switch (sz) {
    case 1: return __atomic_load_n(p, __ATOMIC_RELAXED);
    case 2: return __atomic_load_n((const uint16_t *)(const void *)p, __ATOMIC_RELAXED);
    case 4: return __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_RELAXED);
    default: return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_RELAXED);
    }
}

static void strong_store(uint8_t *p, uint64_t v, unsigned sz) {
    switch (sz) {
    case 1: __atomic_store_n(p, (uint8_t)v, __ATOMIC_RELAXED); break;
    case 2: __atomic_store_n((uint16_t *)(void *)p, (uint16_t)v, __ATOMIC_RELAXED); break;
    case 4: __atomic_store_n((uint32_t *)(void *)p, (uint32_t)v, __ATOMIC_RELAXED); break;
    default: __atomic_store_n((uint64_t *)(void *)p, v, __ATOMIC_RELAXED); break;
    }
}

/* A plain little-endian load / store of sz bytes (at most 8): 1, 2, 4 and 8 a single move each, not a byte loop. */
static inline uint64_t plain_load(const uint8_t *p, unsigned sz) {
    uint16_t h;
    uint32_t w;
    uint64_t d;
    switch (sz) {
    case 1: return *p;
    case 2: memcpy(&h, p, 2); return h;
    case 4: memcpy(&w, p, 4); return w;
    case 8: memcpy(&d, p, 8); return d;
    default: d = 0, memcpy(&d, p, sz); return d;
    }
}

static inline void plain_store(uint8_t *p, uint64_t v, unsigned sz) {
    switch (sz) {
    case 1: *p = (uint8_t)v; break;
    case 2: memcpy(p, &(uint16_t){(uint16_t)v}, 2); break;
    case 4: memcpy(p, &(uint32_t){(uint32_t)v}, 4); break;
    default: memcpy(p, &v, sz); break;
    }
}

static unsigned ld_space(const EmuIns *in) { return in->op == EMU_OP_LDU ? EMU_SP_GLOBAL : in->space; }

bool emu_exec_mem(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    const EmuFunc *f = t->fn;
    switch (in->op) {
    case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_ST: {
        bool st = in->op == EMU_OP_ST;
        unsigned sz = emu_type_size(in->ty), n = in->vec, total = sz * n;
        if (sz == 0 || (sz > 8 && !(sz == 16 && n == 1)))
            return emu_fault(b, t, in, "unsupported instruction", "loads/stores of .%s are not supported", emu_type_name(in->ty));
        unsigned parts = sz == 16 ? 2 : 1; /* .b128: a register's two slots, the low 64 bits first */
        if (parts == 2) sz = 8, n = 2;
        unsigned ai = st ? 0 : 1, vi = st ? 1 : 0, space = ld_space(in);
        uint64_t addr = EMU_R(t, in, ai) + (uint64_t)in->off[0];
        if (space == EMU_SP_SHARED || space == EMU_SP_LOCAL || space == EMU_SP_PARAM) addr &= 0xFFFFFFFFu;
        if (space == EMU_SP_GENERIC && in->op == EMU_OP_LD && (in->xflags & EMU_XF_UNIFIED) && !generic_is_global(addr))
            return emu_fault(b, t, in, "invalid address", "ld [a].unified needs a global address; generic address 0x%" PRIx64
                             " is not one", addr);
        uint8_t val[64]; /* a store's bytes, for racecheck: writing what another thread wrote there is no hazard */
        if (st && b->shadow) {
            for (unsigned k = 0; k < n; k++) {
                uint64_t v = t->r[(in->ok[vi] == EMU_OK_VEC ? f->vec[in->o[vi] + k] : in->o[vi]) + (parts == 2 ? k : 0)];
                if (in->ty == EMU_T_PRED) v &= 1;
                memcpy(val + k * sz, &v, sz);
            }
            b->wval = val;
        }
        uint8_t *p = emu_access(b, t, in, space, addr, total, total, st);
        b->wval = NULL;
        if (!p) return false;
        bool tail = p == b->tail.buf;
        if (b->shadow && (in->xflags & EMU_XF_ACQUIRE) && !st) emu_race_acquire_at(b, t, tail ? b->tail.host : p);
        if (b->shadow && (in->xflags & EMU_XF_RELEASE) && st) emu_race_release_at(b, t, tail ? b->tail.host : p, false);
        if (b->shadow && (in->xflags & EMU_XF_STRONG) && !(in->xflags & (st ? EMU_XF_RELEASE : EMU_XF_ACQUIRE)))
            emu_race_strong(b, t, tail ? b->tail.host : p, !st, st, false);
        bool sg = emu_type_kind(in->ty) == EMU_K_S;
        /* strong accesses (.volatile, .relaxed, .acquire, .release) to memory other blocks see (global, or any
         * generic address outside this block's windows) may meet another host thread's: relaxed host atomics
         * (a flag one block spins on while another writes it was a data race in C) */
        bool strong = (in->xflags & EMU_XF_STRONG) && !tail && (sz == 1 || sz == 2 || sz == 4 || sz == 8) &&
                      (space == EMU_SP_GLOBAL || (space == EMU_SP_GENERIC && generic_is_global(addr)));
        for (unsigned k = 0; k < n; k++) {
            uint32_t slot = (in->ok[vi] == EMU_OK_VEC ? f->vec[in->o[vi] + k] : in->o[vi]) + (parts == 2 ? k : 0);
            if (st) {
                uint64_t v = t->r[slot];
                if (in->ty == EMU_T_PRED) v &= 1;
                if (strong) strong_store(p + k * sz, v, sz);
                else plain_store(p + k * sz, v, sz); /* little-endian host */
            } else {
                uint64_t v = 0;
                if (strong) v = strong_load(p + k * sz, sz);
                else v = plain_load(p + k * sz, sz);
                t->r[slot] = sg ? (uint64_t)emu_sext(v, sz) : v;
            }
        }
        if (st && tail) memcpy(b->tail.host, b->tail.buf, b->tail.valid); /* the bytes past the end are dropped */
        return true;
    }
    case EMU_OP_ATOM: return exec_atom(b, t, in, true);
    case EMU_OP_RED: return exec_atom(b, t, in, false);
    case EMU_OP_CVTA: {
        uint64_t a = EMU_R(t, in, 1), base;
        switch (in->space) {
        case EMU_SP_GLOBAL: case EMU_SP_CONST: base = 0; break;
        case EMU_SP_SHARED: base = EMU_SHARED_WINDOW; break;
        case EMU_SP_LOCAL: base = EMU_LOCAL_WINDOW; break;
        case EMU_SP_PARAM: base = EMU_PARAM_WINDOW; break; /* a kernel parameter's address, both ways (cvta.to.param: PTX 7.7) */
        default: return emu_fault(b, t, in, "unsupported instruction", "cvta for this state space is not supported");
        }
        uint64_t r = (in->flags & EMU_F(TO)) ? a - base : a + base;
        EMU_R(t, in, 0) = emu_zext(r, emu_type_size(in->ty));
        return true;
    }
    case EMU_OP_ISSPACEP: {
        /* the windows of generic addresses (emu.h); global and const share the rest, const being the
         * read-only module variables */
        uint64_t a = EMU_R(t, in, 1);
        bool in_window = a - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE || a - EMU_LOCAL_WINDOW < EMU_WINDOW_SIZE ||
                         a - EMU_PARAM_WINDOW < EMU_WINDOW_SIZE;
        bool r;
        switch (in->space) {
        case EMU_SP_SHARED: { /* .shared::cta: not another CTA's part of the cluster's window (EMU_DSMEM_TAG) */
            uint64_t o = a - EMU_SHARED_WINDOW;
            r = o < EMU_WINDOW_SIZE;
            if (r && (in->xflags & EMU_XF_CTA) && o >= EMU_DSMEM_TAG) r = o / EMU_DSMEM_TAG - 1 == t->cta % b->ncl;
            break;
        }
        case EMU_SP_LOCAL: r = a - EMU_LOCAL_WINDOW < EMU_WINDOW_SIZE; break;
        case EMU_SP_PARAM: r = a - EMU_PARAM_WINDOW < EMU_WINDOW_SIZE; break;
        case EMU_SP_GLOBAL: r = !in_window; break;
        case EMU_SP_CONST: {
            const EmuAlloc *al = in_window ? NULL : emu_mem_find(b->L->mem, a);
            r = al && al->readonly;
            break;
        }
        default: return emu_fault(b, t, in, "invalid instruction", "isspacep needs a state space");
        }
        EMU_R(t, in, 0) = r;
        return true;
    }
    case EMU_OP_CP_ASYNC: {
        uint32_t cp = (uint32_t)EMU_R(t, in, 2);
        bool ignore = (EMU_R(t, in, 3) != 0) != (in->on[3] != 0); /* the ignore-src predicate, `!%p` negated */
        uint32_t srcsz = in->nops < 4 ? cp : in->xflags & EMU_XF_IGNORE_SRC ? (ignore ? 0 : cp) : (uint32_t)EMU_R(t, in, 3);
        if (cp != 4 && cp != 8 && cp != 16)
            return emu_fault(b, t, in, "invalid instruction", "cp.async copy size %u (4, 8 or 16)", cp);
        if (srcsz > cp) srcsz = cp;
        uint64_t da = (EMU_R(t, in, 0) + (uint64_t)in->off[0]) & 0xFFFFFFFFu;
        uint8_t val[16] = {0}; /* the bytes written (the source, zero-filled): racecheck takes a copy of the bytes already there
                                * by another thread as no hazard, as for st (replicated layouts load an element twice) */
        if (srcsz) {
            const uint8_t *s = emu_access(b, t, in, EMU_SP_GLOBAL, EMU_R(t, in, 1) + (uint64_t)in->off[1], srcsz, cp, false);
            if (!s) return false;
            memcpy(val, s, srcsz);
        }
        b->wval = b->shadow ? val : NULL;
        uint8_t *d = emu_access(b, t, in, EMU_SP_SHARED, da, cp, cp, true);
        b->wval = NULL;
        if (!d) return false;
        memcpy(d, val, cp);
        if (b->cpa) emu_race_cp_async(b, t, (uint64_t)(d - b->shared), cp);
        return true;
    }
    default:
        return emu_fault(b, t, in, "unsupported instruction", "'%s' is not a memory instruction", emu_op_name(in->op));
    }
}

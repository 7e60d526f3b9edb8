/* layout.h - how a tensor is spread over the threads of a program.
 *
 * A distributed tensor of shape S in layout L is, in each thread, an array
 * of registers.  Register r holds the element whose coordinate along dim d is
 *
 *     coord_d(r, thread) = (stat[r][d] + T_d(thread)) mod S_d
 *
 * where stat is a compile-time table (LayoutRegs) and T_d is the thread's
 * offset along d (lane and warp part), an expression of the thread id only.
 * Two registers — in the same or in different layouts with the same thread
 * terms — hold the same element exactly when their `stat` agree mod S.  All
 * register-level rewrites (broadcast, expand_dims, reductions, dot operands)
 * are lookups in these tables; everything else goes through shared memory.
 *
 * Blocked register order: per dim a local index li_d = rep_d*spt_d + e_d in
 * [0, spt_d*reps_d), linearized with order[0] fastest, so consecutive
 * registers along the fastest dim are consecutive elements (vector access).
 * stat[d] = rep_d * coverage_d + e_d, where coverage_d = spt_d*tpw_d*wpc_d
 * and reps_d = max(1, S_d / coverage_d).
 * T_d = lane_d*spt_d + warp_d*tpw_d*spt_d, where lane_d/warp_d decompose the
 * lane and warp ids along `order` (fastest dim first).
 * Slice(P, k) registers: P's registers over S with S_k := 1, keeping those
 * with li_k == 0, in P's order, with dim k dropped. */
#ifndef TILE_LAYOUT_H
#define TILE_LAYOUT_H

#include "tir.h"

typedef struct LayoutRegs {
    int n;                         /* registers per thread */
    int rank;
    int32_t (*stat)[TIR_MAX_RANK]; /* [n][rank], already reduced mod S_d */
    int32_t (*raw)[TIR_MAX_RANK];  /* [n][rank], before mod: raw >= S_d marks an in-thread replica */
} LayoutRegs;

/* The blocked layout at the root of L (L itself, or the parent of a slice). */
const Layout *layout_root(const Layout *l);
/* Register table of a tensor type (must have a layout); malloc'd, free with layout_regs_free. */
LayoutRegs layout_regs(const Type *t);
LayoutRegs layout_regs_of(const Layout *l, int rank, const int32_t *shape);
void layout_regs_free(LayoutRegs *r);
/* Index of the register whose stat equals `coord` (already mod S), or -1. */
int layout_regs_find(const LayoutRegs *r, const int32_t *coord);

/* Per-dim thread terms of a layout for a root dim: T = lane_d*lane_mul + warp_d*warp_mul where
 * lane_d = (lane / lane_stride) % lane_count (same for warps).  For a slice the dims are the
 * parent's dims without the sliced one. */
typedef struct ThreadTerm {
    int lane_stride, lane_count, lane_mul;
    int warp_stride, warp_count, warp_mul;
} ThreadTerm;
ThreadTerm layout_thread_term(const Layout *l, int dim);
/* Coverage of the root layout along a dim of the tensor (spt*tpw*wpc). */
int layout_coverage(const Layout *l, int dim);
/* Whether every register of rank-2 tensor type t holds columns of one w-wide chunk [c*w, (c+1)*w) in
 * every thread (its static column decides the chunk): what a local_store of a column slice needs. */
bool layout_cols_in_chunks(const Type *t, int w);
/* Dim of the root layout that dim `d` of a tensor in layout l corresponds to. */
int layout_root_dim(const Layout *l, int d);

/* Choose a blocked layout for a tensor of this shape: `order` fastest first (NULL: row-major),
 * `vec` contiguous elements per thread along order[0]; lanes then warps fill the dims along
 * `order`, warps the slowest dims first; whatever is left over replicates. */
/* A conversion between two layouts of one shape that moves no data between threads: every
 * element of `to` is held by the same thread in `from` (thread terms agree per dim). */
bool layout_convert_is_local(const Type *from, const Type *to);

/* Where the element at coordinate c ^ j along dim ax (j a power of two) is, for a tensor of
 * type t in a blocked layout covering the dim without wrapping: 1 the same thread, 2 another
 * lane of the same warp, 0 elsewhere (another warp, or a layout this does not handle). */
int layout_xor_partner(const Type *t, int ax, int j);

Layout layout_blocked_for(int rank, const int32_t *shape, const int *order, int vec, int num_warps);
Layout layout_slice(const Layout *parent, int dim);
/* trans: same registers, dims permuted (result dim i = operand dim perm[i]). */
Layout layout_permute(const Layout *l, const int32_t *perm);

/* An mma layout whose warps all split M in multiples of 4 (warps [4k, 1]): each warpgroup owns
 * 64-row slabs of the whole N, the layout wgmma's accumulator has (sm_90a). */
static inline bool layout_is_warpgroup_mma(const Layout *l) {
    return l && l->kind == LAYOUT_MMA && l->wpc[1] == 1 && l->wpc[0] % 4 == 0;
}

#endif

/* smem.h - shared-memory scratch sizes, shared by smem_alloc and the LLVM lowering. */
#ifndef TILE_SMEM_H
#define TILE_SMEM_H
#include "tir.h"
/* Bytes of scratch an op needs (0: none).  _counted takes f's use counts (tir_use_counts; NULL: looked up), which
 * say whether an atomic's old value is read. */
int smem_scratch_bytes(const Func *f, const Inst *i, bool wgmma);
int smem_scratch_bytes_counted(const Func *f, const Inst *i, bool wgmma, const int *uses);
/* Bytes a tensor-core dot's staged A takes before its staged B: the next 128-byte boundary, or
 * 1024 (a swizzle atom) when wgmma reads them (sm_90a). */
static inline int smem_dot_a_bytes(int a_bytes, bool wgmma) {
    int al = wgmma ? 1024 : 128;
    return (a_bytes + al - 1) / al * al;
}
/* A tensor-core dot on sm_90a whose B is a pipelined stage kept [K][N] of 8-bit elements (N contiguous; wgmma
 * and the s8/f8 fragments read 8-bit B K-major only, and cp.async and tensor maps move no single bytes
 * apart) copies it, transposed, into its scratch every iteration (llvm_mma.c restage_b). */
static inline bool smem_dot_b_restaged(const Type *b, bool wgmma) {
    return wgmma && b->rank == 2 && b->layout && b->layout->kind == LAYOUT_SHARED && b->layout->order[0] == 1 &&
           dtype_bits(b->dt) == 8;
}
/* An atomic whose result is used and is a scalar (thread 0 issues it) or a tensor whose layout
 * holds some element in more than one (thread, register): the issuing register broadcasts the
 * old value through scratch. */
bool smem_atomic_broadcasts(const Func *f, const Inst *i, const int *uses); /* uses: as smem_scratch_bytes_counted's */
/* Slabs of a stack or unstack [n, ...] that go through scratch at a time: n (the whole stack at once), or, where
 * the whole would take more than SMEM_STACK_CHUNK_BYTES and the whole's layout is blocked, the fewest slabs, a
 * power of two and a multiple of the layout's coverage of dim 0, down to which halving n keeps them over those
 * bytes (so each register of a chunk holds slabs of that chunk in every thread): the stack then goes through
 * scratch in chunks of that many slabs, a barrier between chunks.  A batched dot's [B, M, N] result read whole
 * thus takes a chunk's shared memory, not the whole tile's. */
enum { SMEM_STACK_CHUNK_BYTES = 64 * 1024 };
int smem_stack_chunk(const Func *f, const Inst *i);
/* Shared memory block b of f already asks for, at most: its buffers (each rounded up to 1 KiB) in the
 * return value, and the largest scratch one op needs, kept in *scratch where larger (smem_alloc places
 * scratch by liveness, never beside itself). */
int smem_estimate(const Func *f, const Block *b, int *scratch);
/* Distinct warp positions along dim d of a tensor (>1: a reduction along d crosses warps). */
int smem_warps_along(const Type *t, int d);
#endif

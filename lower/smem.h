/* smem.h - shared-memory scratch sizes, shared by smem_alloc and the LLVM lowering. */
#ifndef TILE_SMEM_H
#define TILE_SMEM_H
#include "tir.h"
/* Bytes of scratch an op needs (0: none). */
int smem_scratch_bytes(const Func *f, const Inst *i, bool wgmma);
/* Bytes a tensor-core dot's staged A takes before its staged B: the next 128-byte boundary, or
 * 1024 (a swizzle atom) when wgmma reads them (sm_90a). */
static inline int smem_dot_a_bytes(int a_bytes, bool wgmma) {
    int al = wgmma ? 1024 : 128;
    return (a_bytes + al - 1) / al * al;
}
/* An atomic whose result is used and is a scalar (thread 0 issues it) or a tensor whose layout
 * holds some element in more than one (thread, register): the issuing register broadcasts the
 * old value through scratch. */
bool smem_atomic_broadcasts(const Func *f, const Inst *i);
/* Distinct warp positions along dim d of a tensor (>1: a reduction along d crosses warps). */
int smem_warps_along(const Type *t, int d);
#endif

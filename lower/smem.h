/* smem.h - shared-memory scratch sizes, shared by smem_alloc and the LLVM lowering. */
#ifndef TILE_SMEM_H
#define TILE_SMEM_H
#include "tir.h"
/* Bytes of scratch an op needs (0: none). */
int smem_scratch_bytes(const Func *f, const Inst *i);
/* An atomic whose result is used and is a scalar (thread 0 issues it) or a tensor whose layout
 * holds some element in more than one (thread, register): the issuing register broadcasts the
 * old value through scratch. */
bool smem_atomic_broadcasts(const Func *f, const Inst *i);
/* Distinct warp positions along dim d of a tensor (>1: a reduction along d crosses warps). */
int smem_warps_along(const Type *t, int d);
#endif

/* target.h - the one table of GPU targets.
 *
 * Each row: X(ENUM, "name", sm, ptx, mma, smem_static, smem_dynamic, regs, is_default)
 *   sm            the SM version (80 = 8.0)
 *   ptx           the PTX ISA version the code is written in (70 = 7.0): LLVM's
 *                 minimum for that arch, so the .version line is what ptxas of
 *                 every CUDA release that knows the arch accepts; sm_89 8.4,
 *                 the first with mma.sync on e4m3/e5m2 (CUDA 12.4)
 *   mma           the tensor-core generation: MMA_SYNC (mma.sync, ldmatrix,
 *                 cp.async), WGMMA (adds wgmma, TMA, mbarrier, setmaxnreg;
 *                 sm_90a), TCGEN05 (tensor memory; sm_100a)
 *   smem_static   bytes of static shared memory a block may declare; beyond it
 *                 the kernel's shared memory is dynamic (opted in at launch)
 *   smem_dynamic  bytes of shared memory one block may use in all
 *   regs          32-bit registers per SM
 * Every arch comparison and every limit goes through this table: adding a
 * target is one row, then the code generation that is genuinely new for it
 * (docs/architecture.md, "How to add a target"). */
#ifndef TILE_SUPPORT_TARGET_H
#define TILE_SUPPORT_TARGET_H

#include <stdbool.h>
#include <stddef.h>

typedef enum MmaGen { MMA_SYNC, WGMMA, TCGEN05 } MmaGen;

#define TARGETS(X)                                                       \
    X(SM80, "sm_80", 80, 70, MMA_SYNC, 48 * 1024, 163 * 1024, 65536, 1)  \
    X(SM86, "sm_86", 86, 71, MMA_SYNC, 48 * 1024, 99 * 1024, 65536, 0)   \
    X(SM89, "sm_89", 89, 84, MMA_SYNC, 48 * 1024, 99 * 1024, 65536, 0)   \
    X(SM90A, "sm_90a", 90, 80, WGMMA, 48 * 1024, 227 * 1024, 65536, 0)

typedef enum TargetId {
#define X(e, n, sm, ptx, mma, ss, sd, r, d) TARGET_##e,
    TARGETS(X)
#undef X
        TARGET_COUNT
} TargetId;

typedef struct Target {
    TargetId id;
    const char *name;
    int sm, ptx;
    MmaGen mma;
    int smem_static, smem_dynamic;
    int regs;
} Target;

/* f8 in hardware (sm_89 on): cvt with e4m3x2/e5m2x2 pairs, and the tensor cores' f8 forms
 * (sm_89: mma.sync; sm_90a: wgmma). */
static inline bool target_has_f8(const Target *t) { return t && t->sm >= 89; }

/* Programmatic dependent launch's griddepcontrol.wait / .launch_dependents: sm_90 on, PTX ISA 7.8
 * (target.c checks that every such row's .version is high enough). */
static inline bool target_has_griddepcontrol(const Target *t) { return t && t->sm >= 90; }
enum { TARGET_GRIDDEPCONTROL_PTX = 78 };
/* ld/st with an L1 eviction priority (.L1::evict_last ...) need PTX ISA 7.4: a module that uses one on a
 * target written in an older version is written in 7.4 (lower/llvm_codegen.c). */
enum { PTX_L1_EVICTION = 74 };

/* The target of a name ("sm_90a"), NULL when there is none.  NULL or "" is the default. */
const Target *target_find(const char *name);
const Target *target_default(void);
const Target *target_get(TargetId id);
/* Whether code for t runs on a GPU of compute capability cc (major * 10 + minor): t's SM version
 * is at most cc, and an arch-specific target (sm_90a) runs on its own SM version only. */
bool target_runs_on(const Target *t, int cc);
/* The target a GPU of compute capability cc gets when none is named: the newest that runs on it
 * (sm_90a on 9.0; sm_89 on 10.0 and later, whose drivers compile its PTX); NULL below sm_80. */
const Target *target_for_cc(int cc);

/* The target a context compiles for: the emulated one that "emu:<target>" named (emulated; a named
 * arch may only agree with it); on a GPU of compute capability cc the named one, which must run there,
 * or with none named the GPU's own (target_for_cc: sm_90a on an H100/H200); else the named one or the
 * default.  NULL with a message in err (n bytes) when there is none; *older then says the GPU is older
 * than every target (else the named arch does not fit the device). */
const Target *target_for_context(const Target *named, const Target *emulated, int cc, char *err, size_t n, bool *older);

/* The target an unknown arch name most likely meant, for its error: another case, nvcc's compute_XX, sm80
 * or a bare 80 without the "sm_", a trailing blank, or sm_90 for sm_90a; NULL when none. */
const Target *target_near(const char *name);
/* "sm_80, sm_86, sm_89 or sm_90a" into buf, for messages; returns buf. */
const char *target_names(char *buf, size_t n);
/* The most shared memory a block may use on any target (a launch on a device
 * of unknown kind is checked against it; the device itself refuses more). */
int target_max_smem_dynamic(void);

#endif

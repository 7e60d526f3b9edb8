/* tile.h - the public C API of tile: compile .tile kernels to PTX and cubin,
 * cache the results, load and launch them, run the shipped GEMM.
 *
 * C17, no CUDA headers needed.  Every function returns a status; the
 * library never exits or aborts on user input.  A call that answers through
 * pointers clears them first (NULL, 0, "", a zeroed struct), before checking
 * even its handle, so a failed call leaves no earlier value; the calls sized
 * by an argument (_get_properties, _get_stats) write nothing when they
 * refuse (docs/runtime.md, "Answers of a failed call").  Two halves:
 *   - compiling: tile_compile_file/source (no device needed) and the
 *     cached variants tile_cache_compile_file/source;
 *   - running: a tile_context on a device ("cuda", "cuda:N", "emu", "emu:sm_90a"), its
 *     memory, modules, kernels, launches, and tile_gemm.
 * See docs/runtime.md.
 *
 * Thread safety, by group:
 *   - compiling (tile_compile_*, tile_compiled_free), the compile cache
 *     (tile_cache_*), tuning (tile_tune_*, tile_kernel_id_file) and
 *     tile_aot_export: any thread, concurrently; they share no state but
 *     the cache folder, which is written by rename (other processes too).
 *   - tile_status_string, tile_target_*, tile_version, tile_dtype_*,
 *     tile_gemm_source_path: any thread; they return constant strings.
 *   - a context: every call on one context (memory, copies, modules,
 *     kernels, launches, streams, events, tile_gemm*, tile_attention_*,
 *     tile_moe_*, their _prepare calls, stats) may come from any thread
 *     concurrently, except tile_context_destroy, which no other call on
 *     that context (or its handles) may overlap or follow.  Work submitted
 *     to one stream from two threads is ordered as the calls happened to be.
 *   - tile_last_error(ctx): the calling thread's own last failure on ctx;
 *     another thread's failures never change it.
 *   - tile_module_unload, tile_stream_destroy, tile_event_destroy: any
 *     thread, but not while another thread is still using that handle. */
#ifndef TILE_TILE_H
#define TILE_TILE_H

/* The library's version; tile_version() gives the same as a string, and
 * CMake's project(VERSION) must agree (tests/test_runtime.c checks).  ABI
 * rules (docs/runtime.md, "ABI and versions"): public structs only grow at
 * their end and zero is the default of every field.  Every struct a caller
 * fills and passes in begins with `size_t size`: sizeof as the caller
 * compiled it, or 0 for the layout of release 0.1 (tile_launch_options
 * requires a size); fields past a shorter size read as zero, and a size
 * under sizeof(size_t), not a multiple of 4, ending inside a field (half a pointer), or over 64 KiB is TILE_ERROR_INVALID_VALUE.  Fill these structs with designated
 * initializers ({.m = 64, ...}), never positionally. */
#define TILE_VERSION_MAJOR 0
#define TILE_VERSION_MINOR 2
#define TILE_VERSION_PATCH 0

#include <stddef.h>
#include <stdint.h>

/* Every function of the API is marked TILE_API: the shared libraries export
 * these and nothing else. */
#if defined(TILE_BUILDING_LIBRARY)
#define TILE_API __attribute__((visibility("default")))
#else
#define TILE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tile_status {
    TILE_OK = 0,
    TILE_ERROR_INVALID_VALUE = 1, /* bad argument or option */
    TILE_ERROR_COMPILE = 2,       /* the source has errors: see diagnostics */
    TILE_ERROR_IO = 3,            /* a file could not be read or written */
    TILE_ERROR_PTXAS = 4,         /* ptxas rejected the PTX or could not run */
    TILE_ERROR_INTERNAL = 5,      /* a bug in tile (the device refusing PTX tile compiled for it): please report it */
    TILE_ERROR_NO_DEVICE = 6,     /* the device does not exist or cannot be opened */
    TILE_ERROR_DEVICE = 7,        /* the device or its driver failed */
    TILE_ERROR_OUT_OF_MEMORY = 8, /* device (or host) memory exhausted */
    TILE_ERROR_NOT_FOUND = 9,     /* no such kernel, cache entry or tuning record */
    TILE_ERROR_LAUNCH = 10,       /* the launch failed (on emu: memcheck, trap, unsupported instruction) */
    TILE_ERROR_UNSUPPORTED = 11,  /* a valid request this build or device cannot do (a driver older than tile's PTX) */
} tile_status;

typedef struct tile_compile_options {
    size_t size;                     /* 0 or sizeof(tile_compile_options): see "ABI" above */
    const char *arch;                /* a target (tile_target_name); NULL or "": tile_target_default() */
    const char *kernel;              /* NULL: every kernel of the file, in one module */
    const char *const *defines;      /* NULL-terminated "NAME=VALUE": const parameters (of the kernels compiled), file-level
                                        consts, num_warps, num_stages, warp_specialize, pingpong; other NAMEs, and VALUEs that are
                                        wrong for their NAME ("BM=banana", "B=2.5" for an i32): TILE_ERROR_INVALID_VALUE with a
                                        diagnostic at "<-D NAME>" */
    const char *const *include_dirs; /* searched for imports after the importing file's folder */
    const char *const *specialize;   /* NULL-terminated "ARG=1" or "ARG=16" for run-time integer arguments, or "ARG=any":
                                        nothing assumed of ARG (a pointer not 16-byte aligned, the others still are), or
                                        "ARG=None": the pointer ARG is None in the kernel (`ARG is None` is true; Triton's
                                        None argument), stays in the signature ("*f32=None") and must be launched as 0 */
    int no_align_ptrs;               /* do not assume 16-byte-aligned pointer arguments */
    const char *dump_after;          /* pass name or "all": IR after it into result->dump */
    int time_passes;                 /* fill result->timing */
    int want_llvm_ir;                /* fill result->llvm_ir */
    int tir_only;                    /* stop after the Tile IR passes: result->tir, no LLVM, PTX or cubin */
    int want_cubin;                  /* assemble with ptxas (when present) into result->cubin */
    const char *ptxas;               /* ptxas path; NULL: /usr/local/cuda/bin/ptxas, then PATH */
    /* Since 0.2 (appended; a smaller size leaves them 0): */
    int debug;   /* 1: compile device_assert checks (0: they compile to nothing, as C's NDEBUG); loads through a
                    context also take it from TILE_DEBUG=assert */
    int num_sms; /* the value of num_sms() in kernels; 0: the context's multiprocessor count when a context
                    compiles (tile_module_load_*), else 132 */
    int no_line_info; /* 1: no .file/.loc directives in the PTX (0: each instruction names its .tile file, line and
                         column, which ptxas keeps for profilers and the emulator's reports print) */
    int no_tma;       /* 1: on sm_90a, software-pipelined tiles stay per-thread cp.async (0: where the pointers are a
                         rectangular tile of an argument, they stream through tensor maps, which the launcher builds) */
} tile_compile_options;

typedef struct tile_kernel_info {
    char *name;
    int num_warps, num_stages; /* num_warps: the warps launched (with @warp_specialize on sm_90a, the producer warpgroup's 4 too) */
    int smem_bytes;     /* shared memory the kernel needs */
    int smem_dynamic;   /* 1: over 48 KiB, so it is dynamic: launch with smem_bytes of dynamic shared memory */
    char *signature;    /* run-time parameters, e.g. "*f32:16, **f16:16, i32" (:16 divisible/aligned, =1 equal to one;
                           "**f16": a pointer to pointers) */
    int registers;      /* from ptxas -v, -1 when not assembled */
    int spill_bytes;    /* spill stores + loads bytes from ptxas -v, -1 when not assembled */
    /* Since 0.2: the tensor maps the kernel takes after its arguments (sm_90a, "" when none), built by
     * tile_launch from the arguments before each launch: "base $0, esize 2, swizzle 128, box [64, 128],
     * dims [$6, $4], strides [$7]; ..." ($N: argument N; dims innermost first, "?" unbounded; strides in
     * elements, one per dim after the first; a map a tensor reduction writes through names its element
     * type after esize: "esize 4, elem f32, ..."; the others are unsigned integers of esize bytes).
     * Launching such a kernel another way must pass them. */
    char *tensor_maps;
} tile_kernel_info;

typedef struct tile_compiled {
    char *tir;          /* Tile IR after the last pass */
    char *llvm_ir;      /* when want_llvm_ir */
    char *ptx;
    void *cubin;        /* when want_cubin and ptxas ran */
    size_t cubin_size;
    char *diagnostics;  /* rendered errors and warnings, "" when none */
    char *dump;         /* dump_after output */
    char *timing;       /* time_passes report */
    char *ptxas_log;    /* ptxas -v output */
    int ptxas_missing;  /* want_cubin was set but no ptxas was found */
    int nkernels;
    tile_kernel_info *kernels;
} tile_compiled;

/* Compile a .tile file / source text.  On TILE_ERROR_COMPILE, out->diagnostics says why.
 * Always call tile_compiled_free(out) afterwards. */
TILE_API tile_status tile_compile_file(const char *path, const tile_compile_options *opt, tile_compiled *out);
TILE_API tile_status tile_compile_source(const char *name, const char *source, const tile_compile_options *opt, tile_compiled *out);
TILE_API void tile_compiled_free(tile_compiled *c);
TILE_API const char *tile_status_string(tile_status s);
/* The targets this build compiles for, by index 0, 1, ...: "sm_80", "sm_86", ...; NULL past the last. */
TILE_API const char *tile_target_name(int index);
/* The target used when none is given ("sm_80"). */
TILE_API const char *tile_target_default(void);
/* The library's version, "MAJOR.MINOR.PATCH" as TILE_VERSION_* say (e.g. "0.2.0"); the compile cache keys on it
 * and on the library's build id (docs/runtime.md, "Compile cache"). */
TILE_API const char *tile_version(void);

/* ==== compile cache ================================================
 * Compiled PTX/cubin and kernel metadata, keyed by XXH3-128 over the
 * compiler's build id, the source and every file it imports, defines,
 * specializations, options, arch and LLVM version.  On disk under
 * cache_dir (NULL or "": TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else
 * ~/.cache/tile, else ${TMPDIR:-/tmp}/tile-cache-UID), used only when it is
 * owned by this user and writable by no one else (docs/runtime.md).
 * Requests for Tile IR only (tir_only), dumps, timing or LLVM IR bypass the cache.
 * *from_cache (may be NULL) is set to 1 on a hit. */
TILE_API tile_status tile_cache_compile_file(const char *cache_dir, const char *path, const tile_compile_options *opt,
                                    tile_compiled *out, int *from_cache);
TILE_API tile_status tile_cache_compile_source(const char *cache_dir, const char *name, const char *source,
                                      const tile_compile_options *opt, tile_compiled *out, int *from_cache);
typedef struct tile_cache_stats {
    uint64_t hits, misses;   /* recorded by every process using the folder since the last clear */
    uint64_t entries, bytes; /* compiled entries on disk and their total size */
    uint64_t tuning_records; /* records in the tuning database (its lines that are records: docs/runtime.md) */
} tile_cache_stats;
TILE_API tile_status tile_cache_get_stats(const char *cache_dir, tile_cache_stats *out);
/* Listing needs no compiler: tile_cache_list, tile_cache_list_ex, tile_cache_max_bytes, tile_cache_default_dir and
 * tile_module_load_cache_entry (below) are in libtile_rt too; compiling through the cache, its statistics (they
 * count tuning records with the tuner's parser) and clearing it are libtile's.
 * Call fn once per entry: key (32 hex digits), source name, kernels, size in bytes. */
TILE_API tile_status tile_cache_list(const char *cache_dir,
                            void (*fn)(void *user, const char *key, const char *source, const char *kernels, uint64_t bytes),
                            void *user);
/* One entry as tile_cache_list_ex reports it.  `size` comes first and is
 * sizeof the struct the library filled: fields may be added at the end in
 * later versions, so read a field only when size covers it.  The strings
 * live until the callback returns. */
typedef struct tile_cache_entry_info {
    size_t size;
    const char *key;        /* 32 hex digits */
    const char *source;     /* the source's name ("(corrupt)" for an entry that does not read) */
    const char *kernels;    /* comma-separated kernel names */
    const char *arch;       /* "sm_80" */
    const char *defines;    /* "BLOCK=256 num_warps=4", space-separated ("" when none) */
    const char *specialize; /* "n=16 sak=1", space-separated ("" when none) */
    uint64_t bytes;         /* the entry's size on disk */
    int64_t last_use;       /* seconds since the epoch: written, or last read by a cache hit */
} tile_cache_entry_info;
/* Call fn once per entry, with everything the entry records. */
TILE_API tile_status tile_cache_list_ex(const char *cache_dir, void (*fn)(void *user, const tile_cache_entry_info *entry), void *user);
/* The compile cache's cap in bytes (TILE_CACHE_MAX_BYTES, default 1 GiB; 0: none).  After
 * writing an entry past the cap, the least recently used entries are removed
 * until the total is under 90% of it. */
TILE_API uint64_t tile_cache_max_bytes(void);
/* Remove every entry (and, with tuning != 0, the tuning database). */
TILE_API tile_status tile_cache_clear(const char *cache_dir, int tuning);
/* The folder a NULL (or "") cache_dir means (malloc'd; free it). */
TILE_API char *tile_cache_default_dir(void);

/* ==== run time ===================================================== */
typedef struct tile_context tile_context;
typedef struct tile_module tile_module;
typedef struct tile_kernel tile_kernel;
typedef struct tile_stream_s *tile_stream; /* NULL: the default stream */
typedef uint64_t tile_devptr;
typedef struct tile_dim3 {
    unsigned x, y, z;
} tile_dim3;
/* Element types.  The values are part of the ABI: new ones are added at the end. */
typedef enum tile_dtype {
    TILE_F32 = 0, TILE_F16 = 1, TILE_BF16 = 2, TILE_F8E4M3 = 3, TILE_F8E5M2 = 4, TILE_I8 = 5, TILE_I32 = 6,
    TILE_I16 = 7, TILE_I64 = 8, TILE_U8 = 9, TILE_U16 = 10, TILE_U32 = 11, TILE_U64 = 12, TILE_F64 = 13,
    TILE_DTYPE_COUNT /* not a type */
} tile_dtype;
/* "f32", "bf16", "f8e4m3", ... (the names .tile sources use); NULL for a value that is no type. */
TILE_API const char *tile_dtype_name(tile_dtype t);
/* The type of a name; TILE_ERROR_NOT_FOUND when there is none, TILE_ERROR_INVALID_VALUE for a NULL name or out
 * (the reason in tile_last_error(NULL)); *out is TILE_DTYPE_COUNT (no type) after a failure. */
TILE_API tile_status tile_dtype_from_name(const char *name, tile_dtype *out);
/* Bytes of one element in memory (f8: 1); 0 for a value that is no type. */
TILE_API size_t tile_dtype_size(tile_dtype t);
/* GEMM epilogue activations: RELU max(x, 0); GELU the erf form 0.5 x (1 + erf(x / sqrt 2)); SILU x / (1 + exp(-x)). */
typedef enum tile_activation { TILE_ACT_NONE, TILE_ACT_RELU, TILE_ACT_GELU, TILE_ACT_SILU } tile_activation;

typedef struct tile_context_options {
    size_t size;                     /* 0 or sizeof(tile_context_options): see "ABI" above */
    const char *device;        /* "cuda", "cuda:N", "emu", "emu:<target>" (the emulator as that target, e.g. "emu:sm_90a":
                                  kernels compile for it; arch must then be NULL or the same); NULL: TILE_DEVICE, else cuda
                                  when present, else emu */
    const char *cache_dir;     /* NULL or "": see the compile cache above */
    int no_disk_cache;         /* keep compiled kernels in memory only */
    const char *arch;          /* a target (tile_target_name); NULL or "": on a GPU its own (by compute capability: sm_90a on 9.0,
                                  sm_89 on 8.9 and on 10.0 and later, whose drivers JIT-compile its PTX), on the emulator
                                  tile_target_default(); a named one must run on the GPU (sm_90a on 9.0 only) */
    unsigned emu_host_threads; /* emu: host threads running blocks; 0: one per core */
    int emu_racecheck;         /* emu: report shared-memory races (also: "racecheck" in the device string, "emu:sm_90a:racecheck") */
    int assume_files_unchanged; /* loading a file again answers from memory without checking that it and
                                   its imports are unchanged (saves a stat() per file; see docs/runtime.md) */
    double emu_timeout_seconds; /* emu: a launch running longer fails with TILE_ERROR_LAUNCH and a report of where its
                                   threads are; 0: TILE_EMU_TIMEOUT, else 600 s; < 0, INFINITY or >= 1e9: no limit; NaN is
                                   TILE_ERROR_INVALID_VALUE */
} tile_context_options;

TILE_API tile_status tile_context_create(const char *device, tile_context **out); /* "cuda", "cuda:N", "emu", "emu:<target>", NULL = TILE_DEVICE or auto */
/* Whether a device string is well formed ("cuda", "cuda:N", "emu" with ":"-separated targets and options
 * "sms=N", "racecheck"; NULL or "": the default, TILE_DEVICE when set), without opening anything: TILE_OK, or TILE_ERROR_INVALID_VALUE with
 * tile_last_error(NULL) saying what is wrong (since 0.2).  Whether the device exists is tile_context_create's. */
TILE_API tile_status tile_device_check(const char *device);
TILE_API tile_status tile_context_create_ex(const tile_context_options *opt, tile_context **out); /* opt NULL: every option 0 */
/* A context on a CUcontext the caller already has (an inference engine's), passed as void *: tile
 * uses it and never destroys it (tile_context_destroy synchronizes it and releases tile's own
 * modules, memory and streams only).  Every call makes it current on the calling thread and leaves
 * it current.  opt may be NULL; opt->device, when set, must name cuda (its N is ignored: the device
 * is the context's).  The emulator has no native contexts: TILE_ERROR_UNSUPPORTED; without the CUDA
 * driver: TILE_ERROR_NO_DEVICE; cu_context NULL: TILE_ERROR_INVALID_VALUE. */
TILE_API tile_status tile_context_create_from_native(void *cu_context, const tile_context_options *opt, tile_context **out);
TILE_API void tile_context_destroy(tile_context *ctx);
/* A number that is ctx's alone in the process, never reused by a later context (a new context may get a
 * destroyed one's address, never its id); 0 for a destroyed or unknown context (since 0.2).  Code that keeps
 * per-context state keyed by the pointer (tile aot's launchers) checks with it that the context is still that
 * one. */
TILE_API uint64_t tile_context_id(tile_context *ctx);
/* Stop the kernel the emulator is running on ctx, from another thread: that launch returns
 * TILE_ERROR_LAUNCH ("interrupted"), and the context stays usable.  Only a launch running at the call
 * is stopped: made while none runs (or as one ends) the request does nothing and is not kept for a
 * later launch; a caller that means a launch about to start repeats it until that launch returns.
 * TILE_ERROR_UNSUPPORTED on a GPU, where a running kernel runs to its end.  The Python package calls
 * it on Ctrl-C. */
TILE_API tile_status tile_context_interrupt(tile_context *ctx);
/* The message of the calling thread's last failure on this context ("" when none): each thread
 * has its own.  The string stays valid until this thread's next failure on ctx, ctx is destroyed
 * by this thread, or the thread exits; once ctx has been destroyed by another thread, until this
 * thread's next failure on any context (its record is reused): copy it to keep it longer.  NULL: the message of this thread's last failure that had no
 * live context to hold it ("" when none): a tile_context_create*, a call given a NULL or dead
 * handle ("tile_launch: not a live tile_kernel (its module was unloaded, ...)"), or a call that takes no
 * context refusing its arguments or its folder (tile_cache_*, tile_tune_*, tile_kernel_id_file,
 * tile_compile_* without a result to hold diagnostics). */
TILE_API const char *tile_last_error(tile_context *ctx);

typedef struct tile_device_properties {
    char name[128];     /* "emu" or "cuda:0" */
    char arch[16];      /* the target kernels are compiled for, e.g. "sm_80" */
    int is_emulator;
    int max_threads_per_block;
    int max_shared_per_block; /* bytes one block may use, static and dynamic (tile_launch opts in past 48 KiB) */
    /* Since 0.2 (the exported tile_context_get_properties, which programs built before 0.2 call, does not write it): */
    int multiprocessor_count; /* SMs: the GPU's, or the emulator's ("emu:sms=N", default 132); num_sms() in kernels */
} tile_device_properties;
/* The exported function writes the fields up to max_shared_per_block only: the struct as first published, all that a
 * program built against that tile.h has room for.  Source built against this header calls the macro below instead. */
TILE_API tile_status tile_context_get_properties(tile_context *ctx, tile_device_properties *out);
/* The first size bytes of the properties (size = sizeof the caller's tile_device_properties, any
 * release; fields this library lacks are zeroed).  A size that ends inside a field is TILE_ERROR_INVALID_VALUE. */
TILE_API tile_status tile_context_get_properties_ex(tile_context *ctx, tile_device_properties *out, size_t size);
/* Every field this header declares: tile_context_get_properties_ex with this header's sizeof (its messages name
 * tile_context_get_properties_ex).  (tile_context_get_properties)(ctx, out), or the function's address, is the
 * exported function above. */
#define tile_context_get_properties(ctx, out) tile_context_get_properties_ex((ctx), (out), sizeof(tile_device_properties))
/* ==== tensor maps (TMA) =============================================
 * A tiled tensor map for cp.async.bulk.tensor, passed to a kernel as a `.param .align 64 .b8 tmap[128]`
 * argument (or copied to global memory).  dims: elements per dimension, innermost first; strides: bytes
 * between consecutive indices of dimensions 1..rank-1 (multiples of 16 below 2^40, in any order: a permuted view,
 * such as a [S, H, D] tensor mapped as (D, S, H), is a valid map); box: the elements one copy moves
 * per dimension (1..256; box[0] * element size a multiple of 16 bytes, and at most the swizzle's width);
 * elem_strides: NULL for all 1 (1..8); out: 128 bytes, 64-byte aligned.  The whole tensor lies in memory of
 * ctx (as for every call that takes a device pointer).  Out-of-bounds elements read as
 * zero.  cuda: cuTensorMapEncodeTiled (CUDA 12 drivers; else TILE_ERROR_UNSUPPORTED); emu: the emulator's
 * own encoding, which only the emulator reads.  A map is for kernels launched on ctx: its bytes hold ctx's
 * address, which the launch cannot check (on another emulator context the copy fails the launch with
 * TILE_ERROR_LAUNCH, a memcheck report naming the address; on a GPU it is an illegal-address fault). */
typedef enum tile_tensor_swizzle {
    TILE_SWIZZLE_NONE = 0, TILE_SWIZZLE_32B = 1, TILE_SWIZZLE_64B = 2, TILE_SWIZZLE_128B = 3
} tile_tensor_swizzle;
TILE_API tile_status tile_tensor_map_encode(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global,
                                            const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                            const uint32_t *elem_strides, tile_tensor_swizzle swizzle);
/* An im2col tensor map (cuTensorMapEncodeIm2col) for cp.async.bulk.tensor's .im2col loads (and .im2col_no_offs
 * stores and reductions): the activations of a convolution, rank 3, 4 or 5 for NWC, NHWC, NDHWC (dims C, W[, H[, D]],
 * N, innermost first).  dims, strides, elem_strides, swizzle, out: as tile_tensor_map_encode's; elem_strides[1..]
 * are the traversal strides of W, H, D and N (a convolution's stride), [0] is ignored.  lower, upper: rank - 2
 * corners of the bounding box, W first (rank 3: -32768..32767, 4: -128..127, 5: -16..15): the traversal along
 * spatial dimension k runs from lower[k] to dims[k + 1] - 1 + upper[k] (at least one pixel); a convolution with
 * padding p and filter extent (r - 1) * dilation + 1 takes lower -p, upper p - (r - 1) * dilation.
 * channels_per_pixel: 1..256 elements, a multiple of 16 bytes and at most the swizzle's width; pixels_per_column:
 * 1..1024.  One copy moves pixels_per_column rows of channels_per_pixel elements (docs/emulator.md).  nan_fill: 0
 * out-of-bounds elements read as zero, 1 as NaN (f16, bf16, f32, f64 only).  Since 0.2. */
TILE_API tile_status tile_tensor_map_encode_im2col(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global,
                                                   const uint64_t *dims, const uint64_t *strides, const int32_t *lower,
                                                   const int32_t *upper, uint32_t channels_per_pixel, uint32_t pixels_per_column,
                                                   const uint32_t *elem_strides, tile_tensor_swizzle swizzle, int nan_fill);

/* The device as the tuning database keys it, into out[size]: "emu/sm_80" on the
 * emulator, "cuda/MODEL/driver VERSION/ARCH" on a GPU (model and driver
 * version, not the device number).  TILE_ERROR_INVALID_VALUE when it does not fit. */
TILE_API tile_status tile_context_device_key(tile_context *ctx, char *out, size_t size);

typedef struct tile_context_stats {
    uint64_t memory_hits;   /* loads answered by a module already loaded in this context */
    uint64_t disk_hits;     /* compiled entries read from the disk cache */
    uint64_t compiles;      /* kernels compiled from source */
    uint64_t launches;
    double compile_seconds; /* spent compiling (misses) */
    double load_seconds;    /* spent loading PTX into the device */
    /* Since 0.1.0 (the exported tile_context_get_stats, which programs built before then call, does not write these): */
    uint64_t allocations;      /* tile_malloc calls that allocated (the shipped calls' own workspaces included) */
    uint64_t frees;            /* tile_free calls that freed */
    uint64_t synchronizations; /* calls that made the host wait for the device: tile_synchronize, tile_stream_synchronize,
                                  tile_event_synchronize, tile_event_elapsed_ms and the synchronous tile_memcpy_htod,
                                  tile_memcpy_dtoh and tile_memset */
} tile_context_stats;
/* The exported function writes the fields up to load_seconds only (the struct as first published: a program built
 * then keeps working).  Source built against this header calls the macro below instead. */
TILE_API tile_status tile_context_get_stats(tile_context *ctx, tile_context_stats *out);
/* The first size bytes of the statistics (size = sizeof the caller's tile_context_stats, any
 * version's); past what this library knows, zero.  A size that ends inside a field (12: half of disk_hits)
 * is TILE_ERROR_INVALID_VALUE naming the field, as is one under 8 or over 64 KiB; nothing is written then. */
TILE_API tile_status tile_context_get_stats_ex(tile_context *ctx, tile_context_stats *out, size_t size);
/* Every field this header declares: tile_context_get_stats_ex with this header's sizeof (its messages name
 * tile_context_get_stats_ex).  (tile_context_get_stats)(ctx, out), or the function's address, is the exported
 * function above. */
#define tile_context_get_stats(ctx, out) tile_context_get_stats_ex((ctx), (out), sizeof(tile_context_stats))

/* Memory.  Every call that takes a device pointer (copies, fills, launches' pointer arguments, the
 * shipped kernels) checks that [p, p + bytes) lies in one of:
 *   - an allocation tile_malloc made on this context;
 *   - a host range registered with tile_register_memory on this context;
 *   - on cuda, memory of the context's CUDA context that the caller allocated (cuMemAlloc,
 *     cudaMalloc, PyTorch: the default context is the device's primary context, the one the
 *     CUDA runtime uses), checked against the end of its allocation as the driver reports it.
 * Anything else is TILE_ERROR_INVALID_VALUE with a message, before the device sees it. */
/* tile_malloc: 256-byte aligned.  bytes = 0, or more than 2^46 (more than any device has), is
 * TILE_ERROR_INVALID_VALUE; a size the device cannot hold now is TILE_ERROR_OUT_OF_MEMORY (on emu:
 * beyond the host's memory or the emulator's 4 TiB range).  tile_free(ctx, 0) does nothing. */
TILE_API tile_status tile_malloc(tile_context *ctx, size_t bytes, tile_devptr *out);
TILE_API tile_status tile_free(tile_context *ctx, tile_devptr p);
/* Make the caller's host memory [host_ptr, host_ptr + bytes) device memory of ctx without copying;
 * *devptr is its device address (kernels and copies read and write host_ptr's bytes in place).
 * emu: mapped into the emulator's address space (the address keeps host_ptr's offset modulo 256);
 * cuda: cuMemHostRegister(DEVICEMAP) and cuMemHostGetDevicePointer (pinned, mapped host memory:
 * kernels reach it over the bus).  The memory stays the caller's: it must outlive the registration
 * and is never freed by tile.  A range overlapping one already registered on ctx is
 * TILE_ERROR_INVALID_VALUE.  tile_free refuses it; tile_context_destroy unregisters what is left. */
TILE_API tile_status tile_register_memory(tile_context *ctx, void *host_ptr, size_t bytes, tile_devptr *devptr);
/* Undo tile_register_memory (devptr as it returned it); later use of devptr is an error.  Work that
 * uses it must have completed (synchronize first). */
TILE_API tile_status tile_unregister_memory(tile_context *ctx, tile_devptr devptr);
TILE_API tile_status tile_memcpy_htod(tile_context *ctx, tile_devptr dst, const void *src, size_t bytes);
TILE_API tile_status tile_memcpy_dtoh(tile_context *ctx, void *dst, tile_devptr src, size_t bytes);
TILE_API tile_status tile_memset(tile_context *ctx, tile_devptr dst, unsigned char value, size_t bytes);
TILE_API tile_status tile_synchronize(tile_context *ctx);

/* Modules.  load_file/load_source compile through the cache (memory, then
 * disk) for the context's arch; loading the same thing twice returns the
 * loaded module again (each load needs one unload). */
/* tile_module_load_ptx: PTX text (another compiler's, or tile's own).  PTX the device cannot load (a syntax error,
 * an instruction or form it does not know, a .target newer than the device) is TILE_ERROR_COMPILE, as a .tile
 * source's errors are, with the device's reason in tile_last_error: the emulator's names the PTX line ("ptx:3:
 * ..."), a GPU's carries the driver's JIT log. */
TILE_API tile_status tile_module_load_ptx(tile_context *ctx, const char *ptx, tile_module **out);
/* tile_module_load_cubin: a cubin (an ELF file: ptxas, nvcc -cubin) or a fatbin (nvcc -fatbin), size bytes.
 * Every offset its headers hold is checked against size first (the driver reads an image without its size):
 * what is truncated, damaged or no image is TILE_ERROR_INVALID_VALUE with the reason.  On a GPU the driver
 * loads it (machine code for another GPU, with no PTX to compile instead, is TILE_ERROR_UNSUPPORTED); its
 * kernels' parameter sizes come from the driver (cuFuncGetParamInfo, CUDA 12.4; older drivers: unknown, and
 * num_params is -1), their block from nothing: launch with tile_launch_raw, or tile_launch_ex with a block.
 * The emulator runs PTX only: a cubin is TILE_ERROR_UNSUPPORTED, and a fatbin runs from its uncompressed PTX
 * (nvcc -fatbin --no-compress) for the context's target or older, whose .entry headers then give the
 * kernels' parameters and blocks as tile_module_load_ptx's do (on a GPU too).  docs/runtime.md. */
TILE_API tile_status tile_module_load_cubin(tile_context *ctx, const void *image, size_t size, tile_module **out);
/* tile_module_load_cache_entry: the compile cache entry `key` (32 hex digits, as tile_cache_list and
 * `tile cache list` give it) of cache_dir (NULL or "": the default folder), without compiling: libtile_rt
 * has it.  The entry is checked whole before it is used (magic, format, size, checksum, and that its header
 * is that key's): a damaged or foreign entry is TILE_ERROR_IO with the reason, and stays (the compiler removes
 * it at its next lookup); no entry is TILE_ERROR_NOT_FOUND; an entry for a target the device cannot run is
 * TILE_ERROR_UNSUPPORTED.  Its kernels carry the metadata a compile gives (tile_module_get_kernel,
 * tile_launch); on a GPU its cubin is loaded when it was made for exactly that GPU (its PTX when the driver
 * refuses that cubin), else its PTX.  Loading a key again from the same cache_dir while the context holds its
 * module returns that module (no disk read; a memory hit): each load needs one unload, as load_file's. */
TILE_API tile_status tile_module_load_cache_entry(tile_context *ctx, const char *cache_dir, const char *key, tile_module **out);
TILE_API tile_status tile_module_load_file(tile_context *ctx, const char *path, const char *const *defines, tile_module **out); /* .tile; defines: NULL-terminated "NAME=VALUE" */
TILE_API tile_status tile_module_load_source(tile_context *ctx, const char *source, const char *const *defines, tile_module **out);
/* With full compile options (kernel, specialize, include_dirs; arch NULL: the context's). */
TILE_API tile_status tile_module_load_file_ex(tile_context *ctx, const char *path, const tile_compile_options *opt, tile_module **out);
TILE_API tile_status tile_module_load_source_ex(tile_context *ctx, const char *name, const char *source, const tile_compile_options *opt,
                                       tile_module **out);
TILE_API void tile_module_unload(tile_module *m);
TILE_API tile_status tile_module_get_kernel(tile_module *m, const char *name, tile_kernel **out);
/* Since 0.2: the names of the module's kernels, in order, into *names (NULL-terminated, *count of them; owned by
 * the module, valid until it is unloaded): a compiled module's kernels, or raw PTX's entries (the names after
 * ".entry" outside comments, as the device reads them; a fatbin's from its PTX).  A cubin, whose names only the
 * driver reads, is TILE_ERROR_UNSUPPORTED: ask tile_module_get_kernel by name. */
TILE_API tile_status tile_module_get_kernel_names(tile_module *m, const char *const **names, int *count);

typedef struct tile_kernel_attributes {
    const char *name;
    int num_params;
    int num_warps, num_stages;
    unsigned block_threads;  /* 32 * num_warps */
    unsigned shared_bytes;   /* shared memory (beyond 48 KiB dynamic: tile_launch passes it) */
    const char *signature;   /* "*f16:16, i32"; for raw PTX its parameters' PTX types: "ptr, u32, f32, b8[24]"
                                ("ptr": a .ptr-qualified .u64; "b8[24]": an array, a struct passed by value) */
    int registers;           /* -1: unknown */
} tile_kernel_attributes;
TILE_API tile_status tile_kernel_get_attributes(tile_kernel *k, tile_kernel_attributes *out);

/* args[i] points at the value of parameter i, as in cuLaunchKernel: exactly num_params of them
 * (tile_kernel_attributes).  A C array carries no length, so a shorter one cannot be detected (the launch
 * reads past it); a NULL args[i] is refused, and so is a pointer parameter's value (a compiled kernel's, raw
 * PTX's .ptr ones) that is neither 0 nor memory of the kernel's context. */
TILE_API tile_status tile_launch(tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream); /* block and shared memory from the kernel */
/* Launch options.  `size` is sizeof(tile_launch_options) as the caller compiled it: fields are only
 * ever appended, and those past the caller's size count as zero (the default). */
typedef struct tile_launch_options {
    size_t size;
    tile_dim3 block;        /* zero: the kernel's own block and dynamic shared memory */
    unsigned shared_bytes;  /* with a block given, or for raw PTX with .maxntid / .reqntid (launched with that
                               block): dynamic shared memory, as in cuLaunchKernel */
    int programmatic_dependent_launch; /* 1: the kernel may begin before the previous kernel on its stream has
                                          finished (cuLaunchKernelEx with programmatic stream serialization, sm_90
                                          GPUs and CUDA 12 drivers; elsewhere an error from the driver).  The kernel
                                          must call gdc_wait() before it reads what the previous one wrote; the
                                          previous one's gdc_launch_dependents() lets it begin early (both are
                                          griddepcontrol on sm_90a, nothing on older targets).  The emulator runs
                                          launches in order: accepted. */
    tile_dim3 cluster;      /* CTAs per thread-block cluster (cuLaunchKernelEx's cluster dimension; sm_90, the grid a
                               whole number of clusters; the emulator runs them, distributed shared memory and all).
                               Zero: the kernel's own .reqnctapercluster, else no clusters. */
    int cooperative;        /* 1: a cooperative launch (cuLaunchKernelEx's cooperative attribute): every block is
                               resident at once, so cooperative groups' grid.sync() works.  The emulator runs the
                               whole grid together (at most 2^18 threads; with `cluster`, every cluster at once, each
                               keeping its own barriers and distributed shared memory: docs/emulator.md). */
} tile_launch_options;
/* tile_launch with options (opt may be NULL). */
TILE_API tile_status tile_launch_ex(tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream, const tile_launch_options *opt);
/* shared_bytes: dynamic shared memory, as in cuLaunchKernel (the kernel's static shared memory is in its PTX). */
TILE_API tile_status tile_launch_raw(tile_kernel *k, tile_dim3 grid, tile_dim3 block, unsigned shared_bytes, void **args, tile_stream stream);

/* ==== streams and events ============================================
 * Work on one stream runs in order; work on different streams may overlap.
 * NULL is the default stream: it orders with every stream of the context
 * (CUDA's legacy default stream), and the calls without a stream argument
 * (tile_memcpy_htod, tile_memset, ...) use it.  On emu every piece of work
 * runs to completion when it is submitted, so streams are trivially in
 * order and events record the host clock.  A stream or event belongs to the
 * context that created it; using it on another context, or after destroying
 * it, is an error with a message. */
typedef struct tile_event_s *tile_event;
TILE_API tile_status tile_stream_create(tile_context *ctx, tile_stream *out);
/* A tile_stream for a CUstream the caller made (void *), without owning it: tile_stream_destroy and
 * tile_context_destroy release the wrapper only.  cuda: the stream must belong to the context's
 * CUDA context (cuStreamGetCtx), else TILE_ERROR_INVALID_VALUE.  NULL wraps the default stream,
 * on every device; the emulator has no other native streams (TILE_ERROR_UNSUPPORTED). */
TILE_API tile_status tile_stream_from_native(tile_context *ctx, void *cu_stream, tile_stream *out);
TILE_API tile_status tile_stream_destroy(tile_context *ctx, tile_stream stream); /* pending work still completes */
TILE_API tile_status tile_stream_synchronize(tile_context *ctx, tile_stream stream); /* wait for everything submitted to it */
/* Work submitted to stream after this call waits until event has completed (no-op when it was never recorded). */
TILE_API tile_status tile_stream_wait_event(tile_context *ctx, tile_stream stream, tile_event event);
TILE_API tile_status tile_event_create(tile_context *ctx, tile_event *out);
TILE_API tile_status tile_event_destroy(tile_context *ctx, tile_event event);
/* The event completes when everything submitted to stream before it has. */
TILE_API tile_status tile_event_record(tile_context *ctx, tile_event event, tile_stream stream);
TILE_API tile_status tile_event_synchronize(tile_context *ctx, tile_event event);
/* Milliseconds from start to end (both recorded; waits for them to complete). */
TILE_API tile_status tile_event_elapsed_ms(tile_context *ctx, tile_event start, tile_event end, float *ms);
/* Copies and fills ordered on stream.  The host buffer must stay valid and
 * unchanged (htod) or unread (dtoh) until the stream is synchronized. */
TILE_API tile_status tile_memcpy_htod_async(tile_context *ctx, tile_devptr dst, const void *src, size_t bytes, tile_stream stream);
TILE_API tile_status tile_memcpy_dtoh_async(tile_context *ctx, void *dst, tile_devptr src, size_t bytes, tile_stream stream);
TILE_API tile_status tile_memset_async(tile_context *ctx, tile_devptr dst, unsigned char value, size_t bytes, tile_stream stream);

/* ==== GEMM ========================================================== */
typedef struct tile_gemm_args {
    size_t size;                     /* 0 or sizeof(tile_gemm_args): see "ABI" above */
    int64_t m, n, k;
    tile_devptr a; int64_t lda; int trans_a; /* A is m x k row-major (k x m when trans_a) */
    tile_devptr b; int64_t ldb; int trans_b; /* B is k x n row-major (n x k when trans_b) */
    /* lda, ldb, ldc: BLAS leading dimensions, as cuBLAS takes them: each at least max(1, its operand's columns as
     * stored); 0 is TILE_ERROR_INVALID_VALUE (not "contiguous", unlike the row strides of the calls below) */
    tile_devptr c; int64_t ldc;              /* C is m x n row-major; D = alpha*A*B + beta*C written to c.  C sharing
                                                an element with A, B, bias or the scales: TILE_ERROR_INVALID_VALUE
                                                (checked per element: interleaved columns of one buffer are fine) */
    tile_dtype in_dtype, out_dtype;          /* accumulation in f32 (s32 for i8) */
    float alpha, beta;
    tile_devptr bias;                        /* 0 = none; n elements of out_dtype */
    tile_activation activation;
    tile_stream stream;
    /* appended in 0.2 (f8 inputs): dequantization scales, f32 device pointers, D =
     * alpha * (a_scale x b_scale) . (A x B) + beta*C (+ bias).  scale_mode TILE_SCALE_NONE
     * ignores them; TILE_SCALE_TENSOR reads one value from each; TILE_SCALE_CHANNEL reads m
     * values from a_scale (one per row of A) and n from b_scale (one per column of B). */
    tile_devptr a_scale, b_scale;
    int scale_mode;
} tile_gemm_args;
enum { TILE_SCALE_NONE = 0, TILE_SCALE_TENSOR = 1, TILE_SCALE_CHANNEL = 2,
       /* 128 x 128 block scales (DeepSeek-V3), applied per 128-wide K block inside the K loop:
        * D = alpha * sum over K blocks kb of (A_kb x B_kb) . a_scale[:, kb] . b_scale[kb, n / 128]
        * (+ beta*C + bias).  a_scale: f32 [m][cdiv(k, 128)] row-major, one per row of A and K block;
        * b_scale: one f32 per 128 x 128 block of B as it is stored, row-major:
        * [cdiv(k, 128)][cdiv(n, 128)] for a k x n B, [cdiv(n, 128)][cdiv(k, 128)] with trans_b
        * (a weight W[n][k] and its scales). */
       TILE_SCALE_BLOCK = 3 };
/* Type pairs: f16->f32, f16->f16, bf16->f32, bf16->bf16, f32->f32 (tf32 tensor cores), i8->i32,
 * f8e4m3->f32 and f8e5m2->f32 (native f8 wgmma on sm_90a, exact widening to f16 elsewhere).
 * Compiles on first use, caches, and launches the tuned configuration for
 * the shape (the kernel's defaults when none is tuned).  m or n 0: nothing to compute (TILE_OK, nothing
 * launched or written; A, or B, may then be 0); k 0: D = act(beta*C + bias), A and B not read. */
TILE_API tile_status tile_gemm(tile_context *ctx, const tile_gemm_args *args);
/* The same with an explicit configuration: NULL-terminated "NAME=VALUE"
 * (BM, BN, BK, GROUP_M, SPLIT_K (1..64; run as 1 where split-K is not exact, docs/runtime.md), PERSISTENT,
 * num_warps, num_stages, warp_specialize, and for f8 inputs
 * FAST_ACCUM: 1 accumulates in the tensor cores, 0 adds each K step's product in f32, sm_90a's default; any other name, the
 * epilogue's ACT/HAS_BETA/HAS_BIAS included, is TILE_ERROR_INVALID_VALUE, and so is a name given twice); the tuner uses it.
 * The configuration is checked whatever the sizes: with m or n 0 (nothing launched) a value the kernel refuses
 * (BM=96: TILE_ERROR_COMPILE; num_warps=3: TILE_ERROR_INVALID_VALUE, a define wrong for its name) is the error a call
 * with work gets. */
TILE_API tile_status tile_gemm_with_config(tile_context *ctx, const tile_gemm_args *args, const char *const *config);

/* ==== preparing calls (CUDA graph capture; docs/runtime.md) ===========
 * tile_X_prepare(ctx, args) compiles (or finds in the caches) and loads
 * every kernel variant that tile_X(ctx, args) will launch, and reads the
 * tuning database for it, without launching anything.  Pass the args of the
 * call: sizes, strides, dtypes and options pick the variants, and so do
 * which pointers are zero (optional inputs such as lse, cu_seqlens,
 * score_bias, router_logits) and whether each is 16-byte aligned (a zero
 * pointer counts as aligned); for tile_gemm the epilogue too (beta zero or
 * not, the activation, the scale mode), but not the values of alpha and a
 * non-zero beta; pointers are never dereferenced nor checked
 * against the context's allocations.  After it, the call with the same
 * args and a caller-provided workspace (where the call takes one) does no
 * device allocation, free, synchronization, compilation or module load:
 * only checks and asynchronous work on args->stream (launches, and the
 * memsets the call documents), so it can be captured in a CUDA graph.
 * Not graph-safe however prepared: tile_attention_decode_paged with
 * check_tables = 1 (synchronizes and copies to the host), and any call
 * with workspace 0 that needs one (allocates and frees).
 * tile_attention_fwd needs no workspace. */
TILE_API tile_status tile_gemm_prepare(tile_context *ctx, const tile_gemm_args *args);
/* What the last tile_gemm on this context did (for tools): the kernel, its
 * configuration and specializations, and whether it had to compile. */
typedef struct tile_gemm_info {
    char kernel[64];
    char config[256];      /* "BM=128 BN=128 BK=32 num_warps=4 num_stages=3 SPLIT_K=1": the configuration alone, which
                              tile_gemm_with_config takes back for the same launch (the epilogue's defines, which follow
                              from the arguments, are not listed) */
    char specialize[256];  /* "sak=1 sbn=1 m=16" */
    int tuned;             /* the configuration came from the tuning database */
    int source;            /* 0 loaded in this context, 1 disk cache, 2 compiled */
    tile_dim3 grid, block;
} tile_gemm_info;
TILE_API tile_status tile_gemm_last_info(tile_context *ctx, tile_gemm_info *out);
/* The .tile file tile_gemm compiles: kernels/gemm/gemm.tile in the first data
 * folder that has it (TILE_DATA_DIR, then the installed share/tile next to the
 * library, or the source tree for a library in its build tree; docs/runtime.md). */
TILE_API const char *tile_gemm_source_path(void);
/* Since 0.2: the kernel of that file tile_gemm runs for an input/output type pair ("gemm_f16_f32";
 * "gemm_tf32_f32" for f32 inputs), NULL for a pair it has none for: the name tile_tune_space_file
 * and the tuning database (tile_kernel_id_file) take. */
TILE_API const char *tile_gemm_kernel_name(tile_dtype in_dtype, tile_dtype out_dtype);

/* ==== tuning ========================================================= */
/* A kernel's tuning space from its @config / @tune_key attributes.
 * configs[i] is a NULL-terminated list of "NAME=VALUE" (usable as defines). */
typedef struct tile_tune_space {
    int nconfigs;
    char ***configs;
    int nkeys;
    char **keys; /* run-time argument names */
} tile_tune_space;
/* path: a regular file of at most 16 MiB, as sources are (a FIFO or a device: TILE_ERROR_IO at once). */
TILE_API tile_status tile_tune_space_file(const char *path, const char *kernel, tile_tune_space *out, char **errmsg);
/* Since 0.2: the same from source text (name: for messages, NULL "<source>"); TILE_ERROR_COMPILE with the
 * located message in *errmsg (malloc'd) when the text does not parse or declares no such kernel. */
TILE_API tile_status tile_tune_space_source(const char *name, const char *source, const char *kernel, tile_tune_space *out,
                                            char **errmsg);
TILE_API void tile_tune_space_free(tile_tune_space *s);
/* The tuning database (cache_dir/tune.db): record and look up the best
 * configuration ("BM=64 BN=128 ...") for (kernel source hash, device, key).
 * The file keeps up to four records per (kernel, device, key), its four
 * fastest configurations, the fastest last: a lookup answers the fastest that
 * passes its checks (the file is rewritten in place by rename; a new key is
 * appended).
 * A lookup ignores, with a warning naming tune.db's line, records not of the form NAME=VALUE ...
 * and, for the shipped kernels, records outside the kernel's @config space (a recording keeps
 * the lines it cannot read as they are: the file may be edited by hand, docs/runtime.md);
 * recording a configuration not of that form is TILE_ERROR_INVALID_VALUE. */
TILE_API tile_status tile_tune_record(const char *cache_dir, const char *kernel_id, const char *device, const char *key_bucket,
                             const char *config, double seconds);
/* By source and kernel: the record must also lie in the kernel's @config space (a knob it declares, a value
 * some @config gives it); anything else is ignored with a warning.  tile_gemm looks up this way. */
TILE_API tile_status tile_tune_lookup_file(const char *cache_dir, const char *path, const char *kernel, const char *device,
                                           const char *key_bucket, char *config, size_t config_size);
/* By kernel id alone: records are checked for their form (NAME=VALUE words) only.  Both lookups: TILE_OK with
 * the configuration in config, TILE_ERROR_NOT_FOUND without a usable record, TILE_ERROR_INVALID_VALUE (config
 * "") when the record found does not fit in config_size bytes (tile_last_error(NULL) says how many it needs). */
TILE_API tile_status tile_tune_lookup(const char *cache_dir, const char *kernel_id, const char *device, const char *key_bucket,
                             char *config, size_t config_size);
/* Identity of a kernel for the tuning database: XXH3-128 hex of its file
 * (and imports) and name, written into id[33]; TILE_ERROR_NOT_FOUND (id "")
 * when the file declares no kernel of that name. */
TILE_API tile_status tile_kernel_id_file(const char *path, const char *kernel, char id[33]);
/* The power-of-two bucket of a key value (1, 2, 4, ...; values <= 1 give 1). */
TILE_API int64_t tile_tune_bucket(int64_t v);

/* ==== ahead-of-time export ========================================== */
/* Write OUT.h and OUT.c for kernels (NULL-terminated names) of the .tile file:
 * PTX (and cubin with ptxas) embedded, a typed launch function per kernel
 * taking a tile_context, and a dispatcher over variants (NULL-terminated
 * "ARG=1 ARG=16" specialization lists; the generic build is the fallback).
 * A kernel given as "NAME=CNAME" is exported under the C name CNAME (its
 * functions CNAME and CNAME_aot_unload), a plain "NAME" under its own name;
 * a C name the C library or the headers a program includes use ("free",
 * "clock", "errno") is refused, with the reason in *msg (docs/runtime.md).
 * *msg (malloc'd, may be NULL) holds diagnostics. */
TILE_API tile_status tile_aot_export(const char *path, const tile_compile_options *opt, const char *const *kernels,
                            const char *const *variants, const char *out, char **msg);
/* Since 0.2, in libtile_rt: what the C that tile_aot_export writes calls, so that it includes no header
 * but this one.  A table (static storage, zero-initialized) holds one kernel variant's modules, one per
 * context it ran in.  tile_aot_table_kernel gives the kernel `name` of ptx loaded into ctx, loading it on
 * first use (any thread; an entry of a context destroyed without a release is taken for dead by its
 * tile_context_id); a ctx that is not live is TILE_ERROR_INVALID_VALUE with tile_last_error(NULL) naming
 * `name` ("add: the tile_context is NULL": the generated launcher passes its C name there when it differs from
 * the kernel's); tile_aot_table_release unloads what the table loaded into ctx. */
typedef struct tile_aot_table {
    void *impl; /* made on first use; never freed (the table lives as long as the program) */
} tile_aot_table;
TILE_API tile_status tile_aot_table_kernel(tile_aot_table *table, const char *ptx, const char *name, tile_context *ctx,
                                           tile_kernel **out);
TILE_API void tile_aot_table_release(tile_aot_table *table, tile_context *ctx);

/* ==== mixture of experts (kernels/moe/moe.c; kernels/moe/; docs/moe.md) ======
 * One MoE layer: route (or take precomputed top-k ids and weights), group
 * the token slots by expert on the device, then per expert
 *   out[t] += sum_j w[t,j] * W2[e_j] (silu(W1g[e_j] x[t]) * W1u[e_j] x[t]).
 * Everything is launched on `stream`; nothing is copied back to the host. */
typedef enum tile_moe_scoring { TILE_MOE_SOFTMAX = 0, TILE_MOE_SIGMOID = 1 } tile_moe_scoring;
/* Scales of f8 weights, f32: w = f8 value * scale.
 *   CHANNEL:  one per output row: w1_scale [experts, 2 * inter], w2_scale [experts, hidden].
 *   BLOCK128: one per 128 x 128 block (rows x K), the gate's row blocks then the up's:
 *             w1_scale [experts, 2 * cdiv(inter, 128), cdiv(hidden, 128)],
 *             w2_scale [experts, cdiv(hidden, 128), cdiv(inter, 128)]. */
typedef enum tile_moe_scales { TILE_MOE_SCALES_NONE = 0, TILE_MOE_SCALES_CHANNEL = 1, TILE_MOE_SCALES_BLOCK128 = 2 } tile_moe_scales;
typedef struct tile_moe_args {
    size_t size;                     /* 0 or sizeof(tile_moe_args): see "ABI" above */
    int64_t tokens, hidden, inter, experts, topk; /* topk 1..8, experts 1..1024 */
    tile_dtype dtype;                  /* TILE_F16 or TILE_BF16: x (and w1, w2 unless weight_dtype says otherwise) */
    tile_devptr x; int64_t ldx;        /* [tokens, hidden], row stride ldx (0: hidden) */
    tile_devptr w1;                    /* [experts, 2 * inter, hidden]: gate rows, then up rows */
    tile_devptr w2;                    /* [experts, hidden, inter] */
    tile_devptr out; int64_t ldo;      /* f32 [tokens, hidden], row stride ldo (0: hidden); overlapping no other
                                          tensor of the call (TILE_ERROR_INVALID_VALUE) */
    int accumulate;                    /* 1: out += the layer; 0: out is zeroed first */
    /* routing: router_logits != 0 runs the router, else topk_ids/topk_weights are inputs */
    tile_devptr router_logits; int64_t ldl; /* [tokens, experts], row stride ldl (0: experts) */
    tile_dtype logits_dtype;           /* TILE_F32, TILE_BF16 or TILE_F16 */
    tile_devptr topk_ids;              /* i32 [tokens, topk]; with a router: written when non-zero */
    tile_devptr topk_weights;          /* f32 [tokens, topk]; likewise.  Ids outside [0, experts) are skipped */
    tile_moe_scoring scoring;
    int renormalize;                   /* divide the selected weights by their sum */
    int n_group, topk_group;           /* grouped top-k when n_group > 1 (experts % n_group == 0) */
    int group_top2;                    /* group score: sum of its best two (1) or its best (0) */
    tile_devptr score_bias;            /* f32 [experts] added to the choice value, or 0 */
    float routed_scale;                /* weights are multiplied by it (0 means 1; finite) */
    tile_devptr workspace;             /* 0: allocated and freed inside the call; 16-byte aligned; shares no byte with another
                                          tensor of the call (nor, with a router, do topk_ids and topk_weights) */
    size_t workspace_bytes;            /* at least tile_moe_workspace_size() when workspace != 0, and inside
                                          workspace's allocation (a size past its end is refused) */
    tile_stream stream;
    /* f8 weights (zero: w1, w2 in dtype, no scales) */
    tile_dtype weight_dtype;           /* TILE_F8E4M3 with scales; 0 (TILE_F32) or dtype: w1, w2 in dtype */
    tile_moe_scales scales;            /* layout of w1_scale and w2_scale (f8 weights only) */
    tile_devptr w1_scale, w2_scale;    /* f32 */
} tile_moe_args;
/* Bytes of workspace tile_moe_forward needs for these sizes (pointers are not read). */
TILE_API tile_status tile_moe_workspace_size(const tile_moe_args *args, size_t *bytes);
TILE_API tile_status tile_moe_forward(tile_context *ctx, const tile_moe_args *args);
/* Compile and load what tile_moe_forward(ctx, args) launches (see "preparing calls" above). */
TILE_API tile_status tile_moe_prepare(tile_context *ctx, const tile_moe_args *args);

/* ==== attention (kernels/attention/attention.c; kernels/attention/attention.tile, kernels/attention/paged_attention.tile; docs/attention.md) ====
 * Sizes are int64_t and checked against what the kernels address with 32-bit
 * offsets; strides are in elements (head_dim is always contiguous).  Every
 * pointer must lie in an allocation of the context with room for what the
 * kernel touches.  Kernel variants compile on first use and stay cached in
 * the context.  Launched on `stream`; nothing is synchronized. */
typedef struct tile_attention_args {
    size_t size;                     /* 0 or sizeof(tile_attention_args): see "ABI" above */
    tile_dtype dtype;                 /* TILE_F16 or TILE_BF16: q, k, v, o */
    int64_t batch, heads_q, heads_kv; /* heads_q a multiple of heads_kv (GQA / MQA: K/V are not copied) */
    int64_t head_dim;                 /* a multiple of 16, at most 256 */
    int64_t seq_q, seq_k;             /* tokens per sequence; with cu_seqlens: the longest (the grid) */
    tile_devptr q, k, v, o;           /* [batch, seq, heads, head_dim]; o shares no byte with k or v, nor with q
                                         unless exactly in place (o = q, the same strides and element size) */
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3]; /* batch, token, head; all three 0: contiguous.
                                                                   The batch stride is unused with cu_seqlens.
                                                                   Inputs may overlap themselves (a stride 0
                                                                   broadcasts); o may not: sorted by stride, each
                                                                   of its dimensions of more than one index steps
                                                                   past the span of those inside it and head_dim */
    tile_devptr lse;                  /* 0, or f32 [batch, heads_q, seq_q] (natural log, scale included);
                                         with cu_seqlens f32 [heads_q, total_q]; shares no byte with q, k, v, o */
    tile_devptr cu_seqlens_q, cu_seqlens_k; /* both 0, or i32 [batch + 1] token offsets of packed sequences */
    int64_t total_q, total_k;         /* with cu_seqlens: cu_seqlens_q[batch] and cu_seqlens_k[batch] (for the checks) */
    float softmax_scale;              /* 0: 1 / sqrt(head_dim) */
    int causal;                       /* key j visible to query i when j <= i + seq_k - seq_q (bottom-right) */
    int64_t window_left, window_right; /* sliding window around i + seq_k - seq_q; -1 unbounded */
    tile_stream stream;
    /* appended in 0.2 (f8 inputs), read only when `size` covers them: dtype TILE_F8E4M3 requires
     * size = sizeof(tile_attention_args) (a size 0 call with it is refused rather than lose the scales) */
    float q_scale, k_scale, v_scale;  /* dtype TILE_F8E4M3: q, k, v hold e4m3 codes, real value = code * scale
                                         (per tensor); 0 means 1; 0 or 1 with f16/bf16 */
    tile_dtype o_dtype;               /* o's type: TILE_F32 (0) means dtype for f16/bf16, TILE_BF16 for
                                         f8e4m3; f8e4m3 inputs also take TILE_F16 */
} tile_attention_args;
/* O = softmax(scale Q K^T + mask) V, and the LSE of every row when lse != 0.
 * A row that sees no key gets O = 0 and LSE = -inf.  With f8e4m3 inputs (FlashAttention-3's fp8
 * forward): S = (Q_codes K_codes^T) q_scale k_scale softmax_scale, P (in [0, 1], times 256) rounded
 * to e4m3 for the second product, O = (P V_codes) v_scale / l in o_dtype; native f8 wgmma for both
 * products on sm_90a, exact widening to f16 elsewhere. */
TILE_API tile_status tile_attention_fwd(tile_context *ctx, const tile_attention_args *args);
/* Compile and load what tile_attention_fwd(ctx, args) launches (see "preparing calls" above). */
TILE_API tile_status tile_attention_fwd_prepare(tile_context *ctx, const tile_attention_args *args);

typedef struct tile_paged_attention_args {
    size_t size;                     /* 0 or sizeof(tile_paged_attention_args): see "ABI" above */
    tile_dtype dtype;                 /* TILE_F16 or TILE_BF16: q and o */
    tile_dtype kv_dtype;              /* the caches: dtype, or TILE_F8E4M3; TILE_F32 (0) means dtype */
    float k_scale, v_scale;           /* f8e4m3 caches: per-tensor scales (real value = code * scale); 0 means 1;
                                         0 or 1 with a 16-bit cache (another value is refused, not ignored) */
    int64_t num_seqs, heads_q, heads_kv, head_dim; /* head_dim a multiple of 16, at most 256 */
    int64_t num_tokens;               /* 1..8 query tokens per sequence, the newest of its context
                                         (causal among themselves); (heads_q / heads_kv) * num_tokens <= 64 */
    int64_t block_size;               /* 16, 32 or 64 */
    int64_t num_blocks;               /* blocks in each cache */
    tile_devptr q, o;                 /* [num_seqs, num_tokens, heads_q, head_dim]; o shares no byte with the caches,
                                         nor with q unless exactly in place (o = q, the same strides) */
    int64_t q_stride[3], o_stride[3]; /* sequence, token, head; all three 0: contiguous; o may not overlap itself
                                         (as tile_attention_args' o) */
    tile_devptr k_cache, v_cache;     /* [num_blocks, block_size, heads_kv, head_dim] */
    int64_t k_stride[3], v_stride[3]; /* block, slot, head; all three 0: contiguous */
    tile_devptr block_tables;         /* i32 [num_seqs, block_table_stride]: physical block of each logical block */
    int64_t block_table_stride;       /* 0: cdiv(max_context_len, block_size) */
    tile_devptr context_lens;         /* i32 [num_seqs]: num_tokens <= context_lens[s] <= max_context_len */
    int64_t max_context_len;          /* bounds the checks and picks the split count */
    int num_splits;                   /* split-KV: 0 chosen from the batch and context length, 1 none, at most 64; a
                                         count past cdiv(max_context_len, BN) (a split is whole BN-key chunks: BN 64
                                         for head_dim <= 64, 32 to 128, 16 or 32 above) is reduced to it, the count
                                         tile_paged_attention_workspace_size reports and sizes the workspace for */
    tile_devptr workspace;            /* tile_paged_attention_workspace_size bytes (none without splits), 16-byte aligned;
                                         0: allocated here (when it splits).  Shares no byte with the other tensors (nor does o
                                         with the tables).  Checked whenever it is not 0, also by a call that does not split */
    size_t workspace_bytes;           /* at least that size, and inside workspace's allocation (a size past its end is
                                         refused) */
    float softmax_scale;              /* 0: 1 / sqrt(head_dim) */
    int check_tables;                 /* 1: copy block_tables and context_lens to the host and check every entry
                                         (synchronizes; for debugging) */
    tile_stream stream;
    tile_devptr tree_mask;            /* 0: the new tokens are causal among themselves; else i32 [num_seqs, num_tokens],
                                         a token tree (speculative decoding): token t sees the context before the new
                                         tokens and new token j when bit j of entry (s, t) is set (set bit t for itself);
                                         bits num_tokens..31 name no token and are ignored.
                                         Read only when `size` covers it (size = sizeof; size 0 is the 0.1 layout) */
} tile_paged_attention_args;
/* Decode over a vLLM-style paged KV cache, split over the context and merged
 * with the log-sum-exp when that fills the device better. */
TILE_API tile_status tile_attention_decode_paged(tile_context *ctx, const tile_paged_attention_args *args);
/* Compile and load what tile_attention_decode_paged(ctx, args) launches, the merge kernel
 * included when it splits (see "preparing calls" above). */
TILE_API tile_status tile_attention_decode_paged_prepare(tile_context *ctx, const tile_paged_attention_args *args);
/* Workspace the call needs (0 without splits) and the split count it will use. */
TILE_API tile_status tile_paged_attention_workspace_size(tile_context *ctx, const tile_paged_attention_args *args, size_t *bytes,
                                                int *num_splits);

/* ==== normalization and gated activations (kernels/norm/norm.c; kernels/norm/norm.tile, kernels/norm/act.tile;
 * docs/kernels.md) ====
 * One program per token; rows are [tokens, n] with a row stride in elements (0: contiguous).  Sizes are
 * int64_t and checked against the kernels' 32-bit offsets; every pointer must lie in an allocation of the
 * context with room for what the kernel touches, aligned to its elements.  Launched on `stream`.
 * A tensor the call writes (residual, out, scales) may share no byte with another it reads or writes
 * (TILE_ERROR_INVALID_VALUE) but for itself row for row, in place: the same pointer, row stride and element
 * size (out = x, out = residual, residual = x; the gated out = x with ldo = ldx, unquantized).
 *
 * Per-token dynamic quantization (quant_dtype TILE_F8E4M3 or TILE_I8; 0 (TILE_F32) or dtype: none): the
 * row's result y (f32, before any rounding) gets scale = max(max|y| / QMAX, 1 / (QMAX * 512)), QMAX = 448
 * (f8e4m3) or 127 (i8), written to scales[token] (f32); out holds y / scale, rounded to nearest even and
 * saturated (f8e4m3) or clamped to [-127, 127] (i8), so y ~= out * scale.  Per-group quantization
 * (quant_group, DeepSeek style, what a block-scaled f8 GEMM reads): the same rule over each group of
 * quant_group consecutive columns, scales[token * lds + group] (f32, row-major).
 *
 * The argument structs begin with `size`: sizeof the struct as the caller compiled it, or 0 for the
 * first release's layout (0.1, up to `stream`).  Fields are only ever appended; those past the caller's
 * size count as zero: quant_group and lds are read only with size = sizeof (with size 0 they are
 * not read, and the scales are one per token). */
typedef struct tile_norm_args {
    size_t size;
    tile_dtype dtype;          /* TILE_F16 or TILE_BF16: x, residual, weight (and out unless quantized) */
    int64_t tokens, hidden;    /* hidden 1 .. 65536 */
    tile_devptr x; int64_t ldx;               /* [tokens, hidden], row stride ldx (0: hidden) */
    tile_devptr residual; int64_t ldr;        /* [tokens, hidden] or 0: updated in place to x + residual
                                                 (rounded to dtype) and normalized instead of x */
    tile_devptr weight;                       /* [hidden] */
    tile_devptr bias;                         /* [hidden] or 0; LayerNorm only */
    float eps;                                /* added to mean(z^2) (LayerNorm: the variance); finite, >= 0 */
    tile_devptr out; int64_t ldo;             /* [tokens, hidden] in dtype or quant_dtype */
    tile_dtype quant_dtype;                   /* 0 (TILE_F32) or dtype: no quantization; TILE_F8E4M3; TILE_I8 */
    tile_devptr scales;                       /* f32 [tokens] when quantized; with quant_group [tokens, groups] */
    tile_stream stream;
    int64_t quant_group;                      /* 0: one scale per token; 16 .. 1024, a power of two: one per group of
                                                 quant_group columns (DeepSeek's 128), groups = cdiv(hidden, quant_group) */
    int64_t lds;                              /* with quant_group: the scales' row stride (0: groups) */
} tile_norm_args;
/* z = residual ? (residual = x + residual) : x;  y = z / sqrt(mean(z^2) + eps) * weight, in f32, then
 * rounded to dtype or quantized (above).  vLLM's fused_add_rms_norm / rms_norm and their
 * dynamic-per-token-quant forms. */
TILE_API tile_status tile_fused_add_rmsnorm(tile_context *ctx, const tile_norm_args *args);
/* As tile_fused_add_rmsnorm with LayerNorm: y = (z - mean(z)) / sqrt(var(z) + eps) * weight (+ bias),
 * the variance the biased one (mean of squared deviations) taken in a second pass over the row. */
TILE_API tile_status tile_fused_add_layernorm(tile_context *ctx, const tile_norm_args *args);
/* Compile and load what the call with these args launches (see "preparing calls" above). */
TILE_API tile_status tile_fused_add_rmsnorm_prepare(tile_context *ctx, const tile_norm_args *args);
TILE_API tile_status tile_fused_add_layernorm_prepare(tile_context *ctx, const tile_norm_args *args);

typedef enum tile_gated_act {
    TILE_GATED_SILU = 0,      /* x / (1 + e^-x) */
    TILE_GATED_GELU = 1,      /* 0.5 x (1 + erf(x / sqrt 2)) */
    TILE_GATED_GELU_TANH = 2, /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
} tile_gated_act;
typedef struct tile_gated_args {
    size_t size;
    tile_dtype dtype;          /* TILE_F16 or TILE_BF16: x (and out unless quantized) */
    tile_gated_act act;
    int64_t tokens, d;         /* d 1 .. 2^20 */
    tile_devptr x; int64_t ldx; /* [tokens, 2 d]: gate (d), then up (d); row stride ldx (0: 2 d) */
    tile_devptr out; int64_t ldo; /* [tokens, d] in dtype or quant_dtype, row stride ldo (0: d) */
    tile_dtype quant_dtype;    /* as tile_norm_args */
    tile_devptr scales;        /* f32 [tokens] when quantized; with quant_group [tokens, groups] */
    tile_stream stream;
    int64_t quant_group;       /* as tile_norm_args: groups = cdiv(d, quant_group) */
    int64_t lds;               /* with quant_group: the scales' row stride (0: groups) */
} tile_gated_args;
/* out[t, i] = act(gate[t, i]) * up[t, i] in f32, then rounded to dtype or quantized (above): vLLM's
 * silu_and_mul, gelu_and_mul and gelu_tanh_and_mul. */
TILE_API tile_status tile_gated_activation(tile_context *ctx, const tile_gated_args *args);
TILE_API tile_status tile_gated_activation_prepare(tile_context *ctx, const tile_gated_args *args);

/* ==== sampling and speculative decoding (kernels/sampling/sampling.c; kernels/sampling/sampling.tile;
 * docs/kernels.md) ====
 * One program per row, no sort: the filters are thresholds found by bisection over the row, the draw a
 * chunked prefix sum.  Random numbers are Philox-4x32-10 with key (seed lo, seed hi) and counter
 * (offset lo, offset hi, row when `seed` is 0 (one scalar seed for every row) else 0, draw): the same
 * seed and offset give the same uniform in any batch position, launch and device (the token too, but
 * for draws within f32 rounding of a boundary; docs/kernels.md).  Per-row parameters are device
 * arrays of length batch, or, where the array is 0, the `_value` scalar for every row.  Launched on
 * `stream`; the argument structs begin with `size` as tile_norm_args.  What a call writes (out, probs;
 * accepted, out_tokens) may share no byte with another tensor of the call (TILE_ERROR_INVALID_VALUE). */
typedef struct tile_sample_args {
    size_t size;
    tile_dtype dtype;                 /* logits: TILE_F32, TILE_F16 or TILE_BF16 */
    int64_t batch, vocab;             /* vocab 1 .. 2^20 */
    tile_devptr logits; int64_t ld;   /* [batch, vocab], row stride ld (0: vocab) */
    tile_devptr temperature; float temperature_value; /* f32 [batch]; <= 0: greedy (argmax, ties to the
                                                         lowest index); else softmax(logits / T) */
    tile_devptr top_k; int32_t top_k_value;           /* i32 [batch]; 0 (or >= vocab): off */
    tile_devptr top_p; float top_p_value;             /* f32 [batch]; 1: off; scalar in (0, 1] */
    tile_devptr min_p; float min_p_value;             /* f32 [batch]; 0: off; scalar in [0, 1] */
    tile_devptr seed; uint64_t seed_value;            /* u64 [batch] */
    tile_devptr offset; uint64_t offset_value;        /* u64 [batch]: the Philox counter's first 64 bits */
    tile_dtype out_dtype;             /* TILE_I32 (or 0 for it) or TILE_I64 */
    tile_devptr out;                  /* [batch] token ids */
    tile_devptr probs; int64_t ldp;   /* f32 [batch, vocab] or 0: the filtered, renormalized probabilities
                                         the token was drawn from (greedy rows one-hot); row stride ldp */
    tile_stream stream;
} tile_sample_args;
/* One token per row: probs = softmax(logits / T); min_p keeps p >= min_p * max p; top_k the k largest
 * logits (every logit equal to the k-th largest too); top_p the smallest set of largest probabilities
 * (of those kept so far, renormalized) holding top_p of their mass (ties at its boundary kept); then a
 * draw from the kept probabilities, renormalized.  vLLM / FlashInfer semantics. */
TILE_API tile_status tile_sample(tile_context *ctx, const tile_sample_args *args);
TILE_API tile_status tile_sample_prepare(tile_context *ctx, const tile_sample_args *args);

typedef struct tile_spec_verify_args {
    size_t size;
    int64_t batch, num_draft, vocab;  /* num_draft 1 .. 64, vocab 1 .. 2^20 */
    tile_devptr draft_tokens;         /* i32 [batch, num_draft] */
    tile_devptr draft_probs;          /* f32 [batch, num_draft, vocab] q (may be 0 when every row is greedy) */
    tile_devptr target_probs;         /* f32 [batch, num_draft + 1, vocab] p: probabilities, not logits */
    tile_devptr greedy; int32_t greedy_value;  /* i32 [batch]: non-zero for greedy verification */
    tile_devptr seed; uint64_t seed_value;     /* as tile_sample_args */
    tile_devptr offset; uint64_t offset_value;
    tile_devptr accepted;             /* i32 [batch]: accepted drafts, 0 .. num_draft */
    tile_devptr out_tokens;           /* i32 [batch, num_draft + 1]: the accepted drafts, then the replacement
                                         (or the bonus token when all were accepted), then -1 */
    tile_stream stream;
} tile_spec_verify_args;
/* Rejection sampling of speculative decoding (Leviathan et al.; vLLM's rejection sampler): draft i is
 * accepted with probability min(1, p_i(x_i) / q_i(x_i)); at the first rejection the replacement is drawn
 * from norm(max(0, p_i - q_i)); when all are accepted the bonus token from p_num_draft.  Greedy rows accept
 * while the draft is argmax p_i and then emit the argmax.  Draw i uses Philox counter word 3 = i (word 0
 * of the output for the acceptance test, word 1 for the replacement or bonus). */
TILE_API tile_status tile_spec_verify(tile_context *ctx, const tile_spec_verify_args *args);
TILE_API tile_status tile_spec_verify_prepare(tile_context *ctx, const tile_spec_verify_args *args);

/* ==== rotary embedding + paged KV-cache append (kernels/rope/rope.c; kernels/rope/rope.tile; docs/kernels.md) ====
 * For a batch of new tokens: rotate Q and K by their positions (RoPE) and write the rotated K and V
 * into a vLLM-style paged KV cache, in one launch (vLLM's rotary_embedding followed by
 * reshape_and_cache).  The cache is what tile_attention_decode_paged reads:
 * [num_blocks, block_size, heads_kv, head_dim] through block, slot and head strides.
 * Sizes are int64_t and checked against the kernel's 32-bit offsets; every pointer must lie in an
 * allocation of the context with room for what the kernel touches, aligned to its elements.
 * Launched on `stream`; nothing is synchronized (unless check_indices). */
typedef enum tile_rope_style {
    TILE_ROPE_NEOX = 0, /* NeoX / Llama: pairs (i, i + rot_dim / 2) ("rotate half") */
    TILE_ROPE_GPTJ = 1, /* GPT-J: interleaved pairs (2 i, 2 i + 1) */
} tile_rope_style;
typedef struct tile_rope_args {
    size_t size;                      /* 0 or sizeof(tile_rope_args): see "ABI" above */
    tile_dtype dtype;                 /* TILE_F16 or TILE_BF16: q, k, v (and the caches unless kv_dtype is f8) */
    tile_rope_style style;
    int64_t tokens, heads_q, heads_kv; /* tokens >= 0; heads >= 1 */
    int64_t head_dim;                 /* 2 .. 256 */
    int64_t rot_dim;                  /* 0: head_dim (which must then be even); else even, 2 .. head_dim: the first rot_dim dims of each head
                                         rotate, the rest pass unchanged (partial rotary) */
    tile_devptr q; int64_t ldq;       /* [tokens, heads_q, head_dim], token stride ldq (0: heads_q * head_dim) */
    tile_devptr k; int64_t ldk;       /* [tokens, heads_kv, head_dim], token stride ldk (0: heads_kv * head_dim) */
    tile_devptr v; int64_t ldv;       /* likewise */
    tile_devptr q_out; int64_t ldq_out; /* the rotated Q; 0 (or q): q in place.  ldq_out 0: heads_q * head_dim */
    tile_devptr k_out; int64_t ldk_out; /* the rotated K; 0 (or k): k in place */
    tile_devptr positions;            /* [tokens]: each token's position, 0 <= p < max_position */
    tile_dtype positions_dtype;       /* TILE_I64 (or 0) or TILE_I32 */
    tile_devptr cos_sin;              /* [max_position, rot_dim]: rot_dim / 2 cosines, then rot_dim / 2 sines
                                         (vLLM's cos_sin_cache) */
    tile_dtype cos_sin_dtype;         /* TILE_F32 (0) or dtype */
    int64_t max_position;
    tile_devptr k_cache, v_cache;     /* [num_blocks, block_size, heads_kv, head_dim] in kv_dtype */
    int64_t k_stride[3], v_stride[3]; /* block, slot, head; all three 0: contiguous */
    int64_t num_blocks, block_size;   /* num_blocks * block_size < 2^31 */
    tile_devptr slot_mapping;         /* [tokens]: slot = block * block_size + offset of each token; negative:
                                         the token is not written (padding) */
    tile_dtype slot_dtype;            /* TILE_I64 (or 0) or TILE_I32 */
    tile_dtype kv_dtype;              /* dtype (or 0), or TILE_F8E4M3: codes f8e4m3(x / scale), rounded to nearest
                                         even and saturated, x the rotated K (rounded to dtype) or V */
    float k_scale, v_scale;           /* f8 caches: per-tensor scales (as tile_paged_attention_args); 0 means 1;
                                         0 or 1 with a 16-bit cache (another value is refused, not ignored) */
    tile_devptr k_scales, v_scales;   /* f8 caches: f32 [heads_kv] per-head scales instead, both or neither */
    int check_indices;                /* 1: copy positions and slot_mapping to the host and check every entry
                                         (synchronizes; for debugging) */
    tile_stream stream;
} tile_rope_args;
/* With a position outside [0, max_position) the kernel reads no cos/sin and leaves that token's heads
 * unrotated; a slot outside [0, num_blocks * block_size) writes nothing to the caches (check_indices = 1
 * reports either).  Two tokens with the same slot race.  What the call writes (Q and K rotated, the caches)
 * may share no byte with another tensor it reads or writes, else TILE_ERROR_INVALID_VALUE; q_out 0 or q is
 * q in place (likewise k), and Q, K, V as interleaved columns of one buffer pass; k_cache and v_cache may
 * share no byte, and K and V interleaved by head, slot or block in one buffer pass.  Graph-safe (no allocation, synchronization
 * or compilation once prepared) unless check_indices. */
TILE_API tile_status tile_rope_kv_append(tile_context *ctx, const tile_rope_args *args);
/* Compile and load what tile_rope_kv_append(ctx, args) launches (see "preparing calls" above). */
TILE_API tile_status tile_rope_kv_append_prepare(tile_context *ctx, const tile_rope_args *args);

#ifdef __cplusplus
}
#endif
#endif

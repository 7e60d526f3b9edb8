/* device.h - the device layer: one API over two backends.
 *
 *   cuda  the GPU through the CUDA Driver API, loaded at run time with
 *         dlopen("libcuda.so.1") (device_cuda.c, the only file that knows
 *         the driver); nothing links -lcuda, so everything builds and runs
 *         on machines without a driver.
 *   emu   the PTX emulator (device_emu.c over emu/): runs the exact PTX
 *         the compiler emits on the CPU, with bounds checking (memcheck)
 *         and an optional shared-memory race detector.
 *
 * The backend is chosen by a device string: "cuda", "cuda:N", "emu",
 * "emu:<target>" (the emulator reporting a target of support/target.h, e.g.
 * "emu:sm_90a"; plain "emu" is the default target), or NULL/"" for the default (the TILE_DEVICE environment variable if set, else
 * cuda when a GPU is present, else emu).  dev_parse_device() is the only
 * reader of TILE_DEVICE.
 *
 * Every call returns a DevStatus; on failure dev_last_error() holds a
 * message naming what failed, per thread (threads sharing a device fail
 * independently).  Nothing aborts.  Launches on the emulator are
 * synchronous and return launch errors (memcheck, racecheck, unsupported
 * instructions) directly; on cuda they are asynchronous as usual and
 * surface at dev_synchronize().
 *
 * Streams and events are opaque backend handles (void *; NULL is the
 * default stream).  On cuda they are CUstream/CUevent: streams are created
 * blocking, so work on the default stream still orders with them (the
 * legacy default-stream rule).  On the emulator a stream is an in-order
 * queue that runs each piece of work to completion when it is submitted,
 * so every stream is trivially in order and synchronizing is a no-op; an
 * event records the host's monotonic clock when it is recorded, which is
 * after all earlier work on its stream has finished.
 *
 * These calls become the public launcher API (include/tile/tile.h) later;
 * the backend interface at the bottom is internal. */
#ifndef TILE_JIT_DEVICE_H
#define TILE_JIT_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DEV_STATUS(enum, description) */
#define DEV_STATUSES(X) \
    X(OK, "success") \
    X(ERR_INVALID, "invalid argument") \
    X(ERR_NO_DEVICE, "no such device") \
    X(ERR_DRIVER, "CUDA driver error") \
    X(ERR_OUT_OF_MEMORY, "out of device memory") \
    X(ERR_PTX, "PTX could not be loaded") \
    X(ERR_NOT_FOUND, "no such kernel") \
    X(ERR_LAUNCH, "launch failed") \
    X(ERR_MEMCHECK, "invalid memory access") \
    X(ERR_UNSUPPORTED, "unsupported by this backend") \
    X(ERR_PTX_VERSION, "the PTX's ISA version is newer than the driver's") \
    X(ERR_FAULT, "a kernel faulted") /* a GPU's: reported by a later call (the driver's sticky error), not by the launch */

typedef enum DevStatus {
#define X(e, s) DEV_##e,
    DEV_STATUSES(X)
#undef X
} DevStatus;

typedef enum DevBackend { DEV_BACKEND_CUDA, DEV_BACKEND_EMU } DevBackend;

typedef struct TileDevice TileDevice;         /* a context on one backend */
typedef struct TileDevModule TileDevModule;   /* a loaded PTX module */
typedef struct TileDevFunction TileDevFunction; /* a kernel of a module */

/* Knobs, filled by the caller (CLI options, TILE_DEBUG); zero is the default. */
typedef struct DevOptions {
    bool emu_racecheck;            /* report shared-memory hazards between barriers */
    unsigned emu_host_threads;     /* host threads running blocks; 0: one per core */
    uint64_t emu_max_instructions; /* per-thread watchdog; 0: unlimited */
    double emu_timeout_seconds;    /* a launch running longer fails (DEV_ERR_LAUNCH); 0: 600 s; < 0: no limit */
    bool emu_approx_bound;         /* .approx results moved by the PTX ISA's documented error (EmuOptions.approx) */
} DevOptions;

typedef struct DevLaunchStats {
    uint64_t instructions;         /* emu: executed thread-instructions; cuda: 0 */
} DevLaunchStats;

const char *dev_status_string(DevStatus s);

typedef struct Target Target;
/* What a device string names (dev_parse_spec, the one parser of the grammar). */
typedef struct DevSpec {
    DevBackend backend;
    int ordinal;              /* cuda:N */
    const Target *target;     /* emu:<target>; NULL: not named (the context's arch decides) */
    int sms;                  /* emu:sms=N; 0: the default (132) */
    bool racecheck;           /* emu:racecheck: DevOptions.emu_racecheck on whatever the options say */
    int approx;               /* emu:approx=exact (1) or emu:approx=bound (2): DevOptions.emu_approx_bound whatever the
                               * options say; 0: not named */
} DevSpec;
DevStatus dev_parse_spec(const char *device, DevSpec *spec, char **errmsg);

/* Parse a device string (see above).  NULL or "" reads TILE_DEVICE; if that
 * is unset too, picks cuda when a GPU is present, else emu.  On failure
 * returns DEV_ERR_INVALID and *errmsg (malloc'd) says why. */
DevStatus dev_parse_device(const char *device, DevBackend *backend, int *ordinal, char **errmsg);
/* The device's multiprocessor count (dev_open fills it). */
int dev_num_sms(const TileDevice *dev);
/* A GPU's compute capability, major * 10 + minor (90 for 9.0); 0 for the emulator (its target is what it was named). */
int dev_compute_capability(const TileDevice *dev);

/* Open a device.  opts may be NULL.  On failure *out is NULL and *errmsg
 * (malloc'd, may be NULL if errmsg is NULL) names what failed. */
DevStatus dev_open(const char *device, const DevOptions *opts, TileDevice **out, char **errmsg);
void dev_close(TileDevice *dev);
const char *dev_last_error(const TileDevice *dev);
const char *dev_backend_name(const TileDevice *dev);

DevStatus dev_malloc(TileDevice *dev, size_t bytes, uint64_t *dptr);
DevStatus dev_free(TileDevice *dev, uint64_t dptr);
DevStatus dev_memcpy_htod(TileDevice *dev, uint64_t dst, const void *src, size_t bytes);
DevStatus dev_memcpy_dtoh(TileDevice *dev, void *dst, uint64_t src, size_t bytes);
DevStatus dev_memset_d8(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes);

DevStatus dev_module_load_ptx(TileDevice *dev, const char *ptx, TileDevModule **out);
/* A cubin or fatbin image, already checked whole (rt_image_check: the driver reads it without its size).
 * DEV_ERR_UNSUPPORTED where the backend runs no machine code (the emulator), with a message. */
DevStatus dev_module_load_image(TileDevice *dev, const void *image, size_t size, TileDevModule **out);
/* The sizes in bytes of fn's parameters, as the driver reports them (cuFuncGetParamInfo, CUDA 12.4): *n of
 * them into sizes[0..cap); DEV_ERR_UNSUPPORTED when the driver cannot say (older drivers, the emulator). */
DevStatus dev_function_param_sizes(TileDevFunction *fn, uint32_t *sizes, int cap, int *n);
void dev_module_unload(TileDevModule *mod);
/* The function stays valid until its module is unloaded. */
DevStatus dev_module_get_function(TileDevModule *mod, const char *name, TileDevFunction **out);

/* Launch as cuLaunchKernel does: params[i] points at argument i's value. */
/* dev_launch_flags: DEV_LAUNCH_PDL lets the kernel start before the previous one on its stream has
 * finished (programmatic dependent launch, sm_90; the emulator runs launches in order anyway).  cluster:
 * CTAs per thread-block cluster (cuLaunchKernelEx's cluster dimension, sm_90); NULL: the kernel's own
 * (.reqnctapercluster) or none. */
enum { DEV_LAUNCH_PDL = 1, DEV_LAUNCH_COOPERATIVE = 2 /* every block resident at once: grid-wide sync */ };
DevStatus dev_launch_flags(TileDevFunction *fn, const unsigned grid[3], const unsigned block[3], unsigned smem_bytes, void *stream,
                           void **params, unsigned flags, const unsigned *cluster);
DevStatus dev_launch(TileDevFunction *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                     unsigned smem_bytes, void *stream, void **params);
DevStatus dev_synchronize(TileDevice *dev);

/* Streams (NULL: the default stream) and events. */
DevStatus dev_stream_create(TileDevice *dev, void **stream);
DevStatus dev_stream_destroy(TileDevice *dev, void *stream);
DevStatus dev_stream_synchronize(TileDevice *dev, void *stream);
/* Later work on stream waits until event (recorded on any stream) has completed. */
DevStatus dev_stream_wait_event(TileDevice *dev, void *stream, void *event);
DevStatus dev_event_create(TileDevice *dev, void **event);
DevStatus dev_event_destroy(TileDevice *dev, void *event);
DevStatus dev_event_record(TileDevice *dev, void *event, void *stream);
DevStatus dev_event_synchronize(TileDevice *dev, void *event);
/* Milliseconds between two completed, recorded events. */
DevStatus dev_event_elapsed_ms(TileDevice *dev, void *start, void *end, float *ms);
/* Copies and fills ordered on stream; the host buffer must stay valid until the stream is synchronized. */
DevStatus dev_memcpy_htod_async(TileDevice *dev, uint64_t dst, const void *src, size_t bytes, void *stream);
DevStatus dev_memcpy_dtoh_async(TileDevice *dev, void *dst, uint64_t src, size_t bytes, void *stream);
DevStatus dev_memset_d8_async(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes, void *stream);
/* rows rows of width bytes, pitch bytes apart, set to value (the bytes between rows kept): one piece of work
 * on stream where the backend has a 2-D fill, else one fill per row. */
DevStatus dev_memset2d_d8_async(TileDevice *dev, uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t rows, void *stream);
/* The allocation a foreign pointer lies in, when the backend can tell: [base, base + size); size 0: unknown. */
typedef struct DevRange {
    uint64_t base, size;
} DevRange;
/* Is p memory of this device's context that dev_malloc did not hand out (cuda: asked of the driver)?
 * range (may be NULL) receives the allocation holding p where the driver says (cuda: the range
 * attributes), else size 0. */
bool dev_pointer_usable(TileDevice *dev, uint64_t p, DevRange *range);
/* Map the caller's host memory [host, host + bytes) into the device's address space without copying
 * (emu: a range of the emulator's table over those bytes; cuda: cuMemHostRegister with DEVICEMAP and
 * cuMemHostGetDevicePointer).  *dptr: its device address.  Overlaps are the caller's to refuse. */
DevStatus dev_register_host(TileDevice *dev, void *host, size_t bytes, uint64_t *dptr);
/* Stop the launch the device is running (from another thread; it fails as "interrupted"): the emulator's.
 * DEV_ERR_UNSUPPORTED on a GPU, whose kernels run to their end. */
DevStatus dev_interrupt(TileDevice *dev);
/* Undo dev_register_host; the memory stays the caller's. */
DevStatus dev_unregister_host(TileDevice *dev, void *host, uint64_t dptr);
/* Open the cuda device of a context the caller made (a CUcontext), without owning it: dev_close does
 * not destroy it.  The emulator has none: DEV_ERR_UNSUPPORTED. */
DevStatus dev_open_native(void *native_context, const DevOptions *opts, TileDevice **out, char **errmsg);
/* Is stream a stream of this device's context that the caller made (cuda: cuStreamGetCtx)?  NULL
 * (the default stream) always is; the emulator knows no other. */
DevStatus dev_stream_check_native(TileDevice *dev, void *stream);
/* The model and driver version (dev_cuda_ops.model), or the backend's name when the backend has none.
 * Tabs and newlines become spaces (the string is a field of a line of tune.db). */
DevStatus dev_model(TileDevice *dev, char *out, size_t n);
/* A tiled tensor map (TMA), as cuTensorMapEncodeTiled takes it: dims innermost first, strides in bytes for
 * dimensions 1..rank-1, box and element strides in elements.  dtype: CUtensorMapDataType's value (0 u8,
 * 1 u16, 2 u32, 3 s32, 4 u64, 5 s64, 6 f16, 7 f32, 8 f64, 9 bf16); esize: its bytes.  swizzle: 0 none,
 * 1 32B, 2 64B, 3 128B.  Out-of-bounds elements read as zero (fill 1: NaN, floating-point types).
 * im2col = 1: an im2col map as cuTensorMapEncodeIm2col takes it (box unused; lower and upper: the rank - 2
 * corners of the bounding box, W first; channels per pixel, pixels per column). */
typedef struct DevTensorMap {
    unsigned dtype, esize, rank, swizzle;
    uint64_t addr;
    uint64_t dims[5], strides[4];
    uint32_t box[5], elem_strides[5];
    unsigned fill, im2col;
    int32_t lower[3], upper[3];
    uint32_t channels, pixels;
} DevTensorMap;
enum { DEV_TENSOR_MAP_BYTES = 128 };
/* Encode tm into out (DEV_TENSOR_MAP_BYTES, 64-byte aligned): cuda: cuTensorMapEncodeTiled or
 * cuTensorMapEncodeIm2col (drivers without it: DEV_ERR_UNSUPPORTED); emu: the emulator's encoding, which its
 * cp.async.bulk.tensor reads. */
DevStatus dev_tensor_map_encode(TileDevice *dev, const DevTensorMap *tm, void *out);
/* The target the device string named (emu:<target>), else NULL. */
const Target *dev_target(const TileDevice *dev);
/* Statistics of the last launch on dev. */
DevStatus dev_last_launch_stats(TileDevice *dev, DevLaunchStats *stats);

/* ---- backend interface (internal to jit/) ---- */
typedef struct DevBackendOps {
    const char *name;
    DevStatus (*open)(TileDevice *dev, int ordinal);
    void (*close)(TileDevice *dev);
    DevStatus (*malloc)(TileDevice *dev, size_t bytes, uint64_t *dptr);
    DevStatus (*free)(TileDevice *dev, uint64_t dptr);
    DevStatus (*htod)(TileDevice *dev, uint64_t dst, const void *src, size_t bytes);
    DevStatus (*dtoh)(TileDevice *dev, void *dst, uint64_t src, size_t bytes);
    DevStatus (*memset8)(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes);
    DevStatus (*module_load)(TileDevice *dev, const char *ptx, void **mod);
    void (*module_unload)(TileDevice *dev, void *mod);
    DevStatus (*get_function)(TileDevice *dev, void *mod, const char *name, void **fn);
    DevStatus (*launch)(TileDevice *dev, void *fn, const unsigned grid[3], const unsigned block[3], unsigned smem,
                        void *stream, void **params, unsigned flags, const unsigned *cluster);
    DevStatus (*synchronize)(TileDevice *dev);
    DevStatus (*stream_create)(TileDevice *dev, void **stream);
    DevStatus (*stream_destroy)(TileDevice *dev, void *stream);
    DevStatus (*stream_synchronize)(TileDevice *dev, void *stream);
    DevStatus (*stream_wait_event)(TileDevice *dev, void *stream, void *event);
    DevStatus (*event_create)(TileDevice *dev, void **event);
    DevStatus (*event_destroy)(TileDevice *dev, void *event);
    DevStatus (*event_record)(TileDevice *dev, void *event, void *stream);
    DevStatus (*event_synchronize)(TileDevice *dev, void *event);
    DevStatus (*event_elapsed_ms)(TileDevice *dev, void *start, void *end, float *ms);
    DevStatus (*htod_async)(TileDevice *dev, uint64_t dst, const void *src, size_t bytes, void *stream);
    DevStatus (*dtoh_async)(TileDevice *dev, void *dst, uint64_t src, size_t bytes, void *stream);
    DevStatus (*memset8_async)(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes, void *stream);
    /* NULL: dev_memset2d_d8_async issues one memset8_async per row */
    DevStatus (*memset2d8_async)(TileDevice *dev, uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t rows, void *stream);
    /* Is p device memory usable in this device's context though not allocated through it (the
     * caller's own allocations)?  range: its allocation when known (size 0 otherwise).  NULL: nothing
     * is, beyond dev_malloc's. */
    bool (*pointer_usable)(TileDevice *dev, uint64_t p, DevRange *range);
    /* Zero-copy mapping of host memory (dev_register_host); NULL: unsupported. */
    DevStatus (*register_host)(TileDevice *dev, void *host, size_t bytes, uint64_t *dptr);
    /* Stop the launch running now, from another thread (dev_interrupt); NULL: unsupported. */
    DevStatus (*interrupt)(TileDevice *dev);
    DevStatus (*unregister_host)(TileDevice *dev, void *host, uint64_t dptr);
    /* Open on the caller's native context (dev_open_native); NULL: the backend has none. */
    DevStatus (*open_native)(TileDevice *dev, void *native_context);
    /* A native stream of this context (dev_stream_check_native); NULL: only the default stream. */
    DevStatus (*stream_check_native)(TileDevice *dev, void *stream);
    /* The device's model and driver version as one string (cuda: "NVIDIA H100 80GB HBM3/driver 12040");
     * NULL: the backend's name is all there is to say (the emulator). */
    DevStatus (*model)(TileDevice *dev, char *out, size_t n);
    /* dev_tensor_map_encode; NULL: unsupported. */
    DevStatus (*tensor_map_encode)(TileDevice *dev, const DevTensorMap *tm, void *out);
    /* dev_module_load_image, dev_function_param_sizes; NULL: unsupported. */
    DevStatus (*module_load_image)(TileDevice *dev, const void *image, size_t size, void **mod);
    DevStatus (*param_sizes)(TileDevice *dev, void *fn, uint32_t *sizes, int cap, int *n);
} DevBackendOps;

struct TileDevice {
    const DevBackendOps *ops;
    DevOptions opts;
    int ordinal;
    const Target *target;    /* emu:<target>; NULL: none named */
    void *impl;              /* backend state */
    DevLaunchStats last;     /* filled by the backend's launch */
    int num_sms;             /* multiprocessors: the emulator's from "emu:sms=N" (default 132), the GPU's from the driver */
    int cc;                  /* a GPU's compute capability, major * 10 + minor (90: 9.0); 0: the emulator */
};

/* Record an error on dev and return status (printf-style message). */
DevStatus dev_fail(TileDevice *dev, DevStatus status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

extern const DevBackendOps dev_emu_ops;
extern const DevBackendOps dev_cuda_ops;
/* Whether the CUDA driver loads and reports at least one device (no context is created). */
bool dev_cuda_available(void);

#endif

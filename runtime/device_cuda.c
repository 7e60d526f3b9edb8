/* device_cuda.c - the CUDA Driver API backend; the only file that knows
 * the driver.
 *
 * The driver is loaded at run time: dlopen("libcuda.so.1") and dlsym of
 * the versioned entry points that cuda.h's macros name (cuMemAlloc_v2,
 * cuMemcpyHtoD_v2, ...).  The few driver types are declared here, so the
 * build needs no CUDA headers and nothing links -lcuda.  The library is
 * loaded once per process (guarded by pthread_once) and never unloaded.
 * Each device holds the primary context of its ordinal (cuDevicePrimaryCtxRetain:
 * the context the CUDA runtime and PyTorch use, so their memory and streams
 * are valid here), or a context the caller made (dev_open_native: borrowed,
 * never destroyed or released here), and makes it current before every
 * driver call (it stays current on that thread), so any host thread may use it.
 *
 * Foreign memory: a pointer no dev_malloc made is usable when the driver
 * says it belongs to this context (CU_POINTER_ATTRIBUTE_CONTEXT), and its
 * allocation's extent comes from the range attributes, so copies and kernel
 * arguments are still checked against its end.  Host memory is registered
 * with cuMemHostRegister(DEVICEMAP) and used through the device pointer
 * cuMemHostGetDevicePointer gives.  Memory the driver says is page-locked
 * already (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) is used as it is: the
 * caller's (cuMemHostAlloc, cuMemHostRegister, torch's pin_memory) is never
 * unregistered here, and a range a tile context registered that another one
 * on the same CUDA context (the shared primary context) registers again is
 * counted, unregistered when the last of them lets it go. */
#include "runtime/device.h"
#include "support/target.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
enum { CUDA_SUCCESS = 0, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_PTX = 218,
       CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222, CUDA_ERROR_NOT_FOUND = 500, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
       CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_INVALID_IMAGE = 200, CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
       CUDA_ERROR_NOT_SUPPORTED = 801 };
/* A kernel's fault (out-of-bounds or misaligned access, trap, device assert, ...): the context's sticky error, which the
 * next synchronizing call reports, whatever it was (DEV_ERR_FAULT; the runtime names the launches that may have made it). */
static bool kernel_fault(int r) {
    return r == 700 /* ILLEGAL_ADDRESS */ || r == 702 /* LAUNCH_TIMEOUT */ || r == 710 /* ASSERT */ || r == 714 /* HARDWARE_STACK_ERROR */ ||
           r == 715 /* ILLEGAL_INSTRUCTION */ || r == 716 /* MISALIGNED_ADDRESS */ || r == 717 /* INVALID_ADDRESS_SPACE */ ||
           r == 718 /* INVALID_PC */ || r == 719 /* LAUNCH_FAILED */;
}
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };
enum { CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
       CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14 };
enum { CUDA_PORTABLE_CLUSTER = 8 }; /* CTAs a cluster may have without the function allowing non-portable sizes */
enum { CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97 };
enum { CU_STREAM_DEFAULT = 0, CU_EVENT_DEFAULT = 0 };
enum { CU_POINTER_ATTRIBUTE_CONTEXT = 1, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11, CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12 };
enum { CU_MEMHOSTREGISTER_DEVICEMAP = 2 };

/* CUDA_FN(field, symbol, return, parameters) */
#define CUDA_FNS(X) \
    X(Init, "cuInit", (unsigned flags)) \
    X(DeviceGetCount, "cuDeviceGetCount", (int *count)) \
    X(DeviceGet, "cuDeviceGet", (CUdevice *dev, int ordinal)) \
    X(DeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice dev)) \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", (int *value, int attrib, CUdevice dev)) \
    X(DriverGetVersion, "cuDriverGetVersion", (int *version)) \
    X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *ctx, CUdevice dev)) \
    X(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice dev)) \
    X(CtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx)) \
    X(CtxSynchronize, "cuCtxSynchronize", (void)) \
    X(CtxPushCurrent, "cuCtxPushCurrent_v2", (CUcontext ctx)) \
    X(CtxPopCurrent, "cuCtxPopCurrent_v2", (CUcontext *ctx)) \
    X(CtxGetDevice, "cuCtxGetDevice", (CUdevice *dev)) \
    X(MemHostRegister, "cuMemHostRegister_v2", (void *p, size_t bytes, unsigned flags)) \
    X(MemHostUnregister, "cuMemHostUnregister", (void *p)) \
    X(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", (CUdeviceptr *d, void *p, unsigned flags)) \
    X(StreamGetCtx, "cuStreamGetCtx", (CUstream s, CUcontext *ctx)) \
    X(MemAlloc, "cuMemAlloc_v2", (CUdeviceptr *p, size_t bytes)) \
    X(MemFree, "cuMemFree_v2", (CUdeviceptr p)) \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void *src, size_t bytes)) \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2", (void *dst, CUdeviceptr src, size_t bytes)) \
    X(MemsetD8, "cuMemsetD8_v2", (CUdeviceptr dst, unsigned char v, size_t n)) \
    X(ModuleLoadDataEx, "cuModuleLoadDataEx", (CUmodule *m, const void *image, unsigned n, int *opts, void **vals)) \
    X(ModuleUnload, "cuModuleUnload", (CUmodule m)) \
    X(ModuleGetFunction, "cuModuleGetFunction", (CUfunction *f, CUmodule m, const char *name)) \
    X(FuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, int attr, int value)) \
    X(FuncGetAttribute, "cuFuncGetAttribute", (int *value, int attr, CUfunction f)) \
    X(LaunchKernel, "cuLaunchKernel", (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
                                        unsigned bz, unsigned smem, CUstream s, void **params, void **extra)) \
    X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr dst, const void *src, size_t bytes, CUstream s)) \
    X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *dst, CUdeviceptr src, size_t bytes, CUstream s)) \
    X(MemsetD8Async, "cuMemsetD8Async", (CUdeviceptr dst, unsigned char v, size_t n, CUstream s)) \
    X(StreamCreate, "cuStreamCreate", (CUstream *s, unsigned flags)) \
    X(StreamDestroy, "cuStreamDestroy_v2", (CUstream s)) \
    X(StreamSynchronize, "cuStreamSynchronize", (CUstream s)) \
    X(StreamWaitEvent, "cuStreamWaitEvent", (CUstream s, CUevent e, unsigned flags)) \
    X(EventCreate, "cuEventCreate", (CUevent *e, unsigned flags)) \
    X(EventDestroy, "cuEventDestroy_v2", (CUevent e)) \
    X(EventRecord, "cuEventRecord", (CUevent e, CUstream s)) \
    X(EventSynchronize, "cuEventSynchronize", (CUevent e)) \
    X(EventElapsedTime, "cuEventElapsedTime", (float *ms, CUevent start, CUevent end)) \
    X(PointerGetAttribute, "cuPointerGetAttribute", (void *data, int attribute, CUdeviceptr p)) \
    X(GetErrorName, "cuGetErrorName", (CUresult r, const char **s)) \
    X(GetErrorString, "cuGetErrorString", (CUresult r, const char **s))

typedef struct CudaApi {
#define X(f, s, p) CUresult (*f) p;
    CUDA_FNS(X)
#undef X
    void *launch_kernel_ex; /* cuLaunchKernelEx when the driver has it (CUDA 12+), else NULL: optional */
    /* cuTensorMapEncodeTiled (CUDA 12+), else NULL: optional */
    CUresult (*tensor_map_encode_tiled)(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims,
                                        const unsigned long long *strides, const unsigned *box, const unsigned *elem_strides,
                                        int interleave, int swizzle, int l2promotion, int oobfill);
    /* cuTensorMapEncodeIm2col (CUDA 12+), else NULL: optional */
    CUresult (*tensor_map_encode_im2col)(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims,
                                         const unsigned long long *strides, const int *lower, const int *upper, unsigned channels,
                                         unsigned pixels, const unsigned *elem_strides, int interleave, int swizzle, int l2promotion,
                                         int oobfill);
    /* cuMemsetD2D8Async, else NULL: optional (one cuMemsetD8Async per row then) */
    CUresult (*memset_d2d8_async)(CUdeviceptr dst, size_t pitch, unsigned char v, size_t width, size_t height, CUstream s);
    /* cuFuncGetParamInfo (CUDA 12.4+), else NULL: optional (a cubin's kernels then have unknown parameters) */
    CUresult (*func_get_param_info)(CUfunction f, size_t index, size_t *offset, size_t *size);
    bool loaded;
    char err[512];
} CudaApi;

static CudaApi cuda_api;
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;

static void cuda_load(void) {
    CudaApi *a = &cuda_api;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(a->err, sizeof a->err, "cuda: cannot load the CUDA driver (libcuda.so.1): %s", e ? e : "not found");
        return;
    }
#define X(f, s, p)                                                                         \
    *(void **)&a->f = dlsym(h, s);                                                         \
    if (!a->f) {                                                                           \
        snprintf(a->err, sizeof a->err, "cuda: the CUDA driver has no entry point %s", s); \
        return;                                                                            \
    }
    CUDA_FNS(X)
#undef X
    a->launch_kernel_ex = dlsym(h, "cuLaunchKernelEx");
    *(void **)&a->tensor_map_encode_tiled = dlsym(h, "cuTensorMapEncodeTiled");
    *(void **)&a->tensor_map_encode_im2col = dlsym(h, "cuTensorMapEncodeIm2col");
    *(void **)&a->func_get_param_info = dlsym(h, "cuFuncGetParamInfo");
    *(void **)&a->memset_d2d8_async = dlsym(h, "cuMemsetD2D8Async");
    CUresult r = a->Init(0);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        a->GetErrorName(r, &name);
        snprintf(a->err, sizeof a->err, "cuda: cuInit failed: %s (%d)", name ? name : "?", r);
        return;
    }
    a->loaded = true;
}

static const CudaApi *cuda(void) {
    pthread_once(&cuda_once, cuda_load);
    return &cuda_api;
}

bool dev_cuda_available(void) {
    const CudaApi *a = cuda();
    int n = 0;
    return a->loaded && a->DeviceGetCount(&n) == CUDA_SUCCESS && n > 0;
}

typedef struct CudaDev {
    CUdevice dev;
    CUcontext ctx;
    int smem_optin; /* shared memory a block may use, static and dynamic together, once opted in; 0: unknown */
    bool borrowed; /* the caller's context (dev_open_native): not released */
} CudaDev;

static DevStatus cuda_fail(TileDevice *dev, CUresult r, const char *call) {
    const CudaApi *a = cuda();
    const char *name = NULL, *desc = NULL;
    if (a->loaded) {
        a->GetErrorName(r, &name);
        a->GetErrorString(r, &desc);
    }
    DevStatus st = r == CUDA_ERROR_OUT_OF_MEMORY ? DEV_ERR_OUT_OF_MEMORY
                 : r == CUDA_ERROR_NO_DEVICE     ? DEV_ERR_NO_DEVICE
                 : r == CUDA_ERROR_INVALID_PTX   ? DEV_ERR_PTX
                 : r == CUDA_ERROR_NOT_FOUND     ? DEV_ERR_NOT_FOUND
                 : kernel_fault(r)               ? DEV_ERR_FAULT
                                                 : DEV_ERR_DRIVER;
    return dev_fail(dev, st, "cuda: %s failed: %s (%d): %s", call, name ? name : "?", r, desc ? desc : "");
}

#define CALL(dev, expr, name)                               \
    do {                                                    \
        CUresult r_ = (expr);                               \
        if (r_ != CUDA_SUCCESS) return cuda_fail((dev), r_, (name)); \
    } while (0)

/* Static plus dynamic shared memory a block has without opting in: what every target may declare statically
 * (support/target.h: 48 KiB). */
static unsigned default_smem_per_block(void) { return (unsigned)target_default()->smem_static; }

static DevStatus cur(TileDevice *dev) {
    CudaDev *c = dev->impl;
    CALL(dev, cuda()->CtxSetCurrent(c->ctx), "cuCtxSetCurrent");
    return DEV_OK;
}

/* The multiprocessor count and the compute capability (major * 10 + minor) the context's target follows. */
static void read_attributes(TileDevice *dev) {
    const CudaApi *a = cuda();
    CudaDev *c = dev->impl;
    int sms = 0, major = 0, minor = 0, optin = 0;
    if (a->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev) == CUDA_SUCCESS && sms > 0) dev->num_sms = sms;
    if (a->DeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, c->dev) == CUDA_SUCCESS && optin > 0)
        c->smem_optin = optin;
    if (a->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev) == CUDA_SUCCESS &&
        a->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev) == CUDA_SUCCESS && major > 0)
        dev->cc = major * 10 + minor;
}

static DevStatus cuda_open(TileDevice *dev, int ordinal) {
    const CudaApi *a = cuda();
    if (!a->loaded) return dev_fail(dev, DEV_ERR_NO_DEVICE, "%s", a->err);
    int n = 0;
    CALL(dev, a->DeviceGetCount(&n), "cuDeviceGetCount");
    if (ordinal >= n)
        return dev_fail(dev, DEV_ERR_NO_DEVICE, "cuda: device %d requested, %d device%s present", ordinal, n, n == 1 ? "" : "s");
    CudaDev *c = calloc(1, sizeof *c);
    if (!c) return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "cuda: out of host memory");
    CUresult r = a->DeviceGet(&c->dev, ordinal);
    if (r == CUDA_SUCCESS) r = a->PrimaryCtxRetain(&c->ctx, c->dev);
    if (r != CUDA_SUCCESS) {
        free(c);
        return cuda_fail(dev, r, "cuDevicePrimaryCtxRetain");
    }
    dev->impl = c;
    read_attributes(dev);
    return DEV_OK;
}

/* The caller's context: its device is asked with the context pushed (and popped again). */
static DevStatus cuda_open_native(TileDevice *dev, void *native_context) {
    const CudaApi *a = cuda();
    if (!a->loaded) return dev_fail(dev, DEV_ERR_NO_DEVICE, "%s", a->err);
    CudaDev *c = calloc(1, sizeof *c);
    if (!c) return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "cuda: out of host memory");
    CUcontext popped = NULL;
    CUresult r = a->CtxPushCurrent(native_context);
    if (r != CUDA_SUCCESS) {
        free(c);
        return cuda_fail(dev, r, "cuCtxPushCurrent_v2 (is it a CUcontext?)");
    }
    r = a->CtxGetDevice(&c->dev);
    a->CtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS) {
        free(c);
        return cuda_fail(dev, r, "cuCtxGetDevice");
    }
    c->ctx = native_context;
    c->borrowed = true;
    dev->ordinal = (int)c->dev; /* a CUdevice is its ordinal */
    dev->impl = c;
    read_attributes(dev);
    return DEV_OK;
}

/* "MODEL/driver VERSION", e.g. "NVIDIA H100 80GB HBM3/driver 12040": what the tuning database keys a GPU by. */
static DevStatus cuda_model(TileDevice *dev, char *out, size_t n) {
    CudaDev *c = dev->impl;
    char name[256] = "";
    int version = 0;
    CALL(dev, cuda()->DeviceGetName(name, (int)sizeof name - 1, c->dev), "cuDeviceGetName");
    CALL(dev, cuda()->DriverGetVersion(&version), "cuDriverGetVersion");
    snprintf(out, n, "%s/driver %d", name, version);
    return DEV_OK;
}

static void cuda_close(TileDevice *dev) {
    CudaDev *c = dev->impl;
    if (!c) return;
    if (!c->borrowed) cuda()->PrimaryCtxRelease(c->dev);
    free(c);
}

static DevStatus cuda_malloc(TileDevice *dev, size_t bytes, uint64_t *dptr) {
    DevStatus st = cur(dev);
    if (st) return st;
    CUdeviceptr p = 0;
    CALL(dev, cuda()->MemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc_v2");
    *dptr = p;
    return DEV_OK;
}

static DevStatus cuda_free(TileDevice *dev, uint64_t dptr) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->MemFree(dptr), "cuMemFree_v2");
    return DEV_OK;
}

static DevStatus cuda_htod(TileDevice *dev, uint64_t dst, const void *src, size_t bytes) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->MemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD_v2");
    return DEV_OK;
}

static DevStatus cuda_dtoh(TileDevice *dev, void *dst, uint64_t src, size_t bytes) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->MemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH_v2");
    return DEV_OK;
}

static DevStatus cuda_memset8(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->MemsetD8(dst, value, bytes), "cuMemsetD8_v2");
    return DEV_OK;
}

/* cuModuleLoadDataEx of PTX text or of an image, the JIT's error log appended to the message.  PTX: DEV_ERR_PTX
 * for the PTX's own errors only (a driver that fails for another reason keeps its status), DEV_ERR_PTX_VERSION for a
 * .version newer than the driver's.  An image (a cubin or fatbin, checked whole by the caller: the driver reads it
 * without its size; it picks a fatbin's machine code for this GPU, else JIT-compiles its PTX): machine code for
 * another GPU with no PTX to fall back on (CUDA_ERROR_NO_BINARY_FOR_GPU), or an image this driver does not take, is
 * DEV_ERR_UNSUPPORTED; a damaged one (CUDA_ERROR_INVALID_IMAGE) DEV_ERR_INVALID. */
static DevStatus load_data(TileDevice *dev, const void *data, bool image, void **mod) {
    DevStatus st = cur(dev);
    if (st) return st;
    char log[8192] = "";
    int opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
    CUmodule m = NULL;
    CUresult r = cuda()->ModuleLoadDataEx(&m, data, 2, opts, vals);
    if (r != CUDA_SUCCESS) {
        st = cuda_fail(dev, r, "cuModuleLoadDataEx");
        DevStatus was = st;
        if (!image && r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) st = DEV_ERR_PTX_VERSION;
        if (image && (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_NOT_SUPPORTED)) st = DEV_ERR_UNSUPPORTED;
        if (image && r == CUDA_ERROR_INVALID_IMAGE) st = DEV_ERR_INVALID;
        if (log[0]) dev_fail(dev, st, "%s\n%s", dev_last_error(dev), log); /* formatted before the old one goes */
        else if (st != was) dev_fail(dev, st, "%s", dev_last_error(dev)); /* the status, not cuda_fail's */
        return st;
    }
    *mod = m;
    return DEV_OK;
}

static DevStatus cuda_module_load(TileDevice *dev, const char *ptx, void **mod) { return load_data(dev, ptx, false, mod); }

static DevStatus cuda_module_load_image(TileDevice *dev, const void *image, size_t size, void **mod) {
    (void)size;
    return load_data(dev, image, true, mod);
}

/* cuFuncGetParamInfo for index 0, 1, ... until the driver says there is no such parameter. */
static DevStatus cuda_param_sizes(TileDevice *dev, void *fn, uint32_t *sizes, int cap, int *n) {
    const CudaApi *a = cuda();
    if (!a->func_get_param_info)
        return dev_fail(dev, DEV_ERR_UNSUPPORTED, "cuda: the driver has no cuFuncGetParamInfo (CUDA 12.4): parameter sizes unknown");
    DevStatus st = cur(dev);
    if (st) return st;
    for (int i = 0;; i++) {
        size_t off = 0, sz = 0;
        CUresult r = a->func_get_param_info(fn, (size_t)i, &off, &sz);
        if (r == CUDA_ERROR_INVALID_VALUE) return DEV_OK; /* past the last parameter */
        if (r != CUDA_SUCCESS) return cuda_fail(dev, r, "cuFuncGetParamInfo");
        if (i == cap) return dev_fail(dev, DEV_ERR_UNSUPPORTED, "cuda: over %d parameters", cap);
        sizes[i] = (uint32_t)sz;
        *n = i + 1;
    }
}

static void cuda_module_unload(TileDevice *dev, void *mod) {
    if (cur(dev) == DEV_OK) cuda()->ModuleUnload(mod);
}

static DevStatus cuda_get_function(TileDevice *dev, void *mod, const char *name, void **fn) {
    DevStatus st = cur(dev);
    if (st) return st;
    CUfunction f = NULL;
    CUresult r = cuda()->ModuleGetFunction(&f, mod, name);
    if (r != CUDA_SUCCESS) {
        cuda_fail(dev, r, "cuModuleGetFunction");
        return dev_fail(dev, DEV_ERR_NOT_FOUND, "cuda: the module has no kernel named '%s' (%s)", name, dev_last_error(dev));
    }
    /* A block has 48 KiB of shared memory, static and dynamic together, unless the function opts in to more
     * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, at most the device's opt-in limit less its static shared
     * memory).  Opted in once here, to all the device allows: a launch then needs no driver call for it, and two
     * threads launching the function with different sizes cannot lower it under each other. */
    CudaDev *c = dev->impl;
    int static_bytes = 0;
    CALL(dev, cuda()->FuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), "cuFuncGetAttribute");
    if (c->smem_optin > (int)default_smem_per_block() && static_bytes < c->smem_optin)
        CALL(dev, cuda()->FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, c->smem_optin - static_bytes),
             "cuFuncSetAttribute");
    *fn = f;
    return DEV_OK;
}

/* cuLaunchKernelEx's configuration (CUDA 12), as cuda.h lays it out. */
enum { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
       CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef struct CuLaunchAttribute {
    int id;
    char pad[4];
    union {
        char bytes[64];
        void *align; /* the union is 8-byte aligned in cuda.h */
        int programmatic_stream_serialization_allowed;
        int cooperative;
        struct { unsigned x, y, z; } cluster_dim;
    } value;
} CuLaunchAttribute;
typedef struct CuLaunchConfig {
    unsigned grid[3], block[3], shared_bytes;
    CUstream stream;
    CuLaunchAttribute *attrs;
    unsigned nattrs;
} CuLaunchConfig;
typedef CUresult (*LaunchKernelExFn)(const CuLaunchConfig *config, CUfunction f, void **params, void **extra);

static DevStatus cuda_launch(TileDevice *dev, void *fn, const unsigned grid[3], const unsigned block[3], unsigned smem,
                             void *stream, void **params, unsigned flags, const unsigned *cluster) {
    DevStatus st = cur(dev);
    if (st) return st;
    CudaDev *c = dev->impl;
    /* a driver that does not say its opt-in limit: opt in to what this launch asks past the default (cuda_get_function) */
    if (!c->smem_optin && smem > default_smem_per_block())
        CALL(dev, cuda()->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem), "cuFuncSetAttribute");
    /* past the GPU's limit the launch is the caller's invalid value, as on the emulator, not a driver failure (only a
     * launch past the default 48 KiB can be: static shared memory is at most 48 KiB) */
    int static_bytes = 0;
    if (c->smem_optin && smem > default_smem_per_block() &&
        cuda()->FuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn) == CUDA_SUCCESS &&
        (uint64_t)static_bytes + smem > (uint64_t)c->smem_optin)
        return dev_fail(dev, DEV_ERR_INVALID, "cuda: %d bytes of static and %u of dynamic shared memory exceed the %d a block may use "
                        "on this GPU", static_bytes, smem, c->smem_optin);
    /* clusters of more than one CTA need a 9.0 GPU: the caller's invalid value, as on the emulator, not the driver's refusal */
    if (cluster && (uint64_t)cluster[0] * cluster[1] * cluster[2] > 1 && dev->cc && dev->cc < 90)
        return dev_fail(dev, DEV_ERR_INVALID, "cuda: clusters of %u x %u x %u CTAs need a GPU of compute capability 9.0 or later (this "
                        "one is %d.%d)", cluster[0], cluster[1], cluster[2], dev->cc / 10, dev->cc % 10);
    if ((flags & (DEV_LAUNCH_PDL | DEV_LAUNCH_COOPERATIVE)) || cluster) {
        LaunchKernelExFn ex = (LaunchKernelExFn)cuda()->launch_kernel_ex;
        if (!ex)
            return dev_fail(dev, DEV_ERR_UNSUPPORTED, "cuda: %s needs cuLaunchKernelEx (a CUDA 12 driver)",
                            cluster ? "a cluster launch" : flags & DEV_LAUNCH_PDL ? "programmatic dependent launch" : "a cooperative launch");
        CuLaunchAttribute attrs[3];
        unsigned n = 0;
        memset(attrs, 0, sizeof attrs);
        if (flags & DEV_LAUNCH_PDL) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attrs[n++].value.programmatic_stream_serialization_allowed = 1;
        }
        if (flags & DEV_LAUNCH_COOPERATIVE) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            attrs[n++].value.cooperative = 1;
        }
        if (cluster) {
            /* past the portable size (sm_90 runs up to 16), the function must allow it first */
            if ((uint64_t)cluster[0] * cluster[1] * cluster[2] > CUDA_PORTABLE_CLUSTER)
                CALL(dev, cuda()->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), "cuFuncSetAttribute");
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attrs[n].value.cluster_dim.x = cluster[0], attrs[n].value.cluster_dim.y = cluster[1], attrs[n].value.cluster_dim.z = cluster[2];
            n++;
        }
        CuLaunchConfig cfg = {{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, smem, stream, attrs, n};
        CALL(dev, ex(&cfg, fn, params, NULL), "cuLaunchKernelEx");
        return DEV_OK;
    }
    CALL(dev, cuda()->LaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, params, NULL),
         "cuLaunchKernel");
    return DEV_OK;
}

static DevStatus cuda_synchronize(TileDevice *dev) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->CtxSynchronize(), "cuCtxSynchronize");
    return DEV_OK;
}

/* ---- streams and events ----
 * Streams are created with CU_STREAM_DEFAULT (blocking): work on the NULL
 * stream, which is what the synchronous calls above use, waits for them and
 * they wait for it, so mixing both keeps program order.  Events keep
 * timing enabled (CU_EVENT_DEFAULT) for cuEventElapsedTime. */
static DevStatus cuda_stream_create(TileDevice *dev, void **stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    CUstream s = NULL;
    CALL(dev, cuda()->StreamCreate(&s, CU_STREAM_DEFAULT), "cuStreamCreate");
    *stream = s;
    return DEV_OK;
}

static DevStatus cuda_stream_destroy(TileDevice *dev, void *stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->StreamDestroy(stream), "cuStreamDestroy_v2");
    return DEV_OK;
}

static DevStatus cuda_stream_synchronize(TileDevice *dev, void *stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->StreamSynchronize(stream), "cuStreamSynchronize");
    return DEV_OK;
}

static DevStatus cuda_stream_wait_event(TileDevice *dev, void *stream, void *event) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->StreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
    return DEV_OK;
}

static DevStatus cuda_event_create(TileDevice *dev, void **event) {
    DevStatus st = cur(dev);
    if (st) return st;
    CUevent e = NULL;
    CALL(dev, cuda()->EventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    *event = e;
    return DEV_OK;
}

static DevStatus cuda_event_destroy(TileDevice *dev, void *event) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->EventDestroy(event), "cuEventDestroy_v2");
    return DEV_OK;
}

static DevStatus cuda_event_record(TileDevice *dev, void *event, void *stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->EventRecord(event, stream), "cuEventRecord");
    return DEV_OK;
}

static DevStatus cuda_event_synchronize(TileDevice *dev, void *event) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->EventSynchronize(event), "cuEventSynchronize");
    return DEV_OK;
}

static DevStatus cuda_event_elapsed_ms(TileDevice *dev, void *start, void *end, float *ms) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->EventElapsedTime(ms, start, end), "cuEventElapsedTime");
    return DEV_OK;
}

static DevStatus cuda_htod_async(TileDevice *dev, uint64_t dst, const void *src, size_t bytes, void *stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->MemcpyHtoDAsync(dst, src, bytes, stream), "cuMemcpyHtoDAsync_v2");
    return DEV_OK;
}

static DevStatus cuda_dtoh_async(TileDevice *dev, void *dst, uint64_t src, size_t bytes, void *stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->MemcpyDtoHAsync(dst, src, bytes, stream), "cuMemcpyDtoHAsync_v2");
    return DEV_OK;
}

static DevStatus cuda_memset8_async(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes, void *stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    CALL(dev, cuda()->MemsetD8Async(dst, value, bytes, stream), "cuMemsetD8Async");
    return DEV_OK;
}

static DevStatus cuda_memset2d8_async(TileDevice *dev, uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t rows, void *stream) {
    DevStatus st = cur(dev);
    if (st) return st;
    if (!cuda()->memset_d2d8_async) {
        for (size_t r = 0; r < rows; r++) CALL(dev, cuda()->MemsetD8Async(dst + r * pitch, value, width, stream), "cuMemsetD8Async");
        return DEV_OK;
    }
    CALL(dev, cuda()->memset_d2d8_async(dst, pitch, value, width, rows, stream), "cuMemsetD2D8Async");
    return DEV_OK;
}

/* Memory of this context that another allocator made (the CUDA runtime, PyTorch, the engine's own),
 * and the allocation it lies in when the driver can say. */
static bool cuda_pointer_usable(TileDevice *dev, uint64_t p, DevRange *range) {
    CudaDev *c = dev->impl;
    CUcontext owner = NULL;
    if (cuda()->PointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)p) != CUDA_SUCCESS || owner != c->ctx)
        return false;
    CUdeviceptr base = 0;
    size_t size = 0;
    if (cuda()->PointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)p) == CUDA_SUCCESS &&
        cuda()->PointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)p) == CUDA_SUCCESS && base <= p &&
        p - base < size)
        *range = (DevRange){base, size};
    return true;
}

/* The host ranges this process's tile contexts registered with the driver, and how many tile registrations use
 * each.  Process-wide as the driver's registrations are (per CUDA context, and tile contexts on one GPU share its
 * primary context); its lock is held across the driver calls, so a second registration of a range sees the first
 * one's entry.  Ranges of one CUDA context never overlap (the driver refuses that). */
typedef struct CudaHostReg {
    CUcontext ctx;
    uint8_t *base;
    size_t bytes;
    unsigned refs;
} CudaHostReg;
static struct {
    pthread_mutex_t lock;
    CudaHostReg *v;
    int n, cap;
} host_regs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/* Our registration of ctx holding host, or -1. */
static int host_reg_find(CUcontext ctx, const uint8_t *host) {
    for (int i = 0; i < host_regs.n; i++)
        if (host_regs.v[i].ctx == ctx && host >= host_regs.v[i].base && host < host_regs.v[i].base + host_regs.v[i].bytes) return i;
    return -1;
}

static DevStatus register_locked(TileDevice *dev, CUcontext ctx, uint8_t *host, size_t bytes, uint64_t *dptr) {
    if (host_regs.n == host_regs.cap) {
        int cap = host_regs.cap ? 2 * host_regs.cap : 8;
        CudaHostReg *v = realloc(host_regs.v, sizeof *v * (size_t)cap);
        if (!v) return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "cuda: out of host memory");
        host_regs.v = v, host_regs.cap = cap;
    }
    CUresult r = cuda()->MemHostRegister(host, bytes, CU_MEMHOSTREGISTER_DEVICEMAP);
    CUdeviceptr d = 0, last = 0;
    if (r == CUDA_SUCCESS) {
        CUresult g = cuda()->MemHostGetDevicePointer(&d, host, 0);
        if (g != CUDA_SUCCESS) {
            cuda()->MemHostUnregister(host);
            return cuda_fail(dev, g, "cuMemHostGetDevicePointer_v2");
        }
        host_regs.v[host_regs.n++] = (CudaHostReg){ctx, host, bytes, 1};
        *dptr = d;
        return DEV_OK;
    }
    if (r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) return cuda_fail(dev, r, "cuMemHostRegister_v2");
    /* Page-locked already: usable when one mapping covers the whole range, its first and last bytes mapped
     * bytes - 1 apart (a range half in a registration and half pageable is still the driver's error). */
    if (cuda()->MemHostGetDevicePointer(&d, host, 0) != CUDA_SUCCESS ||
        cuda()->MemHostGetDevicePointer(&last, host + bytes - 1, 0) != CUDA_SUCCESS || last - d != bytes - 1)
        return cuda_fail(dev, r, "cuMemHostRegister_v2 (the range is only partly page-locked)");
    int i = host_reg_find(ctx, host);
    if (i >= 0 && host + bytes > host_regs.v[i].base + host_regs.v[i].bytes)
        return cuda_fail(dev, r, "cuMemHostRegister_v2 (the range runs past another tile context's registration)");
    if (i >= 0) host_regs.v[i].refs++; /* another tile context's registration */
    /* else the caller's page-locked memory: never unregistered here */
    *dptr = d;
    return DEV_OK;
}

static DevStatus cuda_register_host(TileDevice *dev, void *host, size_t bytes, uint64_t *dptr) {
    DevStatus st = cur(dev);
    if (st) return st;
    pthread_mutex_lock(&host_regs.lock);
    st = register_locked(dev, ((CudaDev *)dev->impl)->ctx, host, bytes, dptr);
    pthread_mutex_unlock(&host_regs.lock);
    return st;
}

/* Unregistered when this was the last tile registration using our registration; the caller's pinned memory is
 * left as it is. */
static DevStatus cuda_unregister_host(TileDevice *dev, void *host, uint64_t dptr) {
    (void)dptr;
    DevStatus st = cur(dev);
    if (st) return st;
    pthread_mutex_lock(&host_regs.lock);
    int i = host_reg_find(((CudaDev *)dev->impl)->ctx, host);
    void *base = NULL;
    if (i >= 0 && --host_regs.v[i].refs == 0) {
        base = host_regs.v[i].base;
        host_regs.v[i] = host_regs.v[--host_regs.n];
    }
    CUresult r = base ? cuda()->MemHostUnregister(base) : CUDA_SUCCESS;
    pthread_mutex_unlock(&host_regs.lock);
    if (r != CUDA_SUCCESS) return cuda_fail(dev, r, "cuMemHostUnregister");
    return DEV_OK;
}

/* A tiled or im2col tensor map: no interleave, no L2 promotion, zero (or NaN) fill out of bounds. */
static DevStatus cuda_tensor_map_encode(TileDevice *dev, const DevTensorMap *tm, void *out) {
    if (!(tm->im2col ? (void *)cuda()->tensor_map_encode_im2col : (void *)cuda()->tensor_map_encode_tiled))
        return dev_fail(dev, DEV_ERR_UNSUPPORTED, "cuda: the driver has no %s (CUDA 12 or later needed)",
                        tm->im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled");
    unsigned long long dims[5], strides[4];
    for (unsigned d = 0; d < 5; d++) dims[d] = tm->dims[d];
    for (unsigned d = 0; d < 4; d++) strides[d] = tm->strides[d];
    if (tm->im2col) {
        int lower[3], upper[3];
        for (unsigned k = 0; k < 3; k++) lower[k] = tm->lower[k], upper[k] = tm->upper[k];
        CALL(dev, cuda()->tensor_map_encode_im2col(out, (int)tm->dtype, tm->rank, (void *)(uintptr_t)tm->addr, dims, strides, lower, upper,
                                                  tm->channels, tm->pixels, tm->elem_strides, 0, (int)tm->swizzle, 0, (int)tm->fill),
             "cuTensorMapEncodeIm2col");
        return DEV_OK;
    }
    CALL(dev, cuda()->tensor_map_encode_tiled(out, (int)tm->dtype, tm->rank, (void *)(uintptr_t)tm->addr, dims, strides, tm->box,
                                             tm->elem_strides, 0, (int)tm->swizzle, 0, (int)tm->fill),
         "cuTensorMapEncodeTiled");
    return DEV_OK;
}

/* The caller's CUstream: usable when it belongs to this context. */
static DevStatus cuda_stream_check_native(TileDevice *dev, void *stream) {
    CudaDev *c = dev->impl;
    DevStatus st = cur(dev);
    if (st) return st;
    CUcontext owner = NULL;
    CALL(dev, cuda()->StreamGetCtx(stream, &owner), "cuStreamGetCtx");
    if (owner != c->ctx) return dev_fail(dev, DEV_ERR_INVALID, "cuda: the stream belongs to another CUDA context");
    return DEV_OK;
}

const DevBackendOps dev_cuda_ops = {
    .name = "cuda",
    .model = cuda_model,
    .open = cuda_open,
    .close = cuda_close,
    .malloc = cuda_malloc,
    .free = cuda_free,
    .htod = cuda_htod,
    .dtoh = cuda_dtoh,
    .memset8 = cuda_memset8,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_load_image = cuda_module_load_image,
    .param_sizes = cuda_param_sizes,
    .get_function = cuda_get_function,
    .launch = cuda_launch,
    .synchronize = cuda_synchronize,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_synchronize = cuda_stream_synchronize,
    .stream_wait_event = cuda_stream_wait_event,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_synchronize = cuda_event_synchronize,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .htod_async = cuda_htod_async,
    .dtoh_async = cuda_dtoh_async,
    .memset8_async = cuda_memset8_async,
    .memset2d8_async = cuda_memset2d8_async,
    .pointer_usable = cuda_pointer_usable,
    .register_host = cuda_register_host,
    .unregister_host = cuda_unregister_host,
    .open_native = cuda_open_native,
    .stream_check_native = cuda_stream_check_native,
    .tensor_map_encode = cuda_tensor_map_encode,
};

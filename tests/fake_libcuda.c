/* fake_libcuda.c - a stand-in CUDA driver for test_driver_errors: built as libcuda.so.1 (its soname) and linked into
 * that test program only, so the runtime's dlopen("libcuda.so.1") (runtime/device_cuda.c) finds this already-loaded
 * library instead of a real driver, on a machine with a GPU or without one.  Nothing else links it.
 *
 * One device, "Fake GPU", compute capability 8.0 with 4 SMs; memory is host memory (a device pointer is a malloc'd
 * address), copies and memsets work, everything else succeeds without doing anything.  cuModuleLoadDataEx answers
 * what the test asked with fake_cuda_set_module_load (a CUresult and a JIT log written into the caller's log
 * buffer) and counts its calls; a module it loads keeps its PTX, and cuModuleGetFunction finds the entries that PTX
 * declares (CUDA_ERROR_NOT_FOUND for any other name).  Launches run nothing: fake_cuda_set_fault(r) stands for a
 * kernel that faulted, the driver's sticky error r that the synchronizing calls (cuCtxSynchronize,
 * cuStreamSynchronize, cuEventSynchronize, cuMemcpyDtoH) and the next launches return until the test sets 0 again;
 * fake_cuda_set_launch_result(r) a driver refusing the launches themselves.
 * Entry points are the versioned symbols device_cuda.c asks for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define EXPORT __attribute__((visibility("default")))

static CUresult load_result;
static char load_log[1024];
static int load_calls;
static int ctx_token;
static CUresult fault; /* the sticky error of a kernel's fault; 0: none */
static CUresult launch_result; /* what launches return (a refusal) when there is no fault */

/* A loaded module: its PTX, for cuModuleGetFunction. */
typedef struct FakeModule {
    char *ptx;
} FakeModule;

/* What the next cuModuleLoadDataEx calls return and write to the JIT error log (NULL: nothing). */
EXPORT void fake_cuda_set_module_load(CUresult r, const char *log) {
    load_result = r;
    snprintf(load_log, sizeof load_log, "%s", log ? log : "");
}

EXPORT int fake_cuda_module_load_calls(void) { return load_calls; }

/* From now on the synchronizing calls and launches return r (a kernel's fault: CUDA_ERROR_ILLEGAL_ADDRESS ...); 0 ends it. */
EXPORT void fake_cuda_set_fault(CUresult r) { fault = r; }
/* From now on launches are refused with r (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ...), not sticky; 0 ends it. */
EXPORT void fake_cuda_set_launch_result(CUresult r) { launch_result = r; }

EXPORT CUresult cuInit(unsigned flags) { return 0; }
EXPORT CUresult cuDeviceGetCount(int *count) { return *count = 1, 0; }
EXPORT CUresult cuDeviceGet(int *dev, int ordinal) { return ordinal == 0 ? (*dev = 0, 0) : 101; /* INVALID_DEVICE */ }
EXPORT CUresult cuDeviceGetName(char *name, int len, int dev) { return snprintf(name, (size_t)len, "Fake GPU"), 0; }
EXPORT CUresult cuDeviceGetAttribute(int *value, int attrib, int dev) {
    *value = attrib == 16 ? 4 : attrib == 75 ? 8 : 0; /* multiprocessors, compute capability major, minor */
    return 0;
}
EXPORT CUresult cuDriverGetVersion(int *version) { return *version = 12040, 0; }
EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { return *ctx = &ctx_token, 0; }
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
EXPORT CUresult cuCtxSetCurrent(void *ctx) { return 0; }
EXPORT CUresult cuCtxSynchronize(void) { return fault; }
EXPORT CUresult cuCtxPushCurrent_v2(void *ctx) { return 0; }
EXPORT CUresult cuCtxPopCurrent_v2(void **ctx) { return *ctx = &ctx_token, 0; }
EXPORT CUresult cuCtxGetDevice(int *dev) { return *dev = 0, 0; }
EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) { return 0; }
EXPORT CUresult cuMemHostUnregister(void *p) { return 0; }
EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) { return *d = (uintptr_t)p, 0; }
EXPORT CUresult cuStreamGetCtx(void *s, void **ctx) { return *ctx = &ctx_token, 0; }
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    void *m = malloc(bytes ? bytes : 1);
    if (!m) return 2; /* OUT_OF_MEMORY */
    *p = (uintptr_t)m;
    return 0;
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr p) { return free((void *)(uintptr_t)p), 0; }
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) { return memcpy((void *)(uintptr_t)dst, src, bytes), 0; }
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
    return fault ? fault : (memcpy(dst, (void *)(uintptr_t)src, bytes), 0);
}
EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n) { return memset((void *)(uintptr_t)dst, v, n), 0; }
EXPORT CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
    load_calls++;
    if (load_result) {
        char *buf = NULL;
        size_t cap = 0;
        for (unsigned i = 0; i < n; i++) { /* CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */
            if (opts[i] == 5) buf = vals[i];
            if (opts[i] == 6) cap = (size_t)(uintptr_t)vals[i];
        }
        if (buf && cap) snprintf(buf, cap, "%s", load_log);
        return load_result;
    }
    FakeModule *fm = calloc(1, sizeof *fm);
    if (!fm || !(fm->ptx = strdup(image))) return free(fm), 2; /* OUT_OF_MEMORY */
    return *m = fm, 0;
}
EXPORT CUresult cuModuleUnload(void *m) {
    FakeModule *fm = m;
    free(fm->ptx);
    free(fm);
    return 0;
}
/* A function is the address of its name after ".entry " in the module's PTX. */
EXPORT CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    size_t n = strlen(name);
    for (const char *p = ((FakeModule *)m)->ptx; (p = strstr(p, ".entry ")); p++)
        if (!strncmp(p + 7, name, n) && (p[7 + n] == '(' || p[7 + n] == ' ' || p[7 + n] == '\n')) return *f = (void *)(p + 7), 0;
    return 500; /* NOT_FOUND */
}
EXPORT CUresult cuFuncSetAttribute(void *f, int attr, int value) { return 0; }
EXPORT CUresult cuFuncGetAttribute(int *value, int attr, void *f) { return *value = 0, 0; }
EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned smem, void *s, void **params, void **extra) {
    return fault ? fault : launch_result;
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, void *s) { return cuMemcpyHtoD_v2(dst, src, bytes); }
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, void *s) { return cuMemcpyDtoH_v2(dst, src, bytes); }
EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void *s) { return cuMemsetD8_v2(dst, v, n); }
EXPORT CUresult cuStreamCreate(void **s, unsigned flags) { return *s = &ctx_token, 0; }
EXPORT CUresult cuStreamDestroy_v2(void *s) { return 0; }
EXPORT CUresult cuStreamSynchronize(void *s) { return fault; }
EXPORT CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) { return 0; }
EXPORT CUresult cuEventCreate(void **e, unsigned flags) { return *e = &ctx_token, 0; }
EXPORT CUresult cuEventDestroy_v2(void *e) { return 0; }
EXPORT CUresult cuEventRecord(void *e, void *s) { return 0; }
EXPORT CUresult cuEventSynchronize(void *e) { return fault; }
EXPORT CUresult cuEventElapsedTime(float *ms, void *start, void *end) { return *ms = 0, 0; }
EXPORT CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p) { return 1; /* INVALID_VALUE */ }

EXPORT CUresult cuGetErrorName(CUresult r, const char **s) {
    *s = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : r == 218 ? "CUDA_ERROR_INVALID_PTX" : r == 222 ? "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
       : r == 500 ? "CUDA_ERROR_NOT_FOUND" : r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : r == 701 ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
       : r == 716 ? "CUDA_ERROR_MISALIGNED_ADDRESS"
       : r == 999 ? "CUDA_ERROR_UNKNOWN" : "CUDA_ERROR_INVALID_VALUE";
    return 0;
}
/* As the driver words them (what a fault's message must add to: they name no kernel) */
EXPORT CUresult cuGetErrorString(CUresult r, const char **s) {
    *s = r == 700 ? "an illegal memory access was encountered" : r == 701 ? "too many resources requested for launch"
       : r == 716 ? "misaligned address" : "fake driver error";
    return 0;
}

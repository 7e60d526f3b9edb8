/* fake_cuda_emu.c - a stand-in CUDA driver that runs kernels on the PTX emulator, for test_cuda_emu: built as
 * libcuda.so.1 (its soname) and linked into that program only, so the runtime's dlopen("libcuda.so.1")
 * (runtime/device_cuda.c) finds it and the library's "cuda" device runs real kernels on a machine without a GPU.
 * tests/fake_libcuda.c is the other stand-in (test_driver_errors: a driver that refuses on request).
 *
 * What it is: one device ("Emulated GPU"), compute capability fake_cuda_emu_set_cc (8.0 by default; 8.0, 8.6, 8.9
 * and 9.0 are what the emulator has targets for), a few SMs.  Device memory is the emulator's allocation table
 * (emu/exec_mem.c): a CUdeviceptr is an emulator address, so every copy, fill and kernel access is bounds-checked
 * against the allocation it lies in.  Registered host memory is mapped into that table in place
 * (cuMemHostGetDevicePointer gives its address there, not the host pointer: nothing may assume they are equal), and
 * so is cuMemHostAlloc's memory; cuMemHostRegister of a range overlapping either is the driver's
 * CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED.
 * cuModuleLoadDataEx parses the PTX with the emulator; cuLaunchKernel(Ex) queues the launch on its stream with a
 * copy of its parameters (sizes from the entry's .param list), and the queue runs when the CUDA programming model
 * says the work must have finished: a synchronize of the stream, its event or the context, a synchronous copy,
 * a free.  So a caller that reads results without synchronizing reads stale memory here, as on a GPU.  cuMemsetD8
 * of device memory is queued on the NULL stream too (the driver documents it asynchronous with respect to the
 * host); synchronous copies wait for the NULL stream and the blocking streams only, not for non-blocking ones.
 *
 * Streams: each created stream is a queue; the NULL stream is the legacy default stream: work on it waits for every
 * blocking stream's earlier work, and work on a blocking stream waits for the NULL stream's (CU_STREAM_NON_BLOCKING
 * streams do neither).
 * cuStreamWaitEvent makes the stream's later work wait for the event's stream up to the event's record.  Async
 * copies with pageable host memory run when they are called (after their stream's earlier work), as the driver
 * stages them; with registered host memory they are queued.  Kernel faults (memcheck, traps) become the sticky
 * context error (CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED) that every later call returns, with the
 * emulator's report in fake_cuda_emu_last_report().
 *
 * Strict where the driver is: every call checks what the CUDA Driver API documents it refuses (a current context,
 * live handles, ranges inside allocations, launch dimensions, dynamic shared memory against
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cluster shapes, every documented rule of cuTensorMapEncodeTiled
 * and cuTensorMapEncodeIm2col) and returns its CUresult; fake_cuda_emu_refusals() counts the refusals and
 * fake_cuda_emu_last_refusal() says the last one.  fake_cuda_emu_capture_breaking() counts the calls a stream capture (a CUDA
 * graph) could not hold, so a test can show a prepared call makes none.  Tensor maps are encoded in the emulator's format
 * (emu_tensor_map_encode), which its cp.async.bulk.tensor reads from the kernel's __grid_constant__ parameter.
 *
 * Why it cannot deadlock with the runtime: this library contains its own copy of the emulator (the support,
 * runtime and emulator objects are linked into it with hidden visibility, and only the cu* and fake_cuda_emu_*
 * symbols are exported: fake_cuda_emu.map), so nothing here shares state or a lock with the runtime that calls it,
 * and nothing here calls back into the caller.  Its one mutex (the driver's state) is taken by each entry point
 * and never held while calling out.  Not a GPU: no timing, no concurrency between streams, no hardware
 * behaviour beyond the emulator's. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/emu.h"
#include "runtime/rt.h"
#include "support/target.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define EXPORT __attribute__((visibility("default")))

enum {
    CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_INVALID_CONTEXT = 201, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713, CUDA_ERROR_INVALID_PTX = 218, CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_NOT_FOUND = 500, CUDA_ERROR_NOT_READY = 600, CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701, CUDA_ERROR_LAUNCH_FAILED = 719, CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_INVALID_CLUSTER_SIZE = 912, CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
};

/* ---- the driver's state: one device, one primary context ---- */
typedef struct Work Work;
typedef struct Stream {
    Work *head, *tail;
    uint64_t next_seq, done_seq; /* work items are numbered per stream; done_seq: the last one run */
    bool nonblocking;            /* CU_STREAM_NON_BLOCKING: no ordering with the NULL stream */
} Stream;
typedef struct Event {
    Stream *stream; /* the stream of its last record, NULL when never recorded */
    uint64_t seq;   /* that record's number there */
    bool done;
    uint64_t ns;    /* CLOCK_MONOTONIC when the record ran */
} Event;
typedef struct Func {
    EmuModule *m;
    EmuFunc *f;
    int max_dyn;          /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    bool non_portable;    /* CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED */
} Func;
typedef struct Module {
    EmuModule *m;
    Func **funcs;
    unsigned nfuncs;
} Module;
typedef struct HostReg {
    uint8_t *host;
    size_t bytes;
    uint64_t dptr;
    bool alloc; /* cuMemHostAlloc's: cuMemFreeHost frees it, cuMemHostUnregister refuses it */
} HostReg;

enum WorkKind { W_LAUNCH, W_HTOD, W_DTOH, W_MEMSET, W_RECORD, W_WAIT };
struct Work {
    enum WorkKind kind;
    uint64_t seq;
    Work *next;
    /* launch */
    Func *fn;
    unsigned grid[3], block[3], smem, cluster[3];
    bool cooperative;
    void **params;
    uint8_t *blob;
    /* copies and fills */
    uint64_t dptr;
    uint8_t *host;
    size_t bytes;
    uint8_t value;
    size_t pitch, rows; /* a 2-D fill: rows of bytes, pitch apart (rows 0: one row) */
    /* record, wait */
    Event *event;
    Stream *wait_stream;
    uint64_t wait_seq;
};

/* The handle registry: what was created and not yet destroyed, so a stale or foreign handle is refused. */
typedef struct Handles {
    void **v;
    unsigned n, cap;
} Handles;

static struct {
    pthread_mutex_t lock;
    int cc, driver_version, sms;
    const Target *target; /* the emulated GPU: target_for_cc(cc) */
    bool initialized;
    int retained;         /* primary context references */
    EmuMem mem;
    EmuBufs *bufs;
    Stream null_stream;
    Handles streams, events, modules, funcs, allocs; /* allocs: cuMemAlloc's addresses (uint64_t as void *) */
    HostReg *regs;
    unsigned nregs, capregs;
    CUresult sticky;      /* a kernel's fault: every later call returns it */
    char report[4096];
    char refusal[512];
    int refusals;
    int launches;
    int tensor_maps;      /* maps encoded */
    int capture_breaking; /* calls a stream capture (a CUDA graph) cannot hold: allocations, frees, module loads,
                           * synchronous copies and fills, synchronizations, host registrations */
    bool quiet;           /* refusals and kernel faults not said on stderr (a test that provokes them) */
    struct Sass {         /* fake_cuda_emu_register_cubin: a cubin's bytes and the PTX it was assembled from */
        unsigned char *cubin;
        size_t size;
        char *ptx;
    } sass[8];
    int nsass;
} D = {.lock = PTHREAD_MUTEX_INITIALIZER, .cc = 80, .driver_version = 12080, .sms = 4};

static int ctx_token;
static __thread void *current_ctx;
static __thread void *ctx_stack[16]; /* cuCtxPushCurrent's: the contexts current before */
static __thread int ctx_depth;

/* ---- what the test sets and reads ---- */
/* Compute capability major * 10 + minor of the device (80 by default); before the first context is made. */
EXPORT void fake_cuda_emu_set_cc(int cc) { D.cc = cc; D.target = NULL; }
/* The version cuDriverGetVersion reports (12080 by default): what PTX ISA versions cuModuleLoadDataEx takes. */
EXPORT void fake_cuda_emu_set_driver_version(int v) { D.driver_version = v; }
EXPORT void fake_cuda_emu_set_quiet(int quiet) { D.quiet = quiet; }
/* The machine code of cubin (size bytes) is what ptx says: cuModuleLoadDataEx of exactly those bytes runs that PTX
 * on the emulator, standing in for the SASS (any other cubin is a GPU binary this device has not).  At most 8. */
EXPORT void fake_cuda_emu_register_cubin(const void *cubin, size_t size, const char *ptx) {
    pthread_mutex_lock(&D.lock);
    if (D.nsass < 8 && (D.sass[D.nsass].cubin = malloc(size)) && (D.sass[D.nsass].ptx = strdup(ptx))) {
        memcpy(D.sass[D.nsass].cubin, cubin, size);
        D.sass[D.nsass++].size = size;
    }
    pthread_mutex_unlock(&D.lock);
}
EXPORT int fake_cuda_emu_refusals(void) { return D.refusals; }
EXPORT const char *fake_cuda_emu_last_refusal(void) { return D.refusal; }
EXPORT const char *fake_cuda_emu_last_report(void) { return D.report; }
EXPORT int fake_cuda_emu_launches(void) { return D.launches; }
EXPORT int fake_cuda_emu_tensor_maps(void) { return D.tensor_maps; }
EXPORT int fake_cuda_emu_capture_breaking(void) { return D.capture_breaking; }
/* What is alive: allocations, modules, streams, events, host registrations, primary context references
 * (a leak check: each comes back to where it was once everything the caller made is gone). */
EXPORT void fake_cuda_emu_live(int out[6]) {
    pthread_mutex_lock(&D.lock);
    out[0] = (int)D.allocs.n, out[1] = (int)D.modules.n, out[2] = (int)D.streams.n, out[3] = (int)D.events.n;
    out[4] = (int)D.nregs, out[5] = D.retained;
    pthread_mutex_unlock(&D.lock);
}

/* A refusal: counted, said on stderr (a test that expected none shows why), and returned. */
static CUresult refuse(CUresult r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(D.refusal, sizeof D.refusal, fmt, ap);
    va_end(ap);
    D.refusals++;
    if (!D.quiet) fprintf(stderr, "fake_cuda_emu: refused (CUresult %d): %s\n", r, D.refusal);
    return r;
}

static bool handles_has(const Handles *h, const void *p) {
    for (unsigned i = 0; i < h->n; i++)
        if (h->v[i] == p) return true;
    return false;
}
static bool handles_add(Handles *h, void *p) {
    if (h->n == h->cap) {
        unsigned cap = h->cap ? 2 * h->cap : 16;
        void **v = realloc(h->v, cap * sizeof *v);
        if (!v) return false;
        h->v = v, h->cap = cap;
    }
    h->v[h->n++] = p;
    return true;
}
static void handles_remove(Handles *h, const void *p) {
    for (unsigned i = 0; i < h->n; i++)
        if (h->v[i] == p) {
            h->v[i] = h->v[--h->n];
            return;
        }
}

/* Every entry point that needs the driver initialised and a current context: the lock is held after it. */
#define ENTER_CTX()                                                                                      \
    pthread_mutex_lock(&D.lock);                                                                         \
    if (!D.initialized) return unlock(refuse(CUDA_ERROR_NOT_INITIALIZED, "%s before cuInit", __func__));  \
    if (current_ctx != &ctx_token || D.retained <= 0)                                                    \
        return unlock(refuse(CUDA_ERROR_INVALID_CONTEXT, "%s with no current context", __func__));       \
    if (D.sticky) return unlock(D.sticky)

static CUresult unlock(CUresult r) {
    pthread_mutex_unlock(&D.lock);
    return r;
}

/* ---- running queued work ---- */
static bool stream_ok(const Stream *s) { return s == &D.null_stream || handles_has(&D.streams, s); }
static void stream_run(Stream *s, uint64_t until);

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void work_free(Work *w) {
    free(w->params);
    free(w->blob);
    free(w);
}

static void run_one(Work *w) {
    if (D.sticky) return; /* a faulted context runs nothing more */
    switch (w->kind) {
    case W_LAUNCH: {
        EmuOptions o = {.host_threads = 1, .timeout_seconds = 120, .device = D.target, .bufs = D.bufs, .cooperative = w->cooperative};
        memcpy(o.cluster, w->cluster, sizeof o.cluster);
        EmuLaunchStats st = {0};
        char *err = NULL;
        D.launches++;
        if (!emu_launch(w->fn->m, w->fn->f, w->grid, w->block, w->smem, w->params, &o, &st, &err)) {
            D.sticky = err && (!strncmp(err, "memcheck", 8) || !strncmp(err, "racecheck", 9)) ? CUDA_ERROR_ILLEGAL_ADDRESS
                                                                                             : CUDA_ERROR_LAUNCH_FAILED;
            snprintf(D.report, sizeof D.report, "%s: %s", w->fn->f->name, err ? err : "out of host memory");
            if (!D.quiet) fprintf(stderr, "fake_cuda_emu: kernel %s\n", D.report);
        }
        free(err);
        break;
    }
    case W_HTOD: memmove(emu_mem_host(&D.mem, w->dptr, w->bytes), w->host, w->bytes); break;
    case W_DTOH: memmove(w->host, emu_mem_host(&D.mem, w->dptr, w->bytes), w->bytes); break;
    case W_MEMSET:
        for (size_t r = 0; r < (w->rows ? w->rows : 1); r++) memset(emu_mem_host(&D.mem, w->dptr + r * w->pitch, w->bytes), w->value, w->bytes);
        break;
    case W_RECORD:
        if (w->event) w->event->done = true, w->event->ns = now_ns();
        break;
    case W_WAIT:
        if (w->wait_stream) stream_run(w->wait_stream, w->wait_seq);
        break;
    }
}

/* Run s's queued work up to number `until` (UINT64_MAX: all of it). */
static void stream_run(Stream *s, uint64_t until) {
    while (s->head && s->head->seq <= until) {
        Work *w = s->head;
        s->head = w->next;
        if (!s->head) s->tail = NULL;
        run_one(w);
        s->done_seq = w->seq;
        work_free(w);
    }
}

/* Everything queued.  Non-blocking streams first: nothing orders them with the NULL stream, and running them ahead
 * of it is the schedule that shows a caller who prepared memory on the NULL stream (a memset) for a non-blocking
 * stream's kernel without waiting. */
static void run_all(void) {
    for (unsigned i = 0; i < D.streams.n; i++)
        if (((Stream *)D.streams.v[i])->nonblocking) stream_run(D.streams.v[i], UINT64_MAX);
    stream_run(&D.null_stream, UINT64_MAX);
    for (unsigned i = 0; i < D.streams.n; i++) stream_run(D.streams.v[i], UINT64_MAX);
}

/* What a synchronous call on the legacy default stream waits for: the NULL stream's work and the blocking
 * streams' (not the non-blocking streams'). */
static void legacy_sync(void) {
    for (unsigned i = 0; i < D.streams.n; i++)
        if (!((Stream *)D.streams.v[i])->nonblocking) stream_run(D.streams.v[i], UINT64_MAX);
    stream_run(&D.null_stream, UINT64_MAX);
}

/* Queue w on s under the legacy default stream's rules: the NULL stream's work waits for every stream's earlier
 * work, a stream's work for the NULL stream's (running it now is one schedule those orders allow). */
static void enqueue(Stream *s, Work *w) {
    if (s == &D.null_stream) {
        for (unsigned i = 0; i < D.streams.n; i++)
            if (!((Stream *)D.streams.v[i])->nonblocking) stream_run(D.streams.v[i], UINT64_MAX);
    } else if (!s->nonblocking)
        stream_run(&D.null_stream, UINT64_MAX);
    w->seq = ++s->next_seq;
    if (s->tail) s->tail->next = w;
    else s->head = w;
    s->tail = w;
}

/* ---- initialisation, device, context ---- */
static const Target *device_target(void) {
    if (!D.target) D.target = target_for_cc(D.cc);
    return D.target;
}

EXPORT CUresult cuInit(unsigned flags) {
    if (flags) return refuse(CUDA_ERROR_INVALID_VALUE, "cuInit flags %u (must be 0)", flags);
    pthread_mutex_lock(&D.lock);
    if (!D.initialized) {
        emu_mem_init(&D.mem);
        D.bufs = emu_bufs_new();
        D.initialized = true;
    }
    return unlock(CUDA_SUCCESS);
}


EXPORT CUresult cuDeviceGetCount(int *count) {
    if (!D.initialized) return refuse(CUDA_ERROR_NOT_INITIALIZED, "cuDeviceGetCount before cuInit");
    if (!count) return refuse(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetCount(NULL)");
    return *count = 1, CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(int *dev, int ordinal) {
    if (!dev) return refuse(CUDA_ERROR_INVALID_VALUE, "cuDeviceGet(NULL)");
    return ordinal == 0 ? (*dev = 0, CUDA_SUCCESS) : refuse(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet of ordinal %d", ordinal);
}
EXPORT CUresult cuDeviceGetName(char *name, int len, int dev) {
    if (!name || len <= 0 || dev != 0) return refuse(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetName(%p, %d, %d)", (void *)name, len, dev);
    snprintf(name, (size_t)len, "Emulated GPU sm_%d", D.cc);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int *value, int attrib, int dev) {
    if (!value || dev != 0) return refuse(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute of device %d", dev);
    switch (attrib) {
    case 16: *value = D.sms; return CUDA_SUCCESS;    /* MULTIPROCESSOR_COUNT */
    case 75: *value = D.cc / 10; return CUDA_SUCCESS; /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = D.cc % 10; return CUDA_SUCCESS; /* COMPUTE_CAPABILITY_MINOR */
    case 97:                                          /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
        if (!device_target()) return refuse(CUDA_ERROR_INVALID_DEVICE, "compute capability %d: no emulator target", D.cc);
        *value = D.target->smem_dynamic;
        return CUDA_SUCCESS;
    }
    return refuse(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute %d: not an attribute this stand-in answers", attrib);
}
EXPORT CUresult cuDriverGetVersion(int *version) {
    if (!version) return refuse(CUDA_ERROR_INVALID_VALUE, "cuDriverGetVersion(NULL)");
    return *version = D.driver_version, CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    if (!ctx || dev != 0) return refuse(CUDA_ERROR_INVALID_VALUE, "cuDevicePrimaryCtxRetain of device %d", dev);
    if (!device_target()) return refuse(CUDA_ERROR_INVALID_DEVICE, "compute capability %d: no emulator target", D.cc);
    pthread_mutex_lock(&D.lock);
    D.retained++;
    pthread_mutex_unlock(&D.lock);
    return *ctx = &ctx_token, CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
    pthread_mutex_lock(&D.lock);
    if (dev != 0 || D.retained <= 0) return unlock(refuse(CUDA_ERROR_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease of an unretained context"));
    if (--D.retained == 0) run_all(); /* the last release destroys the context: its work finishes first */
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuCtxSetCurrent(void *ctx) {
    if (ctx && ctx != &ctx_token) return refuse(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent of a foreign context");
    current_ctx = ctx;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxPushCurrent_v2(void *ctx) {
    if (ctx != &ctx_token) return refuse(CUDA_ERROR_INVALID_CONTEXT, "cuCtxPushCurrent of a foreign context");
    if (ctx_depth == (int)(sizeof ctx_stack / sizeof *ctx_stack)) return refuse(CUDA_ERROR_INVALID_VALUE, "cuCtxPushCurrent: too deep");
    ctx_stack[ctx_depth++] = current_ctx;
    current_ctx = ctx;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxPopCurrent_v2(void **ctx) {
    if (!current_ctx) return refuse(CUDA_ERROR_INVALID_CONTEXT, "cuCtxPopCurrent with no current context");
    if (ctx) *ctx = current_ctx;
    current_ctx = ctx_depth ? ctx_stack[--ctx_depth] : NULL; /* the context current before the push */
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetDevice(int *dev) {
    if (current_ctx != &ctx_token) return refuse(CUDA_ERROR_INVALID_CONTEXT, "cuCtxGetDevice with no current context");
    return *dev = 0, CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSynchronize(void) {
    ENTER_CTX();
    D.capture_breaking++;
    run_all();
    return unlock(D.sticky);
}

/* ---- memory ---- */
/* [p, p + bytes) inside one live allocation (or registered range); bytes 0 is fine anywhere. */
static bool in_allocation(uint64_t p, size_t bytes) { return !bytes || emu_mem_host(&D.mem, p, bytes); }

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    ENTER_CTX();
    D.capture_breaking++;
    if (!p || !bytes) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc of %zu bytes", bytes));
    uint64_t a = 0;
    if (!emu_mem_alloc(&D.mem, bytes, false, &a)) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    if (!handles_add(&D.allocs, (void *)(uintptr_t)a)) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    *p = a;
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
    ENTER_CTX();
    D.capture_breaking++;
    if (!handles_has(&D.allocs, (void *)(uintptr_t)p))
        return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemFree of 0x%llx: not an allocation's start", p));
    run_all(); /* kernels queued before the free still read it */
    handles_remove(&D.allocs, (void *)(uintptr_t)p);
    emu_mem_free(&D.mem, p);
    return unlock(D.sticky);
}

static CUresult copy_check(const char *api, uint64_t dptr, const void *host, size_t bytes) {
    if (bytes && !host) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: NULL host pointer", api);
    if (!in_allocation(dptr, bytes))
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: [0x%llx, +%zu) is not inside one allocation", api, (unsigned long long)dptr, bytes);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
    ENTER_CTX();
    D.capture_breaking++;
    CUresult r = copy_check("cuMemcpyHtoD", dst, src, bytes);
    if (r) return unlock(r);
    legacy_sync(); /* then the copy, complete when the call returns (the driver may still be moving a pageable one) */
    if (bytes && !D.sticky) memmove(emu_mem_host(&D.mem, dst, bytes), src, bytes);
    return unlock(D.sticky);
}
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
    ENTER_CTX();
    D.capture_breaking++;
    CUresult r = copy_check("cuMemcpyDtoH", src, dst, bytes);
    if (r) return unlock(r);
    legacy_sync(); /* a non-blocking stream's work is not waited for */
    if (bytes && !D.sticky) memmove(dst, emu_mem_host(&D.mem, src, bytes), bytes);
    return unlock(D.sticky);
}
EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n) {
    ENTER_CTX();
    D.capture_breaking++;
    CUresult r = copy_check("cuMemsetD8", dst, "", n);
    if (r) return unlock(r);
    if (!n) return unlock(CUDA_SUCCESS);
    const EmuAlloc *a = emu_mem_find(&D.mem, dst);
    if (a && a->borrowed) { /* registered host memory: synchronous */
        legacy_sync();
        if (!D.sticky) memset(emu_mem_host(&D.mem, dst, n), v, n);
        return unlock(D.sticky);
    }
    /* device memory: asynchronous with respect to the host, in order on the legacy default stream */
    Work *w = calloc(1, sizeof *w);
    if (!w) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    *w = (Work){.kind = W_MEMSET, .dptr = dst, .bytes = n, .value = v};
    enqueue(&D.null_stream, w);
    return unlock(CUDA_SUCCESS);
}

/* Whether [p, p + bytes) of host memory lies in one registration (page-locked: its async copies are truly async). */
static bool registered(const void *p, size_t bytes) {
    for (unsigned i = 0; i < D.nregs; i++)
        if ((const uint8_t *)p >= D.regs[i].host && (const uint8_t *)p + bytes <= D.regs[i].host + D.regs[i].bytes) return true;
    return false;
}

static CUresult async_copy(const char *api, enum WorkKind kind, uint64_t dptr, void *host, size_t bytes, uint8_t value, void *s) {
    ENTER_CTX();
    Stream *st = s ? s : &D.null_stream;
    if (!stream_ok(st)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "%s on a stream that is not live", api));
    CUresult r = copy_check(api, dptr, kind == W_MEMSET ? "" : host, bytes);
    if (r) return unlock(r);
    if (!bytes) return unlock(CUDA_SUCCESS);
    Work *w = calloc(1, sizeof *w);
    if (!w) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    *w = (Work){.kind = kind, .dptr = dptr, .host = host, .bytes = bytes, .value = value};
    enqueue(st, w);
    if (kind != W_MEMSET && !registered(host, bytes)) stream_run(st, UINT64_MAX); /* pageable: staged when called */
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, void *s) {
    return async_copy("cuMemcpyHtoDAsync", W_HTOD, dst, (void *)src, bytes, 0, s);
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, void *s) {
    return async_copy("cuMemcpyDtoHAsync", W_DTOH, src, dst, bytes, 0, s);
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void *s) {
    return async_copy("cuMemsetD8Async", W_MEMSET, dst, NULL, n, v, s);
}
/* height rows of width bytes, pitch bytes apart: the bytes between rows are left as they are */
EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr dst, size_t pitch, unsigned char v, size_t width, size_t height, void *s) {
    ENTER_CTX();
    Stream *st = s ? s : &D.null_stream;
    if (!stream_ok(st)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuMemsetD2D8Async on a stream that is not live"));
    if (height > 1 && pitch < width) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemsetD2D8Async: pitch %zu < width %zu", pitch, width));
    if (!width || !height) return unlock(CUDA_SUCCESS);
    CUresult r = copy_check("cuMemsetD2D8Async", dst, "", (height - 1) * pitch + width);
    if (r) return unlock(r);
    Work *w = calloc(1, sizeof *w);
    if (!w) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    *w = (Work){.kind = W_MEMSET, .dptr = dst, .bytes = width, .value = v, .pitch = pitch, .rows = height};
    enqueue(st, w);
    return unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) {
    ENTER_CTX();
    D.capture_breaking++;
    if (!p || !bytes || (flags & ~15u)) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemHostRegister(%p, %zu, %u)", p, bytes, flags));
    for (unsigned i = 0; i < D.nregs; i++)
        if ((uint8_t *)p < D.regs[i].host + D.regs[i].bytes && (uint8_t *)p + bytes > D.regs[i].host)
            return unlock(refuse(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "cuMemHostRegister: %p overlaps a registration", p));
    if (D.nregs == D.capregs) {
        unsigned cap = D.capregs ? 2 * D.capregs : 8;
        HostReg *v = realloc(D.regs, cap * sizeof *v);
        if (!v) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
        D.regs = v, D.capregs = cap;
    }
    uint64_t d = 0;
    if (!emu_mem_map(&D.mem, p, bytes, &d)) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    D.regs[D.nregs++] = (HostReg){p, bytes, d, false};
    return unlock(CUDA_SUCCESS);
}
/* Page-locked host memory of the driver's own, mapped as a registration is (the UVA rule: every page-locked
 * allocation is mapped, DEVICEMAP or not). */
EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned flags) {
    ENTER_CTX();
    D.capture_breaking++;
    if (!pp || !bytes || (flags & ~7u)) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc(%p, %zu, %u)", (void *)pp, bytes, flags));
    if (D.nregs == D.capregs) {
        unsigned cap = D.capregs ? 2 * D.capregs : 8;
        HostReg *v = realloc(D.regs, cap * sizeof *v);
        if (!v) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
        D.regs = v, D.capregs = cap;
    }
    uint8_t *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    uint64_t d = 0;
    if (!p || !emu_mem_map(&D.mem, p, bytes, &d)) return free(p), unlock(CUDA_ERROR_OUT_OF_MEMORY);
    D.regs[D.nregs++] = (HostReg){p, bytes, d, true};
    *pp = p;
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuMemFreeHost(void *p) {
    ENTER_CTX();
    D.capture_breaking++;
    for (unsigned i = 0; i < D.nregs; i++)
        if (D.regs[i].host == p && D.regs[i].alloc) {
            run_all(); /* queued work may still use it */
            emu_mem_free(&D.mem, D.regs[i].dptr);
            free(p);
            D.regs[i] = D.regs[--D.nregs];
            return unlock(D.sticky);
        }
    return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost(%p): not memory cuMemHostAlloc returned", p));
}
EXPORT CUresult cuMemHostUnregister(void *p) {
    ENTER_CTX();
    D.capture_breaking++;
    for (unsigned i = 0; i < D.nregs; i++)
        if (D.regs[i].host == p && !D.regs[i].alloc) {
            run_all(); /* queued work may still use it */
            emu_mem_free(&D.mem, D.regs[i].dptr);
            D.regs[i] = D.regs[--D.nregs];
            return unlock(D.sticky);
        }
    return unlock(refuse(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "cuMemHostUnregister(%p): not a registration's start", p));
}
EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) {
    ENTER_CTX();
    if (!d || flags) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer flags %u (must be 0)", flags));
    for (unsigned i = 0; i < D.nregs; i++)
        if ((uint8_t *)p >= D.regs[i].host && (uint8_t *)p < D.regs[i].host + D.regs[i].bytes) {
            *d = D.regs[i].dptr + (uint64_t)((uint8_t *)p - D.regs[i].host);
            return unlock(CUDA_SUCCESS);
        }
    return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer(%p): not registered", p));
}
/* Needs no current context (unified addressing: the pointer says whose it is). */
EXPORT CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p) {
    pthread_mutex_lock(&D.lock);
    if (!D.initialized) return unlock(refuse(CUDA_ERROR_NOT_INITIALIZED, "cuPointerGetAttribute before cuInit"));
    const EmuAlloc *a = emu_mem_find(&D.mem, p);
    if (!data || !a) return unlock(CUDA_ERROR_INVALID_VALUE); /* not memory of this driver: no refusal to count */
    switch (attribute) {
    case 1: *(void **)data = &ctx_token; break;           /* CONTEXT */
    case 11: *(CUdeviceptr *)data = a->addr; break;       /* RANGE_START_ADDR */
    case 12: *(size_t *)data = (size_t)a->size; break;    /* RANGE_SIZE */
    default: return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute %d: not answered here", attribute));
    }
    return unlock(CUDA_SUCCESS);
}

/* ---- modules and functions ---- */
/* The newest PTX ISA a driver version reads (major * 10 + minor). */
static int driver_ptx_isa(int version) {
    static const int isa[][2] = {{13000, 90}, {12090, 88}, {12080, 87}, {12060, 85}, {12050, 85}, {12040, 84},
                                 {12030, 83}, {12020, 82}, {12010, 81}, {12000, 80}, {11080, 78}};
    for (size_t i = 0; i < sizeof isa / sizeof *isa; i++)
        if (version >= isa[i][0]) return isa[i][1];
    return 70;
}

EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals) {
    ENTER_CTX();
    D.capture_breaking++;
    if (!mod || !image || (n && (!opts || !vals))) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadDataEx arguments"));
    char *log = NULL;
    size_t cap = 0;
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == 5) log = vals[i];                       /* CU_JIT_ERROR_LOG_BUFFER */
        else if (opts[i] == 6) cap = (size_t)(uintptr_t)vals[i]; /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */
        else if (opts[i] < 0 || opts[i] > 30) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadDataEx option %d", opts[i]));
    }
    if (log && cap) log[0] = 0;
    /* An image (tile_module_load_cubin checked it whole): machine code cannot run here, so a cubin is a GPU's
     * binary this device has not (CUDA_ERROR_NO_BINARY_FOR_GPU, as a driver says of another GPU's cubin) unless
     * a test registered the PTX it was assembled from (fake_cuda_emu_register_cubin), which then runs; and a
     * fatbin runs from its PTX, which a driver JIT-compiles when it holds no machine code for the GPU: its
     * uncompressed PTX entry for this compute capability or older (runtime/image.c finds it). */
    const unsigned char *u = image;
    char *owned = NULL;
    if (!memcmp(u, "\x7f" "ELF", 4)) {
        /* the caller's image is as long as its headers' tables reach (tile checked it): compared that far */
        uint64_t shoff, phoff;
        memcpy(&phoff, u + 32, 8), memcpy(&shoff, u + 40, 8);
        uint64_t sh_end = shoff + (uint64_t)(u[58] | u[59] << 8) * (u[60] | u[61] << 8);
        uint64_t ph_end = phoff + (uint64_t)(u[54] | u[55] << 8) * (u[56] | u[57] << 8), extent = sh_end > ph_end ? sh_end : ph_end;
        int i = 0;
        while (i < D.nsass && (D.sass[i].size < 64 || memcmp(D.sass[i].cubin, u, 64) ||
                               memcmp(D.sass[i].cubin, u, D.sass[i].size < extent ? D.sass[i].size : (size_t)extent)))
            i++;
        if (i == D.nsass) {
            if (log && cap) snprintf(log, cap, "fake_cuda_emu: a cubin holds machine code; this stand-in runs PTX only");
            return unlock(CUDA_ERROR_NO_BINARY_FOR_GPU);
        }
        if (!(owned = strdup(D.sass[i].ptx))) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
        image = owned;
    }
    if ((uint32_t)(u[0] | u[1] << 8 | u[2] << 16 | (uint32_t)u[3] << 24) == 0xBA55ED50u) {
        uint64_t fsize;
        memcpy(&fsize, u + 8, 8);
        size_t size = (size_t)(u[6] | u[7] << 8) + (size_t)fsize; /* the header's own size and its payload's */
        int compressed = 0;
        if (!(owned = rt_image_ptx(image, size, D.cc, &compressed))) {
            if (log && cap) snprintf(log, cap, "fake_cuda_emu: the fatbin has no %sPTX for sm_%d or older", compressed ? "uncompressed " : "", D.cc);
            return unlock(CUDA_ERROR_NO_BINARY_FOR_GPU);
        }
        image = owned;
    }
    const char *ptx = image;
    const char *v = strstr(ptx, ".version");
    int maj = 0, min = 0;
    if (!v || sscanf(v, ".version %d.%d", &maj, &min) != 2) {
        if (log && cap) snprintf(log, cap, "ptxas: no .version directive");
        return free(owned), unlock(CUDA_ERROR_INVALID_PTX);
    }
    if (maj * 10 + min > driver_ptx_isa(D.driver_version)) {
        if (log && cap) snprintf(log, cap, "ptxas: PTX .version %d.%d is newer than this driver's", maj, min);
        return free(owned), unlock(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    }
    char *err = NULL;
    EmuModule *m = emu_module_parse(ptx, &D.mem, &err);
    if (!m) {
        if (log && cap) snprintf(log, cap, "%s", err ? err : "out of host memory");
        free(err);
        return free(owned), unlock(CUDA_ERROR_INVALID_PTX);
    }
    if (m->target && !target_runs_on(m->target, D.cc)) {
        if (log && cap) snprintf(log, cap, "ptxas: .target %s does not run on compute capability %d.%d", m->target->name, D.cc / 10, D.cc % 10);
        emu_module_free(m);
        return free(owned), unlock(CUDA_ERROR_INVALID_PTX);
    }
    Module *md = calloc(1, sizeof *md);
    if (!md || !handles_add(&D.modules, md)) {
        free(md);
        emu_module_free(m);
        return free(owned), unlock(CUDA_ERROR_OUT_OF_MEMORY);
    }
    md->m = m;
    *mod = md;
    return free(owned), unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuModuleUnload(void *mod) {
    ENTER_CTX();
    D.capture_breaking++;
    Module *md = mod;
    if (!handles_has(&D.modules, md)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload of a module that is not loaded"));
    run_all(); /* its queued launches run first */
    for (unsigned i = 0; i < md->nfuncs; i++) {
        handles_remove(&D.funcs, md->funcs[i]);
        free(md->funcs[i]);
    }
    free(md->funcs);
    emu_module_free(md->m);
    handles_remove(&D.modules, md);
    free(md);
    return unlock(D.sticky);
}

EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
    ENTER_CTX();
    Module *md = mod;
    if (!fn || !name || !handles_has(&D.modules, md)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction arguments"));
    EmuFunc *f = emu_module_find(md->m, name);
    if (!f || !f->is_entry) return unlock(CUDA_ERROR_NOT_FOUND);
    for (unsigned i = 0; i < md->nfuncs; i++)
        if (md->funcs[i]->f == f) return *fn = md->funcs[i], unlock(CUDA_SUCCESS);
    Func *h = calloc(1, sizeof *h);
    Func **v = realloc(md->funcs, (md->nfuncs + 1) * sizeof *v);
    if (!h || !v || !handles_add(&D.funcs, h)) {
        free(h);
        if (v) md->funcs = v;
        return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    }
    md->funcs = v;
    *h = (Func){.m = md->m, .f = f, .max_dyn = D.target->smem_static - (int)f->shared_used}; /* the 48 KiB without opting in */
    if (h->max_dyn < 0) h->max_dyn = 0;
    md->funcs[md->nfuncs++] = h;
    *fn = h;
    return unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
    ENTER_CTX();
    Func *f = fn;
    if (!handles_has(&D.funcs, f)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuFuncSetAttribute of a function that is not live"));
    switch (attr) {
    case 8: { /* MAX_DYNAMIC_SHARED_SIZE_BYTES: static + dynamic within the device's opt-in limit */
        long long most = (long long)D.target->smem_dynamic - f->f->shared_used;
        if (value < 0 || value > most)
            return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %d): %s uses %u bytes "
                                 "of static shared memory, the device allows %d in all", value, f->f->name, f->f->shared_used,
                                 D.target->smem_dynamic));
        f->max_dyn = value;
        return unlock(CUDA_SUCCESS);
    }
    case 9: /* PREFERRED_SHARED_MEMORY_CARVEOUT */
        if (value < -1 || value > 100) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "carveout %d", value));
        return unlock(CUDA_SUCCESS);
    case 14: /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED */
        if (D.cc < 90 || (value != 0 && value != 1)) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "non-portable cluster size %d", value));
        f->non_portable = value;
        return unlock(CUDA_SUCCESS);
    }
    return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute: attribute %d is not settable", attr));
}

/* CUDA 12.4: parameter index's offset and size; CUDA_ERROR_INVALID_VALUE past the last (how a caller counts them). */
EXPORT CUresult cuFuncGetParamInfo(void *fn, size_t index, size_t *offset, size_t *size) {
    ENTER_CTX();
    Func *f = fn;
    if (!handles_has(&D.funcs, f)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetParamInfo of a function that is not live"));
    if (!offset || !size || index >= f->f->nparams) return unlock(CUDA_ERROR_INVALID_VALUE);
    *offset = f->f->params[index].offset;
    *size = f->f->params[index].size;
    return unlock(CUDA_SUCCESS);
}

EXPORT CUresult cuFuncGetAttribute(int *value, int attr, void *fn) {
    ENTER_CTX();
    Func *f = fn;
    if (!value || !handles_has(&D.funcs, f)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetAttribute of a function that is not live"));
    const EmuFunc *e = f->f;
    switch (attr) {
    case 0: /* MAX_THREADS_PER_BLOCK */
        *value = e->maxntid[0] ? (int)(e->maxntid[0] * (e->maxntid[1] ? e->maxntid[1] : 1) * (e->maxntid[2] ? e->maxntid[2] : 1))
                               : (int)EMU_MAX_BLOCK_THREADS;
        return unlock(CUDA_SUCCESS);
    case 1: *value = (int)e->shared_used; return unlock(CUDA_SUCCESS); /* SHARED_SIZE_BYTES: static */
    case 8: *value = f->max_dyn; return unlock(CUDA_SUCCESS);          /* MAX_DYNAMIC_SHARED_SIZE_BYTES */
    }
    return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute: attribute %d is not answered by this stand-in", attr));
}

/* ---- launches ---- */
static CUresult launch(const char *api, Func *f, const unsigned grid[3], const unsigned block[3], unsigned smem, void *s,
                       void **params, void **extra, const unsigned *cluster, bool cooperative) {
    if (!handles_has(&D.funcs, f)) return refuse(CUDA_ERROR_INVALID_HANDLE, "%s of a function that is not live", api);
    Stream *st = s ? s : &D.null_stream;
    if (!stream_ok(st)) return refuse(CUDA_ERROR_INVALID_HANDLE, "%s on a stream that is not live", api);
    const EmuFunc *e = f->f;
    if (extra) return refuse(CUDA_ERROR_NOT_SUPPORTED, "%s: `extra` is not taken by this stand-in", api);
    if (e->nparams && !params) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: %s has %u parameters, kernelParams is NULL", api, e->name, e->nparams);
    for (unsigned i = 0; i < e->nparams; i++)
        if (!params[i]) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: kernelParams[%u] of %s is NULL", api, i, e->name);
    if (!grid[0] || !grid[1] || !grid[2] || grid[0] > EMU_MAX_GRID_X || grid[1] > EMU_MAX_GRID_YZ || grid[2] > EMU_MAX_GRID_YZ)
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: grid %u x %u x %u", api, grid[0], grid[1], grid[2]);
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (!threads || block[0] > EMU_MAX_BLOCK_XY || block[1] > EMU_MAX_BLOCK_XY || block[2] > EMU_MAX_BLOCK_Z ||
        threads > EMU_MAX_BLOCK_THREADS)
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: block %u x %u x %u", api, block[0], block[1], block[2]);
    if (e->reqntid[0] && (block[0] != e->reqntid[0] || block[1] != (e->reqntid[1] ? e->reqntid[1] : 1) ||
                          block[2] != (e->reqntid[2] ? e->reqntid[2] : 1)))
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: block %u x %u x %u, %s requires .reqntid %u", api, block[0], block[1], block[2],
                      e->name, e->reqntid[0]);
    if (e->maxntid[0]) {
        uint64_t most = (uint64_t)e->maxntid[0] * (e->maxntid[1] ? e->maxntid[1] : 1) * (e->maxntid[2] ? e->maxntid[2] : 1);
        if (threads > most) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: %llu threads, %s's .maxntid allows %llu", api,
                                          (unsigned long long)threads, e->name, (unsigned long long)most);
    }
    if ((int)smem > f->max_dyn)
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: %u bytes of dynamic shared memory, %s's MAX_DYNAMIC_SHARED_SIZE_BYTES is %d "
                      "(static %u)", api, smem, e->name, f->max_dyn, e->shared_used);
    unsigned cl[3] = {0, 0, 0};
    if (cluster) {
        if (D.cc < 90) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: a cluster dimension on compute capability %d.%d", api, D.cc / 10, D.cc % 10);
        uint64_t n = (uint64_t)cluster[0] * cluster[1] * cluster[2];
        if (!n) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: cluster %u x %u x %u", api, cluster[0], cluster[1], cluster[2]);
        /* 8 CTAs is the portable size; up to 16 once the function allows non-portable sizes */
        if (n > (f->non_portable ? 16u : 8u))
            return refuse(CUDA_ERROR_INVALID_CLUSTER_SIZE, "%s: a cluster of %llu CTAs%s", api, (unsigned long long)n,
                          f->non_portable || n > 16 ? "" : " without CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED");
        for (int d = 0; d < 3; d++)
            if (grid[d] % cluster[d])
                return refuse(CUDA_ERROR_INVALID_VALUE, "%s: grid dimension %d (%u) is not a multiple of the cluster's (%u)", api, d,
                              grid[d], cluster[d]);
        if (e->reqnctapercluster[0] &&
            (cluster[0] != e->reqnctapercluster[0] || cluster[1] != (e->reqnctapercluster[1] ? e->reqnctapercluster[1] : 1) ||
             cluster[2] != (e->reqnctapercluster[2] ? e->reqnctapercluster[2] : 1)))
            return refuse(CUDA_ERROR_INVALID_VALUE, "%s: cluster %u x %u x %u differs from %s's .reqnctapercluster", api, cluster[0],
                          cluster[1], cluster[2], e->name);
        memcpy(cl, cluster, sizeof cl);
    }
    Work *w = calloc(1, sizeof *w);
    if (!w) return CUDA_ERROR_OUT_OF_MEMORY;
    *w = (Work){.kind = W_LAUNCH, .fn = f, .smem = smem, .cooperative = cooperative};
    memcpy(w->grid, grid, sizeof w->grid);
    memcpy(w->block, block, sizeof w->block);
    memcpy(w->cluster, cl, sizeof cl);
    /* the parameters' values now (the caller may reuse its buffers when the call returns), sizes from .param */
    w->params = calloc(e->nparams ? e->nparams : 1, sizeof *w->params);
    w->blob = aligned_alloc(64, ((size_t)e->param_size + 63) / 64 * 64 + 64); /* .align 64 parameters (tensor maps) land aligned */
    if (!w->params || !w->blob) return work_free(w), CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; i < e->nparams; i++) {
        memcpy(w->blob + e->params[i].offset, params[i], e->params[i].size);
        w->params[i] = w->blob + e->params[i].offset;
    }
    enqueue(st, w);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                               void *s, void **params, void **extra) {
    ENTER_CTX();
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return unlock(launch("cuLaunchKernel", f, grid, block, smem, s, params, extra, NULL, false));
}

/* cuLaunchKernelEx's configuration (CUDA 12), as cuda.h lays it out. */
typedef struct LaunchAttribute {
    int id;
    char pad[4];
    union {
        char bytes[64];
        void *align;
        int value;
        struct { unsigned x, y, z; } cluster_dim;
    } value;
} LaunchAttribute;
typedef struct LaunchConfig {
    unsigned grid[3], block[3], shared_bytes;
    void *stream;
    LaunchAttribute *attrs;
    unsigned nattrs;
} LaunchConfig;

EXPORT CUresult cuLaunchKernelEx(const LaunchConfig *c, void *f, void **params, void **extra) {
    ENTER_CTX();
    if (!c || (c->nattrs && !c->attrs)) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernelEx: no configuration"));
    const unsigned *cluster = NULL;
    bool cooperative = false;
    for (unsigned i = 0; i < c->nattrs; i++) {
        const LaunchAttribute *a = &c->attrs[i];
        switch (a->id) {
        case 2: cooperative = a->value.value != 0; break; /* COOPERATIVE */
        case 4: cluster = &a->value.cluster_dim.x; break; /* CLUSTER_DIMENSION */
        case 6:                                           /* PROGRAMMATIC_STREAM_SERIALIZATION */
            if (a->value.value != 0 && a->value.value != 1) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "PDL value %d", a->value.value));
            break;
        default: return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernelEx: attribute %d is not taken by this stand-in", a->id));
        }
    }
    return unlock(launch("cuLaunchKernelEx", f, c->grid, c->block, c->shared_bytes, c->stream, params, extra, cluster, cooperative));
}

/* ---- streams and events ---- */
EXPORT CUresult cuStreamCreate(void **s, unsigned flags) {
    ENTER_CTX();
    if (!s || flags > 1) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate flags %u", flags));
    Stream *st = calloc(1, sizeof *st);
    if (!st || !handles_add(&D.streams, st)) return free(st), unlock(CUDA_ERROR_OUT_OF_MEMORY);
    st->nonblocking = flags & 1;
    *s = st;
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuStreamDestroy_v2(void *s) {
    ENTER_CTX();
    Stream *st = s;
    if (!s || !handles_has(&D.streams, st)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy of a stream that is not live"));
    stream_run(st, UINT64_MAX); /* its work completes, then it goes */
    for (unsigned i = 0; i < D.events.n; i++) {
        Event *e = D.events.v[i];
        if (e->stream == st) e->stream = NULL; /* its records have run */
    }
    for (Work *w = D.null_stream.head; w; w = w->next) /* waits on it are met */
        if (w->wait_stream == st) w->wait_stream = NULL;
    for (unsigned i = 0; i < D.streams.n; i++)
        for (Work *w = ((Stream *)D.streams.v[i])->head; w; w = w->next)
            if (w->wait_stream == st) w->wait_stream = NULL;
    handles_remove(&D.streams, st);
    free(st);
    return unlock(D.sticky);
}
EXPORT CUresult cuStreamSynchronize(void *s) {
    ENTER_CTX();
    D.capture_breaking++;
    Stream *st = s ? s : &D.null_stream;
    if (!stream_ok(st)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuStreamSynchronize of a stream that is not live"));
    stream_run(st, UINT64_MAX); /* the NULL stream's own work (which waited for the blocking streams' earlier work) */
    return unlock(D.sticky);
}
EXPORT CUresult cuStreamGetCtx(void *s, void **ctx) {
    ENTER_CTX();
    if (!ctx || !stream_ok(s ? s : &D.null_stream)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuStreamGetCtx of a stream that is not live"));
    *ctx = &ctx_token;
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuEventCreate(void **e, unsigned flags) {
    ENTER_CTX();
    if (!e || flags > 7) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "cuEventCreate flags %u", flags));
    Event *ev = calloc(1, sizeof *ev);
    if (!ev || !handles_add(&D.events, ev)) return free(ev), unlock(CUDA_ERROR_OUT_OF_MEMORY);
    *e = ev;
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuEventDestroy_v2(void *e) {
    ENTER_CTX();
    if (!handles_has(&D.events, e)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy of an event that is not live"));
    /* queued records of it stay in their queues: they no longer touch it */
    for (Work *w = D.null_stream.head; w; w = w->next)
        if (w->event == e) w->event = NULL;
    for (unsigned i = 0; i < D.streams.n; i++)
        for (Work *w = ((Stream *)D.streams.v[i])->head; w; w = w->next)
            if (w->event == e) w->event = NULL;
    handles_remove(&D.events, e);
    free(e);
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuEventRecord(void *e, void *s) {
    ENTER_CTX();
    Event *ev = e;
    Stream *st = s ? s : &D.null_stream;
    if (!handles_has(&D.events, ev) || !stream_ok(st)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord handles"));
    Work *w = calloc(1, sizeof *w);
    if (!w) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    *w = (Work){.kind = W_RECORD, .event = ev};
    enqueue(st, w);
    ev->stream = st, ev->seq = w->seq, ev->done = false;
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
    ENTER_CTX();
    Event *ev = e;
    Stream *st = s ? s : &D.null_stream;
    if (!handles_has(&D.events, ev) || !stream_ok(st) || flags > 1)
        return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent handles"));
    if (!ev->stream || ev->stream == st) return unlock(CUDA_SUCCESS); /* never recorded, or in order anyway */
    Work *w = calloc(1, sizeof *w);
    if (!w) return unlock(CUDA_ERROR_OUT_OF_MEMORY);
    *w = (Work){.kind = W_WAIT, .wait_stream = ev->stream, .wait_seq = ev->seq};
    enqueue(st, w);
    return unlock(CUDA_SUCCESS);
}
EXPORT CUresult cuEventSynchronize(void *e) {
    ENTER_CTX();
    D.capture_breaking++;
    Event *ev = e;
    if (!handles_has(&D.events, ev)) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuEventSynchronize of an event that is not live"));
    if (ev->stream) stream_run(ev->stream, ev->seq);
    return unlock(D.sticky);
}
EXPORT CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
    ENTER_CTX();
    Event *a = start, *b = end;
    if (!ms || !handles_has(&D.events, a) || !handles_has(&D.events, b))
        return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime handles"));
    if (!a->stream && !a->done) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime of an event never recorded"));
    if (!b->stream && !b->done) return unlock(refuse(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime of an event never recorded"));
    if (!a->done || !b->done) return unlock(CUDA_ERROR_NOT_READY); /* the driver's answer for work not yet finished */
    *ms = (float)((double)((int64_t)(b->ns - a->ns)) / 1e6);
    return unlock(CUDA_SUCCESS);
}

/* ---- tensor maps: every rule the Driver API documents, then the emulator's encoding ---- */
static const unsigned tmap_esize[13] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4}; /* CUtensorMapDataType 0..12 */
static bool tmap_float(int t) { return t >= 6; } /* FLOAT16 and after */

/* The rules both encoders share; fills e. */
static CUresult tmap_common(const char *api, void *map, int dtype, unsigned rank, unsigned lo, void *addr, const unsigned long long *dims,
                            const unsigned long long *strides, const unsigned *elem_strides, int interleave, int swizzle, int l2,
                            int fill, EmuTensorMap *e) {
    if (!map || (uintptr_t)map % 64) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: tensorMap %p is not 64-byte aligned", api, map);
    if (dtype < 0 || dtype > 12) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: tensorDataType %d", api, dtype);
    if (rank < lo || rank > 5 || (interleave && rank < 3)) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: tensorRank %u", api, rank);
    if (interleave < 0 || interleave > 2) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: interleave %d", api, interleave);
    if (swizzle < 0 || swizzle > 3) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: swizzle %d", api, swizzle);
    if (l2 < 0 || l2 > 4) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: l2Promotion %d", api, l2);
    if (fill < 0 || fill > 1 || (fill && !tmap_float(dtype)))
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: oobFill %d with tensorDataType %d", api, fill, dtype);
    unsigned align = interleave == 2 ? 32 : 16;
    if (!addr || (uintptr_t)addr % align)
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: globalAddress %p is not %u-byte aligned", api, addr, align);
    if (!dims || (rank > 1 && !strides) || !elem_strides) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: a NULL array", api);
    unsigned es = tmap_esize[dtype];
    unsigned __int128 extent = es;
    for (unsigned d = 0; d < rank; d++) {
        if (!dims[d] || dims[d] > (1ull << 32)) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: globalDim[%u] = %llu", api, d, dims[d]);
        if (d && (strides[d - 1] % align || strides[d - 1] >= (1ull << 40) || !strides[d - 1]))
            return refuse(CUDA_ERROR_INVALID_VALUE, "%s: globalStrides[%u] = %llu is not a multiple of %u below 2^40", api, d - 1,
                          strides[d - 1], align);
        if (elem_strides[d] < 1 || elem_strides[d] > 8)
            return refuse(CUDA_ERROR_INVALID_VALUE, "%s: elementStrides[%u] = %u", api, d, elem_strides[d]);
        extent += (unsigned __int128)(dims[d] - 1) * (d ? strides[d - 1] : es);
    }
    /* where the tensor lies is not checked here, as the driver does not: the emulator checks each access */
    if (extent > UINT64_MAX) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: the tensor spans more than 2^64 bytes", api);
    if (interleave) return refuse(CUDA_ERROR_NOT_SUPPORTED, "%s: interleaved layouts are not emulated", api);
    static const uint8_t ptx_code[13] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 11, 12}; /* tensormap.replace's .elemtype */
    *e = (EmuTensorMap){.esize = es, .elemtype = ptx_code[dtype], .fill = (unsigned)fill, .rank = rank,
                        .addr = (uint64_t)(uintptr_t)addr, .swizzle = (unsigned)swizzle};
    for (unsigned d = 0; d < rank; d++) {
        e->dims[d] = dims[d];
        e->elem_strides[d] = elem_strides[d];
        if (d) e->strides[d - 1] = strides[d - 1];
    }
    return CUDA_SUCCESS;
}

/* The inner extent in bytes (a box's first dimension, an im2col map's channels): 16-byte rows within the swizzle span. */
static CUresult tmap_inner(const char *api, unsigned long long bytes, int swizzle) {
    static const unsigned span[4] = {0, 32, 64, 128};
    if (bytes % 16) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: the inner box is %llu bytes, not a multiple of 16", api, bytes);
    if (swizzle && bytes > span[swizzle])
        return refuse(CUDA_ERROR_INVALID_VALUE, "%s: the inner box (%llu bytes) is wider than the %u-byte swizzle", api, bytes, span[swizzle]);
    return CUDA_SUCCESS;
}

static CUresult tmap_encode(const char *api, const EmuTensorMap *e, void *map) {
    const char *why = NULL;
    if (!emu_tensor_map_encode(e, map, &why)) return refuse(CUDA_ERROR_INVALID_VALUE, "%s: %s", api, why);
    D.tensor_maps++;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims,
                                       const unsigned long long *strides, const unsigned *box, const unsigned *elem_strides, int interleave,
                                       int swizzle, int l2, int fill) {
    static const char api[] = "cuTensorMapEncodeTiled";
    pthread_mutex_lock(&D.lock);
    if (!D.initialized) return unlock(refuse(CUDA_ERROR_NOT_INITIALIZED, "%s before cuInit", api));
    EmuTensorMap e;
    CUresult r = tmap_common(api, map, dtype, rank, 1, addr, dims, strides, elem_strides, interleave, swizzle, l2, fill, &e);
    if (r) return unlock(r);
    if (!box) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "%s: boxDim is NULL", api));
    for (unsigned d = 0; d < rank; d++) {
        if (!box[d] || box[d] > 256) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "%s: boxDim[%u] = %u", api, d, box[d]));
        e.box[d] = box[d];
    }
    if ((r = tmap_inner(api, (unsigned long long)box[0] * e.esize, swizzle))) return unlock(r);
    return unlock(tmap_encode(api, &e, map));
}

EXPORT CUresult cuTensorMapEncodeIm2col(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims,
                                        const unsigned long long *strides, const int *lower, const int *upper, unsigned channels,
                                        unsigned pixels, const unsigned *elem_strides, int interleave, int swizzle, int l2, int fill) {
    static const char api[] = "cuTensorMapEncodeIm2col";
    pthread_mutex_lock(&D.lock);
    if (!D.initialized) return unlock(refuse(CUDA_ERROR_NOT_INITIALIZED, "%s before cuInit", api));
    EmuTensorMap e;
    CUresult r = tmap_common(api, map, dtype, rank, 3, addr, dims, strides, elem_strides, interleave, swizzle, l2, fill, &e);
    if (r) return unlock(r);
    if (!lower || !upper) return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "%s: a NULL corner", api));
    static const int lim[6] = {0, 0, 0, 32768, 128, 16};
    for (unsigned k = 0; k + 2 < rank; k++) {
        if (lower[k] < -lim[rank] || lower[k] >= lim[rank] || upper[k] < -lim[rank] || upper[k] >= lim[rank])
            return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "%s: corner %u (%d, %d) out of range for rank %u", api, k, lower[k], upper[k], rank));
        e.lower[k] = lower[k], e.upper[k] = upper[k];
    }
    if (channels < 1 || channels > 256 || pixels < 1 || pixels > 1024)
        return unlock(refuse(CUDA_ERROR_INVALID_VALUE, "%s: channelsPerPixel %u, pixelsPerColumn %u", api, channels, pixels));
    if ((r = tmap_inner(api, (unsigned long long)channels * e.esize, swizzle))) return unlock(r);
    e.im2col = 1, e.channels = channels, e.pixels = pixels;
    return unlock(tmap_encode(api, &e, map));
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **s) {
    static const struct { int r; const char *name; } names[] = {
        {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"}, {3, "CUDA_ERROR_NOT_INITIALIZED"},
        {101, "CUDA_ERROR_INVALID_DEVICE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {218, "CUDA_ERROR_INVALID_PTX"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}, {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"},
        {600, "CUDA_ERROR_NOT_READY"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
        {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"}, {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
        {719, "CUDA_ERROR_LAUNCH_FAILED"}, {801, "CUDA_ERROR_NOT_SUPPORTED"}, {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"}};
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (names[i].r == r) return *s = names[i].name, CUDA_SUCCESS;
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuGetErrorString(CUresult r, const char **s) {
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    *s = r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED ? D.report : D.refusal;
    return CUDA_SUCCESS;
}

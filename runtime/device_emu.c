/* device_emu.c - the emulator backend of the device layer.
 *
 * Device memory is the emulator's allocation table (emu/exec_mem.c):
 * synthetic device addresses, bounds-checked copies.  A module is an
 * EmuModule; a function is its EmuFunc.  Launches run to completion before
 * returning; errors come back as DevStatus plus the emulator's report:
 * memcheck and racecheck reports as DEV_ERR_MEMCHECK, anything else that
 * stops a kernel (unsupported instruction, deadlock, trap) as
 * DEV_ERR_LAUNCH.  Every launch has a time budget (DevOptions.
 * emu_timeout_seconds, 600 s by default): past it the launch fails with a
 * report of where the threads are, and the device stays usable.
 * Host-side calls are serialised with a mutex so the device may be shared
 * by host threads.
 *
 * Streams: the device is one in-order queue that runs each piece of work
 * (launch, copy, fill) to completion when it is submitted, under the same
 * mutex, so work submitted to one stream never overlaps, even from several
 * host threads, and every stream is already synchronized when a call
 * returns.  That is one legal schedule of CUDA's semantics (streams may run
 * concurrently, they need not).  A stream handle exists only to be checked
 * and destroyed; an event records CLOCK_MONOTONIC when it is recorded,
 * which is after everything submitted before it has finished, so elapsed
 * times measure the host time the emulator spent between two records.
 *
 * Registered host memory (dev_register_host, behind tile_register_memory):
 * the caller's bytes enter the allocation table as a borrowed range
 * (emu_mem_map), so kernels, copies and memcheck treat them as any
 * allocation and write them in place; unregistering removes the range and
 * leaves the memory to its owner.  There are no native contexts or
 * streams: only NULL wraps as a stream.
 *
 * An emu:<target> device (dev->target) refuses PTX whose .target is a newer
 * SM than its own, as a GPU of that target would. */
#include "runtime/device.h"
#include "runtime/rt.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/emu.h"

typedef struct EmuDev {
    EmuMem mem;
    EmuOptions opt;
    pthread_mutex_t lock;
    /* the launch's state for emu_interrupt (atomic): EMU_RUNNING while a launch runs, with EMU_STOP added
     * by a request; 0 when idle, where a request does nothing (it never waits for a later launch) */
    int interrupt;
} EmuDev;

typedef struct EmuDevModule {
    EmuModule *m;
} EmuDevModule;

typedef struct EmuDevFunc {
    EmuModule *m;
    EmuFunc *f;
} EmuDevFunc;

static DevStatus emu_open(TileDevice *dev, int ordinal) {
    if (ordinal != 0) return dev_fail(dev, DEV_ERR_NO_DEVICE, "emu: there is only device 0");
    EmuDev *e = calloc(1, sizeof *e);
    if (!e) return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    emu_mem_init(&e->mem);
    e->opt.racecheck = dev->opts.emu_racecheck;
    e->opt.host_threads = dev->opts.emu_host_threads;
    e->opt.max_instructions = dev->opts.emu_max_instructions;
    e->opt.max_instructions_knob = "DevOptions.emu_max_instructions"; /* the only setting of it (no variable or option) */
    e->opt.approx = dev->opts.emu_approx_bound ? EMU_APPROX_BOUND : EMU_APPROX_EXACT;
    e->opt.one_slot_per_register = rt_options()->debug_emu_1to1; /* the reference register layout (emu/slots.c) */
    e->opt.bufs = emu_bufs_new(); /* workers' buffers kept between launches (NULL: each launch allocates its own) */
    e->opt.num_sms = (unsigned)dev_num_sms(dev); /* %nsmid and %smid: emu:sms=N, else the default */
    double to = dev->opts.emu_timeout_seconds;
    e->opt.timeout_seconds = to == 0 ? EMU_DEFAULT_TIMEOUT_SECONDS : to < 0 ? 0 : to;
    pthread_mutex_init(&e->lock, NULL);
    dev->impl = e;
    return DEV_OK;
}

static void emu_close(TileDevice *dev) {
    EmuDev *e = dev->impl;
    if (!e) return;
    emu_mem_destroy(&e->mem);
    emu_bufs_free(e->opt.bufs);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

static DevStatus emu_malloc(TileDevice *dev, size_t bytes, uint64_t *dptr) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    bool ok = emu_mem_alloc(&e->mem, bytes, false, dptr);
    pthread_mutex_unlock(&e->lock);
    return ok ? DEV_OK : dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: dev_malloc of %zu bytes failed", bytes);
}

static DevStatus emu_free(TileDevice *dev, uint64_t dptr) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    const EmuAlloc *a = emu_mem_find(&e->mem, dptr);
    bool ok = a && a->addr == dptr && !a->module_var && !a->borrowed && emu_mem_free(&e->mem, dptr);
    pthread_mutex_unlock(&e->lock);
    return ok ? DEV_OK : dev_fail(dev, DEV_ERR_INVALID, "emu: dev_free of 0x%llx: not the start of a live allocation",
                                  (unsigned long long)dptr);
}

enum { EMU_STOP = 1, EMU_RUNNING = 2 }; /* EmuDev.interrupt; the executor stops on EMU_STOP (EmuOptions.interrupt) */

/* No lock: the launch holds it.  Only a running launch is stopped: a request while none runs (or as one
 * ends) does nothing, so it cannot stop an unrelated later launch. */
static DevStatus emu_interrupt(TileDevice *dev) {
    EmuDev *e = dev->impl;
    int v = __atomic_load_n(&e->interrupt, __ATOMIC_RELAXED);
    while ((v & EMU_RUNNING) && !__atomic_compare_exchange_n(&e->interrupt, &v, v | EMU_STOP, false, __ATOMIC_RELAXED,
                                                             __ATOMIC_RELAXED)) {}
    return DEV_OK;
}

static DevStatus emu_register_host(TileDevice *dev, void *host, size_t bytes, uint64_t *dptr) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    bool ok = emu_mem_map(&e->mem, host, bytes, dptr);
    pthread_mutex_unlock(&e->lock);
    return ok ? DEV_OK : dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: mapping %zu bytes of host memory failed", bytes);
}

static DevStatus emu_unregister_host(TileDevice *dev, void *host, uint64_t dptr) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    const EmuAlloc *a = emu_mem_find(&e->mem, dptr);
    bool ok = a && a->addr == dptr && a->borrowed && a->host == host && emu_mem_free(&e->mem, dptr);
    pthread_mutex_unlock(&e->lock);
    return ok ? DEV_OK : dev_fail(dev, DEV_ERR_INVALID, "emu: 0x%llx is not a registered host range", (unsigned long long)dptr);
}

static uint8_t *range(TileDevice *dev, uint64_t addr, size_t bytes, const char *what) {
    EmuDev *e = dev->impl;
    uint8_t *p = emu_mem_host(&e->mem, addr, bytes);
    if (!p) dev_fail(dev, DEV_ERR_INVALID, "emu: %s: [0x%llx, 0x%llx) is not inside one live allocation", what,
                     (unsigned long long)addr, (unsigned long long)(addr + bytes));
    return p;
}

static DevStatus emu_htod(TileDevice *dev, uint64_t dst, const void *src, size_t bytes) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    uint8_t *p = range(dev, dst, bytes, "dev_memcpy_htod");
    if (p) memmove(p, src, bytes); /* registered host memory is the device memory: the ranges may overlap */
    pthread_mutex_unlock(&e->lock);
    return p ? DEV_OK : DEV_ERR_INVALID;
}

static DevStatus emu_dtoh(TileDevice *dev, void *dst, uint64_t src, size_t bytes) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    uint8_t *p = range(dev, src, bytes, "dev_memcpy_dtoh");
    if (p) memmove(dst, p, bytes);
    pthread_mutex_unlock(&e->lock);
    return p ? DEV_OK : DEV_ERR_INVALID;
}

static DevStatus emu_memset8(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    uint8_t *p = range(dev, dst, bytes, "dev_memset_d8");
    if (p) memset(p, value, bytes);
    pthread_mutex_unlock(&e->lock);
    return p ? DEV_OK : DEV_ERR_INVALID;
}

static DevStatus emu_module_load(TileDevice *dev, const char *ptx, void **mod) {
    EmuDev *e = dev->impl;
    char *err = NULL;
    pthread_mutex_lock(&e->lock);
    EmuModule *m = emu_module_parse(ptx, &e->mem, &err);
    pthread_mutex_unlock(&e->lock);
    if (!m) {
        if (!err || !strcmp(err, EMU_OUT_OF_HOST_MEMORY)) {
            free(err);
            return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: out of host memory parsing the PTX");
        }
        DevStatus st = dev_fail(dev, DEV_ERR_PTX, "emu: %s", err);
        free(err);
        return st;
    }
    /* an emu:<target> device runs what a GPU of that target runs: PTX for the same or an older SM, whether the
     * PTX's target is in support/target.h or not (sm_100a on emu:sm_90a is refused as sm_90a on emu:sm_89) */
    const Target *dt = dev->target;
    int msm = m->target ? m->target->sm : m->target_sm;
    if (dt && msm > dt->sm) {
        char mt[sizeof m->target_name];
        snprintf(mt, sizeof mt, "%s", m->target_sm ? m->target_name : m->target->name);
        pthread_mutex_lock(&e->lock);
        emu_module_free(m);
        pthread_mutex_unlock(&e->lock);
        return dev_fail(dev, DEV_ERR_PTX, "emu:%s cannot load PTX for .target %s (a newer GPU's)", dt->name, mt);
    }
    EmuDevModule *dm = calloc(1, sizeof *dm);
    if (!dm) {
        pthread_mutex_lock(&e->lock); /* the module's globals live in the device's memory, as at unload */
        emu_module_free(m);
        pthread_mutex_unlock(&e->lock);
        return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    }
    dm->m = m;
    *mod = dm;
    return DEV_OK;
}

static void emu_module_unload(TileDevice *dev, void *mod) {
    EmuDev *e = dev->impl;
    EmuDevModule *dm = mod;
    pthread_mutex_lock(&e->lock);
    emu_module_free(dm->m);
    pthread_mutex_unlock(&e->lock);
    free(dm);
}

static DevStatus emu_get_function(TileDevice *dev, void *mod, const char *name, void **fn) {
    EmuDevModule *dm = mod;
    EmuFunc *f = emu_module_find(dm->m, name);
    if (!f || !f->is_entry)
        return dev_fail(dev, DEV_ERR_NOT_FOUND, "emu: the module has no kernel entry named '%s'%s", name,
                        f ? " (it is a .func)" : "");
    EmuDevFunc *df = calloc(1, sizeof *df);
    if (!df) return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    df->m = dm->m;
    df->f = f;
    *fn = df;
    /* freed with the module's function list: keep it in the module's arena */
    EmuDevFunc *keep = arena_alloc(dm->m->arena, sizeof *keep);
    *keep = *df;
    free(df);
    *fn = keep;
    return DEV_OK;
}

static DevStatus emu_launch_fn(TileDevice *dev, void *fn, const unsigned grid[3], const unsigned block[3], unsigned smem,
                               void *stream, void **params, unsigned flags, const unsigned *cluster) {
    EmuDev *e = dev->impl;
    EmuDevFunc *df = fn;
    (void)stream; /* one in-order queue for every stream: see the top of the file */
    (void)flags;  /* a dependent launch starts after the previous one finished: allowed, and what in order gives */
    char *err = NULL;
    EmuLaunchStats stats = {0};
    pthread_mutex_lock(&e->lock);
    EmuOptions o = e->opt;
    if (cluster) memcpy(o.cluster, cluster, sizeof o.cluster);
    o.cooperative = flags & DEV_LAUNCH_COOPERATIVE;
    o.interrupt = &e->interrupt;
    o.device = dev->target;
    __atomic_store_n(&e->interrupt, EMU_RUNNING, __ATOMIC_RELAXED);
    bool ok = emu_launch(df->m, df->f, grid, block, smem, params, &o, &stats, &err);
    __atomic_store_n(&e->interrupt, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&e->lock);
    __atomic_store_n(&dev->last.instructions, stats.instructions, __ATOMIC_RELAXED);
    if (ok) return DEV_OK;
    /* a shape refused before anything ran is the caller's invalid value, not a failed kernel; host memory running out
     * (the block's state, the tables of its checks) is out of memory, as when a module is parsed */
    DevStatus st = stats.refused ? DEV_ERR_INVALID
                   : stats.out_of_memory ? DEV_ERR_OUT_OF_MEMORY
                   : strncmp(err, "memcheck", 8) == 0 || strncmp(err, "racecheck", 9) == 0 ? DEV_ERR_MEMCHECK : DEV_ERR_LAUNCH;
    dev_fail(dev, st, "emu: %s", err ? err : "out of host memory while the kernel ran");
    free(err);
    return st;
}

static DevStatus emu_dev_tensor_map_encode(TileDevice *dev, const DevTensorMap *tm, void *out) {
    /* CUtensorMapDataType (tm->dtype) to tensormap.replace's .elemtype: the same but for f64, bf16, f32.ftz */
    static const uint8_t ptx_code[13] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 11, 12};
    EmuTensorMap e = {.esize = tm->esize, .elemtype = tm->dtype < 13 ? ptx_code[tm->dtype] : 13, .rank = tm->rank, .addr = tm->addr,
                      .swizzle = tm->swizzle, .fill = tm->fill, .im2col = tm->im2col, .channels = tm->channels, .pixels = tm->pixels};
    for (unsigned k = 0; k < 3; k++) {
        e.lower[k] = tm->lower[k];
        e.upper[k] = tm->upper[k];
    }
    for (unsigned d = 0; d < tm->rank && d < EMU_TMAP_MAX_RANK; d++) {
        e.dims[d] = tm->dims[d];
        e.box[d] = tm->box[d];
        e.elem_strides[d] = tm->elem_strides[d];
        if (d) e.strides[d - 1] = tm->strides[d - 1];
    }
    const char *why = NULL;
    if (!emu_tensor_map_encode(&e, out, &why)) return dev_fail(dev, DEV_ERR_INVALID, "emu: tensor map: %s", why);
    return DEV_OK;
}

static DevStatus emu_synchronize(TileDevice *dev) {
    (void)dev;
    return DEV_OK;
}

/* ---- streams and events ---- */
typedef struct EmuStream {
    int unused; /* a distinct address per stream */
} EmuStream;

typedef struct EmuEvent {
    bool recorded;
    uint64_t ns; /* CLOCK_MONOTONIC when recorded */
} EmuEvent;

static DevStatus emu_stream_create(TileDevice *dev, void **stream) {
    EmuStream *s = calloc(1, sizeof *s);
    if (!s) return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    *stream = s;
    return DEV_OK;
}

static DevStatus emu_stream_destroy(TileDevice *dev, void *stream) {
    (void)dev;
    free(stream);
    return DEV_OK;
}

/* Work ran when it was submitted: nothing is pending on any stream. */
static DevStatus emu_stream_synchronize(TileDevice *dev, void *stream) {
    (void)dev, (void)stream;
    return DEV_OK;
}

/* The work an event marks has finished when it is recorded (and, as in
 * CUDA, waiting for an event never recorded waits for nothing). */
static DevStatus emu_stream_wait_event(TileDevice *dev, void *stream, void *event) {
    (void)dev, (void)stream, (void)event;
    return DEV_OK;
}

static DevStatus emu_event_create(TileDevice *dev, void **event) {
    EmuEvent *ev = calloc(1, sizeof *ev);
    if (!ev) return dev_fail(dev, DEV_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    *event = ev;
    return DEV_OK;
}

static DevStatus emu_event_destroy(TileDevice *dev, void *event) {
    (void)dev;
    free(event);
    return DEV_OK;
}

static DevStatus emu_event_record(TileDevice *dev, void *event, void *stream) {
    (void)stream;
    EmuDev *e = dev->impl;
    struct timespec ts;
    pthread_mutex_lock(&e->lock); /* after work another thread is running */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    EmuEvent *ev = event;
    ev->ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    ev->recorded = true;
    pthread_mutex_unlock(&e->lock);
    return DEV_OK;
}

static DevStatus emu_event_synchronize(TileDevice *dev, void *event) {
    (void)dev, (void)event;
    return DEV_OK;
}

static DevStatus emu_event_elapsed_ms(TileDevice *dev, void *start, void *end, float *ms) {
    EmuDev *e = dev->impl;
    pthread_mutex_lock(&e->lock);
    EmuEvent a = *(EmuEvent *)start, b = *(EmuEvent *)end;
    pthread_mutex_unlock(&e->lock);
    if (!a.recorded || !b.recorded)
        return dev_fail(dev, DEV_ERR_INVALID, "emu: the %s event was never recorded", !a.recorded ? "start" : "end");
    *ms = (float)(((double)b.ns - (double)a.ns) * 1e-6);
    return DEV_OK;
}

static DevStatus emu_htod_async(TileDevice *dev, uint64_t dst, const void *src, size_t bytes, void *stream) {
    (void)stream;
    return emu_htod(dev, dst, src, bytes);
}

static DevStatus emu_dtoh_async(TileDevice *dev, void *dst, uint64_t src, size_t bytes, void *stream) {
    (void)stream;
    return emu_dtoh(dev, dst, src, bytes);
}

static DevStatus emu_memset8_async(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes, void *stream) {
    (void)stream;
    return emu_memset8(dev, dst, value, bytes);
}

const DevBackendOps dev_emu_ops = {
    .name = "emu",
    .open = emu_open,
    .close = emu_close,
    .malloc = emu_malloc,
    .free = emu_free,
    .htod = emu_htod,
    .dtoh = emu_dtoh,
    .memset8 = emu_memset8,
    .module_load = emu_module_load,
    .module_unload = emu_module_unload,
    .get_function = emu_get_function,
    .launch = emu_launch_fn,
    .synchronize = emu_synchronize,
    .stream_create = emu_stream_create,
    .stream_destroy = emu_stream_destroy,
    .stream_synchronize = emu_stream_synchronize,
    .stream_wait_event = emu_stream_wait_event,
    .event_create = emu_event_create,
    .event_destroy = emu_event_destroy,
    .event_record = emu_event_record,
    .event_synchronize = emu_event_synchronize,
    .event_elapsed_ms = emu_event_elapsed_ms,
    .htod_async = emu_htod_async,
    .dtoh_async = emu_dtoh_async,
    .memset8_async = emu_memset8_async,
    .register_host = emu_register_host,
    .interrupt = emu_interrupt,
    .unregister_host = emu_unregister_host,
    .tensor_map_encode = emu_dev_tensor_map_encode,
};

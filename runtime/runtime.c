/* runtime.c - the launcher library: contexts, memory, modules, kernels, launches.
 *
 * A tile_context wraps one TileDevice (runtime/device.h) and owns:
 *   - a table of the allocations made through it and the host ranges
 *     registered with it (sorted by device address), so every pointer an
 *     API call is given can be checked before it reaches the device:
 *     unknown pointers, ranges that run past an allocation, and pointers of
 *     another context are rejected with a message.  A pointer not in the
 *     table is asked of the device layer (cuda: memory the caller allocated
 *     in the same CUDA context, with its extent when the driver gives it);
 *   - the loaded modules, from PTX or from the compiler (jit/load.c, which
 *     keeps its record of the request in the module's origin);
 *   - attachments: state the layers above keep per context (the shipped
 *     kernels' variant caches), freed with it.
 * One mutex per context guards these tables; launches take no lock (the
 * kernel's launch layout is fixed when tile_module_get_kernel creates it:
 * block size, shared memory and the parameter sizes parsed from the
 * signature), so tile_launch is a few checks and one dev_launch.
 * Every handle is entered in the registry (runtime/handles.c) while it is
 * live, and each call checks the handles it is given there before reading
 * through them: garbage, foreign and destroyed handles are errors, never
 * reads of freed memory. */
#include "runtime/rt_state.h"
#include "support/dtype.h"
#include "support/target.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>


/* ---- errors: the last message of each (thread, context) ----
 * tile_last_error answers the calling thread's last failure on a context, so
 * two threads failing on one context never read each other's message.  Each
 * thread keeps a small table of (context address, context id, message),
 * made on its first failure and freed by a pthread key destructor when the
 * thread exits.  A record is never read through its address: a lookup
 * compares the address and the id of the live context it was given, so a
 * record of a destroyed context (or of an earlier context at the same
 * address: ids are never reused) matches nothing.  Records of dead contexts
 * are reused: one whose address is no longer a live context handle (asked
 * of the registry, which never reads through it), or one with the same
 * address and an older id; tile_context_destroy drops the destroying
 * thread's own record at once. */
typedef struct ErrRecord {
    const tile_context *ctx; /* compared, never dereferenced */
    uint64_t id;
    char *msg;
} ErrRecord;

typedef struct ErrTable {
    ErrRecord *r;
    int n, cap;
} ErrTable;

static _Atomic uint64_t next_context_id = 1; /* the one process-wide counter: ids must differ across contexts */
static pthread_key_t err_key;
static pthread_once_t err_key_once = PTHREAD_ONCE_INIT;
static _Thread_local ErrTable *err_table; /* this thread's; also the value of err_key, for its destructor */

static void err_table_free(void *p) {
    ErrTable *t = p;
    for (int i = 0; i < t->n; i++) free(t->r[i].msg);
    free(t->r);
    free(t);
    err_table = NULL;
}

static void err_key_make(void) { pthread_key_create(&err_key, err_table_free); }

/* The calling thread's record for ctx (a live context), made when make is set; NULL when none (or out of memory). */
static ErrRecord *err_record(const tile_context *ctx, bool make) {
    ErrTable *t = err_table;
    if (!t) {
        if (!make) return NULL;
        pthread_once(&err_key_once, err_key_make);
        if (!(t = calloc(1, sizeof *t))) return NULL;
        err_table = t;
        pthread_setspecific(err_key, t);
    }
    ErrRecord *reuse = NULL;
    for (int i = 0; i < t->n; i++) {
        ErrRecord *r = &t->r[i];
        if (r->ctx == ctx && r->id == ctx->id) return r;
        if (make && !reuse && (r->ctx == ctx || !r->ctx || !handle_live(r->ctx, HANDLE_CONTEXT))) reuse = r;
    }
    if (!make) return NULL;
    if (!reuse) {
        if (t->n == t->cap) {
            int nc = t->cap ? t->cap * 2 : 4;
            ErrRecord *nr = realloc(t->r, sizeof *nr * (size_t)nc);
            if (!nr) return NULL;
            t->r = nr, t->cap = nc;
        }
        reuse = &t->r[t->n++];
        reuse->msg = NULL;
    }
    free(reuse->msg);
    *reuse = (ErrRecord){ctx, ctx->id, NULL};
    return reuse;
}

/* Why the last call on this thread failed that had no live context to hold the message: a
 * tile_context_create*, a call given a NULL or dead handle, or a call that takes no context (tile_cache_*,
 * tile_tune_*, tile_compile_* given no result).  tile_last_error(NULL) answers it. */
static _Thread_local char create_err[1024];

tile_status rt_fail(tile_context *ctx, tile_status status, const char *fmt, ...) {
    Str s = {0};
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap); /* first: an argument may be this thread's current message (tile_last_error) */
    va_end(ap);
    if (!ctx) { /* a call that takes no context */
        snprintf(create_err, sizeof create_err, "%s", s.buf ? s.buf : "");
        str_free(&s);
        return status;
    }
    ErrRecord *r = err_record(ctx, true);
    if (r) {
        free(r->msg);
        r->msg = str_take(&s);
    } else str_free(&s); /* out of host memory: the status alone tells */
    return status;
}

/* Does size end at a field's end (or past the struct)?  Else why, in err; zero_ok: "0, or " when 0 is a size too. */
static bool size_at_field_end(const RtLayout *layout, size_t size, const char *zero_ok, char *err, size_t err_size) {
    for (int i = 0; i < layout->nfields; i++) {
        const RtField *f = &layout->fields[i];
        if (size > f->offset && size < f->offset + f->size) {
            snprintf(err, err_size, "size = %zu ends inside %s.%s (bytes %zu to %zu): not a struct size (%sthe caller's sizeof: %zu in this release)",
                     size, layout->name, f->name, f->offset, f->offset + f->size, zero_ok, layout->size);
            return false;
        }
    }
    return true;
}

bool rt_struct_out_size(const RtLayout *layout, size_t size, char *err, size_t err_size) {
    return size_at_field_end(layout, size, "", err, err_size);
}

bool rt_struct_in(void *dst, const void *src, const RtLayout *layout, size_t baseline, char *err, size_t err_size) {
    size_t size, min_size = layout->nfields > 1 ? layout->fields[1].offset : layout->size;
    memcpy(&size, src, sizeof size);
    if (size && (size < min_size || size > RT_STRUCT_MAX || size % 4)) {
        snprintf(err, err_size, "size = %zu is not a struct size (0, or the caller's sizeof: %zu in this release)", size, layout->size);
        return false;
    }
    /* a size that ends inside a field would have half of it read: half a pointer taken for an address */
    if (size && !size_at_field_end(layout, size, "0, or ", err, err_size)) return false;
    /* a newer caller's tail (copy_struct_from_user's rule): fields this release does not know, taken only when
     * all zero, their default; a non-zero one would be silently ignored, and the call do something else than asked */
    for (size_t i = layout->size; i < size; i++)
        if (((const unsigned char *)src)[i]) {
            snprintf(err, err_size,
                     "size = %zu is past %s's %zu bytes in this release and byte %zu is not 0: a newer field this release "
                     "cannot honour (leave it 0)",
                     size, layout->name, layout->size, i);
            return false;
        }
    if (!size) size = baseline;
    memset(dst, 0, layout->size);
    memcpy(dst, src, size < layout->size ? size : layout->size);
    memcpy(dst, &layout->size, sizeof layout->size);
    return true;
}

static tile_status from_dev(DevStatus s) {
    switch (s) {
    case DEV_OK: return TILE_OK;
    case DEV_ERR_INVALID: return TILE_ERROR_INVALID_VALUE;
    case DEV_ERR_NO_DEVICE: return TILE_ERROR_NO_DEVICE;
    case DEV_ERR_OUT_OF_MEMORY: return TILE_ERROR_OUT_OF_MEMORY;
    case DEV_ERR_NOT_FOUND: return TILE_ERROR_NOT_FOUND;
    case DEV_ERR_LAUNCH:
    case DEV_ERR_MEMCHECK: return TILE_ERROR_LAUNCH;
    case DEV_ERR_UNSUPPORTED: return TILE_ERROR_UNSUPPORTED;
    default: return TILE_ERROR_DEVICE; /* DEV_ERR_FAULT too: the GPU's context is lost */
    }
}

tile_status rt_dev_error(tile_context *ctx, DevStatus s, const char *what) {
    const char *msg = *dev_last_error(ctx->dev) ? dev_last_error(ctx->dev) : dev_status_string(s);
    size_t w = strlen(what);
    /* the device's message may name the same thing ("emu: launch of 'k': ..."): say it once */
    if (!strncmp(msg, "emu: ", 5) && !strncmp(msg + 5, what, w) && msg[5 + w] == ':') return rt_fail(ctx, from_dev(s), "%s", msg + 5);
    if (s != DEV_ERR_FAULT) return rt_fail(ctx, from_dev(s), "%s: %s", what, msg);
    Str launches = {0}; /* a GPU's fault surfaces at a later call: name the launches that may have made it */
    rt_launch_log_describe(&ctx->launch_log, &ctx->default_synced, &launches);
    tile_status st = rt_fail(ctx, from_dev(s), "%s: %s%s", what, msg, launches.buf ? launches.buf : "");
    str_free(&launches);
    return st;
}


static tile_status create_fail(tile_status st, const char *msg) {
    snprintf(create_err, sizeof create_err, "%s", msg ? msg : "");
    return st;
}

/* A NULL or dead handle of the kind named, given to the public call fn. */
static tile_status dead_handle(const char *fn, const void *h, const char *kind, const char *why_dead) {
    if (!h) snprintf(create_err, sizeof create_err, "%s: the %s is NULL", fn, kind);
    else snprintf(create_err, sizeof create_err, "%s: not a live %s (%s)", fn, kind, why_dead);
    return TILE_ERROR_INVALID_VALUE;
}


const char *tile_last_error(tile_context *ctx) {
    if (!ctx) return create_err;
    if (!handle_live(ctx, HANDLE_CONTEXT)) return "not a valid tile_context";
    ErrRecord *r = err_record(ctx, false);
    return r && r->msg ? r->msg : "";
}

void rt_lock(tile_context *ctx) { pthread_mutex_lock(&ctx->lock); }
void rt_unlock(tile_context *ctx) { pthread_mutex_unlock(&ctx->lock); }
const char *rt_cache_dir(tile_context *ctx) { return ctx->cache_dir; }
const char *rt_device_key(tile_context *ctx) { return ctx->devkey; }
const char *rt_arch(tile_context *ctx) { return ctx->arch; }

bool rt_arch_loads(tile_context *ctx, const char *arch, char *err, size_t n) {
    const Target *t = target_find(arch), *dt = dev_target(ctx->dev);
    int cc = dev_compute_capability(ctx->dev);
    if (!t) return true; /* an unknown name is the compiler's to refuse, with the names it knows */
    if (dt && t->sm > dt->sm) {
        snprintf(err, n, "emu:%s cannot load code for %s (a newer GPU's)", dt->name, t->name);
        return false;
    }
    if (!dt && cc > 0 && !target_runs_on(t, cc)) {
        snprintf(err, n, "the device (compute capability %d.%d) cannot load code for %s", cc / 10, cc % 10, t->name);
        return false;
    }
    return true;
}
int rt_num_sms(tile_context *ctx) { return dev_num_sms(ctx->dev); }
bool rt_assume_files_unchanged(tile_context *ctx) { return ctx->assume_files_unchanged; }
tile_context_stats *rt_stats_locked(tile_context *ctx) { return &ctx->stats; }
bool rt_context_valid(const tile_context *ctx) { return handle_live(ctx, HANDLE_CONTEXT); }
tile_status rt_no_context(const char *fn, const tile_context *ctx) { return dead_handle(fn, ctx, "tile_context", "destroyed, or never created"); }

void **rt_attachment_locked(tile_context *ctx, const void *tag, void (*destroy)(void *)) {
    for (int i = 0; i < ctx->nattach; i++)
        if (ctx->attach[i].tag == tag) return &ctx->attach[i].data;
    Attachment *a = realloc(ctx->attach, (size_t)(ctx->nattach + 1) * sizeof *a);
    if (!a) return NULL;
    ctx->attach = a;
    a[ctx->nattach] = (Attachment){tag, NULL, destroy};
    return &a[ctx->nattach++].data;
}

/* ---- contexts ---- */
/* The device options of opt (TILE_EMU_TIMEOUT when it gives none); false when that variable is bad. */
static bool device_options(const tile_context_options *opt, DevOptions *dopt) {
    *dopt = (DevOptions){.emu_racecheck = opt->emu_racecheck != 0, .emu_host_threads = opt->emu_host_threads};
    /* emu launch budget: the option, else TILE_EMU_TIMEOUT, else the device's default */
    if (!opt->emu_timeout_seconds && rt_options()->emu_timeout_bad) return false;
    dopt->emu_timeout_seconds = opt->emu_timeout_seconds ? opt->emu_timeout_seconds : rt_options()->emu_timeout_seconds;
    return true;
}

/* The refusal of a bad TILE_EMU_TIMEOUT, naming the variable and its value. */
static tile_status timeout_fail(const char *fn) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s: TILE_EMU_TIMEOUT is not a positive number: '%s' (seconds, such as 30, 0.5 or inf)", fn,
             rt_options()->emu_timeout_text);
    return create_fail(TILE_ERROR_INVALID_VALUE, msg);
}

/* A context around an open device (which it then owns; closed on failure). */
static tile_status context_new(const tile_context_options *opt, const Target *tgt, TileDevice *dev, tile_context **out) {
    tile_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx || !handle_add(ctx, HANDLE_CONTEXT)) {
        free(ctx);
        dev_close(dev);
        return create_fail(TILE_ERROR_OUT_OF_MEMORY, "tile_context_create: out of host memory");
    }
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_rwlock_init(&ctx->alloc_lock, NULL);
    ctx->id = atomic_fetch_add(&next_context_id, 1);
    ctx->dev = dev;
    ctx->emu = !strcmp(dev_backend_name(dev), "emu");
    ctx->assume_files_unchanged = opt->assume_files_unchanged != 0;
    snprintf(ctx->arch, sizeof ctx->arch, "%s", tgt->name);
    ctx->target = tgt;
    if (ctx->emu) snprintf(ctx->devname, sizeof ctx->devname, "emu");
    else snprintf(ctx->devname, sizeof ctx->devname, "cuda:%d", dev->ordinal);
    /* the tuning database's key: the GPU's model and driver version (equal GPUs share records), "emu" on the emulator */
    char model[sizeof ctx->devkey - 24];
    dev_model(dev, model, sizeof model);
    if (ctx->emu) snprintf(ctx->devkey, sizeof ctx->devkey, "emu/%s", ctx->arch);
    else snprintf(ctx->devkey, sizeof ctx->devkey, "cuda/%s/%s", model, ctx->arch);
    if (!opt->no_disk_cache) ctx->cache_dir = strdup(opt->cache_dir && *opt->cache_dir ? opt->cache_dir : rt_options()->cache_dir);
    create_err[0] = 0;
    *out = ctx;
    return TILE_OK;
}

/* A device failure to open (or a device string that does not parse) in the public call fn: the status says
 * what kind, tile_last_error(NULL) the message, "fn: " and the device layer's. */
static tile_status open_fail(const char *fn, DevStatus ds, char *err) {
    tile_status st = ds == DEV_ERR_INVALID ? TILE_ERROR_INVALID_VALUE : from_dev(ds) == TILE_ERROR_DEVICE ? TILE_ERROR_NO_DEVICE : from_dev(ds);
    snprintf(create_err, sizeof create_err, "%s: %s", fn, err ? err : tile_status_string(st));
    free(err);
    return st;
}

/* tile_context_options as the first release with size fields laid it out: keep this value when fields are appended. */
enum { CONTEXT_OPTIONS_SIZE_0_1 = sizeof(tile_context_options) };

/* The host pointers of tile_context_options, which a size must not cut in half. */
/* The caller's options (NULL: the defaults) as this release reads them (rt_struct_in). */
/* "API: unknown arch 'X' (one of sm_80, ...)" */
static tile_status unknown_arch(const char *api, const char *arch) {
    char names[160], msg[320];
    const Target *near = target_near(arch);
    snprintf(msg, sizeof msg, "%s: unknown arch '%.40s'%s%s%s (expected %s)", api, arch, near ? "; did you mean '" : "", near ? near->name : "",
             near ? "'?" : "", target_names(names, sizeof names));
    return create_fail(TILE_ERROR_INVALID_VALUE, msg);
}

/* A context around dev compiling for its target (target_for_context: tgt is the arch the options named
 * or the default); dev is closed when the arch does not fit it. */
static tile_status context_on(const tile_context_options *opt, const Target *tgt, TileDevice *dev, const char *api, tile_context **out) {
    char err[224], msg[256];
    bool older = false;
    const Target *t = target_for_context(opt->arch && *opt->arch ? tgt : NULL, dev_target(dev), dev_compute_capability(dev), err,
                                         sizeof err, &older);
    if (t) return context_new(opt, t, dev, out);
    dev_close(dev);
    snprintf(msg, sizeof msg, "%s: %s", api, err);
    return create_fail(older ? TILE_ERROR_UNSUPPORTED : TILE_ERROR_INVALID_VALUE, msg);
}

static tile_status context_options_in(const tile_context_options *opt, tile_context_options *o, const char *api) {
    char err[160], msg[256];
    if (!opt) *o = (tile_context_options){0};
    else if (!rt_struct_in(o, opt, &rt_layout_tile_context_options, CONTEXT_OPTIONS_SIZE_0_1, err, sizeof err)) {
        snprintf(msg, sizeof msg, "%s: opt->%s", api, err);
        return create_fail(TILE_ERROR_INVALID_VALUE, msg);
    }
    return TILE_OK;
}

/* tile_context_create and its _ex: one body, each message naming the function the caller called (fn). */
static tile_status context_create(const tile_context_options *opt, tile_context **out, const char *fn) {
    char msg[256];
    if (!out) return snprintf(msg, sizeof msg, "%s: out is NULL", fn), create_fail(TILE_ERROR_INVALID_VALUE, msg);
    *out = NULL;
    tile_context_options o;
    tile_status st = context_options_in(opt, &o, fn);
    if (st != TILE_OK) return st;
    opt = &o;
    const Target *tgt = target_find(opt->arch);
    if (!tgt) return unknown_arch(fn, opt->arch);
    if (isnan(opt->emu_timeout_seconds)) { /* neither a budget nor one of the spellings of none (negative, INFINITY) */
        snprintf(msg, sizeof msg, "%s: opt->emu_timeout_seconds is NaN (seconds; 0: the default, negative or INFINITY: no limit)", fn);
        return create_fail(TILE_ERROR_INVALID_VALUE, msg);
    }
    DevOptions dopt;
    if (!device_options(opt, &dopt)) {
        return timeout_fail(fn);
    }
    TileDevice *dev;
    char *err = NULL;
    DevStatus ds = dev_open(opt->device, &dopt, &dev, &err);
    if (ds != DEV_OK) return open_fail(fn, ds, err);
    return context_on(opt, tgt, dev, fn, out);
}

tile_status tile_context_create_ex(const tile_context_options *opt, tile_context **out) {
    return context_create(opt, out, "tile_context_create_ex");
}

tile_status tile_context_create_from_native(void *cu_context, const tile_context_options *opt, tile_context **out) {
    if (!out) return create_fail(TILE_ERROR_INVALID_VALUE, "tile_context_create_from_native: out is NULL");
    *out = NULL;
    tile_context_options o;
    tile_status st = context_options_in(opt, &o, "tile_context_create_from_native");
    if (st != TILE_OK) return st;
    opt = &o;
    if (!cu_context) return create_fail(TILE_ERROR_INVALID_VALUE, "tile_context_create_from_native: cu_context is NULL");
    const Target *tgt = target_find(opt->arch);
    if (!tgt) return unknown_arch("tile_context_create_from_native", opt->arch);
    /* the device string, when given, must name cuda: the emulator has no native contexts */
    DevBackend be = DEV_BACKEND_CUDA;
    int ordinal = 0;
    char *err = NULL;
    if (opt->device && *opt->device && dev_parse_device(opt->device, &be, &ordinal, &err) != DEV_OK)
        return open_fail("tile_context_create_from_native", DEV_ERR_INVALID, err);
    if (be != DEV_BACKEND_CUDA)
        return create_fail(TILE_ERROR_UNSUPPORTED,
                           "tile_context_create_from_native: the emulator has no native contexts (use tile_context_create_ex, "
                           "and tile_register_memory for memory you allocated)");
    DevOptions dopt;
    if (!device_options(opt, &dopt)) return timeout_fail("tile_context_create_from_native");
    TileDevice *dev;
    DevStatus ds = dev_open_native(cu_context, &dopt, &dev, &err);
    if (ds != DEV_OK) return open_fail("tile_context_create_from_native", ds, err);
    return context_on(opt, tgt, dev, "tile_context_create_from_native", out);
}

tile_status tile_context_create(const char *device, tile_context **out) {
    tile_context_options o = {.device = device};
    return context_create(&o, out, "tile_context_create");
}

static void module_free(tile_module *m) {
    for (tile_kernel *k = m->kernels, *n; k; k = n) {
        n = k->next;
        handle_remove(k);
        free(k->param_size);
        free(k->raw_signature);
        free(k->param_names);
        free(k->param_spec);
        free(k->param_ptr);
        free(k->tmaps);
        rt_tmap_cache_free(k->tcache);
        free(k->name);
        free(k);
    }
    dev_module_unload(m->dm);
    if (m->origin.free) m->origin.free(m->origin.data);
    for (int i = 0; m->param_names && i < m->meta.nkernels; i++) free(m->param_names[i]); /* before the meta's count goes */
    free(m->param_names);
    for (int i = 0; m->names && i < m->nnames; i++) free(m->names[i]);
    free(m->names);
    tile_compiled_free(&m->meta);
    free(m->ptx);
    handle_remove(m);
    free(m);
}

uint64_t tile_context_id(tile_context *ctx) { return rt_context_valid(ctx) ? ctx->id : 0; }

void tile_context_destroy(tile_context *ctx) {
    if (!handle_live(ctx, HANDLE_CONTEXT)) return; /* destroying twice is harmless */
    handle_remove(ctx);
    ErrRecord *er = err_record(ctx, false); /* this thread's record goes now; other threads' are reused later */
    if (er) free(er->msg), *er = (ErrRecord){0};
    dev_synchronize(ctx->dev); /* nothing may still run on what is freed below */
    for (int i = ctx->nattach - 1; i >= 0; i--)
        if (ctx->attach[i].destroy && ctx->attach[i].data) ctx->attach[i].destroy(ctx->attach[i].data);
    free(ctx->attach);
    for (tile_module *m = ctx->modules, *n; m; m = n) {
        n = m->next;
        module_free(m);
    }
    for (int i = 0; i < ctx->nallocs; i++) {
        if (ctx->allocs[i].host) dev_unregister_host(ctx->dev, ctx->allocs[i].host, ctx->allocs[i].addr);
        else dev_free(ctx->dev, ctx->allocs[i].addr);
    }
    for (tile_stream s = ctx->streams, n; s; s = n) {
        n = s->next;
        if (s->magic == STREAM_MAGIC && !s->borrowed) dev_stream_destroy(ctx->dev, s->impl);
        handle_remove(s);
        free(s);
    }
    for (tile_event e = ctx->events, n; e; e = n) {
        n = e->next;
        if (e->impl) dev_event_destroy(ctx->dev, e->impl); /* live and destroyed ones keep theirs */
        handle_remove(e);
        free(e);
    }
    dev_close(ctx->dev);
    free(ctx->allocs);
    free(ctx->cache_dir);
    pthread_mutex_destroy(&ctx->lock);
    pthread_rwlock_destroy(&ctx->alloc_lock);
    free(ctx);
}

/* The first published tile_device_properties ended at max_shared_per_block: the exported
 * tile_context_get_properties writes that much, so a program built against it keeps working.  tile.h's macro of
 * that name sends source built since to _ex with the header's sizeof, which fills every field. */
enum { PROPS_V1_SIZE = offsetof(tile_device_properties, max_shared_per_block) + sizeof(int) };

/* fn: the name the caller used, for the messages (as context_get_stats) */
static tile_status context_get_properties(tile_context *ctx, tile_device_properties *out, size_t size, const char *fn) {
    if (!handle_live(ctx, HANDLE_CONTEXT)) return rt_no_context(fn, ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
    if (size < sizeof out->name) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: size %zu is smaller than the first field", fn, size);
    if (size > RT_STRUCT_MAX) /* as for the structs callers pass in: a size_t gone negative, not a struct */
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: size %zu is over 64 KiB", fn, size);
    char why[256];
    if (!rt_struct_out_size(&rt_layout_tile_device_properties, size, why, sizeof why))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s", fn, why);
    tile_device_properties p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "%s", ctx->devname);
    snprintf(p.arch, sizeof p.arch, "%s", ctx->arch);
    p.is_emulator = ctx->emu;
    p.max_threads_per_block = 1024;
    p.max_shared_per_block = ctx->target->smem_dynamic; /* tile_launch opts in past the static 48 KiB */
    p.multiprocessor_count = dev_num_sms(ctx->dev);
    memcpy(out, &p, size < sizeof p ? size : sizeof p);
    if (size > sizeof p) memset((char *)out + sizeof p, 0, size - sizeof p); /* a newer caller's fields this library lacks */
    return TILE_OK;
}

tile_status tile_context_get_properties_ex(tile_context *ctx, tile_device_properties *out, size_t size) {
    return context_get_properties(ctx, out, size, "tile_context_get_properties_ex");
}

tile_status (tile_context_get_properties)(tile_context *ctx, tile_device_properties *out) {
    return context_get_properties(ctx, out, PROPS_V1_SIZE, "tile_context_get_properties");
}

tile_status tile_device_check(const char *device) {
    DevSpec spec; /* NULL or "": the default, as tile_context_create takes it (TILE_DEVICE, checked when set) */
    char *err = NULL;
    if (dev_parse_spec(device, &spec, &err) != DEV_OK) return open_fail("tile_device_check", DEV_ERR_INVALID, err);
    return TILE_OK;
}

tile_status tile_context_device_key(tile_context *ctx, char *out, size_t size) {
    if (out && size) out[0] = 0; /* cleared before any check, the handle's included: a failed call leaves no earlier value (docs/runtime.md) */
    CHECK_CTX(ctx);
    if (!out || !size) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_context_device_key: out is NULL or size 0");
    if ((size_t)snprintf(out, size, "%s", ctx->devkey) >= size) {
        out[0] = 0; /* not a cut key */
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_context_device_key: the key needs %zu bytes", strlen(ctx->devkey) + 1);
    }
    return TILE_OK;
}

/* ---- tensor maps (checked and built in tensor_maps.c) ---- */
tile_status rt_device_tensor_map_encode(tile_context *ctx, const DevTensorMap *tm, void *out, const char *api) {
    DevStatus ds = dev_tensor_map_encode(ctx->dev, tm, out);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, api);
}

tile_status tile_tensor_map_encode(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global, const uint64_t *dims,
                                   const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides,
                                   tile_tensor_swizzle swizzle) {
    if (out) memset(out, 0, DEV_TENSOR_MAP_BYTES); /* cleared before any check, the handle's included: a failed call leaves no earlier value (docs/runtime.md) */
    CHECK_CTX(ctx);
    return rt_tensor_map_encode(ctx, out, dtype, rank, global, dims, strides, box, elem_strides, (int)swizzle);
}

tile_status tile_tensor_map_encode_im2col(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global, const uint64_t *dims,
                                          const uint64_t *strides, const int32_t *lower, const int32_t *upper, uint32_t channels_per_pixel,
                                          uint32_t pixels_per_column, const uint32_t *elem_strides, tile_tensor_swizzle swizzle,
                                          int nan_fill) {
    if (out) memset(out, 0, DEV_TENSOR_MAP_BYTES); /* as tile_tensor_map_encode's */
    CHECK_CTX(ctx);
    return rt_tensor_map_encode_im2col(ctx, out, dtype, rank, global, dims, strides, lower, upper, channels_per_pixel, pixels_per_column,
                                       elem_strides, (int)swizzle, nan_fill);
}

/* The first published tile_context_stats ended at load_seconds: the exported tile_context_get_stats writes that
 * much, so a program built against it keeps working; tile.h's macro of that name calls _ex with the header's sizeof. */
enum { STATS_V1_SIZE = offsetof(tile_context_stats, load_seconds) + sizeof(double) };

/* fn: the name the caller used, for the messages */
static tile_status context_get_stats(tile_context *ctx, tile_context_stats *out, size_t size, const char *fn) {
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
    if (size < sizeof(uint64_t))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: size %zu is smaller than the first field", fn, size);
    if (size > RT_STRUCT_MAX) /* as for the structs callers pass in: a size_t gone negative, not a struct */
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: size %zu is over 64 KiB", fn, size);
    char why[256]; /* half a counter would be written: refused, naming the field, as for the structs passed in */
    if (!rt_struct_out_size(&rt_layout_tile_context_stats, size, why, sizeof why)) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s", fn, why);
    tile_context_stats s;
    rt_lock(ctx);
    s = ctx->stats;
    rt_unlock(ctx);
    s.launches = atomic_load(&ctx->launches);
    s.allocations = atomic_load(&ctx->allocations);
    s.frees = atomic_load(&ctx->frees);
    s.synchronizations = atomic_load(&ctx->synchronizations);
    memcpy(out, &s, size < sizeof s ? size : sizeof s);
    if (size > sizeof s) memset((char *)out + sizeof s, 0, size - sizeof s); /* a newer caller's fields this library lacks */
    return TILE_OK;
}

tile_status tile_context_get_stats_ex(tile_context *ctx, tile_context_stats *out, size_t size) {
    CHECK_CTX(ctx);
    return context_get_stats(ctx, out, size, "tile_context_get_stats_ex");
}

tile_status (tile_context_get_stats)(tile_context *ctx, tile_context_stats *out) {
    CHECK_CTX(ctx);
    return context_get_stats(ctx, out, STATS_V1_SIZE, "tile_context_get_stats");
}

/* ---- memory ---- */
/* A call that makes the host wait for the device (tile_context_stats.synchronizations). */
void rt_count_sync(tile_context *ctx) { atomic_fetch_add_explicit(&ctx->synchronizations, 1, memory_order_relaxed); }

/* index of the allocation holding p, or -1 (lock held) */
static int find_alloc(tile_context *ctx, uint64_t p) {
    int lo = 0, hi = ctx->nallocs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const Alloc *a = &ctx->allocs[mid];
        if (p < a->addr) hi = mid - 1;
        else if (p >= a->addr + (a->size ? a->size : 1)) lo = mid + 1;
        else return mid;
    }
    return -1;
}

/* p in the table, else memory of the device's context the caller allocated (cuda: the driver is
 * asked, and its extent checked when the driver gives one). */
static tile_status check_range_locked(tile_context *ctx, tile_devptr p, uint64_t bytes, const char *what) {
    if (!p) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s is a null device pointer", what);
    int i = find_alloc(ctx, p);
    Alloc a;
    if (i >= 0) a = ctx->allocs[i];
    else {
        DevRange r;
        if (!dev_pointer_usable(ctx->dev, p, &r))
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                           "%s (0x%llx) was not allocated with tile_malloc on this context, nor registered with "
                           "tile_register_memory%s",
                           what, (unsigned long long)p, ctx->emu ? "" : ", nor is it memory of its CUDA context");
        if (!r.size) return TILE_OK; /* the driver knows it but not its extent */
        a = (Alloc){r.base, r.size, NULL};
    }
    if (bytes > a.size - (p - a.addr))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                       "%s: %llu bytes at 0x%llx run past the end of its allocation (%llu bytes at 0x%llx)", what,
                       (unsigned long long)bytes, (unsigned long long)p, (unsigned long long)a.size, (unsigned long long)a.addr);
    return TILE_OK;
}

tile_status rt_check_range(tile_context *ctx, tile_devptr p, uint64_t bytes, const char *what) {
    pthread_rwlock_rdlock(&ctx->alloc_lock);
    tile_status st = check_range_locked(ctx, p, bytes, what);
    pthread_rwlock_unlock(&ctx->alloc_lock);
    return st;
}

/* A kernel's pointer argument: null (the kernel may not use it), inside an
 * allocation of this context, or memory of the device's context that another
 * allocator made (cuda only: the driver is asked); or one past the last byte
 * of either (an empty slice's data pointer at the end of a buffer: CUDA and
 * Triton pass it, and a kernel that reads nothing through it is correct; an
 * access through it is still caught at run time, by memcheck on the emulator). */
static bool pointer_ok(tile_context *ctx, uint64_t p) {
    if (!p) return true;
    pthread_rwlock_rdlock(&ctx->alloc_lock);
    bool found = find_alloc(ctx, p) >= 0;
    if (!found) {
        int i = find_alloc(ctx, p - 1);
        found = i >= 0 && ctx->allocs[i].size && ctx->allocs[i].addr + ctx->allocs[i].size == p;
    }
    pthread_rwlock_unlock(&ctx->alloc_lock);
    if (found || dev_pointer_usable(ctx->dev, p, NULL)) return true;
    DevRange r;
    return p > 1 && dev_pointer_usable(ctx->dev, p - 1, &r) && r.size && r.base + r.size == p;
}

/* Room for one more allocation in the table (alloc_lock held for writing). */
static bool grow_allocs(tile_context *ctx) {
    int nc = ctx->cap ? ctx->cap * 2 : 64;
    Alloc *na = realloc(ctx->allocs, sizeof *na * (size_t)nc);
    if (!na) return false;
    ctx->allocs = na, ctx->cap = nc;
    return true;
}

/* Enter [p, p + bytes) in the table (alloc_lock held for writing; room made by the caller). */
static void insert_alloc_locked(tile_context *ctx, Alloc a) {
    int i = ctx->nallocs;
    while (i > 0 && ctx->allocs[i - 1].addr > a.addr) i--;
    memmove(&ctx->allocs[i + 1], &ctx->allocs[i], sizeof *ctx->allocs * (size_t)(ctx->nallocs - i));
    ctx->allocs[i] = a;
    ctx->nallocs++;
}

tile_status tile_malloc(tile_context *ctx, size_t bytes, tile_devptr *out) {
    if (out) *out = 0; /* cleared before any check, the handle's included: a failed call leaves no earlier value (docs/runtime.md) */
    CHECK_CTX(ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_malloc: out is NULL");
    if (bytes == 0) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_malloc: size is 0");
    if (bytes > ((size_t)1 << 46)) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_malloc: %zu bytes is more than any device has", bytes);
    pthread_rwlock_wrlock(&ctx->alloc_lock);
    uint64_t p;
    DevStatus ds = dev_malloc(ctx->dev, bytes, &p);
    tile_status st = TILE_OK;
    if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_malloc");
    else if (ctx->nallocs == ctx->cap && !grow_allocs(ctx)) {
        dev_free(ctx->dev, p);
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: out of host memory");
    } else {
        insert_alloc_locked(ctx, (Alloc){p, bytes, NULL});
        *out = p;
        atomic_fetch_add_explicit(&ctx->allocations, 1, memory_order_relaxed);
    }
    pthread_rwlock_unlock(&ctx->alloc_lock);
    return st;
}

tile_status tile_free(tile_context *ctx, tile_devptr p) {
    CHECK_CTX(ctx);
    if (!p) return TILE_OK;
    pthread_rwlock_wrlock(&ctx->alloc_lock);
    int i = find_alloc(ctx, p);
    tile_status st = TILE_OK;
    if (i < 0 || ctx->allocs[i].addr != p)
        st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_free: 0x%llx is not the start of an allocation of this context",
                     (unsigned long long)p);
    else if (ctx->allocs[i].host)
        st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_free: 0x%llx is registered host memory: tile_unregister_memory it",
                     (unsigned long long)p);
    else {
        DevStatus ds = dev_free(ctx->dev, p);
        atomic_fetch_add_explicit(&ctx->frees, 1, memory_order_relaxed);
        if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_free");
        memmove(&ctx->allocs[i], &ctx->allocs[i + 1], sizeof *ctx->allocs * (size_t)(ctx->nallocs - i - 1));
        ctx->nallocs--;
    }
    pthread_rwlock_unlock(&ctx->alloc_lock);
    return st;
}

tile_status tile_register_memory(tile_context *ctx, void *host_ptr, size_t bytes, tile_devptr *devptr) {
    if (devptr) *devptr = 0; /* as tile_malloc's */
    CHECK_CTX(ctx);
    if (!devptr) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_register_memory: devptr is NULL");
    if (!host_ptr || !bytes) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_register_memory: host_ptr is NULL or bytes is 0");
    uintptr_t h = (uintptr_t)host_ptr;
    if (bytes > UINTPTR_MAX - h) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_register_memory: the range wraps around");
    pthread_rwlock_wrlock(&ctx->alloc_lock);
    tile_status st = TILE_OK;
    for (int i = 0; i < ctx->nallocs && st == TILE_OK; i++) {
        const Alloc *a = &ctx->allocs[i];
        uintptr_t ah = (uintptr_t)a->host;
        if (a->host && h < ah + a->size && ah < h + bytes)
            st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                         "tile_register_memory: [%p, +%zu) overlaps host memory already registered on this context ([%p, +%llu) at 0x%llx)",
                         host_ptr, bytes, a->host, (unsigned long long)a->size, (unsigned long long)a->addr);
    }
    if (st == TILE_OK && ctx->nallocs == ctx->cap && !grow_allocs(ctx))
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_register_memory: out of host memory");
    uint64_t p = 0;
    DevStatus ds = st == TILE_OK ? dev_register_host(ctx->dev, host_ptr, bytes, &p) : DEV_OK;
    if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_register_memory");
    else if (st == TILE_OK && find_alloc(ctx, p) >= 0) { /* cannot happen: the device maps to fresh addresses */
        dev_unregister_host(ctx->dev, host_ptr, p);
        st = rt_fail(ctx, TILE_ERROR_INTERNAL, "tile_register_memory: the device mapped it over an allocation (0x%llx)", (unsigned long long)p);
    } else if (st == TILE_OK) {
        insert_alloc_locked(ctx, (Alloc){p, bytes, host_ptr});
        *devptr = p;
    }
    pthread_rwlock_unlock(&ctx->alloc_lock);
    return st;
}

tile_status tile_unregister_memory(tile_context *ctx, tile_devptr devptr) {
    CHECK_CTX(ctx);
    pthread_rwlock_wrlock(&ctx->alloc_lock);
    int i = devptr ? find_alloc(ctx, devptr) : -1;
    tile_status st = TILE_OK;
    if (i < 0 || ctx->allocs[i].addr != devptr || !ctx->allocs[i].host)
        st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                     "tile_unregister_memory: 0x%llx is not a device pointer tile_register_memory returned on this context",
                     (unsigned long long)devptr);
    else {
        DevStatus ds = dev_unregister_host(ctx->dev, ctx->allocs[i].host, devptr);
        if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_unregister_memory");
        memmove(&ctx->allocs[i], &ctx->allocs[i + 1], sizeof *ctx->allocs * (size_t)(ctx->nallocs - i - 1));
        ctx->nallocs--;
    }
    pthread_rwlock_unlock(&ctx->alloc_lock);
    return st;
}

tile_status tile_memcpy_htod(tile_context *ctx, tile_devptr dst, const void *src, size_t bytes) {
    CHECK_CTX(ctx);
    if (!bytes) return TILE_OK;
    if (!src) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_memcpy_htod: src is NULL");
    tile_status st = rt_check_range(ctx, dst, bytes, "tile_memcpy_htod: dst");
    if (st != TILE_OK) return st;
    rt_count_sync(ctx);
    DevStatus ds = dev_memcpy_htod(ctx->dev, dst, src, bytes);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_memcpy_htod");
}

tile_status tile_memcpy_dtoh(tile_context *ctx, void *dst, tile_devptr src, size_t bytes) {
    CHECK_CTX(ctx);
    if (!bytes) return TILE_OK;
    if (!dst) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_memcpy_dtoh: dst is NULL");
    tile_status st = rt_check_range(ctx, src, bytes, "tile_memcpy_dtoh: src");
    if (st != TILE_OK) return st;
    rt_count_sync(ctx);
    uint64_t begin = rt_launch_log_begin(&ctx->launch_log);
    DevStatus ds = dev_memcpy_dtoh(ctx->dev, dst, src, bytes);
    if (ds == DEV_OK) rt_launch_log_synced(&ctx->default_synced, begin); /* it waited for the default stream's launches */
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_memcpy_dtoh");
}

tile_status tile_memset(tile_context *ctx, tile_devptr dst, unsigned char value, size_t bytes) {
    CHECK_CTX(ctx);
    if (!bytes) return TILE_OK;
    tile_status st = rt_check_range(ctx, dst, bytes, "tile_memset: dst");
    if (st != TILE_OK) return st;
    rt_count_sync(ctx);
    DevStatus ds = dev_memset_d8(ctx->dev, dst, value, bytes);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_memset");
}

tile_status tile_context_interrupt(tile_context *ctx) {
    CHECK_CTX(ctx);
    DevStatus ds = dev_interrupt(ctx->dev);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_context_interrupt");
}

tile_status tile_synchronize(tile_context *ctx) {
    CHECK_CTX(ctx);
    rt_count_sync(ctx);
    uint64_t begin = rt_launch_log_begin(&ctx->launch_log);
    DevStatus ds = dev_synchronize(ctx->dev);
    if (ds == DEV_OK) rt_launch_log_synced(&ctx->launch_log.synced, begin);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_synchronize");
}

/* ---- modules ---- */
static tile_module *module_new(tile_context *ctx, TileDevModule *dm) {
    tile_module *m = calloc(1, sizeof *m);
    if (!m || !handle_add(m, HANDLE_MODULE)) return free(m), NULL;
    m->ctx = ctx;
    m->dm = dm;
    m->refs = 1;
    m->next = ctx->modules;
    ctx->modules = m;
    return m;
}

char *rt_tir_param_names(const char *tir, const char *name) {
    Str head = {0}, names = {0};
    str_printf(&head, "kernel @%s(", name);
    const char *p = tir && head.buf ? strstr(tir, head.buf) : NULL;
    if (!p) return str_free(&head), NULL;
    p += head.len;
    str_free(&head);
    str_printf(&names, "%s", "");
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',') p++;
        if (*p != '%') break;
        p++;
        size_t len = 0;
        while (isalnum((unsigned char)p[len]) || p[len] == '_') len++;
        str_printf(&names, "%s%.*s", names.len ? "," : "", (int)len, p);
        for (int depth = 0; *p && !(depth == 0 && (*p == ',' || *p == ')')); p++) /* past its type */
            depth += (*p == '<' || *p == '(') - (*p == '>' || *p == ')');
    }
    return names.buf;
}

/* Whether meta's cubin is machine code for exactly this GPU (an entry's arch is its target's name): then it is
 * loaded instead of its PTX, which the driver would compile again (and the PTX after all when the driver
 * refuses the cubin). */
static bool cubin_runs_here(tile_context *ctx, const tile_compiled *meta, const char *arch) {
    const Target *t = target_find(arch);
    RtImage img;
    char err[160];
    return meta->cubin && t && dev_compute_capability(ctx->dev) == t->sm &&
           rt_image_check(meta->cubin, meta->cubin_size, &img, err, sizeof err) && img.sm == t->sm;
}

static tile_status module_create_locked(tile_context *ctx, const char *ptx, bool use_cubin, bool user_asm, tile_compiled *meta,
                                        RtOrigin origin, tile_module **out) {
    TileDevModule *dm;
    double t0 = now_seconds();
    DevStatus ds = use_cubin ? dev_module_load_image(ctx->dev, meta->cubin, meta->cubin_size, &dm) : DEV_ERR_UNSUPPORTED;
    if (use_cubin && ds != DEV_OK && rt_options()->debug_launch)
        rt_debug("launch", "the driver refused the entry's cubin, loading its PTX: %s", dev_last_error(ctx->dev));
    if (ds != DEV_OK) ds = dev_module_load_ptx(ctx->dev, ptx, &dm); /* PTX, or after a refused cubin (a driver older than its ptxas) */
    ctx->stats.load_seconds += now_seconds() - t0;
    tile_module *m = ds == DEV_OK ? module_new(ctx, dm) : NULL;
    if (!m) {
        if (ds == DEV_OK) dev_module_unload(dm);
        tile_compiled_free(meta);
        if (origin.free) origin.free(origin.data);
        /* PTX tile compiled for this device's arch that the device refuses as PTX is tile's fault (the arch was checked
         * before the compile): TILE_ERROR_INTERNAL, the device's reason (the driver's JIT log) in the message, unless
         * it holds the source's own PTX (inline_asm_elementwise), which is the source's error as tile_module_load_ptx's
         * is: TILE_ERROR_COMPILE; a .version newer than the driver knows is an old driver: TILE_ERROR_UNSUPPORTED; the
         * rest keep the device's status */
        const char *why = *dev_last_error(ctx->dev) ? dev_last_error(ctx->dev) : dev_status_string(ds);
        if (ds == DEV_ERR_PTX && user_asm)
            return rt_fail(ctx, TILE_ERROR_COMPILE, "loading the compiled PTX: the device refused it, and it holds the source's "
                           "inline_asm_elementwise PTX: %s", !strncmp(why, "emu: ", 5) ? why + 5 : why);
        if (ds == DEV_ERR_PTX)
            return rt_fail(ctx, TILE_ERROR_INTERNAL, "loading the compiled PTX: the device refused the PTX tile made for it (a bug "
                           "in tile: please report it with the source and the arch): %s", why);
        if (ds == DEV_ERR_PTX_VERSION)
            return rt_fail(ctx, TILE_ERROR_UNSUPPORTED, "loading the compiled PTX: the driver is older than the PTX ISA version tile "
                           "writes (update the driver): %s", why);
        return ds != DEV_OK ? rt_dev_error(ctx, ds, "loading the compiled PTX")
                            : rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "loading the compiled PTX: out of host memory");
    }
    m->param_names = meta->nkernels > 0 ? calloc((size_t)meta->nkernels, sizeof *m->param_names) : NULL;
    for (int i = 0; m->param_names && i < meta->nkernels; i++) m->param_names[i] = rt_tir_param_names(meta->tir, meta->kernels[i].name);
    free(meta->ptx), free(meta->tir), free(meta->cubin);
    meta->ptx = meta->tir = NULL, meta->cubin = NULL;
    m->meta = *meta;
    memset(meta, 0, sizeof *meta);
    m->origin = origin;
    *out = m;
    return TILE_OK;
}

tile_status rt_module_create_locked(tile_context *ctx, const char *ptx, bool user_asm, tile_compiled *meta, RtOrigin origin,
                                    tile_module **out) {
    return module_create_locked(ctx, ptx, false, user_asm, meta, origin, out);
}

tile_status rt_module_create_entry_locked(tile_context *ctx, const char *arch, tile_compiled *meta, RtOrigin origin, tile_module **out) {
    bool use_cubin = cubin_runs_here(ctx, meta, arch);
    if (rt_options()->debug_launch)
        rt_debug("launch", "loading a cache entry for %s from its %s", arch, use_cubin ? "cubin" : "PTX");
    return module_create_locked(ctx, meta->ptx, use_cubin, false, meta, origin, out);
}

tile_module *rt_module_next_locked(tile_context *ctx, tile_module *prev) { return prev ? prev->next : ctx->modules; }
void *rt_module_origin(tile_module *m, void (*kind)(void *)) { return m->origin.free == kind ? m->origin.data : NULL; }
void rt_module_retain_locked(tile_module *m) { m->refs++; }

tile_status tile_module_load_ptx(tile_context *ctx, const char *ptx, tile_module **out) {
    if (out) *out = NULL; /* as tile_malloc's */
    CHECK_CTX(ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_load_ptx: out is NULL");
    if (!ptx) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_load_ptx: ptx is NULL");
    rt_lock(ctx);
    TileDevModule *dm;
    double t0 = now_seconds();
    DevStatus ds = dev_module_load_ptx(ctx->dev, ptx, &dm);
    ctx->stats.load_seconds += now_seconds() - t0;
    tile_status st = TILE_OK;
    tile_module *m = NULL;
    /* PTX the device cannot read (a syntax error, an unknown instruction, a newer GPU's .target) is the caller's
     * source with an error, as a .tile file's would be: TILE_ERROR_COMPILE, the device's reason (the emulator's names
     * the PTX line, the driver's JIT log ptxas's) in the message, and so is a .version newer than the driver's; the
     * rest keep the device's status */
    if (ds == DEV_ERR_PTX || ds == DEV_ERR_PTX_VERSION) {
        const char *why = *dev_last_error(ctx->dev) ? dev_last_error(ctx->dev) : dev_status_string(ds);
        st = rt_fail(ctx, TILE_ERROR_COMPILE, "tile_module_load_ptx: %s", !strncmp(why, "emu: ", 5) ? why + 5 : why);
    } else if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_module_load_ptx");
    else if (!(m = module_new(ctx, dm)) || !(m->ptx = strdup(ptx))) {
        if (m) ctx->modules = m->next, free(m);
        dev_module_unload(dm);
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_module_load_ptx: out of host memory");
    } else *out = m;
    rt_unlock(ctx);
    return st;
}

tile_status tile_module_load_cubin(tile_context *ctx, const void *image, size_t size, tile_module **out) {
    if (out) *out = NULL; /* as tile_malloc's */
    CHECK_CTX(ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_load_cubin: out is NULL");
    if (!image) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_load_cubin: image is NULL");
    RtImage img;
    char err[256];
    if (!rt_image_check(image, size, &img, err, sizeof err)) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_load_cubin: %s", err);
    /* A fatbin's PTX (uncompressed) is what the emulator runs, and it says the kernels' parameters and blocks */
    const Target *tgt = ctx->target;
    int cc = dev_compute_capability(ctx->dev), compressed = 0;
    char *ptx = img.kind == RT_IMAGE_FATBIN ? rt_image_ptx(image, size, cc ? cc : tgt->sm, &compressed) : NULL;
    if (!cc && !ptx) { /* the emulator: no machine code runs there */
        if (img.kind == RT_IMAGE_ELF)
            return rt_fail(ctx, TILE_ERROR_UNSUPPORTED, "tile_module_load_cubin: the cubin holds machine code (SASS) for sm_%d, which "
                           "the %s device cannot run: it runs PTX (tile_module_load_ptx, or a fatbin carrying uncompressed PTX "
                           "for %s or older: nvcc -fatbin --no-compress)", img.sm, dev_backend_name(ctx->dev), tgt->name);
        return rt_fail(ctx, TILE_ERROR_UNSUPPORTED, "tile_module_load_cubin: the fatbin carries no PTX the %s device can run (%s%s): "
                       "it runs PTX only, not machine code (make it with nvcc -fatbin --no-compress, or load PTX with "
                       "tile_module_load_ptx)", dev_backend_name(ctx->dev),
                       compressed ? "its PTX is compressed" : "no uncompressed PTX entry", compressed ? "" : " for this target or older");
    }
    rt_lock(ctx);
    TileDevModule *dm;
    double t0 = now_seconds();
    DevStatus ds = cc ? dev_module_load_image(ctx->dev, image, size, &dm) : dev_module_load_ptx(ctx->dev, ptx, &dm);
    ctx->stats.load_seconds += now_seconds() - t0;
    tile_status st = TILE_OK;
    tile_module *m = NULL;
    if (ds == DEV_ERR_PTX || ds == DEV_ERR_PTX_VERSION) { /* the fatbin's PTX, refused by the emulator */
        const char *why = *dev_last_error(ctx->dev) ? dev_last_error(ctx->dev) : dev_status_string(ds);
        st = rt_fail(ctx, TILE_ERROR_COMPILE, "tile_module_load_cubin: the fatbin's PTX: %s", !strncmp(why, "emu: ", 5) ? why + 5 : why);
    } else if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_module_load_cubin");
    else if (!(m = module_new(ctx, dm))) {
        dev_module_unload(dm);
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_module_load_cubin: out of host memory");
    } else {
        m->ptx = ptx, ptx = NULL; /* a fatbin's PTX: the kernels' parameters and blocks */
        m->image = !m->ptx;
        *out = m;
    }
    rt_unlock(ctx);
    free(ptx);
    return st;
}

void tile_module_unload(tile_module *m) {
    if (!handle_live(m, HANDLE_MODULE)) return; /* unloading twice is harmless */
    tile_context *ctx = m->ctx;
    rt_lock(ctx);
    if (--m->refs == 0) {
        for (tile_module **p = &ctx->modules; *p; p = &(*p)->next)
            if (*p == m) {
                *p = m->next;
                break;
            }
        module_free(m);
    }
    rt_unlock(ctx);
}

/* Parameter sizes from a signature "*f16:16, i32, f32" (pointers 8, scalars their width), and (spec) what the code
 * assumes of each value: ":16" divisible by 16 or 16-byte aligned, "=1" equal to one, "=None" 0 (SPEC_IS_NULL). */
enum { SPEC_IS_NULL = 255 }; /* a param_spec: the value must be 0 (raw PTX's are alignments, at most 128) */

const char *rt_arg_label(const char *names, int i, char *buf, size_t cap) {
    const char *p = names;
    for (int j = 0; p && j < i; j++) p = (p = strchr(p, ',')) ? p + 1 : NULL;
    size_t len = p ? strcspn(p, ",") : 0;
    if (len && !(len == 1 && *p == '?')) snprintf(buf, cap, "argument %d '%.*s'", i + 1, (int)len, p);
    else snprintf(buf, cap, "argument %d", i + 1);
    return buf;
}

static int signature_sizes(const char *sig, uint8_t **out, uint8_t **spec, bool **ptr) {
    int n = 0;
    uint8_t *v = malloc(strlen(sig) / 2 + 2);
    uint8_t *sp = calloc(strlen(sig) / 2 + 2, 1);
    bool *pp = calloc(strlen(sig) / 2 + 2, sizeof *pp);
    if (!v || !sp || !pp) {
        free(v), free(sp), free(pp);
        return -1;
    }
    for (const char *p = sig; *p;) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = p;
        size_t len = 0;
        while (t + len < e && t[len] != ':' && t[len] != '=') len++;
        int bytes = 8;
        if (*t != '*') {
            DType dt = dtype_from_name(t, len);
            bytes = dt == DT_VOID ? 8 : dtype_bytes(dt);
        }
        if (t[len] == ':' && !strncmp(t + len, ":16", 3)) sp[n] = 16;
        if (t[len] == '=' && !strncmp(t + len, "=1", 2)) sp[n] = 1;
        if (t[len] == '=' && !strncmp(t + len, "=None", 5)) sp[n] = SPEC_IS_NULL;
        pp[n] = *t == '*';
        v[n++] = (uint8_t)bytes;
        p = e;
    }
    *out = v;
    *spec = sp;
    *ptr = pp;
    return n;
}

/* A cubin's kernel: its parameters' sizes from the driver (cuFuncGetParamInfo), shown as "b32, b64, b8[24]";
 * nothing is known of which are pointers, and no block (launch with tile_launch_raw or a block in
 * tile_launch_ex).  A driver that cannot say leaves the parameters unknown (nparams -1, signature "?"). */
static void image_entry_layout(tile_kernel *k) {
    enum { MAX_PARAMS = 1024 };
    uint32_t sizes[MAX_PARAMS];
    int n = 0;
    if (dev_function_param_sizes(k->fn, sizes, MAX_PARAMS, &n) != DEV_OK) {
        k->raw_signature = strdup("?");
        return;
    }
    uint8_t *size = malloc((size_t)n + 1), *spec = calloc((size_t)n + 1, 1);
    bool *isptr = calloc((size_t)n + 1, sizeof *isptr);
    Str sig = {0};
    str_printf(&sig, "%s", "");
    for (int i = 0; size && i < n; i++) {
        size[i] = (uint8_t)(sizes[i] > 255 ? 255 : sizes[i]);
        if (sizes[i] == 1 || sizes[i] == 2 || sizes[i] == 4 || sizes[i] == 8) str_printf(&sig, "%sb%u", i ? ", " : "", sizes[i] * 8);
        else str_printf(&sig, "%sb8[%u]", i ? ", " : "", sizes[i]);
    }
    if (!size || !spec || !isptr || !sig.buf) { /* out of memory: unknown, as for a driver that cannot say */
        free(size), free(spec), free(isptr), str_free(&sig);
        k->raw_signature = strdup("?");
        return;
    }
    k->nparams = n;
    k->param_size = size;
    k->param_spec = spec;
    k->param_ptr = isptr;
    k->raw_signature = sig.buf;
}

tile_status tile_module_get_kernel(tile_module *m, const char *name, tile_kernel **out) {
    if (out) *out = NULL; /* as tile_malloc's */
    if (!handle_live(m, HANDLE_MODULE)) return dead_handle(__func__, m, "tile_module", "unloaded, or its context destroyed");
    tile_context *ctx = m->ctx;
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_get_kernel: out is NULL");
    if (!name) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_get_kernel: name is NULL");
    rt_lock(ctx);
    tile_status st = TILE_OK;
    for (tile_kernel *k = m->kernels; k; k = k->next)
        if (!strcmp(k->name, name)) {
            *out = k;
            goto done;
        }
    const tile_kernel_info *ki = NULL;
    const char *pnames = NULL;
    for (int i = 0; i < m->meta.nkernels; i++)
        if (!strcmp(m->meta.kernels[i].name, name)) ki = &m->meta.kernels[i], pnames = m->param_names ? m->param_names[i] : NULL;
    if (!ki && !m->ptx && !m->image) {
        Str names = {0};
        for (int i = 0; i < m->meta.nkernels; i++) str_printf(&names, "%s%s", i ? ", " : "", m->meta.kernels[i].name);
        st = rt_fail(ctx, TILE_ERROR_NOT_FOUND, "tile_module_get_kernel: the module has no kernel '%.200s' (it has: %s)", name, names.buf ? names.buf : "none");
        str_free(&names);
        goto done;
    }
    TileDevFunction *fn;
    DevStatus ds = dev_module_get_function(m->dm, name, &fn);
    if (ds != DEV_OK) {
        st = rt_dev_error(ctx, ds, "tile_module_get_kernel");
        if (ds == DEV_ERR_NOT_FOUND && m->ptx) { /* what the caller could have asked for, as a compiled module's message says */
            Str names = {0};
            rt_ptx_entry_names(m->ptx, &names);
            st = rt_fail(ctx, st, "%s; %s%s", tile_last_error(ctx), names.buf ? "the kernels of its PTX: " : "its PTX has no .entry", names.buf ? names.buf : "");
            str_free(&names);
        }
        goto done;
    }
    tile_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(name)) || !handle_add(k, HANDLE_KERNEL)) {
        if (k) free(k->name);
        free(k);
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_module_get_kernel: out of host memory");
        goto done;
    }
    k->ctx = ctx;
    k->mod = m;
    k->fn = fn;
    rt_launch_log_name(k->log_name, name);
    k->nparams = -1;
    if (ki) {
        k->block = 32u * (unsigned)ki->num_warps;
        k->smem = (unsigned)ki->smem_bytes;
        k->dyn_smem = ki->smem_dynamic || k->smem > (unsigned)ctx->target->smem_static ? k->smem : 0;
        k->nparams = signature_sizes(ki->signature, &k->param_size, &k->param_spec, &k->param_ptr);
        if (k->nparams < 0) {
            handle_remove(k);
            free(k->name), free(k);
            st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_module_get_kernel: out of host memory");
            goto done;
        }
        for (int i = 0; i < k->nparams; i++) k->any_spec |= k->param_spec[i] != 0, k->any_ptr |= k->param_ptr[i];
        int named = pnames && *pnames ? 1 : 0;
        for (const char *c = pnames; named && *c; c++) named += *c == ',';
        if (named == k->nparams && named > 0) k->param_names = strdup(pnames); /* else unknown (NULL on no memory too) */
        k->ntmaps = rt_tmaps_parse(ki->tensor_maps, k->nparams, &k->tmaps);
        if (k->ntmaps < 0) {
            handle_remove(k);
            free(k->param_size), free(k->param_spec), free(k->param_ptr), free(k->param_names), free(k->name), free(k);
            st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_get_kernel: kernel '%s': unreadable tensor maps '%s'", name,
                         ki->tensor_maps);
            goto done;
        }
        if (k->ntmaps > 0) k->tcache = rt_tmap_cache_new();
        k->attrs = (tile_kernel_attributes){k->name, k->nparams, ki->num_warps, ki->num_stages, k->block, k->smem, ki->signature,
                                            ki->registers};
    } else if (m->image) {
        image_entry_layout(k);
        k->attrs = (tile_kernel_attributes){k->name, k->nparams, 0, 0, 0, 0, k->raw_signature ? k->raw_signature : "", -1};
    } else {
        rt_ptx_entry_layout(m->ptx, name, k);
        k->attrs = (tile_kernel_attributes){k->name, k->nparams, (int)((k->block + 31) / 32), 0, k->block, 0,
                                            k->raw_signature ? k->raw_signature : "", -1};
    }
    k->next = m->kernels;
    m->kernels = k;
    *out = k;
done:
    rt_unlock(ctx);
    return st;
}

tile_status tile_module_get_kernel_names(tile_module *m, const char *const **names, int *count) {
    if (names) *names = NULL; /* as tile_malloc's, each one given */
    if (count) *count = 0;
    if (!handle_live(m, HANDLE_MODULE)) return dead_handle(__func__, m, "tile_module", "unloaded, or its context destroyed");
    tile_context *ctx = m->ctx;
    if (!names || !count) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_module_get_kernel_names: %s is NULL", names ? "count" : "names");
    if (m->image && !m->ptx)
        return rt_fail(ctx, TILE_ERROR_UNSUPPORTED, "tile_module_get_kernel_names: the module is machine code (a cubin), whose "
                       "kernels tile does not list: ask tile_module_get_kernel for one by name");
    rt_lock(ctx);
    tile_status st = TILE_OK;
    if (!m->names) {
        char **v = NULL;
        int n = m->meta.nkernels;
        if (m->ptx) n = rt_ptx_entries(m->ptx, &v); /* raw PTX: its .entry names, outside comments */
        else if ((v = calloc((size_t)n + 1, sizeof *v)))
            for (int i = 0; i < n; i++)
                if (!(v[i] = strdup(m->meta.kernels[i].name))) n = -1 - i; /* frees the i made */
        if (n < 0 && v) {
            for (int i = 0; i < -1 - n; i++) free(v[i]);
            free(v), v = NULL;
        }
        if (!v) st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_module_get_kernel_names: out of host memory");
        else m->names = v, m->nnames = n;
    }
    if (st == TILE_OK) *names = (const char *const *)m->names, *count = m->nnames;
    rt_unlock(ctx);
    return st;
}

tile_status tile_kernel_get_attributes(tile_kernel *k, tile_kernel_attributes *out) {
    if (out) memset(out, 0, sizeof *out); /* as tile_malloc's */
    if (!handle_live(k, HANDLE_KERNEL)) return dead_handle(__func__, k, "tile_kernel", "its module was unloaded, or its context destroyed");
    if (!out) return rt_fail(k->ctx, TILE_ERROR_INVALID_VALUE, "tile_kernel_get_attributes: out is NULL");
    *out = k->attrs;
    return TILE_OK;
}

/* ---- launches ---- */
/* api: the public call made, for the messages; call: the shipped call launching it (the launch log's), or NULL */
static tile_status launch(const char *api, const char *call, tile_kernel *k, tile_dim3 grid, tile_dim3 block, unsigned shared_bytes, void **args,
                          tile_stream stream, unsigned flags, const unsigned *cluster) {
    if (!handle_live(k, HANDLE_KERNEL)) return dead_handle(api, k, "tile_kernel", "its module was unloaded, or its context destroyed");
    tile_context *ctx = k->ctx;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': grid (%u,%u,%u) and block (%u,%u,%u) must be non-zero", k->name,
                       grid.x, grid.y, grid.z, block.x, block.y, block.z);
    if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': grid (%u,%u,%u) exceeds (2^31-1, 65535, 65535)", k->name, grid.x,
                       grid.y, grid.z);
    /* in 128 bits: three 32-bit dimensions overflow 64 (a .maxntid of 10^9 each named 11515845246265065472 threads) */
    unsigned __int128 threads = (unsigned __int128)block.x * block.y * block.z;
    if (threads > UINT64_MAX)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': block (%u,%u,%u) of more than 2^64 threads (at most 1024)", k->name,
                       block.x, block.y, block.z);
    if (threads > 1024)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': block of %llu threads (at most 1024)", k->name, (unsigned long long)threads);
    if (!k->raw_signature && k->block && (block.x != (unsigned)k->block || block.y != 1 || block.z != 1)) /* its PTX's .reqntid */
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                       "launch of '%s': block (%u,%u,%u), but the kernel was compiled for %d threads (its warps' layouts need "
                       "exactly that block)", k->name, block.x, block.y, block.z, k->block);
    /* a dynamic-smem kernel's own need arrives as shared_bytes: count it once */
    int smem_limit = target_max_smem_dynamic(); /* the device's own limit may be lower: it refuses then */
    if ((uint64_t)shared_bytes + (k->dyn_smem ? 0 : k->smem) > (uint64_t)smem_limit)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': %u bytes of dynamic shared memory and %u static (at most %d in all)",
                       k->name, shared_bytes, k->smem, smem_limit);
    if (k->nparams > 0) {
        if (!args)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': args is NULL but it takes %d parameter%s", k->name,
                           k->nparams, k->nparams == 1 ? "" : "s");
        char lab[96];
        for (int i = 0; i < k->nparams; i++)
            if (!args[i])
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': args[%d] (%s) is NULL", k->name, i,
                               rt_arg_label(k->param_names, i, lab, sizeof lab));
        /* a pointer the device would fault on (or, on another context's memory, silently corrupt) */
        for (int i = 0; k->any_ptr && i < k->nparams; i++)
            if (k->param_ptr[i] && !pointer_ok(ctx, *(const uint64_t *)args[i]))
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "launch of '%s': %s (0x%llx) is a pointer into no allocation of this context", k->name, rt_arg_label(k->param_names, i, lab, sizeof lab),
                               (unsigned long long)*(const uint64_t *)args[i]);
        /* the code was specialized: a value breaking its assumption would fault or compute garbage */
        for (int i = 0; k->any_spec && i < k->nparams; i++) {
            if (!k->param_spec[i]) continue;
            uint64_t v = k->param_size[i] == 8 ? *(const uint64_t *)args[i] : k->param_size[i] == 4 ? *(const uint32_t *)args[i]
                       : k->param_size[i] == 2 ? *(const uint16_t *)args[i] : *(const uint8_t *)args[i];
            if (k->param_spec[i] == 16 && v % 16 && !k->raw_signature && k->param_ptr[i]) /* an address: in hex, named as one */
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "launch of '%s': %s (0x%llx) is not a multiple of 16, but the kernel was compiled assuming "
                               "this pointer is 16-byte aligned (compile with no_align_ptrs, or specialize it =any)",
                               k->name, rt_arg_label(k->param_names, i, lab, sizeof lab), (unsigned long long)v);
            if (k->param_spec[i] == 16 && v % 16 && !k->raw_signature)
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "launch of '%s': %s is %llu, but the kernel was compiled assuming it is a multiple of 16 "
                               "(a 16-byte aligned pointer, or an integer specialized with =16; compile with no_align_ptrs or "
                               "without that specialization)",
                               k->name, rt_arg_label(k->param_names, i, lab, sizeof lab), (unsigned long long)v);
            if (k->raw_signature && v && v % k->param_spec[i]) /* PTX's .ptr .align N: the code may read N bytes at a time */
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "launch of '%s': %s (0x%llx) is not %u-byte aligned, as its PTX parameter declares "
                               "(.ptr .align %u)",
                               k->name, rt_arg_label(k->param_names, i, lab, sizeof lab), (unsigned long long)v, k->param_spec[i], k->param_spec[i]);
            if (k->param_spec[i] == SPEC_IS_NULL && v != 0 && !k->raw_signature)
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "launch of '%s': %s is 0x%llx, but the kernel was compiled with it None (specialized "
                               "=None): pass 0, or compile without that specialization", k->name, rt_arg_label(k->param_names, i, lab, sizeof lab), (unsigned long long)v);
            if (k->param_spec[i] == 1 && v != 1 && !k->raw_signature)
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "launch of '%s': %s is %llu, but the kernel was compiled assuming it equals 1", k->name, rt_arg_label(k->param_names, i, lab, sizeof lab),
                               (unsigned long long)v);
        }
    }
    void *dstream = NULL;
    if (stream && handle_live(stream, HANDLE_STREAM) && stream->magic == STREAM_MAGIC && stream->ctx == ctx) dstream = stream->impl;
    else if (stream) { /* the message says what is wrong with it */
        Str what = {0};
        str_printf(&what, "launch of '%s'", k->name);
        tile_status st = rt_check_stream(ctx, stream, what.buf, &dstream);
        str_free(&what);
        if (st != TILE_OK) return st;
    }
    const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    _Alignas(64) uint8_t maps[RT_MAX_TMAPS][DEV_TENSOR_MAP_BYTES];
    void *all[256 + RT_MAX_TMAPS];
    if (k->ntmaps > 0) { /* the kernel's tensor maps after its arguments */
        if (k->nparams > 256) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': over 256 parameters", k->name);
        DevStatus ds = DEV_OK;
        int which = 0;
        tile_status st = rt_tmaps_encode(ctx, ctx->dev, k->name, k->param_names, k->tmaps, k->ntmaps, k->param_size, args, maps, &ds, &which, k->tcache);
        if (ds != DEV_OK) {
            Str w = {0};
            str_printf(&w, "launch of '%s': tensor map %d", k->name, which);
            st = rt_dev_error(ctx, ds, w.buf);
            str_free(&w);
        }
        if (st != TILE_OK) return st;
        memcpy(all, args, sizeof *all * (size_t)k->nparams);
        for (int i = 0; i < k->ntmaps; i++) all[k->nparams + i] = maps[i];
        args = all;
    }
    DevStatus ds = dev_launch_flags(k->fn, g, b, shared_bytes, dstream, args, flags, cluster);
    atomic_fetch_add_explicit(&ctx->launches, 1, memory_order_relaxed);
    if (ds == DEV_OK) rt_launch_log_add(&ctx->launch_log, k->log_name, call, g, stream);
    if (ds != DEV_OK) {
        Str s = {0};
        str_printf(&s, "launch of '%s'", k->name);
        if (ds == DEV_ERR_DRIVER) { /* the driver's refusal (out of resources, ...) says nothing of what it was asked */
            str_printf(&s, " (grid %u,%u,%u, block %u,%u,%u, %u bytes of dynamic shared memory", g[0], g[1], g[2], b[0], b[1], b[2],
                       shared_bytes);
            if (cluster) str_printf(&s, ", cluster %u,%u,%u", cluster[0], cluster[1], cluster[2]);
            str_puts(&s, ")");
        }
        tile_status st = rt_dev_error(ctx, ds, s.buf);
        str_free(&s);
        return st;
    }
    return TILE_OK;
}

tile_status tile_launch_raw(tile_kernel *k, tile_dim3 grid, tile_dim3 block, unsigned shared_bytes, void **args, tile_stream stream) {
    return launch("tile_launch_raw", NULL, k, grid, block, shared_bytes, args, stream, 0, NULL);
}

static tile_status launch_kernel(const char *api, const char *call, tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream,
                                 const tile_launch_options *opt);

/* One registry lookup per launch (the launch path's cost), its message naming the call the caller made. */
tile_status tile_launch(tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream) {
    return launch_kernel("tile_launch", NULL, k, grid, args, stream, NULL);
}

tile_status rt_launch_for(const char *call, tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream) {
    return launch_kernel("tile_launch", call, k, grid, args, stream, NULL);
}

tile_status tile_launch_ex(tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream, const tile_launch_options *opt) {
    return launch_kernel("tile_launch_ex", NULL, k, grid, args, stream, opt);
}

static tile_status launch_kernel(const char *api, const char *call, tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream,
                                 const tile_launch_options *opt) {
    if (!handle_live(k, HANDLE_KERNEL)) return dead_handle(api, k, "tile_kernel", "its module was unloaded, or its context destroyed");
    /* the caller's struct may be older (shorter) than ours: what it lacks is zero, the default */
    tile_launch_options o = {0};
    char err[160];
    /* the options' refusals name the call and the kernel */
    if (opt && (!opt->size || !rt_struct_in(&o, opt, &rt_layout_tile_launch_options, sizeof o, err, sizeof err)))
        return rt_fail(k->ctx, TILE_ERROR_INVALID_VALUE, "tile_launch_ex: launch of '%s': opt->size = %zu is not the size of a "
                       "tile_launch_options", k->name, opt->size); /* older than the rule that 0 is the first layout: a size is required */
    if (o.programmatic_dependent_launch & ~1)
        return rt_fail(k->ctx, TILE_ERROR_INVALID_VALUE, "tile_launch_ex: launch of '%s': programmatic_dependent_launch = %d: 0 or 1",
                       k->name, o.programmatic_dependent_launch);
    if (o.cooperative & ~1)
        return rt_fail(k->ctx, TILE_ERROR_INVALID_VALUE, "tile_launch_ex: launch of '%s': cooperative = %d: 0 or 1", k->name, o.cooperative);
    unsigned flags = (o.programmatic_dependent_launch ? DEV_LAUNCH_PDL : 0) | (o.cooperative ? DEV_LAUNCH_COOPERATIVE : 0);
    const unsigned cl[3] = {o.cluster.x, o.cluster.y, o.cluster.z}, *cluster = cl[0] || cl[1] || cl[2] ? cl : NULL;
    if (cluster && (!cl[0] || !cl[1] || !cl[2] || (uint64_t)cl[0] * cl[1] * cl[2] > 16 || grid.x % cl[0] || grid.y % cl[1] ||
                    grid.z % cl[2]))
        return rt_fail(k->ctx, TILE_ERROR_INVALID_VALUE, "tile_launch_ex: launch of '%s': cluster (%u,%u,%u): each dimension "
                       "non-zero, at most 16 CTAs, dividing the grid (%u,%u,%u)", k->name, cl[0], cl[1], cl[2], grid.x, grid.y, grid.z);
    if (o.block.x || o.block.y || o.block.z) return launch(api, call, k, grid, o.block, o.shared_bytes, args, stream, flags, cluster);
    if (!k->block)
        return rt_fail(k->ctx, TILE_ERROR_INVALID_VALUE, "launch of '%s': its block size is unknown (raw PTX without .maxntid, "
                       "or a cubin): use tile_launch_raw, or tile_launch_ex with a block", k->name);
    /* static shared memory is declared in the PTX; beyond 48 KiB it is dynamic and passed here */
    /* raw PTX has no dynamic shared memory of its own: the caller's (its block from .maxntid / .reqntid) */
    if (k->block3.x) return launch(api, call, k, grid, k->block3, o.shared_bytes, args, stream, flags, cluster);
    return launch(api, call, k, grid, (tile_dim3){k->block, 1, 1}, k->dyn_smem, args, stream, flags, cluster);
}

/* device.c - device-string parsing and dispatch to the backends.
 *
 * Each public call checks its arguments, clears nothing on success (the
 * calling thread's last error stays readable until its next failure), and forwards to the
 * backend's DevBackendOps.  Modules and functions are wrapped here so
 * that a function knows its device and a module frees its functions. */
#include "runtime/device.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"
#include "support/support.h"
#include "support/target.h"

struct TileDevFunction {
    TileDevModule *mod;
    void *impl;
    char *name;
    TileDevFunction *next;
};

struct TileDevModule {
    TileDevice *dev;
    void *impl;
    TileDevFunction *funcs;
};

static const char *const status_strings[] = {
#define X(e, s) s,
    DEV_STATUSES(X)
#undef X
};

const char *dev_status_string(DevStatus s) {
    return (unsigned)s < ARRAY_LEN(status_strings) ? status_strings[s] : "unknown status";
}

/* The last failure's message, per thread: threads that share a device fail at once (a device fault fails
 * every serving thread's launch), so one message per device would be written and freed by several
 * threads together.  Each thread keeps the message of its last failure and the device it was on; the
 * caller reads it right after the failing call (dev_error in runtime.c). */
typedef struct DevErr {
    const TileDevice *dev;
    char *msg;
} DevErr;

static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;
static bool err_key_ok; /* false if the key could not be made: statuses without messages */

static void err_free(void *p) {
    DevErr *e = p;
    free(e->msg);
    free(e);
}
static void err_key_make(void) { err_key_ok = pthread_key_create(&err_key, err_free) == 0; }

static DevErr *err_slot(bool make) {
    pthread_once(&err_once, err_key_make);
    if (!err_key_ok) return NULL;
    DevErr *e = pthread_getspecific(err_key);
    if (!e && make && (e = calloc(1, sizeof *e)) && pthread_setspecific(err_key, e)) {
        free(e);
        e = NULL;
    }
    return e;
}

DevStatus dev_fail(TileDevice *dev, DevStatus status, const char *fmt, ...) {
    Str s = {0};
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap); /* before the old message goes: it may be an argument */
    va_end(ap);
    DevErr *e = err_slot(true);
    if (!e) { /* out of host memory: the status alone */
        str_free(&s);
        return status;
    }
    free(e->msg);
    e->dev = dev;
    e->msg = str_take(&s);
    return status;
}

/* The message of a device that failed to open, for the caller (then forgotten here). */
static char *take_error(const TileDevice *dev, DevStatus st) {
    DevErr *e = err_slot(false);
    if (!e || e->dev != dev || !e->msg) return strdup(dev_status_string(st));
    char *m = e->msg;
    e->msg = NULL, e->dev = NULL;
    return m;
}

/* The end of dev_open and dev_open_native, st being the backend's answer: the device in *out, or its message in
 * *errmsg (when errmsg is given) and the device freed. */
static DevStatus opened(TileDevice *dev, DevStatus st, TileDevice **out, char **errmsg) {
    if (st != DEV_OK) {
        char *m = take_error(dev, st);
        if (errmsg) *errmsg = m;
        else free(m);
        free(dev);
        return st;
    }
    *out = dev;
    return DEV_OK;
}

static DevStatus parse_fail(char **errmsg, const char *fmt, const char *what) {
    if (errmsg) {
        Str s = {0};
        str_printf(&s, fmt, what);
        *errmsg = str_take(&s);
    }
    return DEV_ERR_INVALID;
}

enum { EMU_DEFAULT_SMS = 132 };

int dev_num_sms(const TileDevice *dev) { return dev && dev->num_sms > 0 ? dev->num_sms : EMU_DEFAULT_SMS; }
int dev_compute_capability(const TileDevice *dev) { return dev ? dev->cc : 0; }

/* A number of a device string (sms=N, cuda:N), one rule for all: decimal digits only, at most max, no sign, space
 * or leading zero ("emu:sms=08" and "cuda:01" are bad strings, as "emu:sms=+8" and "emu:sms=8 " are). */
static bool dec_number(const char *p, size_t n, long max, long *out) {
    long v = 0;
    if (n == 0 || (n > 1 && p[0] == '0')) return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)p[i]) || (v = v * 10 + (p[i] - '0')) > max) return false;
    *out = v;
    return true;
}

/* One emulator option or target of "emu:...": "sms=N" (1..65536), "racecheck", "approx=exact|bound" or a target name. */
static bool emu_part(const char *p, size_t n, DevSpec *spec) {
    /* an option with a value at most once, as the target: "emu:approx=exact:approx=bound" took the last one
     * silently (racecheck again changes nothing: scripts append ":racecheck" to a device string) */
    if (n == 9 && !strncmp(p, "racecheck", 9)) {
        spec->racecheck = true;
        return true;
    }
    if (n > 7 && !strncmp(p, "approx=", 7)) {
        if (spec->approx) return false;
        if (n == 12 && !strncmp(p + 7, "exact", 5)) spec->approx = 1;
        else if (n == 12 && !strncmp(p + 7, "bound", 5)) spec->approx = 2;
        else return false;
        return true;
    }
    if (n >= 4 && !strncmp(p, "sms=", 4)) {
        long v;
        if (spec->sms || !dec_number(p + 4, n - 4, 65536, &v) || v < 1) return false;
        spec->sms = (int)v;
        return true;
    }
    char name[32];
    if (n == 0 || n >= sizeof name || spec->target) return false;
    memcpy(name, p, n);
    name[n] = 0;
    return (spec->target = target_find(name)) != NULL;
}

/* The one grammar of device strings (extend it here, e.g. with more emu options):
 *   device = "emu" { ":" ( target | option ) } | "cuda" [ ":" N ]
 *   (sms= and approx= at most once each, like the target; racecheck again changes nothing; names are case-sensitive)
 *   N = decimal digits: no sign, space or leading zero (dec_number), "cuda:0" .. "cuda:1048576"
 *   target = a name of the target table (support/target.h), e.g. "sm_90a" (at most one)
 *   option = "sms=" N: the multiprocessor count num_sms() and tile_device_properties_ex
 *            report (default 132), so "emu:sm_90a:sms=132"
 *          | "racecheck": the emulator's race checks on (DevOptions.emu_racecheck), so that a device
 *            string alone (TILE_DEVICE, tile run --device) turns them on: "emu:sm_90a:racecheck"
 *          | "approx=exact" | "approx=bound": .approx results exact (the default) or moved by the PTX ISA's
 *            documented error (DevOptions.emu_approx_bound), over TILE_EMU_APPROX: "emu:approx=bound" */
DevStatus dev_parse_spec(const char *device, DevSpec *spec, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    *spec = (DevSpec){DEV_BACKEND_EMU, 0, NULL, 0, false, 0};
    const char *src = "device string";
    if (!device || !*device) {
        device = getenv("TILE_DEVICE");
        src = "TILE_DEVICE";
        if (!device || !*device) {
            spec->backend = dev_cuda_available() ? DEV_BACKEND_CUDA : DEV_BACKEND_EMU;
            return DEV_OK;
        }
    }
    if (strcmp(device, "emu") == 0) return DEV_OK;
    if (strncmp(device, "emu:", 4) == 0) {
        for (const char *p = device + 4;;) {
            const char *e = strchr(p, ':');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (!emu_part(p, n, spec)) {
                if (errmsg) {
                    char names[128];
                    Str s = {0};
                    char part[32];
                    snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part ? n : sizeof part - 1), p);
                    bool again = (n >= 7 && !strncmp(p, "approx=", 7) && spec->approx) || (n >= 4 && !strncmp(p, "sms=", 4) && spec->sms);
                    if (again) /* a known option given twice */
                        str_printf(&s, "bad %s '%s': '%.*s': the option %.*s is given twice (at most once)", src, device, (int)n, p,
                                   (int)(memchr(p, '=', n) ? (const char *)memchr(p, '=', n) - p : (ptrdiff_t)n), p);
                    else if (n >= 4 && !strncmp(p, "sms=", 4)) /* a known option with a bad value */
                        str_printf(&s, "bad %s '%s': '%.*s': sms takes a multiprocessor count from 1 to 65536 (decimal digits, no "
                                   "sign or leading zero)", src, device, (int)n, p);
                    else if (n >= 7 && !strncmp(p, "approx=", 7))
                        str_printf(&s, "bad %s '%s': '%.*s': approx takes exact or bound", src, device, (int)n, p);
                    else if (n == 0)
                        str_printf(&s, "bad %s '%s': an empty part between ':'s (expected emu:<target> with one of %s, and options "
                                   "such as sms=132 and racecheck)", src, device, target_names(names, sizeof names));
                    else if (spec->target && n < sizeof part && target_find(part))
                        str_printf(&s, "bad %s '%s': a second target '%s' after '%s' (one target at most)", src, device, part,
                                   spec->target->name);
                    else {
                        const Target *near = n < sizeof part ? target_near(part) : NULL;
                        str_printf(&s, "bad %s '%s': unknown emulator target or option '%.*s'%s%s%s (expected emu:%s with one of %s, "
                                   "and options such as sms=132 and racecheck)", src, device, (int)n, p,
                                   near ? "; did you mean '" : "", near ? near->name : "", near ? "'?" : "", "<target>",
                                   target_names(names, sizeof names));
                    }
                    *errmsg = str_take(&s);
                }
                return DEV_ERR_INVALID;
            }
            if (!e) return DEV_OK;
            p = e + 1;
        }
    }
    if (strncmp(device, "cuda", 4) == 0 && (device[4] == 0 || device[4] == ':')) {
        spec->backend = DEV_BACKEND_CUDA;
        if (device[4] == ':') {
            long v;
            if (!dec_number(device + 5, strlen(device + 5), 1 << 20, &v)) goto bad;
            spec->ordinal = (int)v;
        }
        return DEV_OK;
    }
bad:
    if (errmsg) {
        Str s = {0};
        str_printf(&s, "bad %s '%s': expected \"emu\", \"emu:<target>\", \"emu:sms=N\", \"cuda\" or \"cuda:N\" (N in decimal "
                             "digits, no sign or leading zero)", src, device);
        *errmsg = str_take(&s);
    }
    return DEV_ERR_INVALID;
}

DevStatus dev_parse_device(const char *device, DevBackend *backend, int *ordinal, char **errmsg) {
    DevSpec spec;
    DevStatus st = dev_parse_spec(device, &spec, errmsg);
    *backend = spec.backend;
    *ordinal = spec.ordinal;
    return st;
}

const Target *dev_target(const TileDevice *dev) { return dev ? dev->target : NULL; }

DevStatus dev_open(const char *device, const DevOptions *opts, TileDevice **out, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (!out) return parse_fail(errmsg, "dev_open: %s is NULL", "out");
    *out = NULL;
    DevSpec spec;
    DevStatus st = dev_parse_spec(device, &spec, errmsg);
    if (st != DEV_OK) return st;
    int ordinal = spec.ordinal;
    TileDevice *dev = calloc(1, sizeof *dev);
    if (!dev) return parse_fail(errmsg, "dev_open: %s", "out of host memory");
    dev->ops = spec.backend == DEV_BACKEND_CUDA ? &dev_cuda_ops : &dev_emu_ops;
    dev->ordinal = ordinal;
    dev->target = spec.target;
    dev->num_sms = spec.sms; /* the emulator's; a GPU's backend asks its driver */
    if (opts) dev->opts = *opts;
    if (spec.racecheck) dev->opts.emu_racecheck = true;
    if (spec.backend == DEV_BACKEND_EMU) {
        /* .approx results: the device string's approx=, else TILE_EMU_APPROX (options.c) turns the bound mode on */
        const RtOptions *ro = rt_options();
        if (!spec.approx && ro->emu_approx_bad) {
            free(dev);
            return parse_fail(errmsg, "%s", "TILE_EMU_APPROX is neither exact nor bound (how the emulator computes .approx "
                                            "instructions; a device string's approx= overrides it)");
        }
        if (spec.approx) dev->opts.emu_approx_bound = spec.approx == 2;
        else if (ro->emu_approx_bound) dev->opts.emu_approx_bound = true;
    }
    return opened(dev, dev->ops->open(dev, ordinal), out, errmsg);
}

DevStatus dev_open_native(void *native_context, const DevOptions *opts, TileDevice **out, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (!out) return parse_fail(errmsg, "dev_open_native: %s is NULL", "out");
    *out = NULL;
    if (!native_context) return parse_fail(errmsg, "dev_open_native: %s is NULL", "the native context");
    TileDevice *dev = calloc(1, sizeof *dev);
    if (!dev) return parse_fail(errmsg, "dev_open_native: %s", "out of host memory");
    dev->ops = &dev_cuda_ops;
    if (opts) dev->opts = *opts;
    return opened(dev, dev->ops->open_native(dev, native_context), out, errmsg);
}

void dev_close(TileDevice *dev) {
    if (!dev) return;
    dev->ops->close(dev);
    DevErr *e = err_slot(false);
    if (e && e->dev == dev) free(e->msg), e->msg = NULL, e->dev = NULL;
    free(dev);
}

const char *dev_last_error(const TileDevice *dev) {
    DevErr *e = dev ? err_slot(false) : NULL;
    return e && e->dev == dev && e->msg ? e->msg : "";
}
const char *dev_backend_name(const TileDevice *dev) { return dev ? dev->ops->name : "none"; }

DevStatus dev_model(TileDevice *dev, char *out, size_t n) {
    if (!dev || !out || !n) return DEV_ERR_INVALID;
    DevStatus st = DEV_OK;
    if (dev->ops->model) st = dev->ops->model(dev, out, n);
    else snprintf(out, n, "%s", dev->ops->name);
    if (st != DEV_OK) snprintf(out, n, "%s", dev->ops->name);
    for (char *p = out; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
    return st;
}

DevStatus dev_malloc(TileDevice *dev, size_t bytes, uint64_t *dptr) {
    if (!dev || !dptr) return dev ? dev_fail(dev, DEV_ERR_INVALID, "dev_malloc: dptr is NULL") : DEV_ERR_INVALID;
    *dptr = 0;
    return dev->ops->malloc(dev, bytes, dptr);
}

DevStatus dev_free(TileDevice *dev, uint64_t dptr) {
    if (!dev) return DEV_ERR_INVALID;
    if (!dptr) return DEV_OK;
    return dev->ops->free(dev, dptr);
}

DevStatus dev_memcpy_htod(TileDevice *dev, uint64_t dst, const void *src, size_t bytes) {
    if (!dev) return DEV_ERR_INVALID;
    if (!bytes) return DEV_OK;
    if (!src) return dev_fail(dev, DEV_ERR_INVALID, "dev_memcpy_htod: src is NULL");
    return dev->ops->htod(dev, dst, src, bytes);
}

DevStatus dev_memcpy_dtoh(TileDevice *dev, void *dst, uint64_t src, size_t bytes) {
    if (!dev) return DEV_ERR_INVALID;
    if (!bytes) return DEV_OK;
    if (!dst) return dev_fail(dev, DEV_ERR_INVALID, "dev_memcpy_dtoh: dst is NULL");
    return dev->ops->dtoh(dev, dst, src, bytes);
}

DevStatus dev_memset_d8(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes) {
    if (!dev) return DEV_ERR_INVALID;
    if (!bytes) return DEV_OK;
    return dev->ops->memset8(dev, dst, value, bytes);
}

DevStatus dev_module_load_ptx(TileDevice *dev, const char *ptx, TileDevModule **out) {
    if (!dev) return DEV_ERR_INVALID;
    if (!ptx || !out) return dev_fail(dev, DEV_ERR_INVALID, "dev_module_load_ptx: %s is NULL", ptx ? "out" : "ptx");
    *out = NULL;
    TileDevModule *m = calloc(1, sizeof *m);
    if (!m) return dev_fail(dev, DEV_ERR_INVALID, "dev_module_load_ptx: out of host memory");
    m->dev = dev;
    DevStatus st = dev->ops->module_load(dev, ptx, &m->impl);
    if (st != DEV_OK) {
        free(m);
        return st;
    }
    *out = m;
    return DEV_OK;
}

DevStatus dev_module_load_image(TileDevice *dev, const void *image, size_t size, TileDevModule **out) {
    if (!dev) return DEV_ERR_INVALID;
    if (!image || !out) return dev_fail(dev, DEV_ERR_INVALID, "dev_module_load_image: %s is NULL", image ? "out" : "image");
    *out = NULL;
    if (!dev->ops->module_load_image)
        return dev_fail(dev, DEV_ERR_UNSUPPORTED, "%s: a cubin holds machine code (SASS) for a GPU, which the %s device cannot run",
                        dev->ops->name, dev->ops->name);
    TileDevModule *m = calloc(1, sizeof *m);
    if (!m) return dev_fail(dev, DEV_ERR_INVALID, "dev_module_load_image: out of host memory");
    m->dev = dev;
    DevStatus st = dev->ops->module_load_image(dev, image, size, &m->impl);
    if (st != DEV_OK) {
        free(m);
        return st;
    }
    *out = m;
    return DEV_OK;
}

DevStatus dev_function_param_sizes(TileDevFunction *fn, uint32_t *sizes, int cap, int *n) {
    if (!fn) return DEV_ERR_INVALID;
    TileDevice *dev = fn->mod->dev;
    *n = 0;
    if (!dev->ops->param_sizes) return dev_fail(dev, DEV_ERR_UNSUPPORTED, "%s: parameter sizes are not reported", dev->ops->name);
    return dev->ops->param_sizes(dev, fn->impl, sizes, cap, n);
}

void dev_module_unload(TileDevModule *mod) {
    if (!mod) return;
    for (TileDevFunction *f = mod->funcs, *n; f; f = n) {
        n = f->next;
        free(f->name);
        free(f);
    }
    mod->dev->ops->module_unload(mod->dev, mod->impl);
    free(mod);
}

DevStatus dev_module_get_function(TileDevModule *mod, const char *name, TileDevFunction **out) {
    if (!mod) return DEV_ERR_INVALID;
    TileDevice *dev = mod->dev;
    if (!name || !out) return dev_fail(dev, DEV_ERR_INVALID, "dev_module_get_function: %s is NULL", name ? "out" : "name");
    *out = NULL;
    for (TileDevFunction *f = mod->funcs; f; f = f->next)
        if (strcmp(f->name, name) == 0) {
            *out = f;
            return DEV_OK;
        }
    void *impl = NULL;
    DevStatus st = dev->ops->get_function(dev, mod->impl, name, &impl);
    if (st != DEV_OK) return st;
    TileDevFunction *f = calloc(1, sizeof *f);
    if (!f || !(f->name = strdup(name))) {
        free(f);
        return dev_fail(dev, DEV_ERR_INVALID, "dev_module_get_function: out of host memory");
    }
    f->mod = mod;
    f->impl = impl;
    f->next = mod->funcs;
    mod->funcs = f;
    *out = f;
    return DEV_OK;
}

DevStatus dev_launch_flags(TileDevFunction *fn, const unsigned grid[3], const unsigned block[3], unsigned smem_bytes, void *stream,
                           void **params, unsigned flags, const unsigned *cluster) {
    if (!fn) return DEV_ERR_INVALID;
    TileDevice *dev = fn->mod->dev;
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
        return dev_fail(dev, DEV_ERR_INVALID, "launch of '%s': grid (%u,%u,%u) and block (%u,%u,%u) must be non-zero",
                        fn->name, grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    __atomic_store_n(&dev->last.instructions, 0, __ATOMIC_RELAXED); /* launches on other threads write it too */
    if (cluster && !cluster[0] && !cluster[1] && !cluster[2]) cluster = NULL;
    if (cluster && (!cluster[0] || !cluster[1] || !cluster[2]))
        return dev_fail(dev, DEV_ERR_INVALID, "launch of '%s': cluster (%u,%u,%u) must be all zero (none) or all non-zero", fn->name,
                        cluster[0], cluster[1], cluster[2]);
    return dev->ops->launch(dev, fn->impl, grid, block, smem_bytes, stream, params, flags, cluster);
}

DevStatus dev_launch(TileDevFunction *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                     unsigned smem_bytes, void *stream, void **params) {
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return dev_launch_flags(fn, grid, block, smem_bytes, stream, params, 0, NULL);
}

DevStatus dev_synchronize(TileDevice *dev) {
    if (!dev) return DEV_ERR_INVALID;
    return dev->ops->synchronize(dev);
}

bool dev_pointer_usable(TileDevice *dev, uint64_t p, DevRange *range) {
    DevRange r = {0, 0};
    bool ok = dev && dev->ops->pointer_usable && dev->ops->pointer_usable(dev, p, &r);
    if (range) *range = ok ? r : (DevRange){0, 0};
    return ok;
}

/* Whether the process may write every byte of [p, p + bytes), from /proc/self/maps: 1 yes, 0 no (a page
 * not mapped writable: a write through the registration would kill the process), -1 unknown (no /proc). */
static int host_writable(const void *p, size_t bytes) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    uintptr_t at = (uintptr_t)p, end = at + bytes;
    char line[512];
    int ok = 0;
    while (at < end && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 || hi <= at) continue;
        if (lo > at || perms[1] != 'w') break; /* a hole, or a page not writable */
        at = (uintptr_t)hi;
    }
    ok = at >= end;
    fclose(f);
    return ok;
}

DevStatus dev_register_host(TileDevice *dev, void *host, size_t bytes, uint64_t *dptr) {
    if (!dev) return DEV_ERR_INVALID;
    if (!dptr || !host || !bytes) return dev_fail(dev, DEV_ERR_INVALID, "dev_register_host: host is NULL, bytes 0 or dptr NULL");
    *dptr = 0;
    if (!dev->ops->register_host)
        return dev_fail(dev, DEV_ERR_UNSUPPORTED, "%s: registering host memory is not supported", dev->ops->name);
    /* on every backend (the driver's own refusal is a bare "invalid argument"): memory kernels may write must be
     * writable; on the emulator a store through read-only pages killed the process */
    if (!host_writable(host, bytes))
        return dev_fail(dev, DEV_ERR_INVALID, "%s: %zu bytes at %p are not all writable memory of this process (read-only or unmapped "
                                              "pages): kernels and copies write registered memory in place", dev->ops->name, bytes, host);
    return dev->ops->register_host(dev, host, bytes, dptr);
}

DevStatus dev_interrupt(TileDevice *dev) {
    if (!dev) return DEV_ERR_INVALID;
    if (!dev->ops->interrupt) return dev_fail(dev, DEV_ERR_UNSUPPORTED, "%s: a running kernel cannot be interrupted", dev->ops->name);
    return dev->ops->interrupt(dev);
}

DevStatus dev_unregister_host(TileDevice *dev, void *host, uint64_t dptr) {
    if (!dev) return DEV_ERR_INVALID;
    if (!dev->ops->unregister_host)
        return dev_fail(dev, DEV_ERR_UNSUPPORTED, "%s: registering host memory is not supported", dev->ops->name);
    return dev->ops->unregister_host(dev, host, dptr);
}

DevStatus dev_stream_check_native(TileDevice *dev, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!stream) return DEV_OK;
    if (!dev->ops->stream_check_native)
        return dev_fail(dev, DEV_ERR_UNSUPPORTED, "%s: there are no native streams here: only NULL (the default stream) can be wrapped",
                        dev->ops->name);
    return dev->ops->stream_check_native(dev, stream);
}

DevStatus dev_tensor_map_encode(TileDevice *dev, const DevTensorMap *tm, void *out) {
    if (!dev) return DEV_ERR_INVALID;
    if (!tm || !out) return dev_fail(dev, DEV_ERR_INVALID, "dev_tensor_map_encode: %s is NULL", tm ? "out" : "tm");
    if ((uintptr_t)out % 64) return dev_fail(dev, DEV_ERR_INVALID, "dev_tensor_map_encode: out is not 64-byte aligned");
    if (!dev->ops->tensor_map_encode)
        return dev_fail(dev, DEV_ERR_UNSUPPORTED, "%s: tensor maps are not supported", dev->ops->name);
    return dev->ops->tensor_map_encode(dev, tm, out);
}

DevStatus dev_last_launch_stats(TileDevice *dev, DevLaunchStats *stats) {
    if (!dev || !stats) return DEV_ERR_INVALID;
    stats->instructions = __atomic_load_n(&dev->last.instructions, __ATOMIC_RELAXED);
    return DEV_OK;
}

/* ---- streams and events ---- */
DevStatus dev_stream_create(TileDevice *dev, void **stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!stream) return dev_fail(dev, DEV_ERR_INVALID, "dev_stream_create: stream is NULL");
    *stream = NULL;
    return dev->ops->stream_create(dev, stream);
}

DevStatus dev_stream_destroy(TileDevice *dev, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!stream) return dev_fail(dev, DEV_ERR_INVALID, "dev_stream_destroy: the default stream cannot be destroyed");
    return dev->ops->stream_destroy(dev, stream);
}

DevStatus dev_stream_synchronize(TileDevice *dev, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    return dev->ops->stream_synchronize(dev, stream);
}

DevStatus dev_stream_wait_event(TileDevice *dev, void *stream, void *event) {
    if (!dev) return DEV_ERR_INVALID;
    if (!event) return dev_fail(dev, DEV_ERR_INVALID, "dev_stream_wait_event: event is NULL");
    return dev->ops->stream_wait_event(dev, stream, event);
}

DevStatus dev_event_create(TileDevice *dev, void **event) {
    if (!dev) return DEV_ERR_INVALID;
    if (!event) return dev_fail(dev, DEV_ERR_INVALID, "dev_event_create: event is NULL");
    *event = NULL;
    return dev->ops->event_create(dev, event);
}

DevStatus dev_event_destroy(TileDevice *dev, void *event) {
    if (!dev) return DEV_ERR_INVALID;
    if (!event) return DEV_OK;
    return dev->ops->event_destroy(dev, event);
}

DevStatus dev_event_record(TileDevice *dev, void *event, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!event) return dev_fail(dev, DEV_ERR_INVALID, "dev_event_record: event is NULL");
    return dev->ops->event_record(dev, event, stream);
}

DevStatus dev_event_synchronize(TileDevice *dev, void *event) {
    if (!dev) return DEV_ERR_INVALID;
    if (!event) return dev_fail(dev, DEV_ERR_INVALID, "dev_event_synchronize: event is NULL");
    return dev->ops->event_synchronize(dev, event);
}

DevStatus dev_event_elapsed_ms(TileDevice *dev, void *start, void *end, float *ms) {
    if (!dev) return DEV_ERR_INVALID;
    if (!start || !end || !ms) return dev_fail(dev, DEV_ERR_INVALID, "dev_event_elapsed_ms: %s is NULL", !start ? "start" : !end ? "end" : "ms");
    return dev->ops->event_elapsed_ms(dev, start, end, ms);
}

DevStatus dev_memcpy_htod_async(TileDevice *dev, uint64_t dst, const void *src, size_t bytes, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!bytes) return DEV_OK;
    if (!src) return dev_fail(dev, DEV_ERR_INVALID, "dev_memcpy_htod_async: src is NULL");
    return dev->ops->htod_async(dev, dst, src, bytes, stream);
}

DevStatus dev_memcpy_dtoh_async(TileDevice *dev, void *dst, uint64_t src, size_t bytes, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!bytes) return DEV_OK;
    if (!dst) return dev_fail(dev, DEV_ERR_INVALID, "dev_memcpy_dtoh_async: dst is NULL");
    return dev->ops->dtoh_async(dev, dst, src, bytes, stream);
}

DevStatus dev_memset_d8_async(TileDevice *dev, uint64_t dst, uint8_t value, size_t bytes, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!bytes) return DEV_OK;
    return dev->ops->memset8_async(dev, dst, value, bytes, stream);
}

DevStatus dev_memset2d_d8_async(TileDevice *dev, uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t rows, void *stream) {
    if (!dev) return DEV_ERR_INVALID;
    if (!width || !rows) return DEV_OK;
    if (rows > 1 && pitch < width) return dev_fail(dev, DEV_ERR_INVALID, "dev_memset2d_d8_async: pitch %zu < width %zu", pitch, width);
    if (rows == 1 || pitch == width) return dev->ops->memset8_async(dev, dst, value, width * rows, stream);
    if (dev->ops->memset2d8_async) return dev->ops->memset2d8_async(dev, dst, pitch, value, width, rows, stream);
    DevStatus st = DEV_OK;
    for (size_t r = 0; r < rows && st == DEV_OK; r++) st = dev->ops->memset8_async(dev, dst + r * pitch, value, width, stream);
    return st;
}

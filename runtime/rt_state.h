/* rt_state.h - what the runtime's own files share (runtime.c, streams.c): the handles' structures and
 * the helpers between them.  Not for the layers above, which see runtime/rt.h. */
#ifndef TILE_RT_STATE_H
#define TILE_RT_STATE_H

#include "runtime/rt.h"
#include "runtime/device.h"
#include "runtime/handles.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum { STREAM_MAGIC = 0x74317373, EVENT_MAGIC = 0x74316565, DEAD_STREAM_MAGIC = 0x7431dd73, DEAD_EVENT_MAGIC = 0x7431dd65 };

typedef struct Alloc {
    uint64_t addr, size;
    void *host; /* tile_register_memory: the caller's host memory (never freed here); NULL: tile_malloc's */
} Alloc;

/* ---- launch_log.c: the launches not yet known to have finished, named when a kernel's fault surfaces ---- */
enum { RT_LAUNCH_LOG = 8, RT_LAUNCH_NAME_WORDS = 8 /* 63 characters of a kernel's name */ };
typedef struct RtLaunchSlot {
    _Atomic uint64_t seq; /* 0 never written; odd while a launch writes it; 2 * (number + 1) once written */
    uint64_t name[RT_LAUNCH_NAME_WORDS]; /* these fields only through relaxed atomic loads and stores */
    const char *call;     /* the shipped call that launched it (tile_gemm); NULL: the caller's own launch */
    tile_stream stream;   /* NULL: the default stream */
    unsigned grid[3];
} RtLaunchSlot;
typedef struct RtLaunchLog {
    _Atomic uint64_t next;   /* the number the next launch gets */
    _Atomic uint64_t synced; /* launches numbered below it finished (tile_synchronize) */
    RtLaunchSlot slot[RT_LAUNCH_LOG];
} RtLaunchLog;
/* name padded with zeros into out (a longer one cut, ending "..."): what rt_launch_log_add copies. */
void rt_launch_log_name(uint64_t out[RT_LAUNCH_NAME_WORDS], const char *name);
/* A launch the device accepted (call: a string that lives as long as the process, or NULL). */
void rt_launch_log_add(RtLaunchLog *log, const uint64_t name[RT_LAUNCH_NAME_WORDS], const char *call, const unsigned grid[3],
                       tile_stream stream);
/* Before a synchronization: the number to pass to rt_launch_log_synced when it succeeds. */
uint64_t rt_launch_log_begin(RtLaunchLog *log);
/* A synchronization that began at begin succeeded: the launches it waited for (mark: the log's synced, a stream's, or
 * the context's default stream's) are no longer candidates. */
void rt_launch_log_synced(_Atomic uint64_t *mark, uint64_t begin);
/* Append to out the launches that may have faulted (launch_log.c's step 3). */
void rt_launch_log_describe(RtLaunchLog *log, _Atomic uint64_t *default_synced, Str *out);

struct tile_kernel {
    tile_context *ctx;
    tile_module *mod;
    TileDevFunction *fn;
    unsigned block, smem;
    tile_dim3 block3;    /* raw PTX: the block .maxntid / .reqntid give (tile_launch uses it); else {block, 1, 1} */
    char *raw_signature; /* raw PTX: its parameters' PTX types (ptx_entry_layout) */
    char *param_names;   /* "x,y,a,n": the source's parameter names (the Tile IR's), raw PTX's .param names; NULL: unknown */
    unsigned dyn_smem;   /* the part of smem that is dynamic (kernels over 48 KiB): tile_launch passes it */
    int nparams;         /* -1: unknown (raw PTX without a parameter list we could read) */
    uint8_t *param_size; /* bytes of each parameter */
    uint8_t *param_spec; /* what the compiled code assumes of each value: 0 nothing, 16 divisible by 16
                          * (pointers: 16-byte aligned), 1 equal to 1; raw PTX: a .ptr parameter's .align N;
                          * checked at every launch */
    bool any_spec;
    bool *param_ptr;     /* a pointer parameter: its value is checked against the context's memory */
    bool any_ptr;
    RtTmap *tmaps;       /* tensor maps passed after the arguments (tile_kernel_info.tensor_maps, tensor_maps.c) */
    int ntmaps;
    RtTmapCache *tcache; /* their last encodings */
    tile_kernel_attributes attrs;
    char *name;
    uint64_t log_name[RT_LAUNCH_NAME_WORDS]; /* name as the launch log copies it */
    tile_kernel *next;
};

struct tile_module {
    tile_context *ctx;
    TileDevModule *dm;
    int refs;
    RtOrigin origin;    /* the layer above's record of the request (jit/load.c), or none */
    tile_compiled meta; /* kernel metadata (PTX and TIR dropped) */
    char *ptx;          /* raw PTX modules: kept to read .maxntid and parameters */
    bool image;         /* loaded from a cubin without PTX (tile_module_load_cubin): the driver knows its kernels */
    char **param_names; /* per meta.kernels entry: its parameters' names from the Tile IR ("x,y,a,n"), or NULL */
    char **names;       /* tile_module_get_kernel_names' answer, NULL-terminated, made at its first call */
    int nnames;
    tile_kernel *kernels;
    tile_module *next;
};

typedef struct Attachment {
    const void *tag;
    void *data;
    void (*destroy)(void *);
} Attachment;

/* Streams and events stay allocated until their context is destroyed: a
 * destroyed one keeps a dead magic (and is reused by the next create), so
 * using it after tile_stream_destroy is an error with a message rather
 * than a read of freed memory. */
struct tile_stream_s {
    _Atomic uint32_t magic; /* read without the lock (launches), written under it */
    tile_context *ctx;
    void *impl;    /* the device layer's stream */
    bool borrowed; /* tile_stream_from_native: the caller's stream, never destroyed here */
    _Atomic uint64_t synced; /* the launch log's mark of this stream (launches numbered below it finished) */
    tile_stream next;
};

struct tile_event_s {
    _Atomic uint32_t magic; /* read without the lock (records, waits), written under it */
    tile_context *ctx;      /* set once, when the handle is made: a reuse writes only magic and recorded */
    void *impl;             /* the device layer's event, likewise set once: a record racing a destroy and
                             * the next create (a misuse) reads fields no one writes */
    _Atomic bool recorded; /* recorded by one thread, asked by another (tile_event_elapsed_ms) */
    tile_event next;
};

struct tile_context {
    pthread_mutex_t lock;
    uint64_t id; /* unique in the process (never reused): the key of the threads' error records */
    TileDevice *dev;
    char *cache_dir;
    char arch[16], devname[128], devkey[320];
    const Target *target; /* what kernels are compiled for */
    bool emu;
    bool assume_files_unchanged; /* memory hits by path skip the stamps */
    pthread_rwlock_t alloc_lock; /* guards allocs apart from the context lock, so launches check pointers without it */
    Alloc *allocs;
    int nallocs, cap;
    tile_module *modules;
    tile_stream streams; /* live and destroyed */
    tile_event events;
    tile_context_stats stats;
    _Atomic uint64_t launches;
    RtLaunchLog launch_log;          /* launch_log.c */
    _Atomic uint64_t default_synced; /* the launch log's mark of the default stream */
    _Atomic uint64_t allocations, frees, synchronizations; /* tile_context_stats' graph-safety counters */
    Attachment *attach;
    int nattach;
};

/* An API function's check of its context: not live, TILE_ERROR_INVALID_VALUE with tile_last_error(NULL)'s message. */
#define CHECK_CTX(ctx)                                                                                                      \
    do {                                                                                                                    \
        if (!handle_live((ctx), HANDLE_CONTEXT)) return rt_no_context(__func__, (ctx));                                     \
    } while (0)

/* A device failure: the device layer's message becomes the context's. */
tile_status rt_dev_error(tile_context *ctx, DevStatus s, const char *what);
/* One more synchronization in the context's graph-safety counters. */
void rt_count_sync(tile_context *ctx);

#endif

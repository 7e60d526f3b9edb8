/* rt.h - what the runtime (runtime/) offers the layers above it (internal).
 *
 * The runtime is libtile_rt: contexts, memory, streams and events, modules
 * loaded from PTX, kernels and launches, on the devices of runtime/device.h.
 * It includes no compiler header and knows no shipped kernel.  The layers
 * above it (jit/ compiles sources into modules, kernels/ hold the shipped
 * kernels and their C entry points) use these calls:
 *
 *   options.c  the process's knobs (TILE_CACHE_DIR, TILE_DEBUG, TILE_DATA_DIR, TILE_EMU_TIMEOUT, TILE_EMU_APPROX), read once
 *   datadir.c  where the standard library and the shipped kernels are
 *   tensor_maps.c  a kernel's tensor maps, made from a launch's arguments
 *   launch_log.c  the launches a GPU's later fault report may be about (rt_state.h)
 *   runtime.c  rt_fail and the checks every entry point makes; modules made
 *              from compiled PTX and their metadata; per-context attachments
 *              (the shipped kernels' variant caches live there). */
#ifndef TILE_RUNTIME_RT_H
#define TILE_RUNTIME_RT_H

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/support.h"

#include <stdbool.h>

/* ---- tensor_maps.c: the tensor maps a kernel takes after its arguments ---- */
typedef struct RtTmap RtTmap;
enum { RT_MAX_TMAPS = 16 };
/* Read tile_kernel_info.tensor_maps: the number of maps (*out malloc'd, NULL for none), or -1 when the text
 * does not parse. */
int rt_tmaps_parse(const char *s, int nparams, RtTmap **out);
/* Encode the n maps for args (parameter sizes param_size) into maps[]: TILE_OK; an error set with rt_fail
 * for arguments no map can describe; or TILE_ERROR_LAUNCH with *ds the device's refusal of map *which
 * (the caller reports it).  A map made from the same base, sizes and strides as the kernel's previous
 * launch (cache, NULL: none) is copied instead of encoded again. */
typedef struct RtTmapCache RtTmapCache; /* a kernel's last encodings and what they were made from */
RtTmapCache *rt_tmap_cache_new(void);
void rt_tmap_cache_free(RtTmapCache *c);
/* A launch argument in messages: "argument 2 'y'" (i counted from 0; named from names, "x,y,a,n", when it has
 * the name; names NULL: unknown). */
const char *rt_arg_label(const char *names, int i, char *buf, size_t cap);
tile_status rt_tmaps_encode(tile_context *ctx, TileDevice *dev, const char *kname, const char *pnames, const RtTmap *tmaps, int n,
                            const uint8_t *param_size, void **args, uint8_t (*maps)[DEV_TENSOR_MAP_BYTES], DevStatus *ds, int *which,
                            RtTmapCache *cache);

/* ---- options.c: the only reader of TILE_CACHE_DIR, TILE_CACHE_MAX_BYTES, XDG_CACHE_HOME, HOME, TILE_DEBUG, TILE_DATA_DIR,
 * TILE_EMU_TIMEOUT and TILE_EMU_APPROX ----
 * TILE_DEBUG is a comma-separated list of categories: cache, launch, tune, assert (or all). */
typedef struct RtOptions {
    const char *cache_dir; /* resolved default cache folder, never NULL */
    uint64_t cache_max_bytes; /* TILE_CACHE_MAX_BYTES: the compile cache's cap (default 1 GiB; 0: no cap) */
    const char *data_dir;  /* TILE_DATA_DIR: searched first for stdlib/ and kernels/ (datadir.c); NULL when unset or empty */
    bool debug_cache;      /* log every cache miss with its reason, every corrupt entry */
    bool debug_launch;     /* log each compile/load done for a launch (shipped-kernel variants) */
    bool debug_tune;
    bool debug_assert;     /* modules loaded through a context compile device_assert (tile_compile_options.debug) */
    bool debug_emu_1to1;   /* TILE_DEBUG=emu-1to1: the emulator runs kernels with one slot per register (EmuOptions) */
    double emu_timeout_seconds; /* TILE_EMU_TIMEOUT: seconds a launch on emu may run (0: unset) */
    bool emu_timeout_bad;       /* TILE_EMU_TIMEOUT is set but not a positive decimal number or inf: contexts refuse to open */
    char emu_timeout_text[40];  /* then its value, for the message (cut, a byte outside printable ASCII as '?') */
    bool emu_approx_bound;      /* TILE_EMU_APPROX=bound: .approx results moved by the PTX ISA's error on every emulator device
                                 * whose string does not say approx= (dev_open, DevOptions.emu_approx_bound) */
    bool emu_approx_bad;        /* TILE_EMU_APPROX is set but neither "exact" nor "bound": emulator devices refuse to open */
} RtOptions;
const RtOptions *rt_options(void);
/* Debug log line to stderr: "tile[cat]: ..." */
void rt_debug(const char *cat, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- datadir.c: the data folders, each holding stdlib/ and kernels/, in search order ----
 * TILE_DATA_DIR when set; then, for an installed library (one with
 * <its folder>/../share/tile), that folder, else the source tree it was built
 * from.  Filled once; the layers above never decide this themselves. */
typedef struct RtDataDirs {
    int n;                 /* 1 or 2 */
    const char *root[2];   /* ".../share/tile", TILE_DATA_DIR or the source tree */
    const char *stdlib[3]; /* root[i]/stdlib, NULL-terminated: the tail of the import path */
    bool installed;        /* the last root is the library-relative one (not the source tree) */
} RtDataDirs;
const RtDataDirs *rt_data_dirs(void);
/* <root>/<sub>/<file> in the first root where it is readable, else in the
 * last root (where a missing file is reported); NULL when it does not fit in n. */
const char *rt_data_path(const char *sub, const char *file, char *buf, size_t n);

/* ---- image.c: cubin and fatbin images, checked before the driver reads them ---- */
typedef enum RtImageKind { RT_IMAGE_ELF, RT_IMAGE_FATBIN } RtImageKind;
typedef struct RtImage {
    RtImageKind kind;
    int sm; /* the SM its machine code is for (80, 90; a fatbin's first ELF entry's), 0 when it does not say */
} RtImage;
/* Is image (size bytes) a cubin or a fatbin whose every header offset and size lies inside it?  False with
 * the reason in err (n bytes). */
bool rt_image_check(const void *image, size_t size, RtImage *out, char *err, size_t n);
/* A fatbin's uncompressed PTX for the highest SM not above max_sm (malloc'd, NUL-terminated), else NULL;
 * *compressed (may be NULL): how many PTX entries it has that are compressed (not read here). */
char *rt_image_ptx(const void *image, size_t size, int max_sm, int *compressed);

/* ---- runtime.c ---- */
/* Record a printf-style message as the context's last error and return status; ctx NULL: as the calling
 * thread's last error without a context (tile_last_error(NULL)), for the calls that take none. */
tile_status rt_fail(tile_context *ctx, tile_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* ---- abi.c: the layouts of the public structs a caller fills ---- */
typedef struct RtField {
    const char *name;
    size_t offset, size;
} RtField;
typedef struct RtLayout {
    const char *name; /* "tile_gemm_args" */
    size_t size, align;
    const RtField *fields; /* every field, in order; the first is size */
    int nfields;
} RtLayout;
extern const RtLayout rt_layout_tile_compile_options, rt_layout_tile_context_options, rt_layout_tile_launch_options,
    rt_layout_tile_gemm_args, rt_layout_tile_moe_args, rt_layout_tile_attention_args, rt_layout_tile_paged_attention_args,
    rt_layout_tile_norm_args, rt_layout_tile_gated_args, rt_layout_tile_sample_args, rt_layout_tile_spec_verify_args,
    rt_layout_tile_rope_args;
extern const RtLayout *const rt_layouts[]; /* all of them, NULL-terminated */
/* The structs the library fills up to a caller's size (tile_context_get_stats_ex, tile_context_get_properties_ex):
 * their fields, for refusing a size that ends inside one (no size field in these). */
extern const RtLayout rt_layout_tile_context_stats, rt_layout_tile_device_properties;
extern const RtLayout *const rt_out_layouts[]; /* both, NULL-terminated */

/* ---- runtime.c ---- */
/* A public input struct as this release reads it.  Every such struct begins with `size_t size`: 0 means
 * the layout of the first release with size fields (`baseline`, the struct's sizeof then, a constant
 * kept at that value when later releases append fields), else the caller's sizeof.  Copies
 * min(size, layout->size) bytes of src into dst (layout->size bytes, zeroed first: fields the caller's
 * struct lacks read as zero, the default) and sets dst's size to layout->size.  A size that ends before
 * the first field after size, that is not a multiple of 4, over RT_STRUCT_MAX, or that ends inside a field
 * (naming it): false, with why in err ("size = 36 ends inside ..."; the caller puts "args->" before it).  A size
 * past layout->size (a caller built against a newer, longer struct) is taken only when every byte past
 * layout->size is zero (the defaults of the fields it does not know, as Linux's copy_struct_from_user): else
 * false, naming the struct, both sizes and the first non-zero byte's offset. */
enum { RT_STRUCT_MAX = 1 << 16 };
bool rt_struct_in(void *dst, const void *src, const RtLayout *layout, size_t baseline, char *err, size_t err_size);
/* A size given for a struct the library fills (rt_out_layouts): false, with "size = 12 ends inside
 * tile_context_stats.disk_hits (bytes 8 to 16): ..." in err, when it ends inside a field. */
bool rt_struct_out_size(const RtLayout *layout, size_t size, char *err, size_t err_size);
/* Is ctx a live context?  (No message: there is no context to hold one.) */
bool rt_context_valid(const tile_context *ctx);
/* fn was given a NULL context: TILE_ERROR_INVALID_VALUE, with the message tile_last_error(NULL) gives. */
tile_status rt_no_context(const char *fn, const tile_context *ctx); /* NULL or not live: INVALID_VALUE, the message for tile_last_error(NULL) */
/* Is [p, p + bytes) inside one allocation of this context?  Fails with a message naming `what`. */
tile_status rt_check_range(tile_context *ctx, tile_devptr p, uint64_t bytes, const char *what);
/* tile_launch made by the shipped call `call` (a string that lives as long as the process), which the launch log
 * keeps: a GPU fault that surfaces later names it with the kernel ("after launch of 'k' (tile_gemm, grid 4,1,1)"). */
tile_status rt_launch_for(const char *call, tile_kernel *k, tile_dim3 grid, void **args, tile_stream stream);
/* Is s NULL or a live stream of this context?  *impl: the device layer's stream. */
tile_status rt_check_stream(tile_context *ctx, tile_stream s, const char *what, void **impl);
/* tile_memset_async of rows rows of width bytes, pitch bytes apart (the bytes between rows kept), as one fill where
 * the device has a 2-D one; what: the caller's name for errors. */
tile_status rt_memset2d_async(tile_context *ctx, tile_devptr dst, size_t pitch, unsigned char value, size_t width, size_t rows,
                              tile_stream stream, const char *what);
void rt_lock(tile_context *ctx);
void rt_unlock(tile_context *ctx);
const char *rt_cache_dir(tile_context *ctx);  /* NULL when the disk cache is off */
/* The device as the tuning database keys it: "emu/sm_80" on the emulator, "cuda/MODEL/driver VERSION/sm_90a" on
 * a GPU (the model and driver version, not the device number: two equal GPUs share their records). */
const char *rt_device_key(tile_context *ctx);
const char *rt_arch(tile_context *ctx);       /* the arch the context's kernels are compiled for */
/* Whether the context's device can load code compiled for arch (a target name); false with the reason in
 * err (n bytes) when it cannot (a newer target than an emulated one, or one a GPU cannot run). */
bool rt_arch_loads(tile_context *ctx, const char *arch, char *err, size_t n);
int rt_num_sms(tile_context *ctx);            /* the device's multiprocessor count (num_sms() of the kernels it compiles) */
/* A tiled tensor map for TMA copies (cp.async.bulk.tensor) into out[128] (64-byte aligned), through the
 * device: cuTensorMapEncodeTiled on cuda, the emulator's encoding on emu.  dims innermost first; strides:
 * bytes between consecutive indices of dimensions 1..rank-1; elem_strides NULL: all 1; swizzle 0 none, 1 32B,
 * 2 64B, 3 128B.  Checked first: a message names what is wrong. */
/* The device layer's encoding of a checked map into out (runtime.c, which holds the device); failures on ctx as api */
tile_status rt_device_tensor_map_encode(tile_context *ctx, const DevTensorMap *tm, void *out, const char *api);
tile_status rt_tensor_map_encode(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global, const uint64_t *dims,
                                 const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides, int swizzle);
tile_status rt_tensor_map_encode_im2col(tile_context *ctx, void *out, tile_dtype dtype, int rank, tile_devptr global, const uint64_t *dims,
                                        const uint64_t *strides, const int32_t *lower, const int32_t *upper, uint32_t channels,
                                        uint32_t pixels, const uint32_t *elem_strides, int swizzle, int nan_fill);
bool rt_assume_files_unchanged(tile_context *ctx);
/* The context's statistics, to be updated with the lock held. */
tile_context_stats *rt_stats_locked(tile_context *ctx);

/* Modules.  A module made by a layer above carries an origin: that layer's
 * record of the request that produced it (the source loader keeps hashes
 * and file stamps there to answer later loads from memory).  Lock held for
 * all of these. */
typedef struct RtOrigin {
    void *data;
    void (*free)(void *data);
} RtOrigin;
/* Load ptx into the device and make a module that owns meta (its PTX, TIR
 * and cubin are dropped) and origin.  On failure both are freed.  user_asm:
 * the PTX holds a source's inline_asm_elementwise text, so a device refusing
 * it may be refusing the source's PTX (TILE_ERROR_COMPILE), not tile's
 * (TILE_ERROR_INTERNAL). */
tile_status rt_module_create_locked(tile_context *ctx, const char *ptx, bool user_asm, tile_compiled *meta, RtOrigin origin,
                                    tile_module **out);
/* A module from a compile cache entry's payload (runtime/cache_read.c): its cubin when the entry has one for
 * exactly the GPU's compute capability (arch: the entry's target), else its PTX; as rt_module_create_locked
 * otherwise (meta and origin are taken, and freed on failure). */
tile_status rt_module_create_entry_locked(tile_context *ctx, const char *arch, tile_compiled *meta, RtOrigin origin, tile_module **out);
/* The parameter names of kernel NAME from its Tile IR header "kernel @NAME(%x: ptr<f32> #div16, %n: i32)": "x,n"
 * ("" for none; malloc'd), or NULL when the Tile IR does not have it (or out of memory).  The one reader of that
 * header: the launch messages name arguments with it, tile aot names the launch functions' parameters. */
char *rt_tir_param_names(const char *tir, const char *name);
/* Raw PTX's header, read as text outside its comments (ptx_header.c): the names after ".entry" (rt_ptx_entries: all,
 * in order, a NULL-terminated malloc'd array, their count or -1 when out of memory; rt_ptx_entry_names: the first 16,
 * ", "-separated), and entry NAME's parameters (sizes, .ptr and .align, signature, names) and .maxntid/.reqntid
 * block into k. */
int rt_ptx_entries(const char *ptx, char ***out);
void rt_ptx_entry_names(const char *ptx, Str *out);
void rt_ptx_entry_layout(const char *ptx, const char *name, tile_kernel *k);
/* Walk the context's modules (prev NULL: the first). */
tile_module *rt_module_next_locked(tile_context *ctx, tile_module *prev);
/* The origin's data when it was made with this free function (the layer's own kind), else NULL. */
void *rt_module_origin(tile_module *m, void (*kind)(void *));
/* One more reference to m (each needs one tile_module_unload). */
void rt_module_retain_locked(tile_module *m);

/* Attachments: state a layer above keeps per context (the shipped kernels'
 * variant caches), found by tag (any address unique to that layer), freed
 * with the context.  Lock held.  Returns the slot, *slot NULL the first time. */
void **rt_attachment_locked(tile_context *ctx, const void *tag, void (*destroy)(void *));

#endif

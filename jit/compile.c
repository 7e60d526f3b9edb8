/* compile.c - the compile driver: source -> Tile IR -> passes -> LLVM -> PTX -> cubin.
 *
 * Steps:
 *   1. Parse options (defines, specializations) into the front end's form.
 *   2. lang_compile: source and imports to Tile IR, diagnostics located; a
 *      define that names no const parameter, const, num_warps or num_stages
 *      is TILE_ERROR_INVALID_VALUE.
 *   3. Record argument specializations; tir_run_pipeline (verifier after
 *      each pass when TILE_VERIFY is compiled in or dumps are asked for).
 *   4. llvm_lower_module: LLVM IR, the O3 passes (O3_PIPELINE), PTX in memory.
 *   5. With want_cubin: ptxas -v as a child process on temporary files;
 *      its errors are reported as internal errors with a repro command,
 *      never passed through as if they were the user's.
 * All compiler memory lives in one arena freed at the end. */
#include "include/tile/tile.h"
#include "../lang/lang.h"
#include "../lower/llvm.h"
#include "../lower/passes.h"
#include "../lower/budget.h"
#include "support/target.h"
#include "jit/jit.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *dupstr(const char *s) {
    char *p = strdup(s ? s : "");
    if (!p) out_of_memory();
    return p;
}

const char *jit_find_ptxas(const char *given, char *buf, size_t size) {
    if (given) return access(given, X_OK) == 0 ? given : NULL;
    if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return "/usr/local/cuda/bin/ptxas";
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *e = strchr(path, ':');
        size_t n = e ? (size_t)(e - path) : strlen(path);
        if (n && n + 8 < size) {
            memcpy(buf, path, n);
            memcpy(buf + n, "/ptxas", 7);
            if (access(buf, X_OK) == 0) return buf;
        }
        path = e ? e + 1 : NULL;
    }
    return NULL;
}

/* Run ptxas on the PTX; fills cubin and log.  Returns false with a message in *err. */
static bool run_ptxas(const char *ptxas, const char *arch, const char *ptx, tile_compiled *out, Str *err) {
    char dir[] = "/tmp/tile-ptxas-XXXXXX";
    if (!mkdtemp(dir)) {
        str_printf(err, "cannot create a temporary folder: %s", strerror(errno));
        return false;
    }
    char in[256], cub[256], log[256];
    snprintf(in, sizeof in, "%s/k.ptx", dir);
    snprintf(cub, sizeof cub, "%s/k.cubin", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    bool ok = false;
    FILE *f = fopen(in, "wb");
    if (!f || fwrite(ptx, 1, strlen(ptx), f) != strlen(ptx)) {
        str_printf(err, "cannot write %s", in);
        if (f) fclose(f);
        goto done;
    }
    fclose(f);
    char archarg[64];
    snprintf(archarg, sizeof archarg, "-arch=%s", arch);
    char *argv[] = {(char *)ptxas, archarg, "-v", "-o", cub, in, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        str_printf(err, "cannot run %s: %s", ptxas, strerror(rc));
        goto done;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    size_t n;
    char *logtext = read_file(log, &n);
    out->ptxas_log = logtext ? logtext : dupstr("");
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        /* ptxas names the file and line of what it rejects; a failure that names none is the tool's (a path
         * that is no ptxas, a crash, a missing library), not the PTX's */
        if (!strstr(out->ptxas_log, in)) {
            if (WIFEXITED(st))
                str_printf(err, "%s exited with status %d without naming a line of the PTX (is it a working ptxas?)%s%s", ptxas,
                           WEXITSTATUS(st), *out->ptxas_log ? "; it said:\n" : "", out->ptxas_log);
            else
                str_printf(err, "%s was stopped by signal %d%s%s", ptxas, WTERMSIG(st), *out->ptxas_log ? "; it said:\n" : "",
                           out->ptxas_log);
            goto done;
        }
        str_printf(err, "ptxas rejected the generated PTX (a bug in tile):\n%s\nrepro: %s %s -v %s (PTX kept in %s)", out->ptxas_log,
                   ptxas, archarg, in, dir);
        return false; /* keep the folder for the repro */
    }
    out->cubin = read_file(cub, &out->cubin_size);
    ok = out->cubin != NULL;
    if (!ok) str_printf(err, "ptxas wrote no cubin");
done:
    unlink(in);
    unlink(cub);
    unlink(log);
    rmdir(dir);
    return ok;
}

/* "ptxas info    : Function properties for k" ... "Used 12 registers" ... spill lines */
static void parse_ptxas_log(tile_compiled *out) {
    for (int k = 0; k < out->nkernels; k++) {
        tile_kernel_info *ki = &out->kernels[k];
        char key[512];
        snprintf(key, sizeof key, "Compiling entry function '%s'", ki->name);
        const char *p = out->ptxas_log ? strstr(out->ptxas_log, key) : NULL;
        if (!p) continue;
        const char *next = strstr(p + 1, "Compiling entry function");
        const char *sp = strstr(p, "bytes spill stores");
        const char *rg = strstr(p, "Used ");
        if (sp && (!next || sp < next)) {
            const char *q = sp;
            while (q > p && q[-1] == ' ') q--;
            while (q > p && (q[-1] >= '0' && q[-1] <= '9')) q--;
            int stores = atoi(q);
            const char *ld = strstr(sp, "bytes spill loads");
            const char *q2 = ld;
            if (ld) {
                while (q2 > sp && q2[-1] == ' ') q2--;
                while (q2 > sp && (q2[-1] >= '0' && q2[-1] <= '9')) q2--;
            }
            ki->spill_bytes = stores + (ld ? atoi(q2) : 0);
        }
        if (rg && (!next || rg < next)) ki->registers = atoi(rg + 5);
    }
}

static void record_kernels(Module *m, tile_compiled *out) {
    out->nkernels = m->nfuncs;
    out->kernels = calloc((size_t)(m->nfuncs ? m->nfuncs : 1), sizeof *out->kernels);
    if (!out->kernels) out_of_memory();
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        tile_kernel_info *ki = &out->kernels[k];
        ki->name = dupstr(f->name);
        ki->num_warps = f->num_warps + f->producer_warps; /* launched: a producer warpgroup after the others */
        ki->num_stages = f->num_stages;
        ki->smem_bytes = f->smem_bytes;
        ki->smem_dynamic = f->smem_bytes > target_find(m->arch)->smem_static;
        ki->registers = ki->spill_bytes = -1;
        Str s = {0};
        for (int a = 0; a < f->nargs; a++) {
            const Type *t = tir_vtype(f, f->args[a].value);
            if (a) str_puts(&s, ", ");
            for (; t->dt == DT_PTR; t = t->pointee) str_putc(&s, '*'); /* "**f16": a table of pointers */
            str_puts(&s, dtype_name(t->dt));
            if (f->args[a].spec == SPEC_DIV16) str_puts(&s, ":16");
            if (f->args[a].spec == SPEC_ONE) str_puts(&s, "=1");
            if (f->args[a].spec == SPEC_NULL) str_puts(&s, "=None");
        }
        ki->signature = str_take(&s);
        Str tm = {0};
        str_puts(&tm, "");
        for (int t = 0; t < f->ntmaps; t++) {
            if (t) str_puts(&tm, "; ");
            tir_print_tmap(&tm, f, &f->tmaps[t], true);
        }
        ki->tensor_maps = str_take(&tm);
    }
}

/* "None" (Python's spelling) or "none": a pointer argument passed as None */
static bool spec_is_none(const char *v) { return !strcmp(v, "None") || !strcmp(v, "none"); }

static bool apply_specs(Module *m, const tile_compile_options *o, Diag *d) {
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        for (int a = 0; a < f->nargs; a++)
            if (tir_vtype(f, f->args[a].value)->dt == DT_PTR && !o->no_align_ptrs) f->args[a].spec = SPEC_DIV16;
    }
    for (const char *const *s = o->specialize; s && *s; s++) {
        const char *eq = strchr(*s, '=');
        if (!eq || (strcmp(eq + 1, "1") && strcmp(eq + 1, "16") && strcmp(eq + 1, "any") && !spec_is_none(eq + 1))) {
            diag_error(d, (Loc){0}, "bad specialization '%s': expected ARG=1, ARG=16, ARG=any or ARG=None", *s);
            return false;
        }
        bool any = !strcmp(eq + 1, "any"); /* no assumption: a pointer that need not be 16-byte aligned */
        bool none = spec_is_none(eq + 1); /* the front end bound the name to None (lang_compile's none_args) */
        size_t n = (size_t)(eq - *s);
        for (const char *const *p = o->specialize; p != s; p++) /* "n=16 n=1": no value could meet both */
            if (!strncmp(*p, *s, n + 1) && strcmp(*p, *s)) {
                diag_error(d, (Loc){0}, "specialization of '%.*s' given twice, '%s' and '%s'", (int)n, *s, *p, *s);
                return false;
            }
        bool found = false;
        for (int k = 0; k < m->nfuncs; k++) {
            Func *f = m->funcs[k];
            for (int a = 0; a < f->nargs; a++) {
                if (strlen(f->args[a].name) != n || memcmp(f->args[a].name, *s, n)) continue;
                const Type *t = tir_vtype(f, f->args[a].value);
                if (any || none) {
                    f->args[a].spec = none ? SPEC_NULL : SPEC_NONE;
                    found = true;
                    continue;
                }
                if (!dtype_is_int(t->dt) || t->dt == DT_I1) {
                    diag_error(d, (Loc){0}, "cannot specialize '%.*s': only integer arguments can be (a pointer takes =any or =None)", (int)n, *s);
                    return false;
                }
                f->args[a].spec = eq[1] == '1' && !eq[2] ? SPEC_ONE : SPEC_DIV16;
                found = true;
            }
        }
        if (!found) { /* name the ones there are: a const parameter is no argument (-D sets it) */
            char names[256] = "";
            for (int k = 0; k < m->nfuncs; k++)
                for (int a = 0; a < m->funcs[k]->nargs; a++) {
                    const char *an = m->funcs[k]->args[a].name;
                    size_t len = strlen(names), al = strlen(an);
                    bool dup = false; /* kernels of one file often share names */
                    for (const char *q = names; !dup && (q = strstr(q, an)); q += al)
                        dup = (q == names || q[-1] == ' ') && (q[al] == ',' || !q[al]);
                    if (!dup && len + al + 3 < sizeof names)
                        snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", an);
                }
            diag_error(d, (Loc){0}, "cannot specialize '%.*s': no run-time argument has that name (the run-time arguments: %s; a const "
                       "parameter is set with -D %.*s=VALUE)", (int)n, *s, names[0] ? names : "none", (int)n, *s);
            return false;
        }
    }
    return true;
}

/* The import search path: the caller's folders, then the standard library
 * wherever the runtime finds it (runtime/datadir.c: TILE_DATA_DIR, then the
 * installed data folder or the source tree). */
static LangOptions import_path(const tile_compile_options *o) {
    return (LangOptions){.include_dirs = o ? o->include_dirs : NULL, .stdlib_dirs = rt_data_dirs()->stdlib};
}

int jit_source_files(Arena *a, const SrcFile *src, const tile_compile_options *opt, const SrcFile ***out) {
    LangOptions lo = import_path(opt);
    Diag d;
    diag_init(&d);
    int n = lang_source_files(a, src, &lo, &d, out);
    int nerr = d.nerrors;
    diag_free(&d);
    return nerr ? -1 : n;
}

/* Steps 1-6 for one target; a is the compilation's arena (the caller frees
 * it), oom the recovery point around the front end and the passes, popped
 * before LLVM. */
/* The --time-passes report: the front end, each pass, then (lr non-NULL) LLVM's stages and source to PTX
 * (t3), and ptxas when ptxas_s >= 0; with lr NULL (--emit tir) it ends at "source to tir". */
static void time_report(Str *t, double t0, double t1, double t2, double t3, const double *pass_s, const LlvmResult *lr,
                        double ptxas_s) {
    int w = 16; /* the names' column: as wide as the longest pass name (software_pipeline), so the times line up */
    for (int k = 0; k < tir_npasses; k++)
        if ((int)strlen(tir_passes[k].name) > w) w = (int)strlen(tir_passes[k].name);
    str_printf(t, "%-*s %9.3f ms\n", w, "frontend", (t1 - t0) * 1e3);
    for (int k = 0; k < tir_npasses; k++) str_printf(t, "%-*s %9.3f ms\n", w, tir_passes[k].name, pass_s[k] * 1e3);
    str_printf(t, "%-*s %9.3f ms\n", w, "passes total", (t2 - t1) * 1e3);
    if (!lr) {
        str_printf(t, "%-*s %9.3f ms\n", w, "source to tir", (t2 - t0) * 1e3);
        return;
    }
    str_printf(t, "%-*s %9.3f ms\n", w, "llvm codegen", lr->seconds_codegen * 1e3);
    str_printf(t, "%-*s %9.3f ms\n", w, "llvm O3", lr->seconds_opt * 1e3);
    str_printf(t, "%-*s %9.3f ms\n", w, "ptx emission", lr->seconds_emit * 1e3);
    str_printf(t, "%-*s %9.3f ms\n", w, "source to ptx", (t3 - t0) * 1e3);
    if (ptxas_s >= 0) str_printf(t, "%-*s %9.3f ms\n", w, "ptxas", ptxas_s * 1e3);
}

static tile_status compile_in(Arena *a, OomScope *oom, const Target *tgt, const SrcFile *src, const tile_compile_options *o,
                              tile_compiled *out, unsigned char *imports) {
    const char *arch = tgt->name;
    Diag d;
    diag_init(&d);
    tile_status st = TILE_ERROR_COMPILE;
    Str timing = {0}, dump = {0};
    double pass_s[64] = {0};
    LlvmResult lr = {0};

    if (o->num_sms < 0 || o->num_sms > 65536) { /* 0: the default; the CLI's --num-sms takes 1..65536 */
        diag_error(&d, (Loc){0}, "num_sms is %d: 0 (the default) or 1..65536", o->num_sms);
        st = TILE_ERROR_INVALID_VALUE;
        goto done;
    }

    /* 1. defines */
    int nd = 0;
    for (const char *const *p = o->defines; p && *p; p++) nd++;
    LangDefine *defs = ARENA_ARRAY(a, LangDefine, nd + 1);
    for (int k = 0; k < nd; k++) {
        const char *eq = strchr(o->defines[k], '=');
        if (!eq || eq == o->defines[k]) {
            diag_error(&d, (Loc){0}, "bad define '%s': expected NAME=VALUE", o->defines[k]);
            st = TILE_ERROR_INVALID_VALUE;
            goto done;
        }
        defs[k].name = arena_strndup(a, o->defines[k], (size_t)(eq - o->defines[k]));
        defs[k].value = arena_strdup(a, eq + 1);
    }
    /* pointer arguments specialized as None ("ARG=None"): the front end binds their names to None */
    int nn = 0;
    for (const char *const *p = o->specialize; p && *p; p++) nn++;
    const char **none_args = ARENA_ARRAY(a, const char *, nn + 1);
    nn = 0;
    for (const char *const *p = o->specialize; p && *p; p++) {
        const char *eq = strchr(*p, '=');
        if (eq && eq > *p && spec_is_none(eq + 1)) none_args[nn++] = arena_strndup(a, *p, (size_t)(eq - *p));
    }
    bool bad_define = false;
    LangOptions lo = import_path(o);
    lo.none_args = none_args, lo.nnone_args = nn;
    lo.defines = defs, lo.ndefines = nd, lo.kernel_name = o->kernel, lo.bad_define = &bad_define;
    lo.device_asserts = o->debug != 0, lo.num_sms = o->num_sms > 0 ? o->num_sms : TILE_DEFAULT_NUM_SMS;
    lo.arch = arch;

    /* 2. front end (a define that names nothing is the caller's mistake, not the source's) */
    double t0 = now_seconds();
    const SrcFile *const *read = NULL; /* the files the front end read: the imports' digest is of these texts */
    int nread = 0;
    lo.files_read = &read, lo.nfiles_read = &nread;
    Module *m = lang_compile(a, src, &lo, &d);
    if (imports) jit_imports_digest(read, nread, imports);
    double t1 = now_seconds();
    if (bad_define) st = TILE_ERROR_INVALID_VALUE;
    if (!m || d.nerrors) goto done;
    m->arch = arch;
    m->no_tma = o->no_tma != 0;
    if (m->nfuncs == 0) {
        diag_error(&d, (Loc){src, 1, 1}, o->kernel ? "no kernel named '%s'" : "%s contains no kernel", o->kernel ? o->kernel : src->name);
        goto done;
    }
    /* 3. passes */
    if (!apply_specs(m, o, &d)) {
        st = TILE_ERROR_INVALID_VALUE;
        goto done;
    }
    PipelineOptions po = {.dump_after = o->dump_after, .dump = &dump, .verify = true, .time_passes = o->time_passes != 0,
                          .pass_seconds = pass_s};
    if (o->dump_after && (!strcmp(o->dump_after, "all") || !strcmp(o->dump_after, "frontend"))) {
        str_puts(&dump, "// -----// IR after frontend //----- //\n");
        tir_print_module(&dump, m);
    }
    if (o->dump_after && strcmp(o->dump_after, "all") && strcmp(o->dump_after, "frontend") && !pass_lookup(o->dump_after)) {
        diag_error(&d, (Loc){0}, "unknown pass '%s' for --dump-after (it takes frontend, all or a pass below)", o->dump_after);
        for (int k = 0; k < tir_npasses; k++) diag_note(&d, (Loc){0}, "%s: %s", tir_passes[k].name, tir_passes[k].summary);
        st = TILE_ERROR_INVALID_VALUE;
        goto done;
    }
    if (!tir_verify(m, &d)) {
        diag_error(&d, (Loc){0}, "internal error: the front end produced invalid IR");
        st = TILE_ERROR_INTERNAL;
        goto done;
    }
    if (!tir_check_front_end_size(m, &d)) goto done; /* far past LLVM's budget: refused before the passes */
    if (!tir_run_pipeline(m, &po, &d)) goto done;
    double t2 = now_seconds();
    Str tir = {0};
    tir_print_module(&tir, m); /* as large as the IR: still under the recovery point */
    out->tir = str_take(&tir);
    record_kernels(m, out);
    oom_pop(oom); /* LLVM lowering runs on worker threads too: no jumping out of it */

    if (o->tir_only) { /* --emit tir: the front end and the passes are all there is to time */
        if (o->time_passes) time_report(&timing, t0, t1, t2, -1, pass_s, NULL, -1);
        st = TILE_OK;
        goto done;
    }

    /* 4. LLVM */
    LlvmOptions llo = {.arch = arch, .run_o3 = true, .want_llvm_text = o->want_llvm_ir != 0, .line_info = !o->no_line_info};
    if (!llvm_lower_module(m, &llo, &lr, &d)) goto done;
    out->ptx = lr.ptx;
    out->llvm_ir = lr.llvm_ir;
    lr.ptx = lr.llvm_ir = NULL;
    double t3 = now_seconds();

    /* 5. ptxas */
    double tpx = 0;
    st = TILE_OK;
    if (o->want_cubin) {
        char pxbuf[4096];
        const char *px = jit_find_ptxas(o->ptxas, pxbuf, sizeof pxbuf);
        if (!px) out->ptxas_missing = 1;
        else {
            Str err = {0};
            double tp0 = now_seconds();
            if (!run_ptxas(px, arch, out->ptx, out, &err)) {
                diag_error(&d, (Loc){0}, "%s", err.buf ? err.buf : "ptxas failed");
                st = TILE_ERROR_PTXAS;
            }
            tpx = now_seconds() - tp0;
            str_free(&err);
            parse_ptxas_log(out);
        }
    }
    if (o->time_passes) time_report(&timing, t0, t1, t2, t3, pass_s, &lr, o->want_cubin && !out->ptxas_missing ? tpx : -1);
done:;
    oom_pop(oom);
    Str ds = {0};
    diag_render(&d, &ds);
    out->diagnostics = str_take(&ds);
    out->timing = timing.buf ? str_take(&timing) : NULL;
    out->dump = dump.buf ? str_take(&dump) : NULL;
    llvm_result_free(&lr);
    diag_free(&d);
    return st;
}

/* tile_compile_options as the first release with size fields laid it out: keep this value when fields are appended. */
enum { COMPILE_OPTIONS_SIZE_0_1 = offsetof(tile_compile_options, debug) };

bool jit_options_in(const tile_compile_options *opt, tile_compile_options *o, char *err, size_t err_size) {
    if (!opt) {
        *o = (tile_compile_options){.size = sizeof *o}; /* read again later (jit_cache_compile): every field counts */
        return true;
    }
    char why[160];
    if (rt_struct_in(o, opt, &rt_layout_tile_compile_options, COMPILE_OPTIONS_SIZE_0_1, why, sizeof why)) return true;
    snprintf(err, err_size, "opt->%s", why);
    return false;
}

tile_status jit_options_read(const tile_compile_options *opt, tile_compile_options *o, char **diagnostics) {
    char err[200];
    if (jit_options_in(opt, o, err, sizeof err)) return TILE_OK;
    Str s = {0};
    str_printf(&s, "error: %s\n", err);
    *diagnostics = str_take(&s);
    return TILE_ERROR_INVALID_VALUE;
}

/* Nothing here is modified between setjmp and a longjmp back to it, so every
 * value is intact afterwards (C17 7.13.2.1); GCC cannot see that. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wclobbered"
#endif
static tile_status compile(const SrcFile *src, const tile_compile_options *opt, tile_compiled *out, unsigned char *imports) {
    tile_compile_options opts;
    const tile_compile_options *o = &opts;
    if (jit_options_read(opt, &opts, &out->diagnostics) != TILE_OK) return TILE_ERROR_INVALID_VALUE;
    const Target *tgt = target_find(o->arch);
    if (!tgt) {
        Str s = {0};
        char names[128];
        const Target *near = target_near(o->arch);
        str_printf(&s, "error: unknown arch '%s'%s%s%s (expected %s)\n", o->arch, near ? "; did you mean '" : "", near ? near->name : "",
                   near ? "'?" : "", target_names(names, sizeof names));
        out->diagnostics = str_take(&s);
        return TILE_ERROR_INVALID_VALUE;
    }
    Arena *a = arena_new();
    /* Memory running out in the front end or the Tile IR passes (the parts whose
     * size the source decides) is a status; in LLVM, as in any C++ library, it aborts. */
    OomScope oom;
    if (setjmp(oom.env)) {
        oom_pop(&oom);
        arena_free(a);
        free(out->diagnostics);
        out->diagnostics = strdup("error: out of memory compiling the kernel\n");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    oom_push(&oom);
    tile_status st = compile_in(a, &oom, tgt, src, o, out, imports);
    oom_pop(&oom);
    arena_free(a);
    return st;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

tile_status jit_compile_src(const SrcFile *src, const tile_compile_options *opt, tile_compiled *out, unsigned char imports[16]) {
    if (!out) return TILE_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    return compile(src, opt, out, imports);
}

tile_status tile_compile_source(const char *name, const char *source, const tile_compile_options *opt, tile_compiled *out) {
    if (!out) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_compile_source: out is NULL");
    memset(out, 0, sizeof *out);
    if (!source) {
        out->diagnostics = strdup("error: the source is NULL");
        return TILE_ERROR_INVALID_VALUE;
    }
    SrcFile src = {.name = name && *name ? name : "<source>", .text = source, .len = strlen(source)};
    return compile(&src, opt, out, NULL);
}

tile_status jit_read_file(const char *path, tile_compiled *out, SrcFile *src) {
    memset(out, 0, sizeof *out);
    *src = (SrcFile){.name = path};
    if (!path) {
        out->diagnostics = strdup("error: the path is NULL");
        return TILE_ERROR_INVALID_VALUE;
    }
    size_t n;
    char *text = read_source(path, &n);
    if (!text) {
        int err = errno;
        Str s = {0};
        char *shown = diag_shorten(path); /* a path as long as an argument may be */
        str_printf(&s, "error: cannot read '%s': %s\n", shown, source_error(err));
        free(shown);
        out->diagnostics = str_take(&s);
        return TILE_ERROR_IO;
    }
    src->text = text;
    src->len = n;
    return TILE_OK;
}

tile_status tile_compile_file(const char *path, const tile_compile_options *opt, tile_compiled *out) {
    if (!out) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_compile_file: out is NULL");
    SrcFile src;
    tile_status st = jit_read_file(path, out, &src);
    if (st != TILE_OK) return st;
    st = compile(&src, opt, out, NULL);
    free((char *)src.text);
    return st;
}

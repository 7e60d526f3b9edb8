/* gemm_report.c - what the compiler made of kernels/gemm/gemm.tile, per
 * configuration, next to Triton's tutorial matmul at the same configuration.
 *
 *   build/bench/gemm_report [--quick] [--no-triton] [--python PY]
 *
 * For every configuration (kernel variant, BM x BN x BK tile, warps, stages):
 *   1. compile kernels/gemm/gemm.tile for sm_80 and sm_90a with ptxas (want_cubin),
 *      specialized as a launch on row-major, 16-aligned operands would be
 *      (unit strides = 1, sizes and leading strides divisible by 16);
 *   2. take registers, spill bytes and shared memory from the compile
 *      result's kernel info (ptxas -v);
 *   3. find the main loop in the PTX: every branch back to a label above it
 *      closes a loop; the loop with the most mma.sync instructions is the
 *      main loop (the innermost on ties); count mma.sync, ldmatrix, cp.async
 *      copies, commit/wait groups, ld.global, ld.shared, st.shared, bar.sync
 *      and all instructions between its label and its back branch;
 *   4. where python3 can import triton, compile the tutorial matmul at the
 *      same tile, warps and stages for sm_80 (bench/gpu/triton_matmul.py,
 *      no GPU needed), run ptxas -v on its PTX for registers and spills,
 *      take its shared memory from Triton's metadata, and analyse its PTX
 *      the same way.  Otherwise each Triton row says why it was skipped.
 * --quick reports the default configuration only.  Exit status 1 only when
 * the default configuration does not compile (other configurations that
 * fail are reported in their rows and counted at the end). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/ptx_loop.h"
#include "include/tile/tile.h"
#include "support/support.h"
#include "tools/json.h"

static bool json; /* --json: one JSON object per row or note, nothing else on stdout */

static void json_note(const char *key, const char *text) {
    JsonOut j;
    json_begin(&j, stdout);
    json_str(&j, "bench", "gemm_report");
    json_str(&j, key, text);
    json_end(&j);
}

typedef struct Cfg {
    const char *kernel;
    const char *dtype; /* for Triton; NULL: no Triton counterpart */
    int bm, bn, bk, warps, stages;
} Cfg;

static const Cfg configs[] = {
    {"gemm_bf16_bf16", "bf16", 128, 128, 32, 4, 3}, /* the default configuration */
    {"gemm_bf16_bf16", "bf16", 128, 128, 32, 4, 2},
    {"gemm_bf16_bf16", "bf16", 128, 128, 32, 4, 4},
    {"gemm_bf16_bf16", "bf16", 128, 128, 32, 8, 3},
    {"gemm_bf16_bf16", "bf16", 128, 128, 64, 4, 3},
    {"gemm_bf16_bf16", "bf16", 64, 128, 32, 4, 4},
    {"gemm_bf16_bf16", "bf16", 128, 256, 64, 8, 3}, /* the tutorial's first autotuning choice */
    {"gemm_f16_f16", "f16", 128, 128, 32, 4, 3},
    {"gemm_bf16_f32", NULL, 128, 128, 32, 4, 3},
    {"gemm_f16_f32", NULL, 128, 128, 32, 4, 3},
    {"gemm_tf32_f32", NULL, 128, 128, 16, 8, 3},
    {"gemm_i8_i32", NULL, 128, 128, 64, 4, 3},
};
enum { NCFG = sizeof configs / sizeof configs[0] };

/* ---- PTX analysis ---- */

#define MIX_CLASSES(X) \
    X(mma, "mma") \
    X(ldmatrix, "ldmatrix") \
    X(cp_async, "cp.async") \
    X(cp_group, "cp.grp") \
    X(ld_global, "ld.global") \
    X(ld_shared, "ld.shared") \
    X(st_shared, "st.shared") \
    X(bar, "bar.sync") \
    X(total, "instr")

typedef struct Mix {
#define X(f, s) int f;
    MIX_CLASSES(X)
#undef X
    int first_line, last_line; /* the main loop, 1-based lines of the PTX; 0 when no loop */
} Mix;

static void classify(const char *op, Mix *m, int sign) {
    if (!*op) return;
    m->total += sign;
    if (!strncmp(op, "mma.sync", 8) || !strncmp(op, "wgmma.mma_async", 15)) m->mma += sign;
    else if (!strncmp(op, "ldmatrix", 8)) m->ldmatrix += sign;
    else if (!strncmp(op, "cp.async.commit_group", 21) || !strncmp(op, "cp.async.wait_group", 19) ||
             !strncmp(op, "cp.async.wait_all", 17))
        m->cp_group += sign;
    else if (!strncmp(op, "cp.async", 8)) m->cp_async += sign;
    else if (!strncmp(op, "ld.global", 9)) m->ld_global += sign;
    else if (!strncmp(op, "ld.shared", 9)) m->ld_shared += sign;
    else if (!strncmp(op, "st.shared", 9)) m->st_shared += sign;
    else if (!strncmp(op, "bar.sync", 8) || !strncmp(op, "barrier.sync", 12) || !strncmp(op, "bar.cta.sync", 12)) m->bar += sign;
}

/* Counts over the main loop (see the design comment, step 3). */
static void analyze_ptx(const char *ptx, Mix *best) {
    PtxLine *ls;
    int n = ptx_parse_lines(ptx, &ls), first, last;
    memset(best, 0, sizeof *best);
    if (ptx_main_loop(ls, n, &first, &last)) {
        for (int k = first; k <= last; k++) classify(ls[k].op, best, 1);
        best->first_line = first + 1;
        best->last_line = last + 1;
    }
    free(ls);
}

/* ---- ptxas -v on foreign PTX (Triton's) ---- */

typedef struct Res {
    int regs, spill, smem;
} Res;

static bool ptxas_info(const char *ptxas, const char *ptx_path, const char *arch, Res *r, char *why, size_t wl) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s -v '%s' -o /dev/null 2>&1", ptxas, arch, ptx_path);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(why, wl, "could not run %s", ptxas);
        return false;
    }
    char line[1024];
    r->regs = r->spill = -1;
    while (fgets(line, sizeof line, f)) {
        char *p;
        int st, ld;
        if ((p = strstr(line, "Used ")) && sscanf(p, "Used %d registers", &r->regs) == 1) continue;
        if ((p = strstr(line, "bytes spill stores")) != NULL) {
            while (p > line && p[-1] != ',' && p[-1] != ' ') p--;
            char *q = p;
            while (q > line && (q[-1] == ' ' || (q[-1] >= '0' && q[-1] <= '9'))) q--;
            if (sscanf(q, "%d bytes spill stores, %d bytes spill loads", &st, &ld) == 2) r->spill = st + ld;
        }
    }
    int rc = pclose(f);
    if (rc != 0 || r->regs < 0) {
        snprintf(why, wl, "ptxas -v failed on Triton's PTX (%s)", ptxas);
        return false;
    }
    if (r->spill < 0) r->spill = 0;
    return true;
}

/* ---- rows ---- */

static void print_header(void) {
    if (json) return;
    printf("%-16s %-17s %-7s %-7s %5s %7s %8s  %-9s", "kernel", "tile", "arch", "who", "regs", "spill B", "smem B", "loop");
#define X(f, s) printf(" %9s", s);
    MIX_CLASSES(X)
#undef X
    printf("\n");
}

static void print_row(const Cfg *c, const char *arch, const char *who, const Res *r, const Mix *m) {
    char tile[32], loop[32];
    snprintf(tile, sizeof tile, "%dx%dx%d w%d s%d", c->bm, c->bn, c->bk, c->warps, c->stages);
    if (m->first_line) snprintf(loop, sizeof loop, "%d-%d", m->first_line, m->last_line);
    else snprintf(loop, sizeof loop, "none");
    char regs[16], spill[16], smem[16];
    snprintf(regs, sizeof regs, r->regs >= 0 ? "%d" : "n/a", r->regs);
    snprintf(spill, sizeof spill, r->spill >= 0 ? "%d" : "n/a", r->spill);
    snprintf(smem, sizeof smem, r->smem >= 0 ? "%d" : "n/a", r->smem);
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "gemm_report");
        json_str(&j, "kernel", c->kernel);
        json_str(&j, "tile", tile);
        json_str(&j, "arch", arch);
        json_str(&j, "who", who);
        if (r->regs >= 0) json_int(&j, "regs", r->regs);
        else json_null(&j, "regs");
        if (r->spill >= 0) json_int(&j, "spill_bytes", r->spill);
        else json_null(&j, "spill_bytes");
        if (r->smem >= 0) json_int(&j, "smem_bytes", r->smem);
        else json_null(&j, "smem_bytes");
        if (m->first_line) json_int(&j, "loop_first_line", m->first_line), json_int(&j, "loop_last_line", m->last_line);
        else json_null(&j, "loop_first_line"), json_null(&j, "loop_last_line");
#define X(f, s) json_int(&j, s, m->f);
        MIX_CLASSES(X)
#undef X
        json_end(&j);
        return;
    }
    printf("%-16s %-17s %-7s %-7s %5s %7s %8s  %-9s", c->kernel, tile, arch, who, regs, spill, smem, loop);
#define X(f, s) printf(" %9d", m->f);
    MIX_CLASSES(X)
#undef X
    printf("\n");
    fflush(stdout);
}

static bool info_value(const char *info, const char *key, char *out, size_t ol) {
    size_t kl = strlen(key);
    for (const char *p = info; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (!strncmp(p, key, kl) && p[kl] == '=') {
            snprintf(out, ol, "%.*s", (int)strcspn(p + kl + 1, "\n"), p + kl + 1);
            return true;
        }
    }
    return false;
}

/* Triton's tutorial matmul at c's configuration for sm_80; false with *why when skipped. */
static bool triton_row(const char *python, const Cfg *c, Res *r, Mix *m, char *why, size_t wl) {
    char dir[] = "/tmp/tile_gemm_report_XXXXXX";
    if (!mkdtemp(dir)) {
        snprintf(why, wl, "no temporary directory");
        return false;
    }
    char ptx_path[512], log_path[512], cmd[2048];
    snprintf(ptx_path, sizeof ptx_path, "%s/triton.ptx", dir);
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    snprintf(cmd, sizeof cmd,
             "'%s' '%s/bench/gpu/triton_matmul.py' ptx --bm %d --bn %d --bk %d --warps %d --stages %d --arch 80 "
             "--dtype %s --out '%s' >'%s' 2>&1",
             python, TILE_SOURCE_DIR, c->bm, c->bn, c->bk, c->warps, c->stages, c->dtype, ptx_path, log_path);
    int rc = system(cmd);
    bool ok = false;
    char *ptx = NULL, *info = NULL, *log = read_file(log_path, NULL);
    if (rc != 0) {
        const char *msg = log && *log ? log : "no output";
        /* the last non-empty line says why */
        const char *last = msg;
        for (const char *p = msg; *p; p++)
            if (*p == '\n' && p[1] && p[1] != '\n') last = p + 1;
        snprintf(why, wl, "triton compile failed: %.*s", (int)strcspn(last, "\n"), last);
        goto done;
    }
    ptx = read_file(ptx_path, NULL);
    char info_path[600];
    snprintf(info_path, sizeof info_path, "%s.info", ptx_path);
    info = read_file(info_path, NULL);
    if (!ptx || !info) {
        snprintf(why, wl, "triton wrote no PTX");
        goto done;
    }
    char ptxas[512] = "ptxas", shared[32] = "-1";
    info_value(info, "ptxas", ptxas, sizeof ptxas);
    info_value(info, "shared", shared, sizeof shared);
    if (access(ptxas, X_OK) && access("/usr/local/cuda/bin/ptxas", X_OK) == 0) snprintf(ptxas, sizeof ptxas, "/usr/local/cuda/bin/ptxas");
    if (!ptxas_info(ptxas, ptx_path, tile_target_default(), r, why, wl)) goto done; /* Triton compiles for capability 80 */
    r->smem = atoi(shared); /* Triton's shared memory is dynamic: ptxas does not see it */
    analyze_ptx(ptx, m);
    ok = true;
done:
    free(ptx), free(info), free(log);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) { /* a leftover temporary directory is harmless */
    }
    return ok;
}

int main(int argc, char **argv) {
    bool quick = false, want_triton = true;
    const char *python = "python3";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--no-triton")) want_triton = false;
        else if (!strcmp(argv[i], "--python") && i + 1 < argc) python = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = true;
        else {
            fprintf(stderr, "usage: %s [--quick] [--no-triton] [--python PY] [--json]\n", argv[0]);
            return 2;
        }
    }
    /* Is Triton there?  One probe, so every row can say why it was skipped. */
    char triton_skip[512] = "";
    if (!want_triton) snprintf(triton_skip, sizeof triton_skip, "--no-triton given");
    else {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "'%s' -c 'import triton' >/dev/null 2>&1", python);
        if (system(cmd) != 0) snprintf(triton_skip, sizeof triton_skip, "'%s -c \"import triton\"' failed: Triton is not installed", python);
    }

    fprintf(json ? stderr : stdout, "gemm report: kernels/gemm/gemm.tile per configuration (registers, spills and shared memory from ptxas -v;\n"
           "main-loop instruction mix from the PTX), Triton's tutorial matmul at the same configuration for the default target\n");
    if (triton_skip[0] && json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "gemm_report");
        json_str(&j, "who", "triton");
        json_str(&j, "skipped", triton_skip);
        json_end(&j);
    } else if (triton_skip[0]) printf("triton: skipped: %s\n", triton_skip);
    print_header();
    int n = quick ? 1 : NCFG, failures = 0, spills_default = -1;
    bool default_failed = false;
    bool no_ptxas = false;
    for (int ci = 0; ci < n; ci++) {
        const Cfg *c = &configs[ci];
        /* the default target and the newest one (the targets between them share the default's code) */
        int ntargets = 0;
        while (tile_target_name(ntargets)) ntargets++;
        const char *archs[] = {tile_target_default(), tile_target_name(ntargets - 1)};
        for (int a = 0; a < 2; a++) {
            char defs[5][32];
            snprintf(defs[0], 32, "BM=%d", c->bm);
            snprintf(defs[1], 32, "BN=%d", c->bn);
            snprintf(defs[2], 32, "BK=%d", c->bk);
            snprintf(defs[3], 32, "num_warps=%d", c->warps);
            snprintf(defs[4], 32, "num_stages=%d", c->stages);
            const char *defines[] = {defs[0], defs[1], defs[2], defs[3], defs[4], NULL};
            const char *spec[] = {"sak=1", "sbn=1", "m=16", "n=16", "k=16", "sam=16", "sbk=16", "scm=16", NULL};
            tile_compile_options o = {.arch = archs[a], .kernel = c->kernel, .defines = defines, .specialize = spec, .want_cubin = 1};
            tile_compiled comp;
            tile_status st = tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &comp);
            if (st != TILE_OK && json) {
                char tile[32], why[600];
                snprintf(tile, sizeof tile, "%dx%dx%d w%d s%d", c->bm, c->bn, c->bk, c->warps, c->stages);
                snprintf(why, sizeof why, "%s: %.*s", tile_status_string(st), (int)strcspn(comp.diagnostics, "\n"), comp.diagnostics);
                JsonOut j;
                json_begin(&j, stdout);
                json_str(&j, "bench", "gemm_report");
                json_str(&j, "kernel", c->kernel);
                json_str(&j, "tile", tile);
                json_str(&j, "arch", archs[a]);
                json_str(&j, "who", "tile");
                json_str(&j, "compile_failed", why);
                json_end(&j);
            } else if (st != TILE_OK) {
                printf("%-16s %3dx%dx%d w%d s%d %-7s tile    compile failed: %s: %.*s\n", c->kernel, c->bm, c->bn, c->bk, c->warps,
                       c->stages, archs[a], tile_status_string(st), (int)strcspn(comp.diagnostics, "\n"), comp.diagnostics);
                failures++;
                if (ci == 0) default_failed = true;
                tile_compiled_free(&comp);
                continue;
            }
            if (comp.ptxas_missing) no_ptxas = true;
            Res r = {comp.kernels[0].registers, comp.kernels[0].spill_bytes, comp.kernels[0].smem_bytes};
            Mix m;
            analyze_ptx(comp.ptx, &m);
            print_row(c, archs[a], "tile", &r, &m);
            if (ci == 0 && a == 0) spills_default = r.spill;
            tile_compiled_free(&comp);
        }
        if (!c->dtype) continue;
        Res r = {-1, -1, -1};
        Mix m;
        memset(&m, 0, sizeof m);
        char why[600] = "";
        if (triton_skip[0]) snprintf(why, sizeof why, "%s", triton_skip);
        if (!triton_skip[0] && triton_row(python, c, &r, &m, why, sizeof why)) print_row(c, tile_target_default(), "triton", &r, &m);
        else if (json) {
            char tile[32];
            snprintf(tile, sizeof tile, "%dx%dx%d w%d s%d", c->bm, c->bn, c->bk, c->warps, c->stages);
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "gemm_report");
            json_str(&j, "kernel", c->kernel);
            json_str(&j, "tile", tile);
            json_str(&j, "arch", tile_target_default());
            json_str(&j, "who", "triton");
            json_str(&j, "skipped", why);
            json_end(&j);
        } else printf("%-16s %3dx%dx%d w%d s%d  %-7s triton  skipped: %s\n", c->kernel, c->bm, c->bn, c->bk, c->warps, c->stages, tile_target_default(), why);
    }
    if (json) {
        char note[200];
        if (no_ptxas) json_note("note", "ptxas not found: registers, spills (null) were not measured");
        if (spills_default > 0) {
            snprintf(note, sizeof note, "the default configuration (bf16 128x128x32, 4 warps, 3 stages, default target) spills %d bytes", spills_default);
            json_note("note", note);
        }
        if (failures) {
            snprintf(note, sizeof note, "%d compilations failed%s", failures, default_failed ? ", the default configuration's among them" : "");
            json_note("note", note);
        }
        return default_failed ? 1 : 0;
    }
    if (no_ptxas) printf("ptxas not found: registers, spills (n/a above) were not measured\n");
    printf("columns: regs/spill B from ptxas -v (spill = stores + loads); smem B: tile's static shared memory, Triton's\n"
           "dynamic shared memory from its metadata; loop: PTX lines of the main loop; cp.async: copies; cp.grp:\n"
           "commit_group/wait_group; instr: every instruction in the loop\n");
    if (spills_default > 0) printf("note: the default configuration (bf16 128x128x32, 4 warps, 3 stages, default target) spills %d bytes\n", spills_default);
    if (failures) printf("%d compilations failed%s\n", failures, default_failed ? ", the default configuration's among them" : "");
    return default_failed ? 1 : 0;
}

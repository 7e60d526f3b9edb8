/* compile_time.c - how long each shipped kernel takes to compile, by stage,
 * next to how long ptxas takes to assemble the PTX we produce.
 *
 *   build/bench/compile_time [--arch sm_80|sm_90a] [--reps N] [--no-line-info] [--json] [--list] [FILE.tile ...]
 *
 * Without files: every .tile file under kernels/, its subfolders at any depth
 * included (the families, sampling/, examples/), in path order.  --list
 * prints those paths and compiles nothing.
 *
 * --json: one JSON object per kernel (times in ms, null where ptxas is
 * missing) and one for the closing note; the header goes to stderr.
 *
 * Each measurement is a cold compile in a fresh arena (the process keeps
 * only LLVM's one-time target registration, done before timing).  The
 * median of N repetitions is printed.  Goal: source -> PTX faster than ptxas
 * on the same PTX.
 *
 * Besides the stages' wall times, the CPU time (user + system) of each
 * compile: `cpu` is this process's (the front end and every LLVM worker
 * thread, summed), `ptxas-cpu` that of the ptxas child; on a loaded machine
 * wall times swing several-fold and the CPU times are the comparison to
 * trust (`cpu-ratio` = ptxas-cpu / cpu). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tools/numparse.h"
#include "include/tile/tile.h"
#include "tools/json.h"

typedef struct Stage {
    const char *name;
    double ms[64];
} Stage;

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    double t[64];
    memcpy(t, v, sizeof(double) * (size_t)n);
    qsort(t, (size_t)n, sizeof(double), cmp_d);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* user + system CPU seconds of `who` (RUSAGE_SELF: every thread of this process; RUSAGE_CHILDREN: waited children) */
static double cpu_seconds(int who) {
    struct rusage u;
    if (getrusage(who, &u)) return 0;
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* every .tile file under `dir`, subfolders included, appended to names[*n] (at most `max`) */
static void collect_tiles(const char *dir, char (*names)[1024], int *n, int max) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && *n < max) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        size_t l = strlen(e->d_name);
        struct stat sb;
        if (stat(path, &sb)) continue;
        if (S_ISDIR(sb.st_mode)) collect_tiles(path, names, n, max);
        else if (l > 5 && !strcmp(e->d_name + l - 5, ".tile")) memcpy(names[(*n)++], path, sizeof path);
    }
    if (d) closedir(d);
}

static int cmp_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* timing lines look like "name   12.345 ms" */
static double grab(const char *timing, const char *name) {
    const char *p = timing ? strstr(timing, name) : NULL;
    if (!p) return 0;
    p += strlen(name);
    return atof(p);
}

int main(int argc, char **argv) {
    const char *arch = tile_target_default();
    int reps = 5, no_line_info = 0; /* --no-line-info: PTX without .file/.loc, to see what line info costs */
    const char *files[64];
    int nf = 0, json = 0, list = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc) arch = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (!cli_option_int("compile_time", argv[i], argv[i + 1], 1, 64, &reps)) return 2;
            i++;
        }
        else if (!strcmp(argv[i], "--no-line-info")) no_line_info = 1;
        else if (!strcmp(argv[i], "--list")) list = 1;
        else if (nf < 64) files[nf++] = argv[i];
    }
    int argn = nf; /* files named on the command line */
    static char names[64][1024];
    /* by default every shipped kernel: the .tile files of kernels/ at any depth (a fixed list of folders
     * missed sampling/ and examples/) */
    if (!argn) {
        int n = 0;
        collect_tiles(TILE_SOURCE_DIR "/kernels", names, &n, 64);
        qsort(names, (size_t)n, sizeof names[0], cmp_name);
        for (int k = 0; k < n; k++) files[nf++] = names[k];
    }
    if (list) {
        for (int f = 0; f < nf; f++) printf("%s\n", files[f]);
        return 0;
    }
    /* warm-up: LLVM target registration happens once per process */
    {
        tile_compile_options o = {.arch = arch, .no_line_info = no_line_info};
        tile_compiled c;
        tile_compile_source("warm.tile", "kernel k(x: *f32) { store(x + arange(0, 32), zeros([32], f32)); }", &o, &c);
        tile_compiled_free(&c);
    }
    static const char *stage_names[] = {"frontend", "passes total", "llvm codegen", "llvm O3", "ptx emission", "source to ptx", "ptxas"};
    enum { NS = 7, NT = NS + 2 }; /* then CPU ms of the compile (this process) and of ptxas (the child) */
    FILE *hdr = json ? stderr : stdout;
    fprintf(hdr, "compile time per kernel (%s, median of %d cold compiles, ms)\n", arch, reps);
    fprintf(hdr, "%-22s %9s %9s %9s %9s %9s %11s %9s %8s %9s %9s %9s\n", "kernel", "frontend", "passes", "llvm-ir", "O3", "ptx-emit",
            "src->ptx", "ptxas", "ratio", "cpu", "ptxas-cpu", "cpu-ratio");
    int wins = 0, cpu_wins = 0, measured = 0;
    for (int f = 0; f < nf; f++) {
        Stage st[NT];
        bool have_ptxas = true;
        for (int r = 0; r < reps; r++) {
            tile_compile_options o = {.arch = arch, .time_passes = 1, .want_cubin = 1, .no_line_info = no_line_info};
            tile_compiled c;
            double self0 = cpu_seconds(RUSAGE_SELF), child0 = cpu_seconds(RUSAGE_CHILDREN);
            tile_status s = tile_compile_file(files[f], &o, &c);
            st[NS].ms[r] = 1e3 * (cpu_seconds(RUSAGE_SELF) - self0);
            st[NS + 1].ms[r] = 1e3 * (cpu_seconds(RUSAGE_CHILDREN) - child0);
            if (s != TILE_OK) {
                fprintf(stderr, "%s: %s\n%s", files[f], tile_status_string(s), c.diagnostics);
                tile_compiled_free(&c);
                return 1;
            }
            if (c.ptxas_missing) have_ptxas = false;
            for (int k = 0; k < NS; k++) st[k].ms[r] = grab(c.timing, stage_names[k]);
            tile_compiled_free(&c);
        }
        const char *base = strrchr(files[f], '/');
        base = base ? base + 1 : files[f];
        double m[NT];
        for (int k = 0; k < NT; k++) m[k] = median(st[k].ms, reps);
        if (json) {
            static const char *keys[] = {"frontend_ms", "passes_ms", "llvm_ir_ms", "o3_ms", "ptx_emit_ms", "src_to_ptx_ms"};
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "compile_time");
            json_str(&j, "kernel", base);
            json_str(&j, "arch", arch);
            json_int(&j, "reps", reps);
            for (int k = 0; k < 6; k++) json_num(&j, keys[k], m[k]);
            json_num(&j, "src_to_ptx_cpu_ms", m[NS]);
            if (have_ptxas) {
                json_num(&j, "ptxas_ms", m[6]);
                json_num(&j, "ratio", m[6] / (m[5] > 0 ? m[5] : 1e-9));
                json_num(&j, "ptxas_cpu_ms", m[NS + 1]);
                json_num(&j, "cpu_ratio", m[NS + 1] / (m[NS] > 0 ? m[NS] : 1e-9));
            } else {
                json_null(&j, "ptxas_ms");
                json_null(&j, "ratio");
                json_null(&j, "ptxas_cpu_ms");
                json_null(&j, "cpu_ratio");
            }
            json_end(&j);
        }
        if (have_ptxas) {
            measured++;
            wins += m[5] < m[6];
            cpu_wins += m[NS] < m[NS + 1];
        }
        if (json) continue;
        if (have_ptxas) {
            printf("%-22s %9.2f %9.2f %9.2f %9.2f %9.2f %11.2f %9.2f %7.2fx %9.2f %9.2f %8.2fx\n", base, m[0], m[1], m[2], m[3], m[4],
                   m[5], m[6], m[6] / (m[5] > 0 ? m[5] : 1e-9), m[NS], m[NS + 1], m[NS + 1] / (m[NS] > 0 ? m[NS] : 1e-9));
        } else {
            printf("%-22s %9.2f %9.2f %9.2f %9.2f %9.2f %11.2f %9s %8s %9.2f %9s %9s\n", base, m[0], m[1], m[2], m[3], m[4], m[5], "n/a",
                   "n/a", m[NS], "n/a", "n/a");
        }
    }
    if (json) {
        char note[200];
        if (measured)
            snprintf(note, sizeof note, "source->PTX faster than ptxas for %d of %d kernels in wall time, %d in CPU time (ratio = ptxas / source->PTX)",
                     wins, measured, cpu_wins);
        else snprintf(note, sizeof note, "ptxas not found: the comparison with ptxas was not measured");
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "compile_time");
        json_str(&j, "note", note);
        json_int(&j, "faster_than_ptxas", wins);
        json_int(&j, "faster_than_ptxas_cpu", cpu_wins);
        json_int(&j, "measured", measured);
        json_end(&j);
    } else if (measured)
        printf("source->PTX faster than ptxas for %d of %d kernels in wall time, %d in CPU time (ratio = ptxas / source->PTX)\n", wins, measured,
               cpu_wins);
    else printf("ptxas not found: the comparison with ptxas was not measured\n");
    return 0;
}

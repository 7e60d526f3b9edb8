/* emu_load.c - how long the emulator takes to load (parse and check) large PTX modules (not a test).
 *
 * The shapes that were quadratic once: a body of N labels each followed by an ld.param of one of P parameters
 * (labels and names found by linear search: 22 s at N = 100000, P = 20000), a label defined twice N labels apart,
 * and a parameter declared twice with N/5 parameters between.  tests/test_emu_limits.c many_labels_and_parameters checks
 * what these modules do (they load and run, or are refused); this prints the seconds.
 *
 * Run: build/bench/emu_load [N]   (default 100000; 10 to 10000000, else exit 2) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/device.h"
#include "support/support.h"
#include "tools/numparse.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Load text; print the seconds and whether the emulator took it. */
static void timed_load(TileDevice *d, const char *what, const Str *text) {
    TileDevModule *m = NULL;
    double t0 = now();
    DevStatus st = dev_module_load_ptx(d, text->buf, &m);
    double t = now() - t0;
    printf("%-44s %8.1f KB  %7.3f s  %s\n", what, (double)text->len / 1024, t, st == DEV_OK ? "loaded" : "refused");
    if (m) dev_module_unload(m);
}

int main(int argc, char **argv) {
    int n = 100000;
    if (argc > 2) {
        fprintf(stderr, "usage: emu_load [N]\n");
        return 2;
    }
    if (argc == 2 && !cli_option_int("emu_load", "N", argv[1], 10, 10000000, &n)) return 2;
    int p = n / 5 < 20000 ? n / 5 : 20000; /* PTX 8.1's 32764 bytes of parameters hold 20000 .u8 and a .u64 */
    TileDevice *d = NULL;
    if (dev_open("emu", NULL, &d, NULL) != DEV_OK) {
        fprintf(stderr, "emu_load: cannot open the emulator\n");
        return 1;
    }
    Str s = {0};
    str_puts(&s, ".version 8.1\n.target sm_80\n.address_size 64\n.visible .entry many(.param .u64 out");
    for (int i = 0; i < p; i++) str_printf(&s, ", .param .u8 p%d", i);
    str_puts(&s, ")\n{\n .reg .b32 %r<4>;\n .reg .b16 %h<2>;\n mov.u32 %r1, 0;\n bra L_last;\n");
    for (int i = 0; i < n; i++) str_printf(&s, "L_%d:\n add.u32 %%r1, %%r1, 1;\n ld.param.u8 %%h1, [p%d];\n", i, i % p);
    str_puts(&s, "L_last:\n ret;\n}\n");
    char what[96];
    snprintf(what, sizeof what, "%d labels, %d parameters", n, p);
    timed_load(d, what, &s);

    s.len = 0;
    str_puts(&s, ".version 7.8\n.target sm_80\n.address_size 64\n.visible .entry dup()\n{\n");
    for (int i = 0; i < n; i++) str_printf(&s, "L_%d:\n", i);
    str_puts(&s, "L_7:\n ret;\n}\n");
    snprintf(what, sizeof what, "%d labels, one defined twice", n);
    timed_load(d, what, &s);

    s.len = 0;
    str_puts(&s, ".version 7.8\n.target sm_80\n.address_size 64\n.visible .entry dup(.param .u32 p7");
    for (int i = 0; i < n / 5; i++) str_printf(&s, ", .param .u32 q%d", i);
    str_puts(&s, ", .param .u32 p7)\n{\n ret;\n}\n");
    snprintf(what, sizeof what, "%d parameters, one declared twice", n / 5 + 2);
    timed_load(d, what, &s);
    str_free(&s);
    dev_close(d);
    return 0;
}

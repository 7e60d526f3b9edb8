/* main.c - `tile`: the command table and the dispatch.
 *
 *   tile <command> [options]      run a command (one file each, cmd_*.c)
 *   tile help <command> [sub]     its usage: the same as `tile <command> [sub] --help`
 *   tile --help | -h              the commands
 *   tile --version                the library's version and its targets
 *
 * Exit status (every command): the table in cli.h (CLI_EXIT_HELP).  What a
 * command printed on standard output is checked here, once, for all of them:
 * output lost to a full disk or a closed descriptor exits 3, not 0. */
#include "tools/cli.h"
#include "tools/cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const CliCommand commands[] = {
    {"compile", "FILE.tile: compile kernels to Tile IR, LLVM IR, PTX or cubin", cmd_compile},
    {"run", "gemm|attention|decode|moe|norm|act|sample|spec|rope|layer: run on random data, check against float64, time", cmd_run},
    {"tune", "gemm|FILE.tile: time each @config and store the fastest in the tuning database", cmd_tune},
    {"aot", "FILE.tile: export kernels as C sources with embedded PTX", cmd_aot},
    {"cache", "stats|list|clear: the compile cache", cmd_cache},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static void print_usage(FILE *f) {
    fputs("usage: tile <command> [options]\n\ncommands:\n", f);
    cli_print_commands(f, commands, NCOMMANDS);
    fputs("\n"
          "  tile help COMMAND [SUBCOMMAND]   the options of a command (also: tile COMMAND --help)\n"
          "  tile --version                   the version and the targets\n"
          "\n"
          CLI_EXIT_HELP,
          f);
}

static int print_version(void) {
    printf("tile %s\ntargets:", tile_version());
    for (int i = 0; tile_target_name(i); i++) printf(" %s", tile_target_name(i));
    printf(" (default %s)\n", tile_target_default());
    return CLI_EXIT_OK;
}

/* tile help CMD [SUB...]: run `tile CMD [SUB...] --help` */
static int help(int argc, char **argv) {
    if (argc < 2 || (argc == 2 && !strcmp(argv[1], "help"))) { /* tile help help: the help of help, the commands */
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    const CliCommand *c = cli_find_command(commands, NCOMMANDS, argv[1]);
    if (!c) {
        const char *near = cli_near_command(commands, NCOMMANDS, argv[1]);
        fprintf(stderr, "tile: unknown command '%s'%s%s%s\n", argv[1], near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    char **args = malloc(sizeof *args * (size_t)(argc + 1));
    if (!args) return fprintf(stderr, "tile: out of host memory\n"), CLI_EXIT_FAIL;
    int n = 0;
    for (int i = 1; i < argc; i++) args[n++] = argv[i];
    args[n++] = "--help";
    args[n] = NULL;
    int rc = c->run(n, args);
    free(args);
    return rc;
}

/* Standard output written whole, else a message and exit 3 (a command that failed keeps its status). */
static int stdout_flushed(int rc) {
    if (rc == CLI_EXIT_OUTPUT) return rc; /* a failure (CLI_EXIT_FAIL too): the command said what failed */
    errno = EIO;
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    fprintf(stderr, "tile: cannot write standard output: %s\n", strerror(errno));
    return rc == CLI_EXIT_OK ? CLI_EXIT_OUTPUT : rc;
}

static int run_command(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        if (argc > 2) return help(argc - 1, argv + 1); /* tile --help compile: tile help compile */
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
        if (argc > 2) { /* as every command: an argument it does not take is a usage error, never ignored */
            fprintf(stderr, "tile: unexpected argument '%s' after %s\nRun 'tile --help' for usage.\n", argv[2], a);
            return CLI_EXIT_USAGE;
        }
        return print_version();
    }
    if (!strcmp(a, "help")) return help(argc - 1, argv + 1);
    const CliCommand *c = cli_find_command(commands, NCOMMANDS, a);
    if (!c) {
        const char *near = cli_near_command(commands, NCOMMANDS, a);
        fprintf(stderr, "tile: unknown command '%s'%s%s%s\n", a, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}

int main(int argc, char **argv) { return stdout_flushed(run_command(argc, argv)); }

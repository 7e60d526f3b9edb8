/* cli.h - what every `tile` command shares.
 *
 * The CLI links only the public API (include/tile/tile.h).  Each command is a
 * file `cmd_<name>.c` with a handler `int cmd_<name>(int argc, char **argv)`
 * (argv[0] is the command's own name) that parses its options with
 * cli_getopt, a wrapper of getopt_long that reports an unknown option or a
 * missing value itself, and returns an exit status, the same table for every
 * command (CLI_EXIT_HELP, README.md):
 *
 *   0 success;
 *   1 an error in the source (located diagnostics on stderr);
 *   2 a usage error: an unknown command, subcommand or option, a missing or
 *     malformed value, a value the library refuses, option values the kernels
 *     do not take (checked by the command before the call: gemm's type pair,
 *     decode's query rows per KV head), no input file, an input file that
 *     cannot be read;
 *   3 a failure: internal, a tool (ptxas), the device (cannot be opened, a
 *     call fails, a driver too old for the PTX: TILE_ERROR_UNSUPPORTED from a
 *     call), a cache folder that cannot be used, a check that does not match,
 *     and an output that cannot be written (CLI_EXIT_OUTPUT): -o's file,
 *     `tile aot`'s OUT.h and OUT.c, the tuning database's record, standard
 *     output (a full disk, a closed pipe); a file written is left as it was
 *     (CliOutput).
 *
 * Option values are validated here, strictly: a number is the whole string
 * and in range, a device is one the runtime accepts, a target one of
 * tile_target_name(); each error names the option and the command. */
#ifndef TILE_TOOLS_CLI_H
#define TILE_TOOLS_CLI_H

#include "include/tile/tile.h"
#include "tools/numparse.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* CLI_EXIT_OUTPUT (an output that cannot be written) is a failure, 3, as it always was for `tile compile`; the
 * name says where in the code it comes from. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_SOURCE = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_FAIL = 3, CLI_EXIT_OUTPUT = CLI_EXIT_FAIL };
/* The last line of every command's --help. */
#define CLI_EXIT_HELP                                                                                                     \
    "exit status: 0 ok, 1 error in the source, 2 usage error (options, an unreadable input), 3 failure (internal, a\n"  \
    "             tool, the device, a check that does not match, an output that cannot be written)\n"
/* What an option parser returns to go on; any other value is the exit status
 * (0 after --help). */
enum { CLI_CONTINUE = -1 };

/* ---- commands and subcommands ---- */
typedef struct CliCommand {
    const char *name;
    const char *summary;               /* one line in the parent's help */
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
} CliCommand;

const CliCommand *cli_find_command(const CliCommand *cmds, int n, const char *name);
/* The command a typo most likely meant (for "did you mean"), NULL when none is close. */
const char *cli_near_command(const CliCommand *cmds, int n, const char *name);
void cli_print_commands(FILE *f, const CliCommand *cmds, int n);
/* argv[0] is the group ("run", "cache"), argv[1] the subcommand: run it.  No
 * subcommand: the group's usage on stderr (exit 2); --help or -h: on stdout. */
int cli_dispatch(const char *group, const CliCommand *cmds, int n, int argc, char **argv);

/* Usage on stdout; returns 0 (the answer to --help). */
int cli_help(const char *usage);
/* "tile: MESSAGE" and "Run 'tile CMD --help' for usage." on stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The exit status of a library status: 1 compile error, 2 invalid value or I/O, else 3. */
int cli_exit_status(tile_status st);
/* Diagnostics that say only that no kernel has the name --kernel gave ("error: no kernel named 'X'", one line):
 * the command line is wrong, not the source (exit 2, not 1). */
bool cli_no_kernel_named(const char *diagnostics);
/* A shipped kernel's call on the command's data failed: "tile: API failed: MESSAGE" on stderr; the exit
 * status, 2 when the library refused the values the options gave (TILE_ERROR_INVALID_VALUE), else 3: a
 * TILE_ERROR_UNSUPPORTED here is the device's or driver's, since the commands refuse the option values the
 * kernels do not take before calling. */
int cli_call_failed(tile_context *ctx, const char *api, tile_status st);

/* ---- options ---- */
typedef struct CliGetopt {
    const char *cmd;               /* "run gemm": messages and the --help hint */
    int argc;
    char **argv;                   /* argv[0]: the command; getopt may permute the rest */
    const char *shortopts;         /* getopt's, without the leading ':' */
    const struct option *longopts; /* ends with {0} */
    /* The codes of the options that may be given more than once (-D, -I, --arg, ...), 0-terminated; NULL: none.
     * Every other option is single-valued: cli_getopt refuses it given again with another value (`--m 64 --m 128`:
     * which was meant?  The last one won, silently), as a usage error naming the option and both values; the same
     * value again is accepted (a flag given twice, a script that repeats a default).  The same number spelled
     * otherwise (`--m 64 --m 064`, `--top-p 0.5 --top-p .5`) is the same value when the option is numeric: such a
     * repeat is let through to the command, and cli_i64, cli_int or cli_double reading it confirms it; an option
     * that is not read as a number (a file named 064, then 64) is refused by the next cli_getopt call. */
    const int *repeatable;
    struct {
        int code;
        const char *value;
    } seen[64]; /* the single-valued options given so far, with their values */
    int nseen;
    int numeric_repeat; /* 1 + the seen[] index the option just returned repeats as the same number, until confirmed */
    /* after each cli_getopt: */
    const char *arg;   /* the option's value, or NULL */
    char name[64];     /* the option as written: "--m", "-D" */
    int first_operand; /* after the last option: the operands are argv[first_operand..argc) */
    bool started;
} CliGetopt;

/* The next option's code, -1 after the last, or '?' after reporting an unknown
 * option, a missing value or a single-valued option given twice with two values
 * on stderr (the caller returns CLI_EXIT_USAGE); the last also when the option returned before repeated a number
 * in another spelling and the command did not read it as a number. */
int cli_getopt(CliGetopt *g);

/* --device D, --reps R and --json: the options every `tile run` command and `tile tune` take, one code each
 * for every command's option table. */
enum { CLI_OPT_DEVICE = 0x1000, CLI_OPT_REPS, CLI_OPT_JSON };
/* One of them (c, cli_getopt's code) into its field (reps NULL: the command has no --reps): 0, or the exit status
 * after a message; any other c is CLI_EXIT_USAGE (cli_getopt has reported it). */
int cli_common_option(CliGetopt *g, int c, const char **device, int *reps, bool *json);
/* Whether the input file cannot be read as the library reads one (a regular file): true after "tile: cannot read
 * 'FILE': REASON" on stderr (the caller returns CLI_EXIT_USAGE).  Nothing is read: a pipe would lose it.  A command
 * checks it before the options that need the file (tune's --kernel), so that a wrong path is the first thing said. */
bool cli_input_unreadable(const char *file);
/* After the last option: 0, or a usage error when an operand follows (a command that takes none). */
int cli_no_operands(const CliGetopt *g);

/* The value of the current option, checked; each returns 0 or, after a
 * message naming the option, CLI_EXIT_USAGE.  The numeric ones confirm a repeat of the same number (CliGetopt). */
int cli_i64(CliGetopt *g, int64_t lo, int64_t hi, int64_t *out);   /* decimal integer, whole string */
int cli_int(CliGetopt *g, int lo, int hi, int *out);
int cli_double(CliGetopt *g, double lo, double hi, double *out);   /* finite number, whole string */
int cli_device(const CliGetopt *g, const char **out);                    /* "emu", "cuda", "cuda:N" */
int cli_arch(const CliGetopt *g, const char **out);                      /* one of tile_target_name(); "": NULL */
/* One of `allowed` by tile_dtype_name; `f32_alias` (e.g. "tf32", or NULL) also means TILE_F32. */
int cli_dtype(const CliGetopt *g, const tile_dtype *allowed, int n, const char *f32_alias, tile_dtype *out);
/* One of the NULL-terminated `names`: its index. */
int cli_choice(const CliGetopt *g, const char *const *names, int *out);
/* The sizes the options give (each >= 1), multiplied: 0 when the product is at most CLI_MAX_ELEMENTS, else
 * a usage error naming `what` ("--batch * --seq * --heads * --head-dim") and the product.  Each option alone
 * is in range, but the product overflowed the element counts the commands allocate with (a buffer wrapped to
 * a small or zero size, and was filled past its end). */
enum { CLI_MAX_ELEMENTS_LOG2 = 48 }; /* 2^48 elements: 2 PiB as the float64 copies of the inputs */
int cli_elements(const char *cmd, const char *what, int n, ...);
/* A buffer's size for a size that may be 0 (an option of 0: a call with nothing to compute): malloc(0) may say
 * NULL and tile_malloc refuses 0 bytes, so such a buffer holds one unused element. */
static inline size_t cli_alloc_size(size_t bytes) { return bytes ? bytes : 1; }
/* cli_parse_i64, cli_parse_double: strict numbers of a string (no option), in tools/numparse.h */

/* ---- NULL-terminated string lists (-D, -I, --kernel, ...) ---- */
typedef struct CliList {
    const char **v; /* NULL-terminated once non-empty */
    int n, cap;
    char **owned; /* the items made here (a -D value quoted), freed with the list */
    int nowned;
} CliList;

int cli_list_add(CliList *l, const char *s); /* 0, or CLI_EXIT_FAIL when out of memory */
/* The items, NULL-terminated; never NULL (an empty list gives an empty array). */
const char *const *cli_list_items(const CliList *l);
void cli_list_free(CliList *l);
/* Add the current option's "NAME=VALUE" (checked: a name, then '='); a VALUE that reads as no name, number, type
 * or quoted string is quoted (-D W=.cg is W=".cg"). */
int cli_define(const CliGetopt *g, CliList *l);

/* ---- output and devices ---- */
/* An output file (-o): written beside its name and renamed over it when whole (support/outfile.h), so a
 * failed or interrupted write leaves the file as it was and a reader never sees half of one; NULL or "-"
 * is standard output, as is a path naming standard output's file (/dev/stdout), and a path that exists but is
 * no regular file (/dev/null, a FIFO) is written in place.  A symbolic link's target is replaced, the link kept. */
typedef struct CliOutput {
    FILE *f;
    const char *path; /* as given; NULL: standard output */
    char *tmp;        /* the file written, renamed to target by cli_output_close; NULL: written in place */
    char *target;     /* path, or the file a symbolic link names (malloc'd) */
    int err;          /* errno of the first write that failed, 0 */
} CliOutput;
/* false with "tile: cannot write PATH: REASON" on stderr; nothing was created then. */
bool cli_output_open(CliOutput *o, const char *path);
/* n bytes to the output; a failure is remembered for cli_output_close. */
void cli_output_write(CliOutput *o, const void *p, size_t n);
/* Flush, close and put the file in place (never closes standard output); false with the message when
 * anything failed, the file as it was before then. */
bool cli_output_close(CliOutput *o);
/* Drop what was written (an error after cli_output_open): the file stays as it was. */
void cli_output_discard(CliOutput *o);

/* ---- progress ----
 * Long runs (the emulator, tuning) say what they are doing on stderr as they
 * go, but only to a person: when stderr is a terminal and the output is not
 * --json.  cli_progress_wanted decides once; cli_progress prints a line when on. */
bool cli_progress_wanted(bool json);
void cli_progress(bool on, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open a context on `device` (NULL: TILE_DEVICE, else cuda when present, else emu).
 * 0; 2 when the device string (TILE_DEVICE) is invalid; 3 when it cannot be opened. */
int cli_context_open(const char *cmd, const char *device, tile_context **ctx);

#endif

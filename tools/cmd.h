/* cmd.h - the commands of `tile`, one file each (main.c and cmd_run.c dispatch to them).
 *
 * Every handler takes argv[0] = its own name and returns the exit status
 * documented in cli.h; every one answers --help and -h on stdout. */
#ifndef TILE_TOOLS_CMD_H
#define TILE_TOOLS_CMD_H

int cmd_compile(int argc, char **argv); /* cmd_compile.c */
int cmd_run(int argc, char **argv);     /* cmd_run.c: gemm, attention, decode, moe, norm, act, rope, layer, sample, spec */
int cmd_tune(int argc, char **argv);    /* cmd_tune.c */
int cmd_aot(int argc, char **argv);     /* cmd_aot.c */
int cmd_cache(int argc, char **argv);   /* cmd_cache.c */

int cmd_run_gemm(int argc, char **argv);      /* cmd_run.c */
int cmd_run_attention(int argc, char **argv); /* cmd_run_attention.c */
int cmd_run_decode(int argc, char **argv);    /* cmd_run_attention.c */
int cmd_run_moe(int argc, char **argv);       /* cmd_run_moe.c */
int cmd_run_norm(int argc, char **argv);      /* cmd_run_norm.c */
int cmd_run_act(int argc, char **argv);       /* cmd_run_norm.c */
int cmd_run_sample(int argc, char **argv);    /* cmd_run_sample.c */
int cmd_run_spec(int argc, char **argv);      /* cmd_run_sample.c */
int cmd_run_rope(int argc, char **argv);      /* cmd_run_rope.c */
int cmd_run_layer(int argc, char **argv);     /* cmd_run_layer.c */

#endif

/* outfile.h - an output file replaced whole: written beside its name, then renamed into place.
 *
 * A reader of PATH sees the old file or the new one, never half of one, and a
 * write that fails (a full disk, a crash, a signal) leaves PATH as it was:
 *   1. outfile_create_beside makes "PATH.tmp-PID-N" (created exclusively,
 *      mode 0666 less the umask, as fopen makes a file; an existing PATH's
 *      mode is kept);
 *   2. the caller writes it whole (outfile_write_all, or stdio on the descriptor);
 *   3. rename(tmp, PATH) puts it in place; on any failure unlink(tmp).
 * `tile aot` (jit/aot.c, both OUT.h and OUT.c, renamed when both are whole)
 * and the `tile` command's -o (tools/cli.c) write their files this way.
 * Plain POSIX, no allocation but the temporary name: linked by libtile and by
 * the command line tool alike. */
#ifndef TILE_SUPPORT_OUTFILE_H
#define TILE_SUPPORT_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

/* The file that writing path replaces: the target of a symbolic link to a regular file (so the link stays and
 * its target gets the data, as fopen would write through it), else path itself; malloc'd, NULL when out of
 * memory. */
char *outfile_target(const char *path);
/* A new file beside path; its name, malloc'd, in *tmp.  The descriptor, or -1
 * with errno set (nothing created). */
int outfile_create_beside(const char *path, char **tmp);
/* All n bytes to fd (through EINTR and short writes); false with errno set. */
bool outfile_write_all(int fd, const void *p, size_t n);
/* data into a new file beside path, closed; its name in *tmp (malloc'd) for the
 * rename that puts it in place.  false with errno set, the file removed. */
bool outfile_write_beside(const char *path, const void *data, size_t n, char **tmp);

#endif

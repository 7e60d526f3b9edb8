/* outfile.c - output files written beside their name, then renamed (see outfile.h). */
#include "support/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_create_beside(const char *path, char **tmp) {
    size_t len = strlen(path) + 48;
    char *t = malloc(len);
    if (!t) return errno = ENOMEM, -1;
    int fd = -1;
    for (int n = 0; fd < 0 && n < 100; n++) {
        snprintf(t, len, "%s.tmp-%ld-%d", path, (long)getpid(), n);
        fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int e = errno;
        free(t);
        errno = e;
        return -1;
    }
    struct stat st; /* a file replaced keeps its permissions, as one written over in place does */
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) (void)fchmod(fd, st.st_mode & 07777);
    *tmp = t;
    return fd;
}

bool outfile_write_all(int fd, const void *p, size_t n) {
    const char *b = p;
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, b + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return false;
        }
        done += (size_t)w;
    }
    return true;
}

bool outfile_write_beside(const char *path, const void *data, size_t n, char **tmp) {
    char *t = NULL;
    int fd = outfile_create_beside(path, &t);
    if (fd < 0) return false;
    bool ok = outfile_write_all(fd, data, n);
    int e = errno;
    if (close(fd) && ok) ok = false, e = errno;
    if (!ok) {
        unlink(t);
        free(t);
        errno = e;
        return false;
    }
    *tmp = t;
    return true;
}

char *outfile_target(const char *path) {
    struct stat lst, st;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        char *t = realpath(path, NULL);
        if (t) return t;
    }
    return strdup(path);
}

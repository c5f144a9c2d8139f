/* outfile.c: see outfile.h */
#include "outfile.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* the folder of PATH ("." for a bare name) */
static void folder_of(const char *path, char *dir, size_t n) {
    snprintf(dir, n, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
}

int outfile_open(outfile_t *o, const char *path, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    char dir[sizeof o->path];
    folder_of(path, dir, sizeof dir);
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        /* a file system without unnamed files: a named one beside PATH */
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp%ld", path, (long)getpid());
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        o->named = fd >= 0;
    }
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        snprintf(err, errlen, "%s: cannot write in %s: %s", path, dir, strerror(errno));
        if (fd >= 0) close(fd);
        if (o->named) unlink(o->tmp);
        return -1;
    }
    /* O_TMPFILE makes the file 0600 whatever the umask; give it what a plain create would */
    mode_t mask = umask(0);
    umask(mask);
    if (!o->named && fchmod(fd, 0666 & ~mask) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        outfile_abandon(o);
        return -1;
    }
    return 0;
}

/* the unnamed file under a temporary name beside PATH, to be renamed over it */
static int name_it(outfile_t *o) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp%ld", o->path, (long)getpid());
    unlink(o->tmp);   /* a leftover of an earlier process with this pid */
    if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) != 0) return -1;
    o->named = 1;
    return 0;
}

int outfile_commit(outfile_t *o, char *err, size_t errlen) {
    int e = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0) e = errno ? errno : EIO;
    if (!e && !o->named && name_it(o) != 0) e = errno;
    if (fclose(o->f) != 0 && !e) e = errno;
    o->f = NULL;
    if (!e && rename(o->tmp, o->path) != 0) e = errno;
    if (e) {
        if (o->named) unlink(o->tmp);
        snprintf(err, errlen, "%s: write failed: %s (any previous file is left as it was)", o->path, strerror(e));
        return -1;
    }
    return 0;
}

void outfile_abandon(outfile_t *o) {
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->named) unlink(o->tmp);
}

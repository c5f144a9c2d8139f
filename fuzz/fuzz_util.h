/* fuzz_util.h: shared by the libFuzzer harnesses. The readers under test take a path, so each
 * input is written to one memfd (an in-memory file, created once) and handed over as
 * /proc/self/fd/N: no disk I/O, no temp files left behind, and the readers run unmodified.
 * Not a harness itself; the harnesses are fuzz_*.c. */
#ifndef PSRING_FUZZ_UTIL_H
#define PSRING_FUZZ_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* replaces the memfd's content with data[0, n) and returns its path */
static const char *fuzz_memfile(const uint8_t *data, size_t n) {
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("psring-fuzz", 0);
        if (fd < 0) { perror("memfd_create"); abort(); }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) { perror("ftruncate"); abort(); }
    size_t off = 0;
    while (off < n) {
        ssize_t w = pwrite(fd, data + off, n - off, (off_t)off);
        if (w <= 0) { perror("pwrite"); abort(); }
        off += (size_t)w;
    }
    return path;
}

#endif

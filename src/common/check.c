/* check.c: see check.h */
#include "check.h"
#include <string.h>
#include <errno.h>

int psring_log_rank = 0;

void die_at(const char *file, int line, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    if (file) fprintf(stderr, "psring: %s:%d: ", file, line);
    else fprintf(stderr, "psring: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) die("out of memory allocating %zu bytes", bytes);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die("out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void printf0(const char *fmt, ...) {
    if (psring_log_rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void rank_list_add(char *buf, size_t cap, int rank) {
    size_t used = strlen(buf);
    if (used >= 3 && !strcmp(buf + used - 3, "...")) return;
    char item[24];
    int n = snprintf(item, sizeof item, "%s%d", used ? ", " : "", rank);
    if (used + (size_t)n + 6 < cap) memcpy(buf + used, item, (size_t)n + 1);
    else if (used + 6 <= cap) memcpy(buf + used, ", ...", 6);
}

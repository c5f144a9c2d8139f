/* parse.c: see parse.h */
#include "parse.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int parse_size(const char *s, size_t lo, size_t hi, size_t *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0) return -1;
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 1024.0; end++; break;
    case 'M': mul = 1024.0 * 1024; end++; break;
    case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return -1;
    v *= mul;
    if (v < (double)lo || v > (double)hi) return -1;
    *out = (size_t)v;
    return 0;
}

int parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

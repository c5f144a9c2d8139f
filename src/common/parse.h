/* parse.h: the benchmarks' numeric flags, parsed one way. Each returns 0 and sets *out, or -1
 * when s is not entirely the number or lies outside [lo, hi]; the caller names the flag. */
#ifndef PSRING_PARSE_H
#define PSRING_PARSE_H
#include <stddef.h>

/* a byte count: a decimal number with an optional K, M or G (powers of 1024) and an optional B,
 * e.g. "16M", "4KB", "1.5G" */
int parse_size(const char *s, size_t lo, size_t hi, size_t *out);
/* a decimal integer */
int parse_int(const char *s, int lo, int hi, int *out);

#endif

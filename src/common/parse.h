/* parse.h: the benchmarks' numeric flags, parsed one way. Each returns 0 and sets *out, or -1
 * when s is not entirely the number or lies outside [lo, hi]; the caller names the flag. */
#ifndef PSRING_PARSE_H
#define PSRING_PARSE_H
#include <stddef.h>
#include <getopt.h>

/* a byte count: a decimal number with an optional K, M or G (powers of 1024) and an optional B,
 * e.g. "16M", "4KB", "1.5G" */
int parse_size(const char *s, size_t lo, size_t hi, size_t *out);
/* a decimal integer */
int parse_int(const char *s, int lo, int hi, int *out);

/* After getopt_long returned '?' or ':': the option it refused, for the message: a long one as
 * typed ("--bogus", "--servers" without its value), else "-x" for a short one (also inside a
 * cluster like "-xyz", where argv[optind - 1] is still the word before it). */
const char *parse_bad_option(char *const argv[], const struct option *lo);
/* After getopt_long matched the long option lo[li] (li from its last argument, -1 for a short
 * one): 0 if it was written out in full, else -1. getopt_long takes any unambiguous prefix
 * ("--top" for --topology), which the launcher, reading the flags itself, would not see. */
int parse_long_exact(char *const argv[], const struct option *lo, int li);

#endif

/* parse.h: the one home of number parsing for every program's flags and environment variables
 * (psring-train, the benchmarks, PSRING_* settings). Each parser returns 0 and sets *out, or -1
 * when s is empty, is not entirely the number (junk after it), overflows its type (errno), or
 * lies outside [lo, hi]; *out is then left alone. The caller names the flag in its own message.
 * Lists ("784,256,10", "M,N,K") are split by their owners, who read each number with
 * parse_long_at. */
#ifndef PSRING_PARSE_H
#define PSRING_PARSE_H
#include <stddef.h>
#include <getopt.h>

/* a byte count: a decimal number with an optional K, M or G (powers of 1024) and an optional B,
 * e.g. "16M", "4KB", "1.5G" */
int parse_size(const char *s, size_t lo, size_t hi, size_t *out);
/* a decimal integer */
int parse_int(const char *s, int lo, int hi, int *out);
int parse_long(const char *s, long lo, long hi, long *out);
/* a non-negative decimal integer of up to 64 bits (a seed): it starts with a digit, no sign */
int parse_ull(const char *s, unsigned long long hi, unsigned long long *out);
/* one decimal integer at the start of s, for the lists their owners split ("784,256,10",
 * "M,N,K", "10.0.0.0/8"): *end is set just after it. 0; -1 when s does not start with a number;
 * -2 when it overflows or lies outside [lo, hi] (*out is then left alone). */
int parse_long_at(const char *s, char **end, long lo, long hi, long *out);
/* a finite decimal number ("0.5", "1e-3"); an open bound is nextafter(bound, inside), e.g.
 * (1, 1024] is nextafter(1, 2) .. 1024 */
int parse_double(const char *s, double lo, double hi, double *out);
int parse_float(const char *s, double lo, double hi, float *out);
/* an output path flag's value into dst (cap bytes): 0; -1 when it is empty or starts with '-'
 * (getopt took the next flag as the value: "--csv --quiet"); -2 when it does not fit */
int parse_path(const char *s, char *dst, size_t cap);

/* After getopt_long returned '?' or ':': the option it refused, for the message: a long one as
 * typed ("--bogus", "--servers" without its value), else "-x" for a short one (also inside a
 * cluster like "-xyz", where argv[optind - 1] is still the word before it). */
const char *parse_bad_option(char *const argv[], const struct option *lo);
/* After getopt_long matched the long option lo[li] (li from its last argument, -1 for a short
 * one): 0 if it was written out in full, else -1. getopt_long takes any unambiguous prefix
 * ("--top" for --topology), which the launcher, reading the flags itself, would not see. */
int parse_long_exact(char *const argv[], const struct option *lo, int li);

#endif

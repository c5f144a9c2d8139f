/* parse.c: see parse.h */
#include "parse.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int parse_size(const char *s, size_t lo, size_t hi, size_t *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || !isfinite(v)) return -1;   /* NaN compares false: !(v >= 0) */
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

int parse_long_at(const char *s, char **end, long lo, long hi, long *out) {
    errno = 0;
    long v = strtol(s, end, 10);
    if (*end == s) return -1;
    if (errno || v < lo || v > hi) return -2;
    *out = v;
    return 0;
}

int parse_long(const char *s, long lo, long hi, long *out) {
    char *end;
    long v;
    if (parse_long_at(s, &end, lo, hi, &v) || *end) return -1;
    *out = v;
    return 0;
}

int parse_ull(const char *s, unsigned long long hi, unsigned long long *out) {
    char *end;
    errno = 0;
    /* strtoull would take "-1" as ULLONG_MAX and skip spaces: the first character is a digit */
    if (!isdigit((unsigned char)s[0])) return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > hi) return -1;
    *out = v;
    return 0;
}

int parse_int(const char *s, int lo, int hi, int *out) {
    long v;
    if (parse_long(s, lo, hi, &v)) return -1;
    *out = (int)v;
    return 0;
}

int parse_double(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* !(v >= lo): NaN compares false, so it is refused too */
    if (end == s || *end || errno || !isfinite(v) || !(v >= lo) || v > hi) return -1;
    *out = v;
    return 0;
}

int parse_float(const char *s, double lo, double hi, float *out) {
    double v;
    if (parse_double(s, lo, hi, &v)) return -1;
    *out = (float)v;
    return 0;
}

int parse_path(const char *s, char *dst, size_t cap) {
    if (!*s || s[0] == '-') return -1;
    if (strlen(s) >= cap) return -2;
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

const char *parse_bad_option(char *const argv[], const struct option *lo) {
    static char shortname[3];
    const char *w = optind > 1 ? argv[optind - 1] : "?";
    if (!strncmp(w, "--", 2)) {   /* the word before a refused "-xyz" may be a long option too */
        if (optopt == 0) return w;   /* an unknown long option */
        for (; lo->name; lo++) {
            size_t n = strlen(lo->name);
            if (lo->val == optopt && !strncmp(w + 2, lo->name, n) && (w[2 + n] == 0 || w[2 + n] == '=')) return w;
        }
    }
    if (optopt > 0 && optopt < 128 && isgraph(optopt)) {
        shortname[0] = '-';
        shortname[1] = (char)optopt;
        return shortname;
    }
    return w;
}

int parse_long_exact(char *const argv[], const struct option *lo, int li) {
    if (li < 0 || optind < 2) return 0;
    /* "--name value" leaves optind past the value, "--name=value" and "--name" on the word */
    const char *word = optarg && optind >= 3 && optarg == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];
    size_t n = strlen(lo[li].name);
    if (strncmp(word, "--", 2) != 0) return 0;
    return strncmp(word + 2, lo[li].name, n) == 0 && (word[2 + n] == 0 || word[2 + n] == '=') ? 0 : -1;
}

/* metrics.h: the one-row-per-run CSV every experiment reads. The header is written when the file
 * is new or empty; an existing file with a different header is refused (appending would corrupt
 * it). Columns that do not apply to a topology are left empty, never missing: the header holds
 * the trainer's columns, then every topology's. See docs/usage.md for
 * the meaning of each column. */
#ifndef PSRING_METRICS_H
#define PSRING_METRICS_H
#include <stddef.h>

#define METRICS_MAX_COLS 64

typedef struct {
    int n;
    const char *names[METRICS_MAX_COLS];
    char values[METRICS_MAX_COLS][256];
} metrics_row_t;

extern const char *const metrics_columns[];   /* the trainer's own, NULL-terminated, in file order */

void metrics_row_init(metrics_row_t *r);
/* appends the columns of names (NULL-terminated) that the row lacks: a topology's own (topology.h),
 * every topology's in list order, so that one file holds rows of any */
void metrics_add_columns(metrics_row_t *r, const char *const *names);
/* sets column name (must be one of the row's) to a printf-formatted value */
void metrics_set(metrics_row_t *r, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends the row to path, writing the header first if the file is new/empty; fields are quoted
 * per RFC 4180 when they hold commas or quotes. Returns 0 or -1 with err set. */
int metrics_append(const char *path, const metrics_row_t *r, char *err, size_t errlen);
/* CSV field quoting, exposed for tests: writes at most outlen bytes */
void metrics_quote(char *out, size_t outlen, const char *field);

#endif

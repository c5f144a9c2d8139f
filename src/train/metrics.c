/* metrics.c: the results CSV (see metrics.h and docs/usage.md "CSV schema"). One row per run; the
 * header is written once; a file whose header differs is refused rather than silently mixed. */
#include "metrics.h"
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* the trainer's own columns; each topology adds its own after them (metrics_add_columns) */
const char *const metrics_columns[] = {
    "topology", "workers", "device", "gpus", "ranks_per_gpu",
    "accumulate", "optimizer", "sampler", "layers", "params", "batch_per_worker", "global_batch",
    "epochs", "steps", "steps_per_epoch", "lr", "seed", "samples_per_s", "step_ms", "data_ms", "compute_ms",
    "exchange_ms", "wait_ms", "optimizer_ms", "bytes_sent_per_worker", "bytes_recv_per_worker",
    "final_loss", "test_accuracy", "wall_s", NULL,
};

static int column_index(const metrics_row_t *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->names[i], name)) return i;
    return -1;
}

void metrics_row_init(metrics_row_t *r) {
    memset(r, 0, sizeof *r);
    for (r->n = 0; metrics_columns[r->n]; r->n++) r->names[r->n] = metrics_columns[r->n];
}

void metrics_add_columns(metrics_row_t *r, const char *const *names) {
    for (; *names; names++) {
        if (column_index(r, *names) >= 0) continue;   /* shared by two topologies: one column */
        if (r->n == METRICS_MAX_COLS) {   /* a programming error, not user input */
            fprintf(stderr, "psring: %s:%d: more than %d CSV columns\n", __FILE__, __LINE__, METRICS_MAX_COLS);
            abort();
        }
        r->names[r->n++] = *names;
    }
}

void metrics_set(metrics_row_t *r, const char *name, const char *fmt, ...) {
    int i = column_index(r, name);
    if (i < 0) {   /* a programming error, not user input */
        fprintf(stderr, "psring: %s:%d: unknown CSV column '%s'\n", __FILE__, __LINE__, name);
        abort();
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->values[i], sizeof r->values[i], fmt, ap);
    va_end(ap);
}

void metrics_quote(char *out, size_t outlen, const char *field) {
    if (outlen == 0) return;
    if (!strpbrk(field, ",\"\n\r")) { snprintf(out, outlen, "%s", field); return; }
    size_t j = 0;
    if (j + 1 < outlen) out[j++] = '"';
    for (const char *p = field; *p && j + 2 < outlen; p++) {
        if (*p == '"') out[j++] = '"';
        out[j++] = *p;
    }
    if (j + 1 < outlen) out[j++] = '"';
    out[j] = 0;
}

/* The row (and, in a new file, the header) goes out in one write that is checked, with the file
 * locked: a full disk leaves the file as it was, cut back to its size, and a file this call
 * created is removed, so no run leaves a 0-byte or half-written CSV. */
int metrics_append(const char *path, const metrics_row_t *r, char *err, size_t errlen) {
    char header[4096] = "";
    for (int i = 0; i < r->n; i++) {
        strncat(header, r->names[i], sizeof header - strlen(header) - 2);
        strncat(header, i + 1 < r->n ? "," : "\n", sizeof header - strlen(header) - 1);
    }
    struct stat st;
    const int existed = stat(path, &st) == 0;
    FILE *f = fopen(path, "a+");
    if (!f) { snprintf(err, errlen, "--csv %s: %s", path, strerror(errno)); return -1; }
    /* concurrent sweeps may append to one file: hold an exclusive lock for header check + row */
    if (flock(fileno(f), LOCK_EX) != 0) {
        snprintf(err, errlen, "--csv %s: lock: %s", path, strerror(errno));
        fclose(f);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (size > 0) {
        char first[4096] = "";
        rewind(f);
        if (!fgets(first, sizeof first, f) || strcmp(first, header) != 0) {
            snprintf(err, errlen, "--csv %s: existing file has a different header (not a psring results file, "
                     "or an older schema); use a new file", path);
            fclose(f);
            return -1;
        }
    }
    char text[sizeof header + METRICS_MAX_COLS * 600], q[600];
    size_t len = size > 0 ? 0 : (size_t)snprintf(text, sizeof text, "%s", header);
    for (int i = 0; i < r->n && len < sizeof text; i++) {
        metrics_quote(q, sizeof q, r->values[i]);
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%c", q, i + 1 < r->n ? ',' : '\n');
    }
    ssize_t w = len < sizeof text ? write(fileno(f), text, len) : -1;
    if (w != (ssize_t)len) {
        const int e = w < 0 ? errno : ENOSPC;
        if (!existed) unlink(path);
        else if (ftruncate(fileno(f), size) != 0) { /* best effort: the write's error is the one reported */ }
        snprintf(err, errlen, "--csv %s: write failed: %s (the file is left as it was)", path, strerror(e));
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

/* timeline.c: the Chrome-trace recorder (see timeline.h). Events go into a fixed buffer claimed
 * with one atomic add, so recording costs two clock reads and a store and never locks, also from
 * the ring's communication thread. What it deliberately does not do: flow arrows between ranks,
 * clock alignment across hosts, or streaming (the buffer is written once, at the end).
 *
 * Files: each process writes PATH.part<rank> (temp file + rename, so a part is either complete or
 * absent). Its first line is "#psring-timeline <job token> <rank>"; then one JSON event per line.
 * The merger waits for every part carrying its own job token (a part left by an earlier run of
 * the same PATH has another token and is waited past, not merged), concatenates the events into
 * {"traceEvents":[...]} and deletes the parts. The token is the MPI job's namespace from the
 * environment Open MPI/PMIx give every rank; without one (a local run) any part is accepted. */
#include "timeline.h"
#include "timer.h"
#include "outfile.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

typedef struct { const char *name; double t0, t1; int tid; } tl_event_t;

static struct {
    int on;
    char path[1024];
    char role[64];
    char token[128];
    int rank, count;
    tl_event_t *ev;
    size_t cap;
    atomic_size_t n;
    atomic_int ntids;
} tl;

static _Thread_local int tl_tid = -1;

static void job_token(char *out, size_t outlen) {
    const char *names[] = {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", NULL};
    out[0] = 0;
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            /* keep it one word: the token sits on a space-separated header line */
            size_t j = 0;
            for (const char *p = v; *p && j + 1 < outlen; p++) out[j++] = (*p == ' ' || *p == '\n') ? '_' : *p;
            out[j] = 0;
            return;
        }
    }
    snprintf(out, outlen, "-");
}

int timeline_init(const char *path, int process_rank, int process_count, const char *role, char *err, size_t errlen) {
    if (!path || !path[0]) return 0;
    if (strlen(path) + 32 >= sizeof tl.path) { snprintf(err, errlen, "--timeline path is too long"); return -1; }
    if (process_count < 1 || process_rank < 0 || process_rank >= process_count) {
        snprintf(err, errlen, "timeline: process rank %d of %d is out of range", process_rank, process_count);
        return -1;
    }
    snprintf(tl.path, sizeof tl.path, "%s", path);
    snprintf(tl.role, sizeof tl.role, "%s", role ? role : "");
    job_token(tl.token, sizeof tl.token);
    tl.rank = process_rank;
    tl.count = process_count;
    tl.cap = TIMELINE_DEFAULT_CAP;
    tl.ev = malloc(tl.cap * sizeof *tl.ev);
    if (!tl.ev) { snprintf(err, errlen, "timeline: out of memory for %zu events", tl.cap); return -1; }
    atomic_store(&tl.n, 0);
    atomic_store(&tl.ntids, 0);
    /* a part of ours left by an earlier run must not be mistaken for this run's */
    char part[1100];
    snprintf(part, sizeof part, "%s.part%d", tl.path, tl.rank);
    unlink(part);
    tl.on = 1;
    return 0;
}

int timeline_enabled(void) { return tl.on; }
double timeline_now(void) { return timer_now(); }

void timeline_event(const char *name, double t0, double t1) {
    if (!tl.on) return;
    if (tl_tid < 0) tl_tid = atomic_fetch_add(&tl.ntids, 1);
    size_t i = atomic_fetch_add(&tl.n, 1);
    if (i >= tl.cap) return;   /* counted in tl.n, reported as dropped */
    tl.ev[i] = (tl_event_t){ name, t0, t1, tl_tid };
}

/* JSON string body: names and roles are ours, but escape anyway so the file is always valid */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static int write_part(char *err, size_t errlen) {
    char part[1100], oerr[4400];
    snprintf(part, sizeof part, "%s.part%d", tl.path, tl.rank);
    outfile_t out;
    if (outfile_open(&out, part, oerr, sizeof oerr) != 0) { snprintf(err, errlen, "--timeline %s", oerr); return -1; }
    FILE *f = out.f;
    size_t n = atomic_load(&tl.n), kept = n < tl.cap ? n : tl.cap;
    int ntids = atomic_load(&tl.ntids);
    fprintf(f, "#psring-timeline %s %d\n", tl.token, tl.rank);
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", tl.rank);
    char label[128];
    snprintf(label, sizeof label, "rank %d: %s", tl.rank, tl.role);
    json_str(f, label);
    fprintf(f, "}}\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}\n",
            tl.rank, tl.rank);
    for (int t = 0; t < ntids; t++)
        fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}\n",
                tl.rank, t, t == 0 ? "main" : "communication");
    if (n > kept)
        fprintf(f, "{\"name\":\"timeline: %zu events dropped (cap %zu)\",\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":0,"
                "\"ts\":%.3f}\n", n - kept, tl.cap, tl.rank, kept ? tl.ev[kept - 1].t1 * 1e6 : 0.0);
    for (size_t i = 0; i < kept; i++) {
        const tl_event_t *e = &tl.ev[i];
        double dur = e->t1 > e->t0 ? (e->t1 - e->t0) * 1e6 : 0.0;
        fprintf(f, "{\"name\":");
        json_str(f, e->name);
        fprintf(f, ",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}\n", tl.rank, e->tid, e->t0 * 1e6, dur);
    }
    if (outfile_commit(&out, oerr, sizeof oerr) != 0) { snprintf(err, errlen, "--timeline %s", oerr); return -1; }
    return 0;
}

/* 1 when the part exists, is complete (renamed into place) and belongs to this job */
static int part_ready(const char *part, const char *token) {
    FILE *f = fopen(part, "r");
    if (!f) return 0;
    char line[256] = "", tok[160] = "";
    int ok = fgets(line, sizeof line, f) && sscanf(line, "#psring-timeline %159s", tok) == 1;
    fclose(f);
    return ok && (!strcmp(token, "-") || !strcmp(tok, token));
}

int timeline_merge(const char *path, int process_count, double timeout_s, char *err, size_t errlen) {
    char token[128];
    job_token(token, sizeof token);
    char part[1100];
    double t0 = timer_now();
    for (;;) {
        int missing = -1, nmissing = 0;
        for (int r = 0; r < process_count; r++) {
            snprintf(part, sizeof part, "%s.part%d", path, r);
            if (!part_ready(part, token)) { if (missing < 0) missing = r; nmissing++; }
        }
        if (!nmissing) break;
        if (timer_now() - t0 > timeout_s) {
            snprintf(err, errlen, "--timeline %s: after %.0f s still no part from %d of %d processes "
                     "(first missing: rank %d, %s.part%d); the merged file was not written",
                     path, timeout_s, nmissing, process_count, missing, path, missing);
            return -1;
        }
        usleep(20000);
    }
    char oerr[4400];
    outfile_t whole;
    if (outfile_open(&whole, path, oerr, sizeof oerr) != 0) { snprintf(err, errlen, "--timeline %s", oerr); return -1; }
    FILE *out = whole.f;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
    int first = 1;
    char *line = NULL;
    size_t cap = 0;
    for (int r = 0; r < process_count; r++) {
        snprintf(part, sizeof part, "%s.part%d", path, r);
        FILE *f = fopen(part, "r");
        if (!f) {
            snprintf(err, errlen, "--timeline %s: %s", part, strerror(errno));
            outfile_abandon(&whole); free(line);
            return -1;
        }
        ssize_t len;
        while ((len = getline(&line, &cap, f)) > 0) {
            if (line[0] == '#') continue;
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
            if (!len) continue;
            if (!first) fputs(",\n", out);
            fputs(line, out);
            first = 0;
        }
        fclose(f);
    }
    free(line);
    fputs("\n]}\n", out);
    if (outfile_commit(&whole, oerr, sizeof oerr) != 0) { snprintf(err, errlen, "--timeline %s", oerr); return -1; }
    for (int r = 0; r < process_count; r++) {
        snprintf(part, sizeof part, "%s.part%d", path, r);
        unlink(part);
    }
    return 0;
}

int timeline_finish(int merge, char *err, size_t errlen) {
    if (!tl.on) return 0;
    tl.on = 0;
    int rc = write_part(err, errlen);
    free(tl.ev);
    tl.ev = NULL;
    if (rc == 0 && merge) rc = timeline_merge(tl.path, tl.count, TIMELINE_MERGE_TIMEOUT_S, err, errlen);
    return rc;
}

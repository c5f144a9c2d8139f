/* timeline.h: per-phase trace of a training run as one Chrome-trace JSON file (open it in
 * https://ui.perfetto.dev or chrome://tracing). Every process is a "pid" (its MPI rank), every
 * thread that records a "tid"; phases are complete events ("ph":"X"): data, forward, backward,
 * exchange, optimizer, reduce-scatter, allgather, allreduce, push, wait, pull, server-apply, eval.
 *
 *   timeline_init(path, process_rank, process_count, "worker 0");   // once, after MPI started
 *   double t0 = timeline_now(); ...; timeline_event("forward", t0, timeline_now());
 *   timeline_finish(merge);   // every process writes PATH.part<rank>; the merger (worker 0) waits
 *                             // for all parts, writes PATH, deletes the parts
 *
 * It sits in src/common so that every layer (the trainer, the exchanges, the ring, the PS) records
 * into the same recorder directly; a program that never calls timeline_init (a benchmark, a unit
 * test) records nothing.
 * Cheap and safe when off (timeline_event returns at once) and from several threads (a lock-free
 * append into a buffer allocated at init; events past the cap are counted, not recorded).
 * Timestamps come from CLOCK_MONOTONIC, which all processes on one host share; across hosts the
 * rows are each right but their offsets are not aligned (no clock synchronisation here).
 * Phase names must be string literals (or otherwise outlive timeline_finish). */
#ifndef PSRING_TIMELINE_H
#define PSRING_TIMELINE_H
#include <stddef.h>

#define TIMELINE_DEFAULT_CAP (1u << 18)   /* events per process (24 bytes each) */
#define TIMELINE_MERGE_TIMEOUT_S 30.0

/* Starts recording. role names the process in the viewer ("worker 0", "server 1"). Returns 0,
 * or -1 with a message in err (path too long, out of memory). path == NULL or "" keeps it off. */
int timeline_init(const char *path, int process_rank, int process_count, const char *role,
                  char *err, size_t errlen);
int timeline_enabled(void);
double timeline_now(void);
/* one phase [t0, t1] (seconds from timeline_now) on the calling thread */
void timeline_event(const char *name, double t0, double t1);
/* Writes this process's part; when merge != 0 also waits (up to TIMELINE_MERGE_TIMEOUT_S) for the
 * parts of all process_count processes, writes the merged JSON to path and removes the parts.
 * Returns 0, or -1 with a one-line reason in err (unwritable file, a missing part named by rank).
 * A no-op returning 0 when off. Frees the buffer either way. */
int timeline_finish(int merge, char *err, size_t errlen);

/* Exposed for tests: the merge step alone (timeout in seconds). */
int timeline_merge(const char *path, int process_count, double timeout_s, char *err, size_t errlen);

#endif

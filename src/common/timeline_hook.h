/* timeline_hook.h: how code below the trainer (src/ring, src/ps, the exchanges) records a phase
 * for --timeline without linking the trainer. timeline_event is defined in src/train/timeline.c
 * (timeline.h); it is declared weak here, once, so that programs linked without libtrain (the
 * benchmarks, the unit tests) still link, and there timeline_mark does nothing. */
#ifndef PSRING_TIMELINE_HOOK_H
#define PSRING_TIMELINE_HOOK_H

void timeline_event(const char *name, double t0, double t1) __attribute__((weak));

/* one phase [t0, t1] (seconds, timer_now's clock) on the calling thread, if the trainer is linked */
static inline void timeline_mark(const char *name, double t0, double t1) {
    if (timeline_event) timeline_event(name, t0, t1);
}

#endif

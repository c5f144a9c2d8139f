/* timer.h: monotonic wall clock in seconds, for step timing and benchmarks. */
#ifndef PSRING_TIMER_H
#define PSRING_TIMER_H
#include <time.h>
static inline double timer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

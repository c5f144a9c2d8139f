/* timer.h: monotonic wall clock in seconds, for step timing and benchmarks, and the one sleep
 * the polling waits use. */
#ifndef PSRING_TIMER_H
#define PSRING_TIMER_H
#include <time.h>
static inline double timer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static inline void timer_sleep_us(long us) {
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}
#endif

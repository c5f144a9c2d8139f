/* comm_thread.h: the communication thread of an overlapping exchange (the ring's buckets,
 * src/ring/ring_overlap.c; the PS worker's slices, src/ps/worker_step.c), as far as both are
 * the same: its mutex, the two conditions the trainer's thread and it wait on (work posted,
 * work done), the quit flag, and the start and the stop. What a job is and the thread's loop
 * stay with the exchange that owns it. */
#ifndef PSRING_COMM_THREAD_H
#define PSRING_COMM_THREAD_H
#include <pthread.h>

typedef struct {
    pthread_t thread;
    pthread_mutex_t mu;       /* guards quit and the owner's job fields */
    pthread_cond_t cv_job;    /* the owner posted work (or quit): the thread wakes */
    pthread_cond_t cv_done;   /* the thread finished work: the owner wakes */
    int started, quit;
} comm_thread_t;

/* the mutex and conditions made, then main(arg) on a thread of its own; who names the exchange
 * in the one line that ends the process if the system refuses either */
void comm_thread_start(comm_thread_t *t, void *(*main)(void *), void *arg, const char *who);
/* quit set under the mutex, the thread woken and joined, the mutex and conditions destroyed;
 * nothing when it never started. main must return once it sees quit. */
void comm_thread_stop(comm_thread_t *t);

#endif

/* comm_thread.c: start and stop of an overlapping exchange's communication thread (comm_thread.h) */
#include "comm_thread.h"
#include "check.h"
#include <string.h>

void comm_thread_start(comm_thread_t *t, void *(*main)(void *), void *arg, const char *who) {
    if (pthread_mutex_init(&t->mu, NULL) || pthread_cond_init(&t->cv_job, NULL) || pthread_cond_init(&t->cv_done, NULL))
        die("%s: pthread mutex/cond init failed", who);
    t->quit = 0;
    int rc = pthread_create(&t->thread, NULL, main, arg);
    if (rc) die("%s: pthread_create: %s", who, strerror(rc));
    t->started = 1;
}

void comm_thread_stop(comm_thread_t *t) {
    if (!t->started) return;
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_signal(&t->cv_job);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv_job);
    pthread_cond_destroy(&t->cv_done);
    t->started = 0;
}

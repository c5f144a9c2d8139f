/* stall.c: see stall.h */
#include "stall.h"
#include "check.h"
#include <stdlib.h>

void stall_watch_init(stall_watch_t *w, int npeers, double warn) {
    w->warn = warn;
    w->npeers = npeers;
    w->named = xcalloc((size_t)(npeers > 0 ? npeers : 1), 1);
    w->stalls = 0;
}

void stall_watch_free(stall_watch_t *w) {
    free(w->named);
    w->named = NULL;
}

int stall_watch_due(stall_watch_t *w, int peer, double quiet) {
    if (w->warn <= 0 || peer < 0 || peer >= w->npeers || w->named[peer] || quiet < w->warn) return 0;
    w->named[peer] = 1;
    w->stalls++;
    return 1;
}

int stall_watch_clear(stall_watch_t *w, int peer) {
    if (peer < 0 || peer >= w->npeers || !w->named[peer]) return 0;
    w->named[peer] = 0;
    return 1;
}

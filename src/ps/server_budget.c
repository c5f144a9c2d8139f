/* server_budget.c: the sample budget (wire.h) as server 0 hands it out (server_impl.h). Shares
 * of one step, the last one the remainder, handed out as the answers leave, so a worker held
 * back by ssp holds none while it waits and the others may take what is left. issued - counted
 * is what the workers hold; a stopped or lost worker's share goes back, so the budget is spent
 * exactly while any worker is left to spend it. A push spending its share is server_rounds.c's. */
#include "server_impl.h"

uint16_t server_budget_flags(ps_server_t *s, int w) {
    if (!s->budget || !s->want_share[w]) return 0;
    s->want_share[w] = 0;
    if (!s->share[w] && !s->stopped[w] && s->issued < s->budget) {
        uint64_t left = s->budget - s->issued;
        s->share[w] = left < s->step_samples ? left : s->step_samples;
        s->issued += s->share[w];
    }
    if (!s->share[w]) return PS_FLAG_STOP;
    return s->share[w] < s->step_samples ? PS_FLAG_TAIL : 0;
}

void server_budget_release(ps_server_t *s, int w) {
    s->issued -= s->share[w];
    s->share[w] = 0;
}

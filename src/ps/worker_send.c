/* worker_send.c: a worker's requests as they leave (worker_impl.h): the header every message
 * starts with, a header alone, and a header with a payload sent straight out of the caller's
 * buffer (no copy; worker_wait_inflight says when the buffer is the caller's again). What to send
 * when is worker.c's and worker_step.c's. */
#include "worker_impl.h"

ps_header_t worker_header(ps_worker_t *w, int s, int type, int dtype, uint64_t count) {
    return ps_header_make(type, w->c.rank, (uint32_t)s, dtype, count);
}

void worker_send_header(ps_worker_t *w, int s, const ps_header_t *h) { ps_transport_send(w->tr, s, h, NULL); }

void worker_send_zero_copy(ps_worker_t *w, int s, const ps_header_t *h, const void *buf, size_t bytes) {
    ps_msg_t m;
    ps_msg_wrap(&m, buf, bytes, &w->inflight);
    ps_transport_send(w->tr, s, h, &m);
    w->bytes_sent += bytes;
}

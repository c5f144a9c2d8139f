/* transport.h: the parameter server's transport (ps-lite's Van): ZeroMQ sockets, the routing
 * identities, CURVE, multipart frames out and in, the frame checks every receiver makes, and the
 * one reject-and-log rule for what fails them. Server and worker speak through it and never
 * touch ZeroMQ; what a message means is theirs. The keys and the ZAP handler are auth.c's.
 *
 * Two sides:
 *   server  one ROUTER bound to an endpoint; peer w is worker w, named by the routing id a
 *           worker sets ('D' data or 'H' heartbeat + u32 rank, little-endian)
 *   worker  one DEALER per server (peer s is server s); the heartbeat thread opens a second
 *           transport of its own ('H' ids), as ZeroMQ sockets are not thread-safe
 *
 * Who calls whom in src/ps. Every arrow points down: a file calls only files below it in the
 * picture (server.c also calls server_stats.c, server_reply.c, server_budget.c directly; worker.c
 * calls worker_step.c's set-up and every worker file below it), so no call comes back up and
 * the transport calls only auth.c (and wire.c, which calls nothing). ps_exchange.c calls the
 * public functions of server.c, server_stats.c, bind.c (--bind, which calls none of these),
 * worker.c and worker_step.c, and makes the ZeroMQ context with the transport:
 *
 *        ps_exchange.c (and bench/ps.c, tests/test_ps.c)
 *          |                                  |
 *          v                                  v
 *        server.c  loop, dispatch           worker.c  the API calls
 *          v                                  v
 *        server_rounds.c                    worker_step.c  slices, credit, --overlap
 *          v                                  v
 *        server_stats.c                     worker_wait.c  replies in, checked
 *          v                                  v
 *        server_reply.c --> server_budget.c worker_liveness.c  heartbeats, silence
 *          |                                  v
 *          |                                worker_send.c  requests out
 *          |                                  |
 *          +-------------> transport.c <------+
 *                             v
 *                          auth.c  keys, ZAP handler, handshake monitor
 *
 * The server's loop asks the transport for its next message (ps_transport_recv) and dispatches
 * it itself; a worker's wait does the same per server. A received payload is a ps_msg_t that
 * the layers above may keep without a copy (a bsp slice's first push) and release later. */
#ifndef PSRING_PS_TRANSPORT_H
#define PSRING_PS_TRANSPORT_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "wire.h"
#include "auth.h"

/* one message frame, owned by whoever holds it: the transport's type, of a fixed size so that
 * callers can keep arrays of them (transport.c asserts it holds a zmq_msg_t) */
typedef struct { _Alignas(8) unsigned char opaque[64]; } ps_msg_t;

/* an empty frame (what ps_msg_release leaves, what ps_msg_move takes from) */
void ps_msg_init(ps_msg_t *m);
/* a fresh frame of bytes bytes, to fill through ps_msg_data before it is sent */
void ps_msg_alloc(ps_msg_t *m, size_t bytes);
/* a frame over the caller's buf, sent without a copy: *inflight is one higher until the last
 * reference to it is gone (ZeroMQ may send it after ps_transport_send returned), so the caller
 * may change buf again once *inflight is back where it was */
void ps_msg_wrap(ps_msg_t *m, const void *buf, size_t bytes, atomic_int *inflight);
/* dst: one more reference to src's data (no copy); both must be released */
void ps_msg_share(ps_msg_t *dst, ps_msg_t *src);
/* dst takes src's data; src is left empty */
void ps_msg_move(ps_msg_t *dst, ps_msg_t *src);
void ps_msg_release(ps_msg_t *m);
void *ps_msg_data(ps_msg_t *m);
size_t ps_msg_size(ps_msg_t *m);

/* one side's sockets (ps-lite's name for it: a Van; ps_transport_t is the tcp|ipc choice of
 * ps_config.h) */
typedef struct ps_van ps_van_t;

typedef struct {
    int index;                 /* the server's index, or the worker's rank */
    int npeers;                /* workers (server side) or servers (worker side) */
    int peer_rank_base;        /* server side: mpi rank of worker 0, for messages */
    const ps_auth_keys_t *auth; /* non-NULL: CURVE (server: only the keyfile's client key gets in) */
    size_t max_frame;          /* server side: larger frames cost the sender its connection */
    int heartbeat;             /* worker side: the heartbeat thread's sockets ('H' ids, no linger) */
} ps_transport_config_t;

/* what one receive brought */
typedef struct {
    int peer;                  /* the sender: a worker (server side; -1 when its id names none) or
                                * the server whose socket it came on (worker side) */
    int hb;                    /* server side: it came on the worker's heartbeat connection */
    int have_header, have_payload, extra;   /* frames after the routing id */
    int err;                   /* ps_wire_decode's verdict on the header frame */
    ps_header_t h;
    ps_msg_t payload;          /* the receiver's to keep or release */
} ps_received_t;

/* the ZeroMQ context a process's servers and workers share */
void *ps_transport_context_new(void);
void ps_transport_context_free(void *zctx);

/* server side: a ROUTER with its limits (and CURVE's ZAP handler and monitor) bound to endpoint;
 * the endpoint actually bound goes to bound. Exits via die() on socket errors. */
ps_van_t *ps_transport_bind(void *zctx, const ps_transport_config_t *c, const char *endpoint,
                                  char *bound, size_t boundlen);
/* worker side: a DEALER to each of the c->npeers endpoints */
ps_van_t *ps_transport_connect(void *zctx, const ps_transport_config_t *c, char *const *endpoints);
void ps_transport_free(ps_van_t *t);

/* header h to peer, then payload if not NULL (taken: it is empty afterwards) */
void ps_transport_send(ps_van_t *t, int peer, const ps_header_t *h, ps_msg_t *payload);
/* header alone, never blocking: 0, or -1 when the peer's queue is full (a beat may be skipped) */
int ps_transport_send_beat(ps_van_t *t, int peer, const ps_header_t *h);

/* Waits up to timeout_ms for input: on every peer's socket (server side: the one ROUTER, watch
 * ignored) or on those with watch[peer] != 0, and on wake_fd unless it is -1. ready[peer] (ready[0]
 * on the server side) says which has a message, *woke whether wake_fd fired. Returns the count
 * of ready items, 0 on timeout, -1 when a signal interrupted it. */
int ps_transport_poll(ps_van_t *t, const int *watch, int wake_fd, long timeout_ms,
                      uint8_t *ready, int *woke);
/* server side with --ps-auth: the ZAP requests and failed handshakes the last poll saw */
void ps_transport_serve_auth(ps_van_t *t);
/* the next message waiting (server side: from any worker; worker side: on server peer's socket),
 * without blocking: 1 and r filled (release r->payload), or 0 when none is waiting */
int ps_transport_recv(ps_van_t *t, int peer, ps_received_t *r);
/* the frames against the header: PS_WIRE_EFRAMES, PS_WIRE_ELENGTH or 0 */
int ps_transport_check_frames(const ps_received_t *r);
/* counts a message that failed a check, and names its sender once (later ones are only counted);
 * peer -1 is an unknown one, h NULL when there was no header */
void ps_transport_reject(ps_van_t *t, int peer, int err, const ps_header_t *h);
uint64_t ps_transport_rejected(const ps_van_t *t);
/* server side with --ps-auth: handshakes refused (no or wrong key) */
uint64_t ps_transport_auth_refused(const ps_van_t *t);

#endif

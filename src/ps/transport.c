/* transport.c: the parameter server's ZeroMQ transport (see transport.h). Every frame a peer
 * sends is bounded (ZMQ_MAXMSGSIZE on the server) and every frame received is accounted for:
 * the routing id, one header, at most one payload; more frames are read, counted and dropped,
 * so a hostile peer cannot desynchronise the stream. Deliberately not here: what any message
 * means, retries, or a second fabric (that would be a second file behind the same header). */
#include "transport.h"
#include "zcheck.h"
#include <errno.h>
#include <string.h>

_Static_assert(sizeof(zmq_msg_t) <= sizeof(ps_msg_t), "ps_msg_t must hold a zmq_msg_t");
#define ZM(m) ((zmq_msg_t *)(void *)(m)->opaque)

struct ps_van {
    ps_transport_config_t c;
    int server;
    char self[32];             /* "ps server 0", "ps worker 3", for messages */
    void **sock;               /* server: sock[0], the ROUTER; worker: one DEALER per server */
    int nsock;
    void *zap, *mon;           /* server with --ps-auth: ZAP handler (REP), handshake monitor (PAIR) */
    int zap_ready, mon_ready;  /* what the last poll saw on them */
    uint8_t client_key[32];
    uint64_t auth_refused, rejected;
    uint8_t *logged;           /* per peer, and one for unknown peers: named once */
};

void ps_msg_init(ps_msg_t *m) { zmqCheck(zmq_msg_init(ZM(m))); }
void ps_msg_alloc(ps_msg_t *m, size_t bytes) { zmqCheck(zmq_msg_init_size(ZM(m), bytes)); }
void ps_msg_share(ps_msg_t *dst, ps_msg_t *src) { ps_msg_init(dst); zmqCheck(zmq_msg_copy(ZM(dst), ZM(src))); }
void ps_msg_move(ps_msg_t *dst, ps_msg_t *src) { ps_msg_init(dst); zmqCheck(zmq_msg_move(ZM(dst), ZM(src))); }
void ps_msg_release(ps_msg_t *m) { zmqCheck(zmq_msg_close(ZM(m))); }
void *ps_msg_data(ps_msg_t *m) { return zmq_msg_data(ZM(m)); }
size_t ps_msg_size(ps_msg_t *m) { return zmq_msg_size(ZM(m)); }

static void on_release(void *data, void *hint) {
    (void)data;
    atomic_fetch_sub((atomic_int *)hint, 1);
}

void ps_msg_wrap(ps_msg_t *m, const void *buf, size_t bytes, atomic_int *inflight) {
    atomic_fetch_add(inflight, 1);
    zmqCheck(zmq_msg_init_data(ZM(m), (void *)buf, bytes, on_release, inflight));
}

void *ps_transport_context_new(void) {
    void *zctx;
    zmqCheckPtr(zctx, zmq_ctx_new());
    return zctx;
}

void ps_transport_context_free(void *zctx) { zmqCheck(zmq_ctx_term(zctx)); }

/* the routing id the server tells workers' connections apart by: kind + u32 rank, little-endian */
static void identity_encode(uint8_t id[5], char kind, int rank) {
    uint32_t r = (uint32_t)rank;
    id[0] = (uint8_t)kind;
    for (int i = 0; i < 4; i++) id[1 + i] = (uint8_t)(r >> (8 * i));
}

static ps_van_t *transport_new(const ps_transport_config_t *c, int server, int nsock) {
    ps_van_t *t = xcalloc(1, sizeof *t);
    t->c = *c;
    t->server = server;
    snprintf(t->self, sizeof t->self, "ps %s %d", server ? "server" : "worker", c->index);
    t->nsock = nsock;
    t->sock = xcalloc((size_t)nsock, sizeof(void *));
    t->logged = xcalloc((size_t)c->npeers + 1, 1);
    return t;
}

/* unbounded queues both ways (a shard's slices may all be on their way at once), and two
 * seconds for queued frames to leave when a socket closes */
static void set_queues(void *sock, int linger) {
    int hwm = 0;
    zmqCheck(zmq_setsockopt(sock, ZMQ_SNDHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_setsockopt(sock, ZMQ_RCVHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger));
}

/* CURVE on the server: the ZAP handler must be bound in this context before the socket binds,
 * or libzmq skips authentication; it and the handshake monitor are served by the poll */
static void curve_serve(ps_van_t *t, void *zctx) {
    const ps_transport_config_t *c = &t->c;
    if (!ps_auth_available()) die_at(NULL, 0, 2, "--ps-auth: this libzmq has no CURVE support");
    if (!zmq_z85_decode(t->client_key, c->auth->client_public)) die("ps server %d: bad client public key", c->index);
    zmqCheckPtr(t->zap, zmq_socket(zctx, ZMQ_REP));
    if (zmq_bind(t->zap, "inproc://zeromq.zap.01") != 0)
        die("ps server %d: cannot bind the ZAP handler: %s (one authenticated server per process)", c->index, zmq_strerror(zmq_errno()));
    int on = 1;
    zmqCheck(zmq_setsockopt(t->sock[0], ZMQ_CURVE_SERVER, &on, sizeof on));
    zmqCheck(zmq_setsockopt(t->sock[0], ZMQ_CURVE_SECRETKEY, c->auth->server_secret, 41));
    char mon_ep[64];
    snprintf(mon_ep, sizeof mon_ep, "inproc://psring-monitor-%d", c->index);
    zmqCheck(zmq_socket_monitor(t->sock[0], mon_ep, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH));
    zmqCheckPtr(t->mon, zmq_socket(zctx, ZMQ_PAIR));
    zmqCheck(zmq_connect(t->mon, mon_ep));
}

ps_van_t *ps_transport_bind(void *zctx, const ps_transport_config_t *c, const char *endpoint,
                                  char *bound, size_t boundlen) {
    ps_van_t *t = transport_new(c, 1, 1);
    zmqCheckPtr(t->sock[0], zmq_socket(zctx, ZMQ_ROUTER));
    set_queues(t->sock[0], 2000);
    /* hostile input: no frame may exceed the largest legitimate one, or a peer could make the
     * server buffer gigabytes; ZeroMQ drops the connection of a peer that tries */
    int64_t maxmsg = (int64_t)c->max_frame;
    zmqCheck(zmq_setsockopt(t->sock[0], ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg));
    if (c->auth) curve_serve(t, zctx);
    if (zmq_bind(t->sock[0], endpoint) != 0)
        die("ps server %d: cannot bind %s: %s", c->index, endpoint, zmq_strerror(zmq_errno()));
    size_t n = boundlen;
    zmqCheck(zmq_getsockopt(t->sock[0], ZMQ_LAST_ENDPOINT, bound, &n));
    return t;
}

static void set_identity(void *sock, char kind, int rank) {
    uint8_t id[5];
    identity_encode(id, kind, rank);
    zmqCheck(zmq_setsockopt(sock, ZMQ_ROUTING_ID, id, sizeof id));
}

/* --ps-auth: CURVE client keys; set before connect so the handshake uses them */
static void set_curve(void *sock, const ps_auth_keys_t *k) {
    if (!k) return;
    zmqCheck(zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, k->server_public, 41));
    zmqCheck(zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, k->client_public, 41));
    zmqCheck(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->client_secret, 41));
}

ps_van_t *ps_transport_connect(void *zctx, const ps_transport_config_t *c, char *const *endpoints) {
    ps_van_t *t = transport_new(c, 0, c->npeers);
    for (int s = 0; s < c->npeers; s++) {
        zmqCheckPtr(t->sock[s], zmq_socket(zctx, ZMQ_DEALER));
        if (c->heartbeat) {   /* beats are worth nothing once late: default queues, no linger */
            int linger = 0;
            zmqCheck(zmq_setsockopt(t->sock[s], ZMQ_LINGER, &linger, sizeof linger));
        } else {
            set_queues(t->sock[s], 2000);
        }
        set_identity(t->sock[s], c->heartbeat ? 'H' : 'D', c->index);
        set_curve(t->sock[s], c->auth);
        if (zmq_connect(t->sock[s], endpoints[s]) != 0)
            die("ps worker %d: cannot connect to server %d at %s: %s", c->index, s, endpoints[s],
                zmq_strerror(zmq_errno()));
    }
    return t;
}

void ps_transport_free(ps_van_t *t) {
    if (!t) return;
    for (int i = 0; i < t->nsock; i++) if (t->sock[i]) zmqCheck(zmq_close(t->sock[i]));
    if (t->zap) zmqCheck(zmq_close(t->zap));
    if (t->mon) zmqCheck(zmq_close(t->mon));
    free(t->sock);
    free(t->logged);
    free(t);
}

/* server side: which socket a peer's frames go out on, after its routing id */
static void *out_socket(ps_van_t *t, int peer) {
    if (!t->server) return t->sock[peer];
    uint8_t id[5];
    identity_encode(id, 'D', peer);
    zmqCheck(zmq_send(t->sock[0], id, sizeof id, ZMQ_SNDMORE));
    return t->sock[0];
}

void ps_transport_send(ps_van_t *t, int peer, const ps_header_t *h, ps_msg_t *payload) {
    uint8_t buf[PS_HEADER_BYTES];
    ps_wire_encode(h, buf);
    void *sock = out_socket(t, peer);
    zmqCheck(zmq_send(sock, buf, sizeof buf, payload ? ZMQ_SNDMORE : 0));
    if (payload) zmqCheck(zmq_msg_send(ZM(payload), sock, 0));
}

int ps_transport_send_beat(ps_van_t *t, int peer, const ps_header_t *h) {
    uint8_t buf[PS_HEADER_BYTES];
    ps_wire_encode(h, buf);
    /* DONTWAIT: never block here; a full queue means the server is not reading */
    if (zmq_send(t->sock[peer], buf, sizeof buf, ZMQ_DONTWAIT) != -1) return 0;
    if (zmq_errno() == EAGAIN) return -1;
    die("%s heartbeat to server %d: %s", t->self, peer, zmq_strerror(zmq_errno()));
    return -1;
}

int ps_transport_poll(ps_van_t *t, const int *watch, int wake_fd, long timeout_ms,
                      uint8_t *ready, int *woke) {
    int n = 0, cap = t->nsock + 3;
    zmq_pollitem_t items[cap];
    int map[cap];   /* peer, -1 wake_fd, -2 ZAP, -3 monitor */
    for (int s = 0; s < t->nsock; s++) {
        ready[s] = 0;
        if (t->server || watch[s]) { items[n] = (zmq_pollitem_t){ t->sock[s], 0, ZMQ_POLLIN, 0 }; map[n++] = s; }
    }
    if (t->zap) {
        items[n] = (zmq_pollitem_t){ t->zap, 0, ZMQ_POLLIN, 0 }; map[n++] = -2;
        items[n] = (zmq_pollitem_t){ t->mon, 0, ZMQ_POLLIN, 0 }; map[n++] = -3;
    }
    if (wake_fd >= 0) { items[n] = (zmq_pollitem_t){ NULL, wake_fd, ZMQ_POLLIN, 0 }; map[n++] = -1; }
    if (woke) *woke = 0;
    t->zap_ready = t->mon_ready = 0;
    int rc = zmq_poll(items, n, timeout_ms);
    if (rc == -1) {
        if (zmq_errno() == EINTR) return -1;
        die("%s: zmq_poll: %s", t->self, zmq_strerror(zmq_errno()));
    }
    for (int i = 0; rc > 0 && i < n; i++) {
        if (!(items[i].revents & ZMQ_POLLIN)) continue;
        if (map[i] >= 0) ready[map[i]] = 1;
        else if (map[i] == -1) *woke = 1;
        else if (map[i] == -2) t->zap_ready = 1;
        else t->mon_ready = 1;
    }
    return rc;
}

void ps_transport_serve_auth(ps_van_t *t) {
    if (t->zap_ready) ps_auth_serve_zap(t->zap, t->client_key, t->c.index, t->auth_refused);
    if (t->mon_ready) ps_auth_read_monitor(t->mon, t->c.index, &t->auth_refused);
    t->zap_ready = t->mon_ready = 0;
}

/* a routing id (identity_encode's) -> the worker, or -1 */
static int parse_identity(const ps_van_t *t, zmq_msg_t *id, int *hb) {
    const uint8_t *p = zmq_msg_data(id);
    if (zmq_msg_size(id) != 5 || (p[0] != 'D' && p[0] != 'H')) return -1;
    uint32_t w = p[1] | (p[2] << 8) | (p[3] << 16) | ((uint32_t)p[4] << 24);
    if (w >= (uint32_t)t->c.npeers) return -1;
    *hb = p[0] == 'H';
    return (int)w;
}

/* the frames after the first one (whose ZMQ_RCVMORE is more): the payload, then any extra
 * ones, read and dropped */
static void recv_rest(void *sock, ps_received_t *r, int more) {
    if (!more) return;
    zmqCheck(zmq_msg_recv(ZM(&r->payload), sock, 0));
    r->have_payload = 1;
    while (zmq_msg_more(ZM(&r->payload))) {
        zmq_msg_t junk;
        zmqCheck(zmq_msg_init(&junk));
        zmqCheck(zmq_msg_recv(&junk, sock, 0));
        int again = zmq_msg_more(&junk);
        zmqCheck(zmq_msg_close(&junk));
        r->extra++;
        if (!again) break;
    }
}

int ps_transport_recv(ps_van_t *t, int peer, ps_received_t *r) {
    void *sock = t->sock[t->server ? 0 : peer];
    zmq_msg_t first, hdr;
    zmqCheck(zmq_msg_init(&first));
    if (zmq_msg_recv(&first, sock, ZMQ_DONTWAIT) == -1) {
        int e = zmq_errno();
        zmq_msg_close(&first);
        if (e == EAGAIN || e == EINTR) return 0;
        if (t->server) die("%s: zmq_msg_recv: %s", t->self, zmq_strerror(e));
        die("%s: zmq_msg_recv from server %d: %s", t->self, peer, zmq_strerror(e));
    }
    memset(r, 0, sizeof *r);
    r->peer = t->server ? parse_identity(t, &first, &r->hb) : peer;
    ps_msg_init(&r->payload);
    int more = zmq_msg_more(&first);
    zmq_msg_t *h = &first;
    if (t->server && more) {   /* the server's first frame is the routing id: the header follows */
        zmqCheck(zmq_msg_init(&hdr));
        zmqCheck(zmq_msg_recv(&hdr, sock, 0));
        more = zmq_msg_more(&hdr);
        h = &hdr;
    }
    r->have_header = h == &hdr || !t->server;
    if (r->have_header) r->err = ps_wire_decode(zmq_msg_data(h), zmq_msg_size(h), &r->h);
    recv_rest(sock, r, more);
    if (h == &hdr) zmqCheck(zmq_msg_close(&hdr));
    zmqCheck(zmq_msg_close(&first));
    return 1;
}

int ps_transport_check_frames(const ps_received_t *r) {
    if (r->extra || r->have_payload != (r->h.dtype != PS_DTYPE_NONE)) return PS_WIRE_EFRAMES;
    if (r->have_payload && zmq_msg_size((const zmq_msg_t *)(const void *)r->payload.opaque) != r->h.payload_len)
        return PS_WIRE_ELENGTH;
    return 0;
}

void ps_transport_reject(ps_van_t *t, int peer, int err, const ps_header_t *h) {
    t->rejected++;
    int slot = (peer >= 0 && peer < t->c.npeers) ? peer : t->c.npeers;
    if (t->logged[slot]) return;
    t->logged[slot] = 1;
    char who[64];
    if (!t->server) snprintf(who, sizeof who, "server %d", peer);
    else if (slot < t->c.npeers) snprintf(who, sizeof who, "worker %d (mpi rank %d)", peer, t->c.peer_rank_base + peer);
    else snprintf(who, sizeof who, "an unknown peer");
    if (err == PS_WIRE_EVERSION) {   /* an older (or newer) build: say so, not "malformed" */
        char why[160];
        fprintf(stderr, "psring: %s: refused %s: %s; further messages from %s are only counted\n", t->self,
                who, ps_wire_version_why(why, sizeof why, h), t->server ? "this sender" : "it");
        return;
    }
    char detail[160] = "";   /* a server names the fields a hostile peer got wrong */
    if (t->server)
        snprintf(detail, sizeof detail, ", shard %u, offset %llu, count %llu, payload %llu bytes",
                 h ? h->shard : 0, h ? (unsigned long long)h->offset : 0ull,
                 h ? (unsigned long long)h->count : 0ull, h ? (unsigned long long)h->payload_len : 0ull);
    fprintf(stderr, "psring: %s: dropped a malformed message from %s: %s (type %u%s); further ones %sare "
            "only counted\n", t->self, who, ps_wire_strerror(err), h ? h->type : 0, detail,
            t->server ? "from this sender " : "");
}

uint64_t ps_transport_rejected(const ps_van_t *t) { return t->rejected; }
uint64_t ps_transport_auth_refused(const ps_van_t *t) { return t->auth_refused; }

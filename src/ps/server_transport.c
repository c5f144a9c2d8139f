/* server_transport.c: how a parameter-server shard talks (server_impl.h). One ROUTER socket
 * with bounded frames; with --ps-auth, CURVE with a ZAP handler (RFC 27) that admits exactly the
 * keyfile's client key and a monitor that counts failed handshakes; --bind values resolved
 * against this host's interfaces; frames out (zero-copy where the buffer is known to stay put)
 * and in (identity, header, payload; anything else is counted and dropped). What a message means
 * is server.c's and server_rounds.c's business. */
#include "server_impl.h"
#include "common/parse.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

static void on_release_slice(void *data, void *hint) {
    (void)data;
    atomic_fetch_sub((atomic_int *)hint, 1);
}

/* the ROUTER socket with its limits, CURVE's ZAP handler and handshake monitor, bound */
void server_transport_open(ps_server_t *s, void *zctx, const char *endpoint, char *bound, size_t boundlen) {
    const ps_server_config_t *c = &s->c;
    zmqCheckPtr(s->sock, zmq_socket(zctx, ZMQ_ROUTER));
    int hwm = 0, linger = 2000;
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_SNDHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_RCVHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger));
    /* hostile input: no frame may exceed the largest legitimate one (STATE_SET: params + optimizer
     * state of this shard), or a peer could make the server buffer gigabytes; ZeroMQ drops the
     * connection of a peer that tries */
    int64_t maxmsg = (int64_t)(s->len * (1 + s->spp) * sizeof(float)) + 4096;
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg));
    if (c->auth) {
        /* CURVE: the ZAP handler must be bound in this context before the socket binds, or
         * libzmq skips authentication; it is served by the poll loop (ps_server_run) */
        if (!ps_auth_available()) die_at(NULL, 0, 2, "--ps-auth: this libzmq has no CURVE support");
        if (!zmq_z85_decode(s->client_key, c->auth->client_public)) die("ps server %d: bad client public key", c->index);
        zmqCheckPtr(s->zap, zmq_socket(zctx, ZMQ_REP));
        if (zmq_bind(s->zap, "inproc://zeromq.zap.01") != 0)
            die("ps server %d: cannot bind the ZAP handler: %s (one authenticated server per process)", c->index, zmq_strerror(zmq_errno()));
        int on = 1;
        zmqCheck(zmq_setsockopt(s->sock, ZMQ_CURVE_SERVER, &on, sizeof on));
        zmqCheck(zmq_setsockopt(s->sock, ZMQ_CURVE_SECRETKEY, c->auth->server_secret, 41));
        char mon_ep[64];
        snprintf(mon_ep, sizeof mon_ep, "inproc://psring-monitor-%d", c->index);
        zmqCheck(zmq_socket_monitor(s->sock, mon_ep, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                    ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH));
        zmqCheckPtr(s->mon, zmq_socket(zctx, ZMQ_PAIR));
        zmqCheck(zmq_connect(s->mon, mon_ep));
    }
    if (zmq_bind(s->sock, endpoint) != 0)
        die("ps server %d: cannot bind %s: %s", c->index, endpoint, zmq_strerror(zmq_errno()));
    size_t n = boundlen;
    zmqCheck(zmq_getsockopt(s->sock, ZMQ_LAST_ENDPOINT, bound, &n));
}

/* --bind values other than a literal address are resolved against this host's interfaces, so that
 * one command line serves every host of a cluster (each server finds its own address). */
int ps_server_bind_endpoint(const char *spec, char *out, size_t outlen, char *err, size_t errlen) {
    const char *slash = strchr(spec, '/');
    struct in_addr net = { 0 };
    uint32_t mask = 0;
    int mode; /* 0 literal, 1 cidr, 2 interface name, 3 auto */
    if (slash) {
        char a[64];
        long len;
        size_t k = (size_t)(slash - spec);
        if (k >= sizeof a || parse_long(slash + 1, 0, 32, &len)) goto bad_cidr;
        memcpy(a, spec, k);
        a[k] = 0;
        if (inet_pton(AF_INET, a, &net) != 1) goto bad_cidr;
        mask = len == 0 ? 0 : htonl(0xffffffffu << (32 - len));
        mode = 1;
    } else if (!strcmp(spec, "auto")) {
        mode = 3;
    } else {
        mode = if_nametoindex(spec) ? 2 : 0;
    }
    if (mode == 0) {
        snprintf(out, outlen, "tcp://%s:*", spec);
        return 0;
    }
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) {
        snprintf(err, errlen, "--bind %s: getifaddrs: %s", spec, strerror(errno));
        return -1;
    }
    int found = 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if (mode == 1) found = (a.s_addr & mask) == (net.s_addr & mask);
        else if (mode == 2) found = !strcmp(i->ifa_name, spec);
        else found = (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK);
        if (found) {
            char buf[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &a, buf, sizeof buf);
            snprintf(out, outlen, "tcp://%s:*", buf);
        }
    }
    freeifaddrs(ifs);
    if (!found) {
        char host[256] = "this host";
        gethostname(host, sizeof host);
        snprintf(err, errlen, "--bind %s: %s has no IPv4 address %s", spec, host,
                 mode == 1 ? "in that subnet" : mode == 2 ? "on that interface" : "outside loopback");
        return -1;
    }
    return 0;
bad_cidr:
    snprintf(err, errlen, "--bind %s: not a subnet like 10.99.0.0/24", spec);
    return -1;
}

static void send_identity(ps_server_t *s, int w) {
    uint8_t id[5] = { 'D', (uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16), (uint8_t)(w >> 24) };
    zmqCheck(zmq_send(s->sock, id, sizeof id, ZMQ_SNDMORE));
}

ps_header_t server_header(ps_server_t *s, int type, int dtype, uint64_t count) {
    return ps_header_make(type, -1 - s->c.index, (uint32_t)s->c.index, dtype, count);
}

void server_send_header(ps_server_t *s, int w, const ps_header_t *h, int more) {
    uint8_t buf[PS_HEADER_BYTES];
    ps_wire_encode(h, buf);
    send_identity(s, w);
    zmqCheck(zmq_send(s->sock, buf, sizeof buf, more ? ZMQ_SNDMORE : 0));
}

void server_send_ctrl(ps_server_t *s, int w, int type) {
    ps_header_t h = server_header(s, type, PS_DTYPE_NONE, 0);
    h.clock = s->round;
    server_send_header(s, w, &h, 0);
}

/* payload copied into a fresh message (used where the buffer may change before it is sent) */
void server_send_copy(ps_server_t *s, int w, ps_header_t *h, const void *a, size_t bytes) {
    zmq_msg_t m;
    zmqCheck(zmq_msg_init_size(&m, bytes));
    memcpy(zmq_msg_data(&m), a, bytes);
    server_send_header(s, w, h, 1);
    zmqCheck(zmq_msg_send(&m, s->sock, 0));
    s->bytes_out += bytes;
}

/* PARAMS to worker w, as f32 or f16; zero_copy only when params cannot change before the send
 * completes (bsp: wait_inflight before the next apply) */
void server_send_params(ps_server_t *s, int w, uint64_t clock) {
    int half = s->f16[w];
    ps_header_t h = server_header(s, PS_MSG_PARAMS, half ? PS_DTYPE_F16 : PS_DTYPE_F32, s->len);
    h.clock = clock;
    h.iteration = s->generation;
    h.flags = server_budget_flags(s, w);
    if (half) {
        half_from_float(s->half, s->params, s->len);
        server_send_copy(s, w, &h, s->half, s->len * 2);
    } else {
        server_send_copy(s, w, &h, s->params, s->len * 4);
    }
}

/* bsp: slice sl's new parameters to every worker, zero-copy (one buffer, reference-counted);
 * with_wait: the round's last slice, whose header carries each worker's wait */
void server_send_params_all(ps_server_t *s, int sl, uint64_t clock, int with_wait) {
    zmq_msg_t base[2];
    int have[2] = { 0, 0 };
    size_t off, n;
    server_slice_range(s, sl, &off, &n);
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!server_worker_live(s, w)) continue;
        int k = s->f16[w];
        if (!have[k]) {
            void *buf = k ? (void *)(s->half + off) : (void *)(s->params + off);
            size_t bytes = n * (k ? 2 : 4);
            if (k) half_from_float(s->half + off, s->params + off, n);
            atomic_fetch_add(&s->ck_inflight[sl], 1);
            zmqCheck(zmq_msg_init_data(&base[k], buf, bytes, on_release_slice, &s->ck_inflight[sl]));
            have[k] = 1;
        }
        ps_header_t h = server_header(s, PS_MSG_PARAMS, k ? PS_DTYPE_F16 : PS_DTYPE_F32, n);
        h.offset = off;
        h.clock = clock;
        h.iteration = s->generation;
        /* this worker's wait (0 on all but the round's last slice) */
        h.wait_s = with_wait ? s->push_wait[w] : 0.0;
        zmq_msg_t m;
        zmqCheck(zmq_msg_init(&m));
        zmqCheck(zmq_msg_copy(&m, &base[k]));
        server_send_header(s, w, &h, 1);
        s->bytes_out += zmq_msg_size(&m);
        zmqCheck(zmq_msg_send(&m, s->sock, 0));
    }
    for (int k = 0; k < 2; k++) if (have[k]) zmqCheck(zmq_msg_close(&base[k]));
}

/* identity "D"/"H" + u32 rank; returns the worker or -1 */
static int parse_identity(const ps_server_t *s, zmq_msg_t *id, int *hb) {
    const uint8_t *p = zmq_msg_data(id);
    if (zmq_msg_size(id) != 5 || (p[0] != 'D' && p[0] != 'H')) return -1;
    uint32_t w = p[1] | (p[2] << 8) | (p[3] << 16) | ((uint32_t)p[4] << 24);
    if (w >= (uint32_t)s->c.nworkers) return -1;
    *hb = p[0] == 'H';
    return (int)w;
}

/* receives and handles one message; 0 when none was waiting */
int server_recv_one(ps_server_t *s) {
    zmq_msg_t id, hdr, payload, junk;
    zmqCheck(zmq_msg_init(&id));
    if (zmq_msg_recv(&id, s->sock, ZMQ_DONTWAIT) == -1) {
        int e = zmq_errno();
        zmq_msg_close(&id);
        if (e == EAGAIN || e == EINTR) return 0;
        die("ps server %d: zmq_msg_recv: %s", s->c.index, zmq_strerror(e));
    }
    int hb = 0, w = parse_identity(s, &id, &hb);
    zmqCheck(zmq_msg_init(&hdr));
    zmqCheck(zmq_msg_init(&payload));
    int have_hdr = 0, have_payload = 0, extra = 0;
    while (zmq_msg_more(have_payload ? &payload : have_hdr ? &hdr : &id)) {
        zmq_msg_t *dst = !have_hdr ? &hdr : !have_payload ? &payload : &junk;
        if (dst == &junk) zmqCheck(zmq_msg_init(&junk));
        zmqCheck(zmq_msg_recv(dst, s->sock, 0));
        if (dst == &hdr) have_hdr = 1;
        else if (dst == &payload) have_payload = 1;
        else {
            extra++;
            int more = zmq_msg_more(&junk);
            zmqCheck(zmq_msg_close(&junk));
            if (!more) break;
        }
    }
    if (!have_hdr) server_reject(s, w, PS_WIRE_EFRAMES, NULL);
    else server_handle(s, w, hb, &hdr, &payload, have_payload, extra);
    zmqCheck(zmq_msg_close(&id));
    zmqCheck(zmq_msg_close(&hdr));
    zmqCheck(zmq_msg_close(&payload));
    return 1;
}

/* ZAP (RFC 27): one request per CURVE handshake; accept exactly the keyfile's client key */
void server_serve_zap(ps_server_t *s) {
    char f[7][256];
    size_t len[7];
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t m;
        zmqCheck(zmq_msg_init(&m));
        if (zmq_msg_recv(&m, s->zap, ZMQ_DONTWAIT) == -1) { zmq_msg_close(&m); if (n == 0) return; continue; }
        if (n < 7) {
            len[n] = zmq_msg_size(&m) < sizeof f[0] ? zmq_msg_size(&m) : sizeof f[0] - 1;
            memcpy(f[n], zmq_msg_data(&m), len[n]);
            f[n][len[n]] = 0;
        }
        n++;
        more = zmq_msg_more(&m);
        zmqCheck(zmq_msg_close(&m));
    }
    /* version, request id, domain, address, identity, mechanism, credentials (the client key) */
    int ok = n >= 7 && !strcmp(f[5], "CURVE") && len[6] == 32 && memcmp(f[6], s->client_key, 32) == 0;
    const char *status = ok ? "200" : "400";
    zmqCheck(zmq_send(s->zap, "1.0", 3, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, n > 1 ? f[1] : "", n > 1 ? len[1] : 0, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, status, 3, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, ok ? "OK" : "unknown client key", ok ? 2 : 18, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, "", 0, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, "", 0, 0));
    if (!ok && s->auth_refused < 3)
        fprintf(stderr, "psring: ps server %d: refused a CURVE client from %s: its key is not the --ps-auth keyfile's\n",
                s->c.index, n > 3 ? f[3] : "?");
}

/* handshake failures reported by the socket monitor: peers without the key never get further */
void server_read_monitor(ps_server_t *s) {
    for (;;) {
        zmq_msg_t ev, addr;
        zmqCheck(zmq_msg_init(&ev));
        if (zmq_msg_recv(&ev, s->mon, ZMQ_DONTWAIT) == -1) { zmq_msg_close(&ev); return; }
        zmqCheck(zmq_msg_init(&addr));
        if (zmq_msg_more(&ev)) zmqCheck(zmq_msg_recv(&addr, s->mon, 0));
        uint16_t event = 0;
        if (zmq_msg_size(&ev) >= 2) memcpy(&event, zmq_msg_data(&ev), 2);
        s->auth_refused++;
        if (s->auth_refused <= 3)
            fprintf(stderr, "psring: ps server %d: refused a peer on %.*s: %s handshake failed (no or wrong --ps-auth key)%s\n",
                    s->c.index, (int)zmq_msg_size(&addr), (const char *)zmq_msg_data(&addr),
                    event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "CURVE authentication" : "CURVE",
                    s->auth_refused == 3 ? "; further refusals are only counted" : "");
        zmqCheck(zmq_msg_close(&ev));
        zmqCheck(zmq_msg_close(&addr));
    }
}

/* ps_attack.c: a hostile client for a running parameter server (tests/ps_hostile.sh,
 * tests/ps_auth.sh). It connects a DEALER to ENDPOINT and sends messages that must never change
 * the server's parameters:
 *   --mode hostile  N messages cycling through four classes: random frames (1-4 frames of random
 *                   bytes), oversized lengths (headers whose count/payload_len promise far more
 *                   than is sent, or than any shard holds), wrong protocol versions, and
 *                   valid-looking PUSH/INIT/STATE_SET headers with wrong counts claiming to be a
 *                   real worker. Every one must be rejected and counted by the server.
 *   --mode noauth   N well-formed INIT/PUSH messages (huge gradients) from a plain client, or with
 *                   --keyfile F a CURVE client with F's server key but its own fresh client key: a
 *                   server under --ps-auth must refuse the handshake, so nothing arrives.
 * Prints "sent N ..." and exits 0 once everything is handed to ZeroMQ (linger 2 s). It does not
 * read replies. */
#include "ps/wire.h"
#include "ps/auth.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <zmq.h>

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static void check(int rc, const char *what) {
    if (rc == -1) { fprintf(stderr, "ps_attack: %s: %s\n", what, zmq_strerror(zmq_errno())); exit(1); }
}

/* A DEALER with no live connection (handshake refused) blocks in send; SNDTIMEO turns that into
 * EAGAIN, which ends the attack: nothing more can go out. Returns 0 sent, -1 refused. */
static int send_frames(void *sock, uint8_t **f, size_t *len, int n) {
    for (int i = 0; i < n; i++)
        if (zmq_send(sock, f[i], len[i], i < n - 1 ? ZMQ_SNDMORE : 0) == -1) {
            if (zmq_errno() == EAGAIN && i == 0) return -1;
            check(-1, "zmq_send");
        }
    return 0;
}

static int header_msg(void *sock, ps_header_t *h, size_t payload_bytes) {
    uint8_t hb[PS_HEADER_BYTES];
    ps_wire_encode(h, hb);
    if (!payload_bytes) { uint8_t *f[1] = { hb }; size_t len[1] = { sizeof hb }; return send_frames(sock, f, len, 1); }
    uint8_t *p = calloc(1, payload_bytes);
    for (size_t i = 0; i < payload_bytes; i++) p[i] = (uint8_t)next();
    uint8_t *f[2] = { hb, p };
    size_t len[2] = { sizeof hb, payload_bytes };
    int rc = send_frames(sock, f, len, 2);
    free(p);
    return rc;
}

int main(int argc, char **argv) {
    const char *ep = NULL, *mode = "hostile", *keyfile = NULL;
    long n = 100, params = 1000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--endpoint")) ep = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--mode")) mode = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--count")) n = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--params")) params = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--seed")) rng = strtoull(argv[++i], NULL, 10) | 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--keyfile")) keyfile = argv[++i];
        else { fprintf(stderr, "usage: ps_attack --endpoint EP [--mode hostile|noauth] [--count N] [--params P] [--seed S] [--keyfile F]\n"); return 2; }
    }
    if (!ep || n < 1 || params < 1) { fprintf(stderr, "ps_attack: --endpoint EP needed, --count/--params >= 1\n"); return 2; }
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 2000;
    check(zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger), "linger");
    int sndtimeo = 3000;
    check(zmq_setsockopt(sock, ZMQ_SNDTIMEO, &sndtimeo, sizeof sndtimeo), "sndtimeo");
    /* not a worker's routing id ('D'/'H' + rank): a duplicate id would make ROUTER drop us silently,
     * and the point is that the server sees and rejects every message */
    check(zmq_setsockopt(sock, ZMQ_ROUTING_ID, "X-atk", 5), "routing id");
    if (keyfile) {
        ps_auth_keys_t k;
        char err[512], pub[41], sec[41];
        if (ps_auth_load(keyfile, &k, err, sizeof err) != 0) { fprintf(stderr, "ps_attack: %s\n", err); return 2; }
        check(zmq_curve_keypair(pub, sec), "keypair");     /* our own key: not the workers' */
        check(zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, k.server_public, 41), "serverkey");
        check(zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, pub, 41), "publickey");
        check(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, sec, 41), "secretkey");
    }
    check(zmq_connect(sock, ep), "zmq_connect");
    long cls[4] = {0};
    if (!strcmp(mode, "noauth")) {
        long queued = 0;
        for (long i = 0; i < n; i++, queued++) {
            int t = i % 2 ? PS_MSG_PUSH : PS_MSG_INIT;
            ps_header_t h = ps_header_make(t, 0, 0, PS_DTYPE_F32, (uint64_t)params);
            h.lr = 1000.0f;
            if (header_msg(sock, &h, (size_t)params * 4) != 0) break;
        }
        printf("sent %ld unauthenticated INIT/PUSH messages (%ld floats each); ZeroMQ took %ld of them "
               "(the rest found no connection: handshake refused)\n", n, params, queued);
    } else if (!strcmp(mode, "hostile")) {
        for (long i = 0; i < n; i++) {
            int c = (int)(i % 4);
            cls[c]++;
            if (c == 0) {                        /* random frames */
                int nf = 1 + (int)(next() % 4);
                uint8_t *f[4];
                size_t len[4];
                for (int k = 0; k < nf; k++) {
                    len[k] = next() % 200;
                    if (k == 0 && next() % 4 == 0) len[k] = PS_HEADER_BYTES;  /* header-sized junk */
                    f[k] = malloc(len[k] + 1);
                    for (size_t j = 0; j < len[k]; j++) f[k][j] = (uint8_t)next();
                }
                if (send_frames(sock, f, len, nf) != 0) { fprintf(stderr, "ps_attack: no connection to %s\n", ep); return 1; }
                for (int k = 0; k < nf; k++) free(f[k]);
            } else if (c == 1) {                 /* oversized lengths */
                ps_header_t h = ps_header_make(PS_MSG_PUSH, 0, 0, PS_DTYPE_F32, PS_WIRE_MAX_COUNT);
                h.lr = 0.1f;
                if (next() % 2) h.payload_len = UINT64_MAX;   /* inconsistent as well */
                if (header_msg(sock, &h, 64) != 0) { fprintf(stderr, "ps_attack: no connection to %s\n", ep); return 1; }
            } else if (c == 2) {                 /* wrong protocol version */
                ps_header_t h = ps_header_make(PS_MSG_PUSH, 0, 0, PS_DTYPE_F32, (uint64_t)params);
                static const uint16_t bad[] = { 0, 2, 0xffff, PS_WIRE_VERSION + 1 };
                h.version = bad[next() % 4];
                h.lr = 0.1f;
                if (header_msg(sock, &h, (size_t)params * 4) != 0) { fprintf(stderr, "ps_attack: no connection to %s\n", ep); return 1; }
            } else {                             /* valid-looking, wrong count, claims worker 0 */
                static const int types[] = { PS_MSG_PUSH, PS_MSG_INIT, PS_MSG_STATE_SET };
                uint64_t cnt = (uint64_t)params + 1 + next() % 7;
                ps_header_t h = ps_header_make(types[next() % 3], 0, 0, PS_DTYPE_F32, cnt);
                h.lr = 0.1f;
                if (header_msg(sock, &h, cnt * 4) != 0) { fprintf(stderr, "ps_attack: no connection to %s\n", ep); return 1; }
            }
        }
        printf("sent %ld hostile messages: %ld random-frame, %ld oversized-length, %ld wrong-version, %ld wrong-count\n",
               n, cls[0], cls[1], cls[2], cls[3]);
    } else {
        fprintf(stderr, "ps_attack: --mode must be hostile or noauth: got '%s'\n", mode);
        return 2;
    }
    fflush(stdout);
    zmq_close(sock);
    zmq_ctx_term(ctx);   /* returns after linger: everything queued went out, or 2 s passed */
    return 0;
}

/* auth.h: CurveZMQ keys for the parameter server (--ps-auth KEYFILE, made by psring keygen).
 * A keyfile holds two keypairs in Z85 text: the servers' (every server uses it) and the
 * workers' (every worker uses it). Servers run CURVE with the server secret and, through a ZAP
 * handler (here; transport.c sets CURVE up), accept only clients that present the workers' public key; workers need
 * the server public key to connect at all. So the file is the credential: whoever holds it can
 * join, nobody else can send the servers a single byte that reaches the application. It must be
 * private to its owner (mode 0600, checked on load, like ssh keys).
 * Not here: key rotation, per-worker keys, or encryption at rest. */
#ifndef PSRING_PS_AUTH_H
#define PSRING_PS_AUTH_H
#include <stddef.h>
#include <stdint.h>

#define PS_Z85_KEY 41   /* 40 Z85 characters + NUL */

typedef struct ps_auth_keys_s {
    char server_public[PS_Z85_KEY], server_secret[PS_Z85_KEY];
    char client_public[PS_Z85_KEY], client_secret[PS_Z85_KEY];
} ps_auth_keys_t;

/* 1 when this libzmq was built with CURVE (zmq_has("curve")) */
int ps_auth_available(void);
/* Generates both keypairs and writes them to path (created 0600; an existing file is refused
 * unless force). Returns 0, or -1 with err set. */
int ps_auth_generate(const char *path, int force, char *err, size_t errlen);
/* Reads and checks a keyfile (format, key lengths, owner-only permissions). 0, or -1 with err. */
int ps_auth_load(const char *path, ps_auth_keys_t *k, char *err, size_t errlen);
/* Server `index`'s ZAP handler (RFC 27) on its REP socket zap: answers the waiting request,
 * admitting exactly client_key (32 bytes); refused: the handshakes refused so far, which the
 * first refusals are named against */
void ps_auth_serve_zap(void *zap, const uint8_t *client_key, int index, uint64_t refused);
/* the failed handshakes the socket monitor (PAIR socket mon) reports, counted into *refused;
 * the first three are named */
void ps_auth_read_monitor(void *mon, int index, uint64_t *refused);

#endif

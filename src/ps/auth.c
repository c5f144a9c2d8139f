/* auth.c: CurveZMQ keyfiles and the servers' ZAP handler (see auth.h). The format is four
 * "name Z85KEY" lines after a comment; the reader insists on all four, each exactly 40 valid Z85
 * characters, and on a file nobody but its owner can read. The sockets are transport.c's: it
 * sets the keys, binds the ZAP handler and the monitor, and calls the two functions at the end
 * when its poll finds them readable. */
#include "auth.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>
#include "zcheck.h"

int ps_auth_available(void) { return zmq_has("curve") != 0; }

int ps_auth_generate(const char *path, int force, char *err, size_t errlen) {
    ps_auth_keys_t k;
    if (!ps_auth_available()) { snprintf(err, errlen, "this libzmq has no CURVE support (zmq_has(\"curve\") is 0)"); return -1; }
    if (zmq_curve_keypair(k.server_public, k.server_secret) != 0 ||
        zmq_curve_keypair(k.client_public, k.client_secret) != 0) {
        snprintf(err, errlen, "zmq_curve_keypair: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    /* --force replaces a regular file only, and never in place: the keys go to a new file beside
     * it that is renamed over it once written, so a device, a FIFO or a symlink's target at PATH
     * is never opened, truncated or removed (as root, /dev/null was), and a failed write leaves
     * the old keys. Without --force, O_EXCL refuses anything that exists. */
    struct stat st;
    if (force && lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file; --force replaces only a keyfile", path);
        return -1;
    }
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) { snprintf(err, errlen, "%s: path too long", path); return -1; }
    int fd = force ? mkstemp(tmp) : open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    const char *made = force ? tmp : path;   /* what this call created, and may remove */
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s%s", path, strerror(errno), errno == EEXIST ? " (use --force to replace it)" : "");
        return -1;
    }
    if (fchmod(fd, 0600) != 0) {
        snprintf(err, errlen, "%s: chmod 600: %s", path, strerror(errno));
        close(fd);
        unlink(made);
        return -1;
    }
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "# psring CurveZMQ keys (psring keygen). Whoever holds this file can join the parameter server:\n"
                     "# copy it only to the hosts of the job, mode 0600.\n"
                     "server-public %s\nserver-secret %s\nclient-public %s\nclient-secret %s\n",
                     k.server_public, k.server_secret, k.client_public, k.client_secret);
    if (write(fd, buf, (size_t)n) != n || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        close(fd);
        unlink(made);
        return -1;
    }
    if (close(fd) != 0 || (force && rename(tmp, path) != 0)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(made);
        return -1;
    }
    return 0;
}

static int z85_ok(const char *s) {
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
    if (strlen(s) != 40) return 0;
    for (int i = 0; i < 40; i++) if (!strchr(alphabet, s[i])) return 0;
    return 1;
}

int ps_auth_load(const char *path, ps_auth_keys_t *k, char *err, size_t errlen) {
    memset(k, 0, sizeof *k);
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "--ps-auth %s: %s", path, strerror(errno)); return -1; }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--ps-auth %s: not a regular file", path);
        fclose(f);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "--ps-auth %s: readable by others (mode %03o); chmod 600 it", path, (unsigned)(st.st_mode & 0777));
        fclose(f);
        return -1;
    }
    char line[256], name[64], val[128];
    char *slot[4] = { k->server_public, k->server_secret, k->client_public, k->client_secret };
    const char *names[4] = { "server-public", "server-secret", "client-public", "client-secret" };
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        int i;
        if (sscanf(line, "%63s %127s", name, val) != 2) goto bad;
        for (i = 0; i < 4 && strcmp(name, names[i]) != 0; i++) {}
        if (i == 4 || !z85_ok(val)) goto bad;
        strcpy(slot[i], val);
    }
    fclose(f);
    for (int i = 0; i < 4; i++)
        if (!slot[i][0]) { snprintf(err, errlen, "--ps-auth %s: no %s line (make the file with psring keygen)", path, names[i]); return -1; }
    return 0;
bad:
    snprintf(err, errlen, "--ps-auth %s: line %d is not 'NAME KEY' with a 40-character Z85 key", path, lineno);
    fclose(f);
    return -1;
}

/* ZAP (RFC 27): one request per CURVE handshake; accept exactly the keyfile's client key */
void ps_auth_serve_zap(void *zap, const uint8_t *client_key, int index, uint64_t refused) {
    char f[7][256];
    size_t len[7];
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t m;
        zmqCheck(zmq_msg_init(&m));
        if (zmq_msg_recv(&m, zap, ZMQ_DONTWAIT) == -1) { zmq_msg_close(&m); if (n == 0) return; continue; }
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
    int ok = n >= 7 && !strcmp(f[5], "CURVE") && len[6] == 32 && memcmp(f[6], client_key, 32) == 0;
    const char *status = ok ? "200" : "400";
    zmqCheck(zmq_send(zap, "1.0", 3, ZMQ_SNDMORE));
    zmqCheck(zmq_send(zap, n > 1 ? f[1] : "", n > 1 ? len[1] : 0, ZMQ_SNDMORE));
    zmqCheck(zmq_send(zap, status, 3, ZMQ_SNDMORE));
    zmqCheck(zmq_send(zap, ok ? "OK" : "unknown client key", ok ? 2 : 18, ZMQ_SNDMORE));
    zmqCheck(zmq_send(zap, "", 0, ZMQ_SNDMORE));
    zmqCheck(zmq_send(zap, "", 0, 0));
    if (!ok && refused < 3)
        fprintf(stderr, "psring: ps server %d: refused a CURVE client from %s: its key is not the --ps-auth keyfile's\n",
                index, n > 3 ? f[3] : "?");
}

/* handshake failures reported by the socket monitor: peers without the key never get further */
void ps_auth_read_monitor(void *mon, int index, uint64_t *refused) {
    for (;;) {
        zmq_msg_t ev, addr;
        zmqCheck(zmq_msg_init(&ev));
        if (zmq_msg_recv(&ev, mon, ZMQ_DONTWAIT) == -1) { zmq_msg_close(&ev); return; }
        zmqCheck(zmq_msg_init(&addr));
        if (zmq_msg_more(&ev)) zmqCheck(zmq_msg_recv(&addr, mon, 0));
        uint16_t event = 0;
        if (zmq_msg_size(&ev) >= 2) memcpy(&event, zmq_msg_data(&ev), 2);
        (*refused)++;
        if (*refused <= 3)
            fprintf(stderr, "psring: ps server %d: refused a peer on %.*s: %s handshake failed (no or wrong --ps-auth key)%s\n",
                    index, (int)zmq_msg_size(&addr), (const char *)zmq_msg_data(&addr),
                    event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "CURVE authentication" : "CURVE",
                    *refused == 3 ? "; further refusals are only counted" : "");
        zmqCheck(zmq_msg_close(&ev));
        zmqCheck(zmq_msg_close(&addr));
    }
}

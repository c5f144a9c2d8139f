/* bind.c: --bind resolution (server.h's ps_server_bind_endpoint): a value names an address, a
 * subnet, an interface or "auto", and becomes the TCP endpoint this host's server binds. It
 * looks at interfaces only; binding is the transport's (transport.c). */
#include "server.h"
#include "common/parse.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

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

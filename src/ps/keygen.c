/* keygen.c: psring-keygen KEYFILE [--force]: writes a CurveZMQ keyfile for --ps-auth (auth.h):
 * a server keypair and a worker keypair, mode 0600. `psring keygen` runs it. It does not
 * distribute the file; copy it to the job's hosts yourself. */
#include "auth.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *path = NULL;
    int force = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: psring keygen KEYFILE [--force]\n"
                   "Writes CurveZMQ keys for psring-train --ps-auth KEYFILE (mode 0600): parameter servers\n"
                   "then accept only workers holding the same file. --force replaces an existing keyfile\n"
                   "(a regular file only: the new keys are written beside it, then renamed over it).\n");
            return 0;
        }
        if (!strcmp(argv[i], "--force")) force = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "psring-keygen: unknown option '%s'\n", argv[i]); return 2; }
        else if (path) { fprintf(stderr, "psring-keygen: one KEYFILE only (got '%s' and '%s')\n", path, argv[i]); return 2; }
        else path = argv[i];
    }
    if (!path) { fprintf(stderr, "psring-keygen: usage: psring keygen KEYFILE [--force]\n"); return 2; }
    char err[512];
    if (ps_auth_generate(path, force, err, sizeof err) != 0) { fprintf(stderr, "psring-keygen: %s\n", err); return 2; }
    printf("psring-keygen: wrote %s (CurveZMQ server and worker keys, mode 0600)\n", path);
    return 0;
}

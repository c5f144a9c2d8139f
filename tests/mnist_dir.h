/* mnist_dir.h: where the Check tests find MNIST, the one way every tool and test finds it (the
 * shell side is experiments/pslib.sh's psring_mnist_dir): $PSRING_MNIST_DIR, else the source tree's
 * data/mnist ($TOP_SRCDIR, which make check sets; the current directory otherwise). It does not
 * fetch anything: TEST_MNIST_MISSING says what to set or run. Header-only: a test includes it. */
#ifndef PSRING_TESTS_MNIST_DIR_H
#define PSRING_TESTS_MNIST_DIR_H
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define TEST_MNIST_MISSING "no MNIST (set PSRING_MNIST_DIR, or run experiments/get-mnist)"

/* true when DIR holds NAME, plain or gzipped */
static inline int test_mnist_has(const char *dir, const char *name) {
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (stat(p, &st) == 0) return 1;
    snprintf(p, sizeof p, "%s/%s.gz", dir, name);
    return stat(p, &st) == 0;
}

/* the MNIST folder, or NULL when neither place holds it (a static buffer: copy it to keep it) */
static inline const char *test_mnist_dir(void) {
    static char found[4096];
    const char *env = getenv("PSRING_MNIST_DIR"), *top = getenv("TOP_SRCDIR");
    char tree[4096];
    snprintf(tree, sizeof tree, "%s/data/mnist", top && *top ? top : ".");
    const char *cands[] = {env, tree};
    for (int i = 0; i < 2; i++) {
        if (!cands[i] || !*cands[i]) continue;
        if (test_mnist_has(cands[i], "train-images-idx3-ubyte")) {   /* the rule of pslib.sh and psringlib/paths.py */
            snprintf(found, sizeof found, "%s", cands[i]);
            return found;
        }
    }
    return NULL;
}
#endif

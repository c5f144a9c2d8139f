/* replay_main.c: turns a libFuzzer harness into an ordinary program (any compiler, no libFuzzer):
 * it feeds every file of the given files/directories, or by default of
 * $TOP_SRCDIR/fuzz/corpus/FUZZ_NAME and $TOP_SRCDIR/fuzz/regress/FUZZ_NAME, to
 * LLVMFuzzerTestOneInput. A harness aborts on a broken invariant, so a regression input that
 * breaks again fails `make check`. It does not mutate inputs; that is libFuzzer's job. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "replay: cannot open %s\n", path); exit(99); }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (n == cap) { cap *= 2; buf = realloc(buf, cap); if (!buf) exit(99); }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0) break;
        n += r;
    }
    fclose(f);
    /* an exact-size copy, so ASan sees reads past the input's end */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 1;
}

static int run_path(const char *path, int must_exist) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (must_exist) { fprintf(stderr, "replay: %s: no such file or directory\n", path); exit(99); }
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    struct dirent **list;
    int k = scandir(path, &list, NULL, alphasort), count = 0;
    if (k < 0) { fprintf(stderr, "replay: cannot list %s\n", path); exit(99); }
    for (int i = 0; i < k; i++) {
        if (list[i]->d_name[0] != '.') {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", path, list[i]->d_name);
            count += run_path(p, 1);
        }
        free(list[i]);
    }
    free(list);
    return count;
}

int main(int argc, char **argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    int count = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) count += run_path(argv[i], 1);
    } else {
        const char *top = getenv("TOP_SRCDIR");
        char p[4096];
        snprintf(p, sizeof p, "%s/fuzz/corpus/%s", top ? top : ".", FUZZ_NAME);
        count += run_path(p, 1);
        snprintf(p, sizeof p, "%s/fuzz/regress/%s", top ? top : ".", FUZZ_NAME);
        count += run_path(p, 0);
    }
    if (count == 0) { fprintf(stderr, "replay %s: no inputs found\n", FUZZ_NAME); return 99; }
    fprintf(stderr, "replay %s: %d inputs, no invariant broken\n", FUZZ_NAME, count);
    return 0;
}

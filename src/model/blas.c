/* blas.c: makes OpenBLAS use the kernels this CPU can run (see blas.h for why).
 * blas_pick_coretype is the pure decision (unit-tested with a table); blas_setup applies it by
 * setting OPENBLAS_CORETYPE and re-executing the program once, because OpenBLAS reads that
 * variable only while the library loads. It execs the path /proc/self/exe points to, not that
 * link itself: the kernel names a process after the file it execs, and ps, pgrep and
 * `tools/faults` must still see psring-train, not "exe".
 * Deliberately not here: probing the CPU beyond __builtin_cpu_supports, tuning thread affinity,
 * any BLAS other than OpenBLAS (with another BLAS this only pins the thread count, if it can). */
#include "config.h"
#include "blas.h"
#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define REEXEC_ENV "PSRING_BLAS_REEXEC"

/* cores whose kernels already use AVX-512 */
static const char *const avx512_cores[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
/* OpenBLAS's pre-AVX2 x86 cores: chosen on a CPU with AVX2+FMA, they are a misdetection.
 * AMD's AVX2 families (Bulldozer..Excavator, Zen) are left alone: their own kernels are tuned for
 * those chips, and Haswell's are not clearly better there. */
static const char *const old_cores[] = {
    "Unknown", "Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Core2", "Penryn",
    "Dunnington", "Nehalem", "Sandybridge", "Atom", "Nano", "Athlon", "Opteron", "Opteron_SSE3",
    "Barcelona", "Bobcat"};

static int name_in(const char *name, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(name, list[i]) == 0) return 1;
    return 0;
}

const char *blas_pick_coretype(const char *corename, int has_avx512f, int has_avx512bw,
                               int has_avx512vl, int has_avx2, int has_fma) {
    if (!corename) corename = "Unknown";
    if (has_avx512f && has_avx512bw && has_avx512vl) {
        if (name_in(corename, avx512_cores, sizeof avx512_cores / sizeof *avx512_cores)) return NULL;
        return "SkylakeX";
    }
    if (has_avx2 && has_fma && name_in(corename, old_cores, sizeof old_cores / sizeof *old_cores))
        return "Haswell";
    return NULL;
}

const char *blas_corename(void) {
#ifdef HAVE_OPENBLAS_GET_CORENAME
    const char *c = openblas_get_corename();
    return c ? c : "unknown";
#else
    return "unknown";
#endif
}

void blas_setup(int argc, char **argv, int threads, char *log_line, int loglen) {
    (void)argc;
    if (log_line && loglen > 0) log_line[0] = '\0';
    char dummy[8];
    if (!log_line || loglen <= 0) { log_line = dummy; loglen = (int)sizeof dummy; }
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
    if (threads > 0) openblas_set_num_threads(threads);
#endif
#ifdef HAVE_OPENBLAS_GET_CORENAME
    __builtin_cpu_init();
    int f = __builtin_cpu_supports("avx512f") != 0, bw = __builtin_cpu_supports("avx512bw") != 0,
        vl = __builtin_cpu_supports("avx512vl") != 0, a2 = __builtin_cpu_supports("avx2") != 0,
        fma = __builtin_cpu_supports("fma") != 0;
    const char *isa = f && bw && vl ? "AVX-512" : a2 && fma ? "AVX2+FMA" : "no AVX2";
    const char *now = blas_corename();
    const char *user = getenv("OPENBLAS_CORETYPE");
    const char *before = getenv(REEXEC_ENV);

    if (before) {
        /* second life: say what happened once, then drop the marker so that programs we start
         * see only OPENBLAS_CORETYPE (and respect it as if the user had set it) */
        snprintf(log_line, loglen, "blas: OpenBLAS picked %s for this CPU (%s); re-executed with "
                 "OPENBLAS_CORETYPE=%s, now %s", before, isa, user ? user : "?", now);
        unsetenv(REEXEC_ENV);
        return;
    }
    const char *pick = blas_pick_coretype(now, f, bw, vl, a2, fma);
    if (user) {
        snprintf(log_line, loglen, "blas: OPENBLAS_CORETYPE=%s set by the user; OpenBLAS uses %s", user, now);
        return;
    }
    if (!pick) return;
    const char *nofix = getenv("PSRING_NO_BLAS_FIX");
    if (nofix && strcmp(nofix, "0") != 0) {
        snprintf(log_line, loglen, "blas: OpenBLAS picked %s for this CPU (%s); PSRING_NO_BLAS_FIX "
                 "keeps it (OPENBLAS_CORETYPE=%s would be faster)", now, isa, pick);
        return;
    }
    if (setenv("OPENBLAS_CORETYPE", pick, 1) != 0 || setenv(REEXEC_ENV, now, 1) != 0) {
        snprintf(log_line, loglen, "blas: OpenBLAS picked %s for this CPU (%s); setenv failed (%s), "
                 "continuing with %s", now, isa, strerror(errno), now);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) self[len] = '\0';
    else snprintf(self, sizeof self, "/proc/self/exe");
    execv(self, argv);
    /* still here: the exec failed; undo the environment so children do not inherit half a fix */
    int err = errno;
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(REEXEC_ENV);
    snprintf(log_line, loglen, "blas: OpenBLAS picked %s for this CPU (%s); re-exec with "
             "OPENBLAS_CORETYPE=%s failed (execv %s: %s), continuing with %s",
             now, isa, pick, self, strerror(err), now);
#else
    (void)argv;
#endif
}

/* cublas_lib.c: cuBLAS through dlopen (cublas_lib.h says why). The symbols are the _v2 names that
 * cublas_v2.h maps cublasCreate, cublasSgemm, ... to. */
#include "config.h"
#include "cublas_lib.h"
#include "common/check.h"
#include <dlfcn.h>
#include <pthread.h>

static cublas_lib_t lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *entry(void *h, const char *name) {
    void *f = dlsym(h, name);
    if (!f) die("%s lacks %s (a cuBLAS older than this build's headers?)", CUBLAS_SONAME, name);
    return f;
}

static void load(void) {
    /* the soname of the toolkit we built against; found through the program's run path */
    void *h = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) die("--device cuda: cannot load cuBLAS (%s)", dlerror());
    *(void **)&lib.create = entry(h, "cublasCreate_v2");
    *(void **)&lib.destroy = entry(h, "cublasDestroy_v2");
    *(void **)&lib.set_stream = entry(h, "cublasSetStream_v2");
    *(void **)&lib.set_math_mode = entry(h, "cublasSetMathMode");
    *(void **)&lib.set_workspace = entry(h, "cublasSetWorkspace_v2");
    *(void **)&lib.sgemm = entry(h, "cublasSgemm_v2");
    *(void **)&lib.status_string = entry(h, "cublasGetStatusString");
}

const cublas_lib_t *cublas_lib(void) {
    pthread_once(&once, load);
    return &lib;
}

void cublas_check_at(cublasStatus_t s, const char *what, const char *file, int line) {
    if (s != CUBLAS_STATUS_SUCCESS)
        die_at(file, line, 1, "%s: %s (cuBLAS status %d)", what, cublas_lib()->status_string(s), (int)s);
}

/* test_cublas_lib: cuBLAS is loaded at its first use, not at start-up (cublas_lib.h says why):
 * before cublas_lib() no libcublas is mapped into this program, which links like psring-train;
 * after it, every entry point resolved and the library answers. Needs the toolkit, not a GPU. */
#include "model/cublas_lib.h"
#include "unit.h"
#include <check.h>
#include <link.h>
#include <string.h>

static int has_cublas(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    return info->dlpi_name && strstr(info->dlpi_name, "libcublas") != NULL;
}

START_TEST(test_loaded_at_first_use) {
    ck_assert_msg(!dl_iterate_phdr(has_cublas, NULL), "libcublas is mapped before its first use");
    const cublas_lib_t *b = cublas_lib();
    ck_assert_msg(dl_iterate_phdr(has_cublas, NULL), "cublas_lib() did not load libcublas");
    ck_assert_ptr_nonnull(b->create);
    ck_assert_ptr_nonnull(b->destroy);
    ck_assert_ptr_nonnull(b->set_stream);
    ck_assert_ptr_nonnull(b->set_math_mode);
    ck_assert_ptr_nonnull(b->set_workspace);
    ck_assert_ptr_nonnull(b->sgemm);
    const char *bad = b->status_string(CUBLAS_STATUS_NOT_INITIALIZED), *ok = b->status_string(CUBLAS_STATUS_SUCCESS);
    ck_assert(bad && ok && *bad && *ok);
    ck_assert_str_ne(bad, ok);   /* the library itself answers, status by status */
    ck_assert_ptr_eq(cublas_lib(), b);   /* loaded once */
}
END_TEST

int main(void) {
    const unit_test_t tests[] = {UNIT_TEST(test_loaded_at_first_use)};
    Suite *s = suite_create("cublas_lib");
    unit_tcase(s, "load", tests, UNIT_LEN(tests));
    return unit_run_fork(CK_NOFORK, &s, 1);   /* the check of what is mapped sees this process */
}

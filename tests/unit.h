/* unit.h: what every Check test binary shares: a suite built from a table of tests (unit_suite,
 * unit_tcase), the runner that turns the failure count into the exit status (unit_run), and one
 * temporary-folder fixture (unit_tmpdir_add, unit_dir). Header-only: a test includes it. It does
 * not skip: a binary that cannot run here returns 77 before building its suites. */
#ifndef PSRING_TESTS_UNIT_H
#define PSRING_TESTS_UNIT_H
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_LEN(a) ((int)(sizeof(a) / sizeof *(a)))

/* Check 0.13 hands a test over as a TTest (its name inside); before, as a function and a name */
#if CHECK_MAJOR_VERSION > 0 || CHECK_MINOR_VERSION >= 13
typedef const TTest *unit_fn_t;
#else
typedef TFun unit_fn_t;
#endif

/* one row of a test table: a test run `loops` times with _i = 0 .. loops-1 (a plain test is a
 * loop of one, as Check's tcase_add_test itself is) */
typedef struct {
    unit_fn_t fn;
    const char *name;
    int loops;
} unit_test_t;
#define UNIT_TEST(fn) {fn, #fn, 1}
#define UNIT_LOOP(fn, n) {fn, #fn, (n)}

/* a test case NAME of S holding the N tests of TESTS, in order; returned for a timeout or fixture */
static inline TCase *unit_tcase(Suite *s, const char *name, const unit_test_t *tests, int n) {
    TCase *tc = tcase_create(name);
    for (int k = 0; k < n; k++) {
#if CHECK_MAJOR_VERSION > 0 || CHECK_MINOR_VERSION >= 13
        _tcase_add_test(tc, tests[k].fn, 0, 0, 0, tests[k].loops);
#else
        _tcase_add_test(tc, tests[k].fn, tests[k].name, 0, 0, 0, tests[k].loops);
#endif
    }
    suite_add_tcase(s, tc);
    return tc;
}

/* the common shape: a suite NAME of one test case "core" */
static inline Suite *unit_suite(const char *name, const unit_test_t *tests, int n) {
    Suite *s = suite_create(name);
    unit_tcase(s, "core", tests, n);
    return s;
}

/* runs the N suites (FORK: CK_FORK_GETENV as Check's default, CK_NOFORK where a child cannot
 * inherit the parent's state, e.g. a CUDA context) and gives main's exit status */
static inline int unit_run_fork(enum fork_status fork, Suite *const suites[], int n) {
    SRunner *sr = srunner_create(suites[0]);
    for (int k = 1; k < n; k++) srunner_add_suite(sr, suites[k]);
    srunner_set_fork_status(sr, fork);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
static inline int unit_run(Suite *const suites[], int n) { return unit_run_fork(CK_FORK_GETENV, suites, n); }

/* ---- the temporary folder: a fresh one under $TMPDIR (else /tmp) for every test of a case, removed
 * with all it holds after the test, pass or fail; the test finds it in unit_dir */
static char unit_dir[256];

static inline void unit_tmpdir_setup(void) {
    const char *t = getenv("TMPDIR");
    int n = snprintf(unit_dir, sizeof unit_dir, "%s/psring-test-XXXXXX", t && *t ? t : "/tmp");
    ck_assert_msg(n > 0 && (size_t)n < sizeof unit_dir, "TMPDIR too long: %s", t);
    ck_assert_msg(mkdtemp(unit_dir) != NULL, "mkdtemp %s: %s", unit_dir, strerror(errno));
}

static inline int unit_tmpdir_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

/* no shell (rm -rf): the folder's name may hold any character */
static inline void unit_tmpdir_teardown(void) {
    ck_assert_msg(nftw(unit_dir, unit_tmpdir_remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0, "removing %s: %s",
                  unit_dir, strerror(errno));
}

/* gives every test of TC its own unit_dir */
static inline TCase *unit_tmpdir_add(TCase *tc) {
    tcase_add_checked_fixture(tc, unit_tmpdir_setup, unit_tmpdir_teardown);
    return tc;
}
#endif

/* test_timeline.c: the Chrome-trace recorder without MPI. One process records events (from two
 * threads), parts of further "ranks" are written by forked children, and the merge must produce
 * one JSON file that a real parser (python3's json module) accepts, with every rank's events and
 * no part left behind; a missing part must fail with a message naming the rank, within the
 * timeout, and a part from another job (stale token) must not be merged. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "common/timeline.h"
#include "unit.h"

/* python3 checks the file: valid JSON, and for each pid the set of X-event names */
static int py_check(const char *path, const char *expr) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import json,sys,collections\n"
             "d=json.load(open('%s'))\n"
             "ev=d['traceEvents']\n"
             "names=collections.defaultdict(set)\n"
             "[names[e['pid']].add(e['name']) for e in ev if e['ph']=='X']\n"
             "sys.exit(0 if (%s) else 1)\"", path, expr);
    return system(cmd);
}

static void *comm_thread(void *arg) {
    for (int i = 0; i < 10; i++) {
        double t = timeline_now();
        timeline_event("reduce-scatter", t, t + 1e-6);
    }
    return NULL;
}

/* child: record as process r of n, write the part, exit */
static void child_part(const char *path, int r, int n) {
    pid_t p = fork();
    ck_assert_int_ge(p, 0);
    if (p == 0) {
        char err[256];
        char role[32];
        snprintf(role, sizeof role, "worker %d", r);
        if (timeline_init(path, r, n, role, err, sizeof err) != 0) _exit(3);
        double t = timeline_now();
        timeline_event("forward", t, t + 1e-4);
        timeline_event("allgather", t + 1e-4, t + 2e-4);
        _exit(timeline_finish(0, err, sizeof err) == 0 ? 0 : 4);
    }
    int st;
    ck_assert_int_eq(waitpid(p, &st, 0), p);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

START_TEST(merge_eight_ranks) {
    ck_assert_msg(system("python3 -c 1 2>/dev/null") == 0, "python3 (the JSON parser of this test) is missing");
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/trace \"quoted\".json", unit_dir);
    for (int r = 1; r < 8; r++) child_part(path, r, 8);
    ck_assert_int_eq(timeline_init(path, 0, 8, "worker \"0\"", err, sizeof err), 0);
    ck_assert(timeline_enabled());
    /* a thread's tid is the order of its first event: the main thread records first (as the
     * trainer's does, data before any communication), so the comm thread is tid 1 however the
     * two get scheduled */
    double t = timeline_now();
    timeline_event("backward", t, t + 1e-3);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, comm_thread, NULL), 0);
    pthread_join(th, NULL);
    ck_assert_msg(timeline_finish(1, err, sizeof err) == 0, "%s", err);
    ck_assert(!timeline_enabled());
    char q[400];
    snprintf(q, sizeof q, "%s", path);
    /* the path holds quotes: hand it to python through a symlink with a plain name */
    char link[300];
    snprintf(link, sizeof link, "%s/plain.json", unit_dir);
    ck_assert_int_eq(symlink(q, link), 0);
    ck_assert_int_eq(py_check(link, "len(names)==8 and names[0]=={'backward','reduce-scatter'} and "
                                    "all(names[r]=={'forward','allgather'} for r in range(1,8)) and "
                                    "sum(1 for e in ev if e['ph']=='X' and e['pid']==0 and e['tid']==1)==10"), 0);
    for (int r = 0; r < 8; r++) {
        char part[400];
        snprintf(part, sizeof part, "%s.part%d", path, r);
        ck_assert_msg(access(part, F_OK) != 0, "part %d left behind", r);
    }
}
END_TEST

START_TEST(missing_part_names_rank) {
    char path[300], err[512] = "";
    snprintf(path, sizeof path, "%s/t.json", unit_dir);
    child_part(path, 0, 3);
    child_part(path, 2, 3);
    ck_assert_int_eq(timeline_merge(path, 3, 0.3, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "rank 1") != NULL, "message does not name rank 1: %s", err);
    ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(stale_token_not_merged) {
    char path[300], err[512] = "";
    snprintf(path, sizeof path, "%s/t.json", unit_dir);
    setenv("PMIX_NAMESPACE", "old-job", 1);
    child_part(path, 0, 1);
    setenv("PMIX_NAMESPACE", "new-job", 1);
    int rc = timeline_merge(path, 1, 0.2, err, sizeof err);
    unsetenv("PMIX_NAMESPACE");
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_nonnull(strstr(err, "rank 0"));
}
END_TEST

START_TEST(off_is_noop) {
    char err[64];
    ck_assert_int_eq(timeline_init("", 0, 1, "x", err, sizeof err), 0);
    ck_assert(!timeline_enabled());
    timeline_event("forward", 0, 1);
    ck_assert_int_eq(timeline_finish(1, err, sizeof err), 0);
    ck_assert_int_eq(timeline_init("/tmp/x.json", 3, 2, "x", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "out of range"));
}
END_TEST

START_TEST(unwritable_dir_fails_cleanly) {
    char err[512] = "";
    ck_assert_int_eq(timeline_init("/nonexistent-dir/t.json", 0, 1, "w", err, sizeof err), 0);
    ck_assert_int_eq(timeline_finish(1, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent-dir/t.json"));
}
END_TEST

int main(void) {
    const unit_test_t tests[] = {
        UNIT_TEST(merge_eight_ranks), UNIT_TEST(missing_part_names_rank), UNIT_TEST(stale_token_not_merged),
        UNIT_TEST(off_is_noop), UNIT_TEST(unwritable_dir_fails_cleanly),
    };
    Suite *s = suite_create("timeline");
    unit_tmpdir_add(unit_tcase(s, "timeline", tests, UNIT_LEN(tests)));
    return unit_run(&s, 1);
}

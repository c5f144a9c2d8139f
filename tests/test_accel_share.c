/* test_accel_share.c: the compute thread's moves between an emulated GPU host's two CPU shares
 * (src/train/accel_share.c). Plain folders with a `tasks` (v1) or `cgroup.threads` (v2) file stand
 * in for the groups, so the writes can be counted: two per step, the thread's TID each time, none
 * without the variables. A missing group is one line naming it; through the environment, exit 1.
 * As root with a writable cgroup v1 cpu mount, the same moves between two real groups, read back
 * from /proc/thread-self/cgroup (the cluster test, tests/cluster_kinds.sh, runs the trainer so). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "train/accel_share.h"
#include "unit.h"

/* DIR/NAME made as a group folder with an empty FILE; its path in out */
static void fake_group(char *out, size_t len, const char *name, const char *file) {
    snprintf(out, len, "%s/%s", unit_dir, name);
    ck_assert_int_eq(mkdir(out, 0755), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/%s", out, file);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
}

/* how many lines of DIR/FILE hold this thread's TID, and whether every line does */
static int tid_lines(const char *dir, const char *file) {
    char p[600], line[64], tid[32];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    snprintf(tid, sizeof tid, "%ld\n", (long)syscall(SYS_gettid));
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        ck_assert_str_eq(line, tid);
        n++;
    }
    fclose(f);
    return n;
}

START_TEST(moves_two_per_step) {
    static const char *files[] = {"tasks", "cgroup.threads"};   /* v1, v2 */
    const char *file = files[_i];
    char acc[512], host[512], err[256];
    fake_group(acc, sizeof acc, "accel", file);
    fake_group(host, sizeof host, "host", file);
    accel_share_t a;
    ck_assert_int_eq(accel_share_open(&a, acc, host, err, sizeof err), 0);
    ck_assert_int_eq(tid_lines(acc, file), 1);   /* on the accel share from the start */
    const int steps = 5;
    for (int s = 0; s < steps; s++) {
        accel_share_compute(&a);
        accel_share_compute(&a);   /* already there: no write */
        accel_share_exchange(&a);
    }
    ck_assert_int_eq(a.moves, 2 * steps);
    ck_assert_int_eq(tid_lines(acc, file), steps);
    ck_assert_int_eq(tid_lines(host, file), steps);
    accel_share_compute(&a);
    accel_share_free(&a);   /* back onto the host share */
    ck_assert_int_eq(tid_lines(host, file), steps + 1);
    ck_assert_int_eq(a.on, 0);
}
END_TEST

START_TEST(off_without_the_variable) {
    unsetenv(ACCEL_SHARE_ENV);
    unsetenv(ACCEL_SHARE_HOST_ENV);
    accel_share_t a;
    accel_share_init(&a);
    ck_assert_int_eq(a.on, 0);
    accel_share_compute(&a);
    accel_share_exchange(&a);
    accel_share_free(&a);
    ck_assert_int_eq(a.moves, 0);
    memset(&a, 0, sizeof a);   /* a run freed before it started: fd 0 must stay open */
    accel_share_free(&a);
    ck_assert_int_ne(fcntl(0, F_GETFD), -1);
}
END_TEST

START_TEST(missing_group_named) {
    char host[512], err[256], gone[512];
    fake_group(host, sizeof host, "host", "tasks");
    snprintf(gone, sizeof gone, "%s/no-such-group", unit_dir);
    accel_share_t a;
    ck_assert_int_eq(accel_share_open(&a, gone, host, err, sizeof err), -1);
    ck_assert_msg(strstr(err, gone) && strstr(err, "accelerator"), "err: %s", err);
    ck_assert_int_eq(a.on, 0);
    ck_assert_int_eq(accel_share_open(&a, host, gone, err, sizeof err), -1);
    ck_assert_msg(strstr(err, gone) && strstr(err, "host share"), "err: %s", err);
}
END_TEST

/* through the environment a broken group ends the process (exit 1), as a broken cluster must */
START_TEST(broken_group_exits) {
    char gone[512];
    snprintf(gone, sizeof gone, "%s/no-such-group", unit_dir);
    setenv(ACCEL_SHARE_ENV, gone, 1);
    setenv(ACCEL_SHARE_HOST_ENV, gone, 1);
    accel_share_t a;
    accel_share_init(&a);
}
END_TEST

START_TEST(one_variable_exits) {
    setenv(ACCEL_SHARE_ENV, "/nowhere", 1);
    unsetenv(ACCEL_SHARE_HOST_ENV);
    accel_share_t a;
    accel_share_init(&a);
}
END_TEST

static void *idle_thread(void *p) {
    pthread_mutex_t *m = p;
    pthread_mutex_lock(m);
    pthread_mutex_unlock(m);
    return NULL;
}

/* one line per thread, the caller's marked compute */
START_TEST(report_lists_threads) {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_t t;
    pthread_mutex_lock(&m);
    ck_assert_int_eq(pthread_create(&t, NULL, idle_thread, &m), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    accel_share_report(f);
    fclose(f);
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    int lines = 0, compute = 0;
    char want[64];
    snprintf(want, sizeof want, " tid %ld (", (long)syscall(SYS_gettid));
    for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
        lines++;
        ck_assert_msg(strstr(l, "accel share: pid ") == l && strstr(l, " cgroup /"), "line: %s", l);
        if (strstr(l, " compute")) { compute++; ck_assert_msg(strstr(l, want), "line: %s", l); }
    }
    ck_assert_int_eq(lines, 2);
    ck_assert_int_eq(compute, 1);
    free(buf);
}
END_TEST

/* the cpu group of this thread, from /proc/thread-self/cgroup (v1) */
static void my_cpu_group(char *out, size_t len) {
    FILE *f = fopen("/proc/thread-self/cgroup", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    out[0] = '\0';
    while (fgets(line, sizeof line, f))
        if (strstr(line, ":cpu:") || strstr(line, ":cpu,")) snprintf(out, len, "%s", strrchr(line, ':') + 1);
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* real groups where this may make them: root and a writable v1 cpu mount; elsewhere it says so */
START_TEST(real_cgroup_v1) {
    const char *mnt = "/sys/fs/cgroup/cpu";
    char base[256], acc[300], host[300], err[256], g[512];
    snprintf(base, sizeof base, "%s/psring-test-accel.%ld", mnt, (long)getpid());
    if (geteuid() != 0 || access(mnt, W_OK) != 0 || mkdir(base, 0755) != 0) {
        fprintf(stderr, "test_accel_share: no writable cgroup v1 cpu mount: real groups not tried\n");
        return;
    }
    snprintf(acc, sizeof acc, "%s/accel", base);
    snprintf(host, sizeof host, "%s/host", base);
    ck_assert_int_eq(mkdir(acc, 0755), 0);
    ck_assert_int_eq(mkdir(host, 0755), 0);
    accel_share_t a;
    int rc = accel_share_open(&a, acc, host, err, sizeof err);
    char in_accel[512] = "", in_host[512] = "";
    if (rc == 0) {
        my_cpu_group(in_accel, sizeof in_accel);
        accel_share_exchange(&a);
        my_cpu_group(in_host, sizeof in_host);
        accel_share_free(&a);
    }
    FILE *f = fopen("/sys/fs/cgroup/cpu/tasks", "w");   /* out, so the groups can go */
    if (f) { fprintf(f, "%ld\n", (long)syscall(SYS_gettid)); fclose(f); }
    rmdir(acc); rmdir(host); rmdir(base);
    ck_assert_msg(rc == 0, "%s", err);
    snprintf(g, sizeof g, "/psring-test-accel.%ld/accel", (long)getpid());
    ck_assert_str_eq(in_accel, g);
    snprintf(g, sizeof g, "/psring-test-accel.%ld/host", (long)getpid());
    ck_assert_str_eq(in_host, g);
}
END_TEST

int main(void) {
    const unit_test_t tests[] = {
        UNIT_LOOP(moves_two_per_step, 2), UNIT_TEST(off_without_the_variable), UNIT_TEST(missing_group_named),
        UNIT_TEST(report_lists_threads), UNIT_TEST(real_cgroup_v1),
    };
    Suite *s = suite_create("accel_share");
    TCase *tc = unit_tcase(s, "core", tests, UNIT_LEN(tests));
    unit_tmpdir_add(tc);
    tcase_add_exit_test(tc, broken_group_exits, 1);
    tcase_add_exit_test(tc, one_variable_exits, 1);
    return unit_run(&s, 1);
}

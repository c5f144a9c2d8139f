/* test_auth.c: Check suite for the --ps-auth keyfile (src/ps/auth.c): generation (mode 0600, no
 * silent overwrite), loading, and every way a keyfile can be wrong, table-driven. The CURVE
 * handshake itself is tested end to end by tests/ps_auth.sh. Skips (77) without CURVE. */
#include "ps/auth.h"
#include "unit.h"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void path_of(char *p, size_t n, const char *name) { snprintf(p, n, "%s/%s", unit_dir, name); }

START_TEST(test_generate_load) {
    char p[300], err[512];
    path_of(p, sizeof p, "key");
    ck_assert_int_eq(ps_auth_generate(p, 0, err, sizeof err), 0);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ps_auth_keys_t a, b;
    ck_assert_int_eq(ps_auth_load(p, &a, err, sizeof err), 0);
    ck_assert_uint_eq(strlen(a.server_public), 40);
    ck_assert_str_ne(a.server_public, a.client_public);       /* two distinct keypairs */
    ck_assert_str_ne(a.server_secret, a.client_secret);
    /* no silent overwrite; --force makes new keys */
    ck_assert_int_eq(ps_auth_generate(p, 0, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--force"));
    ck_assert_int_eq(ps_auth_generate(p, 1, err, sizeof err), 0);
    ck_assert_int_eq(ps_auth_load(p, &b, err, sizeof err), 0);
    ck_assert_str_ne(a.server_secret, b.server_secret);
}
END_TEST

static const char *K40 = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const struct { const char *name, *body; int mode; const char *want; } bad[] = {
    { "world-readable", NULL, 0644, "readable by others" },
    { "missing-line", "server-public %s\nserver-secret %s\nclient-public %s\n", 0600, "no client-secret line" },
    { "short-key", "server-public abc\n", 0600, "40-character Z85" },
    { "bad-char", "server-public rq:rM>}U?@Lns47E1%%kR.o@n%%FcmmsL/@{H8]yf\"\n", 0600, "40-character Z85" },
    { "unknown-name", "server-key %s\n", 0600, "line 2" },   /* line 1 is the comment */
    { "one-word", "server-public\n", 0600, "line 2" },
};

START_TEST(test_bad_keyfile) {
    char p[300], err[512];
    path_of(p, sizeof p, bad[_i].name);
    if (bad[_i].body) {
        FILE *f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "# comment\n");
        fprintf(f, bad[_i].body, K40, K40, K40);
        fclose(f);
    } else {
        ck_assert_int_eq(ps_auth_generate(p, 0, err, sizeof err), 0);
    }
    ck_assert_int_eq(chmod(p, (mode_t)bad[_i].mode), 0);
    ps_auth_keys_t k;
    err[0] = 0;
    ck_assert_int_eq(ps_auth_load(p, &k, err, sizeof err), -1);
    ck_assert_msg(strstr(err, bad[_i].want) != NULL, "%s: got '%s'", bad[_i].name, err);
    ck_assert_ptr_nonnull(strstr(err, p));          /* names the file */
    ck_assert_ptr_null(strchr(err, '\n'));          /* one line */
}
END_TEST

START_TEST(test_missing_file) {
    char p[300], err[512];
    path_of(p, sizeof p, "absent");
    ps_auth_keys_t k;
    ck_assert_int_eq(ps_auth_load(p, &k, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "No such file"));
    path_of(p, sizeof p, "no/such/dir/key");
    ck_assert_int_eq(ps_auth_generate(p, 0, err, sizeof err), -1);
}
END_TEST

int main(void) {
    if (!ps_auth_available()) { fprintf(stderr, "SKIP: libzmq without CURVE\n"); return 77; }
    const unit_test_t tests[] = {
        UNIT_TEST(test_generate_load), UNIT_LOOP(test_bad_keyfile, UNIT_LEN(bad)), UNIT_TEST(test_missing_file),
    };
    Suite *s = suite_create("auth");
    unit_tmpdir_add(unit_tcase(s, "keyfile", tests, UNIT_LEN(tests)));
    return unit_run(&s, 1);
}

/* watchdog.c: see watchdog.h. alarm() and a SIGALRM handler that only calls async-signal-safe
 * functions (write, _exit). */
#include "watchdog.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char wd_message[256];
static size_t wd_len;

static void on_deadline(int sig) {
    (void)sig;
    if (wd_len) {
        ssize_t w = write(STDERR_FILENO, wd_message, wd_len);
        (void)w;
    }
    _exit(1);
}

void watchdog_arm(int seconds, const char *message, int say) {
    wd_len = 0;
    if (say && message) {
        snprintf(wd_message, sizeof wd_message, "%s\n", message);
        wd_len = strlen(wd_message);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_deadline;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds > 0 ? (unsigned)seconds : 1u);
}

void watchdog_disarm(void) {
    alarm(0);
    signal(SIGALRM, SIG_DFL);
}

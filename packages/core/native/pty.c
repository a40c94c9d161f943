/* The one-command mode's pseudo-terminal (R15.4); pty.h says why and how. */
#define _GNU_SOURCE

#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include "common.h"

void open_pty(struct pty *pty, unsigned short cols, unsigned short rows) {
    pty->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (pty->master < 0) die(EXIT_HELPER, "--pty: cannot open a terminal: %s", strerror(errno));
    if (grantpt(pty->master) != 0 || unlockpt(pty->master) != 0)
        die(EXIT_HELPER, "--pty: cannot unlock the terminal: %s", strerror(errno));
    char name[128];
    if (ptsname_r(pty->master, name, sizeof name) != 0)
        die(EXIT_HELPER, "--pty: the terminal has no name: %s", strerror(errno));
    pty->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (pty->slave < 0) die(EXIT_HELPER, "--pty: cannot open %s: %s", name, strerror(errno));
    struct winsize size = {.ws_row = rows, .ws_col = cols};
    if (ioctl(pty->slave, TIOCSWINSZ, &size) != 0)
        die(EXIT_HELPER, "--pty: cannot set the terminal's size: %s", strerror(errno));
}

void become_pty_child(const struct pty *pty) {
    /* A new session: the terminal becomes its controlling terminal (job control, ^C, /dev/tty). */
    if (setsid() < 0 || ioctl(pty->slave, TIOCSCTTY, 0) != 0) {
        dprintf(STDERR_FILENO, PROG ": --pty: cannot take the terminal: %s\n", strerror(errno));
        _exit(EXIT_HELPER);
    }
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) (void)dup2(pty->slave, fd);
    /* The pair closes on exec; the command keeps only its 0, 1 and 2. */
}

/* Writes all of buf to fd; 0, or -1 when fd is gone. */
static int write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static void relay(int master) __attribute__((noreturn));
static void relay(int master) {
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN);
    /* Input waits for the command to read it, but never stops the output from flowing. */
    (void)fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    static char out[65536], in[65536];
    size_t pending = 0, at = 0;
    int input_open = 1;
    for (;;) {
        struct pollfd fds[2] = {{.fd = master, .events = POLLIN | (pending > 0 ? POLLOUT : 0)},
                                {.fd = STDIN_FILENO, .events = POLLIN}};
        nfds_t n = input_open && pending == 0 ? 2 : 1;
        if (poll(fds, n, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(EXIT_HELPER);
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t got = read(master, out, sizeof out);
            if (got > 0) {
                if (write_all(STDOUT_FILENO, out, (size_t)got) != 0) _exit(0); /* nobody reads */
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                _exit(0); /* EIO: nothing holds the terminal any more, everything was read */
            }
        }
        if (pending > 0 && (fds[0].revents & POLLOUT)) {
            ssize_t put = write(master, in + at, pending);
            if (put > 0) {
                at += (size_t)put;
                pending -= (size_t)put;
            }
        }
        if (n == 2 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t got = read(STDIN_FILENO, in, sizeof in);
            if (got > 0) {
                pending = (size_t)got;
                at = 0;
            } else if (got == 0 || errno != EINTR) {
                input_open = 0;
            }
        }
    }
}

pid_t start_pty_relay(const struct pty *pty) {
    pid_t pid = fork();
    if (pid < 0) die(EXIT_HELPER, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(pty->slave);
        relay(pty->master);
    }
    return pid;
}

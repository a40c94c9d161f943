/* The template shell of the pool's shell units: see template.h and bash/ahma-unit.c. */
#define _GNU_SOURCE

#include "template.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "landlock.h"
#include "supervise.h"
#include "zygote.h"

/*
 * Longest wait for the template's answer. It clones in well under a millisecond; the zygote's
 * loop waits meanwhile, so a template that stopped answering costs this once (commands cannot
 * stop it: their Landlock domains are nested beneath its).
 */
#define ANSWER_TIMEOUT_MS 500

/*
 * Run by the template as `bash -c TEMPLATE BASH SO GRACE_MS ABI SCOPE`. In the template,
 * `ahma_unit` serves until the zygote goes; in each unit's B it returns (B already in a Landlock
 * domain of its own: ABI is the one the helper confined itself with, -1 when unconfined), and B
 * runs the bootstrap every shell unit runs (which also resets what a copy of the template shares
 * with the others: the arguments, RANDOM's seed, SECONDS' start).
 */
static const char template_script[] =
    /* One line, parsed once by the template (template.h) */
    SHELL_UNIT_SETUP
    "enable -f \"$1\" ahma_unit || exit 125; __ahma_scope=$4; ahma_unit 3 \"$2\" \"$3\" || exit 125; "
    SHELL_UNIT_RUN;

pid_t template_pid = -1;
static int sock = -1; /* the zygote's end of the socket to the template, -1 when not in use */

void template_gone(int reaped) {
    if (sock >= 0) {
        close(sock); /* EOF: a template still running ends itself */
        sock = -1;
    }
    if (reaped) template_pid = -1;
}

static void lost(const char *why) {
    fprintf(stderr, PROG ": the template shell %s: shell units start a shell each from now on\n",
            why);
    if (template_pid > 0) kill(template_pid, SIGKILL);
    template_gone(0);
}

void start_template(pid_t zygote) {
    const char *base = strrchr(shell_path, '/');
    if (strcmp(base == NULL ? shell_path : base + 1, "bash") != 0) return;
    char so[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", so, sizeof so);
    char *slash = n > 0 && (size_t)n < sizeof so ? memrchr(so, '/', (size_t)n) : NULL;
    if (slash == NULL || (size_t)(slash - so) + sizeof "/ahma-unit.so" > sizeof so) return;
    strcpy(slash, "/ahma-unit.so");
    if (access(so, R_OK) != 0) return; /* built without it: classic shell units */

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        fprintf(stderr, PROG ": socketpair for the template shell: %s\n", strerror(errno));
        return;
    }
    char grace[24], abi[16];
    snprintf(grace, sizeof grace, "%lld", (long long)grace_ms);
    snprintf(abi, sizeof abi, "%d", landlock_confined_abi());
    pid_t pid = fork();
    if (pid == 0) {
        /* The socket on fd 3 (dup2 from above 3 clears close-on-exec), /dev/null on 0 and 1,
         * stderr stays the zygote's (diagnostics); dies with the zygote. */
        (void)dup2(fcntl(sv[1], F_DUPFD, 4), 3);
        close_fd_range(4, ~0U);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != zygote)
            _exit(EXIT_HELPER);
        reset_signals();
        char *const args[] = {(char *)shell_path,
                              "--noprofile",
                              "--norc",
                              "-c",
                              (char *)template_script,
                              (char *)shell_path,
                              so,
                              grace,
                              abi,
                              (char *)(scope_path == NULL ? "" : scope_path),
                              NULL};
        exec_command(args);
    }
    close(sv[1]);
    if (pid < 0) {
        fprintf(stderr, PROG ": fork for the template shell: %s\n", strerror(errno));
        close(sv[0]);
        return;
    }
    template_pid = pid;
    sock = sv[0];
}

pid_t clone_from_template(int go_r, int body, int out_w) {
    if (sock < 0) return -1;
    char byte = 'U';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(3 * sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control.space,
                         .msg_controllen = sizeof control.space};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(3 * sizeof(int));
    int fds[3] = {go_r, body, out_w};
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (n != 1) {
        lost("is gone");
        return -1;
    }

    int32_t answer = 0;
    int64_t deadline = now_ms() + ANSWER_TIMEOUT_MS;
    for (;;) {
        int64_t left = deadline - now_ms();
        struct pollfd p = {.fd = sock, .events = POLLIN};
        int r = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            lost("did not answer");
            return TEMPLATE_FATE_UNKNOWN;
        }
        n = recv(sock, &answer, sizeof answer, 0);
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    if (n != (ssize_t)sizeof answer) {
        lost("is gone");
        return TEMPLATE_FATE_UNKNOWN;
    }
    if (answer <= 0) { /* clone() failed there: try a fork here */
        errno = -answer;
        return -1;
    }
    /* Only a child of ours can be a unit (defence in depth: the answer comes from a bash). */
    siginfo_t info;
    if (waitid(P_PID, (id_t)answer, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        lost("answered with a process that is not a child of the zygote");
        return TEMPLATE_FATE_UNKNOWN;
    }
    return (pid_t)answer;
}

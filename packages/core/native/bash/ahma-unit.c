/*
 * ahma-unit.so: a bash loadable builtin that makes one warm bash the fork server of the pool's
 * shell units (zygote.c), so a sandboxed_shell command costs two forks of a running bash instead
 * of starting a new one (fork + exec + dynamic linking + initialisation: ~1 ms of CPU each).
 *
 * The zygote starts the template T as
 *     bash --noprofile --norc -c TEMPLATE BASH SO GRACE_MS ABI SCOPE  (a socket to the zygote on fd 3)
 * where TEMPLATE loads this file (`enable -f SO ahma_unit`) and calls `ahma_unit 3 GRACE_MS ABI`. In T
 * the builtin never returns: for every message of the zygote (one byte, and the unit's go pipe,
 * request memfd and output pipe as SCM_RIGHTS), it clones S with CLONE_PARENT, so S is the
 * zygote's child exactly like a unit it forks itself, and answers with S's pid (or -errno). S sets
 * up like any unit's supervisor (become_unit_supervisor) and forks B, which enters a Landlock
 * domain of its own (docs/native.md). In B the builtin *returns*,
 * and bash goes on with the rest of TEMPLATE: the same bootstrap a classic warm shell runs (wait
 * for the go byte, read the request, run the script). B is a fresh copy of a bash that has run
 * nothing, so nothing leaks between commands; what a copy would share with T is reset here ($$,
 * $PPID) or in TEMPLATE (RANDOM, SECONDS, the positional parameters).
 *
 * EOF on the socket (the zygote shut down, or died) ends T.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common.h"
#include "../landlock.h"
#include "../supervise.h"

/* The parts of bash's loadable-builtin interface (builtins.h, command.h) this file uses; stable
 * since bash 4. */
typedef struct word_desc {
    char *word;
    int flags;
} WORD_DESC;
typedef struct word_list {
    struct word_list *next;
    WORD_DESC *word;
} WORD_LIST;
struct builtin {
    const char *name;
    int (*function)(WORD_LIST *);
    int flags;
    const char *const *long_doc;
    const char *short_doc;
    char *handle;
};
#define BUILTIN_ENABLED 0x01
#define EXECUTION_SUCCESS 0
#define EX_USAGE 258

/* $$ is this variable; set_ppid() sets $PPID from getppid(); shell_pgrp is bash's idea of its
 * process group (job control). Weak: a bash without them still loads the builtin. */
extern pid_t dollar_dollar_pid __attribute__((weak));
extern void set_ppid(void) __attribute__((weak));
extern pid_t shell_pgrp __attribute__((weak));

/* The template's pid, once `ahma_unit` serves: a copy (B) that calls it again is refused. */
static pid_t template_pid;

/* Receives one unit request: fds[0..2] = go pipe (read end), request memfd, output pipe (write
 * end). Returns 0, or -1 at EOF or on any error (T then ends). */
static int receive_unit(int sock, int fds[3]) {
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(3 * sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control.space,
                         .msg_controllen = sizeof control.space};
    ssize_t n;
    while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
        c->cmsg_len != CMSG_LEN(3 * sizeof(int)))
        return -1;
    memcpy(fds, CMSG_DATA(c), 3 * sizeof(int));
    return 0;
}

/*
 * In S (a clone of T whose parent is the zygote), every signal blocked since before the clone:
 * becomes the unit's supervisor and forks B. Returns only in B, with bash's signal state as T had
 * it (`bash_mask` and bash's dispositions) and B's descriptors in place.
 */
static int start_unit(const int fds[3], pid_t zygote, const sigset_t *bash_mask) {
    /* The supervisor waits for these, so they must not be ignored: bash's dispositions of them are
     * kept for B, which is bash again (only these four, not all 64 signals: ~0.2 ms of CPU less
     * per command). Every other signal stays blocked until B is forked, so none of bash's
     * handlers runs in S meanwhile. */
    struct sigaction bash_actions[HANDLED_SIGNAL_COUNT];
    for (int i = 0; i < HANDLED_SIGNAL_COUNT; i++)
        (void)sigaction(handled_signals[i], NULL, &bash_actions[i]);

    become_unit_supervisor(fds[0], fds[1], fds[2], zygote);
    block_handled_signals(); /* the same four: default dispositions, blocked */
    struct supervisor sv = {.main_pid = fork()};
    if (sv.main_pid == 0) {
        give_shell_unit_fds(fds[0], fds[1], fds[2]);
        /* A Landlock domain of the command's own before bash runs anything of it (native.md). */
        enter_command_domain();
        for (int i = 0; i < HANDLED_SIGNAL_COUNT; i++)
            (void)sigaction(handled_signals[i], &bash_actions[i], NULL);
        sigprocmask(SIG_SETMASK, bash_mask, NULL);
        /* What a fresh bash would have: its own pid, parent and process group, and the ordinary
         * dumpable state (T and S are not, so a command cannot ptrace them). */
        (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        if (&dollar_dollar_pid != NULL) dollar_dollar_pid = getpid();
        if (set_ppid != NULL) set_ppid(); /* S, not the zygote: `kill $PPID` stays in the unit */
        if (&shell_pgrp != NULL) shell_pgrp = getpgrp();
        return EXECUTION_SUCCESS;
    }
    if (sv.main_pid < 0) {
        dprintf(fds[2], PROG ": fork: %s\n", strerror(errno));
        _exit(EXIT_HELPER);
    }
    /* Named like every other supervisor; signals other than the four act as in one (a K frame's
     * signal ends it). */
    (void)prctl(PR_SET_NAME, PROG, 0, 0, 0);
    default_signals(~HANDLED_MASK); /* bash's ignored signals (SIGQUIT) must end S like any unit */
    sigprocmask(SIG_SETMASK, &handled_set, NULL);
    close_inherited_fds();
    supervise(&sv);
}

/*
 * `ahma_unit FD GRACE_MS ABI`: serves the zygote on FD; returns only in a new unit's B. ABI: the
 * Landlock ABI the helper confined this bash with (-1: unconfined), for each B's own domain.
 */
static int ahma_unit(WORD_LIST *list) {
    char *end = NULL;
    long sock = list != NULL ? strtol(list->word->word, &end, 10) : -1;
    if (end == NULL || *end != '\0' || sock < 0 || list->next == NULL) return EX_USAGE;
    long long grace = strtoll(list->next->word->word, &end, 10);
    if (*end != '\0' || grace < 0 || list->next->next == NULL) return EX_USAGE;
    long abi = strtol(list->next->next->word->word, &end, 10);
    if (*end != '\0' || abi < -1) return EX_USAGE;
    grace_ms = grace;
    landlock_assume_confined((int)abi);

    if (template_pid != 0) {
        fputs("ahma_unit: only the template shell serves the pool\n", stderr);
        return EX_USAGE;
    }
    template_pid = getpid();
    /* Not dumpable, besides the Landlock domains that already keep commands out: no ptrace of the
     * template, no taking its descriptors (pidfd_getfd) to forge answers. */
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    pid_t zygote = getppid();
    sigset_t all, bash_mask;
    sigfillset(&all);
    for (;;) {
        int fds[3];
        if (receive_unit((int)sock, fds) != 0) _exit(0);
        /* A raw clone: glibc's fork() has no way to give the child another parent. S runs only
         * this file's C code (no threads, no raise()), which a raw clone does not disturb. Every
         * signal is blocked across it, so S starts with none of bash's handlers able to run. */
        sigprocmask(SIG_SETMASK, &all, &bash_mask);
        pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
            close((int)sock);
            return start_unit(fds, zygote, &bash_mask);
        }
        int err = errno;
        sigprocmask(SIG_SETMASK, &bash_mask, NULL);
        int32_t answer = pid > 0 ? pid : -err;
        for (int i = 0; i < 3; i++) close(fds[i]);
        if (send((int)sock, &answer, sizeof answer, MSG_NOSIGNAL) != (ssize_t)sizeof answer)
            _exit(0);
    }
}

static const char *const ahma_unit_doc[] = {
    "Serves the Ahma pool zygote on FD: clones a supervised shell unit for each request.",
    NULL,
};

__attribute__((visibility("default"))) struct builtin ahma_unit_struct = {
    "ahma_unit", ahma_unit, BUILTIN_ENABLED, ahma_unit_doc, "ahma_unit FD GRACE_MS ABI", NULL,
};

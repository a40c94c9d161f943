/*
 * ahma-unit.so: a bash loadable builtin that makes one warm bash the fork server of the pool's
 * shell units (zygote.c), so a sandboxed_shell command costs one fork of a running bash instead of
 * starting a new one (fork + exec + dynamic linking + initialisation: ~1 ms of CPU).
 *
 * The zygote starts the template T as
 *     bash --noprofile --norc -c TEMPLATE BASH SO GRACE_MS    (a socket to the zygote on fd 3)
 * where TEMPLATE loads this file (`enable -f SO ahma_unit`) and calls `ahma_unit 3 GRACE_MS`. In T
 * the builtin never returns: for every message of the zygote (one byte, and the unit's go pipe,
 * request memfd and output pipe as SCM_RIGHTS), it starts the unit's supervisor S and answers with
 * S's pid (or -errno).
 *
 * S is a CLONE_VM | CLONE_PARENT child of T on a stack of its own: the zygote's child exactly like
 * a unit it forks itself, but in T's memory, so it costs no copy of bash (no fork of bash's memory,
 * no page faults, no teardown: ~13% less CPU per call, bench/README.md). Sharing T's memory means
 * sharing its C library with T and with the other supervisors, so S runs supervise.c's raw system
 * calls only (see supervise.h).
 * S sets up like any unit's supervisor (become_unit_supervisor) and forks B, a copy of T's memory.
 * B leaves S's stack with a longjmp into `ahma_unit`'s frame on (its copy of) T's stack, where the
 * builtin *returns*, and bash goes on with the rest of TEMPLATE: the same bootstrap a classic warm
 * shell runs (wait for the go byte, read the request, run the script). B is a fresh copy of a bash
 * that has run nothing, so nothing leaks between commands; what a copy would share with T is reset
 * here ($$, $PPID) or in TEMPLATE (RANDOM, SECONDS, the positional parameters).
 *
 * EOF on the socket (the zygote shut down, or died) ends T.
 */
#define _GNU_SOURCE
/* B's longjmp leaves S's stack for T's: a fortified longjmp may take that for stack smashing. */
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common.h"
#include "../supervise.h"
#include "../sys.h"

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

/*
 * A supervisor's slot: its stack, scratch memory for its /proc scans, and its start-up data and
 * state. S runs in T's memory, so T hands a slot out again only once S is gone (the kernel zeroes
 * `running` when S exits: CLONE_CHILD_CLEARTID), and then unmaps what a killed S may have left
 * mapped. All slots are one shared mapping, reserved on first use: a fork shares it instead of
 * copying it, so the supervisors' and T's writes to it never fault on copy-on-write pages (or
 * interrupt the other CPU to flush them) after a fork; each B unmaps it before anything else. A
 * supervisor's code (supervise.c) needs a few KiB of its stack.
 */
#define STACK_BYTES (64 * 1024)
#define SCRATCH_BYTES (448 * 1024) /* a /proc table of ~37,000 processes */
#define SLOT_BYTES (SCRATCH_BYTES + STACK_BYTES)
#define MAX_SLOTS 256
struct slot {
    pid_t running; /* nonzero while its supervisor runs */
    int fds[3];    /* go pipe (read end), request memfd, output pipe (write end) */
    pid_t zygote;
    struct supervisor sv;
};
#define SLOTS_BYTES ((MAX_SLOTS * sizeof(struct slot) + 4095) & ~(size_t)4095)
#define SHARED_BYTES (SLOTS_BYTES + (size_t)MAX_SLOTS * SLOT_BYTES)
static char *shared;       /* the slots, then each slot's scratch and stack */
static struct slot *slots; /* at the start of `shared` */
/* B's first stack, in T's private memory (which T never touches): B starts on it, not on S's. */
static char b_stack[32 * 1024] __attribute__((aligned(16)));

/* What B must find again when it becomes bash: T's signal mask and handled signals' dispositions
 * (S resets those four), both read once before the first unit. */
static sigset_t bash_mask;
static struct sigaction bash_actions[HANDLED_SIGNAL_COUNT];
/* The other signals bash does not leave at their default (a handler: normally none; ignored:
 * SIGQUIT): default in S, which must never run bash's code and should die of a K frame's signal
 * like any supervisor. */
static uint64_t bash_set;
/* Where B leaves for bash: inside `ahma_unit`, on T's stack (as copied into B's memory). */
static jmp_buf into_bash;

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
 * In B, a fork of S and so a copy of T's memory, on b_stack: becomes the unit's shell. The C
 * library is usable again here (B's memory is its own), but only for plain system calls: its idea
 * of the thread's id is T's (B comes from a raw fork).
 */
static void enter_bash(const int fds[3]) __attribute__((noreturn));
static void enter_bash(const int fds[3]) {
    give_shell_unit_fds(fds[0], fds[1], fds[2]);
    for (int i = 0; i < HANDLED_SIGNAL_COUNT; i++)
        (void)sigaction(handled_signals[i], &bash_actions[i], NULL);
    sigprocmask(SIG_SETMASK, &bash_mask, NULL);
    /* What a fresh bash would have: its own pid, parent and process group, and the ordinary
     * dumpable state (T and S are not, so a command cannot ptrace them). */
    (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    if (&dollar_dollar_pid != NULL) dollar_dollar_pid = getpid();
    if (set_ppid != NULL) set_ppid(); /* S, not the zygote: `kill $PPID` stays in the unit */
    if (&shell_pgrp != NULL) shell_pgrp = getpgrp();
    longjmp(into_bash, 1);
}

/* B's entry (fork_onto): its descriptors out of the slot, then the supervisors' memory unmapped,
 * so nothing a command runs can reach it. */
static void start_bash(void *arg) {
    const struct slot *slot = arg;
    int fds[3] = {slot->fds[0], slot->fds[1], slot->fds[2]};
    (void)munmap(shared, SHARED_BYTES);
    enter_bash(fds);
}

/*
 * S: a CLONE_VM child of T whose parent is the zygote, on the slot's stack, every signal blocked.
 * It shares T's memory (no copy of bash to make, fault in and tear down), so it runs supervise.c's
 * raw system calls only and writes nothing but its own slot (stack, scratch, struct supervisor).
 * It becomes the unit's supervisor, forks B and supervises it.
 */
static int start_unit(void *arg) {
    struct slot *slot = arg;
    int fds[3] = {slot->fds[0], slot->fds[1], slot->fds[2]};
    become_unit_supervisor(fds[0], fds[1], fds[2], slot->zygote);
    default_signals(HANDLED_MASK); /* not bash's: S waits for them (blocked) */
    long pid = fork_onto(b_stack + sizeof b_stack, start_bash, slot); /* a copy of T's memory */
    if (pid < 0) {
        static const char message[] = PROG ": cannot fork a shell unit\n";
        (void)sys3(SYS_write, fds[2], message, sizeof message - 1);
        (void)sys1(SYS_exit_group, EXIT_HELPER);
    }
    /* Named like every other supervisor, and like one, the signals other than the handled four
     * act by default (a K frame's signal ends it): none of bash's handlers may ever run here. */
    (void)sys2(SYS_prctl, PR_SET_NAME, PROG);
    default_signals(bash_set);
    block_only(HANDLED_MASK);
    close_inherited_fds();
    slot->sv.main_pid = (pid_t)pid;
    supervise(&slot->sv);
}

/* Starts one unit's supervisor; its pid, or -errno. */
static pid_t clone_unit(const int fds[3], pid_t zygote) {
    if (shared == NULL) {
        void *p = mmap(NULL, SHARED_BYTES, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return -errno;
        shared = p;
        slots = p;
    }
    size_t i = 0;
    while (i < MAX_SLOTS && __atomic_load_n(&slots[i].running, __ATOMIC_ACQUIRE) != 0) i++;
    if (i == MAX_SLOTS) return -EAGAIN; /* the zygote then forks a classic unit */
    struct slot *s = &slots[i];
    if (s->sv.mapped != NULL) (void)munmap(s->sv.mapped, s->sv.mapped_bytes); /* S was killed */
    char *base = shared + SLOTS_BYTES + i * SLOT_BYTES;
    s->sv = (struct supervisor){.scratch = base, .scratch_bytes = SCRATCH_BYTES};
    memcpy(s->fds, fds, sizeof s->fds);
    s->zygote = zygote;
    s->running = 1;
    /* Every signal blocked across the clone, so S starts with none of bash's handlers able to
     * run. CLONE_PARENT: S is the zygote's child, exactly like a unit it forks itself. */
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    pid_t pid = clone(start_unit, base + SLOT_BYTES, /* the stack grows down from the slot's end */
                      CLONE_VM | CLONE_PARENT | CLONE_CHILD_CLEARTID | SIGCHLD, s, NULL, NULL,
                      &s->running);
    int err = errno;
    sigprocmask(SIG_SETMASK, &bash_mask, NULL);
    if (pid > 0) return pid;
    s->running = 0;
    return -err;
}

/* T's loop: serves the zygote until it goes. */
static void serve(int sock, pid_t zygote) __attribute__((noreturn, noinline));
static void serve(int sock, pid_t zygote) {
    for (;;) {
        int fds[3];
        if (receive_unit(sock, fds) != 0) _exit(0);
        int32_t answer = clone_unit(fds, zygote);
        for (int i = 0; i < 3; i++) close(fds[i]);
        if (send(sock, &answer, sizeof answer, MSG_NOSIGNAL) != (ssize_t)sizeof answer) _exit(0);
    }
}

/* Whether this thread runs with a hardware shadow stack. */
static int shadow_stack_enabled(void) {
    unsigned long status = 0;
#if defined(__x86_64__)
    /* arch_prctl(ARCH_SHSTK_STATUS): bit 0, ARCH_SHSTK_SHSTK (Linux 6.6); EINVAL before. */
    return syscall(SYS_arch_prctl, 0x5005, &status) == 0 && (status & 1) != 0;
#else
    /* prctl(PR_GET_SHADOW_STACK_STATUS): bit 0, PR_SHADOW_STACK_ENABLE (Linux 6.13). */
    return prctl(74, &status, 0, 0, 0) == 0 && (status & 1) != 0;
#endif
}

/* `ahma_unit FD GRACE_MS`: serves the zygote on FD; returns only in a new unit's B. */
static int ahma_unit(WORD_LIST *list) {
    char *end = NULL;
    long sock = list != NULL ? strtol(list->word->word, &end, 10) : -1;
    if (end == NULL || *end != '\0' || sock < 0 || list->next == NULL) return EX_USAGE;
    long long grace = strtoll(list->next->word->word, &end, 10);
    if (*end != '\0' || grace < 0) return EX_USAGE;
    grace_ms = grace;

    if (template_pid != 0) {
        fputs("ahma_unit: only the template shell serves the pool\n", stderr);
        return EX_USAGE;
    }
    template_pid = getpid();
    /* Not dumpable: a sandboxed command (same user, same Landlock domain) cannot ptrace the
     * template (or a supervisor, which shares its memory) or take its descriptors (pidfd_getfd)
     * to forge answers. Load-bearing for the supervisors too: a core dump of a process stops
     * early when its memory is not dumpable; before Linux 5.16 it would otherwise kill every
     * process sharing that memory (T and all supervisors) when one supervisor dies of a
     * core-dumping signal (exit_like() dies of the command's own). */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        fputs("ahma_unit: cannot make the template non-dumpable\n", stderr);
        return EX_USAGE;
    }
    /* B leaves S's stack by a longjmp into T's frame: with a shadow stack (x86 CET, arm64 GCS)
     * S has one of its own, and that jump would fault in every unit. Classic units then. */
    if (shadow_stack_enabled()) {
        fputs("ahma_unit: shadow stacks are enabled: shell units start a bash each\n", stderr);
        return EX_USAGE;
    }
    sigprocmask(SIG_SETMASK, NULL, &bash_mask);
    for (int i = 0; i < HANDLED_SIGNAL_COUNT; i++)
        (void)sigaction(handled_signals[i], NULL, &bash_actions[i]);
    for (int sig = 1; sig <= 64; sig++) {
        struct sigaction action;
        if ((SIGNAL_BIT(sig) & HANDLED_MASK) == 0 && sigaction(sig, NULL, &action) == 0 &&
            action.sa_handler != SIG_DFL)
            bash_set |= SIGNAL_BIT(sig);
    }
    if (setjmp(into_bash) != 0) return EXECUTION_SUCCESS; /* in B, from enter_bash() */
    serve((int)sock, getppid());
}

static const char *const ahma_unit_doc[] = {
    "Serves the Ahma pool zygote on FD: clones a supervised shell unit for each request.",
    NULL,
};

__attribute__((visibility("default"))) struct builtin ahma_unit_struct = {
    "ahma_unit", ahma_unit, BUILTIN_ENABLED, ahma_unit_doc, "ahma_unit FD GRACE_MS", NULL,
};

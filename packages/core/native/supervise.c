/*
 * Supervision (SPEC §3: no orphan survives an operation). The helper is a child subreaper, so
 * everything the command leaves behind (background jobs, `setsid` daemons) re-parents to it; the
 * supervisor reaps, scans /proc for descendants and ends the whole tree when the command ends or
 * when it is told to stop, then exits the way the command ended. Also the descriptor, signal and
 * exec helpers that the forks of both modes (one command, pool units) share.
 */
#define _GNU_SOURCE

#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

int64_t grace_ms = 2000;

/*
 * Reaps every exited child: our own, and the orphans of the tree that re-parented to us.
 * Returns 0 when no child is left at all. As a subreaper that also means no descendant is left:
 * a live descendant's chain of parents always ends at a child of ours, because a dying process
 * hands its children to us before it becomes a zombie we can reap.
 */
static int reap_all(struct supervisor *sv) {
    for (;;) {
        int status = 0;
        pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
        if (pid == 0) return 1;
        if (pid < 0) return errno != ECHILD;
        if (pid == sv->main_pid) {
            sv->main_status = status;
            sv->main_done = 1;
        }
        if (pid == sv->relay_pid) sv->relay_done = 1;
    }
}

/* Waits up to ms for a SIGCHLD (other blocked signals stay pending and are ignored). */
static void wait_for_child_signal(int64_t ms) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    (void)sigtimedwait(&set, NULL, &ts);
}

/* The processes of the system, from /proc, sorted by pid. */
struct proc_entry {
    pid_t pid;
    pid_t ppid;
    int descendant;
};
struct proc_table {
    struct proc_entry *v;
    size_t n, cap;
};

static int table_add(struct proc_table *t, pid_t pid, pid_t ppid) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        struct proc_entry *grown = realloc(t->v, cap * sizeof *grown);
        if (grown == NULL) return -1;
        t->v = grown;
        t->cap = cap;
    }
    t->v[t->n++] = (struct proc_entry){.pid = pid, .ppid = ppid};
    return 0;
}

static int by_pid(const void *a, const void *b) {
    pid_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;
    return (x > y) - (x < y);
}

static struct proc_entry *find_proc(const struct proc_table *t, pid_t pid) {
    struct proc_entry key = {.pid = pid};
    return bsearch(&key, t->v, t->n, sizeof key, by_pid);
}

static int pid_listed(pid_t pid, const pid_t *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == pid) return 1;
    return 0;
}

/* The parent of the process named `name` in the /proc directory dir, from its stat; -1 if none. */
static pid_t read_ppid(int dir, const char *name) {
    char path[64];
    snprintf(path, sizeof path, "%s/stat", name);
    int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[512];
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) return -1;
    buf[len] = '\0';
    /* "pid (comm) state ppid ...": comm may contain spaces and ')', so parse after the last ')' */
    const char *p = strrchr(buf, ')');
    int ppid;
    char state;
    if (p == NULL || sscanf(p + 1, " %c %d", &state, &ppid) != 2) return -1;
    return ppid;
}

/* Reads every process's parent from /proc into t. -1 when /proc cannot be read at all. */
static int scan_proc(struct proc_table *t) {
    DIR *dir = opendir("/proc");
    if (dir == NULL) return -1;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
        pid_t ppid = read_ppid(dirfd(dir), entry->d_name);
        if (ppid >= 0 && table_add(t, (pid_t)pid, ppid) != 0) break;
    }
    closedir(dir);
    return 0;
}

size_t signal_descendants_except(struct supervisor *sv, int sig, const pid_t *except,
                                 size_t nexcept) {
    struct proc_table t = {0};
    if (scan_proc(&t) != 0) {
        if (sig == SIGTERM) fputs(PROG ": cannot scan /proc: only the command is signalled\n", stderr);
        free(t.v);
        if (sv == NULL || sv->main_done || sv->main_pid <= 0) return 0; /* never kill(-1, sig) */
        if (sig != 0) (void)kill(sv->main_pid, sig);
        return 1;
    }

    qsort(t.v, t.n, sizeof *t.v, by_pid);
    pid_t self = getpid();
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < t.n; i++) {
            if (t.v[i].descendant || pid_listed(t.v[i].pid, except, nexcept)) continue;
            struct proc_entry *parent = NULL;
            if (t.v[i].ppid == self ||
                ((parent = find_proc(&t, t.v[i].ppid)) != NULL && parent->descendant)) {
                t.v[i].descendant = 1;
                changed = 1;
            }
        }
    }

    size_t count = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (!t.v[i].descendant) continue;
        count++;
        if (sig != 0) {
            (void)kill(t.v[i].pid, sig);
            if (sig == SIGTERM) (void)kill(t.v[i].pid, SIGCONT); /* stopped: wake */
        }
    }
    free(t.v);
    return count;
}

void terminate_tree(struct supervisor *sv) {
    if (!reap_all(sv)) return; /* the common case: the command left nothing behind, no /proc scan */
    /* A terminal's relay is spared: it ends by itself once the terminal's last output is read. */
    const pid_t *spare = sv->relay_pid > 0 && !sv->relay_done ? &sv->relay_pid : NULL;
    size_t nspare = spare == NULL ? 0 : 1;
    if (signal_descendants_except(sv, SIGTERM, spare, nspare) == 0) return;
    int64_t deadline = now_ms() + grace_ms;
    for (;;) {
        if (!reap_all(sv) || signal_descendants_except(sv, 0, spare, nspare) == 0) return;
        int64_t left = deadline - now_ms();
        if (left <= 0) break;
        /* Grandchildren exit without telling us, so poll as well as waiting for SIGCHLD. */
        wait_for_child_signal(left < 20 ? left : 20);
    }
    for (;;) {
        if (!reap_all(sv) || signal_descendants_except(sv, SIGKILL, spare, nspare) == 0) return;
        wait_for_child_signal(10);
    }
}

/* The relay drains what the terminal still holds, then ends; one that does not is killed. */
static void wait_for_relay(struct supervisor *sv) {
    if (sv->relay_pid <= 0) return;
    int64_t deadline = now_ms() + 1000 + grace_ms;
    while (!sv->relay_done) {
        reap_all(sv);
        int64_t left = deadline - now_ms();
        if (sv->relay_done) break;
        if (left <= 0) {
            (void)kill(sv->relay_pid, SIGKILL);
            (void)waitpid(sv->relay_pid, NULL, __WALL);
            break;
        }
        wait_for_child_signal(left < 20 ? left : 20);
    }
}

/* Ends this process the way the command ended: same exit code, or death by the same signal. */
static void exit_like(int status) __attribute__((noreturn));
static void exit_like(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit no_core = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &no_core); /* the command's core, not ours */
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        (void)sigprocmask(SIG_UNBLOCK, &set, NULL);
        (void)kill(getpid(), sig);
        _exit(128 + sig); /* a signal whose default action does not terminate */
    }
    _exit(EXIT_HELPER);
}

/* Closes every descriptor in [lo, hi]. close_range(2) is Linux >= 5.9; older kernels loop. */
void close_fd_range(unsigned lo, unsigned hi) {
    if (lo > hi) return;
    if (syscall(436 /* SYS_close_range */, lo, hi, 0) == 0) return;
    struct rlimit lim = {0, 0};
    unsigned long max = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 0;
    if (max == 0 || max > 65536) max = 65536;
    for (unsigned long fd = lo; fd < max && fd <= hi; fd++) (void)close((int)fd);
}

void close_inherited_fds(void) { close_fd_range(3, ~0U); }

void close_fds_except(int a, int b, int c) {
    int keep[3] = {a, b, c};
    for (int i = 1; i < 3; i++) /* sort */
        for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
            int t = keep[j];
            keep[j] = keep[j - 1];
            keep[j - 1] = t;
        }
    unsigned next = 3;
    for (int i = 0; i < 3; i++) {
        if (keep[i] < (int)next) continue;
        close_fd_range(next, (unsigned)keep[i] - 1);
        next = (unsigned)keep[i] + 1;
    }
    close_fd_range(next, ~0U);
}

/*
 * The start of a pool unit's supervisor S (zygote.c): drop every descriptor but the unit's own
 * (protocol channels, the zygote's signalfd, other units' descriptors: nothing of it may reach a
 * command), stdin and stdout on /dev/null, a session of its own, child subreaper, SIGTERM when the
 * zygote dies. Exits 125 when any of it fails or the zygote (parent) is already gone.
 */
void become_unit_supervisor(int go_r, int body, int out_w, pid_t parent) {
    close_fds_except(go_r, body, out_w);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0) {
        dprintf(out_w, PROG ": cannot open /dev/null for a unit: %s\n", strerror(errno));
        _exit(EXIT_HELPER);
    }
    close(null);
    (void)setsid(); /* own session and process group: S and B, not the zygote */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) {
        dprintf(out_w, PROG ": prctl failed for a unit: %s\n", strerror(errno));
        _exit(EXIT_HELPER);
    }
    if (getppid() != parent) _exit(EXIT_HELPER); /* the zygote is already gone */
}

/*
 * In a shell unit's B: output on fds 1 and 2, the go pipe on fd 3, the request memfd on fd 4
 * (through copies above fd 4, so no dup2 clobbers a source), nothing else.
 */
void give_shell_unit_fds(int go_r, int body, int out_w) {
    /* Both copied above 4 before either is moved: go_r or body may itself be fd 3 or 4. */
    int go_copy = fcntl(go_r, F_DUPFD, 5), body_copy = fcntl(body, F_DUPFD, 5);
    if (out_w != STDOUT_FILENO) (void)dup2(out_w, STDOUT_FILENO);
    if (out_w != STDERR_FILENO) (void)dup2(out_w, STDERR_FILENO);
    (void)dup2(go_copy, 3);
    (void)dup2(body_copy, 4);
    close_fd_range(5, ~0U);
}

void default_signals(uint64_t set) {
    for (int sig = 1; sig < NSIG && sig <= 64; sig++)
        if ((set & SIGNAL_BIT(sig)) && sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
}

void block_only(uint64_t set) {
    sigset_t mask;
    sigemptyset(&mask);
    for (int sig = 1; sig < NSIG && sig <= 64; sig++)
        if (set & SIGNAL_BIT(sig)) sigaddset(&mask, sig);
    (void)sigprocmask(SIG_SETMASK, &mask, NULL);
}

/* Runs argv, or reports why not on stderr and exits 127 (not found) or 126 (cannot execute). */
void exec_command(char *const argv[]) {
    execvp(argv[0], argv);
    int err = errno;
    dprintf(STDERR_FILENO, PROG ": cannot run %s: %s\n", argv[0], strerror(err));
    _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

/* What a command must start with: default dispositions and nothing blocked. */
void reset_signals(void) {
    default_signals(~0ULL);
    block_only(0);
}

/*
 * Termination requests and SIGCHLD are handled synchronously (sigtimedwait in a supervisor, a
 * signalfd in the zygote). Blocking them early means a SIGTERM that arrives during setup is not
 * lost: it stays pending. SIG_IGN inherited from our parent would make the kernel auto-reap
 * children: reset first. Forked supervisors inherit the mask.
 */
const int handled_signals[HANDLED_SIGNAL_COUNT] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP};
sigset_t handled_set;

void block_handled_signals(void) {
    default_signals(HANDLED_MASK);
    sigemptyset(&handled_set);
    for (size_t i = 0; i < HANDLED_SIGNAL_COUNT; i++) sigaddset(&handled_set, handled_signals[i]);
    sigprocmask(SIG_BLOCK, &handled_set, NULL);
}

void supervise(struct supervisor *sv) {
    for (;;) {
        reap_all(sv);
        if (sv->main_done) break;
        int sig = sigwaitinfo(&handled_set, NULL);
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) break;
    }
    /* The command ended (kill what it left behind) or we were told to stop (kill everything). */
    terminate_tree(sv);
    wait_for_relay(sv);
    while (!sv->main_done) { /* cannot happen: terminate_tree() reaps the whole tree */
        int status = 0;
        pid_t pid = waitpid(sv->main_pid, &status, __WALL);
        if (pid == sv->main_pid) {
            sv->main_status = status;
            sv->main_done = 1;
        } else if (errno != EINTR) {
            fputs(PROG ": lost track of the command\n", stderr);
            _exit(EXIT_HELPER);
        }
    }
    exit_like(sv->main_status);
}

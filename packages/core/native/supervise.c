/*
 * Supervision (SPEC §3: no orphan survives an operation). The helper is a child subreaper, so
 * everything the command leaves behind (background jobs, `setsid` daemons) re-parents to it; the
 * supervisor reaps, scans /proc for descendants and ends the whole tree when the command ends or
 * when it is told to stop, then exits the way the command ended. Also the descriptor, signal and
 * exec helpers that the forks of both modes (one command, pool units) share.
 *
 * Everything a supervisor runs makes raw system calls (sys.h) and keeps its state in its struct
 * supervisor and on its stack: see supervise.h for why. The exceptions, marked, run only in a
 * process about to exec.
 */
#define _GNU_SOURCE

#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "sys.h"

int64_t grace_ms = 2000;

#define KERNEL_SIGSET_BYTES 8
static const uint64_t handled_mask = HANDLED_MASK;

/* The kernel's struct sigaction on x86_64 and aarch64; all zero is SIG_DFL. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

/* "ahma-sandbox: WHAT\n" on fd, in one write. */
static void say(int fd, const char *what) {
    char line[160];
    size_t n = 0;
    for (const char *p = PROG ": "; *p != '\0'; p++) line[n++] = *p;
    for (const char *p = what; *p != '\0' && n < sizeof line - 1; p++) line[n++] = *p;
    line[n++] = '\n';
    (void)sys3(SYS_write, fd, line, n);
}

static void exit_now(int code) __attribute__((noreturn));
static void exit_now(int code) {
    for (;;) (void)sys1(SYS_exit_group, code);
}

/*
 * Reaps every exited child: our own, and the orphans of the tree that re-parented to us.
 * Returns 0 when no child is left at all. As a subreaper that also means no descendant is left:
 * a live descendant's chain of parents always ends at a child of ours, because a dying process
 * hands its children to us before it becomes a zombie we can reap.
 */
static int reap_all(struct supervisor *sv) {
    for (;;) {
        int status = 0;
        long pid = sys4(SYS_wait4, -1, &status, WNOHANG | __WALL, 0);
        if (pid == 0) return 1;
        if (pid < 0) return pid != -ECHILD;
        if (pid == sv->main_pid) {
            sv->main_status = status;
            sv->main_done = 1;
        }
    }
}

/* Waits up to ms for a SIGCHLD (other blocked signals stay pending and are ignored). */
static void wait_for_child_signal(int64_t ms) {
    uint64_t set = SIGNAL_BIT(SIGCHLD);
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    (void)sys4(SYS_rt_sigtimedwait, &set, 0, &ts, KERNEL_SIGSET_BYTES);
}

/* The processes of the system, from /proc: in the supervisor's scratch memory, or in memory mapped
 * for one scan (no malloc). */
struct proc_entry {
    pid_t pid;
    pid_t ppid;
    int descendant;
};
struct proc_table {
    struct proc_entry *v;
    size_t n, cap;
    struct supervisor *owner; /* NULL: no scratch, and nobody to tell about the mapping */
};

static int in_scratch(const struct proc_table *t) {
    return t->owner != NULL && t->v != NULL && (void *)t->v == t->owner->scratch;
}

static int table_add(struct proc_table *t, pid_t pid, pid_t ppid) {
    if (t->n == t->cap) {
        struct supervisor *sv = t->owner;
        if (t->v == NULL && sv != NULL && sv->scratch_bytes >= 64 * sizeof *t->v) {
            t->v = sv->scratch;
            t->cap = sv->scratch_bytes / sizeof *t->v;
        } else {
            size_t cap = t->cap < 2048 ? 4096 : t->cap * 2, bytes = cap * sizeof *t->v;
            long p = t->v == NULL || in_scratch(t)
                         ? sys6(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                         : sys5(SYS_mremap, t->v, t->cap * sizeof *t->v, bytes, MREMAP_MAYMOVE, 0);
            if (p < 0 && p > -4096) return -1;
            struct proc_entry *grown = (struct proc_entry *)p;
            if (in_scratch(t))
                for (size_t i = 0; i < t->n; i++) grown[i] = t->v[i];
            t->v = grown;
            t->cap = cap;
            if (sv != NULL) {
                sv->mapped = grown;
                sv->mapped_bytes = bytes;
            }
        }
    }
    t->v[t->n++] = (struct proc_entry){.pid = pid, .ppid = ppid};
    return 0;
}

/* Unmaps a mapped table; gives the pages of a scratch table back (shared memory: MADV_REMOVE). */
static void table_free(struct proc_table *t) {
    if (t->v == NULL) return;
    if (in_scratch(t)) {
        if (sys3(SYS_madvise, t->v, t->n * sizeof *t->v, MADV_REMOVE) != 0)
            (void)sys3(SYS_madvise, t->v, t->n * sizeof *t->v, MADV_DONTNEED);
        return;
    }
    (void)sys2(SYS_munmap, t->v, t->cap * sizeof *t->v);
    if (t->owner != NULL) t->owner->mapped = NULL;
}

static void sift_down(struct proc_entry *v, size_t root, size_t n) {
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && v[child + 1].pid > v[child].pid) child++;
        if (v[root].pid >= v[child].pid) return;
        struct proc_entry t = v[root];
        v[root] = v[child];
        v[child] = t;
    }
}

/* Heapsort by pid: in place, no allocation. */
static void sort_by_pid(struct proc_entry *v, size_t n) {
    for (size_t i = n / 2; i-- > 0;) sift_down(v, i, n);
    for (size_t end = n; end-- > 1;) {
        struct proc_entry t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
}

static struct proc_entry *find_proc(const struct proc_table *t, pid_t pid) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].pid == pid) return &t->v[mid];
        if (t->v[mid].pid < pid) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static int pid_listed(pid_t pid, const pid_t *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == pid) return 1;
    return 0;
}

/* The parent of the process named `name` in the /proc directory dir, from its stat; -1 if none. */
static pid_t read_ppid(int dir, const char *name) {
    char path[32];
    size_t n = 0;
    while (name[n] != '\0' && n < sizeof path - sizeof "/stat") path[n] = name[n], n++;
    memcpy(path + n, "/stat", sizeof "/stat");
    long fd = sys4(SYS_openat, dir, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return -1;
    char buf[512];
    long len = sys3(SYS_read, fd, buf, sizeof buf - 1);
    (void)sys1(SYS_close, fd);
    if (len <= 0) return -1;
    /* "pid (comm) state ppid ...": comm may contain spaces and ')', so parse after the last ')' */
    const char *p = NULL;
    for (long i = len - 1; i >= 0 && p == NULL; i--)
        if (buf[i] == ')') p = buf + i + 1;
    const char *end = buf + len;
    if (p == NULL || end - p < 4 || p[0] != ' ' || p[2] != ' ') return -1;
    p += 3;
    pid_t ppid = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) ppid = ppid * 10 + (*p - '0');
    return ppid;
}

/* Reads every process's parent from /proc into t. -1 when /proc cannot be read at all. */
static int scan_proc(struct proc_table *t) {
    long dir = sys4(SYS_openat, AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dir < 0) return -1;
    char buf[4096] __attribute__((aligned(8)));
    long got;
    while ((got = sys3(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
        for (long off = 0; off < got;) {
            /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *name = buf + off + 19;
            off += reclen;
            pid_t pid = 0;
            const char *c = name;
            for (; *c >= '0' && *c <= '9'; c++) pid = pid * 10 + (*c - '0');
            if (c == name || *c != '\0' || pid <= 0) continue;
            pid_t ppid = read_ppid((int)dir, name);
            if (ppid >= 0 && table_add(t, pid, ppid) != 0) break;
        }
    }
    (void)sys1(SYS_close, dir);
    return 0;
}

size_t signal_descendants_except(struct supervisor *sv, int sig, const pid_t *except,
                                 size_t nexcept) {
    struct proc_table t = {.owner = sv};
    if (scan_proc(&t) != 0) {
        if (sig == SIGTERM) say(STDERR_FILENO, "cannot scan /proc: only the command is signalled");
        if (sv == NULL || sv->main_done || sv->main_pid <= 0) return 0; /* never kill(-1, sig) */
        if (sig != 0) (void)sys2(SYS_kill, sv->main_pid, sig);
        return 1;
    }

    sort_by_pid(t.v, t.n);
    pid_t self = (pid_t)sys0(SYS_getpid);
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
            (void)sys2(SYS_kill, t.v[i].pid, sig);
            if (sig == SIGTERM) (void)sys2(SYS_kill, t.v[i].pid, SIGCONT); /* stopped: wake */
        }
    }
    table_free(&t);
    return count;
}

void terminate_tree(struct supervisor *sv) {
    if (!reap_all(sv)) return; /* the common case: the command left nothing behind, no /proc scan */
    if (signal_descendants_except(sv, SIGTERM, NULL, 0) == 0) return;
    int64_t deadline = now_ms() + grace_ms;
    for (;;) {
        if (!reap_all(sv) || signal_descendants_except(sv, 0, NULL, 0) == 0) return;
        int64_t left = deadline - now_ms();
        if (left <= 0) break;
        /* Grandchildren exit without telling us, so poll as well as waiting for SIGCHLD. */
        wait_for_child_signal(left < 20 ? left : 20);
    }
    for (;;) {
        if (!reap_all(sv) || signal_descendants_except(sv, SIGKILL, NULL, 0) == 0) return;
        wait_for_child_signal(10);
    }
}

/*
 * Ends this process the way the command ended: same exit code, or death by the same signal. No
 * exit handlers, no stdio: the supervisor has nothing buffered.
 */
static void exit_like(int status) __attribute__((noreturn));
static void exit_like(int status) {
    if (WIFEXITED(status)) exit_now(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit no_core = {0, 0};
        (void)sys4(SYS_prlimit64, 0, RLIMIT_CORE, &no_core, 0); /* the command's core, not ours */
        struct kernel_sigaction dfl = {0};
        (void)sys4(SYS_rt_sigaction, sig, &dfl, 0, KERNEL_SIGSET_BYTES);
        uint64_t set = SIGNAL_BIT(sig);
        (void)sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, 0, KERNEL_SIGSET_BYTES);
        (void)sys2(SYS_kill, sys0(SYS_getpid), sig);
        exit_now(128 + sig); /* a signal whose default action does not terminate */
    }
    exit_now(EXIT_HELPER);
}

/* Closes every descriptor in [lo, hi]. close_range(2) is Linux >= 5.9; older kernels loop. */
void close_fd_range(unsigned lo, unsigned hi) {
    if (lo > hi) return;
    if (sys3(436 /* SYS_close_range */, lo, hi, 0) == 0) return;
    struct rlimit lim = {0, 0};
    unsigned long max = sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, &lim) == 0 ? lim.rlim_cur : 0;
    if (max == 0 || max > 65536) max = 65536;
    for (unsigned long fd = lo; fd < max && fd <= hi; fd++) (void)sys1(SYS_close, fd);
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
 * The start of a pool unit's supervisor S (zygote.c, ahma-unit.c): drop every descriptor but the
 * unit's own (protocol channels, the zygote's signalfd, other units' descriptors: nothing of it
 * may reach a command), stdin and stdout on /dev/null, a session of its own, child subreaper,
 * SIGTERM when the zygote dies. Exits 125 when any of it fails or the zygote (parent) is already
 * gone.
 */
void become_unit_supervisor(int go_r, int body, int out_w, pid_t parent) {
    close_fds_except(go_r, body, out_w);
    long null = sys4(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC, 0);
    if (null < 0 || sys3(SYS_dup3, null, STDIN_FILENO, 0) < 0 ||
        sys3(SYS_dup3, null, STDOUT_FILENO, 0) < 0) {
        say(out_w, "cannot open /dev/null for a unit");
        exit_now(EXIT_HELPER);
    }
    (void)sys1(SYS_close, null);
    (void)sys0(SYS_setsid); /* own session and process group: S and B, not the zygote */
    if (sys2(SYS_prctl, PR_SET_CHILD_SUBREAPER, 1) != 0 ||
        sys2(SYS_prctl, PR_SET_PDEATHSIG, SIGTERM) != 0) {
        say(out_w, "prctl failed for a unit");
        exit_now(EXIT_HELPER);
    }
    if (sys0(SYS_getppid) != parent) exit_now(EXIT_HELPER); /* the zygote is already gone */
}

/*
 * In a shell unit's B: output on fds 1 and 2, the go pipe on fd 3, the request memfd on fd 4
 * (through copies above fd 4, so no dup3 clobbers a source), nothing else.
 */
void give_shell_unit_fds(int go_r, int body, int out_w) {
    /* Both copied above 4 before either is moved: go_r or body may itself be fd 3 or 4. */
    long go_copy = sys3(SYS_fcntl, go_r, F_DUPFD, 5), body_copy = sys3(SYS_fcntl, body, F_DUPFD, 5);
    if (out_w != STDOUT_FILENO) (void)sys3(SYS_dup3, out_w, STDOUT_FILENO, 0);
    if (out_w != STDERR_FILENO) (void)sys3(SYS_dup3, out_w, STDERR_FILENO, 0);
    (void)sys3(SYS_dup3, go_copy, 3, 0);
    (void)sys3(SYS_dup3, body_copy, 4, 0);
    close_fd_range(5, ~0U);
}

void default_signals(uint64_t set) {
    struct kernel_sigaction dfl = {0};
    for (int sig = 1; sig <= 64; sig++)
        if (set & SIGNAL_BIT(sig)) (void)sys4(SYS_rt_sigaction, sig, &dfl, 0, KERNEL_SIGSET_BYTES);
}

void block_only(uint64_t set) {
    (void)sys4(SYS_rt_sigprocmask, SIG_SETMASK, &set, 0, KERNEL_SIGSET_BYTES);
}

/* Runs argv, or reports why not on stderr and exits 127 (not found) or 126 (cannot execute).
 * C library: only in a fork of its own, about to exec. */
void exec_command(char *const argv[]) {
    execvp(argv[0], argv);
    int err = errno;
    dprintf(STDERR_FILENO, PROG ": cannot run %s: %s\n", argv[0], strerror(err));
    _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

/* What a command must start with: default dispositions and nothing blocked. */
void reset_signals(void) {
    default_signals(~(SIGNAL_BIT(SIGKILL) | SIGNAL_BIT(SIGSTOP)));
    block_only(0);
}

/*
 * Termination requests and SIGCHLD are handled synchronously (sigtimedwait in a supervisor, a
 * signalfd in the zygote). Blocking them early means a SIGTERM that arrives during setup is not
 * lost: it stays pending. SIG_IGN inherited from our parent would make the kernel auto-reap
 * children: reset first. Forked supervisors inherit the mask. C library: main() only.
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
        long sig = sys4(SYS_rt_sigtimedwait, &handled_mask, 0, 0, KERNEL_SIGSET_BYTES);
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) break;
    }
    /* The command ended (kill what it left behind) or we were told to stop (kill everything). */
    terminate_tree(sv);
    while (!sv->main_done) { /* cannot happen: terminate_tree() reaps the whole tree */
        int status = 0;
        long pid = sys4(SYS_wait4, sv->main_pid, &status, __WALL, 0);
        if (pid == sv->main_pid) {
            sv->main_status = status;
            sv->main_done = 1;
        } else if (pid != -EINTR) {
            say(STDERR_FILENO, "lost track of the command");
            exit_now(EXIT_HELPER);
        }
    }
    exit_like(sv->main_status);
}

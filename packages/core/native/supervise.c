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

pid_t main_pid = -1;
static int main_status;
static int main_done;
int64_t grace_ms = 2000;

/*
 * Reaps every exited child: our own, and the orphans of the tree that re-parented to us.
 * Returns 0 when no child is left at all. As a subreaper that also means no descendant is left:
 * a live descendant's chain of parents always ends at a child of ours, because a dying process
 * hands its children to us before it becomes a zombie we can reap.
 */
static int reap_all(void) {
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
        if (pid == 0) return 1;
        if (pid < 0) return errno != ECHILD;
        if (pid == main_pid) {
            main_status = status;
            main_done = 1;
        }
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

struct proc_entry {
    pid_t pid;
    pid_t ppid;
    int descendant;
};

static struct proc_entry *procs;
static size_t procs_cap;

static int compare_pid(const void *a, const void *b) {
    pid_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;
    return (x > y) - (x < y);
}

static struct proc_entry *find_proc(pid_t pid, size_t n) {
    struct proc_entry key = {.pid = pid};
    return bsearch(&key, procs, n, sizeof *procs, compare_pid);
}

static int pid_listed(pid_t pid, const pid_t *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == pid) return 1;
    return 0;
}

/*
 * Sends sig (0: none) to every descendant of this process, found through the ppid field of
 * /proc/PID/stat, and returns how many there are, zombies included: they still have to be reaped.
 * The processes in except, and everything below them, are left alone (the zygote's live units).
 */
size_t signal_descendants_except(int sig, const pid_t *except, size_t nexcept) {
    static int warned;
    DIR *dir = opendir("/proc");
    if (dir == NULL) {
        if (!warned++)
            fprintf(stderr, PROG ": cannot scan /proc (%s): only the command itself is signalled\n",
                    strerror(errno));
        if (main_done || main_pid <= 0) return 0; /* never kill(-1, sig) */
        if (sig != 0) kill(main_pid, sig);
        return 1;
    }
    size_t n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        char *digits_end;
        long pid = strtol(entry->d_name, &digits_end, 10);
        if (pid <= 0 || *digits_end != '\0') continue;
        char path[32], buf[512];
        snprintf(path, sizeof path, "%ld/stat", pid);
        int fd = openat(dirfd(dir), path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t len = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (len <= 0) continue;
        buf[len] = '\0';
        /* "pid (comm) state ppid ...": comm may contain spaces and ')', so parse after the last ')' */
        char *end = strrchr(buf, ')');
        char state;
        int ppid;
        if (end == NULL || sscanf(end + 1, " %c %d", &state, &ppid) != 2) continue;
        if (n == procs_cap) {
            size_t cap = procs_cap ? procs_cap * 2 : 1024;
            struct proc_entry *grown = realloc(procs, cap * sizeof *procs);
            if (grown == NULL) break;
            procs = grown;
            procs_cap = cap;
        }
        procs[n++] = (struct proc_entry){.pid = (pid_t)pid, .ppid = ppid, .descendant = 0};
    }
    closedir(dir);

    qsort(procs, n, sizeof *procs, compare_pid);
    pid_t self = getpid();
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            if (procs[i].descendant || pid_listed(procs[i].pid, except, nexcept)) continue;
            struct proc_entry *parent = NULL;
            if (procs[i].ppid == self || ((parent = find_proc(procs[i].ppid, n)) && parent->descendant)) {
                procs[i].descendant = 1;
                changed = 1;
            }
        }
    }

    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!procs[i].descendant) continue;
        count++;
        if (sig != 0) {
            kill(procs[i].pid, sig);
            if (sig == SIGTERM) kill(procs[i].pid, SIGCONT); /* a stopped process must see it */
        }
    }
    return count;
}

static size_t signal_descendants(int sig) { return signal_descendants_except(sig, NULL, 0); }

/* SIGTERM to the whole tree, up to grace_ms for it to exit, then SIGKILL until nothing is left. */
void terminate_tree(void) {
    if (!reap_all()) return; /* the common case: the command left nothing behind, no /proc scan */
    if (signal_descendants(SIGTERM) == 0) return;
    int64_t deadline = now_ms() + grace_ms;
    for (;;) {
        if (!reap_all() || signal_descendants(0) == 0) return;
        int64_t left = deadline - now_ms();
        if (left <= 0) break;
        /* Grandchildren exit without telling us, so poll as well as waiting for SIGCHLD. */
        wait_for_child_signal(left < 20 ? left : 20);
    }
    for (;;) {
        if (!reap_all() || signal_descendants(SIGKILL) == 0) return;
        wait_for_child_signal(10);
    }
}

/*
 * Ends this process the way the command ended: same exit code, or death by the same signal. The
 * supervisor has no buffered output (stdio was flushed before the fork), so _exit: no exit
 * handlers, and no copy-on-write faults in stdio's state on every command's way out.
 */
static void exit_like(int status) __attribute__((noreturn));
static void exit_like(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit no_core = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &no_core); /* the command may have dumped core; we must not */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        kill(getpid(), sig); /* not raise(): glibc's cached thread id is stale after a raw clone */
        _exit(128 + sig); /* a signal whose default action does not terminate */
    }
    _exit(EXIT_HELPER);
}

/* Closes every descriptor in [lo, hi]. close_range(2) is Linux >= 5.9; older kernels loop. */
void close_fd_range(unsigned lo, unsigned hi) {
    if (lo > hi) return;
    if (syscall(436 /* __NR_close_range */, lo, hi, 0U) == 0) return;
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (long fd = (long)lo; fd < max && (unsigned long)fd <= (unsigned long)hi; fd++)
        close((int)fd);
}

void close_inherited_fds(void) { close_fd_range(3, ~0U); }

/* Closes every descriptor >= 3 except a, b and c (-1: none). */
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
 * command), stdin and stdout on /dev/null, a session of its own, child subreaper, SIGTERM when
 * the zygote dies. Exits 125 when any of it fails or the zygote (parent) is already gone.
 */
void become_unit_supervisor(int go_r, int body, int out_w, pid_t parent) {
    close_fds_except(go_r, body, out_w);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0) {
        dprintf(out_w, PROG ": cannot open /dev/null: %s\n", strerror(errno));
        _exit(EXIT_HELPER);
    }
    if (null > STDERR_FILENO) close(null);
    (void)setsid(); /* own session and process group: S and B, not the zygote */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) {
        dprintf(out_w, PROG ": prctl: %s\n", strerror(errno));
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
    (void)dup2(out_w, STDOUT_FILENO);
    (void)dup2(out_w, STDERR_FILENO);
    (void)dup2(go_copy, 3);
    (void)dup2(body_copy, 4);
    close_fd_range(5, ~0U);
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
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) (void)sigaction(sig, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * Termination requests and SIGCHLD are handled synchronously (sigwaitinfo() in a supervisor, a
 * signalfd in the zygote). Blocking them early means a SIGTERM that arrives during setup is not
 * lost: it stays pending. SIG_IGN inherited from our parent would make the kernel auto-reap
 * children: reset first. Forked supervisors inherit the mask.
 */
const int handled_signals[HANDLED_SIGNAL_COUNT] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP};
sigset_t handled_set;

void block_handled_signals(void) {
    sigemptyset(&handled_set);
    for (size_t i = 0; i < HANDLED_SIGNAL_COUNT; i++) {
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(handled_signals[i], &dfl, NULL);
        sigaddset(&handled_set, handled_signals[i]);
    }
    sigprocmask(SIG_BLOCK, &handled_set, NULL);
}

/*
 * The supervisor: waits until the command (main_pid) ends or a termination request arrives, ends
 * whatever is left of the tree (the command's leftovers, or everything), then exits the way the
 * command ended. Expects handled_set blocked and this process to be a child subreaper.
 */
void supervise(void) {
    for (;;) {
        reap_all();
        if (main_done) break;
        int sig = sigwaitinfo(&handled_set, NULL);
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) break;
    }
    /* The command ended (kill what it left behind) or we were told to stop (kill everything). */
    terminate_tree();
    while (!main_done) { /* cannot happen: terminate_tree() reaps the whole tree */
        if (waitpid(main_pid, &main_status, __WALL) == main_pid) main_done = 1;
        else if (errno != EINTR) die(EXIT_HELPER, "lost track of the command: %s", strerror(errno));
    }
    exit_like(main_status);
}

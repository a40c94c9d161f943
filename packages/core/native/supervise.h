/*
 * Process supervision (SPEC §3): the supervisor that outlives the command and ends its whole tree,
 * and the descriptor, signal and exec helpers its forks share. Used by the one-command mode
 * (ahma-sandbox.c) and by every unit of the pool zygote (zygote.c).
 */
#ifndef AHMA_SANDBOX_SUPERVISE_H
#define AHMA_SANDBOX_SUPERVISE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* --grace-ms: how long the tree has between SIGTERM and SIGKILL. Set once, before any fork. */
extern int64_t grace_ms;
/* SIGCHLD and the termination requests, blocked by block_handled_signals(). */
extern sigset_t handled_set;
#define HANDLED_SIGNAL_COUNT 4
/* The same signals, as a list. */
extern const int handled_signals[HANDLED_SIGNAL_COUNT];

/* One supervisor's state: the command it waits for, and how that ended. */
struct supervisor {
    pid_t main_pid;
    int main_status;
    int main_done;
    /* --pty: the terminal's relay (pty.c), spared by terminate_tree and waited for; 0: none. */
    pid_t relay_pid;
    int relay_done;
};

/*
 * Sends sig (0: none) to every descendant except those in except and below them; returns how many
 * there are, zombies included. sv: the supervisor whose command is signalled when /proc cannot
 * be read, or NULL.
 */
size_t signal_descendants_except(struct supervisor *sv, int sig, const pid_t *except,
                                 size_t nexcept);

/* SIGTERM to the whole tree, up to grace_ms for it to exit, then SIGKILL until nothing is left. */
void terminate_tree(struct supervisor *sv);

/* Closes every descriptor in [lo, hi]. */
void close_fd_range(unsigned lo, unsigned hi);
/* Closes every descriptor >= 3. */
void close_inherited_fds(void);
/* Closes every descriptor >= 3 except a, b and c (-1: none). */
void close_fds_except(int a, int b, int c);

/*
 * The start of a pool unit's supervisor S: only the unit's descriptors, stdin and stdout on
 * /dev/null, own session, child subreaper, SIGTERM on the parent's death; exits 125 on failure or
 * when the parent is no longer `parent`.
 */
void become_unit_supervisor(int go_r, int body, int out_w, pid_t parent);
/* In a shell unit's B: output on fds 1 and 2, go pipe on 3, request memfd on 4, nothing else. */
void give_shell_unit_fds(int go_r, int body, int out_w);
/* Signal sets as the kernel takes them: one 64-bit word, bit sig - 1. */
#define SIGNAL_BIT(sig) (1ULL << ((sig) - 1))
#define HANDLED_MASK                                                                              \
    (SIGNAL_BIT(SIGCHLD) | SIGNAL_BIT(SIGTERM) | SIGNAL_BIT(SIGINT) | SIGNAL_BIT(SIGHUP))
/* Every signal in set back to its default disposition. */
void default_signals(uint64_t set);
/* The signal mask becomes exactly set. */
void block_only(uint64_t set);

/* Runs argv, or reports why not on stderr and exits 127 (not found) or 126 (cannot execute). */
void exec_command(char *const argv[]) __attribute__((noreturn));

/* Default dispositions and nothing blocked: what a command must start with. */
void reset_signals(void);
/* Blocks handled_set (after resetting its dispositions), so no request is lost during setup. */
void block_handled_signals(void);

/*
 * Waits until sv->main_pid ends or a termination request arrives, ends the tree, then exits the
 * way the command ended. Expects the handled signals blocked and this process to be a child
 * subreaper.
 */
void supervise(struct supervisor *sv) __attribute__((noreturn));

#endif

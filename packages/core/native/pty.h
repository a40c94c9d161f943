/*
 * The one-command mode's pseudo-terminal (R15.4): a command that wants a terminal (a REPL, a
 * password prompt, `npm init`) gets a pty of its own, opened by the helper before the sandbox
 * closes (Landlock would refuse /dev/ptmx and /dev/pts to the command), inside the same confinement
 * otherwise. A relay process pumps the helper's stdin into the terminal and the terminal's output
 * to the helper's stdout, so the server talks to it through two pipes as to any command.
 */
#ifndef AHMA_SANDBOX_PTY_H
#define AHMA_SANDBOX_PTY_H

#include <sys/types.h>

struct pty {
    int master, slave;
};

/* Opens a terminal pair of cols x rows (both close on exec); dies on failure. */
void open_pty(struct pty *pty, unsigned short cols, unsigned short rows);
/* In the command's process: a session of its own with the terminal as its controlling terminal on
 * descriptors 0, 1 and 2. */
void become_pty_child(const struct pty *pty);
/* Forks the relay (stdin -> terminal, terminal -> stdout), which ends once nothing holds the
 * terminal's other side any more; returns its pid. */
pid_t start_pty_relay(const struct pty *pty);

#endif

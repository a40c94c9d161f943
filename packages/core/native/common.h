/*
 * What every part of the sandbox helper shares (see ahma-sandbox.c for the whole picture): its
 * name in messages, its exit codes, and a few small utilities.
 */
#ifndef AHMA_SANDBOX_COMMON_H
#define AHMA_SANDBOX_COMMON_H

#include <stdint.h>

#define PROG "ahma-sandbox"

/* Exit codes of the helper itself; otherwise it exits the way the command did. */
#define EXIT_UNAVAILABLE 78 /* EX_CONFIG: Landlock unavailable */
#define EXIT_HELPER 125     /* usage or setup error of the helper itself */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

/*
 * What commands may reach on the network (R7.15, R7.16): landlock.c and seccomp.c each enforce
 * their half of it.
 */
enum network_mode {
    NETWORK_HOST,  /* any address (the default) */
    NETWORK_PROXY, /* --proxy-port N: TCP connects to port N only (the server's egress proxy) */
    NETWORK_NONE,  /* --no-network: no socket but unix ones, no TCP at all */
};

/* Prints "ahma-sandbox: MESSAGE" on stderr and exits with code. */
void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* --scope: the real path commands' working directories must lie beneath, or NULL (no check). */
extern const char *scope_path;

/*
 * Whether this process's working directory lies beneath scope_path (always, without one). Checked
 * after the change of directory, so a directory swapped for a symlink after the server checked the
 * path cannot put a command outside: the kernel reports where the process really is.
 */
int cwd_inside_scope(void);

/*
 * Whether fd is the file `path` names with no link on the way: the server passes real paths, so a
 * path that resolves elsewhere had a component replaced by a link (a command can do that to a
 * path nested in another writable one, e.g. a scope in /tmp) and must not be granted (landlock.c)
 * or bind-mounted (handoff.c).
 */
int is_real_path(int fd, const char *path);

/* Milliseconds on the monotonic clock: for deadlines, immune to changes of the wall clock. */
int64_t now_ms(void);

#endif

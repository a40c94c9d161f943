/*
 * ahma-sandbox: the Linux exec helper behind Ahma's sandbox (SPEC §4, R7.2) and its process
 * supervision (SPEC §3: one merged output stream, no orphan survives an operation).
 *
 * Why a C helper exists at all: Landlock confines the *calling* thread and whatever it later
 * starts; it cannot be applied to another process. Node has no pre-exec hook in child_process
 * (libuv forks and execs in one step), and a native addon calling landlock_restrict_self() would
 * confine only one thread of the server itself. So every command is started as
 *
 *     ahma-sandbox --rw SCOPE ... -- COMMAND ARGS...
 *
 * and this program confines itself (a mount namespace keeping the trust hand-off files read-only,
 * Landlock, a seccomp deny-list, no capabilities), then forks
 * COMMAND, which enters a Landlock domain of its own, nested in the helper's, before it runs (so it
 * cannot signal or ptrace the helper). The helper stays behind as the supervisor of the whole
 * process tree: it is a child subreaper, so everything the command leaves behind (background jobs,
 * `setsid` daemons) re-parents to it and is killed when the command ends or when the helper is
 * told to stop. docs/native.md draws the process tree and the domains.
 *
 * CLI:
 *   ahma-sandbox --probe
 *       prints "landlock-abi=N", then "handoff=mount" when a mount namespace for --protect/--pin
 *       can be made here (tried in a forked child) or "handoff=none reason=WHY", and exits 0;
 *       exits 78 with the reason on stderr (nothing on stdout) when Landlock is unavailable.
 *   ahma-sandbox --peer-cred
 *       prints "UID GID PID" of the peer of the unix socket connection on descriptor 3 (SO_PEERCRED,
 *       for ahma-shell --http-socket; see peercred.c) and exits 0; 125 when there is none.
 *   ahma-sandbox [--rw PATH]... [--ro PATH]... [--read PATH]... [--list PATH]... [--read-all] [--no-network | --proxy-port N] [--allow-unix-sockets] [--unconfined] [--keep-capabilities]
 *                [--protect PATH]... [--pin PATH]... [--scope PATH] [--grace-ms N] -- COMMAND [ARG...]
 *   ahma-sandbox [--rw PATH]... [--ro PATH]... [--read PATH]... [--list PATH]... [--read-all] [--no-network | --proxy-port N] [--allow-unix-sockets] [--unconfined] [--keep-capabilities]
 *                [--protect PATH]... [--pin PATH]... [--scope PATH] [--grace-ms N] --pool N [--shell PATH] --
 *
 * --no-network (R7.15): no socket but unix ones, no TCP bind or connect. --proxy-port N (R7.16,
 * 1..65535): TCP connects to port N only (the server's egress proxy), no bind, no listen, no other
 * socket but unix ones; it needs Landlock ABI 4 (Linux 6.7), else the helper exits 125 rather than
 * run with the network open. Neither goes with the other or with --unconfined.
 *
 * --protect PATH / --pin PATH (R7.11, handoff.c): in a mount namespace of the helper's own, PATH is
 * bound onto itself read-only / read-write (a mount point cannot be renamed or removed). Real paths
 * from the server: one that is gone is skipped, one that no longer resolves to itself is refused
 * (125); any failure to protect is fatal (125). Ignored with --unconfined.
 *
 * Exit status: COMMAND's exit status, or death by the same signal that killed COMMAND;
 * 78 Landlock unavailable; 125 usage or setup error of the helper itself;
 * 126 COMMAND could not be executed; 127 COMMAND not found. In pool mode: 0 after a shutdown.
 *
 * Pool mode (SPEC §5, R4.1) turns the helper into a "zygote": sandboxed once, it forks every
 * command itself, so the server spawns nothing per command (a spawn from Node costs ~2 ms and
 * grows with Node's memory). A command runs in a unit: a supervisor S (its own session, a
 * subreaper, the same supervision as the one-command mode) and its child B. N units of each mode
 * are forked ahead of demand, B blocked until a request arrives: for a shell script, B is a warm
 * shell blocked in `read <&3`; for an argv command, B is a fork of the helper blocked in read(2),
 * which then executes the command directly (a shell in between would cost more than it saves).
 * Each unit serves exactly one command, so no state (cd, variables, `exit`, background jobs) leaks
 * into the next one. See zygote.c for the wire protocol on stdin/stdout.
 *
 * The files, one purpose each:
 *   ahma-sandbox.c  this: argument parsing, the setup both modes share, the one-command mode
 *   handoff.c       --protect/--pin: the mount namespace that keeps hand-off files read-only
 *   landlock.c      the Landlock ABI (declared locally), the helper's ruleset, each command's
 *                   nested domain, the --probe check
 *   seccomp.c       the BPF deny-list (io_uring, TIOCSTI, device nodes, set-id chmod, namespaces,
 *                   mounts, keyrings, ...), the refusal of socket(AF_UNIX, ...), and the
 *                   sockets and sends each network mode refuses
 *   capabilities.c  empties every capability set (unless --keep-capabilities)
 *   supervise.c     the supervisor: reaping, descendant scan and termination, exiting like the
 *                   command; the descriptor, signal and exec helpers its forks share
 *   zygote.c        pool mode: units, frames, the event loop
 *   peercred.c      --peer-cred: the uid of a unix socket connection's peer
 *   common.c/.h     the program name, exit codes, die(), is_real_path() and now_ms()
 *
 * Build (scripts/build-native.mjs): cc -std=c11 -O2 -Wall -Wextra -Werror [-static] -o ahma-sandbox *.c
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capabilities.h"
#include "common.h"
#include "handoff.h"
#include "landlock.h"
#include "peercred.h"
#include "pty.h"
#include "seccomp.h"
#include "supervise.h"
#include "zygote.h"

static void usage(FILE *out) {
    fputs("usage: " PROG " --probe\n"
          "       " PROG " [--rw PATH]... [--ro PATH]... [--read PATH]... [--list PATH]... [--read-all]\n"
          "                    [--no-network | --proxy-port N] [--allow-unix-sockets] [--unconfined]\n"
          "                    [--protect PATH]... [--pin PATH]... [--keep-capabilities] [--scope PATH]\n"
          "                    [--grace-ms N] -- COMMAND [ARG...]\n"
          "       " PROG " [--rw PATH]... [--ro PATH]... [--read PATH]... [--list PATH]... [--read-all]\n"
          "                    [--no-network | --proxy-port N] [--allow-unix-sockets] [--unconfined]\n"
          "                    [--protect PATH]... [--pin PATH]... [--keep-capabilities] [--scope PATH]\n"
          "                    [--grace-ms N] --pool N [--shell PATH] --\n",
          out);
}

static int64_t parse_ms(const char *s) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 86400000LL)
        die(EXIT_HELPER, "--grace-ms needs a number of milliseconds (0..86400000), got '%s'", s);
    return (int64_t)v;
}

static int parse_port(const char *s) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 65535)
        die(EXIT_HELPER, "--proxy-port needs a TCP port (1..65535), got '%s'", s);
    return (int)v;
}

/* --pty COLSxROWS: the terminal's size, each 1..1000. */
static void parse_pty_size(const char *s, unsigned short *cols, unsigned short *rows) {
    unsigned c = 0, r = 0;
    char tail = 0;
    if (sscanf(s, "%ux%u%c", &c, &r, &tail) != 2 || c < 1 || c > 1000 || r < 1 || r > 1000)
        die(EXIT_HELPER, "--pty needs COLSxROWS (each 1..1000), got '%s'", s);
    *cols = (unsigned short)c;
    *rows = (unsigned short)r;
}

static int parse_pool(const char *s) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > POOL_MAX)
        die(EXIT_HELPER, "--pool needs a number of warm shells (1..%d), got '%s'", POOL_MAX, s);
    return (int)v;
}

int main(int argc, char **argv) {
    pid_t original_parent = getppid();

    if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
        int err = 0;
        int abi = landlock_abi(&err);
        if (abi < 0) {
            fprintf(stderr, PROG ": Landlock unavailable: %s (%s)\n", landlock_reason(err),
                    strerror(err));
            return EXIT_UNAVAILABLE;
        }
        printf("landlock-abi=%d\n", abi);
        char reason[1024];
        if (handoff_probe(reason, sizeof reason))
            printf("handoff=mount\n");
        else
            printf("handoff=none reason=%s\n", reason);
        return fflush(stdout) == 0 ? 0 : EXIT_HELPER;
    }
    if (argc == 2 && strcmp(argv[1], "--peer-cred") == 0) return print_peer_credentials(PEER_CRED_FD);

    struct landlock_paths paths = {
        .rw = calloc((size_t)argc, sizeof(char *)),
        .ro = calloc((size_t)argc, sizeof(char *)),
        .read = calloc((size_t)argc, sizeof(char *)),
        .list = calloc((size_t)argc, sizeof(char *)),
    };
    struct handoff_paths handoff = {
        .protect = calloc((size_t)argc, sizeof(char *)),
        .pin = calloc((size_t)argc, sizeof(char *)),
    };
    if (paths.rw == NULL || paths.ro == NULL || paths.read == NULL || paths.list == NULL ||
        handoff.protect == NULL || handoff.pin == NULL)
        die(EXIT_HELPER, "out of memory");
    int allow_unix_sockets = 0, unconfined = 0, keep_capabilities = 0, cmd = -1, shell_given = 0;
    int no_network = 0;
    unsigned short pty_cols = 0, pty_rows = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            cmd = i + 1;
            break;
        } else if (strcmp(arg, "--read") == 0 || strcmp(arg, "--list") == 0) {
            if (i + 1 >= argc) die(EXIT_HELPER, "%s needs a value", arg);
            if (strcmp(arg, "--read") == 0)
                paths.read[paths.nread++] = argv[++i];
            else
                paths.list[paths.nlist++] = argv[++i];
        } else if (strcmp(arg, "--read-all") == 0) {
            paths.read_all = 1;
        } else if (strcmp(arg, "--no-network") == 0) {
            no_network = 1;
        } else if (strcmp(arg, "--pty") == 0) {
            if (i + 1 >= argc) die(EXIT_HELPER, "%s needs a value", arg);
            parse_pty_size(argv[++i], &pty_cols, &pty_rows);
        } else if (strcmp(arg, "--proxy-port") == 0) {
            if (i + 1 >= argc) die(EXIT_HELPER, "%s needs a value", arg);
            paths.proxy_port = parse_port(argv[++i]);
        } else if (strcmp(arg, "--protect") == 0 || strcmp(arg, "--pin") == 0) {
            /* Checked when bound (handoff.c): skipped when gone, refused when not real. */
            if (i + 1 >= argc) die(EXIT_HELPER, "%s needs a value", arg);
            if (strcmp(arg, "--protect") == 0)
                handoff.protect[handoff.nprotect++] = argv[++i];
            else
                handoff.pin[handoff.npin++] = argv[++i];
        } else if (strcmp(arg, "--rw") == 0 || strcmp(arg, "--ro") == 0 ||
                   strcmp(arg, "--grace-ms") == 0 || strcmp(arg, "--pool") == 0 ||
                   strcmp(arg, "--shell") == 0 || strcmp(arg, "--scope") == 0) {
            if (i + 1 >= argc) die(EXIT_HELPER, "%s needs a value", arg);
            const char *value = argv[++i];
            if (strcmp(arg, "--grace-ms") == 0) {
                grace_ms = parse_ms(value);
                continue;
            }
            if (strcmp(arg, "--pool") == 0) {
                pool_size = parse_pool(value);
                continue;
            }
            if (strcmp(arg, "--shell") == 0) {
                shell_path = value;
                shell_given = 1;
                continue;
            }
            if (strcmp(arg, "--scope") == 0) {
                if ((scope_path = realpath(value, NULL)) == NULL || strcmp(scope_path, "/") == 0)
                    die(EXIT_HELPER, "--scope %s: %s", value,
                        scope_path == NULL ? strerror(errno) : "the root cannot be the scope");
                if (strcmp(scope_path, value) != 0) /* the server passes the real path */
                    die(EXIT_HELPER, "--scope %s no longer resolves to itself (now %s)", value,
                        scope_path);
                continue;
            }
            struct stat st;
            if (stat(value, &st) != 0) die(EXIT_HELPER, "%s %s: %s", arg, value, strerror(errno));
            if (strcmp(arg, "--rw") == 0)
                paths.rw[paths.nrw++] = value;
            else
                paths.ro[paths.nro++] = value;
        } else if (strcmp(arg, "--allow-unix-sockets") == 0) {
            allow_unix_sockets = 1;
        } else if (strcmp(arg, "--unconfined") == 0) {
            unconfined = 1;
        } else if (strcmp(arg, "--keep-capabilities") == 0) {
            keep_capabilities = 1;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, PROG ": unknown argument '%s'\n", arg);
            usage(stderr);
            return EXIT_HELPER;
        }
    }
    /* One network mode; and an unconfined helper would enforce none, so asking for one is wrong. */
    if (paths.proxy_port > 0 && no_network) {
        fputs(PROG ": --proxy-port and --no-network exclude each other\n", stderr);
        usage(stderr);
        return EXIT_HELPER;
    }
    if (paths.proxy_port > 0 && unconfined) {
        fputs(PROG ": --proxy-port needs the sandbox: it cannot go with --unconfined\n", stderr);
        usage(stderr);
        return EXIT_HELPER;
    }
    paths.network = no_network ? NETWORK_NONE : paths.proxy_port > 0 ? NETWORK_PROXY : NETWORK_HOST;
    if (pool_size > 0 && pty_cols > 0) die(EXIT_HELPER, "--pty is for one command, not --pool");
    if (pool_size > 0) {
        if (cmd >= 0 && cmd < argc) {
            fputs(PROG ": --pool takes no command after --\n", stderr);
            usage(stderr);
            return EXIT_HELPER;
        }
        if (strchr(shell_path, '/') != NULL && access(shell_path, X_OK) != 0)
            die(EXIT_HELPER, "--shell %s: %s", shell_path, strerror(errno));
        if (fcntl(STDOUT_FILENO, F_GETFD) < 0) die(EXIT_HELPER, "--pool needs stdout (protocol)");
        for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd += 2) /* 0 and 2 must be taken */
            if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
                die(EXIT_HELPER, "cannot open /dev/null: %s", strerror(errno));
    } else if (shell_given) {
        die(EXIT_HELPER, "--shell needs --pool");
    } else if (cmd < 0 || cmd >= argc) {
        fputs(PROG ": missing -- COMMAND\n", stderr);
        usage(stderr);
        return EXIT_HELPER;
    }

    block_handled_signals();

    /* Own session and process group, so the server can signal the group; EPERM: already leader. */
    (void)setsid();
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        die(EXIT_HELPER, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
    if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0)
        die(EXIT_HELPER, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
    if (getppid() != original_parent) die(EXIT_HELPER, "the parent process exited");

    if (!unconfined && !paths.read_all && paths.nread == 0)
        die(EXIT_HELPER, "no read rules: pass the read policy as --read PATH (and --list PATH), or "
                         "--read-all");
    /* Opened while /dev/ptmx and /dev/pts are still reachable: Landlock closes them below. */
    struct pty pty = {-1, -1};
    if (pty_cols > 0) open_pty(&pty, pty_cols, pty_rows);
    if (!unconfined) {
        /* A namespace of our own for the hand-off files, made before Landlock (which refuses
         * mounts) and before the capabilities go (it needs CAP_SYS_ADMIN, or a user namespace). */
        int user_namespace = 0;
        if (handoff.nprotect > 0 || handoff.npin > 0) {
            user_namespace = enter_handoff_namespace(&handoff);
            /* Changing credentials may clear the parent-death signal: set it again. */
            if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0)
                die(EXIT_HELPER, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
            if (getppid() != original_parent) die(EXIT_HELPER, "the parent process exited");
        }
        apply_landlock(&paths);
        apply_seccomp(allow_unix_sockets, paths.network);
        /* The capabilities of our own user namespace are never kept: they would rule its mounts. */
        if (!keep_capabilities || user_namespace) drop_capabilities();
    }
    free(handoff.protect);
    free(handoff.pin);
    free(paths.rw);
    free(paths.ro);
    free(paths.read);
    free(paths.list);

    fflush(NULL);
    if (pool_size > 0) run_zygote(); /* every unit it forks inherits the sandbox */

    if (!cwd_inside_scope())
        die(EXIT_HELPER, "the working directory is not inside the scope %s (did it change after it was checked?)",
            scope_path);
    struct supervisor sv = {.main_pid = fork()};
    if (sv.main_pid < 0) die(EXIT_HELPER, "fork: %s", strerror(errno));
    if (sv.main_pid == 0) {
        /* One chronological stream, as `2>&1` (or the terminal's). Descriptors >= 3 are passed
         * through untouched. */
        if (pty.master >= 0)
            become_pty_child(&pty);
        else
            (void)dup2(STDOUT_FILENO, STDERR_FILENO);
        enter_command_domain();
        reset_signals();
        exec_command(&argv[cmd]);
    }

    /* The terminal's relay outlives the command until its last output is read (supervise()). */
    if (pty.master >= 0) sv.relay_pid = start_pty_relay(&pty);
    /* The supervisor needs none of the descriptors passed through for the command (nor the
     * terminal: the relay sees its end only once no one else holds it). */
    close_inherited_fds();
    supervise(&sv);
}

/* The pool zygote (SPEC §5, R4.1): units, the frame protocol on stdin/stdout, the event loop. */
#define _GNU_SOURCE

#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "landlock.h"
#include "supervise.h"
#include "template.h"

/*
 * `--pool N`: the helper, sandboxed once, runs every command in a unit of its own and keeps N warm
 * units of each mode ready; every fork inherits the sandbox, and each command's first process
 * enters a Landlock domain of its own. docs/native.md is the one description of the processes,
 * their domains and the frame protocol (R run, K kill; S started, O output, X exit, E error).
 *
 * A unit: the zygote creates the pipe `out` (B's fds 1 and 2 -> zygote), a memfd `body` and a
 * pipe `go` (zygote -> B), and forks S, which takes a session, becomes a subreaper, starts B and
 * supervises it exactly like the one-command mode. B waits, blocked reading `go`, until the zygote
 * hands it a request: the payload into the memfd, then one NUL byte into the pipe. The oldest idle
 * unit takes a request and its replacement is forked right after; when none is idle, a unit is
 * forked on the spot. B depends on the mode:
 *   shell  a warm shell (go on fd 3, body on fd 4): a copy of the template bash, cloned by the
 *          template with its S (template.c, bash/ahma-unit.c), or, without a template, S forked
 *          here and `SHELL --noprofile --norc -c BOOTSTRAP`. Either way it reads the request in
 *          one `mapfile` and runs that one script. A memfd is seekable, so bash reads it in 4 KiB
 *          blocks; a pipe it would read byte by byte (~0.6 us a byte).
 *   argv   a fork of the helper: it reads the request, changes to cwd, sets the request's
 *          environment entries and executes the words with the one-command mode's messages and
 *          exit codes (125 cwd, 126 cannot execute, 127 not found). No shell in between: it would
 *          cost more than it saves.
 */
#define OUTPUT_CHUNK 65536
#define MAX_PAYLOAD (64U << 20)
#define IDLE_DEATH_LIMIT 3
#define FRAME_HEADER 9

/* A bash of its own for a shell unit (no template): $1 is the scope, "" for none. One line, as
 * in the template: a script's line numbers are its own. */
static const char bootstrap[] = "__ahma_scope=$1; " SHELL_UNIT_SETUP SHELL_UNIT_RUN;

enum mode { MODE_SHELL, MODE_ARGV, MODES };
static const char *const warm_name[MODES] = {"warm shell", "warm argv unit"};

struct unit {
    pid_t pid;      /* the supervisor S */
    enum mode mode; /* what B is */
    int busy;       /* serving request `id` (else warm: B waits for its request) */
    uint32_t id;
    int go_w;      /* B's go pipe (zygote's end), -1 once handed over */
    int body;      /* B's request memfd, -1 once handed over */
    int out_r;     /* zygote's end of the output pipe, -1 once at EOF */
    int reaped, status; /* S was reaped, with this wait status */
    int gone;           /* finished: freed at the end of the loop iteration */
};

static struct unit **units;
static size_t nunits, units_cap;
int pool_size;
const char *shell_path = "/bin/bash";
static pid_t zygote_pid;
static int sigfd = -1;
static int stdin_open = 1, stdout_dead, got_term, sweep_needed;
static int idle_deaths[MODES]; /* warm units of a mode that died (or failed to start) in a row */
static int shutting_down, escalated;
static int64_t kill_deadline, final_deadline;

/* Frames not yet written: room for a full output chunk besides whatever is queued. */
static unsigned char outq[2 * (FRAME_HEADER + OUTPUT_CHUNK)];
static size_t outq_len;

static void put_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static void begin_shutdown(void) {
    got_term = 0;
    if (shutting_down) return;
    shutting_down = 1;
    template_gone(0);
    kill_deadline = now_ms() + grace_ms + 1000;
    final_deadline = kill_deadline + 2000;
    for (size_t i = 0; i < nunits; i++) {
        struct unit *u = units[i];
        if (u->gone || u->reaped) continue;
        close_fd(&u->go_w);
        close_fd(&u->body);
        kill(u->pid, SIGTERM);
    }
}

/*
 * Reads every queued signal. SIGCHLD needs nothing here: the loop reaps before every poll(). A
 * termination request starts the shutdown at once (it writes no frame, so this is safe anywhere).
 */
static int drain_signals(void) {
    struct signalfd_siginfo info;
    int n = 0;
    while (read(sigfd, &info, sizeof info) == (ssize_t)sizeof info) {
        n++;
        if (info.ssi_signo != SIGCHLD) got_term = 1;
    }
    if (got_term) begin_shutdown();
    return n;
}

/* Waits until stdout takes bytes again, noticing termination requests meanwhile. -1: give up. */
static int wait_stdout_writable(int *drained) {
    for (;;) {
        int timeout = -1;
        if (shutting_down) {
            int64_t left = final_deadline - now_ms();
            if (left <= 0) return -1;
            timeout = (int)left;
        }
        struct pollfd p[2] = {{.fd = STDOUT_FILENO, .events = POLLOUT},
                              {.fd = sigfd, .events = POLLIN}};
        int r = poll(p, 2, timeout);
        if (r < 0 && errno != EINTR) return -1;
        if (r <= 0) continue;
        if ((p[1].revents & POLLIN) && drain_signals() > 0) *drained = 1;
        if (p[0].revents != 0) return 0;
    }
}

/*
 * Writes the queued frames to stdout, completely. Once stdout is gone, nothing more is written:
 * we shut down. Returns 1 when signals were read from the signalfd meanwhile (a SIGCHLD that
 * poll() would no longer report).
 */
static int flush_frames(void) {
    int drained = 0;
    size_t done = 0;
    while (done < outq_len && !stdout_dead) {
        ssize_t n = write(STDOUT_FILENO, outq + done, outq_len - done);
        if (n >= 0) {
            done += (size_t)n;
            continue;
        }
        int err = errno;
        if (err == EINTR) continue;
        if (err == EAGAIN && wait_stdout_writable(&drained) == 0) continue;
        if (err != EPIPE && err != EAGAIN)
            fprintf(stderr, PROG ": writing to stdout: %s\n", strerror(err));
        stdout_dead = 1;
        begin_shutdown();
    }
    outq_len = 0;
    return drained;
}

/* Room for a frame of len payload bytes (len <= OUTPUT_CHUNK) at outq + outq_len. */
static unsigned char *frame_space(size_t len) {
    if (sizeof outq - outq_len < FRAME_HEADER + len) (void)flush_frames();
    return outq + outq_len;
}

/* Queues the frame whose payload is already in place at outq + outq_len + FRAME_HEADER. */
static void commit_frame(char type, uint32_t id, size_t len) {
    if (stdout_dead) return;
    unsigned char *header = outq + outq_len;
    header[0] = (unsigned char)type;
    put_u32(header + 1, id);
    put_u32(header + 5, (uint32_t)len);
    outq_len += FRAME_HEADER + len;
}

/* Queues one frame (len <= OUTPUT_CHUNK); the loop writes the queue before it blocks. */
static void send_frame(char type, uint32_t id, const void *payload, size_t len) {
    memcpy(frame_space(len) + FRAME_HEADER, payload, len);
    commit_frame(type, id, len);
}

static void send_error(uint32_t id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void send_error(uint32_t id, const char *fmt, ...) {
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof message) n = (int)sizeof message - 1;
    send_frame('E', id, message, (size_t)n);
}

/* X, once the output reached EOF and S was reaped: every byte of output is already forwarded. */
static void finish_if_done(struct unit *u) {
    if (u->gone || !u->busy || !u->reaped || u->out_r >= 0) return;
    int32_t code = EXIT_HELPER, sig = 0;
    if (WIFEXITED(u->status)) {
        code = WEXITSTATUS(u->status);
    } else if (WIFSIGNALED(u->status)) {
        code = -1;
        sig = WTERMSIG(u->status);
    }
    unsigned char payload[8];
    put_u32(payload, (uint32_t)code);
    put_u32(payload + 4, (uint32_t)sig);
    send_frame('X', u->id, payload, sizeof payload);
    u->gone = 1;
}

/*
 * B of an argv unit, in a forked child with stdout and stderr on the output pipe and signals
 * reset: waits for the request (cwd NUL [=NAME=VALUE NUL]... mode NUL word NUL ..., checked by the
 * zygote), changes to cwd, sets the environment entries, then executes it. Never returns.
 */
static void run_argv(int go_r, int body) __attribute__((noreturn));
static void run_argv(int go_r, int body) {
    char go;
    ssize_t n;
    while ((n = read(go_r, &go, 1)) < 0 && errno == EINTR) {
    }
    struct stat st;
    if (n != 1 || fstat(body, &st) != 0 || st.st_size <= 0 || st.st_size > MAX_PAYLOAD)
        _exit(EXIT_HELPER); /* no request: the zygote is gone, or shuts down */
    size_t len = (size_t)st.st_size, done = 0;
    char *request = malloc(len + 1);
    if (request == NULL) _exit(EXIT_HELPER);
    while (done < len && (n = pread(body, request + done, len - done, (off_t)done)) != 0) {
        if (n < 0 && errno != EINTR) _exit(EXIT_HELPER);
        if (n > 0) done += (size_t)n;
    }
    request[done] = '\0';
    close(go_r);
    close(body);

    const char *end = request + done, *cwd = request;
    char *env = request + strlen(cwd) + 1, *words = env;
    while (words < end && *words == '=') words += strlen(words) + 1;
    const char *env_end = words;
    if (words < end) words += strlen(words) + 1; /* the mode */
    size_t count = 0;
    for (const char *w = words; w < end; w += strlen(w) + 1) count++;
    char **argv = malloc((count + 1) * sizeof *argv);
    if (argv == NULL || count == 0) _exit(EXIT_HELPER);
    count = 0;
    for (char *w = words; w < end; w += strlen(w) + 1) argv[count++] = w;
    argv[count] = NULL;
    if (chdir(cwd) != 0) {
        dprintf(STDERR_FILENO, PROG ": cannot change to %s: %s\n", cwd, strerror(errno));
        _exit(EXIT_HELPER);
    }
    if (!cwd_inside_scope()) {
        dprintf(STDERR_FILENO, PROG ": %s is not inside the scope %s (did it change after it was checked?)\n", cwd, scope_path);
        _exit(EXIT_HELPER);
    }
    /* =NAME=VALUE, the name checked by the zygote: split at the '=' after the name. */
    for (char *e = env; e < env_end;) {
        char *next = e + strlen(e) + 1, *eq = strchr(e + 1, '=');
        *eq = '\0';
        if (setenv(e + 1, eq + 1, 1) != 0) {
            dprintf(STDERR_FILENO, PROG ": cannot set %s: %s\n", e + 1, strerror(errno));
            _exit(EXIT_HELPER);
        }
        e = next;
    }
    exec_command(argv);
}

/* In the forked supervisor S: set up the unit, start B, supervise it. Never returns. */
static void run_unit(enum mode mode, int go_r, int body, int out_w) __attribute__((noreturn));
static void run_unit(enum mode mode, int go_r, int body, int out_w) {
    become_unit_supervisor(go_r, body, out_w, zygote_pid);
    struct supervisor sv = {0};
    if (mode == MODE_ARGV) {
        /* A fork, not a vfork: B waits for its request, in memory of its own. */
        sv.main_pid = fork();
        if (sv.main_pid == 0) {
            /* stdin is /dev/null already; stdout and stderr are one stream. */
            (void)dup2(out_w, STDOUT_FILENO);
            (void)dup2(out_w, STDERR_FILENO);
            close_fds_except(go_r, body, -1);
            enter_command_domain();
            reset_signals();
            run_argv(go_r, body);
        }
    } else {
        /* A fork, not a vfork: B changes its own credentials (its Landlock domain) before exec. */
        sv.main_pid = fork();
        if (sv.main_pid == 0) {
            give_shell_unit_fds(go_r, body, out_w);
            enter_command_domain();
            reset_signals();
            /* $0 as bash would set it, $1 the scope (cleared before the script runs) */
            char *const args[] = {(char *)shell_path, "--noprofile",      "--norc",
                                  "-c",               (char *)bootstrap, (char *)shell_path,
                                  (char *)(scope_path == NULL ? "" : scope_path), NULL};
            exec_command(args);
        }
    }
    if (sv.main_pid < 0) {
        dprintf(out_w, PROG ": fork: %s\n", strerror(errno));
        _exit(EXIT_HELPER);
    }
    close_inherited_fds();
    supervise(&sv);
}

/* Forks a new unit whose B waits for its request. NULL with errno on failure. */
static struct unit *spawn_unit(enum mode mode) {
    if (nunits == units_cap) {
        size_t cap = units_cap ? units_cap * 2 : 16;
        struct unit **grown = realloc(units, cap * sizeof *units);
        if (grown == NULL) return NULL;
        units = grown;
        units_cap = cap;
    }
    struct unit *u = calloc(1, sizeof *u);
    if (u == NULL) return NULL;
    int go[2] = {-1, -1}, body = -1, out[2] = {-1, -1};
    pid_t pid = -1;
    for (int fresh = 0; fresh < 2; fresh++) {
        if ((body = memfd_create("ahma-request", MFD_CLOEXEC)) < 0 || pipe2(go, O_CLOEXEC) != 0 ||
            pipe2(out, O_CLOEXEC) != 0)
            break;
        if (mode == MODE_SHELL) pid = clone_from_template(go[0], body, out[1]);
        if (pid == TEMPLATE_FATE_UNKNOWN) {
            /* The template may have cloned a unit holding these descriptors after all: a new set
             * for ours, so that unit (if any) gets EOF, exits 125 and is swept as a stranger. */
            close_fd(&go[0]);
            close_fd(&go[1]);
            close_fd(&body);
            close_fd(&out[0]);
            close_fd(&out[1]);
            pid = -1;
            continue;
        }
        if (pid < 0 && (pid = fork()) == 0) run_unit(mode, go[0], body, out[1]);
        break;
    }
    int err = errno;
    close_fd(&go[0]);
    close_fd(&out[1]);
    if (pid < 0) {
        close_fd(&go[1]);
        close_fd(&body);
        close_fd(&out[0]);
        free(u);
        errno = err;
        return NULL;
    }
    (void)fcntl(out[0], F_SETFL, O_NONBLOCK); /* the zygote's end only: B writes normally */
    *u = (struct unit){.pid = pid, .mode = mode, .go_w = go[1], .body = body, .out_r = out[0]};
    units[nunits++] = u;
    return u;
}

static int is_idle(const struct unit *u, enum mode mode) {
    return !u->gone && !u->busy && !u->reaped && u->mode == mode;
}

/*
 * Keeps pool_size warm units of each mode, unless those of a mode keep dying: then none of that
 * mode until its next request.
 */
static void refill(void) {
    if (shutting_down) return;
    for (enum mode mode = 0; mode < MODES; mode++) {
        size_t idle = 0;
        for (size_t i = 0; i < nunits; i++) idle += (size_t)is_idle(units[i], mode);
        for (; idle < (size_t)pool_size && idle_deaths[mode] < IDLE_DEATH_LIMIT; idle++) {
            if (spawn_unit(mode) == NULL) {
                idle_deaths[mode]++;
                fprintf(stderr, PROG ": cannot start a %s: %s\n", warm_name[mode],
                        strerror(errno));
            }
        }
    }
}

/*
 * Hands a request to a waiting B: the payload into its memfd, then the NUL byte that releases it.
 * Neither blocks (a memfd is memory, the go pipe is empty). Should the payload not fit, B gets
 * EOF without the byte and exits 125 (as it does when the zygote dies before handing over).
 */
static void hand_over(struct unit *u, const char *p, uint32_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(u->body, p + done, len - done, (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    if (done == len && write(u->go_w, "", 1) != 1) {
        /* EPIPE: B is gone already; its supervisor's exit status tells the server */
    }
    close_fd(&u->body);
    close_fd(&u->go_w);
}

/*
 * What is wrong with an environment field's `NAME=VALUE` (after its leading '='), or NULL. The
 * names come from the server; the bootstrap's own variables (`__ahma_*`) are not among them, so a
 * request cannot replace the script it runs.
 */
static const char *check_env(const char *entry) {
    const char *eq = strchr(entry, '=');
    if (eq == NULL) return "malformed run request: an environment field needs =NAME=VALUE";
    if (eq == entry) return "malformed run request: an empty environment name";
    for (const char *c = entry; c < eq; c++) {
        int letter = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '_';
        if (!letter && (c == entry || *c < '0' || *c > '9'))
            return "malformed run request: an environment name must match [A-Za-z_][A-Za-z0-9_]*";
    }
    if (strncmp(entry, "__ahma_", 7) == 0)
        return "malformed run request: environment names beginning with __ahma_ are reserved";
    return NULL;
}

/* The mode field of a checked run request: after cwd and the environment fields. */
static const char *mode_of(const char *p) {
    const char *field = p + strlen(p) + 1;
    while (*field == '=') field += strlen(field) + 1;
    return field;
}

/* What is wrong with a run request's payload, or NULL. */
static const char *check_run(const char *p, uint32_t len) {
    if (len == 0 || p[len - 1] != '\0')
        return "malformed run request: every field must end with NUL";
    const char *end = p + len, *field = p + strlen(p) + 1;
    for (; field < end && *field == '='; field += strlen(field) + 1) {
        const char *problem = check_env(field + 1);
        if (problem != NULL) return problem;
    }
    size_t fields = 0; /* from the mode on */
    for (const char *f = field; f < end; f += strlen(f) + 1) fields++;
    if (fields < 2) return "malformed run request: needs cwd, mode and at least one word";
    if (p[0] == '\0') return "malformed run request: empty working directory";
    if (strcmp(field, "shell") == 0)
        return fields == 2 ? NULL : "malformed run request: shell mode takes exactly one word";
    return strcmp(field, "argv") == 0 ? NULL : "malformed run request: mode must be argv or shell";
}

/* Hands a request to the oldest idle unit of its mode (the warmest), else to a new one. */
static struct unit *start_unit(enum mode mode, const char *p, uint32_t len) {
    idle_deaths[mode] = 0; /* a request of this mode: try again to keep its units ready */
    struct unit *u = NULL;
    for (size_t i = 0; i < nunits && u == NULL; i++)
        if (is_idle(units[i], mode)) u = units[i];
    if (u == NULL && (u = spawn_unit(mode)) == NULL) return NULL;
    hand_over(u, p, len);
    return u;
}

static void handle_run(uint32_t id, const char *p, uint32_t len) {
    const char *problem = shutting_down ? "the shell pool is shutting down" : check_run(p, len);
    for (size_t i = 0; i < nunits && problem == NULL; i++)
        if (!units[i]->gone && units[i]->busy && units[i]->id == id)
            problem = "duplicate id: a command with this id is still running";
    if (problem != NULL) {
        send_error(id, "%s", problem);
        return;
    }

    struct unit *u = start_unit(strcmp(mode_of(p), "argv") == 0 ? MODE_ARGV : MODE_SHELL, p, len);
    if (u == NULL) {
        send_error(id, "cannot start the command: %s", strerror(errno));
        return;
    }
    u->busy = 1;
    u->id = id;
    unsigned char pid[4];
    put_u32(pid, (uint32_t)u->pid);
    send_frame('S', id, pid, sizeof pid);
    /* S goes out with the loop's next flush, after the replacement is forked, often together with
     * the command's first output: one write and one wakeup of the server fewer. */
    refill();
}

static void handle_kill(uint32_t id, const char *p, uint32_t len) {
    if (len != 1) {
        fprintf(stderr, PROG ": ignoring a kill frame with a %" PRIu32 "-byte payload\n", len);
        return;
    }
    int sig = (unsigned char)p[0];
    if (sig <= 0 || sig >= NSIG) return;
    for (size_t i = 0; i < nunits; i++) {
        struct unit *u = units[i];
        if (!u->gone && u->busy && u->id == id && !u->reaped) kill(u->pid, sig);
    }
}

static unsigned char *inbuf;
static size_t in_len, in_cap;
static uint64_t discard_left; /* payload bytes of an oversized frame still to skip */

static void read_requests(void) {
    if (in_cap - in_len < OUTPUT_CHUNK) {
        size_t cap = in_cap ? in_cap * 2 : 2 * OUTPUT_CHUNK;
        unsigned char *grown = realloc(inbuf, cap);
        if (grown == NULL) die(EXIT_HELPER, "out of memory");
        inbuf = grown;
        in_cap = cap;
    }
    ssize_t n = read(STDIN_FILENO, inbuf + in_len, in_cap - in_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
        if (n < 0) fprintf(stderr, PROG ": reading stdin: %s\n", strerror(errno));
        stdin_open = 0;
        begin_shutdown();
        return;
    }
    in_len += (size_t)n;
    size_t off = 0;
    for (;;) {
        if (discard_left > 0) {
            size_t skip = in_len - off < discard_left ? in_len - off : (size_t)discard_left;
            off += skip;
            discard_left -= skip;
            if (discard_left > 0) break;
        }
        if (in_len - off < FRAME_HEADER) break;
        const unsigned char *h = inbuf + off;
        uint32_t id = get_u32(h + 1), plen = get_u32(h + 5);
        if (plen > MAX_PAYLOAD) {
            send_error(id, "frame too large (%" PRIu32 " bytes)", plen);
            off += FRAME_HEADER;
            discard_left = plen;
            continue;
        }
        if (in_len - off - FRAME_HEADER < plen) break;
        const char *payload = (const char *)h + FRAME_HEADER;
        if (h[0] == 'R')
            handle_run(id, payload, plen);
        else if (h[0] == 'K')
            handle_kill(id, payload, plen);
        else
            fprintf(stderr, PROG ": ignoring a frame of unknown type 0x%02x\n", h[0]);
        off += FRAME_HEADER + plen;
    }
    memmove(inbuf, inbuf + off, in_len - off);
    in_len -= off;
}

/* Forwards what the unit's output pipe holds; at EOF the unit may be finished. */
static void read_output(struct unit *u) {
    for (int round = 0; round < 16; round++) { /* then let the other units have a turn */
        /* Straight into the frame queue, behind the room for its header. */
        ssize_t n = read(u->out_r, frame_space(OUTPUT_CHUNK) + FRAME_HEADER, OUTPUT_CHUNK);
        if (n > 0) {
            commit_frame('O', u->id, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n < 0) fprintf(stderr, PROG ": reading a command's output: %s\n", strerror(errno));
        close_fd(&u->out_r);
        finish_if_done(u);
        return;
    }
}

static void reap_units(void) {
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
        if (pid <= 0) return;
        if (pid == template_pid) {
            if (!shutting_down)
                fprintf(stderr, PROG ": the template shell (pid %d) ended: %s %d\n", (int)pid,
                        WIFSIGNALED(status) ? "signal" : "exit status",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            template_gone(1);
            continue;
        }
        struct unit *u = NULL;
        for (size_t i = 0; i < nunits && u == NULL; i++)
            if (!units[i]->gone && !units[i]->reaped && units[i]->pid == pid) u = units[i];
        if (u == NULL) { /* an orphan of a unit whose supervisor was killed: its tree is ours */
            sweep_needed = 1;
            continue;
        }
        u->reaped = 1;
        u->status = status;
        /* A supervisor that died by a signal may have had no chance to end its tree. */
        if (WIFSIGNALED(status)) sweep_needed = 1;
        if (!u->busy) {
            if (!shutting_down) {
                idle_deaths[u->mode]++;
                fprintf(stderr, PROG ": a %s (pid %d) died while idle: %s %d\n", warm_name[u->mode],
                        (int)pid, WIFSIGNALED(status) ? "signal" : "exit status",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            }
            close_fd(&u->go_w);
            close_fd(&u->body);
            close_fd(&u->out_r);
            u->gone = 1;
        } else {
            finish_if_done(u);
        }
    }
}

/* SIGKILL to every descendant that is not (below) a live supervisor: the catch-all subreaper. */
static void sweep_strays(void) {
    sweep_needed = 0;
    pid_t *live = malloc((nunits + 1) * sizeof *live);
    if (live == NULL) return;
    size_t n = 0;
    if (template_pid > 0) live[n++] = template_pid;
    for (size_t i = 0; i < nunits; i++)
        if (!units[i]->gone && !units[i]->reaped) live[n++] = units[i]->pid;
    signal_descendants_except(NULL, SIGKILL, live, n);
    free(live);
}

static void compact_units(void) {
    size_t kept = 0;
    for (size_t i = 0; i < nunits; i++) {
        struct unit *u = units[i];
        if (!u->gone) {
            units[kept++] = u;
            continue;
        }
        close_fd(&u->go_w);
        close_fd(&u->body);
        close_fd(&u->out_r);
        free(u);
    }
    nunits = kept;
}

void run_zygote(void) {
    zygote_pid = getpid();
    /* Not dumpable: a sandboxed command (same user, same Landlock domain) cannot ptrace the zygote
     * or take its descriptors. Forks keep this; a command's exec resets it. */
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    start_template(zygote_pid);
    struct sigaction ignore = {.sa_handler = SIG_IGN};
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, NULL); /* a vanished reader is EPIPE, not death */
    sigfd = signalfd(-1, &handled_set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sigfd < 0) die(EXIT_HELPER, "signalfd: %s", strerror(errno));
    /* A private pipe or socket to the server: non-blocking, so a SIGTERM is noticed while the
     * server does not read (a shared terminal is left alone). */
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        int flags = fcntl(STDOUT_FILENO, F_GETFL);
        if (flags >= 0) (void)fcntl(STDOUT_FILENO, F_SETFL, flags | O_NONBLOCK);
    }

    struct pollfd *fds = NULL;
    struct unit **owner = NULL;
    size_t fds_cap = 0;
    for (;;) {
        reap_units();
        if (sweep_needed) sweep_strays();
        if (shutting_down) {
            int64_t now = now_ms();
            if (!escalated && now >= kill_deadline) {
                escalated = 1;
                for (size_t i = 0; i < nunits; i++)
                    if (!units[i]->gone && !units[i]->reaped) kill(units[i]->pid, SIGKILL);
            } else if (escalated && now >= final_deadline) {
                fprintf(stderr, PROG ": shutdown: giving up waiting for the units\n");
                break;
            }
        } else {
            refill();
        }
        compact_units();
        if (shutting_down && nunits == 0) break;
        /* Everything this turn produced goes out now. A SIGCHLD read while the server did not
         * read (wait_stdout_writable) would not wake poll(): then look again first. */
        if (flush_frames()) continue;

        if (fds_cap < 2 + nunits) {
            fds_cap = 2 + nunits + 16;
            fds = realloc(fds, fds_cap * sizeof *fds);
            owner = realloc(owner, fds_cap * sizeof *owner);
            if (fds == NULL || owner == NULL) die(EXIT_HELPER, "out of memory");
        }
        nfds_t nf = 0;
        fds[nf] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        owner[nf++] = NULL;
        nfds_t stdin_slot = 0;
        if (stdin_open && !shutting_down) {
            stdin_slot = nf;
            fds[nf] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
            owner[nf++] = NULL;
        }
        for (size_t i = 0; i < nunits; i++) {
            struct unit *u = units[i];
            if (u->busy && u->out_r >= 0) {
                fds[nf] = (struct pollfd){.fd = u->out_r, .events = POLLIN};
                owner[nf++] = u;
            }
        }
        int timeout = -1;
        if (shutting_down) {
            int64_t left = (escalated ? final_deadline : kill_deadline) - now_ms();
            timeout = left < 0 ? 0 : (int)left;
        }
        int ready = poll(fds, nf, timeout);
        if (ready < 0 && errno != EINTR) die(EXIT_HELPER, "poll: %s", strerror(errno));
        if (ready <= 0) continue;

        if (fds[0].revents != 0) drain_signals();
        reap_units(); /* before taking a request: an idle unit that just died is not handed out */
        for (nfds_t i = 0; i < nf; i++) {
            struct unit *u = owner[i];
            if (u != NULL && !u->gone && u->out_r >= 0 && fds[i].revents != 0) read_output(u);
        }
        if (stdin_slot != 0 && fds[stdin_slot].revents != 0 && stdin_open) read_requests();
    }
    (void)flush_frames();
    struct supervisor none = {.main_pid = -1};
    terminate_tree(&none); /* whatever else is left below us: SIGTERM, grace, SIGKILL */
    exit(0);
}

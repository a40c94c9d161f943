/*
 * Landlock (SPEC §4, R7.6, R7.10): restricts this process, and everything it later forks, to reading
 * and executing beneath the --read rules (the server's read policy), listing the --list
 * directories, writing only beneath the --rw scopes, and a few devices; and
 * puts each command in a Landlock domain of its own, nested in the helper's.
 *
 * The Landlock ABI is declared here rather than taken from <linux/landlock.h>, so the helper builds
 * against old kernel headers and still uses every right of the running kernel.
 */
#define _GNU_SOURCE

#include "landlock.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

/* ---- Landlock ABI (include/uapi/linux/landlock.h), declared locally --------------------------- */

/* New syscalls share one number on every architecture since 5.1. */
#define SYS_LL_CREATE_RULESET 444
#define SYS_LL_ADD_RULE 445
#define SYS_LL_RESTRICT_SELF 446

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2 /* ABI 4 */

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */

#define LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

/* The ABI of the helper's own domain; -1 while unconfined. Forks inherit it with the domain. */
static int confined_abi = -1;

/* The only rights the kernel accepts on a rule for a non-directory. */
#define LL_FS_FILE_RIGHTS \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_FS_READ_EXEC (LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE)
#define LL_FS_DEVICE_RW (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4; handled for --no-network (no rule), --proxy-port */
    uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr { /* ABI 4 */
    uint64_t allowed_access;
    uint64_t port; /* host byte order */
} __attribute__((packed));

/*
 * The devices a tool needs. Everything else in /dev is neither readable nor writable: not the
 * disks, not /dev/kmsg, not /dev/pts (another terminal's keystrokes are readable there, and
 * commands have no terminal of their own: stdin is /dev/null). /dev/tty stays: with no controlling
 * terminal, opening it fails at once (ENXIO), which is how prompts learn not to wait.
 */
static const char *const device_paths[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/shm",
};

/* Device nodes may not be made anywhere, not even in the scope (seccomp refuses them too). */
#define LL_FS_MAKE_DEVICE (LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK)

int landlock_abi(int *err) {
    long abi = syscall(SYS_LL_CREATE_RULESET, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 0) {
        *err = errno;
        return -1;
    }
    return (int)abi;
}

const char *landlock_reason(int err) {
    switch (err) {
    case ENOSYS:
        return "kernel without Landlock (needs Linux >= 5.13 built with CONFIG_SECURITY_LANDLOCK)";
    case EOPNOTSUPP:
        return "Landlock is disabled at boot (add \"landlock\" to the lsm= kernel parameter)";
    default:
        return "the landlock syscalls are blocked, e.g. by a container runtime's seccomp profile";
    }
}

/* Every filesystem right the running ABI knows: a right left unhandled would be allowed everywhere. */
static uint64_t handled_fs_rights(int abi) {
    uint64_t rights = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: 13 rights */
    if (abi >= 2) rights |= LL_FS_REFER;
    if (abi >= 3) rights |= LL_FS_TRUNCATE;
    if (abi >= 5) rights |= LL_FS_IOCTL_DEV;
    return rights;
}

/*
 * Adds a path-beneath rule. Returns 0, or -1 with errno when the path cannot be opened. `exact`:
 * the path must be real (is_real_path), else the helper dies.
 */
static int add_path_rule_checked(int ruleset, const char *path, uint64_t access, uint64_t handled,
                                 int exact) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return -1;
    if (exact && !is_real_path(fd, path))
        die(EXIT_HELPER,
            "%s no longer resolves to itself (a directory on its way was replaced by a link?): "
            "refusing to grant it",
            path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) access &= LL_FS_FILE_RIGHTS;
    access &= handled;
    if (access != 0) {
        struct ll_path_beneath_attr attr = {.allowed_access = access, .parent_fd = fd};
        if (syscall(SYS_LL_ADD_RULE, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) != 0)
            die(EXIT_HELPER, "landlock_add_rule(%s): %s", path, strerror(errno));
    }
    close(fd);
    return 0;
}

static int add_path_rule(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    return add_path_rule_checked(ruleset, path, access, handled, 0);
}

/*
 * --read-all: read and execute beneath every entry of / but /dev, whose names stay listable (a
 * rule on / for reading directories only) while its devices are granted one by one. An entry that
 * cannot be opened (a dangling link, a race) is skipped: what cannot be opened cannot be granted.
 * The server passes its read policy as --read/--list rules instead (R7.10); this is for the
 * helper's own tests and callers that confine writes only.
 */
static void allow_reading_all_but_dev(int ruleset, uint64_t handled) {
    if (add_path_rule(ruleset, "/", LL_FS_READ_DIR, handled) != 0)
        die(EXIT_HELPER, "cannot open /: %s", strerror(errno));
    DIR *root = opendir("/");
    struct stat slash;
    if (root == NULL || stat("/", &slash) != 0)
        die(EXIT_HELPER, "cannot list /: %s", strerror(errno));
    struct dirent *entry;
    char path[sizeof entry->d_name + 1];
    while ((entry = readdir(root)) != NULL) {
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "dev") == 0)
            continue;
        snprintf(path, sizeof path, "/%s", name);
        /* / again (a link or bind mount of it) would grant its dev/ */
        struct stat st;
        if (stat(path, &st) == 0 && st.st_dev == slash.st_dev && st.st_ino == slash.st_ino) continue;
        /* /bin -> usr/bin: the rule lands on the target, which is beneath / too */
        (void)add_path_rule(ruleset, path, LL_FS_READ_EXEC, handled);
    }
    closedir(root);
}

/*
 * A --read or --list rule of the server's read policy: granted only when the path still is what
 * the server saw (a real path, no link on the way). One that went away or was swapped for a link
 * since is skipped, not followed: what cannot be verified is not granted.
 */
static void add_policy_rule(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return;
    int real = is_real_path(fd, path);
    close(fd);
    if (real) (void)add_path_rule(ruleset, path, access, handled);
}

void apply_landlock(const struct landlock_paths *paths) {
    int err = 0;
    int abi = landlock_abi(&err);
    if (abi < 0)
        die(EXIT_UNAVAILABLE, "Landlock unavailable: %s (%s); refusing to run the command unconfined",
            landlock_reason(err), strerror(err));

    /* --proxy-port: seccomp lets TCP sockets be made, so only Landlock keeps their connects to
     * the one port. A kernel that cannot would leave every address reachable: refused. */
    if (paths->network == NETWORK_PROXY && abi < 4)
        die(EXIT_HELPER,
            "--proxy-port needs Landlock ABI 4 (Linux 6.7) to confine TCP connects; this kernel "
            "offers ABI %d: refusing to run commands with unconfined network access",
            abi);

    uint64_t handled = handled_fs_rights(abi);
    struct ll_ruleset_attr attr = {.handled_access_fs = handled};
    if (abi >= 6) attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    /* --no-network: TCP handled and granted nowhere (seccomp refuses the sockets already).
     * --proxy-port: handled too, with one rule below; binding is granted nowhere. */
    if (paths->network != NETWORK_HOST && abi >= 4)
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;

    /* Sizes beyond what an older kernel knows are accepted as long as the extra fields are 0. */
    int ruleset = (int)syscall(SYS_LL_CREATE_RULESET, &attr, sizeof attr, 0);
    if (ruleset < 0) die(EXIT_HELPER, "landlock_create_ruleset: %s", strerror(errno));

    /* The port alone: Landlock cannot tell addresses apart, so any host's port N is reachable
     * (the proxy listens on loopback; see docs/native.md). */
    if (paths->network == NETWORK_PROXY) {
        struct ll_net_port_attr net = {.allowed_access = LL_NET_CONNECT_TCP,
                                       .port = (uint64_t)paths->proxy_port};
        if (syscall(SYS_LL_ADD_RULE, ruleset, LL_RULE_NET_PORT, &net, 0) != 0)
            die(EXIT_HELPER, "landlock_add_rule(TCP connect to port %d): %s", paths->proxy_port,
                strerror(errno));
    }

    if (paths->read_all) allow_reading_all_but_dev(ruleset, handled);
    for (size_t i = 0; i < paths->nread; i++)
        add_policy_rule(ruleset, paths->read[i], LL_FS_READ_EXEC, handled);
    for (size_t i = 0; i < paths->nlist; i++)
        add_policy_rule(ruleset, paths->list[i], LL_FS_READ_DIR, handled);
    for (size_t i = 0; i < paths->nro; i++)
        if (add_path_rule_checked(ruleset, paths->ro[i], LL_FS_READ_EXEC, handled, 1) != 0)
            die(EXIT_HELPER, "--ro %s: %s", paths->ro[i], strerror(errno));
    for (size_t i = 0; i < paths->nrw; i++)
        if (add_path_rule_checked(ruleset, paths->rw[i], handled & ~LL_FS_MAKE_DEVICE, handled, 1) != 0)
            die(EXIT_HELPER, "--rw %s: %s", paths->rw[i], strerror(errno));
    for (size_t i = 0; i < sizeof device_paths / sizeof *device_paths; i++) {
        const char *dev = device_paths[i];
        /* /dev/shm is a tmpfs for shm_open()/sem_open(): it needs to create and remove files. */
        uint64_t access =
            strcmp(dev, "/dev/shm") == 0 ? handled & ~LL_FS_MAKE_DEVICE : LL_FS_DEVICE_RW;
        (void)add_path_rule(ruleset, dev, access, handled); /* missing devices are skipped */
    }

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        die(EXIT_HELPER, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    if (syscall(SYS_LL_RESTRICT_SELF, ruleset, 0) != 0)
        die(EXIT_HELPER, "landlock_restrict_self: %s", strerror(errno));
    close(ruleset);
    confined_abi = abi;
}

/*
 * A Landlock domain of the command's own, nested in the helper's: with ABI >= 6 it scopes signals
 * and abstract unix sockets, so a command cannot signal (or connect to) the zygote, its
 * supervisor or another operation, whose domains are not beneath its own; on every ABI, Landlock
 * refuses ptrace of a process outside the domain. It confines no path further: it handles the
 * device-making rights (refused everywhere already; a ruleset must handle something before ABI 6)
 * and REFER, granted beneath / (Landlock refuses linking or renaming across directories in any
 * domain that does not grant REFER, handled or not).
 */
int landlock_confined_abi(void) { return confined_abi; }

void landlock_assume_confined(int abi) { confined_abi = abi; }

void enter_command_domain(void) {
    int abi = confined_abi;
    if (abi < 0) return; /* --unconfined */
    struct ll_ruleset_attr attr = {.handled_access_fs = LL_FS_MAKE_DEVICE};
    if (abi >= 2) attr.handled_access_fs |= LL_FS_REFER;
    if (abi >= 6) attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    int ruleset = (int)syscall(SYS_LL_CREATE_RULESET, &attr, sizeof attr, 0);
    if (ruleset < 0) die(EXIT_HELPER, "landlock_create_ruleset: %s", strerror(errno));
    if (abi >= 2 && add_path_rule(ruleset, "/", LL_FS_REFER, attr.handled_access_fs) != 0)
        die(EXIT_HELPER, "cannot open /: %s", strerror(errno));
    if (syscall(SYS_LL_RESTRICT_SELF, ruleset, 0) != 0)
        die(EXIT_HELPER, "landlock_restrict_self (command domain): %s", strerror(errno));
    close(ruleset);
}

/*
 * Trust hand-off files (R7.11): `.git/hooks`, `.git/config`, `.vscode/tasks.json`, `.envrc`, ...
 * are files a command may be able to write (they lie in the scope) that later run OUTSIDE any
 * sandbox (git runs hooks, an editor runs tasks). Landlock cannot say "the scope but not
 * .git/hooks": rights are inherited downwards, and renaming onto a file needs rights on its parent
 * only. So the helper makes a mount namespace of its own, once (per one-command helper, per pool
 * zygote), before Landlock, in which
 *
 *   --protect PATH   is bound onto itself read-only: writing beneath it fails with EROFS, renaming
 *                    or removing it (or renaming onto it) with EBUSY (it is a mount point);
 *   --pin PATH       is bound onto itself read-write: it stays writable, but it cannot be renamed
 *                    or removed, so `mv .git .git2; mkdir -p .git/hooks` cannot rebuild a
 *                    protected path elsewhere (the server pins .git, the scope, and the scope's
 *                    ancestors that lie inside another writable path).
 *
 * As root (CAP_SYS_ADMIN) that is unshare(CLONE_NEWNS); as an ordinary user, a user namespace too,
 * mapping only the user's own uid and gid (so it holds every capability of that namespace until
 * capabilities.c empties the sets; seccomp.c then refuses mount, umount, unshare and setns to
 * commands, so nothing can undo the mounts). `/` is made recursively private first: these mounts
 * never propagate to the host, and vanish with the namespace's last process.
 *
 * Every path is opened once and checked to be exactly what the server passed (is_real_path); the
 * mount calls name that open file (/proc/self/fd/N), not the path, so a link swapped in between
 * cannot redirect them.
 */
#define _GNU_SOURCE

#include "handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "common.h"

/* The reason of a failure, for die() or the probe's line. */
struct failure {
    char text[1024];
};

static int fail(struct failure *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct failure *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text, sizeof f->text, fmt, ap);
    va_end(ap);
    return -1;
}

static int holds_sys_admin(void) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, data) != 0) return 0;
    return (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0;
}

static int write_text(const char *path, const char *text, struct failure *f) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fail(f, "cannot open %s: %s", path, strerror(errno));
    size_t n = strlen(text);
    ssize_t written = write(fd, text, n);
    int e = errno;
    close(fd);
    if (written != (ssize_t)n)
        return fail(f, "cannot write '%s' to %s: %s", text, path,
                    written < 0 ? strerror(e) : "short write");
    return 0;
}

/* Why an ordinary user could not make a user namespace, for the errno unshare() failed with. */
static const char *userns_hint(int err) {
    if (err == ENOSPC) return " (user.max_user_namespaces is 0 or exhausted)";
    if (err == EPERM)
        return " (unprivileged user namespaces are disabled: kernel.unprivileged_userns_clone=0, "
               "or refused by a container's seccomp profile)";
    if (err == EINVAL) return " (the kernel has no user namespaces, or the helper is threaded)";
    return "";
}

/* A new mount namespace (and user namespace, without CAP_SYS_ADMIN) with `/` made private. */
static int new_namespace(int *user_namespace, struct failure *f) {
    *user_namespace = 0;
    if (holds_sys_admin()) {
        if (unshare(CLONE_NEWNS) != 0)
            return fail(f, "unshare(CLONE_NEWNS): %s", strerror(errno));
    } else {
        uid_t uid = geteuid();
        gid_t gid = getegid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
            int e = errno;
            return fail(f, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s%s", strerror(e), userns_hint(e));
        }
        *user_namespace = 1;
        char map[64];
        /* An unprivileged process may map its own gid only after giving up setgroups(). */
        if (write_text("/proc/self/setgroups", "deny", f) != 0) return -1;
        snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
        if (write_text("/proc/self/uid_map", map, f) != 0) return -1;
        snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
        if (write_text("/proc/self/gid_map", map, f) != 0) return -1;
    }
    /* Our mounts must never propagate to the host (a shared / would). */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return fail(f, "cannot make / private in the new mount namespace: %s%s", strerror(errno),
                    *user_namespace ? " (a security module may deny mounts in user namespaces, "
                                      "e.g. AppArmor's kernel.apparmor_restrict_unprivileged_userns)"
                                    : "");
    return 0;
}

/* The mount id of an open file (/proc/self/fdinfo), -1 when unknown. */
static long mount_id(int fd) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    FILE *info = fopen(path, "re");
    if (info == NULL) return -1;
    long id = -1;
    while (fgets(line, sizeof line, info) != NULL)
        if (sscanf(line, "mnt_id: %ld", &id) == 1) break;
    fclose(info);
    return id;
}

/*
 * A read-only remount must keep the flags the kernel locks on a mount that came from a more
 * privileged namespace (nosuid, nodev, noexec, the atime mode), or it fails with EPERM.
 */
static unsigned long kept_flags(unsigned long st_flags) {
    unsigned long flags = 0;
    if (st_flags & ST_NOSUID) flags |= MS_NOSUID;
    if (st_flags & ST_NODEV) flags |= MS_NODEV;
    if (st_flags & ST_NOEXEC) flags |= MS_NOEXEC;
    if (st_flags & ST_NOATIME) flags |= MS_NOATIME;
    if (st_flags & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (st_flags & ST_RELATIME) flags |= MS_RELATIME;
    return flags;
}

/*
 * Binds `path` onto itself, read-only when asked. Returns 1 when bound, 0 when the path does not
 * exist (skipped), -1 with the reason in f.
 */
static int bind_onto_itself(const char *path, int read_only, struct failure *f) {
    const char *flag = read_only ? "--protect" : "--pin";
    if (path[0] != '/') return fail(f, "%s %s: not an absolute path", flag, path);
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        return fail(f, "%s %s: %s", flag, path, strerror(errno));
    }
    int result = -1, top = -1;
    struct stat below, above;
    char proc[64];
    if (!is_real_path(fd, path)) {
        fail(f, "%s %s no longer resolves to itself (a link was swapped in?): refusing", flag,
             path);
        goto out;
    }
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    /* Recursive: a plain bind of a tree holding locked mounts is refused in a user namespace. */
    if (mount(proc, proc, NULL, MS_BIND | MS_REC, NULL) != 0) {
        fail(f, "cannot bind %s onto itself: %s", path, strerror(errno));
        goto out;
    }
    if (!read_only) {
        result = 1;
        goto out;
    }
    /* The remount needs the new mount's root: the path, looked up again, leads to it. */
    top = open(path, O_PATH | O_CLOEXEC);
    if (top < 0 || !is_real_path(top, path) || fstat(fd, &below) != 0 ||
        fstat(top, &above) != 0 || below.st_dev != above.st_dev || below.st_ino != above.st_ino ||
        mount_id(top) == mount_id(fd) || mount_id(top) < 0) {
        fail(f, "--protect %s changed while it was being bound: refusing", path);
        goto out;
    }
    struct statvfs vfs;
    if (fstatvfs(top, &vfs) != 0) {
        fail(f, "statvfs(%s): %s", path, strerror(errno));
        goto out;
    }
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", top);
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | kept_flags(vfs.f_flag);
    if (mount(NULL, proc, NULL, flags, NULL) != 0) {
        fail(f, "cannot make %s read-only: %s", path, strerror(errno));
        goto out;
    }
    result = 1;
out:
    if (top >= 0) close(top);
    close(fd);
    return result;
}

static int by_length(const void *a, const void *b) {
    size_t la = strlen(*(const char *const *)a), lb = strlen(*(const char *const *)b);
    return la < lb ? -1 : la > lb;
}

/* Outer paths first, so an inner mount lands on top of the outer one, not beneath it. */
static const char **sorted(const char **paths, size_t n) {
    const char **copy = calloc(n + 1, sizeof *copy);
    if (copy == NULL) die(EXIT_HELPER, "out of memory");
    memcpy(copy, paths, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, by_length);
    return copy;
}

int enter_handoff_namespace(const struct handoff_paths *paths) {
    struct failure f = {{0}};
    /* The working directory is on the mounts of before; it is entered again by name at the end. */
    char *cwd = getcwd(NULL, 0);
    struct stat before;
    if (cwd != NULL && stat(".", &before) != 0) {
        free(cwd);
        cwd = NULL;
    }
    int user_namespace = 0;
    if (new_namespace(&user_namespace, &f) != 0)
        die(EXIT_HELPER, "cannot protect the hand-off files: %s; refusing to run commands "
                         "unprotected", f.text);
    const char **pins = sorted(paths->pin, paths->npin);
    const char **protects = sorted(paths->protect, paths->nprotect);
    for (size_t i = 0; i < paths->npin; i++)
        if (bind_onto_itself(pins[i], 0, &f) < 0) die(EXIT_HELPER, "%s", f.text);
    for (size_t i = 0; i < paths->nprotect; i++)
        if (bind_onto_itself(protects[i], 1, &f) < 0) die(EXIT_HELPER, "%s", f.text);
    free(pins);
    free(protects);
    if (cwd != NULL) {
        struct stat after;
        if (chdir(cwd) != 0 || stat(".", &after) != 0 || after.st_dev != before.st_dev ||
            after.st_ino != before.st_ino)
            die(EXIT_HELPER, "the working directory %s changed while the hand-off files were "
                             "protected", cwd);
        free(cwd);
    }
    return user_namespace;
}

int handoff_probe(char *reason, size_t size) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(reason, size, "pipe: %s", strerror(errno));
        return 0;
    }
    pid_t child = fork();
    if (child < 0) {
        snprintf(reason, size, "fork: %s", strerror(errno));
        close(report[0]);
        close(report[1]);
        return 0;
    }
    if (child == 0) {
        /* The same steps as for real, on a file every system has; the namespace dies with us. */
        close(report[0]);
        struct failure f = {{0}};
        int user_namespace;
        if (new_namespace(&user_namespace, &f) == 0 && bind_onto_itself("/dev/null", 1, &f) > 0)
            _exit(0);
        if (f.text[0] == '\0') snprintf(f.text, sizeof f.text, "/dev/null is missing");
        (void)!write(report[1], f.text, strlen(f.text));
        _exit(1);
    }
    close(report[1]);
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t n = read(report[0], reason + got, size - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    reason[got] = '\0';
    close(report[0]);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    if (got == 0) snprintf(reason, size, "the probe's child failed (status %d)", status);
    for (char *c = reason; *c != '\0'; c++)
        if (*c == '\n') *c = ' ';
    return 0;
}

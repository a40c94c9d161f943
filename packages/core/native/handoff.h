/*
 * Trust hand-off files (R7.11): files a command could write that later run outside any sandbox
 * (.git/hooks, .git/config, editor tasks, ...), kept read-only in a mount namespace of the
 * helper's own. See handoff.c.
 */
#ifndef AHMA_SANDBOX_HANDOFF_H
#define AHMA_SANDBOX_HANDOFF_H

#include <stddef.h>

struct handoff_paths {
    const char **protect; /* bound onto itself read-only: writes fail (EROFS), renames (EBUSY) */
    size_t nprotect;
    const char **pin;     /* bound onto itself read-write: it cannot be renamed or removed */
    size_t npin;
};

/*
 * Enters a mount namespace of this process's own (and, without CAP_SYS_ADMIN, a user namespace
 * mapping only its own uid and gid), private to it, with every pin and then every protect path
 * bound onto itself; a path that does not exist is skipped, one that does not resolve to exactly
 * itself (a link swapped in) is refused. Then changes to the working directory again by name, so
 * it lies on the new mounts. Everything forked later inherits the namespace. Returns 1 when a user
 * namespace was entered (this process then holds every capability of it, which must be dropped
 * even with --keep-capabilities), else 0. Dies with 125 when any step fails: never unprotected.
 */
int enter_handoff_namespace(const struct handoff_paths *paths);

/*
 * --probe: whether such a namespace can be made here, tried in a forked child that exits. Returns
 * 1, or 0 with the reason (one line) in reason.
 */
int handoff_probe(char *reason, size_t size);

#endif

/* Landlock (SPEC §4): the filesystem half of the sandbox, applied to the helper itself. */
#ifndef AHMA_SANDBOX_LANDLOCK_H
#define AHMA_SANDBOX_LANDLOCK_H

#include <stddef.h>

#include "common.h"

/* The running kernel's Landlock ABI version, or -1 with the reason's errno in *err. */
int landlock_abi(int *err);

/* Why Landlock is unavailable, for an errno from landlock_abi(). */
const char *landlock_reason(int err);

/* What the helper's own domain grants (R7.2, R7.10). */
struct landlock_paths {
    const char **rw;   /* everything beneath, but making devices; must exist as given */
    size_t nrw;
    const char **ro;   /* read and execute beneath; must exist as given */
    size_t nro;
    const char **read; /* read and execute beneath; skipped when gone or no longer real */
    size_t nread;
    const char **list; /* reading directories beneath (the way down to a denied path) */
    size_t nlist;
    int read_all;      /* read and execute everywhere but /dev */
    /* NETWORK_NONE: no TCP bind or connect at all (ABI >= 4; seccomp refuses the sockets);
     * NETWORK_PROXY: no TCP bind, connects to proxy_port only (needs ABI >= 4) */
    enum network_mode network;
    int proxy_port;
};

/*
 * Confines this process and everything it later starts to `paths` and a few devices; no device
 * nodes made anywhere. Dies with 78 when Landlock is unavailable, 125 on any other failure (also
 * when NETWORK_PROXY is asked of a kernel whose ABI cannot confine TCP: it never runs unconfined).
 */
void apply_landlock(const struct landlock_paths *paths);

/*
 * In a command's first process, before it runs anything: a Landlock domain of its own, nested in
 * the helper's (signals, abstract sockets, ptrace scoped to the command). Nothing when the helper
 * is unconfined; dies with 125 on failure.
 */
void enter_command_domain(void);

/* The ABI this process was confined with by apply_landlock(), -1 when unconfined. */
int landlock_confined_abi(void);

/*
 * For code loaded into another program (the template's builtin, bash/ahma-unit.c): that program
 * was confined by the helper with this ABI (-1: unconfined), so enter_command_domain() applies.
 */
void landlock_assume_confined(int abi);

#endif

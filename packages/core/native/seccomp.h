/* The seccomp half of the sandbox: what Landlock does not cover (see seccomp.c). */
#ifndef AHMA_SANDBOX_SECCOMP_H
#define AHMA_SANDBOX_SECCOMP_H

#include "common.h"

/*
 * Installs the deny-list filter for this process and all it starts (io_uring, TIOCSTI, device
 * nodes, set-id chmod, namespaces, mounts, keyrings, bpf, ...), and, unless allow_unix_sockets,
 * makes socket(AF_UNIX, ...) fail with EACCES. NETWORK_NONE: a socket of any other family too;
 * NETWORK_PROXY: any other socket but a TCP one, and listen(). Both: sends with MSG_FASTOPEN.
 * Dies with 125 on failure.
 */
void apply_seccomp(int allow_unix_sockets, enum network_mode network);

#endif

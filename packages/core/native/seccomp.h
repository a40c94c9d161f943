/* The seccomp half of the sandbox: what Landlock does not cover (see seccomp.c). */
#ifndef AHMA_SANDBOX_SECCOMP_H
#define AHMA_SANDBOX_SECCOMP_H

/*
 * Installs the deny-list filter for this process and all it starts (io_uring, TIOCSTI, device
 * nodes, set-id chmod, namespaces, mounts, keyrings, bpf, ...), and, unless allow_unix_sockets,
 * makes socket(AF_UNIX, ...) fail with EACCES; with no_network, a socket of any other family too.
 * Dies with 125 on failure.
 */
void apply_seccomp(int allow_unix_sockets, int no_network);

#endif

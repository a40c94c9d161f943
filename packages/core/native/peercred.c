/*
 * The peer check of ahma-shell's `--http-socket` (SPEC R8.11): the HTTP endpoints on a unix
 * socket serve the server's own uid only, without a token, so every accepted connection's peer
 * must be known before a byte of it is read. The kernel records the credentials of the process
 * that called connect() (SO_PEERCRED); Node cannot ask for them, so the server passes the accepted
 * connection to `ahma-sandbox --peer-cred` as descriptor 3 and reads "UID GID PID" from stdout.
 * The helper runs unconfined in this mode (it only calls getsockopt) and exits at once.
 */
#define _GNU_SOURCE

#include "peercred.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common.h"

int print_peer_credentials(int fd) {
    int domain = 0, type = 0;
    socklen_t len = sizeof domain;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) {
        fprintf(stderr, PROG ": --peer-cred: descriptor %d: %s (pass the accepted connection as descriptor %d)\n",
                fd, strerror(errno), PEER_CRED_FD);
        return EXIT_HELPER;
    }
    len = sizeof type;
    if (domain != AF_UNIX || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
        type != SOCK_STREAM) {
        fprintf(stderr, PROG ": --peer-cred: descriptor %d is not a unix stream socket\n", fd);
        return EXIT_HELPER;
    }
    struct ucred cred;
    len = sizeof cred;
    memset(&cred, 0, sizeof cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
        fprintf(stderr, PROG ": --peer-cred: getsockopt(SO_PEERCRED): %s\n",
                len != sizeof cred ? "short answer" : strerror(errno));
        return EXIT_HELPER;
    }
    /* A socket without a peer reports uid -1: nobody to admit. (pid is 0 when the peer is in a
       pid namespace this one cannot see, which says nothing about its uid.) */
    if (cred.uid == (uid_t)-1) {
        fprintf(stderr, PROG ": --peer-cred: descriptor %d has no peer credentials\n", fd);
        return EXIT_HELPER;
    }
    printf("%u %u %d\n", (unsigned)cred.uid, (unsigned)cred.gid, (int)cred.pid);
    return fflush(stdout) == 0 ? 0 : EXIT_HELPER;
}

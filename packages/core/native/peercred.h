/*
 * `ahma-sandbox --peer-cred`: who is at the other end of a unix socket connection (see peercred.c).
 * Node has no API for SO_PEERCRED, and ahma-shell's --http-socket must know the peer's uid before
 * it reads a byte of the connection.
 */
#ifndef AHMA_SANDBOX_PEERCRED_H
#define AHMA_SANDBOX_PEERCRED_H

/* The descriptor the server passes the accepted connection as. */
#define PEER_CRED_FD 3

/*
 * Prints "UID GID PID\n" of the process that connected the unix stream socket `fd` (SO_PEERCRED:
 * its credentials when it called connect()) and returns 0; returns 125 (EXIT_HELPER) with the
 * reason on stderr when fd is not a connected unix socket. Reads and writes nothing on the socket.
 */
int print_peer_credentials(int fd);

#endif

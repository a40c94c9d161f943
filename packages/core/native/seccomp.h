/* The seccomp half of the sandbox: what Landlock does not cover (see seccomp.c). */
#ifndef AHMA_SANDBOX_SECCOMP_H
#define AHMA_SANDBOX_SECCOMP_H

/* Makes socket(AF_UNIX, ...) fail with EACCES for this process and all it starts; 125 on failure. */
void apply_seccomp(void);

#endif

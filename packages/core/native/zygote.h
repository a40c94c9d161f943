/* Pool mode (`--pool N`, SPEC §5, R4.1): the zygote that forks every command itself (zygote.c). */
#ifndef AHMA_SANDBOX_ZYGOTE_H
#define AHMA_SANDBOX_ZYGOTE_H

#define POOL_MAX 64

/* --pool N: warm units kept ready per mode (1..POOL_MAX); 0 outside pool mode. */
extern int pool_size;
/* --shell PATH: the shell of shell-mode units. */
extern const char *shell_path;

/*
 * Serves run and kill requests on stdin/stdout until a shutdown, then exits 0. Expects what main()
 * sets up first: handled_set blocked, a subreaper in a session of its own, already sandboxed.
 */
void run_zygote(void) __attribute__((noreturn));

#endif

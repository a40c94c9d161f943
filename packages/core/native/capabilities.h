/* Capabilities (SPEC R7.6): a command holds none, even when the server runs as root. */
#ifndef AHMA_SANDBOX_CAPABILITIES_H
#define AHMA_SANDBOX_CAPABILITIES_H

/*
 * Empties every capability set of this process (bounding, ambient, permitted, effective,
 * inheritable), so nothing it starts can get one back, not even root through exec. Dies with 125
 * when a set cannot be emptied.
 */
void drop_capabilities(void);

#endif

/*
 * serve.h - what the scrubber answers and hears inside ofs-server: the
 * handlers of the operations it serves (TASK_START, TASK_POLL, TASK_CTL,
 * VERIFY, REPAIR_FETCH, STALE_CLEAR), registered in the server's
 * operation table, and the catch-up's hooks into the service.
 */
#ifndef OFS_SCRUBBER_SERVE_H
#define OFS_SCRUBBER_SERVE_H

#include "server/service.h"

/* Register the handlers (ops_register); once, before the server serves.
 * The handlers find the scrubber and the catch-up in sv->scrub and
 * sv->recover. 0 or -EINVAL (registered already). */
int scrubber_register_ops(void);

/* Hook the catch-up (sv->recover) into the service: told when a copy is
 * marked behind, and adding its counts to STATS. */
void scrubber_hook_recover(struct service *sv);

#endif

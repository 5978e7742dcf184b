/*
 * stopping.h - a server's shutdown, watched.
 *
 * The steps of a stop (the background tasks, gossip, the store...) are
 * named as each begins. One still running STOPPING_REPORT_S after it
 * began is logged as a warning ("shutdown: still stopping STEP after N
 * s"), and again every STOPPING_REPORT_S, so
 * that a stop that hangs - which a service manager ends with SIGKILL -
 * says where it hung. A stop that goes well logs nothing.
 */
#ifndef OFS_STOPPING_H
#define OFS_STOPPING_H

#define STOPPING_REPORT_S 10

struct stopping;

/* Start watching (a thread that waits), reporting a step every report_s
 * seconds it lasts (STOPPING_REPORT_S in the server). *out NULL when it
 * could not be started: the steps are then not watched, and the calls
 * below do nothing. */
void stopping_start(int report_s, struct stopping **out);

/* The step now under way (a string that outlives the watch). */
void stopping_step(struct stopping *s, const char *step);

/* The stop is over: the watching thread is joined and freed. */
void stopping_end(struct stopping *s);

#endif

/*
 * listener.h - accepting connections and serving their frames.
 *
 * One thread per connection: a slow or malicious client blocks only its
 * own thread (its handshake, too), never the others, and a frame that stalls half-way for
 * LISTENER_STALL_MS is dropped with its connection. A frame whose header is
 * invalid gets an error reply and the connection is closed (the stream
 * cannot be resynchronised); a body that fails to decode gets an error
 * reply and the connection stays open.
 *
 * Shutdown: when stop_fd becomes readable (a signalfd for SIGTERM/SIGINT),
 * the listener stops accepting, lets every request being handled finish and
 * answer, closes idle connections, and returns 0.
 */
#ifndef OFS_LISTENER_H
#define OFS_LISTENER_H

#include <netinet/in.h>

#include "server/service.h"

#define LISTENER_STALL_MS 30000      /* a frame must keep moving */
#define LISTENER_DEFAULT_MAX_CONNS 1024

struct tls_conf;

/*
 * Serve on the already-listening socket listen_fd until stop_fd is
 * readable. With tls (tls.h), every connection is TLS 1.3 with a client
 * certificate of the cluster CA, refused before any frame is read when
 * it has none (a plaintext peer is told so in one plaintext frame); each
 * request is handled as its peer's identity. tls NULL: plaintext, every
 * peer believed (--insecure). Connections beyond max_conns are answered with -EBUSY and
 * closed. Returns 0 after a clean shutdown, or -errno if accepting failed
 * for good.
 */
int listener_run(struct service *sv, struct tls_conf *tls, int listen_fd, int stop_fd,
		 int max_conns);

#endif

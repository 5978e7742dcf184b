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
#define LISTENER_DEFAULT_PER_USER 64    /* connections of one user identity */
#define LISTENER_DEFAULT_IDLE_S 300     /* an idle connection is closed after */
#define LISTENER_HANDSHAKES 64          /* handshakes in flight, at most */
#define LISTENER_HANDSHAKE_MS 5000      /* a whole handshake, from accept */

struct tls_conf;

/*
 * What one server gives its peers (ofs-server run's --max-conns,
 * --max-conns-per-user, --idle-timeout). Nobody can take a server's
 * connections without a certificate: a connection is a handshake first,
 * and handshakes are few, short and shared - LISTENER_HANDSHAKES in
 * flight, each done within LISTENER_HANDSHAKE_MS of its accept; when
 * they are all taken, a new connection takes the place of the oldest
 * handshake of the address with the most in flight, so a flood of
 * silent connections delays a real client by the time of its own
 * handshake, and a burst of one host's own clients is taken whole.
 * A slot (max_conns) is taken once the handshake is done: a server full
 * answers "busy" (OFS_EBUSY, inside TLS) and the client tries another
 * server; so does one user identity past per_user. An authenticated
 * connection idle for idle_s is closed (the client reconnects).
 */
struct listener_limits {
	int max_conns;               /* authenticated connections */
	int per_user;                /* of one user certificate */
	int idle_s;                  /* idle seconds before a connection is closed */
};

/*
 * Serve on the already-listening socket listen_fd until stop_fd is
 * readable. With tls (tls.h), every connection is TLS 1.3 with a client
 * certificate of the cluster CA, refused before any frame is read when
 * it has none (a plaintext peer is told so in one plaintext frame); each
 * request is handled as its peer's identity. tls NULL: plaintext, every
 * peer believed (--insecure). Connections beyond the limits are answered
 * OFS_EBUSY and closed (above). Returns 0 after a clean shutdown, or
 * -errno if accepting failed for good.
 */
int listener_run(struct service *sv, struct tls_conf *tls, int listen_fd, int stop_fd,
		 const struct listener_limits *lim);

#endif

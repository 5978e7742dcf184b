/*
 * net.h - TCP on loopback or any IPv4 address: listen, connect, and whole
 * frames in and out with deadlines.
 *
 * Every wait is bounded: a read or write that makes no progress for
 * timeout_ms fails with -ETIMEDOUT. A frame is received header first; its
 * lengths are validated (frame_decode_hdr) before the payload is allocated.
 */
#ifndef OFS_NET_H
#define OFS_NET_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lib/frame.h"

#define OFS_ADDR_MAX 64   /* "255.255.255.255:65535" and a NUL, with room */

/* Parse "HOST:PORT" (HOST an IPv4 literal or "localhost"; PORT 0..65535).
 * Returns 0 or -EINVAL. */
int net_parse_addr(const char *s, struct sockaddr_in *out);
/* "a.b.c.d:port" of sa into buf. */
void net_format_addr(const struct sockaddr_in *sa, char buf[OFS_ADDR_MAX]);

/* A listening socket bound to addr; *bound receives the actual address
 * (port 0 picks a free one). Returns 0 or -errno. */
int net_listen(const struct sockaddr_in *addr, int *fd, struct sockaddr_in *bound);
/* A connected socket (TCP_NODELAY set; a peer that vanishes ends it
 * within about NET_DEAD_PEER_MS: TCP keepalive and TCP_USER_TIMEOUT).
 * Returns 0, -ETIMEDOUT or -errno. */
#define NET_DEAD_PEER_MS 10000
int net_connect(const char *addr, int timeout_ms, int *fd);

/*
 * Which of n addresses (at most NET_RACE_MAX) accepts a connection first:
 * connects to all of them at once and sets *first to the index of the
 * first that connected within timeout_ms (every socket is closed again).
 * -EINVAL when an address does not parse, else the last connect error
 * (-ETIMEDOUT when none connected in time).
 */
#define NET_RACE_MAX 16
int net_connect_race(const char *const *addrs, size_t n, int timeout_ms, size_t *first);
/* The k-th of n addresses to try after a race that first won: first,
 * then the others in their order. */
static inline size_t net_race_nth(size_t k, size_t first)
{
	return k == 0 ? first : k <= first ? k - 1 : k;
}

/* Read or write exactly n bytes. Returns 0, -ECONNRESET when the peer
 * closed (read), -ETIMEDOUT, or -errno. timeout_ms < 0 waits forever. */
int net_read_full(int fd, void *buf, size_t n, int timeout_ms);
int net_write_full(int fd, const void *buf, size_t n, int timeout_ms);

/* Write every byte of iov[0..n) (iov is consumed). Errors as above. */
int net_writev_full(int fd, struct iovec *iov, int n, int timeout_ms);
/* Wait (poll) until fd is ready for ev (POLLIN, POLLOUT): 0, -ETIMEDOUT
 * after timeout_ms (< 0: forever), -errno. */
int net_wait_fd(int fd, short ev, int timeout_ms);
/* Disable Nagle's algorithm: frames are sent whole, never in pieces. */
void net_set_nodelay(int fd);

/*
 * One end of a connection: a socket, and the TLS session over it (tls.h)
 * or NULL for plaintext (--insecure, and the unit tests' fake servers).
 */
struct tls_sess;
struct net_io {
	int fd;
	struct tls_sess *tls;
};

/* net_read_full and net_writev_full over io. */
int net_io_read_full(struct net_io *io, void *buf, size_t n, int timeout_ms);
int net_io_writev_full(struct net_io *io, struct iovec *iov, int n, int timeout_ms);

/* Send one frame (header, cred, cap and body, each may be empty) in one
 * gathered write. */
int net_send_frame(struct net_io *io, const struct ofs_frame_hdr *h, const void *cred,
		   const void *cap, const void *body, int timeout_ms);

/*
 * Receive one frame into *h and a malloc'd payload (*payload, caller frees;
 * NULL when empty). first_timeout_ms bounds the wait for the first byte;
 * timeout_ms bounds every later stall. Errors: those of net_read_full, of
 * frame_decode_hdr, and -ENOMEM.
 */
int net_recv_frame(struct net_io *io, struct ofs_frame_hdr *h, uint8_t **payload,
		   int first_timeout_ms, int timeout_ms);

#endif

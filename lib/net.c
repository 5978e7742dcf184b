/* net.c - sockets with deadlines and whole frames (see net.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/net.h"
#include "lib/tls.h"

int net_parse_addr(const char *s, struct sockaddr_in *out)
{
	char host[OFS_ADDR_MAX];
	const char *colon = s ? strrchr(s, ':') : NULL;
	char *end;
	long port;
	struct sockaddr_in sa;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host) || !colon[1])
		return -EINVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || port < 0 || port > 65535)
		return -EINVAL;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (strcmp(host, "localhost") == 0)
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -EINVAL;
	*out = sa;
	return 0;
}

void net_format_addr(const struct sockaddr_in *sa, char buf[OFS_ADDR_MAX])
{
	char ip[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	snprintf(buf, OFS_ADDR_MAX, "%s:%u", ip, (unsigned)ntohs(sa->sin_port));
}

int net_listen(const struct sockaddr_in *addr, int *fd, struct sockaddr_in *bound)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	socklen_t len = sizeof(*bound);
	int rc;

	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s, (const struct sockaddr *)addr, sizeof(*addr)) < 0 ||
	    listen(s, 512) < 0 ||
	    getsockname(s, (struct sockaddr *)bound, &len) < 0) {
		rc = -errno;
		close(s);
		return rc;
	}
	*fd = s;
	return 0;
}

int net_wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };

	for (;;) {
		int r = poll(&p, 1, timeout_ms);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/*
 * A peer that vanishes (cut off, its host down) is noticed within about
 * NET_DEAD_PEER_MS, however long its reply may take: bytes it has not
 * acknowledged for that long, or keepalive probes it does not answer,
 * end the connection (ETIMEDOUT). A peer that is only slow (a long fsync)
 * still acknowledges at the TCP level, so the reply timeouts of the
 * callers stay the bound for it.
 */
static void set_dead_peer_timeout(int s)
{
	int one = 1, idle = NET_DEAD_PEER_MS / 2000, intvl = 1, cnt = NET_DEAD_PEER_MS / 2000;
	unsigned int user_ms = NET_DEAD_PEER_MS;

	setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(s, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(s, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(s, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof(user_ms));
}

int net_connect_race(const char *const *addrs, size_t n, int timeout_ms, size_t *first)
{
	struct pollfd p[NET_RACE_MAX];
	size_t idx[NET_RACE_MAX], np = 0;
	int rc = -ETIMEDOUT;

	if (n > NET_RACE_MAX)
		n = NET_RACE_MAX;
	for (size_t i = 0; i < n; i++) {
		struct sockaddr_in sa;
		int s;

		if (net_parse_addr(addrs[i], &sa) != 0) {
			rc = -EINVAL;
			goto out;
		}
		s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s < 0) {
			rc = -errno;
			goto out;
		}
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(s);
			*first = i;                   /* (at once: loopback) */
			rc = 0;
			goto out;
		}
		if (errno != EINPROGRESS) {
			rc = -errno;
			close(s);
			continue;
		}
		p[np].fd = s;
		p[np].events = POLLOUT;
		idx[np++] = i;
	}
	while (np > 0) {
		int r = poll(p, np, timeout_ms), err = 0;
		socklen_t elen = sizeof(err);

		if (r == 0) {
			rc = -ETIMEDOUT;
			break;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		for (size_t k = 0; k < np; k++) {
			if (!p[k].revents)
				continue;
			if (getsockopt(p[k].fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0) {
				*first = idx[k];
				rc = 0;
				goto out;
			}
			rc = err ? -err : -ECONNREFUSED;
			close(p[k].fd);               /* this one failed: race the rest */
			p[k] = p[np - 1];
			idx[k] = idx[np - 1];
			np--;
			k--;
		}
	}
out:
	for (size_t k = 0; k < np; k++)
		close(p[k].fd);
	return rc;
}

int net_connect(const char *addr, int timeout_ms, int *fd)
{
	struct sockaddr_in sa;
	int s, rc, one = 1, err = 0;
	socklen_t elen = sizeof(err);

	rc = net_parse_addr(addr, &sa);
	if (rc)
		return rc;
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EINPROGRESS) {
			rc = -errno;
			goto fail;
		}
		rc = net_wait_fd(s, POLLOUT, timeout_ms);
		if (rc)
			goto fail;
		if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &elen) < 0) {
			rc = -errno;
			goto fail;
		}
		if (err) {
			rc = -err;
			goto fail;
		}
	}
	if (fcntl(s, F_SETFL, 0) < 0) {
		rc = -errno;
		goto fail;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	set_dead_peer_timeout(s);
	*fd = s;
	return 0;
fail:
	close(s);
	return rc;
}

int net_read_full(int fd, void *buf, size_t n, int timeout_ms)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < n) {
		int rc = net_wait_fd(fd, POLLIN, timeout_ms);
		if (rc)
			return rc;
		ssize_t r = recv(fd, p + got, n - got, MSG_DONTWAIT);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	return 0;
}

int net_write_full(int fd, const void *buf, size_t n, int timeout_ms)
{
	struct iovec iov = { (void *)buf, n };

	return net_writev_full(fd, &iov, 1, timeout_ms);
}

int net_io_read_full(struct net_io *io, void *buf, size_t n, int timeout_ms)
{
	return io->tls ? tls_read_full(io->tls, buf, n, timeout_ms)
		       : net_read_full(io->fd, buf, n, timeout_ms);
}

int net_io_writev_full(struct net_io *io, struct iovec *iov, int n, int timeout_ms)
{
	return io->tls ? tls_writev_full(io->tls, iov, n, timeout_ms)
		       : net_writev_full(io->fd, iov, n, timeout_ms);
}

int net_send_frame(struct net_io *io, const struct ofs_frame_hdr *h, const void *cred,
		   const void *cap, const void *body, int timeout_ms)
{
	uint8_t hdr[OFS_FRAME_HDR];
	struct iovec iov[4];
	int n = 0;

	/* One gathered send: separate small writes would meet Nagle's
	 * algorithm and the peer's delayed ACK (40 ms a frame). */
	frame_encode_hdr(h, hdr);
	iov[n++] = (struct iovec){ hdr, sizeof(hdr) };
	if (h->cred_len)
		iov[n++] = (struct iovec){ (void *)cred, h->cred_len };
	if (h->cap_len)
		iov[n++] = (struct iovec){ (void *)cap, h->cap_len };
	if (h->body_len)
		iov[n++] = (struct iovec){ (void *)body, h->body_len };
	return net_io_writev_full(io, iov, n, timeout_ms);
}

int net_writev_full(int fd, struct iovec *iov, int n, int timeout_ms)
{
	while (n > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t r = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				int rc = net_wait_fd(fd, POLLOUT, timeout_ms);
				if (rc)
					return rc;
				continue;
			}
			return -errno;
		}
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

void net_set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int net_recv_frame(struct net_io *io, struct ofs_frame_hdr *h, uint8_t **payload,
		   int first_timeout_ms, int timeout_ms)
{
	uint8_t hdr[OFS_FRAME_HDR];
	struct ofs_frame_hdr t;
	uint8_t *p = NULL;
	size_t n;
	int rc;

	rc = net_io_read_full(io, hdr, 1, first_timeout_ms);
	if (!rc)
		rc = net_io_read_full(io, hdr + 1, sizeof(hdr) - 1, timeout_ms);
	if (rc)
		return rc;
	rc = frame_decode_hdr(hdr, &t);
	if (rc)
		return rc;
	n = frame_payload_len(&t);
	if (n) {
		p = malloc(n);
		if (!p)
			return -ENOMEM;
		rc = net_io_read_full(io, p, n, timeout_ms);
		if (rc) {
			free(p);
			return rc;
		}
	}
	*h = t;
	*payload = p;
	return 0;
}

/* test_tls.c - the cluster CA (lib/ca.c) and TLS sessions (lib/tls.c),
 * with real OpenSSL over a socket pair, and a connection's handshake
 * tried again (lib/conn.c) over loopback. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ca.h"
#include "lib/conn.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

struct fx {
	char dir[256];
	char why[TLS_WHY_MAX];
};

static char *path(struct fx *f, const char *rel)
{
	static char buf[8][512];
	static int k;
	char *b = buf[k++ % 8];

	snprintf(b, 512, "%s/%s", f->dir, rel);
	return b;
}

static void issue(struct fx *f, const char *ca, const char *out, const struct ident *id, long secs)
{
	if (ca_issue(path(f, ca), id, 30, secs, path(f, out), 0, f->why))
		fail_msg("issue %s: %s", out, f->why);
}

static struct tls_conf *load(struct fx *f, const char *rel)
{
	struct tls_conf *c = NULL;

	if (tls_conf_load(path(f, rel), &c, f->why))
		fail_msg("load %s: %s", rel, f->why);
	return c;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ident srv = { .role = IDENT_SERVER }, alice = { .role = IDENT_USER },
		     ops = { .role = IDENT_ADMIN };

	snprintf(f->dir, sizeof(f->dir), "%s/test_tls.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(ca_init(path(f, "ca"), f->why), 0);
	assert_int_equal(ca_init(path(f, "ca2"), f->why), 0);
	memset(srv.sid.b, 0x5a, sizeof(srv.sid.b));
	strcpy(alice.name, "alice");
	alice.uid = 1000;
	alice.gids[0] = 1000;
	alice.gids[1] = 27;
	alice.ngids = 2;
	strcpy(ops.name, "ops");
	issue(f, "ca", "srv", &srv, 0);
	issue(f, "ca", "alice", &alice, 0);
	issue(f, "ca2", "eve", &ops, 0);
	issue(f, "ca", "old", &ops, -3600);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* A server session on one end of a socket pair, in a thread. */
struct acceptor {
	struct tls_conf *conf;
	int fd, rc;
	struct tls_sess *t;
	pthread_t th;
};

static void *accept_main(void *arg)
{
	struct acceptor *a = arg;

	a->rc = tls_accept(a->conf, a->fd, 5000, &a->t);
	return NULL;
}

static void pair(struct acceptor *a, struct tls_conf *srv, int *cfd)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	memset(a, 0, sizeof(*a));
	a->conf = srv;
	a->fd = sv[0];
	*cfd = sv[1];
	assert_int_equal(pthread_create(&a->th, NULL, accept_main, a), 0);
}

struct writer {
	struct tls_sess *t;
	struct iovec *iov;
	int n, rc;
};

static void *write_main(void *arg)
{
	struct writer *w = arg;

	w->rc = tls_writev_full(w->t, w->iov, w->n, 5000);
	return NULL;
}

static void test_both_ends_prove_who_they_are_and_bytes_cross(void **state)
{
	struct fx *f = *state;
	struct tls_conf *srv = load(f, "srv"), *cli = load(f, "alice");
	struct tls_sess *t = NULL;
	struct acceptor a;
	static uint8_t big[300000], got[300000];
	uint8_t hdr[4] = { 1, 2, 3, 4 };
	struct iovec iov[2] = { { hdr, 4 }, { big, sizeof(big) } };
	int cfd;

	assert_int_equal(tls_conf_self(srv)->role, IDENT_SERVER);
	assert_int_equal(tls_conf_self(cli)->uid, 1000);
	pair(&a, srv, &cfd);
	assert_int_equal(tls_connect(cli, cfd, 5000, &t), 0);
	pthread_join(a.th, NULL);
	assert_int_equal(a.rc, 0);
	/* each sees the other's certificate identity */
	assert_int_equal(tls_peer(t)->role, IDENT_SERVER);
	assert_int_equal(tls_peer(t)->sid.b[3], 0x5a);
	assert_int_equal(tls_peer(a.t)->role, IDENT_USER);
	assert_string_equal(tls_peer(a.t)->name, "alice");
	assert_int_equal(tls_peer(a.t)->ngids, 2);
	assert_int_equal(tls_peer(a.t)->gids[1], 27);
	/* (the fingerprint is the certificate's: not zero) */
	{
		static const uint8_t zero[IDENT_FPR_LEN];
		assert_memory_not_equal(tls_peer(a.t)->fpr, zero, IDENT_FPR_LEN);
	}
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	/* a header and a body bigger than a record and than the socket
	 * pair holds: written by a thread while this one reads */
	{
		struct writer w = { t, iov, 2, -1 };
		pthread_t th;
		uint8_t h[4];
		assert_int_equal(pthread_create(&th, NULL, write_main, &w), 0);
		assert_int_equal(tls_read_full(a.t, h, 4, 5000), 0);
		assert_int_equal(tls_read_full(a.t, got, sizeof(got), 5000), 0);
		pthread_join(th, NULL);
		assert_int_equal(w.rc, 0);
		assert_memory_equal(h, hdr, 4);
		assert_memory_equal(got, big, sizeof(big));
	}
	/* and a small frame the other way (coalesced into one record) */
	{
		struct iovec back[2] = { { hdr, 4 }, { big, 100 } };
		assert_int_equal(tls_writev_full(a.t, back, 2, 5000), 0);
		assert_int_equal(tls_read_full(t, got, 104, 5000), 0);
		assert_memory_equal(got, hdr, 4);
		assert_memory_equal(got + 4, big, 100);
		assert_false(tls_pending(t));
	}
	tls_free(t);
	tls_free(a.t);
	close(cfd);
	close(a.fd);
	tls_conf_free(srv);
	tls_conf_free(cli);
}

static void test_another_cas_certificate_is_refused_by_both_ends(void **state)
{
	struct fx *f = *state;
	struct tls_conf *srv = load(f, "srv"), *eve = load(f, "eve");
	struct tls_sess *t = NULL;
	struct acceptor a;
	int cfd;

	/* eve's CA is ca2: she does not trust the cluster's server, and the
	 * server does not trust her */
	pair(&a, srv, &cfd);
	assert_int_equal(tls_connect(eve, cfd, 5000, &t), -OFS_EUNTRUSTED);
	assert_null(t);
	pthread_join(a.th, NULL);
	assert_true(tls_is_refusal(a.rc));
	assert_null(a.t);
	close(cfd);
	close(a.fd);
	/* and a certificate of ca2 checked against the cluster's CA is
	 * refused when loaded */
	{
		char cmd[2048];
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path(f, "ca/ca.crt"), path(f, "eve/ca.pem"));
		assert_int_equal(system(cmd), 0);
	}
	tls_conf_free(eve);
	eve = NULL;
	assert_int_equal(tls_conf_load(path(f, "eve"), &eve, f->why), -OFS_EUNTRUSTED);
	assert_non_null(strstr(f->why, "certificate not trusted"));
	tls_conf_free(srv);
}

static void test_a_client_wants_a_server_certificate(void **state)
{
	struct fx *f = *state;
	struct tls_conf *notsrv = load(f, "alice"), *cli = load(f, "alice");
	struct tls_sess *t = NULL;
	struct acceptor a;
	int cfd;

	/* a user's certificate answering as a server is refused */
	pair(&a, notsrv, &cfd);
	assert_int_equal(tls_connect(cli, cfd, 5000, &t), -OFS_EUNTRUSTED);
	assert_null(t);
	close(cfd);
	pthread_join(a.th, NULL);
	tls_free(a.t);
	close(a.fd);
	tls_conf_free(notsrv);
	tls_conf_free(cli);
}

static void test_plaintext_is_not_tls(void **state)
{
	struct fx *f = *state;
	struct tls_conf *srv = load(f, "srv");
	struct acceptor a;
	int cfd;

	pair(&a, srv, &cfd);
	assert_int_equal(write(cfd, "OFS1 plaintext frame, no handshake....", 38), 38);
	pthread_join(a.th, NULL);
	assert_int_equal(a.rc, -OFS_ETLS);
	close(cfd);
	close(a.fd);
	tls_conf_free(srv);
}

/* A listener that closes the first `drop` connections it accepts as
 * soon as they come (a server flooded: it drops or answers "busy"), and
 * shakes hands on the next; it counts what it accepted. */
struct dropper {
	struct tls_conf *conf;
	int lfd, drop, accepted, rc;
	struct tls_sess *t;
	pthread_t th;
};

static void *dropper_main(void *arg)
{
	struct dropper *d = arg;

	for (;;) {
		int fd = accept(d->lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		if (d->accepted++ < d->drop) {
			close(fd);
			continue;
		}
		d->rc = tls_accept(d->conf, fd, 5000, &d->t);
		tls_free(d->t);
		close(fd);
		return NULL;
	}
}

/* conn_open to a dropper that drops `drop`: its result. */
static int open_through(struct fx *f, struct dropper *d, int drop)
{
	struct sockaddr_in any, bound;
	struct tls_conf *cli = load(f, "alice");
	struct conn *c = NULL;
	char addr[OFS_ADDR_MAX];
	int rc;

	memset(d, 0, sizeof(*d));
	d->conf = load(f, "srv");
	d->drop = drop;
	assert_int_equal(net_parse_addr("127.0.0.1:0", &any), 0);
	assert_int_equal(net_listen(&any, &d->lfd, &bound), 0);
	net_format_addr(&bound, addr);
	assert_int_equal(pthread_create(&d->th, NULL, dropper_main, d), 0);
	conn_security(cli, false);
	rc = conn_open(addr, &c);
	conn_close(c);
	shutdown(d->lfd, SHUT_RDWR);
	pthread_join(d->th, NULL);
	close(d->lfd);
	conn_security(NULL, false);
	tls_conf_free(cli);
	tls_conf_free(d->conf);
	return rc;
}

/* A handshake a server cuts short after accepting is tried again, twice
 * at most: two drops are survived, three are not. */
static void test_a_handshake_cut_short_is_tried_again(void **state)
{
	struct fx *f = *state;
	struct dropper d;

	assert_int_equal(open_through(f, &d, 2), 0);
	assert_int_equal(d.accepted, 3);
	assert_int_equal(d.rc, 0);
	assert_int_not_equal(open_through(f, &d, 5), 0);
	assert_int_equal(d.accepted, 3);
}

static void test_bad_identities_are_refused_when_loaded(void **state)
{
	struct fx *f = *state;
	struct tls_conf *c = NULL;

	assert_int_equal(tls_conf_load(path(f, "old"), &c, f->why), -OFS_ECERTEXPIRED);
	assert_non_null(strstr(f->why, "certificate expired"));
	assert_int_equal(chmod(path(f, "alice/key.pem"), 0640), 0);
	assert_int_equal(tls_conf_load(path(f, "alice"), &c, f->why), -EPERM);
	assert_non_null(strstr(f->why, "chmod 600"));
	assert_int_equal(chmod(path(f, "alice/key.pem"), 0600), 0);
	assert_int_equal(tls_conf_load(path(f, "nobody"), &c, f->why), -ENOENT);
	assert_null(c);
	/* a CA is made once; an identity is not overwritten */
	assert_int_equal(ca_init(path(f, "ca"), f->why), -EEXIST);
	{
		struct ident x = { .role = IDENT_ADMIN };
		strcpy(x.name, "x");
		assert_int_equal(ca_issue(path(f, "ca"), &x, 1, 0, path(f, "alice"), 0, f->why),
				 -EEXIST);
		assert_int_equal(ca_issue(path(f, "ca"), &x, 0, 0, path(f, "x"), 0, f->why), -EINVAL);
		strcpy(x.name, "-x");
		assert_int_equal(ca_issue(path(f, "ca"), &x, 1, 0, path(f, "x"), 0, f->why), -EINVAL);
	}
	{
		struct stat st;
		assert_int_equal(stat(path(f, "ca/ca.key"), &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		assert_int_equal(stat(path(f, "ca/cap.key"), &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		assert_int_equal(stat(path(f, "srv/key.pem"), &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
	}
}

/* How many names dir holds (-1: it cannot be read). */
static int count_names(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_a_ca_or_identity_goes_only_into_a_new_or_empty_directory_of_ones_own(void **state)
{
	struct fx *f = *state;
	struct ident x = { .role = IDENT_ADMIN };
	struct stat st;
	mode_t old;

	strcpy(x.name, "x");
	/* a directory that holds anything is refused, and left as it was */
	assert_int_equal(mkdir(path(f, "full"), 0700), 0);
	assert_int_equal(symlink(path(f, "victim"), path(f, "full/cert.pem")), 0);
	assert_int_equal(ca_issue(path(f, "ca"), &x, 1, 0, path(f, "full"), 0, f->why), -EEXIST);
	assert_non_null(strstr(f->why, "not empty"));
	assert_int_equal(ca_init(path(f, "full"), f->why), -EEXIST);
	assert_int_equal(count_names(path(f, "full")), 1);
	assert_int_equal(lstat(path(f, "victim"), &st), -1);
	/* beside other files (a server's identity/): only an identity's own
	 * files must be absent */
	assert_int_equal(unlink(path(f, "full/cert.pem")), 0);
	assert_int_equal(mkdir(path(f, "full/other"), 0700), 0);
	assert_int_equal(ca_issue(path(f, "ca"), &x, 1, 0, path(f, "full"), CA_ISSUE_BESIDE, f->why),
			 0);
	assert_int_equal(ca_issue(path(f, "ca"), &x, 1, 0, path(f, "full"), CA_ISSUE_BESIDE, f->why),
			 -EEXIST);
	/* an empty directory of one's own is taken, and made 0700; its files
	 * are 0600 whatever the umask */
	assert_int_equal(mkdir(path(f, "open"), 0755), 0);
	assert_int_equal(chmod(path(f, "open"), 0755), 0);
	old = umask(0);
	assert_int_equal(ca_init(path(f, "open"), f->why), 0);
	assert_int_equal(ca_issue(path(f, "open"), &x, 1, 0, path(f, "new/id"), 0, f->why), 0);
	umask(old);
	assert_int_equal(stat(path(f, "open"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(path(f, "open/ca.crt"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(path(f, "new"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(path(f, "new/id/cert.pem"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(count_names(path(f, "new/id")), 3);
	/* another's directory is refused (root can make one to try) */
	if (geteuid() != 0)
		return;
	assert_int_equal(mkdir(path(f, "theirs"), 0700), 0);
	assert_int_equal(chown(path(f, "theirs"), 65534, 65534), 0);
	assert_int_equal(ca_init(path(f, "theirs"), f->why), -EPERM);
	assert_non_null(strstr(f->why, "not yours"));
	assert_int_equal(ca_issue(path(f, "ca"), &x, 1, 0, path(f, "theirs"), 0, f->why), -EPERM);
	assert_int_equal(count_names(path(f, "theirs")), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_both_ends_prove_who_they_are_and_bytes_cross,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_another_cas_certificate_is_refused_by_both_ends,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_handshake_cut_short_is_tried_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_client_wants_a_server_certificate, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plaintext_is_not_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_identities_are_refused_when_loaded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_ca_or_identity_goes_only_into_a_new_or_empty_directory_of_ones_own,
			setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

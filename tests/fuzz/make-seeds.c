/*
 * make-seeds.c - write the seed corpora of the on-disk decoders' fuzz
 * targets, each made by the encoder that writes those bytes in OFS (so a
 * change to an encoding changes its seeds, and a seed that no longer
 * decodes points at a decoder that drifted from its encoder):
 *
 *   corpus_records/    LMDB values (store/records.h)
 *   corpus_changelog/  change notes and CHANGES lists, from a real LMDB
 *   corpus_names/      incoming/ and quarantine/ names (store/bstream.h)
 *   corpus_capkeys/    key file (cap_keys_format) and wire forms
 *   corpus_jobargs/    a job's and a schedule's arguments (pbj/jobargs.h)
 *
 * Usage: make-seeds DIR (make fuzz-seeds: DIR = tests/fuzz). Exits 1 on
 * any failure. The seeds are deterministic: rerunning changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/fdio.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "pbj/jobargs.h"
#include "store/bstream.h"
#include "store/changelog.h"
#include "store/kv.h"
#include "store/records.h"

static const char *top;
static int failed;

static void fail(const char *what, int rc)
{
	fprintf(stderr, "make-seeds: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	failed = 1;
}

/* Write n bytes at p as DIR/corpus_<target>/<name>. */
static void seed(const char *target, const char *name, const void *p, size_t n)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/corpus_%s", top, target);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		fail(path, errno);
		return;
	}
	snprintf(path, sizeof(path), "%s/corpus_%s/%s", top, target, name);
	int rc = fdio_write_file(path, p, n, 0644);
	if (rc)
		fail(path, rc);
}

/* The bytes of w as a seed, then w emptied. */
static void seed_w(const char *target, const char *name, struct wbuf *w)
{
	if (wbuf_error(w))
		fail(name, wbuf_error(w));
	else
		seed(target, name, w->data, w->len);
	w->len = 0;
}

static struct ofs_oid mk_oid(uint8_t seed_byte)
{
	struct ofs_oid o;

	for (int i = 0; i < OFS_OID_LEN; i++)
		o.b[i] = (uint8_t)(seed_byte + 7 * i);
	return o;
}

static struct ofs_handle mk_handle(uint8_t s, uint8_t nsids)
{
	struct ofs_handle h;

	memset(&h, 0, sizeof(h));
	h.oid = mk_oid(s);
	h.nsids = nsids;
	for (uint8_t i = 0; i < nsids; i++)
		memcpy(h.sids[i].b, mk_oid((uint8_t)(s + 100 + i)).b, OFS_OID_LEN);
	return h;
}

static void mk_attr(struct ofs_attr *a, uint8_t type, uint16_t nparts)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->version = 3;
	a->size = 1 << 20;
	a->mode = 0644;
	a->uid = a->gid = 1000;
	a->ctime_ns = INT64_C(1700000000000000000);
	a->mtime_ns = INT64_C(1700000001000000000);
	a->chunk_size = 1 << 20;
	a->backref.owner = mk_oid(0x40);
	snprintf(a->backref.name, sizeof(a->backref.name), "file.txt");
	a->nsids = 2;
	memcpy(a->sids[0].b, mk_oid(0x50).b, OFS_OID_LEN);
	memcpy(a->sids[1].b, mk_oid(0x51).b, OFS_OID_LEN);
	a->nstale = 1;
	memcpy(a->stale[0].b, mk_oid(0x51).b, OFS_OID_LEN);
	snprintf(a->dist, sizeof(a->dist), "simple_stripe");
	a->strip_size = 65536;
	a->replicas = 2;
	a->confidence = 1;
	a->nparts = nparts;
	for (uint16_t i = 0; i < nparts; i++)
		a->parts[i] = mk_handle((uint8_t)(0x60 + i), 2);
}

static void records(void)
{
	static const char *const attrs[] = { "rack=r1", "zone=z2" };
	static const uint8_t types[] = { OFS_OBJ_METAFILE, OFS_OBJ_DFILE, OFS_OBJ_DIRECTORY,
					 OFS_OBJ_DIRDATA };
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_server *e = calloc(1, sizeof(*e));
	uint8_t key[REC_CHUNK_KEY], skey[REC_STALE_KEY];
	struct ofs_handle h = mk_handle(10, 3);
	struct ofs_dirent d = { .type = OFS_OBJ_METAFILE, .handle = mk_handle(12, 2) };
	struct ofs_digest dg = checksum_buf("chunk", 5);
	char reason[REC_REASON_LEN], name[32];
	struct wbuf w;

	if (!a || !e) {
		fail("records", -ENOMEM);
		free(a);
		free(e);
		return;
	}
	wbuf_init(&w);
	for (size_t i = 0; i < sizeof(types); i++) {
		mk_attr(a, types[i], types[i] == OFS_OBJ_METAFILE || types[i] == OFS_OBJ_DIRECTORY ?
				     2 : 0);
		if (rec_encode_object(&w, a) == 0) {
			snprintf(name, sizeof(name), "object-%u", (unsigned)types[i]);
			seed_w("records", name, &w);
		}
	}
	if (rec_encode_dirent(&w, &d) == 0)
		seed_w("records", "dirent", &w);
	seed("records", "digest", dg.b, sizeof(dg.b));
	rec_chunk_key(mk_oid(3), 7, key);
	seed("records", "chunk-key", key, sizeof(key));
	if (rec_encode_attrs(&w, attrs, 2) == 0)
		seed_w("records", "meta-attrs", &w);
	wbuf_handle(&w, &h);
	seed_w("records", "meta-root", &w);
	e->sid = h.sids[0];
	snprintf(e->address, sizeof(e->address), "127.0.0.1:7000");
	e->weight_milli = 1000;
	e->nattrs = 1;
	snprintf(e->attrs[0], sizeof(e->attrs[0]), "rack=r1");
	e->version = 4;
	e->root = h;
	e->root_birth_ns = INT64_C(1700000000000000000);
	e->self_version = 2;
	e->root_version = 1;
	if (rec_encode_server(&w, e) == 0) {
		seed("records", "server", w.data, w.len);
		seed("records", "server-old", w.data, w.len - 16);   /* (no per-part versions) */
		w.len = 0;
	}
	rec_stale_key(mk_oid(20), e->sid, skey);
	seed("records", "stale-key", skey, sizeof(skey));
	snprintf(reason, sizeof(reason), "behind per 0a0b: " REC_MISSED_FMT "dirent_create not applied",
		 42ULL);
	seed("records", "stale-reason", reason, strlen(reason));
	seed("records", "move", e->sid.b, OFS_OID_LEN);
	wbuf_free(&w);
	free(a);
	free(e);
}

struct notes {
	struct ofs_oid oid;
	struct wbuf *w;
	uint64_t since, upto;
};

static int note_txn(struct kv_txn *t, void *arg)
{
	struct notes *n = arg;
	int rc = changelog_note(t, n->oid, 1, "docs", 4, "\x01\x02", 2, false);

	if (!rc)
		rc = changelog_note(t, n->oid, 2, "readme", 6, "", 0, false);
	if (!rc)
		rc = changelog_note(t, n->oid, 3, "docs", 4, NULL, 0, true);
	return rc;
}

static int encode_txn(struct kv_txn *t, void *arg)
{
	struct notes *n = arg;
	uint8_t range[16];

	for (int i = 0; i < 8; i++) {
		range[i] = (uint8_t)(n->since >> (56 - 8 * i));
		range[8 + i] = (uint8_t)(n->upto >> (56 - 8 * i));
	}
	wbuf_bytes(n->w, range, sizeof(range));
	return changelog_encode(t, n->oid, n->since, n->upto, n->w);
}

static void changelog(void)
{
	char dir[] = "/tmp/make-seeds.XXXXXX", path[64];
	struct rec_note set = { .kind = REC_NOTE_SET, .k = (const uint8_t *)"k", .kn = 1,
				.v = (const uint8_t *)"value", .vn = 5 };
	struct rec_note del = { .kind = REC_NOTE_REMOVED, .k = (const uint8_t *)"k", .kn = 1 };
	struct notes n = { .oid = mk_oid(30) };
	struct kv *kv = NULL;
	struct wbuf w;
	int rc;

	wbuf_init(&w);
	if (rec_encode_note(&w, &set) == 0)
		seed_w("changelog", "note-set", &w);
	if (rec_encode_note(&w, &del) == 0)
		seed_w("changelog", "note-removed", &w);
	if (!mkdtemp(dir)) {
		fail("mkdtemp", errno);
		wbuf_free(&w);
		return;
	}
	snprintf(path, sizeof(path), "%s/kv", dir);
	rc = kv_open(path, true, false, &kv);
	if (!rc)
		rc = kv_update(kv, note_txn, &n);
	n.w = &w;
	for (uint64_t since = 0; !rc && since <= 3; since++) {
		char name[32];
		n.since = since;
		n.upto = 3;
		rc = kv_view(kv, encode_txn, &n);
		snprintf(name, sizeof(name), "list-%llu-3", (unsigned long long)since);
		if (!rc)
			seed_w("changelog", name, &w);
	}
	if (rc)
		fail("changelog", rc);
	kv_close(kv);
	snprintf(path, sizeof(path), "%s/kv/data.mdb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/kv/lock.mdb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/kv", dir);
	rmdir(path);
	rmdir(dir);
	wbuf_free(&w);
}

static void names(void)
{
	struct bstream_qname q = { .oid = mk_oid(40), .seconds = 1700000000, .version = 3,
				   .rest = "repair" };
	char name[256];

	oid_to_hex(q.oid, name);
	seed("names", "incoming", name, strlen(name));
	if (bstream_quarantine_name(&q, name, sizeof(name)) == 0)
		seed("names", "quarantine", name, strlen(name));
	q.rest = "removed-elsewhere.2";
	q.version = 18446744073709551615ULL;
	if (bstream_quarantine_name(&q, name, sizeof(name)) == 0)
		seed("names", "quarantine-taken", name, strlen(name));
}

static void capkeys(void)
{
	struct cap_key k[2] = { { .id = 7 }, { .id = 6 } };
	char text[CAP_KEYS_TEXT_MAX];
	struct wbuf w;
	size_t n;

	for (int i = 0; i < CAP_KEY_LEN; i++) {
		k[0].key[i] = (uint8_t)(i * 5 + 1);
		k[1].key[i] = (uint8_t)(255 - i);
	}
	n = cap_keys_format(k, 1, text);
	seed("capkeys", "file-one", text, n);
	n = cap_keys_format(k, 2, text);
	seed("capkeys", "file-two", text, n);
	wbuf_init(&w);
	cap_keys_encode(&w, k, 2);
	seed_w("capkeys", "wire", &w);
	cap_keys_pull_encode(&w, 7);
	seed_w("capkeys", "pull", &w);
	wbuf_free(&w);
}

static void jobargs(void)
{
	static const char *const sched[] = { "scrub", "--rate", "10M", "--path", "/data" };
	struct pbj_job_args *a = calloc(1, sizeof(*a));
	char text[PBJ_ARGS_LEN];
	int rc;

	if (!a) {
		fail("jobargs", -ENOMEM);
		return;
	}
	a->servers[a->nservers++] = "0a0b0c0d0e0f10111213141516171819";
	a->paths[a->npaths++] = "/data";
	a->paths[a->npaths++] = "/home/alice";
	a->max_repairs = 1000;
	a->metadata_only = true;
	if ((rc = pbj_job_args_encode(a, text)) == 0)
		seed("jobargs", "job-scrub", text, strlen(text));
	memset(a, 0, sizeof(*a));
	a->from_job = 12;
	a->max_repairs = 50;
	if (!rc && (rc = pbj_job_args_encode(a, text)) == 0)
		seed("jobargs", "job-repair", text, strlen(text));
	memset(a, 0, sizeof(*a));
	a->threshold = 10;
	if (!rc && (rc = pbj_job_args_encode(a, text)) == 0)
		seed("jobargs", "job-rebalance", text, strlen(text));
	if (!rc && (rc = pbj_sched_args_encode(5, sched, text)) == 0)
		seed("jobargs", "schedule", text, strlen(text));
	if (rc)
		fail("jobargs", rc);
	free(a);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make-seeds DIR\n");
		return 2;
	}
	top = argv[1];
	records();
	changelog();
	names();
	capkeys();
	jobargs();
	return failed;
}

/* points.c - does an owner point at an object? (see points.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "backref/points.h"
#include "backref/rules.h"
#include "server/ops.h"
#include "server/service.h"

struct find_child {
	struct ofs_oid child;
	bool found;
};

static int find_child_entry(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct find_child *fc = arg;

	(void)name;
	if (oid_eq(d->handle.oid, fc->child)) {
		fc->found = true;
		return 1;
	}
	return 0;
}

/* Does the local dirdata dd hold an entry name -> child (or child under
 * another name)? */
static int points_dirdata(struct store *s, struct ofs_oid dd, const struct ofs_req *q,
			  uint8_t *ans)
{
	struct ofs_dirent d;
	struct find_child fc = { .child = q->child };
	bool more = false;
	int rc = q->name[0] ? store_dirent_lookup(s, dd, q->name, &d) : -ENOENT;

	if (rc == 0 && oid_eq(d.handle.oid, q->child)) {
		*ans = POINTS_YES;
		return 0;
	}
	if (rc && rc != -ENOENT)
		return rc;
	/* Rare (the named entry is not the child): look for the child under
	 * another name, in the first page of entries only - a wider search
	 * is the namespace check's job. */
	rc = store_dirent_list(s, dd, NULL, OFS_MAX_LIST, find_child_entry, &fc, &more);
	if (rc)
		return rc;                /* -ENOENT: the dirdata itself is not here */
	*ans = fc.found ? POINTS_ELSEWHERE : POINTS_NO;
	return 0;
}

int points_check(struct store *s, struct replicator *rep, const struct ofs_req *q,
		 bool forwarded, uint8_t *ans)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_getattr(s, q->oid, a);
	if (rc)
		goto out;
	*ans = br_points(a, q->child, a->type == OFS_OBJ_METAFILE ? (long)q->offset : -1);
	if (*ans == POINTS_BUILDING)
		goto out;
	switch (a->type) {
	case OFS_OBJ_DIRDATA:
		rc = points_dirdata(s, q->oid, q, ans);
		break;
	case OFS_OBJ_DIRECTORY:
		/* An entry: in the directory's dirdata, here or on its servers;
		 * first the one its name hashes to, where it belongs. */
		for (uint16_t at = 0; at < a->nparts && *ans == POINTS_NO && !rc; at++) {
			uint16_t i = (uint16_t)((ofs_name_hash(q->name) + at) % a->nparts);
			uint8_t sub = POINTS_NO;
			int r = points_dirdata(s, a->parts[i].oid, q, &sub);
			if (r == 0) {
				*ans = sub;
				if (sub != POINTS_NO)
					continue;
				/* This copy of the dirdata lacks the entry: so
				 * may this copy alone (its siblings are asked). */
			}
			if ((r && r != -ENOENT) || forwarded || !rep) {
				rc = r == -ENOENT ? 0 : r;
				continue;
			}
			{
				struct ofs_req fq = *q;
				struct replica_result res[OFS_MAX_REPLICAS];
				struct wbuf w;
				size_t n = a->parts[i].nsids < OFS_MAX_REPLICAS ? a->parts[i].nsids
										 : OFS_MAX_REPLICAS;
				fq.op = OFS_OP_POINTS;
				fq.oid = a->parts[i].oid;
				wbuf_init(&w);
				rc = proto_encode_req(&w, &fq);
				if (!rc)
					rc = replica_forward(rep, OFS_OP_POINTS, w.data, w.len,
							     a->parts[i].sids, n, res);
				wbuf_free(&w);
				for (size_t k = 0; !rc && k < n; k++) {
					if (!res[k].rc && res[k].len == 1 && *ans == POINTS_NO)
						*ans = res[k].body[0];
					free(res[k].body);
				}
			}
		}
		break;
	default:
		break;
	}
out:
	free(a);
	return rc;
}


static int op_points(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	uint8_t ans = 0;
	int rc = points_check(sv->store, sv->rep, q, q->forwarded, &ans);

	if (!rc)
		wbuf_u8(reply, ans);
	return rc;
}

int points_register_ops(void)
{
	return ops_register(OFS_OP_POINTS, op_points);
}

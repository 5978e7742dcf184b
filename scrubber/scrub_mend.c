/* scrub_mend.c - repair mode: a bad copy fetched again, structure mended
 * through libofs as a client of this server (see scrub_impl.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scrubber/scrub_impl.h"

/* A fetch or a move that meets its object held (changed meanwhile,
 * another fetch or move of it at work) tries again after a backoff, up to
 * a budget; then the last error stands in the finding. */
#define MEND_RETRY_FIRST_MS 250
#define MEND_RETRY_CAP_MS 2000
#define FETCH_RETRY_BUDGET_MS 5000
#define MOVE_RETRY_BUDGET_MS 7500

/* ---- repair mode -------------------------------------------------------- */

static bool dry(const struct scrub_task *k)
{
	return (k->flags & OFS_TASK_F_DRYRUN) != 0;
}

/* The outcome of a fetch as a finding's repair state and action. */
static void set_outcome(struct ofs_task_finding *f, int rc, const struct ofs_fetch_reply *fr,
			const char *where)
{
	memset(&f->source, 0, sizeof(f->source));
	if (rc) {
		f->repair = OFS_REPAIR_FAILED;
		snprintf(f->action, sizeof(f->action), "fetching a good copy %s failed: %s", where,
			 ofs_strerror(rc));
		return;
	}
	switch (fr->outcome) {
	case OFS_FETCH_DONE:
		f->repair = OFS_REPAIR_DONE;
		f->source = fr->source;
		snprintf(f->action, sizeof(f->action), "copy %s replaced: %s", where, fr->detail);
		break;
	case OFS_FETCH_GOOD:
		f->repair = OFS_REPAIR_DONE;
		snprintf(f->action, sizeof(f->action), "nothing to do %s: %s", where, fr->detail);
		break;
	case OFS_FETCH_RECONCILED:
		f->repair = OFS_REPAIR_DONE;
		f->source = fr->source;
		snprintf(f->action, sizeof(f->action), "no copy was current; reconciled %s: %s",
			 where, fr->detail);
		break;
	case OFS_FETCH_WOULD:
		f->repair = OFS_REPAIR_WOULD;
		f->source = fr->source;
		snprintf(f->action, sizeof(f->action), "would replace the copy %s: %s", where,
			 fr->detail);
		break;
	default:
		f->repair = OFS_REPAIR_LEFT;
		snprintf(f->action, sizeof(f->action), "left %s: %s", where, fr->detail);
		break;
	}
}

/* A kind a copy fetched from a good one repairs. */
static bool is_copy_kind(int kind)
{
	switch (kind) {
	case OFS_FINDING_CHECKSUM_MISMATCH: case OFS_FINDING_SIZE_MISMATCH:
	case OFS_FINDING_UNREADABLE: case OFS_FINDING_MISSING_REPLICA:
	case OFS_FINDING_STALE_REPLICA: case OFS_FINDING_RECORD_CORRUPT:
	case OFS_FINDING_REPLICA_CONFLICT: case OFS_FINDING_KEYVAL_MISMATCH:
		return true;
	default:
		return false;
	}
}

/* Fetch a good copy onto target (this server or a sibling); a finding's
 * outcome. Unreachable servers stop the task (it is retried later). */
int scrub_fix_copy(struct scrub_task *k, struct ofs_oid oid, const struct ofs_attr *a, bool have_attr,
		    struct ofs_sid target, struct ofs_task_finding *f, struct ofs_fetch_reply *fr,
		    bool known_bad)
{
	unsigned flags = (dry(k) ? OFS_FETCH_DRYRUN : 0) | (known_bad ? OFS_FETCH_LOCALBAD : 0);
	struct scrubber *sc = k->sc;
	char hex[OFS_OID_HEX], where[64];
	struct backoff bo;
	int rc;

	sid_to_hex(target, hex);
	snprintf(where, sizeof(where), "on %.32s", hex);
	if ((rc = task_take_budget(k->t)) != 0)
		return rc;
	backoff_init(&bo, MEND_RETRY_FIRST_MS, MEND_RETRY_CAP_MS);
	for (;;) {
		rc = repair_fetch_at(sc->s, sc->t, sc->r, target, oid, have_attr ? a->sids : NULL,
				     have_attr ? a->nsids : 0, flags, task_rate(k->t), "repair",
				     scrub_throttle, k, fr);
		if (rc != -EAGAIN && rc != -EBUSY)
			break;
		/* changed meanwhile, or another fetch of it runs there: again,
		 * after a backoff (the last error stands once it is spent) */
		int w = task_backoff(k->t, &bo, FETCH_RETRY_BUDGET_MS);
		if (w == -ECANCELED)
			return w;
		if (w)
			break;
	}
	if (rc == -OFS_EUNREACHABLE || rc == -ETIMEDOUT || rc == -ECONNREFUSED ||
	    rc == -ECONNRESET || rc == -ECANCELED)
		return rc;
	set_outcome(f, rc, fr, where);
	if (!rc && (fr->outcome == OFS_FETCH_DONE || fr->outcome == OFS_FETCH_GOOD ||
		    fr->outcome == OFS_FETCH_RECONCILED) && !dry(k))
		store_stale_del(sc->s, oid, target, fr->version);   /* (the target told the others) */
	if (!rc && (fr->outcome == OFS_FETCH_DONE || fr->outcome == OFS_FETCH_RECONCILED))
		task_count_repair(k->t);
	return 0;
}

/* ---- mending structure (through libofs, as a client of this server) --------- */

static int task_client(struct scrub_task *k, struct ofs_client **out)
{
	struct ofs_server e;
	int rc;

	if (!k->client) {
		rc = sidtab_get(k->sc->t, store_sid(k->sc->s), &e);
		if (rc)
			return rc;
		const char *addr = e.address;
		rc = ofs_client_open(&addr, 1, &k->client);
		if (rc)
			return rc;
	}
	*out = k->client;
	return 0;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A name in /lost+found that says what the object was and where. */
static void lost_name(const struct task_obj *w, char *out, size_t n)
{
	char oh[OFS_OID_HEX], ow[OFS_OID_HEX];

	oid_to_hex(w->oid, oh);
	oid_to_hex(w->a.backref.owner, ow);
	switch (w->a.type) {
	case OFS_OBJ_DFILE:
		snprintf(out, n, "stripe%u.%s.of-%s", w->a.backref.stripe, oh, ow);
		break;
	case OFS_OBJ_DIRDATA:
		snprintf(out, n, "dirdata.%s.of-%s", oh, ow);
		break;
	default:
		snprintf(out, n, "%.150s.%s.in-%.16s", w->a.backref.name[0] ? w->a.backref.name : "noname",
			 oh, ow);
		break;
	}
}

/* A finding's outcome once its action is written: done (or would be,
 * in a dry run), or failed with the reason in front of the action. An
 * unreachable server stops the task (it is retried). */
static int mend_outcome(struct scrub_task *k, struct ofs_task_finding *f, int rc)
{
	if (rc) {
		char why[OFS_TASK_DETAIL_LEN];
		snprintf(why, sizeof(why), "%s", f->action);
		f->repair = OFS_REPAIR_FAILED;
		snprintf(f->action, sizeof(f->action), "failed (%s): %.400s", ofs_strerror(rc), why);
		return rc == -OFS_EUNREACHABLE ? rc : 0;
	}
	if (dry(k)) {
		f->repair = OFS_REPAIR_WOULD;
		return 0;
	}
	f->repair = OFS_REPAIR_DONE;
	task_count_repair(k->t);
	return 0;
}

/* Make dirdata dd of directory dir again, empty, on its servers: the
 * entries come back from their objects' back references. */
static int remake_dirdata(struct ofs_client *c, const struct ofs_handle *dd, struct ofs_oid dir)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	a->type = OFS_OBJ_DIRDATA;
	a->mode = 0755;
	a->uid = (uint32_t)getuid();
	a->gid = (uint32_t)getgid();
	a->backref.owner = dir;
	a->replicas = dd->nsids;
	a->confidence = (uint8_t)(dd->nsids / 2 + 1);
	rc = ofs_recreate(c, dd, a);
	free(a);
	return rc == -EEXIST ? 0 : rc;
}

/* Put part in slot of the owner's layout, if the slot still holds was:
 * that one part, on each copy under its own lock (OFS_ATTR_PART with the
 * part it replaces), so a change of another part of the owner meanwhile
 * (a move, another mend) is not undone, as a rewrite of the whole layout
 * read earlier would undo it. -ENOENT: the slot holds something else now. */
static int put_in_slot(struct ofs_client *c, const struct ofs_handle *owner, uint32_t slot,
		       const struct ofs_handle *part, const struct ofs_handle *was)
{
	struct ofs_attr *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	q->nparts = 2;
	q->parts[0] = *part;
	q->parts[1] = *was;
	q->backref.stripe = slot;
	rc = ofs_setattr_handle(c, owner, OFS_ATTR_PART, q);
	free(q);
	return rc;
}

/*
 * Point an orphan's owner at it again, from its back reference: a
 * metafile or directory gets its entry back under its recorded name; a
 * dfile (dirdata) takes back its stripe (its directory's slot) when what
 * is there now exists nowhere. 1: nothing to relink to (the name or the
 * slot is taken): /lost+found instead.
 */
int scrub_relink(struct scrub_task *k, struct ofs_client *c, const struct task_obj *w,
		  const struct mend *m, char *act, size_t n)
{
	struct ofs_attr *oa = malloc(sizeof(*oa));
	struct ofs_handle own = { .oid = w->a.backref.owner, .nsids = 1 };
	struct ofs_handle me = { .oid = w->oid, .nsids = w->a.nsids };
	char hex[OFS_OID_HEX];
	int rc;

	if (!oa)
		return -ENOMEM;
	own.sids[0] = m->owner_at;
	memcpy(me.sids, w->a.sids, sizeof(me.sids));
	oid_to_hex(own.oid, hex);
	rc = ofs_getattr(c, &own, oa);
	if (rc)
		goto out;
	own.nsids = oa->nsids;
	memcpy(own.sids, oa->sids, sizeof(own.sids));
	if (w->a.type == OFS_OBJ_METAFILE || w->a.type == OFS_OBJ_DIRECTORY) {
		struct ofs_dirent d = { .type = w->a.type, .handle = me };
		struct ofs_handle dd, dd1;
		const char *name = w->a.backref.name;
		rc = 1;
		if (oa->type != OFS_OBJ_DIRECTORY || !name[0])
			goto out;
		snprintf(act, n, "%sentry '%s' in directory %s made again from its back reference",
			 dry(k) ? "would have its " : "", name, hex);
		if (dry(k)) {
			rc = 0;
			goto out;
		}
		/* Through the dirdata's primary only: a copy that answers in
		 * its place while the primary says "not here" (the dirdata
		 * being made again by another repair, below) would apply the
		 * entry to copies that do not hold the dirdata yet. */
		rc = ofs_dirdata_for(oa, name, &dd);
		dd1 = dd;
		dd1.nsids = 1;
		if (!rc)
			rc = ofs_set_entry(c, &dd1, name, &d, 0);
		if (rc == -ENOENT) {
			/* its dirdata is gone too: made again, empty */
			rc = remake_dirdata(c, &dd, own.oid);
			if (!rc)
				rc = ofs_set_entry(c, &dd1, name, &d, 0);
		}
		if (rc == -EEXIST)
			rc = 1;              /* the name is taken: lost+found */
	} else {
		uint16_t slot = UINT16_MAX;
		uint8_t want = w->a.type == OFS_OBJ_DFILE ? OFS_OBJ_METAFILE : OFS_OBJ_DIRECTORY;
		rc = 1;
		if (oa->type != want)
			goto out;
		for (uint16_t i = 0; i < oa->nparts; i++) {
			struct ofs_summary sm;
			struct ofs_sid where;
			int state;
			if (w->a.type == OFS_OBJ_DFILE && i != w->a.backref.stripe)
				continue;
			rc = scrub_locate(k, &oa->parts[i], &sm, &where, &state);
			if (rc)
				goto out;
			rc = 1;
			if (state == WHERE_NOWHERE) {
				slot = i;
				break;
			}
		}
		if (slot == UINT16_MAX)
			goto out;            /* its place is taken: lost+found */
		snprintf(act, n, "%s%s %u of %s again (what was there exists nowhere)",
			 dry(k) ? "would be " : "", want == OFS_OBJ_METAFILE ? "stripe" : "dirdata",
			 slot, hex);
		if (dry(k)) {
			rc = 0;
			goto out;
		}
		rc = put_in_slot(c, &own, slot, &me, &oa->parts[slot]);
	}
out:
	free(oa);
	return rc;
}

/* A directory's entries or parts mended: a dangling dirdata made again,
 * a second owner's entry removed, an entry's type rewritten. */
static int mend_entries(struct scrub_task *k, const struct task_obj *w, struct ofs_task_finding *f,
			const struct mend *m, const char *oh)
{
	struct ofs_handle self = { .oid = w->oid, .nsids = w->a.nsids };
	struct ofs_client *c = NULL;
	int rc;

	memcpy(self.sids, w->a.sids, sizeof(self.sids));
	if (m->what == MEND_DANGLING_PART)
		snprintf(f->action, sizeof(f->action), "%sdirdata %s made again, empty; its "
			 "entries come back from their objects' back references",
			 dry(k) ? "would be: " : "", oh);
	else if (m->what == MEND_SECOND_OWNER)
		snprintf(f->action, sizeof(f->action), "%sentry '%s' removed from this "
			 "directory; the owner its back reference names keeps %s",
			 dry(k) ? "would be: " : "", m->name, oh);
	else
		snprintf(f->action, sizeof(f->action), "%sentry '%s' rewritten as a %s, "
			 "what the object's own record says", dry(k) ? "would be: " : "",
			 m->name, ofs_type_name(m->type));
	if (dry(k))
		return mend_outcome(k, f, 0);
	if ((rc = task_take_budget(k->t)) != 0)
		return rc;
	rc = task_client(k, &c);
	if (!rc && m->what == MEND_DANGLING_PART) {
		rc = remake_dirdata(c, &m->child, w->oid);
	} else if (!rc && m->what == MEND_SECOND_OWNER) {
		struct ofs_dirent gone;
		rc = ofs_unlink_entry(c, &self, m->name, &gone);
		if (rc == -ENOENT)
			rc = 0;      /* removed meanwhile */
	} else if (!rc) {
		struct ofs_dirent d = { .type = m->type, .handle = m->child };
		rc = ofs_set_entry(c, &self, m->name, &d, OFS_DIRENT_REPLACE);
	}
	return mend_outcome(k, f, rc);
}

/* A copy on a server out of service moved to a new one. */
static int mend_move(struct scrub_task *k, const struct task_obj *w, struct ofs_task_finding *f,
		     const struct mend *m)
{
	struct move_result mr;
	struct ofs_server fe;
	struct backoff bo;
	int rc = 0;

	if (sidtab_get(k->sc->t, m->from, &fe) == -ENOENT) {
		/* Unknown here: it may be new (not gossiped yet) rather
		 * than gone. Moving copies off a live server is not undone
		 * easily; a human says which by marking it out. */
		f->repair = OFS_REPAIR_LEFT;
		snprintf(f->action, sizeof(f->action),
			 "left: that server is not in this server's table; if it was retired, "
			 "mark it out (ofs-pbj server set SID --state out) and repair again");
		return 0;
	}
	if (w->decode_rc || w->a.nsids == 0) {
		f->repair = OFS_REPAIR_LEFT;
		snprintf(f->action, sizeof(f->action), "%s", "left: its record does not decode here");
		return 0;
	}
	if (!dry(k) && (rc = task_take_budget(k->t)) != 0)
		return rc;
	backoff_init(&bo, MEND_RETRY_FIRST_MS, MEND_RETRY_CAP_MS);
	for (;;) {
		rc = move_copy(k->sc->s, k->sc->t, k->sc->r, w->oid, &w->a, m->from, NULL,
			       dry(k) ? MOVE_F_DRYRUN : 0, task_rate(k->t), scrub_throttle, k, &mr);
		if (rc != -EAGAIN && rc != -EBUSY)
			break;
		/* (another move of it holds it: a backoff, jittered so that two
		 * servers waiting for each other try again apart) */
		int wr = task_backoff(k->t, &bo, MOVE_RETRY_BUDGET_MS);
		if (wr == -ECANCELED)
			return wr;
		if (wr)
			break;
	}
	if (rc == -OFS_EUNREACHABLE || rc == -ECANCELED)
		return rc;
	if (rc) {
		f->repair = OFS_REPAIR_FAILED;
		snprintf(f->action, sizeof(f->action), "move failed (%s): %.400s", ofs_strerror(rc),
			 mr.detail);
		return 0;
	}
	f->repair = dry(k) ? OFS_REPAIR_WOULD : OFS_REPAIR_DONE;
	f->source = mr.source;
	snprintf(f->action, sizeof(f->action), "%s", mr.detail);
	if (!dry(k))
		task_count_repair(k->t);
	return 0;
}

/* An owner's pointer rewritten to name the servers of the object's own
 * record. */
static int mend_repoint(struct scrub_task *k, struct ofs_task_finding *f, const struct mend *m)
{
	/* (the object's record read again: it may have moved on) */
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_handle nh = { .oid = m->child.oid };
	int rc;

	if (!a)
		return -ENOMEM;
	rc = scrub_child_attr(k, &m->child, a);
	if (!rc) {
		nh.nsids = a->nsids;
		memcpy(nh.sids, a->sids, sizeof(nh.sids));
	}
	snprintf(f->action, sizeof(f->action), "%sthe pointer rewritten to name the servers "
		 "of the object's own record", dry(k) ? "would be: " : "");
	if (!rc && !dry(k) && (rc = task_take_budget(k->t)) == 0)
		rc = move_repoint_owner(k->sc->t, k->sc->r, a, &nh);
	free(a);
	if (rc == -OFS_EUNREACHABLE || rc == -ECANCELED)
		return rc;
	return mend_outcome(k, f, rc);
}

/* A back reference rewritten, a dangling entry removed, or an orphan
 * relinked to its owner or moved to /lost+found. */
static int mend_pointer(struct scrub_task *k, const struct task_obj *w, struct ofs_task_finding *f,
			const struct mend *m, const char *oh)
{
	struct ofs_client *c = NULL;
	char name[OFS_NAME_MAX + 1], path[OFS_NAME_MAX + 16];
	int rc = 0;

	if (m->what == MEND_ORPHAN) {
		int64_t t = w->a.mtime_ns > w->a.ctime_ns ? w->a.mtime_ns : w->a.ctime_ns;
		if (scrub_young(k->sc, &w->a)) {
			f->repair = OFS_REPAIR_LEFT;
			snprintf(f->action, sizeof(f->action),
				 "left: changed %llds ago, within the %llds grace (a create may be "
				 "in progress); a later repair moves it",
				 (long long)((wall_ns() - t) / 1000000000LL), k->sc->orphan_grace_s);
			return 0;
		}
		if (m->relink) {
			if (!dry(k) && (rc = task_take_budget(k->t)) != 0)
				return rc;
			rc = task_client(k, &c);
			if (!rc)
				rc = scrub_relink(k, c, w, m, f->action, sizeof(f->action));
			if (rc != 1)
				return mend_outcome(k, f, rc);
			rc = 0;              /* nothing to relink to: lost+found */
		}
		lost_name(w, name, sizeof(name));
		snprintf(path, sizeof(path), "/lost+found/%s", name);
	}
	if (dry(k)) {
		f->repair = OFS_REPAIR_WOULD;
		if (m->what == MEND_BACKREF)
			snprintf(f->action, sizeof(f->action),
				 "would rewrite its back reference from the forward pointer (stripe %u, name '%s')",
				 m->want.stripe, m->want.name);
		else if (m->what == MEND_DANGLING_ENTRY)
			snprintf(f->action, sizeof(f->action), "would remove entry '%s' (it names %s)",
				 m->name, oh);
		else
			snprintf(f->action, sizeof(f->action), "would move it to %s", path);
		return 0;
	}
	if ((rc = task_take_budget(k->t)) != 0)
		return rc;
	rc = task_client(k, &c);
	if (!rc && m->what == MEND_BACKREF) {
		rc = ofs_set_backref(c, &m->child, &m->want);
		snprintf(f->action, sizeof(f->action),
			 "back reference rewritten from the forward pointer (stripe %u, name '%s')",
			 m->want.stripe, m->want.name);
	} else if (!rc && m->what == MEND_DANGLING_ENTRY) {
		struct ofs_handle dd = { .oid = w->oid, .nsids = w->a.nsids };
		struct ofs_dirent gone;
		memcpy(dd.sids, w->a.sids, sizeof(dd.sids));
		rc = ofs_unlink_entry(c, &dd, m->name, &gone);
		if (rc == -ENOENT)
			rc = 0;              /* removed meanwhile */
		snprintf(f->action, sizeof(f->action), "entry '%s' removed from its directory (it named %s)",
			 m->name, oh);
	} else if (!rc) {
		struct ofs_handle h = { .oid = w->oid, .nsids = w->a.nsids };
		memcpy(h.sids, w->a.sids, sizeof(h.sids));
		rc = ofs_mkdir(c, "/lost+found");
		if (rc == -EEXIST)
			rc = 0;
		if (!rc && (w->a.type == OFS_OBJ_DFILE || w->a.type == OFS_OBJ_DIRDATA))
			rc = ofs_adopt_part(c, path, &h, w->a.type, w->a.size);
		else if (!rc)
			rc = ofs_link_object(c, path, &h, w->a.type);
		snprintf(f->action, sizeof(f->action), "moved to %s", path);
	}
	if (rc) {
		char why[OFS_TASK_DETAIL_LEN];
		snprintf(why, sizeof(why), "%s", f->action);
		f->repair = OFS_REPAIR_FAILED;
		snprintf(f->action, sizeof(f->action), "failed (%s): %.400s", ofs_strerror(rc), why);
		if (rc == -OFS_EUNREACHABLE)
			return rc;           /* the task is retried */
		return 0;
	}
	f->repair = OFS_REPAIR_DONE;
	task_count_repair(k->t);
	return 0;
}


/*
 * A metafile (directory) whose stripe (dirdata) is another owner's - the
 * one its back reference names, which keeps it - gets its own: a copy of
 * the dfile's bytes (a new, empty dirdata: the entries belong to the
 * owner their back references name), put in its slot if the slot still
 * holds the shared part.
 */
static int own_part(struct scrub_task *k, const struct task_obj *w, struct ofs_task_finding *f,
		    const struct mend *m)
{
	bool file = w->a.type == OFS_OBJ_METAFILE;
	struct ofs_handle self = { .oid = w->oid, .nsids = w->a.nsids }, fresh = { .nsids = 0 };
	struct ofs_backref br = { .owner = w->oid, .stripe = file ? m->stripe : 0 };
	struct ofs_client *c = NULL;
	struct ofs_attr *a;
	char oh[OFS_OID_HEX], nh[OFS_OID_HEX];
	int rc;

	memcpy(self.sids, w->a.sids, sizeof(self.sids));
	oid_to_hex(m->child.oid, oh);
	if (dry(k)) {
		if (file)
			snprintf(f->action, sizeof(f->action), "would be: stripe %u of this file given "
				 "its own copy of %s's %llu bytes; the owner its back reference names "
				 "keeps %s", m->stripe, oh, (unsigned long long)m->size, oh);
		else
			snprintf(f->action, sizeof(f->action), "would be: dirdata %u of this directory "
				 "made anew, empty; the owner its back reference names keeps %s and the "
				 "entries in it", m->stripe, oh);
		return mend_outcome(k, f, 0);
	}
	if ((rc = task_take_budget(k->t)) != 0)
		return rc;
	if (!(a = malloc(sizeof(*a))))
		return -ENOMEM;
	rc = task_client(k, &c);
	if (!rc)
		rc = ofs_getattr(c, &self, a);
	if (!rc && (m->stripe >= a->nparts || !oid_eq(a->parts[m->stripe].oid, m->child.oid))) {
		free(a);
		snprintf(f->action, sizeof(f->action), "nothing to do: slot %u no longer names %s",
			 m->stripe, oh);
		return mend_outcome(k, f, 0);
	}
	if (!rc)
		rc = ofs_copy_part(c, &m->child, file ? OFS_OBJ_DFILE : OFS_OBJ_DIRDATA, m->size,
				   &br, &fresh);
	if (!rc) {
		rc = put_in_slot(c, &self, m->stripe, &fresh, &m->child);
		if (rc)
			ofs_remove_part(c, &fresh);
	}
	free(a);
	snprintf(nh, sizeof(nh), "?");
	if (!rc)
		oid_to_hex(fresh.oid, nh);
	if (file)
		snprintf(f->action, sizeof(f->action), "stripe %u of this file given its own copy of "
			 "%s (%llu bytes): %s; the owner its back reference names keeps %s",
			 m->stripe, oh, (unsigned long long)m->size, nh, oh);
	else
		snprintf(f->action, sizeof(f->action), "dirdata %u of this directory made anew, empty "
			 "(%s); the owner its back reference names keeps %s and the entries in it",
			 m->stripe, nh, oh);
	return mend_outcome(k, f, rc);
}

static int mend_structure(struct scrub_task *k, const struct task_obj *w, struct ofs_task_finding *f,
			  const struct mend *m)
{
	char oh[OFS_OID_HEX];

	memset(&f->source, 0, sizeof(f->source));
	oid_to_hex(m->child.oid, oh);
	if (m->what == MEND_NONE ||
	    (m->what == MEND_DANGLING_PART && w->a.type == OFS_OBJ_METAFILE)) {
		f->repair = OFS_REPAIR_LEFT;
		snprintf(f->action, sizeof(f->action), "%s",
			 m->what == MEND_NONE ? "not repaired: no action for it"
			 : "left: that stripe's bytes are lost; restore the file from elsewhere "
			   "(it is never truncated silently)");
		return 0;
	}
	if (m->what == MEND_SECOND_OWNER && w->a.type != OFS_OBJ_DIRDATA)
		return own_part(k, w, f, m);
	if (m->what == MEND_DANGLING_PART || m->what == MEND_SECOND_OWNER ||
	    m->what == MEND_ENTRY_TYPE)
		return mend_entries(k, w, f, m, oh);
	if (m->what == MEND_MOVE)
		return mend_move(k, w, f, m);
	if (m->what == MEND_REPOINT)
		return mend_repoint(k, f, m);
	return mend_pointer(k, w, f, m, oh);
}

/* Repair what scrub_one found about w (held), then queue the findings
 * with what was done. */
int scrub_repair_object(struct scrub_task *k, const struct task_obj *w)
{
	struct ofs_sid me = store_sid(k->sc->s);
	bool have_attr = w->decode_rc == 0, local_done = false;
	struct ofs_fetch_reply local_fr;
	int local_rc = 0, rc = 0;

	for (size_t i = 0; i < k->nheld && !rc; i++) {
		struct ofs_task_finding *f = &k->held[i];
		struct ofs_sid other = f->source;
		struct ofs_fetch_reply fr;

		if (!is_copy_kind(f->kind) || k->hm[i].what == MEND_MOVE ||
		    k->hm[i].what == MEND_REPOINT) {
			rc = mend_structure(k, w, f, &k->hm[i]);
			continue;
		}
		if (!sid_eq(f->server, me)) {
			rc = scrub_fix_copy(k, w->oid, &w->a, have_attr, f->server, f, &fr, false);
			continue;
		}
		/* This server's copy: one fetch for all its findings. */
		if (!local_done) {
			/* a copy this scrub has just seen fail its checksums
			 * or lack bytes is not read a second time */
			bool bad = f->kind == OFS_FINDING_CHECKSUM_MISMATCH ||
				   f->kind == OFS_FINDING_SIZE_MISMATCH ||
				   f->kind == OFS_FINDING_UNREADABLE ||
				   f->kind == OFS_FINDING_MISSING_REPLICA;
			local_rc = scrub_fix_copy(k, w->oid, &w->a, have_attr, me, f, &local_fr, bad);
			if (local_rc)
				return local_rc;
			local_done = true;
			if ((f->kind == OFS_FINDING_REPLICA_CONFLICT || f->kind == OFS_FINDING_KEYVAL_MISMATCH) &&
			    local_fr.outcome == OFS_FETCH_GOOD && !sid_is_zero(other)) {
				/* This copy verifies: the differing one is the bad one. */
				rc = scrub_fix_copy(k, w->oid, &w->a, have_attr, other, f, &fr, false);
			}
			continue;
		}
		{
			char hex[OFS_OID_HEX], where[64];
			sid_to_hex(me, hex);
			snprintf(where, sizeof(where), "on %.32s", hex);
			set_outcome(f, 0, &local_fr, where);
		}
	}
	if (rc)
		return rc;
	for (size_t i = 0; i < k->nheld && !rc; i++)
		rc = task_enqueue(k->t, &k->held[i]);
	k->nheld = 0;
	return rc;
}

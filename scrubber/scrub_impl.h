/*
 * scrub_impl.h - what the scrub kind's files share (scrubber/scrub.h is
 * its promise to the server): the task's state, the settling of
 * findings, the batch's questions asked ahead, and the functions one
 * part calls in another. The parts:
 *   scrub.c           the kind's rows, findings and their settling, the
 *                     walk of one object, repair mode's stale phase;
 *   scrub_copies.c    the copies compared (summaries asked ahead a batch
 *                     at a time, the lead, the server table's states);
 *   scrub_structure.c back references and forward pointers checked;
 *   scrub_mend.c      repair mode: a copy fetched, structure mended;
 *   scrub_join.c      a metadata-only check of every object as a join
 *                     (streams between servers; the rest the old way).
 */
#ifndef OFS_SCRUB_IMPL_H
#define OFS_SCRUB_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/ofs.h"
#include "client/ofs_repair.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "rebalancer/move.h"
#include "scrubber/scrub.h"
#include "backref/points.h"
#include "backref/rules.h"
#include "server/repair.h"
#include "server/taskhost.h"
#include "store/records.h"

/* What repair needs to mend a structure finding (repair mode only). */
enum { MEND_NONE, MEND_BACKREF, MEND_DANGLING_ENTRY, MEND_DANGLING_PART, MEND_ORPHAN,
       MEND_MOVE, MEND_SECOND_OWNER, MEND_ENTRY_TYPE, MEND_REPOINT };
struct mend {
	int what;
	struct ofs_handle child;         /* BACKREF: the object; DANGLING: what was named */
	struct ofs_backref want;         /* BACKREF: what the forward pointer says */
	char name[OFS_NAME_MAX + 1];     /* DANGLING_ENTRY: the entry */
	struct ofs_oid ref;              /* the finding's other object */
	struct ofs_sid from;             /* MOVE: the server out of service */
	bool relink;                     /* ORPHAN: its owner is there to point again */
	struct ofs_sid owner_at;         /* ORPHAN, SECOND_OWNER: a server holding the owner */
	uint8_t type;                    /* ENTRY_TYPE: the object's type */
	uint32_t stripe;                 /* SECOND_OWNER: the owner's stripe (slot) */
	uint64_t size;                   /* SECOND_OWNER: the shared dfile's length */
};

/*
 * Settling. A finding that compares this copy with others, or an object
 * with its owner or parts, may be a change caught half done: a write on
 * its way to the copies, a create between its objects and its entry, a
 * rename between its entry and its back reference, a remove between its
 * entry and its objects. Such a finding is a suspect until a second look
 * settle_s later (the server's --settle-ms, default SCRUB_SETTLE_MS)
 * sees it again with the same evidence (for a copy behind:
 * still behind the version the first look saw elsewhere); a second look
 * that sees different evidence (the object kept changing) looks again, up
 * to SETTLE_ROUNDS times, and then lets it go for the next scrub. Every
 * client step of such a change follows the one before in milliseconds.
 */
#define SETTLE_ROUNDS 5
#define SUSPECT_SEEN 8           /* findings remembered per suspect object */
enum { PH_REPORT, PH_FIRST, PH_CONFIRM };
struct seen {
	struct ofs_sid server;
	uint8_t kind;                    /* enum ofs_finding_kind */
	char detail[OFS_TASK_DETAIL_LEN];
	uint64_t ahead;                  /* stale_replica: the newer version seen */
};
struct suspect {
	struct ofs_oid oid;
	struct ofs_oid prev;             /* the task's cursor when it was first seen */
	double due;
	int rounds;
	uint8_t n;
	struct seen s[SUSPECT_SEEN];
};

/*
 * The sibling copies' summaries of a walked batch, asked for with one
 * SUMMARY_MANY per sibling server (all at once) instead of one SUMMARY
 * per object: the first look at each object of the batch compares with
 * these. ok[i][j]: the answer for batch object i from the server named
 * by its handle's sids[j]. A second look always asks afresh.
 */
struct prefetched {
	struct ofs_summary sm[TASKHOST_BATCH][OFS_MAX_REPLICAS];
	bool ok[TASKHOST_BATCH][OFS_MAX_REPLICAS];
	struct ofs_summary mine[TASKHOST_BATCH];     /* this server's copies it leads */
	bool mine_ok[TASKHOST_BATCH];
	bool lead_alive[TASKHOST_BATCH];             /* another server leads it, and
	                                            answered: it compares */
	uint8_t owner[TASKHOST_BATCH];               /* its owner points back, as this
	                                            server's records show it
	                                            (STORE_POINTS_*; UNSURE: ask) */
};
_Static_assert((int)STORE_POINTS_YES == (int)POINTS_YES &&
	       (int)STORE_POINTS_ELSEWHERE == (int)POINTS_ELSEWHERE &&
	       (int)STORE_POINTS_BUILDING == (int)POINTS_BUILDING, "store and POINTS answers agree");

/* Children's summaries asked ahead (SUMMARY_MANY of each child's primary),
 * sorted by OID: what locate would find first, for a first look. */
struct kid {
	struct ofs_oid oid;
	struct ofs_sid from;             /* the child's primary, which answered */
	struct ofs_summary sm;
};
struct kidtab {
	struct kid *v;
	size_t n, cap;
};

/* The join (scrub_join.c). */
#define JOIN_MAX_PEERS 64        /* servers in one join (more: the old way) */
#define JOIN_SEEN_S 10           /* a server not heard from this long is not
                                    in the join */
#define JOIN_WAIT_S 20           /* no peer said anything this long: stop
                                    waiting (what it would tell is checked
                                    the old way) */
struct join;

/* A scrub task's own state (the host keeps the rest: server/taskhost.h). */
struct scrub_task {
	struct task *t;                  /* the host's handle */
	struct scrubber *sc;
	uint32_t flags;                  /* OFS_TASK_F_* */
	struct ofs_oid cur;              /* object being scrubbed */
	bool holding;                    /* repair mode: findings of the object
	                                    wait in held until it is repaired */
	struct ofs_task_finding *held;
	struct mend *hm;                 /* held[i]'s mending information */
	size_t nheld, capheld;
	const struct mend *next_mend;    /* for the finding being added */
	int phase;                       /* PH_*: how settling findings are taken */
	struct suspect fresh;            /* the object being walked, first look */
	struct suspect *sus;             /* waiting for their second look, due order */
	size_t nsus, capsus;
	struct suspect *look;            /* PH_FIRST: being filled; PH_CONFIRM: the
	                                    first look's */
	struct suspect *again;           /* PH_CONFIRM: seen again, but changed */
	uint64_t ev_ahead;               /* stale_replica being added: the newer
	                                    version; ev_lag: this copy's */
	uint64_t ev_lag;
	bool copies_differ;              /* compare_siblings: this copy's content
	                                    is in question (no structure check) */
	struct ofs_client *client;       /* to this server, for structure repairs */
	uint32_t part_at;                /* check_structure: the part being checked */
	struct prefetched *pre;          /* the walked batch's sibling summaries */
	struct kidtab kids;              /* the batch's parts, asked ahead */
	struct kidtab page_kids;         /* a dirdata's page of entries, asked ahead */
	long pre_at;                     /* the object being scrubbed: its index in
	                                    the batch (-1: none, ask) */
	struct server_state {            /* the server table's states, read once */
		struct ofs_sid sid;      /* per batch for its first looks */
		uint8_t state;
	} *states;
	size_t nstates;
	bool join_wanted;                /* a metadata-only check of every object */
	struct join *j;                  /* NULL: not joining */
	bool join_failed;                /* the join's walk lost records (memory) */
};

struct scrubber {
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	long long quarantine_s;          /* keep quarantined copies this long */
	long long orphan_grace_s;        /* orphans younger than this are left */
	double settle_s;                 /* a suspect's second look comes this much later */
	struct mailbox *mb;              /* the join's records (NULL: no join) */
	struct task_kind kind;           /* registered with the host */
};

/* ---- across the parts --------------------------------------------------- */

/* scrub_locate's *state */
enum { WHERE_NOWHERE, WHERE_FOUND, WHERE_UNKNOWN };

int scrub_add_finding(struct scrub_task *k, struct ofs_sid server, struct ofs_oid oid,
		       int kind, const char *detail);
int scrub_add_finding_other(struct scrub_task *k, struct ofs_sid server, struct ofs_oid oid,
			     int kind, const char *detail, struct ofs_sid other);
void scrub_at(struct scrub_task *k, struct ofs_oid oid);
int scrub_check_one(struct scrub_task *k, const struct task_obj *w, uint64_t *bytes);
int scrub_check_dirdata(struct scrub_task *k, const struct task_obj *w, bool *bad);
int scrub_check_structure(struct scrub_task *k, const struct task_obj *w);
int scrub_child_attr(struct scrub_task *k, const struct ofs_handle *child, struct ofs_attr *a);
int scrub_compare_siblings(struct scrub_task *k, const struct task_obj *w);
long scrub_first_look(const struct scrub_task *k);
void scrub_join_batch(struct scrub_task *k, const struct task_obj *w, size_t nw);
int scrub_join_begin(struct scrub_task *k);
int scrub_join_end(struct scrub_task *k);
void scrub_join_release(struct scrub_task *k);
bool scrub_lead_of(const struct scrub_task *k, const struct ofs_attr *a, struct ofs_sid *lead);
int scrub_fix_copy(struct scrub_task *k, struct ofs_oid oid, const struct ofs_attr *a, bool have_attr,
		    struct ofs_sid target, struct ofs_task_finding *f, struct ofs_fetch_reply *fr,
		    bool known_bad);
const struct kid *scrub_kid_of(const struct scrub_task *k, const struct ofs_handle *child);
int scrub_local_finding(int kind, const char *detail, void *arg);
int scrub_locate(struct scrub_task *k, const struct ofs_handle *h, struct ofs_summary *sm,
		  struct ofs_sid *where, int *state);
double scrub_now(const struct scrub_task *k);
void scrub_prefetch(struct scrub_task *k, const struct task_obj *w, size_t nw);
void scrub_prefetch_kids(struct scrub_task *k, struct kidtab *kt, const struct ofs_handle *h, size_t n);
void scrub_prefetch_owners(struct scrub_task *k, const struct task_obj *w, size_t nw);
void scrub_prefetch_parts(struct scrub_task *k, const struct task_obj *w, size_t nw);
int scrub_relink(struct scrub_task *k, struct ofs_client *c, const struct task_obj *w,
		  const struct mend *m, char *act, size_t n);
int scrub_repair_object(struct scrub_task *k, const struct task_obj *w);
int scrub_server_state(const struct scrub_task *k, struct ofs_sid sid, bool batch, uint8_t *state);
void scrub_take_states(struct scrub_task *k);
int scrub_throttle(uint64_t bytes, void *arg);
bool scrub_young(const struct scrubber *sc, const struct ofs_attr *a);

#endif

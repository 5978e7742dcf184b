/* inspect.c - print one stored object (see inspect.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/attr_json.h"
#include "lib/ofs_error.h"
#include "lib/timefmt.h"
#include "store/bstream.h"
#include "store/inspect.h"

struct digests {
	size_t n, cap;
	struct ofs_digest *d;
	int gap;                 /* a chunk index was missing */
};

static int collect(uint64_t idx, struct ofs_digest d, void *arg)
{
	struct digests *ds = arg;

	if (idx != ds->n)
		ds->gap = 1;
	if (ds->n == ds->cap) {
		size_t cap = ds->cap ? ds->cap * 2 : 64;
		struct ofs_digest *p = realloc(ds->d, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ds->d = p;
		ds->cap = cap;
	}
	ds->d[ds->n++] = d;
	return 0;
}

static json_t *to_json(struct store *s, struct ofs_oid oid, const struct ofs_attr *a,
		       const struct digests *ds, const char *path, long entries, json_t *reasons)
{
	json_t *o = json_object(), *chunks = json_array(), *br = json_object();
	char hex[OFS_OID_HEX], dh[OFS_DIGEST_HEX], t[OFS_TIME_LEN];

	(void)s;
	oid_to_hex(oid, hex);
	json_object_set_new(o, "oid", json_string(hex));
	json_object_set_new(o, "type", json_string(ofs_type_name(a->type)));
	json_object_set_new(o, "version", json_integer((json_int_t)a->version));
	json_object_set_new(o, "size", json_integer((json_int_t)a->size));
	json_object_set_new(o, "path", path ? json_string(path) : json_null());
	if (a->type == OFS_OBJ_DFILE)       /* where its bytes are */
		json_object_set_new(o, "stored", json_string(path ? "stream" : "inline"));
	else
		json_object_set_new(o, "stored", json_null());
	json_object_set_new(o, "chunk_size", json_integer(a->chunk_size));
	for (size_t i = 0; i < ds->n; i++) {
		digest_to_hex(ds->d[i], dh);
		json_array_append_new(chunks, json_string(dh));
	}
	json_object_set_new(o, "chunks", chunks);
	if (a->type == OFS_OBJ_DFILE && a->chunk_size) {
		/* Chunks inside the size without a record: holes, read as
		 * zeros (docs/design.md, "Checksums"). */
		uint64_t n = a->size / a->chunk_size + (a->size % a->chunk_size != 0);
		json_object_set_new(o, "holes", json_integer(n > ds->n ? (json_int_t)(n - ds->n) : 0));
	} else {
		json_object_set_new(o, "holes", json_null());
	}
	oid_to_hex(a->backref.owner, hex);
	json_object_set_new(br, "owner", oid_is_zero(a->backref.owner) ? json_null() : json_string(hex));
	json_object_set_new(br, "stripe", json_integer(a->backref.stripe));
	json_object_set_new(br, "name", json_string(a->backref.name));
	json_object_set_new(o, "backref", br);
	json_object_set_new(o, "sids", attr_json_sids(a->nsids, a->sids));
	json_object_set_new(o, "stale", attr_json_sids(a->nstale, a->stale));
	json_object_set_new(o, "stale_reasons", reasons ? json_incref(reasons) : json_object());
	json_object_set_new(o, "mode", json_integer(a->mode));
	json_object_set_new(o, "uid", json_integer(a->uid));
	json_object_set_new(o, "gid", json_integer(a->gid));
	time_format(a->ctime_ns, t);
	json_object_set_new(o, "ctime", json_string(t));
	time_format(a->mtime_ns, t);
	json_object_set_new(o, "mtime", json_string(t));
	attr_json_layout(o, a);
	if (a->type == OFS_OBJ_DIRDATA)
		json_object_set_new(o, "entries", json_integer(entries));
	return o;
}

static int add_reason(struct ofs_sid sid, const char *reason, void *arg)
{
	char hex[OFS_OID_HEX];

	sid_to_hex(sid, hex);
	json_object_set_new(arg, hex, json_string(reason));
	return 0;
}

static int count_entry(const char *name, const struct ofs_dirent *d, void *arg)
{
	(void)name; (void)d;
	(*(long *)arg)++;
	return 0;
}

static void print_text(FILE *out, const json_t *o)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)o, key, v) {
		if (json_is_string(v)) {
			fprintf(out, "%-11s %s\n", key, json_string_value(v));
		} else if (json_is_integer(v)) {
			fprintf(out, "%-11s %lld\n", key, (long long)json_integer_value(v));
		} else if (json_is_null(v)) {
			fprintf(out, "%-11s -\n", key);
		} else if (json_is_array(v)) {
			size_t i;
			json_t *e;
			fprintf(out, "%-11s %zu\n", key, json_array_size(v));
			json_array_foreach(v, i, e) {
				char *d = json_is_string(e) ? NULL :
					json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
				fprintf(out, "  %4zu %s\n", i, d ? d : json_string_value(e));
				free(d);
			}
		} else if (json_is_object(v)) {
			const char *k;
			json_t *e;
			fprintf(out, "%-11s", key);
			if (json_object_size(v) == 0)
				fputs(" -", out);
			json_object_foreach(v, k, e) {
				if (json_is_string(e))
					fprintf(out, " %s=%s", k, json_string_value(e));
				else if (json_is_integer(e))
					fprintf(out, " %s=%lld", k, (long long)json_integer_value(e));
				else
					fprintf(out, " %s=-", k);
			}
			fputc('\n', out);
		}
	}
}

int inspect_object(struct store *s, struct ofs_oid oid, bool json, FILE *out)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct digests ds = { 0 };
	char path[BSTREAM_PATH_MAX], *abs = NULL;
	long entries = 0;
	bool more = true, inl = false;
	json_t *o = NULL, *reasons = NULL;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_getattr(s, oid, a);
	if (rc)
		goto out;
	if (a->type == OFS_OBJ_DFILE) {
		rc = store_chunks(s, oid, collect, &ds);
		if (rc)
			goto out;
		rc = store_is_inline(s, oid);
		if (rc < 0)
			goto out;
		inl = rc == 1;
		rc = bstream_path(store_datadir(s), oid, path, sizeof(path));
		if (rc)
			goto out;
		abs = inl ? NULL : realpath(path, NULL);
	}
	if (a->type == OFS_OBJ_DIRDATA) {
		rc = store_dirent_list(s, oid, NULL, OFS_MAX_LIST * 1000, count_entry, &entries, &more);
		if (rc)
			goto out;
	}
	reasons = json_object();
	rc = store_stale_list(s, oid, add_reason, reasons);
	if (rc)
		goto out;
	o = to_json(s, oid, a, &ds, a->type == OFS_OBJ_DFILE && !inl ? (abs ? abs : path) : NULL,
		    entries, reasons);
	if (!o) {
		rc = -ENOMEM;
		goto out;
	}
	if (json) {
		if (json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0) {
			rc = -EIO;
			goto out;
		}
		fputc('\n', out);
	} else {
		print_text(out, o);
	}
out:
	json_decref(reasons);
	json_decref(o);
	free(abs);
	free(ds.d);
	free(a);
	return rc;
}

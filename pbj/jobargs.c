/* jobargs.c - a job's and a schedule's arguments as JSON (see jobargs.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "pbj/jobargs.h"

/* Copy the strings of array arr (NULL: none) into buf from *used on, their
 * pointers into out[0..*n). 0 or -OFS_ECORRUPT. */
static int take_strings(json_t *arr, bool absolute, char *buf, size_t *used,
			const char **out, size_t *n)
{
	size_t i;
	json_t *v;

	*n = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > PBJ_ARGS_MAX)
		return -OFS_ECORRUPT;
	json_array_foreach(arr, i, v) {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		if (!s || len == 0 || strlen(s) != len || (absolute && s[0] != '/') ||
		    len + 1 > PBJ_ARGS_LEN - *used)
			return -OFS_ECORRUPT;
		memcpy(buf + *used, s, len + 1);
		out[(*n)++] = buf + *used;
		*used += len + 1;
	}
	return 0;
}

/* An integer member in [0, max] (absent: 0). 0 or -OFS_ECORRUPT. */
static int take_int(json_t *root, const char *key, int64_t max, int64_t *out)
{
	json_t *v = json_object_get(root, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return -OFS_ECORRUPT;
	*out = json_integer_value(v);
	return 0;
}

static int job_args_from(json_t *root, struct pbj_job_args *t)
{
	size_t used = 0;
	int64_t meta;
	int rc;

	if (!json_is_object(root))
		return -OFS_ECORRUPT;
	if ((rc = take_int(root, "from_job", INT64_MAX, &t->from_job)) ||
	    (rc = take_int(root, "max_repairs", INT64_MAX, &t->max_repairs)) ||
	    (rc = take_int(root, "threshold", 100, &t->threshold)) ||
	    (rc = take_int(root, "metadata_only", 1, &meta)))
		return rc;
	t->metadata_only = meta == 1;
	rc = take_strings(json_object_get(root, "servers"), false, t->buf, &used, t->servers,
			  &t->nservers);
	if (!rc)
		rc = take_strings(json_object_get(root, "paths"), true, t->buf, &used, t->paths,
				  &t->npaths);
	return rc;
}

int pbj_job_args_decode(const char *text, struct pbj_job_args *a)
{
	struct pbj_job_args *t = calloc(1, sizeof(*t));
	json_t *root;
	int rc;

	if (!t)
		return -ENOMEM;
	if (!text[0]) {
		rc = 0;                          /* no arguments */
	} else {
		root = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		rc = root ? job_args_from(root, t) : -OFS_ECORRUPT;
		json_decref(root);
	}
	if (!rc) {
		/* (the strings move with buf) */
		memcpy(a, t, sizeof(*a));
		for (size_t i = 0; i < t->nservers; i++)
			a->servers[i] = a->buf + (t->servers[i] - t->buf);
		for (size_t i = 0; i < t->npaths; i++)
			a->paths[i] = a->buf + (t->paths[i] - t->buf);
	}
	free(t);
	return rc;
}

/* A JSON array of strings[0..n) into *out; -EINVAL for an empty or not
 * UTF-8 string, a path not absolute. */
static int put_strings(const char *const *s, size_t n, bool absolute, json_t **out)
{
	json_t *arr = json_array();

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_t *v = s[i] && s[i][0] && (!absolute || s[i][0] == '/') ? json_string(s[i])
									      : NULL;
		if (!v || json_array_append_new(arr, v)) {
			json_decref(arr);
			return v ? -ENOMEM : -EINVAL;
		}
	}
	*out = arr;
	return 0;
}

/* Set key to integer v when v is not 0. */
static int put_int(json_t *root, const char *key, int64_t v)
{
	return v && json_object_set_new(root, key, json_integer(v)) ? -ENOMEM : 0;
}

/* The text of root into out: "" for an empty object. */
static int dump(json_t *root, size_t flags, char out[PBJ_ARGS_LEN])
{
	char *text;
	int rc = 0;

	if (json_is_object(root) && json_object_size(root) == 0) {
		out[0] = '\0';
		return 0;
	}
	text = json_dumps(root, flags);
	if (!text)
		return -ENOMEM;
	if (strlen(text) >= PBJ_ARGS_LEN)
		rc = -OFS_ETOOBIG;
	else
		memcpy(out, text, strlen(text) + 1);
	free(text);
	return rc;
}

int pbj_job_args_encode(const struct pbj_job_args *a, char out[PBJ_ARGS_LEN])
{
	json_t *root, *arr = NULL;
	int rc;

	if (a->from_job < 0 || a->max_repairs < 0 || a->threshold < 0 || a->threshold > 100 ||
	    a->nservers > PBJ_ARGS_MAX || a->npaths > PBJ_ARGS_MAX)
		return -EINVAL;
	root = json_object();
	if (!root)
		return -ENOMEM;
	if (!(rc = put_int(root, "from_job", a->from_job)) &&
	    !(rc = put_int(root, "max_repairs", a->max_repairs)) &&
	    !(rc = put_int(root, "threshold", a->threshold)))
		rc = put_int(root, "metadata_only", a->metadata_only);
	if (!rc && a->nservers && !(rc = put_strings(a->servers, a->nservers, false, &arr)))
		rc = json_object_set_new(root, "servers", arr) ? -ENOMEM : 0;
	if (!rc && a->npaths && !(rc = put_strings(a->paths, a->npaths, true, &arr)))
		rc = json_object_set_new(root, "paths", arr) ? -ENOMEM : 0;
	if (!rc)
		rc = dump(root, JSON_COMPACT | JSON_SORT_KEYS, out);
	json_decref(root);
	return rc;
}

int pbj_sched_args_decode(const char *text, struct pbj_sched_args *a)
{
	struct pbj_sched_args *t = calloc(1, sizeof(*t));
	json_t *root = json_loads(text, 0, NULL);
	size_t used = 0, n = 0;
	int rc;

	if (!t) {
		json_decref(root);
		return -ENOMEM;
	}
	rc = root && json_array_size(root) ? take_strings(root, false, t->buf, &used, t->argv, &n)
					   : -OFS_ECORRUPT;
	json_decref(root);
	if (!rc) {
		a->argc = (int)n;
		memcpy(a->buf, t->buf, sizeof(a->buf));
		for (size_t i = 0; i < n; i++)
			a->argv[i] = a->buf + (t->argv[i] - t->buf);
	}
	free(t);
	return rc;
}

int pbj_sched_args_encode(int argc, const char *const *argv, char out[PBJ_ARGS_LEN])
{
	json_t *arr = NULL;
	int rc;

	if (argc < 1 || argc > PBJ_ARGS_MAX)
		return -EINVAL;
	rc = put_strings(argv, (size_t)argc, false, &arr);
	if (!rc)
		rc = dump(arr, JSON_COMPACT, out);
	json_decref(arr);
	return rc;
}

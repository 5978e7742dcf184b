/* jobopts.c - submit's options, one row each (see jobopts.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "lib/parse.h"
#include "pbj/jobopts.h"

#define PATH_MAX_LEN 4096             /* a --path, in bytes */
#define DEFAULT_MAX_REPAIRS 1000      /* repair.max_objects when not set */
#define HELP_WIDTH 78                 /* help's lines wrap before this */
#define SID_BAD "not a SID (32 hex digits, or a unique prefix of 4 or more)"

/* A type's own options first (usage shows them so), then every type's.
 * Rows with the same bit side by side are alternatives ("a | b"). */
static const struct pbj_option options[] = {
	{ .word = "--path", .opt = PBJ_OPT_PATH, .value = PBJ_VAL_PATH, .meta = "PATH",
	  .count = PBJ_COUNT_MANY, .sets = PBJ_SETS_PATHS, .bad = "an absolute path in the cluster",
	  .dflt = "everything",
	  .help = "only the objects of these files and directories (a directory: all under it)" },
	{ .word = "--server", .opt = PBJ_OPT_SERVERS, .value = PBJ_VAL_SID_PREFIX, .meta = "SID",
	  .count = PBJ_COUNT_MANY, .sets = PBJ_SETS_SERVERS, .bad = SID_BAD,
	  .dflt = "every server in service",
	  .help = "only the copies on these servers (a SID or a unique prefix of 4 or more)" },
	{ .word = "--server", .opt = PBJ_OPT_SERVER_ONE, .value = PBJ_VAL_SID_PREFIX, .meta = "SID",
	  .count = PBJ_COUNT_ONCE, .needed = true, .sets = PBJ_SETS_SERVERS, .bad = SID_BAD,
	  .help = "the server, by its SID or a unique prefix of 4 or more" },
	{ .word = "--job", .opt = PBJ_OPT_FROM_JOB, .value = PBJ_VAL_JOB, .meta = "JOB",
	  .sets = PBJ_SETS_FROM_JOB, .bad = "not a job id",
	  .help = "repair what job JOB found (once it has ended); no --path with it" },
	{ .word = "--repair", .opt = PBJ_OPT_REPAIR, .sets = PBJ_SETS_REPAIR_ON,
	  .dflt = "the setting scrub.auto_repair, else no",
	  .help = "repair what it finds from a good copy" },
	{ .word = "--no-repair", .opt = PBJ_OPT_REPAIR, .sets = PBJ_SETS_REPAIR_OFF,
	  .help = "only report what it finds, whatever scrub.auto_repair says" },
	{ .word = "--metadata-only", .opt = PBJ_OPT_METADATA_ONLY, .sets = PBJ_SETS_METADATA_ONLY,
	  .help = "records, copies and structure (the namespace check); byte streams are "
		  "not re-read" },
	{ .word = "--max-repairs", .opt = PBJ_OPT_MAX_REPAIRS, .value = PBJ_VAL_INT, .meta = "N",
	  .min = 0, .max = 1000000000, .sets = PBJ_SETS_MAX_REPAIRS,
	  .bad = "a count of objects (0: no cap)",
	  .dflt = "the setting repair.max_objects, else 1000",
	  .help = "repair at most N objects, then end with the rest left (exit 1); 0: no cap" },
	{ .word = "--threshold", .opt = PBJ_OPT_THRESHOLD, .value = PBJ_VAL_INT, .meta = "PCT",
	  .min = 1, .max = 100, .sets = PBJ_SETS_THRESHOLD, .bad = "points from the mean, 1 to 100",
	  .dflt = "10",
	  .help = "move file data until every server's used fraction is within PCT points of "
		  "the mean" },
	{ .word = "--dry-run", .sets = PBJ_SETS_DRY_RUN,
	  .help = "change nothing: say what would be done" },
	{ .word = "--rate", .value = PBJ_VAL_BYTES, .meta = "BYTES/s", .min = 4096,
	  .sets = PBJ_SETS_RATE, .bad = "bytes per second, at least 4K (K, M, G)",
	  .dflt = "each server's --scrub-rate, else 64M",
	  .help = "cap the bytes each server reads per second (K, M, G: powers of 1024)" },
	{ .word = "--priority", .value = PBJ_VAL_INT, .meta = "N", .min = -1000, .max = 1000,
	  .sets = PBJ_SETS_PRIORITY, .bad = "an integer from -1000 to 1000", .dflt = "0",
	  .help = "jobs start by priority, higher first, then age" },
	{ .word = "--wait", .sets = PBJ_SETS_WAIT,
	  .help = "wait for the job to end and print its status; runs it here when no "
		  "scheduler runs" },
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

const struct pbj_option *pbj_options(size_t *n)
{
	*n = NOPTIONS;
	return options;
}

bool pbj_option_taken(const struct pbj_jobtype *t, const struct pbj_option *o)
{
	return t && t->submitted && (!o->opt || (t->opts & o->opt));
}

static bool is_help(const char *w)
{
	return !strcmp(w, "--help") || !strcmp(w, "-h");
}

static int say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The row of t named w, or NULL. */
static const struct pbj_option *option_named(const struct pbj_jobtype *t, const char *w)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		if (!strcmp(options[i].word, w) && pbj_option_taken(t, &options[i]))
			return &options[i];
	return NULL;
}

/* v, the value of o: 0 and its number in *n (0 for a string), or -EINVAL. */
static int check_value(const struct pbj_option *o, const char *v, int64_t *n)
{
	uint64_t u;
	char *end;
	long long ll;
	size_t n_hex;

	*n = 0;
	switch (o->value) {
	case PBJ_VAL_BYTES:
		if (parse_size(v, &u) || u < (uint64_t)o->min || u > INT64_MAX)
			return -EINVAL;
		*n = (int64_t)u;
		return 0;
	case PBJ_VAL_INT:
		errno = 0;
		ll = strtoll(v, &end, 10);
		if (!*v || *end || errno || ll < o->min || ll > o->max)
			return -EINVAL;
		*n = ll;
		return 0;
	case PBJ_VAL_PATH:
		return v[0] == '/' && strlen(v) <= PATH_MAX_LEN ? 0 : -EINVAL;
	case PBJ_VAL_SID_PREFIX:
		n_hex = strlen(v);
		return n_hex >= 4 && n_hex <= 32 && strspn(v, "0123456789abcdefABCDEF") == n_hex ?
		       0 : -EINVAL;
	case PBJ_VAL_JOB:
		if (parse_uint(v, 1, INT64_MAX, &u))
			return -EINVAL;
		*n = (int64_t)u;
		return 0;
	default:
		return 0;
	}
}

/* A string value added to list (*count of PBJ_ARGS_MAX). */
static int add_string(const char **list, size_t *count, const struct pbj_option *o, const char *v,
		      char *why, size_t len)
{
	if (*count == PBJ_ARGS_MAX)
		return say(why, len, "too many %s arguments (1 KiB at most)", o->word);
	list[(*count)++] = v;
	return 0;
}

/* Set the member o sets, from v (its number n). 0 or -EINVAL with why. */
static int take(struct pbj_submit *s, const struct pbj_option *o, const char *v, int64_t n,
		char *why, size_t len)
{
	struct pbj_job_args *a = &s->args;

	switch (o->sets) {
	case PBJ_SETS_WAIT:          s->wait = true; break;
	case PBJ_SETS_DRY_RUN:       s->dry_run = true; break;
	case PBJ_SETS_RATE:          s->rate = (uint64_t)n; break;
	case PBJ_SETS_PRIORITY:      s->priority = (int)n; break;
	case PBJ_SETS_THRESHOLD:     a->threshold = n; break;
	case PBJ_SETS_REPAIR_ON:     s->repair = 1; break;
	case PBJ_SETS_REPAIR_OFF:    s->repair = 0; break;
	case PBJ_SETS_METADATA_ONLY: a->metadata_only = true; break;
	case PBJ_SETS_FROM_JOB:      a->from_job = n; break;
	case PBJ_SETS_MAX_REPAIRS:   s->max_repairs = n; break;
	case PBJ_SETS_PATHS:         return add_string(a->paths, &a->npaths, o, v, why, len);
	case PBJ_SETS_SERVERS:       return add_string(a->servers, &a->nservers, o, v, why, len);
	default:                     return say(why, len, "%s: not an option this build knows", o->word);
	}
	return 0;
}

static int unknown_type(const char *name, char *why, size_t len)
{
	char names[128];

	pbj_jobtype_submitted_names(names, sizeof(names));
	return say(why, len, "submit %s: unknown job type (%s)", name, names);
}

static int unknown_option(const struct pbj_jobtype *t, const char *w, char *why, size_t len)
{
	char usage[512];

	pbj_submit_usage(t, usage, sizeof(usage));
	return say(why, len, "submit %s: unknown option '%s' (%s takes %s)", t->name, w, t->name,
		   usage);
}

int pbj_submit_parse(int argc, char *const *argv, struct pbj_submit *s, char *why, size_t len)
{
	uint32_t given = 0;               /* (bit i: row i was given) */

	memset(s, 0, sizeof(*s));
	s->repair = -1;
	s->max_repairs = -1;
	if (argc < 1)
		return say(why, len, "submit needs a job type");
	if (is_help(argv[0]))
		return PBJ_SUBMIT_HELP;
	s->type = pbj_jobtype_named(argv[0]);
	if (!s->type || !s->type->submitted) {
		s->type = NULL;
		return unknown_type(argv[0], why, len);
	}
	for (int i = 1; i < argc; i++) {
		const struct pbj_option *o;
		const char *v = NULL;
		int64_t n = 0;
		uint32_t bit;
		int rc;

		if (is_help(argv[i]))
			return PBJ_SUBMIT_HELP;
		o = option_named(s->type, argv[i]);
		if (!o)
			return unknown_option(s->type, argv[i], why, len);
		bit = 1u << (o - options);
		if (o->count == PBJ_COUNT_ONCE && (given & bit))
			return say(why, len, "submit %s: one %s at a time", s->type->name, o->word);
		given |= bit;
		if (o->value != PBJ_VAL_FLAG) {
			if (i + 1 >= argc)
				return say(why, len, "submit %s: %s needs %s", s->type->name, o->word,
					   o->meta);
			v = argv[++i];
			if (check_value(o, v, &n))
				return say(why, len, "%s %s: %s", o->word, v, o->bad);
		}
		rc = take(s, o, v, n, why, len);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- settling: the defaults the site gives, checks across options ------------- */

/* A site setting that is a boolean: 1, 0, or -1 when not set (or bad). */
static int setting_bool(struct pbj_db *db, const char *name)
{
	char v[32];

	if (!db || pbj_setting_get(db, name, v, sizeof(v)) != 0)
		return -1;
	if (!strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes"))
		return 1;
	if (!strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
		return 0;
	return -1;
}

static int64_t setting_int(struct pbj_db *db, const char *name, int64_t dflt)
{
	char v[32], *end;
	long long n;

	if (!db || pbj_setting_get(db, name, v, sizeof(v)) != 0)
		return dflt;
	n = strtoll(v, &end, 10);
	return *v && !*end && n >= 0 ? n : dflt;
}

/* Whether s was given a value for o's member (a needed option). */
static bool given(const struct pbj_submit *s, const struct pbj_option *o)
{
	return o->sets == PBJ_SETS_SERVERS ? s->args.nservers > 0 :
	       o->sets == PBJ_SETS_PATHS ? s->args.npaths > 0 : true;
}

/* Whether the job repairs, from its type, --repair or the setting. */
static bool repairs(struct pbj_db *db, const struct pbj_submit *s)
{
	switch (s->type->repairs) {
	case PBJ_REPAIRS_NEVER:  return false;
	case PBJ_REPAIRS_ALWAYS: return true;
	default:                 return s->repair >= 0 ? s->repair == 1 :
					setting_bool(db, "scrub.auto_repair") == 1;
	}
}

int pbj_submit_settle(struct pbj_db *db, struct pbj_submit *s, struct pbj_job *j, char *why,
		      size_t len)
{
	const struct pbj_jobtype *t = s->type;
	int rc;

	for (size_t i = 0; i < NOPTIONS; i++)
		if (options[i].needed && pbj_option_taken(t, &options[i]) && !given(s, &options[i]))
			return say(why, len, "submit %s needs %s %s", t->name, options[i].word,
				   options[i].meta);
	memset(j, 0, sizeof(*j));
	j->type = t->type;
	j->rate = s->rate;
	j->priority = s->priority;
	if (s->dry_run)
		j->flags |= PBJ_DRY_RUN;
	if (repairs(db, s)) {
		int64_t cap = s->max_repairs >= 0 ? s->max_repairs :
			      setting_int(db, "repair.max_objects", DEFAULT_MAX_REPAIRS);
		j->flags |= PBJ_REPAIR;
		s->args.max_repairs = cap > 0 ? cap : 0;
	} else if (s->max_repairs >= 0) {
		return say(why, len, "--max-repairs: only with --repair (or submit repair)");
	}
	if (s->args.from_job && s->args.npaths)
		return say(why, len, "--job: the job's findings name the objects; no --path");
	rc = pbj_job_args_encode(&s->args, j->args);
	if (rc == -OFS_ETOOBIG)
		return say(why, len, "too many --server or --path arguments (1 KiB at most)");
	if (rc == -EINVAL)
		return say(why, len, "--server or --path: an empty or not UTF-8 argument");
	if (rc)
		snprintf(why, len, "submit: %s", ofs_strerror(rc));
	return rc;
}

/* ---- usage and help ------------------------------------------------------- */

/* Call each(item, arg) for each item of t's usage, in order. */
static void usage_items(const struct pbj_jobtype *t, void (*each)(const char *item, void *arg),
			void *arg)
{
	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct pbj_option *o = &options[i];
		char item[128];
		int at;

		if (!pbj_option_taken(t, o))
			continue;
		if (o->needed)
			at = snprintf(item, sizeof(item), "%s%s%s", o->word, o->meta ? " " : "",
				      o->meta ? o->meta : "");
		else
			at = snprintf(item, sizeof(item), "[%s%s%s", o->word, o->meta ? " " : "",
				      o->meta ? o->meta : "");
		/* alternatives: the next rows of the same bit */
		while (o->opt && i + 1 < NOPTIONS && options[i + 1].opt == o->opt &&
		       at > 0 && (size_t)at < sizeof(item)) {
			o = &options[++i];
			at += snprintf(item + at, sizeof(item) - (size_t)at, " | %s", o->word);
		}
		if (!options[i].needed && at > 0 && (size_t)at < sizeof(item))
			snprintf(item + at, sizeof(item) - (size_t)at, "]%s",
				 o->count == PBJ_COUNT_MANY ? "..." : "");
		each(item, arg);
	}
}

struct joined {
	char *out;
	size_t len, at;
};

static void join_item(const char *item, void *arg)
{
	struct joined *j = arg;
	int n;

	if (j->at >= j->len)
		return;
	n = snprintf(j->out + j->at, j->len - j->at, "%s%s", j->at ? " " : "", item);
	if (n > 0)
		j->at += (size_t)n;
}

void pbj_submit_usage(const struct pbj_jobtype *t, char *out, size_t len)
{
	struct joined j = { out, len, 0 };

	if (len)
		out[0] = '\0';
	usage_items(t, join_item, &j);
}

struct wrapped {
	FILE *f;
	size_t col, indent;
};

/* item to w->f after a space, on a new line under w->indent when it would
 * pass HELP_WIDTH. */
static void wrap_item(const char *item, void *arg)
{
	struct wrapped *w = arg;
	size_t n = strlen(item);

	if (w->col + 1 + n > HELP_WIDTH && w->col > w->indent) {
		fprintf(w->f, "\n%*s", (int)w->indent, "");
		w->col = w->indent;
	}
	fprintf(w->f, "%s%s", w->col > w->indent ? " " : "", item);
	w->col += (w->col > w->indent ? 1 : 0) + n;
}

/* text's words wrapped from column col (already written) under indent,
 * then a newline. */
static void wrap_words(FILE *f, size_t col, size_t indent, const char *text)
{
	struct wrapped w = { f, col, indent };
	char word[128];

	while (*text) {
		size_t n = strcspn(text, " ");
		if (n) {
			snprintf(word, sizeof(word), "%.*s", (int)n, text);
			wrap_item(word, &w);
		}
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

/* "submit TYPE [options...]" after lead, wrapped under the first option. */
static void usage_wrapped(const struct pbj_jobtype *t, FILE *f, const char *lead)
{
	int n = fprintf(f, "%ssubmit %s ", lead, t->name);
	struct wrapped w = { f, n > 0 ? (size_t)n : 0, n > 0 ? (size_t)n : 0 };

	usage_items(t, wrap_item, &w);
	fputc('\n', f);
}

void pbj_submit_help(const struct pbj_jobtype *t, FILE *f)
{
	if (!t) {
		const struct pbj_jobtype *r;
		for (size_t i = 0; (r = pbj_jobtype_at(i)) != NULL; i++) {
			if (!r->submitted)
				continue;
			usage_wrapped(r, f, "  ");
			fprintf(f, "%32s", "");
			wrap_words(f, 32, 32, r->about);
		}
		return;
	}
	usage_wrapped(t, f, "usage: ofs-pbj ");
	fprintf(f, "%s: %s.\n", t->name, t->about);
	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct pbj_option *o = &options[i];
		char word[64], text[512];

		if (!pbj_option_taken(t, o))
			continue;
		snprintf(word, sizeof(word), "%s%s%s", o->word, o->meta ? " " : "",
			 o->meta ? o->meta : "");
		snprintf(text, sizeof(text), "%s%s%s%s", o->help, o->dflt ? " (default: " : "",
			 o->dflt ? o->dflt : "", o->dflt ? ")" : "");
		fprintf(f, "  %-20s ", word);
		wrap_words(f, 23, 23, text);
	}
}

/*
 * nsload - a namespace load generator for integration tests: creates,
 * overwrites, renames and removes of small files and mkdir/rmdir of
 * directories through libofs, checked against a model of what each name
 * should hold.
 *
 *   nsload HOST:PORT --dir PATH --ops N [--threads T] [--seed S]
 *          [--replicas R] [--keep-going]
 *
 * PATH must be an existing OFS directory (make it with `ofs mkdir`).
 * Each of T threads (default 2, at most 64) opens its own client to
 * HOST:PORT and works under PATH/tI (made here) in two subdirectories a/
 * and b/, so threads never touch each other's names. Together they make N
 * operations, N/T each and the remainder in thread 0, picked by a
 * xorshift seeded with S (default 1) plus the thread index, roughly:
 *   40% create a file (ofs_put_buf, R copies, default 3; one stripe of
 *       the default strip size) of 48..400 bytes that name the thread,
 *       the name it was created under and its generation;
 *   10% overwrite an existing file (a put to its name, generation + 1);
 *   20% rename a file to a new name in a/ or b/, or (one in four) onto
 *       another existing file, which it replaces;
 *   20% remove a file;
 *   10% mkdir a new, always empty, directory in a/ or b/, or rmdir one.
 * A pick that needs a file when the thread has none creates one.
 * Each thread keeps a model of its names and contents; a call that fails
 * is reported as "nsload: OP PATH: ERROR" on stderr, counted, and leaves
 * the model as it was. At the end every thread checks its tree: tI lists
 * exactly a and b, a/ and b/ list exactly the model's names (with the
 * right types), its directories are empty and every file reads back as
 * last written. One line on stdout counts the work:
 *   nsload: ops N creates C overwrites O renames R removes M mkdirs D
 *   rmdirs E errors X
 * Exit 0 when every call succeeded and every tree matches its model; 1
 * otherwise (each failure named on stderr); 2 on bad arguments (with a
 * usage line on stderr). --keep-going, the default, goes on after an
 * error; the errors still make the exit status 1.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ofs.h"
#include "lib/ofs_error.h"
#include "lib/path.h"
#include "lib/tls.h"

#define MAX_THREADS 64
#define MAX_DIRS 8                  /* extra directories per thread at once */
#define MIN_LEN 48                  /* a file's bytes: MIN_LEN..MAX_LEN */
#define MAX_LEN 400
/* room after PATH for "/tI/a/fN" */
#define BASE_MAX (OFS_PATH_MAX - 64)

struct file {
	unsigned name;                  /* it is SUB/fNAME */
	unsigned id, gen;               /* what its bytes say (a rename keeps them) */
	int sub;                        /* 0: a/, 1: b/ */
};

struct dir {
	unsigned name;                  /* it is SUB/dNAME */
	int sub;
};

struct worker {
	pthread_t th;
	const char *addr, *base;
	unsigned idx;
	uint8_t replicas;
	long ops;
	uint64_t rng;
	struct file *f;
	size_t nf, capf;
	struct dir d[MAX_DIRS];
	size_t nd;
	unsigned serial;                /* the next name, unique in the thread */
	long creates, overwrites, renames, removes, mkdirs, rmdirs, errors;
};

static uint64_t next(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

/* An index below n (n > 0). */
static size_t below(struct worker *w, size_t n)
{
	return (size_t)(next(w) % (uint64_t)n);
}

/* splitmix64: a well mixed, non-zero xorshift state from a small seed. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 0x2545f4914f6cdd1dULL;
}

static char sub_name(int sub)
{
	return sub ? 'b' : 'a';
}

static void file_path(const struct worker *w, const struct file *f, char *buf, size_t n)
{
	snprintf(buf, n, "%s/t%u/%c/f%u", w->base, w->idx, sub_name(f->sub), f->name);
}

static void dir_path(const struct worker *w, const struct dir *d, char *buf, size_t n)
{
	snprintf(buf, n, "%s/t%u/%c/d%u", w->base, w->idx, sub_name(d->sub), d->name);
}

/* The bytes file f should hold (at most MAX_LEN, into buf of MAX_LEN + 1):
 * a line naming it, then letters that depend on it. Returns the length. */
static size_t content(const struct worker *w, const struct file *f, char *buf)
{
	uint64_t x = mix(((uint64_t)w->idx << 48) ^ ((uint64_t)f->id << 20) ^ f->gen);
	size_t len = MIN_LEN + (size_t)(x % (MAX_LEN - MIN_LEN + 1));
	int n = snprintf(buf, MAX_LEN + 1, "nsload t%u f%u generation %u\n", w->idx, f->id,
			 f->gen);
	size_t k = n > 0 ? (size_t)n : 0;

	for (; k < len; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[k] = k % 64 == 63 ? '\n' : (char)('a' + (int)(x % 26));
	}
	return len;
}

static void err(struct worker *w, const char *op, const char *path, int rc)
{
	fprintf(stderr, "nsload: %s %s: %s\n", op, path, ofs_strerror(rc));
	w->errors++;
}

static int put(struct ofs_client *c, struct worker *w, const struct file *f, const char *op)
{
	struct ofs_put_opts o;
	char buf[MAX_LEN + 1], path[OFS_PATH_MAX];
	size_t len = content(w, f, buf);
	int rc;

	memset(&o, 0, sizeof(o));
	o.replicas = w->replicas;
	o.stripes = 1;
	o.strip_size = 0;               /* the default, as putmany's lists use */
	file_path(w, f, path, sizeof(path));
	rc = ofs_put_buf(c, buf, len, path, &o);
	if (rc)
		err(w, op, path, rc);
	return rc;
}

static int op_create(struct ofs_client *c, struct worker *w)
{
	struct file f;
	int rc;

	w->creates++;
	if (w->nf == w->capf) {
		size_t cap = w->capf ? 2 * w->capf : 64;
		struct file *nf = realloc(w->f, cap * sizeof(*nf));
		if (!nf) {
			err(w, "create", "(model)", -ENOMEM);
			return -ENOMEM;
		}
		w->f = nf;
		w->capf = cap;
	}
	f.name = f.id = w->serial++;
	f.gen = 0;
	f.sub = (int)(next(w) & 1);
	rc = put(c, w, &f, "create");
	if (rc)
		return rc;
	w->f[w->nf++] = f;
	return 0;
}

static int op_overwrite(struct ofs_client *c, struct worker *w)
{
	struct file *f = &w->f[below(w, w->nf)];
	struct file nf = *f;
	int rc;

	w->overwrites++;
	nf.gen++;
	rc = put(c, w, &nf, "overwrite");
	if (rc)
		return rc;
	*f = nf;
	return 0;
}

static int op_rename(struct ofs_client *c, struct worker *w)
{
	size_t i = below(w, w->nf), onto = w->nf;
	struct file to = w->f[i];
	char from[OFS_PATH_MAX], topath[OFS_PATH_MAX];
	int rc;

	w->renames++;
	if (w->nf > 1 && next(w) % 4 == 0) {
		onto = below(w, w->nf - 1);  /* any file but i */
		if (onto >= i)
			onto++;
		to.name = w->f[onto].name;
		to.sub = w->f[onto].sub;
	} else {
		to.name = w->serial++;
		to.sub = (int)(next(w) & 1);
	}
	file_path(w, &w->f[i], from, sizeof(from));
	file_path(w, &to, topath, sizeof(topath));
	rc = ofs_rename(c, from, topath);
	if (rc) {
		err(w, "rename", from, rc);
		return rc;
	}
	w->f[i] = to;
	if (onto < w->nf)                /* the replaced file is gone */
		w->f[onto] = w->f[--w->nf];
	return 0;
}

static int op_remove(struct ofs_client *c, struct worker *w)
{
	size_t i = below(w, w->nf);
	char path[OFS_PATH_MAX];
	int rc;

	w->removes++;
	file_path(w, &w->f[i], path, sizeof(path));
	rc = ofs_unlink(c, path);
	if (rc) {
		err(w, "unlink", path, rc);
		return rc;
	}
	w->f[i] = w->f[--w->nf];
	return 0;
}

/* mkdir a new directory, or rmdir one of the (empty) ones made before. */
static int op_dir(struct ofs_client *c, struct worker *w)
{
	char path[OFS_PATH_MAX];
	int rc;

	if (w->nd == MAX_DIRS || (w->nd > 0 && (next(w) & 1))) {
		size_t i = below(w, w->nd);
		w->rmdirs++;
		dir_path(w, &w->d[i], path, sizeof(path));
		rc = ofs_rmdir(c, path);
		if (rc) {
			err(w, "rmdir", path, rc);
			return rc;
		}
		w->d[i] = w->d[--w->nd];
		return 0;
	}
	w->mkdirs++;
	w->d[w->nd].name = w->serial++;
	w->d[w->nd].sub = (int)(next(w) & 1);
	dir_path(w, &w->d[w->nd], path, sizeof(path));
	rc = ofs_mkdir(c, path);
	if (rc) {
		err(w, "mkdir", path, rc);
		return rc;
	}
	w->nd++;
	return 0;
}

static void one(struct ofs_client *c, struct worker *w)
{
	unsigned pick = (unsigned)(next(w) % 100);

	if (pick >= 90)
		op_dir(c, w);
	else if (pick < 40 || w->nf == 0)
		op_create(c, w);
	else if (pick < 50)
		op_overwrite(c, w);
	else if (pick < 70)
		op_rename(c, w);
	else
		op_remove(c, w);
}

/* ---- checking the tree against the model ---------------------------------- */

struct entry {
	char name[OFS_NAME_MAX + 1];
	uint8_t type;
};

struct listing {
	struct entry *e;
	size_t n, cap;
};

static int add_entry(struct listing *l, const char *name, uint8_t type)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct entry *ne = realloc(l->e, cap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		l->e = ne;
		l->cap = cap;
	}
	snprintf(l->e[l->n].name, sizeof(l->e[0].name), "%s", name);
	l->e[l->n].type = type;
	l->n++;
	return 0;
}

static int list_one(const char *name, const struct ofs_dirent *d, void *arg)
{
	return add_entry(arg, name, d->type);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static const char *type_name(uint8_t type)
{
	if (type == OFS_OBJ_METAFILE)
		return "file";
	return type == OFS_OBJ_DIRECTORY ? "directory" : "object";
}

/* Directory path lists exactly the entries of want (which is sorted here). */
static void check_listing(struct ofs_client *c, struct worker *w, const char *path,
			  struct listing *want)
{
	struct listing got = { .n = 0 };
	size_t i = 0, j = 0;
	int rc = ofs_readdir(c, path, list_one, &got);

	if (rc) {
		err(w, "readdir", path, rc);
		free(got.e);
		return;
	}
	if (got.n)                       /* (qsort of NULL is undefined, even empty) */
		qsort(got.e, got.n, sizeof(*got.e), entry_cmp);
	if (want->n)
		qsort(want->e, want->n, sizeof(*want->e), entry_cmp);
	while (i < got.n || j < want->n) {
		int cmp = i == got.n ? 1 : j == want->n ? -1 : strcmp(got.e[i].name,
								       want->e[j].name);
		if (cmp < 0) {
			fprintf(stderr, "nsload: %s: lists %s %s, which the model does not have\n",
				path, type_name(got.e[i].type), got.e[i].name);
			w->errors++;
			i++;
		} else if (cmp > 0) {
			fprintf(stderr, "nsload: %s: %s %s is missing\n", path,
				type_name(want->e[j].type), want->e[j].name);
			w->errors++;
			j++;
		} else {
			if (got.e[i].type != want->e[j].type) {
				fprintf(stderr, "nsload: %s: %s is a %s, the model has a %s\n", path,
					got.e[i].name, type_name(got.e[i].type),
					type_name(want->e[j].type));
				w->errors++;
			}
			i++;
			j++;
		}
	}
	free(got.e);
}

static void check_file(struct ofs_client *c, struct worker *w, const struct file *f)
{
	char want[MAX_LEN + 1], path[OFS_PATH_MAX];
	size_t len = content(w, f, want), n = 0;
	void *got = NULL;
	int rc;

	file_path(w, f, path, sizeof(path));
	rc = ofs_get_buf(c, path, &got, &n);
	if (rc) {
		err(w, "get", path, rc);
	} else if (n != len || memcmp(got, want, n) != 0) {
		fprintf(stderr, "nsload: %s: read %zu bytes that are not the %zu last written "
			"(f%u generation %u)\n", path, n, len, f->id, f->gen);
		w->errors++;
	}
	free(got);
}

static void verify(struct ofs_client *c, struct worker *w)
{
	char path[OFS_PATH_MAX], name[32];
	struct listing want = { .n = 0 };

	snprintf(path, sizeof(path), "%s/t%u", w->base, w->idx);
	if (add_entry(&want, "a", OFS_OBJ_DIRECTORY) || add_entry(&want, "b", OFS_OBJ_DIRECTORY))
		goto nomem;
	check_listing(c, w, path, &want);
	for (int s = 0; s < 2; s++) {
		want.n = 0;
		for (size_t i = 0; i < w->nf; i++) {
			if (w->f[i].sub != s)
				continue;
			snprintf(name, sizeof(name), "f%u", w->f[i].name);
			if (add_entry(&want, name, OFS_OBJ_METAFILE))
				goto nomem;
		}
		for (size_t i = 0; i < w->nd; i++) {
			if (w->d[i].sub != s)
				continue;
			snprintf(name, sizeof(name), "d%u", w->d[i].name);
			if (add_entry(&want, name, OFS_OBJ_DIRECTORY))
				goto nomem;
		}
		snprintf(path, sizeof(path), "%s/t%u/%c", w->base, w->idx, sub_name(s));
		check_listing(c, w, path, &want);
	}
	want.n = 0;
	for (size_t i = 0; i < w->nd; i++) {
		dir_path(w, &w->d[i], path, sizeof(path));
		check_listing(c, w, path, &want);
	}
	for (size_t i = 0; i < w->nf; i++)
		check_file(c, w, &w->f[i]);
	free(want.e);
	return;
nomem:
	err(w, "verify", path, -ENOMEM);
	free(want.e);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct ofs_client *c = NULL;
	const char *addrs[1] = { w->addr };
	char path[OFS_PATH_MAX];
	int rc = ofs_client_open(addrs, 1, &c);

	if (rc) {
		err(w, "connect", w->addr, rc);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/t%u", w->base, w->idx);
	rc = ofs_mkdir(c, path);
	for (int s = 0; !rc && s < 2; s++) {
		snprintf(path, sizeof(path), "%s/t%u/%c", w->base, w->idx, sub_name(s));
		rc = ofs_mkdir(c, path);
	}
	if (rc) {
		err(w, "mkdir", path, rc);
	} else {
		for (long i = 0; i < w->ops; i++)
			one(c, w);
		verify(c, w);
	}
	ofs_client_close(c);
	return NULL;
}

/* ---- arguments ------------------------------------------------------------ */

static int usage(void)
{
	fprintf(stderr, "usage: nsload HOST:PORT --dir PATH --ops N [--threads T] [--seed S] "
		"[--replicas R] [--keep-going]\n");
	return 2;
}

/* A whole decimal number in lo..hi. */
static int number(const char *opt, const char *s, unsigned long long lo,
		  unsigned long long hi, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s || *s < '0' || *s > '9') {
		fprintf(stderr, "nsload: %s needs a number\n", opt);
		return -EINVAL;
	}
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "nsload: %s %s: not a number in %llu..%llu\n", opt, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

struct args {
	const char *addr;
	char base[BASE_MAX + 1];
	unsigned long long ops, threads, seed, replicas;
	int have_dir, have_ops;
};

/* The value of option opt: "--opt=VALUE" in argv[*i] or the next word. */
static const char *value(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		return "";
	return argv[++*i];
}

static int parse(int argc, char **argv, struct args *a)
{
	const char *v;

	a->ops = 0;
	a->threads = 2;
	a->seed = 1;
	a->replicas = 3;
	for (int i = 1; i < argc; i++) {
		int rc = 0;
		if (strcmp(argv[i], "--keep-going") == 0) {
			continue;
		} else if ((v = value(argc, argv, &i, "--dir"))) {
			size_t n = strlen(v);
			if (v[0] != '/' || n > BASE_MAX) {
				fprintf(stderr, "nsload: --dir needs an absolute path of at most %d bytes\n",
					BASE_MAX);
				return -EINVAL;
			}
			while (n > 0 && v[n - 1] == '/')   /* "/" becomes "", "/x/" "/x" */
				n--;
			memcpy(a->base, v, n);
			a->base[n] = '\0';
			a->have_dir = 1;
		} else if ((v = value(argc, argv, &i, "--ops"))) {
			rc = number("--ops", v, 0, LONG_MAX, &a->ops);
			a->have_ops = 1;
		} else if ((v = value(argc, argv, &i, "--threads"))) {
			rc = number("--threads", v, 1, MAX_THREADS, &a->threads);
		} else if ((v = value(argc, argv, &i, "--seed"))) {
			rc = number("--seed", v, 0, UINT64_MAX, &a->seed);
		} else if ((v = value(argc, argv, &i, "--replicas"))) {
			rc = number("--replicas", v, 1, OFS_MAX_REPLICAS, &a->replicas);
		} else if (argv[i][0] == '-' || a->addr) {
			fprintf(stderr, "nsload: unexpected argument %s\n", argv[i]);
			return -EINVAL;
		} else {
			a->addr = argv[i];
		}
		if (rc)
			return rc;
	}
	if (!a->addr || !a->have_dir || !a->have_ops)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	static struct args a;
	struct worker *w;
	long tot[7] = { 0 };
	unsigned started = 0;
	char idwhy[TLS_WHY_MAX];
	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "nsload: %s\n", idwhy);
		return 2;
	}

	if (parse(argc, argv, &a))
		return usage();
	w = calloc((size_t)a.threads, sizeof(*w));
	if (!w) {
		fprintf(stderr, "nsload: out of memory\n");
		return 1;
	}
	for (unsigned t = 0; t < a.threads; t++) {
		int rc;
		w[t].addr = a.addr;
		w[t].base = a.base;
		w[t].idx = t;
		w[t].replicas = (uint8_t)a.replicas;
		w[t].ops = (long)(a.ops / a.threads + (t == 0 ? a.ops % a.threads : 0));
		w[t].rng = mix(a.seed + t);
		rc = pthread_create(&w[t].th, NULL, run, &w[t]);
		if (rc) {
			fprintf(stderr, "nsload: thread %u: %s\n", t, strerror(rc));
			tot[6]++;
			break;
		}
		started++;
	}
	for (unsigned t = 0; t < started; t++) {
		pthread_join(w[t].th, NULL);
		tot[0] += w[t].creates;
		tot[1] += w[t].overwrites;
		tot[2] += w[t].renames;
		tot[3] += w[t].removes;
		tot[4] += w[t].mkdirs;
		tot[5] += w[t].rmdirs;
		tot[6] += w[t].errors;
		free(w[t].f);
	}
	free(w);
	printf("nsload: ops %llu creates %ld overwrites %ld renames %ld removes %ld mkdirs %ld "
	       "rmdirs %ld errors %ld\n", a.ops, tot[0], tot[1], tot[2], tot[3], tot[4], tot[5],
	       tot[6]);
	return tot[6] ? 1 : 0;
}

/*
 * nschurn - namespace changes through libofs, for the online namespace
 * check test (t_nscheck_online): creates, overwrites, renames (within a
 * directory, across directories, onto an existing name) and removes of
 * small files, and mkdir/rmdir of directories, while scrubs run.
 *
 *   nschurn HOST:PORT DIR OPS THREADS [SEED]
 *
 * DIR must exist. Thread t works under DIR/tT (made here) in two
 * subdirectories a/ and b/, so threads never touch each other's names;
 * together they make OPS changes, chosen by a seeded xorshift. Each
 * thread keeps a model of its names and contents and, at the end, checks
 * that both directories list exactly its names and that every file
 * reads back as last written. One line on stdout counts the changes.
 * Exit 0 when every change succeeded and the tree matches the model; 1
 * otherwise (each failure named on stderr); 2 on bad arguments.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofs.h"
#include "ofs_error.h"

#define MAXF 64                  /* files per thread at once */
#define MAXD 4                   /* extra directories per thread at once */

struct file {
	char path[256];
	unsigned id, gen;                /* what its bytes say (a rename keeps them) */
};

struct worker {
	pthread_t th;
	const char *addr, *dir;
	unsigned idx;
	long ops;
	uint64_t rng;
	struct file f[MAXF];
	int nf;
	char d[MAXD][256];
	int nd;
	unsigned serial;
	long creates, overwrites, renames, removes, mkdirs, rmdirs, errors;
};

static uint64_t next(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static int content(const struct file *f, char *buf, size_t n)
{
	int len = snprintf(buf, n, "file %u generation %u\n", f->id, f->gen);
	/* a few dozen to a few hundred bytes */
	while (len > 0 && (size_t)len + 40 < n && (len % 7) != 0)
		len += snprintf(buf + len, n - (size_t)len, "%s", "padding of the file's bytes\n");
	return len;
}

static void err(struct worker *w, const char *op, const char *path, int rc)
{
	fprintf(stderr, "nschurn: %s %s: %s\n", op, path, ofs_strerror(rc));
	w->errors++;
}

static int put(struct ofs_client *c, struct worker *w, struct file *f)
{
	struct ofs_put_opts o = { 0 };
	char buf[512];
	int len = content(f, buf, sizeof(buf)), rc;

	o.replicas = 3;
	rc = ofs_put_buf(c, buf, (size_t)len, f->path, &o);
	if (rc)
		err(w, "put", f->path, rc);
	return rc;
}

static void one(struct ofs_client *c, struct worker *w)
{
	unsigned pick = (unsigned)(next(w) % 100);
	int rc;

	if (w->nf == 0 || (pick < 40 && w->nf < MAXF)) {
		struct file *f = &w->f[w->nf];
		snprintf(f->path, sizeof(f->path), "%s/t%u/%c/f%u", w->dir, w->idx,
			 next(w) & 1 ? 'a' : 'b', w->serial);
		f->id = w->serial++;
		f->gen = 0;
		if (put(c, w, f) == 0)
			w->nf++;
		w->creates++;
	} else if (pick < 50) {
		struct file *f = &w->f[next(w) % (uint64_t)w->nf];
		f->gen++;
		put(c, w, f);
		w->overwrites++;
	} else if (pick < 70) {
		int i = (int)(next(w) % (uint64_t)w->nf);
		char to[256];
		int onto = -1;
		if (w->nf > 1 && next(w) % 4 == 0) {
			onto = (int)(next(w) % (uint64_t)w->nf);   /* onto an existing name */
			if (onto == i)
				onto = -1;
		}
		if (onto >= 0)
			snprintf(to, sizeof(to), "%s", w->f[onto].path);
		else
			snprintf(to, sizeof(to), "%s/t%u/%c/f%u", w->dir, w->idx,
				 next(w) & 1 ? 'a' : 'b', w->serial++);
		rc = ofs_rename(c, w->f[i].path, to);
		if (rc) {
			err(w, "rename", w->f[i].path, rc);
		} else {
			snprintf(w->f[i].path, sizeof(w->f[i].path), "%s", to);
			if (onto >= 0) {
				w->f[onto] = w->f[i];
				w->f[i] = w->f[--w->nf];
			}
		}
		w->renames++;
	} else if (pick < 90) {
		int i = (int)(next(w) % (uint64_t)w->nf);
		rc = ofs_unlink(c, w->f[i].path);
		if (rc)
			err(w, "rm", w->f[i].path, rc);
		else
			w->f[i] = w->f[--w->nf];
		w->removes++;
	} else if (w->nd < MAXD && (pick < 95 || w->nd == 0)) {
		snprintf(w->d[w->nd], sizeof(w->d[0]), "%s/t%u/a/d%u", w->dir, w->idx, w->serial++);
		rc = ofs_mkdir(c, w->d[w->nd]);
		if (rc)
			err(w, "mkdir", w->d[w->nd], rc);
		else
			w->nd++;
		w->mkdirs++;
	} else if (w->nd > 0) {
		rc = ofs_rmdir(c, w->d[w->nd - 1]);
		if (rc)
			err(w, "rmdir", w->d[w->nd - 1], rc);
		else
			w->nd--;
		w->rmdirs++;
	}
}

struct listed {
	char names[MAXF + MAXD][64];
	int n;
};

static int list_one(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct listed *l = arg;

	(void)d;
	if (l->n < MAXF + MAXD)
		snprintf(l->names[l->n], sizeof(l->names[0]), "%s", name);
	l->n++;
	return 0;
}

/* Both directories list exactly the model's names; every file reads back. */
static void verify(struct ofs_client *c, struct worker *w)
{
	for (int s = 0; s < 2; s++) {
		char dir[256];
		struct listed l = { .n = 0 };
		int want = 0, rc;
		snprintf(dir, sizeof(dir), "%s/t%u/%c", w->dir, w->idx, s ? 'b' : 'a');
		rc = ofs_readdir(c, dir, list_one, &l);
		if (rc) {
			err(w, "readdir", dir, rc);
			continue;
		}
		for (int i = 0; i < w->nf; i++)
			want += strncmp(w->f[i].path, dir, strlen(dir)) == 0 &&
				w->f[i].path[strlen(dir)] == '/';
		if (!s)
			want += w->nd;
		if (l.n != want) {
			fprintf(stderr, "nschurn: %s lists %d names, the model has %d\n", dir, l.n, want);
			w->errors++;
		}
	}
	for (int i = 0; i < w->nf; i++) {
		char want[512];
		void *got = NULL;
		size_t n = 0;
		int len = content(&w->f[i], want, sizeof(want));
		int rc = ofs_get_buf(c, w->f[i].path, &got, &n);
		if (rc)
			err(w, "get", w->f[i].path, rc);
		else if (n != (size_t)len || memcmp(got, want, n) != 0) {
			fprintf(stderr, "nschurn: %s: not what was last written\n", w->f[i].path);
			w->errors++;
		}
		free(got);
	}
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct ofs_client *c = NULL;
	const char *addrs[1] = { w->addr };
	char p[256];
	int rc = ofs_client_open(addrs, 1, &c);

	if (rc) {
		err(w, "connect", w->addr, rc);
		return NULL;
	}
	snprintf(p, sizeof(p), "%s/t%u", w->dir, w->idx);
	rc = ofs_mkdir(c, p);
	for (int s = 0; !rc && s < 2; s++) {
		snprintf(p, sizeof(p), "%s/t%u/%c", w->dir, w->idx, s ? 'b' : 'a');
		rc = ofs_mkdir(c, p);
	}
	if (rc) {
		err(w, "mkdir", p, rc);
	} else {
		for (long i = 0; i < w->ops; i++)
			one(c, w);
		verify(c, w);
	}
	ofs_client_close(c);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;
	long ops, threads, seed = 1;
	long tot[7] = { 0 };
	char *end;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: nschurn HOST:PORT DIR OPS THREADS [SEED]\n");
		return 2;
	}
	ops = strtol(argv[3], &end, 10);
	if (*end || ops < 1)
		return 2;
	threads = strtol(argv[4], &end, 10);
	if (*end || threads < 1 || threads > 64)
		return 2;
	if (argc == 6) {
		seed = strtol(argv[5], &end, 10);
		if (*end)
			return 2;
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w)
		return 1;
	for (long t = 0; t < threads; t++) {
		w[t].addr = argv[1];
		w[t].dir = argv[2];
		w[t].idx = (unsigned)t;
		w[t].ops = ops / threads + (t == 0 ? ops % threads : 0);
		w[t].rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(seed + t + 1);
		if (pthread_create(&w[t].th, NULL, run, &w[t])) {
			fprintf(stderr, "nschurn: cannot start a thread\n");
			return 1;
		}
	}
	for (long t = 0; t < threads; t++) {
		pthread_join(w[t].th, NULL);
		tot[0] += w[t].creates;
		tot[1] += w[t].overwrites;
		tot[2] += w[t].renames;
		tot[3] += w[t].removes;
		tot[4] += w[t].mkdirs;
		tot[5] += w[t].rmdirs;
		tot[6] += w[t].errors;
	}
	free(w);
	printf("nschurn: ops %ld creates %ld overwrites %ld renames %ld removes %ld mkdirs %ld "
	       "rmdirs %ld errors %ld\n", ops, tot[0], tot[1], tot[2], tot[3], tot[4], tot[5],
	       tot[6]);
	return tot[6] ? 1 : 0;
}

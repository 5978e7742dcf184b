/*
 * bstream.h - byte streams: the file-data part of a dfile, one plain file
 * per object under DATA/bstreams/XX/YY/OIDHEX (XX, YY the OID's first two
 * bytes in hex), so no folder ever holds more than a few files per 65 536.
 * Every file made here is 0600 and every folder 0700 (store.h).
 *
 * Storage I/O goes through an ops table (pread, pwrite, fdatasync, fsync)
 * that a test can replace to inject failures, as SQLite's VFS does.
 * Creation is durable when bstream_create returns: the file, and the
 * folder entries leading to it, are fsync'd.
 */
#ifndef OFS_BSTREAM_H
#define OFS_BSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/oid.h"

#define BSTREAM_PATH_MAX 4096

struct bstream_ops {
	ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
	ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
	int (*fdatasync)(int fd);
	int (*fsync)(int fd);
};

/* The ops in use; tests may replace them (not thread-safe to swap while
 * the store runs). bstream_ops_reset() restores the system calls. */
extern struct bstream_ops bstream_ops;
void bstream_ops_reset(void);

/* DATA/bstreams/XX/YY/OIDHEX into buf. -ENAMETOOLONG if it does not fit. */
int bstream_path(const char *datadir, struct ofs_oid oid, char *buf, size_t len);

/* Create an empty stream, durably. -EEXIST if it exists. */
int bstream_create(const char *datadir, struct ofs_oid oid);
/* Remove a stream (a missing one is not an error); the removal is synced. */
int bstream_remove(const char *datadir, struct ofs_oid oid);
/* Open for reading (and writing if rw); -ENOENT when missing. */
int bstream_open(const char *datadir, struct ofs_oid oid, int rw, int *fd);

/* Exactly n bytes at off, retrying short transfers. A read that meets end
 * of file returns the bytes read in *got (may be < n). -errno on error. */
int bstream_pread(int fd, void *buf, size_t n, uint64_t off, size_t *got);
int bstream_pwrite(int fd, const void *buf, size_t n, uint64_t off);
int bstream_datasync(int fd);
/* Ask the kernel to start reading [off, off+len) into the page cache. */
void bstream_prefetch(int fd, uint64_t off, uint64_t len);
/* Tell the kernel fd is read start to end (a larger readahead window,
 * kept ahead of the reader asynchronously). Advice only. */
void bstream_sequential(int fd);
/* Start writing [off, off+len) to disk now, without waiting (so that a
 * later fdatasync has little left to do). Advice: nothing is durable. */
void bstream_writeback(int fd, uint64_t off, uint64_t len);
/* Cut the stream to len bytes if it is longer (no-op otherwise). */
int bstream_trim(int fd, uint64_t len);

/*
 * Incoming copies (repair and moves): a copy fetched from a sibling is
 * written to DATA/incoming/OIDHEX, synced, then renamed over the stream
 * (bstream_install: the rename and both folders synced). A file left in
 * DATA/incoming by a crash is finished or dropped when the store opens.
 */
int bstream_incoming_path(const char *datadir, struct ofs_oid oid, char *buf, size_t len);
/* Create the incoming file for writing; -EBUSY when one exists (another
 * fetch of the object is running; a crash's leftovers are gone once the
 * store has opened). */
int bstream_incoming_create(const char *datadir, struct ofs_oid oid, int *fd);
/* fsync DATA/incoming (after creating files in it). */
int bstream_incoming_sync(const char *datadir);
/* Rename the incoming file over the stream, durably. -ENOENT: none. */
int bstream_install(const char *datadir, struct ofs_oid oid);
/* Remove the incoming file (a missing one is not an error). */
int bstream_incoming_drop(const char *datadir, struct ofs_oid oid);
/* Call fn for every OID with an incoming file; fn returns 0 to go on. */
int bstream_incoming_list(const char *datadir, int (*fn)(struct ofs_oid oid, void *arg),
			  void *arg);

/*
 * Quarantine (docs/design.md, "Background jobs and scrub"): before a stream is replaced, a hard
 * link to it is made as DATA/quarantine/OIDHEX.SECONDS.vVERSION.TAG, so a
 * wrong repair can be undone by hand. No stream: nothing is kept, 0.
 * bstream_quarantine_purge removes those older than max_age_s.
 */
int bstream_quarantine(const char *datadir, struct ofs_oid oid, uint64_t version,
		       const char *tag);
/* The same for bytes that are not a stream (an inline dfile's): written
 * to a new quarantine file, synced. */
int bstream_quarantine_bytes(const char *datadir, struct ofs_oid oid, uint64_t version,
			     const char *tag, const void *b, size_t n);
int bstream_quarantine_purge(const char *datadir, long long max_age_s, unsigned *purged);

/*
 * The names in DATA/incoming and DATA/quarantine, read back from the
 * folders (untrusted: anyone with access to the data dir may have put a
 * file there). An incoming name is the OID in lowercase hex, nothing
 * else. A quarantine name is OIDHEX.SECONDS.vVERSION.REST: SECONDS and
 * VERSION in decimal without a sign or a leading zero, SECONDS at most
 * LLONG_MAX, VERSION at most UINT64_MAX, REST the tag (and ".N" when the
 * name was taken), not empty and without '/'. Decode: 0 or -EINVAL, the
 * out-parameters written only on success (q->rest points into name).
 * Encode: name into buf (len bytes): 0, -EINVAL (REST empty or holding
 * '/', seconds negative) or -ENAMETOOLONG.
 */
struct bstream_qname {
	struct ofs_oid oid;
	long long seconds;               /* when it was put aside (Unix time) */
	uint64_t version;                /* the version of the copy put aside */
	const char *rest;                /* TAG or TAG.N */
};
int bstream_incoming_name_decode(const char *name, struct ofs_oid *oid);
int bstream_quarantine_name_decode(const char *name, struct bstream_qname *q);
int bstream_quarantine_name(const struct bstream_qname *q, char *buf, size_t len);

#endif

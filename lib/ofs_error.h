/*
 * ofs_error.h - the error codes every OFS function returns.
 *
 * Every function that can fail returns 0 on success or a negative code:
 * either a negated errno value (-ENOENT, -EIO, ...) or one of the OFS codes
 * below, which live in a reserved range well above any errno. The same
 * codes travel on the wire as the status of a response, so a client sees
 * exactly why a server refused. ofs_strerror() names any of them.
 */
#ifndef OFS_ERROR_H
#define OFS_ERROR_H

enum {
	OFS_EBASE = 10000,
	OFS_ECHECKSUM,    /* a chunk's bytes do not match its stored digest */
	OFS_ECORRUPT,     /* a record or frame failed to decode */
	OFS_EPROTO,       /* the peer broke the protocol */
	OFS_ETYPE,        /* operation on the wrong object type */
	OFS_ENAME,        /* bad entry name: empty, "." or "..", '/', NUL, >255 */
	OFS_ETOOBIG,      /* a length over a set limit */
	OFS_EUNKNOWNOP,   /* unknown operation code */
	OFS_EVERSION,     /* unsupported protocol or format version */
	OFS_EUNREACHABLE, /* no server could be reached */
	OFS_EQUORUM,      /* fewer copies durable than the write confidence */
	OFS_ENOSERVERS,   /* not enough servers in service for the copies asked */
	OFS_EBEHIND,      /* this copy missed changes: read another */
	OFS_EMOVING,      /* the object is held still while a copy moves: retry */
	OFS_ENOOBJ,       /* this server holds no copy of the object (it moved, or
	                     never came): ask another copy */
	OFS_EUNTRUSTED,   /* the peer's certificate is not from the cluster CA, or
	                     names nobody the cluster knows */
	OFS_ECERTEXPIRED, /* a certificate (ours or the peer's) has expired */
	OFS_ECERTREVOKED, /* a certificate has been revoked */
	OFS_ETLS,         /* TLS failed: the peer does not speak it or broke it */
	OFS_ETLSONLY,     /* the server speaks TLS only; plaintext was refused */
	OFS_ENOIDENT,     /* no identity to connect with */
	OFS_ECAPEXPIRED,  /* a capability has expired: ask for a new one */
	OFS_ECAPBAD,      /* a capability failed its check (forged, changed, or
	                     under a key no longer held) */
	OFS_EBUSY,        /* the server has no room for another connection (or
	                     this identity has its share): try another */
	OFS_ENOTCA,       /* a revocation list or key set the cluster CA did not
	                     sign: only the CA speaks for the cluster */
	OFS_EWRONGPEER,   /* 10025: the server reached is not the one meant (its
	                     certificate names another SID, or is revoked): a
	                     client tries another copy, as for a server down */
	OFS_ELATE,        /* 10026: a change that came after its deadline: its
	                     sender gave up on it and went on without it */
	OFS_ELAST
};

/* A static, human-readable description of err (negative code). Never NULL. */
const char *ofs_strerror(int err);

#endif

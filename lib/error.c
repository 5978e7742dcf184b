/* error.c - names for OFS error codes and negated errno values. */
#include <errno.h>
#include <string.h>

#include "lib/ofs_error.h"

const char *ofs_strerror(int err)
{
	int e = err < 0 ? -err : err;

	switch (e) {
	case 0: return "success";
	case OFS_ECHECKSUM: return "checksum mismatch";
	case OFS_ECORRUPT: return "corrupt record or frame";
	case OFS_EPROTO: return "protocol error";
	case OFS_ETYPE: return "wrong object type";
	case OFS_ENAME: return "invalid name";
	case OFS_ETOOBIG: return "length over limit";
	case OFS_EUNKNOWNOP: return "unknown operation";
	case OFS_EVERSION: return "unsupported version";
	case OFS_EUNREACHABLE: return "no server could be reached";
	case OFS_ENOSERVERS: return "not enough servers in service for the copies asked";
	case OFS_ENOOBJ: return "this server holds no copy of the object";
	case OFS_EMOVING: return "the object is held still for a moment while one of its copies moves";
	case OFS_EBEHIND: return "this copy missed changes and is not served until it has caught up";
	case OFS_EQUORUM: return "fewer copies could be written than the write confidence requires";
	case OFS_EUNTRUSTED: return "certificate not trusted";
	case OFS_ECERTEXPIRED: return "certificate expired";
	case OFS_ECERTREVOKED: return "certificate revoked";
	case OFS_ETLS: return "TLS failed: the peer does not speak TLS (a server run with --insecure?)";
	case OFS_ETLSONLY: return "the server speaks TLS only: plaintext refused";
	case OFS_ENOIDENT: return "no identity";
	case OFS_ECAPEXPIRED: return "capability expired";
	case OFS_ECAPBAD: return "capability not valid";
	case OFS_EBUSY: return "server busy: no room for another connection";
	case OFS_ENOTCA: return "not signed by the cluster's CA";
	case OFS_EWRONGPEER:
		return "the server reached is not the one meant (its certificate names another "
		       "server, or is revoked)";
	case OFS_ELATE: return "too late: the change's deadline had passed (the server was hung)";
	case EACCES: return "permission denied";
	default: break;
	}
	if (e > OFS_EBASE)
		return "unknown OFS error";
	return strerror(e);
}

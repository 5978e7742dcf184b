/*
 * proto_impl.h - what the two halves of the codec (proto.c: requests,
 * proto_reply.c: replies) share beyond proto.h.
 */
#ifndef OFS_PROTO_IMPL_H
#define OFS_PROTO_IMPL_H

#include <stdbool.h>

#include "lib/wire.h"

/* A string that goes into logs and reports: no control characters. */
bool proto_printable(const char *t);
/* A name of at most OFS_NAME_MAX bytes, no NUL, valid (ofs_name_valid);
 * empty only when allow_empty. Fails r (-OFS_ENAME) otherwise. */
void proto_decode_name(struct rbuf *r, char *name, bool allow_empty);

#endif

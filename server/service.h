/*
 * service.h - the request handlers: one decoded request in, one reply out.
 *
 * The listener hands each frame's body here; the body is decoded once
 * (proto_decode_req), checked, and applied to the store. A request that
 * fails to decode or is refused changes nothing.
 */
#ifndef OFS_SERVICE_H
#define OFS_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "wire.h"

/*
 * Handle one request: operation op with body (len bytes). The reply body
 * is appended to reply (only on success). Returns the reply status: 0, or
 * a negative code (decode errors from proto_decode_req, store errors, and
 * -ENOMEM). Bad requests are logged once here, at debug level; checksum
 * mismatches at warning level, naming the object.
 */
int service_handle(struct store *s, uint16_t op, const uint8_t *body, size_t len,
		   struct wbuf *reply);

#endif

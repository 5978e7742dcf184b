/*
 * frame.h - the frame every request and response travels in.
 *
 * A frame is a fixed 28-byte header followed by a credential, a capability
 * (requests only; both may be empty) and a body:
 *
 *   magic u32 "OFS1" | version u16 | op u16 | request id u64 | status i32 |
 *   cred_len u16 | cap_len u16 | body_len u32
 *
 * A response repeats the request's id, sets OFS_OP_RESPONSE in op and
 * carries the result in status (0 or a negative OFS error code). Every
 * length is checked against a fixed limit before anything is allocated, so
 * a peer cannot make us reserve more than OFS_FRAME_MAX bytes per frame.
 */
#ifndef OFS_FRAME_H
#define OFS_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define OFS_MAGIC 0x4f465331u        /* "OFS1" */
#define OFS_PROTO_VERSION 1
#define OFS_FRAME_HDR 28
#define OFS_OP_RESPONSE 0x8000u
#define OFS_MAX_CRED 4096            /* credential bytes */
#define OFS_MAX_CAP 4096             /* capability bytes */
#define OFS_MAX_IO (4u << 20)        /* bytes in one read or write */
#define OFS_MAX_BODY (OFS_MAX_IO + 65536u)
#define OFS_FRAME_MAX (OFS_FRAME_HDR + OFS_MAX_CRED + OFS_MAX_CAP + OFS_MAX_BODY)

struct ofs_frame_hdr {
	uint16_t version;   /* OFS_PROTO_VERSION */
	uint16_t op;        /* enum ofs_op, | OFS_OP_RESPONSE in replies */
	uint64_t reqid;     /* chosen by the client, echoed in the reply */
	int32_t status;     /* reply: 0 or negative error; request: 0 */
	uint16_t cred_len;  /* credential bytes after the header */
	uint16_t cap_len;   /* capability bytes after the credential */
	uint32_t body_len;  /* body bytes after the capability */
};

/* Encode h into exactly OFS_FRAME_HDR bytes at out. */
void frame_encode_hdr(const struct ofs_frame_hdr *h, uint8_t out[OFS_FRAME_HDR]);

/*
 * Decode and validate OFS_FRAME_HDR bytes. Returns 0 and fills *h, or:
 *   -OFS_EPROTO    wrong magic, or a request with a non-zero status
 *   -OFS_EVERSION  a version other than OFS_PROTO_VERSION
 *   -OFS_ETOOBIG   cred, cap or body longer than its limit
 */
int frame_decode_hdr(const uint8_t in[OFS_FRAME_HDR], struct ofs_frame_hdr *h);

/* Bytes that follow the header: cred_len + cap_len + body_len. */
size_t frame_payload_len(const struct ofs_frame_hdr *h);

/*
 * A request's deadline, in its credential slot (who the caller is comes
 * from its certificate; servers of the previous release skip the slot):
 *
 *   'D' | version u8 (1) | deadline u64 (Unix milliseconds)
 *
 * A change that carries one is applied only before it: a server that
 * hung with the request in its socket refuses it when it continues, as
 * the client or primary that sent it has given up on it and gone on
 * without it (docs/design.md, "A hung server").
 */
#define FRAME_DEADLINE_LEN 10
void frame_deadline_encode(uint64_t deadline_ms, uint8_t out[FRAME_DEADLINE_LEN]);
/* The deadline in a credential slot of n bytes: 0, or -ENOENT (none,
 * or one of another form: ignored, as an old server ignores ours). */
int frame_deadline_decode(const uint8_t *cred, size_t n, uint64_t *deadline_ms);
/* (the clock deadlines are in: time_now_ms, lib/timefmt.h) */

#endif

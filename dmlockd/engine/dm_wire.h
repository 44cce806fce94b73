/*
 * dm_wire.h: the binary encoding of engine messages (struct dm_msg) carried
 * as the payload of a peer-transport frame.  Versioned header, explicit
 * lengths; the decoder is strict and bounds-checked: malformed input gets
 * -EPROTO (or -EMSGSIZE), never a crash or a read past the buffer.
 */
#ifndef DM_WIRE_H
#define DM_WIRE_H

#include "dm_types.h"

struct dm_msg;

#define DM_WIRE_VERSION	2
/* No encoded message is larger than this; the transport's frame limit is
 * at least this plus its own header. */
#define DM_WIRE_MSG_MAX	(64 * 1024)

/* Encode msg into buf[0..cap).  Returns 0 and sets *ret_len, or -ENOBUFS. */
int dm_wire_encode(const struct dm_msg *msg, uint8_t *buf, size_t cap, size_t *ret_len);

/* Decode buf[0..len) into *ret.  Returns 0, or -EPROTO / -EMSGSIZE; *ret is
 * unspecified on failure. */
int dm_wire_decode(const uint8_t *buf, size_t len, struct dm_msg *ret);

#endif /* DM_WIRE_H */

/*
 * frame.c: encoder and strict decoder for peer-transport frames (format in
 * frame.h).  Pure: no I/O, no allocation.  Every length read from the wire
 * is checked against the bytes present and against the caller's limit
 * before it is used.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "frame.h"

static const uint8_t hello_magic[4] = { 'D', 'M', 'L', 'K' };

static void
put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint16_t
get_u16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t
get_u32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static int
char_in_name(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == '-';
}

int
frame_cluster_name_valid(const char *s, size_t len)
{
	if (len == 0 || len > FRAME_CLUSTER_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!char_in_name(s[i]))
			return 0;
	return 1;
}

int
frame_algorithm_name_valid(const char *s, size_t len)
{
	if (len == 0 || len > DM_ALGORITHM_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return 0;
	}
	return 1;
}

static int
bye_text_valid(const char *s, size_t len)
{
	if (len > FRAME_BYE_TEXT_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return 0;
	return 1;
}

static size_t
clamp_body(size_t max_body)
{
	return max_body == 0 || max_body > FRAME_BODY_MAX ? FRAME_BODY_MAX : max_body;
}

int
frame_peek_length(const uint8_t *h, size_t max_body, size_t *ret_total)
{
	uint32_t body = get_u32(h);

	if (h[4] < FRAME_HELLO || h[4] > FRAME_BYE || h[5] != 0 || get_u16(h + 6) != 0)
		return -EPROTO;
	if (body > clamp_body(max_body))
		return -EMSGSIZE;
	*ret_total = FRAME_HEADER_LEN + (size_t)body;
	return 0;
}

/* Read a u8-length-prefixed string into out (cap includes the NUL). */
static int
get_string(const uint8_t **p, const uint8_t *end, char *out, size_t cap)
{
	size_t n;

	if (end - *p < 1)
		return -EPROTO;
	n = **p;
	(*p)++;
	if (n >= cap || (size_t)(end - *p) < n)
		return -EPROTO;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p += n;
	return (int)n;
}

static int
decode_hello(const uint8_t *p, const uint8_t *end, struct frame_hello *h)
{
	int n;

	if (end - p < 4 + 2 + 2 + 24)
		return -EPROTO;
	if (memcmp(p, hello_magic, 4) != 0 || get_u16(p + 6) != 0)
		return -EPROTO;
	h->version = get_u16(p + 4);
	h->incarnation = get_u64(p + 8);
	h->your_incarnation = get_u64(p + 16);
	h->last_received = get_u64(p + 24);
	p += 32;
	if (h->version == 0 || h->incarnation == 0)
		return -EPROTO;
	n = get_string(&p, end, h->name, sizeof(h->name));
	if (n < 0 || !dm_node_name_valid(h->name, (size_t)n))
		return -EPROTO;
	n = get_string(&p, end, h->cluster, sizeof(h->cluster));
	if (n < 0 || !frame_cluster_name_valid(h->cluster, (size_t)n))
		return -EPROTO;
	n = get_string(&p, end, h->algorithm, sizeof(h->algorithm));
	if (n < 0 || !frame_algorithm_name_valid(h->algorithm, (size_t)n))
		return -EPROTO;
	if (h->version >= 2) {
		if (end - p < 16)
			return -EPROTO;
		h->epoch = get_u64(p);
		h->your_epoch = get_u64(p + 8);
		p += 16;
		if (h->epoch == 0)
			return -EPROTO;
	}
	if (p != end)
		return -EPROTO;
	return 0;
}

ssize_t
frame_decode(const uint8_t *buf, size_t len, size_t max_body, struct frame *ret)
{
	const uint8_t *body, *end;
	size_t total, body_len;
	int r;

	if (len < FRAME_HEADER_LEN)
		return 0;
	r = frame_peek_length(buf, max_body, &total);
	if (r < 0)
		return r;
	if (len < total)
		return 0;
	body = buf + FRAME_HEADER_LEN;
	body_len = total - FRAME_HEADER_LEN;
	end = body + body_len;
	memset(ret, 0, sizeof(*ret));
	ret->type = (enum frame_type)buf[4];

	switch (ret->type) {
	case FRAME_HELLO:
		r = decode_hello(body, end, &ret->u.hello);
		if (r < 0)
			return r;
		break;
	case FRAME_DATA:
		if (body_len < 8 + 1)
			return -EPROTO;
		ret->u.data.seq = get_u64(body);
		if (ret->u.data.seq == 0)
			return -EPROTO;
		ret->u.data.payload = body + 8;
		ret->u.data.len = body_len - 8;
		break;
	case FRAME_ACK:
		if (body_len != 8)
			return -EPROTO;
		ret->u.ack.seq = get_u64(body);
		break;
	case FRAME_KEEPALIVE:
		if (body_len != 0)
			return -EPROTO;
		break;
	case FRAME_BYE: {
		const uint8_t *p = body + 1;
		if (body_len < 2 || body[0] > FRAME_BYE_REASON_MAX)
			return -EPROTO;
		ret->u.bye.reason = (enum frame_bye_reason)body[0];
		r = get_string(&p, end, ret->u.bye.text, sizeof(ret->u.bye.text));
		if (r < 0 || p != end || !bye_text_valid(ret->u.bye.text, (size_t)r))
			return -EPROTO;
		break;
	}
	default:
		return -EPROTO;
	}
	return (ssize_t)total;
}

static void
put_header(uint8_t *p, enum frame_type type, size_t body_len)
{
	put_u32(p, (uint32_t)body_len);
	p[4] = (uint8_t)type;
	p[5] = 0;
	put_u16(p + 6, 0);
}

int
frame_encode_data_prefix(uint8_t *out, uint64_t seq, size_t payload_len)
{
	if (seq == 0 || payload_len == 0 || payload_len > FRAME_PAYLOAD_MAX)
		return -EINVAL;
	put_header(out, FRAME_DATA, 8 + payload_len);
	put_u64(out + FRAME_HEADER_LEN, seq);
	return 0;
}

static uint8_t *
put_string(uint8_t *p, const char *s, size_t n)
{
	*p++ = (uint8_t)n;
	memcpy(p, s, n);
	return p + n;
}

static int
encode_hello(const struct frame_hello *h, uint8_t *buf, size_t cap, size_t *ret_len)
{
	size_t nl = strnlen(h->name, sizeof(h->name)), cl = strnlen(h->cluster, sizeof(h->cluster));
	size_t al = strnlen(h->algorithm, sizeof(h->algorithm));
	size_t body_len = 32 + 3 + nl + cl + al + (h->version >= 2 ? 16 : 0);
	uint8_t *p;

	if (h->version == 0 || h->incarnation == 0 || !dm_node_name_valid(h->name, nl) ||
	    (h->version >= 2 && h->epoch == 0) || (h->version < 2 && (h->epoch | h->your_epoch) != 0) ||
	    !frame_cluster_name_valid(h->cluster, cl) || !frame_algorithm_name_valid(h->algorithm, al))
		return -EINVAL;
	if (cap < FRAME_HEADER_LEN + body_len)
		return -ENOBUFS;
	put_header(buf, FRAME_HELLO, body_len);
	p = buf + FRAME_HEADER_LEN;
	memcpy(p, hello_magic, 4);
	put_u16(p + 4, h->version);
	put_u16(p + 6, 0);
	put_u64(p + 8, h->incarnation);
	put_u64(p + 16, h->your_incarnation);
	put_u64(p + 24, h->last_received);
	p += 32;
	p = put_string(p, h->name, nl);
	p = put_string(p, h->cluster, cl);
	p = put_string(p, h->algorithm, al);
	if (h->version >= 2) {
		put_u64(p, h->epoch);
		put_u64(p + 8, h->your_epoch);
	}
	*ret_len = FRAME_HEADER_LEN + body_len;
	return 0;
}

int
frame_encode(const struct frame *f, uint8_t *buf, size_t cap, size_t *ret_len)
{
	size_t n;
	int r;

	switch (f->type) {
	case FRAME_HELLO:
		return encode_hello(&f->u.hello, buf, cap, ret_len);
	case FRAME_DATA:
		if (cap < FRAME_DATA_PREFIX_LEN + f->u.data.len)
			return -ENOBUFS;
		r = frame_encode_data_prefix(buf, f->u.data.seq, f->u.data.len);
		if (r < 0)
			return r;
		memcpy(buf + FRAME_DATA_PREFIX_LEN, f->u.data.payload, f->u.data.len);
		*ret_len = FRAME_DATA_PREFIX_LEN + f->u.data.len;
		return 0;
	case FRAME_ACK:
		if (cap < FRAME_HEADER_LEN + 8)
			return -ENOBUFS;
		put_header(buf, FRAME_ACK, 8);
		put_u64(buf + FRAME_HEADER_LEN, f->u.ack.seq);
		*ret_len = FRAME_HEADER_LEN + 8;
		return 0;
	case FRAME_KEEPALIVE:
		if (cap < FRAME_HEADER_LEN)
			return -ENOBUFS;
		put_header(buf, FRAME_KEEPALIVE, 0);
		*ret_len = FRAME_HEADER_LEN;
		return 0;
	case FRAME_BYE:
		n = strnlen(f->u.bye.text, sizeof(f->u.bye.text));
		if ((unsigned)f->u.bye.reason > FRAME_BYE_REASON_MAX || !bye_text_valid(f->u.bye.text, n))
			return -EINVAL;
		if (cap < FRAME_HEADER_LEN + 2 + n)
			return -ENOBUFS;
		put_header(buf, FRAME_BYE, 2 + n);
		buf[FRAME_HEADER_LEN] = (uint8_t)f->u.bye.reason;
		put_string(buf + FRAME_HEADER_LEN + 1, f->u.bye.text, n);
		*ret_len = FRAME_HEADER_LEN + 2 + n;
		return 0;
	}
	return -EINVAL;
}

const char *
frame_type_name(enum frame_type type)
{
	switch (type) {
	case FRAME_HELLO: return "HELLO";
	case FRAME_DATA: return "DATA";
	case FRAME_ACK: return "ACK";
	case FRAME_KEEPALIVE: return "KEEPALIVE";
	case FRAME_BYE: return "BYE";
	}
	return "?";
}

const char *
frame_bye_reason_name(enum frame_bye_reason reason)
{
	static const char *const names[] = {
		[FRAME_BYE_NORMAL] = "normal",
		[FRAME_BYE_VERSION] = "version",
		[FRAME_BYE_CLUSTER] = "cluster",
		[FRAME_BYE_ALGORITHM] = "algorithm",
		[FRAME_BYE_NAME] = "name",
		[FRAME_BYE_PROTOCOL] = "protocol",
		[FRAME_BYE_DUPLICATE] = "duplicate",
		[FRAME_BYE_OVERLOAD] = "overload",
	};
	if ((unsigned)reason > FRAME_BYE_REASON_MAX)
		return "?";
	return names[reason];
}

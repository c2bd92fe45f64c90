/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* An h2 header block as the HTTP/1.1 head the proxy's checks read, and back (h2_fields.c).
 * Pure: no sockets, no policy; nghttp2 has already checked each field (no upper case in a
 * name, no CR, LF or NUL in a value, pseudo-headers first and once, no connection-specific
 * field). One copy of every check: a stream's request is written as the text an HTTP/1.1
 * client would have sent, parsed by http_stream.c, decided and rewritten by exchange.c, then
 * turned back into fields for the origin. */
#ifndef AGENTBOX_H2_FIELDS_H
#define AGENTBOX_H2_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

/* A header block's decoded size at most, each field counted as its name, its value and 32
 * (RFC 9113 6.5.2): the same bound as an HTTP/1.1 head. An HPACK block that decodes past it
 * (a "bomb" of references to one large entry) is counted, not kept. */
#define H2_MAX_FIELDS 16384

/* The fields of one block as they came: "name\0value\0" pairs. */
struct h2_fields {
	char *buf;
	size_t len, cap;
	size_t n;	/* fields kept */
	size_t size;	/* the block's decoded size so far */
	bool too_big;	/* past H2_MAX_FIELDS: what came after was not kept */
	bool no_memory; /* a field could not be kept */
};

void h2_fields_clear(struct h2_fields *f);
/* Counts a field, and keeps it while the block is within H2_MAX_FIELDS. */
void h2_fields_add(struct h2_fields *f, const uint8_t *name, size_t nlen, const uint8_t *value,
		   size_t vlen);

/* The value of the field NAME (the first), or NULL. */
const char *h2_fields_get(const struct h2_fields *f, const char *name);
/* The request as HTTP/1.1 text: "METHOD PATH HTTP/1.1", "Host: AUTHORITY", the other fields in
 * their order (cookies joined into one line), the empty line. malloc'd (*len set), or NULL
 * with *why: a request agentbox does not forward (a scheme other than https, CONNECT, Host and
 * :authority that differ, no authority) or no memory (*why NULL). */
char *h2_fields_request_head(const struct h2_fields *f, size_t *len, const char **why);
/* A response as HTTP/1.1 text: "HTTP/1.1 STATUS", the fields, the empty line; NULL as above
 * (no status, or one that is not 3 digits). */
char *h2_fields_response_head(const struct h2_fields *f, size_t *len, const char **why);
/* Trailers as a trailer section: "name: value" lines, then the empty line. */
char *h2_fields_trailer_text(const struct h2_fields *f, size_t *len);

/* nghttp2 fields read back from a head (or a trailer section): names lower-cased, a request
 * line's method and target as :method, :scheme https and :path, Host as :authority, a status
 * line's code as :status; connection-specific fields dropped. secret: the head carries a real
 * credential value: no field enters the HPACK table and the copy is zeroed when freed. */
struct h2_nv {
	nghttp2_nv *v;
	size_t n;
	char *store;
	size_t store_len;
	bool secret;
};

enum h2_head_kind { H2_HEAD_REQUEST, H2_HEAD_RESPONSE, H2_HEAD_TRAILERS };

/* 0, or -1 when out of memory or the text is not a head of that kind (never for what
 * exchange.c wrote from h2_fields_*'s text). */
int h2_nv_from_head(const char *head, size_t len, enum h2_head_kind kind, bool secret,
		    struct h2_nv *out);
void h2_nv_free(struct h2_nv *nv);

#endif

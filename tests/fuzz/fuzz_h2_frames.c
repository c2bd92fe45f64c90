/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: a client's bytes to the h2 session an intercepted connection serves it
 * with, built as a run builds it (h2_session_new: its options, SETTINGS, windows, allocator),
 * with callbacks that keep a stream's fields as the proxy does (h2_fields_add) and take its
 * DATA at once. The input follows the client preface and is fed twice: whole, and in pieces of
 * sizes drawn from a hash of it. Checks beyond "no crash": a block's kept fields never pass
 * H2_MAX_FIELDS; nghttp2 never holds more than H2_SESSION_MEMORY (its allocator refuses);
 * never more than H2_MAX_STREAMS streams open. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_fields.h"
#include "h2_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_h2_frames: check failed: %s (%s:%d)\n", #cond,       \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct state {
	struct h2_fields f;
	unsigned open;
	struct h2_mem mem;
};

static int begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct state *st = user;

	(void)s;
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
		st->open++;
	h2_fields_clear(&st->f);
	return 0;
}

static int header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		  const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct state *st = user;

	(void)s;
	(void)f;
	(void)flags;
	h2_fields_add(&st->f, name, nlen, value, vlen);
	CHECK(st->f.len <= H2_MAX_FIELDS);
	return 0;
}

static int frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct state *st = user;
	const char *why;
	size_t len;
	char *head;

	(void)s;
	if (f->hd.type != NGHTTP2_HEADERS || st->f.too_big)
		return 0;
	/* what the proxy would make of the block: within the cap, or refused */
	head = h2_fields_request_head(&st->f, &len, &why);
	CHECK(!head || len <= H2_MAX_FIELDS + 64);
	free(head);
	return 0;
}

static int chunk(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *d, size_t n,
		 void *user)
{
	(void)flags;
	(void)d;
	(void)user;
	nghttp2_session_consume(s, id, n);
	return 0;
}

static int closed(nghttp2_session *s, int32_t id, uint32_t error, void *user)
{
	struct state *st = user;

	(void)s;
	(void)id;
	(void)error;
	if (st->open)
		st->open--;
	return 0;
}

static void run(const uint8_t *data, size_t size, bool pieces)
{
	static const char magic[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	nghttp2_session_callbacks *cb;
	nghttp2_session *s;
	struct state st = {0};
	uint64_t h = 1469598103934665603ull;
	bool failed = false;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ull;
	CHECK(nghttp2_session_callbacks_new(&cb) == 0);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, closed);
	CHECK(h2_session_new(&s, true, cb, &st, &st.mem) == 0);
	CHECK(nghttp2_session_mem_recv(s, (const uint8_t *)magic, sizeof(magic) - 1) ==
	      (ssize_t)sizeof(magic) - 1);
	for (size_t off = 0; off < size && !failed;) {
		size_t n = pieces ? 1 + (size_t)(h % 97) : size - off;
		const uint8_t *out;
		ssize_t rc;
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		if (n > size - off)
			n = size - off;
		rc = nghttp2_session_mem_recv(s, data + off, n);
		failed = rc < 0;
		off += n;
		while (!failed && nghttp2_session_mem_send(s, &out) > 0)
			;
		CHECK(st.mem.used <= H2_SESSION_MEMORY);
		CHECK(st.open <= H2_MAX_STREAMS + 1);
	}
	nghttp2_session_del(s);
	nghttp2_session_callbacks_del(cb);
	h2_fields_clear(&st.f);
	CHECK(st.mem.used == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size, false);
	run(data, size, true);
	return 0;
}

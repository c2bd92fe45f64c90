/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The nghttp2 sessions' options, SETTINGS and allocator (see h2_wire.h). */
#include "h2_wire.h"

#include <stdlib.h>
#include <string.h>

/* Each block carries its size in front, so that free knows what to count (and zero). */
#define HDR 16

static void *mem_malloc(size_t size, void *user)
{
	struct h2_mem *m = user;
	char *p;

	if (size > H2_SESSION_MEMORY - m->used || !(p = malloc(HDR + size))) {
		m->over = true;
		return NULL;
	}
	memcpy(p, &size, sizeof(size));
	m->used += size;
	return p + HDR;
}

static void mem_free(void *ptr, void *user)
{
	struct h2_mem *m = user;
	char *p = ptr;
	size_t size;

	if (!p)
		return;
	p -= HDR;
	memcpy(&size, p, sizeof(size));
	m->used -= size;
	if (m->zero_on_free)
		explicit_bzero(p + HDR, size);
	free(p);
}

static void *mem_calloc(size_t n, size_t size, void *user)
{
	void *p;

	if (size && n > ((size_t)-1 - HDR) / size)
		return NULL;
	if ((p = mem_malloc(n * size, user)))
		memset(p, 0, n * size);
	return p;
}

static void *mem_realloc(void *ptr, size_t size, void *user)
{
	size_t old = 0;
	void *p;

	if (!ptr)
		return mem_malloc(size, user);
	memcpy(&old, (char *)ptr - HDR, sizeof(old));
	if (!(p = mem_malloc(size, user)))
		return NULL;
	memcpy(p, ptr, old < size ? old : size);
	mem_free(ptr, user);
	return p;
}

static void set_options(nghttp2_option *o, bool server)
{
	/* a byte is acknowledged to its sender when the other side took it (h2_session.c): the
	 * windows bound what the proxy holds for a peer that does not read */
	nghttp2_option_set_no_auto_window_update(o, 1);
	nghttp2_option_set_max_continuations(o, 8);   /* CONTINUATION floods */
	nghttp2_option_set_max_settings(o, 32);	      /* entries in one SETTINGS frame */
	nghttp2_option_set_max_outbound_ack(o, 1000); /* SETTINGS and PING acks unread */
	nghttp2_option_set_max_deflate_dynamic_table_size(o, 4096);
	nghttp2_option_set_no_closed_streams(o, 1);
	if (server) {
		nghttp2_option_set_stream_reset_rate_limit(o, 1000, 33); /* rapid reset */
		nghttp2_option_set_max_reserved_remote_streams(o, 0);
	} else {
		nghttp2_option_set_peer_max_concurrent_streams(o, H2_MAX_STREAMS);
	}
}

int h2_session_new(nghttp2_session **s, bool server, const nghttp2_session_callbacks *cbs,
		   void *user, struct h2_mem *m)
{
	nghttp2_settings_entry server_settings[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
	    {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 16384},
	    {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
	};
	nghttp2_settings_entry client_settings[] = {
	    {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
	    {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 16384},
	};
	nghttp2_option *o;
	int rc;

	m->mem = (nghttp2_mem){m, mem_malloc, mem_free, mem_calloc, mem_realloc};
	if ((rc = nghttp2_option_new(&o)) != 0)
		return rc;
	set_options(o, server);
	rc = server ? nghttp2_session_server_new3(s, cbs, user, o, &m->mem)
		    : nghttp2_session_client_new3(s, cbs, user, o, &m->mem);
	nghttp2_option_del(o);
	if (rc != 0)
		return rc;
	rc = server ? nghttp2_submit_settings(*s, NGHTTP2_FLAG_NONE, server_settings,
					      sizeof(server_settings) / sizeof(*server_settings))
		    : nghttp2_submit_settings(*s, NGHTTP2_FLAG_NONE, client_settings,
					      sizeof(client_settings) / sizeof(*client_settings));
	if (rc == 0)
		rc =
		    nghttp2_session_set_local_window_size(*s, NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW);
	if (rc != 0) {
		nghttp2_session_del(*s);
		*s = NULL;
	}
	return rc;
}

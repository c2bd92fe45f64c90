/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's requests on the wire (see include/session_proto.h). Layout: a fixed header
 * (magic, kind, a value: the signal, the port, the policy op or the question; timeout, counts,
 * a cwd flag), then NUL-terminated strings: the cwd when present, argv, env. Every string must end
 * exactly where the buffer does. */
#include "session_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC 0x41425831u /* "ABX1" */

struct header {
	uint32_t magic, kind;
	int32_t value; /* the signal, the port, the policy op, the question; else 0 */
	uint32_t has_cwd;
	uint64_t timeout_ms;
	uint32_t argc, envc;
};

bool session_id_valid(const char *id)
{
	size_t i;

	if (!id)
		return false;
	for (i = 0; id[i]; i++)
		if (i >= SESSION_ID_LEN ||
		    !((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return i == SESSION_ID_LEN;
}

static size_t strings_len(const struct strv *sv)
{
	size_t n = 0;

	for (size_t i = 0; i < sv->n; i++)
		n += strlen(sv->v[i]) + 1;
	return n;
}

static char *put(char *p, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(p, s, n);
	return p + n;
}

int session_request_encode(const struct session_request *r, char **out, size_t *len,
			   struct ab_err *e)
{
	bool port = r->kind == SESSION_PORT || r->kind == SESSION_PORT_CLOSE;
	int32_t value = port			    ? (int32_t)r->port
			: r->kind == SESSION_POLICY ? r->op
			: r->kind == SESSION_ANSWER ? (int32_t)r->question
						    : r->signo;
	struct header h = {MAGIC,
			   (uint32_t)r->kind,
			   value,
			   r->cwd != NULL,
			   r->timeout_ms,
			   (uint32_t)r->argv.n,
			   (uint32_t)r->env.n};
	size_t n = sizeof(h) + (r->cwd ? strlen(r->cwd) + 1 : 0) + strings_len(&r->argv) +
		   strings_len(&r->env);
	char *buf, *p;

	if (n > SESSION_MAX_REQUEST)
		return ab_fail(e, E2BIG, "the command, its environment and cwd take %zu bytes", n),
		       ab_hint(e, "a session's exec request holds at most %d bytes",
			       SESSION_MAX_REQUEST);
	if (!(buf = malloc(n)))
		return ab_fail(e, ENOMEM, "request");
	memcpy(buf, &h, sizeof(h));
	p = buf + sizeof(h);
	if (r->cwd)
		p = put(p, r->cwd);
	for (size_t i = 0; i < r->argv.n; i++)
		p = put(p, r->argv.v[i]);
	for (size_t i = 0; i < r->env.n; i++)
		p = put(p, r->env.v[i]);
	*out = buf;
	*len = n;
	return 0;
}

/* The next string of [*p, end), or NULL when no terminator is left. */
static const char *take(const char **p, const char *end)
{
	const char *s = *p, *nul = memchr(s, '\0', (size_t)(end - s));

	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

static bool env_entry_valid(const char *s)
{
	size_t n = strcspn(s, "=");

	if (n == 0 || !s[n] || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static int bad(struct ab_err *e, const char *what)
{
	return ab_fail(e, EPROTO, "malformed session request: %s", what);
}

static int decode_strings(const char **p, const char *end, uint32_t count, struct strv *sv,
			  bool env, struct ab_err *e)
{
	for (uint32_t i = 0; i < count; i++) {
		const char *s = take(p, end);
		if (!s)
			return bad(e, "a string runs past the end");
		if (env && !env_entry_valid(s))
			return bad(e, "an environment entry is not NAME=VALUE");
		if (strv_push(sv, s) < 0)
			return ab_fail(e, ENOMEM, "request");
	}
	return 0;
}

/* One argument for a policy change (its rule) and an answer (its word), a command for an exec,
 * none for the rest; an environment and a cwd for an exec only; the value in its range. */
static bool fields_fit(const struct session_request *r)
{
	bool one_arg = r->kind == SESSION_POLICY || r->kind == SESSION_ANSWER;

	if (r->kind == SESSION_EXEC ? r->argv.n == 0
				    : (r->env.n || r->cwd || r->argv.n != (one_arg ? 1 : 0)))
		return false;
	switch (r->kind) {
	case SESSION_SIGNAL:
		return r->signo > 0 && r->signo < 65;
	case SESSION_PORT:
	case SESSION_PORT_CLOSE:
		return r->port != 0;
	case SESSION_POLICY:
		return r->op >= 1 && r->op <= SESSION_POLICY_OPS && r->argv.v[0][0];
	case SESSION_ANSWER:
		return r->question && (!strcmp(r->argv.v[0], SESSION_ANSWER_ONCE) ||
				       !strcmp(r->argv.v[0], SESSION_ANSWER_RUN) ||
				       !strcmp(r->argv.v[0], SESSION_ANSWER_DENY));
	default:
		return true;
	}
}

int session_request_decode(const char *buf, size_t len, struct session_request *r, struct ab_err *e)
{
	struct header h;
	const char *p = buf + sizeof(h), *end = buf + len;

	memset(r, 0, sizeof(*r));
	if (len < sizeof(h) || len > SESSION_MAX_REQUEST)
		return bad(e, "wrong size");
	memcpy(&h, buf, sizeof(h));
	if (h.magic != MAGIC)
		return bad(e, "not version 1 of the protocol (its header starts ABX1)");
	if (h.kind < SESSION_EXEC || h.kind > SESSION_ANSWER || h.has_cwd > 1)
		return bad(e, "unknown kind");
	/* each string takes at least its terminator: counts past the size are lies */
	if (h.argc > len || h.envc > len)
		return bad(e, "counts");
	r->kind = (enum session_kind)h.kind;
	if (r->kind == SESSION_PORT || r->kind == SESSION_PORT_CLOSE)
		r->port = h.value > 0 && h.value <= 65535 ? (unsigned)h.value : 0;
	else if (r->kind == SESSION_POLICY)
		r->op = h.value;
	else if (r->kind == SESSION_ANSWER)
		r->question = h.value > 0 ? (unsigned)h.value : 0;
	else
		r->signo = h.value;
	r->timeout_ms = h.timeout_ms;
	if (h.has_cwd) {
		const char *cwd = take(&p, end);
		if (!cwd || !cwd[0])
			return bad(e, "cwd");
		if (!(r->cwd = strdup(cwd)))
			return ab_fail(e, ENOMEM, "request");
	}
	if (decode_strings(&p, end, h.argc, &r->argv, false, e) < 0 ||
	    decode_strings(&p, end, h.envc, &r->env, true, e) < 0) {
		session_request_free(r);
		return -1;
	}
	if (p != end || !fields_fit(r)) {
		session_request_free(r);
		return bad(e, p != end ? "trailing bytes" : "fields for its kind");
	}
	return 0;
}

void session_request_free(struct session_request *r)
{
	free(r->cwd);
	r->cwd = NULL;
	strv_free(&r->argv);
	strv_free(&r->env);
}

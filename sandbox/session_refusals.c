/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Who may talk to a session's control socket, and its refusals in the trail
 * (include/session_refusals.h). */
#include "session_refusals.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const reasons[REFUSAL_NONE] = {"no peer credentials", "another user",
						  "another pid namespace (inside a sandbox)",
						  "too many clients", "bad request"};

const char *session_refusal_reason(enum session_refusal why)
{
	return why < REFUSAL_NONE ? reasons[why] : "accepted";
}

static bool same_pid_ns(const char *ns, pid_t pid)
{
	char path[32], theirs[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	n = readlink(path, theirs, sizeof(theirs) - 1);
	if (n <= 0)
		return false;
	theirs[n] = '\0';
	return !strcmp(theirs, ns);
}

enum session_refusal session_peer_check(const char *ns, int fd, struct ucred *uc)
{
	socklen_t len = sizeof(*uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len) < 0)
		return REFUSAL_NO_CREDENTIALS;
	if (uc->uid != getuid())
		return REFUSAL_OTHER_USER;
	if (uc->pid <= 0 || !same_pid_ns(ns, uc->pid))
		return REFUSAL_OTHER_PID_NS;
	return REFUSAL_NONE;
}

bool session_refusals_due(const struct session_refusals *r, uint64_t now)
{
	return r->start && now - r->start >= SESSION_REFUSAL_WINDOW_MS;
}

int session_refusals_flush(struct session_refusals *r, struct audit *a, struct ab_err *e)
{
	uint64_t total = 0;
	struct json *j;

	for (int i = 0; i < REFUSAL_NONE; i++)
		total += r->held[i];
	r->start = 0;
	r->written = 0;
	if (!total)
		return 0;
	j = audit_begin(a, "session");
	json_kv_str(j, "action", "refused");
	json_kv_bool(j, "repeat", true);
	json_kv_uint(j, "count", total);
	json_key(j, "reasons");
	json_obj_begin(j);
	for (int i = 0; i < REFUSAL_NONE; i++)
		if (r->held[i])
			json_kv_uint(j, reasons[i], r->held[i]);
	json_obj_end(j);
	memset(r->held, 0, sizeof(r->held));
	audit_budgeted(a);
	return audit_emit(a, e);
}

int session_refusal(struct session_refusals *r, struct audit *a, uint64_t now,
		    const struct ucred *uc, enum session_refusal why, const char *detail,
		    struct ab_err *e)
{
	struct json *j;

	if (session_refusals_due(r, now) && session_refusals_flush(r, a, e) < 0)
		return -1;
	if (!r->start)
		r->start = now;
	if (r->written >= SESSION_REFUSALS_WRITTEN) {
		r->held[why]++;
		return 0;
	}
	r->written++;
	j = audit_begin(a, "session");
	json_kv_str(j, "action", "refused");
	json_kv_str(j, "reason", reasons[why]);
	if (detail)
		json_kv_str(j, "detail", detail);
	json_kv_int(j, "uid", uc->uid);
	json_kv_int(j, "pid", uc->pid);
	audit_budgeted(a);
	return audit_emit(a, e);
}

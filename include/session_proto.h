/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What a session's client and supervisor say to each other, pure (no I/O): session ids, and a
 * request (exec, stop, info, a signal for a running exec, a port forwarded or its forward
 * closed, a change of the live rules, the ask subscription and its answers) encoded into one
 * SOCK_SEQPACKET message. The supervisor hands an exec to pid 1 in the
 * same encoding. See session.h. */
#ifndef AGENTBOX_SESSION_PROTO_H
#define AGENTBOX_SESSION_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "strv.h"

/* A session id is its run id: 32 lowercase hex digits (audit.c), nothing else. */
#define SESSION_ID_LEN 32
bool session_id_valid(const char *id);

/* One request: argv, environment overrides and cwd, whatever their lengths, fit in this. */
#define SESSION_MAX_REQUEST (128 * 1024)

enum session_kind {
	SESSION_EXEC = 1,
	SESSION_STOP,
	SESSION_INFO,
	SESSION_SIGNAL,
	SESSION_PORT,	    /* a socket on the host for the sandbox's 127.0.0.1:port */
	SESSION_PORT_CLOSE, /* that socket removed */
	SESSION_POLICY,	    /* a change of the live rules: op, and the rule as argv[0] */
	SESSION_ASK,	    /* this connection is asked the questions (it stays open) */
	SESSION_ANSWER,	    /* on that connection: question's answer as argv[0] */
};

/* SESSION_POLICY's op: live_rules.h's enum live_op (1 allow, 2 deny, 3 [http] allow, 4 [http]
 * deny). SESSION_ANSWER's words. */
#define SESSION_POLICY_OPS 4
#define SESSION_ANSWER_ONCE "once"
#define SESSION_ANSWER_RUN "run"
#define SESSION_ANSWER_DENY "deny"

struct session_request {
	enum session_kind kind;
	int signo;	       /* SESSION_SIGNAL */
	unsigned port;	       /* SESSION_PORT, SESSION_PORT_CLOSE: 1 to 65535 */
	int op;		       /* SESSION_POLICY: 1 to SESSION_POLICY_OPS */
	unsigned question;     /* SESSION_ANSWER: 1 or more */
	uint64_t timeout_ms;   /* SESSION_EXEC: 0 for none */
	char *cwd;	       /* SESSION_EXEC: NULL for the default */
	struct strv argv, env; /* env: NAME=VALUE */
};

/* Encodes r into a malloc'd buffer (*out, *len); fails past SESSION_MAX_REQUEST. */
int session_request_encode(const struct session_request *r, char **out, size_t *len,
			   struct ab_err *e);
/* Decodes buf[0..len) into r (owned copies); refuses anything malformed: wrong magic or kind,
 * counts that do not match the strings, a missing terminator, an exec without argv, an env
 * entry that is not NAME=VALUE, a policy change without its one rule or with an unknown op, an
 * answer that is not one of the three words for a question. */
int session_request_decode(const char *buf, size_t len, struct session_request *r,
			   struct ab_err *e);
void session_request_free(struct session_request *r);

/* Replies, supervisor to client, as struct msg (channel.h) types. */
enum session_reply {
	SESSION_REPLY_STARTED = 100, /* id: the exec's number */
	SESSION_REPLY_EXIT,	     /* value: agentbox's exit status; text: the cause */
	SESSION_REPLY_ERROR,	     /* value: errno; text: the message */
	SESSION_REPLY_INFO,	     /* text: the session as one JSON object */
	SESSION_REPLY_STOPPED,
	SESSION_REPLY_RESULT, /* just before EXIT; text: the exec's --result object (result.h) */
	SESSION_REPLY_NOTE,   /* before RESULT; text: a line agentbox says on the client's stderr */
	SESSION_REPLY_PORT,   /* value: the port; text: its socket on the host */
	SESSION_REPLY_POLICY, /* value: 1 changed, 0 in force already; text: the rule; then the
				 change as a JSON object */
	SESSION_REPLY_ASKING, /* value: how long a question waits, in ms */
	SESSION_REPLY_QUESTION, /* id: its number; value: the port; text: the host; then the
				   question as a JSON object */
	SESSION_REPLY_SETTLED,	/* id: the question; value: connections settled; text: how
				   (once, run, deny, timeout, rule) */
};

#endif

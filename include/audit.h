/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The audit trail: one JSON object per line, written whole with a single write(). Every module
 * reports through here; this is the only writer. See docs/audit.md. */
#ifndef AGENTBOX_AUDIT_H
#define AGENTBOX_AUDIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "json.h"
#include "strv.h"

#define AUDIT_SCHEMA_VERSION 1

/* What a run does when its audit trail cannot be written ([audit] on-failure). */
enum audit_failure { AUDIT_FAILURE_STOP, AUDIT_FAILURE_CONTINUE };

struct audit;

/* dest: NULL (no audit), "-" (stdout), "fd:N", or a file path (appended, created 0600, never
 * through a symlink). redact: the profile's extra redaction patterns. */
int audit_open(struct audit **out, const char *dest, const struct strv *redact,
	       enum audit_failure on_failure, struct ab_err *e);
void audit_close(struct audit *a);
/* A secret known by value: no event will hold it (redact.h). -1 when out of memory. */
int audit_add_secret(struct audit *a, const char *s, size_t n);

bool audit_enabled(const struct audit *a);
const char *audit_run_id(const struct audit *a);
/* The fd written to (-1 when disabled): the sandbox must never inherit it. */
int audit_fd(const struct audit *a);
/* The file path written to, when the destination is a file (NULL otherwise). */
const char *audit_path(const struct audit *a);

/* Starts an event of the given type with the common fields (v, ts, seq, run, event) and returns
 * the open JSON object to add fields to; audit_emit closes and writes it. */
struct json *audit_begin(struct audit *a, const char *event);
/* Writes the event. When the destination fails: with AUDIT_FAILURE_STOP returns -1 (the run
 * must stop); with AUDIT_FAILURE_CONTINUE says so once on stderr, stops writing, returns 0. */
int audit_emit(struct audit *a, struct ab_err *e);

/* Adds "chain": the running SHA-256 over every line of this run so far (for the exit event). */
void audit_chain(const struct audit *a, struct json *j);

/* Checks the hash chains of every run in a file. Prints "OK: ..." or the first break to out.
 * Returns 0 when intact, 1 when broken, -1 (e set) when the file cannot be read. */
int audit_verify(const char *path, FILE *out, struct ab_err *e);

/* Prints a table per run: denials first, then limits, errors, warnings and the outcome. */
int audit_summary(const char *path, FILE *out, struct ab_err *e);

/* How many events of each type were written, as a JSON object (for the exit event). */
void audit_counts(const struct audit *a, struct json *j);

/* In a session's events: "exec": the number of the exec a process belongs to, "session" for
 * one no exec holds any more, null when it could not be placed (it left meanwhile); -2 (not a
 * session): no key at all. */
void audit_kv_exec(struct json *j, long exec);
/* "decision": DECISION in the current event; a "deny" is tallied under the event's type,
 * written or not (past the budget). */
void audit_decision(struct audit *a, const char *decision);
/* Tallies one refused action of a kind without an event of its own (a repeat the event of its
 * first occurrence stands for). */
void audit_denied(struct audit *a, const char *kind);
/* The refusals so far by kind, every kind present (0 when none): {"net": N, "http": N,
 * "dns": N, "credential": N, "syscall": N}. For the exit event and --result. */
void audit_denials(const struct audit *a, struct json *j);

/* Events a command can cause at will (net, dns, syscall, limit): past per_kind of one kind
 * they are counted, not written, after one limit event "audit-events" naming the kind. 0: no
 * cap. */
void audit_set_budget(struct audit *a, uint64_t per_kind);
/* The current event counts against that budget, under its type, though events of its type
 * are not budgeted as a whole (a session's refused connections, not its start and end). */
void audit_budgeted(struct audit *a);
/* The counts of those not written, by type, as a JSON object (for the exit event). */
void audit_suppressed(const struct audit *a, struct json *j);

#endif

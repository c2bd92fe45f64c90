/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* agentbox audit summary: what each run in a trail was, and what it was refused. Each run gets
 * a header (start time, duration, command, profile, network) and a line with its refusals by
 * kind, then its rows: every refusal grouped (the same host, call, name...) and counted, then
 * limits, errors, warnings, a session's execs and the outcome. Reads the trail with the strict
 * JSON reader, so a line the command wrote into a shared stream is skipped, never half-read. */
#include "audit.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "printable.h"

/* Longer lines are skipped as not events: agentbox's own come nowhere near it (a start event
 * with a long argv is a few KiB), and it bounds what one line's parse tree can cost. */
#define SUMMARY_MAX_LINE (1024 * 1024)
/* Rows shown for one kind of refusal in a run; the rest are summed in one line. */
#define SUMMARY_ROWS_PER_KIND 20
#define TEXT_MAX 512

enum rank { R_DENIED, R_LIMIT, R_ERROR, R_WARNING, R_EXEC, R_EXIT };

/* The kinds of refusal, in the order shown. The first five are the exit event's denials. */
enum kind { K_NET, K_HTTP, K_DNS, K_CREDENTIAL, K_SYSCALL, K_ENV, K_FS, K_SESSION, N_KINDS };
static const char *const kind_names[N_KINDS] = {"net",	   "http", "dns", "credential",
						"syscall", "env",  "fs",  "session"};
#define N_TALLIED 5

struct row {
	enum rank rank;
	int kind; /* a refusal's kind; -1 for other rows */
	char *label, *text, *note;
	uint64_t count;
	size_t order; /* first seen, in the file */
};

struct run {
	char id[40];
	char *started, *command, *profile, *network;
	size_t n_profiles;
	int64_t duration_ms; /* -1: no exit event said */
	bool ended, tallied; /* an exit event; with its denials object */
	uint64_t tally[N_TALLIED];
	uint64_t seen[N_KINDS]; /* refusals the written events hold */
	struct row *rows;
	size_t n_rows, cap_rows;
};

struct summary {
	struct run *runs;
	size_t n_runs;
	size_t skipped; /* lines that are not agentbox events */
	size_t order;
};

static char *dup_text(const char *s)
{
	return strdup(s ? s : "");
}

static const char *str_or(const struct jnode *ev, const char *key, const char *dflt)
{
	const char *s = jnode_str(ev, key);
	return s ? s : dflt;
}

/* A number's text as written ("12"), or dflt. */
static const char *num_or(const struct jnode *ev, const char *key, const char *dflt)
{
	const struct jnode *n = jnode_get(ev, key);
	return n && n->type == JNODE_NUMBER ? n->str : dflt;
}

static uint64_t count_of(const struct jnode *ev, const char *key)
{
	int64_t v;
	return jnode_int(jnode_get(ev, key), 0, INT64_MAX, &v) ? (uint64_t)v : 0;
}

/* Adds n to the row of the same rank, kind, label and text, or makes one. -1: out of memory. */
static int add_row(struct summary *s, struct run *r, enum rank rank, int kind, const char *label,
		   const char *text, const char *note, uint64_t n)
{
	struct row *row;

	if (kind >= 0)
		r->seen[kind] += n;
	for (size_t i = 0; i < r->n_rows; i++) {
		row = &r->rows[i];
		if (row->rank == rank && row->kind == kind && !strcmp(row->label, label) &&
		    !strcmp(row->text, text)) {
			row->count += n;
			return 0;
		}
	}
	if (r->n_rows == r->cap_rows) {
		size_t cap = r->cap_rows ? r->cap_rows * 2 : 16;
		struct row *v = realloc(r->rows, cap * sizeof(*v));
		if (!v)
			return -1;
		r->rows = v;
		r->cap_rows = cap;
	}
	row = &r->rows[r->n_rows];
	*row = (struct row){rank,	    kind, dup_text(label), dup_text(text),
			    dup_text(note), n,	  s->order++};
	if (!row->label || !row->text || !row->note) {
		free(row->label), free(row->text), free(row->note);
		return -1;
	}
	r->n_rows++;
	return 0;
}

static int denied(struct summary *s, struct run *r, enum kind k, const char *text, const char *note,
		  uint64_t n)
{
	return add_row(s, r, R_DENIED, (int)k, "denied", text, note, n);
}

/* ---------- the events ---------- */

/* argv as a shell would read it back: plain words bare, others in single quotes. */
static void join_argv(const struct jnode *argv, char *out, size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; argv && argv->type == JNODE_ARRAY && i < argv->n; i++) {
		const char *a = argv->kids[i].type == JNODE_STRING ? argv->kids[i].str : "?";
		bool plain = *a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					     "0123456789_./:=@%+,-") == strlen(a);
		if (at + 4 >= size)
			break;
		if (i)
			out[at++] = ' ';
		if (!plain)
			out[at++] = '\'';
		for (; *a && at + 5 < size; a++) {
			if (*a == '\'' && !plain) {
				memcpy(out + at, "'\\''", 4);
				at += 4;
			} else {
				out[at++] = *a;
			}
		}
		if (!plain)
			out[at++] = '\'';
		out[at] = '\0';
	}
}

static int on_start(struct summary *s, struct run *r, const struct jnode *ev)
{
	const struct jnode *profiles = jnode_get(ev, "profiles"), *net = jnode_get(ev, "network");
	const struct jnode *argv = jnode_get(ev, "argv");
	char cmd[TEXT_MAX];

	(void)s;
	join_argv(argv, cmd, sizeof(cmd));
	free(r->command), free(r->profile), free(r->network);
	r->command = dup_text(argv && argv->n ? cmd : "(a session: its commands are the execs)");
	r->n_profiles = profiles && profiles->type == JNODE_ARRAY ? profiles->n : 0;
	r->profile = dup_text(r->n_profiles ? str_or(&profiles->kids[0], "path", "?") : "?");
	r->network =
	    dup_text(net && net->type == JNODE_STRING ? net->str : str_or(net, "mode", "?"));
	return r->command && r->profile && r->network ? 0 : -1;
}

static int on_net(struct summary *s, struct run *r, const struct jnode *ev)
{
	char text[TEXT_MAX];

	if (strcmp(str_or(ev, "decision", ""), "deny"))
		return 0;
	/* refused by an [http] rule: the request says what; else the host was */
	if (jnode_get(ev, "http_rule") && jnode_str(ev, "url"))
		snprintf(text, sizeof(text), "%s %s", str_or(ev, "method", "?"),
			 jnode_str(ev, "url"));
	else
		snprintf(text, sizeof(text), "%s:%s", str_or(ev, "host", "?"),
			 num_or(ev, "port", "?"));
	return denied(s, r, K_NET, text, str_or(ev, "reason", ""), 1);
}

static int on_http(struct summary *s, struct run *r, const struct jnode *ev)
{
	char text[TEXT_MAX];

	if (strcmp(str_or(ev, "decision", ""), "deny"))
		return 0;
	snprintf(text, sizeof(text), "%s %s%s", str_or(ev, "method", "?"), str_or(ev, "host", "?"),
		 str_or(ev, "path", ""));
	return denied(s, r, K_HTTP, text, str_or(ev, "reason", str_or(ev, "rule", "")), 1);
}

static int on_dns(struct summary *s, struct run *r, const struct jnode *ev)
{
	char text[TEXT_MAX];

	if (strcmp(str_or(ev, "decision", ""), "deny"))
		return 0;
	snprintf(text, sizeof(text), "%s (type %s)", str_or(ev, "name", "?"),
		 num_or(ev, "type", "?"));
	return denied(s, r, K_DNS, text, str_or(ev, "reason", str_or(ev, "rcode", "")), 1);
}

static int on_credential(struct summary *s, struct run *r, const struct jnode *ev)
{
	const char *decision = str_or(ev, "decision", "");
	char text[TEXT_MAX];

	snprintf(text, sizeof(text), "%s to %s", str_or(ev, "credential", "?"),
		 str_or(ev, "host", "?"));
	if (!strcmp(decision, "deny"))
		return denied(s, r, K_CREDENTIAL, text, str_or(ev, "reason", ""), 1);
	if (!strcmp(decision, "redact")) {
		snprintf(text, sizeof(text), "credential %s from %s", str_or(ev, "credential", "?"),
			 str_or(ev, "host", "?"));
		return add_row(s, r, R_LIMIT, -1, "redacted", text, str_or(ev, "reason", ""), 1);
	}
	return 0;
}

/* In a session, each exec's refused calls apart. */
static int on_syscall(struct summary *s, struct run *r, const struct jnode *ev)
{
	const struct jnode *exec = jnode_get(ev, "exec");
	const char *name = str_or(ev, "name", "?");
	char text[TEXT_MAX];

	if (exec && exec->type == JNODE_NUMBER)
		snprintf(text, sizeof(text), "%s [exec %s]", name, exec->str);
	else if (exec && exec->type == JNODE_STRING)
		snprintf(text, sizeof(text), "%s [%s]", name, exec->str);
	else
		snprintf(text, sizeof(text), "%s", name);
	return denied(s, r, K_SYSCALL, text,
		      !strcmp(str_or(ev, "action", ""), "kill") ? "killed"
								: str_or(ev, "errno", ""),
		      count_of(ev, "count"));
}

static int on_env(struct summary *s, struct run *r, const struct jnode *ev)
{
	const struct jnode *names = jnode_get(ev, "denied");

	for (size_t i = 0; names && names->type == JNODE_ARRAY && i < names->n; i++)
		if (names->kids[i].type == JNODE_STRING &&
		    denied(s, r, K_ENV, names->kids[i].str, "not passed", 1) < 0)
			return -1;
	return 0;
}

/* promote's refusals: a change it would not carry to the host. */
static int on_changes(struct summary *s, struct run *r, const struct jnode *ev)
{
	const char *result = str_or(ev, "result", "");
	const char *path = str_or(ev, "path", "?");

	if (!r->command) {
		char cmd[TEXT_MAX];
		snprintf(cmd, sizeof(cmd), "agentbox %s %s", str_or(ev, "action", "?"),
			 str_or(ev, "of_run", str_or(ev, "changes", "?")));
		if (!(r->command = strdup(cmd)))
			return -1;
	}
	if (!strcmp(result, "refused"))
		return denied(s, r, K_FS, path, "promote refused it", 1);
	if (!strcmp(result, "conflict"))
		return add_row(s, r, R_ERROR, -1, "conflict", path, "changed on the host", 1);
	return 0;
}

/* A protected path that appeared in an rw tree (the run stopped). */
static int on_protect(struct summary *s, struct run *r, const struct jnode *ev)
{
	return denied(s, r, K_FS, str_or(ev, "path", "?"), str_or(ev, "why", "protected"), 1);
}

static int on_session(struct summary *s, struct run *r, const struct jnode *ev)
{
	uint64_t n = count_of(ev, "count");
	bool port = !strncmp(str_or(ev, "detail", ""), "port ", 5);

	if (strcmp(str_or(ev, "action", ""), "refused"))
		return 0;
	return denied(s, r, K_SESSION, str_or(ev, "reason", "?"),
		      port ? "a client of a forwarded port" : "a client of the control socket",
		      n ? n : 1);
}

static int on_limit(struct summary *s, struct run *r, const struct jnode *ev)
{
	const char *limit = str_or(ev, "limit", "?");
	char text[TEXT_MAX];

	if (!strcmp(limit, "audit-events"))
		snprintf(text, sizeof(text), "audit-events: %s events past %s not written",
			 str_or(ev, "of", "?"), num_or(ev, "after", "?"));
	else if (jnode_str(ev, "host"))
		snprintf(text, sizeof(text), "%s (%s)", limit, jnode_str(ev, "host"));
	else
		snprintf(text, sizeof(text), "%s", limit);
	return add_row(s, r, R_LIMIT, -1, "limit", text, "", 1);
}

static int on_message(struct summary *s, struct run *r, const struct jnode *ev, enum rank rank,
		      const char *label)
{
	return add_row(s, r, rank, -1, label, str_or(ev, "message", "?"), "", 1);
}

static int on_error(struct summary *s, struct run *r, const struct jnode *ev)
{
	return on_message(s, r, ev, R_ERROR, "error");
}

static int on_warning(struct summary *s, struct run *r, const struct jnode *ev)
{
	return on_message(s, r, ev, R_WARNING, "warning");
}

static int on_exec(struct summary *s, struct run *r, const struct jnode *ev)
{
	char label[32], text[TEXT_MAX], cmd[TEXT_MAX / 2];

	join_argv(jnode_get(ev, "argv"), cmd, sizeof(cmd));
	snprintf(label, sizeof(label), "exec %s", num_or(ev, "exec", "?"));
	snprintf(text, sizeof(text), "status %s (%s), %s ms: %s", num_or(ev, "status", "?"),
		 str_or(ev, "cause", "?"), num_or(ev, "duration_ms", "?"), cmd);
	return add_row(s, r, R_EXEC, -1, label, text, "", 1);
}

static int on_exit_event(struct summary *s, struct run *r, const struct jnode *ev)
{
	const struct jnode *d = jnode_get(ev, "denials");
	char text[TEXT_MAX];
	int64_t ms;

	r->ended = true;
	r->duration_ms = jnode_int(jnode_get(ev, "duration_ms"), 0, INT64_MAX, &ms) ? ms : -1;
	if (d && d->type == JNODE_OBJECT) {
		r->tallied = true;
		for (size_t k = 0; k < N_TALLIED; k++)
			r->tally[k] = count_of(d, kind_names[k]);
	}
	snprintf(text, sizeof(text), "status %s (%s)", num_or(ev, "status", "?"),
		 str_or(ev, "cause", "?"));
	return add_row(s, r, R_EXIT, -1, "exit", text, "", 1);
}

static const struct {
	const char *event;
	int (*fn)(struct summary *s, struct run *r, const struct jnode *ev);
} handlers[] = {
    {"start", on_start},
    {"net", on_net},
    {"http", on_http},
    {"dns", on_dns},
    {"credential", on_credential},
    {"syscall", on_syscall},
    {"env", on_env},
    {"changes", on_changes},
    {"protect", on_protect},
    {"session", on_session},
    {"limit", on_limit},
    {"error", on_error},
    {"warning", on_warning},
    {"exec", on_exec},
    {"exit", on_exit_event},
};

/* ---------- reading ---------- */

static struct run *run_of(struct summary *s, const char *id)
{
	struct run *v;

	for (size_t i = 0; i < s->n_runs; i++)
		if (!strcmp(s->runs[i].id, id))
			return &s->runs[i];
	if (!(v = realloc(s->runs, (s->n_runs + 1) * sizeof(*v))))
		return NULL;
	s->runs = v;
	v = &s->runs[s->n_runs++];
	memset(v, 0, sizeof(*v));
	v->duration_ms = -1;
	snprintf(v->id, sizeof(v->id), "%s", id);
	return v;
}

/* 0: summarised or skipped (not an event); -1: out of memory. */
static int summary_line(struct summary *s, const char *line, size_t len)
{
	struct ab_err ignored = {0};
	struct jnode ev;
	const char *id, *type, *ts;
	struct run *r;
	int rc = 0;

	if (len > SUMMARY_MAX_LINE || json_read(line, len, &ev, &ignored) < 0) {
		s->skipped++;
		return 0;
	}
	id = jnode_str(&ev, "run");
	type = jnode_str(&ev, "event");
	ts = jnode_str(&ev, "ts");
	if (!id || !type || !ts || strlen(id) >= sizeof(r->id)) {
		s->skipped++;
	} else if (!(r = run_of(s, id))) {
		rc = -1;
	} else {
		if (!r->started && !(r->started = strdup(ts)))
			rc = -1;
		for (size_t i = 0; rc == 0 && i < sizeof(handlers) / sizeof(handlers[0]); i++)
			if (!strcmp(handlers[i].event, type))
				rc = handlers[i].fn(s, r, &ev);
	}
	jnode_free(&ev);
	return rc;
}

/* ---------- printing ---------- */

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	/* the most frequent refusal of a kind first */
	if (a->rank == R_DENIED && a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void print_field(FILE *out, const char *label, const char *value)
{
	fprintf(out, "  %-8s ", label);
	print_printable(out, value);
	fputc('\n', out);
}

static void print_duration(FILE *out, int64_t ms)
{
	if (ms < 0)
		fprintf(out, "unknown (no exit event: still running, or cut short)");
	else if (ms < 10000)
		fprintf(out, "%lld ms", (long long)ms);
	else
		fprintf(out, "%lld.%lld s", (long long)(ms / 1000), (long long)(ms % 1000 / 100));
}

/* "net 3, http 0, ...": every kind, so that none refused reads as none; a kind whose
 * refusals the trail does not hold in full (past the event budget) says how many it holds. */
static void print_tally(FILE *out, const struct run *r)
{
	fprintf(out, "  %-8s ", "denials");
	for (size_t k = 0; k < N_KINDS; k++) {
		uint64_t n = k < N_TALLIED && r->tallied ? r->tally[k] : r->seen[k];
		fprintf(out, "%s%s %llu", k ? ", " : "", kind_names[k], (unsigned long long)n);
		if (n > r->seen[k])
			fprintf(out, " (%llu in the trail)", (unsigned long long)r->seen[k]);
	}
	fputc('\n', out);
}

static void print_row(FILE *out, const struct row *row)
{
	fprintf(out, "  %-8s ", row->label);
	if (row->rank == R_DENIED) {
		size_t w = printable(row->text, NULL, 0);
		fprintf(out, "%-10s ", kind_names[row->kind]);
		print_printable(out, row->text);
		fprintf(out, "%*s x%llu", w < 32 ? (int)(32 - w) : 0, "",
			(unsigned long long)row->count);
	} else {
		print_printable(out, row->text);
		if (row->count > 1)
			fprintf(out, " x%llu", (unsigned long long)row->count);
	}
	if (row->note[0]) {
		fprintf(out, "  (");
		print_printable(out, row->note);
		fputc(')', out);
	}
	fputc('\n', out);
}

static void print_run(FILE *out, struct run *r)
{
	int shown_kind = -1;
	size_t shown = 0;
	uint64_t rest = 0, rest_rows = 0;

	fprintf(out, "run ");
	print_printable(out, r->id);
	fputc('\n', out);
	fprintf(out, "  %-8s ", "started");
	print_printable(out, r->started);
	fprintf(out, ", ran ");
	print_duration(out, r->duration_ms);
	fputc('\n', out);
	print_field(out, "command", r->command ? r->command : "? (no start event)");
	if (r->profile) {
		fprintf(out, "  %-8s ", "profile");
		print_printable(out, r->profile);
		if (r->n_profiles > 1)
			fprintf(out, " (and %zu it includes)", r->n_profiles - 1);
		fputc('\n', out);
		print_field(out, "network", r->network);
	}
	print_tally(out, r);
	if (r->n_rows > 1) /* qsort's base may not be null, and no rows means none */
		qsort(r->rows, r->n_rows, sizeof(*r->rows), row_cmp);
	for (size_t i = 0; i <= r->n_rows; i++) {
		const struct row *row = i < r->n_rows ? &r->rows[i] : NULL;
		if (!row || row->kind != shown_kind) {
			if (rest_rows)
				fprintf(out, "  %-8s %-10s and %llu more, refused %llu times\n",
					"denied", kind_names[shown_kind],
					(unsigned long long)rest_rows, (unsigned long long)rest);
			shown_kind = row ? row->kind : -1;
			shown = 0, rest = 0, rest_rows = 0;
		}
		if (!row)
			break;
		if (row->rank == R_DENIED && shown++ >= SUMMARY_ROWS_PER_KIND) {
			rest += row->count, rest_rows++;
			continue;
		}
		print_row(out, row);
	}
	if (!r->ended)
		fprintf(out,
			"  %-8s no exit event: the run is still going, or the trail was cut "
			"short (agentbox audit verify)\n",
			"exit");
}

static void free_summary(struct summary *s)
{
	for (size_t i = 0; i < s->n_runs; i++) {
		struct run *r = &s->runs[i];
		for (size_t j = 0; j < r->n_rows; j++)
			free(r->rows[j].label), free(r->rows[j].text), free(r->rows[j].note);
		free(r->rows);
		free(r->started), free(r->command), free(r->profile), free(r->network);
	}
	free(s->runs);
}

int audit_summary(const char *path, FILE *out, struct ab_err *e)
{
	FILE *f = fopen(path, "re");
	struct summary s = {0};
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	if (!f)
		return ab_fail(e, errno, "cannot open %s", path);
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0)
		rc = summary_line(&s, line, (size_t)len);
	if (rc == 0 && ferror(f))
		rc = ab_fail(e, EIO, "cannot read %s", path);
	else if (rc < 0)
		rc = ab_fail(e, ENOMEM, "summary of %s", path);
	free(line);
	fclose(f);
	for (size_t i = 0; rc == 0 && i < s.n_runs; i++)
		print_run(out, &s.runs[i]);
	if (rc == 0 && s.n_runs == 0) {
		fprintf(out, "no agentbox events in ");
		print_printable(out, path);
		fputc('\n', out);
	}
	if (rc == 0 && s.skipped)
		fprintf(out,
			"%zu line(s) skipped: not agentbox events (a command's output in a "
			"shared stream?)\n",
			s.skipped);
	if (rc == 0 && fflush(out) != 0)
		rc = ab_fail(e, errno, "cannot write the summary");
	free_summary(&s);
	return rc;
}

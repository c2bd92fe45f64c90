/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "fsops.h"
#include "redact.h"
#include "units.h"

#define AUDIT_MAX_TYPES 16

struct audit {
	int fd;
	char *path;
	char run[33];
	uint64_t seq;
	char prev[SHA256_HEX_LEN + 1];	/* digest of the last line written */
	char chain[SHA256_HEX_LEN + 1]; /* running digest over every line */
	struct redactor *redactor;
	enum audit_failure on_failure;
	bool broken; /* a write failed under on-failure = continue: nothing more is written */
	struct json cur;
	struct {
		const char *type;
		uint64_t n;	     /* written */
		uint64_t suppressed; /* past the budget: counted, not written */
		uint64_t denied;     /* actions refused (written, suppressed or coalesced) */
	} counts[AUDIT_MAX_TYPES];
	const char *cur_type;
	bool cur_budgeted; /* the current event is budgeted though its kind is not */
	uint64_t budget;   /* events of each kind a command can cause at will; 0: no cap */
};

/* Events the command can cause as often as it likes (a denied connection, a DNS query, a
 * refused system call, an egress limit): past the budget of their kind they are counted, not
 * written, so that the trail cannot be used to fill the disk. */
static const char *const budgeted[] = {"net",	  "http",  "credential", "dns",
				       "syscall", "limit", NULL};

/* The kinds of action a run can refuse, each an event type (see audit_denials). */
static const char *const denial_kinds[] = {"net", "http", "dns", "credential", "syscall", NULL};

static int open_dest(const char *dest, char **path, struct ab_err *e)
{
	uint64_t n;
	int fd;

	if (!strcmp(dest, "-")) {
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? ab_fail(e, errno, "audit to stdout") : fd;
	}
	if (!strncmp(dest, "fd:", 3)) {
		if (parse_count(dest + 3, &n, e) < 0)
			return ab_context(e, "--audit %s", dest);
		fd = fcntl((int)n, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return ab_fail(e, errno, "audit to fd %d", (int)n),
			       ab_hint(e, "open fd %d for writing before running agentbox", (int)n);
		/* the original stays with the caller but is never inherited by the sandbox; fds 0-2
		 * are the command's own streams and stay as they are, as with "-" */
		if (n > 2 && fcntl((int)n, F_SETFD, FD_CLOEXEC) < 0) {
			close(fd);
			return ab_fail(e, errno, "audit fd %d", (int)n);
		}
		return fd;
	}
	fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open audit file %s", dest),
		       errno == ELOOP
			   ? ab_hint(e, "the audit file must not be a symlink")
			   : ab_hint(e, "check that the directory exists and is writable");
	if (!(*path = strdup(dest))) {
		close(fd);
		return ab_fail(e, ENOMEM, "audit");
	}
	return fd;
}

static char *filter(void *ctx, const char *s, size_t n, bool *oom)
{
	return redact(ctx, s, n, oom);
}

int audit_open(struct audit **out, const char *dest, const struct strv *patterns,
	       enum audit_failure on_failure, struct ab_err *e)
{
	struct audit *a = calloc(1, sizeof(*a));
	unsigned char rnd[16];

	if (!a)
		return ab_fail(e, ENOMEM, "audit");
	a->fd = -1;
	a->on_failure = on_failure;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		free(a);
		return ab_fail(e, errno, "getrandom for the run id");
	}
	hex_encode(rnd, sizeof(rnd), a->run);
	/* the chain starts from the run id, so a line cannot be moved to another run */
	if (sha256_hex(a->run, strlen(a->run), a->prev) < 0) {
		free(a);
		return ab_fail(e, EIO, "sha256");
	}
	memcpy(a->chain, a->prev, sizeof(a->chain));
	if (redactor_new(&a->redactor, patterns, e) < 0) {
		free(a);
		return -1;
	}
	if (dest && (a->fd = open_dest(dest, &a->path, e)) < 0) {
		redactor_free(a->redactor);
		free(a);
		return -1;
	}
	*out = a;
	return 0;
}

int audit_add_secret(struct audit *a, const char *s, size_t n)
{
	return redactor_add_literal(a->redactor, s, n);
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	json_free(&a->cur);
	redactor_free(a->redactor);
	free(a->path);
	free(a);
}

bool audit_enabled(const struct audit *a)
{
	return a->fd >= 0;
}

const char *audit_run_id(const struct audit *a)
{
	return a->run;
}

int audit_fd(const struct audit *a)
{
	return a->fd;
}

const char *audit_path(const struct audit *a)
{
	return a->path;
}

/* Writes v as exactly width decimal digits (v < 10^width). */
static char *digits(char *out, long v, int width)
{
	for (int i = width - 1; i >= 0; i--, v /= 10)
		out[i] = (char)('0' + v % 10);
	return out + width;
}

/* The UTC date of a day count since 1970-01-01 (H. Hinnant's civil_from_days), as gmtime
 * gives it: without gmtime, which reads /etc/localtime on first use, and without snprintf. */
static void civil(long days, long *y, int *m, int *d)
{
	long z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	long doe = z - era * 146097;
	long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;

	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* 2026-11-21T23:57:56.782123Z: every event has one, so it is formatted by hand. */
static void timestamp(char *buf, size_t size)
{
	struct timespec ts;
	long secs, days, y;
	int m, d;
	char *p = buf;

	clock_gettime(CLOCK_REALTIME, &ts);
	days = ts.tv_sec / 86400;
	secs = ts.tv_sec % 86400;
	if (secs < 0)
		secs += 86400, days--;
	civil(days, &y, &m, &d);
	if (y < 0 || y > 9999 || size < 28) { /* never in practice: gmtime's own text */
		struct tm tm;
		gmtime_r(&ts.tv_sec, &tm);
		snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 ts.tv_nsec / 1000);
		return;
	}
	p = digits(p, y, 4);
	*p++ = '-';
	p = digits(p, m, 2);
	*p++ = '-';
	p = digits(p, d, 2);
	*p++ = 'T';
	p = digits(p, secs / 3600, 2);
	*p++ = ':';
	p = digits(p, secs / 60 % 60, 2);
	*p++ = ':';
	p = digits(p, secs % 60, 2);
	*p++ = '.';
	p = digits(p, ts.tv_nsec / 1000, 6);
	*p++ = 'Z';
	*p = '\0';
}

struct json *audit_begin(struct audit *a, const char *event)
{
	char ts[96];

	json_free(&a->cur);
	json_init(&a->cur);
	timestamp(ts, sizeof(ts));
	a->cur_type = event;
	a->cur_budgeted = false;
	json_obj_begin(&a->cur);
	json_kv_int(&a->cur, "v", AUDIT_SCHEMA_VERSION);
	json_kv_str(&a->cur, "ts", ts);
	json_kv_uint(&a->cur, "seq", a->seq + 1);
	json_kv_str(&a->cur, "run", a->run);
	json_kv_str(&a->cur, "event", event);
	json_kv_str(&a->cur, "prev", a->prev);
	/* every string value after the common fields is redacted */
	a->cur.filter = filter;
	a->cur.filter_ctx = a->redactor;
	return &a->cur;
}

/* The counts of a type (a new slot the first time; NULL when every slot is taken). */
static size_t slot(struct audit *a, const char *type)
{
	for (size_t i = 0; i < AUDIT_MAX_TYPES; i++) {
		if (!a->counts[i].type)
			a->counts[i].type = type;
		if (!strcmp(a->counts[i].type, type))
			return i;
	}
	return AUDIT_MAX_TYPES;
}

static void count(struct audit *a, const char *type)
{
	size_t i = slot(a, type);
	if (i < AUDIT_MAX_TYPES)
		a->counts[i].n++;
}

static int audit_write(struct audit *a, struct ab_err *e);

void audit_set_budget(struct audit *a, uint64_t per_kind)
{
	a->budget = per_kind;
}

void audit_budgeted(struct audit *a)
{
	a->cur_budgeted = true;
}

static bool is_budgeted(const char *type)
{
	for (size_t i = 0; budgeted[i]; i++)
		if (!strcmp(budgeted[i], type))
			return true;
	return false;
}

/* Past the budget: counted as suppressed; the first time, a limit event says so (it is not
 * itself subject to the budget). True when the current event is not to be written. */
static bool over_budget(struct audit *a, struct ab_err *e, int *rc)
{
	const char *type = a->cur_type;
	size_t i;

	if (!a->budget || !(a->cur_budgeted || is_budgeted(type)) ||
	    (i = slot(a, type)) == AUDIT_MAX_TYPES || a->counts[i].n < a->budget)
		return false;
	json_free(&a->cur);
	if (a->counts[i].suppressed++ == 0) {
		struct json *j = audit_begin(a, "limit");
		json_kv_str(j, "limit", "audit-events");
		json_kv_str(j, "of", type);
		json_kv_uint(j, "after", a->budget);
		*rc = audit_write(a, e);
	}
	return true;
}

int audit_emit(struct audit *a, struct ab_err *e)
{
	int rc = 0;

	if (over_budget(a, e, &rc))
		return rc;
	return audit_write(a, e);
}

/* Closes the current event and writes it, chained. */
static int audit_write(struct audit *a, struct ab_err *e)
{
	const char *text;
	int rc = 0;

	json_obj_end(&a->cur);
	text = json_text(&a->cur);
	if (!text)
		return ab_fail(e, ENOMEM, "audit event %s", a->cur_type);
	size_t len = strlen(text);
	char *line = malloc(len + 1);
	if (!line)
		return ab_fail(e, ENOMEM, "audit event %s", a->cur_type);
	memcpy(line, text, len);
	line[len] = '\n';
	a->seq++;
	count(a, a->cur_type);
	/* the chain matters only where lines are written */
	if (a->fd >= 0 && (sha256_hex(line, len + 1, a->prev) < 0 ||
			   sha256_hex2(a->chain, SHA256_HEX_LEN, line, len + 1, a->chain) < 0))
		rc = ab_fail(e, EIO, "sha256 of the audit line");
	/* one write() of the whole line: lines never interleave with the command's output */
	if (rc == 0 && a->fd >= 0 && !a->broken && fs_write_all(a->fd, line, len + 1) < 0) {
		rc = ab_fail(e, errno, "cannot write the audit trail");
		if (a->on_failure == AUDIT_FAILURE_STOP) {
			ab_hint(e, "free the destination, or set [audit] on-failure = continue");
		} else {
			ab_say("%s; going on unaudited ([audit] on-failure = "
			       "continue)\n",
			       e->msg);
			a->broken = true;
			rc = 0;
		}
	}
	free(line);
	json_free(&a->cur);
	return rc;
}

void audit_suppressed(const struct audit *a, struct json *j)
{
	json_obj_begin(j);
	for (size_t i = 0; i < AUDIT_MAX_TYPES && a->counts[i].type; i++)
		if (a->counts[i].suppressed)
			json_kv_uint(j, a->counts[i].type, a->counts[i].suppressed);
	json_obj_end(j);
}

void audit_kv_exec(struct json *j, long exec)
{
	if (exec == -2)
		return;
	json_key(j, "exec");
	if (exec > 0)
		json_uint(j, (uint64_t)exec);
	else if (exec == 0)
		json_str(j, "session");
	else
		json_null(j);
}

void audit_denied(struct audit *a, const char *kind)
{
	size_t i = slot(a, kind);
	if (i < AUDIT_MAX_TYPES)
		a->counts[i].denied++;
}

void audit_decision(struct audit *a, const char *decision)
{
	json_kv_str(&a->cur, "decision", decision);
	/* tallied now: past the budget the event is not written, but the refusal counts */
	if (decision && !strcmp(decision, "deny"))
		audit_denied(a, a->cur_type);
}

void audit_denials(const struct audit *a, struct json *j)
{
	json_obj_begin(j);
	for (size_t k = 0; denial_kinds[k]; k++) {
		uint64_t n = 0;
		for (size_t i = 0; i < AUDIT_MAX_TYPES && a->counts[i].type; i++)
			if (!strcmp(a->counts[i].type, denial_kinds[k]))
				n = a->counts[i].denied;
		json_kv_uint(j, denial_kinds[k], n);
	}
	json_obj_end(j);
}

void audit_counts(const struct audit *a, struct json *j)
{
	json_obj_begin(j);
	for (size_t i = 0; i < AUDIT_MAX_TYPES && a->counts[i].type; i++)
		if (a->counts[i].n) /* a slot may hold only denials (audit_denied) */
			json_kv_uint(j, a->counts[i].type, a->counts[i].n);
	json_obj_end(j);
}

/* The exit event's chain also covers the exit line itself, up to this field: its bytes are
 * what a reader trusts most (status, cause), and no later line's prev protects them. */
void audit_chain(const struct audit *a, struct json *j)
{
	char chain[SHA256_HEX_LEN + 1];
	const char *prefix = j->buf ? j->buf : "";

	sha256_hex2(a->chain, SHA256_HEX_LEN, prefix, strlen(prefix), chain);
	json_kv_str(j, "chain", chain);
}

/* ---------- verification ---------- */

/* Our own writer's output only: a top-level "key": value after '{' or ','. String values here
 * (hex digests, the run id, event names) never contain escapes. */
static bool field(const char *line, const char *key, char *out, size_t size)
{
	char pat[40];
	const char *p = line, *v, *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	while ((p = strstr(p, pat))) {
		if (p > line && (p[-1] == '{' || p[-1] == ',')) {
			v = p + strlen(pat);
			if (*v == '"') {
				v++;
				end = strchr(v, '"');
			} else {
				end = v + strcspn(v, ",}");
			}
			if (!end || (size_t)(end - v) >= size)
				return false;
			memcpy(out, v, (size_t)(end - v));
			out[end - v] = '\0';
			return true;
		}
		p++;
	}
	return false;
}

/* Where ,"key": of the last top-level occurrence starts (the comma), or NULL. */
static const char *last_field(const char *line, const char *key)
{
	char pat[40];
	const char *p = line, *found = NULL;

	snprintf(pat, sizeof(pat), ",\"%s\":", key);
	while ((p = strstr(p, pat)))
		found = p++;
	return found;
}

struct run_state {
	char run[40];
	uint64_t next_seq;
	char prev[SHA256_HEX_LEN + 1];
	char chain[SHA256_HEX_LEN + 1];
	bool ended;
};

static struct run_state *find_run(struct run_state **runs, size_t *n, const char *run)
{
	struct run_state *r;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*runs)[i].run, run))
			return &(*runs)[i];
	r = realloc(*runs, (*n + 1) * sizeof(*r));
	if (!r)
		return NULL;
	*runs = r;
	r = &r[(*n)++];
	memset(r, 0, sizeof(*r));
	snprintf(r->run, sizeof(r->run), "%s", run);
	r->next_seq = 1;
	sha256_hex(run, strlen(run), r->prev);
	memcpy(r->chain, r->prev, sizeof(r->chain));
	return r;
}

/* NULL when the line continues its run's chain, else why not. */
static const char *check_line(struct run_state *r, const char *line, size_t len, uint64_t seq)
{
	char prev[80], event[32], chain[80];

	if (r->ended)
		return "event after the run's exit event";
	if (seq != r->next_seq)
		return seq > r->next_seq ? "events missing before this one (deleted or reordered)"
					 : "sequence number repeats or goes back (reordered)";
	if (!field(line, "prev", prev, sizeof(prev)) || strcmp(prev, r->prev))
		return "prev does not match the previous line (edited or deleted line)";
	if (field(line, "event", event, sizeof(event)) && !strcmp(event, "exit")) {
		const char *at = last_field(line, "chain");
		char want[SHA256_HEX_LEN + 1];
		if (!at || !field(line, "chain", chain, sizeof(chain)))
			return "the exit event has no chain";
		sha256_hex2(r->chain, SHA256_HEX_LEN, line, (size_t)(at - line), want);
		if (strcmp(chain, want))
			return "chain does not match the run's lines (edited exit event?)";
		r->ended = true;
	}
	sha256_hex(line, len, r->prev);
	sha256_hex2(r->chain, SHA256_HEX_LEN, line, len, r->chain);
	r->next_seq++;
	return NULL;
}

int audit_verify(const char *path, FILE *out, struct ab_err *e)
{
	FILE *f = fopen(path, "re");
	struct run_state *runs = NULL;
	size_t n_runs = 0, cap = 0, lineno = 0;
	char *line = NULL, run[40], seqs[24];
	ssize_t len;
	int rc = 0;

	if (!f)
		return ab_fail(e, errno, "cannot open %s", path);
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
		struct run_state *r;
		const char *why;
		lineno++;
		if (!field(line, "run", run, sizeof(run)) ||
		    !field(line, "seq", seqs, sizeof(seqs))) {
			fprintf(out, "BROKEN: line %zu is not an agentbox audit event\n", lineno);
			rc = 1;
			break;
		}
		if (!(r = find_run(&runs, &n_runs, run))) {
			rc = ab_fail(e, ENOMEM, "verify");
			break;
		}
		why = check_line(r, line, (size_t)len, strtoull(seqs, NULL, 10));
		if (why) {
			fprintf(out, "BROKEN: run %s seq %s (line %zu): %s\n", run, seqs, lineno,
				why);
			rc = 1;
		}
	}
	for (size_t i = 0; rc == 0 && i < n_runs; i++) {
		if (!runs[i].ended) {
			fprintf(
			    out,
			    "BROKEN: run %s ends at seq %llu without an exit event (truncated?)\n",
			    runs[i].run, (unsigned long long)runs[i].next_seq - 1);
			rc = 1;
		}
	}
	if (rc == 0)
		fprintf(out, "OK: %zu run(s), %zu event(s), every chain intact\n", n_runs, lineno);
	free(line);
	free(runs);
	fclose(f);
	return rc;
}

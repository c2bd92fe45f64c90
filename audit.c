#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"

#define AUDIT_MAX_TYPES 16

struct audit {
	int fd;
	char *path;
	char run[33];
	uint64_t seq;
	struct json cur;
	struct {
		const char *type;
		uint64_t n;
	} counts[AUDIT_MAX_TYPES];
	const char *cur_type;
};

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
		/* the original stays with the caller but is never inherited by the sandbox */
		if (fcntl((int)n, F_SETFD, FD_CLOEXEC) < 0) {
			close(fd);
			return ab_fail(e, errno, "audit fd %d", (int)n);
		}
		return fd;
	}
	fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open audit file %s", dest),
		       errno == ELOOP ? ab_hint(e, "the audit file must not be a symlink")
				      : ab_hint(e, "check that the directory exists and is writable");
	if (!(*path = strdup(dest))) {
		close(fd);
		return ab_fail(e, ENOMEM, "audit");
	}
	return fd;
}

int audit_open(struct audit **out, const char *dest, struct ab_err *e)
{
	struct audit *a = calloc(1, sizeof(*a));
	unsigned char rnd[16];

	if (!a)
		return ab_fail(e, ENOMEM, "audit");
	a->fd = -1;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		free(a);
		return ab_fail(e, errno, "getrandom for the run id");
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(a->run + 2 * i, 3, "%02x", rnd[i]);
	if (dest && (a->fd = open_dest(dest, &a->path, e)) < 0) {
		free(a);
		return -1;
	}
	*out = a;
	return 0;
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	json_free(&a->cur);
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

static void timestamp(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
}

struct json *audit_begin(struct audit *a, const char *event)
{
	char ts[96];

	json_free(&a->cur);
	json_init(&a->cur);
	timestamp(ts, sizeof(ts));
	a->cur_type = event;
	json_obj_begin(&a->cur);
	json_kv_int(&a->cur, "v", AUDIT_SCHEMA_VERSION);
	json_kv_str(&a->cur, "ts", ts);
	json_kv_uint(&a->cur, "seq", a->seq + 1);
	json_kv_str(&a->cur, "run", a->run);
	json_kv_str(&a->cur, "event", event);
	return &a->cur;
}

static void count(struct audit *a, const char *type)
{
	for (size_t i = 0; i < AUDIT_MAX_TYPES; i++) {
		if (!a->counts[i].type)
			a->counts[i].type = type;
		if (!strcmp(a->counts[i].type, type)) {
			a->counts[i].n++;
			return;
		}
	}
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

int audit_emit(struct audit *a, struct ab_err *e)
{
	const char *text;
	int rc = 0;

	json_obj_end(&a->cur);
	text = json_text(&a->cur);
	if (!text)
		return ab_fail(e, ENOMEM, "audit event %s", a->cur_type);
	a->seq++;
	count(a, a->cur_type);
	if (a->fd >= 0) {
		/* one write() of the whole line: lines never interleave with the command's output */
		size_t len = strlen(text);
		char *line = malloc(len + 1);
		if (!line)
			return ab_fail(e, ENOMEM, "audit event %s", a->cur_type);
		memcpy(line, text, len);
		line[len] = '\n';
		if (write_all(a->fd, line, len + 1) < 0)
			rc = ab_fail(e, errno, "cannot write the audit trail");
		free(line);
	}
	json_free(&a->cur);
	return rc;
}

void audit_counts(const struct audit *a, struct json *j)
{
	json_obj_begin(j);
	for (size_t i = 0; i < AUDIT_MAX_TYPES && a->counts[i].type; i++)
		json_kv_uint(j, a->counts[i].type, a->counts[i].n);
	json_obj_end(j);
}

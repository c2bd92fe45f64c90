/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A run's or an exec's outcome as JSON (see include/result.h). */
#include "result.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsops.h"
#include "units.h"

void result_outcome(struct json *j, int status, const struct sandbox_result *res,
		    const char *failed)
{
	json_kv_int(j, "status", status);
	json_kv_str(j, "cause", res ? res->cause : failed ? failed : "setup-error");
	if (res && (!strcmp(res->cause, "signaled") || !strcmp(res->cause, "session-ended")))
		json_kv_int(j, "signal", res->code);
	else if (res && !strcmp(res->cause, "exited"))
		json_kv_int(j, "code", res->code);
	json_kv_str(j, "limit", res ? res->limit : NULL);
	if (res)
		json_kv_uint(j, "duration_ms", res->duration_ms);
}

/* The error field: the setup error's message, or why the command never ran. */
static const char *error_of(const struct sandbox_result *res, const struct ab_err *err)
{
	if (res)
		return res->error[0] ? res->error : NULL;
	return err ? err->msg : NULL;
}

static int open_fd(const char *dest, struct ab_err *e)
{
	uint64_t n;
	int fd, fl;

	if (parse_count(dest + 3, &n, e) < 0 || n > INT_MAX)
		return ab_fail(e, 0, "--result %s: not fd:N", dest),
		       ab_hint(e, "e.g. --result fd:3 3>result.json");
	/* the command's stdin is no place for a result; 1 and 2 are, when named */
	if (n == 0)
		return ab_fail(e, 0, "--result fd:0: that is stdin"),
		       ab_hint(e, "pass a descriptor open for writing, e.g. --result fd:3 3>FILE");
	if ((fl = fcntl((int)n, F_GETFL)) < 0)
		return ab_fail(e, errno, "--result fd:%d", (int)n),
		       ab_hint(e, "open fd %d for writing before running agentbox", (int)n);
	if ((fl & O_PATH) || (fl & O_ACCMODE) == O_RDONLY)
		return ab_fail(e, EBADF, "--result fd:%d is not open for writing", (int)n),
		       ab_hint(e, "open it for writing, e.g. %d>FILE", (int)n);
	if ((fd = fcntl((int)n, F_DUPFD_CLOEXEC, 3)) < 0)
		return ab_fail(e, errno, "--result fd:%d", (int)n);
	/* the caller keeps the original, but nothing agentbox starts inherits it (pid 1 closes
	 * every fd past 2 as well); 1 and 2 are the command's streams and stay as they are */
	if (n > 2 && fcntl((int)n, F_SETFD, FD_CLOEXEC) < 0) {
		close(fd);
		return ab_fail(e, errno, "--result fd:%d", (int)n);
	}
	return fd;
}

int result_open(const char *dest, struct ab_err *e)
{
	int fd;

	if (!dest[0] || !strcmp(dest, "-"))
		return ab_fail(e, 0, "--result '%s': stdout is the command's", dest),
		       ab_hint(e, "name a descriptor (fd:3 with 3>FILE; fd:1 if you mean it) or a "
				  "file");
	if (!strncmp(dest, "fd:", 3))
		return open_fd(dest, e);
	fd = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open the result file %s", dest),
		       errno == ELOOP
			   ? ab_hint(e, "the result file must not be a symlink")
			   : ab_hint(e, "check that the directory exists and is writable");
	if (fd < 3) { /* never when fds 0-2 are open, as the CLI makes sure */
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		if (high < 0)
			return ab_fail(e, errno, "the result file %s", dest);
		fd = high;
	}
	return fd;
}

void result_run(struct json *j, int status, const struct sandbox_result *res, const struct audit *a,
		const struct ab_err *err)
{
	json_obj_begin(j);
	json_kv_int(j, "v", RESULT_VERSION);
	result_outcome(j, status, res, err ? err->cause : NULL);
	json_key(j, "denials");
	if (a)
		audit_denials(a, j);
	else
		json_obj_begin(j), json_obj_end(j);
	json_kv_str(j, "run", a ? audit_run_id(a) : NULL);
	json_kv_str(j, "audit", a ? audit_path(a) : NULL);
	json_kv_str(j, "changes", res && res->changes[0] ? res->changes : NULL);
	json_kv_str(j, "error", error_of(res, err));
	json_obj_end(j);
}

void result_exec(struct json *j, const struct sandbox_result *res, const struct audit *a,
		 unsigned exec, uint64_t syscall_denials)
{
	json_obj_begin(j);
	json_kv_int(j, "v", RESULT_VERSION);
	result_outcome(j, res->status, res, NULL);
	json_key(j, "denials");
	json_obj_begin(j);
	json_kv_uint(j, "syscall", syscall_denials);
	json_obj_end(j);
	json_key(j, "session_denials");
	audit_denials(a, j);
	json_kv_str(j, "run", audit_run_id(a));
	json_kv_uint(j, "exec", exec);
	json_kv_str(j, "error", res->error[0] ? res->error : NULL);
	json_obj_end(j);
}

int result_write(int fd, const char *text, struct ab_err *e)
{
	size_t len = text ? strlen(text) : 0;
	char *line = text ? malloc(len + 1) : NULL;
	int rc = 0;

	if (!line)
		rc = ab_fail(e, ENOMEM, "the result");
	else {
		memcpy(line, text, len);
		line[len] = '\n';
		if (fs_write_all(fd, line, len + 1) < 0)
			rc = ab_fail(e, errno, "cannot write the result");
	}
	free(line);
	close(fd);
	return rc;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for result.c: the outcome fields the exit event shares with --result, a run's
 * and an exec's objects (and the denials an audit trail tallies for them), and which --result
 * destinations are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_check.h"
#include "result.h"

/* The object's text after build, checked to be one valid JSON value. */
static char *text_of(struct json *j)
{
	const char *t = json_text(j);
	char *copy;

	assert_non_null(t);
	assert_true(json_valid(t));
	copy = strdup(t);
	assert_non_null(copy);
	json_free(j);
	return copy;
}

static char *outcome(int status, const struct sandbox_result *res)
{
	struct json j;

	json_init(&j);
	json_obj_begin(&j);
	result_outcome(&j, status, res, NULL);
	json_obj_end(&j);
	return text_of(&j);
}

static void test_outcome(void **state)
{
	struct sandbox_result exited = {
	    .status = 3, .cause = "exited", .code = 3, .duration_ms = 7};
	struct sandbox_result killed = {.status = 137, .cause = "signaled", .code = 9};
	struct sandbox_result late = {
	    .status = 124, .cause = "timeout", .code = 15, .limit = "timeout", .duration_ms = 1000};
	struct sandbox_result gone = {.status = 137, .cause = "session-ended", .code = 9};
	char *t;

	(void)state;
	t = outcome(3, &exited);
	assert_string_equal(t, "{\"status\":3,\"cause\":\"exited\",\"code\":3,\"limit\":null,"
			       "\"duration_ms\":7}");
	free(t);
	t = outcome(137, &killed);
	assert_non_null(strstr(t, "\"signal\":9"));
	assert_null(strstr(t, "\"code\""));
	free(t);
	t = outcome(124, &late); /* neither code nor signal: the timeout's own signal is noise */
	assert_string_equal(t, "{\"status\":124,\"cause\":\"timeout\",\"limit\":\"timeout\","
			       "\"duration_ms\":1000}");
	free(t);
	t = outcome(137, &gone);
	assert_non_null(strstr(t, "\"signal\":9"));
	free(t);
	t = outcome(125, NULL);
	assert_string_equal(t, "{\"status\":125,\"cause\":\"setup-error\",\"limit\":null}");
	free(t);
}

static void test_run_object(void **state)
{
	struct sandbox_result res = {.status = 0, .cause = "exited"};
	struct ab_err e = {0};
	struct audit *a;
	struct json j;
	char *t;

	(void)state;
	assert_int_equal(audit_open(&a, NULL, &(struct strv){0}, AUDIT_FAILURE_STOP, &e), 0);
	/* two refused connections (one event each) and three refused calls behind one event */
	for (int i = 0; i < 2; i++) {
		audit_begin(a, "net");
		audit_decision(a, "deny");
		assert_int_equal(audit_emit(a, &e), 0);
	}
	audit_begin(a, "net");
	audit_decision(a, "allow");
	assert_int_equal(audit_emit(a, &e), 0);
	for (int i = 0; i < 3; i++)
		audit_denied(a, "syscall");
	snprintf(res.changes, sizeof(res.changes), "/c/d");
	json_init(&j);
	result_run(&j, 0, &res, a, NULL);
	t = text_of(&j);
	assert_non_null(strstr(t, "\"v\":1,"));
	assert_non_null(strstr(t, "\"denials\":{\"net\":2,\"http\":0,\"dns\":0,\"credential\":0,"
				  "\"syscall\":3}"));
	assert_non_null(strstr(t, audit_run_id(a)));
	assert_non_null(strstr(t, "\"audit\":null,\"changes\":\"/c/d\",\"error\":null}"));
	free(t);

	/* the exit event's counts stay what was written: no syscall slot of count 0 */
	json_init(&j);
	audit_counts(a, &j);
	t = text_of(&j);
	assert_string_equal(t, "{\"net\":3}");
	free(t);

	json_init(&j);
	result_run(&j, 125, NULL, NULL, &(struct ab_err){.msg = "profile 'x' not found"});
	t = text_of(&j);
	assert_string_equal(t, "{\"v\":1,\"status\":125,\"cause\":\"setup-error\",\"limit\":null,"
			       "\"denials\":{},\"run\":null,\"audit\":null,\"changes\":null,"
			       "\"error\":\"profile 'x' not found\"}");
	free(t);

	res = (struct sandbox_result){.status = 4, .cause = "exited", .code = 4};
	json_init(&j);
	result_exec(&j, &res, a, 2, 5);
	t = text_of(&j);
	assert_non_null(strstr(t, "\"denials\":{\"syscall\":5},\"session_denials\":{\"net\":2,"));
	assert_non_null(strstr(t, "\"exec\":2,\"error\":null}"));
	free(t);
	audit_close(a);
}

static void refused(const char *dest)
{
	struct ab_err e = {0};

	assert_int_equal(result_open(dest, &e), -1);
	assert_non_null(strstr(e.msg, "result"));
}

static void test_open(void **state)
{
	char dir[] = "/tmp/test_result.XXXXXX", path[64], link[64];
	struct ab_err e = {0};
	int ro, fd, pfd[2];

	(void)state;
	assert_non_null(mkdtemp(dir));
	refused("-");
	refused("");
	refused("fd:0");
	refused("fd:");
	refused("fd:x");
	refused("fd:3x");
	refused("fd:99999999999");
	refused("fd:1000"); /* not open */
	snprintf(path, sizeof(path), "%s/r.json", dir);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(ro > 2);
	snprintf(path, sizeof(path), "fd:%d", ro);
	refused(path); /* read-only */
	close(ro);

	/* a pipe's write end: accepted, agentbox's own copy, the original now close-on-exec */
	assert_int_equal(pipe(pfd), 0);
	snprintf(path, sizeof(path), "fd:%d", pfd[1]);
	fd = result_open(path, &e);
	assert_true(fd > 2 && fd != pfd[1]);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(pfd[1], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(result_write(fd, "{}", &e), 0);
	close(pfd[1]);
	{
		char buf[8] = {0};
		assert_int_equal(read(pfd[0], buf, sizeof(buf)), 3);
		assert_string_equal(buf, "{}\n");
	}
	close(pfd[0]);

	/* a file: 0600, never through a symlink */
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(symlink(path, link), 0);
	refused(link);
	assert_int_equal(access(path, F_OK), -1);
	fd = result_open(path, &e);
	assert_true(fd > 2);
	assert_int_equal(result_write(fd, "{\"v\":1}", &e), 0);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_outcome),
	    cmocka_unit_test(test_run_object),
	    cmocka_unit_test(test_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the profile parser (policy_load.c and the section files): an empty profile
 * and the defaults, the [sandbox], [filesystem], [seccomp], [env] and [audit] sections,
 * policy_finish and --explain. The other subjects have test_policy_*.c of their own; the
 * in-memory profiles and the shared checks are in policy_testlib.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "json.h"
#include "json_check.h"
#include "policy.h"
#include "policy_testlib.h"

/* ---------- an empty profile and the defaults ---------- */

static void test_empty_profile_defaults(void **state)
{
	struct policy *p = must_load("");
	(void)state;

	expect_strv(&p->profiles, 1, MAIN);
	assert_null(p->hostname);
	assert_null(p->workdir);
	assert_int_equal(p->fallback, FALLBACK_NONE);
	assert_int_equal(p->n_fs, 0);
	assert_int_equal(p->net_mode, NET_NONE);
	assert_int_equal(p->seccomp_preset, SECCOMP_PRESET_DEFAULT);
	assert_int_equal(p->seccomp_action, SECCOMP_ACTION_ERRNO);
	assert_null(p->audit_file);
	assert_int_equal(p->audit_on_failure, AUDIT_FAILURE_STOP);
	assert_int_equal(p->limits.timeout_ms, 0);
	assert_int_equal(p->limits.memory, 0);
	assert_int_equal(p->limits.tmpfs_size, 0);
	policy_free(p);
}

static void test_comments_blank_lines_crlf_bom(void **state)
{
	struct policy *p = must_load("\xef\xbb\xbf; a comment\r\n"
				     "# another comment\r\n"
				     "\r\n"
				     "[sandbox]\r\n"
				     "  hostname   =   box   ; inline comment\r\n"
				     "workdir = /work/a;b\r\n");
	(void)state;

	assert_string_equal(p->hostname, "box");
	assert_string_equal(p->workdir, "/work/a;b");
	policy_free(p);
}

/* ---------- [sandbox] ---------- */

static void test_sandbox_keys(void **state)
{
	struct policy *p = must_load("[sandbox]\n"
				     "hostname = box-1.Example\n"
				     "workdir = ${CWD}/./sub//dir/\n"
				     "fallback = landlock\n");
	(void)state;

	assert_string_equal(p->hostname, "box-1.Example");
	assert_string_equal(p->workdir, "/work/proj/sub/dir");
	assert_int_equal(p->fallback, FALLBACK_LANDLOCK);
	policy_free(p);

	p = must_load("[sandbox]\nfallback = none\nworkdir = /\n");
	assert_int_equal(p->fallback, FALLBACK_NONE);
	assert_string_equal(p->workdir, "/");
	policy_free(p);
}

static void test_sandbox_bad_values(void **state)
{
	char line[128];
	(void)state;

	expect_error("[sandbox]\nhostname = bad_name\n",
		     MAIN ":2: ", "'bad_name' is not a valid host name");
	expect_error("[sandbox]\nhostname = a b\n", MAIN ":2: ", "is not a valid host name");
	expect_error("[sandbox]\nhostname =\n", MAIN ":2: ", "is not a valid host name");
	snprintf(line, sizeof(line), "[sandbox]\nhostname = %065d\n", 0);
	expect_error(line, MAIN ":2: ", "is not a valid host name");
	snprintf(line, sizeof(line), "[sandbox]\nhostname = %064d\n", 0);
	policy_free(must_load(line));
	expect_error("[sandbox]\nfallback = seatbelt\n", MAIN ":2: ",
		     "'seatbelt' is not a valid fallback; fix: use one of: none, landlock");
	expect_error("[sandbox]\nworkdir = relative/dir\n",
		     MAIN ":2: ", "'relative/dir' is not an absolute path");
	expect_error("[sandbox]\nworkdir = /a/../b\n", MAIN ":2: ", "has a '..' component");
	expect_error("[sandbox]\n\nworkdir =\n", MAIN ":3: ", "'workdir' has an empty value");
}

/* ---------- [filesystem] ---------- */

static void test_filesystem_every_kind(void **state)
{
	struct policy *p = must_load("[filesystem]\n"
				     "ro = /usr\n"
				     "rw = ${CWD}\n"
				     "ro-try = /opt/maybe\n"
				     "rw-try = ~/.cache\n"
				     "tmpfs = /tmp\n"
				     "hide = /etc/shadow\n"
				     "symlink = usr/bin /bin\n");
	const struct fs_entry *f;
	(void)state;

	assert_int_equal(p->n_fs, 7);
	expect_fs(p, "/usr", FS_RO, false, MAIN, 2);
	expect_fs(p, "/work/proj", FS_RW, false, MAIN, 3);
	expect_fs(p, "/opt/maybe", FS_RO, true, MAIN, 4);
	expect_fs(p, "/home/alice/.cache", FS_RW, true, MAIN, 5);
	expect_fs(p, "/tmp", FS_TMPFS, false, MAIN, 6);
	expect_fs(p, "/etc/shadow", FS_HIDE, false, MAIN, 7);
	expect_fs(p, "/bin", FS_SYMLINK, false, MAIN, 8);
	f = find_fs(p, "/bin");
	assert_string_equal(f->target, "usr/bin");
	assert_null(find_fs(p, "/usr")->target);
	/* entries keep file order */
	assert_string_equal(p->fs[0].path, "/usr");
	assert_string_equal(p->fs[6].path, "/bin");
	policy_free(p);
}

static void test_filesystem_comma_lists(void **state)
{
	struct policy *p = must_load("[filesystem]\n"
				     "ro = /a,/b , /c//d/ ,\t/e/./f\n"
				     "tmpfs = /t1, /t2\n");
	(void)state;

	assert_int_equal(p->n_fs, 6);
	assert_string_equal(p->fs[0].path, "/a");
	assert_string_equal(p->fs[1].path, "/b");
	assert_string_equal(p->fs[2].path, "/c/d");
	assert_string_equal(p->fs[3].path, "/e/f");
	expect_fs(p, "/t1", FS_TMPFS, false, MAIN, 3);
	expect_fs(p, "/t2", FS_TMPFS, false, MAIN, 3);
	policy_free(p);
}

static void test_comma_list_empty_items(void **state)
{
	(void)state;
	expect_error("[filesystem]\nro = /a,,/b\n", MAIN ":2: ", "empty item in the list for 'ro'");
	expect_error("[filesystem]\nro = /a,\n", MAIN ":2: ", "empty item in the list for 'ro'");
	expect_error("[filesystem]\nro = ,/a\n", MAIN ":2: ", "empty item in the list for 'ro'");
	/* a glob is refused where it is written, not found missing at run time */
	expect_error("[filesystem]\nro = /usr/lib/*.so\n",
		     MAIN ":2: ", "'/usr/lib/*.so': paths are not globs; fix: name each path");
	expect_error("[filesystem]\nrw-try = /tmp/a?\n", MAIN ":2: ", "paths are not globs");
	expect_error("[filesystem]\nro = /a, ,/b\n", MAIN ":2: ", "empty item");
	expect_error("[network]\nmode = proxy\nallow = a.com,\n",
		     MAIN ":3: ", "empty item in the list for 'allow'");
	expect_error("[filesystem]\nrw =\n", MAIN ":2: ", "'rw' has an empty value");
	expect_error("[env]\npass = ,\n", MAIN ":2: ", "empty item in the list for 'pass'");
}

static void test_filesystem_errors(void **state)
{
	(void)state;
	expect_error("[filesystem]\nro = usr\n", MAIN ":2: ", "'usr' is not an absolute path");
	expect_error("[filesystem]\nro = /a, b\n", MAIN ":2: ", "'b' is not an absolute path");
	expect_error("[filesystem]\nrw = /work/../etc\n", MAIN ":2: ", "has a '..' component");
	expect_error("[filesystem]\ntmpfs = /\n", MAIN ":2: ", "'tmpfs' cannot be applied to /");
	expect_error("[filesystem]\nhide = //./\n", MAIN ":2: ", "'hide' cannot be applied to /");
	expect_error("[filesystem]\nrw = /\n",
		     MAIN ":2: ", "'rw = /' would make the whole file system writable");
	expect_error("[filesystem]\nrw-try = /./\n",
		     MAIN ":2: ", "'rw-try = /' would make the whole file system writable");
	expect_error("[filesystem]\nrw = /\n",
		     MAIN ":2: ", "; fix: make the project's directory writable instead");
	expect_error("[filesystem]\nsymlink = a /\n",
		     MAIN ":2: ", "'symlink' cannot be applied to /");
	expect_error("[filesystem]\nsymlink = onlyone\n",
		     MAIN ":2: ", "symlink needs 'TARGET LINK'");
	expect_error("[filesystem]\nsymlink = a /b /c\n",
		     MAIN ":2: ", "symlink takes exactly 'TARGET LINK'");
	expect_error("[filesystem]\nsymlink = a b\n", MAIN ":2: ", "'b' is not an absolute path");
	expect_error("[filesystem]\nsymlink =\n", MAIN ":2: ", "'symlink' has an empty value");
	/* ro = / itself is allowed */
	policy_free(must_load("[filesystem]\nro = /\n"));
}

static void test_same_path_twice_in_one_file(void **state)
{
	(void)state;
	expect_error("[filesystem]\nro = /data\nrw = /data\n", MAIN ":3: ",
		     "/data is already listed as 'ro'; fix: one path takes one entry (see line 2)");
	expect_error("[filesystem]\nro = /data, /data/\n",
		     MAIN ":2: ", "/data is already listed as 'ro'");
	expect_error("[filesystem]\ntmpfs = /x\n[sandbox]\nhostname = h\n[filesystem]\n"
		     "symlink = y /x\n",
		     MAIN ":6: ", "/x is already listed as 'tmpfs'");
}

/* ---------- [seccomp] ---------- */

static void test_seccomp(void **state)
{
	struct policy *p = must_load("[seccomp]\n"
				     "preset = strict\n"
				     "deny = ptrace, bpf\n"
				     "deny = ptrace\n"
				     "allow = keyctl\n"
				     "action = kill\n");
	(void)state;

	assert_int_equal(p->seccomp_preset, SECCOMP_PRESET_STRICT);
	assert_int_equal(p->seccomp_action, SECCOMP_ACTION_KILL);
	expect_strv(&p->seccomp_deny, 2, "ptrace", "bpf");
	expect_strv(&p->seccomp_allow, 1, "keyctl");
	policy_free(p);

	p = must_load("[seccomp]\npreset = none\naction = errno\n");
	assert_int_equal(p->seccomp_preset, SECCOMP_PRESET_NONE);
	assert_int_equal(p->seccomp_action, SECCOMP_ACTION_ERRNO);
	policy_free(p);

	expect_error("[seccomp]\ndeny = ptrace, no_such_call\n",
		     MAIN ":2: ", "unknown system call 'no_such_call'");
	expect_error("[seccomp]\nallow = Open\n", MAIN ":2: ", "unknown system call 'Open'");
	expect_error("[seccomp]\npreset = paranoid\n", MAIN ":2: ",
		     "'paranoid' is not a valid preset; fix: use one of: default, strict, none");
	expect_error("[seccomp]\naction = log\n",
		     MAIN ":2: ", "'log' is not a valid action; fix: use one of: errno, kill");
}

/* ---------- [env] ---------- */

static void test_env_section(void **state)
{
	struct policy *p = must_load("[env]\n"
				     "pass = LC_*, TERM\n"
				     "pass = TERM, EDITOR\n"
				     "set = GREETING=hi ${USER}\n"
				     "set = EMPTY=\n"
				     "set = X=1\n"
				     "set = X=2\n"
				     "set = URL=a=b\n"
				     "deny = AWS_*, *_TOKEN\n");
	(void)state;

	expect_strv(&p->env_pass, 3, "LC_*", "TERM", "EDITOR");
	expect_strv(&p->env_set, 4, "GREETING=hi alice", "EMPTY=", "X=2", "URL=a=b");
	expect_strv(&p->env_deny, 2, "AWS_*", "*_TOKEN");
	policy_free(p);

	expect_error("[env]\nset = NOVALUE\n", MAIN ":2: ", "'NOVALUE' is not NAME=VALUE");
	expect_error("[env]\nset = 1X=2\n", MAIN ":2: ", "'1X=2' is not NAME=VALUE");
	expect_error("[env]\nset = =2\n", MAIN ":2: ", "'=2' is not NAME=VALUE");
	expect_error("[env]\nset = A-B=2\n", MAIN ":2: ", "is not NAME=VALUE");
	expect_error("[env]\npass = A=B\n", MAIN ":2: ", "'A=B' is not a variable name or glob");
	expect_error("[env]\ndeny = X, Y=1\n", MAIN ":2: ", "'Y=1' is not a variable name or glob");
	expect_error("[env]\nset = A=${NOPE}\n", MAIN ":2: ", "undefined variable '${NOPE}'");
}

/* ---------- [audit] ---------- */

static void test_audit_section(void **state)
{
	struct policy *p = must_load("[audit]\n"
				     "file = ~/logs//audit.jsonl\n"
				     "redact = secret-[0-9]+\n"
				     "redact = secret-[0-9]+\n"
				     "redact = token, with comma\n"
				     "on-failure = continue\n");
	(void)state;

	assert_string_equal(p->audit_file, "/home/alice/logs/audit.jsonl");
	/* redact takes the whole value (a pattern may contain commas); repeats are listed once */
	expect_strv(&p->audit_redact, 2, "secret-[0-9]+", "token, with comma");
	assert_int_equal(p->audit_on_failure, AUDIT_FAILURE_CONTINUE);
	policy_free(p);

	p = must_load("[audit]\nfile = -\non-failure = stop\n");
	assert_string_equal(p->audit_file, "-");
	assert_int_equal(p->audit_on_failure, AUDIT_FAILURE_STOP);
	policy_free(p);
	p = must_load("[audit]\nfile = fd:3\n");
	assert_string_equal(p->audit_file, "fd:3");
	policy_free(p);

	expect_error("[audit]\nfile = fd:x\n", MAIN ":2: ", "'x' is not a whole number");
	expect_error("[audit]\nfile = fd:\n", MAIN ":2: ", "is not a whole number");
	expect_error("[audit]\nfile = audit.jsonl\n",
		     MAIN ":2: ", "'audit.jsonl' is not an absolute path");
	expect_error("[audit]\nredact =\n", MAIN ":2: ", "'redact' has an empty value");
	expect_error("[audit]\non-failure = ignore\n", MAIN ":2: ",
		     "'ignore' is not a valid on-failure; fix: use one of: stop, continue");
}

/* ---------- policy_finish ---------- */

static void test_finish_defaults(void **state)
{
	struct policy *p = must_load("");
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(policy_finish(p, &e), 0);
	assert_string_equal(p->hostname, "agentbox");
	assert_int_equal(p->limits.tmpfs_size, POLICY_DEFAULT_TMPFS_SIZE);
	policy_free(p);

	p = must_load("[sandbox]\nhostname = mine\n[limits]\ntmpfs-size = 1M\n");
	assert_int_equal(policy_finish(p, &e), 0);
	assert_string_equal(p->hostname, "mine");
	assert_int_equal(p->limits.tmpfs_size, 1ull << 20);
	policy_free(p);
}

static void test_finish_rules_need_proxy(void **state)
{
	struct policy *p = must_load("[network]\nallow = example.com\n");
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(policy_finish(p, &e), -1);
	/* the check runs once every layer is in, and still names the rule's line */
	expect_msg(
	    &e, MAIN ":2: ", "[network] has allow/deny/resolve/grantable rules but mode is none");
	policy_free(p);

	/* a pin only means something to the egress proxy */
	p = must_load("[network]\nresolve = pypi.org=127.0.0.1\n");
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, MAIN ":2: ", "allow/deny/resolve/grantable rules but mode is none");
	policy_free(p);

	p = must_load("[network]\nmode = host\ndeny = 10.0.0.0/8\n");
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, MAIN ":3: ", "rules but mode is host");
	policy_free(p);

	p = must_load("[network]\nmode = proxy\nallow = example.com\n");
	assert_int_equal(policy_finish(p, &e), 0);
	policy_free(p);

	/* the command line switching the mode away from proxy is caught too */
	p = must_load("[network]\nmode = proxy\nallow = example.com\n");
	assert_int_equal(policy_override(p, "network", "mode", "none", "--net", &e), 0);
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, "", "mode is none");
	policy_free(p);
}

/* ---------- --explain ---------- */

/* Runs python3's json module on text when python3 is there: 1 valid, 0 invalid, -1 no python. */
static int python_json_ok(const char *text)
{
	FILE *f = popen("python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null", "w");
	int st;

	if (!f)
		return -1;
	fputs(text, f);
	st = pclose(f);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127)
		return -1;
	return WEXITSTATUS(st) == 0;
}

static void test_explain_is_valid_ascii_json(void **state)
{
	const struct mfile files[] = {
	    {MAIN,
	     "[sandbox]\ninclude = base.ini\nhostname = h\n"
	     "[filesystem]\nro = /data/\x01\x1b[31m/caf\xc3\xa9/\xf0\x9f\x98\x80/\xff\"q\\\n"
	     "symlink = t\x7f /link\n"
	     "[env]\nset = X=tab\there\n"
	     "[audit]\nfile = /var/log/\xe2\x82\xac.jsonl\n",
	     0},
	    {"/p/base.ini", "[limits]\ntimeout = 5s\n[network]\nmode = proxy\nallow = a.com\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	struct ab_err e = {0};
	struct json j;
	const char *text;
	int py;
	(void)state;

	assert_int_equal(policy_finish(p, &e), 0);
	json_init(&j);
	policy_explain(p, &j);
	text = json_text(&j);
	assert_non_null(text);
	if (!json_valid(text)) {
		print_error("not valid JSON: %s\n", text);
		fail();
	}
	assert_true(json_printable_ascii(text));
	py = python_json_ok(text);
	if (py >= 0)
		assert_int_equal(py, 1);

	/* control characters and non-ASCII are \u escapes; invalid UTF-8 is U+FFFD */
	assert_non_null(strstr(text, "\"path\":\"/data/\\u0001\\u001b[31m/caf\\u00e9/"
				     "\\ud83d\\ude00/\\ufffd\\\"q\\\\\""));
	assert_non_null(strstr(text, "\"target\":\"t\\u007f\""));
	assert_non_null(strstr(text, "\"X=tab\\there\""));
	assert_non_null(strstr(text, "\"file\":\"/var/log/\\u20ac.jsonl\""));
	/* the rest of the structure */
	assert_non_null(strstr(text, "\"profiles\":[\"/p/main.ini\",\"/p/base.ini\"]"));
	assert_non_null(strstr(text, "\"hostname\":\"h\""));
	assert_non_null(strstr(text, "\"workdir\":\"/work/proj\""));
	assert_non_null(strstr(text, "\"from\":\"/p/main.ini:5\""));
	assert_non_null(strstr(text, "\"mode\":\"proxy\""));
	assert_non_null(strstr(text, "\"allow\":[\"a.com\"]"));
	assert_non_null(strstr(text, "\"timeout_ms\":5000"));
	assert_non_null(strstr(text, "\"memory\":null"));
	assert_non_null(strstr(text, "\"tmpfs_size\":268435456"));
	assert_non_null(strstr(text, "\"on_failure\":\"stop\""));
	json_free(&j);
	policy_free(p);
}

static void test_explain_empty_policy(void **state)
{
	struct policy *p = must_load("");
	struct json j;
	const char *text;
	(void)state;

	json_init(&j);
	policy_explain(p, &j);
	text = json_text(&j);
	assert_non_null(text);
	assert_true(json_valid(text));
	assert_non_null(strstr(text, "\"hostname\":null"));
	assert_non_null(strstr(text, "\"filesystem\":[]"));
	assert_non_null(strstr(text, "\"file\":null"));
	json_free(&j);
	policy_free(p);
}

/* ---------- keys added later: nesting, uid, gid ---------- */

static void test_sandbox_nesting_uid_gid(void **state)
{
	const struct mfile layered[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\nuid = 0\n", 0},
	    {"/p/a.ini", "[sandbox]\nuid = 1000\ngid = 100\nnesting = true\n", 0},
	};
	struct policy *p = must_load("");
	(void)state;

	/* defaults: no nesting, the caller's ids */
	assert_false(p->nesting);
	assert_int_equal(p->uid, -1);
	assert_int_equal(p->gid, -1);
	policy_free(p);

	p = must_load("[sandbox]\nnesting = true\nuid = 0\ngid = 65534\n");
	assert_true(p->nesting);
	assert_int_equal(p->uid, 0);
	assert_int_equal(p->gid, 65534);
	policy_free(p);
	p = must_load("[sandbox]\nnesting = false\nuid = 65534\n");
	assert_false(p->nesting);
	assert_int_equal(p->uid, 65534);
	assert_int_equal(p->gid, -1);
	policy_free(p);

	p = must_load_files(layered, NFILES(layered));
	assert_int_equal(p->uid, 0);
	assert_int_equal(p->gid, 100);
	assert_true(p->nesting);
	policy_free(p);

	expect_error("[sandbox]\nnesting = yes\n",
		     MAIN ":2: ", "'yes' is not a valid nesting; fix: use one of: false, true");
	expect_error("[sandbox]\nnesting = True\n", MAIN ":2: ", "is not a valid nesting");
	expect_error("[sandbox]\nuid = 65535\n",
		     MAIN ":2: ", "'65535' is not an id from 0 to 65534");
	expect_error("[sandbox]\nuid = -1\n", MAIN ":2: ", "'-1' is not an id from 0 to 65534");
	expect_error("[sandbox]\ngid = staff\n", MAIN ":2: ", "'staff' is not an id");
	expect_error("[sandbox]\ngid =\n", MAIN ":2: ", "is not an id from 0 to 65534");
	expect_error("[sandbox]\nuid = 99999999999999999999\n", MAIN ":2: ", "is not an id");
	/* not expanded */
	expect_error("[sandbox]\nuid = ${UID}\n", MAIN ":2: ", "'${UID}' is not an id");
	expect_error("[sandbox]\nuid = 1\nuid = 2\n",
		     MAIN ":3: ", "'uid' is set twice in [sandbox]");
	expect_error("[sandbox]\nnesting = true\nnesting = true\n",
		     MAIN ":3: ", "'nesting' is set twice");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_profile_defaults),
	    cmocka_unit_test(test_comments_blank_lines_crlf_bom),
	    cmocka_unit_test(test_sandbox_keys),
	    cmocka_unit_test(test_sandbox_bad_values),
	    cmocka_unit_test(test_filesystem_every_kind),
	    cmocka_unit_test(test_filesystem_comma_lists),
	    cmocka_unit_test(test_comma_list_empty_items),
	    cmocka_unit_test(test_filesystem_errors),
	    cmocka_unit_test(test_same_path_twice_in_one_file),
	    cmocka_unit_test(test_seccomp),
	    cmocka_unit_test(test_env_section),
	    cmocka_unit_test(test_audit_section),
	    cmocka_unit_test(test_finish_defaults),
	    cmocka_unit_test(test_finish_rules_need_proxy),
	    cmocka_unit_test(test_explain_is_valid_ascii_json),
	    cmocka_unit_test(test_explain_empty_policy),
	    cmocka_unit_test(test_sandbox_nesting_uid_gid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

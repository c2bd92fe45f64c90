/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The command line: options → policy → run. The one place an error becomes a message on stderr
 * and exit status 125. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "exec_client.h"
#include "error.h"
#include "fsops.h"
#include "guarded.h"
#include "mcp.h"
#include "mounts.h"
#include "overlay.h"
#include "policy.h"
#include "policy_warn.h"
#include "result.h"
#include "run_audit.h"
#include "sandbox.h"
#include "session.h"

#define EXIT_SETUP 125

#ifdef AGENTBOX_SANITIZE
/* LeakSanitizer stops the world with ptrace, which a sandbox's filter refuses: inside one
 * (an agentbox nested in another) it skips its exit check instead of failing the run. */
#include <sys/prctl.h>
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2;
}
#endif

static const char usage[] =
    "Usage: agentbox [OPTIONS] [--] COMMAND [ARG...]\n"
    "Run COMMAND in a sandbox described by an INI profile.\n"
    "\n"
    "  -p, --profile NAME|PATH  the profile (NAME.ini is searched in $AGENTBOX_PROFILE_PATH,\n"
    "                           ~/.config/agentbox/profiles, /etc/agentbox/profiles and\n"
    "                           the installed profiles; a value with a '/' is a path)\n"
    "      --audit DEST         audit trail to DEST: '-' (stdout), a file, or fd:N\n"
    "      --ro PATH            show PATH read-only\n"
    "      --rw PATH            show PATH read-write\n"
    "      --tmpfs PATH         mount an empty tmpfs at PATH\n"
    "      --hide PATH          make PATH empty (directory) or unreadable (file)\n"
    "      --overlay PATH       show PATH writable, but keep every change outside it\n"
    "      --changes DIR        where --overlay keeps the changes (default: a directory per\n"
    "                           run under ~/.local/state/agentbox/runs)\n"
    "      --setenv NAME=VALUE  set a variable in the command's environment\n"
    "      --net MODE           network: none, proxy or host\n"
    "      --allow HOST[:PORT]  allow a host through the egress filter (proxy mode)\n"
    "      --resolve NAME[:PORT]=ADDRESS[:PORT]\n"
    "                           dial NAME at ADDRESS instead of its DNS answer (proxy mode)\n"
    "      --timeout DURATION   wall-clock limit, e.g. 30s or 5m (exit status 124)\n"
    "      --result DEST        when the run ends, one JSON line saying how: DEST is fd:N\n"
    "                           (e.g. --result fd:3 3>FILE) or a file; --json is implied\n"
    "      --chdir DIR          working directory inside the sandbox\n"
    "      --explain            print the effective policy as JSON and exit\n"
    "      --check              validate the profile and exit (0 valid, 125 not); print a\n"
    "                           warning line for each rule that cannot take effect\n"
    "      --strict             (with --check) exit 125 when there is a warning\n"
    "      --paths              (with --check) warn of host paths the profile names that\n"
    "                           are missing or unreadable (ro-try and rw-try excepted)\n"
    "      --version            print the version and exit\n"
    "\n"
    "  agentbox session start [OPTIONS] -p PROFILE\n"
    "                               a sandbox for many commands; prints its id\n"
    "      --json               (session start) print id, socket and changes as JSON;\n"
    "                           (session port) print port, socket and open as JSON;\n"
    "                           (session policy) print the change as JSON;\n"
    "                           (a run, exec) with --result, which writes JSON anyway;\n"
    "                           (changes, diff, promote, discard) one JSON document\n"
    "  agentbox exec ID [--cwd DIR] [--env NAME=VALUE] [--timeout DURATION]\n"
    "                [--result DEST] -- COMMAND...\n"
    "                               run COMMAND in session ID\n"
    "  agentbox session stop ID | list [--json]\n"
    "                               end a session (its changes stay) | the live ones\n"
    "  agentbox session port ID PORT [--close] [--json]\n"
    "                               print a socket on the host reaching 127.0.0.1:PORT in\n"
    "                               session ID (a server a command started there)\n"
    "      --close              (session port) remove that socket\n"
    "  agentbox session policy ID [http] allow|deny RULE [--json]\n"
    "                               widen (within the profile's grantable rules) or narrow\n"
    "                               the network or [http] rules of session ID as it runs\n"
    "  agentbox mcp -p PROFILE [OPTIONS]\n"
    "                               an MCP server (stdio) owning one session\n"
    "  agentbox audit verify FILE   check the hash chains of the runs in an audit file\n"
    "  agentbox audit summary FILE  each run: start, duration, command, profile, and every\n"
    "                               refusal by kind, counted; then limits, errors, the exit\n"
    "  agentbox changes|diff|promote|discard [--json] [--audit DEST] RUN_ID|DIR [PATH...]\n"
    "                               review, apply or delete an overlay run's changes\n"
    "      --max-bytes N            (diff --json) at most N bytes of diff text (16 MiB)\n"
    "  -h, --help               print this help and exit\n"
    "\n"
    "Exit status: the command's own; 128+N if it died of signal N; 124 on timeout;\n"
    "125 if agentbox failed (nothing was run); 126 if COMMAND cannot be executed;\n"
    "127 if COMMAND was not found.\n"
    "See agentbox(1) and docs/profile.md.\n";

enum opt {
	OPT_AUDIT = 256,
	OPT_RO,
	OPT_RW,
	OPT_TMPFS,
	OPT_HIDE,
	OPT_SETENV,
	OPT_NET,
	OPT_ALLOW,
	OPT_OVERLAY,
	OPT_CHANGES,
	OPT_RESOLVE,
	OPT_TIMEOUT,
	OPT_CHDIR,
	OPT_EXPLAIN,
	OPT_CHECK,
	OPT_STRICT,
	OPT_PATHS,
	OPT_VERSION,
	OPT_JSON,
	OPT_RESULT,
};

/* Each command-line override maps onto one profile key. */
static const struct {
	int opt;
	const char *name, *section, *key;
} overrides[] = {
    {OPT_RO, "--ro", "filesystem", "ro"},
    {OPT_RW, "--rw", "filesystem", "rw"},
    {OPT_TMPFS, "--tmpfs", "filesystem", "tmpfs"},
    {OPT_HIDE, "--hide", "filesystem", "hide"},
    {OPT_OVERLAY, "--overlay", "filesystem", "overlay"},
    {OPT_CHANGES, "--changes", "filesystem", "changes"},
    {OPT_SETENV, "--setenv", "env", "set"},
    {OPT_NET, "--net", "network", "mode"},
    {OPT_ALLOW, "--allow", "network", "allow"},
    {OPT_RESOLVE, "--resolve", "network", "resolve"},
    {OPT_TIMEOUT, "--timeout", "limits", "timeout"},
    {OPT_CHDIR, "--chdir", "sandbox", "workdir"},
    {OPT_AUDIT, "--audit", "audit", "file"},
};

struct override {
	int idx; /* into overrides[] */
	char *value;
};

struct cli {
	const char *profile;
	struct override *ov;
	size_t n_ov;
	bool explain, check;
	bool strict, paths; /* --check --strict, --check --paths */
	bool session, json; /* session start [--json]; a run's --json wants --result */
	const char *result; /* --result DEST */
	char *result_path;  /* a file DEST, absolute: hidden from the sandbox */
	int result_fd;	    /* -1 without --result */
	char **command;
};

static int fail(const struct ab_err *e)
{
	ab_say("%s\n", e->msg);
	return EXIT_SETUP;
}

/* --audit and path options take paths relative to the caller's cwd. */
static char *absolute(const char *value, const char *cwd)
{
	char *out;
	size_t n;

	if (value[0] == '/' || value[0] == '~' || value[0] == '$' || !strcmp(value, "-") ||
	    !strncmp(value, "fd:", 3) || !cwd)
		return strdup(value);
	n = strlen(cwd) + strlen(value) + 2;
	if ((out = malloc(n)))
		snprintf(out, n, "%s/%s", cwd, value);
	return out;
}

static int add_override(struct cli *c, int opt, const char *value, const char *cwd,
			struct ab_err *e)
{
	struct override *n = realloc(c->ov, (c->n_ov + 1) * sizeof(*n));
	size_t idx = 0;
	bool path;

	if (!n)
		return ab_fail(e, ENOMEM, "options");
	c->ov = n;
	while (overrides[idx].opt != opt)
		idx++;
	path =
	    !strcmp(overrides[idx].section, "filesystem") || opt == OPT_CHDIR || opt == OPT_AUDIT;
	n[c->n_ov].idx = (int)idx;
	n[c->n_ov].value = path ? absolute(value, cwd) : strdup(value);
	if (!n[c->n_ov].value)
		return ab_fail(e, ENOMEM, "options");
	c->n_ov++;
	return 0;
}

/* --result goes with a run; a run's --json says only "as JSON", which is where --result
 * writes: it needs --result, since the command's stdout is no place for it. */
static int check_result(struct cli *c, const char *cwd, struct ab_err *e)
{
	if (c->result && (c->session || c->explain || c->check))
		return ab_fail(e, 0, "--result is an option of a run and of exec"),
		       ab_hint(e, c->session ? "session start --json prints the session's id"
					     : "drop --result with --explain or --check");
	if (c->json && !c->session && !c->result)
		return ab_fail(e, 0, "--json needs --result DEST: where the JSON goes"),
		       ab_hint(e, "e.g. --result fd:3 3>result.json (stdout is the command's)");
	if (c->result && strncmp(c->result, "fd:", 3) && strcmp(c->result, "-") &&
	    !(c->result_path = absolute(c->result, cwd)))
		return ab_fail(e, ENOMEM, "options");
	return 0;
}

/* 0: go on; 1: done, exit 0 (help, version); -1: error. */
static int parse_args(int argc, char **argv, struct cli *c, const char *cwd, struct ab_err *e)
{
	static const struct option longopts[] = {
	    {"profile", required_argument, NULL, 'p'},
	    {"audit", required_argument, NULL, OPT_AUDIT},
	    {"ro", required_argument, NULL, OPT_RO},
	    {"rw", required_argument, NULL, OPT_RW},
	    {"tmpfs", required_argument, NULL, OPT_TMPFS},
	    {"hide", required_argument, NULL, OPT_HIDE},
	    {"overlay", required_argument, NULL, OPT_OVERLAY},
	    {"changes", required_argument, NULL, OPT_CHANGES},
	    {"setenv", required_argument, NULL, OPT_SETENV},
	    {"net", required_argument, NULL, OPT_NET},
	    {"allow", required_argument, NULL, OPT_ALLOW},
	    {"resolve", required_argument, NULL, OPT_RESOLVE},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    {"chdir", required_argument, NULL, OPT_CHDIR},
	    {"explain", no_argument, NULL, OPT_EXPLAIN},
	    {"check", no_argument, NULL, OPT_CHECK},
	    {"strict", no_argument, NULL, OPT_STRICT},
	    {"paths", no_argument, NULL, OPT_PATHS},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"result", required_argument, NULL, OPT_RESULT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+p:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (c->profile)
				return ab_fail(e, 0, "--profile given twice"),
				       ab_hint(e, "use one profile; combine others with [sandbox] "
						  "include");
			c->profile = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case OPT_VERSION:
			printf("agentbox %s\n", AGENTBOX_VERSION);
			return 1;
		case OPT_EXPLAIN:
			c->explain = true;
			break;
		case OPT_CHECK:
			c->check = true;
			break;
		case OPT_STRICT:
			c->strict = true;
			break;
		case OPT_PATHS:
			c->paths = true;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_RESULT:
			if (c->result)
				return ab_fail(e, 0, "--result given twice"),
				       ab_hint(e, "one result per run");
			c->result = optarg;
			break;
		case '?':
			if (optopt)
				return ab_fail(e, 0, "option -%c is unknown or needs a value",
					       optopt),
				       ab_hint(e, "see agentbox --help");
			return ab_fail(e, 0, "option %s is unknown or needs a value",
				       argv[optind - 1]),
			       ab_hint(e, "see agentbox --help");
		default:
			if (add_override(c, opt, optarg, cwd, e) < 0)
				return -1;
		}
	}
	c->command = argv + optind;
	if (!c->profile)
		return ab_fail(e, 0, "no profile given"),
		       ab_hint(e, "add -p NAME, e.g. -p minimal, -p shell or -p python");
	if (c->session && *c->command)
		return ab_fail(e, 0, "session start takes no command"),
		       ab_hint(e, "start it, then agentbox exec ID -- COMMAND [ARG...]");
	if ((c->strict || c->paths) && !c->check)
		return ab_fail(e, 0, "%s goes with --check", c->strict ? "--strict" : "--paths"),
		       ab_hint(e, "agentbox --check %s -p PROFILE",
			       c->strict ? "--strict" : "--paths");
	if (!*c->command && !c->explain && !c->check && !c->session)
		return ab_fail(e, 0, "no command given"),
		       ab_hint(e, "agentbox -p PROFILE -- COMMAND [ARG...]");
	return check_result(c, cwd, e);
}

/* ${HOME}, ${USER}, ${UID}, ${CWD}, ${TMPDIR} for the profile. */
static void collect_vars(struct policy_vars *v, char *cwd, char *uid, size_t uid_size)
{
	struct passwd *pw = NULL;

	snprintf(uid, uid_size, "%u", (unsigned)getuid());
	v->uid = uid;
	v->cwd = cwd;
	v->home = getenv("HOME");
	v->user = getenv("USER"); /* without it, ${USER} asks the user database when used */
	/* the user database only when the environment does not say (it costs nsswitch) */
	if (!v->home || v->home[0] != '/')
		pw = getpwuid(getuid());
	if ((!v->home || v->home[0] != '/') && pw)
		v->home = pw->pw_dir;
	v->tmpdir = getenv("TMPDIR");
	if (!v->tmpdir || v->tmpdir[0] != '/')
		v->tmpdir = "/tmp";
}

static int build_policy(struct cli *c, struct policy *p, struct ab_err *e)
{
	char *dir = policy_exe_dir();
	char *path = policy_find_profile(c->profile, &p->vars, dir, e);
	int rc;

	free(dir);
	if (!path)
		return -1;
	rc = policy_load(p, path, NULL, e);
	free(path);
	for (size_t i = 0; rc == 0 && i < c->n_ov; i++) {
		const struct override *o = &c->ov[i];
		rc = policy_override(p, overrides[o->idx].section, overrides[o->idx].key, o->value,
				     overrides[o->idx].name, e);
	}
	for (size_t i = 0; rc == 0 && c->command[i]; i++)
		if (strv_push(&p->command, c->command[i]) < 0)
			rc = ab_fail(e, ENOMEM, "command");
	if (rc == 0)
		rc = policy_finish(p, e);
	return rc;
}

static int explain(const struct policy *p)
{
	struct json j;
	const char *text;

	json_init(&j);
	policy_explain(p, &j);
	text = json_text(&j);
	if (text)
		printf("%s\n", text);
	json_free(&j);
	if (!text || fflush(stdout) != 0) {
		ab_say("cannot write the policy\n");
		return EXIT_SETUP;
	}
	return 0;
}

/* The profile's warnings (policy_warn.h), a line each; with paths, the host paths' too. The
 * number printed, or -1 when out of memory. */
static int say_warnings(const struct policy *p, bool paths, struct ab_err *e)
{
	struct strv lines = {0};
	int n;

	if (policy_warnings(p, &lines, e) < 0 ||
	    (paths && policy_path_warnings(p, &lines, e) < 0)) {
		strv_free(&lines);
		return -1;
	}
	for (size_t i = 0; i < lines.n; i++)
		ab_say("warning: %s\n", lines.v[i]);
	n = (int)lines.n;
	strv_free(&lines);
	return n;
}

/* --check: a valid profile exits 0, warnings or not; --strict makes a warning fail it. */
static int check(const struct policy *p, const struct cli *c)
{
	struct ab_err e = {0};
	int n = say_warnings(p, c->paths, &e);

	if (n < 0)
		return fail(&e);
	if (n > 0 && c->strict) {
		ab_say("%d warning%s: --strict fails the check\n", n, n == 1 ? "" : "s");
		return EXIT_SETUP;
	}
	return 0;
}

/* fds 0-2 must exist, or a later open would land there and reach the command. */
static void ensure_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) < 0) {
			int n = open("/dev/null", O_RDWR);
			if (n >= 0 && n != fd)
				close(n);
		}
	}
}

/* One line on stderr and a limit event for the rlimit that ended the run (the timeout's and
 * the disk limit's events were written by the supervisor when they fired). */
static void report_limit(struct audit *a, const struct policy *p, const char *limit)
{
	struct ab_err ignored;

	if (!strcmp(limit, "timeout")) {
		ab_say("the command ran past its %llu ms timeout and was stopped\n",
		       (unsigned long long)p->limits.timeout_ms);
		return;
	}
	if (!strcmp(limit, "disk")) {
		ab_say("the file systems under the rw paths grew past the %llu "
		       "byte disk limit; the command was stopped\n",
		       (unsigned long long)p->limits.disk);
		return;
	}
	ab_say("the command hit its %s limit (%llu%s)\n", limit,
	       (unsigned long long)(!strcmp(limit, "cpu")      ? p->limits.cpu_s
				    : !strcmp(limit, "memory") ? p->limits.memory
							       : p->limits.file_size),
	       !strcmp(limit, "cpu") ? " s of CPU" : " bytes");
	json_kv_str(audit_begin(a, "limit"), "limit", limit);
	audit_emit(a, &ignored);
}

/* agentbox's state directory exists before the plan is made: a writable tree that holds it
 * (a workspace at $HOME) then keeps it read-only in place, where otherwise the command could
 * create it, with run records that promote would follow. Best effort: what the caller cannot
 * create, the command cannot either. */
static void make_state_dir(void)
{
	char dir[PATH_MAX];
	struct ab_err ignored = {0};

	if (fs_state_dir("protect", dir, sizeof(dir), &ignored) == 0)
		(void)fs_mkdirs(dir, &ignored);
}

/* --result: the run's object, written once at the end; failing that fails a clean run. */
static int put_result(const struct cli *c, int status, const struct sandbox_result *res,
		      const struct audit *a, const struct ab_err *err)
{
	struct ab_err e = {0};
	struct json j;
	int rc;

	if (c->result_fd < 0)
		return status;
	json_init(&j);
	result_run(&j, status, res, a, err);
	rc = result_write(c->result_fd, json_text(&j), &e);
	json_free(&j);
	if (rc < 0) {
		ab_say("%s\n", e.msg);
		return status == 0 ? EXIT_SETUP : status;
	}
	return status;
}

/* agentbox session start: the control sockets are never reachable from inside, whatever the
 * view shows. A frame of its own: its path would otherwise lie above every run's. */
__attribute__((noinline)) static int start_session(const struct policy *p, const struct cli *c,
						   struct audit *a,
						   const struct mount_protect *protect,
						   struct ab_err *e)
{
	char dir[PATH_MAX];
	const char *hidden[3];
	struct mount_protect with_dir = *protect;
	bool audited = false;
	int rc = session_runtime_dir(dir, sizeof(dir), e);

	for (size_t i = 0; i < protect->n_hidden; i++)
		hidden[i] = protect->hidden[i];
	hidden[with_dir.n_hidden++] = dir;
	with_dir.hidden = hidden;
	if (rc == 0)
		rc = session_start(p, a, &with_dir, dir, c->json, &audited, e);
	if (rc < 0 && !audited)
		run_audit_failed(a, e);
	return rc;
}

/* noinline: its buffers (two paths) would otherwise widen main's frame for every command,
 * and each page of stack a start first touches costs it a fault */
__attribute__((noinline)) static int run(const struct policy *p, const struct cli *c)
{
	const char *protected[64], *hidden[2]; /* the audit trail and the result */
	struct strv guarded_files = {0}, guarded_dirs = {0};
	struct mount_protect protect = {protected, 0, hidden, 0, &guarded_files, &guarded_dirs};
	struct sandbox_result res; /* sandbox_run's to fill */
	struct ab_err e = {0};
	struct audit *a;
	char exe[PATH_MAX];
	ssize_t n;
	int status, rc;

	make_state_dir();
	if (guarded_paths_here(&guarded_files, &guarded_dirs, &e) < 0 ||
	    audit_open(&a, p->audit_file, &p->audit_redact, p->audit_on_failure, &e) < 0) {
		strv_free(&guarded_files);
		strv_free(&guarded_dirs);
		return put_result(c, fail(&e), NULL, NULL, &e);
	}
	audit_set_budget(a, p->audit_event_budget);
	/* agentbox's own files are visible only when the profile binds them, and read-only */
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		protected[protect.n++] = exe;
	}
	for (size_t i = 0; i < p->profiles.n && protect.n < 63; i++)
	protected[protect.n++] = p->profiles.v[i];
	if (audit_path(a))
		hidden[protect.n_hidden++] = audit_path(a);
	if (c->result_path) /* the sandbox never sees where the result goes, as with the trail */
		hidden[protect.n_hidden++] = c->result_path;
	if (c->session) {
		rc = start_session(p, c, a, &protect, &e);
		strv_free(&guarded_files);
		strv_free(&guarded_dirs);
		audit_close(a);
		return rc < 0 ? fail(&e) : 0;
	}
	rc = sandbox_run(p, a, &protect, &res, &e);
	strv_free(&guarded_files);
	strv_free(&guarded_dirs);
	if (rc < 0) {
		run_audit_failed(a, &e);
		status = put_result(c, fail(&e), NULL, a, &e);
		audit_close(a);
		return status;
	}
	status = res.status;
	if (res.limit)
		report_limit(a, p, res.limit);
	if (run_audit_exit(a, &res, status, &e) < 0) {
		ab_say("%s\n", e.msg);
		if (status == 0)
			status = EXIT_SETUP;
	}
	status = put_result(c, status, &res, a, NULL);
	audit_close(a);
	return status;
}

/* agentbox audit verify|summary FILE */
static int audit_command(int argc, char **argv)
{
	struct ab_err e = {0};
	int rc;

	if (argc != 4 || (strcmp(argv[2], "verify") && strcmp(argv[2], "summary")))
		return fail(&(struct ab_err){.msg = "usage: agentbox audit verify|summary FILE"});
	if (!strcmp(argv[2], "summary"))
		rc = audit_summary(argv[3], stdout, &e);
	else
		rc = audit_verify(argv[3], stdout, &e);
	if (rc < 0)
		return fail(&e);
	return rc;
}

int main(int argc, char **argv)
{
	struct cli c = {.result_fd = -1};
	struct policy_vars vars;
	struct policy *p = NULL;
	struct ab_err e = {0};
	char *cwd, uid[16];
	sigset_t pipe_set;
	int rc;

	ensure_std_fds();
	/* a closed audit pipe must fail a write with EPIPE, not kill agentbox */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, NULL);
	if (argc > 1 && !strcmp(argv[1], "audit"))
		return audit_command(argc, argv);
	if (argc > 1 && overlay_is_command(argv[1]))
		return overlay_command(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "mcp")) {
		rc = mcp_command(argc, argv, &e);
		return e.msg[0] ? fail(&e) : rc;
	}
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		rc = exec_command(argc, argv, &e);
		return e.msg[0] ? fail(&e) : rc;
	}
	if (argc > 1 && !strcmp(argv[1], "session") && (argc < 3 || strcmp(argv[2], "start"))) {
		rc = session_command(argc, argv, &e);
		return e.msg[0] ? fail(&e) : rc;
	}
	c.session = argc > 2 && !strcmp(argv[1], "session");
	cwd = getcwd(NULL, 0);
	/* session start: its options are a run's, after "session" */
	rc = c.session ? parse_args(argc - 2, argv + 2, &c, cwd, &e)
		       : parse_args(argc, argv, &c, cwd, &e);
	if (rc != 0) {
		rc = rc > 0 ? 0 : fail(&e);
		goto out;
	}
	/* before the profile: a bad one is a result too (setup-error) */
	if (c.result && (c.result_fd = result_open(c.result, &e)) < 0) {
		rc = fail(&e);
		goto out;
	}
	collect_vars(&vars, cwd, uid, sizeof(uid));
	if (!(p = policy_new(&vars))) {
		struct ab_err oom = {.errnum = ENOMEM, .msg = "out of memory"};
		rc = put_result(&c, fail(&oom), NULL, NULL, &oom);
		goto out;
	}
	if (build_policy(&c, p, &e) < 0)
		rc = put_result(&c, fail(&e), NULL, NULL, &e);
	else if (c.explain)
		rc = explain(p);
	else if (c.check)
		rc = check(p, &c);
	else if (say_warnings(p, false, &e) < 0)
		rc = put_result(&c, fail(&e), NULL, NULL, &e);
	else
		rc = run(p, &c);
out:
	policy_free(p);
	for (size_t i = 0; i < c.n_ov; i++)
		free(c.ov[i].value);
	free(c.ov);
	free(c.result_path);
	free(cwd);
	return rc;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Task sessions, the caller's side (see include/session.h): the control-socket directory,
 * `session start` (which forks the supervisor, session_serve.c), `session stop`, `list`,
 * `port` and `policy`. */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "channel.h"
#include "json.h"
#include "live_rules.h"
#include "session_proto.h"
#include "session_serve.h"

/* A directory path that, with "/ID.sock", fits in a socket address. */
#define SOCK_DIR_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1 - SESSION_ID_LEN - 5)
#define MAX_RUN_DIRS 8

/* Where a user's control sockets may be, the place for a new session first. */
struct run_dirs {
	size_t n;
	char path[MAX_RUN_DIRS][SOCK_DIR_MAX];
};

/* An fd of a real directory (not a symlink) the caller owns with mode 0700: the only kind a
 * control socket goes in. -1 otherwise. */
static int open_private(int at, const char *path)
{
	int fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != getuid() || (st.st_mode & 0777) != 0700) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool is_private(int at, const char *path)
{
	int fd = open_private(at, path);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int add_dir(struct run_dirs *d, const char *a, const char *b, struct ab_err *e)
{
	int n;

	if (d->n == MAX_RUN_DIRS)
		return 0; /* more than anyone makes: sessions of the rest are not found */
	n = snprintf(d->path[d->n], sizeof(d->path[d->n]), "%s%s", a, b);
	if (n < 0 || (size_t)n >= sizeof(d->path[d->n]))
		return ab_fail(e, ENAMETOOLONG, "the session directory %s%s", a, b),
		       ab_hint(e, "set XDG_RUNTIME_DIR to a shorter directory of yours");
	d->n++;
	return 0;
}

/* $XDG_RUNTIME_DIR/agentbox, made when missing; nobody else can write there. */
static int xdg_dir(struct run_dirs *d, const char *xdg, struct ab_err *e)
{
	if (add_dir(d, xdg, "/agentbox", e) < 0)
		return -1;
	if (mkdir(d->path[0], 0700) < 0 && errno != EEXIST)
		return ab_fail(e, errno, "cannot create the session directory %s", d->path[0]);
	if (!is_private(AT_FDCWD, d->path[0]))
		return ab_fail(e, EPERM,
			       "%s is not a directory of yours with mode 0700 (a symlink, another "
			       "user's, or open to others)",
			       d->path[0]),
		       ab_hint(e, "remove it");
	return 0;
}

/* /tmp must keep what this user makes there: writable by others only with the sticky bit
 * (then only an entry's owner, or the directory's, renames or removes it). Its owner is not
 * checked: in a user namespace without root mapped, root's /tmp is the overflow uid's. */
static int tmp_checked(struct ab_err *e)
{
	struct stat st;

	if (stat("/tmp", &st) < 0 || !S_ISDIR(st.st_mode) ||
	    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))
		return ab_fail(e, EPERM,
			       "no private place for session sockets: /tmp is missing or "
			       "open to other users without the sticky bit"),
		       ab_hint(e, "set XDG_RUNTIME_DIR to a directory of yours with mode 0700");
	return 0;
}

/* The directories /tmp/agentbox-UID.XXXXXX this user made when /tmp/agentbox-UID was taken
 * (another user's, or a symlink): a directory owned by this user is the record, as nobody
 * else (but root) can make one. */
static int tmp_fallbacks(struct run_dirs *d, struct ab_err *e)
{
	char prefix[32];
	struct dirent *de;
	DIR *dh = opendir("/tmp");
	int n = snprintf(prefix, sizeof(prefix), "agentbox-%u.", (unsigned)getuid());

	if (!dh)
		return ab_fail(e, errno, "cannot read /tmp");
	while ((de = readdir(dh))) {
		if (strncmp(de->d_name, prefix, (size_t)n) || strlen(de->d_name) != (size_t)n + 6 ||
		    !is_private(dirfd(dh), de->d_name))
			continue;
		if (add_dir(d, "/tmp/", de->d_name, e) < 0) {
			closedir(dh);
			return -1;
		}
	}
	closedir(dh);
	return 0;
}

/* A fresh directory of a name nobody can take first; mode 0700 from mkdtemp. */
static int tmp_new(struct run_dirs *d, struct ab_err *e)
{
	char name[48];

	snprintf(name, sizeof(name), "/tmp/agentbox-%u.XXXXXX", (unsigned)getuid());
	errno = 0;
	if (!mkdtemp(name) || !is_private(AT_FDCWD, name))
		return ab_fail(e, errno ? errno : EPERM,
			       "no private place for session sockets: /tmp/agentbox-%u is not "
			       "this user's and a directory of another name cannot be made",
			       (unsigned)getuid()),
		       ab_hint(e, "set XDG_RUNTIME_DIR to a directory of yours with mode 0700");
	return add_dir(d, name, "", e);
}

/* $XDG_RUNTIME_DIR/agentbox alone when that is a private directory of the caller's (*fallback
 * false); else /tmp/agentbox-UID when it is (made when missing and make is set), and *fallback
 * true: the fallbacks (tmp_fallbacks) may hold sessions too. */
static int primary_dir(struct run_dirs *d, bool make, bool *fallback, struct ab_err *e)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char primary[32];

	d->n = 0;
	*fallback = false;
	if (xdg && xdg[0] == '/' && is_private(AT_FDCWD, xdg))
		return xdg_dir(d, xdg, e);
	if (tmp_checked(e) < 0)
		return -1;
	snprintf(primary, sizeof(primary), "/tmp/agentbox-%u", (unsigned)getuid());
	/* taken by someone else first, mkdir fails and the check below says so */
	if (make && mkdir(primary, 0700) < 0 && errno != EEXIST && errno != EACCES)
		return ab_fail(e, errno, "cannot create the session directory %s", primary);
	if (is_private(AT_FDCWD, primary) && add_dir(d, primary, "", e) < 0)
		return -1;
	*fallback = true;
	return 0;
}

/* Every directory of the caller's sessions: the primary one and, in /tmp, the fallbacks. With
 * make, the first is where a new session goes, made when there is none. */
static int run_dirs(struct run_dirs *d, bool make, struct ab_err *e)
{
	bool fallback;

	if (primary_dir(d, make, &fallback, e) < 0)
		return -1;
	if (fallback && tmp_fallbacks(d, e) < 0)
		return -1;
	if (make && d->n == 0)
		return tmp_new(d, e);
	return 0;
}

int session_runtime_dir(char *out, size_t size, struct ab_err *e)
{
	struct run_dirs d;

	if (run_dirs(&d, true, e) < 0)
		return -1;
	if ((size_t)snprintf(out, size, "%s", d.path[0]) >= size)
		return ab_fail(e, ENAMETOOLONG, "the session directory %s", d.path[0]);
	return 0;
}

static int connect_path(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* The session's socket in one of d's directories: its fd, or -1. */
static int connect_in(const struct run_dirs *d, const char *id)
{
	char path[PATH_MAX];
	int fd = -1;

	for (size_t i = 0; i < d->n && fd < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s.sock", d->path[i], id);
		fd = connect_path(path);
	}
	return fd;
}

int session_connect(const char *id, struct ab_err *e)
{
	struct run_dirs d;
	bool fallback;
	int fd;

	if (!session_id_valid(id))
		return ab_fail(e, EINVAL, "'%.40s' is not a session id", id),
		       ab_hint(e, "a session id is the 32 hex digits session start printed; see "
				  "agentbox session list");
	/* the primary directory first: every exec connects, and reading /tmp for the fallbacks
	 * costs a scan of all its entries */
	if (primary_dir(&d, false, &fallback, e) < 0)
		return -1;
	if ((fd = connect_in(&d, id)) >= 0)
		return fd;
	d.n = 0;
	if (fallback && tmp_fallbacks(&d, e) < 0)
		return -1;
	if ((fd = connect_in(&d, id)) >= 0)
		return fd;
	return ab_fail(e, ENOENT, "no live session %s of yours", id),
	       ab_hint(e, "see agentbox session list");
}

/* Bound under a name `session list` skips, and renamed once it listens: between bind and
 * listen a connect is refused, which list takes for a dead session's socket and removes. */
static int listen_at(const char *path, struct ab_err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int n;

	if (fd < 0)
		return ab_fail(e, errno, "socket");
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.new", path);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
		close(fd);
		return ab_fail(e, ENAMETOOLONG, "the session socket %s", path);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0 ||
	    rename(sa.sun_path, path) < 0) {
		ab_fail(e, errno, "cannot listen at %s", path);
		close(fd);
		unlink(sa.sun_path);
		return -1;
	}
	return fd;
}

/* The detached supervisor: it reports through fd, then serves until the session ends. */
static _Noreturn void supervisor(const struct policy *p, struct audit *a,
				 const struct mount_protect *protect, int lfd, const char *path,
				 int fd)
{
	struct session_report rep = {0};
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* no terminal, and nothing of the caller's stdio kept: `$(agentbox session start)`
	 * returns once the id is printed */
	if (setsid() < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0) {
		ab_fail(&rep.e, errno, "cannot detach the session supervisor");
		session_report(fd, NULL, &rep.e);
		_exit(125);
	}
	close(null);
	session_serve(p, a, protect, lfd, path, fd);
}

/* The supervisor's report; its death before one is an error too. */
static int read_report(int fd, struct session_report *rep, struct ab_err *e)
{
	size_t got = 0;

	while (got < sizeof(*rep)) {
		ssize_t n = read(fd, (char *)rep + got, sizeof(*rep) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ab_fail(e, n < 0 ? errno : EPIPE,
				       "the session supervisor died while starting");
		got += (size_t)n;
	}
	rep->e.msg[sizeof(rep->e.msg) - 1] = '\0';
	rep->changes[sizeof(rep->changes) - 1] = '\0';
	if (!rep->ok) {
		*e = rep->e;
		return -1;
	}
	return 0;
}

static void print_started(const char *id, const char *path, const char *changes, bool json)
{
	struct json j;

	if (!json) {
		printf("%s\n", id);
		return;
	}
	json_init(&j);
	json_obj_begin(&j);
	json_kv_str(&j, "id", id);
	json_kv_str(&j, "socket", path);
	json_kv_str(&j, "changes", changes[0] ? changes : NULL);
	json_obj_end(&j);
	printf("%s\n", json_text(&j) ? json_text(&j) : "{}");
	json_free(&j);
}

int session_start(const struct policy *p, struct audit *a, const struct mount_protect *protect,
		  const char *dir, bool json, bool *audited, struct ab_err *e)
{
	const char *id = audit_run_id(a);
	struct session_report rep;
	char path[PATH_MAX];
	int lfd, fds[2];
	pid_t pid;

	*audited = false;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.sock", dir, id) >= sizeof(path))
		return ab_fail(e, ENAMETOOLONG, "the session socket");
	if ((lfd = listen_at(path, e)) < 0)
		return -1;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		ab_fail(e, errno, "pipe");
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ab_fail(e, errno, "fork");
		close(fds[0]);
		close(fds[1]);
		goto fail;
	}
	if (pid == 0) {
		close(fds[0]);
		supervisor(p, a, protect, lfd, path, fds[1]);
	}
	close(fds[1]);
	close(lfd);
	*audited = true; /* from here on the trail is the supervisor's */
	if (read_report(fds[0], &rep, e) < 0) {
		close(fds[0]);
		unlink(path);
		return -1;
	}
	close(fds[0]);
	print_started(id, path, rep.changes, json);
	return fflush(stdout) == 0 ? 0 : ab_fail(e, errno, "cannot print the session id");
fail:
	close(lfd);
	unlink(path);
	return -1;
}

/* ---------- stop, list and port ---------- */

/* Sends a request without fds and returns the first reply (1), 0 when the supervisor hung up. */
static int ask(int fd, const struct session_request *q, struct msg *m, char *data, size_t cap,
	       size_t *len, struct ab_err *e)
{
	struct msg hdr = {.type = 0};
	struct channel_extra x = {.data = data, .cap = cap};
	char *buf;
	size_t n;
	int rc;

	if (session_request_encode(q, &buf, &n, e) < 0)
		return -1;
	rc = channel_send_data(fd, &hdr, buf, n, NULL, 0);
	free(buf);
	/* a refusing supervisor may close before the request is sent: its reply is queued */
	if (rc < 0 && errno != EPIPE && errno != ECONNRESET)
		return ab_fail(e, errno, "the session did not take the request");
	rc = channel_recv_extra(fd, m, &x);
	if (len)
		*len = x.len;
	if (rc < 0)
		return ab_fail(e, errno, "no answer from the session");
	if (rc == 1 && m->type == SESSION_REPLY_ERROR)
		return ab_fail(e, 0, "the session refused: %s", m->text), e->errnum = m->value, -1;
	return rc;
}

static int stop(const char *id, struct ab_err *e)
{
	struct msg m;
	int fd = session_connect(id, e), rc;

	if (fd < 0)
		return -1;
	rc = ask(fd, &(struct session_request){.kind = SESSION_STOP}, &m, NULL, 0, NULL, e);
	close(fd);
	/* STOPPED comes once the sandbox is gone and the trail written; a hang-up without it
	 * means the supervisor died, which takes the sandbox with it too */
	return rc < 0 ? -1 : 0;
}

static int list_one(const char *dir, const char *name, bool json, struct ab_err *e)
{
	char path[PATH_MAX], info[4096];
	size_t len = 0;
	struct msg m;
	int fd, rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return 0;
	fd = connect_path(path);
	if (fd < 0) {
		/* a supervisor killed outright leaves its socket: nothing listens any more */
		if (errno == ECONNREFUSED)
			unlink(path);
		return 0;
	}
	rc = ask(fd, &(struct session_request){.kind = SESSION_INFO}, &m, info, sizeof(info) - 1,
		 &len, e);
	close(fd);
	if (rc <= 0 || m.type != SESSION_REPLY_INFO)
		return 0;
	info[len] = '\0';
	if (json)
		printf("%s\n", info);
	else
		printf("%s\n", m.text);
	return 0;
}

/* The forwards' sockets (ID.port-PORT.sock) of sessions whose control socket is gone: their
 * supervisor was killed outright (list_one removed its socket), and nothing listens on them. */
static void remove_dead_ports(DIR *dh)
{
	struct dirent *d;

	rewinddir(dh);
	while ((d = readdir(dh))) {
		char id[SESSION_ID_LEN + 1], control[SESSION_ID_LEN + 6];
		struct stat st;
		if (strlen(d->d_name) <= SESSION_ID_LEN + 6 ||
		    strncmp(d->d_name + SESSION_ID_LEN, ".port-", 6))
			continue;
		snprintf(id, sizeof(id), "%.*s", SESSION_ID_LEN, d->d_name);
		snprintf(control, sizeof(control), "%s.sock", id);
		if (session_id_valid(id) &&
		    fstatat(dirfd(dh), control, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			unlinkat(dirfd(dh), d->d_name, 0);
	}
}

/* The sessions of one directory, read through an fd of the directory checked private. */
static int list_dir(const char *dir, bool json, struct ab_err *e)
{
	int fd = open_private(AT_FDCWD, dir);
	struct dirent *d;
	DIR *dh;

	if (fd < 0)
		return 0; /* gone or taken since: nothing of this user's there */
	if (!(dh = fdopendir(fd))) {
		close(fd);
		return ab_fail(e, errno, "cannot read %s", dir);
	}
	while ((d = readdir(dh))) {
		size_t n = strlen(d->d_name);
		char id[SESSION_ID_LEN + 1];
		if (n != SESSION_ID_LEN + 5 || strcmp(d->d_name + SESSION_ID_LEN, ".sock"))
			continue;
		snprintf(id, sizeof(id), "%.*s", SESSION_ID_LEN, d->d_name);
		if (session_id_valid(id))
			list_one(dir, d->d_name, json, e);
	}
	remove_dead_ports(dh);
	closedir(dh);
	return 0;
}

static int list(bool json, struct ab_err *e)
{
	struct run_dirs d;

	if (run_dirs(&d, false, e) < 0)
		return -1;
	if (!json)
		printf("%-32s  %-20s  %5s  %s\n", "ID", "STARTED", "EXECS", "PROFILE");
	for (size_t i = 0; i < d.n; i++)
		if (list_dir(d.path[i], json, e) < 0)
			return -1;
	return fflush(stdout) == 0 ? 0 : ab_fail(e, errno, "stdout");
}

/* PORT as written: a number from 1 to 65535 in decimal digits; 0 for anything else. */
static unsigned port_number(const char *s)
{
	unsigned long v = 0;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 5)
			return 0;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	return v <= 65535 ? (unsigned)v : 0;
}

static void print_port(const struct msg *m, bool open, bool json)
{
	struct json j;

	if (!json) {
		if (open)
			printf("%s\n", m->text);
		return;
	}
	json_init(&j);
	json_obj_begin(&j);
	json_kv_uint(&j, "port", (uint64_t)m->value);
	json_kv_str(&j, "socket", m->text);
	json_kv_bool(&j, "open", open);
	json_obj_end(&j);
	printf("%s\n", json_text(&j) ? json_text(&j) : "{}");
	json_free(&j);
}

/* `agentbox session port ID PORT [--close] [--json]`: the socket on the host that reaches
 * 127.0.0.1:PORT inside the session (made by the supervisor, session_ports.c), or its end. */
static int port(int argc, char **argv, struct ab_err *e)
{
	struct session_request q = {.kind = SESSION_PORT, .port = port_number(argv[4])};
	bool json = false;
	struct msg m;
	int fd, rc;

	for (int i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "--close"))
			q.kind = SESSION_PORT_CLOSE;
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else
			return ab_fail(e, 0, "session port: unknown option '%.40s'", argv[i]),
			       ab_hint(e, "agentbox session port ID PORT [--close] [--json]");
	}
	if (!q.port)
		return ab_fail(e, 0, "'%.20s' is not a port number", argv[4]),
		       ab_hint(e, "give the TCP port the server listens on inside, 1 to 65535");
	if ((fd = session_connect(argv[3], e)) < 0)
		return -1;
	rc = ask(fd, &q, &m, NULL, 0, NULL, e);
	close(fd);
	if (rc < 0)
		return -1;
	if (rc == 0 || m.type != SESSION_REPLY_PORT)
		return ab_fail(e, EPROTO, "no answer from the session about port %u", q.port);
	print_port(&m, q.kind == SESSION_PORT, json);
	return fflush(stdout) == 0 ? 0 : ab_fail(e, errno, "stdout");
}

/* ---------- policy ---------- */

/* The op of `policy ID [http] allow|deny RULE`: 0 for anything else. */
static int policy_op(bool http, const char *word)
{
	if (!strcmp(word, "allow"))
		return http ? LIVE_HTTP_ALLOW : LIVE_ALLOW;
	if (!strcmp(word, "deny"))
		return http ? LIVE_HTTP_DENY : LIVE_DENY;
	return 0;
}

/* The change as the session told it: its JSON object (--json), or a line for people. */
static void print_change(const struct msg *m, const char *data, bool json)
{
	if (json)
		printf("%s\n", data);
	else
		printf("%s: %s\n", m->text, m->value ? "applied" : "unchanged (in force already)");
}

/* `agentbox session policy ID [http] allow|deny RULE [--json]`: a change of the rules a running
 * session's proxy decides with (sandbox/session_policy.c, docs/sessions.md "Live policy"). */
static int policy(int argc, char **argv, struct ab_err *e)
{
	static const char use[] = "agentbox session policy ID allow|deny HOST [--json] | "
				  "policy ID http allow|deny 'METHOD HOST/PATH' [--json]";
	struct session_request q = {.kind = SESSION_POLICY};
	bool json = argc > 0 && !strcmp(argv[argc - 1], "--json"), http;
	char data[64 * 1024];
	size_t len = 0;
	struct msg m;
	int fd, rc;

	argc -= json;
	http = argc == 7 && !strcmp(argv[4], "http");
	if ((argc != 6 && !http) || !(q.op = policy_op(http, argv[4 + http])))
		return ab_fail(e, 0, "usage: %s", use);
	if (strv_push(&q.argv, argv[5 + http]) < 0)
		return ab_fail(e, ENOMEM, "request");
	if ((fd = session_connect(argv[3], e)) < 0) {
		strv_free(&q.argv);
		return -1;
	}
	rc = ask(fd, &q, &m, data, sizeof(data) - 1, &len, e);
	close(fd);
	strv_free(&q.argv);
	if (rc < 0)
		return -1;
	if (rc == 0 || m.type != SESSION_REPLY_POLICY)
		return ab_fail(e, EPROTO, "no answer from the session about the change");
	data[len] = '\0';
	print_change(&m, data, json);
	return fflush(stdout) == 0 ? 0 : ab_fail(e, errno, "stdout");
}

int session_command(int argc, char **argv, struct ab_err *e)
{
	int rc = -1;

	if (argc == 4 && !strcmp(argv[2], "stop"))
		rc = stop(argv[3], e);
	else if (argc >= 3 && argc <= 4 && !strcmp(argv[2], "list") &&
		 (argc == 3 || !strcmp(argv[3], "--json")))
		rc = list(argc == 4, e);
	else if (argc >= 5 && argc <= 7 && !strcmp(argv[2], "port"))
		rc = port(argc, argv, e);
	else if (argc >= 6 && argc <= 8 && !strcmp(argv[2], "policy"))
		rc = policy(argc, argv, e);
	else
		ab_fail(e, 0,
			"usage: agentbox session start [OPTIONS] -p PROFILE | stop ID | "
			"list [--json] | port ID PORT [--close] [--json] | "
			"policy ID [http] allow|deny RULE [--json]");
	return rc < 0 ? 125 : 0;
}

/* Unit tests for the profile parser (policy_load.c and the section files). Profiles are served
 * from memory through a struct policy_io, so includes, cycles and missing files need no disk;
 * only the profile search (policy_find_profile) uses temporary directories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "json_check.h"
#include "policy.h"

#define MAIN "/p/main.ini"

static const struct policy_vars test_vars = {
    .home = "/home/alice",
    .cwd = "/work/proj",
    .user = "alice",
    .uid = "1000",
    .tmpdir = "/var/tmp/alice",
};

/* ---------- an in-memory file system for profiles ---------- */

struct mfile {
	const char *path; /* absolute and normalised */
	const char *data; /* NULL: the file exists but cannot be read */
	size_t len;	  /* 0: strlen(data) */
};

struct mfs {
	const struct mfile *files;
	size_t n;
	unsigned reads;
};

/* Lexical realpath: resolves ".", ".." and "//"; NULL for a relative path. */
static char *mfs_normalize(const char *path)
{
	size_t o = 0;
	const char *p = path;
	char *out;

	if (path[0] != '/' || !(out = malloc(strlen(path) + 2)))
		return NULL;
	while (*p) {
		const char *seg;
		size_t n;
		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - seg);
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, seg, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

static const struct mfile *mfs_find(const struct mfs *fs, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->files[i].path, path))
			return &fs->files[i];
	return NULL;
}

static char *mfs_canonical(void *ctx, const char *path)
{
	struct mfs *fs = ctx;
	char *norm = mfs_normalize(path);

	if (!norm || !mfs_find(fs, norm)) {
		free(norm);
		errno = ENOENT;
		return NULL;
	}
	return norm;
}

static int mfs_read(void *ctx, const char *path, char **data, size_t *len, struct ab_err *e)
{
	struct mfs *fs = ctx;
	const struct mfile *f = mfs_find(fs, path);
	size_t n;

	fs->reads++;
	if (!f)
		return ab_fail(e, ENOENT, "cannot open profile %s", path);
	if (!f->data)
		return ab_fail(e, EACCES, "cannot open profile %s", path);
	n = f->len ? f->len : strlen(f->data);
	if (!(*data = malloc(n + 1)))
		return ab_fail(e, ENOMEM, "out of memory");
	memcpy(*data, f->data, n);
	(*data)[n] = '\0';
	*len = n;
	return 0;
}

/* Loads files[0] (which may include the others) into a new policy. */
static int load_files(struct policy **out, const struct mfile *files, size_t n, struct ab_err *e)
{
	struct mfs fs = {files, n, 0};
	struct policy_io io = {mfs_read, mfs_canonical, &fs};
	struct policy *p = policy_new(&test_vars);

	assert_non_null(p);
	memset(e, 0, sizeof(*e));
	*out = p;
	return policy_load(p, files[0].path, &io, e);
}

#define NFILES(a) (sizeof(a) / sizeof((a)[0]))

static int load_text(struct policy **out, const char *text, struct ab_err *e)
{
	const struct mfile f[] = {{MAIN, text, 0}};
	return load_files(out, f, 1, e);
}

static struct policy *must_load_files(const struct mfile *files, size_t n)
{
	struct policy *p;
	struct ab_err e;

	if (load_files(&p, files, n, &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	return p;
}

static struct policy *must_load(const char *text)
{
	const struct mfile f[] = {{MAIN, text, 0}};
	return must_load_files(f, 1);
}

/* The message contains where, and what after it. */
static void expect_msg(const struct ab_err *e, const char *where, const char *what)
{
	const char *w = strstr(e->msg, where);

	if (!w || !strstr(w, what)) {
		print_error("error message: \"%s\"\nexpected \"%s\" and then \"%s\"\n", e->msg,
			    where, what);
		fail();
	}
}

static void expect_files_error(const struct mfile *files, size_t n, const char *where,
			       const char *what)
{
	struct policy *p;
	struct ab_err e;

	if (load_files(&p, files, n, &e) != -1) {
		print_error("loaded without error; expected \"%s ... %s\"\n", where, what);
		fail();
	}
	expect_msg(&e, where, what);
	policy_free(p);
}

static void expect_error(const char *text, const char *where, const char *what)
{
	const struct mfile f[] = {{MAIN, text, 0}};
	expect_files_error(f, 1, where, what);
}

static const struct fs_entry *find_fs(const struct policy *p, const char *path)
{
	const struct fs_entry *found = NULL;

	for (size_t i = 0; i < p->n_fs; i++) {
		if (strcmp(p->fs[i].path, path))
			continue;
		assert_null(found); /* one path, one entry */
		found = &p->fs[i];
	}
	if (!found) {
		print_error("no filesystem entry for %s\n", path);
		fail();
	}
	return found;
}

static void expect_fs(const struct policy *p, const char *path, enum fs_kind kind, bool optional,
		      const char *file, unsigned line)
{
	const struct fs_entry *f = find_fs(p, path);

	assert_int_equal(f->kind, kind);
	assert_int_equal(f->optional, optional);
	assert_string_equal(f->at.file, file);
	assert_int_equal(f->at.line, line);
}

/* sv holds exactly the n strings given, in order. */
static void expect_strv(const struct strv *sv, size_t n, ...)
{
	va_list ap;

	if (sv->n != n) {
		print_error("list has %zu items, expected %zu\n", sv->n, n);
		for (size_t i = 0; i < sv->n; i++)
			print_error("  [%zu] %s\n", i, sv->v[i]);
		fail();
	}
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(sv->v[i], va_arg(ap, const char *));
	va_end(ap);
	assert_null(sv->v ? sv->v[n] : NULL);
}

/* The rules of rs a profile wrote, allow or deny ones, as texts. */
static struct strv http_texts(const struct http_rules *rs, bool deny)
{
	struct strv sv = {0};

	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].deny == deny && !rs->v[i].implied)
			assert_int_equal(strv_push(&sv, rs->v[i].text), 0);
	return sv;
}

static void expect_parse_error(int (*parse)(const char *, uint64_t *, struct ab_err *),
			       const char *s, const char *what)
{
	struct ab_err e = {0};
	uint64_t v = 12345;

	if (parse(s, &v, &e) != -1) {
		print_error("'%s' parsed as %llu\n", s, (unsigned long long)v);
		fail();
	}
	expect_msg(&e, "", what);
}

static uint64_t must_parse(int (*parse)(const char *, uint64_t *, struct ab_err *), const char *s)
{
	struct ab_err e = {0};
	uint64_t v = 12345;

	if (parse(s, &v, &e) != 0) {
		print_error("'%s' refused: %s\n", s, e.msg);
		fail();
	}
	return v;
}

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

/* ---------- [http] ---------- */

/* One rule per line (a glob may hold a comma), repeatable, checked by the rules' parser at load
 * with its line; rules need the proxy. */
static void test_http_rules(void **state)
{
	struct policy *p = must_load("[network]\nmode = proxy\n[http]\n"
				     "allow = GET api.example/v1/**\n"
				     "allow = GET api.example/search?q=a,b\n"
				     "deny = * */admin/*\n");
	(void)state;

	struct strv allow = http_texts(&p->net.http, false), deny = http_texts(&p->net.http, true);
	expect_strv(&allow, 2, "GET api.example/v1/**", "GET api.example/search?q=a,b");
	expect_strv(&deny, 1, "* */admin/*");
	strv_free(&allow);
	strv_free(&deny);
	policy_free(p);
	expect_error("[network]\nmode = proxy\n[http]\nallow = GET a.example//x\n",
		     MAIN ":4: ", "'//' in the path");
	expect_error("[network]\nmode = proxy\n[http]\ndeny = get a.example/x\n",
		     MAIN ":4: ", "http rule 'get a.example/x'");
	p = must_load("[http]\nallow = GET a.example/x\n");
	{
		struct ab_err e = {0};
		assert_int_equal(policy_finish(p, &e), -1);
		expect_msg(&e, MAIN ":2: ", "[http] has rules but [network] mode is none");
	}
	policy_free(p);
	expect_error("[network]\nmode = proxy\n[http]\nmethods = GET\n", MAIN ":4: ", "methods");
}

/* [network] ca: a relative path is the profile's directory's (as an include is), variables are
 * expanded, the command line's is the current directory's; the file is not read at load. */
static void test_network_ca(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = sub/inc.ini\n", 0},
	    {"/p/sub/inc.ini", "[network]\nmode = proxy\n\nca = certs/local.pem\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	struct ab_err e = {0};
	struct json j;
	(void)state;

	assert_string_equal(p->net_ca, "/p/sub/certs/local.pem");
	assert_string_equal(p->net_ca_at.file, "/p/sub/inc.ini");
	assert_int_equal(p->net_ca_at.line, 4);
	assert_int_equal(policy_finish(p, &e), 0);
	json_init(&j);
	policy_explain(p, &j);
	assert_non_null(strstr(json_text(&j), "\"ca\":\"/p/sub/certs/local.pem\""));
	json_free(&j);
	policy_free(p);

	p = must_load("[network]\nmode = proxy\nca = ${HOME}/ca.pem\n");
	assert_string_equal(p->net_ca, "/home/alice/ca.pem");
	assert_int_equal(policy_override(p, "network", "ca", "mine.pem", "--ca", &e), 0);
	assert_string_equal(p->net_ca, "/work/proj/mine.pem");
	policy_free(p);

	expect_error("[network]\nmode = proxy\nca = a.pem\nca = b.pem\n",
		     MAIN ":4: ", "'ca' is set twice");
	expect_error("[network]\nca =\n", MAIN ":2: ", "empty value");
	p = must_load("[network]\nca = /etc/x.pem\n");
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, MAIN ":2: ", "[network] ca is set but mode is none");
	policy_free(p);
}

/* ---------- [network] ---------- */

static void test_network(void **state)
{
	struct policy *p = must_load("[network]\n"
				     "mode = proxy\n"
				     "allow = example.com, *.GitHub.com:443\n"
				     "allow = 192.0.2.1, example.com, b\xc3\xbc"
				     "cher.de\n"
				     "deny = 10.0.0.0/8, [fd00::]/8\n");
	(void)state;

	assert_int_equal(p->net_mode, NET_PROXY);
	/* rules are kept as written (an international name too, converted only for matching); a
	 * repeated rule is listed once */
	expect_strv(&p->net.allow.text, 4, "example.com", "*.GitHub.com:443", "192.0.2.1",
		    "b\xc3\xbc"
		    "cher.de");
	expect_strv(&p->net.deny.text, 2, "10.0.0.0/8", "[fd00::]/8");
	policy_free(p);

	p = must_load("[network]\nmode = host\n");
	assert_int_equal(p->net_mode, NET_HOST);
	policy_free(p);
	p = must_load("[network]\nmode = none\n");
	assert_int_equal(p->net_mode, NET_NONE);
	policy_free(p);

	expect_error("[network]\nmode = wifi\n",
		     MAIN ":2: ", "'wifi' is not a valid mode; fix: use one of: none, proxy, host");
	expect_error("[network]\nmode = proxy\nallow = example.com:0\n",
		     MAIN ":3: ", "is not a port number");
	expect_error("[network]\ndeny = b\xc3\xbc"
		     "cher\xc3.de\n",
		     MAIN ":2: ", "not valid UTF-8; fix: check the name, or write it in punycode");
	expect_error("[network]\nallow = ok.com, -bad.com\n", MAIN ":2: ", "is not a host name");
}

static void test_protect(void **state)
{
	struct policy *p = must_load("[filesystem]\nprotect = /w/Makefile, /w/./ci/\n"
				     "unprotect = .envrc, .git/hooks\n");
	(void)state;

	expect_strv(&p->protect, 2, "/w/Makefile", "/w/ci");
	expect_strv(&p->unprotect, 2, ".envrc", ".git/hooks");
	policy_free(p);
	expect_error("[filesystem]\nunprotect = Makefile\n",
		     MAIN ":2: ", "'Makefile' is not one of the protected names");
	expect_error("[filesystem]\nprotect = relative/path\n", MAIN ":2: ", "absolute");
}

static void test_network_resolve(void **state)
{
	struct policy *p = must_load("[network]\nmode = proxy\n"
				     "resolve = pypi.org:443=127.0.0.1:8443, mirror.test=[::1]\n"
				     "resolve = pypi.org:443=127.0.0.1:8443\n");
	(void)state;

	expect_strv(&p->net.pins.text, 2, "pypi.org:443=127.0.0.1:8443", "mirror.test=[::1]");
	policy_free(p);

	expect_error("[network]\nmode = proxy\nresolve = pypi.org\n",
		     MAIN ":3: ", "'pypi.org' is not NAME[:PORT]=ADDRESS[:PORT]");
	expect_error("[network]\nmode = proxy\n\nresolve = *.pypi.org=127.0.0.1\n",
		     MAIN ":4: ", "one host name");
	expect_error("[network]\nmode = proxy\nresolve = pypi.org=files.example\n",
		     MAIN ":3: ", "needs an IP address");
}

/* Egress limits for the run and for each host: parsed, shown by --explain, only with proxy. */
static void test_network_limits(void **state)
{
	struct policy *p =
	    must_load("[network]\nmode = proxy\n"
		      "max-connections = 64\nrate = 20\n"
		      "max-bytes-out = 1M\nmax-bytes-in = 1G\n"
		      "max-connections-per-host = 4\nrate-per-host = 2\n"
		      "max-bytes-out-per-host = 64K\nmax-bytes-in-per-host = 100M\n");
	struct ab_err e = {0};
	struct json j;
	(void)state;

	assert_int_equal(p->net_max_connections, 64);
	assert_int_equal(p->net_rate, 20);
	assert_int_equal(p->net_max_bytes_out, 1ull << 20);
	assert_int_equal(p->net_max_bytes_in, 1ull << 30);
	assert_int_equal(p->net_host_max_connections, 4);
	assert_int_equal(p->net_host_rate, 2);
	assert_int_equal(p->net_host_max_bytes_out, 64ull << 10);
	assert_int_equal(p->net_host_max_bytes_in, 100ull << 20);
	assert_int_equal(policy_finish(p, &e), 0);
	json_init(&j);
	policy_explain(p, &j);
	assert_non_null(strstr(json_text(&j), "\"max_connections_per_host\":4,\"rate_per_host\":2,"
					      "\"max_bytes_out_per_host\":65536,"
					      "\"max_bytes_in_per_host\":104857600"));
	json_free(&j);
	policy_free(p);

	expect_error("[network]\nmode = proxy\nrate-per-host = 0\n",
		     MAIN ":3: ", "'rate-per-host' must be greater than 0");
	expect_error("[network]\nmode = proxy\nmax-bytes-in-per-host = lots\n",
		     MAIN ":3: ", "lots");
	expect_error("[network]\nmax-connections-per-host = 2\nmax-connections-per-host = 3\n",
		     MAIN ":3: ", "max-connections-per-host");
	p = must_load("[network]\nmax-connections-per-host = 2\n");
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, MAIN ":2: ", "[network] has egress limits but mode is none");
	policy_free(p);
}

/* ---------- [limits] ---------- */

static void test_limits_every_key(void **state)
{
	struct policy *p = must_load("[limits]\n"
				     "timeout = 90s\n"
				     "cpu = 1500ms\n"
				     "memory = 512M\n"
				     "processes = 64\n"
				     "open-files = 256\n"
				     "file-size = 1G\n"
				     "tmpfs-size = 64k\n"
				     "changes-size = 2G\n"
				     "session-timeout = 2h\n"
				     "idle-timeout = 15m\n");
	(void)state;

	assert_int_equal(p->limits.timeout_ms, 90000);
	assert_int_equal(p->limits.cpu_s, 2); /* whole seconds, rounded up */
	assert_int_equal(p->limits.memory, 512ull << 20);
	assert_int_equal(p->limits.processes, 64);
	assert_int_equal(p->limits.open_files, 256);
	assert_int_equal(p->limits.file_size, 1ull << 30);
	assert_int_equal(p->limits.tmpfs_size, 64ull << 10);
	assert_int_equal(p->limits.changes_size, 2ull << 30);
	assert_int_equal(p->limits.session_timeout_ms, 2 * 3600000);
	assert_int_equal(p->limits.idle_timeout_ms, 15 * 60000);
	policy_free(p);

	p = must_load("[limits]\ntimeout = 250ms\ncpu = 2m\nmemory = 4096\nfile-size = 1TiB\n");
	assert_int_equal(p->limits.timeout_ms, 250);
	assert_int_equal(p->limits.cpu_s, 120);
	assert_int_equal(p->limits.memory, 4096);
	assert_int_equal(p->limits.file_size, 1ull << 40);
	policy_free(p);

	p = must_load("[limits]\ncpu = 1ms\ntimeout = 1h\n");
	assert_int_equal(p->limits.cpu_s, 1);
	assert_int_equal(p->limits.timeout_ms, 3600000);
	policy_free(p);
}

static void test_limits_zero_rejected(void **state)
{
	static const char *const keys[] = {"timeout",	 "cpu",	      "memory",	    "processes",
					   "open-files", "file-size", "tmpfs-size", "changes-size"};
	char text[128], what[64];
	(void)state;

	for (size_t i = 0; i < NFILES(keys); i++) {
		snprintf(text, sizeof(text), "[limits]\n%s = 0\n", keys[i]);
		snprintf(what, sizeof(what), "'%s' must be greater than 0", keys[i]);
		expect_error(text, MAIN ":2: ", what);
	}
	expect_error("[limits]\nmemory = 0K\n", MAIN ":2: ", "'memory' must be greater than 0");
	expect_error("[limits]\ntimeout = 0ms\n", MAIN ":2: ", "'timeout' must be greater than 0");
}

static void test_limits_bad_values(void **state)
{
	(void)state;
	expect_error("[limits]\nmemory = -1\n", MAIN ":2: ", "'-1' is not a size");
	expect_error("[limits]\nmemory = 12X\n", MAIN ":2: ", "'12X' has an unknown size unit");
	expect_error("[limits]\nmemory = 1.5X\n", MAIN ":2: ", "has an unknown size unit");
	expect_error("[limits]\nmemory = 17179869184G\n",
		     MAIN ":2: ", "size '17179869184G' is too large");
	expect_error("[limits]\nfile-size = 99999999999999999999\n", MAIN ":2: ", "is too large");
	expect_error("[limits]\ntimeout = 5d\n", MAIN ":2: ", "'5d' has an unknown duration unit");
	expect_error("[limits]\ntimeout = -5s\n", MAIN ":2: ", "'-5s' is not a duration");
	expect_error("[limits]\ntimeout = 99999999999999999999\n",
		     MAIN ":2: ", "duration '99999999999999999999' is too large");
	expect_error("[limits]\ncpu = 18446744073709552s\n", MAIN ":2: ", "is too large");
	expect_error("[limits]\nprocesses = 1K\n", MAIN ":2: ", "'1K' is not a whole number");
	expect_error("[limits]\nprocesses = -5\n", MAIN ":2: ", "'-5' is not a whole number");
	expect_error("[limits]\nopen-files = 4294967296\n",
		     MAIN ":2: ", "'4294967296' is too large");
	expect_error("[limits]\nprocesses = 99999999999999999999\n", MAIN ":2: ", "is too large");
	expect_error("[limits]\nmemory =\n", MAIN ":2: ", "'memory' has an empty value");
	expect_error("[limits]\ncpu = 1,2\n", MAIN ":2: ", "has an unknown duration unit");
}

static void test_limits_cpu_rounding_does_not_wrap(void **state)
{
	struct policy *p;
	(void)state;

	/* the largest durations round up to whole seconds without wrapping to 0 ("no limit") */
	p = must_load("[limits]\ncpu = 18446744073709551615ms\n");
	assert_int_equal(p->limits.cpu_s, 18446744073709552ull);
	policy_free(p);
	p = must_load("[limits]\ncpu = 18446744073709551s\n");
	assert_int_equal(p->limits.cpu_s, 18446744073709551ull);
	policy_free(p);
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

/* ---------- structure errors ---------- */

static void test_unknown_section(void **state)
{
	(void)state;
	/* reported at the header, where the fix goes */
	expect_error("[sandbox]\nhostname = a\n[files]\nro = /a\n",
		     MAIN ":3: ", "unknown section [files]");
	expect_error("[Sandbox]\nhostname = a\n", MAIN ":1: ", "unknown section [Sandbox]");
}

static void test_unknown_key(void **state)
{
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_int_equal(load_text(&p, "[filesystem]\nro = /usr\nrwx = /a\n", &e), -1);
	assert_non_null(strstr(e.msg, MAIN ":3: unknown key 'rwx' in [filesystem]"));
	assert_ptr_equal(strstr(e.msg, MAIN ":3: "), e.msg);
	policy_free(p);

	/* include belongs to [sandbox] only; keys are case-sensitive */
	expect_error("[filesystem]\ninclude = x.ini\n",
		     MAIN ":2: ", "unknown key 'include' in [filesystem]");
	expect_error("[limits]\nMemory = 1G\n", MAIN ":2: ", "unknown key 'Memory' in [limits]");
	expect_error("[sandbox]\n= x\n", MAIN ":2: ", "unknown key '' in [sandbox]");
}

static void test_key_outside_section(void **state)
{
	(void)state;
	expect_error("hostname = box\n[sandbox]\n", MAIN ":1: ",
		     "'hostname' is outside any section; fix: put it under a [section] header");
	expect_error("# comment\n\nro = /a\n", MAIN ":3: ", "'ro' is outside any section");
}

static void test_scalar_twice_in_one_file(void **state)
{
	(void)state;
	expect_error("[sandbox]\nhostname = a\nhostname = b\n",
		     MAIN ":3: ", "'hostname' is set twice in [sandbox]");
	/* even in two blocks of the same section */
	expect_error("[limits]\ntimeout = 1s\n[sandbox]\nhostname = a\n[limits]\ntimeout = 2s\n",
		     MAIN ":6: ", "'timeout' is set twice in [limits]");
	expect_error("[network]\nmode = none\nmode = none\n",
		     MAIN ":3: ", "'mode' is set twice in [network]");
	expect_error("[audit]\nfile = -\nfile = fd:2\n",
		     MAIN ":3: ", "'file' is set twice in [audit]");
	expect_error("[limits]\ncpu = 1s\ncpu = 2s\n", MAIN ":3: ", "'cpu' is set twice");
	expect_error("[sandbox]\nworkdir = /a\nworkdir = /b\n",
		     MAIN ":3: ", "'workdir' is set twice");
	expect_error("[seccomp]\npreset = none\npreset = strict\n",
		     MAIN ":3: ", "'preset' is set twice");
}

static void test_key_case_and_spacing_in_values(void **state)
{
	struct policy *p = must_load("[network]\nmode=host\n[sandbox]\nhostname:colon\n");
	(void)state;

	/* inih also accepts name: value */
	assert_int_equal(p->net_mode, NET_HOST);
	assert_string_equal(p->hostname, "colon");
	policy_free(p);
	expect_error("[network]\nmode = HOST\n", MAIN ":2: ", "'HOST' is not a valid mode");
}

/* ---------- variables ---------- */

static void test_variables_in_profile(void **state)
{
	const struct mfile files[] = {
	    {"/p/main.ini", "[sandbox]\ninclude = sub/vars.ini\n", 0},
	    {"/p/sub/vars.ini",
	     "[filesystem]\n"
	     "ro = ${HOME}/a, ${CWD}/b\n"
	     "rw = /run/user/${UID}\n"
	     "tmpfs = ${TMPDIR}/t\n"
	     "ro-try = ~/.config, ~\n"
	     "hide = ${PROFILE_DIR}/secret\n"
	     "symlink = ${HOME}/target ${CWD}/link\n"
	     "[env]\n"
	     "set = WHO=${USER}:${UID}\n"
	     "set = RAW=~/not-expanded\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_fs(p, "/home/alice/a", FS_RO, false, "/p/sub/vars.ini", 2);
	expect_fs(p, "/work/proj/b", FS_RO, false, "/p/sub/vars.ini", 2);
	expect_fs(p, "/run/user/1000", FS_RW, false, "/p/sub/vars.ini", 3);
	expect_fs(p, "/var/tmp/alice/t", FS_TMPFS, false, "/p/sub/vars.ini", 4);
	expect_fs(p, "/home/alice/.config", FS_RO, true, "/p/sub/vars.ini", 5);
	expect_fs(p, "/home/alice", FS_RO, true, "/p/sub/vars.ini", 5);
	expect_fs(p, "/p/sub/secret", FS_HIDE, false, "/p/sub/vars.ini", 6);
	expect_fs(p, "/work/proj/link", FS_SYMLINK, false, "/p/sub/vars.ini", 7);
	assert_string_equal(find_fs(p, "/work/proj/link")->target, "/home/alice/target");
	expect_strv(&p->env_set, 2, "WHO=alice:1000", "RAW=~/not-expanded");
	policy_free(p);
}

static void test_variable_errors(void **state)
{
	(void)state;
	expect_error("[filesystem]\n\nro = ${NOPE}/x\n",
		     MAIN ":3: ", "undefined variable '${NOPE}'; fix: use ${HOME}, ${CWD}");
	expect_error("[filesystem]\nro = ${home}\n", MAIN ":2: ", "undefined variable '${home}'");
	expect_error("[filesystem]\nro = /a/${}\n", MAIN ":2: ", "undefined variable '${}'");
	expect_error("[filesystem]\nro = ${HOME/x\n",
		     MAIN ":2: ", "unterminated '${' in '${HOME/x'");
	expect_error("[sandbox]\nworkdir = /x/${CWD\n", MAIN ":2: ", "unterminated '${'");
	expect_error("[limits]\nmemory = ${UID\n", MAIN ":2: ", "unterminated '${'");
	/* ~user is not expanded, so it stays relative */
	expect_error("[filesystem]\nro = ~bob/x\n",
		     MAIN ":2: ", "'~bob/x' is not an absolute path");
}

static void test_expand_vars_direct(void **state)
{
	struct ab_err e = {0};
	char *out;
	(void)state;

	assert_int_equal(expand_vars("${HOME}|${CWD}|${USER}|${UID}|${TMPDIR}|${PROFILE_DIR}",
				     &test_vars, "/prof", &out, &e),
			 0);
	assert_string_equal(out, "/home/alice|/work/proj|alice|1000|/var/tmp/alice|/prof");
	free(out);
	assert_int_equal(expand_vars("~", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "/home/alice");
	free(out);
	assert_int_equal(expand_vars("~/x/~/y", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "/home/alice/x/~/y");
	free(out);
	assert_int_equal(expand_vars("", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(expand_vars("$HOME and $ {HOME} and }", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "$HOME and $ {HOME} and }");
	free(out);
	/* a value is not expanded again */
	{
		struct policy_vars v = test_vars;
		v.user = "${HOME}";
		assert_int_equal(expand_vars("${USER}", &v, NULL, &out, &e), 0);
		assert_string_equal(out, "${HOME}");
		free(out);
	}
	/* ${PROFILE_DIR} without a profile (the command line) and unknown HOME */
	assert_int_equal(expand_vars("${PROFILE_DIR}/x", &test_vars, NULL, &out, &e), -1);
	expect_msg(&e, "", "undefined variable '${PROFILE_DIR}'");
	{
		struct policy_vars v = test_vars;
		v.home = NULL;
		assert_int_equal(expand_vars("~/x", &v, NULL, &out, &e), -1);
		expect_msg(&e, "", "'~' used but HOME is not known");
		assert_int_equal(expand_vars("${HOME}/x", &v, NULL, &out, &e), -1);
		expect_msg(&e, "", "undefined variable '${HOME}'");
	}
	assert_int_equal(expand_vars("a${", &test_vars, NULL, &out, &e), -1);
	expect_msg(&e, "", "unterminated '${' in 'a${'");
}

/* ---------- value parsers ---------- */

static void test_parse_size(void **state)
{
	(void)state;
	assert_int_equal(must_parse(parse_size, "0"), 0);
	assert_int_equal(must_parse(parse_size, "4096"), 4096);
	assert_int_equal(must_parse(parse_size, "1K"), 1024);
	assert_int_equal(must_parse(parse_size, "1k"), 1024);
	assert_int_equal(must_parse(parse_size, "2M"), 2ull << 20);
	assert_int_equal(must_parse(parse_size, "3G"), 3ull << 30);
	assert_int_equal(must_parse(parse_size, "1T"), 1ull << 40);
	assert_int_equal(must_parse(parse_size, "1KB"), 1024);
	assert_int_equal(must_parse(parse_size, "1KiB"), 1024);
	assert_int_equal(must_parse(parse_size, "007M"), 7ull << 20);
	assert_int_equal(must_parse(parse_size, "18446744073709551615"), UINT64_MAX);
	assert_int_equal(must_parse(parse_size, "17179869183G"), 17179869183ull << 30);
	assert_int_equal(must_parse(parse_size, "16777215T"), 16777215ull << 40);
	/* a fraction of a unit, rounded down to whole bytes */
	assert_int_equal(must_parse(parse_size, "1.5G"), 3ull << 29);
	assert_int_equal(must_parse(parse_size, "0.5K"), 512);
	assert_int_equal(must_parse(parse_size, "1.3K"), 1331);
	assert_int_equal(must_parse(parse_size, "2.000000001T"), (2ull << 40) + 1099);
	assert_int_equal(must_parse(parse_size, "16777215.999999999T"), UINT64_MAX - 1099);
}

static void test_parse_size_errors(void **state)
{
	(void)state;
	expect_parse_error(parse_size, "18446744073709551616",
			   "size '18446744073709551616' is too large");
	expect_parse_error(parse_size, "99999999999999999999", "is too large");
	expect_parse_error(parse_size, "17179869184G", "size '17179869184G' is too large");
	expect_parse_error(parse_size, "16777216T", "is too large");
	expect_parse_error(parse_size, "18014398509481984K", "is too large");
	expect_parse_error(parse_size, "", "'' is not a size");
	expect_parse_error(parse_size, "K", "'K' is not a size");
	expect_parse_error(parse_size, "-1", "'-1' is not a size");
	expect_parse_error(parse_size, "+1", "'+1' is not a size");
	expect_parse_error(parse_size, " 1", "is not a size");
	expect_parse_error(parse_size, "1X", "'1X' has an unknown size unit");
	expect_parse_error(parse_size, "1KK", "has an unknown size unit");
	expect_parse_error(parse_size, "1P", "has an unknown size unit");
	expect_parse_error(parse_size, "1.5", "'1.5' is a fraction of a byte");
	expect_parse_error(parse_size, "1.G", "'1.G' is not a size");
	expect_parse_error(parse_size, ".5G", "'.5G' is not a size");
	expect_parse_error(parse_size, "1.0000000001G", "is not a size");
	expect_parse_error(parse_size, "1,5G", "has an unknown size unit");
	expect_parse_error(parse_size, "16777216.5T", "is too large");
	expect_parse_error(parse_size, "1 K", "has an unknown size unit");
	expect_parse_error(parse_size, "1KBB", "has an unknown size unit");
}

static void test_parse_duration(void **state)
{
	(void)state;
	assert_int_equal(must_parse(parse_duration_ms, "0"), 0);
	assert_int_equal(must_parse(parse_duration_ms, "30"), 30000);
	assert_int_equal(must_parse(parse_duration_ms, "30s"), 30000);
	assert_int_equal(must_parse(parse_duration_ms, "250ms"), 250);
	assert_int_equal(must_parse(parse_duration_ms, "5m"), 300000);
	assert_int_equal(must_parse(parse_duration_ms, "2h"), 7200000);
	assert_int_equal(must_parse(parse_duration_ms, "18446744073709551615ms"), UINT64_MAX);
	assert_int_equal(must_parse(parse_duration_ms, "18446744073709551s"),
			 18446744073709551000ull);
	assert_int_equal(must_parse(parse_duration_ms, "1.5s"), 1500);
	assert_int_equal(must_parse(parse_duration_ms, "1.5"), 1500);
	assert_int_equal(must_parse(parse_duration_ms, "0.25h"), 900000);
	assert_int_equal(must_parse(parse_duration_ms, "0.0001s"), 0);
	expect_parse_error(parse_duration_ms, "1.5ms", "'1.5ms' is a fraction of a millisecond");
	expect_parse_error(parse_duration_ms, "1.s", "is not a duration");
	expect_parse_error(parse_duration_ms, "18446744073709551616ms", "is too large");
	expect_parse_error(parse_duration_ms, "18446744073709552s",
			   "duration '18446744073709552s' is too large");
	expect_parse_error(parse_duration_ms, "5124095576030432h", "is too large");
	expect_parse_error(parse_duration_ms, "99999999999999999999", "is too large");
	expect_parse_error(parse_duration_ms, "", "'' is not a duration");
	expect_parse_error(parse_duration_ms, "s", "'s' is not a duration");
	expect_parse_error(parse_duration_ms, "-5s", "'-5s' is not a duration");
	expect_parse_error(parse_duration_ms, "5d", "'5d' has an unknown duration unit");
	expect_parse_error(parse_duration_ms, "5 s", "has an unknown duration unit");
	expect_parse_error(parse_duration_ms, "5sec", "has an unknown duration unit");
	expect_parse_error(parse_duration_ms, "5mss", "has an unknown duration unit");
}

static void test_parse_count(void **state)
{
	(void)state;
	assert_int_equal(must_parse(parse_count, "0"), 0);
	assert_int_equal(must_parse(parse_count, "42"), 42);
	assert_int_equal(must_parse(parse_count, "2147483647"), 2147483647);
	expect_parse_error(parse_count, "2147483648", "'2147483648' is too large");
	expect_parse_error(parse_count, "99999999999999999999", "is too large");
	expect_parse_error(parse_count, "-1", "'-1' is not a whole number");
	expect_parse_error(parse_count, "1K", "'1K' is not a whole number");
	expect_parse_error(parse_count, "", "'' is not a whole number");
	expect_parse_error(parse_count, "1 ", "is not a whole number");
	expect_parse_error(parse_count, "0x10", "is not a whole number");
}

static void test_path_normalize(void **state)
{
	static const char *const cases[][2] = {
	    {"/", "/"},
	    {"//", "/"},
	    {"/./", "/"},
	    {"/a", "/a"},
	    {"/a/", "/a"},
	    {"/a//b///c", "/a/b/c"},
	    {"/a/./b/.", "/a/b"},
	    {"/./a/./", "/a"},
	    {"/a/.../b", "/a/.../b"},
	    {"/a/..b/c..", "/a/..b/c.."},
	    {"/.hidden/.x", "/.hidden/.x"},
	};
	struct ab_err e = {0};
	char *out, *longp;
	(void)state;

	for (size_t i = 0; i < NFILES(cases); i++) {
		if (path_normalize(cases[i][0], &out, &e) != 0) {
			print_error("'%s' refused: %s\n", cases[i][0], e.msg);
			fail();
		}
		assert_string_equal(out, cases[i][1]);
		free(out);
	}
	assert_int_equal(path_normalize("/a/../b", &out, &e), -1);
	expect_msg(&e, "", "'/a/../b' has a '..' component");
	assert_int_equal(path_normalize("/..", &out, &e), -1);
	assert_int_equal(path_normalize("/a/..", &out, &e), -1);
	assert_int_equal(path_normalize("/a/../", &out, &e), -1);
	assert_int_equal(path_normalize("a/b", &out, &e), -1);
	expect_msg(&e, "", "'a/b' is not an absolute path");
	assert_int_equal(path_normalize("", &out, &e), -1);
	expect_msg(&e, "", "is not an absolute path");
	assert_int_equal(path_normalize("./a", &out, &e), -1);
	assert_int_equal(path_normalize("../a", &out, &e), -1);
	longp = malloc(PATH_MAX + 2);
	assert_non_null(longp);
	memset(longp, 'a', PATH_MAX + 1);
	longp[0] = '/';
	longp[PATH_MAX + 1] = '\0';
	assert_int_equal(path_normalize(longp, &out, &e), -1);
	expect_msg(&e, "", "longer than");
	free(longp);
}

/* ---------- includes ---------- */

static void test_include_nested_relative(void **state)
{
	const struct mfile files[] = {
	    {"/p/main.ini", "[sandbox]\ninclude = sub/a.ini\nhostname = main\n", 0},
	    {"/p/sub/a.ini",
	     "[sandbox]\ninclude = ../common/b.ini\n[filesystem]\nro = ${PROFILE_DIR}/data\n", 0},
	    {"/p/common/b.ini", "[filesystem]\nro = ${PROFILE_DIR}/lib\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->profiles, 3, "/p/main.ini", "/p/sub/a.ini", "/p/common/b.ini");
	assert_string_equal(p->hostname, "main");
	assert_int_equal(p->n_fs, 2);
	/* includes are applied first: b, then a */
	assert_string_equal(p->fs[0].path, "/p/common/lib");
	assert_string_equal(p->fs[1].path, "/p/sub/data");
	expect_fs(p, "/p/common/lib", FS_RO, false, "/p/common/b.ini", 2);
	expect_fs(p, "/p/sub/data", FS_RO, false, "/p/sub/a.ini", 4);
	policy_free(p);
}

static void test_include_absolute_and_variable(void **state)
{
	const struct mfile files[] = {
	    {"/p/main.ini", "[sandbox]\ninclude = /etc/ab/one.ini\ninclude = ~/two.ini\n", 0},
	    {"/etc/ab/one.ini", "[filesystem]\nro = /one\n", 0},
	    {"/home/alice/two.ini", "[sandbox]\ninclude = ${PROFILE_DIR}/three.ini\n", 0},
	    {"/home/alice/three.ini", "[filesystem]\nro = /three\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->profiles, 4, "/p/main.ini", "/etc/ab/one.ini", "/home/alice/two.ini",
		    "/home/alice/three.ini");
	expect_fs(p, "/one", FS_RO, false, "/etc/ab/one.ini", 2);
	expect_fs(p, "/three", FS_RO, false, "/home/alice/three.ini", 2);
	policy_free(p);
}

static void test_include_cycles(void **state)
{
	const struct mfile self[] = {{MAIN, "[sandbox]\nhostname = a\ninclude = main.ini\n", 0}};
	const struct mfile self_spelled[] = {
	    {MAIN, "[sandbox]\ninclude = ./x/../main.ini\n", 0},
	    {"/p/x", "", 0},
	};
	const struct mfile two[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[filesystem]\nro = /a\n[sandbox]\ninclude = main.ini\n", 0},
	};
	const struct mfile three[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[sandbox]\ninclude = b.ini\n", 0},
	    {"/p/b.ini", "[sandbox]\n\ninclude = a.ini\n", 0},
	};
	(void)state;

	expect_files_error(self, NFILES(self),
			   MAIN ":3: ", "include cycle: /p/main.ini includes itself");
	expect_files_error(self_spelled, NFILES(self_spelled), MAIN ":2: ", "include cycle");
	expect_files_error(two, NFILES(two),
			   "/p/a.ini:4: ", "include cycle: /p/main.ini includes itself");
	expect_files_error(two, NFILES(two), MAIN ":2: ", "/p/a.ini:4: include cycle");
	expect_files_error(three, NFILES(three),
			   "/p/b.ini:3: ", "include cycle: /p/a.ini includes itself");
}

static void test_include_diamond_is_not_a_cycle(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\ninclude = b.ini\n", 0},
	    {"/p/a.ini", "[sandbox]\ninclude = common.ini\n", 0},
	    {"/p/b.ini", "[sandbox]\ninclude = common.ini\n", 0},
	    {"/p/common.ini", "[sandbox]\nhostname = c\n[filesystem]\nro = /usr\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->profiles, 5, MAIN, "/p/a.ini", "/p/common.ini", "/p/b.ini",
		    "/p/common.ini");
	assert_string_equal(p->hostname, "c");
	assert_int_equal(p->n_fs, 1);
	policy_free(p);
}

static void test_include_missing(void **state)
{
	const struct mfile nested[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "# a\n[sandbox]\ninclude = gone/x.ini\n", 0},
	};
	const struct mfile unreadable[] = {
	    {MAIN, "[sandbox]\n\ninclude = locked.ini\n", 0},
	    {"/p/locked.ini", NULL, 0},
	};
	struct policy *p;
	struct ab_err e;
	(void)state;

	expect_error("[sandbox]\ninclude = nope.ini\n",
		     MAIN ":2: ", "cannot find profile /p/nope.ini");
	assert_int_equal(load_text(&p, "[sandbox]\ninclude = nope.ini\n", &e), -1);
	assert_ptr_equal(strstr(e.msg, MAIN ":2: "), e.msg);
	policy_free(p);
	expect_files_error(nested, NFILES(nested),
			   "/p/a.ini:3: ", "cannot find profile /p/gone/x.ini");
	expect_files_error(unreadable, NFILES(unreadable),
			   MAIN ":3: ", "cannot open profile /p/locked.ini: Permission denied");
	expect_error("[sandbox]\ninclude =\n", MAIN ":2: ", "'include' has an empty value");
	expect_error("[sandbox]\ninclude = ${NOPE}.ini\n", MAIN ":2: ", "undefined variable");
}

/* A chain f0 -> f1 -> ... -> f(n-1). */
static int load_chain(unsigned n, struct ab_err *e, struct policy **out)
{
	struct mfile *files = calloc(n, sizeof(*files));
	char(*names)[32] = calloc(n, sizeof(*names));
	char(*texts)[96] = calloc(n, sizeof(*texts));
	int rc;

	assert_non_null(files);
	assert_non_null(names);
	assert_non_null(texts);
	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "/p/f%u.ini", i);
		if (i + 1 < n)
			snprintf(texts[i], sizeof(texts[i]),
				 "[sandbox]\ninclude = f%u.ini\n[filesystem]\nro = /d%u\n", i + 1,
				 i);
		else
			snprintf(texts[i], sizeof(texts[i]), "[filesystem]\nro = /d%u\n", i);
		files[i] = (struct mfile){names[i], texts[i], 0};
	}
	rc = load_files(out, files, n, e);
	free(files);
	free(names);
	free(texts);
	return rc;
}

static void test_include_depth_limit(void **state)
{
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_int_equal(POLICY_MAX_INCLUDE_DEPTH, 16);
	/* 16 files nested: fine */
	if (load_chain(16, &e, &p) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	assert_int_equal(p->profiles.n, 16);
	assert_int_equal(p->n_fs, 16);
	policy_free(p);

	/* 17: refused, naming the first include line and the file that went too deep */
	assert_int_equal(load_chain(17, &e, &p), -1);
	expect_msg(&e, "/p/f0.ini:2: ", "includes nest deeper than 16 files at /p/f16.ini");
	assert_ptr_equal(strstr(e.msg, "/p/f0.ini:2: "), e.msg);
	expect_msg(&e, "/p/f15.ini:2: ", "includes nest deeper");
	policy_free(p);
}

static void test_include_deep_chain_hostile(void **state)
{
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_int_equal(load_chain(500, &e, &p), -1);
	expect_msg(&e, "/p/f0.ini:2: ", "includes nest deeper than 16 files");
	assert_true(strlen(e.msg) < AB_ERR_MAX);
	policy_free(p);
}

/* f0 includes f1 k times, f1 includes f2 k times, ... (depth files). */
static int load_bomb(unsigned depth, unsigned k, struct policy **p, struct ab_err *e)
{
	struct mfile *files = calloc(depth, sizeof(*files));
	char(*names)[32] = calloc(depth, sizeof(*names));
	char(*texts)[160] = calloc(depth, sizeof(*texts));
	int rc;

	assert_non_null(files);
	assert_non_null(names);
	assert_non_null(texts);
	for (unsigned i = 0; i < depth; i++) {
		size_t off = 0;
		snprintf(names[i], sizeof(names[i]), "/p/f%u.ini", i);
		off += (size_t)snprintf(texts[i], sizeof(texts[i]), "[sandbox]\n");
		for (unsigned r = 0; i + 1 < depth && r < k; r++)
			off += (size_t)snprintf(texts[i] + off, sizeof(texts[i]) - off,
						"include = f%u.ini\n", i + 1);
		files[i] = (struct mfile){names[i], texts[i], 0};
	}
	rc = load_files(p, files, depth, e);
	free(files);
	free(names);
	free(texts);
	return rc;
}

static void test_include_bomb(void **state)
{
	struct policy *p;
	struct ab_err e;
	int rc;
	(void)state;

	/* 3 includes per file, 16 deep: 3^15 reads unless the total is capped */
	alarm(60);
	rc = load_bomb(16, 3, &p, &e);
	alarm(0);
	assert_int_equal(rc, -1);
	expect_msg(&e, "/p/f0.ini:2: ", "more than 256 profile files read");
	assert_int_equal(p->profiles.n, 256);
	policy_free(p);

	/* repeats that stay under the cap are applied: 1 + 2 + 4 + ... + 128 = 255 files */
	if (load_bomb(8, 2, &p, &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	assert_int_equal(p->profiles.n, 255);
	policy_free(p);
	/* one level more: 511 */
	assert_int_equal(load_bomb(9, 2, &p, &e), -1);
	expect_msg(&e, "", "more than 256 profile files read");
	policy_free(p);
}

static void test_later_include_overrides_earlier(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\ninclude = b.ini\n", 0},
	    {"/p/a.ini",
	     "[sandbox]\nhostname = from-a\n[limits]\ntimeout = 10s\nmemory = 1G\n"
	     "[network]\nmode = host\n[filesystem]\nro = /shared\n",
	     0},
	    {"/p/b.ini",
	     "[sandbox]\nhostname = from-b\n[limits]\ntimeout = 20s\n[filesystem]\n"
	     "tmpfs = /shared\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	assert_string_equal(p->hostname, "from-b");
	assert_int_equal(p->limits.timeout_ms, 20000);
	assert_int_equal(p->limits.memory, 1ull << 30); /* only a set it */
	assert_int_equal(p->net_mode, NET_HOST);
	assert_int_equal(p->n_fs, 1);
	expect_fs(p, "/shared", FS_TMPFS, false, "/p/b.ini", 6);
	policy_free(p);
}

static void test_including_file_overrides_include_listed_last(void **state)
{
	const struct mfile files[] = {
	    {MAIN,
	     "[sandbox]\nhostname = main\n[network]\nmode = host\n[filesystem]\nro = /data\n"
	     "[seccomp]\npreset = none\n[sandbox]\ninclude = base.ini\n",
	     0},
	    {"/p/base.ini",
	     "[sandbox]\nhostname = base\n[network]\nmode = none\n[filesystem]\nrw = /data\n"
	     "rw = /other\n[seccomp]\npreset = strict\naction = kill\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	assert_string_equal(p->hostname, "main");
	assert_int_equal(p->net_mode, NET_HOST);
	assert_int_equal(p->seccomp_preset, SECCOMP_PRESET_NONE);
	assert_int_equal(p->seccomp_action, SECCOMP_ACTION_KILL); /* only base set it */
	expect_fs(p, "/data", FS_RO, false, MAIN, 6);
	expect_fs(p, "/other", FS_RW, false, "/p/base.ini", 7);
	assert_int_equal(p->n_fs, 2);
	policy_free(p);
}

static void test_lists_append_across_includes(void **state)
{
	const struct mfile files[] = {
	    {MAIN,
	     "[sandbox]\ninclude = a.ini\n[network]\nallow = b.com, a.com\n[env]\npass = B_*\n"
	     "set = X=main\n[seccomp]\ndeny = bpf\n[audit]\nredact = two\n",
	     0},
	    {"/p/a.ini",
	     "[network]\nallow = a.com\ndeny = 10.0.0.0/8\n[env]\npass = A_*\nset = X=a\n"
	     "set = Y=a\ndeny = SECRET\n[seccomp]\ndeny = ptrace\nallow = keyctl\n[audit]\n"
	     "redact = one\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->net.allow.text, 2, "a.com", "b.com");
	expect_strv(&p->net.deny.text, 1, "10.0.0.0/8");
	expect_strv(&p->env_pass, 2, "A_*", "B_*");
	expect_strv(&p->env_set, 2, "Y=a", "X=main");
	expect_strv(&p->env_deny, 1, "SECRET");
	expect_strv(&p->seccomp_deny, 2, "ptrace", "bpf");
	expect_strv(&p->seccomp_allow, 1, "keyctl");
	expect_strv(&p->audit_redact, 2, "one", "two");
	policy_free(p);
}

static void test_same_path_across_include_later_wins(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[filesystem]\nrw = /data\n[sandbox]\ninclude = a.ini\ninclude = b.ini\n", 0},
	    {"/p/a.ini", "[filesystem]\nro = /data\nhide = /x\nro = /keep\n", 0},
	    {"/p/b.ini", "[filesystem]\nro = /x\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	assert_int_equal(p->n_fs, 3);
	expect_fs(p, "/data", FS_RW, false, MAIN, 2);
	expect_fs(p, "/x", FS_RO, false, "/p/b.ini", 2);
	expect_fs(p, "/keep", FS_RO, false, "/p/a.ini", 4);
	policy_free(p);
}

static void test_scalar_twice_in_included_file(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[limits]\nmemory = 1G\n\nmemory = 2G\n", 0},
	};
	(void)state;

	expect_files_error(files, NFILES(files),
			   "/p/a.ini:4: ", "'memory' is set twice in [limits]");
}

/* ---------- the command line ---------- */

static void test_override_beats_profile(void **state)
{
	const struct mfile files[] = {
	    {MAIN,
	     "[sandbox]\nhostname = prof\ninclude = a.ini\n[limits]\ntimeout = 10s\n"
	     "[filesystem]\nrw = /work/proj\n",
	     0},
	    {"/p/a.ini", "[network]\nmode = none\n[filesystem]\nro = /from-include\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(policy_override(p, "limits", "timeout", "30s", "--timeout", &e), 0);
	assert_int_equal(policy_override(p, "network", "mode", "host", "--net", &e), 0);
	assert_int_equal(policy_override(p, "filesystem", "ro", "/work/proj", "--ro", &e), 0);
	assert_int_equal(policy_override(p, "filesystem", "tmpfs", "/from-include", "--tmpfs", &e),
			 0);
	assert_int_equal(policy_override(p, "filesystem", "ro", "~/data, ${CWD}/x", "--ro", &e), 0);
	assert_int_equal(policy_override(p, "sandbox", "workdir", "/work/proj", "--chdir", &e), 0);
	assert_int_equal(policy_override(p, "env", "set", "A=${USER}", "--setenv", &e), 0);
	assert_int_equal(policy_override(p, "network", "allow", "example.com", "--allow", &e), 0);
	assert_int_equal(policy_override(p, "audit", "file", "fd:2", "--audit", &e), 0);

	assert_string_equal(p->hostname, "prof");
	assert_int_equal(p->limits.timeout_ms, 30000);
	assert_int_equal(p->net_mode, NET_HOST);
	expect_fs(p, "/work/proj", FS_RO, false, "--ro", 0);
	expect_fs(p, "/from-include", FS_TMPFS, false, "--tmpfs", 0);
	expect_fs(p, "/home/alice/data", FS_RO, false, "--ro", 0);
	expect_fs(p, "/work/proj/x", FS_RO, false, "--ro", 0);
	assert_int_equal(p->n_fs, 4);
	assert_string_equal(p->workdir, "/work/proj");
	expect_strv(&p->env_set, 1, "A=alice");
	expect_strv(&p->net.allow.text, 1, "example.com");
	assert_string_equal(p->audit_file, "fd:2");
	policy_free(p);
}

static void test_override_errors_name_the_option(void **state)
{
	struct policy *p = must_load("[filesystem]\nro = /usr\n");
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(policy_override(p, "filesystem", "ro", "relative/x", "--ro", &e), -1);
	assert_ptr_equal(strstr(e.msg, "--ro: "), e.msg);
	expect_msg(&e, "--ro: ", "'relative/x' is not an absolute path");
	assert_int_equal(policy_override(p, "limits", "timeout", "soon", "--timeout", &e), -1);
	expect_msg(&e, "--timeout: ", "'soon' is not a duration");
	assert_int_equal(policy_override(p, "limits", "timeout", "0", "--timeout", &e), -1);
	expect_msg(&e, "--timeout: ", "'timeout' must be greater than 0");
	assert_int_equal(policy_override(p, "network", "mode", "wifi", "--net", &e), -1);
	expect_msg(&e, "--net: ", "'wifi' is not a valid mode");
	assert_int_equal(policy_override(p, "network", "allow", "b\xc3\xa4r\xff.de", "--allow", &e),
			 -1);
	expect_msg(&e, "--allow: ", "not valid UTF-8");
	assert_int_equal(policy_override(p, "env", "set", "NOEQ", "--setenv", &e), -1);
	expect_msg(&e, "--setenv: ", "'NOEQ' is not NAME=VALUE");
	assert_int_equal(policy_override(p, "filesystem", "ro", "${PROFILE_DIR}/x", "--ro", &e),
			 -1);
	expect_msg(&e, "--ro: ", "undefined variable '${PROFILE_DIR}'");
	assert_int_equal(policy_override(p, "filesystem", "tmpfs", "/", "--tmpfs", &e), -1);
	expect_msg(&e, "--tmpfs: ", "'tmpfs' cannot be applied to /");
	assert_int_equal(policy_override(p, "filesystem", "rwx", "/a", "--rwx", &e), -1);
	expect_msg(&e, "--rwx: ", "unknown key 'rwx' in [filesystem]");
	/* the profile is untouched by the failed overrides */
	assert_int_equal(p->n_fs, 1);
	expect_fs(p, "/usr", FS_RO, false, MAIN, 2);
	assert_int_equal(p->limits.timeout_ms, 0);
	assert_int_equal(p->net_mode, NET_NONE);
	policy_free(p);
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
	expect_msg(&e, MAIN ":2: ", "[network] has allow/deny/resolve rules but mode is none");
	policy_free(p);

	/* a pin only means something to the egress proxy */
	p = must_load("[network]\nresolve = pypi.org=127.0.0.1\n");
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, MAIN ":2: ", "allow/deny/resolve rules but mode is none");
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

/* ---------- hostile input ---------- */

static void test_nul_byte(void **state)
{
	static const char text[] = "[sandbox]\nhostname = a\n[filesystem]\nro = /a\0/b\nrw = /c\n";
	const struct mfile files[] = {{MAIN, text, sizeof(text) - 1}};
	const struct mfile first[] = {{MAIN, "\0", 1}};
	(void)state;

	expect_files_error(files, NFILES(files), MAIN ":4: ", "NUL byte in the profile");
	expect_files_error(first, NFILES(first), MAIN ":1: ", "NUL byte in the profile");
}

static void test_huge_single_line(void **state)
{
	size_t n = 1024 * 1024;
	char *text = malloc(n + 1);
	const char *prefix = "[filesystem]\nro = /";
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_non_null(text);
	memset(text, 'a', n);
	memcpy(text, prefix, strlen(prefix));
	text[n - 1] = '\n';
	text[n] = '\0';
	assert_int_equal(load_text(&p, text, &e), -1);
	expect_msg(&e, MAIN ":2: ", "line is 1048563 bytes, longer than the 196-byte limit");
	assert_int_equal(p->n_fs, 0);
	policy_free(p);

	/* the same without a single newline */
	memset(text, 'x', n);
	text[n] = '\0';
	assert_int_equal(load_text(&p, text, &e), -1);
	expect_msg(&e, MAIN ":1: ", "line is 1048576 bytes");
	policy_free(p);
	free(text);
}

/* "[filesystem]\n" then one "ro = /xxx...\n" line of exactly len bytes (newline included). */
static int load_line_of(size_t len, struct policy **p, struct ab_err *e, char **path)
{
	char text[512];
	size_t head = strlen("[filesystem]\n"), pre = strlen("ro = /");
	int rc;

	assert_true(len > pre + 1 && head + len < sizeof(text));
	memcpy(text, "[filesystem]\nro = /", head + pre);
	memset(text + head + pre, 'x', len - pre - 1);
	text[head + len - 1] = '\n';
	text[head + len] = '\0';
	rc = load_text(p, text, e);
	*path = strndup(text + head + pre - 1, len - pre);
	return rc;
}

static void test_line_length_limit(void **state)
{
	struct policy *p;
	struct ab_err e;
	char *path;
	(void)state;

	/* 196 bytes with its newline: the longest line accepted */
	if (load_line_of(196, &p, &e, &path) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	assert_int_equal(p->n_fs, 1);
	assert_int_equal(strlen(p->fs[0].path), 196 - strlen("ro = \n"));
	assert_memory_equal(p->fs[0].path, path, strlen(p->fs[0].path));
	free(path);
	policy_free(p);

	/* one byte more */
	assert_int_equal(load_line_of(197, &p, &e, &path), -1);
	expect_msg(&e,
		   MAIN ":2: ", "line is 197 bytes, longer than the 196-byte limit; fix: split it");
	assert_int_equal(p->n_fs, 0);
	free(path);
	policy_free(p);

	/* a \r counts too */
	{
		char text[256];
		size_t head = strlen("[filesystem]\nro = /");
		memcpy(text, "[filesystem]\nro = /", head);
		memset(text + head, 'y', 188);
		memcpy(text + head + 188, "\r\n", 3);
		p = must_load(text); /* "ro = /" + 188 + "\r\n" = 196 bytes */
		assert_int_equal(strlen(p->fs[0].path), 189);
		policy_free(p);
		memset(text + head, 'y', 189);
		memcpy(text + head + 189, "\r\n", 3);
		assert_int_equal(load_text(&p, text, &e), -1);
		expect_msg(&e, MAIN ":2: ", "line is 197 bytes");
		policy_free(p);
	}

	/* much more, well beyond inih's own 200-byte buffer */
	assert_int_equal(load_line_of(400, &p, &e, &path), -1);
	expect_msg(&e, MAIN ":2: ", "line is 400 bytes");
	free(path);
	policy_free(p);
}

static void test_garbage_only(void **state)
{
	static const char bin[] = "\x7f"
				  "ELF\x02\x01\x01\xff\xfe\xfd garbage ]]] [[[\n%%%%\n";
	const struct mfile files[] = {{MAIN, bin, sizeof(bin) - 1}};
	(void)state;

	expect_files_error(files, NFILES(files), MAIN ":1: ",
			   "cannot parse this line; fix: write '[section]' or 'key = value'");
	expect_error("this is not an ini file\n", MAIN ":1: ", "cannot parse this line");
	expect_error("[sandbox]\nhostname = a\njust words\n",
		     MAIN ":3: ", "cannot parse this line");
	expect_error("=\n", MAIN ":1: ", "'' is outside any section");
}

static void test_section_header_without_bracket(void **state)
{
	(void)state;
	expect_error("[sandbox\nhostname = a\n", MAIN ":1: ", "cannot parse this line");
	expect_error("[sandbox]\nhostname = a\n[filesystem\nro = /a\n",
		     MAIN ":3: ", "cannot parse this line");
	expect_error("[\n", MAIN ":1: ", "cannot parse this line");
}

static void test_long_section_and_key_names(void **state)
{
	char text[190];
	(void)state;

	snprintf(text, sizeof(text), "[%0150d]\nro = /a\n", 0);
	expect_error(text, MAIN ":1: ", "unknown section");
	snprintf(text, sizeof(text), "[filesystem]\n%0150d = /a\n", 0);
	expect_error(text, MAIN ":2: ", "unknown key");
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

/* ---------- policy_find_profile ---------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	assert_int_equal(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void make_dir(const char *dir)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", tmp, strerror(errno));
		*s = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", tmp, strerror(errno));
}

static void make_profile(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	make_dir(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[sandbox]\n", f);
	fclose(f);
}

struct search {
	char root[64];
	char d1[128], d2[128], home[128], conf[192], rel[128];
	char *old_path;
};

static int search_setup(void **state)
{
	struct search *s = calloc(1, sizeof(*s));
	const char *old = getenv("AGENTBOX_PROFILE_PATH");

	if (!s)
		return -1;
	snprintf(s->root, sizeof(s->root), "/tmp/agentbox-test-XXXXXX");
	if (!mkdtemp(s->root))
		return -1;
	snprintf(s->d1, sizeof(s->d1), "%s/d1", s->root);
	snprintf(s->d2, sizeof(s->d2), "%s/d2", s->root);
	snprintf(s->home, sizeof(s->home), "%s/home", s->root);
	snprintf(s->conf, sizeof(s->conf), "%s/.config/agentbox/profiles", s->home);
	snprintf(s->rel, sizeof(s->rel), "%s/rel", s->root);
	s->old_path = old ? strdup(old) : NULL;
	*state = s;
	return 0;
}

static int search_teardown(void **state)
{
	struct search *s = *state;

	rm_tree(s->root);
	if (s->old_path)
		setenv("AGENTBOX_PROFILE_PATH", s->old_path, 1);
	else
		unsetenv("AGENTBOX_PROFILE_PATH");
	free(s->old_path);
	free(s);
	return 0;
}

static char *find(const struct search *s, const char *name, struct ab_err *e)
{
	struct policy_vars v = test_vars;

	v.home = s->home;
	memset(e, 0, sizeof(*e));
	return policy_find_profile(name, &v, NULL, e);
}

static void expect_found(const struct search *s, const char *name, const char *dir,
			 const char *file)
{
	struct ab_err e;
	char want[PATH_MAX];
	char *got = find(s, name, &e);

	if (!got) {
		print_error("'%s' not found: %s\n", name, e.msg);
		fail();
	}
	snprintf(want, sizeof(want), "%s/%s", dir, file);
	assert_string_equal(got, want);
	free(got);
}

static void test_find_profile_search_order(void **state)
{
	struct search *s = *state;
	char env[512];

	make_profile(s->d1, "abtest-both.ini");
	make_profile(s->d2, "abtest-both.ini");
	make_profile(s->d2, "abtest-second.ini");
	make_profile(s->conf, "abtest-both.ini");
	make_profile(s->conf, "abtest-home.ini");
	/* a directory named like a profile is not a profile */
	make_dir(s->d1);
	snprintf(env, sizeof(env), "%s/abtest-second.ini", s->d1);
	make_dir(env);

	snprintf(env, sizeof(env), "%s:%s", s->d1, s->d2);
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", env, 1), 0);
	expect_found(s, "abtest-both", s->d1, "abtest-both.ini");
	expect_found(s, "abtest-second", s->d2, "abtest-second.ini");
	expect_found(s, "abtest-home", s->conf, "abtest-home.ini");

	/* order within the list matters; empty entries are skipped */
	snprintf(env, sizeof(env), "::%s::%s:", s->d2, s->d1);
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", env, 1), 0);
	expect_found(s, "abtest-both", s->d2, "abtest-both.ini");

	/* without the variable, ~/.config/agentbox/profiles is searched */
	assert_int_equal(unsetenv("AGENTBOX_PROFILE_PATH"), 0);
	expect_found(s, "abtest-both", s->conf, "abtest-both.ini");
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", "", 1), 0);
	expect_found(s, "abtest-both", s->conf, "abtest-both.ini");
}

static void test_find_profile_relative_dirs_ignored(void **state)
{
	struct search *s = *state;
	char old_cwd[PATH_MAX], *got;
	struct ab_err e;

	make_profile(s->rel, "abtest-rel.ini");
	assert_non_null(getcwd(old_cwd, sizeof(old_cwd)));
	assert_int_equal(chdir(s->root), 0);
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", "rel:./rel:.", 1), 0);
	got = find(s, "abtest-rel", &e);
	assert_int_equal(chdir(old_cwd), 0);
	assert_null(got);
	expect_msg(&e, "", "profile 'abtest-rel' not found");
}

static void test_find_profile_name_forms(void **state)
{
	struct search *s = *state;
	struct ab_err e;
	char *got;

	make_profile(s->d1, "abtest-name.ini");
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", s->d1, 1), 0);
	expect_found(s, "abtest-name", s->d1, "abtest-name.ini");
	expect_found(s, "abtest-name.ini", s->d1, "abtest-name.ini");

	/* a value with a '/' is a path, returned as is, even if it does not exist */
	got = find(s, "./abtest-name.ini", &e);
	assert_non_null(got);
	assert_string_equal(got, "./abtest-name.ini");
	free(got);
	got = find(s, "/nonexistent/dir/x.ini", &e);
	assert_non_null(got);
	assert_string_equal(got, "/nonexistent/dir/x.ini");
	free(got);
	got = find(s, "sub/abtest-name", &e);
	assert_non_null(got);
	assert_string_equal(got, "sub/abtest-name");
	free(got);
}

static void test_find_profile_not_found(void **state)
{
	struct search *s = *state;
	struct ab_err e;
	char *got;

	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", s->d1, 1), 0);
	got = find(s, "abtest-no-such-profile", &e);
	assert_null(got);
	expect_msg(&e, "profile 'abtest-no-such-profile' not found",
		   "fix: give a path (./abtest-no-such-profile)");
	got = find(s, "abtest-no-such-profile.ini", &e);
	assert_null(got);
	expect_msg(&e, "profile 'abtest-no-such-profile.ini' not found",
		   "put abtest-no-such-profile.ini in");
	got = find(s, "", &e);
	assert_null(got);
	expect_msg(&e, "", "'' is not a profile name");
	got = find(s, ".ini", &e);
	assert_null(got);
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

/* ---------- what the profile reference promises about the format ---------- */

static void test_profile_sha256(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[sandbox]\nhostname = a\n", 0},
	};
	static const char nul_text[] = "abc";
	const struct mfile plain[] = {{MAIN, nul_text, 3}};
	struct policy *p = must_load_files(files, NFILES(files));
	struct ab_err e;
	(void)state;

	/* one digest per file read, of the bytes parsed, in the same order */
	expect_strv(&p->profiles, 2, MAIN, "/p/a.ini");
	expect_strv(&p->profile_sha256, 2,
		    "d8420bd858860461cf38a0063b8463b7fa20a51c232637a4cd15b38986a63de1",
		    "2a5ed27fc9c0ab16bd2da5fecda39c829567afad8ee0fa60ee87e3ddc45031e5");
	policy_free(p);

	p = must_load("");
	expect_strv(&p->profile_sha256, 1,
		    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	policy_free(p);

	/* "abc" is not a valid profile, but the digest of what was read is recorded */
	assert_int_equal(load_files(&p, plain, 1, &e), -1);
	expect_msg(&e, MAIN ":1: ", "cannot parse this line");
	expect_strv(&p->profile_sha256, 1,
		    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	policy_free(p);
}

static void test_inline_comments_and_no_quoting(void **state)
{
	struct policy *p = must_load("[env]\n"
				     "set = A=a#b;c\n"
				     "set = Q=\"x y\"\n"
				     "set = C=1,2 ;comment\n"
				     "set = T=v\t;tab comment\n"
				     "[filesystem]\n"
				     "ro = /usr ; why\n"
				     "ro = /a#b\n");
	(void)state;

	expect_strv(&p->env_set, 4, "A=a#b;c", "Q=\"x y\"", "C=1,2", "T=v");
	expect_fs(p, "/usr", FS_RO, false, MAIN, 7);
	expect_fs(p, "/a#b", FS_RO, false, MAIN, 8);
	policy_free(p);
	expect_error("[sandbox]\nhostname = \"box\"\n",
		     MAIN ":2: ", "'\"box\"' is not a valid host name");
}

static void test_no_continuation_lines(void **state)
{
	(void)state;
	/* an indented line is not a continuation of the previous value */
	expect_error("[filesystem]\nro = /a\n  /b\n", MAIN ":3: ", "cannot parse this line");
	expect_error("[filesystem]\nro = /a,\n\t/b\n", MAIN ":3: ", "cannot parse this line");
	expect_error("[env]\nset = A=1\n    B=2\n", MAIN ":3: ", "unknown key 'B' in [env]");
}

static void test_one_value_per_line_keys(void **state)
{
	struct policy *p = must_load("[filesystem]\nsymlink = a,b /c\n[env]\nset = L=x,y\n"
				     "[audit]\nredact = a,b\n");
	(void)state;

	/* commas are literal in include, symlink, set and redact */
	assert_string_equal(find_fs(p, "/c")->target, "a,b");
	expect_strv(&p->env_set, 1, "L=x,y");
	expect_strv(&p->audit_redact, 1, "a,b");
	policy_free(p);
	expect_error("[sandbox]\ninclude = a.ini, b.ini\n",
		     MAIN ":2: ", "cannot find profile /p/a.ini, b.ini");
}

static void test_nested_error_format(void **state)
{
	const struct mfile files[] = {
	    {"/home/u/my.ini", "# my profile\n[sandbox]\ninclude = base.ini\n", 0},
	    {"/home/u/base.ini", "[limits]\ntimeout = 1s\n\n\n#\n\nmemory = 1.5X\n", 0},
	};
	struct policy *p;
	struct ab_err e;
	(void)state;

	/* the example from docs/profile.md, exactly */
	assert_int_equal(load_files(&p, files, NFILES(files), &e), -1);
	assert_string_equal(e.msg, "/home/u/my.ini:3: /home/u/base.ini:7: '1.5X' has an unknown "
				   "size unit; fix: use K, M, G or T (powers of 1024)");
	policy_free(p);
}

static void test_redact_patterns_checked(void **state)
{
	(void)state;
	expect_error("[audit]\nredact = ok\nredact = (unclosed\n",
		     MAIN ":3: ", "bad redact pattern '(unclosed'");
	expect_error("[audit]\nredact = a{2,1}\n", MAIN ":2: ", "bad redact pattern");
}

static void test_value_types_from_reference(void **state)
{
	struct policy *p = must_load("[limits]\nmemory = 2GiB\nfile-size = 1t\ntmpfs-size = 3mb\n");
	(void)state;

	assert_int_equal(p->limits.memory, 2ull << 30);
	assert_int_equal(p->limits.file_size, 1ull << 40);
	assert_int_equal(p->limits.tmpfs_size, 3ull << 20);
	policy_free(p);
	/* durations are lower case; sizes need a unit letter before B */
	expect_error("[limits]\ntimeout = 5S\n", MAIN ":2: ", "'5S' has an unknown duration unit");
	expect_error("[limits]\ntimeout = 1H\n", MAIN ":2: ", "unknown duration unit");
	expect_error("[limits]\nmemory = 512B\n", MAIN ":2: ", "'512B' has an unknown size unit");
	expect_error("[limits]\nprocesses = 2147483648\n", MAIN ":2: ", "is too large");
	policy_free(must_load("[limits]\nprocesses = 2147483647\n"));
}

static void test_override_repeats(void **state)
{
	struct policy *p = must_load("[sandbox]\nhostname = h\n");
	struct ab_err e = {0};
	(void)state;

	/* repeating a scalar option is an error, like a scalar written twice in one file */
	assert_int_equal(policy_override(p, "limits", "timeout", "1s", "--timeout", &e), 0);
	assert_int_equal(policy_override(p, "limits", "timeout", "2s", "--timeout", &e), -1);
	expect_msg(&e, "--timeout: ", "'timeout' is set twice in [limits]");
	assert_int_equal(p->limits.timeout_ms, 1000);
	assert_int_equal(policy_override(p, "network", "mode", "host", "--net", &e), 0);
	assert_int_equal(policy_override(p, "network", "mode", "none", "--net", &e), -1);
	expect_msg(&e, "--net: ", "'mode' is set twice");
	assert_int_equal(policy_override(p, "sandbox", "workdir", "/a", "--chdir", &e), 0);
	assert_int_equal(policy_override(p, "sandbox", "workdir", "/b", "--chdir", &e), -1);
	expect_msg(&e, "--chdir: ", "'workdir' is set twice");
	assert_int_equal(policy_override(p, "audit", "file", "-", "--audit", &e), 0);
	assert_int_equal(policy_override(p, "audit", "file", "fd:1", "--audit", &e), -1);
	expect_msg(&e, "--audit: ", "'file' is set twice");
	/* one path twice, whatever the option */
	assert_int_equal(policy_override(p, "filesystem", "ro", "/x", "--ro", &e), 0);
	assert_int_equal(policy_override(p, "filesystem", "hide", "/x/", "--hide", &e), -1);
	expect_msg(&e, "--hide: ", "/x is already listed as 'ro'");
	/* a later --setenv of the same NAME wins */
	assert_int_equal(policy_override(p, "env", "set", "A=1", "--setenv", &e), 0);
	assert_int_equal(policy_override(p, "env", "set", "A=2", "--setenv", &e), 0);
	expect_strv(&p->env_set, 1, "A=2");
	/* and --allow may repeat */
	assert_int_equal(policy_override(p, "network", "allow", "a.com", "--allow", &e), 0);
	assert_int_equal(policy_override(p, "network", "allow", "b.com,a.com", "--allow", &e), 0);
	expect_strv(&p->net.allow.text, 2, "a.com", "b.com");
	policy_free(p);
}

static void test_explain_sandbox_fields(void **state)
{
	struct policy *p = must_load("[sandbox]\nnesting = true\nuid = 0\n");
	struct json j;
	const char *text;
	(void)state;

	json_init(&j);
	policy_explain(p, &j);
	text = json_text(&j);
	assert_non_null(text);
	assert_true(json_valid(text));
	assert_non_null(strstr(text, "\"nesting\":true,\"uid\":0,\"gid\":null"));
	json_free(&j);
	policy_free(p);
}

/* ---------- real files (the default policy_io) ---------- */

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f;

	assert_true(n > 0 && (size_t)n < sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int load_real(struct policy **p, const char *dir, const char *name, struct ab_err *e)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*p = policy_new(&test_vars);
	assert_non_null(*p);
	memset(e, 0, sizeof(*e));
	return policy_load(*p, path, NULL, e);
}

static void test_real_files_and_symlinks(void **state)
{
	struct search *s = *state;
	char real[PATH_MAX], sub[PATH_MAX + 8], want[PATH_MAX + 32], link[PATH_MAX + 16];
	struct policy *p;
	struct ab_err e;

	assert_non_null(realpath(s->root, real));
	snprintf(sub, sizeof(sub), "%s/sub", s->root);
	make_dir(sub);
	write_file(s->root, "main.ini", "[sandbox]\ninclude = sub/a.ini\n", 30);
	write_file(sub, "a.ini", "[filesystem]\nro = ${PROFILE_DIR}/data\n", 38);
	write_file(sub, "b.ini", "[sandbox]\ninclude = a.ini\n", 26);
	if (load_real(&p, s->root, "main.ini", &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	snprintf(want, sizeof(want), "%s/main.ini", real);
	assert_string_equal(p->profiles.v[0], want);
	snprintf(want, sizeof(want), "%s/sub/data", real);
	expect_fs(p, want, FS_RO, false, p->profiles.v[1], 2);
	policy_free(p);

	/* a symlinked profile is read at its real path: its includes resolve from there */
	snprintf(link, sizeof(link), "%s/link.ini", s->root);
	snprintf(want, sizeof(want), "%s/sub/b.ini", real);
	assert_int_equal(symlink(want, link), 0);
	if (load_real(&p, s->root, "link.ini", &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	expect_strv(&p->profiles, 2, want, p->profiles.v[1]);
	snprintf(want, sizeof(want), "%s/sub/a.ini", real);
	assert_string_equal(p->profiles.v[1], want);
	policy_free(p);
}

static void test_real_files_refused(void **state)
{
	struct search *s = *state;
	char path[PATH_MAX], *big;
	struct policy *p;
	struct ab_err e;

	assert_int_equal(load_real(&p, s->root, "missing.ini", &e), -1);
	expect_msg(&e, "cannot find profile", "No such file or directory");
	policy_free(p);

	snprintf(path, sizeof(path), "%s/dir.ini", s->root);
	make_dir(path);
	assert_int_equal(load_real(&p, s->root, "dir.ini", &e), -1);
	expect_msg(&e, "", "is not a regular file");
	policy_free(p);

	/* 1 MiB is the limit; one byte more is refused before it is parsed */
	big = malloc(POLICY_MAX_FILE_BYTES + 1);
	assert_non_null(big);
	memset(big, '\n', POLICY_MAX_FILE_BYTES + 1);
	write_file(s->root, "big.ini", big, POLICY_MAX_FILE_BYTES);
	if (load_real(&p, s->root, "big.ini", &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	policy_free(p);
	write_file(s->root, "big.ini", big, POLICY_MAX_FILE_BYTES + 1);
	free(big);
	assert_int_equal(load_real(&p, s->root, "big.ini", &e), -1);
	expect_msg(&e, "", "is 1048577 bytes; the limit is 1048576");
	policy_free(p);

	/* an include that names a file too big is refused at the include line */
	write_file(s->root, "inc.ini", "[sandbox]\n\ninclude = big.ini\n", 29);
	assert_int_equal(load_real(&p, s->root, "inc.ini", &e), -1);
	expect_msg(&e, "/inc.ini:3: ", "the limit is 1048576");
	policy_free(p);
}

static void test_real_fifo_does_not_block(void **state)
{
	struct search *s = *state;
	char path[PATH_MAX];
	struct policy *p;
	struct ab_err e;
	int rc;

	/* a FIFO is not a regular file: refused at once, not waited on for a writer */
	snprintf(path, sizeof(path), "%s/fifo.ini", s->root);
	assert_int_equal(mkfifo(path, 0600), 0);
	write_file(s->root, "inc.ini", "[sandbox]\ninclude = fifo.ini\n", 29);
	alarm(20); /* turns a hang into a failure */
	rc = load_real(&p, s->root, "fifo.ini", &e);
	alarm(0);
	assert_int_equal(rc, -1);
	expect_msg(&e, "", "is not a regular file");
	policy_free(p);
	alarm(20);
	rc = load_real(&p, s->root, "inc.ini", &e);
	alarm(0);
	assert_int_equal(rc, -1);
	expect_msg(&e, "/inc.ini:2: ", "is not a regular file");
	policy_free(p);
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
	    cmocka_unit_test(test_http_rules),
	    cmocka_unit_test(test_network),
	    cmocka_unit_test(test_network_resolve),
	    cmocka_unit_test(test_protect),
	    cmocka_unit_test(test_limits_every_key),
	    cmocka_unit_test(test_limits_zero_rejected),
	    cmocka_unit_test(test_limits_bad_values),
	    cmocka_unit_test(test_limits_cpu_rounding_does_not_wrap),
	    cmocka_unit_test(test_seccomp),
	    cmocka_unit_test(test_env_section),
	    cmocka_unit_test(test_audit_section),
	    cmocka_unit_test(test_unknown_section),
	    cmocka_unit_test(test_unknown_key),
	    cmocka_unit_test(test_key_outside_section),
	    cmocka_unit_test(test_scalar_twice_in_one_file),
	    cmocka_unit_test(test_key_case_and_spacing_in_values),
	    cmocka_unit_test(test_variables_in_profile),
	    cmocka_unit_test(test_variable_errors),
	    cmocka_unit_test(test_expand_vars_direct),
	    cmocka_unit_test(test_parse_size),
	    cmocka_unit_test(test_parse_size_errors),
	    cmocka_unit_test(test_parse_duration),
	    cmocka_unit_test(test_parse_count),
	    cmocka_unit_test(test_path_normalize),
	    cmocka_unit_test(test_include_nested_relative),
	    cmocka_unit_test(test_include_absolute_and_variable),
	    cmocka_unit_test(test_include_cycles),
	    cmocka_unit_test(test_include_diamond_is_not_a_cycle),
	    cmocka_unit_test(test_include_missing),
	    cmocka_unit_test(test_include_depth_limit),
	    cmocka_unit_test(test_include_deep_chain_hostile),
	    cmocka_unit_test(test_include_bomb),
	    cmocka_unit_test(test_later_include_overrides_earlier),
	    cmocka_unit_test(test_including_file_overrides_include_listed_last),
	    cmocka_unit_test(test_lists_append_across_includes),
	    cmocka_unit_test(test_same_path_across_include_later_wins),
	    cmocka_unit_test(test_scalar_twice_in_included_file),
	    cmocka_unit_test(test_override_beats_profile),
	    cmocka_unit_test(test_override_errors_name_the_option),
	    cmocka_unit_test(test_finish_defaults),
	    cmocka_unit_test(test_finish_rules_need_proxy),
	    cmocka_unit_test(test_network_ca),
	    cmocka_unit_test(test_nul_byte),
	    cmocka_unit_test(test_huge_single_line),
	    cmocka_unit_test(test_line_length_limit),
	    cmocka_unit_test(test_garbage_only),
	    cmocka_unit_test(test_section_header_without_bracket),
	    cmocka_unit_test(test_long_section_and_key_names),
	    cmocka_unit_test(test_explain_is_valid_ascii_json),
	    cmocka_unit_test(test_explain_empty_policy),
	    cmocka_unit_test_setup_teardown(test_find_profile_search_order, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_find_profile_relative_dirs_ignored, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_find_profile_name_forms, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_find_profile_not_found, search_setup,
					    search_teardown),
	    cmocka_unit_test(test_sandbox_nesting_uid_gid),
	    cmocka_unit_test(test_profile_sha256),
	    cmocka_unit_test(test_inline_comments_and_no_quoting),
	    cmocka_unit_test(test_no_continuation_lines),
	    cmocka_unit_test(test_one_value_per_line_keys),
	    cmocka_unit_test(test_nested_error_format),
	    cmocka_unit_test(test_redact_patterns_checked),
	    cmocka_unit_test(test_value_types_from_reference),
	    cmocka_unit_test(test_override_repeats),
	    cmocka_unit_test(test_explain_sandbox_fields),
	    cmocka_unit_test(test_network_limits),
	    cmocka_unit_test_setup_teardown(test_real_files_and_symlinks, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_real_files_refused, search_setup, search_teardown),
	    cmocka_unit_test_setup_teardown(test_real_fifo_does_not_block, search_setup,
					    search_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

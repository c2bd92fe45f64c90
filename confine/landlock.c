/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Newer than Debian 12's kernel headers. */
#define FS_TRUNCATE (1ull << 14)	/* ABI 3 */
#define FS_IOCTL_DEV (1ull << 15)	/* ABI 5 */
#define SCOPE_ABSTRACT_UNIX (1ull << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ull << 1)	/* ABI 6 */
#define NET_BIND_TCP (1ull << 0)	/* ABI 4 */
#define NET_CONNECT_TCP (1ull << 1)	/* ABI 4 */

struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define FS_READ                                                                                    \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

int landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

static uint64_t handled_fs(int abi)
{
	uint64_t all = (1ull << 13) - 1; /* EXECUTE .. MAKE_SYM: ABI 1 */

	if (abi >= 2)
		all |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		all |= FS_TRUNCATE;
	if (abi >= 5)
		all |= FS_IOCTL_DEV;
	return all;
}

static uint64_t scopes(int abi)
{
	return abi >= 6 ? SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL : 0;
}

/* The rights a rule on a file may carry (directory rights there are EINVAL). */
#define FILE_BITS                                                                                  \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |                               \
	 LANDLOCK_ACCESS_FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
#define DEVICE (FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

static int allow(int ruleset, const char *path, uint64_t access, struct ab_err *e);

/* The minimal /dev's nodes. /dev/zero is read-only: a writable shared mapping of it is memory
 * no per-process limit counts (include/rlimits.h), and reading it or mapping it privately needs
 * no write right. */
static int allow_devices(int ruleset, uint64_t all, struct ab_err *e)
{
	static const char *const writable[] = {"/dev/null",    "/dev/full", "/dev/random",
					       "/dev/urandom", "/dev/tty",  NULL};

	for (size_t i = 0; writable[i]; i++)
		if (allow(ruleset, writable[i], DEVICE & all & FILE_BITS, e) < 0)
			return -1;
	if (allow(ruleset, "/dev/zero", FS_READ & all & FILE_BITS, e) < 0)
		return -1;
	return allow(ruleset, "/dev/pts", DEVICE & all, e);
}

/* Opens path inside the view and grants access beneath it. */
static int allow(int ruleset, const char *path, uint64_t access, struct ab_err *e)
{
	struct landlock_path_beneath_attr rule = {.allowed_access = access};
	int rc;

	rule.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (rule.parent_fd < 0) {
		if (errno == ENOENT)
			return 0; /* a hidden or skipped path: nothing to grant */
		return ab_fail(e, errno, "landlock: open %s", path);
	}
	rc = (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
	close(rule.parent_fd);
	if (rc < 0)
		return ab_fail(e, errno, "landlock: rule for %s", path);
	return 0;
}

static int add_rules(int ruleset, const struct mount_plan *plan, uint64_t all, struct ab_err *e)
{
	if (allow(ruleset, "/", FS_READ & all, e) < 0 || allow_devices(ruleset, all, e) < 0 ||
	    allow(ruleset, "/proc", FS_READ & all, e) < 0 || allow(ruleset, "/dev/shm", all, e) < 0)
		return -1;
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		if (op->skipped ||
		    (op->kind != MOP_BIND_RW && op->kind != MOP_TMPFS && op->kind != MOP_OVERLAY))
			continue;
		if (allow(ruleset, op->dest, all, e) < 0)
			return -1;
	}
	return 0;
}

/* The host paths a fallback run may use: binds at their sources, the private temp dir in place
 * of /tmp, the device files /dev would hold, and /proc for reading. */
static int add_host_rules(int ruleset, const struct mount_plan *plan, const char *tmpdir,
			  uint64_t all, struct ab_err *e)
{
	if (allow_devices(ruleset, all, e) < 0 || allow(ruleset, "/proc", FS_READ & all, e) < 0 ||
	    allow(ruleset, tmpdir, all, e) < 0)
		return -1;
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		struct stat st;
		uint64_t access;
		if (op->skipped || (op->kind != MOP_BIND_RO && op->kind != MOP_BIND_RW))
			continue;
		access = op->kind == MOP_BIND_RW ? all : FS_READ & all;
		/* rules on a file take only file rights */
		if (stat(op->source, &st) == 0 && !S_ISDIR(st.st_mode))
			access &= FILE_BITS;
		if (allow(ruleset, op->source, access, e) < 0)
			return -1;
	}
	return 0;
}

static int restrict_self(const struct mount_plan *plan, int abi, const char *host_tmpdir,
			 bool deny_tcp, struct ab_err *e)
{
	struct ruleset_attr attr = {.handled_access_fs = handled_fs(abi), .scoped = scopes(abi)};
	size_t size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
	int ruleset, rc;

	if (deny_tcp && abi >= 4)
		attr.handled_access_net =
		    NET_BIND_TCP | NET_CONNECT_TCP; /* and no rule allows any */
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ruleset < 0)
		return ab_fail(e, errno, "landlock: create ruleset (ABI %d)", abi);
	rc = host_tmpdir ? add_host_rules(ruleset, plan, host_tmpdir, attr.handled_access_fs, e)
			 : add_rules(ruleset, plan, attr.handled_access_fs, e);
	if (rc == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		rc = ab_fail(e, errno, "landlock: restrict_self");
	close(ruleset);
	return rc;
}

int landlock_apply(const struct mount_plan *plan, int abi, struct ab_err *e)
{
	return abi <= 0 ? 0 : restrict_self(plan, abi, NULL, false, e);
}

int landlock_apply_host(const struct mount_plan *plan, int abi, const char *tmpdir, bool deny_tcp,
			struct ab_err *e)
{
	if (abi <= 0)
		return ab_fail(e, 0, "Landlock is not available"),
		       ab_hint(e, "fallback = landlock needs Linux >= 5.13 with Landlock enabled");
	return restrict_self(plan, abi, tmpdir, deny_tcp, e);
}

void landlock_describe(int abi, struct json *j)
{
	json_obj_begin(j);
	json_kv_int(j, "abi", abi);
	json_kv_bool(j, "filesystem", abi >= 1);
	json_kv_bool(j, "truncate", abi >= 3);
	json_kv_bool(j, "ioctl_dev", abi >= 5);
	json_key(j, "scoped");
	json_arr_begin(j);
	if (abi >= 6) {
		json_str(j, "abstract-unix-socket");
		json_str(j, "signal");
	}
	json_arr_end(j);
	json_obj_end(j);
}

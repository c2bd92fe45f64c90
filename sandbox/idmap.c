/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The sandbox's id maps (see include/idmap.h). */
#include "idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int write_file(const char *path, const char *text, struct ab_err *e)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t w;

	if (fd < 0)
		return ab_fail(e, errno, "open %s", path);
	w = write(fd, text, len);
	if (w != (ssize_t)len) {
		int err = w < 0 ? errno : EIO;
		close(fd);
		return ab_fail(e, err, "write %s", path);
	}
	if (close(fd) < 0)
		return ab_fail(e, errno, "close %s", path);
	return 0;
}

/* The caller's uid and gid map to themselves inside, or to [sandbox] uid/gid; setgroups is
 * denied. */
int idmap_write(const struct policy *p, const char *proc, uid_t outer_uid, gid_t outer_gid,
		bool allow_setgroups, struct ab_err *e)
{
	unsigned uid = p->uid >= 0 ? (unsigned)p->uid : (unsigned)outer_uid;
	unsigned gid = p->gid >= 0 ? (unsigned)p->gid : (unsigned)outer_gid;
	char path[64], map[64];

	snprintf(path, sizeof(path), "%s/setgroups", proc);
	/* deny, except for root giving the command other ids: pid 1 must drop root's groups */
	if (write_file(path, allow_setgroups ? "allow" : "deny", e) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/uid_map", proc);
	snprintf(map, sizeof(map), "%u %u 1\n", uid, (unsigned)outer_uid);
	if (write_file(path, map, e) < 0) {
		if (e->errnum == EPERM && outer_uid == 0)
			ab_hint(
			    e, "uid 0 can be mapped only with CAP_SETFCAP (Linux >= 5.12), which a "
			       "sandbox drops; give the outer sandbox [sandbox] uid = 1000, or run "
			       "it as "
			       "an ordinary user");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/gid_map", proc);
	snprintf(map, sizeof(map), "%u %u 1\n", gid, (unsigned)outer_gid);
	return write_file(path, map, e);
}

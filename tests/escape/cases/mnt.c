/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* mnt: undo the mounts that make the view.
 *   mnt umount FILE MARKER [own]   umount2(FILE) (then with MNT_DETACH) to uncover what a hide
 *                                  entry covers: SUCCESS when FILE then reads MARKER
 *   mnt remount DIR [own]          mount(MS_REMOUNT | MS_BIND) without MS_RDONLY on a read-only
 *                                  bind: SUCCESS when a file can then be created in DIR
 *   mnt setattr DIR [own]          mount_setattr(attr_clr = MOUNT_ATTR_RDONLY), likewise
 * own (the positive control, on the host): first make a user and mount namespace of its own and
 * build the same situation in it (/dev/null bound over FILE; DIR bound read-only on itself), as
 * agentbox does in the sandbox, so the call is made by someone the kernel allows. */
#include "escape.h"

#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>

static int contains(const char *path, const char *marker)
{
	char buf[4096];
	return read_file(path, buf, sizeof(buf)) >= 0 && strstr(buf, marker) != NULL;
}

static void own(void)
{
	if (own_userns(CLONE_NEWNS) < 0)
		failed(errno, "control: a user and mount namespace of its own");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		failed(errno, "control: make the mounts private");
}

static int can_create(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/created-by-mnt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(path);
	return 0;
}

static void ro_bind(const char *dir)
{
	if (mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		failed(errno, "control: bind %s read-only", dir);
	if (can_create(dir) == 0 || errno != EROFS)
		failed(errno, "control: %s is not read-only after the bind", dir);
}

int main(int argc, char **argv)
{
	int is_own = !strcmp(argv[argc - 1], "own");

	if (argc >= 4 && !strcmp(argv[1], "umount")) {
		const char *file = argv[2], *marker = argv[3];
		if (is_own) {
			own();
			if (mount("/dev/null", file, NULL, MS_BIND, NULL) < 0)
				failed(errno, "control: bind /dev/null over %s", file);
			if (contains(file, marker))
				failed(0, "control: %s still readable under the bind", file);
		}
		if (contains(file, marker))
			success("%s readable before any umount (not hidden at all)", file);
		if (umount2(file, 0) < 0) {
			info("umount2(%s, 0): %s", file, errname(errno));
			if (umount2(file, MNT_DETACH) < 0)
				failed(errno, "umount2(%s, MNT_DETACH)", file);
		}
		if (contains(file, marker))
			success("umount2 uncovered %s", file);
		failed(errno, "umount2 returned 0 but %s stays covered", file);
	}
	if (argc >= 3 && (!strcmp(argv[1], "remount") || !strcmp(argv[1], "setattr"))) {
		const char *dir = argv[2];
		if (is_own) {
			own();
			ro_bind(dir);
		}
		if (can_create(dir) == 0)
			success("%s is writable before any remount (not read-only at all)", dir);
		if (!strcmp(argv[1], "remount")) {
			if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND, NULL) < 0) {
				info("mount(MS_REMOUNT|MS_BIND) %s: %s", dir, errname(errno));
				if (mount(NULL, dir, NULL, MS_REMOUNT, NULL) < 0)
					failed(errno, "mount(MS_REMOUNT) %s", dir);
			}
		} else {
			struct mount_attr attr = {.attr_clr = MOUNT_ATTR_RDONLY};
			if (syscall(SYS_mount_setattr, AT_FDCWD, dir, 0, &attr, sizeof(attr)) < 0)
				failed(errno, "mount_setattr(%s, attr_clr = RDONLY)", dir);
		}
		if (can_create(dir) == 0)
			success("%s made writable again", dir);
		failed(errno, "the remount returned 0 but %s stays read-only", dir);
	}
	usage("mnt umount FILE MARKER [own] | mnt remount|setattr DIR [own]");
}

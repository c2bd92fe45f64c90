/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* File operations shared by the modules that touch host trees: one way to remove a tree, one
 * way to write or read a whole buffer, one way to open a path no symlink may redirect, one place
 * for agentbox's state. */
#ifndef AGENTBOX_FSOPS_H
#define AGENTBOX_FSOPS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* fn(dirfd, name, ctx) for each entry of the directory dirfd but . and ..; stops at the first
 * non-zero return, and returns it. */
int fs_each_entry(int dirfd, int (*fn)(int dirfd, const char *name, void *ctx), void *ctx,
		  struct ab_err *e);

/* rm -r of dirfd/name without following a symlink anywhere; directories the owner cannot
 * enter or write (a module cache, overlayfs's work dir) are opened up first. A missing name
 * is not an error. Stops at the first failure. */
int fs_remove_tree(int dirfd, const char *name, struct ab_err *e);

/* Copies a regular file's data regions and size from one fd to another, holes kept; -1 with
 * errno on failure. */
int fs_copy_fd(int from, int to);

/* Copies what is in directory from into directory to, without following a symlink: files
 * (holes kept), directories (and overlayfs's opaque mark), symlinks, fifos, overlayfs's
 * whiteouts; other special files are left out. Directories that exist in to are merged into.
 * Entries their owner (the caller) made unreadable are opened up first. At most budget bytes
 * of file data are written (0: no limit; EDQUOT past it) and 1000 directory levels. Stops at
 * the first failure. */
int fs_copy_tree(int from, int to, uint64_t budget, struct ab_err *e);

/* path opened with no symlink anywhere on it, the last component included: a symlink fails
 * the open with ELOOP, except as the last component with O_PATH, which opens the link itself.
 * A relative path stays beneath dirfd (a ".." above it fails with EXDEV); "" is dirfd itself.
 * O_NOFOLLOW and O_CLOEXEC are added. -1 with errno on failure. */
int fs_open_nolinks(int dirfd, const char *path, int flags);

/* mkdir -p, new directories 0700. */
int fs_mkdirs(const char *path, struct ab_err *e);

/* $XDG_STATE_HOME/agentbox/SUB, or ~/.local/state/agentbox/SUB (not created). */
int fs_state_dir(const char *sub, char *out, size_t size, struct ab_err *e);

/* write(2) until len bytes are written; -1 with errno on failure. */
int fs_write_all(int fd, const void *buf, size_t len);
/* read(2) until size bytes are read or the file ends: how many were (errno says why when fewer
 * and a read failed). */
size_t fs_read_all(int fd, void *buf, size_t size);

#endif

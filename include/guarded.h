/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Paths outside any profile that a command must never be able to change, when a writable tree
 * of the profile holds them (a workspace at $HOME or above it, say): agentbox's own inputs
 * (profile search directories, its state directory of overlay runs and placeholders) and the
 * files and directories through which the user's shell, git and ssh run code later (start-up
 * files, ~/.gitconfig and ~/.config/git, ~/.ssh, ~/.local/bin and every directory on PATH).
 * They are kept read-only in place. A missing one whose parent exists gets a read-only
 * stand-in, like the protected names at the root of each writable tree: an empty directory,
 * or for a file an empty file (git fails on a directory where ~/.gitconfig should be). */
#ifndef AGENTBOX_GUARDED_H
#define AGENTBOX_GUARDED_H

#include <stdbool.h>

#include "error.h"
#include "strv.h"

/* The lists, from an environment lookup (getenv, or a table in the tests): files, and
 * directories (AGENTBOX_PROFILE_PATH and PATH entries among them); absolute paths only, each
 * once; entries that are not absolute are ignored (a relative PATH entry names nothing fixed). */
int guarded_paths(const char *(*env)(const char *name), struct strv *files, struct strv *dirs,
		  struct ab_err *e);
/* The same from this process's environment. */
int guarded_paths_here(struct strv *files, struct strv *dirs, struct ab_err *e);

/* promote: why a change may not reach the host, or NULL. rel is the change's path below its
 * tree's root (a protected name, or a path below one, is refused; so is .git itself when it
 * would become anything but a directory), host its path on the host (a guarded path, or one
 * below it, is refused). */
const char *guarded_refusal(const char *rel, bool dir, const char *host, const struct strv *files,
			    const struct strv *dirs);
/* promote: whether rel (below its tree's root) is, or lies inside, a .git below the root: a
 * repository of its own, whose config and hooks the host's git runs (a gitlink in the root's
 * index makes a plain `git status` there read them). Only the root's .git is protected in
 * place; one made, or written into, below it is refused whatever it holds. */
bool guarded_nested_git(const char *rel);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Why an exec said ENOENT. The kernel says it for the program, and also for the program's
 * interpreter: a script's #! line, or an ELF's PT_INTERP (the dynamic loader, /lib64/ld-linux-*
 * on x86-64, which a view without the /lib64 link lacks). Runs in the command's vfork child:
 * stack buffers only, nothing of pid 1's memory written. */
#include "exec_why.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HEAD_MAX 4096 /* the #! line, or an ELF header and its program headers */

/* The file execvp would have run for name under PATH: its first match that exists. */
static bool find_program(const char *name, const char *path, char *out, size_t size)
{
	const char *dir = path && *path ? path : "/bin:/usr/bin";

	if (strchr(name, '/'))
		return (size_t)snprintf(out, size, "%s", name) < size && access(out, F_OK) == 0;
	while (*dir) {
		size_t n = strcspn(dir, ":");
		if ((size_t)snprintf(out, size, "%.*s%s%s", (int)n, dir, n ? "/" : "", name) <
			size &&
		    access(out, F_OK) == 0)
			return true;
		dir += n + (dir[n] == ':');
	}
	return false;
}

/* The interpreter a #! line names (its first word), or false. */
static bool script_interp(const char *head, size_t n, char *out, size_t size)
{
	size_t i = 2, start, len;

	if (n < 3 || head[0] != '#' || head[1] != '!')
		return false;
	while (i < n && (head[i] == ' ' || head[i] == '\t'))
		i++;
	start = i;
	while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\0')
		i++;
	len = i - start;
	if (!len || len >= size)
		return false;
	memcpy(out, head + start, len);
	out[len] = '\0';
	return true;
}

/* The PT_INTERP path of a native 64-bit ELF whose header and program headers fit in head. */
static bool elf_interp(int fd, const char *head, size_t n, char *out, size_t size)
{
	Elf64_Ehdr eh;
	ssize_t got;

	if (n < sizeof(eh) || memcmp(head, ELFMAG, SELFMAG) || head[EI_CLASS] != ELFCLASS64)
		return false;
	memcpy(&eh, head, sizeof(eh));
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > n ||
	    eh.e_phnum > (n - eh.e_phoff) / sizeof(Elf64_Phdr))
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, head + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz < 2 || ph.p_filesz > size)
			return false;
		got = pread(fd, out, ph.p_filesz, (off_t)ph.p_offset);
		if (got != (ssize_t)ph.p_filesz || out[ph.p_filesz - 1] != '\0')
			return false;
		return true;
	}
	return false;
}

/* The interpreter prog needs, when prog can be read: true with out set. */
static bool interpreter_of(const char *prog, char *out, size_t size, bool *script)
{
	char head[HEAD_MAX];
	int fd = open(prog, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	bool found = false;

	if (fd < 0)
		return false;
	n = pread(fd, head, sizeof(head), 0);
	if (n > 0) {
		*script = script_interp(head, (size_t)n, out, size);
		found = *script || elf_interp(fd, head, (size_t)n, out, size);
	}
	close(fd);
	return found;
}

void exec_why_enoent(const char *name, const char *path, char *text, size_t size)
{
	char prog[4096], interp[4096];
	bool script = false;

	if (!find_program(name, path, prog, sizeof(prog))) {
		snprintf(text, size,
			 "%s: command not found in the sandbox; fix: check PATH and that its "
			 "directory is listed in [filesystem]",
			 name);
		return;
	}
	if (interpreter_of(prog, interp, sizeof(interp), &script) && access(interp, F_OK) < 0) {
		if (script)
			snprintf(text, size,
				 "%s: its interpreter %s (its #! line) is not in the sandbox; fix: "
				 "list that program's directory in [filesystem]",
				 prog, interp);
		else
			snprintf(
			    text, size,
			    "%s: its program interpreter %s (the dynamic loader) is not in the "
			    "sandbox; fix: add the link the system has there (e.g. symlink = "
			    "usr/lib64 /lib64, as base-usr.ini does) or list its directory in "
			    "[filesystem]",
			    prog, interp);
		return;
	}
	snprintf(text, size, "%s: cannot execute: %s", prog, strerror(ENOENT));
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* ns: create namespaces of its own (a nested user namespace is where a sandboxed process would
 * get back every capability, and a nested network namespace its own routes).
 *   ns unshare     unshare(CLONE_NEWUSER | CLONE_NEWNET)
 *   ns clone       clone(CLONE_NEWUSER | CLONE_NEWNET) called directly
 *   ns clone3      clone3 with the same flags, passed in memory the filter cannot read
 * SUCCESS when the new process really is in another user namespace than its parent. */
#include "escape.h"

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static ino_t userns_ino(void)
{
	struct stat st;
	return stat("/proc/self/ns/user", &st) == 0 ? st.st_ino : 0;
}

int main(int argc, char **argv)
{
	const unsigned long flags = CLONE_NEWUSER | CLONE_NEWNET;
	ino_t before = userns_ino();
	char buf[32];
	pid_t pid;
	int st;

	if (argc != 2)
		usage("ns unshare|clone|clone3");
	if (read_file("/proc/sys/user/max_user_namespaces", buf, sizeof(buf)) > 0)
		info("user.max_user_namespaces = %s", strtok(buf, "\n"));
	if (!strcmp(argv[1], "unshare")) {
		if (unshare((int)flags) < 0)
			failed(errno, "unshare(CLONE_NEWUSER|CLONE_NEWNET)");
		if (userns_ino() == before)
			failed(0, "unshare returned 0 but the user namespace is the same");
		success("unshare made a new user and network namespace");
	}
	if (!strcmp(argv[1], "clone")) {
		pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	} else if (!strcmp(argv[1], "clone3")) {
		struct clone_args ca;
		memset(&ca, 0, sizeof(ca));
		ca.flags = flags;
		ca.exit_signal = SIGCHLD;
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	} else {
		usage("ns unshare|clone|clone3");
	}
	if (pid < 0)
		failed(errno, "%s(CLONE_NEWUSER|CLONE_NEWNET)", argv[1]);
	if (pid == 0)
		_exit(userns_ino() != before ? 42 : 1);
	if (waitpid(pid, &st, 0) < 0)
		failed(errno, "waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
		success("%s made a child in a new user and network namespace", argv[1]);
	failed(0, "%s returned a child, but in the same user namespace", argv[1]);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* User namespaces on this host (see include/userns.h). */
#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long read_sysctl(const char *path)
{
	char buf[32] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* Says why user namespaces are unavailable and how to allow them. */
int userns_diagnose(int err, struct ab_err *e)
{
	ab_fail(e, err, "cannot create a user namespace");
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2)
		return ab_hint(
		    e, "a seccomp filter refuses it (an outer sandbox or a container): for "
		       "agentbox inside agentbox, set [sandbox] nesting = true in the outer "
		       "profile; or use [sandbox] fallback = landlock");
	if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		return ab_hint(e, "unprivileged user namespaces are off: sysctl -w "
				  "kernel.unprivileged_userns_clone=1");
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
		return ab_hint(e,
			       "user namespaces are off: sysctl -w user.max_user_namespaces=15000");
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
		return ab_hint(e, "AppArmor restricts user namespaces: install an AppArmor profile "
				  "for agentbox or sysctl -w "
				  "kernel.apparmor_restrict_unprivileged_userns=0");
	if (err == ENOSPC || err == EUSERS)
		return ab_hint(e, "the user namespace limit is reached: raise "
				  "user.max_user_namespaces or end other sandboxes");
	return ab_hint(e, "a container's seccomp profile may block them: allow clone with "
			  "CLONE_NEWUSER (or unshare) for this workload");
}

/* In the probe's namespaces: what the sandbox's pid 1 does first and a container engine's
 * defaults refuse (a masked /proc forbids a fresh procfs; a seccomp profile may keep
 * sethostname for CAP_SYS_ADMIN). The procfs goes over /proc in this private mount namespace. */
static int probe_child(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 1;
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return 1;
	return sethostname("agentbox", 8) < 0 ? 1 : 0;
}

/* Can the sandbox's namespaces be built here? Asked only when the profile allows a fallback,
 * so ordinary runs pay nothing for it. */
bool userns_usable(void)
{
	pid_t pid = (pid_t)syscall(
	    SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | SIGCHLD, NULL,
	    NULL, NULL, NULL);
	int st = 0;

	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(probe_child());
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

void userns_apparmor_hint(struct ab_err *e)
{
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
		ab_hint(e, "AppArmor denies this user namespace its capabilities: "
			   "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
}

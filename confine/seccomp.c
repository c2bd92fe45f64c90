/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The system call filter: built from the policy with libseccomp (seccomp_build.c, from the
 * names in seccomp_lists.c) or copied from the program compiled at build time, sent to pid 1
 * and loaded there. seccomp_monitor.c answers it. */
#include "seccomp.h"

#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_internal.h"

static bool has_filter(const struct policy *p, bool no_inet)
{
	return p->seccomp_preset != SECCOMP_PRESET_NONE || p->seccomp_deny.n > 0 || no_inet;
}

bool seccomp_blocks_tty_injection(const struct policy *p)
{
	return p->seccomp_preset == SECCOMP_PRESET_DEFAULT && !strv_has(&p->seccomp_allow, "ioctl");
}

#if SCMP_VER_MAJOR < 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR < 5)
#error "agentbox needs libseccomp >= 2.5 (seccomp user notification)"
#endif

/* What libseccomp's API level 6 stands for on the kernel's side (Linux 5.7), asked in one call
 * rather than libseccomp's nine probes, which also fault in its pages at every start: flags
 * the kernel knows get past their check and fail on the missing program (EFAULT). */
static bool kernel_has_listener(void)
{
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC_ESRCH,
		       NULL) < 0 &&
	       errno == EFAULT;
}

int seccomp_prepare(const struct policy *p, struct ab_err *e)
{
	if (has_filter(p, false) && !kernel_has_listener())
		return ab_fail(e, errno, "this kernel lacks seccomp user notification"),
		       ab_hint(e, "upgrade to Linux >= 5.9");
	return 0;
}

/* Builds and loads the filter; returns the listener with notify, else 0. */
static int load(const struct policy *p, bool no_inet, bool notify, struct ab_err *e)
{
	scmp_filter_ctx ctx = build(p, no_inet, notify, e);
	int rc;

	if (!ctx)
		return -1;
	if ((rc = seccomp_load(ctx)) < 0) {
		ab_fail(e, -rc, "cannot load the seccomp filter");
		goto out;
	}
	rc = notify ? seccomp_notify_fd(ctx) : 0;
	if (rc < 0)
		ab_fail(e, -rc, "no seccomp notification fd");
out:
	seccomp_release(ctx);
	return rc;
}

/* libseccomp 2.5 exports only to an fd: a memfd, read back. */
static int export_program(scmp_filter_ctx ctx, struct seccomp_program *out, struct ab_err *e)
{
	int fd = (int)syscall(SYS_memfd_create, "agentbox-seccomp", MFD_CLOEXEC);
	off_t size;
	int rc;

	if (fd < 0)
		return ab_fail(e, errno, "memfd_create for the seccomp filter");
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0) {
		ab_fail(e, -rc, "cannot export the seccomp filter");
		goto out;
	}
	rc = -1;
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % sizeof(struct sock_filter) ||
	    size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter))) {
		ab_fail(e, size < 0 ? errno : EINVAL, "the exported seccomp filter has %lld bytes",
			(long long)size);
		goto out;
	}
	if (pread(fd, out->insns, (size_t)size, 0) != size) {
		ab_fail(e, errno ? errno : EIO, "cannot read the exported seccomp filter");
		goto out;
	}
	out->len = (unsigned short)(size / sizeof(struct sock_filter));
	rc = 0;
out:
	close(fd);
	return rc;
}

int seccomp_compile(const struct policy *p, struct seccomp_program *out, struct ab_err *e)
{
	scmp_filter_ctx ctx;
	int rc;

	out->len = 0;
	if (!has_filter(p, false))
		return 0;
	if (!(ctx = build(p, false, true, e)))
		return -1;
	rc = export_program(ctx, out, e);
	seccomp_release(ctx);
	return rc;
}

/* Linked into the agentbox binary only (generated at build time); absent (NULL) elsewhere, in
 * the generator itself for one, and empty when the build host could not compile a filter. */
extern const struct seccomp_precompiled seccomp_precompiled __attribute__((weak));

/* libseccomp takes about 200 us and a million instructions for the default filter, on every
 * start: the same program, compiled by the same library at build time, is used instead. */
const struct seccomp_precompiled *seccomp_builtin(const struct policy *p)
{
	const struct seccomp_precompiled *pre = &seccomp_precompiled;

	if (pre && pre->len > 0 && pre->len <= BPF_MAXINSNS && seccomp_precompiled_fits(p))
		return pre;
	return NULL;
}

int seccomp_install_program(const struct policy *p, const struct sock_filter *insns,
			    unsigned short len, int *listener, bool *unnamed, struct ab_err *e)
{
	struct sock_fprog fprog = {len, (struct sock_filter *)insns};
	int fd, err;

	*listener = -1;
	*unnamed = false;
	if (has_filter(p, false) != (len > 0))
		return ab_fail(e, EPROTO, "the supervisor sent a seccomp filter of %u instructions",
			       (unsigned)len);
	if (!len)
		return 0;
	/* what seccomp_load does: no_new_privs, then the filter with a new listener */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ab_fail(e, errno, "cannot set no_new_privs");
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &fprog);
	if (fd >= 0) {
		*listener = fd;
		return 0;
	}
	err = errno;
	/* as in seccomp_install: under an outer listener, the same calls refused unnamed */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		return ab_fail(e, err, "cannot load the seccomp filter");
	*unnamed = true;
	return load(p, false, false, e) < 0 ? -1 : 0;
}

int seccomp_install(const struct policy *p, bool no_inet, int *listener, bool *unnamed,
		    struct ab_err *e)
{
	int rc;

	*listener = -1;
	*unnamed = false;
	if (!has_filter(p, no_inet))
		return 0;
	rc = load(p, no_inet, true, e);
	if (rc >= 0) {
		*listener = rc;
		return 0;
	}
	/* Under an outer filter with a listener (one per filter chain) the kernel answers EBUSY;
	 * libseccomp does not pass that errno on reliably, so ask whether a filter is there. The
	 * same calls are then refused, but without names. */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		return -1;
	*unnamed = true;
	return load(p, no_inet, false, e) < 0 ? -1 : 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The filter's rules, made with libseccomp from the policy: the default preset's refusals and
 * argument rules, the strict preset's allowlist (the names are in seccomp_lists.c), the
 * profile's own allow and deny lists; and which policies the build-time program fits (the
 * filter's inputs). seccomp.c exports and loads what build() makes. */
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "seccomp_internal.h"
#include "syscall_names.h"

/* Calls whose mode argument can set S_ISUID or S_ISGID: such a file outlives the run on the
 * host (setuid root when agentbox runs as root), where nosuid no longer holds. */
struct mode_arg {
	const char *name;
	int mode;  /* the mode argument */
	int flags; /* open's flags, which must ask to create; -1: always a mode */
};
static const struct mode_arg setid_modes[] = {
    {"chmod", 1, -1},	  {"fchmod", 1, -1}, {"fchmodat", 2, -1},
    {"fchmodat2", 2, -1}, {"creat", 1, -1},  {"mknod", 1, -1},
    {"mknodat", 2, -1},	  {"open", 2, 1},    {"openat", 3, 2},
};
#define SETID_BITS (S_ISUID | S_ISGID)
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

/* Memory no per-process limit counts (include/rlimits.h: memory is RLIMIT_DATA): memfds, SysV
 * segments, and shared anonymous mappings (mmap asks only for those flags). The filter always
 * asks the supervisor (one program whatever the run's cgroup); it lets them through when a
 * memory cgroup counts them, and refuses them under a memory limit without one. */
static const char *const uncounted_memory[] = {"memfd_create", "shmget", "mmap", NULL};
/* MAP_SHARED_VALIDATE holds MAP_SHARED's bit; MAP_PRIVATE does not */
#define SHARED_ANON ((scmp_datum_t)(MAP_SHARED | MAP_ANONYMOUS))

/* Namespace flags: clone and unshare with any of them are refused. CLONE_NEWTIME shares bits
 * with clone's exit signal, so it is checked for unshare only. */
static const unsigned long ns_flags[] = {
    CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
};

/* personality flags that weaken the process (ASLR off, executable data, page zero). */
static const unsigned long bad_personality[] = {
    ADDR_NO_RANDOMIZE,
    READ_IMPLIES_EXEC,
    MMAP_PAGE_ZERO,
    ADDR_COMPAT_LAYOUT,
};

/* What an agentbox inside the sandbox needs; allowed only with [sandbox] nesting = true. The
 * inner sandbox's own user namespace is what makes these safe to hand out. */
static const char *const nesting_needs[] = {
    "mount",   "umount2",    "pivot_root", "fsopen",	    "fsconfig",
    "fsmount", "move_mount", "open_tree",  "mount_setattr", NULL,
};

static bool nest_allowed(bool nesting, const char *name)
{
	for (size_t i = 0; nesting && nesting_needs[i]; i++)
		if (!strcmp(nesting_needs[i], name))
			return true;
	return false;
}

/* ---------- building the filter ---------- */

/* Everything of the policy the filter depends on: build() reads the policy through this only,
 * so that seccomp_precompiled_fits() can tell when the build-time program is the same one. A
 * new input goes here and into seccomp_precompiled_fits(). */
struct filter_inputs {
	enum seccomp_preset preset;
	const struct strv *allow, *deny;
	bool nesting;
};

static struct filter_inputs filter_inputs(const struct policy *p)
{
	return (struct filter_inputs){p->seccomp_preset, &p->seccomp_allow, &p->seccomp_deny,
				      p->nesting};
}

struct builder {
	scmp_filter_ctx ctx;
	const struct filter_inputs *in;
	struct ab_err *e;
	uint32_t deny_action; /* SCMP_ACT_NOTIFY, or SCMP_ACT_ERRNO(EPERM) without a listener */
	bool no_inet;	      /* no network namespace to isolate: refuse inet sockets */
};

static int rule(struct builder *b, const char *name, unsigned n, const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	int rc;

	if (nr == __NR_SCMP_ERROR || strv_has(b->in->allow, name) ||
	    nest_allowed(b->in->nesting, name))
		return 0;
	rc = seccomp_rule_add_array(b->ctx, b->deny_action, nr, n, cmp);
	if (rc < 0 && rc != -EEXIST)
		return ab_fail(b->e, -rc, "seccomp rule for %s", name);
	return 0;
}

static int deny(struct builder *b, const char *name)
{
	return rule(b, name, 0, NULL);
}

static int deny_if(struct builder *b, const char *name, struct scmp_arg_cmp c)
{
	return rule(b, name, 1, &c);
}

static int deny_namespaces(struct builder *b)
{
	if (b->in->nesting)
		goto clone3; /* the inner sandbox creates its namespaces with clone */
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
		if (deny_if(b, "clone", SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i])) <
			0 ||
		    deny_if(b, "unshare", SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i])) <
			0)
			return -1;
	}
	if (deny_if(b, "unshare", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWTIME, CLONE_NEWTIME)) < 0)
		return -1;
clone3:
	/* clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc fall back
	 * to clone, whose flags it can. Not a violation, so not notified. */
	if (!strv_has(b->in->allow, "clone3") &&
	    seccomp_rule_add(b->ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0)
		return ab_fail(b->e, EINVAL, "seccomp rule for clone3");
	return 0;
}

static int deny_sockets(struct builder *b)
{
	/* allowed families: AF_UNIX (1), AF_INET (2), AF_INET6 (10), AF_NETLINK (16) */
	static const int refused[] = {0, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (deny_if(b, "socket", SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)refused[i], 0)) < 0)
			return -1;
	if (deny_if(b, "socket", SCMP_A0(SCMP_CMP_GT, AF_NETLINK, 0)) < 0)
		return -1;
	/* netlink: NETLINK_ROUTE (0) only; sock_diag and the rest reveal the host */
	{
		struct scmp_arg_cmp c[] = {SCMP_A0(SCMP_CMP_EQ, AF_NETLINK, 0),
					   SCMP_A2(SCMP_CMP_NE, 0, 0)};
		if (rule(b, "socket", 2, c) < 0)
			return -1;
	}
	return 0;
}

static int deny_misc(struct builder *b)
{
	/* TIOCSTI/TIOCLINUX inject keystrokes into a terminal; compare only the low 32 bits,
	 * as the kernel does, so high bits set by the caller change nothing */
	if (deny_if(b, "ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)) < 0 ||
	    deny_if(b, "ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX)) < 0)
		return -1;
	/* a flag set and bit 31 clear: the query value 0xffffffff stays allowed */
	for (size_t i = 0; i < sizeof(bad_personality) / sizeof(bad_personality[0]); i++) {
		unsigned long f = bad_personality[i];
		if (deny_if(b, "personality", SCMP_A0(SCMP_CMP_MASKED_EQ, f | 0x80000000ul, f)) < 0)
			return -1;
	}
	return 0;
}

static bool in_list(const char *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

bool seccomp_mode_filtered(const char *name)
{
	for (size_t i = 0; i < sizeof(setid_modes) / sizeof(setid_modes[0]); i++)
		if (!strcmp(setid_modes[i].name, name))
			return true;
	return false;
}

static struct scmp_arg_cmp masked(int arg, scmp_datum_t mask, scmp_datum_t value)
{
	return (struct scmp_arg_cmp){(unsigned)arg, SCMP_CMP_MASKED_EQ, mask, value};
}

/* Default preset: refused when the mode has either bit; open's only when it creates. Each bit
 * is tested alone, so high garbage in the register changes nothing. */
static int deny_setid_modes(struct builder *b)
{
	static const scmp_datum_t bits[] = {S_ISUID, S_ISGID}, creating[] = {O_CREAT, __O_TMPFILE};

	for (size_t i = 0; i < sizeof(setid_modes) / sizeof(setid_modes[0]); i++) {
		const struct mode_arg *m = &setid_modes[i];
		for (size_t k = 0; k < 2; k++) {
			struct scmp_arg_cmp c[2] = {masked(m->mode, bits[k], bits[k])};
			if (m->flags < 0 && rule(b, m->name, 1, c) < 0)
				return -1;
			for (size_t f = 0; m->flags >= 0 && f < 2; f++) {
				c[1] = masked(m->flags, creating[f], creating[f]);
				if (rule(b, m->name, 2, c) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/* Calls the filter cannot judge: openat2's flags and mode are in memory it cannot read.
 * ENOSYS, as on kernels before 5.6, makes callers fall back to openat; not a violation, so
 * not notified. An agentbox nested inside needs it for its own setup. */
static int refuse_openat2(struct builder *b)
{
	if (strv_has(b->in->allow, "openat2") || b->in->nesting)
		return 0;
	if (seccomp_rule_add(b->ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) < 0)
		return ab_fail(b->e, EINVAL, "seccomp rule for openat2");
	return 0;
}

/* Under an outer listener (deny_action is plain EPERM) the outer supervisor already decides
 * about uncounted memory: these calls stay allowed here. */
static int ask_uncounted_memory(struct builder *b)
{
	for (size_t i = 0; b->deny_action == SCMP_ACT_NOTIFY && uncounted_memory[i]; i++) {
		const char *name = uncounted_memory[i];
		if ((strcmp(name, "mmap")
			 ? deny(b, name)
			 : deny_if(b, name,
				   SCMP_A3(SCMP_CMP_MASKED_EQ, SHARED_ANON, SHARED_ANON))) < 0)
			return -1;
	}
	return 0;
}

bool seccomp_uncounted_memory(const char *name)
{
	return in_list(uncounted_memory, name);
}

static int allow_if(struct builder *b, const char *name, unsigned n, const struct scmp_arg_cmp *cmp)
{
	int rc = seccomp_rule_add_array(b->ctx, SCMP_ACT_ALLOW, seccomp_syscall_resolve_name(name),
					n, cmp);
	if (rc < 0 && rc != -EEXIST)
		return ab_fail(b->e, -rc, "seccomp rule for %s", name);
	return 0;
}

/* Strict preset: mmap is on the allowlist, but a shared anonymous mapping falls through to the
 * filter's default and so asks the supervisor (as ask_uncounted_memory does for default). */
static int allow_counted_mmap(struct builder *b)
{
	struct scmp_arg_cmp private_ = SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_SHARED, 0);
	struct scmp_arg_cmp file = SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0);

	if (b->deny_action != SCMP_ACT_NOTIFY)
		return allow_if(b, "mmap", 0, NULL);
	return allow_if(b, "mmap", 1, &private_) < 0 ? -1 : allow_if(b, "mmap", 1, &file);
}

static bool user_denied(const struct filter_inputs *in, const char *name)
{
	return strv_has(in->deny, name);
}

/* Strict preset: allowed when the mode has neither bit, or (open) when it creates nothing. */
static int allow_setid_free(struct builder *b, const char *name)
{
	for (size_t i = 0; i < sizeof(setid_modes) / sizeof(setid_modes[0]); i++) {
		const struct mode_arg *m = &setid_modes[i];
		struct scmp_arg_cmp no_bits = masked(m->mode, SETID_BITS, 0);
		struct scmp_arg_cmp no_create = masked(m->flags, O_CREAT | __O_TMPFILE, 0);
		if (strcmp(m->name, name))
			continue;
		if (allow_if(b, name, 1, &no_bits) < 0 ||
		    (m->flags >= 0 && allow_if(b, name, 1, &no_create) < 0))
			return -1;
	}
	return 0;
}

/* Allowlist: the filter's default is to notify (answered ENOSYS). */
static int build_strict(struct builder *b)
{
	unsigned long any_ns = 0;
	static const int families[] = {AF_UNIX, AF_INET, AF_INET6};
	size_t n_families = b->no_inet ? 1 : 3;

	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++)
		any_ns |= ns_flags[i];
	/* the profile's allow list extends the allowlist */
	for (size_t i = 0; i < b->in->allow->n; i++)
		if (!user_denied(b->in, b->in->allow->v[i]) &&
		    allow_if(b, b->in->allow->v[i], 0, NULL) < 0)
			return -1;
	for (size_t i = 0; strict_allow[i][0]; i++) {
		const char *name = strict_allow[i];
		if (user_denied(b->in, name) || !syscall_name_known(name))
			continue;
		if (!strcmp(name, "clone")) {
			/* no namespace flag at all: one masked compare */
			struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, any_ns, 0);
			if (allow_if(b, name, 1, &c) < 0)
				return -1;
			continue;
		}
		if (seccomp_mode_filtered(name)) {
			if (allow_setid_free(b, name) < 0)
				return -1;
			continue;
		}
		if (!strcmp(name, "mmap")) {
			if (allow_counted_mmap(b) < 0)
				return -1;
			continue;
		}
		if (allow_if(b, name, 0, NULL) < 0)
			return -1;
	}
	for (size_t i = 0; i < n_families; i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i], 0);
		if (allow_if(b, "socket", 1, &c) < 0)
			return -1;
	}
	{
		struct scmp_arg_cmp c[] = {SCMP_A0(SCMP_CMP_EQ, AF_NETLINK, 0),
					   SCMP_A2(SCMP_CMP_EQ, 0, 0)};
		struct scmp_arg_cmp q = SCMP_A0(SCMP_CMP_EQ, 0xffffffffu, 0);
		struct scmp_arg_cmp linux_ = SCMP_A0(SCMP_CMP_EQ, 0, 0);
		if (allow_if(b, "socket", 2, c) < 0 || allow_if(b, "personality", 1, &q) < 0 ||
		    allow_if(b, "personality", 1, &linux_) < 0)
			return -1;
	}
	/* memfd_create asks the supervisor (uncounted_memory); with no listener, it is allowed */
	if (b->deny_action != SCMP_ACT_NOTIFY && allow_if(b, "memfd_create", 0, NULL) < 0)
		return -1;
	/* clone3: ENOSYS without notification, as in the default preset */
	if (seccomp_rule_add(b->ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0)
		return ab_fail(b->e, EINVAL, "seccomp rule for clone3");
	return refuse_openat2(b);
}

static int build_default(struct builder *b)
{
	for (size_t i = 0; default_deny[i][0]; i++)
		if (deny(b, default_deny[i]) < 0)
			return -1;
	if (deny_namespaces(b) < 0 || deny_sockets(b) < 0 || deny_misc(b) < 0 ||
	    deny_setid_modes(b) < 0 || refuse_openat2(b) < 0 || ask_uncounted_memory(b) < 0)
		return -1;
	return 0;
}

/* The filter's rules in a new context (NULL on error); notify selects named violations (a
 * listener) over plain errno. */
scmp_filter_ctx build(const struct policy *p, bool no_inet, bool notify, struct ab_err *e)
{
	const struct filter_inputs in = filter_inputs(p);
	bool strict = in.preset == SECCOMP_PRESET_STRICT;
	uint32_t deny_action = notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
	struct builder b = {NULL, &in, e, deny_action, no_inet};

	b.ctx = seccomp_init(strict ? (notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(ENOSYS))
				    : SCMP_ACT_ALLOW);
	if (!b.ctx) {
		ab_fail(e, ENOMEM, "seccomp_init");
		return NULL;
	}
	/* only the native ABI: x32 numbers and the int 0x80 entry kill the process */
	if (seccomp_attr_set(b.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0) {
		ab_fail(e, EINVAL, "seccomp: bad-arch action");
		goto fail;
	}
	/* a binary tree on the syscall number: an allowed call passes a few comparisons, not
	 * every rule (an optimisation only; older libseccomp keeps the linear chain) */
	(void)seccomp_attr_set(b.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (!strict && in.preset == SECCOMP_PRESET_DEFAULT && build_default(&b) < 0)
		goto fail;
	if (strict && build_strict(&b) < 0)
		goto fail;
	/* under strict, a denied name is simply left off the allowlist */
	for (size_t i = 0; !strict && i < in.deny->n; i++)
		if (deny(&b, in.deny->v[i]) < 0)
			goto fail;
	if (!strict && no_inet &&
	    (deny_if(&b, "socket", SCMP_A0(SCMP_CMP_EQ, AF_INET, 0)) < 0 ||
	     deny_if(&b, "socket", SCMP_A0(SCMP_CMP_EQ, AF_INET6, 0)) < 0))
		goto fail;
	return b.ctx;
fail:
	seccomp_release(b.ctx);
	return NULL;
}

/* The inputs the build-time program was compiled for (tools/seccomp_precompile.c): the default
 * preset with nothing added or removed, no nesting. */
bool seccomp_precompiled_fits(const struct policy *p)
{
	const struct filter_inputs in = filter_inputs(p);

	return in.preset == SECCOMP_PRESET_DEFAULT && in.allow->n == 0 && in.deny->n == 0 &&
	       !in.nesting;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [seccomp]: the preset, the system calls denied or allowed on top, the action. */
#include "policy_parse.h"

#include <string.h>

#include "syscall_names.h"

static int syscall_name(const struct setting *s, const char *item, struct strv *sv,
			struct ab_err *e)
{
	if (!syscall_name_known(item))
		return ab_fail(e, 0, "unknown system call '%s'", item),
		       ab_hint(e, "check the name in syscalls(2)"), policy_at_error(&s->at, e);
	return policy_push_item(sv, item, e);
}

static int on_sc_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return syscall_name(s, v, &s->p->seccomp_deny, e);
}
static int on_sc_allow(const struct setting *s, const char *v, struct ab_err *e)
{
	return syscall_name(s, v, &s->p->seccomp_allow, e);
}

static int on_preset(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"default", "strict", "none", NULL};
	int i;
	if (policy_choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->seccomp_preset = (enum seccomp_preset)i;
	return 0;
}

static int on_sc_action(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"errno", "kill", NULL};
	int i;
	if (policy_choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->seccomp_action = (enum seccomp_action)i;
	return 0;
}

static const struct key_spec keys[] = {
    {"seccomp", "preset", SINGLE, on_preset},
    {"seccomp", "deny", LIST, on_sc_deny},
    {"seccomp", "allow", LIST, on_sc_allow},
    {"seccomp", "action", SINGLE, on_sc_action},
};
const struct key_table policy_seccomp_keys = {keys, sizeof(keys) / sizeof(keys[0])};

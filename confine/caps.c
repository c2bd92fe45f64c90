/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "caps.h"

#include <errno.h>
#include <stdbool.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>

/* One prctl per capability: the kernel's EINVAL past its last one ends the loop. */
static int drop_bounding(struct ab_err *e)
{
	for (int cap = 0;; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL && cap > CAP_SETFCAP)
			return 0;
		return ab_fail(e, errno, "cannot drop capability %d from the bounding set", cap);
	}
}

static bool has_setpcap(void)
{
	cap_t cur = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (cur) {
		cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &v);
		cap_free(cur);
	}
	return v == CAP_SET;
}

int caps_drop(struct ab_err *e)
{
	const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
				   SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	cap_t none;
	int rc;

	/* without CAP_SETPCAP (an ordinary user with no user namespace: fallback mode) there is
	 * no capability to drop, and no_new_privs keeps file capabilities from adding any */
	if (has_setpcap()) {
		if (drop_bounding(e) < 0)
			return -1;
		if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
			return ab_fail(e, errno, "cannot lock securebits");
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return ab_fail(e, errno, "cannot clear ambient capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ab_fail(e, errno, "cannot set no_new_privs");
	if (!(none = cap_init()))
		return ab_fail(e, errno, "cap_init");
	rc = cap_set_proc(none);
	cap_free(none);
	if (rc < 0)
		return ab_fail(e, errno, "cannot clear capabilities");
	return 0;
}

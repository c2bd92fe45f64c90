/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What the host allows about user namespaces, and what to tell the user when it does not. */
#ifndef AGENTBOX_USERNS_H
#define AGENTBOX_USERNS_H

#include <stdbool.h>

#include "error.h"

/* Can the sandbox's namespaces be built here: a user namespace with mount rights, a fresh
 * procfs and a host name of its own? (forks a probe) */
bool userns_usable(void);
/* Fills e for a clone that failed with err: why, and how to allow user namespaces. */
int userns_diagnose(int err, struct ab_err *e);
/* pid 1 got EPERM in its own namespace: when AppArmor restricts user namespaces, says so. */
void userns_apparmor_hint(struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Capabilities and privilege: everything dropped, no way back. */
#ifndef AGENTBOX_CAPS_H
#define AGENTBOX_CAPS_H

#include "error.h"

/* Drops every capability from every set (bounding, ambient, inheritable, permitted, effective),
 * locks the securebits so uid 0 and setuid binaries gain nothing, and sets no_new_privs. */
int caps_drop(struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Resource limits from [limits] as rlimits (the wall-clock timeout is the supervisor's). */
#ifndef AGENTBOX_RLIMITS_H
#define AGENTBOX_RLIMITS_H

#include "error.h"
#include "policy.h"

/* Lowers this process's rlimits (inherited by the command); core dumps are always off. */
int limits_apply(const struct limits *l, struct ab_err *e);

#endif

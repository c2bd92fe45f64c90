/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Where credentials' real values come from (credential_source.c): env:NAME, file:PATH
 * (owner-only), cmd:PROGRAM ARGS (run without a shell). Read in the supervisor after the
 * clone, so pid 1 (a copy of the supervisor) never holds a value it did not already have in its
 * environment, and that environment's copy is wiped in pid 1 first thing. */
#ifndef AGENTBOX_CREDENTIAL_SOURCE_H
#define AGENTBOX_CREDENTIAL_SOURCE_H

#include "credential.h"
#include "env.h"
#include "error.h"
#include "policy.h"

struct audit;

/* Before the clone: the placeholders (*out, NULL without credentials); each source checked as
 * far as it can be without reading a file or running a command (a variable set and not empty,
 * a file owned by the caller and not readable by group or others); the command's environment
 * given each credential's placeholder in its env variable, and rid of every variable that
 * holds an env: source's value (each such variable, when no credential names it, gets the
 * placeholder too). Errors name the credential and the fix. */
int creds_prepare(const struct policy *p, struct creds **out, struct env_result *env,
		  struct ab_err *e);

/* After the clone, in the supervisor: the real values read, each also given to the audit
 * trail's redaction; a value found in the command's environment (env) stops the run. */
int creds_read(struct creds *cs, const struct env_result *env, struct audit *a, struct ab_err *e);

/* Pid 1, first thing: wipes, in its copy of the caller's environment, the values of the env:
 * sources (what /proc/1/environ shows). */
void creds_scrub_environ(const struct policy *p);

#endif

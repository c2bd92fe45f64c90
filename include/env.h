/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The command's environment: starts empty; [env] pass copies matching variables from the caller,
 * deny globs win over pass, set adds values, and safe defaults fill the rest. */
#ifndef AGENTBOX_ENV_H
#define AGENTBOX_ENV_H

#include "error.h"
#include "policy.h"

struct env_result {
	struct strv vars;   /* NAME=VALUE, ready for exec */
	struct strv passed; /* names copied from the caller */
	struct strv denied; /* names a pass glob matched but a deny glob refused */
	/* names [env] pass writes out (no glob) that a deny pattern (a glob) refused anyway, and
	 * that pattern, index for index: said on stderr and in the trail, never silently */
	struct strv overruled, overruled_by;
};

/* home: what HOME becomes when the profile does not set it. */
int env_build(const struct policy *p, char *const *caller, const char *home, const char *run_id,
	      struct env_result *out, struct ab_err *e);
void env_result_free(struct env_result *r);
/* Sets NAME=VALUE in an environment already built, replacing an earlier value. */
int env_override(struct env_result *r, const char *name, const char *value);
/* A copy of vars (NAME=VALUE entries) with each NAME=VALUE of over set in it, replacing an
 * earlier value (a session's exec: the session's environment and the request's). 0 or -1. */
int env_overlaid(const struct strv *vars, const struct strv *over, struct strv *out);
/* NAME's value in an environment built, or NULL when it is unset. */
const char *env_get(const struct env_result *r, const char *name);
/* Adds VALUE at the end of NAME's value, after a space (NAME=VALUE when it is unset or empty):
 * for a variable that holds a list of options, such as JAVA_TOOL_OPTIONS. */
int env_append(struct env_result *r, const char *name, const char *value);

#endif

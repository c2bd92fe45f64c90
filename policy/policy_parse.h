/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Internal to the policy files, not an interface for anything else (the rest of agentbox
 * sees policy.h): how one key of a profile becomes a field of struct policy. policy_load.c
 * reads the files and hands each key to its section's table; policy_SECTION.c holds a
 * section's keys and their handlers; policy_parse.c the value helpers they share. */
#ifndef AGENTBOX_POLICY_PARSE_H
#define AGENTBOX_POLICY_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "policy.h"
#include "strv.h"

/* What a key handler gets: the setting's origin and the file's directory. */
struct setting {
	struct policy *p;
	struct origin at;
	const char *profile_dir;
	const char *section, *key;
};

typedef int (*item_fn)(const struct setting *s, const char *item, struct ab_err *e);

/* ----- the key tables: the public names of the profile format ----- */

enum value_shape {
	LIST,	/* comma-separated, each item expanded */
	SINGLE, /* handler takes the raw value (expands itself) */
};

struct key_spec {
	const char *section, *key;
	enum value_shape shape;
	item_fn fn;
};

/* One section's keys, defined next to their handlers in policy_SECTION.c. */
struct key_table {
	const struct key_spec *v;
	size_t n;
};
extern const struct key_table policy_sandbox_keys, policy_fs_keys, policy_net_keys,
    policy_limits_keys, policy_seccomp_keys, policy_env_keys, policy_audit_keys, policy_http_keys;

/* [credential NAME] sections (policy_credentials.c): whether section is one (a valid name),
 * its keys, and the checks once every file is read (policy_finish). */
bool policy_credential_section(const char *section);
int policy_credential_key(const struct setting *s, const char *value, struct ab_err *e);
int policy_credentials_finish(struct policy *p, struct ab_err *e);

/* "out of memory" (ENOMEM). Returns -1, as every helper here does on an error. */
int policy_oom(struct ab_err *e);
/* Prefixes e with where the setting was written: FILE:LINE, or the option's name. */
int policy_at_error(const struct origin *at, struct ab_err *e);
/* Records that s's key was set at s->at (the last setting of a key wins); -1 out of memory. */
int policy_note_key(const struct setting *s, struct ab_err *e);
/* Records that s's key took item at s->at; -1 out of memory. */
int policy_note_item(const struct setting *s, const char *item, struct ab_err *e);
/* Where item of key ("section.key") was first written, or NULL. */
const struct origin *policy_item_at(const struct policy *p, const char *key, const char *item);
/* Where key ("section.key") was last set, or NULL. */
const struct origin *policy_key_at(const struct policy *p, const char *key);
/* Prefixes e with where the first of keys ("section.key", NULL-terminated) that was set was
 * last set; unchanged when none was. Returns -1. */
int policy_key_error(const struct policy *p, const char *const *keys, struct ab_err *e);

/* Scalars: "set twice in one file" is an error, a later layer overrides. */
int policy_claim_scalar(const struct setting *s, struct ab_err *e);
int policy_set_string(const struct setting *s, char **field, const char *v, struct ab_err *e);
/* v must be one of names (NULL-terminated); *out is its index. */
int policy_choose(const struct setting *s, const char *v, const char *const *names, int *out,
		  struct ab_err *e);
/* A scalar path: variables expanded, normalised, absolute. */
int policy_set_path(const struct setting *s, const char *value, char **field, struct ab_err *e);
/* A key handler fn for the limit at member (a path into struct policy) read by parser. */
#define POLICY_LIMIT_HANDLER(fn, member, parser)                                                   \
	static int fn(const struct setting *s, const char *v, struct ab_err *e)                    \
	{                                                                                          \
		return policy_set_limit(s, v, &s->p->member, parser, e);                           \
	}
/* A limit: parsed by parse (units.h), 0 rejected (omit the key instead). */
int policy_set_limit(const struct setting *s, const char *value, uint64_t *field,
		     int (*parse)(const char *, uint64_t *, struct ab_err *), struct ab_err *e);

/* value with its variables expanded (malloc'd); an empty value is an error. */
int policy_expand_one(const struct setting *s, const char *value, char **out, struct ab_err *e);
/* Adds item to sv unless it is there already: lists are sets. */
int policy_push_item(struct strv *sv, const char *item, struct ab_err *e);
/* policy_http.c: one `METHOD HOST/PATH-GLOB` rule (deny or allow), expanded, parsed by the
 * rules' own parser and appended to rs; named_host: its host may not be `*` (a credential's
 * rules). Errors carry the setting's FILE:LINE. */
int policy_http_rule(const struct setting *s, const char *v, bool deny, bool named_host,
		     struct http_rules *rs, struct ab_err *e);

/* policy_rules.c: completes p->net and each credential's rules with what they imply (the
 * connections an [http] allow rule or a credential's host needs, a credential's rules when it
 * names none). Once, from policy_finish. */
int policy_rules_finish(struct policy *p, struct ab_err *e);

#endif

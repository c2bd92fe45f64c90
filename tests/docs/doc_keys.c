/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Prints every key the profile parser knows, one "SECTION KEY" a line, for the docs check
 * (tests/docs/check-docs.sh): the key tables of the policy files as the binary has them, the
 * loader's own [sandbox] include, and the keys of a [credential NAME] section. Those have no
 * table: the parser's hint for an unknown key lists them, and each one listed is tried, so
 * that a list that names a key the parser lacks fails here rather than passing into the docs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_parse.h"

static const struct key_table *const tables[] = {
    &policy_sandbox_keys, &policy_fs_keys,  &policy_net_keys,	&policy_limits_keys,
    &policy_seccomp_keys, &policy_env_keys, &policy_audit_keys, &policy_http_keys,
};

#define CRED_SECTION "credential probe"
#define CRED_LIST_START "a credential's keys are "

static int try_credential_key(struct policy *p, const char *key, struct ab_err *e)
{
	struct setting s = {p, {"doc_keys", 1, 0}, "/", CRED_SECTION, key};

	memset(e, 0, sizeof(*e));
	return policy_credential_key(&s, "", e);
}

/* "source, hosts, ..., add and on-leak (docs/...)": each name, checked and printed. */
static int print_credential_keys(struct policy *p)
{
	char list[AB_ERR_MAX], *save = NULL;
	const char *start, *end;
	struct ab_err e;
	int n = 0;

	if (try_credential_key(p, "no-such-key", &e) == 0 ||
	    !(start = strstr(e.msg, CRED_LIST_START))) {
		printf("doc_keys: an unknown credential key gave no list of keys: %s\n", e.msg);
		return -1;
	}
	start += strlen(CRED_LIST_START);
	end = strchr(start, '(');
	if (!end || (size_t)(end - start) >= sizeof(list)) {
		printf("doc_keys: cannot read the credential keys from: %s\n", e.msg);
		return -1;
	}
	memcpy(list, start, (size_t)(end - start));
	list[end - start] = '\0';
	for (char *w = strtok_r(list, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
		if (!strcmp(w, "and"))
			continue;
		if (try_credential_key(p, w, &e) < 0 && strstr(e.msg, "unknown key")) {
			printf(
			    "doc_keys: the credential hint lists '%s', which the parser refuses\n",
			    w);
			return -1;
		}
		printf("credential %s\n", w);
		n++;
	}
	return n > 0 ? 0 : -1;
}

int main(void)
{
	struct policy_vars vars = {"/root", "/", "root", "0", "/tmp"};
	struct policy *p = policy_new(&vars);
	int rc;

	if (!p)
		return 1;
	printf("sandbox include\n");
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (size_t i = 0; i < tables[t]->n; i++)
			printf("%s %s\n", tables[t]->v[i].section, tables[t]->v[i].key);
	rc = print_credential_keys(p);
	policy_free(p);
	return rc < 0 || fflush(stdout) != 0 ? 1 : 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [credential NAME]: one section per secret agentbox keeps outside and adds at the proxy
 * (credential.c). The section's name is part of its header, so this file, not a key table,
 * takes the keys of every `[credential ...]` section (policy_load.c hands them over). */
#include "policy_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_rules.h"
#include "run_dir.h"

#define CRED_SECTION "credential "
#define CRED_MAX_NAME 32
#define CRED_MAX_COUNT 16
/* prefix + at least 20 random base62 characters (119 bits); at most what a header carries */
#define CRED_MIN_RANDOM 20
#define CRED_MAX_LENGTH 128
/* a token file (.npmrc, hosts.yml) is a few lines */
#define CRED_MAX_FILE 4096

static const char *section_name(const char *section)
{
	return strncmp(section, CRED_SECTION, strlen(CRED_SECTION))
		   ? NULL
		   : section + strlen(CRED_SECTION);
}

static bool name_ok(const char *n)
{
	size_t len = strlen(n);

	if (!len || len > CRED_MAX_NAME)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)n[i]) && n[i] != '-' && n[i] != '_')
			return false;
	return true;
}

bool policy_credential_section(const char *section)
{
	const char *n = section_name(section);
	return n && name_ok(n);
}

void policy_credential_free(struct policy_credential *c)
{
	free(c->name);
	free(c->source);
	egress_rule_list_free(&c->hosts);
	http_rules_free(&c->rules);
	free(c->header_name);
	free(c->template);
	free(c->env);
	free(c->prefix);
	free(c->file);
	free(c->file_env);
	memset(c, 0, sizeof(*c));
}

static struct policy_credential *find_or_add(const struct setting *s, struct ab_err *e)
{
	struct policy *p = s->p;
	const char *name = section_name(s->section);
	struct policy_credential *nv;

	for (size_t i = 0; i < p->n_creds; i++)
		if (!strcmp(p->creds[i].name, name))
			return &p->creds[i];
	if (p->n_creds == CRED_MAX_COUNT) {
		ab_fail(e, 0, "more than %d credentials", CRED_MAX_COUNT);
		policy_at_error(&s->at, e);
		return NULL;
	}
	nv = realloc(p->creds, (p->n_creds + 1) * sizeof(*nv));
	if (!nv)
		return policy_oom(e), NULL;
	p->creds = nv;
	memset(&nv[p->n_creds], 0, sizeof(*nv));
	nv[p->n_creds].at = s->at;
	if (!(nv[p->n_creds].name = strdup(name)))
		return policy_oom(e), NULL;
	return &nv[p->n_creds++];
}

static int bad(const struct setting *s, struct ab_err *e, const char *what, const char *fix)
{
	ab_fail(e, 0, "[%s] %s: %s", s->section, s->key, what);
	ab_hint(e, "%s", fix);
	return policy_at_error(&s->at, e);
}

static int on_source(const struct setting *s, struct policy_credential *c, const char *v,
		     struct ab_err *e)
{
	char *x;

	if (policy_expand_one(s, v, &x, e) < 0)
		return -1;
	if (!strncmp(x, "env:", 4) && x[4]) {
		for (const char *q = x + 4; *q; q++)
			if (!isalnum((unsigned char)*q) && *q != '_') {
				free(x);
				return bad(s, e, "not a variable name",
					   "write env:NAME, e.g. env:OPENAI_API_KEY");
			}
	} else if (!strncmp(x, "file:", 5) && x[5]) {
		char *norm;
		if (x[5] != '/') {
			free(x);
			return bad(s, e, "the file is not an absolute path",
				   "write file:/PATH or file:~/PATH");
		}
		if (path_normalize(x + 5, &norm, e) < 0) {
			free(x);
			return policy_at_error(&s->at, e);
		}
		free(x);
		x = malloc(strlen(norm) + 6);
		if (x)
			strcpy(x, "file:"), strcat(x, norm);
		free(norm);
		if (!x)
			return policy_oom(e);
	} else if (!(!strncmp(x, "cmd:", 4) && x[4 + strspn(x + 4, " \t")])) {
		free(x);
		return bad(s, e, "unknown source",
			   "write env:NAME, file:/PATH (owner-only) or cmd:PROGRAM ARGS "
			   "(e.g. cmd:gh auth token)");
	}
	if (policy_claim_scalar(s, e) < 0) {
		free(x);
		return -1;
	}
	free(c->source);
	c->source = x;
	c->source_kind = x[0] == 'e'   ? CRED_SOURCE_ENV
			 : x[0] == 'f' ? CRED_SOURCE_FILE
				       : CRED_SOURCE_CMD;
	c->source_arg = x + (c->source_kind == CRED_SOURCE_FILE ? 5 : 4);
	return 0;
}

static int on_hosts(const struct setting *s, struct policy_credential *c, const char *v,
		    struct ab_err *e)
{
	char *x, *save = NULL;
	int r = 0;

	if (policy_expand_one(s, v, &x, e) < 0)
		return -1;
	for (char *tok = strtok_r(x, ", \t", &save); r == 0 && tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		struct egress_rule er;
		if (egress_rule_parse(tok, &er, e) < 0) { /* its own words: a URL, a path... */
			r = policy_at_error(&s->at, e);
			break;
		}
		if ((er.kind != RULE_HOST && er.kind != RULE_SUBDOMAINS) || er.port) {
			ab_fail(e, 0, "'%s' is not a host name%s", tok,
				er.port ? " alone: it has a port" : "");
			ab_hint(e, "name hosts without a port: api.example.com or *.example.com");
			r = policy_at_error(&s->at, e);
			break;
		}
		if (!strv_has(&c->hosts.text, tok) && egress_rule_list_add(&c->hosts, &er, tok) < 0)
			r = policy_oom(e);
		else
			r = policy_note_item(s, tok, e);
	}
	free(x);
	return r;
}

static int set_place(const struct setting *s, struct policy_credential *c, enum cred_place place,
		     const char *header, const char *tmpl, struct ab_err *e)
{
	if (c->place != CRED_PLACE_NONE && c->at.layer == s->at.layer)
		return bad(s, e, "a credential is sent one way",
			   "keep one of header, basic and query");
	if (policy_claim_scalar(s, e) < 0)
		return -1;
	free(c->header_name);
	free(c->template);
	c->header_name = header ? strdup(header) : NULL;
	c->template = strdup(tmpl);
	if ((header && !c->header_name) || !c->template)
		return policy_oom(e);
	c->place = place;
	return 0;
}

static bool token_chars(const char *v, size_t n, const char *extra)
{
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr(extra, v[i]))
			return false;
	return true;
}

static int on_header(const struct setting *s, struct policy_credential *c, const char *v,
		     struct ab_err *e)
{
	const char *colon = strchr(v, ':'), *t, *hole;
	char name[64];

	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(name) ||
	    !token_chars(v, (size_t)(colon - v), "!#$%&'*+-.^_`|~"))
		return bad(s, e, "not a header template",
			   "write NAME: VALUE with {} where the secret goes, e.g. "
			   "Authorization: Bearer {}");
	t = colon + 1 + strspn(colon + 1, " \t");
	hole = strstr(t, "{}");
	if (!hole || strstr(hole + 2, "{}") || strpbrk(t, "\r\n"))
		return bad(s, e, "the value must hold {} once",
			   "write e.g. Authorization: Bearer {} or x-api-key: {}");
	memcpy(name, v, (size_t)(colon - v));
	name[colon - v] = '\0';
	return set_place(s, c, CRED_PLACE_HEADER, name, t, e);
}

static int on_basic(const struct setting *s, struct policy_credential *c, const char *v,
		    struct ab_err *e)
{
	const char *colon = strchr(v, ':');

	if (!colon || strcmp(colon + 1, "{}") || memchr(v, '{', (size_t)(colon - v)))
		return bad(s, e, "not USER:{}",
			   "write the user name, a colon and {} for the secret, e.g. "
			   "x-access-token:{}");
	return set_place(s, c, CRED_PLACE_BASIC, "Authorization", v, e);
}

static int on_query(const struct setting *s, struct policy_credential *c, const char *v,
		    struct ab_err *e)
{
	if (!*v || !token_chars(v, strlen(v), "-._~"))
		return bad(s, e, "not a query parameter name", "write e.g. query = api_key");
	return set_place(s, c, CRED_PLACE_QUERY, NULL, v, e);
}

/* env and file-env: a variable name into *field */
static int on_var(const struct setting *s, char **field, const char *v, const char *example,
		  struct ab_err *e)
{
	char fix[64];

	snprintf(fix, sizeof(fix), "write e.g. %s = %s", s->key, example);
	if (!*v || isdigit((unsigned char)*v) || !token_chars(v, strlen(v), "_"))
		return bad(s, e, "not a variable name", fix);
	return policy_set_string(s, field, v, e);
}

/* The file's text as one INI value: \n a line break, \t a tab, \\ a backslash; {} (at
 * least once) the placeholder. */
static int on_file(const struct setting *s, struct policy_credential *c, const char *v,
		   struct ab_err *e)
{
	size_t n = strlen(v), k = 0;
	char *text;

	if (!strstr(v, "{}"))
		return bad(s, e, "the text must hold {} where the placeholder goes",
			   "write e.g. file = //registry.npmjs.org/:_authToken={}");
	if (n > CRED_MAX_FILE)
		return bad(s, e, "longer than 4096 bytes", "a token file is a few lines");
	if (policy_claim_scalar(s, e) < 0)
		return -1;
	if (!(text = malloc(n + 2)))
		return policy_oom(e);
	for (size_t i = 0; i < n; i++) {
		if (v[i] != '\\') {
			text[k++] = v[i];
			continue;
		}
		switch (v[++i]) {
		case 'n':
			text[k++] = '\n';
			break;
		case 't':
			text[k++] = '\t';
			break;
		case '\\':
			text[k++] = '\\';
			break;
		default:
			free(text);
			return bad(s, e, "an unknown escape", "use \\n, \\t or \\\\");
		}
	}
	/* a text file ends with a line break */
	if (!k || text[k - 1] != '\n')
		text[k++] = '\n';
	text[k] = '\0';
	free(c->file);
	c->file = text;
	return 0;
}

static int on_prefix(const struct setting *s, struct policy_credential *c, const char *v,
		     struct ab_err *e)
{
	if (!*v || strlen(v) > 32 || !token_chars(v, strlen(v), "-_"))
		return bad(s, e, "not a placeholder prefix",
			   "up to 32 letters, digits, - and _, e.g. sk- or ghp_");
	return policy_set_string(s, &c->prefix, v, e);
}

static int on_length(const struct setting *s, struct policy_credential *c, const char *v,
		     struct ab_err *e)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!isdigit((unsigned char)*v) || *end || n > CRED_MAX_LENGTH)
		return bad(s, e, "not a length", "a number of characters, at most 128");
	if (policy_claim_scalar(s, e) < 0)
		return -1;
	c->length = n;
	return 0;
}

static int on_flag(const struct setting *s, const char *v, const char *const *names, int *out,
		   struct ab_err *e)
{
	return policy_choose(s, v, names, out, e); /* it claims the scalar */
}

int cred_file_path(const struct policy_credential *pc, char *out, size_t size)
{
	int n = snprintf(out, size, "%s/" CRED_FILE_PREFIX "%s", AGENTBOX_RUN_DIR, pc->name);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int policy_credential_key(const struct setting *s, const char *v, struct ab_err *e)
{
	struct policy_credential *c = find_or_add(s, e);
	static const char *const yes_no[] = {"no", "yes", NULL};
	static const char *const leak[] = {"deny", "stop", NULL};
	int flag;

	if (!c)
		return -1;
	if (!strcmp(s->key, "source"))
		return on_source(s, c, v, e);
	if (!strcmp(s->key, "hosts"))
		return on_hosts(s, c, v, e);
	if (!strcmp(s->key, "rules"))
		return policy_http_rule(s, v, false, true, &c->rules, e);
	if (!strcmp(s->key, "header"))
		return on_header(s, c, v, e);
	if (!strcmp(s->key, "basic"))
		return on_basic(s, c, v, e);
	if (!strcmp(s->key, "query"))
		return on_query(s, c, v, e);
	if (!strcmp(s->key, "env"))
		return on_var(s, &c->env, v, "OPENAI_API_KEY", e);
	if (!strcmp(s->key, "prefix"))
		return on_prefix(s, c, v, e);
	if (!strcmp(s->key, "file"))
		return on_file(s, c, v, e);
	if (!strcmp(s->key, "file-env"))
		return on_var(s, &c->file_env, v, "NPM_CONFIG_USERCONFIG", e);
	if (!strcmp(s->key, "length"))
		return on_length(s, c, v, e);
	if (!strcmp(s->key, "add")) {
		if (on_flag(s, v, yes_no, &flag, e) < 0)
			return -1;
		c->add = flag == 1;
		return 0;
	}
	if (!strcmp(s->key, "on-leak")) {
		if (on_flag(s, v, leak, &flag, e) < 0)
			return -1;
		c->stop = flag == 1;
		return 0;
	}
	ab_fail(e, 0, "unknown key '%s' in [%s]", s->key, s->section);
	ab_hint(e, "a credential's keys are source, hosts, rules, header, basic, query, env, "
		   "file, file-env, prefix, length, add and on-leak (docs/profile.md, "
		   "Credentials)");
	return policy_at_error(&s->at, e);
}

/* A rule's host must be one of the credential's: the rules narrow the hosts, never widen. */
static bool rule_within_hosts(const struct policy_credential *c, const struct http_rule *rule)
{
	for (size_t i = 0; i < c->hosts.text.n; i++)
		if (egress_rule_covers(&c->hosts.v[i], &rule->host))
			return true;
	return false;
}

/* The source file is the secret: never shown inside, whatever tree holds it. */
static int hide_source(struct policy *p, const struct policy_credential *c, struct ab_err *e)
{
	const char *path = c->source_arg;
	struct fs_entry *nf;

	for (size_t i = 0; i < p->n_fs; i++) {
		if (strcmp(p->fs[i].path, path))
			continue;
		p->fs[i].kind = FS_HIDE;
		p->fs[i].optional = false;
		return 0;
	}
	nf = realloc(p->fs, (p->n_fs + 1) * sizeof(*nf));
	if (!nf)
		return policy_oom(e);
	p->fs = nf;
	memset(&nf[p->n_fs], 0, sizeof(*nf));
	nf[p->n_fs].kind = FS_HIDE;
	nf[p->n_fs].at = c->at;
	if (!(nf[p->n_fs].path = strdup(path)))
		return policy_oom(e);
	p->n_fs++;
	return 0;
}

static int finish_one(struct policy *p, struct policy_credential *c, struct ab_err *e)
{
	size_t pre = c->prefix ? strlen(c->prefix) : 0;

	if (!c->source)
		return ab_fail(e, 0, "[credential %s] has no source", c->name),
		       ab_hint(e, "add source = env:NAME, file:/PATH or cmd:PROGRAM ARGS");
	if (!c->hosts.text.n)
		return ab_fail(e, 0, "[credential %s] names no hosts", c->name),
		       ab_hint(e, "add hosts = the API's host names, e.g. api.openai.com");
	if (c->place == CRED_PLACE_NONE)
		return ab_fail(e, 0, "[credential %s] does not say how it is sent", c->name),
		       ab_hint(e, "add header = Authorization: Bearer {}, basic = USER:{} or "
				  "query = NAME");
	if (!c->env && !c->file && !c->add)
		return ab_fail(e, 0, "[credential %s] reaches the command in no way", c->name),
		       ab_hint(e, "add env = VARIABLE (the command sees the placeholder there), "
				  "file = TEXT (a file holding it), or add = yes");
	if (c->env && c->file_env && !strcmp(c->env, c->file_env))
		return ab_fail(e, 0, "[credential %s]: env and file-env name one variable",
			       c->name),
		       ab_hint(e, "env holds the placeholder, file-env the file's path: use two "
				  "names");
	if (c->file_env && !c->file)
		return ab_fail(e, 0, "[credential %s] has file-env but no file", c->name),
		       ab_hint(e, "add file = the file's text, with {} for the placeholder");
	if (c->add && c->place == CRED_PLACE_QUERY)
		return ab_fail(e, 0, "[credential %s]: add = yes works with header and basic",
			       c->name),
		       ab_hint(e, "drop add, or send it in a header");
	if (c->length && c->length < pre + CRED_MIN_RANDOM)
		return ab_fail(e, 0,
			       "[credential %s] length %llu leaves fewer than %d random "
			       "characters",
			       c->name, (unsigned long long)c->length, CRED_MIN_RANDOM),
		       ab_hint(e, "raise length, or drop it (the default is the prefix + 40)");
	if (!c->length)
		c->length = pre + 40;
	if (p->net_mode != NET_PROXY)
		return ab_fail(e, 0, "[credential %s] needs [network] mode = proxy", c->name),
		       ab_hint(e, "set [network] mode = proxy (or --net proxy)");
	for (size_t i = 0; i < c->rules.n; i++)
		if (!rule_within_hosts(c, &c->rules.v[i]))
			return ab_fail(e, 0, "[credential %s] rule '%s' names a host not in hosts",
				       c->name, c->rules.v[i].text),
			       ab_hint(e, "use one of the credential's hosts in its rules");
	for (struct policy_credential *o = p->creds; o < c; o++)
		if (c->env && o->env && !strcmp(o->env, c->env))
			return ab_fail(e, 0, "credentials %s and %s both set %s", o->name, c->name,
				       c->env),
			       ab_hint(e, "give each its own env");
	return c->source_kind == CRED_SOURCE_FILE ? hide_source(p, c, e) : 0;
}

int policy_credentials_finish(struct policy *p, struct ab_err *e)
{
	for (size_t i = 0; i < p->n_creds; i++)
		if (finish_one(p, &p->creds[i], e) < 0)
			return policy_at_error(&p->creds[i].at, e);
	return 0;
}

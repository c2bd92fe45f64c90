/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* --explain: the effective policy as one JSON object, section by section as in a profile. */
#include "policy.h"

#include <limits.h>
#include <stdio.h>

static void json_strv(struct json *j, const char *key, const struct strv *sv)
{
	json_key(j, key);
	json_arr_begin(j);
	for (size_t i = 0; i < sv->n; i++)
		json_str(j, sv->v[i]);
	json_arr_end(j);
}

static void json_limit(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	if (v)
		json_uint(j, v);
	else
		json_null(j);
}

static void explain_fs(const struct policy *p, struct json *j)
{
	json_key(j, "filesystem");
	json_arr_begin(j);
	for (size_t i = 0; i < p->n_fs; i++) {
		const struct fs_entry *f = &p->fs[i];
		char from[PATH_MAX + 32];
		json_obj_begin(j);
		json_kv_str(j, "kind", fs_kind_name(f->kind));
		json_kv_str(j, "path", f->path);
		if (f->target)
			json_kv_str(j, "target", f->target);
		json_kv_bool(j, "optional", f->optional);
		if (f->at.line)
			snprintf(from, sizeof(from), "%s:%u", f->at.file, f->at.line);
		else
			snprintf(from, sizeof(from), "%s", f->at.file);
		json_kv_str(j, "from", from);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_str(j, "changes", p->changes);
	json_strv(j, "protect", &p->protect);
	json_strv(j, "unprotect", &p->unprotect);
}

/* The rules a profile wrote (allow or deny ones), as written, in the order read; the implied
 * ones policy_finish added are not the profile's. */
static void explain_http_rules(struct json *j, const char *key, const struct http_rules *rs,
			       bool deny)
{
	json_key(j, key);
	json_arr_begin(j);
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].deny == deny && !rs->v[i].implied)
			json_str(j, rs->v[i].text);
	json_arr_end(j);
}

/* A credential's rules where they decide a host's requests (no [http] allow rule names it),
 * each with the credential's name; the key only when there are some. */
static void explain_credential_rules(struct json *j, const struct http_rules *rs)
{
	size_t first = 0;

	while (first < rs->n && http_rule_tier(&rs->v[first]) != HTTP_TIER_IMPLIED)
		first++;
	if (first == rs->n)
		return;
	json_key(j, "credential_rules");
	json_arr_begin(j);
	for (size_t i = first; i < rs->n; i++) {
		if (http_rule_tier(&rs->v[i]) != HTTP_TIER_IMPLIED)
			continue;
		json_obj_begin(j);
		json_kv_str(j, "rule", rs->v[i].text);
		json_kv_str(j, "by", rs->v[i].by);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* Bindings and sources, never a value: --explain reads no source. */
static void explain_credentials(const struct policy *p, struct json *j)
{
	static const char *const place[] = {"none", "header", "basic", "query"};
	char path[128];

	json_key(j, "credentials");
	json_arr_begin(j);
	for (size_t i = 0; i < p->n_creds; i++) {
		const struct policy_credential *c = &p->creds[i];
		json_obj_begin(j);
		json_kv_str(j, "name", c->name);
		json_kv_str(j, "source", c->source);
		json_strv(j, "hosts", &c->hosts.text);
		explain_http_rules(j, "rules", &c->rules, false);
		json_kv_str(j, "place", place[c->place]);
		json_kv_str(j, "header", c->place == CRED_PLACE_QUERY ? NULL : c->header_name);
		json_kv_str(j, c->place == CRED_PLACE_QUERY ? "parameter" : "template",
			    c->template);
		json_kv_str(j, "env", c->env);
		if (c->file && cred_file_path(c, path, sizeof(path)) == 0)
			json_kv_str(j, "file", path);
		json_kv_str(j, "file_env", c->file_env);
		json_kv_str(j, "prefix", c->prefix);
		json_kv_uint(j, "length", c->length);
		json_kv_bool(j, "add", c->add);
		json_kv_str(j, "on_leak", c->stop ? "stop" : "deny");
		json_obj_end(j);
	}
	json_arr_end(j);
}

void policy_explain(const struct policy *p, struct json *j)
{
	static const char *const fallback[] = {"none", "landlock"};
	static const char *const action[] = {"errno", "kill"};
	static const char *const failure[] = {"stop", "continue"};
	const struct limits *l = &p->limits;

	json_obj_begin(j);
	json_strv(j, "profiles", &p->profiles);
	json_strv(j, "command", &p->command);
	json_key(j, "sandbox");
	json_obj_begin(j);
	json_kv_str(j, "hostname", p->hostname);
	json_kv_str(j, "workdir", p->workdir ? p->workdir : p->vars.cwd);
	json_kv_str(j, "fallback", fallback[p->fallback]);
	json_kv_bool(j, "nesting", p->nesting);
	json_key(j, "uid");
	if (p->uid >= 0)
		json_int(j, p->uid);
	else
		json_null(j);
	json_key(j, "gid");
	if (p->gid >= 0)
		json_int(j, p->gid);
	else
		json_null(j);
	json_obj_end(j);
	explain_fs(p, j);
	json_key(j, "network");
	json_obj_begin(j);
	json_kv_str(j, "mode", net_mode_name(p->net_mode));
	json_strv(j, "allow", &p->net.allow.text);
	json_strv(j, "deny", &p->net.deny.text);
	json_strv(j, "resolve", &p->net.pins.text);
	json_strv(j, "grantable", &p->net.grantable.text);
	json_kv_uint(j, "ask_timeout_ms",
		     p->net_ask_timeout_ms ? p->net_ask_timeout_ms : POLICY_DEFAULT_ASK_TIMEOUT_MS);
	json_strv(j, "methods", &p->net_methods);
	json_kv_str(j, "capture", (const char *[]){"auto", "on", "off"}[p->net_capture]);
	json_kv_str(j, "ca", p->net_ca);
	json_limit(j, "max_connections", p->net_max_connections);
	json_limit(j, "rate", p->net_rate);
	json_limit(j, "max_bytes_out", p->net_max_bytes_out);
	json_limit(j, "max_bytes_in", p->net_max_bytes_in);
	json_limit(j, "max_connections_per_host", p->net_host_max_connections);
	json_limit(j, "rate_per_host", p->net_host_rate);
	json_limit(j, "max_bytes_out_per_host", p->net_host_max_bytes_out);
	json_limit(j, "max_bytes_in_per_host", p->net_host_max_bytes_in);
	json_obj_end(j);
	json_key(j, "http");
	json_obj_begin(j);
	explain_http_rules(j, "allow", &p->net.http, false);
	explain_http_rules(j, "deny", &p->net.http, true);
	explain_credential_rules(j, &p->net.http);
	explain_http_rules(j, "grantable", &p->net.http_grantable, false);
	json_obj_end(j);
	explain_credentials(p, j);
	json_key(j, "limits");
	json_obj_begin(j);
	json_limit(j, "timeout_ms", l->timeout_ms);
	json_limit(j, "cpu_s", l->cpu_s);
	json_limit(j, "memory", l->memory);
	if (l->memory) /* what the number bounds is not what a reader guesses: say it */
		json_kv_str(
		    j, "memory_is",
		    "the run's memory where a memory cgroup is writable; each process's "
		    "data and stack (RLIMIT_DATA, RLIMIT_STACK), not the address space it "
		    "reserves; without a cgroup, memory those do not count is refused (memfd, "
		    "SysV; shared anonymous past the limit, all processes together)");
	json_limit(j, "processes", l->processes);
	json_limit(j, "open_files", l->open_files);
	json_limit(j, "file_size", l->file_size);
	json_limit(j, "tmpfs_size", l->tmpfs_size);
	json_limit(j, "changes_size", l->changes_size);
	json_limit(j, "disk", l->disk);
	json_limit(j, "session_timeout_ms", l->session_timeout_ms);
	json_limit(j, "idle_timeout_ms", l->idle_timeout_ms);
	json_obj_end(j);
	json_key(j, "seccomp");
	json_obj_begin(j);
	json_kv_str(j, "preset", seccomp_preset_name(p->seccomp_preset));
	json_kv_str(j, "action", action[p->seccomp_action]);
	json_strv(j, "deny", &p->seccomp_deny);
	json_strv(j, "allow", &p->seccomp_allow);
	json_obj_end(j);
	json_key(j, "env");
	json_obj_begin(j);
	json_strv(j, "pass", &p->env_pass);
	json_strv(j, "set", &p->env_set);
	json_strv(j, "deny", &p->env_deny);
	json_obj_end(j);
	json_key(j, "audit");
	json_obj_begin(j);
	json_kv_str(j, "file", p->audit_file);
	json_strv(j, "redact", &p->audit_redact);
	json_kv_str(j, "on_failure", failure[p->audit_on_failure]);
	json_kv_uint(j, "event_budget", p->audit_event_budget);
	json_obj_end(j);
	json_obj_end(j);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP server's tools as tools/list gives them (see mcp_describe.h). The schemas are fixed
 * text: the limits they state are mcp_tools.h's, spelled in by the preprocessor, so the schema
 * and the check in mcp_tools.c cannot drift apart. */
#include "mcp_describe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_tools.h"

#define SHOWN_PATHS 12

/* ---------- schemas ---------- */

/* A string without NUL (which no argv, path or variable can hold): the pattern is JSON text
 * whose regular expression is ^[^\u0000]*$. */
#define NO_NUL "\"pattern\":\"^[^\\\\u0000]*$\""
#define NULLABLE_STRING "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}"
#define COUNT "{\"type\":\"integer\",\"minimum\":0}"

static const char run_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"command\"],"
    "\"properties\":{"
    "\"command\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":" MCP_STR(
	MCP_ARGV_MAX) ","
		      "\"items\":{\"type\":\"string\"," NO_NUL "},"
		      "\"description\":\"the argv: [\\\"pytest\\\", \\\"-x\\\"]; for shell syntax "
		      "[\\\"sh\\\", \\\"-c\\\", \\\"make 2>&1 | tail\\\"]\"},"
		      "\"cwd\":{\"type\":\"string\",\"minLength\":1," NO_NUL ","
		      "\"description\":\"the working directory inside the sandbox (default: the "
		      "session's)\"},"
		      "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
		      "\"maximum\":" MCP_STR(
			  MCP_RUN_TIMEOUT_MAX) ","
					       "\"description\":\"seconds before the command's "
					       "process group is killed (status "
					       "124)\"},"
					       "\"env\":{\"type\":\"object\","
					       "\"maxProperties\":" MCP_STR(
						   MCP_ENV_MAX) ","
								"\"propertyNames\":{\"type\":"
								"\"string\",\"pattern\":\"^[^="
								"\\\\u0000]+$\"},"
								"\"additionalProperties\":{"
								"\"type\":\"string\"," NO_NUL "},"
								"\"description\":\"variables to "
								"set on top of the session's "
								"environment, NAME: "
								"value\"},"
								"\"max_output_bytes\":{\"type\":"
								"\"integer\",\"minimum\":0,"
								"\"maximum\":" MCP_STR(MCP_OUTPUT_MAX) ",\"default\":" MCP_STR(
								    MCP_OUTPUT_CAP) ","
										    "\"description"
										    "\":\"the most "
										    "bytes kept of "
										    "each of "
										    "stdout and "
										    "stderr: half "
										    "from the "
										    "start, half "
										    "from the end, "
										    "the bytes "
										    "between left "
										    "out and "
										    "counted\"}}}";

static const char paths_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"properties\":{\"paths\":{\"type\":\"array\",\"maxItems\":" MCP_STR(
	MCP_PATHS_MAX) ","
		       "\"items\":{\"type\":\"string\"," NO_NUL "},"
		       "\"description\":\"only these paths (default: all)\"}}}";

/* The error shape: every tool's result is its own object or this one. */
#define ERROR_SHAPE                                                                                \
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"error\"],"            \
	"\"properties\":{\"error\":{\"type\":\"string\"}},"                                        \
	"\"description\":\"the call could not be made (the session is gone, it refused the "       \
	"command, ...)\"}"

#define DENIALS                                                                                    \
	"{\"oneOf\":["                                                                             \
	"{\"type\":\"object\",\"additionalProperties\":false,"                                     \
	"\"required\":[\"available\",\"note\"],"                                                   \
	"\"properties\":{\"available\":{\"type\":\"boolean\",\"const\":false},"                    \
	"\"note\":{\"type\":\"string\"}}},"                                                        \
	"{\"type\":\"object\",\"additionalProperties\":false,"                                     \
	"\"required\":[\"available\",\"syscalls\",\"syscall_names\",\"limit\","                    \
	"\"network\",\"dns_during_run\",\"note\"],"                                                \
	"\"properties\":{\"available\":{\"type\":\"boolean\",\"const\":true},"                     \
	"\"syscalls\":" COUNT ","                                                                  \
	"\"syscall_names\":{\"type\":\"object\",\"additionalProperties\":" COUNT "},"              \
	"\"limit\":" NULLABLE_STRING ",\"network\":" COUNT ",\"dns_during_run\":" COUNT ","        \
	"\"note\":{\"type\":\"string\"}}}]}"

static const char run_output[] =
    "{\"type\":\"object\",\"oneOf\":["
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"status\",\"cause\",\"duration_ms\",\"timeout_ms\",\"stdout\","
    "\"stdout_dropped\",\"stdout_tail\",\"stderr\",\"stderr_dropped\",\"stderr_tail\","
    "\"exec\",\"error\",\"denials\"],"
    "\"properties\":{"
    "\"status\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":255},"
    "\"cause\":{\"type\":\"string\"},"
    "\"duration_ms\":" COUNT ",\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1},"
    "\"stdout\":{\"type\":\"string\"},\"stdout_dropped\":" COUNT ","
    "\"stdout_tail\":{\"type\":\"string\"},"
    "\"stderr\":{\"type\":\"string\"},\"stderr_dropped\":" COUNT ","
    "\"stderr_tail\":{\"type\":\"string\"},"
    "\"exec\":" COUNT ",\"error\":" NULLABLE_STRING ",\"denials\":" DENIALS "}}," ERROR_SHAPE "]}";

/* The document of `agentbox changes|diff --json` (docs/sessions.md, "Review as data"): its
 * frame here; a change's every member is described there. */
static const char review_output[] =
    "{\"type\":\"object\",\"oneOf\":["
    "{\"type\":\"object\",\"required\":[\"version\",\"command\",\"changes\",\"counts\","
    "\"status\",\"error\"],"
    "\"properties\":{\"version\":{\"const\":1},\"command\":{\"enum\":[\"changes\",\"diff\"]},"
    "\"run\":" NULLABLE_STRING ",\"changes_dir\":" NULLABLE_STRING ","
    "\"roots\":{\"type\":\"array\"},"
    "\"changes\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"path\",\"rel\",\"kind\"],"
    "\"properties\":{\"path\":{\"type\":\"string\"},\"path_b64\":{\"type\":\"string\"},"
    "\"rel\":{\"type\":\"string\"},\"rel_b64\":{\"type\":\"string\"},"
    "\"kind\":{\"enum\":[\"added\",\"modified\",\"deleted\"]},"
    "\"diff\":" NULLABLE_STRING "}}},"
    "\"counts\":{\"type\":\"object\"},"
    "\"status\":{\"enum\":[\"ok\",\"conflict\",\"error\"]},"
    "\"error\":" NULLABLE_STRING "}}," ERROR_SHAPE "]}";

/* ---------- the run tool's description, from the policy ---------- */

static void paths_of(FILE *f, const struct jnode *fs, const char *kind, const char *label)
{
	size_t shown = 0, more = 0;

	for (size_t i = 0; fs && fs->type == JNODE_ARRAY && i < fs->n; i++) {
		const char *k = jnode_str(&fs->kids[i], "kind"),
			   *p = jnode_str(&fs->kids[i], "path");
		if (!k || !p || strcmp(k, kind))
			continue;
		if (shown == SHOWN_PATHS) {
			more++;
			continue;
		}
		fprintf(f, "%s%s", shown++ ? ", " : label, p);
	}
	if (more)
		fprintf(f, " and %zu more", more);
	if (shown)
		fputs(". ", f);
}

static const char *network_mode(const struct mcp_session *s)
{
	const char *mode = jnode_str(jnode_get(&s->policy, "network"), "mode");

	return mode ? mode : "none";
}

static void network_of(FILE *f, const struct mcp_session *s)
{
	const struct jnode *allow = jnode_get(jnode_get(&s->policy, "network"), "allow");
	const char *mode = network_mode(s);

	if (!strcmp(mode, "none")) {
		fputs("Network: none (no connection leaves the sandbox). ", f);
		return;
	}
	if (!strcmp(mode, "host")) {
		fputs("Network: the host's, unfiltered. ", f);
		return;
	}
	fputs("Network: only through agentbox's egress filter, to ", f);
	if (!allow || allow->type != JNODE_ARRAY || !allow->n)
		fputs("no host at all", f);
	for (size_t i = 0; allow && allow->type == JNODE_ARRAY && i < allow->n; i++)
		if (allow->kids[i].type == JNODE_STRING && i < SHOWN_PATHS)
			fprintf(f, "%s%s", i ? ", " : "", allow->kids[i].str);
	if (allow && allow->type == JNODE_ARRAY && allow->n > SHOWN_PATHS)
		fprintf(f, " and %zu more", allow->n - SHOWN_PATHS);
	fputs("; anything else is refused. ", f);
}

static void limit_of(FILE *f, const struct jnode *l, const char *key, const char *label,
		     const char *unit, int64_t div, bool *any)
{
	int64_t v;

	if (!jnode_int(jnode_get(l, key), 0, INT64_MAX, &v))
		return;
	fprintf(f, "%s%s %lld%s", *any ? ", " : "Limits: ", label, (long long)(v / div), unit);
	*any = true;
}

static void limits_of(FILE *f, const struct jnode *l)
{
	bool any = false;

	limit_of(f, l, "timeout_ms", "timeout per command", " s", 1000, &any);
	limit_of(f, l, "memory", "memory", " MiB", 1 << 20, &any);
	limit_of(f, l, "processes", "processes", "", 1, &any);
	limit_of(f, l, "cpu_s", "CPU", " s", 1, &any);
	limit_of(f, l, "session_timeout_ms", "session lifetime", " s", 1000, &any);
	if (any)
		fputs(". ", f);
}

static void duration(FILE *f, uint64_t ms)
{
	if (ms % 1000)
		fprintf(f, "%llu ms", (unsigned long long)ms);
	else
		fprintf(f, "%llu s", (unsigned long long)(ms / 1000));
}

static void timeout_of(FILE *f, uint64_t cap)
{
	uint64_t def = (uint64_t)MCP_RUN_TIMEOUT_DEFAULT * 1000;

	fputs("Default timeout ", f);
	duration(f, cap && cap < def ? cap : def);
	if (cap) {
		fputs("; a longer one is lowered to the profile's limit, ", f);
		duration(f, cap);
	}
	fputs(". ", f);
}

/* The run tool's description: the command's world in a few lines. NULL when out of memory. */
static char *run_description(const struct mcp_session *s)
{
	const struct jnode *p = &s->policy, *fs = jnode_get(p, "filesystem");
	const char *workdir = jnode_str(jnode_get(p, "sandbox"), "workdir");
	char *text = NULL;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	fprintf(f,
		"Run a command in agentbox sandbox session %s (one sandbox for all runs: files "
		"written by one run are seen by the next). command is an argv array; for shell "
		"syntax use [\"sh\", \"-c\", \"...\"]. Returns status (the exit code, 128+N for "
		"signal N, 124 on timeout), cause, duration_ms, stdout and stderr (each keeps "
		"max_output_bytes, default %d: half from the start, half from the end in "
		"stdout_tail/stderr_tail, the bytes between counted in "
		"stdout_dropped/stderr_dropped), timeout_ms (the timeout that applied) and the "
		"sandbox's denials during the run. stdin is empty. ",
		s->id, MCP_OUTPUT_CAP);
	timeout_of(f, mcp_session_run_limit(s));
	if (workdir)
		fprintf(f, "Working directory: %s. ", workdir);
	paths_of(f, fs, "rw", "Read-write: ");
	paths_of(f, fs, "overlay", "Writable, changes kept apart from the host (see changes): ");
	paths_of(f, fs, "ro", "Read-only: ");
	paths_of(f, fs, "tmpfs", "Empty scratch: ");
	fputs("Nothing else of the host is visible. ", f);
	network_of(f, s);
	limits_of(f, jnode_get(p, "limits"));
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---------- the list ---------- */

struct tool {
	const char *name, *title, *input, *output;
	bool read_only;
};

static void tool(struct json *j, const struct tool *t, const char *desc, bool open_world)
{
	json_obj_begin(j);
	json_kv_str(j, "name", t->name);
	json_kv_str(j, "title", t->title);
	json_kv_str(j, "description", desc);
	json_key(j, "inputSchema");
	json_raw(j, t->input);
	json_key(j, "outputSchema");
	json_raw(j, t->output);
	json_key(j, "annotations");
	json_obj_begin(j);
	json_kv_bool(j, "readOnlyHint", t->read_only);
	json_kv_bool(j, "openWorldHint", open_world);
	json_obj_end(j);
	json_obj_end(j);
}

void mcp_describe(const struct mcp_session *s, struct json *j)
{
	static const struct tool run = {"run", "Run a command in the sandbox", run_input,
					run_output, false};
	static const struct tool changes = {"changes", "List the sandbox's changes", paths_input,
					    review_output, true};
	static const struct tool diff = {"diff", "Diff the sandbox's changes", paths_input,
					 review_output, true};
	char *desc = run_description(s);

	json_arr_begin(j);
	if (!desc)
		j->oom = true;
	/* a run reaches beyond the sandbox exactly when the network lets it */
	tool(j, &run, desc ? desc : "", strcmp(network_mode(s), "none") != 0);
	free(desc);
	if (s->changes) {
		tool(
		    j, &changes,
		    "List the files the session's runs changed under its overlay paths (the host's "
		    "files are untouched until a human promotes them). Read-only.",
		    false);
		tool(j, &diff,
		     "Show the session's overlay changes as a unified diff against the host's "
		     "files. Read-only.",
		     false);
	}
	json_arr_end(j);
}

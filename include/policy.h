/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The profile: INI files (with includes, variables and command-line overrides) parsed into one
 * struct policy. Every other module reads the policy; nothing else parses a profile. */
#ifndef AGENTBOX_POLICY_H
#define AGENTBOX_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "egress_rule.h"
#include "error.h"
#include "http_rules.h"
#include "json.h"
#include "strv.h"
#include "units.h"

#define POLICY_MAX_FILE_BYTES (1024 * 1024)
#define POLICY_MAX_INCLUDE_DEPTH 16
#define POLICY_DEFAULT_TMPFS_SIZE (256ull * 1024 * 1024)
/* [network] ask-timeout when the profile sets none */
#define POLICY_DEFAULT_ASK_TIMEOUT_MS 10000
#define POLICY_DEFAULT_EVENT_BUDGET 10000

/* Where a setting came from; file is owned by policy.profiles (or a static string). */
struct origin {
	const char *file;
	unsigned line;
	unsigned layer; /* one per file loaded; the command line is the last layer */
};

enum fs_kind { FS_RO, FS_RW, FS_TMPFS, FS_HIDE, FS_SYMLINK, FS_OVERLAY };

struct fs_entry {
	enum fs_kind kind;
	char *path;    /* absolute and normalised; inside the sandbox, and on the host for binds */
	char *target;  /* FS_SYMLINK: the link's content, as written */
	bool optional; /* ro-try / rw-try: skipped when the host path is missing */
	struct origin at;
};

enum net_mode { NET_NONE, NET_PROXY, NET_HOST };
/* proxy mode: whether clients that ignore the proxy variables are captured (capture.h) */
enum net_capture { CAPTURE_AUTO, CAPTURE_ON, CAPTURE_OFF };
enum seccomp_preset { SECCOMP_PRESET_DEFAULT, SECCOMP_PRESET_STRICT, SECCOMP_PRESET_NONE };
enum seccomp_action { SECCOMP_ACTION_ERRNO, SECCOMP_ACTION_KILL };
enum fallback_mode { FALLBACK_NONE, FALLBACK_LANDLOCK };

/* 0 means "not set" for every limit. */
struct limits {
	uint64_t timeout_ms;
	uint64_t cpu_s;
	uint64_t memory;
	uint64_t processes;
	uint64_t open_files;
	uint64_t file_size;
	uint64_t tmpfs_size;
	uint64_t changes_size; /* overlays' upper layers together; 0: no cap (on disk) */
	uint64_t disk; /* growth of the file systems under rw paths (disklimit.h); 0: none */
	uint64_t session_timeout_ms; /* a session's whole life (session.h); 0: none */
	uint64_t idle_timeout_ms;    /* a session with no exec running for this long ends */
};

/* The values ${HOME}, ${CWD}, ${USER}, ${UID} and ${TMPDIR} expand to. */
struct policy_vars {
	const char *home, *cwd, *user, *uid, *tmpdir;
};

/* How profile files are read; tests and the fuzzer provide files from memory. */
struct policy_io {
	/* Reads the whole file into *data (malloc'd, *len bytes). */
	int (*read)(void *ctx, const char *path, char **data, size_t *len, struct ab_err *e);
	/* Canonical identity of path, for cycle detection (malloc'd). */
	char *(*canonical)(void *ctx, const char *path);
	void *ctx;
};

/* The egress rules of a run, parsed as each profile line is read and completed by
 * policy_finish with what they imply: what the proxy decides with (egress.h). */
struct egress_rules {
	struct egress_rule_list allow, deny; /* [network] allow and deny */
	/* allowed at ports 80 and 443 (what the proxy reads request by request) because an [http]
	 * allow rule names the host ("[http] RULE") or a credential is bound to it
	 * ("[credential NAME] HOST") */
	struct egress_rule_list implied;
	struct egress_pin_list pins; /* [network] resolve */
	/* [http] rules; then each credential's rules, implied (they decide the requests to a host
	 * no [http] allow rule names), and for each credential host a fallback allowing its every
	 * request ("* HOST/(anything)": a host no other allow rule names); http_rules.h, tiers */
	struct http_rules http;
	/* the most a harness may add while a session runs (docs/sessions.md, "Live policy"):
	 * [network] grantable, the connection rules it may allow, and [http] grantable, the
	 * request rules; deny rules need none */
	struct egress_rule_list grantable;
	struct http_rules http_grantable;
};

void egress_rules_free(struct egress_rules *r);

/* [credential NAME]: a secret agentbox adds at the proxy (docs/profile.md "Credentials"). */
enum cred_place { CRED_PLACE_NONE, CRED_PLACE_HEADER, CRED_PLACE_BASIC, CRED_PLACE_QUERY };
enum cred_source_kind { CRED_SOURCE_ENV, CRED_SOURCE_FILE, CRED_SOURCE_CMD };

struct policy_credential {
	char *name;
	char *source; /* env:NAME, file:/ABSOLUTE, cmd:PROGRAM ARGS (as written, expanded) */
	enum cred_source_kind source_kind;
	const char *source_arg;	       /* source past its "env:", "file:" or "cmd:" */
	struct egress_rule_list hosts; /* host names it may be sent to (NAME, *.SUFFIX) */
	/* [http]-style allow rules narrowing that; policy_finish makes an implied "*
	 * HOST/(anything)" for each host when the profile names none */
	struct http_rules rules;
	enum cred_place place;
	char *header_name; /* CRED_PLACE_HEADER: the header; BASIC: "Authorization" */
	char *template;	   /* HEADER: the value with {}; BASIC: USER:{}; QUERY: the parameter */
	char *env;	   /* the variable holding the placeholder inside, or NULL */
	char *prefix;	   /* the placeholder's fixed start ("sk-", "ghp_"), or NULL */
	uint64_t length;   /* the placeholder's whole length; 0: prefix + 40 */
	char *file;	   /* a file made inside from this text ({}: the placeholder), or NULL */
	char *file_env;	   /* the variable holding that file's path inside, or NULL */
	bool add;	   /* add the header when a request to a bound host lacks it */
	bool stop;	   /* on-leak = stop: a leak ends the run */
	struct origin at;  /* where the section began */
};

struct policy {
	struct strv profiles;	    /* every file read, canonical, in load order */
	struct strv profile_sha256; /* the SHA-256 of each, of the bytes parsed */
	struct policy_vars vars;

	char *hostname;
	char *workdir; /* NULL: the caller's cwd if visible, else / */
	char *changes; /* overlay upper dirs go here; NULL: the per-run state directory */
	enum fallback_mode fallback;
	bool nesting;	  /* the command may build sandboxes of its own (agentbox in agentbox) */
	int64_t uid, gid; /* the command's ids inside; -1: the caller's */

	struct fs_entry *fs;
	size_t n_fs;
	struct strv protect;   /* more read-only paths inside rw and overlay trees */
	struct strv unprotect; /* default protected names (policy_protected_names) not protected */

	enum net_mode net_mode;
	enum net_capture net_capture; /* auto: on when the kernel allows it */
	struct egress_rules net;      /* [network] allow, deny, resolve; [http] */
	/* [network] ca: an extra PEM trust anchor for the proxy's upstream TLS (intercepted
	 * connections only); absolute, NULL when unset. net_ca_at: where it was set. */
	char *net_ca;
	struct origin net_ca_at;
	struct strv net_methods; /* plain HTTP methods allowed; empty: any */
	uint64_t net_max_connections, net_rate, net_max_bytes_out, net_max_bytes_in; /* 0: none */
	/* the same, counted for each requested host on its own */
	uint64_t net_host_max_connections, net_host_rate, net_host_max_bytes_out,
	    net_host_max_bytes_in;
	/* how long a connection a session's harness is asked about waits for its answer; 0: the
	 * default (POLICY_DEFAULT_ASK_TIMEOUT_MS) */
	uint64_t net_ask_timeout_ms;

	struct limits limits;

	enum seccomp_preset seccomp_preset;
	enum seccomp_action seccomp_action;
	struct strv seccomp_deny, seccomp_allow;

	struct strv env_pass, env_set, env_deny;

	struct policy_credential *creds;
	size_t n_creds;

	char *audit_file; /* NULL: no audit; "-": stdout; "fd:N"; or an absolute path */
	struct strv audit_redact;
	enum audit_failure audit_on_failure;
	uint64_t audit_event_budget; /* [audit] event-budget: per kind a command can cause */

	struct strv command;

	/* parser state: which layer last set each scalar (for "set twice in one file") */
	unsigned next_layer;
	struct strv scalar_keys;
	unsigned *scalar_layers;
	/* ... and where each key ("section.key") was last set, for the checks policy_finish makes
	 * once every layer is in: their errors name a line too */
	struct strv set_keys;
	struct origin *set_at;
	/* ... and where each list item and rule was written ("section.key\nITEM", the first time
	 * first), for the warnings (policy_warn.h) */
	struct strv item_keys;
	struct origin *item_at;
};

/* vars are copied. A NULL io reads real files. */
struct policy *policy_new(const struct policy_vars *vars);
void policy_free(struct policy *p);
/* Frees what one credential section holds (policy_credentials.c). */
void policy_credential_free(struct policy_credential *c);
/* A credential's token file inside: AGENTBOX_RUN_DIR/credential-NAME (run_dir.h). -1 when out
 * does not hold it. */
#define CRED_FILE_PREFIX "credential-"
int cred_file_path(const struct policy_credential *pc, char *out, size_t size);

/* Loads one profile file (and its includes) into p. Errors read "FILE:LINE: what; fix". */
int policy_load(struct policy *p, const char *path, const struct policy_io *io, struct ab_err *e);

/* Applies one setting from the command line, as if written in a last profile layer.
 * what names the option for error messages (e.g. "--ro"). */
int policy_override(struct policy *p, const char *section, const char *key, const char *value,
		    const char *what, struct ab_err *e);

/* Checks what can only be checked once every layer is in. */
int policy_finish(struct policy *p, struct ab_err *e);

/* The effective policy as one JSON object. */
void policy_explain(const struct policy *p, struct json *j);

/* Finds a profile: a value with a '/' is a path; a bare NAME (or NAME.ini) is searched for as
 * NAME.ini in $AGENTBOX_PROFILE_PATH, ~/.config/agentbox/profiles, /etc/agentbox/profiles,
 * the installed profiles directory, and the source tree when run from the build directory.
 * The current directory is never searched: a repository cannot plant a weaker profile. */
/* The directory of the running binary (malloc'd, NULL when unknown): the profile search looks
 * in the source tree's profiles only for an agentbox run from its build directory. */
char *policy_exe_dir(void);
char *policy_find_profile(const char *name, const struct policy_vars *vars, const char *exe_dir,
			  struct ab_err *e);

/* Pure helpers, public for the unit tests. */
/* Absolute, no "..", with "." and repeated slashes removed. */
int path_normalize(const char *in, char **out, struct ab_err *e);
/* Expands ${VAR} and a leading ~/ ; profile_dir may be NULL. */
int expand_vars(const char *in, const struct policy_vars *vars, const char *profile_dir, char **out,
		struct ab_err *e);

const char *fs_kind_name(enum fs_kind k);
/* Names, relative to each rw or overlay tree's root, kept read-only unless unprotected; a
 * missing one the command may not create (include/mounts.h: protect_missing). "" ends the
 * list. Names, not pointers: a table of pointers is relocated, so written, at every start. */
#define POLICY_PROTECTED_NAME_SIZE 40
extern const char policy_protected_names[][POLICY_PROTECTED_NAME_SIZE];
const char *net_mode_name(enum net_mode m);
const char *seccomp_preset_name(enum seccomp_preset p);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [limits]: time, CPU, memory, processes, files, tmpfs, changes, disk and a session's life. */
#include "policy_parse.h"

#define LIMIT_HANDLER(fn, field, parser) POLICY_LIMIT_HANDLER(fn, limits.field, parser)
LIMIT_HANDLER(on_timeout, timeout_ms, parse_duration_ms)
LIMIT_HANDLER(on_memory, memory, parse_size)
LIMIT_HANDLER(on_processes, processes, parse_count)
LIMIT_HANDLER(on_open_files, open_files, parse_count)
LIMIT_HANDLER(on_file_size, file_size, parse_size)
LIMIT_HANDLER(on_tmpfs_size, tmpfs_size, parse_size)
LIMIT_HANDLER(on_changes_size, changes_size, parse_size)
LIMIT_HANDLER(on_disk, disk, parse_size)
LIMIT_HANDLER(on_session_timeout, session_timeout_ms, parse_duration_ms)
LIMIT_HANDLER(on_idle_timeout, idle_timeout_ms, parse_duration_ms)

static int on_cpu(const struct setting *s, const char *value, struct ab_err *e)
{
	if (policy_set_limit(s, value, &s->p->limits.cpu_s, parse_duration_ms, e) < 0)
		return -1;
	/* RLIMIT_CPU is whole seconds; round up without wrapping near UINT64_MAX */
	s->p->limits.cpu_s = s->p->limits.cpu_s / 1000 + (s->p->limits.cpu_s % 1000 != 0);
	return 0;
}

static const struct key_spec keys[] = {
    {"limits", "timeout", SINGLE, on_timeout},
    {"limits", "cpu", SINGLE, on_cpu},
    {"limits", "memory", SINGLE, on_memory},
    {"limits", "processes", SINGLE, on_processes},
    {"limits", "open-files", SINGLE, on_open_files},
    {"limits", "file-size", SINGLE, on_file_size},
    {"limits", "tmpfs-size", SINGLE, on_tmpfs_size},
    {"limits", "changes-size", SINGLE, on_changes_size},
    {"limits", "disk", SINGLE, on_disk},
    {"limits", "session-timeout", SINGLE, on_session_timeout},
    {"limits", "idle-timeout", SINGLE, on_idle_timeout},
};
const struct key_table policy_limits_keys = {keys, sizeof(keys) / sizeof(keys[0])};

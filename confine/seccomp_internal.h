/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Internal to the filter's three files, not an interface for anything else (the rest of agentbox
 * sees seccomp.h): seccomp_lists.c holds the presets' system call names, seccomp_build.c makes
 * the rules from them and the policy, seccomp.c exports and loads the result. It includes no
 * header of ours, so that seccomp.c can include it without an include circle. */
#ifndef AGENTBOX_SECCOMP_INTERNAL_H
#define AGENTBOX_SECCOMP_INTERNAL_H

#include <seccomp.h>
#include <stdbool.h>

struct ab_err;
struct policy;

/* seccomp_lists.c: the syscalls the default preset refuses outright, and the strict preset's
 * allowlist; "" ends each. Names the kernel or libseccomp does not know here are skipped.
 * Arrays of names rather than of pointers: pointers would be relocated, and so written, at
 * every start of the binary, filter or not (2.4 KiB of .data.rel.ro: a page fault). */
#define SYSCALL_NAME_SIZE 24
extern const char default_deny[][SYSCALL_NAME_SIZE];
extern const char strict_allow[][SYSCALL_NAME_SIZE];

/* seccomp_build.c: the filter's rules in a new context (NULL on error); notify selects named
 * violations (a listener) over plain errno. */
scmp_filter_ctx build(const struct policy *p, bool no_inet, bool notify, struct ab_err *e);

#endif

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc_ptrace_sibling: ptrace another process of the sandbox (attach, poke its memory). Inside
# the sandbox this is no boundary in itself, but ptrace is how old kernels let a tracer undo a
# tracee's seccomp filter, and the way to pid 1 if anything else failed.
# Defence: seccomp (ptrace is refused, named in the audit).
# Control: the same probe on the host attaches to its own child and changes its memory.

control() {
	host "$BIN/memwrite" sibling ptrace
	result_is SUCCESS || control_failed "ptrace of a child on the host failed" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/memwrite" sibling ptrace
	result_is SUCCESS && escaped "ptrace changed a sibling's memory" "$(evidence)"
	errno_is EPERM && audit_syscall ptrace && blocked "ptrace(PTRACE_ATTACH): EPERM, the filter's (named in the audit)"
	escaped "no proof the filter refused ptrace" "$(evidence)"
}

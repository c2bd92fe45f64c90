# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# env_secrets: credentials in the caller's environment (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN,
# OPENAI_API_KEY, DB_PASSWORD) would be the first thing an agent's command sends away. The
# probe prints its environment, under -p shell, and under a profile that includes shell.ini and
# passes every variable (pass = *), where only shell.ini's deny globs stand in the way.
# Defence: the environment starts empty; [env] pass copies only what it names, and deny globs
# (*_TOKEN, *_KEY, *_SECRET, *PASSWORD*, AWS_*) win over pass. The audit names the refused
# variables, never their values.
# Control: the caller's environment holds the values, and one set with --setenv reaches the
# command (the probe does see what is there).

setup() {
	local v
	V1="v1$(unique)" V2="v2$(unique)" V3="v3$(unique)" V4="v4$(unique)"
	export AWS_SECRET_ACCESS_KEY=$V1 GITHUB_TOKEN=$V2 OPENAI_API_KEY=$V3 DB_PASSWORD=$V4
	for v in "$V1" "$V2" "$V3" "$V4"; do echo "$v"; done >"$META/values"
	profile passall.ini shell "[env]" "pass = *"
}

leaks() {
	printf '%s\n' "$OUT" | grep -F -f "$META/values" | tr '\n' ' '
}

control() {
	host env
	[ "$(printf '%s\n' "$OUT" | grep -c -F -f "$META/values")" = 4 ] ||
		control_failed "the caller's environment does not hold the four values" "$(evidence)"
	ab shell --setenv "AWS_SECRET_ACCESS_KEY=$V1" -- env
	case "$OUT" in *"AWS_SECRET_ACCESS_KEY=$V1"*) ;; *) control_failed "--setenv did not reach the command" "$(evidence)" ;; esac
	control_ok "the caller holds all four; --setenv AWS_SECRET_ACCESS_KEY reaches the command"
}

attack() {
	local n v
	ab shell -- sh -c 'env; tr "\0" "\n" </proc/self/environ'
	[ -n "$(leaks)" ] && escaped "-p shell: secret values in the command's environment: $(leaks)"
	case "$OUT" in *PATH=*) ;; *) escaped "the probe printed no environment" "$(evidence)" ;; esac
	ab ./passall.ini -- sh -c 'env; tr "\0" "\n" </proc/self/environ'
	[ -n "$(leaks)" ] && escaped "pass = *: secret values in the command's environment: $(leaks)"
	case "$OUT" in *PATH=*) ;; *) escaped "the probe printed no environment" "$(evidence)" ;; esac
	n=$(audit_get env denied)
	for v in AWS_SECRET_ACCESS_KEY GITHUB_TOKEN OPENAI_API_KEY DB_PASSWORD; do
		case "$n" in *"\"$v\""*) ;; *) escaped "the audit's env event does not list $v as denied: $n" ;; esac
	done
	grep -q -F -f "$META/values" "$AUDIT" && escaped "a secret value is in the audit trail"
	blocked "none of the four values reaches the command, under shell or pass = *;" \
		"the audit lists them as denied, without values"
}

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# check-docs.sh AGENTBOX DOC_KEYS SOURCE_DIR: the reference documents say what the binary does.
#
#   - every profile key the parser knows (DOC_KEYS prints them from its tables) has an entry in
#     agentbox.ini(5) and in docs/profile.md's table of its section, and neither documents a
#     key the parser lacks;
#   - every option and subcommand `agentbox --help` names has an entry in agentbox(1), which
#     names no option --help lacks; each run option is a row of docs/profile.md's command-line
#     table, whose settings are the ones cli.c maps the options to, as agentbox(1) says too;
#   - cli.c's options are all in --help, and the bash completion offers them;
#   - both man pages name every bundled profile;
#   - README says how to run agentbox by its bare name, which works, and what the link's
#     warnings mean;
#   - both man pages format without a troff warning (a warning there has cut text before).
#
# Prints one line per problem and exits 1 if there is any.
set -u
AGENTBOX=$(readlink -f "$1")
DOC_KEYS=$(readlink -f "$2")
SRC=$3
MAN1=$SRC/docs/agentbox.1
MAN5=$SRC/docs/agentbox.ini.5
MD=$SRC/docs/profile.md
COMPLETION=$SRC/completions/agentbox.bash
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
problems=0

problem() {
	echo "check-docs: $*"
	problems=$((problems + 1))
}

# missing WHAT A B: a line for each line of sorted file A that sorted file B lacks.
missing() {
	local what=$1 line
	while IFS= read -r line; do
		problem "$what: $line"
	done < <(comm -23 "$2" "$3")
}

# ---- profile keys ----

"$DOC_KEYS" >"$TMP/keys.raw" || {
	cat "$TMP/keys.raw"
	echo "check-docs: $DOC_KEYS failed"
	exit 1
}
sort -u "$TMP/keys.raw" >"$TMP/keys"
[ "$(wc -l <"$TMP/keys")" -gt 40 ] || problem "only $(wc -l <"$TMP/keys") keys from $DOC_KEYS"

# agentbox.ini(5), SECTIONS: ".SS [name]" (or "[credential NAME]"), then each key a ".TP"
# whose tag line's first word is the key.
awk '
	/^\.SH/ { in_sections = ($2 == "SECTIONS") ; section = ""; next }
	!in_sections { next }
	/^\.SS/ {
		section = ""
		if (match($0, /\[[a-z]+/)) section = substr($0, RSTART + 1, RLENGTH - 1)
		next
	}
	/^\.T[PQ]/ { tag = 1; next }
	tag {
		tag = 0
		if (section == "" || $1 !~ /^\.B[IR]?$/) next
		key = $2
		gsub(/"/, "", key)
		gsub(/\\-/, "-", key)
		print section " " key
	}
' "$MAN5" | sort -u >"$TMP/man5"
missing "a profile key agentbox.ini(5) lacks" "$TMP/keys" "$TMP/man5"
missing "agentbox.ini(5) documents a key the parser lacks" "$TMP/man5" "$TMP/keys"

# docs/profile.md: under "### ... [name]", the first table whose header starts "| key |"
awk '
	/^### / {
		section = ""; done = 0
		if (match($0, /\[[a-z]+/)) section = substr($0, RSTART + 1, RLENGTH - 1)
		next
	}
	section == "" || done { next }
	/^\| key \|/ { table = 1; next }
	table && /^\|---/ { next }
	table && /^\|/ {
		key = $0
		sub(/^\| *`/, "", key)
		sub(/`.*/, "", key)
		print section " " key
		next
	}
	table { table = 0; done = 1 }
' "$MD" | sort -u >"$TMP/md"
missing "a profile key docs/profile.md lacks" "$TMP/keys" "$TMP/md"
missing "docs/profile.md documents a key the parser lacks" "$TMP/md" "$TMP/keys"

# ---- options and subcommands ----

"$AGENTBOX" --help >"$TMP/help" || problem "agentbox --help failed"
grep -oE -- '--[a-z][a-z-]*' "$TMP/help" | sort -u >"$TMP/help-all"
# a run's options: the option lines before the first subcommand line
awk '/^  agentbox / { exit } /^ +-/' "$TMP/help" | grep -oE -- '--[a-z][a-z-]*' | sort -u \
	>"$TMP/help-run"
sed -nE 's/^  agentbox ([a-z|]+).*/\1/p' "$TMP/help" | tr '|' '\n' | sort -u >"$TMP/help-sub"
[ "$(wc -l <"$TMP/help-run")" -gt 15 ] || problem "only $(wc -l <"$TMP/help-run") run options read from --help"
[ "$(wc -l <"$TMP/help-sub")" -ge 8 ] || problem "only $(wc -l <"$TMP/help-sub") subcommands read from --help"

# cli.c's long options (its longopts table) are all in --help
sed -nE 's/^[[:space:]]*\{"([a-z-]+)", (no|required)_argument.*/--\1/p' "$SRC/cli.c" | sort -u \
	>"$TMP/cli-opts"
[ -s "$TMP/cli-opts" ] || problem "no long options read from cli.c"
missing "an option of cli.c that --help lacks" "$TMP/cli-opts" "$TMP/help-all"

# agentbox(1): the options its .TP tags name, and every option it mentions anywhere
awk '/^\.T[PQ]/ { tag = 1; next } tag { tag = 0; print }' "$MAN1" | sed 's/\\-/-/g' |
	grep -oE -- '--[a-z][a-z-]*' | sort -u >"$TMP/man1-tags"
sed 's/\\-/-/g' "$MAN1" | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$TMP/man1-all"
missing "an option of --help with no entry in agentbox(1)" "$TMP/help-all" "$TMP/man1-tags"
missing "agentbox(1) names an option --help lacks" "$TMP/man1-all" "$TMP/help-all"
sed 's/\\-/-/g; s/\\f[BIRP]//g; s/"//g' "$MAN1" |
	sed -nE 's/^\.[A-Z]+ +agentbox +([a-z]+).*/\1/p' | sort -u >"$TMP/man1-sub"
missing "a subcommand of --help with no entry in agentbox(1)" "$TMP/help-sub" "$TMP/man1-sub"

# docs/profile.md's command-line table: a row for each run option, and no other
awk '/^### The command line/ { on = 1; next } on && /^#/ { exit } on && /^\| `-/' "$MD" \
	>"$TMP/md-cli-rows"
grep -oE -- '^\| `[^`]*`' "$TMP/md-cli-rows" | grep -oE -- '--[a-z][a-z-]*' | sort -u \
	>"$TMP/md-cli"
missing "a run option of --help that docs/profile.md's command-line table lacks" \
	"$TMP/help-run" "$TMP/md-cli"
missing "docs/profile.md's command-line table has an option --help lacks" \
	"$TMP/md-cli" "$TMP/help-all"

# the setting each option stands for, as cli.c maps it, in profile.md's table and agentbox(1)
sed -nE 's/^[[:space:]]*\{OPT_[A-Z]+, "(--[a-z-]+)", "([a-z]+)", "([a-z-]+)"\},.*/\1 \2 \3/p' \
	"$SRC/cli.c" >"$TMP/overrides"
[ "$(wc -l <"$TMP/overrides")" -gt 10 ] || problem "only $(wc -l <"$TMP/overrides") option settings read from cli.c"
while read -r opt section key; do
	grep -qF -- "| \`$opt " "$TMP/md-cli-rows" &&
		! grep -F -- "| \`$opt " "$TMP/md-cli-rows" | grep -qF -- "| \`[$section] $key\` |" &&
		problem "docs/profile.md: $opt does not say it sets [$section] $key"
	awk -v opt="$opt" '
		/^\.(TP|SH|SS)/ { if (found) exit; tag = ($0 ~ /^\.TP/); next }
		tag { tag = 0; line = $0; gsub(/\\-/, "-", line); if (index(line, opt " ") || index(line, opt "\"")) found = 1 ; next }
		found { print }
	' "$MAN1" | sed 's/\\-/-/g; s/"//g' | tr '\n' ' ' | grep -qF -- "[$section] $key" ||
		problem "agentbox(1): the entry of $opt does not say it sets [$section] $key"
done <"$TMP/overrides"

# the completion offers every option and subcommand
grep -oE -- '--[a-z][a-z-]*' "$COMPLETION" | sort -u >"$TMP/completion"
missing "an option of --help the bash completion lacks" "$TMP/help-all" "$TMP/completion"
for sub in $(cat "$TMP/help-sub"); do
	grep -qE "compgen -W \"[^\"]*\\b$sub\\b" "$COMPLETION" ||
		problem "the bash completion does not offer the subcommand $sub"
done

# ---- the bundled profiles, each named in both man pages ----

for f in "$SRC"/profiles/*.ini; do
	name=$(basename "$f" .ini)
	troff_name=$(printf '%s' "$name" | sed 's/-/\\\\-/g')
	for page in "$MAN1" "$MAN5"; do
		grep -qE "^\.BR? $troff_name( |\$)" "$page" ||
			problem "${page##*/} does not name the bundled profile $name"
	done
done

# ---- agentbox.ini(5)'s EXAMPLE is a profile --check accepts ----

sed -n '/^\.SH EXAMPLE/,/^\.fi/p' "$MAN5" | sed '1,2d;$d' >"$TMP/example.ini"
grep -q '^\[' "$TMP/example.ini" || problem "agentbox.ini(5): no profile read from its EXAMPLE"
AGENTBOX_PROFILE_PATH="$SRC/profiles" "$AGENTBOX" -p "$TMP/example.ini" --check \
	>"$TMP/example.out" 2>&1 || problem "agentbox.ini(5)'s EXAMPLE fails --check: $(head -n 1 "$TMP/example.out")"

# ---- README: the quick start's build becomes a bare `agentbox` ----

README=$SRC/README.md
grep -qF 'cmake --install build' "$README" && grep -qF 'export PATH="$PWD/build:$PATH"' "$README" ||
	problem "README.md does not say how to get agentbox on PATH (cmake --install build, or export PATH=\"\$PWD/build:\$PATH\")"
grep -qF 'in statically linked applications requires at runtime' "$README" ||
	problem "README.md does not explain the static link's warnings"
# what README promises of the second way: the build directory's agentbox, by its bare name,
# finds a bundled profile from any directory (nothing of the caller's configuration helping)
mkdir -p "$TMP/elsewhere" "$TMP/home"
out=$(cd "$TMP/elsewhere" && env -u AGENTBOX_PROFILE_PATH HOME="$TMP/home" \
	PATH="$(dirname "$AGENTBOX"):/usr/bin:/bin" agentbox -p python --check 2>&1) ||
	problem "agentbox on PATH from its build directory: -p python --check: $out"

# ---- troff ----

if command -v groff >/dev/null; then
	for page in "$MAN1" "$MAN5"; do
		out=$(groff -ww -z -man "$page" 2>&1)
		[ -z "$out" ] || problem "groff -ww -man ${page##*/}: $out"
	done
else
	echo "check-docs: no groff here: the man pages' troff is not checked"
fi

if [ "$problems" -gt 0 ]; then
	echo "check-docs: $problems problem(s)"
	exit 1
fi
echo "check-docs: $(wc -l <"$TMP/keys") profile keys, $(wc -l <"$TMP/help-all") options and $(wc -l <"$TMP/help-sub") subcommands documented alike"

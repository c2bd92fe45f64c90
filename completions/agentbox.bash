# bash completion for agentbox: options, profile names, network modes, then the command.
_agentbox_profiles()
{
	local dirs=() d f
	IFS=: read -ra dirs <<<"${AGENTBOX_PROFILE_PATH:-}"
	dirs+=("$HOME/.config/agentbox/profiles" /etc/agentbox/profiles
		/usr/local/share/agentbox/profiles /usr/share/agentbox/profiles)
	for d in "${dirs[@]}"; do
		[ -d "$d" ] || continue
		for f in "$d"/*.ini; do
			[ -e "$f" ] || continue
			f=${f##*/}
			printf '%s\n' "${f%.ini}"
		done
	done | sort -u
}

_agentbox()
{
	local cur prev i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	if [ "$COMP_CWORD" = 2 ] && [ "$prev" = audit ]; then
		COMPREPLY=($(compgen -W "verify summary" -- "$cur"))
		return
	fi
	if [ "$COMP_CWORD" = 2 ] && [ "$prev" = session ]; then
		COMPREPLY=($(compgen -W "start stop list port policy" -- "$cur"))
		return
	fi
	if [ "${COMP_WORDS[1]}" = session ] && [ "${COMP_WORDS[2]}" = port ]; then
		[ "$COMP_CWORD" -gt 4 ] && COMPREPLY=($(compgen -W "--close --json" -- "$cur"))
		return
	fi
	if [ "${COMP_WORDS[1]}" = session ] && [ "${COMP_WORDS[2]}" = policy ]; then
		case $COMP_CWORD in
		4) COMPREPLY=($(compgen -W "allow deny http" -- "$cur")) ;;
		5) [ "$prev" = http ] && COMPREPLY=($(compgen -W "allow deny" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
		esac
		return
	fi
	if [ "${COMP_WORDS[1]}" = exec ]; then
		case $prev in
		--cwd | --result) COMPREPLY=($(compgen -f -- "$cur")) ;;
		--env | --timeout) ;;
		*) COMPREPLY=($(compgen -W "--cwd --env --timeout --result --json --" -- "$cur")) ;;
		esac
		return
	fi
	case $prev in
	-p | --profile)
		COMPREPLY=($(compgen -W "$(_agentbox_profiles)" -- "$cur") $(compgen -f -X '!*.ini' -- "$cur"))
		return ;;
	--net)
		COMPREPLY=($(compgen -W "none proxy host" -- "$cur"))
		return ;;
	--ro | --rw | --tmpfs | --hide | --overlay | --changes | --chdir | --audit | --result | verify | summary)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	changes | diff | promote | discard)
		COMPREPLY=($(compgen -W "--json --audit $([ "$prev" = diff ] && echo --max-bytes)" -- "$cur")
			$(compgen -f -- "$cur"))
		return ;;
	--setenv | --allow | --resolve | --timeout | --max-bytes)
		return ;;
	esac
	if [ "$COMP_CWORD" = 1 ]; then
		COMPREPLY=($(compgen -W "session exec mcp audit changes diff promote discard" -- "$cur"))
	fi
	COMPREPLY+=($(compgen -W "-p --profile --audit --ro --rw --tmpfs --hide --overlay --changes --setenv --net
		--allow --resolve --timeout --result --json --chdir --explain --check --strict --paths --version -h --help --" -- "$cur"))
}
complete -F _agentbox agentbox

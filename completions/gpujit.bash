# bash completion for gpujit: commands, cache/server/trace verbs, each command's options and the
# values some of them take. Options are read from `gpujit COMMAND --help`, so they are never out
# of date with the gpujit that runs; after `profile --` the command line of another program.

_gpujit_help_options()
{
  # every option a help line starts with, or that follows ", " or "[" (usage lines)
  "$1" "${@:2}" --help 2>/dev/null |
    grep -oE '(^ +|, |\[)--?[A-Za-z][A-Za-z0-9-]*(\[?=)?' |
    sed -E 's/^( +|, |\[)//' | awk '{ if (sub(/\[=$/, "")) { print; print $0 "=" } else print }' | sort -u
}

_gpujit_help_words()
{
  # the first word of each line in the "commands:" section (or the lines after a usage's verbs)
  "$1" "${@:2}" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p'
}

_gpujit()
{
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} prog=${COMP_WORDS[0]}
  local cmd="" sub="" w i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [[ $w == -- ]]; then
      if [[ $cmd == profile ]]; then # the profiled program's own command line
        if declare -F _command_offset >/dev/null; then
          _command_offset $((i + 1))
        elif ((i + 1 == COMP_CWORD)); then
          COMPREPLY=($(compgen -c -- "$cur"))
        else
          COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return
      fi
      COMPREPLY=($(compgen -f -- "$cur")) # operands only
      return
    fi
    if [[ -z $cmd && $w != -* ]]; then
      cmd=$w
    elif [[ -n $cmd && -z $sub && $w != -* && $cmd =~ ^(cache|server|trace|ncu)$ ]]; then
      sub=$w
    elif [[ $cmd == profile && -z $sub && $w == report && ${COMP_WORDS[i-1]} == profile ]]; then
      sub=$w # profile report NAME: a saved profile, not a command
    fi
  done

  case $prev in # values
  --arch) COMPREPLY=($(compgen -W "sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 sm_103 sm_110 sm_120 sm_121
                                   compute_75 compute_80 compute_86 compute_89 compute_90 compute_100 compute_120" -- "$cur")); return ;;
  --std) COMPREPLY=($(compgen -W "c++03 c++11 c++14 c++17 c++20" -- "$cur")); return ;;
  --timer) COMPREPLY=($(compgen -W "events cupti cupti-concurrent" -- "$cur")); return ;;
  --Ofast-compile) COMPREPLY=($(compgen -W "0 min mid max" -- "$cur")); return ;;
  -I | --cache-dir | --base-dir | --out-dir | --keep | --extract)
    COMPREPLY=($(compgen -d -- "$cur")); return ;;
  -o | --modules | --launch | --trace | --base | --new | --html | --text | --json | --csv)
    [[ $prev != --json && $prev != --csv ]] && { COMPREPLY=($(compgen -f -- "$cur")); return; } ;;
  -D | -U | -Xnvrtc | --name-expr | --kernel | --grid | --block | --shared | --arg | --warmup | --repeat | \
    --noise | --timeout | --device | -j | --jobs | --top | --max-events | --step | --schedule | --metric | --file | --workers | \
    --max-pch | --idle-timeout | --fail-above | --min-ms | --key | --max-size | --older-than | --used-since | \
    --max-member | --maxrregcount | --remote-cache)
    return ;; # free values
  esac

  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "$(_gpujit_help_options "$prog")" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$(_gpujit_help_words "$prog")" -- "$cur"))
    fi
    return
  fi
  if [[ -z $sub && $cur != -* ]]; then
    case $cmd in
    cache) COMPREPLY=($(compgen -W "$(_gpujit_help_words "$prog" cache)" -- "$cur")); return ;;
    server) COMPREPLY=($(compgen -W "start stop status run" -- "$cur")); return ;;
    trace) COMPREPLY=($(compgen -W "analyze diff" -- "$cur")); return ;;
    ncu) COMPREPLY=($(compgen -W "hotspots" -- "$cur")); return ;;
    profile) if [[ ${COMP_WORDS[COMP_CWORD-1]} == profile ]]; then
      COMPREPLY=($(compgen -W "report" -- "$cur") $(compgen -c -- "$cur")); return
    fi ;;
    esac
  fi
  if [[ $cur == -* ]]; then
    local help=("$cmd")
    [[ $cmd == trace && $sub == diff ]] && help=(trace diff)
    [[ $cmd == trace && $sub != diff ]] && help=(trace)
    [[ $cmd == profile && $sub == report ]] && help=(profile report)
    COMPREPLY=($(compgen -W "$(_gpujit_help_options "$prog" "${help[@]}")" -- "$cur"))
    [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
    return
  fi
  case $cmd in
  build | run) COMPREPLY=($(compgen -f -X '!*.@(cu|cuh|json)' -- "$cur") $(compgen -d -- "$cur")) ;;
  profile) if [[ $sub == report ]]; then COMPREPLY=($(compgen -f -- "$cur")); else COMPREPLY=($(compgen -c -- "$cur")); fi ;;
  *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _gpujit gpujit

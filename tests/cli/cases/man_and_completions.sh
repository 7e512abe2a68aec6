# exit: 0
# expect: *man lint: clean*
# expect: *man options: all*
# expect: *man commands: all*
# expect: *bash <gpujit bu>: build*
# expect: *bash <gpujit build --js>: --json --json=*
# expect: *bash <gpujit cache st>: stats*
# expect: *bash <gpujit run --tim>: --time-trace --time-trace= --timeline --timeout --timer*
# expect: *bash <gpujit trace diff --mark>: --markdown*
# expect: *bash <gpujit build --arch sm_9>: sm_90 sm_90a*
# expect: *bash <gpujit server st>: start stop status*
# expect: *bash <gpujit profile -- gpuji>: *gpujit*
# expect: *zsh commands: build:compile CUDA C modules*
# expect: *zsh build options: * --json * --name-expr * -I *
# expect: *zsh cache verbs: *stats:entries, bytes, hits*
# expect: *zsh arch: values arch sm_75*
# expect: *zsh profile after --: normal ls -l*
# The man page (docs/man/gpujit.1) lints clean and names every command and every option the
# help texts give; the bash and zsh completions offer commands, verbs, options (read from the
# help of the gpujit that runs) and values, and the profiled program's command line after --.
for tool in groff zsh; do
  command -v $tool >/dev/null || { echo "skip: no $tool here (scripts/test.sh installs it)"; exit 77; }
done
root=$(cd "$EXAMPLES/.." && pwd)
man=$root/docs/man/gpujit.1
dir=$(dirname "$GPUJIT")
export PATH="$dir:$PATH"
w=$(groff -man -ww -z "$man" 2>&1)
echo "man lint: ${w:-clean}"
text=$(groff -man -Tascii -P-cbou -rLL=200n "$man" 2>/dev/null)
missing=""
for cmd in "" build run cache "trace" "trace diff" ncu server profile env; do
  for o in $("$GPUJIT" $cmd --help | grep -oE '(^ +|, |\[)--?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^( +|, |\[)//' | sort -u); do
    grep -qF -- "$o" <<<"$text" || missing="$missing $cmd:$o"
  done
done
echo "man options: ${missing:-all}"
missing=""
for c in $("$GPUJIT" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p'); do
  case $c in version|help) continue ;; esac
  grep -qE "^   $c" <<<"$text" || missing="$missing $c"
done
echo "man commands: ${missing:-all}"
bash -c '
source "$1/completions/gpujit.bash"
t() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpujit; echo "bash <$*>: ${COMPREPLY[*]}"; }
t gpujit bu; t gpujit build --js; t gpujit cache st; t gpujit run --tim; t gpujit trace diff --mark
t gpujit build --arch sm_9; t gpujit server st; t gpujit profile -- gpuji
' _ "$root"
# zsh: the completion system's builtins stubbed to print what they were given
z() {
  zsh -f -c '
compadd() { if [[ $1 == -a ]]; then print -r -- " ${(P)2} "; else print -r -- " $* "; fi }
_describe() { print -r -- "${(Pj: | :)2}"; }
_files() { print -r -- "files $*"; }
_values() { print -r -- "values $*"; }
_command_names() { print -r -- "command names"; }
_normal() { print -r -- "normal $words"; }
src=$1; shift; words=("$@"); CURRENT=$#; PREFIX=${words[CURRENT]}
source "$src"' _ "$root/completions/_gpujit" "$@"
}
echo "zsh commands: $(z gpujit '' | head -c 200)"
echo "zsh build options: $(z gpujit build -)"
echo "zsh cache verbs: $(z gpujit cache '')"
echo "zsh arch: $(z gpujit build --arch '')"
echo "zsh profile after --: $(z gpujit profile -q -- ls -l)"

# exit: 0
# expect: *ptxas seen: yes*
# expect: *no dropped-variables note: yes*
# gpujit's own lean build under gpujit profile: the toolkit's ptxas, which gpujit runs through
# pipes with what is preloaded into gpujit taken out of its environment, keeps gpujit profile's
# injection library — it is recorded as every process is, with no note that gpujit's variables
# were dropped and put back.
# a sanitizer build of gpujit cannot run with a library preloaded before its runtime
if ldd "$GPUJIT" 2>/dev/null | grep -q 'lib[at]san'; then echo "skip: gpujit is a sanitizer build"; exit 77; fi
out=$($GPUJIT profile -- $GPUJIT build --no-cache -o k.cubin "$EXAMPLES/saxpy.cu" 2>&1)
case "$out" in *"ptxas 1 ×"*) echo "ptxas seen: yes";; *) echo "$out" | grep -q "no ptxas" && { echo "skip: no ptxas"; exit 77; }; echo "$out";; esac
case "$out" in *"variables dropped"*) echo "$out" | grep note;; *) echo "no dropped-variables note: yes";; esac

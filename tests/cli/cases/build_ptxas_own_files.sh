# exit: 0
# expect: *built: 0*
# expect: *argv names /dev: 0*
# expect: *output named: -o /proc/self/fd/1*
# expect: *no cubin: 3 *ptxas failed (exit 0): no cubin in its output file /proc/self/fd/1 (0 bytes)*
# expect: *killed: 143*
# expect: *left in TMPDIR: none*
# expect: *ptxas still running: no*
# expect: *interrupted: 130*
# expect: *left after Ctrl-C: none*
# reject: *tmpxft_*
# The lean pass's ptxas (a wrapper of the toolkit's, in a copy of the toolkit) is never given a
# path outside gpujit's own files: no /dev/stdout, which a ptxas run as root creates as a regular
# file where it is missing; a ptxas that writes no cubin is named with the file it was to write;
# and a build killed (SIGTERM, or Ctrl-C to its process group) while ptxas runs leaves none of
# ptxas's temporary files in TMPDIR.
cuda=${CUDA_PATH:-/usr/local/cuda}
[ -x "$cuda/bin/ptxas" ] || { echo "skip: no ptxas in $cuda"; exit 77; }
mkdir -p tk/bin tmp
for f in "$cuda"/*; do [ "$(basename "$f")" = bin ] || ln -s "$f" tk/; done
for f in "$cuda"/bin/*; do [ "$(basename "$f")" = ptxas ] || ln -s "$f" tk/bin/; done
cat > tk/bin/ptxas <<SH
#!/bin/sh
echo "\$*" >> "$PWD/argv.log"
case "\$FAKE_PTXAS" in
  empty) exit 0 ;;
  slow) touch "\$TMPDIR/tmpxft_0001_fake.cubin"; echo \$\$ > "$PWD/ptxas.pid"; exec sleep 60 ;;
esac
exec "$cuda/bin/ptxas" "\$@"
SH
chmod +x tk/bin/ptxas
export CUDA_PATH=$PWD/tk TMPDIR=$PWD/tmp
$GPUJIT build -q --no-cache --arch sm_90 -o a.cubin "$EXAMPLES/saxpy.cu"; echo "built: $?"
[ -s argv.log ] || echo "ptxas never ran"
echo "argv names /dev: $(grep -c /dev/ argv.log)"
echo "output named: $(grep -o -- '-o [^ ]*' argv.log | head -1)"
out=$(FAKE_PTXAS=empty $GPUJIT build -q --no-cache --arch sm_90 -o b.cubin "$EXAMPLES/saxpy.cu" 2>&1); echo "no cubin: $? $out"
FAKE_PTXAS=slow $GPUJIT build -q --no-cache --arch sm_90 -o c.cubin "$EXAMPLES/saxpy.cu" >/dev/null 2>&1 &
build=$!
for _ in $(seq 300); do [ -s ptxas.pid ] && break; sleep 0.1; done
[ -s ptxas.pid ] || echo "the slow ptxas never started"
kill -TERM $build; wait $build; echo "killed: $?"
left=$(find tmp -mindepth 1 | sed "s|^tmp/||" | tr '\n' ' ')
echo "left in TMPDIR: ${left:-none}"
sleep 0.2
echo "ptxas still running: $(kill -0 "$(cat ptxas.pid)" 2>/dev/null && echo yes || echo no)"
kill "$(cat ptxas.pid)" 2>/dev/null
# Ctrl-C: SIGINT to the build's process group, ptxas included (job control gives the build a
# group of its own, with SIGINT not ignored)
rm -f ptxas.pid
set -m
FAKE_PTXAS=slow $GPUJIT build -q --no-cache --arch sm_90 -o d.cubin "$EXAMPLES/saxpy.cu" >/dev/null 2>&1 &
build=$!
for _ in $(seq 300); do [ -s ptxas.pid ] && break; sleep 0.1; done
kill -INT -- -"$build"; wait $build; echo "interrupted: $?"
set +m
left=$(find tmp -mindepth 1 | sed "s|^tmp/||" | tr '\n' ' ')
echo "left after Ctrl-C: ${left:-none}"
kill "$(cat ptxas.pid)" 2>/dev/null
exit 0

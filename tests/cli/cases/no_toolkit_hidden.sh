# exit: 0
# expect: *no CUDA toolkit found*set CUDA_PATH to a toolkit root, or pip install 'gpujit?cu13?'*hidden build: rc=9*
# expect: *toolkit none found: no CUDA toolkit found*NVRTC none*hidden version: rc=0*
# reject: *internal*
# No toolkit anywhere: /usr/local/cuda* covered by empty directories in a private mount namespace
# (as scripts/pip_toolkit_test.sh does), CUDA_PATH and CUDA_HOME unset, so neither the default
# root nor the loader's cache finds an NVRTC: exit 9 with the fix, and --version still answers.
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "skip: hiding the toolkit needs root and a mount namespace (unshare -m)"; exit 77
fi
cp "$EXAMPLES/saxpy.cu" .
hide='for d in /usr/local/cuda*; do [ -d "$d" ] && mount -t tmpfs none "$(readlink -f "$d")"; done; '
env -u CUDA_PATH -u CUDA_HOME unshare -m sh -c "$hide"'"$0" build --arch sm_90 -o s.cubin saxpy.cu; echo "hidden build: rc=$?"; "$0" --version; echo "hidden version: rc=$?"' "$GPUJIT" 2>&1

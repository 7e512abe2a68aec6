# exit: 0
# expect: *ncu as the command: status 3*
# expect: *under an Nsight tool: status 4*
# expect: *note: the command is an Nsight tool: it owns CUPTI*
# expect: *note: an Nsight tool runs this profile: it owns CUPTI*
# Nsight Compute refuses to start when CUDA_INJECTION64_PATH names another tool, run inside gpujit
# profile or running it (measured on the H100, both ways round): then only the preload goes in, and
# the report says CUPTI is Nsight's. A stand-in `ncu` checks the environment it is given.
mkdir -p bin
printf '#!/bin/sh\ntest -z "$CUDA_INJECTION64_PATH$NVTX_INJECTION64_PATH" && test -n "$LD_PRELOAD" && exit 3\nexit 1\n' >bin/ncu
chmod +x bin/ncu
$GPUJIT profile --json a.json -- bin/ncu; echo "ncu as the command: status $?"
NV_TPS_LAUNCH_TOKEN="Interactive Profile" $GPUJIT profile --json b.json -- sh -c 'test -z "$CUDA_INJECTION64_PATH" && test -n "$LD_PRELOAD" && exit 4'; echo "under an Nsight tool: status $?"
python3 -c 'import json; [print("note:", n) for f in ("a.json", "b.json") for n in json.load(open(f))["notes"]]'

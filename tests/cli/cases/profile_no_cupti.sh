# exit: 0
# expect: *status 3*
# expect: *no injection hook: yes*
# expect: *note: --no-cupti: CUPTI was left to the program*
# --no-cupti leaves CUPTI to the program: the driver's injection hook is not set in it (PyTorch's
# profiler and other CUPTI tools inside the command work as without gpujit), and the report says so.
$GPUJIT profile --no-cupti --json p.json -- sh -c 'test -z "$CUDA_INJECTION64_PATH" && test -n "$LD_PRELOAD" && exit 3'; echo "status $?"
$GPUJIT profile --no-cupti -- sh -c 'test -z "$CUDA_INJECTION64_PATH$NVTX_INJECTION64_PATH"' && echo "no injection hook: yes"
python3 -c 'import json; [print("note:", n) for n in json.load(open("p.json"))["notes"]]'

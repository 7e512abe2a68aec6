# exit: 0
# expect: *env: libgpujit_inject.so*
# expect: *steps: 2:warmup 3:active 4:active 5:after | nvtx*
# expect: *nvtx: 4 step, 4 inner, 4 tick, 1 mydomain, clock host 13 of 13*
# expect: *trace: nvtx slices 13: dom inner inner inner inner step step step step tick tick tick tick*
# expect: *report: steps of process * (from nvtx; schedule wait=2,warmup=1,active=2,repeat=1*
# expect: *own tool: NVTX_INJECTION64_PATH is set by another tool (*/libother.so): --step nvtx:step counts steps through CUPTI's NVTX callbacks*
# expect: *own tool env: libother.so*
# `--step nvtx:NAME` with no GPU: gpujit's own NVTX injection (NVTX_INJECTION64_PATH names the
# injection library) counts the steps from a C program's nvtx3 ranges and marks — each range or
# mark named `step` begins a step — and writes the NVTX ranges of the recorded steps (warmup,
# active, the one after) on the host clock, as CUPTI's marker records showed them. A program whose
# NVTX_INJECTION64_PATH another tool set keeps it (and today's CUPTI path), said in a note.
cuda=${CUDA_PATH:-/usr/local/cuda}
command -v cc >/dev/null || { echo "skip: no C compiler"; exit 77; }
[ -f "$cuda/include/nvtx3/nvToolsExt.h" ] || { echo "skip: no nvtx3 headers in $cuda/include"; exit 77; }
cat > prog.c <<'C'
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
  const char *inj = getenv("NVTX_INJECTION64_PATH");
  nvtxDomainHandle_t d = nvtxDomainCreateA("mydomain");
  printf("env: %s\n", inj ? (strrchr(inj, '/') ? strrchr(inj, '/') + 1 : inj) : "(unset)");
  for (int i = 0; i < 8; i++) {
    nvtxRangePushA("step"); /* each begins a step: the first step 1 */
    nvtxRangePushA("inner");
    nvtxMarkA("tick");
    nvtxRangePop();
    if (i == 2) { /* step 3, the first active one: a domain's range */
      nvtxEventAttributes_t a = {.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                 .messageType = NVTX_MESSAGE_TYPE_ASCII, .message.ascii = "dom"};
      nvtxDomainRangePushEx(d, &a);
      nvtxDomainRangePop(d);
    }
    nvtxRangePop();
  }
  return 0;
}
C
cc -I"$cuda/include" prog.c -o prog -ldl || exit 1
"$GPUJIT" profile -q --keep rec --trace t.json --step nvtx:step --schedule wait=2,warmup=1,active=2,repeat=1 -- ./prog
python3 - <<'PY'
import glob, json
steps, nvtx = [], []
for f in sorted(glob.glob("rec/*.jsonl")):
    for line in open(f):
        r = json.loads(line)
        if r["k"] == "step":
            steps.append(r)
        elif r["k"] == "nvtx":
            nvtx.append(r)
print("steps:", " ".join("%d:%s" % (r["n"], r["phase"]) for r in steps), "|", " ".join(sorted({r["src"] for r in steps})))
names = [r["name"] for r in nvtx]
print("nvtx: %d step, %d inner, %d tick, %d mydomain, clock host %d of %d" % (
    names.count("step"), names.count("inner"), names.count("tick"),
    sum(r["domain"] == "mydomain" for r in nvtx), sum("t0" in r for r in nvtx), len(nvtx)))
ev = json.load(open("t.json"))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
sl = sorted(e["name"] for e in ev if e.get("cat") == "nvtx" and e.get("ph") in ("X", "B"))
print("trace: nvtx slices %d: %s" % (len(sl), " ".join(sl)))
PY
"$GPUJIT" profile report rec 2>&1 | grep -m1 "steps of process" | sed 's/^ */report: /'
# another tool's NVTX injection: it stays, and a note says how steps are counted then
NVTX_INJECTION64_PATH=$PWD/libother.so "$GPUJIT" profile --step nvtx:step --schedule wait=2,active=1 -- ./prog 2>&1 |
  sed -n 's/^env: /own tool env: /p; s/.*note: \(NVTX_INJECTION64_PATH is set\)/own tool: \1/p'

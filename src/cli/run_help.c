/* `gpujit run --help`: every option of the usage line described. */
#include <stdio.h>

#include "run.h"

void run_help(void)
{
  printf("usage: gpujit run [options] FILE.cu... --kernel NAME --grid X[,Y,Z] --block X[,Y,Z]\n"
         "                  [--shared BYTES] --arg SPEC...\n"
         "       gpujit run [options] FILE.cu... --launch SPEC.json\n\n"
         "Build (through the cache), load and run kernels, time them with CUDA events, and report\n"
         "what compiling cost against what executing costs.\n\n"
         "argument specs:\n"
         "  i32:V u32:V i64:V u64:V f32:V f64:V   scalars\n"
         "  buf:TYPE:COUNT[:INIT][,name=N][,out=checksum|out=FILE]\n"
         "                       a device buffer; INIT: zeros, ones, iota, random[:SEED] or a number\n"
         "  @N                   the buffer named N by an earlier argument\n"
         "  e.g. saxpy: --arg i32:1048576 --arg f32:2.0 --arg buf:f32:1048576:random\n"
         "              --arg buf:f32:1048576:zeros,out=checksum\n\n"
         "launch file: {\"launches\": [{\"kernel\": \"saxpy\", \"grid\": [4096], \"block\": [256],\n"
         "              \"shared\": 0, \"args\": [\"i32:1048576\", …]}, …]}  (run in order)\n\n"
         "launch options:\n"
         "  --kernel NAME        the kernel: its name as written (a name expression such as\n"
         "                       'scale<float>' is lowered) or its symbol\n"
         "  --grid X[,Y,Z]       blocks per grid\n"
         "  --block X[,Y,Z]      threads per block\n"
         "  --shared BYTES       dynamic shared memory per block (default 0)\n"
         "  --arg SPEC           the next kernel argument, in order (see argument specs; repeatable)\n"
         "  --launch SPEC.json   several launches from a file instead (see launch file)\n\n"
         "run options:\n"
         "  --warmup N           untimed runs first (default 3)\n"
         "  --repeat N           timed runs (default 20)\n"
         "  --bench              sample until the noise criterion (see --noise, --timeout)\n"
         "  --noise F            relative noise to stop at, default 0.005\n"
         "  --timeout S          benchmark time limit, default 15\n"
         "  --l2-flush           overwrite L2 before each benchmark sample (cold timings)\n"
         "  --timeline           print every timed activity\n"
         "  --timer T            events (default), cupti (serialised kernel records: as ncu) or\n"
         "                       cupti-concurrent (overlap on the timeline; short kernels read short)\n"
         "  --device N           device ordinal (default $GPUJIT_DEVICE, else 0)\n"
         "  --ncu-command        print a ready Nsight Compute command line per kernel, run nothing\n"
         "options shared with build:\n%s", cli_module_help);
}

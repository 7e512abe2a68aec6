# exit: 0
# expect: *by SASS instruction (this export has no CUDA lines; ncu -i REPORT.ncu-rep --page source --csv --print-source cuda,sass gives them)*
# expect: *block_sum@0x7f2ad97ac2e0     SHFL.DOWN P0, R5, R4, 0x1, 0x1f*
# expect: *ncu_export_cuda.csv: this export has source text but no metrics*make one with "ncu -i REPORT.ncu-rep --page source --csv --print-source cuda,sass"*
# expect: *rc=5*
# expect: *k.ncu-rep: reading a report needs Nsight Compute's ncu, not found in $GPUJIT_NCU (/nonexistent/ncu)*
# Every export of a real report: instructions from the default export, the command for one that lacks metrics.
D="$EXAMPLES/../tests/data"
$GPUJIT ncu hotspots --top 1 "$D/ncu_export_default.csv" || exit 1
$GPUJIT ncu hotspots "$D/ncu_export_cuda.csv"; echo "rc=$?"
printf 'NVR\0' > k.ncu-rep
GPUJIT_NCU=/nonexistent/ncu $GPUJIT ncu hotspots k.ncu-rep
exit 0

# exit: 0
# expect: Warp Stall Sampling (All Samples), by CUDA source line*341  88.6%  saxpy.cu:6 * y?i? = a * x?i? + y?i?;*
$GPUJIT ncu hotspots --top 2 "$EXAMPLES/../tests/data/ncu_saxpy_source.csv"

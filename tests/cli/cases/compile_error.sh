# exit: 3
# expect: *bad.cu(3): error: identifier "x" is undefined*
# expect: *gpujit: error: compile failed: /*/bad.cu:3:10: identifier "x" is undefined*
# reject: *bad.cubin*
printf '__global__ void k(float *y)\n{\n  y[0] = x;\n}\n' > bad.cu
$GPUJIT build --arch sm_90 bad.cu; rc=$?
ls
exit $rc

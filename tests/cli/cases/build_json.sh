# exit: 0
# expect: *"format":*"gpujit-build",*"version":*1,*"name":*"scale",*"status":*
# expect: *"scale<float>":*"_Z5scaleIfEviT_PS0_"*
# expect: *"kind":*"cubin"*
$GPUJIT build --json --arch sm_90 --name-expr 'scale<float>' "$EXAMPLES/scale.cu"

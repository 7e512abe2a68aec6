# exit: 0
# expect: gpujit 0.1.0*NVRTC 1*.*nvJitLink 1*.*
$GPUJIT --version

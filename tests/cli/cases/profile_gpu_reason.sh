# exit: 0
# expect: *a note on no GPU: *GPU: not recorded (no process created a CUDA context)*
# expect: *--no-cupti: *GPU: not recorded (CUPTI did not run: see the note below)*note: --no-cupti: CUPTI was left to the program*
# reject: *see the notes*
# "GPU: not recorded" gives the real reason: a note about something else (a child started with
# env -i) is no reason to send the reader to the notes; --no-cupti is one, and its note says so.
echo "a note on no GPU: $($GPUJIT profile -- sh -c 'env -i /bin/sh -c true' 2>&1 | grep -E 'GPU:|note:' | tr '\n' ' ')"
echo "--no-cupti: $($GPUJIT profile --no-cupti -- true 2>&1 | grep -E 'GPU:|note:' | tr '\n' ' ')"

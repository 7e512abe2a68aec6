# exit: 4
# expect: *gpujit: error: */locked.cu: Permission denied*
echo '__global__ void k() {}' > locked.cu
chmod 000 locked.cu
if [ "$(id -u)" = 0 ]; then
  # root reads anything: run as nobody, who really is refused
  chmod 755 .
  exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUJIT" build "$PWD/locked.cu"
fi
$GPUJIT build "$PWD/locked.cu"

# exit: 0
# expect: *by name: 0*
# gpujit run from PATH (argv[0] "gpujit", no directory in it) still finds its injection library
# beside the executable, as an installed gpujit and the Python package's are run.
PATH="$(dirname "$GPUJIT"):$PATH" gpujit profile -q -- true; echo "by name: $?"

"""``python -m gpujit``: the gpujit command installed with the package."""
import os
import sys


def main() -> None:
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpujit")
    if not os.access(exe, os.X_OK):
        sys.exit("gpujit: the command is missing from the package (%s): reinstall it" % exe)
    os.execv(exe, ["gpujit"] + sys.argv[1:])


if __name__ == "__main__":
    main()

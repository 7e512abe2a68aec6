#!/usr/bin/env python3
"""The kernel cache is never stale: each class builds through the cache, changes something that
NVRTC's preprocessor looks at, builds through the cache again and compares that image's code with
a build of the same inputs made with --no-cache after the change. A class fails when the cached
build (a hit, or a compile whose stored entry is then served) gives other code than NVRTC gives
for the files as they are now: the .text*, .nv.constant* and .nv.global.init* sections of a cubin
(read here with struct), or a PTX's text less its comment lines.

usage: run.py PATH/TO/gpujit [--python PYTHON] [-k NAME]... [-j N] [--keep] [--times]
       run.py --list

  --python PY   the Python classes run their snippets with PY, which must import gpujit
                (skipped, with the reason, without it)
  -k NAME       run only the classes whose name contains NAME (repeatable)
  -j N          classes run N at a time (default 1)
  --keep        keep each class's temporary directory (printed on stderr)
  --times       each class's wall time on stderr
  --list        each class's name and what it changes (its docstring)

Prints one line per class (PASS name / FAIL name: why / SKIP name: reason), then
"N passed, N failed, N skipped"; exits 1 when any failed. Standard library only.

The classes live by family, one file each (stale_<family>.py: header content, the search path,
computed includes, links, preludes, LTO, checkouts, the toolkit, other filesystems, changes during
the compile, the build server, project builds, the cache moved, Python), over what they share
(stale_harness.py). A new class goes in its family's file, decorated with @stale.
"""
import argparse
import concurrent.futures
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stale_harness import CLASSES, Case, Fail, Skip  # noqa: E402
# the families of classes, one file each, in the order they run (each registers its classes with @stale)
import stale_content  # noqa: E402,F401
import stale_search_path  # noqa: E402,F401
import stale_macros  # noqa: E402,F401
import stale_links  # noqa: E402,F401
import stale_preludes  # noqa: E402,F401
import stale_lto  # noqa: E402,F401
import stale_checkouts  # noqa: E402,F401
import stale_toolkit  # noqa: E402,F401
import stale_filesystems  # noqa: E402,F401
import stale_during_compile  # noqa: E402,F401
import stale_server  # noqa: E402,F401
import stale_project  # noqa: E402,F401
import stale_moved  # noqa: E402,F401
import stale_python_api  # noqa: E402,F401


class Suite:
    def __init__(self, gpujit, python=None, keep=False, root=None):
        self.gpujit, self.python, self.keep = gpujit, python, keep
        self.aged = False  # --aged: each cached build waits until every stamp can be trusted
        self.root = tempfile.mkdtemp(prefix="gpujit-stale-", dir=root)
        # gpujit's settings of the cache, the server and the target are the classes' own; those
        # that say where the toolchain is (a pip toolkit's NVRTC, the worker) are kept
        keep = ("GPUJIT_NVRTC_LIBRARY", "GPUJIT_NVJITLINK_LIBRARY", "GPUJIT_LIBCUDA", "GPUJIT_WORKER")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_") or k in keep}
        env.update(NO_COLOR="1", GPUJIT_SERVER="0")
        self.env = env
        self._tk = None
        self._tk_lock = threading.Lock()

    def toolkit_root(self):
        for v in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
            if v and os.path.isdir(os.path.join(v, "include")):
                return os.path.realpath(v)
        raise Skip("no CUDA toolkit at $CUDA_PATH, $CUDA_HOME or /usr/local/cuda")

    def toolkit_template(self):
        """Once per run: the toolkit with include/ copied, bin/ a directory of links, the rest links."""
        with self._tk_lock:
            if self._tk:
                return self._tk
            real = self.toolkit_root()
            if not os.path.exists(os.path.join(real, "bin", "ptxas")):
                raise Skip("the toolkit at %s has no bin/ptxas" % real)
            tk = os.path.join(self.root, "toolkit-copy")
            os.makedirs(os.path.join(tk, "bin"))
            for n in os.listdir(real):
                if n not in ("include", "bin"):
                    os.symlink(os.path.join(real, n), os.path.join(tk, n))
            for n in os.listdir(os.path.join(real, "bin")):
                os.symlink(os.path.join(real, "bin", n), os.path.join(tk, "bin", n))
            shutil.copytree(os.path.join(real, "include"), os.path.join(tk, "include"), symlinks=True)
            self._tk = tk
            return tk

    def run_one(self, fn):
        """(result, why): 'PASS', 'FAIL' or 'SKIP'."""
        if fn.python and not self.python:
            return "SKIP", "no --python interpreter given"
        t = Case(self, fn.__name__)
        try:
            fn(t)
            return "PASS", ""
        except Fail as e:
            return "FAIL", str(e)
        except Skip as e:
            return "SKIP", str(e)
        except Exception as e:  # a class that breaks is a failure, said in one line
            return "FAIL", "%s: %s" % (type(e).__name__, e)
        finally:
            for c in reversed(t.cleanups):
                try:
                    c()
                except Exception:
                    pass
            if self.keep:
                print("kept %s" % t.dir, file=sys.stderr)
            else:
                shutil.rmtree(t.dir, ignore_errors=True)

    def close(self):
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


def select_classes(patterns):
    return [c for c in CLASSES if not patterns or any(p in c.__name__ for p in patterns)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gpujit", nargs="?")
    ap.add_argument("--python")
    ap.add_argument("-k", action="append", default=[], metavar="NAME")
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--times", action="store_true")
    ap.add_argument("--aged", action="store_true",
                    help="wait a second before each cached build, so that every stat and directory stamp the "
                         "cache recorded is old enough to be trusted (its fast paths, not only its slow ones)")
    ap.add_argument("--list", action="store_true", help="print the classes' names and what each changes")
    a = ap.parse_args(argv)
    classes = select_classes(a.k)
    if a.list:
        for c in classes:
            print("%s%s: %s" % (c.__name__, " (python)" if c.python else "", " ".join(c.__doc__.split())))
        return 0
    if not a.gpujit:
        ap.error("the gpujit binary is required")
    suite = Suite(os.path.abspath(a.gpujit), a.python, a.keep)
    suite.aged = a.aged
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    start = time.monotonic()

    def one(fn):
        t0 = time.monotonic()
        return fn, suite.run_one(fn), time.monotonic() - t0

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, a.j)) as ex:
            for fn, (res, why), secs in ex.map(one, classes):
                counts[res] += 1
                why = " ".join(why.split())
                print("%s %s%s" % (res, fn.__name__, ": " + why if why else ""), flush=True)
                if a.times:
                    print("  %.2f s" % secs, file=sys.stderr, flush=True)
    finally:
        suite.close()
    if a.times:
        print("total %.1f s" % (time.monotonic() - start), file=sys.stderr)
    print("%d passed, %d failed, %d skipped" % (counts["PASS"], counts["FAIL"], counts["SKIP"]))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())

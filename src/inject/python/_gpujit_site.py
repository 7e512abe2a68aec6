"""The start of gpujit's Python hook, shared by its sitecustomize and usercustomize (usercustomize
starts it where the program's own sitecustomize comes first on PYTHONPATH and shadows ours).

It starts the framework adapters (Python 3.9+), takes the hook's directory off sys.path, and runs
the program's own module of that name, found on the rest of the path, as site would have: an
error in it printed as site prints one, the module then not importable. Where the program has
none, ours leaves sys.modules once site is done with it, so ``import sitecustomize`` fails as it
would without gpujit. Valid Python 2 too: an older interpreter runs the program's module and
leaves one note for the report (which process, which Python), and prints nothing of ours."""
import os
import sys


def _print_error(name, err):
    if sys.flags.verbose:
        sys.excepthook(*sys.exc_info())
    elif sys.version_info[0] >= 3:
        sys.stderr.write("Error in %s; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                         % (name, err.__class__.__name__, err))
    else:
        sys.stderr.write("'import %s' failed; use -v for traceback\n" % name)


def _find(name, rest):
    """The program's own module `name` on the path after ours: (load, path), or None."""
    if sys.version_info[0] >= 3:
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec(name, rest)
        if spec is None or spec.loader is None:
            return None

        def load():
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)

        return load
    import imp

    try:
        found = imp.find_module(name, rest)
    except ImportError:
        return None

    def load():
        try:
            imp.load_module(name, *found)
        finally:
            if found[0] is not None:
                found[0].close()

    return load


def _run_own(name, ours, here):
    """Runs the program's own `name`; True where it ran and stays in sys.modules."""
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        load = _find(name, rest)
    except Exception:  # a path entry site would have passed over too
        load = None
    if load is None:
        return False
    try:
        load()
    except ImportError as err:  # site: an ImportError of the module's own name is no error
        sys.modules[name] = ours  # site's import of ours pops it: it is taken out once that is done
        if getattr(err, "name", None) != name:
            _print_error(name, err)
        return False
    except Exception as err:
        sys.modules[name] = ours
        _print_error(name, err)
        return False
    except BaseException:  # SystemExit, KeyboardInterrupt: on to site, as without gpujit
        sys.modules[name] = ours
        raise
    return True


def _note_old_python():
    """An interpreter before 3.9 runs no adapter: a records file of its own (what the adapters'
    files hold: the proc record, then a note) tells the report which process was not seen, and
    why. Nothing reaches the program, whatever happens."""
    records = os.environ.get("GPUJIT_PROFILE_DIR")
    if not records or not os.path.isdir(records):
        return
    import json
    import time

    pid, t = os.getpid(), int(time.time() * 1e9)
    version = "%d.%d" % sys.version_info[:2]
    lines = [{"k": "proc", "v": 1, "pid": pid, "tid": pid, "ppid": os.getppid(), "writer": "python",
              "exe": sys.executable or "", "cmd": " ".join(getattr(sys, "argv", None) or []), "t": t},
             {"k": "note", "pid": pid, "tid": pid, "what": "python-too-old", "t": t,
              "msg": "%s runs Python %s; gpujit's framework adapters need Python 3.9+: its JAX, Triton, "
                     "torch.compile, Numba, Warp and Taichi compiles are not in this report (its NVRTC, "
                     "nvJitLink and driver calls are)" % (sys.executable or "python", version)}]
    data = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines).encode("utf-8")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(os.path.join(records, "p%d-%d.jsonl" % (pid, t)), flags, 384)  # 0600
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def start(name):
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.get(name)
    hook = None
    if sys.version_info < (3, 9):
        try:
            _note_old_python()
        except Exception:  # the program runs as it would without gpujit
            pass
    else:
        try:
            import _gpujit_profile_hook as hook

            hook.start(name)
        except KeyboardInterrupt:
            raise
        except BaseException:  # the program runs as it would without gpujit
            hook = None
    # the program sees the path it gave: this directory was first on PYTHONPATH only for site
    for i, p in enumerate(sys.path):
        if p and os.path.abspath(p) == here:
            del sys.path[i]
            break
    if not _run_own(name, ours, here) and hook is not None and ours is not None:
        try:
            hook.leave(name, ours)
        except Exception:
            pass

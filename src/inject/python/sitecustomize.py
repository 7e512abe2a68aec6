"""The start-up hook of ``gpujit profile``: first on PYTHONPATH in every Python process of the
profiled tree. It registers the framework adapters (which wait, costing nothing, until the program
imports their framework), then runs the ``sitecustomize`` this file shadows, as Python would have.
It imports only the standard library, and nothing it does reaches the program as an exception."""


def _gpujit_start():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from _gpujit_profile_hook import install

        install()
    except Exception:  # the program runs as it would without gpujit
        pass
    # The sitecustomize this one shadows (Debian's Python ships one): found on the rest of the
    # path and run as itself, under this module's name, as site would have run it.
    try:
        import importlib.machinery
        import importlib.util

        rest = [p for p in sys.path if p and os.path.abspath(p) != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
    except Exception as e:  # site prints a failing sitecustomize's error and goes on: so do we
        sys.modules.setdefault("sitecustomize", sys.modules.get(__name__))
        print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s" % (type(e).__name__, e),
              file=sys.stderr)


_gpujit_start()
del _gpujit_start

"""The kernel cache is never stale, through the Python package: the classes of tests/stale/run.py
that build with gpujit.build (their snippets run with this interpreter), one test each."""
import importlib.util
import os
import sys

import pytest

import gpujit

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("stale_run", os.path.join(HERE, "..", "stale", "run.py"))
stale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stale)
PY_CLASSES = {c.__name__: c for c in stale.CLASSES if c.python}


@pytest.mark.parametrize("name", sorted(PY_CLASSES))
def test_stale(name, tmp_path):
    exe = os.path.join(os.path.dirname(os.path.abspath(gpujit.__file__)), "gpujit")  # the package's command
    suite = stale.Suite(exe, python=sys.executable, root=str(tmp_path))
    try:
        result, why = suite.run_one(PY_CLASSES[name])
    finally:
        suite.close()
    if result == "SKIP":
        pytest.skip(why)
    assert result == "PASS", "%s: %s" % (PY_CLASSES[name].__doc__.split("\n")[0], why)

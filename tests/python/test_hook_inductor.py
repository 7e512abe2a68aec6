"""The Inductor adapter's autotuning spans leave Inductor as the program knows it: the autotuner's
method is Inductor's own function (no wrapper on its class), and each first call's benchmark is a
unit of autotuning named for the kernel (on a stand-in, tests/python/hook_fakes/torch)."""
import json
import sys

import pytest

from hookutil import fake_path, notes, other_python, records, run

PROG = fake_path() + r'''
import json, pickle, threading
from torch._inductor.runtime import triton_heuristics as th
f = th.CachingAutotuner.autotune_to_one_config
own = {"qualname": f.__qualname__, "wrapped": hasattr(f, "__wrapped__"),
       "file": f.__code__.co_filename == th.__file__, "in_dict": th.CachingAutotuner.__dict__["autotune_to_one_config"] is f}
def go(name):
    k = th.CachingAutotuner(name, [3, 1, 2])
    own[name] = [k.run(), k.run()]
threads = [threading.Thread(target=go, args=("triton_poi_fused_add_%d" % i,)) for i in range(2)]
for t in threads: t.start()
for t in threads: t.join()
own["pickle"] = type(pickle.loads(pickle.dumps(th.CachingAutotuner("x", [1])))) is th.CachingAutotuner
print(json.dumps(own))
'''


def _python312():
    return other_python("python3.13", "python3.12") if sys.version_info < (3, 12) else sys.executable


def test_hook_inductor__autotuner_untouched_and_spans(tmp_path):
    py = _python312()
    if py is None:
        pytest.skip("no Python 3.12+ here (sys.monitoring)")
    r, rec = run(tmp_path, PROG, python=py)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"qualname": "CachingAutotuner.autotune_to_one_config", "wrapped": False,
                                    "file": True, "in_dict": True, "pickle": True,
                                    "triton_poi_fused_add_0": [1, 1], "triton_poi_fused_add_1": [1, 1]}, r.stdout
    units = [x for x in records(rec) if x["k"] == "unit"]
    assert sorted(u["name"] for u in units) == ["autotune triton_poi_fused_add_0", "autotune triton_poi_fused_add_1"]
    assert all(u["fw"] == "inductor" and u.get("autotune") for u in units), units
    assert all(u["t1"] - u["t0"] >= 5_000_000 for u in units), units  # three configs of 2 ms each
    assert not notes(rec), notes(rec)


def test_hook_inductor__without_monitoring(tmp_path):
    """Before Python 3.12 the autotuner cannot be watched without replacing its method: it is left
    alone, and the report says its launches count as the program's."""
    if sys.version_info >= (3, 12):
        pytest.skip("this Python has sys.monitoring")
    r, rec = run(tmp_path, PROG)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["wrapped"] is False and json.loads(r.stdout)["in_dict"] is True
    assert not [x for x in records(rec) if x["k"] == "unit"]
    assert any("sys.monitoring" in n for n in notes(rec).values()), notes(rec)

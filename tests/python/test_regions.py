"""Kernel regions from Python on a machine without a GPU: the header's directory, regions=True
switching them on (and off: the same code), bad values refused; reading them needs a launch."""
import os

import pytest

import gpujit

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "phase_timing.cu")


def test_include_dir_holds_the_header():
    d = gpujit.include_dir()
    assert os.path.isabs(d)
    assert os.path.isfile(os.path.join(d, "gpujit", "regions.cuh"))


def test_regions_true_defines_the_state(tmp_path):
    on = gpujit.build(EXAMPLE, cache=tmp_path, arch="compute_90", regions=True)
    off = gpujit.build(EXAMPLE, cache=tmp_path, arch="compute_90")
    assert b"gpujit_regions[56]" in on.image
    assert b"gpujit_regions" not in off.image
    assert on.cache_key != off.cache_key


def test_regions_off_same_code_as_without_header(tmp_path):
    body = ('extern "C" __global__ void k(float *x, int n) { int i = threadIdx.x;\n'
            '  GPUJIT_REGION("a") { if (i < n) x[i] *= 2.0f; } }\n')
    plain = body.replace('GPUJIT_REGION("a") ', "")
    with_header = gpujit.build(source="#include <gpujit/regions.cuh>\n" + body, cache=False, arch="compute_90")
    without = gpujit.build(source=plain, cache=False, arch="compute_90")
    strip = lambda ptx: [l for l in ptx.decode().splitlines() if l.strip().startswith(("ld.", "st.", "mul.", "setp"))]
    assert strip(with_header.image) == strip(without.image)


def test_regions_must_be_a_bool():
    with pytest.raises(TypeError, match="regions"):
        gpujit.build(EXAMPLE, cache=False, arch="compute_90", regions="yes")


def test_timer_without_gpu_activities_has_no_regions():
    with gpujit.ScopedTimer("host only", print=False) as t:
        pass
    assert t.regions is None and t.region_tables == []


def test_benchmark_result_without_regions():
    d = {"stop": "noise", "elapsed_s": 0.1, "cpu": {}, "cpu_times": [1.0], "devices": [(0, {}, [1.0])]}
    b = gpujit.BenchmarkResult("k", d)
    assert b.regions is None and b.region_tables == []


def test_timing_regions_arguments():
    from gpujit import _gpujit
    assert _gpujit.timing_regions([]) == []
    with pytest.raises(TypeError, match="list of device ordinals"):
        _gpujit.timing_regions(0)


WINDOWS = r'''
import json
import gpujit
from gpujit import _gpujit
got = {"fresh": [_gpujit.regions_window_begin(), _gpujit.regions_window_begin()]}
got["fresh_end"] = _gpujit.regions_window_end([])
try:
    gpujit.synchronize()  # opens the current device, where there is one
    got["opened"] = [_gpujit.current_device()]
except gpujit.GpujitError:
    got["opened"] = []
got["after"] = _gpujit.regions_window_begin()
got["after_end"] = _gpujit.regions_window_end(got["after"])
print(json.dumps(got))
'''


def test_timer_without_filter_joins_only_opened_devices():
    # A fresh process, as the devices gpujit opened are the process's (in this one, a GPU test
    # before may have opened one): before any device is opened the window joins nothing and opens
    # nothing (the second window finds none either); once one is opened (a GPU machine), that one
    import json
    import subprocess
    import sys
    from gpujit import _gpujit
    r = subprocess.run([sys.executable, "-c", WINDOWS], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["fresh"] == [[], []] and got["fresh_end"] is None
    assert got["after"] == got["opened"] and got["after_end"] is None
    with pytest.raises(TypeError, match="regions_window_begin gave"):
        _gpujit.regions_window_end(0)


def test_timing_end_result_carries_regions():
    # what timing_end returns on a GPU, built here from its parts (a region needs a device)
    table = gpujit.RegionTable(regions=[], scope="warp", launches=2, events=0, dropped=0, unmatched=0,
                               min_call_cycles=0, kernel_ns=0.0, text="regions\n", device=0)
    res = gpujit.TimingResults([], [table])
    assert res == [] and isinstance(res, list)
    assert res.regions is table and res.region_tables == [table]
    assert gpujit.TimingResults([]).regions is None


def test_python_table_has_every_field_of_gpujit_run_json():
    # gpujit run --regions --json writes its table in src/cli/run_regions.c; the Python table must
    # carry the same fields (the JSON nests cycles and ns as mean/median/p99/max)
    import dataclasses
    import re
    src = os.path.join(HERE, "..", "..", "src", "cli", "run_regions.c")
    if not os.path.exists(src):
        pytest.skip("the source tree is not beside the tests")
    text = open(src).read()
    row_keys = set(re.findall(r'cJSON_Add\w+ToObject\(row, "(\w+)"', text))
    top_keys = set(re.findall(r'cJSON_Add\w+ToObject\(o, "(\w+)"', text)) - {"table"}
    four = set(re.findall(r'cJSON_AddNumberToObject\(o, "(mean|median|p99|max)"', text))
    top_keys -= four  # four() names its object `o` too
    assert four == {"mean", "median", "p99", "max"} and {"cycles", "ns", "share", "calls"} <= row_keys
    want = set()
    for k in row_keys:
        want |= {k + "_" + s for s in four} if k in ("cycles", "ns") else {k}
    region_fields = {f.name for f in dataclasses.fields(gpujit.Region)}
    table_fields = {f.name for f in dataclasses.fields(gpujit.RegionTable)}
    assert want <= region_fields, want - region_fields
    assert top_keys <= table_fields, top_keys - table_fields

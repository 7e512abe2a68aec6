"""gpujit.step() and gpujit.schedule(): the step boundary is a no-op outside a profile, and the
schedule chooses the steps torch.profiler.schedule chooses, with its numbers."""
import pytest

import gpujit

CASES = [
    dict(wait=2, warmup=1, active=2, repeat=2),
    dict(wait=80, warmup=3, active=1, repeat=1),
    dict(skip_first=3, warmup=1, active=1, repeat=1),
    dict(wait=1, active=1),
    dict(active=3),
    dict(wait=0, warmup=2, active=2, repeat=3, skip_first=1),
    dict(wait=20, warmup=1, active=2, repeat=2, skip_first=10, skip_first_wait=1),
    dict(wait=3, active=1, skip_first_wait=1),
]


def test_step_outside_a_profile_is_a_no_op():
    for _ in range(1000):
        assert gpujit.step() is None


def test_schedule_actions_as_torch_defines_them():
    s = gpujit.schedule(wait=2, warmup=1, active=2, repeat=2)
    got = [s(i) for i in range(12)]
    assert got == ["NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",
                   "NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE", "NONE"]
    assert str(s) == "wait=2,warmup=1,active=2,repeat=2,skip_first=0"
    g = gpujit.schedule(wait=80, warmup=3, active=1, repeat=1)
    assert [i for i in range(200) if g(i) != "NONE"] == [80, 81, 82, 83]
    assert g(83) == "RECORD_AND_SAVE"


def test_schedule_skip_first_wait_leaves_out_the_first_wait():
    # torch's own example: skip_first=10 and wait=20 wait 30 steps before the first warmup, or 10
    # with skip_first_wait; every later cycle waits 20
    plain = gpujit.schedule(skip_first=10, wait=20, warmup=1, active=2, repeat=2)
    early = gpujit.schedule(skip_first=10, wait=20, warmup=1, active=2, repeat=2, skip_first_wait=1)
    assert [i for i in range(100) if plain(i) != "NONE"] == [30, 31, 32, 53, 54, 55]
    assert [i for i in range(100) if early(i) != "NONE"] == [10, 11, 12, 33, 34, 35]
    assert early(10) == "WARMUP" and early(12) == "RECORD_AND_SAVE"
    assert str(early) == "wait=20,warmup=1,active=2,repeat=2,skip_first=10,skip_first_wait=1"
    with pytest.raises(ValueError, match="skip_first_wait must be >= 0"):
        gpujit.schedule(active=1, skip_first_wait=-1)


def test_schedule_matches_torch_profiler_schedule():
    import inspect
    import warnings
    torch_profiler = pytest.importorskip("torch.profiler", reason="PyTorch is not installed here (the GPU machine has it)")
    # torch requires wait, warmup and active; gpujit defaults wait and warmup to 0 (a case that
    # leaves them out is torch's schedule with 0), so every call of torch's is one of gpujit's
    theirs_params = inspect.signature(torch_profiler.schedule).parameters
    ours_params = inspect.signature(gpujit.schedule).parameters
    assert {"wait", "warmup", "active", "repeat", "skip_first"} <= set(theirs_params)
    for name, p in ours_params.items():
        if name == "skip_first_wait" and name not in theirs_params:
            continue  # torch before 2.5
        assert p.kind is inspect.Parameter.KEYWORD_ONLY and theirs_params[name].kind is p.kind, name
        if theirs_params[name].default is not inspect.Parameter.empty:
            assert p.default == theirs_params[name].default, name
    for case in CASES:
        if "skip_first_wait" in case and "skip_first_wait" not in theirs_params:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's "won't be using warmup" where warmup is 0
            theirs = torch_profiler.schedule(**dict(dict(wait=0, warmup=0), **case))
        ours = gpujit.schedule(**case)
        assert [ours(i) for i in range(300)] == [theirs(i).name for i in range(300)], case


def test_schedule_arguments_checked():
    with pytest.raises(TypeError, match="active"):
        gpujit.schedule(active="1")
    with pytest.raises(ValueError, match="active must be >= 1"):
        gpujit.schedule(wait=3, active=0)
    with pytest.raises(TypeError):
        gpujit.schedule(3, 1, 1)  # keywords only, as a schedule is read
    with pytest.raises(ValueError, match="wait"):
        gpujit.schedule(wait=-1, active=1)

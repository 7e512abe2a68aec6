"""Steps: ``gpujit.step()``, the program's step boundary, and ``gpujit.schedule()``, which steps a
profile records — torch.profiler.schedule's numbers with its meaning."""
from __future__ import annotations

from . import _gpujit

NONE, WARMUP, RECORD, RECORD_AND_SAVE = "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"


def step() -> None:
    """The step the program was in ends, the next begins. Under ``gpujit profile`` (steps counted per
    process; ``--schedule`` picks those recorded) it marks the boundary; elsewhere it does nothing
    and costs a few hundred nanoseconds of Python call."""
    _gpujit.step()


def _steps(name: str, v, least: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("schedule(): %s must be an int, not %s" % (name, type(v).__name__))
    if v < least:
        raise ValueError("schedule(): %s must be >= %d, not %d" % (name, least, v))
    return v


class schedule:
    """Which steps a profile records, as ``torch.profiler.schedule(wait, warmup, active, repeat,
    skip_first, skip_first_wait)``: after ``skip_first`` steps, cycles of ``wait`` steps not
    recorded, ``warmup`` steps recorded and thrown away (CUPTI is on from the first of them), and
    ``active`` steps recorded; ``repeat`` cycles (0: for as long as the program runs). A nonzero
    ``skip_first_wait`` leaves out the first cycle's wait. Called with a step number it gives the
    action torch's schedule gives ("NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"); ``str()`` gives the
    form ``gpujit profile --schedule`` takes."""

    def __init__(self, *, wait: int = 0, warmup: int = 0, active: int, repeat: int = 0, skip_first: int = 0,
                 skip_first_wait: int = 0):
        self.wait = _steps("wait", wait)
        self.warmup = _steps("warmup", warmup)
        self.active = _steps("active", active, 1)
        self.repeat = _steps("repeat", repeat)
        self.skip_first = _steps("skip_first", skip_first)
        self.skip_first_wait = _steps("skip_first_wait", skip_first_wait)

    def __call__(self, step: int) -> str:
        step = _steps("step", step)
        if step < self.skip_first:
            return NONE
        step -= self.skip_first
        if self.skip_first_wait:  # the first cycle starts at its warmup
            step += self.wait
        cycle = self.wait + self.warmup + self.active
        if self.repeat > 0 and step // cycle >= self.repeat:
            return NONE
        m = step % cycle
        if m < self.wait:
            return NONE
        if m < self.wait + self.warmup:
            return WARMUP
        return RECORD if m < cycle - 1 else RECORD_AND_SAVE

    def __str__(self) -> str:
        return "wait=%d,warmup=%d,active=%d,repeat=%d,skip_first=%d%s" % (
            self.wait, self.warmup, self.active, self.repeat, self.skip_first,
            ",skip_first_wait=1" if self.skip_first_wait else "")

    def __repr__(self) -> str:
        return "gpujit.schedule(%s)" % str(self).replace(",", ", ")

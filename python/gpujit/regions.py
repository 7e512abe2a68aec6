"""Kernel regions (``#include <gpujit/regions.cuh>``, built with ``regions=True``): each region's
calls, cycles and times, as the C library summarises them (``gpujit_loaded_regions_read``)."""
from dataclasses import dataclass, field
from typing import List, Optional

from . import _gpujit


def include_dir() -> str:
    """The directory of gpujit's device headers, for ``-I`` of nvcc, CuPy's ``RawModule`` or
    ``torch.utils.cpp_extension`` (gpujit's own builds search it already). Raises
    FileNotFoundError where no directory holds them (``GPUJIT_INCLUDE_DIR`` names one)."""
    return _gpujit.include_dir()


@dataclass(frozen=True)
class Region:
    """One region (one name): its calls (a unit's begin and end; a unit is a warp unless the
    module chose blocks or threads), cycles and nanoseconds per call, its share of the kernel's
    time (None where that is unknown) and imbalance (busiest SM, busiest unit, over the mean)."""
    name: str
    depth: int
    calls: int
    cycles_mean: float
    cycles_median: float
    cycles_p99: float
    cycles_max: float
    ns_mean: float
    ns_median: float
    ns_p99: float
    ns_max: float
    total_ns: float
    share: Optional[float]
    sm_imbalance: float
    unit_imbalance: float
    sms: int
    units: int


@dataclass(frozen=True)
class RegionTable:
    """The regions of the launches since the last reset (``Module.regions()``), or of the launches
    a timer or benchmark timed (``ScopedTimer.regions``, ``BenchmarkResult.regions``). ``dropped``: events the buffer had no room
    for; ``unmatched``: halves without their other (a ``break`` or ``return`` out of a region);
    ``min_call_cycles``: the shortest call, an upper bound of what one begin and end cost.
    ``str()`` gives the table as ``gpujit run`` prints it."""
    regions: List[Region]
    scope: str
    launches: int
    events: int
    dropped: int
    unmatched: int
    min_call_cycles: int
    kernel_ns: float
    text: str = field(repr=False)
    device: Optional[int] = None  # the device of a timer's or benchmark's table


    def __getitem__(self, name: str) -> Region:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError("no region %r (regions: %s)" % (name, ", ".join(r.name for r in self.regions) or "none"))

    def __str__(self) -> str:
        return self.text


def _table(d: dict) -> RegionTable:
    rows = [Region(**r) for r in d.pop("regions")]
    return RegionTable(regions=rows, **d)


def _timed_tables(devices) -> List[RegionTable]:
    """The tables of the last window that closed on each device (a timer's, a timed region's or a
    benchmark's samples'): one per module with regions launched there; none for modules without."""
    return [_table(d) for d in _gpujit.timing_regions(list(devices))]

"""triton/knobs.py as Triton 3.6 has it, reduced to what the compile listener touches."""
import contextlib
import dataclasses
from typing import Any, Callable, Generic, Protocol, TypeVar


@dataclasses.dataclass(frozen=True)
class CompileTimes:
    ir_initialization: int
    lowering_stages: list
    store_results: int


class CompilationListener(Protocol):
    def __call__(self, *, src: Any, metadata: dict, metadata_group: dict, times: CompileTimes,
                 cache_hit: bool) -> None:
        ...


class base_knobs:
    def copy(self):
        res = type(self)()
        res.__dict__.update(self.__dict__)
        return res

    @contextlib.contextmanager
    def scope(self):
        try:
            orig = dict(self.__dict__)
            yield
        finally:
            self.__dict__.clear()
            self.__dict__.update(orig)


class compilation_knobs(base_knobs):
    always_compile: bool = False
    listener: "CompilationListener | None" = None


F = TypeVar("F", bound=Callable)


class HookChain(Generic[F]):
    def __init__(self, reversed: bool = False):
        self.calls = []
        self.reversed = reversed

    def add(self, func):
        if func not in self.calls:
            self.calls.append(func)

    def remove(self, func):
        if func in self.calls:
            self.calls.remove(func)

    def __call__(self, *args, **kwargs):
        for call in self.calls if not self.reversed else reversed(self.calls):
            call(*args, **kwargs)


class runtime_knobs(base_knobs):
    kernel_load_end_hook: HookChain = HookChain(reversed=True)


compilation = compilation_knobs()
runtime = runtime_knobs()

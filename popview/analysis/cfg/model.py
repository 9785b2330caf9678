"""popview's own description of a Paraver cfg: plain dataclasses, no trace attached.

A cfg describes *views*: timelines computed from trace records (single windows),
derived windows combining two others, and histograms (Analyzer2D/3D).  Windows are
numbered from 1 by their position in the file, which is how cfgs reference them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

LEVELS = ("workload", "appl", "task", "thread", "system", "node", "cpu")
COMPOSE_SLOTS = ("compose_cpu", "compose_appl", "compose_task", "compose_thread", "compose_node",
                 "compose_system", "compose_workload", "topcompose1", "topcompose2")
FILTER_KEYS = ("from_obj", "to_obj", "tag_msg", "size_msg", "bw_msg", "evt_type", "evt_value")
DERIVED_OPERATIONS = ("add", "product", "substract", "divide", "maximum", "minimum", "different",
                      "controlled: clear by", "controlled: maximum", "controlled: add",
                      "controlled: enumerate", "controlled: average")


@dataclass
class Function:
    """A semantic function chosen at one level, with its parameters (one tuple per parameter)."""
    name: str
    params: tuple[tuple[float, ...], ...] = ()


@dataclass
class Criterion:
    """One filter function (`All`, `None`, `=`, `!=`, `<`, `>`, `[x,y]`) and its operands.

    `labels` are the names the saving Paraver wrote; against a trace's .pcf a known
    label takes precedence over the number, so they are kept beside the values.
    """
    function: str = "All"
    values: tuple[float, ...] = ()
    labels: tuple[str, ...] = ()


@dataclass
class Filters:
    """Which records feed a single window: events, and communications with their switches."""
    criteria: dict[str, Criterion] = field(default_factory=dict)   # FILTER_KEYS -> criterion
    logical: bool | None = None
    physical: bool | None = None
    fromto_and: bool | None = None
    tagsize_and: bool | None = None
    typeval_and: bool | None = None


@dataclass
class Derivation:
    """How a derived window combines its two parents: op(f0 * parent0, f1 * parent1)."""
    operation: str
    parents: tuple[int, int]                 # 1-based positions in the file
    factors: tuple[float, float] = (1.0, 1.0)
    shifts: tuple[int, int] = (0, 0)


@dataclass
class Window:
    """A timeline: single (from records) or derived (from two windows)."""
    name: str
    position: int
    line: int = field(default=0, compare=False)   # where its window_name stands in the file
    level: str = "thread"
    functions: dict[str, Function] = field(default_factory=dict)   # level -> function
    compose: dict[str, Function] = field(default_factory=dict)     # COMPOSE_SLOTS -> function
    filters: Filters = field(default_factory=Filters)
    derivation: Derivation | None = None
    objects: list[tuple[str, str]] = field(default_factory=list)   # (level, selection text)
    units: str | None = None
    begin_relative: float | None = None
    end_relative: float | None = None
    begin_time: float | None = None
    end_time: float | None = None
    minimum_y: float | None = None
    maximum_y: float | None = None
    color_mode: str | None = None
    gradient_function: str | None = None
    drawmode: str | None = None
    drawmode_rows: str | None = None
    aliases: list[tuple[str, str]] = field(default_factory=list)   # CFG4D (tag, "original|alias")
    gui: dict[str, str] = field(default_factory=dict)              # presentation-only tags, verbatim

    @property
    def derived(self) -> bool:
        return self.derivation is not None


@dataclass
class Binning:
    """Columns (or 3D planes) of a histogram: the control window's values binned."""
    window: int                               # 1-based position of the control window
    compute: bool | None = None               # ComputeYScale: take min/max from the data
    minimum: float | None = None
    maximum: float | None = None
    delta: float | None = None

    @property
    def computed(self) -> bool:
        """Whether Paraver computes the range from the values: ComputeYScale, True when the cfg
        does not say (ParaverConfig's autofit control and third-dimension scales default to on;
        parami's 3dh_ipc_uf.cfg gives no Analyzer3D.ComputeYScale)."""
        return self.compute is None or bool(self.compute)


@dataclass
class Histogram:
    """An Analyzer2D (or 3D when `planes` is set) over the trace."""
    name: str
    columns: Binning
    data_window: int
    statistic: str | None = None
    line: int = field(default=0, compare=False)
    calculate_all: bool | None = None
    accumulator: str | None = None
    data_range: tuple[float, float] | None = None     # Parameters: data min/max
    burst_range: tuple[float, float] | None = None    # Parameters: burst duration min/max
    limits: str | None = None                          # Alltrace / Allwindow / Region
    planes: Binning | None = None
    plane_shown: float | None = None                   # 3D_FixedValue
    aliases: list[tuple[str, str]] = field(default_factory=list)
    gui: dict[str, str] = field(default_factory=dict)

    @property
    def is_3d(self) -> bool:
        return self.planes is not None


@dataclass
class CfgView:
    """Everything one cfg file describes, plus notes on what the reader skipped."""
    source: str = field(compare=False)
    version: str = field(compare=False)
    header_style: str = field(compare=False)  # "new" (ConfigFile.*) or "old" (version / number_of_windows)
    declared_windows: int | None = field(default=None, compare=False)
    description: str = ""
    cfg4d: bool = False
    windows: list[Window] = field(default_factory=list)
    histograms: list[Histogram] = field(default_factory=list)
    notes: list[str] = field(default_factory=list, compare=False)

    def window(self, ref: int | str) -> Window:
        """A window by 1-based position (how cfgs reference them) or by its name."""
        if isinstance(ref, int):
            if not 1 <= ref <= len(self.windows):
                raise KeyError(f"no window at position {ref} (the cfg has {len(self.windows)})")
            return self.windows[ref - 1]
        for w in self.windows:
            if w.name == ref:
                return w
        raise KeyError(f"no window named {ref!r}")

"""Survey a folder of Paraver cfgs: which load, which are refused and why, which windows and
histograms popview describes fully and which use what popview does not evaluate yet.

    python -m popview.analysis.cfg.survey ../shared/traces/paraver-cfgs -o docs/paraver-cfg.md
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .catalogue import histogram_gaps, window_gaps
from .evaluate import NotEvaluated, TraceColumns, evaluate_histogram, evaluate_window
from .levels import Hierarchy
from .reader import CfgError, read_cfg

_INTRO = """\
# Paraver configuration files (.cfg)

popview reads Paraver `.cfg` files (versions 3.1-3.4, old `version`/`number_of_windows` and new
`ConfigFile.*` headers, CRLF line endings) into its own view descriptions
(`popview.analysis.cfg`, no Qt): timeline windows with their level, the semantic function of
each level, compose functions and parameters, filters on events (types and values, `=`, `!=`,
`[x,y]` ranges, labels kept beside numbers) and communications; derived windows (operation,
factors, shifts, parents by position); histograms (control and data windows, statistic,
column bins, 3D planes). `write_cfg` writes a description back as a version 3.4 cfg; reading
that gives the same description (tested on every cfg below).

```python
from popview.analysis.cfg import read_cfg
view = read_cfg("useful_instructions.cfg")      # CfgError (one line: file, line, reason) if refused
view.windows[2].derivation                       # Derivation(operation='product', parents=(1, 2), ...)
view.window(3) is view.windows[2]                # cfgs reference windows by 1-based position
view.notes                                       # legacy / unknown tags skipped, wrong declared counts
```

Refused: Dimemas configurations (`#DIMEMAS_CONFIGURATION`), templates whose
`@PLACEHOLDER@`s were never filled in, files without a cfg header, numbers longer than 400
characters, lines over 1 MiB, files over 16 MiB, derived windows or histograms referencing
a window that does not exist (or, for a derived window, does not come before it).

**Described fully** means every function, operation, filter and statistic the window or
histogram uses is in popview's semantic-engine set (`popview.analysis.cfg.catalogue`);
otherwise each gap is named. **Evaluated** means the engine that evaluates the descriptions
on a trace's cache (`popview.analysis.cfg.evaluate`, vectorised numpy) computes the histogram
(checked here on a small probe trace of two single-threaded tasks with two messages; the
columns "windows evaluated" and "histograms evaluated", and the last table).
The engine covers: thread, task, application and workload rows (`popview.analysis.cfg.levels`:
a task's intervals cut at every boundary of its threads', each with the task function of their
values in thread order, as the kernel's IntervalNotThread: `Adding`, `AddingSign`, `Average`,
`Maximum`, `Minimum`, `Activity`, `In Activity`, `Mode`, `Thread i`, `Add Tasks`, then the
level's compose; a derived window combines its parents at the finer of their levels, a task
parent giving each of its threads its value; topcompose2 before topcompose1, as the kernel
nests them) and the resource model's CPU, node and system rows (a CPU's value is the thread's
that runs on it, through `Active Thd`, `Active Thd Sign`, `Active Thd Val` or `Active Thd Val
Sign`; a node's the node function over its CPUs, idle ones included; the Paraver reader records
each thread's CPU and each node's CPU count, and a thread whose records carry several CPUs, or
a CPU shared by threads, is named as not evaluated); the object functions `Application ID`,
`TaskID`, `Thread ID`, `Node ID` and `Cpu ID` (an interval at every state record and passing
event, as the kernel's); `Useful`, `State As Is`,
`State Sign`, `Given State`, `State Record Dur.`, `Int. Between Evt`, `Avg Next Evt Val`,
`Avg Last Evt Val`, `Last Evt Val` and `Next Evt Val` with event-type and event-value filters;
what is in transit per thread as the kernel's communication functions add it up record by
record: `Send BandWidth`, `Recv BandWidth` (size / factor per window time unit, in the kernel's
1e-12 steps), `Send` / `Recv Bytes in Transit`, `Send` / `Recv Messages in Transit`,
`Recv Negative Messages`, `Recv Negative Bytes` (logical or physical filter; each record of the
function's kinds that the filter passes, the remote ones included, starts an interval, in the
kernel's order of a thread's records); `Event Bytes`
and `Event Sent Bytes` (the sizes of the row's communication records from one selected event
to the next, as the kernel's getTotalCommSize walks them: the sends at the event, the records
between, at the next event the later of each message's logical and physical receive); the
functions of a thread's communication records, each record the filter passes starting an
interval in the kernel's order of a thread's records (by time, then physical receive, logical
send, physical send, logical receive): `Number Of Sends`, `Number Of Send Bytes`,
`Number Of Receives`, `Number Of Receive Bytes` (added up from the trace's start),
`Comm Partner`, `Comm Recv. Partner`, `Last Tag`, `Comm Size`, `Last Send Dur.`,
`Next Recv Dur.`, `Last Send Size` (on a trace without communications every one of them is 0,
as paramedir writes it); every communication function and statistic with the
window's message filters as KFilter applies them (from / to objects, tag / size with `and` or
`or`, bandwidth; `All`, `None`, `=`, `!=`, `<`, `>`, `[x,y]`; any function but `All` passes
nothing without values); a window without
`window_units` in microseconds, as the kernel's cfg loader sets it;
the compose functions without memory (`Sign`, `1-Sign`, `Div`, `Prod`, `Add`, `Subs`,
`Select Range`, `Is In Range`, `Is Equal`, `Is Equal (Sign)`, `Abs`, `Floor`, `Ceil`, `Round`)
at thread, task and top
level (topcompose2 first, then topcompose1, as the kernel nests them); the compose functions
with a memory of the row's sequence of intervals, on windows of event or communication-record
functions (in transit too), in any slot and after any other: `Stacked Val` (Paraver's per-thread stack of
values), `Nesting level`, `Delta`, `Join Bursts` (consecutive intervals of one value joined)
and `Burst Time` (an interval's duration; on any other window too), over every interval the
kernel walks, those of no duration at one instant included; derived `add`, `product`, `substract`, `divide`, `maximum`, `minimum`,
`controlled: maximum` (on the control window's intervals, the largest of 0 and the data values
there) and `controlled: clear by` (the data value, cleared where the control value falls, as
paramedir computes it); the task function `Changed value` on tasks of one thread; `Node ID` where each thread's records carry
its one CPU (the 16 ranks of the Extrae course's prime on their 4 nodes as paramedir gives them); 2D and 3D
histograms (a table per plane of the 3D control window's values that has values) over the
whole trace or the control window's time window (`Allwindow`), with the `Time`, `% Time`,
`% Window Time`, `Sum bursts`, `# Bursts`, `# Bursts != 0`, `% # Bursts`, `Integral`,
`Average value`, `Average per Burst`, `Average Burst Time`, `Maximum` and `Minimum`
statistics (as Paraver's histogramstatistic.cpp computes them) and the communication
statistics `#Sends`, `#Receives`, `Bytes sent`, `Bytes received` (per row, a column per partner
thread, as KHistogram counts the row's send or receive records). Columns are made as
Paraver's ColumnTranslator makes them (ceil((max-min)/delta) columns, one more when delta is 1
and max starts a column, a value in [min, max]); a computed scale (`ComputeYScale`, on when the cfg does not
say) spans, as Paraver's computeYScale reads them, the control window's values from the
histogram's begin to one interval past its end (past the trace's end: the window's compose of 0),
from the smallest non-zero one: for a code-coloured window every whole value up to the largest
plus 5 % rounded down, else Paraver's 200 columns up to the largest value plus 5 % (3D planes: up
to the largest). Whole-value columns and planes are named by the window's semantic info type
(labels.py: a state, a .pcf event value through the window's filter, a derived window's first
parent's, `value N` when unnamed). Anything else raises `NotEvaluated` naming it.

What evaluates is usable two ways:

- `popview paramedir TRACE CFG [OUT]... [-o OUT]` (docs/cli.md) writes what paramedir writes
  for each cfg, named as paramedir names it: its last histogram as paramedir's tab-separated
  table (`--all-histograms`: every one), or, for a cfg without a histogram, its last window's
  timeline (paramedir's .csv: row, begin, duration, value per interval); what is not evaluated
  is one line each on stderr.
- In the window, File > Open Paraver view (.cfg)... or a `.cfg` dropped on the window (or
  given beside a trace: `popview run.prv view.cfg`) opens a "Paraver view" pane beside the
  Histograms: a tab per evaluated histogram, named as in the cfg, with its control window and
  statistic, and the list of what is not evaluated with the reason; and a tab per timeline
  window the cfg opens (`window_open true`; a cfg that opens none and has no histogram shows
  the windows no other derives from), named as the window, with what it computes (its
  function and event filter, or its parents and operation). The tab is popview's timeline view
  (zoom, pan, rows grouped, hover info, communication lines when the cfg has them on) drawing
  the window's values per row and pixel as Paraver's draw mode picks them (last, maximum,
  minimum not zero, average, average not zero, absolute maximum / minimum; random and mode
  drawn as the maximum and said so), coloured as the cfg says: Paraver's code colours
  (semanticcolor.cpp's 49, the default) with the value names of the .pcf in the legend, or
  Paraver's gradient (green to blue, orange above and olive below the range, black for no value
  and, in the null gradient, for zero) over the window's `minimum_y`..`maximum_y` (computed
  from the values when the cfg gives none), with Fit scale. The time a thread is in none of
  the states or values the window shows (its zero: Paraver's Idle colour in code mode, the
  background in the null gradient) is drawn in proportion to its time when the draw mode is
  the last, the maximum or the absolute maximum (the tab's subtitle says "zero (idle) drawn in
  proportion to its time"): along each row a pixel is zero where the zero time summed from the
  row's first pixel reaches its next whole pixel, the draw mode's value elsewhere
  (`CfgTimeline.drawn`), as the State mode draws an OpenMP worker's waits. Zoomed out, the
  draw mode alone painted every pixel that held a burst in the burst's colour: parami's
  `state_as_is.cfg` on popview-heat Extrae 2x2 drew its workers, idle 75-82 % of the run, 20 %
  idle at the whole run (43 % at 100 ms); now 39 % and 43 %, within 0.02 of the zoomed-in
  share on each row (tests/cfg/test_timeline.py). Zoomed in, a pixel inside one interval is
  drawn as before; gradients and the "not zero" and average draw modes keep the draw mode's
  value. Each redraw reads the evaluated
  intervals of the visible window (zoomed in) or an in-memory pyramid of them built once
  (zoomed out, `popview.analysis.cfg.timeline`): on the 1 GB make_big_epoch trace a full-view
  redraw of PyPOP-style IPC (instructions / cycles) takes well under the 100 ms budget
  (tests/benchmarks/bench_cfg_timeline.py); so does a node-level window (in_MPI_call.cfg at
  node level: 16 CPUs added up, 4.41 M node intervals from 54.7 M events, first evaluation
  6.4 s; redraw medians 4.6 ms full view, 58 ms at 1 % of the run, 34 ms at 1 ms; load 9.5-12
  on 2 cores, `--cfg` of the same benchmark). A window above the thread level is drawn on each
  thread row with its task's (application's, CPU's, node's) values. On the shared Paraver traces EPOCH (MPI, 4 ranks),
  popview-heat Extrae 2x2 (MPI+OpenMP), PyPOP's ImageMagick (OpenMP, 4 threads) and the Extrae
  course's prime (MPI, 16 ranks) and correlation (OpenMP, 24 threads) the collection's
  `state_as_is.cfg` (zoomed in), `MPI_call.cfg` (by the .pcf's names), `useful_duration.cfg`,
  `IPC.cfg` and `OpenMP/views/parallel_functions.cfg` drawn this way agree with popview's
  State, MPI call, Useful duration, IPC and OpenMP construct / call path colour modes wherever
  both exist and a pixel holds one interval: the same state (> 99.9 % of pixels), the same MPI
  call name and End outside (> 99 %), the same useful burst duration (1e-9 relative), IPC
  (1e-6 relative, > 95 %), and a parallel function where popview draws an OpenMP construct and
  that function in popview's call path (> 99 %) (tests/cfg/test_generic_cfgs.py).

On PyPOP's EPOCH traces (1-16 ranks) PyPOP's `total_useful_computation.cfg`,
`useful_instructions.cfg`, `useful_cycles.cfg`, `serial_useful_computation_no_omp.cfg` and
`total_runtime_excl_disabled.cfg` (the ones PyPOP's PRVTrace loads on an MPI-only trace),
written by `popview paramedir` and read back as PyPOP reads paramedir's output, give
`modelfactors.csv`'s runtime, useful duration (total, average, maximum), useful instructions
and cycles, and `precomputed.csv`'s parallel efficiency, MPI load balance, average IPC and
frequency, within 1e-6 relative (tests/cfg/test_paramedir_command.py); basicanalysis's
`timings.cfg` gives the per-state times in microseconds per thread. PyPOP's OpenMP cfgs
(serial and OpenMP useful computation, OpenMP runtime) give, on a synthetic hybrid run, the
serial and OpenMP useful time the generator put in, to the nanosecond, and on PyPOP's
ImageMagick traces serial + OpenMP useful time = each thread's useful time.

**Compared with BSC's paramedir.** paramedir built from paraver-kernel's public source was run
on every collected cfg with a histogram, on EPOCH 4 and 16 ranks and on popview-heat Extrae 2x2,
beside `popview paramedir` (tests/cfg/test_against_paramedir.py: frozen paramedir tables of
shared traces always; with `POPVIEW_PARAMEDIR=/path/to/paramedir` also a live byte-for-byte
comparison and the saved views below). Byte for byte the same on all three traces (labels, row
and column names, values, layout): basicanalysis's `cycles`, `instructions`, `runtime`,
`timings`; COMPSs `comm/communication_matrix`, `comm/process_bandwidth`, `python/3dp_tasks_phase`;
parami's `other/CommComp_overlap`, `2dc_cyc_ipc`, `2dh_useful_duration`, `2dh_granularity`, `2dh_duration_IPC`,
`3dc_instr_ipc_useful`, `efficiency`, `3dh_percentpreempted_useful`,
`3dh_duration_MPIcall`, `3dh_size_call`, `nanox/mpi/sanity_checks/2dt_brwds_nbbwrds`, `connectivity`, `mpi_stats`, `other/communication_matrix`,
`nanox/general/analysis/3dh_ipc_uf`, `LB_analysis` (its last histogram, all paramedir writes),
`mapping`, `2dp_MPItime_line`, `sampling+folding/2dp_sampled_function`, `3dh_instructions`; PyPOP's `total_runtime`, `total_runtime_excl_disabled`,
`total_useful_computation`, `useful_cycles`, `useful_instructions` and the
`serial_useful_computation*` and `omp_useful_computation*` ones. On EPOCH also
`clustering/3dh_ipc_clusterID`, `call_duration_histogram`, COMPSs `histograms_HW_counters` and
PyPOP's `total_res_stl_cycles`; on heat 2x2 also PyPOP's `omp_total_runtime*` and parami's
`OpenMP/analysis/omp_profile` and `3dh_duration_pf`. To get there popview's tables now follow
paramedir: `StDev`; Average, Minimum, StDev and Avg/Max over the cells that have a value (a
thread's own column of a communication matrix is left out; `-nan` for a column without values);
rows added one after the other and `sqrt(fabs(...))` (paramedir's StDev of 16 equal rows is
0.03 or 32.00, not 0); range labels with thousands grouped (`[1,026.00..1,053.00)`), a
computed range's bounds as paramedir computes them (column x delta + minimum, the last one
closed only when it reaches the range's top in floating point); the totals over the cells
Paraver has (a burst counted there, even of value 0), StDev as HistogramTotals computes it;
`HideCols` per plane and `SortCols` (stable, by the shown plane's column totals, the first k of
that order in every plane: 2dp_MPItime_line's planes show columns empty there); a plane label
line when the histogram has more than one plane; Useful's
columns named by state (`Running`), an unnamed event value 0 named `End`; task-level rows
`TASK 1.n`; only the rows a histogram's `Analyzer2D.Objects` selects (parami's
`3dh_instructions`: THREAD 1.1.1 alone, byte for byte on heat 2x2); every thread in state Idle (0) where it has no state record, up to the trace's end;
and a cfg whose windows all filter on event types none of which is in the trace is refused
("None of the events specified in the filter appear in the trace", as paramedir aborts; PyPOP
relies on it to pick the cfg that fits). Refused alike by both on these traces: PyPOP's
`omp_total_runtime*` and parami's OpenMP analyses on EPOCH, `uf_profile`, `3dh_ufduration`,
`periodicity`, `3dh_duration_tasks`, `3dh_folded_mips_per_caller`, `ompss/general`.
Byte for byte checked by tests/cfg/test_paramedir_outputs.py (SHA-256 of each file paramedir
wrote, frozen in tests/cfg/paramedir_digests.json; live with POPVIEW_PARAMEDIR), as
`popview paramedir` writes it: a cfg with several histograms gives, as paramedir, only its last
one (`--all-histograms` for every one); paramedir's options `-tu`, `-e`, `-p` and `-npr` too. `Amdahl` (Stacked Val, then 1-Sign on top) is byte for
byte on EPOCH 4 and 16 and on the bsc-folding 444.namd trace (user functions), so is
`3dh_ufduration` (Int. Between Evt composed by Stacked Val) on 444.namd; on heat 2x2 `Amdahl`
and `call_duration_histogram` are too (a compose with a memory -- Stacked Val, Nesting level,
Delta, Join Bursts, Burst Time -- over task rows of two threads runs over the task's pieces one
by one, as the kernel's IntervalNotThread hands them to it).

**Task and application rows against paramedir** (tests/cfg/test_levels_paramedir.py, frozen
and, with POPVIEW_PARAMEDIR, live): the timeline paramedir writes for a cfg's last window
(`-tu`, trace units) is popview's, interval for interval, once paramedir's intervals of no
duration (several records at one instant, which popview does not keep) are left out, on EPOCH
4, EPOCH 16 and heat 2x2: `in_MPI_call` (task rows, `Thread i`: two threads per task on heat),
`receive_bandwidth_appl` (application rows), `states_only_useful_openmp` (a derived window of a
thread and a task parent whose Stacked Val runs over the task's pieces), COMPSs
`receive_bandwidth` and `s_r_bandwidth` (the
communication functions' intervals start at every communication record of the row the
window's filter passes, whether the value changes or not, as the kernel's do). A histogram
added to `in_MPI_call` (Time per task) and to `receive_bandwidth_appl` (Average value per
application) gives paramedir's cells and row labels (`TASK 1.2`, `APPL 1`). parami's
`node_bandwidth` (node rows) is paramedir's timeline on EPOCH 4, EPOCH 16 and heat 2x2, and
`in_MPI_call` moved to CPU, node and system rows (Adding; node Average; CPU Active Thd Sign,
node Minimum, system Maximum; CPU Active Thd Val) is too, also on Extrae-course prime (16 ranks
on 4 nodes of 13, 1, 1, 1 CPUs), its Time histogram per node and per CPU with the .row's names;
so are parami's `mapping` with its window 2's `Node ID` or each other object function and
`nb_procs_in_col` (`In Evt Range` added up per application; with `Thread i` 1) on heat 2x2,
EPOCH 4 and prime.

Timelines are compared with paramedir too: a cfg without a histogram makes `popview paramedir`
write, as paramedir, its last window's intervals (row, begin and duration in the window's
units, value), byte for byte paramedir's file on all three traces for parami's `state_as_is`,
`useful`, `useful_duration`, `executing_cpu`, `MPI_call`, `MPI_call_duration`, `MPI_p2p_call`,
`MPI_collective_call`, `MPI_caller`, `in_MPI_call`, `receive_bandwidth_appl` (application rows),
`state_duration`,
`Events_too_close`, `Useful_ipc`, `p2p_size`, `mpi_msg_size`, `cuda_views`, nanox's `state_as_is`
and paraver-kernel's four cutter test views; on EPOCH 4 and 16 also `IPC`, `MIPS`, `Cycles`,
`instructions`, `L1D_misses`, `L2_Total_miss_ratio`, `L_S_mix`, `states_only_useful_openmp`, and
on EPOCH 4 COMPSs `receive_bandwidth`, `s_r_bandwidth` and `late_receivers` (the zero-length
intervals of several events at one instant included, a derived window's from its parents';
tests/cfg/test_paramedir_outputs.py). Not the same yet: on heat 2x2 and EPOCH 16 those three
communication windows (paramedir has a zero-length interval at each of several communication
records of a row at one instant; popview one interval per instant there). `state_duration` is
the same since State Record Dur. of Idle after a row's last state record is, as in the kernel's
timeToNextState, that interval's begin time. Also
paramedir's dump `-tu` (each interval's row, begin and duration in trace units, and value); that
text and popview's evaluated window, both as runs of equal values with a duration, are the same
on EPOCH 4, EPOCH 16 and heat 2x2 for parami's `p2p_size`, `mpi_msg_size` and
`late_receivers` (Event Bytes and the windows derived from it), and so is `p2p_size` with its
function changed to each communication-record function above (and Event Bytes, Event Sent
Bytes, Recv BandWidth, Send Messages in Transit) under six message filters each (logical,
physical, both, tag != 0, from objects 1 or 3, bandwidth > 100) on EPOCH 4 and heat 2x2
and so are eleven windows composing them with `Stacked Val`, `Nesting level`, `Delta`,
`Join Bursts`, `Burst Time`, `Sign`, `1-Sign` and `Add` in the thread and top slots, and
parami's `received_from_delayed` (Comm Recv. Partner, `controlled: clear by`) with its data window
made Event Bytes and its control the MPI call, for `controlled: clear by` and `controlled:
maximum`, on EPOCH 4, EPOCH 16 and heat 2x2
(tests/cfg/test_against_paramedir.py, digests of paramedir's dumps frozen).

File > Save view as Paraver cfg... writes the Timeline pane's current view (its colour mode,
time window and gradient range) as a version 3.4 cfg in the layout Paraver writes windows
(`popview.analysis.cfg.export`): State as `State As Is`; MPI call / OpenMP construct as
`Last Evt Val` of the trace's event types of that paradigm; Useful duration as `State Record
Dur.` of Running; IPC as Instructions and Cycles (`Next Evt Val`, hidden) divided; a counter
rate as `Avg Next Evt Val` x 1e9; an event type as `Last Evt Val`; code colours or a null
gradient over the view's range; the time window relative and absolute. Call-path colours
have no Paraver window and are refused with the reason; windows filter only on event types
that have records in the trace (Paraver refuses a cfg whose filter matches no event, so a .pcf
type that never occurs is refused with that reason). Every colour mode saved this way on EPOCH
4 and popview-heat Extrae 2x2 loads in paramedir without an error or a warning
(tests/cfg/test_against_paramedir.py, with POPVIEW_PARAMEDIR). The saved cfg reads back into the same
description, opens in popview as the same view (its time window, colours and range), and
zoomed in its values agree with popview's own colour mode pixel by pixel
(tests/cfg/test_export.py, tests/gui/test_cfg_views.py).

File > Save histogram as Paraver cfg... (or the Histograms pane's "Paraver cfg..." button) writes
the pane's table and statistic as a 2D histogram cfg (`export.histogram_cfg`): State x location
as `State As Is` with a column per state code present, MPI call x location as `Last Evt Val` of
the trace's MPI event types with a column per MPI call value (outside MPI, 0, left out), empty
columns hidden, over the table's time window (`Allwindow`) or the whole run; `time` as `Time`
in nanoseconds, `% time` as `% Window Time`, `bursts` / `count` as `# Bursts`, average durations
as `Average Burst Time`. On EPOCH 4 and heat 2x2, each of these tables (every statistic, the
whole run and a quarter of it) evaluates in popview's cfg engine to the same cells (1e-9), and
paramedir loads the cfg and writes the same cells to its 2 decimals; the one difference is a
column of calls of no duration (EPOCH's two MPI_Cart_create per rank): popview counts them,
Paraver has no burst there (tests/cfg/test_histogram_export.py). Useful duration bins
(logarithmic), burst duration x IPC (IPC-range rows) and the OpenMP construct table (a worker
counted inside its master's construct) have no Paraver histogram and are refused with the
reason. File > Save Paraver view as cfg... (or "Save as cfg..." in a Paraver view pane) writes an
opened cfg's windows and histograms back as popview reads them: every cfg of the collection
written back this way gives paramedir the same bytes as the original on EPOCH 4 and heat 2x2
(the frozen digests without paramedir; live with POPVIEW_PARAMEDIR), and the view reopens with
the same tables (tests/gui/test_cfg_views.py).

Not done yet: the functions and statistics named in the tables below, CPU rows of threads that
move between CPUs or share one, communication statistics in 3D, of a derived control window or of one
filtered both logically and physically.

This page is generated by `python -m popview.analysis.cfg.survey
../shared/traces/paraver-cfgs -o docs/paraver-cfg.md` over the 120 collected real cfgs.
"""


@dataclass
class FileResult:
    path: str
    refused: str | None = None
    version: str = ""
    windows: int = 0
    windows_full: int = 0
    windows_evaluated: int = 0
    histograms: int = 0
    histograms_full: int = 0
    histograms_evaluated: int = 0
    not_evaluated: list[str] = field(default_factory=list)   # "h1 'name': reason"
    gaps: list[str] = field(default_factory=list)      # "w3 'name': reason; reason"
    reasons: list[str] = field(default_factory=list)
    window_reasons: list[str] = field(default_factory=list)    # why windows do not evaluate


def survey_file(path: Path, root: Path) -> FileResult:
    result = FileResult(path=path.relative_to(root).as_posix())
    try:
        view = read_cfg(path)
    except CfgError as err:
        result.refused = str(err).replace(str(path), result.path)
        return result
    result.version = f"{view.header_style} {view.version}"
    for window in view.windows:
        gaps = window_gaps(view, window)
        result.windows += 1
        result.windows_full += not gaps
        try:
            evaluate_window(view, window.position, _probe())
            result.windows_evaluated += 1
        except (NotEvaluated, KeyError) as exc:
            result.window_reasons.append(_own_reason(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc)))
        if gaps:
            result.gaps.append(f"w{window.position} {window.name!r}: " + "; ".join(gaps))
            result.reasons += gaps
    for number, histogram in enumerate(view.histograms, start=1):
        try:
            evaluate_histogram(view, histogram, _probe())
            result.histograms_evaluated += 1
        except (NotEvaluated, KeyError) as exc:
            reason = str(exc.args[0]) if isinstance(exc, KeyError) else str(exc)
            prefix = f"histogram {histogram.name!r}: "
            result.not_evaluated.append(f"h{number} {histogram.name!r}: "
                                        + (reason[len(prefix):] if reason.startswith(prefix) else reason))
        gaps = histogram_gaps(view, histogram)
        result.histograms += 1
        result.histograms_full += not gaps
        if gaps:
            result.gaps.append(f"h{number} {histogram.name!r}: " + "; ".join(gaps))
            result.reasons += gaps
    return result


def _own_reason(reason: str) -> str:
    """The innermost cause of "window 3 'A': window 1 'B': thread function 'X'": thread function 'X'."""
    parts = reason.split(": ")
    while len(parts) > 1 and parts[0].startswith("window "):
        parts = parts[1:]
    return ": ".join(parts)


def _probe() -> TraceColumns:
    """A small trace for the engine check: two single-threaded tasks (one application, each
    thread on its own CPU of one node), running and MPI states,
    hardware counter readings (PAPI_TOT_INS, PAPI_TOT_CYC), an MPI call event and two messages."""
    states = {"loc": np.array([0, 0, 0, 1], np.int32), "begin": np.array([0, 40, 60, 0], np.int64),
              "end": np.array([40, 60, 100, 100], np.int64), "state": np.array([1, 3, 1, 1], np.int32)}
    events = {"loc": np.array([0, 0, 0, 1, 1, 0, 0], np.int32),
              "time": np.array([40, 40, 100, 50, 100, 40, 60], np.int64),
              "type": np.array([42000050, 42000059, 42000050, 42000050, 42000059, 50000001, 50000001], np.int32),
              "value": np.array([400, 700, 300, 10, 20, 3, 0], np.int64)}
    messages = {"send_loc": np.array([0, 1], np.int32), "recv_loc": np.array([1, 0], np.int32),
                "send_time": np.array([45, 55], np.int64), "send_phys": np.array([45, 55], np.int64),
                "recv_time": np.array([50, 60], np.int64), "recv_phys": np.array([50, 60], np.int64),
                "size": np.array([100, 200], np.int64), "tag": np.array([1, 2], np.int64)}
    return TraceColumns(t_end=100, n_rows=2, states=states, events=events, one_thread_per_task=True,
                        messages=messages, hierarchy=Hierarchy(np.arange(2), np.zeros(2, np.int64),
                                                               thread_cpu=np.arange(2), node_cpus=(2,)))


def survey(root: Path) -> list[FileResult]:
    return [survey_file(path, root) for path in sorted(root.rglob("*.cfg"))]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(results: list[FileResult]) -> str:
    loaded = [r for r in results if r.refused is None]
    refused = [r for r in results if r.refused is not None]
    windows, windows_full = sum(r.windows for r in loaded), sum(r.windows_full for r in loaded)
    histos, histos_full = sum(r.histograms for r in loaded), sum(r.histograms_full for r in loaded)
    files_full = sum(1 for r in loaded if not r.gaps)
    histos_evaluated = sum(r.histograms_evaluated for r in loaded)
    windows_evaluated = sum(r.windows_evaluated for r in loaded)
    out = [_INTRO, "## Summary", "",
           f"- {len(results)} cfg files: {len(loaded)} read, {len(refused)} refused with a reason.",
           f"- {windows} windows read, {windows_full} described fully, {windows - windows_full} with a named gap.",
           f"- {windows_evaluated} of the {windows} windows are evaluated by popview's engine (drawn as "
           f"timelines in the window's Paraver views).",
           f"- {histos} histograms read, {histos_full} described fully, {histos - histos_full} with a named gap.",
           f"- {files_full} of the {len(loaded)} read files are described fully in all their windows and histograms.",
           f"- {histos_evaluated} of the {histos} histograms are evaluated by popview's engine "
           f"(`popview paramedir`, the window's Paraver views); the others are listed at the end with the reason.",
           "", "## Refused files", "", "| file | reason |", "|---|---|"]
    out += [f"| `{r.path}` | {_cell(r.refused.split(': ', 1)[1] if ': ' in r.refused else r.refused)} |"
            for r in refused]
    counts = collections.Counter(reason for r in loaded for reason in r.reasons
                                 if not reason.startswith(("parent window", "control window", "data window",
                                                           "3D control window")))
    out += ["", "## What popview does not evaluate yet, by cause", "",
            "Windows and histograms that only inherit a gap from a parent or control/data window are",
            "counted in the file table, not here.", "", "| cause | occurrences |", "|---|---:|"]
    out += [f"| {_cell(reason)} | {count} |" for reason, count in counts.most_common()]
    causes = collections.Counter(reason for r in loaded for reason in r.window_reasons)
    out += ["", "## Why windows do not evaluate, by cause", "",
            "A derived window counts under the cause of the parent it cannot evaluate.", "",
            "| cause | windows |", "|---|---:|"]
    out += [f"| {_cell(reason)} | {count} |" for reason, count in causes.most_common()]
    out += ["", "## Per file", "",
            "`wN` is the window at position N, `hN` the N-th histogram.", "",
            "| file | format | windows fully described | windows evaluated | histograms fully described "
            "| histograms evaluated | not evaluated yet, and why |",
            "|---|---|---:|---:|---:|---:|---|"]
    for r in loaded:
        out.append(f"| `{r.path}` | {r.version} | {r.windows_full}/{r.windows} | {r.windows_evaluated}/{r.windows}"
                   f" | {r.histograms_full}/{r.histograms}"
                   f" | {r.histograms_evaluated}/{r.histograms} | {_cell('<br>'.join(r.gaps)) or 'all described'} |")
    out += ["", "## Histograms the engine does not evaluate yet", "",
            "What `popview paramedir` says on stderr and the window's Paraver view lists, per histogram.", "",
            "| file | histogram: why |", "|---|---|"]
    out += [f"| `{r.path}` | {_cell(reason)} |" for r in loaded for reason in r.not_evaluated]
    return "\n".join(out) + "\n"


def _write_atomically(path: Path, text: str) -> None:
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.replace(temp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m popview.analysis.cfg.survey", description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="folder searched for *.cfg files")
    parser.add_argument("-o", "--output", type=Path, help="markdown file to write (default: standard output)")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"{args.root}: not a folder", file=sys.stderr)
        return 2
    text = render(survey(args.root))
    if args.output is None:
        sys.stdout.write(text)
    else:
        _write_atomically(args.output, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

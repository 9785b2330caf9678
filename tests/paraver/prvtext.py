"""Tiny hand-written Paraver traces for reader tests."""
from __future__ import annotations

from pathlib import Path

PCF = """DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC

STATES
0    Idle
1    Running
3    Waiting a message
13   Group Communication

STATES_COLOR
0    {117,195,255}
1    {0,0,255}
3    {255,0,0}
13   {255,144,26}

EVENT_TYPE
0    50000001    MPI Point-to-point
0    50000002    MPI Collective Comm
VALUES
0   Outside MPI
3   MPI_Send
10  MPI_Allreduce

EVENT_TYPE
7  42000050 PAPI_TOT_INS [Instr completed]
7  42000059 PAPI_TOT_CYC [Total cycles]

EVENT_TYPE
0    60000019    User function
VALUES
0   End
1   main_loop
"""

ROW = """LEVEL CPU SIZE 2
1.nodeA
2.nodeA

LEVEL NODE SIZE 1
nodeA

LEVEL THREAD SIZE 2
THREAD 1.1.1
THREAD 1.2.1
"""

HEADER = "#Paraver (01/02/2024 at 10:00):1000_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2\n"

# Two ranks: rank 0 runs 0-600 then allreduce 600-1000; rank 1 runs 0-800, allreduce 800-1000.
BODY = """1:1:1:1:1:0:600:1
1:1:1:1:1:600:1000:13
1:2:1:2:1:0:800:1
1:2:1:2:1:800:1000:13
2:1:1:1:1:0:60000019:1
2:1:1:1:1:600:50000002:10:42000050:1200:42000059:600
2:1:1:1:1:1000:50000002:0:60000019:0
2:2:1:2:1:0:60000019:1
2:2:1:2:1:800:50000002:10:42000050:2400:42000059:800
2:2:1:2:1:1000:50000002:0:60000019:0
3:1:1:1:1:100:110:2:1:2:1:300:310:64:7
"""


def write_trace(directory: Path, body: str = BODY, header: str = HEADER, name: str = "t",
                pcf: str | None = PCF, row: str | None = ROW) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    prv = directory / f"{name}.prv"
    prv.write_text(header + body)
    if pcf is not None:
        (directory / f"{name}.pcf").write_text(pcf)
    if row is not None:
        (directory / f"{name}.row").write_text(row)
    return prv

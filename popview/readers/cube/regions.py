"""Paradigm and role of regions from Cube 4.0 files, which record neither.

Score-P 1.x put the paradigm in the region's descr ("mpi", "compiler",
"user", "omp", ...); the roles are recovered from the names the way later
Score-P versions assign them, so the derived time hierarchy classifies
these old files like new ones.
"""
from __future__ import annotations

import re

_PARADIGM_WORDS = {
    "mpi": "mpi", "omp": "openmp", "openmp": "openmp", "pomp": "openmp", "compiler": "compiler",
    "user": "user", "pthread": "pthread", "cuda": "cuda", "opencl": "opencl", "shmem": "shmem",
    "measurement": "measurement", "io": "io",
}

# other writers' spellings of Score-P's paradigm names (CubeLib's example writer: "omp")
PARADIGM_SPELLINGS = {"omp": "openmp", "pomp": "openmp"}

_MPI_ROLES = (
    (re.compile(r"^MPI_I?barrier$", re.I), "barrier"),
    (re.compile(r"^MPI_(I?(Send|Bsend|Ssend|Rsend|Recv)|Sendrecv(_replace)?|(Send|Bsend|Ssend|Rsend|Recv)_init"
                r"|I?M?probe|I?mrecv)$", re.I), "point2point"),
    (re.compile(r"^MPI_I?(Bcast|Scatterv?)$", re.I), "one2all"),
    (re.compile(r"^MPI_I?(Gatherv?|Reduce)$", re.I), "all2one"),
    (re.compile(r"^MPI_I?((Neighbor_)?(Allgatherv?|Alltoall[vw]?)|Allreduce|Reduce_scatter(_block)?)$", re.I),
     "all2all"),
    (re.compile(r"^MPI_I?(Scan|Exscan)$", re.I), "other collective"),
    (re.compile(r"^MPI_R?(Put|Get)$", re.I), "rma"),
    (re.compile(r"^MPI_(R?accumulate|Get_accumulate|Rget_accumulate|Fetch_and_op|Compare_and_swap)$", re.I), "atomic"),
    (re.compile(r"^MPI_File_(open|close|delete|seek(_shared)?)$", re.I), "file_io metadata"),
    (re.compile(r"^MPI_File_i?(read|write)", re.I), "file_io"),
)

_OMP_ROLES = (
    ("implicit barrier", "implicit barrier"), ("ibarrier", "implicit barrier"), ("barrier", "barrier"),
    ("parallel", "parallel"), ("do", "loop"), ("for", "loop"), ("sections", "sections"), ("section", "section"),
    ("single", "single"), ("master", "master"), ("critical", "critical"), ("atomic", "atomic"),
    ("flush", "flush"), ("ordered", "ordered"), ("taskwait", "taskwait"), ("task", "task"),
    ("workshare", "workshare"),
)


def infer_paradigm_role(name: str, mod: str, descr: str) -> tuple[str, str]:
    """(paradigm, role) of a region known only by name, source module and description."""
    word = descr.strip().lower()
    paradigm = _PARADIGM_WORDS.get(word)
    if paradigm is None:
        if name.startswith("MPI_") or mod == "MPI":
            paradigm = "mpi"
        elif name.lower().startswith(("!$omp", "#pragma omp", "omp_")) or mod.upper() == "OMP":
            paradigm = "openmp"
        else:
            paradigm = "user"
    if paradigm == "mpi":
        return paradigm, next((role for rx, role in _MPI_ROLES if rx.match(name)), "function")
    if paradigm == "openmp":
        return paradigm, _omp_role(name)
    return paradigm, "function"


def _omp_role(name: str) -> str:
    low = name.lower()
    if low.startswith("omp_"):
        return "wrapper"
    construct = re.sub(r"^(!\$omp|#pragma omp)\s*", "", low).split("@")[0].strip()
    for key, role in _OMP_ROLES:
        if construct.startswith(key):
            return role
    return "function"

"""The time categories every format's states are sorted into: the POP vocabulary.

Readers map their own codes onto states and roles (model/states.py, region
roles); the conversion puts every state interval into one of these
categories (cache/cumulative.py); analysis and the replay speak only of
them. `PROFILE_METRICS` is the metric tree a trace's profile shows them as.
"""
from __future__ import annotations

CATEGORIES = ("comp_serial", "comp_parallel", "mpi_p2p", "mpi_collective", "mpi_sync", "mpi_other", "mpi_io",
              "omp_sync", "omp_management", "omp_idle", "io", "idle", "other", "gpu")
CAT = {name: i for i, name in enumerate(CATEGORIES)}
N_CAT = len(CATEGORIES)

# An MPI call's category by its region's role (others: mpi_other).
MPI_ROLE_CATEGORY = {"point2point": "mpi_p2p", "wait": "mpi_p2p", "collective": "mpi_collective",
                     "barrier": "mpi_sync", "io": "mpi_io"}

# (id, name, parent, categories summed); the order is the metric tree's.
PROFILE_METRICS = (
    ("time", "Time", None, CATEGORIES),
    ("comp", "Computation", "time", ("comp_serial", "comp_parallel")),
    ("comp_serial", "Computation outside OpenMP", "comp", ("comp_serial",)),
    ("comp_parallel", "Computation in OpenMP", "comp", ("comp_parallel",)),
    ("mpi", "MPI", "time", ("mpi_p2p", "mpi_collective", "mpi_sync", "mpi_other", "mpi_io")),
    ("mpi_p2p", "MPI point-to-point", "mpi", ("mpi_p2p",)),
    ("mpi_collective", "MPI collective", "mpi", ("mpi_collective",)),
    ("mpi_sync", "MPI synchronization", "mpi", ("mpi_sync",)),
    ("mpi_io", "MPI file I/O", "mpi", ("mpi_io",)),
    ("mpi_other", "MPI other", "mpi", ("mpi_other",)),
    ("omp", "OpenMP", "time", ("omp_sync", "omp_management", "omp_idle")),
    ("omp_sync", "OpenMP synchronization", "omp", ("omp_sync",)),
    ("omp_management", "OpenMP management", "omp", ("omp_management",)),
    ("omp_idle", "OpenMP idle threads", "omp", ("omp_idle",)),
    ("io", "File I/O", "time", ("io",)),
    ("other", "Other", "time", ("other", "idle", "gpu")),
)
CATEGORY_DESCRIPTIONS = {
    "time": "All time of the location", "comp": "Useful computation (state Running)",
    "comp_serial": "Useful computation outside OpenMP parallel regions",
    "comp_parallel": "Useful computation inside OpenMP parallel regions",
    "mpi": "Time in MPI calls (not Running)", "omp": "OpenMP runtime: synchronisation, fork/join, idle workers",
    "io": "File I/O outside MPI-IO", "other": "Idle, measurement overhead, anything else",
}

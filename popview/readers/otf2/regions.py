"""OTF2 region paradigms and roles in popview's vocabulary, and the thread
state each region stands for while it is the innermost open region."""
from __future__ import annotations

from popview.model import states as st

# OTF2 paradigm name -> popview Region.paradigm
PARADIGMS = {
    "USER": "user", "COMPILER": "compiler", "MPI": "mpi", "OPENMP": "openmp", "PTHREAD": "pthread",
    "CUDA": "cuda", "HIP": "hip", "OPENCL": "opencl", "OPENACC": "user", "SHMEM": "mpi",
    "MEASUREMENT_SYSTEM": "measurement", "SAMPLING": "measurement", "IO": "io", "POSIX_IO": "io",
    "ISO_C_IO": "io", "MPI_IO": "io", "NONE": "user", "UNKNOWN": "user", "QTHREADS": "pthread",
    "ORMQ": "pthread", "WINTHREAD": "pthread", "QTTHREAD": "pthread", "ACETHREAD": "pthread",
    "TBB": "pthread", "KOKKOS": "user", "CHARM": "user",
}

# OTF2 role name -> popview Region.role
ROLES = {
    "FUNCTION": "function", "WRAPPER": "function", "LOOP": "worksharing", "CODE": "function",
    "PARALLEL": "parallel", "SECTIONS": "worksharing", "SECTION": "worksharing", "WORKSHARE": "worksharing",
    "SINGLE": "worksharing", "SINGLE_SBLOCK": "worksharing", "MASTER": "worksharing",
    "CRITICAL": "sync", "ATOMIC": "sync", "BARRIER": "barrier", "IMPLICIT_BARRIER": "barrier",
    "FLUSH": "sync", "CRITICAL_SBLOCK": "worksharing", "ORDERED": "sync", "ORDERED_SBLOCK": "worksharing",
    "TASK": "task", "TASK_CREATE": "task_create", "TASK_WAIT": "wait", "COLL_ONE2ALL": "collective",
    "COLL_ALL2ONE": "collective", "COLL_ALL2ALL": "collective", "COLL_OTHER": "collective",
    "FILE_IO": "file_io", "POINT2POINT": "point2point", "RMA": "rma", "DATA_TRANSFER": "data_transfer",
    "ARTIFICIAL": "artificial", "THREAD_CREATE": "fork", "THREAD_WAIT": "join", "TASK_UNTIED": "task",
    "ALLOCATE": "allocate", "DEALLOCATE": "allocate", "REALLOCATE": "allocate",
    "FILE_IO_METADATA": "file_io", "KERNEL": "kernel", "KERNEL_LAUNCH": "function",
}

# Use the idle state of the location (THREADS / KERNELS roots, empty stacks).
LOCATION_IDLE = -1


def mpi_state(name: str, role: str) -> int:
    """Paraver state of an MPI call, from its role and name as Extrae classifies them."""
    n = name.lower()
    if role == "barrier" or n == "mpi_barrier":
        return 5
    if role == "collective":
        return 13
    if role == "file_io":
        return st.IO_STATE
    if role == "rma":
        return 20
    if "sendrecv" in n:
        return 16
    if n.startswith(("mpi_wait", "mpi_test")) or n.startswith("mpi_request_get_status"):
        return 8 if n.startswith("mpi_wait") else 6
    if "probe" in n:
        return 6
    if n.startswith(("mpi_isend", "mpi_issend", "mpi_ibsend", "mpi_irsend")):
        return 10
    if n.startswith("mpi_irecv"):
        return 11
    if n.startswith(("mpi_send", "mpi_ssend", "mpi_bsend", "mpi_rsend")):
        return 4
    if n.startswith(("mpi_recv", "mpi_mrecv")):
        return 3
    if n.startswith("mpi_i") and role != "point2point":
        return 13 if any(k in n for k in ("bcast", "reduce", "gather", "scatter", "all", "scan")) else st.MPI_OTHER
    return st.MPI_OTHER


def region_state(name: str, paradigm: str, role: str) -> int:
    """State code while this region is the innermost one on a location."""
    if role == "artificial" and name in ("THREADS", "TASKS", "KERNELS"):
        return LOCATION_IDLE
    if paradigm == "mpi":
        return mpi_state(name, role)
    if paradigm == "openmp":
        if role in ("barrier", "sync", "wait"):
            return st.OPENMP_SYNC
        if role in ("fork", "join", "task_create"):
            return 7
        return st.RUNNING
    if paradigm == "pthread":
        if role in ("fork", "join"):
            return 7
        return 9 if any(k in name.lower() for k in ("lock", "cond", "barrier", "join")) else 7
    if paradigm in ("cuda", "hip", "opencl"):
        if role == "kernel":
            return st.GPU_KERNEL
        if role == "data_transfer" or "memcpy" in name.lower():
            return 17
        return 15
    if paradigm == "io" or role == "file_io":
        return st.IO_STATE
    if paradigm == "measurement":
        return 15
    return st.RUNNING

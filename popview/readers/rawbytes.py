"""Reading bytes through an address inside numba kernels.

Numba counts the references to an array passed to a function, inlined or
not, with atomic operations; a helper called for every field of a record
(an integer of a Paraver line, a compressed integer of an OTF2 event) then
spends more time counting than reading. Helpers given the buffer's address
(`buf.ctypes.data`, the caller keeping `buf` alive) read it without that.
Interpreted kernels (popview.jit.interpreted) read the same byte through ctypes.
"""
from __future__ import annotations

import ctypes

from popview.jit import intrinsic


def _byte_at_python(address, index) -> int:
    return ctypes.c_uint8.from_address(int(address) + int(index)).value


@intrinsic(_byte_at_python)
def byte_at(typingctx, address, index):
    """The byte at address + index (no bounds check: the caller's indices are in range)."""
    from llvmlite import ir
    from numba.core import types

    def codegen(context, builder, signature, args):
        where = builder.add(args[0], context.cast(builder, args[1], signature.args[1], types.intp))
        return builder.load(builder.inttoptr(where, ir.IntType(8).as_pointer()))
    return types.uint8(types.intp, index), codegen

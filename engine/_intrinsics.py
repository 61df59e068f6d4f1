"""numba intrinsics the kernels share: memory prefetch and reads and writes that
other threads see (`shared_get`, `shared_set`).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch", "shared_get", "shared_set"]


@intrinsic
def prefetch(typingctx, arr, i):
    """Ask the CPU to start loading the cache line of ``arr[i]`` (a 1-d array, i an
    integer index into it): a hint, with no effect on any result (LLVM's
    ``llvm.prefetch``, for reading, into every cache level)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)):
        return None  # numba reports the call as untyped

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                       wraparound=False)
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_ptr],
            ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]))
        builder.call(fn, [builder.bitcast(ptr, byte_ptr), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, i), codegen


def _item_pointer(context, builder, aryty, array, index):
    ary = context.make_array(aryty)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)


@intrinsic
def shared_get(typingctx, arr, i):
    """``arr[i]`` read from memory every time (an atomic load, relaxed ordering), for a
    value another thread writes: a plain read may be kept in a register for the loop."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)
            and arr.dtype in (types.int64, types.float64)):
        return None

    def codegen(context, builder, signature, args):
        ptr = _item_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "monotonic", 8)

    return arr.dtype(arr, i), codegen


@intrinsic
def shared_set(typingctx, arr, i, value):
    """``arr[i] = value`` written to memory at once (an atomic store, relaxed ordering),
    for a value another thread reads (`shared_get`)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)
            and arr.dtype in (types.int64, types.float64)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ptr = _item_pointer(context, builder, aryty, args[0], args[1])
        val = context.cast(builder, args[2], signature.args[2], aryty.dtype)
        builder.store_atomic(val, ptr, "monotonic", 8)
        return context.get_dummy_value()

    return types.void(arr, i, value), codegen

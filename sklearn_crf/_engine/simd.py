"""Eight float64 lanes as one value: a vector type for the lane kernels.

numba runs LLVM without its SLP vectorizer, so eight independent scalar sums
stay eight scalar instructions, and its loop vectorizer only packs innermost
loops long enough for its unrolled vector body. :data:`f64x8` is an LLVM
``<8 x double>`` that numba passes around as one value (a register: one
``zmm`` with AVX-512, two ``ymm`` with AVX2), with a few operations on it,
each one LLVM instruction applied to every lane alike, so that a lane's
results do not depend on the other lanes.

Additions and products carry the "contract" fast-math flag of
:data:`~sklearn_crf._engine.config.OPTS`, as the scalar kernels' do:
:func:`vfma` is one fused multiply-add where the CPU has FMA.
"""

from llvmlite import ir
from numba import types
from numba.extending import intrinsic, models, register_model

#: lanes of :data:`f64x8`
WIDTH = 8

_VEC = ir.VectorType(ir.DoubleType(), WIDTH)
_CONTRACT = ("contract",)


class F64x8(types.Type):
    """numba type of eight float64 lanes (LLVM ``<8 x double>``)."""

    def __init__(self):
        super().__init__(name="f64x8")


#: the numba type of eight float64 lanes
f64x8 = F64x8()


@register_model(F64x8)
class _F64x8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VEC)


def _is_float_array(a):
    return isinstance(a, types.Array) and a.dtype == types.float64 and a.layout == "C"


def _pointer(context, builder, aryty, ary, index):
    data = context.make_array(aryty)(context, builder, ary).data
    return builder.bitcast(builder.gep(data, [index]), _VEC.as_pointer())


@intrinsic
def vload(typingctx, arr, index):
    """The eight float64 at flat offset ``index`` of a C-contiguous array."""
    if not _is_float_array(arr):
        return None
    sig = f64x8(arr, types.intp)

    def codegen(context, builder, signature, args):
        ptr = _pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load(ptr, align=8)

    return sig, codegen


@intrinsic
def vstore(typingctx, arr, index, v):
    """Store ``v`` at flat offset ``index`` of a C-contiguous array."""
    if not _is_float_array(arr) or v != f64x8:
        return None
    sig = types.none(arr, types.intp, f64x8)

    def codegen(context, builder, signature, args):
        ptr = _pointer(context, builder, signature.args[0], args[0], args[1])
        builder.store(args[2], ptr, align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def vsplat(typingctx, x):
    """``x`` in every lane."""
    sig = f64x8(types.float64)

    def codegen(context, builder, signature, args):
        one = builder.insert_element(ir.Constant(_VEC, ir.Undefined), args[0],
                                     ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), WIDTH), [0] * WIDTH)
        return builder.shuffle_vector(one, ir.Constant(_VEC, ir.Undefined), mask)

    return sig, codegen


@intrinsic
def vlane(typingctx, v, k):
    """Lane ``k`` of ``v``."""
    if v != f64x8:
        return None
    sig = types.float64(f64x8, types.intp)

    def codegen(context, builder, signature, args):
        return builder.extract_element(args[0], args[1])

    return sig, codegen


def _binary(op, doc):
    def typer(typingctx, a, b):
        if a != f64x8 or b != f64x8:
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, op)(args[0], args[1], flags=_CONTRACT)

        return f64x8(f64x8, f64x8), codegen

    typer.__name__ = typer.__qualname__ = "v" + op[1:]
    typer.__doc__ = doc
    return intrinsic(typer)


vadd = _binary("fadd", "``a + b`` in every lane.")
vsub = _binary("fsub", "``a - b`` in every lane.")
vmul = _binary("fmul", "``a * b`` in every lane.")
vdiv = _binary("fdiv", "``a / b`` in every lane.")


@intrinsic
def vfma(typingctx, a, b, c):
    """``a * b + c`` in every lane, one rounding where the CPU has FMA."""
    if a != f64x8 or b != f64x8 or c != f64x8:
        return None
    sig = f64x8(f64x8, f64x8, f64x8)

    def codegen(context, builder, signature, args):
        p = builder.fmul(args[0], args[1], flags=_CONTRACT)
        return builder.fadd(p, args[2], flags=_CONTRACT)

    return sig, codegen


def _select(cmp, doc, name):
    def typer(typingctx, a, b, x, y):
        if a != f64x8 or b != f64x8 or x != f64x8 or y != f64x8:
            return None

        def codegen(context, builder, signature, args):
            mask = builder.fcmp_ordered(cmp, args[0], args[1])
            return builder.select(mask, args[2], args[3])

        return f64x8(f64x8, f64x8, f64x8, f64x8), codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


vselect_gt = _select(">", "``x if a > b else y`` in every lane (False for NaN).",
                     "vselect_gt")
vselect_lt = _select("<", "``x if a < b else y`` in every lane (False for NaN).",
                     "vselect_lt")
vselect_ge = _select(">=", "``x if a >= b else y`` in every lane (False for NaN).",
                     "vselect_ge")

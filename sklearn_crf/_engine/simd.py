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

Besides: 8 x 8 transposes between rows and lanes (:func:`vtranspose_load`,
:func:`vtranspose_store`), element reads without numba's negative-index
wrap (:func:`element`), cache prefetches (:func:`prefetch`,
:func:`prefetch_write`), and :data:`EIGHT_SUMS`, whether eight f64x8 sums
fit in the target's registers.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

#: lanes of :data:`f64x8`
WIDTH = 8


def _target_features():
    """The CPU features numba compiles for (``NUMBA_CPU_FEATURES``, else the
    host's)."""
    from numba.core import codegen, config

    if config.CPU_FEATURES is not None:
        return config.CPU_FEATURES
    return codegen.get_host_cpu_features()


#: eight :data:`f64x8` sums fit in registers with their operands: 32 vector
#: registers (AVX-512), one per f64x8; without AVX-512, 16 registers of half
#: an f64x8 each hold four sums. Read once at import, a compile-time constant
#: of the kernels (numba's cache keys its entries by the CPU features too):
#: it picks how many sums a pass keeps, never the order of any sum's terms.
EIGHT_SUMS = "+avx512f" in _target_features().split(",")

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
def element(typingctx, arr, index):
    """The element at flat offset ``index >= 0`` of a C-contiguous array,
    without numba's wrap of negative indices (four instructions per access
    where LLVM cannot prove the index non-negative, as in a loop over
    ``range(k0, k1)``) and with one address for every element of a row (2-d
    indexing lets LLVM keep a pointer per column)."""
    if not (isinstance(arr, types.Array) and arr.layout == "C"
            and arr.dtype in (types.int32, types.int64, types.float64)):
        return None
    sig = arr.dtype(arr, types.intp)

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.load(builder.gep(data, [args[1]]))

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


def _transpose(builder, rows):
    """The 8 x 8 transpose of eight vectors: three rounds of eight shuffles
    (pairs of rows, then of pairs, then of quadruples)."""
    def shuffle(a, b, mask):
        return builder.shuffle_vector(
            a, b, ir.Constant(ir.VectorType(ir.IntType(32), WIDTH), mask))

    lo1, hi1 = [0, 8, 2, 10, 4, 12, 6, 14], [1, 9, 3, 11, 5, 13, 7, 15]
    lo2, hi2 = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
    lo4, hi4 = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]
    t = []  # t[2i], t[2i + 1]: the even and odd columns of rows 2i and 2i + 1
    for i in range(0, WIDTH, 2):
        t += [shuffle(rows[i], rows[i + 1], lo1), shuffle(rows[i], rows[i + 1], hi1)]
    s = []  # per half of the rows: columns (0, 4), (2, 6), (1, 5), (3, 7)
    for h in (0, 4):
        s += [shuffle(t[h], t[h + 2], lo2), shuffle(t[h], t[h + 2], hi2),
              shuffle(t[h + 1], t[h + 3], lo2), shuffle(t[h + 1], t[h + 3], hi2)]
    cols = [None] * WIDTH
    for q, (k0, k1) in enumerate(((0, 4), (2, 6), (1, 5), (3, 7))):
        cols[k0] = shuffle(s[q], s[q + 4], lo4)
        cols[k1] = shuffle(s[q], s[q + 4], hi4)
    return cols


def _is_index_array(a):
    return isinstance(a, types.Array) and a.dtype == types.int64 and a.layout == "C"


def _element(context, builder, aryty, ary, index):
    data = context.make_array(aryty)(context, builder, ary).data
    return builder.load(builder.gep(data, [ir.Constant(ir.IntType(64), index)]))


@intrinsic
def vtranspose_load(typingctx, src, rows, c, dst, d):
    """Eight rows in, eight columns out: ``dst[d + 8k + w] = src[rows[w] + c + k]``
    for ``k, w`` in 0..7 (flat offsets of C-contiguous arrays; ``rows`` int64):
    eight labels of eight sentences' tokens into lane order."""
    if not (_is_float_array(src) and _is_index_array(rows) and _is_float_array(dst)):
        return None
    sig = types.none(src, rows, types.intp, dst, types.intp)

    def codegen(context, builder, signature, args):
        srcty, rowsty, _, dstty, _ = signature.args
        vectors = []
        for w in range(WIDTH):
            offset = builder.add(_element(context, builder, rowsty, args[1], w), args[2])
            vectors.append(builder.load(_pointer(context, builder, srcty, args[0], offset),
                                        align=8))
        for k, col in enumerate(_transpose(builder, vectors)):
            offset = builder.add(args[4], ir.Constant(ir.IntType(64), WIDTH * k))
            builder.store(col, _pointer(context, builder, dstty, args[3], offset), align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def vtranspose_store(typingctx, src, s, dst, rows, c):
    """Eight columns in, eight rows out, the inverse of :func:`vtranspose_load`:
    ``dst[rows[w] + c + k] = src[s + 8k + w]`` for ``k`` in 0..7 and each lane
    ``w`` whose ``rows[w]`` is not negative (the others store nothing)."""
    if not (_is_float_array(src) and _is_index_array(rows) and _is_float_array(dst)):
        return None
    sig = types.none(src, types.intp, dst, rows, types.intp)

    def codegen(context, builder, signature, args):
        srcty, _, dstty, rowsty, _ = signature.args
        vectors = []
        for k in range(WIDTH):
            offset = builder.add(args[1], ir.Constant(ir.IntType(64), WIDTH * k))
            vectors.append(builder.load(_pointer(context, builder, srcty, args[0], offset),
                                        align=8))
        zero = ir.Constant(ir.IntType(64), 0)
        for w, row in enumerate(_transpose(builder, vectors)):
            start = _element(context, builder, rowsty, args[3], w)
            with builder.if_then(builder.icmp_signed(">=", start, zero)):
                offset = builder.add(start, args[4])
                builder.store(row, _pointer(context, builder, dstty, args[2], offset),
                              align=8)
        return context.get_dummy_value()

    return sig, codegen


def _prefetch(name, rw, doc):
    def typer(typingctx, arr, index):
        if not (isinstance(arr, types.Array) and arr.layout == "C"
                and arr.dtype in (types.int32, types.int64, types.float64)):
            return None
        sig = types.none(arr, types.intp)

        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            ptr = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            builder.call(fn, [ptr, ir.Constant(i32, rw), ir.Constant(i32, 3),
                              ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


prefetch = _prefetch(
    "prefetch", 0,
    "Ask for the cache line of the element at flat offset ``index`` of a "
    "C-contiguous float64, int64 or int32 array, to be read soon (no fault if "
    "out of range).")
prefetch_write = _prefetch(
    "prefetch_write", 1,
    "As :func:`prefetch`, for a line about to be written.")

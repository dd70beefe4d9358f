"""Runs a Program on arrays: each op's own ``forward``, in program order.

The program is compiled once into a flat list of steps over a frame (a list with one slot per
value): each step is a closure holding its op's kernel, attrs and the slots it reads and writes,
run in a tight loop; weights and constants sit in the frame from the start. Feeds are checked
against the input types (rank, dtype, static dims, and one size per symbol across all inputs), so
a wrong feed fails with a clear message instead of deep inside an op, once per distinct feed
signature (shapes and dtypes): the sizes found then are kept with a specialisation of the steps,
in which ops with a lowering (``lowering``) run a callable prepared for those shapes. The first run
of a specialisation goes step by step, each lowered op checking its inputs against the types it was
prepared for; later runs call one generated straight-line function (``_straight_line``). ``specialize``
substitutes concrete sizes for the symbols, giving a program with fixed shapes (a loaded model
re-specialised to one input shape). With ``free_dead=True`` an intermediate array is dropped
right after its last use, which bounds peak memory by the live set instead of the whole program.
Nothing here records gradients: ops run their ``forward`` with a context that needs none.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
import time
from collections.abc import Callable

import numpy as np

from ..core import symbolic
from ..core.op import REGISTRY, Context
from ..errors import DTypeError, ShapeError
from .ir import CONTROL_OPS, SOURCE_OPS, Block, Operation, Program, Value, last_uses
from .parser import parse_program
from .printer import print_program
from .verifier import verify


def bind_inputs(program: Program, feeds: list) -> dict[str, int]:
    """Symbol sizes from the feeds; ShapeError/DTypeError name the input and what was expected."""
    inputs = program.inputs
    names = program.input_names
    if len(feeds) != len(inputs):
        raise ShapeError(f"the program takes {len(inputs)} inputs {names}, got {len(feeds)}")
    bindings: dict[str, int] = {}
    for name, value, array in zip(names, inputs, feeds, strict=True):
        if array.dtype != value.dtype:
            raise DTypeError(
                f"input {name!r}: expected dtype {value.dtype}, got {array.dtype}; convert it with .astype('{value.dtype}')"
            )
        if array.ndim != len(value.shape):
            raise ShapeError(
                f"input {name!r}: expected rank {len(value.shape)} {list(value.shape)}, got {list(array.shape)}"
            )
        for axis, (d, n) in enumerate(zip(value.shape, array.shape, strict=True)):
            if isinstance(d, int):
                if d != n:
                    raise ShapeError(
                        f"input {name!r}: expected shape {list(value.shape)}, got {list(array.shape)} (axis {axis})"
                    )
            elif symbolic.symbols(d) == {d}:
                if bindings.setdefault(d, n) != n:
                    raise ShapeError(
                        f"input {name!r}: dim {d} is {n} here but {bindings[d]} in an earlier input; they must agree"
                    )
            elif (multiple := _multiple_of(d)) is not None:
                symbol, k = multiple
                if n % k:
                    raise ShapeError(
                        f"input {name!r}: axis {axis} must be a multiple of {k} (the model's shape is "
                        f"{list(value.shape)}), got {n}; resize or pad the input to a multiple of {k}"
                    )
                bindings.setdefault(symbol, n // k)
    for name, value, array in zip(names, inputs, feeds, strict=True):
        want = tuple(symbolic.evaluate(d, bindings) for d in value.shape)
        if want != array.shape:
            raise ShapeError(
                f"input {name!r}: expected shape {list(value.shape)} = {list(want)}, got {list(array.shape)}"
            )
    return bindings


def _multiple_of(dim) -> tuple[str, int] | None:
    """``'32*H'`` -> ``('H', 32)``: an input dim declared as a multiple of a symbol (an imported model
    whose shape arithmetic only holds for such sizes), else None."""
    poly = symbolic.to_poly(dim)
    if len(poly) == 1:
        ((monomial, k),) = poly.items()
        if len(monomial) == 1 and k > 0 and symbolic.symbols(monomial[0]) == {monomial[0]}:
            return monomial[0], k
    return None


def _store(frame: list, slots, arrays) -> None:
    """Write ``arrays`` into the frame's ``slots``, one each."""
    for slot, array in zip(slots, arrays, strict=True):
        frame[slot] = array


@contextlib.contextmanager
def collector_paused():
    """Python's cycle collector off while a plan is built: planning makes thousands of closures and
    tuples that all live as long as the plan, and each collection it triggered walked the loaded
    model's ~250k objects (PP-OCRv6 rec: 20 -> 11 ms to plan a new input width). Re-enabled only by
    whoever disabled it, so nested or concurrent plans leave it as they found it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Specialisation:
    """The steps for one feed signature. The first run goes step by step, so that every lowered op
    checks its inputs against the types it was prepared for (they follow from the feed shapes
    alone); later runs use the straight-line function made from what that run saw."""

    def __init__(self, steps: list[Callable], make_straight: Callable[[], Callable]) -> None:
        self.steps = steps
        self._make_straight = make_straight
        self._straight: Callable | None = None

    def run(self, frame: list) -> None:
        if self._straight is not None:
            self._straight(frame)
            return
        for step in self.steps:
            step(frame)
        with collector_paused():
            self._straight = self._make_straight()


_MAX_SPECIALISATIONS = 64
"""Feed signatures kept per executor; past that the oldest is dropped (a model fed ever-new shapes)."""


class Executor:
    """Runs one program; thread-safe (each run has its own frame), weights shared read-only and read
    when the executor is made."""

    def __init__(self, program: Program, free_dead: bool = False) -> None:
        self.program = program
        self.free_dead = free_dead
        values = list(program.values())
        self._slot = {id(v): i for i, v in enumerate(values)}
        self._none = len(values)  # the slot of an absent optional input, always None
        self._template: list = [None] * (len(values) + 1)
        for op in program.walk():
            if op.name == "param":
                self._template[self._slot[id(op.outputs[0])]] = program.weights[op.attrs["name"]]
            elif op.name == "constant":
                self._template[self._slot[id(op.outputs[0])]] = op.attrs["value"]
        self._feeds = [self._slot[id(v)] for v in program.inputs]
        self._yields = [self._slot[id(v)] for v in program.outputs]
        self._ops, self._dead = self._ops_and_dead(program.block)
        self._read = set(last_uses(program.block))  # a lowering may skip results outside it
        self._steps = [self._step(op, dead) for op, dead in zip(self._ops, self._dead, strict=True)]
        self._specialised: dict[tuple, list] = {}
        self._lock = threading.Lock()

    def run(self, feeds: list) -> list[np.ndarray]:
        specialisation, frame = self._prepare(feeds)
        specialisation.run(frame)
        return [frame[s] for s in self._yields]

    def profile(self, feeds: list) -> dict[str, float]:
        """Seconds per op type over one run of ``feeds``, each step timed on its own (ops inside a
        cond/while count as that op); where a model's time goes."""
        specialisation, frame = self._prepare(feeds)
        totals: dict[str, float] = {}
        for op, step in zip(self._ops, specialisation.steps, strict=True):
            start = time.perf_counter()
            step(frame)
            totals[op.name] = totals.get(op.name, 0.0) + time.perf_counter() - start
        return totals

    def _prepare(self, feeds: list) -> tuple[_Specialisation, list]:
        """The specialisation for these feeds' signature (made on first sight) and a frame holding them."""
        feeds = [np.asarray(f) for f in feeds]
        specialisation = self._specialised.get(tuple((f.shape, f.dtype) for f in feeds))
        if specialisation is None:
            with collector_paused():
                specialisation = self._specialise(feeds)
        frame = self._template.copy()
        _store(frame, self._feeds, feeds)
        return specialisation, frame

    # ----- compiling -------------------------------------------------------------------------------
    def _ops_and_dead(self, block: Block) -> tuple[list[Operation], list[tuple[int, ...]]]:
        """The block's compute and control ops, and per op the slots to free after it: results and
        arguments of this block whose last reader it is (a result nothing reads goes right after its
        op). Sources stay (a loop body runs again); no freeing unless ``free_dead``."""
        ops = [op for op in block.ops if op.name not in SOURCE_OPS]
        if not self.free_dead:
            return ops, [()] * len(ops)
        last = last_uses(block)
        position = {id(op): k for k, op in enumerate(ops)}
        dead: list[list[int]] = [[] for _ in ops]
        defined = [(v, i) for i, op in enumerate(block.ops) if op.name not in SOURCE_OPS for v in op.outputs]
        for v, made in [*defined, *((a, None) for a in block.args)]:
            end = last.get(id(v), made)
            if end is not None and end < len(block.ops):  # yields live to the end of the block
                dead[position[id(block.ops[end])]].append(self._slot[id(v)])
        return ops, [tuple(d) for d in dead]

    def _step(
        self, op: Operation, dead: tuple[int, ...], run: Callable | None = None, types=None, on_mismatch=None
    ) -> Callable:
        """``step(frame)`` for one op: read its slots, run it (``run`` while the inputs have the
        (shape, dtype) ``types`` it was prepared for, else ``forward`` after calling ``on_mismatch``),
        write its results, free ``dead``."""
        ins = tuple(self._none if v is None else self._slot[id(v)] for v in op.inputs)
        outs = tuple(self._slot[id(v)] for v in op.outputs)
        if op.name in CONTROL_OPS:
            body = self._cond(op, ins, outs) if op.name == "cond" else self._while(op, ins, outs)
        else:
            forward, attrs, needs = REGISTRY[op.name].forward, op.attrs, (False,) * len(ins)

            def call(args):
                return forward(Context(needs, attrs), *args, **attrs)

            if run is not None:
                generic = call

                def call(args):
                    if [None if a is None else (a.shape, a.dtype) for a in args] == types:
                        return run(*args)
                    on_mismatch()
                    return generic(args)

            if len(outs) == 1:
                (out,) = outs

                def body(frame):
                    frame[out] = call([frame[i] for i in ins])

            else:

                def body(frame):
                    _store(frame, outs, call([frame[i] for i in ins]))

        if not dead:
            return body

        def step(frame):
            body(frame)
            for slot in dead:
                frame[slot] = None

        return step

    def _block_steps(self, block: Block) -> list[Callable]:
        ops, dead = self._ops_and_dead(block)
        return [self._step(op, d) for op, d in zip(ops, dead, strict=True)]

    def _cond(self, op: Operation, ins: tuple, outs: tuple) -> Callable:
        (pred,) = ins
        branches = [(self._block_steps(b), [self._slot[id(v)] for v in b.yields]) for b in op.blocks]

        def body(frame):
            steps, yields = branches[0] if bool(np.asarray(frame[pred]).reshape(-1)[0]) else branches[1]
            for step in steps:
                step(frame)
            _store(frame, outs, [frame[s] for s in yields])

        return body

    def _while(self, op: Operation, ins: tuple, outs: tuple) -> Callable:
        cond, loop = op.blocks
        cond_args, loop_args = ([self._slot[id(a)] for a in b.args] for b in (cond, loop))
        cond_steps, loop_steps = self._block_steps(cond), self._block_steps(loop)
        (test,) = (self._slot[id(v)] for v in cond.yields)
        loop_yields = [self._slot[id(v)] for v in loop.yields]

        def body(frame):
            carried = [frame[i] for i in ins]
            while True:
                _store(frame, cond_args, carried)
                for step in cond_steps:
                    step(frame)
                if not bool(np.asarray(frame[test]).reshape(-1)[0]):
                    break
                _store(frame, loop_args, carried)
                for step in loop_steps:
                    step(frame)
                carried = [frame[s] for s in loop_yields]
            _store(frame, outs, carried)

        return body

    # ----- specialising ------------------------------------------------------------------------------
    def _specialise(self, feeds: list) -> list[Callable]:
        """Check the feeds (raising on a bad one), then the main block's steps with every op that has a
        lowering and fully known shapes at these sizes prepared for them (an absent optional input, and
        a result nothing reads, has type None: the lowering need not compute the latter); kept per
        feed signature."""
        bindings = bind_inputs(self.program, feeds)
        sizes: dict = {}

        def concrete(value: Value) -> tuple | None:
            """(shape, dtype) at these sizes, or None where a dim is data-dependent (unknown until run)."""
            for d in value.shape:
                if isinstance(d, str) and d not in sizes:
                    try:
                        sizes[d] = symbolic.evaluate(d, bindings)
                    except ShapeError:
                        sizes[d] = None
            shape = tuple(sizes[d] if isinstance(d, str) else d for d in value.shape)
            return None if None in shape else (shape, value.dtype)

        steps, lowered, mismatched = list(self._steps), {}, set()
        for k, (op, dead) in enumerate(zip(self._ops, self._dead, strict=True)):
            record = REGISTRY.get(op.name)  # control flow (cond, while) has no record
            lower = record.lower if record is not None else None
            if lower is None:
                continue
            ins = [None if v is None else concrete(v) for v in op.inputs]
            outs = [concrete(v) if id(v) in self._read else None for v in op.outputs]
            if any(t is None and v is not None for t, v in zip(ins, op.inputs, strict=True)) or outs == [None] * len(
                outs
            ):
                continue
            if any(t is None and id(v) in self._read for t, v in zip(outs, op.outputs, strict=True)):
                continue
            run = lower(op.attrs, ins, outs)
            if run is not None:
                lowered[k] = run
                steps[k] = self._step(op, dead, run, ins, functools.partial(mismatched.add, k))
        specialisation = _Specialisation(steps, lambda: self._straight_line(steps, lowered, mismatched))
        with self._lock:
            if len(self._specialised) >= _MAX_SPECIALISATIONS:
                del self._specialised[next(iter(self._specialised))]
            self._specialised[tuple((f.shape, f.dtype) for f in feeds)] = specialisation
        return specialisation

    def _straight_line(self, steps: list[Callable], lowered: dict[int, Callable], mismatched: set) -> Callable:
        """``run(frame)``: the main block as one generated function that calls each op on frame slots
        directly (a lowered op's callable, else its ``forward``), with no per-op closures, argument
        lists or type checks (about 1.5 us an op, a third of LeNet's run at batch 1). A lowered op
        whose inputs did not match its prepared types on the checked first run calls its
        ``forward``; control flow runs its step."""
        lines, names = [], {"Context": Context}
        for k, (op, dead, step) in enumerate(zip(self._ops, self._dead, steps, strict=True)):
            if op.name in CONTROL_OPS:
                names[f"step{k}"] = step
                lines.append(f"step{k}(f)")
                continue
            args = ["None" if v is None else f"f[{self._slot[id(v)]}]" for v in op.inputs]
            if k in lowered and k not in mismatched:
                names[f"run{k}"] = lowered[k]
                call = f"run{k}({', '.join(args)})"
            else:
                names[f"fwd{k}"], names[f"attrs{k}"] = REGISTRY[op.name].forward, op.attrs
                names[f"needs{k}"] = (False,) * len(args)
                call = f"fwd{k}({', '.join([f'Context(needs{k}, attrs{k})', *args])}, **attrs{k})"
            results = "".join(f"f[{self._slot[id(v)]}], " for v in op.outputs)
            lines.append(f"{results[:-2] if len(op.outputs) == 1 else results} = {call}" if results else call)
            lines.extend(f"f[{slot}] = None" for slot in dead)
        source = "def run(f):\n" + "".join(f"    {line}\n" for line in lines or ["pass"])
        exec(_compiled(source), names)  # noqa: S102 - our own text
        return names["run"]


@functools.lru_cache(maxsize=64)
def _compiled(source: str):
    """The straight-line text compiled once: every input size of a model gives the same text (only
    the callables it names differ), and compiling it was ~2 ms of each new size's plan."""
    return compile(source, "<paddlectl straight-line run>", "exec")


def run_program(program: Program, feeds: list) -> list[np.ndarray]:
    """One-shot convenience: ``Executor(program).run(feeds)``."""
    return Executor(program).run(feeds)


def specialize(program: Program, bindings: dict[str, int]) -> Program:
    """A copy of ``program`` with every symbol replaced by its size (fixed shapes), verified."""
    copy = parse_program(print_program(program), program.weights)
    for v in copy.values():
        v.shape = tuple(symbolic.simplify(symbolic.evaluate(d, bindings)) for d in v.shape)
    return verify(copy)


def value_types(values: list[Value]) -> list[dict]:
    """JSON-able (shape, dtype) of values, as stored in a model's metadata."""
    return [{"shape": list(v.shape), "dtype": v.dtype.name} for v in values]

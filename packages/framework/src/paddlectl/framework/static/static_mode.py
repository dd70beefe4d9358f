"""Paddle's static mode: after ``paddle.enable_static()`` every op call is recorded into a Program,
and ``paddle.static.Executor(place).run(program, feed, fetch_list)`` runs it on the feeds.

One graph, two ways in: the Program is recorded by the same Tracer ``jit.to_static`` uses and run
by the same IR executor. Recording runs each op on example values as well (Python code reads
shapes while building), so ``static.data`` gives each unknown dim an example size and a symbol;
the leading unknown dim of every input is the batch, one symbol ``N`` shared by all inputs.
``optimizer.minimize(loss)`` in static mode records the gradients (the tape is kept while
recording) and each ``Executor.run`` of that program applies one optimizer step.
"""

from __future__ import annotations

import contextlib
import copy

import numpy as np

from .. import modes
from ..core.autograd import grad as autograd_grad
from ..core.dtype import convert_dtype
from ..core.state import STATE
from ..core.tensor import Parameter, Tensor
from ..errors import ConfigError, ShapeError
from .executor import Executor as _IRExecutor
from .ir import Block, Operation
from .ir import Program as _IRProgram
from .trace import Tracer
from .verifier import verify

BATCH_EXAMPLE, DIM_EXAMPLE = 3, 16


class _Recorder(Tracer):
    """The tracer of a static-mode Program: every tensor an op records gets a name unique in the
    program (Paddle's variables all have one), so ``fetch_list=[loss.name]`` finds it."""

    def bind(self, tensor: Tensor, value) -> None:
        if tensor.name is None:
            tensor.name = f"tmp_{value.name}"
        super().bind(tensor, value)


class Executable:
    """What ``Executor.run`` runs: a Program being recorded, a ``CompiledProgram`` of one, or a
    loaded inference program. ``_run`` gets the feeds by name and the fetch list."""

    def _run(self, feed: dict, fetch_list: list, return_numpy: bool) -> list:
        raise NotImplementedError


class Program(Executable):
    """``paddle.static.Program``: the ops recorded while it was the main program."""

    def __init__(self) -> None:
        self._tracer = _Recorder({}, {})
        self._feeds: dict[str, Tensor] = {}
        self._training: list[tuple] = []  # (optimizer, [(param, traced gradient)])
        self._after_run: list = []  # updates each run applies after the optimizer steps (an EMA's)
        self._limit: int | None = None  # a clone for test sees only the ops recorded before it
        self._executors: dict[tuple, _IRExecutor] = {}
        self.random_seed = 0

    # ----- Paddle's Program surface -----------------------------------------------------------
    def clone(self, for_test: bool = False) -> Program:
        twin = copy.copy(self)
        twin._executors = {}
        if for_test:
            twin._training, twin._after_run = [], []
            twin._limit = len(self._tracer.program.block.ops)
        return twin

    def global_block(self) -> Program:
        """The program's one block: the Program itself (``cond``/``while`` bodies are ops' sub-blocks)."""
        return self

    current_block = global_block

    def block(self, index: int) -> Program:
        if index != 0:
            raise ConfigError(f"Program.block({index}): a static program here has one block, block(0)")
        return self

    @property
    def num_blocks(self) -> int:
        return 1

    @property
    def ops(self) -> list[Operation]:
        return list(self._ops())

    def list_vars(self) -> list[Tensor]:
        """Every variable of the program: its feeds, its parameters, then what its ops computed."""
        params = self.all_parameters()
        seen = {id(t) for t in (*self._feeds.values(), *params)}
        computed = [t for t in self._tracer.keep if id(t) not in seen and self._tracer.is_traced(t)]
        return [*self._feeds.values(), *params, *dict.fromkeys(computed)]

    def state_dict(self, mode: str = "all", scope=None) -> dict:
        """``{name: Tensor}`` of the parameters (``mode='param'``), the optimizers' state (``'opt'``)
        or both (``'all'``)."""
        if mode not in ("param", "opt", "all"):
            raise ConfigError(f"Program.state_dict: mode must be 'param', 'opt' or 'all', got {mode!r}")
        state = {p.name: p for p in self.all_parameters()} if mode != "opt" else {}
        if mode != "param":
            for optimizer in dict.fromkeys(optimizer for optimizer, _ in self._training):
                state.update(optimizer.state_dict())
        return state

    def create_var(self, name=None, shape=None, dtype=None, persistable=False, **kwargs) -> Tensor:
        """A variable nothing computes yet: an input of the program, fed by ``name`` when it runs
        (what a Paddle variable without a producing op needs too)."""
        if shape is None:
            raise ConfigError(f"create_var({name!r}): give the variable's shape")
        return self._data(name or f"var_{len(self._feeds)}", list(shape), np.dtype(convert_dtype(dtype or "float32")))

    def all_parameters(self) -> list[Parameter]:
        return [t for _, t in self._tracer.params.values() if isinstance(t, Parameter)]

    def num_ops(self) -> int:
        return len(self._ops())

    def __str__(self) -> str:
        return str(self._tracer.program)

    # ----- recording ---------------------------------------------------------------------------
    def _ops(self) -> list[Operation]:
        ops = self._tracer.program.block.ops
        return ops if self._limit is None else ops[: self._limit]

    def _data(self, name: str, shape, dtype) -> Tensor:
        tracer = self._tracer  # a name given again feeds the newer input, as in Paddle
        dims, example = [], []
        for i, d in enumerate(shape):
            if d is None or d == -1:
                symbol = "N" if i == 0 else f"{name}_{i}".replace(".", "_")
                tracer.bindings.setdefault(symbol, BATCH_EXAMPLE if i == 0 else DIM_EXAMPLE)
                dims.append(symbol)
                example.append(tracer.bindings[symbol])
            elif isinstance(d, int) and d >= 0:
                dims.append(d)
                example.append(d)
            else:
                raise ShapeError(
                    f"static.data {name!r}: dims are non-negative ints, or None/-1 for unknown; got {shape}"
                )
        rng = np.random.default_rng(len(self._feeds))
        array = rng.standard_normal(example) if dtype.kind == "f" else np.ones(example)
        t = Tensor._wrap(array.astype(dtype))
        t.name, t.stop_gradient = name, True
        value = tracer.program.new_value(tuple(dims), dtype, name)
        tracer.program.block.append(Operation("input", [], [value], {"name": name}))
        tracer.bind(t, value)
        self._feeds[name] = t
        return t

    def _minimize(self, optimizer, loss: Tensor, parameters=None, no_grad_set=None) -> tuple:
        """Record the gradients of ``loss`` for the program's trainable parameters (or ``parameters``)."""
        excluded = {n if isinstance(n, str) else n.name for n in (no_grad_set or ())}
        params = [
            p
            for p in (parameters if parameters is not None else self.all_parameters())
            if not p.stop_gradient and p.name not in excluded
        ]
        if not params:
            raise ConfigError("minimize in static mode: the program has no trainable parameter the loss can reach")
        grads = autograd_grad([loss], params, allow_unused=True)
        pairs = [(p, g) for p, g in zip(params, grads, strict=True) if g is not None]
        optimizer._adopt_parameters([p for p, _ in pairs])
        self._training.append((optimizer, pairs))
        return None, pairs

    # ----- running -----------------------------------------------------------------------------
    def _resolve(self, target) -> Tensor:
        if isinstance(target, Tensor):
            return target
        if isinstance(target, str):
            for _, t in self._tracer.params.values():
                if t.name == target:
                    return t
            if target in self._feeds:
                return self._feeds[target]
            for t in self._tracer.keep:  # every tensor an op recorded, by its (unique) name
                if getattr(t, "name", None) == target and self._tracer.is_traced(t):
                    return t
        raise ConfigError(
            f"fetch_list: {target!r} is not a variable of this program; pass the Tensor the program built"
        )

    def _weights(self) -> dict[str, np.ndarray]:
        return {name: t._data for name, t in self._tracer.params.values()}

    def _ir_program(self, outputs: list[Tensor]) -> _IRProgram:
        """The recorded ops ``outputs`` depend on, over the parameters' current values, verified."""
        values = [self._tracer.value_of(t) for t in outputs]
        block = Block(ops=[copy.copy(op) for op in _needed(self._ops(), values)], yields=values)
        return verify(_IRProgram(block, self._weights()))

    def _executor(self, outputs: list[Tensor]) -> tuple[_IRExecutor, list[str]]:
        values = [self._tracer.value_of(t) for t in outputs]
        key = (len(self._ops()), tuple(v.name for v in values), tuple(id(a) for a in self._weights().values()))
        found = self._executors.get(key)
        if found is None:
            found = self._executors[key] = _IRExecutor(self._ir_program(outputs))
        return found, found.program.input_names

    def _run(self, feed: dict, fetch_list: list, return_numpy: bool) -> list:
        if self is _Programs.startup or not self._ops():
            return []  # parameters got their initial values when they were created
        fetches = [self._resolve(t) for t in fetch_list]
        grads = [g for _, pairs in self._training for _, g in pairs]
        executor, names = self._executor(fetches + grads)
        missing = [n for n in names if n not in feed]
        if missing:
            raise ConfigError(f"Executor.run: feed lacks {missing}; the fetched values depend on them")
        arrays = executor.run([np.asarray(feed[n], dtype=self._feeds[n].dtype) for n in names])
        results, grad_arrays = arrays[: len(fetches)], iter(arrays[len(fetches) :])
        for optimizer, pairs in self._training:
            for p, _ in pairs:
                p.grad = Tensor._wrap(np.asarray(next(grad_arrays)))
            optimizer.step()
            optimizer.clear_grad()
        for update in self._after_run:
            update()
        return [np.asarray(r) if return_numpy else Tensor._wrap(np.asarray(r)) for r in results]


def _needed(ops: list[Operation], outputs) -> list[Operation]:
    """The ops the outputs depend on, in order (feeds that nothing fetched reads need no value)."""
    wanted = {id(v) for v in outputs}
    kept = []
    for op in reversed(ops):
        if any(id(v) in wanted for v in op.outputs):
            kept.append(op)
            wanted.update(id(v) for v in _reads(op))
    return kept[::-1]


def _reads(op: Operation):
    yield from (v for v in op.inputs if v is not None)
    for block in op.blocks:
        for inner in block.ops:
            yield from _reads(inner)
        yield from block.yields


class _Programs:
    main, startup = Program(), Program()


def default_main_program() -> Program:
    return _Programs.main


def default_startup_program() -> Program:
    return _Programs.startup


def _start() -> Program:
    STATE.tracer = _Programs.main._tracer
    return _Programs.main


def _stop() -> None:
    STATE.tracer = None


modes.register_static_mode(_start, _stop)


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Record into ``main_program`` inside the block."""
    if not isinstance(main_program, Program):
        raise ConfigError(
            f"program_guard: main_program must be a paddle.static.Program, got {type(main_program).__name__}"
        )
    saved = (_Programs.main, _Programs.startup)
    _Programs.main = main_program
    _Programs.startup = startup_program or saved[1]
    if modes.recording() is not None:
        modes.set_recording(main_program)
        STATE.tracer = main_program._tracer
    try:
        yield
    finally:
        _Programs.main, _Programs.startup = saved
        if modes.recording() is not None:
            modes.set_recording(saved[0])
            STATE.tracer = saved[0]._tracer


def data(name: str, shape, dtype=None, lod_level: int = 0) -> Tensor:
    """A feed of the main program (``None``/-1 dims: any size)."""
    if modes.recording() is None:
        raise ConfigError("paddle.static.data works in static mode; call paddle.enable_static() first")
    return _Programs.main._data(name, list(shape), np.dtype(convert_dtype(dtype or "float32")))


class Executor:
    """``paddle.static.Executor(place)``: runs a static-mode Program; ``place`` is accepted (CPU)."""

    def __init__(self, place=None) -> None:
        self.place = place

    def run(
        self,
        program: Program | None = None,
        feed: dict | None = None,
        fetch_list=None,
        feed_var_name="feed",
        fetch_var_name="fetch",
        scope=None,
        return_numpy: bool = True,
        use_program_cache: bool = False,
    ) -> list:
        program = program or _Programs.main
        if not isinstance(program, Executable):
            raise ConfigError(
                "Executor.run: program must be a paddle.static.Program, a CompiledProgram or a loaded inference "
                f"program, got {type(program).__name__}"
            )
        if fetch_list is not None and not isinstance(fetch_list, list | tuple):
            fetch_list = [fetch_list]
        if isinstance(feed, list | tuple):  # one dict per place (a static-mode DataLoader's batches)
            if len(feed) != 1 or not isinstance(feed[0], dict):
                raise ConfigError(
                    f"Executor.run: feed is a dict, or a list of one dict per place (one CPU), got {len(feed)}"
                )
            feed = feed[0]
        with _paused():
            return program._run(dict(feed or {}), list(fetch_list or []), return_numpy)

    def close(self) -> None:
        """Nothing to release on CPU."""


@contextlib.contextmanager
def _paused():
    """Running a program (and the optimizer step after it) is eager work, not more recording."""
    saved, STATE.tracer = STATE.tracer, None
    try:
        yield
    finally:
        STATE.tracer = saved


@contextlib.contextmanager
def dygraph_guard(place=None):
    """``paddle.base.dygraph.guard``: eager mode inside the block; static mode, if it was on, resumes
    after it (recording into the same main program)."""
    was_static = modes.recording() is not None
    modes.disable_static(place)
    try:
        yield
    finally:
        if was_static:
            modes.enable_static()


@contextlib.contextmanager
def name_scope(prefix: str | None = None):
    """``paddle.static.name_scope``: Paddle prefixes the names of the ops recorded inside with
    ``prefix`` for graph visualisation. Ops here carry their source location instead
    (``Operation.loc``), so the scope only checks its argument and nests."""
    if prefix is not None and not isinstance(prefix, str):
        raise ConfigError(f"name_scope: prefix must be a str, got {prefix!r}")
    yield

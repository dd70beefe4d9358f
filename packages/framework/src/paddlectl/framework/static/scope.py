"""``paddle.static.Scope``, ``global_scope()`` and ``scope_guard``: named variables holding arrays.

In Paddle a scope holds every persistable variable a program run reads or writes. Here
parameters live in their Tensors, so a scope holds the variables created with ``scope.var(name)``
and, for the scope programs run in (``global_scope()``), finds the parameters of the main and
startup programs by name too:
``global_scope().find_var('fc_0.w_0').get_tensor()`` reads a parameter, ``.set(array, place)``
overwrites it.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..errors import ConfigError
from ..ops.tensor_compat import DenseTensorView
from .static_mode import default_main_program, default_startup_program


class ScopeTensor(DenseTensorView):
    """The ``DenseTensor`` of a scope variable: reads and writes go to the variable."""

    def __init__(self, variable: Variable) -> None:
        super().__init__(None)
        self._variable = variable

    def _value(self) -> np.ndarray:
        return self._variable._get()

    def set(self, array, place=None) -> None:
        self._variable._set(np.asarray(array))


class Variable:
    """A named slot of a scope, holding an array (or a program parameter, read and written in place)."""

    def __init__(self, name: str, parameter=None) -> None:
        self.name, self._parameter, self._array = name, parameter, None

    def _get(self) -> np.ndarray:
        if self._parameter is not None:
            return self._parameter.numpy()
        if self._array is None:
            raise ConfigError(f"scope variable {self.name!r} holds no value yet; set one with get_tensor().set(array)")
        return self._array

    def _set(self, array: np.ndarray) -> None:
        if self._parameter is not None:
            self._parameter.set_value(array)
        else:
            self._array = np.array(array, copy=True)

    def get_tensor(self) -> ScopeTensor:
        return ScopeTensor(self)


class Scope:
    """``paddle.static.Scope()``: variables by name."""

    def __init__(self) -> None:
        self._vars: dict[str, Variable] = {}

    def var(self, name: str) -> Variable:
        """The variable ``name``, created empty if the scope has none."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"Scope.var: name must be a non-empty str, got {name!r}")
        found = self.find_var(name)
        if found is None:
            found = self._vars[name] = Variable(name)
        return found

    def find_var(self, name: str) -> Variable | None:
        if name in self._vars:
            return self._vars[name]
        if self is _current[-1] or self is _current[0]:
            for program in (default_main_program(), default_startup_program()):
                for p in program.all_parameters():
                    if p.name == name:
                        return Variable(name, p)
        return None


_current: list[Scope] = [Scope()]


def global_scope() -> Scope:
    """The scope programs run in: the process-wide one, or the one a ``scope_guard`` put in place."""
    return _current[-1]


@contextlib.contextmanager
def scope_guard(scope: Scope):
    """Make ``scope`` the global scope inside the block."""
    if not isinstance(scope, Scope):
        raise ConfigError(f"scope_guard: pass a paddle.static.Scope, got {type(scope).__name__}")
    _current.append(scope)
    try:
        yield
    finally:
        _current.pop()

"""``paddle.optimizer.LBFGS``: limited-memory BFGS over all parameters as one flat vector.

``step(closure)`` re-evaluates the loss (``closure`` clears the gradients, computes the loss and
calls ``backward``) up to ``max_iter`` times. Each iteration takes the two-loop recursion's
direction from the last ``history_size`` (s, y) pairs and a step of ``learning_rate`` (the first
iteration ``min(1, 1/|g|_1) * learning_rate``), or the step a strong-Wolfe line search
(Nocedal & Wright, algorithms 3.5/3.6, with cubic interpolation) finds when
``line_search_fn='strong_wolfe'``. As in Paddle, weight decay and gradient clipping are not
applied, and only the last parameter group's parameters are optimized. Vectors are kept in the
parameters' dtype, the loss as a Python float, as Paddle does, so the iterates agree with Paddle's.
"""

from __future__ import annotations

import numpy as np

from ..core.autograd import enable_grad, no_grad
from ..core.selected_rows import dense
from ..core.tensor import Tensor
from ..errors import CheckpointError
from .optimizer import Optimizer, flat

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    def __init__(
        self, learning_rate: float = 1.0, max_iter: int = 20, max_eval: int | None = None,
        tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
        line_search_fn: str | None = None, parameters=None, weight_decay=None, grad_clip=None, name=None,
    ) -> None:  # fmt: skip
        for label, value in (("max_iter", max_iter), ("history_size", history_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LBFGS: {label} must be a positive integer, got {value!r}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        super().__init__(1.0, parameters, weight_decay, grad_clip, name)
        self.learning_rate = float(learning_rate)
        self.max_iter = max_iter
        self.max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
        self.tolerance_grad = tolerance_grad
        self.tolerance_change = tolerance_change
        self.history_size = history_size
        self.line_search_fn = line_search_fn
        self._setup_groups({})
        self._params = self._groups[-1]["params"]
        self.state: dict = {"func_evals": 0, "n_iter": 0}

    # ----- the flat vector -------------------------------------------------------------------
    def _flat_grad(self) -> np.ndarray:
        return np.concatenate(
            [
                np.zeros(p._data.size, p._data.dtype) if p.grad is None else dense(p.grad)._data.reshape(-1)
                for p in self._params
            ]
        )

    def _move(self, alpha, direction: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            values = flat(p)
            values += direction[offset : offset + values.size] * alpha
            offset += values.size

    def _evaluate(self, closure) -> float:
        with enable_grad():
            loss = closure()
        if not isinstance(loss, Tensor) or loss.size != 1:
            raise TypeError("LBFGS.step: closure must return the loss as a one-element Tensor (after backward())")
        return loss

    def _along(self, closure, start: list, alpha, direction):
        """Loss and gradient at ``start + alpha * direction``; the parameters are put back after."""
        self._move(alpha, direction)
        loss = float(self._evaluate(closure))
        grad = self._flat_grad()
        for p, values in zip(self._params, start, strict=True):
            flat(p)[:] = values
        return loss, grad

    # ----- the step ----------------------------------------------------------------------------
    @no_grad()
    def step(self, closure):
        """Run up to ``max_iter`` iterations; return the loss ``closure`` gave first."""
        if not callable(closure):
            raise TypeError(
                "LBFGS.step needs a closure: a function that clears grads, computes the loss and backward()s"
            )
        state = self.state
        first_loss = self._evaluate(closure)
        loss, evals = float(first_loss), 1
        state["func_evals"] += 1
        grad = self._flat_grad()
        if np.abs(grad).max() <= self.tolerance_grad:
            return first_loss
        kind = grad.dtype.type
        d, alpha = state.get("d"), state.get("alpha")
        old_yk, old_sk, ro = state.get("old_yk"), state.get("old_sk"), state.get("ro")
        h_diag, prev_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        for n_iter in range(1, self.max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_yk, old_sk, ro, h_diag = -grad, [], [], [], kind(1)
            else:
                h_diag = self._remember(grad - prev_grad, d * kind(alpha), old_yk, old_sk, ro, h_diag)
                al = state.setdefault("al", [None] * self.history_size)
                d = _two_loop(-grad, old_yk, old_sk, ro, h_diag, al)
            prev_grad, prev_loss = grad.copy(), loss
            if state["n_iter"] == 1:
                alpha = min(kind(1.0), kind(1.0) / np.abs(grad).sum()) * kind(self.learning_rate)
            else:
                alpha = self.learning_rate
            gtd = _dot(grad, d)
            if gtd > -self.tolerance_change:
                break
            used = 0
            if self.line_search_fn is not None:
                start = [flat(p).copy() for p in self._params]
                loss, grad, alpha, used = _strong_wolfe(
                    lambda a, d=d, start=start: self._along(closure, start, a, d), alpha, d, loss, grad, gtd,
                    self.tolerance_change,
                )  # fmt: skip
                self._move(alpha, d)
                converged = np.abs(grad).max() <= self.tolerance_grad
            else:
                self._move(alpha, d)
                converged = False
                if n_iter != self.max_iter:
                    loss = float(self._evaluate(closure))
                    grad, used = self._flat_grad(), 1
                    converged = np.abs(grad).max() <= self.tolerance_grad
            evals += used
            state["func_evals"] += used
            if (
                converged
                or np.abs(d * alpha).max() <= self.tolerance_change
                or abs(loss - prev_loss) < self.tolerance_change
                or evals >= self.max_eval
            ):
                break
        state.update(
            d=d, alpha=alpha, old_yk=old_yk, old_sk=old_sk, ro=ro, H_diag=h_diag, prev_flat_grad=prev_grad,
            prev_loss=prev_loss,
        )  # fmt: skip
        return first_loss

    def _remember(self, y, s, old_yk, old_sk, ro, h_diag):
        """Keep the pair (s, y) when its curvature is positive; return the new diagonal scale."""
        ys = _dot(y, s)
        if ys <= 1e-10:
            return h_diag
        if len(old_yk) == self.history_size:
            del old_yk[0], old_sk[0], ro[0]
        old_yk.append(y)
        old_sk.append(s)
        ro.append(y.dtype.type(1.0) / ys)
        return ys / _dot(y, y)

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        raise NotImplementedError(
            "LBFGS optimizer does not use this way to minimize loss; call step(closure) with a closure "
            "that clears the gradients, computes the loss and calls backward()"
        )

    # ----- state -------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {...}}`` as Paddle's: counters, the last direction and step, the history."""
        return {"state": {k: _tensors(v) for k, v in self.state.items()}}

    def set_state_dict(self, state_dict: dict) -> None:
        state = state_dict.get("state") if isinstance(state_dict, dict) else None
        if not isinstance(state, dict):
            raise CheckpointError("LBFGS.set_state_dict expects {'state': {...}} as LBFGS.state_dict() returns")
        self.state = {k: _arrays(v) for k, v in state.items()}

    load_state_dict = set_state_dict


def _dot(x: np.ndarray, y: np.ndarray):
    return (x * y).sum(dtype=x.dtype)


def _two_loop(q: np.ndarray, old_yk: list, old_sk: list, ro: list, h_diag, al: list) -> np.ndarray:
    """The L-BFGS two-loop recursion: the inverse-Hessian estimate applied to ``q`` (= -grad);
    ``al`` (kept in the state, as Paddle does) receives the first loop's coefficients."""
    for i in range(len(old_yk) - 1, -1, -1):
        al[i] = _dot(old_sk[i], q) * ro[i]
        q = q + old_yk[i] * -al[i]
    r = q * h_diag
    for i in range(len(old_yk)):
        be_i = _dot(old_yk[i], r) * ro[i]
        r = r + old_sk[i] * (al[i] - be_i)
    return r


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), kept within ``bounds``."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def _strong_wolfe(along, alpha, d, loss, grad, gtd, tolerance_change, c1=1e-4, c2=0.9, max_ls=25):
    """A step satisfying the strong Wolfe conditions: bracket, then zoom. Returns (loss, grad, step, evaluations)."""
    d_norm = np.abs(d).max()
    loss_new, grad_new = along(alpha)
    evals, gtd_new = 1, _dot(grad_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, loss, grad, gtd
    done, ls_iter = False, 0
    while ls_iter < max_ls:
        too_far = loss_new > loss + c1 * alpha * gtd or (ls_iter > 1 and loss_new >= f_prev)
        if not too_far and abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [alpha], [loss_new], [grad_new], True
            break
        if too_far or gtd_new >= 0:
            bracket, bracket_f = [t_prev, alpha], [f_prev, loss_new]
            bracket_g, bracket_gtd = [g_prev, grad_new], [gtd_prev, gtd_new]
            break
        step = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, alpha, loss_new, gtd_new, bounds=(alpha + 0.01 * (alpha - t_prev), alpha * 10)
        )
        t_prev, f_prev, g_prev, gtd_prev = alpha, loss_new, grad_new, gtd_new
        alpha = step
        loss_new, grad_new = along(alpha)
        evals, gtd_new, ls_iter = evals + 1, _dot(grad_new, d), ls_iter + 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, alpha], [loss, loss_new], [grad, grad_new]
    insufficient = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        alpha = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )  # fmt: skip
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - alpha, alpha - min(bracket)) < eps:
            if insufficient or alpha >= max(bracket) or alpha <= min(bracket):
                near_top = abs(alpha - max(bracket)) < abs(alpha - min(bracket))
                alpha = max(bracket) - eps if near_top else min(bracket) + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        loss_new, grad_new = along(alpha)
        evals, gtd_new, ls_iter = evals + 1, _dot(grad_new, d), ls_iter + 1
        if loss_new > loss + c1 * alpha * gtd or loss_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = alpha, loss_new, grad_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = alpha, loss_new, grad_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def _tensors(value):
    if isinstance(value, np.ndarray):
        return Tensor._wrap(value.copy())
    if isinstance(value, list):
        return [_tensors(v) for v in value]
    return value


def _arrays(value):
    if isinstance(value, Tensor):
        return np.array(value._data, copy=True)
    if isinstance(value, list):
        return [_arrays(v) for v in value]
    return value

"""The IR: symbolic dims, the verifier's invariants, and the text form's round trip."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.core import symbolic
from paddlectl.framework.static import (
    Block,
    Operation,
    ParseError,
    VerifyError,
    parse_program,
    print_program,
    run_program,
    verify,
)
from paddlectl.framework.static.ir import Program
from paddlectl.framework.static.printer import format_attr


def _program():
    p = Program(weights={"w": np.arange(3, dtype="float32")})
    x = p.new_value(("N", 3), "float32", "x")
    p.block.append(Operation("input", [], [x], {"name": "x"}))
    w = p.new_value((3,), "float32", "w")
    p.block.append(Operation("param", [], [w], {"name": "w"}))
    y = p.new_value(("N", 3), "float32")
    p.block.append(Operation("add", [x, w], [y]))
    z = p.new_value(("N", 3), "float32")
    p.block.append(Operation("relu", [y], [z]))
    p.block.yields = [z]
    return p, x, w, y, z


def test_symbolic_dims_are_canonical_and_evaluate():
    assert symbolic.simplify("(H+2-3)//2+1") == symbolic.simplify("(H+0-1)//2+1") == "(H-1)//2+1"
    assert symbolic.divide_exact("N*16*5*5", 400) == "N"
    assert symbolic.divide_exact("N*L*16", "L") == "16*N"
    assert symbolic.divide_exact("N+1", 2) is None
    assert symbolic.evaluate("((H-1)//2+1)*W", {"H": 9, "W": 2}) == 10
    with pytest.raises(ValueError, match="not bound"):
        symbolic.evaluate("N*2", {})
    with pytest.raises(ValueError, match="unsupported"):
        symbolic.simplify("N**2")
    for text in ("N**2", "N+", "f(N)", "N/2"):  # evaluated from a tree built once per text
        with pytest.raises(ValueError, match="unsupported"):
            symbolic.evaluate(text, {"N": 4})
    assert symbolic.evaluate("-(N-7)//2", {"N": np.int64(2)}) == 2  # NumPy sizes bind too


def test_walk_uses_and_rewrite_then_verify():
    p, x, w, y, z = _program()
    verify(p)
    assert [op.name for op in p.walk()] == ["input", "param", "add", "relu"]
    assert p.uses(y) == [(p.block.ops[3], 0)]
    # drop the relu: its users (the program's yield) read the add instead
    relu = p.block.ops[3]
    p.replace_all_uses(z, y)
    p.block.remove(relu)
    verify(p)
    out = run_program(p, [np.array([[-5.0, 0.0, 1.0]], dtype="float32")])[0]
    np.testing.assert_array_equal(out, [[-5.0, 1.0, 3.0]])


def test_verifier_rejects_use_before_definition():
    p, x, w, y, z = _program()
    p.block.ops[2], p.block.ops[3] = p.block.ops[3], p.block.ops[2]
    with pytest.raises(VerifyError, match="used before it is defined"):
        verify(p)


def test_verifier_rejects_double_definition_and_wrong_types():
    p, x, w, y, z = _program()
    z.name = y.name
    with pytest.raises(VerifyError, match="defined more than once"):
        verify(p)
    p, x, w, y, z = _program()
    z.shape = ("N", 4)
    with pytest.raises(VerifyError, match="shape rule gives"):
        verify(p)
    p, *_ = _program()
    p.weights["w"] = np.zeros(4, "float32")
    with pytest.raises(VerifyError, match="weight 'w'"):
        verify(p)


def test_verifier_checks_sub_blocks():
    p, x, w, y, z = _program()
    pred = p.new_value((), "bool")
    p.block.append(Operation("constant", [], [pred], {"value": np.array(True)}))
    t = Block(yields=[y])
    e = Block(yields=[x])
    out = p.new_value(("N", 3), "float32")
    p.block.append(Operation("cond", [pred], [out], blocks=[t, e]))
    p.block.yields = [out]
    verify(p)
    e.yields = [w]
    with pytest.raises(VerifyError, match="each branch must yield"):
        verify(p)


@pytest.mark.parametrize(
    "value", [0, -3, 1.5, float("inf"), float("-inf"), True, None, "NCHW", 'q"uote', (1, (2, 3)), np.dtype("int64")]
)
def test_attr_values_round_trip(value):
    p = Program()
    x = p.new_value((2,), "float32", "x")
    p.block.append(Operation("input", [], [x], {"name": "x"}))
    c = p.new_value((2,), "float32")
    p.block.append(Operation("constant", [], [c], {"value": np.array([1.5, -2.0], "float32"), "extra": value}))
    p.block.yields = [c]
    text = print_program(p)
    q = parse_program(text)
    assert q == p and print_program(q) == text


def test_nan_attr_round_trips():
    assert format_attr(float("nan")) == "nan"


def test_control_flow_programs_round_trip():
    from paddlectl.framework.jit import InputSpec, to_static

    def f(x, n):
        s = paddle.sum(x)
        y = paddle.static.cond(s > 0, lambda: x * 2.0, lambda: x - 1.0)
        i = paddle.zeros([1], "int64")
        (i, y) = paddle.static.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * 0.5), [i, y])
        return y

    fn = to_static(f, input_spec=[InputSpec([None, 3], "float32", "x"), InputSpec([1], "int64", "n")])
    program = fn.program
    text = print_program(program)
    assert "^then:" in text and "^body(" in text
    again = parse_program(text, program.weights)
    assert again == program and print_program(again) == text


def test_parse_errors_point_at_the_line():
    with pytest.raises(ParseError, match="line 2"):
        parse_program('%x: f32[N,3] = input "x"\n%1: f32[N,3] = relu(%y)\nreturn %1\n')
    with pytest.raises(ParseError, match="unknown dtype|a dtype"):
        parse_program('%x: q32[N] = input "x"\nreturn %x\n')
    with pytest.raises(VerifyError, match="shape rule gives"):
        parse_program('%x: f32[N,3] = input "x"\n%1: f32[N,4] = relu(%x)\nreturn %1\n')

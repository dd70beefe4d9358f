"""Reads the text form that ``static.printer`` writes back into an equal ``Program``.

A small recursive-descent parser over characters: nothing in the text is executed, every name is
looked up, and any error names the line and column and what was expected there. The parsed
program is verified before it is returned, so a hand-edited file with a type that contradicts an
op's shape rule is refused.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..errors import PaddlectlError
from .dtype_words import DTYPE_WORDS, dtype_from_short
from .ir import Block, Operation, Program, Value
from .verifier import verify

_NAME = re.compile(r"[A-Za-z0-9_.]+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:inf|nan|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


class ParseError(PaddlectlError, ValueError):
    """The IR text does not follow the grammar; the message points at the line and column."""


class _Parser:
    def __init__(self, text: str, weights: dict) -> None:
        self.text = text
        self.pos = 0
        self.program = Program(weights=weights)
        self.scopes: list[dict[str, Value]] = [{}]

    # ----- characters --------------------------------------------------------------------------
    def error(self, expected: str) -> ParseError:
        line = self.text.count("\n", 0, self.pos) + 1
        col = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        found = self.text[self.pos : self.pos + 20].split("\n")[0] or "end of text"
        return ParseError(f"IR text line {line}, column {col}: expected {expected}, found {found!r}")

    def skip(self) -> None:
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif c == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                break

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def inline(self, s: str) -> bool:
        """Does ``s`` follow on the current line (spaces only, no newline or comment in between)?"""
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        return self.text.startswith(s, self.pos)

    def eat(self, s: str) -> None:
        if not self.peek(s):
            raise self.error(repr(s))
        self.pos += len(s)

    def match(self, pattern: re.Pattern, what: str) -> str:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if not m:
            raise self.error(what)
        self.pos = m.end()
        return m.group()

    def comment(self) -> str | None:
        """A trailing ``# loc`` on the current line (the op's source location), if any."""
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        if self.text.startswith("#", self.pos):
            end = self.text.find("\n", self.pos)
            end = len(self.text) if end < 0 else end
            loc = self.text[self.pos + 1 : end].strip()
            self.pos = end
            return loc or None
        return None

    # ----- values and types --------------------------------------------------------------------
    def dims(self) -> tuple:
        self.eat("[")
        end = self.text.find("]", self.pos)
        if end < 0:
            raise self.error("']' closing the shape")
        raw = self.text[self.pos : end]
        self.pos = end + 1
        out = []
        for d in filter(None, (p.strip() for p in raw.split(","))):
            out.append(int(d) if re.fullmatch(r"-?\d+", d) else d)
        return tuple(out)

    def type_(self):
        word = self.match(_WORD, "a dtype such as f32")
        try:
            dtype = dtype_from_short(word)
        except ValueError as exc:
            raise self.error(f"a dtype ({exc})") from None
        return self.dims(), dtype

    def decl(self) -> Value:
        self.eat("%")
        name = self.match(_NAME, "a value name")
        self.eat(":")
        shape, dtype = self.type_()
        for scope in self.scopes:
            if name in scope:
                raise self.error(f"a fresh value name (%{name} is already defined)")
        if name in self.program._names:
            raise self.error(f"a fresh value name (%{name} is already defined)")
        value = self.program.new_value(shape, dtype, name)
        self.scopes[-1][name] = value
        return value

    def operand(self):
        if self.peek("_"):
            self.pos += 1
            return None
        self.eat("%")
        name = self.match(_NAME, "a value name")
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        self.pos -= len(name) + 1
        raise self.error(f"a defined value (%{name} is not defined before this use)")

    def operands(self, close: str) -> list:
        out = []
        if self.peek(close):
            return out
        while True:
            out.append(self.operand())
            if not self.peek(","):
                return out
            self.eat(",")

    # ----- attrs -------------------------------------------------------------------------------
    def attr(self):
        self.skip()
        c = self.text[self.pos : self.pos + 1]
        if c == "[":
            self.pos += 1
            items = []
            while not self.peek("]"):
                items.append(self.attr())
                if not self.peek("]"):
                    self.eat(",")
            self.eat("]")
            return tuple(items)
        if c == '"':
            try:
                value, end = json.JSONDecoder().raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                raise self.error(f"a JSON string ({exc.msg})") from None
            self.pos = end
            return value
        if c == "{":
            self.pos += 1
            out = {}
            while not self.peek("}"):
                key = self.attr()
                if not isinstance(key, str):
                    raise self.error("a string dict key")
                self.eat(":")
                out[key] = self.attr()
                if not self.peek("}"):
                    self.eat(",")
            self.eat("}")
            return out
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            s = m.group()
            if re.fullmatch(r"-?\d+", s):
                return int(s)
            return float(s)
        word = self.match(_WORD, "an attr value")
        if word in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[word]
        if word in DTYPE_WORDS:
            return dtype_from_short(word)
        if word == "array":
            self.eat("(")
            shape, dtype = self.type_()
            self.eat(",")
            flat = self.attr()
            self.eat(")")
            if any(isinstance(d, str) for d in shape):
                raise self.error("an array attr with a static shape")
            try:
                return np.array(flat, dtype=dtype).reshape(shape)
            except (ValueError, TypeError, OverflowError) as exc:
                raise self.error(f"array data of type {dtype}{list(shape)} ({exc})") from None
        self.pos -= len(word)
        raise self.error("an attr value (number, string, True/False/None, [..], {..}, dtype or array(..))")

    def attrs(self) -> dict:
        out = {}
        self.eat("{")
        while not self.peek("}"):
            key = self.match(_WORD, "an attr name")
            self.eat("=")
            out[key] = self.attr()
            if not self.peek("}"):
                self.eat(",")
        self.eat("}")
        return out

    # ----- statements --------------------------------------------------------------------------
    def op(self) -> Operation:
        outs = [self.decl()]
        while self.peek(","):
            self.eat(",")
            outs.append(self.decl())
        self.eat("=")
        name = self.match(_WORD, "an op name")
        if name in ("input", "param"):
            self.skip()
            if not self.peek('"'):
                raise self.error(f"the quoted {name} name")
            op = Operation(name, [], outs, {"name": self.attr()})
            op.loc = self.comment()
            return op
        self.eat("(")
        inputs = self.operands(")")
        self.eat(")")
        attrs: dict = {}
        blocks: list[Block] = []
        if self.inline("{"):
            save = self.pos
            self.eat("{")
            if self.peek("^"):
                self.pos = save
            else:
                self.pos = save
                attrs = self.attrs()
        # a trailing comment may sit after '{' on region ops, so read '{' before the comment
        loc = None
        if self.inline("{"):
            self.eat("{")
            loc = self.comment()
            while self.peek("^"):
                blocks.append(self.block())
            self.eat("}")
        else:
            loc = self.comment()
        op = Operation(name, inputs, outs, attrs, blocks)
        op.loc = loc
        return op

    def block(self) -> Block:
        self.eat("^")
        self.match(_WORD, "a block label")
        self.scopes.append({})
        args = []
        if self.peek("("):
            self.eat("(")
            while not self.peek(")"):
                args.append(self.decl())
                if not self.peek(")"):
                    self.eat(",")
            self.eat(")")
        self.eat(":")
        block = Block(args)
        while not self.peek("yield"):
            block.append(self.op())
        self.eat("yield")
        block.yields = self._yield_list()
        self.scopes.pop()
        return block

    def _yield_list(self) -> list:
        # values follow on the same line; the next line starts a new statement
        out = []
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in " \t":
                self.pos += 1
            if not self.text.startswith("%", self.pos) and not self.text.startswith("_", self.pos):
                return out
            out.append(self.operand())
            while self.pos < len(self.text) and self.text[self.pos] in " \t":
                self.pos += 1
            if self.text.startswith(",", self.pos):
                self.pos += 1

    def program_(self) -> Program:
        while not self.peek("return"):
            if self.pos >= len(self.text):
                raise self.error("'return' ending the program")
            self.program.block.append(self.op())
        self.eat("return")
        self.program.block.yields = self._yield_list()
        self.skip()
        if self.pos != len(self.text):
            raise self.error("end of text after 'return'")
        return self.program


def parse_program(text: str, weights: dict[str, np.ndarray] | None = None) -> Program:
    """The Program that ``text`` describes, with ``weights`` for its params, verified."""
    if not isinstance(text, str):
        raise ParseError(f"IR text must be a str, got {type(text).__name__}")
    try:
        program = _Parser(text, dict(weights or {})).program_()
    except RecursionError:  # attrs and blocks are read recursively
        raise ParseError("IR text nests attribute values or blocks too deeply to read") from None
    return verify(program)

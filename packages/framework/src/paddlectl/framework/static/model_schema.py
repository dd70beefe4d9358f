"""The schema of ``model.json`` (format version 1), checked with pydantic before anything is built.

Every entry a reader uses has a declared type, so a mutated document fails here with the entry's
path and what was expected, never later as an AttributeError or TypeError deep in the predictor.
Unknown top-level entries are allowed (a writer of the same format version may add optional
ones, such as ``lineage``); the typed ones below are not optional in type.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.dtype import SUPPORTED

DType = Literal[tuple(SUPPORTED)]  # type: ignore[valid-type] - the dtype names the framework computes in
Dim = Annotated[int, Field(ge=0)] | Annotated[str, Field(min_length=1, max_length=256)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class TensorSpec(_Strict):
    name: Annotated[str, Field(min_length=1)]
    shape: list[Dim]
    dtype: DType


class WeightsEntry(_Strict):
    file: Literal["model.safetensors"]
    bytes: Annotated[int, Field(ge=0)]
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Producer(_Strict):
    name: str
    version: str


class ModelDocument(_Strict):
    format: Literal["paddlectl-inference-model"]
    format_version: int
    producer: Producer | None = None
    program: str
    inputs: list[TensorSpec]
    outputs: Annotated[list[TensorSpec], Field(min_length=1)]
    output_structure: Literal["tensor", "tuple", "list"] = "tensor"
    preprocess: dict[str, Any] | None = None
    postprocess: dict[str, Any] | None = None
    verification: list[dict[str, Any]] | None = None
    lineage: dict[str, Any] | None = None
    source: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None
    weights: WeightsEntry


def schema_problem(document: dict) -> str | None:
    """None when ``document`` fits the schema, else the first problem: where, what was expected."""
    try:
        ModelDocument.model_validate(document)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "the document"
        got = repr(first.get("input"))
        got = got if len(got) <= 80 else got[:77] + "..."
        extra = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{where}: {first['msg']}, got {got}{extra}"
    return None

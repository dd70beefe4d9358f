"""The loader fuzzer's machinery: seeds, structure-aware mutations as replayable recipes, and a worker
process that runs each case under a timeout.

A case is a *recipe*: a list of mutations (plain JSON) applied to a deterministic seed (a LeNet
exported by our own exporter, its model directory, a checkpoint, a config, a PNG). Hypothesis draws
the recipes; the corpus under ``fuzz_corpus/`` keeps the recipes that once failed, so a replay is
a few hundred bytes of JSON, not a copy of the model. A case passes when the loader (and, for
models, ``create_predictor`` and a run) either works or raises ``PaddlectlError``; any other
exception, a hang past the timeout, or the worker dying fails it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import multiprocessing
import os
import struct
import time
import traceback

import numpy as np
from hypothesis import strategies as st

KINDS = ("onnx", "exported", "checkpoint", "config", "image")
CORPUS = os.path.join(os.path.dirname(__file__), "fuzz_corpus")
ONNX_OPS = ["Conv", "Relu", "MaxPool", "Reshape", "Gemm", "MatMul", "Add", "Softmax", "Flatten", "Concat", "Slice",
            "Transpose", "Squeeze", "Unsqueeze", "Resize", "Shape", "Cast", "Constant", "Identity", "Clip", "Pow",
            "BatchNormalization", "ReduceMean", "AveragePool", "GlobalAveragePool", "Loop", "NoSuchOp"]  # fmt: skip
ATTR_NAMES = ["kernel_shape", "pads", "strides", "dilations", "group", "axis", "perm", "to", "ceil_mode", "auto_pad",
              "transA", "transB", "alpha", "beta", "axes", "mode", "value", "starts", "ends", "storage_order"]  # fmt: skip


# ----- seeds ---------------------------------------------------------------------------------------------


def make_seeds(root: str) -> dict[str, str]:
    """Write one seed per kind under ``root`` (deterministic: a seeded LeNet); kind -> path."""
    from PIL import Image

    import paddlectl.framework as paddle
    from paddlectl.framework import jit
    from paddlectl.framework.jit import InputSpec
    from paddlectl.framework.vision.models import LeNet

    paddle.seed(0)
    layer = LeNet()
    layer.eval()
    spec = [InputSpec([None, 1, 28, 28], "float32", "x")]
    jit.save(layer, os.path.join(root, "lenet"), input_spec=spec, format="onnx")
    jit.save(layer, os.path.join(root, "lenet_dir"), input_spec=spec)
    state = {k: v.numpy() for k, v in layer.state_dict().items()}
    paddle.save({"model": state, "epoch": 3, "lr": 0.1, "tags": ["a", "b"], "nested": {"x": [1, 2.5, None]}},
                os.path.join(root, "seed.pdparams"))  # fmt: skip
    config = os.path.join(os.path.dirname(paddle.__file__), "vision", "configs", "digits_lenet.yml")
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (12, 10, 3), dtype=np.uint8)).save(os.path.join(root, "seed.png"))
    return {
        "onnx": os.path.join(root, "lenet.onnx"),
        "exported": os.path.join(root, "lenet_dir"),
        "checkpoint": os.path.join(root, "seed.pdparams"),
        "config": config,
        "image": os.path.join(root, "seed.png"),
    }


# ----- recipes (hypothesis strategies) -------------------------------------------------------------------

_index = st.integers(0, 2**16)
_small_int = st.sampled_from([-(2**63), -(2**31), -1, 0, 1, 2, 3, 7, 28, 99, 2**31, 2**40])
_json_scalar = st.one_of(st.none(), st.booleans(), _small_int, st.floats(allow_nan=False), st.text(max_size=8))
_json_value = st.recursive(_json_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c,
                           max_size=3), max_leaves=6)  # fmt: skip
_bytes_flip = st.tuples(st.just("flip"), _index, st.integers(0, 255))
_truncate = st.tuples(st.just("truncate"), _index)

ONNX_MUTATION = st.one_of(
    st.tuples(st.just("ir_version"), st.sampled_from([-1, 0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 13, 100])),
    st.tuples(st.just("opset"), st.sampled_from([0, 1, 5, 6, 7, 9, 10, 11, 12, 13, 17, 18, 21, 23, 99])),
    st.tuples(st.just("op_type"), _index, st.sampled_from(ONNX_OPS)),
    st.tuples(st.just("drop_input"), _index, _index),
    st.tuples(st.just("add_input"), _index, _index),
    st.tuples(st.just("rename_output"), _index, st.sampled_from(["", "x", "ghost", "0"])),
    st.tuples(st.just("drop_node"), _index),
    st.tuples(st.just("dup_node"), _index),
    st.tuples(st.just("swap_nodes"), _index, _index),
    st.tuples(
        st.just("attr_value"),
        _index,
        _index,
        st.one_of(_small_int, st.lists(_small_int, max_size=5), st.floats(allow_nan=True), st.text(max_size=6)),
    ),  # fmt: skip
    st.tuples(
        st.just("attr_add"),
        _index,
        st.sampled_from(ATTR_NAMES),
        st.one_of(_small_int, st.lists(_small_int, max_size=5)),
    ),  # fmt: skip
    st.tuples(st.just("attr_drop"), _index, _index),
    st.tuples(st.just("attr_retype"), _index, _index, st.lists(st.integers(-3, 40), min_size=1, max_size=5)),
    st.tuples(st.just("init_dims"), _index, st.lists(st.integers(-2, 50), max_size=5)),
    st.tuples(st.just("init_dtype"), _index, st.integers(0, 25)),
    st.tuples(st.just("init_truncate"), _index, _index),
    st.tuples(st.just("init_to_float_data"), _index, st.integers(0, 5)),
    st.tuples(st.just("init_rename"), _index, st.sampled_from(["x", "", "ghost"])),
    st.tuples(st.just("input_elem_type"), st.integers(0, 25)),
    st.tuples(st.just("input_dim"), _index, st.one_of(st.integers(-2, 64), st.sampled_from(["N", "", "?", "a b"]))),
    st.tuples(st.just("drop_graph_io"), st.booleans()),
    st.tuples(st.just("output_name"), st.sampled_from(["", "x", "ghost"])),
    _bytes_flip,
    _truncate,
)

JSON_MUTATION = st.one_of(
    st.tuples(st.just("json_set"), st.lists(_index, min_size=1, max_size=4), _json_value),
    st.tuples(st.just("json_drop"), st.lists(_index, min_size=1, max_size=4)),
    st.tuples(
        st.just("program_line"), _index, st.sampled_from(["drop", "dup", "swap", "digits", "opname", "cut"]), _index
    ),  # fmt: skip
    st.tuples(st.just("program_truncate"), _index),
    st.tuples(st.just("st_header"), st.lists(_index, min_size=1, max_size=3), _json_value),
    st.tuples(st.just("st_truncate"), _index),
    st.tuples(st.just("nest"), st.integers(1, 3000)),
)

EXPORTED_MUTATION = st.one_of(JSON_MUTATION, st.tuples(st.just("no_rechecksum")))
CHECKPOINT_MUTATION = st.one_of(
    st.tuples(st.just("json_set"), st.lists(_index, min_size=1, max_size=6), _json_value),
    st.tuples(st.just("json_drop"), st.lists(_index, min_size=1, max_size=6)),
    st.tuples(st.just("nest"), st.integers(1, 3000)),
    st.tuples(st.just("header_set"), _index, _json_value),
    st.tuples(st.just("st_header"), st.lists(_index, min_size=1, max_size=3), _json_value),
    st.tuples(st.just("st_truncate"), _index),
    st.tuples(st.just("no_rechecksum")),
    _bytes_flip,
    _truncate,
)
CONFIG_MUTATION = st.one_of(
    st.tuples(st.just("json_set"), st.lists(_index, min_size=1, max_size=4), _json_value),
    st.tuples(st.just("json_drop"), st.lists(_index, min_size=1, max_size=4)),
    st.tuples(st.just("nest"), st.integers(1, 3000)),
    st.tuples(st.just("yaml_text"), st.sampled_from(["anchors", "tab", "tag", "binary", "dupkey", "cut"]), _index),
    _bytes_flip,
)
IMAGE_MUTATION = st.one_of(_bytes_flip, _truncate, st.tuples(st.just("png_dims"), _small_int, _small_int))

STRATEGIES = {
    "onnx": st.lists(ONNX_MUTATION, min_size=1, max_size=4),
    "exported": st.lists(EXPORTED_MUTATION, min_size=1, max_size=3),
    "checkpoint": st.lists(CHECKPOINT_MUTATION, min_size=1, max_size=3),
    "config": st.lists(CONFIG_MUTATION, min_size=1, max_size=3),
    "image": st.lists(IMAGE_MUTATION, min_size=1, max_size=3),
}


def as_json(recipe) -> list:
    """A recipe as plain JSON (tuples -> lists), as the corpus stores it."""
    return json.loads(json.dumps(recipe))


# ----- applying recipes ----------------------------------------------------------------------------------


def _pick(seq, i):
    return seq[i % len(seq)] if len(seq) else None


def _flip(data: bytes, offset: int, value: int) -> bytes:
    if not data:
        return data
    i = offset % len(data)
    return data[:i] + bytes([value]) + data[i + 1 :]


def _nested(depth: int):
    node: object = 1
    for _ in range(depth):
        node = {"k": [node]}
    return node


def _walk(node, path: list[int]):
    """The container and key ``path`` (indices taken modulo each level's size) leads to, or None."""
    parent, key = None, None
    for i in path:
        if isinstance(node, dict) and node:
            parent, key = node, _pick(list(node), i)
        elif isinstance(node, list) and node:
            parent, key = node, i % len(node)
        else:
            break
        node = parent[key]
    return (parent, key) if parent is not None else None


def _json_mutate(doc, m) -> object:
    if m[0] == "nest":
        spot = _walk(doc, [0])
        if spot is None:
            return _nested(m[1])
        spot[0][spot[1]] = _nested(m[1])
        return doc
    spot = _walk(doc, m[1])
    if spot is None:
        return m[2] if m[0] == "json_set" else doc
    parent, key = spot
    if m[0] == "json_set":
        parent[key] = copy.deepcopy(m[2])
    else:
        del parent[key]
    return doc


def _program_mutate(text: str, m) -> str:
    if m[0] == "program_truncate":
        return text[: m[1] % (len(text) + 1)]
    lines = text.split("\n")
    i = m[1] % len(lines)
    how, j = m[2], m[3] % len(lines)
    if how == "drop":
        del lines[i]
    elif how == "dup":
        lines.insert(i, lines[i])
    elif how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif how == "digits":
        lines[i] = "".join(str((int(c) + j) % 10) if c.isdigit() else c for c in lines[i])
    elif how == "opname":
        lines[i] = lines[i].replace("= ", f"= {_pick(['relu', 'conv2d', 'getitem', 'while', 'input', 'bogus'], j)} ", 1)
    else:
        lines[i] = lines[i][: j % (len(lines[i]) + 1)]
    return "\n".join(lines)


def _safetensors_mutate(blob: bytes, m) -> bytes:
    if m[0] == "st_truncate":
        return blob[: m[1] % (len(blob) + 1)]
    try:
        (n,) = struct.unpack_from("<Q", blob, 0)
        header = json.loads(blob[8 : 8 + n])
    except (struct.error, ValueError):
        return blob  # an earlier mutation already broke the header
    header = _json_mutate(header, ("json_set", m[1], m[2]))
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + blob[8 + n :]


def _apply_onnx(data: bytes, recipe) -> bytes:
    import onnx
    from onnx import helper

    model = onnx.load_from_string(data)
    g = model.graph
    tail = []
    for m in recipe:
        kind = m[0]
        node = _pick(g.node, m[1]) if kind in ("op_type", "drop_input", "add_input", "rename_output", "attr_value",
                                               "attr_add", "attr_drop", "attr_retype") else None  # fmt: skip
        init = _pick(g.initializer, m[1]) if kind.startswith("init_") else None
        if kind == "ir_version":
            model.ir_version = m[1]
        elif kind == "opset":
            for entry in model.opset_import:
                if entry.domain in ("", "ai.onnx"):
                    entry.version = m[1]
        elif kind == "op_type" and node is not None:
            node.op_type = m[2]
        elif kind == "drop_input" and node is not None and len(node.input):
            del node.input[m[2] % len(node.input)]
        elif kind == "add_input" and node is not None:
            names = [n for x in g.node for n in x.output] + [t.name for t in g.initializer] + ["", "ghost"]
            node.input.append(_pick(names, m[2]))
        elif kind == "rename_output" and node is not None and len(node.output):
            node.output[0] = m[2]
        elif kind == "drop_node" and len(g.node):
            del g.node[m[1] % len(g.node)]
        elif kind == "dup_node" and len(g.node):
            g.node.append(copy.deepcopy(_pick(g.node, m[1])))
        elif kind == "swap_nodes" and len(g.node):
            a, b = copy.deepcopy(_pick(g.node, m[1])), copy.deepcopy(_pick(g.node, m[2]))
            g.node[m[1] % len(g.node)].CopyFrom(b)
            g.node[m[2] % len(g.node)].CopyFrom(a)
        elif kind == "attr_value" and node is not None and len(node.attribute):
            attr = node.attribute[m[2] % len(node.attribute)]
            attr.CopyFrom(helper.make_attribute(attr.name, m[3]) if m[3] != [] else helper.make_attribute(
                attr.name, [], attr_type=onnx.AttributeProto.INTS))  # fmt: skip
        elif kind == "attr_add" and node is not None:
            value = m[3] if m[3] != [] else [0]
            node.attribute.append(helper.make_attribute(m[2], value))
        elif kind == "attr_retype" and node is not None and len(node.attribute):
            _same_type_values(node.attribute[m[2] % len(node.attribute)], m[3])
        elif kind == "attr_drop" and node is not None and len(node.attribute):
            del node.attribute[m[2] % len(node.attribute)]
        elif kind == "init_dims" and init is not None:
            del init.dims[:]
            init.dims.extend(m[2])
        elif kind == "init_dtype" and init is not None:
            init.data_type = m[2]
        elif kind == "init_truncate" and init is not None:
            init.raw_data = init.raw_data[: m[2] % (len(init.raw_data) + 1)]
        elif kind == "init_to_float_data" and init is not None:
            init.raw_data = b""
            del init.float_data[:]
            init.float_data.extend([0.5] * m[2])
        elif kind == "init_rename" and init is not None:
            init.name = m[2]
        elif kind == "input_elem_type" and len(g.input):
            g.input[0].type.tensor_type.elem_type = m[1]
        elif kind == "input_dim" and len(g.input):
            dims = g.input[0].type.tensor_type.shape.dim
            if len(dims):
                d = dims[m[1] % len(dims)]
                if isinstance(m[2], str):
                    d.dim_param = m[2]
                else:
                    d.dim_value = m[2]
        elif kind == "drop_graph_io":
            del (g.input if m[1] else g.output)[:]
        elif kind == "output_name" and len(g.output):
            g.output[0].name = m[1]
        elif kind in ("flip", "truncate"):
            tail.append(m)
    data = model.SerializeToString()
    for m in tail:
        data = _flip(data, m[1], m[2]) if m[0] == "flip" else data[: m[1] % (len(data) + 1)]
    return data


def _same_type_values(attr, values: list) -> None:
    """New values of the attribute's own type (and, for lists, the same length): checker-valid mutations
    that reach the converters."""
    import onnx

    if attr.type == onnx.AttributeProto.INTS:
        attr.ints[:] = [values[i % len(values)] for i in range(len(attr.ints))]
    elif attr.type == onnx.AttributeProto.INT:
        attr.i = values[0]
    elif attr.type == onnx.AttributeProto.FLOAT:
        attr.f = float(values[0]) / 4
    elif attr.type == onnx.AttributeProto.STRING:
        attr.s = _pick([b"NOTSET", b"VALID", b"SAME_UPPER", b"SAME_LOWER", b"nearest", b"linear", b""], values[0])


def _checksummed_model(doc: dict, blob: bytes, recheck: bool) -> tuple[dict, bytes]:
    if recheck and isinstance(doc, dict) and isinstance(doc.get("weights"), dict):
        doc["weights"]["bytes"] = len(blob)
        doc["weights"]["sha256"] = hashlib.sha256(blob).hexdigest()
    return doc, blob


def _apply_exported(seed_dir: str, out_dir: str, recipe) -> None:
    with open(os.path.join(seed_dir, "model.json"), encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(seed_dir, "model.safetensors"), "rb") as f:
        blob = f.read()
    recheck = True
    for m in recipe:
        if m[0] in ("json_set", "json_drop", "nest"):
            doc = _json_mutate(doc, m)
        elif m[0].startswith("program_") and isinstance(doc, dict) and isinstance(doc.get("program"), str):
            doc["program"] = _program_mutate(doc["program"], m)
        elif m[0].startswith("st_"):
            blob = _safetensors_mutate(blob, m)
        elif m[0] == "no_rechecksum":
            recheck = False
    doc, blob = _checksummed_model(doc, blob, recheck)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
        f.write(blob)
    with open(os.path.join(out_dir, "model.json"), "w", encoding="utf-8") as f:
        try:
            f.write(json.dumps(doc))
        except (RecursionError, ValueError):
            f.write(_deep_json(recipe))


def _deep_json(recipe) -> str:
    """A document nested past what json.dumps writes, built as text."""
    depth = max((m[1] for m in recipe if m[0] == "nest"), default=1)
    return '{"format": ' + '{"k": [' * depth + "1" + "]}" * depth + "}"


def _apply_checkpoint(data: bytes, recipe) -> bytes:
    from paddlectl.framework.serialization.checkpoint import _LEN, MAGIC

    start = len(MAGIC)
    (n,) = _LEN.unpack_from(data, start)
    header = json.loads(data[start + 8 : start + 8 + n])
    payload = data[start + 8 + n :]
    (m_len,) = _LEN.unpack_from(payload, 0)
    st_header = json.loads(payload[8 : 8 + m_len])
    structure_text = st_header["__metadata__"]["paddlectl.structure"]
    structure = json.loads(structure_text)
    recheck, tail = True, []
    for m in recipe:
        if m[0] in ("json_set", "json_drop", "nest"):
            structure = _json_mutate(structure, m)
        elif m[0] == "st_header":
            st_header = _json_mutate(st_header, ("json_set", m[1], m[2]))
        elif m[0] == "st_truncate":
            payload = payload[: m[1] % (len(payload) + 1)]
        elif m[0] == "header_set":
            header = _json_mutate(header, ("json_set", [m[1]], m[2]))
        elif m[0] == "no_rechecksum":
            recheck = False
        elif m[0] in ("flip", "truncate"):
            tail.append(m)
    if isinstance(st_header, dict) and isinstance(st_header.get("__metadata__"), dict):
        try:
            st_header["__metadata__"]["paddlectl.structure"] = json.dumps(structure)
        except (RecursionError, ValueError):
            depth = max((m[1] for m in recipe if m[0] == "nest"), default=1)
            text = '{"t": "dict", "items": [["k", ' * depth + '{"t": "value", "v": 1}' + "]]}" * depth
            st_header["__metadata__"]["paddlectl.structure"] = text
    text = json.dumps(st_header).encode()
    payload = _LEN.pack(len(text)) + text + payload[8 + m_len :]
    if recheck and isinstance(header, dict):
        header["payload_bytes"] = len(payload)
        header["payload_sha256"] = hashlib.sha256(payload).hexdigest()
    head = json.dumps(header).encode()
    data = MAGIC + _LEN.pack(len(head)) + head + payload
    for m in tail:
        data = _flip(data, m[1], m[2]) if m[0] == "flip" else data[: m[1] % (len(data) + 1)]
    return data


def _apply_config(text: str, recipe) -> str:
    import yaml

    doc = yaml.safe_load(text)
    raw = []
    for m in recipe:
        if m[0] in ("json_set", "json_drop", "nest"):
            doc = _json_mutate(doc, m)
        else:
            raw.append(m)
    try:
        text = yaml.safe_dump(doc, sort_keys=False)
    except (RecursionError, yaml.YAMLError):
        text = "Global:\n  task: " + "[" * 3000 + "]" * 3000 + "\n"
    for m in raw:
        if m[0] == "flip":
            text = _flip(text.encode(), m[1], m[2]).decode("latin-1")
        elif m[1] == "anchors":
            text = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
                f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ) + text  # fmt: skip
        elif m[1] == "tab":
            text = text.replace("  ", "\t", 1)
        elif m[1] == "tag":
            text = "!!python/object/apply:os.system ['true']\n" + text
        elif m[1] == "binary":
            text = "Global: !!binary |\n  " + "A" * (m[2] % 7) + "\n" + text
        elif m[1] == "dupkey":
            text = text + text.split("\n", 1)[0] + "\n"
        else:
            text = text[: m[2] % (len(text) + 1)]
    return text


def _apply_image(data: bytes, recipe) -> bytes:
    import zlib

    for m in recipe:
        if m[0] == "png_dims":
            w, h = (int(v) % 2**32 for v in m[1:3])
            ihdr = data[12:16] + struct.pack(">II", w, h) + data[24:29]
            data = data[:16] + struct.pack(">II", w, h) + data[24:29] + struct.pack(">I", zlib.crc32(ihdr)) + data[33:]
        elif m[0] == "flip":
            data = _flip(data, m[1], m[2])
        else:
            data = data[: m[1] % (len(data) + 1)]
    return data


def materialize(kind: str, seed: str, recipe, out: str) -> str:
    """Write the case ``recipe`` makes from ``seed`` at ``out`` (a file, or a directory for exported
    models); returns the path the loader is given."""
    if kind == "exported":
        _apply_exported(seed, out, recipe)
        return out
    mode = "r" if kind == "config" else "rb"
    with open(seed, mode, **({"encoding": "utf-8"} if mode == "r" else {})) as f:
        data = f.read()
    apply = {"onnx": _apply_onnx, "checkpoint": _apply_checkpoint, "config": _apply_config, "image": _apply_image}
    data = apply[kind](data, recipe)
    path = out + {"onnx": ".onnx", "checkpoint": ".pdparams", "config": ".yml", "image": ".png"}[kind]
    with open(path, "w" if kind == "config" else "wb", **({"encoding": "latin-1"} if kind == "config" else {})) as f:
        f.write(data)
    return path


# ----- the worker ----------------------------------------------------------------------------------------

MAX_RUN_ELEMENTS = 1 << 22


def _run_model(path: str) -> None:
    from paddlectl.framework.inference import Config, create_predictor

    predictor = create_predictor(Config(path))
    arrays = []
    for name in predictor.get_input_names():
        handle = predictor.get_input_handle(name)
        shape = [d if isinstance(d, int) else 2 for d in handle.shape()]
        if any(d < 0 for d in shape) or int(np.prod(shape)) > MAX_RUN_ELEMENTS:
            return  # a huge declared input: loading was the point, running it would only measure memory
        arrays.append(np.ones(shape, handle.type()))
    predictor.run(arrays)


def load_case(kind: str, path: str) -> None:
    """What a user does with such a file: load it (and for models, build a predictor and run it)."""
    if kind == "onnx":
        from paddlectl.framework.onnx.importer import import_onnx

        import_onnx(path)
        _run_model(path)
    elif kind == "exported":
        from paddlectl.framework import jit

        jit.load(path)
        _run_model(path)
    elif kind == "checkpoint":
        import paddlectl.framework as paddle

        paddle.load(path)
    elif kind == "selftest":  # the harness's own verdicts: an untyped error, a crash, a hang
        action = open(path, encoding="utf-8").read()
        if action == "raise":
            raise KeyError("planted")
        if action == "exit":
            os._exit(3)
        time.sleep(float(action))
    elif kind == "config":
        from paddlectl.framework.config import load_config

        load_config(path)
    else:
        from paddlectl.framework.vision.image_io import load_input

        load_input(path, "RGB")


def _serve(conn) -> None:
    import paddlectl.framework.onnx.importer  # noqa: F401 - imported before "ready": not a case's time
    from paddlectl.framework.errors import PaddlectlError

    conn.send(("ready", ""))
    while True:
        try:
            kind, path = conn.recv()
        except EOFError:
            return
        try:
            load_case(kind, path)
            conn.send(("ran", ""))
        except PaddlectlError as exc:
            conn.send(("typed", type(exc).__name__))
        except BaseException as exc:  # noqa: BLE001 - the point is to report anything untyped
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
            conn.send(("untyped", f"{type(exc).__name__} at {where}: {str(exc)[:300]}"))


class Worker:
    """One child process that loads cases; restarted after a hang or a crash."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._ctx = multiprocessing.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self._conn, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child,), daemon=True)
        self._proc.start()
        child.close()
        self._conn.recv()  # "ready": start-up and imports are not counted against a case's timeout

    def warm(self, kind: str, path: str) -> None:
        """Run the seed once without a deadline: imports and first compilation are not a hang."""
        self._conn.send((kind, path))
        outcome = self._conn.recv()
        if outcome[0] != "ran":
            raise AssertionError(f"the {kind} seed itself does not load: {outcome}")

    def run(self, kind: str, path: str) -> tuple[str, str]:
        """("ran" | "typed" | "untyped" | "hang" | "crash", detail)."""
        self._conn.send((kind, path))
        if not self._conn.poll(self.timeout):
            self._restart()
            return "hang", f"no answer within {self.timeout:.0f} s"
        try:
            return self._conn.recv()
        except (EOFError, ConnectionError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._restart()
            return "crash", f"worker died (exit code {code})"

    def _restart(self) -> None:
        self.close()
        self._start()

    def close(self) -> None:
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join()
        self._conn.close()

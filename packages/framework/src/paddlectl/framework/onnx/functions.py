"""ONNX function ops without an import rule of their own, replaced by their function bodies.

Many recent ops (Attention, RotaryEmbedding, SwiGLU, GroupNormalization, CausalConvWithState...)
are defined by ONNX as *functions*: a body of simpler ops, given in the op's schema, possibly
depending on the node's attributes and input types. A node of such an op that no rule maps is
expanded into its body (attributes substituted, internal names made unique), recursively, before
the graph is checked and converted; each body node keeps the opset its function was written for, so
its rule reads attributes-versus-inputs right. A body that holds subgraphs is left alone (the op is
then reported as unsupported, as before).
"""

from __future__ import annotations

from .dependency import onnx

MAX_DEPTH = 4
"""Function bodies may use function ops themselves; expansion stops after this many levels."""


def _function(schema, node, opset: int, types: dict):
    """The FunctionProto defining ``node`` at ``opset``, or None."""
    versions = [v for v in schema.function_opset_versions if v <= opset]
    proto = onnx.FunctionProto()
    if versions:
        proto.ParseFromString(schema.get_function_with_opset_version(max(versions)))
        return proto
    versions = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    if not versions or any(n and n not in types for n in node.input):
        return None
    with_defaults = onnx.NodeProto()
    with_defaults.CopyFrom(node)
    given = {a.name for a in node.attribute}
    with_defaults.attribute.extend(
        a.default_value for name, a in schema.attributes.items() if name not in given and a.default_value.name
    )
    input_types = [types[n].SerializeToString() if n else onnx.TypeProto().SerializeToString() for n in node.input]
    try:
        proto.ParseFromString(
            schema.get_context_dependent_function_with_opset_version(
                max(versions), with_defaults.SerializeToString(), input_types
            )
        )
    except Exception:  # noqa: BLE001 - onnx builds the body in C++ and refuses inputs it cannot handle
        return None
    return proto


def _body_opset(proto, default: int) -> int:
    return next((int(i.version) for i in proto.opset_import if i.domain in ("", "ai.onnx")), default)


def _expand(node, proto, schema, prefix: str) -> list | None:
    """``proto``'s nodes wired to ``node``'s inputs/outputs with its attributes, or None where the
    body holds a subgraph."""
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in proto.node for a in n.attribute):
        return None
    names = {formal: (node.input[i] if i < len(node.input) else "") for i, formal in enumerate(proto.input)}
    names.update(
        {formal: node.output[i] for i, formal in enumerate(proto.output) if i < len(node.output) and node.output[i]}
    )
    attrs = {a.name: a for a in node.attribute}
    for name, a in schema.attributes.items():
        if name not in attrs and a.default_value.name:
            attrs[name] = a.default_value
    out = []
    for inner in proto.node:
        new = onnx.NodeProto()
        new.CopyFrom(inner)
        new.ClearField("input")
        new.ClearField("output")
        new.ClearField("attribute")
        new.input.extend(n if n == "" else names.get(n, prefix + n) for n in inner.input)
        new.output.extend(n if n == "" else names.get(n, prefix + n) for n in inner.output)
        for a in inner.attribute:
            if a.HasField("ref_attr_name"):
                if a.ref_attr_name in attrs:
                    ref = onnx.AttributeProto()
                    ref.CopyFrom(attrs[a.ref_attr_name])
                    ref.name = a.name
                    new.attribute.append(ref)
            else:
                new.attribute.append(a)
        new.name = prefix + (inner.name or inner.op_type)
        out.append(new)
    return out


def expand_functions(model, opset: int, supported) -> tuple:
    """(graph, per-node opsets): ``model``'s graph with every node of an unsupported function op
    replaced by its body; the model is returned unchanged (one opset for all) when there is none."""
    graph, opsets = model.graph, [opset] * len(model.graph.node)
    for depth in range(MAX_DEPTH):
        pending = [
            i for i, n in enumerate(graph.node)
            if n.domain in ("", "ai.onnx") and n.op_type not in supported and onnx.defs.has(n.op_type)
        ]  # fmt: skip
        if not pending:
            break
        types = _types(model, graph)
        nodes, new_opsets, changed = [], [], False
        for i, node in enumerate(graph.node):
            body = None
            if i in pending:
                schema = onnx.defs.get_schema(node.op_type, opsets[i], "")
                proto = _function(schema, node, opsets[i], types)
                prefix = f"{node.name or node.op_type}__{depth}_{i}__"
                body = None if proto is None else _expand(node, proto, schema, prefix)
            if body is None:
                nodes.append(node)
                new_opsets.append(opsets[i])
            else:
                nodes += body
                new_opsets += [_body_opset(proto, opsets[i])] * len(body)
                changed = True
        if not changed:
            break
        expanded = onnx.GraphProto()
        expanded.CopyFrom(graph)
        del expanded.node[:]
        expanded.node.extend(nodes)
        graph, opsets = expanded, new_opsets
    return graph, opsets


def _types(model, graph) -> dict:
    """Name -> TypeProto of every value shape inference knows in ``graph``."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.CopyFrom(graph)
    try:
        probe = onnx.shape_inference.infer_shapes(probe)
    except Exception:  # noqa: BLE001 - without types, context-dependent functions are not expanded
        pass
    g = probe.graph
    types = {v.name: v.type for v in list(g.input) + list(g.output) + list(g.value_info)}
    for t in g.initializer:
        types[t.name] = onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
    return types

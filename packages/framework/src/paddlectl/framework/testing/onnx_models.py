"""One-node ONNX models for tests of import rules: the node, typed inputs, initializers, and
outputs typed by onnx's own shape inference (the importer's checker wants every output typed)."""

from __future__ import annotations

import numpy as np


def node_model(node, inputs: dict, initializers: dict | None = None, opset: int = 17, ir_version: int = 8):
    """An ``onnx.ModelProto`` of ``node``; ``inputs`` maps a graph input's name to (NumPy dtype,
    shape with ints or dim names), ``initializers`` a name to its array."""
    return graph_model([node], inputs, [n for n in node.output if n], initializers, opset, ir_version)


def graph_model(nodes, inputs: dict, outputs: list, initializers: dict | None = None, opset: int = 17,
                ir_version: int = 8):  # fmt: skip
    """An ``onnx.ModelProto`` of ``nodes`` whose graph outputs are the values named in ``outputs``;
    ``inputs`` and ``initializers`` as in ``node_model``."""
    import onnx
    from onnx import helper

    values = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(d)), s)
              for n, (d, s) in inputs.items()]  # fmt: skip
    typed = [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in outputs]
    inits = [onnx.numpy_helper.from_array(np.asarray(a), n) for n, a in (initializers or {}).items()]
    graph = helper.make_graph(list(nodes), "g", values, typed, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    inferred = onnx.shape_inference.infer_shapes(model)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model

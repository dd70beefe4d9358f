"""KServe v2 tensors: decoded against the model's input spec (symbolic dims take any size), refused
with a stable code otherwise, encoded back flat with the protocol's datatype names."""

from __future__ import annotations

import json

import numpy as np
import pytest

from paddlectl.serving.bodies import OrjsonResponse
from paddlectl.serving.errors import ServeError
from paddlectl.serving.protocol import decode_inputs, encode_outputs, requested_outputs, tensor_metadata

SPECS = [{"name": "ids", "shape": ["N", "S"], "dtype": "int64"}, {"name": "mask", "shape": ["N", 4], "dtype": "bool"}]


def body(ids_shape=(2, 4), mask_shape=(2, 4), ids_type="INT64", ids_data=None):
    ids = ids_data if ids_data is not None else list(range(int(np.prod(ids_shape))))
    mask = [True] * int(np.prod(mask_shape))
    return {
        "inputs": [
            {"name": "mask", "shape": list(mask_shape), "datatype": "BOOL", "data": mask},
            {"name": "ids", "shape": list(ids_shape), "datatype": ids_type, "data": ids},
        ]
    }


def test_inputs_come_back_in_model_order_with_symbolic_dims_free():
    ids, mask = decode_inputs(body(ids_shape=(2, 7)), SPECS)
    assert ids.dtype == np.int64 and ids.shape == (2, 7) and ids[1, 0] == 7
    assert mask.dtype == np.bool_ and mask.shape == (2, 4)
    nested = body(ids_shape=(1, 2), mask_shape=(1, 4), ids_data=[[5, 6]])
    assert decode_inputs(nested, SPECS)[0].tolist() == [[5, 6]]


@pytest.mark.parametrize(
    ("request_body", "status", "error"),
    [
        (body(ids_type="FP32"), 400, "bad_datatype"),
        (body(mask_shape=(2, 5)), 400, "bad_shape"),
        (body(ids_shape=(2,)), 400, "bad_shape"),
        (body(ids_shape=(3, 4)), 400, "bad_shape"),  # the batch sizes disagree
        (body(ids_shape=(2, 4), ids_data=[1, 2]), 400, "bad_shape"),
        (body(ids_shape=(1, 2), ids_data=["a", "b"]), 400, "bad_data"),
        (body(ids_shape=(1, 2), ids_data=[[1], [2, 3]]), 400, "bad_data"),
        (body(ids_shape=(1, -2), ids_data=[1]), 400, "bad_shape"),
        (body(ids_shape=(100000, 100000), ids_data=[1]), 413, "tensor_too_large"),
        ({"inputs": [{"name": "ids"}, {"name": "ids"}]}, 400, "bad_request"),
        ({"inputs": [{"name": "ids", "shape": [1, 1], "datatype": "INT64", "data": [1]}]}, 400, "bad_input_name"),
        ([], 400, "bad_request"),
    ],
)
def test_bad_tensors_are_refused_with_a_stable_code(request_body, status, error):
    with pytest.raises(ServeError) as caught:
        decode_inputs(request_body, SPECS)
    assert (caught.value.status, caught.value.code) == (status, error)


def test_non_finite_floats_are_refused():
    specs = [{"name": "x", "shape": ["N"], "dtype": "float32"}]
    with pytest.raises(ServeError, match="NaN or infinite"):
        decode_inputs({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [float("nan")]}]}, specs)


def test_outputs_are_flat_with_protocol_datatypes_and_can_be_chosen():
    arrays = [np.ones((2, 2), np.float16), np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::2]]
    out = encode_outputs(["p", "q"], arrays, ["q"])
    rendered = json.loads(OrjsonResponse(out).body)  # what a client reads: the strided array as flat numbers
    assert rendered == [{"name": "q", "datatype": "INT32", "shape": [2, 2], "data": [0, 2, 3, 5]}]
    assert json.loads(OrjsonResponse(encode_outputs(["p"], [np.array([0.5, np.nan], np.float32)], ["p"])).body)[0][
        "data"
    ] == [0.5, None]  # JSON has no NaN: a non-finite output is null, not a failed answer
    assert requested_outputs({}, ["p", "q"]) == ["p", "q"]
    with pytest.raises(ServeError) as caught:
        requested_outputs({"outputs": [{"name": "r"}]}, ["p", "q"])
    assert caught.value.code == "bad_output_name"
    assert tensor_metadata(SPECS[0]) == {"name": "ids", "datatype": "INT64", "shape": [-1, -1]}

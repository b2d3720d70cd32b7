"""The dicts of get_input_details / get_output_details / get_tensor_details / get_signature_list: the keys
and types tf.lite.Interpreter documents, with values from the models' generators and native TFLite's
metadata; plan() and plugins() against the `baton` tool's JSON."""
import json
import subprocess

import numpy as np
import pytest

import baton
from conftest import BATON_EXE, BUILTIN_DIR, MODELS_DIR, QUANT_OPS, REFERENCE, XNNPACK_DIR, load_case, real_model

# tf.lite.Interpreter._get_tensor_details's keys.
DETAIL_KEYS = {"name", "index", "shape", "shape_signature", "dtype", "quantization", "quantization_parameters",
               "sparsity_parameters"}


def check_format(d):
    assert set(d) == DETAIL_KEYS
    assert isinstance(d["name"], str)
    assert isinstance(d["index"], int)
    for key in ("shape", "shape_signature"):
        assert isinstance(d[key], np.ndarray) and d[key].dtype == np.int32 and d[key].ndim == 1
    assert isinstance(d["dtype"], type) and issubclass(d["dtype"], np.generic)
    scale, zero_point = d["quantization"]
    assert isinstance(d["quantization"], tuple) and isinstance(scale, float) and isinstance(zero_point, int)
    q = d["quantization_parameters"]
    assert set(q) == {"scales", "zero_points", "quantized_dimension"}
    assert q["scales"].dtype == np.float32 and q["zero_points"].dtype == np.int32
    assert isinstance(q["quantized_dimension"], int)
    assert isinstance(d["sparsity_parameters"], dict)


def interpreter(path):
    return baton.Interpreter(model_path=str(path), plugin_dirs=[BUILTIN_DIR], no_delegates=True)


def test_details_of_add_uint8():
    # Scales and zero points as tools/quant-op-models.mjs writes them for ADD in uint8.
    interp = interpreter(QUANT_OPS / "add_uint8" / "model.tflite")
    meta = json.loads((QUANT_OPS / "add_uint8" / "meta.json").read_text())
    inputs, outputs = interp.get_input_details(), interp.get_output_details()
    for d in inputs + outputs:
        check_format(d)
        assert d["dtype"] is np.uint8
        assert d["sparsity_parameters"] == {}
    for d, m in zip(inputs + outputs, meta["inputs"] + meta["outputs"]):
        assert d["name"] == m["name"]
        assert list(d["shape"]) == m["shape"] and list(d["shape_signature"]) == m["shape"]
    for d, (scale, zero_point) in zip(inputs + outputs, [(0.037, 128), (0.021, 100), (0.045, 120)]):
        assert d["quantization"] == (pytest.approx(scale), zero_point)
        np.testing.assert_allclose(d["quantization_parameters"]["scales"], [scale], rtol=1e-7)
        np.testing.assert_array_equal(d["quantization_parameters"]["zero_points"], [zero_point])
    assert [d["index"] for d in inputs] == [0, 1] and outputs[0]["index"] == 2


def test_per_channel_quantization():
    # int8 depthwise weights: one scale per channel on dimension 3, zero points 0; the legacy pair is
    # (0.0, 0) as tf.lite gives for per-channel tensors.
    interp = interpreter(QUANT_OPS / "depthwise_int8" / "model.tflite")
    tensors = interp.get_tensor_details()
    assert [d["index"] for d in tensors] == list(range(len(tensors)))
    per_channel = [d for d in tensors if len(d["quantization_parameters"]["scales"]) > 1]
    assert len(per_channel) == 1
    w = per_channel[0]
    check_format(w)
    assert w["dtype"] is np.int8
    assert w["quantization"] == (0.0, 0)
    assert w["quantization_parameters"]["quantized_dimension"] == 3
    channels = w["shape"][3]
    assert len(w["quantization_parameters"]["scales"]) == channels
    np.testing.assert_array_equal(w["quantization_parameters"]["zero_points"], np.zeros(channels))
    assert all(0.002 <= s <= 0.02 for s in w["quantization_parameters"]["scales"])


def test_float_tensor_details():
    interp = interpreter(MODELS_DIR / "add_signatures.tflite")
    tensors = interp.get_tensor_details()
    assert [d["name"] for d in tensors] == ["serving_default_x:0", "serving_default_y:0", "PartitionedCall:0"]
    for d in tensors:
        check_format(d)
        assert d["dtype"] is np.float32
        assert d["quantization"] == (0.0, 0)
        assert len(d["quantization_parameters"]["scales"]) == 0
        assert list(d["shape"]) == [1, 4] and list(d["shape_signature"]) == [-1, 4]


def test_details_agree_with_baton_inspect():
    path = QUANT_OPS / "conv_3x3_int8" / "model.tflite"
    inspect = json.loads(subprocess.run([BATON_EXE, "inspect", str(path), "--json", "--plugin-dir", BUILTIN_DIR],
                                        check=True, capture_output=True, text=True).stdout)
    interp = interpreter(path)
    assert [d["name"] for d in interp.get_input_details()] == [i["name"] for i in inspect["inputs"]]
    assert [d["name"] for d in interp.get_output_details()] == [o["name"] for o in inspect["outputs"]]
    assert [list(d["shape"]) for d in interp.get_input_details()] == [i["shape"] for i in inspect["inputs"]]


def test_sparse_tensor_details():
    # face_detection_full_range_sparse keeps sparse weights behind DENSIFY (folded at load).
    interp = baton.Interpreter(str(real_model("face_detection_full_range_sparse")), plugin_dirs=[BUILTIN_DIR],
                               no_delegates=True)
    sparse = [d for d in interp.get_tensor_details() if d["sparsity_parameters"]]
    assert sparse
    for d in sparse:
        check_format(d)
        s = d["sparsity_parameters"]
        assert set(s) == {"traversal_order", "block_map", "dim_metadata"}
        assert len(s["dim_metadata"]) == len(s["traversal_order"])
        assert {m["format"] for m in s["dim_metadata"]} <= {0, 1}


def test_plan_is_baton_plan_json():
    for path, flags, kwargs in [
        (QUANT_OPS / "conv_3x3_uint8" / "model.tflite", ["--no-delegates"], {"no_delegates": True}),
        (MODELS_DIR / "add_signatures.tflite", ["--delegate", "xnnpack"], {"delegates": ["xnnpack"]}),
    ]:
        interp = baton.Interpreter(str(path), plugin_dirs=[BUILTIN_DIR, XNNPACK_DIR], **kwargs)
        tool = subprocess.run([BATON_EXE, "plan", str(path), "--format", "json", "--plugin-dir", BUILTIN_DIR,
                               "--plugin-dir", XNNPACK_DIR] + flags, check=True, capture_output=True, text=True)
        assert interp.plan() == json.loads(tool.stdout)


def test_plugins_has_the_fields_of_baton_plugins_json():
    interp = baton.Interpreter(str(MODELS_DIR / "add_signatures.tflite"), plugin_dirs=[BUILTIN_DIR, XNNPACK_DIR],
                               delegates=["xnnpack"])
    tool = json.loads(subprocess.run([BATON_EXE, "plugins", "--json", "--plugin-dir", BUILTIN_DIR, "--plugin-dir",
                                      XNNPACK_DIR, "--delegate", "xnnpack"],
                                     check=True, capture_output=True, text=True).stdout)
    mine = interp.plugins()
    # The tool, run from the build tree, also searches the build's plugin folders after these.
    assert tool["plugin_dirs"][: len(mine["plugin_dirs"])] == mine["plugin_dirs"]
    assert mine["plugin_dirs"][:2] == [BUILTIN_DIR, XNNPACK_DIR]
    for key in ("delegate_chain", "delegate_chain_source"):
        assert mine[key] == tool[key], key
    assert mine["delegate_chain"] == ["xnnpack"] and mine["skipped"] == []
    assert [p["name"] for p in mine["plugins"]] == ["builtin", "xnnpack"]
    tool_plugins = {p["name"]: p for p in tool["plugins"]}
    for m in mine["plugins"]:
        for key in m:
            assert m[key] == tool_plugins[m["name"]][key], (m["name"], key)


def test_signature_list_and_runner_formats():
    interp = interpreter(MODELS_DIR / "add_signatures.tflite")
    # tf.lite lists names in name order.
    assert interp.get_signature_list() == {"serving_default": {"inputs": ["x", "y"], "outputs": ["sum"]},
                                           "on_copy": {"inputs": ["x", "y"], "outputs": ["sum"]}}
    runner = interp.get_signature_runner("serving_default")
    ins, outs = runner.get_input_details(), runner.get_output_details()
    assert set(ins) == {"x", "y"} and set(outs) == {"sum"}
    for d in list(ins.values()) + list(outs.values()):
        check_format(d)
    assert ins["x"]["name"] == "serving_default_x:0" and outs["sum"]["index"] == 2


def test_model_without_signatures_lists_none():
    assert interpreter(QUANT_OPS / "add_int8" / "model.tflite").get_signature_list() == {}

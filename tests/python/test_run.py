"""Running models through baton.Interpreter against native TFLite's and LiteRT's committed outputs."""
import gc
import json

import numpy as np
import pytest

import baton
from conftest import BUILTIN_DIR, MODELS_DIR, QUANT_OPS, REFERENCE, XNNPACK_DIR, load_case, real_model

QUANT_CASES = sorted(p.name for p in QUANT_OPS.iterdir() if (p / "model.tflite").exists())


def builtin_interpreter(path, **kwargs):
    return baton.Interpreter(model_path=str(path), plugin_dirs=[BUILTIN_DIR], no_delegates=True, **kwargs)


def test_there_are_quant_cases():
    assert len(QUANT_CASES) == 47


@pytest.mark.parametrize("case", QUANT_CASES)
def test_quant_op_matches_native_tflite(case):
    # Native TFLite 2.9's outputs (tools/make-quant-op-cases.sh); baton's integer kernels match them bit for bit.
    folder = QUANT_OPS / case
    meta = json.loads((folder / "meta.json").read_text())
    inputs, outputs = load_case(folder)
    interp = builtin_interpreter(folder / "model.tflite")
    interp.allocate_tensors()
    details = interp.get_input_details()
    assert [d["name"] for d in details] == [m["name"] for m in meta["inputs"]]
    for d, value in zip(details, inputs):
        interp.set_tensor(d["index"], value)
    interp.invoke()
    out = interp.get_output_details()
    assert len(out) == len(outputs) == 1
    got = interp.get_tensor(out[0]["index"])
    assert got.dtype == outputs[0].dtype and got.shape == outputs[0].shape
    np.testing.assert_array_equal(got, outputs[0])


@pytest.mark.parametrize("delegates", [[], ["xnnpack"]])
def test_face_detection_matches_litert(delegates):
    # LiteRT's outputs (tools/make-reference.sh); the same bound as the C++ real-model tests.
    path = real_model("face_detection_short_range")
    inputs, outputs = load_case(REFERENCE / "face_detection_short_range")
    interp = baton.Interpreter(model_path=str(path), plugin_dirs=[BUILTIN_DIR, XNNPACK_DIR], delegates=delegates,
                               num_threads=1)
    interp.set_tensor(interp.get_input_details()[0]["index"], inputs[0])
    interp.invoke()
    for d, want in zip(interp.get_output_details(), outputs):
        got = interp.get_tensor(d["index"])
        assert got.shape == want.shape
        assert np.max(np.abs(got - want)) <= 1e-3 * np.max(np.abs(want))
    plugins = {n["placement"]["plugin"] for n in interp.plan()["nodes"] if n["placement"]["kind"] != "folded"}
    if delegates:
        assert "xnnpack" in plugins and interp.plan()["partitions"]
    else:
        assert plugins == {"builtin"}


def add_model():
    return MODELS_DIR / "add_signatures.tflite"


def test_get_tensor_is_a_copy():
    interp = builtin_interpreter(add_model())
    x, y = (d["index"] for d in interp.get_input_details())
    out = interp.get_output_details()[0]["index"]
    interp.set_tensor(x, np.array([[1, -2, 3, -4]], np.float32))
    interp.set_tensor(y, np.array([[1, 1, 1, 1]], np.float32))
    interp.invoke()
    first = interp.get_tensor(out)
    np.testing.assert_array_equal(first, [[2, 0, 4, 0]])  # relu(x + y)
    first[0, 0] = 100
    np.testing.assert_array_equal(interp.get_tensor(out), [[2, 0, 4, 0]])
    interp.set_tensor(y, np.array([[10, 10, 10, 10]], np.float32))
    interp.invoke()
    np.testing.assert_array_equal(first, [[100, 0, 4, 0]])  # the copy did not follow the run
    np.testing.assert_array_equal(interp.get_tensor(out), [[11, 8, 13, 6]])
    assert not np.shares_memory(interp.get_tensor(x), interp.tensor(x)())


def test_tensor_gives_views():
    interp = builtin_interpreter(add_model())
    x, y = (d["index"] for d in interp.get_input_details())
    out = interp.get_output_details()[0]["index"]
    input_x, input_y, output = interp.tensor(x), interp.tensor(y), interp.tensor(out)
    assert callable(input_x)
    input_x()[:] = [[1, 2, 3, 4]]  # writes the input in place
    input_y()[0, :] = -1
    interp.invoke()
    np.testing.assert_array_equal(output(), [[0, 1, 2, 3]])
    view = output()
    assert not view.flags.owndata and view.flags.writeable
    np.testing.assert_array_equal(interp.get_tensor(x), [[1, 2, 3, 4]])
    # A live view would see memory the next run may move: invoke refuses, as tf.lite does.
    with pytest.raises(RuntimeError, match="tensor\\(\\)"):
        interp.invoke()
    with pytest.raises(RuntimeError, match="tensor\\(\\)"):
        interp.allocate_tensors()
    with pytest.raises(RuntimeError, match="tensor\\(\\)"):
        interp.resize_tensor_input(x, [2, 4])
    del view
    input_y()[0, :] = 1
    interp.invoke()
    np.testing.assert_array_equal(output(), [[2, 3, 4, 5]])


def test_view_outlives_the_interpreter():
    interp = builtin_interpreter(add_model())
    x = interp.get_input_details()[0]["index"]
    interp.set_tensor(x, np.array([[5, 6, 7, 8]], np.float32))
    view = interp.tensor(x)()
    del interp
    gc.collect()
    np.testing.assert_array_equal(view, [[5, 6, 7, 8]])  # the view keeps the interpreter's memory alive


def test_constant_views_are_read_only():
    interp = builtin_interpreter(QUANT_OPS / "conv_3x3_uint8" / "model.tflite")
    weights = [d for d in interp.get_tensor_details() if d["index"] == 1][0]
    view = interp.tensor(weights["index"])()
    assert not view.flags.writeable
    np.testing.assert_array_equal(view, interp.get_tensor(weights["index"]))
    assert view.shape == tuple(weights["shape"])


def test_resize_and_allocate():
    interp = builtin_interpreter(add_model())
    x, y = (d["index"] for d in interp.get_input_details())
    interp.resize_tensor_input(x, [3, 4])
    interp.resize_tensor_input(y, np.array([3, 4], np.int64), strict=True)  # -1 in the signature: allowed
    # Until allocate_tensors the inputs have no memory of the new size, as in tf.lite.
    with pytest.raises(ValueError, match="allocate_tensors"):
        interp.set_tensor(x, np.zeros((3, 4), np.float32))
    interp.allocate_tensors()
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 6
    b = np.full((3, 4), 0.5, np.float32)
    interp.set_tensor(x, a)
    interp.set_tensor(y, b)
    interp.invoke()
    out = interp.get_output_details()[0]
    assert list(out["shape"]) == [3, 4] and list(out["shape_signature"]) == [-1, 4]
    np.testing.assert_array_equal(interp.get_tensor(out["index"]), np.maximum(a + b, 0))
    assert list(interp.get_input_details()[0]["shape"]) == [3, 4]
    with pytest.raises(ValueError, match="strict"):
        interp.resize_tensor_input(x, [3, 5], strict=True)  # 4 is not -1 in the signature
    with pytest.raises(ValueError, match="not an input"):
        interp.resize_tensor_input(out["index"], [3, 4])


def test_reset_all_variables_without_variables_is_a_no_op():
    interp = builtin_interpreter(add_model())
    x, y = (d["index"] for d in interp.get_input_details())
    interp.set_tensor(x, np.ones((1, 4), np.float32))
    interp.set_tensor(y, np.ones((1, 4), np.float32))
    interp.reset_all_variables()
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]), np.full((1, 4), 2))


def test_reset_all_variables_returns_an_int8_state_to_its_zero_point():
    # The integer LSTM's int8 output state starts at its zero point (real 0), as in TFLite: after a
    # reset the chain's first step comes out again, not the second.
    chain = QUANT_OPS.parent / "op-cases" / "lstm_i8_chain3"
    inputs, outputs = load_case(chain)
    interp = baton.Interpreter(str(QUANT_OPS.parent / "op-cases" / "lstm_i8" / "model.tflite"),
                               plugin_dirs=[BUILTIN_DIR], no_delegates=True)
    x = interp.get_input_details()[0]["index"]
    y = interp.get_output_details()[0]["index"]
    for k in range(2):
        interp.set_tensor(x, inputs[k])
        interp.invoke()
        np.testing.assert_array_equal(interp.get_tensor(y), outputs[k])
    interp.reset_all_variables()
    interp.set_tensor(x, inputs[0])
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(y), outputs[0])


def test_model_content_runs_like_model_path():
    data = (QUANT_OPS / "softmax_uint8" / "model.tflite").read_bytes()
    inputs, outputs = load_case(QUANT_OPS / "softmax_uint8")
    interp = baton.Interpreter(model_content=data, plugin_dirs=[BUILTIN_DIR], no_delegates=True)
    interp.set_tensor(interp.get_input_details()[0]["index"], inputs[0])
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]), outputs[0])
    assert interp.plan()["model"] == "<buffer>"


def test_xnnpack_delegate_through_the_keyword():
    interp = baton.Interpreter(str(add_model()), plugin_dirs=[BUILTIN_DIR, XNNPACK_DIR], delegates=["xnnpack"],
                               num_threads=1)
    plan = interp.plan()
    assert plan["nodes"][0]["placement"] == {"kind": "delegate", "plugin": "xnnpack", "partition": 0}
    x, y = (d["index"] for d in interp.get_input_details())
    interp.set_tensor(x, np.array([[1.5, -2, 3, -4]], np.float32))
    interp.set_tensor(y, np.array([[1, 1, 1, 1]], np.float32))
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]), [[2.5, 0, 4, 0]])


def test_complex64_tensors_round_trip_as_numpy_complex64():
    # complex_parts.tflite (tests/python/make_test_models.cc): x complex64 [2, 3] -> RESHAPE [3, 2], REAL,
    # IMAG, COMPLEX_ABS, all run by the builtin pack.
    interp = builtin_interpreter(MODELS_DIR / "complex_parts.tflite")
    interp.allocate_tensors()
    (x_detail,) = interp.get_input_details()
    assert x_detail["dtype"] is np.complex64
    x = np.array([[3 + 4j, -1 + 0j, 0.5 - 2j], [6 + 8j, -5 + 12j, 0j]], dtype=np.complex64)
    with pytest.raises(ValueError, match="complex64"):
        interp.set_tensor(x_detail["index"], x.astype(np.complex128))
    interp.set_tensor(x_detail["index"], x)
    interp.invoke()
    reshaped, real, imag, magnitude = (interp.get_tensor(d["index"]) for d in interp.get_output_details())
    assert reshaped.dtype == np.complex64 and reshaped.shape == (3, 2)
    np.testing.assert_array_equal(reshaped, x.reshape(3, 2))
    np.testing.assert_array_equal(real, x.real)
    np.testing.assert_array_equal(imag, x.imag)
    assert magnitude.dtype == np.float32
    np.testing.assert_allclose(magnitude, np.abs(x), rtol=1e-7)
    np.testing.assert_array_equal(interp.get_tensor(x_detail["index"]), x)

"""get_signature_runner: calls by name, resizes, runs signatures of any subgraph, and refuses what baton
cannot run."""
import numpy as np
import pytest

import baton
from conftest import BUILTIN_DIR, MODELS_DIR, REFERENCE, SOURCE_ROOT, load_case, real_model

CONTROL_FLOW = SOURCE_ROOT / "tests" / "data" / "control-flow"


def interpreter():
    return baton.Interpreter(str(MODELS_DIR / "add_signatures.tflite"), plugin_dirs=[BUILTIN_DIR], no_delegates=True)


def test_runner_computes_and_resizes():
    runner = interpreter().get_signature_runner("serving_default")
    x = np.array([[1, -2, 3, -4]], np.float32)
    y = np.array([[0.5, 0.5, 0.5, 0.5]], np.float32)
    out = runner(x=x, y=y)
    assert list(out) == ["sum"]
    np.testing.assert_array_equal(out["sum"], [[1.5, 0, 3.5, 0]])
    # Another batch size: the runner resizes the inputs, as tf.lite's does.
    x2 = np.arange(-8, 8, dtype=np.float32).reshape(4, 4)
    out = runner(y=np.ones((4, 4), np.float32), x=x2)
    np.testing.assert_array_equal(out["sum"], np.maximum(x2 + 1, 0))
    assert list(runner.get_output_details()["sum"]["shape"]) == [4, 4]


def test_runner_refusals():
    interp = interpreter()
    with pytest.raises(ValueError, match="None is only allowed"):
        interp.get_signature_runner()  # two signatures
    with pytest.raises(ValueError, match="no signature \"nope\""):
        interp.get_signature_runner("nope")
    runner = interp.get_signature_runner("serving_default")
    x = np.zeros((1, 4), np.float32)
    with pytest.raises(ValueError, match="expected 2 inputs, got 1"):
        runner(x=x)
    with pytest.raises(ValueError, match="no input \"z\""):
        runner(x=x, z=x)
    with pytest.raises(ValueError, match="\"serving_default_y:0\".*expects float32 values, got float64"):
        runner(x=x, y=np.zeros((1, 4)))


def test_dtln_signature_matches_litert():
    # model_1 (DTLN) is called through its signature "serving_default" with LiteRT's names.
    path = real_model("model_1")
    inputs, outputs = load_case(REFERENCE / "model_1")
    interp = baton.Interpreter(str(path), plugin_dirs=[BUILTIN_DIR], no_delegates=True)
    sig = interp.get_signature_list()
    assert list(sig) == ["serving_default"]
    runner = interp.get_signature_runner()
    got = runner(input_3=inputs[0], input_2=inputs[1])
    assert sorted(got) == ["activation_2", "tf.stack_2"]
    for name, want in zip(["activation_2", "tf.stack_2"], outputs):
        assert got[name].shape == want.shape
        assert np.max(np.abs(got[name] - want)) <= 1e-3 * np.max(np.abs(want))


def test_signature_of_another_subgraph():
    # "on_copy" names subgraph 1, a copy of subgraph 0: relu(x + y), in an interpreter of its own.
    interp = interpreter()
    runner = interp.get_signature_runner("on_copy")
    x = np.array([[1, -2, 3, -4]], np.float32)
    y = np.array([[0.5, 0.5, 0.5, 0.5]], np.float32)
    np.testing.assert_array_equal(runner(x=x, y=y)["sum"], [[1.5, 0, 3.5, 0]])
    np.testing.assert_array_equal(interp.get_signature_runner("serving_default")(x=x, y=y)["sum"],
                                  [[1.5, 0, 3.5, 0]])


def test_control_flow_signatures_on_subgraphs_0_and_1():
    # tests/data/control-flow/signatures: "double" runs subgraph 0 (x + x; native TFLite 2.9's output is
    # committed), "triple" subgraph 1 (x * 3, derived by hand).
    folder = CONTROL_FLOW / "signatures"
    (x,), (doubled,) = load_case(folder)
    interp = baton.Interpreter(str(folder / "model.tflite"), plugin_dirs=[BUILTIN_DIR], no_delegates=True)
    assert interp.get_signature_list() == {"double": {"inputs": ["x"], "outputs": ["y"]},
                                           "triple": {"inputs": ["x"], "outputs": ["y"]}}
    triple = interp.get_signature_runner("triple")
    assert list(triple.get_input_details()["x"]["shape"]) == [2]
    np.testing.assert_allclose(triple(x=x)["y"], x * 3, rtol=1e-6)
    np.testing.assert_allclose(interp.get_signature_runner("double")(x=x)["y"], doubled, rtol=1e-6)
    # The runner resizes its own interpreter's input: [1, 2] times the constant [3, 3].
    out = triple(x=np.array([[1, -2]], np.float32))["y"]
    assert out.shape == (1, 2)
    np.testing.assert_array_equal(out, [[3, -6]])
    assert list(triple.get_output_details()["y"]["shape"]) == [1, 2]
    # The interpreter's own inputs stay subgraph 0's.
    assert [d["shape"].tolist() for d in interp.get_input_details()] == [[2]]
    with pytest.raises(ValueError, match="expects float32 values, got float64"):
        triple(x=np.zeros(2))

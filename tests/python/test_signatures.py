"""get_signature_runner: calls by name, resizes, and refuses what baton cannot run."""
import numpy as np
import pytest

import baton
from conftest import BUILTIN_DIR, MODELS_DIR, REFERENCE, load_case, real_model


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
    # A signature of another subgraph is not run on subgraph 0.
    with pytest.raises(ValueError, match="subgraph 1; baton runs subgraph 0 only"):
        interp.get_signature_runner("on_copy")
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

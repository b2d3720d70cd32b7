"""Errors carry baton's message: ValueError for bad arguments and models, RuntimeError at run time; the
log goes to logging.getLogger("baton")."""
import logging

import numpy as np
import pytest

import baton
from conftest import BUILTIN_DIR, MODELS_DIR, QUANT_OPS, TEST_PLUGIN_DIR

ADD_UINT8 = QUANT_OPS / "add_uint8" / "model.tflite"


def interpreter(path=ADD_UINT8, **kwargs):
    return baton.Interpreter(model_path=str(path), plugin_dirs=[BUILTIN_DIR], no_delegates=True, **kwargs)


def test_set_tensor_names_the_input():
    interp = interpreter()
    x = interp.get_input_details()[0]["index"]
    with pytest.raises(ValueError, match="input 0 \"t0\" \\(tensor 0\\) expects uint8 values, got float32"):
        interp.set_tensor(x, np.zeros((2, 3, 4, 5), np.float32))
    with pytest.raises(ValueError, match="input 0 \"t0\" \\(tensor 0\\) has shape \\[2, 3, 4, 5\\], got \\[2, 3, 4\\]"):
        interp.set_tensor(x, np.zeros((2, 3, 4), np.uint8))
    with pytest.raises(ValueError, match="got int64"):
        interp.set_tensor(x, [[[[1]]]])  # a list becomes int64, as np.array makes it: no silent conversion
    with pytest.raises(ValueError, match="tensor 2 is not an input"):
        interp.set_tensor(2, np.zeros((2, 3, 4, 5), np.uint8))


def test_bad_tensor_indices():
    interp = interpreter()
    with pytest.raises(ValueError, match="tensor 99 does not exist \\(the model has 3 tensors\\)"):
        interp.get_tensor(99)
    with pytest.raises(ValueError, match="tensor -1 does not exist"):
        interp.tensor(-1)
    with pytest.raises(ValueError, match="subgraph 0 only"):
        interp.get_tensor(0, 1)


def test_bad_models():
    with pytest.raises(ValueError, match="<buffer>: not a TFLite model"):
        baton.Interpreter(model_content=b"\0" * 64, plugin_dirs=[BUILTIN_DIR])
    data = ADD_UINT8.read_bytes()
    with pytest.raises(ValueError, match="<buffer>"):
        baton.Interpreter(model_content=data[: len(data) // 2], plugin_dirs=[BUILTIN_DIR])
    with pytest.raises(ValueError, match="/no/such/model.tflite"):
        baton.Interpreter(model_path="/no/such/model.tflite", plugin_dirs=[BUILTIN_DIR])
    # A custom op no loaded pack has: the error names it.
    with pytest.raises(ValueError, match="ThrowInInvoke"):
        interpreter(MODELS_DIR / "throw_in_invoke.tflite")
    # The limits of the config work here too.
    with pytest.raises(ValueError, match="544 bytes, over the limit of 100"):
        interpreter(max_model_bytes=100)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="exactly one of model_path and model_content"):
        baton.Interpreter()
    with pytest.raises(ValueError, match="exactly one"):
        baton.Interpreter(model_path=str(ADD_UINT8), model_content=ADD_UINT8.read_bytes())
    with pytest.raises(ValueError, match="tf.lite delegate objects cannot be hosted.*delegates="):
        interpreter(experimental_delegates=[object()])
    with pytest.raises(ValueError, match="num_threads"):
        interpreter(num_threads=0)
    with pytest.raises(ValueError, match="num_threads"):
        interpreter(num_threads="2")
    config = tmp_path / "bad.conf"
    config.write_text("no-such-key = 1\n")
    with pytest.raises(ValueError, match=str(config) + ".*no-such-key"):
        interpreter(config=str(config))
    interpreter(experimental_delegates=[], num_threads=-1)  # tf.lite's defaults are accepted


def test_config_file_is_read(tmp_path):
    # The same config file as the tool's: here its delegate order and plugin folder.
    config = tmp_path / "baton.conf"
    config.write_text(f"plugin-dirs = {BUILTIN_DIR}\n")
    interp = baton.Interpreter(model_path=str(ADD_UINT8), config=str(config))
    assert interp.plugins()["plugin_dirs"][0] == BUILTIN_DIR
    assert [p["name"] for p in interp.plugins()["plugins"]] == ["builtin"]


def test_invoke_failure_is_a_runtime_error():
    # The misbehaving test pack throws out of ThrowInInvoke; no other pack takes the node.
    interp = baton.Interpreter(str(MODELS_DIR / "throw_in_invoke.tflite"), plugin_dirs=[TEST_PLUGIN_DIR],
                               no_delegates=True)
    interp.set_tensor(interp.get_input_details()[0]["index"], np.zeros(2, np.float32))
    with pytest.raises(RuntimeError, match="node 0 \\(ThrowInInvoke v1\\) in misbehaving: invoke failed"):
        interp.invoke()


def test_log_goes_to_python_logging(caplog, capfd):
    # The test plugin folder holds deliberately broken plugins: baton warns about each one it skips.
    with caplog.at_level(logging.DEBUG, logger="baton"):
        baton.Interpreter(str(MODELS_DIR / "throw_in_invoke.tflite"), plugin_dirs=[TEST_PLUGIN_DIR],
                          no_delegates=True)
    records = [r for r in caplog.records if r.name == "baton"]
    warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    assert any("no_entry" in m for m in warnings), warnings
    assert {r.levelname for r in records} <= {"DEBUG", "INFO", "WARNING", "ERROR"}
    assert "baton:" not in capfd.readouterr().err  # nothing straight to stderr

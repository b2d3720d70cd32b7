"""isolate=[...]: a plugin in a process of its own. A delegate that segfaults there costs Python nothing:
the run completes on the rest of the chain with the outputs of a run without it; a well-behaved delegate
(xnnpack) gives the same bits isolated as in process."""
import pathlib
import shutil

import numpy as np
import pytest

import baton
from conftest import BUILTIN_DIR, TEST_PLUGIN_DIR, XNNPACK_DIR, real_model


def run(path, **kwargs):
    interp = baton.Interpreter(model_path=str(path), num_threads=1, **kwargs)
    rng = np.random.default_rng(7)
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], rng.random(d["shape"], dtype=np.float32))
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def test_xnnpack_isolated_gives_the_same_bits():
    model = real_model("hand_landmark_lite")
    dirs = [XNNPACK_DIR, BUILTIN_DIR]
    in_process = run(model, plugin_dirs=dirs, delegates=["xnnpack"])
    isolated = run(model, plugin_dirs=dirs, delegates=["xnnpack"], isolate=["xnnpack"])
    for a, b in zip(in_process, isolated):
        assert np.array_equal(a, b)


def test_a_delegate_that_segfaults_in_its_process_leaves_python_running(tmp_path, caplog):
    model = real_model("hand_landmark_lite")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    shutil.copy(pathlib.Path(TEST_PLUGIN_DIR) / "libcrashdeleg.so", plugins / "libcrashdeleg.so")
    config = tmp_path / "baton.conf"
    config.write_text("[plugin.crashdeleg]\nfail = segv-invoke\n")
    without = run(model, plugin_dirs=[BUILTIN_DIR], no_delegates=True)
    with caplog.at_level("WARNING", logger="baton"):
        survived = run(model, plugin_dirs=[str(plugins), BUILTIN_DIR], delegates=["crashdeleg"], config=str(config),
                       isolate="crashdeleg")
    for a, b in zip(without, survived):
        assert np.array_equal(a, b)
    assert "isolated plugin crashdeleg failed in partition invoke: its process was killed by signal 11 (SIGSEGV)" \
        in caplog.text


def plugin_host_children():
    """The baton-plugin-host processes this process started (any of its threads may have forked them)."""
    pids = set()
    for task in pathlib.Path("/proc/self/task").iterdir():
        pids.update((task / "children").read_text().split())
    return [p for p in pids if pathlib.Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"baton-plugin-host\0")]


def test_interpreters_of_one_process_share_the_plugins_child():
    model = real_model("hand_landmark_lite")
    dirs = [XNNPACK_DIR, BUILTIN_DIR]
    before = plugin_host_children()
    first = baton.Interpreter(model_path=str(model), num_threads=1, plugin_dirs=dirs, delegates=["xnnpack"],
                              isolate=["xnnpack"])
    second = baton.Interpreter(model_path=str(model), num_threads=1, plugin_dirs=dirs, delegates=["xnnpack"],
                               isolate=["xnnpack"])
    for interp in (first, second):
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], np.ones(d["shape"], dtype=np.float32))
        interp.invoke()
    assert len(plugin_host_children()) == len(before) + 1
    assert np.array_equal(first.get_tensor(first.get_output_details()[0]["index"]),
                          second.get_tensor(second.get_output_details()[0]["index"]))


def test_control_flow_whose_shapes_change_runs_with_its_kernels_isolated():
    # tests/data/control-flow: a loop growing a variable, branches of different shapes, a growing resource
    # variable; dynamic tensors live in shared memory for the builtin pack's process. Against native
    # TFLite 2.9's outputs.
    from conftest import SOURCE_ROOT, load_case
    for name in ["while_grows", "if_shapes_then", "if_shapes_else", "variable_grows"]:
        folder = SOURCE_ROOT / "tests" / "data" / "control-flow" / name
        inputs, outputs = load_case(folder)
        interp = baton.Interpreter(str(folder / "model.tflite"), plugin_dirs=[BUILTIN_DIR], no_delegates=True,
                                   isolate=["builtin"])
        for d, x in zip(interp.get_input_details(), inputs):
            interp.set_tensor(d["index"], x)
        interp.invoke()
        for d, want in zip(interp.get_output_details(), outputs):
            got = interp.get_tensor(d["index"])
            assert got.shape == want.shape, name
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_isolating_a_plugin_that_is_not_loaded_raises():
    model = real_model("hand_landmark_lite")
    with pytest.raises(ValueError, match="isolate: no plugin named 'xnnpak' is loaded \\(loaded: builtin\\)"):
        baton.Interpreter(model_path=str(model), plugin_dirs=[BUILTIN_DIR], isolate=["xnnpak"])

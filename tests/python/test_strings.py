"""String tensors as tf.lite.Interpreter shows them: a string input takes an array of bytes or str, a
string output reads as an object array of bytes; checked against native TFLite 2.9's outputs of the
string cases (tests/data/string-cases, made by tools/make-string-cases.sh)."""
import struct

import numpy as np
import pytest

import baton
from conftest import BUILTIN_DIR, SOURCE_ROOT

CASES = SOURCE_ROOT / "tests" / "data" / "string-cases"


def unpack(data):
    """The strings of TFLite's packed buffer."""
    count = struct.unpack_from("<i", data)[0]
    offsets = struct.unpack_from(f"<{count + 1}i", data, 4)
    return [data[offsets[i]:offsets[i + 1]] for i in range(count)]


def interpreter(case):
    interp = baton.Interpreter(model_path=str(CASES / case / "model.tflite"), plugin_dirs=[BUILTIN_DIR],
                               no_delegates=True)
    interp.allocate_tensors()
    return interp


def test_skip_gram_takes_bytes_and_str_and_gives_bytes():
    interp = interpreter("skip_gram_3_skip2_all")
    sentence = unpack((CASES / "skip_gram_3_skip2_all" / "in_0.str").read_bytes())
    want = unpack((CASES / "skip_gram_3_skip2_all" / "out_0.str").read_bytes())
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    assert inp["dtype"] == np.bytes_
    for value in (np.array(sentence), np.array([s.decode() for s in sentence]), np.array(sentence, dtype=object)):
        interp.set_tensor(inp["index"], value)
        interp.invoke()
        got = interp.get_tensor(out["index"])
        assert got.dtype == object
        assert got.shape == (len(want),)
        assert list(got) == want


def test_hashtable_lookup_gives_strings_and_hits():
    interp = interpreter("hashtable_lookup_str")
    lookups = np.load(CASES / "hashtable_lookup_str" / "in_0.npy")
    interp.set_tensor(interp.get_input_details()[0]["index"], lookups)
    interp.invoke()
    outs = interp.get_output_details()
    assert list(interp.get_tensor(outs[0]["index"])) == unpack((CASES / "hashtable_lookup_str" / "out_0.str").read_bytes())
    np.testing.assert_array_equal(interp.get_tensor(outs[1]["index"]), np.load(CASES / "hashtable_lookup_str" / "out_1.npy"))


def test_hash_tables_map_words_to_ids_and_back_across_invokes_and_resizes():
    # The case's tables (tools/string-models.mjs): "the", "cat", "mat" -> 1, 2, 3 (default 0), and
    # 1, 2, 3 -> "THE", "CAT", "MAT" (default "?"). Filled by the first invoke, kept for the next ones.
    case = "hashtable_two_tables_round_trip"
    interp = interpreter(case)
    words = interp.get_input_details()[0]["index"]
    back, ids = (d["index"] for d in interp.get_output_details())
    interp.set_tensor(words, np.array(unpack((CASES / case / "in_0.str").read_bytes())))
    interp.invoke()
    assert list(interp.get_tensor(back)) == unpack((CASES / case / "out_0.str").read_bytes())
    np.testing.assert_array_equal(interp.get_tensor(ids), np.load(CASES / case / "out_1.npy"))
    interp.set_tensor(words, np.array(["mat", "dog", "the", "the"]))
    interp.invoke()
    assert list(interp.get_tensor(back)) == [b"MAT", b"?", b"THE", b"THE"]
    np.testing.assert_array_equal(interp.get_tensor(ids), np.array([3, 0, 1, 1], dtype=np.int64))
    interp.resize_tensor_input(words, [2])
    interp.allocate_tensors()
    interp.set_tensor(words, np.array([b"cat", b"x"]))
    interp.invoke()
    assert list(interp.get_tensor(back)) == [b"CAT", b"?"]
    np.testing.assert_array_equal(interp.get_tensor(ids), np.array([2, 0], dtype=np.int64))


def test_string_comparison_broadcasts_unicode():
    interp = interpreter("equal_str_broadcast")
    a, b = (d["index"] for d in interp.get_input_details())
    interp.set_tensor(a, np.array([["é", "x", ""], ["é", "y", "z"]]))
    interp.set_tensor(b, np.array(["é", "y", ""]))
    interp.invoke()
    got = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_array_equal(got, [[True, False, True], [True, True, False]])


def test_string_input_errors_name_the_input():
    interp = interpreter("equal_str_broadcast")
    a = interp.get_input_details()[0]["index"]
    with pytest.raises(ValueError, match=r"expects strings \(bytes or str\), got float32"):
        interp.set_tensor(a, np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"has shape \[2,3\], got \[3\]"):
        interp.set_tensor(a, np.array([b"a", b"b", b"c"]))
    with pytest.raises(ValueError, match="expects bytes or str items, got <class 'int'>"):
        interp.set_tensor(a, np.array([[1, 2, 3], [4, 5, 6]], dtype=object))
    with pytest.raises(RuntimeError, match="is a string tensor without a value"):
        interp.invoke()

#!/usr/bin/env bash
# make-string-cases.sh - regenerate tests/data/string-cases/: small models whose tensors hold strings
# (every op TFLite 2.9 runs on strings), with the outputs the native TensorFlow Lite 2.9 library computes.
#
# usage: tools/make-string-cases.sh       (tools/make-cases.sh string: the steps every set shares are
#                                          there)
#
# tools/string-models.mjs writes the models with their input files; tools/tflite-strings.c runs each
# with Google's prebuilt libtensorflowlite_c.so (TFLite 2.9.0, builtin kernels, 1 thread). Each case
# directory gets
#   model.tflite  in_I.str or in_I.npy  out_I.str or out_I.npy
# and out_I.second.str or .npy where a second invoke with the same inputs gives another value (state
# kept between invokes: a hash table's size before its import).
# where a .str file is a string tensor's value as TFLite's packed buffer (an int32 count, count + 1 int32
# offsets, the bytes) and a .npy file a numeric tensor's. tests/string_ops_test.cc runs every case with
# the builtin pack and compares each output byte for byte. refused/NAME holds the models TFLite refuses
# (string shapes and ops its kernels do not take), with TFLite's error in tflite_error.txt.
#
# Needs: node >= 20, flatc, gcc, bash; TFLite 2.9's C headers and library (tools/fetch-tflite-c.sh
# fetches them when missing).
exec "$(dirname "${BASH_SOURCE[0]}")/make-cases.sh" string "$@"

#!/usr/bin/env bash
# make-op-cases.sh - regenerate tests/data/op-cases/: one-op models of the builtin pack's comparison,
# logic, selection, shape, movement, reduction and math ops, with the outputs the native TensorFlow Lite
# 2.9 library computes for them, and the version range the library registers for each op.
#
# usage: tools/make-op-cases.sh       (tools/make-cases.sh op: the steps every set shares are there)
#
# tools/op-models.mjs writes the models (our own small models: each op in the types TFLite's kernel
# takes, with the options that change the result); tflite-peer runs each on the oracle's PRNG inputs
# (seed 0 unless the case picks another, narrowed by its --int-range where it has one; a few cases give
# their inputs as .npy). Each case directory gets
#   model.tflite  in_I.npy  out_I.npy  meta.json (op, types, library version; no paths or timings)
# carry.json pairs each stateful op's single-node case with its chain case (the node repeated over one
# shared state tensor), resized.json each case with computed axes or sizes whose model also runs with
# other input shapes with that case (NAME_resized: its inputs are resized, by the peer as by the test),
# litert.json lists the cases TFLite 2.9 does not run, or not as current converters mean them (int8
# FULLY_CONNECTED with per-channel weights, whose scales 2.9 does not read): LiteRT 2.5
# (../shared/reference/litert-js, or $LITERT_REF) computes their outputs from the same PRNG's inputs;
# invokes.json lists the cases whose later invokes give other outputs (the random
# ops'): tools/tflite-invokes.c runs each of those 3 times in one interpreter of the same library and
# writes out_I.invoke_K.npy for invokes 2 and 3 (invoke 1 must equal out_I.npy); versions.json lists, per
# op, the versions the library accepts (a model of each op at versions 1..16
# either loads or is refused by the op resolver), versions-litert.json the same for LiteRT 2.5
# (tools/probe-litert-versions.mjs). tests/op_cases_test.cc runs every case with the
# builtin pack (float outputs within 1e-5 of the largest reference magnitude, the rest bit for bit) and
# checks the pack declares those version ranges.
#
# Environment: TFLITE_PEER, LITERT_REF (see tools/make-cases.sh --help).
# Needs: node >= 20, flatc, gcc, bash, coreutils; TFLite 2.9's C headers and library
# (tools/fetch-tflite-c.sh fetches them when missing).
exec "$(dirname "${BASH_SOURCE[0]}")/make-cases.sh" op "$@"

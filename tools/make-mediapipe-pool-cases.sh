#!/usr/bin/env bash
# make-mediapipe-pool-cases.sh - regenerate tests/data/mediapipe-pool/: small models of MediaPipe's
# custom ops MaxPoolingWithArgmax2D and MaxUnpooling2D, with the outputs Google's LiteRT 2.5 computes.
#
# usage: tools/make-mediapipe-pool-cases.sh       (tools/make-cases.sh mediapipe-pool: the steps every
#                                                  set shares are there)
#
# tools/mediapipe-pool-models.mjs writes the models plus their inputs (.npy); the LiteRT reference
# runner (../shared/reference/litert-js, or $LITERT_REF: LiteRT.js 2.5, XNNPACK always applied, 1
# thread) runs each. Native TFLite 2.9 cannot: it registers neither op. LiteRT runs them only through
# its XNNPACK delegate, which takes stride == filter only and keeps argmax indices as uint32 bits in
# the float32 tensors, counted column by column (see tests/data/mediapipe-pool/README.md). Each case
# directory gets
#   model.tflite  in_I.npy  out_I.npy  meta.json (case, runtime and version; no paths or timings)
# tests/mediapipe_pool_test.cc runs every case with the mediapipe pack.
#
# Needs: node >= 20, flatc, bash, coreutils.
exec "$(dirname "${BASH_SOURCE[0]}")/make-cases.sh" mediapipe-pool "$@"

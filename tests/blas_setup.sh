#!/usr/bin/env bash
# blas_setup.sh: the OpenBLAS core-type fix took effect in a psring program (test_model's
# blas_setup_took_effect, run alone): SKIP where the BLAS cannot name its core or the user chose it.
. "$(dirname "$0")/common.sh"
need_prog "$TOP_BUILDDIR/tests/test_model"
exec "$TOP_BUILDDIR/tests/test_model" blas-setup

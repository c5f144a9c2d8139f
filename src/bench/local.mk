# src/bench: micro-benchmarks
bin_PROGRAMS += psring-bench-gemm
psring_bench_gemm_SOURCES = src/bench/gemm.c
psring_bench_gemm_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS)
psring_bench_gemm_LDADD = src/model/libmodel.a src/common/libcommon.a $(BLAS_LIBS) -lm

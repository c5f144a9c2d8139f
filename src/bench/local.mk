# src/bench: micro-benchmarks

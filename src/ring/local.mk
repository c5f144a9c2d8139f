# src/ring: ring allreduce and the ring exchange (MPI)
TOPOLOGY_LIBS =

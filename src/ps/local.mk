# src/ps: wire protocol, server, worker, the ps exchange (ZeroMQ; MPI only to start)

"""settings.py: what every scenario of psring demo runs with, the main demo (plan.py) and best
against best (best.py) alike: the steps left out of every time and the chunk sizes of the two
exchanges. One home, so that the two scenarios cannot drift apart. Runs nothing."""

WARM = 2           # steps left out of every time (--timing-skip): page faults, cold caches
PS_CHUNK_KB = 64   # PS slices: pulls overlap later pushes (one slice of pipeline fill); 32 KiB on the wire in fp16
# The ring's pipeline chunk, the same 64 KiB of parameters as a PS slice (32 KiB on the wire in
# fp16): within Open MPI's TCP eager limit (64 KiB), so a send needs no answer from a receiver that
# a CPU quota may hold up (measured against 256 KiB: docs/results/lab-notes-experiments.md)
RING_CHUNK_KB = 64

# tests: Check suites for the foundation (topologies add theirs in their own local.mk)

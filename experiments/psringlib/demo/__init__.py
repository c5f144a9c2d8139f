"""psringlib.demo: psring demo, the parameter server vs ring-allreduce trade-off as training on
emulated hosts (experiments/demo says what it does; that command is its flags alone):

  settings  what both scenarios run with: untimed steps, the ring's chunk, the PS's slice
  plan      the regime, the runs and their commands, repeats, each run's dilation
  hosts     the emulated hosts: possible here?, psring cluster, their lifecycle, link counters
  runs      the demo from plan to verdict, one run and its row, a training job, the loopback sweep
  predict   the main demo's prediction, written before its first timed run, and its check
  figures   the figures, each titled with its question, and the tables they read
  verdict   what the demo shows, in a few lines (summary.txt)
  validate  --validate: the scale model's checks
  best      --best: the regime the cost model chooses for best against best, its prediction
  bestruns  --best's clusters, commands and runs;  bestreport  its table, winners and figure"""
from ..cli import complaint

bad = complaint("demo")


def say(msg):
    print("\033[1mdemo:\033[0m " + msg, flush=True)

"""psringlib: the Python that psring's commands (experiments/: sweep, plot, summary, model, demo,
mps) and their tests share, one module per concern:

  results    the results CSV: its columns, the one reader and writer, the resume key, cell checks
  units      numbers from text: a CSV cell, a link rate
  stats      medians by configuration, the verdict's ranking, one worker's compute per step
  costmodel  the alpha-beta-gamma cost model and its calibration file
  published  the model beside published scaling results, its median error, a verdict with it
  gnuplot    every figure's drawing: data files, curves, line and bar figures, PNG + SVG
  sweepplot  psring plot's figures of a sweep
  demo       psring demo's plan, hosts, runs, figures, verdict and validation (a package)
  cli        the commands' flags: one line and exit 2 for a bad one
  paths      the commands' folder, the launcher, MNIST
  signals    clean-ups that Ctrl-C does not cut short
  mps        a private MPS daemon

A command imports it as any package (its own folder is first on sys.path); tests put experiments/
on PYTHONPATH. Python 3 standard library only."""

"""paths.py: where psring's tools find things: the folder of the commands (experiments/ in the
source tree, $(pkglibexecdir) installed; this package lies in it), the launcher, and MNIST."""
import os

COMMANDS = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# the source tree (installed: the folder above $(pkglibexecdir), which holds no data; the
# launcher then says where the data is, PSRING_DATADIR)
ROOT = os.path.dirname(COMMANDS)


def command(name):
    """The path of the psring command NAME beside this package (cluster, model, summary)."""
    return os.path.join(COMMANDS, name)


def launcher():
    """The psring launcher: PSRING_LAUNCHER (psring sets it when it starts a command), else the
    source tree's."""
    return os.environ.get("PSRING_LAUNCHER") or os.path.join(ROOT, "psring")


def data_dir():
    """psring's data folder (the published points): PSRING_DATADIR installed, else the tree's data/."""
    return os.environ.get("PSRING_DATADIR") or os.path.join(ROOT, "data")


def mnist_dir(root=ROOT):
    """The MNIST folder, found the one way every tool and test finds it (pslib.sh's
    psring_mnist_dir): $PSRING_MNIST_DIR, else ROOT/data/mnist, the source tree's (installed, told
    so by the launcher's PSRING_DATADIR: ./data/mnist, psring-train's default --data). None when
    neither holds train-images-idx3-ubyte(.gz); MNIST_MISSING is then the line to tell the user."""
    if os.environ.get("PSRING_DATADIR"):
        root = "."
    for d in (os.environ.get("PSRING_MNIST_DIR"), os.path.join(root, "data", "mnist")):
        if d and any(os.path.exists(os.path.join(d, "train-images-idx3-ubyte" + z)) for z in ("", ".gz")):
            return os.path.abspath(d)
    return None


MNIST_MISSING = "no MNIST (set PSRING_MNIST_DIR, or run experiments/get-mnist)"

"""tests/hostile_data.py: a bad MNIST folder is named in one line, exit 2, before training starts.

--data that is missing, a file missing from it or a folder in its place, a gzip cut short or with
a flipped byte, an empty file, a wrong IDX magic, trailing bytes past the header's count, and a
labels file whose count differs from its images': each one line naming the file, no traceback,
nothing left (tests/hostile.py).
"""
import gzip
import os
import shutil
import unittest

import common
from hostile import hostile_case

SMALL = ["--layers", "784,32,10", "--train-limit", "512", "--test-limit", "256", "--steps", "2", "--quiet"]
RING = ["-np", "2", "--topology", "ring"]
LABELS = "train-labels-idx1-ubyte.gz"


class Data(unittest.TestCase):
    def folder(self):
        """a copy of this tree's MNIST (the gzipped files) to spoil"""
        src = common.need_mnist()
        d = os.path.join(common.scratch(), "mnist")
        os.mkdir(d)
        for n in os.listdir(src):
            if n.endswith(".gz"):
                shutil.copy(os.path.join(src, n), d)
        return d

    def refused(self, d, want, topo=RING):
        hostile_case(self, [common.PSRING, "train", "--data", d] + topo + SMALL, 2, want=want, timeout=60)

    def spoil(self, name, data):
        d = self.folder()
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        return d

    def labels(self):
        with gzip.open(os.path.join(common.need_mnist(), LABELS)) as f:
            return f.read()

    def test_no_folder(self):
        self.refused(os.path.join(common.scratch(), "nodir"), r"^psring-train: --data .*nodir: no such directory ")

    def test_file_missing(self):
        d = self.folder()
        os.remove(os.path.join(d, LABELS))
        self.refused(d, r"^psring-train: no train-labels-idx1-ubyte\[\.gz\] in .*mnist$")

    def test_folder_for_file_ring(self):
        d = self.folder()
        os.remove(os.path.join(d, "t10k-images-idx3-ubyte.gz"))
        os.mkdir(os.path.join(d, "t10k-images-idx3-ubyte.gz"))
        self.refused(d, r"^psring-train: .*/t10k-images-idx3-ubyte\.gz: not a regular file$")

    def test_folder_for_file_local(self):
        d = self.folder()
        os.remove(os.path.join(d, LABELS))
        os.mkdir(os.path.join(d, LABELS))
        self.refused(d, r"^psring: .*/train-labels-idx1-ubyte\.gz: not a regular file$", ["--topology", "local"])

    def test_gzip_cut_short(self):
        with open(os.path.join(common.need_mnist(), LABELS), "rb") as f:
            head = f.read(5000)
        self.refused(self.spoil(LABELS, head), r"^psring-train: .*/%s: gzip decompression failed: " % LABELS)

    def test_gzip_byte_flipped_ps(self):
        name = "train-images-idx3-ubyte.gz"
        with open(os.path.join(common.need_mnist(), name), "rb") as f:
            b = bytearray(f.read())
        b[len(b) // 2] ^= 0xff
        self.refused(self.spoil(name, bytes(b)), r"^psring-train: .*/%s: gzip decompression failed: " % name,
                     ["-np", "3", "--topology", "ps"])

    def test_empty_file(self):
        self.refused(self.spoil("t10k-labels-idx1-ubyte.gz", b""),
                     r"^psring-train: .*: truncated: 0 bytes, shorter than the 8-byte IDX labels header$")

    def test_wrong_magic(self):
        b = self.labels()
        self.refused(self.spoil(LABELS, gzip.compress(b"\x00\x00\x08\x02" + b[4:])),
                     r"^psring-train: .*: bad magic 0x00000802, expected 0x00000801 \(IDX labels\)$")

    def test_count_below_contents(self):
        b = self.labels()
        self.refused(self.spoil(LABELS, gzip.compress(b[:4] + (10000).to_bytes(4, "big") + b[8:])),
                     r"^psring-train: .*: at least \d+ trailing bytes after the 10008 the header promises$")

    def test_labels_of_test_set(self):
        with open(os.path.join(common.need_mnist(), "t10k-labels-idx1-ubyte.gz"), "rb") as f:
            test_labels = f.read()
        self.refused(self.spoil(LABELS, test_labels),
                     r"^psring-train: .*%s: 10000 labels, but .* has 60000 images$" % LABELS)


if __name__ == "__main__":
    common.main()

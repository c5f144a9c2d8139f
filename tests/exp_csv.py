"""exp_csv.py: the results CSV round trip. Python's writer (psringlib.results) and reader agree on
fields with commas, quotes and newlines; the trainer's C writer (metrics.c) is read back by the same
reader with the quoted layers field intact; a file with another header is refused by both; no script
or test reads a CSV beside psringlib's reader."""
import os
import re
import unittest

import common
from psringlib import results, stats

COLS = ["a", "b", "c"]
ROWS = [{"a": "784,512,10", "b": 'say "hi"', "c": "two\nlines"}, {"a": "", "b": "plain", "c": ",\"\","}]


class RoundTrip(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(common.scratch(), "x.csv")

    def write(self, text):
        with open(self.path, "w") as f:
            f.write(text)

    def refused(self, call, want):
        with self.assertRaises(results.CsvError) as e:
            call()
        self.assertIn(want, str(e.exception))

    def append_all(self):
        for r in ROWS:
            results.append_row(self.path, COLS, r)

    def test_fields_with_commas_quotes_newlines(self):
        self.append_all()
        self.assertEqual(results.read_rows(self.path), ROWS)

    def test_other_header_refused(self):
        self.append_all()
        self.refused(lambda: results.append_row(self.path, ["a", "b"], {"a": 1}), "different header")

    def test_row_with_too_many_fields_refused(self):
        self.append_all()
        with open(self.path, "a") as f:
            f.write("1,2,3,4\n")
        self.refused(lambda: results.read_rows(self.path), "4 fields")

    # a write cut off: a line with too few fields is refused, and so is appending to a file whose last
    # line has no newline (the new row would join it and vanish into its last field)
    def test_row_with_too_few_fields_refused(self):
        self.write("a,b,c\n1,2,3\n4,5\n")
        self.refused(lambda: results.read_rows(self.path), "2 fields, the header has 3")

    def test_line_cut_inside_quote_refused(self):
        self.write('a,b,c\n1,2,"cut')
        self.refused(lambda: results.read_rows(self.path), "not a CSV")

    def test_append_to_cut_off_line_refused(self):
        self.write('a,b,c\n1,2,"cut')
        self.refused(lambda: results.append_row(self.path, COLS, ROWS[0]), "cut off")

    # a spreadsheet's byte-order mark is not part of the first column's name, and a row goes after it
    def test_byte_order_mark_read(self):
        with open(self.path, "w", encoding="utf-8-sig") as f:
            f.write("a,b,c\n1,2,3\n")
        self.assertEqual(results.read_rows(self.path), [{"a": "1", "b": "2", "c": "3"}])

    def test_byte_order_mark_append(self):
        with open(self.path, "w", encoding="utf-8-sig") as f:
            f.write("a,b,c\n1,2,3\n")
        results.append_row(self.path, COLS, {"a": "4", "b": "5", "c": "6"})
        self.assertEqual([r["a"] for r in results.read_rows(self.path)], ["1", "4"])


class TrainerCsv(unittest.TestCase):
    """the trainer's C writer read back by the same reader"""

    @classmethod
    def setUpClass(cls):
        data = common.need_mnist()
        assert os.access(common.TRAIN, os.X_OK), "no " + common.TRAIN
        cls.csv = os.path.join(common.scratch(), "t.csv")
        rc, out, err = common.run([common.TRAIN, "--data", data, "--train-limit", "256", "--steps", "2", "--test-limit", "100",
                                   "--layers", "784,32,10", "--quiet", "--csv", cls.csv])
        assert rc == 0, "trainer run failed (%d): %s%s" % (rc, out, err)
        cls.rows = results.read_rows(cls.csv)

    def test_one_row(self):
        self.assertEqual(len(self.rows), 1)

    def test_quoted_layers_intact(self):
        self.assertEqual(self.rows[0]["layers"], "784,32,10")

    def test_steps(self):
        self.assertEqual(self.rows[0]["steps"], "2")

    def test_config_label(self):
        self.assertEqual(stats.config_label(self.rows[0]), "local")


class OneReader(unittest.TestCase):
    # every command, tool and test reads CSVs through psringlib's results.read_rows, so a byte-order mark, a
    # cut-off last line or a row of the wrong width is handled once (psringlib/results.py holds the only one)
    def test_no_other_dict_reader(self):
        pattern = re.compile(r"csv[.]DictReader")
        readers = []
        for folder in ("experiments", "tools", "tests"):
            for dirpath, _, files in os.walk(os.path.join(common.TOP_SRCDIR, folder)):
                for name in files:
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, common.TOP_SRCDIR)
                    if name.endswith((".log", ".trs")) or rel == os.path.join("experiments", "psringlib", "results.py"):
                        continue
                    with open(path, "rb") as f:
                        if pattern.search(f.read().decode("utf-8", "replace")):
                            readers.append(rel)
        self.assertEqual(readers, [], "a CSV read beside psringlib's reader")


if __name__ == "__main__":
    common.main()

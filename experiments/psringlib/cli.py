"""cli.py: how psring's Python commands take their flags and refuse bad ones. complaint(cmd) is a
command's one-line refusal ('psring CMD: msg' on stderr, exit 2); Parser is argparse with that
refusal instead of argparse's usage and error lines, and the command's own help text."""
import argparse
import re
import sys


def complaint(prog):
    """Each command's bad(msg, code=2): 'psring PROG: msg', one line on stderr, and exit code."""
    def bad(msg, code=2):
        print("psring %s: %s" % (prog, msg), file=sys.stderr)
        sys.exit(code)
    return bad


class _Help(argparse.Action):
    """-h/--help: the command's help text, written as it is, and exit 0."""

    def __init__(self, option_strings, dest, text, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)
        self.text = text

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(self.text)
        sys.stdout.flush()
        parser.exit(0)


class Parser(argparse.ArgumentParser):
    """argparse for the command 'psring CMD': a bad flag is one line, 'psring CMD: ...', and exit
    2 (argparse's own error() prints a usage line and then the error). help_text: what -h and
    --help print, exactly (the command's docstring, say); None: argparse's generated help.
    unknown: the refusal of a word no flag takes, with %s for the word ('unknown option '%s' (see
    psring CMD --help)' unless given); then a flag without its value says '--flag needs a value'.
    unknown=None keeps argparse's own wording of both ('unrecognized arguments: ...'). Flags are
    whole words (no --top for --topology, as the launcher takes them) unless allow_abbrev=True
    (the commands that took abbreviations before this parser: model, bench-vs-pytorch-cuda)."""

    def __init__(self, cmd, help_text=None, unknown="", **kw):
        kw.setdefault("allow_abbrev", False)
        super().__init__(prog="psring " + cmd, add_help=help_text is None, **kw)
        self.bad = complaint(cmd)
        self.unknown = "unknown option '%%s' (see psring %s --help)" % cmd if unknown == "" else unknown
        self.argv = []
        if help_text is not None:
            self.add_argument("-h", "--help", action=_Help, text=help_text)

    def error(self, message):
        if self.unknown is not None:
            m = re.match(r"argument (\S+): expected one argument$", message)
            if m:   # the flag as it was typed: -o or --out
                names = m.group(1).split("/")
                typed = [a.split("=", 1)[0] for a in self.argv if a.split("=", 1)[0] in names]
                message = "%s needs a value" % (typed[-1] if typed else names[-1])
        self.bad(message)

    def parse(self, argv):
        """The flags of argv (a namespace), options and positional words in any order; a word no
        flag takes: refused with unknown (one line, exit 2)."""
        self.argv = list(argv)
        a, rest = self.parse_known_intermixed_args(self.argv)
        if rest:
            self.error(self.unknown % rest[0] if self.unknown is not None else "unrecognized arguments: %s" % " ".join(rest))
        return a


def split_at_dashes(argv):
    """(argv before the first '--', the words after it; None when there is no '--')."""
    if "--" not in argv:
        return list(argv), None
    i = argv.index("--")
    return argv[:i], argv[i + 1:]

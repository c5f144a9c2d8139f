"""gnuplot.py: every figure of psring (psring plot's, the cost model's, the demo's) is drawn here:
data files with quoted labels, the clauses of a plot command, line and stacked-bar figures, and
gnuplot run twice on each (PNG via pngcairo, and SVG). It computes no series."""
import os
import shutil
import subprocess


def q(s):
    """s as a gnuplot string literal: '...' with a quote inside doubled."""
    return "'" + str(s).replace("'", "''") + "'"


class PlotError(Exception):
    pass


def data_cell(v):
    """One cell of a gnuplot data file: a number as %g; text in double quotes, which gnuplot keeps
    whole (it splits a data line at blanks, and single quotes are no quotes to it in a data file)."""
    if isinstance(v, str):
        return '"%s"' % v.replace('"', "'")
    return "%d" % v if isinstance(v, int) else "%g" % v


def data_file(folder, name, rows):
    """Writes rows (tuples of cells) as folder/name, one line each, and returns name: figures
    name their data relative to folder, where gnuplot runs, so no path of the user's is in them."""
    with open(os.path.join(folder, name), "w") as f:
        f.write("".join(" ".join(data_cell(c) for c in row) + "\n" for row in rows))
    return name


def curve(title, color, data=None, using="1:2", style="lines", expr=None, dt=1, pt=7, lw=2):
    """One clause of a plot command: columns USING of the data file DATA, or the expression EXPR
    (x * 100: an ideal line; 4.2: a level; NaN: a key entry alone), drawn as STYLE (lines,
    linespoints, points, yerrorlines: median with min-max from columns 3 and 4, yerrorbars: the
    same without a line, labels: column 3's text above the point, band: the area between the two
    columns of USING's 2nd and 3rd, shaded see-through under the lines). An empty TITLE: no key entry."""
    src = expr if expr is not None else "%s using %s" % (q(data), using)
    look = {"lines": "with lines", "linespoints": "with linespoints pt %d" % pt, "yerrorlines": "with yerrorlines pt %d" % pt,
            "yerrorbars": "with yerrorbars pt %d ps 1.2" % pt, "points": "with points pt %d ps 1.2" % pt,
            "labels": "with labels offset char 0,1 font ',9'", "band": "with filledcurves fs transparent solid 0.15 noborder"}[style]
    if style == "labels":
        return "%s %s tc rgb '%s' title %s" % (src, look, color, q(title))
    return "%s %s lw %g dt %d lc rgb '%s' title %s" % (src, look, lw, dt, color, q(title))


def enhanced_text(s):
    """s with the characters gnuplot's enhanced text mode reads as markup (^ _ @ & ~ { }) escaped."""
    return "".join("\\" + c if c in "^_@&~{}" else c for c in str(s))


def title_line(title, subtitle=None):
    """set title; SUBTITLE (a line, or a list of lines: the regime the runs were made in) under it
    in a smaller font, so that neither runs off the edges."""
    subs = [subtitle] if isinstance(subtitle, str) else list(subtitle or [])
    text = " . ".join([q(title)] + ['"\\n" . %s' % q("{/=9 %s}" % enhanced_text(l)) for l in subs])
    return "set title %s" % text


def lines_figure(title, ylabel, curves, xlabel="workers N (one host each)", xtics=None, xrange=None, yrange="[0:*]",
                 key="top left", subtitle=None):
    """A figure of curves against x (workers, server hosts, time): the gnuplot lines after the
    terminal, the curves drawn in their order (the last on top). xtics: the x values to label,
    each a number or (its label, x); xrange (lo, hi), hi None for gnuplot's choice."""
    body = [title_line(title, subtitle), "set grid", "set key %s box opaque" % key, "set border lw 1.2",
            "set xlabel %s" % q(xlabel), "set ylabel %s" % q(ylabel)]
    if xtics:
        body.append("set xtics (%s)" % ", ".join("%s %g" % ((q(x[0]), x[1]) if isinstance(x, tuple) else (q("%g" % x), x))
                                                 for x in xtics))
    if xrange:
        body.append("set xrange [%g:%s]" % (xrange[0], "*" if xrange[1] is None else "%g" % xrange[1]))
    if yrange:
        body.append("set yrange %s" % yrange)
    return body + ["plot " + ", \\\n  ".join(curves)]


def bars_figure(title, ylabel, data, parts, rotate=False, subtitle=None, total=None, key="top left"):
    """Stacked bars, one per line of the data file DATA: its first column the bar's label (double
    quoted: data_file), then one value per part (title, color), bottom to top. total (a title, the
    column of the whole bar's median): its min-max from the next two columns, as error bars."""
    clauses = ["%s using 2:xtic(1) title %s lc rgb '%s'" % (q(data), q(parts[0][0]), parts[0][1])]
    clauses += ["'' using %d title %s lc rgb '%s'" % (i + 2, q(t), c) for i, (t, c) in enumerate(parts) if i]
    if total:
        clauses.append("'' using 0:%d:%d:%d with yerrorbars pt 0 lw 1.5 lc rgb '#000000' title %s"
                       % (total[1], total[1] + 1, total[1] + 2, q(total[0])))
    return [title_line(title, subtitle), "set ylabel %s" % q(ylabel), "set style data histograms",
            "set style histogram rowstacked", "set style fill solid 0.85 border -1", "set boxwidth %g" % (0.75 if rotate else 0.6),
            "set key %s box opaque" % key, "set grid ytics", "set yrange [0:*]"] + \
        (["set xtics rotate by -40 left font ',9'", "set bmargin 7"] if rotate else []) + ["plot " + ", ".join(clauses)]


def draw(out, folder, name, body, size=(1000, 650)):
    """out/NAME.png and out/NAME.svg from the figure BODY (lines_figure, bars_figure), by gnuplot
    running in folder (where the data files are, and the scripts are left: NAME.png.gp); PlotError
    saying why when gnuplot is missing or fails (no empty figure is left that looks made)."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        raise PlotError("gnuplot not found: install gnuplot-nox (./quickstart does)")
    font = "font 'DejaVu Sans,11' enhanced"
    for term, ext in (("pngcairo size %d,%d %s" % (size + (font,)), "png"),
                      ("svg size %d,%d %s background '#ffffff'" % (size + (font,)), "svg")):
        target = os.path.abspath(os.path.join(out, "%s.%s" % (name, ext)))
        sp = "%s.%s.gp" % (name, ext)
        with open(os.path.join(folder, sp), "w") as f:
            f.write("\n".join(["set terminal " + term, "set output " + q(target)] + body + ["unset output"]) + "\n")
        r = subprocess.run([gnuplot, sp], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder)
        if r.returncode != 0 or not os.path.exists(target) or os.path.getsize(target) == 0:
            if os.path.exists(target):
                os.remove(target)
            raise PlotError("gnuplot failed on %s: %s" % (os.path.join(folder, sp), r.stderr.strip()[-400:]))



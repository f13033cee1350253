"""Pictures for people: the card's roofline with the workload's points, and the batched-decode
curve. Drawn with matplotlib, imported only when a plot is asked for."""

import io
import warnings

from flask import Blueprint, Response

from ..limits import PLOT_COST, charge, heavy
from ..sizing import questions as domain
from . import problem_messages as P
from . import schemas as s
from .cache import cached
from .operations import asked, operation

bp = Blueprint("plots", __name__)
SVG_MIME = "image/svg+xml"


def _throughput():
    args = asked()
    charge(PLOT_COST, P.COST_OF_PLOT())
    return domain.throughput(args["model"], args["workload"], args["hardware"])


def figure(size: tuple[float, float] = (7, 4.5)):
    """A figure to draw on. The object-oriented API: no pyplot state shared between threads or
    requests. SVG text stays text (svg.fonttype none), set once for the process: the reader's
    browser draws it with its own fonts, Chinese included, where this machine may have none."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    matplotlib.rcParams["svg.fonttype"] = "none"
    out = Figure(figsize=size, layout="constrained")
    FigureCanvasSVG(out)
    return out


def plain(text: str) -> str:
    """A name drawn as it is written: `$` would start matplotlib's mathtext."""
    return text.replace("$", r"\$")


def svg_bytes(drawn) -> bytes:
    """The figure as SVG. Text is laid out with matplotlib's own font, which lacks CJK glyphs:
    the browser draws them, so that warning says nothing here."""
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font", category=UserWarning)
        drawn.savefig(out, format="svg")
    return out.getvalue()


def _svg(drawn) -> Response:
    return Response(svg_bytes(drawn), mimetype=SVG_MIME)


@bp.get("/plots/roofline.svg")
@cached
@heavy("plot")
@operation(
    operation_id="plotRoofline",
    summary="The card's roofline with the workload's prefill and decode points",
    media=("image/svg+xml",),
    answer_description="The picture.",
    query=s._EstimateQuerySchema)
def roofline():
    """Use to show why decode is memory-bound. An SVG picture of attainable TFLOP/s against arithmetic
    intensity in FLOP/byte, from the same flat parameters as GET /estimate."""
    result = _throughput()
    t = result.throughput
    peak, bandwidth = t.peak_flops_per_s / 1e12, t.bandwidth_bytes_per_s / 1e12
    fig = figure()
    axes = fig.add_subplot()
    intensities = [10 ** (k / 20) for k in range(-40, 101)]  # 0.01 to 100,000 FLOP/byte
    axes.loglog(intensities, [min(peak, bandwidth * x) for x in intensities], color="black",
                label=f"{t.cards} x {plain(result.card.id)}: {peak:,.0f} TFLOP/s, {bandwidth:,.2f} TB/s")
    axes.axvline(t.ridge_flops_per_byte, color="grey", linestyle=":",
                 label=f"ridge {t.ridge_flops_per_byte:,.0f} FLOP/byte")
    decode_x = t.arithmetic_intensity_flops_per_byte
    prefill_x = t.prefill_flops / t.weights_read_bytes_per_step
    for name, x, colour in (("decode", decode_x, "tab:blue"), ("prefill", prefill_x, "tab:orange")):
        axes.scatter([x], [min(peak, bandwidth * x)], color=colour, zorder=3,
                     label=f"{name}: {x:,.1f} FLOP/byte")
    axes.set_xlabel("arithmetic intensity (FLOP/byte)")
    axes.set_ylabel("attainable (TFLOP/s)")
    axes.set_title(f"Roofline: {plain(result.model.name)}, {result.workload.precision.name}, "
                   f"batch {t.batch_size}")
    axes.legend(loc="lower right", fontsize="small")
    axes.grid(True, which="both", alpha=0.3)
    return _svg(fig)


@bp.get("/plots/throughput.svg")
@cached
@heavy("plot")
@operation(
    operation_id="plotThroughput",
    summary="Tokens/s per stream and in total against batch size",
    media=("image/svg+xml",),
    answer_description="The picture.",
    query=s._EstimateQuerySchema)
def throughput():
    """Use to show the batching trade-off. An SVG picture of tokens/s per stream and in total against
    batch size, from the same flat parameters as GET /estimate."""
    result = _throughput()
    curve = result.throughput.decode_curve
    fig = figure()
    axes = fig.add_subplot()
    batches = [p.batch_size for p in curve]
    axes.plot(batches, [p.total_tokens_per_s for p in curve], marker="o", color="tab:blue",
              label="total tokens/s (all streams)")
    axes.set_xscale("log", base=2)
    axes.set_xlabel("batch size (concurrent streams)")
    axes.set_ylabel("total tokens/s", color="tab:blue")
    per_stream = axes.twinx()
    per_stream.plot(batches, [p.decode_tokens_per_s for p in curve], marker="s", color="tab:red",
                    label="tokens/s per stream")
    per_stream.set_ylabel("tokens/s per stream", color="tab:red")
    axes.set_title(f"Batched decode: {plain(result.model.name)} on {result.throughput.cards} x "
                   f"{plain(result.card.id)} ({result.workload.precision.name})")
    lines = axes.get_legend_handles_labels()[0] + per_stream.get_legend_handles_labels()[0]
    axes.legend(lines, [line.get_label() for line in lines], loc="center right", fontsize="small")
    axes.grid(True, alpha=0.3)
    return _svg(fig)

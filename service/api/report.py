"""The purchase comparison as a page a committee prints: the question, the assumptions, the
options table, cumulative cost over the years (buy and rent) and speed against cost, and the
warnings, in English or Chinese.

The page is self-contained (no script, no link out): its charts are matplotlib SVGs embedded as
data: images, which a browser never runs scripts in. Every string a caller supplied (a model's
name, a card's) is escaped by the template engine (Jinja's autoescape).
"""

import base64
from functools import lru_cache

from jinja2 import Environment, PackageLoader, select_autoescape

from ..sizing import compare as domain
from .plots import figure, plain, svg_bytes

HTML_MIME = "text/html"

WORDS = {
    "en": {
        "title": "Purchase comparison", "question": "The question", "model": "Model",
        "load": "Load", "serving": "{users} users at once, {speed} tokens/s each",
        "ttft": "first token within {ttft} s",
        "any": "any", "training": "{mode} on {tokens} tokens", "deadline": "within {days} days",
        "horizon": "Horizon", "years": "{years} years", "currency": "Currency", "rank_by": "Ranked by",
        "assumptions": "Assumptions", "name": "Name", "value": "Value", "note": "Note",
        "options": "Options", "rank": "#", "option": "Option", "meets": "Meets the target",
        "yes": "yes", "no": "no", "machines": "Machines", "plan": "Plan",
        "speed_serving": "Tokens/s per user", "speed_training": "Days", "power": "Power (kW)",
        "electricity": "Electricity / year", "capital": "Capital (range)",
        "ownership": "Cost of ownership (range)", "per_unit_serving": "Per million tokens",
        "per_unit_training": "Per run", "rent": "Rent for the same work", "break_even": "Break-even (months)",
        "rent_below": "Renting cheaper below", "no_price": "no price", "never": "never",
        "unbeaten": "not beaten on cost and speed", "why": "Why",
        "low_end": "; at the slow ends of the speed ranges (published runs of this kind) it takes {cards} cards",
        "cost_chart": "Cumulative cost over the years: buying (solid) and renting (dashed)",
        "speed_chart": "Speed against cost (stars: not beaten on both)", "months": "months",
        "cumulative": "cumulative cost", "buy": "buy", "rent_short": "rent",
        "cost_axis_serving": "cost of ownership", "cost_axis_training": "cost per run",
        "speed_axis_serving": "tokens/s per user", "speed_axis_training": "days per run (lower is faster)",
        "no_data": "no priced option to draw", "warnings": "Warnings", "all": "All options",
        "summary": "Summary", "source": "Sizing service: POST /compare",
    },
    "zh": {
        "title": "采购方案比较", "question": "问题", "model": "模型",
        "load": "负载", "serving": "同时 {users} 位用户，每人 {speed} token/s", "ttft": "首 token {ttft} 秒内",
        "any": "不限", "training": "{mode}，{tokens} token", "deadline": "{days} 天内完成",
        "horizon": "年限", "years": "{years} 年", "currency": "币种", "rank_by": "排序依据",
        "assumptions": "假设", "name": "名称", "value": "取值", "note": "说明",
        "options": "方案", "rank": "#", "option": "方案", "meets": "达标",
        "yes": "是", "no": "否", "machines": "机器", "plan": "并行方案",
        "speed_serving": "每用户 token/s", "speed_training": "天数", "power": "功耗 (kW)",
        "electricity": "每年电费", "capital": "资本支出（区间）",
        "ownership": "拥有成本（区间）", "per_unit_serving": "每百万 token", "per_unit_training": "每次训练",
        "rent": "租用同样工作量", "break_even": "回本（月）", "rent_below": "利用率低于此值租更便宜",
        "no_price": "无价格", "never": "不会", "unbeaten": "成本与速度都未被超越", "why": "原因",
        "low_end": "；若速度落在区间的慢端（同类公开实测），需要 {cards} 张卡",
        "cost_chart": "多年累计成本：购买（实线）与租用（虚线）",
        "speed_chart": "速度与成本（星号：两项都未被超越）", "months": "月",
        "cumulative": "累计成本", "buy": "买", "rent_short": "租",
        "cost_axis_serving": "拥有成本", "cost_axis_training": "每次训练成本",
        "speed_axis_serving": "每用户 token/s", "speed_axis_training": "每次训练天数（越低越快）",
        "no_data": "没有带价格的方案可画", "warnings": "警告", "all": "所有方案",
        "summary": "结论", "source": "选型服务：POST /compare",
    },
}
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
           "tab:gray", "tab:olive", "tab:cyan")
CHART_POINTS = 61  # monthly-or-finer steps over the horizon


@lru_cache(maxsize=1)
def _templates() -> Environment:
    return Environment(loader=PackageLoader("service.api", "templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True))


def report_page(result: domain.CompareResult, answer: dict, hours_per_day: float) -> str:
    """The comparison as one printable HTML page; `answer` is the JSON answer (rounded figures),
    `hours_per_day` the hours the machines run (what rent is paid for)."""
    words = WORDS.get(result.lang, WORDS["en"])
    training = result.target is None
    charts = {"cost": _data_uri(cost_chart(result, words, hours_per_day)),
              "speed": _data_uri(speed_chart(result, words))}
    return _templates().get_template("compare.html").render(
        r=result, a=answer, w=words, training=training, charts=charts, load=_load(result, words))


def _load(result: domain.CompareResult, w: dict) -> str:
    t = result.target
    if t is not None:
        text = w["serving"].format(
            users=t.concurrent_users,
            speed=w["any"] if t.tokens_per_s_per_user is None else f"{t.tokens_per_s_per_user:g}")
        return text if t.ttft_s is None else text + ", " + w["ttft"].format(ttft=f"{t.ttft_s:g}")
    text = w["training"].format(mode=result.mode, tokens=f"{result.train_tokens or 0:.3g}")
    if result.deadline_days is not None:
        text += ", " + w["deadline"].format(days=f"{result.deadline_days:g}")
    return text


def _data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def cost_chart(result: domain.CompareResult, w: dict, hours: float) -> bytes:
    """Cumulative cost by month: each option that meets the target (every option when none
    does) bought (capital, then operating cost) and rented."""
    fig = figure((8, 4.8))
    axes = fig.add_subplot()
    months = [result.years * 12 * k / (CHART_POINTS - 1) for k in range(CHART_POINTS)]
    drawn = 0
    shown = [o for o in result.options if o.meets_target] or list(result.options)
    for i, option in enumerate(o for o in shown if o.cards is not None):
        colour = COLOURS[i % len(COLOURS)]
        points = [domain.cumulative_cost(option, result.years, hours, m) for m in months]
        if points[0][0] is not None:
            axes.plot(months, [own for own, _ in points], color=colour, label=f"{plain(option.label)} {w['buy']}")
            drawn += 1
        if points[0][1] is not None:
            axes.plot(months, [rent for _, rent in points], color=colour, linestyle="--",
                      label=f"{plain(option.label)} {w['rent_short']}")
            drawn += 1
    _no_data(axes, drawn, w)
    _thousands(axes.yaxis)
    axes.set_xlabel(w["months"])
    axes.set_ylabel(f"{w['cumulative']} ({result.currency})")
    axes.grid(True, alpha=0.3)
    if drawn:
        axes.legend(fontsize="small", loc="upper left")
    return svg_bytes(fig)


def speed_chart(result: domain.CompareResult, w: dict) -> bytes:
    """Each option that meets the target: its cost against its speed (training: days per run)."""
    training = result.target is None
    fig = figure((8, 4.8))
    axes = fig.add_subplot()
    drawn = 0
    for i, option in enumerate(result.options):
        cost = domain.judged_cost(option, training)
        speed = option.time_s / 86_400 if training and option.time_s else option.tokens_per_s_per_user
        if not option.meets_target or cost is None or speed is None:
            continue
        axes.scatter([cost], [speed], color=COLOURS[i % len(COLOURS)], s=140 if option.pareto_optimal else 50,
                     marker="*" if option.pareto_optimal else "o", zorder=3)
        axes.annotate(plain(option.label), (cost, speed), textcoords="offset points", xytext=(6, 6), fontsize="small")
        drawn += 1
    _no_data(axes, drawn, w)
    _thousands(axes.xaxis)
    axes.margins(0.15)
    kind = "training" if training else "serving"
    axes.set_xlabel(f"{w['cost_axis_' + kind]} ({result.currency})")
    axes.set_ylabel(w["speed_axis_" + kind])
    axes.grid(True, alpha=0.3)
    return svg_bytes(fig)


def _thousands(axis) -> None:
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))


def _no_data(axes, drawn: int, w: dict) -> None:
    if not drawn:
        axes.text(0.5, 0.5, w["no_data"], ha="center", va="center", transform=axes.transAxes)

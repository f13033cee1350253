"""The shapes of the plain text zh_rules.py translates (numbers, card ids, plan terms) and the
rules for a plan's description (plan.py Parallelism.describe(), "tensor 4 x pipeline 3", "one
card"), which coded messages carry as a parameter."""

N = r"[\d,.]+"  # a number as the domain prints it: 1,000 / 53.9
CARD = r"[^\s:;()]+"  # a card id: h100-sxm, C70, D-S, custom
KIND = r"(?:tensor|pipeline|attention data-parallel|expert|data|replicas)"
TERM = rf"{KIND} \d+"  # one term of a plan's description
_SPREAD = r"(?:, experts spread over \d+ cards \(expert \d+\))?"  # expert parallelism over them
PLAN = rf"(?:one card|{TERM}(?: x {TERM})*){_SPREAD}"  # a whole description

PLAN_RULES: tuple[tuple[str, str], ...] = (
    (rf"(?P<t_p>(?:one card|{TERM}(?: x {TERM})*)), experts spread over (?P<w>\d+) cards \(expert (?P<e>\d+)\)",
     "{t_p}，路由专家分布在 {w} 张卡上（专家并行 {e}）"),
    (rf"(?P<t_a>{TERM}) x (?P<t_b>{TERM}(?: x {TERM})*)", "{t_a} × {t_b}"),
    (r"attention data-parallel (?P<n>\d+)", "注意力数据并行 {n}"),
    (r"tensor (?P<n>\d+)", "张量并行 {n}"),
    (r"pipeline (?P<n>\d+)", "流水线并行 {n}"),
    (r"expert (?P<n>\d+)", "专家并行 {n}"),
    (r"data (?P<n>\d+)", "数据并行 {n}"),
    (r"replicas (?P<n>\d+)", "副本 {n}"),
    (r"one card", "单卡"),
)

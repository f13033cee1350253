"""Chinese by rule for the text that is not yet a coded message (see zh.py): (pattern, template).

The warnings themselves are coded messages said from locale/zh.po; what stays here is text that
reaches them, or other answers, as plain English: a family name's lookup, the context's source,
recommendation and comparison reasons, the alternatives' notes. A `t_` group holds a nested
sentence translated by its own rule: a fit reason (zh_rules_notes.py), a plan's description, a
family's why. Each rule goes when its text becomes a coded message.
"""

from .zh_terms import CARD as _CARD
from .zh_terms import PLAN_RULES
from .zh_terms import N as _N

RULES: tuple[tuple[str, str], ...] = (
    # --- plan.py Parallelism.describe(): "tensor 4 x pipeline 3", "one card" (zh_terms.py)
    *PLAN_RULES,

    # --- cards.py Catalog.get: why a family name's variant was taken, and the others it may mean
    # (said inside the coded family_taken_as warning)
    (r"the (?P<module>SXM\d*(?: \d+GB)?) module of HGX servers, the variant most deployed",
     "HGX 服务器上的 {module} 模组，部署最多的版本"),
    (r"the (?P<module>SXM\d*(?: \d+GB)?) module of HGX servers, the variant most deployed in China",
     "HGX 服务器上的 {module} 模组，国内部署最多的版本"),
    # a list of card ids, "a, b, c" -> "a、b、c"
    (r"(?P<a>[a-z0-9][a-z0-9.-]*), (?P<t_rest>[a-z0-9][a-z0-9.-]*(?:, [a-z0-9][a-z0-9.-]*)*)",
     "{a}、{t_rest}"),

    # --- model.context_source, said inside the coded context_beyond_positions warning
    (r"given by the caller", "由调用方给出"),
    (rf"config max_position_embeddings (?P<n>{_N})", "config 中 max_position_embeddings 为 {n}"),
    (rf"config max_position_embeddings (?P<n>{_N}) \(rope_scaling (?P<kind>\S+) x(?P<f>\S+) "
     rf"from (?P<o>{_N})\)",
     "config 中 max_position_embeddings 为 {n}，已含 rope_scaling {kind} 对 {o} 的 {f} 倍放大"),
    (rf"rope_scaling (?P<kind>\S+) x(?P<f>\S+) from (?P<o>{_N}) positions = (?P<n>{_N})",
     "rope_scaling {kind} 把 {o} 个位置放大 {f} 倍，共 {n}"),

    # --- recommend.py _candidate, _for_target: why a tier was or was not chosen (candidates[].reason)
    (rf"(?P<card>{_CARD}) is an inference card: no half-precision training rate",
     "{card} 是推理卡：没有半精度训练算力"),
    (rf"on (?P<limit>{_N}) card\(s\) each needs (?P<need>{_N}) GB, (?P<usable>{_N}) GB usable; "
     r"no number of cards would hold it",
     "在 {limit} 张卡上每张需要 {need} GB，可用只有 {usable} GB；用多少张都放不下"),
    (rf"on (?P<limit>{_N}) card\(s\) each needs (?P<need>{_N}) GB, (?P<usable>{_N}) GB usable; "
     rf"(?P<n>{_N}) cards would hold it",
     "在 {limit} 张卡上每张需要 {need} GB，可用只有 {usable} GB；要 {n} 张才放得下"),
    (rf"(?P<w>{_N}) W per card exceeds the (?P<allowed>{_N}) W allowed",
     "每张卡 {w} W，超过允许的 {allowed} W"),
    (rf"(?P<n>{_N}) cards in their machines draw (?P<w>{_N}) W, over the (?P<allowed>{_N}) W allowed in all",
     "{n} 张卡连同整机功耗 {w} W，超过允许的总功耗 {allowed} W"),
    (rf"(?P<n>{_N}) cards cost (?P<total>{_N}), over the budget of (?P<budget>{_N})",
     "{n} 张卡共 {total}，超出 {budget} 的预算"),
    (rf"(?P<n>{_N}) x (?P<card>{_CARD}) hold it \((?P<need>{_N}) GB of (?P<usable>{_N}) GB usable each\); "
     rf"(?P<figure>[a-z_]+) (?P<value>{_N})",
     "{n} 张 {card} 放得下（每张用 {need} GB，可用 {usable} GB）；{figure} {value}"),
    (rf"the target needs the model split over (?P<n>{_N}) cards, and it must not be",
     "要达到目标得把模型切分到 {n} 张卡上，而约束要求不切分"),
    (rf"(?P<t_reason>.+); (?P<m>{_N}) machine\(s\), (?P<w>{_N}) W", "{t_reason}；{m} 台机器，{w} W"),

    # --- questions/estimate.py _alternatives: the note of each alternative compared (alternatives[].note)
    (rf"(?P<f>{_N}) FLOPs per parameter and token", "每个参数每个 token {f} 次浮点运算"),
    (rf"(?P<gb>{_N}) GB of weights", "权重 {gb} GB"),
    (r"does not fit on any count", "用多少张都放不下"),
    (r"does not fit", "放不下"),
    (rf"pipeline parallelism holds it on (?P<n>{_N}) cards, where the engine's tensor parallelism "
     rf"needs (?P<m>{_N})",
     "流水线并行用 {n} 张卡就放得下，而引擎的张量并行需要 {m} 张"),
    (r"one stream gains no bandwidth from the extra stages", "多出的流水线级不会给单路带来更多带宽"),

    # --- compare.py: an option's reason and warnings, the comparison's own
    (rf"the target needs (?P<n>{_N}) x (?P<card>{_CARD}) \((?P<t_why>.+)\); (?P<given>{_N}) given",
     "要达到目标需要 {n} 张 {card}（{t_why}）；只给了 {given} 张"),
    (rf"(?P<n>{_N}) cards finish in (?P<days>{_N}) days", "{n} 张卡 {days} 天完成"),
    (rf"(?P<n>{_N}) cards take (?P<days>{_N}) days; (?P<m>{_N}) meet the (?P<d>\S+)-day deadline",
     "{n} 张卡需要 {days} 天；{m} 张才能赶上 {d} 天的期限"),
)

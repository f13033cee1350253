"""Chinese for the domain's warnings and recommendation reasons (see zh.py): (pattern, template).

Each rule mirrors one English f-string of a `notes.warn(...)` (source named above it); a `t_`
group holds a nested sentence translated by its own rule: a fit reason (zh_rules_notes.py), a
plan's description, a family's why. Recommendation reasons are said in Chinese at their source
(recommend.py: reasons_zh), so no rule is needed for them.
"""

from .zh_terms import CARD as _CARD
from .zh_terms import PLAN_RULES
from .zh_terms import N as _N

_CONTEXT = rf"context of (?P<ctx>{_N}) tokens is beyond (?P<model>.+)'s (?P<pos>{_N}) positions"
_DEGRADES = (r": the model was not trained that long and its output degrades past it; the memory and speed "
             r"shown are for the length asked")
_CONTEXT_ZH = "上下文 {ctx} tokens 超出了 {model} 的 {pos} 个位置"
_DEGRADES_ZH = "：模型没有在这么长的上下文上训练过，超出部分输出质量会下降；所示显存和速度按所要求的长度计算"

RULES: tuple[tuple[str, str], ...] = (
    # --- plan.py Parallelism.describe(): "tensor 4 x pipeline 3", "one card" (zh_terms.py)
    *PLAN_RULES,

    # --- cards.py Catalog.get: a family name taken as its most deployed variant
    (r"(?P<name>'[^']*'|\"[^\"]*\") is taken as (?P<card>\S+) \((?P<t_why>.+)\); it may also mean "
     r"(?P<t_others>.+): name the card to choose",
     "{name} 按 {card} 处理（{t_why}）；它也可能指 {t_others}：请写明具体型号"),
    (r"the (?P<module>SXM\d*(?: \d+GB)?) module of HGX servers, the variant most deployed",
     "HGX 服务器上的 {module} 模组，部署最多的版本"),
    (r"the (?P<module>SXM\d*(?: \d+GB)?) module of HGX servers, the variant most deployed in China",
     "HGX 服务器上的 {module} 模组，国内部署最多的版本"),
    # a list of card ids, "a, b, c" -> "a、b、c"
    (r"(?P<a>[a-z0-9][a-z0-9.-]*), (?P<t_rest>[a-z0-9][a-z0-9.-]*(?:, [a-z0-9][a-z0-9.-]*)*)",
     "{a}、{t_rest}"),

    # --- model.py context_warning, by where the positions come from (model.context_source)
    (_CONTEXT + r" \(given by the caller\)" + _DEGRADES, _CONTEXT_ZH + "（由调用方给出）" + _DEGRADES_ZH),
    (_CONTEXT + r" \(\)" + _DEGRADES, _CONTEXT_ZH + _DEGRADES_ZH),
    (_CONTEXT + r" \((?P<t_src>.+)\)" + _DEGRADES, _CONTEXT_ZH + "（{t_src}）" + _DEGRADES_ZH),
    (rf"config max_position_embeddings (?P<n>{_N})", "config 中 max_position_embeddings 为 {n}"),
    (rf"config max_position_embeddings (?P<n>{_N}) \(rope_scaling (?P<kind>\S+) x(?P<f>\S+) "
     rf"from (?P<o>{_N})\)",
     "config 中 max_position_embeddings 为 {n}，已含 rope_scaling {kind} 对 {o} 的 {f} 倍放大"),
    (rf"rope_scaling (?P<kind>\S+) x(?P<f>\S+) from (?P<o>{_N}) positions = (?P<n>{_N})",
     "rope_scaling {kind} 把 {o} 个位置放大 {f} 倍，共 {n}"),

    # --- memory.py: parts of memory the model's figures leave out
    (r"KV cache not counted: the model gives no layers, kv_heads and head_dim "
     r"\(or hidden_size and attention_heads\); the fit and speed ignore it",
     "未计入 KV 缓存：模型没有给出 layers、kv_heads 和 head_dim（或 hidden_size 和 attention_heads）；"
     "能否放下和速度都没有算它"),
    (r"activations not counted: the model gives no layers and hidden_size; the guide adds about "
     rf"(?P<p>{_N}) % on top of model state \((?P<example>[^)]*)\)",
     "未计入激活值：模型没有给出 layers 和 hidden_size；指南的经验是在模型状态之上再加约 {p}%（{example}）"),
    (r"attention scores not counted: the model gives no attention_heads",
     "未计入注意力分数：模型没有给出 attention_heads"),

    # --- questions/placing.py _fit_warnings (the fit reason itself: zh_rules_notes.py)
    (rf"does not fit on any number of (?P<card>{_CARD}): (?P<t_reason>.+)",
     "用多少张 {card} 都放不下：{t_reason}"),
    (rf"does not fit: (?P<t_reason>.+); speed and time are shown for (?P<n>{_N}) cards",
     "放不下：{t_reason}；速度和时间按 {n} 张卡给出"),
    (rf"more than (?P<n>{_N}) cards: network topology and scheduling complexity rise steeply "
     rf"\(guide section (?P<s>{_N})\); plan the interconnect before the cards",
     "超过 {n} 张卡：网络拓扑和调度的复杂度会陡增（指南第 {s} 节）；先规划好互联，再定卡"),

    # --- questions/placing.py serving_plan_notes; placement.py _training_reasons
    (rf"the plan \((?P<t_plan>[^()]+)\) leaves (?P<idle>{_N}) of (?P<n>{_N}) cards idle: "
     r"give workload\.parallelism to use them another way",
     "方案（{t_plan}）让 {n} 张卡中的 {idle} 张闲置：可用 workload.parallelism 另行安排"),
    (rf"the plan \((?P<t_plan>[^()]+)\) leaves (?P<idle>{_N}) of (?P<n>{_N}) cards idle: "
     r"a count that is a multiple of the copy uses them all",
     "方案（{t_plan}）让 {n} 张卡中的 {idle} 张闲置：卡数取一份副本所用卡数的整数倍即可全部用上"),
    (rf"a layer split over (?P<p>{_N}) cards spans (?P<m>{_N}) machines: llama\.cpp needs its RPC "
     r"backend, and every hop between machines crosses the network",
     "按层切分到 {p} 张卡上，跨了 {m} 台机器：llama.cpp 需要用它的 RPC 后端，且每次跨机都要走网络"),
    (rf"tensor parallelism over (?P<t>{_N}) cards spans machines: every layer's all-reduces "
     r"cross the network",
     "{t} 卡张量并行跨了机器：每一层的 all-reduce 都要走网络"),

    # --- questions/placing.py _training_warnings
    (rf"the global batch grows to (?P<got>{_N}) tokens, over the (?P<asked>{_N}) asked: "
     rf"(?P<copies>{_N}) data-parallel copies of a (?P<micro>{_N})-sequence micro-batch already take "
     r"more; fewer copies \(more tensor or pipeline parallelism\) or a larger batch fit it",
     "全局批增大到 {got} tokens，超过了要求的 {asked}：{copies} 份数据并行副本、每份 {micro} 条序列的微批"
     "就已超出；减少副本数（加大张量并行或流水线并行），或把批次调大，才能对上"),
    (rf"the pipeline bubble idles the stages (?P<p>{_N})% of each step \((?P<s>{_N}) stages, "
     rf"(?P<m>{_N}) micro-batches\): a larger global batch, fewer stages, or more interleaved stages "
     rf"\(virtual_stages, now (?P<v>{_N})\) shrink it",
     "流水线气泡让各级在每步中空闲 {p}%（{s} 级，{m} 个微批）：加大全局批、减少级数，"
     "或增加交错调度的虚拟级（virtual_stages，当前 {v}）都能缩小它"),
    (rf"only (?P<p>{_N})% of each (?P<s>{_N}) s step is compute on this plan \((?P<t_plan>[^()]+)\); "
     rf"(?P<t_worst>.+) cost the most \((?P<x>{_N}) s a step\): a faster link, a larger global batch "
     r"or another plan",
     "此方案（{t_plan}）每步 {s} s 中只有 {p}% 在计算；耗时最多的是{t_worst}（每步 {x} s）："
     "换更快的互联、加大全局批或换个方案"),
    (r"tensor-parallel all-reduces", "张量并行的 all-reduce"),
    (r"expert all-to-alls", "专家并行的 all-to-all"),
    (r"the pipeline bubble", "流水线气泡"),
    (r"exposed data-parallel traffic", "未被计算掩盖的数据并行通信"),
    (rf"gradient sync \((?P<sync>{_N}) ms\) takes longer than a step's compute \((?P<step>{_N}) ms\): "
     r"the interconnect binds; a faster link or fewer, larger cards",
     "梯度同步（{sync} ms）比一步的计算（{step} ms）还长：瓶颈在互联；换更快的互联，或改用更少、更大的卡"),
    (r"a multi-day run without ECC memory: a silent memory error can make the loss diverge days in "
     rf"\(guide section (?P<s>{_N})\); checksum or use ECC cards",
     "连续多天的训练却没有 ECC 显存：一次显存静默错误就可能让 loss 在几天后发散（指南第 {s} 节）；"
     "做校验，或换带 ECC 的卡"),

    # --- questions/costs.py duty_warnings
    (r"a consumer card asked to run around the clock: it is built for a few hours a day; "
     rf"cap power at (?P<cap>{_N}) % or it throttles silently by about (?P<drop>{_N}) %, and expect "
     rf"clocks to wander (?P<lo>{_N})-(?P<hi>{_N}) % over (?P<h>{_N}) hours "
     rf"\(guide sections (?P<s1>{_N}), (?P<s2>{_N})\)",
     "要求消费级卡全天候运行：它是按每天跑几个小时设计的；把功耗墙拉低到 {cap}%，否则它会悄悄降频约 {drop}%，"
     "而且连续跑 {h} 小时频率会有 {lo}-{hi}% 的波动（指南第 {s1}、{s2} 节）"),

    # --- questions/placing.py _training_fixes: a training batch no count of the card holds
    (rf"the training batch \(micro-batch (?P<micro>{_N}) of (?P<ctx>{_N}) tokens\) does not fit on any "
     rf"number of (?P<card>{_CARD}), so no time is quoted: (?P<t_found>.+); else tensor parallelism "
     r"over more cards, a shorter context or a card with more memory",
     "训练批次（微批 {micro}，每条 {ctx} tokens）用多少张 {card} 都放不下，因此不给出训练时间：{t_found}；"
     "否则只能在更多卡上做张量并行、缩短上下文，或换显存更大的卡"),
    (rf"micro-batch (?P<micro>{_N}) with full recomputation fits on (?P<n>{_N}) x (?P<card>{_CARD})",
     "微批 {micro} 加完全重计算可放进 {n} 张 {card}"),
    (rf"micro-batch (?P<micro>{_N}) fits on (?P<n>{_N}) x (?P<card>{_CARD})",
     "微批 {micro} 可放进 {n} 张 {card}"),
    (rf"full recomputation fits on (?P<n>{_N}) x (?P<card>{_CARD})",
     "开启完全重计算可放进 {n} 张 {card}"),
    (rf"fits on (?P<n>{_N}) x (?P<card>{_CARD})", "可放进 {n} 张 {card}"),
    (r"no micro-batch fits, even with full recomputation", "即使开启完全重计算，任何微批都放不下"),

    # --- questions/scaling.py scaling and _missed_deadline
    (rf"no number of (?P<card>{_CARD}) cards up to (?P<max>{_N}) finishes in (?P<days>\S+) days",
     "{max} 张以内，任何数量的 {card} 都无法在 {days} 天内完成"),
    (rf"(?P<n>{_N}) cards take (?P<days>{_N}) days: (?P<m>{_N}) meet the (?P<deadline>\S+)-day deadline",
     "{n} 张卡需要 {days} 天：{m} 张才能赶上 {deadline} 天的期限"),

    # --- questions/costs.py cost, questions/serving_capacity.py capacity
    (r"no card price given or known: cost of ownership not computed \(give card_price\)",
     "没有给出卡价，目录里也查不到：未计算总拥有成本（请提供 card_price）"),
    (r"the card price is in (?P<a>\S+) and electricity in (?P<b>\S+): the totals add them as given; "
     r"convert one first",
     "卡价以 {a} 计，电费以 {b} 计：合计是原样相加的；请先换算成同一币种"),
    (r"no card compared meets the target on any plan tried", "参与比较的卡，在所试的任何方案下都达不到目标"),

    # --- ranking.py, recommend.py
    (r"no compared card passes the memory threshold", "参与比较的卡都过不了显存门槛"),
    (rf"the budget of (?P<budget>{_N}) cannot be checked: no card has a price "
     r"\(give prices, or an operator's catalog with prices\)",
     "无法核对 {budget} 的预算：没有任何卡有价格（请提供 prices，或使用带价格的运营方卡目录）"),

    # --- training_time.py
    (rf"the run's (?P<tokens>{_N}) tokens are less than one optimizer step of (?P<step>{_N}): it takes "
     r"one step; give global_batch_tokens to shrink the step",
     "本次训练的 {tokens} tokens 还不够一个优化器步（{step} tokens）：按一步计；可用 global_batch_tokens 调小每步"),
    (rf"(?P<card>{_CARD}) gives no interconnect bandwidth: gradient sync time not computed",
     "{card} 没有给出互联带宽：未计算梯度同步时间"),

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
    (r"no tier of any allowed line meets the constraints", "没有任何允许的产品线有档位满足这些约束"),

    # --- compare.py: an option's reason and warnings, the comparison's own
    (rf"the target needs (?P<n>{_N}) x (?P<card>{_CARD}) \((?P<t_why>.+)\); (?P<given>{_N}) given",
     "要达到目标需要 {n} 张 {card}（{t_why}）；只给了 {given} 张"),
    (rf"(?P<n>{_N}) cards finish in (?P<days>{_N}) days", "{n} 张卡 {days} 天完成"),
    (rf"(?P<n>{_N}) cards take (?P<days>{_N}) days; (?P<m>{_N}) meet the (?P<d>\S+)-day deadline",
     "{n} 张卡需要 {days} 天；{m} 张才能赶上 {d} 天的期限"),
    (rf"no ECC memory: a silent memory error goes unnoticed over months of serving "
     rf"\(guide section (?P<s>{_N})\)",
     "没有 ECC 显存：连续服务数月，一次显存静默错误也不会被发现（指南第 {s} 节）"),
    (rf"the cards talk over PCIe: multi-card training loses (?P<p>{_N}) %\+ of its efficiency against a "
     rf"dedicated interconnect \(guide section (?P<s>{_N})\)",
     "卡间走 PCIe：多卡训练比专用互联损失 {p}% 以上的效率（指南第 {s} 节）"),
    (rf"rack power: the server draws up to (?P<kw>{_N}) kW: the rack must supply and cool it, with two "
     rf"independent feeds and a (?P<ups>{_N}) kW UPS \(guide section (?P<s>{_N})\)",
     "机柜供电：这台服务器最高 {kw} kW：机柜要能供电并散热，两路独立供电，配 {ups} kW 的 UPS（指南第 {s} 节）"),
    (rf"rack power: (?P<n>{_N}) servers at up to (?P<kw>{_N}) kW each, (?P<total>{_N}) kW in all: the racks "
     rf"must supply and cool it, with two independent feeds per server and a (?P<ups>{_N}) kW UPS "
     rf"\(guide section (?P<s>{_N})\)",
     "机柜供电：{n} 台服务器每台最高 {kw} kW，合计 {total} kW：机柜要能供电并散热，每台两路独立供电，"
     "配 {ups} kW 的 UPS（指南第 {s} 节）"),
    (rf"each machine needs a (?P<psu>{_N}) W PSU: more than one 1600 W unit gives; split it over two "
     rf"supplies or a 230 V circuit \(guide section (?P<s>{_N})\)",
     "每台机器需要 {psu} W 电源：超过单个 1600 W 电源；分成两个电源或接 230 V 线路（指南第 {s} 节）"),
    (rf"no price for (?P<card>{_CARD}): capital cost and cost of ownership not computed \(give prices, "
     r"or the operator's catalog file\)",
     "没有 {card} 的价格：不计算资本支出和拥有成本（请给出 prices，或写进运维的目录文件）"),
    (rf"the purchase price of (?P<card>{_CARD}) is in (?P<a>\S+) and electricity in "
     r"(?P<b>\S+): the totals add them as given; convert one first",
     "{card} 的购买价格以 {a} 计，电费以 {b} 计：合计按原样相加；请先换算成同一币种"),
    (rf"the rental price of (?P<card>{_CARD}) is in (?P<a>\S+) and electricity in "
     r"(?P<b>\S+): the totals add them as given; convert one first",
     "{card} 的租用价格以 {a} 计，电费以 {b} 计：合计按原样相加；请先换算成同一币种"),
    ("no option compared meets the target", "所比较的方案都达不到目标"),
)

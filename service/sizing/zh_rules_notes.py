"""Chinese for the domain's assumption notes and fit reasons (see zh.py): (pattern, template).

Each rule mirrors one English f-string or literal (its source named above it); a `t_` group holds
a nested sentence translated by its own rule (a plan's description, a link's name, an engine's
published-runs note). Fixed literals (defaults.py and the like) are matched as escaped text, so a
changed default shows up again as English in the corpus rather than as a wrong translation.
Citations (repository paths, papers, quoted sentences) stay as they are inside the Chinese.
"""

import re

from .zh_terms import CARD as _CARD
from .zh_terms import PLAN as _PLAN
from .zh_terms import N as _N

_FMT = r"[\w.-]+"  # a format or compute key: bf16, q4_k_m, mxfp4, int8


def _literal(en: str, zh: str) -> tuple[str, str]:
    return re.escape(en), zh


# --- fixed notes: defaults.py, plan.py, cards.py, host.py, cost.py, placement.py, memory.py, ...
_LITERALS: tuple[tuple[str, str], ...] = (
    # defaults.py
    ("no mode given", "未给出模式"),
    ("half precision weights, the guide's default", "半精度权重，指南的默认设置"),
    ("QLoRA keeps the frozen base in NF4 with double quantisation",
     "QLoRA 把冻结的基座模型以 NF4 存放，并做双重量化"),
    ("tokens per sequence (prompt plus output) when none is given",
     "未给出时每条序列的 token 数（提示词加输出）"),
    ("one sequence at a time", "一次只跑一条序列"),
    ("tokens generated per request: 1000 (the length of TensorRT-LLM's published "
     "1000-in/1000-out benchmark), at most half the context",
     "每个请求生成的 token 数：1000（TensorRT-LLM 公开的 1000 输入/1000 输出基准的长度），最多为上下文的一半"),
    ("tokens per optimizer step: 4M, Llama 1 and 2's global batch (Touvron et al. 2023), when the "
     "model publishes none",
     "每个优化器步的 token 数：4M，即 Llama 1 和 2 的全局批量（Touvron et al. 2023），在模型未公布时采用"),
    ("guide: training utilisation (MFU) of about 40 %", "指南：训练利用率（MFU）约 40%"),
    ("guide: single-card decode reaches about 60 % of its ceiling", "指南：单卡解码约能达到上限的 60%"),
    ("guide: several cards over a dedicated interconnect keep 70 %+ of the ideal",
     "指南：多卡经专用互联可保持理想值的 70% 以上"),
    ("guide: several cards over PCIe keep about 50 % of the ideal", "指南：多卡经 PCIe 约保持理想值的 50%"),
    ("per card: driver context, kernels and framework workspace (1 GiB)",
     "每卡：驱动上下文、内核和框架工作区（1 GiB）"),
    ("share of card memory an engine can allocate; the rest goes to fragmentation and reserved pools "
     "(guide section 6.1; vLLM's default gpu_memory_utilization is 0.9)",
     "引擎可分配的显存比例；其余被碎片和预留池占用（指南第 6.1 节；vLLM 的 gpu_memory_utilization 默认为 0.9）"),
    ("guide: gradients synchronised in fp32 (7B -> 28 GB)", "指南：梯度以 fp32 同步（7B -> 28 GB）"),
    ("AdamW with fp32 moments, the common choice", "AdamW，一阶/二阶矩用 fp32，最常见的选择"),
    ("FlashAttention-style attention: the score matrix is never stored (Korthikanti et al.'s "
     "selective recomputation)",
     "FlashAttention 式注意力：不存储注意力分数矩阵（Korthikanti et al. 的选择性重计算）"),
    ("LoRA and QLoRA recipes turn on gradient checkpointing", "LoRA 和 QLoRA 的常用配置都开启梯度检查点"),
    ("a common LoRA rank", "常用的 LoRA 秩"),
    ("adapters on every linear layer of the blocks (QLoRA's recipe)",
     "在各 Transformer 块的每个线性层上加适配器（QLoRA 的做法）"),
    ("share of the backward pass (two thirds of a step) that gradient communication can hide behind "
     "(bucketed all-reduce)",
     "梯度通信能被反向传播（占一步的三分之二）掩盖的比例（分桶 all-reduce）"),
    ("guide: large matmuls reach 60-70 % of peak", "指南：大矩阵乘法可达峰值的 60-70%"),
    ("collectives reach about 80 % of NVLink's one-way rate (nccl-tests bus bandwidth about 370 of "
     "450 GB/s on H100)",
     "集合通信约达 NVLink 单向速率的 80%（nccl-tests 在 H100 上的总线带宽约为 450 GB/s 中的 370）"),
    ("collectives reach about 70 % of the slot's one-way rate (24-26 of 32 GB/s with peer-to-peer, "
     "20-22 without)",
     "集合通信约达插槽单向速率的 70%（开启 P2P 时为 32 GB/s 中的 24-26，不开启时 20-22）"),
    ("RDMA reaches about 90 % of the NIC line rate (46-48 of 50 GB/s at 400 Gb/s)",
     "RDMA 约达网卡线速的 90%（400 Gb/s 时为 50 GB/s 中的 46-48）"),
    ("6 us a round over NVLink/xGMI (8 cards: 18 us; engines' one-shot kernels 6-10 us, NCCL 19-24 us)",
     "NVLink/xGMI 上每轮 6 us（8 卡：18 us；引擎的 one-shot 内核 6-10 us，NCCL 19-24 us）"),
    ("14 us a round over PCIe (8 cards without peer-to-peer: about 42 us)",
     "PCIe 上每轮 14 us（8 卡、无 P2P：约 42 us）"),
    ("25 us a round between machines (two machines: about 30 us)", "机器之间每轮 25 us（两台机器：约 30 us）"),
    ("per machine, between machines: 8 x 400 Gb/s in a data-centre server, 200 GbE for workstations, "
     "100 GbE for consumer builds",
     "每台机器的机间网络：数据中心服务器 8 × 400 Gb/s，工作站 200 GbE，消费级整机 100 GbE"),
    ("measured copy bandwidth reaches about 90 % of the datasheet (one H200: 4.3 of 4.8 TB/s)",
     "实测拷贝带宽约为标称值的 90%（一张 H200：4.8 TB/s 中实测 4.3）"),
    ("a large bf16 matmul reaches about 79 % of dense peak (one H200: 769-798 of 989.5 TFLOP/s)",
     "大型 bf16 矩阵乘法约达稠密峰值的 79%（一张 H200：989.5 TFLOP/s 中实测 769-798）"),
    ("the guide's electricity price (0.7 per kWh)", "指南的电价（每 kWh 0.7）"),
    ("the guide's currency", "指南使用的币种"),
    ("no cooling or distribution overhead counted (PUE 1.0)", "未计入制冷和配电损耗（PUE 1.0）"),
    ("running at full rated power whenever on", "开机期间始终按额定功耗满载运行"),
    ("running around the clock", "全天 24 小时运行"),
    ("one installation", "按一套部署计"),
    ("the guide's three-year horizon for data-centre equipment", "指南对数据中心设备按三年计"),
    ("summary language", "摘要语言"),
    # inputs.py
    ("prompt plus output tokens", "提示词与输出的 token 数之和"),
    ("the rest of the context is generated", "上下文的其余部分都是生成的输出"),
    ("the rest of the context is prompt", "上下文的其余部分都是提示词"),
    ("KV cache in half precision", "KV 缓存用半精度"),
    ("KV cache in fp32 like the weights", "KV 缓存与权重一样用 fp32"),
    # cards.py infer_line
    ("no line given: a dedicated link or more than 96 GB means a data-centre card",
     "未给出产品线：有专用互联或显存超过 96 GB，按数据中心卡处理"),
    ("no line given: ECC or more than 32 GB on PCIe means a workstation card",
     "未给出产品线：带 ECC 或 PCIe 卡显存超过 32 GB，按工作站卡处理"),
    ("no line given: a PCIe card of 32 GB or less without ECC is taken as consumer",
     "未给出产品线：32 GB 及以下、无 ECC 的 PCIe 卡按消费级处理"),
    # plan.py CARDS_PER_MACHINE_NOTE
    ("a data-centre server holds 8 cards (an HGX/OAM baseboard or an 8-slot PCIe server)",
     "一台数据中心服务器装 8 张卡（HGX/OAM 基板或 8 槽 PCIe 服务器）"),
    ("a workstation tower holds 4 dual-slot cards", "一台塔式工作站装 4 张双槽卡"),
    ("a consumer build holds at most 4 cards (workstation-class board, risers, two supplies; a plain "
     "desktop takes 2)",
     "一台消费级整机最多装 4 张卡（工作站级主板、延长线、双电源；普通台式机只能装 2 张）"),
    # host.py power_basis (data-centre servers)
    ("servers at 10-12 kW per 8 x 700 W cards, scaled by the cards' power (guide 4.3), summed over "
     "the servers",
     "服务器按每 8 张 700 W 卡 10-12 kW 计，再按卡的功耗折算（指南 4.3），对所有服务器求和"),
    # cost.py ownership_answer
    ("guide: racks, power, cooling, switches, storage and staff add 50-100 % of the card price",
     "指南：机柜、供电、制冷、交换机、存储和人力另需卡价的 50-100%"),
    # memory.py
    ("model states split evenly over the cards, as the guide does (ZeRO-3/FSDP-like)",
     "模型状态在各卡间平均切分，与指南的做法一致（类似 ZeRO-3/FSDP）"),
    ("adapter sizes need the layer shapes (a preset or hf_config); the guide's 2.5-3 B/param over a "
     "16-bit base is used",
     "计算适配器大小需要层的形状（预设或 hf_config）；采用指南的经验值：16 位基座之上每参数 2.5-3 B"),
    # placement.py _training_reasons; questions/placing.py serving_plan_notes
    ("the plan given", "按给定的方案"),
    ("data parallel: every card holds the whole model's activations", "数据并行：每张卡都要存放整个模型的激活值"),
    ("tensor parallelism inside a machine (and pipeline stages across machines): one card cannot hold "
     "a whole copy's activations and model states",
     "机内张量并行（跨机用流水线并行）：单卡放不下一个完整副本的激活值和模型状态"),
    ("model states split evenly over all cards (FSDP, ZeRO-3-like), as the guide does",
     "模型状态在所有卡上平均切分（FSDP，类似 ZeRO-3），与指南的做法一致"),
    ("a distributed optimizer (ZeRO-1): only the optimizer states split over the data-parallel "
     "copies, as Megatron runs it",
     "分布式优化器（ZeRO-1）：只把优化器状态切分到各数据并行副本上，与 Megatron 的做法一致"),
    ("a serving engine (no engine named)", "推理服务引擎（未指定具体引擎）"),
    ("the heads", "注意力头数"),
    # questions/placing.py opening
    ("scaling answers are for training; no mode given", "扩展性答案针对训练；未给出模式"),
    # recommend.py SCENARIOS titles
    ("one developer, 7B-13B fine-tune and inference", "单个开发者，7B-13B 模型的微调和推理"),
    ("team inference service, 30B-70B, dozens of concurrent users", "团队推理服务，30B-70B，数十个并发用户"),
    ("small training cluster, 7B-13B full fine-tune", "小型训练集群，7B-13B 全量微调"),
    # throughput.py
    ("given: the step is the roofline at this share of the bandwidth, with no fixed costs added",
     "给定值：每步按此带宽比例下的 roofline 计算，不另加固定开销"),
    ("on HBM its batch-1 kernels reach less", "在 HBM 上其 batch-1 内核达不到这么高"),
    ("each MoE layer sends tokens to their experts' cards and back (all-to-all)",
     "每个 MoE 层把 token 发往其专家所在的卡再取回（all-to-all）"),
    ("full load: every copy runs its largest batch, prefill mixed into decode steps",
     "满载：每个副本都跑最大批量，预填充混在解码步中进行"),
    ("each token reads one row of the input embedding table, every other weight once per step",
     "每个 token 只读输入嵌入表的一行，其余权重每步读一次"),
    # training_time.py STEP_MODEL_NOTE
    ("time = compute at the MFU / the step's efficiency on the plan (accumulated micro-batches, "
     "tensor-parallel all-reduces, the pipeline bubble, exposed data-parallel traffic); the guide's "
     "curve is reported beside it (time_s_guide_curve)",
     "时间 = 按 MFU 算出的计算时间 / 该方案每步的效率（梯度累积的微批、张量并行 all-reduce、流水线气泡、"
     "未被掩盖的数据并行通信）；指南曲线的结果另附在旁（time_s_guide_curve）"),
    # capacity.py _unmet
    ("the target is not met on any plan tried", "所试的任何方案都达不到目标"),
    # cards.toml measured_source (h200-sxm), quoted after "measured on h200-sxm: "
    ("one H200 SXM measured by the project: device-to-device copy about 4.3 TB/s; bf16 8192-cube "
     "matmul 769-798 TFLOP/s (shared/refdata README)",
     "本项目实测的一张 H200 SXM：设备内拷贝约 4.3 TB/s；bf16 8192 立方矩阵乘法 769-798 TFLOP/s"
     "（shared/refdata README）"),
    # cards.toml interconnect_name values with English words (inside link notes)
    ("dedicated link", "专用互联"),
    ("PCIe 4.0 x16 (optional 2-way NVLink bridge)", "PCIe 4.0 x16（可选双卡 NVLink 桥）"),
    ("PCIe 4.0 x16 (optional NVLink bridge for 2 cards)", "PCIe 4.0 x16（可选双卡 NVLink 桥）"),
    ("PCIe 5.0 x16 (optional NVLink bridge for 2 cards)", "PCIe 5.0 x16（可选双卡 NVLink 桥）"),
    ("PCIe 4.0 x16 (optional Infinity Fabric Link bridge, 3 links)",
     "PCIe 4.0 x16（可选 Infinity Fabric Link 桥，3 条链路）"),
    ("NVLink bridge (pairs of cards)", "NVLink 桥（两卡一对）"),
    ("NVLink bridge (2- or 4-way)", "NVLink 桥（2 路或 4 路）"),
    ("NVLink 5 (NVLink-C2C to the Grace CPU)", "NVLink 5（经 NVLink-C2C 连 Grace CPU）"),
    ("24x 200 GbE RoCE v2 (integrated)", "24 × 200 GbE RoCE v2（集成）"),
)

# --- engines.py: each engine's `why` (a decode-efficiency note) and `fitted` (what published runs
# pin down); the figures are groups so a refit keeps its translation
_ENGINES: tuple[tuple[str, str], ...] = (
    (rf"guide: about (?P<a>{_N}) ?% of the ceiling on one card, (?P<b>{_N}) ?% with a tuned engine "
     rf"\(median error (?P<e>{_N}) ?% over the published runs\)",
     "指南：单卡约达上限的 {a}%，调优过的引擎约 {b}%（相对公开实测的中位误差 {e}%）"),
    (rf"llama\.cpp, fitted on (?P<n>{_N}) published runs: (?P<bw>{_N}) ?% of the bandwidth plus "
     rf"(?P<us>{_N}) us per layer and token \(median error (?P<e>{_N}) ?%\)",
     "llama.cpp，基于 {n} 组公开实测拟合：带宽的 {bw}%，另加每层每 token {us} us（中位误差 {e}%）"),
    (rf"HF transformers generate\(\): Python and launch overhead of about (?P<us>{_N}) us per layer "
     r"and token \(two h2oGPT runs\)",
     "HF transformers generate()：Python 与内核启动开销约为每层每 token {us} us（两组 h2oGPT 实测）"),
    (rf"(?P<src>[\w .-]+)'s README: (?P<bw>{_N}) ?% of the bandwidth, (?P<us>{_N}) us per layer",
     "{src} 的 README：带宽的 {bw}%，每层 {us} us"),
    (rf"gpt-fast \(PyTorch, torch\.compile\): (?P<bw>{_N}) ?% of the bandwidth and (?P<us>{_N}) us per "
     rf"layer, (?P<q>{_N}) ?% of that on int8/int4 weights",
     "gpt-fast（PyTorch，torch.compile）：带宽的 {bw}%，每层 {us} us；int8/int4 权重上为其 {q}%"),
    (rf"a tuned serving engine: about (?P<bw>{_N}) ?% of the bandwidth \(guide\), (?P<us>{_N}) us per "
     rf"layer and (?P<moe>{_N}) us more per MoE layer",
     "调优过的推理服务引擎：约为带宽的 {bw}%（指南），每层 {us} us，每个 MoE 层另加 {moe} us"),
    (rf"a tuned serving engine: about (?P<bw>{_N}) ?% of the bandwidth \(guide\), (?P<moe>{_N}) us more "
     r"per MoE layer",
     "调优过的推理服务引擎：约为带宽的 {bw}%（指南），每个 MoE 层另加 {moe} us"),
    (rf"a tuned engine with fused kernels: (?P<bw>{_N}) ?% of the bandwidth, matmuls at (?P<mm>{_N}) ?% of "
     rf"peak under load, (?P<moe>{_N}) us more per MoE layer",
     "带融合内核的调优引擎：带宽的 {bw}%，满载时矩阵乘法达峰值的 {mm}%，每个 MoE 层另加 {moe} us"),
    # fitted
    (rf"bandwidth share and per-layer cost on one card; (?P<hop>{_N}) us a hop of a layer split, "
     rf"(?P<sync>{_N}) us a sync of a row split and (?P<hbm>{_N}) ?% of HBM bandwidth, on (?P<n>{_N}) runs "
     rf"over (?P<cards>[\d-]+) cards",
     "单卡的带宽比例和每层开销；按层切分每跳 {hop} us，按行切分每次同步 {sync} us，HBM 上为带宽的 {hbm}%，"
     "基于 {cards} 卡上的 {n} 组实测"),
    (r"per-layer cost \(two runs\)", "每层开销（两组实测）"),
    (rf"bandwidth share, per-layer cost and the share kept on quantised weights, on its README's "
     rf"(?P<n>{_N}) runs on (?P<cards>[\d-]+) (?P<card>\w+)s \(median error (?P<e>{_N}) ?%\)",
     "带宽比例、每层开销和量化权重上保留的比例，基于其 README 中 {cards} 张 {card} 上的 {n} 组实测"
     "（中位误差 {e}%）"),
    (rf"per-layer and per-MoE-layer cost on (?P<n>{_N}) one-stream runs \((?P<k>{_N}) of them one user's "
     rf"gpt-oss report: thin\); matmul share and host work per sequence under load on (?P<f>{_N}) "
     r"full-load runs on Instinct cards \(AMD's and Oracle's tables\); experts' half width assumed as "
     r"TensorRT-LLM's",
     "每层和每个 MoE 层的开销，基于 {n} 组单流实测（其中 {k} 组来自一位用户的 gpt-oss 报告，数据偏少）；"
     "满载时的矩阵乘法比例与每条序列的主机开销，基于 Instinct 卡上的 {f} 组满载实测（AMD 与 Oracle 的表格）；"
     "专家半效宽度假定与 TensorRT-LLM 相同"),
    (rf"the per-MoE-layer cost on (?P<n>{_N}) DeepSeek runs \(thin: one model\); matmul share under load "
     r"and experts' half width assumed as TensorRT-LLM's",
     "每个 MoE 层的开销，基于 {n} 组 DeepSeek 实测（数据偏少：只有一个模型）；满载时的矩阵乘法比例和专家半效宽度"
     "假定与 TensorRT-LLM 相同"),
    (r"bandwidth share, matmul share of peak, expert matmul share, per-MoE-layer cost, host work per "
     rf"running sequence \((?P<us>{_N}) us\), the share kept through the FP4 rate \((?P<fp4>{_N})\) and the "
     rf"experts' half width \((?P<hw>{_N})\) on (?P<n>{_N}) published runs from (?P<k>{_N}) sources "
     r"\(TensorRT-LLM's perf-overview, MLPerf Inference v5\.1, NVIDIA's blogs\), each regime weighed alike",
     "带宽比例、矩阵乘法占峰值的比例、专家矩阵乘法比例、每个 MoE 层的开销、每条运行中序列的主机开销（{us} us）"
     "经 FP4 算力时保留的比例（{fp4}）以及专家半效宽度（{hw}），"
     "基于 {k} 个来源的 {n} 组公开实测（TensorRT-LLM 的 perf-overview、MLPerf Inference v5.1、NVIDIA 的博客），"
     "各类场景权重相同"),
)

# --- capacity.py _met and _unmet: a capacity option's reason
_CAPACITY: tuple[tuple[str, str], ...] = (
    (rf"(?P<copies>\d+) cop(?:y|ies) of (?P<t_plan>{_PLAN}) \((?P<cards>\d+) x (?P<card>{_CARD})\), each "
     rf"running (?P<batch>\d+) sequences at (?P<speed>{_N}) tokens/s per user \(up to (?P<most>\d+) within "
     r"the target\)",
     "{copies} 个副本，每个副本用{t_plan}（共 {cards} 张 {card}），各同时跑 {batch} 条序列，每用户 {speed} tokens/s"
     "（满足目标的前提下每个副本最多跑 {most} 条）"),
    (rf"(?P<asked>{_N}) tokens/s per user asked, at most (?P<speed>{_N}) on any plan tried "
     rf"\(best: (?P<t_plan>{_PLAN})\)",
     "目标为每用户 {asked} tokens/s，所试方案最多只能做到 {speed}（最佳方案：{t_plan}）"),
    (rf"first token within (?P<asked>{_N}) s asked, a prompt alone takes (?P<took>{_N}) s",
     "目标为首 token 在 {asked} s 内，但光处理提示词就要 {took} s"),
    (rf"no plan holds the model and one sequence on (?P<card>{_CARD}) cards",
     "在 {card} 上没有任何方案能放下模型加一条序列"),
)

# --- throughput.py _fixed_cost_notes: step_overhead_s, by MoE cost and by calibration
_STEP = rf"(?P<us>{_N}) us per layer"
_STEP_MOE = rf" and (?P<moe>{_N}) us more per MoE layer"
_STEP_TAIL = r" and decode step \(kernel launches and synchronisation\)"
_FITTED = r", fitted on published runs \((?P<t_fit>.+)\)"
_ASSUMED = r", assumed \(no published runs calibrate it\); the range takes (?P<lo>[\d.]+)-(?P<hi>[\d.]+)x"
_STEP_ZH, _STEP_MOE_ZH = "每层每个解码步 {us} us", "，每个 MoE 层另加 {moe} us"
_STEP_TAIL_ZH = "（内核启动与同步）"
_FITTED_ZH = "，基于公开实测拟合（{t_fit}）"
_ASSUMED_ZH = "，为假设值（没有公开实测可校准）；范围取 {lo}-{hi} 倍"
_OVERHEAD: tuple[tuple[str, str], ...] = tuple(
    (_STEP + moe + _STEP_TAIL + how, _STEP_ZH + moe_zh + _STEP_TAIL_ZH + how_zh)
    for moe, moe_zh in ((_STEP_MOE, _STEP_MOE_ZH), ("", ""))
    for how, how_zh in ((_FITTED, _FITTED_ZH), (_ASSUMED, _ASSUMED_ZH)))

# --- throughput.py compute_path: the rate an engine multiplies a format's weights through
_PATH = rf" multiplies (?P<fmt>{_FMT}) weights through (?P<key>{_FMT}) on (?P<card>{_CARD}): (?P<tf>{_N}) TFLOPS"
_AGAINST = rf" against (?P<other>{_N}) for (?P<own>{_FMT})"
_COMPUTE_PATH: tuple[tuple[str, str], ...] = (
    (r"the engine" + _PATH + _AGAINST, "推理引擎在 {card} 上用 {key} 计算 {fmt} 权重：{tf} TFLOPS（{own} 为 {other}）"),
    (r"the engine" + _PATH, "推理引擎在 {card} 上用 {key} 计算 {fmt} 权重：{tf} TFLOPS"),
    (r"(?P<engine>[\w.-]+)" + _PATH + _AGAINST,
     "{engine} 在 {card} 上用 {key} 计算 {fmt} 权重：{tf} TFLOPS（{own} 为 {other}）"),
    (r"(?P<engine>[\w.-]+)" + _PATH, "{engine} 在 {card} 上用 {key} 计算 {fmt} 权重：{tf} TFLOPS"),
)

_SHIPS_TAIL = r" \((?P<src>.+)\); other formats are in alternatives"
_SHIPS_TAIL_ZH = "（{src}）；其他格式见 alternatives"
_LINK_ZH = "双向 {both} GB/s，单向 {each} GB/s，按 {eff}% 计；每次集合通信 {lat} us（{t_eff}；{t_lat}）"

_NOTES: tuple[tuple[str, str], ...] = (
    # inputs.py released_note
    (r"(?P<name>.+?) ships its routed experts in (?P<fmt>[\w.-]+), every other tensor in 16-bit" + _SHIPS_TAIL,
     "{name} 的路由专家以 {fmt} 发布，其余张量均为 16 位" + _SHIPS_TAIL_ZH),
    (r"(?P<name>.+?) ships in (?P<fmt>[\w.-]+)" + _SHIPS_TAIL, "{name} 以 {fmt} 格式发布" + _SHIPS_TAIL_ZH),
    # inputs.py compute_flops, say_derived_half_precision, interconnect_bytes_per_s
    (rf"(?P<card>{_CARD}) lists no (?P<k>{_FMT}) rate; its (?P<key>{_FMT}) rate is used, which overstates "
     r"fp32 compute",
     "{card} 未列出 {k} 算力；改用其 {key} 算力，会高估 fp32 算力"),
    (rf"(?P<card>{_CARD}) lists no (?P<k>{_FMT}) rate; its (?P<key>{_FMT}) rate is used",
     "{card} 未列出 {k} 算力；改用其 {key} 算力"),
    (rf"(?P<card>{_CARD}) lists no (?P<k>{_FMT}) or half-precision rate; its FP32 rate is used as a floor",
     "{card} 未列出 {k} 或半精度算力；以其 FP32 算力作为下限"),
    (rf"(?P<card>{_CARD}): no half-precision figure is given; derived as dense (?P<key>{_FMT}) / 2",
     "{card} 未给出半精度算力；按稠密 {key} 算力 / 2 推算"),
    (rf"(?P<card>{_CARD}) gives no interconnect figure; the guide's PCIe figure for its line is used",
     "{card} 未给出互联带宽；采用指南中其产品线的 PCIe 数值"),
    # links.py card_link, fabric
    (rf"(?P<card>{_CARD}) gives no interconnect figure; the guide's PCIe figure \((?P<gb>{_N}) GB/s per "
     r"card, both directions\) is used as a floor for its dedicated link",
     "{card} 未给出互联带宽；采用指南的 PCIe 数值（每卡 {gb} GB/s，双向合计），作为其专用互联的下限"),
    (rf"(?P<card>{_CARD}) gives no interconnect figure; the guide's PCIe figure \((?P<gb>{_N}) GB/s per "
     r"card, both directions\) is used",
     "{card} 未给出互联带宽；采用指南的 PCIe 数值（每卡 {gb} GB/s，双向合计）"),
    (rf"(?P<both>{_N}) GB/s both ways, (?P<each>{_N}) each way at (?P<eff>{_N}) ?%; (?P<lat>{_N}) us a "
     r"collective \((?P<t_eff>(?:collectives|RDMA) reach[^;]*); (?P<t_lat>.+)\)", _LINK_ZH),
    (rf"(?P<card>{_CARD})'s (?P<t_link>.+) joins (?P<n>\d+) cards; larger groups talk over (?P<t_slot>.+)",
     "{card} 的 {t_link} 连接 {n} 张卡；更大的卡组经 {t_slot} 通信"),
    (r"(?P<name>[\w -]+?) \((?P<n>\d+) links\)", "{name}（{n} 条链路）"),
    (r"(?P<name>[\w -]+?) \(up to (?P<n>\d+) links\)", "{name}（最多 {n} 条链路）"),
    (rf"network \((?P<gb>{_N}) GB/s per machine\)", "网络（每台机器 {gb} GB/s）"),
    (rf"PCIe \((?P<gb>{_N}) GB/s\)", "PCIe（{gb} GB/s）"),
    # host.py power_basis (builds)
    (rf"rated card power plus (?P<w>{_N}) W for each machine's CPU, board, drives and fans, summed over "
     r"the machines",
     "卡的额定功耗，加上每台机器 CPU、主板、硬盘和风扇的 {w} W，对所有机器求和"),
    # memory.py
    (r"DeepSpeed's accounting for ZeRO stage (?P<n>\d) over the data-parallel cards",
     "按 DeepSpeed 对 ZeRO stage {n} 在数据并行各卡上的计算方式"),
    (rf"(?P<fmt>{_FMT}) keeps embeddings and the output head in 16-bit; the model gives no vocab_size and "
     r"hidden_size, so every weight is counted at the format's bits",
     "{fmt} 把嵌入层和输出头保留为 16 位；该模型没有给出 vocab_size 和 hidden_size，所以所有权重都按该格式的位数计"),
    (r"(?P<a>\d+) of (?P<b>\d+) layers keep at most (?P<w>\d+) tokens of KV cache",
     "{b} 层中有 {a} 层最多只保留 {w} 个 token 的 KV 缓存"),
    (r"every layer keeps the whole context's KV cache: TensorRT-LLM's max_attention_window_size defaults to "
     r"the maximum sequence length \(tensorrtllm_backend docs/model_config.md\); the model's (?P<w>\d+)-token "
     r"window is not applied",
     "每层都保留整个上下文的 KV 缓存：TensorRT-LLM 的 max_attention_window_size 默认等于最大序列长度"
     "（tensorrtllm_backend docs/model_config.md）；不按模型的 {w} token 滑动窗口计"),
    (r"multi-head latent attention caches (?P<n>\d+) values per token and layer",
     "多头潜在注意力（MLA）每个 token 每层缓存 {n} 个值"),
    # questions/
    (rf"the least count that finishes within (?P<days>{_N}) days \(memory alone needs (?P<n>\d+)\)",
     "能在 {days} 天内完成的最少卡数（仅按显存需 {n} 张）"),
    (r"(?P<t_name>.+?) splits the layers over every card: a token visits the cards in turn, so one stream "
     r"reads no faster than on one card",
     "{t_name} 把各层分到每张卡上：一个 token 依次经过各卡，所以单路请求的读取速度并不比单卡快"),
    (r"(?P<t_name>.+?): tensor parallelism inside a machine at a power-of-two degree that divides "
     r"(?P<t_heads>.+?), expert parallelism across machines, copies \(replicas\) on the cards left over",
     "{t_name}：机内用张量并行，并行度取能整除{t_heads}的 2 的幂；跨机用专家并行；剩下的卡跑更多副本"),
    (r"(?P<t_name>.+?): tensor parallelism inside a machine at a power-of-two degree that divides "
     r"(?P<t_heads>.+?), pipeline stages across machines, copies \(replicas\) on the cards left over",
     "{t_name}：机内用张量并行，并行度取能整除{t_heads}的 2 的幂；跨机用流水线并行；剩下的卡跑更多副本"),
    (r"(?P<a>\d+) heads and (?P<b>\d+) KV heads", " {a} 个注意力头和 {b} 个 KV 头"),
    (rf"the engine's tensor degree must divide the heads: (?P<n>\d+) cards; (?P<m>\d+) would hold it with "
     rf"pipeline parallelism \((?P<t_plan>{_PLAN})\), at one card's bandwidth per stream \(see alternatives\)",
     "引擎的张量并行度必须整除注意力头数：需 {n} 张卡；改用流水线并行（{t_plan}）只需 {m} 张就能放下，"
     "但每路请求只有单卡的带宽（见 alternatives）"),
    # ranking.py (the lines themselves below, in _LINES)
    (r"the guide's weights for the (?P<line>\w+) line", "指南对 {line} 产品线的权重"),
    (r"the cards the model needs, up to one (?P<line>\w+) machine's (?P<n>\d+): (?P<t_why>.+)",
     "模型所需的卡数，最多为一台 {line} 机器的 {n} 张：{t_why}"),
    # recommend.py scenario_assumptions
    (r"the guide's scenario '(?P<id>[\w-]+)' \((?P<t_title>.+)\)", "指南场景“{id}”（{t_title}）"),
    # throughput.py
    (r"the default measured fraction: (?P<t_note>.+)", "默认的实测比例：{t_note}"),
    (rf"measured on (?P<card>{_CARD}): (?P<t_src>.+)", "在 {card} 上实测：{t_src}"),
    (r"x(?P<f>[\d.]+) on quantised weights \(its dequantising kernels\)", "量化权重上 ×{f}（因其反量化内核）"),
    (r"range (?P<lo>[\d.]+)-(?P<hi>[\d.]+)", "范围 {lo}-{hi}"),
    (rf"each layer all-reduces its hidden states (?P<n>\d+) times over (?P<t_link>.+) \((?P<a>{_N}) us each, "
     rf"plus (?P<b>{_N}) us of the engine's own\)",
     "每层对隐藏状态做 {n} 次 all-reduce，经 {t_link}（每次 {a} us，另加引擎自身的 {b} us）"),
    (rf"each stage hands its hidden states to the next: the link's latency plus the engine's (?P<us>{_N}) us",
     "每个流水线阶段把隐藏状态交给下一阶段：链路延迟加上引擎自身的 {us} us"),
    (rf"matmuls at (?P<lo>{_N}) ?%-(?P<hi>{_N}) ?% of peak: (?P<t_why>.+)", "矩阵乘法达峰值的 {lo}%-{hi}%：{t_why}"),
    (rf"MoE: memory holds all (?P<p>{_N})B parameters; a decode step reads the shared weights and the "
     rf"(?P<f>{_N}) ?% of experts a batch of (?P<b>\d+) routes to \((?P<k>\d+) of (?P<e>\d+) per token; "
     rf"(?P<a>{_N})B active\)",
     "MoE：显存中存放全部 {p}B 参数；每个解码步读取共享权重，以及批量为 {b} 时被路由到的 {f}% 专家"
     "（每个 token 从 {e} 个中选 {k} 个；激活 {a}B）"),
    (rf"MoE: memory holds all (?P<p>{_N})B parameters; decode reads (?P<a>{_N})B active per sequence, at "
     r"most all of them",
     "MoE：显存中存放全部 {p}B 参数；解码时每条序列读取 {a}B 激活参数，最多读全部参数"),
    # training_time.py
    (r"the model's published batch: (?P<src>.+)", "模型公布的批量：{src}"),
    (r"LoRA's frozen base computes no weight gradients: forward (?P<f>\d+) and backward to the activations "
     r"(?P<b>\d+) FLOPs per parameter and token, against a full fine-tune's (?P<full>\d+)",
     "LoRA 冻结的基座不计算权重梯度：每参数每 token 前向 {f} FLOPs、反向（只到激活值）{b} FLOPs，"
     "全量微调为 {full}"),
    (rf"full recomputation runs each forward pass twice: (?P<hw>{_N}) FLOPs per parameter and token in "
     rf"hardware against (?P<model>{_N}) of model FLOPs; the MFU counts the model FLOPs, as published MFUs "
     r"with recomputation do",
     "完全重计算让每次前向跑两遍：硬件上每参数每 token {hw} FLOPs，模型 FLOPs 为 {model}；"
     "MFU 按模型 FLOPs 计，与公开的带重计算的 MFU 口径一致"),
)

# --- ranking.py: the product line in words (before the generic rules in _NOTES)
_LINE_WORDS = {"consumer": ("消费级", "消费级整机"), "workstation": ("工作站", "工作站"),
               "datacenter": ("数据中心", "数据中心服务器")}
_LINES: tuple[tuple[str, str], ...] = tuple(
    rule for line, (word, machine) in _LINE_WORDS.items() for rule in (
        (rf"the guide's weights for the {line} line", f"指南对{word}产品线的权重"),
        (rf"the cards the model needs, up to one {line} machine's (?P<n>\d+): (?P<t_why>.+)",
         f"模型所需的卡数，最多为一台{machine}的 {{n}} 张：{{t_why}}"),
    ))

RULES: tuple[tuple[str, str], ...] = (
    *(_literal(en, zh) for en, zh in _LITERALS),
    *_ENGINES,
    *_CAPACITY,
    *_OVERHEAD,
    *_COMPUTE_PATH,
    *_LINES,
    *_NOTES,
    # host.py power_basis (platforms and the share model) and plan.py / links.py rack-scale notes
    (rf"(?P<name>NVIDIA [^:;]+): (?P<kw>{_N}) kW at most for (?P<n>\d+) cards as its vendor publishes it",
     "{name}：厂商公布的整机最大功耗为 {kw} kW（{n} 张卡）"),
    (rf"a machine with fewer cards draws (?P<base>{_N}) kW plus their share of the rest",
     "卡数较少的机器按 {base} kW 加上这些卡分摊的其余部分计"),
    ("summed over the machines", "对所有机器求和"),
    (rf"no published figure for a machine of (?P<card>{_CARD}): (?P<k>{_N}) x the cards' power plus "
     rf"(?P<base>{_N}) kW a machine, fitted on the published platforms",
     "{card} 的整机没有公布的功耗：按卡功耗的 {k} 倍加每台机器 {base} kW 计（在已公布的平台上拟合）"),
    (r"the (?P<name>NVIDIA [^:;]+?) is one NVLink domain of (?P<n>\d+) cards: collectives inside it stay "
     r"on NVLink",
     "{name} 是一个含 {n} 张卡的 NVLink 域：域内的集合通信都走 NVLink"),
    (rf"per machine, between machines: the (?P<name>NVIDIA [^:;]+?)'s scale-out network, (?P<gb>{_N}) GB/s "
     rf"for its (?P<n>\d+) cards \(a NIC port per card\)",
     "每台机器的机间网络：{name} 的横向扩展网络，{n} 张卡共 {gb} GB/s（每张卡一个网卡端口）"),
    # engines.py / throughput.py / inputs.py: the default engine, the guide's tiers, full load, KV
    (r"no engine named: a tuned serving engine assumed, with vLLM's figures \((?P<t_why>.+)\)",
     "未指定引擎：按调优过的推理服务引擎计，采用 vLLM 的参数（{t_why}）"),
    (r"name the engine for its own", "指定引擎可得其自身参数"),
    (rf"(?P<card>{_CARD}) is the guide's tier or a card given by its figures, with no engine named: the "
     rf"guide's rule, (?P<pct>{_N}) ?% of the bandwidth \(60 % on one card, 70 % over a dedicated link, "
     r"50 % over PCIe\), no fixed costs added; name an engine for its own costs",
     "{card} 是指南的档位或按参数给出的卡，且未指定引擎：按指南的规则取带宽的 {pct}%（单卡 60%，专用互联 70%，"
     "PCIe 50%），不另加固定开销；指定引擎可得其自身开销"),
    (rf"at full load the same cards serve most as (?P<t_plan>{_PLAN}): the full-load figures "
     r"\(max_total_tokens_per_s and its kin\) are for that plan",
     "满载时同样这些卡以 {t_plan} 的方案产出最多：满载数据（max_total_tokens_per_s 等）按该方案计算"),
    (rf"(?P<engine>[\w.-]+) quantises the KV cache to FP8 with (?P<fmt>{_FMT}) checkpoints "
     r"\(kv_cache_quant_algo FP8\), as its published runs do",
     "{engine} 对 {fmt} 检查点默认把 KV 缓存量化为 FP8（kv_cache_quant_algo FP8），与其公开实测一致"),
    # training_time.py / placement.py: the step model, the run's goodput, the recipe, fp8
    (rf"time = steps x the plan's step: micro-batches at the layers' efficiency \((?P<eff>{_N}) ?% of "
     r"dense peak here\), the exposed share of tensor-parallel collectives, the pipeline bubble "
     r"\(p-1\)/\(m v\), and data-parallel traffic the backward pass does not hide; "
     rf"(?P<mfu>{_N}) ?% MFU all in\. The guide's (?P<g>{_N}) ?% MFU and scaling curve are reported "
     r"beside it \(time_s_guide_curve\), not applied on top",
     "时间 = 步数 × 方案的单步时间：各微批次按层的效率计算（此处为稠密峰值的 {eff}%），"
     "加上张量并行集合通信中暴露的部分、流水线气泡 (p-1)/(m v)，"
     "以及反向传播无法掩盖的数据并行通信；综合 MFU 为 {mfu}%。"
     "指南的 {g}% MFU 与扩展曲线列在旁边（time_s_guide_curve），不叠加在其上"),
    (rf"a whole run spends about (?P<pct>{_N}) ?% of its wall time in steady steps \(restarts, checkpoints "
     r"and evaluation take the rest\), fitted on published runs' GPU-hours; effective_mfu is the steady "
     r"state",
     "整个训练过程约有 {pct}% 的墙钟时间处于稳定训练步（其余用于故障重启、检查点与评估），"
     "按公开训练的 GPU 小时拟合；effective_mfu 为稳定状态的值"),
    (r"the fastest recipe that fits the cards' memory by the step model, among tensor parallelism inside "
     r"a machine, pipeline stages, interleaving, micro-batches 1-8, selective or full recomputation and "
     r"the ZeRO stage; what was given is kept",
     "按步骤模型选出显存放得下的最快方案：在机内张量并行、流水线级数、交错调度、微批次 1-8、"
     "选择性或完全重计算以及 ZeRO 阶段之间选择；调用方给定的设置保持不变"),
    (r"fp8 training as Transformer Engine runs it: matmuls in fp8 with per-tensor scales, fp32 master "
     r"weights and optimizer state, a bf16 copy of the weights and bf16 gradients \(the fp8 casts are "
     r"transient\), activations kept in bf16",
     "按 Transformer Engine 的方式做 fp8 训练：矩阵乘法用带逐张量缩放的 fp8，主权重与优化器状态为 fp32，另有一份 bf16 "
     "权重副本和 bf16 梯度（fp8 转换是临时的），激活值保留为 bf16"),
    # --- compare.py
    ("the cheapest to own first", "拥有成本最低的排在前面"),
)

"""Chinese by rule for the plain text a coded message carries as a parameter (see zh.py):
(pattern, template).

Every sentence the domain says is a coded message, said from locale/zh.po, and so is a plan's
description. What reaches these rules is text that is data, not a sentence of the service's: a
list of card ids, where a model's positions come from, a family's why and the catalog's
interconnect names. A `t_` group holds text translated by its own rule. Ids, numbers and cited
sources stay as they are.
"""

_N = r"[\d,.]+"  # a number as the domain prints it: 1,000 / 53.9

RULES: tuple[tuple[str, str], ...] = (
    # --- a list of card ids, "a, b, c" -> "a、b、c" (a family's other variants)
    (r"(?P<a>[a-z0-9][a-z0-9.-]*), (?P<t_rest>[a-z0-9][a-z0-9.-]*(?:, [a-z0-9][a-z0-9.-]*)*)",
     "{a}、{t_rest}"),

    # --- cards.toml families: why a family name means its most deployed variant
    (r"the (?P<module>SXM\d*(?: \d+GB)?) module of HGX servers, the variant most deployed",
     "HGX 服务器上的 {module} 模组，部署最多的版本"),
    (r"the (?P<module>SXM\d*(?: \d+GB)?) module of HGX servers, the variant most deployed in China",
     "HGX 服务器上的 {module} 模组，国内部署最多的版本"),
    (r"the SXM2 32GB module of DGX-1 and cloud V100 instances, the variant most deployed \(PCIe V100s are not "
     r"in the catalog\)",
     "DGX-1 和云上 V100 实例所用的 SXM2 32GB 模组，部署最多的版本（目录中没有 PCIe 版 V100）"),

    # --- model.context_source: where a model's positions come from
    (r"given by the caller", "由调用方给出"),
    (rf"config max_position_embeddings (?P<n>{_N})", "config 中 max_position_embeddings 为 {n}"),
    (rf"config max_position_embeddings (?P<n>{_N}) \(rope_scaling (?P<kind>\S+) x(?P<f>\S+) "
     rf"from (?P<o>{_N})\)",
     "config 中 max_position_embeddings 为 {n}，已含 rope_scaling {kind} 对 {o} 的 {f} 倍放大"),
    (rf"rope_scaling (?P<kind>\S+) x(?P<f>\S+) from (?P<o>{_N}) positions = (?P<n>{_N})",
     "rope_scaling {kind} 把 {o} 个位置放大 {f} 倍，共 {n}"),

    # --- cards.toml measured_source (h200-sxm), said after "measured on h200-sxm: "
    (r"one H200 SXM measured by the project: device-to-device copy about 4\.3 TB/s; bf16 8192-cube "
     r"matmul 769-798 TFLOP/s \(shared/refdata README\)",
     "本项目实测的一张 H200 SXM：设备内拷贝约 4.3 TB/s；bf16 8192 立方矩阵乘法 769-798 TFLOP/s"
     "（shared/refdata README）"),

    # --- links' names: cards.toml interconnect_name values with English words, and links.py's
    ("dedicated link", "专用互联"),
    (r"PCIe 4\.0 x16 \(optional 2-way NVLink bridge\)", "PCIe 4.0 x16（可选双卡 NVLink 桥）"),
    (r"PCIe 4\.0 x16 \(optional NVLink bridge for 2 cards\)", "PCIe 4.0 x16（可选双卡 NVLink 桥）"),
    (r"PCIe 5\.0 x16 \(optional NVLink bridge for 2 cards\)", "PCIe 5.0 x16（可选双卡 NVLink 桥）"),
    (r"PCIe 4\.0 x16 \(optional Infinity Fabric Link bridge, 3 links\)",
     "PCIe 4.0 x16（可选 Infinity Fabric Link 桥，3 条链路）"),
    (r"NVLink bridge \(pairs of cards\)", "NVLink 桥（两卡一对）"),
    (r"NVLink bridge \(2- or 4-way\)", "NVLink 桥（2 路或 4 路）"),
    (r"NVLink 5 \(NVLink-C2C to the Grace CPU\)", "NVLink 5（经 NVLink-C2C 连 Grace CPU）"),
    (r"24x 200 GbE RoCE v2 \(integrated\)", "24 × 200 GbE RoCE v2（集成）"),
    (r"(?P<name>[\w -]+?) \((?P<n>\d+) links\)", "{name}（{n} 条链路）"),
    (r"(?P<name>[\w -]+?) \(up to (?P<n>\d+) links\)", "{name}（最多 {n} 条链路）"),
    (rf"network \((?P<gb>{_N}) GB/s per machine\)", "网络（每台机器 {gb} GB/s）"),
    (rf"PCIe \((?P<gb>{_N}) GB/s\)", "PCIe（{gb} GB/s）"),
)

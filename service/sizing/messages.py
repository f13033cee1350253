"""Coded messages: what the domain says, as a stable code with its parameters.

A `Template` is one sentence the domain can say: a code callers can match on (it never
changes once published), the English (a `str.format` template over named parameters) and
what it means. Calling a template with its parameters makes a `Message`: the sentence in
English (a Message is a `str`, so answers carry it as text) that keeps its template and
parameters, so that the edge can say it in the caller's language from a gettext catalog
(service/sizing/locale/zh.po, keyed by the English; `python -m service.sizing.messages
--check` fails on a template without its translation or an entry no template uses).

Parameters are numbers in SI (watts, seconds, tokens), ids, other Messages (said in the same
language) or tuples of Messages (joined as a list). A template that counts something says it in
the plural forms of each language, as gettext does: `one` is the English for a `count` of 1 (the
catalog's msgid, `english` its msgid_plural), and each language's entry holds one sentence per
plural form of that language (Chinese has one), chosen by its catalog's Plural-Forms rule. A
template converts units for the reader with a prefix on the format spec: `{power_w:kW|,.1f}` is
watts shown in kW, `{share:pct|.0f} %` a fraction shown in percent.
"""

import functools
import gettext
import math
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .frozen import cached

# What a language's catalog holds: English -> its sentence, or its sentences by plural form.
Translations = Mapping[str, "str | Forms"]

# Unit prefixes a template's format spec may carry: the parameter (in its SI unit) is divided by
# the first's factor or multiplied by the second's, as the English always computed it.
_PER = {"kW": 1e3, "GB": 1e9, "GiB": 2.0 ** 30, "TFLOPS": 1e12, "B": 1e9, "days": 86_400.0}
_TIMES = {"ms": 1e3, "us": 1e6, "pct": 100.0}


@functools.cache
def _compiled(text: str) -> tuple[str, tuple[tuple[str, str, str], ...], frozenset[str], frozenset[str]]:
    """A template's text made ready for str.format_map, once: each unit-prefixed field renamed to a
    field of its own (`{power_w:kW|,.1f}` -> `{power_w__kW:,.1f}`) with (field, unit, new name) to
    convert, the fields, and the fields said without a format spec (text, lists of messages)."""
    out, conversions, names, bare = [], [], set(), set()
    for literal, name, spec, conversion in string.Formatter().parse(text):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        names.add(name)
        unit, bar, rest = (spec or "").partition("|")
        if bar:
            renamed = f"{name}__{unit}"
            conversions.append((name, unit, renamed))
            name, spec = renamed, rest
        elif not spec and not conversion:
            bare.add(name)
        out.append("{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
    return "".join(out), tuple(dict.fromkeys(conversions)), frozenset(names), frozenset(bare)


def _format(text: str, params: Mapping[str, object], say: Callable[[object], str] | None,
            separators: tuple[str, str]) -> str:
    """`text` filled with `params`: units converted, lists joined (a list of messages with the
    first of `separators`, a list of names with the second), and text (messages, plain text)
    passed through `say` when given (another language)."""
    fast, conversions, _, bare = _compiled(text)
    if say is None and not conversions:
        for name in bare:  # a plain loop: this is the path of most messages, on every answer
            if type(params[name]) is tuple:
                break
        else:
            return fast.format_map(params)  # English with nothing to convert or join
    values = dict(params)
    for name, unit, renamed in conversions:
        value = params[name]
        values[renamed] = value / _PER[unit] if unit in _PER else value * _TIMES[unit]  # type: ignore[operator]
    for name in bare:
        value = values.get(name)
        if isinstance(value, tuple):
            separator = separators[0] if value and isinstance(value[0], Message) else separators[1]
            values[name] = separator.join(str(v) if say is None else say(v) for v in value)
        elif say is not None and isinstance(value, str):
            values[name] = say(value)
    return fast.format_map(values)


@dataclass(frozen=True, eq=False)
class Template:
    """A sentence the domain can say: its code, its English and what it means. One object per code
    (template() registers it), compared and hashed as itself: M.kept keys on it."""

    code: str
    english: str
    meaning: str
    one: str | None = None
    """The English when `count` is 1 (a plural template); `english` is said for every other count."""
    count: str | None = None
    """The parameter a plural template counts."""

    def __call__(self, **params) -> "Message":
        if not params:  # a sentence without parameters: the same message every time (kept)
            return kept(self)
        return Message(self, params)

    def text_for(self, params: Mapping[str, object]) -> str:
        """The English for these parameters: `one` for a count of 1, else `english` (English's
        rule, n != 1, over the count as gettext takes it)."""
        if self.one is not None and plural_n(params[self.count]) == 1:  # type: ignore[index]
            return self.one
        return self.english

    @cached
    def fields(self) -> frozenset[str]:
        return _compiled(self.english)[2]

    @cached
    def ordered_fields(self) -> tuple[str, ...]:
        """The parameters in the order the English names them first (a set's order changes from
        one process to the next, as text hashes do)."""
        return tuple(dict.fromkeys(name for _, name, _, _ in string.Formatter().parse(self.english) if name))

    def __reduce__(self):
        return _registered, (self.code,)


def _registered(code: str) -> Template:
    return TEMPLATES[code]


def plural_n(count: object) -> int:
    """The n a plural rule is given for `count`: a whole, non-negative number as it is; any other
    (1.5, -1, True, not a number) as 2, the form most languages use for "several"."""
    if isinstance(count, (int, float)) and not isinstance(count, bool) and count >= 0 and float(count).is_integer():
        return int(count)
    return 2


@functools.lru_cache(maxsize=1024, typed=True)
def kept(template: Template, **params) -> "Message":
    """`template` said with `params`, made once for a loop that says it again and again with the
    same few values (the training recipe search sizes memory about 80 times an estimate, and its
    parts' names and bytes per parameter repeat); typed, so that 2 and 2.0 stay apart. No message
    is a parameter: two with one text and other codes are equal strings, and one would stand for
    the other."""
    assert not any(isinstance(value, Message) for value in params.values()), template.code
    return Message(template, params)


class Verbatim(str):
    """Text said as it stands in every language: a cited source, a quotation."""


class Message(str):
    """A template said with its parameters: the text (English unless said in another language by
    `said`), its template and parameters."""

    template: Template
    params: Mapping[str, object]

    def __new__(cls, template: Template, params: Mapping[str, object], text: str | None = None) -> "Message":
        if text is None:
            if params.keys() != template.fields:
                raise TypeError(f"{template.code} takes {sorted(template.fields)}, got {sorted(params)}")
            text = _format(template.text_for(params), params, None, (LIST_SEPARATOR.english, NAME_SEPARATOR.english))
        message = super().__new__(cls, text)
        message.template, message.params = template, params
        return message

    def __reduce__(self):
        return Message, (self.template, self.params, str(self))

    @property
    def code(self) -> str:
        return self.template.code

    def say(self, translations: Translations, plain: Callable[[str], str] = lambda text: text) -> str:
        """In the language of `translations` (English -> translation): nested messages in it too,
        text that is not (yet) a message through `plain`; the English where no entry exists."""
        def say(value: object) -> str:
            if isinstance(value, Message):
                return value.say(translations, plain)
            if isinstance(value, Verbatim):
                return str(value)
            return plain(str(value))

        return self._in(translations, self.params, say)

    def said(self, translations: Translations, plain: Callable[[str], str] = lambda text: text) -> "Message":
        """The same message (code and parameters) with its text, and its nested messages' texts, in
        the language of `translations`: each nested message said once, its text then quoted."""
        params = {name: _said(value, translations, plain) for name, value in self.params.items()}

        def quote(value: object) -> str:  # a nested message is said already; other text as say() does
            return str(value) if isinstance(value, (Message, Verbatim)) else plain(str(value))

        return Message(self.template, params, self._in(translations, params, quote))

    def _in(self, translations: Translations, params: Mapping[str, object], say: Callable[[object], str]) -> str:
        separators = (str(translations.get(LIST_SEPARATOR.english, LIST_SEPARATOR.english)),
                      str(translations.get(NAME_SEPARATOR.english, NAME_SEPARATOR.english)))
        said = translations.get(self.template.english)
        if isinstance(said, Forms):
            said = said.for_count(params[self.template.count])  # type: ignore[index]  # a plural has its count
        return _format(said or self.template.text_for(params), params, say, separators)


class Forms(tuple):
    """A plural template's translations, one per plural form of the language, in the order of its
    gettext Plural-Forms rule, which picks the form for a count."""

    rule: Callable[[int], int]
    singular: str | None  # the English singular the catalog's entry was made for (its msgid)

    def __new__(cls, forms: Sequence[str], plural_expr: str, singular: str | None = None) -> "Forms":
        made = super().__new__(cls, forms)
        made.rule, made.singular = gettext.c2py(plural_expr), singular
        return made

    def for_count(self, count: object) -> str:
        """The form the language's rule picks for `count` (see plural_n)."""
        return self[min(self.rule(plural_n(count)), len(self) - 1)]


def _said(value: object, translations: Translations, plain: Callable[[str], str]) -> object:
    if isinstance(value, Message):
        return value.said(translations, plain)
    if isinstance(value, tuple) and any(isinstance(v, Message) for v in value):
        return tuple(_said(v, translations, plain) for v in value)
    return value


def as_json(message: "Message") -> dict:
    """A message as an answer carries it: `{code, message, params}`, the parameters as JSON values
    (numbers in SI rounded to 12 significant digits, nested messages as objects, lists as arrays).
    `message` is the Message itself (a str: JSON writes its text). Made once a message and kept
    with it, shared by every answer that carries it (a message kept across questions, as a card's
    links or an engine's costs are, is dumped again by each): nothing changes an answer's JSON
    values once dumped."""
    made = message.__dict__.get("_json")
    if made is None:
        made = message.__dict__["_json"] = _as_json(message)
    return made


def _as_json(message: "Message") -> dict:
    params = {}
    for name, value in message.params.items():
        kind = type(value)
        if kind is int or kind is str or kind is bool or value is None:  # most parameters: as they are
            params[name] = value
        elif isinstance(value, float):
            params[name] = float(f"{value:.12g}") if math.isfinite(value) else None
        else:
            params[name] = _json_value(value)
    return {"code": message.template.code, "message": message, "params": params}


def _json_value(value: object) -> object:
    if isinstance(value, Message):
        return as_json(value)
    if isinstance(value, (tuple, list)):
        return [_json_value(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.12g}") if math.isfinite(value) else None
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    return str(value)  # an id, a name, a cited source (a subclass of str: as plain text)


TEMPLATES: dict[str, Template] = {}


def template(code: str, english: str, meaning: str, *, one: str | None = None, count: str | None = None) -> Template:
    """A template, registered under its code (each code once). A plural one gives `one`, its
    English for a `count` of 1, beside `english`, its English for every other count."""
    if code in TEMPLATES:
        raise ValueError(f"message code {code!r} is defined twice")
    made = Template(code, english, meaning, one, count)
    if (one is None) != (count is None):
        raise ValueError(f"{code}: a plural template gives both its singular and the parameter it counts")
    if one is not None and (_compiled(one)[2] != made.fields or count not in made.fields):
        raise ValueError(f"{code}: its singular and plural take other fields, or do not hold {count!r}")
    TEMPLATES[code] = made
    return made


LIST_SEPARATOR = template("list_separator", "; ", "how the items of a list of sentences are joined in a sentence")
NAME_SEPARATOR = template("name_separator", ", ", "how the items of a list of names (card ids) are joined")

# --- speed: what a step's figures rest on (throughput.py)
DEFAULT_FRACTION = template(
    "default_measured_fraction", "the default measured fraction: {why}",
    "the card has no measurement of its own: the default fraction is used")
MEASURED_ON = template("measured_on", "measured on {card}: {source}", "the card's own measurement, and where from")
GUIDE_DECODE_RULE = template(
    "guide_decode_rule",
    "{card} is the guide's tier or a card given by its figures, with no engine named: the guide's rule, "
    "{share:.0%} of the bandwidth (60 % on one card, 70 % over a dedicated link, 50 % over PCIe), no fixed costs "
    "added; name an engine for its own costs",
    "a guide tier or custom card without an engine: the guide's share of the bandwidth")
DECODE_EFFICIENCY_GIVEN = template(
    "decode_efficiency_given",
    "given: the step is the roofline at this share of the bandwidth, with no fixed costs added",
    "the caller gave the decode efficiency")
HBM_KERNELS_REACH_LESS = template(
    "hbm_kernels_reach_less", "on HBM its batch-1 kernels reach less", "the engine's share on HBM cards")
QUANTISED_FACTOR = template(
    "quantised_factor", "x{factor:g} on quantised weights (its dequantising kernels)",
    "the engine keeps this share of its bandwidth on quantised weights")
SHARE_RANGE = template("share_range", "range {low:.2f}-{high:.2f}", "the low and high ends of a share")
STEP_OVERHEAD = template(
    "step_overhead",
    "{layer_s:us|g} us per layer and decode step (kernel launches and synchronisation), fitted on published "
    "runs ({fitted})",
    "the engine's fixed cost per layer and step, fitted")
STEP_OVERHEAD_MOE = template(
    "step_overhead_moe",
    "{layer_s:us|g} us per layer and {moe_layer_s:us|g} us more per MoE layer and decode step (kernel "
    "launches and synchronisation), fitted on published runs ({fitted})",
    "the engine's fixed cost per layer, and per MoE layer, and step, fitted")
STEP_OVERHEAD_ASSUMED = template(
    "step_overhead_assumed",
    "{layer_s:us|g} us per layer and decode step (kernel launches and synchronisation), assumed (no published "
    "runs calibrate it); the range takes 0.67-1.5x",
    "the engine's fixed cost per layer and step, assumed")
STEP_OVERHEAD_MOE_ASSUMED = template(
    "step_overhead_moe_assumed",
    "{layer_s:us|g} us per layer and {moe_layer_s:us|g} us more per MoE layer and decode step (kernel "
    "launches and synchronisation), assumed (no published runs calibrate it); the range takes 0.67-1.5x",
    "the engine's fixed cost per layer, and per MoE layer, and step, assumed")
TENSOR_COLLECTIVES = template(
    "tensor_collectives",
    "each layer all-reduces its hidden states {syncs} times over {link} ({latency_s:us|g} us each, plus "
    "{engine_s:us|g} us of the engine's own)",
    "tensor parallelism's collectives per layer")
EXPERT_COLLECTIVES = template(
    "expert_collectives", "each MoE layer sends tokens to their experts' cards and back (all-to-all)",
    "expert parallelism's collectives per MoE layer")
PIPELINE_HOP = template(
    "pipeline_hop",
    "each stage hands its hidden states to the next: the link's latency plus the engine's {hop_s:us|g} us",
    "a pipeline stage's hand-over")
PREFILL_MATMULS = template(
    "prefill_matmuls", "matmuls at {low:.0%}-{high:.0%} of peak: {why}", "the prompt's matmuls' share of peak")
FULL_LOAD = template(
    "full_load", "full load: every copy runs its largest batch, prefill mixed into decode steps",
    "what full load means")
COMPUTE_PATH = template(
    "compute_path", "{engine} multiplies {precision} weights through {key} on {card}: {flops:TFLOPS|g} TFLOPS",
    "the rate the engine computes the format's weights at")
COMPUTE_PATH_ANY_ENGINE = template(
    "compute_path_any_engine", "the engine multiplies {precision} weights through {key} on {card}: "
    "{flops:TFLOPS|g} TFLOPS", "the rate an engine computes the format's weights at")
COMPUTE_PATH_ANY_ENGINE_AGAINST = template(
    "compute_path_any_engine_against",
    "the engine multiplies {precision} weights through {key} on {card}: {flops:TFLOPS|g} TFLOPS against "
    "{own_flops:TFLOPS|g} for {own}",
    "the rate an engine computes the format's weights at, against the format's own")
COMPUTE_PATH_AGAINST = template(
    "compute_path_against",
    "{engine} multiplies {precision} weights through {key} on {card}: {flops:TFLOPS|g} TFLOPS against "
    "{own_flops:TFLOPS|g} for {own}",
    "the rate the engine computes the format's weights at, against the format's own")
DECODE_READS_ROUTED = template(
    "decode_reads_routed",
    "MoE: memory holds all {params:B|.1f}B parameters; a decode step reads the shared weights and the "
    "{fraction:.0%} of experts a batch of {batch} routes to ({per_token} of {experts} per token; "
    "{active:B|.1f}B active)",
    "which MoE weights a decode step reads")
DECODE_READS_ACTIVE = template(
    "decode_reads_active",
    "MoE: memory holds all {params:B|.1f}B parameters; decode reads {active:B|.1f}B active per sequence, at "
    "most all of them",
    "which MoE weights a decode step reads, without the experts' shape")
DECODE_SKIPS_EMBEDDING = template(
    "decode_skips_embedding",
    "each token reads one row of the input embedding table, every other weight once per step",
    "a decode step does not read the whole input embedding")

# --- plans and recipes (placement.py, questions/placing.py)
RECIPE_SEARCH = template(
    "recipe_search",
    "the fastest recipe that fits the cards' memory by the step model, among tensor parallelism inside a machine, "
    "pipeline stages, interleaving, micro-batches 1-8, selective or full recomputation and the ZeRO stage; what "
    "was given is kept",
    "how the training recipe was chosen")
PLAN_GIVEN = template("plan_given", "the plan given", "the caller gave the plan")
PLAN_DATA_PARALLEL = template(
    "plan_data_parallel", "data parallel: every card holds the whole model's activations",
    "why the training plan is data parallel")
PLAN_TENSOR_INSIDE = template(
    "plan_tensor_inside",
    "tensor parallelism inside a machine (and pipeline stages across machines): one card cannot hold a whole "
    "copy's activations and model states",
    "why the training plan splits the model")
ZERO_EVEN_SPLIT = template(
    "zero_even_split", "model states split evenly over all cards (FSDP, ZeRO-3-like), as the guide does",
    "how model states are spread over the cards")
ZERO_DISTRIBUTED_OPTIMIZER = template(
    "zero_distributed_optimizer",
    "a distributed optimizer (ZeRO-1): only the optimizer states split over the data-parallel copies, as "
    "Megatron runs it",
    "how model states are spread over the cards")
FULL_LOAD_PLAN = template(
    "full_load_plan",
    "at full load the same cards serve most as {plan}: the full-load figures (max_total_tokens_per_s and its "
    "kin) are for that plan",
    "the plan the full-load figures are for")
SCALING_IS_TRAINING = template(
    "scaling_is_training", "scaling answers are for training; no mode given", "the scaling question trains")
PIPELINE_FEWER_CARDS = template(
    "pipeline_fewer_cards",
    "the engine's tensor degree must divide the heads: {cards} cards; {fewer} would hold it with pipeline "
    "parallelism ({plan}), at one card's bandwidth per stream (see alternatives)",
    "fewer cards would hold the model with a pipeline")
DEADLINE_LEAST_COUNT = template(
    "deadline_least_count",
    "the least count that finishes within {deadline_days:g} days (memory alone needs {memory_cards})",
    "the count answered is the least that meets the deadline")

# --- training's figures (training_time.py)
FP8_RECIPE = template(
    "fp8_recipe",
    "fp8 training as Transformer Engine runs it: matmuls in fp8 with per-tensor scales, fp32 master weights and "
    "optimizer state, a bf16 copy of the weights and bf16 gradients (the fp8 casts are transient), activations "
    "kept in bf16",
    "what fp8 training keeps in which format")
LORA_FLOPS = template(
    "lora_flops",
    "LoRA's frozen base computes no weight gradients: forward 2 and backward to the activations 2 FLOPs per "
    "parameter and token, against a full fine-tune's 6",
    "LoRA's FLOPs per parameter and token")
RECOMPUTE_FLOPS = template(
    "recompute_flops",
    "full recomputation runs each forward pass twice: {hardware:g} FLOPs per parameter and token in hardware "
    "against {model} of model FLOPs; the MFU counts the model FLOPs, as published MFUs with recomputation do",
    "full recomputation's extra FLOPs")
STEP_MODEL = template(
    "step_model",
    "time = steps x the plan's step: micro-batches at the layers' efficiency ({efficiency:.0%} of dense peak "
    "here), the exposed share of tensor-parallel collectives, the pipeline bubble (p-1)/(m v), and data-parallel "
    "traffic the backward pass does not hide; {mfu:.0%} MFU all in. The guide's {guide:.0%} MFU and scaling "
    "curve are reported beside it (time_s_guide_curve), not applied on top",
    "how a training run's time is counted")
RUN_GOODPUT = template(
    "run_goodput",
    "a whole run spends about {goodput:.0%} of its wall time in steady steps (restarts, checkpoints and "
    "evaluation take the rest), fitted on published runs' GPU-hours; effective_mfu is the steady state",
    "a whole run's share of steady steps")
PUBLISHED_BATCH = template(
    "published_batch", "the model's published batch: {source}", "the model's own training batch")

# --- memory (memory.py)
MEMORY_EVEN_SPLIT = template(
    "memory_even_split", "model states split evenly over the cards, as the guide does (ZeRO-3/FSDP-like)",
    "how training memory spreads model states")
MEMORY_DEEPSPEED = template(
    "memory_deepspeed", "DeepSpeed's accounting for ZeRO stage {stage} over the data-parallel cards",
    "how training memory spreads model states under a ZeRO stage")
LORA_GUIDE_RULE = template(
    "lora_guide_rule",
    "adapter sizes need the layer shapes (a preset or hf_config); the guide's 2.5-3 B/param over a 16-bit base "
    "is used",
    "LoRA memory by the guide's rule")
EMBEDDINGS_UNKNOWN = template(
    "embeddings_unknown",
    "{precision} keeps embeddings and the output head in 16-bit; the model gives no vocab_size and hidden_size, "
    "so every weight is counted at the format's bits",
    "the embeddings cannot be counted apart")
SLIDING_WINDOW = template(
    "sliding_window", "{sliding} of {layers} layers keep at most {window} tokens of KV cache",
    "sliding-window layers cap their KV cache")
SLIDING_NOT_APPLIED = template(
    "sliding_window_not_applied",
    "every layer keeps the whole context's KV cache: {why}; the model's {window}-token window is not applied",
    "the engine keeps the whole context despite the model's window")
TRTLLM_WINDOW = template(
    "trtllm_attention_window",
    "TensorRT-LLM's max_attention_window_size defaults to the maximum sequence length (tensorrtllm_backend "
    "docs/model_config.md)",
    "why TensorRT-LLM keeps the whole context")
MLA_LATENT = template(
    "mla_latent", "multi-head latent attention caches {values} values per token and layer",
    "what an MLA model caches")
INSTALLATION_OVERHEAD = template(
    "installation_overhead",
    "guide: racks, power, cooling, switches, storage and staff add 50-100 % of the card price",
    "the guide's installation overhead")

# --- cards' rates and links (inputs.py, links.py)
RATE_MISSING = template(
    "rate_missing", "{card} lists no {wanted} rate; its {key} rate is used",
    "the card lacks the rate asked for; another of its rates stands in")
RATE_MISSING_OVERSTATES = template(
    "rate_missing_overstates", "{card} lists no {wanted} rate; its {key} rate is used, which overstates fp32 compute",
    "the card lacks an fp32 rate; its half-precision rate stands in and overstates it")
RATE_FP32_FLOOR = template(
    "rate_fp32_floor", "{card} lists no {wanted} or half-precision rate; its FP32 rate is used as a floor",
    "the card lacks a half-precision rate; its FP32 rate is a floor")
HALF_DERIVED = template(
    "half_precision_derived", "{card}: no half-precision figure is given; derived as dense {key} / 2",
    "the card's half-precision rate is derived from its INT8 or FP8 rate")
INTERCONNECT_LINE = template(
    "interconnect_line", "{card} gives no interconnect figure; the guide's PCIe figure for its line is used",
    "the card has no interconnect figure; the guide's PCIe figure stands in")
INTERCONNECT_PCIE = template(
    "interconnect_pcie",
    "{card} gives no interconnect figure; the guide's PCIe figure ({pcie_gb_per_s:g} GB/s per card, both "
    "directions) is used",
    "the card has no interconnect figure; the guide's PCIe figure stands in")
INTERCONNECT_PCIE_FLOOR = template(
    "interconnect_pcie_floor",
    "{card} gives no interconnect figure; the guide's PCIe figure ({pcie_gb_per_s:g} GB/s per card, both "
    "directions) is used as a floor for its dedicated link",
    "the card's dedicated link has no figure; the guide's PCIe figure is its floor")
LINK_RATES = template(
    "link_rates",
    "{both_bytes_per_s:GB|g} GB/s both ways, {each_bytes_per_s:GB|g} each way at {efficiency:.0%}; "
    "{latency_s:us|g} us a collective",
    "a link's rates as the collectives use them")
LINK_NOTE = template("link_note", "{rates} ({efficiency}; {latency})", "a link's rates and where they come from")
LINK_DOMAIN = template(
    "link_domain", "{card}'s {link} joins {cards} cards; larger groups talk over {slot}",
    "the card's bridge joins only some cards")
LINK_PCIE = template("link_pcie", "PCIe", "the PCIe slot, a card's link where it has no dedicated one")
LINK_DEDICATED = template("link_dedicated", "dedicated link", "a card's own link to its peers, unnamed in the catalog")
LINK_PCIE_RATED = template("link_pcie_rated", "PCIe ({both_bytes_per_s:GB|g} GB/s)",
                           "the PCIe slot beyond the cards a bridge joins, with its rate both ways")
LINK_NETWORK = template("link_network", "network ({machine_bytes_per_s:GB|g} GB/s per machine)",
                        "the network between machines, with each machine's rate")
LINK_NETWORK_RATES = template(
    "link_network_rates",
    "{machine_bytes_per_s:GB|g} GB/s per machine shared by {cards} cards at {efficiency:.0%}; "
    "{latency_s:us|g} us a collective",
    "a card's share of its machine's network as the collectives use it")
LINK_BEYOND_BRIDGE = template("link_beyond_bridge", "beyond the {cards} cards its bridge joins",
                              "the PCIe slot carries what crosses from one bridged group to another")

# --- machines and their power (plan.py, host.py, links.py)
LINE_WORDS = {line: template(f"line_{line}", line, f"the {line} product line, by name")
              for line in ("consumer", "workstation", "datacenter")}
MACHINE_HOLDS = {
    "datacenter": template(
        "machine_holds_datacenter",
        "a data-centre server holds 8 cards (an HGX/OAM baseboard or an 8-slot PCIe server)",
        "the cards a data-centre machine holds"),
    "workstation": template(
        "machine_holds_workstation", "a workstation tower holds 4 dual-slot cards",
        "the cards a workstation holds"),
    "consumer": template(
        "machine_holds_consumer",
        "a consumer build holds at most 4 cards (workstation-class board, risers, two supplies; a plain desktop "
        "takes 2)",
        "the cards a consumer build holds"),
}
RACK_DOMAIN = template(
    "rack_domain",
    "the {domain} is one NVLink domain of {cards} cards: collectives inside it stay on NVLink",
    "a rack-scale NVLink domain is one machine")
RACK_NETWORK = template(
    "rack_network",
    "per machine, between machines: the {domain}'s scale-out network, {network_gb_per_s:g} GB/s for its {cards} "
    "cards (a NIC port per card)",
    "a rack's scale-out network")
POWER_CARDS_PLUS_PLATFORM = template(
    "power_cards_plus_platform",
    "rated card power plus {platform_w} W for each machine's CPU, board, drives and fans, summed over the "
    "machines",
    "a desktop's or workstation's power")
POWER_GUIDE_SERVERS = template(
    "power_guide_servers",
    "servers at 10-12 kW per 8 x 700 W cards, scaled by the cards' power (guide 4.3), summed over the servers",
    "a guide tier's server power")
POWER_PLATFORM = template(
    "power_platform",
    "{platform}: {max_w:kW|g} kW at most for {cards} cards as its vendor publishes it; a machine with fewer "
    "cards draws {base_w:kW|.1f} kW plus their share of the rest; summed over the machines",
    "a published platform's power")
POWER_FITTED_SHARE = template(
    "power_fitted_share",
    "no published figure for a machine of {card}: {card_factor:.2f} x the cards' power plus {base_w:kW|.1f} kW a "
    "machine, fitted on the published platforms; summed over the machines",
    "a machine's power from the fit on published platforms")

# --- requests' defaults (inputs.py, compare.py, ranking.py)
KV_FP32 = template("kv_fp32", "KV cache in fp32 like the weights", "the KV cache follows fp32 weights")
KV_FP8_ENGINE = template(
    "kv_fp8_engine",
    "{engine} quantises the KV cache to FP8 with {precision} checkpoints (kv_cache_quant_algo FP8), as its "
    "published runs do",
    "the engine's FP8 KV cache with quantised checkpoints")
KV_HALF = template("kv_half", "KV cache in half precision", "the KV cache's default format")
CONTEXT_PROMPT_PLUS_OUTPUT = template(
    "context_prompt_plus_output", "prompt plus output tokens", "the context is the request's prompt and output")
OUTPUT_IS_REST = template("output_is_rest", "the rest of the context is generated", "the output fills the context")
PROMPT_IS_REST = template("prompt_is_rest", "the rest of the context is prompt", "the prompt fills the context")
CHEAPEST_FIRST = template("cheapest_first", "the cheapest to own first", "the default order of a comparison")
FEWEST_CARDS_FIRST = template(
    "fewest_cards_first", "no option meeting the job has a price: the fewest cards first, then the least power",
    "the default order of a comparison without prices: what it can compute")
GUIDE_WEIGHTS = template(
    "guide_weights", "the guide's weights for the {line} line", "the ranking's weights are the guide's")
RANK_COUNT = template(
    "rank_count", "the cards the model needs, up to one {line} machine's {cards}: {why}",
    "how many cards a ranked card is tried with")

# --- serving a target (capacity.py), recommending (recommend.py), comparing (compare.py)
TARGET_MET_ONE_COPY = template(
    "target_met_one_copy",
    "{copies} copy of {plan} ({cards} x {card}), each running {sequences} sequences at {per_user:.1f} tokens/s "
    "per user (up to {most} within the target)",
    "the plan that meets the serving target",
    one="{copies} copy of {plan} ({cards} x {card}), each running {sequences} sequence at {per_user:.1f} "
    "tokens/s per user (up to {most} within the target)",
    count="sequences")
TARGET_MET_COPIES = template(
    "target_met_copies",
    "{copies} copies of {plan} ({cards} x {card}), each running {sequences} sequences at {per_user:.1f} "
    "tokens/s per user (up to {most} within the target)",
    "the plan that meets the serving target",
    one="{copies} copies of {plan} ({cards} x {card}), each running {sequences} sequence at "
    "{per_user:.1f} tokens/s per user (up to {most} within the target)",
    count="sequences")
NO_PLAN_HOLDS_ONE = template(
    "no_plan_holds_one_sequence", "no plan holds the model and one sequence on {card} cards",
    "the card cannot serve the model at all")
TARGET_SPEED_MISSED = template(
    "target_speed_missed",
    "{asked:g} tokens/s per user asked, at most {speed:.1f} on any plan tried (best: {plan})",
    "the speed per user asked is out of reach")
TARGET_TTFT_MISSED = template(
    "target_ttft_missed", "first token within {asked_s:g} s asked, a prompt alone takes {ttft_s:.2f} s",
    "the time to first token asked is out of reach")
TARGET_NOT_MET = template(
    "target_not_met", "the target is not met on any plan tried", "the target is out of reach")
INFERENCE_CARD = template(
    "inference_card", "{card} is an inference card: no half-precision training rate",
    "the card cannot train")
NEEDS_MORE_CARDS = template(
    "needs_more_cards",
    "on {limit} card(s) each needs {need_bytes:GB|.1f} GB, {usable_bytes:GB|.1f} GB usable; {cards} cards would "
    "hold it",
    "the job needs more cards than allowed")
NEEDS_ANY_CARDS = template(
    "needs_any_cards",
    "on {limit} card(s) each needs {need_bytes:GB|.1f} GB, {usable_bytes:GB|.1f} GB usable; no number of cards "
    "would hold it",
    "no count of the card holds the job")
CARD_POWER_OVER = template(
    "card_power_over", "{power_w:g} W per card exceeds the {allowed_w:g} W allowed", "the card draws too much")
MACHINES_POWER_OVER = template(
    "machines_power_over", "{cards} cards in their machines draw {power_w:,.0f} W, over the {allowed_w:,.0f} W "
    "allowed in all", "the machines draw too much in all")
OVER_BUDGET = template(
    "over_budget", "{cards} cards cost {total:,.0f}, over the budget of {budget:,.0f}", "the cards cost too much",
    one="{cards} card costs {total:,.0f}, over the budget of {budget:,.0f}",
    count="cards")
CARDS_HOLD_IT = template(
    "cards_hold_it",
    "{cards} x {card} hold it ({need_bytes:GB|.1f} GB of {usable_bytes:GB|.1f} GB usable each); {figure} {value:,.1f}",
    "the cards hold the job, and the figure they are ranked by")
MUST_NOT_SPLIT = template(
    "must_not_split", "the target needs the model split over {cards} cards, and it must not be",
    "the target needs a split the constraints forbid")
TARGET_NEEDS_MORE = template(
    "target_needs_more", "the target needs {cards} x {card} ({reason}); {given} given",
    "the cards given are fewer than the target needs")

# --- the serving plan's why (questions/placing.py), the released format (inputs.py), scenarios
ANY_SERVING_ENGINE = template(
    "any_serving_engine", "a serving engine (no engine named)", "the engine, when none is named")
ENGINE_SPLITS_LAYERS = template(
    "engine_splits_layers",
    "{engine} splits the layers over every card: a token visits the cards in turn, so one stream reads no "
    "faster than on one card",
    "why a layer split gives one stream no more bandwidth")
ENGINE_TENSOR_PLAN = template(
    "engine_tensor_plan",
    "{engine}: tensor parallelism inside a machine at a power-of-two degree that divides {heads}, {across} "
    "across machines, copies (replicas) on the cards left over",
    "how a serving engine spreads a model over cards")
HEADS_COUNT = template("heads_count", "{heads} heads and {kv_heads} KV heads", "the model's attention heads")
THE_HEADS = template("the_heads", "the heads", "the model's attention heads, when not known")
EXPERT_PARALLELISM = template("expert_parallelism", "expert parallelism", "a way of spreading a model")
PIPELINE_STAGES = template("pipeline_stages", "pipeline stages", "a way of spreading a model")
RELEASED_IN = template(
    "released_in", "{model} ships in {precision} ({source}); other formats are in alternatives",
    "the format the model is released in")
RELEASED_EXPERTS_IN = template(
    "released_experts_in",
    "{model} ships its routed experts in {precision}, every other tensor in 16-bit ({source}); other formats are "
    "in alternatives",
    "the format the model's experts are released in")
SCENARIO_SUPPLIES = template(
    "scenario_supplies", "the guide's scenario '{scenario}' ({title})", "a value the guide's scenario supplies")

# --- the alternatives' notes (questions/estimate.py), the options' times (compare.py)
ALT_DOES_NOT_FIT = template("alternative_does_not_fit", "does not fit", "the alternative does not fit")
ALT_NO_COUNT = template("alternative_no_count", "does not fit on any count", "no count holds the alternative")
ALT_WEIGHTS = template(
    "alternative_weights", "{weights_bytes:GB|.1f} GB of weights; {plan}", "an alternative format's weights and plan")
ALT_FLOPS = template(
    "alternative_flops", "{flops:g} FLOPs per parameter and token; {plan}", "an alternative recipe's FLOPs and plan")
ALT_PIPELINE = template(
    "alternative_pipeline",
    "pipeline parallelism holds it on {cards} cards, where the engine's tensor parallelism needs {needs}; one "
    "stream gains no bandwidth from the extra stages",
    "a pipeline holds the model on fewer cards")
RUN_FINISHES = template("run_finishes", "{cards} cards finish in {time_s:days|,.1f} days", "the run's time",
    one="{cards} card finishes in {time_s:days|,.1f} days",
    count="cards")
RUN_MISSES_DEADLINE = template(
    "run_misses_deadline", "{cards} cards take {time_s:days|,.1f} days; {needed} meet the {deadline_days:g}-day "
    "deadline", "the run misses the deadline; the count that meets it follows",
    one="{cards} card takes {time_s:days|,.1f} days; {needed} meet the {deadline_days:g}-day deadline",
    count="cards")

# --- custom cards (cards.py infer_line)
LINE_DATACENTER = template(
    "line_inferred_datacenter", "no line given: a dedicated link or more than {memory_gib} GB means a data-centre card",
    "the line a custom card was taken to be")
LINE_WORKSTATION = template(
    "line_inferred_workstation",
    "no line given: ECC or more than {consumer_gib} GB on PCIe means a workstation card",
    "the line a custom card was taken to be")
LINE_CONSUMER = template(
    "line_inferred_consumer",
    "no line given: a PCIe card of {consumer_gib} GB or less without ECC is taken as consumer",
    "the line a custom card was taken to be")

# --- the machines around the cards (host.py)
MACHINES_EACH_NEED = template(
    "machines_each_need",
    "{machines} machines ({split} cards): each needs its own PSU (or feeds), platform and network port",
    "several machines each need their own power, platform and network")
FLAGSHIP_SPIKES = template(
    "flagship_spikes",
    "flagship consumer cards spike to twice their rated power: 850 W+ PSU with a strong single 12 V rail (guide "
    "section 2.2)",
    "a flagship consumer card's transients")
PSU_SPLIT = template(
    "psu_split",
    "a {psu_w} W PSU exceeds one {unit_w} W unit: split across two supplies or a 230 V circuit, and keep one tier "
    "of headroom (guide section 5.1)",
    "a build's power beyond one supply")
CASE_AIRFLOW = template(
    "case_airflow",
    "case airflow: front intake, rear exhaust; showcase cases built for liquid cooling starve air-cooled cards "
    "(guide section 5.1)",
    "a consumer build's cooling")
SERVER_FEEDS = template(
    "server_feeds",
    "each machine at {span} kW ({basis}): two independent feeds per machine, UPS sized at 1.5x (guide section 4.3)",
    "a server's power and feeds")
SERVER_NOISE = template(
    "server_noise", "data-centre fans run above 70 dB: a machine room, never an office (guide section 4.3)",
    "a server's noise")
SERVER_STORAGE = template(
    "server_storage",
    "plan storage that keeps the cards fed: local NVMe caches or distributed storage with prefetch, or "
    "utilisation falls from about 90 % to 50 % (guide section 4.3)",
    "a server's storage")
BASIS_GUIDE = template("basis_guide", "guide section 4.3", "where a server's power comes from")
BASIS_PUBLISHED = template("basis_published", "{platform}, as published", "where a server's power comes from")
BASIS_FITTED = template("basis_fitted", "fitted on published platforms", "where a server's power comes from")

# --- the headline figures' ranges (questions/estimate.py, throughput.py)
RANGE_STATE = template(
    "range_model_state",
    "{low_per_param:g}-{high_per_param:g} B/param of model state ({low_bytes:GB|.1f}-{high_bytes:GB|.1f} GB)",
    "what the memory range rests on")
RANGE_TRAINING = template(
    "range_training", "MFU 30-50 % and the step model against the guide's curve",
    "what the training time's range rests on")
RECIPE_FITS = template(
    "recipe_fits",
    "the standard recipe does not fit; {recipe} does ({why})",
    "a full fine-tune too large for the cards with the standard recipe is answered with one that fits")
RECIPE_LOW_MEMORY = template(
    "recipe_low_memory",
    "bf16 weights without fp32 master copies, the optimizer step in the backward pass, paged 8-bit AdamW states in "
    "host memory, activation checkpointing (torchtune's single-card full fine-tune)",
    "what the low-memory recipe is")
RECIPE_CPU_OFFLOAD = template(
    "recipe_cpu_offload",
    "fp32 master weights and optimizer states in host memory, the optimizer step on the CPU, gradients and weights "
    "over PCIe each step (ZeRO-Offload, FSDP CPU offload)",
    "what the CPU-offload recipe is")
RECIPE_STANDARD = template(
    "recipe_standard", "bf16 weights and gradients, fp32 master weights and optimizer states on the cards",
    "what the standard recipe is")
PART_HOST_STATES = template(
    "part_host_states", "optimizer states and master weights: in host memory, not on the card",
    "a memory part held in host memory by the recipe")
PART_LAYER_GRADIENTS = template(
    "part_layer_gradients", "gradients (bf16, one layer at a time: the step runs in the backward pass)",
    "the gradients a card holds when the optimizer steps in the backward pass")
RANGE_CALIBRATED = template(
    "range_calibrated",
    "x{low:.2f}-x{high:.2f} of the typical {figure}: the 10th-90th percentile of published runs of {regime} against "
    "the service's estimates out of sample ({runs} runs from {sources} publications; {coverage:.0%} fell inside)",
    "what a calibrated range rests on: its regime, the runs and publications behind it, and the share inside")
RANGE_THIN = template(
    "range_thin",
    "x{low:.2f}-x{high:.2f} of the typical {figure}, with thin evidence: few publications measured questions of "
    "this kind, so the band of {regime} ({runs} runs from {sources} publications; {coverage:.0%} fell inside out "
    "of sample) is stretched to hold the nearest runs",
    "a calibrated range where the question's own kind has fewer than three publications")
RANGE_NO_EVIDENCE = template(
    "range_no_evidence",
    "no published run of this kind ({figure} on {what}): x{low:.2f}-x{high:.2f} of the typical figure, the widest "
    "range this figure has, widened again",
    "a range where no publication measured the cards' maker or the engine for this figure")
FIGURE_DECODE = template("figure_decode", "decode speed", "a figure a range is calibrated for")
FIGURE_FULL_LOAD = template("figure_full_load", "output at full load", "a figure a range is calibrated for")
FIGURE_TTFT = template("figure_ttft", "time to first token", "a figure a range is calibrated for")
FIGURE_TRAINING = template("figure_training_time", "training time", "a figure a range is calibrated for")
FIGURE_FINETUNE_SPEED = template("figure_finetune_speed", "fine-tuning time", "a figure a range is calibrated for")
FIGURE_FINETUNE_MEMORY = template("figure_finetune_memory", "fine-tuning peak memory",
                                  "a figure a range is calibrated for")

# --- the cards asked
FAMILY_TAKEN_AS = template(
    "family_taken_as",
    "{name!r} is taken as {card} ({why}); it may also mean {others}: name the card to choose",
    "a family name (\"A100\") was taken as its most deployed variant; the others it may mean follow")

# --- the model and its memory
CONTEXT_BEYOND_POSITIONS = template(
    "context_beyond_positions",
    "context of {context_tokens:,} tokens is beyond {model}'s {positions:,} positions ({source}): the model "
    "was not trained that long and its output degrades past it; the memory and speed shown are for the length "
    "asked",
    "the context asked is longer than the model was trained for; the figures still follow the formulas")
GIVEN_BY_CALLER = template("given_by_caller", "given by the caller",
                           "where a figure comes from: the request gave it (a price, a model's size or positions)")
CARD_GIVEN = template("card_given_by_caller", "figures given by the caller",
                      "where a card's figures come from: the request gave them")
CONFIG_POSITIONS = template("config_positions", "config max_position_embeddings {positions:,}",
                            "the model's positions are its config's max_position_embeddings")
CONFIG_POSITIONS_SCALED = template(
    "config_positions_scaled",
    "config max_position_embeddings {positions:,} (rope_scaling {kind} x{factor:g} from {original:,})",
    "the config's max_position_embeddings already counts its rope scaling of the original positions")
ROPE_SCALED_POSITIONS = template(
    "rope_scaled_positions", "rope_scaling {kind} x{factor:g} from {original:,} positions = {positions:,}",
    "the model's positions are its original positions stretched by the config's rope scaling")
KV_NOT_COUNTED = template(
    "kv_cache_not_counted",
    "KV cache not counted: the model gives no layers, kv_heads and head_dim (or hidden_size and attention_heads); "
    "the fit and speed ignore it",
    "the model's shape does not say how large its KV cache is, so memory and speed leave it out")
ACTIVATIONS_NOT_COUNTED = template(
    "activations_not_counted",
    "activations not counted: the model gives no layers and hidden_size; the guide adds about {share:pct|.0f} % on "
    "top of model state (7B: 112 GB -> 130 GB+)",
    "training memory leaves the activations out: the model's shape is unknown")
SCORES_NOT_COUNTED = template(
    "attention_scores_not_counted",
    "attention scores not counted: the model gives no attention_heads",
    "without recomputation the attention scores are stored, but the model does not say how many heads it has")

# --- fitting the job on cards
CLAUSES = template("clauses", "{clauses}", "a sentence made of clauses, each a message of its own")
FIT_HOLDS = template(
    "fit_holds",
    "{cards} x {card}: each card holds {state_bytes:GB|.1f} GB of model state and {rest_bytes:GB|.1f} GB of KV "
    "cache, activations and runtime ({need_bytes:GB|.1f} GB)",
    "what each card of the plan must hold")
FIT_HOLDS_PLAN = template(
    "fit_holds_plan",
    "{cards} x {card} ({plan}): each card holds {state_bytes:GB|.1f} GB of model state and {rest_bytes:GB|.1f} GB "
    "of KV cache, activations and runtime ({need_bytes:GB|.1f} GB)",
    "what each card of the plan must hold")
FIT_USABLE = template(
    "fit_usable", "{usable_bytes:GB|.1f} GB of its {memory_bytes:GiB|g} GiB ({memory_bytes:GB|.1f} GB) is usable",
    "what a card can give the job")
FIT_USABLE_SPARE = template(
    "fit_usable_spare",
    "{usable_bytes:GB|.1f} GB of its {memory_bytes:GiB|g} GiB ({memory_bytes:GB|.1f} GB) is usable, "
    "{spare_bytes:GB|.1f} GB to spare",
    "what a card can give the job, and what it has left")
FIT_USABLE_SHORT = template(
    "fit_usable_short",
    "{usable_bytes:GB|.1f} GB of its {memory_bytes:GiB|g} GiB ({memory_bytes:GB|.1f} GB) is usable, "
    "{short_bytes:GB|.1f} GB short",
    "what a card can give the job, and how much it lacks")
FIT_IDLE = template("fit_idle", "the plan leaves {idle} of the {cards} cards idle", "cards the plan cannot use")
FIT_IDLE_SPARE = template(
    "fit_idle_spare", "the plan leaves {idle} of the {cards} cards idle, {spare_bytes:GB|.1f} GB to spare",
    "cards the plan cannot use, and what each card has left")
FIT_IDLE_SHORT = template(
    "fit_idle_short", "the plan leaves {idle} of the {cards} cards idle, {short_bytes:GB|.1f} GB short",
    "cards the plan cannot use, and how much each card lacks")
FIT_NO_COUNT = template("fit_no_count", "no number of these cards holds it", "no count of the card holds the job")
FIT_CARDS_NEEDED = template("fit_cards_needed", "{cards} cards are needed", "the least count that holds the job")
FITS_NOWHERE = template(
    "fits_nowhere", "does not fit on any number of {card}: {reason}",
    "no count of the card holds the job; the reason says what each card would need")
FITS_ON_MORE = template(
    "fits_on_more_cards", "does not fit: {reason}; speed and time are shown for {cards} cards",
    "the cards asked do not hold the job; the figures are for the least count that does")
CLUSTER_COMPLEXITY = template(
    "cluster_complexity",
    "more than {cards} cards: network topology and scheduling complexity rise steeply (guide section 5.3); "
    "plan the interconnect before the cards",
    "beyond this many cards the guide says the cluster itself becomes the hard part")
IDLE_CARDS_GIVE_PLAN = template(
    "idle_cards_give_plan",
    "the plan ({plan}) leaves {idle} of {cards} cards idle: give workload.parallelism to use them another way",
    "the plan chosen does not use every card asked; a plan given can")
IDLE_CARDS_MULTIPLE = template(
    "idle_cards_multiple",
    "the plan ({plan}) leaves {idle} of {cards} cards idle: a count that is a multiple of the copy uses them all",
    "the count is not a multiple of the cards one copy needs")
LAYER_SPLIT_SPANS_MACHINES = template(
    "layer_split_spans_machines",
    "a layer split over {cards} cards spans {machines} machines: llama.cpp needs its RPC backend, and every hop "
    "between machines crosses the network",
    "a layer split wider than one machine")
TENSOR_SPANS_MACHINES = template(
    "tensor_spans_machines",
    "tensor parallelism over {cards} cards spans machines: every layer's all-reduces cross the network",
    "tensor parallelism wider than one machine")

# --- training
TRAINING_BATCH_FITS_NOWHERE = template(
    "training_batch_fits_nowhere",
    "the training batch (micro-batch {micro_batch} of {context_tokens:,} tokens) does not fit on any number of "
    "{card}, so no time is quoted: {found}; else tensor parallelism over more cards, a shorter context or a card "
    "with more memory",
    "no count of the card holds the training batch asked; what would fit follows")
FIX_MICRO_BATCH_AND_RECOMPUTE = template(
    "fix_micro_batch_and_full_recomputation",
    "micro-batch {micro_batch} with full recomputation fits on {cards} x {card}",
    "a smaller micro-batch with full recomputation makes the batch fit")
FIX_MICRO_BATCH = template(
    "fix_micro_batch", "micro-batch {micro_batch} fits on {cards} x {card}", "a smaller micro-batch makes it fit")
FIX_RECOMPUTE = template(
    "fix_full_recomputation", "full recomputation fits on {cards} x {card}", "full recomputation makes it fit")
FITS_AS_ASKED = template(
    "fix_as_asked", "fits on {cards} x {card}", "the batch as asked fits on this many cards")
FIX_NONE = template(
    "fix_none", "no micro-batch fits, even with full recomputation", "nothing but more memory per card makes it fit")
GLOBAL_BATCH_GROWS = template(
    "global_batch_grows",
    "the global batch grows to {tokens:,} tokens, over the {asked:,.0f} asked: {copies} data-parallel copies of a "
    "{micro_batch}-sequence micro-batch already take more; fewer copies (more tensor or pipeline parallelism) or "
    "a larger batch fit it",
    "the plan's smallest global batch is larger than the one asked")
PIPELINE_BUBBLE = template(
    "pipeline_bubble",
    "the pipeline bubble idles the stages {share:.0%} of each step ({stages} stages, {micro_batches} "
    "micro-batches): a larger global batch, fewer stages, or more interleaved stages (virtual_stages, now "
    "{virtual_stages}) shrink it",
    "the pipeline's stages wait for each other a large share of each step")
STEP_MOSTLY_WAITING = template(
    "step_mostly_waiting",
    "only {share:.0%} of each {step_s:.2f} s step is compute on this plan ({plan}); {worst} cost the most "
    "({worst_s:.2f} s a step): a faster link, a larger global batch or another plan",
    "communication or the bubble takes a large share of each step; the costliest part is named")
PART_TENSOR = template("part_tensor_all_reduces", "tensor-parallel all-reduces", "a part of a training step")
PART_EXPERT = template("part_expert_all_to_alls", "expert all-to-alls", "a part of a training step")
PART_BUBBLE = template("part_pipeline_bubble", "the pipeline bubble", "a part of a training step")
PART_DATA = template("part_data_parallel_traffic", "exposed data-parallel traffic", "a part of a training step")
GRADIENT_SYNC_BINDS = template(
    "gradient_sync_binds",
    "gradient sync ({sync_s:ms|.0f} ms) takes longer than a step's compute ({compute_s:ms|.0f} ms): the "
    "interconnect binds; a faster link or fewer, larger cards",
    "the gradients' exchange is slower than the step's compute")
LONG_RUN_WITHOUT_ECC = template(
    "long_run_without_ecc",
    "a multi-day run without ECC memory: a silent memory error can make the loss diverge days in (guide section "
    "3.1); checksum or use ECC cards",
    "the card has no ECC and the run lasts days")
RUN_BELOW_ONE_STEP = template(
    "run_below_one_step",
    "the run's {tokens:,.0f} tokens are less than one optimizer step of {step_tokens:,.0f}: it takes one step; "
    "give global_batch_tokens to shrink the step",
    "the training tokens asked do not fill one global batch")
NO_INTERCONNECT_BANDWIDTH = template(
    "no_interconnect_bandwidth", "{card} gives no interconnect bandwidth: gradient sync time not computed",
    "a custom card without an interconnect figure")

# --- deadlines
DEADLINE_NO_COUNT_HOLDS = template(
    "deadline_no_count_holds",
    "no number of {card} cards holds the job, so none meets the {deadline_days:g}-day deadline",
    "the job fits on no count of the card, so no count meets the deadline")
DEADLINE_UNREACHABLE = template(
    "deadline_unreachable", "no number of {card} cards up to {max_cards} finishes in {deadline_days:g} days",
    "even the most cards the service plans for miss the deadline")
DEADLINE_MISSED = template(
    "deadline_missed", "{cards} cards take {time_s:days|.1f} days: {needed} meet the {deadline_days:g}-day deadline",
    "the count asked misses the deadline; the least count that meets it follows",
    one="{cards} card takes {time_s:days|.1f} days: {needed} meet the {deadline_days:g}-day deadline",
    count="cards")

# --- costs and duty
CARD_PRICE_UNKNOWN = template(
    "card_price_unknown", "no card price given or known: cost of ownership not computed (give card_price)",
    "without a price the cost of ownership is left out")
CARD_PRICE_CURRENCY = template(
    "card_price_currency",
    "the card price is in {price_currency} and electricity in {currency}: the totals add them as given; convert "
    "one first",
    "two currencies are added as given")
PURCHASE_PRICE_CURRENCY = template(
    "purchase_price_currency",
    "the purchase price of {card} is in {price_currency} and electricity in {currency}: the totals add them as "
    "given; convert one first",
    "two currencies are added as given")
RENTAL_PRICE_CURRENCY = template(
    "rental_price_currency",
    "the rental price of {card} is in {price_currency} and electricity in {currency}: the totals add them as "
    "given; convert one first",
    "two currencies are added as given")
NO_PRICE_FOR_CARD = template(
    "no_price_for_card",
    "no price for {card}: capital cost and cost of ownership not computed (give prices, or the operator's "
    "catalog file)",
    "the card has no price, so its capital cost and cost of ownership are left out")
CONSUMER_AROUND_THE_CLOCK = template(
    "consumer_around_the_clock",
    "a consumer card asked to run around the clock: it is built for a few hours a day; cap power at {cap:pct|.0f} %"
    " or it throttles silently by about {throttle:pct|.0f} %, and expect clocks to wander "
    "{wander_low:pct|.0f}-{wander_high:pct|.0f} % over {hours} hours (guide sections 2.3, 3.1)",
    "a consumer card on a data-centre duty")
NO_ECC_SERVING = template(
    "no_ecc_serving",
    "no ECC memory: a silent memory error goes unnoticed over months of serving (guide section 3.1)",
    "the card has no ECC")
PCIE_TRAINING = template(
    "pcie_training",
    "the cards talk over PCIe: multi-card training loses {loss:pct|.0f} %+ of its efficiency against a dedicated "
    "interconnect (guide section 5.3)",
    "training across cards joined only by PCIe")
RACK_POWER_ONE = template(
    "rack_power_one_server",
    "rack power: the server draws up to {machine_w:kW|,.1f} kW: the rack must supply and cool it, with two "
    "independent feeds and a {ups_w:kW|,.1f} kW UPS (guide section 4.3)",
    "what the rack must supply and cool for one server")
RACK_POWER_MANY = template(
    "rack_power_servers",
    "rack power: {machines} servers at up to {machine_w:kW|,.1f} kW each, {rack_w:kW|,.1f} kW in all: the racks "
    "must supply and cool it, with two independent feeds per server and a {ups_w:kW|,.1f} kW UPS (guide section "
    "4.3)",
    "what the racks must supply and cool for several servers")
PSU_OVER_ONE_UNIT = template(
    "psu_over_one_unit",
    "each machine needs a {psu_w} W PSU: more than one {unit_w} W unit gives; split it over two supplies or a "
    "230 V circuit (guide section 5.1)",
    "a workstation's draw is beyond one power supply")

# --- comparing, ranking, recommending
NO_OPTION_MEETS_TARGET = template(
    "no_option_meets_target", "no option compared meets the target", "every option compared misses the target")
NO_CARD_MEETS_TARGET = template(
    "no_card_meets_target", "no card compared meets the target on any plan tried",
    "no card reaches the serving target on any plan the service tried")
NO_CARD_PASSES_MEMORY = template(
    "no_card_passes_memory", "no compared card passes the memory threshold",
    "every card ranked is below the memory the job needs")
BUDGET_UNCHECKED = template(
    "budget_unchecked",
    "the budget of {budget:,.0f} cannot be checked: no card has a price (give prices, or an operator's catalog "
    "with prices)",
    "a budget was given but no card has a price")
NO_TIER_MEETS = template(
    "no_tier_meets_constraints", "no tier of any allowed line meets the constraints",
    "the recommendation found no card for the constraints")


# --- recommend.py: why a line is ruled out, the reasons, the guide's scenarios, the summary
CONSUMER_HOURS = template(
    "line_consumer_hours", "runs {hours_per_day:g} h continuously; consumer cards are built for a few hours a day",
    "the job runs longer a day than consumer cards are built for")
CONSUMER_NO_ECC = template("line_consumer_no_ecc", "ECC is required; consumer cards have none",
                           "ECC is required, which rules out consumer cards")
CONSUMER_NOT_CERTIFIED = template(
    "line_consumer_not_certified", "certified drivers are required; consumer cards have none",
    "certified drivers are required, which rules out consumer cards")
DATACENTER_NOT_CERTIFIED = template(
    "line_datacenter_not_certified", "professional software needs workstation drivers with certification",
    "certified drivers are required, which rules out data-centre cards")
LINE_RULED_OUT = template("line_ruled_out", "{line}: {why}", "a product line the constraints rule out, and why")
LINE_PCIE_CLUSTER = template(
    "line_pcie_cluster",
    "{line}: a training job that needs several of its largest cards needs a fast interconnect, and this line "
    "talks over PCIe (guide 6.4: never save 10 % on the interconnect, it costs 30 %+ of training efficiency)",
    "a training job that needs several cards of a PCIe-only line skips that line")
LINE_MISSES_TARGET = template("line_misses_target", "{line}: no tier meets the target within the power limit",
                              "no tier of the line reaches the serving target within the power limit")
LINE_HOLDS_NOTHING = template(
    "line_holds_nothing", "{line}: no tier holds the model within {cards} card(s) and the power limit",
    "no tier of the line holds the model within the cards and power allowed")
LINE_LOWEST_ALLOWED = template("line_lowest_allowed", "product line {line}: the lowest line the constraints allow",
                               "the line recommended is the lowest the constraints allow")
MEETS_TARGET = template("meets_target", "meets the target", "the choice reaches the serving target")
MEMORY_FITS = template("memory_fits", "memory fits", "the choice holds the model in memory")
PER_COST_SUFFIX = " per unit of cost"
RANKED_PER_COST = template("ranked_per_cost", "{figure}" + PER_COST_SUFFIX, "a figure divided by the cards' price")
RANKED_BY = {
    figure: template(f"ranked_by_{figure.replace(' ', '_')}", figure, meaning)
    for figure, meaning in (
        ("training_tokens_per_s", "ranked by training tokens per second"),
        ("total_tokens_per_s", "ranked by the tokens per second of all streams"),
        ("decode_tokens_per_s_expected", "ranked by one stream's expected decode speed"),
        ("fewest cards for the target", "ranked by the fewest cards that reach the serving target"),
        ("cost for the target", "ranked by the least cost that reaches the serving target"),
    )
}
CHOICE_BEST = template(
    "choice_best", "{cards} x {card}: {met}, and it is the best by {ranked_by} ({value:,.1f})",
    "the tier recommended and the figure it is best by")
TARGET_MET_ON_MACHINES = template(
    "target_met_on_machines", "{reason}; {machines} machine(s), {power_w:,.0f} W",
    "the plan that reaches the serving target, the machines it takes and their draw")
RECOMMEND_NONE = template("recommend_none", "No tier of any allowed line meets these constraints.",
                          "the summary when no card meets the constraints")
RECOMMEND_SPLIT = template(
    "recommend_split",
    "No tier of any allowed line meets these constraints on one card, the count allowed without "
    "constraints.splittable; split over cards, {cards} x {card} ({line} line) would.",
    "the summary when nothing meets the constraints on one card and a split over cards would")
RECOMMENDED = template(
    "recommended",
    "Recommended: {cards} x {card} ({line} line): it holds the model and is the best by {ranked_by} ({value:,.1f}).",
    "the summary of a recommendation")
SCENARIO_DEVELOPER = template("scenario_developer", "one developer, 7B-13B fine-tune and inference",
                              "the guide's scenario: one developer")
SCENARIO_DEVELOPER_GUIDE = template(
    "scenario_developer_guide",
    "C70 (tight: LoRA at batch 1, 2K sequence) or W-A (7B LoRA at 4K, 13B 4-bit inference at 20-30 tokens/s)",
    "the guide's answer for one developer")
SCENARIO_TEAM_INFERENCE = template(
    "scenario_team_inference", "team inference service, 30B-70B, dozens of concurrent users",
    "the guide's scenario: a team's inference service")
SCENARIO_TEAM_INFERENCE_GUIDE = template(
    "scenario_team_inference_guide",
    "2 x W-B (replicas, data parallel) or 2-4 x D-S (tensor parallel); 70B half precision needs 3 x W-B or "
    "2 x D-M", "the guide's answer for a team's inference service")
SCENARIO_TRAINING_CLUSTER = template(
    "scenario_training_cluster", "small training cluster, 7B-13B full fine-tune",
    "the guide's scenario: a small training cluster")
SCENARIO_TRAINING_CLUSTER_GUIDE = template(
    "scenario_training_cluster_guide",
    "4 x 80 GB (33 GB each) for 7B, 8 cards for 13B; a high-speed interconnect; stay at or under 32 cards",
    "the guide's answer for a small training cluster")
GUIDE_SAME_CHOICE = template("guide_same_choice", "{tier}: the service's choice too, {cards} card(s)",
                             "the service chose the guide's tier, on the guide's count")
GUIDE_SAME_TIER_OTHER_COUNT = template(
    "guide_same_tier_other_count",
    "{tier}: the service's choice too, {cards} card(s) where the guide says {guide_cards}: {reason}",
    "the service chose the guide's tier on another count")
GUIDE_TIER_NOT_EVALUATED = template(
    "guide_tier_not_evaluated", "{tier}: not evaluated; a lower line ({line}) already meets the constraints",
    "the guide's tier belongs to a line above the one recommended")
GUIDE_TIER_REFUSED = template("guide_tier_refused", "{tier}: the service disagrees: {reason}",
                              "the guide's tier does not meet the constraints by the service's figures")
GUIDE_TIER_BELOW = template(
    "guide_tier_below",
    "{tier}: fits on {cards} card(s) with {figure} {value:,.1f}, below {chosen}'s {chosen_value:,.1f}",
    "the guide's tier fits but ranks below the service's choice")

# --- ranking.py, capacity.py: cards left out
RANK_NEEDS_MORE = template("rank_needs_more_cards", "needs {cards} cards, {allowed} allowed",
                           "the card needs more cards than the ranking allows")
RANK_HOLDS_NOTHING = template("rank_holds_nothing", "holds it on no number of cards",
                              "no number of these cards holds the job")
TARGET_NEEDS_TOO_MANY = template(
    "target_needs_too_many", "the target needs {cards:,} x {card}, more than the {most:,} cards sized",
    "the serving target needs more cards than the service sizes")

# --- a question the service could not answer, where it stands inside a larger answer
NOT_ANSWERED = template(
    "not_answered", "{detail}",
    "a part of the answer could not be computed; detail is the error's text (English), as the error "
    "answer of the same question would give it")


# --- normalize.py: the rules a marketing figure went through
NORMALIZE_SPARSE = template(
    "normalize_sparse", "sparse: a 2:4 structured-sparsity figure is twice the dense rate, so / 2",
    "the figure was quoted with 2:4 sparsity and is halved")
NORMALIZE_FP16_ACCUMULATE = template(
    "normalize_fp16_accumulate",
    "accumulate fp16: GeForce cards quote FP16-accumulate rates, twice the FP32-accumulate rate training uses, "
    "so / 2", "the figure was quoted with FP16 accumulate and is halved")
NORMALIZE_TO_BF16 = template(
    "normalize_to_bf16", "{precision} to bf16: dense {precision} runs at {factor:g}x dense bf16 on tensor units, "
    "so / {factor:g}", "a lower precision's rate divided down to bf16")
NORMALIZE_TF32_TO_BF16 = template(
    "normalize_tf32_to_bf16", "{precision} to bf16: dense tf32 runs at half dense bf16, so x 2",
    "tf32's rate doubled to bf16")


# --- plan.py: a plan in words ("tensor 4 x pipeline 2", "one card")
PLAN_DEGREE = {
    name: template(f"plan_{name}", f"{words} {{degree}}", f"the plan's {meaning} degree")
    for name, words, meaning in (("tensor", "tensor", "tensor-parallel"), ("pipeline", "pipeline", "pipeline"),
                                 ("expert", "attention data-parallel", "attention data-parallel"),
                                 ("data", "data", "data-parallel"), ("replicas", "replicas", "replica"))
}
PLAN_ONE_CARD = template("plan_one_card", "one card", "the plan runs on one card")
PLAN_TIMES = template("plan_times", "{first} x {rest}", "two parts of a plan, multiplied")
PLAN_EXPERTS_SPREAD = template(
    "plan_experts_spread", "{plan}, experts spread over {cards} cards (expert {cards})",
    "an MoE plan: the routed experts spread over the cards that hold the model")


# --- precision.py: formats made on request (the fixed formats' notes are coded in precision.py)
FORMAT_GROUPED = template(
    "format_grouped",
    "{kind} {bits}-bit, group size {group}: an fp16 scale and a {bits}-bit zero per group ({bits} + "
    "{scale_and_zero_bits}/{group} bits); embeddings and output head stay in 16-bit",
    "a GPTQ or AWQ layout: bits per weight with the group's scale and zero point")
FORMAT_AS_GGUF = template(
    "format_as_gguf", "{format}; as a GGUF file the kept tensors are Q8_0 ({bits:g} bits)",
    "an MXFP4 checkpoint as llama.cpp stores it")

# --- memory.py: the parts of the memory and how each is counted
PART_WEIGHTS = template("part_weights", "weights ({precision})", "the model's weights, in their format")
PART_GRADIENTS = template("part_gradients", "gradients ({precision})", "the gradients, in their format")
PART_MASTER = template("part_master_weights", "master weights (fp32)", "mixed precision's fp32 copy of the weights")
PART_GRADIENT_PARTITION = template("part_fp32_gradient_partition", "fp32 gradient partition (DeepSpeed)",
                                   "DeepSpeed's fp32 gradient partition")
# An optimizer's states (training.OPTIMIZERS names each by its template)
PART_ADAM_M_FP32 = template("part_adam_m_fp32", "Adam m (fp32)", "Adam's first moment in fp32")
PART_ADAM_V_FP32 = template("part_adam_v_fp32", "Adam v (fp32)", "Adam's second moment in fp32")
PART_ADAM_M_8BIT = template("part_adam_m_8bit", "Adam m (8-bit)", "8-bit Adam's first moment")
PART_ADAM_V_8BIT = template("part_adam_v_8bit", "Adam v (8-bit)", "8-bit Adam's second moment")
PART_MOMENTUM_FP32 = template("part_momentum_fp32", "momentum (fp32)", "SGD's momentum in fp32")
PART_FROZEN_BASE = template("part_frozen_base", "frozen base ({precision})", "LoRA's frozen base weights")
PART_ADAPTERS = template("part_adapters", "adapters, their gradients and optimizer state",
                         "LoRA's adapters with their gradients and optimizer state")
PART_KV_CACHE = template("part_kv_cache", "KV cache", "the KV cache of the batch")
PART_ACTIVATIONS = template("part_activations", "activations (per card)", "a card's stored activations")
PART_RUNTIME = template("part_runtime_overhead", "runtime overhead", "the runtime's own memory on each card")
BYTES_PER_PARAM = template("bytes_per_param", "{bytes_per_param:g} B/param", "bytes per parameter")
ADAPTERS_COUNTED = template(
    "adapters_counted",
    "{adapters:,} adapter parameters (rank {rank}, {targets}) x {bytes_per_param:g} B: fp32 weights, gradients "
    "and optimizer state", "LoRA's adapters counted from the layer shapes")
ADAPTERS_GUIDE = template(
    "adapters_guide", "{bytes_per_param:g} B/param (guide: LoRA 2.5-3 B/param); the layer shapes are not known",
    "LoRA's adapters by the guide's rule, the layer shapes being unknown")
KV_COUNTED = template("kv_counted", "{batch} x {tokens} tokens, {kv_precision}",
                      "the sequences and tokens the KV cache holds, in its format")
ACTIVATIONS_COUNTED = template(
    "activations_counted",
    "Korthikanti et al. 2022, recompute {recompute}, {batch} x {tokens} tokens, tensor parallel {tensor}",
    "how a card's activations are counted")
PER_CARD = template("per_card", "per card", "counted once on every card")

# --- questions/estimate.py: the alternatives' labels
ALT_PRECISION = template("alternative_precision", "precision {precision}", "the same job in another weight format")
ALT_PLAN = template("alternative_plan", "plan {plan}", "the same job on another plan")
ALT_TRAINING = template("alternative_training", "{split}, recompute {recompute}",
                        "the same training job with other sharding and recomputation")
ALT_GUIDE_SPLIT = template("alternative_guide_split", "guide even split",
                           "model state split evenly over the cards, as the guide does")
ALT_ZERO = template("alternative_zero", "ZeRO-{stage}", "DeepSpeed ZeRO at a stage")


# --- summary.py: the estimate's summary, sentence by sentence
MODE_WORDS = {
    mode: template(f"mode_{mode}", words, f"the mode {mode}, in a sentence")
    for mode, words in (("inference", "inference"), ("full_finetune", "a full fine-tune"),
                        ("lora", "a LoRA fine-tune"), ("qlora", "a QLoRA fine-tune"), ("pretrain", "pre-training"))
}
BOUND_WORDS = {
    bound: template(f"bound_{bound}", f"{bound}-bound", f"decoding is {bound}-bound")
    for bound in ("memory", "compute")
}
TRAINING_METHOD = {
    method: template(f"training_method_{method.replace(' ', '_').lower()}", method, meaning)
    for method, meaning in (("given MFU", "the training time is priced at the caller's MFU"),
                            ("given scaling efficiency", "the training time is priced at the caller's scaling"))
}
SUMMARY_NEED = template(
    "summary_need",
    "In {precision} for {mode}, the {params:B|.1f}B-parameter model needs {total_bytes:GB|.1f} GB on one card, of "
    "which {state_bytes:GB|.1f} GB is model state.", "the summary: the memory the job needs on one card")
SUMMARY_NEED_MANY = template(
    "summary_need_many",
    "In {precision} for {mode}, the {params:B|.1f}B-parameter model needs {card_bytes:GB|.1f} GB per card on "
    "{cards} cards ({total_bytes:GB|.1f} GB in all), of which {state_bytes:GB|.1f} GB per card is model state.",
    "the summary: the memory the job needs per card on several cards")
SUMMARY_CONTEXT = template(
    "summary_context",
    "The {context:,}-token context is beyond the model's {positions:,} positions: expect degraded output.",
    "the summary: the context is longer than the model was trained for")
SUMMARY_NEVER = template("summary_never", "It does not fit on any number of {card} cards.",
                         "the summary: no count of the card holds the job")
SUMMARY_NOT_ONE = template(
    "summary_not_one", "One {card} cannot hold it; it needs {needed}.",
    "the summary, when no count was given and one card is too small: the verdict for one card first")
SUMMARY_FITS_IN = template(
    "summary_fits_in", "In {precision} it fits on {cards} x {card}, at about {speed:.1f} tokens/s per stream.",
    "the summary, when the format asked does not fit on the cards asked: the largest smaller format that does")
SUMMARY_FITS = template("summary_fits", "It fits on {cards} x {card} ({free_bytes:GB|.1f} GB free per card).",
                        "the summary: the job fits, with the memory left")
SUMMARY_SHORT = template(
    "summary_short", "It does not fit on {cards} x {card} ({short_bytes:GB|.1f} GB short per card); {needed} are "
    "needed.", "the summary: the job does not fit on the cards asked, and the count that holds it")
SUMMARY_SPEED = template(
    "summary_speed",
    "On {cards} x {card} it generates about {expected:.1f} tokens/s per stream ({low:.1f}-{high:.1f}; ceiling "
    "{ceiling:.1f}, {bound}){batch}", "the summary: one stream's decode speed")
SUMMARY_SPEED_PLAN = template(
    "summary_speed_plan",
    "On {cards} x {card} ({plan}) it generates about {expected:.1f} tokens/s per stream ({low:.1f}-{high:.1f}; "
    "ceiling {ceiling:.1f}, {bound}){batch}", "the summary: one stream's decode speed on a plan of several cards")
SUMMARY_BATCH = template("summary_batch", ", {total:.0f} tokens/s for a batch of {batch_size}.",
                         "the summary: the batch's total decode speed")
SUMMARY_SINGLE = template("summary_single", ".", "the end of the speed sentence for one stream")
SUMMARY_LOAD = template(
    "summary_load",
    "At full load ({prompt} tokens in, {output} out) it sustains about {total:,.0f} output tokens/s with "
    "{sequences} sequences at once.", "the summary: the output tokens/s at full load",
    one="At full load ({prompt} tokens in, {output} out) it sustains about {total:,.0f} output tokens/s "
    "with {sequences} sequence at once.",
    count="sequences")
SUMMARY_TRAIN = template(
    "summary_train",
    "Training on {tokens:.3g} tokens takes about {time_s:days|.1f} days on {cards} cards ({low_s:days|.1f}-"
    "{high_s:days|.1f}) at {mfu:.0%} MFU and {scaling:.0%} scaling ({method}).",
    "the summary: the training time at the caller's MFU or scaling",
    one="Training on {tokens:.3g} tokens takes about {time_s:days|.1f} days on {cards} card "
    "({low_s:days|.1f}-{high_s:days|.1f}) at {mfu:.0%} MFU and {scaling:.0%} scaling ({method}).",
    count="cards")
SUMMARY_TRAIN_STEP = template(
    "summary_train_step",
    "Training on {tokens:.3g} tokens takes about {time_s:days|.1f} days on {cards} cards ({low_s:days|.1f}-"
    "{high_s:days|.1f}) at {mfu:.0%} MFU all in, restarts and checkpoints included (step model).",
    "the summary: the training time by the step model",
    one="Training on {tokens:.3g} tokens takes about {time_s:days|.1f} days on {cards} card "
    "({low_s:days|.1f}-{high_s:days|.1f}) at {mfu:.0%} MFU all in, restarts and checkpoints included "
    "(step model).",
    count="cards")
SUMMARY_TRAIN_STEP_GUIDE = template(
    "summary_train_step_guide",
    "Training on {tokens:.3g} tokens takes about {time_s:days|.1f} days on {cards} cards ({low_s:days|.1f}-"
    "{high_s:days|.1f}) at {mfu:.0%} MFU all in, restarts and checkpoints included (step model); the guide's "
    "scaling curve says {guide_s:days|.1f}.", "the summary: the training time by the step model and the guide's curve",
    one="Training on {tokens:.3g} tokens takes about {time_s:days|.1f} days on {cards} card "
    "({low_s:days|.1f}-{high_s:days|.1f}) at {mfu:.0%} MFU all in, restarts and checkpoints included "
    "(step model); the guide's scaling curve says {guide_s:days|.1f}.",
    count="cards")
MACHINE_DRAWS = template("machine_draws", "The machine draws", "the summary: one machine's draw")
MACHINES_DRAW = template("machines_draw", "The {machines} machines draw", "the summary: the machines' draw")
SUMMARY_ENERGY = template(
    "summary_energy",
    "{who} about {power_w:,.0f} W: {cost:,.0f} {currency} of electricity a year at {price:g} per kWh.",
    "the summary: the draw and a year's electricity")


# --- the other tools' summaries: the first text an assistant quotes for each answer
SUMMARY_MEMORY_ALONE = template(
    "summary_memory_alone",
    "In {precision} for {mode}, the {params:B|.1f}B-parameter model needs {total_bytes:GB|.1f} GB in all, of "
    "which {weights_bytes:GB|.1f} GB is weights.", "the memory summary without a card: the whole job's memory")
INSTALLATION_DRAWS = template("installation_draws", "The installation draws",
                              "the cost summary: an installation whose draw was given")
SUMMARY_FLEET = template(
    "summary_fleet", "For {installations} installations: {cost:,.0f} {currency} a year.",
    "the cost summary: the fleet's electricity a year")
SUMMARY_OWNERSHIP = template(
    "summary_ownership",
    "Over {years:g} years the cards, their installation and electricity cost about {total:,.0f} {currency} "
    "({low:,.0f}-{high:,.0f}).", "the summary: the cost of ownership over the horizon")
SUMMARY_RANK = template(
    "summary_rank", "Ranked the guide's way for the {line} line, {first} comes first with {score:.0f} of 100.",
    "the ranking summary: the best card and its score")
SUMMARY_RANK_NEXT = template(
    "summary_rank_next", "Next: {second} with {score:.0f}.", "the ranking summary: the second card and its score")
SUMMARY_RANK_NONE = template(
    "summary_rank_none", "No card compared holds the model on the count allowed; excluded says what each needs.",
    "the ranking summary: every card was left out for memory")
SUMMARY_RANK_EXCLUDED = template(
    "summary_rank_excluded", "{excluded} cards cannot hold the model and are left out.",
    "the ranking summary: cards left out for memory",
    one="{excluded} card cannot hold the model and is left out.", count="excluded")
SUMMARY_NORMALIZE = template(
    "summary_normalize", "{value:g} {precision} as quoted is {dense_value:g} dense {precision}, or "
    "{dense_bf16:g} dense BF16.", "the figure summary: a vendor's figure as dense figures")
SUMMARY_TROUBLE = template(
    "summary_trouble", "The likeliest cause is {cause}; quick check: {check}.",
    "the troubleshooting summary: the best row's cause and quick check")
SUMMARY_TROUBLE_NONE = template(
    "summary_trouble_none", "Nothing in the guide's table matches; follow its diagnosis order below.",
    "the troubleshooting summary: no row matches")
SUMMARY_CARD = template(
    "summary_card", "{name}: {memory_gib:g} GiB at {bandwidth:,.0f} GB/s, {tflops:,.0f} dense {precision} "
    "TFLOP/s, {power_w:,.0f} W.", "a card's summary: its headline figures")
SUMMARY_MODEL = template(
    "summary_model", "{name}: {params:B|.1f}B parameters, {layers} layers, {kv_bytes:,} bytes of KV cache per "
    "token in bf16; released in {precision}.", "a model's summary: its size, depth, KV cache and format")
SUMMARY_MODEL_MOE = template(
    "summary_model_moe", "{name}: {params:B|.1f}B parameters ({active:B|.1f}B active per token), {layers} "
    "layers, {kv_bytes:,} bytes of KV cache per token in bf16; released in {precision}.",
    "an MoE model's summary: its size, active parameters, depth, KV cache and format")
SUMMARY_MODEL_SIZE = template(
    "summary_model_size", "{name}: {params:B|.1f}B parameters; released in {precision}.",
    "a model's summary when its architecture is not known")
SUMMARY_CARDS_PAGE = template(
    "summary_cards_page", "{count} of {total} cards, after the first {offset}.", "a page of the card catalog",
    one="{count} of {total} card, after the first {offset}.", count="total")
SUMMARY_MODELS_PAGE = template(
    "summary_models_page", "{count} of {total} model presets, after the first {offset}.",
    "a page of the model presets",
    one="{count} of {total} model preset, after the first {offset}.", count="total")
SUMMARY_CARDS_FIRST = template(
    "summary_cards_first", "{count} of {total} cards.", "the first page of the card catalog",
    one="{count} of {total} card.", count="total")
SUMMARY_MODELS_FIRST = template(
    "summary_models_first", "{count} of {total} model presets.", "the first page of the model presets",
    one="{count} of {total} model preset.", count="total")
SUMMARY_NEXT_PAGE = template(
    "summary_next_page", "The next page starts at offset {offset}.", "a list's summary: where the next page starts")


# --- the capacity and comparison summaries
SERVING_ASKED = template("serving_asked", "Serving {model} ({precision}) to {users} users at once",
                         "a summary's head: the serving question asked",
    one="Serving {model} ({precision}) to {users} user at once",
    count="users")
SERVING_ASKED_SPEED = template(
    "serving_asked_speed", "Serving {model} ({precision}) to {users} users at once at {speed:g} tokens/s each",
    "a summary's head: the serving question asked, with a speed per user",
    one="Serving {model} ({precision}) to {users} user at once at {speed:g} tokens/s each",
    count="users")
SERVING_ASKED_TTFT = template(
    "serving_asked_ttft",
    "Serving {model} ({precision}) to {users} users at once with the first token within {ttft_s:g} s",
    "a summary's head: the serving question asked, with a time to first token",
    one="Serving {model} ({precision}) to {users} user at once with the first token within {ttft_s:g} s",
    count="users")
SERVING_ASKED_SPEED_TTFT = template(
    "serving_asked_speed_ttft",
    "Serving {model} ({precision}) to {users} users at once at {speed:g} tokens/s each with the first token "
    "within {ttft_s:g} s", "a summary's head: the serving question asked, with a speed and a time to first token",
    one="Serving {model} ({precision}) to {users} user at once at {speed:g} tokens/s each with the first "
    "token within {ttft_s:g} s",
    count="users")
CAPACITY_NONE = template("capacity_none", "{asked}: no card compared meets it.",
                         "the capacity summary when no card meets the target")
CAPACITY_BEST = template(
    "capacity_best", "{asked} takes at least {cards} x {card} ({plan}, {machines}), about {speed:.1f} tokens/s per "
    "user.", "the capacity summary: the fewest cards that meet the target")
CAPACITY_LOW_END = template(
    "capacity_low_end", "If speed comes out at the slow end of published runs of this kind, it takes {cards} x {card}.",
    "the capacity summary: the cards the slow ends of the speed and first-token ranges would need")
SERVING_LENGTHS = template(
    "serving_lengths", "Each user's prompt is {prompt:,} tokens and each answer {output:,} tokens.",
    "a serving summary: the prompt and answer lengths it assumed (workload.prompt_tokens and output_tokens), which "
    "move the cards needed")
ONE_MACHINE = template("one_machine", "1 machine", "one machine")
MACHINES_COUNT = template("machines_count", "{machines} machines", "several machines")
COMPARE_SERVING = template(
    "compare_serving", "Serving {model} ({precision}) to {users} users for a {years:g}-year term",
    "a comparison's head: the serving question asked",
    one="Serving {model} ({precision}) to {users} user for a {years:g}-year term", count="users")
COMPARE_SERVING_SPEED = template(
    "compare_serving_speed",
    "Serving {model} ({precision}) to {users} users at {speed:g} tokens/s each for a {years:g}-year term",
    "a comparison's head: the serving question asked, with a speed per user",
    one="Serving {model} ({precision}) to {users} user at {speed:g} tokens/s each for a {years:g}-year term",
    count="users")
COMPARE_TRAINING = template("compare_training", "Training {model} ({mode}) on {tokens:.3g} tokens",
                            "a comparison's head: the training question asked")
COMPARE_TRAINING_DEADLINE = template(
    "compare_training_deadline", "Training {model} ({mode}) on {tokens:.3g} tokens within {deadline_days:g} days",
    "a comparison's head: the training question asked, with a deadline")
COMPARE_NONE = template("compare_none", "{asked}: no option compared meets it.",
                        "the comparison's summary when no option meets the target")
RANK_BY_WORDS = {
    key: template(f"rank_by_{key}", words, f"options ranked by {words}")
    for key, words in (("cost_of_ownership", "cost of ownership"), ("cost_per_token", "cost per token"),
                       ("power", "power"), ("cards", "cards"))
}
COMPARE_BEST_OWNED = template(
    "compare_best_owned",
    "{asked}: options meeting it: {meeting} of {options}; by {by}, {best} comes first, {own:,.0f} {currency} to "
    "own over a {years:g}-year term ({own_low:,.0f}-{own_high:,.0f}).",
    "the comparison's summary: the first option and its cost of ownership")
COMPARE_AGAINST = template(
    "compare_against",
    "{best} needs {cards} cards and {electricity:,.0f} {currency} of electricity a year, against {other_cards} cards "
    "and {other_electricity:,.0f} {currency} for {other}.",
    "a comparison without prices: the first option's cards and electricity against the next one's")
COMPARE_BEST_NO_PRICE = template(
    "compare_best_no_price", "{asked}: options meeting it: {meeting} of {options}; by {by}, {best} comes first (no "
    "price).",
    "the comparison's summary: the first option, without a price")
RENT_BREAKS_EVEN = template(
    "rent_breaks_even", "Renting the same cards costs {rent:,.0f} {currency}; buying breaks even after {months:.0f} "
    "months.", "renting against buying: when buying pays off")
RENT_STAYS_CHEAPER = template(
    "rent_stays_cheaper", "Renting the same cards costs {rent:,.0f} {currency}; renting stays cheaper.",
    "renting against buying: renting is cheaper over the years")


# --- ranking.py: how a ranking is scored
RANK_NORMALISATION = template(
    "rank_normalisation",
    "each dimension scores 100 x value / the best value among the compared cards (0 when a card has no figure); "
    "the total is the weighted sum divided by 100", "how a ranking's scores are computed")
RANK_PART = template("rank_part", "{dimension} {score:.0f} x {weight:g} % = {contribution:.1f}",
                     "one dimension's score, weight and contribution")
RANK_PARTS = template("rank_parts", "{first}, {rest}", "two parts of a ranking's explanation")
RANK_NO_WEIGHT = template("rank_no_weight", "no dimension weighted", "a ranking with every weight zero")
RANK_EXPLANATION = template("rank_explanation", "{card}: {parts}; strongest on {dimension}",
                            "why a card ranks where it does")


# --- errors the domain raises (errors.py): said as a problem's detail
# the model's figures (model.py)
ERROR_PARAMS_NOT_POSITIVE = template(
    "error_params_not_positive", "params must be positive", "a model's parameter count is not positive")
ERROR_ACTIVE_PARAMS = template(
    "error_active_params", "active parameters must be positive and at most the total parameters",
    "an MoE's active parameters are out of range")
ERROR_KV_HEADS_EXCEED_HEADS = template(
    "error_kv_heads_exceed_heads", "kv_heads cannot exceed attention_heads", "more KV heads than attention heads")
ERROR_SLIDING_LAYERS_EXCEED_LAYERS = template(
    "error_sliding_layers_exceed_layers", "more sliding-window layers than layers",
    "more sliding-window layers than the model has")
ERROR_MAX_CONTEXT_NOT_POSITIVE = template(
    "error_max_context_not_positive", "max_context_tokens must be positive", "a model's context is not positive")
# a config.json (hfconfig.py)
ERROR_CONFIG_KEY_REQUIRED = template(
    "error_config_key_required", "config {key}: is required for this model_type", "a config lacks a key it needs")
ERROR_CONFIG_KEY_NOT_COUNT = template(
    "error_config_key_not_count", "config {key}: must be a non-negative integer",
    "a config key is not a non-negative integer")
ERROR_CONFIG_KEY_OUT_OF_RANGE = template(
    "error_config_key_out_of_range", "config {key}: is out of range", "a config key's number is too large")
ERROR_CONFIG_KEY_NOT_BOOL = template(
    "error_config_key_not_bool", "config {key}: must be true or false", "a config key is not a boolean")
ERROR_CONFIG_MODEL_TYPE = template(
    "error_config_model_type", "config model_type {model_type!r} is not understood; supported: {supported}",
    "a config's model_type the service cannot read")
ERROR_CONFIG_TOO_MANY_LAYERS = template(
    "error_config_too_many_layers", "config num_hidden_layers above {most:,} is not a model this service can size",
    "a config with too many layers")
ERROR_CONFIG_SIZES = template(
    "error_config_sizes", "config sizes must be positive and heads a multiple of KV heads",
    "a config's sizes or head counts are inconsistent")
ERROR_CONFIG_PATCH_SIZE = template(
    "error_config_patch_size", "config patch_size must be positive", "a vision config's patch size is zero")
ERROR_CONFIG_TOO_MANY_EXPERTS = template(
    "error_config_too_many_experts", "config experts above {most:,} are not a model this service can size",
    "a config with too many experts")
ERROR_CONFIG_EXPERTS_PER_TOKEN = template(
    "error_config_experts_per_token", "config experts per token must be between 1 and the expert count",
    "a config's experts per token are out of range")
ERROR_CONFIG_LAYER_INDICES = template(
    "error_config_layer_indices", "config {key} must be a list of layer indices",
    "a config key is not a list of layer indices")
ERROR_CONFIG_LAYER_TYPES = template(
    "error_config_layer_types", "config layer_types must name one type per layer",
    "a config's layer_types do not match its layers")
ERROR_CONFIG_NO_SLIDING_WINDOW = template(
    "error_config_no_sliding_window", "config has sliding-window layers but no sliding_window",
    "a config with sliding-window layers lacks the window")
ERROR_CONFIG_NO_ROPE_LAYERS = template(
    "error_config_no_rope_layers", "config no_rope_layers must give 0 or 1 for each layer",
    "a config's no_rope_layers do not match its layers")
# names looked up (cards.py, presets.py, engines.py, precision.py, normalize.py)
ERROR_CARD_NAME_TOO_LONG = template(
    "error_card_name_too_long", "unknown card: names are at most {most} characters, this one has {chars:,}",
    "a card name longer than any in the catalog")
ERROR_MODEL_NAME_TOO_LONG = template(
    "error_model_name_too_long", "unknown model: names are at most {most} characters, this one has {chars:,}",
    "a model name longer than any preset's")
ERROR_CARD_NOT_SIZED = template(
    "error_card_not_sized",
    "{name!r} is not in the catalog: {why}; give its figures as a card object (memory_gib, bandwidth_gb_per_s, "
    "dense_tflops, power_w)",
    "a card the catalog names but does not size, and why")
ERROR_UNKNOWN_CARD = template(
    "error_unknown_card", "unknown card {name!r}; GET /v1/cards lists the catalog", "no card has this name")
ERROR_UNKNOWN_CARD_CLOSEST = template(
    "error_unknown_card_closest", "unknown card {name!r}; closest: {closest}; GET /v1/cards lists the catalog",
    "no card has this name; the closest names")
ERROR_UNKNOWN_MODEL = template(
    "error_unknown_model",
    "unknown model {name!r}; GET /v1/models lists the presets, or give params_billion or hf_config",
    "no model preset has this name")
ERROR_UNKNOWN_MODEL_CLOSEST = template(
    "error_unknown_model_closest",
    "unknown model {name!r}; closest: {closest}; GET /v1/models lists the presets, or give params_billion or "
    "hf_config",
    "no model preset has this name; the closest names")
ERROR_UNKNOWN_LINE = template(
    "error_unknown_line", "line must be one of {lines}", "a custom card's product line is not known")
ERROR_UNKNOWN_ENGINE = template(
    "error_unknown_engine", "unknown engine {engine!r}; known: {known}", "an engine the service does not know")
ERROR_UNKNOWN_PRECISION = template(
    "error_unknown_precision",
    "unknown precision {name!r}; known: {known}, and gptq/awq with bits and group size (gptq-int4-g128)",
    "a precision or quantisation the service does not know")
ERROR_GROUPED_LAYOUT = template(
    "error_grouped_layout",
    "{kind} with {bits} bits and group size {group} is not a published layout (group sizes ({group_sizes}); "
    "AWQ is 4-bit)",
    "a GPTQ or AWQ layout that is not published")
ERROR_NORMALIZE_PRECISION = template(
    "error_normalize_precision", "precision must be one of {precisions}",
    "a marketing figure's precision is not known")
ERROR_NORMALIZE_ACCUMULATE = template(
    "error_normalize_accumulate", "accumulate must be one of {accumulate}",
    "a marketing figure's accumulation is not known")
# the workload (inputs.py, training_time.py)
ERROR_UNKNOWN_MODE = template("error_unknown_mode", "mode must be one of {modes}", "a mode the service does not know")
ERROR_MODE_PRECISION = template(
    "error_mode_precision",
    "{mode} trains in fp32, bf16, fp16 or fp8; {precision} weights are for inference, LoRA or QLoRA",
    "full training in a format it cannot train in")
ERROR_UNKNOWN_OPTIMIZER = template(
    "error_unknown_optimizer", "optimizer must be one of {optimizers}", "an optimizer the service does not know")
ERROR_UNKNOWN_RECIPE = template(
    "error_unknown_recipe", "recipe must be one of {recipes}", "a memory recipe the service does not know")
ERROR_RECIPE_ADAPTERS = template(
    "error_recipe_adapters", "recipe {recipe!r} is for full fine-tunes and pre-training; LoRA and QLoRA keep the "
    "standard recipe (their state is the adapters')", "a memory recipe asked for a LoRA or QLoRA job")
ERROR_RECIPE_ZERO = template(
    "error_recipe_zero", "recipe {recipe!r} places the training state itself; give it without zero_stage (a ZeRO "
    "stage is the standard recipe's)", "a memory recipe asked together with a ZeRO stage")
ERROR_OUTPUT_TOKENS_TRAINING = template(
    "error_output_tokens_training",
    "output_tokens describes serving; training reads whole sequences of context_tokens",
    "output tokens given for training")
ERROR_PROMPT_EXCEEDS_CONTEXT = template(
    "error_prompt_exceeds_context", "prompt_tokens cannot exceed context_tokens", "a prompt longer than the context")
ERROR_REQUEST_EXCEEDS_CONTEXT = template(
    "error_request_exceeds_context",
    "prompt_tokens plus output_tokens ({tokens}) exceed context_tokens ({context})",
    "a request longer than the context")
ERROR_PROMPT_FILLS_CONTEXT = template(
    "error_prompt_fills_context",
    "prompt_tokens ({tokens}) fills the whole context ({context}): leave at least one token for the output",
    "a prompt that leaves no room for output")
ERROR_OUTPUT_FILLS_CONTEXT = template(
    "error_output_fills_context",
    "output_tokens ({tokens}) fills the whole context ({context}): leave at least one token for the prompt",
    "an output that leaves no room for the prompt")
ERROR_SERVING_PLAN_FIELD = template(
    "error_serving_plan_field", "for serving, give the plan as workload.parallelism",
    "a serving plan given in the training-only fields")
ERROR_PLAN_FIELDS_DISAGREE = template(
    "error_plan_fields_disagree", "tensor_parallel and pipeline_parallel disagree with parallelism",
    "the older plan fields contradict parallelism")
ERROR_NO_DENSE_COMPUTE = template(
    "error_no_dense_compute", "{card} lists no dense compute figure", "a card without any dense compute rate")
ERROR_NO_FP8_RATE = template(
    "error_no_fp8_rate", "{card} lists no dense fp8 rate: train in bf16 on it",
    "fp8 training on a card without an fp8 rate")
# the plan (plan.py, placement.py)
ERROR_DEGREE_BELOW_ONE = template(
    "error_degree_below_one", "{degree} must be at least 1", "a parallel degree below 1")
ERROR_EXPERT_NOT_MULTIPLE_OF_TENSOR = template(
    "error_expert_not_multiple_of_tensor",
    "expert {expert} must be a multiple of tensor {tensor}: engines spread the routed experts over the cards "
    "that hold the model (tensor x attention data-parallel groups)",
    "a serving plan's expert degree does not span its tensor groups")
ERROR_TENSOR_SPLITS_HEADS = template(
    "error_tensor_splits_heads",
    "tensor {tensor} does not divide the model's {heads} attention heads and {kv_heads} KV heads; engines split "
    "heads evenly",
    "a tensor degree that does not divide the heads")
ERROR_PIPELINE_EXCEEDS_LAYERS = template(
    "error_pipeline_exceeds_layers", "pipeline {pipeline} exceeds the model's {layers} layers",
    "more pipeline stages than layers")
ERROR_EXPERT_NEEDS_MOE = template(
    "error_expert_needs_moe", "expert parallelism needs a mixture-of-experts model",
    "expert parallelism on a dense model")
ERROR_EXPERT_DIVIDES_EXPERTS = template(
    "error_expert_divides_experts", "expert {expert} does not divide the model's {experts} experts evenly over its "
    "cards", "an expert degree that does not divide the experts")
ERROR_TRAINING_COPIES_ARE_DATA = template(
    "error_training_copies_are_data", "training copies are data parallel: use data, not replicas",
    "replicas given for training")
ERROR_SERVING_COPIES_ARE_REPLICAS = template(
    "error_serving_copies_are_replicas", "serving copies are replicas: use replicas, not data",
    "data parallelism given for serving")
ERROR_PLAN_COUNT_MISMATCH = template(
    "error_plan_count_mismatch", "the plan's degrees multiply to {plan_cards} cards, not the {count} asked for",
    "a plan whose cards differ from the count asked")
ERROR_COUNT_NOT_GROUP_MULTIPLE = template(
    "error_count_not_group_multiple",
    "count {count} is not a multiple of tensor x pipeline x expert degree {group}",
    "a card count the plan's model-parallel group does not divide")
# the question asked (compare.py, recommend.py, ranking.py, questions/)
ERROR_TARGET_NEEDS_INFERENCE = template(
    "error_target_needs_inference", "a serving target needs an inference workload",
    "a serving target given with a training workload")
ERROR_COMPARISON_NEEDS_TRAIN_TOKENS = template(
    "error_comparison_needs_train_tokens", "a training comparison needs workload.train_tokens",
    "a training comparison without its tokens")
ERROR_COMPARISON_NEEDS_JOB = template(
    "error_comparison_needs_job",
    "give a serving target (concurrent_users, tokens_per_s_per_user, ttft_s) or a training job (a training "
    "mode with train_tokens)",
    "a comparison with neither a serving target nor a training job")
ERROR_DEADLINE_NEEDS_TRAINING = template(
    "error_deadline_needs_training", "deadline_days is for a training job", "a deadline given for serving")
ERROR_CONSTRAINTS_RULE_OUT_EVERY_LINE = template(
    "error_constraints_rule_out_every_line", "the constraints rule out every product line",
    "a recommendation's constraints leave no product line")
ERROR_WEIGHTS_DIMENSIONS = template(
    "error_weights_dimensions", "weights need exactly these dimensions: {dimensions}",
    "a ranking's weights name other dimensions")
ERROR_WEIGHTS_ZERO = template(
    "error_weights_zero", "weights must add up to more than zero", "a ranking's weights are all zero")
ERROR_POWER_NEEDS_HARDWARE = template(
    "error_power_needs_hardware", "give hardware or power_w", "electricity without cards or a power draw")
ERROR_THROUGHPUT_IS_INFERENCE = template(
    "error_throughput_is_inference", "throughput answers decode speed for inference; /scaling answers training time",
    "the throughput question asked for training")
ERROR_SCALING_IS_TRAINING = template(
    "error_scaling_is_training", "scaling is for training modes", "the scaling question asked for serving")
ERROR_SCALING_NEEDS_TRAIN_TOKENS = template(
    "error_scaling_needs_train_tokens", "train_tokens is required for scaling", "scaling without training tokens")


def check(translations: Translations) -> list[str]:
    """What a catalog lacks or has too much of: templates without a translation, translations
    whose fields differ from the English's, entries no template uses."""
    problems = []
    known = {t.english for t in TEMPLATES.values()}
    for t in TEMPLATES.values():
        said = translations.get(t.english)
        if not said or (isinstance(said, Forms) and not all(said)):
            problems.append(f"{t.code}: no translation")
            continue
        if isinstance(said, Forms) != (t.one is not None):
            problems.append(f"{t.code}: the catalog's entry is {'plural' if isinstance(said, Forms) else 'singular'}, "
                            "the message is not")
            continue
        if isinstance(said, Forms) and said.singular is not None and said.singular != t.one:
            problems.append(f"{t.code}: the catalog's singular is {said.singular!r}, not the message's {t.one!r}")
        for form in said if isinstance(said, Forms) else (said,):
            fields = _compiled(form)[2]
            if fields != t.fields:
                problems.append(f"{t.code}: the translation's fields {sorted(fields)} differ from {sorted(t.fields)}")
    problems += [f"unused entry: {english!r}" for english in translations if english not in known]
    return problems

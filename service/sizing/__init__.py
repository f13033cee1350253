"""The sizing domain: pure functions over frozen dataclasses, SI units inside.

Nothing here imports Flask, marshmallow or prometheus, and nothing does network or
file I/O except reading the packaged catalog data once (catalog.py).

What the HTTP layer and operations use is exported here (and only this: a test holds them to
it): the questions (`questions.estimate`, `questions.memory`, ...), the inputs they take, the
answers they give, the catalogs, the errors, and the vocabulary requests are checked against.
"""

from . import compare, defaults, questions, recommend
from .capacity import CapacityAnswer, Target
from .cards import INTERCONNECT_KINDS, LINES, Card, custom_card, real_card
from .catalog import (
    DATA_CONTEXT,
    LANGUAGES,
    Catalogs,
    Price,
    check_data_translations,
    data_texts,
    data_translations,
    extend_catalogs,
    packaged_catalogs,
    translations,
)
from .compare import RANK_BY, CompareOption, CompareResult, Offer
from .cost import EnergyAnswer, OwnershipAnswer
from .decode import StepCost
from .engines import ENGINE_NAMES
from .errors import InvalidInputError, SizingError, UnknownCardError, UnknownModelError
from .hfconfig import model_from_hf_config
from .host import HostSizing, host_sizing
from .inputs import Assumption, EnergyInput, HardwareInput, Notes, WorkloadInput
from .memory import Component, FitAnswer, MemoryBreakdown
from .messages import GIVEN_BY_CALLER, LIST_SEPARATOR, TEMPLATES, Message, Template, Verbatim, as_json, template
from .messages import check as check_translations
from .model import ModelSpec
from .normalize import ACCUMULATE, LADDER, normalize_summary
from .normalize import normalize as normalise_figure
from .plan import Parallelism, PlanAnswer, cards_per_machine
from .presets import model_preset
from .questions import (
    Alternative,
    CapacityResult,
    CostResult,
    Estimate,
    MemoryResult,
    ScalingPoint,
    ScalingResult,
    ThroughputResult,
)
from .ranking import DIMENSIONS, DimensionScore, Excluded, RankedCard, RankResult, rank_cards
from .recommend import SCENARIOS, Candidate, Constraints
from .summary import card_summary, model_summary, page_summary, trouble_summary
from .throughput import DecodePoint, Range, ThroughputAnswer
from .training import OPTIMIZERS, RECIPES, RECOMPUTE_MODES
from .training_time import TrainingAnswer
from .troubleshoot import diagnose
from .units import GB, GIB, TERA, billions_to_count
from .zh import said_in, to_zh

__all__ = [
    "ACCUMULATE", "DIMENSIONS", "ENGINE_NAMES", "GB", "GIB", "INTERCONNECT_KINDS", "LADDER", "LINES",
    "OPTIMIZERS", "RANK_BY", "RECIPES", "RECOMPUTE_MODES", "SCENARIOS", "TERA",
    "Alternative", "Assumption", "CapacityAnswer", "CapacityResult", "Candidate", "Card", "Catalogs",
    "CompareOption", "CompareResult", "Component", "Constraints", "CostResult", "DecodePoint",
    "DimensionScore", "EnergyAnswer",
    "EnergyInput", "Estimate", "Excluded", "FitAnswer", "HardwareInput", "HostSizing",
    "InvalidInputError", "MemoryBreakdown", "MemoryResult", "ModelSpec", "Notes", "Offer", "OwnershipAnswer",
    "Parallelism", "PlanAnswer", "Price", "Range", "RankResult", "RankedCard", "ScalingPoint",
    "ScalingResult", "SizingError", "StepCost", "Target", "ThroughputAnswer", "ThroughputResult",
    "TrainingAnswer", "UnknownCardError", "UnknownModelError", "WorkloadInput",
    "billions_to_count", "cards_per_machine", "compare", "custom_card", "defaults", "diagnose", "extend_catalogs",
    "host_sizing", "model_from_hf_config", "model_preset", "normalise_figure", "normalize_summary", "packaged_catalogs",
    "card_summary", "model_summary", "page_summary", "trouble_summary",
    "questions", "rank_cards", "real_card", "recommend", "said_in", "to_zh",
    "DATA_CONTEXT", "GIVEN_BY_CALLER", "LANGUAGES", "LIST_SEPARATOR", "TEMPLATES", "Message", "Template", "Verbatim",
    "as_json", "template",
    "check_data_translations", "check_translations", "data_texts", "data_translations",
    "translations",
]

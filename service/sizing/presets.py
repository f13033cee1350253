"""Model presets: each model's architecture (given, or computed from its config.json), its
published figures with their sources, and the presets' lookup."""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from . import messages as M
from .cards import closest_names, name_index, normalise_name, too_long
from .errors import SizingError, UnknownModelError
from .hfconfig import model_from_hf_config
from .model import ModelSpec
from .precision import get_precision


@dataclass(frozen=True)
class ModelPreset:
    """A named model: its id, aliases, architecture, and the published parameter count."""

    id: str
    aliases: tuple[str, ...]
    spec: ModelSpec
    notes: str
    published_params: int | None = None
    published_params_source: str = ""



# Words a buyer adds to a model's name that do not change which model it is.
_NAME_NOISE = frozenset(("meta", "instruct", "chat", "hf", "base", "model", "latest"))


def compact_name(name: str) -> str:
    """A looser lookup key: the name after any "org/", without separators or the words that
    do not pick a model ("Meta-Llama-3-8B-Instruct", "llama3:8b" and "Llama 3 8B" agree)."""
    words = re.split(r"[\s_\-:]+", name.strip().lower().rsplit("/", 1)[-1])
    return "".join(w for w in words if w and w not in _NAME_NOISE)


@dataclass(frozen=True)
class ModelCatalog:
    models: tuple[ModelPreset, ...]
    index: Mapping[str, ModelPreset]
    loose: Mapping[str, ModelPreset] = field(default_factory=lambda: MappingProxyType({}))

    def get(self, name: str, field_name: str = "model") -> ModelPreset:
        """The preset called `name` (id or alias, any case; else by its compact spelling when
        that names one preset), or UnknownModelError."""
        too_long(name, "model", field_name, UnknownModelError)
        preset = self.index.get(normalise_name(name)) or self.loose.get(compact_name(name))
        if preset is None:
            closest = closest_names(name, self.index)
            raise UnknownModelError(M.ERROR_UNKNOWN_MODEL_CLOSEST(name=name, closest=closest) if closest else
                                    M.ERROR_UNKNOWN_MODEL(name=name), field_name)
        return preset



_ARCH_FIELDS = ("active_params", "layers", "hidden_size", "attention_heads", "kv_heads",
                "head_dim", "vocab_size")



_MODEL_KEYS = {"id", "name", "aliases", "source", "notes", "config", "config_source", "params",
               "published_params", "published_params_source", "published_active_params",
               "same_architecture_as", "training_batch_tokens", "training_batch_source",
               "released_precision", "released_precision_source", "released_experts_only",
               *_ARCH_FIELDS}



def _preset_spec(raw: Mapping, source: str, where: str) -> ModelSpec:
    if isinstance(raw.get("config"), Mapping):
        spec = model_from_hf_config(raw["config"], raw["name"])
        return replace(spec, source=source, notes="; ".join(filter(None, (spec.notes, raw.get("notes")))))
    if not isinstance(raw.get("params"), int) or raw["params"] <= 0:
        raise ValueError(f"{where}: params (a positive integer) or config is required")
    architecture: dict[str, int | None] = {k: raw.get(k) for k in _ARCH_FIELDS}
    return ModelSpec(params=raw["params"], name=raw["name"], source=source, notes=raw.get("notes", ""),
                     **architecture)  # type: ignore[arg-type]  # _ARCH_FIELDS are ModelSpec's int | None fields



def model_preset(raw: Mapping, where: str = "model") -> ModelPreset:
    """A preset from its data entry: a config.json (`config`) or architecture fields."""
    unknown = set(raw) - _MODEL_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("id", "name"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{where}: {key} is required")
    source = raw.get("config_source") or raw.get("source")
    if not source:
        raise ValueError(f"{where}: a source is required")
    try:
        spec = _preset_spec(raw, source, where)
    except SizingError as exc:  # the entry's own figures are inconsistent: say which entry
        raise ValueError(f"{where}: {exc.message}") from None
    batch = raw.get("training_batch_tokens")
    if batch is not None:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch <= 0 \
                or not raw.get("training_batch_source"):
            raise ValueError(f"{where}: training_batch_tokens must be a positive integer with a "
                             "training_batch_source")
        spec = replace(spec, training_batch_tokens=batch, training_batch_source=raw["training_batch_source"])
    spec = _released(raw, spec, where)
    return ModelPreset(id=raw["id"], aliases=tuple(raw.get("aliases", ())), spec=spec,
                       notes=raw.get("notes", ""), published_params=raw.get("published_params"),
                       published_params_source=raw.get("published_params_source", ""))



def _released(raw: Mapping, spec: ModelSpec, where: str) -> ModelSpec:
    """The format the checkpoint ships in, with its source (a config's quantization_config
    gives one too; the entry's own key wins)."""
    name = raw.get("released_precision")
    if name is None:
        return spec
    source = raw.get("released_precision_source")
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"{where}: released_precision needs a released_precision_source")
    try:
        precision = get_precision(name)
    except SizingError as exc:
        raise ValueError(f"{where}: {exc.message}") from None
    experts_only = raw.get("released_experts_only", False)
    if not isinstance(experts_only, bool) or (experts_only and spec.routed_experts is None):
        raise ValueError(f"{where}: released_experts_only is true or false, and true only for an MoE "
                         "with known experts")
    return replace(spec, released_precision=precision.name, released_precision_source=source,
                   released_experts_only=experts_only)


def build_model_catalog(presets: tuple[ModelPreset, ...]) -> ModelCatalog:
    index = name_index(presets, lambda m: (m.id, m.spec.name, *m.aliases))
    loose: dict[str, list[ModelPreset]] = {}
    for preset in presets:
        for key in {compact_name(n) for n in (preset.id, preset.spec.name, *preset.aliases)}:
            loose.setdefault(key, []).append(preset)
    unique = {k: v[0] for k, v in loose.items() if len(v) == 1}  # an ambiguous spelling names none
    return ModelCatalog(presets, index, MappingProxyType(unique))



def shared_configs(entries: list) -> list:
    """Entries with `same_architecture_as` take that earlier entry's config under their own keys."""
    configs: dict[str, Mapping] = {}
    resolved = []
    for raw in entries:
        ref = raw.get("same_architecture_as")
        if ref is not None:
            if ref not in configs:
                raise ValueError(f"model {raw.get('id')}: same_architecture_as {ref!r} is not an earlier preset")
            raw = {**raw, "config": {**configs[ref], **raw.get("config", {})}}
        if isinstance(raw.get("config"), Mapping):
            configs[raw["id"]] = raw["config"]
        resolved.append(raw)
    return resolved

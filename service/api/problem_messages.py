"""What an error answer says, as coded messages (service/sizing/messages.py): the titles of the
HTTP statuses, the details the API gives, and the messages of marshmallow's fields and
validators, so that a problem is said in the caller's language like an answer.

marshmallow formats a field's or a validator's message with `str.format`; `coded_field` gives
each field of a request schema (and its validators) messages that format into a coded Message
instead (`Coded`), keyed by marshmallow's own English, so the text a caller reads in English is
marshmallow's, unchanged. A message no template knows stays as it is, and a test fails on it.
"""

from collections.abc import Mapping

from marshmallow import fields, validate
from werkzeug.exceptions import (
    BadRequest,
    MethodNotAllowed,
    NotFound,
    RequestEntityTooLarge,
    RequestHeaderFieldsTooLarge,
    RequestURITooLarge,
)

from ..sizing import Message, Template, template

# --- the title of each status an answer can carry (RFC 9110's reason phrases)
TITLES: Mapping[int, Template] = {
    400: template("title_400", "Bad Request", "the request could not be read"),
    401: template("title_401", "Unauthorized", "the request carries no valid credentials"),
    403: template("title_403", "Forbidden", "the request is not allowed"),
    404: template("title_404", "Not Found", "nothing is at that path (or no such card or model)"),
    405: template("title_405", "Method Not Allowed", "the path does not take that method"),
    406: template("title_406", "Not Acceptable", "no answer in a media type the request accepts"),
    408: template("title_408", "Request Timeout", "the request took too long to arrive"),
    413: template("title_413", "Request Entity Too Large", "the request asks for more than one request may"),
    414: template("title_414", "Request URI Too Large", "the request's URL is too long"),
    415: template("title_415", "Unsupported Media Type", "the body is not sent as JSON"),
    422: template("title_422", "Unprocessable Content", "the request is JSON but its values are not valid"),
    429: template("title_429", "Too Many Requests", "the client has spent its units for now"),
    431: template("title_431", "Request Header Fields Too Large", "the request's headers are too large"),
    500: template("title_500", "Internal Server Error", "the server failed to answer"),
    503: template("title_503", "Service Unavailable", "the instance cannot take the request now"),
    504: template("title_504", "Gateway Timeout", "the answer took longer than the instance allows"),
}

# --- the detail of a problem
INVALID_FIELDS = template("problem_invalid_fields", "Invalid input: {fields}.",
                          "the request's values are not valid: the fields named")
INVALID_FIELDS_MORE = template("problem_invalid_fields_more", "Invalid input: {fields} and {more:,} more.",
                               "the request's values are not valid: the first fields named, and how many more")
INVALID_INPUT = template("problem_invalid_input", "Invalid input.", "a batch item's values are not valid")
MORE_NOT_LISTED = template("problem_more_not_listed", "{more:,} more invalid fields are not listed",
                           "a problem lists its first invalid fields and counts the rest")
SERVER_FAILED = template("problem_server_failed", "The server failed to answer; it has been logged.",
                         "an unexpected failure, logged for the operator")
DEGRADED = template("problem_degraded", "degraded: {why}; answers go on, their metrics are lost",
                    "the instance answers but cannot keep its metrics")
# werkzeug's own details for the errors it raises itself, in its words (zh.po fails the check
# should a werkzeug release reword one), and looked up by them when a problem is said
NOT_FOUND = template("problem_not_found", NotFound.description, "no route at that path")
METHOD_NOT_ALLOWED = template("problem_method_not_allowed", MethodNotAllowed.description,
                              "the path does not take that method")
TOO_LARGE = template("problem_too_large", RequestEntityTooLarge.description,
                     "the body is larger than the instance takes")
BAD_REQUEST = template("problem_bad_request", BadRequest.description, "the request could not be read")
URL_TOO_LONG = template("problem_url_too_long", RequestURITooLarge.description, "the request's URL is too long")
HEADERS_TOO_LARGE = template("problem_headers_too_large", RequestHeaderFieldsTooLarge.description,
                             "the request's headers are too large")
HTTP_DETAILS = {t.english: t for t in (NOT_FOUND, METHOD_NOT_ALLOWED, TOO_LARGE, BAD_REQUEST, URL_TOO_LONG,
                                       HEADERS_TOO_LARGE)}
NOT_JSON = template("problem_not_json", "Send the body as application/json.", "the body must be sent as JSON")
BAD_JSON = template("problem_bad_json", "The request body is not valid JSON: {reason}",
                    "the body is not strict JSON; the parser's own words follow")
JSON_TOO_DEEP = template("problem_json_too_deep", "The request body nests too deeply.",
                         "the body's JSON nests deeper than the parser follows")
JSON_SURROGATE = template("problem_json_surrogate",
                          "The request body holds an unpaired UTF-16 surrogate (\\ud800-\\udfff).",
                          "the body's text is not Unicode")
API_KEY = template("problem_api_key", "A valid API key is required: Authorization: Bearer <key>.",
                   "the instance requires an API key")
KEYS_REFUSED = template(
    "problem_keys_refused",
    "too many requests without a valid API key from this address; retry in {wait_s} s",
    "the address's requests were refused for their key too often for now")
BATCH_TOO_LARGE = template("problem_batch_too_large", "at most {limit} items per batch; got {items}",
                           "a batch holds more items than one request may")
COST_TOO_HIGH = template(
    "problem_cost_too_high",
    "{what} costs {units:,.0f} units (one unit is a plain estimate), above the limit of {limit:,.0f} per "
    "request (SIZING_MAX_REQUEST_COST): split it into smaller requests",
    "the request costs more than one request may")
# what a request costing too much was (COST_TOO_HIGH's `what`)
COST_OF_ESTIMATE = template("cost_of_estimate", "this estimate", "an estimate")
COST_OF_MEMORY = template("cost_of_memory", "this memory question", "a memory question")
COST_OF_THROUGHPUT = template("cost_of_throughput", "this throughput question", "a throughput question")
COST_OF_SCALING = template("cost_of_scaling", "this scaling question", "a scaling question")
COST_OF_PLOT = template("cost_of_plot", "a plot", "a plot")
COST_OF_RANKING = template("cost_of_ranking", "a ranking", "a ranking of cards")
COST_OF_RECOMMENDATION = template("cost_of_recommendation", "a recommendation", "a recommendation")
COST_OF_BATCH = template("cost_of_batch", "a batch of {items} items", "a batch of estimates",
    one="a batch of {items} item",
    count="items")
COST_OF_SWEEP = template("cost_of_sweep", "a sweep over {cards} cards", "a sweep of one question over cards",
    one="a sweep over {cards} card",
    count="cards")
COST_OF_CAPACITY = template("cost_of_capacity", "capacity on {cards} cards", "a capacity question over cards",
    one="capacity on {cards} card",
    count="cards")
COST_OF_COMPARISON = template("cost_of_comparison", "a comparison of {options} options", "a comparison")
RATE_SPENT = template(
    "problem_rate_spent",
    "this client has spent its units (SIZING_RATE_LIMIT {rate:g} a second, burst {burst:g}); retry in {wait_s} s",
    "the client's rate limit is reached for now")
SLOTS_BUSY = template(
    "problem_slots_busy",
    "this instance is already running {slots} {kind} requests at once and no place to wait was free "
    "within {wait_s:g} s; retry in a second",
    "every slot for heavy requests is busy")
SLOT_BUSY = template(
    "problem_slot_busy",
    "this instance is already running {slots} {kind} request at once and no place to wait was free "
    "within {wait_s:g} s; retry in a second",
    "the one slot for heavy requests is busy")
UNTRANSLATED = template("problem_untranslated", "{text}",
                        "a detail the service has no sentence of its own for, quoted as it stands")

# --- the request's values: what the schemas say beside marshmallow
REPEATED_PARAMETER = template("input_repeated_parameter", "Give this parameter once.",
                              "a query parameter is given twice")
FIELDS_COUNT = template("input_fields_count", "Give 1 to {limit} comma-separated field names.",
                        "fields= names too few or too many fields")
NO_SUCH_FIELD = template("input_no_such_field", "{part} has no field {name!r}; it has: {known}",
                         "fields= names a field the answer does not have")
PLAIN_VALUE = template("input_plain_value", "{name} is a plain value; it has no field {below!r}",
                       "fields= names a field below a plain value")
DENSE_RATE_NEEDED = template("input_dense_rate_needed", "Give at least one dense rate.",
                             "a card given by its figures needs a dense rate")
NAME_LENGTH = template("input_name_length", "A name is 1 to 200 characters.", "a name's length")
DEGREES_TOO_MANY = template("input_degrees_too_many",
                            "The degrees multiply to {cards} cards; at most {limit} are sized.",
                            "a plan's degrees ask for more cards than the service sizes")
POWER_TWICE = template("input_power_twice", "Give power_w once: at the top or in energy.",
                       "power_w is given twice")
POWER_OR_HARDWARE = template("input_power_or_hardware", "Give hardware or power_w.",
                             "a cost needs the cards or their power")
CARDS_OR_FILTERS = template("input_cards_or_filters", "Give cards or filters, not both.",
                            "a ranking takes cards or filters")
OPTIONS_COUNT = template("input_options_count", "Give 1 to {limit} options; got {given}.",
                         "a comparison holds too few or too many options")
OPTION_SHAPE = template("input_option_shape", "Each option is a hardware object: {{card, count}}.",
                        "a comparison's option is not an object")
YEARS_AT_TOP = template("input_years_at_top", "years is given at the top", "a comparison's years stand at the top")
FROM_MACHINES = template("input_from_machines", "{name} comes from each option's machines; leave it out",
                         "a comparison reckons this from each option's machines")
POWER_PER_CARD_TWICE = template("input_power_per_card_twice", "Give power_w or power_w_per_card, not both.",
                                "a card's power is given two ways")
NAME_OR_OBJECT = template("input_name_or_object", "Give a catalog name (string) or an object.",
                          "a card or model is neither a name nor an object")
OPTIONS_OR_FILTERS = template("input_options_or_filters", "Give a list of hardware options, or catalog filters.",
                              "a comparison's options are neither a list nor filters")
NO_CARD_PASSES = template("input_no_card_passes", "no catalog card passes the filters",
                          "a comparison's filters match no card")
FILTERS_MATCH_TOO_MANY = template(
    "input_filters_match_too_many",
    "the filters match {cards} cards; at most {limit} are compared: narrow them (line, vendor, tier, min_memory_gib)",
    "a comparison's filters match more cards than one comparison holds")
ONE_LINE = template("input_one_line", "give line, or cards of one product line",
                    "a recommendation over cards of several lines needs the line")
MODEL_OR_SCENARIO = template("input_model_or_scenario", "Give a model, or one of the guide's scenarios.",
                             "a recommendation needs a model or a scenario")

# --- marshmallow's own messages, its English as it says them (marshmallow 4)
_MARSHMALLOW = (
    template("input_required", "Missing data for required field.", "a required field is missing"),
    template("input_null", "Field may not be null.", "a field that takes no null is null"),
    template("input_invalid", "Invalid value.", "the value is not valid"),
    template("input_not_string", "Not a valid string.", "the value is not a string"),
    template("input_not_utf8", "Not a valid utf-8 string.", "the value is not UTF-8 text"),
    template("input_not_integer", "Not a valid integer.", "the value is not an integer"),
    template("input_not_number", "Not a valid number.", "the value is not a number"),
    template("input_too_large", "Number too large.", "the number is too large"),
    template("input_not_finite", "Not a finite number.", "the number is NaN or infinite"),
    template("input_special", "Special numeric values (nan or infinity) are not permitted.",
             "the number is NaN or infinite"),
    template("input_not_boolean", "Not a valid boolean.", "the value is not true or false"),
    template("input_invalid_type", "Invalid type.", "a nested object is not an object"),
    template("input_invalid_input_type", "Invalid input type.", "the body or a nested object is not an object"),
    template("input_unknown_field", "Unknown field.", "a field the request does not take"),
    template("input_not_list", "Not a valid list.", "the value is not a list"),
    template("input_not_mapping", "Not a valid mapping type.", "the value is not an object"),
    template("input_at_least", "Must be greater than or equal to {min}.", "the value is below its least"),
    template("input_above", "Must be greater than {min}.", "the value is not above its bound"),
    template("input_at_most", "Must be less than or equal to {max}.", "the value is above its most"),
    template("input_below", "Must be less than {max}.", "the value is not below its bound"),
    template("input_between", "Must be greater than or equal to {min} and less than or equal to {max}.",
             "the value is out of its range"),
    template("input_above_at_most", "Must be greater than {min} and less than or equal to {max}.",
             "the value is out of its range"),
    template("input_at_least_below", "Must be greater than or equal to {min} and less than {max}.",
             "the value is out of its range"),
    template("input_above_below", "Must be greater than {min} and less than {max}.", "the value is out of its range"),
    template("input_one_of", "Must be one of: {choices}.", "the value is not one of the names taken"),
    template("input_length_between", "Length must be between {min} and {max}.", "the length is out of its range"),
    template("input_length_equal", "Length must be {equal}.", "the length is not the one taken"),
    template("input_too_long", "Longer than maximum length {max}.", "the text or list is too long"),
    template("input_too_short", "Shorter than minimum length {min}.", "the text or list is too short"),
)
_BY_ENGLISH = {t.english: t for t in _MARSHMALLOW}


class Coded(Message):
    """A marshmallow message that formats into a coded Message: marshmallow calls
    `.format(input=..., min=..., ...)` on it and gets the template said with the parameters it
    names (the others, such as the input, are left out)."""

    def __new__(cls, template: Template) -> "Coded":
        return super().__new__(cls, template, {}, template.english)  # type: ignore[return-value]

    def format(self, *args, **kwargs) -> Message:  # type: ignore[override]
        return self.template(**{name: kwargs[name] for name in self.template.ordered_fields})


def coded(text):
    """marshmallow's message `text` as a Coded one, when a template says it; else as it is."""
    if isinstance(text, Message):
        return text
    template_ = _BY_ENGLISH.get(text) if isinstance(text, str) else None
    return text if template_ is None else Coded(template_)


_VALIDATOR_MESSAGES = {validate.Range: ("message_min", "message_max", "message_all", "error"),
                       validate.Length: ("message_min", "message_max", "message_all", "message_equal", "error"),
                       validate.OneOf: ("error",)}


def coded_field(field: fields.Field) -> None:
    """`field`'s messages, its validators' and its inner fields' made coded, in place (once per
    field: coding a coded message changes nothing)."""
    field.error_messages = {key: coded(text) for key, text in field.error_messages.items()}
    for validator in field.validators:
        if isinstance(validator, validate.OneOf):  # the names as a list: joined by the language's separator
            validator.choices_text = tuple(str(choice) for choice in validator.choices)  # type: ignore[assignment]
        for name in _VALIDATOR_MESSAGES.get(type(validator), ()):
            text = getattr(validator, name, None)
            if text is not None:
                setattr(validator, name, coded(text))
    for inner in (getattr(field, "inner", None), getattr(field, "key_field", None),
                  getattr(field, "value_field", None)):
        if isinstance(inner, fields.Field):
            coded_field(inner)


def schema_messages(error_messages: Mapping[str, str]) -> dict:
    """A schema's own messages (an unknown field, a body that is not an object), coded."""
    return {key: coded(text) for key, text in error_messages.items()}

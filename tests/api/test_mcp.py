"""The MCP server over the protocol, in process: the library's own client lists the tools and calls
them, and each answer is the endpoint's answer. (tests/deploy/test_mcp.py runs it over stdio and
HTTP as separate processes.)"""

import json

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from service.app import create_app
from service.mcp_server import InProcess, Remote, backend_from_env, build_server
from service.tools import tools_from_spec
from tests.api.support import answer_of
from tests.contract.test_spec_lint import SPEC
from tests.deploy.server import free_port

QUESTION = {"model": "Llama 3.1 70B", "hardware": {"card": "RTX 4090", "count": 2},
            "workload": {"precision": "int4"}}
# What the tools need that the contract gives no example for: one real call each.
ARGUMENTS = {
    "troubleshoot": {"q": "CUDA out of memory"},
    "listCards": {"line": "datacenter"},
    "getCard": {"card_id": "H100 SXM"},
    "listModels": {},
    "getModel": {"model_id": "Llama 3.1 70B Instruct"},
}


@pytest.fixture(scope="module")
def server(app):
    return build_server(InProcess(app))


def session(server, calls):
    """Runs `calls(client)` inside one MCP session with the server and returns what it returns."""
    async def run():
        async with Client(server) as client:
            return await calls(client)
    return anyio.run(run)


def test_the_tools_listed_over_the_protocol_are_the_contracts(server):
    listed = session(server, lambda c: c.list_tools()).tools
    expected = tools_from_spec(SPEC)
    assert [t.name for t in listed] == [t.name for t in expected]
    for got, want in zip(listed, expected, strict=True):
        assert (got.description, got.title, got.input_schema) == (want.description, want.title, want.input_schema)
        assert got.annotations.read_only_hint is True


def test_estimate_through_the_protocol_is_post_estimate(server, client):
    result = session(server, lambda c: c.call_tool("estimate", QUESTION))
    defaults = next(t for t in tools_from_spec(SPEC) if t.name == "estimate").defaults
    rest = client.post("/v1/estimate", json=QUESTION, query_string=defaults).get_json()
    assert not result.is_error and result.structured_content is None  # the answer once, as text
    assert answer_of(result) == rest
    assert rest["fit"]["cards_needed"] == 2 and rest["fit"]["fits"] is True
    summary, others = (part.text for part in result.content)
    assert summary == rest["summary"] and json.loads(others) == {k: v for k, v in rest.items() if k != "summary"}


def test_a_structured_server_answers_structured_content_beside_the_texts(app, client):
    result = session(build_server(InProcess(app), structured=True), lambda c: c.call_tool("estimate", QUESTION))
    defaults = next(t for t in tools_from_spec(SPEC) if t.name == "estimate").defaults
    rest = client.post("/v1/estimate", json=QUESTION, query_string=defaults).get_json()
    texts = [part.text for part in result.content]
    assert texts[0] == rest["summary"] and json.loads(texts[1]) == {k: v for k, v in rest.items() if k != "summary"}
    assert result.structured_content == rest


def test_the_summary_comes_first_in_the_language_asked_for(server):
    result = session(server, lambda c: c.call_tool("estimate", {**QUESTION, "lang": "zh", "fields": "summary,fit.fits"}))
    assert "放得下" in result.content[0].text
    assert answer_of(result) == {"summary": result.content[0].text, "fit": {"fits": True}}


def test_a_bad_card_name_is_a_tool_error_naming_the_closest_cards(server):
    result = session(server, lambda c: c.call_tool("estimate", {**QUESTION, "hardware": {"card": "RTX 4099"}}))
    assert result.is_error
    assert "closest: rtx-4090" in result.content[0].text
    assert answer_of(result)["status"] == 422
    assert [e["field"] for e in answer_of(result)["errors"]] == ["hardware.card"]


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("estimate", {"model": "llama-3.1-8b"}, "hardware"),
        ("estimate", {**QUESTION, "colour": "red"}, "colour"),
        ("getCard", {}, "getCard needs 'card_id'"),
        ("listModels", {"q": "llama"}, "does not take 'q'"),
        ("sizeEverything", {}, "unknown tool 'sizeEverything'"),
    ],
)
def test_bad_calls_come_back_as_tool_errors_not_crashes(server, name, arguments, message):
    result = session(server, lambda c: c.call_tool(name, arguments))
    assert result.is_error and message in " ".join(part.text for part in result.content)


def _example(name):
    """The operation's example in the contract, else one real call."""
    for item in SPEC["paths"].values():
        for op in item.values():
            if isinstance(op, dict) and op.get("operationId") == name:
                example = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example")
                if example is not None:
                    return example
    return ARGUMENTS[name]


def test_the_tool_list_over_the_protocol_is_under_20_kb(server):
    """What an assistant pays in every conversation: 97-107 KB before the compact profile."""
    listed = session(server, lambda c: c.list_tools())
    assert len(listed.model_dump_json(by_alias=True, exclude_none=True).encode()) < 20_000


@pytest.mark.parametrize("tool", tools_from_spec(SPEC), ids=lambda t: t.name)
def test_every_tool_answers_its_example(server, tool):
    arguments = _example(tool.name)
    result = session(server, lambda c: c.call_tool(tool.name, arguments))
    assert not result.is_error, result.content[0].text
    assert answer_of(result)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("tool", tools_from_spec(SPEC), ids=lambda t: t.name)
def test_every_tools_first_text_is_its_summary_in_the_language_asked(server, tool, lang):
    """What an assistant quotes: every tool's answer leads with a sentence of its own (not raw
    JSON), said in the language asked; every tool takes lang."""
    assert "lang" in tool.input_schema["properties"]
    result = session(server, lambda c: c.call_tool(tool.name, {**_example(tool.name), "lang": lang}))
    first = result.content[0].text
    assert not result.is_error and first == answer_of(result)["summary"], first
    assert first.endswith((".", "。")) and not first.startswith(("{", "["))
    chinese = sum("\u4e00" <= ch <= "\u9fff" for ch in first)
    assert (chinese > 3) if lang == "zh" else (chinese == 0), first


def test_a_service_that_does_not_answer_is_a_tool_error_that_keeps_its_address_for_the_log(caplog):
    down = f"http://127.0.0.1:{free_port()}"
    result = session(build_server(Remote(down, timeout_s=2)), lambda c: c.call_tool("getCard", {"card_id": "x"}))
    assert result.is_error and "the sizing service did not answer (ConnectionError)" in result.content[0].text
    assert down not in result.content[0].text and down in caplog.text


def test_sizing_url_chooses_a_running_service_over_the_domain_in_process():
    assert isinstance(backend_from_env({"SIZING_URL": "http://10.0.0.1:8000/"}), Remote)
    assert backend_from_env({"SIZING_URL": "http://10.0.0.1:8000/"}).base_url == "http://10.0.0.1:8000"
    assert isinstance(backend_from_env({"SIZING_URL": " "}), InProcess)


class Failing:
    """A backend whose contract is the real one and whose every call fails unexpectedly."""

    where = "nowhere"

    def contract(self):
        return SPEC

    def send(self, req, headers, timeout_s=None):
        raise RuntimeError("boom")


def test_an_unexpected_failure_in_a_call_is_a_tool_error_and_the_server_goes_on(caplog):
    async def calls(client):
        failed = await client.call_tool("getCard", {"card_id": "h100-sxm"})
        return failed, await client.list_tools()
    failed, listed = session(build_server(Failing()), calls)
    assert failed.is_error and "failed inside the MCP server (RuntimeError)" in failed.content[0].text
    assert "boom" not in failed.content[0].text and "boom" in caplog.text
    assert len(listed.tools) == len(tools_from_spec(SPEC))


def test_tools_that_cannot_be_read_are_a_protocol_error_that_keeps_the_address_for_the_log(caplog):
    down = f"http://127.0.0.1:{free_port()}"


    async def list_tools(client):
        try:
            await client.list_tools()
        except MCPError as exc:  # the server's JSON-RPC error, as the client raises it
            return exc
    error = session(build_server(Remote(down, timeout_s=2)), list_tools)
    assert isinstance(error, MCPError) and error.code == -32603
    assert error.message == "the tools could not be read from the sizing service (ConnectionError)"
    assert down in caplog.text


def test_a_stdio_servers_key_is_sent_when_the_caller_brings_none():
    keyed = create_app({"TESTING": True, "API_KEYS": ("k1-test-key-0000000000000000000000",)})
    with_key = session(build_server(InProcess(keyed), api_key="k1-test-key-0000000000000000000000"), lambda c: c.call_tool("getCard", {"card_id": "h100-sxm"}))
    without = session(build_server(InProcess(keyed)), lambda c: c.call_tool("getCard", {"card_id": "h100-sxm"}))
    assert not with_key.is_error and answer_of(with_key)["id"] == "h100-sxm"
    assert without.is_error and answer_of(without)["status"] == 401


# Fifteen questions a user asks an assistant (8 in English, 7 in Chinese), as the tool call the
# assistant makes, and what the first text (the sentence it quotes) must answer.
QUESTIONS = [
    ("Can Llama 3.1 70B run on two RTX 4090s?", "estimate",
     {"model": "Llama 3.1 70B", "hardware": {"card": "RTX 4090", "count": 2}},
     ["does not fit on 2 x rtx-4090", "it fits on 2 x rtx-4090, at about"]),
    ("H20 or L20 for 50 users?", "compare",
     {"model": "qwen2.5-72b", "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20},
      "options": [{"card": "h20"}, {"card": "l20"}]}, ["by cards", "x h20 needs", "electricity a year, against"]),
    ("What should I buy for Llama 70B under 450 W per card?", "recommend",
     {"model": "llama-3.1-70b", "constraints": {"power_w_per_card": 450}}, ["on one card", "split over cards"]),
    ("How many H20s serve 50 users at 20 tokens/s?", "capacity",
     {"model": "qwen2.5-72b", "target": {"concurrent_users": 50, "tokens_per_s_per_user": 20}, "cards": ["h20"]},
     ["x h20", "prompt is"]),
    ("How much memory does an 8B model need on an RTX 4090?", "memory",
     {"model": "llama-3.1-8b", "hardware": {"card": "rtx-4090"}}, ["the 8.0B-parameter model needs", "fits on 1 x rtx-4090"]),
    ("What does 10 kW cost a year?", "cost", {"power_w": 10000}, ["10,000 W", "of electricity a year"]),
    ("Is 1979 TFLOPS FP8 sparse a real figure?", "normalizeFigure",
     {"value": 1979, "precision": "fp8", "sparse": True}, ["989.5 dense FP8", "494.75 dense BF16"]),
    ("Tell me about DeepSeek-R1.", "getModel", {"model_id": "deepseek-r1"}, ["671.0B parameters", "37.6B active"]),
    ("一张4090能全参微调Qwen2.5-7B吗", "estimate",
     {"model": "qwen2.5-7b", "hardware": {"card": "rtx-4090"}, "workload": {"mode": "full_finetune"}, "lang": "zh"},
     ["单张 rtx-4090 放不下", "全参数微调"]),
    ("70B 模型需要多少显存？", "memory", {"model": "llama-3.1-70b", "lang": "zh"}, ["共需", "GB 显存"]),
    ("显存够用但跑不起来", "troubleshoot", {"q": "显存够用但跑不起来", "lang": "zh"}, ["最可能的原因"]),
    ("有哪些数据中心卡？", "listCards", {"line": "datacenter", "lang": "zh"}, ["张卡", "本页"]),
    ("H100 的参数是什么？", "getCard", {"card_id": "H100", "lang": "zh"}, ["显存", "带宽"]),
    ("消费级卡哪张最好？", "rankCards", {"line": "consumer", "lang": "zh"}, ["消费级产品线", "居首"]),
    ("H20 服务 50 个用户要几张？", "capacity",
     {"model": "qwen2.5-72b", "target": {"concurrent_users": 50}, "cards": ["h20"], "lang": "zh"},
     ["张 h20", "每位用户的输入为"]),
]


@pytest.mark.parametrize(("question", "tool", "arguments", "said"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_a_question_asked_through_a_tool_is_answered_in_the_first_sentence(server, question, tool, arguments, said):
    result = session(server, lambda c: c.call_tool(tool, arguments))
    first = result.content[0].text
    assert not result.is_error, first
    for phrase in said:
        assert phrase in first, (question, first)

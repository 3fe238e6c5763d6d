"""The LLM provider against local servers speaking OpenAI's chat completions
API and Anthropic's messages API (tests/hosts_servers.py): what each
dialect's model call sends, structured answers, retries on 429 and 5xx,
errors without the key."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from flowc.host import HostFailure, ToolError
from flowc.hosts.base import ProviderTimeout
from flowc.hosts.llm import LlmProvider
from flowc.hosts.llm_args import JSON_ONLY, prompt_of
from flowc.hosts.settings import LlmProfile
from hosts_servers import AnthropicServer, OpenAIServer

KEY = "sk-test-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


def ask(profile: LlmProfile, tool: str, args: dict, timeout_ms=None, name="main"):
    async def go():
        provider = LlmProvider(name, profile, backoff_base_s=0.01)
        await provider.start()
        try:
            return await provider.call(tool, args, timeout_ms)
        finally:
            await provider.aclose()
    return asyncio.run(go())


@pytest.fixture
def openai(monkeypatch):
    monkeypatch.setenv("FLOWC_TEST_OPENAI_KEY", KEY)
    with OpenAIServer(key=KEY) as server:
        server.profile = LlmProfile("openai", server.url + "/v1", "gpt-test", "FLOWC_TEST_OPENAI_KEY",
                                    max_retries=2)
        yield server


@pytest.fixture
def anthropic(monkeypatch):
    monkeypatch.setenv("FLOWC_TEST_ANTHROPIC_KEY", KEY)
    with AnthropicServer(key=KEY) as server:
        server.profile = LlmProfile("anthropic", server.url, "claude-test", "FLOWC_TEST_ANTHROPIC_KEY",
                                    max_retries=2)
        yield server


def sent(server) -> dict:
    return json.loads(server.requests[-1]["body"])


# ------------------------------------------------------------------ the args of each dialect
def test_aevatar_role_settings_reach_the_request(openai):
    role = {"id": "writer", "system_prompt": "You write.", "model": "gpt-role", "temperature": "0.2",
            "max_tokens": "64"}
    answer = ask(openai.profile, "writer", {"prompt": "Say hi", "role": role})
    assert answer == "echo: Say hi"
    body = sent(openai)
    assert body["model"] == "gpt-role" and body["temperature"] == 0.2 and body["max_tokens"] == 64
    assert body["messages"] == [{"role": "system", "content": "You write."}, {"role": "user", "content": "Say hi"}]
    assert "response_format" not in body
    assert openai.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}"


def test_profile_settings_fill_what_the_workflow_leaves_out(openai):
    profile = LlmProfile("openai", openai.profile.base_url, "gpt-default", "FLOWC_TEST_OPENAI_KEY",
                         temperature=0.7, max_tokens=100)
    ask(profile, "assistant", {"prompt": "p", "purpose": "draft"})
    body = sent(openai)
    assert body["model"] == "gpt-default" and body["temperature"] == 0.7 and body["max_tokens"] == 100
    assert body["messages"] == [{"role": "user", "content": "p"}]


def test_workflowskill_llm_tool_answers_parsed_json(openai):
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}}
    answer = ask(openai.profile, "llm", {"prompt": "Sum up", "system": "Be brief.", "schema": schema})
    assert answer == {"echo": "Sum up"}  # the server wraps its JSON in a ``` fence: tolerated
    body = sent(openai)
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]["content"]
    assert system.startswith("Be brief.\n\nRespond with a JSON object matching this schema:\n")
    assert json.dumps(schema, indent=2) in system and system.endswith(JSON_ONLY)


def test_agent_output_schema_is_json_schema_response_format(openai):
    schema = {"type": "object", "properties": {"label": {"enum": ["bug", "feature"]}, "score": {"type": "integer"}},
              "required": ["label", "score"]}
    answer = ask(openai.profile, "agent", {"instruction": "Classify", "system": "S", "model": "gpt-x",
                                           "output_schema": schema})
    assert answer == {"label": "bug", "score": 7}
    body = sent(openai)
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    assert body["model"] == "gpt-x"


def test_a_non_object_output_schema_is_wrapped_and_unwrapped(openai, anthropic):
    schema = {"type": "array", "items": {"type": "string"}}
    assert ask(openai.profile, "think", {"prompt": "List", "output_schema": schema}) == ["text"]
    assert sent(openai)["response_format"]["json_schema"]["schema"]["properties"]["value"] == schema
    assert ask(anthropic.profile, "think", {"prompt": "List", "output_schema": schema}) == ["text"]


def test_dialect3_kinds_render_their_fields(openai):
    answer = ask(openai.profile, "classify", {"input": "The app crashes", "classes": ["bug", "feature"]})
    user = sent(openai)["messages"][-1]["content"]
    assert user == '## classes\n["bug", "feature"]\n\n## input\nThe app crashes'
    assert answer == "echo: " + user
    assert sent(openai)["messages"][0]["content"].startswith("Classify the input")


def test_anthropic_messages_request_and_text_answer(anthropic):
    role = {"id": "writer", "system_prompt": "You write.", "model": "claude-role", "temperature": "0.5"}
    assert ask(anthropic.profile, "writer", {"prompt": "Hello", "role": role}) == "echo: Hello"
    request = anthropic.requests[-1]
    assert request["headers"]["x-api-key"] == KEY and request["headers"]["anthropic-version"] == "2023-06-01"
    body = json.loads(request["body"])
    assert body == {"model": "claude-role", "messages": [{"role": "user", "content": "Hello"}],
                    "system": "You write.", "temperature": 0.5, "max_tokens": 4096}


def test_anthropic_output_schema_is_a_forced_tool(anthropic):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert ask(anthropic.profile, "extract", {"input": "seven", "output_schema": schema}) == {"n": 7}
    body = sent(anthropic)
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert body["tools"][0]["input_schema"] == schema


def test_anthropic_json_answer_for_workflowskill(anthropic):
    anthropic.replies.append({"text": '{"haiku": "old pond"}'})
    assert ask(anthropic.profile, "llm", {"prompt": "A haiku", "schema": {"haiku": "string"}}) == {"haiku": "old pond"}
    anthropic.replies.append({"text": "no json here"})
    with pytest.raises(ToolError, match="not JSON: no json here"):
        ask(anthropic.profile, "llm", {"prompt": "A haiku"})


def test_a_route_naming_the_profile_still_reads_the_kind():
    # a config route ``llm:classify = "llm.gpt"`` calls the provider's tool "gpt"
    by_name = prompt_of("classify", {"input": "x", "classes": ["a", "b"]})
    assert prompt_of("gpt", {"input": "x", "classes": ["a", "b"]}) == by_name
    schema = {"type": "object"}
    assert prompt_of("gpt", {"input": "x", "output_schema": schema}) == prompt_of("extract", {
        "input": "x", "output_schema": schema})
    assert prompt_of("gpt", {"prompt": "p", "schema": {"a": "string"}}).json_answer  # WorkflowSkill


def test_prompt_of_reads_each_shape():
    assert prompt_of("llm", {"prompt": "p"}).json_answer
    assert not prompt_of("assistant", {"prompt": "p"}).json_answer
    agent = prompt_of("agent", {"instruction": "do", "context": {"a": 1}})
    assert agent.user == 'do\n\n## context\n{"a": 1}'
    role = prompt_of("r", {"prompt": "p", "role": {"temperature": "warm", "max_tokens": "12"}})
    assert role.temperature is None and role.max_tokens == 12


# ------------------------------------------------------------------ retries and errors
def test_429_with_retry_after_is_retried(openai):
    openai.replies.extend([{"status": 429, "headers": {"retry-after-ms": "150"}},
                           {"status": 503, "body": {"error": {"message": "overloaded"}}}])
    started = time.monotonic()
    assert ask(openai.profile, "r", {"prompt": "again"}) == "echo: again"
    assert len(openai.requests) == 3 and time.monotonic() - started >= 0.15


def test_anthropic_retry_after_seconds_and_529(anthropic):
    anthropic.replies.extend([{"status": 529, "body": {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}}, {"status": 429, "headers": {"retry-after": "0"}}])
    assert ask(anthropic.profile, "r", {"prompt": "x"}) == "echo: x"
    assert len(anthropic.requests) == 3


def test_retries_stop_at_max_retries_with_the_api_message(openai):
    openai.replies.extend([{"status": 429}] * 3)
    with pytest.raises(ToolError) as info:
        ask(openai.profile, "r", {"prompt": "x"})
    assert len(openai.requests) == 3  # the call and max_retries=2 retries
    assert info.value.message == "main: openai HTTP 429: Rate limit reached for requests"


def test_a_4xx_is_not_retried(anthropic):
    anthropic.replies.append({"status": 400, "body": {"type": "error", "error": {
        "type": "invalid_request_error", "message": "messages: at least one message is required"}}})
    with pytest.raises(ToolError, match="anthropic HTTP 400: messages: at least one message is required"):
        ask(anthropic.profile, "r", {"prompt": "x"})
    assert len(anthropic.requests) == 1


def test_a_wrong_key_error_never_shows_the_key(openai, monkeypatch):
    wrong = "sk-wrong-0123456789abcdef0123456789"
    monkeypatch.setenv("FLOWC_TEST_OPENAI_KEY", wrong)
    with pytest.raises(ToolError) as info:
        ask(openai.profile, "r", {"prompt": "x"})
    # the server quoted the key it got; the message keeps the status and the rest
    assert info.value.message == "main: openai HTTP 401: Incorrect API key provided: [redacted]."
    assert wrong not in str(info.value)


def test_a_missing_key_is_a_host_failure(openai, monkeypatch):
    monkeypatch.delenv("FLOWC_TEST_OPENAI_KEY")
    with pytest.raises(HostFailure, match="FLOWC_TEST_OPENAI_KEY"):
        ask(openai.profile, "r", {"prompt": "x"})
    assert openai.requests == []


def test_a_key_a_header_cannot_carry_is_refused_without_showing_it(openai, monkeypatch):
    for bad in (KEY + "\n", KEY + "\u00e9"):
        monkeypatch.setenv("FLOWC_TEST_OPENAI_KEY", bad)
        with pytest.raises(HostFailure) as info:
            ask(openai.profile, "r", {"prompt": "x"})
        assert "printable ASCII" in info.value.message and KEY not in info.value.message
    assert openai.requests == []


def test_a_call_without_a_prompt_is_a_tool_error(openai):
    with pytest.raises(ToolError, match="no \"prompt\""):
        ask(openai.profile, "r", {"role": {"id": "r"}})


def test_deadlines(openai):
    openai.replies.append({"status": 429, "headers": {"retry-after": "5"}})
    with pytest.raises(ProviderTimeout):  # the call's deadline cuts the wait short
        ask(openai.profile, "r", {"prompt": "x"}, timeout_ms=200)


def test_an_unreachable_api_is_a_tool_error():
    profile = LlmProfile("openai", "http://127.0.0.1:9/v1", "m", max_retries=1)
    with pytest.raises(ToolError, match="cannot reach openai"):
        ask(profile, "r", {"prompt": "x"})


def test_an_answer_past_the_size_cap_is_refused(openai, monkeypatch):
    import flowc.hosts.llm as llm_module

    monkeypatch.setattr(llm_module, "MAX_RESPONSE_BYTES", 100)
    with pytest.raises(ToolError, match="larger than 100 bytes"):
        ask(openai.profile, "r", {"prompt": "x"})


def test_a_profile_of_another_class_takes_the_defaults_it_lacks(openai):
    import attrs

    @attrs.frozen
    class Loaded:  # what a config loader may build: the fields it knows
        provider: str
        base_url: str
        model: str
        api_key_env: str

    provider = LlmProvider("main", Loaded("openai", openai.url + "/v1", "gpt-test", "FLOWC_TEST_OPENAI_KEY"))
    assert provider.profile.max_retries == 3 and provider.profile.timeout_ms == 120000
    assert ask(provider.profile, "r", {"prompt": "x"}) == "echo: x"

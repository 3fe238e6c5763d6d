"""The host config: TOML and mcpServers JSON, its JSON Schema, the routing
table and how a call's arguments become a tool's. No servers run here
(tests/test_hosts_mcp.py runs them)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
from flowc import cli
from flowc.host import ToolError
from flowc.hosts.config import (
    ConfigError,
    HttpConfig,
    LlmProfile,
    McpServer,
    expand_env,
    load_config,
    load_host_config,
    load_mcp_json,
    parse_config,
)
from flowc.hosts.mcp import value_of_result
from flowc.hosts.router import tool_args
from flowc.hosts.routes import Refusal, RouteTable, Target
from flowc.hosts.schema import HOST_SCHEMA, MCP_JSON_SCHEMA
from mcp.types import CallToolResult, ImageContent, TextContent

FULL = """\
[mcp.servers.time]
command = "mcp-server-time"
args = ["--local-timezone", "UTC"]
env = { TZ = "UTC", TOKEN = "${TIME_TOKEN}" }
cwd = "/tmp"
tools = ["get_current_time", "convert_time"]
timeout_ms = 5000

[mcp.servers.search]
url = "http://127.0.0.1:8000/mcp"
headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }

[llm.default]
provider = "openai"
base_url = "https://api.openai.com/v1"
model = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY"
temperature = 0.2
max_tokens = 512
timeout_ms = 45000
max_retries = 0

[llm.claude]
provider = "anthropic"
base_url = "https://api.anthropic.com"
model = "claude-sonnet"
api_key_env = "ANTHROPIC_API_KEY"

[http]
allow = ["https://api.example.com/"]
timeout_ms = 2000
max_body_bytes = 1000
max_redirects = 0

[routes]
"tool:lookup" = "search.find"
"llm:analyst" = "llm.claude"
"""


def test_a_full_config_reads_into_typed_objects():
    config = parse_config(tomllib.loads(FULL), "host.toml")
    time, search = config.mcp["time"], config.mcp["search"]
    assert time == McpServer("time", "mcp-server-time", ("--local-timezone", "UTC"),
                             (("TOKEN", "${TIME_TOKEN}"), ("TZ", "UTC")), "/tmp", None, (),
                             ("get_current_time", "convert_time"), 5000)
    assert time.transport == "stdio" and search.transport == "http"
    assert search.url == "http://127.0.0.1:8000/mcp" and search.timeout_ms == 60_000
    assert search.headers == (("Authorization", "Bearer ${SEARCH_TOKEN}"),)   # kept unexpanded
    assert config.llm["default"] == LlmProfile("openai", "https://api.openai.com/v1", "gpt-4o-mini",
                                               "OPENAI_API_KEY", 0.2, 512, timeout_ms=45000, max_retries=0)
    # what the file leaves out takes the providers' defaults (one definition: flowc.hosts.settings)
    assert config.llm["claude"] == LlmProfile("anthropic", "https://api.anthropic.com", "claude-sonnet",
                                              "ANTHROPIC_API_KEY")
    assert config.llm["claude"].temperature is None and config.llm["claude"].max_tokens is None
    assert config.http == HttpConfig(["https://api.example.com/"], 2000, 1000, max_redirects=0)
    assert parse_config({"http": {"allow": []}}).http == HttpConfig([])
    # a local OpenAI-compatible server takes no key: no api_key_env, none sent
    local = {"provider": "openai", "base_url": "http://127.0.0.1:8080/v1", "model": "m"}
    assert parse_config({"llm": {"local": local}}).llm["local"].api_key_env is None
    jsonschema.validate({"llm": {"local": local}}, HOST_SCHEMA)
    assert config.routes == {"tool:lookup": "search.find", "llm:analyst": "llm.claude"}


def test_the_manuals_configs_are_valid_for_flowc_and_the_schema():
    manual = (Path(cli.__file__).resolve().parents[1] / "docs" / "hosts.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", manual, re.DOTALL)
    assert len(blocks) >= 2
    for block in blocks:
        data = tomllib.loads(block)
        parse_config(data, "docs/hosts.md")
        jsonschema.validate(data, HOST_SCHEMA)
    full = parse_config(tomllib.loads(blocks[0]))
    assert full.http.max_redirects == 5 and full.llm["default"].max_retries == 2


def test_the_full_config_is_valid_under_the_published_schema():
    jsonschema.Draft202012Validator.check_schema(HOST_SCHEMA)
    jsonschema.validate(tomllib.loads(FULL), HOST_SCHEMA)


LLM_NO_KEY = '[llm.a]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:1/v1"\n'
LLM = '[llm.a]\nprovider = "openai"\nmodel = "m"\napi_key_env = "K"\n'
LLM_OK = LLM_NO_KEY + 'api_key_env = "K"\n'

BAD = {
    "unknown top-level key": ('[server]\ncommand = "x"\n', "unknown key 'server'"),
    "neither command nor url": ('[mcp.servers.a]\nargs = ["x"]\n', "needs either `command`"),
    "both command and url": ('[mcp.servers.a]\ncommand = "x"\nurl = "http://h/mcp"\n', "needs either"),
    "args not strings": ('[mcp.servers.a]\ncommand = "x"\nargs = [1]\n', "args must be a list of strings"),
    "env not strings": ('[mcp.servers.a]\ncommand = "x"\nenv = { K = 5 }\n', "env must map names"),
    "url not http": ('[mcp.servers.a]\nurl = "file:///x"\n', "http:// or https://"),
    "args with a url": ('[mcp.servers.a]\nurl = "http://h/mcp"\nargs = ["x"]\n', "is for a stdio server"),
    "headers with a command": ('[mcp.servers.a]\ncommand = "x"\nheaders = { A = "b" }\n', "`headers` is for"),
    "a dot in a server name": ('[mcp.servers."a.b"]\ncommand = "x"\n', "must be letters"),
    "a reserved server name": ('[mcp.servers.http]\ncommand = "x"\n', "names the built-in"),
    "sse transport": ('[mcp.servers.a]\nurl = "http://h/sse"\ntype = "sse"\n', "not 'sse'"),
    "zero timeout": ('[mcp.servers.a]\ncommand = "x"\ntimeout_ms = 0\n', "positive integer"),
    "unknown server key": ('[mcp.servers.a]\ncommand = "x"\nauto = true\n', "unknown key 'auto'"),
    "llm provider": ('[llm.a]\nprovider = "x"\nbase_url = "u"\nmodel = "m"\napi_key_env = "K"\n',
                     "provider must be"),
    "llm without a model": ('[llm.a]\nprovider = "openai"\nbase_url = "u"\napi_key_env = "K"\n',
                            "needs `model`"),
    "llm base_url not a URL": (LLM + 'base_url = "api.openai.com"\n', "base_url must be an http"),
    "llm key in api_key_env": (LLM_NO_KEY + 'api_key_env = "sk-abc.def"\n', "must name an environment"),
    "llm zero timeout": (LLM_OK + "timeout_ms = 0\n", "timeout_ms must be a positive integer"),
    "llm negative retries": (LLM_OK + "max_retries = -1\n", "max_retries must be an integer, 0 or more"),
    "llm retries not an integer": (LLM_OK + "max_retries = 1.5\n", "max_retries must be an integer"),
    "llm zero max_tokens": (LLM_OK + "max_tokens = 0\n", "max_tokens must be a positive integer"),
    "llm temperature text": (LLM_OK + 'temperature = "hot"\n', "temperature must be a number"),
    "llm temperature too high": (LLM_OK + "temperature = 3.5\n", "from 0 to 2"),
    "llm unknown key": (LLM_OK + "top_p = 0.5\n", "unknown key 'top_p'"),
    "http negative redirects": ('[http]\nallow = []\nmax_redirects = -1\n', "max_redirects must be an integer"),
    "http redirects a boolean": ('[http]\nallow = []\nmax_redirects = true\n', "max_redirects must be"),
    "http zero body": ('[http]\nallow = []\nmax_body_bytes = 0\n', "max_body_bytes must be a positive"),
    "http allow not URLs": ('[http]\nallow = ["api.example.com"]\n', "each prefix must be an http"),
    "http allow not a list": ('[http]\nallow = "https://x/"\n', "allow must be a list"),
    "route not a string": ("[routes]\nx = 1\n", "must be a target string"),
    "disabled not a boolean": ('[mcp.servers.a]\ncommand = "x"\ndisabled = "yes"\n', "true or false"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_config_is_one_line_and_the_schema_rejects_it_too(name):
    text, expected = BAD[name]
    with pytest.raises(ConfigError) as info:
        parse_config(tomllib.loads(text), "host.toml")
    message = str(info.value)
    assert message.startswith("host.toml: ") and expected in message and "\n" not in message
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(tomllib.loads(text), HOST_SCHEMA)


def test_secret_values_never_appear_in_messages(monkeypatch):
    text = '[mcp.servers.a]\ncommand = "x"\nenv = { TOKEN = ["sk-very-secret"] }\n'
    with pytest.raises(ConfigError) as info:
        parse_config(tomllib.loads(text), "host.toml")
    assert "sk-very-secret" not in str(info.value) and "TOKEN" not in str(info.value)
    monkeypatch.setenv("PRESENT_TOKEN", "sk-present-secret")
    assert expand_env("Bearer ${PRESENT_TOKEN}", "header") == "Bearer sk-present-secret"
    with pytest.raises(ConfigError) as info:
        expand_env("${PRESENT_TOKEN}:${ABSENT_TOKEN}", "MCP server 'a': env TOKEN")
    assert "ABSENT_TOKEN" in str(info.value) and "sk-present-secret" not in str(info.value)


def test_files_toml_and_mcp_servers_json(tmp_path):
    toml = tmp_path / "host.toml"
    toml.write_text('[mcp.servers.time]\ncommand = "mcp-server-time"\n')
    servers = {"mcpServers": {"echo": {"command": "python3", "args": ["echo.py"], "env": {"A": "1"}},
                              "remote": {"type": "streamable-http", "url": "https://h.example/mcp"},
                              "off": {"command": "x", "disabled": True}}}
    jsonschema.validate(servers, MCP_JSON_SCHEMA)
    js = tmp_path / "servers.json"
    js.write_text(json.dumps(servers))
    assert sorted(load_mcp_json(str(js)).mcp) == ["echo", "remote"]
    both = load_host_config(str(toml), str(js))
    assert sorted(both.mcp) == ["echo", "remote", "time"]
    assert load_host_config(None, str(js)).mcp["echo"].env == (("A", "1"),)
    assert load_config(str(toml)).mcp["time"].command == "mcp-server-time"
    clash = tmp_path / "clash.json"
    clash.write_text(json.dumps({"mcpServers": {"time": {"command": "x"}}}))
    with pytest.raises(ConfigError, match="'time' is also defined"):
        load_host_config(str(toml), str(clash))


@pytest.mark.parametrize(("text", "expected"), [
    ("not = [toml", "is not valid TOML"),
])
def test_unreadable_files(tmp_path, text, expected):
    path = tmp_path / "host.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=expected):
        load_config(str(path))
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(str(tmp_path / "missing.toml"))
    bad_json = tmp_path / "servers.json"
    bad_json.write_text('{"servers": {}}')
    with pytest.raises(ConfigError, match="mcpServers"):
        load_mcp_json(str(bad_json))


def test_schema_command_prints_the_published_schema(capsys):
    assert cli.main(["schema", "host"]) == 0
    assert json.loads(capsys.readouterr().out) == HOST_SCHEMA


# ------------------------------------------------------------------ routes
_LLM_DEFAULT = '[llm.default]\nprovider = "openai"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\napi_key_env = "K"\n'


def _table(routes: str = "", http: bool = False, llm: bool = False) -> RouteTable:
    text = routes
    if http:
        text += '\n[http]\nallow = ["https://x.example/"]\n'
    if llm:
        text += "\n" + _LLM_DEFAULT
    config = parse_config(tomllib.loads(text))
    return RouteTable(config, {"time": ["get_current_time", "convert_time"], "clock": ["get_current_time"],
                               "echo": ["echo", "args_taker"]})


def test_tool_names_resolve_bare_qualified_or_not_at_all():
    table = _table()
    assert table.resolve("tool", "convert_time") == Target("time", "convert_time", "tool_args")
    assert table.resolve("tool", "clock.get_current_time") == Target("clock", "get_current_time", "tool_args")
    ambiguous = table.resolve("tool", "get_current_time")
    assert isinstance(ambiguous, Refusal) and ambiguous.code == "HST002"
    assert "clock.get_current_time or time.get_current_time" in ambiguous.message
    assert table.resolve("tool", "nope").code == "HST001"
    assert "has no tool 'nope'" in table.resolve("tool", "echo.nope").message
    assert "[http]" in table.resolve("tool", "web_fetch").message
    assert _table(http=True).resolve("tool", "web_fetch") == Target("http", "web_fetch", "tool_args")


def test_each_capability_resolves_its_own_way():
    table = _table(http=True, llm=True)
    assert table.resolve("mcp", "time/convert_time") == Target("time", "convert_time", "nested_args")
    assert table.resolve("mcp", "nowhere/x").code == "HST001"
    assert table.resolve("connector", "time") == Target("time", None, "payload")
    assert table.resolve("connector", "echo") == Target("echo", None, "payload")
    assert table.resolve("connector", "convert_time") == Target("time", "convert_time", "payload")
    assert table.check_operation("time", "convert_time") is None
    assert table.check_operation("time", "nope").code == "HST001"
    assert table.resolve("http", "request") == Target("http", "http_request", "parameters")
    assert table.resolve("llm", "analyst") == Target("llm.default", "analyst", "as_is")
    assert table.resolve("memory", "get").code == "HST001"
    assert _table().resolve("llm", "agent").code == "HST001"
    assert _table().resolve("http", "request").code == "HST001"


def test_routes_come_first():
    table = _table('[routes]\n"tool:get_current_time" = "time.get_current_time"\nnow = "clock.get_current_time"\n'
                   '"tool:wrong" = "nowhere.tool"\n')
    assert table.resolve("tool", "get_current_time") == Target("time", "get_current_time", "tool_args")
    assert table.resolve("tool", "now") == Target("clock", "get_current_time", "tool_args")
    assert table.resolve("connector", "now") == Target("clock", "get_current_time", "payload")
    assert "names no MCP server" in table.resolve("tool", "wrong").message


def test_a_route_to_a_profile_keeps_the_workflows_own_name():
    # the LLM provider reads the request by the name the workflow called
    # (WorkflowSkill's `llm` tool answers JSON), not by the profile's name
    table = _table('[routes]\nllm = "llm.default"\n"llm:writer" = "llm.default"\n', llm=True)
    assert table.resolve("tool", "llm") == Target("llm.default", "llm", "as_is")
    assert table.resolve("llm", "writer") == Target("llm.default", "writer", "as_is")
    assert table.resolve("llm", "default") == Target("llm.default", "default", "as_is")
    assert table.resolve("llm", "agent") == Target("llm.default", "agent", "as_is")



def test_workflowskills_llm_tool_goes_to_a_profile_unless_a_server_has_it():
    assert _table(llm=True).resolve("tool", "llm") == Target("llm.default", "llm", "as_is")
    named = _table('[llm.llm]\nprovider = "anthropic"\nbase_url = "http://127.0.0.1:1"\nmodel = "m"\n'
                   'api_key_env = "K"\n', llm=True)
    assert named.resolve("tool", "llm") == Target("llm.llm", "llm", "as_is")
    other = _table('[llm.gpt]\nprovider = "openai"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
                   'api_key_env = "K"\n')
    assert "no LLM profile 'llm' and no [llm.default]" in other.resolve("tool", "llm").message
    assert _table().resolve("tool", "llm").code == "HST001"
    served = RouteTable(parse_config(tomllib.loads(_LLM_DEFAULT)), {"models": ["llm"]})
    assert served.resolve("tool", "llm") == Target("models", "llm", "tool_args")   # an MCP tool comes first


class _Schema:
    def __init__(self, props: dict) -> None:
        self.props = props

    def input_schema(self, tool: str) -> dict:
        return {"type": "object", "properties": self.props}


def test_arguments_take_the_shape_the_call_needs():
    tool = Target("echo", "echo", "tool_args")
    assert tool_args(tool, "echo", {"text": "a"}) == {"text": "a"}                      # WorkflowSkill
    assert tool_args(tool, "echo", {"args": {"text": "a"}}, _Schema({"text": {}})) == {"text": "a"}  # dialect 3
    assert tool_args(tool, "args_taker", {"args": {"x": 1}}, _Schema({"args": {}})) == {"args": {"x": 1}}
    nested = Target("time", "convert_time", "nested_args")
    assert tool_args(nested, "convert_time", {"server": "time", "tool": "t", "args": {"a": 1}}) == {"a": 1}
    payload = Target("time", None, "payload")
    assert tool_args(payload, "t", {"operation": "t", "payload": '{"timezone": "UTC"}'}) == {"timezone": "UTC"}
    assert tool_args(payload, "t", {"operation": "t", "payload": " "}) == {}
    with pytest.raises(ToolError, match="JSON object"):
        tool_args(payload, "t", {"operation": "t", "payload": "not json"})
    http = Target("http", "http_request", "parameters")
    assert tool_args(http, "http_request", {"url": "https://x.example/", "method": "GET"}) == \
        {"url": "https://x.example/", "method": "GET"}                                    # dialect 3
    assert tool_args(http, "http_request", {"input": "", "parameters": {"url": "u"}}) == {"url": "u"}  # aevatar
    assert tool_args(http, "http_request", {"input": "hi", "parameters": {"url": "u", "method": "POST"}}) == \
        {"url": "u", "method": "POST", "body": "hi"}
    # a GET (the default method) or a HEAD sends no body, whatever the step's input
    assert tool_args(http, "http_request", {"input": "hi", "parameters": {"url": "u"}}) == {"url": "u"}
    assert tool_args(http, "http_request", {"input": "hi", "parameters": {"url": "u", "method": "head"}}) == \
        {"url": "u", "method": "head"}


# ------------------------------------------------------------------ results
def test_tool_results_map_to_the_documented_values():
    text = TextContent(type="text", text="hello")
    assert value_of_result(CallToolResult(content=[text], structured_content={"result": "hello"})) \
        == {"result": "hello"}
    assert value_of_result(CallToolResult(content=[text])) == "hello"
    assert value_of_result(CallToolResult(content=[TextContent(type="text", text='{"a": [1]}')])) == {"a": [1]}
    assert value_of_result(CallToolResult(content=[TextContent(type="text", text="42")])) == "42"
    assert value_of_result(CallToolResult(content=[text, text])) == ["hello", "hello"]
    assert value_of_result(CallToolResult(content=[])) is None
    image = ImageContent(type="image", data="AAAA", mime_type="image/png")
    assert value_of_result(CallToolResult(content=[image, text])) == [
        {"type": "image", "data": "AAAA", "mimeType": "image/png"}, {"type": "text", "text": "hello"}]
    with pytest.raises(ToolError, match="^no such city$"):
        value_of_result(CallToolResult(content=[TextContent(type="text", text="no such city")], is_error=True))

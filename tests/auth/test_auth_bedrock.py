"""Amazon Bedrock: ConverseStream against a fake endpoint that checks the URL, verifies the SigV4 signature
with botocore's own signer, and streams the binary AWS event stream; credentials from keys, a profile,
web identity (a fake STS) or a bearer token."""

from __future__ import annotations

import asyncio
import binascii
import json
import struct
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from auth_fakes import Answer, FakeHTTP, Request, builtin_registry

from pi_core.ai import Context, ToolDeclaration, UserMessage, complete

MODEL = "anthropic.claude-opus-4-6-v1"
PATH = f"/model/{quote(MODEL, safe='')}/converse-stream"
CONTEXT = Context(system_prompt="Be brief.", messages=[UserMessage(content="hello")],
                  tools=[ToolDeclaration(name="read", description="Read a file",
                                         parameters={"type": "object", "properties": {"path": {"type": "string"}}})])


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


# -- the AWS event stream, written by hand so that botocore's decoder checks our framing -----------------
def _header(name: str, value: str) -> bytes:
    raw = value.encode()
    return bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw


def frame(event: str, payload: dict[str, Any], message_type: str = "event") -> bytes:
    kind = ":event-type" if message_type == "event" else ":exception-type"
    headers = _header(kind, event) + _header(":content-type", "application/json") + \
        _header(":message-type", message_type)
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + headers + body
    return message + struct.pack(">I", binascii.crc32(message) & 0xFFFFFFFF)


def converse_events(*, tool: bool = True) -> bytes:
    frames = [frame("messageStart", {"role": "assistant"}),
              frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Think."}}}),
              frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig=="}}}),
              frame("contentBlockStop", {"contentBlockIndex": 0}),
              frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Hello "}}),
              frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "there"}}),
              frame("contentBlockStop", {"contentBlockIndex": 1})]
    if tool:
        frames += [frame("contentBlockStart", {"contentBlockIndex": 2, "start": {"toolUse": {
                       "toolUseId": "tooluse_1", "name": "read"}}}),
                   frame("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"path": '}}}),
                   frame("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '"a.py"}'}}}),
                   frame("contentBlockStop", {"contentBlockIndex": 2})]
    frames += [frame("messageStop", {"stopReason": "tool_use" if tool else "end_turn"}),
               frame("metadata", {"usage": {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18,
                                            "cacheReadInputTokens": 3}, "metrics": {"latencyMs": 5}})]
    return b"".join(frames)


def verify_sigv4(request: Request, access_key: str, secret: str, token: str | None, region: str) -> None:
    """Recompute the signature with botocore's SigV4Auth from what arrived; it must match."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    authorization = request.headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 ")
    fields = dict(part.strip().split("=", 1) for part in authorization[len("AWS4-HMAC-SHA256 "):].split(","))
    date = request.headers["x-amz-date"]
    assert fields["Credential"] == f"{access_key}/{date[:8]}/{region}/bedrock/aws4_request"
    signed = fields["SignedHeaders"].split(";")
    assert "host" in signed and "x-amz-date" in signed
    if token is not None:
        assert request.headers["x-amz-security-token"] == token and "x-amz-security-token" in signed
    url = f"http://{request.headers['host']}{request.path}"
    again = AWSRequest(method="POST", url=url, data=request.raw,
                       headers={name: request.headers[name] for name in signed})
    again.context["timestamp"] = date
    signer = SigV4Auth(Credentials(access_key, secret, token), "bedrock", region)
    canonical = signer.canonical_request(again)
    expected = signer.signature(signer.string_to_sign(again, canonical), again)
    assert fields["Signature"] == expected


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_BEARER_TOKEN_BEDROCK", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with FakeHTTP() as http:
        yield http


def registry_for(agent_dir: Path, http: FakeHTTP) -> Any:
    return builtin_registry(agent_dir, process_env=True,
                            models_json={"providers": {"amazon-bedrock": {"baseUrl": http.url}}})


def test_keys_from_the_environment_sign_the_request(agent_dir: Path, bedrock: FakeHTTP,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-example")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token-example")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    seen: list[Request] = []

    def answer(request: Request) -> Answer:
        seen.append(request)
        verify_sigv4(request, "AKIDEXAMPLE", "secret-example", "session-token-example", "eu-west-1")
        return Answer(200, converse_events(), {"content-type": "application/vnd.amazon.eventstream"})

    bedrock.route("POST", PATH, answer)
    registry = registry_for(agent_dir, bedrock)
    assert registry.has_auth("amazon-bedrock")
    model = registry.get_model("amazon-bedrock", MODEL)
    reply = run(complete(model, CONTEXT, registry=registry, reasoning="high"))
    assert reply.stop_reason == "toolUse", reply.error_message
    assert [b.type for b in reply.content] == ["thinking", "text", "toolCall"]
    assert reply.content[0].thinking == "Think." and reply.content[0].thinking_signature == "sig=="
    assert reply.content[1].text == "Hello there" and reply.content[2].arguments == {"path": "a.py"}
    assert (reply.usage.input, reply.usage.output, reply.usage.cache_read) == (11, 7, 3)
    body = seen[0].body
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert body["messages"] == [{"role": "user", "content": [{"text": "hello"}, {"cachePoint": {"type": "default"}}]}]
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "read"
    assert body["inferenceConfig"]["maxTokens"] == model.max_tokens
    assert body["additionalModelRequestFields"]["thinking"]["type"] == "adaptive"


def test_govcloud_requests_leave_out_the_thinking_display(agent_dir: Path, bedrock: FakeHTTP,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-example")
    seen: list[Request] = []

    def answer(request: Request) -> Answer:
        seen.append(request)
        return Answer(200, converse_events(tool=False), {"content-type": "application/vnd.amazon.eventstream"})

    bedrock.route("POST", PATH, answer)
    registry = registry_for(agent_dir, bedrock)
    model = registry.get_model("amazon-bedrock", MODEL)
    for region in ("us-gov-west-1", "us-east-1"):
        monkeypatch.setenv("AWS_REGION", region)
        assert run(complete(model, CONTEXT, registry=registry, reasoning="high")).stop_reason == "stop"
    govcloud, commercial = (r.body["additionalModelRequestFields"]["thinking"] for r in seen)
    assert govcloud == {"type": "adaptive"}  # GovCloud rejects thinking.display
    assert commercial == {"type": "adaptive", "display": "summarized"}
    assert "us-gov-west-1/bedrock" in seen[0].headers["authorization"]


def test_a_named_profile_and_its_region(agent_dir: Path, bedrock: FakeHTTP, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "aws-credentials").write_text("[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = s3cr3t\n")
    (tmp_path / "aws-config").write_text("[profile work]\nregion = ap-southeast-2\n")
    monkeypatch.setenv("AWS_PROFILE", "work")
    bedrock.route("POST", PATH, lambda r: (verify_sigv4(r, "AKIDWORK", "s3cr3t", None, "ap-southeast-2"),
                                           Answer(200, converse_events(tool=False)))[1])
    registry = registry_for(agent_dir, bedrock)
    reply = run(complete(registry.get_model("amazon-bedrock", MODEL), CONTEXT, registry=registry))
    assert reply.stop_reason == "stop" and reply.text() == "Hello there", reply.error_message


STS_REPLY = """<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAWEB</AccessKeyId>
<SecretAccessKey>web-secret</SecretAccessKey><SessionToken>web-session</SessionToken>
<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123:assumed-role/r/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"""


def test_web_identity_credentials_irsa(agent_dir: Path, bedrock: FakeHTTP, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "token").write_text("the-oidc-token")
    monkeypatch.setenv("AWS_WEB_IDENTITY_TOKEN_FILE", str(tmp_path / "token"))
    monkeypatch.setenv("AWS_ROLE_ARN", "arn:aws:iam::123:role/pi")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", bedrock.url)
    sts: list[Request] = []
    bedrock.route("POST", "/", lambda r: (sts.append(r), Answer(200, STS_REPLY, {"content-type": "text/xml"}))[1])
    bedrock.route("POST", PATH, lambda r: (verify_sigv4(r, "ASIAWEB", "web-secret", "web-session", "us-west-2"),
                                           Answer(200, converse_events(tool=False)))[1])
    registry = registry_for(agent_dir, bedrock)
    reply = run(complete(registry.get_model("amazon-bedrock", MODEL), CONTEXT, registry=registry))
    assert reply.text() == "Hello there", reply.error_message
    assert sts and sts[0].body["Action"] == "AssumeRoleWithWebIdentity"
    assert sts[0].body["WebIdentityToken"] == "the-oidc-token"


def test_a_bedrock_api_key_is_a_bearer_token(agent_dir: Path, bedrock: FakeHTTP,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
    bedrock.route("POST", PATH, lambda r: Answer(200, converse_events(tool=False)))
    registry = registry_for(agent_dir, bedrock)
    reply = run(complete(registry.get_model("amazon-bedrock", MODEL), CONTEXT, registry=registry))
    assert reply.text() == "Hello there", reply.error_message
    sent = bedrock.requests_to(PATH)[0]
    assert sent.headers["authorization"] == "Bearer bedrock-api-key" and "x-amz-date" not in sent.headers


def test_errors_in_the_stream_and_in_the_response(agent_dir: Path, bedrock: FakeHTTP,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "k")
    answers = [Answer(200, frame("messageStart", {"role": "assistant"}) +
                      frame("throttlingException", {"message": "Too many requests"}, "exception")),
               Answer(400, {"message": "The provided model identifier is invalid.", "__type": "ValidationException"},
                      {"x-amzn-errortype": "ValidationException:http://internal.amazon.com/"})]
    bedrock.route("POST", PATH, lambda r: answers.pop(0))
    registry = registry_for(agent_dir, bedrock)
    model = registry.get_model("amazon-bedrock", MODEL)
    first = run(complete(model, CONTEXT, registry=registry))
    second = run(complete(model, CONTEXT, registry=registry))
    assert first.error_message == "Throttling error: Too many requests"
    assert second.error_message == "400 Validation error: The provided model identifier is invalid."


def test_no_credentials_and_no_botocore_are_clear_errors(agent_dir: Path, bedrock: FakeHTTP,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    registry = registry_for(agent_dir, bedrock)
    assert not registry.has_auth("amazon-bedrock")
    reply = run(complete(registry.get_model("amazon-bedrock", MODEL), CONTEXT, registry=registry))
    assert "No AWS credentials for Amazon Bedrock" in reply.error_message and "AWS_PROFILE" in reply.error_message
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "k")
    monkeypatch.setitem(sys.modules, "botocore", None)
    monkeypatch.setitem(sys.modules, "botocore.session", None)
    reply = run(complete(registry.get_model("amazon-bedrock", MODEL), CONTEXT, registry=registry))
    assert reply.stop_reason == "error" and "pip install 'pi-core-agent[bedrock]'" in reply.error_message


def test_ecs_task_credentials_from_the_container_endpoint(agent_dir: Path, bedrock: FakeHTTP,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """ECS task roles (pi: "ECS task credentials ... through the standard AWS_CONTAINER_CREDENTIALS_*
    variables"): botocore's container provider fetches them from the endpoint, and they sign the request."""
    from datetime import datetime, timedelta, timezone

    expiration = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fetched: list[Request] = []

    def credentials(request: Request) -> Answer:
        fetched.append(request)
        return Answer(200, {"AccessKeyId": "ASIAECSEXAMPLE", "SecretAccessKey": "ecs-secret",
                            "Token": "ecs-session-token", "Expiration": expiration})

    def answer(request: Request) -> Answer:
        verify_sigv4(request, "ASIAECSEXAMPLE", "ecs-secret", "ecs-session-token", "us-west-2")
        return Answer(200, converse_events(tool=False), {"content-type": "application/vnd.amazon.eventstream"})

    bedrock.route("GET", "/v2/credentials/task-role", credentials)
    bedrock.route("POST", PATH, answer)
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", f"{bedrock.url}/v2/credentials/task-role")
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ecs-agent-token")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    registry = registry_for(agent_dir, bedrock)
    assert registry.has_auth("amazon-bedrock")
    reply = run(complete(registry.get_model("amazon-bedrock", MODEL), CONTEXT, registry=registry))
    assert reply.stop_reason == "stop", reply.error_message
    assert reply.text() == "Hello there"
    assert fetched and fetched[0].headers["authorization"] == "ecs-agent-token"

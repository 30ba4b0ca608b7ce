"""Google Vertex AI: application default credentials through google-auth (an authorized-user file and a
service-account key, refreshed at a fake token endpoint), the API-key express endpoint, URL shapes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from auth_fakes import Answer, FakeHTTP, Request, bearer, builtin_registry

from pi_core.ai import Context, UserMessage, complete

CONTEXT = Context(system_prompt="Be brief.", messages=[UserMessage(content="hello")])
GEMINI = 'data: {"candidates":[{"content":{"parts":[{"text":"from vertex"}]},"finishReason":"STOP"}],' \
         '"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":6}}\n\n'


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.fixture
def vertex(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from plugins.providers import google_vertex

    google_vertex._forget_credentials()
    for name in ("GOOGLE_CLOUD_API_KEY", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
                 "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # never the real metadata server
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    with FakeHTTP() as http:
        tokens: list[Request] = []
        http.route("POST", "/token", lambda r: (tokens.append(r), Answer(200, {
            "access_token": f"ya29.token-{len(tokens)}", "expires_in": 3600, "token_type": "Bearer"}))[1])
        http.route("POST", "/v1beta1/projects/my-proj/locations/europe-west4/publishers/google/models/"
                   "gemini-4-argon:streamGenerateContent", lambda r: Answer(200, GEMINI, {"content-type": "text/event-stream"}))
        yield http, tokens
    google_vertex._forget_credentials()


def registry_for(agent_dir: Path, http: FakeHTTP) -> Any:
    return builtin_registry(agent_dir, process_env=True,
                            models_json={"providers": {"google-vertex": {"baseUrl": http.url}}})


PATH = "/v1beta1/projects/my-proj/locations/europe-west4/publishers/google/models/gemini-4-argon:streamGenerateContent"


def test_authorized_user_credentials_from_gcloud(agent_dir: Path, vertex, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    http, tokens = vertex
    adc = tmp_path / "adc.json"
    adc.write_text(json.dumps({"type": "authorized_user", "client_id": "cid", "client_secret": "csecret",
                               "refresh_token": "gcloud-refresh"}))
    monkeypatch.setenv("PI_OAUTH_URL_OVERRIDES", f"https://oauth2.googleapis.com/token={http.url}/token")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    registry = registry_for(agent_dir, http)
    assert registry.has_auth("google-vertex")
    model = registry.get_model("google-vertex", "gemini-4-argon")
    first = run(complete(model, CONTEXT, registry=registry))
    second = run(complete(model, CONTEXT, registry=registry))
    assert first.text() == second.text() == "from vertex", first.error_message
    assert len(tokens) == 1  # google-auth keeps the token until it expires
    assert tokens[0].body["grant_type"] == "refresh_token" and tokens[0].body["refresh_token"] == "gcloud-refresh"
    sent = http.requests_to(PATH)
    assert [bearer(r) for r in sent] == ["ya29.token-1"] * 2 and sent[0].query == {"alt": "sse"}
    assert "x-goog-api-key" not in sent[0].headers
    assert sent[0].body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}


def test_a_service_account_key_file(agent_dir: Path, vertex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    http, tokens = vertex
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    account = tmp_path / "sa.json"
    account.write_text(json.dumps({"type": "service_account", "project_id": "my-proj", "private_key_id": "k1",
                                   "private_key": pem, "client_email": "pi@my-proj.iam.gserviceaccount.com",
                                   "client_id": "1", "token_uri": f"{http.url}/token"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(account))
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")  # the project comes from the key file
    registry = registry_for(agent_dir, http)
    reply = run(complete(registry.get_model("google-vertex", "gemini-4-argon"), CONTEXT, registry=registry))
    assert reply.text() == "from vertex", reply.error_message
    assert tokens[0].body["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    header, claims, _ = tokens[0].body["assertion"].split(".")
    import base64

    decoded = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    assert decoded["iss"] == "pi@my-proj.iam.gserviceaccount.com" and "cloud-platform" in decoded["scope"]
    public = key.public_key()
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    signature = tokens[0].body["assertion"].split(".")[2]
    public.verify(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)),
                  f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())


def test_an_api_key_uses_the_express_endpoint(agent_dir: Path, vertex, monkeypatch: pytest.MonkeyPatch) -> None:
    http, tokens = vertex
    http.route("POST", "/v1beta1/publishers/google/models/gemini-4-argon:streamGenerateContent",
               lambda r: Answer(200, GEMINI, {"content-type": "text/event-stream"}))
    monkeypatch.setenv("GOOGLE_CLOUD_API_KEY", "AIza-vertex")
    registry = registry_for(agent_dir, http)
    reply = run(complete(registry.get_model("google-vertex", "gemini-4-argon"), CONTEXT, registry=registry))
    assert reply.text() == "from vertex", reply.error_message
    sent = http.requests_to("/v1beta1/publishers/google/models/gemini-4-argon:streamGenerateContent")[0]
    assert sent.headers["x-goog-api-key"] == "AIza-vertex" and "authorization" not in sent.headers
    assert tokens == []


def test_urls_and_missing_settings(agent_dir: Path, vertex, monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.providers.google_vertex import vertex_url

    from pi_core.ai import AuthResult, Model, StreamOptions

    model = Model(id="gemini-x", api="google-vertex", provider="google-vertex",
                  base_url="https://{location}-aiplatform.googleapis.com")
    adc = StreamOptions(auth=AuthResult(extra={"gcp_project": "p1"}), env={"GOOGLE_CLOUD_LOCATION": "us-central1"})
    assert vertex_url(model, adc) == ("https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p1/locations/"
                                      "us-central1/publishers/google/models/gemini-x:streamGenerateContent?alt=sse")
    world = StreamOptions(env={"GOOGLE_CLOUD_PROJECT": "p2", "GOOGLE_CLOUD_LOCATION": "global"})
    assert vertex_url(model, world).startswith("https://aiplatform.googleapis.com/v1beta1/projects/p2/locations/global/")
    registry = registry_for(agent_dir, vertex[0])
    assert not registry.has_auth("google-vertex")
    reply = run(complete(registry.get_model("google-vertex", "gemini-4-argon"), CONTEXT, registry=registry))
    assert "GOOGLE_CLOUD_API_KEY" in reply.error_message and "GOOGLE_CLOUD_LOCATION" in reply.error_message

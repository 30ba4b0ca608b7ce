"""Regenerate the built-in model catalog from the model list shipped inside pi 1.6.0.

Usage::

    python -m pi_core.ai.catalog.generate /path/to/pi-coding-agent-1.6.0/package

pi-ai generates its catalog at build time from models.dev, OpenRouter's and Vercel's model APIs plus
hand-written corrections, and bundles it into the published package
(``dist/bundle/chunks/chunk-*.js``, objects ``var <provider>_default={"<api>":{"chat:<id>":{...}}}``).
This script reads those object literals (a small parser for the JavaScript subset they use), keeps the
chat models of the providers this project speaks to, and writes one JSON file per provider next to this
script, plus ``providers.json`` (env vars, default model, API). Only facts are kept: ids, names, API,
base URL, prices, context window, output limit, input kinds, reasoning, compat, thinking-level map.

Adjustments, each written into ``providers.json`` under ``"notes"`` (none at present: Mistral is served
through its own ``mistral-conversations`` API, as in pi).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUPPORTED_APIS = {"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai",
                  "openai-codex-responses", "azure-openai-responses", "bedrock-converse-stream", "google-vertex",
                  "mistral-conversations"}
KEEP = ("id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost", "contextWindow",
        "maxTokens", "headers", "compat", "thinkingLevelMap")

#: provider -> (env vars, notes). Env var names: pi 1.6 ``--help`` ("Environment Variables").
PROVIDERS: dict[str, tuple[list[str], str]] = {
    "anthropic": (["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"], ""),
    "openai": (["OPENAI_API_KEY"], ""),
    "google": (["GEMINI_API_KEY"], ""),
    "groq": (["GROQ_API_KEY"], ""),
    "cerebras": (["CEREBRAS_API_KEY"], ""),
    "xai": (["XAI_API_KEY"], ""),
    "openrouter": (["OPENROUTER_API_KEY"], ""),
    "mistral": (["MISTRAL_API_KEY"], ""),
    "deepseek": (["DEEPSEEK_API_KEY"], ""),
    "zai": (["ZAI_API_KEY"], ""),
    "huggingface": (["HF_TOKEN"], ""),
    "together": (["TOGETHER_API_KEY"], ""),
    "fireworks": (["FIREWORKS_API_KEY"], ""),
    "nvidia": (["NVIDIA_API_KEY"], ""),
    "moonshotai": (["MOONSHOT_API_KEY"], ""),
    "minimax": (["MINIMAX_API_KEY"], ""),
    "kimi-coding": (["KIMI_API_KEY"], ""),
    # subscription and cloud providers (their sign-in is declared by their plugins)
    "openai-codex": ([], "ChatGPT sign-in only"),
    "github-copilot": (["COPILOT_GITHUB_TOKEN"], ""),
    "azure": (["AZURE_OPENAI_API_KEY"], ""),
    "amazon-bedrock": (["AWS_BEARER_TOKEN_BEDROCK"], "or the AWS credential chain"),
    "google-vertex": (["GOOGLE_CLOUD_API_KEY"], "or application default credentials"),
    # more OpenAI-compatible and Anthropic-compatible endpoints
    "vercel-ai-gateway": (["AI_GATEWAY_API_KEY"], ""),
    "cloudflare-ai-gateway": (["CLOUDFLARE_API_KEY"], "needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_GATEWAY_ID"),
    "cloudflare-workers-ai": (["CLOUDFLARE_API_KEY"], "needs CLOUDFLARE_ACCOUNT_ID"),
    "opencode": (["OPENCODE_API_KEY"], ""),
    "opencode-go": (["OPENCODE_API_KEY"], ""),
    "baseten": (["BASETEN_API_KEY"], ""),
    "meta": (["META_API_KEY"], ""),
    "ant-ling": (["ANT_LING_API_KEY"], ""),
    "minimax-cn": (["MINIMAX_CN_API_KEY"], ""),
    "moonshotai-cn": (["MOONSHOT_API_KEY"], ""),
    "zai-coding-cn": (["ZAI_CODING_CN_API_KEY"], ""),
    "qwen-token-plan": (["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"], ""),
    "qwen-token-plan-cn": (["QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"], ""),
    "qwen-token-plan-individual": (["QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"], ""),
    "qwen-token-plan-individual-cn": (["QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"], ""),
    "xiaomi": (["XIAOMI_API_KEY"], ""),
    "xiaomi-token-plan-cn": (["XIAOMI_TOKEN_PLAN_CN_API_KEY"], ""),
    "xiaomi-token-plan-ams": (["XIAOMI_TOKEN_PLAN_AMS_API_KEY"], ""),
    "xiaomi-token-plan-sgp": (["XIAOMI_TOKEN_PLAN_SGP_API_KEY"], ""),
}
#: pi 1.6-only features this port does not implement (server-side fallbacks).
DROP_COMPAT = {"allowedFallbackModels"}


class JsParser:
    """Parses the JavaScript object-literal subset of the bundle: ``{a:1,"b":[.5,2e5,!0,null]}``."""

    _number = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
    _ident = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text, self.pos = text, pos

    def value(self) -> Any:
        ch = self.text[self.pos]
        if ch == "{":
            return self._object()
        if ch == "[":
            return self._array()
        if ch in "\"'":
            return self._string()
        if self.text.startswith("!0", self.pos):
            self.pos += 2
            return True
        if self.text.startswith("!1", self.pos):
            self.pos += 2
            return False
        for word, val in (("null", None), ("true", True), ("false", False), ("void 0", None)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return val
        match = self._number.match(self.text, self.pos)
        if not match:
            raise ValueError(f"unexpected {self.text[self.pos:self.pos + 40]!r}")
        self.pos = match.end()
        number = float(match.group())
        return int(number) if number.is_integer() else number

    def _string(self) -> str:
        quote = self.text[self.pos]
        end = self.pos + 1
        while self.text[end] != quote:
            end += 2 if self.text[end] == "\\" else 1
        raw = self.text[self.pos:end + 1]
        self.pos = end + 1
        return json.loads('"' + raw[1:-1].replace('\\"', '"').replace('"', '\\"') + '"') if quote == "'" else json.loads(raw)

    def _object(self) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while self.text[self.pos] != "}":
            if self.text[self.pos] in "\"'":
                key = self._string()
            else:
                match = self._ident.match(self.text, self.pos)
                assert match, self.text[self.pos:self.pos + 40]
                key, self.pos = match.group(), match.end()
            assert self.text[self.pos] == ":"
            self.pos += 1
            out[key] = self.value()
            if self.text[self.pos] == ",":
                self.pos += 1
        self.pos += 1
        return out

    def _array(self) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while self.text[self.pos] != "]":
            out.append(self.value())
            if self.text[self.pos] == ",":
                self.pos += 1
        self.pos += 1
        return out


def read_catalogs(package: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str], str]:
    """``{provider: {api: {key: model}}}``, the default model per provider, and the source file name."""
    for chunk in sorted((package / "dist" / "bundle" / "chunks").glob("*.js")):
        text = chunk.read_text(encoding="utf-8", errors="replace")
        if "var anthropic_default={" not in text:
            continue
        catalogs: dict[str, dict[str, Any]] = {}
        for match in re.finditer(r"var ([a-z0-9_]+)_default=(?=\{\")", text):
            catalogs[match.group(1).replace("_", "-")] = JsParser(text, match.end()).value()
        return catalogs, read_defaults(package), chunk.name
    raise SystemExit(f"no model catalog found under {package}")


def read_defaults(package: Path) -> dict[str, str]:
    for chunk in sorted((package / "dist" / "bundle" / "chunks").glob("*.js")):
        text = chunk.read_text(encoding="utf-8", errors="replace")
        at = text.find("defaultModelPerProvider=")
        if at >= 0:
            return JsParser(text, at + len("defaultModelPerProvider=")).value()
    return {}


def slim(model: dict[str, Any]) -> dict[str, Any]:
    out = {k: model[k] for k in KEEP if k in model}
    if "compat" in out:
        out["compat"] = {k: v for k, v in out["compat"].items() if k not in DROP_COMPAT}
    return out


def main(argv: list[str]) -> None:
    package = Path(argv[1]) if len(argv) > 1 else Path("/tmp/pi-js/package")
    catalogs, defaults, source = read_catalogs(package)
    version = json.loads((package / "package.json").read_text())["version"]
    index: dict[str, Any] = {"source": f"@earendil-works/pi-coding-agent@{version} dist/bundle/chunks/{source}",
                             "providers": {}}
    for provider, (env, notes) in PROVIDERS.items():
        models = [slim(m) for by_api in catalogs.get(provider, {}).values() for key, m in by_api.items()
                  if key.startswith("chat:")]
        models = [m for m in models if m["api"] in SUPPORTED_APIS]
        if not models:
            continue
        models.sort(key=lambda m: m["id"])
        lines = ",\n".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) for m in models)
        (HERE / f"{provider}.json").write_text(f"[\n{lines}\n]\n", encoding="utf-8")
        apis = sorted({m["api"] for m in models})
        default = defaults.get(provider)
        entry = {"env": env, "apis": apis, "models": len(models), "baseUrl": models[0].get("baseUrl", ""),
                 "default": default if any(m["id"] == default for m in models) else models[0]["id"]}
        if notes:
            entry["notes"] = notes
        index["providers"][provider] = entry
    (HERE / "providers.json").write_text(json.dumps(index, indent=1) + "\n")
    print(json.dumps({p: (e["models"], e["apis"]) for p, e in index["providers"].items()}))


if __name__ == "__main__":
    main(sys.argv)

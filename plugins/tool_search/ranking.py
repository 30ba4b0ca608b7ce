"""BM25 ranking over tool names, descriptions, parameter text and namespaces.

Shared by ``tool_search`` and codemode's ``searchTools()`` so both find the same tools for a query. It
ranks as pi does: a tool matching more of the query's terms ranks first whatever its score; a term in the
name counts more than any number of mentions in the description; a tool whose whole local name is in the
query gets a bonus; a query that is exactly a tool's name (or its ``__`` suffix) ranks that tool first.
Only the description is length-normalised; ties keep the documents' order.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

STOP_WORDS = frozenset("a an and are as at be by for from in is it of on or that the this to with".split())
NAME_WEIGHT = 3.0
NAMESPACE_WEIGHT = 0.5
DEFAULT_LIMIT = 8


def _stem(term: str) -> str:
    """A naive singular, so ``issues`` finds ``issue`` and ``searches`` finds ``search``."""
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and re.search(r"(ches|shes|sses|xes|zes)$", term):
        return term[:-2]
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def tokenize(text: str) -> list[str]:
    """Words split at identifier boundaries (``readFile``, ``read_file``), lowercased, without stop words."""
    text = unicodedata.normalize("NFC", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text).lower()
    words = re.split(r"[^\w]+|_", text)
    return [w if not w.isascii() or not w.isalnum() else _stem(w) for w in words if w and w not in STOP_WORDS]


@dataclass
class Document:
    name: str
    text: str = ""
    namespace_text: str = ""


def _schema_text(schema: Any, root: Any, parts: list[str], seen: set[int]) -> None:
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for key in ref[2:].split("/"):
            target = target.get(key) if isinstance(target, dict) else None
        if isinstance(target, dict) and id(target) not in seen:
            seen.add(id(target))
            _schema_text(target, root, parts, seen)
    if isinstance(schema.get("description"), str):
        parts.append(schema["description"])
    for name, prop in (schema.get("properties") or {}).items() if isinstance(schema.get("properties"), dict) else ():
        parts.append(name)
        _schema_text(prop, root, parts, seen)
    _schema_text(schema.get("items"), root, parts, seen)
    for key in ("anyOf", "oneOf", "allOf"):
        for variant in schema.get(key) or () if isinstance(schema.get(key), list) else ():
            _schema_text(variant, root, parts, seen)


def tool_document(tool: Any) -> Document:
    """The searchable text of a :class:`pi_core.Tool`: description, parameter names and descriptions,
    and (separately) its namespace's name, description and instructions."""
    parts = [tool.description or ""]
    _schema_text(tool.parameters, tool.parameters, parts, {id(tool.parameters)})
    ns = getattr(tool, "namespace", None)
    ns_text = " ".join(filter(None, (ns.name, ns.description, ns.instructions))) if ns else ""
    return Document(tool.name, " ".join(p for p in parts if p.strip()), ns_text)


@dataclass
class _Indexed:
    name: str
    name_terms: set[str]
    local_terms: list[str]
    counts: Counter[str]
    length: int
    namespace_terms: set[str] = field(default_factory=set)


def _index(doc: Document) -> _Indexed:
    counts = Counter(tokenize(doc.text))
    local = doc.name.split("__")[-1]
    return _Indexed(doc.name, set(tokenize(doc.name)), list(dict.fromkeys(tokenize(local))), counts,
                    sum(counts.values()), set(tokenize(doc.namespace_text)))


def _normal_name(name: str) -> str:
    return re.sub(r"[^a-z0-9_$]", "_", name.strip().lower())


def rank(query: str, documents: list[Document], limit: int = DEFAULT_LIMIT, *, k1: float = 1.2,
         b: float = 0.75) -> list[tuple[str, float]]:
    """The best ``limit`` documents for ``query`` as ``(name, score)``, best first."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not documents or limit <= 0:
        return []
    indexed = [_index(doc) for doc in documents]
    average = sum(d.length for d in indexed) / len(indexed) or 1.0
    idf = {}
    for term in terms:
        frequency = sum(1 for d in indexed if term in d.name_terms or term in d.counts or term in d.namespace_terms)
        idf[term] = math.log(1 + (len(indexed) - frequency + 0.5) / (frequency + 0.5))
    bonus = sum(idf.values())
    exact_query = _normal_name(query)
    matches = []
    for position, doc in enumerate(indexed):
        norm = k1 * (1 - b + b * doc.length / average)
        score, covered = 0.0, 0
        for term in terms:
            count = doc.counts.get(term, 0)
            weight = (NAME_WEIGHT if term in doc.name_terms else 0.0) + \
                (NAMESPACE_WEIGHT if term in doc.namespace_terms else 0.0) + count * (k1 + 1) / (count + norm)
            covered += weight > 0
            score += idf[term] * weight
        if score == 0:
            continue
        if doc.local_terms and all(t in terms for t in doc.local_terms):
            score += bonus
        name = _normal_name(doc.name)
        exact = name == exact_query or name.endswith("__" + exact_query)
        matches.append((not exact, -covered, -score, position, doc.name, score))
    matches.sort()
    return [(m[4], m[5]) for m in matches[:limit]]

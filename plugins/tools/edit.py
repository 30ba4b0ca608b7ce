"""The ``edit`` tool: targeted replacements in one file, all-or-nothing, with a tolerant matcher.

:func:`create_edit_tool` makes one that reads and writes through other ``operations`` (a remote machine),
with the same matching and messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_core import (
    EditOperations,
    Tool,
    ToolCapabilities,
    ToolContext,
    ToolError,
    ToolResult,
    hookimpl,
    parse_json,
    run_blocking,
)

DESCRIPTION = (
    "Change one file by replacing pieces of its text. Each edits[] entry names an oldText that must "
    "identify exactly one place in the file as it is now, and the newText to put there. All entries "
    "are matched against the file before any change and applied together, or not at all; they must not "
    "overlap. Keep each oldText short but unique, and combine changes to neighbouring lines into one "
    "entry rather than spanning long unchanged stretches."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path", "edits"],
    "properties": {
        "path": {"type": "string", "description": "File to change; relative to the working directory or absolute"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["oldText", "newText"],
                "properties": {
                    "oldText": {"type": "string", "description": "Text now in the file, found at exactly one place "
                                "and not overlapping other entries' oldText"},
                    "newText": {"type": "string", "description": "What replaces that text"},
                },
            },
            "description": "The replacements, each matched against the file as it was before this call",
        },
    },
}


def _single(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("oldText"), str) and isinstance(value.get("newText"), str)


def prepare_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """Accept older shapes: top-level ``oldText``/``newText``, ``edits`` as a JSON string or one object."""
    if not isinstance(args, dict):
        return args
    args = dict(args)
    edits = args.get("edits")
    if isinstance(edits, str):
        try:
            parsed = parse_json(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
        elif _single(parsed):
            args["edits"] = [parsed]
    elif _single(edits):
        args["edits"] = [edits]
    if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
        listed = list(args["edits"]) if isinstance(args.get("edits"), list) else []
        listed.append({"oldText": args.pop("oldText"), "newText": args.pop("newText")})
        args["edits"] = listed
    return args


def _summary(path_arg: str, outcome: Any, total: int) -> str:
    done = len(outcome.replacements)
    parts = [f"Replaced {done} block{'s' if done != 1 else ''} in {path_arg}." if done else
             f"No change made to {path_arg}."]
    loose = {i: s for i, s in outcome.stages().items() if s != "exact"}
    for i, stage in sorted(loose.items()):
        which = "The old text" if total == 1 else f"edits[{i}].oldText"
        parts.append(f"{which} matched only after {_LOOSE[stage]}; check the result.")
    for i in outcome.already_applied:
        which = "The edit" if total == 1 else f"edits[{i}]"
        parts.append(f"{which} was already applied: its newText is in the file and its oldText is not "
                     "outside it, so it was skipped.")
    return " ".join(parts)


_LOOSE = {
    "trailing-whitespace": "ignoring trailing whitespace",
    "unicode": "folding Unicode look-alikes (quotes, dashes, spaces)",
    "indentation": "ignoring indentation (the new text was re-indented to match)",
}


def _read_error(path: Path, path_arg: str, error: OSError) -> ToolError:
    if isinstance(error, FileNotFoundError):
        return ToolError(f"Cannot edit {path_arg}: no such file ({path}). Use write to create it.")
    if isinstance(error, IsADirectoryError):
        return ToolError(f"Cannot edit {path_arg}: it is a directory.")
    return ToolError(f"Cannot edit {path_arg}: permission denied.")


def _apply(raw: bytes, path_arg: str, edits: list[Any]) -> tuple[bytes | None, ToolResult]:
    """The file's new bytes (``None``: nothing to change) and the result for the model."""
    from pi_core import Edit, EditError, TextFile, apply_edits, edit_diff

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ToolError(f"Cannot edit {path_arg}: it is not UTF-8 text (bad byte at offset {e.start}).") from e
    doc = TextFile.parse(text)
    try:
        outcome = apply_edits(doc.lf, [Edit(e["oldText"], e["newText"]) for e in edits], label=path_arg)
    except EditError as e:
        raise ToolError(str(e), details={}) from e
    if not outcome.replacements:
        return None, ToolResult.text(_summary(path_arg, outcome, len(edits)))
    diff = edit_diff(path_arg, doc.lf, outcome.content)
    data = doc.rebuild(outcome.replacements).encode("utf-8", "surrogatepass")
    return data, ToolResult.text(_summary(path_arg, outcome, len(edits)), details=diff)


def _edit(path: Path, path_arg: str, edits: list[Any]) -> ToolResult:
    from pi_core import SpecialFileError, atomic_write, check_regular_file

    try:
        check_regular_file(path, "edit")
        raw = path.read_bytes()
    except SpecialFileError as e:
        raise ToolError(str(e)) from e
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        raise _read_error(path, path_arg, e) from e
    data, result = _apply(raw, path_arg, edits)
    if data is not None:
        try:
            atomic_write(path, data)
        except PermissionError as e:
            raise ToolError(f"Cannot edit {path_arg}: permission denied.") from e
    return result


async def _edit_through(operations: EditOperations, path: Path, path_arg: str, edits: list[Any]) -> ToolResult:
    try:
        await operations.access(path)
        raw = await operations.read_file(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        raise _read_error(path, path_arg, e) from e
    data, result = _apply(raw, path_arg, edits)
    if data is not None:
        try:
            await operations.write_file(path, data)
        except PermissionError as e:
            raise ToolError(f"Cannot edit {path_arg}: permission denied.") from e
    return result


def _validate(params: dict[str, Any]) -> list[Any]:
    edits = params.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ToolError("edits must list at least one {oldText, newText} replacement.")
    for i, e in enumerate(edits):
        if not _single(e):
            raise ToolError(f"edits[{i}] must be an object with string oldText and newText.")
    return edits


def _executor(operations: EditOperations | None) -> Any:
    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_core import file_mutation_lock

        edits = _validate(params)
        path_arg = str(params["path"])
        path = ctx.resolve(path_arg)
        async with file_mutation_lock(path):
            ctx.signal.throw_if_aborted()
            if operations is not None:
                return await _edit_through(operations, path, path_arg, edits)
            return await run_blocking(_edit, path, path_arg, edits, signal=ctx.signal, name="edit")

    return execute


execute = _executor(None)


def create_edit_tool(*, operations: EditOperations | None = None, name: str = "edit") -> Tool:
    """The built-in ``edit`` tool, reading and writing through ``operations`` (default: this machine's
    files). Register it with ``register(tool, replaces="edit")`` to take the built-in's place."""
    from pi_core import is_local

    return Tool(
        name=name,
        label=name,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute if is_local(operations) else _executor(operations),
        capabilities=ToolCapabilities(reads=True, writes=True),
        prompt_snippet="Replace exact pieces of a file's text; several separate changes fit in one call",
        prompt_guidelines=[
            "Use edit for targeted changes, with all changes to one file in a single call.",
            "Copy each edits[].oldText exactly from the current file; it must match one place only, and "
            "entries must not overlap.",
        ],
        prepare_arguments=prepare_arguments,
    )


def make_edit_tool() -> Tool:
    """A fresh ``edit`` tool."""
    return create_edit_tool()


@hookimpl
def register_tools(register: Any) -> None:
    register(make_edit_tool())

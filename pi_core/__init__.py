"""pi for Python: a coding agent whose minimal core is a pluggy plugin framework.

This module is the public API. Plugins (built-in ones included) import from here and from
``pi_core.ai``, nothing else. Names load lazily, so ``import pi_core`` stays cheap for a CLI that
starts often.

The names, by area (each object's own docstring has the details; docs/plugins.md shows them in use):

Plugin framework:

* ``hookimpl`` — Marks a plugin's function or method as the handler of the hook it is named after.
* ``EventBus`` — Channels by name, handlers per channel.
* ``CommandContext`` — Passed to slash-command handlers: :class:`ExtensionContext` plus what only a command may do.
* ``ExtensionContext`` — Passed as ``ctx`` to every hook.
* ``UI`` — Dialogs and notices. This base class is what headless modes (print, JSON, SDK) use: dialogs answer with
  their "cancel" value and notices go nowhere, as in pi.
* ``Command`` — A slash command: ``/name args``. ``handler(args, ctx)`` may be ``def`` or ``async def``; ``ctx`` is
  a :class:`pi_core.CommandContext`.
* ``CliCommand`` — A ``pi`` sub-command: a function whose parameters typer turns into options/arguments.
* ``Flag`` — A command-line flag a plugin adds (``--name``); ``type`` is ``bool`` or ``str``.
* ``Toolset`` — A named set of tool names, chosen with ``pi --toolset NAME``.
* ``PluginHost`` — One session's plugins: the manager, the dispatcher, what was registered, what went wrong.
* ``KeyBinding`` — One of the terminal's named key actions as bound now (``ctx.ui.get_keybindings()``): pi's
  ``action`` id, canonical ``keys`` (``keybindings.json`` applied), ``description``, ``group``, ``shown``.
* ``Shortcut`` — A key a plugin registered (``ctx.register_shortcut``): canonical ``key``, ``handler(ctx)``,
  ``description``.
* ``ToolRenderers`` — How calls to a tool are drawn: ``render_call`` and ``render_result`` (what a
  ``ctx.register_tool_renderer`` resolver returns).
* ``ToolRenderContext`` — The last argument of a tool's renderers: the call's ``args``, ``tool_call_id``, a
  ``state`` dict kept across renders, ``is_partial`` while the result streams, ``expanded``, ``is_error``.
* ``RegisteredMcpServer`` — A server a plugin registered: ``config`` has the shape of an ``mcpServers`` entry of
  ``mcp.json``.
* ``build_plugin_host`` — Build a fresh plugin host for one session.
* ``TrustStore`` — ``<agent dir>/trust.json``: remembered project trust decisions, shared with pi (``get``,
  ``nearest`` (the deciding folder and its decision), ``set``; they take effect at the next start).
* ``is_project_trusted`` — The remembered decision for ``cwd`` (``None``: undecided, or the store cannot be read).
* ``ContextUsage`` — How full the model's context was at the last answer (``ctx.get_context_usage()``).
* ``ForkResult`` — The outcome of ``ctx.fork()``: ``text`` is the forked user message (``position="before"``).
* ``NavigateResult`` — The outcome of ``ctx.navigate_tree()``.
* ``SessionResult`` — The outcome of ``ctx.new_session()`` / ``ctx.switch_session()``: ``cancelled`` when a plugin
  said no.
* ``SlashCommandInfo`` — One ``/`` command a user can type (``ctx.get_commands()``): a plugin command, a prompt
  template or a skill (``skill:<name>``).
* ``SourceInfo`` — Where a command comes from (pi's ``sourceInfo``).

Hook events and decisions:

* ``AfterToolCallEvent`` — A finished tool call; ``content``, ``details`` and ``is_error`` may be patched.
* ``AgentBeforeSettleEvent`` — The last actionable boundary of a prompt: retries, compaction and queued messages are
  done. Handlers may append entries and ask for one more model request (see :class:`BoundaryPatch`).
* ``AgentEndEvent`` — A run ended (``agent_end``): ``messages`` are the messages it added; ``will_retry`` is true when
  an automatic retry follows, so the prompt is not over yet (``agent_settled`` says when it is).
* ``AgentStartEvent`` — A run started: a prompt, a retry or a continuation (``agent_start``).
* ``AgentStartPatch`` — Returned from ``before_agent_start``: a new system prompt and/or a message to add (a plugin's
  :class:`pi_core.CustomMessage`, as pi's ``message: {customType, content, display}``, or a model message).
* ``BeforeAgentStartEvent`` — Once per prompt, before the run: the system prompt may change, messages may be added.
* ``BeforeToolCallEvent`` — A validated tool call about to run. ``arguments`` may be changed in place.
* ``Block`` — Returned from ``before_tool_call``: do not run the tool; the model gets ``reason`` as an error.
* ``BoundaryPatch`` — Returned from ``turn_end`` / ``agent_before_settle``: the entries to append (the whole
  proposal: start from ``event.entries``) and whether to make one more model request. ``None`` keeps the field.
* ``Cancel`` — Returned from a ``session_before_*`` hook: the operation does not happen.
* ``CompactionOverride`` — Returned from ``session_before_compact``: use this summary instead of asking the model.
* ``ContextEvent`` — The conversation about to be sent, without the system prompt (a copy; history is untouched).
* ``ContextWithSystemEvent`` — The complete request: system prompt, messages and tool declarations, exactly as sent.
* ``Handled`` — Returned from ``input``: the plugin consumed the input; no run starts.
* ``InputEvent`` — User input before it becomes a prompt; ``text``/``images`` may be changed in place.
* ``McpServersChangeEvent`` — The MCP servers plugins registered, after one was registered or unregistered.
* ``MessageEndEvent`` — A message is final. A handler may return a replacement with the same ``role`` (or pi's
  ``{"message": ...}``): later handlers, the session file and the model see the replacement.
* ``MessageStartEvent`` — A message started (``message_start``): a user, assistant, tool-result or custom message; a
  streamed assistant message starts empty and fills in through ``message_update``.
* ``MessageUpdateEvent`` — The assistant message being streamed changed (``message_update``): ``message`` is the
  partial message so far and ``assistant_message_event`` the provider event that changed it (a text, thinking or
  tool-call delta).
* ``ModelSelectEvent`` — The session's model changed (``model_select``). ``source`` is ``set`` (a command, a picker,
  ``ctx.set_model``), ``cycle`` (Ctrl+P through the scoped models) or ``restore`` (a resumed session's model).
* ``ProjectTrustEvent`` — Before project code and settings load, when the project's trust is not decided yet.
* ``ProviderHeadersEvent`` — The HTTP headers of a provider request; change them in place (a ``None`` value removes
  one).
* ``ProviderRequestEvent`` — The raw provider payload (a JSON dict) about to be posted.
* ``ProviderResponseEvent`` — A provider answered: the HTTP status and headers, before the body is read.
* ``ProviderStreamEvent`` — One parsed event of a provider's stream, before pi turns it into message events
  (read-only).
* ``ResourcePaths`` — Returned from ``resources_discover``: extra skill, prompt-template and theme locations (files
  or directories; relative paths resolve against the session's ``cwd``).
* ``ResourcesDiscoverEvent`` — pi is collecting skills, prompt templates and themes (``resources_discover``) for the
  session in ``cwd``, at ``startup`` or on ``reload``. Answer with :class:`ResourcePaths`.
* ``SessionBeforeCompactEvent`` — A compaction about to ask the model for a summary.
* ``SessionBeforeForkEvent`` — A fork is about to make a new session from a point of this one
  (``session_before_fork``): the ``entry_id`` of that point and whether the fork is ``before`` or ``at`` it. Return
  ``Cancel`` to prevent it.
* ``SessionBeforeSwitchEvent`` — The user is about to leave this session for a new one or another one
  (``session_before_switch``): ``reason`` is ``new`` or ``resume``, ``target_session_file`` the session to open.
  Return ``Cancel`` to stay.
* ``SessionBeforeTreeEvent`` — A tree navigation about to happen (and maybe summarise the branch being left).
* ``SessionCompactEvent`` — A compaction entry was appended (``session_compact``): ``compaction_entry`` is that entry,
  ``from_plugin`` whether a ``session_before_compact`` handler wrote the summary, ``reason`` ``manual``, ``threshold``
  or ``overflow``, and ``will_retry`` whether the failed request is sent again now.
* ``SessionCompactFailedEvent`` — A compaction failed or was aborted; the session is as it was.
* ``SessionShutdownEvent`` — The session is closing (``session_shutdown``): ``reason`` is ``quit``, ``reload`` or the
  move that replaces it (``new``, ``resume``, ``fork``, with ``target_session_file`` when known). Release resources.
* ``SessionStartEvent`` — A session became current (``session_start``): ``reason`` says how (``startup``, ``reload``,
  ``new``, ``resume``, ``fork``); ``previous_session_file`` is the session it replaced, if any.
* ``SessionTreeEvent`` — The session moved to another point of its tree (``session_tree``): the ``new_leaf_id`` and
  ``old_leaf_id``, the branch summary entry written on the way (``summary_entry``, or ``None``) and whether a plugin
  supplied it (``from_plugin``).
* ``ThinkingLevelSelectEvent`` — The thinking level changed (``thinking_level_select``): the new ``level`` and the
  ``previous_level``.
* ``ToolExecutionEndEvent`` — A tool call finished (``tool_execution_end``): its ``result``, whether it ``is_error``
  and how long it took (``duration_ms``). With tools running in parallel the events come in completion order.
* ``ToolExecutionStartEvent`` — A tool call starts (``tool_execution_start``), before its arguments are validated:
  ``args`` are the model's raw arguments; ``parent_tool_call_id`` is set for a call another tool made.
* ``ToolExecutionUpdateEvent`` — A running tool reported partial output (``tool_execution_update``):
  ``partial_result`` is the result so far (the bash tool's output while it runs, say).
* ``ToolResultPatch`` — Returned from ``after_tool_call``: replace the given fields of the result (``None`` = keep).
* ``Transform`` — Returned from ``input``: replace the text (and images) later handlers and the model see.
* ``TreeOverride`` — Returned from ``session_before_tree``: supply the branch summary and/or change how it is made.
* ``TrustDecision`` — Returned from ``project_trust``: ``yes`` / ``no`` decide (``remember`` stores it),
  ``undecided`` lets later handlers and pi's own trust rules decide.
* ``TurnEndEvent`` — A turn ended; the assistant message and tool results are already stored.
* ``TurnStartEvent`` — A turn started (``turn_start``): one model request and the tool calls it asks for.
  ``turn_index`` counts from 0 in each run; ``timestamp`` is in milliseconds since the epoch.
* ``UserBashEvent`` — The user ran ``!command`` (``!!command``: ``exclude_from_context``).
* ``UserBashResult`` — Returned from ``user_bash``: run the command through ``operations`` (a
  :class:`pi_core.BashOperations`, e.g. over ssh), or record ``result`` (a :class:`pi_core.ShellResult`, or a dict
  ``{output, exitCode, cancelled, truncated}``) without running anything.

Tools:

* ``Tool`` — A tool the model can call.
* ``ToolCallOutcome`` — What :meth:`ToolContext.execute_tool` returns: the call as it was made and how it ended.
* ``ToolCapabilities`` — What a tool may do, declared by the tool so that policy plugins need no list of tool names.
* ``ToolContext`` — Everything a running tool may use besides its arguments.
* ``ToolError`` — Raise from ``execute`` to fail the call with this message (and optional ``details``).
* ``ToolNamespace`` — A group of tools (the tools of one MCP server): tool search ranks by it, codemode lists by it.
* ``ToolResult`` — The outcome of one tool call.
* ``BashOperations`` — Runs a shell command somewhere; its output (stdout and stderr together) goes to ``on_data``.
* ``EditOperations`` — Reads and writes files for the ``edit`` tool (pi's ``EditOperations``).
* ``FindOperations`` — Finds files for the ``find`` tool (pi's ``FindOperations``).
* ``GrepOperations`` — Searches file contents for the ``grep`` tool. Unlike pi's ``GrepOperations`` (whose search
  always runs the local ripgrep, so a remote plugin has to replace the tool's ``execute``), the search itself is
  pluggable: the tool formats, limits and truncates what ``grep`` returns.
* ``ExecResult`` — How a command ended: ``exit_code`` is ``None`` when it was stopped (timeout or abort).
* ``LocalBashOperations`` — Runs commands on this machine with the user's shell (process group, timeout, abort).
* ``LocalFileOperations`` — This machine's files (the tools' default; they take a faster path for it: streaming
  reads, special-file checks, atomic replacement).
* ``LsOperations`` — Lists directories for the ``ls`` tool (pi's ``LsOperations``).
* ``ReadOperations`` — Reads files for the ``read`` tool (pi's ``ReadOperations``).
* ``SpawnHook`` — ``(command, cwd, env) -> (command, cwd, env)``: changes a bash command before it runs.
* ``WriteOperations`` — Writes files for the ``write`` tool (pi's ``WriteOperations``).
* ``is_local`` — ``operations`` is ``None`` or this machine's (the tools' fast path applies).
* ``run_bash_operations`` — Run ``command`` through ``operations`` (default: this machine) and collect its output as
  the bash tool and ``!command`` show it: head and tail within the limits, everything spilled to a file.
* ``create_bash_tool`` — The built-in ``bash`` tool, running its commands through ``operations`` (default: this
  machine) and ``spawn_hook(command, cwd, env) -> (command, cwd, env)`` first. Register it with ``register(tool,
  replaces="bash")`` to take the built-in's place.
* ``create_edit_tool`` — The built-in ``edit`` tool, reading and writing through ``operations`` (default: this
  machine's files). Register it with ``register(tool, replaces="edit")`` to take the built-in's place.
* ``create_find_tool`` — The built-in ``find`` tool, finding through ``operations`` (default: this machine, honouring
  ignore files). Register it with ``register(tool, replaces="find")`` to take the built-in's place.
* ``create_grep_tool`` — The built-in ``grep`` tool, searching through ``operations`` (default: this machine, with
  ripgrep when available). Register it with ``register(tool, replaces="grep")`` to take the built-in's place.
* ``create_ls_tool`` — The built-in ``ls`` tool, listing through ``operations`` (default: this machine's files).
  Register it with ``register(tool, replaces="ls")`` to take the built-in's place.
* ``create_read_tool`` — The built-in ``read`` tool, reading through ``operations`` (default: this machine's files).
  Register it with ``register(tool, replaces="read")`` to take the built-in's place.
* ``create_write_tool`` — The built-in ``write`` tool, writing through ``operations`` (default: this machine's
  files, replaced atomically). Register it with ``register(tool, replaces="write")`` to take the built-in's place.
* ``resolve_tool_path`` — Strip one leading ``@``, normalise exotic spaces, expand ``~``, resolve against ``cwd``.

Tool helpers (truncation, processes, matching):

* ``DEFAULT_MAX_BYTES`` — The tools' output limit in bytes (50 KB), as in pi.
* ``DEFAULT_SECRET_PATTERNS`` — Variable-name patterns removed from the environment of processes started for the
  model.
* ``DEFAULT_MAX_LINES`` — The tools' output limit in lines (2000), as in pi.
* ``Edit`` — One replacement: ``old_text`` (must be found once) becomes ``new_text``.
* ``EditError`` — An edit that cannot be applied; ``kind`` is ``empty``, ``not_found``, ``ambiguous``, ``overlap``
  or ``no_change``.
* ``EditOutcome`` — What :func:`apply_edits` did: the new LF text, the replacements, and edits found already done.
* ``GREP_MAX_LINE_LENGTH`` — Longest line ``grep`` shows before cutting it.
* ``GrepLine`` — One line of :func:`grep` output: ``path`` relative to the searched root, 1-based ``line`` number, its
  ``text``, and ``is_match`` (false for a context line).
* ``GrepResult`` — What :func:`grep` found: the ``lines`` (matches and context, in path order), the number of
  ``matches``, whether the match ``limit_reached`` cut further matches off, and the ``backend`` that searched
  (``ripgrep`` or ``python``).
* ``HeadTail`` — Both ends of a text that is over the limits; ``text()`` joins them around a marker.
* ``NONINTERACTIVE_ENV`` — Variables set for processes started for the model so they never wait for a terminal.
* ``OutputCollector`` — Collects a byte stream with bounded memory: everything while small, then head and tail
  windows, with the complete stream spilled to a temporary file once it is over the limits.
* ``Overrides`` — ``--glob`` filters: a matching glob decides outright (``!glob`` excludes); when any positive glob
  exists, files matching none are left out (directories are still entered).
* ``PreparedImage`` — Image bytes ready to attach, or ``None`` data with a reason in ``notes``.
* ``ProcessResult`` — The outcome of :func:`run_process`. ``exit_code`` is ``None`` when the process was stopped by
  a timeout or an abort; a process killed by a signal otherwise has ``128 + signal``.
* ``ProcessStartError`` — The process could not be started (missing program, missing working directory, ...).
* ``Replacement`` — A resolved edit: replace ``content[start:end]`` with ``text`` (offsets in LF text).
* ``SearchError`` — A search that cannot run: bad pattern, missing path, ripgrep failure.
* ``ShellConfig`` — How user and tool shell commands run: pi's ``shellPath`` and ``shellCommandPrefix`` settings.
* ``ShellEnvPolicy`` — What is removed from the environment of processes started for the model.
* ``ShellResult`` — The outcome of :func:`run_shell`.
* ``SpecialFileError`` — The path is a pipe, a device or a socket: file tools do not open those (they may block for
  ever).
* ``TextFile`` — A file's text split into what matching sees (LF, no BOM) and what must be put back.
* ``Truncation`` — What a truncation kept and dropped; its JSON (``details()``) is pi's ``details.truncation``.
* ``apply_edits`` — Match every edit against ``content`` (LF text) and apply them together, or raise EditError.
* ``capped_listing`` — ``text`` cut at the byte limit (whole lines), with the notices as one bracketed footer.
* ``check_regular_file`` — Raise :class:`SpecialFileError` when ``path`` is a pipe, a device or a socket.
* ``count_argument`` — A count argument as an int: missing or non-finite gives ``default``; below ``minimum`` is
  raised.
* ``atomic_write`` — Replace ``path``'s contents with ``data`` so that a crash leaves the old or the new file.
* ``build_env`` — The environment for a supervised process: ours without credentials (see
  :mod:`pi_core.toolkit.shell_env`), the non-interactive defaults, then ``extra`` (always kept).
* ``closest_region`` — The window of lines most similar to ``old`` (same number of lines), or None if nothing is
  even 40% alike.
* ``compile_pattern`` — A search pattern compiled once (regular expression or literal, case rules).
* ``default_shell`` — ``$PI_SHELL``, else bash (``/bin/bash`` or on PATH), else ``/bin/sh``.
* ``detect_image_mime`` — The MIME type of a supported image (jpeg, png, gif, webp, bmp) from its first bytes, else
  None.
* ``detect_image_mime_file`` — The image type of a file from its first bytes (``None`` when it is not an image).
* ``edit_diff`` — ``{"diff", "patch", "firstChangedLine"}`` for a change from ``old`` to ``new`` (LF text).
* ``file_mutation_lock`` — Hold the mutation lock of every path given (taken in a fixed order, so no deadlock).
* ``find_edit`` — Resolve one edit against ``content`` (LF text) or raise :class:`EditError`.
* ``find_ripgrep`` — ``$PI_RG_PATH``, ``rg`` on PATH, or the one installed beside this Python (the ``ripgrep``
  wheel).
* ``format_size`` — ``512B``, ``50.0KB``, ``3.2MB`` — the size format used in tool notices.
* ``glob_to_regex`` — Translate a gitignore-style glob (no leading ``/``) into a regular expression body.
* ``grep`` — Search files under ``target`` (a directory or one file) for ``pattern`` (a regex unless ``literal``).
  Results come in path order; at most ``limit`` matches plus the last one's context.
* ``list_files`` — Every file under ``root`` that ignore rules keep, as sorted relative POSIX paths.
* ``mutation_key`` — The identity of a file for locking: its real path (the absolute path if it does not exist).
* ``path_key`` — Sort key giving ripgrep's ``--sort path`` order.
* ``prepare_image`` — Convert to a model-supported format and shrink oversized images when Pillow is available.
* ``run_blocking`` — Run ``fn(*args)`` in a thread of its own; return its result, or raise :class:`AbortError` as
  soon as ``signal`` fires (the thread is left to finish on its own and its result is discarded).
* ``run_process`` — Run a program (no shell) under supervision and collect its stdout and stderr.
* ``run_shell`` — Run ``command`` with ``<shell> -c`` under supervision, stdout and stderr merged in order.
* ``sanitize_output`` — Drop terminal escape sequences and control characters (tab, newline and CR stay).
* ``scrubbed_env`` — ``base`` (default: this process's environment) without credentials, then ``extra`` on top.
* ``set_shell_env_policy`` — Use ``policy`` for every process started from now on (sessions set it from their
  settings).
* ``shell_env_policy`` — The environment policy in force for processes started for the model.
* ``special_file_kind`` — ``"a named pipe (FIFO)"``, ``"a character device"``, ... or ``None`` for a regular file, a
  directory or a missing path (symlinks are followed).
* ``truncate_head`` — Keep whole lines from the start. A first line over ``max_bytes`` keeps nothing and sets
  ``first_line_exceeds_limit`` (the caller should point at another way to see it).
* ``truncate_head_tail`` — Keep the first quarter and the last three quarters of the limits when ``text`` is over
  them.
* ``truncate_line`` — Cut one line to ``max_chars`` characters with a ``... [truncated]`` marker.
* ``truncate_tail`` — Keep whole lines from the end; a single last line over ``max_bytes`` keeps its end
  (``last_line_partial``).
* ``walk`` — Yield ``(relative posix path, is_dir)`` of every entry under ``root`` that the rules keep, in ripgrep's
  sorted order (entries of a directory by name, depth first). ``.git`` entries and symbolic links are skipped,
  hidden files are not.

Reading untrusted JSON:

* ``JSON_MAX_DEPTH`` — How deeply nested untrusted JSON may be.
* ``JSONInputError`` — JSON the program will not take: malformed, nested too deeply, too large or out of range.
* ``json_safe`` — ``value`` with every non-finite float replaced by ``None`` (what ``JSON.stringify`` writes).
* ``parse_json`` — Parse one JSON text as ``JSON.parse`` would, within limits; raises :class:`JSONInputError`.

Messages (re-exported from pi_core.ai):

* ``AbortController`` — Owns a signal and fires it.
* ``AbortSignal`` — Read side of an :class:`AbortController`.
* ``AssistantMessage`` — A model's answer: text, thinking and tool calls, with usage and the stop reason.
* ``ImageContent`` — An image in a message (base64 data and MIME type).
* ``Message`` — One of the four messages a model sees: user, assistant, tool result, system.
* ``Model`` — A model of a provider: id, API, base URL, context window, costs, capabilities.
* ``SystemMessage`` — The system prompt as pi 1.6 keeps it in the transcript: named sections and tool changes.
* ``TextContent`` — Text in a message.
* ``ThinkingContent`` — A model's reasoning in an answer.
* ``ToolCall`` — A tool call in an answer: id, tool name, arguments.
* ``ToolResultMessage`` — A tool's result as the model sees it.
* ``UserMessage`` — Text and images from the user (or sent as if typed).

Sessions:

* ``BranchPreparation`` — What a branch summary would cover; plugins see it in ``session_before_tree``.
* ``CompactionError`` — A compaction (or branch summary) could not be made; the session is unchanged.
* ``CompactionPreparation`` — What a compaction would do; plugins see it in ``session_before_compact``.
* ``CompactionResult`` — What a compaction produced (``compaction_end``'s ``result`` and the RPC ``compact``
  answer).
* ``FileOps`` — Paths the ``read``, ``write`` and ``edit`` tools were called with.
* ``AgentMessage`` — Any message a session holds (the model's four roles plus bash executions, custom messages and
  summaries).
* ``BashExecutionMessage`` — A shell command the user ran (``!cmd``; ``!!cmd`` sets ``exclude_from_context``).
* ``BranchSummaryEntry`` — Summary of the branch the leaf came back from; ``from_id`` is that branch's old leaf.
* ``BranchSummaryMessage`` — Synthesized from a ``branch_summary`` entry; never stored as a message entry.
* ``CompactionEntry`` — Everything before ``first_kept_entry_id`` on the path is replaced by ``summary``.
* ``CompactionSummaryMessage`` — Synthesized from a ``compaction`` entry; never stored as a message entry.
* ``ContextEditEntry`` — Replaces (or with ``replacement=None`` omits) ``target_id``'s contribution to the context.
* ``ContextEditReplacement`` — What a ``context_edit`` entry puts in place of an earlier entry's content.
* ``CustomEntry`` — A plugin's state; never part of the model's context.
* ``CustomMessage`` — A plugin's message in the conversation; the model sees it as a user message.
* ``CustomMessageEntry`` — A plugin's message that is part of the model's context (as a user message).
* ``EntryNotFoundError`` — No entry with that id in this session.
* ``InvalidSessionError`` — The file is not a pi session (no valid header), so it is left untouched.
* ``LabelEntry`` — Sets (or, with no label, clears) the label of ``target_id``.
* ``MessageEntry`` — A session entry holding one message.
* ``ModelChangeEntry`` — A session entry recording a model switch.
* ``ModelRef`` — The model a session was last using: ``{"provider": ..., "modelId": ...}``.
* ``SessionCheck`` — The result of :func:`check_session_file`.
* ``SessionConflictError`` — The file changed under us (another program appended to it); reopen before writing.
* ``SessionContext`` — What a resumed session sends to the model, and the settings it resumes with.
* ``SessionDiagnostic`` — Something the loader noticed and handled: a skipped line, a repaired tail.
* ``SessionEntry`` — Any entry of a session file (pi's entry types).
* ``SessionError`` — Something about a session file or a session operation is wrong.
* ``SessionHeader`` — The first line of a session file; not a tree node.
* ``SessionInfo`` — One row of a session listing (pi's ``SessionInfo`` without the full-text field).
* ``SessionInfoEntry`` — Session metadata; ``name`` is the display name (empty clears it).
* ``SessionLockedError`` — Another process (or another manager in this one) has the session open for writing.
* ``SessionManager`` — A session tree and its file. Make one with :meth:`create`, :meth:`open`, :meth:`in_memory`,
  :meth:`continue_recent` or :meth:`fork_from`; close it (or use ``with``) to release the file.
* ``SessionProblem`` — One thing wrong with a session file.
* ``SessionReadOnlyError`` — An append was attempted on a session opened read-only.
* ``SessionTreeNode`` — One entry in the tree. ``raw`` is the record as stored; ``entry`` its typed view (made on
  demand).
* ``SystemSnapshot`` — A compaction's record of the system prompt and tools in force (pi's key order for it).
* ``ThinkingLevelChangeEntry`` — A session entry recording a thinking-level change.
* ``UnknownEntry`` — A record of a type this version does not know (or could not validate); kept as written.
* ``UnknownMessage`` — A message whose role this version does not know; kept as written, never sent to a model.
* ``UsageEntry`` — Model usage outside the conversation (e.g. cache warming); counted in cost totals only.
* ``check_session_file`` — Look at every line of a session file without changing it.
* ``convert_to_llm`` — Session messages (models or pi-JSON dicts) → model messages, as pi's ``convertToLlm``.
* ``default_session_dir`` — ``<agent dir>/sessions/--<encoded cwd>--`` (not created).
* ``default_export_name`` — pi's default file name for an HTML export: ``pi-session-<session file name>.html``.
* ``export_branch_jsonl`` — Write a session's active branch to a JSONL file of its own, as pi's ``/export
  x.jsonl`` does (pi's header with the same id, the branch's entries re-linked in a line); returns the path.
* ``export_manager_html`` — Render an open session (a ``SessionManager``) into one self-contained HTML page
  (``system_prompt`` and ``tools`` shown collapsed); returns the path written.
* ``repair_session_file`` — Mend what :func:`check_session_file` marks repairable; returns the backup's path.
* ``serialize_conversation`` — The conversation as plain text blocks separated by blank lines (see
  :func:`serialize_blocks`); ``messages`` are pi-JSON dicts or message models (what :func:`pi_core.convert_to_llm`
  returns).
* ``agent_dir`` — The agent dir: ``$PI_CODING_AGENT_DIR`` if set and non-empty, else ``~/.pi/agent``.

Runtime, SDK:

* ``AgentSession`` — A running conversation. Build one with :func:`pi_core.create_agent_session`.
* ``ForkPoint`` — A user message of the active branch that :meth:`AgentSession.fork` accepts.
* ``SessionBusyError`` — Raised when input arrives while the agent runs and no ``streaming_behavior`` says how to
  queue it.
* ``UnknownCommandError`` — ``/word`` names no command, prompt template or skill; it is not sent to the model.
* ``SetupError`` — The session cannot be built as asked (unknown model, toolset, session...); the message says why.
* ``MissingSessionCwdError`` — The session to switch to was made in a directory that no longer exists (``issue`` says
  which).
* ``create_agent_session`` — Build and start a session.
* ``AgentSettledEvent`` — pi will not continue on its own: retries, compaction and follow-ups are done.
* ``AutoRetryEndEvent`` — Automatic retries are over: ``success`` after ``attempt`` attempts, else ``final_error``
  (also ``Retry cancelled`` when the wait was cancelled, as in pi).
* ``AutoRetryStartEvent`` — A request failed transiently and is retried automatically: this is ``attempt`` of at most
  ``max_attempts``, sent after ``delay_ms``; ``error_message`` is the failure being retried.
* ``CompactionEndEvent`` — A compaction ended: ``result`` (a :class:`CompactionResult`) on success, else ``aborted``
  or ``error_message``; ``will_retry`` is true when the request that overflowed is sent again now.
* ``CompactionStartEvent`` — A compaction started; ``reason`` is ``manual``, ``threshold`` or ``overflow``.
* ``EntryAppendedEvent`` — An entry that is not a message (a ``context_edit``, a label...) was appended to the
  session.
* ``QueueUpdateEvent`` — The queued input changed: the texts of the ``steering`` messages (delivered after the current
  tool batch) and of the ``follow_up`` messages (delivered when the run would end), in order.
* ``SessionInfoChangedEvent`` — The session's display name changed; ``name`` is the stored (normalised) name.
* ``SummarizationRetryAttemptStartEvent`` — A retried compaction or branch-summary request starts (``source``, ``reason``).
* ``SummarizationRetryFinishedEvent`` — The retries of one summarization request are over.
* ``SummarizationRetryScheduledEvent`` — A summarization request failed transiently; another attempt follows ``delay_ms``.
* ``ThinkingLevelChangedEvent`` — The session's thinking level changed (the level in effect).
* ``ContextFile`` — A project instruction file (AGENTS.md, CLAUDE.md) and its text.
* ``ContextFiles`` — The context files found, outermost first (``files``), and diagnostics.
* ``FrontMatterError`` — The front matter is outside the YAML subset read here (the message gives the line).
* ``PromptTemplate`` — A prompt template: ``/name args`` expands to ``content`` with the arguments filled in.
* ``ResourceDiagnostic`` — Why a file was skipped or is suspect. ``collision``: same name as ``winner``, which was
  kept.
* ``ResourceError`` — A resource could not be used when it was needed (e.g. a skill file vanished).
* ``Settings`` — The effective settings: global merged with project, pi's defaults for what neither sets.
* ``SettingsError`` — A settings file could not be written (malformed file, untrusted project, bad value).
* ``SettingsIssue`` — A problem found while loading settings; ``message`` names the file and what was ignored.
* ``Skill`` — A skill: instructions in a markdown file, listed to the model by name and description.
* ``SkillSet`` — The skills found, in precedence order (``skills``), and diagnostics.
* ``SystemPrompt`` — A built system prompt.
* ``SystemPromptOptions`` — What the system prompt is built from.
* ``TemplateSet`` — The prompt templates found, in precedence order (``templates``), and diagnostics.
* ``build_system_prompt`` — Assemble the sections from ``options`` (reads SYSTEM.md / APPEND_SYSTEM.md when needed).
* ``expand_prompt_template`` — The expansion of ``/name args`` when ``name`` is a template; ``None`` when it is not.
* ``expand_skill_command`` — ``/skill:name [args]`` replaced by the skill's body in a ``<skill>`` block, args after
  it.
* ``load_context_files`` — The context files for ``cwd``: the global ``<agent dir>/AGENTS.md`` first, then one per
  directory from the filesystem root down to ``cwd``. Nothing overrides anything: all are used.
* ``load_prompt_templates`` — Templates from ``extra_paths`` (files or directories, in order), then
  ``<cwd>/.pi/prompts`` (only when ``trusted``), then ``<agent dir>/prompts``, then ``package_paths`` (files that
  packages contribute). Directories are not searched recursively. The first template with a name wins; a file
  ``enabled`` turns off takes no name.
* ``load_skills`` — Skills from ``extra_paths`` (in order; files or directories, relative to ``cwd``), then the
  project's ``.pi/skills`` and ``.agents/skills`` (cwd up to the git root; only when ``trusted``), then ``<agent
  dir>/skills`` and ``~/.agents/skills``, then ``package_paths`` (what packages contribute: the user's and the
  project's own skills win over a package's, as in pi). The first skill with a name wins; a file ``enabled`` turns
  off (see :class:`ResourceFilter`) takes no name.
* ``parse_front_matter`` — ``(front matter mapping, body)`` of a markdown file; :class:`FrontMatterError` if
  unreadable.

Packages:

* ``PackageResource`` — One thing a package contributes. ``name``: a plugin's entry-point name, else the path shown.
* ``PackageSet`` — Every package of a session, in precedence order.
* ``PackageSource`` — One parsed source. ``text`` is what was written; the other fields depend on ``kind``.
* ``ResolvedPackage`` — A package and its resources, as the settings and the disk say now.
* ``discover_package_resources`` — The skill, prompt-template and theme files that packages contribute to a session
  in ``cwd``.
* ``parse_package_source`` — Read ``text`` as a source; relative local paths resolve against ``base`` (default:
  cwd).
* ``resolve_packages`` — The packages of a session in ``cwd``.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing costs ~20 ms to import; keep `import pi_core` cheap

from ._version import __version__

# name -> module that defines it. Sections per area; keep each section sorted.
_EXPORTS: dict[str, str] = {
    # --- plugin framework -------------------------------------------------------------------
    "hookimpl": "pi_core.extensions.markers",
    "EventBus": "pi_core.extensions.bus",
    "CommandContext": "pi_core.extensions.context",
    "ExtensionContext": "pi_core.extensions.context",
    "UI": "pi_core.extensions.context",
    "Command": "pi_core.extensions.contributions",
    "CliCommand": "pi_core.extensions.contributions",
    "Flag": "pi_core.extensions.contributions",
    "Toolset": "pi_core.extensions.contributions",
    "PluginHost": "pi_core.extensions.manager",
    "RegisteredMcpServer": "pi_core.extensions.mcp_servers",
    "KeyBinding": "pi_core.extensions.shortcuts",
    "Shortcut": "pi_core.extensions.shortcuts",
    "ToolRenderers": "pi_core.extensions.renderers",
    "ToolRenderContext": "pi_core.extensions.renderers",
    "build_plugin_host": "pi_core.extensions.manager",
    "is_project_trusted": "pi_core.extensions.trust",
    "TrustStore": "pi_core.extensions.trust",
    "ContextUsage": "pi_core.extensions.results",
    "ForkResult": "pi_core.extensions.results",
    "NavigateResult": "pi_core.extensions.results",
    "SessionResult": "pi_core.extensions.results",
    "SlashCommandInfo": "pi_core.extensions.results",
    "SourceInfo": "pi_core.extensions.results",
    # --- hook events and decisions ----------------------------------------------------------
    "AfterToolCallEvent": "pi_core.events",
    "AgentBeforeSettleEvent": "pi_core.events",
    "AgentEndEvent": "pi_core.events",
    "AgentStartEvent": "pi_core.events",
    "AgentStartPatch": "pi_core.events",
    "BeforeAgentStartEvent": "pi_core.events",
    "BeforeToolCallEvent": "pi_core.events",
    "Block": "pi_core.events",
    "BoundaryPatch": "pi_core.events",
    "Cancel": "pi_core.events",
    "CompactionOverride": "pi_core.events",
    "ContextEvent": "pi_core.events",
    "ContextWithSystemEvent": "pi_core.events",
    "Handled": "pi_core.events",
    "InputEvent": "pi_core.events",
    "McpServersChangeEvent": "pi_core.events",
    "MessageEndEvent": "pi_core.events",
    "MessageStartEvent": "pi_core.events",
    "MessageUpdateEvent": "pi_core.events",
    "ModelSelectEvent": "pi_core.events",
    "ProjectTrustEvent": "pi_core.events",
    "ProviderHeadersEvent": "pi_core.events",
    "ProviderRequestEvent": "pi_core.events",
    "ProviderResponseEvent": "pi_core.events",
    "ProviderStreamEvent": "pi_core.events",
    "ResourcePaths": "pi_core.events",
    "ResourcesDiscoverEvent": "pi_core.events",
    "SessionBeforeCompactEvent": "pi_core.events",
    "SessionBeforeForkEvent": "pi_core.events",
    "SessionBeforeSwitchEvent": "pi_core.events",
    "SessionBeforeTreeEvent": "pi_core.events",
    "SessionCompactEvent": "pi_core.events",
    "SessionCompactFailedEvent": "pi_core.events",
    "SessionShutdownEvent": "pi_core.events",
    "SessionStartEvent": "pi_core.events",
    "SessionTreeEvent": "pi_core.events",
    "ThinkingLevelSelectEvent": "pi_core.events",
    "ToolExecutionEndEvent": "pi_core.events",
    "ToolExecutionStartEvent": "pi_core.events",
    "ToolExecutionUpdateEvent": "pi_core.events",
    "ToolResultPatch": "pi_core.events",
    "Transform": "pi_core.events",
    "TreeOverride": "pi_core.events",
    "TrustDecision": "pi_core.events",
    "TurnEndEvent": "pi_core.events",
    "TurnStartEvent": "pi_core.events",
    "UserBashEvent": "pi_core.events",
    "UserBashResult": "pi_core.events",
    # --- tools -------------------------------------------------------------------------------
    "Tool": "pi_core.agent.tools",
    "ToolCallOutcome": "pi_core.agent.tools",
    "ToolCapabilities": "pi_core.agent.tools",
    "ToolContext": "pi_core.agent.tools",
    "ToolError": "pi_core.agent.tools",
    "ToolNamespace": "pi_core.agent.tools",
    "ToolResult": "pi_core.agent.tools",
    "BashOperations": "pi_core.agent.operations",
    "EditOperations": "pi_core.agent.operations",
    "FindOperations": "pi_core.agent.operations",
    "GrepOperations": "pi_core.agent.operations",
    "LsOperations": "pi_core.agent.operations",
    "ExecResult": "pi_core.agent.operations",
    "LocalBashOperations": "pi_core.agent.operations",
    "LocalFileOperations": "pi_core.agent.operations",
    "ReadOperations": "pi_core.agent.operations",
    "SpawnHook": "pi_core.agent.operations",
    "WriteOperations": "pi_core.agent.operations",
    "is_local": "pi_core.agent.operations",
    "run_bash_operations": "pi_core.agent.operations",
    # the built-in tools, to reuse with other operations (plugins/tools)
    "create_bash_tool": "plugins.tools.bash",
    "create_edit_tool": "plugins.tools.edit",
    "create_find_tool": "plugins.tools.find",
    "create_grep_tool": "plugins.tools.grep",
    "create_ls_tool": "plugins.tools.ls",
    "create_read_tool": "plugins.tools.read",
    "create_write_tool": "plugins.tools.write",
    "resolve_tool_path": "pi_core.agent.paths",
    # --- tool helpers (truncation, processes, matching) ---------------------------------------
    "DEFAULT_MAX_BYTES": "pi_core.toolkit.truncate",
    "DEFAULT_SECRET_PATTERNS": "pi_core.toolkit.shell_env",
    "DEFAULT_MAX_LINES": "pi_core.toolkit.truncate",
    "Edit": "pi_core.toolkit.textmatch",
    "EditError": "pi_core.toolkit.textmatch",
    "EditOutcome": "pi_core.toolkit.textmatch",
    "GREP_MAX_LINE_LENGTH": "pi_core.toolkit.truncate",
    "GrepLine": "pi_core.toolkit.search",
    "GrepResult": "pi_core.toolkit.search",
    "HeadTail": "pi_core.toolkit.truncate",
    "NONINTERACTIVE_ENV": "pi_core.toolkit.process",
    "OutputCollector": "pi_core.toolkit.process",
    "Overrides": "pi_core.toolkit.ignore",
    "PreparedImage": "pi_core.toolkit.images",
    "ProcessResult": "pi_core.toolkit.process",
    "ProcessStartError": "pi_core.toolkit.process",
    "Replacement": "pi_core.toolkit.textmatch",
    "SearchError": "pi_core.toolkit.search",
    "ShellConfig": "pi_core.toolkit.process",
    "ShellEnvPolicy": "pi_core.toolkit.shell_env",
    "ShellResult": "pi_core.toolkit.process",
    "SpecialFileError": "pi_core.toolkit.blocking",
    "TextFile": "pi_core.toolkit.textmatch",
    "Truncation": "pi_core.toolkit.truncate",
    "apply_edits": "pi_core.toolkit.textmatch",
    "capped_listing": "pi_core.toolkit.results",
    "check_regular_file": "pi_core.toolkit.blocking",
    "count_argument": "pi_core.toolkit.results",
    "atomic_write": "pi_core.toolkit.mutation",
    "build_env": "pi_core.toolkit.process",
    "closest_region": "pi_core.toolkit.textmatch",
    "compile_pattern": "pi_core.toolkit.ignore",
    "default_shell": "pi_core.toolkit.process",
    "detect_image_mime": "pi_core.toolkit.images",
    "detect_image_mime_file": "pi_core.toolkit.images",
    "edit_diff": "pi_core.toolkit.diff",
    "file_mutation_lock": "pi_core.toolkit.mutation",
    "find_edit": "pi_core.toolkit.textmatch",
    "find_ripgrep": "pi_core.toolkit.search",
    "format_size": "pi_core.toolkit.truncate",
    "glob_to_regex": "pi_core.toolkit.ignore",
    "grep": "pi_core.toolkit.search",
    "list_files": "pi_core.toolkit.search",
    "mutation_key": "pi_core.toolkit.mutation",
    "path_key": "pi_core.toolkit.search",
    "prepare_image": "pi_core.toolkit.images",
    "run_blocking": "pi_core.toolkit.blocking",
    "run_process": "pi_core.toolkit.process",
    "run_shell": "pi_core.toolkit.process",
    "sanitize_output": "pi_core.toolkit.process",
    "scrubbed_env": "pi_core.toolkit.shell_env",
    "set_shell_env_policy": "pi_core.toolkit.shell_env",
    "shell_env_policy": "pi_core.toolkit.shell_env",
    "special_file_kind": "pi_core.toolkit.blocking",
    "truncate_head": "pi_core.toolkit.truncate",
    "truncate_head_tail": "pi_core.toolkit.truncate",
    "truncate_line": "pi_core.toolkit.truncate",
    "truncate_tail": "pi_core.toolkit.truncate",
    "walk": "pi_core.toolkit.ignore",
    # --- reading untrusted JSON --------------------------------------------------------------
    "JSON_MAX_DEPTH": "pi_core.safejson",
    "JSONInputError": "pi_core.safejson",
    "json_safe": "pi_core.safejson",
    "parse_json": "pi_core.safejson",
    # --- messages (re-exported from pi_core.ai) -----------------------------------------------
    "AbortController": "pi_core.ai.abort",
    "AbortSignal": "pi_core.ai.abort",
    "AssistantMessage": "pi_core.ai.types",
    "ImageContent": "pi_core.ai.types",
    "Message": "pi_core.ai.types",
    "Model": "pi_core.ai.types",
    "SystemMessage": "pi_core.ai.types",
    "TextContent": "pi_core.ai.types",
    "ThinkingContent": "pi_core.ai.types",
    "ToolCall": "pi_core.ai.types",
    "ToolResultMessage": "pi_core.ai.types",
    "UserMessage": "pi_core.ai.types",
    # --- sessions ----------------------------------------------------------------------------
    "BranchPreparation": "pi_core.session.branch_summary",
    "CompactionError": "pi_core.runtime.compaction",
    "CompactionPreparation": "pi_core.session.compaction",
    "CompactionResult": "pi_core.runtime.compaction",
    "FileOps": "pi_core.session.compaction",
    "AgentMessage": "pi_core.session.messages",
    "BashExecutionMessage": "pi_core.session.messages",
    "BranchSummaryEntry": "pi_core.session.entries",
    "BranchSummaryMessage": "pi_core.session.messages",
    "CompactionEntry": "pi_core.session.entries",
    "CompactionSummaryMessage": "pi_core.session.messages",
    "ContextEditEntry": "pi_core.session.entries",
    "ContextEditReplacement": "pi_core.session.entries",
    "CustomEntry": "pi_core.session.entries",
    "CustomMessage": "pi_core.session.messages",
    "CustomMessageEntry": "pi_core.session.entries",
    "EntryNotFoundError": "pi_core.session.errors",
    "InvalidSessionError": "pi_core.session.errors",
    "LabelEntry": "pi_core.session.entries",
    "MessageEntry": "pi_core.session.entries",
    "ModelChangeEntry": "pi_core.session.entries",
    "ModelRef": "pi_core.session.projection",
    "SessionCheck": "pi_core.session.check",
    "SessionConflictError": "pi_core.session.errors",
    "SessionContext": "pi_core.session.projection",
    "SessionDiagnostic": "pi_core.session.store",
    "SessionEntry": "pi_core.session.entries",
    "SessionError": "pi_core.session.errors",
    "SessionHeader": "pi_core.session.entries",
    "SessionInfo": "pi_core.session.listing",
    "SessionInfoEntry": "pi_core.session.entries",
    "SessionLockedError": "pi_core.session.errors",
    "SessionManager": "pi_core.session.manager",
    "SessionProblem": "pi_core.session.check",
    "SessionReadOnlyError": "pi_core.session.errors",
    "SessionTreeNode": "pi_core.session.tree",
    "SystemSnapshot": "pi_core.session.entries",
    "ThinkingLevelChangeEntry": "pi_core.session.entries",
    "UnknownEntry": "pi_core.session.entries",
    "UnknownMessage": "pi_core.session.messages",
    "UsageEntry": "pi_core.session.entries",
    "check_session_file": "pi_core.session.check",
    "convert_to_llm": "pi_core.session.messages",
    "default_session_dir": "pi_core.session.locations",
    "default_export_name": "pi_core.export_html",
    "export_branch_jsonl": "pi_core.session.branch_export",
    "export_manager_html": "pi_core.export_html",
    "repair_session_file": "pi_core.session.check",
    "serialize_conversation": "pi_core.session.compaction",
    "agent_dir": "pi_core.paths",
    # --- runtime, SDK ------------------------------------------------------------------------
    "AgentSession": "pi_core.runtime.agent_session",
    "ForkPoint": "pi_core.runtime.agent_session",
    "SessionBusyError": "pi_core.runtime.agent_session",
    "UnknownCommandError": "pi_core.runtime.agent_session",
    "SetupError": "pi_core.sdk",
    "MissingSessionCwdError": "pi_core.runtime.session_cwd",
    "create_agent_session": "pi_core.sdk",
    "AgentSettledEvent": "pi_core.runtime.events",
    "AutoRetryEndEvent": "pi_core.runtime.events",
    "AutoRetryStartEvent": "pi_core.runtime.events",
    "CompactionEndEvent": "pi_core.runtime.events",
    "CompactionStartEvent": "pi_core.runtime.events",
    "EntryAppendedEvent": "pi_core.runtime.events",
    "QueueUpdateEvent": "pi_core.runtime.events",
    "SessionInfoChangedEvent": "pi_core.runtime.events",
    "SummarizationRetryAttemptStartEvent": "pi_core.runtime.events",
    "SummarizationRetryFinishedEvent": "pi_core.runtime.events",
    "SummarizationRetryScheduledEvent": "pi_core.runtime.events",
    "ThinkingLevelChangedEvent": "pi_core.runtime.events",
    # settings/resources
    "ContextFile": "pi_core.runtime.resources",
    "ContextFiles": "pi_core.runtime.resources",
    "FrontMatterError": "pi_core.runtime.resources",
    "PromptTemplate": "pi_core.runtime.resources",
    "ResourceDiagnostic": "pi_core.runtime.resources",
    "ResourceError": "pi_core.runtime.resources",
    "Settings": "pi_core.runtime.settings",
    "SettingsError": "pi_core.runtime.settings",
    "SettingsIssue": "pi_core.runtime.settings",
    "Skill": "pi_core.runtime.resources",
    "SkillSet": "pi_core.runtime.resources",
    "SystemPrompt": "pi_core.runtime.system_prompt",
    "SystemPromptOptions": "pi_core.runtime.system_prompt",
    "TemplateSet": "pi_core.runtime.resources",
    "build_system_prompt": "pi_core.runtime.system_prompt",
    "expand_prompt_template": "pi_core.runtime.resources",
    "expand_skill_command": "pi_core.runtime.resources",
    "load_context_files": "pi_core.runtime.resources",
    "load_prompt_templates": "pi_core.runtime.resources",
    "load_skills": "pi_core.runtime.resources",
    "parse_front_matter": "pi_core.runtime.resources",
    # --- packages ---------------------------------------------------------------------------
    "PackageResource": "pi_core.packages.resolve",
    "PackageSet": "pi_core.packages.resolve",
    "PackageSource": "pi_core.packages.sources",
    "ResolvedPackage": "pi_core.packages.resolve",
    "discover_package_resources": "pi_core.packages.resolve",
    "parse_package_source": "pi_core.packages.sources",
    "resolve_packages": "pi_core.packages.resolve",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - static view of the lazy names
    # `X as X`: each name re-exported explicitly, so `mypy --strict` accepts imports from this package
    from plugins.tools.bash import create_bash_tool as create_bash_tool
    from plugins.tools.edit import create_edit_tool as create_edit_tool
    from plugins.tools.find import create_find_tool as create_find_tool
    from plugins.tools.grep import create_grep_tool as create_grep_tool
    from plugins.tools.ls import create_ls_tool as create_ls_tool
    from plugins.tools.read import create_read_tool as create_read_tool
    from plugins.tools.write import create_write_tool as create_write_tool
    from .agent.operations import (
        BashOperations as BashOperations,
        EditOperations as EditOperations,
        ExecResult as ExecResult,
        FindOperations as FindOperations,
        GrepOperations as GrepOperations,
        LsOperations as LsOperations,
        LocalBashOperations as LocalBashOperations,
        LocalFileOperations as LocalFileOperations,
        ReadOperations as ReadOperations,
        SpawnHook as SpawnHook,
        WriteOperations as WriteOperations,
        is_local as is_local,
        run_bash_operations as run_bash_operations,
    )
    from .agent.paths import resolve_tool_path as resolve_tool_path
    from .agent.tools import (
        Tool as Tool,
        ToolCallOutcome as ToolCallOutcome,
        ToolCapabilities as ToolCapabilities,
        ToolContext as ToolContext,
        ToolError as ToolError,
        ToolNamespace as ToolNamespace,
        ToolResult as ToolResult,
    )
    from .ai.abort import AbortController as AbortController, AbortSignal as AbortSignal
    from .ai.types import (
        AssistantMessage as AssistantMessage,
        ImageContent as ImageContent,
        Message as Message,
        Model as Model,
        SystemMessage as SystemMessage,
        TextContent as TextContent,
        ThinkingContent as ThinkingContent,
        ToolCall as ToolCall,
        ToolResultMessage as ToolResultMessage,
        UserMessage as UserMessage,
    )
    from .events import (
        AfterToolCallEvent as AfterToolCallEvent,
        AgentBeforeSettleEvent as AgentBeforeSettleEvent,
        AgentEndEvent as AgentEndEvent,
        AgentStartEvent as AgentStartEvent,
        AgentStartPatch as AgentStartPatch,
        BeforeAgentStartEvent as BeforeAgentStartEvent,
        BeforeToolCallEvent as BeforeToolCallEvent,
        Block as Block,
        BoundaryPatch as BoundaryPatch,
        Cancel as Cancel,
        CompactionOverride as CompactionOverride,
        ContextEvent as ContextEvent,
        ContextWithSystemEvent as ContextWithSystemEvent,
        Handled as Handled,
        InputEvent as InputEvent,
        McpServersChangeEvent as McpServersChangeEvent,
        MessageEndEvent as MessageEndEvent,
        MessageStartEvent as MessageStartEvent,
        MessageUpdateEvent as MessageUpdateEvent,
        ModelSelectEvent as ModelSelectEvent,
        ProjectTrustEvent as ProjectTrustEvent,
        ProviderHeadersEvent as ProviderHeadersEvent,
        ProviderRequestEvent as ProviderRequestEvent,
        ProviderResponseEvent as ProviderResponseEvent,
        ProviderStreamEvent as ProviderStreamEvent,
        ResourcePaths as ResourcePaths,
        ResourcesDiscoverEvent as ResourcesDiscoverEvent,
        SessionBeforeCompactEvent as SessionBeforeCompactEvent,
        SessionBeforeForkEvent as SessionBeforeForkEvent,
        SessionBeforeSwitchEvent as SessionBeforeSwitchEvent,
        SessionBeforeTreeEvent as SessionBeforeTreeEvent,
        SessionCompactEvent as SessionCompactEvent,
        SessionCompactFailedEvent as SessionCompactFailedEvent,
        SessionShutdownEvent as SessionShutdownEvent,
        SessionStartEvent as SessionStartEvent,
        SessionTreeEvent as SessionTreeEvent,
        ThinkingLevelSelectEvent as ThinkingLevelSelectEvent,
        ToolExecutionEndEvent as ToolExecutionEndEvent,
        ToolExecutionStartEvent as ToolExecutionStartEvent,
        ToolExecutionUpdateEvent as ToolExecutionUpdateEvent,
        ToolResultPatch as ToolResultPatch,
        Transform as Transform,
        TreeOverride as TreeOverride,
        TrustDecision as TrustDecision,
        TurnEndEvent as TurnEndEvent,
        TurnStartEvent as TurnStartEvent,
        UserBashEvent as UserBashEvent,
        UserBashResult as UserBashResult,
    )
    from .extensions.bus import EventBus as EventBus
    from .extensions.context import CommandContext as CommandContext, ExtensionContext as ExtensionContext, UI as UI
    from .extensions.contributions import CliCommand as CliCommand, Command as Command, Flag as Flag, Toolset as Toolset
    from .extensions.manager import PluginHost as PluginHost, build_plugin_host as build_plugin_host
    from .extensions.markers import hookimpl as hookimpl
    from .extensions.mcp_servers import RegisteredMcpServer as RegisteredMcpServer
    from .extensions.shortcuts import KeyBinding as KeyBinding, Shortcut as Shortcut
    from .extensions.renderers import ToolRenderContext as ToolRenderContext, ToolRenderers as ToolRenderers
    from .extensions.results import (
        ContextUsage as ContextUsage,
        ForkResult as ForkResult,
        NavigateResult as NavigateResult,
        SessionResult as SessionResult,
        SlashCommandInfo as SlashCommandInfo,
        SourceInfo as SourceInfo,
    )
    from .extensions.trust import TrustStore as TrustStore, is_project_trusted as is_project_trusted
    from .packages.resolve import (
        PackageResource as PackageResource,
        PackageSet as PackageSet,
        ResolvedPackage as ResolvedPackage,
        discover_package_resources as discover_package_resources,
        resolve_packages as resolve_packages,
    )
    from .packages.sources import PackageSource as PackageSource, parse_package_source as parse_package_source
    from .paths import agent_dir as agent_dir
    from .runtime.agent_session import (
        AgentSession as AgentSession,
        ForkPoint as ForkPoint,
        SessionBusyError as SessionBusyError,
        UnknownCommandError as UnknownCommandError,
    )
    from .runtime.compaction import CompactionError as CompactionError, CompactionResult as CompactionResult
    from .runtime.session_cwd import MissingSessionCwdError as MissingSessionCwdError
    from .runtime.events import (
        AgentSettledEvent as AgentSettledEvent,
        AutoRetryEndEvent as AutoRetryEndEvent,
        AutoRetryStartEvent as AutoRetryStartEvent,
        CompactionEndEvent as CompactionEndEvent,
        CompactionStartEvent as CompactionStartEvent,
        EntryAppendedEvent as EntryAppendedEvent,
        QueueUpdateEvent as QueueUpdateEvent,
        SessionInfoChangedEvent as SessionInfoChangedEvent,
        SummarizationRetryAttemptStartEvent as SummarizationRetryAttemptStartEvent,
        SummarizationRetryFinishedEvent as SummarizationRetryFinishedEvent,
        SummarizationRetryScheduledEvent as SummarizationRetryScheduledEvent,
        ThinkingLevelChangedEvent as ThinkingLevelChangedEvent,
    )
    from .runtime.resources import (
        ContextFile as ContextFile,
        ContextFiles as ContextFiles,
        FrontMatterError as FrontMatterError,
        PromptTemplate as PromptTemplate,
        ResourceDiagnostic as ResourceDiagnostic,
        ResourceError as ResourceError,
        Skill as Skill,
        SkillSet as SkillSet,
        TemplateSet as TemplateSet,
        expand_prompt_template as expand_prompt_template,
        expand_skill_command as expand_skill_command,
        load_context_files as load_context_files,
        load_prompt_templates as load_prompt_templates,
        load_skills as load_skills,
        parse_front_matter as parse_front_matter,
    )
    from .runtime.settings import Settings as Settings, SettingsError as SettingsError, SettingsIssue as SettingsIssue
    from .runtime.system_prompt import (
        SystemPrompt as SystemPrompt,
        SystemPromptOptions as SystemPromptOptions,
        build_system_prompt as build_system_prompt,
    )
    from .safejson import (
        JSONInputError as JSONInputError,
        JSON_MAX_DEPTH as JSON_MAX_DEPTH,
        json_safe as json_safe,
        parse_json as parse_json,
    )
    from .sdk import SetupError as SetupError, create_agent_session as create_agent_session
    from .session.branch_summary import BranchPreparation as BranchPreparation
    from .session.check import (
        SessionCheck as SessionCheck,
        SessionProblem as SessionProblem,
        check_session_file as check_session_file,
        repair_session_file as repair_session_file,
    )
    from .session.compaction import (
        CompactionPreparation as CompactionPreparation,
        FileOps as FileOps,
        serialize_conversation as serialize_conversation,
    )
    from .session.entries import (
        BranchSummaryEntry as BranchSummaryEntry,
        CompactionEntry as CompactionEntry,
        ContextEditEntry as ContextEditEntry,
        ContextEditReplacement as ContextEditReplacement,
        CustomEntry as CustomEntry,
        CustomMessageEntry as CustomMessageEntry,
        LabelEntry as LabelEntry,
        MessageEntry as MessageEntry,
        ModelChangeEntry as ModelChangeEntry,
        SessionEntry as SessionEntry,
        SessionHeader as SessionHeader,
        SessionInfoEntry as SessionInfoEntry,
        SystemSnapshot as SystemSnapshot,
        ThinkingLevelChangeEntry as ThinkingLevelChangeEntry,
        UnknownEntry as UnknownEntry,
        UsageEntry as UsageEntry,
    )
    from .session.errors import (
        EntryNotFoundError as EntryNotFoundError,
        InvalidSessionError as InvalidSessionError,
        SessionConflictError as SessionConflictError,
        SessionError as SessionError,
        SessionLockedError as SessionLockedError,
        SessionReadOnlyError as SessionReadOnlyError,
    )
    from .session.listing import SessionInfo as SessionInfo
    from .session.locations import default_session_dir as default_session_dir
    from .session.branch_export import export_branch_jsonl as export_branch_jsonl
    from .export_html import default_export_name as default_export_name, export_manager_html as export_manager_html
    from .session.manager import SessionManager as SessionManager
    from .session.messages import (
        AgentMessage as AgentMessage,
        BashExecutionMessage as BashExecutionMessage,
        BranchSummaryMessage as BranchSummaryMessage,
        CompactionSummaryMessage as CompactionSummaryMessage,
        CustomMessage as CustomMessage,
        UnknownMessage as UnknownMessage,
        convert_to_llm as convert_to_llm,
    )
    from .session.projection import ModelRef as ModelRef, SessionContext as SessionContext
    from .session.store import SessionDiagnostic as SessionDiagnostic
    from .session.tree import SessionTreeNode as SessionTreeNode
    from .toolkit.blocking import (
        SpecialFileError as SpecialFileError,
        check_regular_file as check_regular_file,
        run_blocking as run_blocking,
        special_file_kind as special_file_kind,
    )
    from .toolkit.diff import edit_diff as edit_diff
    from .toolkit.ignore import (
        Overrides as Overrides,
        compile_pattern as compile_pattern,
        glob_to_regex as glob_to_regex,
        walk as walk,
    )
    from .toolkit.images import (
        PreparedImage as PreparedImage,
        detect_image_mime as detect_image_mime,
        detect_image_mime_file as detect_image_mime_file,
        prepare_image as prepare_image,
    )
    from .toolkit.mutation import (
        atomic_write as atomic_write,
        file_mutation_lock as file_mutation_lock,
        mutation_key as mutation_key,
    )
    from .toolkit.process import (
        NONINTERACTIVE_ENV as NONINTERACTIVE_ENV,
        OutputCollector as OutputCollector,
        ProcessResult as ProcessResult,
        ProcessStartError as ProcessStartError,
        ShellConfig as ShellConfig,
        ShellResult as ShellResult,
        build_env as build_env,
        default_shell as default_shell,
        run_process as run_process,
        run_shell as run_shell,
        sanitize_output as sanitize_output,
    )
    from .toolkit.results import capped_listing as capped_listing, count_argument as count_argument
    from .toolkit.search import (
        GrepLine as GrepLine,
        GrepResult as GrepResult,
        SearchError as SearchError,
        find_ripgrep as find_ripgrep,
        grep as grep,
        list_files as list_files,
        path_key as path_key,
    )
    from .toolkit.shell_env import (
        DEFAULT_SECRET_PATTERNS as DEFAULT_SECRET_PATTERNS,
        ShellEnvPolicy as ShellEnvPolicy,
        scrubbed_env as scrubbed_env,
        set_shell_env_policy as set_shell_env_policy,
        shell_env_policy as shell_env_policy,
    )
    from .toolkit.textmatch import (
        Edit as Edit,
        EditError as EditError,
        EditOutcome as EditOutcome,
        Replacement as Replacement,
        TextFile as TextFile,
        apply_edits as apply_edits,
        closest_region as closest_region,
        find_edit as find_edit,
    )
    from .toolkit.truncate import (
        DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES,
        DEFAULT_MAX_LINES as DEFAULT_MAX_LINES,
        GREP_MAX_LINE_LENGTH as GREP_MAX_LINE_LENGTH,
        HeadTail as HeadTail,
        Truncation as Truncation,
        format_size as format_size,
        truncate_head as truncate_head,
        truncate_head_tail as truncate_head_tail,
        truncate_line as truncate_line,
        truncate_tail as truncate_tail,
    )

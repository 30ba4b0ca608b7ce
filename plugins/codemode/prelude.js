// Evaluated in a fresh V8 isolate before each codemode script. It keeps the host bridge in a
// closure, builds the script's globals on it and returns the handles the host drives the script by:
//   run(fn)               start the compiled script (an async function of tools and console)
//   settle(id, ok, payload, propsJson)  answer host call `id` (payload: JSON text or an error message)
//   stalled()             fail a script that waits while no host call is pending (no timers exist)
//   output()              the output items so far, as JSON (kept here, so a stopped script keeps them)
// bridge(kind, ...) posts to the host and returns at once: "call" (id, tool, argsJson),
// "global" (id, name, argsJson) and "done" (ok, valueOrErrorJson, writesJson).
(function (bridge, toolsJson, globalsJson, storeJson, limits) {
  "use strict";
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const then = Promise.prototype.then;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const ObjectCreate = Object.create;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;

  // Nothing may resume a script from outside but the host: no timers, no async compilation.
  for (const name of ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "__timer_manager",
                      "WebAssembly", "queueMicrotask"]) {
    // mini-racer declares its timers with `var`: they cannot be deleted, only emptied
    if (!Reflect.deleteProperty(globalThis, name)) globalThis[name] = undefined;
  }
  if (typeof Atomics === "object") delete Atomics.waitAsync;

  const pending = new Map();
  const items = [];
  let nextId = 1;
  let finished = false;
  let outputChars = 0;
  const EXIT = freeze({});

  function done(ok, payload, writes) {
    if (finished) return;
    finished = true;
    bridge("done", ok, payload, writes);
  }

  function errorText(error) {
    const head = error.message ? String(error.name) + ": " + String(error.message) : String(error.name);
    const stack = typeof error.stack === "string" ? error.stack.split("\n") : [];
    const frames = stack.filter((line) => /^\s+at /.test(line) && !line.includes("codemode-prelude.js"));
    return [head, ...frames].join("\n");
  }

  function format(value) {
    if (typeof value === "string") return value;
    if (value instanceof ErrorCtor) return errorText(value);
    if (typeof value === "number" || typeof value === "bigint") return String(value);
    try {
      const json = stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  }

  function describeError(error) {
    try {
      if (error instanceof ErrorCtor) {
        return stringify({ name: String(error.name), message: String(error.message), stack: errorText(error) });
      }
      return stringify({ message: String(format(error)) });
    } catch {
      return stringify({ message: "The script threw a value that cannot be described" });
    }
  }

  function caller(kind, name, spread) {
    return (...args) => new Promise((resolve, reject) => {
      let json;
      try {
        json = spread ? stringify(args) : args[0] === undefined ? undefined : stringify(args[0]);
      } catch (error) {
        reject(error);
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve, reject });
      bridge(kind, id, name, json);
    });
  }

  // tools.<identifier>(args); the raw name works too. A name that does not exist throws an error
  // naming close matches instead of a later "is not a function".
  const tools = ObjectCreate(null);
  const listed = [];
  for (const { name, id, description } of parse(toolsJson)) {
    const call = caller("call", name, false);
    if (!(id in tools)) {
      tools[id] = call;
      listed.push(freeze({ name: id, description }));
    }
    if (!(name in tools)) tools[name] = call;
  }
  freeze(tools);
  freeze(listed);

  const squash = (name) => name.toLowerCase().replace(/[^a-z0-9]/g, "");
  function guarded(target, label, names, hint) {
    return new Proxy(target, {
      get(object, key, receiver) {
        if (typeof key !== "string" || key in object || key === "then" || key === "toJSON" || key in Object.prototype) {
          return Reflect.get(object, key, receiver);
        }
        const wanted = squash(key);
        let close = names.filter((n) => squash(n) === wanted);
        if (close.length === 0 && wanted) {
          close = names.filter((n) => squash(n).includes(wanted) || wanted.includes(squash(n)));
        }
        let message = label + "." + key + " is not defined.";
        if (close.length > 0) message += " Close: " + close.slice(0, 5).map((n) => label + "." + n).join(", ") + ".";
        else if (names.length <= 20) message += " Defined: " + (names.join(", ") || "nothing") + ".";
        if (hint) message += " " + hint;
        throw new TypeErrorCtor(message);
      },
    });
  }
  const toolsProxy = guarded(tools, "tools", listed.map((t) => t.name),
    "ALL_TOOLS lists every tool and searchTools(query) ranks them; test with `\"name\" in tools`.");

  const groups = new Map();
  for (const { name, spread } of parse(globalsJson)) {
    const call = caller("global", name, spread);
    const dot = name.indexOf(".");
    if (dot < 0) {
      defineProperty(globalThis, name, { value: call, enumerable: true });
      continue;
    }
    const group = name.slice(0, dot);
    if (!groups.has(group)) groups.set(group, ObjectCreate(null));
    groups.get(group)[name.slice(dot + 1)] = call;
  }
  for (const [group, members] of groups) {
    defineProperty(globalThis, group, { value: guarded(freeze(members), group, Object.keys(members)), enumerable: true });
  }

  // store/load work on a snapshot (key -> JSON text); the writes go back to the host with a successful "done".
  const stored = new Map(Object.entries(parse(storeJson)));
  const writes = new Map();
  let storedChars = 0;
  for (const [key, json] of stored) storedChars += key.length + json.length;
  const STORE_HINT = "The store is for small state (IDs, cursors, summaries); keep large data in variables or " +
    "write it to a file with a tool, and show images with image().";

  function store(key, value) {
    if (typeof key !== "string") throw new TypeErrorCtor("store() key must be a string");
    const before = stored.has(key) ? key.length + stored.get(key).length : 0;
    if (value === undefined) {
      stored.delete(key);
      storedChars -= before;
      writes.set(key, undefined);
      return;
    }
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      throw new TypeErrorCtor("store(" + stringify(key) + "): the value is not JSON: " + format(error));
    }
    if (json === undefined) throw new TypeErrorCtor("store(" + stringify(key) + "): the value is not JSON");
    if (json.length > limits.storeValue) {
      throw new RangeErrorCtor("store(" + stringify(key) + "): " + json.length + " characters of JSON is over the " +
        "limit of " + limits.storeValue + ". " + STORE_HINT);
    }
    const after = storedChars - before + key.length + json.length;
    if (after > limits.storeTotal) {
      throw new RangeErrorCtor("store() is full: all values together may have " + limits.storeTotal +
        " characters of JSON; delete keys with store(key, undefined). " + STORE_HINT);
    }
    stored.set(key, json);
    storedChars = after;
    writes.set(key, json);
  }

  function load(key) {
    if (typeof key !== "string") throw new TypeErrorCtor("load() key must be a string");
    const json = stored.get(key);
    return json === undefined ? undefined : parse(json);
  }

  function writtenJson() {
    const list = [];
    for (const [key, json] of writes) list.push(json === undefined ? [key] : [key, json]);
    return stringify(list);
  }

  function emit(kind, data, mime) {
    if (finished) return;
    outputChars += data.length;
    if (outputChars > limits.outputChars || items.length >= limits.outputItems) {
      const error = new RangeErrorCtor("The script's output passed the limit of " + limits.outputChars +
        " characters or " + limits.outputItems + " text(), image() and console calls. Print a summary, " +
        "or write large data to a file with a tool.");
      done(false, describeError(error));
      throw error;
    }
    items.push(mime === undefined ? [kind, data] : [kind, data, mime]);
  }

  function text(value) {
    let rendered;
    if (value === null || value === undefined || (typeof value !== "object" && typeof value !== "function")) {
      rendered = String(value);
    } else {
      try {
        const json = stringify(value);
        rendered = json === undefined ? String(value) : json;
      } catch (error) {
        throw new TypeErrorCtor(error instanceof ErrorCtor ? error.message : String(error));
      }
    }
    emit("text", rendered);
  }

  const IMAGE_EXPECTS = 'image() takes a base64 data: URL, an object with image_url, or an image block ' +
    '{ type: "image", data, mimeType }';
  const SIGNATURES = [["image/png", /^iVBORw0KGg/], ["image/jpeg", /^\/9j\/(?!9)/], ["image/gif", /^R0lGOD[dl]h/],
                      ["image/webp", /^UklG.{8}RUJQ/]];

  function imageUrl(value) {
    if (typeof value === "string") return value;
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeErrorCtor(IMAGE_EXPECTS);
    if (value.image_url !== undefined) {
      if (typeof value.image_url !== "string") throw new TypeErrorCtor(IMAGE_EXPECTS);
      return value.image_url;
    }
    if (value.type !== "image") {
      throw new TypeErrorCtor(typeof value.type === "string" ? 'image() takes image blocks, not "' + value.type + '" blocks'
        : IMAGE_EXPECTS);
    }
    if (typeof value.data !== "string" || value.data === "") throw new TypeErrorCtor("image(): the block has no data");
    return value.data.toLowerCase().startsWith("data:") ? value.data : "data:;base64," + value.data;
  }

  function image(value) {
    const url = imageUrl(value);
    const colon = url.indexOf(":");
    const scheme = colon < 0 ? "" : url.slice(0, colon).toLowerCase();
    if (scheme === "http" || scheme === "https") {
      throw new TypeErrorCtor("image() cannot fetch remote URLs; pass the image as a base64 data: URL");
    }
    const comma = url.indexOf(",");
    const header = comma < 0 ? [] : url.slice(colon + 1, comma).split(";");
    if (scheme !== "data" || comma < 0 || !header.slice(1).some((p) => p.toLowerCase() === "base64")) {
      throw new TypeErrorCtor(IMAGE_EXPECTS);
    }
    const data = url.slice(comma + 1).replace(/\s+/g, "");
    if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
      throw new TypeErrorCtor("image(): the data is not valid base64 (cut off?)");
    }
    const found = SIGNATURES.find(([, pattern]) => pattern.test(data.slice(0, 16)));
    if (!found) throw new TypeErrorCtor("image(): the data is not a PNG, JPEG, GIF or WebP image");
    emit("image", data, found[0]);
  }

  function exit() {
    let json;
    try {
      json = writtenJson();
    } catch (error) {
      done(false, describeError(error));
      throw EXIT;
    }
    done(true, undefined, json);
    throw EXIT;
  }

  const consoleObject = ObjectCreate(null);
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    consoleObject[level] = (...args) => emit("console", args.map(format).join(" "));
  }
  freeze(consoleObject);

  for (const [name, value] of [["tools", toolsProxy], ["ALL_TOOLS", listed], ["console", consoleObject],
                               ["text", text], ["image", image], ["exit", exit], ["store", store], ["load", load]]) {
    defineProperty(globalThis, name, { value, enumerable: true, writable: false, configurable: false });
  }

  return freeze({
    run(fn) {
      let promise;
      try {
        promise = fn(toolsProxy, consoleObject);
      } catch (error) {
        if (error !== EXIT) done(false, describeError(error));
        return;
      }
      then.call(promise, (value) => {
        let json;
        try {
          json = value === undefined ? undefined : stringify(value);
          done(true, json, writtenJson());
        } catch (error) {
          done(false, describeError(error));
        }
      }, (error) => {
        if (error !== EXIT) done(false, describeError(error));
      });
    },
    settle(id, ok, payload, propsJson) {
      const entry = pending.get(id);
      if (!entry) return;
      pending.delete(id);
      if (!ok) {
        const error = new ErrorCtor(payload);
        if (propsJson) {
          const props = parse(propsJson);
          for (const key of Object.keys(props)) {
            if (key !== "name" && key !== "message" && key !== "stack") {
              defineProperty(error, key, { value: props[key], writable: true, enumerable: true, configurable: true });
            }
          }
        }
        entry.reject(error);
        return;
      }
      let value;
      try {
        value = payload === undefined || payload === null ? undefined : parse(payload);
      } catch (error) {
        entry.reject(error);
        return;
      }
      entry.resolve(value);
    },
    stalled() {
      if (finished || pending.size > 0) return false;
      done(false, stringify({ name: "Error", message: "The script waits for a promise that can never settle: no " +
        "tool call is pending, and there are no timers." }));
      return true;
    },
    output() {
      return stringify(items);
    },
    finished() {
      return finished;
    },
  });
})
//# sourceURL=codemode-prelude.js

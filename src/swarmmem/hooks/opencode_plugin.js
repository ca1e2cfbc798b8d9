// swarmmem memory hooks for opencode (template: `swarmmem init --agent opencode` fills in the
// command line below and copies this file to `.opencode/plugins/swarmmem.js`).
//
// What it relies on (read from the opencode sources and docs, 2.0.x / 1.18.x):
// * Folder: v1 globs `{plugin,plugins}/*.{ts,js}` one level deep in each config dir (`.mjs` is
//   not picked up); the docs name `.opencode/plugins/`. V2 scans both and asks for `plugins/`.
// * Module shape: ONE default-exported object `{ id, server, setup }` and no other export.
//   v1 >= 1.18.29 (`readV1Plugin`, packages/opencode/src/plugin/shared.ts) takes a default
//   object with `id` as the plugin and calls `server(input, options)`; such an object without
//   `server` is an error, and the older legacy path calls every export as a plugin function.
//   v2 (packages/core/src/plugin/module.ts) needs `default` to be an object with a string `id`
//   and a `setup(ctx)` function; extra keys are ignored, a bare function is rejected.
// * v1 hooks (@opencode-ai/plugin, packages/plugin/src/index.ts): "chat.message"(input
//   {sessionID}, output {message, parts}); "experimental.chat.system.transform"(input
//   {sessionID?, model}, output {system: string[]}) before every model call, the title
//   generator's included; "experimental.session.compacting"(input {sessionID}, output
//   {context: string[], prompt?}); event({event}) with session.created (properties.info),
//   session.compacted / session.idle (properties.sessionID), message.updated (properties.info
//   {id, sessionID, role}) and message.part.updated (properties.part {id, messageID,
//   sessionID, type, text}: a text part's whole text so far). Arrays must be mutated in place
//   (anomalyco/opencode#33025). client.session.messages({path: {id}}) -> {data: [{info, parts}]}.
// * v2 hooks (@opencode/plugin, packages/plugin/src/promise/session.ts): `await
//   ctx.session.hook(name, cb)` for "prompt" (event.prompt.text), "context" (event.system:
//   [{type: "text", text}], event.kind) and "compaction" (event.system, event.messages);
//   `ctx.event.subscribe({signal})` yields {type, data} (session.created, session.text.ended,
//   session.execution.succeeded, session.idle, session.compacted, session.deleted, ...).
//   setup may return a cleanup function. V2 runs plugins in a shared service: never use stdout.
// Sources: opencode.ai/docs/plugins, opencode.ai/v2/docs/build/plugins/migrate-v1 and
// github.com/anomalyco/opencode (the files named above).
//
// Every hook runs `<command> hook opencode <event>` with one JSON object on stdin and reads
// {"additionalContext": "..."} (or {}) from stdout. A failure, bad output, non-zero exit or a
// timeout (SWARMMEM_HOOK_TIMEOUT_MS, default 10 s) counts as "nothing to add"; nothing here
// throws into opencode. Plain JavaScript with node built-ins only (node >= 20 and Bun).
//
// Injection rule. opencode rebuilds the system prompt for every model call (each step of a
// turn), so the plugin keeps two texts per session and appends both, start text first, to the
// system prompt of EVERY primary model call:
// * the start context: the answer of `session-start` (source "startup"), run once when the
//   session is first seen. After a compaction (session.compacted, or v2's compaction hook) the
//   next model call runs `session-start` once more with source "compact", and its answer
//   replaces the kept one until the next compaction.
// * the prompt context: the answer of `user-prompt-submit`, run once per user message that has
//   typed text. It stays for the whole turn, and the next user message's answer replaces it
//   (an empty answer clears it; a message without typed text runs nothing and changes nothing).
// Each command runs exactly once per event; later calls reuse the kept answer (swarmmem
// dedupes memories across the prompts of a session itself). The title generator call, the
// compaction call and child (subagent) sessions get nothing. `pre-compact` adds its answer to
// the compaction request; `stop` runs once per user turn when the session goes idle, with the
// reply heard through the message events (asked of opencode's server only when none was:
// `opencode run` exits soon after the session goes idle, and a hook not yet started is lost).

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

// The installer replaces this whole line with a JSON array of strings.
const SWARMMEM_COMMAND = ["__SWARMMEM_COMMAND__"];

const PLUGIN_ID = "swarmmem";
const HOST = "opencode";
const UNRENDERED = "__SWARMMEM_" + "COMMAND__";
const DEFAULT_TIMEOUT_MS = 10_000;
const MESSAGES_TIMEOUT_MS = 3_000;
const DISPOSE_TIMEOUT_MS = 1_000;
const MAX_STDOUT_BYTES = 1 << 20;
const MAX_TEXT_CHARS = 100_000;
const MAX_SESSIONS = 500;
const TITLE_PROMPT = "you are a title generator";

const noop = () => {};

function hookTimeoutMs() {
  const value = Number.parseInt(process.env.SWARMMEM_HOOK_TIMEOUT_MS ?? "", 10);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_TIMEOUT_MS;
}

function commandLine() {
  const command = SWARMMEM_COMMAND;
  if (!Array.isArray(command) || command.length === 0) return null;
  if (!command.every((part) => typeof part === "string")) return null;
  if (command[0] === "" || command[0] === UNRENDERED) return null;
  return command;
}

function isText(value) {
  return typeof value === "string" && value.trim() !== "";
}

function clip(text) {
  return text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
}

function firstDirectory(...candidates) {
  const found = candidates.find(isText);
  return found ?? process.cwd();
}

/** Resolve `promise` to its value, or to `fallback` on rejection or after `ms`. */
function settle(promise, ms, fallback) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    timer.unref?.();
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

function parseAnswer(raw) {
  try {
    const value = JSON.parse(raw);
    if (value && typeof value === "object" && !Array.isArray(value)) {
      if (isText(value.additionalContext)) return { additionalContext: value.additionalContext };
    }
  } catch {
    // not JSON: nothing to add
  }
  return {};
}

/** Run `swarmmem hook opencode <event>`; always resolves, to {} or {additionalContext}. */
function runHook(event, payload) {
  return new Promise((resolve) => {
    const command = commandLine();
    if (!command) {
      resolve({});
      return;
    }
    let finished = false;
    let timer;
    let child;
    const finish = (answer) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      resolve(answer);
    };
    try {
      const cwd = isText(payload.cwd) && existsSync(payload.cwd) ? payload.cwd : undefined;
      child = spawn(command[0], [...command.slice(1), "hook", HOST, event], {
        cwd,
        stdio: ["pipe", "pipe", "ignore"],
        windowsHide: true,
      });
    } catch {
      finish({});
      return;
    }
    timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      finish({});
    }, hookTimeoutMs());
    timer.unref?.();
    const chunks = [];
    let size = 0;
    child.on("error", () => finish({}));
    child.stdout.on("error", noop);
    child.stdin.on("error", noop);
    child.stdout.on("data", (chunk) => {
      size += chunk.length;
      if (size <= MAX_STDOUT_BYTES) chunks.push(chunk);
    });
    child.on("close", (code) => {
      if (code !== 0 || size > MAX_STDOUT_BYTES) {
        finish({});
        return;
      }
      finish(parseAnswer(Buffer.concat(chunks).toString("utf8")));
    });
    try {
      child.stdin.end(JSON.stringify(payload));
    } catch {
      // the child died early; its close event settles the promise
    }
  });
}

/** The user-typed text of message parts (no synthetic or ignored parts, no files). */
function partsText(parts) {
  if (!Array.isArray(parts)) return "";
  return parts
    .filter((part) => part && part.type === "text" && typeof part.text === "string")
    .filter((part) => !part.synthetic && !part.ignored)
    .map((part) => part.text)
    .join("\n")
    .trim();
}

/** The text of a model message ({role, content}) or a stored message ({info, parts}). */
function messageText(message) {
  if (message?.info) return partsText(message.parts);
  const content = message?.content;
  if (typeof content === "string") return content.trim();
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("\n")
    .trim();
}

/** The text of the last assistant message that has text, or "". */
function lastAssistantText(messages) {
  if (!Array.isArray(messages)) return "";
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if ((message?.info?.role ?? message?.role) !== "assistant") continue;
    const text = messageText(message);
    if (text) return text;
  }
  return "";
}

/** Session bookkeeping shared by the v1 and v2 entry points. */
function createCore(defaultDirectory) {
  const sessions = new Map();

  function session(id) {
    let state = sessions.get(id);
    if (!state) {
      state = {
        child: false,
        directory: undefined,
        startSource: "startup",
        // kept contexts: promises of the hook's answer text ("" for nothing), reused by every call
        startContext: null,
        promptContext: null,
        compacting: false,
        turnOpen: false,
        lastAssistant: "",
        lastAssistantID: undefined,
        // v1: the assistant messages of this turn, and the text of each part of the newest
        // one as streamed so far; `heard` says the turn's reply came through events, so the
        // stop hook starts at once (opencode run exits soon after the session goes idle)
        assistantIDs: new Set(),
        parts: new Map(),
        heard: false,
      };
      sessions.set(id, state);
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value);
    }
    return state;
  }

  function payload(id, state, event, extra) {
    return {
      hook_event_name: event,
      session_id: id,
      cwd: state.directory ?? defaultDirectory,
      ...extra,
    };
  }

  function contextOf(job) {
    return job.then((answer) => answer.additionalContext ?? "");
  }

  /** Run `session-start` if one is due (first sight, after a compaction); its answer is kept. */
  function kickStart(id, state) {
    if (state.child || !state.startSource) return;
    const source = state.startSource;
    state.startSource = null;
    state.startContext = contextOf(runHook("session-start", payload(id, state, "session-start", { source })));
  }

  function lastAssistantExtra(text) {
    return isText(text) ? { last_assistant_message: clip(text) } : {};
  }

  return {
    created(id, info) {
      if (!isText(id)) return;
      const state = session(id);
      if (isText(info?.parentID)) state.child = true;
      if (isText(info?.directory)) state.directory = info.directory;
      kickStart(id, state);
    },

    prompt(id, text) {
      if (!isText(id)) return;
      const state = session(id);
      if (state.child) return;
      state.turnOpen = true;
      state.compacting = false;
      state.heard = false;
      state.assistantIDs.clear();
      kickStart(id, state);
      if (!isText(text)) return;
      const extra = { prompt: clip(text) };
      state.promptContext = contextOf(
        runHook("user-prompt-submit", payload(id, state, "user-prompt-submit", extra)),
      );
    },

    /** The kept contexts for a primary model call of this session: [start, prompt], non-empty. */
    async contextFor(id) {
      if (!isText(id)) return [];
      const state = session(id);
      if (state.child || state.compacting) return [];
      kickStart(id, state);
      const texts = await Promise.all([state.startContext, state.promptContext]);
      return texts.filter(isText);
    },

    compacted(id) {
      if (!isText(id)) return;
      const state = session(id);
      state.compacting = false;
      if (!state.child) state.startSource = "compact";
    },

    async preCompact(id, lastAssistant) {
      if (!isText(id)) return "";
      const state = session(id);
      if (state.child) return "";
      // v1 runs the summarizer's model call through the system transform: keep it clean until
      // session.compacted (or, if the compaction fails, the next prompt or idle)
      state.compacting = true;
      const last = isText(lastAssistant) ? lastAssistant : state.lastAssistant;
      const answer = await runHook("pre-compact", payload(id, state, "pre-compact", lastAssistantExtra(last)));
      return answer.additionalContext ?? "";
    },

    /** v1 `message.updated`: a message of the session is the assistant's. */
    assistantMessage(id, messageID) {
      if (!isText(id) || !isText(messageID)) return;
      const state = sessions.get(id);
      if (state && state.assistantIDs.size < MAX_SESSIONS) state.assistantIDs.add(messageID);
    },

    /** v1 `message.part.updated`: one text part of an assistant message, as streamed so far. */
    assistantPart(id, messageID, partID, text) {
      if (!isText(id) || !isText(messageID) || typeof text !== "string") return;
      const state = sessions.get(id);
      if (!state || !state.assistantIDs.has(messageID)) return;
      if (state.lastAssistantID !== messageID) {
        state.parts = new Map();
        state.lastAssistantID = messageID;
      }
      state.parts.set(isText(partID) ? partID : `part${state.parts.size}`, text);
      state.lastAssistant = clip([...state.parts.values()].filter(isText).join("\n"));
      state.heard = isText(state.lastAssistant);
    },

    rememberAssistant(id, text, messageID) {
      if (!isText(id) || !isText(text)) return;
      const state = session(id);
      state.heard = true;
      if (isText(messageID) && messageID === state.lastAssistantID) {
        state.lastAssistant = clip(`${state.lastAssistant}\n${text}`);
      } else {
        state.lastAssistant = clip(text);
        state.lastAssistantID = messageID;
      }
    },

    /** Run `stop` once per user turn; `fetchLast` may return the last assistant text. */
    async stop(id, fetchLast) {
      if (!isText(id)) return;
      const state = sessions.get(id);
      if (!state) return;
      state.compacting = false;
      if (state.child || !state.turnOpen) return;
      state.turnOpen = false;
      let last = "";
      try {
        // the reply heard through events needs no round trip to opencode's server
        last = state.heard ? "" : (await fetchLast?.()) || "";
      } catch {
        last = "";
      }
      if (isText(last)) state.lastAssistant = clip(last);
      await runHook("stop", payload(id, state, "stop", lastAssistantExtra(state.lastAssistant)));
    },

    forget(id) {
      sessions.delete(id);
    },
  };
}

// --- opencode v1: server(input) returns the hooks ------------------------------------------

async function lastAssistantFromClient(client, id) {
  try {
    if (!isText(id) || typeof client?.session?.messages !== "function") return "";
    const result = await settle(client.session.messages({ path: { id } }), MESSAGES_TIMEOUT_MS, null);
    const list = Array.isArray(result) ? result : result?.data;
    return lastAssistantText(list);
  } catch {
    return "";
  }
}

function isTitleRequest(system) {
  return system.some((text) => typeof text === "string" && text.toLowerCase().includes(TITLE_PROMPT));
}

function onV1Event(core, event, fetchLast) {
  const props = event?.properties ?? {};
  switch (event?.type) {
    case "session.created":
      core.created(props.info?.id ?? props.sessionID, {
        parentID: props.info?.parentID,
        directory: props.info?.directory,
      });
      break;
    case "session.compacted":
      core.compacted(props.sessionID);
      break;
    case "message.updated":
      if (props.info?.role === "assistant") core.assistantMessage(props.info.sessionID, props.info.id);
      break;
    case "message.part.updated":
      if (props.part?.type === "text" && !props.part.synthetic) {
        const part = props.part;
        core.assistantPart(part.sessionID, part.messageID, part.id, part.text);
      }
      break;
    case "session.idle":
      core.stop(props.sessionID, fetchLast(props.sessionID)).catch(noop);
      break;
    case "session.status":
      if (props.status?.type === "idle") core.stop(props.sessionID, fetchLast(props.sessionID)).catch(noop);
      break;
    case "session.deleted":
      core.forget(props.info?.id ?? props.sessionID);
      break;
    default:
      break;
  }
}

async function server(input) {
  const core = createCore(firstDirectory(input?.directory, input?.worktree));
  const client = input?.client;
  const fetchLast = (id) => () => lastAssistantFromClient(client, id);
  return {
    event: async (hookInput) => {
      try {
        onV1Event(core, hookInput?.event, fetchLast);
      } catch {
        // never throw into opencode
      }
    },
    "chat.message": async (hookInput, output) => {
      try {
        core.prompt(hookInput?.sessionID ?? output?.message?.sessionID, partsText(output?.parts));
      } catch {
        // never throw into opencode
      }
    },
    "experimental.chat.system.transform": async (hookInput, output) => {
      try {
        const system = output?.system;
        if (!Array.isArray(system) || isTitleRequest(system)) return;
        for (const text of await core.contextFor(hookInput?.sessionID)) system.push(text);
      } catch {
        // never throw into opencode
      }
    },
    "experimental.session.compacting": async (hookInput, output) => {
      try {
        const id = hookInput?.sessionID;
        const text = await core.preCompact(id, await fetchLast(id)());
        if (isText(text) && Array.isArray(output?.context)) output.context.push(text);
      } catch {
        // never throw into opencode
      }
    },
  };
}

// --- opencode v2: setup(ctx) registers hooks on the context --------------------------------

async function setup(ctx) {
  if (!ctx || typeof ctx !== "object") return undefined;
  const core = createCore(firstDirectory(ctx.location?.directory, ctx.location?.project?.directory));
  const registrations = [];

  const register = async (name, callback) => {
    try {
      if (typeof ctx.session?.hook !== "function") return false;
      registrations.push(await ctx.session.hook(name, callback));
      return true;
    } catch {
      return false;
    }
  };

  await register("prompt", (event) => {
    try {
      core.prompt(event?.sessionID, event?.prompt?.text);
    } catch {
      // never throw into opencode
    }
  });
  await register("context", async (event) => {
    try {
      if (!Array.isArray(event?.system)) return;
      if (event.kind !== undefined && event.kind !== "primary") return;
      for (const text of await core.contextFor(event.sessionID)) event.system.push({ type: "text", text });
    } catch {
      // never throw into opencode
    }
  });
  const compactionHooked = await register("compaction", async (event) => {
    try {
      const id = event?.sessionID;
      const text = await core.preCompact(id, lastAssistantText(event?.messages));
      if (isText(text) && Array.isArray(event?.system)) event.system.push({ type: "text", text });
      core.compacted(id);
    } catch {
      // never throw into opencode
    }
  });

  const onEvent = (event) => {
    const data = event?.data ?? event?.properties ?? {};
    const id = data.sessionID ?? data.info?.id;
    switch (event?.type) {
      case "session.created":
        core.created(id, {
          parentID: data.parentID ?? data.info?.parentID,
          directory: data.location?.directory ?? data.directory,
        });
        break;
      case "session.text.ended":
        core.rememberAssistant(id, data.text, data.assistantMessageID ?? data.messageID);
        break;
      case "session.execution.succeeded":
      case "session.idle":
        core.stop(id).catch(noop);
        break;
      case "session.status":
        if (data.status?.type === "idle") core.stop(id).catch(noop);
        break;
      case "session.compacted":
      case "session.compaction.ended":
        // the compaction hook already asked for a fresh session-start
        if (!compactionHooked) core.compacted(id);
        break;
      case "session.deleted":
        core.forget(id);
        break;
      default:
        break;
    }
  };

  const controller = new AbortController();
  let iterator;
  if (typeof ctx.event?.subscribe === "function") {
    // not awaited: setup has to return for opencode to finish loading plugins
    (async () => {
      try {
        let stream = ctx.event.subscribe({ signal: controller.signal });
        if (typeof stream?.then === "function") stream = await stream;
        iterator = stream?.[Symbol.asyncIterator]?.();
        while (iterator && !controller.signal.aborted) {
          const step = await iterator.next();
          if (step.done) break;
          try {
            onEvent(step.value);
          } catch {
            // one bad event must not end the loop
          }
        }
      } catch {
        // the stream ended or failed: events are optional
      }
    })();
  }

  return async () => {
    controller.abort();
    try {
      Promise.resolve(iterator?.return?.()).catch(noop);
    } catch {
      // already closed
    }
    const disposals = registrations.map((registration) => {
      try {
        return registration?.dispose?.();
      } catch {
        return undefined;
      }
    });
    await settle(Promise.allSettled(disposals), DISPOSE_TIMEOUT_MS, undefined);
  };
}

export default { id: PLUGIN_ID, server, setup };

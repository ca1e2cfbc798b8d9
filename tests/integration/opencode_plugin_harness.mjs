// Drives the rendered swarmmem opencode plugin through a fake opencode v1 host (`server()`
// and its hooks) and a fake v2 host (`setup(ctx)`), then prints one JSON object on stdout
// with what the plugin put into the hooks' outputs. test_opencode_plugin.py runs it.
//
// usage: node opencode_plugin_harness.mjs '{"plugin": ..., "log": ..., "project": ..., "stopWaitMs": ...}'
// `log` is the JSON-lines file the fake swarmmem command appends to; the harness reads it to
// wait until the fire-and-forget `stop` call has happened and to snapshot which commands had
// run after each model call (`loggedAt`), so the test can see that later calls reuse answers.
//
// Each session plays: a first prompt, two model calls, a second prompt (queued in the same
// busy stretch), one call, a compaction, two calls, a third prompt whose hook answers nothing,
// one call, then idle. `systems` maps each call's name to the system prompt it ended with.

import { existsSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const config = JSON.parse(process.argv[2]);
const PROMPT = "how do we run tests";
const PROMPT2 = "and the linter?";
// the fake swarmmem command answers {} to a prompt that starts with "nothing"
const PROMPT3 = "nothing to remember here";
const SUMMARIZER = "You are a helpful AI assistant tasked with summarizing conversations.";
const BASE = "You are opencode, an interactive CLI agent.";
const V1 = "ses_v1";
const V1_CHILD = "ses_v1_child";
const V1_STREAM = "ses_v1_stream";
const V2 = "ses_v2";
const V2_CHILD = "ses_v2_child";

const result = {
  base: BASE,
  prompts: [PROMPT, PROMPT2, PROMPT3],
  summarizer: SUMMARIZER,
  errors: [],
  v1: {},
  v2: {},
};

const watchdog = setTimeout(() => {
  result.errors.push("watchdog: the harness did not finish in 90 s");
  process.stdout.write(JSON.stringify(result));
  process.exit(3);
}, 90_000);
watchdog.unref();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function step(name, action) {
  try {
    return await action();
  } catch (error) {
    result.errors.push(`${name}: ${error?.stack ?? error}`);
    return undefined;
  }
}

function loggedEvents(sessionID) {
  if (!existsSync(config.log)) return [];
  const events = [];
  for (const line of readFileSync(config.log, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      const record = JSON.parse(line);
      if (JSON.parse(record.stdin).session_id === sessionID) events.push(record.argv.at(-1));
    } catch {
      // a half-written line: read it next time
    }
  }
  return events;
}

async function waitForLogged(sessionID, event) {
  const deadline = Date.now() + config.stopWaitMs;
  while (Date.now() < deadline) {
    if (loggedEvents(sessionID).includes(event)) return true;
    await sleep(25);
  }
  return false;
}

/** A fake `ctx.event.subscribe()` stream the harness pushes events into. */
function eventChannel() {
  const queue = [];
  const waiters = [];
  const state = { closed: false, subscribeArgs: [] };
  const close = () => {
    state.closed = true;
    while (waiters.length) waiters.shift()({ value: undefined, done: true });
  };
  return {
    state,
    push(event) {
      if (waiters.length) waiters.shift()({ value: event, done: false });
      else queue.push(event);
    },
    subscribe(...args) {
      state.subscribeArgs.push(args.map((arg) => Object.keys(arg ?? {}).sort()));
      args[0]?.signal?.addEventListener?.("abort", close);
      return {
        [Symbol.asyncIterator]() {
          return {
            next() {
              if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
              if (state.closed) return Promise.resolve({ value: undefined, done: true });
              return new Promise((resolve) => waiters.push(resolve));
            },
            return() {
              close();
              return Promise.resolve({ value: undefined, done: true });
            },
          };
        },
      };
    },
  };
}

const mod = await import(pathToFileURL(config.plugin).href);
const plugin = mod.default;
result.exports = Object.keys(mod).sort();
result.shape = {
  type: typeof plugin,
  id: plugin?.id,
  server: typeof plugin?.server,
  setup: typeof plugin?.setup,
};

// --- v1 -----------------------------------------------------------------------------------

{
  const v1 = result.v1;
  v1.messageCalls = [];
  const client = {
    session: {
      messages: async (args) => {
        v1.messageCalls.push(args);
        return {
          data: [
            { info: { id: "msg_u", role: "user" }, parts: [{ type: "text", text: PROMPT }] },
            {
              info: { id: "msg_a", role: "assistant" },
              parts: [
                { type: "text", text: "Run pytest -q." },
                { type: "tool", tool: "bash" },
              ],
            },
            { info: { id: "msg_b", role: "assistant" }, parts: [{ type: "step-finish" }] },
          ],
        };
      },
    },
  };
  const input = {
    client,
    project: { id: "proj", worktree: config.project },
    directory: config.project,
    worktree: config.project,
    $: undefined,
  };
  const hooks = (await step("v1 server()", () => plugin.server(input, undefined))) ?? {};
  v1.hookNames = Object.keys(hooks).sort();
  v1.systems = {};
  v1.loggedAt = {};
  const event = (type, properties) => step(`v1 event ${type}`, () => hooks.event({ event: { type, properties } }));
  // `sessionID: null` leaves the id out of the input (it is optional there)
  const transform = async (name, { sessionID = V1, system = [BASE] } = {}) => {
    const output = { system: [...system] };
    const hookInput = sessionID === null ? { model: {} } : { sessionID, model: {} };
    await step(`v1 ${name}`, () => hooks["experimental.chat.system.transform"](hookInput, output));
    v1.systems[name] = output.system;
    v1.loggedAt[name] = loggedEvents(V1);
  };
  const chat = (sessionID, parts) =>
    step(`v1 chat.message ${sessionID}`, () =>
      hooks["chat.message"](
        { sessionID, agent: "build", messageID: `msg_${sessionID}` },
        { message: { id: `msg_${sessionID}`, sessionID, role: "user" }, parts },
      ),
    );

  await event("session.created", { info: { id: V1, directory: config.project, title: "New session" } });
  await event("session.created", { info: { id: V1_CHILD, parentID: V1, directory: config.project } });
  await chat(V1, [
    { type: "text", text: PROMPT },
    { type: "text", text: "<contents of an attached file>", synthetic: true },
    { type: "file", url: "file:///tmp/x.txt", mime: "text/plain" },
  ]);
  await chat(V1_CHILD, [{ type: "text", text: "subagent task prompt" }]);
  await transform("title", {
    system: ["You are a title generator. You output ONLY a thread title. Nothing else."],
  });
  await transform("first");
  await transform("second");
  await transform("child", { sessionID: V1_CHILD });
  await transform("noSession", { sessionID: null });
  await chat(V1, [{ type: "text", text: PROMPT2 }]);
  await transform("afterPrompt2");
  const compacting = { context: [], prompt: undefined };
  await step("v1 compacting", () => hooks["experimental.session.compacting"]({ sessionID: V1 }, compacting));
  v1.compactContext = compacting.context;
  await transform("compactionCall", { system: [SUMMARIZER] });
  await event("session.compacted", { sessionID: V1 });
  await transform("afterCompact");
  await transform("afterCompact2");
  await chat(V1, [{ type: "text", text: PROMPT3 }]);
  await transform("afterPrompt3");
  await event("session.idle", { sessionID: V1 });
  await event("session.status", { sessionID: V1, status: { type: "idle" } });
  await event("session.idle", { sessionID: V1_CHILD });
  v1.stopLogged = await waitForLogged(V1, "stop");
  // a reply heard through the message events: stop runs without asking the server for it
  // (opencode run exits soon after the session goes idle)
  await event("session.created", { info: { id: V1_STREAM, directory: config.project } });
  await chat(V1_STREAM, [{ type: "text", text: PROMPT }]);
  const part = (id, messageID, text) => ({ id, messageID, sessionID: V1_STREAM, type: "text", text });
  await event("message.updated", { info: { id: "msg_s", sessionID: V1_STREAM, role: "assistant" } });
  await event("message.part.updated", { part: part("prt_1", "msg_s", "Lint") });
  await event("message.part.updated", { part: part("prt_1", "msg_s", "Lint with ruff.") });
  await event("message.part.updated", { part: part("prt_2", "msg_s", "Then test.") });
  await event("message.part.updated", { part: part("prt_3", "msg_user", "not the assistant's") });
  await event("message.part.updated", { part: { ...part("prt_4", "msg_s", "hidden"), synthetic: true } });
  await event("session.idle", { sessionID: V1_STREAM });
  v1.streamStopLogged = await waitForLogged(V1_STREAM, "stop");
  // odd inputs must not throw either
  await step("v1 odd inputs", async () => {
    await hooks.event(undefined);
    await hooks.event({ event: null });
    await hooks["chat.message"](undefined, undefined);
    await hooks["experimental.chat.system.transform"]({ sessionID: V1 }, undefined);
    await hooks["experimental.session.compacting"](undefined, undefined);
  });
}

// --- v2 -----------------------------------------------------------------------------------

{
  const v2 = result.v2;
  const channel = eventChannel();
  const hooks = {};
  v2.disposed = [];
  const ctx = {
    app: { name: "cli", version: "2.0.30", channel: "latest" },
    location: { directory: config.project, project: { id: "proj", directory: config.project } },
    options: {},
    session: {
      hook: async (name, callback) => {
        (hooks[name] ??= []).push(callback);
        return { dispose: async () => v2.disposed.push(name) };
      },
    },
    event: { subscribe: (...args) => channel.subscribe(...args) },
  };
  const cleanup = await step("v2 setup()", () => plugin.setup(ctx));
  v2.hookNames = Object.keys(hooks).sort();
  v2.cleanupType = typeof cleanup;
  v2.systems = {};
  v2.loggedAt = {};
  const fire = (name, event) =>
    step(`v2 ${name} hook`, async () => {
      for (const callback of hooks[name] ?? []) await callback(event);
    });
  const request = (kind, system, messages = [], sessionID = V2) => ({
    sessionID,
    agent: "build",
    model: { providerID: "fake", modelID: "fake-1" },
    kind,
    system: system.map((text) => ({ type: "text", text })),
    messages,
    options: {},
    tools: {},
  });
  const context = async (name, kind = "primary", sessionID = V2) => {
    const event = request(kind, [BASE], [], sessionID);
    await fire("context", event);
    v2.systems[name] = event.system;
    v2.loggedAt[name] = loggedEvents(V2);
  };
  const prompt = (text, sessionID = V2) =>
    fire("prompt", {
      sessionID,
      messageID: `msg_${sessionID}_${text.length}`,
      prompt: { text, files: [], agents: [] },
      delivery: "steer",
    });

  channel.push({ type: "session.created", data: { sessionID: V2, location: { directory: config.project } } });
  channel.push({
    type: "session.created",
    data: { sessionID: V2_CHILD, parentID: V2, location: { directory: config.project } },
  });
  await sleep(30);
  await prompt(PROMPT);
  await prompt("subagent task prompt", V2_CHILD);
  await context("title", "title");
  await context("first");
  await context("second");
  await context("child", "primary", V2_CHILD);
  await prompt(PROMPT2);
  await context("afterPrompt2");
  const compaction = request(
    "compaction",
    ["Summarize the conversation."],
    [
      { role: "user", content: PROMPT },
      { role: "assistant", content: [{ type: "text", text: "Use pytest." }] },
      { role: "assistant", content: [{ type: "tool-call", toolName: "bash" }] },
    ],
  );
  await fire("compaction", compaction);
  v2.compactionSystem = compaction.system;
  await context("compactionCall", "compaction");
  channel.push({ type: "session.compacted", data: { sessionID: V2 } });
  channel.push({ type: "session.compaction.ended", data: { sessionID: V2, text: "summary" } });
  await sleep(30);
  await context("afterCompact");
  await context("afterCompact2");
  await prompt(PROMPT3);
  await context("afterPrompt3");
  channel.push({ type: "session.text.ended", data: { sessionID: V2, assistantMessageID: "m1", text: "All" } });
  channel.push({ type: "session.text.ended", data: { sessionID: V2, assistantMessageID: "m1", text: "tests pass." } });
  channel.push({ type: "session.execution.succeeded", data: { sessionID: V2 } });
  channel.push({ type: "session.idle", data: { sessionID: V2 } });
  channel.push({ type: "not.a.real.event", data: null });
  v2.stopLogged = await waitForLogged(V2, "stop");
  await step("v2 odd inputs", async () => {
    await fire("prompt", undefined);
    await fire("context", { sessionID: V2, system: undefined });
    await fire("compaction", undefined);
  });
  if (typeof cleanup === "function") await step("v2 cleanup", () => cleanup());
  v2.subscribeArgs = channel.state.subscribeArgs;
  v2.streamClosed = channel.state.closed;
  v2.setupWithoutContext = typeof (await step("v2 setup(undefined)", () => plugin.setup(undefined)));
}

// give a stray second `stop` (there must be none) time to reach the log
await sleep(200);
result.logged = {
  v1: loggedEvents(V1),
  v1Child: loggedEvents(V1_CHILD),
  v2: loggedEvents(V2),
  v2Child: loggedEvents(V2_CHILD),
};
process.stdout.write(JSON.stringify(result));

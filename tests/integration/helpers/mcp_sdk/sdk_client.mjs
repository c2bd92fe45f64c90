// SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
// sdk_client.mjs AGENTBOX: drives `AGENTBOX mcp -p shell` (in the current directory) with the
// official MCP TypeScript SDK, Client over StdioClientTransport, as a harness would: every
// schema compiles under strict Ajv (draft-07 and 2020-12); a call's structured content passes
// the SDK's own check against the output schema; arguments the schema refuses are a tool error;
// a run longer than the request's timeout completes when progress resets it, and without
// progress the SDK's timeout fires and its cancel kills the command; an AbortController's
// cancel kills a running command; the SDK reports no stray message (a response to a cancelled
// request, progress for a token it dropped after the response; see sdkRace). $MCP_MARKER is a word each long command carries, so
// pgrep can tell whether it still runs; $MCP_TIME_SCALE stretches the waits for a slow server
// (memcheck). Prints "ok: ..." lines, or "FAIL: why" and exits 1.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";

const agentbox = process.argv[2];
const marker = process.env.MCP_MARKER;
// how much slower than usual the server is (10 under memcheck): the waits grow by it
const scale = Number(process.env.MCP_TIME_SCALE || 1);

class Fail extends Error {}

function check(cond, why) {
	if (!cond) throw new Fail(why);
}

function ok(what) {
	console.log("ok: " + what);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function lines(path) {
	try {
		return readFileSync(path, "utf8").split("\n").length - 1;
	} catch {
		return 0;
	}
}

function running() {
	return spawnSync("pgrep", ["-f", marker]).status === 0;
}

// A file of this run's own: a second run in the same directory starts afresh.
const own = (name) => `${name}-${process.pid}`;

// A loop writing a line to path every 50 ms, which pgrep finds by the marker.
function ticker(path) {
	return ["sh", "-c", `while :; do echo x >> ${path}; sleep 0.05; done; true ${marker}`];
}

async function until(cond, ms, why) {
	const end = Date.now() + ms;
	while (!cond()) {
		check(Date.now() < end, why);
		await sleep(50);
	}
}

// The command writing path is gone: path stopped growing and nothing carries the marker.
async function stopped(path, what) {
	let n = -1;
	await until(
		() => {
			const m = lines(path);
			const still = m !== n || running();
			n = m;
			return !still;
		},
		10000 * scale,
		`${what}: the command still runs or writes ${10 * scale} s after the cancel`,
	);
}

async function main(client, errors) {
	const tickTimeout = own("ticks-timeout");
	const tickAbort = own("ticks-abort");
	const { tools } = await client.listTools();
	const run = tools.find((t) => t.name === "run");
	check(run && run.outputSchema && run.inputSchema.additionalProperties === false, "run's schemas");
	check(run.inputSchema.properties.command.type === "array", "command is an array");
	for (const t of tools)
		for (const schema of [t.inputSchema, t.outputSchema])
			for (const A of [Ajv, Ajv2020]) new A({ strict: true, allErrors: true }).compile(schema);
	ok(`tools/list: ${tools.length} tools, every schema compiles under strict Ajv (draft-07, 2020-12)`);

	const r = await client.callTool({ name: "run", arguments: { command: ["echo", "hello"] } });
	check(!r.isError && r.structuredContent.stdout === "hello\n", `a call: ${JSON.stringify(r)}`);
	ok("a call: its structured content passed the SDK's output schema check");

	const bad = await client.callTool({ name: "run", arguments: { command: ["true"], shell: true } });
	check(
		bad.isError === true && bad.structuredContent.error.startsWith("invalid arguments"),
		`an extra property: ${JSON.stringify(bad)}`,
	);
	ok("an argument the schema refuses: a tool error (isError), valid by the output schema");

	const notes = [];
	const long = await client.callTool(
		{ name: "run", arguments: { command: ["sh", "-c", `for i in 1 2 3 4; do echo tick$i; sleep ${scale}; done`] } },
		undefined,
		{ timeout: 2000 * scale, resetTimeoutOnProgress: true, onprogress: (p) => notes.push(p) },
	);
	const said = notes.map((p) => p.message || "").join("");
	check(long.structuredContent.stdout === "tick1\ntick2\ntick3\ntick4\n", `the long run: ${JSON.stringify(long)}`);
	check(notes.length >= 3 && said.includes("tick1\n") && said.includes("tick3\n"), `progress: ${JSON.stringify(notes)}`);
	ok(`a 4 s run under a 2 s request timeout completes: ${notes.length} progress notifications reset it`);

	let timedOut = null;
	try {
		await client.callTool({ name: "run", arguments: { command: ticker(tickTimeout) } }, undefined, {
			timeout: 1500 * scale,
		});
	} catch (e) {
		timedOut = e;
	}
	check(timedOut && timedOut.code === ErrorCode.RequestTimeout, `no timeout without progress: ${timedOut}`);
	check(lines(tickTimeout) > 0, "control: the command that timed out ran");
	await stopped(tickTimeout, "the SDK's timeout");
	ok("without progress the SDK's request timeout fires, and its cancel kills the command");

	const ac = new AbortController();
	const call = client.callTool({ name: "run", arguments: { command: ticker(tickAbort) } }, undefined, {
		signal: ac.signal,
		onprogress: () => {},
		timeout: 60000,
	});
	await until(() => lines(tickAbort) >= 5, 30000 * scale, "control: the command to abort never wrote");
	check(running(), "control: the command to abort runs");
	ac.abort("the user pressed stop");
	let aborted = false;
	try {
		await call;
	} catch {
		aborted = true;
	}
	check(aborted, "the aborted call resolved");
	await stopped(tickAbort, "an abort");
	ok("an AbortController's cancel kills the running command");

	const after = await client.callTool({ name: "run", arguments: { command: ["echo", "after"] } });
	check(after.structuredContent.stdout === "after\n", `a call after the cancels: ${JSON.stringify(after)}`);
	const stray = errors.filter((e) => !sdkRace(e));
	check(stray.length === 0, `the SDK reported: ${stray.join("; ")}`);
	ok(`calls go on after the cancels; no stray response or progress reached the SDK (${errors.length - stray.length} progress notifications that came before their response, which the SDK handles after it)`);
}

// The SDK handles a notification a turn later than a response read with it: a progress
// notification the server sent just before its response, read in one piece with it, finds its
// token already dropped, and the SDK reports "unknown token". Such a report is no stray message
// when the notification came before the response on the wire (the order `wire` recorded).
const wire = [];
function sdkRace(e) {
	const m = /unknown token: (\{.*\})$/.exec(e);
	if (!m) return false;
	const p = JSON.parse(m[1]).params;
	const at = wire.findIndex(
		(w) => w.method === "notifications/progress" && w.params.progressToken === p.progressToken && w.params.progress === p.progress,
	);
	const answer = wire.findIndex((w) => w.id === p.progressToken && !w.method);
	return at >= 0 && answer > at;
}

const client = new Client({ name: "agentbox-sdk-test", version: "1" });
const errors = [];
client.onerror = (e) => errors.push(String(e));
const transport = new StdioClientTransport({ command: agentbox, args: ["mcp", "-p", "shell"], cwd: process.cwd() });
let status = 0;
try {
	await client.connect(transport);
	const handle = transport.onmessage; // the SDK's, set by connect: every message, in order
	transport.onmessage = (message, extra) => {
		wire.push(message);
		handle(message, extra);
	};
	check(client.getServerVersion().name === "agentbox", "serverInfo");
	await main(client, errors);
} catch (e) {
	console.log(`FAIL: ${e instanceof Fail ? e.message : e.stack || e}`);
	status = 1;
}
await client.close();
process.exit(status);

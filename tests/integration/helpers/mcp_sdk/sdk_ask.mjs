// SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
// sdk_ask.mjs AGENTBOX PROFILE PORT: the official MCP TypeScript SDK's Client, declaring
// elicitation, asked by `AGENTBOX mcp -p PROFILE` about a connection (test_mcp.sh, case sdk).
// PROFILE resolves a.ask.test to 127.0.0.1, where a server on PORT has file.txt, and grants
// *.ask.test:PORT. The SDK checks the server's elicitation/create against its own schema (a
// request it refuses gets an error, which the server takes as a deny) and the answer against
// the form's schema; so a fetch that goes through after "once" shows both held, and one refused
// after a decline shows the answer is the client's. Prints "ok: ..." lines, or "FAIL: why" and
// exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [agentbox, profile, port] = process.argv.slice(2);

class Fail extends Error {}

function check(cond, why) {
	if (!cond) throw new Fail(why);
}

const asked = [];
let reply = { action: "decline" };

async function fetchOnce(client) {
	const url = `http://a.ask.test:${port}/file.txt`;
	const command = ["curl", "-sS", "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code}", url];
	const r = await client.callTool({ name: "run", arguments: { command } }, undefined, { timeout: 60000 });
	return r.structuredContent.stdout;
}

const client = new Client({ name: "agentbox-sdk-ask", version: "1" }, { capabilities: { elicitation: {} } });
const errors = [];
client.onerror = (e) => errors.push(String(e));
client.setRequestHandler(ElicitRequestSchema, async (request) => {
	asked.push(request.params);
	return reply;
});
const transport = new StdioClientTransport({ command: agentbox, args: ["mcp", "-p", profile], cwd: process.cwd() });
let status = 0;
try {
	await client.connect(transport);
	reply = { action: "accept", content: { answer: "once" } };
	const first = await fetchOnce(client);
	check(asked.length === 1 && first === "200", `answered once: ${first}, ${asked.length} questions`);
	check(asked[0].message.includes(`a.ask.test port ${port}`), `the message: ${asked[0].message}`);
	console.log("ok: the SDK took the question as a valid elicitation, and its answer let the fetch through");
	reply = { action: "decline" };
	const second = await fetchOnce(client);
	check(asked.length === 2 && second === "403", `declined: ${second}, ${asked.length} questions`);
	console.log("ok: declined in the SDK: refused");
	check(errors.length === 0, `the SDK reported: ${errors.join("; ")}`);
} catch (e) {
	console.log(`FAIL: ${e instanceof Fail ? e.message : e.stack || e}`);
	status = 1;
}
await client.close();
process.exit(status);

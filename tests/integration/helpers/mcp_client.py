# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# mcp_client.py SCENARIO AGENTBOX [ARGS...]: a stdlib-only MCP client for test_mcp.sh. It starts
# `AGENTBOX mcp ARGS...` (the server's stderr goes to $MCP_STDERR, default: ours), speaks
# JSON-RPC over its stdin/stdout one line per message, and checks one scenario. Prints
# "ok: ..." lines and exits 0, or prints "FAIL: reason" and exits 1. Every read is bounded
# by a timeout, so a server that hangs fails the scenario instead of the test run.
import json, os, select, subprocess, sys, time


class Fail(Exception):
    pass


def check(cond, why):
    if not cond:
        raise Fail(why)


class Server:
    def __init__(self, agentbox, args):
        err = os.environ.get("MCP_STDERR")
        self.stderr = open(err, "ab") if err else None
        self.p = subprocess.Popen([agentbox, "mcp"] + args, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0)
        self.buf = b""
        self.next_id = 0

    def write(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.write(json.dumps(obj).encode() + b"\n")

    def line(self, timeout=30):
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            check(left > 0, "no answer within %d s" % timeout)
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 1 << 20)
                check(chunk, "the server closed its stdout (status %s)" % self.p.poll())
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None, timeout=30):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        r = self.line(timeout)
        check(r.get("id") == self.next_id, "answer for id %r, not %r: %r" % (r.get("id"), self.next_id, r))
        check(r.get("jsonrpc") == "2.0", "no jsonrpc 2.0 in %r" % r)
        return r

    def result(self, method, params=None, timeout=30):
        r = self.request(method, params, timeout)
        check("result" in r, "%s failed: %r" % (method, r))
        return r["result"]

    def initialize(self, version="2025-06-18"):
        res = self.result("initialize", {"protocolVersion": version, "capabilities": {},
                                         "clientInfo": {"name": "mcp_client.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return res

    def run(self, args, timeout=60):
        res = self.result("tools/call", {"name": "run", "arguments": args}, timeout)
        sc = res.get("structuredContent")
        check(isinstance(sc, dict), "no structuredContent: %r" % res)
        check(res["content"][0]["type"] == "text" and json.loads(res["content"][0]["text"]) == sc,
              "the text content is not the structured content: %r" % res)
        return res, sc

    def error(self, r, code, why):
        check("error" in r and r["error"]["code"] == code, "%s: wanted error %d, got %r" % (why, code, r))

    def close(self, timeout=30):
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Fail("the server did not exit within %d s of its stdin closing" % timeout)
        if self.stderr:
            self.stderr.close()
        return rc


def ok(what):
    print("ok: " + what, flush=True)


def s_basics(s, args):
    res = s.initialize("2025-06-18")
    check(res["protocolVersion"] == "2025-06-18", "version: %r" % res)
    check(res["capabilities"].get("tools") is not None and res["serverInfo"]["name"] == "agentbox",
          "capabilities/serverInfo: %r" % res)
    ok("initialize")
    tools = {t["name"]: t for t in s.result("tools/list")["tools"]}
    check(set(tools) == {"run"}, "tools without overlays: %r" % list(tools))
    d = tools["run"]["description"]
    check(os.getcwd() in d and "Network: none" in d and "65536" in d, "run's description: %s" % d)
    check(tools["run"]["inputSchema"]["required"] == ["command"], "run's schema")
    ok("tools/list: run, described from the policy")
    _, sc = s.run({"command": ["echo", "hello world"]})
    check(sc["status"] == 0 and sc["stdout"] == "hello world\n" and sc["cause"] == "exited", "echo: %r" % sc)
    res, sc = s.run({"command": "echo out; echo err >&2; exit 3"})
    check(sc["status"] == 3 and res["isError"] is True and sc["stdout"] == "out\n" and sc["stderr"] == "err\n",
          "exit 3: %r" % sc)
    ok("runs: argv and shell string; exit 3 is an error result with its output")
    _, sc = s.run({"command": "mkdir -p sub && cd sub && echo kept > f && pwd"})
    _, sc = s.run({"command": ["sh", "-c", "cat f; echo $MCP_VAR"], "cwd": sc["stdout"].strip(),
                   "env": {"MCP_VAR": "v1"}})
    check(sc["stdout"] == "kept\nv1\n", "cwd/env/state across runs: %r" % sc)
    ok("cwd, env, and one run's file seen by the next")
    _, sc = s.run({"command": "unshare -U true; echo $?"})
    den = sc["denials"]
    check(den["available"] and den["syscalls"] >= 1 and den["syscall_names"].get("unshare", 0) >= 1,
          "the refused unshare in the denials: %r" % den)
    _, sc = s.run({"command": "true"})
    check(sc["denials"]["syscalls"] == 0, "a clean run has no denials: %r" % sc["denials"])
    ok("a refused call is counted for its run, and only for it")
    s.close()


def s_versions(s, args):
    asked = args[0]
    res = s.initialize(asked)
    want = asked if asked in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05") else "2025-11-25"
    check(res["protocolVersion"] == want, "asked %s, got %r" % (asked, res))
    ok("protocolVersion %s -> %s" % (asked, want))
    s.close()


def s_errors(s, args):
    s.error(s.request("tools/list"), -32600, "a request before initialize")
    check("result" in s.request("ping"), "ping before initialize")
    s.initialize()
    s.error(s.request("initialize", {"protocolVersion": "2025-06-18"}), -32600, "a second initialize")
    s.write(b'{"jsonrpc":"2.0","id":5,"method":\n')
    r = s.line()
    s.error(r, -32700, "malformed JSON")
    check(r["id"] is None, "a parse error's id is null")
    s.send([{"jsonrpc": "2.0", "id": 6, "method": "ping"}])
    s.error(s.line(), -32600, "a batch")
    s.send({"id": 7, "method": "ping"})
    s.error(s.line(), -32600, "no jsonrpc member")
    s.send({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"})
    s.error(s.line(), -32600, "an object id")
    s.error(s.request("no/such/method"), -32601, "an unknown method")
    s.error(s.request("tools/call", {"arguments": {}}), -32602, "tools/call without a name")
    s.error(s.request("tools/call", {"name": "nope", "arguments": {}}), -32602, "an unknown tool")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": 5}}), -32602, "command 5")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": "true", "timeout": -1}}),
            -32602, "a negative timeout")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": []}}), -32602, "an empty argv")
    s.send({"jsonrpc": "2.0", "id": "str-id", "method": "ping"})
    r = s.line()
    check(r["id"] == "str-id" and r["result"] == {}, "a string id comes back: %r" % r)
    ok("each error has its code; string ids echo")
    # notifications are never answered: the next line is the ping's
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    s.send({"jsonrpc": "2.0", "method": "no/such/notification"})
    check("result" in s.request("ping"), "ping after notifications")
    ok("notifications get no answer")
    s.write(b'{"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":"' + b"x" * (2 << 20) + b'"}}\n')
    r = s.line()
    s.error(r, -32600, "an oversized message")
    check("result" in s.request("ping"), "ping after the oversized message")
    ok("a 2 MiB message is refused and the server goes on")
    flood = b"".join(json.dumps({"jsonrpc": "2.0", "id": 1000 + i, "method": "ping"}).encode() + b"\n"
                     for i in range(200))
    s.write(flood)
    for i in range(200):
        r = s.line()
        check(r.get("id") == 1000 + i and r.get("result") == {}, "flood answer %d: %r" % (i, r))
    check("result" in s.request("tools/list"), "tools/list after the flood")
    ok("200 pings in one write, each answered in order")
    s.close()


def s_limits(s, args):
    s.initialize()
    t0 = time.monotonic()
    res, sc = s.run({"command": "sleep 30", "timeout": 1})
    check(sc["status"] == 124 and res["isError"] and time.monotonic() - t0 < 15, "timeout: %r" % sc)
    check("result" in s.request("ping"), "ping after a timeout")
    ok("a run past its timeout ends with 124")
    total = 3 * 1024 * 1024
    _, sc = s.run({"command": "head -c %d /dev/zero | tr '\\0' a; head -c 100000 /dev/zero >&2" % total})
    check(sc["status"] == 0 and len(sc["stdout"]) == 65536 and sc["stdout_dropped"] == total - 65536,
          "stdout cap: len %d dropped %d" % (len(sc["stdout"]), sc["stdout_dropped"]))
    check(len(sc["stderr"]) == 65536 and sc["stderr_dropped"] == 100000 - 65536, "stderr cap")
    ok("3 MiB of output: 64 KiB kept, the rest counted, no hang")
    t0 = time.monotonic()
    _, sc = s.run({"command": "(sleep 20 &); echo left"})
    check(sc["stdout"] == "left\n" and time.monotonic() - t0 < 10,
          "a background process holding stdout must not hold the run: %r" % sc)
    ok("a background process holding the pipes does not hold the run")
    s.close()


def s_network(s, args):
    s.initialize()
    d = {t["name"]: t for t in s.result("tools/list")["tools"]}["run"]["description"]
    host = args[0]
    check("egress filter" in d, "the description says the network mode: %s" % d)
    _, sc = s.run({"command": "curl -sS --max-time 10 -o /dev/null -w '%%{http_code}' http://%s/file.txt" % host})
    if args[1] == "deny":
        check(sc["status"] != 0 or sc["stdout"] != "200", "the denied fetch worked: %r" % sc)
        check(sc["denials"]["network_during_run"] >= 1, "no network denial counted: %r" % sc["denials"])
        ok("a fetch of a host not allowed fails, and the denial is counted")
    else:
        check(sc["status"] == 0 and sc["stdout"] == "200", "the allowed fetch failed: %r" % sc)
        check(sc["denials"]["network_during_run"] == 0, "denials for an allowed fetch: %r" % sc["denials"])
        ok("the same fetch of an allowed host works (control)")
    s.close()


def s_overlay(s, args):
    s.initialize()
    tools = {t["name"] for t in s.result("tools/list")["tools"]}
    check(tools == {"run", "changes", "diff"}, "tools with overlays: %r" % tools)
    _, sc = s.run({"command": "echo changed > %s/file.txt && echo new > %s/new.txt" % (args[0], args[0])})
    check(sc["status"] == 0, "the write: %r" % sc)
    res = s.result("tools/call", {"name": "changes", "arguments": {}})
    out = res["structuredContent"]["output"]
    check("file.txt" in out and "new.txt" in out and not res["isError"], "changes: %r" % res)
    res = s.result("tools/call", {"name": "diff", "arguments": {}})
    out = res["structuredContent"]["output"]
    check("+changed" in out and "-orig" in out, "diff: %r" % res)
    s.error(s.request("tools/call", {"name": "promote", "arguments": {}}), -32602, "there is no promote tool")
    ok("changes and diff show the overlay's writes; no promote")
    s.close()


def s_lifecycle(s, args):
    # args: a marker; the process carrying it must not outlive the server
    s.initialize()
    _, sc = s.run({"command": "(setsid sh -c 'exec -a %s sleep 300' &); echo $AGENTBOX_RUN_ID" % args[0]})
    sid = sc["stdout"].strip()
    print("session: " + sid, flush=True)
    # the control: the session is listed and the marker runs, before the end
    listed = subprocess.run([s.p.args[0], "session", "list"], capture_output=True, text=True).stdout
    check(sid and sid in listed, "session %s not listed while the server runs: %s" % (sid, listed))
    for _ in range(50):
        if subprocess.run(["pgrep", "-f", args[0]], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise Fail("the marker process never ran")
    ok("the session is listed and the marker runs")
    if len(args) > 1 and args[1] == "kill":
        s.p.kill()
        s.p.wait()
        ok("killed the server")
        return
    rc = s.close()
    check(rc == 0, "the server's status: %d" % rc)
    ok("stdin closed: the server ended")


SCENARIOS = {"basics": s_basics, "versions": s_versions, "errors": s_errors, "limits": s_limits,
             "network": s_network, "overlay": s_overlay, "lifecycle": s_lifecycle}


def main():
    name, agentbox = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    sep = rest.index("--") if "--" in rest else len(rest)
    mcp_args, args = rest[:sep], rest[sep + 1:]
    s = Server(agentbox, mcp_args)
    try:
        SCENARIOS[name](s, args)
    except Fail as e:
        print("FAIL: %s" % e, flush=True)
        s.p.kill()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

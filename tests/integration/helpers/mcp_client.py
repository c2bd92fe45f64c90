# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# mcp_client.py SCENARIO AGENTBOX [ARGS...]: a stdlib-only MCP client for test_mcp.sh. It starts
# `AGENTBOX mcp ARGS...` (the server's stderr goes to $MCP_STDERR, default: ours), speaks
# JSON-RPC over its stdin/stdout one line per message, and checks one scenario. Prints
# "ok: ..." lines and exits 0, or prints "FAIL: reason" and exits 1. Every read is bounded
# by a timeout, so a server that hangs fails the scenario instead of the test run. Every tool
# result is checked against the output schema tools/list gave for its tool (jsonschema, when
# installed; the schemas scenario says n/a without it).
import json, os, select, subprocess, sys, time

try:
    import jsonschema
except ImportError:
    jsonschema = None


class Fail(Exception):
    pass


def check(cond, why):
    if not cond:
        raise Fail(why)


def sh(script):
    """A shell command line as run's argv."""
    return ["sh", "-c", script]


def schema_errors(instance, schema):
    """What is wrong with instance under schema, by draft 7 and 2020-12 (MCP's default)."""
    if jsonschema is None:
        return []
    errs = []
    for v in (jsonschema.Draft7Validator, jsonschema.Draft202012Validator):
        v.check_schema(schema)
        errs += ["%s: %s" % (v.__name__, e.message) for e in v(schema).iter_errors(instance)]
    return errs


class Server:
    def __init__(self, agentbox, args):
        err = os.environ.get("MCP_STDERR")
        self.stderr = open(err, "ab") if err else None
        self.p = subprocess.Popen([agentbox, "mcp"] + args, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0)
        self.buf = b""
        self.next_id = 0
        self.tools = {}
        self.notes = []  # notifications that came while waiting for an answer

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

    def answer(self, timeout=30):
        """The next message that is not a notification; the notifications go to notes."""
        end = time.monotonic() + timeout
        while True:
            m = self.line(max(end - time.monotonic(), 0.001))
            if "method" in m and "id" not in m:
                self.notes.append(m)
                continue
            return m

    def request(self, method, params=None, timeout=30):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        r = self.answer(timeout)
        check(r.get("id") == self.next_id, "answer for id %r, not %r: %r" % (r.get("id"), self.next_id, r))
        check(r.get("jsonrpc") == "2.0", "no jsonrpc 2.0 in %r" % r)
        return r

    def result(self, method, params=None, timeout=30):
        r = self.request(method, params, timeout)
        check("result" in r, "%s failed: %r" % (method, r))
        return r["result"]

    def initialize(self, version="2025-06-18", capabilities=None):
        res = self.result("initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                         "clientInfo": {"name": "mcp_client.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.version = res["protocolVersion"]
        return res

    def list_tools(self):
        self.tools = {t["name"]: t for t in self.result("tools/list")["tools"]}
        return self.tools

    def checked(self, name, res):
        """res, a tool's result: structured content, the same as text, valid by the schema."""
        sc = res.get("structuredContent")
        check(isinstance(sc, dict), "no structuredContent: %r" % res)
        check(res["content"][0]["type"] == "text" and json.loads(res["content"][0]["text"]) == sc,
              "the text content is not the structured content: %r" % res)
        if not self.tools:
            self.list_tools()
        errs = schema_errors(sc, self.tools[name]["outputSchema"])
        check(not errs, "%s's result does not fit its output schema: %s\n%r" % (name, errs, sc))
        return sc

    def call(self, name, args, timeout=60, meta=None):
        params = {"name": name, "arguments": args}
        if meta is not None:
            params["_meta"] = meta
        res = self.result("tools/call", params, timeout)
        return res, self.checked(name, res)

    def run(self, args, timeout=60, meta=None):
        return self.call("run", args, timeout, meta)

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
    tools = s.list_tools()
    check(set(tools) == {"run"}, "tools without overlays: %r" % list(tools))
    run = tools["run"]
    d = run["description"]
    check(os.getcwd() in d and "Network: none" in d and "65536" in d, "run's description: %s" % d)
    ins = run["inputSchema"]
    check(ins["required"] == ["command"] and ins["additionalProperties"] is False,
          "run's input schema: %r" % ins)
    check(ins["properties"]["command"]["type"] == "array" and
          ins["properties"]["command"]["items"]["type"] == "string", "command's schema: %r" % ins)
    check(run["outputSchema"]["type"] == "object" and len(run["outputSchema"]["oneOf"]) == 2,
          "run's output schema: %r" % run["outputSchema"])
    check(run["annotations"] == {"readOnlyHint": False, "openWorldHint": False},
          "run's annotations without a network: %r" % run["annotations"])
    ok("tools/list: run, described from the policy; schemas; no open world without a network")
    _, sc = s.run({"command": ["echo", "hello world"]})
    check(sc["status"] == 0 and sc["stdout"] == "hello world\n" and sc["cause"] == "exited", "echo: %r" % sc)
    res, sc = s.run({"command": sh("echo out; echo err >&2; exit 3")})
    check(sc["status"] == 3 and res["isError"] is True and sc["stdout"] == "out\n" and sc["stderr"] == "err\n",
          "exit 3: %r" % sc)
    ok("runs: argv and shell string; exit 3 is an error result with its output")
    _, sc = s.run({"command": sh("mkdir -p sub && cd sub && echo kept > f && pwd")})
    _, sc = s.run({"command": ["sh", "-c", "cat f; echo $MCP_VAR"], "cwd": sc["stdout"].strip(),
                   "env": {"MCP_VAR": "v1"}})
    check(sc["stdout"] == "kept\nv1\n", "cwd/env/state across runs: %r" % sc)
    ok("cwd, env, and one run's file seen by the next")
    _, sc = s.run({"command": sh("unshare -U true; echo $?")})
    den = sc["denials"]
    check(den["available"] and den["syscalls"] >= 1 and den["syscall_names"].get("unshare", 0) >= 1,
          "the refused unshare in the denials: %r" % den)
    _, sc = s.run({"command": ["true"]})
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
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": ["true"], "timeout": -1}}),
            -32602, "a negative timeout")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": []}}), -32602, "an empty argv")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": "true"}}), -32602,
            "a command that is a string")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": ["true"], "shell": True}}),
            -32602, "a property the schema does not have")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": ["true"] * 4097}}), -32602,
            "an argv over maxItems")
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": ["true"]},
                                     "_meta": {"progressToken": {"a": 1}}}), -32602, "an object as progress token")
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
    res, sc = s.run({"command": ["sleep", "30"], "timeout": 1})
    check(sc["status"] == 124 and res["isError"] and time.monotonic() - t0 < 15, "timeout: %r" % sc)
    check("result" in s.request("ping"), "ping after a timeout")
    ok("a run past its timeout ends with 124")
    total = 3 * 1024 * 1024
    _, sc = s.run({"command": sh("echo first; head -c %d /dev/zero | tr '\\0' a; echo last; "
                                 "head -c 100000 /dev/zero >&2" % total)})
    out = total + len("first\n") + len("last\n")
    check(sc["status"] == 0 and len(sc["stdout"]) == 32768 and len(sc["stdout_tail"]) == 32768 and
          sc["stdout_dropped"] == out - 65536,
          "stdout cap: head %d tail %d dropped %d" % (len(sc["stdout"]), len(sc["stdout_tail"]),
                                                      sc["stdout_dropped"]))
    check(sc["stdout"].startswith("first\naaa") and sc["stdout_tail"].endswith("aaalast\n"),
          "the head and the tail: %r ... %r" % (sc["stdout"][:10], sc["stdout_tail"][-10:]))
    check(len(sc["stderr"]) + len(sc["stderr_tail"]) == 65536 and sc["stderr_dropped"] == 100000 - 65536,
          "stderr cap")
    ok("3 MiB of output: its first and last 32 KiB kept, the rest counted, no hang")
    t0 = time.monotonic()
    _, sc = s.run({"command": sh("(sleep 20 &); echo left")})
    check(sc["stdout"] == "left\n" and time.monotonic() - t0 < 10,
          "a background process holding stdout must not hold the run: %r" % sc)
    ok("a background process holding the pipes does not hold the run")
    s.close()


def s_network(s, args):
    s.initialize()
    run = s.list_tools()["run"]
    d = run["description"]
    host = args[0]
    check("egress filter" in d, "the description says the network mode: %s" % d)
    check(run["annotations"]["openWorldHint"] is True, "openWorldHint with a network: %r" % run["annotations"])
    _, sc = s.run({"command": sh("curl -sS --max-time 10 -o /dev/null -w '%%{http_code}' http://%s/file.txt" % host)})
    if args[1] == "deny":
        check(sc["status"] != 0 or sc["stdout"] != "200", "the denied fetch worked: %r" % sc)
        check(sc["denials"]["network"] >= 1, "no network denial counted: %r" % sc["denials"])
        ok("a fetch of a host not allowed fails, and the denial is counted")
    else:
        check(sc["status"] == 0 and sc["stdout"] == "200", "the allowed fetch failed: %r" % sc)
        check(sc["denials"]["network"] == 0, "denials for an allowed fetch: %r" % sc["denials"])
        ok("the same fetch of an allowed host works (control)")
    s.close()


def s_overlay(s, args):
    s.initialize()
    tools = {t["name"] for t in s.result("tools/list")["tools"]}
    check(tools == {"run", "changes", "diff"}, "tools with overlays: %r" % tools)
    _, sc = s.run({"command": sh("echo changed > %s/file.txt && echo new > %s/new.txt" % (args[0], args[0]))})
    check(sc["status"] == 0, "the write: %r" % sc)
    res, sc = s.call("changes", {})
    kinds = {c["rel"]: c["kind"] for c in sc.get("changes", [])}
    check(kinds == {"file.txt": "modified", "new.txt": "added"} and sc["status"] == "ok"
          and not res["isError"], "changes, as changes --json's document: %r" % res)
    res, sc = s.call("diff", {"paths": ["%s/file.txt" % args[0]]})
    diffs = sc.get("changes", [])
    check(len(diffs) == 1 and diffs[0]["rel"] == "file.txt" and "+changed" in (diffs[0]["diff"] or "")
          and "-orig" in (diffs[0]["diff"] or ""), "diff of one path, as diff --json's document: %r" % res)
    s.error(s.request("tools/call", {"name": "promote", "arguments": {}}), -32602, "there is no promote tool")
    ok("changes and diff show the overlay's writes; no promote")
    for name in ("changes", "diff"):
        t = s.tools[name]
        check(t["annotations"] == {"readOnlyHint": True, "openWorldHint": False},
              "%s's annotations: %r" % (name, t["annotations"]))
        check(t["inputSchema"]["additionalProperties"] is False and
              t["inputSchema"]["properties"]["paths"]["maxItems"] == 60, "%s's input schema" % name)
        s.error(s.request("tools/call", {"name": name, "arguments": {"paths": ["a"] * 61}}), -32602,
                "%s with 61 paths" % name)
        s.error(s.request("tools/call", {"name": name, "arguments": {"path": "a"}}), -32602,
                "%s with a property its schema does not have" % name)
        s.call(name, {"paths": ["a"] * 60})
    ok("changes and diff: read-only, closed world; 60 paths taken, 61 and an extra property refused")
    s.close()


def s_lifecycle(s, args):
    # args: a marker; the process carrying it must not outlive the server
    s.initialize()
    _, sc = s.run({"command": sh("(setsid sh -c 'exec -a %s sleep 300' &); echo $AGENTBOX_RUN_ID" % args[0])})
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


def s_tool_errors(s, args):
    # from 2025-11-25 on, arguments that do not fit the schema are a tool execution error the
    # model sees (SEP-1303); an unknown tool stays a protocol error
    s.initialize("2025-11-25")
    for bad in ({"command": "true"}, {"command": ["true"], "shell": True}, {"command": ["true"] * 4097},
                {"command": ["true"], "max_output_bytes": 1048577}):
        res, sc = s.run(bad)
        check(res["isError"] is True and sc["error"].startswith("invalid arguments"),
              "arguments %r: %r" % (list(bad), res))
    s.error(s.request("tools/call", {"name": "nope", "arguments": {}}), -32602, "an unknown tool")
    _, sc = s.run({"command": ["echo", "fine"]})
    check(sc["stdout"] == "fine\n", "a good call after the bad ones: %r" % sc)
    ok("2025-11-25: bad arguments are tool errors fitting the output schema; an unknown tool is -32602")
    s.close()


def s_enforced(s, args):
    # the input schema says what the server enforces: for each arguments object, the server
    # takes it exactly when the schema does
    if jsonschema is None:
        print("n/a: python3-jsonschema is not installed", flush=True)
        return
    s.initialize()
    schema = s.list_tools()["run"]["inputSchema"]
    t = ["true"]
    cases = [
        {"command": t}, {"command": "true"}, {"command": []}, {"command": t + ["x"] * 4095},
        {"command": t + ["x"] * 4096}, {"command": ["true", 1]}, {"command": ["tr\0ue"]},
        {"command": [["true"]]}, {"command": t, "cwd": "/"}, {"command": t, "cwd": ""},
        {"command": t, "cwd": 5}, {"command": t, "cwd": "/\0"}, {"command": t, "timeout": 0},
        {"command": t, "timeout": 0.5}, {"command": t, "timeout": 86400},
        {"command": t, "timeout": 86400.5}, {"command": t, "timeout": "5"},
        {"command": t, "timeout": True}, {"command": t, "env": {"A": "1"}},
        {"command": t, "env": {"A=B": "1"}}, {"command": t, "env": {"": "1"}},
        {"command": t, "env": {"A": 1}}, {"command": t, "env": {"A": "x\0y"}},
        {"command": t, "env": {"A\0B": "x"}}, {"command": t, "env": []},
        {"command": t, "env": {"V%d" % i: "x" for i in range(1024)}},
        {"command": t, "env": {"V%d" % i: "x" for i in range(1025)}},
        {"command": t, "max_output_bytes": 0}, {"command": t, "max_output_bytes": 5.0},
        {"command": t, "max_output_bytes": 1.5}, {"command": t, "max_output_bytes": -1},
        {"command": t, "max_output_bytes": 1048576}, {"command": t, "max_output_bytes": 1048577},
        {"command": t, "max_output_bytes": True}, {"command": t, "extra": 1}, {"cwd": "/"}, {},
    ]
    for a in cases:
        valid = not schema_errors(a, schema)
        r = s.request("tools/call", {"name": "run", "arguments": a})
        taken = "result" in r
        check(taken or r["error"]["code"] == -32602, "%.200r: %r" % (a, r))
        check(taken == valid, "the schema %s %.200r but the server %s it: %r"
              % ("takes" if valid else "refuses", a, "took" if taken else "refused", r))
        if taken:
            s.checked("run", r["result"])
    ok("%d argument objects: the server takes exactly those the input schema takes" % len(cases))
    # what the schema cannot say: the request's 128 KiB in all (docs/mcp.md)
    s.error(s.request("tools/call", {"name": "run", "arguments": {"command": ["echo", "x" * 200000]}}),
            -32602, "an argv over the request's 128 KiB")
    ok("an argv over 128 KiB in all is refused too")
    s.close()


def prefix_ok(data, cut, n):
    """cut is the longest prefix of data[:n] that is whole UTF-8."""
    if not data[:n].startswith(cut) or len(cut) < n - 3:
        return False
    try:
        cut.decode()
    except UnicodeDecodeError:
        return False
    for k in range(len(cut) + 1, n + 1):
        try:
            data[:k].decode()
            return False
        except UnicodeDecodeError:
            pass
    return True


def suffix_ok(data, cut, n):
    """cut is the longest suffix of data's last n bytes that is whole UTF-8."""
    last = data[len(data) - n:] if n else b""
    if not last.endswith(cut) or len(cut) < n - 3:
        return False
    try:
        cut.decode()
    except UnicodeDecodeError:
        return False
    for k in range(len(cut) + 1, n + 1):
        try:
            last[n - k:].decode()
            return False
        except UnicodeDecodeError:
            pass
    return True


def s_caps(s, args):
    # max_output_bytes keeps the head and the tail, each cut on a character boundary, and says
    # how many bytes lie between; characters of 1 to 4 bytes at every alignment
    s.initialize()
    unit = "a\u00e9\u20ac\U0001f600".encode()  # 1 + 2 + 3 + 4 bytes
    n = 0
    for pad in range(4):
        data = b"h" * pad + unit * 40 + b"end"
        with open("out.bin", "wb") as f:
            f.write(data)
        for cap in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 64, len(data) - 1, len(data), 65536):
            _, sc = s.run({"command": ["cat", "out.bin"], "max_output_bytes": cap})
            head, tail = sc["stdout"].encode(), sc["stdout_tail"].encode()
            what = "pad %d cap %d: %r" % (pad, cap, sc)
            if cap >= len(data):
                check(head == data and tail == b"" and sc["stdout_dropped"] == 0, "whole: " + what)
            else:
                check(prefix_ok(data, head, cap - cap // 2) and suffix_ok(data, tail, cap // 2),
                      "head and tail: " + what)
                check(sc["stdout_dropped"] == len(data) - len(head) - len(tail), "the count: " + what)
            n += 1
    ok("%d caps: head and tail cut on character boundaries, the bytes between counted" % n)
    _, sc = s.run({"command": ["cat", "out.bin"]})
    check(sc["stdout"].encode() == data and sc["stdout_tail"] == "", "the default keeps small output whole")
    ok("without max_output_bytes a small output is whole")
    s.close()


def progress_notes(s, token):
    got = [m for m in s.notes if m.get("method") == "notifications/progress"]
    s.notes.clear()
    for m in got:
        check(m["params"]["progressToken"] == token and type(m["params"]["progressToken"]) is type(token),
              "a progress notification for another token: %r" % m)
    values = [m["params"]["progress"] for m in got]
    check(all(b > a for a, b in zip(values, values[1:])), "progress does not rise: %r" % values)
    return got


def s_progress(s, args):
    s.initialize()
    res, sc = s.run({"command": sh("for i in 1 2 3; do echo step$i; sleep 0.5; done; sleep 2.5; echo done")},
                    meta={"progressToken": "p-1"})
    check(sc["stdout"] == "step1\nstep2\nstep3\ndone\n", "the run: %r" % sc)
    got = progress_notes(s, "p-1")
    text = "".join(m["params"].get("message", "") for m in got)
    for i in (1, 2, 3):
        check("step%d\n" % i in text, "step%d not in the progress messages: %r" % (i, got))
    beats = [m for m in got if m["params"]["message"].startswith("running, ")]
    check(len(beats) >= 1, "no progress while the command was quiet for 2.5 s: %r" % got)
    check(all("total" not in m["params"] for m in got), "a total for a run whose end is unknown: %r" % got)
    ok("progress with a string token: %d notifications, the output's lines, a beat while quiet" % len(got))
    s.run({"command": sh("sleep 1.5")}, meta={"progressToken": 7})
    got = progress_notes(s, 7)
    check(len(got) >= 1, "no progress for an integer token")
    ok("progress with an integer token")
    # a lot of output: each message bounded, the rest said to be left out
    s.run({"command": sh("head -c 3000000 /dev/zero | tr '\\0' z; sleep 0.5")}, meta={"progressToken": "big"})
    got = progress_notes(s, "big")
    check(got and all(len(m["params"]["message"].encode()) <= 2048 + 40 for m in got),
          "a progress message over 2 KiB: %r" % [len(m["params"]["message"]) for m in got])
    ok("3 MB of output: progress messages stay within 2 KiB")
    s.run({"command": sh("echo a; sleep 1.5; echo b")})
    check("result" in s.request("ping"), "ping")
    check(not s.notes, "progress without a token: %r" % s.notes)
    ok("no progress without a token, none after the result")
    s.close()


def running(marker):
    return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0


def lines_of(path):
    try:
        with open(path) as f:
            return len(f.readlines())
    except FileNotFoundError:
        return 0


def s_cancel(s, args):
    # the marker comes in the environment: in this client's argv, pgrep would find the client
    marker = os.environ["MCP_MARKER"]
    s.initialize()
    for rid in (100, "c-1"):
        ticks = "ticks-%s" % rid
        s.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "run", "arguments": {
            "command": sh("while :; do echo x >> %s; sleep 0.05; done; true %s" % (ticks, marker))},
            "_meta": {"progressToken": "t-%s" % rid}}})
        end = time.monotonic() + 30
        while lines_of(ticks) < 5:
            check(time.monotonic() < end, "control: the command never wrote")
            time.sleep(0.05)
        check(running(marker), "control: the command runs")
        t0 = time.monotonic()
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "the user pressed stop"}})
        # no response for the cancelled request: the next answer is the ping's
        check("result" in s.request("ping"), "ping after the cancel")
        took = time.monotonic() - t0
        n = lines_of(ticks)
        time.sleep(0.5)
        check(lines_of(ticks) == n, "the command still writes after the cancel (id %r)" % rid)
        check(not running(marker), "the command still runs after the cancel (id %r)" % rid)
        check(took < 5, "the cancel took %.1f s" % took)
        progress_notes(s, "t-%s" % rid)
        ok("cancel of a running call (id %r): no response, the command gone within %.2f s" % (rid, took))
    # a cancel read before its call started: the call never runs
    s.write((json.dumps({"jsonrpc": "2.0", "id": 200, "method": "tools/call",
                         "params": {"name": "run", "arguments": {"command": ["touch", "never"]}}}) + "\n" +
             json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 200}}) + "\n").encode())
    check("result" in s.request("ping"), "ping after a cancelled queued call")
    time.sleep(0.3)
    check(not os.path.exists("never"), "a call cancelled before it started ran")
    ok("a call cancelled before it started: no response, never run")
    # a cancel of something unknown or done is ignored, and the server serves on
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9999}})
    _, sc = s.run({"command": ["echo", "after"]})
    check(sc["stdout"] == "after\n", "a run after the cancels: %r" % sc)
    ok("a cancel of an unknown request is ignored; runs go on")
    s.close()


SCENARIOS = {"basics": s_basics, "versions": s_versions, "errors": s_errors, "limits": s_limits,
             "network": s_network, "overlay": s_overlay, "lifecycle": s_lifecycle,
             "tool_errors": s_tool_errors, "enforced": s_enforced, "caps": s_caps,
             "progress": s_progress, "cancel": s_cancel}


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

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# mcp_ask_client.py SCENARIO AGENTBOX PROFILE PORT: an MCP client that can be asked
# (elicitation), for test_mcp.sh's ask cases. PROFILE is a session profile whose [network]
# resolves a.ask.test, b.ask.test and evil.test to 127.0.0.1, where a server on PORT has
# file.txt, and whose grantable rule covers *.ask.test:PORT. Each run fetches a URL with curl
# through the proxy, and the client answers the questions that come meanwhile as the scenario
# says. Prints "ok: ..." lines and exits 0, or "FAIL: reason" and exits 1.
#   answers   once, decline, run, then no question once run allowed the host; none for a host
#             beyond the grant; a response to no question, and an answer twice, change nothing
#   timeout   (ask-timeout 1s) no answer: the connection is refused and the request withdrawn
#   unasked   a client without elicitation (and one with url mode only) is never asked
#   nogrant   (a profile without grantable) a client that can be asked is never asked
import json, sys, time

from mcp_client import Server, Fail, check, ok, sh


def fetch_cmd(host, port):
    return sh("curl -sS --max-time 30 -o /dev/null -w '%%{http_code}' http://%s:%s/file.txt" % (host, port))


def run_answering(s, host, port, reply, timeout=60):
    """A run of curl to host; each elicitation/create that comes is answered by reply(request)
    (a result object, or None to leave it unanswered). Returns (structured result, requests,
    notifications) of the run."""
    s.next_id += 1
    call_id = s.next_id
    s.send({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
            "params": {"name": "run", "arguments": {"command": fetch_cmd(host, port)}}})
    asked, notes = [], []
    end = time.monotonic() + timeout
    while True:
        m = s.line(max(end - time.monotonic(), 0.001))
        if m.get("method") == "elicitation/create":
            check("id" in m, "an elicitation without an id: %r" % m)
            asked.append(m)
            result = reply(m)
            if result is not None:
                s.send({"jsonrpc": "2.0", "id": m["id"], "result": result})
        elif "method" in m:
            notes.append(m)
        else:
            check(m.get("id") == call_id and "result" in m, "the run's answer: %r" % m)
            return s.checked("run", m["result"]), asked, notes


def accept(word):
    return lambda m: {"action": "accept", "content": {"answer": word}}


def check_question(m, host, port):
    p = m["params"]
    msg = p["message"]
    check("connect to %s port %s (http)" % (host, port) in msg, "the question's message: %r" % msg)
    check("grantable *.ask.test:%s" % port in msg, "the message names the grant: %r" % msg)
    prop = p["requestedSchema"]["properties"]["answer"]
    check(p["requestedSchema"]["type"] == "object" and prop["type"] == "string"
          and prop["enum"] == ["once", "run", "deny"]
          and p["requestedSchema"]["required"] == ["answer"], "the form: %r" % p["requestedSchema"])
    check(isinstance(m["id"], str), "the request's id is a string: %r" % m["id"])


def s_answers(s, port):
    s.initialize(capabilities={"elicitation": {}})
    sc, asked, _ = run_answering(s, "a.ask.test", port, accept("once"))
    check(len(asked) == 1 and sc["stdout"] == "200", "answered once: %r, %d questions" % (sc, len(asked)))
    check_question(asked[0], "a.ask.test", port)
    ok("a connection the profile may grant is asked about, and once lets it through")
    sc, asked, _ = run_answering(s, "a.ask.test", port, lambda m: {"action": "decline"})
    check(len(asked) == 1 and sc["stdout"] == "403", "declined: %r, %d questions" % (sc, len(asked)))
    ok("once is for one connection: asked again; declined, refused with a 403")
    sc, asked, _ = run_answering(s, "a.ask.test", port, accept("sometimes"))
    check(len(asked) == 1 and sc["stdout"] == "403", "a word not in the form: %r" % sc)
    ok("an answer that is not one of the form's words denies")
    sc, asked, _ = run_answering(s, "a.ask.test", port, accept("run"))
    check(len(asked) == 1 and sc["stdout"] == "200", "answered run: %r" % sc)
    # a response to no question, and the same answer again: nothing changes, nothing breaks
    s.send({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {"action": "accept", "content": {"answer": "deny"}}})
    s.send({"jsonrpc": "2.0", "id": "agentbox-ask-999", "result": {"action": "accept", "content": {"answer": "run"}}})
    sc, asked, _ = run_answering(s, "a.ask.test", port, accept("deny"))
    check(not asked and sc["stdout"] == "200", "after run: %r, %d questions" % (sc, len(asked)))
    ok("run allows the host for the session: no more questions")
    sc, asked, _ = run_answering(s, "b.ask.test", port, lambda m: {"action": "cancel"})
    check(len(asked) == 1 and sc["stdout"] == "403", "cancelled: %r" % sc)
    ok("run allowed only its host and port; a cancelled question denies")
    t0 = time.monotonic()
    sc, asked, _ = run_answering(s, "evil.test", port, accept("run"))
    check(not asked and sc["stdout"] == "403" and time.monotonic() - t0 < 10,
          "beyond the grant: %r, %d questions" % (sc, len(asked)))
    ok("a host beyond the grant is refused without a question")
    s.close()


def s_timeout(s, port):
    s.initialize(capabilities={"elicitation": {}})
    sc, asked, notes = run_answering(s, "a.ask.test", port, lambda m: None)
    check(len(asked) == 1 and sc["stdout"] == "403", "unanswered: %r, %d questions" % (sc, len(asked)))
    withdrawn = [n for n in notes if n["method"] == "notifications/cancelled"
                 and n["params"]["requestId"] == asked[0]["id"]]
    check(len(withdrawn) == 1, "the request withdrawn: %r" % notes)
    ok("an unanswered question is refused at its timeout, and its request withdrawn")
    # the late answer is ignored, and the next question still comes
    s.send({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {"action": "accept", "content": {"answer": "run"}}})
    sc, asked, _ = run_answering(s, "a.ask.test", port, accept("once"))
    check(len(asked) == 1 and sc["stdout"] == "200", "after a late answer: %r" % sc)
    ok("a late answer changes nothing; the next question is asked")
    s.close()


def s_unasked(s, port, version, caps):
    s.initialize(version=version, capabilities=caps)
    t0 = time.monotonic()
    sc, asked, _ = run_answering(s, "a.ask.test", port, accept("run"))
    check(not asked and sc["stdout"] == "403" and time.monotonic() - t0 < 10,
          "a client that cannot be asked (%s, %r): %r, %d questions" % (version, caps, sc, len(asked)))
    s.close()


def main():
    name, agentbox, profile, port = sys.argv[1:5]
    s = Server(agentbox, ["-p", profile])
    try:
        if name == "answers":
            s_answers(s, port)
        elif name == "timeout":
            s_timeout(s, port)
        elif name == "unasked":
            s_unasked(s, port, "2025-06-18", {})
            s = Server(agentbox, ["-p", profile])
            s_unasked(s, port, "2025-11-25", {"elicitation": {"url": {}}})
            s = Server(agentbox, ["-p", profile])
            s_unasked(s, port, "2025-03-26", {"elicitation": {}})
            ok("clients without elicitation in form mode, or before 2025-06-18, are not asked")
        elif name == "nogrant":
            s_unasked(s, port, "2025-06-18", {"elicitation": {}})
            ok("a profile that grants nothing asks nothing")
        else:
            raise Fail("no scenario %s" % name)
    except Fail as e:
        print("FAIL: %s" % e, flush=True)
        s.p.kill()
        sys.exit(1)


main()

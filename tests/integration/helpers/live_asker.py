# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# live_asker.py SOCKET LOG ANSWER...: a harness asked by a session (test_live.sh), through the
# agentbox package (on PYTHONPATH). Subscribes on the control socket SOCKET and answers the Nth
# question with the Nth ANSWER: once, run, deny; none leaves it to its timeout; exit ends this
# process at once, without a word (a harness that dies). Past the list: none. LOG gets a line
# for each thing that happens, as it happens:
#   ready TIMEOUT_MS | refused ERRNO MESSAGE (the subscription)
#   question ID HOST PORT EXEC PROTOCOL GRANT
#   answered ID ANSWER CONNECTIONS | late ID ERRNO (the question was no longer open)
#   settled ID HOW (a question that ended without this client's answer)
#   end (the session ended)
import os
import sys

import agentbox

sock, log, answers = sys.argv[1], sys.argv[2], sys.argv[3:]
out = open(log, "a", buffering=1)
s = agentbox.Session("unused")
s.socket_path, s.live = sock, True
try:
    asker = s.questions()
except agentbox.PolicyError as err:
    out.write(f"refused {err.errno} {err.message}\n")
    sys.exit(0)
out.write(f"ready {asker.timeout_ms}\n")
told = set()
n = 0
while True:
    q = asker.next(timeout=0.1)
    for qid, how in list(asker.settled.items()):
        if qid not in told:
            told.add(qid)
            if how in ("timeout", "rule"):
                out.write(f"settled {qid} {how}\n")
    if q is None:
        if asker.closed:
            out.write("end\n")
            break
        continue
    out.write(f"question {q.id} {q.host} {q.port} {q.exec} {q.protocol} {q.grant}\n")
    answer = answers[n] if n < len(answers) else "none"
    n += 1
    if answer == "exit":
        os._exit(0)
    if answer == "none":
        continue
    try:
        settled = q.answer(answer)
        told.add(q.id)
        out.write(f"answered {q.id} {answer} {settled}\n")
    except agentbox.PolicyError as err:
        out.write(f"late {q.id} {err.errno}\n")

#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""grpc_echo.py server PORTFILE LOGFILE CERT KEY
grpc_echo.py client TARGET METHOD [MESSAGE] [--ca FILE] [--name NAME]

A gRPC service and its client for test_h2.sh, with python3-grpcio and no generated code: the
messages are raw bytes (identity serializers), the service agentbox.test.Echo:
    Say     unary: answers b"said:" + the request
    Secret  unary: answers b"secret"
    Count   server streaming: the request is a count in ASCII digits (at most 10000); answers
            b"1", b"2", ... that many messages (INVALID_ARGUMENT for anything else)

server: TLS (CERT, KEY: PEM) on the host's 127.0.0.1, on a free port it writes to PORTFILE
(PORTFILE.tmp, then renamed); LOGFILE gets a line per call as it starts:
    call METHOD peer=PEER                          (METHOD: Say, Secret or Count; PEER as
                                                    grpc names it, e.g. ipv4:127.0.0.1:41234)
A call to a method the service lacks is refused by grpc itself (UNIMPLEMENTED), not logged.

client: calls METHOD (Say, Secret, Count, or a full /package.Service/Method, called as unary)
at TARGET (host:port) with MESSAGE (default "hello"; for Count, default "3"), a 10 s deadline,
over TLS: grpc.ssl_channel_credentials() with the default roots (grpc core reads them from
$GRPC_DEFAULT_SSL_ROOTS_FILE_PATH when set), or with --ca FILE's certificates. --name NAME
checks the server's certificate for NAME instead of TARGET's host (for a direct test).
grpc core goes through an HTTP CONNECT proxy named by $grpc_proxy, else $https_proxy, else
$http_proxy (lower case only; $no_grpc_proxy / $no_proxy exempt hosts), sending TARGET's host
unresolved in the CONNECT. Output, one line each:
    MSG:<message>          each response message (bytes as UTF-8, undecodable ones escaped)
    STATUS:<code name>     OK, PERMISSION_DENIED, UNAVAILABLE, DEADLINE_EXCEEDED, ...
    DETAILS:<details>      the status's details (empty when none)
It exits 0 whenever the call got a status (2: bad arguments)."""
import concurrent.futures
import os
import sys

import grpc

SERVICE = "agentbox.test.Echo"
DEADLINE = 10


def identity(b):
    return b


def serve(portfile, logfile, cert, key):
    def log(method, context):
        with open(logfile, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(f"call {method} peer={context.peer()}\n")

    def say(request, context):
        log("Say", context)
        return b"said:" + request

    def secret(request, context):
        log("Secret", context)
        return b"secret"

    def count(request, context):
        log("Count", context)
        text = request.decode("ascii", "replace")
        if not text.isdigit() or int(text) > 10000:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the request must be a count")
        for i in range(1, int(text) + 1):
            yield str(i).encode()

    def unary(fn):
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=identity, response_serializer=identity)

    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "Say": unary(say),
        "Secret": unary(secret),
        "Count": grpc.unary_stream_rpc_method_handler(
            count, request_deserializer=identity, response_serializer=identity),
    })
    with open(cert, "rb") as f:
        chain = f.read()
    with open(key, "rb") as f:
        private = f.read()
    open(logfile, "a").close()
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=8),
                         handlers=[handler])
    port = server.add_secure_port("127.0.0.1:0",
                                  grpc.ssl_server_credentials([(private, chain)]))
    if not port:
        sys.exit("grpc_echo.py: cannot listen on 127.0.0.1")
    server.start()
    with open(portfile + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(portfile + ".tmp", portfile)
    server.wait_for_termination()


def show(message):
    print("MSG:" + message.decode("utf-8", "backslashreplace"), flush=True)


def finish(code, details):
    print(f"STATUS:{code.name}")
    print(f"DETAILS:{details or ''}", flush=True)


def client(target, method, message, ca, name):
    roots = None
    if ca:
        with open(ca, "rb") as f:
            roots = f.read()
    options = [("grpc.ssl_target_name_override", name)] if name else []
    creds = grpc.ssl_channel_credentials(root_certificates=roots)
    path = method if method.startswith("/") else f"/{SERVICE}/{method}"
    with grpc.secure_channel(target, creds, options=options) as channel:
        try:
            if method == "Count":
                call = channel.unary_stream(path, request_serializer=identity,
                                            response_deserializer=identity)(
                    message, timeout=DEADLINE)
                for m in call:
                    show(m)
                finish(call.code(), call.details())
            else:
                reply, call = channel.unary_unary(path, request_serializer=identity,
                                                  response_deserializer=identity).with_call(
                    message, timeout=DEADLINE)
                show(reply)
                finish(call.code(), call.details())
        except grpc.RpcError as e:
            finish(e.code(), e.details())


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["server"] and len(argv) == 5:
        return serve(*argv[1:])
    if argv[:1] == ["client"]:
        opts = {"--ca": None, "--name": None}
        rest = []
        while len(argv) > 1:
            arg = argv.pop(1)
            if arg in opts and len(argv) > 1:
                opts[arg] = argv.pop(1)
            else:
                rest.append(arg)
        if len(rest) in (2, 3):
            target, method = rest[0], rest[1]
            default = "3" if method == "Count" else "hello"
            message = (rest[2] if len(rest) == 3 else default).encode()
            return client(target, method, message, opts["--ca"], opts["--name"])
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()

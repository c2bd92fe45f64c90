# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# intercept_pin.py: a mitmproxy addon for bench/intercept.sh. mitmproxy has no option to pin a
# name to an address (its resolver is the host's, and /etc/hosts is not the benchmark's to
# change), so this sends its connections for origin.test to BENCH_ORIGIN ("127.0.0.1:PORT"), as
# agentbox's `resolve` does. Only the address dialled changes: the SNI, the Host header and the
# name checked in the origin's certificate stay origin.test. Runs once per upstream connection.
import os

_host, _port = os.environ["BENCH_ORIGIN"].rsplit(":", 1)


def server_connect(data):
    if data.server.address and data.server.address[0] == "origin.test":
        data.server.address = (_host, int(_port))

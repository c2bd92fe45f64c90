#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""fetch.py urllib|requests URL OUT [URL OUT ...]: GETs each URL with Python's urllib or with
requests, as a program would (the proxy and the trust store from the environment: HTTPS_PROXY,
SSL_CERT_FILE, REQUESTS_CA_BUNDLE), and writes a 200's body to OUT. One line per URL:
    STATUS:<code> DENIED:<its X-Agentbox-Denied header, or empty>
or ERROR:<what> when no response came."""
import sys

TIMEOUT = 30


def with_urllib(url):
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def with_requests(url):
    import requests
    r = requests.get(url, timeout=TIMEOUT)
    return r.status_code, r.headers, r.content


def main():
    lib, args = sys.argv[1], sys.argv[2:]
    get = {"urllib": with_urllib, "requests": with_requests}.get(lib)
    if get is None or not args or len(args) % 2:
        sys.exit(__doc__.split("\n")[0])
    for url, out in zip(args[::2], args[1::2]):
        try:
            status, headers, body = get(url)
        except Exception as e:  # the client's own failure is the line's answer
            print(f"ERROR:{type(e).__name__}: {e}", flush=True)
            continue
        print(f"STATUS:{status} DENIED:{headers.get('X-Agentbox-Denied') or ''}", flush=True)
        if status == 200:
            with open(out, "wb") as f:
                f.write(body)


main()

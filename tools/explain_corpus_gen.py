# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# explain_corpus_gen: the corpus generator of tools/explain-corpus (which see): the key tables
# read from this repository's policy/*.c, the values each key is tried with, the fixed
# profiles (bundled, single-key, special) and the seeded random combinations, and generate(),
# which writes them and DIR/MANIFEST. Python 3 standard library only.

import os
import random
import re
import shutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SEED = 20261127
DEFAULT_COUNT = 5000
CRED = "credential *"  # every [credential NAME] section counts as this one for coverage

# ---------------------------------------------------------------- the key tables


def table_keys(repo=REPO):
    """(section, key) for every key agentbox reads, from the sources."""
    keys = set()
    pol = os.path.join(repo, "policy")
    for name in sorted(os.listdir(pol)):
        if not name.endswith(".c"):
            continue
        with open(os.path.join(pol, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in re.finditer(r'\{\s*"([a-z]+)"\s*,\s*"([a-z0-9-]+)"\s*,\s*(LIST|SINGLE)\b', text):
            keys.add((m.group(1), m.group(2)))
        if name == "policy_credentials.c":
            body = text.split("int policy_credential_key(", 1)
            if len(body) == 2:
                for m in re.finditer(r'strcmp\(s->key,\s*"([a-z0-9-]+)"\)', body[1].split("\n}\n", 1)[0]):
                    keys.add((CRED, m.group(1)))
        if name == "policy_load.c" and re.search(r'"sandbox"\)\s*&&\s*!strcmp\(re->key,\s*"include"\)', text):
            keys.add(("sandbox", "include"))
    return keys


def profile_keys(path):
    """(section, key) of every key line in one profile file (a plain INI reading)."""
    try:
        with open(path, "rb") as f:
            return text_keys(f.read().decode("utf-8", "replace"))
    except OSError:
        return set()


def text_keys(data):
    out = set()
    section = ""
    for line in data.split("\n"):
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("[") and "]" in s:
            section = s[1:s.index("]")]
            if section.startswith("credential "):
                section = CRED
            continue
        m = re.match(r"([^=:\s]+)\s*[=:]", s)
        if m and section and line[:1] not in " \t":
            out.add((section, m.group(1)))
    return out


# ---------------------------------------------------------------- values
# @D@ stands for the corpus directory (absolute); (value, expect): True accepted, False an
# error, None not sure. Expectations only label the report; the comparison ignores them.

V, X, Q = True, False, None

DUR = [("500ms", V), ("30", V), ("5m", V), ("2h", V), ("10s", V), ("1", V), ("86400s", V),
       ("1.5s", X), ("5M", X), ("0", X), ("5 m", X), ("-1", X), ("1d", X), ("ms", X),
       ("99999999999999999999h", X), ("${HOME}", X)]
SIZE = [("4096", V), ("512M", V), ("2GiB", V), ("1t", V), ("10kb", V), ("64k", V), ("3MB", V),
        ("1G", V), ("0", X), ("1.5G", X), ("1 G", X), ("1X", X), ("G", X), ("-5", X),
        ("99999999999T", X), ("1KiBB", X)]
COUNT = [("1", V), ("64", V), ("2147483647", V), ("007", V), ("0", X), ("-1", X),
         ("2147483648", X), ("1k", X), ("abc", X), ("+5", X), ("${UID}", Q)]
PATHS = [("/usr", V), ("/usr, /opt/tool", V), ("${CWD}", V), ("~/data", V), ("~", V),
         ("${HOME}/.cache/pip", V), ("/srv//data/./x/", V), ("${TMPDIR}/scratch", V),
         ("${PROFILE_DIR}/sub", V), ("@D@/data/ro1", V), ("/opt/${USER}/w", V),
         ("/bücher/ü", V), ("/a, /b, /c, /d", V),
         ("rel/path", X), ("/a/../b", X), ("/a,,/b", X), ("/a,", X), ("${NOPE}/x", X),
         ("${HOME", X), ("~user/x", X), ("x~/y", X), ("", X), ("$HOME/x", X), ("/x, /x/", X)]
HOSTNAME = [("build-box", V), ("a", V), ("A-1.b", V), ("h" * 64, V), ("agentbox", V),
            ("a b", X), ("h" * 65, X), ("host_name", X), ("${USER}", X), ("", X), ("bücher", X)]
NET_RULES = [("example.com", V), ("example.com:443", V), ("*.example.com", V),
             ("**.example.com:8443", V), ("10.0.0.1", V), ("10.0.0.0/8", V),
             ("[2001:db8::1]:443", V), ("2001:db8::1", V), ("[fd00::]/8", V),
             ("bücher.example", V), ("xn--bcher-kva.example", V), ("EXAMPLE.com.", V),
             ("faß.de:80", V), ("[::1]", V), ("192.168.1.0/24:22", Q),
             ("a.example, b.example:80", V), ("a.example, a.example", V),
             ("exa mple.com", X), ("example.com:0", X), ("example.com:65536", X),
             ("10.0.0.0/33", X), ("[::1", X), ("[::1]x", X), ("*", X), ("a..b", X),
             ("*.*.x", X), ("example.com:http", X), ("300.1.1.1", X), ("-bad.example", X),
             ("[fd00::]/129", X), ("xn--zz.example", Q)]
RESOLVE = [("pypi.org=10.0.0.5", V), ("pypi.org:443=10.0.0.5:8443", V),
           ("mirror.example=[2001:db8::5]", V), ("x.example:80=[::1]:8080", V),
           ("a.example=1.2.3.4, b.example=1.2.3.5", V),
           ("pypi.org", X), ("*.x.example=1.2.3.4", X), ("x.example=host.example", X),
           ("10.0.0.1=10.0.0.2", X), ("x.example=10.0.0.0/8", X), ("x.example=1.2.3.4:0", X),
           ("=1.2.3.4", X)]
METHODS = [("GET", V), ("GET, HEAD, POST", V), ("PROPFIND", V), ("GET, GET", V),
           ("get", X), ("GET1", X), ("ABCDEFGHIJKLMNOP", X), ("G-T", X), ("GET,", X)]
HTTP_RULES = [("GET api.github.com/repos/acme/**", V),
              ("POST api.openai.com/v1/chat/completions", V),
              ("GET example.com/search?q=*", V), ("* */admin/*", V),
              ("* *.example.com/**", V), ("GET **.example.com/a/**/b", V),
              ("GET 127.0.0.1/x", V), ("GET [::1]/x", V), ("DELETE example.com/%20x", V),
              ("GET example.com/caf%C3%A9/*", V), ("PUT example.com/a?x=**", V),
              ("GET bücher.example/", V), ("PATCH EXAMPLE.COM./x/", V), ("M-1_X a.example/", V),
              ("GET example.com/a,b", V), ("GET example.com/${USER}/**", V),
              ("get example.com/x", X), ("GET example.com", X), ("GET example.com//x", X),
              ("GET example.com/./x", X), ("GET example.com/a/../b", X),
              ("GET example.com/%2F", X), ("GET example.com/%5C", X), ("GET example.com/a\\b", X),
              ("GET example.com:443/x", X), ("GET 10.0.0.0/8/x", V), ("GET", X),
              ("GET example.com/%00", X), ("GET example.com/%C0%AE", X), ("GET  example.com/x", Q),
              ("GET example.com/x extra", X), ("GET /x", X), ("GET example.com/%zz", X)]
SYSCALLS = [("ptrace", V), ("ptrace, personality", V), ("mount", V), ("io_uring_setup", V),
            ("clone, clone, unshare", V), ("notacall", X), ("PTRACE", X), ("", X),
            ("ptrace,,mount", X)]
ENV_GLOBS = [("TERM", V), ("LANG, LC_*", V), ("*", V), ("*_TOKEN, *_KEY, AWS_*", V),
             ("A b", V), ("TERM, TERM", V), ("A=B", X), ("", X), ("X,", X)]
ENV_SET = [("A=1", V), ("PATH=/x:${HOME}/bin", V), ("X=", V), ("Y=a,b c", V), ("Z=~/x", V),
           ("_U=${USER}", V), ("LONG=" + "v" * 150, V), ("Q=\"quoted\"", V),
           ("1A=x", X), ("=x", X), ("NOEQ", X), ("A-B=1", X), ("A=${NOPE}", X)]
REDACT = [("internal-[0-9a-f]{32}", V), ("secret=\\S+", V), ("a|b", V), ("(x)+y", V),
          ("(", X), ("[a-", X), ("a{2,1}", X)]
PROTECTED = [".git/hooks", ".git/config", ".git/info", ".git/worktrees", ".git/modules",
             ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv",
             ".zprofile", ".envrc", ".vscode/tasks.json", ".git/commondir",
             ".git/config.worktree", ".git/objects/info/alternates",
             ".git/objects/info/http-alternates", ".npmrc", ".yarnrc", ".yarnrc.yml",
             ".pnpmfile.cjs"]
UNPROTECT = [(".envrc", V), (".git/hooks, .bashrc", V), (".npmrc", V), (".envrc, .envrc", V),
             (".git", X), ("bashrc", X), ("/abs/.envrc", X), (".vscode", X)]
SYMLINK = [("usr/bin /bin", V), ("/usr/lib64 /lib64", V), ("target\t/link", V),
           ("a,b /c", V), ("${HOME}/t ~/l", X), ("t   /spaced", V), ("../x /up", V),
           ("onlyone", X), ("a b c", X), ("a relative", X), ("a /", X), ("a /x/../y", X), ("", X)]
AUDIT_FILE = [("-", V), ("fd:3", V), ("${HOME}/audit.jsonl", V), ("/tmp//a.jsonl", V),
              ("@D@/out/audit.jsonl", V), ("fd:x", X), ("fd:0", Q), ("rel.jsonl", X), ("fd:", X),
              ("/a/../b", X)]
CA = [("files/ca.pem", V), ("@D@/files/ca.pem", V), ("${PROFILE_DIR}/../files/ca.pem", V),
      ("missing.pem", V), ("~/ca.pem", V), ("${NOPE}", X), ("", X)]

SOURCES = [("env:API_TOKEN", V), ("env:X_1", V), ("file:@D@/files/secret", V),
           ("file:~/secret", Q), ("file:/run//x/./secret", V), ("cmd:gh auth token", V),
           ("cmd:/bin/echo a,b", V), ("env:", X), ("env:A-B", X), ("file:rel", X),
           ("file:/a/../b", X), ("cmd:", X), ("cmd:   ", X), ("http://x", X), ("ENV:X", X)]
CRED_HOSTS = [("api.example.com", V), ("api.example.com, *.example.com", V),
              ("api.example.com api2.example.com", V), ("API.Example.com.", V),
              ("api.example.com:443", X), ("10.0.0.1", X), ("**.example.com", Q), ("*", X),
              ("[::1]", X)]
HEADER = [("Authorization: Bearer {}", V), ("x-api-key: {}", V), ("X-T:{}", V),
          ("Authorization: token {}x", V), ("Authorization Bearer {}", X),
          ("X: {} {}", X), ("X: nohole", X), (": {}", X), ("Bad Name: {}", X), ("X" * 64 + ": {}", X)]
BASIC = [("x-access-token:{}", V), ("user:{}", V), (":{}", Q), ("user:{}x", X), ("{u}:{}", X),
         ("nocolon", X), ("a:b:{}", Q)]
QUERY = [("api_key", V), ("key-1.x~", V), ("api key", X), ("a=b", X), ("", X)]
VARNAME = [("API_TOKEN", V), ("_X1", V), ("1X", X), ("A-B", X), ("", X), ("A B", X)]
CFILE = [("//registry.npmjs.org/:_authToken={}", V), ("line1\\nkey={}\\n", V),
         ("a\\tb\\\\c {} {}", V), ("{}", V), ("no hole", X), ("a\\qb {}", X), ("{} trailing\\", Q)]
PREFIX = [("sk-", V), ("ghp_", V), ("p" * 32, V), ("p" * 33, X), ("a b", X), ("a.b", X)]
LENGTH = [("40", V), ("60", V), ("128", V), ("129", X), ("abc", X), ("-1", X), ("0", X),
          ("19", X), ("+40", X), ("40 ", V)]
YESNO = [("yes", V), ("no", V), ("YES", X), ("true", X), ("", X)]
LEAK = [("deny", V), ("stop", V), ("kill", X), ("Stop", X)]


def choice_vals(names, bad):
    return [(n, V) for n in names] + [(b, X) for b in bad]


# (section, key) -> (values, list key?, scalar?)
CATALOG = {
    ("sandbox", "hostname"): HOSTNAME,
    ("sandbox", "workdir"): [(v, e) for v, e in PATHS if "," not in v] + [("/", V)],
    ("sandbox", "fallback"): choice_vals(["none", "landlock"], ["Landlock", "yes", ""]),
    ("sandbox", "nesting"): choice_vals(["false", "true"], ["yes", "1", "TRUE"]),
    ("sandbox", "uid"): [("0", V), ("1000", V), ("65534", V), ("65535", X), ("-1", X),
                         ("${UID}", X), ("abc", X), ("1.5", X), ("", X)],
    ("sandbox", "gid"): [("0", V), ("100", V), ("65534", V), ("70000", X), ("x", X)],
    ("filesystem", "ro"): PATHS, ("filesystem", "rw"): PATHS,
    ("filesystem", "ro-try"): PATHS, ("filesystem", "rw-try"): PATHS,
    ("filesystem", "tmpfs"): PATHS + [("/", X)], ("filesystem", "hide"): PATHS + [("/", X)],
    ("filesystem", "overlay"): PATHS + [("/", X)],
    ("filesystem", "changes"): [(v, e) for v, e in PATHS if "," not in v],
    ("filesystem", "protect"): [(v, V if v == "/x, /x/" else e) for v, e in PATHS] + [("/", V)],
    ("filesystem", "unprotect"): UNPROTECT,
    ("filesystem", "symlink"): SYMLINK,
    ("network", "mode"): choice_vals(["none", "proxy", "host"], ["Proxy", "off", ""]),
    ("network", "allow"): NET_RULES, ("network", "deny"): NET_RULES,
    ("network", "resolve"): RESOLVE, ("network", "methods"): METHODS,
    ("network", "capture"): [("auto", V), ("on", X), ("off", V), ("yes", X), ("AUTO", X)],
    ("network", "ca"): CA,
    ("network", "max-connections"): COUNT, ("network", "rate"): COUNT,
    ("network", "max-bytes-out"): SIZE, ("network", "max-bytes-in"): SIZE,
    ("network", "max-connections-per-host"): COUNT, ("network", "rate-per-host"): COUNT,
    ("network", "max-bytes-out-per-host"): SIZE, ("network", "max-bytes-in-per-host"): SIZE,
    ("limits", "timeout"): DUR, ("limits", "cpu"): DUR, ("limits", "memory"): SIZE,
    ("limits", "processes"): COUNT, ("limits", "open-files"): COUNT,
    ("limits", "file-size"): SIZE, ("limits", "tmpfs-size"): SIZE,
    ("limits", "changes-size"): SIZE, ("limits", "disk"): SIZE,
    ("limits", "session-timeout"): DUR, ("limits", "idle-timeout"): DUR,
    ("seccomp", "preset"): choice_vals(["default", "strict", "none"], ["Default", "loose"]),
    ("seccomp", "deny"): SYSCALLS, ("seccomp", "allow"): SYSCALLS,
    ("seccomp", "action"): choice_vals(["errno", "kill"], ["trap", "KILL"]),
    ("env", "pass"): ENV_GLOBS, ("env", "deny"): ENV_GLOBS, ("env", "set"): ENV_SET,
    ("audit", "file"): AUDIT_FILE, ("audit", "redact"): REDACT,
    ("audit", "on-failure"): choice_vals(["stop", "continue"], ["ignore", "Stop"]),
    ("audit", "event-budget"): COUNT,
    ("http", "allow"): HTTP_RULES, ("http", "deny"): HTTP_RULES,
    (CRED, "source"): SOURCES, (CRED, "hosts"): CRED_HOSTS, (CRED, "header"): HEADER,
    (CRED, "basic"): BASIC, (CRED, "query"): QUERY, (CRED, "env"): VARNAME,
    (CRED, "file-env"): VARNAME, (CRED, "file"): CFILE, (CRED, "prefix"): PREFIX,
    (CRED, "length"): LENGTH, (CRED, "add"): YESNO, (CRED, "on-leak"): LEAK,
    (CRED, "rules"): [("GET api.example.com/**", V), ("POST api.example.com/v1/*?a=*", V),
                      ("* api.example.com/x", V), ("GET other.example/**", X),
                      ("GET */x", X), ("GET api.example.com", X)],
}
LIST_KEYS = {("filesystem", k) for k in ("ro", "rw", "ro-try", "rw-try", "tmpfs", "hide",
                                         "overlay", "protect", "unprotect")}
LIST_KEYS |= {("network", k) for k in ("allow", "deny", "resolve", "methods")}
LIST_KEYS |= {("seccomp", "deny"), ("seccomp", "allow"), ("env", "pass"), ("env", "deny")}
# keys that take one value per line and may be repeated
REPEAT_KEYS = LIST_KEYS | {("filesystem", "symlink"), ("env", "set"), ("audit", "redact"),
                           ("http", "allow"), ("http", "deny"), (CRED, "hosts"), (CRED, "rules")}
FS_PATH_KEYS = ["ro", "rw", "ro-try", "rw-try", "tmpfs", "hide", "overlay"]
NET_PROXY_ONLY = ["allow", "deny", "resolve", "methods", "ca", "max-connections", "rate",
                  "max-bytes-out", "max-bytes-in", "max-connections-per-host", "rate-per-host",
                  "max-bytes-out-per-host", "max-bytes-in-per-host"]

# ---------------------------------------------------------------- writing the corpus


class Corpus:
    def __init__(self, root):
        self.root = root
        self.manifest = []  # (relative path, expectation)

    def path(self, rel):
        return os.path.join(self.root, rel)

    def write(self, rel, text, expect=Q, run=True, binary=False):
        full = self.path(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        data = text if binary else text.replace("@D@", self.root).encode("utf-8")
        with open(full, "wb") as f:
            f.write(data)
        if run:
            self.manifest.append((rel, expect))
        return full


def cred_base(name="api", drop=(), extra=()):
    """A valid credential section; drop keys under test, extra (key, value) lines added."""
    base = [("source", "env:API_TOKEN"), ("hosts", "api.example.com"),
            ("header", "Authorization: Bearer {}"), ("env", "API_TOKEN_P")]
    lines = ["[credential %s]" % name]
    lines += ["%s = %s" % kv for kv in base if kv[0] not in drop]
    lines += ["%s = %s" % kv for kv in extra]
    return "\n".join(lines) + "\n"


def key_context(section, key, mode="proxy"):
    """What a key needs beside it to be judged on its own value."""
    if section == "network" and key in NET_PROXY_ONLY or section == "http":
        return "[network]\nmode = %s\n" % mode
    return ""


def single_profile(section, key, value, mode="proxy"):
    if section == CRED:
        drop = {key}
        if key in ("basic", "query"):
            drop.add("header")
        if key == "file-env":
            extra = [("file", "tok={}")]
        else:
            extra = []
        return ("[network]\nmode = %s\n" % mode + cred_base(drop=drop, extra=extra) +
                "%s = %s\n" % (key, value))
    return key_context(section, key, mode) + "[%s]\n%s = %s\n" % (section, key, value)


def gen_support(c):
    """Files the profiles point at: a CA, a secret, home and cwd, include targets."""
    c.write("files/ca.pem", "-----BEGIN CERTIFICATE-----\nTUlJ\n-----END CERTIFICATE-----\n",
            run=False)
    sec = c.write("files/secret", "s3cr3t-value-for-the-corpus\n", run=False)
    os.chmod(sec, 0o600)
    for d in ("home", "cwd", "tmp", "data/ro1", "data/sub", "out"):
        os.makedirs(c.path(d), exist_ok=True)
    c.write("home/secret", "another-secret-value\n", run=False)
    os.chmod(c.path("home/secret"), 0o600)
    c.write("home/ca.pem", "-----BEGIN CERTIFICATE-----\nTUlJ\n-----END CERTIFICATE-----\n", run=False)
    c.write("home/inc/base.ini", "[filesystem]\nro = /usr\n[env]\npass = TERM\n", run=False)
    c.write("data/sub/child.ini", "[limits]\ntimeout = 1m\n[filesystem]\nro = /data/child\n", run=False)


def gen_bundled(c):
    src = os.path.join(REPO, "profiles")
    names = sorted(n for n in os.listdir(src) if n.endswith(".ini"))
    for n in names:
        with open(os.path.join(src, n), "rb") as f:
            c.write("bundled/" + n, f.read(), expect=V, binary=True)
    return len(names)


def gen_single(c):
    n = 0
    for (section, key), values in sorted(CATALOG.items()):
        tag = section.replace(" *", "") + "." + key
        for i, (v, exp) in enumerate(values):
            c.write("single/%s/v%02d.ini" % (tag, i), single_profile(section, key, v), expect=exp)
            n += 1
        good = [v for v, e in values if e is V]
        # a list key: several values over several lines, items repeated across lines
        if (section, key) in REPEAT_KEYS and len(good) >= 2:
            body = single_profile(section, key, good[0]) + "".join(
                "%s = %s\n" % (key, v) for v in good[1:4] + good[:1])
            exp = Q if section == "filesystem" and key not in ("protect", "unprotect") else V
            c.write("single/%s/multi.ini" % tag, body, expect=exp)
            n += 1
        # a scalar written twice in one file
        if (section, key) not in REPEAT_KEYS and good:
            body = single_profile(section, key, good[0]) + "%s = %s\n" % (key, good[-1])
            c.write("single/%s/twice.ini" % tag, body, expect=X)
            n += 1
        # two layers: the include sets it, the including file sets it again
        if good:
            inc = single_profile(section, key, good[0])
            c.write("single/%s/layer-inc.ini" % tag, inc, expect=Q)
            top = "[sandbox]\ninclude = layer-inc.ini\n" + single_profile(
                section, key, good[-1])
            c.write("single/%s/layer-top.ini" % tag, top, expect=Q)
            n += 2
        # proxy-only keys under mode none and host: errors from the final checks
        if good and (section == "http" or section == CRED or
                     (section == "network" and key in NET_PROXY_ONLY)):
            for mode in ("none", "host"):
                c.write("single/%s/mode-%s.ini" % (tag, mode),
                        single_profile(section, key, good[0], mode), expect=X)
                n += 1
    return n


def gen_special(c):
    """Format errors, includes, credentials' cross-checks, variables."""
    S = []
    add = S.append
    add(("unknown-section", "[Sandbox]\nhostname = x\n", X))
    add(("unknown-section-empty", "[nosuch]\n", X))
    add(("unknown-key", "[sandbox]\nhostnme = x\n", X))
    add(("outside-section", "hostname = x\n", X))
    add(("continuation", "[filesystem]\nro = /usr\n  /opt\n", X))
    add(("colon-form", "[sandbox]\nhostname: colon\n", V))
    add(("inline-comment", "[filesystem]\nro = /usr ; why\nrw = /a#b;c\n", V))
    add(("comments", "# c\n; c\n[sandbox]\n  # indented\nworkdir = /\n", V))
    add(("empty", "", V))
    add(("only-comment", "# nothing\n", V))
    add(("section-twice", "[env]\npass = A\n[sandbox]\nworkdir = /\n[env]\npass = B, A\n", V))
    # "set = A=" is 8 characters: 187 more make a line of 196 bytes with its newline
    add(("line-196", "[env]\nset = A=" + "x" * 187 + "\n", V))
    add(("line-197", "[env]\nset = A=" + "x" * 188 + "\n", X))
    add(("line-196-crlf", "[env]\r\nset = A=" + "x" * 186 + "\r\n", V))
    add(("line-197-crlf", "[env]\r\nset = A=" + "x" * 187 + "\r\n", X))
    add(("line-long-last", "[env]\nset = A=" + "x" * 300, X))
    add(("crlf", "[sandbox]\r\nhostname = crlf\r\n[filesystem]\r\nro = /usr\r\n", Q))
    add(("no-newline", "[sandbox]\nhostname = end", V))
    add(("empty-value", "[filesystem]\nro =\n", X))
    add(("empty-scalar", "[sandbox]\nhostname =\n", X))
    add(("quoted", "[env]\nset = A=\"x\"\npass = \"B\"\n", V))
    add(("bad-line", "[sandbox]\njust words\n", X))
    add(("bracket-open", "[sandbox\nhostname = x\n", X))
    add(("cred-bad-name", "[credential a.b]\nsource = env:X\n", X))
    add(("cred-empty-name", "[credential ]\nsource = env:X\n", X))
    add(("cred-long-name", "[credential " + "n" * 33 + "]\nsource = env:X\n", X))
    add(("cred-name-32", "[network]\nmode = proxy\n" + cred_base("n" * 32), V))
    add(("cred-no-section-keys", "[credential z]\n", Q))
    add(("cred-unknown-key", "[network]\nmode = proxy\n" + cred_base() + "secret = x\n", X))
    add(("cred-no-source", "[network]\nmode = proxy\n" + cred_base(drop={"source"}), X))
    add(("cred-no-hosts", "[network]\nmode = proxy\n" + cred_base(drop={"hosts"}), X))
    add(("cred-no-place", "[network]\nmode = proxy\n" + cred_base(drop={"header"}), X))
    add(("cred-no-way", "[network]\nmode = proxy\n" + cred_base(drop={"env"}), X))
    add(("cred-two-places", "[network]\nmode = proxy\n" + cred_base(extra=[("query", "k")]), X))
    add(("cred-env-file-env", "[network]\nmode = proxy\n" + cred_base(
        extra=[("file", "{}"), ("file-env", "API_TOKEN_P")]), X))
    add(("cred-add-query", "[network]\nmode = proxy\n" + cred_base(
        drop={"header", "env"}, extra=[("query", "k"), ("add", "yes")]), X))
    add(("cred-add-only", "[network]\nmode = proxy\n" + cred_base(
        drop={"env"}, extra=[("add", "yes")]), V))
    add(("cred-length-prefix", "[network]\nmode = proxy\n" + cred_base(
        extra=[("prefix", "p" * 20), ("length", "39")]), X))
    add(("cred-length-prefix-ok", "[network]\nmode = proxy\n" + cred_base(
        extra=[("prefix", "p" * 20), ("length", "40")]), V))
    add(("cred-same-env", "[network]\nmode = proxy\n" + cred_base("a") + cred_base("b"), X))
    add(("cred-17", "[network]\nmode = proxy\n" + "".join(
        cred_base("c%d" % i, extra=[]).replace("API_TOKEN_P", "P%d" % i) for i in range(17)), X))
    add(("cred-16", "[network]\nmode = proxy\n" + "".join(
        cred_base("c%d" % i).replace("API_TOKEN_P", "P%d" % i) for i in range(16)), V))
    add(("cred-split", "[network]\nmode = proxy\n[credential s]\nsource = env:T\n"
         "[env]\npass = A\n[credential s]\nhosts = api.example.com\nheader = X: {}\nenv = E\n", V))
    add(("cred-rule-subdomain", "[network]\nmode = proxy\n" + cred_base(
        drop={"hosts"}, extra=[("hosts", "*.example.com"), ("rules", "GET a.example.com/**"),
                               ("rules", "GET *.example.com/x")]), V))
    add(("cred-file-hides-ro", "[network]\nmode = proxy\n[filesystem]\nro = @D@/files/secret\n" +
         cred_base(drop={"source"}, extra=[("source", "file:@D@/files/secret")]), V))
    add(("cred-file-hide-twice", "[network]\nmode = proxy\n" +
         cred_base("a", drop={"source"}, extra=[("source", "file:@D@/files/secret")]) +
         cred_base("b", drop={"source"}, extra=[("source", "file:@D@/files/secret")]).replace(
             "API_TOKEN_P", "OTHER"), V))
    add(("cred-source-file-tilde", "[network]\nmode = proxy\n" + cred_base(
        drop={"source"}, extra=[("source", "file:~/secret")]), V))  # the hint's own form
    add(("nesting-strict", "[sandbox]\nnesting = true\n[seccomp]\npreset = strict\n", X))
    add(("capture-on-none", "[network]\ncapture = on\n", X))
    add(("capture-off-none", "[network]\ncapture = off\n", V))
    add(("capture-on-proxy", "[network]\nmode = proxy\ncapture = on\n", V))
    add(("audit-fd-0", "[audit]\nfile = fd:0\n", Q))
    add(("fs-dup-keys", "[filesystem]\nro = /x\nhide = /x\n", X))
    add(("fs-dup-slash", "[filesystem]\nro = /x\nrw = //x/\n", X))
    add(("fs-symlink-dup", "[filesystem]\nsymlink = a /x\nro = /x\n", X))
    add(("env-set-twice", "[env]\nset = A=1\nset = A=2\nset = B=${HOME}\n", V))
    add(("vars-all", "[sandbox]\nworkdir = ${CWD}\n[filesystem]\nro = ${HOME}/a, ${TMPDIR}/b, "
         "/u/${USER}, /id/${UID}, ${PROFILE_DIR}/c, ~, ~/d\n[env]\nset = V=${HOME}:${CWD}:"
         "${USER}:${UID}:${TMPDIR}:${PROFILE_DIR}\n", V))
    add(("var-unclosed", "[filesystem]\nro = ${HOME\n", X))
    add(("var-dollar", "[filesystem]\nro = /x/$HOME/${HOME}x\n", V))
    add(("var-in-hostname", "[sandbox]\nhostname = ${USER}\n", X))
    add(("var-in-mode", "[network]\nmode = ${X}\n", X))
    add(("nul-byte", "[sandbox]\nhostname = a\x00b\n", X))
    for name, text, exp in S:
        c.write("special/%s.ini" % name, text, expect=exp)
    # includes
    c.write("inc/leaf.ini", "[filesystem]\nro = /leaf\n[limits]\ntimeout = 10s\n", expect=V)
    c.write("inc/rel.ini", "[sandbox]\ninclude = leaf.ini\n[limits]\ntimeout = 20s\n", expect=V)
    c.write("inc/abs.ini", "[sandbox]\ninclude = @D@/inc/leaf.ini\n[filesystem]\nhide = /leaf\n",
            expect=V)
    c.write("inc/pdir.ini", "[sandbox]\ninclude = ${PROFILE_DIR}/leaf.ini\n", expect=V)
    c.write("inc/home.ini", "[sandbox]\ninclude = ~/inc/base.ini\ninclude = ${HOME}/inc/base.ini\n",
            expect=V)
    c.write("inc/sub.ini", "[sandbox]\ninclude = ../data/sub/child.ini\n[filesystem]\nrw = /data/child\n",
            expect=V)
    c.write("inc/after.ini", "[limits]\ntimeout = 1s\n[sandbox]\ninclude = leaf.ini\n", expect=V)
    c.write("inc/twice.ini", "[sandbox]\ninclude = leaf.ini\ninclude = leaf.ini\n", expect=Q)
    c.write("inc/diamond.ini", "[sandbox]\ninclude = rel.ini\ninclude = abs.ini\n", expect=Q)
    c.write("inc/missing.ini", "[sandbox]\ninclude = nosuch.ini\n", expect=X)
    c.write("inc/self.ini", "[sandbox]\ninclude = self.ini\n", expect=X)
    c.write("inc/cyc-a.ini", "[sandbox]\ninclude = cyc-b.ini\n", expect=X)
    c.write("inc/cyc-b.ini", "[sandbox]\ninclude = cyc-a.ini\n", expect=X)
    c.write("inc/in-wrong-section.ini", "[filesystem]\ninclude = leaf.ini\n", expect=X)
    c.write("inc/bad-child.ini", "[filesystem]\nro = /ok\n[limits]\nmemory = 1.5G\n", expect=X)
    c.write("inc/bad-parent.ini", "# x\n[sandbox]\ninclude = bad-child.ini\n", expect=X)
    c.write("inc/bad-grandparent.ini", "[sandbox]\n\ninclude = bad-parent.ini\n", expect=X)
    c.write("inc/dir.ini", "[sandbox]\ninclude = ../data\n", expect=X)
    c.write("inc/empty-include.ini", "[sandbox]\ninclude =\n", expect=X)
    c.write("inc/rel-dotdot.ini", "[sandbox]\ninclude = ../inc/leaf.ini\n", expect=V)
    c.write("inc/dev-null.ini", "[sandbox]\ninclude = /dev/null\n", expect=X)
    c.write("inc/unknown-var.ini", "[sandbox]\ninclude = ${NOPE}/x.ini\n", expect=X)
    # an include chain of 16 files, and one of 17
    for n in (16, 17):
        for i in range(n):
            nxt = "[sandbox]\ninclude = c%d.ini\n" % (i + 1) if i + 1 < n else ""
            c.write("chain%d/c%d.ini" % (n, i), nxt + "[env]\npass = V%d\n" % i,
                    expect=V if n == 16 else X, run=(i == 0))
    # a wide diamond: more than 256 files read
    for i in range(4):
        c.write("wide/w%d.ini" % i, "[sandbox]\n" + "include = w%d.ini\n" % (i + 1) * 7
                if i < 3 else "[env]\npass = W\n", expect=X if i == 0 else Q, run=(i <= 1))
    # a symlinked profile and a symlinked include
    c.write("link/real.ini", "[filesystem]\nro = /real\n", expect=V)
    for name, target in (("link/alias.ini", "real.ini"), ("link/dangling.ini", "nosuch.ini")):
        full = c.path(name)
        if os.path.lexists(full):
            os.unlink(full)
        os.symlink(target, full)
    c.write("link/inc-alias.ini", "[sandbox]\ninclude = alias.ini\n", expect=V)
    c.manifest += [("link/alias.ini", V), ("link/dangling.ini", X), ("nosuch/profile.ini", X)]
    # the overriding layers: scalars, paths under another key, env set, credentials
    c.write("layer/base.ini",
            "[sandbox]\nhostname = base\nworkdir = /base\n[filesystem]\nro = /data, /keep\n"
            "[network]\nmode = proxy\nallow = a.example\n[env]\nset = A=base\npass = X\n"
            "[limits]\ntimeout = 1m\nmemory = 1G\n" +
            cred_base("shared", drop={"header"}, extra=[("basic", "u:{}")]), expect=V)
    c.write("layer/top.ini",
            "[sandbox]\ninclude = base.ini\nhostname = top\n[filesystem]\nhide = /data\n"
            "[network]\nallow = a.example, b.example\nmode = proxy\n[env]\nset = A=top\n"
            "pass = X\n[limits]\ntimeout = 2m\n[credential shared]\nheader = X: {}\n"
            "hosts = api.example.com\n", expect=V)
    # a credential declared in an include: the including file names three places for it
    c.write("layer/cred-places.ini", "[sandbox]\ninclude = base.ini\n[credential shared]\n"
            "header = Y: {}\nquery = k\nbasic = v:{}\n", expect=X)
    c.write("layer/cred-places-one-file.ini", "[network]\nmode = proxy\n" +
            cred_base("one", extra=[("query", "k")]), expect=X)
    c.write("layer/none.ini", "[sandbox]\ninclude = base.ini\n[network]\nmode = none\n", expect=X)
    return len(S)


# ---------------------------------------------------------------- random combinations

HOSTS = ["api.example.com", "a.example", "b.example.org", "registry.npmjs.org", "pypi.org",
         "github.com", "bücher.example", "xn--fa-hia.de", "x.internal.example"]


def pick_valid(rng, key):
    vals = [v for v, e in CATALOG[key] if e is V]
    return rng.choice(vals)


def pick_invalid(rng, key):
    vals = [v for v, e in CATALOG[key] if e is X]
    return rng.choice(vals) if vals else pick_valid(rng, key)


def fmt_line(rng, key, value):
    r = rng.random()
    if r < 0.70:
        line = "%s = %s" % (key, value)
    elif r < 0.80:
        line = "%s=%s" % (key, value)
    elif r < 0.85:
        line = "%s: %s" % (key, value)
    elif r < 0.92:
        line = "%s = %s ; note" % (key, value)
    else:
        line = "%s\t=  %s  " % (key, value)
    return line + "\n"


def rand_path(rng, used):
    for _ in range(20):
        r = rng.random()
        if r < 0.3:
            p = "/%s/%s" % (rng.choice(["usr", "opt", "srv", "var", "data", "etc"]),
                            rng.choice(["a", "b", "lib", "share", "x y", "é", "tool"]))
        elif r < 0.5:
            p = rng.choice(["${CWD}", "${HOME}", "~", "${TMPDIR}", "${PROFILE_DIR}",
                            "@D@/data"]) + rng.choice(["", "/sub", "/.cache", "/a/b"])
        elif r < 0.6:
            p = rng.choice(["/usr", "/etc/ssl", "/tmp", "/run/x", "/home"])
        else:
            p = "/p%d%s" % (rng.randrange(40), rng.choice(["", "/", "//q", "/./r"]))
        norm = re.sub("^~", "${HOME}", p)  # the same path, another spelling
        norm = re.sub("/+", "/", norm.replace("/./", "/")).rstrip("/") or "/"
        if norm not in used:
            used.add(norm)
            return p
    return "/u%d" % len(used)


def rand_http_rule(rng, hosts):
    method = rng.choice(["GET", "POST", "*", "PUT", "DELETE", "HEAD", "M-X"])
    host = rng.choice(hosts + ["*", "*.example.com", "**.example.org", "127.0.0.1", "[::1]",
                               "[2001:db8::2]"])
    segs = []
    for _ in range(rng.randrange(0, 4)):
        segs.append(rng.choice(["v1", "*", "**", "repos", "a%20b", "x*y", "caf%C3%A9", "admin",
                                "acme", "ü"]))
    path = "/" + "/".join(segs)
    if rng.random() < 0.25:
        path += "?" + rng.choice(["q=*", "a=1&b=**", "", "x=%2F", "*"])
    return "%s %s%s" % (method, host, path)


def rand_credential(rng, idx, used_env, clean=False):
    name = rng.choice(["api", "gh", "npm", "x_1", "tok-2", "C"]) + str(idx)
    hosts = rng.sample(HOSTS[:6], rng.randrange(1, 3))
    if rng.random() < 0.2:
        hosts.append("*.example.com")
    out = ["[credential %s]\n" % name]
    keys = []
    keys.append(("source", rng.choice([v for v, e in SOURCES if e is V])))
    keys.append(("hosts", ", ".join(hosts)))
    for _ in range(rng.randrange(0, 3)):
        h = rng.choice(hosts)
        if h.startswith("*."):
            h = "api" + h[1:]
        keys.append(("rules", "%s %s/%s" % (rng.choice(["GET", "POST", "*"]), h,
                                            rng.choice(["**", "v1/*", "x", "repos/acme/**"]))))
    place = rng.choice(["header", "basic", "query"])
    keys.append((place, pick_valid(rng, (CRED, place))))
    way = rng.random()
    env = "TOK_%s" % name.upper().replace("-", "_")
    if way < 0.5 or place == "query":
        keys.append(("env", env))
    if way >= 0.35:
        keys.append(("file", pick_valid(rng, (CRED, "file"))))
        if rng.random() < 0.5:
            keys.append(("file-env", "CFG_%d" % idx))
    if place != "query" and (way >= 0.8 or rng.random() < 0.2):
        keys.append(("add", rng.choice(["yes", "no"])))
    if rng.random() < 0.4:
        pre = pick_valid(rng, (CRED, "prefix"))
        keys.append(("prefix", pre))
        if rng.random() < 0.5:
            keys.append(("length", str(rng.randrange(len(pre) + 20, 129))))
    elif rng.random() < 0.3:
        keys.append(("length", str(rng.randrange(20, 129))))
    if rng.random() < 0.4:
        keys.append(("on-leak", rng.choice(["deny", "stop"])))
    rng.shuffle(keys)
    if not clean and rng.random() < 0.08:  # a mistake in the credential
        k = rng.choice([k for k, _ in keys])
        keys = [(kk, pick_invalid(rng, (CRED, kk)) if kk == k else vv) for kk, vv in keys]
    if not clean and rng.random() < 0.05 and used_env:  # two credentials, one variable
        keys = [(k, rng.choice(sorted(used_env)) if k == "env" else v) for k, v in keys]
    used_env.update(v for k, v in keys if k == "env")
    out += [fmt_line(rng, k, v) for k, v in keys]
    return "".join(out)


def rand_section(rng, section, used_paths, hosts, only_lists=False):
    keys = sorted(k for s, k in CATALOG if s == section and
                  (not only_lists or (s, k) in REPEAT_KEYS))
    if section == "network":
        keys.remove("mode")
    lines = []
    for key in rng.sample(keys, rng.randrange(1, min(len(keys), 6) + 1)):
        times = rng.randrange(1, 4) if (section, key) in REPEAT_KEYS else 1
        for _ in range(times):
            if section == "filesystem" and key in FS_PATH_KEYS + ["changes", "protect"]:
                n = rng.randrange(1, 4) if (section, key) in LIST_KEYS else 1
                value = ", ".join(rand_path(rng, used_paths if key in FS_PATH_KEYS else set())
                                  for _ in range(n))
            elif section == "filesystem" and key == "symlink":
                link = rand_path(rng, used_paths)
                while " " in link or link.startswith("~"):  # LINK: one word, not expanded
                    link = rand_path(rng, used_paths)
                value = "%s %s" % (rng.choice(["usr/bin", "/t", "../x", "a,b"]), link)
            elif section == "filesystem" and key == "unprotect":
                value = ", ".join(rng.sample(PROTECTED, rng.randrange(1, 4)))
            elif section == "network" and key in ("allow", "deny"):
                n = rng.randrange(1, 4)
                value = ", ".join(rng.choice([rng.choice(hosts) + rng.choice(["", ":443", ":80"]),
                                              pick_valid(rng, (section, key))]) for _ in range(n))
            elif section == "http":
                value = rand_http_rule(rng, hosts)
            else:
                value = pick_valid(rng, (section, key))
            lines.append(fmt_line(rng, key, value))
    return "[%s]\n" % section + "".join(lines)


def rand_profile(rng, idx, libs, here, clean=False):
    """One random profile; libs: corpus-relative include targets; here: its directory;
    clean: no deliberate mistakes (an include target, whose error would end every profile
    that includes it)."""
    used_paths = set()
    hosts = rng.sample(HOSTS, 3)
    parts = []
    if libs and rng.random() < 0.35:
        inc = []
        for lib in rng.sample(libs, rng.randrange(1, min(3, len(libs)) + 1)):
            form = rng.random()
            if form < 0.5:
                inc.append(os.path.relpath(lib, here))
            elif form < 0.75:
                inc.append("@D@/" + lib)
            else:
                inc.append("${PROFILE_DIR}/" + os.path.relpath(lib, here))
        parts.append("[sandbox]\n" + "".join("include = %s\n" % i for i in inc))
    r = rng.random()
    mode = "proxy" if r < 0.55 else "none" if r < 0.7 else "host" if r < 0.8 else None
    if mode in ("none", "host") and (clean or (parts and rng.random() < 0.7)):
        mode = None  # mostly leave an include's proxy mode alone
    sections = [s for s in ("sandbox", "filesystem", "network", "limits", "seccomp", "env",
                            "audit", "http") if rng.random() < 0.45]
    if mode and "network" not in sections:
        sections.append("network")
    rng.shuffle(sections)
    for section in sections:
        text = rand_section(rng, section, used_paths, hosts)
        if section == "network" and mode:
            if mode != "proxy" and rng.random() < 0.85:
                text = "[network]\n"  # rules without proxy only sometimes: mostly errors
            text = text.replace("[network]\n", "[network]\nmode = %s\n" % mode, 1)
        if section == "http" and mode != "proxy" and (clean or rng.random() < 0.8):
            continue
        if section == "sandbox" and re.search(r"nesting\s*[=:]\s*true", text):
            if clean or rng.random() < 0.7:
                text = re.sub(r"(nesting\s*[=:]\s*)true", r"\1false", text)
        if section == "network" and not mode and clean:
            text = "[network]\nmode = proxy\n" + text[len("[network]\n"):]
        parts.append(text)
    if mode == "proxy" and rng.random() < 0.3:
        used_env = set()
        for i in range(rng.randrange(1, 4)):
            parts.append(rand_credential(rng, i, used_env, clean))
    if rng.random() < 0.15 and parts:  # a section repeated: keys add up
        parts.append(rand_section(rng, rng.choice(["env", "filesystem", "seccomp"]), used_paths,
                                  hosts, only_lists=True))
    if not clean and rng.random() < 0.07:  # one invalid value somewhere
        key = rng.choice(sorted(CATALOG))
        sec = "credential bad" if key[0] == CRED else key[0]
        parts.append("[%s]\n%s = %s\n" % (sec, key[1], pick_invalid(rng, key)))
    if not clean and rng.random() < 0.05:  # a path listed twice in one file
        p = rand_path(rng, set())
        parts.append("[filesystem]\nro = %s\ntmpfs = %s\n" % (p, p))
    if rng.random() < 0.1:
        parts.insert(0, "# profile %d\n; generated\n\n" % idx)
    text = "\n".join(parts)
    return "\n".join(l for l in text.split("\n") if len(l) < 190) + "\n"


def gen_random(c, rng, count):
    libs = []
    for i in range(80):
        rel = "lib/l%02d.ini" % i
        text = rand_profile(rng, i, libs[:], "lib", clean=True)
        c.write(rel, text, expect=Q)
        libs.append(rel)
    for i in range(count - 80):
        sub = "combo/%02d" % (i // 500)
        rel = "%s/r%04d.ini" % (sub, i)
        text = rand_profile(rng, i, libs, sub)
        if rng.random() < 0.2:  # layers: override what an include set
            lib = rng.choice(libs)
            over = profile_lines_overrides(c.path(lib), rng, text_keys(text), text)
            if over:
                text = "[sandbox]\ninclude = %s\n" % os.path.relpath(lib, sub) + text + over
        c.write(rel, text, expect=Q)


def profile_lines_overrides(path, rng, have, text):
    """Sets again some scalars and paths an included file set (a later layer overrides)."""
    section, out = "", []
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if s.startswith("[") and s.endswith("]"):
                section = s[1:-1]
                continue
            m = re.match(r"([a-z-]+)\s*[=:]\s*(.*?)(\s+;.*)?$", s)
            if not m or section.startswith("credential") or rng.random() < 0.5:
                continue
            key, value = m.group(1), m.group(2)
            if (section, key) in have or value in text:
                continue  # set in the including file already: that would be twice in a file
            have.add((section, key))
            if (section, key) in CATALOG and (section, key) not in REPEAT_KEYS and key != "mode":
                out.append("[%s]\n%s = %s\n" % (section, key, pick_valid(rng, (section, key))))
            elif section == "filesystem" and key in FS_PATH_KEYS and "," not in value:
                out.append("[filesystem]\n%s = %s\n" % (rng.choice(FS_PATH_KEYS[:6]), value))
    return "\n" + "".join(out) if out else ""


def generate(root, seed, count):
    root = os.path.realpath(root)
    if os.path.realpath(root).startswith(REPO + os.sep):
        sys.exit("explain-corpus: keep the corpus out of the repository (%s)" % root)
    if os.path.exists(root):
        if os.listdir(root) and not os.path.exists(os.path.join(root, "MANIFEST")):
            sys.exit("explain-corpus: %s is not empty and holds no MANIFEST: not emptying it" % root)
        shutil.rmtree(root)
    os.makedirs(root)
    c = Corpus(root)
    rng = random.Random(seed)
    gen_support(c)
    nb = gen_bundled(c)
    ns = gen_single(c)
    nx = gen_special(c)
    rest = max(count - len(c.manifest), 100)
    gen_random(c, rng, rest)
    with open(c.path("MANIFEST"), "w", encoding="utf-8") as f:
        f.write("# explain-corpus seed %d; profile<TAB>expectation (ok, error, ?)\n" % seed)
        for rel, exp in c.manifest:
            f.write("%s\t%s\n" % (rel, {V: "ok", X: "error", Q: "?"}[exp]))
    print("explain-corpus: wrote %d profiles to %s (%d bundled, %d single-key, %d special, "
          "%d random)" % (len(c.manifest), root, nb, ns, nx, rest))
    return root

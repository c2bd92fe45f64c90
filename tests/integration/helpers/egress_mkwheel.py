# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# egress_mkwheel.py DIR NAME VERSION VALUE [FILES_URL]: writes a minimal pure-Python wheel of
# package NAME (NAME/__init__.py sets VALUE) and a PEP 503 simple index for it under DIR:
#   DIR/packages/NAME-VERSION-py3-none-any.whl
#   DIR/simple/index.html, DIR/simple/NAME/index.html (links with #sha256=)
# The link to the wheel is relative, or FILES_URL/packages/... when given (as PyPI links to
# files.pythonhosted.org).
# Python's standard library only: no setuptools, no wheel, no network.
import base64, hashlib, os, sys, zipfile

root, name, version, value = sys.argv[1:5]
files_url = sys.argv[5] if len(sys.argv) > 5 else "../.."
dist = f"{name}-{version}"
info = f"{dist}.dist-info"
files = {
    f"{name}/__init__.py": f"VALUE = {value!r}\n".encode(),
    f"{info}/METADATA": (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                         f"Summary: agentbox egress test package\n").encode(),
    f"{info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: agentbox-test\n"
                      b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
}


def digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={h},{len(data)}"


record = "".join(f"{p},{digest(d)}\n" for p, d in files.items()) + f"{info}/RECORD,,\n"
files[f"{info}/RECORD"] = record.encode()

os.makedirs(f"{root}/packages", exist_ok=True)
os.makedirs(f"{root}/simple/{name}", exist_ok=True)
whl = f"{dist}-py3-none-any.whl"
with zipfile.ZipFile(f"{root}/packages/{whl}", "w", zipfile.ZIP_DEFLATED) as z:
    for p, d in files.items():
        z.writestr(p, d)
with open(f"{root}/packages/{whl}", "rb") as f:
    sha = hashlib.sha256(f.read()).hexdigest()
with open(f"{root}/simple/index.html", "w") as f:
    f.write(f'<!DOCTYPE html><html><body><a href="{name}/">{name}</a></body></html>\n')
with open(f"{root}/simple/{name}/index.html", "w") as f:
    f.write(f'<!DOCTYPE html><html><body>'
            f'<a href="{files_url}/packages/{whl}#sha256={sha}">{whl}</a></body></html>\n')
print(whl)

#!/bin/sh
# dashboard.html in Debian's headless Chromium: the page of a compiled model and of a
# failed compile load without script errors (caught by the page into #errors, and none
# in Chromium's console log), draw their plots (<body data-rendered>), use no network,
# and render to a screenshot that is not blank.
#   run.sh MNCC
set -u
mncc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
g=$root/tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/xdg"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL dashboard $1: $2"; }
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
    bad chromium "no chromium (Debian package chromium; make check installs it)"
    echo "dashboard: $pass passed, $fail failed"
    exit 1
fi
# browse NAME PAGE: the DOM after the scripts ran, the console log, a screenshot
browse() {
    timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile-$1" --enable-logging=stderr --v=0 \
        --dump-dom "file://$2" >"$tmp/$1.dom" 2>"$tmp/$1.log"
    timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile-$1s" --hide-scrollbars --window-size=1400,1600 \
        --screenshot="$tmp/$1.png" "file://$2" >/dev/null 2>&1
}
# checks NAME WANT-RENDERED: no caught or logged script error, the plots drawn, a
# screenshot with more than a few colours
checks() {
    if grep -q '<div id="errors"></div>' "$tmp/$1.dom" && ! grep -Eq 'Uncaught|CONSOLE.*[Ee]rror' "$tmp/$1.log"; then ok "$1-no-errors"
    else bad "$1-no-errors" "$(grep -o '<div id="errors"[^<]*' "$tmp/$1.dom") $(grep -E 'Uncaught|CONSOLE' "$tmp/$1.log" | head -3)"; fi
    got=$(sed -n 's/.*data-rendered="\([^"]*\)".*/\1/p' "$tmp/$1.dom")
    [ "$got" = "$2" ] && ok "$1-rendered" || bad "$1-rendered" "drew '$got', expected '$2'"
    /usr/bin/python3 - "$tmp/$1.png" <<'PY' && ok "$1-screenshot" || bad "$1-screenshot" "blank or unreadable"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
w, h, depth, ctype = struct.unpack(">IIBB", d[16:26])
idat, i = b"", 8
while i < len(d):
    n, t = struct.unpack(">I4s", d[i:i + 8])
    if t == b"IDAT":
        idat += d[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}[ctype]
stride = 1 + w * bpp
# unfiltered byte values vary only where the page has content; count distinct
# filtered rows as a cheap measure of what is drawn
rows = {raw[r * stride:(r + 1) * stride] for r in range(h)}
assert w >= 1000 and len(rows) > 100, (w, h, len(rows))
PY
}

"$mncc" "$g/ok_transformer.onnx" -o "$tmp/ok" --machine tiny -O plan_only=true >/dev/null 2>&1 || bad compile "ok_transformer did not compile"
# nothing to fetch: no src or href, no url(), no address but the SVG namespace name
if sed 's|http://www.w3.org/2000/svg||' "$tmp/ok/dashboard.html" | grep -Eq ' src=| href=|url\(|https?://|@import'; then bad self-contained "the page loads something"
else ok self-contained; fi
# the LM figures the page plots are the schedule's own: its most held and its address
# peaks per bank equal report.json's lm*_load_lw and lm*_peak_lw (on a 600-node MLP,
# whose values are forgotten, moved and updated in place)
/usr/bin/python3 "$root/bench/gen_graph.py" mlp 600 "$tmp/mlp.onnx" >/dev/null 2>&1
"$mncc" "$tmp/mlp.onnx" -o "$tmp/mlp" --cache-dir none >/dev/null 2>&1 || bad compile "the 600-node MLP did not compile"
for d in ok mlp; do
    why=$(/usr/bin/python3 - "$tmp/$d" <<'PY'
import json, re, sys
page = open(sys.argv[1] + "/dashboard.html").read()
data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1).replace("<\\/", "</"))
fig = [p for p in json.load(open(sys.argv[1] + "/report.json"))["passes"] if p["name"] == "schedule"][0]["figures"]
want = ([fig["lm0_load_lw"], fig["lm1_load_lw"]], [fig["lm0_peak_lw"], fig["lm1_peak_lw"]])
got = (data["lm_load"], data["lm_peak"])
print("" if got == want and max(want[0]) > 0 else "page %s, schedule %s" % (got, want))
PY
)
    [ -z "$why" ] && ok "$d-lm-figures" || bad "$d-lm-figures" "$why"
done
browse ok "$tmp/ok/dashboard.html"
checks ok "timeline lm nodes"
grep -q 'id="plot-timeline"' "$tmp/ok.dom" && grep -q '<polyline' "$tmp/ok.dom" && grep -q 'Biggest DRAM transfers' "$tmp/ok.dom" && ok ok-content || bad ok-content "plots or tables missing"

"$mncc" "$g/bad_shape_mismatch.onnx" -o "$tmp/bad" >/dev/null 2>&1 && bad failed-compile "bad_shape_mismatch compiled"
browse bad "$tmp/bad/dashboard.html"
checks bad "none"
grep -q 'id="compile-error"' "$tmp/bad.dom" && grep -q 'cannot be broadcast' "$tmp/bad.dom" && ok bad-shows-error || bad bad-shows-error "the error is not on the page"
[ -n "${MNCC_KEEP_SCREENSHOT:-}" ] && cp "$tmp/ok.png" "$MNCC_KEEP_SCREENSHOT"
echo "dashboard: $pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env python3
# Summarise the r8 logs: build rc, fallback, mgb-rewrite warnings, compiler-warning differences.
import os, re, sys, collections
R = '/work/thirdparty/r8'
L = R + '/logs'
names = []
for line in open(R + '/recipe.sh'):
    m = re.match(r'^"(c\d\d_[^|]+)\|', line)
    if m: names.append(m.group(1))
fallback_re = re.compile(r'NOT rewritten|compiled as written|unrewritten|not-rewritten|falls? back|could not be rewritten', re.I)
warn_re = re.compile(r'warning', re.I)
def rc(path):
    if not os.path.exists(path): return None
    m = re.search(r'^# rc=(\d+)', open(path, errors='replace').read(), re.M)
    return int(m.group(1)) if m else None
def norm(l):
    l = re.sub(r'/tmp/[^ :()]*/', '', l)
    l = re.sub(r'/work/thirdparty/r8/build/(orig|mgb)/', 'BUILD/', l)
    l = re.sub(r'\S*/([^/ :()]+)([:(])', r'\1\2', l)
    return l.strip()
rows = []
for n in names:
    o, g = L + f'/{n}.orig.log', L + f'/{n}.mgb.log'
    ro, rg = rc(o), rc(g)
    if ro is None and rg is None: continue
    otext = open(o, errors='replace').read().splitlines() if os.path.exists(o) else []
    gtext = open(g, errors='replace').read().splitlines() if os.path.exists(g) else []
    fb = [l for l in gtext if fallback_re.search(l)]
    dl = L + f'/{n}.driver.log'
    if os.path.exists(dl) and os.path.getsize(dl): fb.append('driver.log: ' + open(dl).read().strip())
    errs = [l for l in gtext if 'error:' in l or 'error ' in l and 'Error' not in l]
    ow = collections.Counter(norm(l) for l in otext if warn_re.search(l))
    gw = [l for l in gtext if warn_re.search(l)]
    rw = [l for l in gw if re.match(r'^\S+:\d+:\d+: warning:', l) and ow[norm(l)] == 0]
    extra = [l for l in gw if ow[norm(l)] == 0 and l not in rw and not fallback_re.search(l)]
    missing = [k for k in ow if k not in {norm(l) for l in gw}]
    rows.append((n, ro, rg, fb, rw, extra, missing, errs))
for n, ro, rg, fb, rw, extra, missing, errs in rows:
    st = 'PASS' if ro == 0 and rg == 0 and not fb and not extra else 'FAIL'
    print(f'{n:28s} orig_rc={ro} mgb_rc={rg} fallback={"yes" if fb else "no"} rewrite_warnings={len(rw)} extra_compiler_warnings={len(extra)} orig_only_warnings={len(missing)} -> {st}')
    if '-v' in sys.argv:
        for tag, ls in (('FALLBACK', fb), ('RWARN', rw), ('EXTRA', extra), ('ORIGONLY', missing), ('ERR', errs)):
            for l in ls[:8]: print(f'    {tag}: {l[:300]}')

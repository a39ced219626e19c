#!/usr/bin/env python3
# Summarise the r15 logs (adapted from round10/analyze.py): build rc, fallback, mgb-rewrite warnings,
# compiler warnings only the drop-in build prints. Names: every logs/NAME.orig.log (configure logs excluded).
import os, re, sys, glob, collections
R = '/work/thirdparty/r15/b'
L = R + '/logs'
names = sorted({n for n in {os.path.basename(p)[:-len('.orig.log')] for p in glob.glob(L + '/*.orig.log')}  if '.configure' not in n})
order = open(R + '/recipe.sh').read()
fallback_re = re.compile(r'NOT rewritten|compiled as written|unrewritten|not-rewritten|falls? back|could not be rewritten|outside --root', re.I)
warn_re = re.compile(r'warning', re.I)
def rc(path):
    if not os.path.exists(path): return None
    m = re.search(r'^# rc=(\d+)', open(path, errors='replace').read(), re.M)
    return int(m.group(1)) if m else None
def norm(l):
    l = re.sub(r'/tmp/[^ :()]*/', '', l)
    l = re.sub(r'/work/thirdparty/r15/b/build/(orig|mgb)/', 'BUILD/', l)
    l = re.sub(r'\S*/([^/ :()]+)([:(])', r'\1\2', l)
    l = re.sub(r'build-mgb', 'build', l)
    return l.strip()
rows = []
for n in names:
    o, g = L + f'/{n}.orig.log', L + f'/{n}.mgb.log'
    ro, rg = rc(o), rc(g)
    otext = open(o, errors='replace').read().splitlines()[1:] if os.path.exists(o) else []
    gtext = open(g, errors='replace').read().splitlines()[1:] if os.path.exists(g) else []
    fb = [l for l in gtext if fallback_re.search(l)]
    dl = L + f'/{n}.driver.log'
    if os.path.exists(dl) and os.path.getsize(dl): fb.append('driver.log: ' + open(dl).read().strip())
    errs = [l for l in gtext if re.search(r'\berror\b|Error [0-9]|fatal', l) and ' 0 errors' not in l]
    ow = collections.Counter(norm(l) for l in otext if warn_re.search(l))
    gw = [l for l in gtext if warn_re.search(l)]
    rw = [l for l in gw if re.match(r'^\S+:\d+:\d+: warning:', l) and ow[norm(l)] == 0]
    extra = [l for l in gw if ow[norm(l)] == 0 and l not in rw and not fallback_re.search(l)]
    missing = [k for k in ow if k not in {norm(l) for l in gw}]
    rows.append((n, ro, rg, fb, rw, extra, missing, errs, sum(ow.values())))
for n, ro, rg, fb, rw, extra, missing, errs, nw in rows:
    st = 'PASS' if ro == 0 and rg == 0 and not fb and not errs else 'FAIL'
    print(f'{n:36s} orig_rc={ro} mgb_rc={rg} fallback={"yes" if fb else "no"} rewrite_warnings={len(rw)} extra_compiler_warnings={len(extra)} orig_warning_lines={nw} orig_only_warnings={len(missing)} -> {st}')
    if '-v' in sys.argv:
        for tag, ls in (('FALLBACK', fb), ('RWARN', rw), ('EXTRA', extra), ('ORIGONLY', missing), ('ERR', errs)):
            for l in ls[:8]: print(f'    {tag}: {l[:300]}')

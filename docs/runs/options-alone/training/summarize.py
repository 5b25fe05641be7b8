import json, glob, os, math
def wilson(w, n, z=1.96):
    if n == 0: return (0, 0)
    p = w / n; d = 1 + z*z/n; c = p + z*z/(2*n); r = z*math.sqrt(p*(1-p)/n + z*z/(4*n*n))
    return ((c - r)/d, (c + r)/d)
def arena(files):
    w = l = d = 0
    for f in files:
        if not os.path.exists(f) or os.path.getsize(f) == 0: continue
        j = json.loads(open(f).read().strip().splitlines()[-1])
        w += j['a_wins']; l += j['b_wins']; d += j.get('draws', 0)
    n = w + l + d
    if n == 0: return '-'
    lo, hi = wilson(w + d/2, n)
    return f"{w}-{l} ({100*(w+d/2)/n:.1f}%, {100*lo:.1f}..{100*hi:.1f})"
if __name__ == '__main__':
    os.chdir('/tmp/study')
    print("| net | steps | s | train policy | held-out policy | value | ownership | gen-9 policy | value | arena vs base |")
    for n in sorted(glob.glob('nets/*.safetensors')):
        b = os.path.basename(n)[:-12]
        rows = open(f'nets/{b}.csv').read().strip().splitlines()
        last = rows[-1].split(',')
        ev = [json.loads(l) for l in open(f'eval/{b}.json')] if os.path.exists(f'eval/{b}.json') else []
        e = lambda i, k: f"{ev[i][k]:.4f}" if len(ev) > i else '-'
        print(f"| {b} | {last[0]} | {last[1]} | {float(last[2]):.4f} | {e(0,'policy')} | {e(0,'value')} | {e(0,'ownership')} | {e(1,'policy')} | {e(1,'value')} | {arena(glob.glob(f'arena/{b}-*.json'))} |")

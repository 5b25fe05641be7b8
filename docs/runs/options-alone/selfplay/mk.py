import json, os, sys
# mk.py NAME GAMES [gumbel=M] [cap] [forced]
name, games = sys.argv[1], int(sys.argv[2])
opts = sys.argv[3:]
src = json.load(open('/tmp/runs/9x9-90min/loop.json'))
c = dict(src['config'])
c['generations'] = 2; c['games'] = games
c['gate_games'] = 2; c['anchor_games'] = 0; c['gtp_anchors'] = []
c.pop('gumbel', None); c.pop('playout_cap', None); c.pop('forced_playouts', None)
for o in opts:
    if o.startswith('gumbel='): c['gumbel'] = int(o.split('=')[1])
    if o == 'cap': c['playout_cap'] = {'full_fraction': 0.25, 'cheap_visits': 8}
    if o == 'forced': c['forced_playouts'] = True
g0 = dict(src['generations'][0]); g0['anchors'] = []
os.makedirs(name, exist_ok=True)
if not os.path.exists(f'{name}/gen=0'):
    os.symlink('/tmp/runs/9x9-90min/gen=0', f'{name}/gen=0')
json.dump({'config': c, 'best': 0, 'generations': [g0]}, open(f'{name}/loop.json', 'w'), indent=1)
flags = f"--size 9 --komi 7.5 --generations 2 --games {games} --teacher 400 --visits 32 --global-pooling --score-head --blocks 4 --channels 48 --steps 3000 --batch 128 --window 3 --gate-games 2 --gate-visits 32 --anchor-games 0"
for o in opts:
    if o.startswith('gumbel='): flags += f" --gumbel {o.split('=')[1]}"
    if o == 'cap': flags += " --full-fraction 0.25 --cheap-visits 8"
    if o == 'forced': flags += " --forced-playouts"
print(flags)

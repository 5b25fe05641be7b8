import json, os, sys
# The recipe's loop, reusing the 90-minute run's generation-0 self-play (the same teacher
# games: same seed, threads and teacher settings), so that its clock starts at training.
window = int(sys.argv[1])
src = json.load(open('/tmp/runs/9x9-90min/loop.json'))
c = dict(src['config'])
c.update(generations=12, blocks=3, channels=32, steps=6000, lr=0.003, lr_schedule='cosine', window=window)
c.pop('global_pooling', None)
g0 = {'number': 0, 'selfplay': src['generations'][0]['selfplay']}
d = 'recipe'
os.makedirs(f'{d}/gen=0', exist_ok=True)
if not os.path.exists(f'{d}/gen=0/selfplay'):
    os.symlink('/tmp/runs/9x9-90min/gen=0/selfplay', f'{d}/gen=0/selfplay')
json.dump({'config': c, 'best': None, 'generations': [g0]}, open(f'{d}/loop.json', 'w'), indent=1)
print(f"--size 9 --komi 7.5 --generations 12 --games 1200 --teacher 400 --gumbel 16 --visits 32 --full-fraction 0.25 --cheap-visits 8 --score-head --blocks 3 --channels 32 --steps 6000 --batch 128 --lr 3e-3 --lr-schedule cosine --window {window} --gate-games 40 --gate-visits 32 --anchor-games 10 --gtp-anchor '/usr/games/gnugo --mode gtp --level 1'")

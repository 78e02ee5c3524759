"""Per answer token of a few SkillWorld val episodes (one per family): CE and argmax with no adapter and
with a hypernetwork's adapter (no skill in context), to see which tokens the adapter gets wrong.
  training/.venv/bin/python training/scripts/experiments/answer_tokens.py CKPT [--set overrides for the net]
(docs/results.md, "Round 5 experiments")."""
import os, json, sys, torch, torch.nn.functional as F
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / 'training/src'))
from pskills_train.hyper.base import load_base
from pskills_train.hyper.loss import token_losses
from pskills_train.hyper.config import HyperConfig
from pskills_train.hyper.net import build_hypernet
from pskills_train.hyper.compile import compile_skill
from pskills_train.hyper.examples import chat_example
from pskills_train.model import stack_rows
from pskills_train.tokenizer import CHAT_TEMPLATE
torch.set_num_threads(1)
ck_path = sys.argv[1]; extra = [a for a in sys.argv[2:] if a != '--set']
cfg = HyperConfig.load(str(ROOT / 'training/configs/hyper/hyper9.json'), extra)
lm, tok, _ = load_base(os.environ.get('BASE', str(ROOT / 'training/.cache/runs/base5/model')), str(ROOT / 'training/.cache/tokenizer/tokenizer.json'))
net = build_hypernet(lm.cfg, cfg.net); ck = torch.load(ck_path, map_location='cpu', weights_only=False)
net.load_state_dict(ck['model']); net.eval()
recs = [json.loads(l) for l in open(str(ROOT / 'training/.cache/episodes/sw-real-val/stage2.jsonl'))]
sw = [r for r in recs if r['source'].startswith('skillworld')]
seen, pick = set(), []
for r in sw:
    if r['source'] not in seen and len(r['messages']) == 2:
        seen.add(r['source']); pick.append(r)
for r in pick[:6]:
    ex = chat_example(tok, CHAT_TEMPLATE, r['messages'], [], 320)
    ad = compile_skill(lm, net, tok, r['skill_text'], 512, 64)
    seq = ex.prompt + ex.target
    ids = torch.tensor([seq[:-1]]); pos = torch.arange(ids.shape[1])[None]
    with torch.no_grad():
        lg0 = lm(ids, torch.ones_like(ids), pos, None, None)[0][0]
        lg1 = lm(ids, torch.ones_like(ids), pos, None, stack_rows(lm.cfg, [ad]))[0][0]
    print('==', r['source'], repr(r['messages'][-1]['content']))
    for t in range(len(seq) - 1):
        if not ex.labels_mask[t + 1]: continue
        y = seq[t + 1]
        c0 = F.cross_entropy(lg0[t:t+1], torch.tensor([y])).item(); c1 = F.cross_entropy(lg1[t:t+1], torch.tensor([y])).item()
        print(f'  {tok.decode([y])!r:14} none {c0:5.2f}{"*" if lg0[t].argmax()==y else " "} param {c1:5.2f}{"*" if lg1[t].argmax()==y else " "}  param-argmax {tok.decode([int(lg1[t].argmax())])!r}')

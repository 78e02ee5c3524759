"""  training/.venv/bin/python training/scripts/experiments/kv_memory.py N R ALPHAS LAYERS [center]   (e.g. 12 32 0.1,0.3 3 center)
Feasibility: an adapter written from the skill's own activations at its most surprising positions
(key = the last layer's down_proj input at t, value = tied embedding of token t+1) — does it carry the
made-up words the hypernet's adapter misses? Added (rank-concatenated) to the hypernet's adapter."""
import os, json, sys, random, torch, torch.nn.functional as F
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / 'training/src'))
from pskills_train.hyper.base import load_base
from pskills_train.hyper.config import HyperConfig
from pskills_train.hyper.net import build_hypernet
from pskills_train.hyper.compile import compile_skill, encode_ids
from pskills_train.hyper.examples import chat_example
from pskills_train.model import stack_rows
from pskills_train.tokenizer import CHAT_TEMPLATE
torch.set_num_threads(1)
N = int(sys.argv[1]); R = int(sys.argv[2]); alphas = [float(a) for a in sys.argv[3].split(',')]; layers = [int(x) for x in sys.argv[4].split(',')]
center = len(sys.argv) > 5 and sys.argv[5] == 'center'
cfg = HyperConfig.load(str(ROOT / 'training/configs/hyper/hyper9.json'))
lm, tok, _ = load_base(os.environ.get('BASE', str(ROOT / 'training/.cache/runs/base5/model')), str(ROOT / 'training/.cache/tokenizer/tokenizer.json'))
net = build_hypernet(lm.cfg, cfg.net); net.load_state_dict(torch.load(str(ROOT / 'training/.cache/runs/hyper7/recal.pt'), map_location='cpu', weights_only=False)['model']); net.eval()
recs = [json.loads(l) for l in open(str(ROOT / 'training/.cache/episodes/sw-real-val/stage2.jsonl'))]
sw = [r for r in recs if r['source'].startswith('skillworld') and len(r['messages']) == 2]
random.Random(0).shuffle(sw)
seen, pick = set(), []
for r in sw:
    if r['skill'] not in seen: seen.add(r['skill']); pick.append(r)
pick = pick[:N]
E = lm.lm_head.weight  # [V, d] tied
caps = {}
hooks = [lm.model.layers[l].mlp.down_proj.register_forward_hook(lambda m, i, o, l=l: caps.__setitem__(l, i[0].detach())) for l in layers]

def run(ids, lora):
    x = torch.tensor([ids]); pos = torch.arange(x.shape[1])[None]
    return lm(x, torch.ones_like(x), pos, None, lora)[0][0]

def memory(skill_ids, alpha):
    lg = run(skill_ids, None)
    ce = F.cross_entropy(lg[:-1], torch.tensor(skill_ids[1:]), reduction='none')  # surprise of t+1 at t
    top = ce.topk(min(R, ce.numel())).indices
    out = {}
    for l in layers:
        u = caps[l][0, :-1]  # [n-1, 704]
        keys = u[top]
        if center: keys = keys - u.mean(0)
        a = (keys / keys.pow(2).sum(-1, keepdim=True)).t()  # [704, R]: x·a = 1 at the stored key
        b = alpha * F.normalize(E[torch.tensor(skill_ids[1:])[top]], dim=-1) * (lm.cfg.hidden_size ** 0.5)  # [R, d]
        out[(l, 'down')] = (a, b / len(layers))
    return out

def evaluate(ex, adapter):
    seq = ex.prompt + ex.target
    lg = run(seq[:-1], stack_rows(lm.cfg, [adapter]) if adapter else None)
    keep = torch.tensor(ex.labels_mask[1:], dtype=torch.bool); y = torch.tensor(seq[1:])
    return float(F.cross_entropy(lg[keep], y[keep])), bool((lg[keep].argmax(-1) == y[keep]).all()), float((lg[keep].argmax(-1) == y[keep]).float().mean())

def cat(a1, a2):
    out = dict(a1)
    for k, (a, b) in a2.items():
        if k in out:
            a0, b0 = out[k]; out[k] = (torch.cat([a0, a], 1), torch.cat([b0, b], 0))
        else: out[k] = (a, b)
    return out

res = {k: [] for k in ['none', 'hyper'] + [f'hyper+mem{a}' for a in alphas] + [f'mem{a}' for a in alphas]}
with torch.no_grad():
    for r in pick:
        ex = chat_example(tok, CHAT_TEMPLATE, r['messages'], [], 320)
        skill_ids = encode_ids(tok, r['skill_text'])[:1024]
        hy = compile_skill(lm, net, tok, r['skill_text'], 512, 64)
        res['none'].append(evaluate(ex, None)); res['hyper'].append(evaluate(ex, hy))
        for a in alphas:
            mem = memory(skill_ids, a)
            res[f'hyper+mem{a}'].append(evaluate(ex, cat(hy, mem))); res[f'mem{a}'].append(evaluate(ex, mem))
for k, v in res.items():
    print(f'{k:14} nll {sum(x[0] for x in v)/len(v):.3f} exact {sum(x[1] for x in v)}/{len(v)} tok-acc {sum(x[2] for x in v)/len(v):.3f}')

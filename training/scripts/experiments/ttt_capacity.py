"""  training/.venv/bin/python training/scripts/experiments/ttt_capacity.py N K LR   (e.g. 4 40 5e-3)
Capacity probe: can a rank-8 LoRA on the base carry a SkillWorld skill's made-up words at all?
Per val episode: answer NLL / greedy exact (teacher forced) with no adapter, the hypernet's adapter,
and LoRAs fitted by K Adam steps (test-time training) on (a) the skill text's LM loss, (b) the episode's
answer itself (sanity: the LoRA can hold it)."""
import os, json, sys, time, random, torch, torch.nn.functional as F
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
torch.set_num_threads(1); torch.manual_seed(0)
N, K, LR, RANK = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), 8
cfg = HyperConfig.load(str(ROOT / 'training/configs/hyper/hyper9.json'))
lm, tok, _ = load_base(os.environ.get('BASE', str(ROOT / 'training/.cache/runs/base5/model')), str(ROOT / 'training/.cache/tokenizer/tokenizer.json'))
for p in lm.parameters(): p.requires_grad_(False)
net = build_hypernet(lm.cfg, cfg.net); net.load_state_dict(torch.load(str(ROOT / 'training/.cache/runs/hyper7/recal.pt'), map_location='cpu', weights_only=False)['model']); net.eval()
recs = [json.loads(l) for l in open(str(ROOT / 'training/.cache/episodes/sw-real-val/stage2.jsonl'))]
sw = [r for r in recs if r['source'].startswith('skillworld') and len(r['messages']) == 2]
random.Random(0).shuffle(sw)
by_skill, pick = set(), []
for r in sw:
    if r['skill'] in by_skill: continue
    by_skill.add(r['skill']); pick.append(r)
pick = pick[:N]

def answer_eval(ex, lora):
    seq = ex.prompt + ex.target
    ids = torch.tensor([seq[:-1]]); pos = torch.arange(ids.shape[1])[None]
    lg = lm(ids, torch.ones_like(ids), pos, None, lora)[0][0]
    keep = torch.tensor(ex.labels_mask[1:], dtype=torch.bool)
    y = torch.tensor(seq[1:])
    ce = F.cross_entropy(lg[keep], y[keep])
    return ce, bool((lg[keep].argmax(-1) == y[keep]).all())

def lm_loss(ids_list, lora):
    ids = torch.tensor([ids_list[:-1]]); pos = torch.arange(ids.shape[1])[None]
    lg = lm(ids, torch.ones_like(ids), pos, None, lora)[0][0]
    return F.cross_entropy(lg, torch.tensor(ids_list[1:]))

def fresh_lora():
    out = {}
    for i in range(lm.cfg.num_layers):
        for m in lm.cfg.lora_targets:
            d_in, d_out = lm.cfg.lora_dims(m)
            out[(i, m)] = ((torch.randn(1, d_in, RANK) / d_in ** 0.5).requires_grad_(), torch.zeros(1, RANK, d_out, requires_grad=True))
    return out

def fit(loss_fn):
    lora = fresh_lora()
    opt = torch.optim.Adam([t for pair in lora.values() for t in pair], lr=LR)
    for _ in range(K):
        opt.zero_grad(); l = loss_fn(lora); l.backward(); opt.step()
    return {k: (a.detach(), b.detach()) for k, (a, b) in lora.items()}

rows = []
t0 = time.time()
for r in pick:
    ex = chat_example(tok, CHAT_TEMPLATE, r['messages'], [], 320)
    with torch.no_grad():
        n0 = answer_eval(ex, None)
        ad = compile_skill(lm, net, tok, r['skill_text'], 512, 64)
        n1 = answer_eval(ex, stack_rows(lm.cfg, [ad]))
    skill_ids = encode_ids(tok, r['skill_text'])[:1024]
    lo_skill = fit(lambda lora: lm_loss(skill_ids, lora))
    with torch.no_grad(): n2 = answer_eval(ex, lo_skill)
    lo_ans = fit(lambda lora: answer_eval(ex, lora)[0])
    with torch.no_grad(): n3 = answer_eval(ex, lo_ans)
    # held-out: another task of the same skill, with the skill-text LoRA
    row = dict(family=r['source'], none=float(n0[0]), none_x=n0[1], hyper=float(n1[0]), hyper_x=n1[1],
               ttt_skill=float(n2[0]), ttt_skill_x=n2[1], ttt_answer=float(n3[0]), ttt_answer_x=n3[1])
    rows.append(row); print(json.dumps(row), f'{time.time()-t0:.0f}s', flush=True)
keys = ['none', 'hyper', 'ttt_skill', 'ttt_answer']
print('MEAN', {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in keys},
      'EXACT', {k: sum(r[k + '_x'] for r in rows) for k in keys}, 'of', len(rows))

"""LLM synthesizer: the validator on canned responses, a stub HTTP endpoint, and the studio's own
OpenAI-compatible endpoint (node serve with the tiny fixture bundle: random weights, so garbage out)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import torch

from pskills_train.synth import Limits, LLMSynthesizer, skill_from_text, validate_trajectory
from pskills_train.synth.llm import grounding, parse_response

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parents[2]
SKILL = skill_from_text("---\nname: tidy\ndescription: Tidy a git branch.\n---\n## Steps\n"
                        "1. Fetch main.\n2. Rebase the branch on main with autosquash.\n3. Run the tests again.\n")
GOOD = {"messages": [{"role": "user", "content": "How do I tidy my branch?"},
                     {"role": "assistant",
                      "content": "Fetch main, rebase the branch on main with autosquash, then run the tests."}]}


@pytest.mark.parametrize("item,reason", [
    ({"messages": []}, "no 'messages'"),
    ({"foo": 1}, "no 'messages'"),
    ({"messages": [GOOD["messages"][0]]}, "pairs"),
    ({"messages": [GOOD["messages"][1], GOOD["messages"][0]]}, "role must be 'user'"),
    ({"messages": [GOOD["messages"][0], {"role": "assistant", "content": "  "}]}, "empty"),
    ({"messages": [GOOD["messages"][0], {"role": "assistant", "content": 7}]}, "non-string"),
    ({"messages": [GOOD["messages"][0], {"role": "assistant", "content": "rebase " * 900}]}, "chars >"),
    ({"messages": [GOOD["messages"][0], {"role": "assistant", "content": "Bake sourdough bread overnight, slowly."}]},
     "not grounded"),
    ({"messages": GOOD["messages"] * 5}, "messages: want 2..8"),
])
def test_validator_rejects_with_reason(item, reason):
    msgs, why = validate_trajectory(item, SKILL.text, Limits())
    assert msgs is None and reason in why


def test_validator_accepts_and_parses_wrappings():
    msgs, why = validate_trajectory(GOOD, SKILL.text, Limits())
    assert why is None and msgs == GOOD["messages"]
    assert grounding(GOOD["messages"][1]["content"], SKILL.text) >= 0.5
    body = json.dumps({"trajectories": [GOOD]})
    for text in (body, f"```json\n{body}\n```", f"Sure! Here you go:\n{body}\nHope it helps.", json.dumps([GOOD])):
        items, why = parse_response(text)
        assert why is None and items == [GOOD]
    assert parse_response("I cannot do that.") == (None, "response is not JSON")
    assert parse_response('"just a string"')[1].startswith("JSON is neither")


class _Stub(BaseHTTPRequestHandler):
    replies: list[tuple[int, str]] = []
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        _Stub.seen.append({"path": self.path, "auth": self.headers.get("authorization"), "body": body})
        status, content = _Stub.replies.pop(0)
        reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
        out = json.dumps(reply) if status == 200 else content
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(out.encode())

    def log_message(self, *a):
        pass


@pytest.fixture()
def stub():
    srv = HTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Stub.seen.clear()
    yield f"http://127.0.0.1:{srv.server_port}/v1"
    srv.shutdown()


def test_stub_endpoint_good_garbage_and_errors(stub):
    bad = {"messages": [{"role": "assistant", "content": "hi"}]}
    _Stub.replies = [(200, json.dumps({"trajectories": [GOOD, bad]})), (200, "not json at all"), (500, "boom"),
                     (200, "{\"trajectories\": 3}")]
    synth = LLMSynthesizer(stub, "m1", api_key="k", n=2, seed=3)
    rep = synth.synthesize_report(SKILL)
    assert rep.http_ok and len(rep.trajectories) == 1 and rep.rejections[0].index == 1
    t = rep.trajectories[0]
    assert (t.synthesizer, t.model, t.endpoint, t.seed, t.skill) == ("llm", "m1", stub, 3, "tidy")
    assert _Stub.seen[0]["path"] == "/v1/chat/completions" and _Stub.seen[0]["auth"] == "Bearer k"
    body = _Stub.seen[0]["body"]
    assert body["model"] == "m1" and "Rebase the branch" in body["messages"][0]["content"]
    assert synth.synthesize(SKILL) == [] and "not JSON" in synth.reports[-1][1].rejections[0].reason
    rep = synth.synthesize_report(SKILL)
    assert not rep.http_ok and rep.rejections[0].reason.startswith("HTTP 500")
    assert synth.synthesize(SKILL) == []
    dead = LLMSynthesizer("http://127.0.0.1:9/v1", "m", timeout=2).synthesize_report(SKILL)
    assert not dead.http_ok and "failed" in dead.rejections[0].reason


def _start_studio(data_dir: Path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (REPO / "node_modules" / "tsx").exists():
        pytest.skip("node_modules missing: run `npm ci` in the repo root first (CI does, before pytest)")
    proc = subprocess.Popen(["node", "bin/pskills.mjs", "serve", "--port", "0", "--json", "--data-dir", str(data_dir)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail(f"pskills serve printed nothing: {proc.stderr.read()[-2000:]}")
    return proc, json.loads(line)


def test_studio_endpoint_end_to_end(tmp_path):
    proc, info = _start_studio(tmp_path / "data")
    try:
        token = urllib.parse.parse_qs(urllib.parse.urlparse(info["url"]).fragment)["token"][0]
        base = f"http://127.0.0.1:{info['port']}"
        req = urllib.request.Request(f"{base}/api/call/engine.loadBundle", method="POST",
                                     data=json.dumps({"dir": str(REPO / "tests/fixtures/bundle-tiny")}).encode(),
                                     headers={"content-type": "application/json", "authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            assert json.loads(r.read())["ok"]
        # The fixture's context is 256 tokens: a short prompt, a short skill, a short answer.
        synth = LLMSynthesizer(f"{base}/v1", "base", api_key=token, n=1, max_tokens=24, temperature=0.0,
                               max_skill_chars=120, prompt="{skill}\nJSON:")
        t0 = time.perf_counter()
        rep = synth.synthesize_report(SKILL)
        assert rep.http_ok, rep.rejections  # the call went through the studio's /v1/chat/completions
        assert isinstance(rep.raw, str) and time.perf_counter() - t0 < 60
        assert rep.trajectories == [] and rep.rejections and rep.rejections[0].reason  # random weights: garbage
        wrong = LLMSynthesizer(f"{base}/v1", "base", api_key="wrong", max_skill_chars=120, prompt="{skill}")
        rep = wrong.synthesize_report(SKILL)
        assert not rep.http_ok and rep.rejections[0].reason.startswith("HTTP 401")
    finally:
        proc.terminate()
        proc.wait(timeout=20)

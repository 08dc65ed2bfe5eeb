"""Every rank trains the same model (issue 29, item 2): the training loop of docs/python.md,
run as written on 2 ranks, ends with bit-equal parameters and buffers on both;
allreduce_gradients refuses ranks whose parameters differ; broadcast_parameters copies rank
root's parameters and buffers and refuses models of different shapes."""
import os
import re
import textwrap

import numpy as np
import torch

from conftest import PYTHON, ROOT, mpirun

DOC = os.path.join(ROOT, "docs", "python.md")


def docs_loop():
    """The first ```python block after the heading "## A training loop", as written."""
    text = open(DOC).read()
    section = text[text.index("\n## A training loop\n"):]
    found = re.search(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert found, f"no python block under '## A training loop' in {DOC}"
    return found.group(1)


def bytes_of(state):
    return {name: (str(t.dtype), tuple(t.shape), t.numpy().tobytes()) for name, t in state.items()}


def test_docs_loop_trains_one_model_on_every_rank(cora_parts, scratch):
    loop = docs_loop()
    assert "partita.broadcast_parameters(model, g)" in loop
    os.makedirs(scratch / "parts")
    os.symlink(cora_parts[2], scratch / "parts" / "cora-2")
    script = scratch / "loop.py"
    # The block as written, then each rank saves what it trained.
    script.write_text(loop + textwrap.dedent("""
        torch.save(model.state_dict(), f"state{partita.rank()}.pt")
        with open(f"done{partita.rank()}.txt", "w") as f:
            print("steps", len(loader), "epochs", epoch + 1, file=f)
    """))
    out = mpirun(2, [PYTHON, str(script)], cwd=str(scratch))
    for r in (0, 1):
        done = scratch / f"done{r}.txt"
        assert os.path.exists(done) and "epochs 20" in done.read_text(), out.stdout + out.stderr
    states = [torch.load(str(scratch / f"state{r}.pt")) for r in (0, 1)]
    assert list(states[0]) == list(states[1]) and states[0]
    assert bytes_of(states[0]) == bytes_of(states[1]), "the ranks trained different models"
    assert all(torch.isfinite(t).all() for t in states[0].values())


SYNC = """
import sys
import torch
import partita

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.norm = torch.nn.BatchNorm1d(3)            # buffers: running stats, an int64 count

    def forward(self, x):
        return self.norm(self.lin(x))

# Each rank reports into a file of its own (mpirun may cut the ranks' stdout lines apart).
def report(*words):
    with open(f"{sys.argv[3]}/out{partita.rank()}.txt", "a") as f:
        print(*words, file=f)

with partita.DistGraph(sys.argv[1]) as g:
    torch.manual_seed(10 + g.rank)                     # a different model on each rank
    model = Net()
    model(torch.randn(8, 4)).sum().backward()
    model.norm.running_mean.fill_(g.rank + 1.0)
    model.norm.num_batches_tracked.fill_(g.rank + 5)
    try:
        partita.allreduce_gradients(model, g)
        report("no error")
    except partita.Error as e:
        report("raised:", type(e).__name__, e)
    # Shapes that differ between the ranks: refused on every rank, nothing copied.
    other = torch.nn.Linear(4, 3 + g.rank)
    try:
        partita.broadcast_parameters(other, g)
        report("no error")
    except partita.Error as e:
        report("shapes raised:", type(e).__name__, e)
    root = int(sys.argv[2])
    partita.broadcast_parameters(model, g, root=root)
    partita.allreduce_gradients(model, g)              # now equal: no error
    torch.save(model.state_dict(), f"{sys.argv[3]}/sync{g.rank}.pt")
    report("synced")
"""


def test_different_weights_raise_and_broadcast_makes_them_equal(cora_parts, scratch):
    script = scratch / "sync.py"
    script.write_text(SYNC)
    for root in (0, 1):
        for r in (0, 1):
            if os.path.exists(scratch / f"out{r}.txt"):
                os.remove(scratch / f"out{r}.txt")
        out = mpirun(2, [PYTHON, str(script), cora_parts[2], str(root), str(scratch)])
        lines = [line for r in (0, 1) if os.path.exists(scratch / f"out{r}.txt")
                 for line in open(scratch / f"out{r}.txt").read().splitlines()]
        raised = [l for l in lines if l.startswith("raised:")]
        assert len(raised) == 2, lines + [out.stdout, out.stderr]  # on both ranks
        for line in raised:
            assert line.startswith("raised: Error allreduce_gradients: the model's parameters "
                                   "differ between the ranks"), line
            assert "call partita.broadcast_parameters(model, graph) after building the model" \
                in line, line
        shapes = [l for l in lines if l.startswith("shapes raised:")]
        assert len(shapes) == 2 and all("the ranks hold different tensors" in l for l in shapes), \
            lines
        assert lines.count("synced") == 2, lines + [out.stdout, out.stderr]
        states = [torch.load(str(scratch / f"sync{r}.pt")) for r in (0, 1)]
        assert bytes_of(states[0]) == bytes_of(states[1])
        # Rank root's values: its running_mean and its count.
        assert np.all(states[0]["norm.running_mean"].numpy() == root + 1.0)
        assert int(states[0]["norm.num_batches_tracked"]) == root + 5
        torch.manual_seed(10 + root)
        assert torch.equal(states[1]["lin.weight"], torch.nn.Linear(4, 3).weight.detach())

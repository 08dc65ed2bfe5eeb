"""The package under mpirun: a model written in PyTorch trained through Partita's loader on 2
ranks reproduces the C++ trainer's losses, the example reaches its accuracy, and a rank that
never comes is a Python exception naming the timeout."""
import json
import os
import re
import textwrap

import pytest

from conftest import PARTITA, PYTHON, ROOT, mpirun

EXAMPLE = os.path.join(ROOT, "examples", "python", "train_cora.py")
SAME = ["--fanouts", "5,5", "--hidden", "16", "--batch-size", "32", "--epochs", "6",
        "--lr", "0.5", "--dropout", "0", "--optimizer", "sgd", "--seed", "4"]


def losses_of_cpp(path):
    with open(path) as f:
        return [r["loss"] for r in map(json.loads, f) if r["type"] == "epoch"]


@pytest.mark.parametrize("model", ["sage", "gcn", "gat"])
def test_python_training_equals_the_cpp_trainer(cora_parts, scratch, model):
    """Same model (2 layers of 16 from the C++ initial weights; GAT with 2 heads), seed,
    batches, SGD and no dropout: every epoch's loss within a relative 1e-4 of `partita
    train`'s, on 2 ranks."""
    py_losses = str(scratch / "py.jsonl")
    cpp_metrics = str(scratch / "cpp.jsonl")
    flags = SAME + ["--model", model, "--heads", "2"]
    mpirun(2, [PYTHON, EXAMPLE, "--parts", cora_parts[2], "--init", "cpp",
               "--losses-out", py_losses] + flags)
    mpirun(2, [PARTITA, "-q", "train", "--parts", cora_parts[2], "--layers", "2",
               "--eval-every", "0", "--metrics-out", cpp_metrics] + flags)
    with open(py_losses) as f:
        py = [r["loss"] for r in map(json.loads, f)]
    cpp = losses_of_cpp(cpp_metrics)
    assert len(py) == len(cpp) == 6
    for epoch, (a, b) in enumerate(zip(py, cpp), 1):
        assert abs(a - b) <= 1e-4 * abs(b), f"epoch {epoch}: python {a} vs C++ {b}"
    assert cpp[-1] < cpp[0]  # it trained


def test_ddp_gradients_equal_partitas_allreduce(cora_parts, scratch):
    """The same run with torch.distributed (gloo) DistributedDataParallel averaging the
    gradients instead of partita.allreduce_gradients: the same losses. One step per epoch
    (every rank has seeds in every step, as DDP needs)."""
    flags = ["--parts", cora_parts[2], "--init", "cpp", "--fanouts", "5,5", "--hidden", "16",
             "--batch-size", "1024", "--epochs", "4", "--lr", "0.5", "--dropout", "0",
             "--optimizer", "sgd", "--seed", "2"]
    losses = []
    for extra in ([], ["--ddp"]):
        path = str(scratch / f"losses{len(extra)}.jsonl")
        mpirun(2, [PYTHON, EXAMPLE, "--losses-out", path] + flags + extra)
        with open(path) as f:
            losses.append([r["loss"] for r in map(json.loads, f)])
    assert len(losses[0]) == 4
    for a, b in zip(*losses):
        assert abs(a - b) <= 1e-5 * abs(a), losses


def test_example_reaches_its_accuracy(cora_parts):
    out = mpirun(2, [PYTHON, EXAMPLE, "--parts", cora_parts[2]]).stdout
    last = out.strip().splitlines()[-1]
    assert last.startswith("test_acc="), out
    assert float(last.split("=")[1]) >= 0.78, out


def test_a_missing_rank_is_a_timeout_error(cora_parts, scratch):
    """Rank 1 never opens the graph: rank 0's DistGraph raises partita.Error naming the
    timeout (the collectives' deadline), and the job ends instead of hanging. Rank 1 stays
    alive (never calling in) until rank 0 is done, 30 s at most, so that the job takes the
    3 s timeout and start-up, not rank 1's whole wait."""
    script = scratch / "stall.py"
    done = scratch / "rank0-done"
    script.write_text(textwrap.dedent(f"""
        import os, sys, time
        import partita
        partita.init()
        if partita.rank() == 1:
            deadline = time.monotonic() + 30
            while not os.path.exists({str(done)!r}) and time.monotonic() < deadline:
                time.sleep(0.1)
            sys.exit(0)
        try:
            partita.DistGraph({cora_parts[2]!r}, timeout=3)
        except partita.Error as e:
            print("raised:", type(e).__name__, e, flush=True)
            open({str(done)!r}, "w").close()
            sys.exit(0)
        print("no error", flush=True)
        open({str(done)!r}, "w").close()
    """))
    out = mpirun(2, [PYTHON, str(script)], check=False, timeout=120)
    assert "raised:" in out.stdout, out.stdout + out.stderr
    assert "timed out" in out.stdout or "3 s" in out.stdout, out.stdout


def test_checkpoint_loads_with_torch_load_into_the_pytorch_model(cora_parts, scratch):
    """`partita train`'s checkpoint is a plain dict for torch.load; its "model" state loads
    (strict) into the example's GNN, whose full-neighbourhood test accuracy through the
    Python loader equals `partita infer`'s on the same checkpoint."""
    ck = str(scratch / "ck")
    mpirun(2, [PARTITA, "-q", "train", "--parts", cora_parts[2], "--model", "gcn",
               "--hidden", "16", "--epochs", "3", "--eval-every", "0", "--checkpoint-dir", ck])
    infer = mpirun(2, [PARTITA, "-q", "infer", "--parts", cora_parts[2], "--checkpoint-dir", ck,
                       "--out", str(scratch / "inf")]).stdout
    want = float(infer.strip().splitlines()[-1].split("=")[1])
    script = scratch / "load.py"
    script.write_text(f"""
import importlib.util, torch, partita
spec = importlib.util.spec_from_file_location("example", {EXAMPLE!r})
example = importlib.util.module_from_spec(spec); spec.loader.exec_module(example)
d = torch.load({ck + "/checkpoint-000003.pt"!r})
assert isinstance(d, dict) and set(d) == {{"model", "partita"}}, d.keys()
assert d["partita"]["epochs_done"] == 3 and d["partita"]["format"] == 2
with partita.DistGraph({cora_parts[2]!r}) as g:
    model = example.GNN("gcn", g.feat_dim, 16, g.num_classes, 2, 0.5)
    model.load_state_dict(d["model"], strict=True)
    class Args: fanouts, batch_size, seed = [-1, -1], 1024, 0
    acc = example.accuracy(model, g, Args, "test")
    if g.rank == 0: print(f"test_acc={{acc:.4f}}")
""")
    out = mpirun(2, [PYTHON, str(script)]).stdout
    got = float(out.strip().splitlines()[-1].split("=")[1])
    assert got == want, (out, infer)


def test_a_set_up_failure_is_the_failing_ranks_error_on_every_rank(cora_parts, scratch):
    """Rank 1 opens a partition that does not exist: rank 1 raises partita.IoError naming the
    path (the cause of the agreed set-up failure, not a generic Error), and rank 0 raises the
    same class naming rank 1, instead of an empty message."""
    script = scratch / "setup_fail.py"
    missing = str(scratch / "no-such-parts")
    script.write_text(textwrap.dedent(f"""
        import partita
        partita.init()
        parts = {cora_parts[2]!r} if partita.rank() == 0 else {missing!r}
        try:
            partita.DistGraph(parts, timeout=30)
        except partita.Error as e:
            print(f"rank {{partita.rank()}} raised: {{type(e).__name__}}: {{e}}", flush=True)
    """))
    out = mpirun(2, [PYTHON, str(script)], check=False, timeout=120).stdout
    # The two ranks' lines may arrive interleaved: find each by its start.
    raised = dict(re.findall(r"rank (\d) raised: (\w+: [^\n]*?)(?=rank \d raised: |\n|$)", out))
    assert set(raised) == {"0", "1"}, out
    assert raised["0"].startswith("IoError: set-up failed on rank 1"), out
    assert raised["1"].startswith("IoError: ") and missing in raised["1"], out

"""partita.generate, partita.partition and partita.infer (python/partita/tools.py) against
the commands they wrap: the same files byte for byte, the same figures, the same errors as
partita.Error subclasses; infer's outputs equal the files `partita infer` writes, in one
process and under mpirun with 2 ranks. The binary compared against is the one that comes
with the package (partita.command_path()), so the file also runs against a pip-installed
package (tests/python/pip_install_test.sh)."""
import json
import os
import re
import textwrap

import numpy as np
import pytest
import torch

import partita
from conftest import CORA, PYTHON, ROOT, mpirun, run

BINARY = partita.command_path()


def cli(*args, check=True):
    return run([BINARY, "-q"] + [str(a) for a in args], check=check)


def npy_files(folder):
    """{relative path: bytes} of every .npy file under `folder`."""
    out = {}
    for base, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".npy"):
                path = os.path.join(base, name)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, folder)] = f.read()
    return out


def record(folder):
    """partita.json without what differs between two runs of the same partition."""
    with open(os.path.join(folder, "partita.json")) as f:
        meta = json.load(f)
    for table in (meta, meta.get("summary", {})):
        for key in ("phase_seconds", "peak_rss_bytes"):
            table.pop(key, None)
    return meta


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 3000-node generated dataset (numpy layout)."""
    d = str(tmp_path_factory.mktemp("gen") / "small")
    partita.generate(d, nodes=3000, avg_degree=8, feat_dim=16, classes=5, seed=7, threads=1)
    return d


def test_version_and_binary():
    with open(os.path.join(ROOT, "include", "partita", "core", "version.h")) as f:
        version = re.search(r'kVersion\[\] = "([^"]+)"', f.read()).group(1)
    assert partita.__version__ == version
    assert os.access(BINARY, os.X_OK)
    assert cli("--version").stdout.strip() == f"partita {version}"


@pytest.mark.parametrize("hetero", ["", "mag"])
def test_generate_equals_the_command(tmp_path, hetero):
    """The same files byte for byte, and the figures of what was written."""
    flags = dict(nodes=2500, feat_dim=8, classes=6, seed=3, threads=1)
    if not hetero:
        flags["avg_degree"] = 5
    summary = partita.generate(tmp_path / "py", hetero=hetero, **flags)
    cmd = ["generate", "--out", tmp_path / "cmd"]
    for key, value in flags.items():
        cmd += ["--" + key.replace("_", "-"), value]
    if hetero:
        cmd += ["--hetero", hetero]
    cli(*cmd)
    py, ref = npy_files(tmp_path / "py"), npy_files(tmp_path / "cmd")
    assert py == ref and len(py) >= 6
    assert summary["out"] == str(tmp_path / "py")
    assert summary["bytes_written"] > 0
    labels = np.load(tmp_path / "py" / "label.npy")
    if hetero:
        assert summary["hetero"] == "mag" and summary["nodes"] == 2500
        assert sum(summary["type_nodes"].values()) == 2500
        assert summary["type_nodes"]["paper"] == len(labels)
        assert summary["split"]["train"] == int(0.6 * len(labels))
        assert sum(summary["split"].values()) == len(labels)
        assert sorted(summary["relation_edges"]) == sorted(
            name[:-4] for name in os.listdir(tmp_path / "py" / "edges"))
        for name, edges in summary["relation_edges"].items():
            assert np.load(tmp_path / "py" / "edges" / f"{name}.npy").shape == (edges, 2)
    else:
        assert summary["nodes"] == len(labels) == 2500
        assert summary["edges"] == 2500 * 5 == len(np.load(tmp_path / "py" / "edges.npy"))
        assert summary["split"] == {"train": 1500, "valid": 500, "test": 500}


def test_partition_equals_the_command(small, tmp_path):
    """2 METIS parts with an edge split: the same part files byte for byte, the same
    partita.json but for its timings, and the summary is what partita.json records."""
    summary = partita.partition(small, tmp_path / "py", num_parts=2, seed=5, threads=1,
                                edge_split=(0.05, 0.1), balance_train=True,
                                feature_dtype="float16")
    cli("partition", "--dataset", small, "--out", tmp_path / "cmd", "--num-parts", 2, "--seed",
        5, "--threads", 1, "--edge-split", "0.05,0.1", "--balance-train", "--feature-dtype",
        "float16")
    py, ref = npy_files(tmp_path / "py"), npy_files(tmp_path / "cmd")
    assert py == ref and len(py) > 10
    meta = record(tmp_path / "py")
    assert meta == record(tmp_path / "cmd")
    assert summary["num_parts"] == 2
    assert summary["num_nodes"] == meta["num_nodes"] == 3000
    assert summary["num_edges"] == meta["num_edges"]
    assert summary["edge_cut"] == meta["summary"]["edge_cut"]
    assert sum(p["nodes"] for p in summary["parts"]) == 3000
    assert sum(p["train_nodes"] for p in summary["parts"]) == 1800
    split = summary["edge_split"]
    assert split["source"] == "sampled" and split["valid"] > 0 and split["test"] > split["valid"]
    assert split["valid"] == split["valid_neg"] and split["test"] == split["test_neg"]
    assert sum(split["train_per_part"]) == split["train"]
    assert "part" in summary["text"]


def test_partition_typed(tmp_path):
    mag = tmp_path / "mag"
    partita.generate(mag, hetero="mag", nodes=2000, feat_dim=4, classes=3, threads=1)
    summary = partita.partition(mag, tmp_path / "p", num_parts=1, reverse=False, threads=1)
    assert summary["type_names"] == ["author", "field_of_study", "institution", "paper"]
    assert len(summary["relation_names"]) == 4  # no rev_ relations: reverse=False
    assert sum(summary["parts"][0]["type_nodes"].values()) == 2000


def _truncated(tmp_path, small):
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in os.listdir(small):
        with open(os.path.join(small, name), "rb") as f:
            data = f.read()
        (bad / name).write_bytes(data[:len(data) // 2] if name == "edges.npy" else data)
    return bad


def test_errors_are_partita_exceptions_in_keyword_words(small, tmp_path):
    cases = [
        (lambda: partita.partition(small, tmp_path / "o", num_parts=0), partita.UsageError,
         "num_parts: must be at least 1, got 0"),
        (lambda: partita.partition(small, tmp_path / "o", method="kway"), partita.UsageError,
         "method: 'kway' is not one of metis, random"),
        (lambda: partita.partition(small, tmp_path / "o", feature_dtype="int8"),
         partita.UsageError, "feature_dtype: 'int8' is not one of float32, float16, bfloat16"),
        (lambda: partita.partition(small, tmp_path / "o", edge_split="0.6,0.5"),
         partita.UsageError,
         "edge_split: fractions 0.6,0.5 sum to 1 or more; no edge would be left to train on"),
        (lambda: partita.partition(tmp_path / "none", tmp_path / "o"), partita.IoError,
         f"{tmp_path / 'none'}: no such dataset directory"),
        (lambda: partita.generate(tmp_path / "g", nodes=1), partita.UsageError,
         "nodes: must be in [2, 2147483647], got 1"),
        (lambda: partita.generate(tmp_path / "g", hetero="mag", avg_degree=3),
         partita.UsageError,
         "avg_degree: does not apply with hetero (edges follow ogbn-mag's proportions)"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind) as info:
            call()
        assert str(info.value) == message
        assert isinstance(info.value, partita.Error)
    # A damaged dataset: the command's message, as a FormatError.
    bad = _truncated(tmp_path, small)
    with pytest.raises(partita.FormatError) as info:
        partita.partition(bad, tmp_path / "o", num_parts=1)
    failed = cli("partition", "--dataset", bad, "--out", tmp_path / "o2", "--num-parts", 1,
                 check=False)
    assert failed.returncode != 0
    assert failed.stderr.strip().splitlines()[-1] == f"error: {info.value}"


# --- infer ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Cora in 1 part and 2 METIS parts (made by partita.partition), 1 part with an edge
    split, and checkpoints of `partita train`: a GraphSAGE node classifier (trained with
    normalized features), a link model, and an R-GCN on a generated mag graph."""
    if not os.path.isdir(CORA):
        pytest.skip(f"{CORA} is missing")
    base = tmp_path_factory.mktemp("infer")
    out = {}
    for parts in (1, 2):
        out[parts] = str(base / f"cora{parts}")
        partita.partition(CORA, out[parts], num_parts=parts, seed=1)
    out["link_parts"] = str(base / "cora-link")
    partita.partition(CORA, out["link_parts"], num_parts=1, edge_split="0.05,0.10")
    small = ["--fanouts", "5,5", "--hidden", "16", "--torch-threads", "1"]
    out["node"] = str(base / "ck-node")
    cli("train", "--parts", out[1], "--epochs", 3, "--normalize-features", "--checkpoint-dir",
        out["node"], *small)
    out["link"] = str(base / "ck-link")
    cli("train", "--parts", out["link_parts"], "--task", "link", "--epochs", 1,
        "--checkpoint-dir", out["link"], *small)
    mag = str(base / "mag")
    partita.generate(mag, hetero="mag", nodes=2000, feat_dim=8, classes=4, threads=1)
    out["mag_parts"] = str(base / "mag1")
    partita.partition(mag, out["mag_parts"], num_parts=1)
    out["rgcn"] = str(base / "ck-rgcn")
    cli("train", "--parts", out["mag_parts"], "--model", "rgcn", "--epochs", 1,
        "--checkpoint-dir", out["rgcn"], "--fanouts", "3,3", "--hidden", "8")
    return out


def infer_files(parts, checkpoint, out, ranks=1):
    """`partita infer`'s files and printed metrics ({name: value})."""
    cmd = [BINARY, "infer", "--parts", parts, "--checkpoint-dir", checkpoint, "--out", out,
           "--torch-threads", "1"]
    done = mpirun(ranks, cmd) if ranks > 1 else run(cmd)
    printed = dict(re.findall(r"(\w+@?\d*)=([0-9.]+)", done.stdout))
    return npy_files(out), printed


def as_npy(tensor):
    """The bytes np.save writes for `tensor` (what `partita infer`'s .npy files hold)."""
    import io
    buffer = io.BytesIO()
    np.save(buffer, tensor.numpy())
    return buffer.getvalue()


def test_infer_equals_the_command_in_one_process(trained, tmp_path):
    """Embeddings and predictions bit for bit, the same accuracy, from a directory and from
    an open DistGraph; the checkpoint's normalize-features record is reapplied."""
    files, printed = infer_files(trained[1], trained["node"], str(tmp_path / "o"))
    threads = torch.get_num_threads()
    result = partita.infer(trained[1], trained["node"], torch_threads=1)
    assert torch.get_num_threads() == threads  # torch_threads: for the call only
    assert result["normalize_features"] is True and result["link"] is False
    assert result["num_nodes"] == 2708 and result["embedding_dim"] == 16
    assert as_npy(result["embeddings"]) == files["embeddings.npy"]
    assert as_npy(result["predictions"]) == files["predictions.npy"]
    assert f"{result['test_acc']:.4f}" == printed["test_acc"]
    assert result["test_total"] == int(printed["test_ids"]) == 1000
    assert result["test_correct"] == int(printed["test_correct"])
    with partita.DistGraph(trained[1]) as g:
        again = partita.infer(g, trained["node"], torch_threads=1)
        assert torch_equal(again["embeddings"], result["embeddings"])
        assert torch_equal(again["predictions"], result["predictions"])
        # Smaller steps: other matrix shapes, the same rows up to rounding.
        steps = partita.infer(g, trained["node"], torch_threads=1, batch_size=100)
        assert torch.allclose(steps["embeddings"], result["embeddings"], rtol=1e-5, atol=1e-6)


def torch_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())


def test_infer_link_model(trained, tmp_path):
    """A link model: the encoder's embeddings as `partita infer` writes them, no
    predictions, and its held-out metrics as printed."""
    files, printed = infer_files(trained["link_parts"], trained["link"], str(tmp_path / "o"))
    result = partita.infer(trained["link_parts"], trained["link"], torch_threads=1)
    assert result["link"] is True and result["predictions"] is None
    assert as_npy(result["embeddings"]) == files["embeddings.npy"]
    assert "predictions.npy" not in files
    assert f"{result['test_auc']:.4f}" == printed["test_auc"]
    assert f"{result['test_ap']:.4f}" == printed["test_ap"]
    assert result["test_pairs"] == int(printed["test_pairs"]) > 0
    assert result["hits_k"] == 50


def test_infer_refusals(trained, tmp_path):
    """R-GCN checkpoints are refused in the command's one line; the other bad arguments
    name their keyword."""
    failed = run([BINARY, "infer", "--parts", trained["mag_parts"], "--checkpoint-dir",
                  trained["rgcn"], "--out", str(tmp_path / "o")], check=False)
    assert failed.returncode == 2
    with pytest.raises(partita.UsageError) as info:
        partita.infer(trained["mag_parts"], trained["rgcn"])
    assert f"error: {info.value}" == failed.stderr.strip().splitlines()[-1]
    assert "R-GCN" in str(info.value) and "\n" not in str(info.value)
    checkpoint = os.path.join(trained["node"], "checkpoint-000003.pt")
    cases = [
        (dict(normalize_features=False), "normalize_features: True in the checkpoint "
         f"{checkpoint}, False given; the model must be fed as in training, or its outputs "
         "are wrong (leave it out: the checkpoint's value is applied)"),
        (dict(batch_size=0), "batch_size: must be >= 1, got 0"),
        (dict(hits_k=0), "hits_k: must be >= 1, got 0"),
    ]
    for kw, message in cases:
        with pytest.raises(partita.UsageError) as info:
            partita.infer(trained[1], trained["node"], **kw)
        assert str(info.value) == message
    with pytest.raises(partita.UsageError):
        partita.infer(trained[1], str(tmp_path / "no-checkpoints"))


INFER_SCRIPT = textwrap.dedent("""
    import sys, numpy as np, partita
    parts, checkpoint, out = sys.argv[1:4]
    result = partita.infer(parts, checkpoint, torch_threads=1)
    with partita.DistGraph(parts) as g:
        again = partita.infer(g, checkpoint, torch_threads=1)
    r = partita.rank()
    assert (result["embeddings"] is None) == (r != 0) == (again["embeddings"] is None)
    if r == 0:
        np.save(out + "/embeddings.npy", result["embeddings"].numpy())
        assert bool((again["embeddings"] == result["embeddings"]).all())
    np.save(f"{out}/predictions{r}.npy", result["predictions"].numpy())
    assert bool((again["predictions"] == result["predictions"]).all())
    print(f"rank={r} test_acc={result['test_acc']:.4f}")
""")


def test_infer_under_mpirun(trained, tmp_path):
    """2 ranks on 2 parts: rank 0's embeddings and every rank's predictions equal the
    files of `mpirun -np 2 partita infer` bit for bit; embeddings are rank 0's only."""
    files, printed = infer_files(trained[2], trained["node"], str(tmp_path / "o"), ranks=2)
    script = tmp_path / "infer.py"
    script.write_text(INFER_SCRIPT)
    (tmp_path / "py").mkdir()
    done = mpirun(2, [PYTHON, str(script), trained[2], trained["node"], str(tmp_path / "py")])
    assert sorted(re.findall(r"rank=(\d) test_acc=([0-9.]+)", done.stdout)) == [
        ("0", printed["test_acc"]), ("1", printed["test_acc"])]
    py = npy_files(tmp_path / "py")
    assert py["embeddings.npy"] == files["embeddings.npy"]
    assert py["predictions0.npy"] == py["predictions1.npy"] == files["predictions.npy"]


def test_infer_example(trained, tmp_path):
    """examples/python/infer_cora.py on 2 ranks: the files and the accuracy of `partita
    infer`, test_acc printed last."""
    files, printed = infer_files(trained[2], trained["node"], str(tmp_path / "o"), ranks=2)
    example = os.path.join(ROOT, "examples", "python", "infer_cora.py")
    done = mpirun(2, [PYTHON, example, "--parts", trained[2], "--checkpoint-dir",
                      trained["node"], "--torch-threads", "1", "--out", str(tmp_path / "py")])
    assert done.stdout.strip().splitlines()[-1] == f"test_acc={printed['test_acc']}"
    assert npy_files(tmp_path / "py") == files

#!/usr/bin/env python3
"""Full-graph inference from Python with the checkpoint of a `partita train` run.

    partita train --parts P --epochs 20 --checkpoint-dir ck
    python3 examples/python/infer_cora.py --parts P --checkpoint-dir ck
    mpirun -np 2 python3 examples/python/infer_cora.py --parts P2 --checkpoint-dir ck

P: a partition of ../shared/datasets/ogb-layout/cora (one rank per part, or any number of
ranks on a 1-part directory; a 2-part directory P2 reads the same checkpoint). From a build
tree instead of a pip install: PYTHONPATH=build/python and build/src/cli/partita.

partita.infer computes every node's embedding and prediction layer by layer over the whole
graph (no sampling), exactly as `partita infer` does, and returns them in original node-id
order: the embeddings on rank 0, the predictions on every rank. The example shows what to do
with them in PyTorch (the class each node is predicted, the nodes closest to node 0 in the
embedding space), saves them with --out like the command, and prints test_acc=<accuracy>
last (for a link-prediction checkpoint: test_auc=<AUC> of the held-out test edges).
"""
import argparse
import os

import numpy as np
import torch

import partita


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", required=True, help="partition directory")
    parser.add_argument("--checkpoint-dir", required=True,
                        help="checkpoint directory of a `partita train` run (its latest)")
    parser.add_argument("--batch-size", type=int, default=4096,
                        help="destination nodes per layer step on each rank")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--torch-threads", type=int, default=0,
                        help="threads of the layers' kernels (0: leave torch's setting)")
    parser.add_argument("--out", help="also write embeddings.npy and predictions.npy here")
    args = parser.parse_args()

    result = partita.infer(args.parts, args.checkpoint_dir, batch_size=args.batch_size,
                           device=args.device, torch_threads=args.torch_threads)
    if partita.rank() != 0:
        return  # the embeddings and the figures below are rank 0's
    emb = result["embeddings"]  # float32 [num_nodes, embedding_dim], row = original id
    print(f"nodes={result['num_nodes']} embedding_dim={result['embedding_dim']} "
          f"normalize_features={result['normalize_features']}")
    # Cosine similarity in the embedding space: the nodes most like node 0.
    unit = torch.nn.functional.normalize(emb, dim=1)
    nearest = torch.topk(unit @ unit[0], k=6).indices[1:].tolist()
    print(f"nearest_to_node0={nearest}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        np.save(os.path.join(args.out, "embeddings.npy"), emb.numpy())
        if result["predictions"] is not None:
            np.save(os.path.join(args.out, "predictions.npy"), result["predictions"].numpy())
    if result["link"]:
        print(f"test_pairs={result['test_pairs']} test_ap={result['test_ap']:.4f}")
        print(f"test_auc={result['test_auc']:.4f}")
        return
    counts = torch.bincount(result["predictions"]).tolist()
    print(f"predicted_per_class={counts}")
    print(f"test_ids={result['test_total']} test_correct={result['test_correct']}")
    print(f"test_acc={result['test_acc']:.4f}")


if __name__ == "__main__":
    main()

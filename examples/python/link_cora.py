#!/usr/bin/env python3
"""Link prediction in plain PyTorch with a user-written decoder, on Partita's link batches.

    mpirun -np 2 -x PYTHONPATH=build/python python3 examples/python/link_cora.py --parts P

P: a partition of ../shared/datasets/ogb-layout/cora with an edge split (`partita partition
--edge-split 0.05,0.10`; one rank per part, or any number of ranks on a 1-part directory).
The encoder is partita.nn layers over the blocks (no activation after the last, as GAE); the
decoder scores a pair from its two embeddings (--decoder dot: <h_u, h_v>; mlp: an MLP of
h_u * h_v). partita.LinkNeighborLoader gives each rank its share of every global batch of
training pairs, their negatives and the blocks around their endpoints (with the batch's
pairs removed as edges); the binary cross-entropy is summed over the rank's pairs and
divided by the global batch's, and partita.allreduce_gradients makes it the exact mean.
partita.LinkEvalLoader scores the held-out test pairs as `partita train --task link` does.
Prints one line per epoch, then test_auc=<AUC> last.

--init cpp starts from the weights `partita train --task link` builds for the same --seed
(with --dropout 0, --optimizer sgd and --decoder dot the losses then equal the C++
trainer's: tests/python/test_link.py).
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F

import partita


class Encoder(torch.nn.Module):
    """`layers` partita.nn convolutions over the blocks (input layer first), dropout on each
    layer's input, ReLU between them; the last gives the embeddings. The parameter names are
    those of `partita train`'s encoder (conv0.lin_neigh.weight, ...)."""

    def __init__(self, kind, in_dim, hidden, layers, dropout):
        super().__init__()
        conv = partita.nn.GCNConv if kind == "gcn" else partita.nn.SAGEConv
        for l in range(layers):
            self.add_module(f"conv{l}", conv(in_dim if l == 0 else hidden, hidden))
        self.convs = [getattr(self, f"conv{l}") for l in range(layers)]
        self.dropout = dropout

    def forward(self, blocks, x):
        for i, (conv, block) in enumerate(zip(self.convs, blocks)):
            x = conv(block, F.dropout(x, self.dropout, self.training))
            if i + 1 < len(self.convs):
                x = F.relu(x)
        return x


class DotDecoder(torch.nn.Module):
    def forward(self, h_src, h_dst):
        return (h_src * h_dst).sum(1)


class MLPDecoder(torch.nn.Module):
    """An MLP of the element-wise product (symmetric in the pair)."""

    def __init__(self, dim):
        super().__init__()
        self.lin1 = torch.nn.Linear(dim, dim)
        self.lin2 = torch.nn.Linear(dim, 1)

    def forward(self, h_src, h_dst):
        return self.lin2(F.relu(self.lin1(h_src * h_dst))).squeeze(1)


class LinkModel(torch.nn.Module):
    def __init__(self, encoder, decoder, normalize):
        super().__init__()
        self.encoder, self.decoder, self.normalize = encoder, decoder, normalize

    def forward(self, batch):
        """One logit per pair of batch.edge_label_index (positives, then negatives)."""
        x = batch.x
        if self.normalize:  # row-normalized bag of words, as --normalize-features
            x = x / x.sum(1, keepdim=True).clamp_min(1e-12)
        h = self.encoder(batch.blocks, x)  # one row per seed node
        src, dst = batch.edge_label_index
        return self.decoder(h[src], h[dst])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", required=True, help="partition directory with an edge split")
    ap.add_argument("--model", choices=["sage", "gcn"], default="gcn")
    ap.add_argument("--decoder", choices=["dot", "mlp"], default="dot")
    ap.add_argument("--fanouts", type=lambda s: [int(k) for k in s.split(",")], default=[-1, -1])
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=1024, help="global: training pairs per step")
    ap.add_argument("--neg", type=int, default=1, help="negatives per training pair")
    ap.add_argument("--negative-sampling", choices=["uniform", "degree"], default="uniform")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    ap.add_argument("--no-normalize", action="store_true", help="raw features")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", choices=["torch", "cpp"], default="torch")
    ap.add_argument("--val-every", type=int, default=0,
                    help="validation AUC after every N epochs (0: none), as --eval-every")
    ap.add_argument("--losses-out", help="write each epoch's loss as JSON lines (rank 0)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    with partita.DistGraph(args.parts) as g:
        layers = len(args.fanouts)
        encoder = Encoder(args.model, g.feat_dim, args.hidden, layers, args.dropout)
        if args.init == "cpp":  # the encoder `partita train --task link` starts from
            encoder.load_state_dict(dict(partita._C.initial_parameters(
                args.model, g.feat_dim, args.hidden, args.hidden, layers, 1, args.seed)))
        decoder = DotDecoder() if args.decoder == "dot" else MLPDecoder(args.hidden)
        model = LinkModel(encoder, decoder, not args.no_normalize)
        partita.broadcast_parameters(model, g)  # every rank trains rank 0's model
        opt = (torch.optim.SGD if args.optimizer == "sgd" else torch.optim.Adam)(
            model.parameters(), lr=args.lr)
        loader = partita.LinkNeighborLoader(g, args.fanouts, args.batch_size, neg=args.neg,
                                            negative_sampling=args.negative_sampling,
                                            seed=args.seed)
        valid = partita.LinkEvalLoader(g, "valid", args.fanouts, args.batch_size, seed=args.seed)
        out = open(args.losses_out, "w") if args.losses_out and g.rank == 0 else None
        for epoch in range(args.epochs):
            start, total = time.monotonic(), torch.zeros(1, dtype=torch.float64)
            for batch in loader:
                opt.zero_grad()
                loss = torch.zeros(())
                if batch.num_seeds > 0:
                    score = model(batch)
                    loss = F.binary_cross_entropy_with_logits(
                        score, batch.edge_label, reduction="sum") / batch.global_size
                    loss.backward()
                partita.allreduce_gradients(model, g)  # every rank, every step
                total += partita.allreduce(torch.tensor([float(loss)], dtype=torch.float64), g)
                opt.step()
            mean = total.item() / len(loader)
            record = {"epoch": epoch + 1, "loss": mean}
            if args.val_every > 0 and (epoch + 1) % args.val_every == 0:
                model.eval()
                valid.set_epoch(epoch)  # the C++ task's sampling of the pass after this epoch
                record["val_auc"] = valid.evaluate(model)["auc"]
                model.train()
            if g.rank == 0:
                val = f" val_auc={record['val_auc']:.4f}" if "val_auc" in record else ""
                print(f"epoch={epoch + 1} steps={len(loader)} loss={mean:.4f}{val} "
                      f"epoch_s={time.monotonic() - start:.3f}", flush=True)
                if out:
                    out.write(json.dumps(record) + "\n")
        model.eval()
        test = partita.LinkEvalLoader(g, "test", args.fanouts, args.batch_size, seed=args.seed)
        metrics = test.evaluate(model)
        if g.rank == 0:
            print(f"test_ap={metrics['ap']:.4f} test_mrr={metrics['mrr']:.4f} "
                  f"test_hits@{metrics['hits_k']}={metrics['hits']:.4f}")
            print(f"test_auc={metrics['auc']:.4f}", flush=True)


if __name__ == "__main__":
    main()

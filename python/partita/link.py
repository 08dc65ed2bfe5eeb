"""Link-prediction batches (docs/python.md, "Link prediction"): the training steps of
`partita train --task link` (LinkNeighborLoader) and its held-out pairs in the batches its
evaluation scores (LinkEvalLoader), from the C++ pipeline (sampler threads, the GIL released
while Python waits).

    loader = partita.LinkNeighborLoader(g, [10, 10], batch_size=1024, neg=1)
    for batch in loader:
        h = encoder(batch.blocks, batch.x)                # one row per seed node
        src, dst = batch.edge_label_index                 # positions into batch.seeds
        score = decoder(h[src], h[dst])
        loss = F.binary_cross_entropy_with_logits(score, batch.edge_label,
                                                  reduction="sum") / batch.global_size
"""
import torch

from . import _C
from ._loops import PipelineLoops

__all__ = ["LinkNeighborLoader", "LinkEvalLoader", "link_metrics"]


def _exclude_mode(value):
    """exclude_seed_edges: True = "reverse" (the pair and its reverse, the C++ default),
    False = "none", or one of "reverse", "self", "none"."""
    if value is True:
        return "reverse"
    if value is False or value is None:
        return "none"
    return str(value)


class LinkNeighborLoader(PipelineLoops):
    """The training steps of `partita train --task link` on a partition with an edge split.

    Every rank runs len(loader) steps per epoch: one (seed, epoch) shuffle of every training
    pair of the job (part<p>/train_edges.npy, in pair-key order), cut into global batches of
    batch_size pairs, each rank taking the pairs its part holds; `neg` negatives (u, w) per
    positive (u, v), w drawn uniformly over the nodes or by in-degree, keyed by (seed, epoch,
    pair); the global batch's pairs removed from the blocks as edges (exclude_seed_edges);
    the blocks sampled around the pairs' endpoints under key (seed, epoch, step)."""

    def __init__(self, graph, fanouts=(10, 10), batch_size=1024, neg=1,
                 negative_sampling="uniform", exclude_seed_edges=True, seed=0, prefetch=2,
                 threads=1, device="cpu", max_steps=0, edge_features=False):
        # max_steps > 0: each epoch runs its first max_steps global batches only (as
        # `partita train --max-steps`). edge_features: every block's edge_attr holds its
        # edges' edge_feat rows, those of the excluded edges removed with them (the graph
        # must be opened with edge_features=True).
        self._c = _C.LinkLoader(graph, "train", [int(k) for k in fanouts], int(batch_size),
                                int(neg), str(negative_sampling),
                                _exclude_mode(exclude_seed_edges), int(seed), int(prefetch),
                                int(threads), str(device), int(max_steps), bool(edge_features))
        self.graph, self.fanouts, self.batch_size, self.neg = graph, list(fanouts), batch_size, neg
        self.device = torch.device(str(device))


class LinkEvalLoader(PipelineLoops):
    """The held-out pairs of a split ("valid" or "test": edges/<split>_pos.npy, then
    <split>_neg.npy) in the batches the C++ link task's sampled evaluation scores: global
    batches of batch_size pairs in key order, positives first, each rank the pairs whose
    destination it owns, sampled without exclusion under the trainer's evaluation keys (the
    test pass's; "valid": the pass after epoch `epoch`, one more each loop, set_epoch picks).
    A batch's pos / neg are held-out positives / negatives, pos_ids / neg_ids their rows."""

    def __init__(self, graph, split="test", fanouts=(10, 10), batch_size=1024, seed=0,
                 prefetch=2, threads=1, device="cpu", edge_features=False):
        if split == "val":
            split = "valid"
        self._c = _C.LinkLoader(graph, str(split), [int(k) for k in fanouts], int(batch_size),
                                0, "uniform", "none", int(seed), int(prefetch), int(threads),
                                str(device), 0, bool(edge_features))
        self.graph, self.split = graph, split
        self.device = torch.device(str(device))

    @property
    def num_positives(self):
        return self._c.num_positives

    @property
    def num_negatives(self):
        return self._c.num_negatives

    def evaluate(self, score, hits_k=50):
        """Scores every held-out pair and returns the C++ task's metrics (dict: auc, ap, mrr,
        hits, hits_k, positives, negatives), the same on every rank. `score(batch)` returns
        one logit per pair of batch.edge_label_index (positives, then negatives); it runs
        under torch.no_grad() for every batch holding pairs (put the model in eval mode
        first). Collective: every rank calls it."""
        pos = torch.zeros(self.num_positives, dtype=torch.float64)
        neg = torch.zeros(self.num_negatives, dtype=torch.float64)
        seen = torch.zeros(2, dtype=torch.int64)
        with torch.no_grad():
            for batch in self:
                p = batch.num_pos
                if p + batch.num_neg == 0:
                    continue
                s = score(batch).detach().reshape(-1).to("cpu", torch.float32).double()
                pos[batch.pos_ids.cpu()] = s[:p]
                neg[batch.neg_ids.cpu()] = s[p:]
                seen += torch.tensor([p, batch.num_neg])
        for t in (pos, neg, seen):  # each pair is scored by one rank: the sums gather them
            self.graph.allreduce_(t)
        if seen.tolist() != [self.num_positives, self.num_negatives]:
            raise _C.Error(f"LinkEvalLoader.evaluate: {seen.tolist()} pairs scored, "
                           f"expected {[self.num_positives, self.num_negatives]}")
        return link_metrics(pos.float(), neg.float(), hits_k)


def link_metrics(positive_scores, negative_scores, hits_k=50):
    """AUC, AP, MRR and Hits@K of held-out scores, as the C++ link task computes them
    (train/link_metrics.h)."""
    return _C.link_metrics(torch.as_tensor(positive_scores), torch.as_tensor(negative_scores),
                           int(hits_k))

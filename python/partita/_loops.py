"""The loop protocol every loader of the package shares (NeighborLoader, the typed and the
link loaders): each `for` over a loader is the next epoch's loop over its C++ pipeline
(`self._c`: start, next, stop); leaving a loop early stops its sampler threads."""


class PipelineLoops:
    def __len__(self):
        return len(self._c)

    def set_epoch(self, epoch):
        self._c.set_epoch(int(epoch))

    @property
    def epoch(self):
        """The epoch the next loop runs."""
        return self._c.epoch

    def _wrap(self, batch):
        """The object a loop yields for one batch of the C++ pipeline."""
        return batch

    def __iter__(self):
        token = self._c.start()
        try:
            while True:
                batch = self._c.next(token)
                if batch is None:
                    return
                yield self._wrap(batch)
        finally:
            # A loop left early (break, an exception, a generator dropped): stop its sampler
            # threads now. A no-op once a later loop replaced this one.
            self._c.stop(token)

    def close(self):
        """Stops the running loop's sampler threads (closing the graph does it too)."""
        self._c.stop()

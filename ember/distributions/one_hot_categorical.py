"""OneHotCategorical, and its straight-through variant: one-hot draws that pass gradients on
as if they were the probabilities."""
import ember
from .discrete import OneHotCategorical

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategoricalStraightThrough(OneHotCategorical):
    has_rsample = True

    def rsample(self, sample_shape=ember.Size()):
        draws = self.sample(sample_shape)
        probs = self._categorical.probs
        # the value of the draw, the gradient of the probabilities
        return draws + (probs - probs.detach())

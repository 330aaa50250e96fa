"""torch.random.thread_safe_generator against torch: None outside a thread worker (the main
process and process workers draw from the global generator)."""
import torch
import torch.utils.data

import ember
from differential import same


class _Draws(torch.utils.data.Dataset):
    def __init__(self, T):
        self.T = T

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.T.random.thread_safe_generator() is None


def test_thread_safe_generator_outside_thread_workers():
    same(lambda T: [T.random.thread_safe_generator(),
                    [bool(x) for x in T.utils.data.DataLoader(_Draws(T), batch_size=None)]])


def test_thread_safe_generator_in_a_process_worker():
    loader = ember.utils.data.DataLoader(_Draws(ember), batch_size=None, num_workers=1)
    assert [bool(x) for x in loader] == [True, True]

"""Datasets, samplers and the DataLoader (the torch.utils.data API)."""
from .dataset import (Dataset, IterableDataset, TensorDataset, ConcatDataset, ChainDataset,
                      Subset, StackDataset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from .dataloader import DataLoader, get_worker_info, WorkerInfo
from ._collate import default_collate, default_convert
from .distributed import DistributedSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset",
           "Subset", "StackDataset", "random_split", "DistributedSampler", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler", "DataLoader",
           "get_worker_info", "WorkerInfo", "default_collate", "default_convert"]
